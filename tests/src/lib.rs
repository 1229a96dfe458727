//! `vitals-twin`: a local twin of each provider API, with the real quirks and injectable faults.
//! A library for the end-to-end suites and a binary so any client can be pointed at it.
pub mod apps_host;
pub mod built;
pub mod garmin;
pub mod garmin_connect;
pub mod google_health;
pub mod kinds;
pub mod latency;
pub mod oura;
pub mod polar;
pub mod traffic;
pub mod trip;
pub mod whoop;
pub mod wire;
pub mod withings;

/// The order a twin pages a listing in (oldest first, newest first, or a fixed shuffle).
pub use vitals_providers::providers::withings::sample::Order;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State as AxState};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// Faults injected into the next requests. Counters count down as requests consume them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Faults {
    pub latency_ms: u64,
    /// The next N data requests get 429 with `Retry-After: retry_after_s`.
    pub rate_limit_next: u32,
    pub retry_after_s: u64,
    /// The next N data requests get 503.
    pub server_error_next: u32,
    /// The next N data requests have their connection broken mid-answer.
    pub reset_next: u32,
    /// The next N data requests get a 200 whose JSON body is cut in half.
    pub truncate_next: u32,
    /// Pages after the first hand back the token they were called with.
    pub repeat_token: bool,
    /// Every page carries a next_token, even past the data.
    pub endless_tokens: bool,
    /// Pages after the first start this many rows early, repeating the end of the page before
    /// (offset paging over data that moved).
    pub repeat_rows: usize,
    /// Pages with index ≥ N answer 401.
    pub unauthorized_from_page: Option<usize>,
    /// Oura's budget (5,000 requests per 300 s), scaled down: past it, 429 until the window frees a slot.
    pub rate_budget: Option<RateBudget>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct RateBudget {
    pub requests: usize,
    pub window_ms: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoggedRequest {
    pub method: String,
    pub path: String,
    pub query: String,
    pub user_agent: Option<String>,
}

pub struct State {
    pub oura: Mutex<oura::OuraConfig>,
    /// Oura's OAuth endpoints: registered apps, issued codes and tokens, knobs.
    pub oauth: Mutex<oura::oauth::OAuth>,
    pub days: oura::DayCache,
    /// Withings: configuration, OAuth server and rate counters.
    pub withings: Mutex<withings::Withings>,
    /// Polar: configuration, OAuth server, registrations.
    pub polar: Mutex<polar::Polar>,
    /// Garmin's Personal API: keys, tokens, requests in flight.
    pub garmin: Mutex<garmin::Garmin>,
    /// Garmin Connect's private API: its SSO, DI token endpoint and data routes.
    pub garmin_connect: Mutex<garmin_connect::GarminConnect>,
    /// WHOOP: configuration, OAuth server, rate counters (mounted under its own prefix).
    pub whoop: Mutex<whoop::Whoop>,
    /// Google Health: configuration, OAuth server, rate counters (mounted under its own prefix).
    pub google_health: Mutex<google_health::GoogleHealth>,
    /// When recent data requests arrived, for the count-based rate limit.
    pub arrivals: Mutex<std::collections::VecDeque<std::time::Instant>>,
    pub faults: Mutex<Faults>,
    /// Faults on the wire, the same for every provider's data routes (the reliability matrix).
    pub wire: Mutex<wire::Wire>,
    /// Every provider request with its timing and body size (the bench's round trips).
    pub traffic: Mutex<Vec<traffic::Exchange>>,
    pub log: Mutex<Vec<LoggedRequest>>,
}

/// A running twin on loopback.
pub struct Twin {
    pub addr: SocketAddr,
    pub state: Arc<State>,
}

impl Twin {
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
    pub fn set_faults(&self, f: Faults) {
        *self.state.faults.lock().unwrap() = f;
    }
    pub fn configure(&self, f: impl FnOnce(&mut oura::OuraConfig)) {
        f(&mut self.state.oura.lock().unwrap());
    }
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.state.log.lock().unwrap().clone()
    }
    pub fn withings(&self, f: impl FnOnce(&mut withings::Withings)) {
        f(&mut self.state.withings.lock().unwrap());
    }
    pub fn garmin(&self, f: impl FnOnce(&mut garmin::Garmin)) {
        f(&mut self.state.garmin.lock().unwrap());
    }
    pub fn garmin_connect<T>(&self, f: impl FnOnce(&mut garmin_connect::GarminConnect) -> T) -> T {
        f(&mut self.state.garmin_connect.lock().unwrap())
    }
    pub fn whoop<T>(&self, f: impl FnOnce(&mut whoop::Whoop) -> T) -> T {
        f(&mut self.state.whoop.lock().unwrap())
    }
    pub fn google_health<T>(&self, f: impl FnOnce(&mut google_health::GoogleHealth) -> T) -> T {
        f(&mut self.state.google_health.lock().unwrap())
    }
    /// Run the per-minute budgets (Withings' 120, WHOOP's 100) `scale` times faster, as a server
    /// started with `VITALS_RATE_TIME_SCALE=scale` counts them: a test that spends a budget waits
    /// a minute ÷ `scale` for it to free, with the same requests in a window.
    pub fn scale_minutes(&self, scale: u32) {
        let minute = std::time::Duration::from_secs(60) / scale.max(1);
        self.withings(|w| w.cfg.minute = minute);
        self.whoop(|w| w.cfg.minute = minute);
        self.google_health(|g| g.cfg.minute = minute);
    }
    /// The base URL of a twin of [`TWINS`] (its prefix below this twin's address).
    pub fn mounted(&self, provider: &str) -> String {
        let t = TWINS.iter().find(|t| t.provider == provider).unwrap_or_else(|| panic!("no twin of {provider} is mounted"));
        format!("{}{}", self.base_url(), t.prefix)
    }
    pub fn polar(&self, f: impl FnOnce(&mut polar::Polar)) {
        f(&mut self.state.polar.lock().unwrap());
    }
    /// Faults for the data requests that follow, whatever the provider ([`wire::Rule`]).
    pub fn wire(&self, rules: Vec<wire::Rule>) {
        self.state.wire.lock().unwrap().set(rules);
    }
    /// How many answers the wire rules changed since they were set.
    pub fn wire_hits(&self) -> usize {
        self.state.wire.lock().unwrap().hits()
    }
    /// How many answers each wire rule changed, in the order they were set.
    pub fn wire_fired(&self) -> Vec<usize> {
        self.state.wire.lock().unwrap().fired()
    }
    pub fn clear_log(&self) {
        self.state.log.lock().unwrap().clear();
    }
    /// What was served since the last call, and forget it ([`traffic`]).
    pub fn take_traffic(&self) -> Vec<traffic::Exchange> {
        std::mem::take(&mut self.state.traffic.lock().unwrap())
    }
}

/// A provider's twin mounted under a prefix of its own: its routes, and which of them the wire's
/// faults count as data or token requests. A new provider's twin is one line here and collides
/// with no other's routes. (Oura's, Withings' and Garmin Connect's predate it and still share the
/// root, on routes of their own; see ARCHITECTURE.md.)
pub struct Mounted {
    pub provider: &'static str,
    pub prefix: &'static str,
    pub routes: fn() -> Router<Arc<State>>,
    pub wire_route: fn(&str) -> Option<wire::Route>,
}

/// The registry of mounted twins.
pub static TWINS: &[Mounted] = &[
    Mounted { provider: "polar", prefix: "/polar", routes: polar_routes, wire_route: polar::wire_route },
    Mounted { provider: "garmin", prefix: "/garmin", routes: garmin_routes, wire_route: garmin::wire_route },
    Mounted { provider: "whoop", prefix: whoop::PREFIX, routes: whoop::routes, wire_route: whoop::wire_route },
    Mounted { provider: "google-health", prefix: google_health::PREFIX, routes: google_health::routes, wire_route: google_health::wire_route },
];

/// Polar's authorize page, token endpoint and AccessLink routes, below its prefix.
fn polar_routes() -> Router<Arc<State>> {
    Router::new().route("/oauth2/authorization", get(polar_authorize)).route("/v2/oauth2/token", post(polar_token)).route("/v3/{*rest}", any(polar_data))
}

/// Garmin's Personal API: every path below its prefix (its services, and 404 off its allowlist).
fn garmin_routes() -> Router<Arc<State>> {
    Router::new().route("/{*rest}", any(garmin_route))
}

/// Start a twin on `127.0.0.1:port` (0 = any free port) in the current tokio runtime.
pub async fn start(cfg: oura::OuraConfig, port: u16) -> std::io::Result<Twin> {
    let state = Arc::new(State {
        oura: Mutex::new(cfg),
        oauth: Default::default(),
        days: Default::default(),
        withings: Default::default(),
        polar: Default::default(),
        garmin: Default::default(),
        garmin_connect: Default::default(),
        whoop: Default::default(),
        google_health: Default::default(),
        arrivals: Default::default(),
        faults: Mutex::new(Faults::default()),
        wire: Default::default(),
        log: Mutex::new(vec![]),
        traffic: Default::default(),
    });
    let mut app = Router::new();
    for t in TWINS {
        app = app.nest(t.prefix, (t.routes)());
    }
    let app = app
        .route("/_twin/faults", get(get_faults).post(set_faults))
        .route("/_twin/requests", get(get_requests))
        .route("/_twin/reset", post(reset))
        .route("/_twin/oura", post(patch_oura))
        .route("/oauth/authorize", get(authorize))
        .route("/oauth/token", post(token_legacy))
        .route("/oauth/v2/ext/oauth-token", post(token_new))
        .route("/oauth/revoke", post(revoke))
        .route("/_twin/withings", post(patch_withings))
        .route("/oauth2_user/authorize2", get(withings_authorize))
        .route("/v2/oauth2", any(withings_token))
        .route("/measure", any(withings_data))
        .route("/v2/measure", any(withings_data))
        .route("/v2/sleep", any(withings_data))
        .route("/v2/heart", any(withings_data))
        .route("/v2/user", any(withings_data))
        .route("/_twin/polar", post(patch_polar))
        .route("/v2/sandbox/usercollection/{*rest}", any(sandbox_route))
        .route("/v2/usercollection/{*rest}", any(real_route))
        .route("/garmin-sso/{*rest}", any(garmin_connect_sso))
        .route("/diauth/{*rest}", post(garmin_connect_di))
        .route("/connectapi/{*rest}", any(garmin_connect_data))
        .route("/garth/oauth_consumer.json", get(garmin_connect_consumer))
        .layer(axum::middleware::from_fn_with_state(state.clone(), wire::layer))
        .layer(axum::middleware::from_fn_with_state(state.clone(), traffic::layer))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        // Like a production server: no Nagle delay on small writes.
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let _ = axum::serve(listener, app).await;
    });
    Ok(Twin { addr, state })
}

fn form(raw: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(raw.as_bytes()).into_owned().collect()
}
fn now(s: &State) -> jiff::Timestamp {
    s.oura.lock().unwrap().now()
}
async fn authorize(AxState(s): AxState<Arc<State>>, RawQuery(q): RawQuery) -> Response {
    let t = now(&s);
    s.oauth.lock().unwrap().authorize(&form(&q.unwrap_or_default()), t)
}
async fn token_legacy(AxState(s): AxState<Arc<State>>, body: String) -> Response {
    let t = now(&s);
    s.oauth.lock().unwrap().token(true, &form(&body), t)
}
async fn token_new(AxState(s): AxState<Arc<State>>, body: String) -> Response {
    let t = now(&s);
    s.oauth.lock().unwrap().token(false, &form(&body), t)
}
async fn revoke(AxState(s): AxState<Arc<State>>, RawQuery(q): RawQuery) -> StatusCode {
    let token = form(&q.unwrap_or_default()).remove("access_token").unwrap_or_default();
    s.oauth.lock().unwrap().revoke(&token)
}

async fn get_faults(AxState(s): AxState<Arc<State>>) -> Json<Faults> {
    Json(s.faults.lock().unwrap().clone())
}
async fn set_faults(AxState(s): AxState<Arc<State>>, Json(f): Json<Faults>) -> StatusCode {
    *s.faults.lock().unwrap() = f;
    StatusCode::NO_CONTENT
}
async fn get_requests(AxState(s): AxState<Arc<State>>) -> Json<Vec<LoggedRequest>> {
    Json(s.log.lock().unwrap().clone())
}
async fn patch_oura(AxState(s): AxState<Arc<State>>, Json(p): Json<oura::OuraPatch>) -> StatusCode {
    p.apply(&mut s.oura.lock().unwrap());
    StatusCode::NO_CONTENT
}
async fn patch_withings(AxState(s): AxState<Arc<State>>, Json(p): Json<withings::WithingsPatch>) -> StatusCode {
    p.apply(&mut s.withings.lock().unwrap().cfg);
    StatusCode::NO_CONTENT
}

/// Withings takes its parameters from the query or the form body alike (reference §1).
fn merged(raw: Option<String>, body: &str) -> HashMap<String, String> {
    let mut p = form(&raw.unwrap_or_default());
    p.extend(form(body));
    p
}

async fn withings_authorize(AxState(s): AxState<Arc<State>>, RawQuery(q): RawQuery) -> Response {
    let mut w = s.withings.lock().unwrap();
    let now = w.cfg.now();
    match w.oauth.authorize(&form(&q.unwrap_or_default()), now) {
        Ok(to) => axum::response::Redirect::to(&to).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, e).into_response(),
    }
}

async fn withings_token(AxState(s): AxState<Arc<State>>, RawQuery(q): RawQuery, body: String) -> Response {
    let p = merged(q, &body);
    let mut w = s.withings.lock().unwrap();
    let now = w.cfg.now();
    let v = match p.get("action").map(String::as_str) {
        Some("requesttoken") => w.oauth.requesttoken(&p, now),
        _ => serde_json::json!({"status": 2554, "body": {}, "error": "Not implemented"}),
    };
    Json(v).into_response()
}

async fn withings_data(AxState(s): AxState<Arc<State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap, body: String) -> Response {
    let p = merged(q, &body);
    let logged: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(p.iter().filter(|(k, _)| *k != "access_token")).finish();
    s.log.lock().unwrap().push(LoggedRequest {
        method: m.to_string(),
        path: uri.path().to_string(),
        query: logged,
        user_agent: h.get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_string),
    });
    let header = h.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::to_string);
    let bearer = header.or_else(|| p.get("access_token").cloned());
    let latency = s.withings.lock().unwrap().cfg.faults.latency_ms;
    latency::after_ms(latency).await;
    let a = s.withings.lock().unwrap().serve(uri.path(), &p, bearer.as_deref());
    Response::builder().status(a.http).header("content-type", a.content_type).body(Body::from(a.body)).unwrap()
}

async fn patch_polar(AxState(s): AxState<Arc<State>>, Json(p): Json<polar::PolarPatch>) -> StatusCode {
    p.apply(&mut s.polar.lock().unwrap().cfg);
    StatusCode::NO_CONTENT
}

/// Polar's authorize page consents at once and sends the browser back with a code.
async fn polar_authorize(AxState(s): AxState<Arc<State>>, RawQuery(q): RawQuery) -> Response {
    match s.polar.lock().unwrap().authorize(&form(&q.unwrap_or_default()), "http://localhost:8080/callback") {
        Ok(to) => axum::response::Redirect::to(&to).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, e).into_response(),
    }
}

async fn polar_token(AxState(s): AxState<Arc<State>>, h: HeaderMap, body: String) -> Response {
    let auth = h.get("authorization").and_then(|v| v.to_str().ok());
    s.polar.lock().unwrap().token(auth, &form(&body)).into_response()
}

/// Note a request in the twin's log, as it arrived.
fn log(s: &State, m: &Method, path: &str, query: &str, h: &HeaderMap) {
    s.log.lock().unwrap().push(LoggedRequest {
        method: m.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        user_agent: h.get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_string),
    });
}

async fn polar_data(AxState(s): AxState<Arc<State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap, body: String) -> Response {
    let q = q.unwrap_or_default();
    log(&s, &m, uri.path(), &q, &h);
    let bearer = h.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::to_string);
    let latency = s.polar.lock().unwrap().cfg.faults.latency_ms;
    latency::after_ms(latency).await;
    s.polar.lock().unwrap().serve(m.as_str(), uri.path(), &form(&q), &body, bearer.as_deref()).into_response()
}

async fn garmin_route(AxState(s): AxState<Arc<State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap) -> Response {
    let q = q.unwrap_or_default();
    log(&s, &m, uri.path(), &q, &h);
    let header = |k: &str| h.get(k).and_then(|v| v.to_str().ok()).map(str::to_string);
    let reply = |a: garmin::Answer| {
        let mut b = Response::builder().status(a.status).header("content-type", a.content_type);
        if let Some(r) = a.retry_after {
            b = b.header("retry-after", r.to_string());
        }
        b.body(Body::from(a.body)).unwrap()
    };
    if uri.path() == vitals_providers::providers::garmin::auth::KEY_EXCHANGE && m == Method::POST {
        return reply(s.garmin.lock().unwrap().exchange(header("authorization").as_deref()));
    }
    if m != Method::GET {
        return (StatusCode::METHOD_NOT_ALLOWED, "the Personal API is read-only").into_response();
    }
    let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_string));
    let admitted = s.garmin.lock().unwrap().admit(bearer.as_deref());
    if let Err(a) = admitted {
        return reply(a);
    }
    let latency = s.garmin.lock().unwrap().cfg.latency_ms;
    latency::after_ms(latency).await;
    let a = s.garmin.lock().unwrap().answer(uri.path(), &form(&q));
    reply(a)
}

async fn garmin_connect_consumer() -> Json<serde_json::Value> {
    Json(serde_json::json!({"consumer_key": garmin_connect::CONSUMER_KEY, "consumer_secret": garmin_connect::CONSUMER_SECRET}))
}

fn gc_reply(r: garmin_connect::Reply) -> Response {
    let mut b = Response::builder().status(r.status).header("content-type", r.content_type);
    if let Some(c) = r.set_cookie {
        b = b.header("set-cookie", c);
    }
    if let Some(s) = r.retry_after {
        b = b.header("retry-after", s.to_string());
    }
    b.body(Body::from(r.body)).unwrap()
}

async fn garmin_connect_sso(AxState(s): AxState<Arc<State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap, body: String) -> Response {
    let q = q.unwrap_or_default();
    let path = uri.path().trim_start_matches("/garmin-sso");
    log(&s, &m, uri.path(), &q, &h);
    let cookie = h.get("cookie").and_then(|v| v.to_str().ok());
    gc_reply(s.garmin_connect.lock().unwrap().sso(m.as_str(), path, &form(&q), cookie, &body))
}

async fn garmin_connect_di(AxState(s): AxState<Arc<State>>, m: Method, uri: axum::http::Uri, h: HeaderMap, body: String) -> Response {
    log(&s, &m, uri.path(), "", &h);
    let auth = h.get("authorization").and_then(|v| v.to_str().ok());
    gc_reply(s.garmin_connect.lock().unwrap().di(auth, &body))
}

async fn garmin_connect_data(AxState(s): AxState<Arc<State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap, body: String) -> Response {
    let q = q.unwrap_or_default();
    log(&s, &m, uri.path(), &q, &h);
    let path = uri.path().trim_start_matches("/connectapi");
    if path.starts_with("/oauth-service/") {
        let auth = h.get("authorization").and_then(|v| v.to_str().ok());
        return gc_reply(s.garmin_connect.lock().unwrap().oauth1_route(m.as_str(), path, &form(&q), auth, &body));
    }
    if m != Method::GET {
        return (StatusCode::METHOD_NOT_ALLOWED, "vitals only reads").into_response();
    }
    let headers = h.iter().filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string()))).collect();
    let path = path.to_string();
    let latency = s.garmin_connect.lock().unwrap().latency_ms;
    latency::after_ms(latency).await;
    gc_reply(s.garmin_connect.lock().unwrap().data(&path, &form(&q), headers))
}

async fn reset(AxState(s): AxState<Arc<State>>) -> StatusCode {
    *s.faults.lock().unwrap() = Faults::default();
    s.log.lock().unwrap().clear();
    s.arrivals.lock().unwrap().clear();
    StatusCode::NO_CONTENT
}

/// Count this request against the budget; Some(seconds to wait) when it is over.
fn over_budget(s: &State, b: RateBudget) -> Option<u64> {
    let now = std::time::Instant::now();
    let window = std::time::Duration::from_millis(b.window_ms);
    let mut a = s.arrivals.lock().unwrap();
    while a.front().is_some_and(|t| now.duration_since(*t) >= window) {
        a.pop_front();
    }
    if a.len() >= b.requests {
        let free_at = *a.front().unwrap() + window;
        return Some(free_at.saturating_duration_since(now).as_secs_f64().ceil().max(1.0) as u64);
    }
    a.push_back(now);
    None
}

async fn sandbox_route(st: AxState<Arc<State>>, m: Method, p: Path<String>, q: RawQuery, h: HeaderMap) -> Response {
    data_route(st, m, true, p, q, h).await
}
async fn real_route(st: AxState<Arc<State>>, m: Method, p: Path<String>, q: RawQuery, h: HeaderMap) -> Response {
    data_route(st, m, false, p, q, h).await
}

async fn data_route(AxState(s): AxState<Arc<State>>, m: Method, sandbox: bool, Path(rest): Path<String>, RawQuery(raw): RawQuery, h: HeaderMap) -> Response {
    let raw = raw.unwrap_or_default();
    s.log.lock().unwrap().push(LoggedRequest {
        method: m.to_string(),
        path: format!("/v2/{}usercollection/{rest}", if sandbox { "sandbox/" } else { "" }),
        query: raw.clone(),
        user_agent: h.get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_string),
    });
    if m != Method::GET {
        return (StatusCode::METHOD_NOT_ALLOWED, "data routes are GET only").into_response();
    }
    let q: HashMap<String, String> = url::form_urlencoded::parse(raw.as_bytes()).into_owned().collect();
    // The answer leaves `latency_ms` after the request arrived, its body made meanwhile: a network
    // round trip to a server whose own work hides inside it (this twin shares the machine's cores
    // with the server it answers, so its work after the wait would be counted as the network's).
    let latency = s.faults.lock().unwrap().latency_ms;
    let due = std::time::Instant::now() + std::time::Duration::from_millis(latency);
    let resp = oura_answer(&s, sandbox, &rest, &q, &h).await;
    latency::until(due).await;
    resp
}

/// The Oura twin's answer to a data request, with the faults the test asked for.
async fn oura_answer(s: &State, sandbox: bool, rest: &str, q: &HashMap<String, String>, h: &HeaderMap) -> Response {
    enum F {
        Rate(u64),
        Server,
        Reset,
        Truncate,
        None,
    }
    let fault = {
        let mut f = s.faults.lock().unwrap();
        let over_budget = f.rate_budget.and_then(|b| over_budget(s, b));
        if let Some(after) = over_budget {
            F::Rate(after)
        } else if f.rate_limit_next > 0 {
            f.rate_limit_next -= 1;
            F::Rate(f.retry_after_s)
        } else if f.server_error_next > 0 {
            f.server_error_next -= 1;
            F::Server
        } else if f.reset_next > 0 {
            f.reset_next -= 1;
            F::Reset
        } else if f.truncate_next > 0 {
            f.truncate_next -= 1;
            F::Truncate
        } else {
            F::None
        }
    };
    match fault {
        F::Rate(after) => {
            let reset = jiff::Timestamp::now().as_second() + after as i64;
            return Response::builder()
                .status(429)
                .header("retry-after", after.to_string())
                .header("x-ratelimit-limit", "5000")
                .header("x-ratelimit-window", "300")
                .header("x-ratelimit-reset", reset.to_string())
                .header("x-ratelimit-tier", "token")
                .body(Body::from(r#"{"detail":"Rate limit exceeded"}"#))
                .unwrap();
        }
        F::Server => return (StatusCode::SERVICE_UNAVAILABLE, r#"{"detail":"Service Unavailable"}"#).into_response(),
        F::Reset => {
            let stream = futures_util::stream::iter(vec![
                Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"{\"data\": [")),
                Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by twin")),
            ]);
            return Response::builder().status(200).body(Body::from_stream(stream)).unwrap();
        }
        _ => {}
    }
    let resp = oura::serve(s, sandbox, rest, q, h);
    if matches!(fault, F::Truncate) {
        let (parts, body) = resp.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
        let half = bytes.slice(..bytes.len() / 2);
        let mut parts = parts;
        parts.headers.remove("content-length");
        return Response::from_parts(parts, Body::from(half));
    }
    resp
}
