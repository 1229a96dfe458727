//! `cargo xtask`: the project's own commands (`bench` now; `dist` and `verify` with the bundle).
mod bench;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Benchmarks against the twin at a configurable latency.
    Bench {
        /// Twin latency per request, in milliseconds.
        #[arg(long, default_value_t = 50)]
        latency_ms: u64,
        /// Runs per row; the median is printed.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Do not install and measure mcp-oura 0.4.0 beside vitals.
        #[arg(long)]
        no_peer: bool,
    },
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn build_server() -> PathBuf {
    let st = std::process::Command::new(std::env::var("CARGO").unwrap_or("cargo".into()))
        .args(["build", "--release", "--quiet", "-p", "vitals", "--bin", "vitals-mcp"])
        .current_dir(root())
        .status()
        .expect("cargo build");
    assert!(st.success(), "release build of vitals-mcp failed");
    root().join("target/release").join(format!("vitals-mcp{}", std::env::consts::EXE_SUFFIX))
}

#[tokio::main]
async fn main() {
    match Cli::parse().cmd {
        Cmd::Bench { latency_ms, runs, no_peer } => {
            let server = build_server();
            bench::run(&root(), server, bench::Options { latency_ms, runs: runs.max(1), peer: !no_peer }).await
        }
    }
}
