//! `vitals_sources` and the `vitals://sources` resource: what can be asked, as data. By default a
//! listing a model can afford at the start of every conversation (each connection's state and how
//! to connect it, each collection with a few words); the full entry of one provider or one
//! collection on request; the resource whole.
use crate::engine::Engine;
use crate::providers::Mode;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// The default answer of `vitals_sources`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    pub providers: Vec<Listed>,
    /// Where the rest is.
    pub more: String,
}

/// A provider in the listing. How it connects (`oauth`, `api_key`, …) is in its entry and in
/// `vitals_check`, not here: it does not help pick a collection.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listed {
    pub provider: String,
    /// `connected` (the user's own data), `sandbox` (sample data, not the user's) or `needs_credentials`.
    pub state: String,
    /// What stands before its data, when more than [`MORE`] says of a `sandbox` state: a problem,
    /// an opt-in, nothing to connect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect: Option<String>,
    /// Qualified collection name → what it holds.
    pub collections: Map<String, Value>,
}

/// Said once for every provider: what `sandbox` means and how to connect, where each provider
/// said it before (the listing is read at the start of every conversation; that vitals_today is
/// the cheaper read of a day is in vitals_query's and vitals_today's descriptions).
const MORE: &str = "sandbox: sample data until connected (vitals_connect {\"provider\": name}). vitals_sources {\"provider\" or \
\"collection\": name} gives fields, options, range kind, volume, retention.";

pub fn listing(engine: &Engine) -> Listing {
    let providers = engine
        .providers()
        .map(|p| {
            let cred = p.credential().current();
            let spec = p.spec();
            let call = format!("vitals_connect {{\"provider\": \"{}\"}}", spec.name);
            let explicit = spec.connection.session().is_some_and(|s| s.explicit);
            let connect = match (cred.mode(), &cred.problem) {
                _ if !spec.connection.connects() => Some("sample data only: there is no account to connect".into()),
                (_, Some(problem)) => Some(format!("{problem} ({call})")),
                // An opt-in connection says what it is in every state (Garmin Connect: unofficial).
                (Mode::Connected, None) if explicit => Some(format!("{}, opt-in: connected by the user's choice", spec.display)),
                (Mode::Connected, None) => None,
                (Mode::Sandbox, None) => None,
                (Mode::NeedsCredentials, None) if explicit => Some(format!("{}, opt-in: only if the user names it", spec.display)),
                (Mode::NeedsCredentials, None) => Some(format!("not connected: {call}")),
            };
            let usable = cred.mode() != Mode::NeedsCredentials;
            let collections = spec
                .collections
                .iter()
                .map(|c| {
                    let off = usable && p.unavailable(c, &cred).is_some();
                    let brief = if off { format!("{} (unavailable now: see entry)", c.brief) } else { c.brief.to_string() };
                    (spec.qualified(c.name), Value::from(brief))
                })
                .collect();
            Listed { provider: spec.name.into(), state: cred.mode().as_str().into(), connect, collections }
        })
        .collect();
    Listing { providers, more: MORE.into() }
}

/// The full entry of one provider, or of one collection (`namespace.collection`); an error names
/// the parameter and what exists.
pub fn entry(engine: &Engine, provider: Option<&str>, collection: Option<&str>) -> Result<SourcesReport, String> {
    let mut report = sources_report(engine);
    match (provider, collection) {
        (Some(_), Some(_)) => Err("`provider` and `collection`: send one of them (a collection's entry names its provider).".into()),
        (Some(name), None) => {
            let names: Vec<String> = report.providers.iter().map(|p| p.provider.clone()).collect();
            report.providers.retain(|p| p.provider == name.trim());
            match report.providers.is_empty() {
                true => Err(format!("`provider`: {:?} is not a provider here. Send one of: {}.", shorten(name), names.join(", "))),
                false => Ok(report),
            }
        }
        (None, Some(name)) => {
            let name = name.trim();
            for p in &mut report.providers {
                p.collections.retain(|c| c.name == name);
            }
            report.providers.retain(|p| !p.collections.is_empty());
            match report.providers.is_empty() {
                true => Err(format!("`collection`: {:?} is not a collection. Send a qualified name from vitals_sources, e.g. oura.sleep.", shorten(name))),
                false => Ok(report),
            }
        }
        (None, None) => Ok(report),
    }
}

fn shorten(s: &str) -> String {
    s.chars().take(60).collect()
}

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
    /// Which local date a record is under (the one day rule: where it happened); absent for a
    /// collection without days.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day: Option<String>,
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
                let formats: Vec<&str> = f.offered().iter().map(|x| x.as_str()).collect();
                format!("{} of each activity in {} (by id), via vitals_export", formats.join(", "), p.spec().qualified(f.listed_in))
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
                        day: (c.dating != crate::catalog::Dating::Undated).then(|| c.dating.says().to_string()),
                        fields: c.always.iter().chain(c.fields.iter().filter(|f| !c.always.contains(f))).map(|s| s.to_string()).collect(),
                        volume: c.volume.into(),
                        options: c
                            .options
                            .iter()
                            .map(|o| if o.text { format!("{}: {}", o.name, o.doc) } else { format!("{}: {} (default {})", o.name, o.doc, o.default) })
                            .collect(),
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
