//! How many requests one provider has in flight at once: a property of the provider (its catalog
//! says how many its budget allows, and why), adapted while the process runs. A "slow down" (429,
//! Withings' 601) halves it for every query from then on, since the provider has told us where its
//! tolerance is; a run of clean pages earns one slot back, up to the provider's default. A global
//! cap (`VITALS_CONCURRENCY`) sits over all of them.
//!
//! The limit holds across every query of the process: a request enters here before it is sent
//! and leaves when its answer is in. Each query's own windows share the same number of slots
//! (engine/gate.rs), but several queries at once (the sections of `vitals_today`, a hosted
//! server's callers) would otherwise each keep the limit on their own and together break it.
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;
use tokio::sync::Notify;

/// Clean pages in a row that earn one slot back.
pub const RAISE_AFTER: u32 = 10;

#[derive(Debug)]
pub struct InFlight {
    default: usize,
    current: AtomicUsize,
    clean: AtomicU32,
    halvings: AtomicU32,
    /// Requests of this provider in flight now, over every query.
    sent: Mutex<usize>,
    left: Notify,
}

/// One request in flight; dropping it (the answer is in, or the request was given up) frees its place.
pub struct Slot<'a> {
    flight: &'a InFlight,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.flight.sent.lock().expect("in-flight lock") -= 1;
        self.flight.left.notify_waiters();
    }
}

impl InFlight {
    /// The provider's default, under the global cap (at least one).
    pub fn new(provider_default: usize, cap: usize) -> InFlight {
        let default = provider_default.min(cap).max(1);
        InFlight {
            default,
            current: AtomicUsize::new(default),
            clean: AtomicU32::new(0),
            halvings: AtomicU32::new(0),
            sent: Mutex::new(0),
            left: Notify::new(),
        }
    }

    /// A place for one request, waiting while the provider's limit is taken by any query.
    pub async fn enter(&self) -> Slot<'_> {
        loop {
            let left = self.left.notified();
            tokio::pin!(left);
            // Registered before looking, so a place freed in between is not missed.
            left.as_mut().enable();
            {
                let mut sent = self.sent.lock().expect("in-flight lock");
                if *sent < self.limit() {
                    *sent += 1;
                    return Slot { flight: self };
                }
            }
            left.await;
        }
    }

    /// Requests of this provider in flight now.
    pub fn sent(&self) -> usize {
        *self.sent.lock().expect("in-flight lock")
    }

    pub fn limit(&self) -> usize {
        self.current.load(Ordering::Relaxed)
    }

    pub fn default_limit(&self) -> usize {
        self.default
    }

    /// How many times a "slow down" halved the limit in this process.
    pub fn halvings(&self) -> u32 {
        self.halvings.load(Ordering::Relaxed)
    }

    /// The provider said "slow down": half as many in flight (never fewer than one). Returns the new limit.
    pub fn halve(&self) -> usize {
        self.clean.store(0, Ordering::Relaxed);
        self.halvings.fetch_add(1, Ordering::Relaxed);
        let before = self.current.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some((c / 2).max(1))).unwrap_or(1);
        (before / 2).max(1)
    }

    /// A page came back without a "slow down". After [`RAISE_AFTER`] in a row, one slot more (up
    /// to the default): returns the new limit when it changed.
    pub fn clean_page(&self) -> Option<usize> {
        if self.limit() >= self.default {
            return None;
        }
        let n = self.clean.fetch_add(1, Ordering::Relaxed) + 1;
        if n < RAISE_AFTER {
            return None;
        }
        self.clean.store(0, Ordering::Relaxed);
        let default = self.default;
        let raised = self.current.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| (c < default).then_some(c + 1)).ok().map(|before| before + 1);
        if raised.is_some() {
            self.left.notify_waiters();
        }
        raised
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_down_halves_and_clean_pages_raise_it_back_one_at_a_time() {
        let f = InFlight::new(32, 64);
        assert_eq!(f.limit(), 32);
        assert_eq!(f.halve(), 16);
        assert_eq!(f.halve(), 8);
        assert_eq!((0..RAISE_AFTER - 1).filter_map(|_| f.clean_page()).count(), 0);
        assert_eq!(f.clean_page(), Some(9));
        for _ in 0..100 * RAISE_AFTER {
            f.clean_page();
        }
        assert_eq!(f.limit(), 32, "never past the default");
        assert_eq!(f.halvings(), 2);
    }

    #[tokio::test]
    async fn the_limit_holds_across_every_caller_of_the_process() {
        let f = std::sync::Arc::new(InFlight::new(2, 64));
        let peak = std::sync::Arc::new(AtomicUsize::new(0));
        let calls = (0..12).map(|_| {
            let (f, peak) = (f.clone(), peak.clone());
            tokio::spawn(async move {
                let _slot = f.enter().await;
                peak.fetch_max(f.sent(), Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            })
        });
        for c in calls.collect::<Vec<_>>() {
            c.await.unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);
        assert_eq!(f.sent(), 0);
        f.halve();
        let one = f.enter().await;
        assert!(tokio::time::timeout(std::time::Duration::from_millis(20), f.enter()).await.is_err(), "halved to one: a second waits");
        drop(one);
    }

    #[test]
    fn the_global_cap_and_one_bound_it() {
        assert_eq!(InFlight::new(32, 4).limit(), 4);
        let one = InFlight::new(2, 64);
        assert_eq!(one.halve(), 1);
        assert_eq!(one.halve(), 1, "never below one");
    }
}
