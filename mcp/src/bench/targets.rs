//! The pages of a `bench-snapshot` run: each target is a URL, an HTML file, a directory (every
//! `.html`/`.htm` file under it), a sitemap (`.xml`, a file or an `http://` URL: its `<loc>`
//! entries, one level of sitemap index followed) or a file of targets (one a line, `#`
//! comments). Local files are served on 127.0.0.1 by a small static server of the run's own
//! (an HTML file from the directory it was named from, when it is under it, else its own),
//! so every tool loads them over HTTP the same way (Playwright MCP refuses `file://`), and
//! relative links between them work.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How many pages one run takes at most.
const MAX_PAGES: usize = 2000;
/// The largest sitemap or request read.
const MAX_FETCH_BYTES: usize = 16 << 20;

/// The pages, and the server of local files while it is needed.
pub(crate) struct Served {
    /// URL and the label the report shows.
    pub(crate) pages: Vec<(String, String)>,
    /// Serves the local files until dropped.
    pub(crate) server: Option<StaticServer>,
}

/// Expands `targets` into pages, starting the local server if any target is a file.
pub(crate) async fn expand(targets: &[String]) -> Result<Served, String> {
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut items: Vec<Item> = Vec::new();
    for target in targets {
        collect(target, None, &mut items, 0).await?;
    }
    for item in &items {
        if let Item::File { root, .. } = item {
            if !roots.contains(root) {
                roots.push(root.clone());
            }
        }
    }
    let server = if roots.is_empty() {
        None
    } else {
        Some(StaticServer::start(roots.clone()).await?)
    };
    let mut pages = Vec::new();
    for item in items {
        match item {
            Item::Url(url) => pages.push((url.clone(), url)),
            Item::File { root, relative } => {
                let Some(server) = &server else { continue };
                let mount = roots.iter().position(|r| *r == root).unwrap_or(0);
                let url = format!(
                    "http://127.0.0.1:{}/{mount}/{}",
                    server.port,
                    percent_encode(&relative)
                );
                pages.push((url, relative));
            }
        }
        if pages.len() > MAX_PAGES {
            return Err(format!("more than {MAX_PAGES} pages: name fewer"));
        }
    }
    Ok(Served { pages, server })
}

enum Item {
    Url(String),
    /// A local page: the directory it is served from, and its path there (`/`-separated).
    File {
        root: PathBuf,
        relative: String,
    },
}

fn is_url(target: &str) -> bool {
    target.contains("://") || target.starts_with("about:") || target.starts_with("data:")
}

fn is_page(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("html" | "htm" | "xhtml")
    )
}

/// Adds the pages of one target. `base` is the directory of the file of targets it came from.
async fn collect(
    target: &str,
    base: Option<&Path>,
    items: &mut Vec<Item>,
    depth: usize,
) -> Result<(), String> {
    if is_url(target) {
        if target.ends_with(".xml") {
            let text = fetch(target).await?;
            return sitemap(&text, target, items, depth).await;
        }
        items.push(Item::Url(target.to_string()));
        return Ok(());
    }
    let path = match base {
        Some(base) => base.join(target),
        None => PathBuf::from(target),
    };
    let path = std::fs::canonicalize(&path)
        .map_err(|e| format!("{target} is neither a url nor a readable file or directory: {e}"))?;
    if path.is_dir() {
        let mut found = Vec::new();
        walk(&path, &mut found);
        if found.is_empty() {
            return Err(format!("{}: no .html files in it", path.display()));
        }
        for file in found {
            let relative = relative_path(&path, &file);
            items.push(Item::File {
                root: path.clone(),
                relative,
            });
        }
        return Ok(());
    }
    if is_page(&path) {
        // Served from the directory it was named from (the file of targets', else the working
        // directory) when it is under it, so that its `../` links and assets resolve; else
        // from its own directory.
        let from = match base {
            Some(base) => std::fs::canonicalize(base).ok(),
            None => std::env::current_dir()
                .ok()
                .and_then(|d| std::fs::canonicalize(d).ok()),
        };
        let root = from
            .filter(|from| path.starts_with(from) && from.parent().is_some())
            .or_else(|| path.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        let relative = relative_path(&root, &path);
        items.push(Item::File { root, relative });
        return Ok(());
    }
    let text = read_limited(&path)?;
    if path.extension().and_then(|e| e.to_str()) == Some("xml") || text.contains("<urlset") {
        return sitemap(&text, &path.display().to_string(), items, depth).await;
    }
    if depth > 0 {
        return Err(format!(
            "{}: a file of targets names another one",
            path.display()
        ));
    }
    let dir = path.parent().map(Path::to_path_buf);
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        Box::pin(collect(line, dir.as_deref(), items, depth + 1)).await?;
    }
    Ok(())
}

fn read_limited(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() > MAX_FETCH_BYTES {
        return Err(format!("{}: larger than 16 MB", path.display()));
    }
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))
}

/// The pages a sitemap lists; a sitemap index's sitemaps are read once (no deeper).
async fn sitemap(
    text: &str,
    name: &str,
    items: &mut Vec<Item>,
    depth: usize,
) -> Result<(), String> {
    let locs = locs(text);
    if locs.is_empty() {
        return Err(format!("{name}: a sitemap with no <loc> entries"));
    }
    let index = text.contains("<sitemapindex");
    for loc in locs {
        if index {
            if depth > 1 {
                return Err(format!("{name}: sitemap indexes nested too deep"));
            }
            let inner = fetch(&loc).await?;
            Box::pin(sitemap(&inner, &loc, items, depth + 1)).await?;
        } else {
            items.push(Item::Url(loc));
        }
    }
    Ok(())
}

/// The text of every `<loc>` element, XML entities decoded.
fn locs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<loc>") {
        rest = &rest[start + 5..];
        let Some(end) = rest.find("</loc>") else {
            break;
        };
        let loc = rest[..end]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&");
        if !loc.is_empty() {
            out.push(loc);
        }
        rest = &rest[end..];
    }
    out
}

/// GETs an `http://` URL (HTTP/1.0, so the answer is not chunked) and returns its body.
async fn fetch(url: &str) -> Result<String, String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!(
            "{url}: sitemaps are read over http:// only; save it and name the file"
        ));
    };
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let address = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    let read = async {
        let mut stream = TcpStream::connect(&address).await?;
        let request = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut body = Vec::new();
        (&mut stream)
            .take(MAX_FETCH_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .await?;
        Ok::<_, std::io::Error>(body)
    };
    let answer = tokio::time::timeout(std::time::Duration::from_secs(30), read)
        .await
        .map_err(|_| format!("{url}: no answer within 30 s"))?
        .map_err(|e| format!("{url}: {e}"))?;
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{url}: not an HTTP answer"))?;
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status != "200" {
        return Err(format!("{url}: HTTP {status}"));
    }
    Ok(body.to_string())
}

/// Every page file under `dir`, sorted, hidden directories and `node_modules` skipped.
fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "node_modules" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if is_page(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
}

fn relative_path(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn percent_encode(path: &str) -> String {
    let mut out = String::new();
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn percent_decode(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A static file server on 127.0.0.1 for the run's local pages: `/N/PATH` is `PATH` under
/// the N-th root. GET and HEAD only; nothing outside a root is served.
pub(crate) struct StaticServer {
    pub(crate) port: u16,
    task: tokio::task::AbortHandle,
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StaticServer {
    async fn start(roots: Vec<PathBuf>) -> Result<StaticServer, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot serve the local pages on 127.0.0.1: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot serve the local pages: {e}"))?
            .port();
        let roots = std::sync::Arc::new(roots);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let roots = roots.clone();
                tokio::spawn(async move {
                    let _ = serve(stream, &roots).await;
                });
            }
        });
        Ok(StaticServer {
            port,
            task: task.abort_handle(),
        })
    }
}

/// Answers the requests of one connection (keep-alive), each with the file or a 404.
async fn serve(mut stream: TcpStream, roots: &[PathBuf]) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buffer.len() > 64 << 10 {
                return Ok(());
            }
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        buffer.drain(..head_end);
        let mut words = head.split_whitespace();
        let method = words.next().unwrap_or("");
        let target = words.next().unwrap_or("/");
        let file = resolve(roots, target);
        let (status, body, kind) = match (
            method,
            file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))),
        ) {
            ("GET" | "HEAD", Some((path, body))) => ("200 OK", body, content_type(&path)),
            _ => ("404 Not Found", b"not found\n".to_vec(), "text/plain"),
        };
        let header = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\r\n",
            body.len()
        );
        stream.write_all(header.as_bytes()).await?;
        if method != "HEAD" {
            stream.write_all(&body).await?;
        }
    }
}

/// The file `/N/PATH` names, if it is under the N-th root (a directory: its `index.html`).
fn resolve(roots: &[PathBuf], target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let path = percent_decode(path)?;
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let mount: usize = parts.next()?.parse().ok()?;
    let root = roots.get(mount)?;
    let relative = Path::new(parts.next().unwrap_or(""));
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let mut file = root.join(relative);
    if file.is_dir() {
        file = file.join("index.html");
    }
    let canonical = std::fs::canonicalize(&file).ok()?;
    canonical.starts_with(root).then_some(canonical)
}

fn content_type(path: &Path) -> &'static str {
    let types: BTreeMap<&str, &str> = [
        ("html", "text/html; charset=utf-8"),
        ("htm", "text/html; charset=utf-8"),
        ("xhtml", "application/xhtml+xml"),
        ("css", "text/css"),
        ("js", "text/javascript"),
        ("mjs", "text/javascript"),
        ("json", "application/json"),
        ("svg", "image/svg+xml"),
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
        ("gif", "image/gif"),
        ("webp", "image/webp"),
        ("ico", "image/x-icon"),
        ("woff", "font/woff"),
        ("woff2", "font/woff2"),
        ("ttf", "font/ttf"),
        ("txt", "text/plain; charset=utf-8"),
        ("xml", "application/xml"),
        ("wasm", "application/wasm"),
    ]
    .into_iter()
    .collect();
    path.extension()
        .and_then(|e| e.to_str())
        .and_then(|e| types.get(e).copied())
        .unwrap_or("application/octet-stream")
}

#[cfg(test)]
mod tests {
    use super::{locs, percent_decode, percent_encode, resolve};

    #[test]
    fn sitemap_locations_are_read_with_entities_decoded() {
        let xml = "<urlset><url><loc> http://127.0.0.1:1/a?x=1&amp;y=2 </loc></url>\
                   <url><loc>http://127.0.0.1:1/b</loc></url></urlset>";
        assert_eq!(
            locs(xml),
            vec!["http://127.0.0.1:1/a?x=1&y=2", "http://127.0.0.1:1/b"]
        );
    }

    #[test]
    fn the_server_serves_nothing_outside_its_roots() {
        let root = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).expect("root");
        let roots = vec![root.join("src")];
        assert!(resolve(&roots, "/0/main.rs").is_some());
        assert!(resolve(&roots, "/0/../Cargo.toml").is_none());
        assert!(resolve(&roots, "/0/%2e%2e/Cargo.toml").is_none());
        assert!(resolve(&roots, "/1/main.rs").is_none());
        assert_eq!(percent_encode("a b/ü.html"), "a%20b/%C3%BC.html");
        assert_eq!(
            percent_decode("a%20b/%C3%BC.html").as_deref(),
            Some("a b/ü.html")
        );
    }
}
