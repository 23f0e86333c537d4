//! Network events → `request`, `response` and `requestfailed` summaries: URL, method, resource
//! type, status, MIME type, net error. Never bodies, headers or cookies.
//!
//! A redirect is journalled as the hop's `response` (3xx) followed by the next `request`. The
//! method of a response or failure comes from its request, remembered while it is in flight.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{cut_url, Journal, LogData};

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
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct P {
                request_id: String,
            }
            if let Ok(p) = serde_json::from_str::<P>(params.get()) {
                journal.request(page, &p.request_id, true);
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    #[serde(default)]
    url: String,
    #[serde(default)]
    status: f64,
    #[serde(default)]
    mime_type: String,
}

fn request_will_be_sent(journal: &Journal, page: &str, params: &RawValue) -> Vec<LogData> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct P {
        request_id: String,
        request: Request,
        #[serde(rename = "type")]
        resource_type: Option<String>,
        redirect_response: Option<Response>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Request {
        url: String,
        url_fragment: Option<String>,
        method: String,
    }
    let Ok(p) = serde_json::from_str::<P>(params.get()) else {
        return Vec::new();
    };
    let mut res = Vec::new();
    if let Some(redirect) = p.redirect_response {
        let method = journal
            .request(page, &p.request_id, false)
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
    journal.remember_request(page, &p.request_id, &url, &p.request.method);
    res.push(LogData::Request {
        url: cut_url(&url),
        method: p.request.method,
        resource_type: p.resource_type.unwrap_or_else(|| "Other".to_owned()),
    });
    res
}

fn response_received(journal: &Journal, page: &str, params: &RawValue) -> Option<LogData> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct P {
        request_id: String,
        response: Response,
    }
    let p = serde_json::from_str::<P>(params.get()).ok()?;
    let method = journal
        .request(page, &p.request_id, false)
        .map_or_else(|| "GET".to_owned(), |(_, method)| method);
    Some(LogData::Response {
        url: cut_url(&p.response.url),
        method,
        status: status(p.response.status),
        mime_type: p.response.mime_type,
        mocked: matches!(
            journal.take_interception(&p.request_id),
            Some(crate::Interception::Mocked { .. })
        ),
    })
}

fn loading_failed(journal: &Journal, page: &str, params: &RawValue) -> Option<LogData> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct P {
        request_id: String,
        error_text: String,
    }
    let p = serde_json::from_str::<P>(params.get()).ok()?;
    let (url, method) = journal
        .request(page, &p.request_id, true)
        .unwrap_or_else(|| (String::new(), "GET".to_owned()));
    let blocked_by = match journal.take_interception(&p.request_id) {
        Some(crate::Interception::Blocked { by, .. }) => Some(by.as_str().to_owned()),
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

fn status(status: f64) -> u16 {
    if (0.0..=999.0).contains(&status) {
        status as u16
    } else {
        0
    }
}
