//! Withings has no official sandbox, so its sample data is built in: a deterministic person in
//! Withings' own wire format, and [`Api`], which answers a read as Withings would (envelope,
//! filters, `more`/`offset` paging, invalid-parameter statuses). In sandbox mode the server sends
//! its requests here instead of to the network, so the sample exercises the real request,
//! paging and decoding code; the twin serves the same person over HTTP, with the auth, rate
//! limits and faults of the real service on top (one generator, not two).
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The sample user: their zone and whether a sleep device is linked.
#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
    /// The IANA name Withings puts in `timezone`.
    pub tz_name: String,
    pub sleep_device: bool,
    /// Nights ending before this day come in Withings' older sleep summary format
    /// ([`older_night`]); None: every night in the current one.
    pub older_sleep_before: Option<Date>,
}

impl Person {
    pub fn new(tz_name: &str, sleep_device: bool) -> Person {
        let tz = TimeZone::get(tz_name).unwrap_or(TimeZone::UTC);
        Person { tz, tz_name: tz_name.into(), sleep_device, older_sleep_before: None }
    }

    /// The zone Withings names at unix second `t`: the person's IANA name, or, for a zone the tz
    /// database does not name (a trip's, in the tests), the fixed offset of that moment as it
    /// spells one (`Etc/GMT-9` is +09:00): a record is in the zone it was recorded in.
    pub fn zone_name(&self, t: i64) -> String {
        if TimeZone::get(&self.tz_name).is_ok() {
            return self.tz_name.clone();
        }
        let o = Timestamp::from_second(t).map(|t| self.tz.to_offset(t)).unwrap_or(jiff::tz::Offset::UTC);
        match -o.seconds() / 3600 {
            0 => "Etc/GMT".into(),
            h if h > 0 => format!("Etc/GMT+{h}"),
            h => format!("Etc/GMT{h}"),
        }
    }

    fn at(&self, d: Date, h: i8, m: i8, s: i8) -> i64 {
        DateTime::from_parts(d, jiff::civil::time(h, m, s, 0)).to_zoned(self.tz.clone()).map(|z| z.timestamp().as_second()).unwrap_or(0)
    }

    fn day_of(&self, unix: i64) -> Date {
        Timestamp::from_second(unix).map(|t| t.to_zoned(self.tz.clone()).date()).unwrap_or(Date::MIN)
    }
}

use crate::providers::day_hash as h;

fn days_since_epoch(d: Date) -> f64 {
    (d - Date::constant(1970, 1, 1)).get_days() as f64
}

const SCALE: &str = "00000000000000000000000000000000000cafe1";
const CUFF: &str = "00000000000000000000000000000000000cafe2";
const WATCH: &str = "00000000000000000000000000000000000cafe3";
const MAT: &str = "00000000000000000000000000000000000cafe4";

fn m(value: i64, kind: u32, unit: i32) -> Value {
    json!({"value": value, "type": kind, "unit": unit, "algo": 0, "fm": 131})
}

fn group(id: i64, date: i64, attrib: u32, device: Option<(&str, &str, u32)>, measures: Vec<Value>) -> Value {
    let (dev, model, modelid) = match device {
        Some((d, name, mid)) => (json!(d), json!(name), json!(mid)),
        None => (Value::Null, Value::Null, Value::Null),
    };
    json!({
        "grpid": id, "attrib": attrib, "date": date, "created": date + 40, "modified": date + 40, "category": 1,
        "deviceid": dev, "hash_deviceid": dev, "model": model, "modelid": modelid, "comment": null, "measures": measures,
    })
}

/// The measure groups dated on local day `d`, oldest first, as getmeas holds them. Most mornings
/// a Body Cardio step-on (three groups: composition, pulse, pulse wave velocity; the third up to
/// 75 s later), every tenth a Body Scan (one group, more metrics, duplicated entries), now and
/// then a guest on the scale (ambiguous), a weight typed in by hand, and an evening blood pressure
/// reading; exponents vary from day to day as they do for real.
pub fn groups_of_day(p: &Person, d: Date) -> Vec<Value> {
    let base = (d - Date::constant(1970, 1, 1)).get_days() as i64 * 100;
    let mut out = vec![];
    let r = h(d, 1);
    let weight_g = 72_000 + (1_500.0 * (days_since_epoch(d) / 20.0).sin()) as i64 + (r % 400) as i64;
    let fat_ratio_milli = 18_000 + (r % 1_500) as i64; // 18.000–19.499 %
    let fat_g = weight_g * fat_ratio_milli / 100_000;
    let free_g = weight_g - fat_g;
    if r % 7 != 3 {
        let t = p.at(d, 7, 10, (r % 50) as i8);
        if r.is_multiple_of(10) {
            // Body Scan: one group, position 7 on whole-body values, 5 and 8 twice (reference §4).
            let at7 = |mut v: Value| {
                v["position"] = json!(7);
                v
            };
            out.push(group(
                base + 1,
                t,
                0,
                Some((SCALE, "Body Scan", 10)),
                vec![
                    m(weight_g, 1, -3),
                    at7(m(free_g / 10, 5, -2)),
                    at7(m(free_g / 10, 5, -2)),
                    at7(m(fat_g / 10, 8, -2)),
                    at7(m(fat_g / 10, 8, -2)),
                    m(fat_ratio_milli, 6, -3),
                    at7(m(free_g * 3 / 40, 76, -2)),
                    at7(m(weight_g * 55 / 1_000, 77, -2)),
                    at7(m(310, 88, -2)),
                    at7(m(2_140, 168, -2)),
                    at7(m(3_020, 169, -2)),
                    at7(m(31 + (r % 9) as i64, 170, -1)),
                    m(1_620 + (r % 40) as i64, 226, 0),
                    m(31, 227, 0),
                ],
            ));
        } else {
            let (wv, wu) = if r.is_multiple_of(2) { (weight_g, -3) } else { (weight_g / 10, -2) };
            out.push(group(
                base + 1,
                t,
                0,
                Some((SCALE, "Body Cardio", 6)),
                vec![
                    m(wv, 1, wu),
                    m(fat_g / 10, 8, -2),
                    m(free_g * 3 / 40, 76, -2),
                    m(weight_g * 55 / 1_000, 77, -2),
                    m(310, 88, -2),
                    m(fat_ratio_milli, 6, -3),
                    m(free_g, 5, -3),
                ],
            ));
            let pulse = 58 + (r % 17) as i64;
            let (pv, pu) = if r.is_multiple_of(3) { (pulse * 100, -2) } else { (pulse, 0) };
            out.push(group(base + 2, t, 0, Some((SCALE, "Body Cardio", 6)), vec![m(pv, 11, pu)]));
            let late = if r % 4 == 1 { 75 } else { 0 };
            out.push(group(base + 3, t + late, 8, Some((SCALE, "Body Cardio", 6)), vec![m(7_400 + (r % 300) as i64, 91, -3), m(289, 155, -1)]));
        }
        if r % 13 == 5 {
            // Someone else on the scale half an hour later: the scale is not sure it was this user.
            out.push(group(base + 4, t + 1_800, 1, Some((SCALE, "Body Cardio", 6)), vec![m(58_300, 1, -3)]));
        }
    }
    if r % 7 == 2 {
        out.push(group(base + 5, p.at(d, 20, 15, 0), 2, None, vec![m(weight_g / 10 + 30, 1, -2)]));
    }
    let b = h(d, 2);
    if b.is_multiple_of(2) {
        let (sys, dia, pulse) = (116 + (b % 15) as i64, 74 + (b % 11) as i64, 62 + (b % 13) as i64);
        let (k, u) = if b.is_multiple_of(4) { (100, -2) } else { (1, 0) };
        let attrib = if b.is_multiple_of(6) { 17 } else { 5 };
        out.push(group(base + 6, p.at(d, 21, 5, 0), attrib, Some((CUFF, "BPM Connect", 45)), vec![m(dia * k, 9, u), m(sys * k, 10, u), m(pulse * k, 11, u)]));
    }
    out
}

/// What counted a day's activity: the ScanWatch (heart rate too), the phone (steps only, the
/// watch left at home), or nothing (Withings' resting estimate only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Watch,
    Phone,
    Nothing,
}

/// The source of local day `d`'s activity and intraday samples; the workouts and ECGs are the watch's.
pub fn source_of(d: Date) -> Source {
    let r = h(d, 3);
    match r {
        _ if r % 23 == 11 => Source::Nothing,
        _ if r % 5 == 3 => Source::Phone,
        _ => Source::Watch,
    }
}

/// Heart-rate zones of the watch (light, moderate, intense, peak): the lowest bpm of zones 1 to 3.
const HR_ZONES: [i64; 3] = [110, 135, 155];
/// Steps in five minutes that make them soft (from 1), moderate or intense activity.
const STEPS_MODERATE: i64 = 151;
const STEPS_INTENSE: i64 = 601;

fn hr_zone(bpm: i64) -> usize {
    HR_ZONES.iter().take_while(|z| bpm >= **z).count()
}

/// The day's activity row (Withings' own keys), by `now`: every number the sums and extremes of
/// the day's intraday samples ([`intraday_between`]) of its source, the watch or the phone (whose
/// heart rate and zones are 0, as recorded); a day without a source is Withings' resting estimate.
pub fn activity_of_day(p: &Person, d: Date, now: Timestamp) -> Value {
    let r = h(d, 3);
    let (from, to) = (p.at(d, 0, 0, 0), p.at(d.tomorrow().unwrap_or(d), 0, 0, 0));
    let until = to.min(now.as_second());
    let share = ((until - from) as f64 / (to - from).max(1) as f64).clamp(0.0, 1.0);
    let mut a = match source_of(d) {
        Source::Nothing => {
            // As recorded: an external source (brand 18), modelid -1, every measure 0, and a
            // total that is Withings' resting estimate.
            let mut a = json!({"date": d.to_string(), "timezone": p.zone_name(from), "totalcalories": ((1_700 + r % 150) as f64 * 100.0).round() / 100.0,
                "modified": p.at(d, 23, 0, 0).min(until), "deviceid": null, "hash_deviceid": null, "brand": 18, "modelid": -1, "model": null, "is_tracker": false});
            for k in ["steps", "distance", "elevation", "soft", "moderate", "intense", "active", "calories"] {
                a[k] = json!(0);
            }
            a
        }
        source => summed(p, d, from, until, share, source),
    };
    if source_of(d) != Source::Watch {
        // A source without a heart-rate tracker sends its heart rate and zones as 0 (as recorded).
        for k in ["hr_average", "hr_min", "hr_max", "hr_zone_0", "hr_zone_1", "hr_zone_2", "hr_zone_3"] {
            a[k] = json!(0);
        }
    }
    a
}

/// A day's activity from its intraday samples from `from` to `until`.
fn summed(p: &Person, d: Date, from: i64, until: i64, share: f64, source: Source) -> Value {
    let samples: Vec<Value> = intraday_between(p, from, until).into_iter().map(|(_, v)| v).collect();
    let g = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    let sum = |k: &str| samples.iter().map(|v| g(v, k)).sum::<f64>();
    let by_steps = |lo: i64, hi: i64| samples.iter().filter(|v| (lo..hi).contains(&(g(v, "steps") as i64))).count() as i64 * INTRADAY_STEP_S;
    let (soft, moderate, intense) = (by_steps(1, STEPS_MODERATE), by_steps(STEPS_MODERATE, STEPS_INTENSE), by_steps(STEPS_INTENSE, i64::MAX));
    let calories = (sum("calories") * 1000.0).round() / 1000.0;
    let mut a = json!({
        "date": d.to_string(), "timezone": p.zone_name(p.at(d, 12, 0, 0)), "steps": sum("steps") as i64, "distance": (sum("distance") * 1000.0).round() / 1000.0,
        "elevation": sum("elevation") as i64, "soft": soft, "moderate": moderate, "intense": intense, "active": moderate + intense,
        "calories": calories, "totalcalories": ((1_650.0 * share + calories) * 1000.0).round() / 1000.0, "modified": p.at(d, 23, 0, 0).min(until),
    });
    let device = match source {
        Source::Watch => json!({"deviceid": WATCH, "hash_deviceid": WATCH, "brand": 1, "modelid": 93, "model": "ScanWatch", "is_tracker": true}),
        _ => json!({"deviceid": null, "hash_deviceid": null, "brand": 18, "modelid": 1055, "model": "GoogleFit tracker", "is_tracker": false}),
    };
    for (k, v) in device.as_object().into_iter().flatten() {
        a[k] = v.clone();
    }
    let hr: Vec<i64> = samples.iter().filter_map(|v| v["heart_rate"].as_i64()).collect();
    if !hr.is_empty() {
        let mut zones = [0i64; 4];
        for b in &hr {
            zones[hr_zone(*b)] += INTRADAY_STEP_S;
        }
        for (k, v) in [
            ("hr_average", (hr.iter().sum::<i64>() as f64 / hr.len() as f64).round() as i64),
            ("hr_min", *hr.iter().min().unwrap_or(&0)),
            ("hr_max", *hr.iter().max().unwrap_or(&0)),
            ("hr_zone_0", zones[0]),
            ("hr_zone_1", zones[1]),
            ("hr_zone_2", zones[2]),
            ("hr_zone_3", zones[3]),
        ] {
            a[k] = json!(v);
        }
    }
    a
}

/// When the night ending `d` starts and ends, if the mat recorded one.
fn night_span(p: &Person, d: Date) -> Option<(i64, i64)> {
    let r = h(d, 4);
    if !p.sleep_device || r % 9 == 4 {
        return None;
    }
    Some((p.at(d.yesterday().ok()?, 22, 30, 0) + (r % 2_400) as i64, p.at(d, 6, 20, 0) + (r % 1_800) as i64))
}

/// The night that ends on local day `d`, if there was one (a night is skipped now and then).
pub fn night_ending(p: &Person, d: Date) -> Option<Value> {
    let r = h(d, 4);
    let (start, end) = night_span(p, d)?;
    let in_bed = end - start;
    let (deep, rem, awake) = (4_800 + (r % 1_800) as i64, 5_400 + (r % 1_500) as i64, 1_200 + (r % 1_500) as i64);
    let light = in_bed - deep - rem - awake;
    let latency = 480 + (r % 900) as i64;
    if p.older_sleep_before.is_some_and(|b| d < b) {
        return Some(older_night(p, d, (start, end), [light, deep, rem, awake], latency, r));
    }
    Some(json!({
        "id": (d - Date::constant(1970, 1, 1)).get_days() as i64 + 2_000_000_000, "timezone": p.zone_name(end), "model": 32, "model_id": 63,
        "hash_deviceid": MAT, "startdate": start, "enddate": end, "date": d.to_string(), "created": end + 600, "modified": end + 600,
        "data": {
            "total_timeinbed": in_bed, "total_sleep_time": light + deep + rem, "lightsleepduration": light, "deepsleepduration": deep,
            "remsleepduration": rem, "wakeupduration": awake, "sleep_efficiency": ((light + deep + rem) * 100 / in_bed) as f64 / 100.0,
            "sleep_latency": latency, "durationtosleep": latency, "durationtowakeup": 0, "wakeup_latency": 300, "wakeupcount": 1 + r % 4, "waso": awake - 300,
            "nb_rem_episodes": 3 + r % 3, "out_of_bed_count": r % 2, "hr_average": 55 + r % 8, "hr_min": 47 + r % 5, "hr_max": 80 + r % 20,
            "rr_average": 14 + r % 3, "rr_min": 10 + r % 2, "rr_max": 19 + r % 3, "snoring": (r % 1_800) as i64, "snoringepisodecount": r % 20,
            "breathing_disturbances_intensity": 5 + r % 20, "sleep_score": 62 + r % 30,
        },
    }))
}

/// A night in Withings' older sleep summary format (accounts whose nights go back before it
/// changed): the stages, `durationtosleep` and `durationtowakeup`, the wake-ups, and nothing
/// else, so no `total_sleep_time`, no `sleep_latency` and no score.
fn older_night(p: &Person, d: Date, (start, end): (i64, i64), [light, deep, rem, awake]: [i64; 4], latency: i64, r: u64) -> Value {
    json!({
        "id": (d - Date::constant(1970, 1, 1)).get_days() as i64 + 2_000_000_000, "timezone": p.zone_name(end), "model": 32, "model_id": 63,
        "hash_deviceid": MAT, "startdate": start, "enddate": end, "date": d.to_string(), "created": end + 600, "modified": end + 600,
        "data": {
            "wakeupduration": awake, "lightsleepduration": light, "deepsleepduration": deep, "remsleepduration": rem,
            "durationtosleep": latency, "durationtowakeup": 300, "wakeupcount": 1 + r % 4,
        },
    })
}

/// The night's state segments, as `/v2/sleep get` holds them, for the night that ends on `d`:
/// contiguous from its start to its end, four cycles of light, deep, light and REM with the
/// wake-ups the summary counts between them, each state's segments adding up to the summary's
/// duration of it. Readings every minute (heart rate, breathing rate, seconds snored) and every
/// fifth minute (HRV), whose lowest, highest and mean heart and breathing rates and total
/// snoring are the summary's: the sample agrees with itself.
pub fn night_segments(p: &Person, d: Date) -> Vec<Value> {
    let Some(n) = night_ending(p, d) else {
        return vec![];
    };
    let (start, end) = (n["startdate"].as_i64().unwrap_or(0), n["enddate"].as_i64().unwrap_or(0));
    let x = &n["data"];
    let g = |k: &str| x[k].as_i64().unwrap_or(0);
    let mut segs: Vec<(i64, i64, i64)> = vec![];
    let mut at = start;
    let mut push = |state: i64, secs: i64| {
        segs.push((at, at + secs, state));
        at += secs;
    };
    const CYCLES: i64 = 4;
    let wakeups = g("wakeupcount").clamp(0, CYCLES);
    let (awake, light, deep, rem) = (
        parts(g("wakeupduration"), wakeups + 1),
        parts(g("lightsleepduration"), 2 * CYCLES),
        parts(g("deepsleepduration"), CYCLES),
        parts(g("remsleepduration"), CYCLES),
    );
    push(0, awake[0]);
    for k in 0..CYCLES as usize {
        push(1, light[2 * k]);
        push(2, deep[k]);
        push(1, light[2 * k + 1]);
        push(3, rem[k]);
        if (k as i64) < wakeups {
            push(0, awake[k + 1]);
        }
    }
    let minutes: Vec<i64> = (0..).map(|i| start + 60 * i).take_while(|t| *t < end).collect();
    let r = h(d, 7);
    let hr = readings(minutes.len(), (g2(x, "hr_min"), g2(x, "hr_average"), g2(x, "hr_max")), r);
    let rr = readings(minutes.len(), (g2(x, "rr_min"), g2(x, "rr_average"), g2(x, "rr_max")), r >> 8);
    let asleep = |t: i64| segs.iter().any(|(a, b, st)| (*a..*b).contains(&t) && *st != 0);
    let mut snore_left = g("snoring");
    let snoring: Vec<i64> = minutes
        .iter()
        .map(|t| {
            let s = if asleep(*t) { snore_left.min(60) } else { 0 };
            snore_left -= s;
            s
        })
        .collect();
    segs.iter()
        .map(|(a, b, state)| {
            let mut seg = json!({"startdate": a, "enddate": b, "state": state, "model": "Aura Sensor V2", "model_id": 63, "hash_deviceid": MAT});
            let mut series = |key: &str, every: usize, value: &dyn Fn(usize) -> Value| {
                let m: Map<String, Value> =
                    minutes.iter().enumerate().filter(|(i, t)| (*a..*b).contains(*t) && i % every == 0).map(|(i, t)| (t.to_string(), value(i))).collect();
                seg[key] = Value::Object(m);
            };
            series("hr", 1, &|i| json!(hr[i]));
            series("rr", 1, &|i| json!(rr[i]));
            series("snoring", 1, &|i| json!(snoring[i]));
            series("sdnn_1", 5, &|i| json!(38 + (r >> (i % 16)) % 30));
            series("rmssd", 5, &|i| json!(30 + (r >> (i % 16)) % 35));
            series("hrv_quality", 5, &|i| json!(60 + (r >> (i % 8)) % 40));
            seg
        })
        .collect()
}

fn g2(x: &Value, k: &str) -> i64 {
    x[k].as_i64().unwrap_or(0)
}

/// `total` in `n` parts of whole seconds (the last takes what division leaves).
fn parts(total: i64, n: i64) -> Vec<i64> {
    let n = n.max(1);
    let mut v = vec![total / n; n as usize];
    if let Some(last) = v.last_mut() {
        *last += total % n;
    }
    v
}

/// `n` whole readings whose lowest is `lo`, highest `hi` and mean exactly `avg`: the highest
/// first (falling asleep), the lowest mid-night, the rest a zero-sum wave around the mean with
/// the few ±1 that bring the sum to `n × avg`. Needs `lo < avg < hi` and `n` well above their spread.
fn readings(n: usize, (lo, avg, hi): (i64, i64, i64), r: u64) -> Vec<i64> {
    let mut v = vec![avg; n];
    if n < 3 || !(lo < avg && avg < hi) {
        return v;
    }
    let mid = n / 2;
    v[0] = hi;
    v[mid] = lo;
    let rest: Vec<usize> = (1..n).filter(|i| *i != mid).collect();
    let amp = (avg - lo - 1).min(hi - avg - 1).clamp(0, 2);
    for (j, pair) in rest.chunks(2).enumerate() {
        if let [a, b] = pair {
            let w = ((j as u64 + r) / 5 % (amp as u64 + 1)) as i64;
            v[*a] += w;
            v[*b] -= w;
        }
    }
    let off = lo + hi - 2 * avg;
    let k = (off.unsigned_abs() as usize).min(rest.len());
    for i in 0..k {
        v[rest[i * rest.len() / k.max(1)]] -= off.signum();
    }
    v
}

/// The ECG of local day `d`, if one was taken (about one day in four the watch was worn, around
/// noon): its `/v2/heart list` row; the intraday heart rate of its five minutes is its rate. Mostly negative, now and then inconclusive.
pub fn ecg_of_day(p: &Person, d: Date) -> Option<Value> {
    let r = h(d, 6);
    if r % 4 != 1 || source_of(d) != Source::Watch {
        return None;
    }
    let t = p.at(d, 12, 0, 0) + (r % 3_600) as i64;
    let afib = if r % 7 == 3 { 2 } else { 0 };
    Some(json!({"deviceid": WATCH, "model": 93, "ecg": {"signalid": signal_id(d), "afib": afib}, "heart_rate": ecg_heart_rate(d),
                "timestamp": t, "modified": t + 120}))
}

/// The signal id of day `d`'s ECG: the day is in it, so a read by id finds its day again.
pub fn signal_id(d: Date) -> i64 {
    4_000_000_000 + (d - Date::constant(1970, 1, 1)).get_days() as i64
}

fn ecg_heart_rate(d: Date) -> i64 {
    62 + (h(d, 6) % 30) as i64
}

/// Seconds and rate of the ScanWatch's ECG (the spec: 30 s at 300 Hz).
pub const ECG_SECONDS: usize = 30;
pub const ECG_HZ: usize = 300;

/// `/v2/heart get` for a signal id: the recording's samples (µV), a beat at the listed heart rate
/// (P wave, QRS, T wave at their places in each beat), or None when no ECG has that id.
pub fn ecg_signal(p: &Person, id: i64) -> Option<Value> {
    let d = Date::constant(1970, 1, 1).checked_add(jiff::Span::new().try_days(id.checked_sub(4_000_000_000)?).ok()?).ok()?;
    ecg_of_day(p, d)?;
    let hr = ecg_heart_rate(d);
    let beat = 60.0 / hr as f64;
    let bump = |x: f64, at: f64, width: f64| (-((x - at) / width).powi(2)).exp();
    let signal: Vec<i64> = (0..ECG_SECONDS * ECG_HZ)
        .map(|i| {
            let ph = (i as f64 / ECG_HZ as f64 % beat) / beat;
            let uv = 120.0 * bump(ph, 0.15, 0.03) - 150.0 * bump(ph, 0.27, 0.01) + 1_000.0 * bump(ph, 0.30, 0.012) - 250.0 * bump(ph, 0.33, 0.012)
                + 250.0 * bump(ph, 0.55, 0.06);
            uv.round() as i64
        })
        .collect();
    Some(json!({"signal": signal, "sampling_frequency": ECG_HZ, "wearposition": 1, "model": 93, "heart_rate": hr}))
}

/// The workout of local day `d`, if any (about every third day the watch was worn): its start and
/// end on the five-minute grid of the intraday samples, and its category (walk, run, ride).
fn workout_span(p: &Person, d: Date) -> Option<(i64, i64, i64)> {
    let r = h(d, 5);
    if !r.is_multiple_of(3) || source_of(d) != Source::Watch {
        return None;
    }
    let start = p.at(d, 18, 0, 0) + (r % 6) as i64 * INTRADAY_STEP_S;
    let minutes = 30 + 5 * (r % 7) as i64;
    Some((start, start + minutes * 60, [1, 2, 6][(r / 3 % 3) as usize]))
}

/// The workouts of local day `d`: heart rate, zones, steps, distance and calories read from the
/// intraday samples of its minutes (a ride's distance from its pace: a watch counts no steps on a bike).
pub fn workouts_of_day(p: &Person, d: Date) -> Vec<Value> {
    let Some((start, end, category)) = workout_span(p, d) else {
        return vec![];
    };
    let r = h(d, 5);
    let samples: Vec<Value> = intraday_between(p, start, end).into_iter().map(|(_, v)| v).collect();
    let g = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    let sum = |k: &str| samples.iter().map(|v| g(v, k)).sum::<f64>();
    let hr: Vec<i64> = samples.iter().filter_map(|v| v["heart_rate"].as_i64()).collect();
    let mut zones = [0i64; 4];
    for b in &hr {
        zones[hr_zone(*b)] += INTRADAY_STEP_S;
    }
    let distance = if category == 6 { (end - start) as f64 * 6.5 } else { sum("distance") };
    vec![json!({
        "id": (d - Date::constant(1970, 1, 1)).get_days() as i64 + 3_000_000_000, "category": category,
        "timezone": p.zone_name(start), "model": 93, "attrib": 0, "startdate": start, "enddate": end, "date": d.to_string(),
        "deviceid": WATCH, "modified": end + 300,
        "data": {"calories": sum("calories").round(), "intensity": 30 + r % 50,
                 "hr_average": (hr.iter().sum::<i64>() as f64 / hr.len().max(1) as f64).round() as i64, "hr_min": hr.iter().min(),
                 "hr_max": hr.iter().max(), "hr_zone_0": zones[0], "hr_zone_1": zones[1], "hr_zone_2": zones[2], "hr_zone_3": zones[3],
                 "pause_duration": 0, "algo_pause_duration": null, "spo2_average": null, "steps": sum("steps") as i64,
                 "distance": distance.round(), "elevation": sum("elevation") as i64},
    })]
}

/// Seconds between intraday samples.
pub const INTRADAY_STEP_S: i64 = 300;

/// What the intraday samples of local day `d` depend on: its source, the nights the mat recorded
/// (the one ending that day and the next), the workout, the ECG's instant and rate.
struct SampleDay {
    day: Date,
    source: Source,
    nights: Vec<(i64, i64)>,
    workout: Option<(i64, i64, i64)>,
    ecg: Option<(i64, i64)>,
}

impl SampleDay {
    fn of(p: &Person, d: Date) -> Option<SampleDay> {
        let source = source_of(d);
        (source != Source::Nothing).then(|| SampleDay {
            day: d,
            source,
            nights: [d, d.tomorrow().unwrap_or(d)].into_iter().filter_map(|n| night_span(p, n)).collect(),
            workout: workout_span(p, d),
            ecg: ecg_of_day(p, d).and_then(|e| Some((e["timestamp"].as_i64()?, e["heart_rate"].as_i64()?))),
        })
    }
}

/// The sample of the five minutes from `t`: asleep, no steps (and a low rate); in a workout, its
/// pace and effort; awake, mostly little walking; the ECG's rate in the five minutes it was taken.
/// The phone counts steps only (no heart rate, as the recorded phone sample has none).
fn intraday_at(w: &SampleDay, t: i64) -> Value {
    let d = w.day;
    let r = h(d, t.rem_euclid(86_400) as u64 + 6);
    let in_bed = |t: i64| w.nights.iter().any(|(a, b)| (*a..*b).contains(&t));
    let workout = w.workout.filter(|(a, b, _)| (*a..*b).contains(&t));
    let (mut bpm, steps, kcal) = match workout {
        Some((a, _, category)) => {
            let j = (t - a) / INTRADAY_STEP_S;
            let (base, steps, kcal) = match category {
                1 => (96, 550, 0.0),
                2 => (142, 800, 0.0),
                _ => (128, 0, 45.0),
            };
            (base + (8 * j).min(16) + (r % 6) as i64, steps + (r % 40) as i64, kcal)
        }
        None if in_bed(t) => (52 + (r % 8) as i64, 0, 0.0),
        None => {
            let steps = match r % 20 {
                0 => 200 + (r / 20 % 300) as i64,
                1..=5 => 30 + (r / 20 % 100) as i64,
                _ => (r / 20 % 20) as i64,
            };
            (66 + (r % 30) as i64, steps, 0.0)
        }
    };
    if let Some((_, rate)) = w.ecg.filter(|(at, _)| (t..t + INTRADAY_STEP_S).contains(at)) {
        bpm = rate;
    }
    let mut v = json!({
        "deviceid": WATCH, "model": "ScanWatch", "model_id": 93, "heart_rate": bpm,
        "steps": steps, "calories": ((steps as f64 * 0.04 + kcal) * 100.0).round() / 100.0, "distance": steps as f64 * 0.78,
        "elevation": 0, "duration": INTRADAY_STEP_S,
    });
    if w.source == Source::Phone {
        if let Some(m) = v.as_object_mut() {
            m.remove("heart_rate");
            m.extend([("deviceid".into(), Value::Null), ("model".into(), json!("GoogleFit tracker")), ("model_id".into(), json!(1055))]);
        }
    }
    v
}

/// Intraday samples in `[from, to)`, one every [`INTRADAY_STEP_S`] on a grid fixed in absolute time,
/// from the day's source (none on a day without one).
pub fn intraday_between(p: &Person, from: i64, to: i64) -> Map<String, Value> {
    let mut out = Map::new();
    let mut t = from.div_euclid(INTRADAY_STEP_S) * INTRADAY_STEP_S;
    if t < from {
        t += INTRADAY_STEP_S;
    }
    let mut day: Option<(Date, Option<SampleDay>)> = None;
    while t < to {
        let d = p.day_of(t);
        if day.as_ref().is_none_or(|x| x.0 != d) {
            day = Some((d, SampleDay::of(p, d)));
        }
        if let Some(w) = day.as_ref().and_then(|x| x.1.as_ref()) {
            out.insert(t.to_string(), intraday_at(w, t));
        }
        t += INTRADAY_STEP_S;
    }
    out
}

/// The linked devices (battery `unknown` and a null first sync included, as real replies have them).
pub fn devices(p: &Person, now: Timestamp) -> Vec<Value> {
    let today = now.to_zoned(p.tz.clone()).date();
    let last = p.at(today, 7, 10, 0).min(now.as_second());
    let mut v = vec![
        json!({"type": "Scale", "battery": "high", "model": "Body Cardio", "model_id": 6, "timezone": p.zone_name(now.as_second()), "fw": "2100",
               "first_session_date": 1_704_067_200, "last_session_date": last, "deviceid": SCALE, "hash_deviceid": SCALE}),
        json!({"type": "Blood Pressure Monitor", "battery": "medium", "model": "BPM Connect", "model_id": 45, "timezone": p.zone_name(now.as_second()),
               "first_session_date": 1_704_067_200, "last_session_date": last - 36_000, "deviceid": CUFF, "hash_deviceid": CUFF}),
        json!({"type": "Activity Tracker", "battery": "unknown", "model": "ScanWatch", "model_id": 93, "timezone": p.zone_name(now.as_second()),
               "first_session_date": null, "last_session_date": last + 600, "deviceid": WATCH, "hash_deviceid": WATCH}),
    ];
    if p.sleep_device {
        v.push(json!({"type": "Sleep Monitor", "battery": "high", "model": "Sleep Analyzer", "model_id": 63, "timezone": p.zone_name(now.as_second()),
                      "first_session_date": 1_704_067_200, "last_session_date": last - 3_000, "deviceid": MAT, "hash_deviceid": MAT}));
    }
    v
}

/// Withings as a function: a path and its parameters in, the JSON it would send out.
pub struct Api<'a> {
    pub person: &'a Person,
    /// Items per page (groups, days, nights, workouts).
    pub page_size: usize,
    pub now: Timestamp,
    /// The order pages come in; None: as Withings is believed to send them (`getmeas` newest
    /// first, the v2 listings oldest first).
    pub order: Option<Order>,
}

/// The order a listing's items are paged in. The twins page in each to test that a cut answer
/// claims only what it fetched whatever the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    OldestFirst,
    NewestFirst,
    /// A fixed permutation drawn from the seed: the same for every page of one listing.
    Shuffled(u64),
}

impl Order {
    /// Put items that arrive oldest first into this order.
    pub fn arrange<T>(self, items: &mut [T]) {
        match self {
            Order::OldestFirst => {}
            Order::NewestFirst => items.reverse(),
            Order::Shuffled(seed) => {
                // Fisher–Yates over a splitmix64 stream: deterministic, no dependency.
                let mut x = seed;
                for i in (1..items.len()).rev() {
                    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = x;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    z ^= z >> 31;
                    items.swap(i, (z % (i as u64 + 1)) as usize);
                }
            }
        }
    }
}

pub fn error(status: i64, text: &str) -> Value {
    json!({"status": status, "body": {}, "error": text})
}

fn invalid() -> Value {
    error(503, "Invalid Params")
}

impl Api<'_> {
    fn today(&self) -> Date {
        self.now.to_zoned(self.person.tz.clone()).date()
    }

    pub fn answer(&self, path: &str, q: &HashMap<String, String>) -> Value {
        let action = q.get("action").map(String::as_str).unwrap_or_default();
        let path = path.trim_matches('/');
        match (path, action) {
            ("measure", "getmeas") => self.getmeas(q),
            ("v2/measure", "getactivity") => self.by_day(q, "activities", |d| vec![activity_of_day(self.person, d, self.now)]),
            ("v2/measure", "getworkouts") => self.by_day(q, "series", |d| workouts_of_day(self.person, d)),
            ("v2/sleep", "getsummary") => self.by_day(q, "series", |d| night_ending(self.person, d).into_iter().collect()),
            ("v2/sleep", "get") => self.night_series(q),
            ("v2/heart", "list") => self.heart_list(q),
            ("v2/heart", "get") => match q.get("signalid").and_then(|i| i.parse().ok()).and_then(|i| ecg_signal(self.person, i)) {
                Some(b) => json!({"status": 0, "body": b}),
                None => invalid(),
            },
            ("v2/measure", "getintradayactivity") => self.intraday(q),
            ("v2/user", "getdevice") => {
                json!({"status": 0, "body": {"devices": devices(self.person, self.now)}})
            }
            _ => error(2554, "Not implemented"),
        }
    }

    fn offset(q: &HashMap<String, String>) -> Result<usize, Value> {
        q.get("offset").map(|o| o.parse::<usize>().map_err(|_| invalid())).unwrap_or(Ok(0))
    }

    fn getmeas(&self, q: &HashMap<String, String>) -> Value {
        let int = |k: &str| q.get(k).map(|v| v.parse::<i64>());
        let (from, to) = match (int("startdate"), int("enddate"), int("lastupdate")) {
            (Some(Ok(s)), Some(Ok(e)), None) => (s, e),
            _ => return invalid(),
        };
        let Ok(offset) = Self::offset(q) else {
            return invalid();
        };
        let types: Option<Vec<u64>> = q.get("meastypes").or(q.get("meastype")).map(|t| t.split(',').filter_map(|x| x.trim().parse().ok()).collect());
        let (first, last) = (self.person.day_of(from), self.person.day_of(to).min(self.today()));
        if last.since(first).map(|s| s.get_days()).unwrap_or(0) > 800 {
            return invalid();
        }
        let mut all = vec![];
        let mut d = first;
        while d <= last {
            for mut g in groups_of_day(self.person, d) {
                let date = g["date"].as_i64().unwrap_or(0);
                if date < from || date > to || date > self.now.as_second() {
                    continue;
                }
                if let Some(types) = &types {
                    let kept: Vec<Value> =
                        g["measures"].as_array().into_iter().flatten().filter(|x| x["type"].as_u64().is_some_and(|t| types.contains(&t))).cloned().collect();
                    if kept.is_empty() {
                        continue;
                    }
                    g["measures"] = Value::Array(kept);
                }
                all.push(g);
            }
            d = d.tomorrow().unwrap_or(d);
            if d == Date::MAX {
                break;
            }
        }
        let (page, more) = self.page(all, offset, self.order.unwrap_or(Order::NewestFirst));
        let next = if more { offset + page.len() } else { 0 };
        json!({"status": 0, "body": {"updatetime": self.now.as_second(), "timezone": self.person.zone_name(self.now.as_second()), "measuregrps": page,
               "more": i32::from(more), "offset": next}})
    }

    fn page(&self, mut all: Vec<Value>, offset: usize, order: Order) -> (Vec<Value>, bool) {
        order.arrange(&mut all);
        let size = self.page_size.max(1);
        let more = all.len() > offset + size;
        (all.into_iter().skip(offset).take(size).collect(), more)
    }

    /// A v2 listing by local days (`startdateymd`/`enddateymd`, both inclusive), `more` a boolean.
    fn by_day(&self, q: &HashMap<String, String>, key: &str, items: impl Fn(Date) -> Vec<Value>) -> Value {
        let ymd = |k: &str| q.get(k).map(|v| v.parse::<Date>());
        let (first, last) = match (ymd("startdateymd"), ymd("enddateymd"), q.get("lastupdate")) {
            (Some(Ok(s)), Some(Ok(e)), None) if s <= e => (s, e.min(self.today())),
            _ => return invalid(),
        };
        let Ok(offset) = Self::offset(q) else {
            return invalid();
        };
        if last.since(first).map(|s| s.get_days()).unwrap_or(0) > 800 {
            return invalid();
        }
        let wanted: Option<Vec<&str>> = q.get("data_fields").map(|f| f.split(',').collect());
        let mut all = vec![];
        let mut d = first;
        while d <= last {
            for mut it in items(d) {
                if it["enddate"].as_i64().is_some_and(|e| e > self.now.as_second()) {
                    continue;
                }
                filter_fields(&mut it, wanted.as_deref());
                all.push(it);
            }
            match d.tomorrow() {
                Ok(n) => d = n,
                Err(_) => break,
            }
        }
        let (page, more) = self.page(all, offset, self.order.unwrap_or(Order::OldestFirst));
        json!({"status": 0, "body": {key: page, "more": more, "offset": offset + page.len()}})
    }

    /// `/v2/heart list`: the ECGs whose time is in `[startdate, enddate]`, paged like the v2 listings.
    fn heart_list(&self, q: &HashMap<String, String>) -> Value {
        let int = |k: &str| q.get(k).map(|v| v.parse::<i64>());
        let (Some(Ok(from)), Some(Ok(to))) = (int("startdate"), int("enddate")) else {
            return invalid();
        };
        let Ok(offset) = Self::offset(q) else {
            return invalid();
        };
        let (first, last) = (self.person.day_of(from), self.person.day_of(to).min(self.today()));
        if last.since(first).map(|s| s.get_days()).unwrap_or(0) > 800 {
            return invalid();
        }
        let mut all = vec![];
        let mut d = first;
        while d <= last {
            all.extend(ecg_of_day(self.person, d).filter(|e| e["timestamp"].as_i64().is_some_and(|t| (from..=to).contains(&t) && t <= self.now.as_second())));
            match d.tomorrow() {
                Ok(n) => d = n,
                Err(_) => break,
            }
        }
        let (page, more) = self.page(all, offset, self.order.unwrap_or(Order::OldestFirst));
        json!({"status": 0, "body": {"series": page, "more": more, "offset": offset + page.len()}})
    }

    /// `/v2/sleep get`: the segments of the nights that ended by now and overlap the first 24
    /// hours after `startdate` (the spec), with the readings `data_fields` asks for (none without it).
    fn night_series(&self, q: &HashMap<String, String>) -> Value {
        let int = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok());
        let (Some(from), Some(to)) = (int("startdate"), int("enddate")) else {
            return invalid();
        };
        let to = to.min(from.saturating_add(86_400));
        let wanted: Vec<&str> = q.get("data_fields").map(|f| f.split(',').collect()).unwrap_or_default();
        let mut series = vec![];
        let mut d = self.person.day_of(from);
        while d <= self.person.day_of(to).tomorrow().unwrap_or(d) {
            if night_ending(self.person, d).is_some_and(|n| n["enddate"].as_i64().is_some_and(|e| e <= self.now.as_second())) {
                for mut seg in night_segments(self.person, d) {
                    let (a, b) = (seg["startdate"].as_i64().unwrap_or(0), seg["enddate"].as_i64().unwrap_or(0));
                    if a < to && b > from {
                        if let Some(m) = seg.as_object_mut() {
                            m.retain(|k, _| !["hr", "rr", "snoring", "sdnn_1", "rmssd", "hrv_quality"].contains(&k.as_str()) || wanted.contains(&k.as_str()));
                        }
                        series.push(seg);
                    }
                }
            }
            match d.tomorrow() {
                Ok(n) => d = n,
                Err(_) => break,
            }
        }
        let mut body = json!({"series": series});
        if self.person.sleep_device {
            body["model"] = json!(32);
        }
        json!({"status": 0, "body": body})
    }

    fn intraday(&self, q: &HashMap<String, String>) -> Value {
        let int = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok());
        let (Some(from), Some(to)) = (int("startdate"), int("enddate")) else {
            return invalid();
        };
        // Only the first 24 hours after `startdate` (the spec), and nothing after now.
        let to = to.min(from + 86_400).min(self.now.as_second());
        json!({"status": 0, "body": {"series": intraday_between(self.person, from, to)}})
    }
}

/// Keep only the requested `data_fields` (activity rows carry them at the top, nights and
/// workouts under `data`); without the list, the default subset Withings sends (reference §6).
fn filter_fields(item: &mut Value, wanted: Option<&[&str]>) {
    const TOP: &[&str] = &[
        "steps",
        "distance",
        "elevation",
        "soft",
        "moderate",
        "intense",
        "active",
        "calories",
        "totalcalories",
        "hr_average",
        "hr_min",
        "hr_max",
        "hr_zone_0",
        "hr_zone_1",
        "hr_zone_2",
        "hr_zone_3",
    ];
    const SLEEP_DEFAULT: &[&str] = &[
        "total_timeinbed",
        "total_sleep_time",
        "lightsleepduration",
        "deepsleepduration",
        "remsleepduration",
        "sleep_efficiency",
        "sleep_latency",
        "wakeup_latency",
        "wakeupduration",
        "wakeupcount",
        "waso",
        "nb_rem_episodes",
        "out_of_bed_count",
    ];
    if let Some(data) = item.get_mut("data").and_then(Value::as_object_mut) {
        let keep: Vec<String> = match wanted {
            Some(w) => w.iter().map(|s| s.to_string()).collect(),
            None if data.contains_key("total_sleep_time") => SLEEP_DEFAULT.iter().map(|s| s.to_string()).collect(),
            None => return,
        };
        data.retain(|k, _| keep.contains(k));
    } else if let (Some(w), Some(obj)) = (wanted, item.as_object_mut()) {
        obj.retain(|k, _| !TOP.contains(&k.as_str()) || w.contains(&k.as_str()));
    }
}

/// Midnight UTC of a day, in Unix seconds (what the client sends for a padded day range).
pub fn utc_midnight(d: Date) -> i64 {
    d.to_zoned(TimeZone::UTC).map(|z| z.timestamp().as_second()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn getmeas_pages_newest_first_with_an_integer_more_and_every_group_once() {
        let p = Person::new("Europe/Paris", true);
        let now: Timestamp = "2026-07-01T00:00:00Z".parse().unwrap();
        let api = Api { person: &p, page_size: 7, now, order: None };
        let (s, e) = (utc_midnight(Date::constant(2026, 6, 1)), utc_midnight(Date::constant(2026, 6, 15)) - 1);
        let mut seen = vec![];
        let mut offset = 0;
        loop {
            let r = api
                .answer("/measure", &q(&[("action", "getmeas"), ("startdate", &s.to_string()), ("enddate", &e.to_string()), ("offset", &offset.to_string())]));
            assert_eq!(r["status"], 0);
            let b = &r["body"];
            seen.extend(b["measuregrps"].as_array().unwrap().iter().map(|g| g["grpid"].as_i64().unwrap()));
            assert!(b["more"].is_i64());
            if b["more"] == 0 {
                break;
            }
            offset = b["offset"].as_u64().unwrap() as usize;
        }
        let mut all = vec![];
        let mut d = Date::constant(2026, 5, 31);
        while d <= Date::constant(2026, 6, 15) {
            all.extend(groups_of_day(&p, d).into_iter().filter(|g| (s..=e).contains(&g["date"].as_i64().unwrap())).map(|g| g["grpid"].as_i64().unwrap()));
            d = d.tomorrow().unwrap();
        }
        assert!(seen.len() > 14, "{}", seen.len());
        // By default getmeas pages newest first, as the real API is believed to.
        all.reverse();
        assert_eq!(seen, all);
    }

    /// The high-resolution night and its summary are one night: the same start and end, each
    /// state's minutes, the wake-ups, the lowest, highest and mean heart and breathing rates, and
    /// the seconds snored.
    #[test]
    fn a_night_series_agrees_with_its_summary() {
        let p = Person::new("Europe/Paris", true);
        let mut nights = 0;
        let mut d = Date::constant(2026, 1, 1);
        while d < Date::constant(2026, 5, 1) {
            d = d.tomorrow().unwrap();
            let Some(n) = night_ending(&p, d) else {
                assert!(night_segments(&p, d).is_empty());
                continue;
            };
            nights += 1;
            let segs = night_segments(&p, d);
            let x = &n["data"];
            let i = |v: &Value, k: &str| v[k].as_i64().unwrap();
            assert_eq!((i(&segs[0], "startdate"), i(segs.last().unwrap(), "enddate")), (i(&n, "startdate"), i(&n, "enddate")), "{d}");
            assert!(segs.windows(2).all(|w| i(&w[0], "enddate") == i(&w[1], "startdate")), "{d}: contiguous");
            let total = |state: i64| segs.iter().filter(|s| s["state"] == state).map(|s| i(s, "enddate") - i(s, "startdate")).sum::<i64>();
            for (state, key) in [(0, "wakeupduration"), (1, "lightsleepduration"), (2, "deepsleepduration"), (3, "remsleepduration")] {
                assert_eq!(total(state), i(x, key), "{d}: {key}");
            }
            let wakeups = segs.iter().skip(1).filter(|s| s["state"] == 0).count() as i64;
            assert_eq!(wakeups, i(x, "wakeupcount"), "{d}");
            let all = |key: &str| -> Vec<i64> { segs.iter().flat_map(|s| s[key].as_object().unwrap().values().map(|v| v.as_i64().unwrap())).collect() };
            for (key, lo, avg, hi) in [("hr", "hr_min", "hr_average", "hr_max"), ("rr", "rr_min", "rr_average", "rr_max")] {
                let v = all(key);
                assert_eq!(v.len() as i64, (i(&n, "enddate") - i(&n, "startdate") + 59) / 60, "{d}: a reading a minute");
                assert_eq!((*v.iter().min().unwrap(), *v.iter().max().unwrap()), (i(x, lo), i(x, hi)), "{d}: {key}");
                assert_eq!(v.iter().sum::<i64>(), i(x, avg) * v.len() as i64, "{d}: {key}'s mean is the summary's");
            }
            assert_eq!(all("snoring").iter().sum::<i64>(), i(x, "snoring"), "{d}");
        }
        assert!(nights > 90, "{nights}");
    }

    /// An ECG is listed with the heart rate its signal beats at, and read by its id.
    #[test]
    fn an_ecg_signal_beats_at_its_listed_heart_rate_and_is_read_by_its_id() {
        let p = Person::new("UTC", true);
        let now: Timestamp = "2026-07-01T00:00:00Z".parse().unwrap();
        let api = Api { person: &p, page_size: 2, now, order: None };
        let (s, e) = (utc_midnight(Date::constant(2026, 6, 1)), utc_midnight(Date::constant(2026, 6, 30)));
        let (mut listed, mut offset) = (vec![], 0);
        loop {
            let r =
                api.answer("/v2/heart", &q(&[("action", "list"), ("startdate", &s.to_string()), ("enddate", &e.to_string()), ("offset", &offset.to_string())]));
            let b = &r["body"];
            listed.extend(b["series"].as_array().unwrap().iter().cloned());
            if b["more"] == false {
                break;
            }
            offset = b["offset"].as_u64().unwrap() as usize;
        }
        assert!(listed.len() >= 4, "{}", listed.len());
        for ecg in &listed {
            let id = ecg["ecg"]["signalid"].as_i64().unwrap();
            let got = api.answer("/v2/heart", &q(&[("action", "get"), ("signalid", &id.to_string())]));
            let b = &got["body"];
            assert_eq!((b["heart_rate"].clone(), b["model"].clone()), (ecg["heart_rate"].clone(), ecg["model"].clone()));
            let x: Vec<i64> = b["signal"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
            assert_eq!(x.len(), ECG_SECONDS * ECG_HZ);
            let peaks = (1..x.len() - 1).filter(|i| x[*i] > 600 && x[*i] >= x[i - 1] && x[*i] > x[i + 1]).count() as i64;
            let bpm = ecg["heart_rate"].as_i64().unwrap();
            assert!((peaks * 60 / ECG_SECONDS as i64 - bpm).abs() <= 2, "{peaks} beats in {ECG_SECONDS} s is not {bpm} bpm");
        }
        assert_eq!(api.answer("/v2/heart", &q(&[("action", "get"), ("signalid", "4000000001")]))["status"], 503, "no ECG has that id");
        assert_eq!(api.answer("/v2/heart", &q(&[("action", "get"), ("signalid", &i64::MAX.to_string())]))["status"], 503);
    }

    #[test]
    fn bad_parameters_and_unknown_actions_answer_like_withings() {
        let p = Person::new("UTC", false);
        let api = Api { person: &p, page_size: 10, now: Timestamp::now(), order: None };
        assert_eq!(api.answer("/v2/measure", &q(&[("action", "getactivity"), ("startdateymd", "2026-01-02"), ("enddateymd", "2026-01-01")]))["status"], 503);
        assert_eq!(
            api.answer("/v2/measure", &q(&[("action", "getactivity"), ("startdateymd", "2026-01-01"), ("enddateymd", "2026-01-02"), ("lastupdate", "1")]))
                ["status"],
            503
        );
        assert_eq!(api.answer("/v2/measure", &q(&[("action", "deletemeas")]))["status"], 2554);
        let r = api.answer("/v2/sleep", &q(&[("action", "getsummary"), ("startdateymd", "2026-01-01"), ("enddateymd", "2026-01-09")]));
        assert_eq!(r["body"]["series"], json!([]), "no sleep device, no nights");
    }
}
