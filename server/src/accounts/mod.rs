//! Accounts: where credentials live and how they are replaced. Only credentials are ever written
//! to disk; health data never is.
pub mod store;

pub use store::{FileStore, StoreError, Tokens};
