//! The authorization code flow, generic over OAuth providers and driven by their
//! [`OAuthSpec`]: `state` always; PKCE (S256), the client authentication (form body or HTTP Basic),
//! the scope separator and extra form fields as the provider declares; its token endpoints in
//! order with a fallback on 400/401; a reply in a foreign dialect translated by the provider's own
//! function; the fields it sends with the tokens kept; rotating refresh. Endpoint URLs and the
//! redirect can be overridden by environment (the twins in tests).
use super::app::AppCredentials;
use super::store::Tokens;
use crate::config::Config;
use crate::connection::{ClientAuth, OAuthSpec};
use crate::retry::{Attempt, Kind, Policy, Stop, Word};
use crate::secret::Secret;
use oauth2::basic::{BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse, BasicTokenType};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl,
    RefreshToken, RequestTokenError, Scope, StandardRevocableToken, StandardTokenResponse, TokenResponse, TokenUrl,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Whatever the token reply carries beyond RFC 6749 (`userid`, `x_user_id`): the spec's `keep`
/// list picks what is saved.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Extra {
    #[serde(flatten)]
    fields: BTreeMap<String, serde_json::Value>,
}

impl oauth2::ExtraTokenFields for Extra {}

type Reply = StandardTokenResponse<Extra, BasicTokenType>;

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
    /// The token endpoint did not answer about the token (unreachable, HTTP 5xx or 429), twice:
    /// nothing says the login is bad.
    #[error("{0}")]
    Unavailable(String),
    /// The token endpoint answered 429 (too many requests) and asked for a longer wait than a
    /// login takes (`retry::LOGIN_WAIT`): nothing says the login is bad; `wait` is what it asked.
    #[error("the token endpoint answered 429 (too many requests) and {}; try again in {} s", said_wait(*word), crate::retry::ahead(*wait))]
    Limited { word: Word, wait: Duration },
    #[error("{0}")]
    Config(String),
}

/// How a 429 said its wait, as a clause.
fn said_wait(word: Word) -> &'static str {
    match word {
        Word::RetryAfter => "said when to ask again (Retry-After)",
        Word::Reset | Word::Nothing => "did not say when to ask again (no Retry-After), so vitals chose the wait",
    }
}

/// A token request's 429 past what a login waits, told by the client that sent it to the flow
/// that reads its outcome (the `oauth2` crate carries a client's failure only as words).
type Told = Arc<Mutex<Option<(Word, Duration)>>>;

/// An endpoint as the server's settings override it (`var`, the twin in tests), else `default`.
pub fn env_or(config: &Config, var: &str, default: &str) -> String {
    config.var(var).unwrap_or(default).to_string()
}

/// A login in progress: the URL to open, and what the callback is checked against.
pub struct Pending {
    pub url: String,
    state: CsrfToken,
    verifier: PkceCodeVerifier,
    redirect: String,
    /// The settings of the server the login started on: its token endpoints are theirs.
    config: Arc<Config>,
}

/// A client with its authorize and token endpoints set (the two this flow uses).
type Client = oauth2::Client<
    BasicErrorResponse,
    Reply,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
>;

fn client(spec: &OAuthSpec, app: &AppCredentials, token_url: &str, redirect: &str, config: &Config) -> Result<Client, AuthError> {
    let bad = |what: &str, e: oauth2::url::ParseError| AuthError::Config(format!("{what} is not a URL ({e})"));
    Ok(oauth2::Client::new(ClientId::new(app.client_id.clone()))
        .set_client_secret(ClientSecret::new(app.client_secret.expose().to_string()))
        .set_auth_type(match spec.client_auth {
            ClientAuth::Body => AuthType::RequestBody,
            ClientAuth::Basic => AuthType::BasicAuth,
        })
        .set_auth_uri(AuthUrl::new(env_or(config, spec.authorize_env, spec.authorize_url)).map_err(|e| bad("the authorize URL", e))?)
        .set_token_uri(TokenUrl::new(token_url.to_string()).map_err(|e| bad("the token URL", e))?)
        .set_redirect_uri(RedirectUrl::new(redirect.to_string()).map_err(|e| bad("the redirect", e))?))
}

/// Start a login on a server with `config`: a fresh `state` and PKCE pair, and the authorize URL to open.
pub fn begin(spec: &OAuthSpec, app: &AppCredentials, config: &Arc<Config>) -> Result<Pending, AuthError> {
    begin_at(spec, app, spec.redirect(config).0, config)
}

/// As [`begin`], with the browser sent back to `redirect` (a hosted server's own callback).
pub fn begin_at(spec: &OAuthSpec, app: &AppCredentials, redirect: String, config: &Arc<Config>) -> Result<Pending, AuthError> {
    let first = spec.token_urls.first().map(|(u, v)| env_or(config, v, u)).unwrap_or_default();
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let c = client(spec, app, &first, &redirect, config)?;
    let mut auth = c.authorize_url(CsrfToken::new_random);
    // The provider's own parameters, unless an overriding URL already names them.
    let named = env_or(config, spec.authorize_env, spec.authorize_url);
    let named: Vec<String> = url::Url::parse(&named).map(|u| u.query_pairs().map(|(k, _)| k.into_owned()).collect()).unwrap_or_default();
    for (k, v) in spec.authorize_params.iter().filter(|(k, _)| !named.iter().any(|n| n == k)) {
        auth = auth.add_extra_param(*k, *v);
    }
    // One scope string joined as the provider wants: the crate would join them with spaces.
    let auth = auth.add_scope(Scope::new(spec.scopes.join(spec.scope_separator)));
    let (url, state) = if spec.pkce { auth.set_pkce_challenge(challenge).url() } else { auth.url() };
    Ok(Pending { url: url.to_string(), state, verifier, redirect, config: config.clone() })
}

impl Pending {
    /// The login's `state`: the provider sends it back with the code, and a hosted server finds
    /// the login waiting for that browser by it.
    pub fn state(&self) -> String {
        self.state.secret().clone()
    }

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
        let told = Told::default();
        let http = token_http(spec, told.clone());
        let mut last = String::new();
        for (url, var) in spec.token_urls {
            let c = client(spec, app, &env_or(&self.config, var, url), &self.redirect, &self.config)?;
            let mut exchange = c.exchange_code(AuthorizationCode::new(code.to_string()));
            if spec.pkce {
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
            // A 429 past what a login waits ends the login: the next endpoint is not asked at once.
            if let Some(limited) = limited(&told) {
                return Err(limited);
            }
        }
        Err(AuthError::Token(last))
    }
}

/// Refresh at each token endpoint in order (as `config` names them). The result must be saved
/// before it is used: the old refresh token is dead from now on.
pub async fn refresh(spec: &OAuthSpec, app: &AppCredentials, t: &Tokens, config: &Config) -> Result<Tokens, AuthError> {
    let r = t.refresh.as_ref().ok_or_else(|| AuthError::Config("no refresh token is stored, so the login cannot be renewed; connect again".into()))?;
    let (redirect, _) = spec.redirect(config);
    let told = Told::default();
    // Unreachable, or a server error: asked once more by the client (`token_http`). Had the first
    // attempt rotated the pair after all, a rotating provider refuses the second, as it would have anyway.
    let http = token_http(spec, told.clone());
    let refresh = RefreshToken::new(r.expose().to_string());
    let (mut last, mut down) = (String::new(), false);
    for (url, var) in spec.token_urls {
        let c = client(spec, app, &env_or(config, var, url), &redirect, config)?;
        match c.exchange_refresh_token(&refresh).request_async(&http).await {
            // Some providers keep the refresh token and send none back: `renewed` keeps the old one.
            Ok(new) => return Ok(t.renewed(tokens_of(spec, &new).grant())),
            Err(e) => (last, down) = (describe(&e), matches!(e, RequestTokenError::Request(_))),
        }
        if let Some(limited) = limited(&told) {
            return Err(limited);
        }
    }
    Err(if down {
        AuthError::Unavailable(format!("{last}, twice; the saved login may still be good: ask again in a few minutes"))
    } else {
        AuthError::Token(last)
    })
}

fn tokens_of(spec: &OAuthSpec, t: &Reply) -> Tokens {
    let now = jiff::Timestamp::now().as_second();
    let scopes = match t.scopes() {
        // A provider that joins granted scopes with another separator sends what the crate reads as one.
        Some(s) => s.iter().flat_map(|x| x.as_str().split(spec.scope_separator)).map(|x| x.trim_start_matches(spec.scope_prefix).to_string()).collect(),
        None => spec.scopes.iter().map(|s| s.to_string()).collect(),
    };
    let extra = spec
        .keep
        .iter()
        .filter_map(|k| {
            let v = t.extra_fields().fields.get(*k)?;
            Some((k.to_string(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
        })
        .collect();
    Tokens {
        access: Secret::new(t.access_token().secret().clone()),
        refresh: t.refresh_token().map(|r| Secret::new(r.secret().clone())),
        expires_at: t.expires_in().map(|d| now + d.as_secs() as i64),
        scopes,
        extra,
        ..Default::default()
    }
}

/// What went wrong, without any secret: the provider's error code and description, or the kind of failure.
fn describe(e: &RequestTokenError<crate::http::TokenClientError, oauth2::basic::BasicErrorResponse>) -> String {
    match e {
        RequestTokenError::ServerResponse(r) => {
            format!("{}{}", r.error(), r.error_description().map(|d| format!(": {d}")).unwrap_or_default())
        }
        RequestTokenError::Request(oauth2::HttpClientError::Other(why)) => why.clone(),
        RequestTokenError::Request(_) => "the token endpoint could not be reached".into(),
        RequestTokenError::Parse(_, _) => "the token endpoint's answer was not a token response".into(),
        RequestTokenError::Other(s) => s.clone(),
    }
}

type TokenFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, crate::http::TokenClientError>> + Send>>;

/// The 429 a token request was left with, as the login's error.
fn limited(told: &Told) -> Option<AuthError> {
    told.lock().expect("told lock").take().map(|(word, wait)| AuthError::Limited { word, wait })
}

/// One token request sent as the login's policy says ([`Policy::LOGIN`]): a failure on the way or
/// a 5xx asked once more, a 429 waited as it asked while that fits, else left with its wait in `told`.
async fn token_send(req: oauth2::HttpRequest, declared: &[&str], told: &Told) -> Result<oauth2::HttpResponse, crate::http::TokenClientError> {
    let (parts, body) = req.into_parts();
    let sent = crate::retry::paced(Policy::LOGIN, || {
        let req = oauth2::HttpRequest::from_parts(parts.clone(), body.clone());
        async move {
            let resp = match crate::http::token_post(req, declared).await {
                Ok(resp) => resp,
                Err(e) => return Attempt::Failing(Err(e)),
            };
            match crate::retry::classify(resp.status().as_u16()) {
                Kind::RateLimited => {
                    let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok());
                    let after = header("retry-after").and_then(|v| crate::retry::retry_after(v, header("date")));
                    Attempt::Limited(Ok(resp), after)
                }
                Kind::Failing => Attempt::Failing(Ok(resp)),
                _ => Attempt::Done(Ok(resp)),
            }
        }
    });
    match sent.await {
        Ok(r) | Err(Stop::Failing(r)) => r,
        Err(Stop::Limited { last, word, wait }) => {
            *told.lock().expect("told lock") = Some((word, wait));
            last
        }
    }
}

/// The HTTP client the `oauth2` crate sends token requests through: [`crate::http::token_post`]
/// as the login's policy says ([`token_send`]), with the provider's extra form fields added on
/// the way out and its reply dialect translated on the way in.
fn token_http(spec: &OAuthSpec, told: Told) -> impl Fn(oauth2::HttpRequest) -> TokenFuture {
    let (params, reply, declared) = (spec.token_params, spec.reply, spec.token_urls);
    move |mut req: oauth2::HttpRequest| {
        let told = told.clone();
        Box::pin(async move {
            let declared: Vec<&str> = declared.iter().map(|(url, _)| *url).collect();
            for (k, v) in params {
                let pair: String = url::form_urlencoded::Serializer::new(String::new()).append_pair(k, v).finish();
                req.body_mut().extend_from_slice(format!("&{pair}").as_bytes());
            }
            let resp = token_send(req, &declared, &told).await?;
            let status = resp.status().as_u16();
            if status >= 500 || status == 429 {
                // Not an answer about the token: the endpoint is down or busy (often an HTML page).
                return Err(oauth2::HttpClientError::Other(format!("the token endpoint answered HTTP {status} (down or busy)")));
            }
            Ok(match reply {
                None => resp,
                Some(translate) => standard(translate(status, resp.body())),
            })
        }) as TokenFuture
    }
}

/// A translated reply as the crate expects it: HTTP 200 with the tokens, or HTTP 400 with an
/// RFC 6749 error, so the crate reports it as the provider's refusal.
fn standard(reply: crate::connection::TokenReply) -> oauth2::HttpResponse {
    let (code, out) = match reply {
        Ok(tokens) => (200, tokens),
        Err((error, description)) => (400, serde_json::json!({"error": error, "error_description": crate::secret::redact(&description)})),
    };
    let mut r = oauth2::HttpResponse::new(serde_json::to_vec(&out).expect("JSON serialises"));
    *r.status_mut() = oauth2::http::StatusCode::from_u16(code).expect("a valid status");
    r.headers_mut().insert(oauth2::http::header::CONTENT_TYPE, oauth2::http::HeaderValue::from_static("application/json"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url_for(config: Config) -> String {
        let spec = crate::providers::google_health::catalog::GOOGLE_HEALTH.connection.oauth().expect("OAuth");
        let app = AppCredentials { client_id: "id".into(), client_secret: crate::secret::Secret::new("s"), source: super::super::app::AppSource::Environment };
        begin(spec, &app, &Arc::new(config)).expect("a login").url
    }

    #[test]
    fn the_providers_authorize_parameters_ride_on_the_default_url_and_an_overriding_one_once() {
        let count = |u: &str, p: &str| u.matches(p).count();
        let default = url_for(Config::default());
        assert!(default.starts_with("https://accounts.google.com/o/oauth2/v2/auth?"), "{default}");
        for p in ["access_type=offline", "prompt=consent", "include_granted_scopes=false"] {
            assert_eq!(count(&default, p), 1, "{p} in {default}");
        }
        // An override without them gets them; one that names one keeps its own and gets the rest.
        let bare = url_for(Config::default().with("VITALS_GOOGLE_HEALTH_AUTHORIZE_URL", "http://127.0.0.1:1/auth"));
        assert!(bare.starts_with("http://127.0.0.1:1/auth?") && count(&bare, "access_type=offline") == 1, "{bare}");
        let own = url_for(Config::default().with("VITALS_GOOGLE_HEALTH_AUTHORIZE_URL", "http://127.0.0.1:1/auth?prompt=select_account"));
        assert!(count(&own, "prompt=") == 1 && own.contains("prompt=select_account") && own.contains("access_type=offline"), "{own}");
    }
}
