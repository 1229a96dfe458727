//! Accounts: where credentials live and how they are replaced. Only credentials are ever written
//! to disk; health data never is.
pub mod app;
pub mod forget;
pub mod link;
pub mod login;
pub mod oauth;
pub mod store;

pub use app::{AppCredentials, AppEnv, AppSource, Settings};
pub use store::{default_dir, token_store, Backend, StoreError, TokenStore, Tokens};
