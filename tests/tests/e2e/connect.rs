//! End to end: connecting an account from inside the chat, on each path a client can take:
//! URL elicitation on 2025-11-25 (elicitation/create, then notifications/elicitation/complete),
//! the 2026-07-28 input_required round, the server's own browser, and the link as text; then what
//! a connected account changes (real data, refresh before expiry, the cache on a new login) and
//! `vitals-mcp forget`. The "browser" is the test (or `BROWSER=<the browser bin>`), the provider
//! is the twin, and every output is searched for the tokens and the client secret.
use crate::common;
use common::login::*;
use common::*;
use rmcp::model::*;
use rmcp::service::{ClientLifecycleMode, NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// A client with URL elicitation that, like a person, opens the link it is shown (or declines).
#[derive(Clone, Default)]
struct Person {
    decline: bool,
    /// (url, elicitationId) of every URL elicitation.
    shown: Arc<Mutex<Vec<(String, String)>>>,
    /// Ids of every notifications/elicitation/complete.
    completed: Arc<Mutex<Vec<String>>>,
    /// The page the callback answered.
    pages: Arc<Mutex<Vec<(u16, String)>>>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        ClientConfig::new(caps, Implementation::new("e2e-person", "0"))
    }

    async fn create_elicitation(&self, request: ElicitRequestParams, _: RequestContext<RoleClient>) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams { url, elicitation_id, .. } = request else { panic!("vitals never asks for anything through a form") };
        self.shown.lock().unwrap().push((url.clone(), elicitation_id));
        if self.decline {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        // "accept" means the user agreed to open it; the browser goes on its own.
        let pages = self.pages.clone();
        tokio::spawn(async move {
            let page = open_in_browser(&url).await;
            pages.lock().unwrap().push(page);
        });
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }

    async fn on_custom_notification(&self, n: CustomNotification, _: NotificationContext<RoleClient>) {
        if n.method == "notifications/elicitation/complete" {
            let id = n.params.as_ref().and_then(|p| p.get("elicitationId")).and_then(Value::as_str).unwrap_or_default();
            self.completed.lock().unwrap().push(id.to_string());
        }
    }
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
}

/// Real data: the twin's own records for the range.
async fn assert_real_daily_sleep<H: ClientHandler>(fx: &Fixture, s: &Session<H>) {
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "start": "2026-06-10", "end": "2026-06-12"})).await;
    assert_eq!(a["synthetic"], false, "{a}");
    assert!(a["notices"]["synthetic"].is_null());
    assert_eq!(keys(&a["data"]), expected_keys(&fx.twin, "daily_sleep", "2026-06-10", "2026-06-12"));
}

#[tokio::test(flavor = "multi_thread")]
async fn url_elicitation_on_2025_11_25_connects_and_says_complete() {
    let fx = Fixture::new("legacy").await;
    let person = Person::default();
    let s = fx.server(ClientLifecycleMode::Initialize, person.clone(), &[]).await;
    let before = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": "2026-06-10"})).await;
    assert_eq!(before["synthetic"], true, "sample data until an account is connected");

    let r = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(r["state"], "connected", "{r}");
    assert!(r["scopes"].as_array().unwrap().iter().any(|x| x == "heartrate"), "{r}");
    let shown = person.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1, "one link shown");
    let (url, id) = &shown[0];
    assert!(url.contains("code_challenge=") && url.contains("state=") && url.contains(&fx.twin.base_url()), "{url}");
    assert!(id.len() >= 16, "an unguessable elicitation id: {id}");
    // The notification is sent before the result, and the browser reads its page after the
    // callback answered, but both travel on their own: give them a moment.
    for _ in 0..100 {
        if !person.completed.lock().unwrap().is_empty() && !person.pages.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(person.completed.lock().unwrap().clone(), vec![id.clone()], "notifications/elicitation/complete names the same id");
    let pages = person.pages.lock().unwrap().clone();
    assert_eq!(pages[0].0, 200);
    assert!(pages[0].1.contains("Connected"), "the browser is told it worked: {}", pages[0].1);

    assert_real_daily_sleep(&fx, &s).await;
    let check = s.ok("vitals_check", json!({})).await;
    assert_eq!(check["providers"][0]["credential"], "oauth", "{check}");
    assert!(check["providers"][0]["token_store"].as_str().unwrap().starts_with("file "), "{check}");
    assert!(check["providers"][0]["redirect"].as_str().unwrap().contains(&fx.redirect), "{check}");
    let again = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(again["state"], "already_connected", "{again}");
    let log = s.close().await;
    let t = fx.stored().expect("the login was saved");
    for secret in [t.access.expose(), t.refresh.as_ref().unwrap().expose(), APP_SECRET] {
        assert!(!log.contains(secret) && !format!("{r}{check}{again}").contains(secret), "a secret leaked");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_2026_07_28_the_input_required_round_finishes_on_the_retry() {
    let fx = Fixture::new("modern").await;
    let person = Person::default();
    let s = fx.server(modern(), person.clone(), &[]).await;
    // rmcp's client answers the input request through `Person` and retries by itself.
    let r = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(r["state"], "connected", "{r}");
    let shown = person.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].1, "", "no elicitationId on 2026-07-28");
    assert!(person.completed.lock().unwrap().is_empty(), "and no complete notification");
    assert_real_daily_sleep(&fx, &s).await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_that_needs_the_account_connects_it_and_answers_with_real_data() {
    for (tag, mode) in [("q-legacy", ClientLifecycleMode::Initialize), ("q-modern", modern())] {
        let fx = Fixture::new(tag).await;
        let person = Person::default();
        let s = fx.server(mode, person.clone(), &[]).await;
        // The sandbox has no personal profile: this collection needs the user's account.
        let a = s.ok("vitals_query", json!({"collection": "oura.personal_info", "format": "records"})).await;
        assert_eq!(person.shown.lock().unwrap().len(), 1, "{tag}: the login was offered");
        assert!(a["notices"]["account_connected"].as_str().unwrap().contains("Connected Oura"), "{tag}: {}", a["notices"]);
        assert_eq!(a["synthetic"], false);
        assert_eq!(a["count"], 1, "{tag}: {a}");
        s.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_url_elicitation_the_server_opens_the_browser_itself_and_reports_progress() {
    let fx = Fixture::new("browser").await;
    let browser = env!("CARGO_BIN_EXE_browser");
    let watcher = Watcher::default();
    // A user who takes a few seconds to sign in.
    let s = fx.server(ClientLifecycleMode::Initialize, watcher.clone(), &[("VITALS_BROWSER", browser), ("VITALS_TEST_BROWSER_DELAY_MS", "2500")]).await;
    let mut params = CallToolRequestParams::new("vitals_connect").with_arguments(json!({"provider": "oura"}).as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"progressToken": "connect-1"})).unwrap());
    let r = s.client.call_tool(params).await.unwrap();
    let r = r.structured_content.unwrap();
    assert_eq!(r["state"], "connected", "{r}");
    let said = fx.browser_said();
    assert!(said.starts_with("200 ") && said.contains("Connected"), "the browser landed on the success page: {said}");
    let progress = watcher.progress.lock().unwrap().clone();
    assert!(!progress.is_empty() && progress[0].contains("waiting for the Oura login in the browser"), "progress while waiting: {progress:?}");
    assert_real_daily_sleep(&fx, &s).await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_browser_the_link_and_the_cli_command_come_back_and_the_login_still_completes() {
    let fx = Fixture::new("nobrowser").await;
    // No browser can be opened here (VITALS_BROWSER=none, as the harness sets it everywhere).
    let s = fx.server(ClientLifecycleMode::Initialize, (), &[]).await;
    let r = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(r["state"], "waiting_for_browser", "{r}");
    assert!(r["cli"].as_str().unwrap().contains("vitals-mcp auth oura"), "{r}");
    let url = r["url"].as_str().unwrap();
    assert!(url.contains("state=") && url.contains("code_challenge="), "{url}");
    // The user pastes the link into a browser later: the listener is still there.
    visit_and_read(&fx, &s, url).await;
    s.close().await;
}

/// A second call while no browser can be opened answers at once, as the first did: that no
/// browser opened (never that one did), with the same link and the terminal command. It does not
/// wait for a browser: the call sends no "waiting for the login in the browser" progress, which a
/// wait sends every two seconds of its budget (6 s here, which a wait would sit out).
#[tokio::test(flavor = "multi_thread")]
async fn a_second_call_without_a_browser_says_so_at_once_with_the_link() {
    let fx = Fixture::new("nobrowser2").await;
    let watcher = Watcher::default();
    let s = fx.server(ClientLifecycleMode::Initialize, watcher.clone(), &[("VITALS_CALL_BUDGET_S", "6")]).await;
    let first = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    let mut params = CallToolRequestParams::new("vitals_connect").with_arguments(json!({"provider": "oura"}).as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"progressToken": "connect-2"})).unwrap());
    let second = s.client.call_tool(params).await.unwrap().structured_content.unwrap();
    for r in [&first, &second] {
        assert_eq!(r["state"], "waiting_for_browser", "{r}");
        let said = r["message"].as_str().unwrap();
        assert!(said.contains("No browser could be opened") && !said.contains("was opened"), "{said}");
        assert!(r["cli"].as_str().unwrap().contains("vitals-mcp auth oura"), "{r}");
    }
    assert_eq!(first["url"], second["url"], "the second call joins the first login");
    let progress = watcher.progress.lock().unwrap().clone();
    assert!(progress.is_empty(), "no wait for a browser that never opened: {progress:?}");
    visit_and_read(&fx, &s, second["url"].as_str().unwrap()).await;
    s.close().await;
}

/// Open the login link as a browser would, wait for the login to be saved, read real data, close.
async fn visit_and_read<H: ClientHandler>(fx: &Fixture, s: &Session<H>, url: &str) {
    let (status, page) = open_in_browser(url).await;
    assert_eq!(status, 200, "{page}");
    for _ in 0..100 {
        if fx.stored().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_real_daily_sleep(fx, s).await;
}

/// Two logins started at once (a retry racing the first call, or the assistant asking twice) are
/// one login: the second finds the first under way and gets the same link, and one visit to it
/// connects the account.
#[tokio::test(flavor = "multi_thread")]
async fn two_logins_started_at_once_are_one_login() {
    let fx = Fixture::new("twice").await;
    let s = fx.server(ClientLifecycleMode::Initialize, (), &[("PATH", "/nonexistent")]).await;
    let ask = || s.ok("vitals_connect", json!({"provider": "oura"}));
    let (a, b) = tokio::join!(ask(), ask());
    assert_eq!(a["state"], "waiting_for_browser", "{a}");
    assert_eq!(b["state"], "waiting_for_browser", "{b}");
    assert_eq!(a["url"], b["url"], "one login, one link (one state, one listener)");
    visit_and_read(&fx, &s, a["url"].as_str().unwrap()).await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_link_connects_nothing_and_a_refused_consent_is_said() {
    let fx = Fixture::new("decline").await;
    let s = fx.server(ClientLifecycleMode::Initialize, Person { decline: true, ..Default::default() }, &[]).await;
    let e = s.err("vitals_connect", json!({"provider": "oura"})).await;
    assert!(e.contains("declined"), "{e}");
    assert!(fx.stored().is_none());
    let e = s.err("vitals_connect", json!({"provider": "fitbit"})).await;
    assert!(e.contains("`provider`") && e.contains("oura"), "a bad provider names the parameter: {e}");
    s.close().await;

    // The user refuses on the provider's page: the browser and the tool both say why.
    fx.twin.state.oauth.lock().unwrap().deny = true;
    let person = Person::default();
    let s = fx.server(ClientLifecycleMode::Initialize, person.clone(), &[]).await;
    let e = s.err("vitals_connect", json!({"provider": "oura"})).await;
    assert!(e.contains("refused") && e.contains("access_denied"), "{e}");
    // The browser reads its page on its own schedule.
    for _ in 0..100 {
        if !person.pages.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let pages = person.pages.lock().unwrap().clone();
    assert!(pages[0].1.contains("Not connected") && pages[0].0 == 400, "{pages:?}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_app_credentials_say_where_to_get_them_and_the_three_ways() {
    let fx = Fixture::with("noapp", false).await;
    let s = fx.server(ClientLifecycleMode::Initialize, Person::default(), &[]).await;
    let e = s.err("vitals_connect", json!({"provider": "oura"})).await;
    for needle in ["https://developer.ouraring.com", fx.redirect.as_str(), "extension's settings", "settings app", "vitals-mcp app oura"] {
        assert!(e.contains(needle), "missing {needle:?} in: {e}");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_about_to_expire_is_refreshed_before_the_first_request() {
    let fx = Fixture::new("expiring").await;
    fx.twin.state.oauth.lock().unwrap().expires_in = 30;
    let s = fx.server(ClientLifecycleMode::Initialize, Person::default(), &[]).await;
    assert_eq!(s.ok("vitals_connect", json!({"provider": "oura"})).await["state"], "connected");
    let first = fx.stored().unwrap();
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": "2026-06-10"})).await;
    assert!(a["notices"]["credential_refreshed"].as_str().unwrap().contains("about to expire"), "{}", a["notices"]);
    let after = fx.stored().unwrap();
    assert_ne!(after.access, first.access, "the new pair is saved");
    assert_eq!(after.login, first.login, "a refresh is the same login");
    let refreshes: Vec<_> = fx.twin.state.oauth.lock().unwrap().log.iter().filter(|(_, g, _)| g == "refresh_token").cloned().collect();
    assert_eq!(refreshes, vec![("new".to_string(), "refresh_token".to_string(), 200)], "exactly one refresh, before any request");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_login_empties_the_cache_of_the_previous_one() {
    let fx = Fixture::new("relogin").await;
    let s = fx.server(ClientLifecycleMode::Initialize, Person::default(), &[]).await;
    assert_eq!(s.ok("vitals_connect", json!({"provider": "oura"})).await["state"], "connected");
    let q = json!({"collection": "oura.daily_sleep", "start": "2026-06-01", "end": "2026-06-10"});
    s.ok("vitals_query", q.clone()).await;
    assert!(s.ok("vitals_query", q.clone()).await["notices"]["cached"].is_object(), "the second read is from memory");
    assert_eq!(s.ok("vitals_connect", json!({"provider": "oura", "again": true})).await["state"], "connected");
    let a = s.ok("vitals_query", q.clone()).await;
    assert!(a["notices"]["cache_cleared"].as_str().unwrap().contains("different Oura login"), "{}", a["notices"]);
    assert!(a["notices"]["cached"].is_null(), "nothing of the earlier login is served: {}", a["notices"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn forget_revokes_at_the_provider_and_deletes_the_local_tokens() {
    let fx = Fixture::new("forget").await;
    let s = fx.server(ClientLifecycleMode::Initialize, Person::default(), &[]).await;
    assert_eq!(s.ok("vitals_connect", json!({"provider": "oura"})).await["state"], "connected");
    let log = s.close().await;
    let t = fx.stored().unwrap();
    assert_eq!(data_status(&fx.twin, t.access.expose()).await, 200);

    let run = |args: &[&str]| {
        let mut c = bare_cmd();
        c.args(args).env("VITALS_TOKEN_STORE", "file").env("VITALS_LOG", "debug");
        for (k, v) in fx.env() {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        (o.status.code(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
    };
    let (code, out) = run(&["forget", "oura"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("access revoked at Oura (HTTP 200)") && out.contains("local tokens were deleted"), "{out}");
    assert!(fx.stored().is_none(), "the tokens are gone");
    assert_eq!(data_status(&fx.twin, t.access.expose()).await, 401, "and the provider no longer honours them");
    let (code, again) = run(&["forget"]);
    assert_eq!(code, Some(0));
    assert!(again.contains("nothing to forget"), "{again}");
    let (code, bad) = run(&["forget", "fitbit"]);
    assert_eq!(code, Some(2));
    assert!(bad.contains("`provider`"), "{bad}");
    assert!(fx.twin.requests().iter().all(|r| r.method == "GET"), "data requests are GETs");
    let everything = format!("{log}{out}{again}{bad}");
    for secret in [t.access.expose(), t.refresh.as_ref().unwrap().expose(), APP_SECRET] {
        assert!(!everything.contains(secret), "a secret leaked");
    }
}

/// A client that goes away while a login waits for its browser must not keep the server alive
/// (the listener's thread would otherwise hold the process for its 10 minutes).
#[tokio::test(flavor = "multi_thread")]
async fn the_server_exits_when_the_client_leaves_during_a_login() {
    use std::io::{BufRead, BufReader, Write};
    let fx = Fixture::new("leave").await;
    let mut c = vitals_cmd();
    c.env_clear().env("VITALS_BROWSER", "none").env("PATH", "/nonexistent").env("VITALS_TOKEN_STORE", "file").env("VITALS_OURA_BASE_URL", fx.twin.base_url());
    for (k, v) in fx.env() {
        c.env(k, v);
    }
    let mut child = c.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"leaver","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"vitals_connect","arguments":{"provider":"oura"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let mut answer = String::new();
    while !answer.contains("\"id\":2") {
        answer.clear();
        out.read_line(&mut answer).unwrap();
    }
    assert!(answer.contains("waiting_for_browser"), "{answer}");
    drop(stdin);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        // Generous: this is about not waiting for the 10-minute listener, not about speed.
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.is_some_and(|s| s.success()), "the server outlived its client");
}
