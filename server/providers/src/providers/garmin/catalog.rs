//! Garmin's official Personal API as data (reference `garmin/personal-api.md` §5). Paths marked
//! inferred there are data here, to correct without touching code; each range limit is the one
//! the reference records, and a window is never longer. Dates are the user's own local days,
//! inclusive (`exact_days`): no padding, and a one-day route is one request a day.
use crate::catalog::EmbeddedKind::{Epochs, Samples};
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, Dating, Embedded, FileFormat, Files, Flag, LapsSpec, Lead, NightSpec, OptionSpec, PageOrder, ProviderSpec,
    RangeKind, RateBudget, SampleShape, SeriesSpec, Split, Stage, Stat, TodaySpec, WorkoutSpec, ZonesSpec,
};
use crate::connection::{ApiKeySpec, Connection, Revoke};
use std::time::Duration;

/// Every embedded series of Garmin rows: `{interval_s, start, items}`.
pub const SHAPE: SampleShape = SampleShape { interval: "interval_s", items: "items", start: "start" };

/// Collections of data people guard most: off until the user names them in `VITALS_GARMIN_SENSITIVE`.
pub const SENSITIVE: &[&str] = &["food", "menstrual_cycle"];

/// Seconds per character of a sleep stage timeline.
pub const STAGE_EPOCH_S: u32 = 60;

static SLEEP_LEAD: &[Lead] = &[
    Lead::clock("bed", "sleep_start"),
    Lead::clock("up", "sleep_end"),
    Lead::same("asleep_min", "asleep_min"),
    Lead::same("deep_min", "deep_min"),
    Lead::same("rem_min", "rem_min"),
    Lead::same("light_min", "light_min"),
    Lead::same("awake_min", "awake_min"),
    Lead::same("score", "score"),
    Lead::same("quality", "score_quality"),
    Lead::same("hr_avg_bpm", "hr_avg_bpm"),
    Lead::same("breaths_per_min", "respiration_avg"),
    Lead::same("spo2_avg_pct", "spo2_avg"),
    Lead::same("stress_avg", "sleep_stress_avg"),
];

static HRV_LEAD: &[Lead] = &[
    Lead::same("last_night_avg_ms", "last_night_avg_ms"),
    Lead::same("high_5min_ms", "last_night_5min_high_ms"),
    Lead::series("low_5min_ms", "readings", Stat::Min),
    Lead::same("weekly_avg_ms", "weekly_avg_ms"),
    Lead::same("status", "status"),
    Lead::same("baseline_low_ms", "baseline.balancedLow"),
    Lead::same("baseline_high_ms", "baseline.balancedUpper"),
];

static BODY_BATTERY_LEAD: &[Lead] =
    &[Lead::same("highest", "highest"), Lead::same("lowest", "lowest"), Lead::same("charged", "charged"), Lead::same("drained", "drained")];

static SUMMARY_LEAD: &[Lead] = &[
    Lead::same("steps", "steps"),
    Lead::same("active_kcal", "active_calories_kcal"),
    Lead::same("total_kcal", "calories_kcal"),
    Lead::km("distance_km", "distance_m"),
    Lead::same("moderate_min", "moderate_intensity_min"),
    Lead::same("vigorous_min", "vigorous_intensity_min"),
    Lead::same("resting_hr_bpm", "resting_hr_bpm"),
    Lead::same("stress_avg", "stress_avg"),
];

pub static GARMIN: ProviderSpec = ProviderSpec {
    name: "garmin",
    namespace: "garmin",
    display: "Garmin",
    collections: COLLECTIONS,
    probe: "profile",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("hrv", "hrv", HRV_LEAD),
        TodaySpec::days("body_battery", "body_battery", BODY_BATTERY_LEAD),
        TodaySpec::days("activity", "daily_summary", SUMMARY_LEAD),
    ],
    max_days: Some(366),
    // Garmin publishes no numbers; a burst of 12 got 429 with Retry-After 14 (reference §3). The
    // budget here is only a ceiling: two in flight (below) is what keeps a key out of trouble.
    rate_budget: RateBudget { requests: 120, per: Duration::from_secs(60) },
    late_sync: "a Garmin watch syncs through Garmin Connect, sometimes hours later",
    connection: Connection::ApiKey(ApiKeySpec {
        env: "VITALS_GARMIN_API_KEY",
        portal: "https://connect.garmin.com/app/settings/personalApiToken",
        create_help: "Create a new key at Garmin Connect → Settings → Personal API Key \
                      (https://connect.garmin.com/app/settings/personalApiToken, on the web), then give it to vitals.",
        exchange: super::auth::exchange,
        // Garmin's own clients renew an hour before the 24-hour token ends (reference §2).
        renew_before_s: 3600,
        revoke: Revoke::InAccount("at Garmin Connect → Settings → Personal API Key, where you delete the key"),
    }),
    no_data: &[204],
    // Garmin serves the original FIT only; TCX and GPX are written from it.
    files: Some(Files {
        formats: &[FileFormat::Fit],
        from_fit: &[FileFormat::Tcx, FileFormat::Gpx],
        listed_in: "activities",
        missing: "Garmin has no activity with that id for this account",
    }),
    // Two in flight per key (reference §3: clients cap at 2; more gets 429).
    // Garmin answers bursts with 429s (reference §6): two at a time.
    in_flight: 2,
    daily_view: &[
        DailySource::same("sleep_total_min", "sleep", "asleep_min", 2),
        DailySource::same("sleep_score", "sleep", "score", 2),
        DailySource::same("resting_hr_bpm", "daily_summary", "resting_hr_bpm", 1),
        DailySource::same("hrv_ms", "hrv", "last_night_avg_ms", 1),
        DailySource::same("steps", "daily_summary", "steps", 1),
        DailySource::same("active_kcal", "daily_summary", "active_calories_kcal", 1),
        DailySource::same("weight_kg", "weight", "weight_kg", 2),
        DailySource::same("body_fat_pct", "weight", "body_fat_pct", 2),
    ],
    retries_429: true,
    legend: LEGEND,
    non_get: super::auth::NON_GET,
};

/// Garmin's dates are the user's own days: unpadded windows (each collection sets its route's limit).
const BASE: CollectionSpec = CollectionSpec { exact_days: true, ..CollectionSpec::DAILY };

/// Garmin's activities as the workout view reads them: listed, then one read by id with its FIT.
const ACTIVITY_WORKOUT: WorkoutSpec = WorkoutSpec {
    detail: Some("activity"),
    options: &[],
    sport: "type",
    start: "start",
    duration_s: "duration_s",
    distance_m: "distance_m",
    series: &[
        ("heart rate", "bpm", super::fit::SAMPLE_FIELDS[0]),
        ("speed", "m/s", super::fit::SAMPLE_FIELDS[1]),
        ("power", "W", super::fit::SAMPLE_FIELDS[3]),
        ("altitude", "m", super::fit::SAMPLE_FIELDS[2]),
        ("cadence", "rpm or spm", super::fit::SAMPLE_FIELDS[4]),
    ],
    laps: Some(LapsSpec { path: "/fit/laps", what: "laps", seconds: "timer_s", distance_m: Some("distance_m"), avg_hr_bpm: "avg_hr_bpm" }),
    zones: Some(ZonesSpec { path: "/fit/hr_zone_s", seconds: None, lower_bpm: None, upper_bpm: None }),
};

/// Garmin's scores are on scales of their own: each one's, and the units names do not carry.
static LEGEND: &[(&str, &str, &str)] = &[
    ("daily_summary", "stress_avg", "0 to 100 (rest below 26)"),
    ("daily_summary", "stress_max", "0 to 100"),
    ("daily_summary", "body_battery_high", "0 to 100"),
    ("daily_summary", "body_battery_low", "0 to 100"),
    ("daily_summary", "respiration_avg", "breaths/min"),
    ("daily_summary", "spo2_avg", "%"),
    ("daily_summary", "spo2_lowest", "%"),
    ("stress", "stress_level", "0 to 100 (rest below 26)"),
    ("body_battery", "highest", "0 to 100"),
    ("body_battery", "lowest", "0 to 100"),
    ("body_battery", "charged", "points gained"),
    ("body_battery", "drained", "points lost"),
    ("body_battery", "levels", "0 to 100, in `items` every `interval_s`"),
    ("sleep", "score", "0 to 100"),
    ("sleep", "respiration_avg", "breaths/min"),
    ("sleep", "spo2_avg", "%"),
    ("sleep", "spo2_lowest", "%"),
    ("sleep", "sleep_stress_avg", "0 to 100"),
    ("hrv", "readings", "ms, in `items` every `interval_s`"),
    ("spo2", "spo2_avg", "%"),
    ("spo2", "spo2_lowest", "%"),
    ("spo2", "spo2_latest", "%"),
    ("spo2", "spo2_7d_avg", "%"),
    ("spo2", "spo2_sleep_avg", "%"),
    ("activities", "aerobic_effect", "0 to 5"),
    ("activities", "anaerobic_effect", "0 to 5"),
    ("activity", "aerobic_effect", "0 to 5"),
    ("activity", "anaerobic_effect", "0 to 5"),
    ("fitness_age", "fitness_age", "years"),
    ("fitness_age", "achievable_fitness_age", "years"),
    ("fitness_age", "chronological_age", "years"),
    ("weight", "bmi", "kg/m²"),
];

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "daily_summary",
        brief: "daily steps, calories, HR, stress",
        path: "usersummary-service/v2/dailysummaries",
        summary: "One row per day: steps and goal, distance, calories (total, active, BMR), resting/min/max heart rate and the \
                  7-day resting average, stress average/max, Body Battery high/low, intensity minutes, floors, respiration and SpO2 \
                  where measured. Read 35 days per request.",
        fields: &[
            "steps",
            "step_goal",
            "distance_m",
            "calories_kcal",
            "active_calories_kcal",
            "bmr_calories_kcal",
            "resting_hr_bpm",
            "min_hr_bpm",
            "max_hr_bpm",
            "resting_hr_7d_avg_bpm",
            "stress_avg",
            "stress_max",
            "body_battery_high",
            "body_battery_low",
            "moderate_intensity_min",
            "vigorous_intensity_min",
            "floors_ascended",
            "respiration_avg",
            "spo2_avg",
            "spo2_lowest",
        ],
        split: Split::Days(35),
        ..BASE
    },
    CollectionSpec {
        name: "steps",
        brief: "daily steps and goal",
        path: "usersummary-service/stats/steps/daily",
        summary: "Steps per day with the goal and distance. 28 days per request.",
        fields: &["steps", "step_goal", "distance_m"],
        ..BASE
    },
    CollectionSpec {
        name: "stress",
        brief: "daily stress levels",
        path: "usersummary-service/stats/stress/daily",
        summary: "Stress per day: overall level (0–100) and minutes at rest, low, medium and high stress. 28 days per request.",
        fields: &["stress_level", "rest_min", "low_min", "medium_min", "high_min"],
        ..BASE
    },
    CollectionSpec {
        name: "heartrate",
        brief: "heart rate samples (time series)",
        path: "wellness-service/wellness/dailyHeartRate",
        summary: "The day's heart-rate samples (about every 2 minutes) as a time series, resampled to fit when large. A day's \
                  resting, minimum and maximum heart rate are in garmin.daily_summary. One request per day.",
        range: RangeKind::DateTime,
        day_keys: &["timestamp"],
        dating: Dating::QueryZone,
        always: &["timestamp"],
        key: None,
        fields: &["bpm"],
        volume: "~720 samples a day",
        split: Split::Days(1),
        series: Some(SeriesSpec { stamp: "timestamp", values: &["bpm"], levels: false, categories: &[] }),
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "body_battery",
        brief: "Body Battery per day",
        path: "wellness-service/wellness/bodyBattery/reports/daily",
        summary: "One row per day: Body Battery charged and drained, its highest and lowest level (from the levels), the levels as \
                  a series, and the events that charged or drained it (sleep, activities, with their impact). 31 days per request.",
        fields: &["charged", "drained", "highest", "lowest", "levels", "events"],
        split: Split::Days(31),
        embedded: &[Embedded { field: "levels", kind: Samples(SHAPE) }],
        volume: "1 row a day, ~3,000 characters (most in `levels`)",
        ..BASE
    },
    CollectionSpec {
        name: "spo2",
        brief: "Pulse Ox per day",
        path: "wellness-service/wellness/daily/spo2",
        summary: "Pulse Ox per day: average, lowest, latest, 7-day average and sleep average SpO2 (%), and the hourly averages. \
                  Needs a watch with Pulse Ox on. One request per day.",
        fields: &["spo2_avg", "spo2_lowest", "spo2_latest", "spo2_7d_avg", "spo2_sleep_avg", "hourly"],
        split: Split::Days(1),
        ..BASE
    },
    CollectionSpec {
        name: "hydration",
        brief: "water intake",
        path: "usersummary-service/stats/hydration/daily",
        summary: "Water intake per day and its goal (ml), where the user logs it.",
        fields: &["intake_ml", "goal_ml"],
        ..BASE
    },
    CollectionSpec {
        name: "sleep",
        brief: "nights: stages, score, SpO2",
        path: "sleep-service/sleep/dailySleepSummariesByDate",
        summary: "One row per night, labelled by the morning it ends: sleep, deep, light, REM and awake minutes, awakenings, naps, \
                  sleep score and its qualifier, average/lowest SpO2, respiration, heart rate and sleep stress; the stage timeline \
                  (one digit a minute from sleep start: 0 deep, 1 light, 2 REM, 3 awake, 9 not measured) compacted like every \
                  hypnogram. 31 nights per request; a night without sleep is left out (Garmin sends an empty placeholder).",
        fields: &[
            "sleep_start",
            "sleep_end",
            "asleep_min",
            "deep_min",
            "light_min",
            "rem_min",
            "awake_min",
            "awake_count",
            "nap_min",
            "score",
            "score_quality",
            "spo2_avg",
            "spo2_lowest",
            "respiration_avg",
            "hr_avg_bpm",
            "sleep_stress_avg",
            "stages",
        ],
        split: Split::Days(31),
        embedded: &[Embedded { field: "stages", kind: Epochs(STAGE_EPOCH_S) }],
        night: Some(NightSpec {
            hypnogram: "stages",
            start: "sleep_start",
            end: "sleep_end",
            epoch_s: STAGE_EPOCH_S,
            legend: &[('0', Stage::Deep), ('1', Stage::Light), ('2', Stage::Rem), ('3', Stage::Awake)],
            heart_rate: None,
            hrv: None,
            totals: &[(Stage::Deep, "deep_min", 1.0), (Stage::Rem, "rem_min", 1.0), (Stage::Light, "light_min", 1.0), (Stage::Awake, "awake_min", 1.0)],
        }),
        volume: "1 row a night, ~700 characters (most in `stages`)",
        // A night is final once it is there: today's (the night that ended this morning) is complete.
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..BASE
    },
    CollectionSpec {
        name: "hrv",
        brief: "night HRV, baseline, status",
        path: "hrv-service/hrv",
        summary: "One row per night (the morning it ends): last night's average HRV, the 5-minute high, the weekly average, the \
                  baseline band, the status (BALANCED, UNBALANCED, LOW, POOR) and its feedback; the 5-minute readings as a series. \
                  One request per night.",
        fields: &["last_night_avg_ms", "last_night_5min_high_ms", "weekly_avg_ms", "baseline", "status", "feedback", "readings"],
        split: Split::Days(1),
        embedded: &[Embedded { field: "readings", kind: Samples(SHAPE) }],
        volume: "1 row a night, ~1,500 characters (most in `readings`)",
        daily: Some(DailyRule::ONE_A_DAY.on_arrival()),
        ..BASE
    },
    CollectionSpec {
        name: "weight",
        brief: "weigh-ins",
        path: "weight-service/weight/range",
        summary: "One row per weigh-in: weight (kg; Garmin sends grams), BMI, body fat and water (%), bone and muscle mass (kg), \
                  the source. 31 days per request (the route's limit is not recorded).",
        day_keys: &["day"],
        dating: Dating::ProviderDay,
        always: &["id", "day"],
        key: Some("id"),
        fields: &["time", "weight_kg", "bmi", "body_fat_pct", "body_water_pct", "bone_mass_kg", "muscle_mass_kg", "source"],
        split: Split::Days(31),
        volume: "a weigh-in a day at most, small",
        daily: Some(DailyRule::FIRST),
        flags: &[Flag::new("source", "\"MANUAL\"", "typed in by hand, not measured")],
        ..BASE
    },
    CollectionSpec {
        name: "activities",
        brief: "activities (ids for export)",
        path: "activitylist-service/activities/search/activities",
        summary: "One row per activity, in time order: id (for vitals_export), name, type, start (local and with its offset), \
                  distance, timer/moving/elapsed time, speed, heart rate, calories, elevation, cadence, power, training effect \
                  and load, seconds in each heart-rate zone, laps. Garmin pages these newest first, 100 at a time; every page is read.",
        day_keys: &["start"],
        dating: Dating::OwnOffset,
        always: &["id", "start"],
        key: Some("id"),
        fields: &[
            "name",
            "type",
            "start_local",
            "distance_m",
            "duration_s",
            "moving_s",
            "elapsed_s",
            "avg_speed_m_s",
            "max_speed_m_s",
            "avg_hr_bpm",
            "max_hr_bpm",
            "calories_kcal",
            "elevation_gain_m",
            "elevation_loss_m",
            "avg_run_cadence_spm",
            "avg_power_w",
            "norm_power_w",
            "aerobic_effect",
            "anaerobic_effect",
            "training_load",
            "hr_zone_s",
            "laps",
        ],
        volume: "a few activities a week, ~600 characters each",
        // One listing call may span a year (reference §6).
        split: Split::Days(366),
        order: PageOrder::NewestFirst,
        workout: Some(ACTIVITY_WORKOUT),
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "activity",
        brief: "one activity by id, with laps",
        path: "activity-service/activity",
        summary: "One activity by its `id` (from garmin.activities): everything of the listing plus minimum heart rate, Garmin's \
                  split summaries (its typed splits, distances m, times s) and the structured workout it followed, if any. With \
                  options.laps=true also what only its FIT file holds: laps, time per heart-rate zone and the per-second records \
                  summarised; with options.raw_samples=true the records as series a second apart (heart rate, speed, \
                  altitude, power, cadence; compacted when they do not fit); the GPS track only with options.gps=true.",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["id"],
        key: Some("id"),
        fields: &[
            "name",
            "type",
            "start",
            "start_local",
            "distance_m",
            "duration_s",
            "moving_s",
            "elapsed_s",
            "avg_speed_m_s",
            "avg_hr_bpm",
            "max_hr_bpm",
            "min_hr_bpm",
            "calories_kcal",
            "elevation_gain_m",
            "elevation_loss_m",
            "aerobic_effect",
            "anaerobic_effect",
            "training_load",
            "laps",
            "split_summaries",
            "workouts",
            "fit",
            super::fit::SAMPLE_FIELDS[0],
            super::fit::SAMPLE_FIELDS[1],
            super::fit::SAMPLE_FIELDS[2],
            super::fit::SAMPLE_FIELDS[3],
            super::fit::SAMPLE_FIELDS[4],
        ],
        split: Split::Whole,
        volume: "one activity, ~1,500 characters; with laps a few thousand more; with raw samples ~1 value per second per sensor",
        embedded: &[
            Embedded { field: super::fit::SAMPLE_FIELDS[0], kind: Samples(SHAPE) },
            Embedded { field: super::fit::SAMPLE_FIELDS[1], kind: Samples(SHAPE) },
            Embedded { field: super::fit::SAMPLE_FIELDS[2], kind: Samples(SHAPE) },
            Embedded { field: super::fit::SAMPLE_FIELDS[3], kind: Samples(SHAPE) },
            Embedded { field: super::fit::SAMPLE_FIELDS[4], kind: Samples(SHAPE) },
        ],
        options: &[
            OptionSpec {
                text: false,
                name: "laps",
                default: false,
                doc: "read the activity's FIT file too: every lap, the time in each heart-rate zone, the per-second records summarised (in `fit`)",
            },
            OptionSpec {
                text: false,
                name: "raw_samples",
                default: false,
                doc: "add the FIT file's records as series a second apart (heart rate, speed, altitude, power, cadence; null where no record), compacted when they do not fit",
            },
            OptionSpec { text: false, name: "gps", default: false, doc: "add the GPS track from the FIT file (`fit.track`): it shows where the user was, even at home" },
        ],
        workout: Some(WorkoutSpec { detail: None, options: &["laps", "raw_samples"], ..ACTIVITY_WORKOUT }),
        by_id: true,
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "food",
        brief: "food log (sensitive, off by default)",
        path: "nutrition-service/food/logs",
        summary: "SENSITIVE, off unless enabled (VITALS_GARMIN_SENSITIVE=food). One row per day the user logged food: calories, \
                  carbohydrate, protein and fat eaten (g), the calorie goal, and the meals. One request per day.",
        fields: &["calories_kcal", "carbs_g", "protein_g", "fat_g", "goal_kcal", "meals"],
        split: Split::Days(1),
        ..BASE
    },
    CollectionSpec {
        name: "menstrual_cycle",
        brief: "cycles (sensitive, off by default)",
        path: "periodichealth-service/menstrualcycle/calendar",
        summary: "SENSITIVE, off unless enabled (VITALS_GARMIN_SENSITIVE=menstrual_cycle). One row per cycle, labelled by the day it \
                  started: cycle and period length (days), and whether Garmin predicted it rather than the user logging it.",
        fields: &["cycle_length_days", "period_length_days", "predicted"],
        volume: "one row a month",
        daily: None,
        // Garmin lists the cycles it predicts, which start after today.
        ahead: true,
        ..BASE
    },
    CollectionSpec {
        name: "fitness_age",
        brief: "fitness age",
        path: "fitnessage-service/fitnessage",
        summary: "Fitness age per day, with the chronological age and what would lower it. One request per day.",
        fields: &["fitness_age", "chronological_age", "achievable_fitness_age", "components"],
        split: Split::Days(1),
        ..BASE
    },
    CollectionSpec {
        name: "hr_zones",
        brief: "heart-rate zones per sport",
        path: "biometric-service/heartRateZones",
        summary: "Heart-rate zone floors per sport (bpm) and how they are set. Read only: vitals never asks Garmin to create defaults.",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &["sport"],
        key: None,
        fields: &["method", "resting_hr_bpm", "max_hr_bpm", "lactate_threshold_hr_bpm", "zone_floors_bpm"],
        split: Split::Whole,
        volume: "a row per sport",
        daily: None,
        ..BASE
    },
    CollectionSpec {
        name: "profile",
        brief: "settings, lactate threshold",
        path: "userprofile-service/userprofile/settings",
        summary: "The user's settings: units, weight (kg), height (cm), sleep and wake times, the current lactate threshold (heart \
                  rate and pace; Garmin's speed unit is m/s ÷ 10, converted) and VO2max where Garmin has them. Birth year and sex only \
                  with options.personal=true.",
        range: RangeKind::None,
        day_keys: &[],
        dating: Dating::Undated,
        always: &[],
        key: None,
        fields: &[
            "measurement_system",
            "weight_kg",
            "height_cm",
            "sleep_time",
            "wake_time",
            "lactate_threshold_hr_bpm",
            "lactate_threshold_speed_m_s",
            "lactate_threshold_pace_per_km",
            "vo2max_running",
            "vo2max_cycling",
            "birth_year",
            "sex",
        ],
        enveloped: false,
        split: Split::Whole,
        volume: "one object",
        options: &[OptionSpec { text: false, name: "personal", default: false, doc: "also return the birth year and sex" }],
        daily: None,
        ..BASE
    },
];
