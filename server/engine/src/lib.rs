//! vitals' engine: the one query engine (validation, windowing, pagination, retries, trimming,
//! projection: [`engine`]), the analyses of a daily metric and the daily view ([`analysis`]), and
//! an activity's file written where the user asked ([`export`], the one write of health data).
//! The lower crates' modules are re-exported, so `crate::providers` means the same in every crate.
pub use vitals_providers::{accounts, activity_file, archive, catalog, config, connection, env, http, provider, providers, retry, secret, time, USER_AGENT};

pub mod analysis;
pub mod engine;
pub mod export;
