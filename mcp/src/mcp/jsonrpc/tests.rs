//! Unit tests for framing, parsing limits, overflow literals and message classification.

use expect_test::{expect, Expect};
use serde_json::json;

use super::*;

fn decode(limit: usize, chunks: &[&[u8]]) -> String {
    let mut decoder = FrameDecoder::with_limit(limit);
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.push(chunk, &mut events);
    }
    decoder.finish(&mut events);
    events
        .iter()
        .map(|event| match event {
            FrameEvent::Frame(frame) => String::from_utf8_lossy(frame).into_owned(),
            FrameEvent::TooLarge => "<too large>".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn frames_split_on_newlines_dropping_cr_and_blank_lines() {
    assert_eq!(decode(100, &[b"a\r\n\n  \nb", b"c\nd"]), "a | bc | d");
}

#[test]
fn frame_at_the_limit_passes_and_one_byte_more_is_rejected_before_the_newline() {
    assert_eq!(decode(4, &[b"abcd\n"]), "abcd");
    assert_eq!(decode(4, &[b"abcd\r\n"]), "abcd");
    // The limit is detected without the newline ever arriving.
    let mut decoder = FrameDecoder::with_limit(4);
    let mut events = Vec::new();
    decoder.push(b"abcde", &mut events);
    assert_eq!(events, vec![FrameEvent::TooLarge]);
    // The rest of the frame is discarded, the next one is served.
    decoder.push(b"fgh\nok\n", &mut events);
    assert_eq!(
        events,
        vec![FrameEvent::TooLarge, FrameEvent::Frame(b"ok".to_vec())]
    );
    assert_eq!(decode(4, &[b"abcd\rx\nz\n"]), "<too large> | z");
}

fn check(frame: &str, expect: Expect) {
    let actual = match parse_frame(frame.as_bytes()) {
        Ok(incoming) => format!("{incoming:?}"),
        Err(error) => error.to_json().to_string(),
    };
    expect.assert_eq(&actual);
}

#[test]
fn classification() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        expect![[r#"Request { id: Number(1), method: "ping", params: None }"#]],
    );
    check(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#,
        expect![[
            r#"Notification { method: "notifications/initialized", params: Some(Object {}) }"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        expect!["Response { id: Number(1), result: Some(Object {}) }"],
    );
    check(
        r#"{"jsonrpc":"2.0","id":"a","method":"x","params":null}"#,
        expect![[r#"Request { id: String("a"), method: "x", params: None }"#]],
    );
}

#[test]
fn invalid_requests() {
    check(
        "[]",
        expect![[
            r#"{"error":{"code":-32600,"message":"invalid request: an empty batch"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        "3",
        expect![[
            r#"{"error":{"code":-32600,"message":"invalid request: not an object"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
        expect![[
            r#"{"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""},"id":7,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
        expect![[
            r#"{"error":{"code":-32600,"message":"invalid request: \"method\" must be a string"},"id":7,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        expect![[
            r#"{"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or an integer"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
        expect![[
            r#"{"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or an integer"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
}

#[test]
fn parse_errors() {
    check(
        "{",
        expect![[
            r#"{"error":{"code":-32700,"message":"parse error: EOF while parsing an object at line 1 column 1"},"id":null,"jsonrpc":"2.0"}"#
        ]],
    );
    let invalid_utf8 = parse_frame(b"{\"a\":\"\xff\"}").map_err(|e| (e.code, e.message));
    assert_eq!(
        invalid_utf8,
        Err((
            PARSE_ERROR,
            "parse error: invalid utf-8: invalid utf-8 sequence of 1 bytes from index 6".to_owned()
        ))
    );
}

#[test]
fn nesting_is_limited_to_128_levels() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse_json(nested(128).as_bytes()).is_ok());
    let nested_objects = format!("{}1{}", r#"{"a":"#.repeat(128), "}".repeat(128));
    assert!(parse_json(nested_objects.as_bytes()).is_ok());
    assert_eq!(
        parse_json(nested(129).as_bytes()),
        Err("nesting deeper than 128 levels".to_owned())
    );
    // Brackets inside strings do not count.
    let in_string = format!(r#"{{"a":"{}"}}"#, "[".repeat(500));
    assert!(parse_json(in_string.as_bytes()).is_ok());
}

#[test]
fn overflow_literals_parse_into_markers() {
    let value = parse_json(br#"{"a":1e400,"b":-1E+999,"c":"1e400","d":1.5e300,"e":[2e308]}"#);
    let value = value.unwrap_or_default();
    assert_eq!(overflow_literal(&value["a"]), Some("1e400"));
    assert_eq!(overflow_literal(&value["b"]), Some("-1E+999"));
    assert_eq!(overflow_literal(&value["c"]), None);
    assert_eq!(value["c"], json!("1e400"));
    assert_eq!(value["d"], json!(1.5e300));
    assert_eq!(overflow_literal(&value["e"][0]), Some("2e308"));
}

#[test]
fn escaped_quotes_do_not_confuse_the_scanner() {
    let value = parse_json(br#"{"a":"x\"1e400[","b":1e400}"#).unwrap_or_default();
    assert_eq!(value["a"], json!("x\"1e400["));
    assert_eq!(overflow_literal(&value["b"]), Some("1e400"));
}
