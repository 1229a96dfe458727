//! "What the model reads": everyday questions, the call a model makes for each, and the characters
//! of the text it gets back (the tool list: each tool's name, description and input schema as
//! compact JSON, which is what a host hands the model), complete or not, beside mcp-oura's figure
//! for the same question where it has one. Measured on the twins with Oura connected (the other
//! providers not), and with every provider connected. Each figure is a size, not a time: one run each.
use super::{leak, save_polar, save_whoop, save_withings, start, stop, McpOura, Server, Vitals};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{json, Value};
use std::path::Path;

/// A question's call: the tool list, or one tool with its arguments.
#[derive(Clone)]
enum Call {
    Tools,
    /// The tool list as a host hands it to the model whole: with each tool's title and output schema.
    ToolsWhole,
    Tool(&'static str, Value),
}

struct Question {
    label: &'static str,
    vitals: Call,
    peer: Option<Call>,
    /// The target this figure is held to, in words, and the test of it.
    target: Target,
}

#[derive(Clone, Copy)]
enum Target {
    None,
    /// At most this many characters.
    At(usize),
    /// At most this share of the peer's figure.
    OfPeer(f64),
    /// At most this many characters per connected provider.
    PerProvider(usize),
}

/// One measured answer.
#[derive(Default, Clone)]
struct Read {
    chars: Option<usize>,
    complete: Option<bool>,
}

/// Today in the twin's zone (UTC−6, as the bench's servers are told).
fn today() -> jiff::civil::Date {
    jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date()
}

fn day(back: i64) -> String {
    let t = today();
    t.checked_sub(jiff::Span::new().days(back)).unwrap_or(t).to_string()
}

fn questions(every: bool) -> Vec<Question> {
    let q = |collection: &str, start: String, end: String| json!({"collection": collection, "start": start, "end": end});
    let peer = |collection: &str, start: String, end: String| Call::Tool("oura_query", json!({"collection": collection, "start": start, "end": end}));
    let mut out = vec![
        Question { label: "the tool list", vitals: Call::Tools, peer: Some(Call::Tools), target: Target::At(9_000) },
        Question { label: "the tool list with output schemas", vitals: Call::ToolsWhole, peer: Some(Call::ToolsWhole), target: Target::At(20_000) },
        Question {
            label: "the catalog",
            vitals: Call::Tool("vitals_sources", json!({})),
            peer: Some(Call::Tool("oura_collections", json!({}))),
            target: Target::At(6_000),
        },
        Question {
            label: "how did I sleep last night",
            vitals: Call::Tool("vitals_query", q("oura.sleep", day(0), day(0))),
            peer: Some(peer("sleep", day(0), day(0))),
            target: Target::None,
        },
        Question {
            label: "how did I sleep this week",
            vitals: Call::Tool("vitals_today", json!({})),
            peer: Some(Call::Tool("oura_today", json!({}))),
            target: Target::OfPeer(if every { 2.5 } else { 1.0 }),
        },
        Question {
            label: "should I train hard today",
            vitals: Call::Tool("vitals_today", json!({"days": 1})),
            peer: Some(Call::Tool("oura_today", json!({"days": 1}))),
            target: Target::PerProvider(3_000),
        },
        Question {
            label: "a week of sleep, every field",
            vitals: Call::Tool("vitals_query", q("oura.sleep", day(6), day(0))),
            peer: Some(peer("sleep", day(6), day(0))),
            target: Target::OfPeer(0.5),
        },
        Question {
            label: "my heart rate yesterday",
            vitals: Call::Tool("vitals_query", json!({"collection": "oura.heartrate", "day": day(1)})),
            peer: Some(Call::Tool("oura_query", json!({"collection": "heartrate", "day": day(1)}))),
            target: Target::OfPeer(0.5),
        },
        Question {
            label: "my weight this month",
            vitals: Call::Tool("vitals_query", q("withings.measurements", day(29), day(0))),
            peer: None,
            target: Target::None,
        },
        Question {
            label: "my last five runs",
            vitals: Call::Tool("vitals_query", q("oura.workout", day(29), day(0))),
            peer: Some(peer("workout", day(29), day(0))),
            target: Target::None,
        },
        Question {
            label: "the last two weeks side by side",
            vitals: Call::Tool("vitals_daily", json!({"start": day(14), "end": day(1)})),
            peer: None,
            target: Target::None,
        },
    ];
    if every {
        out.push(Question {
            label: "my last five runs (Garmin)",
            vitals: Call::Tool("vitals_query", q("garmin.activities", day(29), day(0))),
            peer: None,
            target: Target::None,
        });
    }
    out
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text()).map(|x| x.text.clone()).collect()
}

/// Whether an answer is complete: not an error, nothing cut, no section failed or left out to fit.
fn complete(r: &CallToolResult, body: &str) -> bool {
    if r.is_error == Some(true) {
        return false;
    }
    let v: Value = r.structured_content.clone().or_else(|| serde_json::from_str(body).ok()).unwrap_or_default();
    let cut = v.pointer("/notices/truncated").is_some_and(|t| !t.is_null()) || v.get("truncated").is_some_and(|t| !t.is_null() && t != false);
    let failed = v.get("errors").and_then(Value::as_array).is_some_and(|e| !e.is_empty())
        || v.get("error").is_some()
        || v.get("shortened").is_some()
        || v.get("providers")
            .and_then(Value::as_array)
            .is_some_and(|ps| ps.iter().any(|p| p.get("errors").and_then(Value::as_array).is_some_and(|e| !e.is_empty())));
    !cut && !failed
}

async fn ask(s: &dyn Server, base: &str, call: &Call) -> Read {
    let (client, _) = start(s, base).await;
    let read = match call {
        Call::Tools => {
            let tools = client.list_all_tools().await.expect("tools/list");
            let chars = tools
                .iter()
                .map(|t| {
                    let schema = serde_json::to_string(&*t.input_schema).unwrap_or_default();
                    t.name.chars().count() + t.description.as_deref().map_or(0, |d| d.chars().count()) + schema.chars().count()
                })
                .sum();
            Read { chars: Some(chars), complete: None }
        }
        Call::ToolsWhole => {
            let tools = client.list_all_tools().await.expect("tools/list");
            let json = |v: &serde_json::Map<String, Value>| serde_json::to_string(v).unwrap_or_default().chars().count();
            let chars = tools
                .iter()
                .map(|t| {
                    t.name.chars().count()
                        + t.title.as_deref().map_or(0, |x| x.chars().count())
                        + t.description.as_deref().map_or(0, |d| d.chars().count())
                        + json(&t.input_schema)
                        + t.output_schema.as_deref().map_or(0, json)
                })
                .sum();
            Read { chars: Some(chars), complete: None }
        }
        Call::Tool(tool, args) => {
            let params = CallToolRequestParams::new(*tool).with_arguments(args.as_object().cloned().unwrap_or_default());
            match client.call_tool(params).await {
                Ok(r) => {
                    let body = text(&r);
                    dump(tool, args, &body);
                    Read { chars: Some(body.chars().count()), complete: Some(complete(&r, &body)) }
                }
                Err(e) => {
                    eprintln!("{tool}: {e}");
                    Read::default()
                }
            }
        }
    };
    stop(client).await;
    read
}

fn verdict(t: Target, v: &Read, p: &Read, providers: usize) -> String {
    let (Some(c), ok) = (v.chars, v.complete.unwrap_or(true)) else { return "-".into() };
    let (limit, words) = match t {
        Target::None => return "-".into(),
        Target::At(n) => (n as f64, format!("≤ {n}")),
        Target::OfPeer(share) => match p.chars {
            Some(pc) => (pc as f64 * share, format!("≤ {share}× peer")),
            None => return "-".into(),
        },
        Target::PerProvider(n) => ((n * providers) as f64, format!("≤ {n} × {providers}")),
    };
    let met = c as f64 <= limit && ok;
    format!("{words}: {}", if met { "met" } else { "NOT MET" })
}

/// The section, printed as a table README takes whole.
pub async fn run(root: &Path, server: &Path, twin: &vitals_twin::Twin, peer: Option<&McpOura>) {
    let base = twin.base_url();
    for every in [false, true] {
        let dir = super::fresh(root.join(if every { "target/bench/reads-every" } else { "target/bench/reads-oura" }));
        std::fs::create_dir_all(&dir).expect("the bench's config folder");
        let mut env = vec![("VITALS_CONFIG_DIR", leak(dir.display().to_string())), ("VITALS_TOKEN_STORE", "file")];
        if every {
            save_withings(&dir, twin, 0);
            save_polar(&dir, twin, 0);
            env.extend(save_whoop(&dir, twin));
            env.extend([
                ("VITALS_WITHINGS_BASE_URL", leak(base.clone())),
                ("VITALS_POLAR_BASE_URL", leak(twin.mounted("polar"))),
                ("VITALS_GARMIN_API_KEY", vitals_twin::garmin::KEY),
                ("VITALS_GARMIN_BASE_URL", leak(twin.mounted("garmin"))),
            ]);
        }
        let vitals = Vitals(server.to_path_buf(), env);
        let providers = if every { vitals::providers::specs().filter(|s| s.connection.session().is_none_or(|x| !x.explicit)).count() } else { 1 };
        println!(
            "\nwhat the model reads, {}: characters of the text a model gets (the tool list: name + description + input schema, compact JSON)\n",
            if every { "every provider connected (Oura, Withings, Polar, Garmin, WHOOP)" } else { "Oura connected, the other providers not" }
        );
        println!("| question | call | vitals | complete | mcp-oura 0.4.0 | vitals / peer | target |");
        println!("|---|---|---|---|---|---|---|");
        for q in questions(every) {
            let v = ask(&vitals, &base, &q.vitals).await;
            let p = match (&q.peer, peer) {
                (Some(call), Some(peer)) => ask(peer, &base, call).await,
                _ => Read::default(),
            };
            let call = match &q.vitals {
                Call::Tools => "`tools/list`".to_string(),
                Call::ToolsWhole => "`tools/list` (titles and output schemas too)".to_string(),
                Call::Tool(t, a) => format!("`{t} {}`", a),
            };
            let n = |r: &Read| r.chars.map_or("-".into(), thousands);
            let ratio = match (v.chars, p.chars) {
                (Some(a), Some(b)) if b > 0 => format!("{:.2}", a as f64 / b as f64),
                _ => "-".into(),
            };
            let whole = v.complete.map_or("-", |c| if c { "yes" } else { "NO" });
            println!("| {} | {call} | {} | {whole} | {} | {ratio} | {} |", q.label, n(&v), n(&p), verdict(q.target, &v, &p, providers));
        }
    }
}

/// `VITALS_BENCH_DUMP=DIR` keeps every answer's text there, to read what the model reads.
fn dump(tool: &str, args: &Value, body: &str) {
    let Ok(dir) = std::env::var("VITALS_BENCH_DUMP") else { return };
    let name: String = format!("{tool}-{args}").chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(Path::new(&dir).join(format!("{name}.json")), body);
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
