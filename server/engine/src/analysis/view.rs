//! `vitals_daily`: one row per local day, with normalised columns across providers. Each value
//! says where it came from (`provider.collection.field`) and any unit conversion; where two
//! providers measured the same day, the column shows one by the rule the catalog states
//! (`DAILY_COLUMNS`) and keeps the others beside it. Nothing is averaged across devices. Today is
//! a day like the others (last night is filed under it); its values still filling (steps so far)
//! are marked `partial`.
use super::ask::{self, Span};
use super::daily::{self, Fetch};
use super::days::round3;
use super::groups::{self, Group, Shown};
use super::metric::{daily_rule, Metric};
use crate::catalog::{DailySource, Settles, DAILY_COLUMNS};
use crate::engine::{Engine, QueryError};
use crate::providers::Mode;
use jiff::civil::Date;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Said once when the view is sample data (nothing is connected), in place of each fetch's sentence.
const SAMPLE: &str = "SAMPLE DATA: no provider is connected, so every value is built-in sample data, not the user's own. Say so; \
vitals_connect connects an account.";

/// The longest range one daily view covers.
pub const MAX_DAYS: i64 = 92;
/// The longest range a grouped view covers: a year of months.
pub const MAX_GROUPED_DAYS: i64 = 366;

#[derive(Debug, Serialize, JsonSchema)]
pub struct DailyReport {
    pub range: Span,
    /// True when the values are built-in sample data (no provider is connected): say so (`notes`).
    pub synthetic: bool,
    /// The providers read.
    pub providers: Vec<String>,
    /// Providers not read, and why (sample data is never mixed with a connected account's data).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    pub columns: Vec<ColumnOut>,
    /// One object per day: `day`, then each column as {value, from, converted?, partial?, also?} or null;
    /// `partial`: today's value so far (the day is not over).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<Value>,
    /// With `group`, one object per group instead: `group`, `start`, `end`, `days`, then each
    /// column's {mean, min, max, n, missing?, from?} of its shown values, or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Value>,
    /// Reads that failed or came back incomplete: their columns are missing for that provider.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The zone of the days, when `tz` named one (else this machine's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    pub fetches: Vec<Fetch>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ColumnOut {
    pub name: String,
    pub unit: String,
    /// Which provider's value the column shows when two measured the same day, and why.
    pub shown: String,
    /// Where values come from, in the order they are preferred, with any conversion.
    pub sources: Vec<String>,
    pub days_with_a_value: usize,
    /// Days where more than one provider had a value (the others are in `also`).
    pub days_measured_twice: usize,
}

pub fn column_names() -> Vec<&'static str> {
    DAILY_COLUMNS.iter().map(|c| c.name).collect()
}

/// One provider's value of one column on one day.
struct Candidate {
    rank: (u8, usize),
    value: f64,
    from: String,
    conversion: Option<&'static str>,
    /// Today's value of a day's total still growing.
    partial: bool,
}

fn cell(c: &Candidate) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("value".into(), json!(round3(c.value)));
    m.insert("from".into(), json!(c.from));
    if let Some(conv) = c.conversion {
        m.insert("converted".into(), json!(conv));
    }
    if c.partial {
        m.insert("partial".into(), json!(true));
    }
    m
}

pub async fn daily_view(engine: &Engine, asked: (&str, &str), fields: Option<Vec<String>>, tz: Option<&str>, group: Option<&str>) -> Result<DailyReport, QueryError> {
    let group = match group {
        None => None,
        Some(g) => Some(Group::parse(g).ok_or_else(|| {
            QueryError::BadInput(format!(
                "`group`: {:?} is not a grouping. Send {}, or leave `group` out for one row a day.",
                g.chars().take(40).collect::<String>(),
                Group::NAMES
            ))
        })?),
    };
    let wanted: Vec<&'static str> = match fields {
        None => column_names(),
        Some(list) => {
            let mut out = vec![];
            for f in list {
                let Some(c) = DAILY_COLUMNS.iter().find(|c| c.name == f.trim()) else {
                    return Err(QueryError::BadInput(format!(
                        "`fields`: {:?} is not a column of the daily view. Send some of: {}.",
                        f.chars().take(40).collect::<String>(),
                        column_names().join(", ")
                    )));
                };
                out.push(c.name);
            }
            out
        }
    };
    let (zone, tz) = ask::zone(tz)?;
    let today = zone.today();
    let mut notes = vec![];
    let (s, e) = ask::range("start", "end", asked, today, today, "", &mut notes)?;
    let n = (e - s).get_days() as i64 + 1;
    let max = if group.is_some() { MAX_GROUPED_DAYS } else { MAX_DAYS };
    if n > max {
        return Err(QueryError::BadInput(format!(
            "`end`: {n} days from {s} to {e}; the daily view covers at most {MAX_DAYS} days ({MAX_GROUPED_DAYS} with `group`). Send a shorter range."
        )));
    }

    // Sample data is never mixed with a connected account's: with any provider connected, only
    // connected ones are read.
    let modes: Vec<(usize, &str, Mode)> = engine.providers().enumerate().map(|(i, p)| (i, p.spec().name, p.credential().current().mode())).collect();
    let any_connected = modes.iter().any(|(_, _, m)| *m == Mode::Connected);
    let mut left_out = vec![];
    let mut read = vec![];
    for (i, name, mode) in modes {
        match (mode, any_connected) {
            (Mode::Connected, _) | (Mode::Sandbox, false) => read.push((i, name)),
            (Mode::Sandbox, true) => {
                left_out.push(format!("{name}: not connected, so only its sample data exists; it is not mixed with your own (connect it to include it)"))
            }
            (Mode::NeedsCredentials, _) => left_out.push(format!("{name}: not connected")),
        }
    }

    let mut by_column: BTreeMap<&str, BTreeMap<Date, Vec<Candidate>>> = BTreeMap::new();
    let (mut errors, mut fetches, mut synthetic, mut samples) = (vec![], vec![], false, Vec::<String>::new());
    for (order, name) in &read {
        let Some(p) = engine.provider(name) else { continue };
        let spec = p.spec();
        let sources: Vec<&DailySource> = spec.daily_view.iter().filter(|d| wanted.contains(&d.column)).collect();
        let mut collections: Vec<&str> = sources.iter().map(|d| d.collection).collect();
        collections.sort_unstable();
        collections.dedup();
        for coll in collections {
            let Some(c) = spec.collection(coll) else { continue };
            let Some(rule) = daily_rule(c) else { continue };
            let mine: Vec<&&DailySource> = sources.iter().filter(|d| d.collection == coll).collect();
            let metrics: Vec<(Metric, &DailySource)> = mine
                .iter()
                .map(|d| {
                    let qualified = spec.qualified(c.name);
                    (
                        Metric {
                            name: format!("{qualified}.{}", d.field),
                            provider: spec.name,
                            collection: c,
                            qualified,
                            path: vec![d.field.to_string()],
                            rule,
                        },
                        **d,
                    )
                })
                .collect();
            let refs: Vec<&Metric> = metrics.iter().map(|(m, _)| m).collect();
            let r = match daily::read(engine, "start", refs[0], daily::fields_for(&refs), (s, e), tz.clone()).await {
                Ok(r) => r,
                Err(err) => {
                    errors.push(format!("{}.{}: {err}", spec.name, c.name));
                    continue;
                }
            };
            synthetic |= r.synthetic;
            // Today's partial values are marked in their cells and said once below.
            fetches.extend(r.fetches.into_iter().map(|mut f| {
                f.notices.as_object_mut().map(|n| n.remove("partial"));
                f
            }));
            samples.extend(r.samples);
            for (m, d) in &metrics {
                let (days, _) = daily::reduce(m, &r.records, &zone);
                for (day, v) in days.range(s..=e) {
                    by_column.entry(d.column).or_default().entry(*day).or_default().push(Candidate {
                        rank: (d.rank, *order),
                        value: v * d.scale,
                        from: m.name.clone(),
                        conversion: d.conversion,
                        partial: *day == today && rule.settles == Settles::AtDayEnd,
                    });
                }
            }
        }
    }

    let mut columns = vec![];
    for col in DAILY_COLUMNS.iter().filter(|c| wanted.contains(&c.name)) {
        let mut sources: Vec<(u8, usize, String)> = vec![];
        for (order, name) in &read {
            if let Some(p) = engine.provider(name) {
                for d in p.spec().daily_view.iter().filter(|d| d.column == col.name) {
                    let conv = d.conversion.map(|c| format!(" ({c})")).unwrap_or_default();
                    sources.push((d.rank, *order, format!("{}.{}.{}{conv}", p.spec().name, d.collection, d.field)));
                }
            }
        }
        sources.sort();
        let days = by_column.get(col.name);
        columns.push(ColumnOut {
            name: col.name.into(),
            unit: col.unit.into(),
            shown: col.why.into(),
            sources: sources.into_iter().map(|s| s.2).collect(),
            days_with_a_value: days.map_or(0, |d| d.len()),
            days_measured_twice: days.map_or(0, |d| d.values().filter(|c| c.len() > 1).count()),
        });
    }
    let partial: Vec<&str> = by_column.iter().filter(|(_, d)| d.get(&today).is_some_and(|c| c.iter().any(|c| c.partial))).map(|(c, _)| *c).collect();
    if !partial.is_empty() {
        notes.push(format!("{today} is today and not over: values marked partial ({}) are the day so far.", partial.join(", ")));
    }
    for days in by_column.values_mut() {
        days.values_mut().for_each(|cands| cands.sort_by_key(|c| c.rank));
    }
    if let Some(g) = group {
        let shown: BTreeMap<&str, Shown> = by_column
            .iter()
            .map(|(col, days)| (*col, days.iter().filter_map(|(d, c)| Some((*d, (c.first()?.value, c.first()?.from.clone())))).collect()))
            .collect();
        notes.push(format!(
            "Grouped by {}: each group's mean, min and max are of its days' shown values (one provider's a day, by the column's rule) over \
             the n days that had one; `missing` days had none. A description of these days, not a test: whether two groups differ \
             beyond the metric's day-to-day noise is vitals_compare's question.",
            g.name()
        ));
        let wanted: Vec<&str> = DAILY_COLUMNS.iter().filter(|c| wanted.contains(&c.name)).map(|c| c.name).collect();
        return Ok(DailyReport {
            range: Span { start: s.to_string(), end: e.to_string() },
            synthetic,
            providers: read.iter().map(|(_, n)| n.to_string()).collect(),
            left_out,
            columns,
            rows: vec![],
            group: Some(g.name().into()),
            groups: groups::grouped(&shown, &wanted, s, e, g),
            errors,
            notes,
            tz,
            fetches,
        });
    }
    let mut rows = vec![];
    let mut day = s;
    while day <= e {
        let mut row = Map::new();
        row.insert("day".into(), json!(day.to_string()));
        for col in DAILY_COLUMNS.iter().filter(|c| wanted.contains(&c.name)) {
            let v = match by_column.get_mut(col.name).and_then(|d| d.get_mut(&day)) {
                Some(cands) if !cands.is_empty() => {
                    let mut shown = cell(&cands[0]);
                    if cands.len() > 1 {
                        shown.insert("also".into(), Value::Array(cands[1..].iter().map(|c| Value::Object(cell(c))).collect()));
                    }
                    Value::Object(shown)
                }
                _ => Value::Null,
            };
            row.insert(col.name.into(), v);
        }
        rows.push(Value::Object(row));
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    // Sample data is read only when nothing is connected: said once for every provider, not per fetch.
    if synthetic && !samples.is_empty() {
        notes.insert(0, SAMPLE.into());
    }
    Ok(DailyReport {
        range: Span { start: s.to_string(), end: e.to_string() },
        synthetic,
        providers: read.iter().map(|(_, n)| n.to_string()).collect(),
        left_out,
        columns,
        rows,
        group: None,
        groups: vec![],
        errors,
        notes,
        tz,
        fetches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source naming a column, collection or field that is not there would be a column that
    /// stays empty without a word: every one is checked against the catalogs.
    #[test]
    fn every_source_is_a_daily_field_of_its_provider_and_every_column_has_one() {
        let specs: Vec<_> = crate::providers::specs().collect();
        for spec in &specs {
            for d in spec.daily_view {
                assert!(column_names().contains(&d.column), "{}: no column {}", spec.name, d.column);
                let c = spec.collection(d.collection).unwrap_or_else(|| panic!("{}: no collection {}", spec.name, d.collection));
                assert!(daily_rule(c).is_some(), "{}.{} has no daily rule", spec.name, c.name);
                assert!(c.fields.contains(&d.field), "{}.{} has no field {}", spec.name, c.name, d.field);
            }
        }
        for col in DAILY_COLUMNS {
            assert!(specs.iter().any(|s| s.daily_view.iter().any(|d| d.column == col.name)), "{} has no source", col.name);
        }
    }
}
