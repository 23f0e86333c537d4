//! Downloads: a download started in any tab of a browser (a `download` link, a
//! `Content-Disposition: attachment` response, a file type the browser does not render) is saved
//! into one directory, never shown as a dialog, and journalled when it ends. Each browser context
//! chromate made has its own directory, journal and downloads in flight
//! ([`BrowserContext::enable_downloads`](crate::BrowserContext::enable_downloads)); the browser's
//! own tabs share the browser's ([`Browser::enable_downloads`]).
//!
//! Owns: enabling downloads (`Browser.setDownloadBehavior` with `allowAndName`, events on and,
//! for a context, its `browserContextId`), the downloads in flight (`Browser.downloadWillBegin`,
//! `Browser.downloadProgress`, read by the browser session's state handler, which names the
//! tab, context and journal a download's frame belongs to; later events carry only the guid,
//! which routes them to the same context), the size limit (`Browser.cancelDownload` once a
//! download is over it), the file name a finished download gets, and its `download` journal
//! entry.
//!
//! The browser writes each download as `<dir>/.incoming/<guid>`; once it completes, the file is
//! moved to `<dir>/<name>`, `name` being the browser's suggested file name made bare
//! ([`bare_file_name`]), with ` (2)`, ` (3)` … before its extension when the name is taken
//! ([`numbered_file_name`]). The name is reserved by creating the file (mode 0600) before the
//! rename, so two downloads finishing together never get the same one. Directories are 0700,
//! created when the first download begins (a browser that never downloads leaves none).
//!
//! Does not own: where the directory is (the caller's), a quota across downloads (the caller
//! lowers the shared [`DownloadLimit`] as its quota fills), or output shapes.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::cdp::browser::{
    BrowserContextID, CancelDownloadParams, EventDownloadProgress, EventDownloadProgressState,
    EventDownloadWillBegin, SetDownloadBehaviorParams, SetDownloadBehaviorParamsBehavior,
};
use crate::cdp::decode_event;
use crate::error::Result;
use crate::journal::{cut_url, DownloadState, Journal, LogData};
use crate::rt::lock;
use crate::session::Session;

/// The default size limit of one download: 256 MiB.
pub const DEFAULT_DOWNLOAD_LIMIT: u64 = 256 * 1024 * 1024;
/// The subdirectory the browser writes downloads in progress to.
const INCOMING: &str = ".incoming";
/// The name of a download whose suggested name is empty once made bare.
const FALLBACK_NAME: &str = "download";
/// Longest file name kept, in bytes, before numbering (file systems allow 255).
const MAX_NAME_BYTES: usize = 200;
/// How many numbered names are tried before giving up.
const MAX_NUMBERED: u32 = 10_000;

/// The size limit of one download, shared with whoever lowers it (a command-layer session's quota).
/// Cheap to clone; every clone reads and sets the same value.
#[derive(Debug, Clone)]
pub struct DownloadLimit(Arc<AtomicU64>);

impl DownloadLimit {
    /// A limit of `bytes`.
    pub fn new(bytes: u64) -> DownloadLimit {
        DownloadLimit(Arc::new(AtomicU64::new(bytes)))
    }

    /// The limit now.
    pub fn bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Changes the limit; downloads in flight are checked against it at their next progress.
    pub fn set(&self, bytes: u64) {
        self.0.store(bytes, Ordering::Relaxed);
    }
}

impl Default for DownloadLimit {
    fn default() -> DownloadLimit {
        DownloadLimit::new(DEFAULT_DOWNLOAD_LIMIT)
    }
}

/// Where downloads go and how big one may get.
///
/// ```no_run
/// # async fn demo() -> chromate::Result<()> {
/// let browser = chromate::Browser::launch(chromate::LaunchOptions::default()).await?;
/// browser.enable_downloads(chromate::capture::DownloadOptions::new("/tmp/my-downloads")).await?;
/// # browser.close().await; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DownloadOptions {
    /// The directory finished downloads are saved in (created 0700, with missing parents, when
    /// the first download begins).
    pub dir: PathBuf,
    /// A download over this many bytes is canceled ([`DEFAULT_DOWNLOAD_LIMIT`] by default).
    pub limit: DownloadLimit,
}

impl DownloadOptions {
    /// Downloads into `dir`, limited to [`DEFAULT_DOWNLOAD_LIMIT`] bytes each.
    pub fn new(dir: impl Into<PathBuf>) -> DownloadOptions {
        DownloadOptions {
            dir: dir.into(),
            limit: DownloadLimit::default(),
        }
    }

    /// With this shared limit instead.
    pub fn limit(mut self, limit: DownloadLimit) -> DownloadOptions {
        self.limit = limit;
        self
    }
}

/// The downloads of one browser: each context's options, and the downloads in flight by guid.
#[derive(Default)]
pub(crate) struct Downloads {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// By browser context chromate made; `None` is the browser's own tabs.
    places: HashMap<Option<String>, Place>,
    in_flight: HashMap<String, InFlight>,
}

/// Where one context's downloads go.
struct Place {
    /// Set once the browser accepted the directory.
    saving: Option<DownloadOptions>,
    /// Why the browser refused the directory (events are then on without it).
    refused: Option<String>,
    /// Downloads begun and not yet journalled; waiters watch it.
    unfinished: watch::Sender<usize>,
}

impl Default for Place {
    fn default() -> Place {
        Place {
            saving: None,
            refused: None,
            unfinished: watch::channel(0).0,
        }
    }
}

/// Where a download's frame belongs, as the browser's state handler knows it.
pub(crate) struct DownloadOrigin {
    /// The tab's target id.
    pub(crate) page: String,
    /// The browser context chromate made that the tab is in; `None` for the browser's own.
    pub(crate) context: Option<String>,
    /// The journal the tab's entries go to (its context's, or the browser's).
    pub(crate) journal: Journal,
}

struct InFlight {
    url: String,
    /// The suggested name made bare.
    name: String,
    /// The tab's target id.
    page: String,
    /// The context it was started in (whose place it is saved in).
    context: Option<String>,
    /// Where its entry goes.
    journal: Journal,
    /// Set once a cancel was sent (over the limit), with the reason.
    canceling: Option<String>,
}

impl Downloads {
    /// Whether downloads of `context` are saved (the browser accepted the directory).
    pub(crate) fn is_saving(&self, context: Option<&str>) -> bool {
        lock(&self.state)
            .places
            .get(&context.map(str::to_owned))
            .is_some_and(|place| place.saving.is_some())
    }

    /// One event of the browser session (on the reader task: never blocks on the browser; the
    /// finished file is moved on a task of its own). `origin_of` maps a frame id to its tab,
    /// context and journal.
    pub(crate) fn handle_event(
        self: &Arc<Self>,
        session: &Session,
        method: &str,
        params: &RawValue,
        origin_of: impl FnOnce(&str) -> DownloadOrigin,
    ) {
        match method {
            "Browser.downloadWillBegin" => {
                let Some(event) = decode_event::<EventDownloadWillBegin>(params) else {
                    return;
                };
                let origin = origin_of(event.frame_id.as_str());
                let download = InFlight {
                    url: cut_url(&event.url),
                    name: bare_file_name(&event.suggested_filename),
                    page: origin.page,
                    context: origin.context,
                    journal: origin.journal,
                    canceling: None,
                };
                let mut state = lock(&self.state);
                let place = state.places.entry(download.context.clone()).or_default();
                if let Some(options) = &place.saving {
                    // Created at the first download, not before, so a browser that never
                    // downloads leaves no directory; before the browser writes, so the modes are
                    // chromate's. Two `mkdir`s: quick enough for the reader task. A failure
                    // shows when the file is saved.
                    let _ = private_dir(&options.dir.join(INCOMING));
                }
                let unfinished = place.unfinished.clone();
                if state.in_flight.insert(event.guid, download).is_none() {
                    unfinished.send_modify(|n| *n += 1);
                }
            }
            "Browser.downloadProgress" => {
                if let Some(event) = decode_event::<EventDownloadProgress>(params) {
                    self.progress(session, event);
                }
            }
            _ => {}
        }
    }

    fn progress(self: &Arc<Self>, session: &Session, event: EventDownloadProgress) {
        let received = bytes_of(event.received_bytes);
        let total = bytes_of(event.total_bytes);
        let mut state = lock(&self.state);
        let Some(context) = state
            .in_flight
            .get(&event.guid)
            .map(|download| download.context.clone())
        else {
            return;
        };
        let (saving, refused) = state.places.get(&context).map_or((None, None), |place| {
            (place.saving.clone(), place.refused.clone())
        });
        let limit = saving.as_ref().map(|options| options.limit.bytes());
        match event.state {
            // A state newer than this protocol: wait for one chromate knows.
            EventDownloadProgressState::Unrecognized(_) => {}
            EventDownloadProgressState::InProgress => {
                let Some(download) = state.in_flight.get_mut(&event.guid) else {
                    return;
                };
                let Some(limit) = limit else { return };
                if download.canceling.is_some() || received.max(total) <= limit {
                    return;
                }
                download.canceling = Some(over_limit(limit));
                drop(state);
                let session = session.clone();
                crate::rt::spawn(async move {
                    let _ = session.send(&CancelDownloadParams::new(event.guid)).await;
                });
            }
            EventDownloadProgressState::Canceled => {
                let Some(download) = state.in_flight.remove(&event.guid) else {
                    return;
                };
                drop(state);
                if let Some(options) = &saving {
                    remove_partial(&options.dir, &event.guid);
                }
                let reason = download.canceling.clone().or(refused);
                download.journal.push(
                    &download.page,
                    download.entry(DownloadState::Canceled, Some(received), None, reason),
                );
                self.finished(&context);
            }
            EventDownloadProgressState::Completed => {
                let Some(download) = state.in_flight.remove(&event.guid) else {
                    return;
                };
                drop(state);
                let journal = download.journal.clone();
                let Some(options) = saving else {
                    let reason = refused.unwrap_or_else(|| "downloads are not enabled".into());
                    journal.push(
                        &download.page,
                        download.entry(DownloadState::Failed, Some(received), None, Some(reason)),
                    );
                    self.finished(&context);
                    return;
                };
                let source = event
                    .file_path
                    .map(PathBuf::from)
                    .unwrap_or_else(|| options.dir.join(INCOMING).join(&event.guid));
                // Moving the file touches the disk: off the reader task.
                let downloads = Arc::clone(self);
                crate::rt::spawn(async move {
                    let data = finish(&options, &source, download, received);
                    journal.push(&data.0, data.1);
                    downloads.finished(&context);
                });
            }
        }
    }
}

impl Downloads {
    /// One download of `context` was journalled.
    fn finished(&self, context: &Option<String>) {
        if let Some(place) = lock(&self.state).places.get(context) {
            place.unfinished.send_modify(|n| *n = n.saturating_sub(1));
        }
    }

    /// Saves the downloads of `context` (`None`: the browser's own tabs) as `options` say;
    /// see [`Browser::enable_downloads`](crate::Browser::enable_downloads).
    pub(crate) async fn enable(
        &self,
        session: &Session,
        context: Option<&str>,
        options: DownloadOptions,
    ) -> Result<()> {
        let key = context.map(str::to_owned);
        let incoming = options.dir.join(INCOMING);
        {
            let mut state = lock(&self.state);
            let place = state.places.entry(key.clone()).or_default();
            place.saving = Some(options.clone());
            place.refused = None;
        }
        let context_id = context.map(|id| BrowserContextID(id.to_owned()));
        let mut params =
            SetDownloadBehaviorParams::new(SetDownloadBehaviorParamsBehavior::AllowAndName)
                .download_path(incoming.display().to_string())
                .events_enabled(true);
        if let Some(id) = context_id.clone() {
            params = params.browser_context_id(id);
        }
        let Err(err) = session.send(&params).await else {
            return Ok(());
        };
        {
            let mut state = lock(&self.state);
            let place = state.places.entry(key).or_default();
            place.saving = None;
            place.refused = Some(format!(
                "the browser refused the downloads directory: {err}"
            ));
        }
        // Events alone, so downloads are still reported.
        let mut events = SetDownloadBehaviorParams::new(SetDownloadBehaviorParamsBehavior::Default)
            .events_enabled(true);
        if let Some(id) = context_id {
            events = events.browser_context_id(id);
        }
        let _ = session.send(&events).await;
        Err(err)
    }

    /// Waits until every download of `context` begun so far has ended and been journalled, up
    /// to `timeout`; whether none is left.
    pub(crate) async fn wait(&self, context: Option<&str>, timeout: Duration) -> bool {
        let mut unfinished = lock(&self.state)
            .places
            .entry(context.map(str::to_owned))
            .or_default()
            .unfinished
            .subscribe();
        let waited = tokio::time::timeout(timeout, unfinished.wait_for(|n| *n == 0)).await;
        matches!(waited, Ok(Ok(_)))
    }

    /// Forgets a disposed-of context: its place, and its downloads in flight (the browser
    /// cancels them with the context).
    pub(crate) fn forget(&self, context: &str) {
        let mut state = lock(&self.state);
        state.places.remove(&Some(context.to_owned()));
        state
            .in_flight
            .retain(|_, download| download.context.as_deref() != Some(context));
    }
}

impl InFlight {
    fn entry(
        &self,
        state: DownloadState,
        bytes: Option<u64>,
        path: Option<PathBuf>,
        reason: Option<String>,
    ) -> LogData {
        LogData::Download {
            url: self.url.clone(),
            name: self.name.clone(),
            state,
            bytes,
            path,
            reason,
        }
    }
}

/// A completed download → its journal entry (and tab): moved under its name and made 0600; over
/// the limit after all (it finished before the cancel arrived) it is deleted and canceled.
fn finish(
    options: &DownloadOptions,
    source: &Path,
    download: InFlight,
    received: u64,
) -> (String, LogData) {
    let bytes = std::fs::metadata(source).map(|meta| meta.len());
    let entry = match bytes {
        Err(err) => download.entry(
            DownloadState::Failed,
            Some(received),
            None,
            Some(format!(
                "the browser saved it where chromate cannot read it ({}: {err})",
                source.display()
            )),
        ),
        Ok(bytes) if bytes > options.limit.bytes() => {
            let _ = std::fs::remove_file(source);
            download.entry(
                DownloadState::Canceled,
                Some(bytes),
                None,
                Some(over_limit(options.limit.bytes())),
            )
        }
        Ok(bytes) => match private_dir(&options.dir)
            .and_then(|()| save(&options.dir, source, &download.name))
        {
            Ok((path, name)) => LogData::Download {
                url: download.url.clone(),
                name,
                state: DownloadState::Completed,
                bytes: Some(bytes),
                path: Some(path),
                reason: None,
            },
            Err(err) => {
                let _ = std::fs::remove_file(source);
                download.entry(
                    DownloadState::Failed,
                    Some(bytes),
                    None,
                    Some(format!(
                        "cannot save it in {}: {err}",
                        options.dir.display()
                    )),
                )
            }
        },
    };
    (download.page, entry)
}

fn over_limit(limit: u64) -> String {
    format!("over the size limit of {limit} bytes")
}

/// Moves `source` to the first free `name`, `name (2)`, … in `dir`, as a 0600 file.
fn save(dir: &Path, source: &Path, name: &str) -> io::Result<(PathBuf, String)> {
    let (path, name) = reserve_name(dir, name)?;
    let moved = std::fs::rename(source, &path).and_then(|()| private_file(&path));
    if let Err(err) = moved {
        let _ = std::fs::remove_file(&path);
        return Err(err);
    }
    Ok((path, name))
}

/// Creates an empty 0600 file under the first free name, so no other download takes it.
fn reserve_name(dir: &Path, name: &str) -> io::Result<(PathBuf, String)> {
    for n in 1..=MAX_NUMBERED {
        let candidate = numbered_file_name(name, n);
        let path = dir.join(&candidate);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&path) {
            Ok(_) => return Ok((path, candidate)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{MAX_NUMBERED} files are already named like {name:?}"),
    ))
}

fn private_file(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Removes what a canceled download left in the incoming directory (the browser usually has).
fn remove_partial(dir: &Path, guid: &str) {
    let incoming = dir.join(INCOMING);
    for name in [guid.to_owned(), format!("{guid}.crdownload")] {
        let _ = std::fs::remove_file(incoming.join(name));
    }
}

/// Creates `dir` and its missing parents 0700, and makes `dir` itself 0700.
fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The browser's byte counts are JSON numbers; negative or unknown ones count as 0.
fn bytes_of(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

/// The browser's suggested file name made bare: path separators (`/`, `\`) and control
/// characters removed, then leading dots and spaces; cut to 200 bytes keeping the extension;
/// `download` if nothing is left: `../../etc/passwd` → `etcpasswd`, `.bashrc` → `bashrc`,
/// `...` → `download` (the unit tests below hold every case).
pub(crate) fn bare_file_name(suggested: &str) -> String {
    let kept: String = suggested
        .chars()
        .filter(|c| !matches!(c, '/' | '\\') && !c.is_control())
        .collect();
    let trimmed = kept.trim_start_matches(['.', ' ']).trim_end();
    if trimmed.is_empty() {
        return FALLBACK_NAME.to_owned();
    }
    if trimmed.len() <= MAX_NAME_BYTES {
        return trimmed.to_owned();
    }
    let (stem, extension) = split_extension(trimmed);
    let extension = if extension.len() <= 16 { extension } else { "" };
    let mut end = MAX_NAME_BYTES.saturating_sub(extension.len());
    while !stem.is_char_boundary(end.min(stem.len())) {
        end -= 1;
    }
    format!("{}{extension}", &stem[..end.min(stem.len())])
}

/// `name` for `n` = 1, else `n` in parentheses before the extension:
/// `report.pdf` → `report (2).pdf`, `README` → `README (3)`.
pub(crate) fn numbered_file_name(name: &str, n: u32) -> String {
    if n <= 1 {
        return name.to_owned();
    }
    let (stem, extension) = split_extension(name);
    format!("{stem} ({n}){extension}")
}

/// `report.pdf` → (`report`, `.pdf`); a name without a dot after its first character has no
/// extension.
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(dot) if dot > 0 => name.split_at(dot),
        _ => (name, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::{bare_file_name, numbered_file_name, reserve_name};

    #[test]
    fn suggested_names_are_made_bare() {
        let check = |suggested: &str, expected: &str| {
            assert_eq!(bare_file_name(suggested), expected, "for {suggested:?}");
        };
        check("report.pdf", "report.pdf");
        check("../../etc/passwd", "etcpasswd");
        check("..\\..\\boot.ini", "boot.ini");
        check("dir/sub/file.txt", "dirsubfile.txt");
        check(".hidden", "hidden");
        check(" . .x", "x");
        check("a\u{0}b\nc.txt", "abc.txt");
        check("", "download");
        check("/../", "download");
        check("naïve café.csv", "naïve café.csv");
        let long = format!("{}.tar", "é".repeat(300));
        let cut = bare_file_name(&long);
        assert!(cut.len() <= 200 && cut.ends_with(".tar"), "{cut}");
    }

    #[test]
    fn clashing_names_are_numbered_before_the_extension() {
        assert_eq!(numbered_file_name("report.pdf", 1), "report.pdf");
        assert_eq!(numbered_file_name("report.pdf", 2), "report (2).pdf");
        assert_eq!(
            numbered_file_name("archive.tar.gz", 3),
            "archive.tar (3).gz"
        );
        assert_eq!(numbered_file_name("README", 2), "README (2)");
        assert_eq!(numbered_file_name("download", 10), "download (10)");
    }

    #[test]
    fn reserving_a_taken_name_takes_the_next_number() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = reserve_name(dir.path(), "a.txt").expect("first");
        let second = reserve_name(dir.path(), "a.txt").expect("second");
        let third = reserve_name(dir.path(), "a.txt").expect("third");
        assert_eq!(first.1, "a.txt");
        assert_eq!(second.1, "a (2).txt");
        assert_eq!(third.1, "a (3).txt");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&third.0)
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
