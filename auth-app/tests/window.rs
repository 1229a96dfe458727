//! The real window, end to end: `vitals-settings` under Xvfb, driven through `tauri-driver` and
//! WebKitWebDriver with plain W3C WebDriver requests. Type an ID and a secret, save, see the state
//! change, connect against the twin (the stand-in browser signs in), screenshot the connected
//! window, revoke. Needs Xvfb and WebKitWebDriver (Debian: xvfb, webkit2gtk-driver; `.ci/run`
//! installs them); `tauri-driver` is installed into `target/tools` on first use.
#![cfg(target_os = "linux")]
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SECRET: &str = "twin-client-secret";
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(root().join("target"))
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// `tauri-driver` from `target/tools`, installed there (from crates.io) the first time.
fn tauri_driver() -> PathBuf {
    let bin = target().join("tools/bin/tauri-driver");
    if !bin.exists() {
        let st = cargo().args(["install", "--quiet", "tauri-driver", "--version", "^2", "--locked", "--root"]).arg(target().join("tools")).status().unwrap();
        assert!(st.success(), "cargo install tauri-driver failed");
    }
    bin
}

/// The stand-in browser of the server's login tests (it signs in at the twin and lands on the callback).
/// As the workspace's `cargo test` built it; built here only when stale (`vitals_twin::built`).
fn browser() -> PathBuf {
    vitals_twin::built::debug_binary(&root(), "vitals-twin", "browser", &["server", "tests/src"])
}

fn need(program: &str, package: &str) {
    let found = Command::new("sh").args(["-c", &format!("command -v {program}")]).output().map(|o| o.status.success()).unwrap_or(false);
    assert!(found, "{program} is needed for the window test (Debian package {package}; .ci/run installs it)");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Processes started in their own group, ended together (WebKit leaves helpers behind otherwise).
struct Group(Vec<Child>);

impl Drop for Group {
    fn drop(&mut self) {
        for c in &mut self.0 {
            // `--` matters: procps' kill reads `-17265` as options and signals every process (-1).
            let _ = Command::new("kill").args(["-TERM", "--", &format!("-{}", c.id())]).status();
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn_group(cmd: &mut Command) -> Child {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
}

struct Driver {
    http: reqwest::Client,
    base: String,
    session: String,
}

impl Driver {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut r = self.http.request(method, url);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let v: Value = r.send().await.unwrap().json().await.unwrap();
        assert!(v["value"].get("error").is_none(), "{path}: {v}");
        v["value"].clone()
    }
    async fn find(&self, css: &str) -> String {
        let v = self.send(reqwest::Method::POST, "/element", Some(json!({"using": "css selector", "value": css}))).await;
        v[ELEMENT].as_str().unwrap().to_string()
    }
    /// The element's text; a card re-rendered between finding and reading is found again.
    async fn text(&self, css: &str) -> String {
        for _ in 0..20 {
            if let Some(t) = self.read_text(css).await {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{css} could not be read");
    }
    async fn type_in(&self, css: &str, text: &str) {
        let e = self.find(css).await;
        self.send(reqwest::Method::POST, &format!("/element/{e}/value"), Some(json!({"text": text}))).await;
    }
    async fn clear(&self, css: &str) {
        let e = self.find(css).await;
        self.send(reqwest::Method::POST, &format!("/element/{e}/clear"), Some(json!({}))).await;
    }
    async fn enabled(&self, css: &str) -> bool {
        let e = self.find(css).await;
        self.send(reqwest::Method::GET, &format!("/element/{e}/enabled"), None).await.as_bool().unwrap()
    }
    /// Which of these buttons can be pressed, in order.
    async fn enabled_all(&self, css: &[&str]) -> Vec<bool> {
        let mut v = vec![];
        for c in css {
            v.push(self.enabled(c).await);
        }
        v
    }
    async fn click(&self, css: &str) {
        let e = self.find(css).await;
        self.send(reqwest::Method::POST, &format!("/element/{e}/click"), Some(json!({}))).await;
    }
    /// Wait until the element's text satisfies `ok`; the text it had at the end otherwise.
    async fn wait_text(&self, css: &str, secs: u64, ok: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let t = self.try_text(css).await;
            if ok(&t) || Instant::now() > end {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }
    async fn try_text(&self, css: &str) -> String {
        self.read_text(css).await.unwrap_or_default()
    }
    /// Find and read in one go; None when the element is missing or went stale in between.
    async fn read_text(&self, css: &str) -> Option<String> {
        let url = format!("{}/session/{}", self.base, self.session);
        let v: Value = self.http.post(format!("{url}/element")).json(&json!({"using": "css selector", "value": css})).send().await.ok()?.json().await.ok()?;
        let e = v["value"][ELEMENT].as_str()?;
        let t: Value = self.http.get(format!("{url}/element/{e}/text")).send().await.ok()?.json().await.ok()?;
        t["value"].as_str().map(str::to_string)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn type_save_connect_and_revoke_in_the_real_window() {
    need("Xvfb", "xvfb");
    need("WebKitWebDriver", "webkit2gtk-driver");
    need("dbus-run-session", "dbus");
    let (driver_bin, browser) = (tauri_driver(), browser());
    let app = PathBuf::from(env!("CARGO_BIN_EXE_vitals-settings"));

    // The provider: the twin, with the app registered at the redirect a user has (Oura's default,
    // so the screenshot shows what a user sees), or at a free port when something holds that one.
    let twin = vitals_twin::start(Default::default(), 0).await.unwrap();
    let default = "http://localhost:9876/callback/";
    let default_free = std::net::TcpListener::bind("127.0.0.1:9876").is_ok();
    let redirect = if default_free { default.to_string() } else { format!("http://localhost:{}/callback/", free_port()) };
    assert!(default_free || std::env::var_os("VITALS_UPDATE_SCREENSHOT").is_none(), "port 9876 is taken: the screenshot would show another redirect");
    twin.state.oauth.lock().unwrap().apps[0].redirect_uri = redirect.clone();
    // A home of its own: the window shows the default folder (~/.config/vitals), as a user's does.
    let home = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vitals-settings-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let dir = home.join(".config/vitals");
    let b = twin.base_url();

    // A display nobody holds (an X server leaves /tmp/.X<n>-lock while it runs).
    let first = 90 + std::process::id() % 400;
    let n = (first..first + 400).find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists()).expect("a free X display");
    let display = format!(":{n}");
    let mut group = Group(vec![spawn_group(Command::new("Xvfb").args([display.as_str(), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"]))]);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (port, native) = (free_port(), free_port());
    let mut cmd = Command::new("dbus-run-session");
    cmd.arg("--").arg(&driver_bin).args(["--port", &port.to_string(), "--native-port", &native.to_string()]);
    cmd.env("DISPLAY", &display)
        .env("NO_AT_BRIDGE", "1")
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("VITALS_CONFIG_DIR")
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_OURA_AUTHORIZE_URL", format!("{b}/oauth/authorize"))
        .env("VITALS_OURA_TOKEN_URL", format!("{b}/oauth/v2/ext/oauth-token"))
        .env("VITALS_OURA_TOKEN_URL_LEGACY", format!("{b}/oauth/token"))
        .env("VITALS_OURA_REVOKE_URL", format!("{b}/oauth/revoke"))
        .env("VITALS_BROWSER", &browser)
        .env_remove("VITALS_OURA_CLIENT_ID")
        .env_remove("VITALS_OURA_CLIENT_SECRET")
        .env_remove("VITALS_OURA_REDIRECT_URI");
    if !default_free {
        cmd.env("VITALS_OURA_REDIRECT_URI", &redirect);
    }
    group.0.push(spawn_group(&mut cmd));

    // Both the driver and WebKitWebDriver behind it must accept connections before a session.
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let end = Instant::now() + Duration::from_secs(30);
    let session = loop {
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "wry", "tauri:options": {"application": app}}}});
        if let Ok(r) = http.post(format!("{base}/session")).json(&caps).send().await {
            let v: Value = r.json().await.unwrap_or_default();
            if let Some(id) = v["value"]["sessionId"].as_str() {
                break id.to_string();
            }
        }
        assert!(Instant::now() < end, "no WebDriver session within 30 s");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let d = Driver { http, base, session };

    let buttons = ["#oura-save", "#oura-connect", "#oura-revoke", "#oura-forget"];
    assert_eq!(d.wait_text("#oura-state", 20, |t| !t.is_empty()).await, "not set up");
    assert!(d.text("#pickup").await.contains("next request"));
    assert_eq!(d.text("#oura-redirect").await, redirect);
    // Nothing set up: nothing can be pressed until an ID and a secret are typed.
    assert_eq!(d.enabled_all(&buttons).await, [false, false, false, false], "nothing set up");
    d.type_in("#oura-client-id", "twin-client").await;
    assert!(!d.enabled("#oura-save").await, "an ID without a secret cannot be saved");
    d.type_in("#oura-client-secret", SECRET).await;
    assert!(d.enabled("#oura-save").await, "an ID and a secret can be saved");
    d.click("#oura-save").await;
    assert_eq!(d.wait_text("#oura-state", 10, |t| t == "app credentials saved").await, "app credentials saved");
    // App credentials only: connect and forget them; there is no login to revoke.
    // Save again would change nothing until a new secret or another ID is typed.
    assert_eq!(d.enabled_all(&buttons).await, [false, true, false, true], "app credentials saved");
    assert!(d.text("#provider-oura").await.contains("~/.config/vitals/settings.json"), "paths are shown from the home folder");
    assert!(d.text("#oura-message").await.starts_with("Saved the Oura client ID and secret"));
    let source = d.send(reqwest::Method::GET, "/source", None).await;
    assert!(!source.as_str().unwrap_or_default().contains(SECRET), "the saved secret is not in the page");

    d.click("#oura-connect").await;
    let state = d.wait_text("#oura-state", 30, |t| t == "connected").await;
    assert_eq!(state, "connected", "message: {}", d.text("#oura-message").await);
    assert!(d.text("#oura-message").await.starts_with("Connected Oura"));
    assert!(d.text("#oura-scopes").await.contains("heartrate"));
    assert_eq!(d.enabled_all(&buttons).await, [false, true, true, true], "connected");
    // The expiry is said once, relative and in local time, never as a raw UTC timestamp.
    let card = d.text("#provider-oura").await;
    assert_eq!(card.matches("expires").count(), 1, "{card}");
    assert!(card.contains("renews on its own; the current token expires in ") && !card.contains(":00Z") && !card.contains("Z;"), "{card}");

    // The screenshot of the connected window, for the README.
    let png = d.send(reqwest::Method::GET, "/screenshot", None).await;
    let png = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, png.as_str().unwrap()).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    std::fs::write(target().join("settings-connected.png"), &png).unwrap();
    if std::env::var_os("VITALS_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(root().join("docs/settings-connected.png"), &png).unwrap();
    }

    d.click("#oura-revoke").await;
    d.click("#oura-confirm-yes").await;
    assert_eq!(d.wait_text("#oura-state", 15, |t| t == "app credentials saved").await, "app credentials saved");
    assert!(d.text("#oura-message").await.contains("access revoked at Oura"));
    assert!(vitals::accounts::TokenStore::file(&dir).load("oura").unwrap().is_none());
    assert_eq!(d.enabled_all(&buttons).await, [false, true, false, true], "revoked: the app credentials stay");

    // An error: the saved login is damaged. Saving again re-reads the state, which says so in plain
    // words, and offers nothing that would act on the damaged login.
    std::fs::write(dir.join("tokens.json"), "not json").unwrap();
    d.type_in("#oura-client-secret", SECRET).await;
    d.click("#oura-save").await;
    assert_eq!(d.wait_text("#oura-state", 10, |t| t == "error").await, "error");
    assert!(d
        .text("#oura-summary")
        .await
        .contains("is not valid JSON (cut short or edited), so no login in it can be trusted; move it aside and connect again"));
    assert_eq!(d.enabled_all(&buttons[1..]).await, [false, false, true], "error");

    // Apple Health connects with a file: a path that is no file is refused, naming it; an export is
    // remembered where it is (its path saved, the file never copied) and the card says so.
    let missing = home.join("no-such-export.zip");
    d.type_in("#apple-health-path", &missing.display().to_string()).await;
    d.click("#apple-health-fileform-send").await;
    let m = d.wait_text("#apple-health-message", 10, |t| t.contains("cannot be read")).await;
    assert!(m.contains(&missing.display().to_string()), "the refusal names the file: {m}");
    assert_eq!(d.text("#apple-health-state").await, "not set up", "nothing chosen");
    let export = home.join("export.zip");
    let plan = vitals::providers::apple_health::generate::Plan::new(jiff::civil::date(2026, 1, 1), 7, "America/Chicago");
    vitals::providers::apple_health::generate::write_zip(&plan, "export.xml", std::fs::File::create(&export).unwrap()).unwrap();
    d.clear("#apple-health-path").await;
    d.type_in("#apple-health-path", &export.display().to_string()).await;
    d.click("#apple-health-fileform-send").await;
    assert_eq!(d.wait_text("#apple-health-state", 10, |t| t == "connected").await, "connected", "{}", d.text("#apple-health-message").await);
    let abs = std::fs::canonicalize(&export).unwrap().display().to_string();
    assert!(d.text("#apple-health-message").await.contains(&format!("reads {abs} from now on, in place")));
    assert!(d.text("#provider-apple-health").await.contains("the file is never copied"));
    assert!(std::fs::read_to_string(dir.join("files.json")).unwrap().contains(&abs), "the path is what is saved");
    let copies =
        std::fs::read_dir(&dir).unwrap().filter_map(Result::ok).filter(|e| e.metadata().is_ok_and(|m| m.len() >= std::fs::metadata(&export).unwrap().len()));
    assert_eq!(copies.count(), 0, "nothing the size of the export is in the config folder");
    d.send(reqwest::Method::DELETE, "", None).await;
    drop(group);
}
