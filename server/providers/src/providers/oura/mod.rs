//! Oura API v2: credentials, URLs, parameter names and the envelope. The collections are in
//! [`catalog`]; the built-in sample person, answered in Oura's own format, in [`sample`].
pub mod catalog;
pub mod sample;

use super::credential::StoredCredential;
use super::{Credential, CredentialKind, CredentialSource, Mode, Page, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use crate::catalog::{CollectionSpec, ProviderSpec, RangeKind};
use serde_json::Value;

pub const DEFAULT_BASE: &str = "https://api.ouraring.com";

/// `VITALS_OURA_SANDBOX=official` reads Oura's own online sandbox instead of the built-in sample.
pub const SANDBOX_ENV: &str = "VITALS_OURA_SANDBOX";

/// The built-in sample, answered in process.
pub struct Sample {
    person: sample::Person,
}

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, params) = req.route();
        let a = sample::Api { person: &self.person, now: jiff::Timestamp::now() }.answer(&path, &params);
        crate::http::Reply { status: a.status, retry_after: None, quota: None, body: Ok(a.body) }
    }
}

pub struct Oura {
    base: String,
    /// `OURA_PAT`, else the saved OAuth login, else sample data.
    cred: StoredCredential,
    /// The built-in sample person; None when `VITALS_OURA_SANDBOX=official` asks for Oura's own sandbox.
    sample: Option<Sample>,
}

impl Oura {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> Oura {
        let base = config.url("VITALS_OURA_BASE_URL", DEFAULT_BASE);
        let official = config.var(SANDBOX_ENV).is_some_and(|v| v.eq_ignore_ascii_case("official"));
        let label = if official { "Oura's sandbox" } else { "built-in sample data" };
        let cred = StoredCredential::in_home(&catalog::OURA, Some("OURA_PAT"), Some(label), home, config);
        let zone = config.zone();
        let sample = (!official).then(|| Sample { person: sample::Person { tz: zone.tz } });
        Oura { base, cred, sample }
    }
}

impl Provider for Oura {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::OURA
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(
        &self,
        c: &CollectionSpec,
        w: &Window,
        fields: Option<&[String]>,
        next_token: Option<&str>,
        cred: &Credential,
        _options: &super::Options,
    ) -> Request {
        let prefix = if cred.mode() == Mode::Sandbox { "v2/sandbox/usercollection" } else { "v2/usercollection" };
        let mut p: Vec<(String, String)> = Vec::new();
        match (w, c.range) {
            (Window::Dates { start, end }, _) => {
                p.push(("start_date".into(), start.to_string()));
                p.push(("end_date".into(), end.to_string()));
            }
            (Window::Instants { start, end }, _) => {
                p.push(("start_datetime".into(), start.clone()));
                p.push(("end_datetime".into(), end.clone()));
            }
            (Window::Latest, RangeKind::DateTime) => p.push(("latest".into(), "true".into())),
            _ => {}
        }
        if let Some(f) = fields.filter(|_| c.projectable) {
            p.push(("fields".into(), f.join(",")));
        }
        if let Some(t) = next_token {
            p.push(("next_token".into(), t.to_string()));
        }
        Request { method: ReadMethod::Get, url: format!("{}/{prefix}/{}", self.base, c.path), params: p, headers: &[] }
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str, _at: &super::PageAt) -> Result<Page, PageError> {
        let mut v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("Oura sent a body that is not complete JSON ({e})")))?;
        if !c.enveloped {
            return Ok(Page { records: vec![v], next_token: None });
        }
        // Taken, not cloned: a heart-rate page is 1,000 records.
        let records = match v.get_mut("data").map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => return Err(PageError::Transient("Oura's answer has no `data` array".into())),
        };
        let next_token = v.get("next_token").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
        Ok(Page { records, next_token })
    }
    /// A series' records are the `data` array as it is: its samples are read in place.
    fn series_page(&self, c: &CollectionSpec, body: &str, _at: &super::PageAt) -> Option<super::SeriesPage> {
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            data: Vec<&'a serde_json::value::RawValue>,
            next_token: Option<String>,
        }
        if c.series.is_none() || !c.enveloped {
            return None;
        }
        let e: Envelope = serde_json::from_str(body).ok()?;
        let spans = e.data.iter().map(|r| super::span_in(body, r.get())).collect::<Option<Vec<_>>>()?;
        Some(super::SeriesPage { spans, next_token: e.next_token.filter(|t| !t.is_empty()) })
    }
    fn auth_help(&self, status: u16, cred: &Credential) -> String {
        match status {
            401 if cred.kind == CredentialKind::OAuth => "Oura rejected the connected account's token (HTTP 401) even after a refresh: the login \
                was revoked or expired. Connect again: vitals_connect with provider=oura and again=true, or `vitals-mcp auth oura`."
                .into(),
            401 => "Oura rejected the credential (HTTP 401: expired, malformed or revoked). Create a new personal access token \
                at https://cloud.ouraring.com/personal-access-tokens and set it as OURA_PAT, or unset OURA_PAT to use the sandbox."
                .into(),
            _ => "Oura refused the request (HTTP 403). Oura uses 403 for three causes it does not tell apart: the Oura membership has \
                lapsed, the token lacks the scope for this collection, or the request had no User-Agent (vitals always sends one). \
                Check the membership in the Oura app and that the token grants this data type."
                .into(),
        }
    }
    fn unavailable(&self, c: &CollectionSpec, cred: &Credential) -> Option<String> {
        (cred.mode() == Mode::Sandbox && !c.in_sandbox).then(|| {
            format!(
                "oura.{} is not available in sandbox mode: the sample data has no profile. It needs the user's Oura \
                 account connected (vitals_connect with provider=oura, or `vitals-mcp auth oura`).",
                c.name
            )
        })
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        self.cred.renewer(refused)
    }
    fn synthetic_notice(&self) -> String {
        let whose = match self.sample {
            Some(_) => "vitals' built-in sample of Oura data (synthetic, in Oura's own format, no network)",
            None => "synthetic data from Oura's online sandbox",
        };
        format!(
            "SAMPLE DATA: this is {whose}, not the user's own. No Oura account is connected. Say so when you use it. To read \
             the user's own data, connect the account: vitals_connect with provider=oura."
        )
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        self.sample.as_ref().map(|s| s as &dyn SampleApi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> super::super::PageAt {
        super::super::PageAt {
            zone: crate::time::Zone::parse("+00:00").unwrap(),
            token: None,
            options: Default::default(),
            record: None,
            window: Window::Unbounded,
        }
    }

    /// `series_page` keeps its contract: each span read as JSON is the record `parse_page` gives,
    /// in order, with the same `next_token`; a body it cannot read is left to `parse_page`.
    #[test]
    fn a_series_page_read_in_place_is_the_page_parse_page_reads() {
        let config = crate::config::Config::from_pairs([("VITALS_TZ", "UTC")]);
        let oura = Oura::in_home(&config, &crate::accounts::Home::local(std::sync::Arc::new(config.clone())));
        let hr = catalog::OURA.collection("heartrate").unwrap();
        for body in [
            r#"{"data":[{"bpm":61,"source":"awake","timestamp":"2026-06-01T12:00:00+00:00"}, {"bpm":62.5,"source":"rest","timestamp":"2026-06-01T12:00:05+00:00"}],"next_token":"abc"}"#,
            r#"{"next_token":null,"data":[]}"#,
            r#"{"data":[{"bpm":60,"timestamp":"2026-06-01T12:00:00+00:00","source":"caf\u00e9"}],"next_token":""}"#,
            r#"{"data":[1,"two",[3]]}"#,
        ] {
            let page = oura.series_page(hr, body, &at()).expect(body);
            let parsed = oura.parse_page(hr, body, &at()).unwrap();
            let read: Vec<Value> = page.spans.iter().map(|s| serde_json::from_str(&body[s.clone()]).unwrap()).collect();
            assert_eq!(read, parsed.records, "{body}");
            assert_eq!(page.next_token, parsed.next_token, "{body}");
        }
        for body in [r#"{"data":[{"bpm":60}"#, r#"{"data":{}}"#, r#"{"data":[],"next_token":5}"#, "<html>"] {
            assert!(oura.series_page(hr, body, &at()).is_none(), "{body}");
        }
        let sleep = catalog::OURA.collection("sleep").unwrap();
        assert!(oura.series_page(sleep, r#"{"data":[],"next_token":null}"#, &at()).is_none(), "documents are decoded");
    }
}
