//! Bad input as a property (issue 22): every tool, called in process through the guarded stdio
//! layer and rmcp, with arguments drawn from wrong types, unicode, impossible dates and zones,
//! bounds and past them, unknown keys, and plausible values. Whatever arrives: an answer comes
//! (no panic, no hang), and a refusal names a parameter and never echoes a huge value back.
//! Its server is built from settings of its own (`Config::from_pairs`: Oura at the twin, no
//! browser), so it runs beside the other suites in this binary, filling the cores their waits leave.
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRunner};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Cases per tool per run: the floor, sized to keep the run within the CI budget.
const CASES: u32 = 10_000;

fn scratch() -> std::path::PathBuf {
    let d = crate::common::scratch().join(format!("argument-props-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Lab {
    rt: tokio::runtime::Runtime,
    client: RunningService<RoleClient, ()>,
    _twin: vitals_twin::Twin,
}

fn lab() -> Lab {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let twin = rt.block_on(vitals_twin::start(vitals_twin::oura::OuraConfig { token: "props-token".into(), ..Default::default() }, 0)).unwrap();
    let settings = [
        ("OURA_PAT", "props-token".to_string()),
        ("VITALS_OURA_BASE_URL", twin.base_url()),
        ("VITALS_CONFIG_DIR", scratch().join("config").display().to_string()),
        ("VITALS_TOKEN_STORE", "file".into()),
        ("VITALS_TZ", "-06:00".into()),
        ("VITALS_BACKOFF_MS", "1".into()),
        // Tens of thousands of calls spend Oura's 5,000 requests per 5 minutes: a query that would
        // wait for the budget longer than this says so instead, within the 30 s each call gets.
        ("VITALS_RATE_WAIT_BUDGET_S", "5".into()),
        // Every call answers within its budget, a second vitals_connect joining a login under way
        // too (it waits for the browser while the budget lasts): 10 s, inside the 30 s each gets.
        ("VITALS_CALL_BUDGET_S", "10".into()),
        // A login started by vitals_connect finds no browser and answers at once with the address
        // (a browser that "opened" would make it wait two minutes for the person).
        ("VITALS_BROWSER", "none".into()),
    ];
    let client = rt.block_on(async {
        let config = Arc::new(vitals::config::Config::from_pairs(settings));
        let engine = Arc::new(vitals::engine::Engine::new(vitals::providers::all(&config), config.clone(), vitals::engine::Limits::from_config(&config)));
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_end);
        tokio::spawn(async move {
            if let Ok(running) = vitals::mcp::Vitals::new(engine).serve(vitals::mcp::stdio::guarded(sr, sw)).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(tokio::io::split(client_end)).await.expect("MCP handshake in process")
    });
    Lab { rt, client, _twin: twin }
}

/// Any JSON value, small: the wrong types.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3).prop_map(|m| json!(m))
        ]
    })
}

/// Strings a person or a model might send for a day, a zone or a word.
fn plausible() -> impl Strategy<Value = Value> {
    prop_oneof![
        // Days, real and not.
        (1900i32..10000, 0u8..14, 0u8..33).prop_map(|(y, m, d)| json!(format!("{y:04}-{m:02}-{d:02}"))),
        Just(json!("2026-02-30")),
        Just(json!("2026-13-01")),
        Just(json!("9999-12-31")),
        Just(json!("0000-01-01")),
        Just(json!("2026-6-1")),
        Just(json!(" 2026-06-01")),
        // Zones.
        (-30i32..30, 0u8..70).prop_map(|(h, m)| json!(format!("{h:+03}:{m:02}"))),
        Just(json!("+-5:00")),
        Just(json!("Europe/Paris")),
        Just(json!("Mars/Olympus")),
        // Words and names.
        prop::sample::select(vec![
            "columns",
            "records",
            "csv",
            "json",
            "",
            " ",
            "columns ",
            "raw",
            "1m",
            "5m",
            "1h",
            "1d",
            "7m",
            "oura",
            "withings",
            "polar",
            "garmin",
            "fitbit",
            "fit",
            "tcx",
            "gpx",
            "oura.daily_sleep",
            "oura.heartrate",
            "withings.devices",
            "withings.intraday",
            "polar.exercises",
            "garmin.activity",
            "garmin.steps",
            "nope.nothing",
            "oura.",
            ".",
            "ünïcødé",
            "👍",
            "\u{0}",
            "\u{202e}",
        ])
        .prop_map(|s| json!(s)),
        // Numbers at and past bounds.
        prop::sample::select(vec![0i64, -1, 1, 4_999, 5_000, 2_000_000, 2_000_001, 19_999, 20_000, 30, 31, i64::MAX, i64::MIN]).prop_map(|n| json!(n)),
        Just(json!(1e30)),
        Just(json!(2.5)),
        Just(json!({"include_manual": true})),
        Just(json!({"include_manual": "yes"})),
        Just(json!(["id", "day"])),
        Just(json!("id,day")),
    ]
}

/// Arguments for a tool with these parameters: some of them (or an unknown key), each given a
/// plausible or an arbitrary value. Paths stay inside this test's folder: an export must never
/// write elsewhere, even if a random provider, id and format happened to be real.
fn args_for(params: Vec<String>) -> impl Strategy<Value = Map<String, Value>> {
    let mut keys = params;
    keys.extend(["bogus".to_string(), "Collection".into(), "".into()]);
    let value = prop_oneof![3 => plausible(), 2 => any_json()];
    prop::collection::btree_map(prop::sample::select(keys), value, 0..5).prop_map(|m| {
        m.into_iter()
            .map(|(k, v)| {
                let v = match (k.as_str(), v) {
                    ("path", Value::String(s)) => json!(scratch().join("export").join(s.trim_start_matches('/')).display().to_string()),
                    (_, v) => v,
                };
                (k, v)
            })
            .collect()
    })
}

#[test]
fn no_argument_makes_a_tool_panic_hang_or_answer_without_naming_the_parameter() {
    let lab = lab();
    let tools = lab.rt.block_on(lab.client.list_all_tools()).unwrap();
    // One thread per tool: the calls of different tools overlap, as a client's would.
    let mut total: u32 = std::thread::scope(|scope| {
        let runs: Vec<_> = tools
            .iter()
            .map(|t| {
                let lab = &lab;
                scope.spawn(move || {
                    let params: Vec<String> =
                        t.input_schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default();
                    // XorShift rather than the default ChaCha: 80,000 cases each seed a fresh generator, and
                    // ChaCha's rounds (generic, so built unoptimised in this test) were a tenth of the CPU.
                    let config = Config { cases: CASES, failure_persistence: None, rng_algorithm: RngAlgorithm::XorShift, ..Config::default() };
                    let mut runner = TestRunner::new(config);
                    let name = t.name.to_string();
                    let result = runner.run(&args_for(params), |args| {
                        let sent = Value::Object(args.clone());
                        let call = lab.client.call_tool(CallToolRequestParams::new(name.clone()).with_arguments(args));
                        let r = lab.rt.block_on(async { tokio::time::timeout(Duration::from_secs(30), call).await });
                        let r = r.map_err(|_| TestCaseError::fail(format!("{name} {sent}: no answer within 30 s")))?;
                        let r = r.map_err(|e| TestCaseError::fail(format!("{name} {sent}: the call failed at the protocol level: {e}")))?;
                        if r.is_error == Some(true) {
                            let text = r.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect::<String>();
                            prop_assert!(text.contains('`'), "{} {}: a refusal that names nothing: {}", name, sent, text);
                            prop_assert!(text.len() < 4_000, "{} {}: a refusal of {} characters", name, sent, text.len());
                        }
                        Ok(())
                    });
                    result.unwrap_or_else(|e| panic!("{e}"));
                    CASES
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).sum()
    });
    // Strings of 10 MB in every string parameter, once each.
    let huge = "x".repeat(10 << 20);
    for t in &tools {
        for p in t.input_schema.get("properties").and_then(Value::as_object).into_iter().flat_map(|m| m.keys()) {
            let mut args = Map::new();
            args.insert(p.clone(), json!(huge));
            // Past the 4 MiB line limit of the stdio layer: refused there, with the limit said.
            match lab.rt.block_on(lab.client.call_tool(CallToolRequestParams::new(t.name.to_string()).with_arguments(args))) {
                Err(e) => assert!(e.to_string().contains("4194304") && e.to_string().len() < 4_000, "{}.{p} with 10 MB: {e}", t.name),
                Ok(r) => panic!("{}.{p} with 10 MB was taken: {:?}", t.name, r.is_error),
            }
            total += 1;
        }
    }
    // The count the README's reliability section quotes.
    eprintln!("argument properties: {total} cases over {} tools, 0 panics", tools.len());
    let _ = std::fs::remove_dir_all(scratch());
    // A login started by a random vitals_connect still waits (10 minutes) for its browser on a
    // blocking thread, which dropping the runtime would wait for; the server's own exit leaves
    // the same way (main.rs).
    let Lab { rt, client, _twin } = lab;
    let _guard = rt.enter();
    drop((client, _twin));
    drop(_guard);
    rt.shutdown_background();
}
