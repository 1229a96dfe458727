//! Pagination to exhaustion, with bounded retries. Any stop before the last page is reported as
//! truncation: a partial answer never leaves here looking complete.
use super::plan::Plan;
use super::{Engine, QueryError};
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

/// Why fetching stopped before the provider said "no more pages".
#[derive(Debug, Clone)]
pub enum StopReason {
    PageCap(u32),
    Transient(String),
    RateLimitBudget(Duration),
}

#[derive(Debug, Default)]
pub struct Fetched {
    pub records: Vec<Value>,
    pub pages: u32,
    pub requests: u32,
    pub cycle: bool,
    pub stopped: Option<StopReason>,
    pub rate_limit_retries: u32,
    pub rate_limit_waited: Duration,
    pub transient_retries: u32,
}

enum Outcome {
    Page(crate::providers::Page),
    Stop(StopReason),
}

pub async fn fetch_all(engine: &Engine, plan: &Plan) -> Result<Fetched, QueryError> {
    let mut out = Fetched::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut token: Option<String> = None;
    loop {
        if out.pages >= engine.limits.page_cap {
            out.stopped = Some(StopReason::PageCap(engine.limits.page_cap));
            break;
        }
        match fetch_page(engine, plan, token.as_deref(), &mut out).await? {
            Outcome::Stop(r) => {
                out.stopped = Some(r);
                break;
            }
            Outcome::Page(page) => {
                out.pages += 1;
                out.records.extend(page.records);
                match page.next_token {
                    None => break,
                    Some(t) if !seen.insert(t.clone()) => {
                        // The provider handed back a token it gave before: following it would loop.
                        out.cycle = true;
                        break;
                    }
                    Some(t) => token = Some(t),
                }
            }
        }
    }
    Ok(out)
}

async fn fetch_page(engine: &Engine, plan: &Plan, token: Option<&str>, out: &mut Fetched) -> Result<Outcome, QueryError> {
    let p = &plan.provider;
    let url = p.list_url(plan.collection);
    let params = p.params(plan.collection, &plan.window, plan.upstream_fields.as_deref(), token);
    let bearer = p.credential().bearer().ok_or_else(|| QueryError::Auth(p.auth_help(401)))?;
    let lim = &engine.limits;
    let mut transient = 0u32;
    loop {
        out.requests += 1;
        let failure = match engine.http.get(&url, &params, &bearer).await {
            Ok(reply) => match reply.status {
                200 => match reply.body {
                    Ok(body) => match p.parse_page(plan.collection, &body) {
                        Ok(page) => return Ok(Outcome::Page(page)),
                        Err(e) => e,
                    },
                    Err(e) => format!("the answer body broke off ({e})"),
                },
                401 | 403 => return Err(QueryError::Auth(p.auth_help(reply.status))),
                429 => {
                    let wait = reply.retry_after.unwrap_or(Duration::from_secs(5)).min(Duration::from_secs(60));
                    if out.rate_limit_waited + wait > lim.rate_wait_budget {
                        return Ok(Outcome::Stop(StopReason::RateLimitBudget(out.rate_limit_waited)));
                    }
                    tracing::info!(wait_s = wait.as_secs(), "rate limited by {}; waiting as Retry-After asks", p.spec().display);
                    out.rate_limit_retries += 1;
                    out.rate_limit_waited += wait;
                    tokio::time::sleep(wait).await;
                    continue;
                }
                s if s >= 500 => format!("HTTP {s} from {}", p.spec().display),
                400 | 404 | 422 => {
                    let detail = reply.body.unwrap_or_default();
                    let detail: String = detail.chars().take(300).collect();
                    return Err(QueryError::Upstream(format!(
                        "{} refused the query for {} with HTTP {}: {detail}",
                        p.spec().display,
                        plan.qualified,
                        reply.status
                    )));
                }
                s => format!("unexpected HTTP {s} from {}", p.spec().display),
            },
            Err(e) => e.to_string(),
        };
        if transient >= lim.transient_retries {
            return Ok(Outcome::Stop(StopReason::Transient(format!("{failure} (after {transient} retries)"))));
        }
        transient += 1;
        out.transient_retries += 1;
        let wait = lim.backoff_base * 2u32.pow(transient - 1);
        tracing::warn!(%failure, attempt = transient, "transient failure; retrying after {:?}", wait);
        tokio::time::sleep(wait).await;
    }
}
