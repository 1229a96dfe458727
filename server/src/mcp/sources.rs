//! `vitals_sources` and the `vitals://sources` resource: what can be asked, as data.
use crate::engine::Engine;
use crate::providers::Mode;
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Serialize, JsonSchema)]
pub struct SourcesReport {
    pub providers: Vec<ProviderOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProviderOut {
    pub provider: String,
    /// `sandbox`, `connected` or `needs_credentials`.
    pub state: String,
    /// How it is connected: `oauth`, `api_key`, `session`, `import` or `none` (sample data only).
    pub connection: String,
    /// Activity files `vitals_export` can write for this provider (`fit`, `tcx`, `gpx`), and where their ids are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<String>,
    pub collections: Vec<CollectionOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CollectionOut {
    /// Qualified name to pass as `collection`.
    pub name: String,
    pub summary: String,
    /// `date`, `datetime` or `none`.
    pub range: String,
    pub latest: bool,
    pub fields: Vec<String>,
    pub volume: String,
    /// Options of this collection alone, for `vitals_query`'s `options` (name: what it does, default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// How many days back (today included) the provider serves this collection at all; older days are
    /// unreachable (an answer says `beyond_retention`). Absent: as far back as the account goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention: Option<String>,
    /// False when the current mode cannot serve it (with the reason).
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
}

pub fn sources_report(engine: &Engine) -> SourcesReport {
    let providers = engine
        .providers()
        .map(|p| (p, p.credential().current()))
        .map(|(p, cred)| ProviderOut {
            provider: p.spec().name.into(),
            state: cred.mode().as_str().into(),
            connection: p.spec().connection.kind().as_str().into(),
            files: p.spec().files.map(|f| {
                let formats: Vec<&str> = f.formats.iter().map(|x| x.as_str()).collect();
                format!("{} of each activity in {} (by its id), with vitals_export", formats.join(", "), p.spec().qualified(f.listed_in))
            }),
            collections: p
                .spec()
                .collections
                .iter()
                .map(|c| {
                    let why = match cred.mode() {
                        Mode::NeedsCredentials => {
                            Some(cred.problem.clone().unwrap_or_else(|| format!("needs the user's {} account connected (vitals_connect)", p.spec().display)))
                        }
                        _ => p.unavailable(c, &cred),
                    };
                    CollectionOut {
                        name: p.spec().qualified(c.name),
                        summary: c.summary.into(),
                        range: c.range.as_str().into(),
                        latest: c.latest,
                        fields: c.always.iter().chain(c.fields.iter().filter(|f| !c.always.contains(f))).map(|s| s.to_string()).collect(),
                        volume: c.volume.into(),
                        options: c.options.iter().map(|o| format!("{}: {} (default {})", o.name, o.doc, o.default)).collect(),
                        retention_days: c.retention.map(|r| r.days),
                        retention: c.retention.map(|r| r.why.to_string()),
                        available: why.is_none(),
                        unavailable_reason: why,
                    }
                })
                .collect(),
        })
        .collect();
    SourcesReport { providers }
}
