//! Garmin through its official Personal API: a key the user creates, exchanged for a 24-hour bearer
//! token (`auth.rs`); GET reads with dates in the path or the query, inclusive local days, range
//! limits per route, offset paging for the activity search, and built-in sample data. The
//! collections are in [`catalog`], the payloads in [`decode`], the sample person in [`sample`].
pub mod auth;
pub mod catalog;
pub mod decode;
pub mod fit;
pub mod sample;

use super::credential::StoredCredential;
use super::{Credential, CredentialSource, FileFormat, Finished, Options, Page, PageAt, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use crate::catalog::{CollectionSpec, ProviderSpec};
use serde_json::Value;

/// The continuation that asks for an activity's workouts after the activity itself.
const WORKOUTS: &str = "workouts";
/// ... and then for its FIT file, when `laps` or `gps` asks for what only the file holds.
const FILE: &str = "fit";

fn on(options: &Options, k: &str) -> bool {
    options.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// Activities per page of the search (100 is the highest cap clients use; reference §6).
pub const PAGE: usize = 100;

struct Sample {
    person: sample::Person,
}

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, q) = req.route();
        let a = sample::Api { person: &self.person, now: jiff::Timestamp::now() }.answer(&path, &q);
        crate::http::Reply { status: a.status, retry_after: None, quota: None, body: Ok(crate::http::body_of(a.body, a.content_type)) }
    }
    fn file(&self, req: &Request) -> (u16, Vec<u8>) {
        let (path, q) = req.route();
        let a = sample::Api { person: &self.person, now: jiff::Timestamp::now() }.answer(&path, &q);
        (a.status, a.body)
    }
}

pub struct Garmin {
    base: String,
    /// The sensitive collections the user switched on (`VITALS_GARMIN_SENSITIVE`).
    sensitive: Vec<String>,
    /// `VITALS_GARMIN_API_KEY`, else the saved key and its token, else the built-in sample.
    cred: StoredCredential,
    sample: Sample,
}

impl Garmin {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> Garmin {
        let cred = StoredCredential::in_home(&catalog::GARMIN, None, Some("built-in sample data"), home, config);
        let zone = config.zone();
        let sensitive = config.var("VITALS_GARMIN_SENSITIVE").map(|v| v.split(',').map(|x| x.trim().to_string()).collect()).unwrap_or_default();
        Garmin { base: auth::base_in(config), sensitive, cred, sample: Sample { person: sample::Person { tz: zone.tz.clone() } } }
    }
}

/// The activity's file (a ZIP holding its FIT) as its summary.
fn activity_file(body: &str, want: fit::Want) -> Result<Value, PageError> {
    let refused = |why: String| PageError::Refused(format!("Garmin's file of this activity could not be read: {why}"));
    let zip = crate::http::binary(body).ok_or_else(|| refused("it is not a file".into()))?;
    let (_, fit) = crate::archive::unzip_one(&zip, "fit").map_err(|e| refused(e.to_string()))?;
    fit::summarise(&fit, want).map_err(|e| refused(e.to_string()))
}

/// The local days a window asks for (Garmin's dates are the user's own days, inclusive).
fn days(w: &Window) -> Option<(String, String)> {
    match w {
        Window::Dates { start, end } => Some((start.to_string(), end.to_string())),
        Window::Instants { start, end } => {
            // A series window of one local day: its start's date. The end is exclusive midnight.
            let s = start.get(..10)?.to_string();
            let e: jiff::Timestamp = end.parse().ok()?;
            let last = (e - jiff::SignedDuration::from_secs(1)).to_string();
            Some((s.clone(), last.get(..10).map(str::to_string).unwrap_or(s)))
        }
        _ => None,
    }
}

impl Provider for Garmin {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::GARMIN
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _fields: Option<&[String]>, next: Option<&str>, _cred: &Credential, _options: &Options) -> Request {
        let (from, to) = days(w).unwrap_or_default();
        let mut url = format!("{}/{}", self.base, c.path);
        let mut p: Vec<(String, String)> = vec![];
        match c.name {
            // Dates in the path.
            "steps" | "stress" | "hydration" | "weight" | "menstrual_cycle" => url.push_str(&format!("/{from}/{to}")),
            "spo2" | "hrv" | "fitness_age" | "food" => url.push_str(&format!("/{from}")),
            "heartrate" => p.push(("date".into(), from)),
            "activities" => {
                p.extend([
                    ("startDate".into(), from),
                    ("endDate".into(), to),
                    ("start".into(), next.unwrap_or("0").into()),
                    ("limit".into(), PAGE.to_string()),
                ]);
            }
            // The activity, then (the next "page") the workout it followed.
            "activity" => {
                let id = if let Window::Record(id) = w { id.as_str() } else { "" };
                match next {
                    Some(FILE) => url = format!("{}/download-service/files/activity/{id}", self.base),
                    Some(WORKOUTS) => url.push_str(&format!("/{id}/workouts")),
                    _ => url.push_str(&format!("/{id}")),
                }
            }
            "hr_zones" | "profile" => {}
            _ => p.extend([("startDate".into(), from), ("endDate".into(), to)]),
        }
        Request { method: ReadMethod::Get, url, params: p, headers: &[] }
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str, at: &PageAt) -> Result<Page, PageError> {
        if body.trim().is_empty() {
            return Ok(Page { records: vec![], next_token: None });
        }
        if c.name == "activity" && at.token.as_deref() == Some(FILE) {
            return Ok(Page {
                records: vec![activity_file(body, fit::Want { gps: on(&at.options, "gps"), samples: on(&at.options, "raw_samples") })?],
                next_token: None,
            });
        }
        let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("Garmin sent a body that is not complete JSON ({e})")))?;
        let rows = |f: fn(&Value) -> Option<Value>| decode::list(&v).iter().filter_map(f).collect::<Vec<_>>();
        let one = |f: fn(&Value) -> Option<Value>| if v.is_null() { vec![] } else { f(&v).into_iter().collect() };
        let mut next_token = None;
        let records = match c.name {
            "daily_summary" => rows(decode::daily_summary),
            "steps" => rows(decode::steps),
            "stress" => rows(decode::stress),
            "hydration" => rows(decode::hydration),
            "body_battery" => rows(decode::body_battery),
            "sleep" => rows(decode::sleep),
            "heartrate" => decode::heart_rate(&v, &at.zone),
            "spo2" => one(decode::spo2),
            "hrv" => one(decode::hrv),
            "fitness_age" => one(decode::fitness_age),
            "food" => one(decode::food),
            "menstrual_cycle" => rows(decode::cycle),
            "weight" => decode::weights(&v),
            "hr_zones" => decode::list(&v).iter().map(decode::hr_zones).collect(),
            "activity" if at.token.as_deref() == Some(WORKOUTS) => {
                next_token = ["laps", "gps", "raw_samples"].iter().any(|o| on(&at.options, o)).then(|| FILE.to_string());
                vec![serde_json::json!({ "workouts": decode::list(&v) })]
            }
            "activity" => {
                next_token = Some(WORKOUTS.to_string());
                vec![decode::activity_detail(&v)]
            }
            "activities" => {
                let page = decode::list(&v);
                // A full page may be followed by more: ask from the next offset until a short page.
                if page.len() >= PAGE {
                    let offset: usize = at.token.as_deref().and_then(|t| t.parse().ok()).unwrap_or(0);
                    next_token = Some((offset + page.len()).to_string());
                }
                page.iter().map(decode::activity).collect()
            }
            _ => vec![v.clone()],
        };
        Ok(Page { records, next_token })
    }
    fn finish(&self, c: &CollectionSpec, records: Vec<Value>, options: &Options) -> Finished {
        let records = match c.name {
            // The activity, its workouts and (when asked) its file arrive as pages: one row.
            "activity" => {
                let mut row = records.iter().find(|r| r.get("id").is_some()).cloned().unwrap_or_default();
                if let (Some(m), Some(w)) = (row.as_object_mut(), records.iter().find_map(|r| r.get("workouts"))) {
                    m.insert("workouts".into(), if w.as_array().is_some_and(|a| a.is_empty()) { Value::Null } else { w.clone() });
                }
                // The file's page: its summary and, when asked, its records as series.
                if let (Some(m), Some(file)) = (row.as_object_mut(), records.iter().find(|r| r.get("fit").is_some()).and_then(Value::as_object)) {
                    m.extend(file.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                if row.is_null() {
                    vec![]
                } else {
                    vec![row]
                }
            }
            "profile" => {
                let personal = options.get("personal").and_then(Value::as_bool).unwrap_or(false);
                records.iter().map(|r| decode::profile(r, personal)).collect()
            }
            _ => records,
        };
        Finished { records, notes: vec![] }
    }
    fn auth_help(&self, status: u16, _cred: &Credential) -> String {
        match status {
            401 => "Garmin refused the token even after the key was exchanged again: the key was deleted or has expired. Create a new key \
                    at Garmin Connect → Settings → Personal API Key, then give it to vitals (vitals_connect provider=garmin again=true, \
                    the settings app, or `vitals-mcp app garmin --api-key -`)."
                .into(),
            _ => "Garmin refused the request (HTTP 403) for this key.".into(),
        }
    }
    fn unavailable(&self, c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        (catalog::SENSITIVE.contains(&c.name) && !self.sensitive.iter().any(|s| s == c.name)).then(|| {
            format!(
                "garmin.{} is off: it is sensitive data, read only when the user switches it on. To switch it on, set \
                 VITALS_GARMIN_SENSITIVE={} (the extension's \"Garmin sensitive data\" setting), then ask again.",
                c.name, c.name
            )
        })
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is built-in synthetic Garmin data (Garmin has no sandbox), not the user's own. No Garmin key is connected. \
         Say so when you use it. To read the user's own data, connect the account: vitals_connect with provider=garmin."
            .into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        match c.name {
            "spo2" => Some("Pulse Ox needs a watch with it switched on.".into()),
            "hydration" => Some("Garmin has hydration only where the user logs water in Garmin Connect.".into()),
            "weight" => Some("Garmin has weight only from a connected scale or entries in Garmin Connect.".into()),
            _ => None,
        }
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&self.sample)
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        self.cred.renewer(refused)
    }
    fn file_request(&self, id: &str, format: FileFormat, _cred: &Credential) -> Option<Request> {
        // The original file, a ZIP holding the device's FIT (reference §7; the path is inferred).
        (format == FileFormat::Fit).then(|| Request {
            method: ReadMethod::Get,
            url: format!("{}/download-service/files/activity/{id}", self.base),
            params: vec![],
            headers: &[],
        })
    }
}
