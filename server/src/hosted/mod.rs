//! `vitals-mcp serve --http`: MCP over streamable HTTP (rmcp's service on axum), for Claude on the
//! web and on phones. One person at a secret path (`/<secret>/mcp`), or several from `--tenants`:
//! with `--auth url` each at their connector URL `/u/<secret>/mcp`, with `--auth oauth` each
//! person's assistant at `/mcp` with a token the person allowed on their page (and the secret URLs
//! off). Every other path is a bare 404. Loopback only unless `--allow-remote`. `Origin` and `Host`
//! are checked on every request (DNS rebinding), a bearer token too when `--bearer-file` names one.
//! Every response carries the security headers ([`harden`]). SIGTERM lets the calls under way
//! finish before sessions close.
pub mod at_rest;
pub mod guard;
pub mod hashed;
pub mod mount;
pub mod oauth;
pub mod people;
pub mod tenants;

use crate::accounts::link::{Doors, Hosted, Links, Place};
use crate::accounts::Home;
use crate::engine::{Engine, Limits};
use crate::mcp::Vitals;
use crate::secret::Secret;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use mount::Mount;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tenants::{TenantId, Tenants};
use tokio_util::sync::CancellationToken;

/// Where `serve --http` listens when given no address: 8765 is Withings' callback, 9876 Oura's,
/// 8080 Polar's and 9878 WHOOP's.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8790";
/// The largest request body taken (a tool call is a few kB).
pub const MAX_BODY: usize = 1 << 20;
/// How long SIGTERM waits for calls under way before it closes the sessions.
pub const DRAIN: Duration = Duration::from_secs(60);
/// Tenants whose engines are kept in memory at once; the least recently asked is let go first.
pub const TENANTS_IN_MEMORY: usize = 64;
/// A tenant's memory cache is `VITALS_CACHE_MB` divided by this, so every tenant kept in memory
/// together holds at most `TENANTS_IN_MEMORY / TENANT_CACHE_SHARE` times `VITALS_CACHE_MB`.
pub const TENANT_CACHE_SHARE: usize = 8;

pub struct ServeOptions {
    pub addr: SocketAddr,
    pub path: Option<String>,
    pub allow_remote: bool,
    pub allow_origins: Vec<String>,
    pub bearer: Option<Secret>,
    pub stateless: bool,
    pub public_url: Option<url::Url>,
    pub tenants: Option<Tenants>,
    /// With `tenants`: anyone may make a tenant at `/join`, not only a holder of an invitation.
    pub open_signup: bool,
    /// With `tenants`: what opens a person's tenant.
    pub auth: AuthMode,
    pub limits: Limits,
    /// The settings the binary was started with, every tenant's engine alike.
    pub config: Arc<crate::config::Config>,
}

/// What opens a tenant of a server of several people (`--auth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AuthMode {
    /// The connector URL's secret (`/u/<secret>/mcp`): whoever has the URL reads.
    #[default]
    Url,
    /// MCP authorization: a token the person allowed on their page, at `/mcp`; no URL opens a tenant.
    OAuth,
    /// Both: a token, or a connector URL. A URL a person once gave an assistant keeps working after
    /// they revoke that assistant's tokens; chosen by name only (`--auth oauth-or-url`).
    OAuthOrUrl,
}

/// Why `serve --http` did not serve, by what the operator does next. Printed as it reads.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// An option's value cannot be used: the words name the option and what to send.
    #[error("{0}")]
    Argument(String),
    /// Options that cannot serve safely, or make no sense together: nothing listened.
    #[error("{0}")]
    Refused(String),
    /// The address could not be listened on, or serving failed (local I/O).
    #[error("{0}")]
    Io(String),
    /// No key for a folder whose secrets are sealed.
    #[error(transparent)]
    Vault(#[from] crate::accounts::vault::VaultError),
    #[error(transparent)]
    Folder(#[from] tenants::FolderError),
    #[error(transparent)]
    Mount(#[from] mount::MountError),
    #[error(transparent)]
    Bearer(#[from] guard::BearerError),
}

impl AuthMode {
    /// `--auth`'s value.
    pub fn parse(s: Option<&str>) -> Result<AuthMode, ServeError> {
        match s {
            None | Some("url") => Ok(AuthMode::Url),
            Some("oauth") => Ok(AuthMode::OAuth),
            Some("oauth-or-url") => Ok(AuthMode::OAuthOrUrl),
            Some(other) => Err(ServeError::Argument(format!(
                "`--auth` {other:?}: send url (the connector URL is the key, the default), oauth (MCP authorization at <public URL>/mcp; \
                 URLs open nothing) or oauth-or-url (both: a revoked assistant that kept the URL still reads)"
            ))),
        }
    }

    pub fn oauth(self) -> bool {
        self != AuthMode::Url
    }

    /// Whether a connector URL (`/u/<secret>/mcp`) opens a tenant.
    pub fn urls(self) -> bool {
        self != AuthMode::OAuth
    }
}

/// `[ADDR:]PORT` as a socket address (`8790`, `0.0.0.0:8790`, `[::1]:8790`).
pub fn parse_addr(s: &str) -> Result<SocketAddr, ServeError> {
    let full = if s.chars().all(|c| c.is_ascii_digit()) { format!("127.0.0.1:{s}") } else { s.to_string() };
    full.parse().map_err(|_| ServeError::Argument(format!("`--http` {s:?} is not [ADDR:]PORT; send e.g. 8790, 127.0.0.1:8790 or [::1]:8790")))
}

/// The public address, checked: `https://host[:port]` without a path.
pub fn parse_public_url(s: &str) -> Result<url::Url, ServeError> {
    let u = url::Url::parse(s.trim_end_matches('/'))
        .map_err(|e| ServeError::Argument(format!("`--public-url` {s:?} is not a URL ({e}); send e.g. https://vitals.example.com")))?;
    let local = matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if !(u.scheme() == "https" || (u.scheme() == "http" && local)) || u.host_str().is_none() || u.path() != "/" || u.query().is_some() {
        return Err(ServeError::Argument(format!(
            "`--public-url` {s:?} must be https://host[:port] with no path (http only for localhost); send e.g. https://vitals.example.com"
        )));
    }
    Ok(u)
}

/// One person's endpoint: their engine (cache, budgets), their logins, their MCP service.
struct Site {
    links: Arc<Links>,
    mcp: StreamableHttpService<Vitals, LocalSessionManager>,
    asked: Mutex<Instant>,
}

struct Server {
    opts: ServeOptions,
    /// The single person's endpoint (without `--tenants`).
    mount: Option<Mount>,
    own: Option<Arc<Site>>,
    tenants: Mutex<HashMap<TenantId, Arc<Site>>>,
    rmcp: StreamableHttpServerConfig,
    /// Tool calls (POSTs) still being answered: SIGTERM waits for them.
    in_flight: Arc<AtomicUsize>,
    /// The browsers of people on their pages (`people/`), in memory only.
    people: people::session::Sessions,
    /// The address people and clients reach this server at, without a trailing `/`.
    base_url: String,
    /// The authorization server, with `--auth oauth`.
    auth: Option<oauth::Auth>,
    /// Provider logins waiting for their browser at this server's callback, by OAuth `state`.
    doors: Arc<Doors>,
}

impl Server {
    /// The MCP endpoint every assistant is given under OAuth (the protected resource): it names no one.
    fn resource(&self) -> String {
        format!("{}/mcp", self.base_url)
    }

    /// A person's site. `callback_under` is the path their provider logins come back under: the
    /// server's own root for several people (the login's `state` says whose it is), the secret path
    /// for the one person of a mount.
    fn site(&self, home: Home, callback_under: &str, limits: Limits) -> Arc<Site> {
        let engine = Arc::new(Engine::in_home(home.clone(), self.opts.config.clone(), limits));
        let hosted = self.opts.public_url.as_ref().map(|u| Hosted {
            base: format!("{}{callback_under}", u.as_str().trim_end_matches('/')),
            doors: self.doors.clone(),
            people: self.opts.tenants.is_some(),
        });
        let links = Arc::new(Links::at(Place { home, hosted }));
        let (e, l) = (engine.clone(), links.clone());
        let mcp = StreamableHttpService::new(move || Ok(Vitals::with_links(e.clone(), l.clone())), Default::default(), self.rmcp.clone());
        Arc::new(Site { links, mcp, asked: Mutex::new(Instant::now()) })
    }

    /// The tenant's site, made on its first request; None when its folder is gone.
    fn tenant(&self, id: &TenantId) -> Option<Arc<Site>> {
        let t = self.opts.tenants.as_ref()?;
        let mut map = self.tenants.lock().expect("tenants lock");
        let Some(home) = t.home(id) else {
            map.remove(id);
            return None;
        };
        if !map.contains_key(id) && map.len() >= TENANTS_IN_MEMORY {
            let oldest = map.iter().min_by_key(|(_, s)| *s.asked.lock().expect("asked lock")).map(|(k, _)| k.clone());
            oldest.map(|k| map.remove(&k));
        }
        let site = map
            .entry(id.clone())
            .or_insert_with(|| {
                let limits = Limits { cache_bytes: self.opts.limits.cache_bytes / TENANT_CACHE_SHARE, ..self.opts.limits.clone() };
                self.site(home, "", limits)
            })
            .clone();
        *site.asked.lock().expect("asked lock") = Instant::now();
        Some(site)
    }

    /// Let a tenant's site go (its logins changed, or it was deleted): its next request makes it anew.
    fn drop_tenant(&self, id: &TenantId) {
        self.tenants.lock().expect("tenants lock").remove(id);
    }

    /// The tenant a connector URL's secret opens (with `--auth url`).
    fn tenant_of_url(&self, secret: &str) -> Option<Arc<Site>> {
        let id = hashed::tenant_of_url(self.opts.tenants.as_ref()?, secret)?;
        self.tenant(&id)
    }
}

/// Every route this server serves, for its mode, on axum's router; every other path (and a route
/// asked with a method it does not take) is a bare 404, and every answer is hardened.
fn router(server: Arc<Server>) -> axum::Router {
    use axum::routing::{any, get};
    let mut r: axum::Router<Arc<Server>> = axum::Router::new();
    match (&server.mount, &server.opts.tenants) {
        (Some(m), _) => {
            r = r.route(&format!("{}/mcp", m.base()), any(own_mcp)).route(&format!("{}/callback/{{provider}}", m.base()), get(callback));
        }
        (None, Some(_)) => {
            r = r.route("/callback/{provider}", get(callback)).merge(people::routes(server.opts.open_signup));
            if server.opts.auth.urls() {
                r = r.route("/u/{secret}/mcp", any(url_mcp));
            }
            if server.opts.auth.oauth() {
                r = r.route("/mcp", any(token_mcp)).merge(oauth::routes());
            }
        }
        (None, None) => unreachable!("a mount is made whenever there are no tenants"),
    }
    let https = https(&server);
    r.fallback(|| async { not_found() })
        .method_not_allowed_fallback(|| async { not_found() })
        .layer(axum::middleware::map_response(move |mut resp: Response| async move {
            harden(&mut resp, https);
            resp
        }))
        .with_state(server)
}

/// The one person's endpoint at the secret path (and `--bearer-file`'s token, when it names one).
async fn own_mcp(State(server): State<Arc<Server>>, req: Request) -> Response {
    if let Some(token) = &server.opts.bearer {
        if !guard::bearer_matches(req.headers().get(header::AUTHORIZATION).map(|v| v.as_bytes()), token) {
            return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")]).into_response();
        }
    }
    let site = server.own.clone().expect("a mount has its site");
    mcp(&server, &site, req).await
}

/// A tenant at its connector URL (`--auth url`); an unknown secret is a bare 404.
async fn url_mcp(State(server): State<Arc<Server>>, axum::extract::Path(secret): axum::extract::Path<String>, req: Request) -> Response {
    match server.tenant_of_url(&secret) {
        Some(site) => mcp(&server, &site, req).await,
        None => not_found(),
    }
}

/// A tenant opened by the token its person allowed (`--auth oauth`).
async fn token_mcp(State(server): State<Arc<Server>>, req: Request) -> Response {
    let auth = server.auth.as_ref().expect("/mcp is served with --auth oauth only");
    match oauth::tenant_of_request(&server, auth, &req).map(|t| server.tenant(&t)) {
        Ok(Some(site)) => mcp(&server, &site, req).await,
        Ok(None) => oauth::challenge(&server, Some("the token's person is gone")),
        Err(refused) => *refused,
    }
}

/// A 404 that tells a scanner nothing.
fn not_found() -> Response {
    StatusCode::NOT_FOUND.into_response()
}

/// A request for a site's MCP endpoint, counted while its answer streams (SIGTERM waits for it).
async fn mcp(server: &Server, site: &Site, req: Request) -> Response {
    let counted = req.method() == "POST";
    let done = counted.then(|| InFlight::enter(&server.in_flight));
    let resp = site.mcp.handle(req).await;
    // The answer streams after `handle` returns: the call is under way until its body ends, so
    // the guard rides in the body (in a closure that passes each frame through) and is dropped with it.
    resp.map(|b| match done {
        Some(d) => Body::new(http_body_util::BodyExt::map_frame(b, move |f| {
            let _ = &d;
            f
        })),
        None => Body::new(b),
    })
}

/// One call under way, until dropped.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(n: &Arc<AtomicUsize>) -> InFlight {
        n.fetch_add(1, Ordering::SeqCst);
        InFlight(n.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether people reach `server` over https (then its cookie is Secure and browsers are told to
/// keep to https).
fn https(server: &Server) -> bool {
    server.opts.public_url.as_ref().is_some_and(|u| u.scheme() == "https")
}

/// The headers every response carries, whatever route answered: no framing, no referrer (codes
/// and invitations travel in URLs), no sniffing, HSTS behind https, and a page with no CSP of its
/// own gets the strictest (no script, no style from elsewhere, no form, no frame).
pub(crate) fn harden(resp: &mut Response, https: bool) {
    use axum::http::HeaderValue;
    let h = resp.headers_mut();
    let html = h.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"));
    if html && !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        );
    }
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.entry(header::X_FRAME_OPTIONS).or_insert(HeaderValue::from_static("DENY"));
    if https {
        h.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static("max-age=31536000"));
    }
}

/// The browser back from a provider's login page: the login its `state` names, whoever's it is.
async fn callback(State(server): State<Arc<Server>>, axum::extract::Path(provider): axum::extract::Path<String>, req: Request) -> Response {
    let (doors, uri, people) = (&server.doors, req.uri().to_string(), server.opts.tenants.is_some());
    let provider = provider.as_str();
    // The login reads only the query (code, state): the host before it is a placeholder.
    let landed = format!("https://callback{uri}");
    // A person who started from their page gets a way back to it.
    let back = if people { "<p><a href=\"/me\">Back to your page</a></p>" } else { "" };
    let page = |status: StatusCode, body: String| {
        let html = crate::accounts::browser::page(&format!("{body}{back}"));
        (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], html).into_response()
    };
    match doors.land(provider, &landed).await {
        None => page(StatusCode::NOT_FOUND, "<h1>No login is waiting here</h1><p>Start the login again from Claude.</p>".into()),
        Some(outcome) => {
            let (status, body) = crate::accounts::browser::outcome_of(&outcome);
            page(StatusCode::from_u16(status).unwrap_or(StatusCode::OK), body)
        }
    }
}

/// Serve until `stop` resolves (SIGTERM, Ctrl-C), then let the calls under way finish (up to
/// [`DRAIN`]) before closing the sessions.
pub async fn serve(mut opts: ServeOptions, stop: impl std::future::Future<Output = ()> + Send + 'static) -> Result<(), ServeError> {
    refused(&opts)?;
    // Every tenant's home carries the operator's settings, whoever made the folder's handle.
    opts.tenants = opts.tenants.take().map(|t| t.with_config(opts.config.clone()));
    // Several people's logins are sealed under the operator's key; the folder is settled (and
    // checked to open under it) before anyone is answered, and held while this server runs.
    let _serving = settled(&opts)?;
    let listener = tokio::net::TcpListener::bind(opts.addr).await.map_err(|e| ServeError::Io(format!("cannot listen on {}: {e}", opts.addr)))?;
    let local = listener.local_addr().map_err(|e| ServeError::Io(e.to_string()))?;
    let cancel = CancellationToken::new();
    let rmcp = rmcp_config(&opts, local, &cancel);
    let mount = match &opts.tenants {
        Some(_) => None,
        None => Some(Mount::resolve(opts.path.as_deref(), crate::accounts::default_dir(&opts.config).as_deref())?),
    };
    let shown = opts.public_url.as_ref().map(|u| u.as_str().trim_end_matches('/').to_string()).unwrap_or_else(|| format!("http://{local}"));
    announce(&opts, mount.as_ref(), &shown, local);
    let mut server = Server {
        opts,
        mount,
        own: None,
        tenants: Mutex::new(HashMap::new()),
        rmcp,
        in_flight: Arc::new(AtomicUsize::new(0)),
        people: Default::default(),
        auth: None,
        base_url: shown,
        doors: Default::default(),
    };
    if let (true, Some(t)) = (server.opts.auth.oauth(), &server.opts.tenants) {
        let loopback = server.opts.public_url.as_ref().is_none_or(|u| matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")));
        server.auth = Some(oauth::Auth::in_tenants(t, loopback));
    }
    if let Some(m) = &server.mount {
        server.own = Some(server.site(Home::local(server.opts.config.clone()), m.base(), server.opts.limits.clone()));
    }
    until_stopped(Arc::new(server), listener, cancel, stop).await
}

/// Options that cannot serve safely or make no sense together, refused before anything listens.
fn refused(opts: &ServeOptions) -> Result<(), ServeError> {
    if !opts.addr.ip().is_loopback() && !opts.allow_remote {
        return Err(ServeError::Refused(format!(
            "refusing to listen on {}: it is reachable from other machines. Listen on loopback (127.0.0.1:{}) behind a TLS reverse proxy, \
             or add --allow-remote if TLS is terminated in front of this address",
            opts.addr,
            opts.addr.port()
        )));
    }
    if opts.tenants.is_some() && opts.path.is_some() {
        return Err(ServeError::Refused(
            "`--path` names one person's endpoint; with --tenants each person is served at their own connector URL: leave --path out".into(),
        ));
    }
    if opts.allow_remote && opts.public_url.is_none() {
        return Err(ServeError::Refused("--allow-remote needs --public-url https://<the host clients reach>: requests for any other Host are refused".into()));
    }
    if opts.auth.oauth() && opts.tenants.is_none() {
        return Err(ServeError::Refused("--auth oauth lets each person's assistant in with a token for their own tenant: it needs --tenants DIR".into()));
    }
    if opts.open_signup && opts.tenants.is_none() {
        return Err(ServeError::Refused("--open-signup lets people make their own tenant: it needs --tenants DIR".into()));
    }
    Ok(())
}

/// With tenants, their folder settled under the operator's key and held while this server runs.
fn settled(opts: &ServeOptions) -> Result<Option<at_rest::Serving>, ServeError> {
    Ok(match &opts.tenants {
        Some(t) => {
            let vault = t.vault.clone().ok_or(crate::accounts::vault::VaultError::Missing)?;
            let held = at_rest::Serving::take(t)?;
            let settled = at_rest::settle(t, &vault)?;
            for said in settled.said() {
                eprintln!("vitals-mcp: {said}.");
            }
            let grants = oauth::grants::Grants::in_dir(t.dir.join(".oauth"));
            for (old, new) in &settled.renamed {
                grants.rename_tenant(old, new).map_err(|e| ServeError::Io(e.to_string()))?;
            }
            Some(held)
        }
        None => None,
    })
}

/// rmcp's streamable HTTP service: the hosts and browser origins it answers (this server's own
/// origin, the public URL's, and those named), its body limit and session mode.
fn rmcp_config(opts: &ServeOptions, local: SocketAddr, cancel: &CancellationToken) -> StreamableHttpServerConfig {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if let Some(h) = opts.public_url.as_ref().and_then(|u| u.host_str()) {
        hosts.push(h.to_string());
    }
    // A page of this server's own origin is not a rebinding attack; any other browser origin must be named.
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].iter().map(|h| format!("http://{h}:{}", local.port())).collect();
    origins.extend(
        opts.public_url.as_ref().map(|u| format!("{}://{}:{}", u.scheme(), u.host_str().unwrap_or_default(), u.port_or_known_default().unwrap_or(443))),
    );
    origins.extend(opts.allow_origins.iter().cloned());
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY)
        .with_legacy_session_mode(!opts.stateless)
        .with_json_response(opts.stateless)
        .with_cancellation_token(cancel.child_token())
}

/// Where this server serves, said once on stderr (and a warning when others can reach it).
fn announce(opts: &ServeOptions, mount: Option<&Mount>, shown: &str, local: SocketAddr) {
    match (mount, &opts.tenants) {
        (Some(m), _) => eprintln!(
            "vitals-mcp: serving MCP at {shown}{} (path from {}). Anyone with this URL can read this account's data: do not share or log it.",
            m.path, m.from
        ),
        (None, Some(t)) => eprintln!(
            "vitals-mcp: serving the tenants of {} (secrets sealed under key {}) at {}; people sign in at {shown}/signin{}.",
            t.dir.display(),
            t.vault.as_ref().map(|v| v.id()).unwrap_or_default(),
            match opts.auth {
                AuthMode::Url => format!("{shown}/u/<connector URL secret>/mcp"),
                AuthMode::OAuth => format!("{shown}/mcp with MCP authorization (connector URLs open nothing)"),
                AuthMode::OAuthOrUrl => format!(
                    "{shown}/mcp with MCP authorization and at {shown}/u/<connector URL secret>/mcp (a revoked assistant that kept its URL still reads)"
                ),
            },
            if opts.open_signup {
                format!(" and anyone may join at {shown}/join")
            } else {
                ", and join with an invitation (`vitals-mcp tenant invite`)".into()
            }
        ),
        (None, None) => unreachable!("a mount is made whenever there are no tenants"),
    }
    if opts.allow_remote {
        eprintln!("vitals-mcp: WARNING: listening on {local}, reachable from other machines. Terminate TLS in front of it: this server speaks plain HTTP.");
    }
}

/// Serve until `stop` resolves, then drain the calls under way (up to [`DRAIN`]) and say how it ended.
async fn until_stopped(
    server: Arc<Server>,
    listener: tokio::net::TcpListener,
    cancel: CancellationToken,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let in_flight = server.in_flight.clone();
    let left = server.in_flight.clone();
    let app = router(server);
    let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        stop.await;
        let _ = stopping_tx.send(true);
        let start = Instant::now();
        while in_flight.load(Ordering::SeqCst) > 0 && start.elapsed() < DRAIN {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cancel.cancel();
    });
    let mut stopping = stopping;
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            let _ = stopping.wait_for(|s| *s).await;
        })
        .await
        .map_err(|e| ServeError::Io(e.to_string()))?;
    match left.load(Ordering::SeqCst) {
        0 => eprintln!("vitals-mcp: stopped; every call under way was answered."),
        n => eprintln!("vitals-mcp: stopped after {} s with {n} call(s) still unanswered.", DRAIN.as_secs()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Two logins at once (the settings app connecting two providers) each get their own loopback
    /// callback: no two providers' default redirects share a port, nor with `serve --http`'s default.
    #[test]
    fn every_default_redirect_has_a_port_of_its_own() {
        let mut ports = vec![super::DEFAULT_ADDR.rsplit(':').next().unwrap().to_string()];
        for s in crate::providers::specs() {
            if let Some(o) = s.connection.oauth() {
                let port = url::Url::parse(o.redirect).ok().and_then(|u| u.port()).map(|p| p.to_string());
                let port = port.unwrap_or_else(|| panic!("{}: a redirect with a port", s.name));
                assert!(!ports.contains(&port), "{}: port {port} is another's", s.name);
                ports.push(port);
            }
        }
        assert!(ports.len() >= 5, "{ports:?}");
    }
}
