//! `vitals_today`: "how did I sleep, am I ready, how much did I move", for every provider read
//! at once, sized for a conversation. Each section is a small table of the fields people ask
//! about first (engine/headline.rs) with the exact call that returns it whole; what applies to
//! the whole report is said once; sample data is read only when nothing is connected; and the
//! report fits `max_chars` by summarising, then by leaving out the oldest days, each said.
mod fit;
mod read;
mod said;

use super::headline::{Detail, Table};
use super::progress::Progress;
use super::{Deadline, Engine, QueryError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The longest report, in days before today.
pub const MAX_DAYS: i64 = 30;
pub const DEFAULT_DAYS: i64 = 7;
/// The character budget of a report, by default and at least.
pub const DEFAULT_MAX_CHARS: usize = 100_000;
pub const MIN_MAX_CHARS: usize = 2_000;

/// What the MCP layer asks for.
#[derive(Debug, Default, Clone)]
pub struct TodayRequest {
    pub days: Option<i64>,
    pub max_chars: Option<i64>,
    pub detail: Option<String>,
    /// The zone of "today" and of every day (vitals_query's `tz`); None: this machine's.
    pub tz: Option<String>,
    pub progress: Option<Progress>,
    pub deadline: Option<Deadline>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TodayReport {
    // Today, in `tz`.
    pub today: String,
    // The first day of the report (today minus `days`).
    pub from: String,
    pub tz: String,
    // `headline` or `full`.
    pub detail: String,
    /// Said when the report is sample data (nothing is connected): never the user's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<String>,
    pub providers: Vec<TodayProvider>,
    /// Providers not read, and why (a connected account's report never carries sample data).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// What was summarised or left out to fit `max_chars`, and how to get it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortened: Option<String>,
    // How to read the sections.
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TodayProvider {
    pub provider: String,
    pub synthetic: bool,
    pub sections: Vec<TodaySection>,
    /// Collections with no record these days (today is often not synced yet): not "did not happen".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Collections that failed or came back incomplete, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// What happened on the way, said once for the provider.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub notices: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TodaySection {
    pub role: String,
    pub collection: String,
    /// The days this section covers, when they are not the report's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// Days with no record (not synced yet, or not worn): not "did not happen".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_record: Vec<String>,
    // The series inside these records, counted (they are not shown here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    // The call that returns these records whole: every field, the series at full resolution.
    pub raw: String,
}

impl TodayReport {
    /// The characters of the report as a tool result's text (compact JSON, its numbers tidied as
    /// they are sent: engine/render.rs).
    pub fn chars(&self) -> usize {
        let Ok(mut v) = serde_json::to_value(self) else { return 0 };
        super::render::tidy_numbers(&mut v);
        v.to_string().chars().count()
    }
}

/// Every parameter read, or an error that names it.
struct Asked {
    days: i64,
    max_chars: usize,
    detail: Detail,
    zone: crate::time::Zone,
}

fn asked(engine: &Engine, req: &TodayRequest) -> Result<Asked, QueryError> {
    let days = req.days.unwrap_or(DEFAULT_DAYS);
    if !(1..=MAX_DAYS).contains(&days) {
        return Err(QueryError::BadInput(format!("`days` must be a whole number from 1 to {MAX_DAYS}; got {days}. Send for example {DEFAULT_DAYS}.")));
    }
    let max_chars = req.max_chars.unwrap_or(DEFAULT_MAX_CHARS as i64);
    if !(MIN_MAX_CHARS as i64..=super::plan::MAX_MAX_CHARS as i64).contains(&max_chars) {
        return Err(QueryError::BadInput(format!(
            "`max_chars` must be from {MIN_MAX_CHARS} to {}; got {max_chars}. Send for example {DEFAULT_MAX_CHARS}.",
            super::plan::MAX_MAX_CHARS
        )));
    }
    let detail = match req.detail.as_deref() {
        None => Detail::Headline,
        Some(d) => Detail::parse(d).ok_or_else(|| {
            QueryError::BadInput(format!(
                "`detail`: {:?} is not a detail level. Send {} (headline: the fields people ask about first; full: every field).",
                d.chars().take(40).collect::<String>(),
                Detail::NAMES
            ))
        })?,
    };
    let zone = super::plan::zone(engine, req.tz.as_deref())?;
    Ok(Asked { days, max_chars: max_chars as usize, detail, zone })
}

const NOTE: &str = "A row per record, `day` first; `raw`: the vitals_query call for every field and series (`series` counts them). \
Nothing is computed across days: for a change or a trend, vitals_compare or vitals_trend.";

impl Engine {
    /// The report for today and the `days` before it.
    pub async fn today(&self, req: TodayRequest) -> Result<TodayReport, QueryError> {
        let a = asked(self, &req)?;
        let zone = a.zone.clone();
        let today = zone.today();
        let from = today.checked_sub(jiff::Span::new().days(a.days)).unwrap_or(today);
        let deadline = req.deadline.unwrap_or_else(|| Deadline::after(self.limits.call_budget));
        let choice = read::choose(self);
        let asked = read::Days { from, today, tz: req.tz.as_ref().map(|_| zone.name.clone()) };
        let reads = read::all(self, &choice.read, &asked, a.detail, deadline, req.progress.clone()).await;
        let synthetic = choice.read.iter().any(|p| p.credential().current().mode() == crate::providers::Mode::Sandbox);
        let mut providers: Vec<(TodayProvider, Vec<read::Section>)> = vec![];
        for (p, sections) in choice.read.iter().zip(reads) {
            providers.push(said::provider(p.as_ref(), sections));
        }
        let mut report = TodayReport {
            today: today.to_string(),
            from: from.to_string(),
            tz: zone.name.clone(),
            detail: a.detail.name().into(),
            synthetic: synthetic.then(|| SAMPLE.to_string()),
            providers: vec![],
            left_out: choice.left_out,
            shortened: None,
            note: NOTE.into(),
        };
        fit::fit(&mut report, providers, a.detail, a.max_chars, &zone)?;
        Ok(report)
    }
}

const SAMPLE: &str = "SAMPLE DATA: no provider is connected, so every section is built-in or sandbox sample data, not the user's own. Say so; \
vitals_connect connects an account.";

/// A section's table as the report shows it.
fn section(s: &read::Section, t: Table) -> TodaySection {
    TodaySection {
        role: s.role.into(),
        collection: s.collection.clone(),
        range: s.range.clone(),
        columns: t.columns,
        rows: t.rows,
        no_record: vec![],
        series: t.series,
        raw: s.raw.clone(),
    }
}
