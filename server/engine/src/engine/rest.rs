//! The rest of a long range whose density nothing knew yet. The first round of windows (at the
//! catalog's size, as many as go at once) shows it; once the oldest [`Later::at`] of them are
//! merged, the rest is sized by what they showed and joins the same windows, gate and cap. Its
//! windows then take the slots the first round's last pages free, rather than waiting for all of
//! them to be decoded (DECISIONS 138). The oldest windows' pages are decoded and placed first
//! (engine/fetch.rs `PAGE_WORK`), so the quarter that sizes the rest is in soon after its answers.
//!
//! Not the first windows back, whatever their age: a window that needs a second page comes back a
//! round trip later, so the first back are the sparse ones, and a rest sized by them is sized too
//! wide and spends its page cap on second pages (DECISIONS 140).
use super::density;
use super::plan::Plan;
use super::window::{split_from, Piece};
use super::Source;

/// The share of the first round that sizes the rest: a quarter of 32 windows of Oura's 19 hours
/// is six days of a ring's heart rate (DECISIONS 138).
const SIZED_BY: usize = 4;

/// What the rest of a range waits for, and what it is sized by.
pub(super) struct Later {
    /// The first round's windows: the first `first` of the query.
    pub first: usize,
    /// How many of them (oldest first) are enough to size the rest by.
    pub at: usize,
    /// Where the first round ends.
    pub from: jiff::Timestamp,
    /// The catalog's windows after the first round, replaced by the rest (for progress).
    pub rest_at_first: usize,
    /// The account's density, as remembered (`fetch::density_key`).
    pub key: String,
}

impl Later {
    /// The first `in_flight` windows of a range are the first round; the rest starts where they end.
    pub fn new(in_flight: usize, from: jiff::Timestamp, rest_at_first: usize, key: String) -> Later {
        Later { first: in_flight, at: (in_flight / SIZED_BY).max(1), from, rest_at_first, key }
    }
}

/// What the first round's oldest windows showed once merged.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Shown {
    /// The windows merged, and their pages.
    pub windows: usize,
    pub pages: u32,
    /// Samples and seconds of those that came back whole over a closed span.
    pub samples: usize,
    pub seconds: i64,
}

/// What the first round's `shown` windows, ending at `from`, say of the cap against the rest.
fn budget(plan: &Plan, shown: &Shown, pages_left: u32, from: jiff::Timestamp) -> density::Budget {
    let end = plan.range.map_or(from, |(_, e)| plan.zone.day_start(e.tomorrow().unwrap_or(e)).timestamp());
    density::Budget {
        pages_left,
        pages_per_window: f64::from(shown.pages) / shown.windows.max(1) as f64,
        // The first round's windows are the catalog's (nothing was known of the density).
        first_step: density::step(plan.collection.split, None).unwrap_or(density::StepSeconds(0)),
        rest: density::StepSeconds((end.as_second() - from.as_second()).max(0)),
    }
}

/// The rest of the range after the first round, sized by the density its windows showed
/// (remembered for later queries of the account) and, when the cap cannot hold the rest at that
/// size, by [`density::thrifty`]. `pages_left`: what the query's gate has left of the cap.
pub(super) fn plan_rest(plan: &Plan, source: &Source, later: &Later, shown: Shown, cap: u32, pages_left: u32) -> Vec<Piece> {
    let split_kind = plan.collection.split;
    source.densities.learn(later.key.clone(), shown.samples, shown.seconds);
    if let Some(first_step) = density::step(split_kind, None) {
        source.densities.learn_pages(&later.key, first_step, shown.pages, shown.windows);
    }
    let density = source.densities.get(&later.key);
    // A `Fill` split (the only kind planned later) always has a step.
    let Some(step) = density::step(split_kind, density) else {
        return vec![];
    };
    // The first round's windows still to merge take about as many pages each as those merged did.
    let per_window = f64::from(shown.pages) / shown.windows.max(1) as f64;
    let first_round = (per_window * later.first as f64).ceil() as u32;
    let pages_left = cap.saturating_sub(first_round).min(pages_left);
    let step = density::thrifty(split_kind, density, step, budget(plan, &shown, pages_left, later.from));
    let rest = split_from(plan, later.from, step);
    tracing::debug!(
        windows = rest.len(),
        step_s = step.0,
        sized_by = shown.windows,
        "the rest of {} sized by the density its first windows showed",
        plan.qualified
    );
    rest
}
