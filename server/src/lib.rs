//! vitals: read-only, complete and honest access to a person's own wearable data.
//!
//! The crate is layered so that each behaviour has one home:
//! - [`catalog`]: provider-neutral descriptions of collections (what the engine reads);
//! - [`connection`]: how a provider is connected (OAuth, API key, session, import, none), as data;
//! - [`providers`]: one folder per provider (its catalog, its wire format, its credentials);
//! - [`engine`]: the one query engine (validation, windowing, pagination, retries, trimming, projection);
//! - [`analysis`]: compare, relate and trend for any provider's daily metric, with their method;
//! - [`export`]: an activity's file written where the user asked (the one write of health data);
//! - [`mcp`]: the MCP layer, which only translates tool calls into engine queries;
//! - [`hosted`]: the MCP layer over HTTP (`serve --http`): the secret path, the checks, the tenants.
pub mod accounts;
pub mod analysis;
pub mod archive;
pub mod catalog;
pub mod connection;
pub mod engine;
pub mod env;
pub mod export;
pub mod hosted;
pub mod http;
pub mod mcp;
pub mod providers;
pub mod secret;
pub mod time;

/// Sent on every request: Oura requires an identifying User-Agent and may answer 403 without one.
pub const USER_AGENT: &str = concat!("vitals/", env!("CARGO_PKG_VERSION"), " (+https://github.com/vitals-mcp/vitals)");
