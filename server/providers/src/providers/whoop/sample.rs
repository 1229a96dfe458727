//! WHOOP's built-in sample data: a deterministic member in WHOOP's own wire format (API v2), and
//! [`Api`], which answers a read of `/v2/...` as WHOOP does: `{"records", "next_token"}` with the
//! token absent on the last page, `limit` 10 by default and 400 above 25, records newest first,
//! a record kept when it overlaps `[start, end)` (`end` absent = now), and a score only when
//! `score_state` is `SCORED`. The sandbox answers through it in process, and the twin serves it
//! behind WHOOP's OAuth, rate limits and faults, so both run the same reading code.
//!
//! No real WHOOP reply was recorded (reference whoop/README.md): the shapes follow WHOOP's OpenAPI
//! document (§4): int64 cycle ids, UUID sleep and workout ids, UTC instants with milliseconds,
//! `timezone_offset` beside them, recoveries without times of their own.
use crate::providers::day_hash as h;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The first wake-up day the sample member has data.
const FIRST_DAY: Date = jiff::civil::date(2024, 1, 1);
/// WHOOP's page size: 10 unless asked, at most 25 (reference §3.1).
pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 25;
pub const USER_ID: i64 = 10_129;
/// The member's maximum heart rate (`/v2/user/measurement/body`): WHOOP's zones are its 50, 60, … 90 %.
pub const MAX_HR: u8 = 192;

/// The sample member, living in `tz`.
#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
}

/// How the API bends where WHOOP's own behaviour is unverified (reference §6.1, §11): the twin
/// flips these to prove `vitals` depends on none of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Quirks {
    /// Keep a record only when it *starts* in `[start, end)`, rather than when it overlaps it.
    pub start_only_filter: bool,
    /// The current cycle says `"end": null` (seen live) rather than leaving `end` out (documented).
    pub end_null: bool,
    /// A page with no records that still carries a `next_token`, before each page after the first.
    pub empty_pages: bool,
}

/// One wake-up day of the member: the night that ended that morning, a nap on some days, the
/// cycle that night began, its recovery, and the day's workouts.
pub struct Day {
    pub sleeps: Vec<Value>,
    pub cycle: Value,
    pub recovery: Value,
    pub workouts: Vec<Value>,
}

fn uuid(d: Date, salt: u64) -> String {
    let (a, b) = (h(d, salt), h(d, salt ^ 0x3c3c));
    format!("{:08x}-{:04x}-4{:03x}-9{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff, b >> 52, b & 0xffff_ffff_ffff)
}

/// A number in `[lo, lo + span)` from the day's hash.
fn pick(d: Date, salt: u64, lo: i64, span: i64) -> i64 {
    lo + (h(d, salt) % span.max(1) as u64) as i64
}

/// `2026-09-03T10:51:19.660Z`: how WHOOP writes every instant.
pub fn instant(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `-04:00`, `+09:00`, or `Z` at UTC, as WHOOP's `timezone_offset`.
fn offset_of(tz: &TimeZone, t: Timestamp) -> String {
    let s = tz.to_offset(t).seconds();
    if s == 0 {
        return "Z".into();
    }
    let sign = if s < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", s.abs() / 3600, s.abs() % 3600 / 60)
}

/// The cycle id of the night that ends on the morning of `d`.
pub fn cycle_id(d: Date) -> i64 {
    90_000 + (d - FIRST_DAY).get_days() as i64
}

impl Person {
    pub fn new(tz: &str) -> Person {
        Person { tz: TimeZone::get(tz).unwrap_or(TimeZone::UTC) }
    }

    fn at(&self, d: Date, minute_of_day: i64, millis: i64) -> Timestamp {
        let base = DateTime::from_parts(d, jiff::civil::time(0, 0, 0, 0)).to_zoned(self.tz.clone()).map(|z| z.timestamp()).unwrap_or(Timestamp::UNIX_EPOCH);
        base.checked_add(minute_of_day.minutes()).and_then(|t| t.checked_add(millis.milliseconds())).unwrap_or(base)
    }

    /// The night ending on the morning of `d`: its start and end.
    fn night(&self, d: Date) -> (Timestamp, Timestamp) {
        let eve = d.yesterday().unwrap_or(d);
        // Most nights start before midnight; some after it (the two-cycles-on-one-date case).
        let start = self.at(eve, 22 * 60 + pick(d, 1, 0, 150), pick(d, 11, 0, 1000));
        let end = self.at(d, 6 * 60 + pick(d, 2, 0, 100), pick(d, 12, 0, 1000));
        (start, end)
    }

    /// Whether WHOOP could score the night ending on `d` (a strap off for most of it: no).
    fn scorable(&self, d: Date) -> bool {
        !h(d, 13).is_multiple_of(19)
    }

    fn base(&self, id: Value, start: Timestamp, end: Option<Timestamp>, made: Timestamp) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("id".into(), id);
        m.insert("user_id".into(), json!(USER_ID));
        m.insert("created_at".into(), json!(instant(made)));
        m.insert("updated_at".into(), json!(instant(made.checked_add(6.minutes()).unwrap_or(made))));
        m.insert("start".into(), json!(instant(start)));
        m.insert("end".into(), end.map(|e| json!(instant(e))).unwrap_or(Value::Null));
        m.insert("timezone_offset".into(), json!(offset_of(&self.tz, start)));
        m
    }

    fn scored(m: &mut serde_json::Map<String, Value>, state: &str, score: Value) {
        m.insert("score_state".into(), json!(state));
        if state == "SCORED" {
            m.insert("score".into(), score);
        }
    }

    fn sleep(&self, d: Date, id: String, start: Timestamp, end: Timestamp, nap: bool, state: &str) -> Value {
        let in_bed = (end.as_millisecond() - start.as_millisecond()).max(0);
        let awake = in_bed * pick(d, if nap { 31 } else { 21 }, 4, 8) / 100;
        let asleep = in_bed - awake;
        let deep = asleep * pick(d, 22, 18, 8) / 100;
        let rem = asleep * pick(d, 23, 19, 8) / 100;
        let need = if nap { 0 } else { 27_000_000 + pick(d, 24, 0, 1_800_000) };
        let mut score = json!({
            "stage_summary": {
                "total_in_bed_time_milli": in_bed, "total_awake_time_milli": awake, "total_no_data_time_milli": 0,
                "total_light_sleep_time_milli": asleep - deep - rem, "total_slow_wave_sleep_time_milli": deep,
                "total_rem_sleep_time_milli": rem, "sleep_cycle_count": if nap { 1 } else { 4 + pick(d, 25, 0, 3) },
                "disturbance_count": pick(d, 26, 0, 12),
            },
            "sleep_needed": {
                "baseline_milli": need, "need_from_sleep_debt_milli": if nap { 0 } else { pick(d, 27, 0, 2_400_000) },
                "need_from_recent_strain_milli": if nap { 0 } else { pick(d, 28, 0, 900_000) }, "need_from_recent_nap_milli": 0,
            },
            "sleep_efficiency_percentage": 100.0 * asleep as f64 / in_bed.max(1) as f64,
        });
        if !nap {
            score["respiratory_rate"] = json!(14.0 + pick(d, 29, 0, 300) as f64 / 100.0);
            score["sleep_performance_percentage"] = json!(pick(d, 30, 62, 38) as f64);
            score["sleep_consistency_percentage"] = json!(pick(d, 32, 50, 45) as f64);
        }
        let mut m = self.base(json!(id), start, Some(end), end.checked_add(2.minutes()).unwrap_or(end));
        m.insert("cycle_id".into(), json!(cycle_id(d)));
        m.insert("nap".into(), json!(nap));
        Person::scored(&mut m, state, score);
        Value::Object(m)
    }

    /// The wake-up day `d` as WHOOP holds it at `now` (`None`: that night has not ended yet).
    pub fn day(&self, d: Date, now: Timestamp) -> Option<Day> {
        let (start, end) = self.night(d);
        if end > now || d < FIRST_DAY {
            return None;
        }
        let scorable = self.scorable(d);
        // A night that ended minutes ago is not scored yet.
        let fresh = now.as_second() - end.as_second() < 45 * 60;
        let state = if fresh {
            "PENDING_SCORE"
        } else if scorable {
            "SCORED"
        } else {
            "UNSCORABLE"
        };
        let main_id = uuid(d, 40);
        let mut sleeps = vec![self.sleep(d, main_id.clone(), start, end, false, state)];
        if h(d, 41).is_multiple_of(5) {
            let (ns, ne) = (self.at(d, 14 * 60 + pick(d, 42, 0, 60), 217), self.at(d, 15 * 60 + pick(d, 43, 0, 30), 604));
            if ne <= now {
                sleeps.push(self.sleep(d, uuid(d, 44), ns, ne, true, "SCORED"));
            }
        }
        // The cycle this night began ends when the next night starts: absent while it runs.
        let next_start = d.tomorrow().ok().map(|n| self.night(n).0).filter(|t| *t <= now);
        let mut cycle = self.base(json!(cycle_id(d)), start, next_start, end);
        let workouts = self.workouts(d, now, end);
        // The day holds its workouts: its strain at least theirs, its energy theirs and more, its
        // highest heart rate theirs when they reached higher than the rest of the day.
        let scores: Vec<&Value> = workouts.iter().filter_map(|w| w.get("score")).collect();
        let of = |k: &str| scores.iter().filter_map(|s| s[k].as_f64()).collect::<Vec<f64>>();
        let strain = of("strain").into_iter().fold(6.0 + pick(d, 50, 0, 600) as f64 / 100.0, |a, w| a.max((w + 1.2).min(21.0)));
        let kilojoule = 7000.0 + pick(d, 51, 0, 4000) as f64 + 0.25 + of("kilojoule").iter().sum::<f64>();
        let max_hr = of("max_heart_rate").into_iter().fold((110 + pick(d, 53, 0, 30)) as f64, f64::max);
        let cycle_state = if scorable { "SCORED" } else { "UNSCORABLE" };
        Person::scored(
            &mut cycle,
            cycle_state,
            json!({"strain": (strain * 100.0).round() / 100.0, "kilojoule": kilojoule, "average_heart_rate": 64 + pick(d, 52, 0, 16), "max_heart_rate": max_hr as i64}),
        );
        let mut recovery = serde_json::Map::new();
        recovery.insert("cycle_id".into(), json!(cycle_id(d)));
        recovery.insert("sleep_id".into(), json!(main_id));
        recovery.insert("user_id".into(), json!(USER_ID));
        recovery.insert("created_at".into(), json!(instant(end.checked_add(7.minutes()).unwrap_or(end))));
        recovery.insert("updated_at".into(), json!(instant(end.checked_add(13.minutes()).unwrap_or(end))));
        let calibrating = d < FIRST_DAY.checked_add(4.days()).unwrap_or(FIRST_DAY);
        let mut score = json!({"user_calibrating": calibrating, "recovery_score": pick(d, 60, 20, 79),
            "resting_heart_rate": 48 + pick(d, 61, 0, 14), "hrv_rmssd_milli": 30.0 + pick(d, 62, 0, 6000) as f64 / 100.0});
        // SpO2 and skin temperature come from WHOOP 4.0 and later: most nights, not all.
        if !h(d, 63).is_multiple_of(6) {
            score["spo2_percentage"] = json!(94.0 + pick(d, 64, 0, 400) as f64 / 100.0);
            score["skin_temp_celsius"] = json!(33.0 + pick(d, 65, 0, 150) as f64 / 100.0);
        }
        Person::scored(&mut recovery, state, score);
        Some(Day { sleeps, cycle: Value::Object(cycle), recovery: Value::Object(recovery), workouts })
    }

    /// The day's workouts, none before the night ended (`woke`): a run most days (distance and
    /// altitude), weights some (neither). Each is its heart rate minute by minute, which its
    /// average, highest and time in each zone (% of [`MAX_HR`]) are read from.
    fn workouts(&self, d: Date, now: Timestamp, woke: Timestamp) -> Vec<Value> {
        let mut out = vec![];
        let kinds: [(&str, u64, i64); 2] = [("running", 70, 17 * 60), ("weightlifting", 80, 7 * 60 + 30)];
        for (sport, salt, minute) in kinds {
            if h(d, salt) % 3 == 2 {
                continue;
            }
            let start = self.at(d, minute + pick(d, salt + 1, 0, 60), 4).max(woke.checked_add(20.minutes()).unwrap_or(woke));
            let mins = pick(d, salt + 2, 30, 45);
            let end = start.checked_add(mins.minutes()).unwrap_or(start);
            if end > now {
                continue;
            }
            let bpm: Vec<i64> = (0..mins)
                .map(|j| {
                    let x = j as f64;
                    let v = if sport == "running" {
                        112.0 + 52.0 * (1.0 - (-x / 6.0).exp()) + 6.0 * (x / 4.0).sin()
                    } else {
                        96.0 + 24.0 * (1.0 - (-x / 5.0).exp()) + 14.0 * (x / 2.0).sin().abs()
                    };
                    (v + pick(d, salt + 10 + j as u64, 0, 4) as f64).round() as i64
                })
                .collect();
            let mut z = [0i64; 6];
            for b in &bpm {
                let pct = *b as f64 * 100.0 / f64::from(MAX_HR);
                z[((pct - 40.0) / 10.0).floor().clamp(0.0, 5.0) as usize] += 60_000;
            }
            let mut score = json!({"strain": 7.0 + pick(d, salt + 3, 0, 900) as f64 / 100.0,
                "average_heart_rate": (bpm.iter().sum::<i64>() as f64 / bpm.len().max(1) as f64).round() as i64,
                "max_heart_rate": bpm.iter().max(), "kilojoule": 1000.0 + pick(d, salt + 6, 0, 2000) as f64,
                "percent_recorded": 100,
                "zone_durations": {"zone_zero_milli": z[0], "zone_one_milli": z[1], "zone_two_milli": z[2], "zone_three_milli": z[3],
                    "zone_four_milli": z[4], "zone_five_milli": z[5]}});
            if sport == "running" {
                score["distance_meter"] = json!(mins as f64 * 170.0 + 0.5);
                score["altitude_gain_meter"] = json!(pick(d, salt + 7, 5, 80) as f64);
                score["altitude_change_meter"] = json!(-1.5);
            }
            let mut m = self.base(json!(uuid(d, salt + 8)), start, Some(end), end.checked_add(5.minutes()).unwrap_or(end));
            m.insert("sport_name".into(), json!(sport));
            // Scored a few minutes after it ends.
            let state = if now.as_second() - end.as_second() < 15 * 60 { "PENDING_SCORE" } else { "SCORED" };
            Person::scored(&mut m, state, score);
            out.push(Value::Object(m));
        }
        out
    }
}

/// The sample served as WHOOP's API serves it, at instant `now`.
pub struct Api<'a> {
    pub person: &'a Person,
    pub now: Timestamp,
    pub quirks: Quirks,
}

/// An answer: status and body.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

fn error(status: u16, message: &str) -> Answer {
    Answer { status, body: json!({"message": message}).to_string() }
}

/// The opaque page token: base64 of the offset and the filters it was issued for.
fn token(offset: usize, bound: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{offset}|{bound}"))
}

fn offset(t: Option<&String>, bound: &str) -> Result<usize, Answer> {
    use base64::Engine as _;
    let Some(t) = t else { return Ok(0) };
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(t).ok().and_then(|b| String::from_utf8(b).ok());
    let (n, b) = text.as_deref().and_then(|s| s.split_once('|')).ok_or_else(|| error(400, "Invalid nextToken"))?;
    if b != bound {
        return Err(error(400, "nextToken was issued for other filters"));
    }
    n.parse().map_err(|_| error(400, "Invalid nextToken"))
}

fn at(v: &Value, k: &str) -> Option<Timestamp> {
    v.get(k).and_then(Value::as_str).and_then(|s| s.parse().ok())
}

impl Api<'_> {
    /// Every wake-up day whose records could touch `[start, end)`.
    fn days(&self, start: Timestamp, end: Timestamp) -> Vec<Day> {
        let tz = &self.person.tz;
        let first = start.to_zoned(tz.clone()).date().yesterday().unwrap_or(FIRST_DAY).max(FIRST_DAY);
        let last = end.min(self.now).to_zoned(tz.clone()).date().tomorrow().unwrap_or(Date::MAX);
        let mut out = vec![];
        let mut d = first;
        while d <= last {
            out.extend(self.person.day(d, self.now));
            d = d.tomorrow().unwrap_or(Date::MAX);
        }
        out
    }

    /// Whether a record from `s` to `e` (None: still running) is kept for `[start, end)`.
    fn kept(&self, s: Timestamp, e: Option<Timestamp>, start: Timestamp, end: Timestamp) -> bool {
        if self.quirks.start_only_filter {
            return s >= start && s < end;
        }
        e.unwrap_or(self.now) > start && s < end
    }

    fn listing(&self, what: &str, q: &HashMap<String, String>) -> Answer {
        let parse = |k: &str| q.get(k).map(|v| v.parse::<Timestamp>().map_err(|_| error(400, &format!("{k}: not a date-time"))));
        let (start, end) = match (parse("start").transpose(), parse("end").transpose()) {
            (Ok(s), Ok(e)) => (s.unwrap_or(FIRST_DAY.to_zoned(TimeZone::UTC).map(|z| z.timestamp()).unwrap_or(Timestamp::UNIX_EPOCH)), e.unwrap_or(self.now)),
            (Err(a), _) | (_, Err(a)) => return a,
        };
        let limit = match q.get("limit").map(|l| l.parse::<usize>()) {
            None => DEFAULT_LIMIT,
            Some(Ok(n)) if (1..=MAX_LIMIT).contains(&n) => n,
            Some(_) => return error(400, "limit must be between 1 and 25"),
        };
        let days = self.days(start, end);
        // (start, end, record): a recovery has no times of its own and is listed by its sleep's.
        let times = |v: &Value| at(v, "start").map(|s| (s, at(v, "end")));
        let mut rows: Vec<(Timestamp, Option<Timestamp>, Value)> = match what {
            "cycle" => days.into_iter().filter_map(|d| times(&d.cycle).map(|(s, e)| (s, e, d.cycle))).collect(),
            "sleep" => days.into_iter().flat_map(|d| d.sleeps).filter_map(|v| times(&v).map(|(s, e)| (s, e, v))).collect(),
            "workout" => days.into_iter().flat_map(|d| d.workouts).filter_map(|v| times(&v).map(|(s, e)| (s, e, v))).collect(),
            _ => days.into_iter().filter_map(|d| times(&d.sleeps[0]).map(|(s, e)| (s, e, d.recovery))).collect(),
        };
        rows.retain(|(s, e, _)| self.kept(*s, *e, start, end));
        rows.sort_by_key(|r| std::cmp::Reverse(r.0));
        let bound = format!("{}|{}", q.get("start").map(String::as_str).unwrap_or(""), q.get("end").map(String::as_str).unwrap_or(""));
        let raw = q.get("nextToken");
        // The quirk's empty page: a token that only leads to the real page.
        if let Some(t) = raw.and_then(|t| t.strip_prefix("empty-")).filter(|_| self.quirks.empty_pages) {
            return Answer { status: 200, body: json!({"records": [], "next_token": t}).to_string() };
        }
        let from = match offset(raw, &bound) {
            Ok(n) => n,
            Err(a) => return a,
        };
        let total = rows.len();
        let mut records: Vec<Value> = rows.into_iter().skip(from).take(limit).map(|(_, _, v)| v).collect();
        if !self.quirks.end_null {
            // WHOOP documents the running cycle's `end` as absent.
            for m in records.iter_mut().filter_map(Value::as_object_mut) {
                if m.get("end").is_some_and(Value::is_null) {
                    m.remove("end");
                }
            }
        }
        let mut body = json!({ "records": records });
        if from + limit < total {
            let t = token(from + limit, &bound);
            body["next_token"] = json!(if self.quirks.empty_pages { format!("empty-{t}") } else { t });
        }
        Answer { status: 200, body: body.to_string() }
    }

    /// Answer `GET path?q` as WHOOP's API v2 would (`path` from `/v2/`, any prefix before it).
    pub fn answer(&self, path: &str, q: &HashMap<String, String>) -> Answer {
        let Some(route) = path.find("/v2/").map(|i| &path[i..]) else {
            return error(404, "No resource found");
        };
        match route {
            "/v2/cycle" => self.listing("cycle", q),
            "/v2/recovery" => self.listing("recovery", q),
            "/v2/activity/sleep" => self.listing("sleep", q),
            "/v2/activity/workout" => self.listing("workout", q),
            "/v2/user/measurement/body" => {
                Answer { status: 200, body: json!({"height_meter": 1.8288, "weight_kilogram": 82.5, "max_heart_rate": MAX_HR}).to_string() }
            }
            "/v2/user/profile/basic" => Answer {
                status: 200,
                body: json!({"user_id": USER_ID, "email": "sample.member@example.com", "first_name": "Sample", "last_name": "Member"}).to_string(),
            },
            // There is no `/v2/recovery/{id}` (reference §3): like every unknown route, 404.
            _ => error(404, "No resource found"),
        }
    }
}
