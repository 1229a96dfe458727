//! Deterministic synthetic Oura records, one local day at a time, at real volume.
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned};
use serde_json::{json, Value};

/// splitmix64: a stable, seedable hash so every run serves the same data.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn day_seed(d: Date, salt: u64) -> u64 {
    mix((d.year() as u64) << 16 | (d.month() as u64) << 8 | d.day() as u64 ^ salt.wrapping_mul(0x1000_0001))
}

pub fn local(z: &Zoned) -> String {
    z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

pub fn utc(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S+00:00").to_string()
}

fn at(d: Date, tz: &TimeZone, h: i8, m: i8) -> Zoned {
    d.at(h, m, 0, 0).to_zoned(tz.clone()).expect("valid local time")
}

fn sample_series(start: &Zoned, interval: i64, n: usize, seed: u64, base: f64, spread: u64, nulls: bool) -> Value {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let r = mix(seed ^ i as u64);
            if nulls && r.is_multiple_of(23) {
                Value::Null
            } else {
                json!(base + (r % spread) as f64)
            }
        })
        .collect();
    json!({"interval": interval, "items": items, "timestamp": local(start)})
}

/// Heart-rate rows for local day `d`: `per_day` ± 15 (the default 1,225 gives 1,210–1,240), UTC
/// timestamps; `swing` percent denser at noon than on average, and as much sparser at midnight.
pub fn heartrate(d: Date, tz: &TimeZone, salt: u64, per_day: u32, swing: u8) -> Vec<Value> {
    let s = day_seed(d, salt ^ 7);
    let start = at(d, tz, 0, 0).timestamp();
    let end = at(d.tomorrow().unwrap(), tz, 0, 0).timestamp();
    let span = (end - start).get_seconds().max(1);
    let n = (i64::from(per_day) - 15).max(1) + (s % 31) as i64;
    (0..n)
        .map(|i| {
            let t = start + (spread(i, n, span, swing) + (mix(s ^ i as u64) % 20) as i64).seconds();
            let hour = t.to_zoned(tz.clone()).hour();
            let source = if hour < 6 {
                "sleep"
            } else if hour == 18 {
                "workout"
            } else {
                "awake"
            };
            json!({"bpm": 52 + (mix(s ^ (i as u64) << 1) % 60), "source": source, "timestamp": utc(t), "timestamp_unix": t.as_millisecond()})
        })
        .collect()
}

/// The second of the day of sample `i` of `n` over `span` seconds: evenly apart, or (with a
/// `swing`) closer together around noon, by the inverse of a density 1 − a·cos(2πx) of the day.
fn spread(i: i64, n: i64, span: i64, swing: u8) -> i64 {
    if swing == 0 {
        return i * span / n;
    }
    let (a, target) = (f64::from(swing.min(90)) / 100.0, i as f64 / n as f64);
    // x − a·sin(2πx)/2π is increasing for a < 1: solve it for the share `target` by bisection.
    let cdf = |x: f64| x - a * (std::f64::consts::TAU * x).sin() / std::f64::consts::TAU;
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if cdf(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * span as f64) as i64
}

/// Battery every 5 minutes from local midnight to the next: 276 rows on a 23-hour day, 300 on a 25-hour one.
pub fn ring_battery_level(d: Date, tz: &TimeZone, salt: u64) -> Vec<Value> {
    let start = at(d, tz, 0, 0).timestamp();
    let end = at(d.tomorrow().unwrap(), tz, 0, 0).timestamp();
    let n = (end - start).get_seconds() / 300;
    (0..n)
        .map(|i| {
            let t = start + (i * 300).seconds();
            json!({"level": 100 - (i % 100), "charging": i % 100 > 95, "in_charger": i % 100 > 95, "timestamp": utc(t), "timestamp_unix": t.as_millisecond() + (salt as i64 % 2)})
        })
        .collect()
}

/// Document records that belong to local day `d` (sleep filed under the wake-up day); their daily
/// scores moved by `shift` points (`ScoreShape`), kept within 1 to 100.
pub fn documents(collection: &str, d: Date, tz: &TimeZone, salt: u64, shift: i64) -> Vec<Value> {
    let s = day_seed(d, salt);
    let id = |k: usize| format!("{collection}-{d}-{k}");
    let score = (60 + (s % 35) as i64 + shift).clamp(1, 100);
    match collection {
        "daily_activity" => {
            let t = at(d, tz, 4, 0);
            let class: String = (0..288).map(|i| char::from(b'0' + (mix(s ^ i) % 6) as u8)).collect();
            vec![json!({
                "id": id(0), "day": d.to_string(), "timestamp": local(&t), "score": score, "steps": 4000 + s % 9000,
                "active_calories": 300 + s % 500, "total_calories": 2000 + s % 800, "target_calories": 500, "target_meters": 8000,
                "meters_to_target": 1000 + s % 3000, "equivalent_walking_distance": 6000 + s % 5000, "average_met_minutes": 1.4,
                "high_activity_met_minutes": s % 60, "high_activity_time": (s % 60) * 60, "medium_activity_met_minutes": s % 120,
                "medium_activity_time": (s % 120) * 60, "low_activity_met_minutes": 200, "low_activity_time": 12000,
                "sedentary_met_minutes": 30, "sedentary_time": 30000, "resting_time": 28000, "non_wear_time": 600, "inactivity_alerts": s % 3,
                "contributors": {"meet_daily_targets": 80, "move_every_hour": 90, "recovery_time": 100, "stay_active": 70, "training_frequency": 80, "training_volume": 90},
                "met": sample_series(&t, 60, 1440, s, 0.9, 5, false), "class_5_min": class,
            })]
        }
        "daily_sleep" => vec![json!({"id": id(0), "day": d.to_string(), "timestamp": local(&at(d, tz, 0, 0)), "score": score,
            "contributors": {"deep_sleep": 80, "efficiency": 90, "latency": 70, "rem_sleep": 85, "restfulness": 75, "timing": 95, "total_sleep": score}})],
        "daily_readiness" => vec![json!({"id": id(0), "day": d.to_string(), "timestamp": local(&at(d, tz, 0, 0)), "score": score,
            "temperature_deviation": ((s % 100) as f64 - 50.0) / 100.0, "temperature_trend_deviation": 0.1,
            "contributors": {"activity_balance": 80, "body_temperature": 90, "hrv_balance": 70, "previous_day_activity": 85, "previous_night": 75, "recovery_index": 95, "resting_heart_rate": 90, "sleep_balance": 80, "sleep_regularity": 70}})],
        "daily_cardiovascular_age" => vec![json!({"id": id(0), "day": d.to_string(), "vascular_age": 30 + s % 20, "pulse_wave_velocity": 6.5})],
        "daily_resilience" => {
            vec![json!({"id": id(0), "day": d.to_string(), "level": (["limited", "adequate", "solid", "strong", "exceptional"][(s % 5) as usize]),
            "contributors": {"sleep_recovery": 70.0, "daytime_recovery": 60.0, "stress": 50.0}})]
        }
        "daily_spo2" => vec![
            json!({"id": id(0), "day": d.to_string(), "spo2_percentage": {"average": 95.0 + (s % 40) as f64 / 10.0}, "breathing_disturbance_index": s % 10}),
        ],
        "daily_stress" => vec![json!({"id": id(0), "day": d.to_string(), "stress_high": (s % 120) * 60, "recovery_high": (s % 200) * 60,
            "day_summary": (["restored", "normal", "stressful"][(s % 3) as usize])})],
        "sleep_time" => vec![json!({"id": id(0), "day": d.to_string(), "optimal_bedtime": {"day_tz": -21600, "start_offset": -3600, "end_offset": 0},
            "recommendation": "follow_optimal_bedtime", "status": "optimal_found"})],
        "sleep" => {
            let bed = at(d.yesterday().unwrap(), tz, 22, (s % 50) as i8);
            let wake = at(d, tz, 6, (s % 50) as i8);
            let n = ((wake.timestamp() - bed.timestamp()).get_seconds() / 300) as usize;
            let phases: String = (0..n).map(|i| char::from(b'1' + (mix(s ^ i as u64) % 4) as u8)).collect();
            let mov: String = (0..n * 10).map(|i| char::from(b'1' + (mix(s ^ i as u64) % 3) as u8)).collect();
            let mut v = vec![json!({
                "id": id(0), "day": d.to_string(), "type": "long_sleep", "period": 0, "bedtime_start": local(&bed), "bedtime_end": local(&wake),
                "time_in_bed": n * 300, "total_sleep_duration": n * 270, "awake_time": n * 30, "deep_sleep_duration": n * 60,
                "light_sleep_duration": n * 150, "rem_sleep_duration": n * 60, "efficiency": 90, "latency": 600, "average_heart_rate": 55.5,
                "lowest_heart_rate": 48, "average_hrv": 45, "average_breath": 14.5, "restless_periods": 100 + s % 100, "low_battery_alert": false,
                "readiness": {"score": score, "contributors": {}, "temperature_deviation": 0.1, "temperature_trend_deviation": 0.0},
                "readiness_score_delta": 0, "sleep_score_delta": 0, "sleep_algorithm_version": "v2", "sleep_analysis_reason": null, "ring_id": null,
                "heart_rate": sample_series(&bed, 300, n, s, 48.0, 15, true), "hrv": sample_series(&bed, 300, n, s ^ 9, 30.0, 40, true),
                "sleep_phase_5_min": phases, "movement_30_sec": mov,
            })];
            if s.is_multiple_of(4) {
                let nap = at(d, tz, 14, 0);
                v.push(json!({"id": id(1), "day": d.to_string(), "type": "late_nap", "period": 1, "bedtime_start": local(&nap),
                    "bedtime_end": local(&at(d, tz, 14, 40)), "time_in_bed": 2400, "total_sleep_duration": 2100, "low_battery_alert": false}));
            }
            v
        }
        "workout" if s.is_multiple_of(2) => {
            // Evening workouts: at a negative UTC offset they start on the next UTC date.
            let st = at(d, tz, 19, 30);
            vec![json!({"id": id(0), "day": d.to_string(), "activity": "running", "intensity": "moderate", "source": "autodetected",
                "calories": 300 + s % 200, "distance": 5000 + s % 3000, "label": null,
                "start_datetime": local(&st), "end_datetime": local(&at(d, tz, 20, 15))})]
        }
        "session" if s.is_multiple_of(3) => {
            let st = at(d, tz, 7, 0);
            vec![json!({"id": id(0), "day": d.to_string(), "type": "meditation", "mood": "good", "start_datetime": local(&st),
                "end_datetime": local(&at(d, tz, 7, 10)), "heart_rate": sample_series(&st, 5, 120, s, 55.0, 10, false),
                "heart_rate_variability": sample_series(&st, 5, 120, s ^ 3, 40.0, 20, false), "motion_count": sample_series(&st, 5, 120, s ^ 5, 0.0, 3, false)})]
        }
        "tag" if s.is_multiple_of(7) => {
            vec![json!({"id": id(0), "day": d.to_string(), "timestamp": local(&at(d, tz, 21, 0)), "text": "coffee", "tags": ["tag_generic_caffeine"]})]
        }
        "enhanced_tag" if s.is_multiple_of(5) => {
            vec![json!({"id": id(0), "start_day": d.to_string(), "end_day": null, "start_time": d.at(21, 0, 0, 0).to_string(),
            "end_time": null, "tag_type_code": "tag_generic_alcohol", "comment": null, "custom_name": null})]
        }
        "rest_mode_period" if s.is_multiple_of(29) => vec![json!({"id": id(0), "start_day": d.to_string(), "end_day": d.tomorrow().unwrap().to_string(),
            "start_time": local(&at(d, tz, 9, 0)), "end_time": null, "episodes": [{"tags": ["sick"], "timestamp": local(&at(d, tz, 9, 0))}]})],
        "vO2_max" if d.weekday() == jiff::civil::Weekday::Monday => {
            vec![json!({"id": id(0), "day": d.to_string(), "timestamp": local(&at(d, tz, 8, 0)), "vo2_max": 40 + s % 10})]
        }
        _ => vec![],
    }
}

pub fn ring_configuration() -> Vec<Value> {
    vec![
        json!({"id": "ring-1", "color": "stealth_black", "design": "heritage", "firmware_version": "2.9.1", "hardware_type": "gen3", "set_up_at": "2024-01-10T10:00:00+00:00", "size": 9}),
        json!({"id": "ring-2", "color": "silver", "design": "horizon", "firmware_version": "3.1.0", "hardware_type": "gen4", "set_up_at": "2025-05-02T10:00:00+00:00", "size": 9}),
    ]
}

pub fn personal_info() -> Value {
    json!({"id": "twin-user-1", "age": 38, "weight": 72.5, "height": 1.78, "biological_sex": "female", "email": "twin@example.invalid"})
}
