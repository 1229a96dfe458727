//! The export in memory, as columns (reference §6.3): a record is its type, source and unit ids,
//! its start instant, length, offset and value (about 32 bytes), sorted by type then start, so a
//! question reads a slice. Duplicates and records ending before they start are dropped and
//! counted as the index is built. Nothing of it is written anywhere; it goes with the process.
use std::collections::HashMap;

/// The unit id of a category record (its value is a category name's id).
pub const CATEGORY: u16 = u16::MAX;

/// Strings seen in the file, each kept once, by id.
#[derive(Default)]
pub struct Names {
    ids: HashMap<Vec<u8>, u16>,
    pub all: Vec<String>,
    /// The id asked last: records of one type and source come in runs, so most asks are a
    /// comparison, not a hash.
    last: Option<u16>,
}

impl Names {
    /// The id of `s` (new ones are added; past 65,534 names the last id is shared, never a panic).
    pub fn id(&mut self, s: &[u8]) -> u16 {
        if let Some(i) = self.last.filter(|&i| self.all.get(i as usize).is_some_and(|n| n.as_bytes() == s)) {
            return i;
        }
        if let Some(&i) = self.ids.get(s) {
            self.last = Some(i);
            return i;
        }
        let i = self.all.len().min(u16::MAX as usize - 1) as u16;
        if self.all.len() < u16::MAX as usize - 1 {
            self.all.push(String::from_utf8_lossy(s).into_owned());
            self.ids.insert(s.to_vec(), i);
            self.last = Some(i);
        }
        i
    }
    pub fn get(&self, s: &str) -> Option<u16> {
        self.ids.get(s.as_bytes()).copied()
    }
    pub fn name(&self, i: u16) -> &str {
        self.all.get(i as usize).map(String::as_str).unwrap_or("")
    }
}

/// A record's `value` as read: a number (parsed where it was read, no copy of its text kept), a
/// category's name by id, or none.
#[derive(Default, Debug, Clone, Copy)]
pub enum RawValue {
    #[default]
    None,
    Number(f64),
    Category(u16),
}

/// A Record being read (its metadata may still come).
#[derive(Default)]
pub struct Pending {
    pub ty: u16,
    pub src: u16,
    /// 0 when the record has no unit (the names table keeps "" first).
    pub unit: u16,
    pub value: RawValue,
    pub start: i64,
    pub end: i64,
    pub offset_min: i16,
    /// `HKTimeZone`, where the writer said where the person was.
    pub zone: Option<String>,
}

/// A workout's totals from one level of the export.
#[derive(Default, Clone, Debug)]
pub struct Totals {
    pub distance_km: Option<f64>,
    pub energy_kcal: Option<f64>,
    pub hr: Option<(Option<f64>, Option<f64>, Option<f64>)>,
}

#[derive(Default, Clone, Debug)]
pub struct Workout {
    pub kind: String,
    pub src: u16,
    pub start: i64,
    pub end: i64,
    pub offset_min: i16,
    pub zone: Option<String>,
    pub duration: Option<f64>,
    pub duration_unit: String,
    pub distance_km: Option<f64>,
    pub energy_kcal: Option<f64>,
    pub own: Totals,
    pub from_activity: Totals,
    pub routes: Vec<String>,
}

/// One day of the rings (`ActivitySummary`): the Watch's own totals and goals.
#[derive(Default, Clone, Debug)]
pub struct Summary {
    pub day: Option<jiff::civil::Date>,
    pub move_value: Option<f64>,
    pub move_goal: Option<f64>,
    pub move_unit: String,
    pub exercise_min: Option<f64>,
    pub exercise_goal_min: Option<f64>,
    pub stand_h: Option<f64>,
    pub stand_goal_h: Option<f64>,
}

/// What the pass counted beside the records it kept.
#[derive(Default, Clone, Debug)]
pub struct Counts {
    pub read: u64,
    pub duplicates: u64,
    pub backwards: u64,
    pub unreadable: u64,
    /// Records whose time zone came from their own `HKTimeZone`.
    pub zoned: u64,
}

#[derive(Default)]
pub struct Builder {
    pub types: Names,
    pub sources: Names,
    pub units: Names,
    pub categories: Names,
    pub export_date: Option<String>,
    pub locale: Option<String>,
    pub unreadable: u64,
    backwards: u64,
    zoned: u64,
    zones: HashMap<String, Option<jiff::tz::TimeZone>>,
    cols: Columns,
    workouts: Vec<Workout>,
    summaries: Vec<Summary>,
}

#[derive(Default)]
struct Columns {
    ty: Vec<u16>,
    src: Vec<u16>,
    unit: Vec<u16>,
    start: Vec<i64>,
    len: Vec<u32>,
    offset: Vec<i16>,
    value: Vec<f64>,
}

impl Builder {
    /// The offset in minutes of the IANA zone `name` at `t`, when it is one.
    fn zone_offset(&mut self, name: &str, t: i64) -> Option<i16> {
        let tz = self.zones.entry(name.to_string()).or_insert_with(|| jiff::tz::TimeZone::get(name).ok()).as_ref()?;
        let ts = jiff::Timestamp::from_second(t).ok()?;
        Some((tz.to_offset(ts).seconds() / 60) as i16)
    }

    pub fn push(&mut self, p: Pending) {
        if self.units.all.is_empty() {
            self.units.id(b"");
        }
        if p.end < p.start {
            self.backwards += 1;
            return;
        }
        let (value, unit) = match p.value {
            RawValue::Number(x) => (x, p.unit),
            RawValue::Category(c) => (f64::from(c), CATEGORY),
            RawValue::None => (f64::from(self.categories.id(b"")), CATEGORY),
        };
        let offset = match p.zone.as_deref().and_then(|z| self.zone_offset(z, p.start)) {
            Some(o) => {
                self.zoned += 1;
                o
            }
            None => p.offset_min,
        };
        let c = &mut self.cols;
        c.ty.push(p.ty);
        c.src.push(p.src);
        c.unit.push(unit);
        c.start.push(p.start);
        c.len.push((p.end - p.start).min(u32::MAX as i64) as u32);
        c.offset.push(offset);
        c.value.push(value);
    }

    pub fn workout(&mut self, mut w: Workout) {
        if w.end < w.start {
            self.backwards += 1;
            return;
        }
        if let Some(o) = w.zone.clone().and_then(|z| self.zone_offset(&z, w.start)) {
            w.offset_min = o;
        }
        self.workouts.push(w);
    }

    pub fn summary(&mut self, s: Summary) {
        self.summaries.push(s);
    }

    /// The columns sorted by type and start, exact duplicates dropped.
    pub fn finish(mut self) -> Index {
        let Columns { ty, src, unit, start, len, offset, value } = std::mem::take(&mut self.cols);
        let n = ty.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        let key = |i: u32| {
            let i = i as usize;
            (ty[i], start[i], src[i], len[i], unit[i], value[i].to_bits())
        };
        order.sort_unstable_by_key(|&i| key(i));
        let before = order.len();
        order.dedup_by_key(|i| key(*i));
        let duplicates = (before - order.len()) as u64;
        fn pick<T: Copy>(order: &[u32], v: Vec<T>) -> Vec<T> {
            order.iter().map(|&i| v[i as usize]).collect()
        }
        // Column by column, each old one let go as its sorted copy is made: the peak is one
        // column more than the index, not twice the index.
        let cols = Columns {
            ty: pick(&order, ty),
            src: pick(&order, src),
            unit: pick(&order, unit),
            start: pick(&order, start),
            len: pick(&order, len),
            offset: pick(&order, offset),
            value: pick(&order, value),
        };
        drop(order);
        let mut by_type = HashMap::new();
        let mut i = 0;
        while i < cols.ty.len() {
            let t = cols.ty[i];
            let j = cols.ty[i..].partition_point(|&x| x == t) + i;
            by_type.insert(t, (i, j));
            i = j;
        }
        let mut workouts = std::mem::take(&mut self.workouts);
        workouts.sort_by_key(|w| (w.start, w.src, w.end));
        let wn = workouts.len();
        workouts.dedup_by(|a, b| a.start == b.start && a.end == b.end && a.src == b.src && a.kind == b.kind);
        let mut summaries = std::mem::take(&mut self.summaries);
        summaries.sort_by_key(|s| s.day);
        let counts = Counts {
            read: cols.ty.len() as u64 + duplicates + self.backwards,
            duplicates: duplicates + (wn - workouts.len()) as u64,
            backwards: self.backwards,
            unreadable: self.unreadable,
            zoned: self.zoned,
        };
        Index {
            types: self.types,
            sources: self.sources,
            units: self.units,
            categories: self.categories,
            export_date: self.export_date,
            locale: self.locale,
            cols,
            by_type,
            workouts,
            summaries,
            counts,
        }
    }
}

/// The export as vitals holds it.
pub struct Index {
    pub types: Names,
    pub sources: Names,
    pub units: Names,
    pub categories: Names,
    pub export_date: Option<String>,
    pub locale: Option<String>,
    cols: Columns,
    by_type: HashMap<u16, (usize, usize)>,
    pub workouts: Vec<Workout>,
    pub summaries: Vec<Summary>,
    pub counts: Counts,
}

/// One record, as a question reads it.
#[derive(Debug, Clone, Copy)]
pub struct Rec {
    pub start: i64,
    pub end: i64,
    /// The offset of the record's own day, in minutes.
    pub offset: i16,
    pub value: f64,
    pub src: u16,
    pub unit: u16,
    pub ty: u16,
}

impl Rec {
    /// The record's local day (of its start), as days since 1970-01-01.
    pub fn day(&self) -> i64 {
        (self.start + i64::from(self.offset) * 60).div_euclid(86_400)
    }
    /// The local day its end falls on (a night's wake-up day).
    pub fn end_day(&self) -> i64 {
        (self.end + i64::from(self.offset) * 60).div_euclid(86_400)
    }
}

impl Index {
    pub fn len(&self) -> usize {
        self.cols.ty.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cols.ty.is_empty()
    }
    fn rec(&self, i: usize) -> Rec {
        let c = &self.cols;
        Rec { start: c.start[i], end: c.start[i] + i64::from(c.len[i]), offset: c.offset[i], value: c.value[i], src: c.src[i], unit: c.unit[i], ty: c.ty[i] }
    }
    /// The records of type `name` (a full identifier) starting in `[from, to)`, Unix seconds.
    pub fn records(&self, name: &str, from: i64, to: i64) -> impl Iterator<Item = Rec> + '_ {
        let (a, b) = self.types.get(name).and_then(|t| self.by_type.get(&t).copied()).unwrap_or((0, 0));
        let s = &self.cols.start[a..b];
        let lo = a + s.partition_point(|&x| x < from);
        let hi = a + s.partition_point(|&x| x < to);
        (lo..hi).map(|i| self.rec(i))
    }
    /// Every record starting in `[from, to)`, whatever its type, by type then time.
    pub fn all(&self, from: i64, to: i64) -> Vec<Rec> {
        let mut out = vec![];
        let mut types: Vec<_> = self.by_type.iter().collect();
        types.sort();
        for (_, &(a, b)) in types {
            let s = &self.cols.start[a..b];
            let lo = a + s.partition_point(|&x| x < from);
            let hi = a + s.partition_point(|&x| x < to);
            out.extend((lo..hi).map(|i| self.rec(i)));
        }
        out
    }
    /// A record's value in vitals' units, and the unit (a category's name, for a category record).
    pub fn value(&self, r: &Rec) -> (serde_json::Value, String) {
        if r.unit == CATEGORY {
            return (serde_json::Value::String(self.categories.name(r.value as u16).to_string()), String::new());
        }
        let unit = self.units.name(r.unit);
        let (v, u) = super::units::convert(r.value, unit);
        let u = if u.is_empty() { unit.to_string() } else { u.to_string() };
        (serde_json::json!(v), u)
    }
    /// The category name of a category record.
    pub fn category(&self, r: &Rec) -> &str {
        if r.unit == CATEGORY {
            self.categories.name(r.value as u16)
        } else {
            ""
        }
    }
    /// The first and last instant any record starts at.
    pub fn span(&self) -> Option<(i64, i64)> {
        let min = self.cols.start.iter().min()?;
        let max = self.cols.start.iter().max()?;
        Some((*min, *max))
    }
}
