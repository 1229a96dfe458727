//! The front door (issue 37), tried as a new user would: the first call of a fresh process is
//! as honest as any later one (an export prepares the credential as a query does), the sample
//! data answers with no network, and no test starts a real browser whatever the machine has.
use crate::common;
use common::*;
use serde_json::json;

fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let dir = common::scratch().join(format!("vitals-e2e-front-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Garmin: the key in the environment has never been exchanged when the export is the first call.
#[tokio::test(flavor = "multi_thread")]
async fn a_garmin_export_as_the_first_call_exchanges_the_key_first() {
    let twin = twin().await;
    let dir = scratch_dir("garmin");
    let person = twin.state.garmin.lock().unwrap().cfg.person.clone();
    let day = (2..30).map(ago).find(|d| vitals::providers::garmin::sample::activity(&person, *d).is_some()).expect("an activity this month");
    let id = vitals::providers::garmin::sample::activity_id(day).to_string();
    let env = [
        ("VITALS_CONFIG_DIR", dir.join("config").display().to_string()),
        ("VITALS_GARMIN_BASE_URL", twin.mounted("garmin")),
        ("VITALS_GARMIN_API_KEY", vitals_twin::garmin::KEY.to_string()),
    ];
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let path = dir.join("first.fit");
    let r = s.ok("vitals_export", json!({"provider": "garmin", "id": id, "format": "fit", "path": path.display().to_string()})).await;
    assert_eq!(r["synthetic"], false, "{r}");
    assert!(r["notes"].to_string().contains("key was exchanged for an access token before the request"), "said: {r}");
    assert_eq!(&std::fs::read(&path).unwrap()[8..12], b".FIT");
    assert_eq!(twin.state.garmin.lock().unwrap().exchanges.iter().filter(|s| **s == 200).count(), 1, "one exchange, before the file");
    s.close().await;
}

/// Polar: a login whose registration is still owed registers before the file, as a query would.
#[tokio::test(flavor = "multi_thread")]
async fn a_polar_export_as_the_first_call_finishes_the_registration_first() {
    let twin = twin().await;
    let dir = scratch_dir("polar");
    twin.polar(|p| p.cfg.person.every_day = true);
    let tokens = {
        let mut polar = twin.state.polar.lock().unwrap();
        let tokens = polar.stored_login("polar-first");
        // The login finished but the registration did not: the twin forgets the user.
        polar.registered.remove(&vitals_twin::polar::USER_ID);
        vitals::accounts::Tokens { setup_pending: Some("registering with Polar".into()), ..tokens }
    };
    let config = dir.join("config");
    vitals::accounts::TokenStore::file(&config).save("polar", &tokens).unwrap();
    let b = twin.mounted("polar");
    let env =
        [("VITALS_CONFIG_DIR", config.display().to_string()), ("VITALS_POLAR_BASE_URL", b.clone()), ("VITALS_POLAR_TOKEN_URL", format!("{b}/v2/oauth2/token"))];
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let id = vitals::providers::polar::sample::id_of(ago(2));
    let path = dir.join("first.fit");
    let r = s.ok("vitals_export", json!({"provider": "polar", "id": id, "format": "fit", "path": path.display().to_string()})).await;
    assert_eq!(r["synthetic"], false, "{r}");
    assert!(r["notes"].to_string().contains("registering with Polar"), "the step after the login is said: {r}");
    assert!(std::fs::metadata(&path).unwrap().len() > 0);
    assert!(vitals::accounts::TokenStore::file(&config).load("polar").unwrap().unwrap().setup_pending.is_none(), "the step is done and saved");
    s.close().await;
}

/// `vitals-mcp auth polar --manual` against the twin: the address on stdout, the landing address
/// pasted back. Returns the exit code and what it said.
async fn polar_terminal_login(twin: &Twin, dir: &std::path::Path) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader, Write};
    let b = twin.mounted("polar");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = std::process::Command::new(server_bin())
        .args(["auth", "polar", "--manual"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("VITALS_BROWSER", "none")
        .env("VITALS_CONFIG_DIR", dir)
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_POLAR_BASE_URL", &b)
        .env("VITALS_POLAR_TOKEN_URL", format!("{b}/v2/oauth2/token"))
        .env("VITALS_POLAR_AUTHORIZE_URL", format!("{b}/oauth2/authorization"))
        .env("VITALS_POLAR_CLIENT_ID", vitals_twin::polar::CLIENT_ID)
        .env("VITALS_POLAR_CLIENT_SECRET", vitals_twin::polar::CLIENT_SECRET)
        .env("VITALS_POLAR_REDIRECT_URI", format!("http://localhost:{port}/callback"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let r = no_redirects().get(url.trim()).send().await.unwrap();
    let landing = r.headers()["location"].to_str().unwrap().to_string();
    writeln!(child.stdin.take().unwrap(), "{landing}").unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string())
}

/// A login saved that cannot read yet says so in its exit status as well as in words; the same
/// login once Polar's consents are accepted exits 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_login_that_cannot_read_yet_exits_one() {
    let twin = twin().await;
    twin.polar(|p| p.cfg.consents = false);
    let dir = scratch_dir("exit-pending");
    let (code, said) = polar_terminal_login(&twin, &dir).await;
    assert!(said.contains("Not ready yet") && said.contains("consents"), "{said}");
    assert_eq!(code, Some(1), "saved, but not able to read: {said}");
    twin.polar(|p| p.cfg.consents = true);
    let dir = scratch_dir("exit-ready");
    let (code, said) = polar_terminal_login(&twin, &dir).await;
    assert_eq!(code, Some(0), "{said}");
    // A provider that is not one: nothing done, 2.
    let o = std::process::Command::new(server_bin()).args(["auth", "fitbit"]).env("VITALS_BROWSER", "none").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// Programs a desktop opens web pages with, stood in for by one that notes it was started.
const BROWSERS: &[&str] = &[
    // Asked first for the desktop's default browser (a real one would name, say, chromium.desktop,
    // whose Exec line is an absolute path no PATH entry can stand in for).
    "xdg-settings",
    "xdg-open",
    "x-www-browser",
    "www-browser",
    "sensible-browser",
    "gnome-open",
    "kde-open",
    "gio",
    "firefox",
    "chromium",
    "chromium-browser",
    "google-chrome",
];

/// A folder of fake browsers that each write `started` when run, and a PATH with it first.
fn browsers_on_path(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let started = dir.join("started");
    for b in BROWSERS {
        let f = bin.join(b);
        std::fs::write(&f, format!("#!/bin/sh\necho \"{b} $*\" >> '{}'\n", started.display())).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (started, format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
}

/// On a machine with a browser on PATH (and a display), no test starts it: the harness sets
/// VITALS_BROWSER=none wherever the server runs, and a login answers at once with its link. The
/// same server with the switch unset does start the browser: the check is not vacuous.
#[tokio::test(flavor = "multi_thread")]
async fn no_test_starts_a_real_browser_even_with_one_on_path() {
    let fx = crate::common::login::Fixture::new("no-browser").await;
    let dir = scratch_dir("browsers");
    let (started, path) = browsers_on_path(&dir);
    let env = [("PATH", path.as_str()), ("DISPLAY", ":0"), ("BROWSER", "")];
    let s = fx.server(rmcp::service::ClientLifecycleMode::Initialize, (), &env).await;
    let t0 = std::time::Instant::now();
    let r = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(r["state"], "waiting_for_browser", "{r}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(10), "answered at once, with the link: {:?}", t0.elapsed());
    assert!(r["message"].as_str().unwrap().contains(r["url"].as_str().unwrap()), "{r}");
    s.close().await;
    assert!(!started.exists(), "a browser was started: {}", std::fs::read_to_string(&started).unwrap_or_default());

    // Unset, the system's browser opens, as it does for a person.
    let open = [("PATH", path.as_str()), ("DISPLAY", ":0"), ("BROWSER", ""), ("VITALS_BROWSER", ""), ("VITALS_CALL_BUDGET_S", "2")];
    let s = fx.server(rmcp::service::ClientLifecycleMode::Initialize, (), &open).await;
    s.ok("vitals_connect", json!({"provider": "oura", "again": true})).await;
    s.close().await;
    let mut said = String::new();
    // Up to 10 s: on a loaded machine (a browser test beside it) the stand-in can take its time.
    for _ in 0..500 {
        said = std::fs::read_to_string(&started).unwrap_or_default();
        if !said.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(BROWSERS.iter().any(|b| said.starts_with(b)), "with the switch unset the system's browser is used: {said:?}");
}

/// Every test that runs the server sets the switch: through `vitals_cmd` / `server_command`, or
/// the in-process suites' own environment. A new way to spawn it without the switch fails here.
#[test]
fn every_test_spawns_the_server_with_the_browser_switch() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![];
    for dir in ["tests/tests", "tests/tests/e2e", "auth-app/tests"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "rs") {
                files.push(e.path());
            }
        }
    }
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.display().to_string();
        // This file names what it looks for.
        if name.ends_with("common/mod.rs") || name.ends_with("front_door.rs") {
            continue;
        }
        assert!(!text.contains("Command::new(server_bin())"), "{name} spawns the server without vitals_cmd()");
        let clears = text.matches(".env_clear()").count();
        assert!(clears == 0 || text.matches("VITALS_BROWSER").count() >= clears, "{name} clears the environment of a command without setting VITALS_BROWSER");
        let in_process = text.contains("Vitals::new(engine).serve") || text.contains("Lab::start");
        assert!(!in_process || text.contains("VITALS_BROWSER"), "{name} runs the server in process without VITALS_BROWSER");
        assert!(!text.contains("(\"BROWSER\""), "{name} relies on BROWSER, which the browser crate falls back from");
    }
}

/// README's run command on a machine without a network: every provider answers from its built-in
/// sample (Oura's too, in Oura's own format, through Oura's decoder), and `--check` exits 0.
#[test]
fn the_run_command_passes_with_no_network() {
    let dir = scratch_dir("offline");
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dead = format!("http://127.0.0.1:{dead}");
    let mut c = vitals_cmd();
    c.arg("--check").env_clear().env("VITALS_BROWSER", "none").env("PATH", std::env::var("PATH").unwrap_or_default());
    c.env("VITALS_CONFIG_DIR", &dir).env("VITALS_TOKEN_STORE", "file");
    // Every host a provider could be reached at is one nothing listens on: no network at all.
    for var in [
        "VITALS_OURA_BASE_URL",
        "VITALS_WITHINGS_BASE_URL",
        "VITALS_POLAR_BASE_URL",
        "VITALS_GARMIN_BASE_URL",
        "VITALS_GARMIN_CONNECT_API_URL",
        "VITALS_WHOOP_BASE_URL",
    ] {
        c.env(var, &dead);
    }
    let o = c.output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    assert_eq!(o.status.code(), Some(0), "{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    for p in report["providers"].as_array().unwrap() {
        let expected = if p["provider"] == "garmin-connect" { "not_connected" } else { "sample_data" };
        assert_eq!(p["answered_by"], expected, "{p}");
    }
    let oura = &report["providers"][0];
    assert_eq!(oura["provider"], "oura");
    assert!(oura["api_detail"].as_str().unwrap().contains("oura.daily_sleep: 1 record(s)"), "{oura}");
}
