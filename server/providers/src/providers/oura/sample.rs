//! Oura's built-in sample data: a deterministic person in Oura's own wire format, and [`Api`],
//! which answers a read of `/v2/sandbox/usercollection/...` as Oura does (the `{data, next_token}`
//! envelope, opaque page tokens, `end_date` excluding the last day where Oura's does, `latest` on
//! the two series that honour it). In sandbox mode the server sends its requests here instead of
//! to the network, so the sample runs through the same request, paging and decoding code as a
//! real account, and `--check` passes on a machine without a network.
//!
//! The shapes follow the real responses recorded in the reference (austinmoody/go_oura's fixtures,
//! January 2024: UUID ids, the user's offset on local times, `+00:00` on daily timestamps, sample
//! series as `{interval, items, timestamp}` with a millisecond timestamp and `null` items, stage
//! strings one character per epoch) and the OpenAPI models where nothing was recorded.
use crate::providers::day_hash as h;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Records per page of a document collection (Oura's own size is not published).
const DOC_PAGE: usize = 50;
/// Rows per page of `heartrate` and `ring_battery_level`, as Oura sends them.
const SERIES_PAGE: usize = 1_000;
/// The first day the sample person has data.
const FIRST_DAY: Date = jiff::civil::date(2020, 1, 1);

const RESILIENCE: [&str; 5] = ["limited", "adequate", "solid", "strong", "exceptional"];

/// The sample user, living in `tz`.
#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
}

/// Minutes of the day the ring charges (off the finger): 20:30 to 21:30.
const CHARGING: (i64, i64) = (20 * 60 + 30, 21 * 60 + 30);
/// The sample person's weight (kg), what calories are counted from MET with.
const WEIGHT_KG: f64 = 70.0;

type Span = (Timestamp, Timestamp);

/// A day of the person (see [`Person::plan`]).
struct Plan {
    /// The night ending the day, and the one starting that evening (its wake-up day beside it).
    nights: [(Date, Span); 2],
    /// The workout, its activity and intensity.
    workout: Option<(Span, &'static str, &'static str)>,
    nap: Option<Span>,
    session: Option<Span>,
    charging: Span,
}

/// What the person was doing at an instant.
#[derive(Clone, Copy, PartialEq)]
enum Doing {
    /// Asleep in the night ending that day, in its `i`-th five minutes.
    Asleep(Date, usize),
    Napping,
    Meditating,
    Training(&'static str, &'static str),
    OffFinger,
    Awake,
}

impl Plan {
    fn doing(&self, t: Timestamp) -> Doing {
        let inside = |(a, b): Span| t >= a && t < b;
        if inside(self.charging) {
            return Doing::OffFinger;
        }
        if let Some((n, (a, _))) = self.nights.iter().find(|(_, sp)| inside(*sp)) {
            return Doing::Asleep(*n, ((t.as_second() - a.as_second()) / 300) as usize);
        }
        match (self.workout.filter(|w| inside(w.0)), self.nap.filter(|s| inside(*s)), self.session.filter(|s| inside(*s))) {
            (Some((_, activity, intensity)), _, _) => Doing::Training(activity, intensity),
            (_, Some(_), _) => Doing::Napping,
            (_, _, Some(_)) => Doing::Meditating,
            _ => Doing::Awake,
        }
    }
}

fn uuid(d: Date, salt: u64) -> String {
    let (a, b) = (h(d, salt), h(d, salt ^ 0x5a5a));
    format!("{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff, b >> 52, b & 0xffff_ffff_ffff)
}

/// A number in `[lo, lo + span)` from the day's hash.
fn pick(d: Date, salt: u64, lo: i64, span: i64) -> i64 {
    lo + (h(d, salt) % span.max(1) as u64) as i64
}

impl Person {
    fn at(&self, d: Date, minute_of_day: i64) -> jiff::Zoned {
        let base =
            DateTime::from_parts(d, jiff::civil::time(0, 0, 0, 0)).to_zoned(self.tz.clone()).unwrap_or_else(|_| Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC));
        base.checked_add(minute_of_day.minutes()).unwrap_or(base)
    }

    /// `2024-01-21T01:28:28-05:00`: a local time with the user's offset.
    fn local(z: &jiff::Zoned) -> String {
        z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }

    /// The night that ends on the morning of `d`: (bedtime start, minutes in bed). It starts and
    /// ends on the five-minute grid its epochs and the day's heart rate share.
    fn night(&self, d: Date) -> (jiff::Zoned, i64) {
        let start = self.at(d.yesterday().unwrap_or(d), 22 * 60 + 5 * pick(d, 1, 0, 15));
        (start, 420 + 5 * pick(d, 2, 0, 18))
    }

    /// The night's heart rate in its `i`-th five minutes (None: the ring read nothing then).
    fn night_hr(d: Date, i: usize) -> Option<i64> {
        (!(i as u64 + h(d, 4)).is_multiple_of(23)).then(|| 50 + (i as i64 * 7 + pick(d, 5, 0, 9)) % 13)
    }

    /// The day's plan: when the person slept, napped, meditated, trained and took the ring off to
    /// charge it. Every collection of the day reads what the person was doing from here.
    fn plan(&self, d: Date) -> Plan {
        let span = |z: &jiff::Zoned, mins: i64| (z.timestamp(), z.checked_add(mins.minutes()).unwrap_or(z.clone()).timestamp());
        let nights = [d, d.tomorrow().unwrap_or(d)].map(|n| {
            let (start, len) = self.night(n);
            (n, span(&start, len))
        });
        let workout = h(d, 120).is_multiple_of(2).then(|| {
            let start = self.at(d, 17 * 60 + pick(d, 121, 0, 90));
            let (activity, intensity) = [("running", "hard"), ("walking", "easy"), ("cycling", "moderate")][(h(d, 123) % 3) as usize];
            (span(&start, pick(d, 122, 25, 50)), activity, intensity)
        });
        let nap = h(d, 13).is_multiple_of(5).then(|| span(&self.at(d, 14 * 60 + pick(d, 14, 0, 60)), pick(d, 15, 20, 25)));
        // Meditation after getting up: ten minutes, from 7:30 or a quarter of an hour after waking.
        let woke = nights[0].1 .1 + 15.minutes();
        let session = h(d, 130).is_multiple_of(3).then(|| {
            let start = self.at(d, 7 * 60 + 30 + pick(d, 131, 0, 30)).timestamp().max(woke).to_zoned(self.tz.clone());
            (span(&start, 10), start)
        });
        Plan { nights, workout, nap, session: session.map(|s| s.0), charging: (self.at(d, CHARGING.0).timestamp(), self.at(d, CHARGING.1).timestamp()) }
    }

    /// Oura's `sleep` documents labelled `d` (the wake-up day): the night, and on some days a nap.
    pub fn sleeps(&self, d: Date) -> Vec<(Timestamp, Value)> {
        let (start, in_bed) = self.night(d);
        let end = start.checked_add(in_bed.minutes()).unwrap_or(start.clone());
        let epochs = (in_bed / 5) as usize;
        let stages: String = (0..epochs).map(|i| ['4', '2', '1', '2', '3', '2', '1', '2', '3', '4'][(i + (h(d, 3) % 4) as usize) / 9 % 10]).collect();
        let count = |c: char| stages.chars().filter(|x| *x == c).count() as i64 * 300;
        let (deep, light, rem, awake) = (count('1'), count('2'), count('3'), count('4'));
        let hr: Vec<Value> = (0..epochs).map(|i| json!(Self::night_hr(d, i))).collect();
        let hrv: Vec<Value> = (0..epochs)
            .map(|i| if (i as u64 + h(d, 6)).is_multiple_of(19) { Value::Null } else { json!(25 + (i as i64 * 11 + pick(d, 7, 0, 17)) % 45) })
            .collect();
        let lowest = hr.iter().filter_map(Value::as_i64).min().unwrap_or(50);
        let avg = |xs: &[Value]| {
            let v: Vec<f64> = xs.iter().filter_map(Value::as_f64).collect();
            (v.iter().sum::<f64>() / v.len().max(1) as f64 * 8.0).round() / 8.0
        };
        let series = |items: Vec<Value>| json!({"interval": 300, "items": items, "timestamp": start.strftime("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string()});
        let movement: String = (0..epochs * 10).map(|i| if (i as u64 + h(d, 8)).is_multiple_of(37) { '2' } else { '1' }).collect();
        let readiness = self.readiness_parts(d);
        let mut out = vec![(
            end.timestamp(),
            json!({
                "id": uuid(d, 10), "average_breath": 13.0 + pick(d, 9, 0, 8) as f64 / 4.0, "average_heart_rate": avg(&hr),
                "average_hrv": avg(&hrv).round() as i64, "awake_time": awake, "bedtime_end": Self::local(&end), "bedtime_start": Self::local(&start),
                "day": d.to_string(), "deep_sleep_duration": deep, "efficiency": (100 * (deep + light + rem) / (in_bed * 60).max(1)),
                "heart_rate": series(hr), "hrv": series(hrv), "latency": pick(d, 11, 2, 20) * 60, "light_sleep_duration": light,
                "low_battery_alert": false, "lowest_heart_rate": lowest, "movement_30_sec": movement, "period": 0,
                "readiness": readiness, "readiness_score_delta": 0, "rem_sleep_duration": rem, "restless_periods": pick(d, 12, 10, 30),
                "sleep_phase_5_min": stages, "sleep_score_delta": 0, "sleep_algorithm_version": "v2", "sleep_analysis_reason": null,
                "time_in_bed": in_bed * 60, "total_sleep_duration": deep + light + rem, "type": "long_sleep", "ring_id": null
            }),
        )];
        if h(d, 13).is_multiple_of(5) {
            // An afternoon nap: Oura leaves most of a short period's fields null.
            let nap = self.at(d, 14 * 60 + pick(d, 14, 0, 60));
            let up = nap.checked_add(pick(d, 15, 20, 25).minutes()).unwrap_or(nap.clone());
            let secs = (up.timestamp().as_second() - nap.timestamp().as_second()).max(0);
            out.push((
                up.timestamp(),
                json!({
                    "id": uuid(d, 16), "average_breath": null, "average_heart_rate": null, "average_hrv": null, "awake_time": null,
                    "bedtime_end": Self::local(&up), "bedtime_start": Self::local(&nap), "day": d.to_string(), "deep_sleep_duration": null,
                    "efficiency": null, "heart_rate": null, "hrv": null, "latency": null, "light_sleep_duration": null, "low_battery_alert": false,
                    "lowest_heart_rate": null, "movement_30_sec": null, "period": 1, "readiness": null, "readiness_score_delta": null,
                    "rem_sleep_duration": null, "restless_periods": null, "sleep_phase_5_min": null, "sleep_score_delta": null,
                    "sleep_algorithm_version": "v2", "sleep_analysis_reason": null, "time_in_bed": secs, "total_sleep_duration": secs,
                    "type": "late_nap", "ring_id": null
                }),
            ));
        }
        out
    }

    fn readiness_parts(&self, d: Date) -> Value {
        let c = |salt| pick(d, salt, 60, 40);
        json!({
            "contributors": {"activity_balance": c(20), "body_temperature": c(21), "hrv_balance": c(22), "previous_day_activity": c(23),
                             "previous_night": c(24), "recovery_index": c(25), "resting_heart_rate": c(26), "sleep_balance": c(27),
                             "sleep_regularity": c(28)},
            "score": pick(d, 29, 58, 40),
            "temperature_deviation": (pick(d, 30, -40, 80) as f64) / 100.0,
            "temperature_trend_deviation": (pick(d, 31, -30, 60) as f64) / 100.0,
        })
    }

    /// Midnight UTC of `d`, as Oura dates its daily summaries.
    fn midnight(d: Date) -> String {
        format!("{d}T00:00:00+00:00")
    }

    /// The one-a-day documents of `d` for `collection` (empty for a day without one).
    pub fn daily(&self, collection: &str, d: Date, now: Timestamp) -> Vec<Value> {
        let day = d.to_string();
        let one = match collection {
            "daily_sleep" => json!({
                "id": uuid(d, 40),
                "contributors": {"deep_sleep": pick(d, 41, 55, 45), "efficiency": pick(d, 42, 70, 30), "latency": pick(d, 43, 50, 50),
                                 "rem_sleep": pick(d, 44, 60, 40), "restfulness": pick(d, 45, 55, 45), "timing": pick(d, 46, 70, 30),
                                 "total_sleep": pick(d, 47, 65, 35)},
                "day": day, "score": pick(d, 48, 60, 38), "timestamp": Self::midnight(d)
            }),
            "daily_readiness" => {
                let mut r = self.readiness_parts(d);
                r["id"] = json!(uuid(d, 50));
                r["day"] = json!(day);
                r["timestamp"] = json!(Self::midnight(d));
                r
            }
            "daily_activity" => self.activity(d, now),
            "daily_spo2" => json!({"id": uuid(d, 60), "day": day, "spo2_percentage": {"average": 95.0 + pick(d, 61, 0, 3500) as f64 / 1000.0},
                                   "breathing_disturbance_index": pick(d, 62, 0, 20)}),
            "daily_stress" => {
                let summary = ["restored", "normal", "stressful"][(h(d, 63) % 4).min(2) as usize];
                json!({"id": uuid(d, 64), "day": day, "stress_high": pick(d, 65, 0, 8) * 900, "recovery_high": pick(d, 66, 0, 10) * 900,
                       "day_summary": if h(d, 67).is_multiple_of(6) { Value::Null } else { json!(summary) }})
            }
            "daily_resilience" => json!({"id": uuid(d, 70), "day": day, "level": RESILIENCE[(h(d, 71) % 5) as usize],
                                         "contributors": {"sleep_recovery": pick(d, 72, 40, 60) as f64, "daytime_recovery": pick(d, 73, 20, 60) as f64,
                                                          "stress": pick(d, 74, 20, 70) as f64}}),
            "daily_cardiovascular_age" => json!({"id": uuid(d, 80), "day": day, "vascular_age": pick(d, 81, 32, 6),
                                                 "pulse_wave_velocity": 6.5 + pick(d, 82, 0, 150) as f64 / 100.0}),
            "sleep_time" => json!({"id": uuid(d, 90), "day": day,
                                   "optimal_bedtime": {"day_tz": self.at(d, 0).offset().seconds(), "start_offset": -3600 + pick(d, 91, 0, 4) * 900, "end_offset": pick(d, 92, 0, 4) * 900},
                                   "recommendation": "follow_optimal_bedtime", "status": "optimal_found"}),
            "vO2_max" if d.weekday() == jiff::civil::Weekday::Monday => {
                json!({"id": uuid(d, 95), "day": day, "timestamp": Self::local(&self.at(d, 8 * 60)), "vo2_max": pick(d, 96, 41, 5)})
            }
            _ => return vec![],
        };
        vec![one]
    }

    /// What the person did in minute `m` of the activity day `d` (from 4 a.m.): its MET and steps.
    fn minute(&self, d: Date, plan: &Plan, m: i64, t: Timestamp) -> (Doing, f64, i64) {
        let r = h(d, 2000 + m as u64);
        let doing = plan.doing(t);
        let (met, steps) = match doing {
            Doing::OffFinger => (0.9, 0),
            Doing::Asleep(..) | Doing::Napping | Doing::Meditating => (0.9 + (r % 10) as f64 / 100.0, 0),
            Doing::Training(activity, intensity) => {
                let met = match intensity {
                    "hard" => 8.5,
                    "moderate" => 5.5,
                    _ => 3.5,
                } + (r % 10) as f64 / 10.0;
                (met, [("running", 165), ("walking", 110)].iter().find(|x| x.0 == activity).map_or(0, |x| x.1 + (r % 6) as i64))
            }
            // Awake: mostly sitting, now and then about, rarely brisk, a quarter of an hour at a time.
            Doing::Awake => match h(d, 3000 + m as u64 / 15) % 20 {
                0 => (3.0 + (r % 15) as f64 / 10.0, 90 + (r % 30) as i64),
                1..=5 => (2.0 + (r % 9) as f64 / 10.0, 40 + (r % 40) as i64),
                _ => (1.2 + (r % 7) as f64 / 10.0, (r % 12) as i64),
            },
        };
        (doing, (met * 10.0).round() / 10.0, steps)
    }

    /// A day of activity by `now`: Oura's day starts at 4 a.m. local; MET and steps per minute from
    /// what the person was doing ([`Person::plan`]), a class per 5 minutes from its MET (0 off the
    /// finger, 1 rest, 2 inactive, 3 low, 4 medium, 5 high), and every time, MET-minute, step and
    /// calorie total read from them.
    fn activity(&self, d: Date, now: Timestamp) -> Value {
        let from = self.at(d, 4 * 60);
        let plan = self.plan(d);
        let minutes: Vec<(Doing, f64, i64)> =
            (0..1440).map(|m| (m, from.timestamp() + (m * 60).seconds())).take_while(|(_, t)| *t < now).map(|(m, t)| self.minute(d, &plan, m, t)).collect();
        let classes: String = minutes
            .chunks(5)
            .map(|c| {
                let met = c.iter().map(|x| x.1).sum::<f64>() / c.len() as f64;
                match met {
                    _ if c.iter().any(|x| x.0 == Doing::OffFinger) => '0',
                    _ if met < 1.05 => '1',
                    _ if met < 2.0 => '2',
                    _ if met < 3.0 => '3',
                    _ if met < 6.0 => '4',
                    _ => '5',
                }
            })
            .collect();
        let epochs = |c: char| classes.chars().enumerate().filter(move |(_, x)| *x == c).map(|(k, _)| k);
        let seconds = |c: char| epochs(c).map(|k| minutes[k * 5..(k * 5 + 5).min(minutes.len())].len() as i64 * 60).sum::<i64>();
        let met_min = |c: char| epochs(c).flat_map(|k| minutes[k * 5..(k * 5 + 5).min(minutes.len())].iter().map(|x| x.1)).sum::<f64>().round() as i64;
        let steps: i64 = minutes.iter().map(|x| x.2).sum();
        let active = (minutes.iter().map(|x| (x.1 - 1.0).max(0.0)).sum::<f64>() * WEIGHT_KG / 60.0).round() as i64;
        let met: Vec<Value> = minutes.iter().map(|x| json!(x.1)).collect();
        let mean_met = minutes.iter().map(|x| x.1).sum::<f64>() / minutes.len().max(1) as f64;
        json!({
            "id": uuid(d, 103), "class_5_min": classes, "score": pick(d, 104, 55, 45), "active_calories": active,
            "average_met_minutes": (mean_met * 1000.0).round() / 1000.0,
            "contributors": {"meet_daily_targets": pick(d, 106, 40, 61), "move_every_hour": pick(d, 107, 60, 41), "recovery_time": pick(d, 108, 70, 31),
                             "stay_active": pick(d, 109, 50, 51), "training_frequency": pick(d, 110, 60, 41), "training_volume": pick(d, 111, 60, 41)},
            "equivalent_walking_distance": steps * 8 / 10, "high_activity_met_minutes": met_min('5'), "high_activity_time": seconds('5'),
            "inactivity_alerts": pick(d, 112, 0, 3), "low_activity_met_minutes": met_min('3'), "low_activity_time": seconds('3'),
            "medium_activity_met_minutes": met_min('4'), "medium_activity_time": seconds('4'),
            "met": {"interval": 60, "items": met, "timestamp": from.strftime("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string()},
            "meters_to_target": (6_000 - steps * 8 / 10).max(0), "non_wear_time": seconds('0'), "resting_time": seconds('1'),
            "sedentary_met_minutes": met_min('2'), "sedentary_time": seconds('2'), "steps": steps, "target_calories": 350,
            "target_meters": 6_000, "total_calories": (1_650.0 * minutes.len() as f64 / 1440.0).round() as i64 + active, "day": d.to_string(),
            "timestamp": Person::local(&from)
        })
    }

    /// The active calories of the workout on `d`: its minutes' MET above rest.
    fn workout_calories(&self, d: Date, plan: &Plan) -> f64 {
        let Some(((a, b), _, _)) = plan.workout else { return 0.0 };
        let from = self.at(d, 4 * 60).timestamp();
        let first = (a.as_second() - from.as_second()) / 60;
        let met: f64 = (first..(b.as_second() - from.as_second()) / 60).map(|m| self.minute(d, plan, m, from + (m * 60).seconds()).1 - 1.0).sum();
        (met * WEIGHT_KG / 60.0 * 10.0).round() / 10.0
    }

    /// Documents that happen now and then, with the instant they end (what `now` has seen).
    pub fn events(&self, collection: &str, d: Date) -> Vec<(Timestamp, Value)> {
        let day = d.to_string();
        match collection {
            "workout" => {
                let plan = self.plan(d);
                let Some(((a, b), activity, intensity)) = plan.workout else { return vec![] };
                let (start, end) = (a.to_zoned(self.tz.clone()), b.to_zoned(self.tz.clone()));
                // Its distance at the activity's pace, its calories its MET above rest (as the day's activity counts them).
                let pace = [("running", 3.0), ("walking", 1.4), ("cycling", 6.5)].iter().find(|x| x.0 == activity).map_or(1.0, |x| x.1);
                let distance = ((b.as_second() - a.as_second()) as f64 * pace * (1.0 + pick(d, 126, 0, 10) as f64 / 100.0)).round();
                vec![(
                    b,
                    json!({"id": uuid(d, 124), "activity": activity, "calories": self.workout_calories(d, &plan),
                    "day": day, "distance": distance, "end_datetime": Self::local(&end),
                    "intensity": intensity, "label": null, "source": "autodetected", "start_datetime": Self::local(&start)}),
                )]
            }
            "session" => {
                let Some((a, b)) = self.plan(d).session else { return vec![] };
                let (start, end) = (a.to_zoned(self.tz.clone()), b.to_zoned(self.tz.clone()));
                let at = start.strftime("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string();
                let five = |lo: i64, span: i64, salt: u64| -> Vec<Value> {
                    (0..120).map(|i| if i == 0 { Value::Null } else { json!(lo + (i * 7 + pick(d, salt, 0, span)) % span) }).collect()
                };
                vec![(
                    end.timestamp(),
                    json!({"id": uuid(d, 132), "day": day, "start_datetime": Self::local(&start), "end_datetime": Self::local(&end),
                    "type": "meditation", "mood": "good",
                    "heart_rate": {"interval": 5, "items": five(55, 8, 133), "timestamp": at},
                    "heart_rate_variability": {"interval": 5, "items": five(28, 12, 134), "timestamp": at},
                    "motion_count": {"interval": 5, "items": five(0, 4, 135), "timestamp": at}}),
                )]
            }
            "enhanced_tag" if h(d, 140).is_multiple_of(9) => {
                let start = self.at(d, 21 * 60);
                let end = start.checked_add(2.hours()).unwrap_or(start.clone());
                vec![(
                    end.timestamp(),
                    json!({"id": uuid(d, 141), "tag_type_code": "tag_generic_caffeine", "start_time": Self::local(&start),
                    "end_time": Self::local(&end), "start_day": day, "end_day": day, "comment": null, "custom_name": null}),
                )]
            }
            "tag" if h(d, 150).is_multiple_of(21) => {
                let at = self.at(d, 20 * 60);
                vec![(
                    at.timestamp(),
                    json!({"id": uuid(d, 151), "day": day, "text": "late dinner", "timestamp": Self::local(&at), "tags": ["tag_generic_late_meal"]}),
                )]
            }
            "rest_mode_period" if d.day() == 3 && h(d, 160).is_multiple_of(4) => {
                let start = self.at(d, 9 * 60);
                let end = start.checked_add(48.hours()).unwrap_or(start.clone());
                let end_day = end.date().to_string();
                vec![(
                    end.timestamp(),
                    json!({"id": uuid(d, 161), "start_day": day, "end_day": end_day, "start_time": Self::local(&start),
                    "end_time": Self::local(&end), "episodes": [{"tags": ["tag_generic_fever"], "timestamp": Self::local(&start)}]}),
                )]
            }
            _ => vec![],
        }
    }

    /// Heart rate of `d`, every 5 minutes on the local day's grid (UTC timestamps), by what the person
    /// was doing: asleep, the night's own five-minute values (`sleep`); training, `workout`;
    /// meditating, the session's mean (`session`); napping, `rest`; nothing while the ring charged.
    pub fn heart_rate(&self, d: Date) -> Vec<(Timestamp, Value)> {
        let plan = self.plan(d);
        let session = self.events("session", d);
        (0..288)
            .filter_map(|i| {
                let t = self.at(d, i * 5).timestamp();
                let (bpm, source) = match plan.doing(t) {
                    Doing::OffFinger => return None,
                    Doing::Asleep(n, k) => (Self::night_hr(n, k)?, "sleep"),
                    Doing::Training(_, intensity) => {
                        let base = match intensity {
                            "hard" => 142,
                            "moderate" => 122,
                            _ => 96,
                        };
                        (base + (i * 7 + pick(d, 172, 0, 11)) % 23, "workout")
                    }
                    Doing::Meditating => (Self::session_mean(session.first().map(|s| &s.1)?, t)?, "session"),
                    Doing::Napping => (54 + (i * 3 + pick(d, 170, 0, 7)) % 6, "rest"),
                    Doing::Awake => (62 + (i * 7 + pick(d, 171, 0, 13)) % 31, "awake"),
                };
                Some((t, json!({"bpm": bpm, "source": source, "timestamp": format!("{}", t.strftime("%Y-%m-%dT%H:%M:%S+00:00"))})))
            })
            .collect()
    }

    /// The mean of a session's heart rate over the five minutes from `t`.
    fn session_mean(session: &Value, t: Timestamp) -> Option<i64> {
        let hr = &session["heart_rate"];
        let start: Timestamp = hr["timestamp"].as_str()?.parse().ok()?;
        let step = hr["interval"].as_i64()?;
        let v: Vec<i64> = hr["items"]
            .as_array()?
            .iter()
            .enumerate()
            .filter(|(k, _)| (t.as_second()..t.as_second() + 300).contains(&(start.as_second() + *k as i64 * step)))
            .filter_map(|(_, x)| x.as_i64())
            .collect();
        (!v.is_empty()).then(|| (v.iter().sum::<i64>() as f64 / v.len() as f64).round() as i64)
    }

    /// The ring's battery, every 30 minutes: drains by day, charges from 20:30.
    pub fn battery(&self, d: Date) -> Vec<(Timestamp, Value)> {
        (0..48)
            .map(|i| {
                let t = self.at(d, i * 30).timestamp();
                // Off the finger on the charger from 20:30 to 21:30 (the plan's `charging`).
                let charging = (CHARGING.0 / 30..CHARGING.1 / 30).contains(&i);
                let level = if i < CHARGING.0 / 30 { 100 - i * 2 } else { 100 - (47 - i) * 2 };
                (
                    t,
                    json!({"level": level.clamp(5, 100), "charging": charging, "in_charger": charging,
                           "timestamp": format!("{}", t.strftime("%Y-%m-%dT%H:%M:%S+00:00")), "timestamp_unix": t.as_millisecond()}),
                )
            })
            .collect()
    }
}

/// The sample served as Oura's API serves it, at instant `now`.
pub struct Api<'a> {
    pub person: &'a Person,
    pub now: Timestamp,
}

/// An answer: status and body.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

fn error(status: u16, detail: &str) -> Answer {
    Answer { status, body: json!({"detail": detail}).to_string() }
}

/// The opaque next-page token: the offset of the page, as Oura's base64 JSON tokens look.
fn token(offset: usize) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(json!({"offset": offset}).to_string())
}

fn offset(t: Option<&String>) -> Result<usize, Answer> {
    use base64::Engine as _;
    let Some(t) = t else { return Ok(0) };
    let bytes = base64::engine::general_purpose::STANDARD.decode(t).map_err(|_| error(400, "Invalid next_token"))?;
    serde_json::from_slice::<Value>(&bytes).ok().and_then(|v| v["offset"].as_u64()).map(|n| n as usize).ok_or_else(|| error(400, "Invalid next_token"))
}

/// One page of `rows` from the token's offset, in Oura's envelope.
fn page(rows: Vec<Value>, q: &HashMap<String, String>, size: usize) -> Answer {
    let from = match offset(q.get("next_token")) {
        Ok(n) => n,
        Err(a) => return a,
    };
    let end = (from + size).min(rows.len());
    let next = (end < rows.len()).then(|| token(end));
    let data: Vec<Value> = rows.into_iter().skip(from).take(size).collect();
    Answer { status: 200, body: json!({"data": data, "next_token": next}).to_string() }
}

impl Api<'_> {
    fn today(&self) -> Date {
        self.now.to_zoned(self.person.tz.clone()).date()
    }

    /// The days `start_date` to `end_date` (Oura leaves the last one out for these three).
    fn days(&self, collection: &str, q: &HashMap<String, String>) -> Result<Vec<Date>, Answer> {
        let parse = |k: &str| q.get(k).map(|v| v.parse::<Date>().map_err(|_| error(422, &format!("{k}: invalid date"))));
        let start = parse("start_date").transpose()?.unwrap_or(self.today().checked_sub(1.week()).unwrap_or(FIRST_DAY));
        let mut end = parse("end_date").transpose()?.unwrap_or(self.today().tomorrow().unwrap_or(FIRST_DAY));
        if ["daily_activity", "sleep", "workout"].contains(&collection) {
            end = end.yesterday().unwrap_or(end);
        }
        let mut out = vec![];
        let mut d = start.max(FIRST_DAY);
        while d <= end.min(self.today()) {
            out.push(d);
            d = d.tomorrow().unwrap_or(Date::MAX);
        }
        Ok(out)
    }

    /// Rows of a series between `start_datetime` (inclusive) and `end_datetime` (exclusive).
    fn instants(&self, q: &HashMap<String, String>, rows: impl Fn(Date) -> Vec<(Timestamp, Value)>) -> Result<Vec<Value>, Answer> {
        let parse = |k: &str| q.get(k).map(|v| v.parse::<Timestamp>().map_err(|_| error(422, &format!("{k}: invalid datetime"))));
        let end = parse("end_datetime").transpose()?.unwrap_or(self.now).min(self.now);
        let start = parse("start_datetime").transpose()?.unwrap_or(end.checked_sub(24.hours()).unwrap_or(end));
        let tz = &self.person.tz;
        let (first, last) = (start.to_zoned(tz.clone()).date().max(FIRST_DAY), end.to_zoned(tz.clone()).date());
        let mut out = vec![];
        let mut d = first;
        while d <= last {
            out.extend(rows(d).into_iter().filter(|(t, _)| *t >= start && *t < end).map(|(_, v)| v));
            d = d.tomorrow().unwrap_or(Date::MAX);
        }
        if q.get("latest").is_some_and(|v| v == "true") {
            out = out.pop().into_iter().collect();
        }
        Ok(out)
    }

    /// Answer `GET path?q` as Oura's API v2 would (its sandbox prefix or the real one).
    pub fn answer(&self, path: &str, q: &HashMap<String, String>) -> Answer {
        let Some(collection) = path.strip_prefix("/v2/sandbox/usercollection/").or_else(|| path.strip_prefix("/v2/usercollection/")) else {
            return error(404, "Not Found");
        };
        let p = self.person;
        let seen = |t: &Timestamp| *t <= self.now;
        let rows = match collection {
            "heartrate" => self.instants(q, |d| p.heart_rate(d)),
            "ring_battery_level" => self.instants(q, |d| p.battery(d)),
            "ring_configuration" => Ok(vec![json!({"id": uuid(FIRST_DAY, 200), "color": "stealth_black", "design": "heritage",
                "firmware_version": "2.9.21", "hardware_type": "gen3", "set_up_at": "2020-01-01T08:00:00+00:00", "size": 9})]),
            "sleep" => self.days(collection, q).map(|ds| ds.into_iter().flat_map(|d| p.sleeps(d)).filter(|(t, _)| seen(t)).map(|(_, v)| v).collect()),
            "workout" | "session" | "enhanced_tag" | "tag" | "rest_mode_period" => {
                self.days(collection, q).map(|ds| ds.into_iter().flat_map(|d| p.events(collection, d)).filter(|(t, _)| seen(t)).map(|(_, v)| v).collect())
            }
            "daily_activity"
            | "daily_sleep"
            | "daily_readiness"
            | "daily_spo2"
            | "daily_stress"
            | "daily_resilience"
            | "daily_cardiovascular_age"
            | "sleep_time"
            | "vO2_max" => self.days(collection, q).map(|ds| ds.into_iter().flat_map(|d| p.daily(collection, d, self.now)).collect()),
            _ => return error(404, "Not Found"),
        };
        match rows {
            Ok(rows) => page(rows, q, if ["heartrate", "ring_battery_level"].contains(&collection) { SERIES_PAGE } else { DOC_PAGE }),
            Err(a) => a,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_at(now: &str) -> (Person, Timestamp) {
        (Person { tz: TimeZone::get("America/Chicago").unwrap() }, now.parse().unwrap())
    }

    fn data(a: &Answer) -> Vec<Value> {
        serde_json::from_str::<Value>(&a.body).unwrap()["data"].as_array().unwrap().clone()
    }

    #[test]
    fn a_night_adds_up_and_is_filed_under_the_morning_it_ends() {
        let p = Person { tz: TimeZone::get("America/Chicago").unwrap() };
        let d = jiff::civil::date(2026, 6, 10);
        let (_, night) = &p.sleeps(d)[0];
        assert_eq!(night["day"], "2026-06-10");
        assert!(night["bedtime_start"].as_str().unwrap().starts_with("2026-06-09T2"), "{}", night["bedtime_start"]);
        assert!(night["bedtime_end"].as_str().unwrap().ends_with("-05:00"), "the user's offset, as recorded");
        let sum = ["deep_sleep_duration", "light_sleep_duration", "rem_sleep_duration"].iter().map(|k| night[*k].as_i64().unwrap()).sum::<i64>();
        assert_eq!(night["total_sleep_duration"], sum);
        assert_eq!(sum + night["awake_time"].as_i64().unwrap(), night["time_in_bed"].as_i64().unwrap() / 300 * 300);
        let stages = night["sleep_phase_5_min"].as_str().unwrap();
        assert_eq!(night["heart_rate"]["items"].as_array().unwrap().len(), stages.len());
    }

    #[test]
    fn pages_follow_opaque_tokens_to_the_end_and_end_date_is_oura_s() {
        let (p, now) = api_at("2026-06-30T18:00:00Z");
        let api = Api { person: &p, now };
        let q = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<HashMap<_, _>>();
        let path = "/v2/sandbox/usercollection/heartrate";
        let mut rows = 0;
        let mut next: Option<String> = None;
        loop {
            let mut args = vec![("start_datetime", "2026-06-01T00:00:00-05:00"), ("end_datetime", "2026-06-08T00:00:00-05:00")];
            if let Some(t) = &next {
                args.push(("next_token", t.as_str()));
            }
            let a = api.answer(path, &q(&args));
            let v: Value = serde_json::from_str(&a.body).unwrap();
            rows += v["data"].as_array().unwrap().len();
            match v["next_token"].as_str() {
                Some(t) => next = Some(t.to_string()),
                None => break,
            }
        }
        // Every row of the seven days: a sample every 5 minutes, none while the ring charged
        // and none in the night's five minutes the ring read nothing.
        let days = (1..=7).map(|k| jiff::civil::date(2026, 6, k)).flat_map(|d| p.heart_rate(d)).count();
        assert!(rows > 7 * 250 && rows <= 7 * 288, "{rows}");
        assert_eq!(rows, days);
        // `daily_sleep` includes end_date; `sleep` leaves it out, as Oura does.
        let ds = api.answer("/v2/sandbox/usercollection/daily_sleep", &q(&[("start_date", "2026-06-10"), ("end_date", "2026-06-11")]));
        assert_eq!(data(&ds).len(), 2);
        let s = api.answer("/v2/sandbox/usercollection/sleep", &q(&[("start_date", "2026-06-10"), ("end_date", "2026-06-11")]));
        assert!(data(&s).iter().all(|r| r["day"] == "2026-06-10"));
        assert_eq!(api.answer("/v2/sandbox/usercollection/nope", &q(&[])).status, 404);
        let latest = api.answer(path, &q(&[("latest", "true")]));
        assert_eq!(data(&latest).len(), 1);
    }

    #[test]
    fn nothing_after_now() {
        let (p, now) = api_at("2026-06-30T12:00:00Z");
        let api = Api { person: &p, now };
        let q: HashMap<String, String> =
            [("start_date", "2026-06-29"), ("end_date", "2026-07-05")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let days: Vec<String> =
            data(&api.answer("/v2/sandbox/usercollection/daily_readiness", &q)).iter().map(|r| r["day"].as_str().unwrap().to_string()).collect();
        assert_eq!(days, ["2026-06-29", "2026-06-30"]);
    }
}
