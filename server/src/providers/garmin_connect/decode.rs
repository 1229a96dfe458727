//! Garmin Connect's payloads into rows (reference garmin/README.md §5): names in our words, units in
//! the name, "no reading" as null, Garmin's lactate-threshold speed (tenths of m/s) multiplied by
//! ten. Every function takes what Garmin sent and never fails: a missing key is a null field.
use serde_json::{json, Map, Value};

fn f(v: &Value, k: &str) -> Value {
    v.get(k).cloned().unwrap_or(Value::Null)
}
fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}
/// `2026-01-08T14:47:26.0` or `2026-01-08` → `2026-01-08`.
fn day_of(v: &Value) -> Option<String> {
    v.as_str().and_then(|s| s.get(..10)).map(str::to_string)
}
/// A local time as Garmin writes it (`2025-07-07T21:50:17.0`) without its tenths.
fn local_time(v: &Value) -> Value {
    v.as_str().map(|s| Value::from(s.split('.').next().unwrap_or(s))).unwrap_or(Value::Null)
}
/// Garmin's list, or the one object where a list was expected; nothing for `null`.
pub fn list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Null => vec![],
        other => vec![other.clone()],
    }
}

/// `h:mm:ss` of a duration in seconds.
pub fn clock(s: f64) -> String {
    let s = s.round() as i64;
    format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}
/// `m:ss` per km of a distance covered in `s` seconds.
pub fn pace_per_km(s: f64, metres: f64) -> String {
    let per_km = (s / (metres / 1000.0)).round() as i64;
    format!("{}:{:02}", per_km / 60, per_km % 60)
}

pub fn readiness(v: &Value) -> Option<Value> {
    let context = v.get("inputContext").and_then(Value::as_str);
    Some(json!({
        "date": day_of(v.get("calendarDate")?)?,
        "time_local": local_time(&f(v, "timestampLocal")),
        "morning": context == Some("AFTER_WAKEUP_RESET"),
        "score": f(v, "score"),
        "level": f(v, "level"),
        "feedback": f(v, "feedbackShort"),
        "feedback_long": f(v, "feedbackLong"),
        "recovery_time_min": f(v, "recoveryTime"),
        "acute_load": f(v, "acuteLoad"),
        "hrv_weekly_avg_ms": f(v, "hrvWeeklyAverage"),
        "sleep_score": f(v, "sleepScore"),
        "sleep_score_pct": f(v, "sleepScoreFactorPercent"),
        "recovery_time_pct": f(v, "recoveryTimeFactorPercent"),
        "acute_load_pct": f(v, "acwrFactorPercent"),
        "stress_history_pct": f(v, "stressHistoryFactorPercent"),
        "hrv_pct": f(v, "hrvFactorPercent"),
        "sleep_history_pct": f(v, "sleepHistoryFactorPercent"),
        "context": context,
    }))
}

/// The entry of the primary training device in a map keyed by device id (a device's value may be
/// null or `[]`), else the first object.
fn primary(map: Option<&Value>) -> Option<&Value> {
    let m = map?.as_object()?;
    let objects = || m.values().filter(|d| d.is_object());
    objects().find(|d| d.get("primaryTrainingDevice").and_then(Value::as_bool) == Some(true)).or_else(|| objects().next())
}

/// `PRODUCTIVE_6` → `productive`: Garmin's phrase without its variant number.
fn phrase(p: &Value) -> Value {
    p.as_str()
        .map(|s| {
            let base = s.rsplit_once('_').filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit())).map(|(b, _)| b).unwrap_or(s);
            Value::from(base.to_ascii_lowercase())
        })
        .unwrap_or(Value::Null)
}

pub fn training_status(v: &Value) -> Option<Value> {
    let status = primary(v.pointer("/mostRecentTrainingStatus/latestTrainingStatusData"))?;
    let balance = primary(v.pointer("/mostRecentTrainingLoadBalance/metricsTrainingLoadBalanceDTOMap"));
    let b = |k: &str| balance.map(|b| f(b, k)).unwrap_or(Value::Null);
    let acute = status.get("acuteTrainingLoadDTO").cloned().unwrap_or(Value::Null);
    let device = status.get("deviceId").and_then(|id| {
        v.pointer("/mostRecentTrainingStatus/recordedDevices")?.as_array()?.iter().find(|d| d.get("deviceId") == Some(id))?.get("deviceName").cloned()
    });
    let target = |k: &str| json!({ "min": b(&format!("{k}TargetMin")), "max": b(&format!("{k}TargetMax")) });
    Some(json!({
        "date": day_of(status.get("calendarDate")?)?,
        "status": phrase(&f(status, "trainingStatusFeedbackPhrase")),
        "status_phrase": f(status, "trainingStatusFeedbackPhrase"),
        "acute_load": f(&acute, "dailyTrainingLoadAcute"),
        "chronic_load": f(&acute, "dailyTrainingLoadChronic"),
        "chronic_load_min": f(&acute, "minTrainingLoadChronic"),
        "chronic_load_max": f(&acute, "maxTrainingLoadChronic"),
        "acute_chronic_ratio": f(&acute, "dailyAcuteChronicWorkloadRatio"),
        "acwr_percent": f(&acute, "acwrPercent"),
        "acwr_status": f(&acute, "acwrStatus"),
        "load_balance": b("trainingBalanceFeedbackPhrase"),
        "monthly_load_aerobic_low": b("monthlyLoadAerobicLow"),
        "monthly_load_aerobic_high": b("monthlyLoadAerobicHigh"),
        "monthly_load_anaerobic": b("monthlyLoadAnaerobic"),
        "targets": if balance.is_some() { json!({
            "aerobic_low": target("monthlyLoadAerobicLow"),
            "aerobic_high": target("monthlyLoadAerobicHigh"),
            "anaerobic": target("monthlyLoadAnaerobic"),
        }) } else { Value::Null },
        "sport": f(status, "sport"),
        "since": f(status, "sinceDate"),
        "device": device.unwrap_or(Value::Null),
    }))
}

pub fn vo2max(v: &Value) -> Option<Value> {
    let g = v.get("generic").filter(|g| g.is_object());
    let c = v.get("cycling").filter(|c| c.is_object());
    let date = g.or(c).and_then(|x| day_of(x.get("calendarDate")?))?;
    let of = |x: Option<&Value>, k: &str| x.map(|x| f(x, k)).unwrap_or(Value::Null);
    Some(json!({
        "date": date,
        "running": of(g, "vo2MaxPreciseValue"),
        "running_rounded": of(g, "vo2MaxValue"),
        "cycling": of(c, "vo2MaxPreciseValue"),
        "cycling_rounded": of(c, "vo2MaxValue"),
        "fitness_age": of(g, "fitnessAge"),
    }))
}

const RACES: &[(&str, &str, f64)] =
    &[("5k", "time5K", 5000.0), ("10k", "time10K", 10000.0), ("half", "timeHalfMarathon", 21097.5), ("marathon", "timeMarathon", 42195.0)];

pub fn race_predictions(v: &Value) -> Option<Value> {
    let mut row = Map::new();
    row.insert("date".into(), day_of(v.get("calendarDate")?)?.into());
    for (name, key, metres) in RACES {
        let s = num(v, key).filter(|s| *s > 0.0);
        row.insert(format!("time_{name}_s"), if s.is_some() { f(v, key) } else { Value::Null });
        row.insert(format!("time_{name}"), s.map(|s| clock(s).into()).unwrap_or(Value::Null));
        row.insert(format!("pace_{name}_per_km"), s.map(|s| pace_per_km(s, *metres).into()).unwrap_or(Value::Null));
    }
    Some(Value::Object(row))
}

/// Garmin's lactate-threshold speed is m/s divided by ten (reference §5, unit gotchas).
pub const LT_SPEED_SCALE: f64 = 10.0;

/// A point of the speed history: `{from, until, value}` with `value` in tenths of m/s.
pub fn threshold_speed(v: &Value) -> Option<Value> {
    let speed = num(v, "value").filter(|s| *s > 0.0).map(|s| s * LT_SPEED_SCALE)?;
    Some(json!({
        "date": day_of(v.get("from")?)?,
        "speed_m_s": (speed * 1000.0).round() / 1000.0,
        "pace_per_km": pace_per_km(1000.0 / speed, 1000.0),
    }))
}

/// A point of the heart-rate history.
pub fn threshold_heart_rate(v: &Value) -> Option<Value> {
    Some(json!({ "date": day_of(v.get("from")?)?, "heart_rate_bpm": num(v, "value")? }))
}

/// The speed and heart-rate points of one day in one row (they come from two routes).
pub fn merge_threshold(records: Vec<Value>) -> Vec<Value> {
    let mut days: std::collections::BTreeMap<String, Map<String, Value>> = Default::default();
    for r in records {
        let Some(day) = r.get("date").and_then(Value::as_str).map(str::to_string) else { continue };
        let row = days.entry(day).or_default();
        for k in ["heart_rate_bpm", "speed_m_s", "pace_per_km"] {
            row.entry(k.to_string()).or_insert(Value::Null);
        }
        if let Value::Object(m) = r {
            for (k, v) in m.into_iter().filter(|(_, v)| !v.is_null()) {
                row.insert(k, v);
            }
        }
    }
    days.into_values().map(Value::Object).collect()
}

/// Running records by Garmin's type id: name, and whether the value is a time (s) or a distance (m).
const RECORDS: &[(i64, &str, bool)] = &[
    (1, "1 km", true),
    (2, "1 mile", true),
    (3, "5 km", true),
    (4, "10 km", true),
    (5, "half marathon", true),
    (6, "marathon", true),
    (7, "longest run", false),
];

pub fn personal_record(v: &Value) -> Option<Value> {
    let type_id = v.get("typeId").and_then(Value::as_i64)?;
    let value = num(v, "value");
    let known = RECORDS.iter().find(|(id, _, _)| *id == type_id);
    let date = ["prStartTimeLocalFormatted", "activityStartDateTimeLocalFormatted", "prStartTimeGmtFormatted"].iter().find_map(|k| day_of(v.get(*k)?));
    let activity = v.get("activityId").and_then(Value::as_i64).filter(|id| *id > 0);
    Some(json!({
        "id": f(v, "id"),
        "type": known.map(|(_, n, _)| n.to_string()).unwrap_or_else(|| format!("garmin type {type_id}")),
        "type_id": type_id,
        "value": value,
        "unit": match known { Some((_, _, true)) => "s", Some((_, _, false)) => "m", None => "garmin's own" },
        "time": known.filter(|k| k.2).and(value).map(clock),
        "distance_km": known.filter(|k| !k.2).and(value).map(|m| (m / 10.0).round() / 100.0),
        "date": date,
        "activity_id": activity,
        "activity_name": f(v, "activityName"),
    }))
}

const COORDINATES: &[&str] = &["startLatitude", "startLongitude", "endLatitude", "endLongitude"];

/// Laps (`lapDTOs` of `/splits`) as Garmin sends them, coordinates removed unless `gps`.
pub fn laps(v: &Value, gps: bool) -> Value {
    let strip = |l: &Value| {
        let mut l = l.clone();
        if let (false, Some(m)) = (gps, l.as_object_mut()) {
            for k in COORDINATES {
                m.remove(*k);
            }
        }
        l
    };
    Value::Array(v.get("lapDTOs").map(list).unwrap_or_default().iter().map(strip).collect())
}

/// Typed splits (`/typedsplits`): its `splits`, or the body when it is a bare list.
pub fn typed_splits(v: &Value, gps: bool) -> Value {
    let splits = v.get("splits").map(list).unwrap_or_else(|| if v.is_array() { list(v) } else { vec![] });
    laps(&json!({ "lapDTOs": splits }), gps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_paces_read_as_people_write_them() {
        assert_eq!(clock(1155.0), "0:19:15");
        assert_eq!(clock(11100.0), "3:05:00");
        assert_eq!(pace_per_km(1155.0, 5000.0), "3:51");
        // 0.41 tenths of m/s is 4.1 m/s: 4:04 per km, not ten times slower.
        let p = threshold_speed(&json!({"from": "2026-06-01", "until": "2026-06-07", "value": 0.41})).unwrap();
        assert_eq!(p["speed_m_s"], 4.1);
        assert_eq!(p["pace_per_km"], "4:04");
        assert_eq!(phrase(&json!("PRODUCTIVE_6")), json!("productive"));
        assert_eq!(phrase(&json!("NO_STATUS")), json!("no_status"));
    }

    #[test]
    fn a_threshold_day_is_one_row_whichever_route_came_first() {
        let rows = merge_threshold(vec![
            json!({"date": "2026-06-01", "heart_rate_bpm": 171.0}),
            threshold_speed(&json!({"from": "2026-06-01", "value": 0.41})).unwrap(),
            json!({"date": "2026-07-01", "heart_rate_bpm": 172.0}),
        ]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["heart_rate_bpm"], 171.0);
        assert_eq!(rows[0]["speed_m_s"], 4.1);
        assert_eq!(rows[1]["speed_m_s"], Value::Null);
    }

    #[test]
    fn records_are_typed_and_unknown_kinds_pass_through() {
        let five = personal_record(&json!({"id": 2, "typeId": 3, "activityId": 7, "activityName": "Threshold", "value": 1413.665,
            "prStartTimeGmtFormatted": "2022-12-20T15:26:30.0"}))
        .unwrap();
        assert_eq!((five["type"].as_str(), five["time"].as_str(), five["date"].as_str()), (Some("5 km"), Some("0:23:34"), Some("2022-12-20")));
        let other = personal_record(&json!({"id": 1, "typeId": 16, "activityId": 0, "value": 2.0})).unwrap();
        assert_eq!((other["type"].as_str(), other["unit"].as_str(), &other["activity_id"]), (Some("garmin type 16"), Some("garmin's own"), &Value::Null));
    }
}
