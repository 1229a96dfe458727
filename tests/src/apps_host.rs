//! A host of MCP Apps views in a real browser, for the views' test (`tests/tests/e2e/apps_browser.rs`)
//! and their bench (`cargo xtask bench`): a host page built on the `@modelcontextprotocol/ext-apps`
//! package's own host bridge (`tests/browser/host.js`, bundled with esbuild into `target/e2e-apps`),
//! served on loopback, driven in headless Chromium (Debian's, through its ChromeDriver) over
//! WebDriver's HTTP API.
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const EXT_APPS: &str = "@modelcontextprotocol/ext-apps@2.0.4";
const CLIENT: &str = "@modelcontextprotocol/client@2.4.0";
const ZOD: &str = "zod@4.6.7";
const ESBUILD: &str = "esbuild@0.28.2";

pub fn target() -> PathBuf {
    std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// The host page's bundle, built once into target/e2e-apps (npm packages installed beside it).
pub fn host_bundle() -> PathBuf {
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
pub async fn serve_host(bundle: PathBuf) -> String {
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

/// A web host's sandbox proxy (`tests/browser/sandbox.html`) on an origin of its own; its URL.
pub async fn serve_sandbox() -> String {
    use axum::{http::header, routing::get, Router};
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("browser/sandbox.html")).unwrap();
    let app = Router::new().route("/sandbox.html", get(move || async move { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/sandbox.html", listener.local_addr().unwrap().port());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A ChromeDriver session of headless Chromium, spoken to over WebDriver's HTTP API.
pub struct Browser {
    http: reqwest::Client,
    base: String,
    session: String,
    _driver: Driver,
}

impl Browser {
    /// A session of headless Chromium with its profile in `profile`, for the views: the host page
    /// and `vitals-mcp` are two loopback origins, so web security is off (the server checks Origin).
    pub async fn start(profile: &Path) -> Browser {
        Self::start_with(profile, (760, 1400), false).await
    }

    /// A session of a `window` (width, height) size, with the browser's web security on or off.
    pub async fn start_with(profile: &Path, window: (u32, u32), web_security: bool) -> Browser {
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
        let mut args = vec!["--headless=new".to_string(), "--no-sandbox".into(), "--disable-gpu".into(), format!("--window-size={},{}", window.0, window.1)];
        if !web_security {
            args.push("--disable-web-security".into());
        }
        args.push(format!("--user-data-dir={}", profile.display()));
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": { "binary": "/usr/bin/chromium", "args": args }}}});
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

    pub async fn open(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", json!({ "url": url })).await;
    }

    /// `script` run in the host page (`arguments` as given); its return value.
    pub async fn run(&self, script: &str, args: Value) -> Value {
        self.cmd(reqwest::Method::POST, "/execute/sync", json!({ "script": script, "args": args })).await
    }

    /// Until the view says it has drawn (or the host page failed); the view's document facts.
    pub async fn drawn(&self, after_calls: usize) -> Value {
        self.drawn_when(after_calls, |_| true).await
    }

    /// As [`Browser::drawn`], once `ready` holds of the view's facts too.
    pub async fn drawn_when(&self, after_calls: usize, ready: impl Fn(&Value) -> bool) -> Value {
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
        panic!("the view never drew (wanted {after_calls} calls): host at {}, calls {}, lines {}, text {}", v["stage"], v["calls"], v["lines"], v["text"]);
    }

    /// The element `css` matches first (WebDriver's reference to it).
    async fn element(&self, css: &str) -> Value {
        self.cmd(reqwest::Method::POST, "/element", json!({"using": "css selector", "value": css})).await
    }

    fn element_id(e: &Value) -> String {
        e["element-6066-11e4-a52e-4f735466cecf"].as_str().expect("an element reference").to_string()
    }

    /// Click the element `css` matches (a button submits its form; a link navigates).
    pub async fn click(&self, css: &str) {
        let id = Self::element_id(&self.element(css).await);
        self.cmd(reqwest::Method::POST, &format!("/element/{id}/click"), json!({})).await;
    }

    /// Type `text` into the field `css` matches.
    pub async fn type_into(&self, css: &str, text: &str) {
        let id = Self::element_id(&self.element(css).await);
        self.cmd(reqwest::Method::POST, &format!("/element/{id}/value"), json!({ "text": text })).await;
    }

    /// The text of the element `css` matches.
    pub async fn text_of(&self, css: &str) -> String {
        let id = Self::element_id(&self.element(css).await);
        self.cmd(reqwest::Method::GET, &format!("/element/{id}/text"), Value::Null).await.as_str().unwrap_or_default().to_string()
    }

    /// The current page's address and its HTML as the browser holds it.
    pub async fn url(&self) -> String {
        self.cmd(reqwest::Method::GET, "/url", Value::Null).await.as_str().unwrap_or_default().to_string()
    }

    pub async fn source(&self) -> String {
        self.cmd(reqwest::Method::GET, "/source", Value::Null).await.as_str().unwrap_or_default().to_string()
    }

    /// `script` run in the document of the frame reached through each iframe matched by `path` in
    /// turn (WebDriver reaches a cross-origin frame, which the page itself cannot); then back to the top.
    pub async fn run_in_frames(&self, path: &[&str], script: &str) -> Value {
        for css in path {
            let e = self.cmd(reqwest::Method::POST, "/element", json!({"using": "css selector", "value": css})).await;
            self.cmd(reqwest::Method::POST, "/frame", json!({ "id": e })).await;
        }
        let v = self.cmd(reqwest::Method::POST, "/execute/sync", json!({ "script": script, "args": [] })).await;
        self.cmd(reqwest::Method::POST, "/frame", json!({ "id": null })).await;
        v
    }

    /// Until `ready` holds of the host page's facts (for a view out of the page's reach).
    pub async fn until(&self, ready: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..300 {
            let v = self.run(VIEW_FACTS, json!([0])).await;
            assert!(v["errors"].as_array().unwrap().is_empty(), "the host page failed: {}", v["errors"]);
            if ready(&v) {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let v = self.run(VIEW_FACTS, json!([0])).await;
        panic!("the host never got there: host at {}, calls {}, sizes {}", v["stage"], v["calls"], v["sizes"]);
    }

    pub async fn screenshot(&self, name: &str) {
        let png = self.cmd(reqwest::Method::GET, "/screenshot", Value::Null).await;
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap()).unwrap();
        let dir = target().join("e2e-apps/screens");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), bytes).unwrap();
    }

    pub async fn close(self) {
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

/// What the view's document shows, read from the host page through the same-origin iframe; drawn
/// once the view said so and its drawing was painted.
const VIEW_FACTS: &str = r#"
const h = window.__host || { calls: [], errors: ["no host"] };
const f = document.getElementById("view");
const d = f && f.contentDocument;
const main = d && d.getElementById("view");
const all = (sel, fn) => d ? [...d.querySelectorAll(sel)].map(fn) : [];
const stageMin = {};
for (const r of (d ? d.querySelectorAll("rect[data-stage]") : [])) stageMin[r.dataset.stage] = (stageMin[r.dataset.stage] || 0) + parseFloat(r.dataset.min);
return {
  errors: h.errors, calls: h.calls, tools: h.tools, result: h.result, stage: h.stage, timing: h.timing, sizes: h.sizes || [],
  drawn: !!(main && main.dataset.drawn === "1" && h.calls.length >= arguments[0] && h.timing && h.timing.drawn),
  lines: all("polyline[data-series]", (e) => ({ series: e.dataset.series, points: +e.dataset.points })),
  stageMin,
  headline: all(".headline [data-k]", (e) => [e.dataset.k, e.querySelector("b").textContent]),
  sample: all("[data-sample]", (e) => e.textContent).length,
  cut: all("[data-cut]", (e) => e.dataset.cut),
  band: all("rect[data-band]", (e) => e.dataset.band.split(",").map(Number)),
  zoomed: !!(d && [...d.querySelectorAll("section.series h2")].some((e) => e.textContent.includes("(zoomed)"))),
  counts: all("[data-count]", (e) => ({ count: +e.dataset.count, resolution: e.dataset.resolution })),
  sparks: all("svg[data-metric]", (e) => ({ metric: e.dataset.metric, points: +e.dataset.points })),
  traces: all("[data-trace]", (e) => ({ what: e.dataset.trace, samples: +e.dataset.samples, points: +e.querySelector("polyline").dataset.points })),
  laps: all("tr[data-lap]", (e) => +e.dataset.seconds),
  zones: all("rect[data-zone]", (e) => +e.dataset.seconds),
  // The frame's document can be there before its body is (a view still loading): no colour yet.
  background: d && d.body ? getComputedStyle(d.body).backgroundColor : null,
  text: main ? main.innerText.slice(0, 2000) : null,
};
"#;

/// The host page of `tool`'s view, loading it through the sandbox proxy at `proxy` as a web host does.
pub fn page_via_proxy(origin: &str, mcp: &str, tool: &str, args: Value, proxy: &str) -> String {
    let mut u = url::Url::parse(&page(origin, mcp, tool, args, "light")).unwrap();
    u.query_pairs_mut().append_pair("proxy", proxy);
    u.to_string()
}

pub fn page(origin: &str, mcp: &str, tool: &str, args: Value, theme: &str) -> String {
    let mut u = url::Url::parse(&format!("{origin}/")).unwrap();
    u.query_pairs_mut().append_pair("mcp", mcp).append_pair("tool", tool).append_pair("args", &args.to_string()).append_pair("theme", theme);
    u.to_string()
}
