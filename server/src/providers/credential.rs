//! The credential every OAuth provider uses: a personal token from the environment where the
//! provider still issues them (Oura's `OURA_PAT`), else the login saved in the token store (re-read
//! on every request, so a login shows up without a restart), else the sandbox.
use super::CredentialSource;
use crate::accounts::{TokenStore, Tokens};
use crate::catalog::ProviderSpec;
use crate::secret::Secret;

pub struct StoredCredential {
    spec: &'static ProviderSpec,
    /// The variable a personal token is read from, where the provider has them, and the token.
    personal_env: Option<&'static str>,
    personal: Option<Secret>,
    sandbox_forced: bool,
    /// The token store, or why there is none (no config folder, a bad VITALS_TOKEN_STORE).
    store: Result<TokenStore, String>,
    /// What the sandbox is, in words (`Oura's sandbox`, `built-in sample data`).
    sandbox_is: &'static str,
}

impl StoredCredential {
    /// Read from the environment: `personal_env` (if the provider has personal tokens) and `VITALS_SANDBOX`.
    pub fn from_env(spec: &'static ProviderSpec, personal_env: Option<&'static str>, sandbox_is: &'static str) -> StoredCredential {
        let personal = personal_env.and_then(crate::env::var).map(Secret::new);
        StoredCredential { spec, personal_env, personal, sandbox_forced: crate::env::flag("VITALS_SANDBOX"), store: crate::accounts::token_store(), sandbox_is }
    }

    pub fn stored(&self) -> Option<Tokens> {
        self.store.as_ref().ok().and_then(|s| s.load(self.spec.name).ok().flatten())
    }

    fn oauth(&self) -> bool {
        self.kind() == "oauth"
    }

    /// Sandbox until a token or a login is there.
    pub fn mode(&self) -> super::Mode {
        if self.kind() == "sandbox" {
            super::Mode::Sandbox
        } else {
            super::Mode::Connected
        }
    }

    /// The refresh a provider offers the engine: only a saved login can be refreshed.
    pub fn refresher(&self, refused: Option<Secret>) -> Option<super::BoxFuture<'_, Result<(), String>>> {
        self.oauth().then(|| Box::pin(self.refresh(refused)) as super::BoxFuture<'_, Result<(), String>>)
    }

    /// Refresh the saved login under the store's lock. `refused` is the access token the provider
    /// turned away: when the store already holds another one, some process (this one or another)
    /// refreshed since that request was sent, and its pair is used instead of rotating again.
    pub async fn refresh(&self, refused: Option<Secret>) -> Result<(), String> {
        let store = self.store.clone()?;
        let mut seen = self.stored().ok_or("no OAuth tokens are stored")?;
        if let Some(r) = refused {
            if seen.access != r {
                return Ok(());
            }
            seen.access = r;
        }
        let (oauth, app) = crate::accounts::link::app_for(self.spec).map_err(|e| e.to_string())?;
        let name = self.spec.name;
        let handle = tokio::runtime::Handle::current();
        // The store's lock is a blocking file lock: hold it on the blocking pool, and run the
        // refresh request from there.
        tokio::task::spawn_blocking(move || {
            store
                .refresh_with(name, &seen, |t| handle.block_on(crate::accounts::oauth::refresh(&oauth, &app, t)).map_err(|e| e.to_string()))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

impl CredentialSource for StoredCredential {
    fn kind(&self) -> &'static str {
        match (&self.personal, self.sandbox_forced) {
            (_, true) => "sandbox",
            (Some(_), false) => "personal_token",
            (None, false) if self.stored().is_some() => "oauth",
            (None, false) => "sandbox",
        }
    }
    fn origin(&self) -> String {
        match self.kind() {
            "personal_token" => format!("environment {}", self.personal_env.unwrap_or_default()),
            "oauth" => format!("OAuth login in the {}", self.store.as_ref().map(|s| s.describe()).unwrap_or_default()),
            _ if self.sandbox_forced => "VITALS_SANDBOX=1 (sandbox forced)".into(),
            _ => format!(
                "none: {}no {} account is connected (vitals-mcp auth {}), so {} is used",
                self.personal_env.map(|v| format!("{v} is not set and ")).unwrap_or_default(),
                self.spec.display,
                self.spec.name,
                self.sandbox_is
            ),
        }
    }
    fn bearer(&self) -> Option<Secret> {
        match self.kind() {
            // A sandbox accepts any bearer; send a fixed, harmless one.
            "sandbox" => Some(Secret::new("sandbox")),
            "oauth" => self.stored().map(|t| t.access),
            _ => self.personal.clone(),
        }
    }
    fn scopes(&self) -> Option<Vec<String>> {
        self.oauth().then(|| self.stored().map(|t| t.scopes)).flatten()
    }
    fn account(&self) -> Option<String> {
        self.oauth().then(|| self.stored().and_then(|t| t.login)).flatten()
    }
    fn expiring(&self) -> bool {
        self.oauth() && self.stored().and_then(|t| t.expires_at).is_some_and(|at| at - jiff::Timestamp::now().as_second() <= super::EXPIRY_MARGIN_S)
    }
    fn expires_at(&self) -> Option<String> {
        self.oauth().then(|| self.stored().and_then(|t| t.expires_at)).flatten().and_then(|s| jiff::Timestamp::from_second(s).ok()).map(|t| t.to_string())
    }
}
