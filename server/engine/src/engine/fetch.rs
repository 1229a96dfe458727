//! Fetching every window of a plan, several at a time, each paginated to exhaustion with bounded
//! retries. A window that stops before its last page vouches only for what its pages cover
//! (engine/coverage.rs), and the answer ends at the first day some window does not vouch for:
//! a partial answer never leaves here looking complete.
use super::cache::{RECENT_DAYS, RECENT_TTL};
use super::coverage::{first_gap, Coverage, Pos};
use super::density;
use super::flat::{Fields, Flat, Records, Text};
use super::gate::Gate;
use super::kept::{Keeper, Kept, RawFloor};
use super::plan::Plan;
use super::rest::{plan_rest, Later, Shown};
use super::send::{Call, Ended, Reader, SendError};
use super::stats::Stats;
use super::window::{split, Piece, Place};
use super::{Engine, QueryError, Source};
use crate::catalog::Split;
use crate::providers::PageError;
use jiff::civil::Date;
use jiff::ToSpan;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub use super::send::StopReason;

/// Everything fetched for one query: the windows up to the first gap, merged in order.
#[derive(Debug, Default)]
pub struct Fetched {
    pub kept: Kept,
    pub windows: u32,
    pub stats: Stats,
    /// Why the first window that did not finish stopped.
    pub stopped: Option<StopReason>,
    /// The first asked day that not every record of was fetched (None: every asked day was).
    pub gap: Option<Date>,
}

#[derive(Default)]
struct WindowOut {
    stats: Stats,
    stopped: Option<StopReason>,
    /// The first day of this window's span its pages do not vouch for.
    gap: Option<Date>,
}

enum Outcome {
    /// A decoded page and the body it came from (kept for the cache).
    Page(Decoded, Arc<str>),
    Stop(StopReason),
    /// An earlier window left a gap while this one waited for its turn: nothing was sent.
    Behind,
}

/// What the windows of a query share.
struct Shared {
    /// Request slots and the page cap, oldest window first (engine/gate.rs).
    gate: Arc<Gate>,
    /// The first window known to leave a gap: windows after it cannot add to the answer, so they
    /// send nothing more.
    gap_at: AtomicUsize,
    /// Pages and days done, for a client that asked (engine/progress.rs).
    tally: Option<Arc<super::progress::Tally>>,
    /// Whether a raw answer is still possible; once not, windows keep only what bucketing reads (engine/kept.rs).
    floor: Option<Arc<RawFloor>>,
}

/// What the closed, complete windows merged so far say of the data's density.
#[derive(Default)]
struct RunFacts {
    samples: usize,
    seconds: i64,
}

pub async fn fetch_all(engine: &Engine, plan: &Plan) -> Result<Fetched, QueryError> {
    let source = engine.source(plan.provider.spec().name).expect("a planned provider has a source");
    let key = density_key(plan);
    let known = source.densities.get(&key);
    let cap = engine.limits.page_cap.max(1);
    let mut pieces = split(plan, known_step(plan, &source.densities, &key, cap));
    // The provider's own limit as it stands now (halved by its "slow down"s), under the global cap.
    let in_flight = source.in_flight.limit();
    let tally = plan.progress.clone().map(|p| Arc::new(super::progress::Tally::new(p, plan.qualified.clone(), pieces.len())));
    // Nothing known of this account's density yet: the first round of windows (at the catalog's
    // size) shows it, and the rest are sized by it. What this costs is the wait for the first
    // round's oldest windows, which a query of many rounds repays in pages and round trips, and
    // two rounds do not.
    let first_round_end = pieces.get(in_flight.saturating_sub(1)).and_then(Piece::instants).map(|(_, end)| end);
    let later = match first_round_end {
        Some(from) if matches!(plan.collection.split, Split::Fill { .. }) && known.is_none() && pieces.len() > 2 * in_flight => {
            let rest_at_first = pieces.len() - in_flight;
            pieces.truncate(in_flight);
            Some(Later::new(in_flight, from, rest_at_first, key.clone()))
        }
        _ => None,
    };
    let shared = Shared { gate: Gate::new(in_flight, cap, pieces.len()), gap_at: AtomicUsize::new(usize::MAX), tally, floor: RawFloor::for_plan(plan) };
    let (f, facts) = fetch_run(engine, source, plan, pieces, &shared, later).await?;
    source.densities.learn(key, facts.samples, facts.seconds);
    Ok(f)
}

/// The windows' step for a query of an account whose density is known: sized by it, or windows
/// of whole days when the cap cannot hold the range at that size (as an earlier first round
/// measured its windows' pages, or else one page a window). None: not a series sized by density.
fn known_step(plan: &Plan, densities: &density::Densities, key: &str, cap: u32) -> Option<density::StepSeconds> {
    let known = densities.get(key);
    let step = density::step(plan.collection.split, known)?;
    let (Some(_), Some((s, e))) = (known, plan.range) else {
        return Some(step);
    };
    let (a, b) = (plan.zone.day_start(s).timestamp(), plan.zone.day_start(e.tomorrow().unwrap_or(e)).timestamp());
    let measured = densities.pages_per_window(key, step);
    let budget = density::Budget {
        pages_left: cap,
        pages_per_window: measured.unwrap_or(1.0),
        // No measure at this step: thrifty estimates the pages of a window from the density.
        first_step: if measured.is_some() { step } else { density::StepSeconds(0) },
        rest: density::StepSeconds((b.as_second() - a.as_second()).max(0)),
    };
    Some(density::thrifty(plan.collection.split, known, step, budget))
}

/// Fetch `pieces` (oldest first) and merge them up to the first gap; with `later`, the rest of
/// the range joins once the first round's oldest windows are merged.
async fn fetch_run(
    engine: &Engine,
    source: &Source,
    plan: &Plan,
    mut pieces: Vec<Piece>,
    shared: &Shared,
    mut later: Option<Later>,
) -> Result<(Fetched, RunFacts), QueryError> {
    let today = plan.zone.today();
    let zone = &plan.zone;
    // Every window is started at once and waits for a request slot; slots and pages go to the
    // oldest window waiting, so a small page cap still completes a prefix of the range.
    let window = |index: usize, piece: Piece| fetch_window(Window { engine, source, plan, shared, index, piece }, today);
    let mut windows: futures::stream::FuturesOrdered<_> = pieces.iter().cloned().enumerate().map(|(index, piece)| window(index, piece)).collect();

    // Merged as they finish, oldest first: a finished window's memory is reused by the next
    // rather than every window waiting for the last.
    let mut f = Fetched { kept: Kept::for_plan(plan), windows: pieces.len() as u32, ..Default::default() };
    let mut facts = RunFacts::default();
    let mut ended = false;
    let mut i = 0;
    // (last day of a merged window, the raw body of every window merged through it).
    let mut marks: std::collections::VecDeque<(Date, usize)> = Default::default();
    while let Some(done) = futures::StreamExt::next(&mut windows).await {
        let (w, kept) = done?;
        let piece = &pieces[i];
        i += 1;
        f.stats.add_sent(&w.stats);
        if ended {
            continue;
        }
        if let (None, None, Some((a, b))) = (&w.gap, &w.stopped, piece.instants().filter(|_| piece.closed_before(today, &plan.zone))) {
            facts.samples += kept.len();
            facts.seconds += b.as_second() - a.as_second();
        }
        f.stats.add_kept(&w.stats);
        f.kept.append(kept);
        let whole = w.gap.is_none() && w.stopped.is_none();
        if let (Some(floor), true) = (&shared.floor, whole) {
            // A cut falls on a day some window from the next one on left a gap in, so the windows
            // that end before the next window's first day are in the answer whatever happens.
            // (A window that stopped short ends the answer: nothing after it is sure.)
            marks.extend(piece.last_day(zone).map(|d| (d, f.kept.raw_body())));
            if let Some(next) = pieces.get(i).and_then(|p| p.first_day(zone)) {
                while let Some((_, body)) = marks.front().filter(|(d, _)| *d < next).copied() {
                    floor.sure(body);
                    marks.pop_front();
                }
            }
            f.kept.let_go_if(floor);
        }
        if w.gap.is_some() || (w.stopped.is_some() && plan.range.is_none()) {
            // The answer can only claim days up to here: what later windows hold would follow a hole.
            f.gap = w.gap;
            f.stopped = w.stopped;
            ended = true;
        } else if let Some(l) = later.take_if(|l| i == l.at) {
            let shown = Shown { windows: l.at, pages: f.stats.pages, samples: facts.samples, seconds: facts.seconds };
            let rest = plan_rest(plan, source, &l, shown, engine.limits.page_cap.max(1), shared.gate.pages_left());
            if let Some(t) = &shared.tally {
                t.replanned(l.rest_at_first, rest.len());
            }
            shared.gate.more(pieces.len(), rest.len());
            for piece in rest {
                windows.push_back(window(pieces.len(), piece.clone()));
                pieces.push(piece);
            }
            f.windows = pieces.len() as u32;
        }
    }
    drop(windows);
    Ok((f, facts))
}

/// What the density of a collection is remembered under: the account, not the query.
fn density_key(plan: &Plan) -> String {
    let p = plan.provider.spec().name;
    format!("{p}|{}|{}|{}", plan.cred.mode().as_str(), plan.cred.account.as_deref().unwrap_or_default(), plan.collection.name)
}

/// Every cache key of a provider starts with this.
pub fn cache_prefix(provider: &str) -> String {
    format!("{provider}|")
}

fn cache_key(plan: &Plan, piece: &Piece) -> String {
    let p = &plan.provider;
    format!(
        "{}{}|{}|{}|{}|{}|{}|{:?}|{:?}",
        cache_prefix(p.spec().name),
        plan.cred.mode().as_str(),
        plan.cred.kind.as_str(),
        plan.cred.account.as_deref().unwrap_or_default(),
        plan.collection.name,
        plan.zone.name,
        piece.label(),
        plan.upstream_fields,
        plan.options
    )
}

/// What placing a window's records needs, owned: a page's records are placed on the blocking
/// pool, beside the other windows' pages, rather than on the one task that drives every window
/// (where placing 32 pages one after another held back the requests of the windows next in line).
#[derive(Clone)]
struct Placing {
    piece: Piece,
    collection: &'static crate::catalog::CollectionSpec,
    zone: crate::time::Zone,
    range: Option<(Date, Date)>,
    /// The window's place in its query: its pages' turn on the cores (engine/turns.rs).
    index: usize,
    /// The provider's name as a person reads it, for a page that cannot be read.
    provider: &'static str,
}

impl Placing {
    fn of(plan: &Plan, piece: &Piece, index: usize) -> Placing {
        let provider = plan.provider.spec().display;
        Placing { piece: piece.clone(), collection: plan.collection, zone: plan.zone.clone(), range: plan.range, index, provider }
    }

    /// Keep the records that belong to this window; count those from outside the asked days.
    /// Returns where the page's dated records lie in time (the padding's included), for coverage.
    /// Records given as their spans in `body` are read in place where they can be (engine/flat.rs);
    /// one that is not JSON a `Value` can hold (a number out of range) fails the page, as its
    /// provider's `parse_page` would have.
    fn take(&self, records: Records, body: &Arc<str>, keeper: &mut Keeper, stats: &mut Stats) -> Result<Option<(Pos, Pos)>, String> {
        let mut span: Option<(Pos, Pos)> = None;
        match records {
            Records::Values(records) => {
                for r in records {
                    self.take_value(r, &mut span, keeper, stats);
                }
            }
            Records::Spans(spans) => {
                let mut flat = Flat::default();
                let in_place = keeper.reads_in_place();
                for at in spans {
                    if !(in_place && flat.read(&body[at.clone()])) {
                        let r = Text::new(body, at).read().map_err(|e| format!("a record of the page is not complete JSON ({e})"))?;
                        self.take_value(r, &mut span, keeper, stats);
                        continue;
                    }
                    let (place, pos) = self.locate(&flat, &mut span);
                    let outside = place == Place::Elsewhere && self.outside(&flat);
                    Self::tell(place, outside, stats, || keeper.keep_read(&flat, || Text::new(body, at), pos));
                }
            }
        }
        keeper.page_done();
        Ok(span)
    }

    fn take_value(&self, r: Value, span: &mut Option<(Pos, Pos)>, keeper: &mut Keeper, stats: &mut Stats) {
        let (place, pos) = self.locate(&r, span);
        let outside = place == Place::Elsewhere && self.outside(&r);
        Self::tell(place, outside, stats, || keeper.keep(r, pos));
    }

    /// Where a record lies, widening the page's `span` of dated records by it.
    fn locate(&self, r: &impl Fields, span: &mut Option<(Pos, Pos)>) -> (Place, Option<Pos>) {
        let (place, pos) = self.piece.locate(r, self.collection, &self.zone);
        if let Some(p) = pos {
            *span = Some(span.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))));
        }
        (place, pos)
    }

    /// A record placed: kept (`keep` says whether it was new) or counted.
    fn tell(place: Place, outside: bool, stats: &mut Stats, keep: impl FnOnce() -> bool) {
        match place {
            Place::Mine => {
                keep();
            }
            Place::MineUndated => {
                if keep() {
                    stats.undated_kept += 1;
                }
            }
            Place::Elsewhere if outside => stats.discarded_out_of_range += 1,
            Place::Elsewhere => {}
        }
    }

    /// A page whose records could not all be read: the query fails, naming it.
    fn unreadable(&self, why: &str) -> QueryError {
        QueryError::Upstream(format!("{} sent a page of {} that cannot be read: {why}.", self.provider, self.collection.name))
    }

    /// Whether a record lies outside every asked day (rather than in a neighbouring window).
    fn outside(&self, r: &impl Fields) -> bool {
        let day = super::record::record_day(r, self.collection, &self.zone);
        matches!((self.range, day), (Some((s, e)), Some(d)) if d < s || d > e)
    }

    /// [`Placing::take`] on the blocking pool; the keeper goes there and comes back.
    async fn take_off_the_driver(
        &self,
        records: Records,
        body: Arc<str>,
        keeper: Keeper,
        stats: &mut Stats,
    ) -> Result<(Keeper, Option<(Pos, Pos)>), QueryError> {
        let placing = self.clone();
        let _turn = PAGE_WORK.take(self.index).await;
        let (keeper, counted, span) = tokio::task::spawn_blocking(move || {
            let (mut keeper, mut counted) = (keeper, Stats::default());
            let span = placing.take(records, &body, &mut keeper, &mut counted);
            (keeper, counted, span)
        })
        .await
        .map_err(|e| QueryError::Upstream(format!("placing a page's records failed: {e}")))?;
        let span = span.map_err(|why| self.unreadable(&why))?;
        stats.undated_kept += counted.undated_kept;
        stats.discarded_out_of_range += counted.discarded_out_of_range;
        Ok((keeper, span))
    }
}

fn recent(piece: &Piece, plan: &Plan, today: Date) -> bool {
    let edge = today.checked_sub(RECENT_DAYS.days()).unwrap_or(today);
    piece.last_day(&plan.zone).is_none_or(|d| d >= edge)
}

/// One window of a run, and what it is fetched with.
struct Window<'a> {
    engine: &'a Engine,
    source: &'a Source,
    plan: &'a Plan,
    shared: &'a Shared,
    /// Its place in the query, oldest first.
    index: usize,
    piece: Piece,
}

/// A window's pages, as they came: the body and the token each was asked with, for the cache.
type Bodies = Vec<super::cache::Page>;

async fn fetch_window(w: Window<'_>, today: Date) -> Result<(WindowOut, Kept), QueryError> {
    let (plan, piece, shared) = (w.plan, &w.piece, w.shared);
    // Until this window returns, a page of the cap stays in reserve for it (engine/gate.rs).
    let running = shared.gate.running(w.index);
    let mut keeper = Keeper::new(plan, shared.floor.clone());
    let cacheable = w.engine.cache.enabled() && piece.closed_before(today, &plan.zone);
    let key = cacheable.then(|| cache_key(plan, piece));
    if let Some(hit) = key.as_ref().filter(|_| !plan.fresh).and_then(|k| w.engine.cache.get(k)) {
        let out = from_cache(&w, &hit, &mut keeper)?;
        return Ok((out, keeper.done(plan)));
    }
    let mut out = WindowOut::default();
    let mut coverage = Coverage::new(plan.collection.order);
    let (bodies, keeper) = fetch_pages(&w, running, key.is_some(), (keeper, &mut coverage), &mut out).await?;
    out.stats.order_disagreed = u32::from(coverage.disagreed());
    if let (Some(t), None) = (&shared.tally, &out.stopped) {
        t.window_done(w.index, piece.last_day(&plan.zone), false);
    }
    let covered = coverage.covered();
    out.gap = piece.span().and_then(|span| first_gap(span, covered, &plan.zone));
    if out.gap.is_some() {
        shared.gap_at.fetch_min(w.index, Ordering::SeqCst);
    }
    if let Some(k) = key.filter(|_| covered == super::coverage::Covered::Whole) {
        let ttl = recent(piece, plan, today).then_some(RECENT_TTL);
        w.engine.cache.keep(k, bodies, keeper.count(), ttl);
    }
    Ok((out, keeper.done(plan)))
}

/// A window the memory cache holds: its bodies decoded again, nothing sent.
fn from_cache(w: &Window, hit: &super::cache::Hit, keeper: &mut Keeper) -> Result<WindowOut, QueryError> {
    let (plan, piece) = (w.plan, &w.piece);
    tracing::debug!(window = %piece.label(), "served from the memory cache");
    let cached = Stats { cached_windows: 1, cached_pages: hit.bodies.len() as u32, cache_age: Some(hit.age), ..Default::default() };
    let mut out = WindowOut { stats: cached, ..Default::default() };
    // An empty body is a "no data" reply (engine/fetch.rs `judge`): nothing to decode.
    for kept in hit.bodies.iter().filter(|p| !p.body.is_empty()) {
        // These bodies decoded once already, each with the token it was asked with; one that
        // no longer does is a bug, not data.
        let at = crate::providers::PageAt {
            zone: plan.zone.clone(),
            token: kept.token.clone(),
            options: plan.options.clone(),
            record: plan.id.clone(),
            window: piece.upstream.clone(),
        };
        let page = read_page(&plan.provider, plan.collection, &kept.body, &at).map_err(|e| QueryError::Upstream(format!("{e:?}")))?;
        let placing = Placing::of(plan, piece, w.index);
        placing.take(page.records, &kept.body, keeper, &mut out.stats).map_err(|why| placing.unreadable(&why))?;
    }
    if let Some(t) = &w.shared.tally {
        t.window_done(w.index, piece.last_day(&plan.zone), true);
    }
    Ok(out)
}

/// A window's pages, each asked with the token the one before gave, until the provider says
/// there are no more, a token comes back twice, or the window stops; the bodies kept for the
/// cache when `keep`. `running` is the window's reserve of the page cap, given up with its last page.
async fn fetch_pages(
    w: &Window<'_>,
    running: super::gate::Running,
    keep: bool,
    (mut keeper, coverage): (Keeper, &mut Coverage),
    out: &mut WindowOut,
) -> Result<(Bodies, Keeper), QueryError> {
    let (plan, piece, shared) = (w.plan, &w.piece, w.shared);
    let placing = Placing::of(plan, piece, w.index);
    let mut running = Some(running);
    let mut bodies: Bodies = vec![];
    let mut seen: HashSet<String> = HashSet::new();
    let mut token: Option<String> = None;
    loop {
        if shared.gap_at.load(Ordering::SeqCst) < w.index {
            // An earlier window left a gap: nothing this one fetches can be in the answer.
            break;
        }
        let (page, body) = match fetch_page(w, token.as_deref(), out).await? {
            Outcome::Stop(r) => {
                out.stopped = Some(r);
                break;
            }
            Outcome::Behind => break,
            Outcome::Page(page, body) => (page, body),
        };
        if page.next_token.is_some() && out.stats.pages == 0 && matches!(plan.collection.split, Split::Fill { .. }) {
            tracing::debug!(window = %piece.label(), "a window sized for one page needed another (a denser stretch than its account's average)");
        }
        if page.next_token.is_none() {
            // The window will ask for nothing more: its slot goes to the next window now,
            // while this page's records are placed.
            running.take();
        }
        out.stats.pages += 1;
        if let Some(t) = &shared.tally {
            t.page(page.next_token.is_some());
        }
        if keep {
            bodies.push(super::cache::Page { token: token.clone(), body: body.clone() });
        }
        let (placed, span) = placing.take_off_the_driver(page.records, body, keeper, &mut out.stats).await?;
        keeper = placed;
        coverage.page(span);
        match page.next_token {
            None => {
                coverage.finish();
                break;
            }
            Some(t) if !seen.insert(t.clone()) => {
                out.stats.cycle = true;
                out.stopped = Some(StopReason::Cycle);
                break;
            }
            Some(t) => token = Some(t),
        }
    }
    Ok((bodies, keeper))
}

/// A page as the engine places it: its records decoded, or where each lies in the body when the
/// provider reads its series pages in place (`Provider::series_page`, engine/flat.rs).
struct Decoded {
    records: Records,
    next_token: Option<String>,
}

/// Read one page body, in place where the provider can, else by its `parse_page`.
fn read_page(
    p: &std::sync::Arc<dyn crate::providers::Provider>,
    c: &'static crate::catalog::CollectionSpec,
    body: &str,
    at: &crate::providers::PageAt,
) -> Result<Decoded, PageError> {
    if let Some(page) = p.series_page(c, body, at) {
        return Ok(Decoded { records: Records::Spans(page.spans), next_token: page.next_token });
    }
    let page = p.parse_page(c, body, at)?;
    Ok(Decoded { records: Records::Values(page.records), next_token: page.next_token })
}

/// Turns on the cores for page work, shared by every query (engine/turns.rs).
static PAGE_WORK: std::sync::LazyLock<super::turns::Turns> =
    std::sync::LazyLock::new(|| super::turns::Turns::new(std::thread::available_parallelism().map_or(2, |n| n.get())));

/// Decode a page on the blocking pool: concurrent windows then decode on every core instead of
/// taking turns on the one task that drives them.
async fn decode(
    p: &std::sync::Arc<dyn crate::providers::Provider>,
    c: &'static crate::catalog::CollectionSpec,
    (at, index): (crate::providers::PageAt, usize),
    body: String,
) -> Result<(Decoded, Arc<str>), PageError> {
    let _turn = PAGE_WORK.take(index).await;
    let p = p.clone();
    tokio::task::spawn_blocking(move || {
        let body: Arc<str> = body.into();
        read_page(&p, c, &body, &at).map(|page| (page, body))
    })
    .await
    .unwrap_or_else(|e| Err(PageError::Transient(format!("decoding the page failed: {e}"))))
}

/// One reply as a page or a verdict, whatever the provider: HTTP statuses and the provider's
/// verdict on a 200 body (Withings answers every error inside HTTP 200) become the same `PageError`s.
async fn judge(
    p: &std::sync::Arc<dyn crate::providers::Provider>,
    plan: &Plan,
    (window, index): (&crate::providers::Window, usize),
    reply: crate::http::Reply,
    token: Option<&str>,
) -> Result<(Decoded, Arc<str>), PageError> {
    match reply.status {
        // "Nothing for what you asked" in the provider's words (Polar: 204, 404): an empty page,
        // kept as an empty body so the cache serves it as one.
        s if p.spec().no_data.contains(&s) => Ok((Decoded { records: Records::Values(vec![]), next_token: None }, "".into())),
        200 => match reply.body {
            Ok(body) => {
                let at = crate::providers::PageAt {
                    zone: plan.zone.clone(),
                    token: token.map(str::to_string),
                    options: plan.options.clone(),
                    record: plan.id.clone(),
                    window: window.clone(),
                };
                decode(p, plan.collection, (at, index), body).await
            }
            Err(e) => Err(PageError::Transient(format!("the answer body broke off ({e})"))),
        },
        s => {
            let detail = || reply.body.unwrap_or_default().chars().take(300).collect();
            let e = refusal(p.as_ref(), &plan.cred, s, detail).unwrap_or_else(|| PageError::Transient(format!("unexpected HTTP {s}")));
            // A 429's wait is read where every 429 is handled (engine/send.rs).
            Err(match (e, plan.id.as_deref()) {
                // A record asked by id that the provider does not have: the `id` is what was wrong.
                (PageError::Refused(_), Some(id)) if s == 404 => PageError::Refused(format!(
                    "`id`: {} has no record {id:?} (HTTP 404 from {}); send an `id` as a row of its listing gives it.",
                    plan.qualified,
                    p.spec().display
                )),
                (PageError::Refused(why), _) => PageError::Refused(format!("{why} (the query for {})", plan.qualified)),
                (e, _) => e,
            })
        }
    }
}

/// A status the provider sent, read by the engine's one set of rules (a page's and a file's
/// alike): None when it is an answer (200, or a status the provider means as "no data"), else
/// the failure it means. `body`: the start of what it said, for a refusal.
pub fn refusal(p: &dyn crate::providers::Provider, cred: &crate::providers::Credential, status: u16, body: impl FnOnce() -> String) -> Option<PageError> {
    let display = p.spec().display;
    use crate::retry::Kind;
    if status == 200 || p.spec().no_data.contains(&status) {
        return None;
    }
    Some(match crate::retry::classify(status) {
        Kind::Unauthorized => PageError::Unauthorized,
        Kind::Forbidden => PageError::Forbidden(p.auth_help(403, cred)),
        Kind::RateLimited => PageError::RateLimited { wait: None, detail: format!("HTTP 429 from {display}") },
        Kind::Failing => PageError::Transient(format!("HTTP {status} from {display}")),
        Kind::BadRequest => PageError::Refused(format!("{display} refused the request with HTTP {status}: {}", body())),
        // A success other than 200 is no page either.
        Kind::Success | Kind::Unexpected => PageError::Transient(format!("unexpected HTTP {status} from {display}")),
    })
}

/// A page of one window, as the one path of a request reads it (engine/send.rs): admitted by the
/// query's gate (a page of the cap for its first request), sent by the provider's client or its
/// built-in sample, judged as a page.
struct PageReader<'a> {
    plan: &'a Plan,
    source: &'a Source,
    shared: &'a Shared,
    index: usize,
    /// The query's page cap, said when it stops a window.
    page_cap: u32,
    req: crate::http::Request,
    token: Option<&'a str>,
    /// The window the page is of, for a request built anew.
    window: &'a crate::providers::Window,
}

impl PageReader<'_> {
    /// A refusal as the adapter reads it ([`Provider::refusal`]): asked again another way (the
    /// request built anew), said in its words, or None for the engine's.
    ///
    /// [`Provider::refusal`]: crate::providers::Provider::refusal
    fn adapter_refusal(&mut self, reply: &crate::http::Reply) -> Option<PageError> {
        let (p, plan) = (&self.plan.provider, self.plan);
        let body = reply.body.as_deref().ok().filter(|_| matches!(reply.status, 400 | 404 | 422))?;
        match p.refusal(plan.collection, &self.req, reply.status, body) {
            crate::providers::Refusal::AsUsual => None,
            crate::providers::Refusal::Said(why) => Some(PageError::Refused(why)),
            crate::providers::Refusal::AskAgain => {
                self.req = p.read_request(plan.collection, self.window, plan.upstream_fields.as_deref(), self.token, &plan.cred, &plan.options);
                let said: String = body.chars().take(300).collect();
                let display = p.spec().display;
                Some(PageError::AskAgain(format!("{display} refused the request with HTTP {}, and again when asked another way: {said}", reply.status)))
            }
        }
    }
}

impl Reader for PageReader<'_> {
    type Reply = crate::http::Reply;
    type Answer = (Decoded, Arc<str>);

    async fn admit(&mut self, first: bool) -> Result<(), Ended<Self::Answer>> {
        let Some(admitted) = self.plan.deadline.within(self.shared.gate.acquire(self.index, first)).await else {
            return Err(Ended::Stop(StopReason::TimeBudget(self.plan.deadline.budget())));
        };
        if admitted.is_err() {
            return Err(Ended::Stop(StopReason::PageCap(self.page_cap)));
        }
        if self.shared.gap_at.load(Ordering::SeqCst) < self.index {
            // A window before this one stopped short while this one waited (a 429 that is not
            // asked again, say): what this one would fetch cannot be in the answer.
            return Err(Ended::Behind);
        }
        Ok(())
    }

    async fn send(&mut self, bearer: &crate::secret::Secret) -> Result<Self::Reply, SendError> {
        let p = &self.plan.provider;
        match p.local(&self.plan.cred) {
            // Built-in sample data, or an export indexed in memory: answered in process.
            Some(api) => {
                // An export's index still being built: the call waits for it within its deadline.
                if let Some(wait) = p.ready() {
                    let report = reading_reports(p.as_ref(), self.shared.tally.as_deref());
                    let waited = async {
                        tokio::select! {
                            () = wait => {}
                            () = report => {}
                        }
                    };
                    if self.plan.deadline.within(waited).await.is_none() {
                        return Err(SendError::NotReady(p.spec().display));
                    }
                    if let Some(t) = &self.shared.tally {
                        t.reading(&format!("{}'s file", p.spec().display), 100);
                    }
                }
                Ok(api.answer(&self.req))
            }
            None => Ok(self.source.http.read(&self.req, bearer).await?),
        }
    }

    async fn judge(&mut self, reply: Self::Reply) -> Result<Self::Answer, PageError> {
        // A window sized to one page (a series at its account's density) rarely asks for another:
        // its slot goes on while its page decodes. A window of many pages keeps its slot, so
        // windows do not take turns page by page (engine/gate.rs).
        if matches!(self.plan.collection.split, Split::Fill { .. }) {
            self.shared.gate.step_aside(self.index);
        }
        if let Some(e) = self.adapter_refusal(&reply) {
            return Err(e);
        }
        judge(&self.plan.provider, self.plan, (self.window, self.index), reply, self.token).await
    }

    fn slots(&self, n: usize) {
        self.shared.gate.set_slots(n);
    }
}

/// How far the provider's file is read, reported to a client that asked for progress while a
/// call waits for it (never ends: the wait it runs beside does).
async fn reading_reports(p: &dyn crate::providers::Provider, tally: Option<&super::progress::Tally>) {
    loop {
        if let (Some(t), Some((what, percent))) = (tally, p.reading()) {
            t.reading(&what, percent);
        }
        tokio::time::sleep(super::progress::EVERY).await;
    }
}

/// One page of a window: sent by the one path of a request, its end in a window's words.
async fn fetch_page(w: &Window<'_>, token: Option<&str>, out: &mut WindowOut) -> Result<Outcome, QueryError> {
    let (engine, source, plan, shared, index, piece) = (w.engine, w.source, w.plan, w.shared, w.index, &w.piece);
    let p = &plan.provider;
    let req = p.read_request(plan.collection, &piece.upstream, plan.upstream_fields.as_deref(), token, &plan.cred, &plan.options);
    let offline = p.local(&plan.cred).is_some();
    let call = Call { provider: p, source, cred: &plan.cred, limits: &engine.limits, deadline: plan.deadline, offline };
    let mut reader = PageReader { plan, source, shared, index, page_cap: engine.limits.page_cap, req, token, window: &piece.upstream };
    Ok(match call.send(&mut reader, &mut out.stats).await? {
        Ended::Answer((page, body)) => Outcome::Page(page, body),
        Ended::Stop(why) => Outcome::Stop(why),
        Ended::Behind => Outcome::Behind,
        Ended::Refused(PageError::Forbidden(why)) => return Err(QueryError::Auth(why)),
        Ended::Refused(PageError::Refused(why)) => return Err(QueryError::Upstream(why)),
        Ended::Refused(_) => return Err(QueryError::Auth(p.auth_help(401, &plan.cred))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// A page read in place whose record is not JSON a `Value` can hold (a number out of range)
    /// fails the query, naming the provider, as its `parse_page` would have refused it: never a
    /// record made up or dropped without a word.
    #[test]
    fn a_record_no_value_can_hold_fails_its_page_out_loud() {
        let config = Arc::new(Config::from_pairs([("VITALS_TZ", "UTC")]));
        let engine = Engine::in_home(crate::accounts::Home::local(config.clone()), config.clone(), super::super::Limits::from_config(&config));
        let req = super::super::QueryRequest { collection: "oura.heartrate".into(), day: Some("2026-06-01".into()), ..Default::default() };
        let plan = super::super::plan::plan(&engine, req).expect("a plan");
        let good = r#"{"bpm":60,"source":"awake","timestamp":"2026-06-01T12:00:00+00:00"}"#;
        let record: Value = serde_json::from_str(good).unwrap();
        let mine = |p: &Piece| p.locate(&record, plan.collection, &plan.zone).0 == Place::Mine;
        let piece = split(&plan, None).into_iter().find(mine).expect("the window of the record");
        let placing = Placing::of(&plan, &piece, 0);
        let bad = r#"{"bpm":1e400,"source":"awake","timestamp":"2026-06-01T12:00:05+00:00"}"#;
        let body: Arc<str> = format!("{good},{bad}").into();
        let spans = vec![0..good.len(), good.len() + 1..body.len()];
        let mut keeper = Keeper::new(&plan, None);
        let why = placing.take(Records::Spans(spans.clone()), &body, &mut keeper, &mut Stats::default()).expect_err("refused");
        assert!(why.contains("not complete JSON"), "{why}");
        assert!(placing.unreadable(&why).to_string().contains("Oura"), "{why}");
        let mut keeper = Keeper::new(&plan, None);
        placing.take(Records::Spans(spans[..1].to_vec()), &body, &mut keeper, &mut Stats::default()).expect("a readable page");
        assert_eq!(keeper.count(), 1);
    }
}
