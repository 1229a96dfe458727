//! The settings app's commands for a provider of each connection kind, built in the test crate
//! (`vitals_twin::kinds`): each row says its kind, and the commands that kind needs connect it (a
//! key saved and checked, a session login with its one-time code, an import, a browser login with
//! HTTP Basic and a registration step), then revoke it. Nothing in the app names these providers.
mod common;
use common::Window;
use serde_json::{json, Value};
use std::sync::OnceLock;
use tauri::test::MockRuntime;
use vitals_twin::kinds::{self, Lab};

fn lab() -> &'static Lab {
    static LAB: OnceLock<Lab> = OnceLock::new();
    // The "browser" the app opens does nothing; the test follows the link itself.
    LAB.get_or_init(|| Lab::start("settings-kinds", &[("VITALS_BROWSER", "none")]))
}

fn app() -> (tauri::App<MockRuntime>, Window) {
    common::app(|b| vitals_settings::configure_with(b, kinds::ALL.to_vec()))
}

/// Invoke a command as the window does; Ok(value) or Err(the error text). No answer carries a
/// secret that was typed or issued.
fn call(wv: &Window, cmd: &str, args: Value) -> Result<Value, String> {
    let out = common::invoke(wv, cmd, args);
    let said = format!("{out:?}");
    let issued: Vec<String> = lab().api.book.lock().unwrap().tokens.keys().cloned().collect();
    for s in [kinds::CLIENT_SECRET, kinds::GOOD_KEY, kinds::PASSWORD, kinds::CODE].iter().map(|s| s.to_string()).chain(issued) {
        assert!(!said.contains(&s), "{cmd} sent a secret to the window");
    }
    out
}

fn row(wv: &Window, name: &str) -> Value {
    call(wv, "providers", json!({})).unwrap().as_array().unwrap().iter().find(|p| p["provider"] == name).unwrap().clone()
}

#[test]
fn each_row_follows_its_connection_kind_and_each_kind_connects_and_revokes() {
    let lab = lab();
    let (_app, wv) = app();
    let all = call(&wv, "providers", json!({})).unwrap();
    let rows: Vec<(&str, &str, &str)> =
        all.as_array().unwrap().iter().map(|p| (p["provider"].as_str().unwrap(), p["connection"].as_str().unwrap(), p["state"].as_str().unwrap())).collect();
    assert_eq!(
        rows,
        [
            ("kinds_oauth", "oauth", "app_saved"),
            ("kinds_key", "api_key", "not_set_up"),
            ("kinds_session", "session", "not_set_up"),
            ("kinds_import", "import", "not_set_up")
        ],
        "every provider that can be connected, with its kind; sample-only ones have no row"
    );
    assert_eq!(row(&wv, "kinds_session")["import_from"], "~/.kinds-tool");
    assert_eq!(row(&wv, "kinds_session")["import_offer"], "Use tokens from the kinds tool (the kinds tool)");
    assert!(row(&wv, "kinds_session")["caution"].as_str().unwrap().contains("private login"));
    assert_eq!(row(&wv, "kinds_key")["portal"], "https://kinds.invalid/keys");
    let e = call(&wv, "connect_start", json!({"provider": "kinds_none"})).unwrap_err();
    assert!(e.contains("is not a provider that can be connected"), "{e}");
    let e = call(&wv, "save_app", json!({"provider": "kinds_key", "clientId": "x", "clientSecret": "y"})).unwrap_err();
    assert!(e.contains("connects another way"), "{e}");

    // A key: a wrong one is refused and not saved; the right one is saved with its expiry.
    let e = call(&wv, "save_key", json!({"provider": "kinds_key", "key": "KINDS-KEY-WRONG-0000000000", "days": 30})).unwrap_err();
    assert!(e.contains("refused the key") && e.contains("nothing was saved"), "{e}");
    assert_eq!(row(&wv, "kinds_key")["state"], "not_set_up");
    let d = call(&wv, "save_key", json!({"provider": "kinds_key", "key": kinds::GOOD_KEY, "days": 30})).unwrap();
    assert_eq!(d["state"]["state"], "connected", "{d}");
    assert!(d["state"]["key_expires_at"].is_string() && d["state"]["summary"].as_str().unwrap().contains("The key itself expires"), "{d}");

    // A session: email and password, then the one-time code the provider sent.
    let e = call(&wv, "session_login", json!({"provider": "kinds_session", "email": kinds::EMAIL, "password": "wrong"})).unwrap_err();
    assert!(e.contains("wrong email or password"), "{e}");
    let d = call(&wv, "session_login", json!({"provider": "kinds_session", "email": kinds::EMAIL, "password": kinds::PASSWORD})).unwrap();
    assert_eq!(d["state"]["state"], "needs_code", "{d}");
    assert!(d["message"].as_str().unwrap().contains("a code was sent"), "{d}");
    let d = call(&wv, "session_code", json!({"provider": "kinds_session", "code": kinds::CODE})).unwrap();
    assert_eq!(d["state"]["state"], "connected", "{d}");
    let e = call(&wv, "session_code", json!({"provider": "kinds_session", "code": kinds::CODE})).unwrap_err();
    assert!(e.contains("No Kinds Session sign-in is waiting"), "{e}");

    // An import from a folder the user names.
    let folder = lab.dir.join("tool");
    std::fs::create_dir_all(&folder).unwrap();
    let token = "kinds-imported-settings-abcdefghijklmnop";
    lab.api.book.lock().unwrap().tokens.insert(token.into(), "import");
    std::fs::write(folder.join("oauth2_token.json"), json!({"access_token": token}).to_string()).unwrap();
    let d = call(&wv, "import", json!({"provider": "kinds_import", "folder": folder.display().to_string()})).unwrap();
    assert_eq!(d["state"]["state"], "connected", "{d}");

    // A browser login: HTTP Basic, then the registration step (consents accepted this time).
    lab.api.book.lock().unwrap().consents_accepted = true;
    let started = call(&wv, "connect_start", json!({"provider": "kinds_oauth"})).unwrap();
    let url = started["url"].as_str().unwrap().to_string();
    let browser = std::thread::spawn(move || lab.rt.block_on(kinds::person(&url, Default::default())));
    let d = call(&wv, "connect_wait", json!({"provider": "kinds_oauth"})).unwrap();
    assert!(browser.join().unwrap()[0].1.contains("Kinds OAuth is connected"));
    assert_eq!(d["state"]["state"], "connected", "{d}");
    assert!(!d["message"].as_str().unwrap().contains("Not ready yet"), "the registration succeeded: {d}");
    assert_eq!(lab.api.book.lock().unwrap().registrations, 1);

    // Revoke, as each provider allows.
    let r = call(&wv, "revoke", json!({"provider": "kinds_session"})).unwrap();
    assert!(r["message"].as_str().unwrap().contains("access revoked at Kinds Session"), "{r}");
    let r = call(&wv, "revoke", json!({"provider": "kinds_key"})).unwrap();
    assert!(r["message"].as_str().unwrap().contains("delete the key"), "{r}");
    for p in ["kinds_oauth", "kinds_import", "kinds_key", "kinds_session"] {
        let _ = call(&wv, "revoke", json!({"provider": p}));
        assert_eq!(row(&wv, p)["state"], if p == "kinds_oauth" { "app_saved" } else { "not_set_up" }, "{p}");
    }
}
