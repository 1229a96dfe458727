//! MCP Apps (issue 39), over MCP against the twins: a host that did not declare the extension
//! sees exactly what it saw before; one that did gets each tool's view, whole, closed to the
//! network (default CSP) and readable over `resources/read`; and what a view is given to draw is
//! what the answer says: a night's stage minutes and heart rate, a zoom's samples.
use crate::common::*;
use rmcp::model::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const MIME: &str = "text/html;profile=mcp-app";

/// A host that renders MCP Apps, as it says so at `initialize`.
fn apps_host() -> ClientConfig {
    let mut info = ClientConfig::default();
    let mut ext = ExtensionCapabilities::new();
    ext.insert("io.modelcontextprotocol/ui".into(), json!({ "mimeTypes": [MIME] }).as_object().unwrap().clone());
    info.capabilities.extensions = Some(ext);
    info
}

fn ui(t: &Tool) -> Option<&Value> {
    t.meta.as_ref().and_then(|m| m.0.get("ui"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_without_the_extension_sees_what_it_saw_before() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| ui(t).is_none()), "no tool carries a view for a host that cannot show one");
    assert!(tools.iter().all(|t| t.name != "vitals_view_data"), "the app-only tool is not listed");
    let resources = s.client.list_all_resources().await.unwrap();
    assert_eq!(resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["vitals://sources"]);
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_with_the_extension_gets_each_view_whole_and_closed_to_the_network() {
    let twin = twin().await;
    let s = connect_as(&twin, false, &[], rmcp::service::ClientLifecycleMode::Initialize, apps_host()).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let with_view: BTreeSet<&str> = tools.iter().filter(|t| ui(t).is_some()).map(|t| t.name.as_ref()).collect();
    assert_eq!(
        with_view,
        BTreeSet::from(["vitals_compare", "vitals_daily", "vitals_query", "vitals_relate", "vitals_today", "vitals_trend", "vitals_view_data"])
    );
    for t in &tools {
        let Some(u) = ui(t) else { continue };
        let want = if t.name == "vitals_view_data" { json!(["app"]) } else { json!(["model", "app"]) };
        assert_eq!(u["visibility"], want, "{}", t.name);
    }
    let listed: BTreeSet<String> = s.client.list_all_resources().await.unwrap().iter().filter(|r| r.uri.starts_with("ui://")).map(|r| r.uri.clone()).collect();
    let named: BTreeSet<String> = tools.iter().filter_map(|t| ui(t)).map(|u| u["resourceUri"].as_str().unwrap().to_string()).collect();
    assert_eq!(listed, named, "every view a tool names is listed, and no other");
    for uri in &named {
        let r = s.client.read_resource(ReadResourceRequestParams::new(uri.clone())).await.unwrap();
        let [ResourceContents::TextResourceContents { uri: got, mime_type, text, meta }] = r.contents.as_slice() else {
            panic!("{uri}: one text content, got {:?}", r.contents)
        };
        assert_eq!(got, uri);
        assert_eq!(mime_type.as_deref(), Some(MIME), "{uri}");
        assert_eq!(meta.as_ref().unwrap().0["ui"]["csp"], json!({}), "{uri}: the default CSP, no domain at all");
        assert!(text.starts_with("<!DOCTYPE html>") && text.trim_end().ends_with("</html>"), "{uri}: a whole HTML5 document");
        assert!(text.len() < 150_000, "{uri}: {} bytes", text.len());
    }
    s.close().await;
}

/// The stage minutes a provider's own record gives (None where it gives none: a nap may carry no
/// stages), by the names its collection uses.
fn said_minutes(collection: &str, r: &Value) -> [Option<f64>; 3] {
    let m = |k: &str, div: f64| r[k].as_f64().map(|v| v / div);
    match collection {
        "oura.sleep" => [m("deep_sleep_duration", 60.0), m("rem_sleep_duration", 60.0), m("light_sleep_duration", 60.0)],
        _ => [m("deep_min", 1.0), m("rem_min", 1.0), m("light_min", 1.0)],
    }
}

fn hypnogram(collection: &str) -> &'static str {
    match collection {
        "oura.sleep" => "sleep_phase_5_min",
        "polar.sleep" => "hypnogram",
        _ => "stages",
    }
}

/// The character each provider's hypnogram writes for deep sleep (its catalog's summary says so).
fn deep_code(collection: &str) -> char {
    match collection {
        "oura.sleep" => '1',
        "polar.sleep" => '4',
        _ => '0',
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_night_drawn_is_the_night_answered_device_by_device() {
    let twin = twin().await;
    let (s, _w) = all_providers_as(&twin, "apps-night", &[], apps_host()).await;
    let (start, end) = (ds(ago(4)), ds(ago(1)));
    for collection in ["oura.sleep", "polar.sleep", "garmin.sleep"] {
        let answer = s.ok("vitals_query", json!({"collection": collection, "start": start, "end": end, "format": "records", "resolution": "raw"})).await;
        let view = s.ok("vitals_view_data", json!({"collection": collection, "start": start, "end": end})).await;
        assert_eq!(view["kind"], "night", "{collection}");
        assert_eq!(view["synthetic"], answer["synthetic"], "{collection}: a view says sample data as the answer does");
        let nights = view["nights"].as_array().unwrap();
        let records = answer["data"].as_array().unwrap();
        assert!(records.iter().filter(|r| r[hypnogram(collection)].is_string()).count() >= 2, "{collection}: the twin has nights in {start}..{end}");
        assert_eq!(nights.len(), records.len(), "{collection}: a night per record, none merged");
        for (n, r) in nights.iter().zip(records) {
            // The numbers a view shows are the provider's totals, as the text answer gives them.
            let shown = [n["said"]["deep"].as_f64(), n["said"]["rem"].as_f64(), n["said"]["light"].as_f64()];
            assert_eq!(shown, said_minutes(collection, r), "{collection} {}: the night's numbers are the answer's", n["day"]);
            let epochs = r[hypnogram(collection)].as_str().unwrap_or("");
            let deep = epochs.chars().filter(|c| *c == deep_code(collection)).count() as f64 * n["epoch_s"].as_f64().unwrap() / 60.0;
            assert_eq!(n["minutes"]["deep"].as_f64().unwrap(), deep, "{collection}: the hypnogram's deep minutes, epoch by epoch");
            let runs: f64 = n["stages"].as_array().unwrap().iter().map(|run| (run[1].as_f64().unwrap() - run[0].as_f64().unwrap()) / 60_000.0).sum();
            let counted: f64 = ["deep", "rem", "light", "awake", "unknown"].iter().map(|k| n["minutes"][k].as_f64().unwrap()).sum();
            assert!((runs - counted).abs() < 1e-6, "{collection}: the runs drawn cover the minutes counted");
            if let Some(hr) = r.get("heart_rate").filter(|v| v.is_object()) {
                let present = hr["items"].as_array().unwrap().iter().filter(|v| !v.is_null()).count();
                assert_eq!(n["heart_rate"].as_array().unwrap().len(), present, "{collection}: every heart-rate reading, none invented");
            }
        }
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_zoom_is_every_sample_of_its_span_and_says_so() {
    let twin = twin().await;
    let s = connect_as(&twin, false, &[], rmcp::service::ClientLifecycleMode::Initialize, apps_host()).await;
    let day = ds(ago(1));
    let all = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": day, "resolution": "raw", "max_chars": 2_000_000})).await;
    let rows = all["data"]["rows"].as_array().unwrap();
    assert!(rows.len() > 20, "a day of heart rate at the twin");
    let (from, to) = (rows[5][0].as_str().unwrap(), rows[15][0].as_str().unwrap());
    let inside = |t: &str| {
        let t: jiff::Timestamp = t.parse().unwrap();
        t >= from.parse().unwrap() && t < to.parse().unwrap()
    };
    let want: Vec<&Value> = rows.iter().filter(|r| inside(r[0].as_str().unwrap())).collect();
    let zoom = s.ok("vitals_view_data", json!({"collection": "oura.heartrate", "start": day, "end": day, "from": from, "to": to})).await;
    assert_eq!(zoom["kind"], "series");
    assert_eq!(zoom["data"]["rows"].as_array().unwrap().iter().collect::<Vec<_>>(), want, "the zoom's samples, exactly");
    assert!(zoom["notices"]["window"].as_str().unwrap().contains(&format!("{} of {}", want.len(), rows.len())), "{}", zoom["notices"]);
    let e = s.err("vitals_view_data", json!({"collection": "oura.heartrate", "start": day, "end": day, "from": from})).await;
    assert!(e.contains("`from` and `to`"), "{e}");
    let e = s.err("vitals_view_data", json!({"collection": "oura.heartrate", "start": day, "end": day, "from": to, "to": from})).await;
    assert!(e.contains("`to`") && e.contains("after"), "{e}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verdict_is_drawn_from_the_days_it_was_computed_from() {
    let twin = twin().await;
    let s = connect_as(&twin, false, &[], rmcp::service::ClientLifecycleMode::Initialize, apps_host()).await;
    let (start, end) = (ds(ago(60)), ds(ago(1)));
    let metric = "oura.daily_readiness.score";
    let trend = s.ok("vitals_trend", json!({"metric": metric, "start": start, "end": end})).await;
    let days = s.ok("vitals_view_data", json!({"metric": metric, "start": start, "end": end})).await;
    assert_eq!(days["kind"], "days");
    assert_eq!(days["days"].as_array().unwrap().len() as u64, trend["days"].as_u64().unwrap(), "the days drawn are the days the trend counted");
    assert_eq!(days["synthetic"], trend["synthetic"]);
    let e = s.err("vitals_view_data", json!({"metric": metric, "collection": "oura.sleep", "start": start, "end": end})).await;
    assert!(e.contains("`collection` or `metric`"), "{e}");
    let e = s.err("vitals_view_data", json!({"metric": "oura.nope.score", "start": start, "end": end})).await;
    assert!(e.contains("`metric`"), "{e}");
    s.close().await;
}
