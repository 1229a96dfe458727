//! Settings passed in (issue 50): the binary reads its environment once, into a `Config`, and hands
//! it down; nothing below reads the environment. So two servers with their own settings run side
//! by side in one process, and a test can run the providers' minute windows as fast as its twin.
use crate::common;
use common::*;
use serde_json::json;
use std::sync::Arc;
use vitals::config::Config;
use vitals::engine::{Engine, Limits, QueryRequest};

/// An engine of every provider made from `config` alone, reading a tenant's empty folder (no
/// login, no keyring, no token from the environment): Oura reads its official sandbox.
fn engine(config: Config, tag: &str) -> Engine {
    let dir = scratch().join(format!("settings-{}-{tag}", std::process::id()));
    let config = Arc::new(config);
    Engine::in_home(vitals::accounts::Home::tenant(dir), config.clone(), Limits::from_config(&config))
}

fn sandbox_at(twin: &Twin, tz: &str) -> Config {
    Config::from_pairs([("VITALS_OURA_BASE_URL", twin.base_url().as_str()), ("VITALS_OURA_SANDBOX", "official"), ("VITALS_TZ", tz), ("VITALS_CACHE_MB", "0")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_in_one_process_each_read_with_their_own_settings() {
    let (a, b) = (twin().await, twin().await);
    let (east, west) = (engine(sandbox_at(&a, "+09:00"), "east"), engine(sandbox_at(&b, "-06:00"), "west"));
    assert_eq!((east.zone().name.as_str(), west.zone().name.as_str()), ("+09:00", "-06:00"));
    let ask = |day: &str| QueryRequest { collection: "oura.daily_sleep".into(), day: Some(day.into()), ..Default::default() };
    let day = ds(ago(3));
    let (from_a, from_b) = (east.query(ask(&day)).await.expect("east answers"), west.query(ask(&day)).await.expect("west answers"));
    assert!(from_a.synthetic && from_b.synthetic, "both read Oura's sandbox");
    let paths = |t: &Twin| t.requests().into_iter().map(|r| r.path).collect::<Vec<_>>();
    let (seen_a, seen_b) = (paths(&a), paths(&b));
    assert!(!seen_a.is_empty() && seen_a.iter().all(|p| p.contains("/sandbox/")), "the east engine read its own twin's sandbox: {seen_a:?}");
    assert!(!seen_b.is_empty() && seen_b.iter().all(|p| p.contains("/sandbox/")), "the west engine read its own twin's sandbox: {seen_b:?}");
    assert_eq!(seen_a.len(), seen_b.len(), "each engine asked its own twin, and only its own, for the same day");
}

/// A server started with `VITALS_RATE_TIME_SCALE=60` counts Withings' 120 requests a minute over a
/// second, as the twin (scaled alike) does: a read of more than one budget waits for the window to
/// free, well inside a 3-second wait budget, and completes; the twin never saw the budget passed.
/// Unscaled, the same read is cut (the window frees only after a minute, past the wait budget).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scaled_minute_paces_a_read_of_more_than_a_budget_to_completion() {
    let twin = twin().await;
    twin.scale_minutes(60);
    // One weigh-in a page: a read of 60 days is more pages than one minute's 120 requests.
    twin.withings(|w| w.cfg.page_size = 1);
    let login = WithingsLogin::new(&twin, "scaled");
    let s = login.server(&twin, &[("VITALS_RATE_TIME_SCALE", "60"), ("VITALS_RATE_WAIT_BUDGET_S", "3"), ("VITALS_CACHE_MB", "0")]).await;
    let args = json!({"collection": "withings.measurements", "start": ds(ago(60)), "end": ds(ago(1)), "tz": TZ, "format": "records", "max_chars": 2_000_000});
    let a = s.ok("vitals_query", args).await;
    let sent = twin.requests().iter().filter(|r| r.path.contains("measure")).count();
    let over = twin.state.withings.lock().unwrap().over_budget;
    eprintln!("settings: {sent} requests, {} records", records(&a["data"]).len());
    s.close().await;
    assert!(sent > 120, "the read needed more than one minute's budget: {sent} requests");
    assert!(a["notices"]["truncated"].is_null(), "complete once the scaled minute frees: {}", a["notices"]);
    assert_eq!(over, 0, "the twin's scaled minute never held more than 120 of the server's requests");
}

/// Two homes of this machine's user in one process, each with its own settings: each finds its
/// own config folder and token store, and renews its login at its own token endpoint (its own
/// twin), with its own app credentials; nothing of one reaches the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_homes_in_one_process_keep_their_own_store_and_token_endpoint() {
    let (a, b) = (twin().await, twin().await);
    let (login_a, login_b) = (WithingsLogin::new(&a, "home-a"), WithingsLogin::new(&b, "home-b"));
    let home = |l: &WithingsLogin| {
        let pairs = l.env.iter().map(|(k, v)| (k.clone(), v.clone())).chain([("VITALS_TOKEN_STORE".to_string(), "file".to_string())]);
        vitals::accounts::Home::local(Arc::new(Config::from_pairs(pairs)))
    };
    let (home_a, home_b) = (home(&login_a), home(&login_b));
    let (store_a, store_b) = (home_a.store().unwrap(), home_b.store().unwrap());
    assert_eq!((store_a.path().parent().unwrap(), store_b.path().parent().unwrap()), (login_a.dir.as_path(), login_b.dir.as_path()));
    let (saved_a, saved_b) = (store_a.load("withings").unwrap().unwrap(), store_b.load("withings").unwrap().unwrap());
    assert_eq!((saved_a.access.expose(), saved_b.access.expose()), (login_a.access.as_str(), login_b.access.as_str()));

    let spec = &vitals::providers::withings::catalog::WITHINGS;
    let token_calls = |t: &Twin| t.state.withings.lock().unwrap().oauth.log.len();
    let renewed_a = vitals::accounts::grant::renew_in(spec, &saved_a, &home_a).await.expect("home A renews at its own twin");
    assert_eq!((token_calls(&a), token_calls(&b)), (1, 0), "home A's refresh went to A's token endpoint only");
    let renewed_b = vitals::accounts::grant::renew_in(spec, &saved_b, &home_b).await.expect("home B renews at its own twin");
    assert_eq!((token_calls(&a), token_calls(&b)), (1, 1), "home B's refresh went to B's token endpoint only");
    assert!(renewed_a.access != saved_a.access && renewed_b.access != saved_b.access, "each home holds a fresh token");
}
