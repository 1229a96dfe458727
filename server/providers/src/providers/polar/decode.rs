//! Polar AccessLink v3's wire format → rows (reference `polar/README.md` §4). Polar mixes
//! snake_case and kebab-case, sometimes within one object, and the live API is reported to differ
//! from its spec on nested keys: every read here accepts both spellings. Field names of the rows
//! carry their unit (`duration_s`, `deep_min`), like every provider's.
use super::summary::{self, r1};
use crate::providers::series::even;
use crate::time::{rfc3339, Zone};
use jiff::civil::{Date, DateTime};
use jiff::tz::{Offset, TimeZone};
use serde_json::{json, Map, Value};

/// The first of `keys` that `v` has (snake and kebab spellings of one field).
pub fn get<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| v.get(*k).filter(|x| !x.is_null()))
}

fn num(v: &Value, keys: &[&str]) -> Option<f64> {
    get(v, keys).and_then(|x| x.as_f64().or_else(|| x.as_str().and_then(|s| s.trim().parse().ok())))
}

/// Polar's "not available" is `-1.0`: null, never a value.
fn avail(x: Option<f64>) -> Value {
    match x {
        Some(v) if v >= 0.0 => json!(v),
        _ => Value::Null,
    }
}

/// A rate, or a score on a scale that starts at 1 (sleep score 1–100, charge 1–5, continuity
/// 1.0–5.0): Polar's 0 there is "none", never a value.
fn positive(v: &Value, keys: &[&str]) -> Value {
    num(v, keys).filter(|x| *x > 0.0).map_or(Value::Null, |x| json!(x))
}

/// The levels a Training Load Pro interpretation names when its value is a load.
const LOAD_LEVELS: [&str; 5] = ["VERY_LOW", "LOW", "MEDIUM", "HIGH", "VERY_HIGH"];

/// A Training Load Pro value (cardio, muscle or perceived load), read by its interpretation:
/// `NOT_AVAILABLE` is no load whatever the number beside it (Polar sends `perceived-load: 0.0`
/// for an exercise nobody rated, `muscle-load: -1.0` for one without power), a level vouches for
/// the number. Without a level (`UNKNOWN`, or no interpretation) only Polar's `-1.0` sentinel
/// is left to tell by, and a perceived load needs the user's rating (`user-rpe`) besides.
fn load(pro: &Value, value: &[&str], interpretation: &[&str], perceived: bool) -> Value {
    let x = num(pro, value);
    let said = get(pro, interpretation).and_then(Value::as_str).unwrap_or("UNKNOWN");
    let rated = get(pro, &["user-rpe", "user_rpe"]).and_then(Value::as_str).is_some_and(|r| r.starts_with("RPE_"));
    match said {
        "NOT_AVAILABLE" => Value::Null,
        level if LOAD_LEVELS.contains(&level) => avail(x),
        _ if perceived && !rated => Value::Null,
        _ => avail(x),
    }
}

fn text(v: &Value, keys: &[&str]) -> Value {
    get(v, keys).cloned().unwrap_or(Value::Null)
}

/// ISO 8601 duration (`PT44M30S`, `PT210.026S`) → seconds.
pub fn iso_seconds(s: &str) -> Option<f64> {
    let span: jiff::Span = s.trim().parse().ok()?;
    span.total(jiff::Unit::Second).ok()
}

fn minutes(v: &Value, keys: &[&str]) -> Value {
    get(v, keys).and_then(Value::as_str).and_then(iso_seconds).map(|s| json!(r1(s / 60.0))).unwrap_or(Value::Null)
}

fn secs_to_min(v: &Value, keys: &[&str]) -> Value {
    num(v, keys).map(|s| json!(r1(s / 60.0))).unwrap_or(Value::Null)
}

/// A comma-separated sample string → values; `NULL`, `null`, `NaN` or an empty item is a sample
/// the sensor did not record.
pub fn sample_values(data: &str) -> Vec<Option<f64>> {
    if data.trim().is_empty() {
        return vec![];
    }
    data.split(',').map(|x| x.trim().parse::<f64>().ok().filter(|v| v.is_finite())).collect()
}

/// Polar's sample types (reference §4.1): index → (name, unit).
pub const SAMPLE_TYPES: [(&str, &str); 12] = [
    ("heart_rate", "bpm"),
    ("speed", "km/h"),
    ("cadence", "rpm"),
    ("altitude", "m"),
    ("power", "W"),
    ("pedalling_index", "%"),
    ("lr_balance", "%"),
    ("air_pressure", "hPa"),
    ("running_cadence", "spm"),
    ("temperature", "°C"),
    ("distance", "m"),
    ("rr_interval", "ms"),
];

/// The raw sample fields of an exercise row, one per sample type, in [`SAMPLE_TYPES`] order.
pub const RAW_FIELDS: [&str; 12] = [
    "samples_heart_rate",
    "samples_speed",
    "samples_cadence",
    "samples_altitude",
    "samples_power",
    "samples_pedalling_index",
    "samples_lr_balance",
    "samples_air_pressure",
    "samples_running_cadence",
    "samples_temperature",
    "samples_distance",
    "samples_rr_interval",
];

/// The summary fields of an exercise row (made from its samples).
pub const SUMMARY_FIELDS: [&str; 7] = ["splits", "power", "elevation", "cadence", "hrv", "temperature", "sample_counts"];

/// `2026-02-01T17:55:10` at `offset_min` minutes from UTC → RFC 3339.
fn local_with_offset(local: &str, offset_min: i64) -> Option<String> {
    let dt: DateTime = local.trim().parse().ok()?;
    let off = Offset::from_seconds(i32::try_from(offset_min.checked_mul(60)?).ok()?).ok()?;
    let z = off.to_timestamp(dt).ok()?.to_zoned(TimeZone::fixed(off));
    Some(rfc3339(&z))
}

/// One exercise. Its samples become summaries and raw series (the caller's options decide which
/// are kept, in [`super::Polar::finish`]).
pub fn exercise(v: &Value) -> Value {
    let offset = num(v, &["start_time_utc_offset", "start-time-utc-offset"]).unwrap_or(0.0) as i64;
    let start_local = get(v, &["start_time", "start-time"]).and_then(Value::as_str).unwrap_or_default();
    let start = local_with_offset(start_local, offset);
    let pro = get(v, &["training_load_pro", "training-load-pro"]).cloned().unwrap_or(Value::Null);
    let hr = get(v, &["heart_rate", "heart-rate"]).cloned().unwrap_or(Value::Null);
    let zones: Vec<Value> = get(v, &["heart_rate_zones", "heart-rate-zones"])
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|z| {
                    json!({
                        "index": text(z, &["index"]),
                        "lower_bpm": text(z, &["lower_limit", "lower-limit"]),
                        "upper_bpm": text(z, &["upper_limit", "upper-limit"]),
                        "in_zone_s": get(z, &["in_zone", "in-zone"]).and_then(Value::as_str).and_then(iso_seconds).map(r1),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut row = json!({
        "id": text(v, &["id"]),
        "start_time": start,
        "upload_time": text(v, &["upload_time", "upload-time"]),
        "sport": text(v, &["sport"]),
        "detailed_sport": text(v, &["detailed_sport_info", "detailed-sport-info"]),
        "device": text(v, &["device"]),
        "duration_s": get(v, &["duration"]).and_then(Value::as_str).and_then(iso_seconds).map(r1),
        "distance_m": num(v, &["distance"]),
        "calories_kcal": num(v, &["calories"]),
        "hr_avg_bpm": positive(&hr, &["average"]),
        "hr_max_bpm": positive(&hr, &["maximum"]),
        "hr_zones": zones,
        "training_load": avail(num(v, &["training_load", "training-load"])),
        "cardio_load": self::load(&pro, &["cardio-load", "cardio_load"], &["cardio-load-interpretation", "cardio_load_interpretation"], false),
        "muscle_load": self::load(&pro, &["muscle-load", "muscle_load"], &["muscle-load-interpretation", "muscle_load_interpretation"], false),
        "perceived_load": self::load(&pro, &["perceived-load", "perceived_load"], &["perceived-load-interpretation", "perceived_load_interpretation"], true),
        "running_index": positive(v, &["running-index", "running_index"]),
        "fat_pct": num(v, &["fat_percentage", "fat-percentage"]),
        "carbohydrate_pct": num(v, &["carbohydrate_percentage", "carbohydrate-percentage"]),
        "protein_pct": num(v, &["protein_percentage", "protein-percentage"]),
        "has_route": text(v, &["has_route", "has-route"]),
    });
    if let Some(samples) = get(v, &["samples"]).and_then(Value::as_array) {
        add_samples(&mut row, samples, start.as_deref());
    }
    row
}

/// Summaries and raw series of an exercise's samples.
fn add_samples(row: &mut Value, samples: &[Value], start: Option<&str>) {
    let mut by_type: Vec<Option<(f64, Vec<Option<f64>>)>> = vec![None; SAMPLE_TYPES.len()];
    for s in samples {
        let kind = get(s, &["sample_type", "sample-type"]).and_then(|t| t.as_u64().or_else(|| t.as_str().and_then(|x| x.trim().parse().ok())));
        let Some(kind) = kind.map(|k| k as usize).filter(|k| *k < SAMPLE_TYPES.len()) else { continue };
        let rate = num(s, &["recording_rate", "recording-rate"]).unwrap_or(0.0);
        let mut values = get(s, &["data"]).and_then(Value::as_str).map(sample_values).unwrap_or_default();
        if kind == 0 {
            // A heart rate of 0 is the sensor without contact: offline, like `NULL`.
            values.iter_mut().filter(|x| **x == Some(0.0)).for_each(|x| *x = None);
        }
        by_type[kind] = Some((rate, values));
    }
    let series = |k: usize| by_type[k].as_ref().map(|(_, v)| v.as_slice());
    let rate_of = |k: usize| by_type[k].as_ref().map(|(r, _)| *r).filter(|r| *r > 0.0);
    let rate = [0, 1, 10, 4, 3].iter().find_map(|k| rate_of(*k)).unwrap_or(1.0);
    let m = row.as_object_mut().expect("a row is an object");
    let counts: Map<String, Value> = SAMPLE_TYPES
        .iter()
        .enumerate()
        .filter_map(|(k, (name, _))| {
            let v = series(k)?;
            Some((name.to_string(), json!({"samples": v.len(), "missing": v.iter().filter(|x| x.is_none()).count()})))
        })
        .collect();
    m.insert("sample_counts".into(), Value::Object(counts));
    m.insert("splits".into(), json!(summary::km_splits(series(10), series(1), series(0), rate)));
    m.insert("power".into(), json!(series(4).and_then(|p| summary::power(p, rate_of(4).unwrap_or(rate)))));
    m.insert("elevation".into(), json!(series(3).and_then(summary::elevation)));
    let cadence = series(8).map(|c| (c, "running cadence (spm)")).or(series(2).map(|c| (c, "cadence (rpm)")));
    m.insert("cadence".into(), json!(cadence.and_then(|(c, what)| summary::min_avg_max(c, what))));
    m.insert("hrv".into(), json!(series(11).and_then(summary::hrv)));
    m.insert("temperature".into(), json!(series(9).and_then(|t| summary::min_avg_max(t, "temperature (°C, as the watch sent it)"))));
    for (k, field) in RAW_FIELDS.iter().enumerate() {
        if let Some((r, values)) = &by_type[k] {
            let interval = (*r > 0.0).then_some(*r);
            m.insert(field.to_string(), json!({"interval_s": interval, "start": start, "unit": SAMPLE_TYPES[k].1, "items": values}));
        }
    }
}

/// `HH:MM` or `HH:MM:SS` → seconds of the day.
fn clock_seconds(s: &str) -> Option<i64> {
    let mut it = s.trim().split(':').map(|x| x.parse::<i64>().ok());
    let (h, m) = (it.next()??, it.next()??);
    let sec = it.next().flatten().unwrap_or(0);
    Some(h * 3600 + m * 60 + sec)
}

/// `{"HH:MM": value}` keyed by clock times that wrap past midnight → `(seconds after `start_sod`,
/// value)`, in order. A key up to an hour before the start (a start at 23:39:07 has the key
/// 23:39) counts as the start. A value of 0 (a heart rate, an HRV, a breathing rate) is no
/// reading, as in continuous heart rate: left out here, and counted by [`zero_samples`].
fn clock_points(map: &Value, start_sod: i64) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = map
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let mut t = (clock_seconds(k)? - start_sod).rem_euclid(86_400);
            if t > 86_400 - 3_600 {
                t = 0;
            }
            Some((t as f64, v.as_f64().filter(|x| *x > 0.0)?))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// How many of a `{"HH:MM": value}` map's samples are 0: no reading, left out of the series and
/// its summary, and counted there as `missing`.
fn zero_samples(map: Option<&Value>) -> usize {
    map.and_then(Value::as_object).map_or(0, |m| m.values().filter(|v| v.as_f64() == Some(0.0)).count())
}

fn zoned(s: &str) -> Option<jiff::Zoned> {
    let ts: jiff::Timestamp = s.parse().ok()?;
    // The offset as written (`+02:00`), so times are shown on the clock they were recorded on.
    let off = s
        .get(s.len().saturating_sub(6)..)
        .filter(|o| o.starts_with(['+', '-']) && o.as_bytes().get(3) == Some(&b':'))
        .and_then(|o| {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let (h, m) = (o[1..3].parse::<i32>().ok()?, o[4..6].parse::<i32>().ok()?);
            Offset::from_seconds(sign * (h * 3600 + m * 60)).ok()
        })
        .unwrap_or(Offset::UTC);
    Some(ts.to_zoned(TimeZone::fixed(off)))
}

/// Hypnogram change points → one stage digit per 30 s epoch from sleep start to sleep end.
pub const EPOCH_S: u32 = 30;

fn hypnogram(map: &Value, start: &jiff::Zoned, end: &jiff::Zoned) -> String {
    let sod = i64::from(start.hour()) * 3600 + i64::from(start.minute()) * 60 + i64::from(start.second());
    let points = clock_points(map, sod);
    let total = ((end.timestamp().as_second() - start.timestamp().as_second()).max(0) as f64 / f64::from(EPOCH_S)).ceil() as usize;
    // More than two days between start and end is not one night: no hypnogram rather than one
    // the size of the gap.
    if total > 48 * 3600 / EPOCH_S as usize {
        return String::new();
    }
    let mut out = String::with_capacity(total);
    let mut i = 0;
    let mut stage = b'5';
    for e in 0..total {
        let t = (e as f64) * f64::from(EPOCH_S);
        while i < points.len() && points[i].0 <= t {
            stage = b'0' + (points[i].1 as u8).min(5);
            i += 1;
        }
        out.push(stage as char);
    }
    out
}

/// One night, labelled by the day it ends (Polar's `date`).
pub fn night(v: &Value) -> Value {
    let start = get(v, &["sleep_start_time"]).and_then(Value::as_str).and_then(zoned);
    let end = get(v, &["sleep_end_time"]).and_then(Value::as_str).and_then(zoned);
    let (hyp, hr_points) = match (&start, &end) {
        (Some(s), Some(e)) => {
            let sod = i64::from(s.hour()) * 3600 + i64::from(s.minute()) * 60 + i64::from(s.second());
            let hr = get(v, &["heart_rate_samples"]).map(|m| clock_points(m, sod)).unwrap_or_default();
            (get(v, &["hypnogram"]).map(|h| hypnogram(h, s, e)), hr)
        }
        _ => (None, vec![]),
    };
    let stage = |k: &str| num(v, &[k]);
    let asleep = ["light_sleep", "deep_sleep", "rem_sleep"].iter().map(|k| stage(k)).sum::<Option<f64>>();
    let start_s = start.as_ref().map(rfc3339);
    json!({
        "day": text(v, &["date"]),
        "sleep_start": start_s,
        "sleep_end": end.as_ref().map(rfc3339),
        "sleep_score": positive(v, &["sleep_score"]),
        "asleep_min": asleep.map(|s| r1(s / 60.0)),
        "light_min": secs_to_min(v, &["light_sleep"]),
        "deep_min": secs_to_min(v, &["deep_sleep"]),
        "rem_min": secs_to_min(v, &["rem_sleep"]),
        "unrecognized_min": secs_to_min(v, &["unrecognized_sleep_stage"]),
        "continuity": positive(v, &["continuity"]),
        "continuity_class": positive(v, &["continuity_class"]),
        "interruptions_min": secs_to_min(v, &["total_interruption_duration"]),
        "short_interruptions_min": secs_to_min(v, &["short_interruption_duration"]),
        "long_interruptions_min": secs_to_min(v, &["long_interruption_duration"]),
        "sleep_charge": positive(v, &["sleep_charge"]),
        "sleep_goal_min": secs_to_min(v, &["sleep_goal"]),
        // 0 means the user gave no rating.
        "sleep_rating": num(v, &["sleep_rating"]).filter(|r| *r > 0.0),
        "sleep_cycles": text(v, &["sleep_cycles"]),
        "group_duration_score": text(v, &["group_duration_score"]),
        "group_solidity_score": text(v, &["group_solidity_score"]),
        "group_regeneration_score": text(v, &["group_regeneration_score"]),
        "hypnogram": hyp,
        "architecture": hyp.as_deref().and_then(|h| summary::architecture(h, EPOCH_S)),
        "heart_rate": (!hr_points.is_empty()).then(|| even(&hr_points, start_s.as_deref().unwrap_or_default())),
        "heart_rate_summary": summary::night_series(&hr_points, zero_samples(get(v, &["heart_rate_samples"])), "sleep heart rate (bpm)", Some(15.0 * 60.0)),
    })
}

/// Keys of a night's `{"HH:MM": x}` without a start time (Nightly Recharge): the evening's hours
/// (noon or later) belong to the day before `date`.
fn night_points(map: &Value, date: Option<Date>) -> (Vec<(f64, f64)>, Option<String>) {
    let mut pts: Vec<(i64, f64)> = map
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let sod = clock_seconds(k)?;
            Some((if sod >= 12 * 3600 { sod - 86_400 } else { sod }, v.as_f64().filter(|x| *x > 0.0)?))
        })
        .collect();
    pts.sort_by_key(|p| p.0);
    let Some(first) = pts.first().map(|p| p.0) else { return (vec![], None) };
    let start = date.and_then(|d| d.to_datetime(jiff::civil::Time::midnight()).checked_add(jiff::SignedDuration::from_secs(first)).ok());
    (pts.iter().map(|(t, v)| ((t - first) as f64, *v)).collect(), start.map(|s| s.to_string()))
}

/// One Nightly Recharge.
pub fn recharge(v: &Value) -> Value {
    let date = get(v, &["date"]).and_then(Value::as_str).and_then(|d| d.parse::<Date>().ok());
    let series = |key: &str, unit: &str| {
        let (pts, start) = get(v, &[key]).map(|m| night_points(m, date)).unwrap_or_default();
        let raw = (!pts.is_empty()).then(|| even(&pts, start.as_deref().unwrap_or_default()));
        (raw, summary::night_series(&pts, zero_samples(get(v, &[key])), unit, None))
    };
    let (hrv_raw, hrv) = series("hrv_samples", "HRV, RMSSD (ms)");
    let (br_raw, br) = series("breathing_samples", "breathing rate (breaths/min)");
    json!({
        "day": text(v, &["date"]),
        "ans_charge": text(v, &["ans_charge"]),
        "ans_charge_status": positive(v, &["ans_charge_status"]),
        "nightly_recharge_status": positive(v, &["nightly_recharge_status"]),
        "hr_avg_bpm": positive(v, &["heart_rate_avg"]),
        "beat_to_beat_avg_ms": positive(v, &["beat_to_beat_avg"]),
        "hrv_avg_ms": positive(v, &["heart_rate_variability_avg"]),
        "breathing_rate_avg": positive(v, &["breathing_rate_avg"]),
        "hrv": hrv,
        "breathing": br,
        "hrv_samples": hrv_raw,
        "breathing_samples": br_raw,
    })
}

/// One day of activity, with zone durations and hourly steps from its samples.
pub fn activity(v: &Value) -> Value {
    let samples = get(v, &["samples"]).cloned().unwrap_or(Value::Null);
    let date = get(v, &["start_time"]).or_else(|| get(&samples, &["date"])).and_then(Value::as_str).map(|s| s.chars().take(10).collect::<String>());
    let day_end = get(v, &["end_time"]).and_then(Value::as_str).and_then(|s| s.parse::<DateTime>().ok());
    let mut row = json!({
        "day": date,
        "steps": num(v, &["steps"]),
        "calories_kcal": num(v, &["calories"]),
        "active_calories_kcal": num(v, &["active_calories", "active-calories"]),
        "active_min": minutes(v, &["active_duration", "active-duration"]),
        "inactive_min": minutes(v, &["inactive_duration", "inactive-duration"]),
        "daily_activity_pct": num(v, &["daily_activity", "daily-activity"]),
        "distance_from_steps_m": num(v, &["distance_from_steps", "distance-from-steps"]),
        "inactivity_alerts": num(v, &["inactivity_alert_count", "inactivity-alert-count"]),
    });
    let m = row.as_object_mut().expect("a row is an object");
    if let Some(z) = get(&samples, &["activity_zones", "activity-zones"]).and_then(|z| get(z, &["samples"])).and_then(Value::as_array) {
        m.insert("zones_min".into(), zone_minutes(z, day_end));
    }
    if let Some(st) = get(&samples, &["steps"]) {
        let (hourly, sum) = hourly_steps(st);
        m.insert("hourly_steps".into(), json!(hourly));
        m.insert("hourly_steps_sum".into(), json!(sum));
    }
    if let Some(stamps) = get(&samples, &["inactivity_stamps", "inactivity-stamps"]).or_else(|| get(v, &["inactivity_stamps"])).and_then(Value::as_array) {
        m.insert("inactivity_stamps".into(), stamps.iter().filter_map(|s| s.get("stamp").cloned()).collect());
    }
    row
}

/// Zone change points → minutes in each zone, named as Polar names them (lower case). A zone
/// lasts until the next change point; the last until the end of the day. A name this server does
/// not know (non-wear) is kept as it came.
fn zone_minutes(samples: &[Value], day_end: Option<DateTime>) -> Value {
    let mut pts: Vec<(DateTime, String)> = samples
        .iter()
        .filter_map(|s| {
            let t = s.get("timestamp")?.as_str()?.parse::<DateTime>().ok()?;
            let z = s.get("zone").map(|z| z.as_str().map(str::to_string).unwrap_or_else(|| z.to_string())).unwrap_or_else(|| "unknown".into());
            Some((t, z.to_lowercase()))
        })
        .collect();
    pts.sort_by_key(|p| p.0);
    let end = day_end.map(|e| e.checked_add(jiff::SignedDuration::from_secs(1)).unwrap_or(e));
    let mut out: Map<String, Value> = Map::new();
    for (i, (t, z)) in pts.iter().enumerate() {
        let until = pts.get(i + 1).map(|p| p.0).or(end).unwrap_or(*t);
        let secs = until.duration_since(*t).as_secs_f64().max(0.0);
        let e = out.entry(z.clone()).or_insert(json!(0.0));
        *e = json!(r1(e.as_f64().unwrap_or(0.0) + secs / 60.0));
    }
    Value::Object(out)
}

/// Step samples → steps per local hour. Polar leaves out a sample that repeats the one before
/// (reference §4.2): a gap longer than the interval means the previous value went on, so every
/// minute until the next sample (or the end of the day) counts it.
pub fn hourly_steps(steps: &Value) -> (Vec<f64>, f64) {
    let interval = num(steps, &["interval_ms", "interval-ms"]).unwrap_or(60_000.0).max(1_000.0) / 1000.0;
    let mut pts: Vec<(f64, f64)> = get(steps, &["samples"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| {
            let t = s.get("timestamp")?.as_str()?;
            let clock = t.split('T').nth(1)?;
            Some((clock_seconds(clock)? as f64, s.get("steps")?.as_f64()?))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut hours = vec![0.0; 24];
    for (i, (t, n)) in pts.iter().enumerate() {
        let until = pts.get(i + 1).map_or(86_400.0, |p| p.0);
        let mut at = *t;
        while at < until {
            hours[((at / 3600.0) as usize).min(23)] += n;
            at += interval;
        }
    }
    let sum = hours.iter().sum();
    (hours, sum)
}

/// Why a continuous heart-rate sample of 0 bpm is none ([`crate::providers::NO_READING`]).
pub const NO_CONTACT: &str = "no_contact";

/// Continuous heart rate → one record per sample. Polar gives a date and a clock time on the
/// watch, no zone: they are read in the query's zone (said in every answer). A sample of 0 bpm is
/// the watch without skin contact (runs of them a second apart, mid-day): marked as no reading,
/// so it is counted and said rather than read as a heart rate or left out in silence.
pub fn heart_rate(body: &Value, zone: &Zone) -> Vec<Value> {
    let days: Vec<&Value> = match body {
        Value::Array(a) => a.iter().collect(),
        v => match get(v, &["heart_rates", "heart-rates"]).and_then(Value::as_array) {
            Some(a) => a.iter().collect(),
            None => vec![v],
        },
    };
    let mut out = vec![];
    for d in days {
        let Some(date) = get(d, &["date"]).and_then(Value::as_str).and_then(|s| s.parse::<Date>().ok()) else { continue };
        for s in get(d, &["heart_rate_samples", "heart-rate-samples"]).and_then(Value::as_array).into_iter().flatten() {
            let (Some(clock), Some(bpm)) = (get(s, &["sample_time", "sample-time"]).and_then(Value::as_str), num(s, &["heart_rate", "heart-rate"])) else {
                continue;
            };
            let Some(secs) = clock_seconds(clock) else { continue };
            let Ok(local) = date.to_datetime(jiff::civil::Time::midnight()).checked_add(jiff::SignedDuration::from_secs(secs)) else { continue };
            if let Ok(z) = local.to_zoned(zone.tz.clone()) {
                out.push(match bpm > 0.0 {
                    true => json!({"timestamp": rfc3339(&z), "bpm": bpm}),
                    false => json!({"timestamp": rfc3339(&z), crate::providers::NO_READING: NO_CONTACT}),
                });
            }
        }
    }
    out
}

/// One day of cardio load. A day without data (`LOAD_STATUS_NOT_AVAILABLE`, `-1.0`) keeps its
/// row and status, with null values.
pub fn cardio(v: &Value) -> Value {
    let status = get(v, &["cardio_load_status", "cardio-load-status"]).and_then(Value::as_str).unwrap_or("UNRECOGNIZED");
    let none = status == "LOAD_STATUS_NOT_AVAILABLE";
    let val = |keys: &[&str]| if none { Value::Null } else { avail(num(v, keys)) };
    let level = get(v, &["cardio_load_level", "cardio-load-level"]).cloned().unwrap_or(Value::Null);
    let lv = |keys: &[&str]| if none { Value::Null } else { avail(num(&level, keys)) };
    json!({
        "day": text(v, &["date"]),
        "status": status,
        "cardio_load": val(&["cardio_load", "cardio-load"]),
        "strain": val(&["strain"]),
        "tolerance": val(&["tolerance"]),
        "load_ratio": val(&["cardio_load_ratio", "cardio-load-ratio"]),
        "level_thresholds": {
            "very_low": lv(&["very_low", "very-low"]),
            "low": lv(&["low"]),
            "medium": lv(&["medium"]),
            "high": lv(&["high"]),
            "very_high": lv(&["very_high", "very-high"]),
        },
    })
}

/// SleepWise times are UTC without an offset (fractional seconds allowed); `offset_min` is the
/// sleep's local offset. → RFC 3339 in that offset.
fn utc_local(s: Option<&str>, offset_min: i64) -> Option<jiff::Zoned> {
    let dt: DateTime = s?.trim().parse().ok()?;
    let ts = dt.to_zoned(TimeZone::UTC).ok()?.timestamp();
    let off = Offset::from_seconds(i32::try_from(offset_min.checked_mul(60)?).ok()?).ok()?;
    Some(ts.to_zoned(TimeZone::fixed(off)))
}

/// One SleepWise alertness period, labelled by the local day its sleep ended.
pub fn alertness(v: &Value) -> Value {
    let off = num(v, &["sleep_timezone_offset_minutes"]).unwrap_or(0.0) as i64;
    let t = |k: &str| utc_local(get(v, &[k]).and_then(Value::as_str), off);
    let (sleep_end, period_start) = (t("sleep_period_end_time"), t("period_start_time"));
    let hourly: Vec<Value> = get(v, &["hourly_data"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|h| {
            let ht = |k: &str| utc_local(get(h, &[k]).and_then(Value::as_str), off).map(|z| rfc3339(&z));
            json!({"start": ht("start_time"), "end": ht("end_time"), "alertness_level": text(h, &["alertness_level"]), "validity": text(h, &["validity"])})
        })
        .collect();
    json!({
        "day": sleep_end.as_ref().or(period_start.as_ref()).map(|z| z.date().to_string()),
        "period_start": period_start.as_ref().map(rfc3339),
        "period_end": t("period_end_time").as_ref().map(rfc3339),
        "sleep_start": t("sleep_period_start_time").as_ref().map(rfc3339),
        "sleep_end": sleep_end.as_ref().map(rfc3339),
        "grade": text(v, &["grade"]),
        "grade_classification": text(v, &["grade_classification"]),
        "grade_type": text(v, &["grade_type"]),
        "grade_validity_s": text(v, &["grade_validity_seconds"]),
        "validity": text(v, &["validity"]),
        "sleep_inertia": text(v, &["sleep_inertia"]),
        "sleep_type": text(v, &["sleep_type"]),
        "result_type": text(v, &["result_type"]),
        "hourly": hourly,
    })
}

/// Physical information, from the non-transactional route (snake_case), or a transaction's
/// entity (kebab-case) if one is ever passed here.
pub fn physical(v: &Value) -> Value {
    json!({
        "weight_kg": positive(v, &["weight"]),
        "height_cm": positive(v, &["height"]),
        "birthday": text(v, &["birthday", "birthdate"]),
        "gender": text(v, &["gender"]),
        "max_hr_bpm": positive(v, &["maximum_heart_rate", "maximum-heart-rate"]),
        "resting_hr_bpm": positive(v, &["resting_heart_rate", "resting-heart-rate"]),
        "aerobic_threshold_bpm": positive(v, &["aerobic_threshold", "aerobic-threshold"]),
        "anaerobic_threshold_bpm": positive(v, &["anaerobic_threshold", "anaerobic-threshold"]),
        "vo2max": positive(v, &["vo2_max", "vo2-max"]),
        "weight_source": text(v, &["weight_source", "weight-source"]),
        "training_background": text(v, &["training_background", "training-background"]),
        "typical_day": text(v, &["typical_day", "typical-day"]),
        "sleep_goal_min": minutes(v, &["sleep_goal", "sleep-goal"]),
        "created": text(v, &["created"]),
        "modified": text(v, &["modified"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_strings_keep_their_gaps() {
        assert_eq!(sample_values("100, NULL,,null,NaN,102"), vec![Some(100.0), None, None, None, None, Some(102.0)]);
        assert!(sample_values("").is_empty());
    }

    #[test]
    fn the_hypnogram_wraps_past_midnight_from_sleep_start() {
        let s = zoned("2026-01-31T23:39:07+02:00").unwrap();
        let e = zoned("2026-02-01T00:39:07+02:00").unwrap();
        let h = hypnogram(&json!({"23:39": 2, "00:21": 4, "00:30": 1}), &s, &e);
        assert_eq!(h.len(), 120);
        // 00:21 is 41 min 53 s after 23:39:07: epoch 84 is the first deep one.
        assert_eq!(h.find('4'), Some(84));
        assert!(h.starts_with("2222"));
    }

    #[test]
    fn repeated_step_samples_are_filled_in() {
        let st = json!({"interval_ms": 60000, "samples": [
            {"steps": 0, "timestamp": "2026-02-01T00:00"},
            {"steps": 10, "timestamp": "2026-02-01T07:01"},
            {"steps": 0, "timestamp": "2026-02-01T07:04"},
        ]});
        let (h, sum) = hourly_steps(&st);
        assert_eq!(h[7], 30.0, "07:01, 07:02 and 07:03");
        assert_eq!(sum, 30.0);
    }

    #[test]
    fn unknown_zone_names_are_kept() {
        let z = zone_minutes(
            &[json!({"zone": "SLEEP", "timestamp": "2026-02-01T00:00:00"}), json!({"zone": "NON_WEAR", "timestamp": "2026-02-01T06:00:00"})],
            Some("2026-02-01T23:59:59".parse().unwrap()),
        );
        assert_eq!(z["sleep"], 360.0);
        assert_eq!(z["non_wear"], 1080.0);
    }

    /// Polar's 0 bpm without skin contact is marked as no reading (the engine counts and says
    /// it), never a heart rate; a reading beside it stays.
    #[test]
    fn a_continuous_heart_rate_of_zero_is_no_reading() {
        let day = json!({"date": "2026-02-02", "heart_rate_samples": [
            {"heart_rate": 0, "sample_time": "12:31:20"}, {"heart_rate": 84, "sample_time": "12:31:21"}, {"heart_rate": 0, "sample_time": "12:31:22"}]});
        let rows = heart_rate(&day, &Zone::parse("+00:00").unwrap());
        let none: Vec<&Value> = rows.iter().filter(|r| r[crate::providers::NO_READING] == NO_CONTACT).collect();
        assert_eq!((rows.len(), none.len()), (3, 2), "{rows:?}");
        assert!(none.iter().all(|r| r.get("bpm").is_none() && r["timestamp"].is_string()), "placed by its time, no value: {none:?}");
        assert_eq!(rows[1]["bpm"], 84.0);
    }

    /// A load is read by its interpretation: NOT_AVAILABLE is no load whatever the number (the
    /// recorded `perceived-load: 0.0`), a level vouches for the number, even 0.
    #[test]
    fn training_loads_are_read_by_their_interpretation_not_a_sentinel() {
        let ex = |pro: Value| exercise(&json!({"id": "x", "start_time": "2026-02-01T17:55:10", "start_time_utc_offset": 0, "training_load_pro": pro}));
        let unrated = ex(json!({"cardio-load": 67.3257, "cardio-load-interpretation": "MEDIUM", "muscle-load": -1.0,
            "muscle-load-interpretation": "NOT_AVAILABLE", "perceived-load": 0.0, "perceived-load-interpretation": "NOT_AVAILABLE", "user-rpe": "UNKNOWN"}));
        assert_eq!(unrated["cardio_load"], 67.3257);
        assert!(unrated["muscle_load"].is_null() && unrated["perceived_load"].is_null(), "{unrated}");
        let rated = ex(json!({"cardio-load": 0.0, "cardio-load-interpretation": "VERY_LOW", "perceived-load": 210.0,
            "perceived-load-interpretation": "HIGH", "user-rpe": "RPE_HARD", "muscle-load": 12.0, "muscle-load-interpretation": "NOT_AVAILABLE"}));
        assert_eq!((rated["cardio_load"].as_f64(), rated["perceived_load"].as_f64()), (Some(0.0), Some(210.0)));
        assert!(rated["muscle_load"].is_null(), "NOT_AVAILABLE beside a number is still no load: {rated}");
        // Without an interpretation only the sentinel is left, and a perceived load needs a rating.
        let bare = ex(json!({"cardio_load": 50.0, "muscle_load": -1.0, "perceived_load": 0.0}));
        assert_eq!(bare["cardio_load"], 50.0);
        assert!(bare["muscle_load"].is_null() && bare["perceived_load"].is_null(), "{bare}");
    }

    /// Zeros where a value cannot be 0: heart rates, HRV and breathing, scores on scales that start
    /// at 1. Samples of 0 are left out of series and summaries, and counted as missing.
    #[test]
    fn zeros_that_cannot_be_values_are_none() {
        let night = night(&json!({"date": "2026-02-02", "sleep_start_time": "2026-02-01T23:00:00+00:00", "sleep_end_time": "2026-02-02T01:00:00+00:00",
            "sleep_score": 0, "sleep_charge": 0, "continuity": 0.0, "continuity_class": 0,
            "heart_rate_samples": {"23:02": 60, "23:07": 0, "23:12": 58, "23:17": 0}}));
        assert!(night["sleep_score"].is_null() && night["sleep_charge"].is_null() && night["continuity"].is_null() && night["continuity_class"].is_null());
        let s = &night["heart_rate_summary"];
        assert_eq!((s["min"].as_f64(), s["samples"].as_u64(), s["missing"].as_u64()), (Some(58.0), Some(2), Some(2)), "{s}");
        assert!(night["heart_rate"]["items"].as_array().unwrap().iter().all(|x| x.as_f64() != Some(0.0)), "{}", night["heart_rate"]);
        let rc = recharge(&json!({"date": "2026-02-02", "heart_rate_avg": 0, "beat_to_beat_avg": 0, "heart_rate_variability_avg": 0,
            "breathing_rate_avg": 0.0, "nightly_recharge_status": 0, "ans_charge": 0.0, "ans_charge_status": 0,
            "hrv_samples": {"00:41": 14, "00:46": 0}}));
        for k in ["hr_avg_bpm", "beat_to_beat_avg_ms", "hrv_avg_ms", "breathing_rate_avg", "nightly_recharge_status", "ans_charge_status"] {
            assert!(rc[k].is_null(), "{k}: {rc}");
        }
        assert_eq!(rc["ans_charge"], 0.0, "0 is the usual ANS charge, a value");
        assert_eq!((rc["hrv"]["avg"].as_f64(), rc["hrv"]["missing"].as_u64()), (Some(14.0), Some(1)));
        let pi = physical(&json!({"weight": 0, "maximum_heart_rate": 0, "resting_heart_rate": 0, "vo2_max": 0, "aerobic_threshold": 0}));
        assert!(["weight_kg", "max_hr_bpm", "resting_hr_bpm", "vo2max", "aerobic_threshold_bpm"].iter().all(|k| pi[*k].is_null()), "{pi}");
        let ex = exercise(&json!({"id": "x", "start_time": "2026-02-01T17:55:10", "start_time_utc_offset": 0, "heart_rate": {"average": 0, "maximum": 0},
            "running-index": 0, "samples": [{"recording_rate": 1, "sample_type": 0, "data": "120,0,0,122"}]}));
        assert!(ex["hr_avg_bpm"].is_null() && ex["hr_max_bpm"].is_null() && ex["running_index"].is_null(), "{ex}");
        assert_eq!(ex["sample_counts"]["heart_rate"], json!({"samples": 4, "missing": 2}), "a heart-rate sample of 0 is the sensor offline");
    }

    #[test]
    fn not_available_cardio_days_are_null_with_their_status() {
        let c = cardio(&json!({"date": "2026-02-02", "cardio_load_status": "LOAD_STATUS_NOT_AVAILABLE", "cardio_load": -1.0, "strain": 0.0,
            "cardio_load_level": {"very_high": 0.0}}));
        assert_eq!(c["strain"], Value::Null);
        assert_eq!(c["status"], "LOAD_STATUS_NOT_AVAILABLE");
        let c = cardio(&json!({"cardio_load_status": "PRODUCTIVE", "cardio_load_level": {"very-high": 160.0}}));
        assert_eq!(c["level_thresholds"]["very_high"], 160.0);
    }
}
