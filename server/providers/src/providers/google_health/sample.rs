//! Google Health's built-in sample data: a deterministic person wearing a Pixel Watch, in the
//! Google Health API's own wire format (v4), and [`Api`], which answers
//! `GET /v4/users/me/dataTypes/{type}/dataPoints[:reconcile]` as Google does: a `filter` of `>=`
//! and `<` joined by `AND` on the type's own snake_case field (any other is a 400
//! `google.rpc.Status`), `pageSize` (25 at most for sessions), `nextPageToken` absent on the last
//! page, int64 values as strings, offsets as `"7200s"`, and no `civil*` fields (live bodies had
//! none). The sandbox answers through it in process, and the twin serves it behind Google's
//! OAuth, partial consent, rate limits and faults, so both run the same reading code.
//!
//! The person agrees with themself: an exercise's steps, distance, energy and active zone minutes
//! are the sums of the minutes it spans, its average heart rate the mean of its samples; the
//! night's heart rate sits at the resting heart rate Google reports for that day.
use crate::providers::day_hash as h;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The first day the sample person has data.
const FIRST_DAY: Date = jiff::civil::date(2024, 1, 1);
/// Google's default page when `pageSize` is not given (not stated by Google; the twin's choice).
pub const DEFAULT_PAGE: usize = 100;
/// The most a session page holds (reference §0).
pub const MAX_SESSION_PAGE: usize = 25;
pub const MAX_PAGE: usize = 10_000;

/// The sample person, living in `tz`.
#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
}

/// A reply: status and body.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

/// A `google.rpc.Status` error body.
pub fn error(code: u16, status: &str, reason: &str, message: &str) -> Answer {
    let body = json!({"error": {"code": code, "message": message, "status": status,
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "health.googleapis.com"}]}});
    Answer { status: code, body: body.to_string() }
}

/// A number in `[lo, lo + span)` from the day's hash.
fn pick(d: Date, salt: u64, lo: i64, span: i64) -> i64 {
    lo + (h(d, salt) % span.max(1) as u64) as i64
}

/// How a point is filtered: the instant or civil time of its start, sample or end, or its date.
#[derive(Clone, Debug)]
struct Point {
    /// The instant the type's filter reads (start, sample or end), and its offset in seconds.
    at: Timestamp,
    offset: i32,
    /// A daily type's date.
    date: Option<Date>,
    body: Value,
}

impl Point {
    fn civil(&self) -> DateTime {
        jiff::tz::Offset::from_seconds(self.offset).unwrap_or(jiff::tz::Offset::UTC).to_datetime(self.at)
    }
}

/// An instant as Google writes it.
fn instant(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn off(s: i32) -> String {
    format!("{s}s")
}

fn date_obj(d: Date) -> Value {
    json!({"year": d.year(), "month": d.month(), "day": d.day()})
}

fn source() -> Value {
    json!({"recordingMethod": "PASSIVELY_MEASURED", "platform": "FITBIT",
           "device": {"formFactor": "WATCH", "manufacturer": "Google", "displayName": "Pixel Watch 3"}})
}

/// One minute of the day's activity.
struct Minute {
    start: Timestamp,
    steps: i64,
    exercising: bool,
}

/// One day of the person: every data type's points that start (or, for a sleep, end) that day.
pub struct Day {
    by_type: HashMap<&'static str, Vec<Point>>,
}

impl Day {
    /// The points of data type `t` this day, as Google sends them.
    pub fn points(&self, t: &str) -> Vec<Value> {
        self.by_type.get(t).map(|v| v.iter().map(|p| p.body.clone()).collect()).unwrap_or_default()
    }
}

impl Person {
    pub fn new(tz: &str) -> Person {
        Person { tz: TimeZone::get(tz).unwrap_or(TimeZone::UTC) }
    }

    fn at(&self, d: Date, minute_of_day: i64) -> Timestamp {
        let base = DateTime::from_parts(d, jiff::civil::time(0, 0, 0, 0)).to_zoned(self.tz.clone()).map(|z| z.timestamp()).unwrap_or(Timestamp::UNIX_EPOCH);
        base.checked_add(minute_of_day.minutes()).unwrap_or(base)
    }

    fn offset(&self, t: Timestamp) -> i32 {
        self.tz.to_offset(t).seconds()
    }

    /// The exercise of `d`, if any: its start minute and length in minutes.
    fn exercise_of(&self, d: Date) -> Option<(i64, i64)> {
        (!h(d, 40).is_multiple_of(3)).then(|| (18 * 60 + pick(d, 41, 0, 60), pick(d, 42, 25, 30)))
    }

    /// The day's resting heart rate (bpm), which the night's samples sit at.
    pub fn resting_hr(&self, d: Date) -> i64 {
        52 + pick(d, 50, 0, 8)
    }

    fn minutes(&self, d: Date) -> Vec<Minute> {
        let ex = self.exercise_of(d);
        let mut out = vec![];
        for m in (7 * 60..22 * 60).step_by(7) {
            out.push(Minute { start: self.at(d, m), steps: pick(d, 100 + m as u64, 0, 110), exercising: false });
        }
        if let Some((s, len)) = ex {
            out.retain(|m| m.start < self.at(d, s) || m.start >= self.at(d, s + len));
            for m in s..s + len {
                out.push(Minute { start: self.at(d, m), steps: 150 + pick(d, 3000 + m as u64, 0, 20), exercising: true });
            }
        }
        out.retain(|m| m.steps > 0);
        out.sort_by_key(|m| m.start);
        out
    }

    fn interval(&self, start: Timestamp, end: Timestamp) -> Value {
        json!({"startTime": instant(start), "startUtcOffset": off(self.offset(start)), "endTime": instant(end), "endUtcOffset": off(self.offset(end))})
    }

    fn interval_point(&self, key: &str, start: Timestamp, value: Value) -> Point {
        let end = start.checked_add(1.minute()).unwrap_or(start);
        let mut v = value;
        v["interval"] = self.interval(start, end);
        Point { at: start, offset: self.offset(start), date: None, body: json!({"dataSource": source(), key: v}) }
    }

    fn sample_point(&self, key: &str, t: Timestamp, value: Value) -> Point {
        let mut v = value;
        v["sampleTime"] = json!({"physicalTime": instant(t), "utcOffset": off(self.offset(t))});
        Point { at: t, offset: self.offset(t), date: None, body: json!({"dataSource": source(), key: v}) }
    }

    fn daily_point(&self, d: Date, key: &str, value: Value) -> Point {
        let mut v = value;
        v["date"] = date_obj(d);
        let t = self.at(d, 0);
        Point { at: t, offset: self.offset(t), date: Some(d), body: json!({"dataSource": source(), key: v}) }
    }

    /// The heart rate at `t` of day `d` (`m` minutes after its midnight).
    fn bpm(&self, d: Date, m: i64, asleep: bool, exercising: bool) -> i64 {
        if exercising {
            140 + pick(d, 5000 + m as u64, 0, 20)
        } else if asleep {
            self.resting_hr(d) + pick(d, 5000 + m as u64, 0, 4)
        } else {
            self.resting_hr(d) + 10 + pick(d, 5000 + m as u64, 0, 20)
        }
    }

    /// The night that ends on the morning of `d`: start and end minutes from `d`'s midnight.
    fn night(&self, d: Date) -> (i64, i64) {
        (-90 + pick(d, 1, 0, 90), 6 * 60 + 15 + pick(d, 2, 0, 75))
    }

    fn sleep(&self, d: Date, id: String, start: Timestamp, end: Timestamp, nap: bool) -> Point {
        let total = (end.as_second() - start.as_second()) / 60;
        let awake = total * pick(d, if nap { 31 } else { 21 }, 4, 8) / 100;
        let asleep = total - awake;
        let (deep, rem) = if nap { (0, 0) } else { (asleep * pick(d, 22, 15, 6) / 100, asleep * pick(d, 23, 19, 6) / 100) };
        let light = asleep - deep - rem;
        let mut stages = vec![];
        let mut t = start;
        let blocks: Vec<(&str, i64)> = if nap {
            vec![("ASLEEP", asleep), ("AWAKE", awake)]
        } else {
            vec![("LIGHT", light / 2), ("DEEP", deep), ("REM", rem), ("AWAKE", awake), ("LIGHT", light - light / 2)]
        };
        for (kind, mins) in &blocks {
            let e = t.checked_add(mins.minutes()).unwrap_or(t);
            stages.push(json!({"startTime": instant(t), "startUtcOffset": off(self.offset(t)), "endTime": instant(e), "endUtcOffset": off(self.offset(e)), "type": kind}));
            t = e;
        }
        let summary: Vec<Value> = if nap {
            vec![json!({"type": "ASLEEP", "minutes": asleep.to_string(), "count": "1"}), json!({"type": "AWAKE", "minutes": awake.to_string(), "count": "1"})]
        } else {
            [("LIGHT", light), ("DEEP", deep), ("REM", rem), ("AWAKE", awake)]
                .iter()
                .map(|(k, m)| json!({"type": k, "minutes": m.to_string(), "count": "1"}))
                .collect()
        };
        let mut metadata = json!({"processed": true, "externalId": "", "stagesStatus": if nap { "REJECTED_NAP" } else { "SUCCEEDED" }});
        if nap {
            metadata["nap"] = json!(true);
        } else {
            metadata["mainSleep"] = json!(true);
        }
        let value = json!({
            "interval": self.interval(start, end), "type": if nap { "CLASSIC" } else { "STAGES" }, "stages": stages, "metadata": metadata,
            "summary": {"minutesAsleep": asleep.to_string(), "minutesAwake": awake.to_string(), "minutesInSleepPeriod": total.to_string(),
                        "minutesToFallAsleep": "0", "minutesAfterWakeUp": "0", "stagesSummary": summary},
        });
        Point {
            at: end,
            offset: self.offset(end),
            date: None,
            body: json!({"name": format!("users/me/dataTypes/sleep/dataPoints/{id}"), "dataSource": source(), "sleep": value}),
        }
    }

    /// Everything of day `d` up to `now`.
    pub fn day(&self, d: Date, now: Timestamp) -> Day {
        self.day_of(d, now, None)
    }

    /// Day `d` up to `now`: the points of type `only`, or of every type when none. A listing reads
    /// one type, and the others' points (a minute's steps, distance and energy) are most of the work.
    fn day_of(&self, d: Date, now: Timestamp, only: Option<&str>) -> Day {
        let mut by = Points { only, by: HashMap::new() };
        let minutes = self.minutes(d);
        for m in &minutes {
            by.put("steps", || self.interval_point("steps", m.start, json!({"count": m.steps.to_string()})));
            by.put("distance", || self.interval_point("distance", m.start, json!({"millimeters": (m.steps * 760).to_string()})));
            by.put("active-energy-burned", || self.interval_point("activeEnergyBurned", m.start, json!({"kcal": m.steps as f64 * 0.05})));
            if m.exercising {
                by.put("active-zone-minutes", || {
                    self.interval_point("activeZoneMinutes", m.start, json!({"heartRateZone": "CARDIO", "activeZoneMinutes": "2"}))
                });
            }
        }
        for k in 0..pick(d, 43, 1, 4) {
            by.put("floors", || self.interval_point("floors", self.at(d, 9 * 60 + 180 * k), json!({"count": pick(d, 44 + k as u64, 1, 4).to_string()})));
        }
        // Heart rate every 5 minutes: asleep until the night ends, exercising during the exercise.
        let (_, wake) = self.night(d);
        let (bed_next, _) = self.night(d.tomorrow().unwrap_or(d));
        let ex = self.exercise_of(d);
        let sample_at = |m: i64| {
            let exercising = ex.is_some_and(|(s, len)| m >= s && m < s + len);
            self.bpm(d, m, m < wake || m >= 24 * 60 + bed_next, exercising)
        };
        let ex_bpm: Vec<i64> = ex.map(|(s, len)| (0..24 * 60).step_by(5).filter(|m| *m >= s && *m < s + len).map(sample_at).collect()).unwrap_or_default();
        for m in (0..24 * 60).step_by(5) {
            by.put("heart-rate", || self.sample_point("heartRate", self.at(d, m), json!({"beatsPerMinute": sample_at(m).to_string()})));
        }
        let (bed, wake) = self.night(d);
        let id = (d - FIRST_DAY).get_days() as i64 * 10 + 7_000_000_000;
        by.put("sleep", || self.sleep(d, id.to_string(), self.at(d, bed), self.at(d, wake), false));
        if h(d, 45).is_multiple_of(5) {
            by.put("sleep", || self.sleep(d, (id + 1).to_string(), self.at(d, 14 * 60), self.at(d, 14 * 60 + 40), true));
        }
        if let Some((s, len)) = ex {
            let during: Vec<&Minute> = minutes.iter().filter(|m| m.exercising).collect();
            let steps: i64 = during.iter().map(|m| m.steps).sum();
            let (start, end) = (self.at(d, s), self.at(d, s + len));
            let avg = ex_bpm.iter().sum::<i64>() as f64 / ex_bpm.len().max(1) as f64;
            let value = json!({
                "interval": self.interval(start, end), "exerciseType": "RUNNING", "displayName": "Run", "activeDuration": format!("{}s", len * 60),
                "metricsSummary": {"caloriesKcal": steps as f64 * 0.05, "distanceMillimeters": steps * 760, "steps": steps.to_string(),
                    "averageHeartRateBeatsPerMinute": (avg * 10.0).round() / 10.0, "activeZoneMinutes": (len * 2).to_string(),
                    "heartRateZoneDurations": {"vigorousTime": format!("{}s", len * 60)}},
                "exerciseMetadata": {"hasGps": false},
            });
            let name = format!("users/me/dataTypes/exercise/dataPoints/{}", id + 5);
            by.put("exercise", || Point {
                at: start,
                offset: self.offset(start),
                date: None,
                body: json!({"name": name, "dataSource": source(), "exercise": value}),
            });
        }
        let rhr = self.resting_hr(d);
        by.put("daily-resting-heart-rate", || {
            self.daily_point(
                d,
                "dailyRestingHeartRate",
                json!({"beatsPerMinute": rhr.to_string(), "dailyRestingHeartRateMetadata": {"calculationMethod": "WITH_SLEEP"}}),
            )
        });
        let hrv = 35 + pick(d, 51, 0, 25);
        by.put("daily-heart-rate-variability", || {
            self.daily_point(
                d,
                "dailyHeartRateVariability",
                json!({
            "averageHeartRateVariabilityMilliseconds": hrv as f64, "deepSleepRootMeanSquareOfSuccessiveDifferencesMilliseconds": (hrv + 8) as f64,
            "nonRemHeartRateBeatsPerMinute": (rhr + 2).to_string(), "entropy": 2.1 + pick(d, 52, 0, 40) as f64 / 100.0}),
            )
        });
        let spo2 = 95.0 + pick(d, 53, 0, 20) as f64 / 10.0;
        by.put("daily-oxygen-saturation", || self.daily_point(d, "dailyOxygenSaturation", json!({
            "averagePercentage": spo2, "lowerBoundPercentage": spo2 - 2.0, "upperBoundPercentage": (spo2 + 2.0).min(100.0), "standardDeviationPercentage": 0.8})));
        by.put("daily-respiratory-rate", || self.daily_point(d, "dailyRespiratoryRate", json!({"breathsPerMinute": 13.0 + pick(d, 54, 0, 30) as f64 / 10.0})));
        let night_c = 33.8 + pick(d, 55, 0, 50) as f64 / 100.0;
        by.put("daily-sleep-temperature-derivations", || {
            self.daily_point(
                d,
                "dailySleepTemperatureDerivations",
                json!({
            "nightlyTemperatureCelsius": night_c, "baselineTemperatureCelsius": 34.02, "relativeNightlyStddev30dCelsius": 0.36}),
            )
        });
        by.put("daily-vo2-max", || {
            self.daily_point(d, "dailyVo2Max", json!({"vo2Max": 44.0 + pick(d, 56, 0, 10) as f64 / 10.0, "cardioFitnessLevel": "GOOD", "estimated": true}))
        });
        if h(d, 57).is_multiple_of(3) {
            let t = self.at(d, 7 * 60 + 5);
            by.put("weight", || self.sample_point("weight", t, json!({"weightGrams": 72_000 + pick(d, 58, 0, 1500)})));
            by.put("body-fat", || self.sample_point("bodyFat", t, json!({"percentage": 18.0 + pick(d, 59, 0, 20) as f64 / 10.0})));
        }
        for points in by.by.values_mut() {
            // Nothing after now: a sleep that has not ended, a minute still to come.
            points.retain(|p| p.at <= now);
        }
        Day { by_type: by.by }
    }
}

/// A day's points as they are made: only those of the type asked for, when one is.
struct Points<'a> {
    only: Option<&'a str>,
    by: HashMap<&'static str, Vec<Point>>,
}

impl Points<'_> {
    fn put(&mut self, t: &'static str, make: impl FnOnce() -> Point) {
        if self.only.is_none_or(|o| o == t) {
            self.by.entry(t).or_default().push(make());
        }
    }
}

/// The data types Google serves and the sample person has; every other known type is empty.
pub const TYPES: &[&str] = &[
    "steps",
    "distance",
    "active-energy-burned",
    "floors",
    "active-zone-minutes",
    "heart-rate",
    "daily-resting-heart-rate",
    "daily-heart-rate-variability",
    "daily-oxygen-saturation",
    "daily-respiratory-rate",
    "daily-sleep-temperature-derivations",
    "daily-vo2-max",
    "weight",
    "body-fat",
    "sleep",
    "exercise",
];

/// Types the API knows that the sample person has none of (they list empty).
pub const OTHER_TYPES: &[&str] = &[
    "altitude",
    "basal-energy-burned",
    "active-minutes",
    "activity-level",
    "sedentary-period",
    "time-in-heart-rate-zone",
    "swim-lengths-data",
    "heart-rate-variability",
    "daily-heart-rate-zones",
    "oxygen-saturation",
    "respiratory-rate-sleep-summary",
    "core-body-temperature",
    "vo2-max",
    "run-vo2-max",
    "height",
    "blood-glucose",
    "hydration-log",
    "nutrition-log",
];

/// The types whose points are samples at an instant (reference §2.3); every other type but the
/// daily ones and the sessions is an interval.
pub const SAMPLE_TYPES: &[&str] = &[
    "heart-rate",
    "weight",
    "body-fat",
    "height",
    "oxygen-saturation",
    "heart-rate-variability",
    "vo2-max",
    "run-vo2-max",
    "blood-glucose",
    "core-body-temperature",
    "respiratory-rate-sleep-summary",
];

/// The fields a type may be filtered on (reference §2.3), after its snake_case name.
fn filter_fields(t: &str) -> &'static [&'static str] {
    match t {
        "sleep" => &["interval.end_time", "interval.civil_end_time"],
        "exercise" => &["interval.civil_start_time"],
        t if t.starts_with("daily-") => &["date"],
        t if SAMPLE_TYPES.contains(&t) => &["sample_time.physical_time", "sample_time.civil_time"],
        _ => &["interval.start_time", "interval.civil_start_time"],
    }
}

/// One comparison of a filter.
struct Bound {
    field: String,
    at_least: bool,
    value: String,
}

/// `a >= "x" AND a < "y"`; anything else is Google's 400.
fn parse_filter(t: &str, f: &str) -> Result<Vec<Bound>, Answer> {
    let bad = |why: &str| error(400, "INVALID_ARGUMENT", "INVALID_DATA_POINT_FILTER", why);
    let prefix = format!("{}.", t.replace('-', "_"));
    let mut out = vec![];
    for part in f.split(" AND ") {
        let (field, at_least, value) = if let Some((a, b)) = part.split_once(">=") {
            (a, true, b)
        } else if let Some((a, b)) = part.split_once('<') {
            (a, false, b)
        } else {
            return Err(bad(&format!("Only >= and < are supported: {part}")));
        };
        let field = field.trim();
        let member = field.strip_prefix(&prefix).ok_or_else(|| bad(&format!("The filter names another data type: {field}")))?;
        if !filter_fields(t).contains(&member) {
            return Err(error(400, "INVALID_ARGUMENT", "INVALID_DATA_POINT_FILTER_DATA_TYPE_MEMBER", &format!("{field} cannot be filtered on")));
        }
        let value = value.trim().trim_matches('"').to_string();
        out.push(Bound { field: member.to_string(), at_least, value });
    }
    Ok(out)
}

/// Whether point `p` is within `b`.
fn within(p: &Point, b: &Bound) -> bool {
    let ord = if b.field == "date" {
        match (p.date, b.value.parse::<Date>()) {
            (Some(d), Ok(v)) => d.cmp(&v),
            _ => return false,
        }
    } else if b.field.contains("civil") {
        let v = b.value.parse::<DateTime>().or_else(|_| b.value.parse::<Date>().map(|d| d.to_datetime(jiff::civil::time(0, 0, 0, 0))));
        match v {
            Ok(v) => p.civil().cmp(&v),
            Err(_) => return false,
        }
    } else {
        match b.value.parse::<Timestamp>() {
            Ok(v) => p.at.cmp(&v),
            Err(_) => return false,
        }
    };
    if b.at_least {
        ord.is_ge()
    } else {
        ord.is_lt()
    }
}

/// Answers as Google's API would, in process or behind the twin.
pub struct Api<'a> {
    pub person: &'a Person,
    pub now: Timestamp,
    /// At most this many points a page whatever `pageSize` says (the twin's, to make listings page).
    pub page_cap: Option<usize>,
}

impl Api<'_> {
    /// The points of type `t` on the days `[first, last]`.
    fn points(&self, t: &str, first: Date, last: Date) -> Vec<Point> {
        let mut out = vec![];
        let mut d = first.max(FIRST_DAY);
        let last = last.min(self.now.to_zoned(self.person.tz.clone()).date());
        while d <= last {
            out.extend(self.person.day_of(d, self.now, Some(t)).by_type.remove(t).unwrap_or_default());
            d = d.tomorrow().unwrap_or(Date::MAX);
        }
        // Newest first, as Google lists (reference §2.3).
        out.sort_by_key(|p| std::cmp::Reverse(p.at));
        out
    }

    /// The points of type `t` on the days `[first, last]` within `bounds`, newest first, as far
    /// back as `need` of them reach (and a week more, for a point of an older day that sorts
    /// after a newer day's): the days are made a week at a time from the newest, so a listing
    /// without a filter does not make every day since the first for each page.
    fn newest(&self, t: &str, (first, last): (Date, Date), bounds: &[Bound], need: usize) -> Vec<Point> {
        let today = self.now.to_zoned(self.person.tz.clone()).date();
        let first = first.max(FIRST_DAY);
        let (mut out, mut hi, mut enough) = (vec![], last.min(today), false);
        while hi >= first {
            let lo = hi.checked_sub(jiff::Span::new().days(6)).unwrap_or(first).max(first);
            let mut week = self.points(t, lo, hi);
            week.retain(|p| bounds.iter().all(|b| within(p, b)));
            out.extend(week);
            if enough {
                break;
            }
            enough = out.len() >= need;
            hi = match lo.yesterday() {
                Ok(d) => d,
                Err(_) => break,
            };
        }
        out.sort_by_key(|p| std::cmp::Reverse(p.at));
        out
    }

    /// The days a filter could reach, one more on each side for the offsets; no filter: every day.
    fn days(&self, bounds: &[Bound]) -> (Date, Date) {
        let day = |b: &Bound| b.value.get(..10).and_then(|s| s.parse::<Date>().ok());
        let first = bounds.iter().filter(|b| b.at_least).filter_map(day).max().unwrap_or(FIRST_DAY);
        let last = bounds.iter().filter(|b| !b.at_least).filter_map(day).min().unwrap_or(Date::MAX);
        (first.yesterday().unwrap_or(first), last.tomorrow().unwrap_or(last))
    }

    /// Answer `GET path?q` (`path` from `/v4/`, any prefix before it).
    pub fn answer(&self, path: &str, q: &HashMap<String, String>) -> Answer {
        let Some(route) = path.find("/v4/users/").map(|i| &path[i + "/v4/users/".len()..]) else {
            return error(404, "NOT_FOUND", "NOT_FOUND", &format!("The requested URL {path} was not found on this server."));
        };
        let parts: Vec<&str> = route.split('/').collect();
        let (t, list) = match parts.as_slice() {
            [_, "identity"] => return Answer { status: 200, body: json!({"name": "users/me/identity", "healthUserId": "sample-person"}).to_string() },
            [_, "dataTypes", t, list] => (*t, *list),
            _ => return error(404, "NOT_FOUND", "NOT_FOUND", &format!("The requested URL {path} was not found on this server.")),
        };
        if list != "dataPoints" && list != "dataPoints:reconcile" {
            return error(404, "NOT_FOUND", "NOT_FOUND", &format!("The requested URL {path} was not found on this server."));
        }
        if !TYPES.contains(&t) && !OTHER_TYPES.contains(&t) {
            return error(400, "INVALID_ARGUMENT", "INVALID_PARENT_DATA_TYPE_COLLECTION", &format!("The data type ID '{t}' is not supported."));
        }
        let bounds = match q.get("filter").map(|f| parse_filter(t, f)).transpose() {
            Ok(b) => b.unwrap_or_default(),
            Err(a) => return a,
        };
        let most = if t == "sleep" || t == "exercise" { MAX_SESSION_PAGE } else { MAX_PAGE };
        let size = match q.get("pageSize").map(|s| s.parse::<usize>()) {
            None => DEFAULT_PAGE.min(most),
            Some(Ok(n)) if n > 0 => n.min(most),
            Some(_) => return error(400, "INVALID_ARGUMENT", "INVALID_PAGE_SIZE", "pageSize must be a positive number"),
        };
        let size = self.page_cap.map_or(size, |c| size.min(c.max(1)));
        let from = match q.get("pageToken").filter(|t| !t.is_empty()) {
            None => 0,
            Some(tok) => match tok.strip_prefix("pt-").and_then(|n| n.parse::<usize>().ok()) {
                Some(n) => n,
                None => return error(400, "INVALID_ARGUMENT", "INVALID_PAGE_TOKEN", "The page token is not valid."),
            },
        };
        let points = self.newest(t, self.days(&bounds), &bounds, from + size + 1);
        let more = points.len() > from + size;
        let page: Vec<Value> = points.into_iter().skip(from).take(size).map(|p| p.body).collect();
        let mut body = json!({ "dataPoints": page });
        if more {
            body["nextPageToken"] = json!(format!("pt-{}", from + size));
        }
        Answer { status: 200, body: body.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn an_exercise_agrees_with_its_minutes_and_heart_rate() {
        let p = Person::new("Europe/Berlin");
        let now: Timestamp = "2026-06-10T00:00:00Z".parse().unwrap();
        let mut d = jiff::civil::date(2026, 6, 1);
        let mut seen = 0;
        while d < jiff::civil::date(2026, 6, 9) {
            let day = p.day(d, now);
            if let Some(ex) = day.by_type.get("exercise").and_then(|e| e.first()) {
                let e = &ex.body["exercise"];
                let (s, en): (Timestamp, Timestamp) =
                    (e["interval"]["startTime"].as_str().unwrap().parse().unwrap(), e["interval"]["endTime"].as_str().unwrap().parse().unwrap());
                let steps: i64 = day.by_type["steps"]
                    .iter()
                    .filter(|m| m.at >= s && m.at < en)
                    .map(|m| m.body["steps"]["count"].as_str().unwrap().parse::<i64>().unwrap())
                    .sum();
                assert_eq!(e["metricsSummary"]["steps"], steps.to_string());
                let hr: Vec<i64> = day.by_type["heart-rate"]
                    .iter()
                    .filter(|m| m.at >= s && m.at < en)
                    .map(|m| m.body["heartRate"]["beatsPerMinute"].as_str().unwrap().parse().unwrap())
                    .collect();
                let avg = hr.iter().sum::<i64>() as f64 / hr.len() as f64;
                assert!((e["metricsSummary"]["averageHeartRateBeatsPerMinute"].as_f64().unwrap() - avg).abs() < 0.1);
                seen += 1;
            }
            d = d.tomorrow().unwrap();
        }
        assert!(seen > 0);
    }

    #[test]
    fn listings_page_to_the_end_and_refuse_what_google_refuses() {
        let p = Person::new("Europe/Berlin");
        let api = Api { person: &p, now: "2026-06-10T00:00:00Z".parse().unwrap(), page_cap: Some(3) };
        let f = r#"sleep.interval.civil_end_time >= "2026-06-01" AND sleep.interval.civil_end_time < "2026-06-08""#;
        let (mut n, mut token) = (0, String::new());
        loop {
            let a = api.answer("/v4/users/me/dataTypes/sleep/dataPoints", &q(&[("filter", f), ("pageSize", "25"), ("pageToken", &token)]));
            let v: Value = serde_json::from_str(&a.body).unwrap();
            n += v["dataPoints"].as_array().unwrap().len();
            match v["nextPageToken"].as_str() {
                Some(t) => token = t.to_string(),
                None => break,
            }
        }
        assert!(n >= 7, "a night a day at least, got {n}");
        let bad = api.answer("/v4/users/me/dataTypes/sleep/dataPoints", &q(&[("filter", r#"sleep.interval.start_time >= "2026-06-01T00:00:00Z""#)]));
        assert_eq!(bad.status, 400);
        assert_eq!(api.answer("/v4/users/me/dataTypes/heartRate/dataPoints", &q(&[])).status, 400);
    }
}
