//! The authorization code flow, generic over OAuth providers: `state` always, PKCE (S256), the
//! provider's token endpoints in order with a fallback on 400/401, rotating refresh. Endpoint URLs
//! and the redirect can be overridden by environment (the twin in tests).
use super::app::AppCredentials;
use super::store::Tokens;
use crate::secret::Secret;
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
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
    let (url, state) = client(spec, app, &first, &redirect)?
        .authorize_url(CsrfToken::new_random)
        .add_scopes(spec.scopes.iter().map(|s| Scope::new(s.to_string())))
        .set_pkce_challenge(challenge)
        .url();
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
        let http = crate::http::token_client();
        let mut last = String::new();
        for (url, var) in spec.token_urls {
            let c = client(spec, app, &env_or(var, url), &self.redirect)?;
            let verifier = PkceCodeVerifier::new(self.verifier.secret().clone());
            match c.exchange_code(AuthorizationCode::new(code.to_string())).set_pkce_verifier(verifier).request_async(&http).await {
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
    let http = crate::http::token_client();
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
        Some(s) => s.iter().map(|x| x.as_str().trim_start_matches(spec.scope_prefix).to_string()).collect(),
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
