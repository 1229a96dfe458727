//! The built-in sample person of every provider agrees with itself as a real account does (issue
//! 49): read through the tools as a new user reads it (no account connected), each summary is
//! checked against the series, laps, zones and files it stands for: an activity's heart rate,
//! zones, distance and laps against its FIT and the day's heart rate; a night's heart rate against
//! the day's series; a day's maximum against its workouts; a daily activity goal against its
//! minutes; steps and heart rate of a day against its intraday samples.
use crate::common::*;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The records of a complete answer.
async fn rows(s: &Session, collection: &str, args: Value) -> Vec<Value> {
    let a = records_of(s, collection, args).await;
    assert!(a["notices"].get("truncated").is_none(), "{collection}: {}", a["notices"]);
    assert_eq!(a["synthetic"], true, "{collection}: the sample, read as a new user reads it");
    records(&a["data"])
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn at(v: &Value) -> Timestamp {
    v.as_str().unwrap_or_else(|| panic!("not a time: {v}")).parse().unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}")).iter().filter_map(Value::as_f64).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn by(rows: Vec<Value>, key: &str) -> HashMap<String, Value> {
    rows.into_iter().map(|r| (r[key].as_str().unwrap_or_default().chars().take(10).collect(), r)).collect()
}

/// Timed values of a raw series answer (`timestamp`, `field`).
fn series(rows: &[Value], field: &str) -> Vec<(Timestamp, f64)> {
    rows.iter().filter_map(|r| Some((at(&r["timestamp"]), r.get(field)?.as_f64()?))).collect()
}

fn within(s: &[(Timestamp, f64)], a: Timestamp, b: Timestamp) -> Vec<f64> {
    s.iter().filter(|(t, _)| *t >= a && *t < b).map(|x| x.1).collect()
}

fn extremes(v: &[f64]) -> (f64, f64) {
    (v.iter().cloned().fold(f64::MAX, f64::min), v.iter().cloned().fold(f64::MIN, f64::max))
}

/// A server with no account connected: every provider answers from its built-in sample person,
/// living in the user's zone.
async fn new_user(twin: &Twin) -> Session {
    connect(twin, true, &[("VITALS_TZ", "America/Chicago")]).await
}

fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let dir = scratch().join(format!("vitals-e2e-agreement-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn garmins_sample_person_agrees_with_itself() {
    let twin = twin().await;
    let s = new_user(&twin).await;
    garmin(&s, &scratch_dir("garmin")).await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn polars_sample_person_agrees_with_itself() {
    let twin = twin().await;
    let s = new_user(&twin).await;
    polar(&s, &scratch_dir("polar")).await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn whoops_oura_s_and_withings_sample_people_agree_with_themselves() {
    let twin = twin().await;
    let s = new_user(&twin).await;
    whoop(&s).await;
    oura(&s).await;
    withings(&s).await;
    s.close().await;
}

/// An activity's listing, detail, FIT (records, laps, zones) and its part of the day's heart rate,
/// Body Battery, summary; a night's heart rate and HRV; the day's summary against its series.
async fn garmin(s: &Session, dir: &std::path::Path) {
    let (a, b) = (ago(10), ago(1));
    let range = json!({"start": ds(a), "end": ds(b)});
    let hr = series(&rows(s, "garmin.heartrate", json!({"start": ds(a), "end": ds(b), "resolution": "raw"})).await, "bpm");
    let summaries = by(rows(s, "garmin.daily_summary", range.clone()).await, "day");
    let battery = by(rows(s, "garmin.body_battery", range.clone()).await, "day");
    let acts = rows(s, "garmin.activities", range.clone()).await;
    assert!(acts.len() >= 3, "{} activities", acts.len());
    for act in &acts {
        let id = act["id"].as_str().unwrap();
        let day = &act["start_local"].as_str().unwrap()[..10];
        let one = rows(s, "garmin.activity", json!({"id": id, "options": {"laps": true}})).await.remove(0);
        let fit = &one["fit"];
        let rec = &fit["records"];
        let what = format!("garmin activity {id} ({day})");
        // Heart rate: the listing, the detail and the FIT's records say one thing.
        assert!(
            (f(&act["avg_hr_bpm"]) - f(&rec["heart_rate_bpm"]["avg"])).abs() <= 0.5,
            "{what}: average {} vs the FIT's {}",
            act["avg_hr_bpm"],
            rec["heart_rate_bpm"]
        );
        assert_eq!(f(&act["max_hr_bpm"]), f(&rec["heart_rate_bpm"]["max"]), "{what}: highest");
        assert_eq!(f(&one["min_hr_bpm"]), f(&rec["heart_rate_bpm"]["min"]), "{what}: lowest");
        // Zones: the listing's five are the FIT's zones 1 to 5; the FIT's six (zone 0 below the first) fill the timer.
        let zones = nums(&fit["hr_zone_s"]);
        assert_eq!(zones.len(), 6, "{what}");
        assert_eq!(nums(&act["hr_zone_s"]), zones[1..].to_vec(), "{what}: zones");
        assert_eq!(zones.iter().sum::<f64>(), f(&act["duration_s"]), "{what}: every second in a zone");
        // Distance and laps.
        let laps = fit["laps"].as_array().unwrap();
        assert_eq!(laps.len() as f64, f(&act["laps"]), "{what}: laps");
        let lap_m: f64 = laps.iter().map(|l| f(&l["distance_m"])).sum();
        assert!((lap_m - f(&act["distance_m"])).abs() <= 0.1 * laps.len() as f64, "{what}: laps add to {lap_m}, the activity is {}", act["distance_m"]);
        assert!((f(&rec["distance_m"]) - f(&act["distance_m"])).abs() < 0.011, "{what}: the records end at {}", rec["distance_m"]);
        assert_eq!(laps.iter().map(|l| f(&l["timer_s"])).sum::<f64>(), f(&act["duration_s"]), "{what}: lap times");
        // The day's heart rate shows the activity, and the day's highest is its peak.
        let (t0, t1) = (at(&act["start"]), at(&act["start"]) + SignedDuration::from_secs(f(&act["duration_s"]) as i64));
        let during = within(&hr, t0 - SignedDuration::from_secs(119), t1);
        let (lo, hi) = extremes(&during);
        assert!(lo >= f(&one["min_hr_bpm"]) && hi == f(&act["max_hr_bpm"]), "{what}: the day's samples during it read {lo}–{hi}");
        let sum = &summaries[day];
        assert_eq!(f(&sum["max_hr_bpm"]), f(&act["max_hr_bpm"]), "{what}: the day's highest heart rate is the activity's");
        let events = battery[day]["events"].as_array().unwrap();
        let e = events.iter().find(|e| e["activity_id"] == id).unwrap_or_else(|| panic!("{what}: no Body Battery event: {events:?}"));
        assert_eq!(f(&e["duration_min"]), (f(&act["duration_s"]) / 6.0).round() / 10.0, "{what}: Body Battery's duration");
        // Its files: the FIT's records, and the GPX and TCX written from it.
        export_agrees(s, dir, "garmin", id, act, f(&act["distance_m"]), act["type"] == "running").await;
    }
    let steps = by(rows(s, "garmin.steps", range.clone()).await, "day");
    for (day, sum) in &summaries {
        let d = date(day);
        let (from, to) = (midnight(d), midnight(d.tomorrow().unwrap()));
        let (lo, hi) = extremes(&within(&hr, from, to));
        assert_eq!((f(&sum["min_hr_bpm"]), f(&sum["max_hr_bpm"])), (lo, hi), "garmin {day}: the summary's extremes are the day's series'");
        assert!(f(&sum["resting_hr_bpm"]) >= lo, "garmin {day}: resting below the lowest");
        assert_eq!((&sum["steps"], &sum["distance_m"]), (&steps[day]["steps"], &steps[day]["distance_m"]), "garmin {day}: steps");
        let bb = &battery[day];
        assert_eq!((&sum["body_battery_high"], &sum["body_battery_low"]), (&bb["highest"], &bb["lowest"]), "garmin {day}: Body Battery");
    }
    let spo2 = by(rows(s, "garmin.spo2", range.clone()).await, "day");
    let mut checked = 0;
    for night in rows(s, "garmin.sleep", range.clone()).await {
        let day = night["day"].as_str().unwrap();
        let (a, b) = (at(&night["sleep_start"]), at(&night["sleep_end"]));
        if a < midnight(ago(10)) {
            continue;
        }
        let v = within(&hr, a, b);
        assert_eq!(f(&night["hr_avg_bpm"]), mean(&v).round(), "garmin night {day}: its heart rate is the series' through it");
        checked += 1;
        if let Some(o2) = spo2.get(day) {
            assert_eq!(night["spo2_lowest"], o2["spo2_lowest"], "garmin night {day}");
        }
        assert!(summaries.get(day).is_none_or(|x| x["spo2_lowest"] == spo2.get(day).map_or(Value::Null, |o| o["spo2_lowest"].clone())));
    }
    assert!(checked >= 5, "{checked} Garmin nights");
    let nights = by(rows(s, "garmin.sleep", range.clone()).await, "day");
    let hrv = rows(s, "garmin.hrv", range).await;
    assert!(hrv.len() >= 5, "{} nights of HRV", hrv.len());
    for h in hrv {
        let day = h["day"].as_str().unwrap();
        let items = nums(&h["readings"]["items"]);
        assert_eq!(f(&h["last_night_avg_ms"]), mean(&items).round(), "garmin HRV {day}: the average of its readings");
        assert_eq!(f(&h["last_night_5min_high_ms"]), extremes(&items).1, "garmin HRV {day}: its highest reading");
        let night = nights.get(day).unwrap_or_else(|| panic!("garmin HRV {day} without a night"));
        let first = at(&h["readings"]["start"]);
        let last = first + SignedDuration::from_secs(300 * (items.len() as i64 - 1));
        assert!(first >= at(&night["sleep_start"]) && last < at(&night["sleep_end"]), "garmin HRV {day}: its readings lie in the night");
    }
}

fn midnight(d: jiff::civil::Date) -> Timestamp {
    d.to_zoned(jiff::tz::TimeZone::get("America/Chicago").unwrap()).unwrap().timestamp()
}

/// An activity's FIT, TCX and GPX through `vitals_export`: the same records, laps and distance.
async fn export_agrees(s: &Session, dir: &std::path::Path, provider: &str, id: &str, row: &Value, distance_m: f64, gps: bool) {
    let what = format!("{provider} {id}");
    let path = |ext: &str| dir.join(format!("{provider}-{id}.{ext}")).display().to_string();
    s.ok("vitals_export", json!({"provider": provider, "id": id, "format": "fit", "path": path("fit"), "overwrite": true})).await;
    let fit = vitals::activity_file::fit::read(&std::fs::read(path("fit")).unwrap()).unwrap();
    assert!((fit.distance_m().unwrap() - distance_m).abs() < 0.11, "{what}: the FIT's distance {:?} vs {distance_m}", fit.distance_m());
    let hr_max = fit.points.iter().filter_map(|p| p.hr_bpm).max().map(f64::from);
    let row_max = row.get("max_hr_bpm").or(row.get("hr_max_bpm")).and_then(Value::as_f64);
    assert_eq!(hr_max, row_max, "{what}: the FIT's highest heart rate");
    s.ok("vitals_export", json!({"provider": provider, "id": id, "format": "tcx", "path": path("tcx"), "overwrite": true})).await;
    let tcx = std::fs::read_to_string(path("tcx")).unwrap();
    let shape = crate::export_files::tcx(&tcx);
    assert_eq!(shape.trackpoints, fit.points.len(), "{what}: a trackpoint a record");
    assert_eq!(shape.laps.len(), fit.laps.len(), "{what}: the TCX's laps are the FIT's");
    assert!((shape.laps.iter().sum::<f64>() - distance_m).abs() <= 0.1 * shape.laps.len() as f64, "{what}: the TCX's laps add up");
    let gpx = s.call_raw("vitals_export", json!({"provider": provider, "id": id, "format": "gpx", "path": path("gpx"), "overwrite": true})).await;
    if gps {
        assert_ne!(gpx.is_error, Some(true), "{what}: {}", text(&gpx));
        let shape = crate::export_files::gpx(&std::fs::read_to_string(path("gpx")).unwrap());
        assert_eq!(shape.points, fit.points.iter().filter(|p| p.position.is_some()).count(), "{what}: a track point a position");
    } else {
        assert_eq!(gpx.is_error, Some(true), "{what}: no positions, no GPX");
    }
}

/// An exercise's summary, zones and files against its samples; the day's continuous heart rate,
/// steps, goal and cardio load against the exercise; a night's heart rate and its recharge.
async fn polar(s: &Session, dir: &std::path::Path) {
    let (a, b) = (ago(14), ago(1));
    let range = json!({"start": ds(a), "end": ds(b)});
    let hr = series(&rows(s, "polar.heartrate", json!({"start": ds(a), "end": ds(b), "resolution": "raw"})).await, "bpm");
    let cardio = by(rows(s, "polar.cardio_load", range.clone()).await, "day");
    let activity = by(rows(s, "polar.activity", range.clone()).await, "day");
    let ex = rows(s, "polar.exercises", json!({"start": ds(a), "end": ds(b), "options": {"samples": true, "raw_samples": true}})).await;
    assert!(ex.len() >= 4, "{} exercises", ex.len());
    for e in &ex {
        let id = e["id"].as_str().unwrap();
        let day = &e["start_time"].as_str().unwrap()[..10];
        let what = format!("polar exercise {id} ({day})");
        let beats: Vec<Option<f64>> = e["samples_heart_rate"]["items"].as_array().unwrap().iter().map(Value::as_f64).collect();
        let valid: Vec<f64> = beats.iter().flatten().copied().collect();
        assert_eq!(f(&e["hr_avg_bpm"]), mean(&valid).round(), "{what}: average");
        assert_eq!(f(&e["hr_max_bpm"]), extremes(&valid).1, "{what}: highest");
        let in_zones: f64 = e["hr_zones"].as_array().unwrap().iter().map(|z| f(&z["in_zone_s"])).sum();
        assert_eq!(in_zones, valid.len() as f64, "{what}: a second of heart rate, a second in a zone");
        assert_eq!(f(&e["duration_s"]), beats.len() as f64, "{what}: a sample a second");
        let dist = nums(&e["samples_distance"]["items"]);
        assert_eq!(f(&e["distance_m"]), *dist.last().unwrap(), "{what}: distance");
        // The continuous heart rate during it is the exercise's own.
        let t0 = at(&e["start_time"]);
        for (t, bpm) in hr.iter().filter(|(t, _)| *t >= t0 && *t < t0 + SignedDuration::from_secs(beats.len() as i64)) {
            let k = (t.as_second() - t0.as_second()) as usize;
            assert_eq!(Some(*bpm), beats[k], "{what}: the continuous heart rate at {t}");
        }
        assert!(within(&hr, t0, t0 + SignedDuration::from_secs(beats.len() as i64)).len() >= 4, "{what}: the day's heart rate shows it");
        assert_eq!(cardio[day]["cardio_load"], e["training_load"], "{what}: the day's cardio load is the exercise's");
        if e["sport"] == "RUNNING" {
            let cadence = nums(&e["samples_running_cadence"]["items"]);
            let run_steps = cadence.iter().sum::<f64>() / 60.0;
            assert!(f(&activity[day]["steps"]) >= run_steps - 60.0, "{what}: the day's steps hold the run's {run_steps}");
        }
        export_agrees(s, dir, "polar", id, e, f(&e["distance_m"]), e["has_route"] == true).await;
    }
    for (day, act) in &activity {
        assert_eq!(f(&act["daily_activity_pct"]), (f(&act["active_min"]) / 3.0 * 100.0).round() / 100.0, "polar {day}: the goal is five hours of activity");
    }
    // Today so far: its minutes add up to its steps, none counted in hours still to come.
    let now = rows(s, "polar.activity", json!({"day": ds(today())})).await;
    assert_eq!(now[0]["hourly_steps_sum"], now[0]["steps"], "polar today: {}", now[0]);
    let nights = rows(s, "polar.sleep", range.clone()).await;
    let recharges = by(rows(s, "polar.nightly_recharge", range).await, "day");
    let (mut checked, mut recharged) = (0, 0);
    for n in &nights {
        let day = n["day"].as_str().unwrap();
        let night_hr = nums(&n["heart_rate"]["items"]);
        let (lo, hi) = extremes(&night_hr);
        let (a, b) = (at(&n["sleep_start"]), at(&n["sleep_end"]));
        if a < midnight(ago(14)) {
            continue;
        }
        let (clo, chi) = extremes(&within(&hr, a, b));
        assert!(clo >= lo && chi <= hi, "polar night {day}: the continuous heart rate ({clo}–{chi}) is the night's ({lo}–{hi})");
        checked += 1;
        if let Some(r) = recharges.get(day) {
            recharged += 1;
            assert!((lo..=hi).contains(&f(&r["hr_avg_bpm"])), "polar recharge {day}: its heart rate is the night's");
            assert_eq!(f(&r["hrv_avg_ms"]), mean(&nums(&r["hrv_samples"]["items"])).round(), "polar recharge {day}: HRV");
            assert_eq!(f(&r["breathing_rate_avg"]), (mean(&nums(&r["breathing_samples"]["items"])) * 10.0).round() / 10.0, "polar recharge {day}");
        }
    }
    assert!(checked >= 5 && recharged >= 5, "{checked} Polar nights, {recharged} recharges");
}

/// A day (cycle) holds its workouts: its strain, energy and highest heart rate at least theirs; a
/// workout's zones fill it; no workout while asleep.
async fn whoop(s: &Session) {
    let range = json!({"start": ds(ago(21)), "end": ds(ago(1))});
    let cycles = rows(s, "whoop.cycle", range.clone()).await;
    let sleeps = rows(s, "whoop.sleep", range.clone()).await;
    let workouts = rows(s, "whoop.workout", range).await;
    assert!(workouts.len() >= 10, "{} workouts", workouts.len());
    for w in &workouts {
        let (a, b) = (at(&w["start"]), at(&w["end"]));
        let what = format!("whoop workout {} ({a})", w["id"]);
        let zones: f64 = ["zero", "one", "two", "three", "four", "five"].iter().map(|z| f(&w[format!("zone_{z}_milli").as_str()])).sum();
        assert_eq!(zones, (b.as_millisecond() - a.as_millisecond()) as f64, "{what}: its zones fill it");
        assert!(f(&w["average_heart_rate"]) <= f(&w["max_heart_rate"]), "{what}");
        for n in &sleeps {
            assert!(b <= at(&n["start"]) || a >= at(&n["end"]), "{what}: while asleep ({} to {})", n["start"], n["end"]);
        }
        let Some(c) = cycles.iter().find(|c| at(&c["start"]) <= a && c.get("end").is_none_or(|e| e.is_null() || at(e) >= b)) else {
            panic!("{what}: in no cycle")
        };
        if c.get("strain").is_none() {
            continue;
        }
        let in_cycle: Vec<&Value> =
            workouts.iter().filter(|x| at(&x["start"]) >= at(&c["start"]) && c.get("end").is_none_or(|e| at(&x["end"]) <= at(e))).collect();
        assert!(
            f(&c["max_heart_rate"]) >= f(&w["max_heart_rate"]),
            "{what}: the day's highest heart rate {} is below the workout's {}",
            c["max_heart_rate"],
            w["max_heart_rate"]
        );
        assert!(f(&c["strain"]) >= f(&w["strain"]), "{what}: the day's strain");
        assert!(f(&c["kilojoule"]) >= in_cycle.iter().map(|x| f(&x["kilojoule"])).sum::<f64>(), "{what}: the day's energy");
    }
}

/// A night's heart rate is the day's series through it; a day's activity times fill the day; the
/// heart rate shows a workout and nothing while the ring charges.
async fn oura(s: &Session) {
    let (a, b) = (ago(10), ago(1));
    let range = json!({"start": ds(a), "end": ds(b)});
    let hr_rows = rows(s, "oura.heartrate", json!({"start": ds(a), "end": ds(b), "resolution": "raw"})).await;
    let hr = series(&hr_rows, "bpm");
    let source = |t: Timestamp| hr_rows.iter().find(|r| at(&r["timestamp"]) == t).map(|r| r["source"].as_str().unwrap_or_default().to_string());
    let mut nights = 0;
    for n in rows(s, "oura.sleep", json!({"start": ds(a), "end": ds(b)})).await.iter().filter(|n| n["type"] == "long_sleep") {
        let day = n["day"].as_str().unwrap();
        let (t0, t1) = (at(&n["bedtime_start"]), at(&n["bedtime_end"]));
        if t0 < midnight(a) {
            continue;
        }
        let items: Vec<f64> = nums(&n["heart_rate"]["items"]);
        let during = within(&hr, t0, t1);
        assert_eq!(during, items, "oura night {day}: the day's heart rate through the night is the night's own");
        assert_eq!(f(&n["lowest_heart_rate"]), extremes(&items).0, "oura night {day}");
        assert!(hr.iter().filter(|(t, _)| *t >= t0 && *t < t1).all(|(t, _)| source(*t).as_deref() == Some("sleep")), "oura night {day}: source");
        nights += 1;
    }
    assert!(nights >= 5, "{nights} Oura nights");
    let days = by(rows(s, "oura.daily_activity", range.clone()).await, "day");
    for (day, act) in &days {
        // Oura's activity day runs from 4 am to 4 am: the one still running has filled only its hours so far.
        let next: jiff::civil::Date = day.parse::<jiff::civil::Date>().unwrap().tomorrow().unwrap();
        if midnight(next) + jiff::SignedDuration::from_hours(4) > Timestamp::now() {
            continue;
        }
        let times = ["resting_time", "sedentary_time", "low_activity_time", "medium_activity_time", "high_activity_time", "non_wear_time"];
        let total: f64 = times.iter().map(|k| f(&act[*k])).sum();
        assert_eq!(total, 86_400.0, "oura {day}: the activity day's times fill it");
    }
    let workouts = rows(s, "oura.workout", range.clone()).await;
    assert!(!workouts.is_empty(), "no Oura workout in ten days");
    for w in workouts {
        let day = w["day"].as_str().unwrap();
        let (t0, t1) = (at(&w["start_datetime"]), at(&w["end_datetime"]));
        let during: Vec<Timestamp> = hr.iter().filter(|(t, _)| *t >= t0 && *t < t1).map(|x| x.0).collect();
        assert!(!during.is_empty() && during.iter().all(|t| source(*t).as_deref() == Some("workout")), "oura workout {day}: the heart rate shows it");
        assert!(f(&w["calories"]) <= f(&days[day]["active_calories"]), "oura workout {day}: more calories than the day's");
    }
    let battery = rows(s, "oura.ring_battery_level", json!({"start": ds(a), "end": ds(b), "resolution": "raw"})).await;
    let charging: Vec<&Value> = battery.iter().filter(|c| c["charging"] == true).collect();
    assert!(charging.len() >= 10, "{} readings on the charger", charging.len());
    for c in charging {
        let t = at(&c["timestamp"]);
        assert!(within(&hr, t, t + SignedDuration::from_secs(1800)).is_empty(), "oura {t}: a heart rate while the ring charged");
    }
}

/// A day the watch was worn: its activity's steps and heart rate are its intraday samples'; a
/// workout's and an ECG's heart rate are theirs.
async fn withings(s: &Session) {
    let (a, b) = (ago(10), ago(1));
    let intra = rows(s, "withings.intraday", json!({"start": ds(a), "end": ds(b), "resolution": "raw"})).await;
    let hr = series(&intra, "heart_rate_bpm");
    let steps = series(&intra, "steps");
    let mut watch_days = 0;
    for act in rows(s, "withings.activity", json!({"start": ds(a), "end": ds(b)})).await {
        let day = act["day"].as_str().unwrap();
        let d = date(day);
        let (from, to) = (midnight(d), midnight(d.tomorrow().unwrap()));
        // A day without a source has no samples; the phone's have steps and no heart rate.
        let day_steps = within(&steps, from, to).iter().sum::<f64>();
        assert_eq!(act["steps"].as_f64().unwrap_or(0.0), day_steps, "withings {day}: steps");
        if act["hr_average_bpm"].is_null() {
            assert!(within(&hr, from, to).is_empty(), "withings {day}: a heart rate on a day the watch was not worn");
            continue;
        }
        watch_days += 1;
        let (lo, hi) = extremes(&within(&hr, from, to));
        assert_eq!((f(&act["hr_min_bpm"]), f(&act["hr_max_bpm"])), (lo, hi), "withings {day}: heart rate");
    }
    assert!(watch_days >= 3, "{watch_days} days with the watch");
    let workouts = rows(s, "withings.workouts", json!({"start": ds(a), "end": ds(b)})).await;
    assert!(!workouts.is_empty(), "no Withings workout in ten days");
    for w in workouts {
        let (t0, t1) = (at(&w["start"]), at(&w["end"]));
        let (lo, hi) = extremes(&within(&hr, t0, t1));
        assert_eq!((f(&w["hr_min_bpm"]), f(&w["hr_max_bpm"])), (lo, hi), "withings workout {t0}: heart rate");
        assert_eq!(f(&w["steps"]), within(&steps, t0, t1).iter().sum::<f64>(), "withings workout {t0}: steps");
    }
    let ecgs = rows(s, "withings.ecg", json!({"start": ds(ago(30)), "end": ds(b)})).await;
    assert!(!ecgs.is_empty(), "no ECG in a month");
    let hr = series(&rows(s, "withings.intraday", json!({"start": ds(ago(30)), "end": ds(b), "resolution": "raw"})).await, "heart_rate_bpm");
    for e in ecgs {
        let t = at(&e["time"]);
        let five = within(&hr, t - SignedDuration::from_secs(299), t + SignedDuration::from_secs(1));
        assert_eq!(five, vec![f(&e["heart_rate_bpm"])], "withings ECG {t}: the watch's heart rate then");
    }
}
