//! The login: email and password (and the one-time code Garmin may send) for a service ticket at
//! Garmin's SSO, the ticket for tokens. The fragile part of Garmin Connect, kept behind one trait
//! so the next generation Garmin ships is one more implementation: [`Flow`], today the mobile JSON
//! login with the DI token exchange (reference garmin/README.md §2.1, §2.4), tried through each
//! SSO variant of `config.rs` in turn when a variant's pages are gone or broken. A refusal from
//! Garmin's defences ends the attempt at once and holds off new logins (`backoff.rs`).
//!
//! The password is in a [`Secret`] and leaves it only into the JSON body of the login POST; no
//! error, log line or saved file carries it. A login waiting for its one-time code keeps the SSO
//! cookies in this process's memory for [`CODE_WAIT`], never on disk.
use super::{backoff, config, tokens};
use crate::config::Config;
use crate::connection::{BoxFuture, Grant, SessionForm, SessionStep, StepError};
use crate::http::{LoginReply, SsoSession};
use crate::secret::Secret;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a login waits for its one-time code.
pub const CODE_WAIT: Duration = Duration::from_secs(10 * 60);

/// Where one sign-in stands.
pub enum SignedIn {
    /// A single-use service ticket, for `service`.
    Ticket { ticket: Secret, service: &'static str },
    /// Garmin sent a one-time code; the words say where.
    NeedsCode(Pending, String),
}

/// Why a login ended.
#[derive(Debug)]
pub enum Failure {
    /// Garmin's own answer to this account (bad password, bad code): said, nothing else tried.
    Refused(String),
    /// Garmin's defences (rate limit, bot check): the attempt ends and no login is tried for `wait`.
    Blocked { why: String, wait: Duration },
    /// This way in did not work (a page gone, an unexpected answer): the next one may.
    Broken(String),
}

/// A sign-in waiting for its code: the SSO session (cookies) and what the code POST needs.
pub struct Pending {
    session: SsoSession,
    variant: config::SsoVariant,
    method: String,
    referer: String,
}

/// One generation of Garmin's login, from the typed form to tokens: an SSO variant to sign in
/// through, and what its ticket is exchanged for.
pub trait Flow: Send + Sync {
    fn variant(&self) -> config::SsoVariant;
    /// The ticket for tokens, at the hosts the server's settings `c` name.
    fn exchange<'a>(&'a self, ticket: &'a Secret, service: &'a str, c: &'a Config) -> BoxFuture<'a, Result<Grant, Failure>>;
    fn name(&self) -> &'static str {
        self.variant().name
    }
    fn sign_in<'a>(&'a self, email: &'a str, password: &'a Secret, c: &'a Config) -> BoxFuture<'a, Result<SignedIn, Failure>> {
        Box::pin(sign_in(self.variant(), email, password, c))
    }
    fn verify_code<'a>(&'a self, pending: Pending, code: &'a Secret, c: &'a Config) -> BoxFuture<'a, Result<SignedIn, Failure>> {
        Box::pin(verify_code(pending, code, c))
    }
}

/// Flow C: the ticket for a DI OAuth2 token (reference §2.4).
pub struct MobileDi {
    pub variant: config::SsoVariant,
}

/// Flow B: the ticket for an OAuth1 token, that for an OAuth2 one (reference §2.3; `oauth1.rs`).
pub struct MobileOAuth1 {
    pub variant: config::SsoVariant,
}

fn query(v: &config::SsoVariant) -> [(&'static str, &'static str); 3] {
    [("clientId", v.client_id), ("locale", "en-US"), ("service", v.service)]
}

/// How long no login is tried after Garmin's defences refused one: what it said (`Retry-After`),
/// else [`config::BACK_OFF`], and never less than an hour (logging in again sooner is what keeps a
/// network blocked; reference §3). Never asked again at once, unlike a token request's 429.
fn block(retry_after: Option<Duration>) -> Duration {
    crate::retry::said(retry_after, None, config::BACK_OFF).1.max(Duration::from_secs(3600))
}

/// What an SSO answer means (reference §2.1's table).
fn read_sso(r: &LoginReply) -> Result<Value, Failure> {
    let wait = block(r.retry_after);
    let blocked = |why: &str| Err(Failure::Blocked { why: why.to_string(), wait });
    let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    let html = r.content_type.contains("html") || r.body.trim_start().starts_with('<');
    match r.status {
        429 => return blocked("HTTP 429, too many requests"),
        427 => return blocked("HTTP 427, too many requests"),
        403 if html => return blocked("HTTP 403 with Cloudflare's challenge page"),
        _ => {}
    }
    if v.pointer("/error/status-code").and_then(Value::as_str) == Some("429") {
        return blocked("too many requests (429 in the reply)");
    }
    let kind = v.pointer("/responseStatus/type").and_then(Value::as_str).unwrap_or_default();
    match (r.status, kind) {
        (_, "CAPTCHA_REQUIRED") => blocked("a CAPTCHA, its check for robots"),
        (401, _) | (_, "INVALID_USERNAME_PASSWORD") => {
            Err(Failure::Refused("Garmin did not accept that email and password. Check them (at connect.garmin.com) and try again.".into()))
        }
        (200, "SUCCESSFUL" | "MFA_REQUIRED") => Ok(v),
        (s, k) => Err(Failure::Broken(format!("Garmin's sign-in answered HTTP {s}{}", if k.is_empty() { String::new() } else { format!(" ({k})") }))),
    }
}

fn ticket_of(v: &Value, service: &'static str) -> Result<SignedIn, Failure> {
    let t = v
        .get("serviceTicketId")
        .and_then(Value::as_str)
        .filter(|t| t.starts_with("ST-"))
        .ok_or_else(|| Failure::Broken("Garmin's sign-in succeeded but sent no ticket".into()))?;
    Ok(SignedIn::Ticket { ticket: Secret::new(t), service })
}

/// Sign in through `v`: the page (its cookies), the pause, the JSON login.
async fn sign_in(v: config::SsoVariant, email: &str, password: &Secret, c: &Config) -> Result<SignedIn, Failure> {
    let sso = config::sso(c);
    let session = SsoSession::new(v.user_agent);
    let page_url = format!("{sso}{}", v.sign_in);
    let page = session
        .page(&page_url, &[("clientId", v.client_id), ("service", v.service)], config::PAGE_HEADERS)
        .await
        .map_err(|e| Failure::Broken(format!("Garmin's sign-in page could not be reached ({e})")))?;
    if page.status != 200 {
        read_sso(&page)?;
        return Err(Failure::Broken(format!("Garmin's sign-in page answered HTTP {}", page.status)));
    }
    let referer = format!("{page_url}?clientId={}&service={}", v.client_id, v.service);
    tokio::time::sleep(config::pause(c)).await;
    let body = json!({ "username": email, "password": password.expose(), "rememberMe": v.remember_me, "captchaToken": "" });
    let r = session
        .garmin_sso_post(&sso, v.login, super::config::NON_GET, &query(&v), &referer, &body)
        .await
        .map_err(|e| Failure::Broken(format!("Garmin's sign-in could not be reached ({e})")))?;
    let reply = read_sso(&r)?;
    if reply.pointer("/responseStatus/type").and_then(Value::as_str) == Some("MFA_REQUIRED") {
        let info = reply.get("customerMfaInfo").cloned().unwrap_or_default();
        let method = info.get("mfaLastMethodUsed").and_then(Value::as_str).unwrap_or("email").to_string();
        let to = info.get("email").and_then(Value::as_str).map(|e| format!(" (to {e})")).unwrap_or_default();
        let words = match method.as_str() {
            "email" => format!("Garmin sent a one-time code by email{to}. Type it here."),
            "sms" | "phone" => "Garmin sent a one-time code by text message. Type it here.".to_string(),
            _ => "Type the one-time code from your authenticator app.".to_string(),
        };
        return Ok(SignedIn::NeedsCode(Pending { session, variant: v, method, referer }, words));
    }
    ticket_of(&reply, v.service)
}

/// The one-time code, in the session that asked for it.
async fn verify_code(p: Pending, code: &Secret, c: &Config) -> Result<SignedIn, Failure> {
    let body = json!({ "mfaMethod": p.method, "mfaVerificationCode": code.expose().trim(), "rememberMyBrowser": true, "reconsentList": [], "mfaSetup": false });
    let r = p
        .session
        .garmin_sso_post(&config::sso(c), p.variant.verify, super::config::NON_GET, &query(&p.variant), &p.referer, &body)
        .await
        .map_err(|e| Failure::Broken(format!("Garmin's code check could not be reached ({e})")))?;
    if r.status == 400 || r.status == 401 || r.body.contains("INVALID_MFA_CODE") {
        return Err(Failure::Refused("Garmin did not accept that one-time code. Start the login again for a new one.".into()));
    }
    let reply = read_sso(&r)?;
    ticket_of(&reply, p.variant.service)
}

impl Flow for MobileDi {
    fn variant(&self) -> config::SsoVariant {
        self.variant
    }
    fn exchange<'a>(&'a self, ticket: &'a Secret, service: &'a str, c: &'a Config) -> BoxFuture<'a, Result<Grant, Failure>> {
        Box::pin(async move {
            let url = config::di_token_url(c);
            let mut refused = vec![];
            for client in config::DI_CLIENT_IDS {
                let form = [("client_id", *client), ("service_ticket", ticket.expose()), ("grant_type", config::TICKET_GRANT), ("service_url", service)];
                let r = crate::http::garmin_di_token(&url, super::config::NON_GET, client, &form)
                    .await
                    .map_err(|e| Failure::Broken(format!("Garmin's token service could not be reached ({e})")))?;
                match r.status {
                    200..=299 => return tokens::di_reply(&r.body, client, None).map_err(|e| Failure::Broken(e.to_string())),
                    429 => return Err(Failure::Blocked { why: "HTTP 429 from its token service".into(), wait: block(r.retry_after) }),
                    s => refused.push(format!("{client}: HTTP {s}")),
                }
            }
            Err(Failure::Broken(format!("Garmin's token service refused every client ({})", refused.join("; "))))
        })
    }
}

impl Flow for MobileOAuth1 {
    fn variant(&self) -> config::SsoVariant {
        self.variant
    }
    fn exchange<'a>(&'a self, ticket: &'a Secret, service: &'a str, c: &'a Config) -> BoxFuture<'a, Result<Grant, Failure>> {
        Box::pin(async move {
            let broken = |e: super::oauth1::OAuth1Error| Failure::Broken(e.to_string());
            let token = super::oauth1::preauthorize(ticket, service, c).await.map_err(broken)?;
            tokens::oauth1_grant(token, true, c).await.map_err(broken)
        })
    }
}

/// The flows, in the order they are tried: the current generation, the previous one (whose sign-in
/// is the same pages through Android's client), then the current one through the web portal.
pub fn flows() -> Vec<Box<dyn Flow>> {
    vec![
        Box::new(MobileDi { variant: config::MOBILE_IOS }),
        Box::new(MobileOAuth1 { variant: config::MOBILE_ANDROID }),
        Box::new(MobileDi { variant: config::PORTAL }),
    ]
}

/// Logins waiting for their code, by email, in memory only.
/// A login waiting for its code: the sign-in, the index of its flow, and when it began.
type Waiting = HashMap<String, (Pending, usize, Instant)>;
static WAITING: std::sync::Mutex<Option<Waiting>> = std::sync::Mutex::new(None);

/// A waiting login's key: whose it is (on a server of several people) and the email.
fn key(form: &SessionForm) -> String {
    format!("{}\n{}", form.waiting_as.as_deref().unwrap_or(""), form.email.trim().to_ascii_lowercase())
}

/// One submission of the login (`SessionSpec.login`).
///
/// Its failures keep their kind: Garmin holding logins back (its 429s) is `Unavailable`, a password
/// or code refused or a login no longer waiting is `Refused`, a login no way in could finish `Failed`.
pub fn submit(form: SessionForm, c: Arc<Config>) -> BoxFuture<'static, Result<SessionStep, StepError>> {
    Box::pin(async move {
        let (flows, c) = (flows(), &*c);
        let said = |f: Failure| match f {
            Failure::Refused(w) => StepError::Refused(w),
            Failure::Broken(w) => StepError::Failed(w),
            Failure::Blocked { why, wait } => StepError::Unavailable(backoff::refuse(&why, wait, c)),
        };
        if let Some(code) = &form.code {
            let waiting = WAITING.lock().expect("waiting lock").get_or_insert_with(HashMap::new).remove(&key(&form));
            let Some((pending, i, _)) = waiting.filter(|(_, _, at)| at.elapsed() < CODE_WAIT) else {
                return Err(StepError::Refused(
                    "No Garmin login is waiting for a code (it took longer than 10 minutes, or this is another process). Start the login again.".into(),
                ));
            };
            let flow = &flows[i];
            return match flow.verify_code(pending, code, c).await.map_err(said)? {
                SignedIn::Ticket { ticket, service } => finish(flow.as_ref(), &ticket, service, c).await.map_err(said),
                SignedIn::NeedsCode(..) => Err(StepError::Refused("Garmin asked for another code; start the login again.".into())),
            };
        }
        backoff::check(c).map_err(|e| StepError::Unavailable(e.to_string()))?;
        let mut broken = vec![];
        for (i, flow) in flows.iter().enumerate() {
            match flow.sign_in(&form.email, &form.password, c).await {
                Ok(SignedIn::Ticket { ticket, service }) => match finish(flow.as_ref(), &ticket, service, c).await {
                    Ok(step) => return Ok(step),
                    // The sign-in worked but its exchange did not: the next generation signs in again.
                    Err(Failure::Broken(w)) => {
                        tracing::info!("Garmin login through {}: {w}; trying the next way in", flow.name());
                        broken.push(format!("{}: {w}", flow.name()));
                    }
                    Err(other) => return Err(said(other)),
                },
                Ok(SignedIn::NeedsCode(pending, words)) => {
                    let mut w = WAITING.lock().expect("waiting lock");
                    let map = w.get_or_insert_with(HashMap::new);
                    map.retain(|_, (_, _, at)| at.elapsed() < CODE_WAIT);
                    map.insert(key(&form), (pending, i, Instant::now()));
                    return Ok(SessionStep::NeedsCode(words));
                }
                Err(Failure::Broken(w)) => {
                    tracing::info!("Garmin login through {}: {w}; trying the next way in", flow.name());
                    broken.push(format!("{}: {w}", flow.name()));
                }
                Err(other) => return Err(said(other)),
            }
        }
        Err(StepError::Failed(format!(
            "The Garmin login did not work through any of its ways in ({}). Garmin may have changed its login; import tokens from another tool instead.",
            broken.join("; ")
        )))
    })
}

/// The ticket for tokens, checked with Garmin's profile.
async fn finish(flow: &dyn Flow, ticket: &Secret, service: &str, c: &Config) -> Result<SessionStep, Failure> {
    let grant = flow.exchange(ticket, service, c).await?;
    tokens::verified(grant, c).await.map(SessionStep::Done).map_err(|e| Failure::Broken(e.to_string()))
}
