//! The MCP Apps views: each view's size as served (HTML, CSS and chart code), and the time to the
//! first drawn chart of a day of heart rate in headless Chromium, inside the same host page the
//! views' test drives (`vitals_twin::apps_host`), against `serve --http` and the twin.
use super::median;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use vitals_twin::apps_host::{host_bundle, page, serve_host, Browser};

/// The bounds: a view at most this many bytes, its first chart within this many ms.
const MAX_VIEW_BYTES: usize = 150_000;
const MAX_FIRST_CHART_MS: f64 = 300.0;

pub async fn run(root: &Path, server: &Path, twin: &vitals_twin::Twin, runs: usize) {
    println!("\nMCP Apps views (target: each at most {} kB, first chart of a day of heart rate under {MAX_FIRST_CHART_MS} ms)", MAX_VIEW_BYTES / 1000);
    println!("{:<24} {:>10} {:>8}", "view", "bytes", "target");
    for v in vitals::mcp::apps::VIEWS {
        let bytes = vitals::mcp::apps::html(v.uri).map_or(0, |h| h.len());
        println!("{:<24} {:>10} {:>8}", v.uri, bytes, if bytes <= MAX_VIEW_BYTES { "met" } else { "MISSED" });
    }
    match first_chart(root, server, twin, runs).await {
        Ok(t) => println!(
            "{:<40} result -> painted {:.0} ms (view load -> painted {:.0} ms), {} points drawn, median of {runs}: {}",
            "first chart, a day of heart rate",
            t.result_to_chart,
            t.load_to_chart,
            t.points,
            if t.result_to_chart < MAX_FIRST_CHART_MS { "met" } else { "MISSED" }
        ),
        Err(why) => println!("first chart, a day of heart rate: not measured: {why}"),
    }
}

struct FirstChart {
    /// From the host handing the view the tool's result to the frame after it drew.
    result_to_chart: f64,
    /// From the host starting to load the view's HTML to the same frame.
    load_to_chart: f64,
    points: u64,
}

/// Medians over `runs` page loads of `vitals_query` for a day of Oura heart rate.
async fn first_chart(root: &Path, server: &Path, twin: &vitals_twin::Twin, runs: usize) -> Result<FirstChart, String> {
    for (tool, why) in [("chromedriver", "Debian's chromium-driver (setup.sh installs it)"), ("npm", "npm and its registry")] {
        if std::process::Command::new("which").arg(tool).output().map_or(true, |o| !o.status.success()) {
            return Err(format!("it needs {why}"));
        }
    }
    let bundle = tokio::task::spawn_blocking(host_bundle).await.map_err(|e| format!("the host page did not build: {e}"))?;
    let origin = serve_host(bundle).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
    let config = root.join("target/bench/views");
    let _ = std::fs::remove_dir_all(&config);
    std::fs::create_dir_all(&config).map_err(|e| e.to_string())?;
    // Chromium's profile path without `..` in it (ChromeDriver reads its port file from there).
    let config = config.canonicalize().map_err(|e| e.to_string())?;
    let mut serve = tokio::process::Command::new(server)
        .args(["serve", "--http", &format!("127.0.0.1:{port}"), "--path", "/bench-views-0123456789abcdef/mcp", "--allow-origin", &origin])
        .env("VITALS_OURA_BASE_URL", twin.base_url())
        .env("OURA_PAT", "twin-token")
        .env("VITALS_TZ", "-06:00")
        .env("VITALS_LOG", "warn")
        .env("VITALS_CONFIG_DIR", &config)
        .env("VITALS_BROWSER", "none")
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("vitals-mcp serve did not start: {e}"))?;
    let mcp = format!("http://127.0.0.1:{port}/bench-views-0123456789abcdef/mcp");
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let browser = Browser::start(&config.join("chromium")).await;
    let (mut result, mut load, mut points) = (vec![], vec![], 0);
    for _ in 0..runs.max(1) {
        browser.open(&page(&origin, &mcp, "vitals_query", json!({"collection": "oura.heartrate", "day": "2026-06-10"}), "light")).await;
        let v = browser.drawn(2).await;
        let t = &v["timing"];
        let at = |k: &str| t[k].as_f64().ok_or(format!("the host page has no {k} time: {t}"));
        // Microseconds, so the medians can be taken over integers.
        result.push(((at("drawn")? - at("result")?) * 1000.0) as i64);
        load.push(((at("drawn")? - at("loading")?) * 1000.0) as i64);
        points = v["lines"][0]["points"].as_u64().unwrap_or(0);
    }
    browser.close().await;
    let _ = serve.kill().await;
    let ms = |v: Vec<i64>| median(v).unwrap_or(0) as f64 / 1000.0;
    if points == 0 {
        return Err("the view drew no point".into());
    }
    Ok(FirstChart { result_to_chart: ms(result), load_to_chart: ms(load), points })
}
