//! What a browser sees from us during a login (the small pages our loopback listeners answer
//! with) and how long we wait for it.
use super::grant::Connected;
use std::time::Duration;

/// How long the loopback listener waits for the browser.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(600);

/// The switch that decides how a page is opened: unset, the user's default browser (the
/// `webbrowser` crate); `none`, never (the address is handed back instead); anything else, that
/// program with the address as its one argument. Tests set it everywhere the server runs, so no
/// real browser starts whatever the machine has (`BROWSER` alone is not enough: the crate falls
/// back to `xdg-open` and `x-www-browser` when it fails).
pub const BROWSER_ENV: &str = "VITALS_BROWSER";

/// Open `url` in a browser, as [`BROWSER_ENV`] in the server's settings says. The error says why none opened.
pub fn open(url: &str, config: &crate::config::Config) -> Result<(), String> {
    match config.var(BROWSER_ENV) {
        None => webbrowser::open(url).map_err(|e| format!("the system's browser did not start: {e}")),
        Some(v) if v.trim().eq_ignore_ascii_case("none") => Err(format!("{BROWSER_ENV}=none: this server opens no browser")),
        Some(program) => std::process::Command::new(program.trim())
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .map(drop)
            .map_err(|e| format!("{BROWSER_ENV}={program:?} could not be started: {e}")),
    }
}

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
