//! What the windows keep. For a time series, what shaping needs is gathered page by page, while
//! the other windows are still in flight: each sample's instant and local day are read once,
//! duplicates are dropped, fields are projected and the exact raw size is tallied. After the last
//! window only bucketing and rendering are left (engine/fit.rs), so a month of heart rate is
//! ready a few milliseconds after its last page rather than after a second pass over 36,000
//! records that have long left the CPU's caches.
//!
//! A record as JSON costs about a kilobyte in memory; what bucketing reads of it, under fifty
//! bytes. Once the raw records sure to be in the answer pass what it may hold ([`RawFloor`]), a
//! raw answer is out of the question, so the windows let their records go and keep only the
//! readings: a year of heart rate then fits in tens of megabytes instead of half a gigabyte.
use super::coverage::Pos;
use super::flat::{Fields, Flat, Held, Text};
use super::plan::Plan;
use super::record::{project_one, record_day};
use super::render::{Format, Tally};
use super::resolution::{Readings, Stamp, Stamper};
use super::window::record_instant;
use crate::catalog::SeriesSpec;
use crate::providers::NO_READING;
use crate::time::Zone;
use foldhash::HashSet;
use jiff::civil::Date;
use serde_json::Value;

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
    /// Every record while `raw`; after the records were let go, only those whose stamp could not
    /// be read (bucketing returns them as they came), in order. A record read in place is held
    /// as its text in its page until an answer needs it whole.
    pub records: Vec<Held>,
    /// Whether `records` holds every record, so a raw answer is still possible.
    pub raw: bool,
    /// Records were cut after they were let go: `tally` measures what was fetched, not what is left.
    pub cut_after_let_go: bool,
    /// What bucketing reads of each record, in the same order.
    pub readings: Readings,
    /// The exact size of the records, as `render::size` would measure it.
    pub tally: Tally,
    /// Samples the provider sent that are no reading (`providers::NO_READING`): where each lies
    /// and why. Never records of the answer; cut with them, so only those of its days are said.
    pub absent: Vec<(Option<Stamp>, String)>,
}

impl Series {
    fn new(spec: SeriesSpec, format: Format) -> Series {
        Series { records: vec![], raw: true, cut_after_let_go: false, readings: Readings::new(spec), tally: Tally::new(format), absent: vec![] }
    }

    fn push(&mut self, rec: Value, stamp: Option<Stamp>) {
        self.readings.push(&rec, stamp);
        self.tally.add(&rec);
        if self.raw || stamp.is_none() {
            self.records.push(Held::Value(rec));
        }
    }

    /// [`Series::push`] of a record read in place; `text` is where it lies, taken only if held.
    fn push_read(&mut self, rec: &Flat, text: impl FnOnce() -> Text, stamp: Option<Stamp>) {
        self.readings.push_read(rec, stamp);
        self.tally.add_read(rec);
        if self.raw || stamp.is_none() {
            self.records.push(Held::Text(text()));
        }
    }

    /// The records held, decoded (a rare path: a cut, pages out of order).
    fn held_values(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.records).into_iter().map(Held::into_value).collect()
    }

    /// How many records the series holds (kept whole or not).
    fn len(&self) -> usize {
        self.readings.stamps.len()
    }

    /// Keep only what bucketing needs: the readings, and the records it cannot place.
    fn let_go(&mut self) {
        if !self.raw {
            return;
        }
        self.raw = false;
        let all = std::mem::take(&mut self.records);
        self.records = all.into_iter().zip(&self.readings.stamps).filter(|(_, st)| st.is_none()).map(|(r, _)| r).collect();
    }

    /// Keep the records `keep[i]` says. Records kept whole are read again; after they were let
    /// go, the readings follow the flags and the tally stays that of what was fetched.
    fn retain_flagged(&mut self, keep: &[bool], zone: &Zone) {
        if self.raw {
            let mut i = 0;
            self.records.retain(|_| {
                i += 1;
                keep[i - 1]
            });
            self.recount(zone);
            return;
        }
        let mut unplaced = keep.iter().zip(&self.readings.stamps).filter(|(_, st)| st.is_none()).map(|(k, _)| *k);
        self.records.retain(|_| unplaced.next().unwrap_or(true));
        self.readings.retain(keep);
        self.cut_after_let_go = true;
    }

    /// After records were cut (a rare path: fetching stopped early), read what is left again.
    fn recount(&mut self, zone: &Zone) {
        let mut fresh = Series::new(self.readings.spec(), self.tally.format());
        let mut stamper = Stamper::new(zone, self.readings.spec().stamp);
        for rec in self.held_values() {
            let stamp = stamper.stamp(&rec);
            fresh.push(rec, stamp);
        }
        fresh.absent = std::mem::take(&mut self.absent);
        *self = fresh;
    }
}

/// Whether a raw answer is still possible, shared by the windows of one query. The merge (oldest
/// window first) tells it how much raw answer is already sure: the records of days before the
/// next window's first day, which any cut still keeps, since a cut falls on a day some window
/// left a gap in. Once that alone is past what the answer may hold, every window may let its
/// records go. Not made when the caller asked for raw samples or for the last few records:
/// those need them.
#[derive(Debug)]
pub struct RawFloor {
    budget: usize,
    passed: std::sync::atomic::AtomicBool,
}

impl RawFloor {
    pub fn for_plan(plan: &Plan) -> Option<std::sync::Arc<RawFloor>> {
        let needs_raw = plan.resolution == Some(super::resolution::Resolution::Raw) || plan.keep_last.is_some();
        (plan.collection.series.is_some() && !needs_raw).then(|| std::sync::Arc::new(RawFloor { budget: plan.data_budget(), passed: Default::default() }))
    }

    /// Raw records taking `body` characters ([`Tally::body`]) are sure to be in the answer.
    pub fn sure(&self, body: usize) {
        if body > self.budget {
            self.passed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub fn passed(&self) -> bool {
        self.passed.load(std::sync::atomic::Ordering::Relaxed)
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

    /// The records, when every one is still held (a series that let them go has none to give).
    pub fn into_records(self) -> Vec<Value> {
        match self {
            Kept::Documents(r) => r,
            Kept::Series(mut s) => {
                debug_assert!(s.raw, "records of a series that let them go");
                s.held_values()
            }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Kept::Documents(r) => r.len(),
            Kept::Series(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the records take raw without the frame around them ([`Tally::body`]; documents: 0,
    /// they are never let go).
    pub fn raw_body(&self) -> usize {
        match self {
            Kept::Documents(_) => 0,
            Kept::Series(s) => s.tally.body(),
        }
    }

    /// Let the records go if the floor says no raw answer is possible.
    pub fn let_go_if(&mut self, floor: &RawFloor) {
        if let (Kept::Series(s), true) = (self, floor.passed()) {
            s.let_go();
        }
    }

    /// The records of `other` follow these (windows are merged oldest first).
    pub fn append(&mut self, other: Kept) {
        match (self, other) {
            (Kept::Series(a), Kept::Series(mut b)) => {
                if !(a.raw && b.raw) {
                    a.let_go();
                    b.let_go();
                }
                a.cut_after_let_go |= b.cut_after_let_go;
                a.absent.extend(b.absent);
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

    /// Keep only the records of local days before `gap`.
    pub fn keep_days_before(&mut self, gap: Date, plan: &Plan) {
        let (c, zone) = (plan.collection, &plan.zone);
        let before = |r: &Value| record_day(r, c, zone).is_none_or(|d| d < gap);
        match self {
            Kept::Documents(r) => r.retain(before),
            Kept::Series(s) => {
                // A stamped sample's day is its stamp's: the local midnight that began it.
                let edge = zone.day_start(gap).timestamp().as_second();
                let held = s.held_values();
                let keep: Vec<bool> = if s.raw {
                    held.iter().map(before).collect()
                } else {
                    let mut unplaced = held.iter();
                    let stamps = s.readings.stamps.iter();
                    stamps.map(|st| st.map_or_else(|| unplaced.next().is_none_or(before), |st| st.midnight < edge)).collect()
                };
                s.records = held.into_iter().map(Held::Value).collect();
                if keep.contains(&false) {
                    s.retain_flagged(&keep, zone);
                }
                s.absent.retain(|(st, _)| st.is_none_or(|st| st.midnight < edge));
            }
        }
    }

    /// The samples that were no reading, by reason, and where each lies (documents have none).
    pub fn take_absent(&mut self) -> Vec<(Option<Stamp>, String)> {
        match self {
            Kept::Series(s) => std::mem::take(&mut s.absent),
            Kept::Documents(_) => vec![],
        }
    }

    /// Put the records in time order: by local day, then instant where a day key holds one
    /// (stable, so records of one moment keep the order they came in).
    fn sort(&mut self, plan: &Plan) {
        let c = plan.collection;
        let key = |r: &Value| (record_day(r, c, &plan.zone), record_instant(r, c));
        match self {
            Kept::Documents(r) => r.sort_by_cached_key(key),
            Kept::Series(s) if s.raw => {
                let mut held = s.held_values();
                held.sort_by_cached_key(key);
                s.records = held.into_iter().map(Held::Value).collect();
                s.recount(&plan.zone);
            }
            Kept::Series(s) => {
                // Only the readings are left: their stamps give the same order (records that
                // cannot be placed first, as a missing day sorts first).
                let mut order: Vec<usize> = (0..s.len()).collect();
                order.sort_by_key(|i| s.readings.stamps[*i].map(|st| (st.midnight, st.at)));
                s.readings.permute(&order);
            }
        }
    }

    /// Drop the first `n` records.
    pub fn drop_first(&mut self, n: usize, zone: &Zone) {
        match self {
            Kept::Documents(r) => {
                r.drain(..n.min(r.len()));
            }
            Kept::Series(s) if n > 0 => {
                let keep: Vec<bool> = (0..s.len()).map(|i| i >= n).collect();
                s.retain_flagged(&keep, zone);
                // Only the no-reading samples from the first sample left on are the answer's.
                let first = s.readings.stamps.iter().flatten().map(|st| st.at).min();
                s.absent.retain(|(st, _)| matches!((st, first), (Some(st), Some(f)) if st.at >= f));
            }
            Kept::Series(_) => {}
        }
    }
}

impl Kept {
    /// Keep only a series' samples stamped within `[from, to)` (seconds since the epoch); samples
    /// without a readable stamp go too, since nobody can say they are inside. Documents stay.
    pub fn keep_within(&mut self, from: i64, to: i64, zone: &Zone) {
        if let Kept::Series(s) = self {
            let keep: Vec<bool> = s.readings.stamps.iter().map(|st| st.as_ref().is_some_and(|st| (from..to).contains(&st.at))).collect();
            s.retain_flagged(&keep, zone);
            s.absent.retain(|(st, _)| st.as_ref().is_some_and(|st| (from..to).contains(&st.at)));
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
    /// Series: the no-reading samples this window counted already (a page sent twice counts once).
    absent_seen: HashSet<(Option<Key>, String)>,
    /// The position of the last record kept, and whether every record so far came at or after
    /// the one before (pages newest first or in no order are put in time order at the end).
    last: Option<Pos>,
    in_order: bool,
    /// Shared by the query's windows: when passed, records are let go (None: they never are).
    floor: Option<std::sync::Arc<RawFloor>>,
    /// What a record is told apart by and which of its fields are kept (the plan's).
    collection: &'static crate::catalog::CollectionSpec,
    fields: Option<Vec<String>>,
}

impl Keeper {
    pub fn new(plan: &Plan, floor: Option<std::sync::Arc<RawFloor>>) -> Keeper {
        // Documents are never stamped: an empty key names no field.
        let stamp = plan.collection.series.map_or("", |s| s.stamp);
        let stamper = Stamper::new(&plan.zone, stamp);
        Keeper {
            kept: Kept::for_plan(plan),
            stamper,
            seen: HashSet::default(),
            absent_seen: HashSet::default(),
            last: None,
            in_order: true,
            floor,
            collection: plan.collection,
            fields: plan.fields.clone(),
        }
    }

    /// How many records the window keeps so far.
    pub fn count(&self) -> usize {
        self.kept.len()
    }

    /// A page's records are all kept: once no raw answer is possible, let them go.
    pub fn page_done(&mut self) {
        if let Some(floor) = &self.floor {
            self.kept.let_go_if(floor);
        }
    }

    /// The window's records in time order, whatever order its pages came in.
    pub fn done(mut self, plan: &Plan) -> Kept {
        self.page_done();
        let mut kept = self.kept;
        if !self.in_order {
            kept.sort(plan);
        }
        kept
    }

    /// Whether records may be given read in place ([`Keeper::keep_read`]): a series' whole records.
    pub fn reads_in_place(&self) -> bool {
        matches!(self.kept, Kept::Series(_)) && self.fields.is_none()
    }

    /// Keep a record this window owns (`pos`: where it is in time, when placing it read it).
    /// Returns false when it was a repeat and was dropped.
    pub fn keep(&mut self, rec: Value, pos: Option<Pos>) -> bool {
        self.moved(pos);
        if let Kept::Documents(r) = &mut self.kept {
            r.push(rec);
            return true;
        }
        let Some(stamp) = self.admit(&rec, pos) else {
            return false;
        };
        let rec = match &self.fields {
            Some(fields) => project_one(rec, fields),
            None => rec,
        };
        if let Kept::Series(s) = &mut self.kept {
            s.push(rec, stamp);
        }
        true
    }

    /// [`Keeper::keep`] of a series record read in place (only when [`Keeper::reads_in_place`]):
    /// `text` is where it lies, taken only when the record is held whole.
    pub fn keep_read(&mut self, rec: &Flat, text: impl FnOnce() -> Text, pos: Option<Pos>) -> bool {
        self.moved(pos);
        let Some(stamp) = self.admit(rec, pos) else {
            return false;
        };
        if let Kept::Series(s) = &mut self.kept {
            s.push_read(rec, text, stamp);
        }
        true
    }

    fn moved(&mut self, pos: Option<Pos>) {
        if let Some(p) = pos {
            self.in_order &= self.last.is_none_or(|l| l <= p);
            self.last = Some(p);
        }
    }

    /// A series record's stamp when it is to be kept; None when it was sent before, or is no
    /// reading (counted where it lies, never kept).
    fn admit(&mut self, rec: &impl Fields, pos: Option<Pos>) -> Option<Option<Stamp>> {
        let stamp = match pos.and_then(Pos::instant) {
            Some(t) => Some(self.stamper.at(t)),
            None => self.stamper.stamp(rec),
        };
        let named = self.collection.key.and_then(|k| rec.str_of(k));
        let raw = self.collection.series.and_then(|x| rec.str_of(x.stamp));
        let key = match (named, stamp, raw) {
            (Some(id), _, _) => Some(Key::Id(id.to_string())),
            (None, Some(st), _) => Some(Key::At(st.at)),
            (None, None, Some(raw)) => Some(Key::Raw(raw.to_string())),
            (None, None, None) => None,
        };
        if let Some(why) = rec.str_of(NO_READING) {
            if self.absent_seen.insert((key, why.to_string())) {
                if let Kept::Series(s) = &mut self.kept {
                    s.absent.push((stamp, why.to_string()));
                }
            }
            return None;
        }
        if key.is_some_and(|k| !self.seen.insert(k)) {
            return None;
        }
        Some(stamp)
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

    fn flags(k: &Kept, keep: impl Fn(usize) -> bool) -> Vec<bool> {
        (0..k.len()).map(keep).collect()
    }

    impl Series {
        fn clone_held(&self) -> Vec<Value> {
            self.records.iter().cloned().map(Held::into_value).collect()
        }
    }

    fn inner(k: &mut Kept) -> &mut Series {
        let Kept::Series(s) = k else { unreachable!() };
        s
    }

    /// Samples that were no reading are counted where they lie: a zoom, the latest records, a
    /// merge keep only those of what is left.
    #[test]
    fn no_reading_samples_follow_the_cuts_of_the_records_they_lie_among() {
        let zone = Zone::parse("+00:00").unwrap();
        let recs: Vec<Value> = (1..=4).map(|d| json!({"timestamp": format!("2026-06-0{d}T12:00:00Z"), "bpm": 60})).collect();
        let mut stamper = Stamper::new(&zone, "timestamp");
        let mut absent = |d: u8| (stamper.stamp(&json!({"timestamp": format!("2026-06-0{d}T12:00:30Z")})), "no_contact".to_string());
        let (a, b) = ((1..=2).map(&mut absent).collect::<Vec<_>>(), (3..=4).map(&mut absent).collect::<Vec<_>>());
        let mut kept = series(&recs[..2], &zone);
        inner(&mut kept).absent = a;
        let mut later = series(&recs[2..], &zone);
        inner(&mut later).absent = b;
        kept.append(later);
        assert_eq!(inner(&mut kept).absent.len(), 4, "windows merged keep every window's");
        let day = |d: u8| format!("2026-06-0{d}T00:00:00Z").parse::<jiff::Timestamp>().unwrap().as_second();
        kept.keep_within(day(2), day(4), &zone);
        assert_eq!(inner(&mut kept).absent.len(), 2, "a zoom keeps those of its span");
        kept.drop_first(1, &zone);
        assert_eq!(inner(&mut kept).absent.len(), 1, "the latest records keep those from their first on");
        assert_eq!(kept.take_absent().len(), 1);
    }

    /// A record read in place (engine/flat.rs) is kept exactly as its decoded `Value` is: the
    /// same readings, the same size in every format, the same record when held whole.
    #[test]
    fn a_record_read_in_place_is_kept_as_its_value_is() {
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        let zone = Zone::parse("America/Chicago").unwrap();
        let texts = [
            r#"{"timestamp":"2026-06-01T12:00:00+00:00","bpm":61,"source":"awake"}"#,
            r#"{"source":"rest","bpm":58.5,"timestamp":"2026-06-01T12:00:05Z"}"#,
            r#"{"bpm":-0,"timestamp":"2026-06-01T12:00:10.250Z","source":null,"extra":"a, b"}"#,
            r#"{"timestamp":"2026-06-01T12:00:15Z","bpm":null,"source":3}"#,
            r#"{"timestamp":"2026-06-01T12:00:20Z","bpm":"72","source":true}"#,
            r#"{"timestamp":"2026-06-01T12:00:25Z","source":"awake","zz":1e2,"aa":12345678901234567890}"#,
            r#"{"timestamp":"not a time","bpm":70,"source":"awake"}"#,
            r#"{"bpm":71}"#,
            r#"{}"#,
        ];
        for format in [Format::Columns, Format::Records, Format::Csv] {
            let (mut by_value, mut in_place) = (Series::new(spec, format), Series::new(spec, format));
            let (mut stamper, mut flat) = (Stamper::new(&zone, spec.stamp), Flat::default());
            for text in texts {
                let value: Value = serde_json::from_str(text).unwrap();
                let stamp = stamper.stamp(&value);
                by_value.push(value, stamp);
                assert!(flat.read(text), "{text}");
                assert_eq!(stamper.stamp(&flat), stamp);
                let body: std::sync::Arc<str> = text.into();
                in_place.push_read(&flat, || Text::new(&body, 0..text.len()), stamp);
            }
            assert_eq!(format!("{:?}", in_place.readings), format!("{:?}", by_value.readings), "{format:?}");
            assert_eq!((in_place.tally.size(), in_place.tally.body()), (by_value.tally.size(), by_value.tally.body()), "{format:?}");
            assert_eq!(in_place.held_values(), by_value.held_values());
        }
    }

    #[test]
    fn what_bucketing_reads_follows_the_records_through_merge_and_cuts() {
        let zone = Zone::parse("-06:00").unwrap();
        let recs: Vec<Value> = (0..6).map(|i| json!({"timestamp": format!("2026-06-0{}T12:00:00Z", i + 1), "bpm": 60 + i})).collect();
        let mut kept = series(&recs[..2], &zone);
        kept.append(series(&recs[2..], &zone));
        assert_eq!(facts(&kept), facts(&series(&recs, &zone)), "windows merged = one run");
        let odd = flags(&kept, |i| i % 2 == 1);
        inner(&mut kept).retain_flagged(&odd, &zone);
        kept.drop_first(1, &zone);
        assert_eq!(kept.into_records().iter().map(|r| r["bpm"].as_i64().unwrap()).collect::<Vec<_>>(), [63, 65]);
        let mut kept = series(&recs, &zone);
        inner(&mut kept).retain_flagged(&odd, &zone);
        kept.drop_first(1, &zone);
        assert_eq!(facts(&kept), facts(&series(&[recs[3].clone(), recs[5].clone()], &zone)), "cut = read again");
    }

    #[test]
    fn a_series_that_let_its_records_go_keeps_the_same_readings_and_the_unplaceable_records() {
        let zone = Zone::parse("-06:00").unwrap();
        let mut recs: Vec<Value> = (0..6).map(|i| json!({"timestamp": format!("2026-06-0{}T12:00:00Z", i + 1), "bpm": 60 + i})).collect();
        recs.insert(3, json!({"timestamp": "not a time", "bpm": 1}));
        let (mut whole, mut gone) = (series(&recs[..4], &zone), series(&recs[..4], &zone));
        inner(&mut gone).let_go();
        // A window that let go merged with one that did not: the merge lets go as well.
        whole.append(series(&recs[4..], &zone));
        gone.append(series(&recs[4..], &zone));
        assert!(!inner(&mut gone).raw);
        assert_eq!(facts(&whole), facts(&gone));
        assert_eq!(inner(&mut gone).clone_held(), vec![recs[3].clone()], "only the record bucketing cannot place is held");
        let keep = flags(&whole, |i| i != 1);
        inner(&mut whole).retain_flagged(&keep, &zone);
        inner(&mut gone).retain_flagged(&keep, &zone);
        whole.drop_first(1, &zone);
        gone.drop_first(1, &zone);
        assert_eq!(inner(&mut whole).readings.stamps, inner(&mut gone).readings.stamps);
        assert_eq!(inner(&mut gone).clone_held(), vec![recs[3].clone()]);
        assert!(inner(&mut gone).cut_after_let_go, "the tally now measures what was fetched, and the answer says so");
        // The unplaceable record is dropped with its flag too.
        let all_but_it: Vec<bool> = inner(&mut gone).readings.stamps.iter().map(Option::is_some).collect();
        inner(&mut gone).retain_flagged(&all_but_it, &zone);
        assert!(inner(&mut gone).records.is_empty());
        assert_eq!(gone.len(), 4);
    }
}
