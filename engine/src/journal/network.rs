//! Network events → `request`, `response` and `requestfailed` summaries: URL, method, resource
//! type, status, MIME type, net error. Never bodies, headers or cookies.
//!
//! A redirect is journalled as the hop's `response` (3xx) followed by the next `request`. The
//! method of a response or failure comes from its request, remembered while it is in flight.

use serde_json::value::RawValue;

use super::{cut_url, Journal, LogData};
use crate::cdp::{decode_event, network};

/// One `Network.*` event of `page` → the entries it makes (zero, one, or two for a redirect).
pub(crate) fn network_event(
    journal: &Journal,
    page: &str,
    method: &str,
    params: &RawValue,
) -> Vec<LogData> {
    match method {
        "Network.requestWillBeSent" => request_will_be_sent(journal, page, params),
        "Network.responseReceived" => response_received(journal, page, params)
            .into_iter()
            .collect(),
        "Network.loadingFailed" => loading_failed(journal, page, params).into_iter().collect(),
        "Network.loadingFinished" => {
            if let Some(event) = decode_event::<network::EventLoadingFinished>(params) {
                journal.request(page, event.request_id.as_str(), true);
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn request_will_be_sent(journal: &Journal, page: &str, params: &RawValue) -> Vec<LogData> {
    let Some(p) = decode_event::<network::EventRequestWillBeSent>(params) else {
        return Vec::new();
    };
    let request_id = p.request_id.0;
    let mut res = Vec::new();
    if let Some(redirect) = p.redirect_response {
        let method = journal
            .request(page, &request_id, false)
            .map_or_else(|| p.request.method.clone(), |(_, method)| method);
        res.push(LogData::Response {
            url: cut_url(&redirect.url),
            method,
            status: status(redirect.status),
            mime_type: redirect.mime_type,
            mocked: false,
        });
    }
    let url = p.request.url + p.request.url_fragment.as_deref().unwrap_or("");
    journal.remember_request(page, &request_id, &url, &p.request.method);
    res.push(LogData::Request {
        url: cut_url(&url),
        method: p.request.method,
        resource_type: p
            .r#type
            .map_or_else(|| "Other".to_owned(), |kind| kind.as_str().to_owned()),
    });
    res
}

fn response_received(journal: &Journal, page: &str, params: &RawValue) -> Option<LogData> {
    let p: network::EventResponseReceived = decode_event(params)?;
    let request_id = p.request_id.as_str();
    let method = journal
        .request(page, request_id, false)
        .map_or_else(|| "GET".to_owned(), |(_, method)| method);
    Some(LogData::Response {
        url: cut_url(&p.response.url),
        method,
        status: status(p.response.status),
        mime_type: p.response.mime_type,
        mocked: matches!(
            journal.take_interception(request_id),
            Some(crate::policy::Interception::Mocked { .. })
        ),
    })
}

fn loading_failed(journal: &Journal, page: &str, params: &RawValue) -> Option<LogData> {
    let p: network::EventLoadingFailed = decode_event(params)?;
    let request_id = p.request_id.as_str();
    let (url, method) = journal
        .request(page, request_id, true)
        .unwrap_or_else(|| (String::new(), "GET".to_owned()));
    let blocked_by = match journal.take_interception(request_id) {
        Some(crate::policy::Interception::Blocked { by, .. }) => Some(by.as_str().to_owned()),
        _ => None,
    };
    // Chromium names a request failed through the Fetch domain `net::ERR_BLOCKED_BY_CLIENT.Inspector`.
    let failure = match (&blocked_by, p.error_text.strip_suffix(".Inspector")) {
        (Some(_), Some(plain)) => plain.to_owned(),
        _ => p.error_text,
    };
    Some(LogData::RequestFailed {
        url: cut_url(&url),
        method,
        failure,
        blocked_by,
    })
}

/// An HTTP status as journalled: 0 when out of the three-digit range.
fn status(status: i64) -> u16 {
    u16::try_from(status)
        .ok()
        .filter(|status| *status <= 999)
        .unwrap_or(0)
}
