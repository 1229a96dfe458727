//! Answers read right (issue 49, points 7 to 10): every count describes the answer as sent and
//! what was cut is said apart; every number carries its unit in its name or beside it, without
//! float noise, a count as a whole number, a duration for people in minutes, a pace as m:ss, the
//! day column named `day` everywhere; a coded field says what its codes stand for; and the sizes:
//! sample data said once an answer, the tool list under 20,000 characters as hosts hand it to the
//! model, a year of nights whole in their headline fields.
use crate::common::*;
use serde_json::{json, Value};

fn columns(a: &Value) -> Vec<String> {
    a["data"]["columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect()
}

fn section<'a>(report: &'a Value, provider: &str, role: &str) -> &'a Value {
    let p = report["providers"].as_array().unwrap().iter().find(|p| p["provider"] == provider).unwrap_or_else(|| panic!("{provider}: {report}"));
    p["sections"].as_array().unwrap().iter().find(|s| s["role"] == role).unwrap_or_else(|| panic!("{provider} {role}: {p}"))
}

fn notices<'a>(report: &'a Value, provider: &str) -> &'a Value {
    &report["providers"].as_array().unwrap().iter().find(|p| p["provider"] == provider).unwrap()["notices"]
}

/// A cut answer's counts are the answer's: the resampling's rows and samples are those of the
/// buckets sent, a provider's rules count only the records sent, and a day's report that left days
/// out counts none of them (and says the size of its last day the same whatever `days` asked).
#[tokio::test(flavor = "multi_thread")]
async fn a_cut_answer_counts_what_it_holds_and_says_what_was_cut_apart() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    // Two years of heart rate at an hour: cut by max_chars, the buckets it holds described.
    let hr = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": ds(ago(729)), "end": ds(ago(1)), "resolution": "1h"})).await;
    assert_eq!(hr["notices"]["truncated"]["cause"], "max_chars", "{}", hr["notices"]);
    assert_eq!(hr["resolution"]["rows"], hr["count"], "the buckets sent: {}", hr["resolution"]);
    let n: u64 = records(&hr["data"]).iter().map(|b| b["n"].as_u64().unwrap()).sum();
    assert_eq!(hr["resolution"]["raw_samples"].as_u64(), Some(n), "the samples in the buckets sent");
    s.close().await;

    // WHOOP's nights cut by max_chars: the unscored ones are counted among the nights sent.
    let sample = connect(&twin, true, &[]).await;
    let range = json!({"collection": "whoop.sleep", "start": ds(ago(29)), "end": ds(ago(1))});
    let whole = sample.ok("vitals_query", range.clone()).await;
    assert!(whole["notices"]["rules"].to_string().contains("UNSCORABLE"), "the sample has unscorable nights: {}", whole["notices"]);
    let mut cut_ask = range.clone();
    cut_ask["max_chars"] = json!(5000);
    let cut = sample.ok("vitals_query", cut_ask).await;
    assert_eq!(cut["notices"]["truncated"]["cause"], "max_chars", "{}", cut["notices"]);
    let sent = cut["count"].as_u64().unwrap() as usize;
    assert!(sent < records(&whole["data"]).len());
    let unscored = records(&cut["data"]).iter().filter(|r| r["score_state"] == "UNSCORABLE").count();
    let rules = cut["notices"]["rules"].to_string();
    match unscored {
        0 => assert!(!rules.contains("UNSCORABLE"), "no night sent is unscorable: {rules}"),
        k => assert!(rules.contains(&format!("UNSCORABLE: {k} of {sent} sleep records")), "{rules}"),
    }

    // The day's report over max_chars: what the WHOOP rules count, and the weigh-ins merged, are
    // the rows shown.
    let full = sample.ok("vitals_today", json!({"days": 7})).await;
    let max = full.to_string().chars().count() * 3 / 4;
    let r = sample.ok("vitals_today", json!({"days": 7, "max_chars": max})).await;
    assert!(r["shortened"].as_str().unwrap().contains("left out"), "{}", r["shortened"]);
    let whoop_rules = notices(&r, "whoop")["rules"].as_str().unwrap_or_default().to_string();
    let nights = section(&r, "whoop", "sleep")["rows"].as_array().unwrap().clone();
    let unscored = nights.iter().filter(|row| row.as_array().unwrap().contains(&json!("UNSCORABLE"))).count();
    match unscored {
        // (A night WHOOP has not scored yet, PENDING_SCORE, is said too: the sample's last night is,
        // at some hours of the day.)
        0 => assert!(!whoop_rules.contains("UNSCORABLE"), "no night shown is unscorable: {whoop_rules}"),
        k => assert!(whoop_rules.contains(&format!("UNSCORABLE: {k} of {} sleep records", nights.len())), "{whoop_rules}"),
    }
    let weigh_ins = section(&r, "withings", "weigh_in")["rows"].as_array().unwrap().len();
    let withings_rules = notices(&r, "withings")["rules"].as_str().unwrap_or_default().to_string();
    if let Some(at) = withings_rules.find("merged into ") {
        let merged = numbers(&withings_rules[at..])[0];
        assert!(merged <= weigh_ins, "{merged} weigh-ins said merged, {weigh_ins} shown: {withings_rules}");
    }
    sample.close().await;

    // The days a report keeps read the same whatever `days` asked: with days=1 and days=7 at the
    // least max_chars, the kept day's sections, series counts and notices are the same (or the
    // last day alone is refused with the same size). Fresh processes: no cache to say; the twin's
    // clock held still.
    let still = twin_with(vitals_twin::oura::OuraConfig { now: Some(jiff::Timestamp::now()), ..Default::default() }).await;
    let mut kept = vec![];
    for days in [1, 7] {
        let s = connect(&still, false, &[]).await;
        let r = s.call_raw("vitals_today", json!({"days": days, "max_chars": 2000})).await;
        kept.push(match r.is_error {
            Some(true) => {
                let e = text(&r);
                assert!(e.starts_with("`max_chars`: even the last day alone"), "{e}");
                json!(numbers(&e)[1])
            }
            _ => {
                let mut v = r.structured_content.unwrap();
                assert!(v["shortened"].is_string(), "{v}");
                for k in ["from", "shortened"] {
                    v.as_object_mut().unwrap().remove(k);
                }
                for p in v["providers"].as_array_mut().unwrap() {
                    for sec in p["sections"].as_array_mut().unwrap() {
                        sec.as_object_mut().unwrap().remove("raw");
                    }
                }
                v
            }
        });
        s.close().await;
    }
    assert_eq!(kept[0], kept[1], "the days kept, asked with days=1 and days=7");
}

/// Numbers as people read them: no float noise, a count without `.0`, a pace as m:ss, the day
/// column `day` in every collection, WHOOP's heart-rate zones in zone order.
#[tokio::test(flavor = "multi_thread")]
async fn numbers_read_as_people_write_them_and_the_day_is_always_day() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let (start, end) = (ds(ago(14)), ds(ago(1)));
    let noise = |t: &str| {
        let mut found = vec![];
        for w in t.split([',', '[', ']', '{', '}', ':']) {
            let w = w.trim();
            if w.parse::<f64>().is_ok() && !w.starts_with('"') {
                let frac = w.split_once('.').map_or("", |(_, f)| f);
                if w.ends_with(".0") || frac.len() > 12 {
                    found.push(w.to_string());
                }
            }
        }
        found
    };
    for c in ["polar.activity", "polar.nightly_recharge", "garmin.daily_summary", "garmin.activities", "oura.daily_cardiovascular_age", "whoop.cycle"] {
        let r = s.call_raw("vitals_query", json!({"collection": c, "start": start, "end": end})).await;
        let t = text(&r);
        let found = noise(&t);
        assert!(found.is_empty(), "{c}: {:?}", &found[..found.len().min(5)]);
    }
    let p = s.ok("vitals_query", json!({"collection": "garmin.profile"})).await;
    let pace = records(&p["data"])[0]["lactate_threshold_pace_per_km"].as_str().unwrap().to_string();
    let (m, sec) = pace.split_once(':').unwrap();
    assert!(m.parse::<u32>().is_ok() && sec.len() == 2 && sec.parse::<u32>().unwrap() < 60, "m:ss per km: {pace}");

    let w = s.ok("vitals_query", json!({"collection": "whoop.workout", "start": start, "end": end})).await;
    let zones: Vec<String> = columns(&w).into_iter().filter(|c| c.starts_with("zone_")).collect();
    assert_eq!(zones, ["zone_zero_milli", "zone_one_milli", "zone_two_milli", "zone_three_milli", "zone_four_milli", "zone_five_milli"]);
    assert!(w["legend"]["zone_three_milli"].as_str().unwrap().contains("70-80 %"), "{}", w["legend"]);

    // Every collection of every provider names its day `day`.
    let listing = s.ok("vitals_sources", json!({})).await;
    let mut read = 0;
    for p in listing["providers"].as_array().unwrap() {
        for name in p["collections"].as_object().unwrap().keys() {
            let r = s.call_raw("vitals_query", json!({"collection": name, "start": ds(ago(3)), "end": ds(ago(1))})).await;
            let Some(a) = r.structured_content.filter(|_| r.is_error != Some(true)) else { continue };
            let Some(cols) = a["data"]["columns"].as_array() else { continue };
            read += 1;
            assert!(!cols.iter().any(|c| c == "date"), "{name}: {cols:?}");
        }
    }
    assert!(read > 30, "{read} collections read");
    s.close().await;
}

/// A comparison says its unit and which way the difference goes; a duration is in minutes.
#[tokio::test(flavor = "multi_thread")]
async fn a_comparison_says_its_unit_and_that_the_difference_is_b_minus_a() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let c = s
        .ok(
            "vitals_compare",
            json!({"metric": "oura.sleep.total_sleep_duration", "a_start": ds(ago(56)), "a_end": ds(ago(29)), "b_start": ds(ago(28)), "b_end": ds(ago(1))}),
        )
        .await;
    assert_eq!(c["unit"], "min", "{c}");
    let (a, b) = (c["mean_a"].as_f64().unwrap(), c["mean_b"].as_f64().unwrap());
    assert!((60.0..900.0).contains(&a) && (60.0..900.0).contains(&b), "a night in minutes, not seconds: {a}, {b}");
    assert!((c["difference_b_minus_a"].as_f64().unwrap() - (b - a)).abs() < 0.01, "{c}");
    if c["verdict"] != "cannot_tell" {
        let reading = c["reading"].as_str().unwrap();
        assert!(reading.contains("period B's mean minus period A's") && reading.contains(" min"), "{reading}");
    }
    let t = s.ok("vitals_trend", json!({"metric": "oura.sleep.average_hrv", "start": ds(ago(60)), "end": ds(ago(1))})).await;
    assert_eq!(t["unit"], "ms", "{t}");
    s.close().await;
}

/// A coded field says what its codes stand for: beside the value in the day's report, in the
/// answer's `legend` of a query; headline names carry their units.
#[tokio::test(flavor = "multi_thread")]
async fn coded_fields_say_what_their_codes_stand_for() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let r = s.ok("vitals_today", json!({"days": 3})).await;
    let recharge = section(&r, "polar", "recharge");
    let col = |name: &str| recharge["columns"].as_array().unwrap().iter().position(|c| c == name).unwrap();
    let words = ["very poor", "poor", "compromised", "OK", "good", "very good"];
    let usual = ["much below usual", "below usual", "usual", "above usual", "much above usual"];
    let mut said = 0;
    for row in recharge["rows"].as_array().unwrap() {
        // A status of 0 is no reading (null); any other is its meaning, never a bare number.
        for (c, scale) in [("status", &words[..]), ("ans_status", &usual[..])] {
            let cell = &row[col(c)];
            assert!(cell.is_null() || scale.contains(&cell.as_str().unwrap_or_default()), "{c}: {row}");
            said += usize::from(cell.is_string());
        }
    }
    assert!(said > 0, "{recharge}");
    let sleep = section(&r, "oura", "sleep")["columns"].to_string();
    assert!(sleep.contains("\"hr_lowest_bpm\"") && sleep.contains("\"breaths_per_min\""), "{sleep}");

    let q = s.ok("vitals_query", json!({"collection": "polar.nightly_recharge", "start": ds(ago(3)), "end": ds(ago(1))})).await;
    assert!(q["legend"]["nightly_recharge_status"].as_str().unwrap().contains("6 very good"), "{}", q["legend"]);
    assert!(q["legend"]["ans_charge_status"].as_str().unwrap().contains("3 usual"), "{}", q["legend"]);
    let o = s.ok("vitals_query", json!({"collection": "oura.sleep", "start": ds(ago(2)), "end": ds(ago(1))})).await;
    assert_eq!(o["legend"]["total_sleep_duration"], "s");
    assert!(o["legend"]["sleep_phase_5_min"].as_str().unwrap().contains("1 deep"), "{}", o["legend"]);
    s.close().await;
}

/// Sizes: the sample-data sentence once an answer, the tool list under 20,000 characters with
/// its output schemas, a year of nights whole at the default size in their headline fields.
#[tokio::test(flavor = "multi_thread")]
async fn sizes_said_once_listed_lean_and_a_year_of_nights_whole() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let d = s.ok("vitals_daily", json!({"start": ds(ago(1)), "end": ds(ago(1))})).await;
    assert_eq!(d.to_string().matches("SAMPLE DATA").count(), 1, "{d}");
    assert!(d["notes"][0].as_str().unwrap().starts_with("SAMPLE DATA"), "{}", d["notes"]);
    assert_eq!(d["synthetic"], true);

    // What a host hands the model: each tool's name, title, description, input and output schema.
    let tools = s.client.list_all_tools().await.unwrap();
    let chars: usize = tools
        .iter()
        .map(|t| {
            let json = |v: &serde_json::Map<String, Value>| serde_json::to_string(v).unwrap().chars().count();
            t.name.chars().count()
                + t.title.as_deref().map_or(0, |x| x.chars().count())
                + t.description.as_deref().map_or(0, |x| x.chars().count())
                + json(&t.input_schema)
                + t.output_schema.as_deref().map_or(0, json)
        })
        .sum();
    assert!(chars < 20_000, "the tool list takes {chars} characters");
    s.close().await;

    let s = connect(&twin, false, &[]).await;
    let (start, end) = (ds(ago(365)), ds(ago(1)));
    let y = s.ok("vitals_query", json!({"collection": "oura.sleep", "start": start, "end": end})).await;
    assert!(y["notices"]["truncated"].is_null(), "{}", y["notices"]);
    assert_eq!((y["range"]["start"].as_str(), y["range"]["end"].as_str()), (Some(start.as_str()), Some(end.as_str())));
    assert!(y["notices"]["headline"].as_str().unwrap().starts_with("HEADLINE"), "{}", y["notices"]);
    let nights = records(&y["data"]);
    let want = vitals_twin::oura::expected(&twin.state.oura.lock().unwrap(), "sleep", date(&start), date(&end)).len();
    assert_eq!(nights.len(), want, "every night of the year");
    assert!(nights.iter().all(|n| n["day"].is_string() && n["total_min"].is_number()), "{:?}", &nights[..1]);
    assert!(y.to_string().chars().count() <= 100_000);
    s.close().await;
}
