//! One request budget per provider, shared by every window of every query in this process.
//! Providers state budgets as "N requests per window" and count them over the last window
//! (Withings: 120 a minute per application), so the limiter remembers the last N requests and
//! sends the next one only when the oldest has left the window. A request is dated by when its
//! answer came back, not when it left: the provider saw it before that, however long it queued
//! on either side, so the next window's requests cannot reach it inside this one. A token bucket
//! would not do: full at the start and refilling meanwhile, it lets up to 2N through in one
//! window (the load test caught it). A 429 pauses every caller at once, so eight concurrent
//! windows do not each run into the same limit.
use crate::catalog::RateBudget;
use std::sync::Mutex;
use tokio::time::{Duration, Instant};

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
    paused_until: Option<Instant>,
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

impl Limiter {
    pub fn new(b: RateBudget) -> Limiter {
        Limiter { requests: b.requests.max(1) as usize, window: b.per, state: Mutex::new(State::default()) }
    }

    /// Take one request from the budget, waiting if it is spent or paused. Returns the time
    /// waited because the budget was spent (time paused after a 429 is reported with the 429),
    /// and the permit to hold until the answer is in; or, when the budget would keep this
    /// request waiting longer than `max` in all, the time already waited (the caller says so
    /// rather than stall: a burst of Oura's 5,000 can mean minutes before a window frees).
    pub async fn acquire(&self, max: Duration) -> Result<(Duration, Permit<'_>), Duration> {
        let mut waited = Duration::ZERO;
        loop {
            let (wait, spent) = {
                let mut s = self.state.lock().expect("limiter lock");
                let now = Instant::now();
                let window = self.window;
                s.recent.retain(|(_, done)| done.is_none_or(|t| now.duration_since(t) < window));
                match s.paused_until {
                    Some(until) if until > now => (until - now, false),
                    _ if s.recent.len() < self.requests => {
                        let id = s.next;
                        s.next += 1;
                        s.recent.push((id, None));
                        return Ok((waited, Permit { limiter: self, id }));
                    }
                    // The first answered request to leave the window; with all in flight, look again soon.
                    _ => (s.recent.iter().filter_map(|(_, d)| *d).min().map_or(Duration::from_millis(50), |t| t + window - now), true),
                }
            };
            if spent && waited + wait > max {
                return Err(waited);
            }
            tokio::time::sleep(wait).await;
            if spent {
                waited += wait;
            }
        }
    }

    /// The provider said "slow down" (429 with Retry-After): nobody sends before `d` has passed.
    pub fn pause(&self, d: Duration) {
        let mut s = self.state.lock().expect("limiter lock");
        let until = Instant::now() + d;
        if s.paused_until.is_none_or(|p| p < until) {
            s.paused_until = Some(until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOREVER: Duration = Duration::from_secs(3600);

    #[tokio::test(start_paused = true)]
    async fn a_wait_longer_than_allowed_is_refused_not_slept() {
        let l = Limiter::new(RateBudget { requests: 1, per: Duration::from_secs(300) });
        drop(l.acquire(FOREVER).await.unwrap());
        let start = Instant::now();
        assert!(l.acquire(Duration::from_secs(5)).await.is_err());
        assert!(start.elapsed() < Duration::from_secs(1), "refused at once, not after sleeping");
    }

    #[tokio::test(start_paused = true)]
    async fn the_budget_is_kept_and_refills() {
        let l = Limiter::new(RateBudget { requests: 2, per: Duration::from_secs(1) });
        assert_eq!(l.acquire(FOREVER).await.unwrap().0, Duration::ZERO);
        assert_eq!(l.acquire(FOREVER).await.unwrap().0, Duration::ZERO);
        // The third waits until the first has left the window.
        let w = l.acquire(FOREVER).await.unwrap().0;
        assert_eq!(w, Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_counts_from_when_its_answer_came() {
        let l = Limiter::new(RateBudget { requests: 1, per: Duration::from_secs(1) });
        let (_, slow) = l.acquire(FOREVER).await.unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        drop(slow);
        let w = l.acquire(FOREVER).await.unwrap().0;
        assert_eq!(w, Duration::from_secs(1), "a second after the answer, not after the send");
    }

    #[tokio::test(start_paused = true)]
    async fn no_window_ever_holds_more_than_the_budget() {
        let l = std::sync::Arc::new(Limiter::new(RateBudget { requests: 5, per: Duration::from_secs(2) }));
        let start = Instant::now();
        let sends = futures::future::join_all((0..23).map(|_| {
            let l = l.clone();
            async move {
                let _permit = l.acquire(FOREVER).await.unwrap();
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
    async fn a_pause_holds_every_caller() {
        let l = std::sync::Arc::new(Limiter::new(RateBudget { requests: 100, per: Duration::from_secs(1) }));
        l.pause(Duration::from_secs(3));
        let start = Instant::now();
        let (a, b) = tokio::join!(l.acquire(FOREVER), l.acquire(FOREVER));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(start.elapsed() >= Duration::from_secs(3));
        assert_eq!((a.0, b.0), (Duration::ZERO, Duration::ZERO), "a pause is not a spent budget");
    }
}
