//! `vitals_daily` grouped (`group`): the days by ISO week, calendar month, day of the week, or
//! weekdays against the weekend, each column's shown values of a group described by their mean,
//! lowest, highest and how many days had one. A description of those days, not a test: whether two
//! groups differ by more than the metric's own noise is `vitals_compare`'s question.
use super::days::{mean, round3};
use jiff::civil::{Date, Weekday};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// How the days are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Week,
    Month,
    Weekday,
    Weekend,
}

impl Group {
    pub const NAMES: &'static str = "`week`, `month`, `weekday` or `weekend`";

    pub fn parse(s: &str) -> Option<Group> {
        match s {
            "week" => Some(Group::Week),
            "month" => Some(Group::Month),
            "weekday" => Some(Group::Weekday),
            "weekend" => Some(Group::Weekend),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Group::Week => "week",
            Group::Month => "month",
            Group::Weekday => "weekday",
            Group::Weekend => "weekend",
        }
    }

    /// The group of a day: a key that sorts the groups in order, and its label.
    fn of(self, d: Date) -> (i64, String) {
        match self {
            Group::Week => {
                let w = d.iso_week_date();
                (i64::from(w.year()) * 100 + i64::from(w.week()), format!("{}-W{:02}", w.year(), w.week()))
            }
            Group::Month => (i64::from(d.year()) * 100 + i64::from(d.month()), format!("{}-{:02}", d.year(), d.month())),
            Group::Weekday => (i64::from(d.weekday().to_monday_one_offset()), format!("{:?}", d.weekday())),
            Group::Weekend => match d.weekday() {
                Weekday::Saturday | Weekday::Sunday => (1, "weekend".into()),
                _ => (0, "weekdays".into()),
            },
        }
    }
}

/// A column's shown value of each day: the value and the `provider.collection.field` it came from.
pub type Shown = BTreeMap<Date, (f64, String)>;

/// One row per group of the days from `s` to `e`: its label, first and last day, how many days it
/// has, and per column (in `columns`' order) the summary of its shown values, or null when none of
/// its days had one.
pub fn grouped(shown: &BTreeMap<&str, Shown>, columns: &[&str], s: Date, e: Date, g: Group) -> Vec<Value> {
    let mut days_of: BTreeMap<(i64, String), Vec<Date>> = BTreeMap::new();
    let mut d = s;
    while d <= e {
        days_of.entry(g.of(d)).or_default().push(d);
        match d.tomorrow() {
            Ok(next) => d = next,
            Err(_) => break,
        }
    }
    days_of
        .into_iter()
        .map(|((_, label), days)| {
            let mut row = Map::new();
            row.insert("group".into(), json!(label));
            row.insert("start".into(), json!(days[0].to_string()));
            row.insert("end".into(), json!(days[days.len() - 1].to_string()));
            row.insert("days".into(), json!(days.len()));
            for c in columns {
                let values: Vec<&(f64, String)> = days.iter().filter_map(|d| shown.get(c)?.get(d)).collect();
                row.insert(c.to_string(), summary(&values, days.len()));
            }
            Value::Object(row)
        })
        .collect()
}

/// Mean, lowest, highest and `n` of a group's values; `missing`, its days without one; `from`, how
/// many came from each source, said only when more than one source gave them.
fn summary(values: &[&(f64, String)], days: usize) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    let xs: Vec<f64> = values.iter().map(|v| v.0).collect();
    let mut m = Map::new();
    m.insert("mean".into(), json!(round3(mean(&xs))));
    m.insert("min".into(), json!(round3(xs.iter().copied().fold(f64::INFINITY, f64::min))));
    m.insert("max".into(), json!(round3(xs.iter().copied().fold(f64::NEG_INFINITY, f64::max))));
    m.insert("n".into(), json!(xs.len()));
    if days > xs.len() {
        m.insert("missing".into(), json!(days - xs.len()));
    }
    let mut from: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *from.entry(v.1.as_str()).or_default() += 1;
    }
    if from.len() > 1 {
        m.insert("from".into(), json!(from));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn steps(days: &[(Date, f64, &str)]) -> BTreeMap<&'static str, Shown> {
        let mut m = BTreeMap::new();
        m.insert("steps", days.iter().map(|(d, v, f)| (*d, (*v, f.to_string()))).collect());
        m
    }

    #[test]
    fn weeks_are_iso_weeks_cut_to_the_range_with_their_missing_days_said() {
        // 2026-06-03 is a Wednesday: its week is cut to five days, the next is whole.
        let shown = steps(&[(date(2026, 6, 3), 1000.0, "a"), (date(2026, 6, 5), 3000.0, "a"), (date(2026, 6, 9), 5000.0, "a")]);
        let g = grouped(&shown, &["steps", "hrv_ms"], date(2026, 6, 3), date(2026, 6, 14), Group::Week);
        assert_eq!(g.len(), 2);
        assert_eq!(
            g[0],
            json!({"group": "2026-W23", "start": "2026-06-03", "end": "2026-06-07", "days": 5, "hrv_ms": null,
            "steps": {"mean": 2000.0, "min": 1000.0, "max": 3000.0, "n": 2, "missing": 3}})
        );
        assert_eq!(g[1]["group"], "2026-W24");
        assert_eq!((g[1]["days"].as_u64(), g[1]["steps"]["n"].as_u64(), g[1]["steps"]["missing"].as_u64()), (Some(7), Some(1), Some(6)));
    }

    #[test]
    fn weekdays_weekends_and_months_group_across_the_range_and_mixed_sources_are_said() {
        let (sat, sun, mon) = (date(2026, 6, 6), date(2026, 6, 7), date(2026, 6, 8));
        let shown = steps(&[(sat, 8000.0, "a"), (sun, 6000.0, "b"), (mon, 4000.0, "a"), (date(2026, 6, 13), 10000.0, "a")]);
        let w = grouped(&shown, &["steps"], sat, date(2026, 6, 14), Group::Weekend);
        assert_eq!((w[0]["group"].as_str(), w[0]["days"].as_u64(), &w[0]["steps"]["mean"]), (Some("weekdays"), Some(5), &json!(4000.0)));
        assert_eq!((w[1]["group"].as_str(), w[1]["days"].as_u64(), &w[1]["steps"]["mean"]), (Some("weekend"), Some(4), &json!(8000.0)));
        assert_eq!(w[1]["steps"]["from"], json!({"a": 2, "b": 1}), "two sources in one group are said");
        assert!(w[0]["steps"].get("from").is_none());
        let d = grouped(&shown, &["steps"], sat, date(2026, 6, 14), Group::Weekday);
        assert_eq!(d.iter().map(|r| r["group"].as_str().unwrap()).collect::<Vec<_>>()[..2], ["Monday", "Tuesday"]);
        assert_eq!(d[5]["group"], "Saturday");
        assert_eq!(d[5]["steps"]["n"], 2);
        let m = grouped(&shown, &["steps"], date(2026, 5, 30), date(2026, 6, 14), Group::Month);
        assert_eq!((m[0]["group"].as_str(), m[0]["days"].as_u64(), &m[0]["steps"]), (Some("2026-05"), Some(2), &Value::Null));
        assert_eq!(m[1]["steps"]["n"], 4);
    }
}
