//! Answers sized for a conversation (issue 36), held as rules rather than timings: the day's
//! report never puts sample data beside a connected account, cuts no section while it fits, says
//! once what applies to a whole provider, keeps each provider's limits across its sections; every
//! sentence about size compares like with like and agrees with the answer; and every call answers
//! within its time budget, a slow read with what is complete and a waiting login with its link.
//! The sizes themselves are measured by `cargo xtask bench` ("what the model reads").
use crate::common::login::*;
use crate::common::*;
use rmcp::model::*;
use rmcp::service::ClientLifecycleMode;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn providers(report: &Value) -> Vec<&Value> {
    report["providers"].as_array().expect("providers").iter().collect()
}

fn chars(v: &Value) -> usize {
    v.to_string().chars().count()
}

/// A report whose every section came back whole: no error, no section cut or left out to fit.
fn whole(report: &Value) {
    assert!(report.get("shortened").is_none(), "a report that fits is not shortened: {}", report["shortened"]);
    for p in providers(report) {
        assert!(p.get("errors").is_none(), "{}: {}", p["provider"], p["errors"]);
        for s in p["sections"].as_array().unwrap() {
            assert!(!s["rows"].as_array().unwrap().is_empty(), "{s}");
            assert!(s["raw"].as_str().unwrap().starts_with("vitals_query {"), "{s}");
            let cols = s["columns"].as_array().unwrap().len();
            assert!(s["rows"].as_array().unwrap().iter().all(|r| r.as_array().unwrap().len() == cols), "a cell per column: {s}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_connected_account_reads_alone_and_whole() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let r = s.ok("vitals_today", json!({})).await;
    let names: Vec<&str> = providers(&r).iter().map(|p| p["provider"].as_str().unwrap()).collect();
    assert_eq!(names, ["oura"], "no sample section beside a connected account: {r}");
    assert!(r.get("synthetic").is_none() && providers(&r).iter().all(|p| p["synthetic"] == false));
    let left = r["left_out"].to_string();
    assert!(["withings", "polar", "garmin"].iter().all(|p| left.contains(p)) && left.contains("never shown beside your own"), "{left}");
    whole(&r);
    let roles: Vec<&str> = r["providers"][0]["sections"].as_array().unwrap().iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["sleep", "sleep_score", "readiness", "activity"]);
    // A night as people ask about it: minutes from Oura's seconds, local clock times.
    let sleep = &r["providers"][0]["sections"][0];
    let cols: Vec<&str> = sleep["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(&cols[..6], ["day", "type", "bed", "up", "total_min", "deep_min"]);
    let truth = twin.state.oura.lock().unwrap().clone();
    let night = vitals_twin::oura::expected(&truth, "sleep", date(r["from"].as_str().unwrap()), date(r["today"].as_str().unwrap()));
    let first = &sleep["rows"][0];
    assert_eq!(first[4].as_f64().unwrap(), night[0]["total_sleep_duration"].as_f64().unwrap() / 60.0, "{first} vs {}", night[0]);
    let bed = night[0]["bedtime_start"].as_str().unwrap();
    assert_eq!(first[2].as_str().unwrap(), &bed[11..16], "the bedtime in -06:00, as the twin's person wrote it");
    assert!(sleep["series"].as_str().unwrap().contains("heart_rate: ") && sleep["series"].as_str().unwrap().contains("one per 300 s"));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_connected_account_keeps_its_limits_and_says_things_once() {
    let twin = twin().await;
    let (s, _login) = all_providers(&twin, "economy", &[]).await;
    let r = s.ok("vitals_today", json!({})).await;
    let names: Vec<&str> = providers(&r).iter().map(|p| p["provider"].as_str().unwrap()).collect();
    // Every provider of the registry read over the web, connected, but the opt-in one nobody connected (Garmin Connect).
    let connected: Vec<&str> = web_providers().filter(|s| s.connection.session().is_none_or(|s| !s.explicit)).map(|s| s.name).collect();
    assert_eq!(names, connected);
    assert!(names.contains(&"whoop"), "{names:?}");
    assert!(r.get("synthetic").is_none() && r.get("left_out").is_none(), "{r}");
    whole(&r);
    let (rate_limited, peak) = {
        let g = twin.state.garmin.lock().unwrap();
        (g.rate_limited, g.peak_in_flight)
    };
    assert_eq!(rate_limited, 0, "Garmin was never asked past its two requests in flight, across the four sections");
    assert!(peak <= 2, "{peak}");
    let garmin = providers(&r).into_iter().find(|p| p["provider"] == "garmin").unwrap().clone();
    let said = garmin.to_string();
    assert_eq!(said.matches("exchanged for an access token").count(), 1, "the key's exchange is said once: {said}");
    assert!(garmin["notices"]["credential_refreshed"].is_string(), "{garmin}");
    // The latest weigh-in: a week back is enough for a daily weigher, and one window reads it.
    let weigh_in = providers(&r)[1]["sections"].as_array().unwrap().iter().find(|x| x["role"] == "weigh_in").unwrap().clone();
    assert_eq!(weigh_in["rows"].as_array().unwrap().len(), 1);
    assert!(weigh_in["range"].as_str().unwrap().contains("the last 7 days"), "{weigh_in}");
    // days=1: last night and today, a few thousand characters a provider.
    let one = s.ok("vitals_today", json!({"days": 1})).await;
    whole(&one);
    assert!(one["providers"][0]["sections"][0]["rows"].as_array().unwrap().len() <= 3);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sample_data_only_when_nothing_is_connected_and_said_once() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let r = s.ok("vitals_today", json!({"days": 2})).await;
    assert!(r["synthetic"].as_str().unwrap().starts_with("SAMPLE DATA"), "{r}");
    let all = providers(&r);
    let with_samples = vitals::providers::specs().filter(|s| s.connection.session().is_none_or(|s| !s.explicit)).count();
    assert_eq!(all.len(), with_samples, "every provider's samples, and no account: {r}");
    assert!(all.iter().all(|p| p["synthetic"] == true));
    assert_eq!(r.to_string().matches("SAMPLE DATA").count(), 1, "said once, for the whole report");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_report_over_max_chars_summarises_then_leaves_out_the_oldest_days_and_its_numbers_agree() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let full = s.ok("vitals_today", json!({"detail": "full"})).await;
    whole(&full);
    let full_chars = chars(&full);
    let headline = s.ok("vitals_today", json!({})).await;
    let headline_chars = chars(&headline);
    assert!(headline_chars < full_chars, "headline {headline_chars} < full {full_chars}");

    // Between the two: summarised to headline columns, and said with the true sizes.
    let max = (headline_chars + full_chars) / 2 + 400;
    let r = s.ok("vitals_today", json!({"detail": "full", "max_chars": max})).await;
    assert_eq!(r["detail"], "headline");
    let said = r["shortened"].as_str().unwrap();
    let n = numbers(said);
    assert_eq!(n[0], full_chars, "the size it says is the full report's: {said}");
    assert_eq!(n[1], max);
    assert!(n[0] > n[1] && chars(&r) <= max, "{} <= {max}: {said}", chars(&r));

    // Under the headline's size: the oldest days go, the newest stay, each section whole within them.
    // About two days less than the whole (a day of Oura is a few hundred characters).
    let max = headline_chars - 700;
    let r = s.ok("vitals_today", json!({"max_chars": max})).await;
    let said = r["shortened"].as_str().unwrap().to_string();
    assert!(chars(&r) <= max, "{} <= {max}", chars(&r));
    let n = numbers(&said);
    assert!(n.contains(&headline_chars) && n.contains(&max), "{said}");
    let from = &said[said.find("days before ").unwrap() + 12..][..10];
    for p in providers(&r) {
        for sec in p["sections"].as_array().unwrap().iter().filter(|x| x.get("range").is_none()) {
            assert!(sec["rows"].as_array().unwrap().iter().all(|row| row[0].as_str().unwrap() >= from), "{sec}");
        }
    }
    let e = s.err("vitals_today", json!({"max_chars": 10})).await;
    assert!(e.contains("`max_chars`") && e.contains("2000"), "{e}");
    let e = s.err("vitals_today", json!({"detail": "everything"})).await;
    assert!(e.contains("`detail`") && e.contains("`headline` or `full`"), "{e}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_query_says_its_sizes_like_with_like() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    // Documents without series to compact: the cut at a day boundary.
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_readiness", "start": "2025-06-01", "end": "2026-05-31", "max_chars": 5000})).await;
    let t = &a["notices"]["truncated"];
    assert_eq!(t["cause"], "max_chars", "{t}");
    let reason = t["reason"].as_str().unwrap();
    let n = numbers(reason);
    let (data, left, max) = (n[0], n[1], n[2]);
    assert_eq!(max, 5000, "{reason}");
    assert!(data > left && left < max, "{reason}");
    assert!(chars(&a["data"]) <= left, "the data it kept fits what it says is left: {} <= {left}", chars(&a["data"]));
    // A series too large raw: resampled, and the sentence says the data's size against the data's room.
    let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": "2026-06-01", "end": "2026-06-07", "max_chars": 20000})).await;
    let note = a["notices"]["resolution_auto"]["note"].as_str().unwrap();
    let n = numbers(note);
    let (raw, left, max) = (n[1], n[2], n[3]);
    assert_eq!(raw, a["notices"]["resolution_auto"]["raw_characters"].as_u64().unwrap() as usize, "{note}");
    assert!(raw > left && left < max && max == 20000, "{note}");
    assert!(chars(&a["data"]) <= left, "{note}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_slower_than_the_call_budget_answers_in_time_with_what_is_complete() {
    let twin = twin().await;
    twin.set_faults(Faults { latency_ms: 1_200, ..Default::default() });
    let s = connect(&twin, false, &[("VITALS_CALL_BUDGET_S", "3"), ("VITALS_CONCURRENCY", "2")]).await;
    let asked = json!({"collection": "oura.heartrate", "start": "2026-06-01", "end": "2026-06-30", "resolution": "1h"});
    let t0 = Instant::now();
    let a = s.ok("vitals_query", asked.clone()).await;
    let took = t0.elapsed();
    assert!(took < Duration::from_millis(4_500), "answered within the 3 s budget (and its sending): {took:?}");
    let t = &a["notices"]["truncated"];
    assert_eq!(t["cause"], "time_budget", "{t}");
    assert!(t["reason"].as_str().unwrap().contains("time budget of 3 s"), "{t}");
    let from = t["continue_from"].as_str().unwrap().to_string();
    assert!(from.as_str() > "2026-06-01" && from.as_str() < "2026-06-30", "some days complete, the rest to come: {from}");
    let end = a["range"]["end"].as_str().unwrap();
    assert!(end < from.as_str());
    // Going on from there: more days, none twice.
    let b = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": from, "end": "2026-06-30", "resolution": "1h"})).await;
    let first_b = records(&b["data"])[0]["timestamp"].as_str().unwrap().to_string();
    let last_a = records(&a["data"]).last().unwrap()["timestamp"].as_str().unwrap().to_string();
    assert!(first_b > last_a, "{first_b} after {last_a}");

    // The day's report: every section is cut by the same budget, said as such, in time.
    twin.set_faults(Faults { latency_ms: 5_000, ..Default::default() });
    let t0 = Instant::now();
    let r = s.ok("vitals_today", json!({"days": 1})).await;
    assert!(t0.elapsed() < Duration::from_millis(4_500), "{:?}", t0.elapsed());
    let errors = r["providers"][0]["errors"].to_string();
    assert!(errors.contains("time budget of 3 s") && errors.contains("oura.sleep, oura.daily_sleep"), "one sentence for the four: {errors}");
    twin.set_faults(Faults::default());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_login_still_waiting_answers_in_time_with_its_link_and_the_next_call_finishes_it() {
    let fx = Fixture::new("waiting").await;
    // A browser that opens and is never signed in to; it notes each time it is started.
    let opened = fx.dir.join("opened.log");
    std::fs::create_dir_all(&fx.dir).unwrap();
    let opener = fx.dir.join("opener.sh");
    std::fs::write(&opener, format!("#!/bin/sh\necho \"$1\" >> '{}'\n", opened.display())).unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let watcher = Watcher::default();
    let opener = opener.display().to_string();
    let s = fx.server(ClientLifecycleMode::Initialize, watcher.clone(), &[("VITALS_BROWSER", &opener), ("VITALS_CALL_BUDGET_S", "5")]).await;
    let mut params = CallToolRequestParams::new("vitals_connect").with_arguments(json!({"provider": "oura"}).as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"progressToken": "wait-1"})).unwrap());
    let t0 = Instant::now();
    let r = s.client.call_tool(params).await.unwrap().structured_content.unwrap();
    assert!(t0.elapsed() < Duration::from_millis(6_500), "{:?}", t0.elapsed());
    assert_eq!(r["state"], "waiting_for_browser", "{r}");
    let url = r["url"].as_str().unwrap().to_string();
    let message = r["message"].as_str().unwrap();
    assert!(message.starts_with("Still waiting for the login") && message.contains(&url) && message.contains("call vitals_connect again"), "{message}");
    let progress = watcher.progress.lock().unwrap().clone();
    assert!(progress.iter().any(|p| p.contains(&url)), "progress carries the link: {progress:?}");
    // The next call joins the same login (no second browser window), and finishes it.
    let visit = tokio::spawn({
        let url = url.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(800)).await;
            open_in_browser(&url).await
        }
    });
    let r = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(r["state"], "connected", "{r}");
    assert_eq!(visit.await.unwrap().0, 200);
    assert_eq!(std::fs::read_to_string(&opened).unwrap().lines().collect::<Vec<_>>(), [url.as_str()], "one browser window for one login");
    s.close().await;
}
