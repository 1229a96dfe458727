//! Whose credentials a server reads. On a person's own machine that is this user: the config folder
//! (`VITALS_CONFIG_DIR` or the platform's), the OS keyring, and credentials in the environment. A
//! hosted server reads each tenant from that tenant's folder alone, file store only: a tenant's
//! request must never reach another tenant's store, the host's own login, the keyring (whose entries
//! are named by provider, not by person) or a token in the environment.
use super::TokenStore;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Home {
    /// This machine's user.
    Local,
    /// One tenant of a hosted server: its folder, nothing else.
    Tenant(PathBuf),
}

impl Home {
    /// The token store of this home, or why there is none.
    pub fn store(&self) -> Result<TokenStore, String> {
        match self {
            Home::Local => super::token_store(),
            Home::Tenant(dir) => Ok(TokenStore::file(dir)),
        }
    }

    /// Whether credentials in the environment (`OURA_PAT`, `VITALS_GARMIN_API_KEY`) count here.
    pub fn reads_env_credentials(&self) -> bool {
        matches!(self, Home::Local)
    }
}
