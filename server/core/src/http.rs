//! The only way out of this crate to a provider. Data is read with GET. A request of any other
//! method leaves only to a route its provider's catalog declares ([`NonGet`], and the token and
//! revoke endpoints of its OAuth), checked by [`allowed`] before the request is built: Withings'
//! form reads (whose `action` must also be one of [`READ_ACTIONS`]), token requests, the revoke
//! of our own grant, Polar's registration, Garmin's key exchange, and Garmin Connect's sign-in,
//! DI token endpoint and OAuth1 exchange. `tests/tests/e2e/invariants.rs` keeps it so.
use crate::catalog::NonGet;
use crate::secret::Secret;
use std::time::Duration;

/// How one upstream read is sent. Providers that read with a GET use [`ReadMethod::Get`];
/// Withings reads with form-encoded POSTs, which `http.rs` sends only for its read actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMethod {
    Get,
    /// The params are the form body; one of them is `action`, which must be a read action.
    FormPost,
}

/// One upstream request, as the provider wants it sent.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: ReadMethod,
    pub url: String,
    pub params: Vec<(String, String)>,
    /// Headers besides the bearer (Garmin Connect's mobile-app headers); none of them secret.
    pub headers: &'static [(&'static str, &'static str)],
}

impl Request {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// The URL's path and the params by name: what an in-process sample API routes on.
    pub fn route(&self) -> (String, std::collections::HashMap<String, String>) {
        let path = url::Url::parse(&self.url).map(|u| u.path().to_string()).unwrap_or_default();
        (path, self.params.iter().cloned().collect())
    }
}

/// How a binary body (a ZIP, a FIT) travels where text is expected: this prefix, then standard
/// base64. A provider that reads files in a query (Garmin's FIT) takes it back with [`binary`].
pub const BINARY_PREFIX: &str = "base64:";

/// Bytes as a body: text when they are UTF-8 and the type is textual, else [`BINARY_PREFIX`] + base64.
pub fn body_of(bytes: Vec<u8>, content_type: &str) -> String {
    use base64::Engine as _;
    let textual = content_type.is_empty() || content_type.contains("json") || content_type.starts_with("text/") || content_type.contains("xml");
    match String::from_utf8(bytes) {
        Ok(s) if textual => s,
        Ok(s) => format!("{BINARY_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(s.as_bytes())),
        Err(e) => format!("{BINARY_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(e.as_bytes())),
    }
}

/// The bytes of a binary body, if it is one.
pub fn binary(body: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(body.strip_prefix(BINARY_PREFIX)?).ok()
}

/// One answer from upstream, before any interpretation.
pub struct Reply {
    pub status: u16,
    pub retry_after: Option<Duration>,
    /// What the provider's rate headers said of its budget, when it sent them.
    pub quota: Option<Quota>,
    /// The body, or why it broke off (a reset, a timeout mid-body), kept as its kind.
    pub body: Result<String, HttpError>,
}

/// A provider's own account of its request budget, from its rate headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Requests left in the tightest window.
    pub remaining: u64,
    /// When that window starts again, where said.
    pub reset: Option<Duration>,
}

/// Read the budget from `RateLimit-Usage` / `RateLimit-Limit` / `RateLimit-Reset` (each may be a
/// comma-separated pair of windows, Polar's 15 minutes and 24 hours), or from `X-RateLimit-Remaining`
/// / `RateLimit-Remaining`. Which style Polar sends is not confirmed (reference polar §6), so both
/// are read and neither is required.
pub fn quota(header: impl Fn(&str) -> Option<String>) -> Option<Quota> {
    let list = |name: &str| -> Vec<u64> { header(name).map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect()).unwrap_or_default() };
    let (usage, limit, reset) = (list("ratelimit-usage"), list("ratelimit-limit"), list("ratelimit-reset"));
    let windows: Vec<(u64, Option<u64>)> = usage.iter().zip(&limit).enumerate().map(|(i, (u, l))| (l.saturating_sub(*u), reset.get(i).copied())).collect();
    let from_pairs = windows.into_iter().min_by_key(|(left, _)| *left);
    let from_remaining = || {
        let left = list("x-ratelimit-remaining").into_iter().chain(list("ratelimit-remaining")).min()?;
        Some((left, list("x-ratelimit-reset").into_iter().chain(reset.iter().copied()).max()))
    };
    let (remaining, reset) = from_pairs.or_else(from_remaining)?;
    Some(Quota { remaining, reset: reset.map(Duration::from_secs) })
}

/// The only `action`s a data POST may carry: Withings reads everything with POST (reference §1),
/// and these are its read services. `list` and `get` are the verbs of its heart and high-resolution
/// sleep services (`/v2/heart list|get`, `/v2/sleep get`); no service in Withings' reference names
/// a write so (its writes are `create`, `update`, `delete*`, `subscribe`, `revoke`, `link`...). Anything else
/// is refused before it leaves the process.
pub const READ_ACTIONS: &[&str] = &["getmeas", "getactivity", "getworkouts", "getintradayactivity", "getsummary", "getdevice", "list", "get"];

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("refused to send a POST whose action {0:?} is not a read (vitals only reads)")]
    NotARead(String),
    #[error("refused to send a {0} to {1}: no provider's catalog declares it (vitals only reads)")]
    Undeclared(&'static str, String),
    #[error("the request timed out")]
    Timeout,
    #[error("the connection failed: {0}")]
    Connect(String),
}

/// Whether a POST to `url` is declared: its path ends with one of `routes` (the provider's base
/// may sit below a prefix, as the twin's do). Checked before any non-GET request is built.
pub fn allowed<'a>(routes: impl IntoIterator<Item = &'a str>, url: &str) -> Result<(), HttpError> {
    let path = crate::catalog::path_of(url);
    if !path.is_empty() && routes.into_iter().any(|r| !r.is_empty() && path.ends_with(r)) {
        Ok(())
    } else {
        Err(HttpError::Undeclared("POST", if path.is_empty() { url.chars().take(80).collect() } else { path }))
    }
}

/// The POST routes of a catalog's declarations.
fn posts(declared: &[NonGet]) -> impl Iterator<Item = &str> {
    declared.iter().filter(|d| d.method == "POST").map(|d| d.route)
}

#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
    /// The non-GET requests of the provider this client reads for (Withings' form reads).
    declared: &'static [NonGet],
}

impl Http {
    /// A client for reads that are all GETs, with the default timeout.
    pub fn new() -> Http {
        Http::declaring(&[], &crate::config::Config::default())
    }

    /// A client for a provider whose catalog declares `declared`, with `config`'s timeout (a
    /// login's requests take the server's settings as its reads do).
    pub fn declaring(declared: &'static [NonGet], config: &crate::config::Config) -> Http {
        Http::timed(declared, config.http_timeout())
    }

    /// A client for a provider whose catalog declares `declared`, each request taking at most `timeout`.
    pub fn timed(declared: &'static [NonGet], timeout: Duration) -> Http {
        let client = reqwest::Client::builder()
            .user_agent(crate::USER_AGENT)
            .gzip(true)
            .connect_timeout(Duration::from_secs(10))
            .timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .expect("a TLS client with default settings builds");
        Http { client, declared }
    }

    /// Send one read with a bearer token: GET `url?params`, or a form POST of `params` when the
    /// action is a read. Errors never carry the token: reqwest errors are reduced to their kind
    /// and the host, and the token is never in the URL or the form.
    pub async fn read(&self, req: &Request, bearer: &Secret) -> Result<Reply, HttpError> {
        let builder = match req.method {
            ReadMethod::Get => self.client.get(&req.url).query(&req.params),
            ReadMethod::FormPost => {
                allowed(posts(self.declared), &req.url)?;
                let action = req.param("action").unwrap_or_default();
                if !READ_ACTIONS.contains(&action) {
                    return Err(HttpError::NotARead(action.to_string()));
                }
                self.client.post(&req.url).form(&req.params)
            }
        };
        let resp = builder.headers(header_map(req.headers)).bearer_auth(bearer.expose()).send().await.map_err(|e| classify(&e))?;
        let status = resp.status().as_u16();
        let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let retry_after = retry_after(resp.headers());
        let quota = quota(header);
        let content_type = header("content-type").unwrap_or_default();
        let body = resp.bytes().await.map(|b| body_of(b.to_vec(), &content_type)).map_err(|e| classify(&e));
        Ok(Reply { status, retry_after, quota, body })
    }
}

/// Asked once more after a failure on the way: the logins' policy, kept where its callers find it.
pub use crate::retry::once_more;

/// How long the reply's `Retry-After` asks to wait, read on the provider's clock (its `Date`):
/// [`crate::retry::retry_after`].
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    crate::retry::retry_after(header("retry-after")?, header("date"))
}

/// A file as it came: status, Retry-After, bytes.
pub struct FileReply {
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub body: Vec<u8>,
}

impl Http {
    /// GET one file (an activity's FIT, TCX or GPX) with a bearer token. Only a GET: a file
    /// request with any other method is refused before it is sent.
    pub async fn read_file(&self, req: &Request, bearer: &Secret) -> Result<FileReply, HttpError> {
        if req.method != ReadMethod::Get {
            return Err(HttpError::NotARead("a file request that is not a GET".into()));
        }
        let resp = self
            .client
            .get(&req.url)
            .query(&req.params)
            .headers(header_map(req.headers))
            .bearer_auth(bearer.expose())
            .send()
            .await
            .map_err(|e| classify(&e))?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let body = resp.bytes().await.map_err(|e| classify(&e))?.to_vec();
        Ok(FileReply { status, retry_after, body })
    }
}

/// The client of token and sign-in requests. No redirects are followed (a token request must not
/// be bounced elsewhere), and our User-Agent is sent.
fn token_client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(crate::USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a TLS client with default settings builds")
}

/// Send a token request the `oauth2` crate built (exchanging a code, refreshing a token: POSTs by
/// definition), to one of the token endpoints the provider's OAuth declares (`declared`: their
/// default URLs, whose paths the request's must end with).
/// What a token request the `oauth2` crate sends through [`token_post`] fails with (so no other
/// crate names the HTTP library).
pub type TokenClientError = oauth2::HttpClientError<reqwest::Error>;

pub async fn token_post(req: oauth2::HttpRequest, declared: &[&str]) -> Result<oauth2::HttpResponse, TokenClientError> {
    let url = req.uri().to_string();
    let routes: Vec<String> = declared.iter().map(|u| crate::catalog::path_of(u)).collect();
    allowed(routes.iter().map(String::as_str), &url).map_err(|e| oauth2::HttpClientError::Other(e.to_string()))?;
    oauth2::AsyncHttpClient::call(&token_client(), req).await
}

/// End a grant at a provider's revoke endpoint: `POST url?<param>=<token>`, where `declared` is
/// the endpoint its OAuth declares: revoking our own access is no write to the user's data, and
/// the user asked for it (`vitals-mcp forget`). Returns the HTTP status.
pub async fn revoke(url: &str, declared: &str, param: &str, token: &Secret) -> Result<u16, HttpError> {
    allowed([crate::catalog::path_of(declared).as_str()], url)?;
    let resp = token_client().post(url).query(&[(param, token.expose())]).send().await.map_err(|e| classify(&e))?;
    Ok(resp.status().as_u16())
}

/// A client's metadata document (MCP authorization's Client ID Metadata Document): a GET, no
/// redirect followed, at most `max` bytes, within `timeout`. The status and the body.
pub async fn client_document(url: &str, max: usize, timeout: Duration, pinned: Option<std::net::SocketAddr>) -> Result<(u16, Vec<u8>), DocumentError> {
    let mut b = reqwest::Client::builder().timeout(timeout).redirect(reqwest::redirect::Policy::none());
    // The address the caller checked, and no other: a name that resolves again elsewhere (DNS
    // rebinding) is still connected to the address that was checked.
    if let (Some(addr), Some(host)) = (pinned, url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string))) {
        b = b.resolve(&host, addr);
    }
    let c = b.build()?;
    let resp = c.get(url).send().await?;
    let status = resp.status().as_u16();
    let body = resp.bytes().await?;
    if body.len() > max {
        return Err(DocumentError::TooLarge(max));
    }
    Ok((status, body.to_vec()))
}

/// Why a client's metadata document could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// No client could be made, the address did not answer, or the body broke off.
    #[error("{0}")]
    Fetch(#[from] reqwest::Error),
    #[error("it is over {0} bytes")]
    TooLarge(usize),
}

/// Register a Polar user with this app: `POST url {"member-id": …}`, to a route Polar's catalog
/// declares: Polar refuses every read until it has succeeded once, and it writes nothing of the
/// user's data. Returns the HTTP status.
pub async fn register_polar_user(url: &str, declared: &[NonGet], bearer: &Secret, member_id: &str) -> Result<u16, HttpError> {
    allowed(posts(declared), url)?;
    let body = serde_json::json!({ "member-id": member_id });
    let resp = token_client().post(url).bearer_auth(bearer.expose()).header("accept", "application/json").json(&body).send().await.map_err(|e| classify(&e))?;
    Ok(resp.status().as_u16())
}

/// Exchange a Garmin Personal API key for a bearer token: `POST url` with `Authorization: ApiKey
/// <key>` and no body, to the route Garmin's catalog declares: the exchange is how Garmin lets a
/// key read at all, and it writes nothing. Returns its reply (status, `Retry-After`, body).
pub async fn exchange_garmin_key(url: &str, declared: &[NonGet], key: &Secret) -> Result<LoginReply, HttpError> {
    allowed(posts(declared), url)?;
    let resp = token_client()
        .post(url)
        .header("authorization", format!("ApiKey {}", key.expose()))
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| classify(&e))?;
    login_reply(resp).await
}

/// What Garmin's SSO or token endpoint answered. The body is the caller's to read and never goes
/// into an error (it can hold a ticket or a token).
pub struct LoginReply {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<Duration>,
    pub body: String,
}

/// One login's browser-like session with Garmin's SSO: its own cookie jar (the sign-in page's
/// cookies must come back with the login and the code), dropped with the login.
pub struct SsoSession {
    client: reqwest::Client,
}

impl SsoSession {
    pub fn new(user_agent: &str) -> SsoSession {
        let client = reqwest::Client::builder()
            .user_agent(user_agent)
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::limited(5))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build()
            .expect("a TLS client with default settings builds");
        SsoSession { client }
    }

    /// GET a sign-in page (its cookies are kept for the POSTs that follow).
    pub async fn page(&self, url: &str, query: &[(&str, &str)], headers: &'static [(&'static str, &'static str)]) -> Result<LoginReply, HttpError> {
        let resp = self.client.get(url).query(query).headers(header_map(headers)).send().await.map_err(|e| classify(&e))?;
        login_reply(resp).await
    }

    /// POST a login or a one-time code as JSON, to a sign-in route Garmin Connect's catalog
    /// declares and nowhere else. A sign-in changes nothing of the user's data; it is how Garmin
    /// Connect lets anyone read at all.
    #[allow(clippy::too_many_arguments)]
    pub async fn garmin_sso_post(
        &self,
        sso: &str,
        path: &str,
        declared: &[NonGet],
        query: &[(&str, &str)],
        referer: &str,
        body: &serde_json::Value,
    ) -> Result<LoginReply, HttpError> {
        let url = format!("{}{path}", sso.trim_end_matches('/'));
        allowed(posts(declared), &url)?;
        let resp = self
            .client
            .post(&url)
            .query(query)
            .header("accept", "application/json, text/plain, */*")
            .header("origin", sso.trim_end_matches('/'))
            .header("referer", referer)
            .json(body)
            .send()
            .await
            .map_err(|e| classify(&e))?;
        login_reply(resp).await
    }
}

/// Exchange a Garmin SSO ticket, or refresh a DI token, at the DI token endpoint (reference
/// garmin/README.md §2.4): HTTP Basic `client_id:` with an empty secret, the form as given. A
/// token request like any OAuth one: it reads nothing and writes nothing. Only to a declared route.
pub async fn garmin_di_token(url: &str, declared: &[NonGet], client_id: &str, form: &[(&str, &str)]) -> Result<LoginReply, HttpError> {
    allowed(posts(declared), url)?;
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let resp = token_client()
        .post(url)
        .basic_auth(client_id, Some(""))
        .header("accept", "application/json,text/html;q=0.9,*/*;q=0.8")
        .header("cache-control", "no-cache")
        .body(body)
        .header("content-type", "application/x-www-form-urlencoded")
        .send()
        .await
        .map_err(|e| classify(&e))?;
    login_reply(resp).await
}

/// A GET of Garmin Connect's flow B: its OAuth1 consumer, or a ticket's OAuth1 token
/// (`authorization`: the signed OAuth header), as the Android app's client.
pub async fn garmin_oauth1_get(url: &str, query: &[(&str, &str)], authorization: Option<&str>, user_agent: &str) -> Result<LoginReply, HttpError> {
    let mut b = token_client().get(url).query(query).header("user-agent", user_agent);
    if let Some(a) = authorization {
        b = b.header("authorization", a);
    }
    login_reply(b.send().await.map_err(|e| classify(&e))?).await
}

/// Flow B's exchange of an OAuth1 token for an OAuth2 one (reference garmin/README.md §2.3): a
/// signed form POST to the exchange route the catalog declares and nowhere else. A token request:
/// it reads nothing and writes nothing.
pub async fn garmin_oauth1_exchange(
    url: &str,
    declared: &[NonGet],
    authorization: &str,
    user_agent: &str,
    form: &[(&str, &str)],
) -> Result<LoginReply, HttpError> {
    allowed(posts(declared), url)?;
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let resp = token_client()
        .post(url)
        .header("authorization", authorization)
        .header("user-agent", user_agent)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| classify(&e))?;
    login_reply(resp).await
}

async fn login_reply(resp: reqwest::Response) -> Result<LoginReply, HttpError> {
    let status = resp.status().as_u16();
    let retry_after = retry_after(resp.headers());
    let content_type = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let body = resp.text().await.map_err(|e| classify(&e))?;
    Ok(LoginReply { status, content_type, retry_after, body })
}

/// Headers from catalog data; a name or value that is not valid HTTP is a bug there, left out.
fn header_map(headers: &[(&str, &str)]) -> reqwest::header::HeaderMap {
    headers
        .iter()
        .filter_map(|(k, v)| Some((reqwest::header::HeaderName::from_bytes(k.as_bytes()).ok()?, reqwest::header::HeaderValue::from_str(v).ok()?)))
        .collect()
}

impl Default for Http {
    fn default() -> Self {
        Http::new()
    }
}

fn classify(e: &reqwest::Error) -> HttpError {
    if e.is_timeout() {
        HttpError::Timeout
    } else {
        let host = e.url().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
        HttpError::Connect(format!("{host}: {}", if e.is_connect() { "could not connect" } else { "the connection broke" }))
    }
}

impl crate::retry::Answered for Reply {
    fn status(&self) -> u16 {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl crate::retry::Answered for LoginReply {
    fn status(&self) -> u16 {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_headers_give_the_tightest_window_in_either_style() {
        let h = |pairs: &'static [(&'static str, &'static str)]| move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string());
        let q = quota(h(&[("ratelimit-usage", "499,1200"), ("ratelimit-limit", "500,5000"), ("ratelimit-reset", "120,40000")]));
        assert_eq!(q, Some(Quota { remaining: 1, reset: Some(Duration::from_secs(120)) }));
        let spent = quota(h(&[("ratelimit-usage", "10,5000"), ("ratelimit-limit", "500,5000"), ("ratelimit-reset", "120,40000")]));
        assert_eq!(spent, Some(Quota { remaining: 0, reset: Some(Duration::from_secs(40000)) }));
        assert_eq!(quota(h(&[("x-ratelimit-remaining", "7"), ("x-ratelimit-limit", "100")])), Some(Quota { remaining: 7, reset: None }));
        assert_eq!(quota(h(&[])), None);
    }

    #[test]
    fn a_retry_after_header_is_read_with_the_replys_date() {
        let mut m = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&m), None);
        m.insert("retry-after", "Sat, 05 Dec 2026 12:10:02 GMT".parse().unwrap());
        m.insert("date", "Sat, 05 Dec 2026 12:10:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&m), Some(Duration::from_secs(2)));
    }
}
