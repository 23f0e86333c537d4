//! browser_state (docs/mcp.md#saved-state): saved login state — save, load and list.
//!
//! Owns: the state root (`CHROMATE_STATE_DIR`, else `./.chromate/state`,
//! with `.chromate/.gitignore` = `*` when chromate creates `.chromate/`),
//! the file format (version 1: cookies, `localStorage` and `sessionStorage`
//! by origin), writing it owner-only (directory 0700 and ours, file 0600
//! through a temporary file and a rename, no symlink followed), name rules and the result shapes (counts,
//! never values). Reading and setting cookies and storage is the engine's
//! (`Browser::cookies`, `Page::storage`, `Page::seed_storage`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::schema::{
    arg_enum, tool_args, Arg, Capability, Cli, Hints, Pattern, Runs, Slot, ToolDecl,
};
use super::ToolContext;
use crate::error::{ToolError, ToolErrorCode, ToolOutput};
use crate::private_fs;
use crate::session::ToolSession;

/// `^[A-Za-z0-9_-]{1,64}$`.
pub(crate) static STATE_NAME: Pattern = Pattern {
    source: "^[A-Za-z0-9_-]{1,64}$",
    matches: |name| {
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
    },
};

pub(super) const STATE: ToolDecl = ToolDecl {
    name: "browser_state",
    title: "Login state",
    verb: "state",
    description: "Save or load cookies and storage under a name, or list saved names.",
    hints: Hints::D,
    observes: false,
    cli: Cli::new("state", &[Slot::arg("action"), Slot::arg("name")]),
    args: StateArgs::ARGS,
    capability: Capability::Core,
    runs: Runs::Session,
    spill: None,
    negative: None,
};

arg_enum! {
    /// browser_state `action`.
    pub enum StateAction {
        Save = "save",
        Load = "load",
        List = "list",
    }
}

tool_args! {
    /// The arguments of browser_state, in schema order.
    pub struct StateArgs {
        action: StateAction = Arg::one_of("action", "What to do", StateAction::VALUES).default_str("list"),
        name: Option<String> = Arg::string("name", "State name (save, load)")
            .max_len(64)
            .pattern(&STATE_NAME),
        #[serde(default)]
        session_storage: bool = Arg::boolean("session_storage", "Also save sessionStorage (save)"),
    }
}

pub(super) fn check_state(args: &StateArgs, _session: &ToolSession) -> Result<(), ToolError> {
    if matches!(args.action, StateAction::Save | StateAction::Load) && args.name.is_none() {
        return Err(ToolError::invalid_argument(
            format!("state {}: missing \"name\"", args.action.as_str()),
            "name",
            "pass name= letters, digits, _ or -; browser_state action=list shows saved names",
        ));
    }
    Ok(())
}

/// Saved state names under `root`, sorted; a missing root is an empty list.
pub(super) fn saved_names(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            let file_name = entry.file_name().into_string().ok()?;
            let stem = file_name.strip_suffix(".json")?;
            (STATE_NAME.matches)(stem).then(|| stem.to_owned())
        })
        .collect();
    names.sort();
    names
}

/// The saved file (docs/mcp.md#saved-state), `version` 1.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StateFile {
    version: u32,
    #[serde(default)]
    cookies: Vec<SavedCookie>,
    #[serde(default)]
    local_storage: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    session_storage: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedCookie {
    name: String,
    value: String,
    domain: String,
    #[serde(default = "root_path")]
    path: String,
    #[serde(default = "session_expiry")]
    expires: f64,
    #[serde(default)]
    http_only: bool,
    #[serde(default)]
    secure: bool,
    #[serde(default)]
    same_site: Option<String>,
}

fn root_path() -> String {
    "/".to_owned()
}

fn session_expiry() -> f64 {
    -1.0
}

impl From<chromate::storage::Cookie> for SavedCookie {
    fn from(cookie: chromate::storage::Cookie) -> Self {
        SavedCookie {
            name: cookie.name,
            value: cookie.value,
            domain: cookie.domain,
            path: cookie.path,
            expires: cookie.expires,
            http_only: cookie.http_only,
            secure: cookie.secure,
            same_site: cookie.same_site,
        }
    }
}

impl From<SavedCookie> for chromate::storage::Cookie {
    fn from(cookie: SavedCookie) -> Self {
        chromate::storage::Cookie {
            name: cookie.name,
            value: cookie.value,
            domain: cookie.domain,
            path: cookie.path,
            expires: cookie.expires,
            http_only: cookie.http_only,
            secure: cookie.secure,
            same_site: cookie.same_site,
        }
    }
}

impl StateFile {
    fn storage_keys(&self) -> usize {
        let count = |areas: &BTreeMap<String, BTreeMap<String, String>>| {
            areas.values().map(BTreeMap::len).sum::<usize>()
        };
        count(&self.local_storage) + count(&self.session_storage)
    }

    /// The saved origin: the one with storage, else none.
    fn origin(&self) -> Option<&str> {
        self.local_storage
            .keys()
            .chain(self.session_storage.keys())
            .next()
            .map(String::as_str)
    }
}

/// Creates the state root if needed, private (`private_fs.rs`): `.chromate/` (when it is the
/// root's parent and missing) is created exclusively and gets a `.gitignore` of `*`; other
/// missing parents are created as they would be by hand; the root itself is created 0700, or,
/// if it exists, used only when it is a real directory (not a symlink) owned by this user, and
/// tightened to 0700.
fn ensure_root(root: &Path) -> std::io::Result<()> {
    if let Some(parent) = root.parent() {
        let is_chromate = parent.file_name().is_some_and(|name| name == ".chromate");
        let missing = std::fs::symlink_metadata(parent).is_err();
        if is_chromate && missing {
            if let Some(grandparent) = parent.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(grandparent)?;
            }
            private_fs::create_dir(parent)?;
            private_fs::write_new_file(&parent.join(".gitignore"), b"*\n")?;
        } else if missing {
            std::fs::create_dir_all(parent)?;
        }
    }
    private_fs::ensure_dir(root)
}

/// Writes `bytes` to `path` owner-only (0600) through a new temporary file in the same
/// directory and a rename, so a reader never sees half a file. Neither the temporary file nor
/// the rename follows a symlink (a stale temporary of a crashed server with the same pid is
/// removed first; `rename` replaces a symlink at `path`, never its target).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    match std::fs::remove_file(&temp) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    let written = (|| {
        let mut file = private_fs::create_file(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

fn state_path(root: &Path, name: &str) -> PathBuf {
    root.join(format!("{name}.json"))
}

fn io_error(verb: &str, path: &Path, err: &std::io::Error) -> ToolError {
    ToolError::new(
        ToolErrorCode::StateInvalid,
        format!("{verb}: cannot write {}: {err}", path.display()),
    )
    .with_hint("set CHROMATE_STATE_DIR to a writable directory")
    .with_detail(json!({ "reason": "io", "path": path.display().to_string() }))
}

fn result(action: &str, name: &str, path: &Path, file: &StateFile) -> Value {
    let mut res = json!({
        "ok": true,
        "action": action,
        "name": name,
        "path": path.display().to_string(),
        "origin": file.origin(),
        "cookies": file.cookies.len(),
        "storageKeys": file.storage_keys(),
    });
    if file.origin().is_none() {
        res["note"] = json!("the active tab has no page origin, so only cookies were saved");
    }
    res
}

async fn save(
    ctx: &mut ToolContext<'_>,
    name: &str,
    session_storage: bool,
) -> Result<ToolOutput, ToolError> {
    let verb = "state save";
    let page = ctx.session.active_page(verb).await?;
    // No timeout_ms: its round trips are bounded by the agent default, and a page whose
    // script does not yield is freed when it runs out.
    let timeout = ctx.session.agent_timeout();
    let read = match &ctx.session.browser.live {
        Some(live) => page.within(timeout, live.cookies()).await,
        None => {
            return Err(ToolError::new(
                ToolErrorCode::DriverError,
                "state save: no browser",
            ))
        }
    };
    let cookies = match read {
        Ok(cookies) => cookies,
        Err(err) => return Err(ctx.session.engine_error(verb, &err)),
    };
    let storage = match page.within(timeout, page.storage()).await {
        Ok(storage) => storage,
        Err(err) => return Err(ctx.session.engine_error(verb, &err)),
    };
    let mut file = StateFile {
        version: 1,
        cookies: cookies.into_iter().map(SavedCookie::from).collect(),
        local_storage: BTreeMap::new(),
        session_storage: BTreeMap::new(),
    };
    if let Some(origin) = storage.origin.clone() {
        file.local_storage.insert(origin.clone(), storage.local);
        if session_storage {
            file.session_storage.insert(origin, storage.session);
        }
    }
    let root = ctx.session.state_root();
    let path = state_path(&root, name);
    let made = match (&ctx.session.namespace, root.parent()) {
        // The shared root as for any session, then the session's own directory in it.
        (Some(_), Some(shared)) => ensure_root(shared).and_then(|()| private_fs::ensure_dir(&root)),
        _ => ensure_root(&root),
    };
    made.map_err(|err| io_error(verb, &root, &err))?;
    let bytes = serde_json::to_vec_pretty(&file).map_err(|err| {
        ToolError::new(
            ToolErrorCode::DriverError,
            format!("{verb}: cannot encode the state: {err}"),
        )
    })?;
    write_private(&path, &bytes).map_err(|err| io_error(verb, &path, &err))?;
    Ok(ToolOutput::new(result("save", name, &path, &file)))
}

async fn load(ctx: &mut ToolContext<'_>, name: &str) -> Result<ToolOutput, ToolError> {
    let verb = "state load";
    let root = ctx.session.state_root();
    let path = state_path(&root, name);
    let file: StateFile = private_fs::read_file(&path)
        .map_err(|err| err.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|err| err.to_string()))
        .map_err(|reason| {
            ToolError::new(
                ToolErrorCode::InvalidArgument,
                format!("{verb}: saved state \"{name}\" cannot be read: {reason}"),
            )
            .with_hint("save it again with browser_state action=save")
            .with_detail(json!({ "argument": "name", "reason": reason }))
        })?;
    let page = ctx.session.active_page(verb).await?;
    let cookies: Vec<chromate::storage::Cookie> = file
        .cookies
        .iter()
        .cloned()
        .map(chromate::storage::Cookie::from)
        .collect();
    let replaced = match &ctx.session.browser.live {
        Some(live) => {
            let timeout = ctx.session.agent_timeout();
            page.within(timeout, live.replace_cookies(&cookies)).await
        }
        None => {
            return Err(ToolError::new(
                ToolErrorCode::DriverError,
                "state load: no browser",
            ))
        }
    };
    if let Err(err) = replaced {
        return Err(ctx.session.engine_error(verb, &err));
    }
    let origins: std::collections::BTreeSet<&String> = file
        .local_storage
        .keys()
        .chain(file.session_storage.keys())
        .collect();
    for origin in origins {
        let storage = chromate::storage::PageStorage {
            origin: Some(origin.clone()),
            local: file.local_storage.get(origin).cloned().unwrap_or_default(),
            session: file
                .session_storage
                .get(origin)
                .cloned()
                .unwrap_or_default(),
        };
        let timeout = ctx.session.agent_timeout();
        if let Err(err) = page.within(timeout, page.seed_storage(&storage)).await {
            return Err(ctx.session.engine_error(verb, &err));
        }
    }
    ctx.session.shown.baseline = None;
    Ok(ToolOutput::new(result("load", name, &path, &file)))
}

/// The cookies and localStorage of the state saved as `name`, for an audit's context.
pub(super) fn login_of_saved(
    session: &ToolSession,
    name: &str,
) -> Result<crate::audit::Login, ToolError> {
    let root = session.state_root();
    if !saved_names(&root).iter().any(|saved| saved == name) {
        return Err(ToolError::invalid_argument(
            format!(
                "audit: no saved state named \"{name}\" in {}",
                root.display()
            ),
            "state",
            "save one with `chromate state save NAME` (browser_state action=save) first",
        )
        .with_detail_key("available", json!(saved_names(&root))));
    }
    let path = state_path(&root, name);
    let file: StateFile = private_fs::read_file(&path)
        .map_err(|err| err.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|err| err.to_string()))
        .map_err(|reason| {
            ToolError::invalid_argument(
                format!("audit: saved state \"{name}\" cannot be read: {reason}"),
                "state",
                "save it again with browser_state action=save",
            )
        })?;
    Ok(crate::audit::Login {
        cookies: file
            .cookies
            .into_iter()
            .map(chromate::storage::Cookie::from)
            .collect(),
        storage: file
            .local_storage
            .into_iter()
            .map(|(origin, local)| chromate::storage::PageStorage {
                origin: Some(origin),
                local,
                session: BTreeMap::new(),
            })
            .collect(),
    })
}

/// Playwright's storage-state file (`context.storageState()`): cookies, and each origin's
/// localStorage as name/value pairs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StorageStateFile {
    #[serde(default)]
    cookies: Vec<SavedCookie>,
    #[serde(default)]
    origins: Vec<StorageStateOrigin>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StorageStateOrigin {
    origin: String,
    #[serde(default)]
    local_storage: Vec<StorageStateItem>,
}

#[derive(Deserialize)]
struct StorageStateItem {
    name: String,
    value: String,
}

/// The cookies and localStorage of a Playwright storage-state file at `path` (relative to the
/// command's directory), for an audit's context.
pub(super) fn login_of_storage_state(
    session: &ToolSession,
    path: &str,
) -> Result<crate::audit::Login, ToolError> {
    let path = session.working_dir().join(path);
    let invalid = |reason: String| {
        ToolError::invalid_argument(
            format!("audit: storage_state {}: {reason}", path.display()),
            "storage_state",
            "give a Playwright storage-state JSON file: {\"cookies\": [...], \"origins\": [{\"origin\", \"localStorage\": [{\"name\", \"value\"}]}]}",
        )
    };
    let bytes = std::fs::read(&path).map_err(|err| invalid(err.to_string()))?;
    let file: StorageStateFile =
        serde_json::from_slice(&bytes).map_err(|err| invalid(err.to_string()))?;
    Ok(crate::audit::Login {
        cookies: file
            .cookies
            .into_iter()
            .map(chromate::storage::Cookie::from)
            .collect(),
        storage: file
            .origins
            .into_iter()
            .map(|origin| chromate::storage::PageStorage {
                origin: Some(origin.origin),
                local: origin
                    .local_storage
                    .into_iter()
                    .map(|item| (item.name, item.value))
                    .collect(),
                session: BTreeMap::new(),
            })
            .collect(),
    })
}

pub(super) async fn state(
    ctx: &mut ToolContext<'_>,
    args: StateArgs,
) -> Result<ToolOutput, ToolError> {
    let root = ctx.session.state_root();
    match (args.action, &args.name) {
        (StateAction::Load, Some(name)) => {
            let available = saved_names(&root);
            if !available.contains(name) {
                return Err(ToolError::invalid_argument(
                    format!("state load: no saved state named \"{name}\""),
                    "name",
                    "save one first with browser_state action=save, or pick a name from action=list",
                )
                .with_detail_key("available", json!(available)));
            }
            load(ctx, name).await
        }
        (StateAction::Save, Some(name)) => save(ctx, name, args.session_storage).await,
        _ => Ok(ToolOutput::new(json!({
            "states": saved_names(&root),
            "root": root.display().to_string(),
        }))),
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[test]
    fn saving_creates_a_private_root_with_a_gitignore_and_a_private_file() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let base = std::env::temp_dir().join(format!(
            "chromate-state-test-{}-{nanos}",
            std::process::id()
        ));
        let root = base.join(".chromate").join("state");
        ensure_root(&root).expect("root");
        let path = state_path(&root, "admin");
        write_private(&path, b"{}").expect("write");
        assert_eq!(
            std::fs::read_to_string(base.join(".chromate/.gitignore")).expect("gitignore"),
            "*\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&root), 0o700);
            assert_eq!(mode(&path), 0o600);
        }
        assert_eq!(saved_names(&root), vec!["admin".to_owned()]);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_planted_state_root_symlink_is_refused_and_its_target_untouched() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().expect("a temp dir");
        let elsewhere = base.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("elsewhere");
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::fs::create_dir(base.path().join(".chromate")).expect(".chromate");
        let root = base.path().join(".chromate").join("state");
        std::os::unix::fs::symlink(&elsewhere, &root).expect("plant");
        let err = ensure_root(&root).expect_err("a symlinked root is refused");
        assert!(err.to_string().contains("is a symlink"), "{err}");
        let mode = std::fs::metadata(&elsewhere)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o755, "the target's mode is not touched");
        // A symlink where the file goes is replaced, never written through.
        let real = base.path().join("real");
        ensure_root(&real).expect("a real root");
        let victim = base.path().join("victim.json");
        std::fs::write(&victim, "keep").expect("victim");
        let path = state_path(&real, "admin");
        std::os::unix::fs::symlink(&victim, &path).expect("plant a file link");
        write_private(&path, b"{}").expect("write");
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep");
        assert!(!std::fs::symlink_metadata(&path)
            .expect("meta")
            .file_type()
            .is_symlink());
    }

    #[test]
    fn the_file_format_reads_back_with_counts() {
        let text = r#"{"version":1,"cookies":[{"name":"user","value":"ann","domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":null}],"localStorage":{"http://127.0.0.1:1":{"user":"ann"}},"sessionStorage":{}}"#;
        let file: StateFile = serde_json::from_str(text).expect("parse");
        assert_eq!(file.cookies.len(), 1);
        assert_eq!(file.storage_keys(), 1);
        assert_eq!(file.origin(), Some("http://127.0.0.1:1"));
        let back = serde_json::to_value(&file).expect("encode");
        assert_eq!(back["cookies"][0]["httpOnly"], json!(false));
        assert!(back["localStorage"].is_object() && back["sessionStorage"].is_object());
    }
}
