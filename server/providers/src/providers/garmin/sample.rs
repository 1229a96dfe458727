//! Garmin's Personal API has no sandbox, so its sample data is built in: a deterministic person in
//! the API's own payload shapes, and [`Api`], which answers a read as the Personal API would (range
//! limits, placeholders for empty days, 204 for a night without HRV, activity paging newest first,
//! the FIT file in a ZIP, 404 off the allowlist). The sandbox answers in process; the twin serves
//! the same person over HTTP with the key exchange, token expiry, 429s and faults on top.
use crate::providers::day_hash as h;
use jiff::civil::{Date, Time};
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Longest range each range route accepts, in days counted inclusively (reference §5).
pub const LIMITS: &[(&str, i64)] =
    &[("dailysummaries", 35), ("steps", 28), ("stress", 28), ("hydration", 28), ("bodyBattery", 31), ("dailySleepSummariesByDate", 31), ("weight", 31)];

#[derive(Clone, Debug)]
pub struct Person {
    pub tz: TimeZone,
}

impl Person {
    pub fn new(tz_name: &str) -> Person {
        Person { tz: TimeZone::get(tz_name).unwrap_or(TimeZone::UTC) }
    }
    fn at(&self, d: Date, secs: i64) -> jiff::Zoned {
        let dt = d.to_datetime(Time::midnight()).checked_add(jiff::SignedDuration::from_secs(secs)).unwrap_or(d.to_datetime(Time::midnight()));
        dt.to_zoned(self.tz.clone()).unwrap_or_else(|_| Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC))
    }
    fn offset_ms(&self, z: &jiff::Zoned) -> i64 {
        i64::from(z.offset().seconds()) * 1000
    }
}

fn ms(z: &jiff::Zoned) -> i64 {
    z.timestamp().as_millisecond()
}

fn unit(d: Date, salt: u64) -> f64 {
    (h(d, salt) % 10_000) as f64 / 10_000.0
}

/// Whether there was sleep on the night ending `d` (every tenth night: none, Garmin's placeholder).
pub fn slept(d: Date) -> bool {
    !h(d, 101).is_multiple_of(10)
}

/// Whether the night ending `d` has an HRV reading (every twelfth: none, 204).
pub fn has_hrv(d: Date) -> bool {
    !h(d, 102).is_multiple_of(12)
}

pub fn daily_summary(d: Date) -> Value {
    let steps = 6000 + (h(d, 1) % 7000);
    json!({
        "calendarDate": d.to_string(), "totalSteps": steps, "dailyStepGoal": 8000, "totalDistanceMeters": steps as f64 * 0.78,
        "totalKilocalories": 2100 + steps / 20, "activeKilocalories": steps / 20, "bmrKilocalories": 1700,
        "restingHeartRate": 50 + h(d, 2) % 6, "minHeartRate": 46 + h(d, 2) % 5, "maxHeartRate": 150 + h(d, 3) % 30,
        "lastSevenDaysAvgRestingHeartRate": 52, "averageStressLevel": 20 + h(d, 4) % 20, "maxStressLevel": 80 + h(d, 4) % 15,
        "bodyBatteryHighestValue": 70 + h(d, 5) % 30, "bodyBatteryLowestValue": 10 + h(d, 5) % 20,
        "moderateIntensityMinutes": h(d, 6) % 40, "vigorousIntensityMinutes": h(d, 7) % 30, "floorsAscended": h(d, 8) % 15,
        "avgWakingRespirationValue": 14.0, "averageSpo2": 95.0, "lowestSpo2": 89,
    })
}

pub fn steps(d: Date) -> Value {
    let s = 6000 + (h(d, 1) % 7000);
    json!({"calendarDate": d.to_string(), "totalSteps": s, "stepGoal": 8000, "totalDistance": s as f64 * 0.78})
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

/// A day's heart rate: a sample every 2 minutes, a few without a value (null).
pub fn heart_rate(p: &Person, d: Date) -> Value {
    let start = p.at(d, 0);
    let values: Vec<Value> = (0..720)
        .map(|i| {
            let t = ms(&start) + i * 120_000;
            let bpm = if h(d, 200 + i as u64).is_multiple_of(30) { Value::Null } else { json!(55 + (20.0 * ((i as f64) / 90.0).sin().abs()) as i64) };
            json!([t, bpm])
        })
        .collect();
    let end = p.at(d, 86_400);
    json!({"userProfilePK": 1_234_567, "calendarDate": d.to_string(), "startTimestampGMT": gmt_stamp(&start), "endTimestampGMT": gmt_stamp(&end),
        "startTimestampLocal": stamp(&start), "endTimestampLocal": stamp(&end), "restingHeartRate": 52, "minHeartRate": 47, "maxHeartRate": 160,
        "lastSevenDaysAvgRestingHeartRate": 53, "heartRateValueDescriptors": [{"key": "timestamp", "index": 0}, {"key": "heartrate", "index": 1}],
        "heartRateValues": values})
}

pub fn body_battery(p: &Person, d: Date) -> Value {
    let start = p.at(d, 0);
    let values: Vec<Value> = (0..480)
        .map(|i| {
            let hour = i as f64 / 20.0;
            let lvl = if hour < 7.0 { 30.0 + hour * 9.0 } else { 93.0 - (hour - 7.0) * 3.5 };
            json!([ms(&start) + i * 180_000, lvl.round().clamp(5.0, 100.0)])
        })
        .collect();
    let run = p.at(d, 18 * 3600);
    json!({
        "date": d.to_string(), "charged": 63, "drained": 58,
        "bodyBatteryValuesArray": values,
        "bodyBatteryActivityEvent": [{"eventType": "ACTIVITY", "eventStartTimeGmt": run.timestamp().to_string(), "timezoneOffset": p.offset_ms(&run),
            "durationInMilliseconds": 3_060_000, "bodyBatteryImpact": -16, "activityName": "Evening Run", "activityType": "running", "activityId": activity_id(d)}],
    })
}

pub fn spo2(d: Date) -> Value {
    if h(d, 11).is_multiple_of(8) {
        return Value::Null;
    }
    json!({"calendarDate": d.to_string(), "averageSpO2": 95.0, "lowestSpO2": 88 + h(d, 12) % 4, "latestSpO2": 96, "lastSevenDaysAvgSpO2": 95.4, "avgSleepSpO2": 94.0})
}

/// The night ending `d`: a summary with its stage levels, or Garmin's placeholder.
pub fn sleep(p: &Person, d: Date) -> Value {
    if !slept(d) {
        return json!({"dailySleepDTO": {"id": null, "calendarDate": d.to_string(), "sleepTimeSeconds": null}});
    }
    let prev = d.yesterday().unwrap_or(d);
    let start = p.at(prev, 22 * 3600 + 30 * 60 + (h(d, 20) % 3600) as i64);
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
    json!({
        "dailySleepDTO": {
            "id": ms(&start), "calendarDate": d.to_string(), "sleepTimeSeconds": totals[0] + totals[1] + totals[2], "napTimeSeconds": 0,
            "sleepStartTimestampGMT": ms(&start), "sleepEndTimestampGMT": ms(&end),
            "sleepStartTimestampLocal": ms(&start) + p.offset_ms(&start), "sleepEndTimestampLocal": ms(&end) + p.offset_ms(&end),
            "deepSleepSeconds": totals[0], "lightSleepSeconds": totals[1], "remSleepSeconds": totals[2], "awakeSleepSeconds": totals[3],
            "awakeCount": 2, "averageSpO2Value": 95.0, "lowestSpO2Value": 89, "averageRespirationValue": 14.0, "avgHeartRate": 52.0,
            "avgSleepStress": 17.0, "sleepScores": {"overall": {"value": 60 + h(d, 22) % 35, "qualifierKey": "GOOD"}},
        },
        "sleepLevels": levels,
    })
}

/// The night ending `d`'s HRV, or None (Garmin: 204).
pub fn hrv(p: &Person, d: Date) -> Option<Value> {
    if !has_hrv(d) {
        return None;
    }
    let start = p.at(d.yesterday().unwrap_or(d), 23 * 3600);
    let fmt = |z: &jiff::Zoned| z.timestamp().to_zoned(TimeZone::UTC).strftime("%Y-%m-%dT%H:%M:%S.0").to_string();
    let readings: Vec<Value> = (0..84)
        .map(|i| {
            let z = start.checked_add((i * 5).minutes()).unwrap_or(start.clone());
            json!({"hrvValue": 40 + (h(d, 300 + i as u64) % 25), "readingTimeGMT": fmt(&z), "readingTimeLocal": z.strftime("%Y-%m-%dT%H:%M:%S.0").to_string()})
        })
        .collect();
    let end = start.checked_add((84 * 5).minutes()).unwrap_or(start.clone());
    Some(json!({
        "userProfilePk": 1_234_567,
        "hrvSummary": {"calendarDate": d.to_string(), "weeklyAvg": 47, "lastNightAvg": 45 + h(d, 30) % 12, "lastNight5MinHigh": 70,
            "baseline": {"lowUpper": 40, "balancedLow": 43, "balancedUpper": 56, "markerValue": 0.55}, "status": "BALANCED", "feedbackPhrase": "HRV_BALANCED_2",
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

/// The activity on `d`, if any: most days a run or a ride.
pub fn activity(p: &Person, d: Date) -> Option<Value> {
    let kind = match h(d, 50) % 7 {
        0 | 3 => ("cycling", "Evening Ride"),
        1 | 4 | 5 => ("running", "Evening Run"),
        _ => return None,
    };
    let start = p.at(d, 18 * 3600 + (h(d, 51) % 1800) as i64);
    let fmt = |z: &jiff::Zoned| z.strftime("%Y-%m-%d %H:%M:%S").to_string();
    let gmt = start.timestamp().to_zoned(TimeZone::UTC);
    let dur = 1800.0 + (h(d, 52) % 1800) as f64;
    Some(json!({
        "activityId": activity_id(d), "activityName": kind.1, "startTimeLocal": fmt(&start), "startTimeGMT": fmt(&gmt),
        "activityType": {"typeKey": kind.0}, "distance": dur * 3.2, "duration": dur, "elapsedDuration": dur + 40.0, "movingDuration": dur - 10.0,
        "averageSpeed": 3.2, "maxSpeed": 4.4, "averageHR": 148, "maxHR": 172, "calories": dur / 4.0, "elevationGain": 80.0, "elevationLoss": 78.0,
        "aerobicTrainingEffect": 3.2, "anaerobicTrainingEffect": 1.0, "activityTrainingLoad": 120.0, "lapCount": 6,
        "hrTimeInZone_1": 100.0, "hrTimeInZone_2": 500.0, "hrTimeInZone_3": dur - 1000.0, "hrTimeInZone_4": 350.0, "hrTimeInZone_5": 50.0,
    }))
    .map(|mut a| {
        let run = kind.0 == "running";
        let split = if run { "RWD_RUN" } else { "RWD_RIDE" };
        let more = activity_more(run, dur, split);
        if let (Value::Object(a), Value::Object(more)) = (&mut a, more) {
            a.extend(more);
        }
        a
    })
}

/// What the search listing sends beside an activity's basics (garth's listing cassette).
fn activity_more(run: bool, dur: f64, split: &str) -> Value {
    let kind = if run { ("running", "") } else { ("cycling", "") };
    json!({
        "eventType": {"typeId": 9, "typeKey": "uncategorized", "sortOrder": 10}, "moderateIntensityMinutes": 5, "vigorousIntensityMinutes": (dur / 60.0) as i64 - 5,
        "steps": if kind.0 == "running" { json!((dur * 2.7) as i64) } else { Value::Null },
        "averageRunningCadenceInStepsPerMinute": if kind.0 == "running" { json!(162.5) } else { Value::Null },
        "avgPower": if kind.0 == "cycling" { json!(194.0) } else { Value::Null }, "normPower": if kind.0 == "cycling" { json!(226.0) } else { Value::Null },
        "splitSummaries": [{"noOfSplits": 1, "totalAscent": 80.0, "duration": dur - 10.0, "splitType": split,
            "numClimbSends": 0, "maxElevationGain": 80.0, "averageElevationGain": 80.0, "maxDistance": (dur * 3.2) as i64, "distance": dur * 3.2,
            "averageSpeed": 3.2, "maxSpeed": 4.4, "numFalls": 0, "elevationLoss": 78.0}],
    })
}

/// The activity's original file as Garmin sends it: a ZIP holding `<id>_ACTIVITY.fit`, a real FIT
/// (a record a second, a lap a kilometre) of the activity the listing describes.
pub fn activity_zip(p: &Person, d: Date) -> Option<Vec<u8>> {
    use std::io::Write;
    let a = activity(p, d)?;
    let start: Timestamp = a["startTimeGMT"].as_str()?.replace(' ', "T").parse::<jiff::civil::DateTime>().ok()?.to_zoned(TimeZone::UTC).ok()?.timestamp();
    let running = a["activityType"]["typeKey"] == "running";
    let secs = a["movingDuration"].as_f64()? as i64;
    let seconds: Vec<super::fit::Second> = (0..secs)
        .map(|i| super::fit::Second {
            at: start + jiff::SignedDuration::from_secs(i),
            hr: (118 + (i * 50 / secs.max(1)) + (h(d, 400 + i as u64 / 60) % 4) as i64) as u8,
            distance_m: i as f64 * 3.2,
            speed_m_s: 3.2,
            altitude_m: 20.0 + 40.0 * (std::f64::consts::PI * i as f64 / secs.max(1) as f64).sin(),
            // A ride on the trainer measures power; a run does not.
            power_w: (!running).then_some((190 + (i / 300) % 3 * 20 + (h(d, 900 + i as u64 / 30) % 15) as i64) as u16),
            // A run carries GPS, a ride on the trainer does not.
            position: running.then_some((60.17 + i as f64 * 1e-5, 24.94 + i as f64 * 1e-5)),
        })
        .collect();
    let floors: Vec<u8> = [120u8, 136, 151, 166, 180].to_vec();
    let fit = super::fit::write(&seconds, running, &floors);
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    z.start_file(format!("{}_ACTIVITY.fit", activity_id(d)), zip::write::SimpleFileOptions::default()).ok()?;
    z.write_all(&fit).ok()?;
    Some(z.finish().ok()?.into_inner())
}

/// The activity service's view of the activity on `d`: its summary, splits and (for rides) a workout.
pub fn activity_detail(p: &Person, d: Date) -> Option<(Value, Value)> {
    let a = activity(p, d)?;
    let t = |k: &str| a[k].as_str().unwrap_or_default().replace(' ', "T") + ".0";
    let detail = json!({
        "activityId": a["activityId"], "activityName": a["activityName"], "activityTypeDTO": a["activityType"],
        "summaryDTO": {"startTimeLocal": t("startTimeLocal"), "startTimeGMT": t("startTimeGMT"), "distance": a["distance"], "duration": a["duration"],
            "movingDuration": a["movingDuration"], "elapsedDuration": a["elapsedDuration"], "averageSpeed": a["averageSpeed"], "averageHR": a["averageHR"],
            "maxHR": a["maxHR"], "minHR": 96, "calories": a["calories"], "elevationGain": a["elevationGain"], "elevationLoss": a["elevationLoss"],
            "trainingEffect": a["aerobicTrainingEffect"], "anaerobicTrainingEffect": a["anaerobicTrainingEffect"], "activityTrainingLoad": a["activityTrainingLoad"]},
        "metadataDTO": {"lapCount": a["lapCount"], "hasSplits": true},
        "splitSummaries": [{"splitType": "RWD_RUN", "noOfSplits": 1, "distance": a["distance"], "duration": a["movingDuration"], "averageSpeed": a["averageSpeed"]}],
    });
    let workouts = if a["activityType"]["typeKey"] == "cycling" {
        json!([{"workoutId": 555, "workoutName": "Sweet spot 3x10", "sportType": {"sportTypeKey": "cycling"}}])
    } else {
        json!([])
    };
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

pub fn fitness_age(d: Date) -> Value {
    json!({"calendarDate": d.to_string(), "chronologicalAge": 41, "fitnessAge": 35.2, "achievableFitnessAge": 33.0, "components": {"rhr": {"value": 52}}})
}

pub fn hr_zones() -> Value {
    json!([{"sport": "DEFAULT", "trainingMethod": "HR_RESERVE", "restingHeartRateUsed": 52, "maxHeartRateUsed": 188, "lactateThresholdHeartRateUsed": 168,
        "zone1Floor": 120, "zone2Floor": 136, "zone3Floor": 151, "zone4Floor": 166, "zone5Floor": 180}])
}

pub fn settings() -> Value {
    json!({"id": 1, "userData": {"gender": "FEMALE", "weight": 61_500.0, "height": 168.0, "birthDate": "1985-04-02", "measurementSystem": "metric",
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
        let each = |r: Result<Vec<Date>, Answer>, f: &dyn Fn(Date) -> Value| match r {
            Ok(ds) => json_answer(Value::Array(ds.into_iter().map(f).collect())),
            Err(a) => a,
        };
        match segs.as_slice() {
            ["usersummary-service", "v2", "dailysummaries"] => each(self.range("dailysummaries", qs("startDate"), qs("endDate")), &daily_summary),
            ["usersummary-service", "stats", "steps", "daily", a, b] => each(self.range("steps", Some(a), Some(b)), &steps),
            ["usersummary-service", "stats", "stress", "daily", a, b] => each(self.range("stress", Some(a), Some(b)), &stress),
            ["usersummary-service", "stats", "hydration", "daily", a, b] => each(self.range("hydration", Some(a), Some(b)), &hydration),
            ["wellness-service", "wellness", "bodyBattery", "reports", "daily"] => {
                each(self.range("bodyBattery", qs("startDate"), qs("endDate")), &|d| body_battery(p, d))
            }
            ["sleep-service", "sleep", "dailySleepSummariesByDate"] => {
                each(self.range("dailySleepSummariesByDate", qs("startDate"), qs("endDate")), &|d| sleep(p, d))
            }
            ["weight-service", "weight", "range", a, b] => match self.range("weight", Some(a), Some(b)) {
                Ok(ds) => json_answer(weight_range(p, &ds)),
                Err(e) => e,
            },
            ["wellness-service", "wellness", "dailyHeartRate"] => match qs("date").and_then(day) {
                Some(d) => json_answer(heart_rate(p, d)),
                None => json_answer(Value::Null),
            },
            ["wellness-service", "wellness", "daily", "spo2", d] => json_answer(day(d).map(spo2).unwrap_or(Value::Null)),
            ["hrv-service", "hrv", d] => match day(d).and_then(|d| hrv(p, d)) {
                Some(v) => json_answer(v),
                None => status(204, ""),
            },
            ["nutrition-service", "food", "logs", d] => json_answer(day(d).map(food).unwrap_or(json!({}))),
            // The calendar reaches past today: Garmin lists the cycles it predicts.
            ["periodichealth-service", "menstrualcycle", "calendar", a, b] => match self.range("menstrual", Some(a), Some(b)) {
                Ok(_) => json_answer(day_of(a).zip(day_of(b)).map_or(json!({"cycleSummaries": []}), |(x, y)| cycles(x, y, self.today()))),
                Err(e) => e,
            },
            ["fitnessage-service", "fitnessage", d] => json_answer(day(d).map(fitness_age).unwrap_or(json!({}))),
            ["biometric-service", "heartRateZones"] => json_answer(hr_zones()),
            ["userprofile-service", "userprofile", "settings"] => json_answer(settings()),
            ["activitylist-service", "activities", "search", "activities"] => {
                let (from, to) = (qs("startDate").and_then(|s| s.parse().ok()), qs("endDate").and_then(|s| s.parse().ok()));
                let (from, to) = (from.unwrap_or(Date::constant(2020, 1, 1)), to.unwrap_or(self.today()).min(self.today()));
                let start: usize = qs("start").and_then(|s| s.parse().ok()).unwrap_or(0);
                let limit: usize = qs("limit").and_then(|s| s.parse().ok()).unwrap_or(20).min(1000);
                // Newest first, as Garmin lists them.
                let all: Vec<Value> = days(from, to).into_iter().rev().filter_map(|d| activity(p, d)).collect();
                json_answer(Value::Array(all.into_iter().skip(start).take(limit).collect()))
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
        self.activity_day(id).is_some_and(|d| activity_id(d) == id && d <= self.today() && activity(self.person, d).is_some())
    }
}
