//! Oura API v2: credentials, URLs, parameter names and the envelope. The collections are in [`catalog`].
pub mod catalog;

use super::{CredentialSource, Mode, Page, Provider, Window};
use crate::catalog::{CollectionSpec, ProviderSpec, RangeKind};
use crate::accounts::{TokenStore, Tokens};
use crate::secret::Secret;
use serde_json::Value;

pub const DEFAULT_BASE: &str = "https://api.ouraring.com";

/// Oura's credential: a personal access token from `OURA_PAT`, else the OAuth tokens `vitals-mcp auth
/// oura` saved (re-read on every request, so a login shows up without a restart), else the sandbox.
pub struct OuraCredential {
    token: Option<Secret>,
    sandbox_forced: bool,
    /// The token store, or why there is none (no config folder, a bad VITALS_TOKEN_STORE).
    store: Result<TokenStore, String>,
}

impl OuraCredential {
    fn stored(&self) -> Option<Tokens> {
        self.store.as_ref().ok().and_then(|s| s.load("oura").ok().flatten())
    }
}

impl CredentialSource for OuraCredential {
    fn kind(&self) -> &'static str {
        match (&self.token, self.sandbox_forced) {
            (_, true) => "sandbox",
            (Some(_), false) => "personal_token",
            (None, false) if self.stored().is_some() => "oauth",
            (None, false) => "sandbox",
        }
    }
    fn origin(&self) -> String {
        match self.kind() {
            "personal_token" => "environment OURA_PAT".into(),
            "oauth" => format!("OAuth login in the {}", self.store.as_ref().map(|s| s.describe()).unwrap_or_default()),
            _ if self.sandbox_forced => "VITALS_SANDBOX=1 (sandbox forced)".into(),
            _ => "none: OURA_PAT is not set and no account is connected (vitals-mcp auth oura), so the sandbox is used".into(),
        }
    }
    fn bearer(&self) -> Option<Secret> {
        match self.kind() {
            // The sandbox accepts any bearer; send a fixed, harmless one.
            "sandbox" => Some(Secret::new("sandbox")),
            "oauth" => self.stored().map(|t| t.access),
            _ => self.token.clone(),
        }
    }
    fn scopes(&self) -> Option<Vec<String>> {
        (self.kind() == "oauth").then(|| self.stored().map(|t| t.scopes)).flatten()
    }
    fn account(&self) -> Option<String> {
        (self.kind() == "oauth").then(|| self.stored().and_then(|t| t.login)).flatten()
    }
    fn expiring(&self) -> bool {
        self.kind() == "oauth"
            && self.stored().and_then(|t| t.expires_at).is_some_and(|at| at - jiff::Timestamp::now().as_second() <= super::EXPIRY_MARGIN_S)
    }
    fn expires_at(&self) -> Option<String> {
        (self.kind() == "oauth").then(|| self.stored().and_then(|t| t.expires_at)).flatten().and_then(|s| jiff::Timestamp::from_second(s).ok()).map(|t| t.to_string())
    }
}

pub struct Oura {
    base: String,
    cred: OuraCredential,
}

impl Oura {
    pub fn from_env() -> Oura {
        let base = crate::env::var("VITALS_OURA_BASE_URL").unwrap_or_else(|| DEFAULT_BASE.into());
        let token = crate::env::var("OURA_PAT").map(Secret::new);
        let sandbox_forced = crate::env::flag("VITALS_SANDBOX");
        let store = crate::accounts::token_store();
        Oura { base: base.trim_end_matches('/').to_string(), cred: OuraCredential { token, sandbox_forced, store } }
    }

    /// Refresh the stored OAuth tokens under the store's lock (adopting another process's refresh).
    async fn refresh_oauth(&self) -> Result<(), String> {
        let store = self.cred.store.clone()?;
        let seen = self.cred.stored().ok_or("no OAuth tokens are stored")?;
        let (spec, app) = crate::accounts::link::app_for(&catalog::OURA).map_err(|e| e.to_string())?;
        let handle = tokio::runtime::Handle::current();
        // The store's lock is a blocking file lock: hold it on the blocking pool, and run the
        // refresh request from there.
        tokio::task::spawn_blocking(move || {
            store
                .refresh_with("oura", &seen, |t| handle.block_on(crate::accounts::oauth::refresh(&spec, &app, t)).map_err(|e| e.to_string()))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

impl Provider for Oura {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::OURA
    }
    fn mode(&self) -> Mode {
        if self.cred.kind() == "sandbox" { Mode::Sandbox } else { Mode::Connected }
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn list_url(&self, c: &CollectionSpec) -> String {
        let prefix = if self.mode() == Mode::Sandbox { "v2/sandbox/usercollection" } else { "v2/usercollection" };
        format!("{}/{prefix}/{}", self.base, c.path)
    }
    fn params(&self, c: &CollectionSpec, w: &Window, fields: Option<&[String]>, next_token: Option<&str>) -> Vec<(String, String)> {
        let mut p: Vec<(String, String)> = Vec::new();
        match (w, c.range) {
            (Window::Dates { start, end }, _) => {
                p.push(("start_date".into(), start.to_string()));
                p.push(("end_date".into(), end.to_string()));
            }
            (Window::Instants { start, end }, _) => {
                p.push(("start_datetime".into(), start.clone()));
                p.push(("end_datetime".into(), end.clone()));
            }
            (Window::Latest, RangeKind::DateTime) => p.push(("latest".into(), "true".into())),
            _ => {}
        }
        if let Some(f) = fields.filter(|_| c.projectable) {
            p.push(("fields".into(), f.join(",")));
        }
        if let Some(t) = next_token {
            p.push(("next_token".into(), t.to_string()));
        }
        p
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str) -> Result<Page, String> {
        let mut v: Value = serde_json::from_str(body).map_err(|e| format!("Oura sent a body that is not complete JSON ({e})"))?;
        if !c.enveloped {
            return Ok(Page { records: vec![v], next_token: None });
        }
        // Taken, not cloned: a heart-rate page is 1,000 records.
        let records = match v.get_mut("data").map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => return Err("Oura's answer has no `data` array".into()),
        };
        let next_token = v.get("next_token").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
        Ok(Page { records, next_token })
    }
    fn auth_help(&self, status: u16) -> String {
        match (status, self.mode()) {
            (401, _) if self.cred.kind() == "oauth" => "Oura rejected the connected account's token (HTTP 401) even after a refresh: the login \
                was revoked or expired. Connect again: vitals_connect with provider=oura and again=true, or `vitals-mcp auth oura`."
                .into(),
            (401, _) => "Oura rejected the credential (HTTP 401: expired, malformed or revoked). Create a new personal access token \
                at https://cloud.ouraring.com/personal-access-tokens and set it as OURA_PAT, or unset OURA_PAT to use the sandbox."
                .into(),
            _ => "Oura refused the request (HTTP 403). Oura uses 403 for three causes it does not tell apart: the Oura membership has \
                lapsed, the token lacks the scope for this collection, or the request had no User-Agent (vitals always sends one). \
                Check the membership in the Oura app and that the token grants this data type."
                .into(),
        }
    }
    fn unavailable(&self, c: &CollectionSpec) -> Option<String> {
        (self.mode() == Mode::Sandbox && !c.in_sandbox).then(|| {
            format!(
                "oura.{} is not available in sandbox mode: Oura's sandbox has no synthetic profile. It needs the user's Oura \
                 account connected (vitals_connect with provider=oura, or `vitals-mcp auth oura`).",
                c.name
            )
        })
    }
    fn refresh(&self) -> Option<super::BoxFuture<'_, Result<(), String>>> {
        (self.cred.kind() == "oauth").then(|| Box::pin(self.refresh_oauth()) as super::BoxFuture<'_, Result<(), String>>)
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is synthetic data from Oura's sandbox, not the user's own. No Oura account is connected. \
         Say so when you use it. To read the user's own data, connect the account: vitals_connect with provider=oura."
            .into()
    }
}
