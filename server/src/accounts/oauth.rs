//! The authorization code flow, generic over OAuth providers: `state` always, PKCE (S256), the
//! provider's token endpoints in order with a fallback on 400/401, rotating refresh. Endpoint URLs
//! and the redirect can be overridden by environment (the twin in tests).
use super::app::AppCredentials;
use super::store::Tokens;
use crate::secret::Secret;
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};

/// One provider's OAuth endpoints, as data in its catalog.
#[derive(Debug, Clone, Copy)]
pub struct OAuthSpec {
    pub authorize_url: &'static str,
    pub authorize_env: &'static str,
    /// Token endpoints in the order to try them, each with the variable that overrides it.
    pub token_urls: &'static [(&'static str, &'static str)],
    /// The redirect registered at the provider's developer portal (exactly, trailing slash included).
    pub redirect: &'static str,
    pub redirect_env: &'static str,
    pub scopes: &'static [&'static str],
    /// Prefix the provider adds to granted scopes, stripped on receipt.
    pub scope_prefix: &'static str,
    /// Where a user registers an app.
    pub portal: &'static str,
    /// The endpoint that ends a grant, where the provider has one.
    pub revoke: Option<RevokeSpec>,
    /// How the provider departs from RFC 6749, if it does.
    pub style: TokenStyle,
}

/// The two dialects of the authorization code flow we speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStyle {
    /// RFC 6749 with PKCE (S256): space-separated scopes, a plain JSON token reply.
    Standard,
    /// Withings (reference §2): comma-separated scopes, no PKCE, `action=requesttoken` in every
    /// token request, and the reply wrapped in `{status, body}` on HTTP 200 whatever happened. The
    /// wrapper is taken off before the `oauth2` crate reads the reply, and a reply without
    /// `access_token`, `refresh_token` and `userid` is refused rather than saved.
    WithingsEnvelope,
}

/// A revoke endpoint: POST `url?<param>=<access token>` (overridable by `env`).
#[derive(Debug, Clone, Copy)]
pub struct RevokeSpec {
    pub url: &'static str,
    pub env: &'static str,
    pub param: &'static str,
}

impl RevokeSpec {
    pub fn url(&self) -> String {
        env_or(self.env, self.url)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the login was refused: {0}")]
    Denied(String),
    #[error("the callback's `state` does not match this login (a stale or foreign redirect); start the login again")]
    StateMismatch,
    #[error("the pasted text holds no authorization `code`; paste the whole address the browser was sent to")]
    NoCode,
    #[error("the token endpoint refused: {0}")]
    Token(String),
    #[error("{0}")]
    Config(String),
}

fn env_or(var: &str, default: &str) -> String {
    crate::env::var(var).unwrap_or_else(|| default.to_string())
}

impl OAuthSpec {
    /// The redirect this process sends, and where the value came from.
    pub fn redirect(&self) -> (String, String) {
        match crate::env::var(self.redirect_env) {
            Some(v) => (v, format!("environment {}", self.redirect_env)),
            None => (self.redirect.to_string(), "default (register exactly this at the developer portal)".into()),
        }
    }
}

/// A login in progress: the URL to open, and what the callback is checked against.
pub struct Pending {
    pub url: String,
    state: CsrfToken,
    verifier: PkceCodeVerifier,
    redirect: String,
}

/// A client with its authorize and token endpoints set (the two this flow uses).
type Client = BasicClient<oauth2::EndpointSet, oauth2::EndpointNotSet, oauth2::EndpointNotSet, oauth2::EndpointNotSet, oauth2::EndpointSet>;

fn client(spec: &OAuthSpec, app: &AppCredentials, token_url: &str, redirect: &str) -> Result<Client, AuthError> {
    let bad = |what: &str, e: oauth2::url::ParseError| AuthError::Config(format!("{what} is not a URL ({e})"));
    Ok(BasicClient::new(ClientId::new(app.client_id.clone()))
        .set_client_secret(ClientSecret::new(app.client_secret.expose().to_string()))
        // The client authenticates in the form body, as the provider documents.
        .set_auth_type(AuthType::RequestBody)
        .set_auth_uri(AuthUrl::new(env_or(spec.authorize_env, spec.authorize_url)).map_err(|e| bad("the authorize URL", e))?)
        .set_token_uri(TokenUrl::new(token_url.to_string()).map_err(|e| bad("the token URL", e))?)
        .set_redirect_uri(RedirectUrl::new(redirect.to_string()).map_err(|e| bad("the redirect", e))?))
}

/// Start a login: a fresh `state` and PKCE pair, and the authorize URL to open.
pub fn begin(spec: &OAuthSpec, app: &AppCredentials) -> Result<Pending, AuthError> {
    let (redirect, _) = spec.redirect();
    let first = spec.token_urls.first().map(|(u, v)| env_or(v, u)).unwrap_or_default();
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let c = client(spec, app, &first, &redirect)?;
    let auth = c.authorize_url(CsrfToken::new_random);
    let (url, state) = match spec.style {
        TokenStyle::Standard => auth.add_scopes(spec.scopes.iter().map(|s| Scope::new(s.to_string()))).set_pkce_challenge(challenge).url(),
        TokenStyle::WithingsEnvelope => auth.add_scope(Scope::new(spec.scopes.join(","))).url(),
    };
    Ok(Pending { url: url.to_string(), state, verifier, redirect })
}

impl Pending {
    pub fn redirect(&self) -> &str {
        &self.redirect
    }

    /// The code from a callback: a whole redirect URL, or just its query string.
    pub fn code_from(&self, callback: &str) -> Result<String, AuthError> {
        let t = callback.trim();
        let query = t.split_once('?').map(|(_, q)| q).unwrap_or(t);
        let pairs: std::collections::HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        if let Some(e) = pairs.get("error") {
            let d = pairs.get("error_description").cloned().unwrap_or_default();
            return Err(AuthError::Denied(format!("{e} {d}").trim().to_string()));
        }
        if pairs.get("state").map(String::as_str) != Some(self.state.secret().as_str()) {
            return Err(AuthError::StateMismatch);
        }
        pairs.get("code").cloned().filter(|c| !c.is_empty()).ok_or(AuthError::NoCode)
    }

    /// Exchange the code for tokens at each token endpoint in order, falling back on 400/401.
    pub async fn finish(self, spec: &OAuthSpec, app: &AppCredentials, code: &str) -> Result<Tokens, AuthError> {
        let http = token_http(spec.style);
        let mut last = String::new();
        for (url, var) in spec.token_urls {
            let c = client(spec, app, &env_or(var, url), &self.redirect)?;
            let mut exchange = c.exchange_code(AuthorizationCode::new(code.to_string()));
            if spec.style == TokenStyle::Standard {
                exchange = exchange.set_pkce_verifier(PkceCodeVerifier::new(self.verifier.secret().clone()));
            }
            match exchange.request_async(&http).await {
                Ok(t) => {
                    let mut out = tokens_of(spec, &t);
                    out.login = Some(CsrfToken::new_random().secret().clone());
                    return Ok(out);
                }
                Err(e) => last = describe(&e),
            }
        }
        Err(AuthError::Token(last))
    }
}

/// Refresh at each token endpoint in order. The result must be saved before it is used: the old
/// refresh token is dead from now on.
pub async fn refresh(spec: &OAuthSpec, app: &AppCredentials, t: &Tokens) -> Result<Tokens, AuthError> {
    let r = t.refresh.as_ref().ok_or_else(|| AuthError::Token("no refresh token is stored; connect again".into()))?;
    let (redirect, _) = spec.redirect();
    let http = token_http(spec.style);
    let mut last = String::new();
    for (url, var) in spec.token_urls {
        let c = client(spec, app, &env_or(var, url), &redirect)?;
        match c.exchange_refresh_token(&RefreshToken::new(r.expose().to_string())).request_async(&http).await {
            Ok(new) => {
                let mut out = tokens_of(spec, &new);
                // Some providers keep the refresh token and send none back.
                if out.refresh.is_none() {
                    out.refresh = t.refresh.clone();
                }
                return Ok(out);
            }
            Err(e) => last = describe(&e),
        }
    }
    Err(AuthError::Token(last))
}

fn tokens_of(spec: &OAuthSpec, t: &oauth2::basic::BasicTokenResponse) -> Tokens {
    let now = jiff::Timestamp::now().as_second();
    let scopes = match t.scopes() {
        // Withings separates granted scopes with commas, which the crate reads as one scope.
        Some(s) => s.iter().flat_map(|x| x.as_str().split(',')).map(|x| x.trim_start_matches(spec.scope_prefix).to_string()).collect(),
        None => spec.scopes.iter().map(|s| s.to_string()).collect(),
    };
    Tokens {
        access: Secret::new(t.access_token().secret().clone()),
        refresh: t.refresh_token().map(|r| Secret::new(r.secret().clone())),
        expires_at: t.expires_in().map(|d| now + d.as_secs() as i64),
        scopes,
        login: None,
    }
}

/// What went wrong, without any secret: the provider's error code and description, or the kind of failure.
fn describe<RE: std::error::Error + 'static>(e: &RequestTokenError<RE, oauth2::basic::BasicErrorResponse>) -> String {
    match e {
        RequestTokenError::ServerResponse(r) => {
            format!("{}{}", r.error(), r.error_description().map(|d| format!(": {d}")).unwrap_or_default())
        }
        RequestTokenError::Request(_) => "the token endpoint could not be reached".into(),
        RequestTokenError::Parse(_, _) => "the token endpoint's answer was not a token response".into(),
        RequestTokenError::Other(s) => s.clone(),
    }
}

type TokenFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, oauth2::HttpClientError<reqwest::Error>>> + Send>>;

/// The HTTP client the `oauth2` crate sends token requests through: [`crate::http::token_client`],
/// with Withings' dialect translated on the way in and out.
fn token_http(style: TokenStyle) -> impl Fn(oauth2::HttpRequest) -> TokenFuture {
    move |mut req: oauth2::HttpRequest| {
        Box::pin(async move {
            if style == TokenStyle::WithingsEnvelope {
                req.body_mut().extend_from_slice(b"&action=requesttoken");
            }
            let client = crate::http::token_client();
            let resp = oauth2::AsyncHttpClient::call(&client, req).await?;
            Ok(match style {
                TokenStyle::Standard => resp,
                TokenStyle::WithingsEnvelope => unwrap_withings(resp),
            })
        }) as TokenFuture
    }
}

/// `{status: 0, body: {...}}` → HTTP 200 with the body; any other status → HTTP 400 with an
/// RFC 6749 error naming it, so the crate reports it as the provider's refusal.
fn unwrap_withings(resp: oauth2::HttpResponse) -> oauth2::HttpResponse {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(resp.body()) else {
        return resp;
    };
    let status = v.get("status").and_then(serde_json::Value::as_i64).unwrap_or(-1);
    let body = v.get("body").cloned().unwrap_or_default();
    let complete = ["access_token", "refresh_token", "userid"].iter().all(|k| body.get(k).is_some_and(|x| !x.is_null()));
    let (code, out) = match (status, complete) {
        (0, true) => (200, body),
        (0, false) => (
            400,
            serde_json::json!({"error": "incomplete_reply", "error_description": "Withings answered without an access token, refresh token and user id; nothing was saved"}),
        ),
        (s, _) => {
            let said = v.get("error").and_then(serde_json::Value::as_str).unwrap_or("no text");
            (400, serde_json::json!({"error": format!("withings_status_{s}"), "error_description": crate::secret::redact(said)}))
        }
    };
    let mut r = oauth2::HttpResponse::new(serde_json::to_vec(&out).expect("JSON serialises"));
    *r.status_mut() = oauth2::http::StatusCode::from_u16(code).expect("a valid status");
    r.headers_mut().insert(oauth2::http::header::CONTENT_TYPE, oauth2::http::HeaderValue::from_static("application/json"));
    r
}
