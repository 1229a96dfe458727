//! What the windows keep. For a time series, what shaping needs is gathered page by page, while
//! the other windows are still in flight: each sample's instant and local day are read once,
//! duplicates are dropped, fields are projected and the exact raw size is tallied. After the last
//! window only bucketing and rendering are left (engine/fit.rs), so a month of heart rate is
//! ready a few milliseconds after its last page rather than after a second pass over 36,000
//! records that have long left the CPU's caches.
use super::coverage::Pos;
use super::plan::Plan;
use super::record::{project_one, record_day};
use super::render::{Format, Tally};
use super::resolution::{Readings, Stamp, Stamper};
use super::window::record_instant;
use crate::catalog::SeriesSpec;
use crate::time::Zone;
use serde_json::Value;
use std::collections::HashSet;

/// The records of one window, or of a run of windows merged in order.
#[derive(Debug)]
#[expect(clippy::large_enum_variant, reason = "one per window, moved a handful of times: boxing would buy nothing")]
pub enum Kept {
    /// Documents are finished by their provider, de-duplicated and projected after the last
    /// window (`Provider::finish` may join records that came in different windows).
    Documents(Vec<Value>),
    Series(Series),
}

/// A series, ready for bucketing.
#[derive(Debug)]
pub struct Series {
    pub records: Vec<Value>,
    /// What bucketing reads of each record, in the same order.
    pub readings: Readings,
    /// The exact size of `records`, as `render::size` would measure it.
    pub tally: Tally,
}

impl Series {
    fn new(spec: SeriesSpec, format: Format) -> Series {
        Series { records: vec![], readings: Readings::new(spec), tally: Tally::new(format) }
    }

    fn push(&mut self, rec: Value, stamp: Option<Stamp>) {
        self.readings.push(&rec, stamp);
        self.tally.add(&rec);
        self.records.push(rec);
    }

    /// After records were cut (a rare path: fetching stopped early), read what is left again.
    fn recount(&mut self, zone: &Zone) {
        let mut fresh = Series::new(self.readings.spec(), self.tally.format());
        let mut stamper = Stamper::new(zone, self.readings.spec().stamp);
        for rec in std::mem::take(&mut self.records) {
            let stamp = stamper.stamp(&rec);
            fresh.push(rec, stamp);
        }
        *self = fresh;
    }
}

impl Default for Kept {
    fn default() -> Kept {
        Kept::Documents(vec![])
    }
}

impl Kept {
    pub fn for_plan(plan: &Plan) -> Kept {
        match plan.collection.series {
            Some(spec) => Kept::Series(Series::new(spec, plan.format)),
            None => Kept::Documents(vec![]),
        }
    }

    pub fn records(&self) -> &[Value] {
        match self {
            Kept::Documents(r) => r,
            Kept::Series(s) => &s.records,
        }
    }

    pub fn into_records(self) -> Vec<Value> {
        match self {
            Kept::Documents(r) => r,
            Kept::Series(s) => s.records,
        }
    }

    pub fn len(&self) -> usize {
        self.records().len()
    }

    pub fn is_empty(&self) -> bool {
        self.records().is_empty()
    }

    /// The records of `other` follow these (windows are merged oldest first).
    pub fn append(&mut self, other: Kept) {
        match (self, other) {
            (Kept::Series(a), Kept::Series(b)) => {
                a.records.extend(b.records);
                a.readings.append(b.readings);
                a.tally.append(b.tally);
            }
            (Kept::Documents(a), other) => a.extend(other.into_records()),
            (me @ Kept::Series(_), Kept::Documents(b)) => {
                // Not made by `for_plan`; kept whole rather than lost.
                let mut all = std::mem::replace(me, Kept::Documents(vec![])).into_records();
                all.extend(b);
                *me = Kept::Documents(all);
            }
        }
    }

    /// Keep only the records `keep` accepts (stamps read in `zone`).
    pub fn retain(&mut self, zone: &Zone, keep: impl FnMut(&Value) -> bool) {
        match self {
            Kept::Documents(r) => r.retain(keep),
            Kept::Series(s) => {
                let before = s.records.len();
                s.records.retain(keep);
                if s.records.len() != before {
                    s.recount(zone);
                }
            }
        }
    }

    /// Put the records in time order: by local day, then instant where a day key holds one
    /// (stable, so records of one moment keep the order they came in).
    fn sort(&mut self, plan: &Plan) {
        let c = plan.collection;
        let key = |r: &Value| (record_day(r, c, &plan.zone), record_instant(r, c));
        match self {
            Kept::Documents(r) => r.sort_by_cached_key(key),
            Kept::Series(s) => {
                s.records.sort_by_cached_key(key);
                s.recount(&plan.zone);
            }
        }
    }

    /// Drop the first `n` records.
    pub fn drop_first(&mut self, n: usize, zone: &Zone) {
        match self {
            Kept::Documents(r) => {
                r.drain(..n.min(r.len()));
            }
            Kept::Series(s) => {
                s.records.drain(..n.min(s.records.len()));
                if n > 0 {
                    s.recount(zone);
                }
            }
        }
    }
}

/// How a series record is told apart from another sent twice: its `id` if it has one, else its
/// instant (the same sample written `Z` or `+00:00` is one sample), else its raw `timestamp`.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Key {
    Id(String),
    At(i64),
    Raw(String),
}

/// Keeps the records one window owns, page after page.
pub struct Keeper {
    kept: Kept,
    stamper: Stamper,
    /// Series: what this window kept already. A window owns a span of instants no other window
    /// owns (engine/window.rs), so a repeat can only come from this window's own pages.
    seen: HashSet<Key>,
    /// The position of the last record kept, and whether every record so far came at or after
    /// the one before (pages newest first or in no order are put in time order at the end).
    last: Option<Pos>,
    in_order: bool,
}

impl Keeper {
    pub fn new(plan: &Plan) -> Keeper {
        // Documents are never stamped: an empty key names no field.
        let stamp = plan.collection.series.map_or("", |s| s.stamp);
        Keeper { kept: Kept::for_plan(plan), stamper: Stamper::new(&plan.zone, stamp), seen: HashSet::new(), last: None, in_order: true }
    }

    /// How many records the window keeps so far.
    pub fn count(&self) -> usize {
        self.kept.len()
    }

    /// The window's records in time order, whatever order its pages came in.
    pub fn done(self, plan: &Plan) -> Kept {
        let mut kept = self.kept;
        if !self.in_order {
            kept.sort(plan);
        }
        kept
    }

    /// Keep a record this window owns (`pos`: where it is in time, when placing it read it).
    /// Returns false when it was a repeat and was dropped.
    pub fn keep(&mut self, rec: Value, pos: Option<Pos>, plan: &Plan) -> bool {
        if let Some(p) = pos {
            self.in_order &= self.last.is_none_or(|l| l <= p);
            self.last = Some(p);
        }
        let at = pos.and_then(Pos::instant);
        match &mut self.kept {
            Kept::Documents(r) => r.push(rec),
            Kept::Series(s) => {
                let stamp = match at {
                    Some(t) => Some(self.stamper.at(t)),
                    None => self.stamper.stamp(&rec),
                };
                let named = plan.collection.key.and_then(|k| rec.get(k)).and_then(Value::as_str);
                let raw = plan.collection.series.and_then(|x| rec.get(x.stamp)).and_then(Value::as_str);
                let key = match (named, stamp, raw) {
                    (Some(id), _, _) => Some(Key::Id(id.to_string())),
                    (None, Some(st), _) => Some(Key::At(st.at)),
                    (None, None, Some(raw)) => Some(Key::Raw(raw.to_string())),
                    (None, None, None) => None,
                };
                if key.is_some_and(|k| !self.seen.insert(k)) {
                    return false;
                }
                let rec = match &plan.fields {
                    Some(fields) => project_one(rec, fields),
                    None => rec,
                };
                s.push(rec, stamp);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::oura::catalog::OURA;
    use serde_json::json;

    fn series(recs: &[Value], zone: &Zone) -> Kept {
        let mut s = Series::new(OURA.collection("heartrate").unwrap().series.unwrap(), Format::Columns);
        let mut stamper = Stamper::new(zone, "timestamp");
        for r in recs {
            s.push(r.clone(), stamper.stamp(r));
        }
        Kept::Series(s)
    }

    fn facts(k: &Kept) -> (Vec<Option<Stamp>>, usize) {
        let Kept::Series(s) = k else { unreachable!() };
        (s.readings.stamps.clone(), s.tally.size())
    }

    #[test]
    fn what_bucketing_reads_follows_the_records_through_merge_and_cuts() {
        let zone = Zone::parse("-06:00").unwrap();
        let recs: Vec<Value> = (0..6).map(|i| json!({"timestamp": format!("2026-06-0{}T12:00:00Z", i + 1), "bpm": 60 + i})).collect();
        let mut kept = series(&recs[..2], &zone);
        kept.append(series(&recs[2..], &zone));
        assert_eq!(facts(&kept), facts(&series(&recs, &zone)), "windows merged = one run");
        kept.retain(&zone, |r| r["bpm"].as_i64().unwrap() % 2 == 1);
        kept.drop_first(1, &zone);
        assert_eq!(kept.records().iter().map(|r| r["bpm"].as_i64().unwrap()).collect::<Vec<_>>(), [63, 65]);
        assert_eq!(facts(&kept), facts(&series(&[recs[3].clone(), recs[5].clone()], &zone)), "cut = read again");
    }
}
