//! One request budget per provider, shared by every window of every query in this process.
//! A token bucket keeps us inside the published budget; a 429 pauses every caller at once, so
//! eight concurrent windows do not each run into the same limit.
use crate::catalog::RateBudget;
use std::sync::Mutex;
use tokio::time::{Duration, Instant};

pub struct Limiter {
    capacity: f64,
    per_second: f64,
    state: Mutex<State>,
}

struct State {
    tokens: f64,
    at: Instant,
    paused_until: Option<Instant>,
}

impl Limiter {
    pub fn new(b: RateBudget) -> Limiter {
        let capacity = f64::from(b.requests.max(1));
        Limiter {
            capacity,
            per_second: capacity / b.per.as_secs_f64().max(0.001),
            state: Mutex::new(State { tokens: capacity, at: Instant::now(), paused_until: None }),
        }
    }

    /// Take one request from the budget, waiting if it is spent or paused. Returns the time
    /// waited because the budget was spent (time paused after a 429 is reported with the 429).
    pub async fn acquire(&self) -> Duration {
        let mut waited = Duration::ZERO;
        loop {
            let (wait, spent) = {
                let mut s = self.state.lock().expect("limiter lock");
                let now = Instant::now();
                let refill = (now - s.at).as_secs_f64() * self.per_second;
                s.tokens = (s.tokens + refill).min(self.capacity);
                s.at = now;
                match s.paused_until {
                    Some(until) if until > now => (until - now, false),
                    _ if s.tokens >= 1.0 => {
                        s.tokens -= 1.0;
                        return waited;
                    }
                    _ => (Duration::from_secs_f64((1.0 - s.tokens) / self.per_second), true),
                }
            };
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

    #[tokio::test(start_paused = true)]
    async fn the_budget_is_kept_and_refills() {
        let l = Limiter::new(RateBudget { requests: 2, per: Duration::from_secs(1) });
        assert_eq!(l.acquire().await, Duration::ZERO);
        assert_eq!(l.acquire().await, Duration::ZERO);
        let w = l.acquire().await;
        assert!(w >= Duration::from_millis(490) && w <= Duration::from_millis(510), "{w:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_holds_every_caller() {
        let l = std::sync::Arc::new(Limiter::new(RateBudget { requests: 100, per: Duration::from_secs(1) }));
        l.pause(Duration::from_secs(3));
        let start = Instant::now();
        let (a, b) = tokio::join!(l.acquire(), l.acquire());
        assert!(start.elapsed() >= Duration::from_secs(3));
        assert_eq!((a, b), (Duration::ZERO, Duration::ZERO), "a pause is not a spent budget");
    }
}
