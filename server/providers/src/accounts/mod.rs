//! Accounts: where credentials live and how they are replaced. Only credentials are ever written
//! to disk; health data never is.
pub mod app;
pub mod browser;
pub mod error;
pub mod files;
pub mod forget;
pub mod grant;
pub mod home;
pub mod link;
pub mod login;
pub mod oauth;
pub mod page;
pub mod store;
pub mod vault;

pub use crate::connection::AppEnv;
pub use app::{AppCredentials, AppSource, Settings};
pub use files::{forget_file, save_file, saved_file};
pub use home::Home;
pub use store::{default_dir, token_store, Backend, StoreError, TokenStore, Tokens};
