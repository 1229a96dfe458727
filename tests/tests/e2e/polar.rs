//! Polar end to end against the twin: every collection, the summaries checked against values
//! computed here from the twin's raw samples, retention, the three kinds of "no data", the
//! spellings the live API is reported to use, rate limits, the login with its registration, a
//! revoked token, and export to a file.
use crate::common;
use common::*;
use jiff::civil::Date;
use serde_json::{json, Value};
use vitals::providers::polar::sample::{self, Dialect};
use vitals_twin::polar::{CLIENT_ID, CLIENT_SECRET};

fn env_for(twin: &Twin, dir: &std::path::Path) -> Vec<(String, String)> {
    let b = twin.mounted("polar");
    vec![
        ("VITALS_CONFIG_DIR".into(), dir.display().to_string()),
        ("VITALS_POLAR_BASE_URL".into(), b.clone()),
        ("VITALS_POLAR_TOKEN_URL".into(), format!("{b}/v2/oauth2/token")),
        ("VITALS_POLAR_AUTHORIZE_URL".into(), format!("{b}/oauth2/authorization")),
        ("VITALS_POLAR_CLIENT_ID".into(), CLIENT_ID.into()),
        ("VITALS_POLAR_CLIENT_SECRET".into(), CLIENT_SECRET.into()),
    ]
}

/// A server reading the twin's Polar with a login the twin issued (registered long ago).
pub async fn connected(twin: &Twin, tag: &str, extra: &[(&str, &str)]) -> Session {
    let dir = common::scratch().join(format!("vitals-e2e-polar-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tokens = twin.state.polar.lock().unwrap().stored_login("polar-login-1");
    vitals::accounts::TokenStore::file(&dir).save("polar", &tokens).unwrap();
    let env = env_for(twin, &dir);
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    pairs.extend_from_slice(extra);
    connect(twin, true, &pairs).await
}

async fn query(s: &Session, collection: &str, args: Value) -> Value {
    records_of(s, &format!("polar.{collection}"), args).await
}

fn person(twin: &Twin) -> sample::Person {
    twin.state.polar.lock().unwrap().cfg.person.clone()
}

/// A sample string parsed here, independently of the server's decoder (`NULL`, `NaN`, empty: offline).
fn parse(data: &str) -> Vec<Option<f64>> {
    data.split(',').map(|x| x.trim().parse::<f64>().ok().filter(|v| v.is_finite())).collect()
}

fn raw_series(ex: &Value, kind: u64) -> Option<Vec<Option<f64>>> {
    ex["samples"].as_array()?.iter().find(|s| s["sample_type"].as_u64() == Some(kind)).map(|s| parse(s["data"].as_str().unwrap()))
}

fn close(a: &Value, b: f64, what: &str) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{what}: not a number: {a}"));
    assert!((a - b).abs() <= 0.051 + b.abs() * 1e-9, "{what}: server {a}, computed here {b}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_polar_collection_answers_from_the_twin() {
    let twin = twin().await;
    let s = connected(&twin, "all", &[]).await;
    let p = person(&twin);

    let act = query(&s, "activity", json!({"start": ds(ago(21)), "end": ds(ago(1))})).await;
    assert_eq!(act["synthetic"], false);
    let rows = act["data"].as_array().unwrap();
    assert_eq!(rows.len(), 21);
    let mut non_wear = 0;
    for r in rows {
        let d: Date = r["day"].as_str().unwrap().parse().unwrap();
        let want = sample::activity_of_day(&p, d, true, jiff::Timestamp::now());
        assert_eq!(r["steps"], want["steps"].as_f64().unwrap(), "{d}");
        assert_eq!(r["hourly_steps_sum"], r["steps"], "{d}: the repeats Polar leaves out are filled back in");
        let zones: f64 = r["zones_min"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
        assert!((zones - 1440.0).abs() < 0.2, "{d}: the zones cover the day ({zones} min)");
        non_wear += usize::from(r["zones_min"].get("non_wear").is_some());
    }
    assert!(non_wear > 0, "an unknown zone name is kept, never dropped");

    let hr = query(&s, "heartrate", json!({"day": ds(ago(3)), "resolution": "raw"})).await;
    let want = sample::heart_rate_of_day(&p, ago(3), jiff::Timestamp::now())["heart_rate_samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["heart_rate"].as_f64() != Some(0.0))
        .count();
    assert_eq!(hr["count"], want, "every heart rate of the day, none from the days around it");
    assert!(hr["notices"]["rules"][0].as_str().unwrap().contains("watch's clock"), "{}", hr["notices"]);

    let sleep = query(&s, "sleep", json!({"start": ds(ago(6)), "end": ds(ago(1))})).await;
    let nights = sleep["data"].as_array().unwrap();
    assert_eq!(nights.len(), 6);
    for n in nights {
        let d: Date = n["day"].as_str().unwrap().parse().unwrap();
        let raw = sample::night_ending(&p, d);
        close(&n["deep_min"], raw["deep_sleep"].as_f64().unwrap() / 60.0, "deep minutes");
        let hyp = n["hypnogram"].as_str().unwrap();
        // The hypnogram is the night, one digit per 30 s, and its deep epochs are Polar's deep time (± a minute of clock rounding).
        let deep_epochs = hyp.chars().filter(|c| *c == '4').count() as f64 / 2.0;
        assert!((deep_epochs - n["deep_min"].as_f64().unwrap()).abs() <= 1.0, "{d}: {deep_epochs} vs {}", n["deep_min"]);
        let hr: Vec<f64> = raw["heart_rate_samples"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).collect();
        close(&n["heart_rate_summary"]["avg"], hr.iter().sum::<f64>() / hr.len() as f64, "sleep HR average");
        close(&n["heart_rate_summary"]["min"], hr.iter().cloned().fold(f64::MAX, f64::min), "sleep HR minimum");
        assert!(n["heart_rate_summary"]["method"].as_str().unwrap().contains("15 min"), "the nadir's window is said");
        assert!(n["architecture"]["cycles"].as_u64().unwrap() >= 3);
        assert_eq!(n["sleep_rating"].is_null(), raw["sleep_rating"] == 0, "a rating of 0 means none was given");
    }

    let rc = query(&s, "nightly_recharge", json!({"start": ds(ago(4)), "end": ds(ago(1))})).await;
    for r in rc["data"].as_array().unwrap() {
        let raw = sample::recharge_of(&p, r["day"].as_str().unwrap().parse().unwrap());
        let hrv: Vec<f64> = raw["hrv_samples"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).collect();
        close(&r["hrv"]["avg"], hrv.iter().sum::<f64>() / hrv.len() as f64, "HRV average");
        assert_eq!(r["hrv"]["samples"], hrv.len());
        assert_eq!(r["hrv_samples"]["items"].as_array().unwrap().len(), hrv.len(), "the raw series beside its summary");
    }

    let cl = query(&s, "cardio_load", json!({"start": ds(ago(60)), "end": ds(ago(1))})).await;
    let rows = cl["data"].as_array().unwrap();
    assert_eq!(rows.len(), 60, "one row per day, days without data included");
    let missing: Vec<&Value> = rows.iter().filter(|r| r["status"] == "LOAD_STATUS_NOT_AVAILABLE").collect();
    assert!(!missing.is_empty() && missing.iter().all(|r| r["cardio_load"].is_null() && r["tolerance"].is_null()), "-1.0 is null, never a value");

    let sw = query(&s, "sleepwise", json!({"start": ds(ago(3)), "end": ds(ago(1))})).await;
    assert_eq!(sw["count"], 3);
    assert!(sw["data"][0].get("hourly").is_none(), "hourly predictions only when asked");
    let swh = query(&s, "sleepwise", json!({"day": ds(ago(1)), "options": {"hourly": true}})).await;
    assert_eq!(swh["data"][0]["hourly"].as_array().unwrap().len(), 16);
    assert!(swh["data"][0]["sleep_end"].as_str().unwrap().ends_with("-06:00"), "SleepWise's UTC times are shown in the sleep's own offset");

    let pi = s.ok("vitals_query", json!({"collection": "polar.physical_info", "format": "records"})).await;
    assert_eq!(pi["data"][0]["weight_kg"], 70.5);
    assert_eq!(pi["data"][0]["vo2max"], 52.0);

    let ex = query(&s, "exercises", json!({"start": ds(ago(14)), "end": ds(today())})).await;
    let want: Vec<String> = sample::exercise_days(&p, ago(14), today())
        .into_iter()
        .filter_map(|d| sample::exercise_of_day(&p, d, false, false, Dialect::default()))
        .filter(|e| e["upload_time"].as_str().unwrap().parse::<jiff::Timestamp>().unwrap() <= jiff::Timestamp::now())
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys(&ex["data"]), want);
    assert!(ex["data"][0].get("splits").is_none() && ex["data"][0].get("samples_heart_rate").is_none(), "summaries and raw samples only when asked");

    // Only GETs reached Polar's data routes, with `from` never before what Polar serves.
    for r in twin.requests().iter().filter(|r| r.path.starts_with("/v3/")) {
        assert_eq!(r.method, "GET", "{r:?}");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn exercise_summaries_match_values_computed_from_the_raw_samples() {
    let twin = twin().await;
    let s = connected(&twin, "summaries", &[]).await;
    let p = person(&twin);
    let ans = query(&s, "exercises", json!({"start": ds(ago(20)), "end": ds(ago(1)), "options": {"samples": true, "raw_samples": true}})).await;
    let rows = ans["data"].as_array().unwrap();
    let (mut runs, mut rides) = (0, 0);
    for row in rows {
        let day: Date = row["start_time"].as_str().unwrap()[..10].parse().unwrap();
        let raw = sample::exercise_of_day(&p, day, true, true, Dialect::default()).unwrap();
        assert_eq!(row["id"], raw["id"]);
        let hr = raw_series(&raw, 0).unwrap();
        let valid: Vec<f64> = hr.iter().flatten().copied().collect();
        assert_eq!(row["sample_counts"]["heart_rate"]["samples"], hr.len(), "every sample counted");
        assert_eq!(row["sample_counts"]["heart_rate"]["missing"], hr.len() - valid.len(), "the strap's dropout is counted, not hidden");
        // Elevation: rises and falls between consecutive valid samples.
        let alt: Vec<f64> = raw_series(&raw, 3).unwrap().into_iter().flatten().collect();
        let up: f64 = alt.windows(2).map(|w| (w[1] - w[0]).max(0.0)).sum();
        close(&row["elevation"]["ascent_m"], (up * 10.0).round() / 10.0, "ascent");
        // The first kilometre: where the cumulative distance passes 1000 m, interpolated.
        let dist = raw_series(&raw, 10).unwrap();
        let i = dist.iter().position(|d| d.unwrap_or(0.0) >= 1000.0).unwrap();
        let (a, b) = (dist[i - 1].unwrap(), dist[i].unwrap());
        let t1 = (i - 1) as f64 + (1000.0 - a) / (b - a);
        close(&row["splits"]["splits"][0]["time_s"], (t1 * 10.0).round() / 10.0, "first km time");
        let km1: Vec<f64> = hr[..(t1.ceil() as usize)].iter().flatten().copied().collect();
        close(&row["splits"]["splits"][0]["avg_hr_bpm"], ((km1.iter().sum::<f64>() / km1.len() as f64) * 10.0).round() / 10.0, "first km HR");
        assert_eq!(row["samples_heart_rate"]["items"].as_array().unwrap().len(), hr.len(), "raw samples on request, every one");
        for f in ["splits", "elevation", "cadence", "temperature"] {
            assert!(row[f]["method"].as_str().is_some_and(|m| !m.is_empty()), "{f} says its method");
        }
        if row["sport"] == "CYCLING" {
            rides += 1;
            let w: Vec<f64> = raw_series(&raw, 4).unwrap().into_iter().map(|x| x.unwrap()).collect();
            let rolling: Vec<f64> = w.windows(30).map(|x| x.iter().sum::<f64>() / 30.0).collect();
            let np = (rolling.iter().map(|x| x.powi(4)).sum::<f64>() / rolling.len() as f64).powf(0.25);
            close(&row["power"]["normalized_w"], (np * 10.0).round() / 10.0, "normalised power");
            let avg = w.iter().sum::<f64>() / w.len() as f64;
            close(&row["power"]["avg_w"], (avg * 10.0).round() / 10.0, "average power");
            assert!(row["power"]["method"].as_str().unwrap().contains("4th root"));
        } else {
            runs += 1;
            assert!(row["power"].is_null(), "no power meter on a run: null, not 0");
            let rr: Vec<f64> = raw_series(&raw, 11).unwrap().into_iter().flatten().collect();
            let rmssd = (rr.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>() / (rr.len() - 1) as f64).sqrt();
            close(&row["hrv"]["rmssd_ms"], (rmssd * 10.0).round() / 10.0, "RMSSD");
        }
    }
    assert!(runs > 0 && rides > 0, "both kinds checked ({runs} runs, {rides} rides)");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn retention_is_said_and_a_range_wholly_before_it_is_refused() {
    let twin = twin().await;
    let s = connected(&twin, "retention", &[]).await;
    let a = query(&s, "sleep", json!({"start": ds(ago(40)), "end": ds(ago(1))})).await;
    let b = &a["notices"]["beyond_retention"];
    assert_eq!(b["first_reachable"], ds(ago(27)), "{b}");
    assert_eq!(b["unreachable_days"], 13);
    assert!(b["note"].as_str().unwrap().contains("not empty"));
    assert_eq!(a["range"]["start"], ds(ago(27)));
    assert_eq!(a["count"], 27);
    let e = s.err("vitals_query", json!({"collection": "polar.exercises", "start": ds(ago(70)), "end": ds(ago(40))})).await;
    assert!(e.contains("entirely before") && e.contains(&ds(ago(29))), "{e}");
    // Activity reaches a year back: 200 days is answered whole, in windows Polar accepts.
    let act = query(&s, "activity", json!({"start": ds(ago(200)), "end": ds(ago(1)), "fields": ["steps"]})).await;
    assert_eq!(act["count"], 200);
    assert!(act["notices"].get("beyond_retention").is_none());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_data_as_204_404_or_an_empty_list_is_said_as_empty_never_an_error() {
    let twin = twin().await;
    twin.polar(|p| p.cfg.registered_long_ago = false);
    let s = connected(&twin, "empties", &[]).await;
    // `[]`: nothing uploaded since this app was registered.
    let ex = query(&s, "exercises", json!({"start": ds(ago(10)), "end": ds(ago(1))})).await;
    assert_eq!(ex["count"], 0);
    assert!(ex["notices"]["empty"].as_str().unwrap().contains("after the user connected vitals"), "{}", ex["notices"]);
    // 204: SleepWise has nothing for days that have not happened on Polar's side (its clock three
    // days behind: a range after today is refused before Polar is asked).
    twin.polar(|p| p.cfg.now = Some(jiff::Timestamp::now() - jiff::SignedDuration::from_hours(72)));
    let sw = query(&s, "sleepwise", json!({"day": ds(today())})).await;
    twin.polar(|p| p.cfg.now = None);
    assert_eq!(sw["count"], 0);
    assert!(sw["notices"]["empty"].is_string());
    // 404 on a data route.
    twin.polar(|p| p.cfg.faults.not_found_next = 1);
    let cl = query(&s, "cardio_load", json!({"day": ds(ago(2))})).await;
    assert_eq!(cl["count"], 0);
    assert!(cl["notices"]["empty"].as_str().unwrap().contains("answered and had none"));
    s.close().await;
}

/// The samples Polar sent for local day `d`, as (instant in the twin's zone, bpm).
fn hr_samples(p: &sample::Person, d: Date) -> Vec<(jiff::Timestamp, f64)> {
    sample::heart_rate_of_day(p, d, jiff::Timestamp::now())["heart_rate_samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let t: jiff::civil::Time = x["sample_time"].as_str().unwrap().parse().unwrap();
            (d.to_datetime(t).to_zoned(p.tz.clone()).unwrap().timestamp(), x["heart_rate"].as_f64().unwrap())
        })
        .collect()
}

/// Issue 48: Polar sends `heart_rate: 0` while the watch has no skin contact, in runs a second
/// apart mid-day. They are no heart rate: left out of the samples and of every bucket (a
/// one-minute bucket of such a run averaged about 25 with a maximum of 84), counted, said.
#[tokio::test(flavor = "multi_thread")]
async fn zero_bpm_without_skin_contact_is_left_out_counted_and_said() {
    let twin = twin().await;
    let s = connected(&twin, "contact", &[]).await;
    let p = person(&twin);
    let days: Vec<Date> = (2..9).map(ago).filter(|d| !sample::no_contact_run(*d).is_empty()).take(2).collect();
    assert_eq!(days.len(), 2, "the sample person loses skin contact on most days");
    let (first, second) = (days[1].min(days[0]), days[1].max(days[0]));
    let zeros = |d: Date| hr_samples(&p, d).iter().filter(|x| x.1 == 0.0).count();
    assert!(zeros(first) > 50, "a run of zeros a second apart");

    let raw = query(&s, "heartrate", json!({"day": ds(first), "resolution": "raw"})).await;
    let rows = raw["data"].as_array().unwrap();
    assert_eq!(rows.len(), hr_samples(&p, first).iter().filter(|x| x.1 > 0.0).count(), "every heart rate, no zero");
    assert!(rows.iter().all(|r| r["bpm"].as_f64().unwrap() > 0.0 && r.get(vitals::providers::NO_READING).is_none()), "no 0 bpm, no marker");
    let ex = &raw["notices"]["excluded"];
    assert_eq!(ex["no_contact"].as_u64(), Some(zeros(first) as u64), "{ex}");
    assert!(ex["note"].as_str().unwrap().contains("skin contact"), "said in words: {ex}");

    let buckets = query(&s, "heartrate", json!({"day": ds(first), "resolution": "1m"})).await;
    let rows = buckets["data"].as_array().unwrap();
    let n: u64 = rows.iter().map(|r| r["n"].as_u64().unwrap()).sum();
    assert_eq!(n as usize, hr_samples(&p, first).iter().filter(|x| x.1 > 0.0).count(), "the buckets' n add up to the heart rates");
    for r in rows {
        assert!(r["bpm_min"].as_f64().unwrap() > 30.0, "no bucket holds a 0 or is dragged down by one: {r}");
    }
    assert_eq!(buckets["notices"]["excluded"]["no_contact"].as_u64(), Some(zeros(first) as u64));

    // Cut for size at a day boundary: only the zeros of the days the answer holds are counted.
    let one_day = raw.to_string().len();
    let cut = query(&s, "heartrate", json!({"start": ds(first), "end": ds(second), "resolution": "raw", "max_chars": one_day + 4_000})).await;
    let kept: Vec<Date> = {
        let (a, b) = (cut["range"]["start"].as_str().unwrap().parse::<Date>().unwrap(), cut["range"]["end"].as_str().unwrap().parse::<Date>().unwrap());
        (0..=(b - a).get_days()).map(|k| a.checked_add(jiff::Span::new().days(k)).unwrap()).collect()
    };
    assert!(cut["notices"]["truncated"]["cause"] == "max_chars" && kept.last() < Some(&second), "{}", cut["notices"]);
    let want: usize = kept.iter().map(|d| zeros(*d)).sum();
    assert_eq!(cut["notices"]["excluded"]["no_contact"].as_u64(), Some(want as u64), "{}", cut["notices"]);
    s.close().await;
}

/// Issue 48: a load Polar's interpretation calls NOT_AVAILABLE is no load (Polar sends
/// `perceived-load: 0.0` for every exercise nobody rated, `muscle-load: -1.0` without power);
/// a load with a level is the number Polar sent.
#[tokio::test(flavor = "multi_thread")]
async fn training_loads_are_null_where_polar_says_not_available() {
    let twin = twin().await;
    let s = connected(&twin, "loads", &[]).await;
    let p = person(&twin);
    let ex = query(&s, "exercises", json!({"start": ds(ago(20)), "end": ds(ago(1))})).await;
    let rows = ex["data"].as_array().unwrap();
    let (mut rated, mut unrated) = (0, 0);
    for r in rows {
        let d: Date = r["start_time"].as_str().unwrap()[..10].parse().unwrap();
        let sent = sample::exercise_of_day(&p, d, false, false, Dialect::default()).unwrap()["training_load_pro"].clone();
        for (field, key) in [("cardio_load", "cardio"), ("muscle_load", "muscle"), ("perceived_load", "perceived")] {
            match sent[format!("{key}-load-interpretation")].as_str().unwrap() {
                "NOT_AVAILABLE" => {
                    assert!(r[field].is_null(), "{field} of {d}: Polar said NOT_AVAILABLE beside {}, so no load: {r}", sent[format!("{key}-load")])
                }
                _ => assert_eq!(r[field], tidied(sent[format!("{key}-load")].clone()), "{field} of {d}"),
            }
        }
        match sent["user-rpe"] == "UNKNOWN" {
            true => unrated += 1,
            false => rated += 1,
        }
    }
    assert!(rated > 0 && unrated > 0, "rated and unrated exercises: {rated} and {unrated}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn both_spellings_of_the_live_api_decode_to_the_same_answers() {
    let twin = twin().await;
    let s = connected(&twin, "dialects", &[]).await;
    let asks = [
        ("exercises", json!({"start": ds(ago(12)), "end": ds(ago(2)), "options": {"samples": true}, "forget": true})),
        ("cardio_load", json!({"start": ds(ago(12)), "end": ds(ago(2)), "forget": true})),
        ("heartrate", json!({"start": ds(ago(4)), "end": ds(ago(2)), "forget": true})),
    ];
    let mut before = vec![];
    for (c, a) in &asks {
        before.push(query(&s, c, a.clone()).await["data"].clone());
    }
    twin.polar(|p| p.cfg.dialect = Dialect { kebab_nested: true, very_high_kebab: true, hr_bare_array: true });
    for ((c, a), b) in asks.iter().zip(before) {
        let after = query(&s, c, a.clone()).await;
        assert_eq!(after["data"], b, "{c}: kebab-case nested keys, string sample types, very-high, a bare heart-rate array");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_and_spent_rate_headers_are_waited_out_and_said() {
    let twin = twin().await;
    let s = connected(&twin, "rate", &[]).await;
    twin.polar(|p| p.cfg.faults = vitals_twin::polar::PolarFaults { rate_limit_next: 1, retry_after_s: 1, ..Default::default() });
    let a = query(&s, "cardio_load", json!({"start": ds(ago(5)), "end": ds(ago(1))})).await;
    assert_eq!(a["count"], 5, "nothing lost");
    assert_eq!(a["notices"]["rate_limited"]["retries"], 1);
    twin.polar(|p| p.cfg.faults.quota_spent_next = 1);
    let b = query(&s, "cardio_load", json!({"start": ds(ago(9)), "end": ds(ago(6))})).await;
    assert_eq!(b["count"], 4);
    // The spent budget came with the read's last answer: nothing waited for it, and nothing says so.
    assert!(b["notices"]["paced"].is_null(), "{}", b["notices"]);
    // The next read waits for the reset its headers gave, and says the wait it made.
    let c = query(&s, "cardio_load", json!({"start": ds(ago(13)), "end": ds(ago(10))})).await;
    assert_eq!(c["count"], 4);
    let paced = c["notices"]["paced"].as_str().unwrap_or_default();
    assert!(paced.starts_with("Waited ") && paced.contains("because Polar's rate headers said its budget was spent"), "{}", c["notices"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_token_says_connect_again_and_nothing_is_refreshed() {
    let twin = twin().await;
    let s = connected(&twin, "revoked", &[]).await;
    query(&s, "activity", json!({"day": ds(ago(1))})).await;
    // The user removed vitals in Polar Flow: every token of the user is dead.
    twin.polar(|p| p.revoke_all());
    let e = s.err("vitals_query", json!({"collection": "polar.activity", "day": ds(ago(2))})).await;
    assert!(e.contains("HTTP 401") && e.contains("no refresh") && e.contains("vitals_connect"), "{e}");
    assert!(twin.state.polar.lock().unwrap().token_requests.is_empty(), "v3 has no refresh: no token request was sent");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn logging_in_registers_once_409_is_fine_and_missing_consents_are_said() {
    let twin = twin().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = common::scratch().join(format!("vitals-e2e-polar-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut env = env_for(&twin, &dir);
    env.push(("VITALS_POLAR_REDIRECT_URI".into(), format!("http://localhost:{port}/callback")));
    env.push(("VITALS_TEST_BROWSER_LOG".into(), dir.join("browser.log").display().to_string()));
    env.push(("VITALS_BROWSER".into(), env!("CARGO_BIN_EXE_browser").into()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    twin.polar(|p| p.cfg.consents = false);
    let s = connect(&twin, true, &pairs).await;
    let r = s.ok("vitals_connect", json!({"provider": "polar"})).await;
    assert_eq!(r["state"], "connected", "{r}");
    assert!(r["message"].as_str().unwrap().contains("consents"), "the login is kept and what is missing is said: {r}");
    let e = s.err("vitals_query", json!({"collection": "polar.activity", "day": ds(ago(1))})).await;
    assert!(e.contains("consents") && e.contains("Polar Flow"), "{e}");
    // The user accepts the consents, and Polar fails the next registration (503): the read fails
    // as Polar failing, nothing said against the login.
    twin.polar(|p| {
        p.cfg.consents = true;
        p.cfg.faults.registration_503_next = 1;
    });
    let e = s.err("vitals_query", json!({"collection": "polar.activity", "day": ds(ago(1))})).await;
    assert!(e.contains("the step after its login did not get an answer") && e.contains("HTTP 503") && !e.contains("is connected, but"), "{e}");
    // The next read registers first, and says so.
    let a = query(&s, "activity", json!({"day": ds(ago(1))})).await;
    assert_eq!(a["synthetic"], false);
    assert!(a["notices"]["credential_refreshed"].as_str().unwrap().contains("registering"), "{}", a["notices"]);
    // Signing in again: registration answers 409, which is fine.
    let again = s.ok("vitals_connect", json!({"provider": "polar", "again": true})).await;
    assert_eq!(again["state"], "connected");
    assert!(again["message"].as_str().unwrap().contains("registering vitals with your Polar account (POST /v3/users): done"), "{again}");
    let (registrations, token_requests) = {
        let tw = twin.state.polar.lock().unwrap();
        (tw.registrations.clone(), tw.token_requests.clone())
    };
    // At the login (403), again before the refused read (403), before the read Polar failed (503),
    // before the next read (200), at the second login (409).
    assert_eq!(registrations, [403, 403, 503, 200, 409]);
    assert_eq!(token_requests, [200, 200], "each code exchanged exactly once");
    let t = vitals::accounts::TokenStore::file(&dir).load("polar").unwrap().unwrap();
    assert_eq!(t.extra.get("x_user_id").map(String::as_str), Some("12345678"));
    assert!(t.refresh.is_none());
    for r in twin.requests() {
        assert!(r.method == "GET" || (r.method == "POST" && r.path == "/v3/users"), "vitals only reads, and registers: {r:?}");
        assert_ne!(r.method, "DELETE", "vitals never de-registers the user");
    }
    s.close().await;
}

#[test]
fn the_twin_refuses_a_reused_code_and_kills_what_it_issued() {
    let mut p = vitals_twin::polar::Polar::default();
    let q: std::collections::HashMap<String, String> =
        [("client_id", CLIENT_ID), ("response_type", "code")].into_iter().map(|(k, v)| (k.into(), v.into())).collect();
    let to = p.authorize(&q, "http://localhost:8080/callback").unwrap();
    let code = url::Url::parse(&to).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.to_string();
    use base64::Engine as _;
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}")));
    let form: std::collections::HashMap<String, String> =
        [("grant_type", "authorization_code"), ("code", code.as_str())].into_iter().map(|(k, v)| (k.into(), v.into())).collect();
    assert_eq!(p.token(Some("Basic d3Jvbmc6d3Jvbmc="), &form).status, 401, "Basic client authentication is required");
    let first = p.token(Some(&basic), &form);
    assert_eq!(first.status, 200);
    let token: Value = serde_json::from_slice(&first.body).unwrap();
    assert!(token.get("refresh_token").is_none());
    let bearer = token["access_token"].as_str().unwrap().to_string();
    assert_eq!(p.serve("POST", "/v3/users", &Default::default(), r#"{"member-id": "m"}"#, Some(&bearer)).status, 200);
    assert_eq!(p.serve("GET", "/v3/users/physical-info", &Default::default(), "", Some(&bearer)).status, 200);
    assert_eq!(p.token(Some(&basic), &form).status, 400, "a code is single-use");
    assert_eq!(p.serve("GET", "/v3/users/physical-info", &Default::default(), "", Some(&bearer)).status, 401, "and its reuse kills what it issued");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_writes_the_files_polar_serves_and_never_overwrites() {
    let twin = twin().await;
    let s = connected(&twin, "export", &[]).await;
    let ex = query(&s, "exercises", json!({"start": ds(ago(20)), "end": ds(ago(1)), "fields": ["sport", "has_route"]})).await;
    let rows = ex["data"].as_array().unwrap();
    let run = rows.iter().find(|r| r["has_route"] == true).unwrap()["id"].as_str().unwrap().to_string();
    let ride = rows.iter().find(|r| r["has_route"] == false).unwrap()["id"].as_str().unwrap().to_string();
    let dir = common::scratch().join(format!("vitals-e2e-polar-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = |n: &str| dir.join(n).display().to_string();
    let fit = s.ok("vitals_export", json!({"provider": "polar", "id": run, "format": "fit", "path": path("run.fit")})).await;
    let bytes = std::fs::read(dir.join("run.fit")).unwrap();
    assert_eq!(fit["bytes"], bytes.len());
    assert_eq!(&bytes[8..12], b".FIT");
    assert_eq!(fit["synthetic"], false);
    let tcx = s.ok("vitals_export", json!({"provider": "polar", "id": run, "format": "tcx", "path": path("run.tcx")})).await;
    assert!(std::fs::read_to_string(dir.join("run.tcx")).unwrap().contains("<TrainingCenterDatabase"), "gzipped TCX is unpacked");
    assert!(tcx["notes"][0].as_str().unwrap().contains("gzipped"));
    s.ok("vitals_export", json!({"provider": "polar", "id": run, "format": "gpx", "path": path("run.gpx")})).await;
    let e = s.err("vitals_export", json!({"provider": "polar", "id": ride, "format": "gpx", "path": path("ride.gpx")})).await;
    assert!(e.contains("no route"), "{e}");
    assert!(!dir.join("ride.gpx").exists());
    std::fs::write(dir.join("mine.fit"), b"the user's own file").unwrap();
    let e = s.err("vitals_export", json!({"provider": "polar", "id": run, "format": "fit", "path": path("mine.fit")})).await;
    assert!(e.contains("overwrite=true"), "{e}");
    assert_eq!(std::fs::read(dir.join("mine.fit")).unwrap(), b"the user's own file");
    let r = s.ok("vitals_export", json!({"provider": "polar", "id": run, "format": "fit", "path": path("mine.fit"), "overwrite": true})).await;
    assert_eq!(r["replaced"], true);
    for (args, needle) in [
        (json!({"provider": "polar", "id": run, "format": "fit", "path": "run.fit"}), "absolute"),
        (json!({"provider": "polar", "id": run, "format": "pdf", "path": path("x.pdf")}), "fit, tcx, gpx"),
        (json!({"provider": "oura", "id": run, "format": "fit", "path": path("x.fit")}), "polar"),
        (json!({"provider": "polar", "id": "../users", "format": "fit", "path": path("x.fit")}), "`id`"),
        (json!({"provider": "polar", "id": run, "format": "fit", "path": path("no/such/dir/x.fit")}), "does not exist"),
    ] {
        let e = s.err("vitals_export", args).await;
        assert!(e.contains(needle), "{e}");
    }
    let files: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(files.len(), 4, "only what was asked, no part files: {files:?}");
    s.close().await;
}

/// A file is read by the one path of a request (server/engine/src/engine/send.rs), as a page is: a
/// 429 on it is waited out as Polar said and the file asked for again, not refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_429_on_a_file_is_waited_out_and_the_file_asked_for_again() {
    let twin = twin().await;
    let s = connected(&twin, "export-429", &[]).await;
    let ex = query(&s, "exercises", json!({"start": ds(ago(20)), "end": ds(ago(1)), "fields": ["sport", "has_route"]})).await;
    let rows = ex["data"].as_array().unwrap();
    let run = rows.iter().find(|r| r["has_route"] == true).unwrap()["id"].as_str().unwrap().to_string();
    let dir = common::scratch().join(format!("vitals-e2e-polar-export-429-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.fit");
    twin.polar(|p| p.cfg.faults = vitals_twin::polar::PolarFaults { rate_limit_next: 1, retry_after_s: 1, ..Default::default() });
    let r = s.ok("vitals_export", json!({"provider": "polar", "id": run, "format": "fit", "path": path.display().to_string()})).await;
    assert!(std::fs::metadata(&path).unwrap().len() > 0, "written after the wait: {r}");
    assert_eq!(twin.state.polar.lock().unwrap().cfg.faults.rate_limit_next, 0, "the 429 was served");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn today_has_polar_sleep_recharge_and_activity() {
    let twin = twin().await;
    let s = connected(&twin, "today", &[]).await;
    let t = s.ok("vitals_today", json!({"days": 2})).await;
    let polar = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "polar").expect("a Polar section");
    assert_eq!(polar["synthetic"], false);
    let roles: Vec<&str> = polar["sections"].as_array().unwrap().iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["sleep", "recharge", "activity"], "{polar}");
    assert!(polar.get("errors").is_none(), "{polar}");
    s.close().await;
}

/// Polar's token and client secret appear in no tool result, log line or CLI output: reads, the
/// registration, an export, a refused token, `--check` and `forget`.
#[tokio::test(flavor = "multi_thread")]
async fn the_polar_token_and_secret_never_appear_in_any_output() {
    let twin = twin().await;
    let s = connected(&twin, "leak", &[("VITALS_LOG", "debug")]).await;
    let token = twin.state.polar.lock().unwrap().tokens().into_iter().next().expect("the granted token");
    let dir = common::scratch().join(format!("vitals-e2e-polar-{}-leak", std::process::id()));
    let mut out = String::new();
    for (tool, args) in [
        ("vitals_sources", json!({})),
        ("vitals_check", json!({})),
        ("vitals_today", json!({"days": 1})),
        ("vitals_query", json!({"collection": "polar.exercises", "options": {"samples": true}, "max_chars": 5000})),
        ("vitals_export", json!({"provider": "polar", "id": "nope", "format": "fit", "path": dir.join("x.fit").display().to_string()})),
        ("vitals_connect", json!({"provider": "polar"})),
    ] {
        out.push_str(&format!("{:?}", s.call_raw(tool, args).await));
    }
    twin.polar(|p| p.revoke_all());
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "polar.sleep", "forget": true})).await));
    out.push_str(&s.close().await);
    for args in [&["--check"][..], &["forget", "polar"]] {
        let mut cmd = vitals_cmd();
        cmd.args(args).env("VITALS_LOG", "debug").env("VITALS_TOKEN_STORE", "file").stdin(std::process::Stdio::null());
        for (k, v) in env_for(&twin, &dir) {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        out.push_str(&String::from_utf8_lossy(&o.stdout));
        out.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    assert!(out.contains("HTTP 401") && out.contains("Polar Flow"), "the refusal and the forget were exercised");
    for secret in [token.as_str(), CLIENT_SECRET] {
        assert!(!out.contains(secret), "{} characters of a secret leaked", secret.len());
        assert!(!out.contains(&secret[secret.len() / 2..]), "part of a secret leaked");
    }
}
