//! The stdio channel, guarded: every line a client sends gets an answer or is a notification, and
//! nothing but JSON-RPC is written to stdout. Before a message reaches rmcp, this layer answers
//! what rmcp would drop or misname: a line that is not JSON (-32700), a line over the size limit
//! (its id, when one can be found, gets -32600 saying the limit), `tools/call` params of the wrong
//! shape (-32602, where rmcp says "method not found"), and an id reused while the first request
//! with it is still being answered (-32600: both are never confused, and the first still gets its
//! answer).
use futures::{Sink, Stream};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::RoleServer;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The longest request line read: no vitals request needs more than a few kilobytes, and a
/// longer line is refused (answered) instead of being held in memory.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// How much of an oversized line's start and end is kept to find its id.
const EDGE: usize = 4096;

/// What rmcp writes to: messages for the client, one JSON line each.
pub type ToClient = Pin<Box<dyn Sink<TxJsonRpcMessage<RoleServer>, Error = std::io::Error> + Send>>;
/// What rmcp reads: the client's messages that passed the guard.
pub type FromClient = Pin<Box<dyn Stream<Item = RxJsonRpcMessage<RoleServer>> + Send>>;

type Out = Arc<tokio::sync::Mutex<Pin<Box<dyn AsyncWrite + Send>>>>;
type Pending = Arc<Mutex<HashSet<String>>>;

/// The sink rmcp writes to and the stream it reads from, over any reader and writer (stdin and
/// stdout in the server; a pipe in tests).
pub fn guarded<R, W>(read: R, write: W) -> (ToClient, FromClient)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + 'static,
{
    let out: Out = Arc::new(tokio::sync::Mutex::new(Box::pin(write)));
    let pending: Pending = Arc::default();
    let (tx, rx) = tokio::sync::mpsc::channel::<RxJsonRpcMessage<RoleServer>>(64);
    tokio::spawn(read_loop(BufReader::new(read), tx, out.clone(), pending.clone()));
    let sink = futures::sink::unfold((out, pending), |(out, pending), msg: TxJsonRpcMessage<RoleServer>| async move {
        let v = serde_json::to_value(&msg).map_err(std::io::Error::other)?;
        if v.get("result").is_some() || v.get("error").is_some() {
            if let Some(id) = v.get("id") {
                pending.lock().expect("pending ids").remove(&id.to_string());
            }
        }
        write_line(&out, &v).await?;
        Ok((out, pending))
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) });
    (Box::pin(sink), Box::pin(stream))
}

async fn write_line(out: &Out, v: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(v).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut w = out.lock().await;
    w.write_all(&line).await?;
    w.flush().await
}

async fn refuse(out: &Out, id: Value, code: i64, message: String) {
    tracing::info!(code, "{message}");
    let _ = write_line(out, &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})).await;
}

/// One line as it came: whole, or too long (its start and end kept).
enum Line {
    Whole(Vec<u8>),
    TooLong { head: Vec<u8>, tail: Vec<u8>, len: usize },
}

async fn read_line<R: AsyncRead + Unpin>(r: &mut BufReader<R>) -> std::io::Result<Option<Line>> {
    let mut buf = Vec::new();
    // Set once the line passes the limit: its first bytes, its last bytes, its length so far.
    let mut over: Option<(Vec<u8>, Vec<u8>, usize)> = None;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            // End of input: a last line without a newline is still a line.
            return Ok(match over {
                Some((head, tail, len)) => Some(Line::TooLong { head, tail, len }),
                None if buf.is_empty() => None,
                None => Some(Line::Whole(buf)),
            });
        }
        let newline = chunk.iter().position(|b| *b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        match &mut over {
            None if buf.len() + part.len() <= MAX_LINE_BYTES => buf.extend_from_slice(part),
            None => {
                let head: Vec<u8> = buf.iter().chain(part).take(EDGE).copied().collect();
                let mut tail = std::mem::take(&mut buf);
                tail.extend_from_slice(part);
                let len = tail.len();
                tail.drain(..len.saturating_sub(EDGE));
                over = Some((head, tail, len));
            }
            Some((_, tail, len)) => {
                *len += part.len();
                tail.extend_from_slice(part);
                if tail.len() > 2 * EDGE {
                    tail.drain(..tail.len() - EDGE);
                }
            }
        }
        let used = newline.map_or(chunk.len(), |i| i + 1);
        r.consume(used);
        if newline.is_some() {
            return Ok(Some(match over {
                Some((head, tail, len)) => Line::TooLong { head, tail, len },
                None => Line::Whole(buf),
            }));
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(mut r: BufReader<R>, tx: tokio::sync::mpsc::Sender<RxJsonRpcMessage<RoleServer>>, out: Out, pending: Pending) {
    loop {
        let line = match read_line(&mut r).await {
            Ok(Some(l)) => l,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("reading stdin failed: {e}");
                return;
            }
        };
        let bytes = match line {
            Line::TooLong { head, tail, len } => {
                let id = id_in(&head, &tail).unwrap_or(Value::Null);
                refuse(
                    &out,
                    id,
                    -32600,
                    format!(
                        "Invalid request: the message is {len} bytes long; this server reads messages of at most {MAX_LINE_BYTES} bytes \
                         (4 MiB) per line. Send a shorter request (tool arguments are a few kilobytes at most)."
                    ),
                )
                .await;
                continue;
            }
            Line::Whole(b) => b,
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                refuse(&out, Value::Null, -32700, format!("Parse error: the line is not JSON ({e}). Send one JSON-RPC message per line.")).await;
                continue;
            }
        };
        if let Some(answer) = screen(&v, &pending) {
            let (id, code, message) = answer;
            refuse(&out, id, code, message).await;
            continue;
        }
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(v.clone()) {
            Ok(msg) => {
                if tx.send(msg).await.is_err() {
                    return;
                }
            }
            Err(e) => {
                if let Some(id) = v.get("id").filter(|_| v.get("method").is_some()) {
                    pending.lock().expect("pending ids").remove(&id.to_string());
                }
                let id = v.get("id").cloned().unwrap_or(Value::Null);
                refuse(&out, id, -32600, format!("Invalid request: {e}. Send a JSON-RPC 2.0 request, response or notification.")).await;
            }
        }
    }
}

/// What this layer answers itself (id, code, message), or None to pass the message on.
fn screen(v: &Value, pending: &Pending) -> Option<(Value, i64, String)> {
    let Some(obj) = v.as_object() else {
        return Some((Value::Null, -32600, "Invalid request: a message is a JSON object (batches are not part of MCP).".into()));
    };
    let method = obj.get("method").and_then(Value::as_str);
    if method == Some("notifications/cancelled") {
        // A cancelled request may get no answer; its id is free again.
        if let Some(id) = v.pointer("/params/requestId") {
            pending.lock().expect("pending ids").remove(&id.to_string());
        }
    }
    let (Some(method), Some(id)) = (method, obj.get("id")) else {
        return None;
    };
    if method == "tools/call" {
        if let Some(why) = tool_call_params(obj.get("params")) {
            return Some((id.clone(), -32602, format!("Invalid params for tools/call: {why}")));
        }
    }
    if !pending.lock().expect("pending ids").insert(id.to_string()) {
        return Some((
            id.clone(),
            -32600,
            format!("Invalid request: id {id} is already in use by a request this server is still answering. Send each request with an id of its own; the first one will still be answered."),
        ));
    }
    None
}

fn tool_call_params(p: Option<&Value>) -> Option<String> {
    let Some(p) = p.and_then(Value::as_object) else {
        return Some(format!("`params` must be an object with `name` (the tool) and `arguments` (an object); {} was sent.", kind(p)));
    };
    match p.get("name") {
        Some(Value::String(_)) => {}
        other => return Some(format!("`name` must be the tool's name as a string, e.g. \"vitals_sources\"; {} was sent.", kind(other))),
    }
    match p.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        other => {
            Some(format!("`arguments` must be an object of the tool's parameters, e.g. {{\"collection\": \"oura.daily_sleep\"}}; {} was sent.", kind(other)))
        }
    }
}

fn kind(v: Option<&Value>) -> &'static str {
    match v {
        None => "nothing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

/// The id of a message too long to parse, from its edges: a top-level `"id"` is near the start
/// or near the end. None when neither edge shows one.
fn id_in(head: &[u8], tail: &[u8]) -> Option<Value> {
    let find = |s: &str| -> Option<Value> {
        let at = s.find("\"id\"")?;
        let rest = s[at + 4..].trim_start().strip_prefix(':')?.trim_start();
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        serde_json::from_str::<Value>(rest[..end].trim()).ok().filter(|v| v.is_number() || v.is_string())
    };
    find(&String::from_utf8_lossy(head)).or_else(|| {
        let t = String::from_utf8_lossy(tail);
        t.rfind("\"id\"").and_then(|i| find(&t[i..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_at_either_edge_of_a_long_line() {
        assert_eq!(id_in(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaaa"#, b"aaaa\"}}"), Some(json!(7)));
        assert_eq!(id_in(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"x":"aaaa"#, br#"aaaa"}},"id":"abc"}"#), Some(json!("abc")));
        assert_eq!(id_in(b"aaaa", b"bbbb"), None);
    }

    #[test]
    fn tools_call_params_of_the_wrong_shape_are_said() {
        assert!(tool_call_params(Some(&json!({"name": "vitals_sources", "arguments": []}))).unwrap().starts_with("`arguments` must be an object"));
        assert!(tool_call_params(Some(&json!({"name": 5}))).unwrap().starts_with("`name` must be"));
        assert!(tool_call_params(None).unwrap().contains("nothing was sent"));
        assert!(tool_call_params(Some(&json!("x"))).unwrap().contains("a string was sent"));
        assert_eq!(tool_call_params(Some(&json!({"name": "vitals_sources"}))), None);
    }
}
