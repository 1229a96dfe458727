//! A provider of each connection kind, built here in the test crate and not in the server, and the
//! small API they log into and read from. It proves the connection model: a provider that brings
//! its own login (HTTP Basic client authentication, a user id with the token, a registration step
//! that fails until consents are accepted, a key exchange, a session login with a one-time code, an
//! import of another tool's token file) needs no edit in `accounts/`, `mcp/` or the settings app.
//!
//! The providers' own functions read the API's address from `KINDS_BASE_URL` (they are plain
//! function pointers, as a provider's are); [`KindsApi::env`] lists every variable to set.
use axum::extract::{Query, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use vitals_providers::catalog::{CollectionSpec, PageOrder, ProviderSpec, RangeKind, RateBudget, Split};
use vitals_providers::config::Config;
use vitals_providers::connection::{
    AfterExchange, ApiKeySpec, AppEnv, BoxFuture, ClientAuth, Connection, Grant, ImportSpec, KeyError, OAuthSpec, Revoke, SessionForm, SessionSpec,
    SessionStep, StepError,
};
use vitals_providers::http::Reply;
use vitals_providers::providers::credential::StoredCredential;
use vitals_providers::providers::{Credential, CredentialSource, Page, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use vitals_providers::secret::Secret;

pub const CLIENT_ID: &str = "kinds-client";
pub const CLIENT_SECRET: &str = "kinds-client-secret-0123456789";
pub const GOOD_KEY: &str = "KINDS-KEY-GOOD-0123456789abcdef";
/// A second good key, given through the environment.
pub const ENV_KEY: &str = "KINDS-KEY-GOOD-ENV-0123456789abc";
pub const EMAIL: &str = "person@example.org";
pub const PASSWORD: &str = "kinds-password-0123456789";
pub const CODE: &str = "246810";
/// The user id the OAuth token comes with, which the data route needs.
pub const USER_ID: i64 = 4242;

/// What the API has seen and how it behaves; tests read and turn these.
#[derive(Default)]
pub struct Book {
    /// Until true, the registration step after the OAuth login answers 403 (Polar's consents).
    pub consents_accepted: bool,
    pub registrations: u32,
    /// Exchanges of each good key.
    pub exchanges_of: HashMap<String, u32>,
    /// Access tokens the API honours, with the kind that got each.
    pub tokens: HashMap<String, &'static str>,
    /// Tokens of users who registered (OAuth data needs it).
    pub registered: Vec<String>,
    /// The `Authorization` scheme each token request used (`Basic`, or none for a body).
    pub token_auth: Vec<String>,
    /// Form fields of each token request.
    pub token_forms: Vec<BTreeMap<String, String>>,
    pub revoked: Vec<String>,
    next: u32,
    codes: HashMap<String, String>,
}

impl Book {
    fn issue(&mut self, kind: &'static str) -> String {
        self.next += 1;
        let t = format!("kinds-{kind}-token-{:04}-abcdefghijklmnop", self.next);
        self.tokens.insert(t.clone(), kind);
        t
    }
}

pub struct KindsApi {
    pub addr: std::net::SocketAddr,
    pub book: Arc<Mutex<Book>>,
}

impl KindsApi {
    pub async fn start() -> KindsApi {
        let book: Arc<Mutex<Book>> = Default::default();
        let app = Router::new()
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/register", post(register))
            .route("/key/token", post(key_token))
            .route("/session/login", post(session_login))
            .route("/session/refresh", post(session_refresh))
            .route("/session/logout", post(logout))
            .route("/data", get(data))
            .with_state(book.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let addr = listener.local_addr().expect("bound");
        tokio::spawn(async move { axum::serve(listener, app).await.expect("kinds API serves") });
        KindsApi { addr, book }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every variable the kinds providers read: the API's address, the OAuth app and endpoints, a
    /// free redirect port. `VITALS_CONFIG_DIR` and `VITALS_TOKEN_STORE` are the caller's.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let b = self.base_url();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        vec![
            ("KINDS_BASE_URL", b.clone()),
            ("VITALS_KINDS_OAUTH_CLIENT_ID", CLIENT_ID.into()),
            ("VITALS_KINDS_OAUTH_CLIENT_SECRET", CLIENT_SECRET.into()),
            ("VITALS_KINDS_OAUTH_AUTHORIZE_URL", format!("{b}/authorize")),
            ("VITALS_KINDS_OAUTH_TOKEN_URL", format!("{b}/token")),
            ("VITALS_KINDS_OAUTH_REDIRECT_URI", format!("http://127.0.0.1:{port}/callback")),
            ("VITALS_KINDS_SESSION_LOGOUT_URL", format!("{b}/session/logout")),
        ]
    }
}

async fn authorize(Query(q): Query<HashMap<String, String>>, AxState(book): AxState<Arc<Mutex<Book>>>) -> Response {
    let mut b = book.lock().unwrap();
    if q.get("client_id").map(String::as_str) != Some(CLIENT_ID) || q.contains_key("code_challenge") {
        return (StatusCode::BAD_REQUEST, "unknown client, or a PKCE challenge this API does not take").into_response();
    }
    let code = format!("code-{}", b.next);
    b.next += 1;
    b.codes.insert(code.clone(), q.get("scope").cloned().unwrap_or_default());
    let to = format!("{}?code={code}&state={}", q["redirect_uri"], q.get("state").cloned().unwrap_or_default());
    Redirect::to(&to).into_response()
}

fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    use base64::Engine;
    let v = headers.get("authorization")?.to_str().ok()?.strip_prefix("Basic ")?;
    let raw = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(v).ok()?).ok()?;
    let (id, secret) = raw.split_once(':')?;
    let dec = |s: &str| url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.to_string()).unwrap_or_default();
    Some((dec(id), dec(secret)))
}

/// Polar's shape: HTTP Basic client authentication, no refresh token, a user id beside the token.
async fn token(headers: HeaderMap, AxState(book): AxState<Arc<Mutex<Book>>>, body: String) -> Response {
    let f: BTreeMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let mut b = book.lock().unwrap();
    b.token_auth.push(headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.split(' ').next()).unwrap_or("none").to_string());
    b.token_forms.push(f.clone());
    if basic(&headers) != Some((CLIENT_ID.into(), CLIENT_SECRET.into())) {
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"}))).into_response();
    }
    let Some(scope) = f.get("code").and_then(|c| b.codes.remove(c)) else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_grant"}))).into_response();
    };
    let t = b.issue("oauth");
    Json(json!({"access_token": t, "token_type": "bearer", "expires_in": 31_536_000, "x_user_id": USER_ID, "scope": scope})).into_response()
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers.get("authorization")?.to_str().ok()?.strip_prefix("Bearer ").map(str::to_string)
}

async fn register(headers: HeaderMap, AxState(book): AxState<Arc<Mutex<Book>>>, Json(body): Json<Value>) -> Response {
    let mut b = book.lock().unwrap();
    let Some(t) = bearer(&headers).filter(|t| b.tokens.contains_key(t)) else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    if body["member-id"].as_str().is_none() {
        return (StatusCode::BAD_REQUEST, "no member-id").into_response();
    }
    if !b.consents_accepted {
        return (StatusCode::FORBIDDEN, "User has not accepted all mandatory consents").into_response();
    }
    b.registrations += 1;
    b.registered.push(t);
    StatusCode::OK.into_response()
}

async fn key_token(headers: HeaderMap, AxState(book): AxState<Arc<Mutex<Book>>>) -> Response {
    let mut b = book.lock().unwrap();
    match headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("ApiKey ")) {
        Some(k @ (GOOD_KEY | ENV_KEY)) => {
            *b.exchanges_of.entry(k.to_string()).or_default() += 1;
            let t = b.issue("api_key");
            Json(json!({"accessToken": t, "expiresIn": 86_400})).into_response()
        }
        _ => (StatusCode::UNAUTHORIZED, Json(json!({"error": "INVALID_API_KEY"}))).into_response(),
    }
}

async fn session_login(AxState(book): AxState<Arc<Mutex<Book>>>, Json(f): Json<Value>) -> Response {
    let mut b = book.lock().unwrap();
    if f["email"] != EMAIL || f["password"] != PASSWORD {
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "wrong email or password"}))).into_response();
    }
    match f["code"].as_str() {
        None => Json(json!({"mfa": "a code was sent to p***@example.org"})).into_response(),
        Some(CODE) => {
            let (a, r) = (b.issue("session"), format!("refresh-{}", b.next));
            Json(json!({"access_token": a, "refresh_token": r, "expires_in": 3600})).into_response()
        }
        Some(_) => (StatusCode::UNAUTHORIZED, Json(json!({"error": "wrong code"}))).into_response(),
    }
}

async fn session_refresh(AxState(book): AxState<Arc<Mutex<Book>>>) -> Response {
    let t = book.lock().unwrap().issue("session");
    Json(json!({"access_token": t, "expires_in": 3600})).into_response()
}

async fn logout(Query(q): Query<HashMap<String, String>>, AxState(book): AxState<Arc<Mutex<Book>>>) -> StatusCode {
    let mut b = book.lock().unwrap();
    let t = q.get("token").cloned().unwrap_or_default();
    b.tokens.remove(&t);
    b.revoked.push(t);
    StatusCode::NO_CONTENT
}

async fn data(headers: HeaderMap, Query(q): Query<HashMap<String, String>>, AxState(book): AxState<Arc<Mutex<Book>>>) -> Response {
    let b = book.lock().unwrap();
    let Some(kind) = bearer(&headers).and_then(|t| b.tokens.get(&t).copied()) else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let token = bearer(&headers).unwrap_or_default();
    if kind == "oauth" && (!b.registered.contains(&token) || q.get("user") != Some(&USER_ID.to_string())) {
        return (StatusCode::FORBIDDEN, "not registered, or not this user's path").into_response();
    }
    let (Some(s), Some(e)) = (q.get("start_date").and_then(|d| d.parse::<jiff::civil::Date>().ok()), q.get("end_date").and_then(|d| d.parse().ok())) else {
        return (StatusCode::BAD_REQUEST, "start_date and end_date").into_response();
    };
    Json(json!({"data": days(s, e, kind), "next_token": null})).into_response()
}

/// One record a day, saying which kind of credential read it.
fn days(s: jiff::civil::Date, e: jiff::civil::Date, kind: &str) -> Vec<Value> {
    let mut out = vec![];
    let mut d = s;
    while d <= e {
        out.push(json!({"id": format!("{kind}-{d}"), "day": d.to_string(), "value": d.day(), "read_with": kind}));
        d = d.tomorrow().unwrap();
    }
    out
}

fn base() -> String {
    std::env::var("KINDS_BASE_URL").expect("KINDS_BASE_URL names the kinds API")
}

/// The registration step: Polar's `POST /v3/users` shape, a JSON body naming the member.
fn register_hook(g: Grant, _c: Arc<Config>) -> BoxFuture<'static, Result<(), StepError>> {
    Box::pin(async move {
        let user = g.extra.get("x_user_id").cloned().ok_or("the token came without x_user_id")?;
        let r = reqwest::Client::new()
            .post(format!("{}/register", base()))
            .bearer_auth(g.access.expose())
            .json(&json!({"member-id": format!("vitals-{user}")}))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        match r.status().as_u16() {
            200 | 409 => Ok(()),
            403 => Err(StepError::Refused("the account has not accepted the provider's mandatory consents: accept them in its app, then ask again".into())),
            s => Err(format!("HTTP {s}").into()),
        }
    })
}

fn exchange_key(key: Secret, _c: Arc<Config>) -> BoxFuture<'static, Result<Grant, KeyError>> {
    Box::pin(async move {
        let r = reqwest::Client::new()
            .post(format!("{}/key/token", base()))
            .header("authorization", format!("ApiKey {}", key.expose()))
            .send()
            .await
            .map_err(|e| KeyError::Failed(e.to_string()))?;
        if r.status().as_u16() == 401 {
            return Err(KeyError::Refused("the key is unknown, expired or deleted".into()));
        }
        let v: Value = r.json().await.map_err(|e| KeyError::Failed(e.to_string()))?;
        let access = v["accessToken"].as_str().ok_or_else(|| KeyError::Failed("no accessToken in the reply".into()))?;
        let expires_at = v["expiresIn"].as_i64().map(|s| jiff::Timestamp::now().as_second() + s);
        Ok(Grant { access: Secret::new(access), expires_at, ..Default::default() })
    })
}

fn session_grant(v: &Value) -> Result<Grant, String> {
    Ok(Grant {
        access: Secret::new(v["access_token"].as_str().ok_or("no access token")?),
        refresh: v["refresh_token"].as_str().map(Secret::new),
        expires_at: v["expires_in"].as_i64().map(|s| jiff::Timestamp::now().as_second() + s),
        ..Default::default()
    })
}

fn login(f: SessionForm, _c: Arc<Config>) -> BoxFuture<'static, Result<SessionStep, StepError>> {
    Box::pin(async move {
        let body = json!({"email": f.email, "password": f.password.expose(), "code": f.code.as_ref().map(|c| c.expose().to_string())});
        let r = reqwest::Client::new().post(format!("{}/session/login", base())).json(&body).send().await.map_err(|e| e.to_string())?;
        let status = r.status().as_u16();
        let v: Value = r.json().await.map_err(|e| e.to_string())?;
        match (status, v.get("mfa")) {
            (200, Some(m)) => Ok(SessionStep::NeedsCode(format!("The kinds API says {}; type it.", m.as_str().unwrap_or_default()))),
            (200, None) => Ok(session_grant(&v).map(SessionStep::Done)?),
            (_, _) => Err(StepError::Refused(format!("the kinds API refused the login: {}", v["error"].as_str().unwrap_or("no reason")))),
        }
    })
}

fn refresh_session(_g: Grant, _c: Arc<Config>) -> BoxFuture<'static, Result<Grant, vitals_providers::provider::RenewError>> {
    Box::pin(async move {
        let r = reqwest::Client::new().post(format!("{}/session/refresh", base())).send().await.map_err(|e| e.to_string())?;
        Ok(session_grant(&r.json::<Value>().await.map_err(|e| e.to_string())?)?)
    })
}

/// Another tool's token file: `oauth2_token.json` with `access_token` and `refresh_token`.
fn read_import(dir: std::path::PathBuf, _c: Arc<Config>) -> BoxFuture<'static, Result<Grant, StepError>> {
    Box::pin(async move {
        let path = dir.join("oauth2_token.json");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{} could not be read ({})", path.display(), e.kind()))?;
        let v: Value = serde_json::from_str(&text).map_err(|_| format!("{} is not JSON", path.display()))?;
        Ok(session_grant(&v)?)
    })
}

const FIELDS: &[&str] = &["value", "read_with"];

static DAILY: &[CollectionSpec] = &[CollectionSpec {
    name: "daily",
    path: "data",
    brief: "one number a day",
    summary: "One number a day, and which kind of credential read it.",
    range: RangeKind::Date,
    latest: false,
    projectable: false,
    day_keys: &["day"],
    dating: vitals_providers::catalog::Dating::ProviderDay,
    always: &["id", "day"],
    key: Some("id"),
    fields: FIELDS,
    enveloped: true,
    in_sandbox: true,
    volume: "1 a day",
    split: Split::Days(30),
    order: PageOrder::OldestFirst,
    series: None,
    embedded: &[],
    night: None,
    workout: None,
    retention: None,
    exact_days: false,
    by_id: false,
    ahead: false,
    daily: None,
    options: &[],
    flags: &[],
    during: None,
}];

macro_rules! spec {
    ($name:literal, $display:literal, $connection:expr) => {
        ProviderSpec {
            name: $name,
            namespace: $name,
            display: $display,
            collections: DAILY,
            probe: "daily",
            today: &[],
            max_days: None,
            rate_budget: RateBudget { requests: 1000, per: std::time::Duration::from_secs(60) },
            late_sync: "the kinds API can sync late",
            no_data: &[],
            files: None,
            in_flight: 8,
            daily_view: &[],
            retries_429: true,
            non_get: &[],
            legend: &[],
            connection: $connection,
        }
    };
}

pub static OAUTH: ProviderSpec = spec!(
    "kinds_oauth",
    "Kinds OAuth",
    Connection::OAuth(OAuthSpec {
        app_env: AppEnv { client_id: "VITALS_KINDS_OAUTH_CLIENT_ID", client_secret: "VITALS_KINDS_OAUTH_CLIENT_SECRET" },
        authorize_url: "https://kinds.invalid/authorize",
        authorize_env: "VITALS_KINDS_OAUTH_AUTHORIZE_URL",
        authorize_params: &[],
        token_urls: &[("https://kinds.invalid/token", "VITALS_KINDS_OAUTH_TOKEN_URL")],
        redirect: "http://localhost:1/callback",
        redirect_env: "VITALS_KINDS_OAUTH_REDIRECT_URI",
        scopes: &["read", "profile"],
        scope_separator: ",",
        scope_prefix: "",
        client_auth: ClientAuth::Basic,
        pkce: false,
        token_params: &[],
        reply: None,
        keep: &["x_user_id"],
        after_exchange: Some(AfterExchange { what: "registering vitals with the kinds account", run: register_hook }),
        portal: "https://kinds.invalid/apps",
        revoke: Revoke::InAccount("in your kinds account's connected apps"),
    })
);

pub static KEY: ProviderSpec = spec!(
    "kinds_key",
    "Kinds Key",
    Connection::ApiKey(ApiKeySpec {
        env: "VITALS_KINDS_API_KEY",
        portal: "https://kinds.invalid/keys",
        create_help: "Create a key at https://kinds.invalid/keys and paste it here.",
        exchange: exchange_key,
        renew_before_s: 60,
        revoke: Revoke::InAccount("at https://kinds.invalid/keys (delete the key)"),
    })
);

/// The same key connection, for a key given in the environment (`VITALS_KINDS_ENV_KEY`).
pub static ENV_KEYED: ProviderSpec = spec!(
    "kinds_env_key",
    "Kinds Env Key",
    Connection::ApiKey(ApiKeySpec {
        env: "VITALS_KINDS_ENV_KEY",
        portal: "https://kinds.invalid/keys",
        create_help: "Create a key at https://kinds.invalid/keys and set it as VITALS_KINDS_ENV_KEY.",
        exchange: exchange_key,
        renew_before_s: 60,
        revoke: Revoke::InAccount("at https://kinds.invalid/keys (delete the key)"),
    })
);

pub static SESSION: ProviderSpec = spec!(
    "kinds_session",
    "Kinds Session",
    Connection::Session(SessionSpec {
        login: Some(login),
        refresh: Some(refresh_session),
        import: Some(ImportSpec {
            default_dir: "~/.kinds-tool",
            dir_env: &[],
            from: "the kinds tool",
            offer: "Use tokens from the kinds tool",
            read: read_import
        }),
        portal: None,
        caution: "This uses the kinds app's private login, which may stop working without notice.",
        revoke: Revoke::Endpoint { url: "https://kinds.invalid/session/logout", env: "VITALS_KINDS_SESSION_LOGOUT_URL", param: "token" },
        renew_before_s: 60,
        explicit: false,
        login_env: None,
    })
);

pub static IMPORT: ProviderSpec = spec!(
    "kinds_import",
    "Kinds Import",
    Connection::Session(SessionSpec {
        login: None,
        refresh: None,
        import: Some(ImportSpec {
            default_dir: "~/.kinds-tool",
            dir_env: &[],
            from: "the kinds tool",
            offer: "Use tokens from the kinds tool",
            read: read_import
        }),
        portal: None,
        caution: "Tokens another tool saved are used as they are.",
        revoke: Revoke::InAccount("in the kinds tool"),
        renew_before_s: 60,
        explicit: false,
        login_env: None,
    })
);

pub static NONE: ProviderSpec = spec!("kinds_none", "Kinds Sample", Connection::None);

/// One provider of the kinds: its spec, and sample data only where it has no connection.
pub struct Kind {
    spec: &'static ProviderSpec,
    cred: StoredCredential,
    sample: Option<Sample>,
}

struct Sample;

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> Reply {
        let d = |k| req.param(k).and_then(|d| d.parse::<jiff::civil::Date>().ok()).unwrap();
        Reply {
            status: 200,
            retry_after: None,
            quota: None,
            body: Ok(json!({"data": days(d("start_date"), d("end_date"), "sample"), "next_token": null}).to_string()),
        }
    }
}

impl Kind {
    pub fn new(spec: &'static ProviderSpec) -> Kind {
        let sample = matches!(spec.connection, Connection::None).then_some(Sample);
        Kind {
            spec,
            // The test binary's own environment, which its suite sets as a user's would be.
            cred: StoredCredential::in_home(
                spec,
                None,
                sample.as_ref().map(|_| "built-in sample data"),
                &vitals_providers::accounts::Home::local(Arc::new(Config::from_env())),
                &Config::from_env(),
            ),
            sample,
        }
    }
}

/// Every kind, in order: OAuth, API key, session, import, none.
pub static ALL: [&ProviderSpec; 5] = [&OAUTH, &KEY, &SESSION, &IMPORT, &NONE];

impl Provider for Kind {
    fn spec(&self) -> &'static ProviderSpec {
        self.spec
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(
        &self,
        c: &CollectionSpec,
        w: &Window,
        _fields: Option<&[String]>,
        _next: Option<&str>,
        cred: &Credential,
        _options: &vitals_providers::providers::Options,
    ) -> Request {
        let mut params = match w {
            Window::Dates { start, end } => vec![("start_date".to_string(), start.to_string()), ("end_date".to_string(), end.to_string())],
            _ => vec![],
        };
        // The user id the login came with: the routes of such a provider are per user.
        if let Some(user) = cred.extra.get("x_user_id") {
            params.push(("user".into(), user.clone()));
        }
        Request { method: ReadMethod::Get, url: format!("{}/{}", std::env::var("KINDS_BASE_URL").unwrap_or_default(), c.path), params, headers: &[] }
    }
    fn parse_page(&self, _c: &CollectionSpec, body: &str, _at: &vitals_providers::providers::PageAt) -> Result<Page, PageError> {
        let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(e.to_string()))?;
        Ok(Page { records: v["data"].as_array().cloned().unwrap_or_default(), next_token: None })
    }
    fn auth_help(&self, status: u16, cred: &Credential) -> String {
        format!("{} refused the {} credential (HTTP {status}): connect again.", self.spec.display, cred.kind.as_str())
    }
    fn unavailable(&self, _c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        None
    }
    fn synthetic_notice(&self) -> String {
        format!("SAMPLE DATA: {} has sample data only.", self.spec.display)
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        self.sample.as_ref().map(|s| s as &dyn SampleApi)
    }
    fn renew(&self, refused: Option<Secret>) -> Option<BoxFuture<'_, Result<(), vitals_providers::providers::RenewError>>> {
        self.cred.renewer(refused)
    }
}

/// The kinds API on a runtime of its own (it outlives every test's runtime), a fresh config folder,
/// and this process's environment pointed at both: what a test binary of the kinds starts from.
pub struct Lab {
    /// Kept alive: the API runs on it.
    pub rt: tokio::runtime::Runtime,
    pub api: KindsApi,
    pub dir: std::path::PathBuf,
}

impl Lab {
    /// Start once per binary (the environment is process-wide), with `extra` variables set too.
    pub fn start(tag: &str, extra: &[(&'static str, &str)]) -> Lab {
        // On its own thread, so a test inside a tokio runtime can start it as well.
        let (rt, api) = std::thread::spawn(|| {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            let api = rt.block_on(KindsApi::start());
            (rt, api)
        })
        .join()
        .unwrap();
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp")).join(format!("vitals-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut env = api.env();
        env.push(("VITALS_CONFIG_DIR", dir.display().to_string()));
        env.push(("VITALS_TOKEN_STORE", "file".into()));
        env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        for (k, v) in env {
            // SAFETY: set once, before anything in the test binary reads the environment.
            unsafe { std::env::set_var(k, v) };
        }
        unsafe { std::env::remove_var("VITALS_SANDBOX") };
        Lab { rt, api, dir }
    }
}

/// What the person types into a page of ours.
#[derive(Clone, Debug)]
pub struct Answers {
    /// Keys tried in order (a wrong one first shows the form again with why).
    pub keys: Vec<String>,
    pub days: Option<u32>,
}

impl Default for Answers {
    fn default() -> Answers {
        Answers { keys: vec![GOOD_KEY.into()], days: Some(90) }
    }
}

/// A person with a browser: opens the link; follows a provider's redirect to our callback, or
/// fills our own page by the fields it shows (key, expiry, email, password, one-time code) until
/// it stops asking. Returns every page it was shown after a submission, with its status.
pub async fn person(url: &str, answers: Answers) -> Vec<(u16, String)> {
    let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let first = c.get(url).send().await.unwrap();
    if first.status().is_redirection() {
        let landing = first.headers()["location"].to_str().unwrap().replace("//localhost:", "//127.0.0.1:");
        let page = c.get(landing).send().await.unwrap();
        return vec![(page.status().as_u16(), page.text().await.unwrap())];
    }
    let mut page = first.text().await.unwrap();
    let mut keys = answers.keys.into_iter();
    let mut out = vec![];
    for _ in 0..6 {
        let has = |name: &str| page.contains(&format!("name=\"{name}\""));
        let mut form: Vec<(&str, String)> = vec![];
        if has("key") {
            let Some(k) = keys.next() else { break };
            form.push(("key", k));
            form.push(("days", answers.days.map(|d| d.to_string()).unwrap_or_default()));
        } else if has("code") {
            form.push(("code", CODE.into()));
        } else if has("email") {
            form.push(("email", EMAIL.into()));
            form.push(("password", PASSWORD.into()));
        } else {
            break;
        }
        let r = c.post(url).form(&form).send().await.unwrap();
        let status = r.status().as_u16();
        page = r.text().await.unwrap();
        out.push((status, page.clone()));
    }
    out
}
