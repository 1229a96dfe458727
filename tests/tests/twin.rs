//! The twin itself: the quirks and knobs the end-to-end suites rely on behave as the real API does.
mod common;
use common::*;
use serde_json::{json, Value};

async fn get(twin: &Twin, path_query: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .get(format!("{}{path_query}", twin.base_url()))
        .bearer_auth(TOKEN)
        .header("user-agent", "twin-test")
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn post(twin: &Twin, path: &str, body: Value) -> u16 {
    let r = reqwest::Client::new().post(format!("{}{path}", twin.base_url())).json(&body).send().await.unwrap();
    r.status().as_u16()
}

#[tokio::test]
async fn impossible_dates_get_fastapi_validation_errors() {
    let twin = twin().await;
    let (status, body) = get(&twin, "/v2/usercollection/daily_sleep?start_date=2026-02-29&end_date=2026-03-02").await;
    assert_eq!(status, 422);
    assert_eq!(body["detail"][0]["loc"], json!(["query", "start_date"]));
    let (status, _) = get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T25:00:00Z").await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn scope_and_membership_knobs_answer_403() {
    let twin = twin().await;
    assert_eq!(post(&twin, "/_twin/oura", json!({"denied_collections": ["heartrate"]})).await, 204);
    assert_eq!(get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T00:00:00Z").await.0, 403);
    assert_eq!(get(&twin, "/v2/usercollection/daily_sleep?start_date=2026-06-10").await.0, 200);
    post(&twin, "/_twin/oura", json!({"denied_collections": [], "membership_lapsed": true})).await;
    assert_eq!(get(&twin, "/v2/usercollection/daily_sleep?start_date=2026-06-10").await.0, 403);
    assert_eq!(post(&twin, "/_twin/oura", json!({"no_such_knob": 1})).await, 422, "unknown knobs are refused, not ignored");
}

#[tokio::test]
async fn the_count_based_rate_limit_refills_with_its_window() {
    let twin = twin().await;
    post(&twin, "/_twin/faults", json!({"rate_budget": {"requests": 3, "window_ms": 1500}})).await;
    let path = "/v2/usercollection/daily_sleep?start_date=2026-06-10&end_date=2026-06-11";
    for _ in 0..3 {
        assert_eq!(get(&twin, path).await.0, 200);
    }
    let r = reqwest::Client::new().get(format!("{}{path}", twin.base_url())).bearer_auth(TOKEN).header("user-agent", "t").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let after: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&after), "Retry-After {after}");
    tokio::time::sleep(std::time::Duration::from_millis(1600)).await;
    assert_eq!(get(&twin, path).await.0, 200, "the window frees its slots");
}

#[tokio::test]
async fn late_sync_and_today_knobs_change_what_a_closed_day_holds() {
    let twin = twin().await;
    let path = "/v2/usercollection/daily_sleep?start_date=2026-06-10&end_date=2026-06-10";
    let (_, before) = get(&twin, path).await;
    post(&twin, "/_twin/oura", json!({"revised_days": ["2026-06-10"]})).await;
    let (_, after) = get(&twin, path).await;
    assert_eq!(before["data"][0]["id"], after["data"][0]["id"], "same record");
    assert_ne!(before["data"][0]["contributors"], after["data"][0]["contributors"], "re-analysed values");

    post(&twin, "/_twin/oura", json!({"now": "2026-06-20T15:00:00Z", "today_synced": false})).await;
    let today = "/v2/usercollection/daily_sleep?start_date=2026-06-20&end_date=2026-06-20";
    assert_eq!(get(&twin, today).await.1["data"], json!([]), "today's sleep is absent until the app syncs");
    post(&twin, "/_twin/oura", json!({"today_synced": true})).await;
    assert_eq!(get(&twin, today).await.1["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_dst_zone_gives_23_and_25_hour_days() {
    let tz = jiff::tz::TimeZone::get("America/Chicago").unwrap();
    let twin = twin_with(OuraConfig { tz, ..Default::default() }).await;
    let cfg = twin.state.oura.lock().unwrap().clone();
    let spring = vitals_twin::oura::expected(&cfg, "ring_battery_level", date("2026-03-08"), date("2026-03-08"));
    let fall = vitals_twin::oura::expected(&cfg, "ring_battery_level", date("2026-11-01"), date("2026-11-01"));
    assert_eq!(spring.len(), 23 * 12, "five-minute battery rows over a 23-hour day");
    assert_eq!(fall.len(), 25 * 12, "and over a 25-hour day");
    let last = spring.last().unwrap()["timestamp"].as_str().unwrap().to_string();
    assert!(last.as_str() < "2026-03-09T05:00:00+00:00", "{last}: the short day ends at 05:00 UTC");
}

#[tokio::test]
async fn naive_datetimes_are_read_as_utc() {
    // mcp-oura sends `T00:00:00` without an offset; how Oura reads that is unmeasured, the twin reads UTC.
    let twin = twin().await;
    let (status, naive) = get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T00:00:00&end_datetime=2026-06-10T01:00:00").await;
    assert_eq!(status, 200);
    let (_, utc) = get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T00:00:00Z&end_datetime=2026-06-10T01:00:00Z").await;
    assert!(!naive["data"].as_array().unwrap().is_empty());
    assert_eq!(naive["data"], utc["data"]);
}
