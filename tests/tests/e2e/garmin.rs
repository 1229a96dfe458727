//! Garmin's Personal API end to end against the twin: a key from the environment or pasted with
//! `vitals-mcp app garmin --api-key -`, every collection over a range and a day with the range cut
//! at each route's limit, two requests in flight at most, the token renewed before expiry and once
//! after a 401, a key refused mid-query, a China-region key, placeholders and 204 as empty, and the
//! FIT taken out of Garmin's ZIP.
use crate::common;
use common::*;
use jiff::civil::Date;
use serde_json::{json, Value};
use std::io::Write;
use vitals::providers::garmin::sample;
use vitals_twin::garmin::{CHINA_KEY, KEY};

fn days(a: Date, b: Date) -> Vec<Date> {
    let mut out = vec![];
    let mut d = a;
    while d <= b {
        out.push(d);
        d = d.tomorrow().unwrap();
    }
    out
}

fn base_env(twin: &Twin, tag: &str) -> (std::path::PathBuf, Vec<(String, String)>) {
    let dir = common::scratch().join(format!("vitals-e2e-garmin-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    (dir.clone(), vec![("VITALS_CONFIG_DIR".into(), dir.display().to_string()), ("VITALS_GARMIN_BASE_URL".into(), twin.mounted("garmin"))])
}

/// A server reading the twin's Garmin with the key in `VITALS_GARMIN_API_KEY`.
async fn with_env_key(twin: &Twin, tag: &str) -> Session {
    let (_, mut env) = base_env(twin, tag);
    env.push(("VITALS_GARMIN_API_KEY".into(), KEY.into()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    connect(twin, true, &pairs).await
}

async fn query(s: &Session, collection: &str, args: Value) -> Value {
    records_of(s, &format!("garmin.{collection}"), args).await
}

fn person(twin: &Twin) -> sample::Person {
    twin.state.garmin.lock().unwrap().cfg.person.clone()
}

/// The twin's requests to one route, and the number of days each asked for.
fn asked(twin: &Twin, path: &str) -> Vec<i64> {
    twin.requests()
        .iter()
        .filter(|r| r.path.contains(path))
        .map(|r| {
            let q: std::collections::HashMap<String, String> = url::form_urlencoded::parse(r.query.as_bytes()).into_owned().collect();
            let tail: Vec<&str> = r.path.rsplit('/').take(2).collect();
            let (a, b) = match (q.get("startDate"), q.get("endDate")) {
                (Some(a), Some(b)) => (date(a), date(b)),
                _ => (date(tail[1]), date(tail[0])),
            };
            (b - a).get_days() as i64 + 1
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_collection_answers_over_a_range_cut_at_each_routes_limit() {
    let twin = twin().await;
    let s = with_env_key(&twin, "all").await;
    let p = person(&twin);
    let (a, b) = (ago(70), ago(1));
    let all = days(a, b);
    for (c, route, limit) in [
        ("daily_summary", "dailysummaries", 35),
        ("steps", "stats/steps", 28),
        ("stress", "stats/stress", 28),
        ("hydration", "stats/hydration", 28),
        ("body_battery", "bodyBattery", 31),
        ("sleep", "dailySleepSummariesByDate", 31),
        ("weight", "weight/range", 31),
    ] {
        twin.clear_log();
        let ans = query(&s, c, json!({"start": ds(a), "end": ds(b), "max_chars": 2_000_000})).await;
        assert_eq!(ans["synthetic"], false);
        let want = match c {
            "sleep" => all.iter().filter(|d| sample::slept(**d)).count(),
            "weight" => all.iter().filter(|d| sample::weigh_in(&p, **d).is_some()).count(),
            _ => all.len(),
        };
        assert_eq!(ans["count"], want, "{c}: every day, placeholders left out");
        let sizes = asked(&twin, route);
        assert!(sizes.iter().all(|n| *n <= limit), "{c}: windows of at most {limit} days: {sizes:?}");
        assert_eq!(sizes.iter().sum::<i64>(), all.len() as i64, "{c}: every day asked once, unpadded: {sizes:?}");
        assert!(ans["notices"].get("truncated").is_none(), "{c}: {}", ans["notices"]);
    }
    // No reading is null, never a number.
    let st = query(&s, "stress", json!({"start": ds(a), "end": ds(b)})).await;
    let nulls = st["data"].as_array().unwrap().iter().filter(|r| r["stress_level"].is_null()).count();
    assert_eq!(nulls, all.iter().filter(|d| sample::stress(**d)["values"]["overallStressLevel"] == -1).count());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_day_routes_are_a_request_a_day_two_in_flight_and_empty_days_are_said() {
    let twin = twin().await;
    twin.garmin(|g| g.cfg.latency_ms = 40);
    let s = with_env_key(&twin, "days").await;
    let p = person(&twin);
    let (a, b) = (ago(20), ago(1));
    twin.clear_log();
    let hrv = query(&s, "hrv", json!({"start": ds(a), "end": ds(b)})).await;
    assert_eq!(hrv["count"], days(a, b).iter().filter(|d| sample::has_hrv(**d)).count(), "a 204 night is no row");
    assert_eq!(twin.requests().iter().filter(|r| r.path.starts_with("/hrv-service/")).count(), 20, "one request a night");
    let r = &hrv["data"][0]["readings"];
    assert_eq!(r["interval_s"], 300.0);
    let first = date(hrv["data"][0]["day"].as_str().unwrap());
    assert_eq!(r["items"].as_array().unwrap().len(), sample::hrv(&p, first).unwrap()["hrvReadings"].as_array().unwrap().len(), "every reading of the night");
    let (peak, limited) = {
        let g = twin.state.garmin.lock().unwrap();
        (g.peak_in_flight, g.rate_limited)
    };
    assert!(peak <= 2, "at most two requests in flight per key: {peak}");
    assert_eq!(limited, 0);
    let sp = query(&s, "spo2", json!({"start": ds(a), "end": ds(b)})).await;
    assert_eq!(sp["count"], days(a, b).iter().filter(|d| !sample::spo2(**d).is_null()).count(), "a null day is no row");
    let one = query(&s, "heartrate", json!({"day": ds(ago(3)), "resolution": "raw"})).await;
    let want = sample::heart_rate(&p, ago(3), jiff::Timestamp::now())["heartRateValues"].as_array().unwrap().iter().filter(|v| !v[1].is_null()).count();
    assert_eq!(one["count"], want, "every sample with a value, none invented");
    let fa = query(&s, "fitness_age", json!({"day": ds(ago(2))})).await;
    assert_eq!(fa["data"][0]["fitness_age"], 35.2);
    // A night without sleep (Garmin's placeholder) is said as empty.
    let quiet = (1..400).map(ago).find(|d| !sample::slept(*d)).expect("every tenth night has no sleep");
    let none = query(&s, "sleep", json!({"day": ds(quiet)})).await;
    assert_eq!(none["count"], 0);
    assert!(none["notices"]["empty"].is_string());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn activities_are_paged_to_the_end_and_returned_in_time_order() {
    let twin = twin().await;
    let s = with_env_key(&twin, "acts").await;
    let p = person(&twin);
    let (a, b) = (ago(300), ago(1));
    twin.clear_log();
    let ans = query(&s, "activities", json!({"start": ds(a), "end": ds(b), "fields": ["name", "type"]})).await;
    let want: Vec<String> = days(a, b).into_iter().filter(|d| sample::activity(&p, *d).is_some()).map(|d| sample::activity_id(d).to_string()).collect();
    assert!(want.len() > 100, "more than one page");
    assert_eq!(keys(&ans["data"]), want, "every page, oldest first, no duplicate");
    let pages = twin.requests().iter().filter(|r| r.path.contains("activities/search")).count();
    assert!(pages >= 2, "{pages} pages");
    // The profile: the threshold speed converted, personal fields only when asked.
    let pr = s.ok("vitals_query", json!({"collection": "garmin.profile", "format": "records"})).await;
    assert_eq!(pr["data"][0]["lactate_threshold_speed_m_s"], 3.571);
    assert!(pr["data"][0].get("birth_year").is_none());
    let pr = s.ok("vitals_query", json!({"collection": "garmin.profile", "format": "records", "options": {"personal": true}})).await;
    assert_eq!(pr["data"][0]["birth_year"], 1985);
    let z = s.ok("vitals_query", json!({"collection": "garmin.hr_zones", "format": "records"})).await;
    assert_eq!(z["data"][0]["zone_floors_bpm"], json!([120, 136, 151, 166, 180]));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_renewed_before_expiry_and_once_after_a_401_and_a_deleted_key_says_what_to_do() {
    let twin = twin().await;
    let s = with_env_key(&twin, "renew").await;
    let first = query(&s, "steps", json!({"day": ds(ago(1))})).await;
    assert!(first["notices"]["credential_refreshed"].as_str().unwrap().contains("exchanged"), "the key is exchanged lazily, said");
    assert_eq!(twin.state.garmin.lock().unwrap().exchanges, [200]);
    query(&s, "steps", json!({"day": ds(ago(2))})).await;
    assert_eq!(twin.state.garmin.lock().unwrap().exchanges, [200], "the token is reused");
    // Garmin refuses the token (401): one exchange, the page asked again, nothing lost.
    twin.garmin(|g| g.expire_tokens());
    let again = query(&s, "steps", json!({"day": ds(ago(3))})).await;
    assert_eq!(again["count"], 1);
    assert!(again["notices"]["credential_refreshed"].is_string(), "{}", again["notices"]);
    assert_eq!(twin.state.garmin.lock().unwrap().exchanges, [200, 200]);
    // The user deleted the key: the next exchange is refused, and the answer says what to do.
    twin.garmin(|g| {
        g.deleted.push(KEY.into());
        g.expire_tokens();
    });
    let e = s.err("vitals_query", json!({"collection": "garmin.steps", "day": ds(ago(4))})).await;
    assert!(
        e.contains("create a new key at Garmin Connect → Settings → Personal API Key")
            || e.contains("Create a new key at Garmin Connect → Settings → Personal API Key"),
        "{e}"
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_near_its_end_is_renewed_before_the_first_request() {
    let twin = twin().await;
    // Tokens that live 30 minutes: inside the hour before expiry from the start.
    twin.garmin(|g| g.cfg.token_lifetime_s = 1800);
    let s = with_env_key(&twin, "margin").await;
    query(&s, "steps", json!({"day": ds(ago(1))})).await;
    query(&s, "steps", json!({"day": ds(ago(2))})).await;
    assert_eq!(twin.state.garmin.lock().unwrap().exchanges, [200, 200], "renewed within the hour before expiry, not after a 401");
    assert_eq!(twin.requests().iter().filter(|r| r.method == "GET").count(), 2, "no request was refused first");
    s.close().await;
}

fn cli(twin: &Twin, dir: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut c = bare_cmd();
    c.args(args)
        .env("VITALS_CONFIG_DIR", dir)
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_GARMIN_BASE_URL", twin.mounted("garmin"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

fn paste(twin: &Twin, dir: &std::path::Path, key: &str, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["app", "garmin", "--api-key", "-"];
    args.extend_from_slice(extra);
    let mut c = cli(twin, dir, &args).spawn().unwrap();
    writeln!(c.stdin.take().unwrap(), "{key}").unwrap();
    let o = c.wait_with_output().unwrap();
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_key_is_checked_saved_with_its_expiry_and_never_shown() {
    let twin = twin().await;
    let (dir, env) = base_env(&twin, "paste");
    let (ok, out) = paste(&twin, &dir, CHINA_KEY, &[]);
    assert!(!ok && out.contains("China") && !out.contains(CHINA_KEY), "{out}");
    assert!(vitals::accounts::TokenStore::file(&dir).load("garmin").unwrap().is_none(), "a refused key is never saved");
    let (ok, out) = paste(&twin, &dir, KEY, &["--key-days", "90"]);
    assert!(ok, "{out}");
    assert!(!out.contains(KEY));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let c = s.ok("vitals_check", json!({})).await;
    let g = c["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin").unwrap().clone();
    assert_eq!((g["connection"].as_str(), g["credential"].as_str()), (Some("api_key"), Some("api_key")), "{g}");
    assert!(g.to_string().contains("key_expires_at"), "the key's own expiry is shown: {g}");
    assert!(!c.to_string().contains(KEY));
    let t = s.ok("vitals_today", json!({"days": 2})).await;
    let garmin = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin").unwrap();
    let roles: Vec<&str> = garmin["sections"].as_array().unwrap().iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["sleep", "hrv", "body_battery", "activity"]);
    assert_eq!(garmin["synthetic"], false);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_exchange_answered_429_waits_a_short_wait_and_says_a_long_one() {
    let twin = twin().await;
    let (dir, _) = base_env(&twin, "exchange-429");
    // A wait longer than a login takes: said with it, nothing saved, never called a bad key.
    twin.garmin(|g| g.exchange_429 = [600].into());
    let (ok, out) = paste(&twin, &dir, KEY, &[]);
    assert!(!ok && out.contains("429") && out.contains("try again in 600 s") && !out.contains("refused the key"), "{out}");
    assert!(vitals::accounts::TokenStore::file(&dir).load("garmin").unwrap().is_none(), "nothing is saved");
    // A short one: waited, then the key is exchanged and saved.
    twin.garmin(|g| g.exchange_429 = [1].into());
    let (ok, out) = paste(&twin, &dir, KEY, &[]);
    assert!(ok, "{out}");
    assert_eq!(twin.state.garmin.lock().unwrap().exchanges, [429, 429, 200]);
    assert!(vitals::accounts::TokenStore::file(&dir).load("garmin").unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn export_takes_the_fit_out_of_garmins_zip() {
    let twin = twin().await;
    let s = with_env_key(&twin, "export").await;
    let ans = query(&s, "activities", json!({"start": ds(ago(10)), "end": ds(ago(1)), "fields": ["name"]})).await;
    let id = ans["data"][0]["id"].as_str().unwrap().to_string();
    let dir = common::scratch().join(format!("vitals-e2e-garmin-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.fit");
    let r = s.ok("vitals_export", json!({"provider": "garmin", "id": id, "format": "fit", "path": path.display().to_string()})).await;
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[8..12], b".FIT", "the FIT itself, not the ZIP");
    assert_eq!(r["bytes"], bytes.len());
    assert!(r["notes"][0].as_str().unwrap().contains("ZIP"));
    let e = s.err("vitals_export", json!({"provider": "garmin", "id": id, "format": "pdf", "path": dir.join("x.pdf").display().to_string()})).await;
    assert!(e.contains("Send one of: fit, tcx, gpx"), "{e}");
    let e = s.err("vitals_export", json!({"provider": "garmin", "id": "1", "format": "fit", "path": dir.join("y.fit").display().to_string()})).await;
    assert!(e.contains("no activity with that id"), "{e}");
    for r in twin.requests() {
        assert!(r.method == "GET" || r.path == vitals::providers::garmin::auth::KEY_EXCHANGE, "only reads and the key exchange: {r:?}");
    }
    s.close().await;
}

/// Garmin serves an activity only as its FIT: `vitals_export` writes its GPX and TCX from that FIT
/// (the same records, positions and laps, each file held to its schema), refuses a GPX of an
/// activity without positions in those words, and reads `~/` as the home folder, saying so.
#[tokio::test(flavor = "multi_thread")]
async fn export_writes_gpx_and_tcx_from_the_fit_and_reads_the_home_folder() {
    let twin = twin().await;
    let home = common::scratch().join(format!("vitals-e2e-garmin-home-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let (_, mut env) = base_env(&twin, "convert");
    env.push(("VITALS_GARMIN_API_KEY".into(), KEY.into()));
    env.push(("HOME".into(), home.display().to_string()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let p = person(&twin);
    let find = |kind: &str| days(ago(14), ago(1)).into_iter().find(|d| sample::activity(&p, *d).is_some_and(|a| a["activityType"]["typeKey"] == kind)).unwrap();
    let (run, ride) = (find("running"), find("cycling"));
    let fit_of = |d| {
        let (_, bytes) = vitals::archive::unzip_one(&sample::activity_zip(&p, d).unwrap(), "fit").unwrap();
        vitals::activity_file::fit::read(&bytes).unwrap()
    };
    let id = sample::activity_id(run).to_string();
    let r = s.ok("vitals_export", json!({"provider": "garmin", "id": id, "format": "gpx", "path": "~/run.gpx"})).await;
    assert_eq!(r["path"], home.join("run.gpx").display().to_string(), "`~/` is the home folder");
    let notes = r["notes"].to_string();
    assert!(notes.contains(&format!("`~` is the home folder, {}", home.display())), "{notes}");
    assert!(notes.contains("Garmin serves only the FIT; vitals wrote this GPX from it"), "{notes}");
    let fit = fit_of(run);
    let gpx = std::fs::read_to_string(home.join("run.gpx")).unwrap();
    assert_eq!(crate::export_files::gpx(&gpx).points, fit.points.len(), "a track point for every record with a position");
    let (lat, lon) = fit.points[0].position.unwrap();
    let seven = |x: f64| format!("{x:.7}").trim_end_matches('0').trim_end_matches('.').to_string();
    assert!(gpx.contains(&format!("<trkpt lat=\"{}\" lon=\"{}\">", seven(lat), seven(lon))), "the FIT's first position");
    assert!(notes.contains(&format!("{} track points with time, position, altitude, heart rate", fit.points.len())), "{notes}");
    let r = s.ok("vitals_export", json!({"provider": "garmin", "id": id, "format": "tcx", "path": "~/run.tcx"})).await;
    assert_eq!(r["format"], "tcx");
    let tcx = crate::export_files::tcx(&std::fs::read_to_string(home.join("run.tcx")).unwrap());
    assert_eq!(tcx.trackpoints, fit.points.len());
    assert_eq!(tcx.laps, fit.laps.iter().map(|l| l.distance_m).collect::<Vec<_>>(), "the FIT's laps");
    // A ride on the trainer has no positions: no GPX, said; its TCX holds its power.
    let ride_id = sample::activity_id(ride).to_string();
    let e = s.err("vitals_export", json!({"provider": "garmin", "id": ride_id, "format": "gpx", "path": "~/ride.gpx"})).await;
    assert!(e.contains("no GPS positions") && e.contains("format=tcx"), "{e}");
    assert!(!home.join("ride.gpx").exists(), "nothing written");
    let r = s.ok("vitals_export", json!({"provider": "garmin", "id": ride_id, "format": "tcx", "path": "~/ride.tcx"})).await;
    assert!(r["notes"].to_string().contains("no GPS positions"), "said: {}", r["notes"]);
    let ride_tcx = std::fs::read_to_string(home.join("ride.tcx")).unwrap();
    assert_eq!(crate::export_files::tcx(&ride_tcx).trackpoints, fit_of(ride).points.len());
    assert!(ride_tcx.contains("<ns3:Watts>") && !ride_tcx.contains("<Position>"), "power, and no invented position");
    let e = s.err("vitals_export", json!({"provider": "garmin", "id": id, "format": "gpx", "path": "~bob/run.gpx"})).await;
    assert!(e.contains("`path`") && e.contains("~name"), "{e}");
    for r in twin.requests() {
        assert!(r.method == "GET" || r.path == vitals::providers::garmin::auth::KEY_EXCHANGE, "only reads and the key exchange: {r:?}");
    }
    s.close().await;
}

#[test]
fn the_twin_answers_404_off_the_allowlist_and_400_over_a_limit() {
    let mut g = vitals_twin::garmin::Garmin::default();
    let tok: Value = serde_json::from_slice(&g.exchange(Some(&format!("ApiKey {KEY}"))).body).unwrap();
    let bearer = tok["access_token"].as_str().unwrap().to_string();
    let mut ask = |path: &str| {
        g.admit(Some(&bearer)).map_err(|a| a.status).unwrap();
        g.answer(path, &Default::default()).status
    };
    assert_eq!(ask("/metrics-service/metrics/trainingreadiness/2026-11-08"), 404);
    assert_eq!(ask("/personalrecord-service/personalrecord/prs/me"), 404);
    assert_eq!(ask("/usersummary-service/stats/stress/daily/2026-10-01/2026-10-31"), 400, "31 days of stress is over its 28");
    assert_eq!(ask("/usersummary-service/stats/stress/daily/2026-10-01/2026-10-28"), 200);
    assert_eq!(g.exchange(Some("ApiKey wrong")).status, 401);
    assert_eq!(g.exchange(Some(&format!("ApiKey {CHINA_KEY}"))).status, 526);
}

/// The key and its tokens appear in no tool result, log line or CLI output, on success or refusal.
#[tokio::test(flavor = "multi_thread")]
async fn the_key_and_its_tokens_never_appear_in_any_output() {
    let twin = twin().await;
    let (dir, mut env) = base_env(&twin, "leak");
    env.push(("VITALS_LOG".into(), "debug".into()));
    let (ok, mut out) = paste(&twin, &dir, KEY, &[]);
    assert!(ok, "{out}");
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    for (tool, args) in [
        ("vitals_sources", json!({})),
        ("vitals_check", json!({})),
        ("vitals_today", json!({"days": 1})),
        ("vitals_query", json!({"collection": "garmin.sleep", "day": ds(ago(1))})),
        ("vitals_connect", json!({"provider": "garmin"})),
    ] {
        out.push_str(&format!("{:?}", s.call_raw(tool, args).await));
    }
    twin.garmin(|g| g.expire_tokens());
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "garmin.steps", "day": ds(ago(2))})).await));
    twin.garmin(|g| {
        g.deleted.push(KEY.into());
        g.expire_tokens();
    });
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "garmin.steps", "day": ds(ago(3))})).await));
    out.push_str(&s.close().await);
    for args in [&["--check"][..], &["forget", "garmin"]] {
        let o = cli(&twin, &dir, args).env("VITALS_LOG", "debug").output().unwrap();
        out.push_str(&String::from_utf8_lossy(&o.stdout));
        out.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    assert!(out.contains("Personal API Key"), "the refusal was exercised");
    for secret in [KEY, "garmin-twin-token-", "-SECRET"] {
        assert!(!out.contains(secret), "a secret leaked ({secret:?})");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_activity_by_id_and_sensitive_data_only_when_switched_on() {
    let twin = twin().await;
    let (_, mut env) = base_env(&twin, "byid");
    env.push(("VITALS_GARMIN_API_KEY".into(), KEY.into()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let p = person(&twin);
    let ride = days(ago(14), ago(1)).into_iter().find(|d| sample::activity(&p, *d).is_some_and(|a| a["activityType"]["typeKey"] == "cycling")).unwrap();
    let id = sample::activity_id(ride).to_string();
    let a = s.ok("vitals_query", json!({"collection": "garmin.activity", "id": id, "format": "records"})).await;
    assert_eq!(a["count"], 1);
    assert_eq!(a["data"][0]["id"], id);
    assert_eq!(a["data"][0]["min_hr_bpm"], sample::outing(&p, ride).unwrap().min_hr() as f64);
    assert_eq!(a["data"][0]["workouts"][0]["workoutName"], "Sweet spot 3x10", "the workout it followed, in the same row");
    assert!(a["data"][0].get("fit").is_none(), "the FIT is read only when asked");
    // Laps, zones and records from the activity's FIT, checked against the FIT itself.
    let l = s.ok("vitals_query", json!({"collection": "garmin.activity", "id": id, "format": "records", "options": {"laps": true}})).await;
    let fit = &l["data"][0]["fit"];
    let zip = sample::activity_zip(&p, ride).unwrap();
    let (_, bytes) = vitals::archive::unzip_one(&zip, "fit").unwrap();
    assert_eq!(fit, &tidied(vitals::providers::garmin::fit::summarise(&bytes, Default::default()).unwrap()["fit"].clone()));
    let listed = sample::activity(&p, ride).unwrap();
    let timer = listed["duration"].as_f64().unwrap();
    assert_eq!(fit["records"]["count"], timer as u64, "a record a second of the timer, every one counted");
    assert!(l["data"][0].get("samples_heart_rate").is_none(), "the records as series only when asked");
    // The records as series a second apart, every one of them (the ride's power too), the FIT's own.
    let raw = s
        .ok("vitals_query", json!({"collection": "garmin.activity", "id": id, "format": "records", "options": {"raw_samples": true}, "max_chars": 2_000_000}))
        .await;
    let want = vitals::providers::garmin::fit::summarise(&bytes, vitals::providers::garmin::fit::Want { gps: false, samples: true }).unwrap();
    for f in ["samples_heart_rate", "samples_speed", "samples_altitude", "samples_power"] {
        assert_eq!(raw["data"][0][f], tidied(want[f].clone()), "{f}");
        assert_eq!(raw["data"][0][f]["items"].as_array().unwrap().len(), timer as usize, "{f}: a reading a second");
    }
    let zone_s: f64 = fit["hr_zone_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum();
    assert_eq!(zone_s, timer, "every second is in one zone");
    let km = listed["distance"].as_f64().unwrap() / 1000.0;
    assert_eq!(fit["laps"].as_array().unwrap().len(), (km / 5.0).ceil() as usize, "a lap every five kilometres of a ride and the rest");
    assert!(fit.get("track").is_none(), "no GPS without options.gps");
    let run = days(ago(14), ago(1)).into_iter().find(|d| sample::activity(&p, *d).is_some_and(|a| a["activityType"]["typeKey"] == "running")).unwrap();
    let g = s
        .ok("vitals_query", json!({"collection": "garmin.activity", "id": sample::activity_id(run).to_string(), "format": "records", "options": {"gps": true}}))
        .await;
    assert!(g["data"][0]["fit"]["track"].as_array().unwrap().len() > 100, "the track when asked");
    for (args, needle) in [
        (json!({"collection": "garmin.activity"}), "send `id`"),
        (json!({"collection": "garmin.activity", "id": id, "day": ds(ago(1))}), "without `start`"),
        (json!({"collection": "garmin.activity", "id": "../x"}), "letters, digits"),
        // A well-formed id the provider does not have (a 404): the `id` is what was wrong.
        (json!({"collection": "garmin.activity", "id": "columns"}), "has no record \"columns\""),
        (json!({"collection": "garmin.sleep", "id": id}), "garmin.activity"),
    ] {
        let e = s.err("vitals_query", args).await;
        assert!(e.contains("`id`") && e.contains(needle), "{e}");
    }
    let e = s.err("vitals_query", json!({"collection": "garmin.food", "day": ds(ago(1))})).await;
    assert!(e.contains("VITALS_GARMIN_SENSITIVE=food"), "{e}");
    s.close().await;
    env.push(("VITALS_GARMIN_SENSITIVE".into(), "food, menstrual_cycle".into()));
    let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect(&twin, true, &pairs).await;
    let (a, b) = (ago(30), ago(1));
    let f = query(&s, "food", json!({"start": ds(a), "end": ds(b)})).await;
    assert_eq!(f["count"], days(a, b).iter().filter(|d| !sample::food(**d).as_object().unwrap().is_empty()).count(), "a day without a log is no row");
    let c = query(&s, "menstrual_cycle", json!({"start": ds(ago(60)), "end": ds(b)})).await;
    assert!(c["count"].as_u64().unwrap() >= 2, "{c}");
    s.close().await;
}
