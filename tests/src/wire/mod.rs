//! Faults on the wire, the same for every provider: one layer in front of all provider routes
//! that counts requests and, for the ones a rule names, answers in a broken way instead (or
//! breaks the real answer). Data requests and token-endpoint requests are counted apart, so a
//! rule can take the refresh endpoint down once. The provider twins keep their own,
//! provider-shaped faults; these are the ones the reliability matrix (issue 22) applies to every
//! provider alike.
mod paging;

use axum::body::Body;
use axum::extract::{Request, State as AxState};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use paging::Pager;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// One way an answer goes wrong.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// HTTP 429, with `Retry-After` in seconds when given.
    RateLimit { retry_after_s: Option<u64> },
    /// HTTP 429 whose `Retry-After` is an HTTP date `retry_after_s` ahead on a clock
    /// `clock_off_s` from ours, with a `Date` header on that same clock.
    RateLimitUntil { retry_after_s: u64, clock_off_s: i64 },
    /// The real answer, with a `Date` header this far from our clock.
    ClockOff { seconds: i64 },
    /// This status with an HTML page for a body (a proxy's error page).
    Html { status: u16 },
    /// The headers and half the body, then the connection breaks.
    Reset,
    /// HTTP 200 with the first half of the JSON body.
    Truncated,
    /// The real answer, trickled a few bytes at a time with this pause between them.
    Slow { pause_ms: u64 },
    /// HTTP 200 with the records changed as [`Mutation`] says.
    Mutate(Mutation),
    /// HTTP 401: the access token expired between two pages.
    Unauthorized,
    /// The provider's own error envelope with a code it has never documented.
    UnknownError,
    /// From this page of a listing on, the answer hands back the token it was asked with, so
    /// following it would ask for the same page for ever. Only providers that page with tokens.
    TokenRepeats { from_page: usize },
    /// A listing's first page comes back empty, with a token that leads to the real first page.
    /// Only providers that page with tokens.
    EmptyFirstPage,
}

/// What is done to every record of an answer (the longest array of objects in its body).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mutation {
    /// The first number of each record sent as a string (`"score": "85"`).
    NumberAsString,
    /// The first number of each record sent as `null`.
    NumberAsNull,
    /// A field no documentation has, on every record.
    ExtraField,
    /// An empty object appended to the records.
    EmptyRecord,
    /// The first record sent twice and the records in reverse order.
    DuplicatedReversed,
}

/// Which requests a rule counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// Reads of data.
    #[default]
    Data,
    /// Token endpoints: an OAuth refresh, Garmin's key exchange.
    Token,
}

/// Requests `from ..= from + count - 1` of its route (counted from 1 since the rules were set) get `fault`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rule {
    pub from: usize,
    pub count: usize,
    pub fault: Fault,
    #[serde(default)]
    pub on: Route,
}

impl Rule {
    /// A fault on data requests.
    pub fn data(from: usize, count: usize, fault: Fault) -> Rule {
        Rule { from, count, fault, on: Route::Data }
    }
    /// A fault on token-endpoint requests.
    pub fn token(from: usize, count: usize, fault: Fault) -> Rule {
        Rule { from, count, fault, on: Route::Token }
    }
}

#[derive(Default)]
pub struct Wire {
    rules: Vec<Rule>,
    seen: HashMap<Route, usize>,
    /// How many answers each rule changed.
    fired: Vec<usize>,
    /// Pages asked so far of each listing (a request without its page token).
    pages: HashMap<String, usize>,
}

impl Wire {
    /// Replace the rules and start counting again.
    pub fn set(&mut self, rules: Vec<Rule>) {
        *self = Wire { fired: vec![0; rules.len()], rules, ..Wire::default() };
    }
    /// How many answers the rules changed.
    pub fn hits(&self) -> usize {
        self.fired.iter().sum()
    }
    /// How many answers each rule changed, in the order they were set.
    pub fn fired(&self) -> Vec<usize> {
        self.fired.clone()
    }
    /// The rule (its index and fault) for the next request on `route`.
    fn next(&mut self, route: Route) -> Option<(usize, Fault)> {
        let n = self.seen.entry(route).or_insert(0);
        *n += 1;
        let n = *n;
        self.rules.iter().enumerate().find(|(_, r)| r.on == route && (r.from..r.from + r.count).contains(&n)).map(|(i, r)| (i, r.fault.clone()))
    }
}

/// Which route a path is: the twin's own controls and the login pages are neither.
fn route(path: &str) -> Option<Route> {
    if let Some((t, rest)) = crate::TWINS.iter().find_map(|t| path.strip_prefix(t.prefix).map(|rest| (t, rest))) {
        (t.wire_route)(rest)
    } else if path.starts_with("/_twin") || path.contains("authoriz") || ["/garmin-sso", "/garth"].iter().any(|p| path.starts_with(p)) {
        // Garmin Connect's sign-in pages and the OAuth consumer a login fetches are a login's, not a read's.
        None
    } else if ["/oauth", "/v2/oauth2", "/diauth", "/connectapi/oauth-service"].iter().any(|p| path.starts_with(p)) {
        Some(Route::Token)
    } else {
        Some(Route::Data)
    }
}

/// How a mounted twin's path (below its prefix) is counted: its token endpoint apart, its data
/// routes as data, anything else (an authorize page) not at all.
pub fn counted(path: &str, token: &str, data: &str) -> Option<Route> {
    if path.starts_with(token) {
        Some(Route::Token)
    } else if path.starts_with(data) {
        Some(Route::Data)
    } else {
        None
    }
}

/// The records of an answer: the longest array of objects in it, whatever the envelope.
fn records(v: &mut Value) -> Option<&mut Vec<Value>> {
    /// The path to the longest array of objects: keys and indices from the root.
    fn longest(v: &Value, at: &mut Vec<Value>, best: &mut (usize, Vec<Value>)) {
        if let Value::Array(a) = v {
            if a.iter().any(Value::is_object) && a.len() > best.0 {
                *best = (a.len(), at.clone());
            }
        }
        let children: Vec<(Value, &Value)> = match v {
            Value::Array(a) => a.iter().enumerate().map(|(i, x)| (json!(i), x)).collect(),
            Value::Object(o) => o.iter().map(|(k, x)| (json!(k), x)).collect(),
            _ => vec![],
        };
        for (step, c) in children {
            at.push(step);
            longest(c, at, best);
            at.pop();
        }
    }
    let mut best = (0, vec![]);
    longest(v, &mut vec![], &mut best);
    if best.0 == 0 {
        return None;
    }
    let found = best.1.iter().try_fold(v, |v, step| match step {
        Value::String(k) => v.get_mut(k.as_str()),
        Value::Number(i) => v.get_mut(i.as_u64()? as usize),
        _ => None,
    });
    match found {
        Some(Value::Array(records)) => Some(records),
        _ => None,
    }
}

/// The real answer with its JSON body changed by `change`; other bodies pass as they came.
async fn rewrite(real: Response, change: impl FnOnce(&mut Value)) -> Response {
    let (parts, body) = real.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let body = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut v) => {
            change(&mut v);
            v.to_string().into_bytes()
        }
        Err(_) => bytes.to_vec(),
    };
    let mut parts = parts;
    parts.headers.remove("content-length");
    Response::from_parts(parts, Body::from(body))
}

/// An HTTP date `off_s` from our clock.
fn http_date(off_s: i64) -> String {
    let at = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(off_s);
    jiff::fmt::rfc2822::DateTimePrinter::new().timestamp_to_rfc9110_string(&at).expect("a date in range prints")
}

pub async fn layer(AxState(s): AxState<Arc<crate::State>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let Some(on) = route(&path) else {
        return next.run(req).await;
    };
    // A paged request is read first: a made-up token comes off whatever the rules are now.
    let (req, asked) = match Pager::of(&path) {
        Some(p) => {
            let (req, asked) = p.read(req).await;
            (req, Some((p, asked)))
        }
        None => (req, None),
    };
    let (hit, page) = {
        let mut w = s.wire.lock().unwrap();
        let page = asked.as_ref().map(|(_, a)| {
            let n = w.pages.entry(a.chain.clone()).or_insert(0);
            *n += 1;
            *n
        });
        (w.next(on), page)
    };
    let Some((rule, fault)) = hit else {
        return next.run(req).await;
    };
    let applies = match (&fault, &asked) {
        (Fault::TokenRepeats { from_page }, Some((_, a))) => a.token.is_some() && page.is_some_and(|p| p >= *from_page),
        (Fault::EmptyFirstPage, Some((_, a))) => a.token.is_none() && !a.after_empty,
        (Fault::TokenRepeats { .. } | Fault::EmptyFirstPage, None) => false,
        _ => true,
    };
    if !applies {
        return next.run(req).await;
    }
    s.wire.lock().unwrap().fired[rule] += 1;
    match fault {
        Fault::RateLimit { retry_after_s } => {
            let mut r = (StatusCode::TOO_MANY_REQUESTS, axum::Json(json!({"detail": "Too many requests"}))).into_response();
            if let Some(s) = retry_after_s {
                r.headers_mut().insert("retry-after", s.into());
            }
            r
        }
        Fault::RateLimitUntil { retry_after_s, clock_off_s } => {
            let mut r = (StatusCode::TOO_MANY_REQUESTS, axum::Json(json!({"detail": "Too many requests"}))).into_response();
            let h = r.headers_mut();
            h.insert("date", http_date(clock_off_s).parse().expect("a date is a header value"));
            h.insert("retry-after", http_date(clock_off_s + retry_after_s as i64).parse().expect("a date is a header value"));
            r
        }
        Fault::ClockOff { seconds } => {
            let mut r = next.run(req).await;
            r.headers_mut().insert("date", http_date(seconds).parse().expect("a date is a header value"));
            r
        }
        Fault::TokenRepeats { .. } => {
            let (p, a) = asked.expect("a paged request");
            rewrite(next.run(req).await, |v| p.set_next(v, a.token.as_deref())).await
        }
        Fault::EmptyFirstPage => {
            let (p, _) = asked.expect("a paged request");
            rewrite(next.run(req).await, |v| p.empty_page(v)).await
        }
        Fault::Html { status } => Response::builder()
            .status(status)
            .header("content-type", "text/html")
            .body(Body::from(format!("<html><head><title>{status}</title></head><body><h1>{status} Server Error</h1><p>upstream</p></body></html>")))
            .unwrap(),
        Fault::Unauthorized => (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_token", "detail": "the access token expired"}))).into_response(),
        Fault::UnknownError => unknown_error(crate::TWINS.iter().find_map(|t| path.strip_prefix(t.prefix)).unwrap_or(&path)),
        Fault::Mutate(m) => rewrite(next.run(req).await, |v| mutate(v, m)).await,
        Fault::Reset | Fault::Truncated | Fault::Slow { .. } => {
            let real = next.run(req).await;
            let (parts, body) = real.into_parts();
            let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default().to_vec();
            let half = bytes[..bytes.len() / 2].to_vec();
            let mut out = match fault {
                Fault::Reset => {
                    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                        vec![Ok(half), Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "twin: connection reset"))];
                    let mut r = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
                    // The length of the whole body, so the client knows it broke off.
                    r.headers_mut().insert("content-length", bytes.len().into());
                    r
                }
                Fault::Truncated => Response::new(Body::from(half)),
                Fault::Slow { pause_ms } => {
                    let stream = futures_util::stream::unfold(bytes, move |rest| async move {
                        if rest.is_empty() {
                            return None;
                        }
                        tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                        let n = rest.len().min(64);
                        Some((Ok::<_, std::io::Error>(rest[..n].to_vec()), rest[n..].to_vec()))
                    });
                    Response::new(Body::from_stream(stream))
                }
                _ => unreachable!("only the faults that cut or slow the body"),
            };
            *out.status_mut() = parts.status;
            if let Some(ct) = parts.headers.get("content-type") {
                out.headers_mut().insert("content-type", ct.clone());
            }
            out
        }
    }
}

/// Each provider's error shape, with a code none of them documents.
fn unknown_error(path: &str) -> Response {
    let (status, body) = if ["/measure", "/v2/measure", "/v2/sleep", "/v2/heart", "/v2/user"].contains(&path) {
        // Withings answers errors in an HTTP 200 envelope.
        (200, json!({"status": 7777, "error": "A new kind of error"}))
    } else if path.starts_with("/v2/usercollection") || path.starts_with("/v2/sandbox") {
        (418, json!({"detail": "A new kind of error", "status": 418}))
    } else if path.starts_with("/v4/") {
        // Google's google.rpc.Status, with a status and reason no one has seen.
        (
            409,
            json!({"error": {"code": 409, "status": "NEW_KIND", "message": "A new kind of error", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "NEW_KIND"}]}}),
        )
    } else if path.starts_with("/v3/") {
        (422, json!({"timestamp": "2026-12-05T00:00:00Z", "status": 422, "errorType": "NEW_KIND", "message": "A new kind of error", "corrId": "x"}))
    } else {
        (409, json!({"errorCode": "NEW_KIND", "message": "A new kind of error"}))
    };
    (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response()
}

/// A record's first number (in key order).
fn first_number(r: &mut Value) -> Option<&mut Value> {
    r.as_object_mut()?.values_mut().find(|x| x.is_number())
}

/// Apply `m` to the records of an answer.
pub fn mutate(v: &mut Value, m: Mutation) {
    let Some(records) = records(v) else { return };
    match m {
        Mutation::NumberAsString => records.iter_mut().filter_map(first_number).for_each(|x| *x = json!(x.to_string())),
        Mutation::NumberAsNull => records.iter_mut().filter_map(first_number).for_each(|x| *x = Value::Null),
        Mutation::ExtraField => records.iter_mut().filter_map(Value::as_object_mut).for_each(|o| {
            o.insert("an_unknown_field".into(), json!({"new": [1, "two"]}));
        }),
        Mutation::EmptyRecord => records.push(json!({})),
        Mutation::DuplicatedReversed => {
            if let Some(first) = records.first().cloned() {
                records.push(first);
            }
            records.reverse();
        }
    }
}
