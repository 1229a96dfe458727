//! Coarser views of a time series that keep every sample accounted for: buckets of a fixed
//! length carry `n` (samples in the bucket: the `n`s add up to the raw count), avg/min/max of
//! each value, first/last where the level matters (a battery), and the most frequent value of
//! categorical fields. Series embedded in documents are compacted the same way.
use super::flat::{Fields, Flat, Scalar};
use crate::catalog::{Embedded, EmbeddedKind, SampleShape, SeriesSpec};
use crate::time::{rfc3339, Zone};
use jiff::Timestamp;
use serde_json::{json, Map, Value};

/// `raw`, or buckets of this many seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Raw,
    Step(u32),
}

/// The resolutions a caller may ask for, finest first (the order auto-selection tries them in).
pub const STEPS: &[(&str, u32)] = &[("1m", 60), ("5m", 300), ("15m", 900), ("30m", 1800), ("1h", 3600), ("1d", 86_400)];

impl Resolution {
    pub fn parse(s: &str) -> Option<Resolution> {
        if s == "raw" {
            return Some(Resolution::Raw);
        }
        STEPS.iter().find(|(n, _)| *n == s).map(|(_, secs)| Resolution::Step(*secs))
    }

    pub fn name(self) -> &'static str {
        match self {
            Resolution::Raw => "raw",
            Resolution::Step(s) => STEPS.iter().find(|(_, x)| *x == s).map(|(n, _)| *n).unwrap_or("custom"),
        }
    }

    pub fn names() -> String {
        std::iter::once("raw").chain(STEPS.iter().map(|(n, _)| *n)).collect::<Vec<_>>().join(", ")
    }
}

#[derive(Default)]
struct Stat {
    n: usize,
    sum: f64,
    min: f64,
    max: f64,
    first: Option<f64>,
    last: Option<f64>,
}

impl Stat {
    fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        }
        self.n += 1;
        self.sum += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.first.get_or_insert(x);
        self.last = Some(x);
    }
    fn avg(&self) -> Option<f64> {
        (self.n > 0).then(|| round1(self.sum / self.n as f64))
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn num(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

#[derive(Default)]
struct Bucket {
    n: usize,
    values: Vec<Stat>,
    /// Per category: (index into its dictionary, count), in order of first appearance.
    categories: Vec<Vec<(u32, usize)>>,
}

/// A sample's instant and the local midnight that began its day, in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub at: i64,
    pub midnight: i64,
}

/// Reads samples' stamps, converting to the zone once per local day rather than once per sample.
#[derive(Clone)]
pub struct Stamper {
    zone: Zone,
    /// The field holding the instant.
    key: &'static str,
    /// The local day last seen: [midnight, next midnight).
    day: Option<(i64, i64)>,
}

impl Stamper {
    pub fn new(zone: &Zone, key: &'static str) -> Stamper {
        Stamper { zone: zone.clone(), key, day: None }
    }

    /// The stamp of a series record, from its stamp field (None: missing or unreadable).
    pub fn stamp(&mut self, r: &impl Fields) -> Option<Stamp> {
        let t = r.str_of(self.key).and_then(|s| s.parse::<Timestamp>().ok())?;
        Some(self.at(t))
    }

    pub fn at(&mut self, t: Timestamp) -> Stamp {
        let at = t.as_second();
        let midnight = match self.day {
            Some((m, n)) if at >= m && at < n => m,
            _ => {
                let d = t.to_zoned(self.zone.tz.clone()).date();
                let m = self.zone.day_start(d).timestamp().as_second();
                let n = d.tomorrow().map(|x| self.zone.day_start(x).timestamp().as_second()).unwrap_or(i64::MAX);
                self.day = Some((m, n));
                m
            }
        };
        Stamp { at, midnight }
    }
}

/// A series as bucketing reads it, one entry per record in the records' order: each sample's
/// stamp, numeric values and categories, read once while its page was fresh (engine/kept.rs),
/// so that bucketing never walks the records again.
#[derive(Debug, Clone)]
pub struct Readings {
    spec: SeriesSpec,
    pub stamps: Vec<Option<Stamp>>,
    /// `values[v][i]`: `spec.values[v]` of record `i`, when it is a number.
    values: Vec<Vec<Option<f64>>>,
    /// Whether any record carries `spec.values[v]` at all (a column of nulls is still a column).
    has_value: Vec<bool>,
    /// `cats[c][i]`: `spec.categories[c]` of record `i` (when not null), as an index into `dict[c]`.
    cats: Vec<Vec<Option<u32>>>,
    has_cat: Vec<bool>,
    /// Each category's distinct values in order of first appearance: a handful, being categories.
    dict: Vec<Vec<Value>>,
}

impl Readings {
    pub fn new(spec: SeriesSpec) -> Readings {
        let (nv, nc) = (spec.values.len(), spec.categories.len());
        Readings {
            spec,
            stamps: vec![],
            values: vec![vec![]; nv],
            has_value: vec![false; nv],
            cats: vec![vec![]; nc],
            has_cat: vec![false; nc],
            dict: vec![vec![]; nc],
        }
    }

    pub fn spec(&self) -> SeriesSpec {
        self.spec
    }

    /// The readings of `records`, stamped in `zone`.
    pub fn of(records: &[Value], spec: SeriesSpec, zone: &Zone) -> Readings {
        let (mut r, mut stamper) = (Readings::new(spec), Stamper::new(zone, spec.stamp));
        for rec in records {
            r.push(rec, stamper.stamp(rec));
        }
        r
    }

    pub fn push(&mut self, rec: &Value, stamp: Option<Stamp>) {
        self.stamps.push(stamp);
        for (v, name) in self.spec.values.iter().enumerate() {
            let x = rec.get(*name);
            self.has_value[v] |= x.is_some();
            self.values[v].push(x.and_then(Value::as_f64));
        }
        for (c, name) in self.spec.categories.iter().enumerate() {
            let x = rec.get(*name);
            self.has_cat[c] |= x.is_some();
            let ix = x.filter(|x| !x.is_null()).map(|x| index_in(&mut self.dict[c], x));
            self.cats[c].push(ix);
        }
    }

    /// [`Readings::push`] of a record read in place (engine/flat.rs): the same readings.
    pub fn push_read(&mut self, rec: &Flat, stamp: Option<Stamp>) {
        self.stamps.push(stamp);
        for (v, name) in self.spec.values.iter().enumerate() {
            let x = rec.get(name);
            self.has_value[v] |= x.is_some();
            self.values[v].push(x.and_then(|x| x.as_f64()));
        }
        for (c, name) in self.spec.categories.iter().enumerate() {
            let x = rec.get(name);
            self.has_cat[c] |= x.is_some();
            let ix = x.filter(|x| **x != Scalar::Null).map(|x| index_by(&mut self.dict[c], |d| x.is(d), || x.to_value()));
            self.cats[c].push(ix);
        }
    }

    /// Keep the readings of the records `keep[i]` says (one flag per record, in order).
    pub fn retain(&mut self, keep: &[bool]) {
        fn filter<T>(xs: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            xs.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        filter(&mut self.stamps, keep);
        self.values.iter_mut().for_each(|xs| filter(xs, keep));
        self.cats.iter_mut().for_each(|xs| filter(xs, keep));
    }

    /// Put the readings in the order `order` gives (`order[k]`: the record now at `k`).
    pub fn permute(&mut self, order: &[usize]) {
        fn apply<T: Copy>(xs: &mut Vec<T>, order: &[usize]) {
            *xs = order.iter().map(|i| xs[*i]).collect();
        }
        apply(&mut self.stamps, order);
        self.values.iter_mut().for_each(|xs| apply(xs, order));
        self.cats.iter_mut().for_each(|xs| apply(xs, order));
    }

    /// The readings of `other`'s records follow these.
    pub fn append(&mut self, other: Readings) {
        self.stamps.extend(other.stamps);
        for (v, xs) in other.values.into_iter().enumerate() {
            self.values[v].extend(xs);
            self.has_value[v] |= other.has_value[v];
        }
        for (c, ixs) in other.cats.into_iter().enumerate() {
            // The other run numbered its categories itself: renumber them into ours.
            let map: Vec<u32> = other.dict[c].iter().map(|x| index_in(&mut self.dict[c], x)).collect();
            self.cats[c].extend(ixs.into_iter().map(|ix| ix.map(|i| map[i as usize])));
            self.has_cat[c] |= other.has_cat[c];
        }
    }
}

fn index_in(dict: &mut Vec<Value>, x: &Value) -> u32 {
    index_by(dict, |d| d == x, || x.clone())
}

/// Where in `dict` the value `is` says lies, added (`make`) when it is not there yet.
fn index_by(dict: &mut Vec<Value>, is: impl Fn(&Value) -> bool, make: impl FnOnce() -> Value) -> u32 {
    match dict.iter().position(is) {
        Some(i) => i as u32,
        None => {
            dict.push(make());
            (dict.len() - 1) as u32
        }
    }
}

/// A series' samples in time order, by their stamps (read once, as the pages came), and the
/// records whose timestamp could not be read (returned as they are).
pub struct Samples<'a> {
    stamps: &'a [Option<Stamp>],
    /// The records in time order (`stamps` indices), when the stamps are not already all readable
    /// and in order; empty when they are (windows merged in order, pages sorted: the usual case,
    /// where a year would otherwise copy 447,000 entries to sort what is sorted).
    order: Vec<usize>,
    pub unreadable: Vec<usize>,
}

impl<'a> Samples<'a> {
    /// `stamps[i]` is the stamp of record `i`.
    pub fn from_stamps(stamps: &'a [Option<Stamp>]) -> Samples<'a> {
        let in_order = stamps.windows(2).all(|w| matches!((w[0], w[1]), (Some(a), Some(b)) if a.at <= b.at)) && stamps.first().is_none_or(Option::is_some);
        if in_order {
            return Samples { stamps, order: vec![], unreadable: vec![] };
        }
        let (mut order, mut unreadable) = (Vec::with_capacity(stamps.len()), vec![]);
        for (i, s) in stamps.iter().enumerate() {
            match s {
                Some(_) => order.push(i),
                None => unreadable.push(i),
            }
        }
        // Stable: records of one instant keep the order they came in.
        order.sort_by_key(|i| stamps[*i].map(|s| s.at));
        Samples { stamps, order, unreadable }
    }

    /// How many samples have a readable stamp.
    pub fn len(&self) -> usize {
        match self.order.is_empty() && self.unreadable.is_empty() {
            true => self.stamps.len(),
            false => self.order.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k`th sample in time order: (instant, local midnight of its day, index of the record).
    fn at(&self, k: usize) -> (i64, i64, usize) {
        let i = if self.order.is_empty() { k } else { self.order[k] };
        // Every index here has a readable stamp (`order` holds only those; no order: all are).
        let s = self.stamps[i].unwrap_or(Stamp { at: 0, midnight: 0 });
        (s.at, s.midnight, i)
    }

    fn start(&self, k: usize, step: u32) -> i64 {
        let (t, midnight, _) = self.at(k);
        if step >= 86_400 {
            return midnight;
        }
        midnight + (t - midnight).div_euclid(i64::from(step)) * i64::from(step)
    }

    /// The start of the bucket of `step` that sample `k` opens, and the index past the run of
    /// samples after it with that same start. Samples come in time order, so within a local day
    /// the run is told by comparing each instant with the bucket's end rather than dividing: a
    /// year is 447,000 samples, counted once for each resolution tried (DECISIONS 139).
    fn run(&self, k: usize, step: u32) -> (i64, usize) {
        let start = self.start(k, step);
        let midnight = self.at(k).1;
        let end = if step >= 86_400 { i64::MAX } else { start + i64::from(step) };
        let same = |j: usize| match self.at(j) {
            (t, m, _) if m == midnight => (start..end).contains(&t),
            _ => self.start(j, step) == start,
        };
        let (mut j, n) = (k + 1, self.len());
        while j < n && same(j) {
            j += 1;
        }
        (start, j)
    }

    /// How many buckets `step` makes: cheap, for choosing a resolution before building any.
    pub fn count(&self, step: u32) -> usize {
        self.count_to(step, usize::MAX)
    }

    /// [`Samples::count`], counting no further than `most`: whether a resolution's rows can fit
    /// is known once they pass what fits, without walking the rest of a year at one minute.
    pub fn count_to(&self, step: u32, most: usize) -> usize {
        let (mut n, mut k, len) = (0, 0, self.len());
        while k < len && n <= most {
            k = self.run(k, step).1;
            n += 1;
        }
        n
    }
}

/// Bucket a series into rows of `step` seconds aligned to local midnight (buckets line up with
/// the local clock, and a 23- or 25-hour day has 23 or 25 hour buckets). At most `limit` rows
/// are built (to measure a sample of them). Records whose timestamp could not be read are not
/// included: see [`Samples::unreadable`].
pub fn bucket(readings: &Readings, samples: &Samples, zone: &Zone, step: u32, limit: usize) -> Vec<Value> {
    let spec = &readings.spec;
    let vals: Vec<usize> = (0..spec.values.len()).filter(|v| readings.has_value[*v]).collect();
    let cats: Vec<usize> = (0..spec.categories.len()).filter(|c| readings.has_cat[*c]).collect();
    let keys: Vec<[String; 5]> = vals
        .iter()
        .map(|v| spec.values[*v])
        .map(|v| [format!("{v}_avg"), format!("{v}_min"), format!("{v}_max"), format!("{v}_first"), format!("{v}_last")])
        .collect();
    let mut rows = vec![];
    let mut k = 0;
    while k < samples.len() && rows.len() < limit {
        let (start, past) = samples.run(k, step);
        let mut b = Bucket { n: 0, values: vals.iter().map(|_| Stat::default()).collect(), categories: vec![vec![]; cats.len()] };
        while k < past {
            let i = samples.at(k).2;
            b.n += 1;
            for (j, v) in vals.iter().enumerate() {
                if let Some(x) = readings.values[*v][i] {
                    b.values[j].add(x);
                }
            }
            for (j, c) in cats.iter().enumerate() {
                if let Some(x) = readings.cats[*c][i] {
                    match b.categories[j].iter_mut().find(|(v, _)| *v == x) {
                        Some((_, n)) => *n += 1,
                        None => b.categories[j].push((x, 1)),
                    }
                }
            }
            k += 1;
        }
        rows.push(b.row(start, &keys, readings, &cats, zone));
    }
    rows
}

impl Bucket {
    fn row(self, start: i64, keys: &[[String; 5]], readings: &Readings, cats: &[usize], zone: &Zone) -> Value {
        let levels = readings.spec.levels;
        let mut m = Map::new();
        let at = Timestamp::from_second(start).expect("a bucket start is an instant");
        m.insert(readings.spec.stamp.into(), json!(rfc3339(&at.to_zoned(zone.tz.clone()))));
        m.insert("n".into(), json!(self.n));
        for (k, s) in keys.iter().zip(&self.values) {
            let some = |x: f64| if s.n > 0 { num(x) } else { Value::Null };
            m.insert(k[0].clone(), s.avg().map(num).unwrap_or(Value::Null));
            m.insert(k[1].clone(), some(s.min));
            m.insert(k[2].clone(), some(s.max));
            if levels {
                m.insert(k[3].clone(), s.first.map(num).unwrap_or(Value::Null));
                m.insert(k[4].clone(), s.last.map(num).unwrap_or(Value::Null));
            }
        }
        for (c, counts) in cats.iter().zip(&self.categories) {
            // Most frequent; on a tie the one seen first.
            let mode = counts.iter().fold(None::<&(u32, usize)>, |best, x| match best {
                Some(b) if b.1 >= x.1 => Some(b),
                _ => Some(x),
            });
            let value = mode.map(|(i, _)| readings.dict[*c][*i as usize].clone()).unwrap_or(Value::Null);
            m.insert(readings.spec.categories[*c].to_string(), value);
        }
        Value::Object(m)
    }
}

/// How a bucketed answer was made, in words for the model.
pub fn method(spec: &SeriesSpec, step_name: &str, zone: &Zone) -> String {
    let vals = spec.values.join(", ");
    let levels = if spec.levels { ", plus `_first`/`_last` (the level at the start and end of the bucket)" } else { "" };
    let cats = if spec.categories.is_empty() { String::new() } else { format!("; {} = the most frequent value in the bucket", spec.categories.join(", ")) };
    format!(
        "Samples grouped into {step_name} buckets aligned to local midnight in {} (`timestamp` is the bucket start). Per bucket: \
         `n` = samples in it (the n's add up to the raw sample count), `{vals}_avg`/`_min`/`_max` over them{levels}{cats}.",
        zone.name
    )
}

/// Compact the embedded series of each document to `step` seconds where they are finer.
/// Returns the fields that were compacted.
pub fn compact_documents(records: &mut [Value], embedded: &[Embedded], step: u32) -> Vec<String> {
    let mut touched: Vec<String> = vec![];
    for r in records.iter_mut() {
        let Value::Object(m) = r else { continue };
        for e in embedded {
            let Some(v) = m.get_mut(e.field) else {
                continue;
            };
            let done = match e.kind {
                EmbeddedKind::Samples(shape) => compact_samples(v, &shape, step),
                EmbeddedKind::Epochs(secs) => compact_epochs(v, secs, step),
            };
            if done && !touched.iter().any(|f| f == e.field) {
                touched.push(e.field.to_string());
            }
        }
    }
    touched
}

/// Evenly spaced samples (interval, items, start, as `shape` names them) → items are bucket
/// averages, with `min`, `max` and `n` (non-null samples) arrays beside them and the interval they
/// came from.
fn compact_samples(v: &mut Value, shape: &SampleShape, step: u32) -> bool {
    let Some(interval) = v.get(shape.interval).and_then(Value::as_f64).filter(|i| *i > 0.0) else {
        return false;
    };
    if interval >= f64::from(step) {
        return false;
    }
    let Some(items) = v.get(shape.items).and_then(Value::as_array) else {
        return false;
    };
    let per = (f64::from(step) / interval).round().max(1.0) as usize;
    let (mut avg, mut min, mut max, mut n) = (vec![], vec![], vec![], vec![]);
    for chunk in items.chunks(per) {
        let mut s = Stat::default();
        for x in chunk.iter().filter_map(Value::as_f64) {
            s.add(x);
        }
        avg.push(s.avg().map(num).unwrap_or(Value::Null));
        min.push(if s.n > 0 { num(s.min) } else { Value::Null });
        max.push(if s.n > 0 { num(s.max) } else { Value::Null });
        n.push(json!(s.n));
    }
    let ts = v.get(shape.start).cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    out.insert(shape.interval.into(), num(interval * per as f64));
    out.insert(shape.start.into(), ts);
    out.insert(shape.items.into(), Value::Array(avg));
    out.insert("min".into(), Value::Array(min));
    out.insert("max".into(), Value::Array(max));
    out.insert("n".into(), Value::Array(n));
    out.insert("compacted_from_interval".into(), num(interval));
    *v = Value::Object(out);
    true
}

/// One character per epoch → one character per `step`: the most frequent of the characters it covers.
fn compact_epochs(v: &mut Value, secs: u32, step: u32) -> bool {
    let Some(s) = v.as_str() else { return false };
    if secs >= step || secs == 0 {
        return false;
    }
    let per = (step / secs).max(1) as usize;
    let chars: Vec<char> = s.chars().collect();
    let out: String = chars
        .chunks(per)
        .map(|c| {
            let mut counts: Vec<(char, usize)> = vec![];
            for ch in c {
                match counts.iter_mut().find(|(x, _)| x == ch) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((*ch, 1)),
                }
            }
            counts.iter().fold((c[0], 0), |best, x| if x.1 > best.1 { *x } else { best }).0
        })
        .collect();
    *v = Value::String(out);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::oura::catalog::OURA;

    fn hr(ts: &str, bpm: i64, source: &str) -> Value {
        json!({"timestamp": ts, "bpm": bpm, "source": source})
    }

    fn bucketed(recs: &[Value], spec: SeriesSpec, z: &Zone, step: u32) -> Vec<Value> {
        let readings = Readings::of(recs, spec, z);
        bucket(&readings, &Samples::from_stamps(&readings.stamps), z, step, usize::MAX)
    }

    #[test]
    fn readings_merged_across_windows_bucket_like_one_run() {
        let z = Zone::parse("UTC").unwrap();
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        // The second window meets its categories in another order, and brings a new one.
        let recs = vec![
            hr("2026-06-10T10:00:00Z", 60, "rest"),
            hr("2026-06-10T10:01:00Z", 61, "awake"),
            hr("2026-06-10T10:02:00Z", 62, "awake"),
            hr("2026-06-10T10:03:00Z", 63, "workout"),
            hr("2026-06-10T10:04:00Z", 64, "rest"),
            json!({"timestamp": "2026-06-10T10:05:00Z", "bpm": null, "source": null}),
        ];
        let whole = bucketed(&recs, spec, &z, 300);
        let mut merged = Readings::of(&recs[..2], spec, &z);
        merged.append(Readings::of(&recs[2..], spec, &z));
        let rows = bucket(&merged, &Samples::from_stamps(&merged.stamps), &z, 300, usize::MAX);
        assert_eq!(rows, whole);
        assert_eq!(rows[0]["source"], "rest", "two each of rest and awake: the one seen first");
        assert_eq!(rows[1], json!({"timestamp": "2026-06-10T10:05:00+00:00", "n": 1, "bpm_avg": null, "bpm_min": null, "bpm_max": null, "source": null}));
    }

    #[test]
    fn bucket_counts_add_up_to_the_raw_count() {
        let z = Zone::parse("-06:00").unwrap();
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        let recs: Vec<Value> = (0..1000)
            .map(|i| hr(&Timestamp::from_second(1_780_000_000 + i * 67).unwrap().to_string(), 50 + (i % 40), if i % 3 == 0 { "rest" } else { "awake" }))
            .collect();
        for (name, step) in STEPS {
            let readings = Readings::of(&recs, spec, &z);
            let samples = Samples::from_stamps(&readings.stamps);
            let rows = bucket(&readings, &samples, &z, *step, usize::MAX);
            assert!(samples.unreadable.is_empty());
            assert_eq!(samples.count(*step), rows.len());
            let total: u64 = rows.iter().map(|r| r["n"].as_u64().unwrap()).sum();
            assert_eq!(total, 1000, "{name}");
        }
    }

    /// The count by runs (compared, not divided) is the count by definition: consecutive samples
    /// whose bucket starts differ, over days of 23, 24 and 25 hours, gaps, and samples sent twice.
    /// Stamps read in place (already in order) and stamps sorted first (out of order, some
    /// unreadable) give the same samples: the same buckets, the same records left unplaced, and
    /// counting stops past `most` with the same verdict.
    #[test]
    fn samples_in_place_and_sorted_are_the_same_samples() {
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        let z = Zone::parse("America/Chicago").unwrap();
        let at = |i: i64| Timestamp::from_second(1_772_800_000 + i * 317).unwrap().to_string();
        let sorted: Vec<Value> = (0..2_000).map(|i| hr(&at(i), 60 + (i % 40), "rest")).collect();
        let mut shuffled = sorted.clone();
        shuffled.reverse();
        shuffled.swap(3, 1_500);
        shuffled.insert(700, hr("not a time", 70, "rest"));
        let (a, b) = (Readings::of(&sorted, spec, &z), Readings::of(&shuffled, spec, &z));
        let (in_place, by_sort) = (Samples::from_stamps(&a.stamps), Samples::from_stamps(&b.stamps));
        assert!(in_place.order.is_empty() && !by_sort.order.is_empty(), "one read in place, one sorted");
        assert_eq!((in_place.len(), by_sort.len(), by_sort.unreadable.clone()), (2_000, 2_000, vec![700]));
        for (name, step) in STEPS {
            assert_eq!(bucket(&a, &in_place, &z, *step, usize::MAX), bucket(&b, &by_sort, &z, *step, usize::MAX), "{name}");
            let n = in_place.count(*step);
            assert_eq!(by_sort.count(*step), n, "{name}");
            assert_eq!(in_place.count_to(*step, n), n, "{name}: exactly what fits is counted whole");
            assert!(in_place.count_to(*step, n.saturating_sub(2)) < n || n < 2, "{name}: stops past `most`");
            assert!(in_place.count_to(*step, n.saturating_sub(2)) > n.saturating_sub(2), "{name}: past `most` says so");
        }
    }

    #[test]
    fn runs_count_the_buckets_the_definition_counts() {
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        for zone in ["America/Chicago", "Australia/Lord_Howe", "+05:45", "UTC"] {
            let z = Zone::parse(zone).unwrap();
            let first = z.day_start(jiff::civil::date(2026, 3, 6)).timestamp().as_second();
            // Irregular steps (a prime number of seconds, a few hours' gap, a repeat) across both
            // of Chicago's changes of offset in 2026.
            let mut at: Vec<i64> = vec![];
            let mut t = first;
            for i in 0..30_000 {
                t += match i % 500 {
                    0 => 4 * 3600 + 7,
                    1 => 0,
                    _ => 613,
                };
                at.push(t);
            }
            let recs: Vec<Value> = at.iter().map(|t| hr(&Timestamp::from_second(*t).unwrap().to_string(), 60, "rest")).collect();
            let readings = Readings::of(&recs, spec, &z);
            let samples = Samples::from_stamps(&readings.stamps);
            for (name, step) in STEPS {
                let starts: Vec<i64> = (0..samples.len()).map(|k| samples.start(k, *step)).collect();
                let defined = 1 + starts.windows(2).filter(|w| w[0] != w[1]).count();
                assert_eq!(samples.count(*step), defined, "{zone} {name}");
                let rows = bucket(&readings, &samples, &z, *step, usize::MAX);
                assert_eq!(rows.len(), defined, "{zone} {name}");
            }
        }
    }

    #[test]
    fn a_bucket_carries_n_avg_min_max_and_the_mode() {
        let z = Zone::parse("UTC").unwrap();
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        let recs = vec![
            hr("2026-06-10T10:00:05Z", 60, "rest"),
            hr("2026-06-10T10:03:00Z", 70, "awake"),
            hr("2026-06-10T10:04:59Z", 65, "awake"),
            hr("2026-06-10T10:05:00Z", 90, "workout"),
        ];
        let rows = bucketed(&recs, spec, &z, 300);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], json!({"timestamp": "2026-06-10T10:00:00+00:00", "n": 3, "bpm_avg": 65, "bpm_min": 60, "bpm_max": 70, "source": "awake"}));
        assert_eq!(rows[1]["n"], 1);
    }

    #[test]
    fn battery_buckets_keep_first_and_last() {
        let z = Zone::parse("UTC").unwrap();
        let spec = OURA.collection("ring_battery_level").unwrap().series.unwrap();
        let recs = vec![json!({"timestamp": "2026-06-10T10:00:00Z", "level": 80}), json!({"timestamp": "2026-06-10T10:30:00Z", "level": 76})];
        let rows = bucketed(&recs, spec, &z, 3600);
        assert_eq!((rows[0]["level_first"].clone(), rows[0]["level_last"].clone()), (json!(80), json!(76)));
    }

    #[test]
    fn hour_buckets_follow_local_midnight_on_a_dst_day() {
        let z = Zone::parse("America/Chicago").unwrap();
        let spec = OURA.collection("heartrate").unwrap().series.unwrap();
        // 2026-03-08: a 23-hour day. One sample each half hour of it.
        let start = z.day_start(jiff::civil::date(2026, 3, 8)).timestamp().as_second();
        let recs: Vec<Value> = (0..46).map(|i| hr(&Timestamp::from_second(start + i * 1800).unwrap().to_string(), 60, "rest")).collect();
        let rows = bucketed(&recs, spec, &z, 3600);
        assert_eq!(rows.len(), 23);
        assert_eq!(rows[2]["timestamp"], "2026-03-08T03:00:00-05:00");
        let days = bucketed(&recs, spec, &z, 86_400);
        assert_eq!(days.len(), 1);
        assert_eq!(days[0]["n"], 46);
    }

    #[test]
    fn embedded_series_compact_with_their_counts() {
        let emb = OURA.collection("daily_activity").unwrap().embedded;
        let mut docs = vec![json!({
            "id": "a", "day": "2026-06-10", "score": 80,
            "met": {"interval": 60.0, "items": (0..120).map(|i| if i == 5 { Value::Null } else { json!(1.0 + (i % 2) as f64) }).collect::<Vec<_>>(), "timestamp": "2026-06-10T04:00:00-06:00"},
            "class_5_min": "0011112222331111"
        })];
        let touched = compact_documents(&mut docs, emb, 3600);
        assert_eq!(touched, ["met", "class_5_min"]);
        let met = &docs[0]["met"];
        assert_eq!(met["items"].as_array().unwrap().len(), 2);
        assert_eq!(met["n"], json!([59, 60]));
        assert_eq!(met["interval"], json!(3600));
        assert_eq!(docs[0]["class_5_min"], "11", "the most frequent class of each hour, the first on a tie");
        assert_eq!(docs[0]["score"], 80, "scalars come back whole");
    }
}
