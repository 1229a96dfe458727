//! Flow B, the previous login generation (reference garmin/README.md §2.3), kept as the fallback of
//! the DI exchange and as the renewal of tokens garth saved: a service ticket for an OAuth1 token
//! (signed with the Android app's consumer, which garth publishes), then that token for an OAuth2
//! access token. The OAuth1 token lives about a year and is what renews; the OAuth2 refresh token
//! is never used (as garth does). Signing is `oauth1-request`'s.
use super::config;
use crate::config::Config;
use crate::connection::Grant;
use crate::connection::RenewError;
use crate::http::{garmin_oauth1_exchange, garmin_oauth1_get, HttpError};
use crate::retry::{Policy, Stop};
use crate::secret::Secret;
use serde_json::Value;
use std::time::Duration;

/// Why flow B's OAuth1 steps did not give a token, kept by kind: whether Garmin answered about
/// the token at all decides whether a renewal cuts a read (`Unavailable`) or asks for a login.
#[derive(Debug, thiserror::Error)]
pub enum OAuth1Error {
    #[error("the OAuth1 consumer could not be fetched ({0})")]
    ConsumerUnreachable(HttpError),
    #[error("the OAuth1 consumer's address answered HTTP {0} without JSON")]
    ConsumerNotJson(u16),
    #[error("the OAuth1 consumer has no {0}")]
    ConsumerMissing(&'static str),
    #[error("Garmin's OAuth1 service could not be reached ({0})")]
    Unreachable(HttpError),
    #[error("Garmin's OAuth1 service refused the ticket (HTTP {0})")]
    TicketRefused(u16),
    #[error("Garmin's OAuth1 service sent no token")]
    NoToken,
    /// A 429 asking longer than a login waits (`retry::LOGIN_WAIT`), or asked again and again.
    #[error("Garmin's OAuth1 service answered 429 (too many requests); ask again later")]
    Limited { wait: Duration },
    /// A 5xx, after the login's retry: down for a moment, nothing said of the token.
    #[error("Garmin's OAuth1 service answered HTTP {0} (down for a moment); the session was not renewed")]
    Failing(u16),
    #[error("Garmin's OAuth1 service refused the OAuth1 token (HTTP {0}): it has ended; log in again (vitals-mcp auth garmin-connect)")]
    Ended(u16),
    #[error("Garmin's OAuth1 service sent a reply that is not JSON")]
    NotJson,
    #[error("Garmin's OAuth1 service sent no access token")]
    NoAccess,
}

impl OAuth1Error {
    /// As a renewal's failure: Garmin unreachable, busy or failing said nothing of the session.
    pub fn renewal(self) -> RenewError {
        match self {
            OAuth1Error::Limited { wait } => RenewError::Limited { why: self.to_string(), wait },
            OAuth1Error::Unreachable(_) | OAuth1Error::ConsumerUnreachable(_) | OAuth1Error::Failing(_) => RenewError::Unavailable(self.to_string()),
            _ => RenewError::Failed(self.to_string()),
        }
    }
}

/// The OAuth1 token, kept (as JSON, in the login's refresh secret) to renew with.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct OAuth1 {
    pub oauth_token: String,
    pub oauth_token_secret: String,
    #[serde(default)]
    pub mfa_token: Option<String>,
}

struct Consumer {
    key: String,
    secret: Secret,
}

/// The consumer, fetched once per process (it is the app's, the same for everyone).
static CONSUMER: std::sync::Mutex<Option<(String, Secret)>> = std::sync::Mutex::new(None);

async fn consumer(cfg: &Config) -> Result<Consumer, OAuth1Error> {
    if let Some((key, secret)) = CONSUMER.lock().expect("consumer lock").clone() {
        return Ok(Consumer { key, secret });
    }
    let r = garmin_oauth1_get(&config::consumer_url(cfg), &[], None, config::OAUTH1_USER_AGENT).await.map_err(OAuth1Error::ConsumerUnreachable)?;
    let v: Value = serde_json::from_str(&r.body).map_err(|_| OAuth1Error::ConsumerNotJson(r.status))?;
    let field = |k: &'static str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string).ok_or(OAuth1Error::ConsumerMissing(k));
    let (key, secret) = (field("consumer_key")?, Secret::new(field("consumer_secret")?));
    *CONSUMER.lock().expect("consumer lock") = Some((key.clone(), secret.clone()));
    Ok(Consumer { key, secret })
}

/// The OAuth `Authorization` header of `method url` with `params` (query or form), signed with the
/// consumer and, where given, the token.
fn sign(method: &str, url: &str, params: &[(&str, &str)], c: &Consumer, token: Option<&OAuth1>) -> String {
    let mut b = oauth1_request::Builder::<_, &str, &str>::new(oauth1_request::Credentials::new(c.key.as_str(), c.secret.expose()), oauth1_request::HMAC_SHA1);
    if let Some(t) = token {
        b.token(oauth1_request::Credentials::new(t.oauth_token.as_str(), t.oauth_token_secret.as_str()));
    }
    b.authorize(method, url, &oauth1_request::ParameterList::new(params.to_vec()))
}

/// A service ticket (for `service`) for an OAuth1 token.
pub async fn preauthorize(ticket: &Secret, service: &str, cfg: &Config) -> Result<OAuth1, OAuth1Error> {
    let c = consumer(cfg).await?;
    let url = format!("{}{}", config::api(cfg), config::PREAUTHORIZED);
    let query = [("ticket", ticket.expose()), ("login-url", service), ("accepts-mfa-tokens", "true")];
    let auth = sign("GET", &url, &query, &c, None);
    let r = garmin_oauth1_get(&url, &query, Some(&auth), config::OAUTH1_USER_AGENT).await.map_err(OAuth1Error::Unreachable)?;
    if r.status != 200 {
        return Err(OAuth1Error::TicketRefused(r.status));
    }
    let f: std::collections::HashMap<String, String> = url::form_urlencoded::parse(r.body.trim().as_bytes()).into_owned().collect();
    match (f.get("oauth_token"), f.get("oauth_token_secret")) {
        (Some(t), Some(s)) => Ok(OAuth1 { oauth_token: t.clone(), oauth_token_secret: s.clone(), mfa_token: f.get("mfa_token").cloned() }),
        _ => Err(OAuth1Error::NoToken),
    }
}

/// The OAuth1 token for an OAuth2 access token: at login with the app's audience, to renew without.
/// Sent as a login's requests are (`Policy::LOGIN`), signed afresh each time: a failure on the way
/// or a 5xx asked once more, a short 429 waited.
pub async fn exchange(t: OAuth1, login: bool, cfg: &Config) -> Result<Grant, OAuth1Error> {
    let c = consumer(cfg).await?;
    let mut form: Vec<(&str, &str)> = vec![];
    if login {
        form.push(("audience", config::OAUTH1_AUDIENCE));
    }
    if let Some(m) = &t.mfa_token {
        form.push(("mfa_token", m.as_str()));
    }
    let base = config::api(cfg);
    let url = format!("{base}{}", super::config::OAUTH1_EXCHANGE);
    let sent = crate::retry::paced(Policy::LOGIN, || async {
        let auth = sign("POST", &url, &form, &c, Some(&t));
        crate::retry::attempt(garmin_oauth1_exchange(&url, super::config::NON_GET, &auth, config::OAUTH1_USER_AGENT, &form).await)
    });
    let r = match sent.await {
        Ok(r) | Err(Stop::Failing(r)) => r,
        Err(Stop::Limited { wait, .. }) => return Err(OAuth1Error::Limited { wait }),
    };
    let r = r.map_err(OAuth1Error::Unreachable)?;
    match r.status {
        200..=299 => {}
        s @ 500..=599 => return Err(OAuth1Error::Failing(s)),
        s => return Err(OAuth1Error::Ended(s)),
    }
    let v: Value = serde_json::from_str(&r.body).map_err(|_| OAuth1Error::NotJson)?;
    let access = v.get("access_token").and_then(Value::as_str).filter(|a| !a.is_empty()).ok_or(OAuth1Error::NoAccess)?;
    let lifetime = v.get("expires_in").and_then(Value::as_i64).unwrap_or(3600);
    // The caller (`tokens::oauth1_grant`) marks the generation.
    Ok(Grant {
        access: Secret::new(access),
        refresh: Some(Secret::new(serde_json::to_string(&t).expect("an OAuth1 token serialises"))),
        expires_at: Some(jiff::Timestamp::now().as_second() + lifetime),
        ..Default::default()
    })
}
