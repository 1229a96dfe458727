//! What a browser sees from us during a login (the small pages our loopback listeners answer
//! with) and how long we wait for it.
use super::grant::{ConnectError, Connected};
use std::time::Duration;

/// How long the loopback listener waits for the browser.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(600);

/// The switch that decides how a page is opened: unset, the user's default browser (the
/// `webbrowser` crate); `none`, never (the address is handed back instead); anything else, that
/// program with the address as its one argument. Tests set it everywhere the server runs, so no
/// real browser starts whatever the machine has (`BROWSER` alone is not enough: the crate falls
/// back to `xdg-open` and `x-www-browser` when it fails).
pub const BROWSER_ENV: &str = "VITALS_BROWSER";

/// Why no browser was opened: this server is told to open none, or the one it is told to open did
/// not start. Clone: every call that joins a login is told the same.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrowserError {
    #[error("{BROWSER_ENV}=none: this server opens no browser")]
    NoneWanted,
    #[error("the system's browser did not start: {0}")]
    System(String),
    #[error("{BROWSER_ENV}={program:?} could not be started: {why}")]
    Program { program: String, why: String },
}

/// Open `url` in a browser, as [`BROWSER_ENV`] in the server's settings says. The error says why none opened.
pub fn open(url: &str, config: &crate::config::Config) -> Result<(), BrowserError> {
    match config.var(BROWSER_ENV) {
        None => webbrowser::open(url).map_err(|e| BrowserError::System(e.to_string())),
        Some(v) if v.trim().eq_ignore_ascii_case("none") => Err(BrowserError::NoneWanted),
        Some(program) => std::process::Command::new(program.trim())
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|e| BrowserError::Program { program: program.to_string(), why: e.to_string() }),
    }
}

/// The page a browser sees when a login has finished, one way or the other.
pub fn outcome_page(outcome: &Result<Connected, ConnectError>) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let (status, body) = outcome_of(outcome);
    html(status, &body)
}

/// What that page says, and its HTTP status (the hosted server's callback route says the same).
pub fn outcome_of(outcome: &Result<Connected, ConnectError>) -> (u16, String) {
    match outcome {
        Ok(c) => {
            let pending = c.pending.as_deref().map(|p| format!("<p><strong>Not ready yet:</strong> {}</p>", escape(p))).unwrap_or_default();
            (200, format!("<h1>Connected</h1><p>{} is connected. You can close this tab and go back to Claude.</p>{pending}", c.display))
        }
        Err(e) => (
            400,
            format!("<h1>Not connected</h1><p>{}</p><p>Start the login again from Claude or with <code>vitals-mcp auth</code>.</p>", escape(&e.to_string())),
        ),
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
