//! WHOOP's records as `vitals` answers them: WHOOP's own fields, the score's nested objects
//! flattened beside them, the durations also in minutes, and each record's local **day** read
//! with its own `timezone_offset` (reference §6.2): a night and its recovery belong to the
//! morning it ended, a cycle to the waking day after the sleep that began it, a workout to the
//! day it started. A record WHOOP has not scored keeps `score_state` and no score values: never
//! zeros.
use crate::providers::PageError;
use jiff::civil::Date;
use jiff::tz::Offset;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Map, Value};

/// WHOOP's `timezone_offset` (`-04:00`, `+09:00`, `Z`).
fn offset(v: &Value) -> Offset {
    let s = v.get("timezone_offset").and_then(Value::as_str).unwrap_or("Z");
    if s == "Z" {
        return Offset::UTC;
    }
    let (negative, rest) = match (s.strip_prefix('-'), s.strip_prefix('+')) {
        (Some(r), _) => (true, r),
        (_, Some(r)) => (false, r),
        _ => return Offset::UTC,
    };
    let mut parts = rest.split(':').map(|p| p.parse::<i32>().unwrap_or(0).clamp(0, 99));
    let secs = parts.next().unwrap_or(0) * 3600 + parts.next().unwrap_or(0) * 60;
    Offset::from_seconds(if negative { -secs } else { secs }).unwrap_or(Offset::UTC)
}

fn instant(v: &Value, k: &str) -> Option<Timestamp> {
    v.get(k).and_then(Value::as_str).and_then(|s| s.parse().ok())
}

/// `start` or `end` as the member's wall clock where it was recorded: `2026-09-02T23:34:04`.
fn local(v: &Value, k: &str) -> Option<jiff::civil::DateTime> {
    instant(v, k).map(|t| offset(v).to_datetime(t))
}

/// The local day of a record's `k` instant.
pub fn day_of(v: &Value, k: &str) -> Option<Date> {
    local(v, k).map(|d| d.date())
}

/// A cycle's day when its main sleep is not known: the day it started if it started before noon
/// (asleep after midnight), else the next (reference §6.2).
pub fn cycle_day_by_start(v: &Value) -> Option<Date> {
    let s = local(v, "start")?;
    Some(if s.hour() < 12 { s.date() } else { s.date().tomorrow().unwrap_or(s.date()) })
}

fn base(v: &Value, keys: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    // As WHOOP sent them, `null` included (the running cycle's `end`; a value WHOOP left out).
    for k in keys {
        if let Some(x) = v.get(*k) {
            m.insert((*k).into(), x.clone());
        }
    }
    for k in ["start", "end"] {
        if let Some(t) = local(v, k) {
            m.insert(format!("{k}_local"), json!(t.strftime("%Y-%m-%dT%H:%M:%S").to_string()));
        }
    }
    let state = v.get("score_state").and_then(Value::as_str).unwrap_or("UNKNOWN");
    m.insert("score_state".into(), json!(if ["SCORED", "PENDING_SCORE", "UNSCORABLE"].contains(&state) { state } else { "UNKNOWN" }));
    m
}

/// Rates a living member never has at 0: a 0 among them is no reading (a strap off the skin,
/// a workout logged without it), null like a value WHOOP left out, never a rate of 0.
const NEVER_ZERO: [&str; 7] =
    ["resting_heart_rate", "hrv_rmssd_milli", "average_heart_rate", "max_heart_rate", "respiratory_rate", "spo2_percentage", "skin_temp_celsius"];

/// The score's fields (nested objects flattened) beside the record's own, when it is scored.
fn flatten_score(m: &mut Map<String, Value>, v: &Value) {
    let Some(score) = v.get("score").and_then(Value::as_object).filter(|_| m["score_state"] == "SCORED") else {
        return;
    };
    for (k, x) in score {
        match x {
            Value::Object(inner) => m.extend(inner.iter().map(|(k, x)| (k.clone(), x.clone()))),
            _ => {
                m.insert(k.clone(), x.clone());
            }
        }
    }
    for k in NEVER_ZERO {
        if let Some(x) = m.get_mut(k).filter(|x| x.as_f64() == Some(0.0)) {
            *x = Value::Null;
        }
    }
}

fn minutes(m: &mut Map<String, Value>, name: &str, ms: Option<f64>) {
    if let Some(ms) = ms {
        m.insert(name.into(), json!((ms / 6_000.0).round() / 10.0));
    }
}

fn num(m: &Map<String, Value>, k: &str) -> Option<f64> {
    m.get(k).and_then(Value::as_f64)
}

/// A sleep or nap: its day is the morning it ended.
pub fn sleep(v: &Value) -> Value {
    let mut m = base(v, &["id", "cycle_id", "start", "end", "timezone_offset", "nap"]);
    if let Some(d) = day_of(v, "end") {
        m.insert("day".into(), json!(d.to_string()));
    }
    let nap = v.get("nap").and_then(Value::as_bool).unwrap_or(false);
    m.insert("kind".into(), json!(if nap { "nap" } else { "sleep" }));
    flatten_score(&mut m, v);
    let stages = ["total_light_sleep_time_milli", "total_slow_wave_sleep_time_milli", "total_rem_sleep_time_milli"];
    if stages.iter().all(|k| m.contains_key(*k)) {
        // WHOOP sends no total: light + slow-wave + REM (reference §4.3).
        let asleep: f64 = stages.iter().filter_map(|k| num(&m, k)).sum();
        m.insert("total_sleep_time_milli".into(), json!(asleep));
    }
    let need: Option<f64> =
        ["baseline_milli", "need_from_sleep_debt_milli", "need_from_recent_strain_milli", "need_from_recent_nap_milli"].iter().map(|k| num(&m, k)).sum();
    if let Some(n) = need {
        m.insert("sleep_need_milli".into(), json!(n));
    }
    for (name, k) in [
        ("asleep_min", "total_sleep_time_milli"),
        ("in_bed_min", "total_in_bed_time_milli"),
        ("awake_min", "total_awake_time_milli"),
        ("light_min", "total_light_sleep_time_milli"),
        ("deep_min", "total_slow_wave_sleep_time_milli"),
        ("rem_min", "total_rem_sleep_time_milli"),
        ("no_data_min", "total_no_data_time_milli"),
        ("need_min", "sleep_need_milli"),
    ] {
        let ms = num(&m, k);
        minutes(&mut m, name, ms);
    }
    Value::Object(m)
}

/// A recovery: WHOOP gives it no times, so its day is its sleep's (`sleep_day`, None: unknown).
pub fn recovery(v: &Value, sleep_day: Option<Date>) -> Value {
    let mut m = base(v, &["cycle_id", "sleep_id", "created_at", "updated_at"]);
    if let Some(d) = sleep_day {
        m.insert("day".into(), json!(d.to_string()));
    }
    flatten_score(&mut m, v);
    Value::Object(m)
}

/// A cycle (a physiological day from one sleep to the next): its day is its main sleep's morning
/// (`sleep_day`), else guessed from its start. The running cycle's values are still growing.
pub fn cycle(v: &Value, sleep_day: Option<Date>) -> Value {
    let mut m = base(v, &["start", "end", "timezone_offset"]);
    // WHOOP's int64 id as text: the key records are told apart by.
    if let Some(id) = v.get("id").filter(|x| !x.is_null()) {
        m.insert("id".into(), json!(id.to_string().trim_matches('"')));
    }
    if let Some(d) = sleep_day.or_else(|| cycle_day_by_start(v)) {
        m.insert("day".into(), json!(d.to_string()));
    }
    m.insert("in_progress".into(), json!(v.get("end").is_none_or(Value::is_null)));
    flatten_score(&mut m, v);
    Value::Object(m)
}

/// A workout (or a recovery activity such as meditation): its day is the day it started.
pub fn workout(v: &Value) -> Value {
    let mut m = base(v, &["id", "start", "end", "timezone_offset", "sport_name"]);
    if let Some(d) = day_of(v, "start") {
        m.insert("day".into(), json!(d.to_string()));
    }
    if let (Some(s), Some(e)) = (instant(v, "start"), instant(v, "end")) {
        m.insert("duration_min".into(), json!(((e.as_millisecond() - s.as_millisecond()) as f64 / 6_000.0).round() / 10.0));
    }
    flatten_score(&mut m, v);
    if let Some(d) = num(&m, "distance_meter") {
        m.insert("distance_km".into(), json!((d / 10.0).round() / 100.0));
    }
    Value::Object(m)
}

/// The profile: the member id, and the name and email only when asked (`personal`).
pub fn profile(v: &Value, personal: bool) -> Value {
    let keys: &[&str] = if personal { &["user_id", "email", "first_name", "last_name"] } else { &["user_id"] };
    Value::Object(keys.iter().filter_map(|k| v.get(*k).map(|x| ((*k).to_string(), x.clone()))).collect())
}

/// One page's `records` and `next_token` (absent, null or empty: the last page).
pub fn envelope(body: &str) -> Result<(Vec<Value>, Option<String>), PageError> {
    let mut v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("WHOOP sent a body that is not complete JSON ({e})")))?;
    let records = match v.get_mut("records").map(Value::take) {
        Some(Value::Array(a)) => a,
        _ => return Err(PageError::Transient("WHOOP's answer has no `records` array".into())),
    };
    let next = v.get("next_token").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
    Ok((records, next))
}

/// The instant `d` starts at UTC, as WHOOP's filters take it.
pub fn utc_midnight(d: Date) -> String {
    let t = d.to_zoned(jiff::tz::TimeZone::UTC).map(|z| z.timestamp()).unwrap_or(Timestamp::UNIX_EPOCH);
    super::sample::instant(t)
}

/// The day after `d`'s UTC midnight (an exclusive end).
pub fn utc_midnight_after(d: Date) -> String {
    utc_midnight(d.checked_add(1.day()).unwrap_or(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_night_belongs_to_the_morning_it_ended_in_its_own_offset() {
        // Asleep 23:34 on the 2nd at -04:00 (03:34 UTC on the 3rd), awake 06:51 on the 3rd.
        let v = json!({"id": "a", "cycle_id": 1, "start": "2026-09-03T03:34:04.877Z", "end": "2026-09-03T10:51:19.660Z",
            "timezone_offset": "-04:00", "nap": false, "score_state": "SCORED", "score": {"stage_summary": {
            "total_in_bed_time_milli": 26_234_783, "total_awake_time_milli": 1_502_331, "total_no_data_time_milli": 0,
            "total_light_sleep_time_milli": 12_644_190, "total_slow_wave_sleep_time_milli": 6_201_144, "total_rem_sleep_time_milli": 5_887_118,
            "sleep_cycle_count": 5, "disturbance_count": 7}, "sleep_needed": {"baseline_milli": 27_395_716, "need_from_sleep_debt_milli": 1_944_310,
            "need_from_recent_strain_milli": 602_118, "need_from_recent_nap_milli": -2_103_940}, "sleep_performance_percentage": 86.0}});
        let s = sleep(&v);
        assert_eq!(s["day"], "2026-09-03");
        assert_eq!(s["start_local"], "2026-09-02T23:34:04");
        assert_eq!(s["total_sleep_time_milli"], 24_732_452.0);
        assert_eq!(s["asleep_min"], 412.2);
        assert_eq!(s["sleep_need_milli"], 27_838_204.0);
        assert_eq!(s["kind"], "sleep");
    }

    #[test]
    fn an_unscored_record_keeps_its_state_and_no_values() {
        let v = json!({"id": 93841, "start": "2026-08-31T03:52:17.310Z", "end": "2026-09-01T04:36:29.118Z", "timezone_offset": "-04:00",
            "score_state": "UNSCORABLE"});
        let c = cycle(&v, None);
        assert_eq!(c["score_state"], "UNSCORABLE");
        assert!(c.get("strain").is_none(), "{c}");
        assert_eq!(c["id"], "93841");
        // Asleep 23:52 on the 30th: the waking day after is the 31st.
        assert_eq!(c["day"], "2026-08-31");
        assert_eq!(c["in_progress"], false);
        let odd = sleep(&json!({"score_state": "SOMETHING_NEW", "score": {"respiratory_rate": 0}}));
        assert_eq!(odd["score_state"], "UNKNOWN");
        assert!(odd.get("respiratory_rate").is_none());
    }

    /// A strap off the skin, a workout logged without it: WHOOP scores the record, and a rate of
    /// 0 is no reading, null; a strain or a score of 0 is a value and stays.
    #[test]
    fn a_rate_of_zero_is_no_reading_and_a_score_of_zero_is_a_value() {
        let r = recovery(
            &json!({"cycle_id": 1, "sleep_id": "s", "score_state": "SCORED", "score": {"user_calibrating": false, "recovery_score": 0.0,
                "resting_heart_rate": 0.0, "hrv_rmssd_milli": 0, "spo2_percentage": 95.5, "skin_temp_celsius": 0.0}}),
            None,
        );
        assert!(r["resting_heart_rate"].is_null() && r["hrv_rmssd_milli"].is_null() && r["skin_temp_celsius"].is_null(), "{r}");
        assert_eq!((r["recovery_score"].as_f64(), r["spo2_percentage"].as_f64()), (Some(0.0), Some(95.5)));
        let w = workout(&json!({"id": "w", "start": "2026-09-03T10:00:00Z", "end": "2026-09-03T10:30:00Z", "timezone_offset": "Z",
            "sport_name": "yoga", "score_state": "SCORED", "score": {"strain": 0.0, "average_heart_rate": 0, "max_heart_rate": 0,
            "kilojoule": 0.0, "percent_recorded": 0.0, "zone_durations": {"zone_zero_milli": 0}}}));
        assert!(w["average_heart_rate"].is_null() && w["max_heart_rate"].is_null(), "{w}");
        assert_eq!((w["strain"].as_f64(), w["percent_recorded"].as_f64(), w["zone_zero_milli"].as_i64()), (Some(0.0), Some(0.0), Some(0)));
    }

    #[test]
    fn two_nights_at_minus_four_fall_on_two_days() {
        // The peer's collision (reference §6.2): asleep 00:01 one night and 23:34 the next.
        let a = json!({"start": "2026-09-02T04:01:01.402Z", "timezone_offset": "-04:00"});
        let b = json!({"start": "2026-09-03T03:34:04.877Z", "timezone_offset": "-04:00"});
        assert_eq!(cycle_day_by_start(&a), Some(jiff::civil::date(2026, 9, 2)));
        assert_eq!(cycle_day_by_start(&b), Some(jiff::civil::date(2026, 9, 3)));
        assert_eq!(day_of(&json!({"end": "2026-09-03T00:30:00Z", "timezone_offset": "+09:00"}), "end"), Some(jiff::civil::date(2026, 9, 3)));
        assert_eq!(day_of(&json!({"end": "2026-09-03T00:30:00Z", "timezone_offset": "Z"}), "end"), Some(jiff::civil::date(2026, 9, 3)));
        // An offset that is not one is read as UTC, never a panic.
        for odd in ["é", "-", "+99:99", "", "--04:00"] {
            assert!(day_of(&json!({"end": "2026-09-03T00:30:00Z", "timezone_offset": odd}), "end").is_some(), "{odd}");
        }
    }
}
