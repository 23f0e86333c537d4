//! Unit tests of the websocket URL handling: what is connected to, what the handshake asks for,
//! and what messages show of a pool's secrets.

use super::{parse_ws_url, redact_userinfo};

#[test]
fn a_pool_url_keeps_its_query_and_moves_userinfo_out_of_the_request() {
    let url = parse_ws_url("wss://ann:s3cret@pool.example/chromium?token=abc&region=eu").unwrap();
    assert!(url.tls);
    assert_eq!((url.host.as_str(), url.port), ("pool.example", 443));
    assert_eq!(
        url.request_url,
        "wss://pool.example/chromium?token=abc&region=eu"
    );
    assert_eq!(url.userinfo.as_deref(), Some("ann:s3cret"));

    let url = parse_ws_url("ws://127.0.0.1:9222/devtools/browser/x").unwrap();
    assert!(!url.tls);
    assert_eq!((url.host.as_str(), url.port), ("127.0.0.1", 9222));
    assert_eq!(url.userinfo, None);

    let url = parse_ws_url("wss://[::1]:9443?token=t").unwrap();
    assert_eq!((url.host.as_str(), url.port), ("[::1]", 9443));
    assert_eq!(url.request_url, "wss://[::1]:9443/?token=t");

    assert!(parse_ws_url("wss://pool.example:notaport/").is_err());
    assert!(parse_ws_url("wss:///path").is_err());
    assert!(parse_ws_url("https://pool.example/").is_err());
}

#[test]
fn messages_never_show_a_token_or_a_password() {
    assert_eq!(
        redact_userinfo("wss://ann:s3cret@pool.example/chromium?token=abc"),
        "wss://***@pool.example/chromium?***"
    );
    assert_eq!(
        redact_userinfo("ws://127.0.0.1:9222/devtools/browser/x"),
        "ws://127.0.0.1:9222/devtools/browser/x"
    );
    assert_eq!(
        redact_userinfo("wss://pool.example?token=abc"),
        "wss://pool.example?***"
    );
}

#[test]
fn an_http_endpoint_keeps_its_query_with_or_without_a_slash() {
    use super::parse_http_url;
    for endpoint in [
        "http://127.0.0.1:3000?token=abc",
        "http://127.0.0.1:3000/?token=abc",
    ] {
        let url = parse_http_url(endpoint).unwrap();
        assert_eq!(url.host_port, "127.0.0.1:3000", "{endpoint}");
        assert_eq!(url.path, "", "{endpoint}");
        assert_eq!(url.query.as_deref(), Some("token=abc"), "{endpoint}");
    }
    let url = parse_http_url("http://ann:pw@pool.example/base/").unwrap();
    assert_eq!(
        (
            url.host_port.as_str(),
            url.path.as_str(),
            url.userinfo.as_deref()
        ),
        ("pool.example:80", "/base", Some("ann:pw"))
    );
    assert_eq!(url.query, None);
    assert!(parse_http_url("http://127.0.0.1:port?token=abc").is_err());
    assert!(parse_http_url("http://?token=abc").is_err());
    assert!(parse_http_url("http://:3000").is_err());
}

#[test]
fn the_token_goes_along_to_the_websocket_url_a_pool_answers() {
    use super::carry_query;
    assert_eq!(
        carry_query("ws://127.0.0.1:3000", Some("token=abc")),
        "ws://127.0.0.1:3000/?token=abc"
    );
    assert_eq!(
        carry_query("ws://127.0.0.1:9222/devtools/browser/x", Some("token=abc")),
        "ws://127.0.0.1:9222/devtools/browser/x?token=abc"
    );
    assert_eq!(
        carry_query("ws://pool/x?token=own", Some("token=abc")),
        "ws://pool/x?token=own"
    );
    assert_eq!(carry_query("ws://pool/x", None), "ws://pool/x");
}

#[test]
fn http_responses_are_read_by_length_chunked_or_to_the_end() {
    use super::parse_http_response;
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3;x=y\r\n 1}\r\n0\r\n\r\n";
    let response = parse_http_response(chunked, false).unwrap().unwrap();
    assert_eq!(
        (response.status, response.body.as_str()),
        (200, "{\"a\": 1}")
    );
    // Not all there yet: more is awaited, or it is an error once the peer closed.
    let cut = &chunked[..chunked.len() - 5];
    assert_eq!(parse_http_response(cut, false).unwrap(), None);
    assert!(parse_http_response(cut, true).is_err());

    let refused =
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nfull";
    let response = parse_http_response(refused, false).unwrap().unwrap();
    assert_eq!(
        (
            response.status,
            response.retry_after.as_deref(),
            response.body.as_str()
        ),
        (429, Some("7"), "full")
    );
    let to_end = b"HTTP/1.0 401 Unauthorized\r\n\r\nBad token";
    assert_eq!(parse_http_response(to_end, false).unwrap(), None);
    let response = parse_http_response(to_end, true).unwrap().unwrap();
    assert_eq!(
        (response.status, response.body.as_str()),
        (401, "Bad token")
    );
    assert!(parse_http_response(b"SSH-2.0-x\r\n\r\n", true).is_err());
    assert!(parse_http_response(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        true
    )
    .is_err());
    // A chunk whose size is too small for its data is an error, not a body cut wrong.
    assert!(parse_http_response(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
        false
    )
    .is_err());
}

#[test]
fn a_refusal_says_what_the_pool_said() {
    use super::refusal;
    let text = refusal(401, None, "Bad or missing authentication.");
    assert!(
        text.contains("401") && text.contains("refused the token"),
        "{text}"
    );
    assert!(text.contains("Bad or missing authentication."), "{text}");
    let text = refusal(429, Some("12"), "Too many requests");
    assert!(
        text.contains("pool is full") && text.contains("retry after 12 s"),
        "{text}"
    );
    assert_eq!(refusal(502, None, "  "), "HTTP 502");
}

#[test]
fn secrets_are_redacted_from_every_message() {
    use super::redact_secrets;
    let endpoint = "http://ann:pa55word@127.0.0.1:3000/?token=s3cr3t&launch=x";
    let text = redact_secrets(
        "ws://127.0.0.1:3000/?token=s3cr3t said pa55word and s3cr3t, TOKEN=other&y",
        endpoint,
    );
    assert!(
        !text.contains("s3cr3t") && !text.contains("pa55word") && !text.contains("other"),
        "{text}"
    );
    assert!(
        text.contains("token=***") && text.contains("TOKEN=***&y"),
        "{text}"
    );
}

/// A loopback server that answers each connection it accepts with the next of `replies`
/// (after reading the request head) and closes it; the requests it read come back in order.
async fn answering(replies: Vec<&'static str>) -> (u16, tokio::task::JoinHandle<Vec<String>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let task = tokio::spawn(async move {
        let mut requests = Vec::new();
        for reply in replies {
            let Ok((mut stream, _)) = listener.accept().await else {
                break;
            };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match stream.read(&mut byte).await {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            requests.push(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(reply.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
        requests
    });
    (port, task)
}

#[tokio::test]
async fn a_full_pool_on_the_handshake_says_when_to_retry_and_not_the_token() {
    let (port, server) = answering(vec![
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 34\r\n\r\nqueue full for token=s3cretTOKEN99",
    ])
    .await;
    let endpoint = format!("ws://127.0.0.1:{port}/chromium?token=s3cretTOKEN99");
    let err = super::connect_websocket(&endpoint, &super::ConnectOptions::default())
        .await
        .err()
        .expect("a refusal");
    let text = err.to_string();
    assert!(
        text.contains("HTTP 429")
            && text.contains("retry after 7 s")
            && text.contains("queue full"),
        "{text}"
    );
    assert!(!text.contains("s3cretTOKEN99"), "{text}");
    let requests = server.await.expect("the server task");
    assert!(
        requests[0].starts_with("GET /chromium?token=s3cretTOKEN99 HTTP/1.1"),
        "{requests:?}"
    );
}

#[tokio::test]
async fn json_version_sends_the_query_and_header_and_reads_a_chunked_answer_or_a_refusal() {
    let (port, server) = answering(vec![
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\n\r\nbad token!!!",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nf\r\n{\"webSocketDebu\r\n1a\r\nggerUrl\":\"ws://127.0.0.1:1\r\n2\r\n\"}\r\n0\r\n\r\n",
    ])
    .await;
    let options = super::ConnectOptions {
        authorization: Some("Bearer hdrTOKEN42".into()),
        ..super::ConnectOptions::default()
    };
    let endpoint = format!("http://127.0.0.1:{port}/?token=qTOKEN77");
    let err = super::connect_websocket(&endpoint, &options)
        .await
        .err()
        .expect("a refusal");
    let text = err.to_string();
    assert!(
        text.contains("/json/version: HTTP 401") && text.contains("bad token"),
        "{text}"
    );
    assert!(!text.contains("qTOKEN77"), "{text}");
    // The chunked answer is read whole; its URL gets the token, and port 1 refuses.
    let err = super::connect_websocket(&endpoint, &options)
        .await
        .err()
        .expect("nothing listens on port 1");
    let text = err.to_string();
    assert!(
        text.contains("refused") && !text.contains("qTOKEN77"),
        "{text}"
    );
    let requests = server.await.expect("the server task");
    for request in &requests {
        assert!(
            request.starts_with("GET /json/version?token=qTOKEN77 HTTP/1.1"),
            "{request}"
        );
        assert!(
            request.contains("Authorization: Bearer hdrTOKEN42\r\n"),
            "{request}"
        );
    }
    assert_eq!(requests.len(), 2);
}
