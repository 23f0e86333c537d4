//! A real load balancer in front of several `chromate mcp --http` servers: nginx from Debian
//! (installed by `.ci/setup.sh all`), run by a test with a config of its own in a temp
//! directory (`-p`, `-c`, `-e`, its pid file and every temp path there; `daemon off;`, so the
//! test's child is nginx's master process), and ended by PID with its workers.
//!
//! [`sticky_config`] writes the config that docs/mcp.md gives users: sticky sessions by the
//! `Mcp-Session-Id` prefix each server puts on the ids it makes (`--node NAME`). And
//! [`HttpNode`] is one `chromate mcp --http` server with a node name, its stderr kept.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The path of Debian's nginx, or `CHROMATE_NGINX`.
pub fn nginx_binary() -> PathBuf {
    std::env::var_os("CHROMATE_NGINX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/sbin/nginx"))
}

/// The nginx config of docs/mcp.md#several-servers-behind-a-load-balancer: `listen` on
/// `listen` (`127.0.0.1:PORT` in the tests), one upstream per `(node name, address)` and one
/// of them all. Requests with
/// no session id (an `initialize`) go to any server; the others go to the server whose node
/// name starts their id. When that server is down, nginx's 502 becomes a 404 carrying a
/// JSON-RPC error: the MCP spelling of "this session is gone, initialize again". The `prefix`
/// holds the logs, pid file and nginx's temp files.
pub fn sticky_config(listen: &str, nodes: &[(&str, String)], prefix: &Path) -> String {
    let prefix = prefix.display();
    let mut map = String::new();
    let mut upstreams = String::new();
    let mut any = String::new();
    for (name, address) in nodes {
        map.push_str(&format!("        \"~^{name}\\.\" chromate_{name};\n"));
        upstreams.push_str(&format!(
            "    upstream chromate_{name} {{\n        server {address};\n        keepalive 8;\n        keepalive_timeout 5s;\n    }}\n"
        ));
        any.push_str(&format!("        server {address};\n"));
    }
    format!(
        r#"# chromate mcp --http servers behind nginx, sticky by the Mcp-Session-Id prefix.
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{
    worker_connections 1024;
}}
http {{
    log_format chromate '$remote_addr "$request" $status upstream=$upstream_addr';
    access_log {prefix}/access.log chromate;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;

    # Each server makes session ids that start with its --node name and a dot.
    map $http_mcp_session_id $chromate_upstream {{
        default chromate_any;
{map}    }}
    # Kept upstream connections last 5 s idle at most: chromate closes one idle for 10 s, and
    # nginx does not send a POST again on a kept connection the server closed as it was sent.
{upstreams}    # initialize (no session id yet): any server that is up.
    upstream chromate_any {{
{any}        keepalive 8;
        keepalive_timeout 5s;
    }}

    server {{
        listen {listen};
        location /mcp {{
            proxy_pass http://$chromate_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            # Tool calls answered as server-sent events stream through; a call may run long.
            proxy_buffering off;
            proxy_read_timeout 600s;
            proxy_send_timeout 600s;
            # The session's server is down (refused, or closed without an answer).
            error_page 502 = @chromate_gone;
        }}
        location @chromate_gone {{
            default_type application/json;
            if ($http_mcp_session_id = "") {{
                return 502 '{{"jsonrpc":"2.0","id":null,"error":{{"code":-32603,"message":"no chromate server is up behind the load balancer; retry later"}}}}';
            }}
            return 404 '{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"session lost: the chromate server that held it is unreachable (stopped or crashed); its tabs, cookies and state are gone; send initialize again"}}}}';
        }}
    }}
}}
"#,
    )
}

/// A running nginx on loopback, its master process our child.
pub struct Nginx {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Nginx {
    /// Starts nginx with [`sticky_config`] for `nodes` on a free loopback port; waits (10 s at
    /// most) until it accepts connections.
    pub fn start(nodes: &[(&str, String)]) -> std::io::Result<Nginx> {
        let binary = nginx_binary();
        if !binary.is_file() {
            return Err(std::io::Error::other(format!(
                "nginx is not installed ({} is missing): run .ci/setup.sh all",
                binary.display()
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("chromate-test-nginx-")
            .tempdir()?;
        let port = free_port()?;
        let config = dir.path().join("nginx.conf");
        std::fs::write(
            &config,
            sticky_config(&format!("127.0.0.1:{port}"), nodes, dir.path()),
        )?;
        let log = std::fs::File::create(dir.path().join("stderr.log"))?;
        let child = Command::new(&binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&config)
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let mut nginx = Nginx { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(nginx);
            }
            if let Ok(Some(status)) = nginx.child.try_wait() {
                return Err(std::io::Error::other(format!(
                    "nginx exited ({status}): {}",
                    nginx.log()
                )));
            }
            if Instant::now() >= deadline {
                return Err(std::io::Error::other(format!(
                    "nginx did not listen within 10 s: {}",
                    nginx.log()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The master's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The master and its workers.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids = vec![self.child.id()];
        pids.extend(crate::procs::descendants(self.child.id()));
        pids
    }

    /// The access log so far: one line per request, with the server that answered it.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }

    /// nginx's own messages (its error log and stderr).
    pub fn log(&self) -> String {
        let mut text =
            std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default();
        text.push_str(
            &std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default(),
        );
        text
    }

    /// The config it runs.
    pub fn config(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("nginx.conf")).unwrap_or_default()
    }

    /// SIGQUIT (graceful stop) to the master; waits for it and its workers by PID (10 s at
    /// most), then kills whatever is left. The PIDs that outlived the stop are returned.
    pub fn stop(&mut self) -> Vec<u32> {
        let pids = self.pids();
        if self.child.try_wait().ok().flatten().is_none() {
            #[allow(unsafe_code)]
            // SAFETY: kill(2) on the PID of our own child, not reaped yet.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGQUIT);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let left =
            crate::procs::wait_until_gone_blocking(&pids, Instant::now() + Duration::from_secs(5))
                .err()
                .unwrap_or_default();
        for pid in &left {
            crate::procs::kill(*pid);
        }
        left
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One `chromate mcp --http 127.0.0.1:0 --node NAME …` server, its stderr kept; killed by
/// PID when dropped.
pub struct HttpNode {
    child: Child,
    port: u16,
    name: String,
    stderr: Arc<Mutex<Vec<String>>>,
    /// Its temp, runtime and artifacts directories; removed when the node is dropped.
    _dir: tempfile::TempDir,
}

impl HttpNode {
    /// Starts `binary mcp --http 127.0.0.1:0 --node name` with `args`, its artifacts, runtime
    /// and temp directories in a temp directory of its own; waits (30 s at most) for the line
    /// naming its address.
    pub fn start(binary: &Path, name: &str, args: &[&str]) -> std::io::Result<HttpNode> {
        HttpNode::start_with_env(binary, name, args, &[])
    }

    /// [`HttpNode::start`] with more environment (`CHROMATE_AGENT_TIMEOUT`, say).
    pub fn start_with_env(
        binary: &Path,
        name: &str,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> std::io::Result<HttpNode> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("chromate-test-{name}-"))
            .tempdir()?;
        let artifacts = dir.path().join("artifacts");
        std::fs::create_dir_all(&artifacts)?;
        let mut command = crate::mcp_client::scrubbed_command(binary, &["CHROMATE_BROWSER"]);
        command
            .args(["mcp", "--http", "127.0.0.1:0", "--node", name])
            .args(args)
            .env("TMPDIR", dir.path())
            .env("CHROMATE_RUNTIME_DIR", dir.path().join("runtime"))
            .env("CHROMATE_MCP_ARTIFACTS_DIR", &artifacts)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn()?;
        let Some(stderr) = child.stderr.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("no stderr pipe"));
        };
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(port) = line
                    .split("http://127.0.0.1:")
                    .nth(1)
                    .and_then(|rest| rest.split('/').next())
                    .and_then(|port| port.parse::<u16>().ok())
                {
                    let _ = tx.send(port);
                }
                if let Ok(mut lines) = kept.lock() {
                    lines.push(line);
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(30));
        let mut node = HttpNode {
            child,
            port: 0,
            name: name.to_owned(),
            stderr: lines,
            _dir: dir,
        };
        match port {
            Ok(port) => {
                node.port = port;
                Ok(node)
            }
            Err(_) => Err(std::io::Error::other(format!(
                "chromate mcp --http --node {name} printed no address in 30 s: {}",
                node.stderr_text()
            ))),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`, for an nginx upstream.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr
            .lock()
            .map(|lines| lines.join("\n"))
            .unwrap_or_default()
    }

    /// SIGKILL by PID (a crash: no session is ended), then reaped.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM by PID, then the exit status (15 s at most, then SIGKILL).
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(status);
        }
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on the PID of our own child, not reaped yet.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        None
    }
}

impl Drop for HttpNode {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.kill();
        }
    }
}

/// A port free on loopback now.
fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

/// The fixture origin `tests/clients/agents.py` drives: `/login?user=NAME` sets the cookie
/// `user=NAME`; `/whoami` prints the `Cookie` header it received, as `cookie [<header>]`.
pub fn agents_fixture() -> std::io::Result<crate::FixtureServer> {
    let fixture = crate::FixtureServer::start_detached()?;
    fixture.route("/login", |request| {
        let user = request.query_param("user").unwrap_or_default();
        crate::Response::html(format!("<title>{user}</title><h1>logged in as {user}</h1>"))
            .header("Set-Cookie", format!("user={user}; Path=/"))
    });
    fixture.route("/whoami", |request| {
        let cookie = request.header("cookie").unwrap_or("none").to_owned();
        crate::Response::html(format!("<title>whoami</title><h1>cookie [{cookie}]</h1>"))
    });
    Ok(fixture)
}

/// A run of `tests/clients/agents.py`: its agents on `endpoint`, each a real MCP client. Its
/// process is killed by PID when dropped.
pub struct Agents {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Agents {
    /// Starts `count` agents on `endpoint` with the bearer `token` against the fixture
    /// `origin` ([`agents_fixture`]).
    pub fn start(
        endpoint: &str,
        token: &str,
        origin: &str,
        count: usize,
    ) -> std::io::Result<Agents> {
        Agents::start_rounds(endpoint, token, origin, count, 0)
    }

    /// [`Agents::start`], each agent repeating navigate, eval and snapshot `rounds` more times
    /// (the bench's).
    pub fn start_rounds(
        endpoint: &str,
        token: &str,
        origin: &str,
        count: usize,
        rounds: usize,
    ) -> std::io::Result<Agents> {
        let python = crate::python::venv_python();
        if !python.is_file() {
            return Err(std::io::Error::other(format!(
                "{} is missing: run .ci/setup.sh all",
                python.display()
            )));
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/agents.py");
        // From `/`: from the repository root, `import mcp` would find its mcp/ folder.
        let mut child = Command::new(&python)
            .arg(&script)
            .current_dir("/")
            .env("ENDPOINT", endpoint)
            .env("TOKEN", token)
            .env("FIXTURE_ORIGIN", origin)
            .env("AGENTS", count.to_string())
            .env("ROUNDS", rounds.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("no pipes to the agents"));
        };
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let errors = Arc::new(Mutex::new(String::new()));
        let kept = errors.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut text) = kept.lock() {
                    // The last lines are enough to say what failed.
                    if text.len() > 16_384 {
                        text.clear();
                        text.push_str("[earlier lines dropped]\n");
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
            }
        });
        Ok(Agents {
            child,
            lines,
            stderr: errors,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (`within` at most) for the line `<tag> <json>`; the JSON, or why none came.
    pub fn wait_for(&mut self, tag: &str, within: Duration) -> Result<serde_json::Value, String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(json) = line
                        .strip_prefix(tag)
                        .and_then(|rest| rest.strip_prefix(' '))
                    {
                        return serde_json::from_str(json).map_err(|err| format!("{tag}: {err}"));
                    }
                }
                Err(err) => {
                    return Err(format!(
                        "no {tag} line from the agents ({err}); their stderr: {}",
                        self.stderr
                            .lock()
                            .map(|text| text.clone())
                            .unwrap_or_default()
                    ))
                }
            }
        }
    }

    /// Lets the agents go on past `READY`.
    pub fn go(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        let Some(stdin) = self.child.stdin.as_mut() else {
            return Err(std::io::Error::other("the agents' stdin is closed"));
        };
        stdin.write_all(b"go\n")?;
        stdin.flush()
    }

    /// Waits (`within` at most) for the script to exit; its status.
    pub fn wait(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Agents {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
