//! What every query answer carries. Every flag the engine raises has a field here.
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    /// Qualified collection name, e.g. `oura.daily_sleep`.
    pub collection: String,
    /// True when the data is synthetic sample data, never the user's own.
    pub synthetic: bool,
    /// The local days this answer covers completely, both ends inclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeOut>,
    /// Number of records in `data`.
    pub count: usize,
    /// Pages fetched from the provider.
    pub pages: u32,
    /// `json` (array of records) or `csv` (one string).
    pub format: String,
    pub data: Value,
    pub notices: Notices,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RangeOut {
    pub start: String,
    pub end: String,
    pub tz: String,
}

/// Everything that happened on the way. Absent keys mean "did not happen".
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Notices {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncated>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagination_cycle: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limited: Option<RateLimited>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retried: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discarded_out_of_range: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undated_kept: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored_fields: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields_split: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range_defaulted: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub large_response: Option<LargeResponse>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Truncated {
    pub reason: String,
    /// The first local day not (completely) in this answer: call again with `start` = this day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_from: Option<String>,
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
    /// Heaviest fields with their share of the characters, heaviest first.
    pub heaviest_fields: Vec<FieldWeight>,
    pub advice: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FieldWeight {
    pub field: String,
    pub percent: u32,
}
