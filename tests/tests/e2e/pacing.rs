//! What an answer says of waiting on a provider's limits, read as a person would (issue 48, 4):
//! the seconds actually waited, the cause as it was (the provider's 429 with or without
//! `Retry-After`, its rate headers, or vitals' own count of its budget), and what the answer
//! holds. When the provider's window frees only after the call must answer, the call answers at
//! once with what it has and `continue_from` (cause `rate_limited`), instead of idling until its
//! deadline cuts it (cause `time_budget`) and saying it waited a wait it never finished.
use crate::common;
use common::*;
use serde_json::{json, Value};
use vitals_twin::whoop::WhoopFaults;
use vitals_twin::wire::{Fault, Rule};

/// A server reading the twin's WHOOP with a login the twin issued, with `extra` settings.
async fn whoop(twin: &Twin, tag: &str, extra: &[(&str, &str)]) -> Session {
    let dir = scratch().join(format!("vitals-e2e-pacing-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tokens = twin.whoop(|w| w.stored_login(&format!("whoop-pacing-{tag}")));
    vitals::accounts::TokenStore::file(&dir).save("whoop", &tokens).unwrap();
    let mut env = whoop_env(twin);
    env.push(("VITALS_CONFIG_DIR".into(), dir.display().to_string()));
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    pairs.extend_from_slice(extra);
    connect(twin, true, &pairs).await
}

/// The data requests WHOOP's twin served, and the 429s its own budget sent.
fn served(twin: &Twin) -> (usize, u32) {
    twin.whoop(|w| (w.served.len(), w.rate_limited))
}

/// The number just before `unit` after `lead` in `text` ("… sent in 58 s, …" → 58).
fn number_after(text: &str, lead: &str, unit: &str) -> f64 {
    let rest = &text[text.find(lead).unwrap_or_else(|| panic!("{lead:?} in {text}")) + lead.len()..];
    rest[..rest.find(unit).unwrap()].trim().parse().unwrap_or_else(|_| panic!("a number after {lead:?} in {text}"))
}

/// Seconds waited as the notes write them.
fn said_seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{s:.1} s")
    }
}

/// A cut for a request held back: said at once as `rate_limited`, with what held it (`lead`,
/// up to the seconds until it frees) and when it frees, past what the call had left, and nothing
/// waited; no `Retry-After` WHOOP never sent.
fn held_at_once(a: &Value, lead: &str) -> String {
    let n = &a["notices"];
    let t = &n["truncated"];
    assert_eq!(t["cause"], "rate_limited", "answered before the deadline, not cut by it: {n}");
    assert!(t["continue_from"].is_string() && t["missing"].is_object(), "{t}");
    let reason = t["reason"].as_str().unwrap().to_string();
    assert!(reason.starts_with(&format!("INCOMPLETE: {lead}")), "{reason}");
    let free = number_after(&reason, lead, " s");
    let left = number_after(&reason, "later than this call's time budget allows (", " s of its");
    assert!(free > left, "it frees after the call's time is up: {reason}");
    assert!(reason.contains("so this answer stopped at once, without waiting"), "{reason}");
    assert!(reason.contains(&format!("To go on: wait {free} s, then call again with `start` = `continue_from`")), "{reason}");
    assert!(n["paced"].is_null() && n["rate_limited"].is_null(), "nothing was waited, and no 429 came: {n}");
    assert!(!n.to_string().contains("Retry-After"), "WHOOP sent no Retry-After: {n}");
    reason
}

#[tokio::test(flavor = "multi_thread")]
async fn whoops_headers_saying_its_minute_is_spent_answer_at_once_when_it_frees_after_the_call() {
    let twin = twin().await;
    // Three requests a minute, a record a page: the third answer's headers say the minute is
    // spent (X-RateLimit-Remaining: 0) and resets in about 60 s; the call has 10 s.
    twin.whoop(|w| {
        w.cfg.per_minute = 3;
        w.cfg.page_cap = Some(1);
    });
    let s = whoop(&twin, "spent", &[("VITALS_CALL_BUDGET_S", "10"), ("VITALS_CONCURRENCY", "1")]).await;
    let a = records_of(&s, "whoop.sleep", json!({"start": ds(ago(6)), "end": ds(today())})).await;
    held_at_once(&a, "WHOOP's rate headers said its budget is spent and resets in ");
    assert_eq!(served(&twin), (3, 0), "three requests, and none sent into the spent minute");
    // Asked again at once from where it stopped: the same, without a request.
    let from = a["notices"]["truncated"]["continue_from"].as_str().unwrap().to_string();
    let b = records_of(&s, "whoop.sleep", json!({"start": from, "end": ds(today())})).await;
    held_at_once(&b, "WHOOP's rate headers said its budget is spent and resets in ");
    assert_eq!(served(&twin), (3, 0), "a spent minute is not asked again before it resets");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn vitals_own_count_of_whoops_budget_answers_at_once_when_the_next_request_is_a_minute_away() {
    let twin = twin().await;
    // WHOOP's twin would take thousands a minute: only vitals' own count (100 a minute) holds.
    twin.whoop(|w| {
        w.cfg.per_minute = 10_000;
        w.cfg.page_cap = Some(1);
    });
    let s = whoop(&twin, "own", &[("VITALS_CALL_BUDGET_S", "40"), ("VITALS_CONCURRENCY", "1")]).await;
    let a = records_of(&s, "whoop.sleep", json!({"start": ds(ago(150)), "end": ds(ago(1))})).await;
    held_at_once(&a, "vitals' own count of WHOOP's budget (100 requests per 60 s) is spent: the next request could be sent in ");
    assert_eq!(served(&twin), (100, 0), "the budget's hundred requests, then none");
    let reason = a["notices"]["truncated"]["reason"].as_str().unwrap();
    assert!(a["range"].is_object() && reason.contains("(`range`) are complete"), "what the answer holds: {reason}");
    assert!(!reason.contains("429"), "WHOOP refused nothing: {reason}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_with_retry_after_is_waited_out_and_the_seconds_waited_are_said() {
    let twin = twin().await;
    let s = whoop(&twin, "retry-after", &[]).await;
    twin.whoop(|w| w.cfg.faults = WhoopFaults { rate_limit_next: 2, retry_after: true, server_error_next: 0 });
    let a = records_of(&s, "whoop.workout", json!({"start": ds(ago(20)), "end": ds(ago(1))})).await;
    let n = &a["notices"];
    assert!(n["truncated"].is_null(), "carried on to the end: {n}");
    let r = &n["rate_limited"];
    assert_eq!(r["retries"], 2, "{n}");
    let waited = r["waited_seconds"].as_f64().unwrap();
    assert!(waited >= 0.5, "a window waited about the second WHOOP asked for: {r}");
    let note = r["note"].as_str().unwrap();
    assert!(note.starts_with("WHOOP answered 429 (too many requests) 2 time(s): 2 with Retry-After (up to 1 s)."), "{note}");
    assert!(note.contains(&format!("Then vitals waited {} and asked again", said_seconds(waited))), "the seconds waited: {note}");
    assert!(note.ends_with("every page it refused was fetched after the wait."), "{note}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_without_retry_after_is_said_without_one_in_a_query_and_in_the_days_report() {
    let twin = twin().await;
    let s = whoop(&twin, "no-retry-after", &[]).await;
    // WHOOP's 429 without Retry-After: its rate headers say the budget resets in a second.
    twin.whoop(|w| w.cfg.faults = WhoopFaults { rate_limit_next: 1, retry_after: false, server_error_next: 0 });
    let a = records_of(&s, "whoop.workout", json!({"start": ds(ago(20)), "end": ds(ago(1))})).await;
    let n = &a["notices"];
    assert!(n["truncated"].is_null(), "{n}");
    let note = n["rate_limited"]["note"].as_str().unwrap();
    assert!(
        note.starts_with("WHOOP answered 429 (too many requests) 1 time(s): 1 without Retry-After, its rate headers saying its budget resets in up to 1 s."),
        "{note}"
    );
    assert!(!note.contains("with Retry-After") && !note.contains("as it asked"), "{note}");
    // The day's report says it once for WHOOP, the same way.
    twin.whoop(|w| w.cfg.faults = WhoopFaults { rate_limit_next: 2, retry_after: false, server_error_next: 0 });
    let t = s.ok("vitals_today", json!({"days": 2})).await;
    let whoop = t["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "whoop").expect("a WHOOP part");
    let said = whoop["notices"]["rate_limited"].as_str().unwrap_or_else(|| panic!("said: {}", whoop["notices"]));
    assert!(said.contains("WHOOP answered 429 (too many requests) 2 time(s): 2 without Retry-After"), "{said}");
    assert!(!said.contains("as asked") && !said.contains("with Retry-After"), "{said}");
    s.close().await;

    // Oura's 429 with neither Retry-After nor rate headers: the wait is vitals' own choice, said so.
    let s = connect(&twin, false, &[]).await;
    twin.wire(vec![Rule::data(1, 1, Fault::RateLimit { retry_after_s: None })]);
    let a = records_of(&s, "oura.daily_sleep", json!({"start": ds(ago(5)), "end": ds(ago(1))})).await;
    assert_eq!(twin.wire_fired(), vec![1]);
    twin.wire(vec![]);
    let n = &a["notices"];
    assert!(n["truncated"].is_null(), "{n}");
    let note = n["rate_limited"]["note"].as_str().unwrap();
    assert!(note.contains("1 saying neither Retry-After nor when its budget resets, so vitals chose to wait 5 s."), "{note}");
    let waited = n["rate_limited"]["waited_seconds"].as_f64().unwrap();
    assert!(note.contains(&format!("Then vitals waited {} and asked again", said_seconds(waited))), "{note}");
    s.close().await;
}
