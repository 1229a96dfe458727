//! Google Health API data points as `vitals` answers them (reference §2.5, §3.2). proto3 JSON:
//! an int64 arrives as a string (`"87"`), a duration or an offset as seconds with an `s`
//! (`"7200s"`), a date as `{year, month, day}`, and a field at its default may be absent, so
//! every read here is lenient and an unreadable value is left out, never read as 0. Each record
//! carries the offset it was recorded in (`offset`, `+02:00`), and its day is the civil day there:
//! a minute or a sample under the day it happened, a sleep under the day it ended, an exercise
//! under the day it started. The `civil*` fields are used when Google sends them, else computed
//! as the instant plus its offset (live bodies lacked them, reference §3.2).
use crate::providers::PageError;
use jiff::civil::{Date, DateTime};
use jiff::tz::Offset;
use jiff::Timestamp;
use serde_json::{json, Map, Value};

/// A number Google may send as a JSON number or, for an int64, a string.
pub fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    }
}

/// A `google-duration` (`"7200s"`, `"-14400s"`, `"1.5s"`) in whole seconds.
pub fn seconds(v: Option<&Value>) -> Option<i64> {
    let s = v?.as_str()?.trim().strip_suffix('s')?;
    s.parse::<f64>().ok().filter(|x| x.is_finite() && x.abs() < 1e12).map(|x| x.round() as i64)
}

/// An offset from `"7200s"`; one that is not (absent, unreadable, beyond ±18 h) is UTC, and the
/// record says `offset: null` rather than a made-up zone.
fn offset_of(v: Option<&Value>) -> Option<Offset> {
    seconds(v).and_then(|s| i32::try_from(s).ok()).and_then(|s| Offset::from_seconds(s).ok())
}

/// `+02:00`, as the answer writes an offset.
fn offset_text(o: Offset) -> String {
    let s = o.seconds();
    let sign = if s < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", s.abs() / 3600, s.abs() % 3600 / 60)
}

/// A `Date` object.
pub fn date(v: Option<&Value>) -> Option<Date> {
    let d = v?;
    let part = |k: &str| d.get(k).and_then(Value::as_i64).and_then(|x| i16::try_from(x).ok());
    Date::new(part("year")?, i8::try_from(part("month")?).ok()?, i8::try_from(part("day")?).ok()?).ok()
}

/// An instant and its offset, as a point wrote them.
struct Moment {
    at: Timestamp,
    offset: Option<Offset>,
}

impl Moment {
    fn read(obj: &Value, time: &str, offset: &str) -> Option<Moment> {
        let at = obj.get(time)?.as_str()?.parse::<Timestamp>().ok()?;
        Some(Moment { at, offset: offset_of(obj.get(offset)) })
    }
    fn local(&self) -> DateTime {
        self.offset.unwrap_or(Offset::UTC).to_datetime(self.at)
    }
    fn day(&self) -> Date {
        self.local().date()
    }
    fn insert(&self, m: &mut Map<String, Value>, name: &str) {
        m.insert(name.into(), json!(self.at.to_string()));
        m.insert(format!("{name}_local"), json!(self.local().strftime("%Y-%m-%dT%H:%M:%S").to_string()));
    }
}

/// The day a `civil*` field names, when Google sent it.
fn civil_day(obj: &Value, key: &str) -> Option<Date> {
    date(obj.get(key).and_then(|c| c.get("date")))
}

fn put_offset(m: &mut Map<String, Value>, o: Option<Offset>) {
    m.insert("offset".into(), o.map(|o| json!(offset_text(o))).unwrap_or(Value::Null));
}

/// A listing's points and its continuation (`nextPageToken`, absent or empty on the last page).
pub fn envelope(body: &str) -> Result<(Vec<Value>, Option<String>), PageError> {
    let mut v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("Google Health sent a body that is not complete JSON ({e})")))?;
    let points = match v.get_mut("dataPoints").map(Value::take) {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a,
        Some(_) => return Err(PageError::Transient("Google Health sent `dataPoints` that is not a list".into())),
    };
    let next = v.get("nextPageToken").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
    Ok((points, next))
}

/// The camelCase key of a data type's value: `daily-resting-heart-rate` → `dailyRestingHeartRate`.
pub fn json_key(data_type: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for ch in data_type.chars() {
        if ch == '-' {
            up = true;
        } else if up {
            out.extend(ch.to_uppercase());
            up = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// One reconciled interval (a minute of steps, say): its day, start, offset and value(s), summed
/// per day by [`day_totals`].
pub fn minute(collection: &str, data_type: &str, point: &Value) -> Option<Value> {
    let v = point.get(json_key(data_type))?;
    let iv = v.get("interval")?;
    let start = Moment::read(iv, "startTime", "startUtcOffset")?;
    let day = civil_day(iv, "civilStartTime").unwrap_or_else(|| start.day());
    let mut m = Map::new();
    m.insert("day".into(), json!(day.to_string()));
    m.insert("start".into(), json!(start.at.to_string()));
    put_offset(&mut m, start.offset);
    let values: Vec<(&str, Option<f64>)> = match collection {
        "steps" => vec![("steps", num(v.get("count")))],
        "distance" => vec![("distance_m", num(v.get("millimeters")).map(|mm| mm / 1000.0))],
        "calories" => vec![("kcal", num(v.get("kcal")))],
        "floors" => vec![("floors", num(v.get("count")))],
        "active_zone_minutes" => {
            let zone = match v.get("heartRateZone").and_then(Value::as_str) {
                Some("FAT_BURN") => "fat_burn",
                Some("CARDIO") => "cardio",
                Some("PEAK") => "peak",
                _ => "azm",
            };
            let n = num(v.get("activeZoneMinutes"));
            if zone == "azm" {
                vec![("azm", n)]
            } else {
                vec![("azm", n), (zone, n)]
            }
        }
        _ => vec![],
    };
    for (k, x) in values {
        m.insert(k.into(), x.map(|x| json!(x)).unwrap_or(Value::Null));
    }
    Some(Value::Object(m))
}

/// The minutes of a query summed into one row a day. A minute seen twice (two windows' padding
/// both hold it) is counted once, by its start; `minutes` says how many were summed; the offset
/// is the day's last minute's, and `mixed` when the day holds two (a flight).
pub fn day_totals(collection: &str, minutes: Vec<Value>) -> Vec<Value> {
    use std::collections::{BTreeMap, HashSet};
    let mut seen = HashSet::new();
    let mut days: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let sums: &[&str] = match collection {
        "steps" => &["steps"],
        "distance" => &["distance_m"],
        "calories" => &["kcal"],
        "floors" => &["floors"],
        _ => &["azm", "fat_burn", "cardio", "peak"],
    };
    for r in minutes {
        let (Some(day), Some(start)) = (r.get("day").and_then(Value::as_str), r.get("start").and_then(Value::as_str)) else {
            // Already a day's row (a cached answer finished before): kept as it is.
            if let Some(d) = r.get("day").and_then(Value::as_str) {
                days.entry(d.to_string()).or_insert_with(|| r.as_object().cloned().unwrap_or_default());
            }
            continue;
        };
        if !seen.insert(start.to_string()) {
            continue;
        }
        let row = days.entry(day.to_string()).or_insert_with(|| {
            let mut m = Map::new();
            m.insert("day".into(), json!(day));
            m.insert("minutes".into(), json!(0));
            m
        });
        let n = row["minutes"].as_u64().unwrap_or(0) + 1;
        row.insert("minutes".into(), json!(n));
        for k in sums {
            if let Some(x) = r.get(*k).and_then(Value::as_f64) {
                let was = row.get(*k).and_then(Value::as_f64).unwrap_or(0.0);
                row.insert((*k).into(), json!(was + x));
            }
        }
        let o = r.get("offset").cloned().unwrap_or(Value::Null);
        match row.get("offset") {
            Some(prev) if *prev != o && prev != "mixed" => {
                row.insert("offset".into(), json!("mixed"));
            }
            None => {
                row.insert("offset".into(), o);
            }
            _ => {}
        }
    }
    days.into_values()
        .map(|mut m| {
            for k in sums {
                if let Some(x) = m.get(*k).and_then(Value::as_f64) {
                    m.insert((*k).into(), json!((x * 100.0).round() / 100.0));
                }
            }
            if let Some(d) = m.get("distance_m").and_then(Value::as_f64) {
                m.insert("distance_km".into(), json!((d / 10.0).round() / 100.0));
            }
            Value::Object(m)
        })
        .collect()
}

/// A daily type's record: Google's own `date`, its values under our names.
pub fn daily(collection: &str, data_type: &str, point: &Value) -> Option<Value> {
    let v = point.get(json_key(data_type))?;
    let day = date(v.get("date"))?;
    let mut m = Map::new();
    m.insert("day".into(), json!(day.to_string()));
    let n = |k: &str| num(v.get(k)).map(|x| json!(x)).unwrap_or(Value::Null);
    match collection {
        "resting_heart_rate" => {
            m.insert("bpm".into(), n("beatsPerMinute"));
            let how = v.get("dailyRestingHeartRateMetadata").and_then(|x| x.get("calculationMethod")).cloned().unwrap_or(Value::Null);
            m.insert("calculation_method".into(), how);
        }
        "hrv" => {
            m.insert("rmssd_ms".into(), n("averageHeartRateVariabilityMilliseconds"));
            m.insert("deep_sleep_rmssd_ms".into(), n("deepSleepRootMeanSquareOfSuccessiveDifferencesMilliseconds"));
            m.insert("non_rem_hr_bpm".into(), n("nonRemHeartRateBeatsPerMinute"));
            m.insert("entropy".into(), n("entropy"));
        }
        "spo2" => {
            m.insert("avg_pct".into(), n("averagePercentage"));
            m.insert("low_pct".into(), n("lowerBoundPercentage"));
            m.insert("high_pct".into(), n("upperBoundPercentage"));
            m.insert("stddev_pct".into(), n("standardDeviationPercentage"));
        }
        "respiratory_rate" => {
            m.insert("breaths_per_min".into(), n("breathsPerMinute"));
        }
        "skin_temperature" => {
            let (night, base) = (num(v.get("nightlyTemperatureCelsius")), num(v.get("baselineTemperatureCelsius")));
            m.insert("nightly_c".into(), n("nightlyTemperatureCelsius"));
            m.insert("baseline_c".into(), n("baselineTemperatureCelsius"));
            let variation = night.zip(base).map(|(a, b)| json!(((a - b) * 100.0).round() / 100.0));
            m.insert("variation_c".into(), variation.unwrap_or(Value::Null));
            m.insert("relative_stddev_30d_c".into(), n("relativeNightlyStddev30dCelsius"));
        }
        "cardio_fitness" => {
            m.insert("vo2_max".into(), n("vo2Max"));
            m.insert("level".into(), v.get("cardioFitnessLevel").cloned().unwrap_or(Value::Null));
            m.insert("estimated".into(), json!(v.get("estimated").and_then(Value::as_bool).unwrap_or(false)));
        }
        _ => {}
    }
    Some(Value::Object(m))
}

/// A sample (`sampleTime`): a weigh-in, a body-fat reading, a heart-rate sample.
pub fn sample(collection: &str, data_type: &str, point: &Value) -> Option<Value> {
    let v = point.get(json_key(data_type))?;
    let st = v.get("sampleTime")?;
    let at = Moment::read(st, "physicalTime", "utcOffset")?;
    let mut m = Map::new();
    if collection == "heart_rate" {
        // The instant in the offset it was recorded in, so its day is the day there.
        let stamp = at.offset.unwrap_or(Offset::UTC).to_datetime(at.at).strftime("%Y-%m-%dT%H:%M:%S").to_string();
        m.insert("timestamp".into(), json!(format!("{stamp}{}", offset_text(at.offset.unwrap_or(Offset::UTC)))));
        m.insert("bpm".into(), num(v.get("beatsPerMinute")).map(|x| json!(x)).unwrap_or(Value::Null));
        return Some(Value::Object(m));
    }
    let day = civil_day(st, "civilTime").unwrap_or_else(|| at.day());
    m.insert("day".into(), json!(day.to_string()));
    at.insert(&mut m, "time");
    put_offset(&mut m, at.offset);
    match collection {
        "weight" => {
            m.insert("weight_kg".into(), num(v.get("weightGrams")).map(|g| json!((g / 10.0).round() / 100.0)).unwrap_or(Value::Null));
            if let Some(n) = v.get("notes").filter(|n| n.as_str().is_some_and(|s| !s.is_empty())) {
                m.insert("notes".into(), n.clone());
            }
        }
        "body_fat" => {
            m.insert("percentage".into(), num(v.get("percentage")).map(|x| json!(x)).unwrap_or(Value::Null));
        }
        _ => {}
    }
    Some(Value::Object(m))
}

/// Minutes from an int64 string.
fn mins(v: Option<&Value>) -> Value {
    num(v).map(|x| json!(x)).unwrap_or(Value::Null)
}

/// A sleep, under the civil day it ended.
pub fn sleep(point: &Value) -> Option<Value> {
    let v = point.get("sleep")?;
    let iv = v.get("interval")?;
    let (start, end) = (Moment::read(iv, "startTime", "startUtcOffset")?, Moment::read(iv, "endTime", "endUtcOffset")?);
    let mut m = Map::new();
    m.insert("id".into(), point.get("name").cloned().unwrap_or_else(|| json!(start.at.to_string())));
    m.insert("day".into(), json!(civil_day(iv, "civilEndTime").unwrap_or_else(|| end.day()).to_string()));
    start.insert(&mut m, "start");
    end.insert(&mut m, "end");
    put_offset(&mut m, end.offset);
    m.insert("type".into(), v.get("type").cloned().unwrap_or(Value::Null));
    let meta = v.get("metadata");
    let flag = |k: &str| meta.and_then(|x| x.get(k)).and_then(Value::as_bool).unwrap_or(false);
    // Absent is false in proto3 JSON: a sleep Google does not call a nap is not one.
    m.insert("nap".into(), json!(flag("nap")));
    m.insert("main_sleep".into(), json!(flag("mainSleep")));
    m.insert("stages_status".into(), meta.and_then(|x| x.get("stagesStatus")).cloned().unwrap_or(Value::Null));
    let s = v.get("summary");
    let g = |k: &str| s.and_then(|x| x.get(k));
    m.insert("asleep_min".into(), mins(g("minutesAsleep")));
    m.insert("awake_min".into(), mins(g("minutesAwake")));
    m.insert("in_period_min".into(), mins(g("minutesInSleepPeriod")));
    m.insert("to_fall_asleep_min".into(), mins(g("minutesToFallAsleep")));
    for st in g("stagesSummary").and_then(Value::as_array).into_iter().flatten() {
        let name = match st.get("type").and_then(Value::as_str) {
            Some("DEEP") => "deep_min",
            Some("LIGHT") => "light_min",
            Some("REM") => "rem_min",
            Some("RESTLESS") => "restless_min",
            _ => continue,
        };
        m.insert(name.into(), mins(st.get("minutes")));
    }
    Some(Value::Object(m))
}

/// An exercise, under the civil day it started.
pub fn exercise(point: &Value) -> Option<Value> {
    let v = point.get("exercise")?;
    let iv = v.get("interval")?;
    let start = Moment::read(iv, "startTime", "startUtcOffset")?;
    let end = Moment::read(iv, "endTime", "endUtcOffset");
    let mut m = Map::new();
    let id = point.get("name").and_then(Value::as_str).map(|n| n.rsplit('/').next().unwrap_or(n).to_string());
    m.insert("id".into(), json!(id.unwrap_or_else(|| start.at.to_string())));
    m.insert("day".into(), json!(civil_day(iv, "civilStartTime").unwrap_or_else(|| start.day()).to_string()));
    m.insert("exercise_type".into(), v.get("exerciseType").cloned().unwrap_or(Value::Null));
    m.insert("name".into(), v.get("displayName").cloned().unwrap_or(Value::Null));
    start.insert(&mut m, "start");
    if let Some(e) = &end {
        e.insert(&mut m, "end");
    }
    put_offset(&mut m, start.offset);
    let minutes = |s: Option<i64>| s.map(|s| json!((s as f64 / 6.0).round() / 10.0)).unwrap_or(Value::Null);
    m.insert("active_min".into(), minutes(seconds(v.get("activeDuration"))));
    let ms = v.get("metricsSummary");
    let g = |k: &str| ms.and_then(|x| x.get(k));
    let put = |m: &mut Map<String, Value>, name: &str, x: Option<f64>| {
        m.insert(name.into(), x.map(|x| json!((x * 100.0).round() / 100.0)).unwrap_or(Value::Null));
    };
    put(&mut m, "kcal", num(g("caloriesKcal")));
    put(&mut m, "distance_km", num(g("distanceMillimeters")).map(|mm| mm / 1e6));
    put(&mut m, "steps", num(g("steps")));
    put(&mut m, "hr_avg_bpm", num(g("averageHeartRateBeatsPerMinute")));
    put(&mut m, "elevation_gain_m", num(g("elevationGainMillimeters")).map(|mm| mm / 1000.0));
    put(&mut m, "azm", num(g("activeZoneMinutes")));
    let zones = g("heartRateZoneDurations");
    for (k, name) in [("lightTime", "light_min"), ("moderateTime", "moderate_min"), ("vigorousTime", "vigorous_min"), ("peakTime", "peak_min")] {
        m.insert(name.into(), minutes(seconds(zones.and_then(|z| z.get(k)))));
    }
    Some(Value::Object(m))
}

/// A point of any type as Google sent it, for the raw collection.
pub fn raw(data_type: &str, point: &Value) -> Value {
    let v = point.get(json_key(data_type));
    json!({
        "day": v.and_then(|v| raw_day(data_type, v)).map(|d| d.to_string()),
        "name": point.get("name").cloned().unwrap_or(Value::Null),
        "data_source": point.get("dataSource").cloned().unwrap_or(Value::Null),
        "value": v.cloned().unwrap_or(Value::Null),
    })
}

/// The civil day of a point of any type, as its record kind dates it (reference §2.3): a daily
/// type's `date`, a sample's time, a sleep's end and any other interval's start, in the offset
/// they were recorded in when Google sends no `civil*` field. None: a shape without a time.
fn raw_day(data_type: &str, v: &Value) -> Option<Date> {
    if let Some(d) = date(v.get("date")) {
        return Some(d);
    }
    if let Some(st) = v.get("sampleTime") {
        return civil_day(st, "civilTime").or_else(|| Moment::read(st, "physicalTime", "utcOffset").map(|m| m.day()));
    }
    let iv = v.get("interval")?;
    match data_type {
        "sleep" => civil_day(iv, "civilEndTime").or_else(|| Moment::read(iv, "endTime", "endUtcOffset").map(|m| m.day())),
        _ => civil_day(iv, "civilStartTime").or_else(|| Moment::read(iv, "startTime", "startUtcOffset").map(|m| m.day())),
    }
}

/// What a `google.rpc.Status` error body says: `(status, reason, message)`.
pub fn status(body: &str) -> Option<(String, String, String)> {
    let v: Value = serde_json::from_str(body).ok()?;
    let e = v.get("error")?;
    let s = |x: Option<&Value>| x.and_then(Value::as_str).unwrap_or("").to_string();
    let reason = e.get("details").and_then(Value::as_array).into_iter().flatten().find_map(|d| d.get("reason").and_then(Value::as_str)).unwrap_or("");
    Some((s(e.get("status")), reason.to_string(), s(e.get("message"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto3_json_is_read_leniently() {
        assert_eq!(num(Some(&json!("87"))), Some(87.0));
        assert_eq!(num(Some(&json!(72100))), Some(72100.0));
        assert_eq!(num(Some(&json!("NaN"))), None);
        assert_eq!(seconds(Some(&json!("-14400s"))), Some(-14400));
        assert_eq!(seconds(Some(&json!("7200"))), None);
        assert_eq!(json_key("daily-resting-heart-rate"), "dailyRestingHeartRate");
    }

    #[test]
    fn a_sleep_is_under_the_day_it_ended_in_its_own_offset() {
        let p = json!({"name": "users/me/dataTypes/sleep/dataPoints/1", "sleep": {
            "interval": {"startTime": "2026-06-01T21:30:00Z", "startUtcOffset": "7200s", "endTime": "2026-06-02T04:30:00Z", "endUtcOffset": "-36000s"},
            "type": "STAGES", "summary": {"minutesAsleep": "400", "stagesSummary": [{"type": "DEEP", "minutes": "60"}]}}});
        let s = sleep(&p).unwrap();
        // 04:30 UTC at −10:00 is 18:30 the day before: the day it ended there.
        assert_eq!(s["day"], "2026-06-01");
        assert_eq!(s["offset"], "-10:00");
        assert_eq!(s["asleep_min"], 400.0);
        assert_eq!(s["deep_min"], 60.0);
        assert_eq!(s["nap"], false);
    }

    #[test]
    fn minutes_seen_in_two_windows_are_summed_once() {
        let m = |start: &str, n: &str| {
            minute("steps", "steps", &json!({"steps": {"interval": {"startTime": start, "startUtcOffset": "3600s", "endTime": start}, "count": n}})).unwrap()
        };
        let rows = day_totals("steps", vec![m("2026-06-01T10:00:00Z", "10"), m("2026-06-01T10:01:00Z", "5"), m("2026-06-01T10:00:00Z", "10")]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["steps"], 15.0);
        assert_eq!(rows[0]["minutes"], 2);
        assert_eq!(rows[0]["offset"], "+01:00");
    }

    #[test]
    fn a_google_rpc_status_is_read() {
        let b = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded","details":[{"@type":"x","reason":"RATE_LIMIT_EXCEEDED"}]}}"#;
        assert_eq!(status(b), Some(("RESOURCE_EXHAUSTED".into(), "RATE_LIMIT_EXCEEDED".into(), "Quota exceeded".into())));
    }
}
