//! vitals' accounts and providers: where credentials live and how a login is made
//! ([`accounts`]), and one folder per provider with the registry, the one list of providers
//! ([`providers`]). The core's modules are re-exported, so `crate::catalog` means the same in
//! every crate.
pub use vitals_core::{activity_file, archive, catalog, config, connection, env, http, provider, retry, secret, time, USER_AGENT};

pub mod accounts;
pub mod providers;
