//! The official MCP conformance suite against `vitals-mcp serve` (one person, and a tenant), and the
//! MCP Inspector's CLI listing and calling every tool over HTTP and over stdio. Both are npm
//! packages, installed once into target/ with the Node 22 they need.
use super::common::*;
use super::http::{folder, hosted};
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;

pub const CONFORMANCE: &str = "@modelcontextprotocol/conformance@0.1.16";
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The suite's server scenarios that apply to a server with tools and one resource: each must pass.
pub const APPLIES: [&str; 7] =
    ["server-initialize", "ping", "tools-list", "server-sse-polling", "server-sse-multiple-streams", "resources-list", "dns-rebinding-protection"];

/// The others, each with why it does not apply (README lists them).
pub const NOT_APPLICABLE: [(&str, &str); 25] = [
    ("logging-set-level", "no `logging` capability: the log goes to stderr, never to the client"),
    ("completion-complete", "no prompts or resource templates, so nothing to complete"),
    ("tools-call-simple-text", "calls the suite's own test tool"),
    ("tools-call-image", "calls the suite's own test tool"),
    ("tools-call-audio", "calls the suite's own test tool"),
    ("tools-call-embedded-resource", "calls the suite's own test tool"),
    ("tools-call-mixed-content", "calls the suite's own test tool"),
    ("tools-call-with-logging", "calls the suite's own test tool"),
    ("tools-call-error", "calls the suite's own test tool"),
    ("tools-call-with-progress", "calls the suite's own test tool"),
    ("tools-call-sampling", "calls the suite's own test tool"),
    ("tools-call-elicitation", "calls the suite's own test tool"),
    ("json-schema-2020-12", "calls the suite's own test tool"),
    ("elicitation-sep1034-defaults", "calls the suite's form-elicitation test tool; vitals asks only URL elicitation (no secret is typed in the chat)"),
    ("elicitation-sep1330-enums", "calls the suite's form-elicitation test tool; vitals asks only URL elicitation (no secret is typed in the chat)"),
    ("resources-read-text", "reads the suite's test:// resources; vitals' one resource, vitals://sources, is read in its own tests"),
    ("resources-read-binary", "reads the suite's test:// resources; vitals' one resource, vitals://sources, is read in its own tests"),
    ("resources-templates-read", "no resource templates"),
    ("resources-subscribe", "no `subscribe` capability: the sources change only when an account is connected"),
    ("resources-unsubscribe", "no `subscribe` capability: the sources change only when an account is connected"),
    ("prompts-list", "no prompts"),
    ("prompts-get-simple", "no prompts"),
    ("prompts-get-with-args", "no prompts"),
    ("prompts-get-embedded-resource", "no prompts"),
    ("prompts-get-with-image", "no prompts"),
];

/// Node 22, the suite and the Inspector, installed once into target/e2e-http-npm.
fn npm_tools() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("e2e-http-npm");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    if !dir.join("node_modules/.bin/node").exists()
        || !dir.join("node_modules/@modelcontextprotocol/inspector").exists()
        || !dir.join("node_modules/@modelcontextprotocol/conformance").exists()
    {
        let need = "this test needs npm and the npm registry";
        let o = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .args(["node@22", CONFORMANCE, INSPECTOR])
            .output()
            .expect(need);
        assert!(o.status.success(), "{need}: {}", String::from_utf8_lossy(&o.stderr));
    }
    dir
}

fn node(tools: &std::path::Path, script: &str) -> Command {
    let mut c = Command::new(tools.join("node_modules/.bin/node"));
    c.arg(tools.join("node_modules/@modelcontextprotocol").join(script));
    c
}

fn conformance(tools: &std::path::Path) -> Command {
    node(tools, "conformance/dist/index.js")
}

#[test]
fn every_server_scenario_of_the_suite_is_run_or_said_not_to_apply() {
    let tools = npm_tools();
    let o = conformance(&tools).args(["list", "--server"]).output().unwrap();
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    let mut known: Vec<&str> = APPLIES.iter().copied().chain(NOT_APPLICABLE.iter().map(|(s, _)| *s)).collect();
    let mut listed_sorted: Vec<&str> = listed.iter().map(String::as_str).collect();
    known.sort();
    listed_sorted.sort();
    assert_eq!(listed_sorted, known, "the suite's server scenarios are each run here or said not to apply");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_conformance_suite_passes_at_a_secret_path_and_at_a_tenant_with_and_without_oauth() {
    let tools = npm_tools();
    let twin = twin().await;
    let one = hosted(&twin, &folder("conformance-one"), &[], &[]).await;
    let tenants = folder("conformance-tenants");
    let t = super::http::sealed_tenants(&tenants);
    let secret = t.add().and_then(|id| vitals::hosted::hashed::new_url(&t, &id)).unwrap();
    let many = hosted(&twin, &folder("conformance-host"), &["--tenants", tenants.to_str().unwrap()], &[]).await;
    let tenant_url = format!("{}{}", many.base, vitals::hosted::tenants::mcp_path(&secret));
    // A server that lets assistants in with OAuth and, by the operator's named choice, connector
    // URLs too (`--auth oauth` alone opens no URL: tests/tests/e2e/oauth.rs).
    let with_oauth = hosted(&twin, &folder("conformance-oauth"), &["--tenants", tenants.to_str().unwrap(), "--auth", "oauth-or-url"], &[]).await;
    let oauth_tenant_url = format!("{}{}", with_oauth.base, vitals::hosted::tenants::mcp_path(&secret));
    for url in [one.url.clone(), tenant_url, oauth_tenant_url] {
        for scenario in APPLIES {
            let tools = tools.clone();
            let u = url.clone();
            let o =
                tokio::task::spawn_blocking(move || conformance(&tools).args(["server", "--url", &u, "--scenario", scenario]).output().unwrap()).await.unwrap();
            let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            assert!(o.status.success() && out.contains(" 0 failed"), "{scenario} at {url}: {out}");
        }
    }
}

/// Arguments that make each tool do its work on sample data.
fn args_of(tool: &str) -> Vec<String> {
    let (s, e) = (ds(ago(7)), ds(ago(1)));
    let pairs: Vec<String> = match tool {
        "vitals_query" => vec!["collection=oura.daily_sleep".into(), format!("start={s}"), format!("end={e}")],
        "vitals_connect" => vec!["provider=polar".into()],
        "vitals_export" => vec!["provider=garmin".into(), "id=1".into(), "format=fit".into(), "path=/nonexistent/a.fit".into()],
        "vitals_compare" => vec![
            "metric=oura.daily_sleep.score".into(),
            format!("a_start={}", ds(ago(28))),
            format!("a_end={e}"),
            format!("b_start={}", ds(ago(56))),
            format!("b_end={}", ds(ago(29))),
        ],
        "vitals_relate" => vec!["x=oura.daily_sleep.score".into(), "y=oura.daily_readiness.score".into(), format!("start={}", ds(ago(28))), format!("end={e}")],
        "vitals_trend" => vec!["metric=oura.daily_sleep.score".into(), format!("start={}", ds(ago(28))), format!("end={e}")],
        "vitals_daily" => vec![format!("start={s}"), format!("end={e}")],
        _ => vec![],
    };
    pairs
}

/// The Inspector CLI claiming MCP Apps (`--advertise-apps`, with the extension's MIME type, as a
/// host that renders views does) lists each tool with its `_meta.ui`, the app-only tool marked so,
/// and its `--app-info` probe reads each view's resource: the MIME type and the default CSP.
/// Without the claim it lists exactly the model's tools (checked by the caller).
fn inspector_sees_the_views(how: &str, run: &dyn Fn(Vec<String>) -> std::process::Output, names: &[String]) {
    let words = |w: &[&str]| w.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let o = run(words(&["--advertise-apps", "--method", "tools/list"]));
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{how}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    let listed = listed["tools"].as_array().unwrap();
    assert_eq!(listed.len(), names.len() + 1, "{how}: the model's tools and the views' own");
    for t in listed {
        let name = t["name"].as_str().unwrap();
        let ui = &t["_meta"]["ui"];
        let view = vitals::mcp::apps::view_of(name).map(|v| v.uri);
        assert_eq!(ui["resourceUri"].as_str(), view, "{how} {name}: {ui}");
        let visibility = if name == vitals::mcp::apps::APP_DATA_TOOL { json!(["app"]) } else { json!(["model", "app"]) };
        assert!(view.is_none() || ui["visibility"] == visibility, "{how} {name}: {ui}");
    }
    let o = run(words(&["--advertise-apps", "--app-info", "--method", "tools/list"]));
    let probes: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(probes.len(), listed.len(), "{how}: a line per tool: {probes:?}");
    for p in probes.iter().filter(|p| p["hasApp"] == true) {
        assert!(p.get("resourceError").is_none(), "{how}: {p}");
        assert_eq!(p["resourceMimeType"], vitals::mcp::apps::MIME, "{how}: {p}");
        assert_eq!(p["csp"], json!({}), "{how}: the default CSP, no domain: {p}");
    }
    assert_eq!(
        probes.iter().filter(|p| p["hasApp"] == true).count(),
        listed.iter().filter(|t| vitals::mcp::apps::view_of(t["name"].as_str().unwrap()).is_some()).count()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_lists_and_calls_every_tool_over_http_and_stdio() {
    let tools = npm_tools();
    let twin = twin().await;
    let config = folder("inspector");
    let h = hosted(&twin, &config, &[], &[]).await;
    let names = vitals_cmd().arg("--list-tools").output().unwrap();
    let names: Vec<String> = String::from_utf8_lossy(&names.stdout).lines().map(str::to_string).collect();
    assert_eq!(names.len(), 10, "{names:?}");
    let env = [
        ("VITALS_OURA_BASE_URL", twin.base_url()),
        ("VITALS_TZ", TZ.to_string()),
        ("VITALS_TOKEN_STORE", "file".into()),
        ("VITALS_CONFIG_DIR", config.display().to_string()),
    ];
    let stdio_env: Vec<String> = env.iter().flat_map(|(k, v)| ["-e".to_string(), format!("{k}={v}")]).collect();
    for (how, options, target) in [("http", vec![], h.url.clone()), ("stdio", stdio_env, server_bin().display().to_string())] {
        // The target goes last, after `--`: `--tool-arg` takes every word up to it.
        let run = |extra: Vec<String>| {
            let mut c = node(&tools, "inspector/clients/launcher/build/index.js");
            c.arg("--cli").args(&options).args(&extra).arg("--").arg(&target).env("MCP_CATALOG_PATH", config.join("catalog.json"));
            c.output().unwrap()
        };
        let o = run(vec!["--method".into(), "tools/list".into()]);
        let listed: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{how}: tools/list is JSON ({e}): {}", String::from_utf8_lossy(&o.stderr)));
        let listed: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(listed, names, "{how}: the Inspector lists the tools");
        inspector_sees_the_views(how, &run, &names);
        for tool in &names {
            let mut extra = vec!["--method".into(), "tools/call".into(), "--tool-name".into(), tool.clone()];
            let a = args_of(tool);
            if !a.is_empty() {
                extra.push("--tool-arg".into());
                extra.extend(a);
            }
            let o = run(extra);
            let out = String::from_utf8_lossy(&o.stdout);
            let r: serde_json::Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{how} {tool}: an answer ({e}): {out} {}", String::from_utf8_lossy(&o.stderr)));
            let text = r["content"][0]["text"].as_str().unwrap_or_default();
            assert!(!text.is_empty(), "{how} {tool}: {r}");
            // The calls with sample data answer; the two that need an account or a file say why.
            let refused = r["isError"].as_bool().unwrap_or(false);
            match tool.as_str() {
                "vitals_connect" | "vitals_export" => assert!(refused, "{how} {tool}: {text}"),
                _ => assert!(!refused, "{how} {tool}: {text}"),
            }
        }
    }
}
