//! Connecting Withings through the accounts machinery: the in-chat login (the server opens the
//! browser) and the terminal `--manual` login, against the twin's authorize page and its
//! `requesttoken` (envelope, comma scopes, no PKCE, 30-second single-use codes).
use crate::common;
use common::*;
use serde_json::json;
use std::io::{BufRead, Write};

/// A twin whose Withings app has a free loopback redirect, and the environment for it (no login yet).
async fn fixture(tag: &str) -> (Twin, std::path::PathBuf, Vec<(String, String)>) {
    let twin = twin().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let redirect = format!("http://localhost:{port}/callback");
    twin.withings(|w| w.oauth.apps[0].redirect_uris = vec![redirect.clone()]);
    let dir = common::scratch().join(format!("vitals-e2e-wlogin-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let b = twin.base_url();
    let env = vec![
        ("VITALS_CONFIG_DIR".into(), dir.display().to_string()),
        ("VITALS_TOKEN_STORE".into(), "file".into()),
        ("VITALS_WITHINGS_BASE_URL".into(), b.clone()),
        ("VITALS_WITHINGS_TOKEN_URL".into(), format!("{b}/v2/oauth2")),
        ("VITALS_WITHINGS_AUTHORIZE_URL".into(), format!("{b}/oauth2_user/authorize2")),
        ("VITALS_WITHINGS_REDIRECT_URI".into(), redirect),
        ("VITALS_WITHINGS_CLIENT_ID".into(), WITHINGS_APP_ID.into()),
        ("VITALS_WITHINGS_CLIENT_SECRET".into(), WITHINGS_APP_SECRET.into()),
        ("VITALS_TEST_BROWSER_LOG".into(), dir.join("browser.log").display().to_string()),
    ];
    (twin, dir, env)
}

fn stored(dir: &std::path::Path) -> Option<vitals::accounts::Tokens> {
    vitals::accounts::TokenStore::file(dir).load("withings").unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn connecting_in_the_chat_opens_the_browser_and_then_reads_the_real_account() {
    let (twin, dir, env) = fixture("chat").await;
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    pairs.push(("VITALS_BROWSER", env!("CARGO_BIN_EXE_browser")));
    let s = connect(&twin, true, &pairs).await;
    let before = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10"})).await;
    assert_eq!(before["synthetic"], true);
    let r = s.ok("vitals_connect", json!({"provider": "withings"})).await;
    assert_eq!(r["state"], "connected", "{r}");
    assert_eq!(r["scopes"], json!(["user.info", "user.metrics", "user.activity"]), "comma-separated scopes, split");
    let said = common::login::browser_said(&dir.join("browser.log"));
    assert!(said.starts_with("200 ") && said.contains("Withings is connected"), "{said}");
    let after = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10"})).await;
    assert_eq!(after["synthetic"], false, "the next query reads the account, no restart");
    assert_eq!(twin.state.withings.lock().unwrap().oauth.log, vec![("authorization_code".to_string(), 0)]);
    let again = s.ok("vitals_connect", json!({"provider": "withings"})).await;
    assert_eq!(again["state"], "already_connected");
    let t = stored(&dir).expect("the login was saved");
    assert!(t.refresh.is_some() && t.expires_at.is_some());
    s.close().await;
}

/// Run `vitals-mcp auth withings --manual`: read the address it prints, "open" it, paste the landing
/// address back (after `delay`), and return the exit status, the address and what it said.
async fn manual_login(twin: &Twin, env: &[(String, String)], before_paste: impl FnOnce()) -> (bool, String, String) {
    let mut child = vitals_cmd()
        .args(["auth", "withings", "--manual"])
        .envs(env.iter().cloned())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    out.read_line(&mut url).unwrap();
    let r = no_redirects().get(url.trim()).send().await.unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());
    let landing = r.headers()["location"].to_str().unwrap().to_string();
    before_paste();
    writeln!(child.stdin.take().unwrap(), "{landing}").unwrap();
    let o = child.wait_with_output().unwrap();
    let _ = twin;
    (o.status.success(), url.trim().to_string(), String::from_utf8_lossy(&o.stderr).to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_login_sends_comma_scopes_without_pkce_and_reads_either_userid() {
    let (twin, dir, env) = fixture("manual").await;
    let (ok, url, said) = manual_login(&twin, &env, || {}).await;
    assert!(ok, "{said}");
    assert!(url.contains("scope=user.info%2Cuser.metrics%2Cuser.activity"), "{url}");
    assert!(!url.contains("code_challenge"), "Withings documents no PKCE: {url}");
    assert!(url.contains("state="));
    assert_eq!(stored(&dir).unwrap().scopes, ["user.info", "user.metrics", "user.activity"]);
    // The spec's integer `userid` is accepted as well as the published examples' string.
    twin.withings(|w| w.oauth.userid_as_string = false);
    let first = stored(&dir).unwrap();
    let (ok, _, said) = manual_login(&twin, &env, || {}).await;
    assert!(ok, "{said}");
    assert_ne!(stored(&dir).unwrap().access, first.access, "a new login replaced the old pair");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_code_older_than_thirty_seconds_is_refused_and_nothing_is_saved() {
    let (twin, dir, env) = fixture("late").await;
    // The user pastes the address 31 seconds after Withings issued the code.
    let late = || twin.withings(|w| w.cfg.now = Some(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(31)));
    let (ok, _, said) = manual_login(&twin, &env, late).await;
    assert!(!ok);
    assert!(said.contains("withings_status_503"), "Withings' refusal is named: {said}");
    assert!(stored(&dir).is_none());
    assert!(!said.contains(WITHINGS_APP_SECRET));
}
