//! One login in flight: the authorize URL for the user, a one-use loopback listener at the
//! registered redirect, and the exchange that finishes it. The terminal login and the in-chat
//! login (`vitals_connect`) both run this; the chat keeps a [`Links`] registry so a retry or a
//! second call finds the login already under way instead of starting a rival one.
use super::oauth::{begin, OAuthSpec, Pending};
use super::{default_dir, token_store, AppCredentials, Settings};
use crate::catalog::ProviderSpec;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long the loopback listener waits for the browser.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(600);

/// A login that finished: what the user granted, never a token.
#[derive(Debug, Clone)]
pub struct Connected {
    pub provider: &'static str,
    pub display: &'static str,
    pub scopes: Vec<String>,
    /// When access expires, RFC 3339.
    pub expires_at: Option<String>,
    /// Where the tokens went (keyring or file).
    pub saved_in: String,
}

impl Connected {
    pub fn summary(&self) -> String {
        format!(
            "Connected {}: scopes {}; access expires {}; tokens saved in the {}.",
            self.display,
            self.scopes.join(" "),
            self.expires_at.as_deref().unwrap_or("(not said)"),
            self.saved_in
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// No client ID/secret: the text says where to get them and the three ways to give them.
    #[error("{0}")]
    NoApp(String),
    #[error("{0}")]
    Setup(String),
}

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

/// The provider's OAuth endpoints and the app credentials to use now (re-read on every call).
pub fn app_for(p: &ProviderSpec) -> Result<(OAuthSpec, AppCredentials), LinkError> {
    let oauth = p.oauth.ok_or_else(|| LinkError::Setup(format!("{} does not connect with OAuth", p.display)))?;
    let env = p.app_env.expect("an OAuth provider names its app variables");
    let dir = default_dir().ok_or_else(|| LinkError::Setup("this machine has no configuration folder; set VITALS_CONFIG_DIR".into()))?;
    let app = Settings::at(&dir).app_credentials(p.name, &env).map_err(|e| LinkError::Setup(e.to_string()))?;
    Ok((oauth, app.ok_or_else(|| LinkError::NoApp(missing_app_help(p, &oauth)))?))
}

/// Turn the address the browser landed on into saved tokens.
pub async fn complete(p: &'static ProviderSpec, oauth: &OAuthSpec, app: &AppCredentials, pending: Pending, landed: &str) -> Result<Connected, String> {
    let code = pending.code_from(landed).map_err(|e| e.to_string())?;
    let tokens = pending.finish(oauth, app, &code).await.map_err(|e| e.to_string())?;
    let store = token_store()?;
    store.save(p.name, &tokens).map_err(|e| e.to_string())?;
    Ok(Connected {
        provider: p.name,
        display: p.display,
        scopes: tokens.scopes.clone(),
        expires_at: tokens.expires_at.and_then(|s| jiff::Timestamp::from_second(s).ok()).map(|t| t.to_string()),
        saved_in: store.describe(),
    })
}

/// A login in flight.
pub struct Link {
    pub provider: &'static ProviderSpec,
    /// The authorize URL to open.
    pub url: String,
    /// Random, unguessable: the elicitation id and the 2026 `requestState` handle.
    pub id: String,
    pub redirect: String,
    done: watch::Receiver<Option<Result<Connected, String>>>,
}

impl Link {
    /// Start a login: app credentials, a fresh state and PKCE pair, and the listener on the
    /// redirect's port, which then waits (up to [`CALLBACK_WAIT`]) and finishes on its own.
    pub fn start(p: &'static ProviderSpec) -> Result<Link, LinkError> {
        let (oauth, app) = app_for(p)?;
        let pending = begin(&oauth, &app).map_err(|e| LinkError::Setup(e.to_string()))?;
        let redirect = pending.redirect().to_string();
        let listener = Listener::bind(&redirect).map_err(LinkError::Setup)?;
        let (tx, done) = watch::channel(None);
        let url = pending.url.clone();
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let outcome = match listener.wait(Instant::now() + CALLBACK_WAIT) {
                Ok(arrival) => {
                    let r = handle.block_on(complete(p, &oauth, &app, pending, &arrival.landed));
                    arrival.answer(&r);
                    r
                }
                Err(e) => Err(e),
            };
            if let Err(e) = &outcome {
                tracing::info!("the {} login did not finish: {e}", p.display);
            }
            let _ = tx.send(Some(outcome));
        });
        Ok(Link { provider: p, url, id: oauth2::CsrfToken::new_random().secret().clone(), redirect, done })
    }

    /// The outcome if the login has finished, one way or the other.
    pub fn outcome(&self) -> Option<Result<Connected, String>> {
        self.done.borrow().clone()
    }

    /// Wait up to `limit` for the outcome. None: still waiting for the browser.
    pub async fn wait(&self, limit: Duration) -> Option<Result<Connected, String>> {
        let mut rx = self.done.clone();
        let _ = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
        self.outcome()
    }
}

/// The logins this process has under way, one per provider. A finished one is replaced by the next start.
#[derive(Default)]
pub struct Links {
    by_provider: Mutex<HashMap<&'static str, Arc<Link>>>,
}

impl Links {
    /// The login under way for `p`, or a new one.
    pub fn start(&self, p: &'static ProviderSpec) -> Result<Arc<Link>, LinkError> {
        let mut map = self.by_provider.lock().expect("links lock");
        if let Some(l) = map.get(p.name).filter(|l| l.outcome().is_none()) {
            return Ok(l.clone());
        }
        let l = Arc::new(Link::start(p)?);
        map.insert(p.name, l.clone());
        Ok(l)
    }

    /// The latest login of `provider`, finished or not (the settings app waits on the one it started).
    pub fn current(&self, provider: &str) -> Option<Arc<Link>> {
        self.by_provider.lock().expect("links lock").get(provider).cloned()
    }

    /// The login with this id (from an elicitation or a 2026 retry's `requestState`).
    pub fn by_id(&self, id: &str) -> Option<Arc<Link>> {
        self.by_provider.lock().expect("links lock").values().find(|l| l.id == id).cloned()
    }
}

/// A one-use HTTP listener on 127.0.0.1 at the redirect's port and path.
pub struct Listener {
    server: tiny_http::Server,
    path: String,
    redirect: String,
}

/// The browser's request to the callback, held open until the exchange has said how it went.
pub struct Arrival {
    request: tiny_http::Request,
    pub landed: String,
}

impl Listener {
    pub fn bind(redirect: &str) -> Result<Listener, String> {
        let r = url::Url::parse(redirect).map_err(|e| format!("the redirect {redirect} is not a URL ({e})"))?;
        let host = r.host_str().unwrap_or_default();
        if host != "localhost" && host != "127.0.0.1" {
            return Err(format!("the redirect {redirect} is not on this machine, so no listener can catch it; use `--manual`"));
        }
        let port = r.port().unwrap_or(80);
        let server = tiny_http::Server::http(("127.0.0.1", port))
            .map_err(|e| format!("port {port} of the redirect {redirect} is busy ({e}); close what uses it (another login?) or use `--manual`"))?;
        Ok(Listener { server, path: r.path().to_string(), redirect: redirect.to_string() })
    }

    /// Wait for the callback until `deadline`; anything else on the port gets a 404.
    pub fn wait(self, deadline: Instant) -> Result<Arrival, String> {
        while Instant::now() < deadline {
            let Ok(Some(req)) = self.server.recv_timeout(Duration::from_millis(250)) else {
                continue;
            };
            let path = req.url().to_string();
            if path.split('?').next() != Some(self.path.as_str()) {
                let _ = req.respond(tiny_http::Response::from_string("Not the login callback.").with_status_code(404));
                continue;
            }
            let query = path.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
            return Ok(Arrival { request: req, landed: format!("{}{query}", self.redirect) });
        }
        Err(format!("no browser came back within {} minutes; start the login again", CALLBACK_WAIT.as_secs() / 60))
    }
}

impl Arrival {
    /// Tell the browser how it went, in a small page. The listener closes when this returns.
    pub fn answer(self, outcome: &Result<Connected, String>) {
        let body = match outcome {
            Ok(c) => format!("<h1>Connected</h1><p>{} is connected. You can close this tab and go back to Claude.</p>", c.display),
            Err(e) => format!("<h1>Not connected</h1><p>{}</p><p>Start the login again from Claude or with <code>vitals-mcp auth</code>.</p>", escape(e)),
        };
        let page = format!(
            "<!doctype html><meta charset=\"utf-8\"><title>vitals</title><body style=\"font-family:sans-serif;max-width:36em;margin:4em auto\">{body}</body>"
        );
        let header = tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8").expect("a valid header");
        let status = if outcome.is_ok() { 200 } else { 400 };
        let _ = self.request.respond(tiny_http::Response::from_string(page).with_header(header).with_status_code(status));
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
