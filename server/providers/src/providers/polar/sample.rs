//! Polar has no sandbox, so its sample data is built in: a deterministic runner and cyclist in
//! Polar AccessLink v3's own wire format, and [`Api`], which answers a read as Polar would
//! (retention, range limits, 204/404 empties, the files of an exercise). In sandbox mode the
//! server sends its requests here instead of to the network; the twin serves the same person over
//! HTTP with OAuth, registration, rate limits and faults on top (one generator, not two).
use crate::activity_file;
use crate::providers::day_hash as h;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// How far back each route reaches, in days (today included), as the twin and the sample serve it.
pub const EXERCISE_DAYS: i64 = 30;
pub const LIST_DAYS: i64 = 28;
pub const ACTIVITY_DAYS: i64 = 365;
pub const CARDIO_DAYS: i64 = 180;
/// `to − from` allowed on the range routes.
pub const MAX_RANGE_DAYS: i64 = 28;

/// The sample user.
#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
    pub user_id: u64,
    /// Trains every day (a month holds 30 exercises: the benchmark's load); else most days.
    pub every_day: bool,
}

impl Person {
    pub fn new(tz_name: &str) -> Person {
        Person { tz: TimeZone::get(tz_name).unwrap_or(TimeZone::UTC), user_id: 12_345_678, every_day: false }
    }
    fn at(&self, d: Date, secs: i64) -> jiff::Zoned {
        let dt = d.to_datetime(Time::midnight()).checked_add(jiff::SignedDuration::from_secs(secs)).unwrap_or(d.to_datetime(Time::midnight()));
        dt.to_zoned(self.tz.clone()).unwrap_or_else(|_| Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC))
    }
    fn offset_min(&self, z: &jiff::Zoned) -> i64 {
        i64::from(z.offset().seconds() / 60)
    }
}

/// Spellings the live API is reported to use where its spec says otherwise (reference §4): the
/// twin switches between them so the decoder is held to both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dialect {
    /// Nested zone and sample keys in kebab-case (`in-zone`, `sample-type` as a string), as the spec says.
    pub kebab_nested: bool,
    /// `very-high` rather than `very_high` in cardio load levels.
    pub very_high_kebab: bool,
    /// The continuous-HR range route as a bare array rather than `{"heart_rates": [...]}`.
    pub hr_bare_array: bool,
}

fn unit(d: Date, salt: u64) -> f64 {
    (h(d, salt) % 10_000) as f64 / 10_000.0
}

pub fn id_of(d: Date) -> String {
    format!("{:X}", (d - Date::constant(2000, 1, 1)).get_days() as u64 * 16 + 0xA)
}

/// Whether the person trained on `d`, and how: running most days, cycling with power every third session.
fn session(p: &Person, d: Date) -> Option<&'static str> {
    match h(d, 11) % 7 {
        0 | 3 => Some("CYCLING"),
        1 | 4 | 5 => Some("RUNNING"),
        2 if p.every_day => Some("CYCLING"),
        _ if p.every_day => Some("RUNNING"),
        _ => None,
    }
}

fn samples_string(xs: &[Option<f64>]) -> String {
    xs.iter()
        .enumerate()
        .map(|(i, x)| match x {
            Some(v) => format!("{}", (v * 10.0).round() / 10.0),
            // Every way an offline sensor is written.
            None if i % 3 == 0 => "NULL".into(),
            None if i % 3 == 1 => "NaN".into(),
            None => String::new(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The person's maximum heart rate, as physical information says; the zones are its 50 to 100 %.
pub const MAX_HR: u8 = 190;

/// The lower limits of the five heart-rate zones and the top of the fifth (50, 60, … 100 % of [`MAX_HR`]).
pub fn zone_limits() -> [u8; 6] {
    [50, 60, 70, 80, 90, 100].map(|pct| (f64::from(MAX_HR) * f64::from(pct) / 100.0).round() as u8)
}

/// One exercise as the watch recorded it: a sample a second of each sensor (temperature every ten)
/// and a run's route. Its summary, zones, samples and files are all read from these, rounded as
/// Polar's sample strings carry them.
pub struct Recorded {
    pub sport: &'static str,
    pub start: jiff::Zoned,
    pub secs: i64,
    /// bpm; None while the strap dropped out.
    pub hr: Vec<Option<f64>>,
    /// km/h.
    pub speed: Vec<Option<f64>>,
    /// Metres from the start.
    pub dist: Vec<Option<f64>>,
    pub alt: Vec<Option<f64>>,
    /// Steps a minute running, pedal turns a minute cycling.
    pub cad: Vec<Option<f64>>,
    pub power: Vec<Option<f64>>,
    pub temp: Vec<Option<f64>>,
    /// A run's position each second (latitude, longitude); a ride has none.
    pub route: Vec<(f64, f64)>,
}

impl Recorded {
    pub fn running(&self) -> bool {
        self.sport == "RUNNING"
    }
    pub fn end(&self) -> Timestamp {
        self.start.timestamp() + self.secs.seconds()
    }
    /// The heart rate at instant `t`, if the exercise recorded one then.
    pub fn hr_at(&self, t: Timestamp) -> Option<f64> {
        let i = t.as_second() - self.start.timestamp().as_second();
        (0..self.secs).contains(&i).then(|| self.hr[i as usize]).flatten()
    }
    pub fn distance(&self) -> f64 {
        self.dist.iter().rev().find_map(|x| *x).unwrap_or(0.0)
    }
    pub fn calories(&self) -> f64 {
        (self.secs as f64 * if self.running() { 0.2 } else { 0.17 }).round()
    }
    /// The exercise as an activity file's records, laps and zones.
    pub fn recording(&self) -> activity_file::Recording {
        let running = self.running();
        let points = (0..self.secs as usize)
            .map(|i| activity_file::Point {
                hr_bpm: self.hr[i].map(|x| x.round() as u8),
                distance_m: self.dist[i],
                speed_m_s: self.speed[i].map(|v| (v / 3.6 * 1000.0).round() / 1000.0),
                altitude_m: self.alt[i],
                // FIT counts a run's cadence in strides (one foot) a minute.
                cadence_rpm: self.cad[i].map(|c| if running { (c / 2.0).round() as u8 } else { c.round() as u8 }),
                power_w: (!running).then(|| self.power[i].map(|w| w.round() as u16)).flatten(),
                position: self.route.get(i).copied(),
                ..activity_file::Point::at(self.start.timestamp() + (i as i64).seconds())
            })
            .collect();
        let sport = if running { activity_file::Sport::Running } else { activity_file::Sport::Cycling };
        let floors = zone_limits()[..5].to_vec();
        activity_file::Recording::every_second(sport, points, if running { 1000.0 } else { 5000.0 }, self.calories() as u16, floors)
    }
}

fn round_to(x: f64, step: f64) -> f64 {
    ((x / step).round() * step * 10.0).round() / 10.0
}

/// The exercise on `d`, if any, as the watch recorded it.
pub fn recorded(p: &Person, d: Date) -> Option<Recorded> {
    let sport = session(p, d)?;
    let secs = 25 * 60 + (h(d, 12) % (25 * 60)) as i64;
    let start = p.at(d, 17 * 3600 + 30 * 60 + (h(d, 13) % 1800) as i64);
    let running = sport == "RUNNING";
    let n = secs as usize;
    let base_speed = if running { 10.0 + 2.0 * unit(d, 14) } else { 26.0 + 4.0 * unit(d, 14) };
    let mut r = Recorded { sport, start, secs, hr: vec![], speed: vec![], dist: vec![], alt: vec![], cad: vec![], power: vec![], temp: vec![], route: vec![] };
    let (mut acc, mut pos) = (0.0, (60.1699 + 0.01 * unit(d, 18), 24.9384 + 0.02 * unit(d, 19)));
    for i in 0..n {
        let t = i as f64;
        let v = round_to(base_speed * (1.0 + 0.08 * (t / 97.0).sin()), 0.1);
        acc += v / 3.6;
        r.speed.push(Some(v));
        r.dist.push(Some(round_to(acc, 0.1)));
        // A 10-second dropout of the heart-rate strap at 5 minutes; whole beats, as a strap counts them.
        r.hr.push(if (300..310).contains(&i) { None } else { Some((120.0 + 35.0 * (1.0 - (-t / 240.0).exp()) + 6.0 * (t / 180.0).sin()).round()) });
        // Altitude in the barometer's 0.2 m steps.
        r.alt.push(if i == 77 { None } else { Some(round_to(40.0 + 12.0 * (t / 400.0).sin() + 0.3 * (t / 7.0).sin(), 0.2)) });
        r.cad.push(Some(if running { 2.0 * ((168.0 + 6.0 * (t / 50.0).sin()) / 2.0).round() } else { (88.0 + 5.0 * (t / 60.0).sin()).round() }));
        r.power.push(Some((190.0 + 60.0 * (t / 45.0).sin().max(0.0) + 20.0 * (t / 11.0).cos()).round()));
        if i % 10 == 0 {
            r.temp.push(Some(round_to(18.0 + 3.0 * (t / 900.0).sin(), 0.1)));
        }
        if running {
            let heading = 1.1 + 1.4 * (t / 500.0).sin();
            let m = v / 3.6;
            pos.0 += m * heading.cos() / 111_320.0;
            pos.1 += m * heading.sin() / (111_320.0 * pos.0.to_radians().cos());
            r.route.push(((pos.0 * 1e7).round() / 1e7, (pos.1 * 1e7).round() / 1e7));
        }
    }
    Some(r)
}

/// One exercise (or None) on `d`, in Polar's shape; `samples`/`zones` as the flags ask.
pub fn exercise_of_day(p: &Person, d: Date, samples: bool, zones: bool, dialect: Dialect) -> Option<Value> {
    let r = recorded(p, d)?;
    let (sport, secs, start, running) = (r.sport, r.secs, r.start.clone(), r.running());
    let (hr, speed, dist, alt, cad, power, temp) = (&r.hr, &r.speed, &r.dist, &r.alt, &r.cad, &r.power, &r.temp);
    let distance = r.distance();
    let hr_valid: Vec<f64> = hr.iter().flatten().copied().collect();
    let hr_avg = (hr_valid.iter().sum::<f64>() / hr_valid.len() as f64).round();
    let hr_max = hr_valid.iter().fold(0.0f64, |a, b| a.max(*b)).round();
    let mut ex = json!({
        "id": id_of(d),
        "upload_time": format!("{}Z", (start.timestamp() + (secs + 600).seconds()).strftime("%Y-%m-%dT%H:%M:%S.000")),
        "polar_user": format!("https://www.polaraccesslink.com/v3/users/{}", p.user_id),
        "device": "Polar Vantage V3",
        "device_id": "1111AAAA",
        "start_time": start.datetime().strftime("%Y-%m-%dT%H:%M:%S").to_string(),
        "start_time_utc_offset": p.offset_min(&start),
        "duration": format!("PT{}M{}S", secs / 60, secs % 60),
        "calories": r.calories(),
        "distance": (distance * 10.0).round() / 10.0,
        "heart_rate": {"average": hr_avg, "maximum": hr_max},
        "training_load": (secs as f64 / 30.0).round(),
        "sport": sport,
        "has_route": running,
        "detailed_sport_info": if running { "RUNNING" } else { "ROAD_BIKING" },
        "fat_percentage": 31, "carbohydrate_percentage": 66, "protein_percentage": 3,
        "training_load_pro": training_load_pro(d, secs, running),
    });
    if running {
        ex["running-index"] = json!(48 + (h(d, 15) % 6));
    }
    let nested = |snake: &str, kebab: &str| if dialect.kebab_nested { kebab.to_string() } else { snake.to_string() };
    if zones {
        let l = zone_limits();
        let limits: Vec<(u8, u8)> = l.windows(2).map(|w| (w[0], w[1])).collect();
        // A second below the first zone is in none (the top zone holds its upper limit).
        let mut in_zone = [0i64; 5];
        for x in hr.iter().flatten() {
            if let Some(k) = limits.iter().position(|(lo, hi)| *x >= f64::from(*lo) && (*x < f64::from(*hi) || *hi == l[5] && *x <= f64::from(*hi))) {
                in_zone[k] += 1;
            }
        }
        ex["heart_rate_zones"] = limits
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| {
                let mut z = Map::new();
                z.insert("index".into(), json!(i));
                z.insert(nested("lower_limit", "lower-limit"), json!(lo));
                z.insert(nested("upper_limit", "upper-limit"), json!(hi));
                z.insert(nested("in_zone", "in-zone"), json!(format!("PT{}M{}S", in_zone[i] / 60, in_zone[i] % 60)));
                Value::Object(z)
            })
            .collect();
    }
    if samples {
        let mut list: Vec<(u32, u32, &Vec<Option<f64>>)> = vec![(0, 1, hr), (1, 1, speed), (10, 1, dist), (3, 1, alt), (9, 10, temp)];
        if running {
            list.push((8, 1, cad));
        } else {
            list.push((2, 1, cad));
            list.push((4, 1, power));
        }
        let rr: Vec<Option<f64>> = (0..300).map(|i| Some(60_000.0 / 150.0 + 12.0 * ((i as f64) / 5.0).sin())).collect();
        let mut out: Vec<Value> = list
            .iter()
            .map(|(kind, rate, data)| {
                let mut s = Map::new();
                s.insert(nested("recording_rate", "recording-rate"), json!(rate));
                s.insert(nested("sample_type", "sample-type"), if dialect.kebab_nested { json!(kind.to_string()) } else { json!(kind) });
                s.insert("data".into(), json!(samples_string(data)));
                Value::Object(s)
            })
            .collect();
        if running {
            let mut s = Map::new();
            s.insert(nested("recording_rate", "recording-rate"), Value::Null);
            s.insert(nested("sample_type", "sample-type"), if dialect.kebab_nested { json!("11") } else { json!(11) });
            s.insert("data".into(), json!(samples_string(&rr)));
            out.push(Value::Object(s));
        }
        ex["samples"] = Value::Array(out);
    }
    Some(ex)
}

/// An exercise's Training Load Pro as Polar sends it: every value beside its interpretation. A
/// run has no power, so no muscle load (`-1.0`, `NOT_AVAILABLE`); an exercise nobody rated has
/// `perceived-load: 0.0`, `NOT_AVAILABLE` and `user-rpe: UNKNOWN` (a recorded body says so: 0.0,
/// not the -1.0 of the documentation's example); one in three is rated.
fn training_load_pro(d: Date, secs: i64, running: bool) -> Value {
    const RPE: [(&str, f64); 4] = [("RPE_LIGHT", 3.0), ("RPE_MODERATE", 5.0), ("RPE_FAIRLY_HARD", 6.0), ("RPE_HARD", 7.0)];
    let cardio = (secs as f64 / 30.0).round();
    let level = |x: f64| match x {
        _ if x < 40.0 => "LOW",
        _ if x < 100.0 => "MEDIUM",
        _ => "HIGH",
    };
    let (muscle, muscle_said) = if running { (-1.0, "NOT_AVAILABLE") } else { (40.0, "LOW") };
    let (perceived, perceived_said, rpe) = match h(d, 16) % 3 {
        0 => {
            let (rpe, score) = RPE[(h(d, 17) % 4) as usize];
            // Session RPE: the rating times the minutes.
            let load = (score * secs as f64 / 60.0).round();
            (load, level(load / 2.0), rpe)
        }
        _ => (0.0, "NOT_AVAILABLE", "UNKNOWN"),
    };
    json!({
        "date": d.to_string(), "cardio-load": cardio, "muscle-load": muscle, "perceived-load": perceived,
        "cardio-load-interpretation": level(cardio), "muscle-load-interpretation": muscle_said,
        "perceived-load-interpretation": perceived_said, "user-rpe": rpe
    })
}

/// The upload instant of the exercise on `d` (what Polar's 30-day window is counted from): ten
/// minutes after it ended.
fn uploaded(p: &Person, d: Date) -> Option<Timestamp> {
    session(p, d)?;
    let (start, secs) = exercise_span(p, d);
    Some(start.timestamp() + (secs + 600).seconds())
}

/// When the exercise of `d` (if any) starts, and its seconds.
fn exercise_span(p: &Person, d: Date) -> (jiff::Zoned, i64) {
    (p.at(d, 17 * 3600 + 30 * 60 + (h(d, 13) % 1800) as i64), 25 * 60 + (h(d, 12) % (25 * 60)) as i64)
}

/// The daily activity goal: five hours of activity make 100 %.
const ACTIVITY_GOAL_MIN: f64 = 300.0;

/// Minutes from local midnight of `d` to instant `t` (negative before, past 1440 after).
fn minute_of(p: &Person, d: Date, t: Timestamp) -> i64 {
    (t.as_second() - p.at(d, 0).timestamp().as_second()).div_euclid(60)
}

/// Whether the watch was off the wrist on `d` (every fourth day, half an hour from 20:00, a shower):
/// no steps and no heart rate then.
fn off_wrist(d: Date) -> Option<std::ops::Range<i64>> {
    h(d, 22).is_multiple_of(4).then_some(20 * 60..20 * 60 + 30)
}

/// A day's activity by `now`, with its samples: asleep until the night ending `d` ends, a morning
/// walk, a workday, the exercise (a run's steps are its cadence), asleep again from the next
/// night's start. Its steps, active time, goal and calories are read from the minutes.
pub fn activity_of_day(p: &Person, d: Date, with_samples: bool, now: Timestamp) -> Value {
    let wake = minute_of(p, d, night_span(p, d).1.timestamp()).clamp(0, 1440) as usize;
    let bed = minute_of(p, d, night_span(p, d.tomorrow().unwrap_or(d)).0.timestamp()).clamp(0, 1440) as usize;
    let until = minute_of(p, d, now).clamp(0, 1440) as usize;
    let off = off_wrist(d).unwrap_or(0..0);
    let mut per_min = vec![0u32; 1440];
    for (m, v) in per_min.iter_mut().enumerate() {
        let r = h(d, 1000 + m as u64) % 100;
        *v = match m {
            _ if m < wake || m >= bed || off.contains(&(m as i64)) => 0,
            _ if m < wake + 30 => 60 + (r as u32 % 40),
            _ if m < 22 * 60 && r < 25 => (r as u32) * 3,
            _ => 0,
        };
    }
    let ex = recorded(p, d).filter(|r| r.end() <= now);
    let mut exercise_min = vec![false; 1440];
    if let Some(r) = &ex {
        // A run's steps are its cadence, second by second; a ride has none.
        let mut steps = [0.0f64; 1440];
        for i in 0..r.secs {
            let m = minute_of(p, d, r.start.timestamp() + i.seconds()).clamp(0, 1439) as usize;
            exercise_min[m] = true;
            steps[m] += if r.running() { r.cad[i as usize].unwrap_or(0.0) / 60.0 } else { 0.0 };
        }
        for m in (0..1440).filter(|m| exercise_min[*m]) {
            per_min[m] = steps[m].round() as u32;
        }
    }
    per_min.iter_mut().skip(until).for_each(|v| *v = 0);
    let total: u32 = per_min.iter().sum();
    let ex_steps: u32 = per_min.iter().zip(&exercise_min).filter(|(_, e)| **e).map(|(v, _)| *v).sum();
    // Polar leaves out a sample that repeats the one before (reference §4.2).
    let mut step_samples = vec![];
    let mut last = None;
    for (m, v) in per_min.iter().enumerate().take(until) {
        if last != Some(*v) {
            step_samples.push(json!({"steps": v, "timestamp": format!("{d}T{:02}:{:02}", m / 60, m % 60)}));
            last = Some(*v);
        }
    }
    // A day not over yet ends at the last sync: a sample stays in force until the next one, so
    // the count stops with a 0 there rather than going on through hours that have not come.
    if until < 1440 && last.is_some_and(|v| v != 0) {
        step_samples.push(json!({"steps": 0, "timestamp": format!("{d}T{:02}:{:02}", until / 60, until % 60)}));
    }
    let clock = |m: usize, s: u8| format!("{d}T{:02}:{:02}:{s:02}", m / 60, m % 60);
    let mut zones = vec![
        (0, json!({"zone": "SLEEP", "timestamp": clock(0, 0)})),
        (wake, json!({"zone": "SEDENTARY", "timestamp": clock(wake, 30)})),
        (wake + 5, json!({"zone": "LIGHT", "timestamp": clock(wake + 5, 0)})),
        (12 * 60 + 10, json!({"zone": "MODERATE", "timestamp": clock(12 * 60 + 10, 0)})),
        (12 * 60 + 40, json!({"zone": "SEDENTARY", "timestamp": clock(12 * 60 + 40, 0)})),
    ];
    if let Some(r) = &ex {
        let (a, b) = (minute_of(p, d, r.start.timestamp()) as usize, minute_of(p, d, r.end()) as usize);
        zones.push((a, json!({"zone": if r.running() { "VIGOROUS" } else { "MODERATE" }, "timestamp": clock(a, 0)})));
        zones.push((b, json!({"zone": "SEDENTARY", "timestamp": clock(b, 0)})));
    }
    // The watch off for a shower: a zone this server does not know by name.
    if !off.is_empty() {
        zones.push((off.start as usize, json!({"zone": "NON_WEAR", "timestamp": clock(off.start as usize, 0)})));
        zones.push((off.end as usize, json!({"zone": "SEDENTARY", "timestamp": clock(off.end as usize, 0)})));
    }
    zones.push((bed, json!({"zone": "SLEEP", "timestamp": clock(bed, 0)})));
    zones.sort_by_key(|z| z.0);
    let zones: Vec<Value> = zones.into_iter().filter(|z| z.0 < until.max(1)).map(|z| z.1).collect();
    let active_min = per_min.iter().zip(&exercise_min).filter(|(v, e)| **v > 0 || **e).count();
    let active_kcal = (total - ex_steps) / 25 + ex.as_ref().map_or(0, |r| r.calories() as u32);
    let mut a = json!({
        "start_time": format!("{d}T00:00:00"),
        "end_time": format!("{d}T23:59:59"),
        "active_duration": format!("PT{}H{}M", active_min / 60, active_min % 60),
        "inactive_duration": format!("PT{}H{}M", (until - active_min.min(until)) / 60, (until - active_min.min(until)) % 60),
        "daily_activity": (100.0 * active_min as f64 / ACTIVITY_GOAL_MIN * 100.0).round() / 100.0,
        "calories": 1900 * until as u32 / 1440 + active_kcal,
        "active_calories": active_kcal,
        "steps": total,
        "inactivity_alert_count": h(d, 23) % 3,
        "distance_from_steps": ((total as f64 * 0.74) * 100.0).round() / 100.0,
    });
    if with_samples {
        a["samples"] = json!({
            "date": d.to_string(),
            "steps": {"interval_ms": 60000, "total_steps": total, "samples": step_samples},
            "activity_zones": {"samples": zones},
            "inactivity_stamps": if until > 16 * 60 + 4 { json!([{"stamp": format!("{d}T16:04")}]) } else { json!([]) },
        });
    }
    a
}

/// The heart rate the watch measured at second `s` of local day `d`: the exercise's while it ran,
/// the night's five-minute values asleep, none off the wrist, a resting day rate otherwise.
fn hr_at(p: &Person, d: Date, ex: Option<&Recorded>, s: i64) -> Option<f64> {
    let t = p.at(d, 0).timestamp() + s.seconds();
    if let Some(r) = ex.filter(|r| t >= r.start.timestamp() && t < r.end()) {
        return r.hr_at(t);
    }
    if off_wrist(d).is_some_and(|o| o.contains(&(s / 60))) {
        return None;
    }
    for n in [d, d.tomorrow().unwrap_or(d)] {
        let (a, b) = night_span(p, n);
        if t >= a.timestamp() && t < b.timestamp() {
            return Some(night_bpm(n, (t.as_second() - a.timestamp().as_second()) / 300));
        }
    }
    Some((72.0 + 8.0 * (s as f64 / 5000.0).sin() + (h(d, 600 + s as u64 / 300) % 6) as f64).round())
}

/// A day of continuous heart rate by `now`: a sample every 5 minutes at `:08`, a few missing, and
/// on three days in four a run where the watch lost skin contact mid-day ([`no_contact_run`]).
pub fn heart_rate_of_day(p: &Person, d: Date, now: Timestamp) -> Value {
    let ex = recorded(p, d);
    let mut samples: Vec<(i64, f64)> =
        (0..288).filter(|i| !h(d, 300 + *i as u64).is_multiple_of(40)).filter_map(|i| Some((i * 300 + 8, hr_at(p, d, ex.as_ref(), i * 300 + 8)?))).collect();
    samples.extend(no_contact_run(d));
    samples.sort_by_key(|s| s.0);
    samples.dedup_by_key(|s| s.0);
    let until = now.as_second() - p.at(d, 0).timestamp().as_second();
    let samples: Vec<Value> = samples
        .into_iter()
        .filter(|(t, _)| *t <= until)
        // Whole beats per minute, as Polar sends them (an integer).
        .map(|(t, bpm)| json!({"heart_rate": bpm as i64, "sample_time": format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)}))
        .collect();
    json!({"polar_user": format!("https://www.polaraccesslink.com/v3/users/{}", p.user_id), "date": d.to_string(), "heart_rate_samples": samples})
}

/// The watch losing skin contact mid-day, as real accounts show it: a run of samples a second
/// apart, each `heart_rate: 0`, broken now and then by a reading as contact comes and goes
/// (seconds of the day, bpm). Read as heart rates, a one-minute bucket of it averages about 25.
pub fn no_contact_run(d: Date) -> Vec<(i64, f64)> {
    if h(d, 310).is_multiple_of(4) {
        return vec![];
    }
    let start = 11 * 3600 + (h(d, 311) % (4 * 3600)) as i64;
    let len = 90 + (h(d, 312) % 120) as i64;
    (0..len).map(|k| (start + k, if k % 3 == 2 { 78.0 + (h(d, 313 + k as u64) % 7) as f64 } else { 0.0 })).collect()
}

/// When the night ending `d` starts and ends.
fn night_span(p: &Person, d: Date) -> (jiff::Zoned, jiff::Zoned) {
    let start = p.at(d.yesterday().unwrap_or(d), 23 * 3600 + 10 * 60 + (h(d, 31) % 2400) as i64 + 7);
    let len_min = 400 + (h(d, 32) % 80) as i64;
    let end = start.checked_add(len_min.minutes()).unwrap_or(start.clone());
    (start, end)
}

/// The heart rate of the `k`-th five minutes of the night ending `d`: what the sleep's samples
/// and the continuous heart rate both say of it.
fn night_bpm(d: Date, k: i64) -> f64 {
    (62.0 - 8.0 * (k as f64 / 20.0).min(1.0) + (h(d, 700 + k as u64) % 4) as f64).round()
}

/// The night that ends on `d`: start and end with offsets, stages that agree with the hypnogram,
/// its heart rate the five-minute values the continuous heart rate shows through it.
pub fn night_ending(p: &Person, d: Date) -> Value {
    let (start, end) = night_span(p, d);
    let len_min = (end.timestamp().as_second() - start.timestamp().as_second()) / 60;
    // Cycles of ~90 min: light, deep (shorter later), light, REM (longer later); a short wake.
    let mut pts: Vec<(i64, u8)> = vec![];
    let mut t = 0i64;
    let mut cycle = 0i64;
    while t < len_min {
        let deep = (40 - cycle * 10).max(5);
        let rem = 10 + cycle * 5;
        for (dur, stage) in [(15, 2u8), (deep, 4), (20, 3), (rem, 1), (3, 0)] {
            if t < len_min {
                pts.push((t, stage));
            }
            t += dur;
        }
        cycle += 1;
    }
    let mut totals = [0i64; 6];
    for (i, (t0, s)) in pts.iter().enumerate() {
        let t1 = pts.get(i + 1).map_or(len_min, |x| x.0);
        totals[*s as usize] += (t1 - t0) * 60;
    }
    let clock = |m: i64| {
        let z = start.checked_add(m.minutes()).unwrap_or(start.clone());
        format!("{:02}:{:02}", z.hour(), z.minute())
    };
    let hyp: Map<String, Value> = pts.iter().map(|(m, s)| (clock(*m), json!(s))).collect();
    let hr: Map<String, Value> = (0..len_min / 5).map(|k| (clock(k * 5 + 2), json!(night_bpm(d, k)))).collect();
    let fmt = |z: &jiff::Zoned| z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string();
    json!({
        "polar_user": format!("https://www.polaraccesslink.com/v3/users/{}", p.user_id),
        "date": d.to_string(),
        "sleep_start_time": fmt(&start),
        "sleep_end_time": fmt(&end),
        "device_id": "1111AAAA",
        "continuity": 2.5 + (h(d, 33) % 20) as f64 / 10.0,
        "continuity_class": 2 + h(d, 33) % 3,
        "light_sleep": totals[2] + totals[3],
        "deep_sleep": totals[4],
        "rem_sleep": totals[1],
        "unrecognized_sleep_stage": totals[5],
        "sleep_score": 60 + h(d, 34) % 35,
        "total_interruption_duration": totals[0],
        "short_interruption_duration": 0,
        "long_interruption_duration": totals[0],
        "sleep_charge": 1 + h(d, 35) % 5,
        "sleep_goal": 28800,
        // Now and then the user gave no rating: 0.
        "sleep_rating": h(d, 36) % 5,
        "sleep_cycles": cycle,
        "group_duration_score": 80.0,
        "group_solidity_score": 70.0 + (h(d, 37) % 20) as f64,
        "group_regeneration_score": 64.2,
        "hypnogram": hyp,
        "heart_rate_samples": hr,
    })
}

/// Nightly Recharge for the night ending on `d`: samples every 5 min for 4 h from 30 min after sleep start.
pub fn recharge_of(p: &Person, d: Date) -> Value {
    let n = night_ending(p, d);
    let start: Timestamp = n["sleep_start_time"].as_str().and_then(|s| s.parse().ok()).unwrap_or(Timestamp::UNIX_EPOCH);
    let from = start.to_zoned(p.tz.clone()).checked_add(30.minutes()).unwrap_or(start.to_zoned(p.tz.clone()));
    let clock = |k: i64| {
        let z = from.checked_add((k * 5).minutes()).unwrap_or(from.clone());
        format!("{:02}:{:02}", z.hour(), z.minute())
    };
    let hrv: Map<String, Value> =
        (0..48).map(|k| (clock(k), json!((50.0 + 15.0 * (k as f64 / 10.0).sin() + (h(d, 800 + k as u64) % 5) as f64).round()))).collect();
    let br: Map<String, Value> =
        (0..48).map(|k| (clock(k), json!(((13.0 + (k as f64 / 30.0) + (h(d, 900 + k as u64) % 5) as f64 / 10.0) * 10.0).round() / 10.0))).collect();
    // Its averages are of its own four hours: the night's heart rate then, its HRV and breathing samples.
    let hr: Vec<f64> = (6..54).map(|k| night_bpm(d, k)).collect();
    let hr_avg = (hr.iter().sum::<f64>() / hr.len() as f64).round();
    let avg = |m: &Map<String, Value>| m.values().filter_map(Value::as_f64).sum::<f64>() / m.len().max(1) as f64;
    json!({
        "polar_user": format!("https://www.polaraccesslink.com/v3/users/{}", p.user_id),
        "date": d.to_string(),
        "heart_rate_avg": hr_avg,
        "beat_to_beat_avg": (60_000.0 / hr_avg).round(),
        "heart_rate_variability_avg": avg(&hrv).round(),
        "breathing_rate_avg": (avg(&br) * 10.0).round() / 10.0,
        "nightly_recharge_status": 1 + h(d, 43) % 6,
        "ans_charge": ((h(d, 44) % 200) as f64 / 10.0 - 10.0),
        "ans_charge_status": 1 + h(d, 45) % 5,
        "hrv_samples": hrv,
        "breathing_samples": br,
    })
}

/// The cardio load of the exercise on `d` (its training load), 0 on a day without one.
fn load_of(p: &Person, d: Date) -> f64 {
    session(p, d).map_or(0.0, |_| (exercise_span(p, d).1 as f64 / 30.0).round())
}

/// Cardio load of `d`: the day's exercise's load, strain the mean of the last 7 days', tolerance of
/// the last 28, their ratio and the status it makes. A day without an exercise is now and then
/// one Polar has no load for (it still sends the day, with -1.0 values).
pub fn cardio_of(p: &Person, d: Date, dialect: Dialect) -> Value {
    let very_high = if dialect.very_high_kebab { "very-high" } else { "very_high" };
    if session(p, d).is_none() && h(d, 51).is_multiple_of(9) {
        return json!({"date": d.to_string(), "cardio_load_status": "LOAD_STATUS_NOT_AVAILABLE", "cardio_load": -1.0, "strain": 0.0,
            "tolerance": -1.0, "cardio_load_ratio": -1.0, "cardio_load_level": {"very_low": 0.0, "low": 0.0, "medium": 0.0, "high": 0.0, very_high: 0.0}});
    }
    let mean = |n: i64| (0..n).filter_map(|k| d.checked_sub(k.days()).ok()).map(|x| load_of(p, x)).sum::<f64>() / n as f64;
    let (strain, tolerance) = ((mean(7) * 10.0).round() / 10.0, (mean(28) * 10.0).round() / 10.0);
    let ratio = if tolerance > 0.0 { (strain / tolerance * 100.0).round() / 100.0 } else { 0.0 };
    let status = match ratio {
        r if r < 0.8 => "DETRAINING",
        r if r < 1.0 => "MAINTAINING",
        r if r <= 1.5 => "PRODUCTIVE",
        _ => "OVERREACHING",
    };
    json!({"date": d.to_string(), "cardio_load_status": status, "cardio_load": load_of(p, d), "strain": strain, "tolerance": tolerance,
        "cardio_load_ratio": ratio, "cardio_load_level": {"very_low": 20.0, "low": 45.0, "medium": 80.0, "high": 120.0, very_high: 160.0}})
}

/// SleepWise alertness for the night ending on `d` (UTC times without offset, the offset beside them).
pub fn alertness_of(p: &Person, d: Date) -> Value {
    let n = night_ending(p, d);
    let parse = |k: &str| n[k].as_str().and_then(|s| s.parse::<Timestamp>().ok()).unwrap_or(Timestamp::UNIX_EPOCH);
    let (s, e) = (parse("sleep_start_time"), parse("sleep_end_time"));
    let off = p.offset_min(&e.to_zoned(p.tz.clone()));
    let utc = |t: Timestamp| t.to_zoned(TimeZone::UTC).datetime().strftime("%Y-%m-%dT%H:%M:%S%.f").to_string();
    let hourly: Vec<Value> = (0..16)
        .map(|k| {
            let a = e + (k * 3600).seconds();
            json!({"validity": "VALIDITY_ESTIMATE", "alertness_level": if k % 5 == 0 { "ALERTNESS_LEVEL_LOW" } else { "ALERTNESS_LEVEL_HIGH" },
                "start_time": utc(a), "end_time": utc(a + 3600.seconds())})
        })
        .collect();
    json!({
        "grade": ((h(d, 61) % 100) as f64 / 10.0), "grade_validity_seconds": 57600, "grade_type": "GRADE_TYPE_PRIMARY",
        "grade_classification": if h(d, 61) % 100 > 50 { "GRADE_CLASSIFICATION_STRONG" } else { "GRADE_CLASSIFICATION_WEAK" },
        "validity": "VALIDITY_ESTIMATE", "sleep_inertia": "SLEEP_INERTIA_MILD", "sleep_type": "SLEEP_TYPE_PRIMARY",
        "result_type": "ALERTNESS_TYPE_HISTORY",
        "period_start_time": utc(s), "period_end_time": utc(e + 16.hours()),
        "sleep_period_start_time": utc(s), "sleep_period_end_time": utc(e),
        "sleep_timezone_offset_minutes": off, "hourly_data": hourly,
    })
}

pub fn physical_info() -> Value {
    json!({"weight": 70.5, "height": 178.0, "created": "2026-01-05T09:12:44Z", "modified": "2026-02-10T12:00:00Z", "birthday": "1985-09-06",
        "gender": "MALE", "maximum_heart_rate": MAX_HR, "resting_heart_rate": 52, "aerobic_threshold": 140, "anaerobic_threshold": 170,
        "vo2_max": 52, "weight_source": "SOURCE_USER", "training_background": "REGULAR", "typical_day": "MOSTLY_MOVING", "sleep_goal": "PT8H"})
}

/// One exercise's file, written from its records ([`Recorded`]): FIT, TCX (gzipped, as Polar's
/// spec says) and, for an exercise with a route, GPX.
pub fn exercise_file(p: &Person, d: Date, format: &str) -> Option<(&'static str, Vec<u8>)> {
    let r = recorded(p, d)?;
    let rec = r.recording();
    let name = if r.running() { "Running" } else { "Road biking" };
    match format {
        "fit" => Some(("application/octet-stream", activity_file::fit::write(&rec, activity_file::fit::Maker::Polar, r.start.offset().seconds()))),
        "tcx" => Some(("application/vnd.garmin.tcx+xml", gzip(activity_file::tcx::write(&rec, name).as_bytes()))),
        "gpx" => activity_file::gpx::write(&rec, name, "Polar Vantage V3").ok().map(|x| ("application/gpx+xml", x.into_bytes())),
        _ => None,
    }
}

fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(vec![], flate2::Compression::fast());
    e.write_all(b).expect("writing to memory");
    e.finish().expect("writing to memory")
}

/// What a read answers: status, content type, body.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Answer {
    fn json(v: Value) -> Answer {
        Answer { status: 200, content_type: "application/json", body: v.to_string().into_bytes() }
    }
    fn status(status: u16, v: Option<Value>) -> Answer {
        Answer { status, content_type: "application/json", body: v.map(|v| v.to_string().into_bytes()).unwrap_or_default() }
    }
}

fn error(status: u16, message: &str) -> Answer {
    Answer::status(status, Some(json!({"timestamp": "2026-01-05T09:12:44.123Z", "status": status, "errorType": "BAD_REQUEST", "message": message})))
}

/// The person answering reads as Polar would, "now" being `now`.
pub struct Api<'a> {
    pub person: &'a Person,
    pub now: Timestamp,
    pub dialect: Dialect,
    /// Exercises only from this instant (the user's registration with the app), as Polar shows them.
    pub registered: Option<Timestamp>,
}

impl Api<'_> {
    fn today(&self) -> Date {
        self.now.to_zoned(self.person.tz.clone()).date()
    }
    fn first(&self, days: i64) -> Date {
        self.today().checked_sub((days - 1).days()).unwrap_or(self.today())
    }
    fn range(&self, q: &HashMap<String, String>, reach: i64) -> Result<Vec<Date>, Answer> {
        let parse = |k: &str| q.get(k).and_then(|v| v.parse::<Date>().ok());
        let (Some(from), Some(to)) = (parse("from"), parse("to")) else {
            return Err(error(400, "from and to are required as YYYY-MM-DD"));
        };
        if to < from || (to - from).get_days() as i64 > MAX_RANGE_DAYS {
            return Err(error(400, "to - from must be between 0 and 28 days"));
        }
        // One day of slack before the first reachable day: a client's "today" may be in another zone.
        if from < self.first(reach + 1) {
            return Err(error(400, &format!("from must be at most {reach} days ago")));
        }
        let first = self.first(reach);
        let mut out = vec![];
        let mut d = from.max(first);
        while d <= to.min(self.today()) {
            out.push(d);
            d = d.tomorrow().unwrap_or(d);
            if d == Date::MAX {
                break;
            }
        }
        Ok(out)
    }
    fn days_back(&self, n: i64) -> Vec<Date> {
        (0..n).rev().filter_map(|k| self.today().checked_sub(k.days()).ok()).collect()
    }
    /// The nights of the last [`LIST_DAYS`] days that ended by now.
    fn nights_ended(&self) -> Vec<Date> {
        self.days_back(LIST_DAYS).into_iter().filter(|d| night_span(self.person, *d).1.timestamp() <= self.now).collect()
    }
    fn flag(q: &HashMap<String, String>, k: &str) -> bool {
        q.get(k).is_some_and(|v| v == "true")
    }
    /// Exercises Polar would list now: uploaded in the last 30 days, after registration.
    fn visible_exercises(&self) -> Vec<Date> {
        let since = self.now - (EXERCISE_DAYS * 86_400).seconds();
        self.days_back(EXERCISE_DAYS + 1)
            .into_iter()
            .filter(|d| uploaded(self.person, *d).is_some_and(|u| u >= since && u <= self.now && self.registered.is_none_or(|r| u >= r)))
            .collect()
    }

    /// Answer `GET path?q` as Polar AccessLink v3 would.
    pub fn answer(&self, path: &str, q: &HashMap<String, String>) -> Answer {
        let p = self.person;
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        match segs.as_slice() {
            ["v3", "exercises"] => {
                let (s, z) = (Self::flag(q, "samples"), Self::flag(q, "zones"));
                Answer::json(Value::Array(self.visible_exercises().into_iter().filter_map(|d| exercise_of_day(p, d, s, z, self.dialect)).collect()))
            }
            ["v3", "exercises", id, rest @ ..] => {
                let Some(d) = self.visible_exercises().into_iter().find(|d| id_of(*d) == *id) else {
                    return Answer::status(404, None);
                };
                match rest {
                    [] => exercise_of_day(p, d, Self::flag(q, "samples"), Self::flag(q, "zones"), self.dialect).map_or(Answer::status(404, None), Answer::json),
                    [format] => match exercise_file(p, d, format) {
                        Some((ct, body)) => Answer { status: 200, content_type: ct, body },
                        None => Answer::status(404, None),
                    },
                    _ => Answer::status(404, None),
                }
            }
            ["v3", "users", "activities"] => match self.range(q, ACTIVITY_DAYS) {
                Ok(days) => {
                    let with = Self::flag(q, "steps") || Self::flag(q, "activity_zones");
                    Answer::json(days.into_iter().map(|d| activity_of_day(p, d, with, self.now)).collect())
                }
                Err(a) => a,
            },
            ["v3", "users", "continuous-heart-rate"] => match self.range(q, LIST_DAYS) {
                Ok(days) => {
                    let list: Vec<Value> = days.into_iter().map(|d| heart_rate_of_day(p, d, self.now)).collect();
                    Answer::json(if self.dialect.hr_bare_array { Value::Array(list) } else { json!({"heart_rates": list}) })
                }
                Err(a) => a,
            },
            ["v3", "users", "continuous-heart-rate", day] => match day.parse::<Date>() {
                Ok(d) if d >= self.first(LIST_DAYS) && d <= self.today() => Answer::json(heart_rate_of_day(p, d, self.now)),
                Ok(_) => Answer::status(404, None),
                Err(_) => error(400, "bad date"),
            },
            ["v3", "users", "sleep"] => Answer::json(json!({"nights": self.nights_ended().into_iter().map(|d| night_ending(p, d)).collect::<Vec<_>>()})),
            ["v3", "users", "nightly-recharge"] => {
                Answer::json(json!({"recharges": self.nights_ended().into_iter().map(|d| recharge_of(p, d)).collect::<Vec<_>>()}))
            }
            ["v3", "users", "cardio-load", "date"] => match self.range(q, CARDIO_DAYS) {
                Ok(days) => Answer::json(days.into_iter().map(|d| cardio_of(p, d, self.dialect)).collect()),
                Err(a) => a,
            },
            ["v3", "users", "sleepwise", "alertness", "date"] => match self.range(q, LIST_DAYS) {
                Ok(days) if days.is_empty() => Answer::status(204, None),
                Ok(days) => Answer::json(days.into_iter().map(|d| alertness_of(p, d)).collect()),
                Err(a) => a,
            },
            ["v3", "users", "physical-info"] => Answer::json(physical_info()),
            _ => Answer::status(404, None),
        }
    }
}

/// Every day in `[from, to]` with an exercise.
pub fn exercise_days(p: &Person, from: Date, to: Date) -> Vec<Date> {
    let mut out = vec![];
    let mut d = from;
    while d <= to {
        if session(p, d).is_some() {
            out.push(d);
        }
        let Ok(n) = d.tomorrow() else { break };
        d = n;
    }
    out
}
