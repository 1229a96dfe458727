//! WHOOP end to end against its twin: every collection against the twin's truth (computed here
//! from the same sample member), paging to exhaustion under WHOOP's quirks, score states said
//! and never zeros, days read in each record's own offset, the login in the browser with
//! `offline`, a rotating refresh, rate limits, `vitals_today` and `vitals_daily`, and no secret
//! and no request but a GET (and the token endpoint) ever.
use crate::common;
use common::*;
use jiff::civil::Date;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use vitals::providers::whoop::{decode, sample};
use vitals_twin::whoop::{CLIENT_SECRET, REDIRECT};

fn env_for(twin: &Twin, dir: &std::path::Path) -> Vec<(String, String)> {
    let mut env = whoop_env(twin);
    env.push(("VITALS_CONFIG_DIR".into(), dir.display().to_string()));
    env
}

fn folder(tag: &str) -> std::path::PathBuf {
    let dir = common::scratch().join(format!("vitals-e2e-whoop-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A server reading the twin's WHOOP with a login the twin issued (Oura and the rest on samples).
async fn connected(twin: &Twin, tag: &str, extra: &[(&str, &str)]) -> (Session, std::path::PathBuf) {
    let dir = folder(tag);
    let tokens = twin.whoop(|w| w.stored_login("whoop-login-1"));
    vitals::accounts::TokenStore::file(&dir).save("whoop", &tokens).unwrap();
    let env = env_for(twin, &dir);
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    pairs.extend_from_slice(extra);
    (connect(twin, true, &pairs).await, dir)
}

async fn query(s: &Session, collection: &str, args: Value) -> Value {
    records_of(s, &format!("whoop.{collection}"), args).await
}

/// What the twin holds for wake-up days `[first, last]` and more: every record of the days
/// around, as WHOOP sends them.
fn held(twin: &Twin, first: Date, last: Date) -> Vec<sample::Day> {
    let (person, now) = twin.whoop(|w| (w.cfg.person.clone(), w.now()));
    let mut out = vec![];
    let mut d = first.checked_sub(jiff::ToSpan::days(2)).unwrap();
    while d <= last.checked_add(jiff::ToSpan::days(2)).unwrap() {
        out.extend(person.day(d, now));
        d = d.tomorrow().unwrap();
    }
    out
}

/// The truth of one collection over `[first, last]`, computed here: id → day. A night and its
/// recovery on the morning the sleep ended (its own offset), a cycle on its main sleep's morning,
/// a workout on the day it started.
fn truth(twin: &Twin, collection: &str, first: Date, last: Date) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in held(twin, first, last) {
        let morning = decode::day_of(&d.sleeps[0], "end").unwrap();
        let rows: Vec<(String, Date)> = match collection {
            "sleep" => d.sleeps.iter().map(|s| (s["id"].as_str().unwrap().to_string(), decode::day_of(s, "end").unwrap())).collect(),
            "recovery" => vec![(d.recovery["sleep_id"].as_str().unwrap().to_string(), morning)],
            "cycle" => vec![(d.cycle["id"].to_string(), morning)],
            _ => d.workouts.iter().map(|w| (w["id"].as_str().unwrap().to_string(), decode::day_of(w, "start").unwrap())).collect(),
        };
        out.extend(rows.into_iter().filter(|(_, day)| *day >= first && *day <= last).map(|(id, day)| (id, day.to_string())));
    }
    out
}

fn answered(a: &Value, key: &str) -> BTreeMap<String, String> {
    a["data"].as_array().unwrap().iter().map(|r| (r[key].as_str().unwrap_or_default().to_string(), r["day"].as_str().unwrap_or("?").to_string())).collect()
}

fn key_of(collection: &str) -> &'static str {
    if collection == "recovery" {
        "sleep_id"
    } else {
        "id"
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_collection_is_the_twins_truth_day_by_day_through_every_page() {
    let twin = twin().await;
    // Pages of 4 at most, an empty page before each page that follows, and the filter that keeps
    // only records starting in the range: none of it may change the answer.
    twin.whoop(|w| {
        // Not a test of WHOOP's budget (the 429 test is): four servers in a row stay clear of it.
        w.cfg.per_minute = 1_000;
        w.cfg.page_cap = Some(4);
        w.cfg.quirks = sample::Quirks { start_only_filter: true, end_null: true, empty_pages: true };
    });
    let (first, last) = (ago(30), ago(1));
    for c in ["sleep", "recovery", "cycle", "workout"] {
        // A server of its own each: one month of a dated-by-sleeps collection is about 50 requests
        // of these tiny pages, and a server keeps within WHOOP's 100 a minute.
        let (s, _) = connected(&twin, &format!("truth-{c}"), &[]).await;
        twin.clear_log();
        let a = query(&s, c, json!({"start": ds(first), "end": ds(last)})).await;
        assert_eq!(a["synthetic"], false, "{c}: the connected account, not samples");
        assert!(a["notices"]["truncated"].is_null(), "{c}: complete: {}", a["notices"]);
        let want = truth(&twin, c, first, last);
        assert!(want.len() >= 25, "{c}: a month is more than one page ({} records)", want.len());
        assert_eq!(answered(&a, key_of(c)), want, "{c}: every record once, on its day");
        let pages = twin.requests().iter().filter(|r| r.query.contains("nextToken")).count();
        assert!(pages >= 6, "{c}: the listing was followed past its first pages ({pages} follow-up pages)");
        for r in twin.requests() {
            assert!(r.query.contains("limit=25"), "{c}: every page asks for WHOOP's largest page: {}", r.query);
        }
        s.close().await;
    }
    let (s, _) = connected(&twin, "naps", &[]).await;
    // A nap is a sleep of its own, flagged, and never the day's night in an analysis.
    let sleeps = query(&s, "sleep", json!({"start": ds(ago(60)), "end": ds(ago(1))})).await;
    let naps: Vec<&Value> = sleeps["data"].as_array().unwrap().iter().filter(|r| r["nap"] == true).collect();
    assert!(!naps.is_empty() && naps.iter().all(|n| n["kind"] == "nap"), "naps are flagged");
    assert!(twin.whoop(|w| w.violations.clone()).is_empty(), "vitals never sends anything but a GET to WHOOP's API");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_night_is_the_morning_it_ended_in_the_offset_it_was_recorded_in() {
    let twin = twin().await;
    // The member sleeps in Tokyo (+09:00); the server's own zone is another.
    twin.whoop(|w| w.cfg.person = sample::Person::new("Asia/Tokyo"));
    let (s, _) = connected(&twin, "tokyo", &[]).await;
    let (first, last) = (ago(10), ago(2));
    let a = query(&s, "sleep", json!({"start": ds(first), "end": ds(last)})).await;
    assert_eq!(answered(&a, "id"), truth(&twin, "sleep", first, last));
    let night = a["data"].as_array().unwrap().iter().find(|r| r["kind"] == "sleep").unwrap();
    assert_eq!(night["timezone_offset"], "+09:00");
    // The wall clock there: asleep in the evening or after midnight, awake in the morning.
    let up: u32 = night["end_local"].as_str().unwrap()[11..13].parse().unwrap();
    assert!((6..9).contains(&up), "awake at {up} h in Tokyo: {night}");
    let r = query(&s, "recovery", json!({"start": ds(first), "end": ds(last)})).await;
    assert_eq!(answered(&r, "sleep_id"), truth(&twin, "recovery", first, last), "a recovery on its sleep's morning");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_without_a_score_says_its_state_and_carries_no_zeros() {
    let twin = twin().await;
    let (s, _) = connected(&twin, "states", &[]).await;
    // A stretch with nights WHOOP could not score (the sample member has one about every 19 days).
    let (first, last) = (ago(80), ago(1));
    let unscorable: Vec<String> = held(&twin, first, last)
        .iter()
        .filter(|d| d.recovery["score_state"] == "UNSCORABLE")
        .filter(|d| decode::day_of(&d.sleeps[0], "end").is_some_and(|m| m >= first && m <= last))
        .map(|d| d.recovery["sleep_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!unscorable.is_empty(), "the stretch holds an unscorable night");
    let a = query(&s, "recovery", json!({"start": ds(first), "end": ds(last)})).await;
    let rows = a["data"].as_array().unwrap();
    for r in rows.iter().filter(|r| unscorable.iter().any(|id| r["sleep_id"] == id.as_str())) {
        assert_eq!(r["score_state"], "UNSCORABLE", "{r}");
        for k in ["recovery_score", "hrv_rmssd_milli", "resting_heart_rate"] {
            assert!(r.get(k).is_none_or(Value::is_null), "no {k} where WHOOP gave no score: {r}");
        }
    }
    let rules = a["notices"]["rules"].to_string();
    assert!(rules.contains("UNSCORABLE: ") && rules.contains("never zeros"), "{rules}");
    // The running cycle is said as running.
    let c = query(&s, "cycle", json!({"start": ds(ago(2)), "end": ds(ago(0))})).await;
    let running: Vec<&Value> = c["data"].as_array().unwrap().iter().filter(|r| r["in_progress"] == true).collect();
    // Between the sleep that starts a cycle and local midnight, the running cycle belongs to
    // tomorrow's morning, after the days asked: then none runs within them (said in the note).
    assert!(running.len() <= 1, "{}", c["data"]);
    if running.len() == 1 {
        assert!(c["notices"]["flagged"].as_str().is_some_and(|f| f.starts_with("1 row(s) in_progress=true: still running")), "{}", c["notices"]);
    }
    // An analysis never counts a missing score as a value: the unscored mornings are left out, and counted.
    let trend = s.ok("vitals_trend", json!({"metric": "whoop.recovery.recovery_score", "start": ds(first), "end": ds(last)})).await;
    assert_eq!(trend["excluded"]["no_value"].as_u64(), Some(unscorable.len() as u64), "{trend}");
    assert_eq!(trend["days"].as_u64(), Some((rows.len() - unscorable.len()) as u64), "{trend}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn logging_in_asks_for_offline_and_an_expired_token_rotates_the_refresh_token_once() {
    let twin = twin().await;
    let dir = folder("login");
    let mut env = env_for(&twin, &dir);
    env.push(("VITALS_WHOOP_REDIRECT_URI".into(), REDIRECT.into()));
    env.push(("VITALS_TEST_BROWSER_LOG".into(), dir.join("browser.log").display().to_string()));
    env.push(("VITALS_BROWSER".into(), env!("CARGO_BIN_EXE_browser").into()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let r = s.ok("vitals_connect", json!({"provider": "whoop"})).await;
    assert_eq!(r["state"], "connected", "{r}");
    let first = vitals::accounts::TokenStore::file(&dir).load("whoop").unwrap().expect("the login is stored");
    assert!(first.refresh.is_some(), "`offline` was asked, so WHOOP issued a refresh token");
    assert!(first.scopes.iter().any(|s| s == "offline"), "{:?}", first.scopes);
    let a = query(&s, "cycle", json!({"day": ds(ago(1))})).await;
    assert_eq!(a["synthetic"], false);
    // An hour later: the access token has expired; one refresh, and the new pair is kept.
    twin.whoop(|w| w.expire_access());
    let a = query(&s, "sleep", json!({"day": ds(ago(2))})).await;
    assert_eq!(a["synthetic"], false);
    let second = vitals::accounts::TokenStore::file(&dir).load("whoop").unwrap().unwrap();
    assert_ne!(second.refresh.as_ref().unwrap().expose(), first.refresh.as_ref().unwrap().expose(), "the rotated refresh token is saved");
    let grants: Vec<(String, u16)> = twin.whoop(|w| w.token_requests.clone());
    assert_eq!(grants, [("authorization_code".to_string(), 200), ("refresh_token".to_string(), 200)], "one exchange, one refresh");
    // The old refresh token is dead at WHOOP (rotation): the saved one is the live one.
    let reuse = twin.whoop(|w| {
        w.token(
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", first.refresh.as_ref().unwrap().expose()),
                ("client_id", vitals_twin::whoop::CLIENT_ID),
                ("client_secret", CLIENT_SECRET),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        )
        .status
    });
    assert_eq!(reuse, 400);
    s.close().await;
    // Disconnecting never sends WHOOP's DELETE: it says where the access is removed.
    let mut cmd = vitals_cmd();
    cmd.args(["forget", "whoop"]).env("VITALS_TOKEN_STORE", "file").stdin(std::process::Stdio::null());
    for (k, v) in env_for(&twin, &dir) {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(said.contains("WHOOP app"), "{said}");
    assert!(vitals::accounts::TokenStore::file(&dir).load("whoop").unwrap().is_none(), "the login is gone");
    for r in twin.requests() {
        assert_eq!(r.method, "GET", "vitals only reads from WHOOP's API: {r:?}");
    }
    assert!(twin.whoop(|w| w.violations.clone()).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_is_waited_out_and_said_and_the_day_shows_in_today_and_daily() {
    let twin = twin().await;
    let (s, _) = connected(&twin, "today", &[]).await;
    twin.whoop(|w| w.cfg.faults = vitals_twin::whoop::WhoopFaults { rate_limit_next: 2, retry_after: true, server_error_next: 0 });
    let a = query(&s, "workout", json!({"start": ds(ago(20)), "end": ds(ago(1))})).await;
    assert_eq!(answered(&a, "id"), truth(&twin, "workout", ago(20), ago(1)), "complete after the waits");
    assert_eq!(a["notices"]["rate_limited"]["retries"], 2, "the waits are said: {}", a["notices"]);
    let t = s.ok("vitals_today", json!({"days": 2})).await;
    let whoop = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "whoop").expect("a WHOOP section");
    assert_eq!(whoop["synthetic"], false);
    let roles: Vec<&str> = whoop["sections"].as_array().unwrap().iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(&roles[..3], ["sleep", "recovery", "strain"], "{whoop}");
    // The others are samples and are not beside a connected account's day.
    assert!(t["providers"].as_array().unwrap().iter().all(|p| p["synthetic"] != true), "{t:.600}");
    let d = s.ok("vitals_daily", json!({"start": ds(ago(7)), "end": ds(ago(1))})).await;
    let text = d.to_string();
    assert!(text.contains("whoop"), "WHOOP's values are in the daily table: {text:.600}");
    assert!(text.contains("milliseconds ÷ 60,000"), "the conversion is said: {text:.800}");
    s.close().await;
}

/// WHOOP's tokens and client secret appear in no tool result, log line or CLI output.
#[tokio::test(flavor = "multi_thread")]
async fn the_whoop_tokens_and_secret_never_appear_in_any_output() {
    let twin = twin().await;
    let (s, dir) = connected(&twin, "leak", &[("VITALS_LOG", "debug")]).await;
    let mut out = String::new();
    for (tool, args) in [
        ("vitals_sources", json!({"provider": "whoop"})),
        ("vitals_check", json!({})),
        ("vitals_today", json!({"days": 1})),
        ("vitals_query", json!({"collection": "whoop.profile", "options": {"personal": true}})),
        ("vitals_query", json!({"collection": "whoop.body_measurement"})),
    ] {
        out.push_str(&format!("{:?}", s.call_raw(tool, args).await));
    }
    twin.whoop(|w| w.expire_access());
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "whoop.sleep", "day": ds(ago(3))})).await));
    out.push_str(&s.close().await);
    let mut cmd = vitals_cmd();
    cmd.args(["--check"]).env("VITALS_LOG", "debug").env("VITALS_TOKEN_STORE", "file").stdin(std::process::Stdio::null());
    for (k, v) in env_for(&twin, &dir) {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    out.push_str(&String::from_utf8_lossy(&o.stdout));
    out.push_str(&String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("sample.member@example.com"), "the personal profile was read when asked");
    let secrets = twin.whoop(|w| w.secrets());
    assert!(secrets.len() >= 4, "a login and its refresh were issued");
    for secret in secrets.iter().map(String::as_str).chain([CLIENT_SECRET]) {
        assert!(!out.contains(secret), "a secret leaked");
        assert!(!out.contains(&secret[secret.len() / 2..]), "part of a secret leaked");
    }
}
