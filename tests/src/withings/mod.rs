//! Withings' API as the reference describes it (§9): POST (or GET) with `action` in the query or
//! the form, the token in the header or an `access_token` parameter, HTTP 200 and `{status, body}`
//! for every outcome, scopes per service, 120 requests a minute per application (status 601), and
//! the faults the real service has. The data itself is the server's sample person
//! (`vitals_providers::providers::withings::sample`), served with a small page size so paging is exercised.
pub mod oauth;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use vitals_providers::providers::withings::sample::{self, Api, Order, Person};

/// The recorded text of Withings' answer to an unknown or expired token (reference §1).
pub const INVALID_TOKEN: &str = "XRequestID: Not provided invalid_token: The access token provided is invalid";

/// Faults for the next requests; counters count down.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WithingsFaults {
    pub latency_ms: u64,
    /// The next N data requests get status 601 (too many requests).
    pub rate_limit_next: u32,
    /// The next N get status 522 (timeout).
    pub timeout_next: u32,
    /// The next N get a real HTTP 502 with an HTML page.
    pub html_502_next: u32,
    /// The next N get HTTP 200 with half a JSON body.
    pub malformed_next: u32,
}

#[derive(Clone, Debug)]
pub struct WithingsConfig {
    pub person: Person,
    pub page_size: usize,
    /// The order pages come in (None: as Withings is believed to send them, `getmeas` newest first).
    pub page_order: Option<Order>,
    /// The twin's clock (token expiry, code lifetime, "today"); None is real time.
    pub now: Option<Timestamp>,
    /// Requests per minute per client_id before status 601; None turns the limit off.
    pub rate_per_minute: Option<usize>,
    /// How long the twin's minute lasts (a real one unless a test runs the budget's windows
    /// faster, as the server's `VITALS_RATE_TIME_SCALE` does: [`crate::Twin::scale_minutes`]).
    pub minute: std::time::Duration,
    /// `body.wait_seconds` sent with a 601 (a field the reference marks unverified).
    pub wait_seconds: Option<u64>,
    pub faults: WithingsFaults,
}

impl Default for WithingsConfig {
    fn default() -> Self {
        WithingsConfig {
            person: Person::new("Etc/GMT+6", true),
            page_size: 25,
            page_order: None,
            now: None,
            rate_per_minute: Some(120),
            minute: std::time::Duration::from_secs(60),
            wait_seconds: Some(1),
            faults: WithingsFaults::default(),
        }
    }
}

impl WithingsConfig {
    pub fn now(&self) -> Timestamp {
        self.now.unwrap_or_else(Timestamp::now)
    }
}

/// The twin's Withings: its configuration, its OAuth server, and the request times per client.
#[derive(Default)]
pub struct Withings {
    pub cfg: WithingsConfig,
    pub oauth: oauth::OAuth,
    arrivals: HashMap<String, VecDeque<std::time::Instant>>,
    /// Requests refused because an application went past its 120 a minute (a client that paces
    /// itself never sees one).
    pub over_budget: usize,
}

/// What a Withings route answers: HTTP status, content type, body.
pub struct Answer {
    pub http: u16,
    pub content_type: &'static str,
    pub body: String,
}

fn ok(v: Value) -> Answer {
    Answer { http: 200, content_type: "application/json", body: v.to_string() }
}

/// The scope a service needs (reference §2.4: heart's list and get are under `user.metrics`,
/// sleep's get under `user.activity`); getdevice works with any.
fn scope_for(path: &str, action: &str) -> Option<&'static str> {
    match (path.trim_matches('/'), action) {
        ("measure", "getmeas") | ("v2/heart", _) => Some("user.metrics"),
        (_, "getactivity" | "getworkouts" | "getintradayactivity" | "getsummary" | "get") => Some("user.activity"),
        _ => None,
    }
}

impl Withings {
    /// A data request to `path` with its merged query and form parameters.
    pub fn serve(&mut self, path: &str, params: &HashMap<String, String>, bearer: Option<&str>) -> Answer {
        let now = self.cfg.now();
        let Some(grant) = bearer.and_then(|b| self.oauth.use_access(b, now)) else {
            return ok(sample::error(401, INVALID_TOKEN));
        };
        let action = params.get("action").map(String::as_str).unwrap_or_default();
        if let Some(needed) = scope_for(path, action) {
            if !grant.scope.split(',').any(|s| s.trim() == needed) {
                return ok(sample::error(214, "Unauthorized: the token's scope does not cover this service"));
            }
        }
        if self.over_budget(&grant.client_id) {
            self.over_budget += 1;
            return self.too_many();
        }
        let f = &mut self.cfg.faults;
        if f.rate_limit_next > 0 {
            f.rate_limit_next -= 1;
            return self.too_many();
        }
        if f.timeout_next > 0 {
            f.timeout_next -= 1;
            return ok(sample::error(522, "Timeout"));
        }
        if f.html_502_next > 0 {
            f.html_502_next -= 1;
            return Answer { http: 502, content_type: "text/html", body: "<html><body><h1>502 Bad Gateway</h1></body></html>".into() };
        }
        let api = Api { person: &self.cfg.person, page_size: self.cfg.page_size, now, order: self.cfg.page_order };
        let mut answer = ok(api.answer(path, params));
        if f.malformed_next > 0 {
            f.malformed_next -= 1;
            answer.body.truncate(answer.body.len() / 2);
        }
        answer
    }

    fn too_many(&self) -> Answer {
        let body = match self.cfg.wait_seconds {
            Some(w) => json!({"wait_seconds": w}),
            None => json!({}),
        };
        ok(json!({"status": 601, "body": body, "error": "Too Many Requests"}))
    }

    /// Count this request against its application's minute; true when over the limit.
    fn over_budget(&mut self, client: &str) -> bool {
        let Some(limit) = self.cfg.rate_per_minute else {
            return false;
        };
        let now = std::time::Instant::now();
        let minute = self.cfg.minute;
        let q = self.arrivals.entry(client.to_string()).or_default();
        while q.front().is_some_and(|t| now.duration_since(*t) >= minute) {
            q.pop_front();
        }
        if q.len() >= limit {
            return true;
        }
        q.push_back(now);
        false
    }
}

/// A partial change to the configuration, as `POST /_twin/withings` takes it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WithingsPatch {
    pub page_size: Option<usize>,
    pub page_order: Option<Option<Order>>,
    pub now: Option<Timestamp>,
    pub rate_per_minute: Option<Option<usize>>,
    pub sleep_device: Option<bool>,
    /// Nights ending before this day in Withings' older sleep summary format (no total, no
    /// `sleep_latency`: `durationtosleep`).
    pub older_sleep_before: Option<jiff::civil::Date>,
    pub faults: Option<WithingsFaults>,
}

impl WithingsPatch {
    pub fn apply(self, c: &mut WithingsConfig) {
        if let Some(v) = self.page_size {
            c.page_size = v;
        }
        if let Some(v) = self.page_order {
            c.page_order = v;
        }
        if self.now.is_some() {
            c.now = self.now;
        }
        if let Some(v) = self.rate_per_minute {
            c.rate_per_minute = v;
        }
        if let Some(v) = self.sleep_device {
            c.person.sleep_device = v;
        }
        if self.older_sleep_before.is_some() {
            c.person.older_sleep_before = self.older_sleep_before;
        }
        if let Some(v) = self.faults {
            c.faults = v;
        }
    }
}
