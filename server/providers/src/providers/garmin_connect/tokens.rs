//! The session's tokens: read from the files garminconnect and garth saved (never written), the
//! DI access token's JWT claims, the renewal per generation (reference garmin/README.md §2.5,
//! §2.6), and the profile check every new login ends with (it gives the display name routes need).
use super::config;
use crate::config::Config;
use crate::connection::{BoxFuture, Grant};
use crate::http::{Http, HttpError, ReadMethod, Request};
use crate::provider::RenewError;
use crate::retry::{Policy, Stop};
use crate::secret::Secret;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Kept with the tokens: which login generation made them (`di` or `oauth1`).
pub const GENERATION: &str = "generation";
/// Kept with DI tokens: the client the token was issued to (its refresh must name it).
pub const CLIENT_ID: &str = "client_id";
/// Kept with the tokens: `socialProfile.displayName`, which several routes take.
pub const DISPLAY_NAME: &str = "display_name";

pub const GARMINCONNECT_FILE: &str = "garmin_tokens.json";
pub const GARTH_FILES: [&str; 2] = ["oauth1_token.json", "oauth2_token.json"];

/// Why tokens (a JWT, a token reply, another tool's files) could not be read as a login.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the access token is not a JWT")]
    NotJwt,
    #[error("the access token is an unsigned JWT (alg none), which Garmin never issues")]
    Unsigned,
    #[error("the token names no client id")]
    NoClient,
    #[error("Garmin's token service sent a reply that is not JSON")]
    ReplyNotJson,
    #[error("Garmin's token service sent no access token")]
    NoAccess,
    /// A file of the folder (its path), and the kind of failure.
    #[error("{0} could not be read ({1})")]
    Unreadable(String, std::io::ErrorKind),
    #[error("{0} is not JSON")]
    NotJson(String),
    #[error("{file} has no {key}")]
    Missing { file: &'static str, key: &'static str },
    #[error("there is no such folder")]
    NoFolder,
    #[error("it holds neither {GARMINCONNECT_FILE} (garminconnect) nor {} and {} (garth)", GARTH_FILES[0], GARTH_FILES[1])]
    NoFiles,
}

/// Why Garmin's profile did not confirm a login.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("Garmin Connect could not be reached to check the tokens ({0})")]
    Unreachable(HttpError),
    #[error("Garmin refused the tokens (\"Token is not active\"): they have ended; log in again")]
    Ended,
    #[error("Garmin refused the tokens with 403: it blocks this client or this network, or the account's region differs")]
    Blocked,
    #[error("Garmin answered 429 (too many requests) to the profile check; try again later")]
    Limited,
    #[error("Garmin answered HTTP {0} to the profile check")]
    Status(u16),
    #[error("Garmin's profile has no display name")]
    NoName,
}

/// A renewal's failure before anything was asked of Garmin: the saved login lacks what it needs.
fn unsaved(why: &str) -> RenewError {
    RenewError::Failed(why.to_string())
}

/// A JWT's `client_id` and `exp`, read without checking the signature (only Garmin can); a token
/// that says `alg: none` is refused.
pub fn claims(jwt: &str) -> Result<(Option<String>, Option<i64>), TokenError> {
    use base64::Engine as _;
    let part = |i: usize| -> Result<Value, TokenError> {
        let p = jwt.split('.').nth(i).ok_or(TokenError::NotJwt)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p.trim_end_matches('=')).map_err(|_| TokenError::NotJwt)?;
        serde_json::from_slice(&bytes).map_err(|_| TokenError::NotJwt)
    };
    let alg = part(0)?.get("alg").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
    if alg.is_empty() || alg == "none" {
        return Err(TokenError::Unsigned);
    }
    let body = part(1)?;
    Ok((body.get("client_id").and_then(Value::as_str).map(str::to_string), body.get("exp").and_then(Value::as_i64)))
}

/// A DI login from Garmin's token reply (or garminconnect's file): the JWT, its refresh token,
/// its client. `keep_refresh`: the refresh token to keep when the reply has none.
pub fn di_grant(access: &str, refresh: Option<&str>, client: Option<&str>, keep_refresh: Option<Secret>) -> Result<Grant, TokenError> {
    let (jwt_client, exp) = claims(access)?;
    let client_id = jwt_client.or(client.map(str::to_string)).ok_or(TokenError::NoClient)?;
    let mut g = Grant {
        access: Secret::new(access),
        refresh: refresh.filter(|r| !r.is_empty()).map(Secret::new).or(keep_refresh),
        expires_at: exp,
        ..Default::default()
    };
    g.extra.insert(GENERATION.into(), "di".into());
    g.extra.insert(CLIENT_ID.into(), client_id);
    Ok(g)
}

/// The DI token service's 2xx reply, for a ticket or a refresh, as a login of `client`.
pub fn di_reply(body: &str, client: &str, keep_refresh: Option<Secret>) -> Result<Grant, TokenError> {
    let v: Value = serde_json::from_str(body).map_err(|_| TokenError::ReplyNotJson)?;
    let access = v.get("access_token").and_then(Value::as_str).ok_or(TokenError::NoAccess)?;
    di_grant(access, v.get("refresh_token").and_then(Value::as_str), Some(client), keep_refresh)
}

fn read_json(path: &Path) -> Result<Value, TokenError> {
    let text = std::fs::read_to_string(path).map_err(|e| TokenError::Unreadable(path.display().to_string(), e.kind()))?;
    serde_json::from_str(&text).map_err(|_| TokenError::NotJson(path.display().to_string()))
}
fn text<'a>(v: &'a Value, key: &'static str, file: &'static str) -> Result<&'a str, TokenError> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or(TokenError::Missing { file, key })
}

/// What the files in `dir` hold, without asking Garmin anything.
pub fn read_dir(dir: &Path) -> Result<Grant, TokenError> {
    if !dir.is_dir() {
        return Err(TokenError::NoFolder);
    }
    let di = dir.join(GARMINCONNECT_FILE);
    if di.exists() {
        let v = read_json(&di)?;
        let t = |k| text(&v, k, GARMINCONNECT_FILE);
        return di_grant(t("di_token")?, Some(t("di_refresh_token")?), v.get("di_client_id").and_then(Value::as_str), None);
    }
    let [one, two] = GARTH_FILES.map(|f| dir.join(f));
    if one.exists() && two.exists() {
        let (o1, o2) = (read_json(&one)?, read_json(&two)?);
        let oauth1 = serde_json::json!({
            "oauth_token": text(&o1, "oauth_token", GARTH_FILES[0])?,
            "oauth_token_secret": text(&o1, "oauth_token_secret", GARTH_FILES[0])?,
            "mfa_token": o1.get("mfa_token"),
        });
        let mut g = Grant {
            access: Secret::new(text(&o2, "access_token", GARTH_FILES[1])?),
            // garth renews with the OAuth1 token, never the OAuth2 refresh token (reference §2.6).
            refresh: Some(Secret::new(oauth1.to_string())),
            expires_at: o2.get("expires_at").and_then(Value::as_i64),
            ..Default::default()
        };
        g.extra.insert(GENERATION.into(), "oauth1".into());
        return Ok(g);
    }
    Err(TokenError::NoFiles)
}

/// Import: read the folder, renew tokens that have ended, and check them with Garmin (which also
/// gives the display name). The folder is only read. In words: the connection's hook (`ImportSpec.read`).
pub fn import(dir: PathBuf, c: Arc<Config>) -> BoxFuture<'static, Result<Grant, ImportError>> {
    Box::pin(async move {
        let mut g = read_dir(&dir)?;
        if g.expires_at.is_some_and(|at| at - jiff::Timestamp::now().as_second() <= config::RENEW_BEFORE_S) {
            g = renew(g, &c).await.map_err(ImportError::Renew)?;
        }
        Ok(verified(g, &c).await?)
    })
}

/// Why another tool's token folder did not become a login.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The folder holds no tokens vitals can read.
    #[error("{0}")]
    Read(#[from] TokenError),
    /// Its tokens had ended, and renewing them failed.
    #[error("the tokens there have expired, and {0}")]
    Renew(RenewError),
    /// Garmin's profile did not confirm them.
    #[error("{0}")]
    Check(#[from] CheckError),
}

impl From<ImportError> for crate::connection::StepError {
    /// Said as the import's hook always said it: a step that failed, in the import's words.
    fn from(e: ImportError) -> Self {
        crate::connection::StepError::Failed(e.to_string())
    }
}

/// The login with the display name Garmin's profile gives it, or why Garmin refused it. Sent as
/// a login's requests are (`Policy::LOGIN`): a failure on the way or a 5xx asked once more, a
/// short 429 waited.
pub async fn verified(mut g: Grant, c: &Config) -> Result<Grant, CheckError> {
    let req = Request {
        method: ReadMethod::Get,
        url: format!("{}/userprofile-service/socialProfile", config::api(c)),
        params: vec![],
        headers: config::DATA_HEADERS,
    };
    let http = Http::declaring(&[], c);
    let sent = crate::retry::paced(Policy::LOGIN, || async { crate::retry::attempt(http.read(&req, &g.access).await) });
    let reply = sent.await.unwrap_or_else(Stop::last).map_err(CheckError::Unreachable)?;
    match reply.status {
        200 => {}
        401 => return Err(CheckError::Ended),
        403 => return Err(CheckError::Blocked),
        429 => return Err(CheckError::Limited),
        s => return Err(CheckError::Status(s)),
    }
    let v: Value = reply.body.ok().and_then(|b| serde_json::from_str(&b).ok()).unwrap_or_default();
    let name = v.get("displayName").and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or(CheckError::NoName)?;
    g.extra.insert(DISPLAY_NAME.into(), name.to_string());
    Ok(g)
}

/// Flow B's exchange of an OAuth1 token (at login, or to renew), as a login of that generation.
pub async fn oauth1_grant(t: super::oauth1::OAuth1, login: bool, c: &Config) -> Result<Grant, super::oauth1::OAuth1Error> {
    let mut g = super::oauth1::exchange(t, login, c).await?;
    g.extra.insert(GENERATION.into(), "oauth1".into());
    Ok(g)
}

/// The session's renewal (`SessionSpec.refresh`), run under the token store's lock.
pub fn refresh(g: Grant, c: Arc<Config>) -> BoxFuture<'static, Result<Grant, RenewError>> {
    Box::pin(async move {
        let name = g.extra.get(DISPLAY_NAME).cloned();
        let mut fresh = renew(g, &c).await?;
        if let Some(n) = name {
            fresh.extra.insert(DISPLAY_NAME.into(), n);
        }
        Ok(fresh)
    })
}

/// The session renewed by its generation. Garmin's token service unreachable, busy (429) or failing
/// (5xx) said nothing about the session: asked again as a login's requests are (`Policy::LOGIN`),
/// then `Unavailable` (`Limited` for a 429 asking longer than a login waits), so a read cuts its
/// answer there; any other answer refused it: `Failed`, with what to do.
async fn renew(g: Grant, c: &Config) -> Result<Grant, RenewError> {
    match g.extra.get(GENERATION).map(String::as_str) {
        Some("di") => renew_di(&g, c).await,
        // Flow B renews by exchanging the OAuth1 token again (reference §2.6).
        Some("oauth1") => {
            let kept = g.refresh.clone().ok_or_else(|| unsaved("the saved login has no OAuth1 token; log in again"))?;
            let t: super::oauth1::OAuth1 = serde_json::from_str(kept.expose()).map_err(|_| unsaved("the saved OAuth1 token is damaged; log in again"))?;
            oauth1_grant(t, false, c).await.map_err(super::oauth1::OAuth1Error::renewal)
        }
        _ => Err(unsaved("the saved Garmin Connect login is of a kind this version does not know; log in again")),
    }
}

/// A DI login renewed with its refresh token at the DI token endpoint.
async fn renew_di(g: &Grant, c: &Config) -> Result<Grant, RenewError> {
    let client = g.extra.get(CLIENT_ID).cloned().ok_or_else(|| unsaved("the saved login names no client id; log in again"))?;
    let refresh = g.refresh.clone().ok_or_else(|| unsaved("the saved login has no refresh token; log in again"))?;
    let form = [("grant_type", "refresh_token"), ("client_id", client.as_str()), ("refresh_token", refresh.expose())];
    let url = config::di_token_url(c);
    let sent = crate::retry::paced(Policy::LOGIN, || async {
        crate::retry::attempt(crate::http::garmin_di_token(&url, super::config::NON_GET, &client, &form).await)
    });
    let r = match sent.await {
        Ok(r) | Err(Stop::Failing(r)) => r,
        Err(Stop::Limited { wait, .. }) => {
            let why = "Garmin's token service answered 429 (too many requests) and asked for a longer wait than a login takes; the session was not renewed"
                .to_string();
            return Err(RenewError::Limited { why, wait });
        }
    };
    let r = r.map_err(|e| RenewError::Unavailable(format!("Garmin's token service could not be reached to renew the session ({e})")))?;
    match r.status {
        200..=299 => di_reply(&r.body, &client, Some(refresh)).map_err(|e| RenewError::Failed(e.to_string())),
        s @ 500..=599 => Err(RenewError::Unavailable(format!("Garmin's token service answered HTTP {s} (down for a moment); the session was not renewed"))),
        s => Err(RenewError::Failed(format!(
            "Garmin's token service refused to renew the session (HTTP {s}): it has ended. Log in again (vitals-mcp auth garmin-connect) or import fresh tokens"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    pub fn jwt(alg: &str, claims: Value) -> String {
        let e = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!("{}.{}.c2ln", e(serde_json::json!({"alg": alg, "typ": "JWT"})), e(claims))
    }

    #[test]
    fn the_client_and_expiry_come_from_the_jwt_and_alg_none_is_refused() {
        let t = jwt("RS256", serde_json::json!({"client_id": "GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2", "exp": 1767966400}));
        assert_eq!(claims(&t).unwrap(), (Some("GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2".into()), Some(1767966400)));
        assert!(claims(&jwt("none", serde_json::json!({"exp": 1}))).unwrap_err().to_string().contains("alg none"));
        assert!(claims("not-a-jwt").is_err());
    }

    #[test]
    fn each_tools_files_are_read_and_a_folder_with_neither_is_said() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp/garmin-connect-files"));
        let _ = std::fs::remove_dir_all(root);
        let (gc, garth, none) = (root.join("gc"), root.join("garth"), root.join("none"));
        for d in [&gc, &garth, &none] {
            std::fs::create_dir_all(d).unwrap();
        }
        let t = jwt("RS256", serde_json::json!({"client_id": "GARMIN_CONNECT_MOBILE_IOS_DI", "exp": 2000000000}));
        std::fs::write(gc.join(GARMINCONNECT_FILE), serde_json::json!({"di_token": t, "di_refresh_token": "r-1", "di_client_id": "X"}).to_string()).unwrap();
        let g = read_dir(&gc).unwrap();
        assert_eq!((g.extra[CLIENT_ID].as_str(), g.expires_at, g.refresh.unwrap().expose()), ("GARMIN_CONNECT_MOBILE_IOS_DI", Some(2000000000), "r-1"));
        std::fs::write(garth.join(GARTH_FILES[0]), r#"{"oauth_token": "o1", "oauth_token_secret": "s1", "mfa_token": null}"#).unwrap();
        std::fs::write(garth.join(GARTH_FILES[1]), r#"{"access_token": "a2", "expires_at": 1767987182, "token_type": "Bearer"}"#).unwrap();
        let g = read_dir(&garth).unwrap();
        assert_eq!((g.extra[GENERATION].as_str(), g.access.expose(), g.expires_at), ("oauth1", "a2", Some(1767987182)));
        assert!(read_dir(&none).unwrap_err().to_string().contains("neither garmin_tokens.json"));
        assert_eq!(read_dir(&root.join("absent")).unwrap_err().to_string(), "there is no such folder");
    }
}
