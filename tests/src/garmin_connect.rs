//! Garmin Connect's private API as the reference describes it (garmin/README.md §7): the SSO (the
//! sign-in page's cookie, the JSON login, a one-time code by email or app, bad credentials, and
//! Garmin's defences: 429 as JSON or HTML, 427, Cloudflare's 403, a CAPTCHA), the DI token endpoint
//! (Basic `client_id:`, service tickets single-use, refresh with or without rotation, client ids
//! that fail in order, 429) issuing JWTs, and the data routes vitals reads, with the samples'
//! shapes, `displayName` checked in the path, Bearer required ("Token is not active" once expired)
//! and injectable 429s. The person's data is a function of the day ([`Person`]), so tests can
//! compute what an answer must hold. Served under three prefixes of the twin: `/garmin-sso`,
//! `/diauth`, `/connectapi` ([`GarminConnect::env`]).
use base64::Engine as _;
use jiff::civil::Date;
use serde_json::{json, Value};
use std::collections::HashMap;

pub const EMAIL: &str = "runner@example.org";
pub const PASSWORD: &str = "gc-Passw0rd-that-must-never-leak";
pub const CODE: &str = "314159";
/// With a space and a dot: routes must URL-encode it.
pub const DISPLAY_NAME: &str = "runner 1.234";
pub const DEVICE: i64 = 3_000_000_002;
/// The Android app's OAuth1 consumer, as garth's bucket publishes it.
pub const CONSUMER_KEY: &str = "twin-consumer-key";
pub const CONSUMER_SECRET: &str = "twin-consumer-SECRET";

/// What the SSO does to the next login POST.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsoFault {
    #[default]
    None,
    Http429Json,
    Http429Html,
    Http427,
    Cloudflare403,
    Captcha,
    /// HTTP 200 whose JSON says `error.status-code` 429.
    Json429,
    /// The mobile login route is gone (404): the portal variant must be tried.
    MobileGone,
}

#[derive(Debug)]
pub struct GarminConnect {
    /// Ask for a one-time code at login; by `email` or an authenticator `app`.
    pub mfa: Option<&'static str>,
    pub sso_fault: SsoFault,
    /// Retry-After on an SSO 429, seconds.
    pub sso_retry_after_s: Option<u64>,
    /// Client ids whose ticket exchange is refused (400), to exercise the order.
    pub failing_clients: Vec<&'static str>,
    pub di_429: bool,
    /// The next N token requests (a DI refresh or ticket exchange, an OAuth1 exchange) get 429,
    /// with `token_retry_after_s` as their Retry-After.
    pub token_429_next: u32,
    pub token_retry_after_s: Option<u64>,
    /// The next N token requests get 503 with an HTML page.
    pub token_503_next: u32,
    /// A refresh hands back a new refresh token.
    pub rotate: bool,
    /// Lifetime of an issued access token, seconds.
    pub token_lifetime_s: i64,
    /// The next N data requests get 429.
    pub data_429_next: u32,
    /// Added to every data request, so the bench sees round trips.
    pub latency_ms: u64,
    /// Every DI ticket exchange answers 400 (flow B must take over).
    pub di_down: bool,
    /// OAuth1 tokens issued (token → secret), and the OAuth1 steps seen.
    pub oauth1: HashMap<String, String>,
    pub oauth1_steps: Vec<String>,
    // What was seen.
    pub sign_in_pages: Vec<String>,
    pub logins: Vec<String>,
    pub codes_checked: usize,
    pub exchanges: Vec<String>,
    pub refreshes: usize,
    pub data_requests: Vec<String>,
    /// Every header set a data request came with (for the native headers).
    pub data_headers: Vec<HashMap<String, String>>,
    sessions: HashMap<String, &'static str>,
    tickets: HashMap<String, String>,
    access: HashMap<String, i64>,
    refresh_tokens: HashMap<String, String>,
    counter: u64,
}

impl Default for GarminConnect {
    fn default() -> Self {
        GarminConnect {
            mfa: None,
            sso_fault: SsoFault::None,
            sso_retry_after_s: None,
            failing_clients: vec![],
            di_429: false,
            token_429_next: 0,
            token_retry_after_s: None,
            token_503_next: 0,
            rotate: true,
            token_lifetime_s: 86_400,
            data_429_next: 0,
            latency_ms: 0,
            di_down: false,
            oauth1: Default::default(),
            oauth1_steps: vec![],
            sign_in_pages: vec![],
            logins: vec![],
            codes_checked: 0,
            exchanges: vec![],
            refreshes: 0,
            data_requests: vec![],
            data_headers: vec![],
            sessions: Default::default(),
            tickets: Default::default(),
            access: Default::default(),
            refresh_tokens: Default::default(),
            counter: 0,
        }
    }
}

/// A twin reply.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    pub set_cookie: Option<String>,
    pub retry_after: Option<u64>,
}

/// The most days the sleep-score stats route answers at once (garth pages it by 28).
pub const SLEEP_SCORE_DAYS: usize = 28;

/// Garmin's "nothing for that day" on some metrics routes.
fn no_content() -> Reply {
    Reply { status: 204, content_type: "application/json", body: String::new(), set_cookie: None, retry_after: None }
}

fn j(status: u16, v: Value) -> Reply {
    Reply { status, content_type: "application/json", body: v.to_string(), set_cookie: None, retry_after: None }
}

pub fn jwt(client_id: &str, exp: i64, n: u64) -> String {
    let e = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.c2lnLXR3aW4", e(json!({"alg": "RS256", "typ": "JWT"})), e(json!({"client_id": client_id, "exp": exp, "n": n})))
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

impl GarminConnect {
    /// The variables that point vitals at this twin (`base`: the twin's address).
    pub fn env(base: &str) -> Vec<(&'static str, String)> {
        vec![
            ("VITALS_GARMIN_SSO_URL", format!("{base}/garmin-sso")),
            ("VITALS_GARMIN_CONNECT_API_URL", format!("{base}/connectapi")),
            ("VITALS_GARMIN_DI_TOKEN_URL", format!("{base}/diauth/di-oauth2-service/oauth/token")),
            ("VITALS_GARMIN_LOGIN_PAUSE_MS", "0".into()),
            ("VITALS_GARMIN_OAUTH_CONSUMER_URL", format!("{base}/garth/oauth_consumer.json")),
        ]
    }

    fn issue(&mut self, client: &str) -> (String, String) {
        self.counter += 1;
        let access = jwt(client, now() + self.token_lifetime_s, self.counter);
        let refresh = format!("gc-refresh-{:04}-SECRET", self.counter);
        self.access.insert(access.clone(), now() + self.token_lifetime_s);
        self.refresh_tokens.insert(refresh.clone(), client.to_string());
        (access, refresh)
    }

    /// Tokens as garminconnect would have saved them (valid at the twin).
    /// Every token this twin issued (access and refresh), for a sweep of what the server said.
    pub fn secrets(&self) -> Vec<String> {
        self.access.keys().chain(self.refresh_tokens.keys()).cloned().collect()
    }

    pub fn garminconnect_file(&mut self, client: &'static str) -> Value {
        let (a, r) = self.issue(client);
        json!({"di_token": a, "di_refresh_token": r, "di_client_id": client})
    }

    /// An access token the twin issued, made to expire (the refresh token stays good).
    pub fn expire_tokens(&mut self) {
        for exp in self.access.values_mut() {
            *exp = 0;
        }
    }

    pub fn sso(&mut self, method: &str, path: &str, query: &HashMap<String, String>, cookie: Option<&str>, body: &str) -> Reply {
        let session = cookie.and_then(|c| c.split(';').find_map(|p| p.trim().strip_prefix("SESSION=").map(str::to_string)));
        if method == "GET" && path.ends_with("/sign-in") {
            self.sign_in_pages.push(path.to_string());
            self.counter += 1;
            let id = format!("sso-session-{}", self.counter);
            self.sessions.insert(id.clone(), "page");
            return Reply {
                status: 200,
                content_type: "text/html",
                body: "<html><body>Sign in</body></html>".into(),
                set_cookie: Some(format!("SESSION={id}; Path=/; HttpOnly")),
                retry_after: None,
            };
        }
        if method != "POST" {
            return j(405, json!({"error": "method"}));
        }
        let portal = path.starts_with("/portal/");
        let service = query.get("service").cloned().unwrap_or_default();
        let Some(sid) = session.filter(|s| self.sessions.contains_key(s)) else {
            return j(403, json!({"error": "no sign-in session cookie"}));
        };
        if path.ends_with("/api/login") {
            self.logins.push(path.to_string());
            if !portal && self.sso_fault == SsoFault::MobileGone {
                return j(404, json!({"error": "Not Found"}));
            }
            let ra = self.sso_retry_after_s;
            let html = |status: u16, text: &str| Reply {
                status,
                content_type: "text/html",
                body: format!("<html><title>{text}</title></html>"),
                set_cookie: None,
                retry_after: ra,
            };
            match self.sso_fault {
                SsoFault::Http429Json => return Reply { retry_after: ra, ..j(429, json!({"error": {"status-code": "429"}})) },
                SsoFault::Http429Html => return html(429, "You are being rate limited"),
                SsoFault::Http427 => return j(427, json!({})),
                SsoFault::Cloudflare403 => return html(403, "Access denied | sso.garmin.com used Cloudflare to restrict access"),
                SsoFault::Json429 => return j(200, json!({"error": {"status-code": "429"}})),
                SsoFault::Captcha => {
                    return j(200, json!({"serviceTicketId": null, "responseStatus": {"type": "CAPTCHA_REQUIRED", "message": "", "httpStatus": "OK"}}))
                }
                _ => {}
            }
            let v: Value = serde_json::from_str(body).unwrap_or_default();
            if v["username"] != EMAIL || v["password"] != PASSWORD {
                return j(
                    401,
                    json!({"serviceTicketId": null, "responseStatus": {"type": "INVALID_USERNAME_PASSWORD", "message": "generalLoginInvalidUsernameOrPassword", "httpStatus": "UNAUTHORIZED"}, "customerMfaInfo": null}),
                );
            }
            if let Some(method) = self.mfa {
                self.sessions.insert(sid, "mfa");
                return j(
                    200,
                    json!({"serviceTicketId": null, "responseStatus": {"type": "MFA_REQUIRED", "message": "", "httpStatus": "OK"},
                    "customerMfaInfo": {"email": "ru****@example.org", "mfaLastMethodUsed": method, "defaultMfaMethod": null}}),
                );
            }
            return self.ticket(&service);
        }
        if path.ends_with("/api/mfa/verifyCode") {
            self.codes_checked += 1;
            let v: Value = serde_json::from_str(body).unwrap_or_default();
            if self.sessions.get(&sid) != Some(&"mfa") || v["mfaMethod"] != self.mfa.unwrap_or("") {
                return j(403, json!({"error": "no code was asked in this session"}));
            }
            if v["mfaVerificationCode"] != CODE {
                return j(400, json!({"responseStatus": {"type": "INVALID_MFA_CODE"}}));
            }
            self.sessions.insert(sid, "done");
            return self.ticket(&service);
        }
        j(404, json!({"error": "Not Found"}))
    }

    fn ticket(&mut self, service: &str) -> Reply {
        self.counter += 1;
        let t = format!("ST-{:07}-twin{}-sso", self.counter, self.counter);
        self.tickets.insert(t.clone(), service.to_string());
        j(
            200,
            json!({"serviceURL": service, "serviceTicketId": t, "responseStatus": {"type": "SUCCESSFUL", "message": "", "httpStatus": "OK"}, "customerMfaInfo": null, "authType": "CAS"}),
        )
    }

    /// The next token request's fault, if one is due (`token_503_next`, then `token_429_next`).
    fn token_fault(&mut self) -> Option<Reply> {
        if self.token_503_next > 0 {
            self.token_503_next -= 1;
            let page = "<html><title>503 Service Unavailable</title></html>".to_string();
            return Some(Reply { status: 503, content_type: "text/html", body: page, set_cookie: None, retry_after: None });
        }
        if self.token_429_next > 0 {
            self.token_429_next -= 1;
            return Some(Reply { retry_after: self.token_retry_after_s, ..j(429, json!({"error": "too many requests"})) });
        }
        None
    }

    pub fn di(&mut self, authorization: Option<&str>, body: &str) -> Reply {
        let f: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
        let basic = authorization
            .and_then(|a| a.strip_prefix("Basic "))
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .and_then(|b| String::from_utf8(b).ok());
        let client = f.get("client_id").cloned().unwrap_or_default();
        if basic.as_deref() != Some(&format!("{client}:")) {
            return j(401, json!({"error": "invalid_client"}));
        }
        let ticket = f.get("grant_type").map(String::as_str) == Some(vitals_providers::providers::garmin_connect::config::TICKET_GRANT);
        if ticket {
            self.exchanges.push(client.clone());
        }
        if self.di_429 {
            return j(429, json!({"error": "too many requests"}));
        }
        if let Some(fault) = self.token_fault() {
            return fault;
        }
        match f.get("grant_type").map(String::as_str) {
            Some("refresh_token") => {
                let r = f.get("refresh_token").cloned().unwrap_or_default();
                if self.refresh_tokens.get(&r) != Some(&client) {
                    return j(400, json!({"error": "invalid_grant"}));
                }
                self.refreshes += 1;
                let (a, new_r) = self.issue(&client);
                if self.rotate {
                    self.refresh_tokens.remove(&r);
                    j(200, json!({"access_token": a, "token_type": "bearer", "refresh_token": new_r, "expires_in": self.token_lifetime_s}))
                } else {
                    self.refresh_tokens.remove(&new_r);
                    j(200, json!({"access_token": a, "token_type": "bearer", "expires_in": self.token_lifetime_s}))
                }
            }
            Some(vitals_providers::providers::garmin_connect::config::TICKET_GRANT) => {
                if self.di_down || self.failing_clients.contains(&client.as_str()) {
                    return j(400, json!({"error": "unauthorized_client"}));
                }
                let t = f.get("service_ticket").cloned().unwrap_or_default();
                match self.tickets.remove(&t) {
                    Some(service) if Some(&service) == f.get("service_url") => {}
                    _ => return j(400, json!({"error": "invalid_grant", "error_description": "ticket unknown, used or for another service"})),
                }
                let (a, r) = self.issue(&client);
                j(
                    200,
                    json!({"access_token": a, "token_type": "bearer", "refresh_token": r, "expires_in": self.token_lifetime_s, "scope": "CONNECT_READ CONNECT_WRITE"}),
                )
            }
            _ => j(400, json!({"error": "unsupported_grant_type"})),
        }
    }

    /// garth's OAuth1 files, valid at the twin: `(oauth1_token.json, oauth2_token.json)`, the
    /// OAuth2 token expiring in `expires_in_s`.
    pub fn garth_files(&mut self, expires_in_s: i64) -> (Value, Value) {
        self.counter += 1;
        let (t, secret) = (format!("oauth1-token-{}", self.counter), format!("oauth1-SECRET-{}", self.counter));
        self.oauth1.insert(t.clone(), secret.clone());
        let (access, _) = self.issue_for("garth", expires_in_s);
        (
            json!({"oauth_token": t, "oauth_token_secret": secret, "mfa_token": null, "mfa_expiration_timestamp": null, "domain": "garmin.com"}),
            json!({"scope": "CONNECT_READ", "token_type": "Bearer", "access_token": access, "refresh_token": "never-used", "expires_in": expires_in_s,
                "expires_at": now() + expires_in_s}),
        )
    }

    fn issue_for(&mut self, client: &str, lifetime: i64) -> (String, String) {
        let keep = self.token_lifetime_s;
        self.token_lifetime_s = lifetime;
        let out = self.issue(client);
        self.token_lifetime_s = keep;
        out
    }

    /// The OAuth header's parameters, when it is one signed with the twin's consumer.
    fn oauth_header(authorization: Option<&str>) -> Option<HashMap<String, String>> {
        let rest = authorization?.strip_prefix("OAuth ")?;
        let p: HashMap<String, String> = rest
            .split(',')
            .filter_map(|kv| {
                let (k, v) = kv.trim().split_once('=')?;
                let v = v.trim_matches('"');
                Some((k.to_string(), url::form_urlencoded::parse(format!("x={v}").as_bytes()).next()?.1.to_string()))
            })
            .collect();
        (p.get("oauth_consumer_key").map(String::as_str) == Some(CONSUMER_KEY) && p.contains_key("oauth_signature")).then_some(p)
    }

    /// Flow B: `GET /oauth-service/oauth/preauthorized` and `POST /oauth-service/oauth/exchange/user/2.0`.
    pub fn oauth1_route(&mut self, method: &str, path: &str, q: &HashMap<String, String>, authorization: Option<&str>, body: &str) -> Reply {
        let Some(header) = Self::oauth_header(authorization) else {
            return j(401, json!({"error": "not signed with the app's consumer"}));
        };
        let text = |s: String| Reply { status: 200, content_type: "text/plain;charset=utf-8", body: s, set_cookie: None, retry_after: None };
        match (method, path) {
            ("GET", "/oauth-service/oauth/preauthorized") => {
                self.oauth1_steps.push("preauthorized".into());
                let t = q.get("ticket").cloned().unwrap_or_default();
                match self.tickets.remove(&t) {
                    Some(service) if Some(&service) == q.get("login-url") => {}
                    _ => return j(401, json!({"error": "ticket unknown, used or for another service"})),
                }
                self.counter += 1;
                let (tok, secret) = (format!("oauth1-token-{}", self.counter), format!("oauth1-SECRET-{}", self.counter));
                self.oauth1.insert(tok.clone(), secret.clone());
                text(format!("oauth_token={tok}&oauth_token_secret={secret}"))
            }
            ("POST", "/oauth-service/oauth/exchange/user/2.0") => {
                let f: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
                let login = f.get("audience").map(String::as_str) == Some("GARMIN_CONNECT_MOBILE_ANDROID_DI");
                self.oauth1_steps.push(if login { "exchange (login)".into() } else { "exchange (renewal)".into() });
                if let Some(fault) = self.token_fault() {
                    return fault;
                }
                if header.get("oauth_token").is_none_or(|t| !self.oauth1.contains_key(t)) {
                    return j(401, json!({"error": "unknown OAuth1 token"}));
                }
                let lifetime = self.token_lifetime_s;
                let (access, _) = self.issue_for("oauth1", lifetime);
                j(
                    200,
                    json!({"scope": "CONNECT_READ CONNECT_WRITE", "jti": "j", "access_token": access, "token_type": "bearer", "refresh_token": "never-used",
                    "expires_in": lifetime, "refresh_token_expires_in": 2591999}),
                )
            }
            _ => j(404, json!({"error": "Not Found"})),
        }
    }

    /// A data route (`path` below `/connectapi`).
    pub fn data(&mut self, path: &str, q: &HashMap<String, String>, headers: HashMap<String, String>) -> Reply {
        self.data_requests.push(path.to_string());
        let bearer = headers.get("authorization").and_then(|a| a.strip_prefix("Bearer ")).map(str::to_string);
        self.data_headers.push(headers);
        if bearer.and_then(|b| self.access.get(&b).copied()).is_none_or(|exp| exp <= now()) {
            return j(401, json!({"message": "Token is not active", "error": "UnauthorizedException"}));
        }
        if self.data_429_next > 0 {
            self.data_429_next -= 1;
            return Reply { retry_after: Some(1), ..j(429, json!({"message": "Too many requests", "error": "TooManyRequestsException"})) };
        }
        Person.serve(path, q)
    }
}

/// The twin's Garmin Connect person: each day's values a function of the day.
pub struct Person;

fn n(d: Date) -> i64 {
    (d - Date::constant(1970, 1, 1)).get_days() as i64
}

impl Person {
    /// A data route's answer (`path` below `/connectapi`, after the twin checked the token): the
    /// person's data in Garmin's shapes, 404 for a route Garmin Connect does not have.
    pub fn serve(&self, path: &str, q: &HashMap<String, String>) -> Reply {
        let seg: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|s| url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes()).next().map(|(_, v)| v.to_string()).unwrap_or_default())
            .collect();
        let seg: Vec<&str> = seg.iter().map(String::as_str).collect();
        let p = self;
        let range = |a: &str, b: &str| -> Option<Vec<Date>> {
            let (a, b): (Date, Date) = (a.parse().ok()?, b.parse().ok()?);
            let mut out = vec![];
            let mut d = a;
            while d <= b {
                out.push(d);
                d = d.tomorrow().ok()?;
            }
            Some(out)
        };
        let param = |k: &str| q.get(k).map(String::as_str).unwrap_or("");
        let bad = || j(400, json!({"message": "bad date"}));
        let not_found = || j(404, json!({"message": "Not Found", "error": "NotFoundException"}));
        let name_ok = |n: &str| n == DISPLAY_NAME;
        match seg.as_slice() {
            ["userprofile-service", "socialProfile"] => {
                j(200, json!({"id": 4000001, "profileId": 90000001, "displayName": DISPLAY_NAME, "fullName": "Test Runner", "userName": "runner"}))
            }
            ["userprofile-service", "userprofile", "user-settings"] => j(200, json!({"id": 90000001, "userData": {"measurementSystem": "metric"}})),
            ["metrics-service", "metrics", "trainingreadiness", a, b] => match range(a, b) {
                Some(days) => j(200, Value::Array(days.iter().flat_map(|d| p.readiness(*d)).collect())),
                None => bad(),
            },
            ["metrics-service", "metrics", "trainingstatus", "aggregated", d] => match d.parse::<Date>() {
                Ok(d) => j(200, p.training_status(d)),
                Err(_) => bad(),
            },
            ["metrics-service", "metrics", "maxmet", "daily", a, b] => match range(a, b) {
                Some(days) => j(200, Value::Array(days.iter().filter_map(|d| p.vo2max(*d)).collect())),
                None => bad(),
            },
            ["metrics-service", "metrics", "racepredictions", "daily", n] if name_ok(n) => match range(param("fromCalendarDate"), param("toCalendarDate")) {
                Some(days) if days.len() <= 366 => j(200, Value::Array(days.iter().map(|d| p.race_predictions(*d)).collect())),
                Some(_) => j(400, json!({"message": "range over 366 days"})),
                None => bad(),
            },
            ["metrics-service", "metrics", "endurancescore"] => match param("calendarDate").parse::<Date>() {
                Ok(d) => p.endurance(d).map(|v| j(200, v)).unwrap_or_else(no_content),
                Err(_) => bad(),
            },
            ["metrics-service", "metrics", "hillscore", "stats"] if param("aggregation") == "daily" => match range(param("startDate"), param("endDate")) {
                Some(days) => j(200, p.hill_stats(&days)),
                None => bad(),
            },
            ["wellness-service", "wellness", "daily", "respiration", d] => match d.parse::<Date>() {
                Ok(d) => j(200, p.respiration(d)),
                Err(_) => bad(),
            },
            ["wellness-service", "stats", "daily", "sleep", "score", a, b] => match range(a, b) {
                Some(days) if days.len() <= SLEEP_SCORE_DAYS => j(200, Value::Array(days.iter().filter_map(|d| p.sleep_score(*d)).collect())),
                Some(_) => j(400, json!({"message": "range over 28 days"})),
                None => bad(),
            },
            ["biometric-service", "stats", metric, "range", a, b] => match range(a, b) {
                Some(days) => j(200, Value::Array(days.iter().filter_map(|d| p.threshold(*d, metric)).collect())),
                None => bad(),
            },
            ["personalrecord-service", "personalrecord", "prs", n] if name_ok(n) => j(200, p.records()),
            ["activity-service", "activity", id, "splits"] => id.parse::<i64>().map(|id| j(200, p.splits(id))).unwrap_or_else(|_| not_found()),
            ["activity-service", "activity", id, "typedsplits"] => id.parse::<i64>().map(|id| j(200, p.typed_splits(id))).unwrap_or_else(|_| not_found()),
            _ => not_found(),
        }
    }

    /// The endurance score of day `d`: drifting between well trained and expert, none on every
    /// eleventh day (Garmin's 204). Thresholds and shape as a described capture shows them.
    pub fn endurance(&self, d: Date) -> Option<Value> {
        if n(d) % 11 == 0 {
            return None;
        }
        let score = self.endurance_score(d);
        Some(json!({"userProfilePK": 90000001, "deviceId": DEVICE, "calendarDate": d.to_string(), "overallScore": score,
            "classification": if score >= 7300 { 5 } else { 4 }, "feedbackPhrase": 78, "primaryTrainingDevice": true, "gaugeLowerLimit": 3570,
            "classificationLowerLimitIntermediate": 5100, "classificationLowerLimitTrained": 5800, "classificationLowerLimitWellTrained": 6600,
            "classificationLowerLimitExpert": 7300, "classificationLowerLimitSuperior": 8100, "classificationLowerLimitElite": 8800, "gaugeUpperLimit": 10560,
            "contributors": [{"activityTypeId": 1, "group": null, "contribution": 12.5}, {"activityTypeId": null, "group": 0, "contribution": 80.1},
                {"activityTypeId": null, "group": 8, "contribution": 7.4}]}))
    }
    pub fn endurance_score(&self, d: Date) -> i64 {
        6_700 + n(d) % 40 * 25
    }

    /// The hill score of day `d` on the primary watch (none every ninth day); every fifth day an
    /// older watch scored it too, lower, as not the primary training device.
    pub fn hill(&self, d: Date) -> Vec<Value> {
        if n(d) % 9 == 0 {
            return vec![];
        }
        let entry = |device: i64, primary: bool, score: i64| {
            json!({"userProfilePK": 90000001, "deviceId": device, "calendarDate": d.to_string(), "overallScore": score, "strengthScore": 30 + n(d) % 10,
                "enduranceScore": 70 + n(d) % 15, "hillScoreClassificationId": 4, "hillScoreFeedbackPhraseId": 30 + n(d) % 6, "vo2Max": null,
                "vo2MaxPreciseValue": null, "primaryTrainingDevice": primary})
        };
        let mut v = vec![entry(DEVICE, true, self.hill_score(d))];
        if n(d) % 5 == 0 {
            v.insert(0, entry(1111, false, 12));
        }
        v
    }
    pub fn hill_score(&self, d: Date) -> i64 {
        55 + n(d) % 20
    }
    /// The stats route over `days`: newest first, with the period's average and maximum.
    pub fn hill_stats(&self, days: &[Date]) -> Value {
        let list: Vec<Value> = days.iter().rev().flat_map(|d| self.hill(*d)).collect();
        let scores: Vec<i64> = days.iter().filter(|d| !self.hill(**d).is_empty()).map(|d| self.hill_score(*d)).collect();
        let first = days.first().map(|d| d.to_string()).unwrap_or_default();
        let avg = if scores.is_empty() { Value::Null } else { json!(scores.iter().sum::<i64>() / scores.len() as i64) };
        json!({"userProfilePK": 90000001, "startDate": first, "endDate": days.last().map(|d| d.to_string()), "periodAvgScore": {first: avg},
            "maxScore": scores.iter().max(), "hillScoreDTOList": list})
    }

    /// The breathing of day `d` at UTC−6: a reading every 2 minutes from midnight, lower in the
    /// night's first six hours; now and then Garmin's no-reading value (-2); every thirteenth day
    /// nothing worn (every value null, no readings). The summary values are the readings' own.
    pub fn respiration(&self, d: Date) -> Value {
        let midnight_ms = (n(d) * 86_400 + 6 * 3_600) * 1_000;
        let readings: Vec<(i64, f64)> = if n(d) % 13 == 0 {
            vec![]
        } else {
            (0..720).map(|i: i64| (midnight_ms + i * 120_000, if i % 97 == 5 { -2.0 } else { self.breathing(d, i) })).collect()
        };
        let valid: Vec<(i64, f64)> = readings.iter().copied().filter(|(_, v)| *v >= 0.0).collect();
        let night = |t: i64| t < midnight_ms + 6 * 3_600_000;
        let mean = |xs: Vec<f64>| if xs.is_empty() { Value::Null } else { json!((xs.iter().sum::<f64>() / xs.len() as f64 * 10.0).round() / 10.0) };
        let extreme = |pick: fn(f64, f64) -> f64| valid.iter().map(|(_, v)| *v).reduce(pick).map(Value::from).unwrap_or(Value::Null);
        let asleep = !valid.is_empty();
        json!({"userProfilePK": 90000001, "calendarDate": d.to_string(),
            "startTimestampGMT": format!("{d}T06:00:00.0"), "endTimestampGMT": format!("{}T06:00:00.0", d.tomorrow().unwrap()),
            "startTimestampLocal": format!("{d}T00:00:00.0"), "endTimestampLocal": format!("{}T00:00:00.0", d.tomorrow().unwrap()),
            "sleepStartTimestampGMT": asleep.then(|| format!("{d}T06:00:00.0")), "sleepEndTimestampGMT": asleep.then(|| format!("{d}T12:00:00.0")),
            "sleepStartTimestampLocal": asleep.then(|| format!("{d}T00:00:00.0")), "sleepEndTimestampLocal": asleep.then(|| format!("{d}T06:00:00.0")),
            "tomorrowSleepStartTimestampGMT": "1970-01-01T00:00:00.000", "tomorrowSleepEndTimestampGMT": "1970-01-01T00:00:00.000",
            "tomorrowSleepStartTimestampLocal": "1970-01-01T00:00:00.000", "tomorrowSleepEndTimestampLocal": "1970-01-01T00:00:00.000",
            "lowestRespirationValue": extreme(f64::min), "highestRespirationValue": extreme(f64::max),
            "avgWakingRespirationValue": mean(valid.iter().filter(|(t, _)| !night(*t)).map(|(_, v)| *v).collect()),
            "avgSleepRespirationValue": mean(valid.iter().filter(|(t, _)| night(*t)).map(|(_, v)| *v).collect()),
            "avgTomorrowSleepRespirationValue": asleep.then_some(12.0),
            "respirationValueDescriptorsDTOList": [{"key": "timestamp", "index": 0}, {"key": "respiration", "index": 1}],
            "respirationValuesArray": readings.iter().map(|(t, v)| json!([t, v])).collect::<Vec<_>>(),
            "respirationAveragesValueDescriptorDTOList": [{"respirationAveragesValueDescriptorIndex": 0, "respirationAveragesValueDescriptionKey": "timestamp"}],
            "respirationAveragesValuesArray": [], "respirationVersion": 200})
    }
    /// Breaths per minute of reading `i` (every 2 minutes from midnight) of day `d`.
    pub fn breathing(&self, d: Date, i: i64) -> f64 {
        if i < 180 {
            11.0 + ((i + n(d)) % 3) as f64
        } else {
            13.0 + ((i + n(d)) % 6) as f64
        }
    }

    /// The sleep score of the night that ends on `d`; every sixth day Garmin lists none.
    pub fn sleep_score(&self, d: Date) -> Option<Value> {
        (n(d) % 6 != 0).then(|| json!({"calendarDate": d.to_string(), "value": 50 + n(d) % 45}))
    }
    /// Two snapshots a day: the morning report and an evening update.
    pub fn readiness(&self, d: Date) -> Vec<Value> {
        let score = 30 + n(d) % 60;
        let snap = |time: &str, context: &str, score: i64| {
            json!({"userProfilePK": 90000001, "calendarDate": d.to_string(), "timestampLocal": format!("{d}T{time}.0"), "timestamp": format!("{d}T{time}.0"),
                "deviceId": DEVICE, "level": if score >= 50 { "MODERATE" } else { "LOW" }, "feedbackShort": "RECOVERY_IN_PROGRESS", "feedbackLong": "MOD_RT_MOD_SS_GOOD",
                "score": score, "sleepScore": 70 + n(d) % 25, "sleepScoreFactorPercent": 76, "recoveryTime": 600 + n(d) % 900, "recoveryTimeFactorPercent": 45,
                "acwrFactorPercent": 70, "acuteLoad": 400 + n(d) % 200, "stressHistoryFactorPercent": 84, "hrvFactorPercent": 99, "hrvWeeklyAverage": 40 + n(d) % 10,
                "sleepHistoryFactorPercent": 80, "validSleep": true, "inputContext": context, "primaryActivityTracker": true})
        };
        vec![snap("21:50:17", "UPDATE_REALTIME_VARIABLES", score - 5), snap("07:10:00", "AFTER_WAKEUP_RESET", score)]
    }

    pub fn acute_load(&self, d: Date) -> i64 {
        300 + n(d) % 150
    }

    /// Computed every day, on the primary device (a second, older device has null).
    pub fn training_status(&self, d: Date) -> Value {
        json!({"userId": 90000001,
            "mostRecentTrainingLoadBalance": {"metricsTrainingLoadBalanceDTOMap": {DEVICE.to_string(): {"calendarDate": d.to_string(), "deviceId": DEVICE,
                "monthlyLoadAerobicLow": 573.4, "monthlyLoadAerobicHigh": 554.6, "monthlyLoadAnaerobic": 43.5, "monthlyLoadAerobicLowTargetMin": 197,
                "monthlyLoadAerobicLowTargetMax": 460, "monthlyLoadAerobicHighTargetMin": 283, "monthlyLoadAerobicHighTargetMax": 546,
                "monthlyLoadAnaerobicTargetMin": 0, "monthlyLoadAnaerobicTargetMax": 262, "trainingBalanceFeedbackPhrase": "BALANCED", "primaryTrainingDevice": true}},
                "recordedDevices": [{"deviceId": DEVICE, "deviceName": "fenix 7X Pro Sapphire Solar"}]},
            "mostRecentTrainingStatus": {"latestTrainingStatusData": {"1111": null, DEVICE.to_string(): {"calendarDate": d.to_string(), "sinceDate": "2025-05-31",
                "trainingStatus": 7, "deviceId": DEVICE, "sport": "RUNNING", "trainingStatusFeedbackPhrase": "PRODUCTIVE_6",
                "acuteTrainingLoadDTO": {"acwrPercent": 57, "acwrStatus": "OPTIMAL", "dailyTrainingLoadAcute": self.acute_load(d), "dailyTrainingLoadChronic": 300,
                    "maxTrainingLoadChronic": 450.0, "minTrainingLoadChronic": 240.0, "dailyAcuteChronicWorkloadRatio": 1.3}, "primaryTrainingDevice": true}},
                "recordedDevices": [{"deviceId": DEVICE, "deviceName": "fenix 7X Pro Sapphire Solar"}]}})
    }

    /// Updated every third day.
    pub fn vo2max(&self, d: Date) -> Option<Value> {
        (n(d) % 3 == 0).then(|| {
            json!({"userId": 90000001, "generic": {"calendarDate": d.to_string(), "vo2MaxPreciseValue": self.vo2(d), "vo2MaxValue": self.vo2(d).round(), "fitnessAge": 35},
                "cycling": null})
        })
    }
    pub fn vo2(&self, d: Date) -> f64 {
        44.0 + (n(d) % 20) as f64 / 10.0
    }

    pub fn five_k_s(&self, d: Date) -> i64 {
        1150 + n(d) % 60
    }
    pub fn race_predictions(&self, d: Date) -> Value {
        let f = self.five_k_s(d);
        json!({"userId": 90000001, "calendarDate": d.to_string(), "time5K": f, "time10K": f * 2 + 60, "timeHalfMarathon": f * 9 / 2, "timeMarathon": f * 10})
    }

    /// A new threshold every seventh day; speed in Garmin's tenths of m/s.
    pub fn threshold(&self, d: Date, metric: &str) -> Option<Value> {
        if n(d) % 7 != 0 {
            return None;
        }
        let value = match metric {
            "lactateThresholdSpeed" => json!(self.threshold_speed_m_s(d) / 10.0),
            "lactateThresholdHeartRate" => json!(self.threshold_hr(d)),
            _ => return None,
        };
        Some(json!({"from": d.to_string(), "until": d.to_string(), "value": value}))
    }
    pub fn threshold_speed_m_s(&self, d: Date) -> f64 {
        4.0 + (n(d) % 5) as f64 / 10.0
    }
    pub fn threshold_hr(&self, d: Date) -> i64 {
        168 + n(d) % 6
    }

    pub fn records(&self) -> Value {
        json!([
            {"id": 6000001, "typeId": 16, "activityId": 0, "activityName": null, "value": 2.0, "prStartTimeGmtFormatted": "2023-08-05T06:00:00.0", "prStartTimeLocalFormatted": "2023-08-05T00:00:00.0"},
            {"id": 6000002, "typeId": 3, "activityId": 10000000003i64, "activityName": "Testville - Threshold", "value": 1413.665,
             "activityStartDateTimeLocalFormatted": "2022-12-20T09:16:17.0", "prStartTimeGmtFormatted": "2022-12-20T15:26:30.0", "prStartTimeLocalFormatted": null},
            {"id": 6000003, "typeId": 7, "activityId": 10000000004i64, "activityName": "Long run", "value": 30123.4, "prStartTimeLocalFormatted": "2024-04-14T07:00:00.0"}
        ])
    }

    pub fn splits(&self, id: i64) -> Value {
        let lap = |i: i64| {
            json!({"lapIndex": i, "distance": 1000.0, "duration": 300.0 + i as f64, "movingDuration": 298.0, "elapsedDuration": 301.0,
            "averageHR": 150 + i, "maxHR": 165, "averageSpeed": 3.3, "intensityType": "ACTIVE", "startLatitude": 60.17, "startLongitude": 24.94,
            "endLatitude": 60.171, "endLongitude": 24.941, "startTimeGMT": "2026-01-08T14:10:21.0"})
        };
        json!({"activityId": id, "lapDTOs": [lap(1), lap(2), lap(3)], "eventDTOs": []})
    }
    pub fn typed_splits(&self, id: i64) -> Value {
        json!({"activityId": id, "splits": [{"type": "RWD_RUN", "distance": 3000.0, "duration": 903.0, "startLatitude": 60.17, "startLongitude": 24.94},
            {"type": "RWD_WALK", "distance": 120.0, "duration": 80.0}]})
    }
}
