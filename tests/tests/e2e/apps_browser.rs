//! The MCP Apps views in a real browser (issue 39): headless Chromium (Debian's, through its
//! ChromeDriver) loads a host page built on the `@modelcontextprotocol/ext-apps` package's own
//! host bridge (`tests/browser/host.js`, bundled here with esbuild), connected to `vitals-mcp serve
//! --http` against the twins. Each view is checked against the data it was given (points drawn =
//! samples, stage minutes = the night's, the noise band = the answer's), in light and dark, a zoom
//! that asks the app-only tool again, and a screenshot of each is kept in `target/e2e-apps/`.
use crate::common::*;
use crate::http::hosted;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const EXT_APPS: &str = "@modelcontextprotocol/ext-apps@2.0.4";
const CLIENT: &str = "@modelcontextprotocol/client@2.4.0";
const ZOD: &str = "zod@4.6.7";
const ESBUILD: &str = "esbuild@0.28.2";

fn target() -> PathBuf {
    std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// The host page's bundle, built once into target/e2e-apps (npm packages installed beside it).
fn host_bundle() -> PathBuf {
    let dir = target().join("e2e-apps");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let need = "this test needs npm and the npm registry";
    if !dir.join("node_modules/@modelcontextprotocol/ext-apps").exists() || !dir.join("node_modules/.bin/esbuild").exists() {
        let o = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .args([EXT_APPS, CLIENT, ZOD, ESBUILD])
            .output()
            .expect(need);
        assert!(o.status.success(), "{need}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser/host.js");
    let out = dir.join("host.bundle.js");
    let o = Command::new(dir.join("node_modules/.bin/esbuild"))
        .arg(&src)
        .args(["--bundle", "--format=iife", "--platform=browser", "--log-level=warning"])
        .arg(format!("--outfile={}", out.display()))
        .env("NODE_PATH", dir.join("node_modules"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "esbuild: {}", String::from_utf8_lossy(&o.stderr));
    out
}

/// The host page and its bundle, served on loopback; returns the page's origin.
async fn serve_host(bundle: PathBuf) -> String {
    use axum::{http::header, routing::get, Router};
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("browser/host.html")).unwrap();
    let js = std::fs::read_to_string(bundle).unwrap();
    let app = Router::new()
        .route("/", get(move || async move { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page) }))
        .route("/host.bundle.js", get(move || async move { ([(header::CONTENT_TYPE, "text/javascript")], js) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, app).await });
    origin
}

/// A ChromeDriver session of headless Chromium, spoken to over WebDriver's HTTP API.
struct Browser {
    http: reqwest::Client,
    base: String,
    session: String,
    _driver: Driver,
}

impl Browser {
    async fn start() -> Browser {
        let need = "this test needs Debian's chromium and chromium-driver (setup.sh installs them)";
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Driver(
            Command::new("chromedriver")
                .arg(format!("--port={port}"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect(need),
        );
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let profile = scratch().join(format!("chromium-{}", std::process::id()));
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            // The host page and vitals-mcp are two loopback origins; the server checks Origin itself.
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-web-security", "--window-size=760,1400",
                     format!("--user-data-dir={}", profile.display())]
        }}}});
        for _ in 0..100 {
            if let Ok(r) = http.post(format!("{base}/session")).json(&caps).send().await {
                let v: Value = r.json().await.unwrap();
                let session = v["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("{need}: {v}")).to_string();
                return Browser { http, base, session, _driver: driver };
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{need}: chromedriver never answered");
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let req = self.http.request(method, url);
        let req = if body.is_null() { req } else { req.json(&body) };
        let v: Value = req.send().await.unwrap().json().await.unwrap();
        assert!(v["value"].get("error").is_none(), "webdriver {path}: {v}");
        v["value"].clone()
    }

    async fn open(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", json!({ "url": url })).await;
    }

    /// `script` run in the host page (`arguments` as given); its return value.
    async fn run(&self, script: &str, args: Value) -> Value {
        self.cmd(reqwest::Method::POST, "/execute/sync", json!({ "script": script, "args": args })).await
    }

    /// Until the view says it has drawn (or the host page failed); the view's document facts.
    async fn drawn(&self, after_calls: usize) -> Value {
        self.drawn_when(after_calls, |_| true).await
    }

    /// As [`Browser::drawn`], once `ready` holds of the view's facts too.
    async fn drawn_when(&self, after_calls: usize, ready: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..300 {
            let v = self.run(VIEW_FACTS, json!([after_calls])).await;
            if !v["errors"].as_array().unwrap().is_empty() {
                panic!("the host page failed: {}", v["errors"]);
            }
            if v["drawn"] == json!(true) && ready(&v) {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let v = self.run(VIEW_FACTS, json!([0])).await;
        panic!("the view never drew (wanted {after_calls} calls): calls {}, lines {}, text {}", v["calls"], v["lines"], v["text"]);
    }

    async fn screenshot(&self, name: &str) {
        let png = self.cmd(reqwest::Method::GET, "/screenshot", Value::Null).await;
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap()).unwrap();
        let dir = target().join("e2e-apps/screens");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), bytes).unwrap();
    }

    async fn close(self) {
        let _ = self.http.delete(format!("{}/session/{}", self.base, self.session)).send().await;
    }
}

/// The ChromeDriver process: it goes with the test, whether the session was ended or the test failed.
struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the view's document shows, read from the host page through the same-origin iframe.
const VIEW_FACTS: &str = r#"
const h = window.__host || { calls: [], errors: ["no host"] };
const f = document.getElementById("view");
const d = f && f.contentDocument;
const main = d && d.getElementById("view");
const all = (sel, fn) => d ? [...d.querySelectorAll(sel)].map(fn) : [];
const stageMin = {};
for (const r of (d ? d.querySelectorAll("rect[data-stage]") : [])) stageMin[r.dataset.stage] = (stageMin[r.dataset.stage] || 0) + parseFloat(r.dataset.min);
return {
  errors: h.errors, calls: h.calls, tools: h.tools, result: h.result,
  drawn: !!(main && main.dataset.drawn === "1" && h.calls.length >= arguments[0]),
  lines: all("polyline[data-series]", (e) => ({ series: e.dataset.series, points: +e.dataset.points })),
  stageMin,
  headline: all(".headline [data-k]", (e) => [e.dataset.k, e.querySelector("b").textContent]),
  sample: all("[data-sample]", (e) => e.textContent).length,
  cut: all("[data-cut]", (e) => e.dataset.cut),
  band: all("rect[data-band]", (e) => e.dataset.band.split(",").map(Number)),
  zoomed: !!(d && [...d.querySelectorAll("section.series h2")].some((e) => e.textContent.includes("(zoomed)"))),
  counts: all("[data-count]", (e) => ({ count: +e.dataset.count, resolution: e.dataset.resolution })),
  sparks: all("svg[data-metric]", (e) => ({ metric: e.dataset.metric, points: +e.dataset.points })),
  background: d ? getComputedStyle(d.body).backgroundColor : null,
  text: main ? main.innerText.slice(0, 2000) : null,
};
"#;

fn page(origin: &str, mcp: &str, tool: &str, args: Value, theme: &str) -> String {
    let mut u = url::Url::parse(&format!("{origin}/")).unwrap();
    u.query_pairs_mut().append_pair("mcp", mcp).append_pair("tool", tool).append_pair("args", &args.to_string()).append_pair("theme", theme);
    u.to_string()
}

fn luminance(css: &str) -> f64 {
    let n: Vec<f64> =
        css.trim_start_matches("rgba(").trim_start_matches("rgb(").trim_end_matches(')').split(',').filter_map(|x| x.trim().parse().ok()).collect();
    (0.2126 * n[0] + 0.7152 * n[1] + 0.0722 * n[2]) / 255.0
}

#[tokio::test(flavor = "multi_thread")]
async fn each_view_draws_what_it_was_given_in_a_real_browser() {
    let bundle = tokio::task::spawn_blocking(host_bundle).await.unwrap();
    let origin = serve_host(bundle).await;
    let twin = twin().await;
    let config = scratch().join(format!("apps-browser-{}", std::process::id()));
    std::fs::create_dir_all(&config).unwrap();
    let h = hosted(&twin, &config, &["--allow-origin", &origin], &[("OURA_PAT", TOKEN)]).await;
    let mcp = h.url.clone();
    let b = Browser::start().await;
    // The same server, read by the test itself: what each view should show.
    let s = connect(&twin, false, &[]).await;
    let day = ds(ago(1));

    // A day of heart rate: every sample drawn, then a zoom asks the app-only tool again.
    let args = json!({"collection": "oura.heartrate", "day": day});
    b.open(&page(&origin, &mcp, "vitals_query", args, "light")).await;
    let v = b.drawn(2).await;
    let tools = v["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "vitals_view_data" && t["ui"]["visibility"] == json!(["app"])), "{tools:?}");
    let raw = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": day, "resolution": "raw", "max_chars": 2_000_000})).await;
    let samples = raw["data"]["rows"].as_array().unwrap().len();
    assert_eq!(v["lines"][0], json!({"series": "bpm", "points": samples}), "every sample of the day is a point: {}", v["text"]);
    assert_eq!(v["sample"], 0, "a connected account's data is not marked as sample data");
    let light = luminance(v["background"].as_str().unwrap());
    b.screenshot("series").await;
    let before = v["calls"].as_array().unwrap().len();
    b.run(
        r#"const d = document.getElementById("view").contentDocument, svg = d.querySelector("svg[role=img]"), r = svg.getBoundingClientRect();
           const at = (type, f) => svg.dispatchEvent(new PointerEvent(type, { clientX: r.left + r.width * f, clientY: r.top + r.height / 2, bubbles: true }));
           at("pointerdown", 0.35); at("pointermove", 0.5); at("pointerup", 0.5);"#,
        json!([]),
    )
    .await;
    let z = b.drawn_when(before + 1, |v| v["zoomed"] == json!(true) && !v["lines"].as_array().unwrap().is_empty()).await;
    let zoom = z["calls"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(zoom["name"], "vitals_view_data", "a zoom asks the app-only tool: {zoom}");
    let (from, to): (jiff::Timestamp, jiff::Timestamp) =
        (zoom["arguments"]["from"].as_str().unwrap().parse().unwrap(), zoom["arguments"]["to"].as_str().unwrap().parse().unwrap());
    let inside = raw["data"]["rows"].as_array().unwrap().iter().filter(|r| {
        let t: jiff::Timestamp = r[0].as_str().unwrap().parse().unwrap();
        t >= from && t < to
    });
    assert_eq!(z["lines"][0]["points"], inside.count(), "the zoom draws every sample of its span");

    // The same view in dark: the host's theme, not the page's default.
    b.open(&page(&origin, &mcp, "vitals_query", json!({"collection": "oura.heartrate", "day": day}), "dark")).await;
    let v = b.drawn(2).await;
    let dark = luminance(v["background"].as_str().unwrap());
    assert!(light > 0.8 && dark < 0.2, "light {light}, dark {dark}");
    b.screenshot("series-dark").await;

    // Last night: the hypnogram's stage minutes are the night's, the numbers the provider's.
    b.open(&page(&origin, &mcp, "vitals_today", json!({"days": 1}), "light")).await;
    let v = b.drawn(2).await;
    let call = v["calls"].as_array().unwrap().iter().find(|c| c["name"] == "vitals_view_data").unwrap().clone();
    let nights = s.ok("vitals_view_data", call["arguments"].clone()).await;
    let night = nights["nights"].as_array().unwrap().iter().rev().find(|n| n["stages"].as_array().is_some_and(|s| !s.is_empty())).unwrap();
    for stage in ["deep", "light", "rem", "awake"] {
        let drawn = v["stageMin"][stage].as_f64().unwrap_or(0.0);
        assert!((drawn - night["minutes"][stage].as_f64().unwrap()).abs() < 0.05, "{stage}: drawn {drawn}, night {}", night["minutes"]);
    }
    b.screenshot("night").await;

    // The days side by side: a point per day with a value.
    let (start, end) = (ds(ago(14)), ds(ago(1)));
    b.open(&page(&origin, &mcp, "vitals_daily", json!({"start": start, "end": end}), "light")).await;
    let v = b.drawn(1).await;
    let rows = v["result"]["rows"].as_array().unwrap();
    for spark in v["sparks"].as_array().unwrap() {
        let m = spark["metric"].as_str().unwrap();
        let with_value = rows.iter().filter(|r| r[m].get("value").is_some_and(Value::is_number)).count();
        assert_eq!(spark["points"], with_value, "{m}");
    }
    b.screenshot("days").await;

    // A comparison: the noise band drawn is the verdict's own.
    let args = json!({"metric": "oura.daily_readiness.score", "a_start": ds(ago(28)), "a_end": ds(ago(15)), "b_start": ds(ago(14)), "b_end": ds(ago(1))});
    b.open(&page(&origin, &mcp, "vitals_compare", args, "light")).await;
    let v = b.drawn(2).await;
    let r = &v["result"];
    if let (Some(mean), Some(band)) = (r["mean_a"].as_f64(), r["noise_band"].as_f64()) {
        let drawn = v["band"][0].as_array().unwrap();
        assert!((drawn[0].as_f64().unwrap() - (mean - band)).abs() < 1e-9 && (drawn[1].as_f64().unwrap() - (mean + band)).abs() < 1e-9, "{drawn:?}");
    } else {
        panic!("the twin's readiness gives a comparison with a band: {r}");
    }
    b.screenshot("compare").await;

    b.close().await;
    s.close().await;
    drop(h);
}
