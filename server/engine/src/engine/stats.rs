//! The counts of what fetching did, one type for a window and for a whole query: a window fills
//! one, the query merges them, and the notices are said from the merged one.
use super::limiter::{Waited, Word};
use std::time::Duration;

/// The 429s a read waited out and asked again after, by what the provider said of the wait.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Limited {
    /// With `Retry-After`.
    pub retry_after: Asked,
    /// Without it, the rate headers saying when the budget resets.
    pub reset: Asked,
    /// Saying neither: vitals chose the wait.
    pub nothing: Asked,
}

/// How many 429s said a wait one way, and the longest wait.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Asked {
    pub times: u32,
    pub longest: Duration,
}

impl Limited {
    /// One more 429, whose wait was `said` (or chosen) as `word` says.
    pub fn add(&mut self, word: Word, said: Duration) {
        let a = match word {
            Word::RetryAfter => &mut self.retry_after,
            Word::Reset => &mut self.reset,
            Word::Nothing => &mut self.nothing,
        };
        a.times += 1;
        a.longest = a.longest.max(said);
    }

    pub fn merge(&mut self, o: &Limited) {
        for (a, b) in [(&mut self.retry_after, o.retry_after), (&mut self.reset, o.reset), (&mut self.nothing, o.nothing)] {
            a.times += b.times;
            a.longest = a.longest.max(b.longest);
        }
    }

    /// 429s asked again after, in all.
    pub fn times(&self) -> u32 {
        self.retry_after.times + self.reset.times + self.nothing.times
    }
}

/// What one window did, or a run of windows merged.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Pages fetched from the provider (cached windows fetch none).
    pub pages: u32,
    pub requests: u32,
    /// The 429s waited out and asked again after.
    pub limited: Limited,
    pub transient_retries: u32,
    /// Time waited before requests could be sent, by cause, as measured; merged cause by cause
    /// as the longest, since windows wait together.
    pub waited: Waited,
    /// An expired access token was renewed on the way.
    pub credential_refreshed: bool,
    /// A page token came back a second time.
    pub cycle: bool,
    /// Windows whose pages came in another order than the catalog says.
    pub order_disagreed: u32,
    /// Records upstream sent from outside the asked days (the padding), dropped.
    pub discarded_out_of_range: usize,
    /// Records kept although their day cannot be told.
    pub undated_kept: usize,
    /// Windows served from the memory cache, the pages they took when fetched, the oldest one's age.
    pub cached_windows: u32,
    pub cached_pages: u32,
    pub cache_age: Option<Duration>,
}

impl Stats {
    /// Add a window's requests: every window counts, the ones after a gap too (they were sent).
    pub fn add_sent(&mut self, w: &Stats) {
        self.pages += w.pages;
        self.requests += w.requests;
        self.limited.merge(&w.limited);
        self.transient_retries += w.transient_retries;
        self.waited.beside(w.waited);
        self.credential_refreshed |= w.credential_refreshed;
    }

    /// Add what a window put in the answer: only windows up to the first gap do.
    pub fn add_kept(&mut self, w: &Stats) {
        self.cycle |= w.cycle;
        self.order_disagreed += w.order_disagreed;
        self.discarded_out_of_range += w.discarded_out_of_range;
        self.undated_kept += w.undated_kept;
        self.cached_windows += w.cached_windows;
        self.cached_pages += w.cached_pages;
        self.cache_age = self.cache_age.max(w.cache_age);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_merge_as_the_longest_and_counts_add_up() {
        let w = |s: u64, pages| Stats {
            pages,
            waited: Waited { refused: Duration::from_secs(s), ..Default::default() },
            cached_windows: 1,
            cache_age: Some(Duration::from_secs(s)),
            ..Default::default()
        };
        let mut all = Stats::default();
        for x in [w(3, 2), w(5, 1)] {
            all.add_sent(&x);
            all.add_kept(&x);
        }
        assert_eq!((all.pages, all.waited.refused.as_secs(), all.cached_windows, all.cache_age), (3, 5, 2, Some(Duration::from_secs(5))));
    }
}
