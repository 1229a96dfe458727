//! Polar AccessLink v3's collections as data (reference `polar/README.md` §3–§5). Retention is
//! declared per collection: Polar serves only recent days, and an answer says where the reach
//! ends instead of calling older days empty. Field names carry their unit.
use super::decode::{RAW_FIELDS, SUMMARY_FIELDS};
use crate::catalog::EmbeddedKind::{Epochs, Samples};
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, Dating, Embedded, FileFormat, Files, LapsSpec, Lead, NightSpec, OptionSpec, ProviderSpec, RangeKind, RateBudget,
    Retention, SampleShape, SeriesSpec, Split, Stage, TodaySpec, WorkoutSpec, ZonesSpec,
};
use crate::connection::{AfterExchange, AppEnv, ClientAuth, Connection, OAuthSpec, Revoke};
use std::time::Duration;

/// Polar's range routes take at most 28 days (`to − from ≤ 28`); the engine pads a window by two
/// days on each side, so 21-day windows stay well inside.
const RANGE_DAYS: u32 = 21;

/// Continuous heart rate: two weeks per request (about 4,000 five-minute samples); the range
/// route's own limit is unstated (reference §3.2, 28 days assumed).
const HR_WINDOW_HOURS: u32 = 14 * 24;

/// Every embedded series of Polar rows: `{interval_s, start, items}`.
pub const SHAPE: SampleShape = SampleShape { interval: "interval_s", items: "items", start: "start" };

const fn ret(days: u32, why: &'static str) -> Option<Retention> {
    Some(Retention { days, why })
}

/// Polar's scales of a night against the usual of the last 28 days (sleep charge, ANS charge
/// status), 1 to 5.
const USUAL: &[&str] = &["much below usual", "below usual", "usual", "above usual", "much above usual"];

/// A night as Polar scores it, with the sleep heart rate summary its decoder already made.
static SLEEP_LEAD: &[Lead] = &[
    Lead::clock("bed", "sleep_start"),
    Lead::clock("up", "sleep_end"),
    Lead::same("asleep_min", "asleep_min"),
    Lead::same("deep_min", "deep_min"),
    Lead::same("rem_min", "rem_min"),
    Lead::same("light_min", "light_min"),
    Lead::same("interruptions_min", "interruptions_min"),
    Lead::same("score", "sleep_score"),
    Lead::same("continuity", "continuity"),
    Lead::scale("sleep_charge", "sleep_charge", USUAL),
    Lead::same("cycles", "sleep_cycles"),
    Lead::same("hr_min_bpm", "heart_rate_summary.min"),
    Lead::same("hr_avg_bpm", "heart_rate_summary.avg"),
    Lead::same("hr_nadir_15min_bpm", "heart_rate_summary.nadir"),
];

static RECHARGE_LEAD: &[Lead] = &[
    Lead::scale("status", "nightly_recharge_status", &["very poor", "poor", "compromised", "OK", "good", "very good"]),
    Lead::same("ans_charge", "ans_charge"),
    Lead::scale("ans_status", "ans_charge_status", USUAL),
    Lead::same("hr_avg_bpm", "hr_avg_bpm"),
    Lead::same("hrv_avg_ms", "hrv_avg_ms"),
    Lead::same("breaths_per_min", "breathing_rate_avg"),
];

static ACTIVITY_LEAD: &[Lead] = &[
    Lead::same("steps", "steps"),
    Lead::same("active_kcal", "active_calories_kcal"),
    Lead::same("total_kcal", "calories_kcal"),
    Lead::km("distance_km", "distance_from_steps_m"),
    Lead::same("active_min", "active_min"),
    Lead::same("inactive_min", "inactive_min"),
    Lead::same("goal_pct", "daily_activity_pct"),
];

pub static POLAR: ProviderSpec = ProviderSpec {
    name: "polar",
    namespace: "polar",
    display: "Polar",
    collections: COLLECTIONS,
    probe: "physical_info",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("recharge", "nightly_recharge", RECHARGE_LEAD),
        TodaySpec::days("activity", "activity", ACTIVITY_LEAD),
    ],
    max_days: Some(366),
    // Per-client quotas over 15 minutes and 24 hours (reference §6.1, confirmed); their size
    // (500 + 20 × users per 15 min) is not: the floor is assumed here, and the `RateLimit-*`
    // headers, when Polar sends them, pause every window when they say the budget is spent.
    rate_budget: RateBudget { requests: 500, per: Duration::from_secs(15 * 60) },
    late_sync: "a Polar watch syncs through the Flow app, sometimes hours later",
    connection: Connection::OAuth(OAuthSpec {
        app_env: AppEnv { client_id: "VITALS_POLAR_CLIENT_ID", client_secret: "VITALS_POLAR_CLIENT_SECRET" },
        authorize_url: "https://flow.polar.com/oauth2/authorization",
        authorize_env: "VITALS_POLAR_AUTHORIZE_URL",
        authorize_params: &[],
        // One endpoint, tried once: a code is single-use, and a failed exchange is never retried
        // with it (reference §6.1).
        token_urls: &[("https://polarremote.com/v2/oauth2/token", "VITALS_POLAR_TOKEN_URL")],
        // The redirect registered in Polar's admin portal; sent, so it must match it exactly.
        redirect: "http://localhost:8080/callback",
        redirect_env: "VITALS_POLAR_REDIRECT_URI",
        scopes: &["accesslink.read_all"],
        scope_separator: " ",
        scope_prefix: "",
        // HTTP Basic at the token endpoint, no PKCE, and no refresh token in v3: the token lasts
        // until the user revokes it, and a 401 means connecting again (reference §2.2).
        client_auth: ClientAuth::Basic,
        pkce: false,
        token_params: &[],
        reply: None,
        keep: &["x_user_id"],
        after_exchange: Some(AfterExchange { what: "registering vitals with your Polar account (POST /v3/users)", run: super::auth::register }),
        portal: "https://admin.polaraccesslink.com",
        // Polar's DELETE /v3/users/{id} de-registers the user and kills the token; vitals never
        // sends it (a DELETE is a write). The user removes the partner in Polar Flow.
        revoke: Revoke::InAccount("in Polar Flow (flow.polar.com → Settings → Partners), where you remove vitals"),
    }),
    no_data: &[204, 404],
    files: Some(Files {
        formats: &[FileFormat::Fit, FileFormat::Tcx, FileFormat::Gpx],
        from_fit: &[],
        listed_in: "exercises",
        missing: "Polar has no such exercise among those it lists (the last 30 days, since vitals was connected), or, for GPX, the exercise \
                  has no route (recorded without GPS)",
    }),
    // 500 requests per 15 minutes (inferred: Polar reads the quota headers, which the limiter
    // follows): most collections are one request a range, so 8 is never the bottleneck.
    in_flight: 8,
    daily_view: &[
        DailySource::same("sleep_total_min", "sleep", "asleep_min", 2),
        DailySource::same("sleep_score", "sleep", "sleep_score", 2),
        DailySource::same("hrv_ms", "nightly_recharge", "hrv_avg_ms", 1),
        DailySource::same("steps", "activity", "steps", 1),
        DailySource::same("active_kcal", "activity", "active_calories_kcal", 1),
    ],
    retries_429: true,
    legend: LEGEND,
    non_get: super::auth::NON_GET,
};

/// An exercise row's own fields (the decoder in `decode.rs` makes them); the summaries of its
/// samples and the raw series follow, from the decoder's own lists.
const EXERCISE_OWN: [&str; 21] = [
    "id",
    "start_time",
    "upload_time",
    "sport",
    "detailed_sport",
    "device",
    "duration_s",
    "distance_m",
    "calories_kcal",
    "hr_avg_bpm",
    "hr_max_bpm",
    "hr_zones",
    "training_load",
    "cardio_load",
    "muscle_load",
    "perceived_load",
    "running_index",
    "fat_pct",
    "carbohydrate_pct",
    "protein_pct",
    "has_route",
];

/// `a` then `b`, at compile time (`N` must be their total length).
const fn join<const A: usize, const B: usize, const N: usize>(a: [&'static str; A], b: [&'static str; B]) -> [&'static str; N] {
    assert!(A + B == N, "N is the total length");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    out
}

const EXERCISE_FIELDS: [&str; 40] = join(join::<21, 7, 28>(EXERCISE_OWN, SUMMARY_FIELDS), RAW_FIELDS);

const fn raw(field: &'static str) -> Embedded {
    Embedded { field, kind: Samples(SHAPE) }
}

const EXERCISE_EMBEDDED: &[Embedded] = &[
    raw(RAW_FIELDS[0]),
    raw(RAW_FIELDS[1]),
    raw(RAW_FIELDS[2]),
    raw(RAW_FIELDS[3]),
    raw(RAW_FIELDS[4]),
    raw(RAW_FIELDS[5]),
    raw(RAW_FIELDS[6]),
    raw(RAW_FIELDS[7]),
    raw(RAW_FIELDS[8]),
    raw(RAW_FIELDS[9]),
    raw(RAW_FIELDS[10]),
];

/// What a collection spec of Polar's has by default: dated documents of one request per window
/// (it finishes or it does not, so order never matters), windows Polar's range routes accept.
const BASE: CollectionSpec = CollectionSpec { split: Split::Days(RANGE_DAYS), ..CollectionSpec::DAILY };

/// Polar's scores and statuses are codes on scales of their own (AccessLink's reference): what
/// each stands for, and the units names do not carry.
static LEGEND: &[(&str, &str, &str)] = &[
    ("nightly_recharge", "nightly_recharge_status", "1 very poor, 2 poor, 3 compromised, 4 OK, 5 good, 6 very good"),
    ("nightly_recharge", "ans_charge", "-10 to +10: the night's heart rate, HRV and breathing against the usual of 28 days (0 usual)"),
    ("nightly_recharge", "ans_charge_status", "1 much below usual, 2 below usual, 3 usual, 4 above usual, 5 much above usual"),
    ("nightly_recharge", "breathing_rate_avg", "breaths/min"),
    ("nightly_recharge", "hrv_samples", "ms (RMSSD), in `items` every `interval_s`"),
    ("nightly_recharge", "breathing_samples", "breaths/min, in `items` every `interval_s`"),
    ("sleep", "sleep_score", "1 to 100"),
    ("sleep", "continuity", "1 to 5 (5 uninterrupted)"),
    ("sleep", "continuity_class", "1 very fragmented, 2 fragmented, 3 fairly continuous, 4 continuous, 5 very continuous"),
    ("sleep", "sleep_charge", "1 much below usual, 2 below usual, 3 usual, 4 above usual, 5 much above usual"),
    ("sleep", "sleep_rating", "the user's own rating, 1 to 5"),
    ("sleep", "group_duration_score", "1 to 100"),
    ("sleep", "group_solidity_score", "1 to 100"),
    ("sleep", "group_regeneration_score", "1 to 100"),
    ("sleep", "hypnogram", "a digit per 30 s: 0 wake, 1 REM, 2 lighter non-REM, 3 light non-REM, 4 deep non-REM, 5 unknown"),
    ("activity", "daily_activity_pct", "% of the day's activity goal"),
    ("cardio_load", "cardio_load", "the day's training load (TRIMP)"),
    ("cardio_load", "strain", "cardio load, 7-day average"),
    ("cardio_load", "tolerance", "cardio load, 28-day average"),
    ("cardio_load", "load_ratio", "strain ÷ tolerance"),
    ("exercises", "running_index", "Polar's running index (ml/kg/min, as VO2max)"),
    ("sleepwise", "grade", "alertness, 0 to 10"),
];

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "exercises",
        brief: "exercises, HR zones, training load",
        path: "v3/exercises",
        summary: "One row per exercise: sport, start (with the watch's UTC offset), duration, distance, calories, heart rate \
                  average/maximum, time in each heart-rate zone, training load; cardio, muscle and perceived load, null where \
                  Polar's interpretation of them says NOT_AVAILABLE. With options.samples=true also summaries of its \
                  sensor samples, each with its method and sample count: per-km splits (time, pace, average HR), power (average, \
                  normalised, maximum, variability index), elevation (ascent, descent, range), cadence, RR-interval HRV and \
                  temperature; with options.raw_samples=true the raw series themselves (compacted to fit when large). Route \
                  (GPS) points are never fetched; vitals_export writes the FIT, TCX or GPX file when asked.",
        day_keys: &["start_time"],
        dating: Dating::OwnOffset,
        always: &["id", "start_time"],
        key: Some("id"),
        fields: &EXERCISE_FIELDS,
        volume: "a few exercises a week; with raw samples ~1 value per second per sensor",
        // Polar lists the last 30 days in one answer: one request whatever the range.
        split: Split::Whole,
        embedded: EXERCISE_EMBEDDED,
        options: &[
            OptionSpec {
                text: false,
                name: "samples",
                default: false,
                doc: "add summaries of each exercise's samples (splits, power, elevation, cadence, HRV, temperature), each with its method",
            },
            OptionSpec { text: false, name: "raw_samples", default: false, doc: "add the raw sample series (one per sensor), compacted when they do not fit" },
        ],
        retention: ret(30, "Polar lists only exercises uploaded in the last 30 days, and only since the user registered with this app"),
        workout: Some(WorkoutSpec {
            detail: None,
            options: &["samples", "raw_samples"],
            sport: "sport",
            start: "start_time",
            duration_s: "duration_s",
            distance_m: "distance_m",
            series: &[
                ("heart rate", "bpm", "samples_heart_rate"),
                ("speed", "km/h", "samples_speed"),
                ("power", "W", "samples_power"),
                ("altitude", "m", "samples_altitude"),
                ("cadence", "rpm", "samples_cadence"),
                ("cadence", "spm", "samples_running_cadence"),
            ],
            laps: Some(LapsSpec { path: "/splits/splits", what: "km splits", seconds: "time_s", distance_m: None, avg_hr_bpm: "avg_hr_bpm" }),
            zones: Some(ZonesSpec { path: "/hr_zones", seconds: Some("in_zone_s"), lower_bpm: Some("lower_bpm"), upper_bpm: Some("upper_bpm") }),
        }),
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "activity",
        brief: "daily steps, calories, active time",
        path: "v3/users/activities",
        summary: "One row per day (the watch's local day): steps, calories, active and inactive minutes, daily activity %, \
                  distance from steps, inactivity alerts; minutes in each activity zone as Polar names them (unknown names such \
                  as non-wear kept); steps per hour (Polar leaves out repeated samples: they are filled back in) and their sum.",
        key: Some("day"),
        fields: &[
            "steps",
            "calories_kcal",
            "active_calories_kcal",
            "active_min",
            "inactive_min",
            "daily_activity_pct",
            "distance_from_steps_m",
            "inactivity_alerts",
            "zones_min",
            "hourly_steps",
            "hourly_steps_sum",
            "inactivity_stamps",
        ],
        volume: "1 row a day, ~600 characters",
        retention: ret(365, "Polar serves daily activity from at most 365 days back"),
        ..BASE
    },
    CollectionSpec {
        name: "heartrate",
        brief: "24/7 heart rate (time series)",
        path: "v3/users/continuous-heart-rate",
        summary: "Continuous (24/7) heart rate, about one sample every 5 minutes, as a time series (resampled to fit when large). \
                  Polar gives the watch's clock time without a zone: times are read in the query's zone. A sample of 0 bpm (the \
                  watch without skin contact) is no reading: left out of the rows and buckets, counted in notices.excluded.",
        range: RangeKind::DateTime,
        day_keys: &["timestamp"],
        dating: Dating::QueryZone,
        always: &["timestamp"],
        key: None,
        fields: &["bpm"],
        volume: "~288 samples a day",
        split: Split::Hours(HR_WINDOW_HOURS),
        series: Some(SeriesSpec { stamp: "timestamp", values: &["bpm"], levels: false, categories: &[] }),
        retention: ret(28, "Polar serves continuous heart rate for the last 28 days (inferred: the range route's limit is unstated)"),
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "sleep",
        brief: "nights: stages, score, hypnogram",
        path: "v3/users/sleep",
        summary: "One row per night, labelled by the day it ends: sleep score, light/deep/REM minutes, continuity, interruptions, \
                  sleep charge, the user's rating (null when not given), Polar's cycle count; the hypnogram (one digit per 30 s \
                  from sleep start: 0 wake, 1 REM, 2 lighter non-REM, 3 light non-REM, 4 deep, 5 unknown) and its architecture \
                  (REM episodes, deep and REM minutes per third of the night, time to first deep); sleep heart rate as a series \
                  and as min/avg/max, nadir (rolling 15 min) and trend per hour.",
        fields: &[
            "sleep_start",
            "sleep_end",
            "sleep_score",
            "asleep_min",
            "light_min",
            "deep_min",
            "rem_min",
            "unrecognized_min",
            "continuity",
            "continuity_class",
            "interruptions_min",
            "short_interruptions_min",
            "long_interruptions_min",
            "sleep_charge",
            "sleep_goal_min",
            "sleep_rating",
            "sleep_cycles",
            "group_duration_score",
            "group_solidity_score",
            "group_regeneration_score",
            "hypnogram",
            "architecture",
            "heart_rate",
            "heart_rate_summary",
        ],
        volume: "1 row a night, ~2,000 characters (most in the hypnogram)",
        // The list route has no parameters: it holds the last 28 nights in one answer.
        split: Split::Whole,
        embedded: &[Embedded { field: "hypnogram", kind: Epochs(super::decode::EPOCH_S) }, Embedded { field: "heart_rate", kind: Samples(SHAPE) }],
        night: Some(NightSpec {
            hypnogram: "hypnogram",
            start: "sleep_start",
            end: "sleep_end",
            epoch_s: super::decode::EPOCH_S,
            // Lighter and light non-REM are both light sleep, as Polar's own light minutes count them.
            legend: &[('0', Stage::Awake), ('1', Stage::Rem), ('2', Stage::Light), ('3', Stage::Light), ('4', Stage::Deep)],
            heart_rate: Some("heart_rate"),
            hrv: None,
            totals: &[(Stage::Deep, "deep_min", 1.0), (Stage::Rem, "rem_min", 1.0), (Stage::Light, "light_min", 1.0)],
        }),
        retention: ret(28, "Polar serves sleep for the last 28 nights"),
        // A night is final once it is there: today's (the night that ended this morning) is complete.
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..BASE
    },
    CollectionSpec {
        name: "nightly_recharge",
        brief: "ANS charge, night HR, HRV, breathing",
        path: "v3/users/nightly-recharge",
        summary: "One row per night (the day it ends): ANS charge (−10…+10, 0 = usual) and its status, Nightly Recharge status \
                  (1–6), heart rate, beat-to-beat, HRV (RMSSD) and breathing averages over the first 4 hours of sleep, and the \
                  min/avg/max/trend of the HRV and breathing samples (raw series beside them; `start` is the watch's clock).",
        fields: &[
            "ans_charge",
            "ans_charge_status",
            "nightly_recharge_status",
            "hr_avg_bpm",
            "beat_to_beat_avg_ms",
            "hrv_avg_ms",
            "breathing_rate_avg",
            "hrv",
            "breathing",
            "hrv_samples",
            "breathing_samples",
        ],
        volume: "1 row a night, ~1,500 characters",
        split: Split::Whole,
        embedded: &[Embedded { field: "hrv_samples", kind: Samples(SHAPE) }, Embedded { field: "breathing_samples", kind: Samples(SHAPE) }],
        retention: ret(28, "Polar serves Nightly Recharge for the last 28 nights"),
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..BASE
    },
    CollectionSpec {
        name: "cardio_load",
        brief: "cardio load, strain, tolerance",
        path: "v3/users/cardio-load/date",
        summary: "One row per day: cardio load, strain (7-day), tolerance (28-day), load ratio, status (e.g. PRODUCTIVE), and the \
                  level thresholds. A day without data keeps its row with status LOAD_STATUS_NOT_AVAILABLE and null values.",
        fields: &["status", "cardio_load", "strain", "tolerance", "load_ratio", "level_thresholds"],
        volume: "1 row a day, small",
        retention: ret(180, "Polar serves cardio load for up to 180 days back (its longest period route; inferred for date ranges)"),
        ..BASE
    },
    CollectionSpec {
        name: "sleepwise",
        brief: "alertness predictions",
        path: "v3/users/sleepwise/alertness/date",
        summary: "SleepWise alertness, one row per sleep period labelled by the local day the sleep ended: grade, classification, \
                  sleep inertia, sleep type, validity; hourly alertness predictions with options.hourly=true. Times in the sleep's \
                  own offset.",
        always: &["day", "period_start"],
        key: Some("period_start"),
        fields: &[
            "period_end",
            "sleep_start",
            "sleep_end",
            "grade",
            "grade_classification",
            "grade_type",
            "grade_validity_s",
            "validity",
            "sleep_inertia",
            "sleep_type",
            "result_type",
            "hourly",
        ],
        volume: "1 row a night, ~700 characters (hourly adds ~2,000)",
        options: &[OptionSpec { text: false, name: "hourly", default: false, doc: "add the hourly alertness predictions" }],
        retention: ret(28, "Polar serves SleepWise for the last 28 days"),
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "physical_info",
        brief: "weight, max and resting HR, VO2max",
        path: "v3/users/physical-info",
        summary: "The user's current physical settings: weight, height, birthday, maximum and resting heart rate, aerobic and \
                  anaerobic thresholds (the heart-rate zone limits), VO2max, training background, typical day, sleep goal. Read \
                  from the non-transactional route; a transaction is never committed (that would hide the data from every other app).",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &[],
        key: None,
        fields: &[
            "weight_kg",
            "height_cm",
            "birthday",
            "gender",
            "max_hr_bpm",
            "resting_hr_bpm",
            "aerobic_threshold_bpm",
            "anaerobic_threshold_bpm",
            "vo2max",
            "weight_source",
            "training_background",
            "typical_day",
            "sleep_goal_min",
            "created",
            "modified",
        ],
        enveloped: false,
        volume: "one object",
        split: Split::Whole,
        daily: None,
        ..BASE
    },
];

#[cfg(test)]
mod tests {
    use super::RAW_FIELDS;
    use crate::providers::polar::{decode, sample};

    /// Every field a decoded row carries is declared (so `fields` can ask for it), and every
    /// evenly spaced raw series can be compacted.
    #[test]
    fn every_decoded_field_is_declared() {
        let p = sample::Person::new("UTC");
        let d = jiff::civil::date(2026, 11, 2);
        let day = (0..7)
            .map(|k| d.checked_add(jiff::Span::new().days(k)).unwrap())
            .find(|d| sample::exercise_of_day(&p, *d, true, true, Default::default()).is_some());
        let ex = decode::exercise(&sample::exercise_of_day(&p, day.unwrap(), true, true, Default::default()).unwrap());
        let night = decode::night(&sample::night_ending(&p, d));
        for (name, row) in [("exercises", ex), ("sleep", night), ("activity", decode::activity(&sample::activity_of_day(&p, d, true, jiff::Timestamp::MAX)))] {
            let c = super::POLAR.collection(name).unwrap();
            for k in row.as_object().unwrap().keys() {
                assert!(c.knows_field(k), "{name}.{k} is not declared");
            }
        }
        let c = super::POLAR.collection("exercises").unwrap();
        assert_eq!(c.embedded.len(), RAW_FIELDS.len() - 1, "RR intervals are not evenly spaced; every other series is compactable");
    }
}
