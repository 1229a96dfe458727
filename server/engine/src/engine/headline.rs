//! A `vitals_today` section as people read it: each record as the columns they ask about first
//! (its provider's `TodaySpec.lead`), the series inside records counted rather than shown, and
//! nothing computed across records (no averages over days, no deltas: the method of those lives
//! in `vitals_compare` and `vitals_trend`, where it can be cited).
use super::record::record_day;
use crate::catalog::{CollectionSpec, Derive, Embedded, EmbeddedKind, Lead, Stat};
use crate::time::{local_clock, Zone};
use serde_json::{json, Value};

/// How much of each record a section shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// The lead columns only.
    Headline,
    /// The lead columns, then every other field of the record (the series still only counted).
    Full,
}

impl Detail {
    pub const NAMES: &'static str = "`headline` or `full`";
    pub fn parse(s: &str) -> Option<Detail> {
        match s.trim().to_ascii_lowercase().as_str() {
            "headline" => Some(Detail::Headline),
            "full" => Some(Detail::Full),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Detail::Headline => "headline",
            Detail::Full => "full",
        }
    }
}

/// One section's table.
#[derive(Debug, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// The records' embedded series, counted (None: the records carry none).
    pub series: Option<String>,
}

/// The fields a section reads: the lead's, the embedded series (to count them) and the day keys.
/// None: every field (`Detail::Full`).
pub fn fields(lead: &[Lead], c: &CollectionSpec, detail: Detail) -> Option<Vec<String>> {
    if detail == Detail::Full {
        return None;
    }
    let mut out: Vec<String> = vec![];
    let names = lead.iter().map(Lead::root).chain(c.embedded.iter().map(|e| e.field)).chain(c.day_keys.iter().copied());
    for f in names.filter(|f| c.knows_field(f)) {
        if !out.iter().any(|x| x == f) {
            out.push(f.to_string());
        }
    }
    Some(out)
}

/// `records` (in time order) as a table: `day`, the lead, and with `Detail::Full` every other
/// field; a headline table adds a flag's column when one of its rows carries the flag (a guest's
/// weigh-in beside the user's), so the flagged row can be told from the others.
pub fn table(records: &[Value], lead: &[Lead], c: &CollectionSpec, zone: &Zone, detail: Detail) -> Table {
    let mut columns: Vec<String> = std::iter::once("day").chain(lead.iter().map(|l| l.name)).map(String::from).collect();
    let rest: Vec<&str> = match detail {
        Detail::Headline => {
            let shown: Vec<&str> = lead.iter().map(Lead::root).collect();
            let mut flags: Vec<&str> = c.flags.iter().filter(|f| records.iter().any(|r| f.on(r))).map(|f| f.field).collect();
            flags.dedup();
            flags.retain(|f| !shown.contains(f));
            flags
        }
        Detail::Full => {
            let shown: Vec<&str> = lead.iter().map(Lead::root).collect();
            let embedded: Vec<&str> = c.embedded.iter().map(|e| e.field).collect();
            let mut rest = vec![];
            for f in c.always.iter().chain(c.fields.iter()) {
                // `day` is the table's own first column.
                if *f != "day" && !shown.contains(f) && !embedded.contains(f) && !rest.contains(f) && records.iter().any(|r| r.get(*f).is_some()) {
                    rest.push(*f);
                }
            }
            rest
        }
    };
    columns.extend(rest.iter().map(|f| f.to_string()));
    let rows = records
        .iter()
        .map(|r| {
            let day = record_day(r, c, zone).map_or(Value::Null, |d| json!(d.to_string()));
            let mut row = vec![day];
            row.extend(lead.iter().map(|l| cell(r, l, c, zone)));
            row.extend(rest.iter().map(|f| r.get(*f).cloned().map_or(Value::Null, tidy)));
            row
        })
        .collect();
    Table { columns, rows, series: counted(records, lead, c) }
}

/// One lead value of one record; null when the record does not carry it.
fn cell(r: &Value, l: &Lead, c: &CollectionSpec, zone: &Zone) -> Value {
    let Some(v) = l.from.split('.').try_fold(r, |v, k| v.get(k)) else {
        return Value::Null;
    };
    match l.how {
        Derive::Same => tidy(v.clone()),
        Derive::Minutes => v.as_f64().map_or(Value::Null, |s| number(s / 60.0, 1)),
        Derive::Km => v.as_f64().map_or(Value::Null, |m| number(m / 1000.0, 2)),
        Derive::Clock => v.as_str().and_then(|s| local_clock(s, zone)).map_or(Value::Null, Value::from),
        Derive::Series(stat) => {
            let xs = readings(v, embedded(c, l.from));
            let x = match stat {
                Stat::Min => xs.iter().copied().reduce(f64::min),
                Stat::Max => xs.iter().copied().reduce(f64::max),
                Stat::Avg => (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64),
            };
            x.map_or(Value::Null, |x| number(x, 1))
        }
        Derive::Scale(words) => match v.as_f64().filter(|x| x.fract() == 0.0 && *x >= 1.0 && *x <= words.len() as f64) {
            Some(x) => json!(words[x as usize - 1]),
            None => tidy(v.clone()),
        },
    }
}

fn embedded<'a>(c: &'a CollectionSpec, field: &str) -> Option<&'a Embedded> {
    c.embedded.iter().find(|e| e.field == field)
}

/// The readings (nulls left out) of an embedded series of samples.
fn readings(v: &Value, e: Option<&Embedded>) -> Vec<f64> {
    let Some(EmbeddedKind::Samples(shape)) = e.map(|e| e.kind) else {
        return vec![];
    };
    v.get(shape.items).and_then(Value::as_array).map(|xs| xs.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
}

/// What the records' embedded series hold, counted: `heart_rate: 762 readings, one per 300 s`.
fn counted(records: &[Value], lead: &[Lead], c: &CollectionSpec) -> Option<String> {
    let mut parts = vec![];
    for e in c.embedded {
        let present: Vec<&Value> = records.iter().filter_map(|r| r.get(e.field)).filter(|v| !v.is_null()).collect();
        if present.is_empty() {
            continue;
        }
        let (n, what, step) = match e.kind {
            EmbeddedKind::Samples(shape) => {
                let n: usize = present.iter().map(|v| readings(v, Some(e)).len()).sum();
                let step = present.iter().find_map(|v| v.get(shape.interval).and_then(Value::as_f64));
                (n, "readings", step)
            }
            EmbeddedKind::Epochs(secs) => (present.iter().filter_map(|v| v.as_str()).map(|s| s.chars().count()).sum(), "epochs", Some(f64::from(secs))),
        };
        let from: Vec<&str> = lead.iter().filter(|l| l.from == e.field).map(|l| l.name).collect();
        let into = if from.is_empty() { String::new() } else { format!(" (→ {})", from.join(", ")) };
        let step = step.map(|s| format!(", one per {} s", number(s, 1))).unwrap_or_default();
        parts.push(format!("{}: {n} {what}{step}{into}", e.field));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A value as shown: numbers to at most two decimals (a provider's `8087.820000000001` is noise).
fn tidy(v: Value) -> Value {
    match v.as_f64() {
        Some(x) if v.is_f64() => number(x, 2),
        _ => v,
    }
}

/// `x` to `places` decimals, written without a fraction when it has none.
fn number(x: f64, places: i32) -> Value {
    let p = 10f64.powi(places);
    let r = (x * p).round() / p;
    if r.fract() == 0.0 && r.abs() < 1e15 {
        json!(r as i64)
    } else {
        json!(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Lead, SampleShape};

    static SHAPE: SampleShape = SampleShape { interval: "interval", items: "items", start: "timestamp" };
    static SERIES: &[Embedded] =
        &[Embedded { field: "heart_rate", kind: EmbeddedKind::Samples(SHAPE) }, Embedded { field: "phases", kind: EmbeddedKind::Epochs(300) }];
    static NIGHT: CollectionSpec = CollectionSpec {
        name: "night",
        day_keys: &["day"],
        dating: crate::catalog::Dating::ProviderDay,
        always: &["day"],
        fields: &["total", "bedtime_start", "heart_rate", "phases", "contributors", "note"],
        embedded: SERIES,
        ..CollectionSpec::DAILY
    };
    static LEAD: &[Lead] = &[
        Lead::minutes("total_min", "total"),
        Lead::clock("bed", "bedtime_start"),
        Lead::field("contributors.deep"),
        Lead::series("hr_max", "heart_rate", Stat::Max),
        Lead::series("hr_avg", "heart_rate", Stat::Avg),
    ];

    fn night() -> Value {
        json!({"day": "2026-12-05", "total": 27000, "bedtime_start": "2026-12-04T23:14:00-06:00", "contributors": {"deep": 71},
               "heart_rate": {"interval": 300.0, "items": [50, null, 62, 56], "timestamp": "2026-12-04T23:14:00-06:00"},
               "phases": "4222111333", "note": 1.123456})
    }

    #[test]
    fn a_record_becomes_its_lead_columns_and_its_series_are_counted() {
        let zone = Zone::parse("-06:00").unwrap();
        let t = table(&[night()], LEAD, &NIGHT, &zone, Detail::Headline);
        assert_eq!(t.columns, ["day", "total_min", "bed", "contributors.deep", "hr_max", "hr_avg"]);
        assert_eq!(t.rows, vec![vec![json!("2026-12-05"), json!(450), json!("23:14"), json!(71), json!(62), json!(56)]]);
        assert_eq!(t.series.as_deref(), Some("heart_rate: 3 readings, one per 300 s (→ hr_max, hr_avg); phases: 10 epochs, one per 300 s"));
    }

    #[test]
    fn full_detail_adds_every_other_field_but_never_the_series() {
        let zone = Zone::parse("UTC").unwrap();
        let t = table(&[night()], LEAD, &NIGHT, &zone, Detail::Full);
        assert_eq!(&t.columns[6..], ["note"]);
        assert_eq!(t.rows[0][6], json!(1.12));
        assert_eq!(t.rows[0][2], json!("05:14"), "an instant in the query's zone");
    }

    #[test]
    fn headline_reads_only_what_it_shows_and_counts() {
        let f = fields(LEAD, &NIGHT, Detail::Headline).unwrap();
        assert_eq!(f, ["total", "bedtime_start", "contributors", "heart_rate", "phases", "day"]);
        assert!(fields(LEAD, &NIGHT, Detail::Full).is_none());
    }

    /// A guest's weigh-in beside the user's is told apart in the table, and a table without one
    /// is as it was.
    #[test]
    fn a_flag_a_row_carries_becomes_a_column_of_its_table() {
        static WEIGH: CollectionSpec = CollectionSpec {
            name: "weigh",
            day_keys: &["day"],
            dating: crate::catalog::Dating::ProviderDay,
            always: &["day"],
            fields: &["kg", "guest"],
            flags: &[crate::catalog::Flag::new("guest", "true", "someone else")],
            ..CollectionSpec::DAILY
        };
        let (lead, zone) = (&[Lead::same("weight_kg", "kg")], Zone::parse("UTC").unwrap());
        let me = json!({"day": "2026-12-05", "kg": 73.1, "guest": false});
        assert_eq!(table(std::slice::from_ref(&me), lead, &WEIGH, &zone, Detail::Headline).columns, ["day", "weight_kg"]);
        let t = table(&[me, json!({"day": "2026-12-05", "kg": 58.3, "guest": true})], lead, &WEIGH, &zone, Detail::Headline);
        assert_eq!(t.columns, ["day", "weight_kg", "guest"]);
        assert_eq!((&t.rows[0][2], &t.rows[1][2]), (&json!(false), &json!(true)));
    }

    #[test]
    fn a_missing_field_is_null_never_zero() {
        let zone = Zone::parse("UTC").unwrap();
        let t = table(&[json!({"day": "2026-12-05"})], LEAD, &NIGHT, &zone, Detail::Headline);
        assert!(t.rows[0][1..].iter().all(Value::is_null));
        assert!(t.series.is_none());
    }
}
