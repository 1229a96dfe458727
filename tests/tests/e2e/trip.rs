//! The one day rule across providers, held by a trip week: the person flies from -06:00 to +09:00
//! midweek and every provider's twin records in the zone of the moment (`vitals_twin::trip`),
//! while this computer's zone is where the person is now (+09:00) and no call gives `tz`. A
//! record belongs to the local date where it happened: every provider's night is under the day
//! whose morning it ended in `vitals_daily`, and every workout under the day it started where
//! it was recorded, so the same night is under the same day for every provider.
use crate::common;
use common::*;
use jiff::civil::Date;
use jiff::tz::Offset;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The date a provider's time string says where it was recorded: an instant's date in the offset
/// it is written in, a wall-clock time's own date.
fn own_date(s: &str) -> Option<Date> {
    if let Ok(p) = jiff::fmt::temporal::Pieces::parse(s) {
        return Some(p.date());
    }
    s.parse::<jiff::civil::DateTime>().ok().map(|d| d.date())
}

/// The first of `keys` a record holds as a time string, as [`own_date`] reads it.
fn dated_by(r: &Value, keys: &[&str]) -> Option<Date> {
    keys.iter().find_map(|k| r[*k].as_str().and_then(own_date))
}

/// Where each provider's night ends and each workout starts, as its records write them (WHOOP's
/// `end`/`start` are UTC, its `_local` the wall clock where it was).
const NIGHT_ENDS: &[&str] = &["end_local", "bedtime_end", "sleep_end_time", "sleep_end", "end"];
const STARTS: &[&str] = &["start_local", "start_datetime", "start_time", "start"];

/// The providers' workout collections and the twin's people all living in the trip zone.
const WORKOUTS: &[&str] = &["oura.workout", "withings.workouts", "polar.exercises", "garmin.activities", "whoop.workout"];

async fn travel(twin: &Twin, flight: jiff::Timestamp) {
    let trip = vitals_twin::trip::zone(Offset::constant(-6), flight, Offset::constant(9));
    twin.configure(|c| c.tz = trip.clone());
    twin.withings(|w| {
        // No name the tz database knows: each record names the zone of its moment (Etc/GMT+6, Etc/GMT-9).
        w.cfg.person = vitals::providers::withings::sample::Person { tz: trip.clone(), tz_name: "Trip".into(), ..w.cfg.person.clone() }
    });
    twin.polar(|p| p.cfg.person.tz = trip.clone());
    twin.garmin(|g| g.cfg.person.tz = trip.clone());
    twin.whoop(|w| w.cfg.person.tz = trip.clone());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trip_week_puts_every_record_under_the_date_where_it_happened_for_every_provider() {
    let twin = twin().await;
    let (first, last) = (ago(7), ago(1));
    // Midweek, late in the evening at home: the flight lands the person nine hours ahead of UTC.
    let flight = ago(4).at(23, 0, 0, 0).to_zoned(jiff::tz::TimeZone::fixed(Offset::constant(-6))).unwrap().timestamp();
    travel(&twin, flight).await;
    let (s, _withings) = all_providers(&twin, "trip", &[("VITALS_TZ", "+09:00")]).await;
    let week = json!({"start": ds(first), "end": ds(last)});

    // The catalog says each collection's rule, in its full entry.
    for (c, says) in [("polar.exercises", "offset it was recorded in"), ("oura.sleep", "provider's own day"), ("oura.heartrate", "query's tz")] {
        let e = s.ok("vitals_sources", json!({"collection": c})).await;
        let day = e["providers"][0]["collections"][0]["day"].as_str().unwrap_or_default().to_string();
        assert!(day.contains(says), "{c}: {day:?}");
    }

    // Every workout under the day it started where the person was, whatever this computer's zone.
    let mut started = 0;
    for c in WORKOUTS {
        let all = s.ok("vitals_query", json!({"collection": c, "start": ds(first), "end": ds(last), "format": "records"})).await;
        assert!(all["notices"]["truncated"].is_null(), "{c}: {}", all["notices"]);
        let mut d = first;
        let mut seen = 0;
        while d <= last {
            let a = s.ok("vitals_query", json!({"collection": c, "day": ds(d), "format": "records"})).await;
            for r in records(&a["data"]) {
                assert_eq!(dated_by(&r, STARTS), Some(d), "{c}: a workout under {d} started on another date where it was: {r:.300}");
                seen += 1;
            }
            d = d.tomorrow().unwrap();
        }
        assert_eq!(seen, records(&all["data"]).len(), "{c}: each workout of the week under one day");
        started += seen;
    }
    assert!(started >= 10, "the week's workouts were read ({started})");

    // The same night under the same day for every provider: the day whose morning it ended.
    let v = s.ok("vitals_daily", week.clone()).await;
    assert!(v["errors"].is_null(), "{}", v["errors"]);
    let mut shown: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in v["rows"].as_array().unwrap() {
        let cell = &row["sleep_total_min"];
        for from in std::iter::once(&cell["from"]).chain(cell["also"].as_array().into_iter().flatten().map(|a| &a["from"])) {
            if let Some(f) = from.as_str() {
                shown.entry(f.to_string()).or_default().insert(row["day"].as_str().unwrap().to_string());
            }
        }
    }
    assert!(shown.len() >= 5, "a night column from every provider with one: {:?}", shown.keys());
    for (from, days) in &shown {
        let collection = from.rsplit_once('.').unwrap().0;
        let nights = s.ok("vitals_query", json!({"collection": collection, "start": ds(first), "end": ds(last), "format": "records"})).await;
        let ended: BTreeSet<String> = records(&nights["data"]).iter().filter_map(|r| dated_by(r, NIGHT_ENDS)).map(|d| d.to_string()).collect();
        assert!(!ended.is_empty(), "{collection}: nights with their end");
        assert!(days.is_subset(&ended), "{from}: a night under a day whose morning it did not end: {days:?} against {ended:?}");
    }
    let days: Vec<&BTreeSet<String>> = shown.values().collect();
    let common = days.iter().skip(1).fold(days[0].clone(), |acc, d| acc.intersection(d).cloned().collect());
    assert!(common.len() >= 4, "nights of every provider on the same days of the trip week: {shown:?}");
    s.close().await;
}
