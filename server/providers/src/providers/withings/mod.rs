//! Withings: form-encoded POST reads with `action`, the `{status, body}` envelope, `more`/`offset`
//! paging, and built-in sample data instead of a sandbox. The collections are in [`catalog`], the
//! wire format in [`decode`], the sample person and the in-process API in [`sample`].
pub mod auth;
pub mod catalog;
pub mod decode;
pub mod sample;

use super::credential::StoredCredential;
use super::{Credential, CredentialSource, Finished, Options, Page, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use crate::catalog::{CollectionSpec, ProviderSpec};
use serde_json::Value;

pub const DEFAULT_BASE: &str = "https://wbsapi.withings.net";

/// Fields asked of each v2 service: everything a row is made of (without `data_fields` Withings
/// sends a default subset without heart rate or score, reference §6).
const ACTIVITY_FIELDS: &str =
    "steps,distance,elevation,soft,moderate,intense,active,calories,totalcalories,hr_average,hr_min,hr_max,hr_zone_0,hr_zone_1,hr_zone_2,hr_zone_3";
const SLEEP_FIELDS: &str = "total_timeinbed,total_sleep_time,lightsleepduration,deepsleepduration,remsleepduration,wakeupduration,sleep_efficiency,sleep_latency,durationtosleep,wakeupcount,sleep_score,hr_average,hr_min,hr_max,rr_average,rr_min,rr_max,snoring,snoringepisodecount,breathing_disturbances_intensity";
const WORKOUT_FIELDS: &str = "calories,intensity,hr_average,hr_min,hr_max,pause_duration,spo2_average,steps,distance,elevation";
const INTRADAY_FIELDS: &str = "heart_rate,steps,calories,distance,elevation,duration";
/// The night series a device may send (the spec's list, less the regulated indexes vitals does
/// not read: chest movement, Withings index, breathing sounds).
const SLEEP_SERIES_FIELDS: &str = "hr,rr,snoring,sdnn_1,rmssd,hrv_quality,mvt_score";

/// The `data_fields` vitals asks a v2 action for (None: the action takes none). `get` is sleep's
/// high-resolution read; heart's `get` takes no `data_fields` and is sent without.
pub fn data_fields(action: &str) -> Option<&'static str> {
    match action {
        "getactivity" => Some(ACTIVITY_FIELDS),
        "getworkouts" => Some(WORKOUT_FIELDS),
        "getsummary" => Some(SLEEP_FIELDS),
        "getintradayactivity" => Some(INTRADAY_FIELDS),
        "get" => Some(SLEEP_SERIES_FIELDS),
        _ => None,
    }
}

/// The sample person the sandbox answers for, in this machine's zone.
struct Sample {
    person: sample::Person,
}

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, params) = req.route();
        let api = sample::Api { person: &self.person, page_size: 300, now: jiff::Timestamp::now(), order: None };
        crate::http::Reply { status: 200, retry_after: None, quota: None, body: Ok(api.answer(&path, &params).to_string()) }
    }
}

pub struct Withings {
    base: String,
    /// The saved login, else the built-in sample.
    cred: StoredCredential,
    sample: Sample,
}

/// An IANA name for a zone: its own, or `Etc/GMT±H` for a whole-hour fixed offset, else UTC.
fn iana_name(z: &crate::time::Zone) -> String {
    if let Some(n) = z.tz.iana_name() {
        return n.to_string();
    }
    let secs = z.tz.to_offset(jiff::Timestamp::now()).seconds();
    match (secs % 3600, -secs / 3600) {
        (0, 0) => "UTC".into(),
        (0, h) => format!("Etc/GMT{h:+}"),
        _ => "UTC".into(),
    }
}

impl Withings {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> Withings {
        let base = config.url("VITALS_WITHINGS_BASE_URL", DEFAULT_BASE);
        let cred = StoredCredential::in_home(&catalog::WITHINGS, None, Some("built-in sample data"), home, config);
        let person = sample::Person::new(&iana_name(&config.zone()), true);
        Withings { base, cred, sample: Sample { person } }
    }
}

/// `[start 00:00 UTC, end+1 00:00 UTC)` as Unix seconds: the engine has already padded the days
/// by two on each side, which covers every zone.
fn unix_range(start: jiff::civil::Date, end: jiff::civil::Date) -> (i64, i64) {
    (sample::utc_midnight(start), sample::utc_midnight(end.tomorrow().unwrap_or(end)) - 1)
}

fn instant(s: &str) -> i64 {
    s.parse::<jiff::Timestamp>().map(|t| t.as_second()).unwrap_or(0)
}

impl Provider for Withings {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::WITHINGS
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _fields: Option<&[String]>, next: Option<&str>, _cred: &Credential, _options: &Options) -> Request {
        let mut p: Vec<(String, String)> = vec![];
        let mut add = |k: &str, v: String| p.push((k.to_string(), v));
        let action = match c.name {
            "measurements" | "blood_pressure" => {
                let types = if c.name == "measurements" { catalog::BODY_TYPES } else { catalog::BP_TYPES };
                add("meastypes", types.iter().map(|(t, _)| t.to_string()).collect::<Vec<_>>().join(","));
                add("category", "1".into());
                "getmeas"
            }
            "activity" => {
                add("data_fields", data_fields("getactivity").unwrap_or_default().into());
                "getactivity"
            }
            "workouts" => {
                add("data_fields", data_fields("getworkouts").unwrap_or_default().into());
                "getworkouts"
            }
            "sleep" => {
                add("data_fields", data_fields("getsummary").unwrap_or_default().into());
                "getsummary"
            }
            "intraday" => {
                add("data_fields", data_fields("getintradayactivity").unwrap_or_default().into());
                "getintradayactivity"
            }
            "sleep_series" => {
                add("data_fields", data_fields("get").unwrap_or_default().into());
                "get"
            }
            "ecg" => "list",
            "ecg_signal" => "get",
            _ => "getdevice",
        };
        match (w, action) {
            // getmeas and heart's list filter by instants: the padded days as Unix seconds.
            (Window::Dates { start, end }, "getmeas" | "list") => {
                let (s, e) = unix_range(*start, *end);
                add("startdate", s.to_string());
                add("enddate", e.to_string());
            }
            (Window::Dates { start, end }, _) => {
                add("startdateymd", start.to_string());
                add("enddateymd", end.to_string());
            }
            (Window::Instants { start, end }, _) => {
                add("startdate", instant(start).to_string());
                add("enddate", instant(end).to_string());
            }
            (Window::Record(id), _) => add("signalid", id.clone()),
            _ => {}
        }
        if let Some(o) = next {
            add("offset", o.to_string());
        }
        p.insert(0, ("action".into(), action.into()));
        Request { method: ReadMethod::FormPost, url: format!("{}/{}", self.base, c.path), params: p, headers: &[] }
    }
    fn parse_page(&self, c: &CollectionSpec, text: &str, at: &super::PageAt) -> Result<Page, PageError> {
        let body = decode::envelope(text)?;
        let list = |key: &str, row: fn(&Value) -> Value| body.get(key).and_then(Value::as_array).map(|a| a.iter().map(row).collect()).unwrap_or_default();
        let records = match c.name {
            "measurements" | "blood_pressure" => decode::groups(&body),
            "activity" => list("activities", decode::activity),
            "sleep" => list("series", decode::night),
            "workouts" => list("series", decode::workout),
            "intraday" => decode::intraday(&body),
            "sleep_series" => decode::sleep_series(&body),
            "ecg" => list("series", decode::ecg),
            "ecg_signal" => vec![decode::ecg_signal(&body, at.record.as_deref())],
            _ => list("devices", decode::device),
        };
        Ok(Page { records, next_token: decode::next_offset(&body)? })
    }
    fn finish(&self, c: &CollectionSpec, records: Vec<Value>, options: &Options) -> Finished {
        let (records, notes) = match c.name {
            "measurements" => decode::weigh_ins(records, options.get("include_manual").and_then(Value::as_bool).unwrap_or(false)),
            "blood_pressure" => decode::readings(records),
            "sleep" => decode::sleep_totals(records),
            _ => (records, vec![]),
        };
        Finished { records, notes }
    }
    fn auth_help(&self, status: u16, _cred: &Credential) -> String {
        match status {
            401 => "Withings rejected the connected account's token even after a refresh: the login was revoked or has expired. \
                    Connect again: vitals_connect with provider=withings and again=true, or `vitals-mcp auth withings`."
                .into(),
            _ => "Withings refused the request: the login lacks the permission for this data. Connect again and allow every \
                  permission: vitals_connect with provider=withings and again=true."
                .into(),
        }
    }
    fn unavailable(&self, _c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        None
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is built-in synthetic Withings data (Withings has no sandbox), not the user's own. No Withings account \
         is connected. Say so when you use it. To read the user's own data, connect the account: vitals_connect with provider=withings."
            .into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        match c.name {
            "sleep" | "sleep_series" => Some(
                "Withings records sleep only with a sleep device (a Sleep Analyzer under the mattress, or a watch worn at night); \
                 withings.devices lists what is linked. Without one there is never sleep data."
                    .to_string(),
            ),
            "ecg" => Some(
                "Withings lists an ECG only when the user took one on a device that records them (ScanWatch, Move ECG, BPM Core); \
                 withings.devices lists what is linked."
                    .to_string(),
            ),
            _ => None,
        }
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&self.sample)
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        self.cred.renewer(refused)
    }
}
