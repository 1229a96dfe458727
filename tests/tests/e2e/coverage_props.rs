//! "Complete, or said" as a property (issues 15 and 25). Random records, served in pages of a
//! random size, oldest first, newest first or in no order (with records shuffled inside each
//! page), to the engine in process under a random page cap, concurrency and cache, with a fault
//! for a random run of requests: 503s past the retries, a connection reset, a body cut off, a
//! repeating page token, or a 429 past the wait budget. Whatever happens, every answer:
//! - claims a prefix of the asked days, and holds every record of each claimed day, once;
//! - holds no record of a day it does not claim;
//! - says `truncated` exactly when it is short, with `continue_from` the day after its `range`;
//! - says `empty` only of days it fetched and found empty;
//!
//! and following `continue_from` ends with every record of the range, when each call's cap is at
//! least the pages of one window. Without a fault and with a cap for all pages, one call is whole.
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use vitals::catalog::{CollectionSpec, PageOrder, ProviderSpec, RangeKind, RateBudget, SeriesSpec, Split};
use vitals::connection::Connection;
use vitals::engine::{Engine, Limits, QueryRequest};
use vitals::http::Reply;
use vitals::providers::{Credential, CredentialKind, CredentialSource, Page, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use vitals::secret::Secret;

/// Documents dated by local day, fetched in windows of 3 days (padded upstream by the engine).
const fn documents(name: &'static str, order: PageOrder) -> CollectionSpec {
    CollectionSpec {
        name,
        path: name,
        brief: "documents by day",
        summary: "documents by day",
        range: RangeKind::Date,
        latest: false,
        projectable: false,
        day_keys: &["day"],
        dating: vitals::catalog::Dating::ProviderDay,
        always: &["id", "day"],
        key: Some("id"),
        fields: &["id", "day", "score"],
        enveloped: true,
        in_sandbox: true,
        volume: "a few a day",
        split: Split::Days(3),
        order,
        series: None,
        embedded: &[],
        night: None,
        workout: None,
        retention: None,
        exact_days: false,
        by_id: false,
        ahead: false,
        daily: None,
        options: &[],
        flags: &[],
        during: None,
    }
}

/// A series of instants, fetched in windows of 12 hours.
const fn series(name: &'static str, order: PageOrder) -> CollectionSpec {
    CollectionSpec {
        name,
        path: name,
        brief: "samples by instant",
        summary: "samples by instant",
        range: RangeKind::DateTime,
        latest: false,
        projectable: false,
        day_keys: &["timestamp"],
        dating: vitals::catalog::Dating::QueryZone,
        always: &["timestamp"],
        key: None,
        fields: &["timestamp", "bpm"],
        enveloped: true,
        in_sandbox: true,
        volume: "tens a day",
        split: Split::Hours(12),
        order,
        series: Some(SeriesSpec { stamp: "timestamp", values: &["bpm"], levels: false, categories: &[] }),
        embedded: &[],
        night: None,
        workout: None,
        retention: None,
        exact_days: false,
        by_id: false,
        ahead: false,
        daily: None,
        options: &[],
        flags: &[],
        during: None,
    }
}

static COLLECTIONS: [CollectionSpec; 6] = [
    documents("docs_oldest_first", PageOrder::OldestFirst),
    documents("docs_newest_first", PageOrder::NewestFirst),
    documents("docs_unknown", PageOrder::Unknown),
    series("series_oldest_first", PageOrder::OldestFirst),
    series("series_newest_first", PageOrder::NewestFirst),
    series("series_unknown", PageOrder::Unknown),
];

static SPEC: ProviderSpec = ProviderSpec {
    name: "prop",
    namespace: "prop",
    display: "Prop",
    collections: &COLLECTIONS,
    probe: "docs_oldest_first",
    today: &[],
    max_days: None,
    rate_budget: RateBudget { requests: 1_000_000, per: Duration::from_secs(1) },
    late_sync: "the property test can sync late",
    no_data: &[],
    files: None,
    in_flight: 8,
    daily_view: &[],
    retries_429: true,
    non_get: &[],
    legend: &[],
    connection: Connection::None,
};

/// The first day records may be on; asked ranges start a few days later, so windows' padding
/// reads records outside the range too.
const BASE: jiff::civil::Date = jiff::civil::date(2026, 1, 5);
const SPAN_DAYS: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FaultKind {
    /// HTTP 503 on every request of the fault (retries included).
    Failing,
    /// A page after a window's first hands back the token it was asked with.
    RepeatingToken,
    /// HTTP 429 with a wait longer than the budget.
    RateLimited,
    /// The connection reset while the body was read.
    Reset,
    /// A body cut off mid-JSON (a timeout part way through).
    CutBody,
}

#[derive(Debug, Clone)]
struct Case {
    collection: usize,
    tz: &'static str,
    /// Records per day of the span (documents), or samples per day (series).
    per_day: Vec<usize>,
    /// Where the asked range starts in the span, and how many days it has.
    start: usize,
    days: usize,
    page_size: usize,
    page_cap: u32,
    concurrency: usize,
    retries: u32,
    cache: bool,
    seed: u64,
    /// The fault, and the requests it lasts for (counted from the first of the test).
    fault: Option<(FaultKind, u32, u32)>,
}

impl Case {
    fn spec(&self) -> &'static CollectionSpec {
        &COLLECTIONS[self.collection]
    }
    fn is_series(&self) -> bool {
        self.spec().range == RangeKind::DateTime
    }
    fn range(&self) -> (jiff::civil::Date, jiff::civil::Date) {
        let s = day(self.start);
        (s, day(self.start + self.days - 1))
    }
}

fn day(i: usize) -> jiff::civil::Date {
    BASE.checked_add(jiff::Span::new().days(i as i64)).unwrap()
}

/// Every record of the provider, oldest first: `{"id","day","score"}` or `{"timestamp","bpm"}`.
fn all_records(case: &Case) -> Vec<(i64, Value)> {
    let mut out = vec![];
    for (i, n) in case.per_day.iter().enumerate() {
        let d = day(i);
        for k in 0..*n {
            if case.is_series() {
                // Distinct instants over the UTC day (2843 is prime to 86,400), so days in other
                // zones get samples from two UTC days.
                let t = d.to_zoned(jiff::tz::TimeZone::UTC).unwrap().timestamp().as_second() + (k as i64 * 2843 + case.seed as i64 % 600) % 86_400;
                let ts = jiff::Timestamp::from_second(t).unwrap();
                out.push((t, json!({"timestamp": ts.to_string(), "bpm": 50 + (t % 40)})));
            } else {
                let t = d.to_zoned(jiff::tz::TimeZone::UTC).unwrap().timestamp().as_second() + k as i64;
                out.push((t, json!({"id": format!("d{i}-{k}"), "day": d.to_string(), "score": k})));
            }
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out
}

/// The identity of a record in an answer and in the truth (instants compared as instants).
fn identity(r: &Value) -> String {
    match r.get("id").and_then(Value::as_str) {
        Some(id) => id.to_string(),
        None => r["timestamp"].as_str().unwrap().parse::<jiff::Timestamp>().unwrap().as_second().to_string(),
    }
}

fn local_day(r: &Value, tz: &jiff::tz::TimeZone) -> jiff::civil::Date {
    match r.get("day").and_then(Value::as_str) {
        Some(d) => d.parse().unwrap(),
        None => r["timestamp"].as_str().unwrap().parse::<jiff::Timestamp>().unwrap().to_zoned(tz.clone()).date(),
    }
}

fn zone(name: &str) -> jiff::tz::TimeZone {
    match name.strip_prefix("fixed") {
        Some(h) => jiff::tz::TimeZone::fixed(jiff::tz::offset(h.parse().unwrap())),
        None => jiff::tz::TimeZone::get(name).unwrap(),
    }
}

/// The provider's side: answers every request from the case's records, and counts them.
struct World {
    case: Case,
    records: Vec<(i64, Value)>,
    requests: AtomicU32,
}

impl World {
    fn fault_now(&self, n: u32) -> Option<FaultKind> {
        self.case.fault.filter(|(_, from, len)| (*from..from + len).contains(&n)).map(|(k, _, _)| k)
    }
}

fn shuffle<T>(v: &mut [T], mut seed: u64) {
    for i in (1..v.len()).rev() {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v.swap(i, (seed >> 33) as usize % (i + 1));
    }
}

impl SampleApi for World {
    fn answer(&self, req: &Request) -> Reply {
        let n = self.requests.fetch_add(1, Ordering::SeqCst);
        let fault = self.fault_now(n);
        match fault {
            Some(FaultKind::Failing) => return Reply { status: 503, retry_after: None, quota: None, body: Ok("busy".into()) },
            Some(FaultKind::RateLimited) => return Reply { status: 429, retry_after: Some(Duration::from_millis(5)), quota: None, body: Ok(String::new()) },
            Some(FaultKind::Reset) => {
                return Reply { status: 200, retry_after: None, quota: None, body: Err(vitals::http::HttpError::Connect("connection reset by peer".into())) }
            }
            Some(FaultKind::CutBody) => return Reply { status: 200, retry_after: None, quota: None, body: Ok(r#"{"data": [{"id": "d0-"#.into()) },
            _ => {}
        }
        let name = req.url.rsplit('/').next().unwrap();
        let c = SPEC.collection(name).unwrap();
        let mut rows: Vec<&(i64, Value)> = if c.range == RangeKind::DateTime {
            let at = |k| req.param(k).unwrap().parse::<jiff::Timestamp>().unwrap().as_second();
            let (s, e) = (at("start_datetime"), at("end_datetime"));
            self.records.iter().filter(|(t, _)| (s..e).contains(t)).collect()
        } else {
            let (s, e) = (req.param("start_date").unwrap(), req.param("end_date").unwrap());
            self.records.iter().filter(|(_, r)| (s..=e).contains(&r["day"].as_str().unwrap())).collect()
        };
        // One order per window, the same for each of its pages: a listing in no order is still one listing.
        let window_seed = req
            .params
            .iter()
            .filter(|(k, _)| k != "next_token")
            .flat_map(|(_, v)| v.bytes())
            .fold(self.case.seed, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        match c.order {
            PageOrder::OldestFirst => {}
            PageOrder::NewestFirst => rows.reverse(),
            PageOrder::Unknown => shuffle(&mut rows, window_seed),
        }
        let offset: usize = req.param("next_token").map_or(0, |t| t.parse().unwrap());
        let end = (offset + self.case.page_size).min(rows.len());
        let mut page: Vec<Value> = rows[offset.min(end)..end].iter().map(|(_, r)| r.clone()).collect();
        shuffle(&mut page, window_seed.wrapping_add(offset as u64));
        let next = match (end < rows.len(), fault) {
            (false, _) => None,
            // The page after the first hands back the token it was called with.
            (true, Some(FaultKind::RepeatingToken)) if offset > 0 => Some(offset.to_string()),
            (true, _) => Some(end.to_string()),
        };
        Reply { status: 200, retry_after: None, quota: None, body: Ok(json!({"data": page, "next_token": next}).to_string()) }
    }
}

struct Anyone;

impl CredentialSource for Anyone {
    fn current(&self) -> Credential {
        Credential { bearer: Some(Secret::new("sandbox")), ..Credential::bare(CredentialKind::Sandbox, "the property test".into()) }
    }
}

struct Prop {
    world: Arc<World>,
}

impl Provider for Prop {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }
    fn credential(&self) -> &dyn CredentialSource {
        &Anyone
    }
    fn read_request(
        &self,
        c: &CollectionSpec,
        w: &Window,
        _fields: Option<&[String]>,
        next_token: Option<&str>,
        _cred: &Credential,
        _options: &vitals::providers::Options,
    ) -> Request {
        let mut params: Vec<(String, String)> = match w {
            Window::Dates { start, end } => vec![("start_date".into(), start.to_string()), ("end_date".into(), end.to_string())],
            Window::Instants { start, end } => vec![("start_datetime".into(), start.clone()), ("end_datetime".into(), end.clone())],
            other => panic!("a ranged query asks for windows of days or instants, not {other:?}"),
        };
        if let Some(t) = next_token {
            params.push(("next_token".into(), t.into()));
        }
        Request { method: ReadMethod::Get, url: format!("prop://api/{}", c.path), params, headers: &[] }
    }
    fn parse_page(&self, _c: &CollectionSpec, body: &str, _at: &vitals::providers::PageAt) -> Result<Page, PageError> {
        let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(e.to_string()))?;
        let records = v["data"].as_array().cloned().ok_or_else(|| PageError::Transient("no data".into()))?;
        Ok(Page { records, next_token: v["next_token"].as_str().map(str::to_string) })
    }
    fn auth_help(&self, _status: u16, _cred: &Credential) -> String {
        "no login here".into()
    }
    fn unavailable(&self, _c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        None
    }
    fn synthetic_notice(&self) -> String {
        "property-test data".into()
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&*self.world)
    }
}

type ByDay = BTreeMap<jiff::civil::Date, Vec<String>>;

fn truth(case: &Case, records: &[(i64, Value)]) -> ByDay {
    let (s, e) = case.range();
    let tz = zone(case.tz);
    let mut m = ByDay::new();
    for (_, r) in records {
        let d = local_day(r, &tz);
        if (s..=e).contains(&d) {
            m.entry(d).or_default().push(identity(r));
        }
    }
    m.values_mut().for_each(|v| v.sort());
    m
}

fn ask(case: &Case, start: jiff::civil::Date) -> QueryRequest {
    let (_, end) = case.range();
    QueryRequest {
        collection: format!("prop.{}", case.spec().name),
        start: Some(start.to_string()),
        end: Some(end.to_string()),
        tz: Some(match case.tz.strip_prefix("fixed") {
            Some(h) => format!("{:+03}:00", h.parse::<i8>().unwrap()),
            None => case.tz.to_string(),
        }),
        format: Some("records".into()),
        max_chars: Some(2_000_000),
        resolution: case.is_series().then(|| "raw".to_string()),
        ..Default::default()
    }
}

/// The promise for one answer to `[from, end]`; returns the days it claims.
fn check(a: &Value, from: jiff::civil::Date, end: jiff::civil::Date, truth: &ByDay, tz: &jiff::tz::TimeZone) -> Result<Vec<jiff::civil::Date>, TestCaseError> {
    let n = &a["notices"];
    let claimed: Vec<jiff::civil::Date> = match a.get("range") {
        Some(r) => {
            prop_assert_eq!(r["start"].clone(), json!(from.to_string()), "a range starts where it was asked: {}", n);
            let last: jiff::civil::Date = r["end"].as_str().unwrap().parse().unwrap();
            prop_assert!(last <= end);
            let mut v = vec![];
            let mut d = from;
            while d <= last {
                v.push(d);
                d = d.tomorrow().unwrap();
            }
            v
        }
        None => vec![],
    };
    let mut got = ByDay::new();
    for r in a["data"].as_array().expect("records") {
        got.entry(local_day(r, tz)).or_default().push(identity(r));
    }
    for d in got.keys() {
        prop_assert!(claimed.contains(d), "a record of {}, a day the answer does not claim: {}", d, n);
    }
    for d in &claimed {
        let mut have = got.get(d).cloned().unwrap_or_default();
        have.sort();
        let want = truth.get(d).cloned().unwrap_or_default();
        prop_assert_eq!(have, want, "{} is claimed: every record of it, once: {}", d, n);
    }
    let whole = claimed.last() == Some(&end);
    match n.get("truncated") {
        None => prop_assert!(whole, "an answer short of {} says truncated: {}", end, n),
        Some(t) => {
            prop_assert!(!whole, "truncated, yet every day was claimed: {}", n);
            let next = claimed.last().map_or(from, |d| d.tomorrow().unwrap());
            prop_assert_eq!(t["continue_from"].clone(), json!(next.to_string()), "continue_from follows range: {}", t);
            prop_assert_eq!(t["missing"]["start"].clone(), json!(next.to_string()));
            prop_assert_eq!(t["missing"]["end"].clone(), json!(end.to_string()));
            prop_assert!(t["reason"].as_str().unwrap().starts_with("INCOMPLETE"), "{}", t);
        }
    }
    if n.get("empty").is_some() {
        prop_assert!(!claimed.is_empty() && got.is_empty(), "`empty` only of fetched days without records: {}", n);
    }
    if !claimed.is_empty() && got.is_empty() {
        prop_assert!(n.get("empty").is_some(), "fetched days without records say so: {}", n);
    }
    Ok(claimed)
}

fn run(case: Case) -> Result<(), TestCaseError> {
    let records = all_records(&case);
    let world = Arc::new(World { case: case.clone(), records: records.clone(), requests: AtomicU32::new(0) });
    let limits = Limits {
        page_cap: case.page_cap,
        transient_retries: case.retries,
        backoff_base: Duration::ZERO,
        rate_wait_budget: Duration::ZERO,
        concurrency: case.concurrency,
        cache_bytes: if case.cache { 1 << 20 } else { 0 },
        call_budget: Duration::from_secs(3600),
    };
    let engine = Engine::new(vec![Arc::new(Prop { world: world.clone() })], Default::default(), limits);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let tz = zone(case.tz);
    let want = truth(&case, &records);
    let (start, end) = case.range();

    // The pages one window can need, at most: what its padded span holds, one page if none.
    let most_per_window = (case.per_day.iter().max().copied().unwrap_or(0) * 6).div_ceil(case.page_size).max(1) as u32;
    // The oldest running window may always spend the last quarter of the cap (engine/gate.rs).
    let progress_assured = most_per_window <= case.page_cap.div_ceil(4);
    let fault_end = case.fault.map_or(0, |(_, from, len)| from + len);
    let mut from = start;
    let mut all = ByDay::new();
    for call in 0.. {
        let before = world.requests.load(Ordering::SeqCst);
        let answer = rt.block_on(engine.query(ask(&case, from))).map_err(|e| TestCaseError::fail(format!("the query failed: {e}")))?;
        let a = serde_json::to_value(&answer).unwrap();
        let claimed = check(&a, from, end, &want, &tz)?;
        for r in a["data"].as_array().unwrap() {
            all.entry(local_day(r, &tz)).or_default().push(identity(r));
        }
        if call == 0 && case.fault.is_none() && case.page_cap >= most_per_window * 20 {
            prop_assert!(a["notices"].get("truncated").is_none(), "no fault and a cap for every page: whole in one call: {}", a["notices"]);
        }
        if claimed.last() == Some(&end) {
            break;
        }
        if before >= fault_end && progress_assured {
            prop_assert!(!claimed.is_empty(), "no progress after the fault, with a quarter of the cap for a window: {}", a["notices"]);
        }
        if claimed.is_empty() && !progress_assured && before >= fault_end {
            // Every call from here would be this one again: the cap is too small for the data.
            return Ok(());
        }
        prop_assert!(call < 60, "60 calls did not finish {} days: {}", case.days, a["notices"]);
        from = claimed.last().map_or(from, |d| d.tomorrow().unwrap());
    }
    all.values_mut().for_each(|v| v.sort());
    prop_assert_eq!(all, want, "following continue_from gives every record of the range, once");
    Ok(())
}

fn cases() -> impl Strategy<Value = Case> {
    let fault = prop_oneof![
        3 => Just(None),
        1 => (0u32..40, 1u32..8).prop_map(|(f, l)| Some((FaultKind::Failing, f, l))),
        1 => (0u32..40, 1u32..8).prop_map(|(f, l)| Some((FaultKind::RepeatingToken, f, l))),
        1 => (0u32..40, 1u32..8).prop_map(|(f, l)| Some((FaultKind::RateLimited, f, l))),
        1 => (0u32..40, 1u32..8).prop_map(|(f, l)| Some((FaultKind::Reset, f, l))),
        1 => (0u32..40, 1u32..8).prop_map(|(f, l)| Some((FaultKind::CutBody, f, l))),
    ];
    (
        0usize..COLLECTIONS.len(),
        prop::sample::select(vec!["UTC", "fixed-6", "fixed5", "Europe/Paris"]),
        prop::collection::vec(0usize..5, SPAN_DAYS),
        3usize..8,
        1usize..12,
        1usize..6,
        prop_oneof![1u32..12, 12u32..200],
        1usize..5,
        0u32..2,
        any::<bool>(),
        any::<u64>(),
        fault,
    )
        .prop_map(|(collection, tz, per_day, start, days, page_size, page_cap, concurrency, retries, cache, seed, fault)| {
            let is_series = COLLECTIONS[collection].range == RangeKind::DateTime;
            // Series carry more samples a day than documents.
            let per_day = if is_series { per_day.into_iter().map(|n| n * 3).collect() } else { per_day };
            Case { collection, tz, per_day, start, days, page_size, page_cap, concurrency, retries, cache, seed, fault }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn an_answer_claims_only_what_it_fetched_and_continuing_completes_it(case in cases()) {
        run(case)?;
    }
}
