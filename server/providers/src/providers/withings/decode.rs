//! Withings' wire format into rows (reference `withings/README.md` §3–§8): the `{status, body}`
//! envelope and its status families, `value × 10^unit`, measure groups and the weigh-ins they
//! make, and one function per kind of row. Absent and 0-bpm readings become `null`, never 0.
use super::catalog::{BODY_TYPES, BP_TYPES};
use crate::providers::PageError;
use crate::time::rfc3339;
use jiff::tz::TimeZone;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Groups of one device this close together are one step-on (reference §8: a Body Cardio
/// weigh-in is three groups at the same moment).
pub const MERGE_WINDOW_S: i64 = 120;

/// `value × 10^unit`. Dividing the integer by an exact power of ten gives the double nearest to
/// the decimal, which prints as that decimal (`108400 × 10^-3` → `108.4`, never `108.39999`).
pub fn decimal(value: i64, unit: i64) -> f64 {
    // Past ±400 every f64 is 0 or infinite anyway; the clamp keeps a nonsense unit from overflowing.
    let unit = unit.clamp(-400, 400) as i32;
    if unit >= 0 {
        value as f64 * 10f64.powi(unit)
    } else {
        value as f64 / 10f64.powi(-unit)
    }
}

/// A decoded value as JSON: a whole number prints as one (`64`, not `64.0`).
pub fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// How the engine should treat a non-zero Withings status (reference §3).
#[derive(Debug, PartialEq, Eq)]
pub enum Family {
    Auth,
    InvalidParams,
    Forbidden,
    Timeout,
    RateLimited,
    Other,
}

pub fn family(status: i64) -> Family {
    const INVALID: &[(i64, i64)] = &[
        (201, 213),
        (216, 218),
        (220, 221),
        (223, 223),
        (225, 225),
        (227, 230),
        (234, 236),
        (238, 238),
        (240, 252),
        (254, 254),
        (260, 267),
        (271, 272),
        (275, 276),
        (283, 288),
        (290, 290),
        (293, 295),
        (297, 297),
        (300, 304),
        (321, 321),
        (323, 353),
        (380, 382),
        (400, 400),
        (501, 511),
        (523, 523),
        (532, 532),
        (2554, 2554),
        (3017, 3019),
    ];
    match status {
        100..=102 | 200 | 401 => Family::Auth,
        214 | 277 | 2553 | 2555 => Family::Forbidden,
        522 => Family::Timeout,
        601 => Family::RateLimited,
        s if INVALID.iter().any(|(a, b)| (*a..=*b).contains(&s)) => Family::InvalidParams,
        _ => Family::Other,
    }
}

/// The `body` of a successful reply, or what the engine should do instead.
pub fn envelope(text: &str) -> Result<Value, PageError> {
    let v: Value = serde_json::from_str(text).map_err(|_| {
        let head: String = text.chars().take(60).collect();
        PageError::Transient(format!("Withings sent a body that is not complete JSON (it starts {head:?})"))
    })?;
    let status = v.get("status").and_then(Value::as_i64).ok_or_else(|| PageError::Transient("Withings' answer has no `status`".into()))?;
    let said = crate::secret::redact(v.get("error").and_then(Value::as_str).unwrap_or("no text"));
    match (status, family(status)) {
        (0, _) => Ok(v.get("body").cloned().unwrap_or_default()),
        (_, Family::Auth) => Err(PageError::Unauthorized),
        (s, Family::Forbidden) => Err(PageError::Forbidden(format!(
            "Withings refused this data to the connected login (status {s}: {said}): it was granted without the scope for it. Connect \
             again and allow every permission: vitals_connect with provider=withings and again=true."
        ))),
        (s, Family::Timeout) => Err(PageError::Transient(format!("Withings timed out (status {s})"))),
        (s, Family::RateLimited) => {
            let wait = v.pointer("/body/wait_seconds").and_then(Value::as_u64).map(Duration::from_secs);
            Err(PageError::RateLimited { wait: Some(wait.unwrap_or(Duration::from_secs(10))), detail: format!("Withings status {s}: {said}") })
        }
        (s, Family::InvalidParams) => Err(PageError::Refused(format!("Withings refused the request as invalid (status {s}: {said})."))),
        (s, Family::Other) => Err(PageError::Refused(format!("Withings answered with an error (status {s}: {said})."))),
    }
}

/// The continuation of a listing: `more` is 0/1 on getmeas and a boolean on the v2 services.
pub fn next_offset(body: &Value) -> Result<Option<String>, PageError> {
    let more = match body.get("more") {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0) != 0,
        _ => false,
    };
    if !more {
        return Ok(None);
    }
    match body.get("offset").and_then(Value::as_i64) {
        Some(o) => Ok(Some(o.to_string())),
        None => Err(PageError::Refused("Withings said more pages follow but sent no `offset` to ask for them; the answer would be incomplete.".into())),
    }
}

fn zone(name: Option<&str>) -> TimeZone {
    name.and_then(|n| TimeZone::get(n).ok()).unwrap_or(TimeZone::UTC)
}

/// Unix seconds as a local time with offset in the record's own zone.
pub fn local(unix: Option<i64>, tz: &TimeZone) -> Value {
    match unix.and_then(|s| jiff::Timestamp::from_second(s).ok()) {
        Some(t) => Value::String(rfc3339(&t.to_zoned(tz.clone()))),
        None => Value::Null,
    }
}

/// A number as Withings documents it, or as a numeric string (seen from JSON libraries that quote
/// large integers): the value is the same either way.
fn int(v: &Value, k: &str) -> Option<i64> {
    v.get(k).and_then(|x| x.as_i64().or_else(|| x.as_f64().map(|f| f as i64)).or_else(|| x.as_str()?.trim().parse().ok()))
}

fn num(v: &Value, k: &str) -> Value {
    match v.get(k) {
        Some(x) if x.is_number() => x.clone(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()).map(number).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// A heart or breathing rate: absent, null or 0 is "not measured".
fn rate(v: &Value, k: &str) -> Value {
    match v.get(k).and_then(Value::as_f64) {
        Some(x) if x > 0.0 => v[k].clone(),
        _ => Value::Null,
    }
}

/// Seconds as minutes (two decimals at most).
fn minutes(v: &Value, k: &str) -> Value {
    v.get(k).and_then(Value::as_f64).map(|s| json!((s / 60.0 * 100.0).round() / 100.0)).unwrap_or(Value::Null)
}

fn text(v: &Value, k: &str) -> Value {
    v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| Value::String(s.into())).unwrap_or(Value::Null)
}

/// getmeas: each measure group as one intermediate row, values decoded, times local. The rows are
/// made into weigh-ins or readings by [`weigh_ins`] and [`readings`] once every page is in.
pub fn groups(body: &Value) -> Vec<Value> {
    let tz = zone(body.get("timezone").and_then(Value::as_str));
    let Some(gs) = body.get("measuregrps").and_then(Value::as_array) else {
        return vec![];
    };
    gs.iter()
        .map(|g| {
            let modified = int(g, "modified");
            let sent = g.get("measures").and_then(Value::as_array).map(Vec::len).unwrap_or(0);
            let measures: Vec<Value> = g
                .get("measures")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|m| {
                    let (value, unit, kind) = (int(m, "value")?, int(m, "unit")?, int(m, "type")?);
                    Some(json!({"type": kind, "position": int(m, "position"), "value": decimal(value, unit)}))
                })
                .collect();
            // A measure without a value, a unit or a type cannot be decoded: counted, and said.
            let unreadable = sent - measures.len();
            json!({
                "grpid": int(g, "grpid"),
                "time": local(int(g, "date"), &tz),
                "date": int(g, "date"),
                "device": g.get("hash_deviceid").or_else(|| g.get("deviceid")).cloned().unwrap_or(Value::Null),
                "model": text(g, "model"),
                "attrib": int(g, "attrib"),
                "modified": modified,
                "measures": measures,
                "unreadable": unreadable,
            })
        })
        .collect()
}

fn attrib(g: &Value) -> Option<i64> {
    int(g, "attrib")
}

/// Entered by hand (attrib 2, or 4 at account creation), or with no device at all.
fn manual(g: &Value) -> bool {
    matches!(attrib(g), Some(2 | 4)) || g["device"].is_null()
}

/// Whole-body values of a set of groups by measure type. Position 7 and no position are the whole
/// body (reference §4); a `(type, position)` seen twice keeps the latest-modified value.
fn whole_body(groups: &[&Value]) -> (std::collections::HashMap<i64, f64>, usize) {
    let mut best: std::collections::HashMap<i64, (i64, f64)> = Default::default();
    let mut conflicts = 0;
    for g in groups {
        let modified = int(g, "modified").unwrap_or(0);
        for m in g["measures"].as_array().into_iter().flatten() {
            if !matches!(m["position"].as_i64(), None | Some(7)) {
                continue;
            }
            let (Some(kind), Some(value)) = (m["type"].as_i64(), m["value"].as_f64()) else {
                continue;
            };
            match best.get(&kind) {
                Some((at, v)) if *at > modified || (*at == modified && *v == value) => {}
                Some((_, v)) => {
                    if *v != value {
                        conflicts += 1;
                    }
                    best.insert(kind, (modified, value));
                }
                None => {
                    best.insert(kind, (modified, value));
                }
            }
        }
    }
    (best.into_iter().map(|(k, (_, v))| (k, v)).collect(), conflicts)
}

fn row_of(groups: &[&Value], fields: &[(u32, &str)]) -> (Map<String, Value>, usize) {
    let first = groups[0];
    let (values, conflicts) = whole_body(groups);
    let mut row = Map::new();
    row.insert("id".into(), Value::String(first["grpid"].to_string()));
    row.insert("time".into(), first["time"].clone());
    for (kind, field) in fields {
        row.insert(field.to_string(), values.get(&i64::from(*kind)).map(|v| number(*v)).unwrap_or(Value::Null));
    }
    row.insert("device_model".into(), groups.iter().map(|g| g["model"].clone()).find(|m| !m.is_null()).unwrap_or(Value::Null));
    row.insert("source".into(), Value::String(if manual(first) { "manual" } else { "device" }.into()));
    row.insert("ambiguous".into(), Value::Bool(groups.iter().any(|g| attrib(g) == Some(1))));
    (row, conflicts)
}

fn sort_by_time(rows: &mut [Value]) {
    rows.sort_by_key(|r| r["time"].as_str().and_then(|t| t.parse::<jiff::Timestamp>().ok()));
}

/// A group sent twice (pages that overlap, a retried page) is one group: the copy modified last
/// is kept, so it is neither merged into a weigh-in twice nor counted twice in `groups`.
fn once_each(groups: Vec<Value>) -> Vec<Value> {
    let mut by_id: std::collections::HashMap<i64, usize> = Default::default();
    let mut out: Vec<Value> = Vec::with_capacity(groups.len());
    for g in groups {
        match int(&g, "grpid").and_then(|id| by_id.get(&id).copied().map(|i| (id, i))) {
            Some((_, i)) => {
                if int(&g, "modified") > int(&out[i], "modified") {
                    out[i] = g;
                }
            }
            None => {
                if let Some(id) = int(&g, "grpid") {
                    by_id.insert(id, out.len());
                }
                out.push(g);
            }
        }
    }
    out
}

/// Measure groups into weigh-ins: one device's groups at most [`MERGE_WINDOW_S`] apart are one
/// row; a manual group is a row of its own, and is left out unless `include_manual`.
pub fn weigh_ins(groups: Vec<Value>, include_manual: bool) -> (Vec<Value>, Vec<String>) {
    let groups = once_each(groups);
    let lost = unreadable(&groups);
    let unattributed = groups.iter().filter(|g| g["attrib"].is_null()).count();
    let (by_hand, mut by_device): (Vec<Value>, Vec<Value>) = groups.into_iter().partition(manual);
    // Groups stored at the same second are told apart by `grpid`, so a weigh-in is named after
    // the same group whatever order the pages came in.
    by_device
        .sort_by(|a, b| a["device"].as_str().cmp(&b["device"].as_str()).then(int(a, "date").cmp(&int(b, "date"))).then(int(a, "grpid").cmp(&int(b, "grpid"))));
    let mut clusters: Vec<Vec<&Value>> = vec![];
    for g in &by_device {
        match clusters.last_mut() {
            Some(c) if c[0]["device"] == g["device"] && int(g, "date").unwrap_or(0).saturating_sub(int(c[0], "date").unwrap_or(0)) <= MERGE_WINDOW_S => {
                c.push(g)
            }
            _ => clusters.push(vec![g]),
        }
    }
    // Pulse alone is a blood-pressure cuff's (meastype 11 is asked for the scales' standing heart rate).
    let only_pulse = |c: &Vec<&Value>| c.iter().flat_map(|g| g["measures"].as_array().into_iter().flatten()).all(|m| m["type"] == 11);
    let (pulse_only, clusters): (Vec<Vec<&Value>>, Vec<Vec<&Value>>) = clusters.into_iter().partition(only_pulse);
    let mut notes = vec![];
    if !pulse_only.is_empty() {
        notes.push(format!(
            "{} pulse-only measurement(s) (a blood-pressure cuff's) are not weigh-ins and are not listed here; withings.blood_pressure has them.",
            pulse_only.len()
        ));
    }
    let grouped: usize = clusters.iter().map(Vec::len).sum();
    let merged = grouped - clusters.len();
    if merged > 0 {
        notes.push(format!(
            "{} measure groups were merged into {} weigh-in{}: a scale stores one step-on as several groups (composition, pulse, pulse \
             wave velocity), so groups of one device at most {MERGE_WINDOW_S} s apart are one row (`groups` says how many).",
            grouped,
            clusters.len(),
            if clusters.len() == 1 { "" } else { "s" }
        ));
    }
    let mut conflicts = 0;
    let mut rows: Vec<Value> = vec![];
    for c in &clusters {
        let (mut row, n) = row_of(c, BODY_TYPES);
        conflicts += n;
        row.insert("groups".into(), json!(c.len()));
        rows.push(Value::Object(row));
    }
    if include_manual {
        for g in &by_hand {
            let (mut row, n) = row_of(&[g], BODY_TYPES);
            conflicts += n;
            row.insert("groups".into(), json!(1));
            rows.push(Value::Object(row));
        }
    } else if !by_hand.is_empty() {
        notes.push(format!(
            "{} {} typed in by hand in the Withings app {} left out; send options.include_manual=true to include them, flagged source=manual.",
            by_hand.len(),
            if by_hand.len() == 1 { "entry" } else { "entries" },
            if by_hand.len() == 1 { "was" } else { "were" }
        ));
    }
    notes.extend(common_notes(conflicts));
    notes.extend(unreadable_note(lost));
    if unattributed > 0 {
        notes.push(format!(
            "{unattributed} measure group(s) came without `attrib` (Withings' word on whether a device measured them, for this user, \
             or they were typed in by hand): they are listed as measured by a device, and could be manual entries or another person's."
        ));
    }
    sort_by_time(&mut rows);
    (rows, notes)
}

/// Measure groups into blood-pressure readings, one per group with a systolic or diastolic value.
/// A pulse-only group comes from a scale (standing heart rate), not a cuff: it is not a reading.
pub fn readings(groups: Vec<Value>) -> (Vec<Value>, Vec<String>) {
    let lost = unreadable(&groups);
    let is_bp = |g: &Value| g["measures"].as_array().into_iter().flatten().any(|m| matches!(m["type"].as_i64(), Some(9 | 10)));
    let (bp, pulse_only): (Vec<Value>, Vec<Value>) = groups.into_iter().partition(is_bp);
    let mut conflicts = 0;
    let mut rows: Vec<Value> = bp
        .iter()
        .map(|g| {
            let (row, n) = row_of(&[g], BP_TYPES);
            conflicts += n;
            Value::Object(row)
        })
        .collect();
    let mut notes = common_notes(conflicts);
    if !pulse_only.is_empty() {
        notes.push(format!(
            "{} pulse-only measurement(s) from a scale are not blood-pressure readings and are not listed here: they are the \
             standing heart rate of withings.measurements.",
            pulse_only.len()
        ));
    }
    notes.extend(unreadable_note(lost));
    sort_by_time(&mut rows);
    (rows, notes)
}

/// Measures Withings sent that could not be decoded, over a set of groups.
fn unreadable(groups: &[Value]) -> usize {
    groups.iter().map(|g| g["unreadable"].as_u64().unwrap_or(0) as usize).sum()
}

fn unreadable_note(n: usize) -> Option<String> {
    (n > 0).then(|| format!("{n} measure(s) Withings sent without a value, a unit or a type could not be decoded and are not in these rows."))
}

/// What merging the groups did. Rows another person may have made, or typed in by hand, are the
/// catalog's flags, counted in `notices.flagged` over the answer as sent.
fn common_notes(conflicts: usize) -> Vec<String> {
    match conflicts {
        0 => vec![],
        n => vec![format!("{n} metric(s) came twice with different values; the latest-modified value was kept.")],
    }
}

/// getactivity: one row per day and source.
///
/// What the recorded rows show (roessland/withoutings' capture): a day Withings lists with no
/// device behind it (`deviceid` null, `modelid` −1, no model, `is_tracker` false, brand 18, an
/// external source) carries steps, distance, minutes and calories of 0 and a `totalcalories` of
/// about 1,800: nothing measured that day, and the total is Withings' resting estimate. Such a row
/// keeps its day, its measured values are null (`measured: false`, a flag of the catalog's that
/// `notices.flagged` counts). A
/// row without a heart-rate tracker sends heart rate and zones as 0: all of them are null.
pub fn activity(a: &Value) -> Value {
    let measured = !no_device(a);
    let kept = |v: Value| if measured { v } else { Value::Null };
    let heart = ["hr_average", "hr_min", "hr_max"].iter().any(|k| a.get(*k).and_then(Value::as_f64).is_some_and(|x| x > 0.0));
    let zone = |k: &str| if heart { minutes(a, k) } else { Value::Null };
    json!({
        "day": text(a, "date"),
        "steps": kept(num(a, "steps")),
        "distance_m": kept(num(a, "distance")),
        "floors": kept(num(a, "elevation")),
        "soft_min": kept(minutes(a, "soft")),
        "moderate_min": kept(minutes(a, "moderate")),
        "intense_min": kept(minutes(a, "intense")),
        "active_min": kept(minutes(a, "active")),
        "active_kcal": kept(num(a, "calories")),
        "total_kcal": num(a, "totalcalories"),
        "hr_average_bpm": rate(a, "hr_average"),
        "hr_min_bpm": rate(a, "hr_min"),
        "hr_max_bpm": rate(a, "hr_max"),
        "hr_zone_light_min": zone("hr_zone_0"),
        "hr_zone_moderate_min": zone("hr_zone_1"),
        "hr_zone_intense_min": zone("hr_zone_2"),
        "hr_zone_peak_min": zone("hr_zone_3"),
        "source": text(a, "model"),
        "is_tracker": a.get("is_tracker").cloned().unwrap_or(Value::Null),
        "measured": measured,
    })
}

/// A getactivity row no device stands behind (see [`activity`]).
fn no_device(a: &Value) -> bool {
    a.get("deviceid").is_none_or(Value::is_null)
        && a.get("is_tracker") != Some(&Value::Bool(true))
        && int(a, "modelid").or_else(|| int(a, "model_id")) == Some(-1)
}

/// getsummary: one row per night, labelled with the day it ends (Withings' `date` already is).
pub fn night(n: &Value) -> Value {
    let tz = zone(n.get("timezone").and_then(Value::as_str));
    let d = &n["data"];
    let efficiency = d.get("sleep_efficiency").and_then(Value::as_f64).map(|e| json!((e * 1000.0).round() / 10.0)).unwrap_or(Value::Null);
    let device = match int(n, "model") {
        Some(32) => json!("sleep monitor"),
        Some(16) => json!("tracker"),
        Some(m) => json!(format!("model {m}")),
        None => Value::Null,
    };
    json!({
        "id": n.get("id").map(|i| Value::String(i.to_string())).unwrap_or(Value::Null),
        "day": text(n, "date"),
        "start": local(int(n, "startdate"), &tz),
        "end": local(int(n, "enddate"), &tz),
        "total_sleep_min": minutes(d, "total_sleep_time"),
        "time_in_bed_min": minutes(d, "total_timeinbed"),
        "deep_min": minutes(d, "deepsleepduration"),
        "light_min": minutes(d, "lightsleepduration"),
        "rem_min": minutes(d, "remsleepduration"),
        "awake_min": minutes(d, "wakeupduration"),
        "efficiency_pct": efficiency,
        // The older summary format sends `durationtosleep` (now deprecated) and no `sleep_latency`.
        "latency_min": if d.get("sleep_latency").is_some_and(|x| !x.is_null()) { minutes(d, "sleep_latency") } else { minutes(d, "durationtosleep") },
        "wakeup_count": num(d, "wakeupcount"),
        "score": num(d, "sleep_score"),
        "hr_average_bpm": rate(d, "hr_average"),
        "hr_min_bpm": rate(d, "hr_min"),
        "hr_max_bpm": rate(d, "hr_max"),
        "rr_average_per_min": rate(d, "rr_average"),
        "rr_min_per_min": rate(d, "rr_min"),
        "rr_max_per_min": rate(d, "rr_max"),
        "snoring_min": minutes(d, "snoring"),
        "snoring_episodes": num(d, "snoringepisodecount"),
        "breathing_disturbances": num(d, "breathing_disturbances_intensity"),
        "device": device,
    })
}

/// Nights without Withings' total (its older summary format sends the stages and no
/// `total_sleep_time`): their `total_sleep_min` is light + deep + REM, added here and said with
/// the nights it was, so nobody takes it for Withings' own. A night missing a stage keeps null.
pub fn sleep_totals(mut rows: Vec<Value>) -> (Vec<Value>, Vec<String>) {
    let mut added: Vec<String> = vec![];
    for r in rows.iter_mut().filter_map(Value::as_object_mut) {
        if r.get("total_sleep_min").is_some_and(|t| !t.is_null()) {
            continue;
        }
        let stages: Option<f64> = ["light_min", "deep_min", "rem_min"].iter().map(|k| r.get(*k).and_then(Value::as_f64)).sum();
        if let Some(t) = stages {
            r.insert("total_sleep_min".into(), json!((t * 100.0).round() / 100.0));
            added.push(r.get("day").and_then(Value::as_str).unwrap_or("a night without a date").to_string());
        }
    }
    let nights = match added.as_slice() {
        [] => return (rows, vec![]),
        few if few.len() <= 7 => few.join(", "),
        many => format!("{} nights, the first ending {} and the last {}", many.len(), many[0], many[many.len() - 1]),
    };
    let note = format!(
        "Withings sent no total sleep time for {nights} (its older sleep summary format): total_sleep_min there is light + deep + \
         REM minutes, computed by vitals, not sent by Withings."
    );
    (rows, vec![note])
}

fn category(c: Option<i64>) -> Value {
    let name = match c {
        Some(1) => "walk",
        Some(2) => "run",
        Some(3) => "hiking",
        Some(6) => "bicycling",
        Some(7) => "swimming",
        Some(16) => "lift weights",
        Some(17) => "fitness",
        Some(18) => "elliptical",
        Some(28) => "yoga",
        Some(187) => "rowing",
        Some(306) => "indoor walk",
        Some(307) => "indoor running",
        Some(308) => "indoor cycling",
        Some(n) => return json!(format!("category {n}")),
        None => return Value::Null,
    };
    json!(name)
}

/// getworkouts: one row per workout.
pub fn workout(w: &Value) -> Value {
    let tz = zone(w.get("timezone").and_then(Value::as_str));
    let d = &w["data"];
    let (s, e) = (int(w, "startdate"), int(w, "enddate"));
    let duration = match (s, e) {
        (Some(s), Some(e)) if e >= s => json!((e.saturating_sub(s) as f64 / 60.0 * 100.0).round() / 100.0),
        _ => Value::Null,
    };
    json!({
        "id": w.get("id").map(|i| Value::String(i.to_string())).unwrap_or(Value::Null),
        "day": text(w, "date"),
        "category": category(int(w, "category")),
        "start": local(s, &tz),
        "end": local(e, &tz),
        "duration_min": duration,
        "active_kcal": num(d, "calories"),
        "distance_m": num(d, "distance"),
        "steps": num(d, "steps"),
        "floors": num(d, "elevation"),
        "intensity": num(d, "intensity"),
        "hr_average_bpm": rate(d, "hr_average"),
        "hr_min_bpm": rate(d, "hr_min"),
        "hr_max_bpm": rate(d, "hr_max"),
        "pause_min": minutes(d, "pause_duration"),
        "spo2_average_pct": rate(d, "spo2_average"),
        "source": w.get("model").map(|m| if m.is_string() { m.clone() } else { json!(format!("model {m}")) }).unwrap_or(Value::Null),
    })
}

/// getintradayactivity: `series` is an object keyed by Unix second; one row per key, in time order.
pub fn intraday(body: &Value) -> Vec<Value> {
    let Some(series) = body.get("series").and_then(Value::as_object) else {
        return vec![];
    };
    let mut rows: Vec<(i64, Value)> = series
        .iter()
        .filter_map(|(k, s)| {
            let t = k.parse::<i64>().ok()?;
            Some((
                t,
                json!({
                    "timestamp": local(Some(t), &TimeZone::UTC),
                    "heart_rate_bpm": rate(s, "heart_rate"),
                    "steps": num(s, "steps"),
                    "active_kcal": num(s, "calories"),
                    "distance_m": num(s, "distance"),
                    "floors": num(s, "elevation"),
                    "duration_s": num(s, "duration"),
                    "source": text(s, "model"),
                }),
            ))
        })
        .collect();
    rows.sort_by_key(|(t, _)| *t);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// The night series Withings sends under each state segment of `/v2/sleep get`, by key, with the
/// field each becomes and whether 0 is a reading (seconds snored can be 0; a heart rate cannot).
const NIGHT_SERIES: &[(&str, &str, bool)] = &[
    ("hr", "heart_rate_bpm", false),
    ("rr", "breathing_rate_per_min", false),
    ("snoring", "snoring_s", true),
    ("sdnn_1", "sdnn_1_ms", false),
    ("rmssd", "rmssd_ms", false),
    ("hrv_quality", "hrv_quality", true),
    ("mvt_score", "movement_score", true),
];

/// A sleep state as Withings numbers it (reference §6).
fn sleep_state(code: Option<i64>) -> Value {
    match code {
        Some(0) => json!("awake"),
        Some(1) => json!("light"),
        Some(2) => json!("deep"),
        Some(3) => json!("rem"),
        Some(4) => json!("manual"),
        Some(5) => json!("unspecified"),
        Some(15) => json!("out_of_bed"),
        Some(n) => json!(format!("state {n}")),
        None => Value::Null,
    }
}

/// `/v2/sleep get`: state segments, each with its readings keyed by Unix second, into one row per
/// instant (a segment's start, and every reading), carrying the state of the segment it came in.
/// Only instants a timestamp can hold are kept; the rows are in time order.
pub fn sleep_series(body: &Value) -> Vec<Value> {
    let mut rows: std::collections::BTreeMap<i64, Map<String, Value>> = Default::default();
    for seg in body.get("series").and_then(Value::as_array).into_iter().flatten() {
        let (state, device) = (sleep_state(int(seg, "state")), text(seg, "model"));
        if let Some(t) = int(seg, "startdate") {
            row_at(&mut rows, t, &state, &device);
        }
        for (key, field, zero_reads) in NIGHT_SERIES {
            for (k, v) in seg.get(*key).and_then(Value::as_object).into_iter().flatten() {
                let Some(row) = k.trim().parse::<i64>().ok().and_then(|t| row_at(&mut rows, t, &state, &device)) else { continue };
                row.insert(field.to_string(), reading(v, *zero_reads));
            }
        }
    }
    rows.into_values().map(Value::Object).collect()
}

/// The row of instant `t` (made with the segment's state and device, every reading null), or
/// None when `t` is no instant a timestamp can hold.
fn row_at<'a>(rows: &'a mut std::collections::BTreeMap<i64, Map<String, Value>>, t: i64, state: &Value, device: &Value) -> Option<&'a mut Map<String, Value>> {
    jiff::Timestamp::from_second(t).ok()?;
    Some(rows.entry(t).or_insert_with(|| {
        let mut row = Map::new();
        row.insert("timestamp".into(), local(Some(t), &TimeZone::UTC));
        row.insert("state".into(), state.clone());
        for (_, field, _) in NIGHT_SERIES {
            row.insert(field.to_string(), Value::Null);
        }
        row.insert("device".into(), device.clone());
        row
    }))
}

/// One reading as a number: a numeric string is read too; a non-number, and 0 where 0 is no
/// reading (a heart rate), is null.
fn reading(v: &Value, zero_reads: bool) -> Value {
    let x = v.as_f64().or_else(|| v.as_str()?.trim().parse::<f64>().ok()).filter(|x| x.is_finite());
    match x {
        Some(x) if zero_reads || x > 0.0 => number(x),
        _ => Value::Null,
    }
}

/// The ECG devices by Withings' model number (the spec's heart list, and its sleep table for the watches).
fn ecg_device(model: Option<i64>) -> Value {
    match model {
        Some(44) => json!("BPM Core"),
        Some(91 | 92) => json!("Move ECG"),
        Some(93) => json!("ScanWatch"),
        Some(94) => json!("ScanWatch 2"),
        Some(n) => json!(format!("model {n}")),
        None => Value::Null,
    }
}

/// `/v2/heart list`: one row per recording. `id` is the signal's, which withings.ecg_signal reads;
/// a recording without an ECG (a BPM Core reading alone) has none. Times in the row's `timezone`
/// when Withings sends one (the spec shows none), else UTC: the instant is the same.
pub fn ecg(r: &Value) -> Value {
    let tz = zone(r.get("timezone").and_then(Value::as_str));
    let e = &r["ecg"];
    let afib = match int(e, "afib") {
        Some(0) => json!("negative"),
        Some(1) => json!("positive"),
        Some(2) => json!("inconclusive"),
        Some(n) => json!(format!("code {n}")),
        None => Value::Null,
    };
    let bp = &r["bloodpressure"];
    json!({
        "id": int(e, "signalid").map(|i| Value::String(i.to_string())).unwrap_or(Value::Null),
        "time": local(int(r, "timestamp"), &tz),
        "device_model": ecg_device(int(r, "model")),
        "heart_rate_bpm": rate(r, "heart_rate"),
        "afib": afib,
        "systolic_mmhg": rate(bp, "systole"),
        "diastolic_mmhg": rate(bp, "diastole"),
    })
}

/// Where the device was worn (the spec's `wearposition`).
fn wear_position(p: Option<i64>) -> Value {
    let name = match p {
        Some(0) => "right wrist",
        Some(1) => "left wrist",
        Some(2) => "right arm",
        Some(3) => "left arm",
        Some(4) => "right foot",
        Some(5) => "left foot",
        Some(6) => "between legs",
        Some(8) => "left side of the body",
        Some(9) => "right side of the body",
        Some(10) => "left leg",
        Some(11) => "right leg",
        Some(12) => "torso",
        Some(13) => "left hand",
        Some(14) => "right hand",
        Some(28) => "wide mode",
        Some(29) => "between arms",
        Some(30) => "hold right",
        Some(31) => "hold left",
        Some(n) => return json!(format!("position {n}")),
        None => return Value::Null,
    };
    json!(name)
}

/// `/v2/heart get`: one recording's signal (µV) as an evenly spaced series at its sampling rate.
/// The reply does not name the recording: `id` is the one asked for. A sample that is not a
/// number is null in its slot, so the slots keep their times.
pub fn ecg_signal(body: &Value, id: Option<&str>) -> Value {
    let hz = body.get("sampling_frequency").and_then(Value::as_f64).filter(|f| f.is_finite() && *f > 0.0);
    let items: Option<Vec<Value>> =
        body.get("signal").and_then(Value::as_array).map(|a| a.iter().map(|x| if x.is_number() { x.clone() } else { Value::Null }).collect());
    let duration = match (hz, &items) {
        (Some(f), Some(i)) => json!((i.len() as f64 / f * 100.0).round() / 100.0),
        _ => Value::Null,
    };
    let signal = match (hz, items) {
        (Some(f), Some(items)) => json!({"interval_s": 1.0 / f, "start": null, "items": items}),
        _ => Value::Null,
    };
    json!({
        "id": id,
        "device_model": ecg_device(int(body, "model")),
        "heart_rate_bpm": rate(body, "heart_rate"),
        "sampling_hz": hz.map(number).unwrap_or(Value::Null),
        "duration_s": duration,
        "wear_position": wear_position(int(body, "wearposition")),
        "signal_uv": signal,
    })
}

/// getdevice: one row per device, without serial numbers or device ids.
pub fn device(d: &Value) -> Value {
    let tz = zone(d.get("timezone").and_then(Value::as_str));
    json!({
        "type": text(d, "type"),
        "model": text(d, "model"),
        "battery": text(d, "battery"),
        "firmware": d.get("fw").filter(|f| !f.is_null()).map(|f| Value::String(f.as_str().map(str::to_string).unwrap_or_else(|| f.to_string()))).unwrap_or(Value::Null),
        "first_sync": local(int(d, "first_session_date"), &tz),
        "last_sync": local(int(d, "last_session_date"), &tz),
        "timezone": text(d, "timezone"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_decoded_with_their_own_exponent() {
        assert_eq!(decimal(108400, -3), 108.4);
        assert_eq!(decimal(7245, -2), 72.45);
        assert_eq!(decimal(95854, -3), 95.854);
        assert_eq!(decimal(120, 0), 120.0);
        assert_eq!(decimal(12000, -2), 120.0);
        assert_eq!(decimal(289, -1), 28.9);
        assert_eq!(decimal(7, 2), 700.0);
        assert_eq!(format!("{}", decimal(7249999, -5)), "72.49999");
    }

    #[test]
    fn statuses_fall_into_their_families() {
        assert_eq!(family(401), Family::Auth);
        assert_eq!(family(100), Family::Auth);
        assert_eq!(family(503), Family::InvalidParams);
        assert_eq!(family(2554), Family::InvalidParams);
        assert_eq!(family(601), Family::RateLimited);
        assert_eq!(family(522), Family::Timeout);
        assert_eq!(family(214), Family::Forbidden);
        assert_eq!(family(215), Family::Other);
        assert_eq!(family(9999), Family::Other);
    }

    #[test]
    fn a_measure_that_cannot_be_decoded_is_counted_and_said() {
        let body = json!({"timezone": "UTC", "measuregrps": [{"grpid": 7, "attrib": 0, "date": 1_780_000_000, "modified": 1_780_000_040,
            "hash_deviceid": "d1", "model": "Body+", "measures": [{"value": 72100, "type": 1, "unit": -3}, {"value": 1810, "type": 6}]}]});
        let (rows, notes) = weigh_ins(groups(&body), false);
        assert_eq!(rows[0]["weight_kg"], json!(72.1));
        assert!(rows[0]["fat_ratio_pct"].is_null(), "no unit, no value: null, never a guess");
        assert!(notes.iter().any(|n| n.starts_with("1 measure(s) Withings sent without a value, a unit or a type")), "{notes:?}");
    }

    #[test]
    fn more_is_an_integer_or_a_boolean() {
        assert_eq!(next_offset(&json!({"more": 1, "offset": 2})).unwrap(), Some("2".into()));
        assert_eq!(next_offset(&json!({"more": 0, "offset": 0})).unwrap(), None);
        assert_eq!(next_offset(&json!({"more": true, "offset": 300})).unwrap(), Some("300".into()));
        assert_eq!(next_offset(&json!({"more": false, "offset": 200})).unwrap(), None);
        assert_eq!(next_offset(&json!({"measuregrps": []})).unwrap(), None);
        assert!(next_offset(&json!({"more": true})).is_err());
    }

    /// Withings' older sleep summary format: stages and `durationtosleep`, no total and no
    /// `sleep_latency`. Latency falls back to the older field; the total is added, and said.
    #[test]
    fn an_older_sleep_summary_gets_its_latency_and_a_total_said_as_computed() {
        let older = json!({"id": 1, "date": "2014-09-11", "timezone": "Europe/Paris", "startdate": 1410521659, "enddate": 1410542577,
            "data": {"wakeupduration": 1800, "lightsleepduration": 18540, "deepsleepduration": 8460, "remsleepduration": 10460,
            "durationtosleep": 420, "durationtowakeup": 360, "wakeupcount": 3}});
        let current = json!({"id": 2, "date": "2023-05-22", "data": {"total_sleep_time": 27960, "lightsleepduration": 10320,
            "deepsleepduration": 9540, "remsleepduration": 8100, "sleep_latency": 720, "durationtosleep": 900}});
        let (rows, notes) = sleep_totals(vec![night(&older), night(&current)]);
        assert_eq!((rows[0]["latency_min"].as_f64(), rows[0]["total_sleep_min"].as_f64()), (Some(7.0), Some(624.33)), "{}", rows[0]);
        assert_eq!((rows[1]["latency_min"].as_f64(), rows[1]["total_sleep_min"].as_f64()), (Some(12.0), Some(466.0)), "Withings' own values first");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("2014-09-11") && !notes[0].contains("2023-05-22") && notes[0].contains("computed by vitals"), "{notes:?}");
        // A night missing a stage keeps no total rather than a part of one; nothing to say.
        let partial = json!({"date": "2014-09-12", "data": {"lightsleepduration": 18540, "deepsleepduration": 8460}});
        let (rows, notes) = sleep_totals(vec![night(&partial)]);
        assert!(rows[0]["total_sleep_min"].is_null() && notes.is_empty());
    }

    /// The reference's high-resolution night (segments with readings keyed by Unix second): a row
    /// per instant with its segment's state; a heart rate of 0 is no reading, 0 s snored is one.
    #[test]
    fn a_night_series_is_a_row_per_instant_in_its_segment_s_state() {
        let body = json!({"series": [
            {"startdate": 1618691453, "enddate": 1618691573, "state": 0, "model": "Aura Sensor V2",
             "hr": {"1618691453": 70, "1618691513": 0}, "rr": {"1618691453": 15}, "snoring": {"1618691453": 0, "1618691513": "12"}},
            {"startdate": 1618692053, "enddate": 1618692113, "state": 3, "model": "Aura Sensor V2", "rmssd": {"1618692083": 41}, "hr": {"x": 60}},
            {"startdate": 99_999_999_999_999i64, "state": 15}
        ], "model": 32});
        let rows = sleep_series(&body);
        let stamps: Vec<&str> = rows.iter().map(|r| r["timestamp"].as_str().unwrap()).collect();
        assert_eq!(stamps, ["2021-04-17T20:30:53+00:00", "2021-04-17T20:31:53+00:00", "2021-04-17T20:40:53+00:00", "2021-04-17T20:41:23+00:00"]);
        assert_eq!(
            (rows[0]["state"].as_str(), rows[0]["heart_rate_bpm"].as_i64(), rows[0]["breathing_rate_per_min"].as_i64()),
            (Some("awake"), Some(70), Some(15))
        );
        assert!(rows[1]["heart_rate_bpm"].is_null() && rows[1]["snoring_s"] == 12, "{}", rows[1]);
        assert_eq!(rows[0]["snoring_s"], 0);
        assert_eq!((rows[2]["state"].as_str(), rows[2]["device"].as_str()), (Some("rem"), Some("Aura Sensor V2")));
        assert_eq!((rows[3]["rmssd_ms"].as_i64(), rows[3]["state"].as_str()), (Some(41), Some("rem")));
    }

    #[test]
    fn an_ecg_is_listed_with_its_words_and_its_signal_read_at_its_rate() {
        let row = ecg(&json!({"deviceid": "d", "model": 44, "ecg": {"signalid": 48, "afib": 1}, "bloodpressure": {"diastole": 80, "systole": 121},
            "heart_rate": 82, "timestamp": 1594159644, "timezone": "Europe/Paris"}));
        assert_eq!(
            row,
            json!({"id": "48", "time": "2020-07-08T00:07:24+02:00", "device_model": "BPM Core", "heart_rate_bpm": 82, "afib": "positive",
            "systolic_mmhg": 121, "diastolic_mmhg": 80})
        );
        let bare = ecg(&json!({"model": 91, "heart_rate": 70, "timestamp": 1594159644}));
        assert_eq!((bare["id"].clone(), bare["time"].as_str(), bare["afib"].clone()), (Value::Null, Some("2020-07-07T22:07:24+00:00"), Value::Null));
        let s = ecg_signal(&json!({"signal": [1, -2, "x", 4], "sampling_frequency": 500, "wearposition": 3, "model": 44, "heart_rate": 0}), Some("48"));
        assert_eq!(s["signal_uv"], json!({"interval_s": 0.002, "start": null, "items": [1, -2, null, 4]}));
        assert_eq!((s["id"].as_str(), s["duration_s"].as_f64(), s["wear_position"].as_str()), (Some("48"), Some(0.01), Some("left arm")));
        assert!(s["heart_rate_bpm"].is_null(), "0 bpm is no reading");
        assert!(ecg_signal(&json!({"signal": [1], "sampling_frequency": 0}), None)["signal_uv"].is_null(), "no rate, no series");
    }

    /// The recorded shape of a day no device measured (roessland/withoutings' getactivity capture):
    /// zeros and a resting total, `deviceid` null, `modelid` -1; and a tracker without heart rate.
    #[test]
    fn a_day_no_device_measured_is_null_not_zero_and_said() {
        let none = json!({"steps": 0, "distance": 0, "elevation": 0, "soft": 0, "moderate": 0, "intense": 0, "active": 0, "calories": 0,
            "totalcalories": 1784.49, "hr_average": 0, "hr_min": 0, "hr_max": 0, "hr_zone_0": 0, "hr_zone_1": 0, "hr_zone_2": 0, "hr_zone_3": 0,
            "deviceid": null, "hash_deviceid": null, "timezone": "Europe/Oslo", "date": "2022-01-26", "modified": 1741817057, "brand": 18,
            "modelid": -1, "model": null, "is_tracker": false});
        let row = activity(&none);
        for k in ["steps", "distance_m", "active_min", "active_kcal", "hr_average_bpm", "hr_zone_light_min", "hr_zone_peak_min"] {
            assert!(row[k].is_null(), "{k} is not a measurement here: {row}");
        }
        assert_eq!(row["total_kcal"], 1784.49);
        assert_eq!(row["measured"], false);
        let flag = &super::super::catalog::WITHINGS.collection("activity").unwrap().flags[0];
        assert!(flag.on(&row), "flagged measured=false");
        // A phone source (a model, steps counted) is measured, but has no heart rate: zones null too.
        let phone = json!({"date": "2022-01-27", "steps": 5120, "brand": 18, "modelid": 1055, "model": "GoogleFit tracker", "deviceid": null,
            "is_tracker": false, "hr_average": 0, "hr_zone_0": 0});
        let row = activity(&phone);
        assert_eq!((row["steps"].as_i64(), row["measured"].as_bool()), (Some(5120), Some(true)));
        assert!(row["hr_zone_light_min"].is_null() && row["hr_average_bpm"].is_null());
        assert!(!flag.on(&row));
    }
}
