//! `cargo xtask`: the project's own commands: `bench`, `dist` (the signed `.mcpb`), `verify`, `cycles`.
mod bench;
mod cycles;
mod dist;

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
        /// Only the rows whose label contains this text (spawn and idle RSS always run).
        #[arg(long)]
        only: Option<String>,
        /// Measure this server binary instead of building the release one (sizes of a debug build
        /// are the same; its times are not the release's).
        #[arg(long)]
        server: Option<PathBuf>,
        /// The Apple Health exports to generate and read, in MB of XML (a small one checks the
        /// section end to end in a debug build).
        #[arg(long, value_delimiter = ',', default_values_t = [100, 1000])]
        apple_mb: Vec<u32>,
    },
    /// Build the server, then pack, sign and verify `dist/vitals-<version>.mcpb` (+ `.sha256`).
    Dist {
        /// A target of the release matrix to build (repeatable). Default: every one whose toolchain is installed.
        #[arg(long = "target")]
        targets: Vec<String>,
        /// A server binary built elsewhere, as TARGET=PATH (repeatable; the release workflow's artifacts).
        #[arg(long = "prebuilt", value_parser = parse_prebuilt)]
        prebuilt: Vec<(String, PathBuf)>,
        /// PEM private key (RSA) to sign with. Also from VITALS_MCPB_KEY.
        #[arg(long, env = "VITALS_MCPB_KEY")]
        key: Option<PathBuf>,
        /// PEM certificate of that key. Also from VITALS_MCPB_CERT.
        #[arg(long, env = "VITALS_MCPB_CERT")]
        cert: Option<PathBuf>,
        /// PEM intermediate certificates, in chain order (repeatable).
        #[arg(long = "intermediate")]
        intermediates: Vec<PathBuf>,
        /// Sign with a throwaway certificate made now (local use; its certificate lands in target/dist/).
        #[arg(long, conflicts_with_all = ["key", "cert", "unsigned"])]
        self_signed: bool,
        /// Do not sign.
        #[arg(long, conflicts_with_all = ["key", "cert"])]
        unsigned: bool,
    },
    /// Fail when modules of server/src import each other in a circle, or a room names one above it
    /// (also run by `cargo test --workspace`).
    Cycles,
    /// Check a bundle: framing, zip trailer, signature, manifest, entry point, icon, modes.
    Verify {
        file: PathBuf,
        /// Fail when the bundle is not signed.
        #[arg(long)]
        require_signature: bool,
    },
}

fn parse_prebuilt(s: &str) -> Result<(String, PathBuf), String> {
    let (t, p) = s.split_once('=').ok_or("expected TARGET=PATH")?;
    Ok((t.to_string(), PathBuf::from(p)))
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("xtask: {msg}");
    std::process::exit(1)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn build_server() -> PathBuf {
    let st = dist::cargo().args(["build", "--release", "--quiet", "-p", "vitals", "--bin", "vitals-mcp"]).current_dir(root()).status().expect("cargo build");
    assert!(st.success(), "release build of vitals-mcp failed");
    root().join("target/release").join(format!("vitals-mcp{}", std::env::consts::EXE_SUFFIX))
}

#[tokio::main]
async fn main() {
    match Cli::parse().cmd {
        Cmd::Bench { latency_ms, runs, no_peer, only, server, apple_mb } => {
            let server = server.unwrap_or_else(build_server);
            bench::run(&root(), server, bench::Options { latency_ms, runs: runs.max(1), peer: !no_peer, only, apple_mb }).await
        }
        Cmd::Dist { targets, prebuilt, key, cert, intermediates, self_signed, unsigned } => {
            let signing = match (key, cert, self_signed, unsigned) {
                (_, _, true, _) => dist::Signing::SelfSigned,
                (_, _, _, true) => dist::Signing::Unsigned,
                (Some(key), Some(cert), _, _) => dist::Signing::Pem { key, cert, intermediates },
                (Some(_), None, _, _) | (None, Some(_), _, _) => fail("signing needs both --key and --cert (or VITALS_MCPB_KEY and VITALS_MCPB_CERT)"),
                (None, None, _, _) => fail(
                    "no signing key: pass --key and --cert (or VITALS_MCPB_KEY and VITALS_MCPB_CERT), or --self-signed for a \
                     throwaway certificate, or --unsigned",
                ),
            };
            if let Err(e) = tokio::task::block_in_place(|| dist::dist(&root(), dist::Options { targets, prebuilt, signing })) {
                fail(e)
            }
        }
        Cmd::Cycles => {
            let src = cycles::server_sources(&root());
            match (cycles::report(&src), cycles::upward(&src)) {
                (Ok(c), Ok(u)) if c.is_empty() && u.is_empty() => println!("the server's crates: no import circle, and no room names a room above it"),
                (Ok(c), Ok(u)) => {
                    fail(format!("modules of server/src import each other in a circle:\n{}\nname a room above their own:\n{}", c.join("\n"), u.join("\n")))
                }
                (Err(e), _) | (_, Err(e)) => fail(e),
            }
        }
        Cmd::Verify { file, require_signature } => {
            let bytes = std::fs::read(&file).unwrap_or_else(|e| fail(format!("{}: {e}", file.display())));
            match bundle::verify::verify(&bytes) {
                Ok(r) if require_signature && r.signature.is_none() => fail(format!("{}: not signed", file.display())),
                Ok(r) => println!("{}: {}", file.display(), dist::describe(&r)),
                Err(e) => fail(format!("{}: {e}", file.display())),
            }
        }
    }
}
