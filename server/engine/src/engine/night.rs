//! A night as a chart draws it, the same for every provider: the hypnogram as runs of one stage,
//! the minutes of each stage counted from those runs, and the heart rate and HRV through it, read
//! from a sleep record by its collection's [`NightSpec`]. Two devices' nights stay two nights.
use super::embedded::{self, instant_ms};
use crate::catalog::{CollectionSpec, NightSpec, Stage};
use serde::Serialize;
use serde_json::Value;

/// One night of one record.
#[derive(Debug, Serialize)]
pub struct Night {
    /// The record's day (the day the provider files the night under).
    pub day: Option<String>,
    /// Instants as the record gives them.
    pub start: String,
    pub end: Option<String>,
    /// Runs of one stage: `[from_ms, to_ms, stage]`, in order, from the first epoch.
    pub stages: Vec<(i64, i64, Stage)>,
    /// Minutes in each stage, counted from the hypnogram's epochs.
    pub minutes: StageMinutes,
    /// Minutes in each stage as the provider totals them (what the text answer says), by stage.
    pub said: std::collections::BTreeMap<Stage, f64>,
    /// `[instant_ms, value]` of every reading present (nulls left out).
    pub heart_rate: Vec<(i64, f64)>,
    pub hrv: Vec<(i64, f64)>,
    pub epoch_s: u32,
}

#[derive(Debug, Default, Serialize, PartialEq)]
pub struct StageMinutes {
    pub deep: f64,
    pub light: f64,
    pub rem: f64,
    pub awake: f64,
    pub unknown: f64,
}

/// The nights of `records` (sleep records of a collection with a [`NightSpec`]); a record with no
/// readable hypnogram start is left out (there is nothing to draw).
pub fn nights(c: &CollectionSpec, records: &[Value]) -> Vec<Night> {
    let Some(spec) = c.night else { return vec![] };
    records.iter().filter_map(|r| night(c, &spec, r)).collect()
}

fn night(c: &CollectionSpec, spec: &NightSpec, r: &Value) -> Option<Night> {
    let start = r.get(spec.start)?.as_str()?.to_string();
    let t0 = instant_ms(&start)?;
    let step = i64::from(spec.epoch_s) * 1000;
    let mut stages: Vec<(i64, i64, Stage)> = vec![];
    let mut minutes = StageMinutes::default();
    for (i, ch) in r.get(spec.hypnogram).and_then(Value::as_str).unwrap_or("").chars().enumerate() {
        let stage = spec.legend.iter().find(|(c, _)| *c == ch).map_or(Stage::Unknown, |(_, s)| *s);
        *minutes.of(stage) += f64::from(spec.epoch_s) / 60.0;
        let from = t0 + i as i64 * step;
        match stages.last_mut() {
            Some(run) if run.2 == stage && run.1 == from => run.1 = from + step,
            _ => stages.push((from, from + step, stage)),
        }
    }
    let series = |field: Option<&str>| field.and_then(|f| embedded::read(c, f, r)).map(|s| s.points).unwrap_or_default();
    Some(Night {
        day: r.get("day").or_else(|| r.get("date")).and_then(Value::as_str).map(str::to_string),
        end: r.get(spec.end).and_then(Value::as_str).map(str::to_string),
        start,
        stages,
        minutes,
        said: spec.totals.iter().filter_map(|(s, f, div)| Some((*s, r.get(*f)?.as_f64()? / div))).collect(),
        heart_rate: series(spec.heart_rate),
        hrv: series(spec.hrv),
        epoch_s: spec.epoch_s,
    })
}

impl StageMinutes {
    fn of(&mut self, s: Stage) -> &mut f64 {
        match s {
            Stage::Deep => &mut self.deep,
            Stage::Light => &mut self.light,
            Stage::Rem => &mut self.rem,
            Stage::Awake => &mut self.awake,
            Stage::Unknown => &mut self.unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn oura() -> &'static CollectionSpec {
        crate::providers::oura::catalog::OURA.collections.iter().find(|c| c.name == "sleep").unwrap()
    }

    #[test]
    fn an_oura_night_is_runs_of_stages_and_minutes_from_its_epochs() {
        let r = json!({"day": "2026-12-05", "bedtime_start": "2026-12-04T22:00:00+00:00", "bedtime_end": "2026-12-04T22:30:00+00:00",
            "sleep_phase_5_min": "442213",
            "heart_rate": {"interval": 300.0, "items": [60, null, 55], "timestamp": "2026-12-04T22:00:00.000+00:00"}});
        let n = &nights(oura(), &[r])[0];
        let t0 = 1_796_421_600_000_i64;
        assert_eq!(n.stages.len(), 4, "awake, light, deep, REM: {:?}", n.stages);
        assert_eq!(n.stages[0], (t0, t0 + 600_000, Stage::Awake));
        assert_eq!(n.stages[1].2, Stage::Light);
        assert_eq!(n.minutes, StageMinutes { deep: 5.0, light: 10.0, rem: 5.0, awake: 10.0, unknown: 0.0 });
        assert_eq!(n.heart_rate, vec![(t0, 60.0), (t0 + 600_000, 55.0)]);
        assert!(n.hrv.is_empty());
        assert!(n.said.is_empty(), "no totals in the record, none said");
    }

    #[test]
    fn a_character_outside_the_legend_is_unknown_and_a_record_without_start_is_no_night() {
        let r = json!({"bedtime_start": "2026-12-04T22:00:00Z", "sleep_phase_5_min": "1x1"});
        assert_eq!(nights(oura(), &[r])[0].minutes, StageMinutes { deep: 10.0, unknown: 5.0, ..Default::default() });
        assert!(nights(oura(), &[json!({"sleep_phase_5_min": "111"})]).is_empty());
    }
}
