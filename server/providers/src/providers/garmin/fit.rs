//! An activity's FIT file, read in memory with a maintained FIT crate (`rustyfit`, through
//! `activity_file::fit`): its laps, the time the watch counted in each heart-rate zone, and its
//! per-second records summarised. The GPS track is returned only when asked, because it shows
//! where a person lives. The sample person's FIT is written by `activity_file::fit` from the
//! same records its summaries are computed from, so the sandbox and the twin serve a real file
//! that agrees with them.
use crate::activity_file::fit::{decode, FitError, EPOCH as FIT_EPOCH, SEMI};
use crate::time::rfc3339;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use rustyfit::profile::{mesgdef, typedef};
use serde_json::{json, Value};

fn at(t: typedef::DateTime) -> Option<String> {
    (t.0 != u32::MAX).then(|| Timestamp::from_second(i64::from(t.0) + FIT_EPOCH).ok().map(|t| rfc3339(&t.to_zoned(TimeZone::UTC)))).flatten()
}

fn valid_u8(x: u8) -> Option<f64> {
    (x != u8::MAX).then_some(f64::from(x))
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// What to read from a FIT beside its laps, zones and the records' summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct Want {
    /// The GPS track (`track`): only when asked, it shows where the person was.
    pub gps: bool,
    /// The records as series a second apart (`samples_*`), for a chart of the workout.
    pub samples: bool,
}

/// The sample series read from records, in [`SAMPLE_FIELDS`] order.
const CHANNELS: usize = 5;
/// The longest span of records turned into series a second apart (two days of items each).
const MAX_SAMPLE_SPAN_S: i64 = 48 * 3600;
/// The fields `Want::samples` adds: `{start, interval_s: 1, items}` each, as Polar's raw samples.
pub const SAMPLE_FIELDS: [&str; CHANNELS] = ["samples_heart_rate", "samples_speed", "samples_altitude", "samples_power", "samples_cadence"];

/// One record's readings in [`SAMPLE_FIELDS`] order (None where the device wrote the invalid value).
fn readings(r: &mesgdef::Record) -> [Option<f64>; CHANNELS] {
    let speed = if r.enhanced_speed != u32::MAX { Some(r.enhanced_speed_scaled()) } else { (r.speed != u16::MAX).then(|| f64::from(r.speed) / 1000.0) };
    let altitude = if r.enhanced_altitude != u32::MAX { Some(r.enhanced_altitude_scaled()) } else { (r.altitude != u16::MAX).then(|| r.altitude_scaled()) };
    [
        valid_u8(r.heart_rate),
        speed.map(|v| (v * 1000.0).round() / 1000.0),
        altitude.map(r1),
        (r.power != u16::MAX).then(|| f64::from(r.power)),
        valid_u8(r.cadence),
    ]
}

/// Laps, time per heart-rate zone and the per-second records of a FIT, summarised; the GPS track
/// and the records as series only when `want` asks.
pub fn summarise(bytes: &[u8], want: Want) -> Result<Value, FitError> {
    let fit = decode(bytes)?;
    let (mut laps, mut zones, mut track) = (vec![], Value::Null, vec![]);
    let mut values: [Vec<f64>; CHANNELS] = Default::default();
    let mut seconds: Vec<(i64, [Option<f64>; CHANNELS])> = vec![];
    let mut last_distance = None;
    let mut records = 0usize;
    for m in &fit.messages {
        match m.num {
            typedef::MesgNum::LAP => {
                let l = mesgdef::Lap::from(m);
                laps.push(json!({
                    "lap": laps.len() + 1,
                    "start": at(l.start_time),
                    "elapsed_s": r1(l.total_elapsed_time_scaled()),
                    "timer_s": r1(l.total_timer_time_scaled()),
                    "distance_m": r1(l.total_distance_scaled()),
                    "avg_hr_bpm": valid_u8(l.avg_heart_rate),
                    "max_hr_bpm": valid_u8(l.max_heart_rate),
                    "avg_speed_m_s": (l.avg_speed != u16::MAX).then(|| (l.avg_speed_scaled() * 1000.0).round() / 1000.0),
                    "hr_zone_s": l.time_in_hr_zone_scaled().iter().map(|s| r1(*s)).collect::<Vec<_>>(),
                }));
            }
            typedef::MesgNum::SESSION => {
                let s = mesgdef::Session::from(m);
                zones = json!(s.time_in_hr_zone_scaled().iter().map(|x| r1(*x)).collect::<Vec<_>>());
            }
            typedef::MesgNum::RECORD => {
                let r = mesgdef::Record::from(m);
                records += 1;
                let read = readings(&r);
                for (all, v) in values.iter_mut().zip(read) {
                    all.extend(v);
                }
                if want.samples && r.timestamp.0 != u32::MAX {
                    seconds.push((i64::from(r.timestamp.0) + FIT_EPOCH, read));
                }
                if r.distance != u32::MAX {
                    last_distance = Some(f64::from(r.distance) / 100.0);
                }
                if want.gps && r.position_lat != i32::MAX && r.position_long != i32::MAX {
                    track.push(json!([(f64::from(r.position_lat) * SEMI * 1e6).round() / 1e6, (f64::from(r.position_long) * SEMI * 1e6).round() / 1e6]));
                }
            }
            _ => {}
        }
    }
    let stat = |v: &[f64]| {
        (!v.is_empty()).then(|| json!({"min": v.iter().cloned().fold(f64::MAX, f64::min), "avg": r1(v.iter().sum::<f64>() / v.len() as f64), "max": v.iter().cloned().fold(f64::MIN, f64::max), "samples": v.len()}))
    };
    let [hr, speed, altitude, power, cadence] = &values;
    let mut out = json!({
        "laps": laps,
        "hr_zone_s": zones,
        "records": {"count": records, "heart_rate_bpm": stat(hr), "speed_m_s": stat(speed), "altitude_m": stat(altitude), "power_w": stat(power),
                    "cadence": stat(cadence), "distance_m": last_distance},
        "method": "read from the activity's FIT file: laps and time in each heart-rate zone as the watch recorded them (zone 0 is below \
                   the first zone); records = every per-second record, each reading as min/avg/max of the valid ones",
    });
    if want.gps {
        out["track"] = json!(track);
    }
    let mut fields = json!({ "fit": out });
    let span_s = seconds.iter().map(|r| r.0).max().zip(seconds.iter().map(|r| r.0).min()).map_or(0, |(b, a)| b - a);
    if want.samples && span_s > MAX_SAMPLE_SPAN_S {
        fields["fit"]["samples_left_out"] = json!(format!(
            "the records span {} hours; series a second apart are drawn up to {} hours, so none were added (the summary above holds every record)",
            span_s / 3600,
            MAX_SAMPLE_SPAN_S / 3600
        ));
    } else if want.samples {
        for (k, f) in SAMPLE_FIELDS.iter().enumerate() {
            if let Some(series) = one_a_second(&seconds, k) {
                fields[*f] = series;
            }
        }
    }
    Ok(fields)
}

/// Channel `k` of the records on a grid of one second from the first record, null where no record
/// holds a valid reading (a watch that records "smart" writes one every few seconds); None when no
/// record has one at all.
fn one_a_second(records: &[(i64, [Option<f64>; CHANNELS])], k: usize) -> Option<Value> {
    let first = records.iter().map(|r| r.0).min()?;
    let last = records.iter().map(|r| r.0).max()?;
    if records.iter().all(|r| r.1[k].is_none()) {
        return None;
    }
    let mut items = vec![Value::Null; (last - first + 1) as usize];
    for (t, read) in records {
        if let Some(v) = read[k] {
            items[(t - first) as usize] = json!(v);
        }
    }
    let start = Timestamp::from_second(first).ok()?;
    Some(json!({"start": rfc3339(&start.to_zoned(TimeZone::UTC)), "interval_s": 1, "items": items}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity_file::{fit::write, fit::Maker, Point, Recording, Sport};

    fn recording(seconds: &[i64], power: bool, gps: bool) -> Recording {
        let t0: Timestamp = "2026-11-20T18:00:00Z".parse().unwrap();
        let points = seconds
            .iter()
            .map(|&i| Point {
                hr_bpm: Some(120 + (i / 10) as u8),
                distance_m: Some(i as f64 * 3.0),
                speed_m_s: Some(3.0),
                altitude_m: Some(20.0 + (i % 50) as f64 * 0.2),
                power_w: power.then_some(200),
                position: gps.then_some((60.17, 24.94)),
                ..Point::at(t0 + jiff::SignedDuration::from_secs(i))
            })
            .collect();
        Recording::every_second(if power { Sport::Cycling } else { Sport::Running }, points, 1000.0, 50, vec![120, 136, 151, 166, 180])
    }

    #[test]
    fn what_is_written_reads_back() {
        let bytes = write(&recording(&(0..700).collect::<Vec<_>>(), false, true), Maker::Garmin, 0);
        let s = summarise(&bytes, Want::default()).unwrap()["fit"].clone();
        assert_eq!(s["laps"].as_array().unwrap().len(), 3, "two whole kilometres and the rest");
        assert_eq!(s["laps"][0]["distance_m"], 1002.0);
        assert_eq!(s["records"]["count"], 700);
        assert_eq!(s["records"]["heart_rate_bpm"]["max"], 189.0);
        assert_eq!(s["hr_zone_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum::<f64>(), 700.0);
        assert!(s.get("track").is_none(), "no GPS unless asked");
        assert_eq!(summarise(&bytes, Want { gps: true, samples: false }).unwrap()["fit"]["track"][0], json!([60.17, 24.94]));
        assert!(summarise(b"not a fit", Want::default()).is_err());
        let w = summarise(&bytes, Want { gps: false, samples: true }).unwrap();
        assert_eq!(w["samples_heart_rate"]["items"].as_array().unwrap().len(), 700);
        assert_eq!(w["samples_heart_rate"]["start"], "2026-11-20T18:00:00+00:00");
        assert_eq!(w["samples_altitude"]["items"][3], 20.6);
        assert!(w.get("samples_power").is_none(), "a run without a power meter has no power series");
        assert_eq!(w["fit"]["records"]["altitude_m"]["max"], 29.8);
    }

    #[test]
    fn records_a_few_seconds_apart_leave_the_seconds_between_empty() {
        let w = summarise(&write(&recording(&[0, 1, 4, 5], true, false), Maker::Garmin, 0), Want { gps: false, samples: true }).unwrap();
        assert_eq!(w["samples_power"]["items"], json!([200.0, 200.0, null, null, 200.0, 200.0]));
    }
}
