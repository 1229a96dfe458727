//! vitals' core: the words every other crate speaks and the one way out to the network.
//!
//! - [`secret`], [`time`], [`env`], [`archive`]: secrets that never print, zones and local days,
//!   the environment read one way, packed files;
//! - [`config`]: the settings the binary reads from its environment once, at start, and passes down;
//! - [`activity_file`]: an activity's records, laps and zones, and its FIT, TCX and GPX files;
//! - [`catalog`] and [`connection`]: what a provider is, as data (its collections, limits, rules, and
//!   how it is connected);
//! - [`provider`]: the vocabulary between the engine and a provider (`Provider`, `Page`, `Credential`);
//! - [`retry`]: when a request is asked again and after how long (a status's kind, `Retry-After`,
//!   the backoff, a login's waits), for the engine's one path and for the logins alike;
//! - [`http`]: the only HTTP client. Only this crate depends on `reqwest`, so no other crate can
//!   send a request but through it, and it sends nothing but a GET or a route a catalog declares.
pub mod activity_file;
pub mod archive;
pub mod catalog;
pub mod config;
pub mod connection;
pub mod env;
pub mod http;
pub mod provider;
pub mod retry;
pub mod secret;
pub mod time;

/// Sent on every request: Oura requires an identifying User-Agent and may answer 403 without one.
pub const USER_AGENT: &str = concat!("vitals/", env!("CARGO_PKG_VERSION"), " (+https://github.com/vitals-mcp/vitals)");
