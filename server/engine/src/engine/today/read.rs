//! Which providers the day's report reads, and every section of theirs read at once through
//! `Engine::query`, within one deadline. A provider's own limits (budget, requests in flight)
//! hold across all of its sections (engine/limiter.rs, engine/flight.rs).
use super::super::beside::{beside, Left};
use super::super::headline::{self, Detail};
use super::super::progress::{Progress, Step, Throttle};
use super::super::{Answer, Deadline, Engine, Notices, QueryRequest};
use crate::catalog::{CollectionSpec, Lead, TodaySpec};
use crate::providers::Provider;
use jiff::civil::Date;
use jiff::ToSpan;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The providers read, and the ones left out with why.
pub struct Choice {
    pub read: Vec<Arc<dyn Provider>>,
    pub left_out: Vec<String>,
}

/// The providers the day's report reads, by the one rule of which answers may stand beside
/// which (engine/beside.rs), and the ones left out in the report's words.
pub fn choose(engine: &Engine) -> Choice {
    let b = beside(engine);
    let (samples, off) = (b.left_for(Left::Samples), b.left_for(Left::Nothing));
    let mut left_out = vec![];
    if !samples.is_empty() {
        left_out.push(format!("{}: not connected; their sample data is never shown beside your own (vitals_connect adds them)", samples.join(", ")));
    }
    if !off.is_empty() {
        left_out.push(format!("{}: not connected, and no sample data", off.join(", ")));
    }
    Choice { read: b.read, left_out }
}

/// One section as read.
pub struct Section {
    pub role: &'static str,
    pub collection: String,
    pub spec: &'static CollectionSpec,
    pub lead: &'static [Lead],
    /// The records of every complete day, in time order.
    pub records: Vec<Value>,
    /// Said when the section's days are not the report's.
    pub range: Option<String>,
    /// The vitals_query call that returns these records whole.
    pub raw: String,
    /// The provider answered with no record for these days.
    pub empty: bool,
    /// Why the read failed or stopped short.
    pub error: Option<String>,
    pub notices: Option<Notices>,
    pub synthetic: bool,
    /// The latest record of a span, not every record of the report's days.
    pub latest: bool,
    /// The records as they came, to say the provider's rules again of the days a report keeps.
    pub basis: Option<super::super::rules::Basis>,
}

/// The report's days: `from` to `today`, in the zone the caller named (`tz`, sent on with every
/// read and in every `raw` call) or, without one, the engine's default.
pub struct Days {
    pub from: Date,
    pub today: Date,
    pub tz: Option<String>,
}

/// Every section of every provider in `read`, at once, in the providers' order.
pub async fn all(
    engine: &Engine,
    read: &[Arc<dyn Provider>],
    days: &Days,
    detail: Detail,
    deadline: Deadline,
    progress: Option<Progress>,
) -> Vec<Vec<Section>> {
    let known: u32 = read.iter().map(|p| p.spec().today.len() as u32).sum();
    let done = AtomicU32::new(0);
    let throttle = Mutex::new(Throttle::default());
    let tell = |name: &str| {
        let n = done.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(sink) = &progress {
            if throttle.lock().expect("progress lock").due() {
                (sink.0)(Step { done: n, known, message: format!("vitals_today: {n} of {known} sections read ({name})") });
            }
        }
    };
    let per_provider = read.iter().map(|p| {
        let tell = &tell;
        futures::future::join_all(p.spec().today.iter().map(move |t| async move {
            let s = section(engine, p.as_ref(), t, days, detail, deadline).await;
            tell(&s.collection);
            s
        }))
    });
    futures::future::join_all(per_provider).await
}

/// How far back a latest-record section looks, step by step: most people weigh in weekly, so a
/// week is usually one request, where reading the whole span at once pages through all of it.
const LOOK_BACK: &[u32] = &[7, 30];

async fn section(engine: &Engine, p: &dyn Provider, t: &'static TodaySpec, days: &Days, detail: Detail, deadline: Deadline) -> Section {
    let (from, today, tz) = (days.from, days.today, &days.tz);
    let spec = p.spec().collection(t.collection).expect("a provider's today sections name its own collections (catalog test)");
    let collection = p.spec().qualified(t.collection);
    let mut out = Section {
        role: t.role,
        collection: collection.clone(),
        spec,
        lead: t.lead,
        records: vec![],
        range: None,
        raw: String::new(),
        empty: false,
        error: None,
        notices: None,
        synthetic: false,
        latest: t.latest_within_days.is_some(),
        basis: None,
    };
    let Some(within) = t.latest_within_days else {
        let answer = engine.query(request(&collection, spec, t, (from, today, tz), detail, deadline, None)).await;
        take(&mut out, answer, (from, today, tz));
        return out;
    };
    // The latest record of the last `within` days: the nearest span first, then further back.
    let ago = |n: u32| today.checked_sub((i64::from(n) - 1).days()).unwrap_or(today);
    let mut newer = today;
    for n in LOOK_BACK.iter().copied().filter(|n| *n < within).chain([within]) {
        let older = ago(n);
        let answer = engine.query(request(&collection, spec, t, (older, newer, tz), detail, deadline, Some(1))).await;
        take(&mut out, answer, (older, today, tz));
        out.range = Some(format!("the latest record of {older} to {today} (the last {n} days; up to {within} are looked at)"));
        if !out.empty || out.error.is_some() {
            break;
        }
        newer = older.checked_sub(1.day()).unwrap_or(older);
    }
    out
}

/// The days of one read, and the caller's `tz` if one was sent.
type Span<'a> = (Date, Date, &'a Option<String>);

fn request(
    collection: &str,
    spec: &CollectionSpec,
    t: &TodaySpec,
    (start, end, tz): Span,
    detail: Detail,
    deadline: Deadline,
    keep_last: Option<usize>,
) -> QueryRequest {
    QueryRequest {
        collection: collection.to_string(),
        start: Some(start.to_string()),
        end: Some(end.to_string()),
        tz: tz.clone(),
        fields: headline::fields(t.lead, spec, detail),
        format: Some("records".into()),
        // The series are counted, not shown: read them whole, whatever their size.
        resolution: spec.has_resolution().then(|| "raw".into()),
        max_chars: Some(super::super::plan::MAX_MAX_CHARS as i64),
        keep_last,
        deadline: Some(deadline),
        ..Default::default()
    }
}

/// What one read gave the section. `asked`: the days it was asked for (for the `raw` call, which
/// names the zone only when the caller did, so it reads the same days).
fn take(out: &mut Section, answer: Result<Answer, super::super::QueryError>, (start, end, tz): Span) {
    let mut raw = json!({"collection": out.collection, "start": start.to_string(), "end": end.to_string()});
    if let Some(tz) = tz {
        raw["tz"] = json!(tz);
    }
    out.raw = format!("vitals_query {raw}");
    let mut a = match answer {
        Ok(a) => a,
        Err(e) => {
            out.error = Some(e.to_string());
            return;
        }
    };
    out.synthetic = a.synthetic;
    if let Some(t) = &a.notices.truncated {
        out.error = Some(t.reason.clone());
        out.range = Some(a.range.as_ref().map_or("none of the days".into(), |r| format!("{} to {} (complete)", r.start, r.end)));
    } else if let Some(c) = &a.notices.pagination_cycle {
        out.error = Some(c.clone());
    }
    if let Value::Array(rows) = a.data {
        out.records.extend(rows);
    }
    out.empty = out.records.is_empty() && out.error.is_none();
    out.basis = a.basis.take();
    out.notices = Some(a.notices);
}
