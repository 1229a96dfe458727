//! The analyses end to end on the twins (issue 24): a relation across two providers, a compare on
//! sample data whose score never moves, a trend over a fetch that was cut (refused), each verdict
//! on data built to give it (issue 41), and the parameter errors. The methods themselves are
//! judged by `server/engine/tests/analysis_simulation.rs`.
use crate::common::*;
use serde_json::{json, Value};

fn verdict(v: &Value) -> &str {
    v["verdict"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn weight_and_steps_of_two_providers_are_related_with_their_method_and_rules() {
    let twin = twin().await;
    let (s, _withings) = all_providers(&twin, "relate", &[]).await;
    let (start, end) = (ds(ago(150)), ds(ago(1)));
    let r = s.ok("vitals_relate", json!({"x": "withings.measurements.weight_kg", "y": "oura.daily_activity.steps", "start": start, "end": end})).await;
    assert_eq!(r["synthetic"], false, "both providers are connected: {r}");
    assert!(r["pairs"].as_u64().unwrap() > 60, "150 days of daily weigh-ins and steps give pairs: {r}");
    assert!(r["first_pair"]["x_day"].as_str().unwrap() >= start.as_str());
    assert_eq!(r["first_pair"]["x_day"], r["first_pair"]["y_day"], "lag 0 pairs a day with itself");
    let rules = r["daily_rule"].to_string();
    assert!(rules.contains("withings.measurements: the first weigh-in of the day") && rules.contains("oura.daily_activity"), "{rules}");
    assert_eq!(r["method"]["weekday_means_removed"], true);
    assert!(r["method"]["effective_pairs"].as_f64().unwrap() > 0.0);
    let fetched: Vec<&str> = r["fetches"].as_array().unwrap().iter().map(|f| f["collection"].as_str().unwrap()).collect();
    assert!(fetched.contains(&"withings.measurements") && fetched.contains(&"oura.daily_activity"), "{fetched:?}");
    assert!(!r["reading"].as_str().unwrap().is_empty());
    if verdict(&r) != "cannot_tell" {
        let [lo, hi] = [r["interval"][0].as_f64().unwrap(), r["interval"][1].as_f64().unwrap()];
        let c = r["correlation"].as_f64().unwrap();
        assert!(lo <= c && c <= hi, "{r}");
    }

    // A trend and a compare over the same connected data answer with a verdict and the method.
    let t = s.ok("vitals_trend", json!({"metric": "withings.measurements.weight_kg", "start": start, "end": end})).await;
    assert!(t["method"]["name"].as_str().unwrap().contains("autocorrelation"));
    let c = s
        .ok(
            "vitals_compare",
            json!({"metric": "oura.daily_readiness.score", "a_start": ds(ago(56)), "a_end": ds(ago(29)), "b_start": ds(ago(28)), "b_end": ds(ago(1))}),
        )
        .await;
    assert_ne!(verdict(&c), "cannot_tell", "a varying score with 120 days of history is judged: {c}");
    assert_eq!(c["history"]["end"], ds(ago(57)));
    assert!(c["noise_band"].as_f64().unwrap() > 0.0 && c["typical_daily_change"].as_f64().unwrap() > 0.0, "{c}");
    if verdict(&c) == "within_noise" {
        assert!(c["reading"].as_str().unwrap().contains("not evidence of a change"), "{c}");
    }
    s.close().await;
}

#[tokio::test]
async fn sample_data_whose_value_never_moves_cannot_be_told_and_is_labelled() {
    let twin = twin().await;
    // Oura's own sandbox (the twin's), whose contributor scores never move, as the real one's do not.
    let s = connect(&twin, true, &[("VITALS_OURA_SANDBOX", "official")]).await;
    let args = json!({"metric": "oura.daily_readiness.contributors.hrv_balance", "a_start": ds(ago(40)), "a_end": ds(ago(21)), "b_start": ds(ago(20)), "b_end": ds(ago(1))});
    let c = s.ok("vitals_compare", args).await;
    assert_eq!(verdict(&c), "cannot_tell", "{c}");
    assert!(c["why"].as_str().unwrap().contains("every value is the same"), "{c}");
    assert_eq!(c["synthetic"], true, "sample data is said: {c}");
    // Once for the whole answer, in `notes`, not once per fetch.
    assert!(c["notes"][0].as_str().unwrap().starts_with("SAMPLE DATA"), "{c}");
    assert_eq!(c.to_string().matches("SAMPLE DATA").count(), 1, "{c}");
    // Today is analysed only where its value is complete: last night's score is read, but a day's
    // steps so far are not (an end on today moves back to yesterday, said).
    let t = s.ok("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": ds(ago(60)), "end": ds(today())})).await;
    assert_eq!(t["range"]["end"], ds(today()), "{t}");
    let t = s.ok("vitals_trend", json!({"metric": "oura.daily_activity.steps", "start": ds(ago(60)), "end": ds(today())})).await;
    assert_eq!(t["range"]["end"], ds(ago(1)));
    assert!(t["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("today") && n.as_str().unwrap().contains("the day so far")), "{t}");
    s.close().await;
}

#[tokio::test]
async fn a_trend_over_a_fetch_that_was_cut_is_refused_not_analysed() {
    let twin = twin().await;
    let s = connect(&twin, false, &[("VITALS_PAGE_CAP", "1")]).await;
    let e = s.err("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": ds(ago(200)), "end": ds(ago(1))})).await;
    assert!(e.contains("did not complete") && e.contains("truncated") && e.contains("none was made"), "{e}");
    s.close().await;
}

#[tokio::test]
async fn bad_metrics_ranges_and_lags_are_refused_naming_the_parameter() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let a = |m: &str| json!({"metric": m, "start": ds(ago(60)), "end": ds(ago(1))});
    let e = s.err("vitals_trend", a("oura.heartrate.bpm")).await;
    assert!(e.starts_with("`metric`: oura.heartrate is not a daily metric") && e.contains("oura.daily_sleep"), "{e}");
    let e = s.err("vitals_trend", a("oura.daily_sleep.sore")).await;
    assert!(e.contains("no field \"sore\"") && e.contains("score"), "{e}");
    let e = s.err("vitals_trend", a("readiness")).await;
    assert!(e.starts_with("`metric`:") && e.contains("provider.collection.field"), "{e}");
    let e = s.err("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": ds(ago(1)), "end": ds(ago(9))})).await;
    assert!(e.starts_with("`end`:"), "{e}");
    let e = s.err("vitals_trend", json!({"metric": "oura.daily_activity.steps", "start": ds(today()), "end": ds(today())})).await;
    assert!(e.starts_with("`start`:") && e.contains("today is not over"), "{e}");
    let e = s.err("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": "2020-01-01", "end": ds(ago(1))})).await;
    assert!(e.contains("at most 1096 days"), "{e}");
    let e = s
        .err("vitals_relate", json!({"x": "oura.daily_sleep.score", "y": "oura.daily_activity.steps", "start": ds(ago(90)), "end": ds(ago(1)), "lag": 9}))
        .await;
    assert!(e.starts_with("`lag`:"), "{e}");
    let e = s.err("vitals_relate", json!({"x": "oura.daily_sleep.score", "y": "oura.daily_sleep.score", "start": ds(ago(90)), "end": ds(ago(1))})).await;
    assert!(e.starts_with("`y`:"), "{e}");
    let overlap = json!({"metric": "oura.daily_sleep.score", "a_start": ds(ago(30)), "a_end": ds(ago(10)), "b_start": ds(ago(15)), "b_end": ds(ago(1))});
    assert!(s.err("vitals_compare", overlap).await.starts_with("`b_start`:"));
    s.close().await;
}

#[tokio::test]
async fn the_daily_view_keeps_two_providers_side_by_side_with_where_each_value_came_from() {
    let twin = twin().await;
    let (s, _withings) = all_providers(&twin, "daily-view", &[]).await;
    let (start, end) = (ds(ago(14)), ds(ago(1)));
    let v = s.ok("vitals_daily", json!({"start": start, "end": end})).await;
    assert_eq!(v["synthetic"], false, "{v:.600}");
    // Every provider of the registry read over the web with daily columns, in the registry's order.
    let with_columns: Vec<&str> = web_providers().filter(|s| !s.daily_view.is_empty()).map(|s| s.name).collect();
    assert_eq!(v["providers"], json!(with_columns));
    assert!(with_columns.len() >= 5, "{with_columns:?}");
    assert!(v["errors"].is_null(), "{}", v["errors"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14, "one row per day, every day");
    assert_eq!(rows[0]["day"], start);
    let col = |name: &str| v["columns"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    // Steps: a watch worn all day (Polar, Garmin) before the ring, and the ring before Withings; the others beside it.
    let steps = col("steps");
    assert!(steps["shown"].as_str().unwrap().contains("watch worn all day"));
    assert!(steps["days_measured_twice"].as_u64().unwrap() >= 10, "{steps}");
    let day = rows.iter().find(|r| r["steps"]["also"].as_array().is_some_and(|a| a.len() >= 2)).expect("a day of steps from three providers");
    let from = day["steps"]["from"].as_str().unwrap();
    assert!(from == "polar.activity.steps" || from == "garmin.daily_summary.steps", "{}", day["steps"]);
    let also: Vec<&str> = day["steps"]["also"].as_array().unwrap().iter().map(|a| a["from"].as_str().unwrap()).collect();
    assert!(also.contains(&"oura.daily_activity.steps"), "{also:?}");
    // A converted unit says so in the cell.
    let slept = rows.iter().find_map(|r| {
        let c = &r["sleep_total_min"];
        (c["from"] == "oura.sleep.total_sleep_duration").then(|| c.clone())
    });
    let slept = slept.expect("Oura's sleep shown first");
    assert_eq!(slept["converted"], "seconds ÷ 60");
    assert!(slept["value"].as_f64().unwrap() > 60.0, "minutes, not seconds or hours: {slept}");
    // Weight: the scale's provider first, Garmin's copy beside it when both have the day.
    assert_eq!(col("weight_kg")["sources"][0], "withings.measurements.weight_kg");
    // Only some columns, and an unknown one is refused naming the parameter.
    let only = s.ok("vitals_daily", json!({"start": start, "end": end, "fields": ["hrv_ms"]})).await;
    assert_eq!(only["columns"].as_array().unwrap().len(), 1);
    assert_eq!(only["rows"][0].as_object().unwrap().len(), 2, "day and hrv_ms");
    let e = s.err("vitals_daily", json!({"start": start, "end": end, "fields": ["sleep"]})).await;
    assert!(e.starts_with("`fields`:") && e.contains("sleep_total_min"), "{e}");
    let e = s.err("vitals_daily", json!({"start": ds(ago(200)), "end": end})).await;
    assert!(e.starts_with("`end`:") && e.contains("92"), "{e}");
    s.close().await;
}

#[tokio::test]
async fn the_daily_view_of_sample_data_is_labelled_and_never_mixed_with_a_connected_account() {
    let twin = twin().await;
    let sample = connect(&twin, true, &[]).await;
    let v = sample.ok("vitals_daily", json!({"start": ds(ago(7)), "end": ds(ago(1))})).await;
    assert_eq!(v["synthetic"], true);
    sample.close().await;
    // Oura connected, the others not: only Oura is read, the others are said.
    let oura = connect(&twin, false, &[]).await;
    let v = oura.ok("vitals_daily", json!({"start": ds(ago(7)), "end": ds(ago(1))})).await;
    assert_eq!(v["synthetic"], false);
    assert_eq!(v["providers"], json!(["oura"]));
    assert!(v["left_out"].to_string().contains("not mixed with your own"), "{}", v["left_out"]);
    oura.close().await;
}

/// Each verdict is the one the data was built to give, and the opposite where nothing was built:
/// readiness stepped up by 25 points (about 2.5 of its daily deviations) is outside the noise,
/// unstepped within it; a rise of 0.4 point a day over 90 days is rising, none is flat; readiness
/// against sleep (the twin makes both scores of a day from the same seed) is related, readiness
/// against Withings' weight (made apart) is not. Fixed dates: the twin's days, so the verdicts, are
/// the same on every run.
#[tokio::test]
async fn each_verdict_is_the_one_the_data_was_built_to_give() {
    use vitals_twin::oura::ScoreShape;
    let day = |s: &str| s.parse::<jiff::civil::Date>().unwrap();
    let compare =
        json!({"metric": "oura.daily_readiness.score", "a_start": "2026-04-03", "a_end": "2026-04-30", "b_start": "2026-05-01", "b_end": "2026-05-28"});
    let trend = json!({"metric": "oura.daily_readiness.score", "start": "2026-03-01", "end": "2026-05-29"});

    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let c = s.ok("vitals_compare", compare.clone()).await;
    assert_eq!(verdict(&c), "within_noise", "no step was made: {c}");
    let t = s.ok("vitals_trend", trend.clone()).await;
    assert_eq!(verdict(&t), "flat_within_noise", "no slope was made: {t}");
    s.close().await;

    let stepped =
        twin_with(vitals_twin::oura::OuraConfig { score_shape: ScoreShape { from: Some(day("2026-05-01")), step: 25, per_day: 0.0 }, ..Default::default() })
            .await;
    let s = connect(&stepped, false, &[]).await;
    let c = s.ok("vitals_compare", compare).await;
    assert_eq!(verdict(&c), "outside_noise", "a step of 25 points: {c}");
    assert!(c["difference_b_minus_a"].as_f64().unwrap() > 15.0, "{c}");
    s.close().await;

    let sloped =
        twin_with(vitals_twin::oura::OuraConfig { score_shape: ScoreShape { from: Some(day("2026-03-01")), step: -20, per_day: 0.4 }, ..Default::default() })
            .await;
    let s = connect(&sloped, false, &[]).await;
    let t = s.ok("vitals_trend", trend).await;
    assert_eq!(verdict(&t), "rising", "0.4 point a day: {t}");
    s.close().await;

    let (s, _withings) = all_providers(&twin, "verdicts", &[]).await;
    let (start, end) = ("2026-01-01", "2026-05-31");
    let r = s.ok("vitals_relate", json!({"x": "oura.daily_readiness.score", "y": "oura.daily_sleep.score", "start": start, "end": end})).await;
    assert_eq!(verdict(&r), "outside_noise", "two scores of the same seed: {r}");
    let r = s.ok("vitals_relate", json!({"x": "oura.daily_readiness.score", "y": "withings.measurements.weight_kg", "start": start, "end": end})).await;
    assert_eq!(verdict(&r), "within_noise", "made apart: {r}");
    s.close().await;
}

/// The group a local day falls in, as `vitals_daily`'s `group` names it.
fn group_of(group: &str, day: &str) -> String {
    let d: jiff::civil::Date = day.parse().unwrap();
    match group {
        "week" => format!("{}-W{:02}", d.iso_week_date().year(), d.iso_week_date().week()),
        "month" => format!("{}-{:02}", d.year(), d.month()),
        "weekday" => format!("{:?}", d.weekday()),
        _ => if matches!(d.weekday(), jiff::civil::Weekday::Saturday | jiff::civil::Weekday::Sunday) { "weekend" } else { "weekdays" }.into(),
    }
}

/// "My average sleep this week", "weekdays against weekends", "monthly steps": each group of the
/// daily view is the mean, lowest, highest and count of the values its own day rows show, with the
/// days that had none said, over a longer range than the day rows allow.
#[tokio::test]
async fn the_daily_view_groups_its_days_by_week_month_weekday_and_weekend() {
    let twin = twin().await;
    let (s, _withings) = all_providers(&twin, "groups", &[]).await;
    let (start, end) = (ds(ago(20)), ds(ago(1)));
    let daily = s.ok("vitals_daily", json!({"start": start, "end": end})).await;
    let rows = daily["rows"].as_array().unwrap().clone();
    let columns: Vec<String> = daily["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect();
    for group in ["week", "month", "weekday", "weekend"] {
        let g = s.ok("vitals_daily", json!({"start": start, "end": end, "group": group})).await;
        assert!(g.get("rows").is_none() && g["group"] == group, "groups instead of days: {g}");
        assert!(g["notes"].to_string().contains("not a test"), "{}", g["notes"]);
        let groups = g["groups"].as_array().unwrap();
        assert_eq!(groups.iter().map(|x| x["days"].as_u64().unwrap()).sum::<u64>(), rows.len() as u64, "every day in one group");
        for grp in groups {
            let mine: Vec<&Value> = rows.iter().filter(|r| group_of(group, r["day"].as_str().unwrap()) == grp["group"]).collect();
            assert_eq!(grp["days"].as_u64(), Some(mine.len() as u64), "{grp}");
            assert_eq!((&grp["start"], &grp["end"]), (&mine[0]["day"], &mine[mine.len() - 1]["day"]));
            for c in &columns {
                let xs: Vec<f64> = mine.iter().filter_map(|r| r[c]["value"].as_f64()).collect();
                let cell = &grp[c.as_str()];
                if xs.is_empty() {
                    assert!(cell.is_null(), "{group} {} {c}: {cell}", grp["group"]);
                    continue;
                }
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                assert!((cell["mean"].as_f64().unwrap() - mean).abs() < 0.002, "{group} {} {c}: {cell} against {xs:?}", grp["group"]);
                assert_eq!(cell["min"].as_f64(), xs.iter().copied().reduce(f64::min), "{c}: {cell}");
                assert_eq!(cell["max"].as_f64(), xs.iter().copied().reduce(f64::max), "{c}: {cell}");
                assert_eq!(cell["n"].as_u64(), Some(xs.len() as u64));
                assert_eq!(cell["missing"].as_u64().unwrap_or(0), (mine.len() - xs.len()) as u64, "{c}: {cell}");
            }
        }
    }
    // Monthly steps over most of a year: beyond the 92 days of day rows, within a grouped view's year.
    let long = json!({"start": ds(ago(200)), "end": end, "fields": ["steps"]});
    let e = s.err("vitals_daily", long.clone()).await;
    assert!(e.contains("`end`") && e.contains("366 with `group`"), "{e}");
    let mut monthly = long.clone();
    monthly["group"] = json!("month");
    let m = s.ok("vitals_daily", monthly).await;
    assert_eq!(m["groups"].as_array().unwrap().iter().map(|x| x["days"].as_u64().unwrap()).sum::<u64>(), 200);
    assert!(m["groups"].as_array().unwrap().iter().all(|x| x["steps"]["n"].as_u64().unwrap() > 0), "{m}");
    let e = s.err("vitals_daily", json!({"start": start, "end": end, "group": "fortnight"})).await;
    assert!(e.contains("`group`") && e.contains("`week`"), "{e}");
    s.close().await;
}

/// The first and last weeks a `cannot_tell` trend from `a` to `b` describes, held to the days'
/// own values (`by_day`: the value the daily rule picks, by local day).
fn assert_weeks(t: &Value, by_day: &std::collections::BTreeMap<String, f64>, a: jiff::civil::Date, b: jiff::civil::Date) {
    let w = &t["first_and_last_weeks"];
    assert!(w["note"].as_str().unwrap().contains("not a test"), "{t}");
    let week = |x: jiff::civil::Date, y: jiff::civil::Date| -> (f64, u64) {
        let xs: Vec<f64> = by_day.range(ds(x)..=ds(y)).map(|(_, v)| *v).collect();
        (xs.iter().sum::<f64>() / xs.len() as f64, xs.len() as u64)
    };
    let (first_end, last_start) = (a.checked_add(jiff::Span::new().days(6)).unwrap(), b.checked_sub(jiff::Span::new().days(6)).unwrap());
    let (f, l) = (week(a, first_end), week(last_start, b));
    for (got, (mean, n), from, to) in [(&w["first_week"], f, a, first_end), (&w["last_week"], l, last_start, b)] {
        assert_eq!((got["start"].as_str(), got["end"].as_str(), got["n"].as_u64()), (Some(ds(from).as_str()), Some(ds(to).as_str()), Some(n)), "{w}");
        assert!((got["mean"].as_f64().unwrap() - mean).abs() < 0.001, "{w} against {mean}");
    }
    assert!((w["change"].as_f64().unwrap() - (l.0 - f.0)).abs() < 0.002, "{w}");
}

/// The first record of each local day of `collection` (by `time_key`), its `field`.
async fn first_of_each_day<H: rmcp::ClientHandler>(
    s: &Session<H>,
    collection: &str,
    time_key: &str,
    field: &[&str],
    a: jiff::civil::Date,
    b: jiff::civil::Date,
) -> std::collections::BTreeMap<String, f64> {
    let q = s.ok("vitals_query", json!({"collection": collection, "start": ds(a), "end": ds(b), "format": "records", "max_chars": 2_000_000})).await;
    let mut first: std::collections::BTreeMap<String, (String, f64)> = Default::default();
    for r in q["data"].as_array().unwrap() {
        let time = r[time_key].as_str().unwrap().to_string();
        let Some(v) = field.iter().try_fold(r, |v, k| v.get(*k)).and_then(Value::as_f64) else { continue };
        let e = first.entry(time[..10].to_string()).or_insert((time.clone(), v));
        if time < e.0 {
            *e = (time, v);
        }
    }
    first.into_iter().map(|(d, (_, v))| (d, v)).collect()
}

/// A trend that cannot be told still says what the days plainly did: the first and last weeks'
/// means and the change between them, as a description and never as a verdict; a trend that was
/// judged does not carry it.
#[tokio::test]
async fn a_trend_that_cannot_tell_describes_its_first_and_last_weeks() {
    let twin = twin().await;
    let (a, b) = (ago(20), ago(1));
    // Sample data whose score never moves cannot be told: its weeks are described all the same.
    let sandbox = connect(&twin, true, &[("VITALS_OURA_SANDBOX", "official")]).await;
    let metric = "oura.daily_readiness.contributors.hrv_balance";
    let t = sandbox.ok("vitals_trend", json!({"metric": metric, "start": ds(a), "end": ds(b)})).await;
    assert_eq!(verdict(&t), "cannot_tell", "{t}");
    assert_weeks(&t, &first_of_each_day(&sandbox, "oura.daily_readiness", "day", &["contributors", "hrv_balance"], a, b).await, a, b);
    sandbox.close().await;

    let (s, _withings) = all_providers(&twin, "weeks", &[]).await;
    // Blood pressure is taken on about half the days: three weeks hold too few of them to judge, most days.
    let t = s.ok("vitals_trend", json!({"metric": "withings.blood_pressure.systolic_mmhg", "start": ds(a), "end": ds(b)})).await;
    match verdict(&t) {
        "cannot_tell" => assert_weeks(&t, &first_of_each_day(&s, "withings.blood_pressure", "time", &["systolic_mmhg"], a, b).await, a, b),
        _ => assert!(t.get("first_and_last_weeks").is_none(), "{t}"),
    }
    // A judged trend carries no description in its place.
    let judged = s.ok("vitals_trend", json!({"metric": "oura.daily_readiness.score", "start": ds(ago(90)), "end": ds(b)})).await;
    assert_ne!(verdict(&judged), "cannot_tell", "{judged}");
    assert!(judged.get("first_and_last_weeks").is_none(), "{judged}");
    s.close().await;
}
