//! Garmin's Personal API as the reference describes it (`garmin/personal-api.md` §10): the key
//! exchange (`ApiKey` scheme, valid / expired / deleted keys), tokens that expire (24 h by default,
//! on the twin's clock), every route with its range limit (a longer range is 400), per-day
//! placeholders, activity paging newest first, the FIT in a ZIP, 404 off the allowlist, and 429 with
//! `Retry-After` when more than two requests are in flight. The data is the server's sample person
//! (`vitals_providers::providers::garmin::sample`), so tests can compute what an answer must hold.
use jiff::Timestamp;
use serde_json::json;
use std::collections::HashMap;
use vitals_providers::providers::garmin::sample::{Api, Person};

pub const KEY: &str = "garmin-twin-key-0123456789-SECRET";
pub const EXPIRED_KEY: &str = "garmin-twin-key-expired-SECRET";
pub const CHINA_KEY: &str = "garmin-twin-key-china-SECRET";

#[derive(Clone, Debug)]
pub struct GarminConfig {
    pub person: Person,
    /// The twin's clock; None is real time.
    pub now: Option<Timestamp>,
    /// Lifetime of an issued token, seconds.
    pub token_lifetime_s: i64,
    /// Requests in flight at once before a 429.
    pub max_in_flight: usize,
    pub retry_after_s: u64,
    /// Added to every data request, so concurrency shows.
    pub latency_ms: u64,
    /// The exchange's reply spells its fields the camelCase way.
    pub camel_reply: bool,
}

impl Default for GarminConfig {
    fn default() -> Self {
        GarminConfig {
            person: Person::new("Etc/GMT+6"),
            now: None,
            token_lifetime_s: 86_400,
            max_in_flight: 2,
            retry_after_s: 1,
            latency_ms: 0,
            camel_reply: false,
        }
    }
}

#[derive(Default)]
pub struct Garmin {
    pub cfg: GarminConfig,
    /// Keys the user deleted at Garmin Connect.
    pub deleted: Vec<String>,
    tokens: HashMap<String, Timestamp>,
    counter: u64,
    /// Requests being answered now.
    pub in_flight: usize,
    /// The most requests ever in flight at once.
    pub peak_in_flight: usize,
    /// Every exchange's status, and every data request's.
    pub exchanges: Vec<u16>,
    pub data_requests: usize,
    pub rate_limited: usize,
    /// The next exchanges answer 429 with these `Retry-After`s (seconds), one each.
    pub exchange_429: std::collections::VecDeque<u64>,
}

/// What a Garmin route answers.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub retry_after: Option<u64>,
    pub body: Vec<u8>,
}

impl Answer {
    fn json(status: u16, v: serde_json::Value) -> Answer {
        Answer { status, content_type: "application/json", retry_after: None, body: v.to_string().into_bytes() }
    }
}

impl Garmin {
    pub fn now(&self) -> Timestamp {
        self.cfg.now.unwrap_or_else(Timestamp::now)
    }

    /// `POST …/personal-api-key/token` with `Authorization: ApiKey <key>`.
    pub fn exchange(&mut self, authorization: Option<&str>) -> Answer {
        let key = authorization.and_then(|a| a.strip_prefix("ApiKey ")).unwrap_or_default();
        let a = if let Some(after) = self.exchange_429.pop_front() {
            Answer { status: 429, content_type: "application/json", retry_after: Some(after), body: br#"{"message":"Too Many Requests"}"#.to_vec() }
        } else if key == CHINA_KEY {
            Answer::json(526, json!({"error": "TOKEN_EXCHANGE_FAILED"}))
        } else if key != KEY || self.deleted.iter().any(|d| d == key) {
            Answer::json(401, json!({"message": "Invalid API key"}))
        } else {
            self.counter += 1;
            let t = format!("garmin-twin-token-{:06}-SECRET", self.counter);
            self.tokens.insert(t.clone(), self.now() + jiff::SignedDuration::from_secs(self.cfg.token_lifetime_s));
            Answer::json(
                200,
                if self.cfg.camel_reply {
                    json!({"accessToken": t, "expiresIn": self.cfg.token_lifetime_s})
                } else {
                    json!({"access_token": t, "token_type": "Bearer", "expires_in": self.cfg.token_lifetime_s})
                },
            )
        };
        self.exchanges.push(a.status);
        a
    }

    /// Every token stops working (a test of the renewal after a 401).
    pub fn expire_tokens(&mut self) {
        for t in self.tokens.values_mut() {
            *t = Timestamp::UNIX_EPOCH;
        }
    }

    /// Admit a data request, or refuse it (401 / 429) before it is answered.
    pub fn admit(&mut self, bearer: Option<&str>) -> Result<(), Answer> {
        let now = self.now();
        if bearer.and_then(|b| self.tokens.get(b)).is_none_or(|exp| *exp <= now) {
            return Err(Answer::json(401, json!({"message": "Unauthorized"})));
        }
        if self.in_flight >= self.cfg.max_in_flight {
            self.rate_limited += 1;
            return Err(Answer { status: 429, content_type: "application/json", retry_after: Some(self.cfg.retry_after_s), body: b"null".to_vec() });
        }
        self.in_flight += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight);
        self.data_requests += 1;
        Ok(())
    }

    /// Answer an admitted request (and let the next one in).
    pub fn answer(&mut self, path: &str, q: &HashMap<String, String>) -> Answer {
        self.in_flight = self.in_flight.saturating_sub(1);
        let a = Api { person: &self.cfg.person, now: self.now() }.answer(path, q);
        Answer { status: a.status, content_type: a.content_type, retry_after: None, body: a.body }
    }
}

/// Which of Garmin's paths (below its prefix) the wire's faults count: the key exchange as a token
/// request, every other path as data.
pub fn wire_route(path: &str) -> Option<crate::wire::Route> {
    if path == vitals_providers::providers::garmin::auth::KEY_EXCHANGE {
        Some(crate::wire::Route::Token)
    } else {
        Some(crate::wire::Route::Data)
    }
}
