//! Withings end to end: a real MCP client drives `vitals-mcp`, logged in at the twin's Withings.
//! Oracles come from the raw groups and rows the twin holds (the sample person), read here.
use crate::common;
use common::*;
use serde_json::{json, Value};
use vitals::providers::withings::sample;
use vitals_twin::withings::WithingsFaults;

const MONTH: (&str, &str) = ("2026-06-01", "2026-06-30");

/// A twin, a Withings login it issued, and a server reading with that login.
async fn connected(tag: &str) -> (Twin, WithingsLogin, Session) {
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, tag);
    let s = login.server(&twin, &[]).await;
    (twin, login, s)
}

fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

fn has_type(g: &Value, t: i64) -> bool {
    g["measures"].as_array().unwrap().iter().any(|m| m["type"] == t)
}

fn manual(g: &Value) -> bool {
    g["deviceid"].is_null() || matches!(g["attrib"].as_i64(), Some(2 | 4))
}

/// The decimal Withings means by (value, unit), written out with integer arithmetic.
fn exact(value: i64, unit: i64) -> String {
    if unit >= 0 {
        return (value * 10i64.pow(unit as u32)).to_string();
    }
    let p = 10i64.pow((-unit) as u32);
    let frac = format!("{:0width$}", value % p, width = (-unit) as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        (value / p).to_string()
    } else {
        format!("{}.{frac}", value / p)
    }
}

fn weight_of(g: &Value) -> String {
    let m = g["measures"].as_array().unwrap().iter().find(|m| m["type"] == 1).unwrap();
    exact(m["value"].as_i64().unwrap(), m["unit"].as_i64().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn measurements_are_one_row_per_weigh_in_over_a_month_and_a_day() {
    let (twin, _login, s) = connected("meas").await;
    let raw = withings_groups(&twin, MONTH.0, MONTH.1);
    // Every step-on weighs: a weigh-in starts at each device group with a weight; the groups
    // without one (pulse, pulse wave velocity) belong to the weigh-in they were stored with.
    let starts: Vec<&Value> = raw.iter().filter(|g| !manual(g) && has_type(g, 1)).collect();
    let scale_groups = raw.iter().filter(|g| !manual(g) && !has_type(g, 9) && !has_type(g, 10)).count();

    let a = s.ok("vitals_query", json!({"collection": "withings.measurements", "start": MONTH.0, "end": MONTH.1, "max_chars": 2_000_000})).await;
    let rows = records(&a["data"]);
    assert_eq!(ids(&rows), starts.iter().map(|g| g["grpid"].to_string()).collect::<Vec<_>>());
    assert!(a["pages"].as_u64().unwrap() > 2, "getmeas was paged (25 groups a page): {}", a["pages"]);
    let merged: u64 = rows.iter().map(|r| r["groups"].as_u64().unwrap()).sum();
    assert_eq!(merged as usize, scale_groups, "every scale group is in exactly one weigh-in");
    for (r, g) in rows.iter().zip(&starts) {
        assert_eq!(r["weight_kg"].to_string(), weight_of(g), "decoded with the group's own exponent: {g}");
    }
    let rules = a["notices"]["rules"].to_string();
    assert!(rules.contains("merged into") && rules.contains("typed in by hand in the Withings app were left out"), "{rules}");
    assert!(a["synthetic"] == false && a["notices"].get("synthetic").is_none());

    // One day: exactly that day's weigh-ins.
    let day = "2026-06-10";
    let d = s.ok("vitals_query", json!({"collection": "withings.measurements", "day": day})).await;
    let want: Vec<String> = withings_groups(&twin, day, day).iter().filter(|g| !manual(g) && has_type(g, 1)).map(|g| g["grpid"].to_string()).collect();
    assert!(!want.is_empty());
    assert_eq!(ids(&records(&d["data"])), want);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_metric_the_scale_did_not_measure_is_null_and_manual_entries_are_opt_in() {
    let (twin, _login, s) = connected("null").await;
    let a = s
        .ok("vitals_query", json!({"collection": "withings.measurements", "start": MONTH.0, "end": MONTH.1, "format": "records", "max_chars": 2_000_000}))
        .await;
    let rows = a["data"].as_array().unwrap().clone();
    let cardio: Vec<&Value> = rows.iter().filter(|r| r["device_model"] == "Body Cardio" && r["ambiguous"] == false).collect();
    let scan: Vec<&Value> = rows.iter().filter(|r| r["device_model"] == "Body Scan").collect();
    assert!(!cardio.is_empty() && !scan.is_empty(), "the month has both scales");
    for r in &cardio {
        assert_eq!(r["groups"], 3, "composition + pulse + PWV groups are one weigh-in: {r}");
        assert!(r["pulse_wave_velocity_m_s"].is_number() && r["standing_heart_rate_bpm"].is_number(), "{r}");
        for f in ["bmr_kcal", "visceral_fat_index", "metabolic_age_years", "extracellular_water_kg"] {
            assert!(r[f].is_null(), "a Body Cardio does not measure {f}: null, never 0: {r}");
        }
    }
    for r in &scan {
        assert!(r["bmr_kcal"].is_number() && r["visceral_fat_index"].is_number(), "{r}");
        assert!(r["pulse_wave_velocity_m_s"].is_null() && r["standing_heart_rate_bpm"].is_null(), "{r}");
    }
    assert!(rows.iter().any(|r| r["ambiguous"] == true), "a guest on the scale is its own row, flagged");
    assert!(rows.iter().all(|r| r["source"] == "device"));

    let m = s
        .ok(
            "vitals_query",
            json!({"collection": "withings.measurements", "start": MONTH.0, "end": MONTH.1, "format": "records",
        "max_chars": 2_000_000, "options": {"include_manual": true}}),
        )
        .await;
    let by_hand: Vec<&Value> = m["data"].as_array().unwrap().iter().filter(|r| r["source"] == "manual").collect();
    let want = withings_groups(&twin, MONTH.0, MONTH.1).iter().filter(|g| manual(g)).count();
    assert_eq!(by_hand.len(), want);
    assert!(by_hand.iter().all(|r| r["weight_kg"].is_number() && r["fat_ratio_pct"].is_null() && r["device_model"].is_null()));
    assert_eq!(m["data"].as_array().unwrap().len(), rows.len() + want);

    let e = s.err("vitals_query", json!({"collection": "withings.measurements", "day": "2026-06-10", "options": {"include_manul": true}})).await;
    assert!(e.contains("`options`") && e.contains("include_manual"), "{e}");
    let e = s.err("vitals_query", json!({"collection": "withings.measurements", "day": "2026-06-10", "options": {"include_manual": "yes"}})).await;
    assert!(e.contains("`options.include_manual` must be true or false"), "{e}");
    let e = s.err("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10", "options": {"include_manual": true}})).await;
    assert!(e.contains("has no options"), "{e}");
    s.close().await;
}

/// A weigh-in another person may have made, or one typed in by hand, keeps its flag whatever
/// `fields` asks (a guest's 58 kg is never a bare number beside the user's 73), and the notice
/// counts the flagged rows of the answer as sent, naming the field and value that find them.
#[tokio::test(flavor = "multi_thread")]
async fn flags_stay_on_their_rows_whatever_fields_asks_and_are_counted_as_sent() {
    let (_twin, _login, s) = connected("flags").await;
    let ask = |extra: Value| {
        let mut a = json!({"collection": "withings.measurements", "start": MONTH.0, "end": MONTH.1, "format": "records", "max_chars": 2_000_000});
        a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        s.ok("vitals_query", a)
    };
    let whole = ask(json!({"options": {"include_manual": true}})).await;
    let picked = ask(json!({"options": {"include_manual": true}, "fields": ["weight_kg"]})).await;
    let (whole, rows) = (whole["data"].as_array().unwrap().clone(), picked["data"].as_array().unwrap().clone());
    assert_eq!(rows.len(), whole.len());
    let flagged = |rows: &[Value], k: &str, v: Value| -> Vec<String> { rows.iter().filter(|r| r[k] == v).map(|r| r["id"].to_string()).collect() };
    let guests = flagged(&whole, "ambiguous", json!(true));
    let typed = flagged(&whole, "source", json!("manual"));
    assert!(!guests.is_empty() && !typed.is_empty(), "the month has a guest's weigh-ins and entries typed in by hand");
    for r in &rows {
        assert!(r["weight_kg"].is_number() && r["ambiguous"].is_boolean() && r["source"].is_string(), "the flags stay beside the asked field: {r}");
    }
    assert_eq!(flagged(&rows, "ambiguous", json!(true)), guests);
    assert_eq!(flagged(&rows, "source", json!("manual")), typed);
    let said = picked["notices"]["flagged"].as_str().unwrap_or_default();
    assert!(said.contains(&format!("{} row(s) ambiguous=true: ", guests.len())), "{}", picked["notices"]);
    assert!(said.contains(&format!("{} row(s) source=\"manual\": ", typed.len())), "{}", picked["notices"]);
    assert!(!picked["notices"]["rules"].to_string().contains("ambiguous"), "said once: {}", picked["notices"]);

    // An answer cut by max_chars counts the flagged rows it holds, not those of the days it left out.
    let first = whole.iter().find(|r| r["ambiguous"] == true).unwrap()["time"].as_str().unwrap()[..10].to_string();
    let span = json!({"start": first, "end": "2026-09-30", "fields": ["weight_kg"]});
    let all = ask(span.clone()).await;
    let mut small = span.clone();
    small["max_chars"] = json!(5_000);
    let cut = ask(small).await;
    assert_eq!(cut["notices"]["truncated"]["cause"], "max_chars", "{}", cut["notices"]);
    let held = flagged(cut["data"].as_array().unwrap(), "ambiguous", json!(true)).len();
    assert!(held >= 1 && held < flagged(all["data"].as_array().unwrap(), "ambiguous", json!(true)).len(), "{held}");
    assert!(cut["notices"]["flagged"].as_str().unwrap().starts_with(&format!("{held} row(s) ambiguous=true")), "{}", cut["notices"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn blood_pressure_activity_sleep_workouts_intraday_and_devices_over_a_range_and_a_day() {
    let (twin, _login, s) = connected("all").await;
    let person = twin.state.withings.lock().unwrap().cfg.person.clone();
    let days: Vec<jiff::civil::Date> = {
        let mut v = vec![];
        let mut d = date(MONTH.0);
        while d <= date(MONTH.1) {
            v.push(d);
            d = d.tomorrow().unwrap();
        }
        v
    };

    // Blood pressure: one row per cuff reading, with its own exponent.
    let bp = s.ok("vitals_query", json!({"collection": "withings.blood_pressure", "start": MONTH.0, "end": MONTH.1, "format": "records"})).await;
    let cuff: Vec<Value> = withings_groups(&twin, MONTH.0, MONTH.1).into_iter().filter(|g| has_type(g, 10)).collect();
    let rows = bp["data"].as_array().unwrap();
    assert_eq!(ids(rows), cuff.iter().map(|g| g["grpid"].to_string()).collect::<Vec<_>>());
    for (r, g) in rows.iter().zip(&cuff) {
        let sys = g["measures"].as_array().unwrap().iter().find(|m| m["type"] == 10).unwrap();
        assert_eq!(r["systolic_mmhg"].to_string(), exact(sys["value"].as_i64().unwrap(), sys["unit"].as_i64().unwrap()));
        assert!(r["diastolic_mmhg"].is_number() && r["pulse_bpm"].is_number());
    }
    assert!(bp["notices"]["rules"].to_string().contains("pulse-only"), "scale pulses are said, not silently dropped");

    // Activity: one row per day; heart rate null (never 0) on the days the phone was the source.
    let act = s.ok("vitals_query", json!({"collection": "withings.activity", "start": MONTH.0, "end": MONTH.1, "format": "records"})).await;
    let rows = act["data"].as_array().unwrap();
    assert_eq!(rows.iter().map(|r| r["day"].as_str().unwrap().to_string()).collect::<Vec<_>>(), days.iter().map(|d| d.to_string()).collect::<Vec<_>>());
    for (r, d) in rows.iter().zip(&days) {
        let raw = sample::activity_of_day(&person, *d, jiff::Timestamp::now());
        assert_eq!(r["steps"], raw["steps"]);
        // A source without a heart-rate sensor sends no field or zeros: both are null here.
        let measured_hr = raw.get("hr_average").and_then(Value::as_f64).is_some_and(|x| x > 0.0);
        assert_eq!(r["hr_average_bpm"].is_null(), !measured_hr, "{r}");
        assert_eq!(r["moderate_min"].as_f64().unwrap(), (raw["moderate"].as_f64().unwrap() / 60.0 * 100.0).round() / 100.0);
    }
    assert!(rows.iter().any(|r| r["hr_average_bpm"].is_null()) && rows.iter().any(|r| r["hr_average_bpm"].is_number()));
    let one = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10", "format": "records"})).await;
    assert_eq!(one["data"].as_array().unwrap().len(), 1);

    // Sleep: one row per night, labelled with the day it ends.
    let sl = s.ok("vitals_query", json!({"collection": "withings.sleep", "start": MONTH.0, "end": MONTH.1, "format": "records"})).await;
    let want: Vec<String> = days.iter().filter_map(|d| sample::night_ending(&person, *d)).map(|n| n["date"].as_str().unwrap().to_string()).collect();
    let got: Vec<String> = sl["data"].as_array().unwrap().iter().map(|r| r["day"].as_str().unwrap().to_string()).collect();
    assert_eq!(got, want);
    assert!(want.len() < days.len(), "a night is missing now and then, and stays missing");
    let night = &sl["data"][0];
    assert!(night["start"].as_str().unwrap() < night["end"].as_str().unwrap() && night["end"].as_str().unwrap().starts_with(night["day"].as_str().unwrap()));
    assert!(night["efficiency_pct"].as_f64().unwrap() > 50.0 && night["score"].is_number() && night["hr_average_bpm"].is_number());

    // Workouts.
    let wo = s.ok("vitals_query", json!({"collection": "withings.workouts", "start": MONTH.0, "end": MONTH.1, "format": "records"})).await;
    let want: Vec<String> = days.iter().flat_map(|d| sample::workouts_of_day(&person, *d)).map(|w| w["id"].to_string()).collect();
    assert_eq!(ids(wo["data"].as_array().unwrap()), want);
    assert!(wo["data"].as_array().unwrap().iter().all(|w| w["category"].is_string() && w["duration_min"].as_f64().unwrap() >= 30.0));

    // Intraday: the local day's samples, cut into 24-hour requests on a fixed grid.
    let it = s
        .ok("vitals_query", json!({"collection": "withings.intraday", "start": "2026-06-10", "end": "2026-06-12", "format": "records", "max_chars": 2_000_000}))
        .await;
    let rows = it["data"].as_array().unwrap();
    assert_eq!(rows.len(), 3 * 288, "a sample every 5 minutes for three local days");
    assert_eq!(rows[0]["timestamp"], "2026-06-10T06:00:00+00:00", "local midnight at -06:00");
    assert!(it["notices"].get("truncated").is_none());

    // Devices: no serial numbers or device ids anywhere.
    let dv = s.call_raw("vitals_query", json!({"collection": "withings.devices", "format": "records"})).await;
    let text = format!("{dv:?}");
    assert!(!text.contains("cafe"), "a device id leaked");
    let dv = dv.structured_content.unwrap();
    let devices = dv["data"].as_array().unwrap();
    assert_eq!(devices.len(), 4);
    assert!(devices.iter().any(|d| d["battery"] == "unknown" && d["first_sync"].is_null()));
    s.close().await;
}

/// The minutes Withings' seconds `k` of a raw night make, as the answer rounds them.
fn min_of(raw: &Value, k: &str) -> f64 {
    (raw["data"][k].as_f64().unwrap() / 60.0 * 100.0).round() / 100.0
}

/// Issue 48: nights in Withings' older sleep summary format carry `durationtosleep` and no
/// `sleep_latency` or `total_sleep_time`. The latency is the older field; the total is light +
/// deep + REM, said as computed by vitals wherever it is read: a query, the daily view, an
/// analysis, the day's report.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_sleep_summary_has_its_latency_and_a_total_said_as_computed() {
    let twin = twin().await;
    twin.withings(|w| w.cfg.person.older_sleep_before = Some(ago(-2)));
    let login = WithingsLogin::new(&twin, "older");
    let s = login.server(&twin, &[]).await;
    let person = twin.state.withings.lock().unwrap().cfg.person.clone();

    let sl = records_of(&s, "withings.sleep", json!({"start": ds(ago(28)), "end": ds(ago(1))})).await;
    let rows = sl["data"].as_array().unwrap();
    assert!(rows.len() > 20, "{}", rows.len());
    for r in rows {
        let raw = sample::night_ending(&person, r["day"].as_str().unwrap().parse().unwrap()).unwrap();
        assert!(raw["data"].get("total_sleep_time").is_none() && raw["data"].get("sleep_latency").is_none(), "the older format: {raw}");
        let total = min_of(&raw, "lightsleepduration") + min_of(&raw, "deepsleepduration") + min_of(&raw, "remsleepduration");
        assert!((r["total_sleep_min"].as_f64().unwrap() - total).abs() < 0.006, "light + deep + REM: {r}");
        assert_eq!(r["latency_min"].as_f64(), Some(min_of(&raw, "durationtosleep")), "{r}");
    }
    let rules = sl["notices"]["rules"].to_string();
    assert!(rules.contains("computed by vitals, not sent by Withings") && rules.contains("older sleep summary format"), "{rules}");

    let d = s.ok("vitals_daily", json!({"start": ds(ago(7)), "end": ds(ago(1))})).await;
    let cells: Vec<&Value> = d["rows"].as_array().unwrap().iter().filter_map(|r| r.get("sleep_total_min").filter(|c| !c.is_null())).collect();
    assert!(cells.len() >= 5 && cells.iter().all(|c| c["from"] == "withings.sleep.total_sleep_min"), "{cells:?}");
    assert!(d["fetches"].to_string().contains("computed by vitals"), "the daily view says where the totals came from: {}", d["fetches"]);

    let trend = s.ok("vitals_trend", json!({"metric": "withings.sleep.total_sleep_min", "start": ds(ago(28)), "end": ds(ago(1))})).await;
    assert_eq!(trend["days"].as_u64(), Some(rows.len() as u64), "every night has its total: {trend:.600}");
    assert_eq!(trend["excluded"]["no_value"].as_u64(), Some(0), "{trend:.600}");
    assert!(trend.to_string().contains("computed by vitals"), "the analysis says it: {trend:.600}");

    let t = s.ok("vitals_today", json!({"days": 3})).await;
    let w = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "withings").expect("a Withings part");
    let sleep = w["sections"].as_array().unwrap().iter().find(|x| x["role"] == "sleep").expect("a sleep section");
    let col = |name: &str| sleep["columns"].as_array().unwrap().iter().position(|c| c == name).unwrap();
    assert!(sleep["rows"].as_array().unwrap().iter().all(|r| r[col("total_min")].is_number() && r[col("latency_min")].is_number()), "{sleep}");
    assert!(w["notices"]["rules"].as_str().unwrap().contains("computed by vitals"), "{}", w["notices"]);

    // A history that changed format: only the older nights are computed, and only they are named.
    twin.withings(|w| w.cfg.person.older_sleep_before = Some(ago(10)));
    let mix = records_of(&s, "withings.sleep", json!({"start": ds(ago(16)), "end": ds(ago(4)), "forget": true})).await;
    let rules = mix["notices"]["rules"].to_string();
    for r in mix["data"].as_array().unwrap() {
        let day = r["day"].as_str().unwrap();
        let older = day < ds(ago(10)).as_str();
        assert_eq!(rules.contains(day), older, "{day}: named only if its total was computed: {rules}");
        let raw = sample::night_ending(&twin.state.withings.lock().unwrap().cfg.person, day.parse().unwrap()).unwrap();
        if !older {
            assert_eq!(r["total_sleep_min"].as_f64(), Some(min_of(&raw, "total_sleep_time")), "Withings' own total: {r}");
        }
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_sleep_device_sleep_is_empty_with_a_sentence() {
    let twin = twin().await;
    twin.withings(|w| w.cfg.person.sleep_device = false);
    let login = WithingsLogin::new(&twin, "nosleep");
    let s = login.server(&twin, &[]).await;
    let a = s.ok("vitals_query", json!({"collection": "withings.sleep", "start": MONTH.0, "end": MONTH.1})).await;
    assert_eq!(a["count"], 0);
    let empty = a["notices"]["empty"].as_str().unwrap();
    assert!(empty.contains("sleep device") && empty.contains("withings.devices"), "{empty}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn status_601_waits_and_says_rate_limited_and_transient_faults_are_retried() {
    let (twin, _login, s) = connected("601").await;
    let clean = s.ok("vitals_query", json!({"collection": "withings.activity", "start": MONTH.0, "end": MONTH.1, "forget": true})).await;
    twin.withings(|w| w.cfg.faults = WithingsFaults { rate_limit_next: 2, ..Default::default() });
    let a = s.ok("vitals_query", json!({"collection": "withings.activity", "start": MONTH.0, "end": MONTH.1, "forget": true})).await;
    assert_eq!(a["data"], clean["data"], "complete after waiting");
    assert_eq!(a["notices"]["rate_limited"]["retries"], 2, "{}", a["notices"]);
    twin.withings(|w| w.cfg.faults = WithingsFaults { timeout_next: 1, html_502_next: 1, malformed_next: 1, ..Default::default() });
    let b = s.ok("vitals_query", json!({"collection": "withings.activity", "start": MONTH.0, "end": MONTH.1, "forget": true})).await;
    assert_eq!(b["data"], clean["data"]);
    assert!(b["notices"]["retried"].as_str().unwrap().starts_with("3 request(s)"), "{}", b["notices"]);
    // Past the retries: cut at a day boundary and said, never silently short.
    twin.withings(|w| w.cfg.faults = WithingsFaults { timeout_next: 50, ..Default::default() });
    let c = s.ok("vitals_query", json!({"collection": "withings.activity", "start": MONTH.0, "end": MONTH.1, "forget": true})).await;
    assert!(c["notices"]["truncated"]["reason"].as_str().unwrap().contains("INCOMPLETE"), "{}", c["notices"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn at_most_366_days_a_query() {
    let (_twin, _login, s) = connected("366").await;
    let e = s.err("vitals_query", json!({"collection": "withings.measurements", "start": "2025-06-01", "end": "2026-06-02"})).await;
    assert!(e.contains("367 days") && e.contains("at most 366"), "{e}");
    let a = s
        .ok("vitals_query", json!({"collection": "withings.activity", "start": "2025-06-02", "end": "2026-06-02", "format": "records", "max_chars": 2_000_000}))
        .await;
    assert_eq!(a["count"], 366);
    assert!(a["notices"].get("truncated").is_none());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_access_token_is_refreshed_and_the_rotated_pair_saved_before_use() {
    let (twin, login, s) = connected("refresh").await;
    twin.withings(|w| w.oauth.expire_access_tokens());
    let a = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10"})).await;
    assert!(a["notices"]["credential_refreshed"].is_string(), "{}", a["notices"]);
    let t = login.stored();
    assert_ne!(t.access.expose(), login.access);
    assert_ne!(t.refresh.as_ref().unwrap().expose(), login.refresh, "the rotated refresh token was saved");
    assert_eq!(t.login.as_deref(), Some("login-1"), "the same login");
    assert_eq!(twin.state.withings.lock().unwrap().oauth.log, vec![("refresh_token".to_string(), 0)]);
    // A login whose refresh token is dead asks to connect again, by name.
    twin.withings(|w| {
        w.oauth.expire_access_tokens();
        w.oauth.invalid_status = 503;
    });
    let mut dead = login.stored();
    dead.refresh = Some(vitals::secret::Secret::new("0000000000000000000000000000000000000000"));
    vitals::accounts::TokenStore::file(&login.dir).save("withings", &dead).unwrap();
    let e = s.err("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-11", "forget": true})).await;
    assert!(e.contains("vitals_connect with provider=withings") && e.contains("withings_status_503"), "{e}");
    s.close().await;
}

/// A token endpoint that is down is not a dead login: down once, the renewal is asked again and
/// the query answers; down for longer, the answer is cut like any transient fault (`continue_from`,
/// `provider_failing`), says the login may be fine and to ask again later, and does not send the
/// person to connect again.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_endpoint_that_is_down_is_asked_again_and_never_called_a_dead_login() {
    use vitals_twin::wire::{Fault, Rule};
    let (twin, login, s) = connected("down").await;
    let down = |count| vec![Rule::token(1, count, Fault::Html { status: 503 })];
    twin.withings(|w| w.oauth.expire_access_tokens());
    twin.wire(down(1));
    let a = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10"})).await;
    assert!(a["notices"]["credential_refreshed"].is_string(), "{}", a["notices"]);
    assert_eq!(twin.wire_fired(), vec![1], "the endpoint was down for the first ask");
    // A token the store holds as expired, the endpoint down: it is still sent (Withings takes it
    // here), rather than the query failing before its first request.
    let mut stale = login.stored();
    stale.expires_at = Some(jiff::Timestamp::now().as_second() - 60);
    vitals::accounts::TokenStore::file(&login.dir).save("withings", &stale).unwrap();
    twin.wire(down(100));
    let a = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-12", "forget": true})).await;
    assert!(a["notices"]["truncated"].is_null() && !a["data"].is_null(), "{}", a["notices"]);
    assert!(twin.wire_fired()[0] >= 2, "the renewal before the first request was asked, twice");
    twin.withings(|w| w.oauth.expire_access_tokens());
    twin.wire(down(100));
    let a = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-11", "forget": true})).await;
    let cut = &a["notices"]["truncated"];
    assert_eq!((cut["cause"].as_str(), cut["continue_from"].as_str()), (Some("provider_failing"), Some("2026-06-11")), "{cut}");
    let e = cut["reason"].as_str().unwrap();
    assert!(e.contains("Withings") && e.contains("HTTP 503") && e.contains("may still be good") && e.contains("ask again"), "{e}");
    assert!(!e.contains("revoked") && !e.contains("refused") && !e.contains("Connect again"), "{e}");
    twin.wire(vec![]);
    s.close().await;
}

/// A rotation the store cannot save (here the temporary file's place is taken by a folder, which
/// even root cannot write over; a full disk goes the same way): the provider has retired the saved
/// pair, so the process keeps the renewed one in memory, reads with it, and says so; once the
/// store can take it again, the next renewal is saved.
#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_that_cannot_be_saved_is_kept_in_memory_and_said() {
    let (twin, login, s) = connected("unsaved").await;
    let blocker = login.dir.join(format!(".tokens.json.{}.tmp", server_pid_for(&login.dir)));
    std::fs::create_dir_all(&blocker).unwrap();
    twin.withings(|w| w.oauth.expire_access_tokens());
    let ask = |day: &str| json!({"collection": "withings.activity", "day": day, "forget": true});
    let a = s.ok("vitals_query", ask("2026-06-10")).await;
    assert_eq!(a["count"], 1, "{a}");
    let said = a["notices"]["credential_refreshed"].as_str().unwrap_or_default().to_string();
    assert!(said.contains("could not be saved") && said.contains("kept in memory") && said.contains("vitals-mcp auth withings"), "{said}");
    assert_eq!(login.stored().access.expose(), login.access, "the saved pair is untouched (no half-written file)");
    // The next query reads with the renewed login from memory: no second refresh.
    let b = s.ok("vitals_query", ask("2026-06-11")).await;
    assert_eq!(b["count"], 1, "{b}");
    assert!(b["notices"]["credential_refreshed"].as_str().unwrap_or_default().contains("kept in memory"), "{}", b["notices"]);
    assert_eq!(twin.state.withings.lock().unwrap().oauth.log.len(), 1, "one refresh");
    // The store can take it again: the next renewal (of the pair in memory) is saved.
    std::fs::remove_dir(&blocker).unwrap();
    twin.withings(|w| w.oauth.expire_access_tokens());
    let c = s.ok("vitals_query", ask("2026-06-12")).await;
    assert_eq!(c["count"], 1, "{c}");
    let said = c["notices"]["credential_refreshed"].as_str().unwrap_or_default();
    assert!(!said.contains("kept in memory") && !said.is_empty(), "{said}");
    assert_ne!(login.stored().access.expose(), login.access, "the renewed login is saved now");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_refreshing_at_once_share_one_rotation() {
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, "two");
    let (a, b) = (login.server(&twin, &[]).await, login.server(&twin, &[]).await);
    twin.withings(|w| w.oauth.expire_access_tokens());
    let q = json!({"collection": "withings.sleep", "start": MONTH.0, "end": MONTH.1});
    let (ra, rb) = tokio::join!(a.ok("vitals_query", q.clone()), b.ok("vitals_query", q));
    assert_eq!(ra["data"], rb["data"]);
    let log = twin.state.withings.lock().unwrap().oauth.log.clone();
    assert_eq!(log, vec![("refresh_token".to_string(), 0)], "one refresh; the other process adopted its pair");
    // The pair both use is the saved one, and it works.
    let t = login.stored();
    assert!(twin.state.withings.lock().unwrap().oauth.use_access(t.access.expose(), jiff::Timestamp::now()).is_some());
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_login_the_sample_answers_offline_and_says_so() {
    let twin = twin().await;
    let b = twin.base_url();
    let s = connect(&twin, true, &[("VITALS_WITHINGS_BASE_URL", &b)]).await;
    for c in ["measurements", "blood_pressure", "activity", "sleep", "workouts", "devices", "sleep_series", "ecg"] {
        let a = s.ok("vitals_query", json!({"collection": format!("withings.{c}"), "start": "2026-06-01", "end": "2026-06-07"})).await;
        assert_eq!(a["synthetic"], true);
        assert!(a["notices"]["synthetic"].as_str().unwrap().contains("SAMPLE DATA"));
        assert!(a["count"].as_u64().unwrap() > 0, "{c}");
    }
    let ecg = s.ok("vitals_query", json!({"collection": "withings.ecg", "start": "2026-06-01", "end": "2026-06-07", "format": "records"})).await;
    let sig = s.ok("vitals_query", json!({"collection": "withings.ecg_signal", "id": ecg["data"][0]["id"], "format": "records"})).await;
    assert_eq!((sig["synthetic"].as_bool(), sig["data"][0]["heart_rate_bpm"].clone()), (Some(true), ecg["data"][0]["heart_rate_bpm"].clone()), "{sig}");
    assert!(twin.requests().iter().all(|r| !r.path.starts_with("/measure") && !r.path.starts_with("/v2/")), "no request left the process");
    let src = s.ok("vitals_sources", json!({})).await;
    let w = src["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "withings").unwrap().clone();
    assert_eq!(w["state"], "sandbox");
    assert_eq!(w["collections"].as_object().unwrap().len(), 10);
    assert!(w.get("connect").is_none() && src["more"].as_str().unwrap().contains("sandbox: sample data until connected (vitals_connect"), "said once: {src}");
    let check = s.ok("vitals_check", json!({})).await;
    let w = check["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "withings").unwrap().clone();
    assert_eq!((w["answered_by"].as_str(), w["api_answered"].as_bool()), (Some("sample_data"), Some(false)), "{w}");
    assert!(
        w["api_detail"].as_str().unwrap().starts_with("sample data answered") && w["api_detail"].as_str().unwrap().contains("Withings was not contacted"),
        "{w}"
    );
    assert!(w["redirect"].as_str().unwrap().starts_with("http://localhost:8765/callback (from the default; register exactly this URL at "), "{w}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn today_has_last_night_activity_and_the_latest_weigh_in() {
    let (_twin, _login, s) = connected("today").await;
    let r = s.ok("vitals_today", json!({"days": 3})).await;
    let w = r["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "withings").unwrap().clone();
    let roles: Vec<&str> = w["sections"].as_array().unwrap().iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["sleep", "activity", "weigh_in"]);
    let weigh = &w["sections"][2];
    assert_eq!(weigh["rows"].as_array().unwrap().len(), 1, "{weigh}");
    assert!(weigh["range"].as_str().unwrap().starts_with("the latest record of "), "{weigh}");
    assert_eq!(weigh["columns"][2], "weight_kg");
    assert_eq!(w["synthetic"], false);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_login_without_a_scope_is_told_to_connect_again() {
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, "scope");
    // The user unticked activity at the consent page.
    let (access, refresh) = twin.state.withings.lock().unwrap().oauth.grant("user.info,user.metrics", jiff::Timestamp::now());
    let mut t = login.stored();
    t.access = vitals::secret::Secret::new(access);
    t.refresh = Some(vitals::secret::Secret::new(refresh));
    vitals::accounts::TokenStore::file(&login.dir).save("withings", &t).unwrap();
    let s = login.server(&twin, &[]).await;
    s.ok("vitals_query", json!({"collection": "withings.measurements", "day": "2026-06-10"})).await;
    let e = s.err("vitals_query", json!({"collection": "withings.sleep", "day": "2026-06-10"})).await;
    assert!(e.contains("status 214") && e.contains("again=true"), "{e}");
    s.close().await;
}

/// A single day's answer is exactly the month's rows of that day, for every dated collection:
/// the padded 60-day windows tile the range, and a day asked alone is no different.
#[tokio::test(flavor = "multi_thread")]
async fn a_day_alone_is_the_same_rows_as_that_day_within_the_month() {
    let (_twin, _login, s) = connected("days").await;
    let zone = vitals::time::Zone::parse(TZ).unwrap();
    for (c, key) in [("measurements", "time"), ("blood_pressure", "time"), ("activity", "day"), ("sleep", "day"), ("workouts", "day")] {
        let collection = format!("withings.{c}");
        let month =
            s.ok("vitals_query", json!({"collection": collection, "start": MONTH.0, "end": MONTH.1, "format": "records", "max_chars": 2_000_000})).await;
        let month = month["data"].as_array().unwrap().clone();
        assert!(!month.is_empty(), "{c}");
        for day in ["2026-06-01", "2026-06-14", "2026-06-30"] {
            let one = s.ok("vitals_query", json!({"collection": collection, "day": day, "format": "records"})).await;
            let want: Vec<&Value> = month.iter().filter(|r| vitals::time::local_day(r[key].as_str().unwrap(), &zone) == Some(date(day))).collect();
            assert_eq!(one["data"].as_array().unwrap().iter().collect::<Vec<_>>(), want, "{c} on {day}");
        }
    }
    s.close().await;
}

/// Issue 48: every ECG of a month listed, each page followed (two a page), on its local day, with
/// its heart rate and AFib result in words and no signal; one's signal read by its id at its rate,
/// beating at the listed heart rate, compacted and said when it does not fit; an id no ECG has
/// refused in Withings' words. `vitals_sources` lists the new collections.
#[tokio::test(flavor = "multi_thread")]
async fn ecgs_are_listed_over_a_month_and_a_signal_is_read_by_its_id() {
    let twin = twin().await;
    twin.withings(|w| w.cfg.page_size = 2);
    let login = WithingsLogin::new(&twin, "ecg");
    let s = login.server(&twin, &[]).await;
    let person = twin.state.withings.lock().unwrap().cfg.person.clone();
    let mut want = vec![];
    let mut d = date(MONTH.0);
    while d <= date(MONTH.1) {
        want.extend(sample::ecg_of_day(&person, d).map(|e| (d, e)));
        d = d.tomorrow().unwrap();
    }
    assert!(want.len() >= 4, "{}", want.len());

    let a = s.ok("vitals_query", json!({"collection": "withings.ecg", "start": MONTH.0, "end": MONTH.1, "format": "records"})).await;
    let rows = a["data"].as_array().unwrap();
    assert_eq!(ids(rows), want.iter().map(|(_, e)| e["ecg"]["signalid"].to_string()).collect::<Vec<_>>(), "{a}");
    let zone = vitals::time::Zone::parse(TZ).unwrap();
    for (r, (day, e)) in rows.iter().zip(&want) {
        assert_eq!(vitals::time::local_day(r["time"].as_str().unwrap(), &zone), Some(*day), "{r}");
        assert_eq!(r["heart_rate_bpm"], e["heart_rate"]);
        assert_eq!(r["afib"], if e["ecg"]["afib"] == 0 { "negative" } else { "inconclusive" });
        assert_eq!(r["device_model"], "ScanWatch");
        assert!(r.get("signal_uv").is_none() && r["systolic_mmhg"].is_null(), "a listing carries no signal, a watch no blood pressure: {r}");
    }
    let lists: Vec<String> = twin.requests().into_iter().filter(|r| r.path == "/v2/heart" && r.query.contains("action=list")).map(|r| r.query).collect();
    assert!(lists.len() >= want.len() / 2 && lists.iter().any(|q| q.contains("offset=")), "every page followed: {lists:?}");

    let id = rows[0]["id"].as_str().unwrap();
    let sig = s.ok("vitals_query", json!({"collection": "withings.ecg_signal", "id": id, "format": "records"})).await;
    let r = &sig["data"][0];
    assert_eq!((r["id"].as_str(), r["sampling_hz"].as_i64(), r["duration_s"].as_f64()), (Some(id), Some(300), Some(30.0)), "{r}");
    assert_eq!((r["heart_rate_bpm"].clone(), r["wear_position"].as_str()), (rows[0]["heart_rate_bpm"].clone(), Some("left wrist")));
    let raw = sample::ecg_signal(&person, id.parse().unwrap()).unwrap();
    assert_eq!(r["signal_uv"]["items"], raw["signal"], "every sample, in µV as Withings sent them");
    assert!((r["signal_uv"]["interval_s"].as_f64().unwrap() * 300.0 - 1.0).abs() < 1e-9);
    assert!(sig["notices"].get("compacted").is_none(), "{}", sig["notices"]);
    let small = s.ok("vitals_query", json!({"collection": "withings.ecg_signal", "id": id, "format": "records", "max_chars": 5_000})).await;
    assert_eq!(small["notices"]["compacted"]["fields"], json!(["signal_uv"]), "{}", small["notices"]);
    let e = s.err("vitals_query", json!({"collection": "withings.ecg_signal", "id": "4000000001"})).await;
    assert!(e.contains("Withings refused the request"), "{e}");
    let e = s.err("vitals_query", json!({"collection": "withings.ecg_signal", "day": MONTH.0})).await;
    assert!(e.contains("`id`"), "{e}");

    let listed = s.ok("vitals_sources", json!({})).await;
    let w = listed["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "withings").unwrap()["collections"].clone();
    for c in ["withings.ecg", "withings.ecg_signal", "withings.sleep_series"] {
        assert!(w.get(c).is_some_and(Value::is_string), "{c} is listed: {w}");
    }
    s.close().await;
}

/// Issue 48: a night's high-resolution series, read in 24-hour requests, is the night the summary
/// describes: inside its start and end, a heart rate and a breathing rate a minute whose lowest,
/// highest and mean are the summary's (bpm, breaths a minute), the seconds snored adding up to its
/// snoring minutes, and the states it is made of.
#[tokio::test(flavor = "multi_thread")]
async fn a_night_series_is_the_night_its_summary_describes() {
    let (twin, _login, s) = connected("night").await;
    let person = twin.state.withings.lock().unwrap().cfg.person.clone();
    let day = (10..20).map(|n| date(MONTH.0).checked_add(jiff::Span::new().days(n)).unwrap()).find(|d| sample::night_ending(&person, *d).is_some()).unwrap();
    let summary = s.ok("vitals_query", json!({"collection": "withings.sleep", "day": ds(day), "format": "records"})).await;
    let night = summary["data"][0].clone();
    let a = s
        .ok(
            "vitals_query",
            json!({"collection": "withings.sleep_series", "start": ds(day.yesterday().unwrap()), "end": ds(day), "resolution": "raw", "format": "records", "max_chars": 2_000_000}),
        )
        .await;
    assert!(a["notices"].get("truncated").is_none(), "{}", a["notices"]);
    let instant = |v: &Value| v.as_str().unwrap().parse::<jiff::Timestamp>().unwrap();
    let (start, end) = (instant(&night["start"]), instant(&night["end"]));
    let rows: Vec<&Value> = a["data"].as_array().unwrap().iter().filter(|r| (start..end).contains(&instant(&r["timestamp"]))).collect();
    let minutes = (end.as_second() - start.as_second() + 59) / 60;
    let col = |k: &str| -> Vec<f64> { rows.iter().filter_map(|r| r[k].as_f64()).collect() };
    for (k, lo, avg, hi) in
        [("heart_rate_bpm", "hr_min_bpm", "hr_average_bpm", "hr_max_bpm"), ("breathing_rate_per_min", "rr_min_per_min", "rr_average_per_min", "rr_max_per_min")]
    {
        let v = col(k);
        assert_eq!(v.len() as i64, minutes, "{k}: a reading a minute through the night");
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert_eq!(
            (v.iter().cloned().fold(f64::MAX, f64::min), v.iter().cloned().fold(f64::MIN, f64::max)),
            (night[lo].as_f64().unwrap(), night[hi].as_f64().unwrap()),
            "{k}"
        );
        assert!((mean - night[avg].as_f64().unwrap()).abs() < 1e-9, "{k}: {mean} against {}", night[avg]);
    }
    let snored: f64 = col("snoring_s").iter().sum();
    assert_eq!((snored / 60.0 * 100.0).round() / 100.0, night["snoring_min"].as_f64().unwrap());
    let states: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states.into_iter().collect::<Vec<_>>(), ["awake", "deep", "light", "rem"]);
    assert!(!col("rmssd_ms").is_empty() && rows.iter().all(|r| r["device"] == "Aura Sensor V2"));
    let action = |q: &str| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "action").map(|(_, v)| v.to_string());
    let gets = twin.requests().into_iter().filter(|r| r.path == "/v2/sleep" && action(&r.query).as_deref() == Some("get")).count();
    assert!(gets >= 2, "two local days are read 24 hours a request: {gets}");
    s.close().await;
}
