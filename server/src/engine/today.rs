//! `vitals_today`: every provider's sections of "last night, today and the days before" read at
//! once, each with an equal share of the budget; what failed is said apart from what was empty.
use super::{Answer, Engine, QueryError, QueryRequest};
use crate::providers::Mode;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Serialize, JsonSchema)]
pub struct TodayReport {
    pub today: String,
    pub days: i64,
    pub providers: Vec<TodayProvider>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TodayProvider {
    pub provider: String,
    pub synthetic: bool,
    /// Each collection read, raw, keyed by role (`sleep`, `readiness`, `activity`).
    pub sections: Vec<TodaySection>,
    /// Collections the provider answered with no records for these days (today is often not synced yet).
    pub missing: Vec<String>,
    /// Collections that failed or came back incomplete, each with its cause: never "no data".
    pub errors: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TodaySection {
    pub role: String,
    pub answer: Answer,
}

impl Engine {
    /// The report for the last `days` days (1–30, default 7) within `max_chars` in all.
    pub async fn today(&self, days: Option<i64>, max_chars: Option<i64>, progress: Option<super::progress::Progress>) -> Result<TodayReport, QueryError> {
        let days = days.unwrap_or(7);
        if !(1..=30).contains(&days) {
            return Err(QueryError::BadInput(format!("`days` must be a whole number from 1 to 30; got {days}. Send for example 7.")));
        }
        let budget = max_chars.unwrap_or(super::plan::DEFAULT_MAX_CHARS as i64);
        if !(20_000..=super::plan::MAX_MAX_CHARS as i64).contains(&budget) {
            return Err(QueryError::BadInput(format!("`max_chars` must be from 20000 to 2000000; got {budget}. Send for example 100000.")));
        }
        // An opt-in connection nobody connected is not part of the day (nor an error in it).
        let asked: Vec<&std::sync::Arc<dyn crate::providers::Provider>> = self.providers().filter(|p| !crate::providers::unasked(p.as_ref())).collect();
        let sections: usize = asked.iter().map(|p| p.spec().today.len()).sum();
        let per_section = (budget / sections.max(1) as i64).max(super::plan::MIN_MAX_CHARS as i64);
        let zone = crate::time::Zone::default_zone();
        let today = zone.today();
        let start = today.checked_sub(jiff::Span::new().days(days)).unwrap_or(today);
        // Every section of every provider at once: they are independent reads, and each provider's
        // limiter still keeps its own budget.
        // Sections done of sections asked, as each one finishes (a section is a read of its own).
        let finished = std::sync::atomic::AtomicU32::new(0);
        let last_report = std::sync::Mutex::new(super::progress::Throttle::default());
        let (done, last_report, progress) = (&finished, &last_report, progress.as_ref());
        let mut asks = vec![];
        for p in &asked {
            for t in p.spec().today {
                let name = p.spec().qualified(t.collection);
                // A latest-record section looks further back than the report's days, for its last record only.
                let from = match t.latest_within_days {
                    Some(n) => today.checked_sub(jiff::Span::new().days(i64::from(n) - 1)).unwrap_or(today),
                    None => start,
                };
                let req = QueryRequest {
                    collection: name.clone(),
                    start: Some(from.to_string()),
                    end: Some(today.to_string()),
                    max_chars: Some(per_section),
                    keep_last: t.latest_within_days.map(|_| 1),
                    ..Default::default()
                };
                asks.push(async move {
                    let r = self.query(req).await;
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    if let Some(sink) = progress {
                        if last_report.lock().expect("progress lock").due() {
                            (sink.0)(super::progress::Step {
                                done: n,
                                known: sections as u32,
                                message: format!("vitals_today: {n} of {sections} sections read ({name})"),
                            });
                        }
                    }
                    (p.spec().name, t.role, name, r)
                });
            }
        }
        let mut providers: Vec<TodayProvider> = asked
            .iter()
            .map(|p| TodayProvider {
                provider: p.spec().name.into(),
                synthetic: p.credential().current().mode() == Mode::Sandbox,
                sections: vec![],
                missing: vec![],
                errors: vec![],
            })
            .collect();
        // join_all keeps the order the sections were asked in.
        for (provider, role, name, result) in futures::future::join_all(asks).await {
            let Some(out) = providers.iter_mut().find(|o| o.provider == provider) else {
                continue;
            };
            match result {
                Ok(ans) => {
                    // A cut section is a failure with its cause, never "missing" (which reads as
                    // "nothing was recorded").
                    if let Some(t) = &ans.notices.truncated {
                        out.errors.push(format!("{name}: {}", t.reason));
                    } else if ans.count == 0 {
                        out.missing.push(name);
                    }
                    out.sections.push(TodaySection { role: role.to_string(), answer: ans });
                }
                Err(e) => {
                    out.errors.push(format!("{name}: {e}"));
                }
            }
        }
        Ok(TodayReport { today: today.to_string(), days, providers })
    }
}
