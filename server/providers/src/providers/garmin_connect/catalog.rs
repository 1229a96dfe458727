//! Garmin Connect's private API as data: the eleven collections the official Personal API does not
//! serve (reference garmin/README.md §5, personal-api.md §8), named `garmin.*` beside the Personal
//! API's, and the session connection (a login or an import of another tool's tokens). Every
//! collection says it comes from an unofficial API.
use crate::catalog::{
    CollectionSpec, DailyRule, Dating, Embedded, EmbeddedKind, Lead, OptionSpec, PageOrder, ProviderSpec, RangeKind, RateBudget, Split, TodaySpec,
};
use crate::connection::{Connection, ImportSpec, Revoke, SessionSpec};
use std::time::Duration;

/// Said in every collection's summary, so `vitals_sources` carries it wherever the data is listed.
macro_rules! unofficial {
    ($s:literal) => {
        concat!($s, " From Garmin Connect's unofficial API (needs the garmin-connect session): it may stop working without notice.")
    };
}

/// "Should I train hard today?": Garmin's own answer, with what moved it.
static READINESS_LEAD: &[Lead] = &[
    Lead::clock("at", "time_local"),
    Lead::same("morning", "morning"),
    Lead::same("score", "score"),
    Lead::same("level", "level"),
    Lead::same("recovery_min", "recovery_time_min"),
    Lead::same("acute_load", "acute_load"),
    Lead::same("hrv_weekly_avg_ms", "hrv_weekly_avg_ms"),
    Lead::same("sleep_score", "sleep_score"),
    Lead::same("feedback", "feedback"),
];

pub static GARMIN_CONNECT: ProviderSpec = ProviderSpec {
    name: "garmin-connect",
    namespace: "garmin",
    display: "Garmin Connect (unofficial)",
    collections: COLLECTIONS,
    probe: "training_readiness",
    today: &[TodaySpec::days("readiness", "training_readiness", READINESS_LEAD)],
    max_days: Some(366),
    // No published numbers. The same ceiling as the Personal API's: two in flight (below) is what
    // keeps a session out of trouble, and a year of a one-day route (366 requests) takes 3 minutes.
    rate_budget: RateBudget { requests: 120, per: Duration::from_secs(60) },
    late_sync: "a Garmin watch syncs through Garmin Connect, sometimes hours later",
    connection: Connection::Session(SessionSpec {
        // The hooks' errors are `StepError`s; sso.rs and tokens.rs still say theirs in words.
        login: Some(|f, c| super::sso::submit(f, c)),
        refresh: Some(super::tokens::refresh),
        import: Some(ImportSpec {
            default_dir: "~/.garminconnect",
            dir_env: &["GARMINTOKENS", "GARTH_HOME"],
            from: "garminconnect (garmin_tokens.json) or garth (oauth1_token.json and oauth2_token.json)",
            offer: "Use tokens from another Garmin tool",
            read: |d, c| Box::pin(async move { super::tokens::import(d, c).await.map_err(Into::into) }),
        }),
        portal: Some("https://connect.garmin.com"),
        caution: "Garmin Connect (unofficial) signs in to Garmin's private mobile API, as the Garmin Connect app does, for what \
                  Garmin's official Personal API does not serve: training readiness, training status, VO2max history, race \
                  predictions, lactate threshold, personal records, activity splits, endurance and hill scores, breathing rate and \
                  sleep-score history. Garmin does not support it: it may stop \
                  working without notice, and Garmin refuses logins it finds suspicious (often for hours). Your password is used \
                  once, for the login, and never stored; only the tokens Garmin returns are kept. Already signed in with \
                  garminconnect or garth? Import their tokens instead of logging in here.",
        revoke: Revoke::InAccount("by changing your Garmin password, which ends every session (Garmin has no way to end one session)"),
        renew_before_s: super::config::RENEW_BEFORE_S,
        explicit: true,
        login_env: Some(("GARMIN_EMAIL", "GARMIN_PASSWORD")),
    }),
    no_data: &[204],
    files: None,
    // The data API answers bursts with 429, which is never retried in a loop: two at a time.
    in_flight: 2,
    daily_view: &[],
    retries_429: false,
    // Signing in is how Garmin Connect lets anyone read at all (config.rs, with its hosts).
    legend: LEGEND,
    non_get: super::config::NON_GET,
};

const DAYS: CollectionSpec = CollectionSpec { exact_days: true, in_sandbox: false, ..CollectionSpec::DAILY };

/// Garmin's scores are on scales of their own: each one's, where the name does not say.
static LEGEND: &[(&str, &str, &str)] =
    &[("training_readiness", "score", "0 to 100"), ("hill_score", "score", "0 to 100"), ("sleep_scores", "score", "0 to 100")];

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "training_readiness",
        brief: "training readiness",
        path: "metrics-service/metrics/trainingreadiness",
        summary: unofficial!(
            "Training readiness snapshots (several a day; `morning` marks the report after waking): score 0–100, level, \
             Garmin's feedback, recovery time left (min), acute load, HRV weekly average and each factor's percent."
        ),
        day_keys: &["day"],
        dating: Dating::ProviderDay,
        always: &["day", "time_local"],
        key: Some("time_local"),
        fields: &[
            "morning",
            "score",
            "level",
            "feedback",
            "feedback_long",
            "recovery_time_min",
            "acute_load",
            "hrv_weekly_avg_ms",
            "sleep_score",
            "sleep_score_pct",
            "recovery_time_pct",
            "acute_load_pct",
            "stress_history_pct",
            "hrv_pct",
            "sleep_history_pct",
            "context",
        ],
        volume: "a few rows a day, small",
        daily: None,
        ..DAYS
    },
    CollectionSpec {
        name: "training_status",
        brief: "training status and load",
        path: "metrics-service/metrics/trainingstatus/aggregated",
        summary: unofficial!(
            "Training status per day Garmin computed one (of the primary training device): status phrase, acute and chronic \
             load and their ratio, the load balance phrase and the month's aerobic low / high / anaerobic loads with their \
             target ranges. One request per day."
        ),
        fields: &[
            "status",
            "status_phrase",
            "acute_load",
            "chronic_load",
            "chronic_load_min",
            "chronic_load_max",
            "acute_chronic_ratio",
            "acwr_percent",
            "acwr_status",
            "load_balance",
            "monthly_load_aerobic_low",
            "monthly_load_aerobic_high",
            "monthly_load_anaerobic",
            "targets",
            "sport",
            "since",
            "device",
        ],
        split: Split::Days(1),
        ..DAYS
    },
    CollectionSpec {
        name: "vo2max",
        brief: "VO2max history",
        path: "metrics-service/metrics/maxmet/daily",
        summary: unofficial!(
            "VO2max history, one row per day Garmin updated it: running (precise and rounded), cycling, fitness age. The \
             current values are also in garmin.profile (the official API)."
        ),
        fields: &["running", "running_rounded", "cycling", "cycling_rounded", "fitness_age"],
        ..DAYS
    },
    CollectionSpec {
        name: "race_predictions",
        brief: "race time predictions",
        path: "metrics-service/metrics/racepredictions/daily",
        summary: unofficial!(
            "Garmin's predicted race times per day for 5 km, 10 km, half marathon and marathon: seconds, `h:mm:ss` and pace \
             per km."
        ),
        fields: &[
            "time_5k_s",
            "time_5k",
            "pace_5k_per_km",
            "time_10k_s",
            "time_10k",
            "pace_10k_per_km",
            "time_half_s",
            "time_half",
            "pace_half_per_km",
            "time_marathon_s",
            "time_marathon",
            "pace_marathon_per_km",
        ],
        split: Split::Days(366),
        ..DAYS
    },
    CollectionSpec {
        name: "lactate_threshold",
        brief: "lactate threshold",
        path: "biometric-service/stats",
        summary: unofficial!(
            "Running lactate threshold history, a row per day it changed: heart rate (bpm), speed (m/s) and pace per km. Garmin \
             sends the speed in tenths of m/s; it is converted (said in notices.rules). Current values: garmin.profile."
        ),
        fields: &["heart_rate_bpm", "speed_m_s", "pace_per_km"],
        split: Split::Days(366),
        ..DAYS
    },
    CollectionSpec {
        name: "personal_records",
        brief: "personal records",
        path: "personalrecord-service/personalrecord/prs",
        summary: unofficial!(
            "Personal records, typed (1 km, 1 mile, 5 km, 10 km, half marathon, marathon as times; longest run as distance; \
             other kinds with Garmin's type id and raw value), each with the day and the activity it came from."
        ),
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["type"],
        key: Some("id"),
        fields: &["id", "type_id", "value", "unit", "time", "distance_km", "day", "activity_id", "activity_name"],
        split: Split::Whole,
        volume: "a row per record kind",
        daily: None,
        ..DAYS
    },
    CollectionSpec {
        name: "activity_splits",
        brief: "laps of one activity",
        path: "activity-service/activity",
        summary: unofficial!(
            "One activity's laps and typed splits by its `id` (from garmin.activities), as Garmin sends them (distances m, \
             times s, speeds m/s). Lap coordinates only with options.gps=true."
        ),
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["id"],
        key: Some("id"),
        fields: &["laps", "typed_splits"],
        split: Split::Whole,
        volume: "one activity, a few thousand characters",
        options: &[OptionSpec {
            text: false,
            name: "gps",
            default: false,
            doc: "keep each lap's start and end coordinates: they show where the user was, even at home",
        }],
        order: PageOrder::Unknown,
        by_id: true,
        daily: None,
        ..DAYS
    },
    CollectionSpec {
        name: "endurance_score",
        brief: "endurance score",
        path: "metrics-service/metrics/endurancescore",
        summary: unofficial!(
            "Endurance score per day, one request a day: the score, its level (recreational, intermediate, trained, well trained, \
             expert, superior, elite: read against the thresholds Garmin sends with it, which are in `level_thresholds`), Garmin's \
             classification and feedback ids, and what contributed (percent per activity type or intensity group). Reply shape \
             from clients and a described capture, not a recording."
        ),
        fields: &["score", "level", "classification", "feedback_id", "level_thresholds", "contributors"],
        split: Split::Days(1),
        ..DAYS
    },
    CollectionSpec {
        name: "hill_score",
        brief: "hill score",
        path: "metrics-service/metrics/hillscore/stats",
        summary: unofficial!(
            "Hill score per day Garmin scored it (of the primary training device): overall score (0–100), its strength and \
             endurance parts, Garmin's classification and feedback ids, and VO2max where sent. 28 days a request. Reply shape \
             from clients and a described capture, not a recording."
        ),
        fields: &["score", "strength", "endurance", "classification", "feedback_id", "vo2max"],
        split: Split::Days(28),
        ..DAYS
    },
    CollectionSpec {
        name: "respiration",
        brief: "breathing rate by day",
        path: "wellness-service/wellness/daily/respiration",
        summary: unofficial!(
            "Breathing rate per day in breaths per minute, one request a day: lowest, highest, waking and sleep averages, the \
             night's sleep window (local), and the day's readings (about every 2 minutes) as the series `readings`, compacted to fit \
             when large. Garmin's no-reading values (-1, -2) are null."
        ),
        fields: &["lowest_per_min", "highest_per_min", "waking_avg_per_min", "sleep_avg_per_min", "sleep_start", "sleep_end", "readings"],
        split: Split::Days(1),
        embedded: &[Embedded { field: "readings", kind: EmbeddedKind::Samples(crate::providers::garmin::catalog::SHAPE) }],
        volume: "1 row a day with ~700 readings (about 4,000 characters)",
        ..DAYS
    },
    CollectionSpec {
        name: "sleep_scores",
        brief: "nightly sleep scores",
        path: "wellness-service/stats/daily/sleep/score",
        summary: unofficial!(
            "Garmin's sleep score per night (0–100), labelled with the day the night ends, 28 nights a request: a long history \
             in few requests (garmin.sleep has each night's details). A day Garmin lists without a score keeps its row, score null."
        ),
        fields: &["score"],
        // A night is final once it is there: today's (the night that ended this morning) is complete.
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..DAYS
    },
];
