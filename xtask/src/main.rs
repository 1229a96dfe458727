//! `cargo xtask bench`: measured numbers on the twin, medians of several runs. Performance claims come from here.
use clap::{Parser, Subcommand};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn command(bin: &PathBuf, base: &str) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(bin);
    c.env("VITALS_OURA_BASE_URL", base).env("OURA_PAT", "twin-token").env("VITALS_TZ", "-06:00").env("VITALS_LOG", "warn");
    c
}

#[tokio::main]
async fn main() {
    match Cli::parse().cmd {
        Cmd::Bench { latency_ms, runs } => bench(latency_ms, runs.max(1)).await,
    }
}

async fn bench(latency_ms: u64, runs: usize) {
    let bin = build_server();
    let twin = vitals_twin::start(Default::default(), 0).await.expect("twin");
    twin.set_faults(vitals_twin::Faults { latency_ms, ..Default::default() });
    let base = twin.base_url();
    println!("vitals bench: twin latency {latency_ms} ms, median of {runs} runs\n");
    println!("{:<38} {:>10} {:>7} {:>10} {:>9}", "row", "time", "pages", "records", "chars");

    let mut t = vec![];
    for _ in 0..runs {
        let start = Instant::now();
        let client = ().serve(TokioChildProcess::new(command(&bin, &base)).unwrap()).await.unwrap();
        client.list_all_tools().await.unwrap();
        t.push(start.elapsed());
        let _ = client.cancel().await;
    }
    println!("{:<38} {:>8.1}ms {:>7} {:>10} {:>9}", "spawn -> tools/list", median(t).as_secs_f64() * 1e3, "-", "-", "-");

    let client = ().serve(TokioChildProcess::new(command(&bin, &base)).unwrap()).await.unwrap();
    for (label, collection, start, end) in [
        ("heart rate, one local day", "oura.heartrate", "2026-06-10", "2026-06-10"),
        ("heart rate, one month (30 days)", "oura.heartrate", "2026-06-01", "2026-06-30"),
        ("daily_activity, 30 days", "oura.daily_activity", "2026-06-01", "2026-06-30"),
    ] {
        let mut t = vec![];
        let mut last = serde_json::Value::Null;
        let mut chars = 0;
        for _ in 0..runs {
            let args = serde_json::json!({"collection": collection, "start": start, "end": end});
            let started = Instant::now();
            let r = client
                .call_tool(CallToolRequestParams::new("vitals_query").with_arguments(args.as_object().unwrap().clone()))
                .await
                .unwrap();
            t.push(started.elapsed());
            chars = r.content.iter().filter_map(|c| c.as_text()).map(|x| x.text.len()).sum();
            last = r.structured_content.unwrap_or_default();
        }
        println!(
            "{:<38} {:>8.1}ms {:>7} {:>10} {:>9}",
            label,
            median(t).as_secs_f64() * 1e3,
            last["pages"].to_string(),
            last["count"].to_string(),
            chars
        );
    }
    let _ = client.cancel().await;
}
