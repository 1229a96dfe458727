//! The only way out of this crate to a provider. Data is read with GET, or with a form POST
//! whose `action` is one of Withings' read actions ([`READ_ACTIONS`]) and nothing else: read-only
//! is a property of this type, and `tests/tests/e2e/invariants.rs` keeps it so.
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
}

impl Request {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// One answer from upstream, before any interpretation.
pub struct Reply {
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub body: Result<String, String>,
}

/// The only `action`s a data POST may carry: Withings reads everything with POST (reference §1),
/// and these are its read services. Anything else is refused before it leaves the process.
pub const READ_ACTIONS: &[&str] = &["getmeas", "getactivity", "getworkouts", "getintradayactivity", "getsummary", "getdevice"];

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("refused to send a POST whose action {0:?} is not a read (vitals only reads)")]
    NotARead(String),
    #[error("the request timed out")]
    Timeout,
    #[error("the connection failed: {0}")]
    Connect(String),
}

#[derive(Clone)]
pub struct Http {
    client: reqwest::Client,
}

impl Http {
    pub fn new() -> Http {
        let timeout = std::env::var("VITALS_HTTP_TIMEOUT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(30_000);
        let client = reqwest::Client::builder()
            .user_agent(crate::USER_AGENT)
            .gzip(true)
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_millis(timeout))
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .expect("a TLS client with default settings builds");
        Http { client }
    }

    /// Send one read with a bearer token: GET `url?params`, or a form POST of `params` when the
    /// action is a read. Errors never carry the token: reqwest errors are reduced to their kind
    /// and the host, and the token is never in the URL or the form.
    pub async fn read(&self, req: &Request, bearer: &Secret) -> Result<Reply, HttpError> {
        let builder = match req.method {
            ReadMethod::Get => self.client.get(&req.url).query(&req.params),
            ReadMethod::FormPost => {
                let action = req.param("action").unwrap_or_default();
                if !READ_ACTIONS.contains(&action) {
                    return Err(HttpError::NotARead(action.to_string()));
                }
                self.client.post(&req.url).form(&req.params)
            }
        };
        let resp = builder.bearer_auth(bearer.expose()).send().await.map_err(|e| classify(&e))?;
        let status = resp.status().as_u16();
        let retry_after = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok()).map(Duration::from_secs);
        let body = resp.text().await.map_err(|e| classify(&e).to_string());
        Ok(Reply { status, retry_after, body })
    }
}

/// The client the `oauth2` crate uses at token endpoints: the one place a POST leaves this crate,
/// because exchanging a code and refreshing a token are POSTs by definition. No redirects are
/// followed (a token request must not be bounced elsewhere), and our User-Agent is sent.
pub fn token_client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(crate::USER_AGENT)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a TLS client with default settings builds")
}

/// End a grant at a provider's revoke endpoint: `POST url?<param>=<token>`. The second and last
/// place a POST leaves this crate: revoking our own access is no write to the user's data, and the
/// user asked for it (`vitals-mcp forget`). Returns the HTTP status.
pub async fn revoke(url: &str, param: &str, token: &Secret) -> Result<u16, HttpError> {
    let resp = token_client().post(url).query(&[(param, token.expose())]).send().await.map_err(|e| classify(&e))?;
    Ok(resp.status().as_u16())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_form_post_that_is_not_a_read_is_refused_before_it_is_sent() {
        // Port 9 on loopback answers nothing: had the request been sent, the error would be a connection failure.
        let req = Request { method: ReadMethod::FormPost, url: "http://127.0.0.1:9/v2/measure".into(), params: vec![("action".into(), "deletemeas".into())] };
        let e = Http::new().read(&req, &Secret::new("x")).await.err().expect("refused");
        assert!(matches!(&e, HttpError::NotARead(a) if a == "deletemeas"), "{e}");
        let unnamed = Request { params: vec![], ..req };
        assert!(matches!(Http::new().read(&unnamed, &Secret::new("x")).await, Err(HttpError::NotARead(_))));
    }
}
