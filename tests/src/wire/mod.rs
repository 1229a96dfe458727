//! Faults on the wire, the same for every provider: one layer in front of all data routes that
//! counts data requests and, for the ones a rule names, answers in a broken way instead (or
//! breaks the real answer). The provider twins keep their own, provider-shaped faults; these are
//! the ones the reliability matrix (issue 22) applies to every provider alike.
use axum::body::Body;
use axum::extract::{Request, State as AxState};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// One way a data answer goes wrong.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// HTTP 429, with `Retry-After` in seconds when given.
    RateLimit { retry_after_s: Option<u64> },
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

/// Data requests `from ..= from + count - 1` (counted from 1 since the rules were set) get `fault`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rule {
    pub from: usize,
    pub count: usize,
    pub fault: Fault,
}

#[derive(Default)]
pub struct Wire {
    rules: Vec<Rule>,
    seen: usize,
    /// How many answers a rule changed.
    pub hits: usize,
}

impl Wire {
    /// Replace the rules and start counting again.
    pub fn set(&mut self, rules: Vec<Rule>) {
        *self = Wire { rules, ..Wire::default() };
    }
    fn next(&mut self) -> Option<Fault> {
        self.seen += 1;
        let n = self.seen;
        let f = self.rules.iter().find(|r| (r.from..r.from + r.count).contains(&n)).map(|r| r.fault.clone());
        self.hits += f.is_some() as usize;
        f
    }
}

/// Requests that read data (not the twin's own controls, logins or token endpoints).
fn is_data(path: &str) -> bool {
    !["/_twin", "/oauth", "/v2/oauth2", vitals::http::GARMIN_KEY_EXCHANGE].iter().any(|p| path.starts_with(p))
}

pub async fn layer(AxState(s): AxState<Arc<crate::State>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    if !is_data(&path) {
        return next.run(req).await;
    }
    let Some(fault) = s.wire.lock().unwrap().next() else {
        return next.run(req).await;
    };
    match fault {
        Fault::RateLimit { retry_after_s } => {
            let mut r = (StatusCode::TOO_MANY_REQUESTS, axum::Json(json!({"detail": "Too many requests"}))).into_response();
            if let Some(s) = retry_after_s {
                r.headers_mut().insert("retry-after", s.into());
            }
            r
        }
        Fault::Html { status } => Response::builder()
            .status(status)
            .header("content-type", "text/html")
            .body(Body::from(format!("<html><head><title>{status}</title></head><body><h1>{status} Server Error</h1><p>upstream</p></body></html>")))
            .unwrap(),
        Fault::Unauthorized => (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_token", "detail": "the access token expired"}))).into_response(),
        Fault::UnknownError => unknown_error(&path),
        Fault::Reset | Fault::Truncated | Fault::Slow { .. } | Fault::Mutate(_) => {
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
                Fault::Mutate(m) => {
                    let body = match serde_json::from_slice::<Value>(&bytes) {
                        Ok(mut v) => {
                            mutate(&mut v, m);
                            v.to_string().into_bytes()
                        }
                        Err(_) => bytes,
                    };
                    Response::new(Body::from(body))
                }
                _ => unreachable!(),
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
    let (status, body) = if ["/measure", "/v2/measure", "/v2/sleep", "/v2/user"].contains(&path) {
        // Withings answers errors in an HTTP 200 envelope.
        (200, json!({"status": 7777, "error": "A new kind of error"}))
    } else if path.starts_with("/v2/usercollection") || path.starts_with("/v2/sandbox") {
        (418, json!({"detail": "A new kind of error", "status": 418}))
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

/// Apply `m` to the longest array of objects in `v` (the records, whatever the envelope).
pub fn mutate(v: &mut Value, m: Mutation) {
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
        return;
    }
    let records = best.1.iter().try_fold(v, |v, step| match step {
        Value::String(k) => v.get_mut(k.as_str()),
        Value::Number(i) => v.get_mut(i.as_u64()? as usize),
        _ => None,
    });
    let Some(Value::Array(records)) = records else { return };
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
