//! From the engine to one value a day: the metric's collection is read over the days asked (one
//! query, or one per provider's longest range), a cut or cycling answer is refused, and the
//! collection's daily rule picks each day's record. Everything left out is counted.
use super::days::Days;
use super::metric::Metric;
use crate::catalog::DayPick;
use crate::engine::plan::MAX_MAX_CHARS;
use crate::engine::record::record_day;
use crate::engine::{Engine, QueryError, QueryRequest};
use crate::time::Zone;
use jiff::civil::Date;
use jiff::ToSpan;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// What the daily rule and the values left out of the analysis, counted.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Excluded {
    // Days whose record has no value for the metric (null or absent).
    pub no_value: usize,
    // Values that are not numbers (text, lists, objects): not read as anything.
    pub not_a_number: usize,
    // Records the daily rule left out (a second record that day, a nap, a later weigh-in).
    pub not_the_days_record: usize,
    // Records whose local day cannot be told.
    pub undated: usize,
}

impl Excluded {
    pub fn add(&mut self, o: &Excluded) {
        self.no_value += o.no_value;
        self.not_a_number += o.not_a_number;
        self.not_the_days_record += o.not_the_days_record;
        self.undated += o.undated;
    }
}

/// One engine answer an analysis read, with everything it said.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Fetch {
    pub collection: String,
    pub start: String,
    pub end: String,
    pub pages: u32,
    // The answer's notices, as vitals_query says them (retried, cached...); sample data is said
    // once for the whole answer, in `notes`. Absent when there was nothing to say.
    #[serde(skip_serializing_if = "said_nothing")]
    pub notices: Value,
}

fn said_nothing(notices: &Value) -> bool {
    notices.as_object().is_some_and(|m| m.is_empty())
}

pub struct DailyValues {
    pub days: Days,
    pub excluded: Excluded,
    pub synthetic: bool,
    pub fetches: Vec<Fetch>,
    /// What the fetches said of sample data, each sentence once (taken out of their notices).
    pub samples: Vec<String>,
}

/// The longest range asked of one query: the provider's own limit (Withings: 366 days) or a year.
fn chunk_days(engine: &Engine, m: &Metric) -> i64 {
    engine.provider(m.provider).and_then(|p| p.spec().max_days).map_or(366, i64::from).clamp(1, 366)
}

/// The fields a read of `m`'s collection needs: the metrics' own, what the daily rule compares,
/// and the keys that date a record.
pub fn fields_for(metrics: &[&Metric]) -> Vec<String> {
    let mut fields: Vec<String> = vec![];
    let mut push = |f: &str| {
        if !fields.iter().any(|x| x == f) {
            fields.push(f.to_string());
        }
    };
    for m in metrics {
        push(&m.path[0]);
    }
    if let Some(m) = metrics.first() {
        let c = m.collection;
        let rule_fields: Vec<&str> = match m.rule.pick {
            DayPick::Largest { by, only } => [Some(by), only.map(|o| o.0)].into_iter().flatten().collect(),
            DayPick::FirstOf { only } => vec![only.0],
            _ => vec![],
        };
        for f in rule_fields.into_iter().chain(c.day_keys.iter().copied()).chain(["time", "start"]) {
            if c.fields.contains(&f) {
                push(f);
            }
        }
    }
    fields
}

/// Records of one collection, read completely from `start` to `end` (both inclusive).
pub struct Read {
    pub records: Vec<Value>,
    pub synthetic: bool,
    pub fetches: Vec<Fetch>,
    /// The sample-data sentences of the fetches, each once: an answer says it once, not per fetch.
    pub samples: Vec<String>,
}

/// `m`'s collection read through the engine as vitals_query would, in ranges the provider takes,
/// projected to `fields`. A cut or cycling answer is an error: nothing is made of part of the days.
/// `tz`: the zone the caller named, read by the engine as vitals_query reads it (None: the engine's default).
pub async fn read(engine: &Engine, param: &str, m: &Metric, fields: Vec<String>, (start, end): (Date, Date), tz: Option<String>) -> Result<Read, QueryError> {
    let mut out = Read { records: vec![], synthetic: false, fetches: vec![], samples: vec![] };
    let step = chunk_days(engine, m);
    let mut from = start;
    while from <= end {
        let to = from.checked_add((step - 1).days()).map_or(end, |d| d.min(end));
        let req = QueryRequest {
            collection: m.qualified.clone(),
            start: Some(from.to_string()),
            end: Some(to.to_string()),
            fields: Some(fields.clone()),
            format: Some("records".into()),
            // The caller's zone as it was sent. Without one, the engine's own default zone is this
            // one; a name it could not parse back (a machine zone without an IANA name is called
            // "system") must not turn into a refusal.
            tz: tz.clone(),
            max_chars: Some(MAX_MAX_CHARS as i64),
            ..QueryRequest::default()
        };
        let a = engine.query(req).await.map_err(|e| match e {
            QueryError::BadInput(s) => QueryError::BadInput(format!("`{param}` ({}): {s}", m.name)),
            other => other,
        })?;
        let flaw = a
            .notices
            .truncated
            .as_ref()
            .map(|t| match &t.missing {
                Some(m) => format!("truncated by {}: {} to {} were not read", t.cause, m.start, m.end),
                None => format!("truncated by {}", t.cause),
            })
            .or_else(|| a.notices.pagination_cycle.as_ref().map(|c| format!("pagination_cycle: {c}")));
        if let Some(flaw) = flaw {
            return Err(QueryError::Upstream(format!(
                "The read of {} from {from} to {to} for `{param}` did not complete ({flaw}). An analysis of part of the days would \
                 not be what it claims, so none was made: ask again later, or for a shorter range.",
                m.qualified
            )));
        }
        let mut notices = serde_json::to_value(&a.notices).unwrap_or(Value::Null);
        if let Some(Value::String(sample)) = notices.as_object_mut().and_then(|n| n.remove("synthetic")) {
            if !out.samples.contains(&sample) {
                out.samples.push(sample);
            }
        }
        out.synthetic |= a.synthetic;
        out.fetches.push(Fetch { collection: a.collection.clone(), start: from.to_string(), end: to.to_string(), pages: a.pages, notices });
        if let Value::Array(rows) = a.data {
            out.records.extend(rows);
        }
        match to.checked_add(1.day()) {
            Ok(next) => from = next,
            Err(_) => break,
        }
    }
    Ok(out)
}

/// The metric's daily values from `start` to `end`, both inclusive.
pub async fn fetch(engine: &Engine, param: &str, m: &Metric, start: Date, end: Date, zone: &Zone, tz: Option<String>) -> Result<DailyValues, QueryError> {
    let r = read(engine, param, m, fields_for(&[m]), (start, end), tz).await?;
    let (days, excluded) = reduce(m, &r.records, zone);
    Ok(DailyValues { days: days.range(start..=end).map(|(k, v)| (*k, *v)).collect(), excluded, synthetic: r.synthetic, fetches: r.fetches, samples: r.samples })
}

/// The value at the metric's path, if it is a number.
fn value_at(rec: &Value, path: &[String]) -> Result<f64, bool> {
    let mut v = rec;
    for k in path {
        v = match v.get(k) {
            Some(x) => x,
            None => return Err(false),
        };
    }
    match v {
        Value::Null => Err(false),
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()).ok_or(true),
        _ => Err(true),
    }
}

/// When a record happened, for "the first of the day": its time, else its day key, as text that
/// sorts (an instant with an offset is read as an instant).
fn when(rec: &Value, keys: &[&str]) -> (Option<jiff::Timestamp>, String) {
    let s = ["time", "start"].iter().chain(keys).find_map(|k| rec.get(*k).and_then(Value::as_str)).unwrap_or_default();
    (s.parse::<jiff::Timestamp>().ok(), s.to_string())
}

/// One record a day by the metric's rule, then its value.
pub fn reduce(m: &Metric, records: &[Value], zone: &Zone) -> (Days, Excluded) {
    let c = m.collection;
    let mut ex = Excluded::default();
    let mut by_day: BTreeMap<Date, Vec<&Value>> = BTreeMap::new();
    for r in records {
        match record_day(r, c, zone) {
            Some(d) => by_day.entry(d).or_default().push(r),
            None => ex.undated += 1,
        }
    }
    let mut days = Days::new();
    for (day, mut recs) in by_day {
        let pick = match m.rule.pick {
            DayPick::Only => Some(0),
            DayPick::First => {
                recs.sort_by_key(|r| when(r, c.day_keys));
                Some(0)
            }
            DayPick::FirstOf { only: (k, v) } => {
                recs.sort_by_key(|r| when(r, c.day_keys));
                recs.iter().position(|r| r.get(k).and_then(Value::as_str) == Some(v))
            }
            DayPick::Largest { by, only } => recs
                .iter()
                .enumerate()
                .filter(|(_, r)| only.is_none_or(|(k, v)| r.get(k).and_then(Value::as_str) == Some(v)))
                .max_by(|a, b| {
                    let n = |r: &Value| r.get(by).and_then(Value::as_f64).unwrap_or(f64::NEG_INFINITY);
                    n(a.1).total_cmp(&n(b.1))
                })
                .map(|(i, _)| i),
        };
        let Some(i) = pick else {
            ex.not_the_days_record += recs.len();
            continue;
        };
        ex.not_the_days_record += recs.len() - 1;
        match value_at(recs[i], &m.path) {
            Ok(v) => {
                days.insert(day, v);
            }
            Err(true) => ex.not_a_number += 1,
            Err(false) => ex.no_value += 1,
        }
    }
    (days, ex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metric(collection: &'static crate::catalog::CollectionSpec, qualified: &str, path: &[&str]) -> Metric {
        Metric {
            name: format!("{qualified}.{}", path.join(".")),
            provider: qualified.split('.').next().unwrap_or_default().to_string().leak(),
            collection,
            qualified: qualified.into(),
            path: path.iter().map(|s| s.to_string()).collect(),
            rule: collection.daily.unwrap(),
        }
    }

    #[test]
    fn oura_s_day_is_its_longest_long_sleep_and_a_day_of_naps_is_missing() {
        let c = crate::providers::oura::catalog::OURA.collection("sleep").unwrap();
        let m = metric(c, "oura.sleep", &["average_hrv"]);
        let recs = vec![
            json!({"day": "2026-03-02", "type": "long_sleep", "total_sleep_duration": 25000, "average_hrv": 40}),
            json!({"day": "2026-03-02", "type": "long_sleep", "total_sleep_duration": 3000, "average_hrv": 90}),
            json!({"day": "2026-03-02", "type": "late_nap", "total_sleep_duration": 30000, "average_hrv": 70}),
            json!({"day": "2026-03-03", "type": "late_nap", "total_sleep_duration": 3000, "average_hrv": 55}),
            json!({"day": "2026-03-04", "type": "long_sleep", "total_sleep_duration": 26000, "average_hrv": "n/a"}),
            json!({"day": "2026-03-05", "type": "long_sleep", "total_sleep_duration": 26000, "average_hrv": null}),
            json!({"type": "long_sleep"}),
        ];
        let (days, ex) = reduce(&m, &recs, &Zone::parse("UTC").unwrap());
        assert_eq!(days.len(), 1);
        assert_eq!(days[&Date::constant(2026, 3, 2)], 40.0);
        assert_eq!((ex.not_the_days_record, ex.not_a_number, ex.no_value, ex.undated), (3, 1, 1, 1));
    }

    #[test]
    fn withings_day_is_its_first_weigh_in_by_instant() {
        let c = crate::providers::withings::catalog::WITHINGS.collection("measurements").unwrap();
        let m = metric(c, "withings.measurements", &["weight_kg"]);
        let recs = vec![json!({"time": "2026-03-02T19:00:00+00:00", "weight_kg": 81.0}), json!({"time": "2026-03-02T07:10:00+01:00", "weight_kg": 80.0})];
        let (days, ex) = reduce(&m, &recs, &Zone::parse("UTC").unwrap());
        assert_eq!(days[&Date::constant(2026, 3, 2)], 80.0);
        assert_eq!(ex.not_the_days_record, 1);
    }
}
