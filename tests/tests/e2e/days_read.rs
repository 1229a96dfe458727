//! Which days every tool reads (issue 49): last night and today's readiness, complete this
//! morning, are read by every tool and today's values still filling are marked partial; nothing
//! after today is claimed; every range a refusal suggests can itself be read, and an analysis
//! refused for a provider's reach says so; `tz` is read as vitals_query reads it.
use crate::common::*;
use jiff::civil::Date;
use serde_json::{json, Value};

fn after(d: Date, k: i64) -> Date {
    d.checked_add(jiff::Span::new().days(k)).unwrap()
}

fn notes(v: &Value) -> String {
    v["notes"].to_string()
}

/// The two days of "for example A to B" in a refusal, as it suggests them.
fn example(e: &str) -> (String, String) {
    let rest = &e[e.find("for example ").unwrap_or_else(|| panic!("no range suggested: {e}")) + "for example ".len()..];
    let words: Vec<&str> = rest.split_whitespace().collect();
    assert_eq!(words[1], "to", "{e}");
    (words[0].to_string(), words[2].trim_end_matches(['.', ',', ')']).to_string())
}

/// A whole-hour offset where it is early afternoon now: last night is over, this morning's readiness
/// is in, Oura's activity day of yesterday (4 am to 4 am) has ended and today's still fills, at
/// whatever hour the test runs (the suites' -06:00 is just past midnight at 06:00 UTC).
fn afternoon() -> (jiff::tz::TimeZone, String) {
    let hours = 14 - jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).hour();
    (jiff::tz::TimeZone::fixed(jiff::tz::offset(hours)), format!("{hours:+03}:00"))
}

#[tokio::test(flavor = "multi_thread")]
async fn last_night_is_read_by_every_tool_and_today_s_values_so_far_are_marked_partial() {
    let (zone, offset) = afternoon();
    let today = || jiff::Timestamp::now().to_zoned(zone.clone()).date();
    let ago = |k: i64| after(today(), -k);
    let twin = twin_with(OuraConfig { today_synced: true, tz: zone.clone(), ..Default::default() }).await;
    let s = connect(&twin, false, &[("VITALS_TZ", &offset)]).await;
    let t = ds(today());

    // The daily view shows last night under today, the day it ended, beside today's steps so far.
    let v = s.ok("vitals_daily", json!({"start": t, "end": t})).await;
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0]["day"], t);
    let cfg = twin.state.oura.lock().unwrap().clone();
    let night = vitals_twin::oura::expected(&cfg, "sleep", today(), today())
        .into_iter()
        .filter(|r| r["type"] == "long_sleep")
        .max_by_key(|r| r["total_sleep_duration"].as_i64().unwrap())
        .expect("the twin has last night");
    let slept = &rows[0]["sleep_total_min"];
    assert_eq!(slept["from"], "oura.sleep.total_sleep_duration");
    let want = night["total_sleep_duration"].as_f64().unwrap() / 60.0;
    assert!((slept["value"].as_f64().unwrap() - want).abs() < 0.001, "last night, not the night before: {slept} vs {want}");
    assert!(slept.get("partial").is_none(), "a night that ended is complete: {slept}");
    assert!(rows[0]["readiness_score"]["value"].is_number() && rows[0]["readiness_score"].get("partial").is_none(), "{}", rows[0]);
    assert_eq!(rows[0]["steps"]["partial"], true, "steps so far: {}", rows[0]);
    assert!(notes(&v).contains("partial") && notes(&v).contains(&t), "{}", notes(&v));
    assert!(!v["fetches"].to_string().contains("\"partial\""), "said once, not again in the fetches");

    // vitals_query says today's record of a day's totals is the day so far, and nothing of a night.
    let act = s.ok("vitals_query", json!({"collection": "oura.daily_activity", "day": t})).await;
    assert_eq!(act["count"], 1, "{act}");
    assert!(act["notices"]["partial"].as_str().unwrap().contains(&t), "{}", act["notices"]);
    let sleep = s.ok("vitals_query", json!({"collection": "oura.sleep", "day": t})).await;
    assert!(sleep["count"].as_u64().unwrap() >= 1 && sleep["notices"].get("partial").is_none(), "{}", sleep["notices"]);
    let before = s.ok("vitals_query", json!({"collection": "oura.daily_activity", "day": ds(ago(1))})).await;
    assert!(before["notices"].get("partial").is_none(), "yesterday is over: {}", before["notices"]);

    // The analyses read today's readiness (complete) and keep today's steps (still filling) out, said.
    let readiness = "oura.daily_readiness.score";
    let tr = s.ok("vitals_trend", json!({"metric": readiness, "start": ds(ago(29)), "end": t})).await;
    assert_eq!(tr["range"]["end"], t, "{tr}");
    assert!(tr.get("notes").is_none(), "nothing was moved: {tr}");
    assert_eq!(tr["days"], 30, "30 days with a value, today's included: {tr}");
    let c = s.ok("vitals_compare", json!({"metric": readiness, "a_start": ds(ago(27)), "a_end": ds(ago(14)), "b_start": ds(ago(13)), "b_end": t})).await;
    assert_eq!(c["b"]["end"], t);
    assert_eq!(c["days"]["b"], 14, "{c}");
    let r = s.ok("vitals_relate", json!({"x": readiness, "y": "oura.daily_activity.steps", "start": ds(ago(90)), "end": t})).await;
    assert_eq!(r["range"]["end"], t);
    assert!(notes(&r).contains(&format!("up to {}", ds(ago(1)))) && notes(&r).contains("the day so far"), "{}", notes(&r));
    let steps = s.ok("vitals_trend", json!({"metric": "oura.daily_activity.steps", "start": ds(ago(29)), "end": t})).await;
    assert_eq!(steps["range"]["end"], ds(ago(1)), "{steps}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn days_after_today_are_refused_and_a_range_past_today_stops_at_today_said() {
    let twin = twin().await;
    let s = connect(&twin, true, &[("VITALS_GARMIN_SENSITIVE", "menstrual_cycle")]).await;
    let (t, tomorrow) = (today(), after(today(), 1));
    let q = |mut args: Value| {
        args["collection"] = json!("oura.daily_sleep");
        args
    };
    for (args, param) in
        [(json!({"start": ds(tomorrow), "end": ds(after(t, 3))}), "start"), (json!({"day": ds(tomorrow)}), "day"), (json!({"end": ds(after(t, 10))}), "end")]
    {
        let e = s.err("vitals_query", q(args.clone())).await;
        assert!(e.starts_with(&format!("`{param}`")) && e.contains("after today") && e.contains(&format!("up to {t}")), "{args}: {e}");
    }
    let a = s.ok("vitals_query", q(json!({"start": ds(ago(3)), "end": ds(after(t, 5))}))).await;
    assert_eq!(a["range"]["end"], ds(t), "the range claims no day after today: {}", a["range"]);
    assert!(a["notices"]["after_today"].as_str().unwrap().contains("stops at today"), "{}", a["notices"]);
    assert!(a["notices"].get("empty").is_none(), "{}", a["notices"]);

    // The daily view and the analyses alike.
    let e = s.err("vitals_daily", json!({"start": ds(tomorrow), "end": ds(after(t, 2))})).await;
    assert!(e.starts_with("`start`") && e.contains("after today"), "{e}");
    let v = s.ok("vitals_daily", json!({"start": ds(ago(2)), "end": ds(after(t, 4)), "fields": ["sleep_score"]})).await;
    assert_eq!(v["range"]["end"], ds(t));
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);
    assert!(notes(&v).contains("after today"), "{}", notes(&v));
    let e = s.err("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": ds(tomorrow), "end": ds(after(t, 9))})).await;
    assert!(e.starts_with("`start`") && e.contains("after today"), "{e}");
    let compare = json!({"metric": "oura.daily_sleep.score", "a_start": ds(ago(20)), "a_end": ds(ago(10)), "b_start": ds(tomorrow), "b_end": ds(after(t, 9))});
    assert!(s.err("vitals_compare", compare).await.starts_with("`b_start`"));

    // Garmin lists the cycles it predicts: the one collection whose days reach past today.
    let c = s.ok("vitals_query", json!({"collection": "garmin.menstrual_cycle", "start": ds(tomorrow), "end": ds(after(t, 90))})).await;
    let rows = records(&c["data"]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r["predicted"] == true), "{c}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_range_a_refusal_suggests_can_be_read_and_a_provider_s_reach_is_said() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    // Two years of a collection Polar keeps 28 days: answered from its first day, said, where it
    // was refused with a year that Polar's 28 days then refused again.
    let first = ago(27);
    let hr = s.ok("vitals_query", json!({"collection": "polar.heartrate", "start": ds(ago(730)), "end": ds(ago(1)), "fields": ["bpm"]})).await;
    assert_eq!(hr["range"]["start"], ds(first), "{}", hr["range"]);
    assert_eq!(hr["notices"]["beyond_retention"]["first_reachable"], ds(first));
    // A range over a provider's longest (Garmin: 366 days) that ends after today: what it suggests is read.
    let e = s.err("vitals_query", json!({"collection": "garmin.daily_summary", "start": ds(ago(500)), "end": ds(after(today(), 30))})).await;
    assert!(e.starts_with("`start`/`end`") && e.contains("at most 366"), "{e}");
    let (a, b) = example(&e);
    assert!(date(&b) <= today(), "{e}");
    s.ok("vitals_query", json!({"collection": "garmin.daily_summary", "start": a, "end": b, "fields": ["steps"]})).await;

    // An analysis that reaches before a provider's first day is refused with why, and what it suggests is analysed.
    let metric = "polar.sleep.sleep_score";
    let e = s.err("vitals_trend", json!({"metric": metric, "start": ds(ago(90)), "end": ds(today())})).await;
    assert!(e.starts_with("`start`") && e.contains("keeps polar.sleep only 28 days") && e.contains(&ds(first)), "{e}");
    let (a, b) = example(&e);
    assert_eq!((a.as_str(), b.as_str()), (ds(first).as_str(), ds(today()).as_str()), "{e}");
    let t = s.ok("vitals_trend", json!({"metric": metric, "start": a, "end": b})).await;
    assert_eq!(t["range"]["start"], ds(first));
    let e = s.err("vitals_relate", json!({"x": "oura.daily_sleep.score", "y": metric, "start": ds(ago(60)), "end": ds(ago(1))})).await;
    assert!(e.starts_with("`start`") && e.contains("y: Polar keeps polar.sleep only 28 days"), "{e}");
    let (a, b) = example(&e);
    s.ok("vitals_relate", json!({"x": "oura.daily_sleep.score", "y": metric, "start": a, "end": b})).await;
    // A comparison needs the history before its periods: 28 days can never hold it, and the answer says so.
    let e = s.err("vitals_compare", json!({"metric": metric, "a_start": ds(ago(20)), "a_end": ds(ago(11)), "b_start": ds(ago(10)), "b_end": ds(ago(1))})).await;
    assert!(e.starts_with("`a_start`") && e.contains("keeps polar.sleep only 28 days") && e.contains("no comparison"), "{e}");
    assert!(!e.contains("for example"), "no range can work, so none is suggested: {e}");
    // 180 days can: periods too early are refused with two that fit, which are compared.
    let load = "polar.cardio_load.cardio_load";
    let e = s.err("vitals_compare", json!({"metric": load, "a_start": ds(ago(170)), "a_end": ds(ago(150)), "b_start": ds(ago(20)), "b_end": ds(ago(1))})).await;
    assert!(e.starts_with("`a_start`") && e.contains("keeps polar.cardio_load only 180 days"), "{e}");
    let rest = &e[e.find("period A ").unwrap() + "period A ".len()..];
    let w: Vec<&str> = rest.split_whitespace().collect();
    let (a0, a1, b0, b1) = (w[0], w[2], w[6], w[8].trim_end_matches('.'));
    let c = s.ok("vitals_compare", json!({"metric": load, "a_start": a0, "a_end": a1, "b_start": b0, "b_end": b1})).await;
    assert!(notes(&c).contains("The history starts on"), "the history before A is what Polar keeps, said: {c}");
    s.close().await;
}

/// A zone whose day differs from the server's own (`-06:00`) right now, so a day read in it is
/// another day than the server would have read.
fn another_zone() -> (&'static str, Date) {
    let day = |h: i8| jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(h))).date();
    if day(14) != today() {
        ("+14:00", day(14))
    } else {
        ("-12:00", day(-12))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tz_is_read_by_the_day_s_report_the_daily_view_and_the_analyses_as_vitals_query_reads_it() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let (tz, its_today) = another_zone();
    assert_ne!(its_today, today());
    let r = s.ok("vitals_today", json!({"days": 1, "tz": tz})).await;
    assert_eq!((r["today"].as_str().unwrap(), r["tz"].as_str().unwrap()), (ds(its_today).as_str(), tz), "{r:.400}");
    let sections = r["providers"].as_array().unwrap().iter().flat_map(|p| p["sections"].as_array().unwrap().iter());
    let raws: Vec<&str> = sections.map(|s| s["raw"].as_str().unwrap()).collect();
    assert!(!raws.is_empty() && raws.iter().all(|raw| raw.contains(&format!("\"tz\":\"{tz}\""))), "each raw call reads the same days: {raws:?}");
    let d = s.ok("vitals_daily", json!({"start": ds(its_today), "end": ds(its_today), "tz": tz, "fields": ["sleep_score"]})).await;
    assert_eq!((d["range"]["end"].as_str().unwrap(), d["tz"].as_str().unwrap()), (ds(its_today).as_str(), tz));
    // Weigh-ins are filed under the day they fall on in the zone asked.
    let w = |tz: Option<&str>| {
        let mut a = json!({"start": ds(ago(20)), "end": ds(ago(10)), "fields": ["weight_kg"]});
        if let Some(tz) = tz {
            a["tz"] = json!(tz);
        }
        a
    };
    let here = s.ok("vitals_daily", w(None)).await;
    let there = s.ok("vitals_daily", w(Some("+12:00"))).await;
    assert!(here.get("tz").is_none(), "said only when sent");
    assert_ne!(here["rows"], there["rows"], "a morning weigh-in at -06:00 falls on the next day at +12:00");
    let t = s.ok("vitals_trend", json!({"metric": "withings.measurements.weight_kg", "start": ds(ago(60)), "end": ds(ago(1)), "tz": "+12:00"})).await;
    assert_eq!(t["tz"], "+12:00");
    // A bad zone is refused in vitals_query's own words by every tool.
    let said = s.err("vitals_query", json!({"collection": "oura.daily_sleep", "tz": "Mars/Olympus"})).await;
    assert!(said.starts_with("`tz`") && said.contains("Send an IANA name"), "{said}");
    for (tool, args) in [
        ("vitals_today", json!({})),
        ("vitals_daily", json!({"start": ds(ago(3)), "end": ds(ago(1))})),
        ("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": ds(ago(60)), "end": ds(ago(1))})),
        (
            "vitals_compare",
            json!({"metric": "oura.daily_sleep.score", "a_start": ds(ago(20)), "a_end": ds(ago(11)), "b_start": ds(ago(10)), "b_end": ds(ago(1))}),
        ),
        ("vitals_relate", json!({"x": "oura.daily_sleep.score", "y": "oura.daily_activity.steps", "start": ds(ago(60)), "end": ds(ago(1))})),
    ] {
        let mut args = args;
        args["tz"] = json!("Mars/Olympus");
        assert_eq!(s.err(tool, args).await, said, "{tool}");
    }
    s.close().await;
}
