//! One login in flight, whatever the provider's connection: for OAuth the authorize URL and a
//! one-use loopback listener at the registered redirect; for a pasted key or a session login a
//! page of ours on loopback with the fields to fill ([`super::page`]). The terminal login, the
//! in-chat login (`vitals_connect`) and the settings app all run this; the chat keeps a [`Links`]
//! registry so a retry or a second call finds the login already under way instead of starting a
//! rival one.
pub use super::app::{app_for_in, missing_app_help};
pub use super::browser::CALLBACK_WAIT;
use super::browser::{outcome_page, BrowserError};
pub use super::error::{ConnectError, LinkError};
pub use super::grant::Connected;
use super::oauth::{begin, Pending};
use super::{AppCredentials, Home};
use crate::catalog::ProviderSpec;
use crate::connection::{Connection, OAuthSpec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Turn the address the browser landed on into tokens saved into `home`'s store, then run the
/// provider's step after the exchange, if it has one.
pub async fn complete_in(
    p: &'static ProviderSpec,
    oauth: &OAuthSpec,
    app: &AppCredentials,
    pending: Pending,
    landed: &str,
    home: &Home,
) -> Result<Connected, ConnectError> {
    let code = pending.code_from(landed)?;
    let mut tokens = pending.finish(oauth, app, &code).await?;
    tokens.setup_pending = oauth.after_exchange.map(|a| a.what.to_string());
    super::grant::save_new_in(p, tokens, home).await
}

/// A browser login's failure at the callback or the token endpoint, its kind kept. (Here, not in
/// `error.rs`: `oauth.rs` reads the app credentials, whose errors are `error.rs`'s, so `error.rs`
/// naming `oauth.rs` would close a circle.)
impl From<super::oauth::AuthError> for ConnectError {
    fn from(e: super::oauth::AuthError) -> Self {
        use super::oauth::AuthError;
        let said = e.to_string();
        match e {
            AuthError::Denied(_) | AuthError::Token(_) => ConnectError::Refused(said),
            AuthError::StateMismatch | AuthError::NoCode => ConnectError::Input(said),
            AuthError::Unavailable(_) | AuthError::Limited { .. } => ConnectError::Unavailable(said),
            AuthError::Config(_) => ConnectError::Setup(said),
        }
    }
}

/// Where logins are saved, and where the browser comes back to.
#[derive(Clone, Debug)]
pub struct Place {
    pub home: Home,
    /// A hosted server's callback, served by the same process. None: this machine's loopback.
    pub hosted: Option<Hosted>,
}

/// Where a hosted server's browser comes back to after a provider's login.
#[derive(Clone, Debug)]
pub struct Hosted {
    /// The public address the callback hangs under, without a trailing `/`: the server's own
    /// (`https://host`) for several people, where the login's OAuth `state` says whose it is, so no
    /// URL an assistant sees names a person; `https://host/<secret>` for the one person of a secret path.
    pub base: String,
    /// The logins waiting for their browser, by state, shared by every person of the server.
    pub doors: Arc<Doors>,
    /// The server has people's own pages (`/me`), where a key or a password is typed.
    pub people: bool,
}

type Outcome = Option<Result<Connected, ConnectError>>;

/// A hosted server's callback for `provider` under `base` (the route `hosted` serves).
fn callback_url(base: &str, provider: &str) -> String {
    format!("{base}/callback/{provider}")
}

/// The hosted logins waiting for the browser, each behind the one value its provider sends back:
/// the OAuth `state` (kept as its SHA-256). It opens nothing but that login's landing, once, and
/// dies with the login (landed, failed or past [`CALLBACK_WAIT`]).
#[derive(Default)]
pub struct Doors {
    waiting: Mutex<HashMap<String, (Arc<Link>, Instant)>>,
}

impl std::fmt::Debug for Doors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Doors({} waiting)", self.waiting.lock().map(|w| w.len()).unwrap_or(0))
    }
}

impl Doors {
    fn open(&self, state: &str, link: Arc<Link>) {
        let mut w = self.waiting.lock().expect("doors lock");
        w.retain(|_, (l, at)| l.outcome().is_none() && at.elapsed() < CALLBACK_WAIT);
        w.insert(crate::secret::digest(state), (link, Instant::now()));
    }

    /// The browser came back to the callback route for `provider` at `landed`: the login its
    /// `state` names exchanges the code and saves into its own home. None: no login waits behind
    /// that state for that provider (an old, foreign or forged link), and nothing is said of whose.
    pub async fn land(&self, provider: &str, landed: &str) -> Option<Result<Connected, ConnectError>> {
        let query = landed.split_once('?').map(|(_, q)| q).unwrap_or("");
        let state = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "state").map(|(_, v)| v.into_owned())?;
        let link = {
            let mut w = self.waiting.lock().expect("doors lock");
            let key = crate::secret::digest(&state);
            match w.get(&key) {
                Some((l, at)) if l.provider.name == provider && at.elapsed() < CALLBACK_WAIT => w.remove(&key).map(|(l, _)| l)?,
                _ => return None,
            }
        };
        let landing = link.landing.lock().expect("landing lock").take()?;
        let outcome = complete_in(link.provider, &landing.oauth, &landing.app, landing.pending, landed, &landing.home).await;
        if let Err(e) = &outcome {
            tracing::info!("the {} login did not finish: {e}", link.provider.display);
        }
        let _ = landing.tx.send(Some(outcome.clone()));
        Some(outcome)
    }
}

/// What a hosted OAuth login keeps until the browser comes back to the server's callback route.
struct Landing {
    oauth: OAuthSpec,
    app: AppCredentials,
    pending: Pending,
    home: Home,
    tx: watch::Sender<Outcome>,
}

/// A login in flight.
pub struct Link {
    pub provider: &'static ProviderSpec,
    /// The authorize URL to open.
    pub url: String,
    /// Random, unguessable: the elicitation id, the 2026 `requestState` handle, and the path of our own page.
    pub id: String,
    done: watch::Receiver<Outcome>,
    /// A hosted OAuth login waiting for the callback route; None once landed (and for local logins).
    landing: Mutex<Option<Landing>>,
    /// The browser comes back to a hosted server (not to this computer).
    pub hosted: bool,
    /// How opening a browser at `url` went, the first time a call asked: a second call joins the
    /// login and answers from it, never claiming a window that did not open.
    opened: std::sync::OnceLock<Result<(), BrowserError>>,
    /// When the login started: what is left of its [`CALLBACK_WAIT`] is what a later call can say.
    started: Instant,
    /// A hosted OAuth login's `state`, the door its browser comes back through.
    state: Option<crate::secret::Secret>,
}

impl Link {
    /// Start a login as the provider's connection asks: for OAuth the app credentials, a fresh
    /// state and PKCE pair, and the listener on the redirect's port; for a key or a session our
    /// own page on loopback. Either then waits (up to [`CALLBACK_WAIT`]) and finishes on its own.
    /// The login is saved into `home` (this machine's user, with the binary's settings).
    pub fn start(p: &'static ProviderSpec, home: &Home) -> Result<Link, LinkError> {
        Self::start_at(p, &Place { home: home.clone(), hosted: None })
    }

    /// As [`Link::start`], saved into `place`'s home; on a hosted server the browser comes back to
    /// the server's own callback route ([`Links::land`]), and a key or a session cannot be typed
    /// in (our page is served on the server's loopback, which the person's browser cannot reach).
    pub fn start_at(p: &'static ProviderSpec, place: &Place) -> Result<Link, LinkError> {
        let (tx, done) = watch::channel(None);
        let id = oauth2::CsrfToken::new_random().secret().clone();
        if let Some(h) = &place.hosted {
            let Connection::OAuth(_) = p.connection else {
                // A server of several people has their own pages, where a key or a password is typed.
                if h.people {
                    return Err(LinkError::NoPage(format!(
                        "{} is not connected from the chat: its key or password is typed into your own page on this server, never into \
                         the chat. Open {}/me (sign in with your key, vk-…) and choose Connect beside {}.",
                        p.display, h.base, p.display
                    )));
                }
                return Err(LinkError::NoPage(format!(
                    "On this hosted server, {} cannot be connected from the chat: its login is typed into a page that only the server's own \
                     machine can open. Connect it with vitals on your own computer, then ask the server's operator to bring that \
                     configuration folder in with `vitals-mcp tenant import`.",
                    p.display
                )));
            };
            let (oauth, app) = super::app::app_for_in(p, &place.home)?;
            let redirect = callback_url(&h.base, p.name);
            let pending = super::oauth::begin_at(&oauth, &app, redirect, place.home.config()).map_err(|e| LinkError::Setup(e.to_string()))?;
            let url = pending.url.clone();
            let state = Some(crate::secret::Secret::new(pending.state()));
            let landing = Landing { oauth, app, pending, home: place.home.clone(), tx: tx.clone() };
            // A login nobody comes back to ends, as a local one does.
            tokio::spawn(async move {
                tokio::time::sleep(CALLBACK_WAIT).await;
                let late = ConnectError::TimedOut(format!("no browser came back within {} minutes; start the login again", CALLBACK_WAIT.as_secs() / 60));
                tx.send_if_modified(|o| o.is_none() && o.replace(Err(late)).is_none());
            });
            return Ok(Link {
                provider: p,
                url,
                id,
                done,
                landing: Mutex::new(Some(landing)),
                hosted: true,
                opened: Default::default(),
                started: Instant::now(),
                state,
            });
        }
        let url = match p.connection {
            Connection::OAuth(_) => Self::oauth(p, &place.home, tx)?,
            Connection::ApiKey(_) | Connection::Session(crate::connection::SessionSpec { login: Some(_), .. }) => super::page::serve(p, &id, &place.home, tx)?,
            Connection::Session(s) => return Err(LinkError::NoPage(super::grant::import_help(p, s.import))),
            Connection::None => return Err(LinkError::NoPage(format!("{} serves sample data only: there is no account to connect.", p.display))),
            Connection::File(f) => return Err(LinkError::NoPage(super::grant::file_help(p, &f))),
        };
        Ok(Link { provider: p, url, id, done, landing: Mutex::new(None), hosted: false, opened: Default::default(), started: Instant::now(), state: None })
    }

    fn oauth(p: &'static ProviderSpec, home: &Home, tx: watch::Sender<Outcome>) -> Result<String, LinkError> {
        let (oauth, app) = app_for_in(p, home)?;
        let pending = begin(&oauth, &app, home.config()).map_err(|e| LinkError::Setup(e.to_string()))?;
        let listener = Listener::bind(pending.redirect())?;
        let url = pending.url.clone();
        let (handle, home) = (tokio::runtime::Handle::current(), home.clone());
        tokio::task::spawn_blocking(move || {
            let outcome = match listener.wait(Instant::now() + CALLBACK_WAIT) {
                Ok(arrival) => {
                    let r = handle.block_on(complete_in(p, &oauth, &app, pending, &arrival.landed, &home));
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
        Ok(url)
    }

    /// Open a browser at `url` once per login (`open` is how), and say how that went to every
    /// call that asks, the first and the ones that join it.
    pub fn open_browser(&self, open: impl FnOnce(&str) -> Result<(), BrowserError>) -> Result<(), BrowserError> {
        self.opened.get_or_init(|| open(&self.url)).clone()
    }

    /// Whole minutes (rounded up) before the login stops waiting for its browser.
    pub fn minutes_left(&self) -> u64 {
        CALLBACK_WAIT.saturating_sub(self.started.elapsed()).as_secs().div_ceil(60)
    }

    /// The outcome if the login has finished, one way or the other.
    pub fn outcome(&self) -> Option<Result<Connected, ConnectError>> {
        self.done.borrow().clone()
    }

    /// Wait up to `limit` for the outcome. None: still waiting for the browser.
    pub async fn wait(&self, limit: Duration) -> Option<Result<Connected, ConnectError>> {
        let mut rx = self.done.clone();
        let _ = tokio::time::timeout(limit, rx.wait_for(Option::is_some)).await;
        self.outcome()
    }
}

/// The logins this process has under way, one per provider. A finished one is replaced by the next start.
pub struct Links {
    by_provider: Mutex<HashMap<&'static str, Arc<Link>>>,
    place: Place,
}

impl Links {
    /// The logins of this machine's user (`home`), with the browser coming back to this computer.
    pub fn local(home: &Home) -> Links {
        Links::at(Place { home: home.clone(), hosted: None })
    }

    /// The logins of a home other than this machine's user, or landing on a hosted server.
    pub fn at(place: Place) -> Links {
        Links { by_provider: Default::default(), place }
    }

    /// Where a hosted server's browser comes back to for `provider`; None locally.
    pub fn hosted_redirect(&self, provider: &str) -> Option<String> {
        self.place.hosted.as_ref().map(|h| callback_url(&h.base, provider))
    }

    /// The settings of the server these logins belong to (how a browser is opened, say).
    pub fn config(&self) -> &crate::config::Config {
        self.place.home.config()
    }

    /// Whether the browser comes back to a hosted server (then this server never opens a browser itself).
    pub fn hosted(&self) -> bool {
        self.place.hosted.is_some()
    }

    /// The login under way for `p`, or a new one.
    pub fn start(&self, p: &'static ProviderSpec) -> Result<Arc<Link>, LinkError> {
        let mut map = self.by_provider.lock().expect("links lock");
        if let Some(l) = map.get(p.name).filter(|l| l.outcome().is_none()) {
            return Ok(l.clone());
        }
        let l = Arc::new(Link::start_at(p, &self.place)?);
        if let (Some(h), Some(state)) = (&self.place.hosted, &l.state) {
            h.doors.open(state.expose(), l.clone());
        }
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
    pub fn bind(redirect: &str) -> Result<Listener, LinkError> {
        let r = url::Url::parse(redirect).map_err(|e| LinkError::Setup(format!("the redirect {redirect} is not a URL ({e})")))?;
        let host = r.host_str().unwrap_or_default();
        if host != "localhost" && host != "127.0.0.1" {
            return Err(LinkError::Setup(format!("the redirect {redirect} is not on this machine, so no listener can catch it; use `--manual`")));
        }
        let port = r.port().unwrap_or(80);
        let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(|e| {
            LinkError::Busy(format!("port {port} of the redirect {redirect} is busy ({e}); close what uses it (another login?) or use `--manual`"))
        })?;
        Ok(Listener { server, path: r.path().to_string(), redirect: redirect.to_string() })
    }

    /// Wait for the callback until `deadline`; anything else on the port gets a 404.
    pub fn wait(self, deadline: Instant) -> Result<Arrival, ConnectError> {
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
        Err(ConnectError::TimedOut(format!("no browser came back within {} minutes; start the login again", CALLBACK_WAIT.as_secs() / 60)))
    }
}

impl Arrival {
    /// Tell the browser how it went, in a small page. The listener closes when this returns.
    pub fn answer(self, outcome: &Result<Connected, ConnectError>) {
        let _ = self.request.respond(outcome_page(outcome));
    }
}
