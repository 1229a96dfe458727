//! Oura's 19 collections as data (from `openapi.json` ≥ 1.43 and the measured quirks).
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, Dating, DayPick, Embedded, EmbeddedKind::*, Flag, Lead, NightSpec, PageOrder, ProviderSpec, RangeKind::*,
    RateBudget, SampleShape, SeriesSpec, Settles, Span, SpanEnd, Split, Stage, Stat, TodaySpec,
};
use crate::connection::{AppEnv, ClientAuth, Connection, OAuthSpec, Revoke};
use std::time::Duration;

/// "Results come oldest first" (reference: stated, and seen on the real API), for every listing.
const ORDER: PageOrder = PageOrder::OldestFirst;

const DOC: &[&str] = &["id", "day"];

/// Oura's embedded sample series: `{"interval": seconds, "items": [number|null], "timestamp": start}`.
const SAMPLES: SampleShape = SampleShape { interval: "interval", items: "items", start: "timestamp" };
const SERIES: &[&str] = &["timestamp"];

/// Document pages hold 25 records on the twin (unknown upstream): 18 days plus the 2+2 padding
/// days fit one page for one-a-day collections.
const DOC_WINDOW_DAYS: u32 = 18;

/// Heart rate comes 1,000 rows a page. At ~1,231 a day (~51 an hour) 19 hours fill one page
/// (~975) with a little room, so a month is 40 independent single-page windows; an account whose
/// ring records more or fewer gets windows sized to its own density (engine/density.rs).
const HR_WINDOW_HOURS: u32 = 19;
const HR_PAGE_ROWS: u32 = 1000;

static SLEEP_SERIES: &[Embedded] = &[
    Embedded { field: "heart_rate", kind: Samples(SAMPLES) },
    Embedded { field: "hrv", kind: Samples(SAMPLES) },
    Embedded { field: "movement_30_sec", kind: Epochs(30) },
    Embedded { field: "sleep_phase_30_sec", kind: Epochs(30) },
    Embedded { field: "sleep_phase_5_min", kind: Epochs(300) },
    Embedded { field: "app_sleep_phase_5_min", kind: Epochs(300) },
];

/// A night as people ask about it: Oura's own totals (a night can have naps beside the long sleep).
static SLEEP_LEAD: &[Lead] = &[
    Lead::same("type", "type"),
    Lead::clock("bed", "bedtime_start"),
    Lead::clock("up", "bedtime_end"),
    Lead::minutes("total_min", "total_sleep_duration"),
    Lead::minutes("deep_min", "deep_sleep_duration"),
    Lead::minutes("rem_min", "rem_sleep_duration"),
    Lead::minutes("light_min", "light_sleep_duration"),
    Lead::minutes("awake_min", "awake_time"),
    Lead::same("efficiency_pct", "efficiency"),
    Lead::minutes("latency_min", "latency"),
    Lead::same("hr_lowest_bpm", "lowest_heart_rate"),
    Lead::same("hr_avg_bpm", "average_heart_rate"),
    Lead::series("hr_max_bpm", "heart_rate", Stat::Max),
    Lead::same("hrv_avg_ms", "average_hrv"),
    Lead::series("hrv_max_ms", "hrv", Stat::Max),
    Lead::same("breaths_per_min", "average_breath"),
];

static SLEEP_SCORE_LEAD: &[Lead] = &[
    Lead::same("score", "score"),
    Lead::field("contributors.total_sleep"),
    Lead::field("contributors.efficiency"),
    Lead::field("contributors.restfulness"),
    Lead::field("contributors.rem_sleep"),
    Lead::field("contributors.deep_sleep"),
    Lead::field("contributors.latency"),
    Lead::field("contributors.timing"),
];

static READINESS_LEAD: &[Lead] = &[
    Lead::same("score", "score"),
    Lead::same("temp_dev_c", "temperature_deviation"),
    Lead::field("contributors.resting_heart_rate"),
    Lead::field("contributors.hrv_balance"),
    Lead::field("contributors.recovery_index"),
    Lead::field("contributors.previous_night"),
    Lead::field("contributors.sleep_balance"),
    Lead::field("contributors.previous_day_activity"),
    Lead::field("contributors.activity_balance"),
    Lead::field("contributors.body_temperature"),
];

static ACTIVITY_LEAD: &[Lead] = &[
    Lead::same("score", "score"),
    Lead::same("steps", "steps"),
    Lead::same("active_kcal", "active_calories"),
    Lead::same("total_kcal", "total_calories"),
    Lead::minutes("high_min", "high_activity_time"),
    Lead::minutes("medium_min", "medium_activity_time"),
    Lead::minutes("low_min", "low_activity_time"),
    Lead::minutes("sedentary_min", "sedentary_time"),
    Lead::km("walk_km", "equivalent_walking_distance"),
];

macro_rules! col {
    ($name:literal, $range:expr, $latest:expr, $summary:literal, $day:expr, $always:expr, $fields:expr, $volume:literal) => {
        CollectionSpec {
            name: $name,
            path: $name,
            brief: "",
            summary: $summary,
            range: $range,
            latest: $latest,
            projectable: true,
            day_keys: $day,
            always: $always,
            key: Some("id"),
            fields: $fields,
            volume: $volume,
            order: ORDER,
            split: Split::Days(DOC_WINDOW_DAYS),
            daily: Option::None,
            ..CollectionSpec::DAILY
        }
    };
}

pub static OURA: ProviderSpec = ProviderSpec {
    name: "oura",
    namespace: "oura",
    display: "Oura",
    collections: COLLECTIONS,
    probe: "daily_sleep",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("sleep_score", "daily_sleep", SLEEP_SCORE_LEAD),
        TodaySpec::days("readiness", "daily_readiness", READINESS_LEAD),
        TodaySpec::days("activity", "daily_activity", ACTIVITY_LEAD),
    ],
    max_days: Option::None,
    // Oura's published limit: 5,000 requests per 5 minutes.
    rate_budget: RateBudget { requests: 5000, per: Duration::from_secs(300) },
    late_sync: "a ring can sync late",
    no_data: &[],
    files: Option::None,
    // 5,000 requests per 5 minutes: a month of heart rate (~40 windows) can all leave at once.
    in_flight: 32,
    daily_view: &[
        DailySource {
            column: "sleep_total_min",
            collection: "sleep",
            field: "total_sleep_duration",
            scale: 1.0 / 60.0,
            conversion: Some("seconds ÷ 60"),
            rank: 1,
        },
        DailySource::same("sleep_efficiency_pct", "sleep", "efficiency", 1),
        DailySource::same("sleep_score", "daily_sleep", "score", 1),
        DailySource::same("resting_hr_bpm", "sleep", "lowest_heart_rate", 2),
        DailySource::same("hrv_ms", "sleep", "average_hrv", 1),
        DailySource::same("steps", "daily_activity", "steps", 2),
        DailySource::same("active_kcal", "daily_activity", "active_calories", 2),
        DailySource::same("readiness_score", "daily_readiness", "score", 1),
    ],
    retries_429: true,
    // Its token endpoints and revoke are its OAuth's; every read is a GET.
    non_get: &[],
    legend: LEGEND,
    connection: Connection::OAuth(OAuthSpec {
        app_env: AppEnv { client_id: "VITALS_OURA_CLIENT_ID", client_secret: "VITALS_OURA_CLIENT_SECRET" },
        authorize_url: "https://cloud.ouraring.com/oauth/authorize",
        authorize_env: "VITALS_OURA_AUTHORIZE_URL",
        authorize_params: &[],
        // The new identity provider first: the legacy endpoint refuses new-portal apps and a refused
        // exchange burns the single-use code (reference §8.2).
        token_urls: &[
            ("https://moi.ouraring.com/oauth/v2/ext/oauth-token", "VITALS_OURA_TOKEN_URL"),
            ("https://api.ouraring.com/oauth/token", "VITALS_OURA_TOKEN_URL_LEGACY"),
        ],
        redirect: "http://localhost:9876/callback/",
        redirect_env: "VITALS_OURA_REDIRECT_URI",
        scopes: &["email", "personal", "daily", "heartrate", "workout", "tag", "session", "spo2", "heart_health"],
        // RFC 6749 with PKCE (S256), the client in the form body as Oura documents.
        scope_separator: " ",
        scope_prefix: "extapi:",
        client_auth: ClientAuth::Body,
        pkce: true,
        token_params: &[],
        reply: Option::None,
        keep: &[],
        after_exchange: Option::None,
        portal: "https://developer.ouraring.com",
        // Not in Oura's spec; third-party guides send the access token as a query parameter
        // (reference §8.2, inferred), so all three parts are data that can be corrected here.
        revoke: Revoke::Endpoint { url: "https://api.ouraring.com/oauth/revoke", env: "VITALS_OURA_REVOKE_URL", param: "access_token" },
    }),
};

/// Oura's fields carry no unit in their names: each one's, and what its codes stand for (Oura's API
/// reference).
static LEGEND: &[(&str, &str, &str)] = &[
    ("sleep", "average_breath", "breaths/min"),
    ("sleep", "average_heart_rate", "bpm"),
    ("sleep", "lowest_heart_rate", "bpm"),
    ("sleep", "average_hrv", "ms (RMSSD)"),
    ("sleep", "hrv", "ms (RMSSD), in `items` every `interval` s"),
    ("sleep", "total_sleep_duration", "s"),
    ("sleep", "deep_sleep_duration", "s"),
    ("sleep", "light_sleep_duration", "s"),
    ("sleep", "rem_sleep_duration", "s"),
    ("sleep", "awake_time", "s"),
    ("sleep", "time_in_bed", "s"),
    ("sleep", "latency", "s"),
    ("sleep", "efficiency", "%"),
    ("sleep", "movement_30_sec", "a digit per 30 s: 1 still to 4 restless"),
    ("daily_activity", "active_calories", "kcal"),
    ("daily_activity", "total_calories", "kcal"),
    ("daily_activity", "target_calories", "kcal"),
    ("daily_activity", "equivalent_walking_distance", "m"),
    ("daily_activity", "meters_to_target", "m"),
    ("daily_activity", "target_meters", "m"),
    ("daily_activity", "high_activity_time", "s"),
    ("daily_activity", "medium_activity_time", "s"),
    ("daily_activity", "low_activity_time", "s"),
    ("daily_activity", "sedentary_time", "s"),
    ("daily_activity", "resting_time", "s"),
    ("daily_activity", "non_wear_time", "s"),
    ("daily_activity", "met", "MET, in `items` every `interval` s"),
    ("daily_activity", "class_5_min", "a digit per 300 s: 0 non-wear, 1 rest, 2 inactive, 3 low, 4 medium, 5 high activity"),
    ("daily_readiness", "temperature_deviation", "°C from the body's baseline"),
    ("daily_readiness", "temperature_trend_deviation", "°C"),
    ("daily_spo2", "breathing_disturbance_index", "breathing disturbances an hour"),
    ("daily_stress", "stress_high", "s"),
    ("daily_stress", "recovery_high", "s"),
    ("daily_cardiovascular_age", "pulse_wave_velocity", "m/s"),
    ("daily_cardiovascular_age", "vascular_age", "years"),
    ("ring_battery_level", "level", "%"),
    ("workout", "calories", "kcal"),
    ("workout", "distance", "m"),
    ("session", "heart_rate", "bpm, in `items` every `interval` s"),
    ("session", "heart_rate_variability", "ms, in `items` every `interval` s"),
    ("vO2_max", "vo2_max", "ml/kg/min"),
];

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        brief: "steps, calories, activity minutes, score",
        embedded: &[Embedded { field: "met", kind: Samples(SAMPLES) }, Embedded { field: "class_5_min", kind: Epochs(300) }],
        daily: Some(DailyRule::ONE_A_DAY),
        ..col!(
            "daily_activity",
            Date,
            false,
            "Daily activity (a day starts at 4 a.m.): steps, calories, activity times, score, per-minute MET series.",
            &["day", "timestamp"],
            DOC,
            &[
                "score",
                "active_calories",
                "average_met_minutes",
                "contributors",
                "equivalent_walking_distance",
                "high_activity_met_minutes",
                "high_activity_time",
                "inactivity_alerts",
                "low_activity_met_minutes",
                "low_activity_time",
                "medium_activity_met_minutes",
                "medium_activity_time",
                "met",
                "meters_to_target",
                "non_wear_time",
                "resting_time",
                "sedentary_met_minutes",
                "sedentary_time",
                "steps",
                "target_calories",
                "target_meters",
                "total_calories",
                "class_5_min",
                "timestamp"
            ],
            "1 record a day, ~8,400 characters each (87% in `met`)"
        )
    },
    CollectionSpec {
        brief: "vascular age, pulse wave velocity",
        daily: Some(DailyRule::ONE_A_DAY),
        ..col!(
            "daily_cardiovascular_age",
            Date,
            false,
            "Daily vascular age and pulse wave velocity.",
            &["day"],
            DOC,
            &["vascular_age", "pulse_wave_velocity"],
            "1 record a day, small"
        )
    },
    CollectionSpec {
        brief: "readiness score and contributors",
        // The night (and the score made on waking) is final once it is there: today's is complete.
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..col!(
            "daily_readiness",
            Date,
            false,
            "Daily readiness score, temperature deviation and contributors.",
            &["day", "timestamp"],
            DOC,
            &["score", "temperature_deviation", "temperature_trend_deviation", "contributors", "timestamp"],
            "1 record a day, small"
        )
    },
    CollectionSpec {
        brief: "resilience level and contributors",
        daily: Some(DailyRule::ONE_A_DAY),
        ..col!(
            "daily_resilience",
            Date,
            false,
            "Daily resilience level and its contributors.",
            &["day"],
            DOC,
            &["level", "contributors"],
            "1 record a day, small"
        )
    },
    CollectionSpec {
        brief: "sleep score and contributors",
        // The night (and the score made on waking) is final once it is there: today's is complete.
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..col!(
            "daily_sleep",
            Date,
            false,
            "Daily sleep score and its contributors.",
            &["day", "timestamp"],
            DOC,
            &["score", "contributors", "timestamp"],
            "1 record a day, ~240 characters"
        )
    },
    CollectionSpec {
        brief: "night SpO2, breathing disturbances",
        // The night (and the score made on waking) is final once it is there: today's is complete.
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..col!(
            "daily_spo2",
            Date,
            false,
            "Nightly average SpO2 and breathing disturbance index (Gen 3+ rings).",
            &["day"],
            DOC,
            &["spo2_percentage", "breathing_disturbance_index"],
            "1 record a day, small"
        )
    },
    CollectionSpec {
        brief: "stress and recovery time",
        daily: Some(DailyRule::ONE_A_DAY),
        ..col!(
            "daily_stress",
            Date,
            false,
            "Daily high-stress and high-recovery seconds and a day summary.",
            &["day"],
            DOC,
            &["stress_high", "recovery_high", "day_summary"],
            "1 record a day, small"
        )
    },
    CollectionSpec {
        brief: "the user's tags",
        ..col!(
            "enhanced_tag",
            Date,
            false,
            "Tags the user added (type, custom name, comment, start/end).",
            &["start_day", "start_time"],
            &["id", "start_day"],
            &["tag_type_code", "start_time", "end_time", "start_day", "end_day", "comment", "custom_name"],
            "a few a week"
        )
    },
    CollectionSpec {
        brief: "heart rate samples (time series)",
        order: ORDER,
        split: Split::Fill { hours: HR_WINDOW_HOURS, page_rows: HR_PAGE_ROWS },
        // Samples carry no id: a repeat is told by its instant.
        key: Option::None,
        series: Some(SeriesSpec { stamp: "timestamp", values: &["bpm"], levels: false, categories: &["source"] }),
        // UTC instants: Oura sends no offset with a sample.
        dating: Dating::QueryZone,
        ..col!(
            "heartrate",
            DateTime,
            true,
            "Heart-rate samples (bpm, source), UTC timestamps.",
            &["timestamp"],
            SERIES,
            &["bpm", "source", "timestamp", "timestamp_unix"],
            "~1,231 samples a day, pages of 1,000"
        )
    },
    CollectionSpec {
        name: "personal_info",
        brief: "profile (a connected account only)",
        path: "personal_info",
        summary: "The user's profile: age, weight, height, biological sex, email.",
        range: None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["id"],
        key: Some("id"),
        fields: &["id", "age", "weight", "height", "biological_sex", "email"],
        enveloped: false,
        in_sandbox: false,
        volume: "one object",
        order: ORDER,
        split: Split::Whole,
        daily: Option::None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        brief: "rest mode periods",
        ..col!(
            "rest_mode_period",
            Date,
            false,
            "Rest mode periods with their episodes.",
            &["start_day", "start_time"],
            &["id", "start_day"],
            &["start_day", "end_day", "start_time", "end_time", "episodes"],
            "rare"
        )
    },
    CollectionSpec {
        brief: "ring battery (time series)",
        // ~288 a day: three days fill most of a 1,000-row page.
        order: ORDER,
        split: Split::Hours(72),
        key: Option::None,
        series: Some(SeriesSpec { stamp: "timestamp", values: &["level"], levels: true, categories: &["charging", "in_charger"] }),
        // UTC instants: Oura sends no offset with a sample.
        dating: Dating::QueryZone,
        ..col!(
            "ring_battery_level",
            DateTime,
            true,
            "Ring battery level samples (level, charging), UTC timestamps.",
            &["timestamp"],
            SERIES,
            &["level", "charging", "in_charger", "timestamp", "timestamp_unix"],
            "~300 samples a day"
        )
    },
    CollectionSpec {
        name: "ring_configuration",
        brief: "the user's rings",
        path: "ring_configuration",
        summary: "The user's rings: color, design, firmware, hardware, size, set-up time.",
        range: None,
        projectable: true,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["id"],
        key: Some("id"),
        fields: &["color", "design", "firmware_version", "hardware_type", "set_up_at", "size"],
        volume: "one record a ring",
        order: ORDER,
        split: Split::Whole,
        daily: Option::None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        brief: "meditation and breathing sessions",
        embedded: &[
            Embedded { field: "heart_rate", kind: Samples(SAMPLES) },
            Embedded { field: "heart_rate_variability", kind: Samples(SAMPLES) },
            Embedded { field: "motion_count", kind: Samples(SAMPLES) },
        ],
        ..col!(
            "session",
            Date,
            false,
            "Guided and unguided sessions (breathing, meditation, nap...) with HR/HRV/motion series.",
            &["day", "start_datetime"],
            DOC,
            &["start_datetime", "end_datetime", "type", "heart_rate", "heart_rate_variability", "mood", "motion_count"],
            "a few a week"
        )
    },
    CollectionSpec {
        brief: "each sleep: stages, HR, HRV, hypnogram",
        daily: Some(DailyRule {
            pick: DayPick::Largest { by: "total_sleep_duration", only: Some(("type", "long_sleep")) },
            says: "the day's longest long_sleep (the main night); naps and short sleeps are left out, and a day with only those counts as missing",
            settles: Settles::OnArrival,
        }),
        embedded: SLEEP_SERIES,
        night: Some(NightSpec {
            hypnogram: "sleep_phase_5_min",
            start: "bedtime_start",
            end: "bedtime_end",
            epoch_s: 300,
            legend: &[('1', Stage::Deep), ('2', Stage::Light), ('3', Stage::Rem), ('4', Stage::Awake)],
            heart_rate: Some("heart_rate"),
            hrv: Some("hrv"),
            totals: &[
                (Stage::Deep, "deep_sleep_duration", 60.0),
                (Stage::Rem, "rem_sleep_duration", 60.0),
                (Stage::Light, "light_sleep_duration", 60.0),
                (Stage::Awake, "awake_time", 60.0),
            ],
        }),
        ..col!(
            "sleep",
            Date,
            false,
            "Sleep periods (several a day possible), filed under the wake-up day, with 5-minute HR/HRV series and hypnograms.",
            &["day", "bedtime_start"],
            // A nap or a rest is not the night, whatever `fields` asks.
            &["id", "day", "type"],
            &[
                "average_breath",
                "average_heart_rate",
                "average_hrv",
                "awake_time",
                "bedtime_end",
                "bedtime_start",
                "deep_sleep_duration",
                "efficiency",
                "heart_rate",
                "hrv",
                "latency",
                "light_sleep_duration",
                "low_battery_alert",
                "lowest_heart_rate",
                "movement_30_sec",
                "period",
                "readiness",
                "readiness_score_delta",
                "rem_sleep_duration",
                "restless_periods",
                "sleep_phase_5_min",
                "sleep_phase_30_sec",
                "app_sleep_phase_5_min",
                "sleep_score_delta",
                "sleep_algorithm_version",
                "sleep_analysis_reason",
                "time_in_bed",
                "total_sleep_duration",
                "type",
                "ring_id"
            ],
            "1–2 records a day, ~4,000 characters each"
        )
    },
    CollectionSpec {
        brief: "recommended bedtime",
        ..col!(
            "sleep_time",
            Date,
            false,
            "Recommended bedtime window and status.",
            &["day"],
            DOC,
            &["optimal_bedtime", "recommendation", "status"],
            "1 record a day, small"
        )
    },
    CollectionSpec {
        brief: "old tags (deprecated)",
        ..col!("tag", Date, false, "Deprecated tags (use enhanced_tag).", &["day", "timestamp"], DOC, &["text", "timestamp", "tags"], "rare")
    },
    CollectionSpec {
        brief: "VO2 max estimates",
        daily: Some(DailyRule::ONE_A_DAY),
        ..col!("vO2_max", Date, false, "VO2 max estimates.", &["day", "timestamp"], DOC, &["timestamp", "vo2_max"], "about one a week")
    },
    CollectionSpec {
        brief: "workouts",
        flags: &[Flag::new("source", "\"manual\"", "entered by hand, not recorded by the ring")],
        during: Some(Span { start: "start_datetime", end: SpanEnd::At("end_datetime") }),
        ..col!(
            "workout",
            Date,
            false,
            "Workouts (activity, intensity, calories, distance, source); upstream filters them by UTC date, we by local day.",
            &["day", "start_datetime"],
            DOC,
            &["activity", "calories", "distance", "end_datetime", "intensity", "label", "source", "start_datetime"],
            "a few a week"
        )
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn all_nineteen_collections_with_unique_names() {
        assert_eq!(OURA.collections.len(), 19);
        let mut names: Vec<_> = OURA.collections.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 19);
        assert_eq!(OURA.collections.iter().filter(|c| c.latest).map(|c| c.name).collect::<Vec<_>>(), ["heartrate", "ring_battery_level"]);
    }
}
