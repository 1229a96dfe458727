//! The Google Health API v4 as the reference describes it (`google-health/README.md`), mounted
//! under `/google-health`: Google's OAuth (exact redirect, S256 PKCE checked at the exchange, a
//! refresh token only with `access_type=offline`, refresh tokens that do not rotate, and die 7
//! days after the consent while the app is in Testing status, `refresh_token_expires_in` said
//! with them; a consent that may grant only some of the scopes asked), data routes that want a
//! live bearer (401 `UNAUTHENTICATED`) with the data type's scope (403 `PERMISSION_DENIED`,
//! `ACCESS_TOKEN_SCOPE_INSUFFICIENT`), 429 `RESOURCE_EXHAUSTED` past a per-user minute budget,
//! the revoke endpoint, any non-GET data request recorded as a violation, and the data of the
//! server's sample person (`vitals_providers::providers::google_health::sample`) with Google's
//! filters, paging and proto3 JSON.
use axum::body::Body;
use axum::extract::{RawQuery, State as AxState};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use axum::routing::{any, get, post};
use axum::Router;
use jiff::Timestamp;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use vitals_providers::providers::google_health::catalog::{ACTIVITY, METRICS, SLEEP};
use vitals_providers::providers::google_health::sample::{error, Api, Person};

pub const PREFIX: &str = "/google-health";
pub const CLIENT_ID: &str = "google-health-twin-client.apps.googleusercontent.com";
pub const CLIENT_SECRET: &str = "google-health-twin-secret-SECRET";
/// The redirect the twin's client has registered unless a test says another (the server's default).
pub const REDIRECT: &str = "http://localhost:9879/callback";
/// How long a Testing app's refresh token lives.
pub const TESTING_LIFE_S: i64 = 7 * 86_400;

#[derive(Clone, Debug, Default)]
pub struct GoogleFaults {
    /// 429 `RESOURCE_EXHAUSTED` for the next data requests.
    pub rate_limit_next: u32,
    pub server_error_next: u32,
    /// Refuse every filtered sleep listing with 400 `INVALID_ARGUMENT` (as one live client saw
    /// in 2026-08, reference §2.3).
    pub reject_sleep_filter: bool,
}

#[derive(Clone, Debug)]
pub struct GoogleConfig {
    pub person: Person,
    /// The twin's clock; None is real time.
    pub now: Option<Timestamp>,
    /// The app is in Testing status: refresh tokens die 7 days after the consent.
    pub testing: bool,
    /// The one redirect the client has registered (the server's default, or a hosted server's
    /// own callback).
    pub redirect: String,
    /// The scopes the person ticks on the consent screen (None: every one asked).
    pub grant_only: Option<Vec<String>>,
    pub expires_in: i64,
    /// Data requests a minute before 429 (Google: 300 a user).
    pub per_minute: usize,
    pub minute: std::time::Duration,
    /// At most this many points a page whatever `pageSize` says (to make short listings page).
    pub page_cap: Option<usize>,
    pub faults: GoogleFaults,
}

impl Default for GoogleConfig {
    fn default() -> Self {
        GoogleConfig {
            person: Person::new("Europe/Berlin"),
            now: None,
            testing: false,
            redirect: REDIRECT.into(),
            grant_only: None,
            expires_in: 3599,
            per_minute: 300,
            minute: std::time::Duration::from_secs(60),
            page_cap: None,
            faults: GoogleFaults::default(),
        }
    }
}

struct Code {
    redirect: String,
    scopes: String,
    challenge: String,
    offline: bool,
    used: bool,
}

struct Refresh {
    scopes: String,
    issued: Timestamp,
    revoked: bool,
}

#[derive(Default)]
pub struct GoogleHealth {
    pub cfg: GoogleConfig,
    codes: HashMap<String, Code>,
    /// Access token → (expiry, scopes).
    access: HashMap<String, (Timestamp, String)>,
    refresh: HashMap<String, Refresh>,
    counter: u64,
    arrivals: std::collections::VecDeque<Timestamp>,
    /// Every token request: grant type and status.
    pub token_requests: Vec<(String, u16)>,
    /// Tokens revoked through the revoke endpoint.
    pub revoked: Vec<String>,
    /// Non-GET data requests (vitals must send none).
    pub violations: Vec<String>,
    /// 429s sent because the budget was spent or injected.
    pub rate_limited: u32,
}

/// What a route answers.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    fn json(status: u16, v: Value) -> Answer {
        Answer { status, body: v.to_string() }
    }
    fn into_response(self) -> Response {
        Response::builder().status(self.status).header("content-type", "application/json").body(Body::from(self.body)).unwrap()
    }
}

fn oauth_error(status: u16, error: &str, description: &str) -> Answer {
    Answer::json(status, json!({"error": error, "error_description": description}))
}

/// Every scope the server asks, joined as Google sends them back.
pub fn all_scopes() -> String {
    [ACTIVITY, METRICS, SLEEP].join(" ")
}

/// The scope a data type needs (the twin's reading of reference §3.1).
fn scope_of(t: &str) -> &'static str {
    match t {
        "sleep" => SLEEP,
        "steps"
        | "distance"
        | "active-energy-burned"
        | "floors"
        | "active-zone-minutes"
        | "exercise"
        | "daily-vo2-max"
        | "vo2-max"
        | "run-vo2-max"
        | "altitude"
        | "active-minutes"
        | "activity-level"
        | "sedentary-period"
        | "swim-lengths-data"
        | "time-in-heart-rate-zone" => ACTIVITY,
        _ => METRICS,
    }
}

fn pkce(verifier: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

impl GoogleHealth {
    pub fn now(&self) -> Timestamp {
        self.cfg.now.unwrap_or_else(Timestamp::now)
    }

    fn mint(&mut self, kind: &str) -> String {
        self.counter += 1;
        format!("ya29.twin-{kind}-{:08}-SECRET", self.counter)
    }

    fn after(&self, secs: i64) -> Timestamp {
        self.now().checked_add(jiff::SignedDuration::from_secs(secs)).unwrap_or(self.now())
    }

    /// A login issued straight to the person (a test that starts connected), as the server stores it.
    pub fn stored_login(&mut self, login: &str, scopes: &str) -> vitals_providers::accounts::Tokens {
        let (a, r) = (self.mint("access"), self.mint("refresh"));
        let expires = self.after(self.cfg.expires_in);
        self.access.insert(a.clone(), (expires, scopes.into()));
        self.refresh.insert(r.clone(), Refresh { scopes: scopes.into(), issued: self.now(), revoked: false });
        let mut extra = std::collections::BTreeMap::new();
        extra.insert(vitals_providers::providers::google_health::REFRESH_ISSUED.to_string(), self.now().as_second().to_string());
        vitals_providers::accounts::Tokens {
            access: vitals_providers::secret::Secret::new(a),
            refresh: Some(vitals_providers::secret::Secret::new(r)),
            expires_at: Some(expires.as_second()),
            scopes: scopes.split(' ').map(str::to_string).collect(),
            login: Some(login.into()),
            extra,
            ..Default::default()
        }
    }

    /// Every token issued (for secret sweeps).
    pub fn secrets(&self) -> Vec<String> {
        self.access.keys().chain(self.refresh.keys()).cloned().collect()
    }

    /// Expire every access token now (the next data request is a 401).
    pub fn expire_access(&mut self) {
        let past = self.after(-1);
        self.access.values_mut().for_each(|a| a.0 = past);
    }

    /// Kill every refresh token (the app's 7 days are over, or the person removed the app).
    pub fn kill_refresh(&mut self) {
        self.refresh.values_mut().for_each(|r| r.revoked = true);
    }

    /// The consent screen, consented at once: the redirect with a code, or Google's refusal.
    pub fn authorize(&mut self, q: &HashMap<String, String>) -> Result<String, String> {
        if q.get("client_id").map(String::as_str) != Some(CLIENT_ID) {
            return Err("Error 401: invalid_client. The OAuth client was not found.".into());
        }
        let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
        if redirect != self.cfg.redirect {
            return Err("Error 400: redirect_uri_mismatch".into());
        }
        let state = q.get("state").cloned().unwrap_or_default();
        let asked = q.get("scope").cloned().unwrap_or_default();
        let known = all_scopes();
        if asked.split(' ').any(|s| !known.split(' ').any(|k| k == s)) {
            return Ok(format!("{redirect}?error=invalid_scope&state={state}"));
        }
        let challenge = match (q.get("code_challenge"), q.get("code_challenge_method").map(String::as_str)) {
            (Some(c), Some("S256")) => c.clone(),
            _ => return Err("Error 400: invalid_request. code_challenge_method must be S256 (the twin requires PKCE)".into()),
        };
        let granted: Vec<&str> = asked.split(' ').filter(|s| self.cfg.grant_only.as_ref().is_none_or(|g| g.iter().any(|x| x == s))).collect();
        let code = self.mint("code");
        let offline = q.get("access_type").map(String::as_str) == Some("offline");
        self.codes.insert(code.clone(), Code { redirect: redirect.clone(), scopes: granted.join(" "), challenge, offline, used: false });
        Ok(format!("{redirect}?state={state}&code={code}&scope={}", url::form_urlencoded::byte_serialize(granted.join(" ").as_bytes()).collect::<String>()))
    }

    /// The token endpoint: the client in the form body, codes once with their verifier.
    pub fn token(&mut self, form: &HashMap<String, String>) -> Answer {
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        let a = self.token_answer(&grant, form);
        self.token_requests.push((grant, a.status));
        a
    }

    fn token_answer(&mut self, grant: &str, form: &HashMap<String, String>) -> Answer {
        if form.get("client_id").map(String::as_str) != Some(CLIENT_ID) || form.get("client_secret").map(String::as_str) != Some(CLIENT_SECRET) {
            return oauth_error(401, "invalid_client", "Unauthorized");
        }
        let access = |me: &mut GoogleHealth, scopes: &str| {
            let a = me.mint("access");
            let exp = me.after(me.cfg.expires_in);
            me.access.insert(a.clone(), (exp, scopes.to_string()));
            json!({"access_token": a, "expires_in": me.cfg.expires_in, "scope": scopes, "token_type": "Bearer"})
        };
        match grant {
            "authorization_code" => {
                let code = form.get("code").cloned().unwrap_or_default();
                let Some(c) = self.codes.get_mut(&code).filter(|c| !c.used) else {
                    return oauth_error(400, "invalid_grant", "Malformed auth code.");
                };
                c.used = true;
                if form.get("redirect_uri") != Some(&c.redirect) {
                    return oauth_error(400, "redirect_uri_mismatch", "Bad Request");
                }
                if form.get("code_verifier").map(|v| pkce(v)).as_deref() != Some(c.challenge.as_str()) {
                    return oauth_error(400, "invalid_grant", "Invalid code verifier.");
                }
                let (scopes, offline) = (c.scopes.clone(), c.offline);
                let mut body = access(self, &scopes);
                if offline {
                    let r = self.mint("refresh");
                    self.refresh.insert(r.clone(), Refresh { scopes: scopes.clone(), issued: self.now(), revoked: false });
                    body["refresh_token"] = json!(r);
                    if self.cfg.testing {
                        body["refresh_token_expires_in"] = json!(TESTING_LIFE_S - 1);
                    }
                }
                Answer::json(200, body)
            }
            "refresh_token" => {
                let rt = form.get("refresh_token").cloned().unwrap_or_default();
                let now = self.now();
                let testing = self.cfg.testing;
                let alive = self.refresh.get(&rt).filter(|r| {
                    let expired = testing && now.as_second() - r.issued.as_second() >= TESTING_LIFE_S;
                    !r.revoked && !expired
                });
                match alive.map(|r| r.scopes.clone()) {
                    // Google keeps the refresh token: none comes back.
                    Some(scopes) => Answer::json(200, access(self, &scopes)),
                    None => oauth_error(400, "invalid_grant", "Token has been expired or revoked."),
                }
            }
            _ => oauth_error(400, "unsupported_grant_type", "Invalid grant_type"),
        }
    }

    /// `POST /revoke?token=…`.
    pub fn revoke(&mut self, q: &HashMap<String, String>) -> Answer {
        let Some(t) = q.get("token").cloned() else {
            return oauth_error(400, "invalid_request", "Missing required parameter: token");
        };
        if let Some(r) = self.refresh.get_mut(&t) {
            r.revoked = true;
        }
        self.access.remove(&t);
        self.revoked.push(t);
        Answer::json(200, json!({}))
    }

    /// A data request below `/v4/`.
    pub fn serve(&mut self, method: &str, path: &str, q: &HashMap<String, String>, bearer: Option<&str>) -> Answer {
        if method != "GET" {
            self.violations.push(format!("{method} {path}"));
            return Answer { status: 405, body: error(405, "INVALID_ARGUMENT", "METHOD_NOT_ALLOWED", "Only GET is served").body };
        }
        let now = self.now();
        let Some((_, scopes)) = bearer.and_then(|b| self.access.get(b)).filter(|a| a.0 > now).cloned() else {
            let a = error(401, "UNAUTHENTICATED", "INVALID_AUTHENTICATOR", "Request had invalid authentication credentials. Token expired.");
            return Answer { status: 401, body: a.body };
        };
        let t = path.split('/').nth(5).unwrap_or("");
        if path.contains("/dataTypes/") && !scopes.split(' ').any(|s| s == scope_of(t)) {
            let a = error(403, "PERMISSION_DENIED", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "Request had insufficient authentication scopes.");
            return Answer { status: 403, body: a.body };
        }
        let minute = jiff::SignedDuration::try_from(self.cfg.minute).unwrap_or(jiff::SignedDuration::from_secs(60));
        let ago = now.checked_sub(minute).unwrap_or(now);
        while self.arrivals.front().is_some_and(|t| *t < ago) {
            self.arrivals.pop_front();
        }
        if self.cfg.faults.rate_limit_next > 0 || self.arrivals.len() >= self.cfg.per_minute {
            self.cfg.faults.rate_limit_next = self.cfg.faults.rate_limit_next.saturating_sub(1);
            self.rate_limited += 1;
            let a =
                error(429, "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user'.");
            return Answer { status: 429, body: a.body };
        }
        self.arrivals.push_back(now);
        if self.cfg.faults.server_error_next > 0 {
            self.cfg.faults.server_error_next -= 1;
            return Answer { status: 503, body: error(503, "UNAVAILABLE", "BACKEND_UNAVAILABLE", "The service is currently unavailable.").body };
        }
        if self.cfg.faults.reject_sleep_filter && t == "sleep" && q.contains_key("filter") {
            let why = "Invalid data point filter: sleep.interval.civil_end_time is not a supported member.";
            return Answer { status: 400, body: error(400, "INVALID_ARGUMENT", "INVALID_DATA_POINT_FILTER_DATA_TYPE_MEMBER", why).body };
        }
        let a = Api { person: &self.cfg.person, now, page_cap: self.cfg.page_cap }.answer(path, q);
        Answer { status: a.status, body: a.body }
    }
}

fn form(raw: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(raw.as_bytes()).into_owned().collect()
}

async fn authorize(AxState(s): AxState<Arc<crate::State>>, RawQuery(q): RawQuery) -> Response {
    match s.google_health.lock().unwrap().authorize(&form(&q.unwrap_or_default())) {
        Ok(to) => axum::response::Redirect::to(&to).into_response(),
        Err(e) => Answer::json(400, json!({"error": "invalid_request", "error_description": e})).into_response(),
    }
}

async fn token(AxState(s): AxState<Arc<crate::State>>, body: String) -> Response {
    s.google_health.lock().unwrap().token(&form(&body)).into_response()
}

async fn revoke(AxState(s): AxState<Arc<crate::State>>, RawQuery(q): RawQuery, body: String) -> Response {
    let mut f = form(&q.unwrap_or_default());
    f.extend(form(&body));
    s.google_health.lock().unwrap().revoke(&f).into_response()
}

async fn data(AxState(s): AxState<Arc<crate::State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap) -> Response {
    let path = uri.path().to_string();
    s.log.lock().unwrap().push(crate::LoggedRequest {
        method: m.to_string(),
        path: format!("{PREFIX}{path}"),
        query: q.clone().unwrap_or_default(),
        user_agent: h.get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_string),
    });
    let bearer = h.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::to_string);
    s.google_health.lock().unwrap().serve(m.as_str(), &path, &form(&q.unwrap_or_default()), bearer.as_deref()).into_response()
}

pub fn routes() -> Router<Arc<crate::State>> {
    Router::new().route("/o/oauth2/v2/auth", get(authorize)).route("/token", post(token)).route("/revoke", post(revoke)).route("/v4/{*rest}", any(data))
}

/// Which paths (below the prefix) the wire's faults count: the token endpoint apart from the data routes.
pub fn wire_route(path: &str) -> Option<crate::wire::Route> {
    crate::wire::counted(path, "/token", "/v4/")
}

use axum::response::IntoResponse as _;
