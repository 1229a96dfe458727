//! End to end: a time window inside a day. A series from one instant up to another (`from`, `to`),
//! and a series during one workout named by its id (`workout`), for every provider with a series
//! and a workout collection, each held to the samples of the whole days it lies in; and every
//! wrong use refused naming its parameter.
use crate::common;
use common::*;
use jiff::Timestamp;
use serde_json::{json, Value};

fn at(v: &Value) -> Timestamp {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("an instant: {v}"))
}

/// The raw samples of `series` on the local days from `a` to `b`, as records.
async fn whole_days(s: &Session, series: &str, a: jiff::civil::Date, b: jiff::civil::Date) -> Vec<Value> {
    let ans = records_of(s, series, json!({"start": ds(a), "end": ds(b), "resolution": "raw"})).await;
    ans["data"].as_array().unwrap().clone()
}

/// The samples of `rows` from `from` up to (not including) `to`.
fn within(rows: &[Value], from: Timestamp, to: Timestamp) -> Vec<Value> {
    rows.iter().filter(|r| (from..to).contains(&at(&r["timestamp"]))).cloned().collect()
}

fn local(t: Timestamp) -> jiff::civil::Date {
    t.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_series_from_one_instant_to_another_is_exactly_the_days_samples_in_that_span() {
    let twin = twin().await;
    let (s, _login) = all_providers(&twin, "span", &[]).await;
    let day = ago(2);
    let all = whole_days(&s, "oura.heartrate", day, day).await;
    // 07:30 to 09:10 local time, written with the offset and in UTC.
    let (from, to) = (format!("{day}T07:30:00-06:00"), format!("{day}T15:10:00Z"));
    let a = records_of(&s, "oura.heartrate", json!({"from": from, "to": to, "resolution": "raw"})).await;
    let want = within(&all, from.parse().unwrap(), to.parse().unwrap());
    assert!(!want.is_empty() && want.len() < all.len());
    assert_eq!(a["data"].as_array().unwrap(), &want, "every sample of the span, none outside it");
    assert_eq!(a["range"]["start"], ds(day));
    let said = a["notices"]["window"].as_str().unwrap();
    assert!(said.contains(&format!("{} of {}", want.len(), all.len())), "{said}");
    // A span across midnight reads both days.
    let night = (format!("{}T22:00:00-06:00", ago(3)), format!("{day}T02:00:00-06:00"));
    let n = records_of(&s, "oura.heartrate", json!({"from": night.0, "to": night.1, "resolution": "raw"})).await;
    let both = whole_days(&s, "oura.heartrate", ago(3), day).await;
    assert_eq!(n["data"].as_array().unwrap(), &within(&both, night.0.parse().unwrap(), night.1.parse().unwrap()));
    assert_eq!((n["range"]["start"].as_str(), n["range"]["end"].as_str()), (Some(ds(ago(3)).as_str()), Some(ds(day).as_str())));
    // A span with no sample, between two of them, says so, never that the days were empty.
    let (a0, a1) = (at(&all[10]["timestamp"]), at(&all[11]["timestamp"]));
    let gap = (a0.checked_add(jiff::SignedDuration::from_secs(1)).unwrap(), a1);
    let g = records_of(&s, "oura.heartrate", json!({"from": gap.0.to_string(), "to": gap.1.to_string()})).await;
    assert_eq!(g["count"], 0);
    let empty = g["notices"]["empty"].as_str().unwrap();
    assert!(empty.starts_with("No samples from") && empty.contains(&format!("{} sample(s) of these days", all.len())), "{empty}");

    for (args, name, needle) in [
        (json!({"collection": "oura.sleep", "from": from, "to": to}), "`from`", "not a time series"),
        (json!({"collection": "oura.heartrate", "from": from}), "`to`", "without it"),
        (json!({"collection": "oura.heartrate", "to": to}), "`from`", "without it"),
        (json!({"collection": "oura.heartrate", "from": format!("{day}T07:30:00"), "to": to}), "`from`", "offset"),
        (json!({"collection": "oura.heartrate", "from": from, "to": "soon"}), "`to`", "RFC 3339"),
        (json!({"collection": "oura.heartrate", "from": to, "to": from}), "`to`", "not after `from`"),
        (json!({"collection": "oura.heartrate", "from": from, "to": to, "day": ds(day)}), "`from`", "without `start`, `end`, `day`"),
        (json!({"collection": "oura.heartrate", "from": "1960-01-01T00:00:00Z", "to": to}), "`from`", "outside the days"),
        (json!({"collection": "oura.heartrate", "from": from, "to": to, "workout": "x"}), "`workout`", "without `from`"),
        (json!({"collection": "oura.sleep", "workout": "x"}), "`workout`", "not a time series"),
        (json!({"collection": "oura.heartrate", "workout": "../x"}), "`workout`", "letters, digits"),
        (json!({"collection": "oura.heartrate", "workout": "no-such-workout", "day": ds(day)}), "`workout`", "no workout"),
    ] {
        let e = s.err("vitals_query", args.clone()).await;
        assert!(e.contains(name) && e.contains(needle), "{args}: {e}");
    }
    s.close().await;
}

/// Each provider's series during one of its workouts: the workout's rows give its start and end,
/// and the answer is the samples of its days in that span, exactly.
#[tokio::test(flavor = "multi_thread")]
async fn a_series_during_a_workout_named_by_its_id_is_that_workouts_span_for_every_provider() {
    let twin = twin().await;
    let (s, _login) = all_providers(&twin, "workout", &[]).await;
    // (series, workout listing, its start, its end or duration in seconds, whether it is found by id alone)
    let cases = [
        ("garmin.heartrate", "garmin.activities", "start", "duration_s", true),
        ("polar.heartrate", "polar.exercises", "start_time", "duration_s", false),
        ("oura.heartrate", "oura.workout", "start_datetime", "end_datetime", false),
        ("withings.intraday", "withings.workouts", "start", "end", false),
    ];
    for (series, listing, start, end, by_id) in cases {
        let listed = records_of(&s, listing, json!({"start": ds(ago(13)), "end": ds(ago(1))})).await;
        let rows = listed["data"].as_array().unwrap();
        assert!(!rows.is_empty(), "{listing} has workouts in the last two weeks");
        let w = &rows[rows.len() / 2];
        let from = at(&w[start]);
        let to = match w[end].as_f64() {
            Some(secs) => from.checked_add(jiff::SignedDuration::from_secs_f64(secs)).unwrap(),
            None => at(&w[end]),
        };
        let id = w["id"].as_str().unwrap();
        let mut args = json!({"workout": id, "resolution": "raw"});
        if !by_id {
            args["day"] = json!(ds(local(from)));
        }
        let a = records_of(&s, series, args).await;
        let all = whole_days(&s, series, local(from), local(to)).await;
        let want = within(&all, from, to);
        assert!(!want.is_empty(), "{series} has samples during {listing} {id}");
        assert_eq!(a["data"].as_array().unwrap(), &want, "{series} during {listing} {id} ({from} to {to})");
        let said = a["notices"]["window"].as_str().unwrap();
        assert!(said.contains(&format!("during workout {id} of ")) && said.contains(&from.to_string()), "{said}");
    }
    s.close().await;
}
