//! WHOOP API v2's collections as data (reference `whoop/README.md` §3–§6). Every listing is
//! filtered by instants and paged newest first, 25 records at most a page; the decoder
//! (`decode.rs`) gives each record its local day, so the engine asks by days.
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, Dating, DayPick, Flag, Lead, OptionSpec, PageOrder, ProviderSpec, RangeKind, RateBudget, Settles, Split, TodaySpec,
};
use crate::connection::{AppEnv, ClientAuth, Connection, OAuthSpec, Revoke};
use std::time::Duration;

/// A window's days: about 1.2 sleeps, 1 cycle and 1.5 workouts a day, plus two padding days on
/// each side, fit one page of 25 (more are paged, never dropped).
const WINDOW_DAYS: u32 = 10;

static SLEEP_LEAD: &[Lead] = &[
    Lead::same("kind", "kind"),
    Lead::clock("bed", "start_local"),
    Lead::clock("up", "end_local"),
    Lead::same("score_state", "score_state"),
    Lead::same("asleep_min", "asleep_min"),
    Lead::same("deep_min", "deep_min"),
    Lead::same("rem_min", "rem_min"),
    Lead::same("light_min", "light_min"),
    Lead::same("awake_min", "awake_min"),
    Lead::same("need_min", "need_min"),
    Lead::same("performance_pct", "sleep_performance_percentage"),
    Lead::same("efficiency_pct", "sleep_efficiency_percentage"),
    Lead::same("consistency_pct", "sleep_consistency_percentage"),
    Lead::same("breaths_per_min", "respiratory_rate"),
    Lead::same("disturbances", "disturbance_count"),
];

static RECOVERY_LEAD: &[Lead] = &[
    Lead::same("score_state", "score_state"),
    Lead::same("recovery_pct", "recovery_score"),
    Lead::same("hrv_ms", "hrv_rmssd_milli"),
    Lead::same("resting_hr_bpm", "resting_heart_rate"),
    Lead::same("spo2_pct", "spo2_percentage"),
    Lead::same("skin_temp_c", "skin_temp_celsius"),
    Lead::same("calibrating", "user_calibrating"),
];

static STRAIN_LEAD: &[Lead] = &[
    Lead::same("score_state", "score_state"),
    Lead::same("in_progress", "in_progress"),
    Lead::same("strain", "strain"),
    Lead::same("kilojoule", "kilojoule"),
    Lead::same("hr_avg_bpm", "average_heart_rate"),
    Lead::same("hr_max_bpm", "max_heart_rate"),
];

static WORKOUT_LEAD: &[Lead] = &[
    Lead::same("sport", "sport_name"),
    Lead::clock("start", "start_local"),
    Lead::same("score_state", "score_state"),
    Lead::same("duration_min", "duration_min"),
    Lead::same("strain", "strain"),
    Lead::same("hr_avg_bpm", "average_heart_rate"),
    Lead::same("distance_km", "distance_km"),
];

pub static WHOOP: ProviderSpec = ProviderSpec {
    name: "whoop",
    namespace: "whoop",
    display: "WHOOP",
    collections: COLLECTIONS,
    probe: "cycle",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("recovery", "recovery", RECOVERY_LEAD),
        TodaySpec::days("strain", "cycle", STRAIN_LEAD),
        TodaySpec::days("workouts", "workout", WORKOUT_LEAD),
    ],
    max_days: None,
    // 100 requests a minute and 10,000 a day, per app (reference §7).
    rate_budget: RateBudget { requests: 100, per: Duration::from_secs(60) },
    late_sync: "a WHOOP strap syncs through the phone and scores a night or a workout after it ends",
    connection: Connection::OAuth(OAuthSpec {
        app_env: AppEnv { client_id: "VITALS_WHOOP_CLIENT_ID", client_secret: "VITALS_WHOOP_CLIENT_SECRET" },
        authorize_url: "https://api.prod.whoop.com/oauth/oauth2/auth",
        authorize_env: "VITALS_WHOOP_AUTHORIZE_URL",
        authorize_params: &[],
        token_urls: &[("https://api.prod.whoop.com/oauth/oauth2/token", "VITALS_WHOOP_TOKEN_URL")],
        // Whether WHOOP's dashboard still takes a loopback http redirect for a new app is contested
        // (reference §2.2): the default is one, and VITALS_WHOOP_REDIRECT_URI names what the app has.
        redirect: "http://localhost:9878/callback",
        redirect_env: "VITALS_WHOOP_REDIRECT_URI",
        // `offline` is what makes WHOOP issue a refresh token; without it the login dies in an hour.
        scopes: &["offline", "read:recovery", "read:cycles", "read:sleep", "read:workout", "read:profile", "read:body_measurement"],
        scope_separator: " ",
        scope_prefix: "",
        // The client in the form body, as WHOOP's tutorials do; PKCE is not documented (§2.3).
        client_auth: ClientAuth::Body,
        pkce: false,
        // WHOOP's refresh sends `scope=offline` (§2.5); the code exchange takes it too.
        token_params: &[("scope", "offline")],
        reply: None,
        keep: &[],
        after_exchange: None,
        portal: "https://developer-dashboard.whoop.com",
        // WHOOP's only revoke is `DELETE /v2/user/access`: a DELETE, which vitals never sends.
        revoke: Revoke::InAccount("in the WHOOP app (the connected apps of your account), where you remove your vitals app"),
    }),
    no_data: &[],
    files: None,
    // 100 requests a minute: four at once leave room for the limiter to pace the rest.
    in_flight: 4,
    daily_view: &[
        DailySource {
            column: "sleep_total_min",
            collection: "sleep",
            field: "total_sleep_time_milli",
            scale: 1.0 / 60_000.0,
            conversion: Some("milliseconds ÷ 60,000; light + slow-wave + REM"),
            rank: 2,
        },
        DailySource::same("sleep_efficiency_pct", "sleep", "sleep_efficiency_percentage", 2),
        DailySource::same("resting_hr_bpm", "recovery", "resting_heart_rate", 2),
        DailySource::same("hrv_ms", "recovery", "hrv_rmssd_milli", 1),
    ],
    retries_429: true,
    // Its token endpoint is its OAuth's; every read is a GET (and `DELETE /v2/user/access` is never sent).
    legend: LEGEND,
    non_get: &[],
};

/// What every listing shares: days from the decoder, newest first, paged by `nextToken`.
const LISTING: CollectionSpec = CollectionSpec {
    range: RangeKind::Date,
    day_keys: &["day"],
    dating: Dating::RecordedDay,
    always: &["id", "day", "score_state"],
    key: Some("id"),
    order: PageOrder::NewestFirst,
    split: Split::Days(WINDOW_DAYS),
    daily: None,
    ..CollectionSpec::DAILY
};

/// WHOOP's strain is on a scale of its own, and some names carry no unit: each one's.
static LEGEND: &[(&str, &str, &str)] = &[
    ("cycle", "strain", "0 to 21"),
    ("cycle", "average_heart_rate", "bpm"),
    ("cycle", "max_heart_rate", "bpm"),
    ("workout", "strain", "0 to 21"),
    ("workout", "average_heart_rate", "bpm"),
    ("workout", "max_heart_rate", "bpm"),
    ("workout", "percent_recorded", "% of the workout with heart-rate data"),
    ("workout", "zone_zero_milli", "ms below 50 % of the maximum heart rate"),
    ("workout", "zone_one_milli", "ms at 50-60 % of the maximum heart rate"),
    ("workout", "zone_two_milli", "ms at 60-70 %"),
    ("workout", "zone_three_milli", "ms at 70-80 %"),
    ("workout", "zone_four_milli", "ms at 80-90 %"),
    ("workout", "zone_five_milli", "ms at 90-100 %"),
    ("recovery", "recovery_score", "%"),
    ("recovery", "resting_heart_rate", "bpm"),
    ("sleep", "respiratory_rate", "breaths/min"),
    ("body_measurement", "max_heart_rate", "bpm"),
];

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "cycle",
        path: "v2/cycle",
        brief: "day strain, energy, heart rate",
        summary: "WHOOP's physiological cycles: from falling asleep to falling asleep the next night, with the day's strain (0–21), energy \
                  (kJ) and average and maximum heart rate. Filed under the waking day after the sleep that began it; the running cycle \
                  has `in_progress: true` and its values still grow. A day with no cycle of its own was part of a longer one (no sleep \
                  recorded). Read with the sleeps of the same days, which date the cycles.",
        fields: &[
            "id",
            "day",
            "start",
            "end",
            "start_local",
            "end_local",
            "timezone_offset",
            "in_progress",
            "score_state",
            "strain",
            "kilojoule",
            "average_heart_rate",
            "max_heart_rate",
        ],
        volume: "1 row a day, small",
        daily: Some(DailyRule { pick: DayPick::Only, says: "WHOOP sends one cycle a day: that day's cycle", settles: Settles::AtDayEnd }),
        flags: &[Flag::new("in_progress", "true", "still running; strain and energy grow until the next sleep")],
        ..LISTING
    },
    CollectionSpec {
        name: "recovery",
        path: "v2/recovery",
        brief: "recovery score, HRV, resting HR",
        summary: "WHOOP's recovery, one per main sleep (naps get none): recovery score (0–100 %), HRV (RMSSD, ms), resting heart rate, and \
                  SpO2 and skin temperature on WHOOP 4.0 and later. WHOOP gives a recovery no times: it is filed under the morning its \
                  sleep ended, read from the sleeps of the same days. `user_calibrating` is true while WHOOP still learns the baseline.",
        always: &["sleep_id", "day", "score_state"],
        key: Some("sleep_id"),
        fields: &[
            "cycle_id",
            "sleep_id",
            "day",
            "created_at",
            "updated_at",
            "score_state",
            "user_calibrating",
            "recovery_score",
            "resting_heart_rate",
            "hrv_rmssd_milli",
            "spo2_percentage",
            "skin_temp_celsius",
        ],
        volume: "1 row a day, small",
        daily: Some(DailyRule { pick: DayPick::Only, says: "WHOOP sends one recovery a morning (naps get none): that morning's", settles: Settles::OnArrival }),
        flags: &[Flag::new("user_calibrating", "true", "WHOOP is still calibrating: too little data yet for an accurate recovery")],
        ..LISTING
    },
    CollectionSpec {
        name: "sleep",
        path: "v2/activity/sleep",
        brief: "nights and naps: stages, performance",
        summary: "WHOOP's sleeps and naps (`nap`, and `kind`: sleep or nap), filed under the morning they ended in the offset they were \
                  recorded in: time in bed, awake, light, slow-wave (deep) and REM sleep in milliseconds and minutes, sleep need and what \
                  it is made of, performance, efficiency and consistency (%), respiratory rate, cycles and disturbances. \
                  `total_sleep_time_milli` is light + slow-wave + REM (WHOOP sends no total).",
        // A nap is not the night, whatever `fields` asks.
        always: &["id", "day", "score_state", "kind"],
        fields: &[
            "id",
            "cycle_id",
            "day",
            "kind",
            "nap",
            "start",
            "end",
            "start_local",
            "end_local",
            "timezone_offset",
            "score_state",
            "total_in_bed_time_milli",
            "total_awake_time_milli",
            "total_no_data_time_milli",
            "total_light_sleep_time_milli",
            "total_slow_wave_sleep_time_milli",
            "total_rem_sleep_time_milli",
            "total_sleep_time_milli",
            "sleep_cycle_count",
            "disturbance_count",
            "baseline_milli",
            "need_from_sleep_debt_milli",
            "need_from_recent_strain_milli",
            "need_from_recent_nap_milli",
            "sleep_need_milli",
            "respiratory_rate",
            "sleep_performance_percentage",
            "sleep_consistency_percentage",
            "sleep_efficiency_percentage",
            "asleep_min",
            "in_bed_min",
            "awake_min",
            "light_min",
            "deep_min",
            "rem_min",
            "no_data_min",
            "need_min",
        ],
        volume: "1–2 rows a day, small",
        daily: Some(DailyRule {
            pick: DayPick::Largest { by: "total_sleep_time_milli", only: Some(("kind", "sleep")) },
            says: "the longest sleep of the day that is not a nap (naps are left out and counted)",
            settles: Settles::OnArrival,
        }),
        ..LISTING
    },
    CollectionSpec {
        name: "workout",
        path: "v2/activity/workout",
        brief: "workouts: strain, heart-rate zones",
        summary: "WHOOP's workouts (and recovery activities such as meditation, under their own `sport_name`), filed under the day they \
                  started: strain (0–21), average and maximum heart rate, energy (kJ), time in heart-rate zones 0–5 (ms), the share of \
                  heart-rate data recorded, and distance and altitude where they were sent to WHOOP.",
        fields: &[
            "id",
            "day",
            "sport_name",
            "start",
            "end",
            "start_local",
            "end_local",
            "timezone_offset",
            "duration_min",
            "score_state",
            "strain",
            "average_heart_rate",
            "max_heart_rate",
            "kilojoule",
            "percent_recorded",
            "distance_meter",
            "distance_km",
            "altitude_gain_meter",
            "altitude_change_meter",
            "zone_zero_milli",
            "zone_one_milli",
            "zone_two_milli",
            "zone_three_milli",
            "zone_four_milli",
            "zone_five_milli",
        ],
        volume: "0–3 rows a day, small",
        ..LISTING
    },
    CollectionSpec {
        name: "body_measurement",
        path: "v2/user/measurement/body",
        brief: "height, weight, max heart rate",
        summary: "The member's height (m), weight (kg) and WHOOP's maximum heart rate: one current value, no history and no date.",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &[],
        key: None,
        fields: &["height_meter", "weight_kilogram", "max_heart_rate"],
        enveloped: false,
        split: Split::Whole,
        volume: "one object",
        daily: None,
        ..CollectionSpec::DAILY
    },
    CollectionSpec {
        name: "profile",
        path: "v2/user/profile/basic",
        brief: "the member id (name, email on ask)",
        summary: "The WHOOP member id; the name and email only with the option `personal`.",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &[],
        key: None,
        fields: &["user_id", "email", "first_name", "last_name"],
        enveloped: false,
        split: Split::Whole,
        volume: "one object",
        options: &[OptionSpec { text: false, name: "personal", default: false, doc: "also return the name and email" }],
        daily: None,
        ..CollectionSpec::DAILY
    },
];
