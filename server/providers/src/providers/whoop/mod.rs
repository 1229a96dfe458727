//! WHOOP API v2 (reference `whoop/README.md`): OAuth with rotating refresh tokens, collections
//! paged by `nextToken` and filtered by instants, and built-in sample data instead of a sandbox
//! (WHOOP has none). The collections are in [`catalog`], the records as `vitals` answers them in
//! [`decode`], the sample member and the in-process API in [`sample`].
//!
//! A recovery has no times and a cycle's day is its sleep's, so a window of either first reads
//! the sleeps of the same window (its first pages, which yield no records of their own) and then
//! its own pages, dated from those sleeps.
pub mod catalog;
pub mod decode;
pub mod sample;

use super::credential::StoredCredential;
use super::{Credential, CredentialKind, CredentialSource, Finished, Options, Page, PageAt, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use crate::catalog::{CollectionSpec, ProviderSpec};
use jiff::civil::Date;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

pub const DEFAULT_BASE: &str = "https://api.prod.whoop.com/developer";

/// A page token of a recovery or cycle window: the sleeps' pages first, then its own.
const SLEEPS: &str = "sleeps:";
const OWN: &str = "own:";

struct Sample {
    person: sample::Person,
}

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, params) = req.route();
        let a = sample::Api { person: &self.person, now: jiff::Timestamp::now(), quirks: Default::default() }.answer(&path, &params);
        crate::http::Reply { status: a.status, retry_after: None, quota: None, body: Ok(a.body) }
    }
}

/// What the sleeps read so far say, for dating recoveries and cycles: a sleep's morning by its
/// id, a cycle's by its id (from its main sleep). Identifiers and dates only, in memory.
#[derive(Default)]
struct Mornings {
    by_sleep: HashMap<String, Date>,
    by_cycle: HashMap<String, Date>,
}

pub struct Whoop {
    base: String,
    /// The saved login, else the built-in sample.
    cred: StoredCredential,
    sample: Sample,
    mornings: Mutex<Mornings>,
}

impl Whoop {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> Whoop {
        let base = config.url("VITALS_WHOOP_BASE_URL", DEFAULT_BASE);
        let cred = StoredCredential::in_home(&catalog::WHOOP, None, Some("built-in sample data"), home, config);
        let zone = config.zone();
        Whoop { base, cred, sample: Sample { person: sample::Person { tz: zone.tz } }, mornings: Default::default() }
    }

    fn remember(&self, sleeps: &[Value]) {
        let mut m = self.mornings.lock().unwrap_or_else(|p| p.into_inner());
        for s in sleeps {
            let (Some(id), Some(day)) = (s.get("id").and_then(Value::as_str), decode::day_of(s, "end")) else { continue };
            m.by_sleep.insert(id.to_string(), day);
            if !s.get("nap").and_then(Value::as_bool).unwrap_or(false) {
                if let Some(c) = s.get("cycle_id").filter(|c| !c.is_null()) {
                    m.by_cycle.insert(c.to_string(), day);
                }
            }
        }
    }

    fn morning_of_sleep(&self, r: &Value) -> Option<Date> {
        let id = r.get("sleep_id").and_then(Value::as_str)?;
        self.mornings.lock().unwrap_or_else(|p| p.into_inner()).by_sleep.get(id).copied()
    }

    fn morning_of_cycle(&self, r: &Value) -> Option<Date> {
        let id = r.get("id").filter(|c| !c.is_null())?.to_string();
        self.mornings.lock().unwrap_or_else(|p| p.into_inner()).by_cycle.get(&id).copied()
    }
}

/// Whether a window of `c` reads the sleeps first.
fn dated_by_sleeps(c: &CollectionSpec) -> bool {
    matches!(c.name, "recovery" | "cycle")
}

impl Provider for Whoop {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::WHOOP
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _fields: Option<&[String]>, next: Option<&str>, _cred: &Credential, _options: &Options) -> Request {
        // Which route, and which WHOOP page token, this page is.
        let (path, token) = match next {
            _ if !dated_by_sleeps(c) => (c.path, next),
            None => ("v2/activity/sleep", None),
            Some(t) if t.starts_with(SLEEPS) => ("v2/activity/sleep", t.strip_prefix(SLEEPS)),
            Some(t) => (c.path, t.strip_prefix(OWN)),
        };
        let mut p: Vec<(String, String)> = vec![];
        if let Window::Dates { start, end } = w {
            // The engine padded the days by two on each side: UTC midnights cover every offset.
            p.push(("start".into(), decode::utc_midnight(*start)));
            p.push(("end".into(), decode::utc_midnight_after(*end)));
        }
        if c.enveloped {
            p.push(("limit".into(), sample::MAX_LIMIT.to_string()));
        }
        if let Some(t) = token.filter(|t| !t.is_empty()) {
            p.push(("nextToken".into(), t.to_string()));
        }
        Request { method: ReadMethod::Get, url: format!("{}/{path}", self.base), params: p, headers: &[] }
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str, at: &PageAt) -> Result<Page, PageError> {
        if !c.enveloped {
            let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("WHOOP sent a body that is not complete JSON ({e})")))?;
            return Ok(Page { records: vec![v], next_token: None });
        }
        let (records, next) = decode::envelope(body)?;
        let sleeps_phase = dated_by_sleeps(c) && at.token.as_deref().is_none_or(|t| t.starts_with(SLEEPS));
        if sleeps_phase {
            self.remember(&records);
            let next_token = Some(match next {
                Some(t) => format!("{SLEEPS}{t}"),
                None => OWN.to_string(),
            });
            return Ok(Page { records: vec![], next_token });
        }
        let records = match c.name {
            "sleep" => records.iter().map(decode::sleep).collect(),
            "workout" => records.iter().map(decode::workout).collect(),
            "recovery" => records.iter().map(|r| decode::recovery(r, self.morning_of_sleep(r))).collect(),
            "cycle" => records.iter().map(|r| decode::cycle(r, self.morning_of_cycle(r))).collect(),
            _ => records,
        };
        let next_token = next.map(|t| if dated_by_sleeps(c) { format!("{OWN}{t}") } else { t });
        Ok(Page { records, next_token })
    }
    fn finish(&self, c: &CollectionSpec, records: Vec<Value>, options: &Options) -> Finished {
        if c.name == "profile" {
            let personal = options.get("personal").and_then(Value::as_bool).unwrap_or(false);
            return Finished { records: records.iter().map(|r| decode::profile(r, personal)).collect(), notes: vec![] };
        }
        // Said only where a record was not scored, once per state: a day's report carries four
        // WHOOP sections, and a rule repeated in each of them is read four times.
        let mut notes = vec![];
        let count = |state: &str| records.iter().filter(|r| r.get("score_state").and_then(Value::as_str) == Some(state)).count();
        for (state, says) in [
            ("PENDING_SCORE", "WHOOP has not scored them yet"),
            ("UNSCORABLE", "WHOOP could not score them (too little data from the strap)"),
            ("UNKNOWN", "WHOOP sent a score state vitals does not know"),
        ] {
            match count(state) {
                0 => {}
                n => notes.push(format!("{state}: {n} of {} {} records: {says}, so they carry no score values (never zeros).", records.len(), c.name)),
            }
        }
        if c.name == "recovery" {
            let undated = records.iter().filter(|r| r.get("day").is_none()).count();
            if undated > 0 {
                notes.push(format!("{undated} recoveries name a sleep WHOOP did not list for these days, so their day is unknown."));
            }
        }
        Finished { records, notes }
    }
    fn auth_help(&self, status: u16, cred: &Credential) -> String {
        match status {
            401 if cred.kind == CredentialKind::OAuth => "WHOOP refused the connected account's token (HTTP 401) even after a refresh: the \
                login was removed in WHOOP or has expired. Connect again: vitals_connect with provider=whoop and again=true, or \
                `vitals-mcp auth whoop`."
                .into(),
            401 => "WHOOP refused the credential (HTTP 401). Connect the account: vitals_connect with provider=whoop.".into(),
            _ => format!(
                "WHOOP refused the request (HTTP {status}): the login lacks the scope for this data, or the WHOOP membership is inactive. \
                 Connect again and allow every permission: vitals_connect with provider=whoop and again=true."
            ),
        }
    }
    fn unavailable(&self, _c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        None
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        self.cred.renewer(refused)
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is vitals' built-in sample of WHOOP data (synthetic, in WHOOP's own format, no network; WHOOP has no sandbox), \
         not the user's own. No WHOOP account is connected. Say so when you use it. To read the user's own data, connect the account: \
         vitals_connect with provider=whoop."
            .into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        match c.name {
            "workout" => Some("WHOOP lists a workout only when it was detected or logged in the WHOOP app.".into()),
            "recovery" => Some("WHOOP makes a recovery only after a main sleep it scored (naps get none).".into()),
            _ => None,
        }
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&self.sample)
    }
}
