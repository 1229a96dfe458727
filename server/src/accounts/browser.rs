//! What a browser sees from us during a login (the small pages our loopback listeners answer
//! with) and how long we wait for it.
use super::grant::Connected;
use std::time::Duration;

/// How long the loopback listener waits for the browser.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(600);

/// The page a browser sees when a login has finished, one way or the other.
pub fn outcome_page(outcome: &Result<Connected, String>) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let (status, body) = outcome_of(outcome);
    html(status, &body)
}

/// What that page says, and its HTTP status (the hosted server's callback route says the same).
pub fn outcome_of(outcome: &Result<Connected, String>) -> (u16, String) {
    match outcome {
        Ok(c) => {
            let pending = c.pending.as_deref().map(|p| format!("<p><strong>Not ready yet:</strong> {}</p>", escape(p))).unwrap_or_default();
            (200, format!("<h1>Connected</h1><p>{} is connected. You can close this tab and go back to Claude.</p>{pending}", c.display))
        }
        Err(e) => (400, format!("<h1>Not connected</h1><p>{}</p><p>Start the login again from Claude or with <code>vitals-mcp auth</code>.</p>", escape(e))),
    }
}

/// A small page of ours, in one style.
pub fn page(body: &str) -> String {
    format!("<!doctype html><meta charset=\"utf-8\"><title>vitals</title><body style=\"font-family:sans-serif;max-width:36em;margin:4em auto\">{body}</body>")
}

/// [`page`] as a loopback listener's answer.
pub fn html(status: u16, body: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let header = tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8").expect("a valid header");
    let nocache = tiny_http::Header::from_bytes("Cache-Control", "no-store").expect("a valid header");
    tiny_http::Response::from_string(page(body)).with_header(header).with_header(nocache).with_status_code(status)
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
