//! End to end: connecting an account from a terminal against the twin's OAuth endpoints.
use crate::common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use vitals_twin::oura::oauth::Portal;
use vitals_twin::wire::{Fault, Rule};

const APP_SECRET: &str = "twin-client-secret";

fn config_dir(tag: &str) -> std::path::PathBuf {
    let d = common::scratch().join(format!("vitals-e2e-acc-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn cli(twin: &Twin, dir: &std::path::Path, args: &[&str]) -> Command {
    let mut c = bare_cmd();
    c.args(args)
        .env("VITALS_CONFIG_DIR", dir)
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_OURA_AUTHORIZE_URL", format!("{}/oauth/authorize", twin.base_url()))
        .env("VITALS_OURA_TOKEN_URL", format!("{}/oauth/v2/ext/oauth-token", twin.base_url()))
        .env("VITALS_OURA_TOKEN_URL_LEGACY", format!("{}/oauth/token", twin.base_url()))
        // A "browser" that opens nothing: the test follows the printed address itself.
        .env("VITALS_BROWSER", "none")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// What a browser does with the login address: the twin consents and redirects; the Location.
async fn consent(url: &str) -> String {
    let r = no_redirects().get(url).send().await.unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());
    r.headers()["location"].to_str().unwrap().to_string()
}

fn save_app(twin: &Twin, dir: &std::path::Path) {
    let mut c = cli(twin, dir, &["app", "oura", "--client-id", "twin-client"]).spawn().unwrap();
    writeln!(c.stdin.take().unwrap(), "{APP_SECRET}").unwrap();
    let o = c.wait_with_output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{all}");
    assert!(!all.contains(APP_SECRET), "the secret is never echoed");
}

/// `auth oura --manual`: the address on stdout, the landing address pasted on stdin.
/// A login made in the terminal into `dir`, and a server reading with it (no `OURA_PAT`: the saved
/// OAuth login is the credential) at the twin's token endpoints.
async fn logged_in_server(twin: &Twin, dir: &std::path::Path) -> Session {
    save_app(twin, dir);
    assert!(manual_login(twin, dir).await.0);
    let dir_s = dir.to_str().unwrap().to_string();
    let token_url = format!("{}/oauth/v2/ext/oauth-token", twin.base_url());
    let legacy_url = format!("{}/oauth/token", twin.base_url());
    connect(twin, true, &[("VITALS_CONFIG_DIR", &dir_s), ("VITALS_OURA_TOKEN_URL", &token_url), ("VITALS_OURA_TOKEN_URL_LEGACY", &legacy_url)]).await
}

async fn manual_login(twin: &Twin, dir: &std::path::Path) -> (bool, String) {
    let mut child = cli(twin, dir, &["auth", "oura", "--manual"]).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    out.read_line(&mut url).unwrap();
    assert!(url.contains("code_challenge=") && url.contains("state=") && url.contains("redirect_uri="), "{url}");
    let landing = consent(url.trim()).await;
    writeln!(child.stdin.take().unwrap(), "{landing}").unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stderr).to_string())
}

fn stored_access(dir: &std::path::Path) -> String {
    vitals::accounts::TokenStore::file(dir).load("oura").unwrap().expect("tokens saved").access.expose().to_string()
}

async fn reads_data(twin: &Twin, access: &str) -> bool {
    data_status(twin, access).await == 200
}

#[tokio::test(flavor = "multi_thread")]
async fn a_manual_login_saves_tokens_that_read_data() {
    let twin = twin().await;
    let dir = config_dir("manual");
    save_app(&twin, &dir);
    let (ok, err) = manual_login(&twin, &dir).await;
    assert!(ok, "{err}");
    assert!(err.contains("Connected Oura") && err.contains("daily heartrate"), "scopes without the extapi: prefix: {err}");
    assert!(reads_data(&twin, &stored_access(&dir)).await);
    let log = twin.state.oauth.lock().unwrap().log.clone();
    assert_eq!(log, vec![("new".to_string(), "authorization_code".to_string(), 200)], "the new identity provider first, once");
    assert!(!err.contains(APP_SECRET) && !err.contains(&stored_access(&dir)), "no secret in the output");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_portal_app_falls_back_to_the_legacy_endpoint() {
    let twin = twin().await;
    {
        let mut o = twin.state.oauth.lock().unwrap();
        o.apps[0].portal = Portal::Legacy;
        o.new_idp_rejects_legacy_apps = true;
    }
    let dir = config_dir("legacy");
    save_app(&twin, &dir);
    let (ok, err) = manual_login(&twin, &dir).await;
    assert!(ok, "{err}");
    let log = twin.state.oauth.lock().unwrap().log.clone();
    assert_eq!(log.iter().map(|(e, _, s)| (e.as_str(), *s)).collect::<Vec<_>>(), [("new", 401), ("legacy", 200)]);
    assert!(reads_data(&twin, &stored_access(&dir)).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_browser_login_returns_to_a_one_use_loopback_listener() {
    let twin = twin().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let redirect = format!("http://localhost:{port}/callback/");
    twin.state.oauth.lock().unwrap().apps[0].redirect_uri = redirect.clone();
    let dir = config_dir("browser");
    save_app(&twin, &dir);
    let mut child = cli(&twin, &dir, &["auth", "oura"]).env("VITALS_OURA_REDIRECT_URI", &redirect).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    out.read_line(&mut url).unwrap();
    let landing = consent(url.trim()).await;
    assert!(landing.starts_with(&redirect), "{landing}");
    let page = reqwest::get(landing.replace("localhost", "127.0.0.1")).await.unwrap().text().await.unwrap();
    assert!(page.contains("Connected"), "{page}");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(reads_data(&twin, &stored_access(&dir)).await);
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(), "the listener is gone after one use");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_app_credentials_the_error_says_where_to_get_them() {
    let twin = twin().await;
    let dir = config_dir("none");
    let o = cli(&twin, &dir, &["auth", "oura", "--manual"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    for needle in ["https://developer.ouraring.com", "http://localhost:9876/callback/", "settings app", "vitals-mcp app oura", "VITALS_OURA_CLIENT_ID"] {
        assert!(e.contains(needle), "missing {needle:?} in: {e}");
    }
    let o = cli(&twin, &dir, &["auth", "fitbit"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("`provider`"), "a bad provider names the parameter");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_reads_with_the_saved_login_and_refreshes_it_on_401() {
    let twin = twin().await;
    let dir = config_dir("server");
    let s = logged_in_server(&twin, &dir).await;
    let check = s.ok("vitals_check", serde_json::json!({})).await;
    assert_eq!(check["providers"][0]["credential"], "oauth", "{check}");
    assert_eq!(check["providers"][0]["state"], "connected");
    let a = s.ok("vitals_query", serde_json::json!({"collection": "oura.daily_sleep", "start": "2026-06-10", "end": "2026-06-12"})).await;
    assert_eq!(a["synthetic"], false);
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "daily_sleep", "2026-06-10", "2026-06-12"));

    let before = stored_access(&dir);
    twin.state.oauth.lock().unwrap().expire_access_tokens();
    let a = s.ok("vitals_query", serde_json::json!({"collection": "oura.heartrate", "start": "2026-06-10", "end": "2026-06-11", "max_chars": 2_000_000})).await;
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "heartrate", "2026-06-10", "2026-06-11"), "complete after the refresh");
    assert!(a["notices"]["credential_refreshed"].is_string(), "{}", a["notices"]);
    assert_ne!(stored_access(&dir), before, "the rotated pair was saved");
    let refreshes = twin.state.oauth.lock().unwrap().log.iter().filter(|(_, g, s)| g == "refresh_token" && *s == 200).count();
    assert_eq!(refreshes, 1, "concurrent windows share one refresh");
    let out = s.close().await;
    assert!(!out.contains(&stored_access(&dir)) && !out.contains(APP_SECRET), "no secret in the server's log");
}

/// The token endpoint answering 429 with `Retry-After` `after_s` to the next `count` token requests.
fn token_limited(twin: &Twin, count: usize, after_s: u64) {
    twin.wire(vec![Rule::token(1, count, Fault::RateLimit { retry_after_s: Some(after_s) })]);
}

/// A login whose code exchange is limited for a second waits as the 429 said and asks the same
/// endpoint again; one limited for an hour ends at once and says when to try again (it used to be
/// "the token endpoint answered HTTP 429 (down or busy)", then the other endpoint asked at once).
#[tokio::test(flavor = "multi_thread")]
async fn a_login_limited_by_the_token_endpoint_waits_a_moment_or_says_when_to_try_again() {
    let twin = twin().await;
    let dir = config_dir("limited");
    save_app(&twin, &dir);
    token_limited(&twin, 1, 1);
    let (ok, err) = manual_login(&twin, &dir).await;
    assert!(ok, "{err}");
    assert_eq!(twin.wire_fired(), [1]);
    let log = twin.state.oauth.lock().unwrap().log.clone();
    assert_eq!(log, vec![("new".to_string(), "authorization_code".to_string(), 200)], "the same endpoint, asked again after the wait");

    let dir = config_dir("limited-long");
    save_app(&twin, &dir);
    token_limited(&twin, 100, 3600);
    let (ok, err) = manual_login(&twin, &dir).await;
    assert!(!ok && err.contains("429 (too many requests)") && err.contains("try again in 3600 s"), "{err}");
    assert_eq!(twin.wire_fired(), [1], "asked once: neither again at once nor at the other endpoint");
}

/// A read whose token was turned away and whose refresh is limited: for a second, waited and the
/// answer whole; for an hour, cut with `continue_from` and when to come back, never an auth error.
#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_limited_by_the_token_endpoint_is_waited_or_cuts_the_answer_with_when_to_come_back() {
    let twin = twin().await;
    let dir = config_dir("refresh-limited");
    let s = logged_in_server(&twin, &dir).await;
    let ask = |start: &str, end: &str| serde_json::json!({"collection": "oura.daily_sleep", "start": start, "end": end});

    twin.state.oauth.lock().unwrap().expire_access_tokens();
    token_limited(&twin, 2, 1);
    let a = s.ok("vitals_query", ask("2026-06-10", "2026-06-12")).await;
    assert!(a["notices"]["truncated"].is_null() && a["notices"]["credential_refreshed"].is_string(), "{}", a["notices"]);
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "daily_sleep", "2026-06-10", "2026-06-12"));
    assert_eq!(twin.wire_fired(), [2]);

    twin.state.oauth.lock().unwrap().expire_access_tokens();
    token_limited(&twin, 100, 3600);
    let a = s.ok("vitals_query", ask("2026-06-13", "2026-06-15")).await;
    let t = &a["notices"]["truncated"];
    assert!(t["continue_from"].is_string() && t["cause"] == "rate_limited", "{t}");
    let reason = t["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("limited the renewal") && reason.contains("try again in 3600 s") && reason.contains("wait 3600 s"), "{reason}");
    assert_eq!(twin.wire_fired(), [1], "asked once");
    s.close().await;
}

/// `vitals-mcp settings` starts the settings app installed beside it, and says how to get it when there is none.
#[cfg(unix)]
#[test]
fn settings_starts_the_app_beside_the_server_or_says_how_to_get_it() {
    let dir = common::scratch().join(format!("vitals-settings-launch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The executables are written by `cp` and `sh`, never by this process: a child that another
    // test thread forks meanwhile would inherit our write descriptor, and exec would fail with
    // "Text file busy".
    let server = dir.join("vitals-mcp");
    assert!(std::process::Command::new("cp").arg(server_bin()).arg(&server).status().unwrap().success());
    let run = || std::process::Command::new(&server).arg("settings").env("PATH", "/usr/bin:/bin").output().unwrap();
    let o = run();
    let said = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2));
    assert!(said.contains("not installed") && said.contains("cargo build --release -p vitals-settings"), "{said}");
    let marker = dir.join("started");
    let app = dir.join("vitals-settings");
    let script = format!("printf '#!/bin/sh\\ntouch %s\\n' '{}' > '{}' && chmod 755 '{}'", marker.display(), app.display(), app.display());
    assert!(std::process::Command::new("sh").arg("-c").arg(script).status().unwrap().success());
    let o = run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for _ in 0..100 {
        if marker.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(marker.exists(), "the app beside the server was started");
}
