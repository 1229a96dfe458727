//! Fetching every window of a plan, several at a time, each paginated to exhaustion with bounded
//! retries. Any stop before a window's last page is reported as truncation: a partial answer
//! never leaves here looking complete.
use super::cache::{RECENT_DAYS, RECENT_TTL};
use super::kept::{Keeper, Kept};
use super::plan::Plan;
use super::window::{split, Piece, Place};
use super::{Engine, QueryError, Source};
use crate::providers::PageError;
use jiff::civil::Date;
use jiff::ToSpan;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Why fetching stopped before the provider said "no more pages".
#[derive(Debug, Clone)]
pub enum StopReason {
    PageCap(u32),
    Transient(String),
    RateLimitBudget(Duration),
}

/// Everything fetched for one query, windows merged in order.
#[derive(Debug, Default)]
pub struct Fetched {
    pub kept: Kept,
    /// Pages fetched from the provider by this query (cached windows fetch none).
    pub pages: u32,
    pub requests: u32,
    pub windows: u32,
    pub cached_windows: u32,
    /// Pages the cached windows took when they were fetched.
    pub cached_pages: u32,
    /// Age of the oldest cached window used.
    pub cache_age: Option<Duration>,
    pub cycle: bool,
    pub stopped: Option<StopReason>,
    pub rate_limit_retries: u32,
    /// Longest time one window waited on 429s (windows wait together, so this is the wall time).
    pub rate_limit_waited: Duration,
    pub transient_retries: u32,
    /// Longest time one window waited to stay inside the provider's request budget.
    pub paced: Duration,
    /// Records upstream sent from outside the asked days (the padding), dropped.
    pub discarded_out_of_range: usize,
    /// Records kept although their day cannot be told.
    pub undated_kept: usize,
    /// An expired access token was refreshed on the way.
    pub credential_refreshed: bool,
    /// The access token was about to expire and was refreshed before the first request.
    pub refreshed_early: bool,
}

#[derive(Default)]
struct WindowOut {
    pages: u32,
    requests: u32,
    cycle: bool,
    stopped: Option<StopReason>,
    rate_limit_retries: u32,
    rate_limit_waited: Duration,
    transient_retries: u32,
    paced: Duration,
    cached: Option<(Duration, u32)>,
    credential_refreshed: bool,
    discarded_out_of_range: usize,
    undated_kept: usize,
}

enum Outcome {
    /// A decoded page and the body it came from (kept for the cache).
    Page(crate::providers::Page, String),
    Stop(StopReason),
}

/// What the windows of one query share: the page cap and the request slots.
struct Budget {
    /// Pages beyond each window's first draw from what is left of the page cap.
    extra_pages: AtomicU32,
    /// The pool (`VITALS_CONCURRENCY`) bounds requests in flight, not windows: a slot is held
    /// from sending a request until its body has arrived, and freed before the page is decoded,
    /// so the next window's request leaves while this page is decoded and placed.
    slots: tokio::sync::Semaphore,
}

impl Budget {
    fn take(&self) -> bool {
        self.extra_pages.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok()
    }
}

pub async fn fetch_all(engine: &Engine, plan: &Plan) -> Result<Fetched, QueryError> {
    let source = engine.source(plan.provider.spec().name).expect("a planned provider has a source");
    let pieces = split(plan);
    let cap = engine.limits.page_cap.max(1);
    // Windows are started in order and each is promised its first page, so a small cap still
    // completes a prefix of the range and `continue_from` always moves forward.
    let launched = pieces.len().min(cap as usize);
    let budget = Budget { extra_pages: AtomicU32::new(cap - launched as u32), slots: tokio::sync::Semaphore::new(engine.limits.concurrency.max(1)) };
    let today = plan.zone.today();
    // An access token about to expire is refreshed once, before the windows start, rather than
    // having every window meet a 401 at the same moment.
    let mut refreshed_early = false;
    if plan.provider.credential().expiring() {
        if let Some(refresh) = plan.provider.refresh(None) {
            let p = &plan.provider;
            refresh.await.map_err(|e| QueryError::Auth(format!("{} The refresh failed: {e}", p.auth_help(401))))?;
            refreshed_early = true;
        }
    }
    // Every window is started at once and waits for a request slot; the semaphore is fair, so
    // slots go to the oldest windows first and a small page cap still completes a prefix.
    let windows = pieces.iter().take(launched).map(|piece| fetch_window(engine, source, plan, piece, &budget, today));
    let outs = futures::future::try_join_all(windows).await?;

    let mut f = Fetched { kept: Kept::for_plan(plan), windows: pieces.len() as u32, refreshed_early, ..Default::default() };
    for (w, kept) in outs {
        f.pages += w.pages;
        f.requests += w.requests;
        f.cycle |= w.cycle;
        f.rate_limit_retries += w.rate_limit_retries;
        f.rate_limit_waited = f.rate_limit_waited.max(w.rate_limit_waited);
        f.transient_retries += w.transient_retries;
        f.paced = f.paced.max(w.paced);
        f.discarded_out_of_range += w.discarded_out_of_range;
        f.undated_kept += w.undated_kept;
        f.credential_refreshed |= w.credential_refreshed;
        if let Some((age, pages)) = w.cached {
            f.cached_windows += 1;
            f.cached_pages += pages;
            f.cache_age = Some(f.cache_age.unwrap_or_default().max(age));
        }
        f.kept.append(kept);
        if w.stopped.is_some() {
            // What follows a stopped window would leave a hole: the answer ends here.
            f.stopped = w.stopped;
            return Ok(f);
        }
    }
    if launched < pieces.len() {
        f.stopped = Some(StopReason::PageCap(cap));
    }
    Ok(f)
}

/// Every cache key of a provider starts with this.
pub fn cache_prefix(provider: &str) -> String {
    format!("{provider}|")
}

fn cache_key(plan: &Plan, piece: &Piece) -> String {
    let p = &plan.provider;
    format!(
        "{}{}|{}|{}|{}|{}|{}|{:?}",
        cache_prefix(p.spec().name),
        p.mode().as_str(),
        p.credential().kind(),
        p.credential().account().unwrap_or_default(),
        plan.collection.name,
        plan.zone.name,
        piece.label(),
        plan.upstream_fields
    )
}

/// Keep the records that belong to this window; count those from outside the asked days.
fn take_records(plan: &Plan, piece: &Piece, records: Vec<Value>, keeper: &mut Keeper, out: &mut WindowOut) {
    for r in records {
        let (place, at) = piece.locate(&r, plan.collection, &plan.zone);
        match place {
            Place::Mine => {
                keeper.keep(r, at, plan);
            }
            Place::MineUndated => {
                if keeper.keep(r, at, plan) {
                    out.undated_kept += 1;
                }
            }
            Place::Elsewhere if outside(plan, &r) => out.discarded_out_of_range += 1,
            Place::Elsewhere => {}
        }
    }
}

/// Whether a record lies outside every asked day (rather than in a neighbouring window).
fn outside(plan: &Plan, r: &Value) -> bool {
    let day = super::shape::record_day(r, plan.collection, &plan.zone);
    matches!((plan.range, day), (Some((s, e)), Some(d)) if d < s || d > e)
}

fn recent(piece: &Piece, plan: &Plan, today: Date) -> bool {
    let edge = today.checked_sub(RECENT_DAYS.days()).unwrap_or(today);
    piece.last_day(&plan.zone).is_none_or(|d| d >= edge)
}

async fn fetch_window(engine: &Engine, source: &Source, plan: &Plan, piece: &Piece, budget: &Budget, today: Date) -> Result<(WindowOut, Kept), QueryError> {
    let mut keeper = Keeper::new(plan);
    let cacheable = engine.cache.enabled() && piece.closed_before(today, &plan.zone);
    let key = cacheable.then(|| cache_key(plan, piece));
    if let (Some(k), false) = (&key, plan.fresh) {
        if let Some(hit) = engine.cache.get(k) {
            tracing::debug!(window = %piece.label(), "served from the memory cache");
            let mut out = WindowOut { cached: Some((hit.age, hit.bodies.len() as u32)), ..Default::default() };
            for body in hit.bodies.iter() {
                // These bodies decoded once already; one that no longer does is a bug, not data.
                let page = plan.provider.parse_page(plan.collection, body).map_err(|e| QueryError::Upstream(format!("{e:?}")))?;
                take_records(plan, piece, page.records, &mut keeper, &mut out);
            }
            return Ok((out, keeper.kept));
        }
    }
    let mut out = WindowOut::default();
    let mut bodies: Vec<String> = vec![];
    let mut seen: HashSet<String> = HashSet::new();
    let mut token: Option<String> = None;
    loop {
        if out.pages > 0 && !budget.take() {
            out.stopped = Some(StopReason::PageCap(engine.limits.page_cap));
            break;
        }
        match fetch_page(engine, source, plan, piece, budget, token.as_deref(), &mut out).await? {
            Outcome::Stop(r) => {
                out.stopped = Some(r);
                break;
            }
            Outcome::Page(page, body) => {
                out.pages += 1;
                if key.is_some() {
                    bodies.push(body);
                }
                take_records(plan, piece, page.records, &mut keeper, &mut out);
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
    if let Some(k) = key.filter(|_| out.stopped.is_none() && !out.cycle) {
        let ttl = recent(piece, plan, today).then_some(RECENT_TTL);
        engine.cache.keep(k, bodies, keeper.kept.len(), ttl);
    }
    Ok((out, keeper.kept))
}

/// Decode a page on the blocking pool: concurrent windows then decode on every core instead of
/// taking turns on the one task that drives them.
async fn decode(p: &std::sync::Arc<dyn crate::providers::Provider>, c: &'static crate::catalog::CollectionSpec, body: String) -> (Result<crate::providers::Page, PageError>, String) {
    let p = p.clone();
    tokio::task::spawn_blocking(move || (p.parse_page(c, &body), body))
        .await
        .unwrap_or_else(|e| (Err(PageError::Transient(format!("decoding the page failed: {e}"))), String::new()))
}

/// One reply as a page or a verdict, whatever the provider: HTTP statuses and the provider's
/// verdict on a 200 body (Withings answers every error inside HTTP 200) become the same `PageError`s.
async fn judge(p: &std::sync::Arc<dyn crate::providers::Provider>, plan: &Plan, reply: crate::http::Reply) -> Result<(crate::providers::Page, String), PageError> {
    let display = p.spec().display;
    match reply.status {
        200 => match reply.body {
            Ok(body) => match decode(p, plan.collection, body).await {
                (Ok(page), body) => Ok((page, body)),
                (Err(e), _) => Err(e),
            },
            Err(e) => Err(PageError::Transient(format!("the answer body broke off ({e})"))),
        },
        401 => Err(PageError::Unauthorized),
        403 => Err(PageError::Forbidden(p.auth_help(403))),
        429 => Err(PageError::RateLimited { wait: reply.retry_after, detail: format!("HTTP 429 from {display}") }),
        s if s >= 500 => Err(PageError::Transient(format!("HTTP {s} from {display}"))),
        s @ (400 | 404 | 422) => {
            let detail: String = reply.body.unwrap_or_default().chars().take(300).collect();
            Err(PageError::Refused(format!("{display} refused the query for {} with HTTP {s}: {detail}", plan.qualified)))
        }
        s => Err(PageError::Transient(format!("unexpected HTTP {s} from {display}"))),
    }
}

async fn fetch_page(engine: &Engine, source: &Source, plan: &Plan, piece: &Piece, budget: &Budget, token: Option<&str>, out: &mut WindowOut) -> Result<Outcome, QueryError> {
    let p = &plan.provider;
    let req = p.read_request(plan.collection, &piece.upstream, plan.upstream_fields.as_deref(), token);
    let mut bearer = p.credential().bearer().ok_or_else(|| QueryError::Auth(p.auth_help(401)))?;
    let lim = &engine.limits;
    let mut transient = 0u32;
    let mut refreshed = false;
    loop {
        out.requests += 1;
        let sent = match p.offline() {
            // Built-in sample data: answered in process, so no budget to keep and no network.
            Some(api) => Ok(api.answer(&req)),
            None => {
                let _slot = budget.slots.acquire().await.expect("the query's semaphore is never closed");
                out.paced += source.limiter.acquire().await;
                source.http.read(&req, &bearer).await
            }
        };
        let failure = match sent {
            Ok(reply) => match judge(p, plan, reply).await {
                Ok((page, body)) => return Ok(Outcome::Page(page, body)),
                // Refused token with a refreshable credential: refresh once, then ask for this page again.
                Err(PageError::Unauthorized) if !refreshed => {
                    let Some(refresh) = p.refresh(Some(bearer.clone())) else { return Err(QueryError::Auth(p.auth_help(401))) };
                    refreshed = true;
                    refresh.await.map_err(|e| QueryError::Auth(format!("{} The refresh failed: {e}", p.auth_help(401))))?;
                    bearer = p.credential().bearer().ok_or_else(|| QueryError::Auth(p.auth_help(401)))?;
                    out.credential_refreshed = true;
                    continue;
                }
                Err(PageError::Unauthorized) => return Err(QueryError::Auth(p.auth_help(401))),
                Err(PageError::Forbidden(why)) => return Err(QueryError::Auth(why)),
                Err(PageError::Refused(why)) => return Err(QueryError::Upstream(why)),
                Err(PageError::RateLimited { wait, detail }) => {
                    let wait = wait.unwrap_or(Duration::from_secs(5)).min(Duration::from_secs(60));
                    if out.rate_limit_waited + wait > lim.rate_wait_budget {
                        return Ok(Outcome::Stop(StopReason::RateLimitBudget(out.rate_limit_waited)));
                    }
                    tracing::info!(wait_s = wait.as_secs_f64(), "rate limited by {} ({detail}); every window waits", p.spec().display);
                    out.rate_limit_retries += 1;
                    out.rate_limit_waited += wait;
                    source.limiter.pause(wait);
                    // Offline answers skip the limiter, so wait here too.
                    if p.offline().is_some() {
                        tokio::time::sleep(wait).await;
                    }
                    continue;
                }
                Err(PageError::Transient(e)) => e,
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

