//! Garmin's Personal API has no sandbox, so its sample data is built in: a deterministic person in
//! the API's own payload shapes, and [`Api`], which answers a read as the Personal API would (range
//! limits, placeholders for empty days, 204 for a night without HRV, activity paging newest first,
//! the FIT file in a ZIP, 404 off the allowlist). The sandbox answers in process; the twin serves
//! the same person over HTTP with the key exchange, token expiry, 429s and faults on top.
//!
//! One body of truth, as a real account has: an activity is its records ([`Outing`]), and its
//! listing, detail, laps, zones, FIT and its part of the day (heart rate, steps, calories,
//! intensity minutes, Body Battery) are read from them; a day's heart rate is one series
//! ([`day_heart_rate`]) whose extremes and resting rate the day's summaries say, and whose night
//! the sleep's average is taken from; a night's HRV readings span that night. Nothing is said
//! of a moment after "now": an activity is listed once it ended, and today's series stop at now.
use crate::activity_file::{self, fit::Maker, Point, Recording, Sport};
use crate::providers::day_hash as h;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Longest range each range route accepts, in days counted inclusively (reference §5).
pub const LIMITS: &[(&str, i64)] =
    &[("dailysummaries", 35), ("steps", 28), ("stress", 28), ("hydration", 28), ("bodyBattery", 31), ("dailySleepSummariesByDate", 31), ("weight", 31)];

/// The person's heart-rate zone floors (zones 1 to 5), as `heartRateZones` sends them and the
/// watch counts its zones by.
pub const ZONE_FLOORS: [u8; 5] = [120, 136, 151, 166, 180];
/// Seconds between the samples of a day's heart rate, and of its Body Battery.
const HR_STEP_S: i64 = 120;
const BB_STEP_S: i64 = 180;
/// Seconds the watch stood still at an activity's start, waiting for the start.
const STANDING_S: i64 = 6;
/// A lap a kilometre on a run, every five on a ride (the watch's auto lap).
const RUN_LAP_M: f64 = 1000.0;
const RIDE_LAP_M: f64 = 5000.0;
/// Steps a day without the activity, on a full day.
const WALK_STEPS: (u64, u64) = (4000, 6000);

#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
}

impl Person {
    pub fn new(tz_name: &str) -> Person {
        Person { tz: TimeZone::get(tz_name).unwrap_or(TimeZone::UTC) }
    }
    fn at(&self, d: Date, secs: i64) -> jiff::Zoned {
        let dt = d.to_datetime(Time::midnight()).checked_add(SignedDuration::from_secs(secs)).unwrap_or(d.to_datetime(Time::midnight()));
        dt.to_zoned(self.tz.clone()).unwrap_or_else(|_| Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC))
    }
    fn offset_ms(&self, z: &jiff::Zoned) -> i64 {
        i64::from(z.offset().seconds()) * 1000
    }
    /// The instants `d` runs from and to: local midnight to the next (23 or 25 hours on a DST day).
    fn day_span(&self, d: Date) -> (Timestamp, Timestamp) {
        (self.at(d, 0).timestamp(), self.at(d.tomorrow().unwrap_or(d), 0).timestamp())
    }
}

fn ms(z: &jiff::Zoned) -> i64 {
    z.timestamp().as_millisecond()
}

fn unit(d: Date, salt: u64) -> f64 {
    (h(d, salt) % 10_000) as f64 / 10_000.0
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Whether there was sleep on the night ending `d` (every tenth night: none, Garmin's placeholder).
pub fn slept(d: Date) -> bool {
    !h(d, 101).is_multiple_of(10)
}

/// Whether the night ending `d` has an HRV reading (every twelfth: none, 204; never a night
/// the watch recorded no sleep).
pub fn has_hrv(d: Date) -> bool {
    slept(d) && !h(d, 102).is_multiple_of(12)
}

/// When the person is in bed the night ending `d`, whether or not the watch recorded it.
fn bedtime(p: &Person, d: Date) -> (jiff::Zoned, jiff::Zoned) {
    let start = p.at(d.yesterday().unwrap_or(d), 22 * 3600 + 30 * 60 + (h(d, 20) % 3600) as i64);
    let len = 420 + (h(d, 21) % 60) as i64;
    let end = start.checked_add((len * 60).seconds()).unwrap_or(start.clone());
    (start, end)
}

/// The night ending `d` as the watch recorded it (None: it recorded no sleep).
fn night(p: &Person, d: Date) -> Option<(jiff::Zoned, jiff::Zoned)> {
    slept(d).then(|| bedtime(p, d))
}

/// The activity of one day as the watch recorded it: every summary, lap, zone and file of it,
/// and its share of the day, is read from these records.
pub struct Outing {
    pub run: bool,
    pub name: &'static str,
    pub start: jiff::Zoned,
    pub rec: Recording,
    /// A run's steps (none on a ride) and its cadence, steps a minute.
    pub steps: Option<u64>,
    pub cadence_spm: Option<f64>,
}

impl Outing {
    /// The instant after its last record.
    pub fn end(&self) -> Timestamp {
        self.rec.points.last().map_or(self.start.timestamp(), |p| p.at + SignedDuration::from_secs(1))
    }
    pub fn timer_s(&self) -> i64 {
        self.rec.points.len() as i64
    }
    pub fn moving_s(&self) -> i64 {
        self.rec.points.iter().filter(|p| p.speed_m_s.is_some_and(|v| v > 0.0)).count() as i64
    }
    pub fn distance_m(&self) -> f64 {
        self.rec.distance_m().unwrap_or(0.0)
    }
    fn hr(&self) -> Vec<u8> {
        self.rec.points.iter().filter_map(|p| p.hr_bpm).collect()
    }
    pub fn avg_hr(&self) -> i64 {
        let hr = self.hr();
        (hr.iter().map(|x| f64::from(*x)).sum::<f64>() / hr.len().max(1) as f64).round() as i64
    }
    pub fn max_hr(&self) -> i64 {
        self.hr().into_iter().max().map_or(0, i64::from)
    }
    pub fn min_hr(&self) -> i64 {
        self.hr().into_iter().min().map_or(0, i64::from)
    }
    /// Seconds in zones 0 (below the first floor) to 5.
    pub fn zones(&self) -> Vec<u32> {
        activity_file::zone_seconds(&self.rec.points, &self.rec.zone_floors_bpm)
    }
    pub fn calories(&self) -> u16 {
        self.rec.calories_kcal.unwrap_or(0)
    }
    /// Intensity minutes: moderate in zone 1, vigorous from zone 2 (as recorded listings count them).
    pub fn intensity_min(&self) -> (i64, i64) {
        let z = self.zones();
        ((f64::from(z[1]) / 60.0).round() as i64, (f64::from(z[2] + z[3] + z[4] + z[5]) / 60.0).round() as i64)
    }
    /// The highest record of each two minutes from `t`, as the day's series shows the activity.
    fn peak_in(&self, t: Timestamp, step_s: i64) -> Option<i64> {
        // A record a second from the start: the records of `[t, t + step_s)` by their index.
        let from = (t.as_second() - self.start.timestamp().as_second()).clamp(0, self.timer_s());
        let to = (t.as_second() + step_s - self.start.timestamp().as_second()).clamp(0, self.timer_s());
        self.rec.points[from as usize..to as usize].iter().filter_map(|p| p.hr_bpm).max().map(i64::from)
    }
    fn during(&self, t: Timestamp) -> bool {
        t >= self.start.timestamp() && t < self.end()
    }
}

/// The activity on `d`, if any: most days a run (with GPS) or a ride on the trainer (with power),
/// recorded a second at a time.
pub fn outing(p: &Person, d: Date) -> Option<Outing> {
    let (run, name) = kind(d)?;
    let (start, _) = span(p, d)?;
    let n = 1800 + (h(d, 52) % 1800) as i64;
    let cruise = if run { 2.9 + 0.5 * unit(d, 53) } else { 7.6 + 1.2 * unit(d, 53) };
    let t0 = start.timestamp();
    let (mut dist_cm, mut pos) = (0u64, (60.165 + 0.01 * unit(d, 54), 24.93 + 0.02 * unit(d, 55)));
    let points: Vec<Point> = (0..n)
        .map(|i| {
            let x = i as f64;
            // Speed in mm/s and distance in cm, altitude in 0.2 m: as the FIT stores them.
            let speed = if i < STANDING_S { 0.0 } else { r3(cruise * (1.0 + 0.06 * (x / 97.0).sin() + 0.03 * (x / 23.0).sin())) };
            dist_cm += (speed * 100.0).round() as u64;
            let effort = 1.0 - (-x / 210.0).exp();
            let bpm = if run { 96.0 + 52.0 * effort + 14.0 * x / n as f64 } else { 92.0 + 46.0 * effort + 10.0 * x / n as f64 };
            let bpm = bpm + 3.0 * (x / 61.0).sin() + (h(d, 400 + i as u64 / 60) % 3) as f64;
            let altitude = 20.0 + 40.0 * (std::f64::consts::PI * x / n as f64).sin() + 1.5 * (x / 23.0).sin();
            if run {
                let heading = 0.7 + 1.2 * (x / 600.0).sin();
                pos.0 += speed * heading.cos() / 111_320.0;
                pos.1 += speed * heading.sin() / (111_320.0 * pos.0.to_radians().cos());
            }
            Point {
                hr_bpm: Some(bpm.round() as u8),
                distance_m: Some(dist_cm as f64 / 100.0),
                speed_m_s: Some(speed),
                altitude_m: Some(((altitude + 500.0) * 5.0).round() / 5.0 - 500.0),
                // A ride on the trainer measures power; a run does not. A run carries GPS; the trainer does not.
                power_w: (!run).then_some((190 + (i / 300) % 3 * 20 + (h(d, 900 + i as u64 / 30) % 15) as i64) as u16),
                position: run.then_some((r7(pos.0), r7(pos.1))),
                ..Point::at(t0 + SignedDuration::from_secs(i))
            }
        })
        .collect();
    let sport = if run { Sport::Running } else { Sport::Cycling };
    let rec = Recording::every_second(sport, points, if run { RUN_LAP_M } else { RIDE_LAP_M }, (n / 4) as u16, ZONE_FLOORS.to_vec());
    let cadence = run.then(|| 160.0 + (h(d, 56) % 8) as f64);
    let mut o = Outing { run, name, start, rec, steps: None, cadence_spm: None };
    if let Some(spm) = cadence {
        let steps = (o.moving_s() as f64 * spm / 60.0).round() as u64;
        o.steps = Some(steps);
        o.cadence_spm = Some(r1(steps as f64 * 60.0 / o.moving_s().max(1) as f64));
    }
    Some(o)
}

fn r7(x: f64) -> f64 {
    (x * 1e7).round() / 1e7
}

/// Whether `d` has an activity: a run or a ride, with its name.
fn kind(d: Date) -> Option<(bool, &'static str)> {
    match h(d, 50) % 7 {
        0 | 3 => Some((false, "Evening Ride")),
        1 | 4 | 5 => Some((true, "Evening Run")),
        _ => None,
    }
}

/// When the activity on `d` starts, and the instant after its last record (a record a second).
fn span(p: &Person, d: Date) -> Option<(jiff::Zoned, Timestamp)> {
    kind(d)?;
    let start = p.at(d, 18 * 3600 + (h(d, 51) % 1800) as i64);
    let n = 1800 + (h(d, 52) % 1800) as i64;
    let end = start.timestamp() + SignedDuration::from_secs(n);
    Some((start, end))
}

/// The activity on `d` if it had ended by `now` (a watch syncs an activity once it is saved).
fn ended(p: &Person, d: Date, now: Timestamp) -> Option<Outing> {
    span(p, d).filter(|(_, end)| *end <= now).and_then(|_| outing(p, d))
}

/// The nights in bed that touch local day `d` (the one ending it and the next), and whether the
/// watch recorded each.
fn beds(p: &Person, d: Date) -> [(Timestamp, Timestamp, bool); 2] {
    [d, d.tomorrow().unwrap_or(d)].map(|n| {
        let (a, b) = bedtime(p, n);
        (a.timestamp(), b.timestamp(), slept(n))
    })
}

/// The heart rate of instant `t` (the `k`-th sample of local day `d`) without any activity: low
/// in the bed, higher by day, none while the watch was off at night.
fn resting_sample(d: Date, beds: &[(Timestamp, Timestamp, bool); 2], k: i64, t: Timestamp) -> Option<i64> {
    if h(d, 200 + k as u64).is_multiple_of(30) {
        return None;
    }
    if let Some((_, _, worn)) = beds.iter().find(|(a, b, _)| t >= *a && t < *b) {
        // The watch came off the nights it recorded no sleep.
        return worn.then(|| 46 + (3.0 * (k as f64 / 37.0).sin()).round() as i64 + (h(d, 260 + k as u64) % 3) as i64);
    }
    Some(60 + (12.0 * (k as f64 / 45.0).sin().abs()).round() as i64 + (h(d, 230 + k as u64) % 5) as i64)
}

/// A day's heart rate as the watch keeps it: a sample every two minutes from local midnight, the
/// activity's samples its highest record of their two minutes, nothing after `now`.
pub fn day_heart_rate(p: &Person, d: Date, now: Timestamp) -> Vec<(Timestamp, Option<i64>)> {
    heart_rate_with(p, d, now, ended(p, d, now).as_ref())
}

/// [`day_heart_rate`] with the day's activity (ended by `now`) already read.
fn heart_rate_with(p: &Person, d: Date, now: Timestamp, o: Option<&Outing>) -> Vec<(Timestamp, Option<i64>)> {
    let (from, to) = p.day_span(d);
    let beds = beds(p, d);
    (0..)
        .map(|k| (k, from + SignedDuration::from_secs(k * HR_STEP_S)))
        .take_while(|(_, t)| *t < to && *t <= now)
        .map(|(k, t)| {
            let during = o.and_then(|o| o.peak_in(t, HR_STEP_S));
            (t, during.or_else(|| resting_sample(d, &beds, k, t)))
        })
        .collect()
}

/// The lowest average of 30 minutes of samples (Garmin's resting heart rate).
///
/// The lowest mean of any half hour two-thirds read, kept as a running sum over the day rather
/// than a list per half hour: every daily summary reads eight days of these (its own and the week's).
fn resting_of(values: &[(Timestamp, Option<i64>)]) -> Option<i64> {
    let per = (1800 / HR_STEP_S) as usize;
    let (mut sum, mut n, mut lowest) = (0i64, 0usize, None::<f64>);
    for (i, x) in values.iter().enumerate() {
        if let Some(v) = x.1 {
            sum += v;
            n += 1;
        }
        if let Some(v) = i.checked_sub(per).and_then(|out| values[out].1) {
            sum -= v;
            n -= 1;
        }
        if i + 1 >= per && n * 3 >= per * 2 {
            let mean = sum as f64 / n as f64;
            lowest = Some(lowest.map_or(mean, |l| l.min(mean)));
        }
    }
    lowest.map(|x| x.round() as i64)
}

/// The resting heart rate of `d`: its lowest half hour lies in the night, so the activity (which
/// only raises the rate) is left out of the computation.
fn resting_hr(p: &Person, d: Date) -> Option<i64> {
    resting_of(&resting_series(p, d))
}

/// The day's samples without its activity (what the night and the resting rate are read from).
fn resting_series(p: &Person, d: Date) -> Vec<(Timestamp, Option<i64>)> {
    let (from, to) = p.day_span(d);
    let beds = beds(p, d);
    (0..).map(|k| (k, from + SignedDuration::from_secs(k * HR_STEP_S))).take_while(|(_, t)| *t < to).map(|(k, t)| (t, resting_sample(d, &beds, k, t))).collect()
}

/// The mean resting heart rate of the seven days to `d`.
fn resting_7d(p: &Person, d: Date) -> Option<i64> {
    let v: Vec<i64> = (0..7).filter_map(|k| d.checked_sub(k.days()).ok()).filter_map(|x| resting_hr(p, x)).collect();
    (!v.is_empty()).then(|| (v.iter().sum::<i64>() as f64 / v.len() as f64).round() as i64)
}

/// The day's steps by `now`: walking (in proportion to the day gone by) and a run's.
fn steps_of(p: &Person, d: Date, now: Timestamp) -> (u64, Option<Outing>, u64) {
    let (from, to) = p.day_span(d);
    let share = ((now.min(to).as_second() - from.as_second()) as f64 / (to.as_second() - from.as_second()).max(1) as f64).clamp(0.0, 1.0);
    let walk = ((WALK_STEPS.0 + h(d, 1) % WALK_STEPS.1) as f64 * share).round() as u64;
    let o = ended(p, d, now);
    let total = walk + o.as_ref().and_then(|o| o.steps).unwrap_or(0);
    (walk, o, total)
}

fn day_distance(walk: u64, o: Option<&Outing>) -> f64 {
    r2(walk as f64 * 0.78 + o.filter(|o| o.run).map_or(0.0, Outing::distance_m))
}

pub fn daily_summary(p: &Person, d: Date, now: Timestamp) -> Value {
    let (walk, o, steps) = steps_of(p, d, now);
    let hr = heart_rate_with(p, d, now, o.as_ref());
    let values: Vec<i64> = hr.iter().filter_map(|x| x.1).collect();
    let active = walk / 20 + o.as_ref().map_or(0, |o| u64::from(o.calories()));
    let (moderate, vigorous) = o.as_ref().map_or((0, 0), Outing::intensity_min);
    let stress = stress(d)["values"]["overallStressLevel"].as_i64().unwrap_or(-1);
    let bb: Vec<i64> = body_battery_levels(p, d, now, o.as_ref()).into_iter().map(|x| x.1).collect();
    let spo2 = spo2(d);
    json!({
        "calendarDate": d.to_string(), "totalSteps": steps, "dailyStepGoal": 8000, "totalDistanceMeters": day_distance(walk, o.as_ref()),
        "totalKilocalories": 1700 + active, "activeKilocalories": active, "bmrKilocalories": 1700,
        "restingHeartRate": resting_of(&hr), "minHeartRate": values.iter().min(), "maxHeartRate": values.iter().max(),
        "lastSevenDaysAvgRestingHeartRate": resting_7d(p, d), "averageStressLevel": stress,
        "maxStressLevel": if stress < 0 { -1 } else { stress + 55 + (h(d, 4) % 15) as i64 },
        "bodyBatteryHighestValue": bb.iter().max(), "bodyBatteryLowestValue": bb.iter().min(),
        "moderateIntensityMinutes": moderate + (h(d, 6) % 40) as i64, "vigorousIntensityMinutes": vigorous, "floorsAscended": h(d, 8) % 15,
        "avgWakingRespirationValue": 14.0, "averageSpo2": spo2["averageSpO2"], "lowestSpo2": spo2["lowestSpO2"],
    })
}

pub fn steps(p: &Person, d: Date, now: Timestamp) -> Value {
    let (walk, o, s) = steps_of(p, d, now);
    json!({"calendarDate": d.to_string(), "totalSteps": s, "stepGoal": 8000, "totalDistance": day_distance(walk, o.as_ref())})
}

pub fn stress(d: Date) -> Value {
    // Every ninth day the watch measured nothing: Garmin's −1.
    let level = if h(d, 9).is_multiple_of(9) { -1 } else { 20 + (h(d, 4) % 20) as i64 };
    json!({"calendarDate": d.to_string(), "values": {"overallStressLevel": level, "restStressDuration": 30240, "lowStressDuration": 18060,
        "mediumStressDuration": 9300, "highStressDuration": 2220}})
}

/// A day's water, flat as recorded (garth's hydration cassette): `valueInML` and `goalInML`.
pub fn hydration(d: Date) -> Value {
    json!({"calendarDate": d.to_string(), "valueInML": 1500 + h(d, 10) % 1000, "goalInML": 2500})
}

/// `2026-01-07T06:00:00.0`: how Garmin writes a time in its `*TimestampGMT` / `*TimestampLocal` strings.
fn stamp(z: &jiff::Zoned) -> String {
    z.strftime("%Y-%m-%dT%H:%M:%S.0").to_string()
}

/// The same instant as a GMT stamp.
fn gmt_stamp(z: &jiff::Zoned) -> String {
    stamp(&z.timestamp().to_zoned(TimeZone::UTC))
}

/// A day's heart rate ([`day_heart_rate`]) as `dailyHeartRate` sends it, its resting, lowest and
/// highest rate read from its own samples.
pub fn heart_rate(p: &Person, d: Date, now: Timestamp) -> Value {
    let series = day_heart_rate(p, d, now);
    let values: Vec<Value> = series.iter().map(|(t, bpm)| json!([t.as_millisecond(), bpm])).collect();
    let bpm: Vec<i64> = series.iter().filter_map(|x| x.1).collect();
    let (start, end) = (p.at(d, 0), p.at(d.tomorrow().unwrap_or(d), 0));
    json!({"userProfilePK": 1_234_567, "calendarDate": d.to_string(), "startTimestampGMT": gmt_stamp(&start), "endTimestampGMT": gmt_stamp(&end),
        "startTimestampLocal": stamp(&start), "endTimestampLocal": stamp(&end), "restingHeartRate": resting_of(&series),
        "minHeartRate": bpm.iter().min(), "maxHeartRate": bpm.iter().max(),
        "lastSevenDaysAvgRestingHeartRate": resting_7d(p, d), "heartRateValueDescriptors": [{"key": "timestamp", "index": 0}, {"key": "heartrate", "index": 1}],
        "heartRateValues": values})
}

/// Body Battery every three minutes from local midnight until `now`: it charges while the person
/// sleeps, drains by day, and faster during the activity.
fn body_battery_levels(p: &Person, d: Date, now: Timestamp, o: Option<&Outing>) -> Vec<(Timestamp, i64)> {
    let (from, to) = p.day_span(d);
    let nights: Vec<(Timestamp, Timestamp)> =
        [d, d.tomorrow().unwrap_or(d)].into_iter().filter_map(|n| night(p, n)).map(|(a, b)| (a.timestamp(), b.timestamp())).collect();
    let mut level = 25.0 + (h(d, 5) % 20) as f64;
    (0..)
        .map(|k| from + SignedDuration::from_secs(k * BB_STEP_S))
        .take_while(|t| *t < to && *t <= now)
        .map(|t| {
            let out = (t, level.round() as i64);
            let step = if nights.iter().any(|(a, b)| t >= *a && t < *b) {
                0.45
            } else if o.is_some_and(|o| o.during(t)) {
                -1.0
            } else {
                -0.2
            };
            level = (level + step).clamp(5.0, 100.0);
            out
        })
        .collect()
}

pub fn body_battery(p: &Person, d: Date, now: Timestamp) -> Value {
    let o = ended(p, d, now);
    let levels = body_battery_levels(p, d, now, o.as_ref());
    let values: Vec<Value> = levels.iter().map(|(t, l)| json!([t.as_millisecond(), l])).collect();
    let charged: i64 = levels.windows(2).map(|w| (w[1].1 - w[0].1).max(0)).sum();
    let drained: i64 = levels.windows(2).map(|w| (w[0].1 - w[1].1).max(0)).sum();
    let level_at = |t: Timestamp| levels.iter().take_while(|x| x.0 <= t).last().map_or(0, |x| x.1);
    let events: Vec<Value> = o
        .map(|o| {
            json!({"eventType": "ACTIVITY", "eventStartTimeGmt": o.start.timestamp().to_string(), "timezoneOffset": p.offset_ms(&o.start),
            "durationInMilliseconds": o.timer_s() * 1000, "bodyBatteryImpact": level_at(o.end()) - level_at(o.start.timestamp()),
            "activityName": o.name, "activityType": if o.run { "running" } else { "cycling" }, "activityId": activity_id(d)})
        })
        .into_iter()
        .collect();
    json!({"date": d.to_string(), "charged": charged, "drained": drained, "bodyBatteryValuesArray": values, "bodyBatteryActivityEvent": events})
}

pub fn spo2(d: Date) -> Value {
    if h(d, 11).is_multiple_of(8) {
        return Value::Null;
    }
    // The lowest reading of a day is the night's; a night the watch did not record has no sleep average.
    json!({"calendarDate": d.to_string(), "averageSpO2": 95.0, "lowestSpO2": 88 + h(d, 12) % 4, "latestSpO2": 96, "lastSevenDaysAvgSpO2": 95.4,
        "avgSleepSpO2": if slept(d) { json!(94.0) } else { Value::Null }})
}

/// The night ending `d`: a summary with its stage levels, or Garmin's placeholder. Its heart rate
/// is the mean of the day series' samples in it, its SpO2 the day's.
pub fn sleep(p: &Person, d: Date) -> Value {
    let Some((start, _)) = night(p, d) else {
        return no_sleep(d);
    };
    let mut levels = vec![];
    let (mut t, mut totals) = (0i64, [0i64; 4]);
    let len = 420 + (h(d, 21) % 60) as i64;
    let mut k = 0;
    while t < len {
        let (dur, lvl) = [(40, 1), (30, 0), (25, 1), (20, 2), (5, 3)][k % 5];
        let dur = dur.min(len - t);
        let a = start.timestamp() + (t * 60).seconds();
        let b = a + (dur * 60).seconds();
        let fmt = |x: Timestamp| x.to_zoned(TimeZone::UTC).strftime("%Y-%m-%dT%H:%M:%S.0").to_string();
        levels.push(json!({"startGMT": fmt(a), "endGMT": fmt(b), "activityLevel": lvl as f64}));
        totals[lvl] += dur * 60;
        t += dur;
        k += 1;
    }
    let end = start.checked_add((len * 60).seconds()).unwrap_or(start.clone());
    let o2 = spo2(d);
    json!({
        "dailySleepDTO": {
            "id": ms(&start), "calendarDate": d.to_string(), "sleepTimeSeconds": totals[0] + totals[1] + totals[2], "napTimeSeconds": 0,
            "sleepStartTimestampGMT": ms(&start), "sleepEndTimestampGMT": ms(&end),
            "sleepStartTimestampLocal": ms(&start) + p.offset_ms(&start), "sleepEndTimestampLocal": ms(&end) + p.offset_ms(&end),
            "deepSleepSeconds": totals[0], "lightSleepSeconds": totals[1], "remSleepSeconds": totals[2], "awakeSleepSeconds": totals[3],
            "awakeCount": 2, "averageSpO2Value": o2["avgSleepSpO2"], "lowestSpO2Value": o2["lowestSpO2"], "averageRespirationValue": 14.0,
            "avgHeartRate": sleep_hr(p, d, (start.timestamp(), end.timestamp())),
            "avgSleepStress": 17.0, "sleepScores": {"overall": {"value": 60 + h(d, 22) % 35, "qualifierKey": "GOOD"}},
        },
        "sleepLevels": levels,
    })
}

/// Garmin's placeholder for a night without sleep.
fn no_sleep(d: Date) -> Value {
    json!({"dailySleepDTO": {"id": null, "calendarDate": d.to_string(), "sleepTimeSeconds": null}})
}

/// The mean of the heart-rate samples in `[a, b)` (a night spans two local days; no activity is in it).
fn sleep_hr(p: &Person, d: Date, (a, b): (Timestamp, Timestamp)) -> Option<f64> {
    let v: Vec<i64> =
        [d.yesterday().unwrap_or(d), d].into_iter().flat_map(|day| resting_series(p, day)).filter(|(t, _)| *t >= a && *t < b).filter_map(|x| x.1).collect();
    (!v.is_empty()).then(|| (v.iter().sum::<i64>() as f64 / v.len() as f64).round())
}

/// A night's start, end and HRV readings (each with its instant).
type HrvNight = (jiff::Zoned, jiff::Zoned, Vec<(jiff::Zoned, i64)>);

/// The night's HRV readings, every five minutes of the night ending `d`.
fn hrv_readings(p: &Person, d: Date) -> Option<HrvNight> {
    if !has_hrv(d) {
        return None;
    }
    let (start, end) = night(p, d)?;
    let readings = (0..)
        .map(|i| (i, start.checked_add((i * 5).minutes()).unwrap_or(start.clone())))
        .take_while(|(_, z)| *z < end)
        .map(|(i, z)| (z, 40 + (h(d, 300 + i as u64) % 25) as i64))
        .collect();
    Some((start, end, readings))
}

fn mean(v: &[i64]) -> f64 {
    v.iter().sum::<i64>() as f64 / v.len().max(1) as f64
}

/// The night ending `d`'s HRV, or None (Garmin: 204): its average and highest five minutes read
/// from its readings, its weekly average from the seven nights to `d`.
pub fn hrv(p: &Person, d: Date) -> Option<Value> {
    let (start, end, readings) = hrv_readings(p, d)?;
    let fmt = |z: &jiff::Zoned| z.timestamp().to_zoned(TimeZone::UTC).strftime("%Y-%m-%dT%H:%M:%S.0").to_string();
    let values: Vec<i64> = readings.iter().map(|r| r.1).collect();
    let nightly: Vec<i64> = (0..7)
        .filter_map(|k| d.checked_sub(k.days()).ok())
        .filter_map(|n| hrv_readings(p, n))
        .map(|(_, _, r)| mean(&r.iter().map(|x| x.1).collect::<Vec<_>>()).round() as i64)
        .collect();
    let weekly = mean(&nightly).round() as i64;
    let status = if (43..=56).contains(&weekly) { "BALANCED" } else { "UNBALANCED" };
    let readings: Vec<Value> = readings
        .iter()
        .map(|(z, v)| json!({"hrvValue": v, "readingTimeGMT": fmt(z), "readingTimeLocal": z.strftime("%Y-%m-%dT%H:%M:%S.0").to_string()}))
        .collect();
    Some(json!({
        "userProfilePk": 1_234_567,
        "hrvSummary": {"calendarDate": d.to_string(), "weeklyAvg": weekly, "lastNightAvg": mean(&values).round() as i64,
            "lastNight5MinHigh": values.iter().max(),
            "baseline": {"lowUpper": 40, "balancedLow": 43, "balancedUpper": 56, "markerValue": 0.55}, "status": status, "feedbackPhrase": "HRV_BALANCED_2",
            "createTimeStamp": fmt(&end)},
        "hrvReadings": readings,
        "startTimestampGMT": fmt(&start), "endTimestampGMT": fmt(&end), "startTimestampLocal": stamp(&start), "endTimestampLocal": stamp(&end),
        "sleepStartTimestampGMT": fmt(&start), "sleepEndTimestampGMT": fmt(&end), "sleepStartTimestampLocal": stamp(&start), "sleepEndTimestampLocal": stamp(&end),
    }))
}

pub fn weigh_in(p: &Person, d: Date) -> Option<Value> {
    if !h(d, 40).is_multiple_of(3) {
        return None;
    }
    let t = p.at(d, 7 * 3600);
    let g = 72_000.0 + 800.0 * unit(d, 41);
    // As recorded (garth's weight cassette): `date` is the local wall clock written as epoch ms, the
    // instant is `timestampGMT`.
    Some(json!({"samplePk": (d - Date::constant(2000, 1, 1)).get_days() as i64 * 7, "date": ms(&t) + p.offset_ms(&t), "timestampGMT": ms(&t),
        "calendarDate": d.to_string(), "weight": g,
        "bmi": 22.4, "bodyFat": 18.5, "bodyWater": 55.0, "boneMass": 3100, "muscleMass": 33_000, "physiqueRating": null, "visceralFat": null,
        "metabolicAge": null, "sourceType": "INDEX_SCALE", "weightDelta": 200.0}))
}

/// A range of weigh-ins as the range route sends them (garth's weight cassette): a summary per day
/// with weigh-ins, newest first, each with its latest and all its metrics; the range's average; and
/// the weigh-ins just before and after it (all null when there is none).
pub fn weight_range(p: &Person, days: &[Date]) -> Value {
    let days: Vec<(Date, Value)> = days.iter().rev().filter_map(|d| Some((*d, weigh_in(p, *d)?))).collect();
    let g = |w: &Value, k: &str| w[k].as_f64().unwrap_or(0.0);
    let summaries: Vec<Value> = days
        .iter()
        .map(|(d, w)| json!({"summaryDate": d.to_string(), "numOfWeightEntries": 1, "minWeight": w["weight"], "maxWeight": w["weight"], "latestWeight": w, "allWeightMetrics": [w]}))
        .collect();
    let n = days.len().max(1) as f64;
    let avg = |k: &str| json!(days.iter().map(|(_, w)| g(w, k)).sum::<f64>() / n);
    let empty = json!({"samplePk": null, "date": null, "calendarDate": null, "weight": null, "bmi": null, "bodyFat": null, "bodyWater": null,
        "boneMass": null, "muscleMass": null, "physiqueRating": null, "visceralFat": null, "metabolicAge": null, "sourceType": null, "timestampGMT": null,
        "weightDelta": null});
    let first = days.last().map(|(d, _)| *d);
    let before = first.and_then(|f| (1..40).filter_map(|k| f.checked_sub(k.days()).ok()).find_map(|d| weigh_in(p, d)));
    let span = |d: Option<&Date>, end: bool| d.map(|d| ms(&p.at(*d, if end { 86_399 } else { 0 })));
    json!({
        "dailyWeightSummaries": summaries,
        "totalAverage": {"from": span(days.last().map(|x| &x.0), false), "until": span(days.first().map(|x| &x.0), true), "weight": avg("weight"),
            "bmi": avg("bmi"), "bodyFat": avg("bodyFat"), "bodyWater": avg("bodyWater"), "boneMass": avg("boneMass"), "muscleMass": avg("muscleMass"),
            "physiqueRating": null, "visceralFat": null, "metabolicAge": null},
        "previousDateWeight": before.unwrap_or_else(|| empty.clone()),
        "nextDateWeight": empty,
    })
}

pub fn activity_id(d: Date) -> u64 {
    20_000_000_000 + (d - Date::constant(2000, 1, 1)).get_days() as u64 * 10
}

/// The activity on `d`, if any, as the search lists it: every number read from its records.
pub fn activity(p: &Person, d: Date) -> Option<Value> {
    outing(p, d).map(|o| listing(d, &o))
}

fn listing(d: Date, o: &Outing) -> Value {
    let fmt = |z: &jiff::Zoned| z.strftime("%Y-%m-%d %H:%M:%S").to_string();
    let gmt = o.start.timestamp().to_zoned(TimeZone::UTC);
    let z = o.zones();
    let (up, down) = activity_file::ascent_descent(&o.rec.points);
    let max_speed = o.rec.points.iter().filter_map(|p| p.speed_m_s).fold(0.0, f64::max);
    let mut a = json!({
        "activityId": activity_id(d), "activityName": o.name, "startTimeLocal": fmt(&o.start), "startTimeGMT": fmt(&gmt),
        "activityType": {"typeKey": if o.run { "running" } else { "cycling" }}, "distance": r2(o.distance_m()), "duration": o.timer_s() as f64,
        // The timer never paused: elapsed time is the timer's.
        "elapsedDuration": o.timer_s() as f64, "movingDuration": o.moving_s() as f64,
        // Speeds to the centimetre a second, as Garmin's app shows them.
        "averageSpeed": r2(o.distance_m() / o.timer_s().max(1) as f64), "maxSpeed": r2(max_speed), "averageHR": o.avg_hr(), "maxHR": o.max_hr(),
        "calories": o.calories(), "elevationGain": r1(up), "elevationLoss": r1(down),
        "aerobicTrainingEffect": 3.2, "anaerobicTrainingEffect": 1.0, "activityTrainingLoad": 120.0, "lapCount": o.rec.laps.len(),
        "hrTimeInZone_1": z[1] as f64, "hrTimeInZone_2": z[2] as f64, "hrTimeInZone_3": z[3] as f64, "hrTimeInZone_4": z[4] as f64, "hrTimeInZone_5": z[5] as f64,
    });
    if let (Value::Object(a), Value::Object(more)) = (&mut a, activity_more(o, up, down, max_speed)) {
        a.extend(more);
    }
    a
}

/// What the search listing sends beside an activity's basics (garth's listing cassette).
fn activity_more(o: &Outing, up: f64, down: f64, max_speed: f64) -> Value {
    let (moderate, vigorous) = o.intensity_min();
    let np = activity_file::normalized_power(&o.rec.points);
    let watts: Vec<f64> = o.rec.points.iter().filter_map(|p| p.power_w.map(f64::from)).collect();
    json!({
        "eventType": {"typeId": 9, "typeKey": "uncategorized", "sortOrder": 10}, "moderateIntensityMinutes": moderate, "vigorousIntensityMinutes": vigorous,
        "steps": o.steps, "averageRunningCadenceInStepsPerMinute": o.cadence_spm,
        "avgPower": (!watts.is_empty()).then(|| (watts.iter().sum::<f64>() / watts.len() as f64).round()), "normPower": np.map(f64::round),
        "splitSummaries": [split(o, up, down, max_speed)],
    })
}

/// The whole activity as Garmin's one typed split of it.
fn split(o: &Outing, up: f64, down: f64, max_speed: f64) -> Value {
    json!({"noOfSplits": 1, "totalAscent": r1(up), "duration": o.moving_s() as f64, "splitType": if o.run { "RWD_RUN" } else { "RWD_RIDE" },
        "numClimbSends": 0, "maxElevationGain": r1(up), "averageElevationGain": r1(up), "maxDistance": o.distance_m() as i64, "distance": r2(o.distance_m()),
        "averageSpeed": r2(o.distance_m() / o.moving_s().max(1) as f64), "maxSpeed": r2(max_speed), "numFalls": 0, "elevationLoss": r1(down)})
}

/// The activity's original file as Garmin sends it: a ZIP holding `<id>_ACTIVITY.fit`, the FIT of
/// the very records its listing is read from.
pub fn activity_zip(p: &Person, d: Date) -> Option<Vec<u8>> {
    use std::io::Write;
    let o = outing(p, d)?;
    let fit = activity_file::fit::write(&o.rec, Maker::Garmin, o.start.offset().seconds());
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    z.start_file(format!("{}_ACTIVITY.fit", activity_id(d)), zip::write::SimpleFileOptions::default()).ok()?;
    z.write_all(&fit).ok()?;
    Some(z.finish().ok()?.into_inner())
}

/// The activity service's view of the activity on `d`: its summary, splits and (for rides) a workout.
pub fn activity_detail(p: &Person, d: Date) -> Option<(Value, Value)> {
    let o = outing(p, d)?;
    let a = listing(d, &o);
    let t = |k: &str| a[k].as_str().unwrap_or_default().replace(' ', "T") + ".0";
    let detail = json!({
        "activityId": a["activityId"], "activityName": a["activityName"], "activityTypeDTO": a["activityType"],
        "summaryDTO": {"startTimeLocal": t("startTimeLocal"), "startTimeGMT": t("startTimeGMT"), "distance": a["distance"], "duration": a["duration"],
            "movingDuration": a["movingDuration"], "elapsedDuration": a["elapsedDuration"], "averageSpeed": a["averageSpeed"], "averageHR": a["averageHR"],
            "maxHR": a["maxHR"], "minHR": o.min_hr(), "calories": a["calories"], "elevationGain": a["elevationGain"], "elevationLoss": a["elevationLoss"],
            "trainingEffect": a["aerobicTrainingEffect"], "anaerobicTrainingEffect": a["anaerobicTrainingEffect"], "activityTrainingLoad": a["activityTrainingLoad"]},
        "metadataDTO": {"lapCount": a["lapCount"], "hasSplits": true},
        "splitSummaries": a["splitSummaries"],
    });
    let workouts = if o.run { json!([]) } else { json!([{"workoutId": 555, "workoutName": "Sweet spot 3x10", "sportType": {"sportTypeKey": "cycling"}}]) };
    Some((detail, workouts))
}

/// The food logged on `d` (most days nothing: Garmin's empty object).
pub fn food(d: Date) -> Value {
    if !h(d, 60).is_multiple_of(3) {
        return json!({});
    }
    json!({"calendarDate": d.to_string(), "dailyNutritionContent": {"calories": 2150, "carbs": 260, "protein": 110, "fat": 70},
        "dailyNutritionGoals": {"calories": 2400}, "mealDetails": [{"meal": {"mealName": "Breakfast"}, "mealNutritionContent": {"calories": 520}}]})
}

/// Cycles that started in `[a, b]`: every 28 days from 2026-01-03, the ones after today predicted.
pub fn cycles(a: Date, b: Date, today: Date) -> Value {
    let first = Date::constant(2026, 1, 3);
    let list: Vec<Value> = days(a, b)
        .into_iter()
        .filter(|d| (*d - first).get_days().rem_euclid(28) == 0)
        .map(|d| json!({"startDate": d.to_string(), "cycleLength": 28, "periodLength": 5, "predictedCycle": d > today}))
        .collect();
    json!({"cycleSummaries": list})
}

/// Fitness age on `d`, its resting-heart-rate component the day's resting rate.
pub fn fitness_age(p: &Person, d: Date) -> Value {
    json!({"calendarDate": d.to_string(), "chronologicalAge": 41, "fitnessAge": 35.2, "achievableFitnessAge": 33.0, "components": {"rhr": {"value": resting_hr(p, d)}}})
}

/// The zones the watch counts an activity's heart rate in ([`ZONE_FLOORS`]).
pub fn hr_zones() -> Value {
    let [z1, z2, z3, z4, z5] = ZONE_FLOORS;
    json!([{"sport": "DEFAULT", "trainingMethod": "HR_RESERVE", "restingHeartRateUsed": 52, "maxHeartRateUsed": 188, "lactateThresholdHeartRateUsed": 168,
        "zone1Floor": z1, "zone2Floor": z2, "zone3Floor": z3, "zone4Floor": z4, "zone5Floor": z5}])
}

/// The profile's settings, its weight the latest weigh-in by `today`.
pub fn settings(p: &Person, today: Date) -> Value {
    let weight = (0..60).filter_map(|k| today.checked_sub(k.days()).ok()).find_map(|d| weigh_in(p, d)).map(|w| w["weight"].clone());
    json!({"id": 1, "userData": {"gender": "FEMALE", "weight": weight, "height": 168.0, "birthDate": "1985-04-02", "measurementSystem": "metric",
        "vo2MaxRunning": 51.0, "vo2MaxCycling": 48.0, "lactateThresholdSpeed": 0.3571, "lactateThresholdHeartRate": 168},
        "userSleep": {"sleepTime": 80_100, "wakeTime": 23_400}})
}

/// What a read answers.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

fn json_answer(v: Value) -> Answer {
    Answer { status: 200, content_type: "application/json", body: v.to_string().into_bytes() }
}

fn status(s: u16, msg: &str) -> Answer {
    Answer { status: s, content_type: "application/json", body: if msg.is_empty() { vec![] } else { json!({"message": msg}).to_string().into_bytes() } }
}

/// The person answering reads as the Personal API would, "now" being `now`.
pub struct Api<'a> {
    pub person: &'a Person,
    pub now: Timestamp,
}

fn days(from: Date, to: Date) -> Vec<Date> {
    let mut out = vec![];
    let mut d = from;
    while d <= to {
        out.push(d);
        let Ok(n) = d.tomorrow() else { break };
        d = n;
    }
    out
}

impl Api<'_> {
    fn today(&self) -> Date {
        self.now.to_zoned(self.person.tz.clone()).date()
    }
    /// The inclusive days of a range route, up to today, or the route's refusal.
    fn range(&self, route: &str, from: Option<&str>, to: Option<&str>) -> Result<Vec<Date>, Answer> {
        let (Some(a), Some(b)) = (from.and_then(|s| s.parse::<Date>().ok()), to.and_then(|s| s.parse::<Date>().ok())) else {
            return Err(status(400, "start and end dates are required as YYYY-MM-DD"));
        };
        let limit = LIMITS.iter().find(|(r, _)| *r == route).map_or(28, |l| l.1);
        if b < a || (b - a).get_days() as i64 + 1 > limit {
            return Err(status(400, &format!("the range may hold at most {limit} days")));
        }
        Ok(days(a, b.min(self.today())))
    }

    /// Answer `GET path?q` as the Personal API would.
    pub fn answer(&self, path: &str, q: &HashMap<String, String>) -> Answer {
        let p = self.person;
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let qs = |k: &str| q.get(k).map(String::as_str);
        let day_of = |s: &str| s.parse::<Date>().ok();
        let day = |s: &str| day_of(s).filter(|d| *d <= self.today());
        let now = self.now;
        let each = |r: Result<Vec<Date>, Answer>, f: &dyn Fn(Date) -> Value| match r {
            Ok(ds) => json_answer(Value::Array(ds.into_iter().map(f).collect())),
            Err(a) => a,
        };
        match segs.as_slice() {
            ["usersummary-service", "v2", "dailysummaries"] => {
                each(self.range("dailysummaries", qs("startDate"), qs("endDate")), &|d| daily_summary(p, d, now))
            }
            ["usersummary-service", "stats", "steps", "daily", a, b] => each(self.range("steps", Some(a), Some(b)), &|d| steps(p, d, now)),
            ["usersummary-service", "stats", "stress", "daily", a, b] => each(self.range("stress", Some(a), Some(b)), &stress),
            ["usersummary-service", "stats", "hydration", "daily", a, b] => each(self.range("hydration", Some(a), Some(b)), &hydration),
            ["wellness-service", "wellness", "bodyBattery", "reports", "daily"] => {
                each(self.range("bodyBattery", qs("startDate"), qs("endDate")), &|d| body_battery(p, d, now))
            }
            ["sleep-service", "sleep", "dailySleepSummariesByDate"] => {
                each(self.range("dailySleepSummariesByDate", qs("startDate"), qs("endDate")), &|d| {
                    // A night is read once it ended.
                    if bedtime(p, d).1.timestamp() <= now {
                        sleep(p, d)
                    } else {
                        no_sleep(d)
                    }
                })
            }
            ["weight-service", "weight", "range", a, b] => match self.range("weight", Some(a), Some(b)) {
                // A weigh-in is at seven in the morning: today's only once it happened.
                Ok(ds) => json_answer(weight_range(p, &ds.into_iter().filter(|d| p.at(*d, 7 * 3600).timestamp() <= now).collect::<Vec<_>>())),
                Err(e) => e,
            },
            ["wellness-service", "wellness", "dailyHeartRate"] => match qs("date").and_then(day) {
                Some(d) => json_answer(heart_rate(p, d, now)),
                None => json_answer(Value::Null),
            },
            ["wellness-service", "wellness", "daily", "spo2", d] => json_answer(day(d).map(spo2).unwrap_or(Value::Null)),
            // A night is read once it ended.
            ["hrv-service", "hrv", d] => match day(d).filter(|d| bedtime(p, *d).1.timestamp() <= now).and_then(|d| hrv(p, d)) {
                Some(v) => json_answer(v),
                None => status(204, ""),
            },
            ["nutrition-service", "food", "logs", d] => json_answer(day(d).map(food).unwrap_or(json!({}))),
            // The calendar reaches past today: Garmin lists the cycles it predicts.
            ["periodichealth-service", "menstrualcycle", "calendar", a, b] => match self.range("menstrual", Some(a), Some(b)) {
                Ok(_) => json_answer(day_of(a).zip(day_of(b)).map_or(json!({"cycleSummaries": []}), |(x, y)| cycles(x, y, self.today()))),
                Err(e) => e,
            },
            ["fitnessage-service", "fitnessage", d] => json_answer(day(d).map(|d| fitness_age(p, d)).unwrap_or(json!({}))),
            ["biometric-service", "heartRateZones"] => json_answer(hr_zones()),
            ["userprofile-service", "userprofile", "settings"] => json_answer(settings(p, self.today())),
            ["activitylist-service", "activities", "search", "activities"] => {
                let (from, to) = (qs("startDate").and_then(|s| s.parse().ok()), qs("endDate").and_then(|s| s.parse().ok()));
                let (from, to) = (from.unwrap_or(Date::constant(2020, 1, 1)), to.unwrap_or(self.today()).min(self.today()));
                let start: usize = qs("start").and_then(|s| s.parse().ok()).unwrap_or(0);
                let limit: usize = qs("limit").and_then(|s| s.parse().ok()).unwrap_or(20).min(1000);
                // Newest first, as Garmin lists them; each activity once it ended.
                let listed = days(from, to).into_iter().rev().filter(|d| self.activity_exists(activity_id(*d)));
                json_answer(Value::Array(listed.skip(start).take(limit).filter_map(|d| activity(p, d)).collect()))
            }
            ["activity-service", "activity", id, rest @ ..] => {
                let found = id.parse::<u64>().ok().filter(|i| self.activity_exists(*i)).and_then(|i| self.activity_day(i)).and_then(|d| activity_detail(p, d));
                match (found, rest) {
                    (Some((detail, _)), []) => json_answer(detail),
                    (Some((_, workouts)), ["workouts"]) => json_answer(workouts),
                    _ => status(404, "not found"),
                }
            }
            ["download-service", "files", "activity", id] => {
                match id.parse::<u64>().ok().filter(|i| self.activity_exists(*i)).and_then(|i| self.activity_day(i)).and_then(|d| activity_zip(p, d)) {
                    Some(body) => Answer { status: 200, content_type: "application/zip", body },
                    None => status(404, "not found"),
                }
            }
            // Everything off the Personal API's allowlist (training readiness, records, …).
            _ => status(404, ""),
        }
    }

    fn activity_day(&self, id: u64) -> Option<Date> {
        Date::constant(2000, 1, 1).checked_add((((id.saturating_sub(20_000_000_000)) / 10) as i64).days()).ok()
    }

    fn activity_exists(&self, id: u64) -> bool {
        self.activity_day(id).is_some_and(|d| activity_id(d) == id && d <= self.today() && span(self.person, d).is_some_and(|(_, end)| end <= self.now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The running sum is the definition: the lowest mean over every half hour (`windows`) whose
    /// samples are two-thirds read, on whole days, days cut short by `now`, and days with gaps.
    #[test]
    fn the_resting_rate_is_the_lowest_half_hour_two_thirds_read() {
        let by_definition = |values: &[(Timestamp, Option<i64>)]| {
            let per = (1800 / HR_STEP_S) as usize;
            values
                .windows(per)
                .filter_map(|w| {
                    let v: Vec<i64> = w.iter().filter_map(|x| x.1).collect();
                    (v.len() * 3 >= per * 2).then(|| v.iter().sum::<i64>() as f64 / v.len() as f64)
                })
                .reduce(f64::min)
                .map(|x| x.round() as i64)
        };
        let p = Person::new("Europe/Berlin");
        let mut d = Date::constant(2026, 1, 1);
        while d < Date::constant(2026, 3, 1) {
            let mut day = day_heart_rate(&p, d, Timestamp::MAX);
            assert_eq!(resting_of(&day), by_definition(&day), "{d}");
            // Gaps of every length, so some half hours fall under two-thirds read.
            for (i, x) in day.iter_mut().enumerate() {
                if (i * 7 + d.day() as usize) % 11 < (i / 50) % 9 {
                    x.1 = None;
                }
            }
            assert_eq!(resting_of(&day), by_definition(&day), "{d} with gaps");
            assert_eq!(resting_of(&day[..20]), by_definition(&day[..20]), "{d} cut short");
            assert_eq!(resting_of(&day[..10]), None, "{d}: shorter than half an hour");
            d = d.tomorrow().unwrap();
        }
    }

    /// The resting rate is read from the day without its activity (cheaper, and the seven-day
    /// average reads seven days of it): that is the same number, since an activity only raises
    /// the rate and the lowest half hour is the night's; and no activity reaches into a night.
    #[test]
    fn the_resting_rate_is_the_whole_days_and_no_activity_is_in_bed() {
        let p = Person::new("America/Chicago");
        let mut d = Date::constant(2026, 3, 1);
        let mut activities = 0;
        while d < Date::constant(2026, 5, 1) {
            let whole = day_heart_rate(&p, d, Timestamp::MAX);
            assert_eq!(resting_of(&whole), resting_hr(&p, d), "{d}");
            if let Some(o) = outing(&p, d) {
                activities += 1;
                for (a, b, _) in beds(&p, d) {
                    assert!(o.end() <= a || o.start.timestamp() >= b, "{d}: an activity in bed");
                }
            }
            d = d.tomorrow().unwrap();
        }
        assert!(activities > 20, "{activities}");
    }
}
