//! A workout as a chart draws it, the same for every provider: its sample series (heart rate,
//! speed, power, altitude, cadence) as instants and values, its laps or splits, and its time in
//! heart-rate zones, read from a record by its collection's [`WorkoutSpec`].
use super::embedded;
use crate::catalog::{CollectionSpec, LapsSpec, WorkoutSpec, ZonesSpec};
use serde::Serialize;
use serde_json::Value;

/// One workout of one record.
#[derive(Debug, Serialize)]
pub struct Workout {
    pub id: Option<String>,
    pub sport: Option<String>,
    /// The instant it started, as the record gives it.
    pub start: Option<String>,
    pub duration_s: Option<f64>,
    pub distance_m: Option<f64>,
    /// Every series the record carries, in the spec's order (none unless read with its options).
    pub traces: Vec<Trace>,
    /// What the laps are ("laps", "km splits").
    pub laps_are: Option<&'static str>,
    pub laps: Vec<Lap>,
    pub zones: Vec<Zone>,
}

/// One sample series of a workout.
#[derive(Debug, Serialize)]
pub struct Trace {
    pub what: &'static str,
    pub unit: &'static str,
    pub field: &'static str,
    /// `[instant_ms, value]` of every reading present.
    pub points: Vec<(i64, f64)>,
    pub interval_s: f64,
    /// Set when the answer compacted the series (each point then a bucket's mean): the interval it had.
    pub compacted_from_s: Option<f64>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Lap {
    pub n: usize,
    pub seconds: Option<f64>,
    pub distance_m: Option<f64>,
    pub avg_hr_bpm: Option<f64>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Zone {
    /// As the provider numbers them (Garmin's zone 0 is below the first zone).
    pub index: usize,
    pub lower_bpm: Option<f64>,
    pub upper_bpm: Option<f64>,
    /// The time below the first zone (Garmin's zone 0), not a zone of its own.
    pub below_first: bool,
    pub seconds: f64,
}

/// The workouts of `records` (of a collection with a [`WorkoutSpec`]).
pub fn workouts(c: &CollectionSpec, records: &[Value]) -> Vec<Workout> {
    let Some(spec) = c.workout else { return vec![] };
    records.iter().map(|r| workout(c, &spec, r)).collect()
}

fn workout(c: &CollectionSpec, spec: &WorkoutSpec, r: &Value) -> Workout {
    let text = |k: &str| r.get(k).and_then(|v| v.as_str().map(str::to_string).or_else(|| v.as_number().map(|n| n.to_string())));
    let traces = spec
        .series
        .iter()
        .filter_map(|&(what, unit, field)| {
            let s = embedded::read(c, field, r)?;
            (!s.points.is_empty()).then_some(Trace { what, unit, field, points: s.points, interval_s: s.interval_s, compacted_from_s: s.compacted_from_s })
        })
        .collect();
    Workout {
        id: c.key.and_then(text),
        sport: text(spec.sport),
        start: text(spec.start),
        duration_s: r.get(spec.duration_s).and_then(Value::as_f64),
        distance_m: r.get(spec.distance_m).and_then(Value::as_f64),
        traces,
        laps_are: spec.laps.map(|l| l.what),
        laps: spec.laps.map(|l| laps(&l, r)).unwrap_or_default(),
        zones: spec.zones.map(|z| zones(&z, r)).unwrap_or_default(),
    }
}

fn laps(spec: &LapsSpec, r: &Value) -> Vec<Lap> {
    let Some(all) = r.pointer(spec.path).and_then(Value::as_array) else { return vec![] };
    all.iter()
        .enumerate()
        .map(|(i, l)| Lap {
            n: i + 1,
            seconds: l.get(spec.seconds).and_then(Value::as_f64),
            distance_m: match spec.distance_m {
                Some(k) => l.get(k).and_then(Value::as_f64),
                None => Some(1000.0),
            },
            avg_hr_bpm: l.get(spec.avg_hr_bpm).and_then(Value::as_f64),
        })
        .collect()
}

fn zones(spec: &ZonesSpec, r: &Value) -> Vec<Zone> {
    let Some(all) = r.pointer(spec.path).and_then(Value::as_array) else { return vec![] };
    let num = |z: &Value, k: Option<&str>| k.and_then(|k| z.get(k)).and_then(Value::as_f64);
    all.iter()
        .enumerate()
        .filter_map(|(i, z)| {
            let seconds = match spec.seconds {
                Some(k) => z.get(k)?.as_f64()?,
                None => z.as_f64()?,
            };
            let below_first = spec.seconds.is_none() && i == 0;
            Some(Zone { index: i, lower_bpm: num(z, spec.lower_bpm), upper_bpm: num(z, spec.upper_bpm), below_first, seconds })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn collection(all: &'static [CollectionSpec], name: &str) -> &'static CollectionSpec {
        all.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn a_polar_exercise_is_its_series_its_km_splits_and_its_zones() {
        let c = collection(crate::providers::polar::catalog::POLAR.collections, "exercises");
        let r = json!({"id": "X1", "sport": "RUNNING", "start_time": "2026-12-01T17:00:00+00:00", "duration_s": 600.0, "distance_m": 2100.0,
            "samples_heart_rate": {"start": "2026-12-01T17:00:00+00:00", "interval_s": 1, "items": [120, null, 122]},
            "samples_speed": {"start": "2026-12-01T17:00:00+00:00", "interval_s": 60, "compacted_from_interval": 1, "items": [10.5]},
            "splits": {"splits": [{"km": 1, "time_s": 290.0, "avg_hr_bpm": 140.0}, {"km": 2, "time_s": 280.0, "avg_hr_bpm": null}]},
            "hr_zones": [{"index": 0, "lower_bpm": 96, "upper_bpm": 115, "in_zone_s": 12.0}]});
        let w = &workouts(c, &[r])[0];
        assert_eq!(w.id.as_deref(), Some("X1"));
        let t0 = 1_796_144_400_000_i64;
        assert_eq!(w.traces[0].what, "heart rate");
        assert_eq!(w.traces[0].points, vec![(t0, 120.0), (t0 + 2000, 122.0)], "a null is no point");
        assert_eq!((w.traces[1].what, w.traces[1].compacted_from_s), ("speed", Some(1.0)));
        assert_eq!(w.traces.len(), 2, "only the series the record has");
        assert_eq!(
            w.laps,
            vec![
                Lap { n: 1, seconds: Some(290.0), distance_m: Some(1000.0), avg_hr_bpm: Some(140.0) },
                Lap { n: 2, seconds: Some(280.0), distance_m: Some(1000.0), avg_hr_bpm: None }
            ]
        );
        assert_eq!(w.zones, vec![Zone { index: 0, lower_bpm: Some(96.0), upper_bpm: Some(115.0), below_first: false, seconds: 12.0 }]);
    }

    #[test]
    fn a_garmin_activity_reads_its_laps_and_zones_from_its_fit() {
        let c = collection(crate::providers::garmin::catalog::GARMIN.collections, "activity");
        let r =
            json!({"id": "7", "type": "running", "fit": {"laps": [{"timer_s": 300.0, "distance_m": 1001.6, "avg_hr_bpm": 121.0}], "hr_zone_s": [2.0, 988.0]}});
        let w = &workouts(c, &[r])[0];
        assert_eq!((w.id.as_deref(), w.sport.as_deref(), w.laps_are), (Some("7"), Some("running"), Some("laps")));
        assert_eq!(w.laps[0].distance_m, Some(1001.6));
        assert!(w.zones[0].below_first, "Garmin's zone 0 is the time below the first zone");
        assert_eq!(w.zones[1], Zone { index: 1, lower_bpm: None, upper_bpm: None, below_first: false, seconds: 988.0 });
        assert!(w.traces.is_empty());
    }
}
