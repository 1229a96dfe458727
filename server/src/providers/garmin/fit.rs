//! An activity's FIT file, read in memory with a maintained FIT crate (`rustyfit`): its laps, the
//! time the watch counted in each heart-rate zone, and its per-second records summarised. The GPS
//! track is returned only when asked, because it shows where a person lives. The sample person's
//! FIT is written with the same crate, so the sandbox and the twin serve a real file.
use crate::time::rfc3339;
use embedded_io_adapters::std::FromStd;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use rustyfit::profile::{mesgdef, typedef};
use rustyfit::proto::{Message, FIT};
use serde_json::{json, Value};

/// FIT counts seconds from 1989-12-31T00:00:00Z.
const FIT_EPOCH: i64 = 631_065_600;
/// Degrees per semicircle.
const SEMI: f64 = 180.0 / 2_147_483_648.0;

fn at(t: typedef::DateTime) -> Option<String> {
    (t.0 != u32::MAX).then(|| Timestamp::from_second(i64::from(t.0) + FIT_EPOCH).ok().map(|t| rfc3339(&t.to_zoned(TimeZone::UTC)))).flatten()
}

fn valid_u8(x: u8) -> Option<f64> {
    (x != u8::MAX).then_some(f64::from(x))
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// One second of the sample's activity.
pub struct Second {
    pub at: Timestamp,
    pub hr: u8,
    pub distance_m: f64,
    pub speed_m_s: f64,
    pub position: Option<(f64, f64)>,
}

fn fit_time(t: Timestamp) -> typedef::DateTime {
    typedef::DateTime((t.as_second() - FIT_EPOCH).max(0) as u32)
}

/// Seconds of each heart-rate zone above `floors` (zone 0 is below the first floor).
fn zone_ms(seconds: &[Second], floors: &[u8]) -> Vec<u32> {
    let mut z = vec![0u32; floors.len() + 1];
    for s in seconds {
        let k = floors.iter().take_while(|f| s.hr >= **f).count();
        z[k] += 1000;
    }
    z
}

/// The sample's FIT: a file id, a record a second, a lap a kilometre, the session.
pub fn write(seconds: &[Second], running: bool, floors: &[u8]) -> Vec<u8> {
    let mut messages: Vec<Message> = vec![];
    let mut file_id = mesgdef::FileId::new();
    file_id.r#type = typedef::File::ACTIVITY;
    file_id.manufacturer = typedef::Manufacturer::GARMIN;
    if let Some(first) = seconds.first() {
        file_id.time_created = fit_time(first.at);
    }
    messages.push(Message::from(file_id));
    for s in seconds {
        let mut r = mesgdef::Record::new();
        r.timestamp = fit_time(s.at);
        r.heart_rate = s.hr;
        r.distance = (s.distance_m * 100.0).round() as u32;
        r.speed = (s.speed_m_s * 1000.0).round() as u16;
        if let Some((lat, lon)) = s.position {
            r.position_lat = (lat / SEMI).round() as i32;
            r.position_long = (lon / SEMI).round() as i32;
        }
        messages.push(Message::from(r));
    }
    let mut start = 0;
    let mut index = 0u16;
    for i in 0..seconds.len() {
        let last = i + 1 == seconds.len();
        let km_done = seconds[i].distance_m >= f64::from(index + 1) * 1000.0;
        if !(km_done || last) {
            continue;
        }
        let lap = &seconds[start..=i];
        let mut l = mesgdef::Lap::new();
        l.message_index = typedef::MessageIndex(index);
        l.start_time = fit_time(lap[0].at);
        l.timestamp = fit_time(lap[lap.len() - 1].at);
        l.total_elapsed_time = (lap.len() as u32) * 1000;
        l.total_timer_time = (lap.len() as u32) * 1000;
        l.total_distance = ((lap[lap.len() - 1].distance_m - if start == 0 { 0.0 } else { seconds[start - 1].distance_m }) * 100.0).round() as u32;
        l.avg_heart_rate = (lap.iter().map(|s| u32::from(s.hr)).sum::<u32>() / lap.len() as u32) as u8;
        l.max_heart_rate = lap.iter().map(|s| s.hr).max().unwrap_or(0);
        l.avg_speed = (lap.iter().map(|s| s.speed_m_s).sum::<f64>() / lap.len() as f64 * 1000.0).round() as u16;
        l.time_in_hr_zone = zone_ms(lap, floors);
        messages.push(Message::from(l));
        index += 1;
        start = i + 1;
    }
    let mut session = mesgdef::Session::new();
    session.sport = if running { typedef::Sport::RUNNING } else { typedef::Sport::CYCLING };
    if let (Some(a), Some(b)) = (seconds.first(), seconds.last()) {
        session.start_time = fit_time(a.at);
        session.timestamp = fit_time(b.at);
        session.total_elapsed_time = (seconds.len() as u32) * 1000;
        session.total_distance = (b.distance_m * 100.0).round() as u32;
    }
    session.num_laps = index;
    session.time_in_hr_zone = zone_ms(seconds, floors);
    messages.push(Message::from(session));
    let mut fit = FIT { messages, ..Default::default() };
    let mut out = std::io::Cursor::new(Vec::new());
    rustyfit::Encoder::new().encode(FromStd::new(&mut out), &mut fit).expect("encoding to memory");
    out.into_inner()
}

/// Laps, time per heart-rate zone and the per-second records of a FIT, summarised; the GPS track
/// only when `gps`.
pub fn summarise(bytes: &[u8], gps: bool) -> Result<Value, String> {
    let fit = rustyfit::Decoder::new()
        .decode(FromStd::new(std::io::Cursor::new(bytes)))
        .map_err(|e| format!("the FIT file does not decode ({e:?})"))?
        .ok_or("the FIT file is empty")?;
    let (mut laps, mut zones, mut hr, mut speed, mut track) = (vec![], Value::Null, vec![], vec![], vec![]);
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
                hr.extend(valid_u8(r.heart_rate));
                if r.speed != u16::MAX {
                    speed.push(f64::from(r.speed) / 1000.0);
                }
                if r.distance != u32::MAX {
                    last_distance = Some(f64::from(r.distance) / 100.0);
                }
                if gps && r.position_lat != i32::MAX && r.position_long != i32::MAX {
                    track.push(json!([(f64::from(r.position_lat) * SEMI * 1e6).round() / 1e6, (f64::from(r.position_long) * SEMI * 1e6).round() / 1e6]));
                }
            }
            _ => {}
        }
    }
    let stat = |v: &[f64]| {
        (!v.is_empty()).then(|| json!({"min": v.iter().cloned().fold(f64::MAX, f64::min), "avg": r1(v.iter().sum::<f64>() / v.len() as f64), "max": v.iter().cloned().fold(f64::MIN, f64::max), "samples": v.len()}))
    };
    let mut out = json!({
        "laps": laps,
        "hr_zone_s": zones,
        "records": {"count": records, "heart_rate_bpm": stat(&hr), "speed_m_s": stat(&speed), "distance_m": last_distance},
        "method": "read from the activity's FIT file: laps and time in each heart-rate zone as the watch recorded them (zone 0 is below \
                   the first zone); records = every per-second record, heart rate and speed as min/avg/max of the valid ones",
    });
    if gps {
        out["track"] = json!(track);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        let t0: Timestamp = "2026-11-20T18:00:00Z".parse().unwrap();
        let secs: Vec<Second> = (0..700)
            .map(|i| Second {
                at: t0 + jiff::SignedDuration::from_secs(i),
                hr: 120 + (i / 10) as u8,
                distance_m: i as f64 * 3.0,
                speed_m_s: 3.0,
                position: Some((60.17, 24.94)),
            })
            .collect();
        let bytes = write(&secs, true, &[120, 136, 151, 166, 180]);
        let s = summarise(&bytes, false).unwrap();
        assert_eq!(s["laps"].as_array().unwrap().len(), 3, "two whole kilometres and the rest");
        assert_eq!(s["laps"][0]["distance_m"], 1002.0);
        assert_eq!(s["records"]["count"], 700);
        assert_eq!(s["records"]["heart_rate_bpm"]["max"], 189.0);
        assert_eq!(s["hr_zone_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum::<f64>(), 700.0);
        assert!(s.get("track").is_none(), "no GPS unless asked");
        assert_eq!(summarise(&bytes, true).unwrap()["track"][0], json!([60.17, 24.94]));
        assert!(summarise(b"not a fit", false).is_err());
    }
}
