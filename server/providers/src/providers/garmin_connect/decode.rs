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
        "day": day_of(v.get("calendarDate")?)?,
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
        "day": day_of(status.get("calendarDate")?)?,
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
        "day": date,
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
    row.insert("day".into(), day_of(v.get("calendarDate")?)?.into());
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
        "day": day_of(v.get("from")?)?,
        "speed_m_s": (speed * 1000.0).round() / 1000.0,
        "pace_per_km": pace_per_km(1000.0 / speed, 1000.0),
    }))
}

/// A point of the heart-rate history.
pub fn threshold_heart_rate(v: &Value) -> Option<Value> {
    Some(json!({ "day": day_of(v.get("from")?)?, "heart_rate_bpm": num(v, "value")? }))
}

/// The speed and heart-rate points of one day in one row (they come from two routes).
pub fn merge_threshold(records: Vec<Value>) -> Vec<Value> {
    let mut days: std::collections::BTreeMap<String, Map<String, Value>> = Default::default();
    for r in records {
        let Some(day) = r.get("day").and_then(Value::as_str).map(str::to_string) else { continue };
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
        "day": date,
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

/// Garmin's endurance levels above the lowest, by the key of the threshold each starts at.
const ENDURANCE_LEVELS: &[(&str, &str)] = &[
    ("classificationLowerLimitIntermediate", "intermediate"),
    ("classificationLowerLimitTrained", "trained"),
    ("classificationLowerLimitWellTrained", "well trained"),
    ("classificationLowerLimitExpert", "expert"),
    ("classificationLowerLimitSuperior", "superior"),
    ("classificationLowerLimitElite", "elite"),
];

/// A day's endurance score: the one-day route's object (its fields at the top, or under
/// `enduranceScoreDTO` as the range route sends its latest). The level is read against the
/// thresholds sent with the score, so it is Garmin's scale for this person; with none sent, null.
pub fn endurance_score(v: &Value) -> Option<Value> {
    let dto = v.get("enduranceScoreDTO").filter(|d| d.is_object()).unwrap_or(v);
    let score = num(dto, "overallScore")?;
    let thresholds: Vec<(&str, f64)> = ENDURANCE_LEVELS.iter().filter_map(|(k, name)| Some((*name, num(dto, k)?))).collect();
    let level = match thresholds.iter().rev().find(|(_, at)| score >= *at) {
        Some((name, _)) => Value::from(*name),
        None if !thresholds.is_empty() => Value::from("recreational"),
        None => Value::Null,
    };
    let contributors: Vec<Value> = dto
        .get("contributors")
        .map(list)
        .unwrap_or_default()
        .iter()
        .map(|c| json!({"activity_type_id": f(c, "activityTypeId"), "group": f(c, "group"), "percent": f(c, "contribution")}))
        .collect();
    Some(json!({
        "day": day_of(dto.get("calendarDate")?)?,
        "score": f(dto, "overallScore"),
        "level": level,
        "classification": f(dto, "classification"),
        "feedback_id": f(dto, "feedbackPhrase"),
        "level_thresholds": Value::Object(ENDURANCE_LEVELS.iter().filter(|(k, _)| num(dto, k).is_some()).map(|(k, n)| (n.to_string(), f(dto, k))).collect()),
        "contributors": contributors,
    }))
}

/// The hill score stats route's days (`hillScoreDTOList`, newest first there), one row a day in
/// date order: the primary training device's where two devices scored a day.
pub fn hill_scores(v: &Value) -> Vec<Value> {
    let mut days: std::collections::BTreeMap<String, (bool, Value)> = Default::default();
    for h in v.get("hillScoreDTOList").map(list).unwrap_or_default() {
        let (Some(date), Some(_)) = (h.get("calendarDate").and_then(day_of), num(&h, "overallScore")) else { continue };
        let primary = h.get("primaryTrainingDevice").and_then(Value::as_bool) != Some(false);
        if days.get(&date).is_some_and(|(p, _)| *p || !primary) {
            continue;
        }
        let vo2 = [f(&h, "vo2MaxPreciseValue"), f(&h, "vo2Max")].into_iter().find(|x| !x.is_null()).unwrap_or(Value::Null);
        let row = json!({
            "day": date,
            "score": f(&h, "overallScore"),
            "strength": f(&h, "strengthScore"),
            "endurance": f(&h, "enduranceScore"),
            "classification": f(&h, "hillScoreClassificationId"),
            "feedback_id": f(&h, "hillScoreFeedbackPhraseId"),
            "vo2max": vo2,
        });
        days.insert(date, (primary, row));
    }
    days.into_values().map(|(_, r)| r).collect()
}

/// A local time Garmin sends, unless it is its placeholder for none (the epoch).
fn local_or_none(v: &Value) -> Value {
    local_time(v).as_str().filter(|s| !s.starts_with("1970-01-01")).map(Value::from).unwrap_or(Value::Null)
}

/// A breathing rate as Garmin wrote it: its negative values (-1, -2) are "no reading".
fn breaths(v: &Value, k: &str) -> Value {
    if num(v, k).is_some_and(|x| x >= 0.0) {
        f(v, k)
    } else {
        Value::Null
    }
}

/// A day's breathing: the summary values and the readings (`[epoch ms, breaths/min]`, at the
/// indexes the descriptors name) as an evenly spaced series; a day with none of them is no row.
pub fn respiration(v: &Value) -> Option<Value> {
    let date = day_of(v.get("calendarDate")?)?;
    let index = |key: &str, default: usize| -> usize {
        v.get("respirationValueDescriptorsDTOList")
            .map(list)
            .unwrap_or_default()
            .iter()
            .find(|d| d.get("key").and_then(Value::as_str) == Some(key))
            .and_then(|d| d.get("index").and_then(Value::as_u64))
            .map_or(default, |i| i as usize)
    };
    let (at, value) = (index("timestamp", 0), index("respiration", 1));
    // A no-reading keeps its time as NaN, which the series writes as null: the spacing is the
    // device's, gaps included.
    let points: Vec<(f64, f64)> = v
        .get("respirationValuesArray")
        .map(list)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| Some((p.get(at)?.as_f64()? / 1000.0, p.get(value)?.as_f64().filter(|x| *x >= 0.0).unwrap_or(f64::NAN))))
        .filter(|(t, _)| t.is_finite() && jiff::Timestamp::from_second(*t as i64).is_ok())
        .collect();
    let readings = match points.first().filter(|_| points.iter().any(|(_, x)| !x.is_nan())) {
        Some((t0, _)) => {
            let start = jiff::Timestamp::from_second(*t0 as i64).map(|t| crate::time::rfc3339(&t.to_zoned(jiff::tz::TimeZone::UTC))).unwrap_or_default();
            crate::providers::series::even(&points, &start)
        }
        None => Value::Null,
    };
    let row = json!({
        "day": date,
        "lowest_per_min": breaths(v, "lowestRespirationValue"),
        "highest_per_min": breaths(v, "highestRespirationValue"),
        "waking_avg_per_min": breaths(v, "avgWakingRespirationValue"),
        "sleep_avg_per_min": breaths(v, "avgSleepRespirationValue"),
        "sleep_start": local_or_none(&f(v, "sleepStartTimestampLocal")),
        "sleep_end": local_or_none(&f(v, "sleepEndTimestampLocal")),
        "readings": readings,
    });
    let measured = ["lowest_per_min", "highest_per_min", "waking_avg_per_min", "sleep_avg_per_min", "readings"].iter().any(|k| !row[*k].is_null());
    measured.then_some(row)
}

/// A night of the sleep-score stats route: `{calendarDate, value}` (the day the night ends).
pub fn sleep_score(v: &Value) -> Option<Value> {
    let score = if num(v, "value").is_some() { f(v, "value") } else { Value::Null };
    Some(json!({"day": day_of(v.get("calendarDate")?)?, "score": score}))
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
            json!({"day": "2026-06-01", "heart_rate_bpm": 171.0}),
            threshold_speed(&json!({"from": "2026-06-01", "value": 0.41})).unwrap(),
            json!({"day": "2026-07-01", "heart_rate_bpm": 172.0}),
        ]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["heart_rate_bpm"], 171.0);
        assert_eq!(rows[0]["speed_m_s"], 4.1);
        assert_eq!(rows[1]["speed_m_s"], Value::Null);
    }

    /// The level is Garmin's scale for this person: read against the thresholds sent with the score.
    #[test]
    fn an_endurance_level_is_read_against_its_own_thresholds() {
        let day = |score: i64| {
            json!({"calendarDate": "2026-02-27", "overallScore": score, "classification": 5, "classificationLowerLimitIntermediate": 5100,
                "classificationLowerLimitTrained": 5800, "classificationLowerLimitWellTrained": 6600, "classificationLowerLimitExpert": 7300,
                "classificationLowerLimitSuperior": 8100, "classificationLowerLimitElite": 8800,
                "contributors": [{"activityTypeId": 3, "group": null, "contribution": 6.38}]})
        };
        let levels: Vec<Value> = [4000, 5100, 7299, 7300, 9000].iter().map(|s| endurance_score(&day(*s)).unwrap()["level"].clone()).collect();
        assert_eq!(levels, [json!("recreational"), json!("intermediate"), json!("well trained"), json!("expert"), json!("elite")]);
        let row = endurance_score(&json!({"enduranceScoreDTO": day(7460), "groupMap": {}})).unwrap();
        assert_eq!((row["score"].clone(), row["level_thresholds"]["expert"].clone()), (json!(7460), json!(7300)));
        assert_eq!(row["contributors"][0], json!({"activity_type_id": 3, "group": null, "percent": 6.38}));
        let bare = endurance_score(&json!({"calendarDate": "2026-02-27", "overallScore": 6000})).unwrap();
        assert!(bare["level"].is_null(), "no thresholds sent, no level made up");
        assert!(endurance_score(&json!({"calendarDate": "2026-02-27", "overallScore": null})).is_none());
    }

    #[test]
    fn hill_scores_are_a_day_each_of_the_primary_device_in_date_order() {
        let v = json!({"hillScoreDTOList": [
            {"calendarDate": "2026-02-26", "overallScore": 74, "strengthScore": 36, "enduranceScore": 79, "primaryTrainingDevice": true},
            {"calendarDate": "2026-02-25", "overallScore": 12, "primaryTrainingDevice": false},
            {"calendarDate": "2026-02-25", "overallScore": 73, "vo2MaxPreciseValue": 51.2, "primaryTrainingDevice": true},
            {"calendarDate": "2026-02-24", "overallScore": null}]});
        let rows = hill_scores(&v);
        let got: Vec<(&str, i64)> = rows.iter().map(|r| (r["day"].as_str().unwrap(), r["score"].as_i64().unwrap())).collect();
        assert_eq!(got, [("2026-02-25", 73), ("2026-02-26", 74)]);
        assert_eq!((rows[0]["vo2max"].as_f64(), rows[1]["strength"].as_i64()), (Some(51.2), Some(36)));
    }

    /// Garmin's -1 and -2 are no reading: null in the summary and a gap in the series.
    #[test]
    fn breathing_no_reading_is_null_and_a_day_of_nothing_is_no_row() {
        let day = json!({"calendarDate": "2026-06-01", "lowestRespirationValue": -1.0, "highestRespirationValue": 19.0, "avgSleepRespirationValue": null,
            "sleepStartTimestampLocal": "1970-01-01T00:00:00.000", "sleepEndTimestampLocal": "2026-06-01T06:40:15.0",
            "respirationValueDescriptorsDTOList": [{"key": "respiration", "index": 0}, {"key": "timestamp", "index": 1}],
            "respirationValuesArray": [[12.0, 1780293600000i64], [-2.0, 1780293720000i64], [14.0, 1780293840000i64]]});
        let row = respiration(&day).unwrap();
        assert_eq!((row["lowest_per_min"].clone(), row["highest_per_min"].clone()), (Value::Null, json!(19.0)));
        assert_eq!((row["sleep_start"].clone(), row["sleep_end"].as_str()), (Value::Null, Some("2026-06-01T06:40:15")));
        assert_eq!(row["readings"], json!({"interval_s": 120.0, "start": "2026-06-01T06:00:00+00:00", "items": [12.0, null, 14.0]}));
        let none = json!({"calendarDate": "2026-06-02", "lowestRespirationValue": null, "respirationValuesArray": []});
        assert!(respiration(&none).is_none());
        assert_eq!(sleep_score(&json!({"calendarDate": "2023-07-01", "value": 60})).unwrap(), json!({"day": "2023-07-01", "score": 60}));
    }

    #[test]
    fn records_are_typed_and_unknown_kinds_pass_through() {
        let five = personal_record(&json!({"id": 2, "typeId": 3, "activityId": 7, "activityName": "Threshold", "value": 1413.665,
            "prStartTimeGmtFormatted": "2022-12-20T15:26:30.0"}))
        .unwrap();
        assert_eq!((five["type"].as_str(), five["time"].as_str(), five["day"].as_str()), (Some("5 km"), Some("0:23:34"), Some("2022-12-20")));
        let other = personal_record(&json!({"id": 1, "typeId": 16, "activityId": 0, "value": 2.0})).unwrap();
        assert_eq!((other["type"].as_str(), other["unit"].as_str(), &other["activity_id"]), (Some("garmin type 16"), Some("garmin's own"), &Value::Null));
    }
}
