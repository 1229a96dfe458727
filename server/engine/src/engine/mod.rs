//! The one provider-neutral query engine: validate → plan the window → fetch every page → trim →
//! project → say everything that happened. Nothing here names a provider.
pub mod answer;
pub mod beside;
pub mod cache;
pub mod coverage;
pub mod cut;
pub mod deadline;
pub mod density;
pub mod during;
pub mod embedded;
pub mod fetch;
pub mod file;
pub mod fit;
pub mod flat;
pub mod flight;
pub mod gate;
pub mod headline;
pub mod kept;
pub mod legend;
pub mod limiter;
pub mod night;
pub mod pacing;
pub mod plan;
pub mod progress;
pub mod record;
pub mod render;
pub mod resolution;
pub mod rest;
pub mod rules;
pub mod send;
pub mod shape;
pub mod stats;
pub mod today;
pub mod turns;
pub mod window;
pub mod workout;

pub use answer::{Answer, Notices};
pub use deadline::Deadline;
pub use plan::QueryRequest;
pub use today::{TodayReport, TodayRequest};

use crate::config::Config;
use crate::http::Http;
use crate::providers::{self, Provider};
use cache::Cache;
use limiter::Limiter;
use std::sync::Arc;

/// Bad input or a refusal, in words that name the parameter and what to send instead.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("{0}")]
    BadInput(String),
    /// The collection needs a connected account (the sandbox has no such data).
    #[error("{why}")]
    NeedsAccount { provider: &'static str, why: String },
    #[error("{0}")]
    Auth(String),
    #[error("{0}")]
    Upstream(String),
}

/// Limits that keep one query bounded. Read from the binary's settings so tests can shrink them.
#[derive(Clone, Debug)]
pub struct Limits {
    pub page_cap: u32,
    pub transient_retries: u32,
    pub backoff_base: std::time::Duration,
    pub rate_wait_budget: std::time::Duration,
    /// The most requests one provider may have in flight, over every provider's own default.
    pub concurrency: usize,
    /// Bytes the memory cache may hold (0: no cache).
    pub cache_bytes: usize,
    /// How long one tool call may take before it answers what is complete (engine/deadline.rs).
    pub call_budget: std::time::Duration,
}

impl Limits {
    /// The limits `config` sets, each variable's default where it sets none.
    pub fn from_config(config: &Config) -> Limits {
        let num = |k: &str, d: u64| config.number(k).unwrap_or(d);
        Limits {
            page_cap: num("VITALS_PAGE_CAP", 2_000) as u32,
            transient_retries: 3,
            backoff_base: std::time::Duration::from_millis(num("VITALS_BACKOFF_MS", 250)),
            rate_wait_budget: std::time::Duration::from_secs(num("VITALS_RATE_WAIT_BUDGET_S", 120)),
            concurrency: num("VITALS_CONCURRENCY", 64).clamp(1, 64) as usize,
            cache_bytes: (num("VITALS_CACHE_MB", 64) as usize).saturating_mul(1 << 20),
            call_budget: call_budget(config),
        }
    }
}

/// `VITALS_CALL_BUDGET_S` (seconds, decimals allowed, 1 to 3600), else the default; a value that
/// cannot be read is said on stderr and the default kept.
fn call_budget(config: &Config) -> std::time::Duration {
    let Some(v) = config.var("VITALS_CALL_BUDGET_S") else {
        return deadline::DEFAULT_CALL_BUDGET;
    };
    match v.trim().parse::<f64>() {
        Ok(s) if (1.0..=3600.0).contains(&s) => std::time::Duration::from_secs_f64(s),
        _ => {
            tracing::warn!("VITALS_CALL_BUDGET_S={v:?} is not a number of seconds from 1 to 3600; using {} s", deadline::DEFAULT_CALL_BUDGET.as_secs());
            deadline::DEFAULT_CALL_BUDGET
        }
    }
}

/// A provider with what it owns in this process: one HTTP client (keep-alive, gzip, timeouts)
/// and one request budget, shared by all its queries.
pub struct Source {
    pub provider: Arc<dyn Provider>,
    pub http: Http,
    pub limiter: Limiter,
    /// Requests in flight at once, adapted to the provider's "slow down"s (engine/flight.rs).
    pub in_flight: flight::InFlight,
    /// How densely each account's series fill time, as measured (engine/density.rs).
    pub densities: density::Densities,
    /// The login the cache's windows were fetched with (None until the first query).
    account: std::sync::Mutex<Option<Option<String>>>,
}

impl Source {
    /// The provider's budget as `config` counts it (a twin's faster windows), its client with
    /// `config`'s request timeout.
    pub fn new(provider: Arc<dyn Provider>, cap: usize, config: &Config) -> Source {
        let limiter = Limiter::new(provider.spec().rate_budget.scaled(config));
        let in_flight = flight::InFlight::new(provider.spec().in_flight, cap);
        Source {
            http: Http::timed(provider.spec().non_get, config.http_timeout()),
            provider,
            limiter,
            in_flight,
            densities: Default::default(),
            account: std::sync::Mutex::new(None),
        }
    }
}

pub struct Engine {
    pub sources: Vec<Source>,
    pub limits: Limits,
    /// Closed windows already fetched, in memory only.
    pub cache: Cache,
    /// Whose credentials the providers read (this machine's user, or one tenant of a hosted server).
    home: crate::accounts::Home,
    /// The settings the binary was started with (the zone of a call that names none).
    config: Arc<Config>,
}

impl Engine {
    pub fn new(providers: Vec<Arc<dyn Provider>>, config: Arc<Config>, limits: Limits) -> Engine {
        let cache = Cache::new(limits.cache_bytes);
        let sources = providers.into_iter().map(|p| Source::new(p, limits.concurrency, &config)).collect();
        Engine { sources, limits, cache, home: crate::accounts::Home::local(config.clone()), config }
    }

    /// Every provider, reading `home`'s credentials; its own cache, budgets and densities, so
    /// nothing one home fetched is ever another's answer.
    pub fn in_home(home: crate::accounts::Home, config: Arc<Config>, limits: Limits) -> Engine {
        Engine { home: home.clone(), ..Engine::new(crate::providers::all_in(&config, &home), config, limits) }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The zone of local days for a call that names none (`VITALS_TZ`, else the machine's).
    pub fn zone(&self) -> crate::time::Zone {
        self.config.zone()
    }

    pub fn home(&self) -> &crate::accounts::Home {
        &self.home
    }

    pub fn providers(&self) -> impl Iterator<Item = &Arc<dyn Provider>> {
        self.sources.iter().map(|s| &s.provider)
    }

    /// All qualified collection names (`oura.daily_sleep`).
    pub fn collection_names(&self) -> Vec<String> {
        self.providers().flat_map(|p| p.spec().collections.iter().map(move |c| p.spec().qualified(c.name))).collect()
    }

    /// Qualified names of the collections that pass `test` (for errors that say where a parameter applies).
    pub fn collections_where(&self, test: impl Fn(&crate::catalog::CollectionSpec) -> bool) -> Vec<String> {
        self.providers().flat_map(|p| p.spec().collections.iter().filter(|c| test(c)).map(move |c| p.spec().qualified(c.name)).collect::<Vec<_>>()).collect()
    }

    /// The provider and collection a qualified name (`garmin.vo2max`) names. Two connections may
    /// share a namespace (Garmin's Personal API and its Connect session), never a collection name.
    pub fn resolve(&self, namespace: &str, collection: &str) -> Option<(&Arc<dyn Provider>, &'static crate::catalog::CollectionSpec)> {
        self.providers().filter(|p| p.spec().namespace == namespace).find_map(|p| Some((p, p.spec().collection(collection)?)))
    }

    /// Whether any provider's collections are named `namespace.…`.
    pub fn knows_namespace(&self, namespace: &str) -> bool {
        self.providers().any(|p| p.spec().namespace == namespace)
    }

    pub fn provider(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.source(name).map(|s| &s.provider)
    }

    pub fn source(&self, name: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.provider.spec().name == name)
    }

    /// When the provider's login differs from the one earlier windows were fetched with, empty
    /// that provider's cache. Returns what was dropped, if anything was.
    fn account_switch(&self, plan: &plan::Plan) -> Option<(usize, usize)> {
        let source = self.source(plan.provider.spec().name)?;
        let now = plan.cred.account.clone();
        let mut seen = source.account.lock().expect("account lock");
        let changed = seen.as_ref().is_some_and(|before| *before != now);
        *seen = Some(now);
        let dropped = changed.then(|| self.cache.clear_prefix(&fetch::cache_prefix(plan.provider.spec().name)))?;
        (dropped.0 > 0).then_some(dropped)
    }

    /// Work the credential needs before the first request (a token about to expire, a key not
    /// exchanged yet, a step after the login still owed), done once here rather than by every
    /// window meeting a 401 at the same moment; then the credential is read again.
    async fn prepare(&self, plan: &mut plan::Plan) -> Result<(), QueryError> {
        if plan.cred.due.is_none() {
            return Ok(());
        }
        let (cred, due) = self.ready(&plan.provider).await?;
        plan.cred = cred;
        plan.prepared = due;
        Ok(())
    }

    /// `p`'s credential ready for a first request: what was due done, then read again, with what
    /// was done (None: nothing was due, or the provider can do nothing about it). Every read of a
    /// provider starts here, a query's as a file's (engine/file.rs).
    pub async fn ready(&self, p: &Arc<dyn Provider>) -> Result<(providers::Credential, Option<providers::Due>), QueryError> {
        let cred = p.credential().current();
        let Some(due) = cred.due.clone() else {
            return Ok((cred, None));
        };
        let Some(renew) = p.renew(None) else {
            return Ok((cred, None));
        };
        match (renew.await, &due) {
            (Ok(()), _) => {}
            // A token near its expiry is still sent: if the provider turns it away, the renewal
            // after that 401 is asked again, and a token endpoint still down cuts the answer there
            // (engine/fetch.rs) like any transient fault.
            (Err(providers::RenewError::Unavailable(e) | providers::RenewError::Limited { why: e, .. }), providers::Due::Expiring) => {
                tracing::warn!("{}'s token endpoint did not renew the token before the first request ({e}); the current token is sent", p.spec().display);
                return Ok((cred, None));
            }
            (Err(e), due) => return Err(due_failed(p.as_ref(), due, e)),
        }
        Ok((p.credential().current(), Some(due)))
    }

    pub async fn query(&self, req: QueryRequest) -> Result<Answer, QueryError> {
        let req = during::resolve(self, req).await?;
        self.query_one(req).await
    }

    /// One collection read as planned, with no workout to find first (engine/during.rs reads the
    /// workout itself with this).
    pub async fn query_one(&self, req: QueryRequest) -> Result<Answer, QueryError> {
        let mut plan = plan::plan(self, req)?;
        self.prepare(&mut plan).await?;
        let switched = self.account_switch(&plan);
        let forgotten = plan.forget.then(|| self.cache.clear());
        let started = std::time::Instant::now();
        let fetched = fetch::fetch_all(self, &plan).await?;
        let fetched_at = started.elapsed();
        let records = fetched.kept.len();
        let mut answer = fit::answer(&plan, shape::shape(&plan, fetched))?;
        tracing::debug!(
            collection = %plan.qualified,
            records,
            fetch_ms = fetched_at.as_millis() as u64,
            shape_ms = (started.elapsed() - fetched_at).as_millis() as u64,
            "answered"
        );
        if let Some((windows, bytes)) = switched {
            let display = plan.provider.spec().display;
            // A file's "login" is the version of the file: a changed file is read again.
            let (what, other) = if matches!(plan.provider.spec().connection, crate::connection::Connection::File(_)) {
                (format!("The {display} file changed since earlier answers (its size or modification time)"), "the old file")
            } else {
                (format!("A different {display} login is in use than for earlier answers (the account was connected again)"), "the other account")
            };
            answer.notices.cache_cleared =
                Some(format!("{what}: the memory cache of its data was emptied ({windows} window(s), {bytes} bytes), so nothing of {other} is mixed in."));
        }
        if let Some((windows, bytes)) = forgotten {
            answer.notices.cache_cleared =
                Some(format!("forget=true: the memory cache was emptied ({windows} window(s), {bytes} bytes) before this answer was fetched."));
        }
        Ok(answer)
    }
}

/// A credential's due work that failed, in words: a token endpoint that did not answer is the
/// provider failing (nothing was read, and nothing says the login is bad); anything else is the
/// person's to act on.
fn due_failed(p: &dyn Provider, due: &providers::Due, e: providers::RenewError) -> QueryError {
    let display = p.spec().display;
    let e = match e {
        providers::RenewError::Unavailable(e) => {
            let what = match due {
                providers::Due::Setup(_) => "the step after its login did not get an answer before the first request",
                _ => "its token endpoint did not answer when asked for a token before the first request",
            };
            return QueryError::Upstream(format!("{display} could not be read: {what} ({e}); nothing is known about the data itself"));
        }
        providers::RenewError::Limited { why, wait } => {
            return QueryError::Upstream(format!(
                "{display} could not be read: its token endpoint limited the login when asked for a token before the first request \
                 ({why}); ask again in {} s. Nothing is known about the data itself",
                crate::retry::ahead(wait)
            ))
        }
        providers::RenewError::Failed(e) => e,
    };
    match due {
        providers::Due::Setup(step) => QueryError::Auth(format!("{display} is connected, but {step} has not succeeded yet: {e}")),
        providers::Due::Exchange => QueryError::Auth(format!("The {display} key could not be exchanged for a token: {e}")),
        providers::Due::Expiring => QueryError::Auth(format!("The {display} token was about to expire, and renewing it failed: {e}")),
    }
}
