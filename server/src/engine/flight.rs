//! How many requests one provider has in flight at once: a property of the provider (its catalog
//! says how many its budget allows, and why), adapted while the process runs. A "slow down" (429,
//! Withings' 601) halves it for every query from then on, since the provider has told us where its
//! tolerance is; a run of clean pages earns one slot back, up to the provider's default. A global
//! cap (`VITALS_CONCURRENCY`) sits over all of them.
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Clean pages in a row that earn one slot back.
pub const RAISE_AFTER: u32 = 10;

#[derive(Debug)]
pub struct InFlight {
    default: usize,
    current: AtomicUsize,
    clean: AtomicU32,
    halvings: AtomicU32,
}

impl InFlight {
    /// The provider's default, under the global cap (at least one).
    pub fn new(provider_default: usize, cap: usize) -> InFlight {
        let default = provider_default.min(cap).max(1);
        InFlight { default, current: AtomicUsize::new(default), clean: AtomicU32::new(0), halvings: AtomicU32::new(0) }
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
        self.current.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| (c < default).then_some(c + 1)).ok().map(|before| before + 1)
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

    #[test]
    fn the_global_cap_and_one_bound_it() {
        assert_eq!(InFlight::new(32, 4).limit(), 4);
        let one = InFlight::new(2, 64);
        assert_eq!(one.halve(), 1);
        assert_eq!(one.halve(), 1, "never below one");
    }
}
