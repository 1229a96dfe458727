//! Oura's real and sandbox routes, with the quirks the real API has.
pub mod generate;
pub mod oauth;

pub use crate::Order;
use crate::{Faults, State};
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

pub const DOCUMENTS: &[&str] = &[
    "daily_activity",
    "daily_cardiovascular_age",
    "daily_readiness",
    "daily_resilience",
    "daily_sleep",
    "daily_spo2",
    "daily_stress",
    "enhanced_tag",
    "rest_mode_period",
    "session",
    "sleep",
    "sleep_time",
    "tag",
    "vO2_max",
    "workout",
];
pub const SERIES: &[&str] = &["heartrate", "ring_battery_level"];
/// Collections whose `end_date` excludes the last day (measured on the real API).
pub const EXCLUSIVE_END: &[&str] = &["daily_activity", "sleep", "workout"];
/// Not present for today until the user opens the app.
pub const SYNC_ON_OPEN: &[&str] = &["sleep", "daily_sleep", "daily_readiness", "sleep_time"];

/// How the twin behaves; every quirk can be switched per test.
#[derive(Clone, Debug)]
pub struct OuraConfig {
    pub tz: TimeZone,
    pub token: String,
    pub doc_page_size: usize,
    pub series_page_size: usize,
    pub exclusive_end: Vec<String>,
    pub workout_filter_utc: bool,
    pub require_user_agent: bool,
    pub today_synced: bool,
    pub now: Option<Timestamp>,
    /// Collections the token has no scope for: 403.
    pub denied_collections: Vec<String>,
    /// The Oura membership has lapsed: 403 on every data route.
    pub membership_lapsed: bool,
    /// Closed days whose records were re-analysed or synced late: their values differ from before.
    pub revised_days: Vec<Date>,
    /// The order every listing is paged in (Oura's is oldest first).
    pub page_order: Order,
    /// Heart-rate samples a day (±15): real rings record from a few hundred to well over a thousand.
    pub heartrate_per_day: u32,
    /// How much denser heart rate is at midday than on average, in percent (0: even all day; 50:
    /// 1.5 times the average at noon, two thirds of it at midnight), as a real ring's day is.
    pub heartrate_swing: u8,
    /// A known change in every daily score, for tests whose verdict must be the one it makes.
    pub score_shape: ScoreShape,
}

/// Every daily score (readiness, sleep, activity) from day `from` on moves by `step` points, plus
/// `per_day` points for each day after `from`: a step for a compare, a slope for a trend. The
/// default moves nothing.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScoreShape {
    pub from: Option<Date>,
    pub step: i64,
    pub per_day: f64,
}

impl ScoreShape {
    /// How much day `d`'s scores move.
    pub fn at(&self, d: Date) -> i64 {
        match self.from {
            Some(f) if d >= f => self.step + (self.per_day * (d - f).get_days() as f64).round() as i64,
            _ => 0,
        }
    }
}

/// A partial change to [`OuraConfig`], as `POST /_twin/oura` takes it.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OuraPatch {
    pub today_synced: Option<bool>,
    pub now: Option<Timestamp>,
    pub doc_page_size: Option<usize>,
    pub series_page_size: Option<usize>,
    pub exclusive_end: Option<Vec<String>>,
    pub workout_filter_utc: Option<bool>,
    pub require_user_agent: Option<bool>,
    pub denied_collections: Option<Vec<String>>,
    pub membership_lapsed: Option<bool>,
    pub revised_days: Option<Vec<Date>>,
    pub page_order: Option<Order>,
    pub score_shape: Option<ScoreShape>,
}

impl OuraPatch {
    pub fn apply(self, c: &mut OuraConfig) {
        macro_rules! set { ($($f:ident),*) => { $( if let Some(v) = self.$f { c.$f = v; } )* } }
        set!(
            today_synced,
            doc_page_size,
            series_page_size,
            exclusive_end,
            workout_filter_utc,
            require_user_agent,
            denied_collections,
            membership_lapsed,
            revised_days,
            page_order,
            score_shape
        );
        if self.now.is_some() {
            c.now = self.now;
        }
    }
}

impl Default for OuraConfig {
    fn default() -> Self {
        OuraConfig {
            tz: TimeZone::fixed(jiff::tz::offset(-6)),
            token: "twin-token".into(),
            doc_page_size: 25,
            series_page_size: 1000,
            exclusive_end: EXCLUSIVE_END.iter().map(|s| s.to_string()).collect(),
            workout_filter_utc: true,
            require_user_agent: true,
            today_synced: false,
            now: None,
            denied_collections: vec![],
            membership_lapsed: false,
            revised_days: vec![],
            page_order: Order::OldestFirst,
            heartrate_per_day: 1225,
            heartrate_swing: 0,
            score_shape: ScoreShape::default(),
        }
    }
}

impl OuraConfig {
    pub fn now(&self) -> Timestamp {
        self.now.unwrap_or_else(Timestamp::now)
    }
    fn today(&self) -> Date {
        self.now().to_zoned(self.tz.clone()).date()
    }
}

fn salt(cfg: &OuraConfig, d: Date, sandbox: bool) -> u64 {
    let revised = if cfg.revised_days.contains(&d) { 0x7e7 } else { 0 };
    (if sandbox { 0x5a4d } else { 0 }) ^ revised
}

/// One generated day, with each record's instant read once (paging a month reads each often).
pub struct Day {
    records: Vec<Value>,
    at: Vec<Option<Timestamp>>,
    /// Each record as JSON, written once when a page first serves the day whole: a year of heart
    /// rate is 447,000 samples, and the bench's twin shares the cores with the server it measures.
    json: std::sync::OnceLock<Vec<Box<str>>>,
}

impl Day {
    fn json(&self) -> &[Box<str>] {
        self.json.get_or_init(|| self.records.iter().map(|r| r.to_string().into_boxed_str()).collect())
    }
}

/// Generated days, kept so that paging through a month does not regenerate it for every page.
#[derive(Default)]
pub struct DayCache(std::sync::Mutex<HashMap<DayKey, std::sync::Arc<Day>>>);

/// Collection, day, salt, zone, heart-rate density and swing, score shift.
type DayKey = (String, Date, u64, String, (u32, u8), i64);

impl DayCache {
    fn get(&self, cfg: &OuraConfig, collection: &str, d: Date, salt: u64) -> std::sync::Arc<Day> {
        let shift = cfg.score_shape.at(d);
        let key = (collection.to_string(), d, salt, format!("{:?}", cfg.tz), (cfg.heartrate_per_day, cfg.heartrate_swing), shift);
        if let Some(v) = self.0.lock().unwrap().get(&key) {
            return v.clone();
        }
        let records = match collection {
            "heartrate" => generate::heartrate(d, &cfg.tz, salt, cfg.heartrate_per_day, cfg.heartrate_swing),
            "ring_battery_level" => generate::ring_battery_level(d, &cfg.tz, salt),
            c => generate::documents(c, d, &cfg.tz, salt, shift),
        };
        let at = records.iter().map(|r| ts_of(r, EXISTS_FROM)).collect();
        let v = std::sync::Arc::new(Day { records, at, json: Default::default() });
        let mut m = self.0.lock().unwrap();
        if m.len() > 20_000 {
            m.clear();
        }
        m.insert(key, v.clone());
        v
    }
}

/// The key whose instant says when a record comes to exist (a series sample, a workout's start, a sleep's end).
const EXISTS_FROM: &[&str] = &["timestamp", "start_datetime", "bedtime_end"];

fn ts_of(r: &Value, keys: &[&str]) -> Option<Timestamp> {
    keys.iter().find_map(|k| r.get(*k)?.as_str()?.parse::<Timestamp>().ok())
}

/// Every record of local day `d` that exists by `now` (the oracle tests compare against).
pub fn records_of_day(cfg: &OuraConfig, collection: &str, d: Date, sandbox: bool) -> Vec<Value> {
    records_of_day_in(&DayCache::default(), cfg, collection, d, sandbox)
}

fn records_of_day_in(cache: &DayCache, cfg: &OuraConfig, collection: &str, d: Date, sandbox: bool) -> Vec<Value> {
    let now = cfg.now();
    let today = cfg.today();
    if d > today || (d == today && !cfg.today_synced && SYNC_ON_OPEN.contains(&collection)) {
        return vec![];
    }
    let day = cache.get(cfg, collection, d, salt(cfg, d, sandbox));
    day.records.iter().zip(&day.at).filter(|(_, t)| t.is_none_or(|t| t <= now)).map(|(r, _)| r.clone()).collect()
}

/// The honest answer for local days `[start, end]`.
pub fn expected(cfg: &OuraConfig, collection: &str, start: Date, end: Date) -> Vec<Value> {
    let mut out = vec![];
    let mut d = start;
    while d <= end {
        out.extend(records_of_day(cfg, collection, d, false));
        d = d.tomorrow().unwrap();
    }
    out
}

fn date_of(s: &str) -> Option<Date> {
    s.get(..10)?.parse().ok()
}

/// A `*_datetime` parameter: RFC 3339, or a naive date-time (as mcp-oura sends), read as UTC.
/// How Oura reads naive times is unmeasured (reference: inferred); UTC is the twin's guess.
fn parse_instant(s: &str) -> Option<Timestamp> {
    s.parse::<Timestamp>().ok().or_else(|| s.parse::<jiff::civil::DateTime>().ok().and_then(|dt| dt.to_zoned(TimeZone::UTC).ok()).map(|z| z.timestamp()))
}

/// FastAPI's validation error, as Oura sends it for an impossible date.
fn invalid(param: &str, input: &str) -> Response {
    let body =
        json!({"detail": [{"loc": ["query", param], "msg": "Input should be a valid date or datetime", "type": "date_from_datetime_parsing", "input": input}]});
    Response::builder().status(422).header("content-type", "application/json").body(Body::from(body.to_string())).unwrap()
}

fn error(status: StatusCode, detail: &str) -> Response {
    Response::builder().status(status).header("content-type", "application/json").body(Body::from(json!({"detail": detail}).to_string())).unwrap()
}

fn project(rec: Value, fields: &Option<Vec<String>>, always: &[&str]) -> Value {
    let (Some(f), Value::Object(m)) = (fields, &rec) else {
        return rec;
    };
    let known: Vec<&String> = f.iter().filter(|k| m.contains_key(k.as_str())).collect();
    if known.is_empty() {
        return rec; // all-unknown: Oura returns full records without a word
    }
    let mut out = serde_json::Map::new();
    for (k, v) in m {
        if always.contains(&k.as_str()) || known.iter().any(|f| f.as_str() == k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Token = opaque to clients, but bound to the query so a token from another query is refused.
fn token(offset: usize, qhash: u64) -> String {
    format!("eyJ{offset:x}.{qhash:x}")
}

fn untoken(t: &str) -> Option<(usize, u64)> {
    let (o, q) = t.strip_prefix("eyJ")?.split_once('.')?;
    Some((usize::from_str_radix(o, 16).ok()?, u64::from_str_radix(q, 16).ok()?))
}

/// Serve one list route. `path` is what follows `/v2/usercollection/` or `/v2/sandbox/usercollection/`.
/// A record a page may serve, with its JSON where the day cache wrote it already (a series day
/// served whole).
type Served<'a> = (&'a Value, Option<&'a str>);

pub fn serve(state: &State, sandbox: bool, path: &str, q: &HashMap<String, String>, headers: &HeaderMap) -> Response {
    let cfg = state.oura.lock().unwrap().clone();
    if cfg.require_user_agent && !headers.contains_key("user-agent") {
        return error(StatusCode::FORBIDDEN, "Missing User-Agent header");
    }
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    let oauth_ok = bearer.is_some_and(|b| state.oauth.lock().unwrap().access_valid(b, cfg.now()));
    if !sandbox && bearer != Some(cfg.token.as_str()) && !oauth_ok {
        return error(StatusCode::UNAUTHORIZED, "Unauthorized: invalid or expired token");
    }
    if sandbox && bearer.is_none() {
        return error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    let (collection, doc_id) = match path.split_once('/') {
        Some((c, id)) => (c, Some(id)),
        None => (path, None),
    };
    if cfg.membership_lapsed || cfg.denied_collections.iter().any(|c| c == collection) {
        return error(StatusCode::FORBIDDEN, "Forbidden");
    }
    for k in ["start_date", "end_date", "start_datetime", "end_datetime"] {
        if let Some(v) = q.get(k) {
            if date_of(v).is_none() || (k.ends_with("datetime") && v.len() > 10 && parse_instant(v).is_none()) {
                return invalid(k, v);
            }
        }
    }
    if collection == "personal_info" {
        return if sandbox { error(StatusCode::NOT_FOUND, "Not Found") } else { json_ok(generate::personal_info()) };
    }
    let known = DOCUMENTS.contains(&collection) || SERIES.contains(&collection) || collection == "ring_configuration";
    if !known {
        return error(StatusCode::NOT_FOUND, "Not Found");
    }
    if let Some(id) = doc_id {
        let day = id.strip_prefix(collection).and_then(|r| r.get(1..11)).and_then(|d| d.parse::<Date>().ok());
        let found = day.into_iter().flat_map(|d| records_of_day_in(&state.days, &cfg, collection, d, sandbox)).find(|r| r["id"] == id);
        return found.map(json_ok).unwrap_or_else(|| error(StatusCode::NOT_FOUND, "Document not found"));
    }
    let fields: Option<Vec<String>> = q.get("fields").map(|f| f.split(',').map(|s| s.trim().to_string()).collect());
    let mut qkey: Vec<_> = q.iter().filter(|(k, _)| k.as_str() != "next_token").map(|(k, v)| format!("{k}={v}")).collect();
    qkey.sort();
    let qhash = generate::mix(qkey.join("&").bytes().fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(b as u64))) >> 8;

    // Series are served by reference from the day cache (a month of heart rate is read often);
    // documents are few and built per request.
    let mut held: Vec<std::sync::Arc<Day>> = vec![];
    let owned: Vec<Value>;
    let (mut records, page_size, always): (Vec<Served>, usize, &[&str]) = if SERIES.contains(&collection) {
        let parse = |k: &str| q.get(k).and_then(|s| parse_instant(s));
        let end = parse("end_datetime").unwrap_or_else(|| cfg.now());
        let start = parse("start_datetime").unwrap_or(end - 24.hours());
        let (sd, ed) = (start.to_zoned(cfg.tz.clone()).date(), end.to_zoned(cfg.tz.clone()).date().min(cfg.today()));
        let now = cfg.now();
        if q.get("latest").map(|v| v == "true").unwrap_or(false) {
            // Only the series honour `latest`: the one most recent row.
            owned = records_of_day_in(&state.days, &cfg, collection, cfg.today(), sandbox).pop().into_iter().collect();
            (owned.iter().map(|r| (r, None)).collect(), cfg.series_page_size, &["timestamp"])
        } else {
            let mut d = sd;
            while d <= ed {
                held.push(state.days.get(&cfg, collection, d, salt(&cfg, d, sandbox)));
                d = d.tomorrow().unwrap();
            }
            let in_range = |t: &Option<Timestamp>| t.is_some_and(|t| t >= start && t <= end && t <= now);
            let whole = fields.is_none();
            let recs = held
                .iter()
                .flat_map(|day| {
                    let json = if whole { day.json() } else { &[] };
                    day.records.iter().zip(&day.at).enumerate().filter(|(_, (_, t))| in_range(t)).map(move |(i, (r, _))| (r, json.get(i).map(|j| &**j)))
                })
                .collect();
            (recs, cfg.series_page_size, &["timestamp"])
        }
    } else if collection == "ring_configuration" {
        owned = generate::ring_configuration();
        (owned.iter().map(|r| (r, None)).collect(), cfg.doc_page_size, &["id"])
    } else {
        let today = cfg.today();
        let end = q.get("end_date").and_then(|s| date_of(s)).unwrap_or(today);
        let start = q.get("start_date").and_then(|s| date_of(s)).unwrap_or(end - 1.day());
        let exclusive = cfg.exclusive_end.iter().any(|c| c == collection);
        let in_range = |d: Date| d >= start && if exclusive { d < end } else { d <= end };
        let mut recs = vec![];
        let mut d = start - 3.days();
        while d <= end + 3.days() {
            for r in records_of_day_in(&state.days, &cfg, collection, d, sandbox) {
                let key = if collection == "workout" && cfg.workout_filter_utc {
                    ts_of(&r, &["start_datetime"]).map(|t| t.to_zoned(TimeZone::UTC).date())
                } else {
                    ["day", "start_day"].iter().find_map(|k| r.get(*k).and_then(Value::as_str).and_then(date_of))
                };
                if key.is_some_and(in_range) {
                    recs.push(r);
                }
            }
            d = d.tomorrow().unwrap();
        }
        owned = recs;
        (owned.iter().map(|r| (r, None)).collect(), cfg.doc_page_size, &["id", "day"])
    };

    cfg.page_order.arrange(&mut records);
    let offset = match q.get("next_token") {
        None => 0,
        Some(t) => match untoken(t) {
            Some((o, h)) if h == qhash => o,
            _ => return error(StatusCode::BAD_REQUEST, "Invalid next_token"),
        },
    };
    let faults: Faults = state.faults.lock().unwrap().clone();
    let page_no = offset / page_size.max(1);
    if faults.unauthorized_from_page.is_some_and(|n| page_no >= n) {
        return error(StatusCode::UNAUTHORIZED, "Unauthorized: token expired");
    }
    let repeat = if offset > 0 { faults.repeat_rows.min(offset) } else { 0 };
    let slice = records.iter().skip(offset - repeat).take(page_size + repeat);
    let next = offset + page_size;
    let next_token = if faults.repeat_token && offset > 0 {
        Some(token(offset, qhash)) // hands back the token it was given: a cycle
    } else if next < records.len() || faults.endless_tokens {
        Some(token(next, qhash))
    } else {
        None
    };
    // `{"data":[…],"next_token":…}` as serde_json writes it, each record as the day cache wrote it
    // where it did (without `fields`), else written here.
    let mut body = String::with_capacity(64 + slice.clone().map(|(_, j)| j.map_or(256, str::len) + 1).sum::<usize>());
    body.push_str("{\"data\":[");
    for (i, (r, json)) in slice.enumerate() {
        if i > 0 {
            body.push(',');
        }
        match (json, &fields) {
            (Some(j), None) => body.push_str(j),
            (_, None) => body.push_str(&r.to_string()),
            (_, Some(_)) => body.push_str(&project((*r).clone(), &fields, always).to_string()),
        }
    }
    body.push_str("],\"next_token\":");
    body.push_str(&serde_json::to_string(&next_token).expect("a token serialises"));
    body.push('}');
    Response::builder().status(200).header("content-type", "application/json").body(Body::from(body)).unwrap()
}

fn json_ok(v: Value) -> Response {
    Response::builder().status(200).header("content-type", "application/json").body(Body::from(v.to_string())).unwrap()
}
