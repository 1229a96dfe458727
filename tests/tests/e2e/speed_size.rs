//! End to end: concurrent windows, the memory cache, resolution and the character budget.
use crate::common::{self, Progressed};
use common::*;
use serde_json::{json, Value};

fn data_requests(twin: &Twin) -> usize {
    twin.requests().iter().filter(|r| r.path.contains("/usercollection/")).count()
}

fn sum_n(data: &Value) -> u64 {
    records(data).iter().map(|r| r["n"].as_u64().expect("every bucket has n")).sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrency_does_not_change_the_answer_and_windows_merge_exactly_across_dst() {
    let chicago = jiff::tz::TimeZone::get("America/Chicago").unwrap();
    let twin = twin_with(OuraConfig { tz: chicago, ..Default::default() }).await;
    let env = |pool: &'static str| [("VITALS_TZ", "America/Chicago"), ("VITALS_CONCURRENCY", pool), ("VITALS_CACHE_MB", "0")];
    let one = connect(&twin, false, &env("1")).await;
    let eight = connect(&twin, false, &env("8")).await;
    for (c, start, end) in [
        ("heartrate", "2026-03-05", "2026-03-10"),          // 23-hour day inside
        ("heartrate", "2026-10-30", "2026-11-02"),          // 25-hour day inside
        ("ring_battery_level", "2026-03-01", "2026-03-20"), // 72-hour windows
        ("sleep", "2026-02-10", "2026-04-05"),              // several day windows
        ("workout", "2026-02-10", "2026-04-05"),
    ] {
        let args = json!({"collection": format!("oura.{c}"), "start": start, "end": end, "max_chars": 2_000_000, "resolution": if c == "workout" { Value::Null } else { json!("raw") }});
        let a = one.ok("vitals_query", args.clone()).await;
        let b = eight.ok("vitals_query", args).await;
        assert_eq!(a["data"], b["data"], "oura.{c}: pool 1 and pool 8 agree");
        assert_eq!(a["count"], b["count"]);
        // No duplicate and no gap at any window edge: exactly the twin's records, in order.
        assert_eq!(keys(&a["data"]), expected_keys(&twin, c, start, end), "oura.{c} {start}..{end}");
        assert!(a["notices"].get("truncated").is_none());
    }
    one.close().await;
    eight.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cache_serves_closed_days_and_never_today_or_an_empty_answer() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let args = json!({"collection": "oura.heartrate", "start": "2026-06-10", "end": "2026-06-12"});
    let first = s.ok("vitals_query", args.clone()).await;
    assert!(first["notices"].get("cached").is_none());
    twin.clear_log();
    let again = s.ok("vitals_query", args.clone()).await;
    assert_eq!(data_requests(&twin), 0, "closed days come from memory");
    assert_eq!(again["pages"], 0);
    assert_eq!(again["notices"]["cached"]["windows_cached"], again["notices"]["cached"]["windows"]);
    assert!(again["notices"]["cached"]["note"].as_str().unwrap().contains("forget=true"));
    assert_eq!(again["data"], first["data"], "the cached answer is the same answer");

    // forget=true empties it: everything is fetched again, and said.
    let fresh = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": "2026-06-10", "end": "2026-06-12", "forget": true})).await;
    assert!(data_requests(&twin) > 0);
    assert!(fresh["notices"].get("cached").is_none());
    assert!(fresh["notices"]["cache_cleared"].as_str().unwrap().contains("window"));

    // Today is never cached.
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date().to_string();
    s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": today})).await;
    twin.clear_log();
    let t = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": today})).await;
    assert!(t["notices"].get("cached").is_none());
    assert!(data_requests(&twin) > 0, "today is asked again every time");

    // An empty answer is never cached: "nothing yet" must be asked again.
    let cfg = twin.state.oura.lock().unwrap().clone();
    let empty_day = (1..=30)
        .map(|d| jiff::civil::date(2026, 6, d))
        .find(|d| vitals_twin::oura::expected(&cfg, "enhanced_tag", *d, *d).is_empty())
        .expect("a June day without tags");
    let q = json!({"collection": "oura.enhanced_tag", "day": empty_day.to_string()});
    assert_eq!(s.ok("vitals_query", q.clone()).await["count"], 0);
    twin.clear_log();
    let e = s.ok("vitals_query", q).await;
    assert!(e["notices"].get("cached").is_none() && e["notices"]["empty"].is_string());
    assert!(data_requests(&twin) > 0, "an empty day is asked again");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_month_of_heart_rate_fits_the_default_budget_with_every_sample_counted() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let r = s.call_raw("vitals_query", json!({"collection": "oura.heartrate", "start": "2026-06-01", "end": "2026-06-30"})).await;
    assert!(text(&r).len() <= 100_000, "the answer is {} characters", text(&r).len());
    let a = r.structured_content.unwrap();
    let raw = vitals_twin::oura::expected(&twin.state.oura.lock().unwrap(), "heartrate", date("2026-06-01"), date("2026-06-30")).len();
    assert!(raw > 36_000);
    let auto = &a["notices"]["resolution_auto"];
    assert_eq!(auto["raw_samples"].as_u64().unwrap() as usize, raw);
    assert!(auto["raw_characters"].as_u64().unwrap() > 100_000);
    assert!(auto["note"].as_str().unwrap().contains("resolution=raw"));
    assert_eq!(a["resolution"]["applied"], auto["chosen"]);
    assert!(a["resolution"]["method"].as_str().unwrap().contains("n"));
    assert_eq!(sum_n(&a["data"]) as usize, raw, "bucket counts add up to the raw count");
    assert!(a["notices"].get("truncated").is_none());
    // The first bucket starts at local midnight of the first day.
    assert_eq!(records(&a["data"])[0]["timestamp"], "2026-06-01T00:00:00-06:00");

    // An explicit resolution, any of them: the counts still add up.
    for res in ["1m", "5m", "15m", "30m", "1h", "1d"] {
        let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": "2026-06-10", "resolution": res})).await;
        assert_eq!(sum_n(&a["data"]) as usize, expected_keys(&twin, "heartrate", "2026-06-10", "2026-06-10").len(), "{res}");
        assert_eq!(a["resolution"]["applied"], res);
        assert!(a["notices"].get("resolution_auto").is_none(), "asked for, not automatic");
    }
    let d = s.ok("vitals_query", json!({"collection": "oura.ring_battery_level", "day": "2026-06-10", "resolution": "1h"})).await;
    let first = &records(&d["data"])[0];
    assert!(first.get("level_first").is_some() && first.get("level_last").is_some(), "{first}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_auto_resolution_notice_appears_exactly_when_the_budget_is_exceeded() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let day = json!({"collection": "oura.heartrate", "day": "2026-06-10", "resolution": "raw", "max_chars": 2_000_000});
    let raw = s.ok("vitals_query", day).await;
    let raw_chars = raw["data"].to_string().len();
    // The data gets max_chars minus 3,000 (kept for notices and the rest of the answer).
    let at = |max: usize| json!({"collection": "oura.heartrate", "day": "2026-06-10", "max_chars": max});
    let fits = s.ok("vitals_query", at(raw_chars + 3_000)).await;
    assert!(fits["notices"].get("resolution_auto").is_none(), "{}", fits["notices"]);
    assert_eq!(fits["data"], raw["data"]);
    let over = s.ok("vitals_query", at(raw_chars + 2_999)).await;
    assert_eq!(over["notices"]["resolution_auto"]["raw_characters"].as_u64().unwrap() as usize, raw_chars);
    assert_eq!(over["notices"]["resolution_auto"]["chosen"], "1m", "the finest that fits");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn embedded_series_are_compacted_and_scalars_come_back_whole() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let range = json!({"collection": "oura.daily_activity", "start": "2026-06-01", "end": "2026-06-30"});
    let a = s.ok("vitals_query", range.clone()).await;
    let mut full_args = range.clone();
    full_args["max_chars"] = json!(2_000_000);
    full_args["resolution"] = json!("raw");
    let full = s.ok("vitals_query", full_args).await;
    let c = &a["notices"]["compacted"];
    let fields: Vec<&str> = c["fields"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(fields.contains(&"met") && fields.contains(&"class_5_min"), "{c}");
    assert!(c["raw_characters"].as_u64().unwrap() > 100_000);
    assert!(a.to_string().len() <= 100_000);
    assert_eq!(a["count"], full["count"], "no record dropped");
    for (x, y) in records(&a["data"]).iter().zip(records(&full["data"])) {
        for k in ["id", "day", "steps", "score", "total_calories", "active_calories", "contributors"] {
            assert_eq!(x[k], y[k], "{k} comes back whole");
        }
        let (met, raw_met) = (&x["met"], &y["met"]);
        let n: u64 = met["n"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
        let raw_n = raw_met["items"].as_array().unwrap().iter().filter(|v| !v.is_null()).count() as u64;
        assert_eq!(n, raw_n, "every MET reading is counted in a bucket");
        assert_eq!(met["compacted_from_interval"], raw_met["interval"]);
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fixed_resolution_over_budget_is_cut_at_a_day_and_resumes_exactly() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let (start, end) = ("2026-06-10", "2026-06-13");
    let mut got = vec![];
    let mut from = start.to_string();
    for round in 0.. {
        assert!(round < 10, "resume does not converge");
        let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": from, "end": end, "resolution": "raw"})).await;
        got.extend(keys(&a["data"]));
        assert!(a.to_string().len() <= 100_000);
        match a["notices"].get("truncated") {
            Some(t) => {
                assert!(t["reason"].as_str().unwrap().contains("max_chars"));
                let next = t["continue_from"].as_str().unwrap().to_string();
                assert!(next > from && a["range"]["end"].as_str().unwrap() < next.as_str());
                from = next;
            }
            None => break,
        }
    }
    assert_eq!(got, expected_keys(&twin, "heartrate", start, end), "no gap, no duplicate");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn formats_columns_records_and_csv() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let q = |f: Value| json!({"collection": "oura.daily_sleep", "start": "2026-06-10", "end": "2026-06-12", "format": f});
    let cols = s.ok("vitals_query", q(Value::Null)).await;
    assert!(cols.get("format").is_none(), "the default, columns, says itself by its shape: {cols}");
    assert!(cols["data"]["columns"].is_array() && cols["data"]["rows"].is_array());
    assert_eq!(cols["data"]["columns"][0], "day", "identity columns first");
    let recs = s.ok("vitals_query", q(json!("records"))).await;
    assert_eq!(recs["format"], "records");
    assert_eq!(records(&cols["data"]), recs["data"].as_array().unwrap().clone());
    let csv = s.ok("vitals_query", q(json!("csv"))).await;
    assert_eq!(csv["data"].as_str().unwrap().lines().count(), 4, "a header and three days");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_resolution_and_budget_name_the_parameter() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    for (args, needle) in [
        (json!({"collection": "oura.daily_sleep", "day": "2026-06-10", "resolution": "5m"}), "oura.heartrate"),
        (json!({"collection": "oura.heartrate", "day": "2026-06-10", "resolution": "2m"}), "15m"),
        (json!({"collection": "oura.heartrate", "day": "2026-06-10", "max_chars": 10}), "5000"),
        (json!({"collection": "oura.heartrate", "day": "2026-06-10", "max_chars": 3_000_000}), "2000000"),
        (json!({"collection": "oura.heartrate", "day": "2026-06-10", "resolution": "raw", "max_chars": 5_000}), "first day"),
    ] {
        let e = s.err("vitals_query", args.clone()).await;
        let param = if args.get("max_chars").is_some() { "`max_chars`" } else { "`resolution`" };
        assert!(e.contains(param) && e.contains(needle), "{args} -> {e}");
    }
    s.close().await;
}

/// Issue 20: a provider that says "slow down" (429) to every 5th request halves its in-flight
/// limit while the query runs; the answer is still the whole range, equal to the one at pool 1 and
/// to the one without faults, says `rate_limited`, and `vitals_check` shows the limit it fell to.
#[tokio::test(flavor = "multi_thread")]
async fn a_slow_down_mid_query_halves_the_limit_and_the_answer_stays_whole() {
    use vitals_twin::wire::{Fault, Rule};
    let twin = twin().await;
    let env = |pool: &'static str| [("VITALS_CONCURRENCY", pool), ("VITALS_CACHE_MB", "0")];
    let one = connect(&twin, false, &env("1")).await;
    let many = connect(&twin, false, &env("64")).await;
    let args = json!({"collection": "oura.heartrate", "start": ds(ago(20)), "end": ds(ago(1)), "resolution": "raw", "max_chars": 2_000_000});
    let clean = one.ok("vitals_query", args.clone()).await;
    let before = many.ok("vitals_check", json!({})).await;
    let oura = |c: &Value| c["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "oura").unwrap()["limits"].clone();
    assert_eq!(oura(&before)["in_flight"], 32, "Oura's default: {}", oura(&before));
    assert_eq!(oura(&before)["in_flight_default"], 32);
    // Every 5th data request from here on answers 429 with Retry-After: 1.
    twin.wire((1..=40).map(|k| Rule::data(5 * k, 1, Fault::RateLimit { retry_after_s: Some(1) })).collect());
    let slowed = many.ok("vitals_query", args.clone()).await;
    let hits = twin.wire_hits();
    twin.wire(vec![]);
    assert!(hits >= 2, "the faults fired ({hits})");
    assert!(slowed["notices"]["truncated"].is_null(), "{}", slowed["notices"]);
    assert!(slowed["notices"]["rate_limited"].is_object(), "said: {}", slowed["notices"]);
    assert_eq!(slowed["data"], clean["data"], "the same records as at pool 1 without faults");
    let after = many.ok("vitals_check", json!({})).await;
    let l = oura(&after);
    assert!(l["in_flight"].as_u64().unwrap() < 32 && l["slowed_down"].as_u64().unwrap() >= 2, "{l}");
    one.close().await;
    many.close().await;
}

/// Issue 20: a long read sent with a `progressToken` reports pages done of pages known and the
/// day reached, rising, at most every 250 ms, before its answer. (rmcp's client sends a token with
/// every request, so "no token, no reports" is left to the unit tests of engine/progress.rs.)
#[tokio::test(flavor = "multi_thread")]
async fn a_long_read_reports_its_progress_to_a_client_that_asked() {
    use rmcp::model::CallToolRequestParams;
    use vitals_twin::wire::{Fault, Rule};
    let twin = twin().await;
    let seen = Progressed::default();
    let s =
        connect_as(&twin, false, &[("VITALS_CACHE_MB", "0"), ("VITALS_CONCURRENCY", "2")], rmcp::service::ClientLifecycleMode::Initialize, seen.clone()).await;
    // The first answers trickle (64 bytes a millisecond: about a second a page), so the read takes seconds.
    twin.wire(vec![Rule::data(1, 3, Fault::Slow { pause_ms: 1 })]);
    let args = json!({"collection": "oura.heartrate", "start": ds(ago(4)), "end": ds(ago(1)), "resolution": "1h"});
    let mut params = CallToolRequestParams::new("vitals_query").with_arguments(args.as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"progressToken": "read-1"})).unwrap());
    let r = s.client.call_tool(params).await.unwrap();
    twin.wire(vec![]);
    let a = r.structured_content.expect("an answer");
    assert!(a["notices"]["truncated"].is_null(), "{}", a["notices"]);
    let got = seen.0.lock().unwrap().clone();
    assert!(got.len() >= 2, "several reports over a read of seconds: {got:?}");
    assert!(got.windows(2).all(|w| w[1].0 > w[0].0), "progress rises: {got:?}");
    for (done, total, message) in &got {
        assert!(total.is_some_and(|t| t >= *done), "{done} of {total:?}");
        assert!(message.starts_with("oura.heartrate: ") && message.contains("pages"), "{message}");
    }
    assert!(got.iter().any(|g| g.2.contains("complete through ")), "the day reached is said: {got:?}");
    // vitals_today reports its sections as they finish.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    seen.0.lock().unwrap().clear();
    let mut params = CallToolRequestParams::new("vitals_today").with_arguments(json!({"days": 3}).as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"progressToken": "today-1"})).unwrap());
    s.client.call_tool(params).await.unwrap();
    let got = seen.0.lock().unwrap().clone();
    assert!(!got.is_empty() && got[0].2.starts_with("vitals_today: 1 of "), "{got:?}");
    s.close().await;
}
