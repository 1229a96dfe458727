//! The collections answered from the index: rows in vitals' units, each dated by its own offset.
//! Overlapping sources of a cumulative quantity are merged by priority (reference §5.1): walking
//! the sources from the first, a sample counts for the part of its interval no higher source
//! already covers (its value apportioned by time); what overlap left out is named per day.
use super::index::{Index, Rec};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Seconds in a day.
const DAY: i64 = 86_400;
/// Rows in one page of a collection that can be large.
pub const PAGE_ROWS: usize = 10_000;

/// The order sources count in where they overlap: the person's (`VITALS_APPLE_HEALTH_PRIORITY`,
/// names first to last, for every type or for one: `sleep=AutoSleep; Sam's Apple Watch, Sam's
/// iPhone`), else Apple's default as far as the export shows it: entries made in Health by hand,
/// then the Watch, then the iPhone, then apps, by name.
#[derive(Debug, Clone, Default)]
pub struct Priority {
    /// The order for every type.
    pub order: Vec<String>,
    /// Orders for one type each: the person's word for it (`sleep`, `steps`) and its identifier.
    pub per_type: Vec<(String, String, Vec<String>)>,
    /// Why the setting could not be read, said in every answer that would use it.
    pub problem: Option<String>,
}

/// The words a person can give a type by in the setting, and the record type each names.
pub const TYPE_WORDS: &[(&str, &str)] = &[
    ("sleep", "HKCategoryTypeIdentifierSleepAnalysis"),
    ("steps", "HKQuantityTypeIdentifierStepCount"),
    ("distance_km", "HKQuantityTypeIdentifierDistanceWalkingRunning"),
    ("active_kcal", "HKQuantityTypeIdentifierActiveEnergyBurned"),
    ("basal_kcal", "HKQuantityTypeIdentifierBasalEnergyBurned"),
    ("exercise_min", "HKQuantityTypeIdentifierAppleExerciseTime"),
    ("flights", "HKQuantityTypeIdentifierFlightsClimbed"),
];

fn names(list: &str) -> Vec<String> {
    list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

impl Priority {
    /// The order `VITALS_APPLE_HEALTH_PRIORITY` names, as the server's settings hold it.
    pub fn from_config(config: &crate::config::Config) -> Priority {
        config.var(super::catalog::PRIORITY_ENV).map(Priority::parse).unwrap_or_default()
    }
    /// Groups split by `;`: `NAMES` for every type, `TYPE=NAMES` for one (a word of
    /// [`TYPE_WORDS`] or a record type identifier). A type nobody knows is a problem, named.
    pub fn parse(v: &str) -> Priority {
        let mut p = Priority::default();
        for group in v.split(';').map(str::trim).filter(|g| !g.is_empty()) {
            let Some((ty, list)) = group.split_once('=') else {
                p.order.extend(names(group));
                continue;
            };
            let ty = ty.trim();
            let id = TYPE_WORDS.iter().find(|(w, _)| w.eq_ignore_ascii_case(ty)).map(|(_, id)| id.to_string());
            match id.or_else(|| ty.starts_with("HK").then(|| ty.to_string())) {
                Some(id) => p.per_type.push((ty.to_string(), id, names(list))),
                None => {
                    let words: Vec<&str> = TYPE_WORDS.iter().map(|(w, _)| *w).collect();
                    p.problem = Some(format!(
                        "{}: {ty:?} is not a type it knows; write TYPE=SOURCE, SOURCE with TYPE one of {} or a record type identifier \
                         (HKQuantityTypeIdentifierStepCount), groups split by ';'.",
                        super::catalog::PRIORITY_ENV,
                        words.join(", ")
                    ));
                }
            }
        }
        p
    }
    /// Where `source` ranks for record type `ty` (lower counts first).
    pub fn rank(&self, ty: &str, source: &str) -> (usize, usize, u8, String) {
        let at = |order: &[String]| order.iter().position(|o| o.eq_ignore_ascii_case(source)).unwrap_or(usize::MAX);
        let own = self.per_type.iter().find(|(_, id, _)| id == ty).map_or(usize::MAX, |(_, _, o)| at(o));
        let s = source.to_lowercase();
        let default = if s == "health" {
            0
        } else if s.contains("watch") {
            1
        } else if s.contains("iphone") {
            2
        } else {
            3
        };
        (own, at(&self.order), default, source.to_string())
    }
    /// The rule for the record types `types`, in words, for the answer's notes.
    pub fn words(&self, types: &[&str]) -> String {
        let default = "entries made by hand in Health, then an Apple Watch, then an iPhone, then other apps by name (Apple's own order \
                       is not in the export; this is its documented default, the Watch put first)";
        let own: Vec<String> =
            self.per_type.iter().filter(|(_, id, _)| types.contains(&id.as_str())).map(|(w, _, o)| format!("for {w}: {}", o.join(", "))).collect();
        let mut out = if self.order.is_empty() {
            format!("Where sources overlap, one counts: {default}.")
        } else {
            format!("Where sources overlap, one counts, in the order VITALS_APPLE_HEALTH_PRIORITY gives: {}; then {default}.", self.order.join(", "))
        };
        if own.is_empty() {
            if self.order.is_empty() {
                out.push_str(" Set VITALS_APPLE_HEALTH_PRIORITY (source names, first counts first) to change it.");
            }
        } else {
            out.push_str(&format!(" The person's order comes first {}.", own.join("; ")));
        }
        out
    }
}

/// Which vitals provider's app wrote a source, when one did (so its data is not read twice).
pub fn origin(source: &str) -> &'static str {
    let s = source.to_lowercase();
    super::super::specs()
        .filter(|p| p.name != super::catalog::APPLE_HEALTH.name)
        .find(|p| s.contains(&p.display.to_lowercase()) || s.contains(p.namespace))
        .map(|p| p.namespace)
        .unwrap_or("health")
}

fn civil(day: i64) -> String {
    jiff::civil::Date::constant(1970, 1, 1).checked_add(jiff::Span::new().days(day)).map(|d| d.to_string()).unwrap_or_default()
}

/// An instant in its own offset, RFC 3339.
pub fn local(t: i64, offset_min: i16) -> String {
    let off = jiff::tz::Offset::from_seconds(i32::from(offset_min) * 60).unwrap_or(jiff::tz::Offset::UTC);
    let ts = jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.to_zoned(jiff::tz::TimeZone::fixed(off)).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Days `[lo, hi]` (days since 1970) as the instants whose records may fall in them.
fn span(lo: i64, hi: i64) -> (i64, i64) {
    ((lo - 1) * DAY, (hi + 2) * DAY)
}

fn q(t: &str) -> String {
    format!("HKQuantityTypeIdentifier{t}")
}

/// The rows of `collection` for local days `[lo, hi]`.
/// `only`: the record type `record` keeps (checked by [`check_type`] first).
pub fn rows(ix: &Index, collection: &str, lo: i64, hi: i64, prio: &Priority, only: Option<&str>) -> Vec<Value> {
    let day_in = |d: i64| (lo..=hi).contains(&d);
    let (from, to) = span(lo, hi);
    let mut out = match collection {
        "resting_heart_rate" => readings(ix, &q("RestingHeartRate"), "bpm", from, to, r1),
        "walking_heart_rate" => readings(ix, &q("WalkingHeartRateAverage"), "bpm", from, to, r1),
        "hrv" => readings(ix, &q("HeartRateVariabilitySDNN"), "sdnn_ms", from, to, r1),
        "spo2" => readings(ix, &q("OxygenSaturation"), "spo2_pct", from, to, r1),
        "respiratory_rate" => readings(ix, &q("RespiratoryRate"), "breaths_per_min", from, to, r1),
        "vo2max" => readings(ix, &q("VO2Max"), "vo2max", from, to, r1),
        "wrist_temperature" => readings(ix, &q("AppleSleepingWristTemperature"), "wrist_temp_c", from, to, r2),
        "blood_glucose" => readings(ix, &q("BloodGlucose"), "glucose_mg_dl", from, to, r1),
        "body" => body(ix, from, to),
        "blood_pressure" => pressure(ix, from, to),
        "mindful" => mindful(ix, from, to),
        "activity" => activity(ix, lo, hi, prio),
        "sleep" => sleep(ix, from, to, prio),
        "workout" => workouts(ix, from, to),
        "record" => raw(ix, from, to, only),
        _ => vec![],
    };
    out.retain(|r| r.get("day").and_then(Value::as_str).and_then(|d| jiff::civil::Date::strptime("%Y-%m-%d", d).ok()).is_some_and(|d| day_in(days_of(d))));
    out
}

/// Days since 1970-01-01 of a date.
pub fn days_of(d: jiff::civil::Date) -> i64 {
    (d - jiff::civil::Date::constant(1970, 1, 1)).get_days() as i64
}

/// Heart-rate samples starting in `[from, to)`.
pub fn heart_rate(ix: &Index, from: i64, to: i64) -> Vec<Value> {
    ix.records(&q("HeartRate"), from, to)
        .map(|r| json!({"timestamp": local(r.start, r.offset), "bpm": r1(ix.value(&r).0.as_f64().unwrap_or(0.0)), "source": ix.sources.name(r.src)}))
        .collect()
}

fn readings(ix: &Index, ty: &str, field: &str, from: i64, to: i64, round: fn(f64) -> f64) -> Vec<Value> {
    ix.records(ty, from, to)
        .map(|r| {
            let source = ix.sources.name(r.src);
            let mut m = Map::new();
            m.insert("day".into(), json!(civil(r.day())));
            m.insert("time".into(), json!(local(r.start, r.offset)));
            m.insert(field.into(), json!(round(ix.value(&r).0.as_f64().unwrap_or(f64::NAN))));
            m.insert("source".into(), json!(source));
            m.insert("origin".into(), json!(origin(source)));
            Value::Object(m)
        })
        .collect()
}

/// Readings of several types taken at the same instant by the same source, one row each.
fn grouped(ix: &Index, types: &[(&str, &str)], from: i64, to: i64) -> Vec<Value> {
    let mut rows: BTreeMap<(i64, u16), Map<String, Value>> = BTreeMap::new();
    for (ty, field) in types {
        for r in ix.records(&q(ty), from, to) {
            let source = ix.sources.name(r.src);
            let m = rows.entry((r.start, r.src)).or_insert_with(|| {
                let mut m = Map::new();
                m.insert("day".into(), json!(civil(r.day())));
                m.insert("time".into(), json!(local(r.start, r.offset)));
                m.insert("source".into(), json!(source));
                m.insert("origin".into(), json!(origin(source)));
                m
            });
            m.insert(field.to_string(), json!(r2(ix.value(&r).0.as_f64().unwrap_or(f64::NAN))));
        }
    }
    rows.into_values().map(Value::Object).collect()
}

fn body(ix: &Index, from: i64, to: i64) -> Vec<Value> {
    grouped(ix, &[("BodyMass", "weight_kg"), ("BodyFatPercentage", "body_fat_pct"), ("BodyMassIndex", "bmi"), ("LeanBodyMass", "lean_mass_kg")], from, to)
}

fn pressure(ix: &Index, from: i64, to: i64) -> Vec<Value> {
    grouped(ix, &[("BloodPressureSystolic", "systolic_mmhg"), ("BloodPressureDiastolic", "diastolic_mmhg")], from, to)
}

fn mindful(ix: &Index, from: i64, to: i64) -> Vec<Value> {
    ix.records("HKCategoryTypeIdentifierMindfulSession", from, to)
        .map(|r| {
            let source = ix.sources.name(r.src);
            json!({"day": civil(r.day()), "time": local(r.start, r.offset), "end": local(r.end, r.offset),
                   "minutes": r1((r.end - r.start) as f64 / 60.0), "source": source, "origin": origin(source)})
        })
        .collect()
}

fn raw(ix: &Index, from: i64, to: i64, only: Option<&str>) -> Vec<Value> {
    let recs: Vec<Rec> = match only {
        Some(t) => ix.records(t, from, to).collect(),
        None => ix.all(from, to),
    };
    recs.iter()
        .map(|r| {
            let unit = ix.units.name(r.unit);
            let value = if r.unit == super::index::CATEGORY { json!(ix.category(r)) } else { json!(r.value) };
            json!({"type": ix.types.name(r.ty), "day": civil(r.day()), "start": local(r.start, r.offset), "end": local(r.end, r.offset),
                   "value": value, "unit": unit, "source": ix.sources.name(r.src)})
        })
        .collect()
}

/// The edit distance between two short strings (for naming close matches).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Whether the export holds record type `ty`; if not, the error naming the parameter and the
/// export's types closest to it (an identifier mistyped, or its short name: `StepCount`).
pub fn check_type(ix: &Index, ty: &str) -> Result<(), UnknownType> {
    if ix.types.get(ty).is_some() {
        return Ok(());
    }
    let short = |s: &str| {
        let l = s.to_lowercase();
        ["hkquantitytypeidentifier", "hkcategorytypeidentifier", "hkdatatypeidentifier", "hkcorrelationtypeidentifier"]
            .iter()
            .find_map(|p| l.strip_prefix(p).map(str::to_string))
            .unwrap_or(l)
    };
    let want = short(ty);
    let mut close: Vec<(usize, &str)> = ix
        .types
        .all
        .iter()
        .map(|t| {
            let s = short(t);
            let d = if !want.is_empty() && (s.contains(&want) || want.contains(&s)) { 0 } else { distance(&want, &s) };
            (d, t.as_str())
        })
        .filter(|(d, _)| *d <= 3.max(want.chars().count() / 3))
        .collect();
    close.sort();
    let close: Vec<&str> = close.into_iter().take(5).map(|(_, t)| t).collect();
    let hint = if close.is_empty() {
        "none of its types is close; leave `options.type` out to see every type of a day".to_string()
    } else {
        format!("close: {}", close.join(", "))
    };
    Err(UnknownType { ty: ty.to_string(), hint })
}

/// A record type the export does not hold, and the types closest to it.
#[derive(Debug, thiserror::Error)]
#[error("`options.type`: {ty:?} is not a record type this export holds ({hint}).")]
pub struct UnknownType {
    ty: String,
    hint: String,
}

/// One day's total of a cumulative quantity, sources merged by priority.
#[derive(Default, Debug)]
pub struct Merged {
    pub total: f64,
    pub used: BTreeMap<String, f64>,
    pub left_out: BTreeMap<String, f64>,
}

/// The length of `[s, e)` that `covered` (sorted, disjoint) already holds.
fn overlap(covered: &[(i64, i64)], s: i64, e: i64) -> i64 {
    let from = covered.partition_point(|c| c.1 <= s);
    covered[from..].iter().take_while(|c| c.0 < e).map(|c| c.1.min(e) - c.0.max(s)).filter(|&x| x > 0).sum()
}

fn merge_into(covered: &mut Vec<(i64, i64)>, add: &[(i64, i64)]) {
    covered.extend_from_slice(add);
    covered.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(covered.len());
    for &(s, e) in covered.iter() {
        match out.last_mut() {
            Some(l) if s <= l.1 => l.1 = l.1.max(e),
            _ => out.push((s, e)),
        }
    }
    *covered = out;
}

/// Each day's total of cumulative type `ty`, over days `[lo, hi]`.
pub fn merged(ix: &Index, ty: &str, lo: i64, hi: i64, prio: &Priority) -> BTreeMap<i64, Merged> {
    let (from, to) = span(lo, hi);
    let mut days: BTreeMap<i64, BTreeMap<u16, Vec<Rec>>> = BTreeMap::new();
    for r in ix.records(ty, from, to) {
        days.entry(r.day()).or_default().entry(r.src).or_default().push(r);
    }
    let mut out = BTreeMap::new();
    for (day, by_src) in days {
        let mut srcs: Vec<u16> = by_src.keys().copied().collect();
        srcs.sort_by_key(|&s| prio.rank(ty, ix.sources.name(s)));
        let mut covered: Vec<(i64, i64)> = vec![];
        let mut m = Merged::default();
        for s in srcs {
            let name = ix.sources.name(s).to_string();
            let recs = &by_src[&s];
            let (mut kept, mut dropped) = (0.0, 0.0);
            for r in recs {
                let v = ix.value(r).0.as_f64().unwrap_or(0.0);
                let len = r.end - r.start;
                let share = if len == 0 {
                    if overlap(&covered, r.start, r.start + 1) > 0 {
                        0.0
                    } else {
                        1.0
                    }
                } else {
                    (len - overlap(&covered, r.start, r.end)) as f64 / len as f64
                };
                kept += v * share;
                dropped += v * (1.0 - share);
            }
            let spans: Vec<(i64, i64)> = recs.iter().map(|r| (r.start, r.end.max(r.start + 1))).collect();
            merge_into(&mut covered, &spans);
            m.total += kept;
            if kept > 0.0 {
                m.used.insert(name.clone(), kept);
            }
            if dropped > 1e-9 {
                m.left_out.insert(name, dropped);
            }
        }
        out.insert(day, m);
    }
    out
}

fn activity(ix: &Index, lo: i64, hi: i64, prio: &Priority) -> Vec<Value> {
    let fields = [
        ("StepCount", "steps", 0u8),
        ("DistanceWalkingRunning", "distance_km", 2),
        ("ActiveEnergyBurned", "active_kcal", 0),
        ("BasalEnergyBurned", "basal_kcal", 0),
        ("AppleExerciseTime", "exercise_min", 0),
        ("FlightsClimbed", "flights", 0),
    ];
    let mut rows: BTreeMap<i64, Map<String, Value>> = BTreeMap::new();
    let mut used: BTreeMap<i64, std::collections::BTreeSet<String>> = BTreeMap::new();
    let mut left: BTreeMap<i64, BTreeMap<String, Map<String, Value>>> = BTreeMap::new();
    for (ty, field, digits) in fields {
        for (day, m) in merged(ix, &q(ty), lo, hi, prio) {
            let round = |x: f64| if digits == 0 { x.round() } else { r2(x) };
            rows.entry(day).or_default().insert(field.into(), json!(round(m.total)));
            used.entry(day).or_default().extend(m.used.keys().cloned());
            for (src, v) in m.left_out {
                left.entry(day).or_default().entry(src).or_default().insert(field.into(), json!(round(v)));
            }
        }
    }
    // Stand hours: the hours with a stood record, whatever wrote it.
    let (from, to) = span(lo, hi);
    let mut stood: BTreeMap<i64, std::collections::BTreeSet<i64>> = BTreeMap::new();
    for r in ix.records("HKCategoryTypeIdentifierAppleStandHour", from, to) {
        if ix.category(&r).ends_with("Stood") {
            stood.entry(r.day()).or_default().insert((r.start + i64::from(r.offset) * 60).div_euclid(3600));
        }
    }
    for (day, hours) in stood {
        rows.entry(day).or_default().insert("stand_hours".into(), json!(hours.len()));
    }
    for s in &ix.summaries {
        let Some(d) = s.day else { continue };
        let day = days_of(d);
        if !(lo - 1..=hi + 1).contains(&day) {
            continue;
        }
        let row = rows.entry(day).or_default();
        let kcal = |x: Option<f64>| x.map(|x| r1(super::units::convert(x, &s.move_unit).0));
        row.insert("move_kcal".into(), json!(kcal(s.move_value)));
        row.insert("move_goal_kcal".into(), json!(kcal(s.move_goal)));
        row.insert("exercise_goal_min".into(), json!(s.exercise_goal_min));
        row.insert("stand_goal_hours".into(), json!(s.stand_goal_h));
    }
    rows.into_iter()
        .map(|(day, mut row)| {
            row.insert("day".into(), json!(civil(day)));
            row.insert("sources".into(), json!(used.remove(&day).unwrap_or_default()));
            if let Some(l) = left.remove(&day) {
                row.insert("left_out".into(), json!(l));
            }
            Value::Object(row)
        })
        .collect()
}

/// The record type of sleep.
pub const SLEEP: &str = "HKCategoryTypeIdentifierSleepAnalysis";

/// Nights per source: a source's sleep records with gaps under two hours are one night, filed
/// under the day it ended (in the records' own offset); then which of them count (`merge_nights`).
fn sleep(ix: &Index, from: i64, to: i64, prio: &Priority) -> Vec<Value> {
    let mut by_src: BTreeMap<u16, Vec<Rec>> = BTreeMap::new();
    for r in ix.records(SLEEP, from - DAY, to) {
        by_src.entry(r.src).or_default().push(r);
    }
    let mut out = vec![];
    for (src, recs) in by_src {
        let mut night: Vec<Rec> = vec![];
        let mut end = i64::MIN;
        for r in recs {
            if !night.is_empty() && r.start > end + 2 * 3600 {
                out.push(night_row(ix, src, &night));
                night.clear();
            }
            end = if night.is_empty() { r.end } else { end.max(r.end) };
            night.push(r);
        }
        if !night.is_empty() {
            out.push(night_row(ix, src, &night));
        }
    }
    merge_nights(&mut out, prio);
    out
}

/// Which nights count, like Apple's own view of sleep: on each wake-up day, walking the sources
/// by priority, a night counts unless it overlaps one that already counts (never added to it);
/// a night another provider's app wrote never counts here, that provider's own answer has it.
/// Each night says it in `counts`: `yes`, or why not.
fn merge_nights(nights: &mut [Value], prio: &Priority) {
    let at = |n: &Value, k: &str| n[k].as_str().and_then(|t| t.parse::<jiff::Timestamp>().ok()).map_or(0, |t| t.as_second());
    let mut order: Vec<usize> = (0..nights.len()).collect();
    order.sort_by_key(|&i| (nights[i]["day"].as_str().unwrap_or("").to_string(), prio.rank(SLEEP, nights[i]["source"].as_str().unwrap_or(""))));
    let mut counted: Vec<(String, i64, i64, String)> = vec![];
    for i in order {
        let n = &nights[i];
        let (day, s, e) = (n["day"].as_str().unwrap_or("").to_string(), at(n, "start"), at(n, "end"));
        let origin = n["origin"].as_str().unwrap_or("health").to_string();
        let says = if origin != "health" {
            format!("no: a copy the {origin} app wrote into Health (read it from {origin})")
        } else if let Some(c) = counted.iter().find(|c| c.0 == day && c.1 < e && s < c.2) {
            format!("no: it overlaps {}'s night, which comes first", c.3)
        } else {
            counted.push((day, s, e, n["source"].as_str().unwrap_or("").to_string()));
            "yes".to_string()
        };
        nights[i]["counts"] = json!(says);
    }
}

fn night_row(ix: &Index, src: u16, recs: &[Rec]) -> Value {
    let mut min: BTreeMap<&str, f64> = BTreeMap::new();
    for r in recs {
        let stage = match ix.category(r).trim_start_matches("HKCategoryValueSleepAnalysis") {
            "InBed" => "in_bed_min",
            "AsleepCore" => "core_min",
            "AsleepDeep" => "deep_min",
            "AsleepREM" => "rem_min",
            "Awake" => "awake_min",
            _ => "unspecified_min",
        };
        *min.entry(stage).or_default() += (r.end - r.start) as f64 / 60.0;
    }
    let start = recs.iter().map(|r| r.start).min().unwrap_or(0);
    let last = recs.iter().max_by_key(|r| r.end).copied().unwrap_or(recs[0]);
    let asleep: f64 = ["core_min", "deep_min", "rem_min", "unspecified_min"].iter().filter_map(|k| min.get(k)).sum();
    let source = ix.sources.name(src);
    let mut m = Map::new();
    m.insert("day".into(), json!(civil(last.end_day())));
    m.insert("source".into(), json!(source));
    m.insert("origin".into(), json!(origin(source)));
    m.insert("kind".into(), json!(if asleep >= 180.0 { "night" } else { "nap" }));
    m.insert("start".into(), json!(local(start, recs[0].offset)));
    m.insert("end".into(), json!(local(last.end, last.offset)));
    if !min.contains_key("in_bed_min") {
        min.insert("in_bed_min", (last.end - start) as f64 / 60.0);
    }
    for (k, v) in min {
        m.insert(k.into(), json!(v.round()));
    }
    m.insert("asleep_min".into(), json!(asleep.round()));
    Value::Object(m)
}

/// A workout's id: its start and its source, stable for this export.
pub fn workout_id(ix: &Index, w: &super::index::Workout) -> String {
    format!("{}-{}", w.start, ix.sources.name(w.src).bytes().fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))) % 10_000)
}

fn workouts(ix: &Index, from: i64, to: i64) -> Vec<Value> {
    ix.workouts
        .iter()
        .filter(|w| (from..to).contains(&w.start))
        .map(|w| {
            let source = ix.sources.name(w.src);
            let day = (w.start + i64::from(w.offset_min) * 60).div_euclid(DAY);
            let dur = w.duration.map(|d| super::units::convert(d, &w.duration_unit).0).filter(|_| !w.duration_unit.is_empty());
            let distance = w.own.distance_km.or(w.from_activity.distance_km).or(w.distance_km);
            let energy = w.own.energy_kcal.or(w.from_activity.energy_kcal).or(w.energy_kcal);
            let hr = w.own.hr.or(w.from_activity.hr).unwrap_or((None, None, None));
            json!({"id": workout_id(ix, w), "day": civil(day), "type": w.kind, "start": local(w.start, w.offset_min), "end": local(w.end, w.offset_min),
                   "duration_min": dur.map(r1), "elapsed_min": r1((w.end - w.start) as f64 / 60.0), "distance_km": distance.map(r2),
                   "energy_kcal": energy.map(r1), "hr_avg_bpm": hr.0.map(r1), "hr_min_bpm": hr.1.map(r1), "hr_max_bpm": hr.2.map(r1),
                   "route": !w.routes.is_empty(), "source": source, "origin": origin(source)})
        })
        .collect()
}
