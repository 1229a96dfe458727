//! `vitals-mcp`: the MCP server on stdio (default) and a few one-shot commands.
use clap::Parser;
use rmcp::ServiceExt;
use std::sync::Arc;
use vitals::engine::{Engine, Limits};
use vitals::mcp::{check_report, Vitals};

#[derive(Parser)]
#[command(name = "vitals-mcp", version, about = "Read-only MCP server for your own wearable data (sandbox until an account is connected)")]
struct Cli {
    /// Print what the vitals_check tool reports (credentials, reachability) as JSON and exit.
    #[arg(long)]
    check: bool,
    /// Print the tool names this server lists and exit.
    #[arg(long)]
    list_tools: bool,
    /// Keep nothing between answers: no memory cache for this process (a call can also send forget=true).
    #[arg(long)]
    forget: bool,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // stdout is the MCP channel: logs go to stderr only.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(match std::env::var("VITALS_LOG").as_deref() {
            Ok("debug") => tracing::Level::DEBUG,
            Ok("warn") => tracing::Level::WARN,
            _ => tracing::Level::INFO,
        })
        .init();
    let cli = Cli::parse();
    let mut limits = Limits::from_env();
    if cli.forget {
        limits.cache_bytes = 0;
    }
    let engine = Arc::new(Engine::new(vitals::providers::all_from_env(), limits));
    if cli.check {
        let report = check_report(&engine).await;
        println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
        return std::process::ExitCode::SUCCESS;
    }
    if cli.list_tools {
        for t in Vitals::new(engine).tool_names() {
            println!("{t}");
        }
        return std::process::ExitCode::SUCCESS;
    }
    match Vitals::new(engine).serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("MCP session failed to start: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
