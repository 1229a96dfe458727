//! What every query answer carries. Every flag the engine raises has a field here.
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    pub collection: String,
    /// True when the data is synthetic sample data, never the user's own.
    pub synthetic: bool,
    /// The local days this answer covers completely, both ends inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeOut>,
    /// Rows in `data` (records, or buckets when resampled).
    pub count: usize,
    // Pages fetched from the provider for this answer (windows served from memory fetch none).
    pub pages: u32,
    // `records` (one object each) or `csv` (one string) when asked; absent for the default,
    // `columns` (`{"columns": [...], "rows": [[...]]}`), whose shape says it.
    #[serde(skip_serializing_if = "is_columns")]
    pub format: String,
    /// Present when a series was resampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ResolutionOut>,
    pub data: Value,
    /// What a field's values mean where its name does not say: unit, scale, codes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legend: Option<std::collections::BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Notices::is_quiet")]
    pub notices: Notices,
    /// The records as they came, for a report that leaves some of this answer's days out to say
    /// the rules again of what it keeps (engine/today/fit.rs). Never sent.
    #[serde(skip)]
    pub basis: Option<super::rules::Basis>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ResolutionOut {
    // `1m`, `5m`, `15m`, `30m`, `1h` or `1d`.
    pub applied: String,
    pub method: String,
    /// Samples the buckets in `data` were made from (the sum of their `n`).
    pub raw_samples: usize,
    /// Buckets in `data`.
    pub rows: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RangeOut {
    pub start: String,
    pub end: String,
    pub tz: String,
}

/// What happened on the way; an absent key (or no `notices`) did not happen.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Notices {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncated>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagination_cycle: Option<String>,
    // The provider's pages came in another order than expected (the catalog needs correcting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_order: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limited: Option<RateLimited>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retried: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undated_kept: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored_fields: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields_split: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range_defaulted: Option<String>,
    /// The asked end was after today: the answer stops at today (nothing later has been measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_today: Option<String>,
    /// Today's record holds the day so far (its totals still grow until the day is over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty: Option<String>,
    /// The range began before the oldest day the provider serves: answered from that day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyond_retention: Option<BeyondRetention>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub large_response: Option<LargeResponse>,
    /// The raw series would not fit `max_chars`: resampled, and how to get it raw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution_auto: Option<ResolutionAuto>,
    /// Every field would not fit `max_chars`: every record of `range` in its headline fields (as vitals_today shows them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
    // Series inside documents were compacted (to fit `max_chars`, or as `resolution` asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compacted: Option<Compacted>,
    // Some windows came from this process's memory cache rather than the provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached: Option<Cached>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_cleared: Option<String>,
    // The access token had expired: it was refreshed (and saved) and the pages were fetched again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_refreshed: Option<String>,
    // We slowed down to stay inside the provider's published request budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paced: Option<String>,
    /// Samples that are no reading (no skin contact), left out of rows and buckets: counted by reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<ExcludedSamples>,
    /// What the provider's own rules did to the records in `data` (groups merged into a weigh-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<String>>,
    /// Rows whose flag changes how they read, counted (`3 row(s) ambiguous=true: …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flagged: Option<String>,
    /// Only the most recent records of the range were kept, on purpose (vitals_today's latest weigh-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_last: Option<String>,
    // Only the samples within a span of instants were kept, as asked (a chart's zoom).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    // An account was connected during this call (the collection needed one), and this answer is its data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account_connected: Option<String>,
    /// What the waits of `paced` and `rate_limited` were, as facts, for a report that says them
    /// once for several answers (engine/today/said.rs). Never sent.
    #[serde(skip)]
    pub waits: Waits,
}

fn is_columns(format: &str) -> bool {
    format == "columns"
}

impl Notices {
    /// Nothing to say: the answer carries no `notices` at all (an absent key did not happen).
    pub fn is_quiet(&self) -> bool {
        serde_json::to_value(self).is_ok_and(|v| v.as_object().is_some_and(|m| m.is_empty()))
    }
}

/// The 429s waited out and the time waited, by cause, as measured.
#[derive(Debug, Default, Clone, Copy)]
pub struct Waits {
    pub limited: super::stats::Limited,
    pub waited: super::limiter::Waited,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExcludedSamples {
    /// Samples left out, by reason (`no_contact`: 12).
    #[serde(flatten)]
    pub counts: std::collections::BTreeMap<String, usize>,
    pub note: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BeyondRetention {
    // The oldest local day the provider still serves (the answer starts here).
    pub first_reachable: String,
    // The start that was asked for.
    pub asked_start: String,
    pub unreachable_days: u32,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ResolutionAuto {
    pub chosen: String,
    pub raw_characters: usize,
    pub raw_samples: usize,
    pub max_chars: usize,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Compacted {
    pub resolution: String,
    pub fields: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_characters: Option<usize>,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Cached {
    // Windows served from memory, of `windows` in all.
    pub windows_cached: u32,
    pub windows: u32,
    // Age in seconds of the oldest cached window used.
    pub oldest_seconds: u64,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Truncated {
    pub reason: String,
    /// Why, in one word: `page_cap`, `provider_failing`, `unreachable` (the network), `rate_limited`, `pagination_cycle`,
    /// `time_budget` (the call had to answer before the client gives up) or `max_chars`.
    pub cause: String,
    /// Call again with `start` = this day for the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_from: Option<String>,
    /// The asked days not in this answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<DaysOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DaysOut {
    pub start: String,
    pub end: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RateLimited {
    pub retries: u32,
    pub waited_seconds: f64,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LargeResponse {
    pub characters: usize,
    // Heaviest fields with their share of the characters, heaviest first.
    pub heaviest_fields: Vec<FieldWeight>,
    pub advice: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FieldWeight {
    pub field: String,
    pub percent: u32,
}
