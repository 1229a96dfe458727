//! Statistics over daily metrics, with their method: `vitals_compare` (two periods), `vitals_relate`
//! (two metrics), `vitals_trend` (one metric's drift); and `vitals_daily`, the days of every provider
//! side by side. Provider-neutral like the engine: a metric
//! is `provider.collection.field`, its day's value is chosen by the rule the collection declares in
//! the catalog ([`crate::catalog::DailyRule`]), and its days come from one complete fetch through
//! the engine; a cut fetch is refused, never analysed.
//!
//! - [`days`]: one value per local day and the statistics the methods share;
//! - [`compare`], [`relate`], [`trend`]: the methods, pure functions of days (tested by simulation
//!   in `server/engine/tests/analysis_simulation.rs` and by hand-computed cases here);
//! - [`metric`]: a metric's name read against the catalog;
//! - [`daily`]: from an engine answer to one value a day, with what was left out and why;
//! - [`ask`]: the three questions, end to end (dates checked, fetched, judged, worded);
//! - [`view`]: `vitals_daily`, one row a day of normalised columns across providers, each value
//!   with its provenance, two providers' values side by side by the catalog's rule.
pub mod ask;
pub mod compare;
pub mod daily;
pub mod days;
pub mod groups;
pub mod metric;
pub mod relate;
pub mod trend;
pub mod view;

use schemars::JsonSchema;
use serde::Serialize;

/// The verdict, as the tool's description says it (`within_noise` is never "no change").
// `vitals_compare` and `vitals_relate` answer the first three, `vitals_trend` the last four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    // The difference (or the relation) is larger than the metric's own noise produces by chance.
    OutsideNoise,
    // Not evidence of a difference or a relation; never evidence that there is none.
    WithinNoise,
    // The data is too short, too gappy or too constant to judge; `why` says exactly what is missing.
    CannotTell,
    Rising,
    Falling,
    // Not evidence of a trend; never evidence that there is none.
    FlatWithinNoise,
}
