//! Who may ask for a code: a client registered here (RFC 7591 dynamic registration, kept in
//! `<tenants>/.oauth/clients.json`) or one whose `client_id` is the URL of its own metadata
//! document (a Client ID Metadata Document, fetched once and held in memory). Either way a client
//! is public (PKCE, no secret) and its redirect URIs are matched exactly.
//!
//! Bounded: registrations from one address are limited per hour, and past [`MAX_CLIENTS`] the
//! oldest client never used for a code makes room. A metadata document is fetched from a public
//! address only (the name resolved, every address checked, and the connection made to the address
//! checked), unless this server itself is on loopback.
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// The largest metadata document read, and how long its fetch may take.
const MAX_DOCUMENT: usize = 5 * 1024;
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The most redirect URIs one client may register.
const MAX_REDIRECTS: usize = 10;
/// The most registered clients kept; past it the oldest never used for a code goes.
pub const MAX_CLIENTS: usize = 1000;
/// Registrations allowed from one address within [`REGISTER_WINDOW`].
pub const REGISTER_PER_ADDRESS: usize = 20;
pub const REGISTER_WINDOW: Duration = Duration::from_secs(3600);

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Client {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    /// When it registered (Unix seconds), and whether a person ever let it in.
    #[serde(default)]
    pub registered: i64,
    #[serde(default)]
    pub used: bool,
}

/// Why a registration is refused: each with the RFC 7591 error code it is answered with.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("redirect_uris: {0}")]
    RedirectUris(String),
    #[error("{0}")]
    Metadata(String),
    #[error("too many registrations from this address; try again in {0} minutes")]
    TooMany(u64),
    #[error("the client could not be saved ({0})")]
    Store(String),
}

impl Refused {
    /// The OAuth error code (RFC 7591 §3.2.2), and the HTTP status.
    pub fn code(&self) -> (&'static str, u16) {
        match self {
            Refused::RedirectUris(_) => ("invalid_redirect_uri", 400),
            Refused::Metadata(_) => ("invalid_client_metadata", 400),
            Refused::TooMany(_) => ("temporarily_unavailable", 429),
            Refused::Store(_) => ("server_error", 500),
        }
    }
}

pub struct Clients {
    dir: PathBuf,
    file: PathBuf,
    /// Metadata documents already read, by URL.
    documents: Mutex<HashMap<String, Client>>,
    /// Whether this server is on loopback (a development setup): then a client on loopback may use http.
    loopback: bool,
    saved: Mutex<()>,
    /// Recent registrations, by address.
    recent: Mutex<Vec<(std::time::Instant, std::net::IpAddr)>>,
}

/// A redirect URI a client may register: https, or http on loopback (a native app's listener);
/// no fragment.
fn redirect_ok(u: &str) -> bool {
    match url::Url::parse(u) {
        Ok(p) => p.fragment().is_none() && (p.scheme() == "https" || (p.scheme() == "http" && is_loopback(&p))),
        Err(_) => false,
    }
}

fn is_loopback(u: &url::Url) -> bool {
    matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
}

impl Clients {
    pub fn in_dir(dir: PathBuf, loopback: bool) -> Clients {
        Clients { file: dir.join("clients.json"), dir, documents: Mutex::new(HashMap::new()), loopback, saved: Mutex::new(()), recent: Mutex::new(vec![]) }
    }

    /// RFC 7591: a public client with these redirect URIs, registered from `from`; what to answer
    /// (201) or why not.
    pub fn register(&self, body: &Value, from: std::net::IpAddr) -> Result<Value, Refused> {
        let uris: Vec<String> = body["redirect_uris"].as_array().map(|a| a.iter().filter_map(|u| u.as_str().map(str::to_string)).collect()).unwrap_or_default();
        if uris.is_empty() || uris.len() > MAX_REDIRECTS {
            return Err(Refused::RedirectUris(format!("send 1 to {MAX_REDIRECTS} redirect URIs")));
        }
        if let Some(bad) = uris.iter().find(|u| !redirect_ok(u)) {
            return Err(Refused::RedirectUris(format!("{bad:?} must be https (or http on localhost) with no fragment")));
        }
        match body["token_endpoint_auth_method"].as_str() {
            None | Some("none") => {}
            Some(other) => {
                return Err(Refused::Metadata(format!("token_endpoint_auth_method: {other:?} is not offered; clients here are public (\"none\") and use PKCE")))
            }
        }
        self.admit(from)?;
        let name = body["client_name"].as_str().unwrap_or("an MCP client").chars().take(80).collect::<String>();
        let client = Client {
            client_id: format!("dcr-{}", super::super::mount::random_token()),
            client_name: name,
            redirect_uris: uris,
            registered: jiff::Timestamp::now().as_second(),
            used: false,
        };
        self.change(|all| {
            if all.len() >= MAX_CLIENTS {
                // The oldest never let in makes room (a flood of registrations pushes out only itself).
                if let Some(i) = all.iter().enumerate().filter(|(_, c)| !c.used).min_by_key(|(_, c)| c.registered).map(|(i, _)| i) {
                    all.remove(i);
                }
            }
            all.push(client.clone());
        })?;
        Ok(serde_json::json!({
            "client_id": client.client_id, "client_id_issued_at": jiff::Timestamp::now().as_second(), "client_name": client.client_name,
            "redirect_uris": client.redirect_uris, "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        }))
    }

    /// One more registration from `from`, or how long it must wait.
    fn admit(&self, from: std::net::IpAddr) -> Result<(), Refused> {
        let mut recent = self.recent.lock().expect("recent lock");
        let now = std::time::Instant::now();
        recent.retain(|(t, _)| now.duration_since(*t) < REGISTER_WINDOW);
        let mine: Vec<std::time::Instant> = recent.iter().filter(|(_, a)| *a == from).map(|(t, _)| *t).collect();
        if mine.len() >= REGISTER_PER_ADDRESS {
            let oldest = mine.iter().min().copied().unwrap_or(now);
            return Err(Refused::TooMany(REGISTER_WINDOW.saturating_sub(now.duration_since(oldest)).as_secs().div_ceil(60)));
        }
        recent.push((now, from));
        Ok(())
    }

    /// Read, change and write the registered clients under one lock.
    fn change(&self, f: impl FnOnce(&mut Vec<Client>)) -> Result<(), Refused> {
        let _held = self.saved.lock().expect("clients lock");
        let mut all: Vec<Client> = crate::accounts::store::read_json(&self.file).unwrap_or_default();
        f(&mut all);
        crate::accounts::store::write_json_private(&self.dir, &self.file, &all).map_err(|e| Refused::Store(e.to_string()))
    }

    /// A person let `client_id` in: it is kept when registrations crowd the list.
    pub fn used(&self, client_id: &str) {
        if client_id.starts_with("dcr-") {
            let _ = self.change(|all| all.iter_mut().filter(|c| c.client_id == client_id).for_each(|c| c.used = true));
        }
    }

    /// The client `client_id` names: registered here, or its metadata document's.
    pub async fn resolve(&self, client_id: &str) -> Result<Client, Unknown> {
        if client_id.starts_with("https://") || client_id.starts_with("http://") {
            return self.document(client_id).await;
        }
        let all: Vec<Client> = crate::accounts::store::read_json(&self.file).unwrap_or_default();
        all.into_iter().find(|c| c.client_id == client_id).ok_or_else(|| Unknown::NotRegistered(client_id.into()))
    }

    /// A Client ID Metadata Document: https (http only on loopback, and only when this server is
    /// on loopback too), whose `client_id` is its own URL.
    async fn document(&self, url: &str) -> Result<Client, Unknown> {
        if let Some(c) = self.documents.lock().expect("documents lock").get(url) {
            return Ok(c.clone());
        }
        let u = url::Url::parse(url).map_err(|_| Unknown::NotAUrl(url.into()))?;
        let allowed = u.scheme() == "https" && !is_loopback(&u) || (self.loopback && is_loopback(&u));
        if !allowed || u.path() == "/" || u.fragment().is_some() {
            return Err(Unknown::Address(url.into()));
        }
        let pinned = match self.loopback {
            true => None,
            false => Some(public_address(&u).await.map_err(|why| Unknown::Host { url: url.into(), why })?),
        };
        let (status, body) = crate::http::client_document(u.as_str(), MAX_DOCUMENT, FETCH_TIMEOUT, pinned)
            .await
            .map_err(|why| Unknown::Unread { url: url.into(), why: why.to_string() })?;
        if !(200..300).contains(&status) {
            return Err(Unknown::Status { url: url.into(), status });
        }
        let v: Value = serde_json::from_slice(&body).map_err(|_| Unknown::NotJson(url.into()))?;
        if v["client_id"].as_str() != Some(url) {
            return Err(Unknown::OtherId(url.into()));
        }
        let uris: Vec<String> = v["redirect_uris"].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default();
        if uris.is_empty() || uris.len() > MAX_REDIRECTS || !uris.iter().all(|r| redirect_ok(r)) {
            return Err(Unknown::Redirects(url.into()));
        }
        let name = v["client_name"].as_str().map(str::to_string).unwrap_or_else(|| u.host_str().unwrap_or("a client").to_string());
        let c = Client { client_id: url.into(), client_name: name.chars().take(80).collect(), redirect_uris: uris, registered: 0, used: true };
        self.documents.lock().expect("documents lock").insert(url.into(), c.clone());
        Ok(c)
    }
}

/// Why a `client_id` names no client this server lets ask for a code: said on the page that
/// refuses the request, after "The client is not known here:", or, for a metadata document that
/// could not be read ([`Unknown::unread`]), after "The client could not be checked:".
#[derive(Debug, thiserror::Error)]
pub enum Unknown {
    #[error("client_id {0:?} is not registered here")]
    NotRegistered(String),
    #[error("client_id {0:?} is not a URL")]
    NotAUrl(String),
    #[error("client_id {0:?}: a metadata document's URL must be https with a path (no fragment)")]
    Address(String),
    #[error("client_id {url:?}: {why}")]
    Host { url: String, why: NotPublic },
    #[error("client_id {url:?}: its metadata document could not be read ({why})")]
    Unread { url: String, why: String },
    #[error("client_id {url:?}: its metadata document answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("client_id {0:?}: its metadata document is not JSON")]
    NotJson(String),
    #[error("client_id {0:?}: its metadata document names another client_id")]
    OtherId(String),
    #[error("client_id {0:?}: its metadata document's redirect_uris must be 1 to {MAX_REDIRECTS} https (or loopback) URIs")]
    Redirects(String),
}

impl Unknown {
    /// The client named a metadata document this server could not read (its host unresolved, the
    /// network, an HTTP error, a body that is not JSON): it may exist, so it is not said to be
    /// unknown; it is said not to be checked.
    pub fn unread(&self) -> bool {
        match self {
            Unknown::Unread { .. } | Unknown::Status { .. } | Unknown::NotJson(_) => true,
            Unknown::Host { why, .. } => matches!(why, NotPublic::Unresolved(_) | NotPublic::NoAddress),
            Unknown::NotRegistered(_) | Unknown::NotAUrl(_) | Unknown::Address(_) | Unknown::OtherId(_) | Unknown::Redirects(_) => false,
        }
    }
}

/// Why a metadata document's host is not fetched from.
#[derive(Debug, thiserror::Error)]
pub enum NotPublic {
    #[error("no host")]
    NoHost,
    #[error("its host could not be resolved ({0})")]
    Unresolved(std::io::ErrorKind),
    #[error("its host resolves to {0}, an address that is not public")]
    Inside(std::net::IpAddr),
    #[error("its host resolves to no address")]
    NoAddress,
}

/// The address to fetch a metadata document from: its name resolved, and every address it
/// resolves to public (a name that also points inside this server's network is refused).
async fn public_address(u: &url::Url) -> Result<std::net::SocketAddr, NotPublic> {
    let host = u.host_str().ok_or(NotPublic::NoHost)?;
    let port = u.port_or_known_default().unwrap_or(443);
    let addrs: Vec<std::net::SocketAddr> =
        tokio::net::lookup_host((host.trim_start_matches('[').trim_end_matches(']'), port)).await.map_err(|e| NotPublic::Unresolved(e.kind()))?.collect();
    if let Some(inside) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(NotPublic::Inside(inside.ip()));
    }
    addrs.first().copied().ok_or(NotPublic::NoAddress)
}

/// Whether an address is on the public internet (not loopback, private, link-local, shared,
/// documentation, multicast or unspecified; an IPv4-mapped address as its IPv4).
pub fn is_public(ip: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v) => {
            let o = v.octets();
            !(v.is_loopback()
                || v.is_private()
                || v.is_link_local()
                || v.is_unspecified()
                || v.is_broadcast()
                || v.is_multicast()
                || v.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 198 && (18..20).contains(&o[1]))
                || o[0] >= 240)
        }
        IpAddr::V6(v) => match v.to_ipv4_mapped() {
            Some(v4) => is_public(IpAddr::V4(v4)),
            None => {
                let s = v.segments();
                !(v.is_loopback()
                    || v.is_unspecified()
                    || v.is_multicast()
                    || (s[0] & 0xfe00) == 0xfc00
                    || (s[0] & 0xffc0) == 0xfe80
                    || s[0] == 0x2001 && s[1] == 0xdb8)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn registration_takes_public_clients_with_exact_safe_redirects() {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/oauth-clients"));
        let _ = std::fs::remove_dir_all(&dir);
        let c = Clients::in_dir(dir, false);
        let from: std::net::IpAddr = "203.0.113.9".parse().unwrap();
        assert!(c.register(&json!({"redirect_uris": []}), from).is_err());
        let e = c.register(&json!({"redirect_uris": ["http://evil.example/cb"]}), from).unwrap_err();
        assert!(e.to_string().contains("https") && e.code() == ("invalid_redirect_uri", 400), "{e}");
        assert!(c.register(&json!({"redirect_uris": ["https://a.example/cb#x"]}), from).is_err());
        let e = c.register(&json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}), from).unwrap_err();
        assert_eq!(e.code().0, "invalid_client_metadata");
        let ok = c
            .register(&json!({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/cb"], "client_name": "Claude"}), from)
            .unwrap();
        let id = ok["client_id"].as_str().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let found = rt.block_on(c.resolve(id)).unwrap();
        assert_eq!(found.client_name, "Claude");
        assert!(rt.block_on(c.resolve("dcr-unknown")).is_err());
        assert!(rt.block_on(c.resolve("http://127.0.0.1:1/client.json")).unwrap_err().to_string().contains("https"), "no loopback document on a public server");
        let inside = rt.block_on(c.resolve("https://localhost:1/client.json")).unwrap_err().to_string();
        assert!(inside.contains("https") || inside.contains("not public"), "{inside}");
    }

    #[test]
    fn registrations_are_bounded_per_address_and_in_all() {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/oauth-clients-bound"));
        let _ = std::fs::remove_dir_all(&dir);
        let c = Clients::in_dir(dir, false);
        let body = json!({"redirect_uris": ["https://a.example/cb"]});
        let (a, b): (std::net::IpAddr, std::net::IpAddr) = ("203.0.113.1".parse().unwrap(), "203.0.113.2".parse().unwrap());
        let first = c.register(&body, a).unwrap()["client_id"].as_str().unwrap().to_string();
        c.used(&first);
        for _ in 1..REGISTER_PER_ADDRESS {
            c.register(&body, a).unwrap();
        }
        let e = c.register(&body, a).unwrap_err();
        assert!(matches!(e, Refused::TooMany(m) if m >= 59) && e.code().1 == 429, "{e}");
        assert!(c.register(&body, b).is_ok(), "another address is not held back");
        // Full: the oldest never let in makes room, a client a person let in stays.
        c.change(|all| {
            while all.len() < MAX_CLIENTS {
                let mut x = all[1].clone();
                x.client_id = format!("dcr-filler-{}", all.len());
                all.push(x);
            }
        })
        .unwrap();
        let d: std::net::IpAddr = "203.0.113.3".parse().unwrap();
        c.register(&body, d).unwrap();
        let all: Vec<Client> = crate::accounts::store::read_json(&c.file).unwrap();
        assert_eq!(all.len(), MAX_CLIENTS);
        assert!(all.iter().any(|x| x.client_id == first), "the client a person let in is kept");
    }

    #[test]
    fn only_public_addresses_are_public() {
        for ip in
            ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:10.0.0.1"]
        {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }
}
