//! Oura's OAuth2 endpoints as the reference describes them (§8): the authorize redirect with `code`,
//! `state` and `iss`; the new-IdP and the legacy token endpoints with per-portal behaviour; single-use
//! codes valid 10 minutes that any attempt burns; single-use rotating refresh tokens; access tokens
//! that expire; revoke. Where the reference marks a rule inferred, the rule is a knob.
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use jiff::{Timestamp, ToSpan};
use serde_json::json;
use std::collections::HashMap;

pub const ISS: &str = "https://moi.ouraring.com/oauth/v2/ext/oauth-anonymous";

/// Which developer portal an app was registered on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Portal {
    New,
    Legacy,
}

#[derive(Clone, Debug)]
pub struct App {
    pub client_id: String,
    pub client_secret: String,
    pub redirect_uri: String,
    pub portal: Portal,
}

struct Code {
    client_id: String,
    redirect_uri: String,
    scope: String,
    issued: Timestamp,
    challenge: Option<String>,
}

struct Grant {
    client_id: String,
    scope: String,
}

/// The twin's OAuth state. Knobs are public fields; the rest is what it issued.
pub struct OAuth {
    pub apps: Vec<App>,
    /// Seconds an access token lives (`expires_in`).
    pub expires_in: i64,
    /// The user refuses consent: the redirect carries `error=access_denied`.
    pub deny: bool,
    /// Inferred: the new IdP turns away legacy-portal apps (401, before it looks at the code).
    pub new_idp_rejects_legacy_apps: bool,
    codes: HashMap<String, Code>,
    refresh: HashMap<String, Grant>,
    access: HashMap<String, (Timestamp, String)>,
    /// Refresh tokens already spent, so reuse is told apart from nonsense.
    spent: Vec<String>,
    counter: u64,
    /// Every token request: (endpoint, grant type, status).
    pub log: Vec<(String, String, u16)>,
}

impl Default for OAuth {
    fn default() -> Self {
        OAuth {
            apps: vec![App {
                client_id: "twin-client".into(),
                client_secret: "twin-client-secret".into(),
                redirect_uri: "http://localhost:9876/callback/".into(),
                portal: Portal::New,
            }],
            expires_in: 86_400,
            deny: false,
            new_idp_rejects_legacy_apps: false,
            codes: HashMap::new(),
            refresh: HashMap::new(),
            access: HashMap::new(),
            spent: vec![],
            counter: 0,
            log: vec![],
        }
    }
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (status, Json(json!({"error": error, "error_description": description}))).into_response()
}

/// `S256` of a PKCE verifier: SHA-256, base64url without padding (RFC 7636).
fn s256(verifier: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

impl OAuth {
    fn next(&mut self, kind: &str) -> String {
        self.counter += 1;
        format!("twin-{kind}-{:08}-{:x}", self.counter, crate::oura::generate::mix(self.counter ^ 0x0a07))
    }

    /// Whether `bearer` is an access token this twin issued and that has not expired.
    pub fn access_valid(&self, bearer: &str, now: Timestamp) -> bool {
        self.access.get(bearer).is_some_and(|(exp, _)| *exp > now)
    }

    /// Expire every access token now (to test refresh on 401).
    pub fn expire_access_tokens(&mut self) {
        for (exp, _) in self.access.values_mut() {
            *exp = Timestamp::UNIX_EPOCH;
        }
    }

    /// `GET /oauth/authorize`: the user consents at once (or refuses, with `deny`).
    pub fn authorize(&mut self, q: &HashMap<String, String>, now: Timestamp) -> Response {
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let Some(app) = self.apps.iter().find(|a| a.client_id == get("client_id")).cloned() else {
            return (StatusCode::BAD_REQUEST, "invalid_client: unknown client_id").into_response();
        };
        if get("redirect_uri") != app.redirect_uri {
            return (StatusCode::BAD_REQUEST, "invalid_redirect_uri: it must match the registered one exactly").into_response();
        }
        if get("response_type") != "code" {
            return (StatusCode::BAD_REQUEST, "unsupported_response_type").into_response();
        }
        let state = get("state");
        let sep = if app.redirect_uri.contains('?') { '&' } else { '?' };
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        if self.deny {
            let to = format!("{}{sep}error=access_denied&error_description={}&state={}", app.redirect_uri, enc("The user denied access"), enc(&state));
            return Redirect::to(&to).into_response();
        }
        let code = self.next("code");
        let challenge = q.get("code_challenge").cloned();
        self.codes.insert(code.clone(), Code { client_id: app.client_id, redirect_uri: app.redirect_uri.clone(), scope: get("scope"), issued: now, challenge });
        let to = format!("{}{sep}code={}&state={}&iss={}", app.redirect_uri, enc(&code), enc(&state), enc(ISS));
        Redirect::to(&to).into_response()
    }

    /// `POST` to a token endpoint; `legacy` says which one.
    pub fn token(&mut self, legacy: bool, form: &HashMap<String, String>, now: Timestamp) -> Response {
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        let r = self.token_inner(legacy, &grant, form, now);
        let endpoint = if legacy { "legacy" } else { "new" };
        self.log.push((endpoint.into(), grant, r.status().as_u16()));
        r
    }

    fn token_inner(&mut self, legacy: bool, grant: &str, form: &HashMap<String, String>, now: Timestamp) -> Response {
        let get = |k: &str| form.get(k).cloned().unwrap_or_default();
        let app = self.apps.iter().find(|a| a.client_id == get("client_id") && a.client_secret == get("client_secret")).cloned();
        let Some(app) = app else {
            if grant == "authorization_code" {
                self.codes.remove(&get("code"));
            }
            return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "Client authentication failed");
        };
        if !legacy && app.portal == Portal::Legacy && self.new_idp_rejects_legacy_apps {
            return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "Unknown client for this identity provider");
        }
        match grant {
            "authorization_code" => {
                // Any attempt burns the code, whether it succeeds or not.
                let Some(code) = self.codes.remove(&get("code")) else {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "The authorization code is invalid, expired or already used");
                };
                if legacy && app.portal == Portal::New {
                    return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", "This client is not registered with the legacy service");
                }
                if code.client_id != app.client_id || now > code.issued + 10.minutes() {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "The authorization code is invalid, expired or already used");
                }
                if get("redirect_uri") != code.redirect_uri {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", "redirect_uri does not match");
                }
                if let Some(ch) = &code.challenge {
                    if s256(&get("code_verifier")) != *ch {
                        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "PKCE verification failed");
                    }
                }
                self.issue(&app.client_id, &code.scope, !legacy, now)
            }
            "refresh_token" => {
                if legacy && app.portal == Portal::New {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "Invalid request");
                }
                let r = get("refresh_token");
                if self.spent.contains(&r) {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "Refresh token already used");
                }
                match self.refresh.remove(&r) {
                    Some(g) if g.client_id == app.client_id => {
                        self.spent.push(r);
                        self.issue(&app.client_id, &g.scope, !legacy, now)
                    }
                    Some(g) => {
                        self.refresh.insert(r, g);
                        oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "Refresh token was issued to another client")
                    }
                    None => oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "Invalid refresh token"),
                }
            }
            _ => oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token"),
        }
    }

    fn issue(&mut self, client_id: &str, scope: &str, new_idp: bool, now: Timestamp) -> Response {
        let (access, refresh) = (self.next("access"), self.next("refresh"));
        self.access.insert(access.clone(), (now + self.expires_in.seconds(), client_id.into()));
        self.refresh.insert(refresh.clone(), Grant { client_id: client_id.into(), scope: scope.into() });
        // The new IdP answers with `extapi:`-prefixed scopes.
        let scope_out = if new_idp { scope.split_whitespace().map(|s| format!("extapi:{s}")).collect::<Vec<_>>().join(" ") } else { scope.to_string() };
        Json(json!({"access_token": access, "refresh_token": refresh, "expires_in": self.expires_in, "scope": scope_out, "token_type": "bearer"}))
            .into_response()
    }

    /// `POST /oauth/revoke?access_token=…`: the token and its grant stop working.
    pub fn revoke(&mut self, token: &str) -> StatusCode {
        match self.access.remove(token) {
            Some((_, client)) => {
                self.refresh.retain(|_, g| g.client_id != client);
                StatusCode::OK
            }
            None => StatusCode::BAD_REQUEST,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_matches_the_rfc_example() {
        // RFC 7636, appendix B.
        assert_eq!(s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }
}
