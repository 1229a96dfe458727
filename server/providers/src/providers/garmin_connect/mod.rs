//! Garmin Connect's private mobile API, as a second, opt-in Garmin connection for what the
//! official Personal API does not serve (`providers/garmin/`). Its collections are `garmin.*`
//! (the catalog's `namespace`); its connection is a session: a login (`sso.rs`, behind one trait)
//! or tokens imported from garminconnect or garth (`tokens.rs`). Hosts, client ids and headers are
//! in `config.rs`; the payloads in `decode.rs`; the back-off after Garmin refuses a login in
//! `backoff.rs`. It has no sample data: without a session, its collections say how to connect.
pub mod backoff;
pub mod catalog;
pub mod config;
pub mod decode;
pub mod oauth1;
pub mod sso;
pub mod tokens;

use super::credential::StoredCredential;
use super::{Credential, CredentialSource, Finished, Options, Page, PageAt, PageError, Provider, ReadMethod, Request, Window};
use crate::catalog::{CollectionSpec, ProviderSpec};
use serde_json::Value;

/// The continuation that asks for the second route of a window (lactate threshold's heart rate,
/// an activity's typed splits).
const SECOND: &str = "second";

pub struct GarminConnect {
    cred: StoredCredential,
    /// The data API's base, from the server's settings (the twin in tests).
    api: String,
}

impl GarminConnect {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> GarminConnect {
        GarminConnect { cred: StoredCredential::in_home(&catalog::GARMIN_CONNECT, None, None, home, config), api: config::api(config) }
    }
}

fn days(w: &Window) -> (String, String) {
    match w {
        Window::Dates { start, end } => (start.to_string(), end.to_string()),
        _ => Default::default(),
    }
}

/// A path segment as Garmin's routes take it (display names can hold spaces and dots).
fn segment(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20")
}

impl Provider for GarminConnect {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::GARMIN_CONNECT
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _fields: Option<&[String]>, next: Option<&str>, cred: &Credential, _options: &Options) -> Request {
        let base = &self.api;
        let (from, to) = days(w);
        let name = segment(cred.extra.get(tokens::DISPLAY_NAME).map(String::as_str).unwrap_or_default());
        let mut params: Vec<(String, String)> = vec![];
        let url = match c.name {
            "training_status" => format!("{base}/{}/{from}", c.path),
            "race_predictions" => {
                params.extend([("fromCalendarDate".into(), from), ("toCalendarDate".into(), to)]);
                format!("{base}/{}/{name}", c.path)
            }
            "lactate_threshold" => {
                params.extend([("sport", "RUNNING"), ("aggregation", "daily"), ("aggregationStrategy", "LATEST")].map(|(k, v)| (k.to_string(), v.to_string())));
                let metric = if next == Some(SECOND) { "lactateThresholdHeartRate" } else { "lactateThresholdSpeed" };
                format!("{base}/{}/{metric}/range/{from}/{to}", c.path)
            }
            "personal_records" => format!("{base}/{}/{name}", c.path),
            "endurance_score" => {
                params.push(("calendarDate".into(), from));
                format!("{base}/{}", c.path)
            }
            "hill_score" => {
                params.extend([("startDate".into(), from), ("endDate".into(), to), ("aggregation".into(), "daily".into())]);
                format!("{base}/{}", c.path)
            }
            "respiration" => format!("{base}/{}/{from}", c.path),
            "activity_splits" => {
                let id = if let Window::Record(id) = w { segment(id) } else { String::new() };
                format!("{base}/{}/{id}/{}", c.path, if next == Some(SECOND) { "typedsplits" } else { "splits" })
            }
            _ => format!("{base}/{}/{from}/{to}", c.path),
        };
        Request { method: ReadMethod::Get, url, params, headers: config::DATA_HEADERS }
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str, at: &PageAt) -> Result<Page, PageError> {
        if body.trim().is_empty() {
            return Ok(Page { records: vec![], next_token: None });
        }
        let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("Garmin Connect sent a body that is not complete JSON ({e})")))?;
        if v.get("privacyProtected").and_then(Value::as_bool) == Some(true) {
            return Err(PageError::Unauthorized);
        }
        let rows = |f: fn(&Value) -> Option<Value>| decode::list(&v).iter().filter_map(f).collect::<Vec<_>>();
        let second = at.token.as_deref() == Some(SECOND);
        let gps = at.options.get("gps").and_then(Value::as_bool).unwrap_or(false);
        let (records, next_token) = match c.name {
            "training_readiness" => (rows(decode::readiness), None),
            "training_status" => (rows(decode::training_status), None),
            "vo2max" => (rows(decode::vo2max), None),
            "race_predictions" => (rows(decode::race_predictions), None),
            "lactate_threshold" if second => (rows(decode::threshold_heart_rate), None),
            "lactate_threshold" => (rows(decode::threshold_speed), Some(SECOND.to_string())),
            "personal_records" => (rows(decode::personal_record), None),
            "endurance_score" => (rows(decode::endurance_score), None),
            "hill_score" => (decode::hill_scores(&v), None),
            "respiration" => (rows(decode::respiration), None),
            "sleep_scores" => (rows(decode::sleep_score), None),
            "activity_splits" if second => (vec![serde_json::json!({ "typed_splits": decode::typed_splits(&v, gps) })], None),
            "activity_splits" => {
                let id = v.get("activityId").cloned().unwrap_or(Value::Null);
                (vec![serde_json::json!({ "id": id, "laps": decode::laps(&v, gps) })], Some(SECOND.to_string()))
            }
            _ => (vec![v], None),
        };
        Ok(Page { records, next_token })
    }
    fn reading_notes(&self, c: &CollectionSpec, _zone: &crate::time::Zone) -> Vec<String> {
        match c.name {
            "lactate_threshold" => vec![format!(
                "Garmin sends the lactate-threshold speed in tenths of m/s; speed_m_s is Garmin's value × {} (and pace_per_km follows from it).",
                decode::LT_SPEED_SCALE
            )],
            "race_predictions" => vec!["Race distances for the paces: 5 km, 10 km, 21.0975 km and 42.195 km.".into()],
            _ => vec![],
        }
    }
    fn finish(&self, c: &CollectionSpec, records: Vec<Value>, _options: &Options) -> Finished {
        let records = match c.name {
            "lactate_threshold" => decode::merge_threshold(records),
            // The laps and the typed splits arrive as two pages: one row.
            "activity_splits" => {
                let mut row = records.iter().find(|r| r.get("id").is_some_and(|i| !i.is_null())).cloned();
                if let (Some(m), Some(t)) = (row.as_mut().and_then(Value::as_object_mut), records.iter().find_map(|r| r.get("typed_splits"))) {
                    m.insert("typed_splits".into(), t.clone());
                }
                row.into_iter().collect()
            }
            _ => records,
        };
        Finished { records, notes: vec![] }
    }
    fn auth_help(&self, status: u16, _cred: &Credential) -> String {
        match status {
            401 => "Garmin Connect refused the session even after renewing it: it has ended. Log in again (vitals_connect \
                    provider=garmin-connect again=true, or `vitals-mcp auth garmin-connect`), or import fresh tokens \
                    (`vitals-mcp auth garmin-connect --import`)."
                .into(),
            _ => "Garmin Connect refused the request (HTTP 403): Garmin may block this client or this network, or this data is not \
                  the account's own."
                .into(),
        }
    }
    fn unavailable(&self, _c: &CollectionSpec, _cred: &Credential) -> Option<String> {
        None
    }
    fn synthetic_notice(&self) -> String {
        "Garmin Connect (unofficial) has no sample data.".into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        match c.name {
            "training_readiness" | "training_status" => {
                Some("Garmin computes this only on watches that have it, from worn nights and recorded activities.".into())
            }
            "vo2max" | "race_predictions" | "lactate_threshold" => {
                Some("Garmin updates this only after outdoor runs (or rides) with heart rate on a watch that has it.".into())
            }
            "endurance_score" | "hill_score" => Some("Garmin computes this only on watches that have it, from the activities recorded with heart rate.".into()),
            "respiration" => Some("Garmin measures breathing rate only on watches that have the sensor, while they are worn.".into()),
            "sleep_scores" => Some("Garmin scores only nights a watch that scores sleep was worn through.".into()),
            _ => None,
        }
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        self.cred.renewer(refused)
    }
}
