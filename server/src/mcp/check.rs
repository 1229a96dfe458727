//! `vitals_check` and `vitals-mcp --check`: credentials and reachability, never a secret or a health value.
use crate::engine::{Engine, QueryRequest};
use crate::providers::CredentialKind;
use crate::time::unix_rfc3339 as rfc3339;
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
    // How this provider is connected: `oauth`, `api_key`, `session`, `import` or `none` (sample data only).
    pub connection: String,
    // `none`, `sandbox`, `personal_token`, `oauth`, `api_key` or `session`.
    pub credential: String,
    pub credential_source: String,
    // Length of the token in characters (never the token).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_length: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    // When a pasted key itself expires, when the user said (the provider then needs a new key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_expires_at: Option<String>,
    // Which OAuth app credentials would be used and where they came from (never the secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_credentials: Option<String>,
    // Where this provider's tokens are kept: the OS keyring or the 0600 file.
    pub token_store: String,
    /// The OAuth redirect to register with the provider, exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redirect: Option<String>,
    // Who answered one cheap read (yesterday's records of one collection): `api` (the provider's
    // API, or Oura's sandbox API), `sample_data` (the built-in sample, in process: nothing was
    // contacted), `not_connected` (an opt-in connection nobody connected: nothing was read, and that
    // is no failure), or `nobody` (it failed; `api_detail` says why and what to check). The tool's
    // description says it to the model.
    pub answered_by: String,
    // Whether the provider's API itself answered (false for built-in sample data).
    pub api_answered: bool,
    pub api_detail: String,
    /// Requests in flight to this provider, now and by default (halved by a "slow down"), the page cap and budget of one query.
    pub limits: LimitsReport,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LimitsReport {
    pub in_flight: usize,
    pub in_flight_default: usize,
    // Times this process halved it after the provider said "slow down".
    pub slowed_down: u32,
    // Pages one query may fetch (`VITALS_PAGE_CAP`), per query.
    pub page_cap_per_query: u32,
    // The provider's published request budget, kept by this server.
    pub budget: String,
}

impl CheckReport {
    /// Whether every provider answered (its API or its built-in sample): `--check`'s exit status.
    pub fn all_answered(&self) -> bool {
        self.providers.iter().all(|p| p.answered_by != NOBODY)
    }
}

const NOBODY: &str = "nobody";

/// Who answered one cheap read of `p` (yesterday's records of its probe collection), and how.
async fn probe(engine: &Engine, p: &dyn crate::providers::Provider) -> (&'static str, String) {
    let spec = p.spec();
    // `fresh`: the check is about the API answering now, not about what memory holds.
    let probe = QueryRequest { collection: spec.qualified(spec.probe), fresh: true, day: Some(yesterday(engine)), ..Default::default() };
    match engine.query(probe).await {
        // Built-in sample data answers in process: say that, and that nothing was contacted.
        Ok(a) if a.notices.truncated.is_none() && a.synthetic && p.offline().is_some() => (
            "sample_data",
            format!(
                "sample data answered: no {} account is connected, so the built-in sample data answered in process ({}: {} record(s)); {} was not contacted",
                spec.display,
                spec.qualified(spec.probe),
                a.count,
                spec.display
            ),
        ),
        Ok(a) if a.notices.truncated.is_none() => ("api", format!("{} answered ({} record(s), {} page(s))", spec.qualified(spec.probe), a.count, a.pages)),
        Ok(a) => (NOBODY, a.notices.truncated.map(|t| failed(spec.display, &t)).unwrap_or_default()),
        Err(e) => (NOBODY, e.to_string()),
    }
}

pub async fn check_report(engine: &Engine) -> CheckReport {
    let mut providers = Vec::new();
    for p in engine.providers() {
        let cred = p.credential().current();
        let spec = p.spec();
        let (by, detail) = if crate::providers::unasked(p.as_ref()) {
            (
                "not_connected",
                format!(
                    "not connected, and nothing was read: {} is an opt-in connection without sample data (vitals_connect provider={}, or `vitals-mcp auth {}`)",
                    spec.display, spec.name, spec.name
                ),
            )
        } else {
            probe(engine, p.as_ref()).await
        };
        providers.push(ProviderCheck {
            provider: spec.name.into(),
            state: cred.mode().as_str().into(),
            connection: spec.connection.kind().as_str().into(),
            credential: cred.kind.as_str().into(),
            // A file connection has no token: its bearer is a stand-in.
            token_length: cred.bearer.as_ref().filter(|_| !matches!(cred.kind, CredentialKind::Sandbox | CredentialKind::File)).map(|b| b.len()),
            scopes: cred.scopes.clone(),
            expires_at: rfc3339(cred.expires_at),
            key_expires_at: rfc3339(cred.key_expires_at),
            credential_source: cred.origin,
            app_credentials: spec.connection.oauth().map(|o| app_report(spec.name, &o.app_env, engine.config())),
            token_store: engine
                .home()
                .store()
                .map(|s| match engine.home() {
                    crate::accounts::Home::Local { .. } => [vec![s.describe()], crate::accounts::store::repairs()].concat().join("; "),
                    crate::accounts::Home::Tenant { .. } => crate::accounts::store::TENANT_FILE.into(),
                })
                .unwrap_or_else(|e| format!("none: {e}")),
            redirect: spec.connection.oauth().map(|o| {
                let (url, from) = o.redirect(engine.config());
                format!("{url} (from {from}; register exactly this URL at {})", o.portal)
            }),
            answered_by: by.into(),
            api_answered: by == "api",
            api_detail: detail,
            limits: engine
                .source(spec.name)
                .map(|s| LimitsReport {
                    in_flight: s.in_flight.limit(),
                    in_flight_default: s.in_flight.default_limit(),
                    slowed_down: s.in_flight.halvings(),
                    page_cap_per_query: engine.limits.page_cap,
                    budget: format!("{} requests per {} s", spec.rate_budget.requests, spec.rate_budget.per.as_secs()),
                })
                .expect("every listed provider has a source"),
        });
    }
    CheckReport { server: format!("vitals {}", env!("CARGO_PKG_VERSION")), providers }
}

/// A probe that did not complete, said as what it is: a check asks no range, so the query's
/// "continue from" advice does not apply.
fn failed(display: &str, t: &crate::engine::answer::Truncated) -> String {
    match t.cause.as_str() {
        crate::engine::cut::UNREACHABLE => {
            let why = t.reason.split(" could not be reached: ").nth(1).and_then(|r| r.split(". ").next()).unwrap_or(&t.reason);
            format!(
                "{display} could not be reached: {why}. Check this computer's network connection (and any proxy or firewall), \
                 and that the host named is {display}'s."
            )
        }
        _ => format!("{display} did not answer in full ({}): {}", t.cause, t.reason),
    }
}

fn app_report(provider: &str, env: &crate::accounts::AppEnv, config: &crate::config::Config) -> String {
    let Some(dir) = crate::accounts::default_dir(config) else {
        return "not set".into();
    };
    match crate::accounts::Settings::at(dir).app_credentials(provider, env, config) {
        Ok(Some(c)) => format!("client ID of {} characters from {}", c.client_id.chars().count(), c.origin(env)),
        Ok(None) => format!("not set: {} and {} are empty and the settings file has none", env.client_id, env.client_secret),
        Err(e) => format!("unreadable: {e}"),
    }
}

fn yesterday(engine: &Engine) -> String {
    let z = engine.zone();
    z.today().yesterday().map(|d| d.to_string()).unwrap_or_default()
}
