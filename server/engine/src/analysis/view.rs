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
use crate::engine::beside::{beside, Left};
use crate::engine::{Engine, QueryError};
use crate::time::Zone;
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

/// A column's candidates by day.
type ByDay = BTreeMap<Date, Vec<Candidate>>;

/// The days a view covers: its zone, the `tz` said back, today in that zone, and the inclusive range.
struct Days {
    zone: Zone,
    tz: Option<String>,
    today: Date,
    start: Date,
    end: Date,
}

/// What the providers' reads gave, column by column.
#[derive(Default)]
struct Gathered {
    by_column: BTreeMap<&'static str, ByDay>,
    errors: Vec<String>,
    fetches: Vec<Fetch>,
    synthetic: bool,
    samples: Vec<String>,
}

pub async fn daily_view(
    engine: &Engine,
    asked: (&str, &str),
    fields: Option<Vec<String>>,
    tz: Option<&str>,
    group: Option<&str>,
) -> Result<DailyReport, QueryError> {
    let group = parse_group(group)?;
    let wanted = wanted_columns(fields)?;
    let mut notes = vec![];
    let days = view_days(engine, asked, tz, group.is_some(), &mut notes)?;
    let (read, left_out) = chosen(engine);
    let mut got = gather(engine, &read, &wanted, &days).await;
    let columns = columns_out(engine, &read, &wanted, &got.by_column);
    let today = days.today;
    let partial: Vec<&str> = got.by_column.iter().filter(|(_, d)| d.get(&today).is_some_and(|c| c.iter().any(|c| c.partial))).map(|(c, _)| *c).collect();
    if !partial.is_empty() {
        notes.push(format!("{today} is today and not over: values marked partial ({}) are the day so far.", partial.join(", ")));
    }
    for days in got.by_column.values_mut() {
        days.values_mut().for_each(|cands| cands.sort_by_key(|c| c.rank));
    }
    let (rows, groups) = match group {
        Some(g) => (vec![], grouped(&got.by_column, &wanted, &days, g, &mut notes)),
        None => {
            // Sample data is read only when nothing is connected: said once for every provider, not per fetch.
            if got.synthetic && !got.samples.is_empty() {
                notes.insert(0, SAMPLE.into());
            }
            (rows(&mut got.by_column, &wanted, &days), vec![])
        }
    };
    Ok(DailyReport {
        range: Span { start: days.start.to_string(), end: days.end.to_string() },
        synthetic: got.synthetic,
        providers: read.iter().map(|(_, n)| n.to_string()).collect(),
        left_out,
        columns,
        rows,
        group: group.map(|g| g.name().into()),
        groups,
        errors: got.errors,
        notes,
        tz: days.tz,
        fetches: got.fetches,
    })
}

/// `group` read as a grouping, or refused naming the parameter.
fn parse_group(group: Option<&str>) -> Result<Option<Group>, QueryError> {
    let Some(g) = group else { return Ok(None) };
    Group::parse(g).map(Some).ok_or_else(|| {
        QueryError::BadInput(format!(
            "`group`: {:?} is not a grouping. Send {}, or leave `group` out for one row a day.",
            g.chars().take(40).collect::<String>(),
            Group::NAMES
        ))
    })
}

/// The columns asked for (every one without `fields`), each checked against the view's columns.
fn wanted_columns(fields: Option<Vec<String>>) -> Result<Vec<&'static str>, QueryError> {
    let Some(list) = fields else { return Ok(column_names()) };
    list.iter()
        .map(|f| {
            DAILY_COLUMNS.iter().find(|c| c.name == f.trim()).map(|c| c.name).ok_or_else(|| {
                QueryError::BadInput(format!(
                    "`fields`: {:?} is not a column of the daily view. Send some of: {}.",
                    f.chars().take(40).collect::<String>(),
                    column_names().join(", ")
                ))
            })
        })
        .collect()
}

/// The view's days, in the zone `tz` names, no longer than the view covers.
fn view_days(engine: &Engine, asked: (&str, &str), tz: Option<&str>, grouped: bool, notes: &mut Vec<String>) -> Result<Days, QueryError> {
    let (zone, tz) = ask::zone(engine, tz)?;
    let today = zone.today();
    let (start, end) = ask::range("start", "end", asked, today, today, "", notes)?;
    let n = (end - start).get_days() as i64 + 1;
    let max = if grouped { MAX_GROUPED_DAYS } else { MAX_DAYS };
    if n > max {
        return Err(QueryError::BadInput(format!(
            "`end`: {n} days from {start} to {end}; the daily view covers at most {MAX_DAYS} days ({MAX_GROUPED_DAYS} with `group`). Send a shorter range."
        )));
    }
    Ok(Days { zone, tz, today, start, end })
}

/// The providers read, each with its place in the engine's order (which breaks a tie of rank),
/// by the one rule of which answers may stand beside which (engine/beside.rs), and the ones left
/// out in the view's words.
fn chosen(engine: &Engine) -> (Vec<(usize, &'static str)>, Vec<String>) {
    let b = beside(engine);
    let order = |name: &str| engine.providers().position(|p| p.spec().name == name).unwrap_or(usize::MAX);
    let read = b.read.iter().map(|p| (order(p.spec().name), p.spec().name)).collect();
    let left_out = b
        .left
        .iter()
        .map(|(name, why)| match why {
            Left::Samples => format!("{name}: not connected, so only its sample data exists; it is not mixed with your own (connect it to include it)"),
            Left::Nothing => format!("{name}: not connected"),
        })
        .collect();
    (read, left_out)
}

/// Every read provider's sources of the wanted columns, one read per collection, as candidates by day.
async fn gather(engine: &Engine, read: &[(usize, &'static str)], wanted: &[&'static str], days: &Days) -> Gathered {
    let mut got = Gathered::default();
    for (order, name) in read {
        let Some(p) = engine.provider(name) else { continue };
        let spec = p.spec();
        let sources: Vec<&'static DailySource> = spec.daily_view.iter().filter(|d| wanted.contains(&d.column)).collect();
        let mut collections: Vec<&str> = sources.iter().map(|d| d.collection).collect();
        collections.sort_unstable();
        collections.dedup();
        for coll in collections {
            let mine: Vec<&'static DailySource> = sources.iter().copied().filter(|d| d.collection == coll).collect();
            gather_collection(engine, spec, coll, &mine, *order, days, &mut got).await;
        }
    }
    got
}

/// One collection's sources, read once: its values by day, or its error.
async fn gather_collection(
    engine: &Engine,
    spec: &'static crate::catalog::ProviderSpec,
    coll: &str,
    mine: &[&'static DailySource],
    order: usize,
    days: &Days,
    got: &mut Gathered,
) {
    let Some(c) = spec.collection(coll) else { return };
    let Some(rule) = daily_rule(c) else { return };
    let qualified = spec.qualified(c.name);
    let metrics: Vec<(Metric, &DailySource)> = mine
        .iter()
        .map(|d| {
            let metric = Metric {
                name: format!("{qualified}.{}", d.field),
                provider: spec.name,
                collection: c,
                qualified: qualified.clone(),
                path: vec![d.field.to_string()],
                rule,
            };
            (metric, *d)
        })
        .collect();
    let refs: Vec<&Metric> = metrics.iter().map(|(m, _)| m).collect();
    let r = match daily::read(engine, "start", refs[0], daily::fields_for(&refs), (days.start, days.end), days.tz.clone()).await {
        Ok(r) => r,
        Err(err) => {
            got.errors.push(format!("{}.{}: {err}", spec.name, c.name));
            return;
        }
    };
    got.synthetic |= r.synthetic;
    // Today's partial values are marked in their cells and said once (daily_view).
    got.fetches.extend(r.fetches.into_iter().map(|mut f| {
        f.notices.as_object_mut().map(|n| n.remove("partial"));
        f
    }));
    got.samples.extend(r.samples);
    for (m, d) in &metrics {
        let (values, _) = daily::reduce(m, &r.records, &days.zone);
        for (day, v) in values.range(days.start..=days.end) {
            got.by_column.entry(d.column).or_default().entry(*day).or_default().push(Candidate {
                rank: (d.rank, order),
                value: v * d.scale,
                from: m.name.clone(),
                conversion: d.conversion,
                partial: *day == days.today && rule.settles == Settles::AtDayEnd,
            });
        }
    }
}

/// Each wanted column: its sources in the order they are preferred, and how many days it has.
fn columns_out(engine: &Engine, read: &[(usize, &'static str)], wanted: &[&'static str], by_column: &BTreeMap<&str, ByDay>) -> Vec<ColumnOut> {
    let mut columns = vec![];
    for col in DAILY_COLUMNS.iter().filter(|c| wanted.contains(&c.name)) {
        let mut sources: Vec<(u8, usize, String)> = vec![];
        for (order, name) in read {
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
    columns
}

/// The days grouped by `g`: each group's statistics of its days' shown values, and the note saying how to read them.
fn grouped(by_column: &BTreeMap<&'static str, ByDay>, wanted: &[&'static str], days: &Days, g: Group, notes: &mut Vec<String>) -> Vec<Value> {
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
    groups::grouped(&shown, &wanted, days.start, days.end, g)
}

/// One row a day: each wanted column's shown value, the others beside it in `also`.
fn rows(by_column: &mut BTreeMap<&'static str, ByDay>, wanted: &[&'static str], days: &Days) -> Vec<Value> {
    let mut rows = vec![];
    let mut day = days.start;
    while day <= days.end {
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
    rows
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
