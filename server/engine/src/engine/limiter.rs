//! One request budget per provider, shared by every window of every query in this process.
//! Providers state budgets as "N requests per window" and count them over the last window
//! (Withings: 120 a minute per application), so the limiter remembers the last N requests and
//! sends the next one only when the oldest has left the window. A request is dated by when its
//! answer came back, not when it left: the provider saw it before that, however long it queued
//! on either side, so the next window's requests cannot reach it inside this one. A token bucket
//! would not do: full at the start and refilling meanwhile, it lets up to 2N through in one
//! window (the load test caught it). A "slow down" from the provider (a 429, or rate headers
//! saying its budget is spent) pauses every caller at once, so eight concurrent windows do not
//! each run into the same limit.
//!
//! Every wait is measured and returned by what caused it, and a wait that would end after the
//! caller's limits ([`Until`]) is not started: the caller gets a [`Held`] at once, with what held
//! it and when it would free, and answers with what it has. The sentences are made from these
//! facts elsewhere (engine/pacing.rs), never guessed where they are written.
use crate::catalog::RateBudget;
use std::sync::Mutex;
use tokio::time::{Duration, Instant};

/// The policy of waiting is the core's (`retry`), shared with the logins.
pub use crate::retry::{Word, MAX_PAUSE, UNSAID_429_WAIT, UNSAID_RESET_WAIT};

/// Longer than any wait a provider means; what it says is clamped to this so instants never overflow.
const FAR: Duration = Duration::from_secs(365 * 86_400);

/// How the provider told us to slow down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Told {
    /// With a 429 (else: the rate headers of an answered request said the budget is spent).
    pub refused: bool,
    /// What it said of the wait.
    pub word: Word,
}

/// What held a request back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// vitals' own count of the provider's published budget (the catalog's `RateBudget`).
    Budget,
    /// The provider said to slow down.
    Told(Told),
}

/// Time waited before requests could be sent, by what held them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Waited {
    /// For vitals' own count of the provider's budget.
    pub budget: Duration,
    /// For a pause after the provider's 429.
    pub refused: Duration,
    /// For a pause after the provider's rate headers said its budget was spent.
    pub spent: Duration,
}

impl Waited {
    fn add(&mut self, hold: Hold, d: Duration) {
        match hold {
            Hold::Budget => self.budget += d,
            Hold::Told(Told { refused: true, .. }) => self.refused += d,
            Hold::Told(_) => self.spent += d,
        }
    }

    /// Another request's waits, one after the other.
    pub fn then(&mut self, o: Waited) {
        self.budget += o.budget;
        self.refused += o.refused;
        self.spent += o.spent;
    }

    /// Windows that waited side by side: each cause the longest of them.
    pub fn beside(&mut self, o: Waited) {
        self.budget = self.budget.max(o.budget);
        self.refused = self.refused.max(o.refused);
        self.spent = self.spent.max(o.spent);
    }

    /// Waited on what the provider said (its 429s and rate headers).
    pub fn told(&self) -> Duration {
        self.refused + self.spent
    }

    pub fn total(&self) -> Duration {
        self.budget + self.told()
    }
}

/// Which limit a wait would have passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The tool call's time budget (engine/deadline.rs).
    Call,
    /// How long a read may wait on rate limits (`VITALS_RATE_WAIT_BUDGET_S`).
    Waits,
}

/// By when a request's waits must be over: the call's deadline, and the read's wait budget.
#[derive(Debug, Clone, Copy)]
pub struct Until {
    at: Instant,
    call: Instant,
    /// The latest a wait for vitals' own budget may end (the wait budget applies per request).
    budget: Instant,
    /// The latest a wait the provider asked for may end (the wait budget applies to the read's waits in all).
    told: Instant,
}

/// A request that could not be sent within its limits, and why: the facts its sentence says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Held {
    pub hold: Hold,
    /// How long until it could be sent: as the provider said it, as vitals' count has it, or
    /// (`at_least`) a lower bound, when every request of the budget is still in flight.
    pub free_in: Duration,
    pub at_least: bool,
    /// Which limit the wait would have passed, and how much of it was left.
    pub bound: Bound,
    pub left: Duration,
    /// What the request waited before it was held.
    pub waited: Waited,
}

impl Until {
    /// Limits from now: the call's time to fetch by, the read's wait budget, and what the read
    /// has already waited on the provider's word.
    pub fn new(call: Instant, wait_budget: Duration, told_waited: Duration) -> Until {
        let at = Instant::now();
        let after = |d: Duration| at.checked_add(d).map_or(call, |t| t.min(call));
        Until { at, call, budget: after(wait_budget), told: after(wait_budget.saturating_sub(told_waited)) }
    }

    /// Whether a request held by `hold` until `free_in` from when these limits were set may wait
    /// for it; else the facts of why not.
    pub fn fits(&self, hold: Hold, free_in: Duration, at_least: bool) -> Result<(), Held> {
        self.fits_at(hold, self.at, free_in, at_least)
    }

    fn fits_at(&self, hold: Hold, now: Instant, free_in: Duration, at_least: bool) -> Result<(), Held> {
        let limit = match hold {
            Hold::Budget => self.budget,
            Hold::Told(_) => self.told,
        };
        let left = limit.saturating_duration_since(now);
        if free_in <= left {
            return Ok(());
        }
        let bound = if limit >= self.call { Bound::Call } else { Bound::Waits };
        Err(Held { hold, free_in, at_least, bound, left, waited: Waited::default() })
    }
}

#[derive(Debug, Clone, Copy)]
struct Pause {
    /// Nobody sends before this (at most [`MAX_PAUSE`] from when it was set).
    until: Instant,
    /// When the provider said it would take requests again (or vitals' own choice, as `told` says).
    free: Instant,
    told: Told,
}

pub struct Limiter {
    requests: usize,
    window: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The requests of the last window: in flight (None) or answered at.
    recent: Vec<(u64, Option<Instant>)>,
    next: u64,
    paused: Option<Pause>,
}

/// One request's place in the budget; dropping it (the answer came, or the request failed)
/// dates the request.
pub struct Permit<'a> {
    limiter: &'a Limiter,
    id: u64,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut s = self.limiter.state.lock().expect("limiter lock");
        let now = Instant::now();
        if let Some(slot) = s.recent.iter_mut().find(|(id, _)| *id == self.id) {
            slot.1 = Some(now);
        }
    }
}

/// What one look at the limiter decided.
enum Step<'a> {
    Go(Permit<'a>),
    Sleep(Hold, Duration),
    Held(Held),
}

impl Limiter {
    pub fn new(b: RateBudget) -> Limiter {
        Limiter { requests: b.requests.max(1) as usize, window: b.per, state: Mutex::new(State::default()) }
    }

    /// Take one request from the budget, waiting while it is spent or the provider's pause
    /// holds. Returns what was waited, by cause, and the permit to hold until the answer is in;
    /// or, when the wait would pass `until` (a burst of Oura's 5,000 can mean minutes before a
    /// window frees; WHOOP's headers can say its minute resets after the call must answer), the
    /// facts of why, at once, rather than a sleep that ends in a cut.
    pub async fn acquire(&self, until: Until) -> Result<(Waited, Permit<'_>), Held> {
        let mut waited = Waited::default();
        loop {
            match self.look(&until) {
                Step::Go(permit) => return Ok((waited, permit)),
                Step::Held(held) => return Err(Held { waited, ..held }),
                Step::Sleep(hold, d) => {
                    let from = Instant::now();
                    tokio::time::sleep(d).await;
                    waited.add(hold, from.elapsed());
                }
            }
        }
    }

    fn look(&self, until: &Until) -> Step<'_> {
        let mut s = self.state.lock().expect("limiter lock");
        let now = Instant::now();
        let window = self.window;
        s.recent.retain(|(_, done)| done.is_none_or(|t| now.duration_since(t) < window));
        if let Some(p) = s.paused.filter(|p| p.until > now) {
            let hold = Hold::Told(p.told);
            return match until.fits_at(hold, now, p.free.saturating_duration_since(now), false) {
                Ok(()) => Step::Sleep(hold, p.until - now),
                Err(held) => Step::Held(held),
            };
        }
        if s.recent.len() < self.requests {
            let id = s.next;
            s.next += 1;
            s.recent.push((id, None));
            return Step::Go(Permit { limiter: self, id });
        }
        // The first answered request to leave the window; with all in flight, none can leave
        // before a whole window after its answer, so look again soon while that still fits.
        let oldest = s.recent.iter().filter_map(|(_, d)| *d).min();
        let (free_in, at_least) = oldest.map_or((window, true), |t| ((t + window).saturating_duration_since(now), false));
        match until.fits_at(Hold::Budget, now, free_in, at_least) {
            Ok(()) if at_least => Step::Sleep(Hold::Budget, Duration::from_millis(50)),
            Ok(()) => Step::Sleep(Hold::Budget, free_in),
            Err(held) => Step::Held(held),
        }
    }

    /// The provider said to slow down, and `said` is how long (or vitals' own choice, as
    /// `told.word` says): nobody sends for that long, at most [`MAX_PAUSE`] at a time.
    pub fn pause(&self, told: Told, said: Duration) {
        let mut s = self.state.lock().expect("limiter lock");
        let now = Instant::now();
        let said = said.min(FAR);
        let p = Pause { until: now + said.min(MAX_PAUSE), free: now + said, told };
        if s.paused.is_none_or(|q| q.until <= now || q.free < p.free) {
            s.paused = Some(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    /// Limits far away: a call of an hour, waits of an hour.
    fn forever() -> Until {
        Until::new(Instant::now() + HOUR, HOUR, Duration::ZERO)
    }

    const SPENT: Told = Told { refused: false, word: Word::Reset };

    #[tokio::test(start_paused = true)]
    async fn a_wait_longer_than_allowed_is_refused_not_slept() {
        let l = Limiter::new(RateBudget { requests: 1, per: Duration::from_secs(300) });
        drop(l.acquire(forever()).await.unwrap());
        let start = Instant::now();
        let held = l.acquire(Until::new(start + HOUR, Duration::from_secs(5), Duration::ZERO)).await.err().expect("held");
        assert!(start.elapsed() < Duration::from_secs(1), "refused at once, not after sleeping");
        assert_eq!((held.hold, held.free_in, held.bound, held.left), (Hold::Budget, Duration::from_secs(300), Bound::Waits, Duration::from_secs(5)));
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_is_kept_and_refills() {
        let l = Limiter::new(RateBudget { requests: 2, per: Duration::from_secs(1) });
        assert_eq!(l.acquire(forever()).await.unwrap().0, Waited::default());
        assert_eq!(l.acquire(forever()).await.unwrap().0, Waited::default());
        // The third waits until the first has left the window.
        let w = l.acquire(forever()).await.unwrap().0;
        assert_eq!(w, Waited { budget: Duration::from_secs(1), ..Default::default() });
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_counts_from_when_its_answer_came() {
        let l = Limiter::new(RateBudget { requests: 1, per: Duration::from_secs(1) });
        let (_, slow) = l.acquire(forever()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        drop(slow);
        let w = l.acquire(forever()).await.unwrap().0;
        assert_eq!(w.budget, Duration::from_secs(1), "a second after the answer, not after the send");
    }

    #[tokio::test(start_paused = true)]
    async fn no_window_ever_holds_more_than_the_budget() {
        let l = std::sync::Arc::new(Limiter::new(RateBudget { requests: 5, per: Duration::from_secs(2) }));
        let start = Instant::now();
        let sends = futures::future::join_all((0..23).map(|_| {
            let l = l.clone();
            async move {
                let _permit = l.acquire(forever()).await.unwrap();
                Instant::now() - start
            }
        }))
        .await;
        for t in &sends {
            let within = sends.iter().filter(|u| **u >= *t && **u < *t + Duration::from_secs(2)).count();
            assert!(within <= 5, "{within} sends in the 2 s from {t:?}: {sends:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_holds_every_caller_and_is_counted_as_the_providers() {
        let l = std::sync::Arc::new(Limiter::new(RateBudget { requests: 100, per: Duration::from_secs(1) }));
        l.pause(Told { refused: true, word: Word::RetryAfter }, Duration::from_secs(3));
        let start = Instant::now();
        let (a, b) = tokio::join!(l.acquire(forever()), l.acquire(forever()));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(start.elapsed() >= Duration::from_secs(3));
        let want = Waited { refused: Duration::from_secs(3), ..Default::default() };
        assert_eq!((a.0, b.0), (want, want), "a pause is the provider's word, not a spent budget");
        l.pause(SPENT, Duration::from_secs(2));
        assert_eq!(l.acquire(forever()).await.unwrap().0, Waited { spent: Duration::from_secs(2), ..Default::default() });
    }

    #[tokio::test(start_paused = true)]
    async fn a_reset_after_the_call_must_answer_holds_at_once_with_what_was_said() {
        let l = Limiter::new(RateBudget { requests: 100, per: Duration::from_secs(60) });
        // The headers say the minute resets in 58 s; the call has 10 s left.
        l.pause(SPENT, Duration::from_secs(58));
        let start = Instant::now();
        let held = l.acquire(Until::new(start + Duration::from_secs(10), HOUR, Duration::ZERO)).await.err().expect("held");
        assert_eq!(start.elapsed(), Duration::ZERO, "answered at once, not at the deadline");
        assert_eq!((held.hold, held.free_in, held.bound), (Hold::Told(SPENT), Duration::from_secs(58), Bound::Call));
        assert_eq!(held.waited, Waited::default(), "nothing was waited");
        // A reset past the longest pause is said as the provider said it, not as the pause.
        l.pause(SPENT, Duration::from_secs(40_000));
        let held = l.acquire(Until::new(start + Duration::from_secs(600), HOUR, Duration::ZERO)).await.err().expect("held");
        assert_eq!(held.free_in, Duration::from_secs(40_000));
    }

    #[tokio::test(start_paused = true)]
    async fn a_budget_all_in_flight_is_held_when_a_window_cannot_pass_in_time() {
        let l = Limiter::new(RateBudget { requests: 1, per: Duration::from_secs(60) });
        let _in_flight = l.acquire(forever()).await.unwrap();
        let held = l.acquire(Until::new(Instant::now() + Duration::from_secs(30), HOUR, Duration::ZERO)).await.err().expect("held");
        assert_eq!((held.hold, held.free_in, held.at_least, held.bound), (Hold::Budget, Duration::from_secs(60), true, Bound::Call));
    }

    #[tokio::test(start_paused = true)]
    async fn waits_on_the_providers_word_are_counted_against_the_wait_budget() {
        let until = Until::new(Instant::now() + HOUR, Duration::from_secs(5), Duration::from_secs(4));
        assert!(until.fits(Hold::Told(SPENT), Duration::from_secs(1), false).is_ok());
        let held = until.fits(Hold::Told(SPENT), Duration::from_secs(2), false).expect_err("past the wait budget");
        assert_eq!((held.bound, held.left), (Bound::Waits, Duration::from_secs(1)));
        assert!(until.fits(Hold::Budget, Duration::from_secs(5), false).is_ok(), "vitals' own budget counts per request");
    }
}
