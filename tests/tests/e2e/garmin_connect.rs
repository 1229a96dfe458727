//! Garmin Connect (unofficial) end to end against the twin: tokens imported from garminconnect's
//! and garth's files (the source left untouched), every collection over a range and a day, the
//! login with and without a one-time code through the terminal (prompt or GARMIN_EMAIL /
//! GARMIN_PASSWORD) and through our loopback page, each of Garmin's refusals ending the attempt
//! with the sentence and holding off the next login in another process, the variant and client-id
//! fallbacks, renewal before expiry and after a 401, a data 429 said and not asked again, and the
//! password found in no output, log or file.
use crate::common;
use common::*;
use jiff::civil::Date;
use rmcp::model::*;
use rmcp::service::{ClientLifecycleMode, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use vitals_twin::garmin_connect::{GarminConnect, Person, SsoFault, CODE, DISPLAY_NAME, EMAIL, PASSWORD};

fn fresh(tag: &str) -> PathBuf {
    let dir = common::scratch().join(format!("vitals-e2e-gc-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn env(twin: &Twin, config: &Path) -> Vec<(String, String)> {
    let mut e: Vec<(String, String)> = GarminConnect::env(&twin.base_url()).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    e.push(("VITALS_CONFIG_DIR".into(), config.display().to_string()));
    e
}

/// `vitals-mcp <args>` with this test's environment, stdin piped.
fn cli(twin: &Twin, config: &Path, args: &[&str], extra: &[(&str, &str)]) -> std::process::Command {
    let mut c = bare_cmd();
    c.args(args)
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_LOG", "debug")
        .env("HOME", config)
        .envs(env(twin, config))
        .envs(extra.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// Run the CLI with `input` on stdin: success, and stdout + stderr.
fn run(mut c: std::process::Command, input: &str) -> (bool, String) {
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

async fn server(twin: &Twin, config: &Path) -> Session {
    let e = env(twin, config);
    let pairs: Vec<(&str, &str)> = e.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    connect(twin, true, &pairs).await
}

async fn query<H: ClientHandler>(s: &Session<H>, collection: &str, args: Value) -> Value {
    let mut a = args.as_object().cloned().unwrap_or_default();
    a.insert("collection".into(), json!(format!("garmin.{collection}")));
    a.entry("format").or_insert(json!("records"));
    a.entry("max_chars").or_insert(json!(2_000_000));
    s.ok("vitals_query", Value::Object(a)).await
}

fn today() -> Date {
    jiff::Zoned::now().with_time_zone(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date()
}

/// Every file under `dir`, read (what a leak would be written into).
fn files_text(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&files_text(&p));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_default()));
        }
    }
    out
}

fn assert_no_password(what: &str, text: &str) {
    assert!(!text.contains(PASSWORD), "the password reached {what}");
    assert!(!text.contains(CODE), "the one-time code reached {what}");
}

/// garminconnect's token folder, as it saves it, at the twin.
fn garminconnect_dir(twin: &Twin, tag: &str) -> PathBuf {
    let src = fresh(&format!("{tag}-src"));
    let file = twin.garmin_connect(|g| g.garminconnect_file("GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2"));
    std::fs::write(src.join("garmin_tokens.json"), serde_json::to_string_pretty(&file).unwrap()).unwrap();
    src
}

#[tokio::test(flavor = "multi_thread")]
async fn imported_garminconnect_tokens_read_every_collection_over_a_range_and_a_day() {
    let twin = twin().await;
    let config = fresh("import-gc");
    let src = garminconnect_dir(&twin, "import-gc");
    let before = std::fs::read(src.join("garmin_tokens.json")).unwrap();
    let mtime = std::fs::metadata(src.join("garmin_tokens.json")).unwrap().modified().unwrap();

    // Without a session: an error that says what connecting involves, and no login is started.
    let s = server(&twin, &config).await;
    let e = s.err("vitals_query", json!({"collection": "garmin.vo2max", "day": today().yesterday().unwrap().to_string()})).await;
    assert!(e.contains("vitals_connect (provider=garmin-connect)") && e.contains("unofficial") && e.contains("password is used once"), "{e}");
    assert!(twin.garmin_connect(|g| g.sign_in_pages.is_empty()), "a query never starts this login");
    let day_report = s.ok("vitals_today", json!({"days": 2})).await;
    assert!(day_report["providers"].as_array().unwrap().iter().all(|p| p["provider"] != "garmin-connect"), "not connected: not part of the day");
    s.close().await;

    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect", "--import", src.to_str().unwrap()], &[]), "");
    assert!(ok, "{out}");
    assert_eq!(std::fs::read(src.join("garmin_tokens.json")).unwrap(), before, "the source file is never changed");
    assert_eq!(std::fs::metadata(src.join("garmin_tokens.json")).unwrap().modified().unwrap(), mtime);
    let saved = vitals::accounts::TokenStore::file(&config).load("garmin-connect").unwrap().expect("saved");
    assert_eq!(saved.extra.get("display_name").map(String::as_str), Some(DISPLAY_NAME));

    let s = server(&twin, &config).await;
    let p = Person;
    let end = today().yesterday().unwrap();
    let start = end.checked_sub(jiff::Span::new().days(29)).unwrap();
    let days: Vec<Date> = (0..30).map(|i| start.checked_add(jiff::Span::new().days(i)).unwrap()).collect();
    let range = json!({"start": start.to_string(), "end": end.to_string()});

    let r = query(&s, "training_readiness", range.clone()).await;
    assert_eq!(r["count"], 60, "two snapshots a day: {}", r["notices"]);
    let mornings: Vec<&Value> = r["data"].as_array().unwrap().iter().filter(|x| x["morning"] == true).collect();
    assert_eq!(mornings.len(), 30);
    assert_eq!(mornings[0]["score"], tidied(p.readiness(start)[1]["score"].clone()));
    assert!(r["notices"]["truncated"].is_null(), "{}", r["notices"]);

    let r = query(&s, "training_status", range.clone()).await;
    assert_eq!(r["count"], 30);
    let first = &r["data"][0];
    assert_eq!(
        (first["day"].as_str(), first["status"].as_str(), first["load_balance"].as_str()),
        (Some(start.to_string().as_str()), Some("productive"), Some("BALANCED"))
    );
    assert_eq!(first["acute_load"], p.acute_load(start));
    assert_eq!(first["device"], "fenix 7X Pro Sapphire Solar");

    let r = query(&s, "vo2max", range.clone()).await;
    let expected: Vec<Value> = days.iter().filter_map(|d| p.vo2max(*d).map(|_| tidied(json!(p.vo2(*d))))).collect();
    let got: Vec<Value> = r["data"].as_array().unwrap().iter().map(|x| x["running"].clone()).collect();
    assert_eq!(got, expected, "one row per day Garmin updated it");

    let r = query(&s, "race_predictions", range.clone()).await;
    assert_eq!(r["count"], 30);
    let f = p.five_k_s(start);
    assert_eq!(r["data"][0]["time_5k_s"], f);
    let clock = format!("0:{:02}:{:02}", f / 60, f % 60);
    assert_eq!(r["data"][0]["time_5k"], clock.as_str());

    let r = query(&s, "lactate_threshold", range.clone()).await;
    let changes: Vec<Date> = days.iter().copied().filter(|d| p.threshold(*d, "lactateThresholdSpeed").is_some()).collect();
    assert_eq!(r["count"], changes.len() as u64, "{r}");
    let row = &r["data"][0];
    assert_eq!(row["speed_m_s"], json!((p.threshold_speed_m_s(changes[0]) * 1000.0).round() / 1000.0), "converted from tenths of m/s");
    assert_eq!(row["heart_rate_bpm"], tidied(json!(p.threshold_hr(changes[0]) as f64)), "both routes in one row");
    assert!(r["notices"]["rules"].to_string().contains("tenths of m/s"), "the conversion is said: {}", r["notices"]);
    // Asked again, from memory: each page decoded as the route it came from (its page token kept).
    let again = query(&s, "lactate_threshold", range.clone()).await;
    assert!(again["notices"]["cached"].is_object(), "{}", again["notices"]);
    assert_eq!(again["data"], r["data"], "the cached answer is the fetched one");

    let r = query(&s, "personal_records", json!({})).await;
    let types: Vec<&str> = r["data"].as_array().unwrap().iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["garmin type 16", "5 km", "longest run"]);
    assert_eq!(r["data"][1]["activity_id"], 10000000003i64);

    let r = query(&s, "activity_splits", json!({"id": "10000000001"})).await;
    let row = &r["data"][0];
    assert_eq!((row["laps"].as_array().unwrap().len(), row["typed_splits"].as_array().unwrap().len()), (3, 2), "{row}");
    assert!(row["laps"][0].get("startLatitude").is_none(), "no coordinates unless asked");
    let r = query(&s, "activity_splits", json!({"id": "10000000001", "options": {"gps": true}})).await;
    assert_eq!(r["data"][0]["laps"][0]["startLatitude"], 60.17);

    // Connected, readiness is part of the day.
    let t = s.ok("vitals_today", json!({"days": 2})).await;
    let gc = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin-connect").expect("in vitals_today").clone();
    assert_eq!(gc["sections"][0]["role"], "readiness", "{gc}");
    assert!(gc.get("errors").is_none(), "{gc}");
    // A single day of each dated collection.
    let day = json!({"day": end.to_string()});
    assert_eq!(query(&s, "training_readiness", day.clone()).await["count"], 2);
    assert_eq!(query(&s, "training_status", day.clone()).await["count"], 1);
    assert_eq!(query(&s, "race_predictions", day.clone()).await["count"], 1);
    let vo2 = query(&s, "vo2max", day.clone()).await;
    assert_eq!(vo2["count"], u64::from(p.vo2max(end).is_some()), "{vo2}");
    let lt = query(&s, "lactate_threshold", day.clone()).await;
    assert_eq!(lt["count"], u64::from(p.threshold(end, "lactateThresholdSpeed").is_some()), "{lt}");

    // The routes took the display name URL-encoded and the app's own headers.
    let (paths, headers) = twin.garmin_connect(|g| (g.data_requests.clone(), g.data_headers.clone()));
    assert!(paths.iter().any(|p| p == "/personalrecord-service/personalrecord/prs/runner%201.234"), "{paths:?}");
    assert!(headers
        .iter()
        .all(|h| h.get("x-garmin-client-platform").map(String::as_str) == Some("Android") && h.get("user-agent").is_some_and(|u| u.starts_with("GCM-"))));

    // Each collection says where it comes from.
    let sources = s.ok("vitals_sources", json!({"provider": "garmin-connect"})).await;
    let gc = sources["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin-connect").expect("listed").clone();
    let listed = s.ok("vitals_sources", json!({})).await;
    let entry = listed["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin-connect").unwrap().clone();
    assert!(entry["connect"].as_str().unwrap().contains("(unofficial), opt-in"), "the short listing says it too, once: {entry}");
    for c in gc["collections"].as_array().unwrap() {
        assert!(c["name"].as_str().unwrap().starts_with("garmin."), "{c}");
        assert!(c["summary"].as_str().unwrap().contains("unofficial API") && c["summary"].as_str().unwrap().contains("may stop working without notice"), "{c}");
        assert_eq!(c["available"], true, "{c}");
    }
    assert_eq!(gc["collections"].as_array().unwrap().len(), 11);
    // The Personal API keeps its own collections (and its sample data): the session is not used for them.
    let before = twin.garmin_connect(|g| g.data_requests.len());
    let _ = query(&s, "daily_summary", json!({"day": end.to_string()})).await;
    assert_eq!(twin.garmin_connect(|g| g.data_requests.len()), before, "garmin.daily_summary is the Personal API's");
    s.close().await;
}

/// Issue 48: endurance score (a request a day), hill score and sleep scores (28 days a request),
/// breathing rate (a request a day) over 30 days and a day, each day from the twin's person:
/// a level read against the thresholds sent with the score, the primary watch's hill score, Garmin's
/// no-reading breathing values null and a day of nothing no row, the readings' extremes the day's.
#[tokio::test(flavor = "multi_thread")]
async fn scores_breathing_and_sleep_scores_over_a_month_and_a_day() {
    let twin = twin().await;
    let config = fresh("scores");
    let src = garminconnect_dir(&twin, "scores");
    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect", "--import", src.to_str().unwrap()], &[]), "");
    assert!(ok, "{out}");
    let s = server(&twin, &config).await;
    let p = Person;
    let end = today().yesterday().unwrap();
    let start = end.checked_sub(jiff::Span::new().days(29)).unwrap();
    let days: Vec<Date> = (0..30).map(|i| start.checked_add(jiff::Span::new().days(i)).unwrap()).collect();
    let range = json!({"start": start.to_string(), "end": end.to_string()});
    let dates = |r: &Value| -> Vec<String> { r["data"].as_array().unwrap().iter().map(|x| x["day"].as_str().unwrap().to_string()).collect() };
    let before = twin.garmin_connect(|g| g.data_requests.len());

    let r = query(&s, "endurance_score", range.clone()).await;
    let scored: Vec<Date> = days.iter().copied().filter(|d| p.endurance(*d).is_some()).collect();
    assert_eq!(dates(&r), scored.iter().map(Date::to_string).collect::<Vec<_>>(), "a day Garmin answers 204 is no row: {}", r["notices"]);
    for (row, d) in r["data"].as_array().unwrap().iter().zip(&scored) {
        let score = p.endurance_score(*d);
        assert_eq!(row["score"], score);
        assert_eq!(row["level"], if score >= 7300 { "expert" } else { "well trained" }, "{row}");
        assert_eq!(row["level_thresholds"]["elite"], 8800);
    }
    let r = query(&s, "hill_score", range.clone()).await;
    let scored: Vec<Date> = days.iter().copied().filter(|d| !p.hill(*d).is_empty()).collect();
    assert_eq!(dates(&r), scored.iter().map(Date::to_string).collect::<Vec<_>>(), "one row a day, in date order");
    let scores: Vec<Value> = r["data"].as_array().unwrap().iter().map(|x| x["score"].clone()).collect();
    assert_eq!(scores, scored.iter().map(|d| json!(p.hill_score(*d))).collect::<Vec<_>>(), "the primary watch's score");

    let r = query(&s, "sleep_scores", range.clone()).await;
    let nights: Vec<(Date, Value)> = days.iter().filter_map(|d| p.sleep_score(*d).map(|v| (*d, v["value"].clone()))).collect();
    assert_eq!(dates(&r), nights.iter().map(|(d, _)| d.to_string()).collect::<Vec<_>>());
    assert_eq!(r["data"].as_array().unwrap().iter().map(|x| x["score"].clone()).collect::<Vec<_>>(), nights.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>());

    let r = query(&s, "respiration", range.clone()).await;
    let worn: Vec<Date> = days.iter().copied().filter(|d| !p.respiration(*d)["respirationValuesArray"].as_array().unwrap().is_empty()).collect();
    assert!(worn.len() < days.len(), "a day of nothing is in the range");
    assert_eq!(dates(&r), worn.iter().map(Date::to_string).collect::<Vec<_>>(), "a day with no reading at all is no row");
    for (row, d) in r["data"].as_array().unwrap().iter().zip(&worn) {
        let readings = &row["readings"];
        assert_eq!((readings["interval_s"].as_f64(), readings["items"].as_array().unwrap().len()), (Some(120.0), 720), "{d}");
        let valid: Vec<f64> = readings["items"].as_array().unwrap().iter().filter_map(Value::as_f64).collect();
        assert!(valid.len() < 720, "{d}: Garmin's -2 is a gap, not a reading");
        assert_eq!(row["lowest_per_min"].as_f64(), valid.iter().cloned().reduce(f64::min));
        assert_eq!(row["highest_per_min"].as_f64(), valid.iter().cloned().reduce(f64::max));
        assert_eq!(valid[0], p.breathing(*d, 0));
        assert_eq!(row["sleep_end"], format!("{d}T06:00:00"));
    }
    // One request a day for the daily routes, 28 days a request for the stats routes.
    let paths = twin.garmin_connect(|g| g.data_requests[before..].to_vec());
    let count = |prefix: &str| paths.iter().filter(|x| x.starts_with(prefix)).count();
    assert_eq!(count("/metrics-service/metrics/endurancescore"), 30);
    assert_eq!(count("/wellness-service/wellness/daily/respiration/"), 30);
    assert!((2..=3).contains(&count("/metrics-service/metrics/hillscore/stats")), "{paths:?}");
    assert!((2..=3).contains(&count("/wellness-service/stats/daily/sleep/score/")), "{paths:?}");

    // One day each.
    let day = json!({"day": end.to_string()});
    assert_eq!(query(&s, "endurance_score", day.clone()).await["count"], u64::from(p.endurance(end).is_some()));
    assert_eq!(query(&s, "hill_score", day.clone()).await["count"], u64::from(!p.hill(end).is_empty()));
    assert_eq!(query(&s, "sleep_scores", day.clone()).await["count"], u64::from(p.sleep_score(end).is_some()));
    assert_eq!(query(&s, "respiration", day.clone()).await["count"], u64::from(worn.contains(&end)));
    let listed = s.ok("vitals_sources", json!({})).await;
    let gc = listed["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin-connect").unwrap()["collections"].clone();
    for c in ["garmin.endurance_score", "garmin.hill_score", "garmin.respiration", "garmin.sleep_scores"] {
        assert!(gc[c].as_str().is_some(), "{c}: {gc}");
    }
    let entry = listed["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "garmin-connect").unwrap().clone();
    assert!(entry["connect"].as_str().unwrap().contains("(unofficial), opt-in"), "said once for its collections: {entry}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn garth_files_import_and_a_folder_from_the_tools_variable() {
    let twin = twin().await;
    let config = fresh("garth");
    let src = fresh("garth-src");
    // garth's pair, its OAuth2 token ending in 10 minutes: renewed at import with the OAuth1 token.
    let (o1, o2) = twin.garmin_connect(|g| g.garth_files(600));
    std::fs::write(src.join("oauth1_token.json"), o1.to_string()).unwrap();
    std::fs::write(src.join("oauth2_token.json"), o2.to_string()).unwrap();
    let before = (std::fs::read(src.join("oauth1_token.json")).unwrap(), std::fs::read(src.join("oauth2_token.json")).unwrap());
    // No folder named: GARTH_HOME says where garth keeps it (GARMINTOKENS holding tokens inline is
    // garminconnect's other form: never read as a folder, never echoed).
    let inline = r#"{"di_token": "inline-SECRET-token", "di_refresh_token": "inline-SECRET-refresh"}"#;
    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect", "--import"], &[("GARMINTOKENS", inline), ("GARTH_HOME", src.to_str().unwrap())]), "");
    assert!(!out.contains("inline-SECRET"), "{out}");
    assert!(ok && out.contains(src.to_str().unwrap()) && out.contains("which was only read"), "{out}");
    assert_eq!(twin.garmin_connect(|g| g.oauth1_steps.clone()), ["exchange (renewal)"], "renewed by exchanging the OAuth1 token, without the audience");
    assert_eq!(
        (std::fs::read(src.join("oauth1_token.json")).unwrap(), std::fs::read(src.join("oauth2_token.json")).unwrap()),
        before,
        "garth's files are never changed"
    );
    let s = server(&twin, &config).await;
    assert_eq!(query(&s, "race_predictions", json!({"day": today().yesterday().unwrap().to_string()})).await["count"], 1);
    // Garmin ends the access token: renewed once more with the OAuth1 token.
    twin.garmin_connect(|g| g.expire_tokens());
    assert_eq!(query(&s, "race_predictions", json!({"day": today().checked_sub(jiff::Span::new().days(2)).unwrap().to_string()})).await["count"], 1);
    assert_eq!(twin.garmin_connect(|g| g.oauth1_steps.len()), 2);
    let log = s.close().await;
    let secret = o1["oauth_token_secret"].as_str().unwrap();
    for (what, text) in [("the terminal", &out), ("the log", &log)] {
        assert!(!text.contains(secret) && !text.contains(vitals_twin::garmin_connect::CONSUMER_SECRET), "a secret reached {what}");
    }

    // A folder with neither tool's files is said, and nothing is saved.
    let empty = fresh("garth-empty");
    let other = fresh("garth-other-config");
    let (ok, out) = run(cli(&twin, &other, &["auth", "garmin-connect", "--import", empty.to_str().unwrap()], &[]), "");
    assert!(!ok && out.contains("neither garmin_tokens.json (garminconnect) nor oauth1_token.json and oauth2_token.json (garth)"), "{out}");
}

/// Log in at the terminal; `input` is what the person types.
fn terminal_login(twin: &Twin, config: &Path, input: &str, from_env: bool) -> (bool, String) {
    let extra: Vec<(&str, &str)> = if from_env { vec![("GARMIN_EMAIL", EMAIL), ("GARMIN_PASSWORD", PASSWORD)] } else { vec![] };
    run(cli(twin, config, &["auth", "garmin-connect"], &extra), input)
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_login_with_and_without_a_code_never_keeps_the_password() {
    let twin = twin().await;
    // No code: the email and password from the environment (a script).
    let config = fresh("cli-plain");
    let (ok, out) = terminal_login(&twin, &config, "", true);
    assert!(ok, "{out}");
    assert_eq!(
        twin.garmin_connect(|g| (g.sign_in_pages.len(), g.logins.len(), g.exchanges.clone())),
        (1, 1, vec!["GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2".to_string()])
    );
    let s = server(&twin, &config).await;
    assert_eq!(query(&s, "training_status", json!({"day": today().yesterday().unwrap().to_string()})).await["count"], 1);
    let log = s.close().await;
    assert_no_password("the server's log", &log);
    assert_no_password("the terminal", &out);
    assert_no_password("the config folder", &files_text(&config));

    // A code by email, typed at the prompt; then one from an authenticator app.
    for method in ["email", "totp"] {
        twin.garmin_connect(|g| g.mfa = Some(if method == "email" { "email" } else { "totp" }));
        let config = fresh(&format!("cli-{method}"));
        let (ok, out) = terminal_login(&twin, &config, &format!("{EMAIL}\n{PASSWORD}\n{CODE}\n"), false);
        assert!(ok, "{out}");
        assert!(out.contains(if method == "email" { "one-time code by email (to ru****@example.org)" } else { "authenticator app" }), "{out}");
        assert_no_password("the terminal", &out);
        assert_no_password("the config folder", &files_text(&config));
        assert!(vitals::accounts::TokenStore::file(&config).load("garmin-connect").unwrap().is_some());
    }
    // A wrong password is said, and no back-off follows (it is the person's answer, not Garmin's defences).
    twin.garmin_connect(|g| g.mfa = None);
    let config = fresh("cli-wrong");
    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect"], &[("GARMIN_EMAIL", EMAIL), ("GARMIN_PASSWORD", "not-it")]), "");
    assert!(!ok && out.contains("Garmin did not accept that email and password"), "{out}");
    assert!(!config.join("garmin-connect-backoff.json").exists());
    assert!(!out.contains("not-it"));
}

#[tokio::test(flavor = "multi_thread")]
async fn each_refusal_ends_the_attempt_with_the_sentence_and_holds_off_the_next_login() {
    let twin = twin().await;
    for fault in [SsoFault::Http429Json, SsoFault::Http429Html, SsoFault::Http427, SsoFault::Cloudflare403, SsoFault::Captcha, SsoFault::Json429] {
        twin.garmin_connect(|g| {
            g.sso_fault = fault;
            g.sso_retry_after_s = (fault == SsoFault::Http429Json).then_some(2 * 3600 + 5);
            g.logins.clear();
            g.sign_in_pages.clear();
        });
        let config = fresh(&format!("refused-{fault:?}"));
        let (ok, out) = terminal_login(&twin, &config, "", true);
        let hours = if fault == SsoFault::Http429Json { 3 } else { 4 };
        let sentence = format!(
            "Garmin refused the login from this network; try again in {hours} hours, or import tokens from a tool that logged in from your own network"
        );
        assert!(!ok && out.contains(&sentence), "{fault:?}: {out}");
        assert_eq!(twin.garmin_connect(|g| g.logins.len()), 1, "{fault:?}: the attempt ends at once, no other way in is tried");
        assert_no_password("the terminal", &out);
        // Another process: no login is tried while the refusal holds.
        let (ok, out) = terminal_login(&twin, &config, "", true);
        assert!(!ok && out.contains("Garmin refused the login from this network") && out.contains("No login was tried"), "{fault:?}: {out}");
        assert_eq!(twin.garmin_connect(|g| (g.sign_in_pages.len(), g.logins.len())), (1, 1), "{fault:?}: remembered across processes");
    }
    // The token service's 429 ends it the same way.
    twin.garmin_connect(|g| {
        g.sso_fault = SsoFault::None;
        g.di_429 = true;
    });
    let config = fresh("refused-di");
    let (ok, out) = terminal_login(&twin, &config, "", true);
    assert!(!ok && out.contains("Garmin refused the login from this network"), "{out}");
    assert_eq!(twin.garmin_connect(|g| g.exchanges.len()), 1, "a 429 stops the client-id order");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gone_mobile_login_falls_back_to_the_portal_and_refused_clients_to_the_next_id() {
    let twin = twin().await;
    twin.garmin_connect(|g| {
        g.sso_fault = SsoFault::MobileGone;
        g.failing_clients = vec!["GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2", "GARMIN_CONNECT_MOBILE_ANDROID_DI_2024Q4"];
    });
    let config = fresh("fallbacks");
    let (ok, out) = terminal_login(&twin, &config, "", true);
    assert!(ok, "{out}");
    let (pages, exchanges) = twin.garmin_connect(|g| (g.sign_in_pages.clone(), g.exchanges.clone()));
    assert_eq!(pages, ["/mobile/sso/en_US/sign-in", "/mobile/sso/en/sign-in", "/portal/sso/en-US/sign-in"], "iOS, then Android (flow B), then the portal");
    assert_eq!(exchanges, ["GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2", "GARMIN_CONNECT_MOBILE_ANDROID_DI_2024Q4", "GARMIN_CONNECT_MOBILE_ANDROID_DI"]);
    let saved = vitals::accounts::TokenStore::file(&config).load("garmin-connect").unwrap().unwrap();
    assert_eq!(saved.extra.get("client_id").map(String::as_str), Some("GARMIN_CONNECT_MOBILE_ANDROID_DI"));
}

#[tokio::test(flavor = "multi_thread")]
async fn renewal_before_expiry_and_after_a_401_and_a_429_said_not_asked_again() {
    let twin = twin().await;
    // Tokens that end within the 15-minute margin: renewed before the first request.
    twin.garmin_connect(|g| g.token_lifetime_s = 600);
    let config = fresh("renew");
    let src = garminconnect_dir(&twin, "renew");
    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect", "--import", src.to_str().unwrap()], &[]), "");
    assert!(ok, "{out}");
    let renewed_at_import = twin.garmin_connect(|g| g.refreshes);
    assert_eq!(renewed_at_import, 1, "an import of tokens about to end renews them first");
    twin.garmin_connect(|g| g.token_lifetime_s = 86_400);
    let s = server(&twin, &config).await;
    let day = json!({"day": today().yesterday().unwrap().to_string()});
    let _ = query(&s, "race_predictions", day.clone()).await;
    assert_eq!(twin.garmin_connect(|g| g.refreshes), 2, "renewed before use");
    // The twin ends every access token: one 401, one renewal, the answer.
    twin.garmin_connect(|g| g.expire_tokens());
    let r = query(&s, "race_predictions", json!({"day": today().checked_sub(jiff::Span::new().days(3)).unwrap().to_string()})).await;
    assert_eq!(r["count"], 1, "{r}");
    assert_eq!(twin.garmin_connect(|g| g.refreshes), 3);
    // A refresh that hands back no new refresh token: the one kept still renews, again and again.
    twin.garmin_connect(|g| g.rotate = false);
    for (i, back) in [4, 5].into_iter().enumerate() {
        twin.garmin_connect(|g| g.expire_tokens());
        let day = today().checked_sub(jiff::Span::new().days(4 + i as i64)).unwrap().to_string();
        assert_eq!(query(&s, "race_predictions", json!({"day": day})).await["count"], 1);
        assert_eq!(twin.garmin_connect(|g| g.refreshes), back);
    }
    // A 429: the answer stops there and says so; nothing is asked again.
    twin.garmin_connect(|g| g.data_429_next = 50);
    let before = twin.garmin_connect(|g| g.data_requests.len());
    let r = query(
        &s,
        "training_status",
        json!({"start": today().checked_sub(jiff::Span::new().days(10)).unwrap().to_string(), "end": today().yesterday().unwrap().to_string()}),
    )
    .await;
    let t = &r["notices"]["truncated"];
    assert_eq!(t["cause"], "rate_limited", "{r}");
    assert!(t["reason"].as_str().unwrap().contains("not asked again"), "{t}");
    let sent = twin.garmin_connect(|g| g.data_requests.len()) - before;
    assert!(sent <= 2, "each window in flight met one 429 and stopped: {sent} requests");
    s.close().await;
}

/// Garmin's token service busy (429) when a 401 asks for a renewal says nothing about the session:
/// the answer is cut there with `continue_from`, like any transient fault, never an auth error
/// asking the person to log in again; once the service answers, the read resumes and renews.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_service_down_for_a_moment_cuts_the_answer_rather_than_failing_the_login() {
    let twin = twin().await;
    let config = fresh("renew-down");
    let src = garminconnect_dir(&twin, "renew-down");
    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect", "--import", src.to_str().unwrap()], &[]), "");
    assert!(ok, "{out}");
    let s = server(&twin, &config).await;
    twin.garmin_connect(|g| {
        g.expire_tokens();
        g.di_429 = true;
    });
    let range = json!({"start": today().checked_sub(jiff::Span::new().days(3)).unwrap().to_string(), "end": today().yesterday().unwrap().to_string()});
    let r = query(&s, "training_status", range.clone()).await;
    let t = &r["notices"]["truncated"];
    assert!(t["continue_from"].is_string(), "cut with where to resume: {r}");
    assert!(t["reason"].as_str().unwrap_or_default().contains("429"), "said as the token service's answer: {t}");
    twin.garmin_connect(|g| g.di_429 = false);
    let before = twin.garmin_connect(|g| g.refreshes);
    let again = query(&s, "training_status", range).await;
    assert!(again["notices"]["truncated"].is_null(), "complete once the token service answers: {again}");
    assert_eq!(twin.garmin_connect(|g| g.refreshes), before + 1, "the session was renewed, not logged in again");
    s.close().await;
}

/// A saved DI login, a server reading with it, and its access token ended at Garmin: the next read's
/// 401 asks the token service for a renewal.
async fn renewing(twin: &Twin, tag: &str) -> (Session, Value) {
    let config = fresh(tag);
    let src = garminconnect_dir(twin, tag);
    let (ok, out) = run(cli(twin, &config, &["auth", "garmin-connect", "--import", src.to_str().unwrap()], &[]), "");
    assert!(ok, "{out}");
    let s = server(twin, &config).await;
    twin.garmin_connect(|g| g.expire_tokens());
    let range = json!({"start": today().checked_sub(jiff::Span::new().days(3)).unwrap().to_string(), "end": today().yesterday().unwrap().to_string()});
    (s, range)
}

/// A token service that limits the renewal for a moment (429 with Retry-After 1 s) is waited as
/// a query's 429 is, and asked again: the answer is whole and the session renewed once. Before
/// the logins shared the one policy, the first 429 cut the answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_renewal_limited_for_a_second_is_waited_and_the_answer_is_whole() {
    let twin = twin().await;
    let (s, range) = renewing(&twin, "renew-429-short").await;
    let before = twin.garmin_connect(|g| {
        (g.token_429_next, g.token_retry_after_s) = (2, Some(1));
        g.refreshes
    });
    let r = query(&s, "training_status", range).await;
    assert!(r["notices"]["truncated"].is_null(), "whole after the waits: {r}");
    assert_eq!(twin.garmin_connect(|g| (g.token_429_next, g.refreshes)), (0, before + 1), "both 429s asked again after, and renewed once");
    s.close().await;
}

/// A 429 asking for longer than a login waits (an hour) is not waited: the answer is cut with
/// `continue_from`, said as the token service limiting the renewal with when to come back, and the
/// service is asked once, not again at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_renewal_limited_for_an_hour_cuts_the_answer_with_when_to_come_back() {
    let twin = twin().await;
    let (s, range) = renewing(&twin, "renew-429-long").await;
    twin.garmin_connect(|g| (g.token_429_next, g.token_retry_after_s) = (100, Some(3600)));
    let r = query(&s, "training_status", range.clone()).await;
    let t = &r["notices"]["truncated"];
    assert!(t["continue_from"].is_string(), "cut with where to resume: {r}");
    assert_eq!(t["cause"], "rate_limited", "{t}");
    let reason = t["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("limited the renewal") && reason.contains("429") && reason.contains("wait 3600 s"), "{reason}");
    // Each window the 401 reached asks once (the read's two windows), none again after the hour's 429.
    let asked = 100 - twin.garmin_connect(|g| g.token_429_next);
    assert!((1..=2).contains(&asked), "asked {asked} times");
    twin.garmin_connect(|g| g.token_429_next = 0);
    assert!(query(&s, "training_status", range).await["notices"]["truncated"].is_null(), "whole once the service answers");
    s.close().await;
}

/// The previous generation's renewal (garth's OAuth1 token exchanged again) keeps its failure's
/// kind: the exchange failing (503, after its retry) or limiting for an hour says nothing of the
/// session, so the answer is cut with `continue_from`; it used to be an auth error saying the
/// OAuth1 token "has ended".
#[tokio::test(flavor = "multi_thread")]
async fn an_oauth1_renewal_failing_for_a_moment_cuts_the_answer_rather_than_ending_the_login() {
    let twin = twin().await;
    let config = fresh("oauth1-down");
    let src = fresh("oauth1-down-src");
    let (o1, o2) = twin.garmin_connect(|g| g.garth_files(86_400));
    std::fs::write(src.join("oauth1_token.json"), o1.to_string()).unwrap();
    std::fs::write(src.join("oauth2_token.json"), o2.to_string()).unwrap();
    let (ok, out) = run(cli(&twin, &config, &["auth", "garmin-connect", "--import", src.to_str().unwrap()], &[]), "");
    assert!(ok, "{out}");
    let s = server(&twin, &config).await;
    twin.garmin_connect(|g| {
        g.expire_tokens();
        g.token_503_next = 2;
    });
    let day = |n: i64| json!({"day": today().checked_sub(jiff::Span::new().days(n)).unwrap().to_string()});
    let r = query(&s, "race_predictions", day(1)).await;
    let t = &r["notices"]["truncated"];
    assert!(t["continue_from"].is_string() && t["cause"] == "provider_failing", "cut, not an auth error: {r}");
    assert!(t["reason"].as_str().unwrap_or_default().contains("HTTP 503"), "{t}");
    twin.garmin_connect(|g| (g.token_429_next, g.token_retry_after_s) = (100, Some(3600)));
    let t = query(&s, "race_predictions", day(2)).await["notices"]["truncated"].clone();
    assert!(t["cause"] == "rate_limited" && t["reason"].as_str().unwrap_or_default().contains("wait 3600 s"), "{t}");
    twin.garmin_connect(|g| g.token_429_next = 0);
    assert_eq!(query(&s, "race_predictions", day(3)).await["count"], 1, "renewed once the service answers");
    s.close().await;
}

/// A client with URL elicitation whose person types into the page it is shown.
#[derive(Clone, Default)]
struct Person2 {
    pages: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Person2 {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        ClientConfig::new(caps, Implementation::new("e2e-garmin-person", "0"))
    }
    async fn create_elicitation(&self, request: ElicitRequestParams, _: RequestContext<RoleClient>) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams { url, .. } = request else { panic!("vitals never asks for a password through a form") };
        let pages = self.pages.clone();
        tokio::spawn(async move {
            let c = reqwest::Client::new();
            let mut page = c.get(&url).send().await.unwrap().text().await.unwrap();
            pages.lock().unwrap().push(page.clone());
            for _ in 0..3 {
                let form: Vec<(&str, &str)> = if page.contains("name=\"code\"") {
                    vec![("code", CODE)]
                } else if page.contains("name=\"email\"") {
                    vec![("email", EMAIL), ("password", PASSWORD)]
                } else {
                    break;
                };
                page = c.post(&url).form(&form).send().await.unwrap().text().await.unwrap();
                pages.lock().unwrap().push(page.clone());
            }
        });
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn login_through_our_loopback_page_with_a_code() {
    let twin = twin().await;
    twin.garmin_connect(|g| g.mfa = Some("email"));
    let config = fresh("page");
    let person = Person2::default();
    let e = env(&twin, &config);
    let pairs: Vec<(&str, &str)> = e.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let s = connect_as(&twin, true, &pairs, ClientLifecycleMode::Initialize, person.clone()).await;
    let r = s.call_raw("vitals_connect", json!({"provider": "garmin-connect"})).await;
    assert!(!r.is_error.unwrap_or(false), "{}", text(&r));
    let said = text(&r);
    assert!(said.to_lowercase().contains("connected"), "{said}");
    let pages = person.pages.lock().unwrap().clone();
    assert!(pages[0].contains("name=\"password\"") && pages[0].contains("unofficial"), "{}", pages[0]);
    assert!(pages.iter().any(|p| p.contains("one-time code by email")), "{pages:?}");
    let r = query(&s, "training_readiness", json!({"day": today().yesterday().unwrap().to_string()})).await;
    assert_eq!(r["count"], 2);
    let log = s.close().await;
    assert_no_password("the server's log", &log);
    assert_no_password("a tool result", &said);
    assert_no_password("a page", &pages.join("\n").replace("name=\"code\"", ""));
    assert_no_password("the config folder", &files_text(&config));
}

#[tokio::test(flavor = "multi_thread")]
async fn when_the_di_exchange_is_down_the_previous_generation_logs_in_and_renews() {
    let twin = twin().await;
    twin.garmin_connect(|g| g.di_down = true);
    let config = fresh("flow-b");
    let (ok, out) = terminal_login(&twin, &config, "", true);
    assert!(ok, "{out}");
    let (pages, steps) = twin.garmin_connect(|g| (g.sign_in_pages.clone(), g.oauth1_steps.clone()));
    assert_eq!(pages, ["/mobile/sso/en_US/sign-in", "/mobile/sso/en/sign-in"], "the DI flow, then flow B through Android's client");
    assert_eq!(steps, ["preauthorized", "exchange (login)"]);
    let saved = vitals::accounts::TokenStore::file(&config).load("garmin-connect").unwrap().unwrap();
    assert_eq!(saved.extra.get("generation").map(String::as_str), Some("oauth1"));
    let s = server(&twin, &config).await;
    twin.garmin_connect(|g| g.expire_tokens());
    assert_eq!(query(&s, "training_status", json!({"day": today().yesterday().unwrap().to_string()})).await["count"], 1);
    assert_eq!(twin.garmin_connect(|g| g.oauth1_steps.clone()), ["preauthorized", "exchange (login)", "exchange (renewal)"]);
    let log = s.close().await;
    assert_no_password("the server's log", &log);
    assert_no_password("the terminal", &out);
    assert_no_password("the config folder", &files_text(&config));
}
