//! The retry schedule of a capture's navigation: a load that times out or fails with a
//! `net::ERR_*` is tried twice more, after 500 ms and then 1 s, before its error surfaces; the
//! error's hint then says so, so an agent does not retry the same call.
//!
//! Owns: which navigation failures are transient ([`is_transient`]), the backoff (the only
//! waiting above the engine that is not a poll: a pause between two tries, cut short by
//! cancellation), and the attempts count in the error's detail. Everything else (a bad
//! selector, a blocked URL, a browser that went away) is reported at once, never retried.

use std::time::Duration;

use serde_json::json;

use chromate_command::call::{cancelled_error, Cancel};
use chromate_command::error::{hint_for, ToolError, ToolErrorCode};
use chromate_command::session::ToolSession;

/// The pauses before the second and the third try.
pub const BACKOFF: [Duration; 2] = [Duration::from_millis(500), Duration::from_millis(1000)];

/// How long leaving a failed try's error page for `about:blank` may take.
const LEAVE_ERROR_PAGE: Duration = Duration::from_secs(2);

/// Whether a failed navigation is worth another try: a timeout, or the network failing with
/// `net::ERR_*` — except an abort (a download, a 204) and a block (mocks, the origin policy),
/// which would fail the same way again.
pub fn is_transient(err: &chromate::Error) -> bool {
    match err {
        chromate::Error::TimeoutWaitingLoad { .. } => true,
        chromate::Error::CommandTimeout { method, .. } => method == "Page.navigate",
        chromate::Error::NavigationFailed { net_error, .. } => {
            net_error.starts_with("net::ERR_")
                && net_error != "net::ERR_ABORTED"
                && net_error != "net::ERR_BLOCKED_BY_CLIENT"
        }
        _ => false,
    }
}

/// Loads `url` in `page` under `wait_until`, retrying transient failures; returns how many
/// tries it took.
pub async fn navigate(
    session: &mut ToolSession,
    page: &chromate::Page,
    url: &str,
    wait_until: chromate::WaitUntil,
    timeout: Duration,
    cancel: &Cancel,
) -> Result<u32, ToolError> {
    let verb = "capture";
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        let outcome = cancel
            .run(page.goto(url, wait_until, timeout))
            .await
            .ok_or_else(|| cancelled_error(verb))?;
        let err = match outcome {
            Ok(_) => return Ok(attempt),
            Err(err) => err,
        };
        let backoff = BACKOFF.get(attempt as usize - 1).copied();
        match backoff {
            Some(pause) if is_transient(&err) && !page.is_closed() => {
                // Leave the network error page at once: Chromium may reload an error page on
                // its own (its auto-reload, one second after the failure), which would be a
                // try nobody counted. Only chromate's tries reach the server.
                let _ = cancel
                    .run(page.goto("about:blank", chromate::WaitUntil::Load, LEAVE_ERROR_PAGE))
                    .await;
                cancel
                    .run(tokio::time::sleep(pause))
                    .await
                    .ok_or_else(|| cancelled_error(verb))?;
            }
            _ => {
                return Err(final_error(
                    session, &err, url, wait_until, timeout, attempt,
                ))
            }
        }
    }
}

/// The error of the last try, its hint saying whether chromate already retried.
fn final_error(
    session: &mut ToolSession,
    err: &chromate::Error,
    url: &str,
    wait_until: chromate::WaitUntil,
    timeout: Duration,
    attempts: u32,
) -> ToolError {
    let verb = "capture";
    let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    let error = match err {
        // `Page.navigate` itself answering too late is the load not reached in time.
        chromate::Error::CommandTimeout { method, .. } if method == "Page.navigate" => {
            ToolError::new(
                ToolErrorCode::TimeoutWaitingLoad,
                format!(
                    "{verb}: timed out after {timeout_ms}ms waiting for {} of {url}",
                    wait_until.as_str()
                ),
            )
            .with_hint(hint_for(ToolErrorCode::TimeoutWaitingLoad))
            .with_detail(json!({ "state": wait_until.as_str(), "timeout": timeout_ms, "url": url }))
        }
        _ => session.engine_error(verb, err),
    };
    let retried = is_transient(err);
    let hint = if retried {
        format!(
            "chromate already tried this navigation {attempts} times (retried twice with backoff); \
             do not retry the same call: check that {url} answers, or raise timeout_ms"
        )
    } else {
        match &error.hint {
            Some(hint) => format!("{hint} (not retried: this failure would repeat)"),
            None => "not retried: this failure would repeat".to_owned(),
        }
    };
    error
        .with_hint(hint)
        .with_detail_key("attempts", json!(attempts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_and_network_errors_are_transient_blocks_and_aborts_are_not() {
        let failed = |net_error: &str| chromate::Error::NavigationFailed {
            url: "http://127.0.0.1:1/".into(),
            net_error: net_error.into(),
        };
        assert!(is_transient(&failed("net::ERR_CONNECTION_REFUSED")));
        assert!(is_transient(&failed("net::ERR_EMPTY_RESPONSE")));
        assert!(!is_transient(&failed("net::ERR_ABORTED")));
        assert!(!is_transient(&failed("net::ERR_BLOCKED_BY_CLIENT")));
        assert!(is_transient(&chromate::Error::TimeoutWaitingLoad {
            state: "networkidle".into(),
            url: "http://127.0.0.1:1/".into(),
            timeout: Duration::from_secs(1),
        }));
        assert!(!is_transient(&chromate::Error::invalid_argument(
            "bad selector"
        )));
        assert_eq!(BACKOFF[1], BACKOFF[0] * 2, "the backoff doubles");
    }
}
