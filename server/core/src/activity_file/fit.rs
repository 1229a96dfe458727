//! FIT, the device's own file, with `rustyfit`: a [`Recording`] written as an activity file (file
//! id, timer start, a record a point, the laps, timer stop, the session, the activity), and any
//! activity file read back into one (its records, laps, sport and calories).
use super::{ascent_descent, cm, zone_seconds, Lap, Point, Recording, Sport};
use embedded_io_adapters::std::FromStd;
use jiff::Timestamp;
use rustyfit::profile::{mesgdef, typedef};
use rustyfit::proto::{Message, FIT};

/// FIT counts seconds from 1989-12-31T00:00:00Z.
pub const EPOCH: i64 = 631_065_600;
/// Degrees per semicircle, FIT's unit of latitude and longitude.
pub const SEMI: f64 = 180.0 / 2_147_483_648.0;

/// Why a FIT could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("the FIT file does not decode ({0})")]
    Decode(String),
    #[error("the FIT file is empty")]
    Empty,
}

/// Who made the device, as a file id says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Maker {
    Garmin,
    Polar,
}

pub fn time(t: Timestamp) -> typedef::DateTime {
    typedef::DateTime((t.as_second() - EPOCH).max(0) as u32)
}

fn instant(t: typedef::DateTime) -> Option<Timestamp> {
    (t.0 != u32::MAX).then(|| Timestamp::from_second(i64::from(t.0) + EPOCH).ok()).flatten()
}

/// Milliseconds, FIT's scale of every time total.
fn ms(s: f64) -> u32 {
    (s * 1000.0).round().max(0.0) as u32
}

/// Metres per second as FIT's mm/s.
fn mm_s(v: f64) -> u16 {
    (v * 1000.0).round().clamp(0.0, 65_534.0) as u16
}

/// Metres of ascent or descent as FIT's whole metres.
fn whole_m(v: f64) -> u16 {
    v.round().clamp(0.0, 65_534.0) as u16
}

fn sport(s: Sport) -> typedef::Sport {
    match s {
        Sport::Running => typedef::Sport::RUNNING,
        Sport::Cycling => typedef::Sport::CYCLING,
        Sport::Other => typedef::Sport::GENERIC,
    }
}

fn record(p: &Point) -> mesgdef::Record {
    let mut r = mesgdef::Record::new();
    r.timestamp = time(p.at);
    if let Some(hr) = p.hr_bpm {
        r.heart_rate = hr;
    }
    if let Some(d) = p.distance_m {
        r.distance = cm(d);
    }
    if let Some(v) = p.speed_m_s {
        r.speed = mm_s(v);
    }
    if let Some(a) = p.altitude_m {
        r.set_enhanced_altitude_scaled(a);
    }
    if let Some(c) = p.cadence_rpm {
        r.cadence = c;
    }
    if let Some(w) = p.power_w {
        r.power = w;
    }
    if let Some((lat, lon)) = p.position {
        r.position_lat = (lat / SEMI).round() as i32;
        r.position_long = (lon / SEMI).round() as i32;
    }
    r
}

/// Heart rate (average, highest, lowest) and speed (average over the timer, highest) of some points.
struct Stats {
    avg_hr: u8,
    max_hr: u8,
    min_hr: u8,
    max_speed: u16,
    avg_power: u16,
    max_power: u16,
}

fn stats(points: &[Point]) -> Stats {
    let hr: Vec<u32> = points.iter().filter_map(|p| p.hr_bpm.map(u32::from)).collect();
    let power: Vec<u32> = points.iter().filter_map(|p| p.power_w.map(u32::from)).collect();
    let mean = |v: &[u32]| (!v.is_empty()).then(|| (f64::from(v.iter().sum::<u32>()) / v.len() as f64).round() as u32);
    Stats {
        avg_hr: mean(&hr).map_or(u8::MAX, |x| x as u8),
        max_hr: hr.iter().max().map_or(u8::MAX, |x| *x as u8),
        min_hr: hr.iter().min().map_or(u8::MAX, |x| *x as u8),
        max_speed: points.iter().filter_map(|p| p.speed_m_s).reduce(f64::max).map_or(u16::MAX, mm_s),
        avg_power: mean(&power).map_or(u16::MAX, |x| x as u16),
        max_power: power.iter().max().map_or(u16::MAX, |x| *x as u16),
    }
}

fn timer_event(at: Timestamp, kind: typedef::EventType) -> Message {
    let mut e = mesgdef::Event::new();
    e.timestamp = time(at);
    e.event = typedef::Event::TIMER;
    e.event_type = kind;
    Message::from(e)
}

fn lap(r: &Recording, k: usize, l: &Lap, points: &[Point]) -> Message {
    let s = stats(points);
    let mut m = mesgdef::Lap::new();
    m.message_index = typedef::MessageIndex(k as u16);
    m.event = typedef::Event::LAP;
    m.event_type = typedef::EventType::STOP;
    m.start_time = time(l.start);
    m.timestamp = time(points.last().map_or(l.start, |p| p.at));
    m.total_elapsed_time = ms(l.timer_s);
    m.total_timer_time = ms(l.timer_s);
    m.total_distance = cm(l.distance_m);
    m.avg_speed = mm_s(l.distance_m / l.timer_s.max(1.0));
    m.max_speed = s.max_speed;
    m.avg_heart_rate = s.avg_hr;
    m.max_heart_rate = s.max_hr;
    m.min_heart_rate = s.min_hr;
    m.avg_power = s.avg_power;
    m.max_power = s.max_power;
    if let Some(c) = l.calories_kcal {
        m.total_calories = c;
    }
    let (up, down) = ascent_descent(points);
    m.total_ascent = whole_m(up);
    m.total_descent = whole_m(down);
    m.lap_trigger = if l.by_distance { typedef::LapTrigger::DISTANCE } else { typedef::LapTrigger::SESSION_END };
    m.sport = sport(r.sport);
    m.time_in_hr_zone = zone_seconds(points, &r.zone_floors_bpm).into_iter().map(|x| x * 1000).collect();
    Message::from(m)
}

fn session(r: &Recording, start: Timestamp, end: Timestamp, utc_offset_s: i32) -> (Message, Message) {
    let s = stats(&r.points);
    let timer = r.timer_s();
    let distance = r.distance_m().unwrap_or(0.0);
    let mut m = mesgdef::Session::new();
    m.message_index = typedef::MessageIndex(0);
    m.event = typedef::Event::SESSION;
    m.event_type = typedef::EventType::STOP;
    m.trigger = typedef::SessionTrigger::ACTIVITY_END;
    m.sport = sport(r.sport);
    m.start_time = time(start);
    m.timestamp = time(end);
    m.total_elapsed_time = ms(timer);
    m.total_timer_time = ms(timer);
    m.total_moving_time = ms(r.points.iter().filter(|p| p.speed_m_s.is_some_and(|v| v > 0.0)).count() as f64);
    m.total_distance = cm(distance);
    m.avg_speed = mm_s(distance / timer.max(1.0));
    m.max_speed = s.max_speed;
    m.avg_heart_rate = s.avg_hr;
    m.max_heart_rate = s.max_hr;
    m.min_heart_rate = s.min_hr;
    m.avg_power = s.avg_power;
    m.max_power = s.max_power;
    if let Some(np) = super::normalized_power(&r.points) {
        m.normalized_power = np.round() as u16;
    }
    if let Some(c) = r.calories_kcal {
        m.total_calories = c;
    }
    let (up, down) = ascent_descent(&r.points);
    m.total_ascent = whole_m(up);
    m.total_descent = whole_m(down);
    m.first_lap_index = 0;
    m.num_laps = r.laps.len() as u16;
    m.time_in_hr_zone = zone_seconds(&r.points, &r.zone_floors_bpm).into_iter().map(|x| x * 1000).collect();
    if let Some((lat, lon)) = r.points.iter().find_map(|p| p.position) {
        m.start_position_lat = (lat / SEMI).round() as i32;
        m.start_position_long = (lon / SEMI).round() as i32;
    }
    let mut a = mesgdef::Activity::new();
    a.timestamp = time(end);
    a.total_timer_time = ms(timer);
    a.num_sessions = 1;
    a.r#type = typedef::Activity::MANUAL;
    a.event = typedef::Event::ACTIVITY;
    a.event_type = typedef::EventType::STOP;
    a.local_timestamp = typedef::LocalDateTime((time(end).0 as i64 + i64::from(utc_offset_s)).max(0) as u32);
    (Message::from(m), Message::from(a))
}

/// `r` as a FIT activity file from a `maker` device whose clock showed `utc_offset_s` from UTC.
pub fn write(r: &Recording, maker: Maker, utc_offset_s: i32) -> Vec<u8> {
    let (Some(first), Some(last)) = (r.points.first(), r.points.last()) else {
        return vec![];
    };
    let mut messages: Vec<Message> = vec![];
    let mut file_id = mesgdef::FileId::new();
    file_id.r#type = typedef::File::ACTIVITY;
    file_id.manufacturer = match maker {
        Maker::Garmin => typedef::Manufacturer::GARMIN,
        Maker::Polar => typedef::Manufacturer::POLAR_ELECTRO,
    };
    file_id.time_created = time(first.at);
    messages.push(Message::from(file_id));
    messages.push(timer_event(first.at, typedef::EventType::START));
    messages.extend(r.points.iter().map(|p| Message::from(record(p))));
    for (k, (l, points)) in r.laps.iter().zip(r.lap_points()).enumerate() {
        messages.push(lap(r, k, l, points));
    }
    messages.push(timer_event(last.at, typedef::EventType::STOP_ALL));
    let (session, activity) = session(r, first.at, last.at, utc_offset_s);
    messages.push(session);
    messages.push(activity);
    let mut fit = FIT { messages, ..Default::default() };
    let mut out = std::io::Cursor::new(Vec::new());
    rustyfit::Encoder::new().encode(FromStd::new(&mut out), &mut fit).expect("encoding to memory");
    out.into_inner()
}

/// The decoded messages of a FIT.
pub fn decode(bytes: &[u8]) -> Result<FIT, FitError> {
    rustyfit::Decoder::new().decode(FromStd::new(std::io::Cursor::new(bytes))).map_err(|e| FitError::Decode(format!("{e:?}")))?.ok_or(FitError::Empty)
}

fn valid<T: PartialEq + Copy>(x: T, invalid: T) -> Option<T> {
    (x != invalid).then_some(x)
}

/// A record's readings as a [`Point`] (None for a record without a time).
pub fn point(r: &mesgdef::Record) -> Option<Point> {
    let speed = if r.enhanced_speed != u32::MAX { Some(r.enhanced_speed_scaled()) } else { valid(r.speed, u16::MAX).map(|v| f64::from(v) / 1000.0) };
    let altitude = if r.enhanced_altitude != u32::MAX { Some(r.enhanced_altitude_scaled()) } else { valid(r.altitude, u16::MAX).map(|_| r.altitude_scaled()) };
    Some(Point {
        at: instant(r.timestamp)?,
        hr_bpm: valid(r.heart_rate, u8::MAX),
        distance_m: valid(r.distance, u32::MAX).map(|d| f64::from(d) / 100.0),
        speed_m_s: speed,
        altitude_m: altitude,
        cadence_rpm: valid(r.cadence, u8::MAX),
        power_w: valid(r.power, u16::MAX),
        position: (r.position_lat != i32::MAX && r.position_long != i32::MAX).then(|| (f64::from(r.position_lat) * SEMI, f64::from(r.position_long) * SEMI)),
    })
}

/// An activity file read back: its records in time order, its laps, sport and calories.
pub fn read(bytes: &[u8]) -> Result<Recording, FitError> {
    let fit = decode(bytes)?;
    let (mut points, mut laps) = (vec![], vec![]);
    let (mut kind, mut calories) = (Sport::Other, None);
    for m in &fit.messages {
        match m.num {
            typedef::MesgNum::RECORD => points.extend(point(&mesgdef::Record::from(m))),
            typedef::MesgNum::LAP => {
                let l = mesgdef::Lap::from(m);
                let Some(start) = instant(l.start_time) else { continue };
                let timer = if l.total_timer_time != u32::MAX { l.total_timer_time_scaled() } else { l.total_elapsed_time_scaled() };
                laps.push(Lap {
                    start,
                    timer_s: if timer.is_finite() { timer } else { 0.0 },
                    distance_m: valid(l.total_distance, u32::MAX).map_or(0.0, |d| f64::from(d) / 100.0),
                    calories_kcal: valid(l.total_calories, u16::MAX),
                    avg_hr_bpm: valid(l.avg_heart_rate, u8::MAX),
                    max_hr_bpm: valid(l.max_heart_rate, u8::MAX),
                    max_speed_m_s: valid(l.max_speed, u16::MAX).map(|v| f64::from(v) / 1000.0),
                    by_distance: l.lap_trigger == typedef::LapTrigger::DISTANCE,
                });
            }
            typedef::MesgNum::SESSION => {
                let s = mesgdef::Session::from(m);
                kind = match s.sport {
                    typedef::Sport::RUNNING => Sport::Running,
                    typedef::Sport::CYCLING => Sport::Cycling,
                    _ => Sport::Other,
                };
                calories = valid(s.total_calories, u16::MAX);
            }
            _ => {}
        }
    }
    points.sort_by_key(|p| p.at);
    laps.sort_by_key(|l| l.start);
    Ok(Recording { sport: kind, points, laps, calories_kcal: calories, zone_floors_bpm: vec![] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back() {
        let r = super::super::tests::run(700, true);
        let back = read(&write(&r, Maker::Garmin, 7200)).unwrap();
        assert_eq!(back.sport, Sport::Running);
        assert_eq!(back.points.len(), 700);
        assert_eq!(back.points[5].hr_bpm, None, "no reading stays no reading");
        assert_eq!(back.points[9].distance_m, Some(27.0));
        let (lat, lon) = back.points[100].position.unwrap();
        assert!((lat - 60.171).abs() < 1e-6 && (lon - 24.94).abs() < 1e-6, "{lat} {lon}");
        assert_eq!(back.laps.len(), 3);
        assert_eq!(back.laps.iter().map(|l| l.distance_m).collect::<Vec<_>>(), r.laps.iter().map(|l| l.distance_m).collect::<Vec<_>>());
        assert_eq!(back.calories_kcal, Some(70));
        assert!(matches!(read(b"not a fit"), Err(FitError::Decode(_))));
    }
}
