//! HTTP tests: the accept loop under abuse: connections that never send their headers, the
//! connection cap, a flood of half-open connections, running out of descriptors.

use super::*;

/// Opens `count` connections to the server; all but every third send half a request head (the
/// others send nothing). Returns them open.
async fn half_open_connections(port: u16, count: usize) -> Vec<tokio::net::TcpStream> {
    let mut streams = Vec::new();
    for n in 0..count {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        if n % 3 != 0 {
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
                .await
                .unwrap();
        }
        streams.push(stream);
    }
    streams
}

/// What each connection read until the server closed it; fails if one stays open `within`.
async fn read_until_closed(streams: Vec<tokio::net::TcpStream>, within: Duration) -> Vec<String> {
    let reads = streams.into_iter().map(|mut stream| async move {
        let mut raw = Vec::new();
        // A reset is a close too.
        let _ = stream.read_to_end(&mut raw).await;
        String::from_utf8_lossy(&raw).into_owned()
    });
    tokio::time::timeout(within, futures::future::join_all(reads))
        .await
        .expect("a connection that never sent its headers was still open")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_send_their_headers_are_closed_and_the_cap_answers_503() {
    let server = HttpServer::start_with(&["--http", "127.0.0.1:0", "--no-auth"], &[], |command| {
        command
            .env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "500")
            .env("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", "40");
    });
    let port = server.port;
    let streams = half_open_connections(port, 60).await;
    let outcomes = read_until_closed(streams, Duration::from_secs(30)).await;
    // Connections still sending their headers are never refused: the oldest are evicted to
    // make room for newer ones, the rest closed after the header timeout, all without a word.
    assert!(
        outcomes.iter().all(String::is_empty),
        "an answer to a half-open connection: {outcomes:?}"
    );
    // Established connections (headers complete, the body never sent) fill the cap: one more
    // is answered 503 at once.
    let mut established = Vec::new();
    for _ in 0..40 {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\
                  Expect: 100-continue\r\n\r\n",
            )
            .await
            .unwrap();
        // The server asks for the body once it handles the request: the headers are complete.
        let mut continued = Vec::new();
        while !continued.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "{continued:?}");
            continued.push(byte[0]);
        }
        assert!(continued.starts_with(b"HTTP/1.1 100"), "{continued:?}");
        established.push(stream);
    }
    let over = read_until_closed(half_open_connections(port, 1).await, DEADLINE).await;
    assert!(
        over[0].starts_with("HTTP/1.1 503") && over[0].contains("Retry-After: 1"),
        "{over:?}"
    );
    drop(established);
    // The server still answers a client that sends its request.
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let answer = loop {
        // The 40 dropped connections close on the server's side as it notices.
        let answer = http(port, "POST", &[ACCEPT, JSON], &init).await;
        if answer.status != 503 {
            break answer;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(answer.status, 200, "{answer:?}");
    let lines = server.stderr.lock().unwrap().len();
    assert!(lines <= 4, "stderr: {}", server.stderr_text());
}

/// A flood of connections that never finish their headers, more than the cap, held open: an
/// authorized client is still served, and the oldest of the flood were closed to make room
/// (docs/mcp.md#streamable-http, "Connections").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_half_open_connections_does_not_lock_out_an_authorized_client() {
    use std::io::{Read, Write};
    let server = HttpServer::start_with(
        &["--http", "127.0.0.1:0", "--auth-token", "flood-test-token"],
        &[],
        |command| {
            command
                // Long enough that no flood connection is closed by the timeout meanwhile.
                .env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "600000")
                .env("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", "40");
        },
    );
    let port = server.port;
    let mut flood = Vec::new();
    for _ in 0..60 {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"POST /mcp HTT").unwrap();
        flood.push(stream);
    }
    // The server accepts in order: by the time it accepts this client, it has taken all 60.
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let bearer = ("Authorization", "Bearer flood-test-token");
    let answer = http(port, "POST", &[ACCEPT, JSON, bearer], &init).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.header("mcp-session-id").is_some(), "{answer:?}");
    // The oldest of the flood was evicted, closed without an answer.
    let mut oldest = flood.remove(0);
    oldest.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut raw = Vec::new();
    let _ = oldest.read_to_end(&mut raw);
    assert!(raw.is_empty(), "{}", String::from_utf8_lossy(&raw));
    drop(oldest);
    for stream in flood {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_descriptors_the_server_pauses_accepts_logs_one_line_and_recovers() {
    let server = HttpServer::start_with(&["--http", "127.0.0.1:0", "--no-auth"], &[], |command| {
        use std::os::unix::process::CommandExt;
        command
            .env("CHROMATE_MCP_HTTP_HEADER_TIMEOUT_MS", "1000")
            // Above the descriptor limit below, so accept itself fails.
            .env("CHROMATE_MCP_HTTP_MAX_CONNECTIONS", "10000");
        #[allow(unsafe_code)]
        // SAFETY: setrlimit is async-signal-safe; the closure touches only its own stack.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    let port = server.port;
    let streams = half_open_connections(port, 120).await;
    // The kernel queues what the server cannot accept; the server runs out of descriptors.
    server.wait_for_stderr("accept failed");
    // As header timeouts free descriptors, the queued connections are accepted and closed too.
    let outcomes = read_until_closed(streams, Duration::from_secs(45)).await;
    assert_eq!(outcomes.len(), 120);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();
    let answer = http(port, "POST", &[ACCEPT, JSON], &init).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let stderr = server.stderr_text();
    let failures = stderr.matches("accept failed").count();
    assert!(
        (1..=2).contains(&failures),
        "{failures} lines about failed accepts: {}",
        stderr.chars().take(2000).collect::<String>()
    );
    assert!(stderr.contains("Too many open files"), "{stderr}");
}
