//! Polar AccessLink v3: GET reads with `from`/`to` (or none: the list routes hold the last 28
//! days), no paging, 204 and 404 for "no data", a registration after the login, and built-in
//! sample data instead of a sandbox. The collections are in [`catalog`], the wire format in
//! [`decode`], the sample summaries' methods in [`summary`], the sample person in [`sample`].
pub mod auth;
pub mod catalog;
pub mod decode;
pub mod sample;
pub mod summary;

use super::credential::StoredCredential;
use super::{Credential, CredentialKind, CredentialSource, FileFormat, Finished, Options, Page, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use crate::catalog::{CollectionSpec, ProviderSpec, RangeKind};
use crate::time::Zone;
use serde_json::Value;

pub const DEFAULT_BASE: &str = "https://www.polaraccesslink.com";

/// The sample person, answered in process.
struct Sample {
    person: sample::Person,
}

impl Sample {
    fn api(&self) -> sample::Api<'_> {
        sample::Api { person: &self.person, now: jiff::Timestamp::now(), dialect: Default::default(), registered: None }
    }
}

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, params) = req.route();
        let a = self.api().answer(&path, &params);
        crate::http::Reply { status: a.status, retry_after: None, quota: None, body: Ok(String::from_utf8_lossy(&a.body).into_owned()) }
    }
    fn file(&self, req: &Request) -> (u16, Vec<u8>) {
        let (path, params) = req.route();
        let a = self.api().answer(&path, &params);
        (a.status, a.body)
    }
}

pub struct Polar {
    base: String,
    /// The saved login, else the built-in sample.
    cred: StoredCredential,
    sample: Sample,
}

impl Polar {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> Polar {
        let cred = StoredCredential::in_home(&catalog::POLAR, None, Some("built-in sample data"), home, config);
        // The sample person lives in the user's zone, a fixed offset too (its days are the user's).
        let zone = config.zone();
        Polar { base: auth::base_in(config), cred, sample: Sample { person: sample::Person { tz: zone.tz, ..sample::Person::new("UTC") } } }
    }
}

/// The local days a window asks for, as Polar's `from`/`to`. The engine pads a window by two days
/// on each side; `from` is kept inside Polar's reach (older is refused with 400, not answered
/// empty), and the engine has already cut the asked days to it.
fn dates(c: &CollectionSpec, w: &Window) -> Option<(jiff::civil::Date, jiff::civil::Date)> {
    let (from, to) = match w {
        Window::Dates { start, end } => (*start, *end),
        Window::Instants { start, end } => (day_of(start)?, day_of(end)?),
        _ => return None,
    };
    // Today where it is earliest (UTC−12): its first reachable day is never after the user's, so
    // the first day an answer claims is always asked for.
    let earliest_today = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(12)).to_zoned(jiff::tz::TimeZone::UTC).date();
    let floor = c.retention.map(|r| r.first_day(earliest_today));
    Some((floor.map_or(from, |f| from.max(f)), to))
}

fn day_of(rfc3339: &str) -> Option<jiff::civil::Date> {
    rfc3339.get(..10)?.parse().ok()
}

impl Provider for Polar {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::POLAR
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _fields: Option<&[String]>, _next: Option<&str>, _cred: &Credential, _options: &Options) -> Request {
        let mut p: Vec<(String, String)> = vec![];
        match c.name {
            // Samples and zones always: the summaries are made from them, and the options only
            // decide what of it the answer keeps (so one cached listing serves every option).
            "exercises" => p.extend([("samples".into(), "true".into()), ("zones".into(), "true".into())]),
            "activity" => {
                for f in ["steps", "activity_zones", "inactivity_stamps"] {
                    p.push((f.into(), "true".into()));
                }
            }
            _ => {}
        }
        let ranged = matches!(c.split, crate::catalog::Split::Days(_) | crate::catalog::Split::Hours(_) | crate::catalog::Split::Fill { .. })
            && c.range != RangeKind::None;
        if let Some((from, to)) = dates(c, w).filter(|_| ranged) {
            p.insert(0, ("from".into(), from.to_string()));
            p.insert(1, ("to".into(), to.max(from).to_string()));
        }
        Request { method: ReadMethod::Get, url: format!("{}/{}", self.base, c.path), params: p, headers: &[] }
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str, at: &super::PageAt) -> Result<Page, PageError> {
        if body.trim().is_empty() {
            return Ok(Page { records: vec![], next_token: None });
        }
        let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("Polar sent a body that is not complete JSON ({e})")))?;
        let list = |keys: &[&str]| -> Vec<Value> {
            match &v {
                Value::Array(a) => a.clone(),
                o => decode::get(o, keys).and_then(Value::as_array).cloned().unwrap_or_else(|| if o.get("date").is_some() { vec![o.clone()] } else { vec![] }),
            }
        };
        let records = match c.name {
            "exercises" => list(&[]).iter().map(decode::exercise).collect(),
            "activity" => list(&[]).iter().map(decode::activity).collect(),
            "heartrate" => decode::heart_rate(&v, &at.zone),
            "sleep" => list(&["nights"]).iter().map(decode::night).collect(),
            "nightly_recharge" => list(&["recharges"]).iter().map(decode::recharge).collect(),
            "cardio_load" => list(&[]).iter().map(decode::cardio).collect(),
            "sleepwise" => list(&[]).iter().map(decode::alertness).collect(),
            _ => vec![decode::physical(&v)],
        };
        Ok(Page { records, next_token: None })
    }
    fn finish(&self, c: &CollectionSpec, mut records: Vec<Value>, options: &Options) -> Finished {
        let on = |k: &str| options.get(k).and_then(Value::as_bool).unwrap_or(false);
        let mut notes = vec![];
        let drop = |records: &mut Vec<Value>, fields: &[&str]| {
            for r in records.iter_mut().filter_map(Value::as_object_mut) {
                for f in fields {
                    r.remove(*f);
                }
            }
        };
        match c.name {
            "exercises" => {
                if !on("samples") {
                    drop(&mut records, &decode::SUMMARY_FIELDS);
                }
                if !on("raw_samples") {
                    drop(&mut records, &decode::RAW_FIELDS);
                }
            }
            "sleepwise" if !on("hourly") => drop(&mut records, &["hourly"]),
            "activity" => {
                let off: Vec<String> = records
                    .iter()
                    .filter(|r| r.get("hourly_steps_sum").and_then(Value::as_f64).zip(r.get("steps").and_then(Value::as_f64)).is_some_and(|(a, b)| a != b))
                    .filter_map(|r| r.get("day").and_then(Value::as_str).map(str::to_string))
                    .collect();
                if !off.is_empty() {
                    notes.push(format!(
                        "On {} the hourly step buckets (Polar's samples, repeats filled in) do not add up to Polar's daily step count; \
                         both are given as Polar sent them (hourly_steps_sum beside steps).",
                        off.join(", ")
                    ));
                }
            }
            _ => {}
        }
        Finished { records, notes }
    }
    fn reading_notes(&self, c: &CollectionSpec, zone: &Zone) -> Vec<String> {
        match c.name {
            "heartrate" => vec![format!(
                "Polar gives heart-rate times on the watch's clock, with no zone: they were read as {} times (send `tz` if the watch was elsewhere).",
                zone.name
            )],
            "activity" => vec!["Polar's days follow the watch's clock, whatever `tz` says.".into()],
            _ => vec![],
        }
    }
    fn no_reading(&self, _c: &CollectionSpec, reason: &str) -> Option<String> {
        (reason == decode::NO_CONTACT).then(|| {
            "Polar sends a heart rate of 0 bpm while the watch has no skin contact (often a run of them a second apart), which is no \
             heart rate"
                .into()
        })
    }
    fn auth_help(&self, status: u16, cred: &Credential) -> String {
        match status {
            401 => "Polar rejected the token (HTTP 401). Polar AccessLink v3 has no refresh: the access was revoked in Polar Flow, or the \
                    app de-registered the user. Connect again: vitals_connect with provider=polar and again=true, or `vitals-mcp auth polar`."
                .into(),
            _ if cred.kind == CredentialKind::OAuth => "Polar refused the request (HTTP 403): the user has not accepted all of Polar's mandatory \
                consents, or vitals is not registered with the account. Open Polar Flow (flow.polar.com), accept the consents it shows, then \
                ask again; if it persists, connect again with vitals_connect provider=polar again=true (that registers again)."
                .into(),
            _ => "Polar refused the request (HTTP 403).".into(),
        }
    }
    fn unavailable(&self, _c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        None
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is built-in synthetic Polar data (Polar has no sandbox), not the user's own. No Polar account is connected. \
         Say so when you use it. To read the user's own data, connect the account: vitals_connect with provider=polar."
            .into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        match c.name {
            "nightly_recharge" | "sleepwise" => Some("Nightly Recharge and SleepWise need a Polar watch that supports them, worn at night.".into()),
            "exercises" => Some("Polar lists only exercises uploaded after the user connected vitals.".into()),
            _ => None,
        }
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&self.sample)
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        // No refresh exists in v3: only a registration still owed can be done (a refused token
        // is not renewable, and the engine then says to connect again).
        let owed = self.cred.current().due.is_some();
        (refused.is_none() && owed).then(|| self.cred.renewer(None)).flatten()
    }
    fn file_request(&self, id: &str, format: FileFormat, _cred: &Credential) -> Option<Request> {
        Some(Request { method: ReadMethod::Get, url: format!("{}/v3/exercises/{id}/{}", self.base, format.as_str()), params: vec![], headers: &[] })
    }
}
