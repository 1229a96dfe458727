//! Withings' ten collections as data (reference `withings/README.md` §4–§8, and its `openapi.yml`
//! for the heart and high-resolution sleep services). Field names carry their unit (`weight_kg`,
//! `total_sleep_min`): Withings sends SI values and seconds, and a name that says the unit is one
//! mistake a model cannot make.
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, Dating, DayPick, Embedded, EmbeddedKind, Flag, Lead, NonGet, OptionSpec, PageOrder, ProviderSpec, RangeKind,
    RateBudget, SampleShape, SeriesSpec, Settles, Span, SpanEnd, Split, TodaySpec,
};
use crate::connection::{AppEnv, ClientAuth, Connection, OAuthSpec, Revoke};
use std::time::Duration;

/// Days per window of the document collections: at one to four measure groups a day, 60 days
/// plus the 2 + 2 padding days fit a page of ~300 (the real page size is undocumented).
const WINDOW_DAYS: u32 = 60;

/// `getmeas` is believed to page newest first (undocumented; issue 15 saw it so in a client's
/// capture, not measured here): the engine holds every page to it and, where one disagrees,
/// vouches for no day of that window and says so. The v2 listings' order is not known at all.
const MEAS_ORDER: PageOrder = PageOrder::NewestFirst;

/// An ECG's signal as an embedded series: `{interval_s, start, items}` (the get reply carries no
/// time, so `start` is null), compacted like any series when it does not fit `max_chars`.
pub const SIGNAL_SHAPE: SampleShape = SampleShape { interval: "interval_s", items: "items", start: "start" };

/// Every body-composition metric, in the order the answer gives them; (meastype, field).
pub const BODY_TYPES: &[(u32, &str)] = &[
    (1, "weight_kg"),
    (6, "fat_ratio_pct"),
    (8, "fat_mass_kg"),
    (5, "fat_free_mass_kg"),
    (76, "muscle_mass_kg"),
    (77, "hydration_kg"),
    (88, "bone_mass_kg"),
    (170, "visceral_fat_index"),
    (168, "extracellular_water_kg"),
    (169, "intracellular_water_kg"),
    (226, "bmr_kcal"),
    (227, "metabolic_age_years"),
    (91, "pulse_wave_velocity_m_s"),
    (155, "vascular_age_years"),
    (11, "standing_heart_rate_bpm"),
];

/// Blood pressure: (meastype, field).
pub const BP_TYPES: &[(u32, &str)] = &[(10, "systolic_mmhg"), (9, "diastolic_mmhg"), (11, "pulse_bpm")];

const MEASUREMENT_FIELDS: &[&str] = &[
    "weight_kg",
    "fat_ratio_pct",
    "fat_mass_kg",
    "fat_free_mass_kg",
    "muscle_mass_kg",
    "hydration_kg",
    "bone_mass_kg",
    "visceral_fat_index",
    "extracellular_water_kg",
    "intracellular_water_kg",
    "bmr_kcal",
    "metabolic_age_years",
    "pulse_wave_velocity_m_s",
    "vascular_age_years",
    "standing_heart_rate_bpm",
    "device_model",
    "source",
    "ambiguous",
    "groups",
];

/// A weigh-in or a cuff reading the device could not attribute to this user, or one typed in by
/// hand (decode.rs sets both from Withings' `attrib`).
static MEASURE_FLAGS: &[Flag] = &[
    Flag::new("ambiguous", "true", "the device could not tell it was this user (maybe someone else)"),
    Flag::new("source", "\"manual\"", "typed in by hand, not measured"),
];

/// A day Withings lists with no device behind it (decode.rs, `activity`).
static ACTIVITY_FLAGS: &[Flag] = &[Flag::new(
    "measured",
    "false",
    "no device measured the day (deviceid null, modelid -1): its steps, distance, minutes, active calories and heart rate are null, not 0, \
     and total_kcal is Withings' resting estimate",
)];

/// A night on a sleep mat or a watch: the totals Withings sends, already in minutes.
static SLEEP_LEAD: &[Lead] = &[
    Lead::clock("bed", "start"),
    Lead::clock("up", "end"),
    Lead::same("total_min", "total_sleep_min"),
    Lead::same("deep_min", "deep_min"),
    Lead::same("rem_min", "rem_min"),
    Lead::same("light_min", "light_min"),
    Lead::same("awake_min", "awake_min"),
    Lead::same("efficiency_pct", "efficiency_pct"),
    Lead::same("latency_min", "latency_min"),
    Lead::same("score", "score"),
    Lead::same("hr_min_bpm", "hr_min_bpm"),
    Lead::same("hr_avg_bpm", "hr_average_bpm"),
    Lead::same("breaths_per_min", "rr_average_per_min"),
    Lead::same("wakeups", "wakeup_count"),
    Lead::same("snoring_min", "snoring_min"),
];

static ACTIVITY_LEAD: &[Lead] = &[
    Lead::same("steps", "steps"),
    Lead::same("active_kcal", "active_kcal"),
    Lead::same("total_kcal", "total_kcal"),
    Lead::km("distance_km", "distance_m"),
    Lead::same("active_min", "active_min"),
    Lead::same("intense_min", "intense_min"),
    Lead::same("hr_avg_bpm", "hr_average_bpm"),
    Lead::same("source", "source"),
];

static WEIGH_IN_LEAD: &[Lead] = &[
    Lead::clock("at", "time"),
    Lead::same("weight_kg", "weight_kg"),
    Lead::same("fat_pct", "fat_ratio_pct"),
    Lead::same("muscle_kg", "muscle_mass_kg"),
    Lead::same("water_kg", "hydration_kg"),
    Lead::same("bone_kg", "bone_mass_kg"),
    Lead::same("visceral_fat", "visceral_fat_index"),
    Lead::same("device", "device_model"),
];

pub static WITHINGS: ProviderSpec = ProviderSpec {
    name: "withings",
    namespace: "withings",
    display: "Withings",
    collections: COLLECTIONS,
    probe: "devices",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("activity", "activity", ACTIVITY_LEAD),
        TodaySpec { latest_within_days: Some(90), ..TodaySpec::days("weigh_in", "measurements", WEIGH_IN_LEAD) },
    ],
    // "At most 366 days per call" (issue 7): one year, leap years included.
    max_days: Some(366),
    // 120 requests per minute per application (reference §3).
    rate_budget: RateBudget { requests: 120, per: Duration::from_secs(60) },
    late_sync: "a scale, a watch or a sleep mat can sync late",
    no_data: &[],
    files: None,
    // 120 requests a minute per app: 8 at once keep a year of a collection to a few rounds and a
    // burst far inside the minute's budget, which other queries share.
    in_flight: 8,
    daily_view: &[
        DailySource::same("sleep_total_min", "sleep", "total_sleep_min", 3),
        DailySource::same("sleep_efficiency_pct", "sleep", "efficiency_pct", 3),
        DailySource::same("sleep_score", "sleep", "score", 3),
        DailySource::same("steps", "activity", "steps", 3),
        DailySource::same("active_kcal", "activity", "active_kcal", 3),
        DailySource::same("weight_kg", "measurements", "weight_kg", 1),
        DailySource::same("body_fat_pct", "measurements", "fat_ratio_pct", 1),
        DailySource::same("systolic_mmhg", "blood_pressure", "systolic_mmhg", 1),
        DailySource::same("diastolic_mmhg", "blood_pressure", "diastolic_mmhg", 1),
    ],
    retries_429: true,
    // Withings reads with form POSTs (reference §1), each with a read `action` (`http::READ_ACTIONS`).
    non_get: &[
        NonGet::post("/measure", "Withings reads weigh-ins with a form POST (`action=getmeas`)"),
        NonGet::post(
            "/v2/measure",
            "Withings reads activity, workouts and intraday data with form POSTs (`getactivity`, `getworkouts`, `getintradayactivity`)",
        ),
        NonGet::post("/v2/sleep", "Withings reads nights and their high-resolution series with form POSTs (`getsummary`, `get`)"),
        NonGet::post("/v2/heart", "Withings lists ECG recordings and reads one's signal with form POSTs (`list`, `get`)"),
        NonGet::post("/v2/user", "Withings lists the user's devices with a form POST (`action=getdevice`)"),
    ],
    legend: LEGEND,
    connection: Connection::OAuth(OAuthSpec {
        app_env: AppEnv { client_id: "VITALS_WITHINGS_CLIENT_ID", client_secret: "VITALS_WITHINGS_CLIENT_SECRET" },
        authorize_url: "https://account.withings.com/oauth2_user/authorize2",
        authorize_env: "VITALS_WITHINGS_AUTHORIZE_URL",
        authorize_params: &[],
        token_urls: &[("https://wbsapi.withings.net/v2/oauth2", "VITALS_WITHINGS_TOKEN_URL")],
        redirect: "http://localhost:8765/callback",
        redirect_env: "VITALS_WITHINGS_REDIRECT_URI",
        // What working clients ask for; sleep is read under user.activity (reference §2.4).
        scopes: &["user.info", "user.metrics", "user.activity"],
        // Withings departs from RFC 6749 (reference §2): comma-separated scopes, no PKCE, the
        // client in the form body, `action=requesttoken` in every token request, and the reply
        // wrapped in `{status, body}` on HTTP 200 whatever happened (super::auth).
        scope_separator: ",",
        scope_prefix: "",
        client_auth: ClientAuth::Body,
        pkce: false,
        token_params: &[("action", "requesttoken")],
        reply: Some(super::auth::reply),
        keep: &["userid"],
        after_exchange: None,
        portal: "https://developer.withings.com/dashboard/",
        // Withings has a revoke action, but it needs a signed nonce; the user ends access in the Withings app.
        revoke: Revoke::InAccount("in your Withings account settings"),
    }),
};

/// What a field means where its name does not say (Withings' own names carry their units).
static LEGEND: &[(&str, &str, &str)] = &[("workouts", "intensity", "0 to 100, as the user rated the workout")];

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "measurements",
        brief: "weigh-ins and body composition",
        path: "measure",
        summary: "Weigh-ins (one row per step-on: the groups one scale stores for it are merged): weight, fat ratio and mass, \
                  fat-free mass, muscle, hydration, bone, visceral fat, extra/intracellular water, BMR, metabolic age, pulse wave \
                  velocity, vascular age, standing heart rate. A metric the scale did not measure is null, never 0.",
        day_keys: &["time"],
        dating: Dating::AccountZone,
        always: &["id", "time"],
        key: Some("id"),
        fields: MEASUREMENT_FIELDS,
        volume: "about one weigh-in a day, small",
        order: MEAS_ORDER,
        split: Split::Days(WINDOW_DAYS),
        flags: MEASURE_FLAGS,
        daily: Some(DailyRule {
            pick: DayPick::First,
            says: "the first weigh-in of the day (the morning one, before food and training move it); later weigh-ins that day are left out and counted",
            settles: Settles::OnArrival,
        }),
        options: &[OptionSpec {
            text: false,
            name: "include_manual",
            default: false,
            doc: "also return weights typed in by hand in the Withings app (flagged source=manual)",
        }],
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "blood_pressure",
        brief: "blood pressure readings",
        path: "measure",
        summary: "Blood pressure readings: systolic and diastolic (mmHg) and pulse (bpm), one row per reading.",
        day_keys: &["time"],
        dating: Dating::AccountZone,
        always: &["id", "time"],
        key: Some("id"),
        fields: &["systolic_mmhg", "diastolic_mmhg", "pulse_bpm", "device_model", "source", "ambiguous"],
        volume: "a few readings a week",
        order: MEAS_ORDER,
        split: Split::Days(WINDOW_DAYS),
        flags: MEASURE_FLAGS,
        daily: Some(DailyRule {
            pick: DayPick::First,
            says: "the first reading of the day; later readings that day are left out and counted",
            settles: Settles::OnArrival,
        }),
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "activity",
        brief: "daily steps, calories, heart rate",
        path: "v2/measure",
        summary: "Daily activity, one row per day and source: steps, distance, floors, soft/moderate/intense/active minutes, \
                  active and total calories, heart rate (null without a heart-rate tracker) and minutes in each heart-rate zone.",
        key: None,
        fields: &[
            "steps",
            "distance_m",
            "floors",
            "soft_min",
            "moderate_min",
            "intense_min",
            "active_min",
            "active_kcal",
            "total_kcal",
            "hr_average_bpm",
            "hr_min_bpm",
            "hr_max_bpm",
            "hr_zone_light_min",
            "hr_zone_moderate_min",
            "hr_zone_intense_min",
            "hr_zone_peak_min",
            "source",
            "is_tracker",
            "measured",
        ],
        split: Split::Days(WINDOW_DAYS),
        flags: ACTIVITY_FLAGS,
        daily: Some(DailyRule {
            pick: DayPick::Largest { by: "steps", only: None },
            says: "Withings sends one row per day and device: the row with the most steps (the device worn most); the others are left out and counted",
            settles: Settles::AtDayEnd,
        }),
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "sleep",
        brief: "nights: stages, score, HR, breathing",
        path: "v2/sleep",
        summary: "One row per night, labelled with the local day it ends: total sleep, time in bed, deep/light/REM/awake minutes, \
                  efficiency, latency, wake-ups, sleep score, heart and breathing rate, snoring, breathing disturbances.",
        always: &["id", "day"],
        key: Some("id"),
        fields: &[
            "start",
            "end",
            "total_sleep_min",
            "time_in_bed_min",
            "deep_min",
            "light_min",
            "rem_min",
            "awake_min",
            "efficiency_pct",
            "latency_min",
            "wakeup_count",
            "score",
            "hr_average_bpm",
            "hr_min_bpm",
            "hr_max_bpm",
            "rr_average_per_min",
            "rr_min_per_min",
            "rr_max_per_min",
            "snoring_min",
            "snoring_episodes",
            "breathing_disturbances",
            "device",
        ],
        volume: "1 row a night, small",
        split: Split::Days(WINDOW_DAYS),
        daily: Some(DailyRule {
            pick: DayPick::Largest { by: "total_sleep_min", only: None },
            says: "the longest sleep that ends on the day (the main night); shorter ones that day are left out and counted",
            settles: Settles::OnArrival,
        }),
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "workouts",
        brief: "workouts",
        path: "v2/measure",
        summary: "Workouts: category, start and end, duration, calories, distance, steps, floors, intensity, heart rate, pauses, SpO2.",
        day_keys: &["day", "start"],
        always: &["id", "day"],
        key: Some("id"),
        fields: &[
            "category",
            "start",
            "end",
            "duration_min",
            "active_kcal",
            "distance_m",
            "steps",
            "floors",
            "intensity",
            "hr_average_bpm",
            "hr_min_bpm",
            "hr_max_bpm",
            "pause_min",
            "spo2_average_pct",
            "source",
        ],
        volume: "a few a week",
        split: Split::Days(WINDOW_DAYS),
        during: Some(Span { start: "start", end: SpanEnd::At("end") }),
        daily: None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "intraday",
        brief: "intraday HR and steps (time series)",
        path: "v2/measure",
        summary: "Intraday heart rate, steps, calories and distance at the device's resolution, UTC timestamps.",
        range: RangeKind::DateTime,
        day_keys: &["timestamp"],
        dating: Dating::QueryZone,
        always: &["timestamp"],
        key: None,
        fields: &["heart_rate_bpm", "steps", "active_kcal", "distance_m", "floors", "duration_s", "source"],
        volume: "up to one sample a minute while worn",
        // Withings returns only the first 24 hours after `startdate` (reference §6 and the spec).
        split: Split::Hours(24),
        series: Some(SeriesSpec {
            stamp: "timestamp",
            values: &["heart_rate_bpm", "steps", "active_kcal", "distance_m"],
            levels: false,
            categories: &["source"],
        }),
        daily: None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "sleep_series",
        brief: "night series: HR, breathing, snoring, HRV",
        path: "v2/sleep",
        summary: "The sleep device's high-resolution night data as a time series, UTC timestamps, one row per reading: the sleep state \
                  of that moment (awake, light, deep, rem, manual, unspecified, out_of_bed), heart rate, breathing rate, seconds snored, \
                  and where the device sends them HRV (SDNN over a minute, RMSSD, Withings' quality score) and movement (0-255). A \
                  night spans two local days: withings.sleep gives its start and end. Bucketed to fit like every series.",
        range: RangeKind::DateTime,
        day_keys: &["timestamp"],
        dating: Dating::QueryZone,
        always: &["timestamp"],
        key: None,
        fields: &["state", "heart_rate_bpm", "breathing_rate_per_min", "snoring_s", "sdnn_1_ms", "rmssd_ms", "hrv_quality", "movement_score", "device"],
        volume: "a reading a minute in bed, about 500 a night",
        // Withings returns only the first 24 hours after `startdate` (reference §6 and the spec).
        split: Split::Hours(24),
        series: Some(SeriesSpec {
            stamp: "timestamp",
            values: &["heart_rate_bpm", "breathing_rate_per_min", "snoring_s", "sdnn_1_ms", "rmssd_ms", "hrv_quality", "movement_score"],
            levels: false,
            categories: &["state", "device"],
        }),
        daily: None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "ecg",
        brief: "ECG recordings: AFib result, heart rate",
        path: "v2/heart",
        summary: "ECG recordings (ScanWatch, Move ECG, BPM Core), one row per recording: its time, the device, the average heart \
                  rate, Withings' AFib classification (negative, positive, inconclusive) and, from a BPM Core, the blood pressure \
                  taken with it. The signal is not listed: withings.ecg_signal reads one recording's by this row's `id`. Reply \
                  shape from Withings' API reference (no recorded reply seen).",
        day_keys: &["time"],
        dating: Dating::OwnOffset,
        always: &["id", "time"],
        key: Some("id"),
        fields: &["device_model", "heart_rate_bpm", "afib", "systolic_mmhg", "diastolic_mmhg"],
        volume: "one row per ECG taken, small",
        split: Split::Days(WINDOW_DAYS),
        daily: None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "ecg_signal",
        brief: "one ECG's signal in µV, by id",
        path: "v2/heart",
        summary: "One ECG recording's signal, by the `id` of a withings.ecg row: the samples in microvolts at the device's rate \
                  (300 Hz for 30 s on a ScanWatch or Move ECG, 500 Hz for 20 s on a BPM Core) as `signal_uv` {interval_s, items}, \
                  the average heart rate, the device and where it was worn. 9,000 to 10,000 samples, tens of thousands of characters; \
                  compacted (said) when it does not fit max_chars. Reply shape from Withings' API reference (no recorded reply seen).",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["id"],
        key: Some("id"),
        fields: &["device_model", "heart_rate_bpm", "sampling_hz", "duration_s", "wear_position", "signal_uv"],
        volume: "one recording: 9,000 to 10,000 samples",
        split: Split::Whole,
        embedded: &[Embedded { field: "signal_uv", kind: EmbeddedKind::Samples(SIGNAL_SHAPE) }],
        by_id: true,
        daily: None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "devices",
        brief: "linked devices, battery",
        path: "v2/user",
        summary: "Linked devices: type, model, battery (high/medium/low/unknown), firmware, first and last sync. No serial numbers or ids.",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["type", "model"],
        key: None,
        fields: &["battery", "firmware", "first_sync", "last_sync", "timezone"],
        volume: "one row a device",
        split: Split::Whole,
        daily: None,
        ..CollectionSpec::DAILY
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_unique_and_every_body_type_has_a_field() {
        for c in WITHINGS.collections {
            let mut f: Vec<_> = c.always.iter().chain(c.fields).collect();
            f.sort();
            let n = f.len();
            f.dedup();
            assert_eq!(n, f.len(), "{} names a field twice", c.name);
        }
        let m = WITHINGS.collection("measurements").unwrap();
        assert!(BODY_TYPES.iter().all(|(_, f)| m.fields.contains(f)));
    }
}
