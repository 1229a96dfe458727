//! Garmin's payloads → rows (reference `garmin/README.md` §5, whose shapes the Personal API
//! shares). Units are converted where Garmin's differ from a row's (grams → kg, seconds →
//! minutes, the lactate-threshold speed's m/s ÷ 10) and the field name says the unit. Garmin's
//! "no reading" (−1, −2, null) is null, never 0; a day Garmin sends as an empty placeholder is no row.
use crate::providers::series::even;
use crate::time::{rfc3339, Zone};
use jiff::tz::{Offset, TimeZone};
use serde_json::{json, Map, Value};

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

/// Garmin's levels use −1 and −2 for "no reading" (and activity): null.
fn level(v: &Value, k: &str) -> Value {
    num(v, k).filter(|x| *x >= 0.0).map_or(Value::Null, |x| json!(x))
}

fn minutes(v: &Value, k: &str) -> Value {
    num(v, k).map_or(Value::Null, |s| json!((s / 6.0).round() / 10.0))
}

fn text(v: &Value, k: &str) -> Value {
    v.get(k).cloned().unwrap_or(Value::Null)
}

/// The records of a reply that lists them: a bare array, or the first array inside an envelope
/// (the envelopes' names are not confirmed for the Personal API).
pub fn list(body: &Value) -> Vec<Value> {
    match body {
        Value::Array(a) => a.clone(),
        Value::Object(m) => m.values().find_map(|x| x.as_array().cloned()).unwrap_or_default(),
        _ => vec![],
    }
}

/// A placeholder: every field but the date is null or absent.
fn placeholder(row: &Value, date_key: &str) -> bool {
    row.as_object().is_none_or(|m| m.iter().all(|(k, v)| k == date_key || v.is_null()))
}

/// Keep a row unless it is a placeholder.
fn real(row: Value) -> Option<Value> {
    (!placeholder(&row, "day")).then_some(row)
}

pub fn daily_summary(v: &Value) -> Option<Value> {
    real(json!({
        "day": text(v, "calendarDate"),
        "steps": num(v, "totalSteps"),
        "step_goal": num(v, "dailyStepGoal"),
        "distance_m": num(v, "totalDistanceMeters"),
        "calories_kcal": num(v, "totalKilocalories"),
        "active_calories_kcal": num(v, "activeKilocalories"),
        "bmr_calories_kcal": num(v, "bmrKilocalories"),
        "resting_hr_bpm": num(v, "restingHeartRate"),
        "min_hr_bpm": num(v, "minHeartRate"),
        "max_hr_bpm": num(v, "maxHeartRate"),
        "resting_hr_7d_avg_bpm": num(v, "lastSevenDaysAvgRestingHeartRate"),
        "stress_avg": level(v, "averageStressLevel"),
        "stress_max": level(v, "maxStressLevel"),
        "body_battery_high": level(v, "bodyBatteryHighestValue"),
        "body_battery_low": level(v, "bodyBatteryLowestValue"),
        "moderate_intensity_min": num(v, "moderateIntensityMinutes"),
        "vigorous_intensity_min": num(v, "vigorousIntensityMinutes"),
        "floors_ascended": num(v, "floorsAscended"),
        "respiration_avg": num(v, "avgWakingRespirationValue"),
        "spo2_avg": num(v, "averageSpo2"),
        "spo2_lowest": num(v, "lowestSpo2"),
    }))
}

pub fn steps(v: &Value) -> Option<Value> {
    real(json!({"day": text(v, "calendarDate"), "steps": num(v, "totalSteps"), "step_goal": num(v, "stepGoal"), "distance_m": num(v, "totalDistance")}))
}

pub fn stress(v: &Value) -> Option<Value> {
    let x = v.get("values").cloned().unwrap_or(Value::Null);
    real(json!({
        "day": text(v, "calendarDate"),
        "stress_level": level(&x, "overallStressLevel"),
        "rest_min": minutes(&x, "restStressDuration"),
        "low_min": minutes(&x, "lowStressDuration"),
        "medium_min": minutes(&x, "mediumStressDuration"),
        "high_min": minutes(&x, "highStressDuration"),
    }))
}

pub fn hydration(v: &Value) -> Option<Value> {
    let x = v.get("values").or_else(|| v.get("value")).unwrap_or(v);
    real(json!({
        "day": text(v, "calendarDate"),
        "intake_ml": num(x, "intakeInML").or_else(|| num(x, "valueInML")),
        "goal_ml": num(x, "goalInML"),
    }))
}

fn at_ms(ms: f64, tz: &TimeZone) -> Option<String> {
    let t = jiff::Timestamp::from_millisecond(ms as i64).ok()?;
    Some(rfc3339(&t.to_zoned(tz.clone())))
}

/// A day's heart rate → one record per sample with a value, stamped in the query's zone (the
/// epochs are exact instants).
pub fn heart_rate(body: &Value, zone: &Zone) -> Vec<Value> {
    body.get("heartRateValues")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let (t, bpm) = (p.get(0)?.as_f64()?, p.get(1)?.as_f64()?);
            Some(json!({"timestamp": at_ms(t, &zone.tz)?, "bpm": bpm}))
        })
        .collect()
}

/// A day's Body Battery: charged, drained, highest and lowest of its levels, the levels as a
/// series, and the events that moved it.
pub fn body_battery(v: &Value) -> Option<Value> {
    let pts: Vec<(f64, f64)> = v
        .get("bodyBatteryValuesArray")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p.get(0)?.as_f64()? / 1000.0, p.get(1)?.as_f64()?)))
        .collect();
    let (hi, lo) = (pts.iter().map(|p| p.1).reduce(f64::max), pts.iter().map(|p| p.1).reduce(f64::min));
    let start = pts.first().and_then(|p| at_ms(p.0 * 1000.0, &TimeZone::UTC)).unwrap_or_default();
    let first = pts.first().map_or(0.0, |p| p.0);
    let rel: Vec<(f64, f64)> = pts.iter().map(|(t, l)| (t - first, *l)).collect();
    let events: Vec<Value> = v
        .get("bodyBatteryActivityEvent")
        .or_else(|| v.get("events"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            json!({
                "type": text(e, "eventType"),
                "start_gmt": text(e, "eventStartTimeGmt"),
                "duration_min": num(e, "durationInMilliseconds").map(|ms| (ms / 6000.0).round() / 10.0),
                "impact": text(e, "bodyBatteryImpact"),
                "activity": text(e, "activityName"),
                "activity_type": text(e, "activityType"),
                "activity_id": e.get("activityId").map(|x| json!(x.to_string().trim_matches('"'))),
            })
        })
        .collect();
    real(json!({
        "day": text(v, "date"),
        "charged": num(v, "charged"),
        "drained": num(v, "drained"),
        "highest": hi,
        "lowest": lo,
        "levels": (!rel.is_empty()).then(|| even(&rel, &start)),
        "events": if events.is_empty() { Value::Null } else { json!(events) },
    }))
}

pub fn spo2(v: &Value) -> Option<Value> {
    let hourly: Vec<Value> = v
        .get("spO2HourlyAverages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| Some(json!({"hour": at_ms(p.get(0)?.as_f64()?, &TimeZone::UTC)?, "spo2": p.get(1)?})))
        .collect();
    real(json!({
        "day": text(v, "calendarDate"),
        "spo2_avg": num(v, "averageSpO2"),
        "spo2_lowest": num(v, "lowestSpO2"),
        "spo2_latest": num(v, "latestSpO2"),
        "spo2_7d_avg": num(v, "lastSevenDaysAvgSpO2"),
        "spo2_sleep_avg": num(v, "avgSleepSpO2"),
        "hourly": if hourly.is_empty() { Value::Null } else { json!(hourly) },
    }))
}

/// An epoch in ms and its `*Local` twin (the same instant shifted by the local offset) → RFC 3339
/// in that offset.
fn local_instant(gmt_ms: Option<f64>, local_ms: Option<f64>) -> Option<String> {
    let gmt = gmt_ms?;
    let offset_s = local_ms.map_or(0, |l| ((l - gmt) / 1000.0).round() as i32);
    let off = Offset::from_seconds(offset_s).unwrap_or(Offset::UTC);
    let t = jiff::Timestamp::from_millisecond(gmt as i64).ok()?;
    Some(rfc3339(&t.to_zoned(TimeZone::fixed(off))))
}

/// The longest sleep a timeline is drawn for, in minutes.
const MAX_NIGHT_MIN: usize = 48 * 60;

/// Garmin's sleep levels (0 deep, 1 light, 2 REM, 3 awake) → one digit a minute from sleep start;
/// a minute no level covers is 9.
fn stages(levels: &[Value], start_ms: f64, end_ms: f64) -> Option<String> {
    let minutes = ((end_ms - start_ms) / 60_000.0).ceil().max(0.0) as usize;
    // A start and end more than two days apart are not one night: no timeline rather than a
    // string the size of the gap.
    if levels.is_empty() || minutes == 0 || minutes > MAX_NIGHT_MIN {
        return None;
    }
    let mut out = vec![b'9'; minutes];
    let ms = |s: &Value| s.as_str().and_then(|s| format!("{}Z", s.trim_end_matches('Z')).parse::<jiff::Timestamp>().ok()).map(|t| t.as_millisecond() as f64);
    for l in levels {
        let (Some(a), Some(b), Some(k)) = (l.get("startGMT").and_then(ms), l.get("endGMT").and_then(ms), l.get("activityLevel").and_then(Value::as_f64)) else {
            continue;
        };
        let digit = match k.round() as i64 {
            0 => b'0',
            1 => b'1',
            2 => b'2',
            3 => b'3',
            _ => b'9',
        };
        let (i, j) = (((a - start_ms) / 60_000.0).floor().max(0.0) as usize, (((b - start_ms) / 60_000.0).ceil().max(0.0) as usize).min(minutes));
        for x in out.iter_mut().take(j).skip(i) {
            *x = digit;
        }
    }
    String::from_utf8(out).ok()
}

/// One night from the range route (or the one-night route's `dailySleepDTO`).
pub fn sleep(x: &Value) -> Option<Value> {
    let d = x.get("dailySleepDTO").unwrap_or(x);
    if d.get("sleepTimeSeconds").is_none_or(Value::is_null) {
        return None;
    }
    let (s_gmt, e_gmt) = (num(d, "sleepStartTimestampGMT"), num(d, "sleepEndTimestampGMT"));
    let levels = x.get("sleepLevels").or_else(|| d.get("sleepLevels")).and_then(Value::as_array).cloned().unwrap_or_default();
    let score = d.pointer("/sleepScores/overall").cloned().unwrap_or(Value::Null);
    Some(json!({
        "day": text(d, "calendarDate"),
        "sleep_start": local_instant(s_gmt, num(d, "sleepStartTimestampLocal")),
        "sleep_end": local_instant(e_gmt, num(d, "sleepEndTimestampLocal")),
        "asleep_min": minutes(d, "sleepTimeSeconds"),
        "deep_min": minutes(d, "deepSleepSeconds"),
        "light_min": minutes(d, "lightSleepSeconds"),
        "rem_min": minutes(d, "remSleepSeconds"),
        "awake_min": minutes(d, "awakeSleepSeconds"),
        "awake_count": num(d, "awakeCount"),
        "nap_min": minutes(d, "napTimeSeconds"),
        "score": num(&score, "value"),
        "score_quality": text(&score, "qualifierKey"),
        "spo2_avg": num(d, "averageSpO2Value"),
        "spo2_lowest": num(d, "lowestSpO2Value"),
        "respiration_avg": num(d, "averageRespirationValue"),
        "hr_avg_bpm": num(d, "avgHeartRate"),
        "sleep_stress_avg": level(d, "avgSleepStress"),
        "stages": s_gmt.zip(e_gmt).and_then(|(a, b)| stages(&levels, a, b)),
    }))
}

/// One night's HRV, with its 5-minute readings as a series.
pub fn hrv(v: &Value) -> Option<Value> {
    let s = v.get("hrvSummary")?;
    let ms = |r: &Value| r.get("readingTimeGMT").and_then(Value::as_str).and_then(|s| format!("{}Z", s.trim_end_matches('Z')).parse::<jiff::Timestamp>().ok());
    let pts: Vec<(jiff::Timestamp, f64)> =
        v.get("hrvReadings").and_then(Value::as_array).into_iter().flatten().filter_map(|r| Some((ms(r)?, num(r, "hrvValue")?))).collect();
    let readings = pts.first().map(|(t0, _)| {
        let rel: Vec<(f64, f64)> = pts.iter().map(|(t, x)| ((t.as_second() - t0.as_second()) as f64, *x)).collect();
        even(&rel, &rfc3339(&t0.to_zoned(TimeZone::UTC)))
    });
    real(json!({
        "day": text(s, "calendarDate"),
        "last_night_avg_ms": num(s, "lastNightAvg"),
        "last_night_5min_high_ms": num(s, "lastNight5MinHigh"),
        "weekly_avg_ms": num(s, "weeklyAvg"),
        "baseline": text(s, "baseline"),
        "status": text(s, "status"),
        "feedback": text(s, "feedbackPhrase"),
        "readings": readings,
    }))
}

/// Weigh-ins of a range reply. Garmin sends masses in grams: kg here.
pub fn weights(body: &Value) -> Vec<Value> {
    let list = body.get("dateWeightList").and_then(Value::as_array).cloned().unwrap_or_else(|| {
        // The newer shape nests them per day.
        body.get("dailyWeightSummaries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|d| d.get("allWeightMetrics").and_then(Value::as_array).cloned().unwrap_or_default())
            .collect()
    });
    let kg = |v: &Value, k: &str| num(v, k).map(|g| (g / 10.0).round() / 100.0);
    list.iter()
        .map(|w| {
            json!({
                "id": w.get("samplePk").map(|x| x.to_string().trim_matches('"').to_string()),
                "day": text(w, "calendarDate"),
                "time": weigh_in_time(num(w, "timestampGMT"), num(w, "date")),
                "weight_kg": kg(w, "weight"),
                "bmi": num(w, "bmi"),
                "body_fat_pct": num(w, "bodyFat"),
                "body_water_pct": num(w, "bodyWater"),
                "bone_mass_kg": kg(w, "boneMass"),
                "muscle_mass_kg": kg(w, "muscleMass"),
                "source": text(w, "sourceType"),
            })
        })
        .collect()
}

/// A weigh-in's time. Garmin's `date` is the local wall clock written as epoch ms and
/// `timestampGMT` the instant (recorded: `date` 1749975276000 beside `timestampGMT` 1749996876000 for a
/// person at UTC−6): the instant in the offset between them, or without either, the wall clock
/// alone with no offset (never read as UTC, which would move an evening entry to the next day).
fn weigh_in_time(gmt_ms: Option<f64>, local_ms: Option<f64>) -> Option<String> {
    match (gmt_ms, local_ms) {
        (Some(_), _) => local_instant(gmt_ms, local_ms),
        (None, Some(l)) => {
            let wall = jiff::Timestamp::from_millisecond(l as i64).ok()?.to_zoned(TimeZone::UTC).datetime();
            Some(wall.strftime("%Y-%m-%dT%H:%M:%S").to_string())
        }
        (None, None) => None,
    }
}

/// `YYYY-MM-DD HH:MM:SS` local and GMT → RFC 3339 with the offset between them.
fn start_of(local: Option<&str>, gmt: Option<&str>) -> Option<String> {
    let parse = |s: &str| s.replace(' ', "T").parse::<jiff::civil::DateTime>().ok();
    let (l, g) = (parse(local?)?, parse(gmt?)?);
    let off = Offset::from_seconds(l.duration_since(g).as_secs() as i32).ok()?;
    Some(rfc3339(&g.to_zoned(TimeZone::UTC).ok()?.timestamp().to_zoned(TimeZone::fixed(off))))
}

/// One activity of the search.
pub fn activity(v: &Value) -> Value {
    let zones: Vec<Value> = (1..=5).map(|z| text(v, &format!("hrTimeInZone_{z}"))).collect();
    json!({
        "id": v.get("activityId").map(|x| x.to_string().trim_matches('"').to_string()),
        "name": text(v, "activityName"),
        "type": v.pointer("/activityType/typeKey").cloned().unwrap_or(Value::Null),
        "start": start_of(v.get("startTimeLocal").and_then(Value::as_str), v.get("startTimeGMT").and_then(Value::as_str)),
        "start_local": text(v, "startTimeLocal"),
        "distance_m": num(v, "distance"),
        "duration_s": num(v, "duration"),
        "moving_s": num(v, "movingDuration"),
        "elapsed_s": num(v, "elapsedDuration"),
        "avg_speed_m_s": num(v, "averageSpeed"),
        "max_speed_m_s": num(v, "maxSpeed"),
        "avg_hr_bpm": num(v, "averageHR"),
        "max_hr_bpm": num(v, "maxHR"),
        "calories_kcal": num(v, "calories"),
        "elevation_gain_m": num(v, "elevationGain"),
        "elevation_loss_m": num(v, "elevationLoss"),
        "avg_run_cadence_spm": num(v, "averageRunningCadenceInStepsPerMinute"),
        "avg_power_w": num(v, "avgPower"),
        "norm_power_w": num(v, "normPower"),
        "aerobic_effect": num(v, "aerobicTrainingEffect"),
        "anaerobic_effect": num(v, "anaerobicTrainingEffect"),
        "training_load": num(v, "activityTrainingLoad"),
        "hr_zone_s": if zones.iter().all(Value::is_null) { Value::Null } else { json!(zones) },
        "laps": num(v, "lapCount"),
    })
}

/// One activity from the activity service (`summaryDTO` holds the numbers).
pub fn activity_detail(v: &Value) -> Value {
    let sm = v.get("summaryDTO").cloned().unwrap_or(Value::Null);
    let time = |k: &str| sm.get(k).and_then(Value::as_str).map(|s| s.trim_end_matches(".0").replace('T', " "));
    json!({
        "id": v.get("activityId").map(|x| x.to_string().trim_matches('"').to_string()),
        "name": text(v, "activityName"),
        "type": v.pointer("/activityTypeDTO/typeKey").cloned().unwrap_or(Value::Null),
        "start": start_of(time("startTimeLocal").as_deref(), time("startTimeGMT").as_deref()),
        "start_local": time("startTimeLocal"),
        "distance_m": num(&sm, "distance"),
        "duration_s": num(&sm, "duration"),
        "moving_s": num(&sm, "movingDuration"),
        "elapsed_s": num(&sm, "elapsedDuration"),
        "avg_speed_m_s": num(&sm, "averageSpeed"),
        "avg_hr_bpm": num(&sm, "averageHR"),
        "max_hr_bpm": num(&sm, "maxHR"),
        "min_hr_bpm": num(&sm, "minHR"),
        "calories_kcal": num(&sm, "calories"),
        "elevation_gain_m": num(&sm, "elevationGain"),
        "elevation_loss_m": num(&sm, "elevationLoss"),
        "aerobic_effect": num(&sm, "trainingEffect"),
        "anaerobic_effect": num(&sm, "anaerobicTrainingEffect"),
        "training_load": num(&sm, "activityTrainingLoad"),
        "laps": v.pointer("/metadataDTO/lapCount").cloned().unwrap_or(Value::Null),
        "split_summaries": text(v, "splitSummaries"),
    })
}

pub fn fitness_age(v: &Value) -> Option<Value> {
    real(json!({
        "day": v.get("calendarDate").or_else(|| v.get("asOfDateGmt")).cloned().unwrap_or(Value::Null),
        "fitness_age": num(v, "fitnessAge"),
        "chronological_age": num(v, "chronologicalAge"),
        "achievable_fitness_age": num(v, "achievableFitnessAge"),
        "components": text(v, "components"),
    }))
}

/// A day's food log: what was eaten against the goal, and the meals.
pub fn food(v: &Value) -> Option<Value> {
    let eaten = v.get("dailyNutritionContent").cloned().unwrap_or(Value::Null);
    let meals: Vec<Value> = v
        .get("mealDetails")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| json!({"name": m.pointer("/meal/mealName").cloned().unwrap_or(Value::Null), "calories_kcal": m.pointer("/mealNutritionContent/calories").cloned().unwrap_or(Value::Null)}))
        .collect();
    real(json!({
        "day": text(v, "calendarDate"),
        "calories_kcal": num(&eaten, "calories"),
        "carbs_g": num(&eaten, "carbs"),
        "protein_g": num(&eaten, "protein"),
        "fat_g": num(&eaten, "fat"),
        "goal_kcal": v.pointer("/dailyNutritionGoals/calories").cloned().unwrap_or(Value::Null),
        "meals": if meals.is_empty() { Value::Null } else { json!(meals) },
    }))
}

/// One menstrual cycle, by the day it started.
pub fn cycle(v: &Value) -> Option<Value> {
    real(json!({
        "day": text(v, "startDate"),
        "cycle_length_days": num(v, "cycleLength"),
        "period_length_days": num(v, "periodLength"),
        "predicted": text(v, "predictedCycle"),
    }))
}

pub fn hr_zones(v: &Value) -> Value {
    let floors: Vec<Value> = (1..=5).map(|z| text(v, &format!("zone{z}Floor"))).collect();
    json!({
        "sport": text(v, "sport"),
        "method": text(v, "trainingMethod"),
        "resting_hr_bpm": num(v, "restingHeartRateUsed"),
        "max_hr_bpm": num(v, "maxHeartRateUsed"),
        "lactate_threshold_hr_bpm": num(v, "lactateThresholdHeartRateUsed"),
        "zone_floors_bpm": floors,
    })
}

/// A pace as runners write it, `m:ss` per km: 280 s a km is `4:40` (as decimal minutes, 4.67 would
/// be read as 4:67 or 4:07).
fn pace(seconds_per_km: f64) -> String {
    let s = seconds_per_km.round() as i64;
    format!("{}:{:02}", s / 60, s % 60)
}

/// Profile settings. Garmin's lactate-threshold speed is m/s ÷ 10 (reference §5): ×10 here.
pub fn profile(v: &Value, personal: bool) -> Value {
    let u = v.get("userData").unwrap_or(v);
    let sleep = v.get("userSleep").cloned().unwrap_or(Value::Null);
    let clock = |k: &str| num(&sleep, k).map(|s| format!("{:02}:{:02}", (s as i64) / 3600, (s as i64) % 3600 / 60));
    let speed = num(u, "lactateThresholdSpeed").filter(|s| *s > 0.0).map(|s| s * 10.0);
    let mut row = json!({
        "measurement_system": text(u, "measurementSystem"),
        "weight_kg": num(u, "weight").map(|g| (g / 10.0).round() / 100.0),
        "height_cm": num(u, "height"),
        "sleep_time": clock("sleepTime"),
        "wake_time": clock("wakeTime"),
        "lactate_threshold_hr_bpm": num(u, "lactateThresholdHeartRate"),
        "lactate_threshold_speed_m_s": speed.map(|s| (s * 1000.0).round() / 1000.0),
        "lactate_threshold_pace_per_km": speed.map(|s| pace(1000.0 / s)),
        "vo2max_running": num(u, "vo2MaxRunning"),
        "vo2max_cycling": num(u, "vo2MaxCycling"),
    });
    if personal {
        let m: &mut Map<String, Value> = row.as_object_mut().expect("an object");
        m.insert("birth_year".into(), json!(u.get("birthDate").and_then(Value::as_str).and_then(|d| d.get(..4)).and_then(|y| y.parse::<i64>().ok())));
        m.insert("sex".into(), text(u, "gender"));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_no_rows_and_no_reading_is_null() {
        assert!(daily_summary(&json!({"calendarDate": "2026-11-08"})).is_none());
        let s = stress(&json!({"calendarDate": "2026-11-08", "values": {"overallStressLevel": -1, "restStressDuration": 600}})).unwrap();
        assert_eq!(s["stress_level"], Value::Null);
        assert_eq!(s["rest_min"], 10.0);
        assert!(sleep(&json!({"dailySleepDTO": {"id": null, "calendarDate": "2026-11-08", "sleepTimeSeconds": null}})).is_none());
    }

    #[test]
    fn grams_and_the_lactate_speed_are_converted() {
        let w = weights(&json!({"dateWeightList": [{"samplePk": 5, "calendarDate": "2026-11-08", "weight": 72345.0, "boneMass": 3100.0}]}));
        assert_eq!(w[0]["weight_kg"], 72.35);
        assert_eq!(w[0]["id"], "5");
        let p = profile(&json!({"userData": {"lactateThresholdSpeed": 0.3571, "birthDate": "1985-09-06"}}), false);
        assert_eq!(p["lactate_threshold_speed_m_s"], 3.571);
        assert_eq!(p["lactate_threshold_pace_per_km"], "4:40");
        assert!(p.get("birth_year").is_none(), "personal fields only when asked");
        assert_eq!(profile(&json!({"userData": {"birthDate": "1985-09-06"}}), true)["birth_year"], 1985);
    }

    /// The recorded shape (garth's weight cassette, a person at UTC−6): `date` is the local wall clock
    /// as epoch ms, `timestampGMT` the instant, `calendarDate` the local day.
    #[test]
    fn a_weigh_in_is_at_its_instant_in_the_person_s_offset() {
        let day = |local_ms: i64, gmt_ms: i64, cal: &str| {
            json!({"dailyWeightSummaries": [{"summaryDate": cal, "allWeightMetrics": [
                {"samplePk": 1, "date": local_ms, "calendarDate": cal, "weight": 59720.0, "sourceType": "INDEX_SCALE", "timestampGMT": gmt_ms}]}]})
        };
        // 08:14:36 at UTC−6 is 14:14:36Z.
        let w = weights(&day(1_749_975_276_000, 1_749_996_876_000, "2025-06-15"));
        assert_eq!(w[0]["time"], "2025-06-15T08:14:36-06:00");
        assert_eq!(w[0]["day"], "2025-06-15");
        // An entry at 22:30 local is on its own day, though its instant is the next UTC day.
        let w = weights(&day(1_749_940_200_000, 1_749_961_800_000, "2025-06-14"));
        assert_eq!(w[0]["time"], "2025-06-14T22:30:00-06:00");
        // Without the instant, the wall clock alone, never read as UTC.
        let w = weights(&json!({"dateWeightList": [{"samplePk": 2, "calendarDate": "2025-06-14", "date": 1_749_940_200_000i64, "weight": 1.0}]}));
        assert_eq!(w[0]["time"], "2025-06-14T22:30:00");
    }

    #[test]
    fn the_activity_start_carries_its_offset() {
        let a = activity(&json!({"activityId": 20000000002u64, "startTimeLocal": "2026-11-07 18:05:11", "startTimeGMT": "2026-11-07 17:05:11"}));
        assert_eq!(a["start"], "2026-11-07T18:05:11+01:00");
        assert_eq!(a["id"], "20000000002");
    }
}
