//! The stdio channel as a hostile client uses it, byte by byte (no MCP client library in between):
//! every request gets an answer with the right JSON-RPC code, a reused id never swallows the first
//! query, and stdout carries nothing but JSON-RPC, up to a clean exit when stdin closes.
use crate::common::*;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// Every line read from stdout, for the all-JSON check at the end.
    seen: Vec<String>,
}

impl Raw {
    async fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }
    async fn send_json(&mut self, v: Value) {
        self.send(v.to_string().as_bytes()).await;
    }
    /// The next message from the server (within 30 s).
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line()).await.expect("an answer within 30 s").unwrap().expect("a line");
        self.seen.push(line.clone());
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"))
    }
    /// The answer to request `id`, skipping notifications.
    async fn answer(&mut self, id: Value) -> Value {
        loop {
            let m = self.next().await;
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return m;
            }
        }
    }
}

async fn spawn(twin: &vitals_twin::Twin) -> Raw {
    let mut cmd = tokio::process::Command::from(bare_cmd());
    cmd.env("OURA_PAT", TOKEN)
        .env("VITALS_OURA_BASE_URL", twin.base_url())
        .env("VITALS_TZ", "-06:00")
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_CONFIG_DIR", scratch().join(format!("stdio-{}", std::process::id())))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut raw = Raw { child, stdin, lines, seen: vec![] };
    raw.send_json(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})).await;
    assert!(raw.answer(json!(1)).await["result"]["serverInfo"].is_object());
    raw.send_json(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    raw
}

fn code(m: &Value) -> i64 {
    m["error"]["code"].as_i64().unwrap_or_else(|| panic!("an error answer: {m}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_on_stdin_gets_json_rpc_errors_and_stdout_stays_protocol() {
    let twin = twin().await;
    let mut s = spawn(&twin).await;

    // Not JSON: a parse error, id null.
    s.send(b"this is not json").await;
    let m = s.next().await;
    assert_eq!((code(&m), &m["id"]), (-32700, &Value::Null), "{m}");

    // tools/call params of the wrong shape: invalid params (-32602), never "method not found".
    for (id, params) in [
        (10, json!({"name": "vitals_sources", "arguments": [1, 2]})),
        (11, json!({"name": "vitals_sources", "arguments": "x"})),
        (12, json!({"name": "vitals_sources", "arguments": 5})),
        (13, json!({"name": 42})),
        (14, Value::Null),
    ] {
        let mut req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call"});
        if !params.is_null() {
            req["params"] = params.clone();
        }
        s.send_json(req).await;
        let m = s.answer(json!(id)).await;
        assert_eq!(code(&m), -32602, "{params}: {m}");
        assert!(m["error"]["message"].as_str().unwrap().contains("tools/call"), "{m}");
    }

    // An unknown method: method not found.
    s.send_json(json!({"jsonrpc": "2.0", "id": 20, "method": "no/such/method"})).await;
    assert_eq!(code(&s.answer(json!(20)).await), -32601);

    // A line over the limit (20 MB, the id at its end): answered, with the limit said.
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"vitals_query","arguments":{{"collection":"{}"}}}},"id":21}}"#,
        "x".repeat(20 << 20)
    );
    s.send(big.as_bytes()).await;
    let m = s.answer(json!(21)).await;
    assert_eq!(code(&m), -32600);
    assert!(m["error"]["message"].as_str().unwrap().contains("at most 4194304 bytes"), "{m}");

    // An id reused while the first request is pending: the second is refused, the first answered.
    twin.set_faults(vitals_twin::Faults { latency_ms: 400, ..Default::default() });
    let q = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "vitals_query", "arguments": {"collection": "oura.daily_sleep", "day": "2026-06-10", "forget": true}}});
    s.send_json(q(30)).await;
    s.send_json(q(30)).await;
    let first = s.next().await;
    let second = s.next().await;
    let (refused, answered) = if first.get("error").is_some() { (first, second) } else { (second, first) };
    assert_eq!((code(&refused), &refused["id"]), (-32600, &json!(30)), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("already in use"), "{refused}");
    assert_eq!(answered["id"], 30);
    assert!(answered["result"]["structuredContent"]["count"].is_number(), "the first query was answered: {answered}");
    twin.set_faults(vitals_twin::Faults::default());
    // Once answered, the id is free again.
    s.send_json(q(30)).await;
    assert!(s.answer(json!(30)).await["result"].is_object());

    // stdin closes: a clean exit, and everything written to stdout was JSON-RPC.
    close_and_exit_cleanly(s).await;
}

/// Close stdin: the server exits with success within seconds, and every line it wrote to stdout
/// was JSON-RPC.
async fn close_and_exit_cleanly(mut s: Raw) {
    drop(s.stdin);
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(10), s.lines.next_line()).await {
        s.seen.push(line);
    }
    let status = tokio::time::timeout(Duration::from_secs(10), s.child.wait()).await.expect("the server exits when stdin closes").unwrap();
    assert!(status.success(), "{status}");
    for line in &s.seen {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON on stdout: {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
}

/// A client that closes stdin while a query is still waiting on the provider: the server exits
/// cleanly and soon (it does not wait out the read, nor panic on the closed channel), and what it
/// wrote to stdout up to then is JSON-RPC only.
#[tokio::test(flavor = "multi_thread")]
async fn stdin_closed_mid_answer_ends_the_server_cleanly() {
    let twin = twin().await;
    let mut s = spawn(&twin).await;
    // Longer than the exit is given: a server that waited for the answer would fail here.
    twin.set_faults(vitals_twin::Faults { latency_ms: 30_000, ..Default::default() });
    let ask = json!({"collection": "oura.heartrate", "start": "2026-06-01", "end": "2026-06-07", "forget": true});
    s.send_json(json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {"name": "vitals_query", "arguments": ask}})).await;
    // The query is on its way to the twin when the client goes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    close_and_exit_cleanly(s).await;
    twin.set_faults(vitals_twin::Faults::default());
}
