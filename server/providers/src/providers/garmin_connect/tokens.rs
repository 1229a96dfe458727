//! The session's tokens: read from the files garminconnect and garth saved (never written), the
//! DI access token's JWT claims, the renewal per generation (reference garmin/README.md §2.5,
//! §2.6), and the profile check every new login ends with (it gives the display name routes need).
use super::config;
use crate::config::Config;
use crate::connection::{BoxFuture, Grant};
use crate::http::{Http, ReadMethod, Request};
use crate::provider::RenewError;
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

/// A JWT's `client_id` and `exp`, read without checking the signature (only Garmin can); a token
/// that says `alg: none` is refused.
pub fn claims(jwt: &str) -> Result<(Option<String>, Option<i64>), String> {
    use base64::Engine as _;
    let part = |i: usize| -> Result<Value, String> {
        let p = jwt.split('.').nth(i).ok_or("the access token is not a JWT")?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p.trim_end_matches('=')).map_err(|_| "the access token is not a JWT")?;
        serde_json::from_slice(&bytes).map_err(|_| "the access token is not a JWT".to_string())
    };
    let alg = part(0)?.get("alg").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
    if alg.is_empty() || alg == "none" {
        return Err("the access token is an unsigned JWT (alg none), which Garmin never issues".into());
    }
    let body = part(1)?;
    Ok((body.get("client_id").and_then(Value::as_str).map(str::to_string), body.get("exp").and_then(Value::as_i64)))
}

/// A DI login from Garmin's token reply (or garminconnect's file): the JWT, its refresh token,
/// its client. `keep_refresh`: the refresh token to keep when the reply has none.
pub fn di_grant(access: &str, refresh: Option<&str>, client: Option<&str>, keep_refresh: Option<Secret>) -> Result<Grant, String> {
    let (jwt_client, exp) = claims(access)?;
    let client_id = jwt_client.or(client.map(str::to_string)).ok_or("the token names no client id")?;
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
pub fn di_reply(body: &str, client: &str, keep_refresh: Option<Secret>) -> Result<Grant, String> {
    let v: Value = serde_json::from_str(body).map_err(|_| "Garmin's token service sent a reply that is not JSON")?;
    let access = v.get("access_token").and_then(Value::as_str).ok_or("Garmin's token service sent no access token")?;
    di_grant(access, v.get("refresh_token").and_then(Value::as_str), Some(client), keep_refresh)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{} could not be read ({})", path.display(), e.kind()))?;
    serde_json::from_str(&text).map_err(|_| format!("{} is not JSON", path.display()))
}
fn text<'a>(v: &'a Value, k: &str, file: &str) -> Result<&'a str, String> {
    v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(|| format!("{file} has no {k}"))
}

/// What the files in `dir` hold, without asking Garmin anything.
pub fn read_dir(dir: &Path) -> Result<Grant, String> {
    if !dir.is_dir() {
        return Err("there is no such folder".into());
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
    Err(format!("it holds neither {GARMINCONNECT_FILE} (garminconnect) nor {} and {} (garth)", GARTH_FILES[0], GARTH_FILES[1]))
}

/// Import: read the folder, renew tokens that have ended, and check them with Garmin (which also
/// gives the display name). The folder is only read.
pub fn import(dir: PathBuf, c: Arc<Config>) -> BoxFuture<'static, Result<Grant, String>> {
    Box::pin(async move {
        let mut g = read_dir(&dir)?;
        if g.expires_at.is_some_and(|at| at - jiff::Timestamp::now().as_second() <= config::RENEW_BEFORE_S) {
            g = renew(g, &c).await.map_err(|e| format!("the tokens there have expired, and {e}"))?;
        }
        verified(g, &c).await
    })
}

/// The login with the display name Garmin's profile gives it, or why Garmin refused it.
pub async fn verified(mut g: Grant, c: &Config) -> Result<Grant, String> {
    let req = Request {
        method: ReadMethod::Get,
        url: format!("{}/userprofile-service/socialProfile", config::api(c)),
        params: vec![],
        headers: config::DATA_HEADERS,
    };
    let reply = Http::declaring(&[], c).read(&req, &g.access).await.map_err(|e| format!("Garmin Connect could not be reached to check the tokens ({e})"))?;
    match reply.status {
        200 => {}
        401 => return Err("Garmin refused the tokens (\"Token is not active\"): they have ended; log in again".into()),
        403 => return Err("Garmin refused the tokens with 403: it blocks this client or this network, or the account's region differs".into()),
        429 => return Err("Garmin answered 429 (too many requests) to the profile check; try again later".into()),
        s => return Err(format!("Garmin answered HTTP {s} to the profile check")),
    }
    let v: Value = reply.body.ok().and_then(|b| serde_json::from_str(&b).ok()).unwrap_or_default();
    let name = v.get("displayName").and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or("Garmin's profile has no display name")?;
    g.extra.insert(DISPLAY_NAME.into(), name.to_string());
    Ok(g)
}

/// Flow B's exchange of an OAuth1 token (at login, or to renew), as a login of that generation.
pub async fn oauth1_grant(t: super::oauth1::OAuth1, login: bool, c: &Config) -> Result<Grant, String> {
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
/// (5xx) said nothing about the session: `Unavailable`, so a read cuts its answer there; any other
/// answer refused it: `Failed`, with what to do.
async fn renew(g: Grant, c: &Config) -> Result<Grant, RenewError> {
    match g.extra.get(GENERATION).map(String::as_str) {
        Some("di") => {
            let client = g.extra.get(CLIENT_ID).cloned().ok_or("the saved login names no client id; log in again")?;
            let refresh = g.refresh.clone().ok_or("the saved login has no refresh token; log in again")?;
            let form = [("grant_type", "refresh_token"), ("client_id", client.as_str()), ("refresh_token", refresh.expose())];
            let r = crate::http::garmin_di_token(&config::di_token_url(c), super::config::NON_GET, &client, &form)
                .await
                .map_err(|e| RenewError::Unavailable(format!("Garmin's token service could not be reached to renew the session ({e})")))?;
            match r.status {
                200..=299 => Ok(di_reply(&r.body, &client, Some(refresh))?),
                429 => Err(RenewError::Unavailable("Garmin's token service answered 429 (too many requests); the session was not renewed. Ask again later.".into())),
                s @ 500..=599 => Err(RenewError::Unavailable(format!("Garmin's token service answered HTTP {s} (down for a moment); the session was not renewed"))),
                s => Err(RenewError::Failed(format!(
                    "Garmin's token service refused to renew the session (HTTP {s}): it has ended. Log in again (vitals-mcp auth garmin-connect) or import fresh tokens"
                ))),
            }
        }
        // Flow B renews by exchanging the OAuth1 token again (reference §2.6).
        Some("oauth1") => {
            let kept = g.refresh.clone().ok_or("the saved login has no OAuth1 token; log in again")?;
            let t: super::oauth1::OAuth1 = serde_json::from_str(kept.expose()).map_err(|_| "the saved OAuth1 token is damaged; log in again")?;
            Ok(oauth1_grant(t, false, c).await?)
        }
        _ => Err("the saved Garmin Connect login is of a kind this version does not know; log in again".into()),
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
        assert!(claims(&jwt("none", serde_json::json!({"exp": 1}))).unwrap_err().contains("alg none"));
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
        assert!(read_dir(&none).unwrap_err().contains("neither garmin_tokens.json"));
        assert!(read_dir(&root.join("absent")).unwrap_err().contains("no such folder"));
    }
}
