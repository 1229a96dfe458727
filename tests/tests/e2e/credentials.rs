//! Credentials under faults, as the server says them (issue 22): a damaged token file is an error
//! that names it and says what to do, never sample data in the login's place; a token file open to
//! other users is closed to 0600 and said. The store's own faults (a full disk at rotation, a
//! folder that cannot be written) are unit tests in `server/providers/src/accounts/store.rs`; a process
//! killed during a rotation is in `store_race.rs`.
use crate::common;
use common::*;
use serde_json::{json, Value};

fn provider<'a>(check: &'a Value, name: &str) -> &'a Value {
    check["providers"].as_array().unwrap().iter().find(|p| p["provider"] == name).unwrap()
}

#[tokio::test]
async fn a_damaged_token_file_is_said_and_never_answered_with_sample_data() {
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, "damaged");
    let file = login.dir.join("tokens.json");
    let whole = std::fs::read_to_string(&file).unwrap();
    for (what, body) in [("cut short", whole[..whole.len() / 2].to_string()), ("not JSON", "<html>oops</html>".to_string())] {
        std::fs::write(&file, &body).unwrap();
        // Oura by its personal token from the environment: that does not need the file.
        let s = login.server(&twin, &[("OURA_PAT", TOKEN)]).await;
        let e = s.err("vitals_query", json!({"collection": "withings.measurements", "start": ds(ago(7)), "end": ds(ago(1))})).await;
        assert!(
            e.contains("the saved logins, Withings's among them, could not be read") && e.contains("not valid JSON") && e.contains("no sample data"),
            "{what}: {e}"
        );
        assert!(e.contains(&file.display().to_string()), "{what}: names the file: {e}");
        let check = s.ok("vitals_check", json!({})).await;
        let w = provider(&check, "withings");
        assert_eq!(w["answered_by"], "nobody", "{what}: {w}");
        assert!(w["api_detail"].as_str().unwrap().contains("move it aside and connect again"), "{what}: {w}");
        // A credential from the environment answers as before.
        assert_eq!(provider(&check, "oura")["answered_by"], "api", "{what}: {check}");
        let log = s.close().await;
        assert!(!log.contains(&login.access) && !log.contains(&login.refresh), "{what}: a token in the log");
    }
}

/// Which providers stand beside which is one rule (server/engine/src/engine/beside.rs): a damaged
/// login is read in every report that reads several providers, so its error is said, in the daily
/// view as in the day's report, never passed over as "not connected".
#[tokio::test]
async fn a_damaged_login_is_said_by_the_daily_view_as_by_the_days_report() {
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, "damaged-daily");
    let file = login.dir.join("tokens.json");
    std::fs::write(&file, "<html>oops</html>").unwrap();
    let s = login.server(&twin, &[("OURA_PAT", TOKEN)]).await;
    let said = |errors: &Value| errors.as_array().is_some_and(|e| e.iter().any(|e| e.as_str().unwrap_or_default().contains(&file.display().to_string())));
    let v = s.ok("vitals_daily", json!({"start": ds(ago(3)), "end": ds(ago(1))})).await;
    assert!(v["providers"].as_array().unwrap().contains(&json!("withings")), "read, so its error is said: {v}");
    assert!(said(&v["errors"]), "the damaged file is named: {v}");
    assert!(!v["left_out"].to_string().contains("withings"), "{}", v["left_out"]);
    let t = s.ok("vitals_today", json!({"days": 1})).await;
    let withings = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "withings").cloned().unwrap_or_default();
    assert!(said(&withings["errors"]), "the day's report says it too: {t}");
    s.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_token_file_open_to_others_is_closed_and_said() {
    use std::os::unix::fs::PermissionsExt;
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, "mode");
    let file = login.dir.join("tokens.json");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let s = login.server(&twin, &[]).await;
    let check = s.ok("vitals_check", json!({})).await;
    let w = provider(&check, "withings");
    assert_eq!(w["answered_by"], "api", "the login still works: {w}");
    let store = w["token_store"].as_str().unwrap();
    assert!(store.contains("was open to other users (mode 0644); vitals set it to 0600"), "{store}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let log = s.close().await;
    assert!(log.contains("vitals set it to 0600"), "and the log says it too");
}
