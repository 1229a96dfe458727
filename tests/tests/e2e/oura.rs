//! End to end: a real MCP client drives `vitals-mcp` over stdio against the Oura twin.
use crate::common;
use common::*;
use serde_json::{json, Value};

const START: &str = "2026-06-10";
const END: &str = "2026-06-16";
/// Every collection the twin serves: its documents and its series.
fn collections() -> impl Iterator<Item = &'static &'static str> {
    vitals_twin::oura::DOCUMENTS.iter().chain(vitals_twin::oura::SERIES)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_collection_is_complete_over_a_range() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    for c in collections() {
        // A budget the raw week fits in: this test is about completeness, not size.
        let a = s.ok("vitals_query", json!({"collection": format!("oura.{c}"), "start": START, "end": END, "max_chars": 2_000_000})).await;
        assert_eq!(keys(&a["data"]), expected_keys(&twin, c, START, END), "oura.{c} over {START}..{END}");
        assert!(a["notices"].get("resolution_auto").is_none() && a["notices"].get("compacted").is_none());
        assert_eq!(a["count"].as_u64().unwrap() as usize, records(&a["data"]).len());
        assert_eq!(a["range"]["start"], START);
        assert_eq!(a["range"]["end"], END);
        assert_eq!(a["synthetic"], false);
        assert!(a["notices"].get("truncated").is_none(), "{c}: {}", a["notices"]);
    }
    let hr = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": START, "end": END, "max_chars": 2_000_000, "forget": true})).await;
    assert!(hr["pages"].as_u64().unwrap() >= 9, "7 days of heart rate take many pages of 1,000");
    assert!(hr["count"].as_u64().unwrap() > 7 * 1200);
    assert!(hr["notices"]["cache_cleared"].is_string());
    // The range-less collections come back whole.
    let rc = s.ok("vitals_query", json!({"collection": "oura.ring_configuration"})).await;
    assert_eq!(rc["count"], 2);
    let pi = s.ok("vitals_query", json!({"collection": "oura.personal_info"})).await;
    assert_eq!(records(&pi["data"])[0]["id"], "twin-user-1");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_single_day_returns_that_day_for_every_collection() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let day = "2026-06-15"; // a Monday: vO2_max has a record
    for c in collections() {
        let a = s.ok("vitals_query", json!({"collection": format!("oura.{c}"), "day": day})).await;
        let want = expected_keys(&twin, c, day, day);
        assert_eq!(keys(&a["data"]), want, "oura.{c} on {day}");
        if ["daily_activity", "sleep", "daily_sleep", "heartrate", "vO2_max"].contains(c) {
            assert!(!want.is_empty(), "oracle has {c} on {day}");
        }
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn workout_utc_skew_is_corrected_to_local_days() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    // Evening workouts at -06:00 start on the next UTC date; upstream filters by UTC date.
    let a = s.ok("vitals_query", json!({"collection": "oura.workout", "start": START, "end": END})).await;
    for w in &records(&a["data"]) {
        let d = w["day"].as_str().unwrap();
        assert!((START..=END).contains(&d), "workout of {d} outside the range");
    }
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "workout", START, END));
    // The padding days' records are no part of the answer: trimmed, and said to the log, not to the model.
    assert!(a.get("notices").is_none_or(|n| n.get("discarded_out_of_range").is_none()), "{a}");
    let log = s.close().await;
    assert!(log.contains("records outside the asked days left out"), "padding fetched neighbours and the log says it trimmed them");
}

#[tokio::test(flavor = "multi_thread")]
async fn latest_is_honoured_where_it_exists_and_refused_elsewhere() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let e = s.err("vitals_query", json!({"collection": "oura.daily_sleep", "latest": true})).await;
    assert!(e.contains("`latest`") && e.contains("oura.heartrate") && e.contains("oura.ring_battery_level"), "{e}");
    let e = s.err("vitals_query", json!({"collection": "oura.heartrate", "latest": true, "day": START})).await;
    assert!(e.contains("cannot be combined"), "{e}");
    twin.clear_log();
    let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "latest": true})).await;
    assert_eq!(a["count"], 1);
    assert!(twin.requests().iter().all(|r| r.query.contains("latest=true")));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_are_listed_and_comma_strings_are_split() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": START, "fields": ["score", "made_up"]})).await;
    assert_eq!(a["notices"]["ignored_fields"], json!(["made_up"]));
    let recs = records(&a["data"]);
    let rec = recs[0].as_object().unwrap();
    let mut ks: Vec<_> = rec.keys().cloned().collect();
    ks.sort();
    assert_eq!(ks, ["day", "id", "score"]);
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": START, "fields": "score,contributors"})).await;
    assert!(a["notices"]["fields_split"].is_string());
    assert!(records(&a["data"])[0].get("contributors").is_some());
    let e = s.err("vitals_query", json!({"collection": "oura.daily_sleep", "day": START, "fields": ["nope"]})).await;
    assert!(e.contains("`fields`") && e.contains("Available fields") && e.contains("score"), "{e}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_token_is_flagged_as_a_cycle() {
    let twin = twin().await;
    twin.set_faults(Faults { repeat_token: true, ..Default::default() });
    // Pages smaller than a window, so that a window paginates.
    twin.configure(|c| c.series_page_size = 300);
    let s = connect(&twin, false, &[]).await;
    let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": START, "end": END})).await;
    assert!(a["notices"]["pagination_cycle"].is_string(), "{}", a["notices"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn samples_sent_twice_across_pages_are_kept_once() {
    let twin = twin().await;
    // Windows of several pages, each page after the first repeating 7 rows of the one before.
    twin.configure(|c| c.series_page_size = 300);
    twin.set_faults(Faults { repeat_rows: 7, ..Default::default() });
    let s = connect(&twin, false, &[]).await;
    let q = json!({"collection": "oura.heartrate", "start": START, "end": END, "resolution": "raw", "max_chars": 2_000_000});
    let a = s.ok("vitals_query", q.clone()).await;
    assert!(a["pages"].as_u64().unwrap() > 10, "the windows paginated: {}", a["pages"]);
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "heartrate", START, END), "no duplicate, no gap");
    // Bucketed, every sample still counts once.
    let b = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": START, "end": END, "resolution": "1h", "forget": true})).await;
    let at = b["data"]["columns"].as_array().unwrap().iter().position(|c| c == "n").unwrap();
    let n: u64 = b["data"]["rows"].as_array().unwrap().iter().map(|r| r[at].as_u64().unwrap()).sum();
    assert_eq!(n as usize, expected_keys(&twin, "heartrate", START, END).len());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_page_cap_truncates_and_the_resume_is_exact() {
    let twin = twin().await;
    let s = connect(&twin, false, &[("VITALS_PAGE_CAP", "2")]).await;
    let (start, end) = ("2026-06-10", "2026-06-12");
    let mut got: Vec<String> = vec![];
    let mut from = start.to_string();
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(rounds < 10, "resume does not converge");
        let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "start": from, "end": end})).await;
        got.extend(keys(&a["data"]));
        match a["notices"].get("truncated") {
            Some(t) => {
                let next = t["continue_from"].as_str().unwrap().to_string();
                assert!(t["reason"].as_str().unwrap().contains("INCOMPLETE"));
                assert!(next > from, "continue_from moves forward");
                assert!(a["range"]["end"].as_str().unwrap() < next.as_str());
                from = next;
            }
            None => break,
        }
    }
    assert!(rounds > 1, "the cap was hit");
    assert_eq!(got, expected_keys(&twin, "heartrate", start, end), "no gap, no duplicate");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limits_are_waited_out_and_reported() {
    let twin = twin().await;
    twin.set_faults(Faults { rate_limit_next: 2, retry_after_s: 1, ..Default::default() });
    let s = connect(&twin, false, &[]).await;
    let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": START})).await;
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "heartrate", START, START));
    assert_eq!(a["notices"]["rate_limited"]["retries"], 2);
    assert!(a["notices"].get("truncated").is_none());
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn transient_failures_are_retried_and_persistent_ones_truncate() {
    let twin = twin().await;
    twin.set_faults(Faults { server_error_next: 1, reset_next: 1, truncate_next: 1, ..Default::default() });
    let s = connect(&twin, false, &[]).await;
    let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": START})).await;
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "heartrate", START, START));
    assert!(a["notices"]["retried"].as_str().unwrap().starts_with('3'), "{}", a["notices"]);
    twin.set_faults(Faults { server_error_next: 100, ..Default::default() });
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": START})).await;
    assert!(a["notices"]["truncated"]["reason"].as_str().unwrap().contains("503"), "{}", a["notices"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_failures_say_what_to_fix() {
    let twin = twin().await;
    twin.set_faults(Faults { unauthorized_from_page: Some(1), ..Default::default() });
    twin.configure(|c| c.series_page_size = 300);
    let s = connect(&twin, false, &[]).await;
    let e = s.err("vitals_query", json!({"collection": "oura.heartrate", "day": START})).await;
    assert!(e.contains("401") && e.contains("OURA_PAT"), "{e}");
    // 403 has three causes Oura does not tell apart: the error names all of them.
    twin.set_faults(Faults::default());
    twin.configure(|c| c.denied_collections = vec!["heartrate".into()]);
    let e = s.err("vitals_query", json!({"collection": "oura.heartrate", "day": START})).await;
    assert!(e.contains("403") && e.contains("membership") && e.contains("scope"), "{e}");
    s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": START})).await;
    twin.configure(|c| c.membership_lapsed = true);
    // forget: the day just read is in memory, and this is about what the API says now.
    let e = s.err("vitals_query", json!({"collection": "oura.daily_sleep", "day": START, "forget": true})).await;
    assert!(e.contains("403"), "{e}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn days_in_a_dst_zone_are_local_days_of_23_and_25_hours() {
    let twin = twin_with(OuraConfig { tz: jiff::tz::TimeZone::get("America/Chicago").unwrap(), ..Default::default() }).await;
    let s = connect(&twin, false, &[("VITALS_TZ", "America/Chicago")]).await;
    for day in ["2026-03-08", "2026-11-01"] {
        for c in ["heartrate", "ring_battery_level", "sleep", "daily_activity", "workout"] {
            let a = s.ok("vitals_query", json!({"collection": format!("oura.{c}"), "day": day})).await;
            assert_eq!(keys(&a["data"]), expected_keys(&twin, c, day, day), "oura.{c} on {day}");
            assert_eq!(a["range"]["tz"], "America/Chicago");
        }
    }
    let a = s.ok("vitals_query", json!({"collection": "oura.ring_battery_level", "day": "2026-03-08"})).await;
    assert_eq!(a["count"], 23 * 12, "a 23-hour local day");
    // A range across the change, with the zone given per call rather than by the machine.
    let s2 = connect(&twin, false, &[("VITALS_TZ", "UTC")]).await;
    let a = s2
        .ok(
            "vitals_query",
            json!({"collection": "oura.heartrate", "start": "2026-03-07", "end": "2026-03-09", "tz": "America/Chicago", "max_chars": 2_000_000}),
        )
        .await;
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "heartrate", "2026-03-07", "2026-03-09"));
    s.close().await;
    s2.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sandbox_answers_say_synthetic_every_time() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    twin.clear_log();
    for c in collections() {
        let a = s.ok("vitals_query", json!({"collection": format!("oura.{c}"), "day": START})).await;
        assert_eq!(a["synthetic"], true, "{c}");
        assert!(a["notices"]["synthetic"].as_str().unwrap().contains("SAMPLE DATA"), "{c}");
    }
    assert!(twin.requests().iter().all(|r| r.path.starts_with("/v2/sandbox/")));
    let e = s.err("vitals_query", json!({"collection": "oura.personal_info"})).await;
    assert!(e.contains("sandbox"), "{e}");
    let src = s.ok("vitals_sources", json!({})).await;
    assert_eq!(src["providers"][0]["state"], "sandbox");
    let today = s.ok("vitals_today", json!({"days": 3})).await;
    assert_eq!(today["providers"][0]["synthetic"], true);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_names_the_parameter() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let cases: &[(Value, &str)] = &[
        (json!({"collection": "daily_sleep"}), "`collection`"),
        (json!({"collection": "oura.nope"}), "`collection`"),
        (json!({"collection": "oura.daily_sleep", "start": "June 1"}), "`start`"),
        (json!({"collection": "oura.daily_sleep", "start": "2026-06-12", "end": "2026-06-10"}), "`end`"),
        (json!({"collection": "oura.daily_sleep", "day": "2026-02-30"}), "`day`"),
        (json!({"collection": "oura.daily_sleep", "day": START, "tz": "Mars/Base"}), "`tz`"),
        (json!({"collection": "oura.daily_sleep", "day": START, "format": "xml"}), "`format`"),
        (json!({"collection": "oura.daily_sleep", "day": START, "start": START}), "`day`"),
    ];
    for (args, name) in cases {
        let e = s.err("vitals_query", args.clone()).await;
        assert!(e.contains(name), "{args}: {e}");
    }
    let e = s.err("vitals_today", json!({"days": 31})).await;
    assert!(e.contains("`days`"), "{e}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_and_server_info_are_the_contract() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let info = s.client.peer_info().expect("initialize result");
    let si = info.server_info.clone().expect("server info");
    assert_eq!(si.name, "vitals");
    assert_eq!(si.version, env!("CARGO_PKG_VERSION"));
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names.len(), 10);
    for n in [
        "vitals_sources",
        "vitals_query",
        "vitals_today",
        "vitals_connect",
        "vitals_export",
        "vitals_compare",
        "vitals_relate",
        "vitals_trend",
        "vitals_daily",
        "vitals_check",
    ] {
        assert!(names.contains(&n.to_string()), "{n}");
    }
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        // Connecting saves a login and exporting writes the file the user named (they change this
        // machine, never the user's data at the provider); everything else only reads.
        let writes = t.name == "vitals_connect" || t.name == "vitals_export";
        let expected = if writes { (Some(false), Some(false), Some(false), Some(true)) } else { (Some(true), Some(false), Some(true), Some(true)) };
        assert_eq!((a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint), expected, "{}", t.name);
        // vitals_sources answers a listing or one entry, and vitals_today a report whose shape is
        // its own; every other tool lists the schema of its answer.
        if !["vitals_sources", "vitals_today"].contains(&t.name.as_ref()) {
            assert!(t.output_schema.is_some(), "{} has structured output", t.name);
        }
        assert!(t.description.as_ref().unwrap().len() > 80);
    }
    let res = s.client.read_resource(rmcp::model::ReadResourceRequestParams::new("vitals://sources")).await.unwrap();
    let body = format!("{res:?}");
    assert!(body.contains("oura.daily_sleep"));
    // Listed and read as the same type, and the text is that type.
    let listed = s.client.list_all_resources().await.unwrap();
    let listed_mime = listed[0].mime_type.clone();
    let rmcp::model::ResourceContents::TextResourceContents { mime_type, text, .. } = &res.contents[0] else { panic!("text contents") };
    assert_eq!((listed_mime.as_deref(), mime_type.as_deref()), (Some("application/json"), Some("application/json")));
    serde_json::from_str::<Value>(text).expect("the resource is JSON, as it says");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn csv_format_and_empty_today() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "start": START, "end": END, "format": "csv"})).await;
    let csv = a["data"].as_str().unwrap();
    assert_eq!(csv.lines().count(), 1 + a["count"].as_u64().unwrap() as usize);
    // Today's sleep is not there until the app is opened: the answer says "not synced yet".
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date().to_string();
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": today})).await;
    assert_eq!(a["count"], 0);
    assert!(a["notices"]["empty"].as_str().unwrap().contains("not synced yet"));
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_works_on_the_2026_07_28_lifecycle_too() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::ClientLifecycleMode;
    let twin = twin().await;
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let s = connect_with(&twin, false, &[], mode).await;
    assert_eq!(s.client.list_all_tools().await.unwrap().len(), 10);
    let a = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": START})).await;
    assert_eq!(keys(&a["data"]), expected_keys(&twin, "heartrate", START, START));
    assert_eq!(s.ok("vitals_sources", json!({})).await["providers"][0]["provider"], "oura");
    assert!(s.ok("vitals_check", json!({})).await["providers"][0]["api_answered"].as_bool().unwrap());
    assert!(s.ok("vitals_today", json!({"days": 2})).await["providers"][0]["sections"].as_array().unwrap().len() >= 3);
    let e = s.err("vitals_query", json!({"collection": "oura.daily_sleep", "latest": true})).await;
    assert!(e.contains("`latest`"));
    s.close().await;
}

/// `--check` says a provider it cannot reach as exactly that, with what to check, and exits 1;
/// with every provider answering it exits 0.
#[tokio::test(flavor = "multi_thread")]
async fn check_says_an_unreachable_provider_and_exits_non_zero() {
    let twin = twin().await;
    let dir = common::scratch().join(format!("vitals-check-exit-{}", std::process::id()));
    let run = |base: &str| {
        vitals_cmd()
            .arg("--check")
            .env("OURA_PAT", TOKEN)
            .env("VITALS_OURA_BASE_URL", base)
            .env("VITALS_BACKOFF_MS", "5")
            .env("VITALS_CONFIG_DIR", &dir)
            .env("VITALS_TOKEN_STORE", "file")
            .output()
            .unwrap()
    };
    // A port nothing listens on: bound, read, released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let o = run(&format!("http://127.0.0.1:{port}"));
    assert_eq!(o.status.code(), Some(1), "an unreachable provider fails the check");
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let oura = &r["providers"][0];
    assert_eq!(oura["answered_by"], "nobody");
    let said = oura["api_detail"].as_str().unwrap();
    assert!(said.starts_with("Oura could not be reached: the connection failed: 127.0.0.1: could not connect"), "{said}");
    assert!(said.contains("network connection") && !said.contains("page cap") && !said.contains("continue_from"), "{said}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("oura did not answer"));
    // The others answered from their built-in samples, and say so; the opt-in Garmin Connect, which
    // has none, is not connected, which fails nothing.
    let others = &r["providers"].as_array().unwrap()[1..];
    assert!(others.iter().all(|p| p["api_answered"] == false), "{r}");
    let by: Vec<(&str, &str)> = others.iter().map(|p| (p["provider"].as_str().unwrap(), p["answered_by"].as_str().unwrap())).collect();
    let want: Vec<(&str, &str)> = vitals::providers::specs()
        .skip(1)
        .map(|s| (s.name, if s.connection.session().is_some_and(|x| x.explicit) { "not_connected" } else { "sample_data" }))
        .collect();
    assert_eq!(by, want, "{r}");
    assert!(want.len() >= 5, "{want:?}");

    // vitals_today: every Oura section is an error with its cause, none is "missing" or "empty".
    let dead = format!("http://127.0.0.1:{port}");
    let s = connect(&twin, false, &[("VITALS_OURA_BASE_URL", &dead)]).await;
    let t = s.ok("vitals_today", json!({"days": 2})).await;
    let oura = &t["providers"][0];
    assert!(oura.get("missing").is_none(), "{oura}");
    // One failure for the four sections, said once and naming each.
    let errors = oura["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{oura}");
    assert!(errors[0].as_str().unwrap().starts_with("oura.sleep, oura.daily_sleep, oura.daily_readiness, oura.daily_activity: "), "{errors:?}");
    assert!(errors.iter().all(|e| e.as_str().unwrap().contains("Oura could not be reached")), "{errors:?}");
    assert_eq!(oura["sections"], json!([]), "{oura}");
    for sec in oura["sections"].as_array().unwrap() {
        assert!(sec["answer"]["notices"]["empty"].is_null(), "a failed section is never empty: {sec}");
        assert_eq!(sec["answer"]["notices"]["truncated"]["cause"], "unreachable");
    }
    s.close().await;

    let o = run(&twin.base_url());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["providers"][0]["answered_by"].as_str(), r["providers"][0]["api_answered"].as_bool()), (Some("api"), Some(true)));
    let _ = std::fs::remove_dir_all(&dir);
}
