//! MCP Apps (extension `io.modelcontextprotocol/ui`, SEP-1865, stable 2026-01-26): the views a
//! host that supports the extension renders beside an answer. The model still reads the compact
//! answer; the person sees every sample, which a view asks for itself through an app-only tool.
//!
//! Invariants:
//! - A host that did not declare the extension (with our MIME type) at `initialize` sees exactly
//!   what it saw before: no `_meta.ui` on a tool, no app-only tool, no `ui://` resource listed.
//! - A view loads nothing from anywhere: its HTML, CSS and chart code are inside this binary
//!   (`server/views/`), and its resource declares the default CSP (no domain of any kind).
//! - A view shows only what the tool returned or what it asked `vitals_view_data` for; it writes
//!   nothing anywhere.
use crate::catalog::CollectionSpec;
use crate::engine::plan::MAX_MAX_CHARS;
use crate::engine::workout::workouts;
use crate::engine::{Deadline, Engine, QueryRequest};
use rmcp::model::{ClientConfig, MetaObject, Resource, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// The extension's identifier in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The one content type of the extension's first version.
pub const MIME: &str = "text/html;profile=mcp-app";

/// One view: a `ui://` resource, assembled from the shared shell and the renderers it needs.
pub struct View {
    pub uri: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// The renderers (`server/views/<name>.js`) this view carries, after the shared core.
    renderers: &'static [(&'static str, &'static str)],
}

macro_rules! renderer {
    ($name:literal) => {
        ($name, include_str!(concat!("../../views/", $name, ".js")))
    };
}

const SHELL: &str = include_str!("../../views/shell.html");
const STYLE: &str = include_str!("../../views/style.css");
const CORE: &str = include_str!("../../views/core.js");

/// Every view this server has. Each tool that has one names it in [`view_of`].
pub const VIEWS: &[View] = &[
    View {
        uri: "ui://vitals/today",
        name: "The night and the day",
        description: "Last night's hypnogram, heart rate and HRV per device, one above the other, from vitals_today.",
        renderers: &[renderer!("night"), renderer!("today")],
    },
    View {
        uri: "ui://vitals/query",
        name: "One collection",
        description: "A series at full resolution with zoom, a night's hypnogram, or a workout's samples, laps and zones, from vitals_query.",
        renderers: &[renderer!("night"), renderer!("series"), renderer!("workout"), renderer!("query")],
    },
    View {
        uri: "ui://vitals/analysis",
        name: "A verdict and its noise",
        description: "The days behind vitals_compare, vitals_trend and vitals_relate, with the band or line the verdict came from.",
        renderers: &[renderer!("analysis")],
    },
    View {
        uri: "ui://vitals/days",
        name: "The days side by side",
        description: "A row per metric with a sparkline, the provider and field of every value, from vitals_daily.",
        renderers: &[renderer!("days")],
    },
];

/// The view a tool's answer is shown in, if it has one.
pub fn view_of(tool: &str) -> Option<&'static View> {
    let uri = match tool {
        "vitals_today" => "ui://vitals/today",
        "vitals_query" | APP_DATA_TOOL => "ui://vitals/query",
        "vitals_daily" => "ui://vitals/days",
        "vitals_compare" | "vitals_trend" | "vitals_relate" => "ui://vitals/analysis",
        _ => return None,
    };
    VIEWS.iter().find(|v| v.uri == uri)
}

/// The tool only views call (`visibility: ["app"]`): every sample of a span, for a chart.
pub const APP_DATA_TOOL: &str = "vitals_view_data";

/// Whether the client declared MCP Apps with the HTML profile at `initialize`.
pub fn host_supports(client: Option<&ClientConfig>) -> bool {
    let Some(ext) = client.and_then(|c| c.capabilities.extensions.as_ref()).and_then(|e| e.get(EXTENSION)) else {
        return false;
    };
    ext.get("mimeTypes").and_then(Value::as_array).is_some_and(|m| m.iter().any(|t| t.as_str() == Some(MIME)))
}

/// The tools as a host with MCP Apps sees them: each with its view, the app-only tool marked so.
pub fn with_views(mut tools: Vec<Tool>) -> Vec<Tool> {
    for t in &mut tools {
        let Some(view) = view_of(&t.name) else { continue };
        let visibility = if t.name == APP_DATA_TOOL { json!(["app"]) } else { json!(["model", "app"]) };
        let meta = t.meta.get_or_insert_with(|| MetaObject(Default::default()));
        meta.0.insert("ui".into(), json!({ "resourceUri": view.uri, "visibility": visibility }));
    }
    tools
}

/// The tools as a host without MCP Apps sees them: as before there were views.
pub fn without_views(tools: Vec<Tool>) -> Vec<Tool> {
    tools.into_iter().filter(|t| t.name != APP_DATA_TOOL).collect()
}

/// The resources to list for a host with MCP Apps.
pub fn resources() -> Vec<Resource> {
    VIEWS
        .iter()
        .map(|v| {
            let mut r = Resource::new(v.uri, v.name);
            r.description = Some(v.description.into());
            r.mime_type = Some(MIME.into());
            r.meta = Some(resource_meta());
            r
        })
        .collect()
}

/// `_meta.ui` of every view: the default CSP (no domain to connect to or load from) and a border.
pub fn resource_meta() -> MetaObject {
    let mut m = serde_json::Map::new();
    m.insert("ui".into(), json!({ "csp": {}, "prefersBorder": true }));
    MetaObject(m)
}

/// The HTML of the view at `uri`, whole: shell, style, core and renderers inline.
pub fn html(uri: &str) -> Option<String> {
    let view = VIEWS.iter().find(|v| v.uri == uri)?;
    let mut script = String::from(CORE);
    for (name, code) in view.renderers {
        script.push_str(&format!("\n// --- {name}.js\n"));
        script.push_str(code);
    }
    Some(SHELL.replace("/*STYLE*/", STYLE).replace("/*SCRIPT*/", &script).replace("{{TITLE}}", view.name))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
/// `vitals_view_data`'s parameters.
pub struct ViewDataArgs {
    /// Qualified name, e.g. `oura.heartrate` (or `metric`).
    #[serde(default)]
    pub collection: Option<String>,
    /// A daily metric, `provider.collection.field`, for its days as the analyses read them (or `collection`).
    #[serde(default)]
    pub metric: Option<String>,
    /// First local day, YYYY-MM-DD (every read but one by `id`).
    #[serde(default)]
    pub start: Option<String>,
    /// Last local day (inclusive).
    #[serde(default)]
    pub end: Option<String>,
    /// With `to`: only a series' samples from this instant (RFC 3339), a chart's zoom.
    #[serde(default)]
    pub from: Option<String>,
    /// With `from`: up to (not including) this instant.
    #[serde(default)]
    pub to: Option<String>,
    /// A workout collection's one workout to draw with every sample (its `id` in the answer).
    #[serde(default)]
    pub id: Option<String>,
    /// Zone of the local days, as the tool's answer said it (`tz`). Default: the machine's.
    #[serde(default)]
    pub tz: Option<String>,
}

impl ViewDataArgs {
    /// The days asked for, which every read but one by id needs.
    fn days(&self) -> Result<(String, String), String> {
        match (&self.start, &self.end) {
            (Some(s), Some(e)) => Ok((s.clone(), e.clone())),
            _ => Err("`start` and `end`: send the first and last local day to draw, YYYY-MM-DD (only a read by `id` goes without)".into()),
        }
    }
}

/// What a view asked `vitals_view_data` for: the nights of a sleep collection, or a series at the
/// finest resolution that fits the largest answer (every sample when they fit), with the answer's
/// own notices, so a view says sample data and cuts as the text does.
pub async fn view_data(engine: &Engine, a: ViewDataArgs, deadline: Deadline) -> Result<Value, String> {
    let window = match (&a.from, &a.to) {
        (None, None) => None,
        (Some(f), Some(t)) => {
            let f: jiff::Timestamp = f.parse().map_err(|_| format!("`from`: {f:?} is not an RFC 3339 instant; send e.g. 2026-12-05T03:00:00Z"))?;
            let t: jiff::Timestamp = t.parse().map_err(|_| format!("`to`: {t:?} is not an RFC 3339 instant; send e.g. 2026-12-05T04:00:00Z"))?;
            if t <= f {
                return Err(format!("`to` ({t}) must be after `from` ({f})"));
            }
            Some((f, t))
        }
        _ => return Err("`from` and `to` go together: send both (a zoom) or neither (the whole days)".into()),
    };
    let collection = match (a.collection.clone(), a.metric.clone()) {
        (Some(c), None) => c,
        (None, Some(m)) => {
            if window.is_some() {
                return Err("`from`: a metric's days have no span within them; leave `from` and `to` out".into());
            }
            let (start, end) = a.days()?;
            let days = crate::analysis::ask::metric_days(engine, &m, (&start, &end), a.tz.as_deref()).await.map_err(|e| e.to_string())?;
            let mut out = serde_json::to_value(days).map_err(|e| e.to_string())?;
            out["kind"] = json!("days");
            return Ok(out);
        }
        _ => return Err("`collection` or `metric`: send exactly one (a collection to draw, or a daily metric's days)".into()),
    };
    let spec = collection.split_once('.').and_then(|(ns, c)| engine.resolve(ns, c)).map(|(_, c)| c);
    if let Some(c) = spec.filter(|c| c.workout.is_some()) {
        return workout_data(engine, &collection, c, &a, deadline).await;
    }
    if a.id.is_some() {
        return Err(format!("`id`: {collection} is not a collection of workouts; leave `id` out"));
    }
    let kind = match spec {
        Some(c) if c.night.is_some() => "night",
        Some(c) if c.series.is_some() => "series",
        Some(_) => return Ok(json!({ "kind": "records", "collection": collection })),
        // The engine's own refusal names the collections there are.
        None => "series",
    };
    let (start, end) = a.days()?;
    let req = QueryRequest {
        collection,
        start: Some(start),
        end: Some(end),
        format: Some(if kind == "night" { "records" } else { "columns" }.into()),
        // A night is drawn epoch by epoch; a series at the finest resolution that fits.
        resolution: (kind == "night" && spec.is_some_and(|c| c.has_resolution())).then(|| "raw".into()),
        max_chars: Some(MAX_MAX_CHARS as i64),
        tz: a.tz.clone(),
        window,
        deadline: Some(deadline),
        ..Default::default()
    };
    let answer = engine.query(req).await.map_err(|e| e.to_string())?;
    let mut out = serde_json::to_value(&answer).map_err(|e| e.to_string())?;
    out["kind"] = json!(kind);
    if let (Some(c), "night") = (spec, kind) {
        let records = out.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
        out["nights"] = serde_json::to_value(crate::engine::night::nights(c, &records)).map_err(|e| e.to_string())?;
        out.as_object_mut().map(|o| o.remove("data"));
    }
    Ok(out)
}

/// A workout collection's answer for a view: without `id`, the workouts of the days (no samples,
/// a cheap read); with `id`, that one workout read with every option its spec names, from the
/// collection that reads one by id when the spec names one.
async fn workout_data(engine: &Engine, collection: &str, c: &'static CollectionSpec, a: &ViewDataArgs, deadline: Deadline) -> Result<Value, String> {
    let spec = c.workout.expect("a workout collection");
    let base = QueryRequest {
        format: Some("records".into()),
        max_chars: Some(MAX_MAX_CHARS as i64),
        tz: a.tz.clone(),
        deadline: Some(deadline),
        ..Default::default()
    };
    let Some(id) = a.id.clone() else {
        if c.by_id {
            return Err(format!("`id`: {collection} is read one workout at a time; send the workout's id"));
        }
        let (start, end) = a.days()?;
        let req = QueryRequest { collection: collection.into(), start: Some(start), end: Some(end), ..base };
        let (out, records) = answer_value(engine.query(req).await.map_err(|e| e.to_string())?, "workouts")?;
        return Ok(with(out, "workouts", workouts(c, &records)));
    };
    let ns = collection.split_once('.').map_or("", |(ns, _)| ns);
    let (target, tc) = match spec.detail {
        Some(d) => (format!("{ns}.{d}"), engine.resolve(ns, d).map(|(_, c)| c).ok_or("the workout's detail collection is not registered")?),
        None => (collection.to_string(), c),
    };
    let options = tc.workout.map(|w| w.options).unwrap_or_default().iter().map(|o| (o.to_string(), json!(true))).collect();
    let req = if tc.by_id {
        QueryRequest { collection: target.clone(), id: Some(id.clone()), options: Some(options), ..base }
    } else {
        let (start, end) = a.days()?;
        QueryRequest { collection: target.clone(), start: Some(start), end: Some(end), options: Some(options), ..base }
    };
    let (out, records) = answer_value(engine.query(req).await.map_err(|e| e.to_string())?, "workout")?;
    let one = workouts(tc, &records).into_iter().find(|w| w.id.as_deref() == Some(id.as_str())).ok_or_else(|| {
        let days = a.days().map(|(s, e)| format!(" from {s} to {e}")).unwrap_or_default();
        format!("`id`: no workout {id:?} in {target}{days}; send an id from the answer's rows")
    })?;
    let mut out = with(out, "workout", one);
    out["collection"] = json!(target);
    Ok(out)
}

/// An answer as a view reads it, its records taken out (a view gets them drawn, not raw).
fn answer_value(answer: crate::engine::Answer, kind: &str) -> Result<(Value, Vec<Value>), String> {
    let mut out = serde_json::to_value(&answer).map_err(|e| e.to_string())?;
    let records = out.as_object_mut().and_then(|o| o.remove("data")).and_then(|d| d.as_array().cloned()).unwrap_or_default();
    out["kind"] = json!(kind);
    Ok((out, records))
}

fn with(mut out: Value, key: &str, v: impl serde::Serialize) -> Value {
    out[key] = serde_json::to_value(v).unwrap_or(Value::Null);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_is_whole_and_loads_nothing_from_outside() {
        for v in VIEWS {
            let page = html(v.uri).unwrap();
            assert!(page.starts_with("<!DOCTYPE html>"), "{}", v.uri);
            assert!(!page.contains("/*SCRIPT*/") && !page.contains("{{TITLE}}"), "{}: a placeholder left", v.uri);
            // The one address is SVG's namespace name, which is never fetched.
            let page = page.replace("\"http://www.w3.org/2000/svg\"", "");
            for outside in ["http://", "https://", "src=\"//", "@import", "url(", "fetch(", "XMLHttpRequest", "WebSocket", "import("] {
                assert!(!page.contains(outside), "{} names an address or a way out ({outside})", v.uri);
            }
        }
    }

    #[test]
    fn only_a_host_that_declared_the_html_profile_gets_views() {
        let info = |ext: Value| -> ClientConfig {
            serde_json::from_value(json!({"protocolVersion": "2025-06-18", "capabilities": {"extensions": ext}, "clientInfo": {"name": "h", "version": "1"}}))
                .unwrap()
        };
        assert!(host_supports(Some(&info(json!({EXTENSION: {"mimeTypes": [MIME]}})))));
        assert!(!host_supports(Some(&info(json!({EXTENSION: {"mimeTypes": ["text/html"]}})))));
        assert!(!host_supports(Some(&info(json!({"other/ext": {"mimeTypes": [MIME]}})))));
        assert!(!host_supports(None));
    }
}
