//! The Google Health API's collections as data (reference `google-health/README.md` §2–§3).
//! Every collection is one data type read with `GET …/dataTypes/{type}/dataPoints` (or its
//! `:reconcile`, a GET, for the minute totals a day is summed from), filtered in the person's
//! civil time as the type's record kind wants and followed to the last page. The POST roll-ups
//! are not used: the reconciled minutes summed per civil day give the same totals by GET, so
//! the catalog declares no request other than a GET (`non_get` is empty).
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, Dating, DayPick, Lead, OptionSpec, PageOrder, ProviderSpec, RangeKind, RateBudget, SeriesSpec, Settles, Split,
    TodaySpec,
};
use crate::connection::{AppEnv, ClientAuth, Connection, OAuthSpec, Revoke};
use std::time::Duration;

/// Where every scope's name starts.
pub const SCOPE_PREFIX: &str = "https://www.googleapis.com/auth/googlehealth.";
pub const ACTIVITY: &str = "https://www.googleapis.com/auth/googlehealth.activity_and_fitness.readonly";
pub const METRICS: &str = "https://www.googleapis.com/auth/googlehealth.health_metrics_and_measurements.readonly";
pub const SLEEP: &str = "https://www.googleapis.com/auth/googlehealth.sleep.readonly";

/// Google's authorize endpoint.
pub const AUTHORIZE: &str = "https://accounts.google.com/o/oauth2/v2/auth";
/// What a login of vitals always asks Google, on the default URL and an overriding one alike: a
/// refresh token (`access_type=offline`), the consent screen every time so the refresh token comes
/// back (`prompt=consent`), and no scopes of older grants unioned in (reference §1.2).
pub const AUTHORIZE_PARAMS: &[(&str, &str)] = &[("access_type", "offline"), ("prompt", "consent"), ("include_granted_scopes", "false")];

static SLEEP_LEAD: &[Lead] = &[
    Lead::same("main", "main_sleep"),
    Lead::clock("bed", "start_local"),
    Lead::clock("up", "end_local"),
    Lead::same("asleep_min", "asleep_min"),
    Lead::same("deep_min", "deep_min"),
    Lead::same("rem_min", "rem_min"),
    Lead::same("light_min", "light_min"),
    Lead::same("awake_min", "awake_min"),
];

static ACTIVITY_LEAD: &[Lead] = &[Lead::same("steps", "steps")];
static RHR_LEAD: &[Lead] = &[Lead::same("resting_hr_bpm", "bpm")];
static HRV_LEAD: &[Lead] = &[Lead::same("hrv_ms", "rmssd_ms")];
static EXERCISE_LEAD: &[Lead] = &[
    Lead::same("type", "exercise_type"),
    Lead::clock("start", "start_local"),
    Lead::same("active_min", "active_min"),
    Lead::same("kcal", "kcal"),
    Lead::same("hr_avg_bpm", "hr_avg_bpm"),
    Lead::same("distance_km", "distance_km"),
];
static WEIGHT_LEAD: &[Lead] = &[Lead::clock("at", "time_local"), Lead::same("weight_kg", "weight_kg")];

pub static GOOGLE_HEALTH: ProviderSpec = ProviderSpec {
    name: "google-health",
    namespace: "google_health",
    display: "Google Health (Fitbit, Pixel Watch)",
    collections: COLLECTIONS,
    probe: "steps",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("activity", "steps", ACTIVITY_LEAD),
        TodaySpec::days("resting_hr", "resting_heart_rate", RHR_LEAD),
        TodaySpec::days("hrv", "hrv", HRV_LEAD),
        TodaySpec::days("workouts", "exercise", EXERCISE_LEAD),
        TodaySpec { latest_within_days: Some(90), ..TodaySpec::days("weigh_in", "weight", WEIGHT_LEAD) },
    ],
    max_days: None,
    // 300 requests a minute per user (reference §4.1); the project's limits are far above.
    rate_budget: RateBudget { requests: 300, per: Duration::from_secs(60) },
    late_sync: "a Fitbit or Pixel Watch syncs through the phone app, and a night's stages can be recomputed after it ends",
    connection: Connection::OAuth(OAuthSpec {
        app_env: AppEnv { client_id: "VITALS_GOOGLE_HEALTH_CLIENT_ID", client_secret: "VITALS_GOOGLE_HEALTH_CLIENT_SECRET" },
        authorize_url: AUTHORIZE,
        authorize_env: "VITALS_GOOGLE_HEALTH_AUTHORIZE_URL",
        authorize_params: AUTHORIZE_PARAMS,
        token_urls: &[("https://oauth2.googleapis.com/token", "VITALS_GOOGLE_HEALTH_TOKEN_URL")],
        // A loopback redirect, registered on a "Web application" client (reference §1.2).
        redirect: "http://localhost:9879/callback",
        redirect_env: "VITALS_GOOGLE_HEALTH_REDIRECT_URI",
        // Only the read-only scopes the collections need, by name.
        scopes: &[ACTIVITY, METRICS, SLEEP],
        scope_separator: " ",
        scope_prefix: "",
        client_auth: ClientAuth::Body,
        // Google's OAuth server takes S256 PKCE beside the client secret (reference §1.2, [I]).
        pkce: true,
        token_params: &[],
        reply: Some(super::token_reply),
        keep: &[super::REFRESH_ISSUED, super::REFRESH_EXPIRES],
        after_exchange: None,
        portal: "https://console.cloud.google.com/apis/credentials",
        revoke: Revoke::Endpoint { url: "https://oauth2.googleapis.com/revoke", env: "VITALS_GOOGLE_HEALTH_REVOKE_URL", param: "token" },
    }),
    no_data: &[],
    files: None,
    in_flight: 4,
    daily_view: &[
        DailySource::same("sleep_total_min", "sleep", "asleep_min", 1),
        DailySource::same("resting_hr_bpm", "resting_heart_rate", "bpm", 1),
        DailySource::same("hrv_ms", "hrv", "rmssd_ms", 2),
        DailySource::same("steps", "steps", "steps", 1),
        DailySource::same("active_kcal", "calories", "kcal", 1),
        DailySource::same("weight_kg", "weight", "weight_kg", 3),
        DailySource::same("body_fat_pct", "body_fat", "percentage", 3),
    ],
    retries_429: true,
    legend: LEGEND,
    // Every read is a GET; the token and revoke POSTs are the OAuth's declarations.
    non_get: &[],
};

/// Names whose unit the name does not say.
static LEGEND: &[(&str, &str, &str)] = &[
    ("resting_heart_rate", "bpm", "beats/min"),
    ("respiratory_rate", "breaths_per_min", "breaths/min"),
    ("cardio_fitness", "vo2_max", "ml/kg/min"),
    ("heart_rate", "bpm", "beats/min"),
    ("exercise", "azm", "active zone minutes (1 a minute in fat burn, 2 in cardio or peak)"),
];

/// A daily type (`daily-*`): one record a civil day, Google's own `date`.
const DAY_TYPE: CollectionSpec = CollectionSpec {
    range: RangeKind::Date,
    day_keys: &["day"],
    dating: Dating::ProviderDay,
    always: &["day"],
    key: Some("day"),
    order: PageOrder::Unknown,
    split: Split::Days(28),
    daily: Some(DailyRule { pick: DayPick::Only, says: "Google sends one record a day: that day's", settles: Settles::OnArrival }),
    ..CollectionSpec::DAILY
};

/// A day's total summed from reconciled minutes, each under the civil day it started in.
const DAY_TOTAL: CollectionSpec = CollectionSpec {
    dating: Dating::RecordedDay,
    split: Split::Days(7),
    volume: "1 row a day (read from up to 1,440 minutes a day, pages of 1,000)",
    daily: Some(DailyRule { pick: DayPick::Only, says: "the day's minutes summed: one total a day", settles: Settles::AtDayEnd }),
    ..DAY_TYPE
};

/// Instants with the offset they were recorded in (`sampleTime`).
const SAMPLES: CollectionSpec = CollectionSpec {
    dating: Dating::RecordedDay,
    always: &["day", "time"],
    key: Some("time"),
    split: Split::Days(28),
    volume: "a few rows a week",
    daily: Some(DailyRule::FIRST),
    ..DAY_TYPE
};

/// A session (sleep, exercise): 25 a page at most.
const SESSIONS: CollectionSpec =
    CollectionSpec { dating: Dating::RecordedDay, always: &["id", "day"], key: Some("id"), split: Split::Days(14), daily: None, ..DAY_TYPE };

pub static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "steps",
        path: "steps",
        brief: "steps a day",
        summary: "Steps a civil day: the reconciled one-minute counts (watch and phone counted once) summed under the day they \
                  were recorded in, in that moment's offset. Today's total is the day so far.",
        fields: &["day", "steps", "minutes", "offset"],
        ..DAY_TOTAL
    },
    CollectionSpec {
        name: "distance",
        path: "distance",
        brief: "distance a day",
        summary: "Distance a civil day, summed from reconciled one-minute distances (Google sends millimetres): `distance_m` and `distance_km`.",
        fields: &["day", "distance_m", "distance_km", "minutes", "offset"],
        ..DAY_TOTAL
    },
    CollectionSpec {
        name: "calories",
        path: "active-energy-burned",
        brief: "active calories a day",
        summary: "Active energy a civil day (kcal above the resting metabolism), summed from reconciled one-minute values of \
                  `active-energy-burned`. Google's total calories exist only as a roll-up, which vitals does not read.",
        fields: &["day", "kcal", "minutes", "offset"],
        ..DAY_TOTAL
    },
    CollectionSpec {
        name: "floors",
        path: "floors",
        brief: "floors a day",
        summary: "Floors climbed a civil day, summed from reconciled intervals.",
        fields: &["day", "floors", "minutes", "offset"],
        ..DAY_TOTAL
    },
    CollectionSpec {
        name: "active_zone_minutes",
        path: "active-zone-minutes",
        brief: "active zone minutes",
        summary: "Active zone minutes a civil day: one a minute in the fat-burn zone, two in cardio or peak; the total and each zone's.",
        fields: &["day", "azm", "fat_burn", "cardio", "peak", "minutes", "offset"],
        ..DAY_TOTAL
    },
    CollectionSpec {
        name: "heart_rate",
        path: "heart-rate",
        brief: "heart rate samples (time series)",
        summary: "Heart-rate samples (bpm) as the watch recorded them, each instant written in the offset it was recorded in.",
        range: RangeKind::DateTime,
        day_keys: &["timestamp"],
        dating: Dating::OwnOffset,
        always: &["timestamp"],
        key: None,
        fields: &["timestamp", "bpm"],
        series: Some(SeriesSpec { stamp: "timestamp", values: &["bpm"], levels: false, categories: &[] }),
        split: Split::Hours(24),
        volume: "up to thousands of samples a day, pages of 1,000",
        daily: None,
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "resting_heart_rate",
        path: "daily-resting-heart-rate",
        brief: "resting heart rate",
        summary: "Google's resting heart rate of a day (bpm), and whether it was computed with sleep (`WITH_SLEEP`) or awake data only.",
        fields: &["day", "bpm", "calculation_method"],
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "hrv",
        path: "daily-heart-rate-variability",
        brief: "nightly HRV (RMSSD)",
        summary: "Heart-rate variability of the main sleep: RMSSD (ms), RMSSD in deep sleep, the non-REM heart rate and entropy.",
        fields: &["day", "rmssd_ms", "deep_sleep_rmssd_ms", "non_rem_hr_bpm", "entropy"],
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "spo2",
        path: "daily-oxygen-saturation",
        brief: "nightly SpO2",
        summary: "Blood oxygen during the night (%): average, lower and upper bound.",
        fields: &["day", "avg_pct", "low_pct", "high_pct", "stddev_pct"],
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "respiratory_rate",
        path: "daily-respiratory-rate",
        brief: "night breathing rate",
        summary: "Breaths a minute during the main sleep.",
        fields: &["day", "breaths_per_min"],
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "skin_temperature",
        path: "daily-sleep-temperature-derivations",
        brief: "nightly skin temperature",
        summary: "Skin temperature during sleep: the night's mean (°C), the 30-day baseline, and `variation_c` (night minus \
                  baseline), what the Fitbit app shows as skin temperature variation.",
        fields: &["day", "nightly_c", "baseline_c", "variation_c", "relative_stddev_30d_c"],
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "cardio_fitness",
        path: "daily-vo2-max",
        brief: "VO2max",
        summary: "Cardio fitness: VO2max (ml/kg/min), Google's level (POOR to EXCELLENT) and whether it is estimated.",
        fields: &["day", "vo2_max", "level", "estimated"],
        ..DAY_TYPE
    },
    CollectionSpec {
        name: "weight",
        path: "weight",
        brief: "weigh-ins",
        summary: "Weigh-ins (Google sends grams): `weight_kg`, with the local time and offset they were recorded in.",
        fields: &["day", "time", "time_local", "offset", "weight_kg", "notes"],
        ..SAMPLES
    },
    CollectionSpec {
        name: "body_fat",
        path: "body-fat",
        brief: "body fat %",
        summary: "Body fat (%) measurements, with the local time and offset they were recorded in.",
        fields: &["day", "time", "time_local", "offset", "percentage"],
        ..SAMPLES
    },
    CollectionSpec {
        name: "sleep",
        path: "sleep",
        brief: "nights and naps: stages",
        summary: "Sleeps with their stages, each under the civil day it ended (the wake-up day, as Fitbit did), in the offset it \
                  ended in: minutes asleep, awake, in the sleep period, deep, light, REM (STAGES sleeps) or restless (CLASSIC), \
                  `main_sleep`, `nap`, and `stages_status` (why a night has no stages). Google sends no efficiency and no score.",
        always: &["id", "day", "main_sleep"],
        fields: &[
            "id",
            "day",
            "start",
            "end",
            "start_local",
            "end_local",
            "offset",
            "type",
            "main_sleep",
            "nap",
            "stages_status",
            "asleep_min",
            "awake_min",
            "in_period_min",
            "to_fall_asleep_min",
            "deep_min",
            "light_min",
            "rem_min",
            "restless_min",
        ],
        volume: "1–2 rows a day, pages of 25",
        daily: Some(DailyRule {
            pick: DayPick::Largest { by: "asleep_min", only: Some(("nap", "false")) },
            says: "the longest sleep of the day that is not a nap (naps are left out and counted)",
            settles: Settles::OnArrival,
        }),
        ..SESSIONS
    },
    CollectionSpec {
        name: "exercise",
        path: "exercise",
        brief: "exercises: type, kcal, HR, zones",
        summary: "Exercise sessions under the civil day they started: type, name, start and end in their own offset, active \
                  minutes, energy (kcal), distance, steps, average heart rate, elevation gain, active zone minutes and time in \
                  each heart-rate zone.",
        fields: &[
            "id",
            "day",
            "exercise_type",
            "name",
            "start",
            "end",
            "start_local",
            "end_local",
            "offset",
            "active_min",
            "kcal",
            "distance_km",
            "steps",
            "hr_avg_bpm",
            "elevation_gain_m",
            "azm",
            "light_min",
            "moderate_min",
            "vigorous_min",
            "peak_min",
        ],
        volume: "0–2 rows a day, pages of 25",
        ..SESSIONS
    },
    CollectionSpec {
        name: "data_points",
        path: "",
        brief: "any data type, raw",
        summary: "Every data point of one data type over the asked days, as Google sends it: the type's id in `options.type` \
                  (such as `blood-glucose`, `height` or `heart-rate-variability`), so nothing the API serves is out of reach. \
                  Each row: the civil `day` its record kind dates it by, `name`, `data_source` and `value`.",
        always: &["day", "name"],
        key: Some("name"),
        fields: &["day", "name", "data_source", "value"],
        options: &[OptionSpec {
            text: true,
            name: "type",
            // Required: a listing names its type.
            default: true,
            doc: "the data type's id (blood-glucose, height, heart-rate-variability), required",
        }],
        dating: Dating::RecordedDay,
        split: Split::Days(7),
        volume: "as the type holds: a few a month to thousands a day, pages of 1,000",
        daily: None,
        ..DAY_TYPE
    },
];

/// The scope a collection needs (reference §1.3 and §3.1; per type partly inferred there).
pub fn scope_of(c: &str) -> Option<&'static str> {
    match c {
        "sleep" => Some(SLEEP),
        "steps" | "distance" | "calories" | "floors" | "active_zone_minutes" | "exercise" | "cardio_fitness" => Some(ACTIVITY),
        "data_points" => None,
        _ => Some(METRICS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_only_scopes_are_asked_and_each_collection_names_one() {
        let o = GOOGLE_HEALTH.connection.oauth().expect("an OAuth login");
        assert!(o.scopes.iter().all(|s| s.starts_with(SCOPE_PREFIX) && s.ends_with(".readonly")), "{:?}", o.scopes);
        for c in COLLECTIONS.iter().filter(|c| c.name != "data_points") {
            let s = scope_of(c.name).expect("a scope");
            assert!(o.scopes.contains(&s), "{}: {s} is not asked", c.name);
        }
        assert!(o.pkce && o.authorize_params.contains(&("access_type", "offline")) && o.authorize_params.contains(&("prompt", "consent")));
    }
}
