//! An activity as a watch records it (a record a second, what each sensor read, its laps and its
//! heart-rate zones) and the three files people keep one in: FIT, the device's own binary, read
//! and written with `rustyfit`; TCX and GPX, XML written here. The built-in samples write their
//! files from it, so a sample's files say what its summaries say; `vitals_export` reads a
//! provider's FIT into it to write the TCX or GPX the provider does not serve.
use jiff::Timestamp;

pub mod fit;
pub mod gpx;
pub mod tcx;

/// What kind of activity, in the words every format shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sport {
    Running,
    Cycling,
    Other,
}

/// One record: what each sensor read at `at`, None where it read nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub at: Timestamp,
    pub hr_bpm: Option<u8>,
    /// From the start of the activity.
    pub distance_m: Option<f64>,
    pub speed_m_s: Option<f64>,
    pub altitude_m: Option<f64>,
    /// FIT's cadence: strides (one foot) a minute running, pedal turns a minute cycling.
    pub cadence_rpm: Option<u8>,
    pub power_w: Option<u16>,
    /// Latitude and longitude in degrees.
    pub position: Option<(f64, f64)>,
}

impl Point {
    /// A record at `at` with no reading yet.
    pub fn at(at: Timestamp) -> Point {
        Point { at, hr_bpm: None, distance_m: None, speed_m_s: None, altitude_m: None, cadence_rpm: None, power_w: None, position: None }
    }
}

/// One lap: where it starts, its timer time and distance, and what its records say.
#[derive(Clone, Debug, PartialEq)]
pub struct Lap {
    pub start: Timestamp,
    pub timer_s: f64,
    pub distance_m: f64,
    pub calories_kcal: Option<u16>,
    pub avg_hr_bpm: Option<u8>,
    pub max_hr_bpm: Option<u8>,
    pub max_speed_m_s: Option<f64>,
    /// Ended by the watch's auto lap (a distance), rather than by the end of the activity.
    pub by_distance: bool,
}

/// A whole activity.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub sport: Sport,
    pub points: Vec<Point>,
    pub laps: Vec<Lap>,
    pub calories_kcal: Option<u16>,
    /// The lowest heart rate of zones 1 and up; zone 0 is below the first (FIT's count).
    pub zone_floors_bpm: Vec<u8>,
}

impl Recording {
    /// An activity recorded a point a second, cut into a lap every `lap_m` metres (the last lap
    /// ends with the activity), its calories shared among the laps by their time.
    pub fn every_second(sport: Sport, points: Vec<Point>, lap_m: f64, calories_kcal: u16, zone_floors_bpm: Vec<u8>) -> Recording {
        let laps = auto_laps(&points, lap_m, calories_kcal);
        Recording { sport, points, laps, calories_kcal: Some(calories_kcal), zone_floors_bpm }
    }

    /// The points of each lap, by time: a lap holds the points from its start to the next lap's.
    pub fn lap_points(&self) -> Vec<&[Point]> {
        let mut out = vec![];
        let mut from = 0;
        for (k, _) in self.laps.iter().enumerate() {
            let to = match self.laps.get(k + 1) {
                Some(next) => from + self.points[from..].iter().take_while(|p| p.at < next.start).count(),
                None => self.points.len(),
            };
            out.push(&self.points[from..to]);
            from = to;
        }
        out
    }

    /// The last distance recorded, in metres.
    pub fn distance_m(&self) -> Option<f64> {
        self.points.iter().rev().find_map(|p| p.distance_m)
    }

    /// Seconds the timer ran: a second for each record of an activity recorded every second.
    pub fn timer_s(&self) -> f64 {
        self.laps.iter().map(|l| l.timer_s).sum()
    }

    /// Whether any record has a position (GPX needs them).
    pub fn has_positions(&self) -> bool {
        self.points.iter().any(|p| p.position.is_some())
    }
}

/// Centimetres, as FIT stores a distance: summing the laps' rounded distances gives the total's.
pub fn cm(m: f64) -> u32 {
    (m * 100.0).round().max(0.0) as u32
}

/// Laps of `lap_m` metres (the last one the rest), each with the heart rate and speed of its points.
fn auto_laps(points: &[Point], lap_m: f64, calories_kcal: u16) -> Vec<Lap> {
    let mut laps = vec![];
    let (mut from, mut done_cm) = (0usize, 0u32);
    let total = points.len().max(1) as f64;
    for i in 0..points.len() {
        let dist = points[i].distance_m.unwrap_or(0.0);
        let last = i + 1 == points.len();
        let lap_done = dist >= lap_m * (laps.len() + 1) as f64;
        if !(lap_done || last) {
            continue;
        }
        let part = &points[from..=i];
        let at_cm = cm(dist);
        let hr: Vec<u32> = part.iter().filter_map(|p| p.hr_bpm.map(u32::from)).collect();
        laps.push(Lap {
            start: part[0].at,
            timer_s: part.len() as f64,
            distance_m: f64::from(at_cm - done_cm.min(at_cm)) / 100.0,
            calories_kcal: Some((f64::from(calories_kcal) * part.len() as f64 / total).round() as u16),
            avg_hr_bpm: (!hr.is_empty()).then(|| (f64::from(hr.iter().sum::<u32>()) / hr.len() as f64).round() as u8),
            max_hr_bpm: part.iter().filter_map(|p| p.hr_bpm).max(),
            max_speed_m_s: part.iter().filter_map(|p| p.speed_m_s).reduce(f64::max),
            by_distance: !last || lap_done,
        });
        done_cm = at_cm;
        from = i + 1;
    }
    laps
}

/// Seconds in each heart-rate zone (zone 0 below the first floor), a second a record.
pub fn zone_seconds(points: &[Point], floors: &[u8]) -> Vec<u32> {
    let mut z = vec![0u32; floors.len() + 1];
    for hr in points.iter().filter_map(|p| p.hr_bpm) {
        z[floors.iter().take_while(|f| hr >= **f).count()] += 1;
    }
    z
}

/// Metres climbed and descended between consecutive altitudes.
pub fn ascent_descent(points: &[Point]) -> (f64, f64) {
    let alt: Vec<f64> = points.iter().filter_map(|p| p.altitude_m).collect();
    let up = alt.windows(2).map(|w| (w[1] - w[0]).max(0.0)).sum::<f64>();
    let down = alt.windows(2).map(|w| (w[0] - w[1]).max(0.0)).sum::<f64>();
    (up, down)
}

/// Normalised power: the 4th root of the mean 4th power of the 30-second rolling average.
pub fn normalized_power(points: &[Point]) -> Option<f64> {
    let w: Vec<f64> = points.iter().filter_map(|p| p.power_w.map(f64::from)).collect();
    if w.len() < 30 {
        return None;
    }
    let rolling: Vec<f64> = w.windows(30).map(|x| x.iter().sum::<f64>() / 30.0).collect();
    Some((rolling.iter().map(|x| x.powi(4)).sum::<f64>() / rolling.len() as f64).powf(0.25))
}

/// An instant as both XML formats write it: `2026-11-20T18:00:00Z`.
fn xml_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Text made safe inside an XML element.
fn xml_text(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A number with at most `places` decimals, without trailing zeros or float noise.
fn num(x: f64, places: usize) -> String {
    let s = format!("{x:.places$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn run(n: i64, gps: bool) -> Recording {
        let t0: Timestamp = "2026-11-20T18:00:00Z".parse().unwrap();
        let points = (0..n)
            .map(|i| Point {
                hr_bpm: (i != 5).then_some(120 + (i / 10) as u8),
                distance_m: Some(i as f64 * 3.0),
                speed_m_s: Some(3.0),
                altitude_m: Some(20.0 + (i % 50) as f64 * 0.2),
                position: gps.then_some((60.17 + i as f64 * 1e-5, 24.94)),
                ..Point::at(t0 + jiff::SignedDuration::from_secs(i))
            })
            .collect();
        Recording::every_second(Sport::Running, points, 1000.0, 70, vec![120, 136, 151, 166, 180])
    }

    #[test]
    fn laps_add_up_to_the_whole() {
        let r = run(700, true);
        assert_eq!(r.laps.len(), 3, "two whole kilometres and the rest");
        assert_eq!(r.laps.iter().map(|l| cm(l.distance_m)).sum::<u32>(), cm(r.distance_m().unwrap()));
        assert_eq!(r.timer_s(), 700.0);
        assert_eq!(r.lap_points().iter().map(|p| p.len()).sum::<usize>(), 700);
        assert_eq!(r.laps.iter().filter_map(|l| l.calories_kcal).map(u32::from).sum::<u32>(), 70);
        assert_eq!(zone_seconds(&r.points, &r.zone_floors_bpm).iter().sum::<u32>(), 699, "a second a reading; one had none");
        assert_eq!((num(1.50, 2), num(-0.0001, 2), num(12.0, 1)), ("1.5".into(), "0".into(), "12".into()));
    }
}
