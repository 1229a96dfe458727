//! The one provider-neutral query engine: validate → plan the window → fetch every page → trim →
//! project → say everything that happened. Nothing here names a provider.
pub mod answer;
pub mod fetch;
pub mod plan;
pub mod shape;

pub use answer::{Answer, Notices};
pub use plan::QueryRequest;

use crate::http::Http;
use crate::providers::Provider;
use std::sync::Arc;

/// Bad input or a refusal, in words that name the parameter and what to send instead.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Auth(String),
    #[error("{0}")]
    Upstream(String),
}

/// Limits that keep one query bounded. Defaults come from the environment so tests can shrink them.
#[derive(Clone, Debug)]
pub struct Limits {
    pub page_cap: u32,
    pub transient_retries: u32,
    pub backoff_base: std::time::Duration,
    pub rate_wait_budget: std::time::Duration,
}

impl Limits {
    pub fn from_env() -> Limits {
        let num = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
        Limits {
            page_cap: num("VITALS_PAGE_CAP", 400) as u32,
            transient_retries: 3,
            backoff_base: std::time::Duration::from_millis(num("VITALS_BACKOFF_MS", 250)),
            rate_wait_budget: std::time::Duration::from_secs(num("VITALS_RATE_WAIT_BUDGET_S", 120)),
        }
    }
}

pub struct Engine {
    pub providers: Vec<Arc<dyn Provider>>,
    pub http: Http,
    pub limits: Limits,
}

impl Engine {
    pub fn from_env() -> Engine {
        Engine { providers: crate::providers::all_from_env(), http: Http::new(), limits: Limits::from_env() }
    }

    /// All qualified collection names (`oura.daily_sleep`).
    pub fn collection_names(&self) -> Vec<String> {
        self.providers
            .iter()
            .flat_map(|p| p.spec().collections.iter().map(move |c| format!("{}.{}", p.spec().name, c.name)))
            .collect()
    }

    pub fn provider(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.providers.iter().find(|p| p.spec().name == name)
    }

    pub async fn query(&self, req: QueryRequest) -> Result<Answer, QueryError> {
        let plan = plan::plan(self, req)?;
        let fetched = fetch::fetch_all(self, &plan).await?;
        Ok(shape::shape(&plan, fetched))
    }
}
