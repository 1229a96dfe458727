//! Whose credentials a server reads, and with which settings. On a person's own machine that is
//! this user: the config folder (`VITALS_CONFIG_DIR` or the platform's), the OS keyring, and
//! credentials in the environment. A hosted server reads each tenant from that tenant's folder
//! alone, file store only, sealed under the operator's key ([`super::vault`]): a tenant's request
//! must never reach another tenant's store, the host's own login, the keyring (whose entries are
//! named by provider, not by person) or a token in the environment.
//!
//! Either way a home carries the [`Config`] its server was started with (the binary reads the
//! environment once, into it): the accounts layer reads its settings (the config folder, the
//! store, app credentials, endpoint overrides, the browser) from here, never from the process's
//! environment, so two servers with their own settings can run in one process.
use super::vault::Vault;
use super::TokenStore;
use crate::config::Config;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum Home {
    /// This machine's user.
    Local { config: Arc<Config> },
    /// One tenant of a hosted server: its folder, nothing else, and the key its secrets are sealed
    /// under (None: a tenant read without one, whose sealed files are refused with what to do).
    Tenant { dir: PathBuf, vault: Option<Arc<Vault>>, config: Arc<Config> },
}

impl Home {
    /// This machine's user, with the settings the binary was started with.
    pub fn local(config: Arc<Config>) -> Home {
        Home::Local { config }
    }

    /// A tenant's home without a key and with default settings (tests that read no secret, and
    /// tools that need none).
    pub fn tenant(dir: impl Into<PathBuf>) -> Home {
        Home::Tenant { dir: dir.into(), vault: None, config: Arc::default() }
    }

    /// The settings of the server this home belongs to (the operator's, for a tenant).
    pub fn config(&self) -> &Arc<Config> {
        match self {
            Home::Local { config } | Home::Tenant { config, .. } => config,
        }
    }

    /// The token store of this home, or why there is none.
    pub fn store(&self) -> Result<TokenStore, super::StoreError> {
        match self {
            Home::Local { config } => super::token_store(config),
            Home::Tenant { dir, vault, .. } => Ok(TokenStore::tenant(dir, vault.clone())),
        }
    }

    /// Whether credentials in the environment (`OURA_PAT`, `VITALS_GARMIN_API_KEY`) count here.
    pub fn reads_env_credentials(&self) -> bool {
        matches!(self, Home::Local { .. })
    }

    /// A credential or path given in the server's settings (`OURA_PAT`), where this home reads
    /// such credentials (never a tenant's).
    pub fn env_credential(&self, name: &str) -> Option<&str> {
        self.config().var(name).filter(|_| self.reads_env_credentials())
    }
}
