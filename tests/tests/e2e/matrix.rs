//! The reliability matrix (issue 22): rows are faults on the wire, alone and in pairs; columns are
//! the providers (every one of the registry but those `NO_COLUMN` names). Each column has a twin and
//! a server of its own, with no memory cache, and the columns run at once; every cell is one query
//! asked while the column's twin breaks the answers a row names. A cell passes
//! when the answer is one of three things:
//! - complete: exactly the records of the same query without faults (the twin's truth);
//! - cut and said: `truncated` with `continue_from`, and resuming from there (without faults)
//!   brings exactly the missing records: together, the truth, no record twice;
//! - changed and said: what the twin broke in the records changed them (a value a provider's
//!   rules need, an empty record kept as undated), and the answer's notices say so;
//! - a refusal that names the provider and says what failed.
//!
//! Anything else fails the cell: a panic or a hang (the server stops answering), a short answer
//! that does not say so, a record twice. The table is printed at the end, with the totals the
//! README's reliability section quotes. No secret (token, key, client secret) may appear in the
//! server's log or in any answer of the whole matrix.
use crate::common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use vitals_twin::wire::{Fault, Mutation, Rule};

/// The query each provider answers in every cell: one that takes several data requests.
struct Column {
    provider: &'static str,
    display: &'static str,
    collection: &'static str,
    days: i64,
    /// Series are asked at one resolution, so a resumed answer buckets as the first did.
    resolution: Option<&'static str>,
}

const COLUMNS: [Column; 7] = [
    Column { provider: "oura", display: "Oura", collection: "oura.heartrate", days: 4, resolution: Some("1h") },
    // 45 days of weigh-ins are 4 pages: more would spend Withings' 120 requests a minute on the matrix.
    Column { provider: "withings", display: "Withings", collection: "withings.measurements", days: 45, resolution: None },
    Column { provider: "polar", display: "Polar", collection: "polar.activity", days: 90, resolution: None },
    Column { provider: "garmin", display: "Garmin", collection: "garmin.heartrate", days: 5, resolution: Some("1h") },
    // Garmin Connect's session (its tokens imported as garminconnect saves them): 60 days of
    // readiness snapshots are three requests of 28 days.
    Column { provider: "garmin-connect", display: "Garmin Connect (unofficial)", collection: "garmin.training_readiness", days: 60, resolution: None },
    // A week of nights in pages of 3 (the twin's cap): a listing of a few pages a window, within
    // WHOOP's 100 requests a minute.
    Column { provider: "whoop", display: "WHOOP", collection: "whoop.sleep", days: 7, resolution: None },
    // A week of nights in pages of 3 (the twin's cap), within Google's 300 requests a minute.
    Column { provider: "google-health", display: "Google Health (Fitbit, Pixel Watch)", collection: "google_health.sleep", days: 7, resolution: None },
];

impl Column {
    /// Whether its provider waits out a 429 and asks again (`ProviderSpec.retries_429`).
    fn retries_429(&self) -> bool {
        vitals::providers::specs().find(|p| p.name == self.provider).is_some_and(|p| p.retries_429)
    }
}

/// The connections of the registry the matrix has no column for, and why. A provider added to the
/// registry fails [`every_provider_of_the_registry_has_a_column_or_a_reason`] until it has one.
pub const NO_COLUMN: &[(&str, &str)] = &[(
    "apple-health",
    "it has no wire: a file read in place, so no HTTP fault can reach it; a damaged zip, a cut XML and a file that is no export are tested in tests/tests/e2e/apple_health.rs",
)];

#[test]
fn every_provider_of_the_registry_has_a_column_or_a_reason() {
    for spec in vitals::providers::specs().filter(|s| s.connection.connects()) {
        let column = COLUMNS.iter().any(|c| c.provider == spec.name && c.display == spec.display);
        let reason = NO_COLUMN.iter().any(|(p, _)| *p == spec.name);
        assert!(column != reason, "{}: a column of the fault matrix, or a reason in NO_COLUMN (one of them)", spec.name);
    }
}

/// The first data request a fault hits: the first one answers, so a fault lands mid-query.
const AT: usize = 2;
/// "Every request from then on."
const ALL: usize = 100_000;

fn once(fault: Fault, count: usize) -> Vec<Rule> {
    vec![Rule::data(AT, count, fault)]
}

/// One row of the matrix: its faults, where they apply, and what a pass is.
struct Row {
    name: String,
    rules: Vec<Rule>,
    /// Why the row does not apply to a provider (the cell reads "n/a"), or `None`: it does.
    skip: fn(&Column) -> Option<&'static str>,
    /// Nothing is lost for good: the answer must be complete, not cut.
    complete: bool,
    /// Its faults are 429s a provider waits out: for one whose 429s are never asked again
    /// (`ProviderSpec.retries_429`: Garmin Connect, DECISIONS 82) the answer is cut and said instead.
    waits_429: bool,
    /// A transient fault that the answer must be cut for (with `continue_from`), never refused:
    /// the words its `truncated.reason` says it with.
    cut_saying: Option<&'static str>,
}

fn every(_: &Column) -> Option<&'static str> {
    None
}

/// Oura, Withings, WHOOP and Google Health page with tokens; Polar and Garmin (both ways in) read a
/// range in one request.
fn paged(c: &Column) -> Option<&'static str> {
    ["polar", "garmin", "garmin-connect"].contains(&c.provider).then_some("reads a range in one request: no page tokens")
}

/// Withings, WHOOP, Google Health and Garmin Connect renew with a refresh token and Garmin exchanges its key again; the matrix's Oura
/// login is a personal access token and Polar's tokens live for years: neither renews.
fn renews(c: &Column) -> Option<&'static str> {
    match c.provider {
        "oura" => Some("a personal access token: nothing to renew"),
        "polar" => Some("Polar's tokens are not renewed"),
        _ => None,
    }
}

/// A provider whose 429 is never asked again (`ProviderSpec.retries_429`) ends the read there: no
/// request follows the 429 for a second fault to land on.
fn after_429(c: &Column) -> Option<&'static str> {
    (!c.retries_429()).then_some("a 429 is never asked again (DECISIONS 82): no request follows it for a second fault")
}

fn rows() -> Vec<Row> {
    let ra = |s| Fault::RateLimit { retry_after_s: s };
    let html = |status| Fault::Html { status };
    let until = |clock_off_s| Fault::RateLimitUntil { retry_after_s: 1, clock_off_s };
    let row = |name: &str, rules| Row { name: name.into(), rules, skip: every, complete: false, waits_429: false, cut_saying: None };
    let mut rows: Vec<(String, Vec<Rule>)> = vec![
        ("429, Retry-After 1 s, twice".into(), once(ra(Some(1)), 2)),
        ("429 without Retry-After, twice".into(), once(ra(None), 2)),
        ("429, Retry-After 1 hour".into(), once(ra(Some(3_600)), 1)),
        ("429 on every request".into(), once(ra(Some(1)), ALL)),
        ("429 ×8, Retry-After 1 s (past the 5 s wait budget)".into(), once(ra(Some(1)), 8)),
        ("500 HTML, 3 in a row".into(), once(html(500), 3)),
        ("502 HTML, 3 in a row".into(), once(html(502), 3)),
        ("503 HTML, 3 in a row".into(), once(html(503), 3)),
        ("503 HTML on every request".into(), once(html(503), ALL)),
        ("connection reset mid-body, twice".into(), once(Fault::Reset, 2)),
        ("body cut short (half the JSON), twice".into(), once(Fault::Truncated, 2)),
        ("body trickles past the timeout".into(), once(Fault::Slow { pause_ms: 150 }, 1)),
        ("\"score\": \"85\" (a number as a string)".into(), once(Fault::Mutate(Mutation::NumberAsString), ALL)),
        ("null where a number is documented".into(), once(Fault::Mutate(Mutation::NumberAsNull), ALL)),
        ("an unknown extra field".into(), once(Fault::Mutate(Mutation::ExtraField), ALL)),
        ("an empty object among the records".into(), once(Fault::Mutate(Mutation::EmptyRecord), ALL)),
        ("duplicated and out-of-order records".into(), once(Fault::Mutate(Mutation::DuplicatedReversed), ALL)),
        ("401 between two pages".into(), once(Fault::Unauthorized, 1)),
        ("the provider's error envelope, unknown code".into(), once(Fault::UnknownError, 1)),
    ];
    // Pairs of the faults a retry or a renewal must get past, one right after the other.
    let pairable: [(&str, Fault); 5] =
        [("429", ra(Some(1))), ("502 HTML", html(502)), ("reset", Fault::Reset), ("cut body", Fault::Truncated), ("401", Fault::Unauthorized)];
    for (i, (a, fa)) in pairable.iter().enumerate() {
        for (b, fb) in &pairable[i + 1..] {
            rows.push((format!("{a}, then {b}"), vec![Rule::data(AT, 1, fa.clone()), Rule::data(AT + 1, 1, fb.clone())]));
        }
    }
    let mut rows: Vec<Row> = rows
        .into_iter()
        .map(|(name, rules)| {
            let skip: fn(&Column) -> Option<&'static str> = if name.starts_with("429, then") { after_429 } else { every };
            Row { skip, ..row(&name, rules) }
        })
        .collect();
    rows.extend([
        // A provider's clock minutes off must not stretch or skip a wait it asks for.
        Row { complete: true, ..row("the provider's clock 10 min ahead (its Date header)", once(Fault::ClockOff { seconds: 600 }, ALL)) },
        Row { complete: true, waits_429: true, ..row("429 until a date, provider's clock 10 min ahead, twice", once(until(600), 2)) },
        Row { complete: true, waits_429: true, ..row("429 until a date, provider's clock 10 min behind, twice", once(until(-600), 2)) },
        Row { skip: paged, ..row("a page token that repeats after 3 pages", vec![Rule::data(1, ALL, Fault::TokenRepeats { from_page: 3 })]) },
        Row { skip: paged, complete: true, ..row("an empty first page, then the records", once(Fault::EmptyFirstPage, ALL)) },
        Row {
            skip: renews,
            complete: true,
            ..row("401 between two pages, the refresh endpoint down once", vec![Rule::data(AT, 1, Fault::Unauthorized), Rule::token(1, 1, html(503))])
        },
        Row {
            skip: renews,
            ..row("401 between two pages, the refresh endpoint down", vec![Rule::data(AT, 1, Fault::Unauthorized), Rule::token(1, ALL, html(503))])
        },
        // Down for a moment: the renewal and its one retry fail, and the next call finds it back.
        // A transient fault like a 503 on a data request: cut and said, not a dead login.
        Row {
            skip: renews,
            cut_saying: Some("token endpoint did not answer"),
            ..row("401 mid-read, the token endpoint failing for a moment (twice)", vec![Rule::data(AT, 1, Fault::Unauthorized), Rule::token(1, 2, html(503))])
        },
    ]);
    rows
}

/// Rows whose faults change what the records say (not which records there are): compared by
/// identity, the record with its numbers and the unknown field left out.
fn changes_values(rules: &[Rule]) -> bool {
    rules.iter().any(|r| matches!(r.fault, Fault::Mutate(Mutation::NumberAsString | Mutation::NumberAsNull | Mutation::ExtraField)))
}

fn identity(r: &Value) -> Value {
    match r {
        Value::Object(o) => Value::Object(o.iter().filter(|(k, _)| k.as_str() != "an_unknown_field").map(|(k, v)| (k.clone(), identity(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(identity).collect()),
        Value::Number(_) | Value::Null => json!("#"),
        Value::String(s) if s.parse::<f64>().is_ok() => json!("#"),
        v => v.clone(),
    }
}

/// A multiset of records, as canonical JSON.
fn bag(recs: &[Value], by_identity: bool) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in recs {
        let r = if by_identity { identity(r) } else { r.clone() };
        *m.entry(r.to_string()).or_insert(0) += 1;
    }
    m
}

fn describe_difference(got: &BTreeMap<String, usize>, want: &BTreeMap<String, usize>) -> String {
    let missing = want.iter().filter(|(k, n)| got.get(*k).copied().unwrap_or(0) < **n).count();
    let extra = got.iter().filter(|(k, n)| want.get(*k).copied().unwrap_or(0) < **n).count();
    let example = got.iter().find(|(k, n)| want.get(*k).copied().unwrap_or(0) < **n).map(|(k, _)| format!(" (e.g. {k:.160})")).unwrap_or_default();
    format!("{missing} records missing, {extra} extra or twice{example}")
}

#[derive(Clone, Copy, PartialEq)]
enum Verdict {
    Complete,
    CutAndResumed,
    /// Values the provider broke changed the records, and the answer's notes say how.
    ChangedAndSaid,
    Refused,
}

impl Verdict {
    fn mark(self) -> &'static str {
        match self {
            Verdict::Complete => "complete",
            Verdict::CutAndResumed => "cut+resumed",
            Verdict::ChangedAndSaid => "said",
            Verdict::Refused => "refused",
        }
    }
}

/// Every answer's text and structured content, for the secrets sweep at the end.
static ANSWERS: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

async fn ask(s: &Session, col: &Column, start: &str, end: &str) -> rmcp::model::CallToolResult {
    let mut args = json!({"collection": col.collection, "start": start, "end": end, "format": "records", "tz": TZ});
    if let Some(r) = col.resolution {
        args["resolution"] = json!(r);
    }
    let call = s.call_raw("vitals_query", args);
    let r = tokio::time::timeout(std::time::Duration::from_secs(120), call).await.expect("the server answers within 2 minutes (no hang)");
    let mut seen = ANSWERS.lock().unwrap();
    seen.push_str(&text(&r));
    seen.push_str(&r.structured_content.as_ref().map(Value::to_string).unwrap_or_default());
    r
}

/// One cell: ask under the row's faults, judge the answer against the truth.
async fn cell(s: &Session, twin: &Twin, col: &Column, rules: &[Rule], truth: &Truth) -> Result<(Verdict, String), String> {
    let (start, end) = (ds(ago(col.days)), ds(ago(1)));
    let mut tries = 0;
    let r = loop {
        tries += 1;
        twin.wire(rules.to_vec());
        let r = ask(s, col, &start, &end).await;
        let fired = twin.wire_fired();
        twin.wire(vec![]);
        if fired.iter().all(|n| *n > 0) {
            break r;
        }
        // The cells before spent the provider's budget (Withings: 120 requests a minute), so the
        // server's own pacing cut the query before the request the fault waits for: said as
        // rate_limited. Wait for the window to free and ask again; anything else is a failure.
        let paced_out = r.structured_content.as_ref().is_some_and(|a| a["notices"]["truncated"]["cause"] == "rate_limited");
        if !paced_out || tries == 4 {
            return Err(format!("a fault never fired (answers each rule changed: {fired:?}; {tries} tries)"));
        }
        tokio::time::sleep(MINUTE / 3).await;
    };
    let by_identity = changes_values(rules);
    if r.is_error == Some(true) {
        let t = text(&r);
        return if t.contains(col.display) && t.len() < 4_000 {
            Ok((Verdict::Refused, String::new()))
        } else {
            Err(format!("a refusal that does not name {}: {t:.300}", col.display))
        };
    }
    let a = r.structured_content.clone().ok_or("an answer without structured content")?;
    let said = a["notices"]["truncated"]["reason"].as_str().unwrap_or_default().to_string();
    let mut all = records(&a["data"]);
    let mut rules_said: Vec<String> = a["notices"]["rules"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(str::to_string)).collect();
    let mut from = a["notices"]["truncated"]["continue_from"].as_str().map(str::to_string);
    let cut = from.is_some();
    // Resume as the answer says, without faults, until the range is done. Each resumption must
    // get further; one cut by the provider's own budget (the matrix spends it) is waited out.
    let mut resumed = 0;
    while let Some(f) = from.take() {
        resumed += 1;
        if f.as_str() > end.as_str() || resumed > 12 {
            return Err(format!("continue_from {f} does not lead to the end {end} (resumption {resumed})"));
        }
        let rest = ask(s, col, &f, &end).await;
        if rest.is_error == Some(true) {
            return Err(format!("resuming from {f} without faults failed: {:.300}", text(&rest)));
        }
        let rest = rest.structured_content.clone().ok_or("a resumed answer without structured content")?;
        all.extend(records(&rest["data"]));
        from = rest["notices"]["truncated"]["continue_from"].as_str().map(str::to_string);
        match &from {
            // The provider's budget, spent by the cells before: wait, as the answer says, and go on.
            Some(_) if rest["notices"]["truncated"]["cause"] == "rate_limited" => tokio::time::sleep(MINUTE / 12).await,
            Some(_) => return Err(format!("resuming from {f} without faults was cut again: {}", rest["notices"]["truncated"])),
            None => {}
        }
    }
    let (have, want) = (bag(&all, by_identity), bag(&truth.records, by_identity));
    if have == want {
        return Ok((if cut { Verdict::CutAndResumed } else { Verdict::Complete }, said));
    }
    // Values the twin broke may change what a provider's rules make of a record (a missing
    // `attrib` cannot say a weigh-in was typed in by hand): fine when the answer says so.
    rules_said.retain(|r| !truth.rules.contains(r));
    let mut notices_said: Vec<&String> = a["notices"].as_object().into_iter().flatten().map(|(k, _)| k).collect();
    notices_said.retain(|k| !truth.notices.contains(k) && !["paced", "rate_limited", "retried"].contains(&k.as_str()));
    let mutated = rules.iter().any(|r| matches!(r.fault, Fault::Mutate(_)));
    if mutated && (!rules_said.is_empty() || !notices_said.is_empty()) {
        return Ok((Verdict::ChangedAndSaid, said));
    }
    Err(format!("an answer that does not say what it lacks or changed: {} (notices: {:.400})", describe_difference(&have, &want), a["notices"]))
}

/// A column's answer without faults.
struct Truth {
    records: Vec<Value>,
    rules: Vec<String>,
    /// The notices it carries (their names).
    notices: Vec<String>,
}

/// How many times faster than real ones the providers' per-minute budgets run in this test.
const SCALE: u32 = 10;
/// A provider's minute, so scaled.
const MINUTE: std::time::Duration = std::time::Duration::from_secs(60 / SCALE as u64);

/// One column run to its end: the row's marks in order, what failed, and what its server logged.
struct Ran {
    marks: Vec<String>,
    failures: Vec<String>,
    passed: usize,
    cells: usize,
    /// Why rows do not apply to this column, once each.
    skipped: Vec<&'static str>,
    log: String,
    /// The secrets its twin issued, for the sweep.
    secrets: Vec<String>,
}

/// Every row of one column, on a twin and a server of its own: no column's faults, or budgets
/// spent, reach another's, so the columns run at once (the cells are waits, not work).
async fn run_column(col: &Column, rows: &[Row]) -> Ran {
    let twin = twin().await;
    let scale = SCALE.to_string();
    let extra = [
        // Every cell goes to the twin: no answer from memory.
        ("VITALS_CACHE_MB", "0"),
        ("VITALS_HTTP_TIMEOUT_MS", "2000"),
        // A Retry-After of an hour is past this, so the answer must say so rather than wait.
        ("VITALS_RATE_WAIT_BUDGET_S", "5"),
        // The providers' minutes, on the twin and in the server alike, last MINUTE: the cells
        // spend the same budgets, and wait a tenth as long for them to free.
        ("VITALS_RATE_TIME_SCALE", scale.as_str()),
    ];
    twin.scale_minutes(SCALE);
    // Garmin Connect's hosts at the twin; its session is imported below, on its column's server only.
    let gc = vitals_twin::garmin_connect::GarminConnect::env(&twin.base_url());
    let extra: Vec<(&str, &str)> = extra.into_iter().chain(gc.iter().map(|(k, v)| (*k, v.as_str()))).collect();
    let (s, withings) = all_providers(&twin, &format!("matrix-{}", col.provider), &extra).await;
    if col.provider == "garmin-connect" {
        import_garmin_connect(&twin, &withings.dir, &gc);
    }
    // Pages of 400 heart-rate samples: each window of the Oura column is a listing of 3 pages,
    // so faults that follow a page token have a token to follow.
    twin.configure(|c| c.series_page_size = 400);
    // Nights three a page, so WHOOP's column follows page tokens too.
    twin.whoop(|w| w.cfg.page_cap = Some(3));
    twin.google_health(|g| g.cfg.page_cap = Some(3));

    // The truth: the column's query with no fault, complete.
    let a = ask(&s, col, &ds(ago(col.days)), &ds(ago(1))).await;
    assert!(a.is_error != Some(true), "{} without faults: {}", col.collection, text(&a));
    let a = a.structured_content.unwrap();
    assert!(a["notices"]["truncated"].is_null(), "{} without faults is complete: {}", col.collection, a["notices"]);
    let recs = records(&a["data"]);
    let requests = twin.requests().len();
    assert!(!recs.is_empty() && requests > AT, "{}: {} records in {requests} requests; a cell needs more than {AT}", col.collection, recs.len());
    let rules = a["notices"]["rules"].as_array().into_iter().flatten().filter_map(|x| x.as_str().map(str::to_string)).collect();
    let notices = a["notices"].as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect();
    let truth = Truth { records: recs, rules, notices };

    let retries_429 = col.retries_429();
    let mut ran = Ran { marks: vec![], failures: vec![], passed: 0, cells: 0, skipped: vec![], log: String::new(), secrets: vec![] };
    for row in rows {
        if let Some(why) = (row.skip)(col) {
            if !ran.skipped.contains(&why) {
                ran.skipped.push(why);
            }
            ran.marks.push("n/a".to_string());
            continue;
        }
        ran.cells += 1;
        let complete = row.complete && (retries_429 || !row.waits_429);
        let mut verdict = cell(&s, &twin, col, &row.rules, &truth).await;
        if complete && matches!(verdict, Ok((Verdict::CutAndResumed, _))) {
            // The cells before may have spent the provider's own budget (Withings: 120 requests
            // a minute), and a cut for that is right. Once the window has freed, the row must
            // answer complete; a cut for the row's faults would come back.
            eprintln!("matrix: {} × {} was cut; asked again after the provider's budget frees", row.name, col.provider);
            tokio::time::sleep(MINUTE / 2).await;
            verdict = cell(&s, &twin, col, &row.rules, &truth).await;
        }
        let failed = match verdict {
            Ok((v, said)) if row.cut_saying.is_some_and(|w| v != Verdict::CutAndResumed || !said.contains(w)) => {
                Some(format!("{} where a transient fault must cut the answer and say so ({:?}): {said:.300}", v.mark(), row.cut_saying.unwrap_or_default()))
            }
            Ok((v, _)) if complete && v != Verdict::Complete => Some(format!("{} where nothing is lost for good: the answer must be complete", v.mark())),
            Ok((v, said)) if !complete && row.waits_429 && (v != Verdict::CutAndResumed || !said.contains("429")) => {
                Some(format!("{} where a 429 that is never asked again must cut the answer and say so: {said:.300}", v.mark()))
            }
            Ok((v, _)) => {
                ran.passed += 1;
                ran.marks.push(v.mark().to_string());
                None
            }
            Err(e) => Some(e),
        };
        if let Some(why) = failed {
            ran.marks.push("FAIL".into());
            ran.failures.push(format!("{} × {}: {why}", row.name, col.provider));
        }
    }
    ran.log = s.close().await;
    ran.secrets = twin.whoop(|w| w.secrets());
    ran.secrets.extend(twin.google_health(|g| g.secrets()));
    ran.secrets.extend(twin.garmin_connect(|g| g.secrets()));
    ran.secrets.extend([withings.access.clone(), withings.refresh.clone()]);
    ran
}

/// Garmin Connect's session into the token store at `dir`, the way a person connects it from a
/// login of another tool: `vitals-mcp auth garmin-connect --import` of garminconnect's token file.
fn import_garmin_connect(twin: &Twin, dir: &std::path::Path, gc: &[(&'static str, String)]) {
    let src = dir.join("garminconnect");
    std::fs::create_dir_all(&src).unwrap();
    let file = twin.garmin_connect(|g| g.garminconnect_file("GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2"));
    std::fs::write(src.join("garmin_tokens.json"), file.to_string()).unwrap();
    let out = bare_cmd()
        .args(["auth", "garmin-connect", "--import", &src.display().to_string()])
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_CONFIG_DIR", dir)
        .env("HOME", dir)
        .envs(gc.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    assert!(out.status.success(), "the Garmin Connect import: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_on_every_provider_is_complete_cut_and_said_or_refused() {
    let rows = rows();
    let ran = futures_util::future::join_all(COLUMNS.iter().map(|col| run_column(col, &rows))).await;

    let width = rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(0);
    let mut out = format!(
        "\nreliability matrix: rows are faults, columns are providers\n{:width$} | {}\n",
        "fault",
        COLUMNS.map(|c| format!("{:12}", c.provider)).join(" | ")
    );
    for (i, row) in rows.iter().enumerate() {
        out += &format!("{:width$} | {}\n", row.name, ran.iter().map(|r| format!("{:12}", r.marks[i])).collect::<Vec<_>>().join(" | "));
    }
    for (col, r) in COLUMNS.iter().zip(&ran) {
        for why in &r.skipped {
            out += &format!("n/a for {}: {why}\n", col.provider);
        }
    }
    let (passed, cells) = ran.iter().fold((0, 0), |(p, c), r| (p + r.passed, c + r.cells));
    let panics: usize = ran.iter().map(|r| r.log.matches("panicked").count()).sum();
    out += &format!("cells passed: {passed} of {cells}; panics: {panics}\n");
    eprintln!("{out}");
    for r in &ran {
        assert!(!r.log.contains("panicked"), "the server panicked:\n{:.2000}", r.log);
    }
    // The sweep: every server's log and every answer of the matrix.
    let answers = ANSWERS.lock().unwrap().clone();
    assert!(answers.len() > 100_000, "the sweep read the answers ({} characters)", answers.len());
    let fixed =
        [TOKEN, vitals_twin::garmin::KEY, vitals_twin::polar::CLIENT_SECRET, vitals_twin::whoop::CLIENT_SECRET, vitals_twin::google_health::CLIENT_SECRET];
    let issued = ran.iter().flat_map(|r| r.secrets.iter().map(String::as_str));
    for secret in fixed.into_iter().chain(issued) {
        for r in &ran {
            assert!(!r.log.contains(secret), "a secret in the server's log");
        }
        assert!(!answers.contains(secret), "a secret in an answer");
    }
    let failures: Vec<&String> = ran.iter().flat_map(|r| &r.failures).collect();
    assert!(failures.is_empty(), "{} of {cells} cells failed:\n{}", failures.len(), failures.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n"));
}
