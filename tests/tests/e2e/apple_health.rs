//! Apple Health end to end against generated exports with the traps (its "twin": Apple Health has
//! no web API, so the export generator of `providers/apple_health/generate.rs` writes files the
//! way the Health app does): sources overlapping and never summed, other providers' apps marked,
//! units converted, days in each record's own zone across a trip, duplicates and records ending
//! before they start dropped and counted, a localised file name, a broken DTD, a damaged zip and
//! a cut XML said naming the file, HRV as SDNN never beside RMSSD, and the sample labelled.
use crate::common::{self, Progressed};
use common::*;
use jiff::civil::Date;
use serde_json::{json, Value};
use vitals::providers::apple_health::generate::{self, Plan, OURA_APP, PHONE, SCALE_APP, SLEEP_APP, SLEEP_APP_ASLEEP_MIN, WATCH};

/// The plan of these tests: ten days ending yesterday in the suite's zone, every trap on.
fn plan(imperial: bool) -> Plan {
    let mut p = Plan::new(ago(10), 10, "America/Chicago");
    p.imperial = imperial;
    p.travel = Some((6, 8));
    p
}

fn write_zip(p: &Plan, tag: &str, xml_name: &str) -> std::path::PathBuf {
    let path = scratch().join(format!("apple-health-{}-{tag}.zip", std::process::id()));
    let f = std::fs::File::create(&path).unwrap();
    generate::write_zip(p, xml_name, f).unwrap();
    path
}

async fn server(path: &std::path::Path) -> Session {
    server_with(path, &[]).await
}

async fn server_with(path: &std::path::Path, extra: &[(&str, &str)]) -> Session {
    let twin = twin().await;
    let file = path.display().to_string();
    let mut env = vec![("VITALS_APPLE_HEALTH_FILE", file.as_str()), ("VITALS_TZ", "America/Chicago")];
    env.extend_from_slice(extra);
    connect(&twin, true, &env).await
}

/// The Apple Health values of a vitals_daily cell: the cell's own and its `also`.
fn apple_values(cell: &Value) -> Vec<Value> {
    std::iter::once(cell)
        .chain(cell["also"].as_array().into_iter().flatten())
        .filter(|v| v["from"].as_str().unwrap_or("").starts_with("apple_health"))
        .cloned()
        .collect()
}

async fn query(s: &Session, collection: &str, args: Value) -> Value {
    records_of(s, &format!("apple_health.{collection}"), args).await
}

fn rows(a: &Value) -> Vec<Value> {
    a["data"].as_array().cloned().unwrap_or_default()
}

fn by_day(rows: &[Value], day: Date) -> Vec<&Value> {
    rows.iter().filter(|r| r["day"] == day.to_string()).collect()
}

/// A day's steps from the Watch and the iPhone overlapping: the Watch's, plus the half hour the
/// iPhone counted alone; never the sum; the iPhone's overlapped steps named as left out, and the
/// rule said.
#[tokio::test(flavor = "multi_thread")]
async fn a_days_steps_never_add_overlapping_sources() {
    let p = plan(false);
    let path = write_zip(&p, "steps", "export.xml");
    let s = server(&path).await;
    let day = ago(3);
    let a = query(&s, "activity", json!({"start": ds(day), "end": ds(day)})).await;
    let r = by_day(&rows(&a), day)[0].clone();
    let watch: u32 = (8..22).map(|h| generate::watch_steps(day, h)).sum();
    assert_eq!(r["steps"].as_f64(), Some(f64::from(watch + 400)), "the Watch's steps and the iPhone's alone: {r}");
    assert!(r["left_out"][PHONE]["steps"].as_f64().unwrap() > 0.0, "what overlap left out is named: {r}");
    assert_eq!(r["flights"].as_f64(), Some(4.0), "the phone's flights in the same minutes are not added: {r}");
    let sources: Vec<&str> = r["sources"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(sources.contains(&WATCH) && sources.contains(&PHONE), "{r}");
    assert!(!sources.iter().any(|x| x.contains("SyncPal")), "a record ending before it starts counts nowhere: {r}");
    assert!(a["notices"].to_string().contains("Where sources overlap, one counts"), "the rule is said: {}", a["notices"]);
    assert!((r["move_goal_kcal"].as_f64().unwrap() - 500.0).abs() < 1e-6, "the rings' goals: {r}");
    s.close().await;
}

/// The person's units (lb, mi, kJ, °F, mmol/L) and Apple's fractions come out in vitals' units.
#[tokio::test(flavor = "multi_thread")]
async fn the_persons_units_become_vitals_units() {
    let p = plan(true);
    let path = write_zip(&p, "units", "export.xml");
    let s = server(&path).await;
    let day = ago(4);
    let q = |c: &'static str| query(&s, c, json!({"start": ds(day), "end": ds(day)}));
    let body = rows(&q("body").await);
    let w = body[0]["weight_kg"].as_f64().unwrap();
    assert!((70.0..72.0).contains(&w), "pounds read as kg: {w}");
    let fat = body[0]["body_fat_pct"].as_f64().unwrap();
    assert!((18.0..21.0).contains(&fat), "a fraction read as %: {fat}");
    let spo2 = rows(&q("spo2").await)[0]["spo2_pct"].as_f64().unwrap();
    assert!((94.0..=99.0).contains(&spo2), "SpO2 in %: {spo2}");
    let temp = rows(&q("wrist_temperature").await)[0]["wrist_temp_c"].as_f64().unwrap();
    assert!((35.5..37.5).contains(&temp), "°F read as °C: {temp}");
    let glucose = rows(&q("blood_glucose").await)[0]["glucose_mg_dl"].as_f64().unwrap();
    assert!((93.0..95.0).contains(&glucose), "mmol/L read as mg/dL: {glucose}");
    let act = by_day(&rows(&q("activity").await), day)[0].clone();
    let steps: u32 = (8..22).map(|h| generate::watch_steps(day, h)).sum();
    let km = act["distance_km"].as_f64().unwrap();
    assert!((km - f64::from(steps) * 0.0008).abs() < 0.05, "miles read as km: {km} for {steps} steps");
    let kcal = act["active_kcal"].as_f64().unwrap();
    assert!((kcal - f64::from(steps) * 0.04).abs() < 2.0, "kJ read as kcal: {kcal}");
    let run = rows(&q("workout").await);
    if let Some(r) = run.first() {
        assert!(r["distance_km"].as_f64().unwrap() >= 7.0, "a workout's miles as km: {r}");
    }
    s.close().await;
}

/// Days abroad are the days where the person was: a night and a run recorded in Paris carry
/// `HKTimeZone`, and are filed by it, not by the exporting phone's offset.
#[tokio::test(flavor = "multi_thread")]
async fn a_trip_files_each_record_by_its_own_zone() {
    let p = plan(false);
    let path = write_zip(&p, "travel", "export.xml");
    let s = server(&path).await;
    let (first, last) = (p.first, p.first.checked_add(jiff::ToSpan::days(9)).unwrap());
    let w = rows(&query(&s, "workout", json!({"start": ds(first), "end": ds(last)})).await);
    for i in 0..10i64 {
        let d = first.checked_add(jiff::ToSpan::days(i)).unwrap();
        if !generate::runs_on(d) {
            continue;
        }
        let run: Vec<&Value> = w.iter().filter(|r| r["day"] == d.to_string()).collect();
        assert_eq!(run.len(), 1, "the run of {d} is filed on {d}: {w:?}");
        let start = run[0]["start"].as_str().unwrap();
        assert!(start.contains("T07:30:00"), "the run's start is its local time: {start}");
        if (6..8).contains(&i) {
            assert!(start.ends_with("+01:00") || start.ends_with("+02:00"), "in Paris: {start}");
        }
    }
    let nights = rows(&query(&s, "sleep", json!({"start": ds(first.checked_add(jiff::ToSpan::days(1)).unwrap()), "end": ds(last)})).await);
    let watch: Vec<&Value> = nights.iter().filter(|n| n["source"] == WATCH).collect();
    assert_eq!(watch.len(), 9, "one Watch night a wake-up day: {nights:?}");
    s.close().await;
}

/// One night per source, Oura's copy marked as Oura's; vitals_daily shows the Watch's night
/// (never Oura's copy as Apple Health's); HRV is SDNN and never in the RMSSD column.
#[tokio::test(flavor = "multi_thread")]
async fn nights_per_source_another_providers_copy_marked_and_hrv_is_sdnn() {
    let p = plan(false);
    let path = write_zip(&p, "sleep", "export.xml");
    let s = server(&path).await;
    let day = ago(2);
    let nights = rows(&query(&s, "sleep", json!({"start": ds(day), "end": ds(day)})).await);
    assert_eq!(nights.len(), 2, "the Watch's night and the Oura app's: {nights:?}");
    let oura = nights.iter().find(|n| n["source"] == OURA_APP).unwrap();
    assert_eq!(oura["origin"], "oura", "{oura}");
    let watch = nights.iter().find(|n| n["source"] == WATCH).unwrap();
    assert_eq!(watch["origin"], "health");
    assert_eq!(watch["asleep_min"].as_f64(), Some(410.0), "core + deep + REM: {watch}");
    assert_eq!(watch["deep_min"].as_f64(), Some(60.0));
    let hrv = rows(&query(&s, "hrv", json!({"start": ds(day), "end": ds(day)})).await);
    assert!(hrv[0]["sdnn_ms"].as_f64().is_some(), "{hrv:?}");
    let d = s.ok("vitals_daily", json!({"start": ds(day), "end": ds(day)})).await;
    let row = &d["rows"][0];
    let sleep = &row["sleep_total_min"];
    let apple: Vec<&Value> = std::iter::once(sleep)
        .chain(sleep["also"].as_array().into_iter().flatten())
        .filter(|v| v["from"].as_str().unwrap_or("").starts_with("apple_health"))
        .collect();
    assert_eq!(apple.len(), 1, "Apple Health's night once: {sleep}");
    assert_eq!(apple[0]["value"].as_f64(), Some(410.0), "the Watch's night, not Oura's copy: {sleep}");
    assert!(!row["hrv_ms"].to_string().contains("apple_health"), "SDNN is never in the RMSSD column: {}", row["hrv_ms"]);
    s.close().await;
}

/// Duplicates and records ending before they start are dropped and counted; vitals_check says
/// the file, its export date and what was read.
#[tokio::test(flavor = "multi_thread")]
async fn duplicates_and_backward_records_are_dropped_counted_and_said() {
    let mut p = plan(false);
    p.hr_per_day = 48;
    // No trip: the hours of a travel day overlap the day before's, as exact duplicates of their own.
    p.travel = None;
    let path = write_zip(&p, "dups", "export.xml");
    let s = server(&path).await;
    let day = ago(5);
    let hr = query(&s, "heart_rate", json!({"start": ds(day), "end": ds(day), "tz": "America/Chicago"})).await;
    assert_eq!(rows(&hr).len(), 48, "the duplicate sample once: {}", rows(&hr).len());
    let a = query(&s, "activity", json!({"start": ds(day), "end": ds(day)})).await;
    let said = a["notices"].to_string();
    assert!(said.contains("10 exact duplicates") && said.contains("10 records ending before they start"), "{said}");
    let check = s.ok("vitals_check", json!({})).await.to_string();
    assert!(check.contains(&path.display().to_string()) && check.contains("exported") && check.contains("records read at"), "{check:.2000}");
    s.close().await;
}

/// A localised XML name and iOS 16's broken DTD read; a damaged zip, a cut XML and a file that
/// is no export each say so, naming the file.
#[tokio::test(flavor = "multi_thread")]
async fn a_localised_name_and_a_broken_dtd_read_and_damaged_files_are_said() {
    let mut p = plan(false);
    p.broken_dtd = true;
    let path = write_zip(&p, "zh", "导出.xml");
    let s = server(&path).await;
    let a = query(&s, "activity", json!({"start": ds(ago(3)), "end": ds(ago(3))})).await;
    assert_eq!(rows(&a).len(), 1, "{a}");
    s.close().await;
    // A damaged zip: the end of the file gone (the central directory with it).
    let bytes = std::fs::read(&path).unwrap();
    let damaged = scratch().join(format!("apple-health-{}-damaged.zip", std::process::id()));
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();
    // A cut XML: half an export.xml.
    let mut xml = vec![];
    generate::write_xml(&p, &mut xml).unwrap();
    let cut = scratch().join(format!("apple-health-{}-cut.xml", std::process::id()));
    std::fs::write(&cut, &xml[..xml.len() / 2]).unwrap();
    let whole = scratch().join(format!("apple-health-{}-whole.xml", std::process::id()));
    std::fs::write(&whole, &xml).unwrap();
    let other = scratch().join(format!("apple-health-{}-notes.txt", std::process::id()));
    std::fs::write(&other, "shopping list").unwrap();
    for (file, says) in [(&damaged, "damaged zip"), (&cut, "was cut"), (&other, "not an Apple Health export")] {
        let s = server(file).await;
        let e = s.err("vitals_query", json!({"collection": "apple_health.activity", "start": ds(ago(3)), "end": ds(ago(3))})).await;
        assert!(e.contains(&file.display().to_string()) && e.contains(says), "{says}: {e}");
        s.close().await;
    }
    let s = server(&whole).await;
    let a = query(&s, "activity", json!({"start": ds(ago(3)), "end": ds(ago(3))})).await;
    assert_eq!(rows(&a).len(), 1, "a bare export.xml reads too: {a}");
    s.close().await;
}

/// Without a file, the built-in sample person answers, labelled as sample data.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_file_the_sample_is_labelled() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let a = query(&s, "activity", json!({"start": ds(ago(3)), "end": ds(ago(1))})).await;
    assert_eq!(a["synthetic"], true, "{a:.400}");
    assert_eq!(rows(&a).len(), 3);
    let raw = query(&s, "record", json!({"day": ds(ago(2)), "fields": ["type", "value"]})).await;
    assert!(rows(&raw).iter().any(|r| r["type"] == "HKCategoryTypeIdentifierMindfulSession"), "any type is reachable raw");
    s.close().await;
}

/// `vitals_today`, `vitals_daily` and the analyses read Apple Health like any provider, and a
/// workout's route is written from the GPX inside the zip where the person asks.
#[tokio::test(flavor = "multi_thread")]
async fn today_daily_the_analyses_and_a_routes_export_read_the_export() {
    let p = plan(false);
    let path = write_zip(&p, "today", "export.xml");
    let s = server(&path).await;
    let t = s.ok("vitals_today", json!({"days": 3})).await;
    let apple = t["providers"].as_array().unwrap().iter().find(|x| x["provider"] == "apple-health").expect("an Apple Health section").clone();
    assert_eq!(apple["synthetic"], false, "{apple}");
    let roles: Vec<&str> = apple["sections"].as_array().unwrap().iter().filter_map(|x| x["role"].as_str()).collect();
    assert_eq!(roles, ["sleep", "activity", "workouts"], "{apple}");
    let d = s.ok("vitals_daily", json!({"start": ds(ago(4)), "end": ds(ago(2))})).await;
    let steps = &d["rows"][0]["steps"];
    assert!(steps["from"].as_str().unwrap_or("").starts_with("apple_health.activity"), "{steps}");
    let tr = s.ok("vitals_trend", json!({"metric": "apple_health.activity.steps", "start": ds(ago(9)), "end": ds(ago(1))})).await;
    assert!(tr.to_string().contains("sources merged by priority"), "the day's rule is said: {tr:.600}");
    let w = rows(&query(&s, "workout", json!({"start": ds(ago(9)), "end": ds(ago(1))})).await);
    let run = w.iter().find(|r| r["route"] == true).expect("a run with its route");
    let out = scratch().join(format!("apple-health-{}-route.gpx", std::process::id()));
    let _ = std::fs::remove_file(&out);
    s.ok("vitals_export", json!({"provider": "apple-health", "id": run["id"], "format": "gpx", "path": out.display().to_string()})).await;
    let gpx = std::fs::read_to_string(&out).unwrap();
    assert!(gpx.contains("<trkpt") && gpx.contains("Apple Health Export"), "the route as the zip holds it: {gpx:.300}");
    s.close().await;
}

/// The reader never panics on a damaged export: an export cut at many places and byte-flipped
/// many times is read or refused in words naming the file.
#[test]
fn the_reader_survives_cut_and_damaged_exports() {
    use vitals::providers::apple_health::read;
    let mut p = Plan::new(date("2026-03-01"), 2, "Europe/Paris");
    p.hr_per_day = 24;
    let mut xml = vec![];
    generate::write_xml(&p, &mut xml).unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut read_ok, mut refused) = (0, 0);
    for k in 0..300 {
        let mut body = xml.clone();
        if k % 2 == 0 {
            body.truncate((next() as usize) % body.len());
        } else {
            for _ in 0..(1 + next() % 8) {
                let i = (next() as usize) % body.len();
                body[i] = next() as u8;
            }
        }
        match std::panic::catch_unwind(|| read::read_xml(std::io::Cursor::new(body), "damaged.xml")) {
            Ok(Ok(_)) => read_ok += 1,
            Ok(Err(e)) => {
                assert!(e.to_string().starts_with("damaged.xml"), "{e}");
                refused += 1;
            }
            Err(_) => panic!("the reader panicked on damaged export {k}"),
        }
    }
    assert!(refused > 100 && read_ok + refused == 300, "{refused} refused, {read_ok} read");
}

/// Three nights of one morning (the Watch's, a sleep app's longer one over it, Oura's copy): one
/// counts, by priority, never their sum; each says whether it counts and why not; vitals_daily
/// takes the one that counts. The person's order for sleep alone puts the sleep app first, while
/// steps still count the Watch first; a type the setting does not know is said, naming it.
#[tokio::test(flavor = "multi_thread")]
async fn overlapping_nights_count_by_priority_and_the_person_can_order_sleep_alone() {
    let mut p = plan(false);
    p.sleep_app = true;
    let path = write_zip(&p, "nights", "export.xml");
    let day = ago(2);
    let counts = |nights: &[Value], src: &str| nights.iter().find(|n| n["source"] == src).map(|n| n["counts"].as_str().unwrap_or("").to_string()).unwrap();
    let s = server(&path).await;
    let a = query(&s, "sleep", json!({"start": ds(day), "end": ds(day)})).await;
    let nights = rows(&a);
    assert_eq!(nights.len(), 3, "{nights:?}");
    assert_eq!(counts(&nights, WATCH), "yes", "the Watch first by default: {nights:?}");
    assert!(counts(&nights, SLEEP_APP).contains(&format!("overlaps {WATCH}")), "{nights:?}");
    assert!(counts(&nights, OURA_APP).starts_with("no: a copy"), "{nights:?}");
    assert!(a["notices"].to_string().contains("Which night counts"), "the rule is said: {}", a["notices"]);
    let d = s.ok("vitals_daily", json!({"start": ds(day), "end": ds(day)})).await;
    let apple = apple_values(&d["rows"][0]["sleep_total_min"]);
    assert_eq!(apple.len(), 1, "{apple:?}");
    assert_eq!(apple[0]["value"].as_f64(), Some(410.0), "the Watch's night, not the longer overlapping one nor a sum: {apple:?}");
    s.close().await;

    let s = server_with(&path, &[("VITALS_APPLE_HEALTH_PRIORITY", &format!("sleep={SLEEP_APP}"))]).await;
    let a = query(&s, "sleep", json!({"start": ds(day), "end": ds(day)})).await;
    let nights = rows(&a);
    assert_eq!(counts(&nights, SLEEP_APP), "yes", "{nights:?}");
    assert!(counts(&nights, WATCH).contains(&format!("overlaps {SLEEP_APP}")), "{nights:?}");
    assert!(a["notices"].to_string().contains(&format!("for sleep: {SLEEP_APP}")), "{}", a["notices"]);
    let d = s.ok("vitals_daily", json!({"start": ds(day), "end": ds(day)})).await;
    let apple = apple_values(&d["rows"][0]["sleep_total_min"]);
    assert_eq!(apple[0]["value"].as_f64(), Some(SLEEP_APP_ASLEEP_MIN as f64), "the sleep app's night: {apple:?}");
    let act = by_day(&rows(&query(&s, "activity", json!({"start": ds(day), "end": ds(day)})).await), day)[0].clone();
    let watch: u32 = (8..22).map(|h| generate::watch_steps(day, h)).sum();
    assert_eq!(act["steps"].as_f64(), Some(f64::from(watch + 400)), "steps still count the Watch first: {act}");
    s.close().await;

    let s = server_with(&path, &[("VITALS_APPLE_HEALTH_PRIORITY", "naps=AutoSleep")]).await;
    let e = s.err("vitals_query", json!({"collection": "apple_health.sleep", "start": ds(day), "end": ds(day)})).await;
    assert!(e.contains("VITALS_APPLE_HEALTH_PRIORITY") && e.contains("\"naps\""), "{e}");
    s.close().await;
}

/// Weigh-ins and blood pressures another connected provider's app (Withings' Health Mate) wrote
/// into Health are marked as its copies and never stand in vitals_daily as Apple Health's.
#[tokio::test(flavor = "multi_thread")]
async fn another_providers_weigh_ins_and_blood_pressures_are_copies_kept_out_of_the_daily_view() {
    let mut p = plan(false);
    p.cuff = SCALE_APP;
    let path = write_zip(&p, "copies", "export.xml");
    let s = server(&path).await;
    let (first, last) = (ago(10), ago(1));
    let bp = rows(&query(&s, "blood_pressure", json!({"start": ds(first), "end": ds(last)})).await);
    assert!(!bp.is_empty() && bp.iter().all(|r| r["origin"] == "withings"), "marked as Withings' copies: {bp:?}");
    let body = rows(&query(&s, "body", json!({"start": ds(first), "end": ds(last)})).await);
    assert!(!body.is_empty() && body.iter().all(|r| r["origin"] == "withings"), "{body:?}");
    let d = s.ok("vitals_daily", json!({"start": ds(first), "end": ds(last)})).await;
    for row in d["rows"].as_array().unwrap() {
        for cell in ["weight_kg", "body_fat_pct", "systolic_mmhg", "diastolic_mmhg"] {
            assert!(apple_values(&row[cell]).is_empty(), "a copy never shown as Apple Health's: {cell} {}", row[cell]);
        }
    }
    s.close().await;
}

/// The raw collection reads one record type by its identifier; an unknown one is an error naming
/// the parameter and the close identifiers the export holds.
#[tokio::test(flavor = "multi_thread")]
async fn the_raw_records_of_one_type_and_an_unknown_type_named_with_close_ones() {
    let path = write_zip(&plan(false), "raw", "export.xml");
    let s = server(&path).await;
    let day = ago(3);
    let steps = "HKQuantityTypeIdentifierStepCount";
    let a = query(&s, "record", json!({"day": ds(day), "options": {"type": steps}})).await;
    let r = rows(&a);
    assert!(!r.is_empty() && r.iter().all(|x| x["type"] == steps), "{r:?}");
    let e = s.err("vitals_query", json!({"collection": "apple_health.record", "day": ds(day), "options": {"type": "HKQuantityTypeIdentifierStepCont"}})).await;
    assert!(e.contains("options.type") && e.contains(steps), "{e}");
    let e = s.err("vitals_query", json!({"collection": "apple_health.record", "day": ds(day), "options": {"type": 7}})).await;
    assert!(e.contains("options.type"), "{e}");
    s.close().await;
}

/// A new export written over the chosen file between two calls is read again: the second answer
/// is the new file's (never the old one's from memory) and says the file was read again.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_changes_is_read_again() {
    let mut p = plan(false);
    let path = write_zip(&p, "rewrite", "export.xml");
    let s = server(&path).await;
    let day = ago(5);
    let ask = json!({"start": ds(day), "end": ds(day), "tz": "America/Chicago"});
    let before = query(&s, "heart_rate", ask.clone()).await;
    assert_eq!(rows(&before).len(), 96, "{}", rows(&before).len());
    p.hr_per_day = 48;
    let tmp = path.with_extension("new");
    generate::write_zip(&p, "export.xml", std::fs::File::create(&tmp).unwrap()).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let after = query(&s, "heart_rate", ask).await;
    assert_eq!(rows(&after).len(), 48, "the new file's samples: {}", rows(&after).len());
    assert!(after["notices"].to_string().contains("was read again"), "{}", after["notices"]);
    s.close().await;
}

/// A call that arrives while the export is still being read (its read stretched to a minute by
/// the tests' setting) reports how much is read to a client that gave a `progressToken`, rising,
/// and past its time budget answers what is complete (nothing yet) with `continue_from`, saying
/// the file is still being read.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_before_the_index_is_ready_reports_progress_and_is_cut_in_time() {
    use rmcp::model::CallToolRequestParams;
    let path = write_zip(&plan(false), "slow", "export.xml");
    let twin = twin().await;
    let seen = Progressed::default();
    let file = path.display().to_string();
    let env = [
        ("VITALS_APPLE_HEALTH_FILE", file.as_str()),
        ("VITALS_TZ", "America/Chicago"),
        ("VITALS_APPLE_HEALTH_TEST_READ_S", "60"),
        ("VITALS_CALL_BUDGET_S", "3"),
    ];
    let s = connect_as(&twin, true, &env, rmcp::service::ClientLifecycleMode::Initialize, seen.clone()).await;
    let (start, end) = (ds(ago(5)), ds(ago(2)));
    let args = json!({"collection": "apple_health.activity", "start": start, "end": end, "format": "records"});
    let mut params = CallToolRequestParams::new("vitals_query").with_arguments(args.as_object().unwrap().clone());
    params.meta = Some(serde_json::from_value(json!({"progressToken": "apple-1"})).unwrap());
    let r = s.client.call_tool(params).await.unwrap();
    let a = r.structured_content.expect("an answer, not an error");
    let t = &a["notices"]["truncated"];
    assert_eq!(t["cause"], "time_budget", "{t}");
    assert_eq!(t["continue_from"], start, "nothing complete yet: {t}");
    assert!(a["notices"].to_string().contains("was still being read"), "{}", a["notices"]);
    let got = seen.0.lock().unwrap().clone();
    assert!(!got.is_empty(), "progress while the file is read");
    assert!(got.windows(2).all(|w| w[1].0 > w[0].0), "progress rises: {got:?}");
    assert!(got.iter().all(|g| g.2.contains("apple_health.activity: waiting for the Apple Health export") && g.2.contains("% so far")), "{got:?}");
    s.close().await;
}
