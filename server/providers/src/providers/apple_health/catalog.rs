//! Apple Health's collections as data. There is no web API: the "routes" are the collections of
//! the export's index in memory (`answer.rs`), each record dated by its own offset (`HKTimeZone`
//! where the writer set it). Connecting is choosing the export file (`Connection::File`).
use crate::catalog::{
    CollectionSpec, DailyRule, DailySource, DayPick, Files, Flag, Lead, OptionSpec, PageOrder, ProviderSpec, RangeKind, RateBudget, SeriesSpec, Settles, Split,
    TodaySpec,
};
use crate::connection::{Connection, FileSpec};
use crate::provider::FileFormat;
use std::time::Duration;

/// The variable the export's path is read from (the extension's file picker sets it).
pub const FILE_ENV: &str = "VITALS_APPLE_HEALTH_FILE";
/// The tests' setting: the export's read stretched to at least this many seconds, so a call can
/// arrive before the index is ready (never set for a person: it only slows the read).
pub const TEST_READ_ENV: &str = "VITALS_APPLE_HEALTH_TEST_READ_S";
/// The variable the person's own order of sources is read from (first counts first).
pub const PRIORITY_ENV: &str = "VITALS_APPLE_HEALTH_PRIORITY";

static SLEEP_LEAD: &[Lead] = &[
    Lead::same("source", "source"),
    Lead::same("counts", "counts"),
    Lead::clock("bed", "start"),
    Lead::clock("up", "end"),
    Lead::same("asleep_min", "asleep_min"),
    Lead::same("deep_min", "deep_min"),
    Lead::same("rem_min", "rem_min"),
    Lead::same("core_min", "core_min"),
    Lead::same("awake_min", "awake_min"),
];

static ACTIVITY_LEAD: &[Lead] = &[
    Lead::same("steps", "steps"),
    Lead::same("distance_km", "distance_km"),
    Lead::same("active_kcal", "active_kcal"),
    Lead::same("exercise_min", "exercise_min"),
    Lead::same("stand_hours", "stand_hours"),
];

static WORKOUT_LEAD: &[Lead] = &[
    Lead::same("type", "type"),
    Lead::clock("start", "start"),
    Lead::same("duration_min", "duration_min"),
    Lead::same("distance_km", "distance_km"),
    Lead::same("hr_avg_bpm", "hr_avg_bpm"),
];

pub static APPLE_HEALTH: ProviderSpec = ProviderSpec {
    name: "apple-health",
    namespace: "apple_health",
    display: "Apple Health",
    collections: COLLECTIONS,
    probe: "activity",
    today: &[
        TodaySpec::days("sleep", "sleep", SLEEP_LEAD),
        TodaySpec::days("activity", "activity", ACTIVITY_LEAD),
        TodaySpec::days("workouts", "workout", WORKOUT_LEAD),
    ],
    max_days: None,
    // Answered from memory: no budget to keep.
    rate_budget: RateBudget { requests: 100_000, per: Duration::from_secs(1) },
    late_sync: "an export holds what the phone had when it was made: later days need a new export",
    connection: Connection::File(FileSpec {
        env: FILE_ENV,
        what: "the export.zip the Health app makes (Profile → Export All Health Data), or its export.xml",
        extensions: &["zip", "xml"],
    }),
    no_data: &[],
    files: Some(Files {
        formats: &[FileFormat::Gpx],
        from_fit: &[],
        listed_in: "workout",
        missing: "this workout has no route in the export (`route` is false)",
    }),
    in_flight: 4,
    daily_view: &[
        DailySource::same("sleep_total_min", "sleep", "asleep_min", 2),
        DailySource::same("resting_hr_bpm", "resting_heart_rate", "bpm", 1),
        DailySource::same("steps", "activity", "steps", 1),
        DailySource::same("active_kcal", "activity", "active_kcal", 1),
        DailySource::same("weight_kg", "body", "weight_kg", 3),
        DailySource::same("body_fat_pct", "body", "body_fat_pct", 3),
        DailySource::same("systolic_mmhg", "blood_pressure", "systolic_mmhg", 2),
        DailySource::same("diastolic_mmhg", "blood_pressure", "diastolic_mmhg", 2),
    ],
    retries_429: true,
    non_get: &[],
    legend: LEGEND,
};

static LEGEND: &[(&str, &str, &str)] = &[
    ("hrv", "sdnn_ms", "ms, SDNN (Apple's HRV): not RMSSD, never compared with other providers' HRV"),
    ("activity", "stand_hours", "hours with a minute of standing"),
    ("sleep", "origin", "health: recorded by Apple's devices or an app vitals does not read; else the vitals provider whose app wrote it"),
    ("sleep", "counts", "yes: the night that counts for its day; else why not (a higher source's night overlaps it, or a copy)"),
];

/// A day's reading in `vitals_daily`: Apple's own, never another connected provider's copy.
const OWN_FIRST: DailyRule = DailyRule {
    pick: DayPick::FirstOf { only: ("origin", "health") },
    says: "the first reading of the day by Apple's devices or an app vitals does not read (another provider's copy is left out: that provider's own answer has it)",
    settles: Settles::OnArrival,
};

/// What every collection of days shares: dated by `day`, answered whole from memory.
const DAYS: CollectionSpec = CollectionSpec {
    range: RangeKind::Date,
    day_keys: &["day"],
    always: &["day"],
    key: None,
    order: PageOrder::OldestFirst,
    split: Split::Days(92),
    daily: Some(DailyRule::FIRST),
    ..CollectionSpec::DAILY
};

/// A collection of one quantity's readings: its day, time, value and source.
macro_rules! readings {
    ($name:expr, $brief:expr, $summary:expr, $field:expr) => {
        CollectionSpec {
            name: $name,
            path: $name,
            brief: $brief,
            summary: $summary,
            fields: &["day", "time", $field, "source", "origin"],
            volume: "a few rows a day",
            ..DAYS
        }
    };
}

static COLLECTIONS: &[CollectionSpec] = &[
    CollectionSpec {
        name: "heart_rate",
        path: "heart_rate",
        brief: "heart-rate samples (time series)",
        summary: "Every heart-rate sample in the export (bpm) with its source, at its instant.",
        range: RangeKind::DateTime,
        latest: true,
        day_keys: &["timestamp"],
        always: &["timestamp"],
        key: None,
        fields: &["timestamp", "bpm", "source"],
        split: Split::Hours(24 * 7),
        series: Some(SeriesSpec { stamp: "timestamp", values: &["bpm"], levels: false, categories: &["source"] }),
        volume: "hundreds to thousands a day",
        daily: None,
        ..DAYS
    },
    readings!("resting_heart_rate", "resting heart rate a day", "The Watch's resting heart rate (bpm), about one a day.", "bpm"),
    readings!(
        "hrv",
        "HRV (SDNN), a few a day",
        "Heart-rate variability as Apple measures it: SDNN in ms (the standard deviation of beat intervals), never RMSSD: it is \
         not comparable with other providers' HRV (RMSSD), so vitals_daily never puts it beside theirs.",
        "sdnn_ms"
    ),
    readings!("walking_heart_rate", "walking heart-rate average", "The Watch's walking heart-rate average (bpm), about one a day.", "bpm"),
    CollectionSpec {
        name: "activity",
        path: "activity",
        brief: "steps, distance, energy, rings, a day",
        summary: "One row a day: steps, distance (km), active and resting energy (kcal), exercise minutes, flights climbed and stand \
                  hours, each a day's total with overlapping sources never added (the higher source in the priority counts where \
                  two overlap: `sources` were used, `left_out` names what overlap dropped); and the Watch's rings as it showed them \
                  (`move_kcal` and goals) from the export's activity summaries.",
        fields: &[
            "day",
            "steps",
            "distance_km",
            "active_kcal",
            "basal_kcal",
            "exercise_min",
            "flights",
            "stand_hours",
            "move_kcal",
            "move_goal_kcal",
            "exercise_goal_min",
            "stand_goal_hours",
            "sources",
            "left_out",
        ],
        key: Some("day"),
        volume: "1 row a day, small",
        daily: Some(DailyRule { pick: DayPick::Only, says: "one row a day, sources merged by priority", settles: Settles::AtDayEnd }),
        ..DAYS
    },
    CollectionSpec {
        name: "sleep",
        path: "sleep",
        brief: "nights per source: stages",
        summary: "One night per source (the Watch, the iPhone, apps writing into Health), filed under the day it ended (its wake-up \
                  day, in its own zone): minutes in bed, asleep, core, deep, REM, awake and asleep without a stage. `origin` names \
                  the vitals provider whose app wrote the night (so it is not counted twice), else `health`.",
        always: &["day", "source", "origin"],
        fields: &[
            "day",
            "source",
            "origin",
            "counts",
            "kind",
            "start",
            "end",
            "in_bed_min",
            "asleep_min",
            "core_min",
            "deep_min",
            "rem_min",
            "awake_min",
            "unspecified_min",
        ],
        volume: "1–3 rows a day",
        daily: Some(DailyRule {
            pick: DayPick::Largest { by: "asleep_min", only: Some(("counts", "yes")) },
            says: "the longest night that counts (`counts`): sources by priority, a night overlapping a higher source's left out, never \
                   added; another provider's copy is left out",
            settles: Settles::OnArrival,
        }),
        flags: &[Flag::new("kind", "\"nap\"", "less than three hours asleep: a nap, not the night")],
        ..DAYS
    },
    CollectionSpec {
        name: "workout",
        path: "workout",
        brief: "workouts: type, distance, energy, HR",
        summary: "Workouts filed under the day they started: type, start, end, active duration and elapsed minutes, distance (km), \
                  active energy (kcal), heart rate (average, minimum, maximum), whether a route (GPX) is in the export, and the \
                  source. `id` names it for vitals_export (its route as GPX).",
        always: &["id", "day"],
        key: Some("id"),
        fields: &[
            "id",
            "day",
            "type",
            "start",
            "end",
            "duration_min",
            "elapsed_min",
            "distance_km",
            "energy_kcal",
            "hr_avg_bpm",
            "hr_min_bpm",
            "hr_max_bpm",
            "route",
            "source",
            "origin",
        ],
        volume: "0–3 rows a day",
        daily: None,
        ..DAYS
    },
    CollectionSpec {
        name: "body",
        path: "body",
        brief: "weight, body fat, BMI, lean mass",
        summary: "Body measurements in kg and %: body mass, body fat, BMI and lean mass, one row per source and instant.",
        fields: &["day", "time", "weight_kg", "body_fat_pct", "bmi", "lean_mass_kg", "source", "origin"],
        volume: "0–2 rows a day",
        daily: Some(OWN_FIRST),
        ..DAYS
    },
    CollectionSpec {
        name: "blood_pressure",
        path: "blood_pressure",
        brief: "blood pressure readings",
        summary: "Blood-pressure readings (mmHg), systolic and diastolic paired as Health pairs them.",
        fields: &["day", "time", "systolic_mmhg", "diastolic_mmhg", "source", "origin"],
        volume: "0–2 rows a day",
        daily: Some(OWN_FIRST),
        ..DAYS
    },
    readings!("spo2", "blood oxygen (%)", "Blood oxygen saturation in % (Apple exports it as a fraction of 1).", "spo2_pct"),
    readings!("respiratory_rate", "breaths a minute", "Respiratory rate (breaths a minute), mostly during sleep.", "breaths_per_min"),
    readings!("vo2max", "cardio fitness (VO2max)", "VO2max estimates (mL/min·kg).", "vo2max"),
    readings!("wrist_temperature", "sleeping wrist temperature", "The Watch's sleeping wrist temperature (°C, absolute), one a night.", "wrist_temp_c"),
    readings!("blood_glucose", "blood glucose (mg/dL)", "Blood glucose in mg/dL (mmol/L converted).", "glucose_mg_dl"),
    CollectionSpec {
        name: "mindful",
        path: "mindful",
        brief: "mindful minutes",
        summary: "Mindfulness sessions: start, end and minutes.",
        fields: &["day", "time", "end", "minutes", "source", "origin"],
        volume: "0–3 rows a day",
        ..DAYS
    },
    CollectionSpec {
        name: "record",
        path: "record",
        brief: "any record type, raw",
        summary: "Every record of the export, raw: its type identifier, start, end, value as written (a category's name for \
                  category types), unit and source (duplicates and records ending before they start are left out and counted). \
                  Large: ask for a day or two, with `fields`.",
        always: &["type", "day"],
        fields: &["type", "day", "start", "end", "value", "unit", "source"],
        options: &[OptionSpec {
            text: true,
            name: "type",
            default: false,
            doc: "only records of this type identifier (HKQuantityTypeIdentifierStepCount); an unknown one names the close ones",
        }],
        split: Split::Days(1),
        volume: "thousands a day",
        daily: None,
        ..DAYS
    },
];
