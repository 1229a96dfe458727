//! One folder per provider. A provider is data (its catalog) plus a small adapter that knows its
//! wire format and where its credential comes from; everything else is the engine's.
pub mod oura;

use crate::catalog::{CollectionSpec, ProviderSpec};
use crate::secret::Secret;
use serde_json::Value;

pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Where a provider stands for this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Synthetic data from the provider's sandbox: never the user's.
    Sandbox,
    Connected,
    NeedsCredentials,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sandbox => "sandbox",
            Mode::Connected => "connected",
            Mode::NeedsCredentials => "needs_credentials",
        }
    }
}

/// What the engine asks of a credential, whatever its kind (personal token now, OAuth later).
pub trait CredentialSource: Send + Sync {
    /// `none`, `sandbox`, `personal_token`, `oauth`.
    fn kind(&self) -> &'static str;
    /// Where the credential came from, in words (`environment OURA_PAT`).
    fn origin(&self) -> String;
    fn bearer(&self) -> Option<Secret>;
    fn scopes(&self) -> Option<Vec<String>> {
        None
    }
    fn expires_at(&self) -> Option<String> {
        None
    }
    /// Which login this is (changes when another account may have been connected). None: no login.
    fn account(&self) -> Option<String> {
        None
    }
    /// The access token expires within [`EXPIRY_MARGIN_S`]: refresh before asking, not after a 401.
    fn expiring(&self) -> bool {
        false
    }
}

/// How close to its expiry an access token is refreshed before use.
pub const EXPIRY_MARGIN_S: i64 = 60;

/// The time window of one upstream request, already padded by the engine.
#[derive(Debug, Clone)]
pub enum Window {
    Dates { start: jiff::civil::Date, end: jiff::civil::Date },
    Instants { start: String, end: String },
    Latest,
    Unbounded,
}

/// One page as the provider sent it.
pub struct Page {
    pub records: Vec<Value>,
    pub next_token: Option<String>,
}

/// The provider-specific half of a query.
pub trait Provider: Send + Sync {
    fn spec(&self) -> &'static ProviderSpec;
    fn mode(&self) -> Mode;
    fn credential(&self) -> &dyn CredentialSource;
    /// URL of a collection's list route in the current mode.
    fn list_url(&self, c: &CollectionSpec) -> String;
    /// Query parameters for one page.
    fn params(&self, c: &CollectionSpec, w: &Window, fields: Option<&[String]>, next_token: Option<&str>) -> Vec<(String, String)>;
    /// Decode one page body.
    fn parse_page(&self, c: &CollectionSpec, body: &str) -> Result<Page, String>;
    /// What to tell the user when the credential is missing or refused (401/403).
    fn auth_help(&self, status: u16) -> String;
    /// Why a collection cannot be served in the current mode, if it cannot.
    fn unavailable(&self, c: &CollectionSpec) -> Option<String>;
    /// Words that every sandbox answer carries.
    fn synthetic_notice(&self) -> String;
    /// Refresh a credential that can be refreshed (OAuth), after a 401. None: nothing to refresh.
    fn refresh(&self) -> Option<BoxFuture<'_, Result<(), String>>> {
        None
    }
}

/// Every provider this build knows, in their current mode.
pub fn all_from_env() -> Vec<std::sync::Arc<dyn Provider>> {
    vec![std::sync::Arc::new(oura::Oura::from_env())]
}
