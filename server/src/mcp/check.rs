//! `vitals_check` and `vitals-mcp --check`: credentials and reachability, never a secret or a health value.
use crate::engine::{Engine, QueryRequest};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Serialize, JsonSchema)]
pub struct CheckReport {
    pub server: String,
    pub providers: Vec<ProviderCheck>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProviderCheck {
    pub provider: String,
    pub state: String,
    /// `none`, `sandbox`, `personal_token` or `oauth`.
    pub credential: String,
    pub credential_source: String,
    /// Length of the token in characters (never the token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_length: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Whether one cheap request (yesterday's records of one collection) succeeded.
    pub api_answered: bool,
    pub api_detail: String,
}

pub async fn check_report(engine: &Engine) -> CheckReport {
    let mut providers = Vec::new();
    for p in engine.providers() {
        let cred = p.credential();
        let spec = p.spec();
        // `fresh`: the check is about the API answering now, not about what memory holds.
        let probe = QueryRequest { collection: format!("{}.{}", spec.name, spec.probe), fresh: true, ..Default::default() };
        let (ok, detail) = match engine.query(QueryRequest { day: Some(yesterday()), ..probe }).await {
            Ok(a) if a.notices.truncated.is_none() => (true, format!("{}.{} answered ({} record(s), {} page(s))", spec.name, spec.probe, a.count, a.pages)),
            Ok(a) => (false, a.notices.truncated.map(|t| t.reason).unwrap_or_default()),
            Err(e) => (false, e.to_string()),
        };
        providers.push(ProviderCheck {
            provider: spec.name.into(),
            state: p.mode().as_str().into(),
            credential: cred.kind().into(),
            credential_source: cred.origin(),
            token_length: (cred.kind() != "sandbox").then(|| cred.bearer().map(|b| b.len())).flatten(),
            scopes: cred.scopes(),
            expires_at: cred.expires_at(),
            api_answered: ok,
            api_detail: detail,
        });
    }
    CheckReport { server: format!("vitals {}", env!("CARGO_PKG_VERSION")), providers }
}

fn yesterday() -> String {
    let z = crate::time::Zone::default_zone();
    z.today().yesterday().map(|d| d.to_string()).unwrap_or_default()
}
