//! vitals: read-only, complete and honest access to a person's own wearable data.
//!
//! The server is four crates, each depending only on the ones below it (Cargo keeps the layers):
//! - `vitals-core` (`server/core/`): words, the catalog vocabulary, the provider vocabulary and the
//!   one HTTP client;
//! - `vitals-providers` (`server/providers/`): accounts, one folder per provider, the registry;
//! - `vitals-engine` (`server/engine/`): the query engine, the analyses, the export;
//! - `vitals` (here): [`mcp`], the MCP layer, which only translates tool calls into engine queries,
//!   and [`hosted`], the MCP layer over HTTP (`serve --http`), with the binary `vitals-mcp`.
//!
//! The lower crates' modules are re-exported, so `vitals::engine`, `vitals::providers` and the rest
//! name what they always named.
pub use vitals_engine::{
    accounts, activity_file, analysis, archive, catalog, config, connection, engine, env, export, http, provider, providers, retry, secret, time, USER_AGENT,
};

pub mod hosted;
pub mod mcp;
