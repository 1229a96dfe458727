//! The Google Health API v4 (reference `google-health/README.md`): Fitbit and Pixel Watch data
//! since the Fitbit Web API was switched off. A login with Google (authorization code, PKCE,
//! offline access, only the read-only `googlehealth.*` scopes the collections need); every
//! collection one data type listed by GET, filtered in the person's civil time, followed to its
//! last page; built-in sample data in Google's own wire format instead of a sandbox (Google has
//! none). The collections are in [`catalog`], the records as `vitals` answers them in
//! [`decode`], the sample person and the in-process API in [`sample`].
//!
//! A Google Cloud app left in "Testing" status gets refresh tokens that die after 7 days
//! (reference §1.4): the credential says when this login stops working, from what Google said
//! with the tokens (`refresh_token_expires_in`) or, when the person says the app is in Testing
//! (`VITALS_GOOGLE_HEALTH_APP_STATUS=testing`), seven days after the consent.
pub mod catalog;
pub mod decode;
pub mod sample;

use super::credential::StoredCredential;
use super::{
    Credential, CredentialKind, CredentialSource, Finished, Options, Page, PageAt, PageError, Provider, ReadMethod, Refusal, Request, SampleApi, Window,
};
use crate::catalog::{CollectionSpec, ProviderSpec};
use serde_json::Value;

pub const DEFAULT_BASE: &str = "https://health.googleapis.com/v4";
/// Kept with the tokens: when the refresh token was issued (the code exchange), Unix seconds.
pub const REFRESH_ISSUED: &str = "refresh_issued_at";
/// Kept with the tokens: when Google said the refresh token ends, Unix seconds.
pub const REFRESH_EXPIRES: &str = "refresh_expires_at";
/// How long a refresh token of an app in Testing lives (reference §1.4, stated by Google).
pub const TESTING_DAYS: i64 = 7;
/// The variable that says the Google Cloud app's publishing status (`testing`, `production`).
pub const APP_STATUS_ENV: &str = "VITALS_GOOGLE_HEALTH_APP_STATUS";
/// Points a page: sessions hold at most 25 (reference §0); elsewhere Google states no maximum,
/// so this is a guess that a 400 would correct here, in one place.
pub const SESSION_PAGE: usize = 25;
pub const PAGE: usize = 1000;

/// Google's token reply, with what the login must remember of the refresh token's life: when it
/// was issued (a reply that carries one is a consent; a refresh sends none back) and, when Google
/// says it, when it ends. An error reply is passed on as Google's `error` and description.
pub fn token_reply(status: u16, body: &[u8]) -> crate::connection::TokenReply {
    let v: Value =
        serde_json::from_slice(body).map_err(|_| ("invalid_response".to_string(), format!("Google's token endpoint answered HTTP {status} without JSON")))?;
    if status != 200 || v.get("access_token").is_none() {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        return Err((if s("error").is_empty() { "invalid_response".into() } else { s("error") }, s("error_description")));
    }
    let now = jiff::Timestamp::now().as_second();
    let mut out = v.clone();
    if v.get("refresh_token").is_some() {
        out[REFRESH_ISSUED] = Value::String(now.to_string());
    }
    if let Some(left) = decode::num(v.get("refresh_token_expires_in")) {
        out[REFRESH_EXPIRES] = Value::String((now + left as i64).to_string());
    }
    Ok(out)
}

struct Sample {
    person: sample::Person,
}

impl SampleApi for Sample {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, params) = req.route();
        let a = sample::Api { person: &self.person, now: jiff::Timestamp::now(), page_cap: None }.answer(&path, &params);
        crate::http::Reply { status: a.status, retry_after: None, quota: None, body: Ok(a.body) }
    }
}

/// The saved login, with the day its refresh token dies said where `vitals_check` shows it.
struct GoogleCredential {
    stored: StoredCredential,
    /// The person said the app is in Testing status.
    testing: bool,
}

impl GoogleCredential {
    /// When the login's refresh token stops working, Unix seconds, and how that is known.
    fn ends(&self, cred: &Credential) -> Option<(i64, &'static str)> {
        let at = |k: &str| cred.extra.get(k).and_then(|v| v.parse::<i64>().ok());
        if let Some(t) = at(REFRESH_EXPIRES) {
            return Some((t, "Google said so with the tokens"));
        }
        at(REFRESH_ISSUED).filter(|_| self.testing).map(|t| (t + TESTING_DAYS * 86_400, "the app is in Testing status (VITALS_GOOGLE_HEALTH_APP_STATUS)"))
    }
}

impl CredentialSource for GoogleCredential {
    fn current(&self) -> Credential {
        let mut c = self.stored.current();
        if c.kind == CredentialKind::OAuth {
            if let Some((t, how)) = self.ends(&c) {
                c.key_expires_at = Some(t);
                let day = crate::time::unix_rfc3339(Some(t)).unwrap_or_default();
                c.origin = format!("{}; {}", c.origin, ends_text(&day, how));
            }
        }
        c
    }
}

/// What a login that will stop working says, and what to do.
fn ends_text(day: &str, how: &str) -> String {
    format!(
        "this Google login stops working at {day} ({how}): Google ends the refresh tokens of an app in Testing status after \
         7 days. Publish the app In production (Google Cloud console, Google Auth Platform > Audience), then connect again \
         (vitals_connect with provider=google-health and again=true)"
    )
}

pub struct GoogleHealth {
    base: String,
    cred: GoogleCredential,
    sample: Sample,
    /// Google refused the sleep filter (reference §2.3: documented, yet one live client saw every
    /// sleep filter rejected): sleeps are listed without it from then on, cut to the window here.
    sleep_unfiltered: std::sync::atomic::AtomicBool,
}

impl GoogleHealth {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> GoogleHealth {
        let base = config.url("VITALS_GOOGLE_HEALTH_BASE_URL", DEFAULT_BASE);
        let stored = StoredCredential::in_home(&catalog::GOOGLE_HEALTH, None, Some("built-in sample data"), home, config);
        let testing = config.var(APP_STATUS_ENV).is_some_and(|s| s.trim().eq_ignore_ascii_case("testing"));
        GoogleHealth {
            base,
            cred: GoogleCredential { stored, testing },
            sample: Sample { person: sample::Person { tz: config.zone().tz } },
            sleep_unfiltered: Default::default(),
        }
    }
}

/// How a collection is filtered and read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reconciled minutes summed per civil day.
    Total,
    /// One record a civil day (`date`).
    Daily,
    /// Instants (`sampleTime`).
    Sample,
    Sleep,
    Exercise,
    Raw,
}

fn kind(c: &CollectionSpec) -> Kind {
    match c.name {
        "steps" | "distance" | "calories" | "floors" | "active_zone_minutes" => Kind::Total,
        "heart_rate" | "weight" | "body_fat" => Kind::Sample,
        "sleep" => Kind::Sleep,
        "exercise" => Kind::Exercise,
        "data_points" => Kind::Raw,
        _ => Kind::Daily,
    }
}

/// What an answer read without Google's sleep filter says.
pub const UNFILTERED_SLEEP: &str = "Google refused the sleep filter (`sleep.interval.civil_end_time`, HTTP 400 INVALID_ARGUMENT), \
     so the sleeps were listed without it, newest first, until the listing passed the asked days, and cut to those days here.";

/// Whether a sleep listing read without its filter has passed `w`: Google lists newest first
/// (reference §2.3), so a page in that order whose last sleep ended before the window's first day
/// is the last one needed. A page in any other order never ends the listing early.
fn passed(records: &[Value], w: &Window) -> bool {
    let Window::Dates { start, .. } = w else { return false };
    let at = |r: &Value| r.get("start").and_then(Value::as_str).and_then(|s| s.parse::<jiff::Timestamp>().ok());
    let (Some(first), Some(last)) = (records.first().and_then(at), records.last().and_then(at)) else { return false };
    let ended = records.last().and_then(|r| r.get("day")).and_then(Value::as_str).and_then(|d| d.parse::<jiff::civil::Date>().ok());
    first >= last && ended.is_some_and(|d| d < *start)
}

/// The filter of one window (reference §2.3): `>=` and `<` only, the type's name in snake_case,
/// civil days in quotes.
fn filter(c: &CollectionSpec, data_type: &str, w: &Window) -> Option<String> {
    let t = data_type.replace('-', "_");
    let field = match kind(c) {
        Kind::Total | Kind::Exercise => format!("{t}.interval.civil_start_time"),
        Kind::Daily => format!("{t}.date"),
        Kind::Sample if c.name == "heart_rate" => format!("{t}.sample_time.physical_time"),
        Kind::Sample => format!("{t}.sample_time.civil_time"),
        Kind::Sleep => format!("{t}.interval.civil_end_time"),
        Kind::Raw => format!("{t}.{}", raw_member(data_type)),
    };
    let (from, to) = match w {
        Window::Dates { start, end } => (start.to_string(), end.tomorrow().unwrap_or(*end).to_string()),
        Window::Instants { start, end } => (instant(start), instant(end)),
        _ => return None,
    };
    Some(format!("{field} >= \"{from}\" AND {field} < \"{to}\""))
}

/// The member a listing of any type is filtered on in civil time, by its record kind (reference
/// §2.3): a daily type's date, a sample's time, a sleep's end, any other interval's start.
fn raw_member(data_type: &str) -> &'static str {
    match data_type {
        "sleep" => "interval.civil_end_time",
        t if t.starts_with("daily-") => "date",
        t if sample::SAMPLE_TYPES.contains(&t) => "sample_time.civil_time",
        _ => "interval.civil_start_time",
    }
}

/// The data type a raw read names (`options.type`), as Google spells ids.
fn raw_type(options: &Options) -> String {
    options.get("type").and_then(Value::as_str).map(|t| t.trim().to_string()).unwrap_or_default()
}

/// An instant as Google's filter wants it (RFC 3339 in UTC); one that does not parse is passed as given.
fn instant(s: &str) -> String {
    s.parse::<jiff::Timestamp>().map(|t| t.to_string()).unwrap_or_else(|_| s.to_string())
}

impl Provider for GoogleHealth {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::GOOGLE_HEALTH
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _fields: Option<&[String]>, next: Option<&str>, _cred: &Credential, options: &Options) -> Request {
        let data_type = if kind(c) == Kind::Raw { raw_type(options) } else { c.path.to_string() };
        // The minutes a day is summed from are read reconciled: a watch and a phone counted once.
        let route = if kind(c) == Kind::Total { "dataPoints:reconcile" } else { "dataPoints" };
        let session = matches!(kind(c), Kind::Sleep | Kind::Exercise) || ["sleep", "exercise"].contains(&data_type.as_str());
        let size = if session { SESSION_PAGE } else { PAGE };
        let mut p: Vec<(String, String)> = vec![("pageSize".into(), size.to_string())];
        let unfiltered = kind(c) == Kind::Sleep && self.sleep_unfiltered.load(std::sync::atomic::Ordering::Relaxed);
        if let Some(f) = filter(c, &data_type, w).filter(|_| !unfiltered) {
            p.push(("filter".into(), f));
        }
        if let Some(t) = next.filter(|t| !t.is_empty()) {
            p.push(("pageToken".into(), t.to_string()));
        }
        Request { method: ReadMethod::Get, url: format!("{}/users/me/dataTypes/{data_type}/{route}", self.base), params: p, headers: &[] }
    }
    fn parse_page(&self, c: &CollectionSpec, body: &str, at: &PageAt) -> Result<Page, PageError> {
        let (points, next_token) = decode::envelope(body)?;
        let raw = raw_type(&at.options);
        let t = if kind(c) == Kind::Raw { raw.as_str() } else { c.path };
        let records: Vec<Value> = match kind(c) {
            Kind::Total => points.iter().filter_map(|p| decode::minute(c.name, t, p)).collect(),
            Kind::Daily => points.iter().filter_map(|p| decode::daily(c.name, t, p)).collect(),
            Kind::Sample => points.iter().filter_map(|p| decode::sample(c.name, t, p)).collect(),
            Kind::Sleep => points.iter().filter_map(decode::sleep).collect(),
            Kind::Exercise => points.iter().filter_map(decode::exercise).collect(),
            Kind::Raw => points.iter().map(|p| decode::raw(t, p)).collect(),
        };
        // A filtered listing never reaches past its window, so this ends only an unfiltered one.
        let next_token = next_token.filter(|_| kind(c) != Kind::Sleep || !passed(&records, &at.window));
        Ok(Page { records, next_token })
    }
    fn finish(&self, c: &CollectionSpec, records: Vec<Value>, _options: &Options) -> Finished {
        if kind(c) == Kind::Total {
            return Finished { records: decode::day_totals(c.name, records), notes: vec![] };
        }
        let unfiltered = kind(c) == Kind::Sleep && self.sleep_unfiltered.load(std::sync::atomic::Ordering::Relaxed);
        Finished { records, notes: if unfiltered { vec![UNFILTERED_SLEEP.into()] } else { vec![] } }
    }
    fn refusal(&self, c: &CollectionSpec, req: &Request, status: u16, body: &str) -> Refusal {
        let filtered = req.params.iter().any(|(k, _)| k == "filter");
        match kind(c) {
            Kind::Sleep if status == 400 && filtered && body.contains("INVALID_ARGUMENT") => {
                tracing::warn!("Google Health refused the sleep filter; sleeps are listed without it from now on");
                self.sleep_unfiltered.store(true, std::sync::atomic::Ordering::Relaxed);
                Refusal::AskAgain
            }
            Kind::Raw if status == 400 && body.contains("INVALID_PARENT_DATA_TYPE_COLLECTION") => {
                let t = req.url.rsplit('/').nth(1).unwrap_or_default();
                Refusal::Said(format!(
                    "`options.type`: Google Health serves no data type {t:?} (Google: {}). Send a type id in kebab-case, such as {}.",
                    decode::status(body).map(|s| s.2).unwrap_or_default(),
                    sample::TYPES.iter().chain(sample::OTHER_TYPES).take(24).copied().collect::<Vec<_>>().join(", ")
                ))
            }
            _ => Refusal::AsUsual,
        }
    }
    fn auth_help(&self, status: u16, cred: &Credential) -> String {
        let again = "connect again: vitals_connect with provider=google-health and again=true, or `vitals-mcp auth google-health`";
        match status {
            401 if cred.kind == CredentialKind::OAuth => {
                format!("Google refused the connected account's token (HTTP 401) even after a refresh. {}", self.dead_refresh(cred))
            }
            401 => format!("Google refused the credential (HTTP 401). Connect the account: {again}."),
            _ => {
                let missing = missing_scopes(cred);
                let which = if missing.is_empty() { String::new() } else { format!(" Not granted: {}.", missing.join("; ")) };
                format!(
                    "Google refused the request (HTTP {status}): the login did not grant the permission this data needs, the \
                     Google Health API is not enabled in the Cloud project, or the Fitbit account is not moved to a Google \
                     account yet.{which} To grant it: {again}, and tick every box on Google's consent screen."
                )
            }
        }
    }
    fn unavailable(&self, c: &CollectionSpec, cred: &Credential) -> Option<String> {
        let need = catalog::scope_of(c.name)?;
        let granted = cred.scopes.as_ref().filter(|s| cred.kind == CredentialKind::OAuth && !s.is_empty())?;
        (!granted.iter().any(|s| s == need)).then(|| {
            format!(
                "google_health.{} needs the permission {} ({}), which this Google login did not grant (a box left unticked on \
                 the consent screen). To grant it: vitals_connect with provider=google-health and again=true, and tick it.",
                c.name,
                need.trim_start_matches(catalog::SCOPE_PREFIX),
                scope_words(need)
            )
        })
    }
    fn renew(&self, refused: Option<crate::secret::Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        let renewing = self.cred.stored.renewer(refused)?;
        // What the login said before it was refused, for the words of a refusal.
        let before = self.cred.current();
        Some(Box::pin(async move {
            renewing.await.map_err(|e| match e {
                super::RenewError::Failed(why) => super::RenewError::Failed(format!("{why}. {}", self.dead_refresh(&before))),
                other => other,
            })
        }))
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is vitals' built-in sample of Google Health data (synthetic, in the Google Health API's own format, no \
         network; Google has no sandbox), not the user's own. No Google account is connected. Say so when you use it. To read \
         the user's own Fitbit or Pixel Watch data, connect it: vitals_connect with provider=google-health."
            .into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        match kind(c) {
            Kind::Raw => Some("Google lists nothing of this data type for this account (or the type holds only written data).".into()),
            _ => Some("Google has a day's data only after the Fitbit or Google Health app on the phone synced the watch.".into()),
        }
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&self.sample)
    }
}

impl GoogleHealth {
    /// What a refresh token Google refused means, and what to do: the 7 days of an app in Testing
    /// status are the usual cause (reference §1.4), said with the date when it is known.
    fn dead_refresh(&self, cred: &Credential) -> String {
        let ends = self
            .cred
            .ends(cred)
            .map(|(t, how)| format!(" This login's refresh token was to end at {} ({how}).", crate::time::unix_rfc3339(Some(t)).unwrap_or_default()));
        format!(
            "Google ends the refresh tokens of a Cloud app in Testing status 7 days after the consent, and any login removed at \
             myaccount.google.com/connections.{} For a login that lasts, publish the app In production (Google Cloud console, \
             Google Auth Platform > Audience), then connect again: vitals_connect with provider=google-health and again=true.",
            ends.unwrap_or_default()
        )
    }
}

/// What a scope lets vitals read, in words.
fn scope_words(scope: &str) -> &'static str {
    match scope {
        catalog::ACTIVITY => "activity and fitness",
        catalog::METRICS => "health metrics and measurements",
        catalog::SLEEP => "sleep",
        _ => "a Google Health permission",
    }
}

/// The asked scopes the login did not grant, each with what it covers.
fn missing_scopes(cred: &Credential) -> Vec<String> {
    let Some(granted) = cred.scopes.as_ref().filter(|s| !s.is_empty()) else { return vec![] };
    let asked = catalog::GOOGLE_HEALTH.connection.oauth().map(|o| o.scopes).unwrap_or(&[]);
    asked
        .iter()
        .filter(|s| !granted.iter().any(|g| g == *s))
        .map(|s| {
            let cols: Vec<&str> = catalog::COLLECTIONS.iter().filter(|c| catalog::scope_of(c.name) == Some(*s)).map(|c| c.name).collect();
            format!("{} ({}: {})", s.trim_start_matches(catalog::SCOPE_PREFIX), scope_words(s), cols.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consent_reply_remembers_when_its_refresh_token_ends() {
        let r = token_reply(200, br#"{"access_token":"a","expires_in":3599,"refresh_token":"r","refresh_token_expires_in":604799}"#).unwrap();
        let issued: i64 = r[REFRESH_ISSUED].as_str().unwrap().parse().unwrap();
        let ends: i64 = r[REFRESH_EXPIRES].as_str().unwrap().parse().unwrap();
        assert_eq!(ends - issued, 604_799);
        // A refresh sends no refresh token back: nothing says a new one was issued.
        let r = token_reply(200, br#"{"access_token":"a","expires_in":3599}"#).unwrap();
        assert!(r.get(REFRESH_ISSUED).is_none());
        let e = token_reply(400, br#"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#).unwrap_err();
        assert_eq!(e.0, "invalid_grant");
    }

    #[test]
    fn filters_use_the_types_own_field_and_civil_days() {
        let c = |n: &str| catalog::COLLECTIONS.iter().find(|c| c.name == n).unwrap();
        let w = Window::Dates { start: jiff::civil::date(2026, 6, 1), end: jiff::civil::date(2026, 6, 7) };
        assert_eq!(
            filter(c("sleep"), "sleep", &w).unwrap(),
            r#"sleep.interval.civil_end_time >= "2026-06-01" AND sleep.interval.civil_end_time < "2026-06-08""#
        );
        assert!(filter(c("resting_heart_rate"), "daily-resting-heart-rate", &w).unwrap().starts_with(r#"daily_resting_heart_rate.date >= "2026-06-01""#));
        assert!(filter(c("steps"), "steps", &w).unwrap().starts_with("steps.interval.civil_start_time >="));
        // The raw collection filters any type on the member its record kind has.
        let raw = c("data_points");
        assert!(filter(raw, "blood-glucose", &w).unwrap().starts_with(r#"blood_glucose.sample_time.civil_time >= "2026-06-01""#));
        assert!(filter(raw, "daily-vo2-max", &w).unwrap().starts_with("daily_vo2_max.date >="));
        assert!(filter(raw, "altitude", &w).unwrap().starts_with("altitude.interval.civil_start_time >="));
    }

    #[test]
    fn a_partial_consent_is_said_per_collection() {
        let home = crate::accounts::Home::tenant(std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp/gh-partial")));
        let p = GoogleHealth::in_home(&crate::config::Config::default(), &home);
        let mut cred = Credential::bare(CredentialKind::OAuth, "test".into());
        cred.scopes = Some(vec![catalog::ACTIVITY.to_string()]);
        let c = |n: &str| catalog::COLLECTIONS.iter().find(|c| c.name == n).unwrap();
        assert!(p.unavailable(c("steps"), &cred).is_none());
        let why = p.unavailable(c("sleep"), &cred).expect("sleep was not granted");
        assert!(why.contains("google_health.sleep") && why.contains("sleep.readonly"), "{why}");
        assert!(p.auth_help(403, &cred).contains("sleep.readonly (sleep: sleep)"));
    }
}
