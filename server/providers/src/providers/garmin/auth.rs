//! Garmin's Personal API key → bearer token exchange (reference `garmin/personal-api.md` §2–§3).
//! The reply's field names are not confirmed anywhere reachable, so it is read defensively: the
//! first token field present, the lifetime from any of the spellings, a JWT's `exp`, else 24 h.
use crate::catalog::NonGet;

/// The one route of Garmin's key exchange (reference garmin/personal-api.md §2), relative to its host.
pub const KEY_EXCHANGE: &str = "/personalapitoken-service/personal-api/personal-api-key/token";

/// What Garmin's catalog declares it sends besides GETs (`ProviderSpec.non_get`): the key exchange.
pub static NON_GET: &[NonGet] =
    &[NonGet::post(KEY_EXCHANGE, "a Personal API key reads nothing until it is exchanged for a bearer token (reference §2); it writes nothing")];

use crate::connection::{BoxFuture, Grant, KeyError};
use crate::retry::{ahead, attempt, paced, Policy, Stop};
use crate::secret::Secret;
use base64::Engine as _;
use serde_json::Value;

pub const DEFAULT_BASE: &str = "https://personal.connectapi.garmin.com";

/// Where the token and data routes are (the twin in tests).
pub fn base_in(config: &crate::config::Config) -> String {
    config.url(BASE_ENV, DEFAULT_BASE)
}

const BASE_ENV: &str = "VITALS_GARMIN_BASE_URL";

/// What Garmin's clients report a token lives when the reply does not say.
const DEFAULT_LIFETIME_S: i64 = 24 * 3600;

/// The exchange, its 429 read as a login's token request's is (`Policy::LOGIN`): a short wait
/// waited, a longer one said with its wait, never as a bad key. A failure on the way or a 5xx is
/// not asked again here: a renewal asks every key exchange once more (`http::once_more`), and a
/// key being pasted is said at once.
pub fn exchange(key: Secret, config: std::sync::Arc<crate::config::Config>) -> BoxFuture<'static, Result<Grant, KeyError>> {
    Box::pin(async move {
        let url = format!("{}{KEY_EXCHANGE}", base_in(&config));
        let policy = Policy { retries: 0, ..Policy::LOGIN };
        let sent = paced(policy, || async { attempt(crate::http::exchange_garmin_key(&url, NON_GET, &key).await) }).await;
        let sent = match sent {
            Ok(r) | Err(Stop::Failing(r)) => r,
            Err(Stop::Limited { wait, .. }) => {
                let why = format!("Garmin's key exchange answered 429 (too many requests); the key may be fine, try again in {} s", ahead(wait));
                return Err(KeyError::Limited { why, wait });
            }
        };
        let r = sent.map_err(|e| KeyError::Failed(format!("Garmin could not be reached ({e})")))?;
        reply(r.status, r.body.as_bytes(), jiff::Timestamp::now().as_second())
    })
}

/// The exchange's answer as a grant, or why not. `now`: Unix seconds.
pub fn reply(status: u16, body: &[u8], now: i64) -> Result<Grant, KeyError> {
    match status {
        200 | 201 => {}
        401 | 403 => {
            return Err(KeyError::Refused(format!(
                "Garmin refused the key (HTTP {status}): it was mistyped, has expired or was deleted. Create a new key at Garmin Connect → \
                 Settings → Personal API Key"
            )))
        }
        526 => {
            return Err(KeyError::Refused(
                "Garmin answered 526 TOKEN_EXCHANGE_FAILED: keys of Garmin's China region (connect.garmin.cn) do not work with the \
                 Personal API yet (reported 2026-10-22); nothing can be read with this key until Garmin opens it"
                    .into(),
            ))
        }
        s => return Err(KeyError::Failed(format!("Garmin's key exchange answered HTTP {s}; the key may be fine, try again in a moment"))),
    }
    let v: Value = serde_json::from_slice(body).map_err(|_| KeyError::Failed("Garmin's key exchange answered with something that is not JSON".into()))?;
    let token = ["access_token", "accessToken", "token"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .ok_or_else(|| KeyError::Failed("Garmin's key exchange answered without a token".into()))?;
    let secs = |k: &str| v.get(k).and_then(|x| x.as_i64().or_else(|| x.as_str().and_then(|s| s.parse().ok())));
    let absolute = |k: &str| {
        v.get(k).and_then(|x| match x {
            // Seconds or milliseconds since the epoch.
            Value::Number(n) => n.as_i64().map(|t| if t > 10_000_000_000 { t / 1000 } else { t }),
            Value::String(s) => s.parse::<jiff::Timestamp>().ok().map(|t| t.as_second()),
            _ => None,
        })
    };
    let expires_at = secs("expires_in")
        .or_else(|| secs("expiresIn"))
        .map(|s| now + s)
        .or_else(|| absolute("expires_at"))
        .or_else(|| absolute("expiresAt"))
        .or_else(|| jwt_exp(token))
        .unwrap_or(now + DEFAULT_LIFETIME_S);
    let scopes = v.get("scope").and_then(Value::as_str).map(|s| s.split_whitespace().map(str::to_string).collect()).unwrap_or_default();
    Ok(Grant { access: Secret::new(token), refresh: None, expires_at: Some(expires_at), scopes, extra: Default::default() })
}

/// A JWT's `exp` claim, when the token is one.
fn jwt_exp(token: &str) -> Option<i64> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice::<Value>(&bytes).ok()?.get("exp")?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(v: Value) -> Grant {
        reply(200, v.to_string().as_bytes(), 1_000).unwrap()
    }

    #[test]
    fn the_reply_is_read_whatever_its_spelling() {
        assert_eq!(ok(json!({"access_token": "a", "expires_in": 86400})).expires_at, Some(87_400));
        assert_eq!(ok(json!({"accessToken": "a", "expiresIn": "60"})).expires_at, Some(1_060));
        assert_eq!(ok(json!({"token": "a", "expiresAt": 5_000_000_000_000i64})).expires_at, Some(5_000_000_000));
        assert_eq!(ok(json!({"token": "a", "expires_at": "2026-12-05T00:00:00Z"})).expires_at, Some(1_764_892_800 + 365 * 86_400));
        let jwt = format!("h.{}.s", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"exp": 2000}"#));
        assert_eq!(ok(json!({"access_token": jwt})).expires_at, Some(2_000));
        assert_eq!(ok(json!({"access_token": "opaque"})).expires_at, Some(1_000 + 86_400), "24 h when nothing says");
        assert!(matches!(reply(200, br#"{"nothing": 1}"#, 0), Err(KeyError::Failed(_))));
    }

    #[test]
    fn a_refused_key_says_what_to_do_and_china_says_why() {
        let Err(KeyError::Refused(w)) = reply(401, b"", 0) else { panic!() };
        assert!(w.contains("Settings → Personal API Key"));
        let Err(KeyError::Refused(w)) = reply(526, b"", 0) else { panic!() };
        assert!(w.contains("China"));
        assert!(matches!(reply(503, b"", 0), Err(KeyError::Failed(_))));
    }
}
