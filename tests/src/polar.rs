//! Polar AccessLink v3 as the reference describes it (`polar/README.md` §7): OAuth with HTTP Basic
//! client authentication and single-use codes (a reused code is refused and kills what was issued
//! for it), no refresh token, registration by `POST /v3/users` (200, 409, 403 without consents)
//! before any data, 204/404/`[]` empties, retention, the spellings the live API is reported to
//! use, `RateLimit-*` headers and 429. The data is the server's sample person
//! (`vitals_providers::providers::polar::sample`), so tests can compute what the answer must hold.
use axum::body::Body;
use axum::response::Response;
use base64::Engine as _;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use vitals_providers::providers::polar::sample::{Api, Dialect, Person};

pub const CLIENT_ID: &str = "polar-twin-client";
pub const CLIENT_SECRET: &str = "polar-twin-secret-SECRET";
pub const USER_ID: u64 = 12_345_678;

/// Faults for the next requests; counters count down.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PolarFaults {
    /// The next N data requests get 429 with `Retry-After: retry_after_s` and spent `RateLimit-*` headers.
    pub rate_limit_next: u32,
    pub retry_after_s: u64,
    /// The next N data requests answer 200 with headers that say the budget is now spent.
    pub quota_spent_next: u32,
    /// The next N data requests get 503.
    pub server_error_next: u32,
    /// The next N data requests get 404 with no body (Polar's "no data for that date").
    pub not_found_next: u32,
    /// Added to every data request (the benchmark's network).
    pub latency_ms: u64,
    /// The next N registrations (`POST /v3/users`) get 503.
    pub registration_503_next: u32,
}

#[derive(Clone, Debug)]
pub struct PolarConfig {
    pub person: Person,
    /// The twin's clock; None is real time.
    pub now: Option<Timestamp>,
    pub dialect: Dialect,
    /// Whether the user has accepted Polar's mandatory consents (else registration is 403).
    pub consents: bool,
    /// Exercises uploaded before registration are hidden (Polar's rule). A test user registered
    /// long ago sees the whole 30 days; false makes registration "now".
    pub registered_long_ago: bool,
    /// Send `RateLimit-Usage/Limit/Reset` on every data answer.
    pub rate_headers: bool,
    pub faults: PolarFaults,
}

impl Default for PolarConfig {
    fn default() -> Self {
        PolarConfig {
            person: Person::new("Etc/GMT+6"),
            now: None,
            dialect: Dialect::default(),
            consents: true,
            registered_long_ago: true,
            rate_headers: true,
            faults: PolarFaults::default(),
        }
    }
}

struct Code {
    redirect: Option<String>,
    used: bool,
    /// Tokens issued for this code (a second use revokes them).
    issued: Vec<String>,
}

/// The twin's Polar: configuration, OAuth state, registrations, and what it was asked.
#[derive(Default)]
pub struct Polar {
    pub cfg: PolarConfig,
    codes: HashMap<String, Code>,
    /// Live access tokens → user id.
    tokens: HashMap<String, u64>,
    /// When each user registered with the app.
    pub registered: HashMap<u64, Timestamp>,
    /// Every registration attempt's status, and every token request's.
    pub registrations: Vec<u16>,
    pub token_requests: Vec<u16>,
    counter: u64,
    /// Data requests answered (what `RateLimit-Usage` counts).
    data_requests: u64,
}

/// What a Polar route answers.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    fn json(status: u16, v: Value) -> Answer {
        Answer { status, content_type: "application/json", headers: vec![], body: v.to_string().into_bytes() }
    }
    fn error(status: u16, kind: &str, message: &str) -> Answer {
        Answer::json(status, json!({"timestamp": "2026-01-05T09:12:44.123Z", "status": status, "errorType": kind, "message": message, "corrId": "twin"}))
    }
    pub fn into_response(self) -> Response {
        let mut b = Response::builder().status(self.status);
        if !self.body.is_empty() {
            b = b.header("content-type", self.content_type);
        }
        for (k, v) in self.headers {
            b = b.header(k, v);
        }
        b.body(Body::from(self.body)).unwrap()
    }
}

fn user_object(member: &str, registered: Timestamp) -> Value {
    json!({"polar-user-id": USER_ID, "member-id": member, "registration-date": registered.to_string(), "first-name": "Test",
        "last-name": "Runner", "birthdate": "1985-09-06", "gender": "MALE", "weight": 70.5, "height": 178.0, "extra-info": []})
}

impl Polar {
    pub fn now(&self) -> Timestamp {
        self.cfg.now.unwrap_or_else(Timestamp::now)
    }

    fn next_token(&mut self) -> String {
        self.counter += 1;
        format!("polar-twin-access-{:08}-SECRET", self.counter)
    }

    /// A token issued straight to the user, registered (a test that starts connected).
    pub fn grant(&mut self) -> String {
        let t = self.next_token();
        self.tokens.insert(t.clone(), USER_ID);
        let when = self.registration_time();
        self.registered.insert(USER_ID, when);
        t
    }

    /// [`Polar::grant`] as vitals stores a finished Polar login (`login` names it), for a test
    /// or the bench that starts connected. Polar's tokens last ten years and carry the user id.
    pub fn stored_login(&mut self, login: &str) -> vitals_providers::accounts::Tokens {
        vitals_providers::accounts::Tokens {
            access: vitals_providers::secret::Secret::new(self.grant()),
            expires_at: Some(Timestamp::now().as_second() + 315_359_999),
            scopes: vec!["accesslink.read_all".into()],
            extra: [("x_user_id".to_string(), USER_ID.to_string())].into_iter().collect(),
            login: Some(login.into()),
            ..Default::default()
        }
    }

    /// The live access tokens (a test searches output for them).
    pub fn tokens(&self) -> Vec<String> {
        self.tokens.keys().cloned().collect()
    }

    /// The user removed the app in Polar Flow: every token dies, the registration stays.
    pub fn revoke_all(&mut self) {
        self.tokens.clear();
    }

    fn registration_time(&self) -> Timestamp {
        if self.cfg.registered_long_ago {
            self.now() - jiff::SignedDuration::from_hours(24 * 400)
        } else {
            self.now()
        }
    }

    /// The authorize page: the user consents at once; a code bound to the redirect, if one was sent.
    pub fn authorize(&mut self, q: &HashMap<String, String>, default_redirect: &str) -> Result<String, String> {
        if q.get("client_id").map(String::as_str) != Some(CLIENT_ID) {
            return Err("unknown client_id".into());
        }
        if q.get("response_type").map(String::as_str) != Some("code") {
            return Err("response_type must be code".into());
        }
        self.counter += 1;
        let code = format!("polar-code-{}", self.counter);
        let redirect = q.get("redirect_uri").cloned();
        let to = redirect.clone().unwrap_or_else(|| default_redirect.to_string());
        self.codes.insert(code.clone(), Code { redirect, used: false, issued: vec![] });
        let mut url = url::Url::parse(&to).map_err(|e| e.to_string())?;
        url.query_pairs_mut().append_pair("code", &code);
        if let Some(s) = q.get("state") {
            url.query_pairs_mut().append_pair("state", s);
        }
        Ok(url.to_string())
    }

    /// The token endpoint: Basic client authentication, the code once, `redirect_uri` checked only
    /// when it was sent at authorize; no refresh token.
    pub fn token(&mut self, authorization: Option<&str>, form: &HashMap<String, String>) -> Answer {
        let expected = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}")));
        let answer = if authorization != Some(expected.as_str()) {
            Answer::json(401, json!({"error": "invalid_client", "error_description": "Bad client credentials"}))
        } else if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
            Answer::json(400, json!({"error": "unsupported_grant_type"}))
        } else {
            let code = form.get("code").cloned().unwrap_or_default();
            match self.codes.get_mut(&code) {
                None => Answer::json(400, json!({"error": "invalid_grant", "error_description": "Invalid authorization code"})),
                Some(c) if c.used => {
                    // A reused code is refused, and what was issued for it dies (reported, unconfirmed).
                    let dead = std::mem::take(&mut c.issued);
                    for t in dead {
                        self.tokens.remove(&t);
                    }
                    Answer::json(400, json!({"error": "invalid_grant", "error_description": "Authorization code already used"}))
                }
                Some(c) if c.redirect.is_some() && c.redirect.as_ref() != form.get("redirect_uri") => {
                    c.used = true;
                    Answer::json(400, json!({"error": "invalid_grant", "error_description": "redirect_uri mismatch"}))
                }
                Some(_) => {
                    let t = self.next_token();
                    let c = self.codes.get_mut(&code).expect("present");
                    c.used = true;
                    c.issued.push(t.clone());
                    self.tokens.insert(t.clone(), USER_ID);
                    Answer::json(200, json!({"access_token": t, "token_type": "bearer", "expires_in": 315_359_999, "x_user_id": USER_ID}))
                }
            }
        };
        self.token_requests.push(answer.status);
        answer
    }

    fn rate_headers(&self, spent: bool) -> Vec<(&'static str, String)> {
        if !self.cfg.rate_headers && !spent {
            return vec![];
        }
        let used = if spent { 500 } else { self.data_requests % 500 };
        vec![("ratelimit-usage", format!("{used},{}", used + 40)), ("ratelimit-limit", "500,5000".into()), ("ratelimit-reset", "1,80000".into())]
    }

    /// A request to `/v3/...` with its method, query or JSON body, and bearer.
    pub fn serve(&mut self, method: &str, path: &str, q: &HashMap<String, String>, body: &str, bearer: Option<&str>) -> Answer {
        let Some(user) = bearer.and_then(|b| self.tokens.get(b)).copied() else {
            return Answer::error(401, "UNAUTHORIZED", "Unauthorized");
        };
        match (method, path.trim_end_matches('/')) {
            ("POST", "/v3/users") => return self.register(user, body),
            ("DELETE", p) if p.starts_with("/v3/users/") => {
                // De-registration kills the token: the twin has it so a test can prove it is never sent.
                self.registered.remove(&user);
                self.tokens.retain(|_, u| *u != user);
                return Answer { status: 204, content_type: "", headers: vec![], body: vec![] };
            }
            ("GET", _) => {}
            _ => return Answer::error(405, "METHOD_NOT_ALLOWED", "read routes are GET"),
        }
        let Some(registered) = self.registered.get(&user).copied() else {
            return Answer::error(403, "FORBIDDEN", "User has not accepted all mandatory consents");
        };
        let f = &mut self.cfg.faults;
        if f.rate_limit_next > 0 {
            f.rate_limit_next -= 1;
            let mut a = Answer::error(429, "TOO_MANY_REQUESTS", "Rate limit exceeded");
            a.headers = self.rate_headers(true);
            a.headers.push(("retry-after", self.cfg.faults.retry_after_s.to_string()));
            return a;
        }
        if f.server_error_next > 0 {
            f.server_error_next -= 1;
            return Answer::error(503, "SERVICE_UNAVAILABLE", "Service Unavailable");
        }
        if f.not_found_next > 0 {
            f.not_found_next -= 1;
            return Answer { status: 404, content_type: "", headers: vec![], body: vec![] };
        }
        let spent = f.quota_spent_next > 0;
        if spent {
            f.quota_spent_next -= 1;
        }
        self.data_requests += 1;
        let api = Api { person: &self.cfg.person, now: self.now(), dialect: self.cfg.dialect, registered: Some(registered) };
        let a = api.answer(path, q);
        Answer { status: a.status, content_type: a.content_type, headers: self.rate_headers(spent), body: a.body }
    }

    fn register(&mut self, user: u64, body: &str) -> Answer {
        let member = serde_json::from_str::<Value>(body).ok().and_then(|v| v.get("member-id").and_then(Value::as_str).map(str::to_string));
        let down = self.cfg.faults.registration_503_next > 0;
        if down {
            self.cfg.faults.registration_503_next -= 1;
        }
        let a = match member {
            _ if down => Answer::error(503, "SERVICE_UNAVAILABLE", "Service Unavailable"),
            None => Answer::error(400, "BAD_REQUEST", "member-id is required"),
            Some(_) if !self.cfg.consents => Answer::error(403, "FORBIDDEN", "User has not accepted all mandatory consents"),
            Some(_) if self.registered.contains_key(&user) => Answer::error(409, "CONFLICT", "User already registered to partner or duplicated member-id"),
            Some(m) => {
                let when = self.registration_time();
                self.registered.insert(user, when);
                Answer::json(200, user_object(&m, when))
            }
        };
        self.registrations.push(a.status);
        a
    }
}

/// A partial change to the configuration, as `POST /_twin/polar` takes it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolarPatch {
    pub now: Option<Timestamp>,
    pub consents: Option<bool>,
    pub kebab_nested: Option<bool>,
    pub very_high_kebab: Option<bool>,
    pub hr_bare_array: Option<bool>,
    pub faults: Option<PolarFaults>,
}

impl PolarPatch {
    pub fn apply(self, c: &mut PolarConfig) {
        if self.now.is_some() {
            c.now = self.now;
        }
        if let Some(v) = self.consents {
            c.consents = v;
        }
        if let Some(v) = self.kebab_nested {
            c.dialect.kebab_nested = v;
        }
        if let Some(v) = self.very_high_kebab {
            c.dialect.very_high_kebab = v;
        }
        if let Some(v) = self.hr_bare_array {
            c.dialect.hr_bare_array = v;
        }
        if let Some(v) = self.faults {
            c.faults = v;
        }
    }
}

/// Which of Polar's paths (below its prefix) the wire's faults count: the token endpoint apart
/// from the data routes, and never the authorize page.
pub fn wire_route(path: &str) -> Option<crate::wire::Route> {
    crate::wire::counted(path, "/v2/oauth2/token", "/v3/")
}
