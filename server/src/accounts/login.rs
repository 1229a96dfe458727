//! A login from a terminal: `vitals-mcp auth <provider>` (browser and loopback callback) or
//! `--manual` (print the URL, read the pasted redirect: for SSH and headless machines).
use super::oauth::{begin, OAuthSpec};
use super::{default_dir, FileStore, Settings, Tokens};
use crate::catalog::ProviderSpec;
use std::io::BufRead;
use std::time::{Duration, Instant};

/// How long the loopback listener waits for the browser.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(600);

/// Where to get app credentials and the three ways to give them, for a provider that has none.
pub fn missing_app_help(p: &ProviderSpec, oauth: &OAuthSpec) -> String {
    let env = p.app_env.expect("an OAuth provider names its app variables");
    let (redirect, _) = oauth.redirect();
    format!(
        "No {} app credentials are set. Create an app at {} with the redirect URI {redirect} (exactly), then give its client ID \
         and secret in one of three ways: the extension's settings in Claude Desktop; the vitals settings app; or \
         `vitals-mcp app {}` (reads the secret from standard input), or the variables {} and {}.",
        p.display, oauth.portal, p.name, env.client_id, env.client_secret
    )
}

pub struct Outcome {
    pub tokens: Tokens,
    pub saved_in: std::path::PathBuf,
}

/// Run the whole login and save the tokens. `manual` reads the redirect from standard input.
pub async fn login(p: &ProviderSpec, manual: bool) -> Result<Outcome, String> {
    let oauth = p.oauth.as_ref().ok_or_else(|| format!("{} does not use OAuth", p.display))?;
    let env = p.app_env.expect("an OAuth provider names its app variables");
    let dir = default_dir().ok_or("this machine has no configuration folder; set VITALS_CONFIG_DIR")?;
    let app = Settings::at(&dir).app_credentials(p.name, &env).map_err(|e| e.to_string())?.ok_or_else(|| missing_app_help(p, oauth))?;
    let pending = begin(oauth, &app).map_err(|e| e.to_string())?;
    let callback = if manual {
        println!("{}", pending.url);
        eprintln!("Open the address above in a browser, sign in to {}, and paste here the whole address the browser is sent to (it starts with {}):", p.display, pending.redirect());
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("reading the pasted address failed: {e}"))?;
        line
    } else {
        let redirect = pending.redirect().to_string();
        let url = pending.url.clone();
        tokio::task::spawn_blocking(move || wait_for_browser(&url, &redirect)).await.map_err(|e| e.to_string())??
    };
    let code = pending.code_from(&callback).map_err(|e| e.to_string())?;
    let tokens = pending.finish(oauth, &app, &code).await.map_err(|e| e.to_string())?;
    let store = FileStore::at(&dir);
    store.save(p.name, &tokens).map_err(|e| e.to_string())?;
    Ok(Outcome { tokens, saved_in: store.path() })
}

/// Listen on the redirect's loopback port, open the browser, and return the callback's address.
fn wait_for_browser(url: &str, redirect: &str) -> Result<String, String> {
    let r = url::Url::parse(redirect).map_err(|e| format!("the redirect {redirect} is not a URL ({e})"))?;
    let host = r.host_str().unwrap_or_default();
    if host != "localhost" && host != "127.0.0.1" {
        return Err(format!("the redirect {redirect} is not on this machine; use --manual"));
    }
    let port = r.port().unwrap_or(80);
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| format!("port {port} of the redirect is busy ({e}); close what uses it or use --manual"))?;
    if webbrowser::open(url).is_err() {
        eprintln!("No browser could be opened here. Open this address yourself (or run again with --manual):");
    } else {
        eprintln!("A browser window opened; if it did not, open this address:");
    }
    println!("{url}");
    let deadline = Instant::now() + CALLBACK_WAIT;
    while Instant::now() < deadline {
        let Ok(Some(req)) = server.recv_timeout(Duration::from_millis(500)) else { continue };
        let path = req.url().to_string();
        if !path.starts_with(r.path()) {
            let _ = req.respond(tiny_http::Response::from_string("Not the login callback.").with_status_code(404));
            continue;
        }
        let ok = !path.contains("error=");
        let page = if ok {
            "<!doctype html><title>vitals</title><h1>Connected</h1><p>You can close this tab and go back to Claude.</p>"
        } else {
            "<!doctype html><title>vitals</title><h1>Not connected</h1><p>The login was refused; the terminal says why.</p>"
        };
        let header = tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8").expect("a valid header");
        let _ = req.respond(tiny_http::Response::from_string(page).with_header(header));
        // One use: the listener closes with this function.
        return Ok(format!("{redirect}{}", path.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default()));
    }
    Err(format!("no browser came back within {} minutes; run the login again", CALLBACK_WAIT.as_secs() / 60))
}
