//! A Chromium that chromate did not start: launched here with `--remote-debugging-port=0`, for
//! the websocket-connect and protocol-drift tests. Killed by its PID (and its process group)
//! when dropped; its profile directory is removed.

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running external Chromium with a DevTools HTTP endpoint.
pub struct ExternalChromium {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl ExternalChromium {
    /// Starts `/usr/bin/chromium` (or `CHROMATE_BROWSER`) headless on an ephemeral port.
    pub fn start() -> std::io::Result<Self> {
        let executable = std::env::var("CHROMATE_BROWSER").unwrap_or_else(|_| "chromium".into());
        let profile = tempfile::Builder::new()
            .prefix("chromate-test-external-")
            .tempdir()?;
        let mut command = Command::new(executable);
        // Its own process group, so Drop ends every process of it; and a parent-death signal,
        // so a test process that is killed outright (no Drop) takes its browser along.
        command.process_group(0);
        #[allow(unsafe_code)]
        // SAFETY: runs in the forked child before exec and only calls prctl, which is
        // async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
                "about:blank",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            // Chromium's process-singleton directory goes in TMPDIR: in the profile, it is
            // removed with it, also after a kill, instead of staying in /tmp.
            .env("TMPDIR", profile.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        // Chromium prints "DevTools listening on ws://127.0.0.1:<port>/devtools/browser/<id>".
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| std::io::Error::other("no stderr"))?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent {
                    if let Some(rest) = line.split("ws://127.0.0.1:").nth(1) {
                        if let Some(port) =
                            rest.split('/').next().and_then(|p| p.parse::<u16>().ok())
                        {
                            let _ = tx.send(port);
                            sent = true;
                        }
                    }
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(port) => port,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::io::Error::other(
                    "chromium did not report its debugging port",
                ));
            }
        };
        Ok(Self {
            child,
            port,
            _profile: profile,
        })
    }

    /// The DevTools HTTP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The browser's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the browser process still runs.
    pub fn is_alive(&self) -> bool {
        crate::procs::is_alive(self.child.id())
    }

    /// GETs `path` from the DevTools HTTP endpoint and returns the body (read by its
    /// `Content-Length`: Chromium keeps the connection open).
    pub fn get(&self, path: &str) -> std::io::Result<String> {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        )?;
        let mut response = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            let n_read = stream.read(&mut chunk)?;
            response.extend_from_slice(&chunk[..n_read]);
            let text = String::from_utf8_lossy(&response);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head.lines().find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                });
                if length.is_some_and(|len| body.len() >= len) || n_read == 0 {
                    return Ok(body.to_string());
                }
            }
            if n_read == 0 {
                return Err(std::io::Error::other(
                    "connection closed before the response was complete",
                ));
            }
        }
    }
}

impl Drop for ExternalChromium {
    fn drop(&mut self) {
        let pid = self.child.id();
        let mut pids = crate::procs::descendants(pid);
        pids.push(pid);
        // The whole group first (renderers, zygotes), then any descendant that left it.
        crate::procs::kill_group(pid);
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in pids {
            crate::procs::kill(pid);
        }
    }
}
