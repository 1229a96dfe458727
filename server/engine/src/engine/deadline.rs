//! When a tool call must have its answer ready. Claude Desktop drops a stdio call after about 60
//! seconds whatever progress is sent, and the person sees "No result received": an answer that
//! arrives later is lost whole. So every call gets a time budget (`VITALS_CALL_BUDGET_S`, 45 s by
//! default), and a read still going when it runs out stops there and answers what is complete,
//! with `continue_from` (engine/cut.rs, cause `time_budget`).
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// The default budget of one tool call: under the strictest host's 60 s, with room for the answer.
pub const DEFAULT_CALL_BUDGET: Duration = Duration::from_secs(45);

/// Kept back from the budget for shaping and sending the answer once fetching stops.
const ANSWER_RESERVE: Duration = Duration::from_millis(1_500);

#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    /// When the call started.
    start: Instant,
    budget: Duration,
}

impl Deadline {
    /// A budget starting now.
    pub fn after(budget: Duration) -> Deadline {
        Deadline { start: Instant::now(), budget }
    }

    /// The whole budget of the call.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// When fetching must stop so the answer is still in time: the budget less a small reserve
    /// (a tenth of it for a budget under 15 s). Waits are planned against it (engine/limiter.rs).
    pub fn fetch_by(&self) -> Instant {
        self.start + self.budget.saturating_sub(ANSWER_RESERVE.min(self.budget / 10))
    }

    /// Time left to fetch in.
    pub fn left(&self) -> Duration {
        self.fetch_by().saturating_duration_since(Instant::now())
    }

    pub fn passed(&self) -> bool {
        Instant::now() >= self.fetch_by()
    }

    /// `work`, unless the time to fetch runs out first (then None, and `work` is dropped).
    pub async fn within<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::time::timeout_at(self.fetch_by(), work).await.ok()
    }

    /// Seconds of the budget, for sentences.
    pub fn seconds(&self) -> u64 {
        self.budget.as_secs().max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn work_that_outlasts_the_budget_is_dropped_and_said_as_none() {
        let d = Deadline::after(Duration::from_secs(10));
        assert_eq!(d.within(async { 7 }).await, Some(7));
        let slow = d.within(tokio::time::sleep(Duration::from_secs(30))).await;
        assert!(slow.is_none());
        assert!(d.passed());
        assert_eq!(d.left(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn the_reserve_is_a_tenth_of_a_short_budget() {
        let d = Deadline::after(Duration::from_secs(2));
        assert_eq!(d.left(), Duration::from_millis(1_800));
        let long = Deadline::after(Duration::from_secs(45));
        assert_eq!(long.left(), Duration::from_millis(43_500));
    }
}
