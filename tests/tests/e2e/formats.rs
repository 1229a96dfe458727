//! Real formats (issue 38): the bodies the built-in sample data and the twin serve have the shape
//! of what the live APIs send. `tests/shapes/` holds, for every response other people recorded
//! from the live APIs (`../shared/reference/recorded/`, with provenance), its shape: each key
//! path and the kind of its value (number, string, a date, a local time, a time with an offset,
//! a UTC time, epoch milliseconds...), no value. Each is asked of the same route here, and every
//! key the real API sent must be there with the same kind (null on either side goes with any
//! kind). The encoders and the decoders being written by one hand can no longer agree with each
//! other against the real format without a test failing.
use crate::common::*;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The kind of a value, as the shapes in `tests/shapes/` name it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => match n.as_f64().map(f64::abs) {
            Some(x) if (1e12..1e13).contains(&x) => "epoch-ms",
            _ => "number",
        },
        Value::String(s) => text_kind(s),
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn text_kind(s: &str) -> &'static str {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let date = s.len() >= 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10);
    if !date {
        return "string";
    }
    if s.len() == 10 {
        return "date";
    }
    if !(b[10] == b'T' || b[10] == b' ') || s.len() < 16 || !digits(11..13) || b[13] != b':' {
        return "string";
    }
    let tail = &s[16..];
    let zone = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '.');
    match zone {
        "" if b[10] == b' ' => "local-time-space",
        "" => "local-time",
        "Z" | "+00:00" | "+0000" => "utc-time",
        z if (z.starts_with('+') || z.starts_with('-')) && z.len() >= 5 => "offset-time",
        _ => "string",
    }
}

fn walk(v: &Value, path: &str, out: &mut BTreeMap<String, String>) {
    let k = kind(v);
    let merged = match out.get(path).map(String::as_str) {
        None | Some("null") => k.to_string(),
        Some(prev) if k == "null" || prev.split('|').any(|p| p == k) || (prev == "number" && k == "epoch-ms") => prev.to_string(),
        Some(prev) => format!("{prev}|{k}"),
    };
    out.insert(path.to_string(), merged);
    let join = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
    match v {
        // A map keyed by instants (Withings' intraday series) is one shape, whatever its keys.
        Value::Object(m) => m.iter().for_each(|(key, x)| walk(x, &join(if key.bytes().all(|b| b.is_ascii_digit()) { "{n}" } else { key }), out)),
        Value::Array(a) => a.iter().for_each(|x| walk(x, &format!("{path}[]"), out)),
        _ => {}
    }
}

fn shape_of(v: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(v, "", &mut out);
    out
}

/// `DAY-n` in a shape file's route or query: n days before today, `back` days earlier still (the
/// samples have recent days only).
fn days_ago(s: &str, back: i64) -> String {
    let mut out = s.to_string();
    while let Some(i) = out.find("DAY-") {
        let n: String = out[i + 4..].chars().take_while(char::is_ascii_digit).collect();
        out.replace_range(i..i + 4 + n.len(), &ds(ago(n.parse::<i64>().unwrap() + back)));
    }
    out
}

const ZONE: &str = "America/Chicago";

/// What the built-in sample (or, for Garmin Connect, the twin's person) answers `route?query` with.
fn ours(provider: &str, route: &str, q: &HashMap<String, String>) -> Value {
    let now = jiff::Timestamp::now();
    let body = match provider {
        "oura" => {
            let p = vitals::providers::oura::sample::Person { tz: jiff::tz::TimeZone::get(ZONE).unwrap() };
            vitals::providers::oura::sample::Api { person: &p, now }.answer(route, q).body
        }
        "withings" => {
            let p = vitals::providers::withings::sample::Person::new(ZONE, true);
            return vitals::providers::withings::sample::Api { person: &p, page_size: 300, now, order: None }.answer(route, q);
        }
        "polar" => {
            let p = vitals::providers::polar::sample::Person { every_day: true, ..vitals::providers::polar::sample::Person::new(ZONE) };
            let api = vitals::providers::polar::sample::Api { person: &p, now, dialect: Default::default(), registered: None };
            String::from_utf8(api.answer(route, q).body).unwrap()
        }
        "garmin" => {
            let p = vitals::providers::garmin::sample::Person::new(ZONE);
            String::from_utf8(vitals::providers::garmin::sample::Api { person: &p, now }.answer(route, q).body).unwrap()
        }
        "garmin_connect" => {
            let reply = vitals_twin::garmin_connect::Person.serve(route, q);
            assert_eq!(reply.status, 200, "{route}: {}", reply.body);
            reply.body
        }
        other => panic!("no sample for {other}"),
    };
    // An empty body is a day the sample person has nothing for (Garmin's answer to a night without HRV).
    if body.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{provider} {route}: not JSON ({e}): {body:.300}"))
}

/// The decoder's own source for a provider: a key it names (as a string literal) is a key it reads.
fn decoder_source(provider: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/providers/src/providers").join(provider);
    std::fs::read_dir(dir).unwrap().flatten().filter(|e| e.file_name() != "sample.rs").map(|e| std::fs::read_to_string(e.path()).unwrap_or_default()).collect()
}

/// Whether a key the real API sends and ours lacks matters: an envelope key (the first level), or a
/// key the decoder reads. Keys no decoder reads (a listing's hundred activity fields) are counted
/// and said, not required.
fn matters(path: &str, decoder: &str) -> bool {
    let last = path.rsplit(['.', ']', '[']).find(|p| !p.is_empty()).unwrap_or(path);
    envelope(path) || decoder.contains(&format!("\"{last}\""))
}

/// A key of the body's first level that holds the records (`data`, `dailyWeightSummaries`).
fn envelope(path: &str) -> bool {
    !path.is_empty() && !path.contains('.') && !path.starts_with("[]") && path.ends_with("[]")
}

#[test]
fn every_recorded_response_has_its_shape_in_our_samples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shapes");
    let (mut problems, mut unread) = (vec![], vec![]);
    let mut compared = 0;
    for provider in std::fs::read_dir(&root).unwrap().flatten() {
        for file in std::fs::read_dir(provider.path()).unwrap().flatten() {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
            let prov = provider.file_name().to_string_lossy().to_string();
            let name = file.file_name().to_string_lossy().to_string();
            // The recorded day, or the nearest earlier one the sample person has something for (a
            // person's days have gaps: a night without HRV is an empty answer, as Garmin's is).
            let (q, body) = (0..7)
                .map(|back| {
                    let route = days_ago(doc["route"].as_str().unwrap(), back);
                    let mut q: HashMap<String, String> =
                        doc["query"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), days_ago(v.as_str().unwrap(), back))).collect();
                    // The fields vitals asks Withings' v2 services for, as its requests carry them.
                    if let Some(f) = q.get("action").and_then(|a| vitals::providers::withings::data_fields(a)) {
                        q.insert("data_fields".into(), f.into());
                    }
                    let body = ours(&prov, &route, &q);
                    (q, body)
                })
                .find(|(_, body)| !body.is_null())
                .unwrap_or_else(|| panic!("{prov}/{name}: the sample person has nothing for a week of days"));
            let mine = shape_of(&body);
            let decoder = decoder_source(&prov);
            for (path, real) in doc["shape"].as_object().unwrap() {
                let real = real.as_str().unwrap();
                if real == "null" {
                    continue;
                }
                compared += 1;
                // A field of Withings' `data` that vitals' request does not ask for is not sent to it.
                let asked = q.get("data_fields").is_none_or(|f| !path.contains(".data.") || f.split(',').any(|x| path.ends_with(&format!(".data.{x}"))));
                match mine.get(path).map(String::as_str) {
                    None if !asked || !matters(path, &decoder) => unread.push(format!("{prov}/{name}: {path}")),
                    None => problems.push(format!("{prov}/{name}: `{path}` ({real}) is missing from ours")),
                    Some("null") => {}
                    Some(k) if compatible(real, k) => {}
                    Some(k) => problems.push(format!("{prov}/{name}: `{path}` is {k} in ours, {real} in the real API's")),
                }
            }
        }
    }
    eprintln!("formats: {compared} keys of the recorded responses compared; {} sent by the real API that no decoder reads or vitals does not ask for are left out of ours", unread.len());
    assert!(compared > 300, "{compared} keys compared");
    assert!(problems.is_empty(), "{} difference(s) from the recorded shapes:\n{}", problems.len(), problems.join("\n"));
}

/// Withings' high-resolution night (`/v2/sleep get`): the reference's sample of it is a recorded
/// exchange (identifiers replaced), asked here of the sample's last night with the fields vitals
/// asks for. Every key and kind it has (readings keyed by instant) is in ours.
#[test]
fn a_withings_night_series_has_the_recorded_shape() {
    use vitals::providers::withings::sample;
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/withings/sleep_v2_get.json");
    let real: Value = serde_json::from_str::<Value>(&std::fs::read_to_string(file).unwrap()).unwrap()["response"].clone();
    let p = sample::Person::new(ZONE, true);
    let api = sample::Api { person: &p, page_size: 300, now: jiff::Timestamp::now(), order: None };
    let night = (1..12).find_map(|k| sample::night_ending(&p, ago(k))).expect("a night in the last days");
    let from = night["startdate"].as_i64().unwrap();
    let q: HashMap<String, String> = [
        ("action", "get".to_string()),
        ("startdate", from.to_string()),
        ("enddate", (from + 86_400).to_string()),
        ("data_fields", vitals::providers::withings::data_fields("get").unwrap().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let ours = shape_of(&api.answer("/v2/sleep", &q));
    let mut problems = vec![];
    for (path, kind) in shape_of(&real).iter().filter(|(_, k)| *k != "null") {
        match ours.get(path).map(String::as_str) {
            None => problems.push(format!("`{path}` ({kind}) is missing from ours")),
            Some("null") => {}
            Some(k) if compatible(kind, k) => {}
            Some(k) => problems.push(format!("`{path}` is {k} in ours, {kind} in the recorded reply")),
        }
    }
    assert!(ours.contains_key("body.series[].sdnn_1.{n}"), "HRV, which the recorded night does not have, is in ours too: {ours:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Kinds agree when one of ours is one of theirs (a key that is a number on one day and epoch
/// milliseconds on another is a number).
fn compatible(real: &str, ours: &str) -> bool {
    let theirs: Vec<&str> = real.split('|').collect();
    ours.split('|')
        .filter(|k| *k != "null")
        .all(|k| theirs.contains(&k) || (k == "epoch-ms" && theirs.contains(&"number")) || (k == "number" && theirs.contains(&"epoch-ms")))
}

/// What a kind test cannot see: Garmin's epochs that are the local wall clock rather than an
/// instant, beside their instant. The sample person is at UTC−6 (or −5 in summer).
#[test]
fn garmin_local_epochs_are_the_wall_clock_beside_their_instant() {
    let p = vitals::providers::garmin::sample::Person::new(ZONE);
    let api = vitals::providers::garmin::sample::Api { person: &p, now: jiff::Timestamp::now() };
    let q = HashMap::new();
    let route = format!("/weight-service/weight/range/{}/{}", ds(ago(20)), ds(ago(1)));
    let body: Value = serde_json::from_slice(&api.answer(&route, &q).body).unwrap();
    let mut seen = 0;
    for w in body
        .pointer("/dailyWeightSummaries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|d| d["allWeightMetrics"].as_array().cloned().unwrap_or_default())
    {
        let (local, gmt) = (w["date"].as_i64().unwrap(), w["timestampGMT"].as_i64().unwrap());
        let offset_h = (local - gmt) / 3_600_000;
        assert!(offset_h == -6 || offset_h == -5, "`date` is the wall clock at the person's offset: {w}");
        seen += 1;
    }
    assert!(seen >= 2, "{body}");
    let _ = json!(Map::new());
}

/// A sample of `tests/samples/` decoded by its provider's decoder and rules, as a query would.
fn decoded(provider: &str, collection: &str, file: &str) -> (Vec<Value>, Vec<String>) {
    let home = vitals::accounts::Home::tenant(scratch().join("formats-decoders"));
    let p = vitals::providers::all_in(&Default::default(), &home).into_iter().find(|p| p.spec().name == provider).unwrap();
    let c = p.spec().collection(collection).unwrap();
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(provider).join(file)).unwrap()).unwrap();
    let at = vitals::providers::PageAt {
        zone: vitals::time::Zone::parse("-06:00").unwrap(),
        token: None,
        options: Default::default(),
        record: None,
        window: vitals::providers::Window::Unbounded,
    };
    let page = p.parse_page(c, &v["response"].to_string(), &at).unwrap_or_else(|e| panic!("{file}: {e:?}"));
    let f = p.finish(c, page.records, &Default::default());
    (f.records, f.notes)
}

/// Issue 38's first misreading, on a sample of the recorded shape: a weigh-in is at its instant.
#[test]
fn a_garmin_weigh_in_of_the_recorded_shape_is_at_its_own_instant_and_day() {
    let (rows, _) = decoded("garmin", "weight", "weight_range_local_date.json");
    let times: Vec<(&str, &str)> = rows.iter().map(|r| (r["day"].as_str().unwrap(), r["time"].as_str().unwrap())).collect();
    assert!(times.contains(&("2026-03-03", "2026-03-03T08:12:12-06:00")), "{times:?}");
    // A manual entry at 22:30 stays on its evening, though its instant is the next UTC day.
    assert!(times.contains(&("2026-03-02", "2026-03-02T22:30:00-06:00")), "{times:?}");
    let zone = vitals::time::Zone::parse("-06:00").unwrap();
    for (day, time) in times {
        assert_eq!(vitals::time::local_day(time, &zone).unwrap().to_string(), day);
    }
}

/// Issue 38's second, on a sample of the recorded shape: no heart-rate tracker, no zones; a day no
/// device measured keeps its row with nothing measured in it, and says so (its flag, counted).
#[test]
fn a_withings_day_no_device_measured_is_said_and_null_never_zero() {
    let (rows, _) = decoded("withings", "activity", "measure_v2_getactivity_no_device.json");
    let none = rows.iter().find(|r| r["day"] == "2026-03-02").unwrap();
    assert_eq!(none["measured"], false);
    assert!(none["steps"].is_null() && none["active_kcal"].is_null() && none["hr_zone_light_min"].is_null(), "{none}");
    assert_eq!(none["total_kcal"], 1762.31);
    let phone = rows.iter().find(|r| r["day"] == "2026-03-03").unwrap();
    assert_eq!((phone["steps"].as_i64(), phone["measured"].as_bool()), (Some(6412), Some(true)));
    assert!(phone["hr_average_bpm"].is_null() && phone["hr_zone_light_min"].is_null(), "no tracker, no zones: {phone}");
    let activity = vitals::providers::withings::catalog::WITHINGS.collection("activity").unwrap();
    let said = vitals::engine::record::flagged(activity, &rows).unwrap_or_default();
    assert!(said.starts_with("1 row(s) measured=false: no device measured the day"), "{said}");
}

/// Issue 48, on a body of the real shape: Polar's 0 bpm without skin contact is no reading,
/// marked for the engine to leave out and count, never a heart rate of 0.
#[test]
fn a_polar_heart_rate_of_zero_is_no_reading() {
    let (rows, _) = decoded("polar", "heartrate", "continuous_heart_rate_no_contact.json");
    let none = rows.iter().filter(|r| r[vitals::providers::NO_READING] == "no_contact").count();
    assert_eq!(none, 56, "every sample of 0 bpm is marked");
    assert!(rows.iter().all(|r| r.get("bpm").is_none_or(|b| b.as_f64().unwrap() > 0.0)), "no heart rate of 0");
}

/// Issue 48, on a body of the real shape: a load Polar calls NOT_AVAILABLE is no load, whatever
/// the number beside it (`perceived-load: 0.0`, `muscle-load: -1.0`).
#[test]
fn a_polar_load_not_available_is_no_load() {
    let (rows, _) = decoded("polar", "exercises", "exercises_training_load_not_available.json");
    let loads = |r: &Value| (r["cardio_load"].as_f64(), r["muscle_load"].as_f64(), r["perceived_load"].as_f64());
    assert_eq!(loads(&rows[0]), (Some(61.8), None, None), "perceived-load 0.0 and muscle-load -1.0 said NOT_AVAILABLE");
    assert_eq!(loads(&rows[1]), (Some(48.0), Some(31.5), Some(205.0)), "a rated exercise has its loads");
}

/// Issue 48, on a body of the published older shape: a Withings night without `sleep_latency`
/// and `total_sleep_time` has its latency from `durationtosleep` and a total said as computed.
#[test]
fn an_older_withings_sleep_summary_has_a_latency_and_a_computed_total() {
    let (rows, notes) = decoded("withings", "sleep", "sleep_v2_getsummary_older_format.json");
    assert_eq!((rows[0]["total_sleep_min"].as_f64(), rows[0]["latency_min"].as_f64()), (Some(430.0), Some(9.0)), "{}", rows[0]);
    assert_eq!((rows[1]["total_sleep_min"].as_f64(), rows[1]["latency_min"].as_f64()), (Some(440.0), Some(10.0)), "Withings' own: {}", rows[1]);
    assert!(notes.len() == 1 && notes[0].contains("2014-09-11") && !notes[0].contains("2023-05-22"), "{notes:?}");
}
