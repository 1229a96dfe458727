//! The MCP layer: tool schemas, descriptions and translation into engine calls. No data logic here.
pub mod apps;
mod args;
mod check;
pub mod connect;
mod outputs;
mod progress;
mod sources;
pub mod stdio;
mod tools;

pub use check::{check_report, CheckReport};
pub use sources::{sources_report, SourcesReport};
pub use tools::Vitals;
