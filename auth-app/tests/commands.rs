//! The command layer through Tauri's mock runtime (no display): save, status, connect against the
//! twin's authorize and token endpoints, revoke, forget, and the error paths. The test plays the
//! user's browser; the environment points the server library at the twin and a private folder.
mod common;
use common::Window;
use serde_json::{json, Value};
use std::sync::{Mutex, MutexGuard, OnceLock};
use tauri::test::MockRuntime;

const SECRET: &str = "twin-client-secret";

struct Lab {
    rt: tokio::runtime::Runtime,
    twin: vitals_twin::Twin,
    dir: std::path::PathBuf,
}

/// One twin and one environment for the whole binary (the environment is process-wide), and a
/// lock so the tests take turns with it.
fn lab() -> (&'static Lab, MutexGuard<'static, ()>) {
    static LAB: OnceLock<Lab> = OnceLock::new();
    static TURN: Mutex<()> = Mutex::new(());
    let lab = LAB.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        let twin = rt.block_on(vitals_twin::start(Default::default(), 0)).unwrap();
        let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (oura_cb, withings_cb) = (format!("http://localhost:{}/callback/", free()), format!("http://localhost:{}/callback", free()));
        twin.state.oauth.lock().unwrap().apps[0].redirect_uri = oura_cb.clone();
        twin.withings(|w| w.oauth.apps[0].redirect_uris = vec![withings_cb.clone()]);
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vitals-settings-cmd-{}", std::process::id()));
        let b = twin.base_url();
        let env = [
            ("VITALS_CONFIG_DIR", dir.display().to_string()),
            ("VITALS_TOKEN_STORE", "file".into()),
            ("VITALS_OURA_AUTHORIZE_URL", format!("{b}/oauth/authorize")),
            ("VITALS_OURA_TOKEN_URL", format!("{b}/oauth/v2/ext/oauth-token")),
            ("VITALS_OURA_TOKEN_URL_LEGACY", format!("{b}/oauth/token")),
            ("VITALS_OURA_REVOKE_URL", format!("{b}/oauth/revoke")),
            ("VITALS_OURA_REDIRECT_URI", oura_cb),
            ("VITALS_WITHINGS_AUTHORIZE_URL", format!("{b}/oauth2_user/authorize2")),
            // Withings is "down": nothing listens on the discard port.
            ("VITALS_WITHINGS_TOKEN_URL", "http://127.0.0.1:9/v2/oauth2".into()),
            ("VITALS_WITHINGS_REDIRECT_URI", withings_cb),
            // The "browser" the app opens is `true`: it starts, does nothing, and the test follows
            // the link itself (so `browser_opened` is still a real answer).
            ("VITALS_BROWSER", "true".into()),
        ];
        for (k, v) in env {
            // SAFETY: set once, before any test of this binary reads the environment.
            unsafe { std::env::set_var(k, v) };
        }
        for k in
            ["VITALS_OURA_CLIENT_ID", "VITALS_OURA_CLIENT_SECRET", "VITALS_WITHINGS_CLIENT_ID", "VITALS_WITHINGS_CLIENT_SECRET", "OURA_PAT", "VITALS_SANDBOX"]
        {
            unsafe { std::env::remove_var(k) };
        }
        Lab { rt, twin, dir }
    });
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let _ = std::fs::remove_dir_all(&lab.dir);
    (lab, turn)
}

fn app() -> (tauri::App<MockRuntime>, Window) {
    common::app(vitals_settings::configure)
}

/// Invoke a command as the window does; Ok(value) or Err(the error text).
fn call(wv: &Window, cmd: &str, args: Value) -> Result<Value, String> {
    let out = common::invoke(wv, cmd, args);
    // Whatever a command answers, the saved secret is not in it.
    assert!(!format!("{out:?}").contains(SECRET), "{cmd} sent the secret to the window");
    out
}

fn provider<'a>(all: &'a Value, name: &str) -> &'a Value {
    all.as_array().unwrap().iter().find(|p| p["provider"] == name).unwrap()
}

/// What the user's browser does with the login link: the provider consents, the loopback callback answers.
fn follow(lab: &Lab, url: &str) -> (u16, String) {
    let url = url.to_string();
    lab.rt.block_on(async move {
        let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let r = c.get(&url).send().await.unwrap();
        let to = r.headers()["location"].to_str().unwrap().replace("//localhost:", "//127.0.0.1:");
        let page = c.get(to).send().await.unwrap();
        (page.status().as_u16(), page.text().await.unwrap())
    })
}

/// Start a login, follow it in a "browser" thread, and wait for the outcome.
fn connect(lab: &'static Lab, wv: &Window, p: &str) -> (Result<Value, String>, (u16, String)) {
    let started = call(wv, "connect_start", json!({"provider": p})).unwrap();
    assert_eq!(started["browser_opened"], true);
    let url = started["url"].as_str().unwrap().to_string();
    let browser = std::thread::spawn(move || follow(lab, &url));
    let done = call(wv, "connect_wait", json!({"provider": p}));
    (done, browser.join().unwrap())
}

#[test]
fn providers_come_from_the_server_and_start_not_set_up() {
    let (_lab, _turn) = lab();
    let (_app, wv) = app();
    let all = call(&wv, "providers", json!({})).unwrap();
    let names: Vec<&str> = all.as_array().unwrap().iter().map(|p| p["provider"].as_str().unwrap()).collect();
    let registry: Vec<&str> = vitals::providers::specs().filter(|s| s.connection.connects()).map(|s| s.name).collect();
    assert_eq!(names, registry, "every provider of the registry that connects, in its order");
    let gc = provider(&all, "garmin-connect");
    assert_eq!((gc["connection"].as_str(), gc["import_from"].as_str()), (Some("session"), Some("~/.garminconnect")), "{gc}");
    assert!(gc["import_offer"].as_str().unwrap().starts_with("Use tokens from another Garmin tool"), "{gc}");
    assert!(gc["caution"].as_str().unwrap().contains("may stop working without notice"), "{gc}");
    assert_eq!(provider(&all, "polar")["revokes_at_provider"], false, "Polar access ends in Polar Flow; vitals never sends its DELETE");
    let o = provider(&all, "oura");
    assert_eq!(o["state"], "not_set_up");
    assert!(o["redirect"].as_str().unwrap().starts_with("http://localhost:"));
    assert_eq!(o["portal"], "https://developer.ouraring.com");
    assert_eq!(o["revokes_at_provider"], true);
    assert_eq!(provider(&all, "withings")["revokes_at_provider"], false);
    // Nothing set up: nothing to connect with, revoke or forget.
    assert_eq!((o["can_connect"].as_bool(), o["can_revoke"].as_bool(), o["can_forget_app"].as_bool()), (Some(false), Some(false), Some(false)), "{o}");
}

/// Each state enables exactly the buttons that can act, and says the expiry once, relative and local.
#[test]
fn each_state_enables_only_what_can_act() {
    let (lab, _turn) = lab();
    let (_app, wv) = app();
    let flags = |v: &Value| {
        (
            v["state"].as_str().unwrap().to_string(),
            v["can_connect"].as_bool().unwrap(),
            v["can_revoke"].as_bool().unwrap(),
            v["can_forget_app"].as_bool().unwrap(),
        )
    };
    let saved = call(&wv, "save_app", json!({"provider": "oura", "clientId": "twin-client", "clientSecret": SECRET})).unwrap();
    assert_eq!(flags(&saved["state"]), ("app_saved".into(), true, false, true), "app credentials only");
    let (done, _) = connect(lab, &wv, "oura");
    let st = done.unwrap()["state"].clone();
    assert_eq!(flags(&st), ("connected".into(), true, true, true));
    let summary = st["summary"].as_str().unwrap();
    assert!(summary.starts_with("Connected. Access renews on its own; the current token expires in "), "{summary}");
    assert!(!summary.contains(st["expires_at"].as_str().unwrap()) && !summary.contains('Z'), "no raw UTC timestamp: {summary}");
    // The login file is damaged: an error in plain words, and nothing offered that would act on it.
    std::fs::write(lab.dir.join("tokens.json"), "not json").unwrap();
    let e = provider(&call(&wv, "providers", json!({})).unwrap(), "oura").clone();
    assert_eq!(flags(&e), ("error".into(), false, false, true), "{e}");
    assert!(e["summary"].as_str().unwrap().starts_with("The saved login could not be read"), "{e}");
}

#[test]
fn an_instant_is_said_relative_and_in_local_time() {
    let now = jiff::Timestamp::from_second(1_780_000_000).unwrap();
    let w = vitals_settings::commands::when(now.as_second() + 16 * 3600 + 120, now);
    assert!(w.starts_with("in 16 hours (") && w.ends_with(')'), "{w}");
    assert!(vitals_settings::commands::when(now.as_second() - 3 * 86_400, now).starts_with("3 days ago ("));
    assert!(vitals_settings::commands::when(now.as_second() + 30, now).starts_with("in less than a minute ("));
    assert!(vitals_settings::commands::when(now.as_second() + 60, now).starts_with("in 1 minute ("));
}

#[test]
fn save_connect_status_revoke_and_forget_against_the_twin() {
    let (lab, _turn) = lab();
    let (_app, wv) = app();
    let saved = call(&wv, "save_app", json!({"provider": "oura", "clientId": "twin-client", "clientSecret": SECRET})).unwrap();
    assert_eq!(saved["state"]["state"], "app_saved");
    assert_eq!(saved["state"]["secret_saved"], true);
    assert!(saved["message"].as_str().unwrap().contains("18 characters"), "{saved}");
    // Saving the ID again with no secret keeps the saved secret.
    let again = call(&wv, "save_app", json!({"provider": "oura", "clientId": " twin-client ", "clientSecret": null})).unwrap();
    assert_eq!(again["state"]["client_id"], "twin-client");

    let (done, (status, page)) = connect(lab, &wv, "oura");
    let done = done.unwrap();
    assert_eq!((status, page.contains("Oura is connected")), (200, true), "{page}");
    assert!(done["message"].as_str().unwrap().starts_with("Connected Oura"), "{done}");
    let st = provider(&call(&wv, "providers", json!({})).unwrap(), "oura").clone();
    assert_eq!(st["state"], "connected");
    assert!(st["scopes"].as_array().unwrap().iter().any(|s| s == "heartrate"));
    assert!(st["expires_at"].is_string() && st["summary"].as_str().unwrap().contains("renews on its own"), "{st}");
    let access = vitals::accounts::TokenStore::file(&lab.dir).load("oura").unwrap().unwrap().access;

    let r = call(&wv, "revoke", json!({"provider": "oura"})).unwrap();
    assert!(r["message"].as_str().unwrap().contains("access revoked at Oura"), "{r}");
    assert_eq!(r["state"]["state"], "app_saved", "the app credentials stay; the login is gone");
    assert!(vitals::accounts::TokenStore::file(&lab.dir).load("oura").unwrap().is_none());
    assert!(!lab.twin.state.oauth.lock().unwrap().access_valid(access.expose(), jiff::Timestamp::now()), "revoked at the provider too");

    let f = call(&wv, "forget_app", json!({"provider": "oura"})).unwrap();
    assert!(f["message"].as_str().unwrap().starts_with("Deleted the Oura client ID and secret"), "{f}");
    assert_eq!(f["state"]["state"], "not_set_up");
    let f = call(&wv, "forget_app", json!({"provider": "oura"})).unwrap();
    assert!(f["message"].as_str().unwrap().starts_with("No Oura app credentials were saved"));
}

#[test]
fn empty_fields_a_wrong_secret_and_a_provider_that_is_down_say_what_to_do() {
    let (lab, _turn) = lab();
    let (_app, wv) = app();
    let e = call(&wv, "save_app", json!({"provider": "oura", "clientId": "  ", "clientSecret": SECRET})).unwrap_err();
    assert!(e.contains("client ID is empty") && e.contains("developer.ouraring.com"), "{e}");
    let e = call(&wv, "save_app", json!({"provider": "oura", "clientId": "twin-client", "clientSecret": ""})).unwrap_err();
    assert!(e.contains("client secret is empty"), "{e}");
    let e = call(&wv, "save_app", json!({"provider": "fitbit", "clientId": "x", "clientSecret": "y"})).unwrap_err();
    assert!(e.contains("`provider`") && e.contains("oura, withings"), "{e}");
    let e = call(&wv, "connect_start", json!({"provider": "oura"})).unwrap_err();
    assert!(e.contains("No Oura app credentials are set") && e.contains("vitals-mcp app oura"), "{e}");

    // A wrong secret: the provider refuses the exchange, and the window says so.
    call(&wv, "save_app", json!({"provider": "oura", "clientId": "twin-client", "clientSecret": "not-the-secret"})).unwrap();
    let (done, (status, _)) = connect(lab, &wv, "oura");
    let e = done.unwrap_err();
    assert!(e.starts_with("Not connected") && e.contains("invalid_client"), "{e}");
    assert_eq!(status, 400, "the browser was told it did not work");
    assert_eq!(provider(&call(&wv, "providers", json!({})).unwrap(), "oura")["state"], "app_saved");

    // Withings is down (its token endpoint does not answer).
    call(&wv, "save_app", json!({"provider": "withings", "clientId": "withings-twin-client", "clientSecret": "withings-twin-secret"})).unwrap();
    let (done, _) = connect(lab, &wv, "withings");
    let e = done.unwrap_err();
    assert!(e.contains("could not be reached"), "{e}");
    let r = call(&wv, "revoke", json!({"provider": "withings"})).unwrap();
    assert!(r["message"].as_str().unwrap().contains("no login was stored"), "{r}");
}
