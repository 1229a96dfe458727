//! Whose credentials a server reads. On a person's own machine that is this user: the config folder
//! (`VITALS_CONFIG_DIR` or the platform's), the OS keyring, and credentials in the environment. A
//! hosted server reads each tenant from that tenant's folder alone, file store only, sealed under the
//! operator's key ([`super::vault`]): a tenant's request must never reach another tenant's store,
//! the host's own login, the keyring (whose entries are named by provider, not by person) or a
//! token in the environment.
use super::vault::Vault;
use super::TokenStore;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Home {
    /// This machine's user.
    #[default]
    Local,
    /// One tenant of a hosted server: its folder, nothing else, and the key its secrets are sealed
    /// under (None: a tenant read without one, whose sealed files are refused with what to do).
    Tenant { dir: PathBuf, vault: Option<Arc<Vault>> },
}

impl Home {
    /// A tenant's home without a key (tests that read no secret, and tools that need none).
    pub fn tenant(dir: impl Into<PathBuf>) -> Home {
        Home::Tenant { dir: dir.into(), vault: None }
    }

    /// The token store of this home, or why there is none.
    pub fn store(&self) -> Result<TokenStore, String> {
        match self {
            Home::Local => super::token_store(),
            Home::Tenant { dir, vault } => Ok(TokenStore::tenant(dir, vault.clone())),
        }
    }

    /// Whether credentials in the environment (`OURA_PAT`, `VITALS_GARMIN_API_KEY`) count here.
    pub fn reads_env_credentials(&self) -> bool {
        matches!(self, Home::Local)
    }
}
