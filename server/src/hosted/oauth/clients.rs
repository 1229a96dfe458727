//! Who may ask for a code: a client registered here (RFC 7591 dynamic registration, kept in
//! `<tenants>/.oauth/clients.json`) or one whose `client_id` is the URL of its own metadata
//! document (a Client ID Metadata Document, fetched once and held in memory). Either way a client
//! is public (PKCE, no secret) and its redirect URIs are matched exactly.
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

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Client {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
}

pub struct Clients {
    dir: PathBuf,
    file: PathBuf,
    /// Metadata documents already read, by URL.
    documents: Mutex<HashMap<String, Client>>,
    /// Whether this server is on loopback (a development setup): then a client on loopback may use http.
    loopback: bool,
    saved: Mutex<()>,
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
        Clients { file: dir.join("clients.json"), dir, documents: Mutex::new(HashMap::new()), loopback, saved: Mutex::new(()) }
    }

    /// RFC 7591: a public client with these redirect URIs; what to answer (201) or why not (400).
    pub fn register(&self, body: &Value) -> Result<Value, String> {
        let uris: Vec<String> = body["redirect_uris"].as_array().map(|a| a.iter().filter_map(|u| u.as_str().map(str::to_string)).collect()).unwrap_or_default();
        if uris.is_empty() || uris.len() > MAX_REDIRECTS {
            return Err(format!("redirect_uris: send 1 to {MAX_REDIRECTS} redirect URIs"));
        }
        if let Some(bad) = uris.iter().find(|u| !redirect_ok(u)) {
            return Err(format!("redirect_uris: {bad:?} must be https (or http on localhost) with no fragment"));
        }
        match body["token_endpoint_auth_method"].as_str() {
            None | Some("none") => {}
            Some(other) => return Err(format!("token_endpoint_auth_method: {other:?} is not offered; clients here are public (\"none\") and use PKCE")),
        }
        let name = body["client_name"].as_str().unwrap_or("an MCP client").chars().take(80).collect::<String>();
        let client = Client { client_id: format!("dcr-{}", super::super::mount::random_token()), client_name: name, redirect_uris: uris };
        {
            let _held = self.saved.lock().expect("clients lock");
            let mut all: Vec<Client> = crate::accounts::store::read_json(&self.file).unwrap_or_default();
            all.push(client.clone());
            crate::accounts::store::write_json_private(&self.dir, &self.file, &all).map_err(|e| format!("the client could not be saved ({e})"))?;
        }
        Ok(serde_json::json!({
            "client_id": client.client_id, "client_id_issued_at": jiff::Timestamp::now().as_second(), "client_name": client.client_name,
            "redirect_uris": client.redirect_uris, "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        }))
    }

    /// The client `client_id` names: registered here, or its metadata document's.
    pub async fn resolve(&self, client_id: &str) -> Result<Client, String> {
        if client_id.starts_with("https://") || client_id.starts_with("http://") {
            return self.document(client_id).await;
        }
        let all: Vec<Client> = crate::accounts::store::read_json(&self.file).unwrap_or_default();
        all.into_iter().find(|c| c.client_id == client_id).ok_or_else(|| format!("client_id {client_id:?} is not registered here"))
    }

    /// A Client ID Metadata Document: https (http only on loopback, and only when this server is
    /// on loopback too), whose `client_id` is its own URL.
    async fn document(&self, url: &str) -> Result<Client, String> {
        if let Some(c) = self.documents.lock().expect("documents lock").get(url) {
            return Ok(c.clone());
        }
        let u = url::Url::parse(url).map_err(|_| format!("client_id {url:?} is not a URL"))?;
        let allowed = u.scheme() == "https" && !is_loopback(&u) || (self.loopback && is_loopback(&u));
        if !allowed || u.path() == "/" || u.fragment().is_some() {
            return Err(format!("client_id {url:?}: a metadata document's URL must be https with a path (no fragment)"));
        }
        let (status, body) = crate::http::client_document(u.as_str(), MAX_DOCUMENT, FETCH_TIMEOUT)
            .await
            .map_err(|e| format!("client_id {url:?}: its metadata document could not be read ({e})"))?;
        if !(200..300).contains(&status) {
            return Err(format!("client_id {url:?}: its metadata document answered HTTP {status}"));
        }
        let v: Value = serde_json::from_slice(&body).map_err(|_| format!("client_id {url:?}: its metadata document is not JSON"))?;
        if v["client_id"].as_str() != Some(url) {
            return Err(format!("client_id {url:?}: its metadata document names another client_id"));
        }
        let uris: Vec<String> = v["redirect_uris"].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default();
        if uris.is_empty() || uris.len() > MAX_REDIRECTS || !uris.iter().all(|r| redirect_ok(r)) {
            return Err(format!("client_id {url:?}: its metadata document's redirect_uris must be 1 to {MAX_REDIRECTS} https (or loopback) URIs"));
        }
        let name = v["client_name"].as_str().map(str::to_string).unwrap_or_else(|| u.host_str().unwrap_or("a client").to_string());
        let c = Client { client_id: url.into(), client_name: name.chars().take(80).collect(), redirect_uris: uris };
        self.documents.lock().expect("documents lock").insert(url.into(), c.clone());
        Ok(c)
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
        assert!(c.register(&json!({"redirect_uris": []})).is_err());
        assert!(c.register(&json!({"redirect_uris": ["http://evil.example/cb"]})).unwrap_err().contains("https"));
        assert!(c.register(&json!({"redirect_uris": ["https://a.example/cb#x"]})).is_err());
        assert!(c.register(&json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "client_secret_basic"})).is_err());
        let ok =
            c.register(&json!({"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/cb"], "client_name": "Claude"})).unwrap();
        let id = ok["client_id"].as_str().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let found = rt.block_on(c.resolve(id)).unwrap();
        assert_eq!(found.client_name, "Claude");
        assert!(rt.block_on(c.resolve("dcr-unknown")).is_err());
        assert!(rt.block_on(c.resolve("http://127.0.0.1:1/client.json")).unwrap_err().contains("https"), "no loopback document on a public server");
    }
}
