//! WHOOP API v2 as the reference describes it (`whoop/README.md` §11), mounted under `/whoop`:
//! an ORY-Hydra-like OAuth server (exact redirect match, a `state` of at least eight characters,
//! single-use codes, a refresh token only with `offline`, refresh tokens that rotate and die on
//! reuse, the client in the form body), data routes that want a live bearer with the route's
//! scope, `X-RateLimit-*` headers and 429 past a per-minute budget, `DELETE /v2/user/access`
//! recorded as a violation (vitals must never send it), and the data of the server's sample
//! member (`vitals_providers::providers::whoop::sample`) with WHOOP's paging, filtering and quirks.
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
use vitals_providers::providers::whoop::sample::{Api, Person, Quirks};

/// Where this twin mounts: every WHOOP host (authorize, token, API) is below it.
pub const PREFIX: &str = "/whoop";
pub const CLIENT_ID: &str = "whoop-twin-client";
pub const CLIENT_SECRET: &str = "whoop-twin-secret-SECRET";
/// The redirect the twin's app has registered (the server's default).
pub const REDIRECT: &str = "http://localhost:9878/callback";
pub const SCOPES: &str = "offline read:recovery read:cycles read:sleep read:workout read:profile read:body_measurement";

/// Faults of WHOOP's own shape for the next data requests; counters count down.
#[derive(Clone, Debug, Default)]
pub struct WhoopFaults {
    /// 429 with `X-RateLimit-Reset: 1` (and `Retry-After: 1` when `retry_after` is set).
    pub rate_limit_next: u32,
    /// `Retry-After` on every 429, the injected ones and the budget's.
    pub retry_after: bool,
    pub server_error_next: u32,
}

#[derive(Clone, Debug)]
pub struct WhoopConfig {
    pub person: Person,
    /// The twin's clock; None is real time.
    pub now: Option<Timestamp>,
    pub quirks: Quirks,
    /// Seconds an access token lives (WHOOP: 3600).
    pub expires_in: i64,
    /// Data requests a minute before 429 (WHOOP: 100, per app).
    pub per_minute: usize,
    /// How long the twin's minute lasts (a real one unless a test runs the budget's windows faster,
    /// as the server's `VITALS_RATE_TIME_SCALE` does: [`crate::Twin::scale_minutes`]).
    pub minute: std::time::Duration,
    /// At most this many records a page whatever `limit` says (to make short listings page).
    pub page_cap: Option<usize>,
    /// A reused refresh token also kills the token it was rotated into (the worst case).
    pub revoke_family_on_reuse: bool,
    pub faults: WhoopFaults,
}

impl Default for WhoopConfig {
    fn default() -> Self {
        WhoopConfig {
            person: Person::new("America/New_York"),
            now: None,
            quirks: Quirks::default(),
            expires_in: 3600,
            per_minute: 100,
            minute: std::time::Duration::from_secs(60),
            page_cap: None,
            revoke_family_on_reuse: false,
            faults: WhoopFaults::default(),
        }
    }
}

struct Code {
    redirect: String,
    scopes: String,
    used: bool,
}

struct Access {
    expires: Timestamp,
    scopes: String,
}

/// The twin's WHOOP: configuration, OAuth state, and what it was asked.
#[derive(Default)]
pub struct Whoop {
    pub cfg: WhoopConfig,
    codes: HashMap<String, Code>,
    access: HashMap<String, Access>,
    /// Refresh token → (scopes, live, the refresh token it was rotated into).
    refresh: HashMap<String, (String, bool, Option<String>)>,
    counter: u64,
    /// When recent data requests arrived (the per-minute budget).
    arrivals: std::collections::VecDeque<Timestamp>,
    /// Every token request: grant type and status.
    pub token_requests: Vec<(String, u16)>,
    /// Calls vitals must never make (a DELETE of the user's access).
    pub violations: Vec<String>,
    /// Data requests served: method, path and query.
    pub served: Vec<String>,
    /// 429s sent because the per-minute budget was spent (not injected ones).
    pub rate_limited: u32,
}

/// What a WHOOP route answers.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Answer {
    fn json(status: u16, v: Value) -> Answer {
        Answer { status, headers: vec![], body: v.to_string() }
    }
    fn into_response(self) -> Response {
        let mut b = Response::builder().status(self.status);
        if !self.body.is_empty() {
            b = b.header("content-type", "application/json");
        }
        for (k, v) in self.headers {
            b = b.header(k, v);
        }
        b.body(Body::from(self.body)).unwrap()
    }
}

/// Hydra's error reply.
fn oauth_error(status: u16, error: &str, description: &str) -> Answer {
    Answer::json(status, json!({"error": error, "error_description": description, "status_code": status}))
}

impl Whoop {
    pub fn now(&self) -> Timestamp {
        self.cfg.now.unwrap_or_else(Timestamp::now)
    }

    fn mint(&mut self, kind: &str) -> String {
        self.counter += 1;
        format!("whoop-twin-{kind}-{:08}-SECRET", self.counter)
    }

    /// A pair issued straight to the member (a test that starts connected): (access, refresh).
    pub fn grant(&mut self, scopes: &str) -> (String, String) {
        let (a, r) = (self.mint("access"), self.mint("refresh"));
        let expires = self.now().checked_add(jiff::SignedDuration::from_secs(self.cfg.expires_in)).unwrap_or(self.now());
        self.access.insert(a.clone(), Access { expires, scopes: scopes.into() });
        self.refresh.insert(r.clone(), (scopes.into(), true, None));
        (a, r)
    }

    /// A stored login for the server's token store, as a connected member has it.
    pub fn stored_login(&mut self, login: &str) -> vitals_providers::accounts::Tokens {
        let (a, r) = self.grant(SCOPES);
        vitals_providers::accounts::Tokens {
            access: vitals_providers::secret::Secret::new(a),
            refresh: Some(vitals_providers::secret::Secret::new(r)),
            expires_at: Some(self.now().as_second() + self.cfg.expires_in),
            scopes: SCOPES.split(' ').map(str::to_string).collect(),
            login: Some(login.into()),
            ..Default::default()
        }
    }

    /// Every access token and refresh token issued (for secret sweeps).
    pub fn secrets(&self) -> Vec<String> {
        self.access.keys().chain(self.refresh.keys()).cloned().collect()
    }

    /// Expire every access token now (the next data request is a 401).
    pub fn expire_access(&mut self) {
        let past = self.now().checked_sub(jiff::SignedDuration::from_secs(1)).unwrap_or(self.now());
        self.access.values_mut().for_each(|a| a.expires = past);
    }

    /// The authorize page consents at once: the redirect with a code, or Hydra's refusal.
    pub fn authorize(&mut self, q: &HashMap<String, String>) -> Result<String, String> {
        let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
        if q.get("client_id").map(String::as_str) != Some(CLIENT_ID) {
            return Err("The requested OAuth 2.0 Client does not exist.".into());
        }
        if redirect != REDIRECT {
            return Err("The 'redirect_uri' parameter does not match any of the OAuth 2.0 Client's pre-registered redirect urls.".into());
        }
        let state = q.get("state").cloned().unwrap_or_default();
        let sep = if redirect.contains('?') { '&' } else { '?' };
        if state.len() < 8 {
            return Ok(format!("{redirect}{sep}error=invalid_state&error_description=The+state+is+missing+or+does+not+have+enough+characters"));
        }
        let scopes = q.get("scope").cloned().unwrap_or_default();
        if scopes.split(' ').any(|s| !SCOPES.split(' ').any(|k| k == s)) {
            return Ok(format!("{redirect}{sep}error=invalid_scope&state={state}"));
        }
        let code = self.mint("code");
        self.codes.insert(code.clone(), Code { redirect, scopes, used: false });
        Ok(format!("{}{sep}code={code}&state={state}", q["redirect_uri"]))
    }

    fn issue(&mut self, scopes: &str) -> Answer {
        let a = self.mint("access");
        let expires = self.now().checked_add(jiff::SignedDuration::from_secs(self.cfg.expires_in)).unwrap_or(self.now());
        self.access.insert(a.clone(), Access { expires, scopes: scopes.into() });
        let mut body = json!({"access_token": a, "expires_in": self.cfg.expires_in, "scope": scopes, "token_type": "bearer"});
        if scopes.split(' ').any(|s| s == "offline") {
            let r = self.mint("refresh");
            self.refresh.insert(r.clone(), (scopes.into(), true, None));
            body["refresh_token"] = json!(r);
        }
        Answer::json(200, body)
    }

    /// The token endpoint: the client in the form body, codes once, refresh tokens once.
    pub fn token(&mut self, form: &HashMap<String, String>) -> Answer {
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        let a = self.token_answer(&grant, form);
        self.token_requests.push((grant, a.status));
        a
    }

    fn token_answer(&mut self, grant: &str, form: &HashMap<String, String>) -> Answer {
        if form.get("client_id").map(String::as_str) != Some(CLIENT_ID) || form.get("client_secret").map(String::as_str) != Some(CLIENT_SECRET) {
            return oauth_error(
                401,
                "invalid_client",
                "Client authentication failed (e.g., unknown client, no client authentication included, or unsupported authentication method).",
            );
        }
        match grant {
            "authorization_code" => {
                let code = form.get("code").cloned().unwrap_or_default();
                let Some(c) = self.codes.get_mut(&code) else {
                    return oauth_error(400, "invalid_grant", "The provided authorization grant is invalid, expired, or revoked.");
                };
                if c.used {
                    return oauth_error(400, "invalid_grant", "The authorization code has already been used.");
                }
                c.used = true;
                if form.get("redirect_uri") != Some(&c.redirect) {
                    return oauth_error(400, "invalid_grant", "The 'redirect_uri' from this request does not match the one from the authorize request.");
                }
                let scopes = c.scopes.clone();
                self.issue(&scopes)
            }
            "refresh_token" => {
                let rt = form.get("refresh_token").cloned().unwrap_or_default();
                match self.refresh.get(&rt).cloned() {
                    Some((scopes, true, _)) => {
                        let answer = self.issue(&scopes);
                        let next = serde_json::from_str::<Value>(&answer.body).ok().and_then(|v| v["refresh_token"].as_str().map(str::to_string));
                        self.refresh.insert(rt, (scopes, false, next));
                        answer
                    }
                    Some((_, false, next)) => {
                        if let Some(n) = next.filter(|_| self.cfg.revoke_family_on_reuse) {
                            if let Some(e) = self.refresh.get_mut(&n) {
                                e.1 = false;
                            }
                        }
                        oauth_error(400, "invalid_grant", "The refresh token has already been used.")
                    }
                    None => oauth_error(400, "invalid_grant", "The provided authorization grant is invalid, expired, or revoked."),
                }
            }
            _ => oauth_error(400, "unsupported_grant_type", "The authorization grant type is not supported by the authorization server."),
        }
    }

    fn rate_headers(&self) -> Vec<(&'static str, String)> {
        let left = self.cfg.per_minute.saturating_sub(self.arrivals.len());
        // Seconds until the oldest request of the minute leaves it.
        let minute = self.cfg.minute.as_secs().max(1) as i64;
        let reset = self.arrivals.front().map_or(minute, |t| minute - (self.now().as_second() - t.as_second()).clamp(0, minute - 1));
        vec![
            ("x-ratelimit-limit", format!("{}, {};window={minute}, 10000;window=86400", self.cfg.per_minute, self.cfg.per_minute)),
            ("x-ratelimit-remaining", left.to_string()),
            ("x-ratelimit-reset", reset.to_string()),
        ]
    }

    /// The scope a data route needs.
    fn scope_of(route: &str) -> &'static str {
        match route {
            "/v2/cycle" => "read:cycles",
            "/v2/recovery" => "read:recovery",
            "/v2/activity/sleep" => "read:sleep",
            "/v2/activity/workout" => "read:workout",
            "/v2/user/profile/basic" => "read:profile",
            _ => "read:body_measurement",
        }
    }

    /// A data request under `/developer`.
    pub fn serve(&mut self, method: &str, route: &str, q: &HashMap<String, String>, bearer: Option<&str>) -> Answer {
        self.served.push(format!("{method} {route}?{}", url::form_urlencoded::Serializer::new(String::new()).extend_pairs(q).finish()));
        if method != "GET" {
            self.violations.push(format!("{method} {route}"));
            return if method == "DELETE" && route == "/v2/user/access" {
                Answer { status: 204, headers: vec![], body: String::new() }
            } else {
                Answer::json(405, json!({"message": "Method Not Allowed"}))
            };
        }
        let now = self.now();
        let Some(access) = bearer.and_then(|b| self.access.get(b)).filter(|a| a.expires > now) else {
            return Answer::json(401, json!({"message": "Authorization was not valid"}));
        };
        if !access.scopes.split(' ').any(|s| s == Whoop::scope_of(route)) {
            return Answer::json(401, json!({"message": "Authorization was not valid"}));
        }
        let minute = jiff::SignedDuration::try_from(self.cfg.minute).unwrap_or(jiff::SignedDuration::from_secs(60));
        let minute_ago = now.checked_sub(minute).unwrap_or(now);
        while self.arrivals.front().is_some_and(|t| *t < minute_ago) {
            self.arrivals.pop_front();
        }
        let injected = self.cfg.faults.rate_limit_next > 0;
        if injected || self.arrivals.len() >= self.cfg.per_minute {
            if !injected {
                self.rate_limited += 1;
            }
            self.cfg.faults.rate_limit_next = self.cfg.faults.rate_limit_next.saturating_sub(1);
            let mut headers = self.rate_headers();
            headers.retain(|(k, _)| *k != "x-ratelimit-remaining");
            headers.push(("x-ratelimit-remaining", "0".into()));
            if injected {
                // An injected 429 frees in a second; one past the budget says when the minute
                // frees, as WHOOP's headers do.
                headers.retain(|(k, _)| *k != "x-ratelimit-reset");
                headers.push(("x-ratelimit-reset", "1".into()));
            }
            if self.cfg.faults.retry_after {
                headers.push(("retry-after", "1".into()));
            }
            return Answer { status: 429, headers, body: json!({"message": "Too Many Requests"}).to_string() };
        }
        self.arrivals.push_back(now);
        if self.cfg.faults.server_error_next > 0 {
            self.cfg.faults.server_error_next -= 1;
            return Answer::json(500, json!({"message": "Internal Server Error"}));
        }
        let mut q = q.clone();
        if let (Some(cap), Some(l)) = (self.cfg.page_cap, q.get("limit").and_then(|l| l.parse::<usize>().ok())) {
            if l <= vitals_providers::providers::whoop::sample::MAX_LIMIT {
                q.insert("limit".into(), l.min(cap).to_string());
            }
        }
        let a = Api { person: &self.cfg.person, now, quirks: self.cfg.quirks }.answer(route, &q);
        Answer { status: a.status, headers: self.rate_headers(), body: a.body }
    }
}

fn form(raw: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(raw.as_bytes()).into_owned().collect()
}

async fn authorize(AxState(s): AxState<Arc<crate::State>>, RawQuery(q): RawQuery) -> Response {
    match s.whoop.lock().unwrap().authorize(&form(&q.unwrap_or_default())) {
        Ok(to) => axum::response::Redirect::to(&to).into_response(),
        Err(e) => Answer::json(400, json!({"error": "invalid_request", "error_description": e})).into_response(),
    }
}

async fn token(AxState(s): AxState<Arc<crate::State>>, body: String) -> Response {
    s.whoop.lock().unwrap().token(&form(&body)).into_response()
}

async fn data(AxState(s): AxState<Arc<crate::State>>, m: Method, uri: axum::http::Uri, RawQuery(q): RawQuery, h: HeaderMap) -> Response {
    // Inside the nest the prefix is already off the path.
    let path = uri.path();
    let route = path.strip_prefix(PREFIX).unwrap_or(path).strip_prefix("/developer").unwrap_or("").to_string();
    s.log.lock().unwrap().push(crate::LoggedRequest {
        method: m.to_string(),
        path: format!("{PREFIX}{path}"),
        query: q.clone().unwrap_or_default(),
        user_agent: h.get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_string),
    });
    let bearer = h.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::to_string);
    s.whoop.lock().unwrap().serve(m.as_str(), &route, &form(&q.unwrap_or_default()), bearer.as_deref()).into_response()
}

use axum::response::IntoResponse as _;

/// WHOOP's routes, below [`PREFIX`].
pub fn routes() -> Router<Arc<crate::State>> {
    Router::new().route("/oauth/oauth2/auth", get(authorize)).route("/oauth/oauth2/token", post(token)).route("/developer/{*rest}", any(data))
}

/// Which of WHOOP's paths (below the prefix) the wire's faults count: the token endpoint apart
/// from the data routes, and never the authorize page.
pub fn wire_route(path: &str) -> Option<crate::wire::Route> {
    crate::wire::counted(path, "/oauth/oauth2/token", "/developer/")
}
