//! Provider-neutral descriptions of what can be queried. The engine reads these; it knows no provider.

/// The one day rule: a record belongs to the local date where it happened. Each collection says
/// how its day keys give that date, so the engine dates every provider's records alike and
/// `vitals_sources` can say it; `tz` re-dates a record only when the person gives one, and only
/// a record whose date the engine reads from an instant it can place elsewhere (`OwnOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dating {
    /// The provider's own day (a date it sends): never moved, whatever `tz` says.
    ProviderDay,
    /// A day the decoder reads in the offset the record was recorded in, the way the provider
    /// files it (a night under the morning it ended, a recovery under its night's): a date,
    /// never moved by `tz` (a recovery has no instant of its own to move).
    RecordedDay,
    /// An instant written in the offset it was recorded in: the date there. A `tz` the person
    /// gives re-dates it into that zone.
    OwnOffset,
    /// An instant written in the zone the provider keeps for the account and sends with the
    /// records (Withings' `timezone` of a measurement listing): the date there, re-dated as
    /// `OwnOffset` is; the provider records no offset of the moment itself.
    AccountZone,
    /// An instant sent without the offset where it happened (UTC, or the watch's clock read in
    /// the query's zone): its date in the query's zone (`tz`, else this machine's).
    QueryZone,
    /// No day: a profile, a device list.
    Undated,
}

impl Dating {
    /// The rule in words, as `vitals_sources` shows it in a collection's full entry.
    pub fn says(self) -> &'static str {
        match self {
            Dating::ProviderDay => "the provider's own day; tz does not move it",
            Dating::RecordedDay => "the day in the offset it was recorded in, as the provider files it; tz does not move it",
            Dating::OwnOffset => "the local date of its time in the offset it was recorded in; a tz you give re-dates it into that zone",
            Dating::AccountZone => "the local date of its time in the zone the provider keeps for the account; a tz you give re-dates it into that zone",
            Dating::QueryZone => "its instant's date in the query's tz (the provider sends no offset of where it happened)",
            Dating::Undated => "no day",
        }
    }
}

/// How a collection is addressed in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    /// Filtered by calendar day (`start_date`/`end_date` style).
    Date,
    /// Filtered by instant (`start_datetime`/`end_datetime` style): a time series.
    DateTime,
    /// Not filtered by time at all (profile, configuration).
    None,
}

impl RangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RangeKind::Date => "date",
            RangeKind::DateTime => "datetime",
            RangeKind::None => "none",
        }
    }
}

/// One collection of one provider, as data.
#[derive(Debug)]
pub struct CollectionSpec {
    /// Name as the provider spells it (`daily_sleep`, `vO2_max`).
    pub name: &'static str,
    /// Path below the provider's collection prefix.
    pub path: &'static str,
    /// What it holds, in a few words: the one line `vitals_sources` lists it with.
    pub brief: &'static str,
    pub summary: &'static str,
    pub range: RangeKind,
    /// Whether the provider honours `latest=true` (elsewhere it is silently ignored upstream).
    pub latest: bool,
    /// Whether the provider accepts a `fields` projection.
    pub projectable: bool,
    /// Keys, in order of preference, that give a record's local day (dates or datetimes).
    pub day_keys: &'static [&'static str],
    /// Which local date a record is under, read from `day_keys` (the one day rule, [`Dating`]).
    pub dating: Dating,
    /// Keys always returned whatever `fields` says (`id`, `day`, `timestamp`).
    pub always: &'static [&'static str],
    /// The field that names a record: a second record with the same value is the provider
    /// repeating itself across pages, and is dropped. None: no field does (a series' records are
    /// then told apart by their stamp).
    pub key: Option<&'static str>,
    /// Every field the provider documents for this collection.
    pub fields: &'static [&'static str],
    /// Whether the list route wraps records in an envelope (else one bare object).
    pub enveloped: bool,
    /// Whether the provider's sandbox serves it.
    pub in_sandbox: bool,
    pub volume: &'static str,
    /// How a long range is cut into windows that are fetched concurrently.
    pub split: Split,
    /// The order the provider's pages come in: what lets a window that stopped early still
    /// vouch for part of its days (engine/coverage.rs). `Unknown` vouches for none.
    pub order: PageOrder,
    /// For a time series: what its samples carry, so they can be bucketed.
    pub series: Option<SeriesSpec>,
    /// High-resolution series inside each document, compacted when an answer is over budget.
    pub embedded: &'static [Embedded],
    /// How a night is read from each record (its hypnogram and night series), for the night view.
    pub night: Option<NightSpec>,
    /// How a workout is read from each record (its sample series, laps, zones), for the workout view.
    pub workout: Option<WorkoutSpec>,
    /// Options of this collection alone (`include_manual`), passed in `vitals_query`'s `options`.
    pub options: &'static [OptionSpec],
    /// How far back the provider serves this collection at all. None: as far as the account goes.
    pub retention: Option<Retention>,
    /// The provider's dates are the user's own local days, inclusive at both ends (Garmin): a
    /// window asks for exactly its days, unpadded, so a one-day route is one request a day.
    pub exact_days: bool,
    /// Read one record at a time, named by `vitals_query`'s `id` (an activity by the id its
    /// listing gave), rather than over a range.
    pub by_id: bool,
    /// Records dated after today exist (a cycle's predicted days), so a range may reach past today.
    /// Elsewhere nothing after today has been measured: a range wholly after it is refused and one
    /// ending after it is answered through today, said (engine/plan.rs).
    pub ahead: bool,
    /// Which record is a day's value when a metric of this collection is analysed
    /// (`vitals_compare`, `vitals_relate`, `vitals_trend`). None: not a daily metric.
    pub daily: Option<DailyRule>,
    /// Values that change how their row must be read: kept on every row whatever `fields` asks.
    pub flags: &'static [Flag],
    /// A workout collection's span of time, where it has no [`WorkoutSpec`] to say it.
    pub during: Option<Span>,
}

/// Where a workout's record keeps its span of time, so a series of the same provider can be read
/// during one workout named by its id (`vitals_query`'s `workout`).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// The field of its start: an instant, or a wall-clock time read in the query's zone.
    pub start: &'static str,
    pub end: SpanEnd,
}

/// How a workout's record says when it ended.
#[derive(Debug, Clone, Copy)]
pub enum SpanEnd {
    /// The field of its end, read as the start is.
    At(&'static str),
    /// The field of its duration in seconds.
    Seconds(&'static str),
}

/// A value that changes how its row must be read (another person's weigh-in, a value typed in by
/// hand, a day no device measured, a cycle still running). Its field is on every row whatever
/// `fields` asks, and `notices.flagged` counts the rows of the answer as sent that carry it, so
/// the reader can find them: a number beside them is read as the flag says, never as the others.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    pub field: &'static str,
    /// The value that flags a row, as JSON (`true`, `"manual"`).
    pub is: &'static str,
    /// What it means for the row, said once with the count.
    pub means: &'static str,
}

impl Flag {
    pub const fn new(field: &'static str, is: &'static str, means: &'static str) -> Flag {
        Flag { field, is, means }
    }
    /// Whether `row` carries this flag.
    pub fn on(&self, row: &serde_json::Value) -> bool {
        row.get(self.field).is_some_and(|v| serde_json::from_str::<serde_json::Value>(self.is).is_ok_and(|is| *v == is))
    }
}

/// How one day's value of a metric is chosen among the records of that day, and the sentence the
/// answer says it with (`daily_rule`).
#[derive(Debug, Clone, Copy)]
pub struct DailyRule {
    pub pick: DayPick,
    pub says: &'static str,
    /// When a day's value stops changing, which decides what today's value is.
    pub settles: Settles,
}

/// When a day's value is final: what lets today be read as complete (a night that ended this
/// morning, today's readiness) while a day's totals are still the day so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settles {
    /// Final once it exists: a night that ended that day, a score made on waking, the day's first
    /// reading (nothing later that day changes it). Today's is analysed and shown like any day's.
    OnArrival,
    /// Only once the day is over: a day's totals (steps, calories, load, stress) grow until
    /// midnight. Today's value is the day so far: marked partial, and never analysed.
    AtDayEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayPick {
    /// The provider sends one record a day; a second one that day is left out and counted.
    Only,
    /// The record with the largest `by`, among those whose `only.0` field is `only.1` when given
    /// (Oura's longest `long_sleep`: naps are not the night).
    Largest { by: &'static str, only: Option<(&'static str, &'static str)> },
    /// The earliest record of the day by its day key (the morning weigh-in).
    First,
    /// The earliest among those whose `only.0` field is `only.1` (Apple Health's own readings,
    /// not another connected provider's copy written into Health).
    FirstOf { only: (&'static str, &'static str) },
}

impl DailyRule {
    pub const ONE_A_DAY: DailyRule =
        DailyRule { pick: DayPick::Only, says: "the provider sends one record a day: that day's record", settles: Settles::AtDayEnd };
    pub const FIRST: DailyRule = DailyRule {
        pick: DayPick::First,
        says: "the first record of the day (by its time); later ones that day are left out and counted",
        settles: Settles::OnArrival,
    };

    /// The same rule for a value that is final once it exists (a night, a morning score).
    pub const fn on_arrival(self) -> DailyRule {
        DailyRule { settles: Settles::OnArrival, ..self }
    }
}

/// The provider serves only the last `days` days (today included): older days are unreachable,
/// which an answer says rather than calling them empty.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub days: u32,
    /// Why, in the provider's terms (`Polar lists exercises uploaded in the last 30 days`).
    pub why: &'static str,
}

impl Retention {
    /// The first day the provider still serves, seen from `today`.
    pub fn first_day(&self, today: jiff::civil::Date) -> jiff::civil::Date {
        use jiff::ToSpan;
        today.checked_sub((i64::from(self.days.max(1)) - 1).days()).unwrap_or(today)
    }
}

/// A collection-specific switch: a boolean, or a text (`text`: Apple Health's raw records of one
/// type), which the provider checks against its data and which is absent unless given.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    /// A text the provider reads, not a boolean; its `default` then says whether it must be sent
    /// (a raw collection's type: a listing names one).
    pub text: bool,
    pub name: &'static str,
    pub default: bool,
    pub doc: &'static str,
}

/// One section of `vitals_today`.
#[derive(Debug, Clone, Copy)]
pub struct TodaySpec {
    /// `sleep`, `readiness`, `activity`, `weigh_in`...
    pub role: &'static str,
    pub collection: &'static str,
    /// Only the most recent record of the last this-many days (a weigh-in need not be daily),
    /// instead of every record of the report's days.
    pub latest_within_days: Option<u32>,
    /// The columns the section shows, after the record's day: what people ask about first (a
    /// night's minutes per stage, a readiness score and its contributors, the day's steps).
    pub lead: &'static [Lead],
}

impl TodaySpec {
    pub const fn days(role: &'static str, collection: &'static str, lead: &'static [Lead]) -> TodaySpec {
        TodaySpec { role, collection, latest_within_days: None, lead }
    }
}

/// One column of a `vitals_today` section: a field of the record (a dotted path into nested
/// objects), converted as `how` says, or a statistic of one of the record's embedded series.
/// The name carries the unit (`deep_min`, `hrv_avg_ms`, `hr_avg_bpm`); a code is shown in words.
#[derive(Debug, Clone, Copy)]
pub struct Lead {
    pub name: &'static str,
    pub from: &'static str,
    pub how: Derive,
}

/// How a headline value is made from the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derive {
    /// As it is (a number rounded to two decimals).
    Same,
    /// Seconds as minutes (one decimal).
    Minutes,
    /// A time as the local wall clock, `HH:MM` (a time without an offset is already local).
    Clock,
    /// Metres as kilometres (two decimals).
    Km,
    /// A statistic of the readings of an embedded series of samples (`Embedded`), nulls left out.
    Series(Stat),
    /// A code on a scale from 1, shown as its meaning (`good` for Polar's 5 of 6): the words for
    /// 1, 2, ... A value off the scale is shown as it came.
    Scale(&'static [&'static str]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    Min,
    Avg,
    Max,
}

impl Lead {
    /// A field shown under its own name (`contributors.hrv_balance`).
    pub const fn field(from: &'static str) -> Lead {
        Lead { name: from, from, how: Derive::Same }
    }
    pub const fn same(name: &'static str, from: &'static str) -> Lead {
        Lead { name, from, how: Derive::Same }
    }
    pub const fn minutes(name: &'static str, from: &'static str) -> Lead {
        Lead { name, from, how: Derive::Minutes }
    }
    pub const fn clock(name: &'static str, from: &'static str) -> Lead {
        Lead { name, from, how: Derive::Clock }
    }
    pub const fn km(name: &'static str, from: &'static str) -> Lead {
        Lead { name, from, how: Derive::Km }
    }
    pub const fn series(name: &'static str, from: &'static str, stat: Stat) -> Lead {
        Lead { name, from, how: Derive::Series(stat) }
    }
    pub const fn scale(name: &'static str, from: &'static str, words: &'static [&'static str]) -> Lead {
        Lead { name, from, how: Derive::Scale(words) }
    }
    /// The record's top-level field this column reads.
    pub fn root(&self) -> &'static str {
        self.from.split('.').next().unwrap_or(self.from)
    }
}

/// The order a provider's pages come in, across pages (records inside one page may be in any
/// order). The engine checks every page against it and trusts it only while the pages agree: a
/// page that contradicts it turns the window's coverage to `Unknown`, said in the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOrder {
    /// Every page's records are at or after the records of the pages before.
    OldestFirst,
    /// Every page's records are at or before the records of the pages before.
    NewestFirst,
    /// No order is known: a window that did not reach its last page vouches for nothing.
    Unknown,
}

impl PageOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            PageOrder::OldestFirst => "oldest_first",
            PageOrder::NewestFirst => "newest_first",
            PageOrder::Unknown => "unknown",
        }
    }
}

/// How a range is cut into windows. A window should fit one upstream page: then a month is one
/// round of concurrent requests rather than a chain of dependent pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Windows of this many hours on a grid fixed in absolute time (so a window seen once is the
    /// same window in the next query, and the cache can serve it).
    Hours(u32),
    /// Windows sized so that one page of `page_rows` holds them at the density the account's
    /// data shows (engine/density.rs), on a grid fixed in absolute time as `Hours`; `hours`
    /// until a density is known.
    Fill { hours: u32, page_rows: u32 },
    /// Windows of this many local days on a grid of days fixed from 1970-01-01.
    Days(u32),
    /// One request (range-less collections, `latest`).
    Whole,
}

/// The samples of a time series: numeric values (bucketed into n/avg/min/max), whether the
/// first/last of a bucket matter (levels such as a battery), and categorical fields (the most
/// frequent value of a bucket).
#[derive(Debug, Clone, Copy)]
pub struct SeriesSpec {
    /// The field holding each sample's instant (RFC 3339); bucket rows carry their start there too.
    pub stamp: &'static str,
    pub values: &'static [&'static str],
    pub levels: bool,
    pub categories: &'static [&'static str],
}

/// A series inside a document.
#[derive(Debug, Clone, Copy)]
pub struct Embedded {
    pub field: &'static str,
    pub kind: EmbeddedKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddedKind {
    /// Evenly spaced samples in one object, under the keys its [`SampleShape`] names.
    Samples(SampleShape),
    /// A string with one character per epoch of this many seconds (hypnograms, activity classes).
    Epochs(u32),
}

/// Where a sleep record keeps its night: the hypnogram (an [`EmbeddedKind::Epochs`] string from
/// `start`), what each of its characters means, and the embedded series measured through it.
#[derive(Debug, Clone, Copy)]
pub struct NightSpec {
    pub hypnogram: &'static str,
    /// The instant of the first epoch, and the night's end.
    pub start: &'static str,
    pub end: &'static str,
    pub epoch_s: u32,
    /// Each character of the hypnogram and the stage it stands for; any other is `Unknown`.
    pub legend: &'static [(char, Stage)],
    /// Embedded [`EmbeddedKind::Samples`] fields: heart rate (bpm) and HRV (ms), where measured.
    pub heart_rate: Option<&'static str>,
    pub hrv: Option<&'static str>,
    /// The provider's own stage totals: the field, and what to divide it by for minutes. These
    /// are what the text answer says, and what a view's numbers show (a hypnogram's epochs need
    /// not add up to them).
    pub totals: &'static [(Stage, &'static str, f64)],
}

/// Where a workout record keeps what a chart of it needs. A listing that only names its workouts
/// (`garmin.activities`) points at the collection that reads one by id (`detail`).
#[derive(Debug, Clone, Copy)]
pub struct WorkoutSpec {
    /// A collection of this provider that reads one workout by `id` with its samples; None: this
    /// collection's own records carry them when asked with `options`.
    pub detail: Option<&'static str>,
    /// The options that make a record carry its samples, laps and zones (all set to true).
    pub options: &'static [&'static str],
    pub sport: &'static str,
    /// The instant it started, its duration (s) and distance (m).
    pub start: &'static str,
    pub duration_s: &'static str,
    pub distance_m: &'static str,
    /// Embedded [`EmbeddedKind::Samples`] fields and what they measure: (what, unit, field). Two
    /// fields of the same measure (cycling and running cadence) are two traces.
    pub series: &'static [(&'static str, &'static str, &'static str)],
    pub laps: Option<LapsSpec>,
    pub zones: Option<ZonesSpec>,
}

/// A workout's laps or splits: an array at `path` (a JSON pointer into the record).
#[derive(Debug, Clone, Copy)]
pub struct LapsSpec {
    pub path: &'static str,
    /// What they are, as the view titles them ("laps", "km splits").
    pub what: &'static str,
    pub seconds: &'static str,
    /// Each one's distance (m); None: every one is a kilometre but a shorter last one.
    pub distance_m: Option<&'static str>,
    pub avg_hr_bpm: &'static str,
}

/// A workout's time in heart-rate zones: an array at `path`, either of seconds (zone 0 below the
/// first zone, Garmin's FIT) or of objects with the seconds and bounds under these keys.
#[derive(Debug, Clone, Copy)]
pub struct ZonesSpec {
    pub path: &'static str,
    pub seconds: Option<&'static str>,
    pub lower_bpm: Option<&'static str>,
    pub upper_bpm: Option<&'static str>,
}

/// A sleep stage as every provider's legend maps to it (Polar's two non-REM stages lighter than
/// deep are both `Light`, as Polar's own light minutes count them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Awake,
    Rem,
    Light,
    Deep,
    Unknown,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Awake => "awake",
            Stage::Rem => "REM",
            Stage::Light => "light",
            Stage::Deep => "deep",
            Stage::Unknown => "unknown",
        }
    }
}

/// The keys of an embedded series of evenly spaced samples (Oura's
/// `{"interval": seconds, "items": [number|null], "timestamp": start}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleShape {
    pub interval: &'static str,
    pub items: &'static str,
    pub start: &'static str,
}

/// A provider's published request budget, shared by every query of this process.
#[derive(Debug, Clone, Copy)]
pub struct RateBudget {
    pub requests: u32,
    pub per: std::time::Duration,
}

impl RateBudget {
    /// This budget as a process counts it: its window divided by the configuration's
    /// [`time_scale`](crate::config::Config::time_scale), never below a millisecond.
    pub fn scaled(self, config: &crate::config::Config) -> RateBudget {
        RateBudget { requests: self.requests, per: (self.per / config.time_scale()).max(std::time::Duration::from_millis(1)) }
    }
}

#[cfg(test)]
mod rate_tests {
    use super::RateBudget;
    use crate::config::{Config, RATE_SCALE_ENV};
    use std::time::Duration;

    #[test]
    fn a_time_scale_divides_budget_windows_only() {
        let minute = RateBudget { requests: 120, per: Duration::from_secs(60) };
        let same = minute.scaled(&Config::default());
        assert_eq!((same.requests, same.per), (120, Duration::from_secs(60)));
        let fast = minute.scaled(&Config::default().with(RATE_SCALE_ENV, "20"));
        assert_eq!((fast.requests, fast.per), (120, Duration::from_secs(3)));
        let zero = minute.scaled(&Config::default().with(RATE_SCALE_ENV, "0"));
        assert_eq!(zero.per, Duration::from_secs(60), "0 is no scale");
    }
}

impl CollectionSpec {
    /// What a provider's catalog starts a collection from (`..CollectionSpec::DAILY`): dated rows
    /// named by their `day` (every collection names its day column `day`), one request per window of 28 days, no paging (so no page order to
    /// trust), no series, options, retention or padding rules of its own.
    pub const DAILY: CollectionSpec = CollectionSpec {
        name: "",
        path: "",
        brief: "",
        summary: "",
        range: RangeKind::Date,
        latest: false,
        projectable: false,
        day_keys: &["day"],
        dating: Dating::ProviderDay,
        always: &["day"],
        key: Some("day"),
        fields: &[],
        enveloped: true,
        in_sandbox: true,
        volume: "1 row a day, small",
        order: PageOrder::Unknown,
        split: Split::Days(28),
        series: None,
        embedded: &[],
        night: None,
        workout: None,
        options: &[],
        retention: None,
        exact_days: false,
        by_id: false,
        ahead: false,
        daily: Some(DailyRule::ONE_A_DAY),
        flags: &[],
        during: None,
    };

    pub fn knows_field(&self, f: &str) -> bool {
        self.fields.contains(&f) || self.always.contains(&f)
    }
    /// Whether `resolution` means anything here: a series, or documents carrying series.
    pub fn has_resolution(&self) -> bool {
        self.series.is_some() || !self.embedded.is_empty()
    }
    pub fn option(&self, name: &str) -> Option<&OptionSpec> {
        self.options.iter().find(|o| o.name == name)
    }
    /// A workout's span of time: its own, or its workout view's start and duration. None: not a workout.
    pub fn workout_span(&self) -> Option<Span> {
        self.during.or(self.workout.map(|w| Span { start: w.start, end: SpanEnd::Seconds(w.duration_s) }))
    }
}

/// One provider, as data.
#[derive(Debug)]
pub struct ProviderSpec {
    /// The connection's name: what `vitals_connect`, `vitals-mcp auth` and the token store use.
    pub name: &'static str,
    /// The prefix of its collections' qualified names: the provider's own name, except for a
    /// second connection to the same service (`garmin-connect`'s collections are `garmin.*`).
    pub namespace: &'static str,
    pub display: &'static str,
    pub collections: &'static [CollectionSpec],
    /// The collection whose one-day read `vitals_check` uses to see that the API answers.
    pub probe: &'static str,
    /// What `vitals_today` reads.
    pub today: &'static [TodaySpec],
    /// The longest range one query may ask for, in days, where the provider sets one.
    pub max_days: Option<u32>,
    pub rate_budget: RateBudget,
    /// Why recent days may still change, in the provider's terms (`a ring can sync late`): said when
    /// an answer comes from the memory cache.
    pub late_sync: &'static str,
    /// How it is connected: a browser login, a pasted key, a session, or nothing (sample data only).
    pub connection: crate::connection::Connection,
    /// HTTP statuses that mean "no data for what was asked" rather than an error (Polar answers a
    /// day without data with 204 or 404): read as an empty page.
    pub no_data: &'static [u16],
    /// The files of one activity the provider offers for `vitals_export`, and where their ids are listed.
    pub files: Option<Files>,
    /// Requests in flight at once by default, from what the provider's budget allows (the reason
    /// beside each value). Halved after a "slow down", raised again by clean pages
    /// (`engine/flight.rs`); `VITALS_CONCURRENCY` caps it.
    pub in_flight: usize,
    /// Where this provider's values of `vitals_daily`'s columns come from.
    pub daily_view: &'static [DailySource],
    /// Whether a 429 is waited out and asked again (within the query's wait budget). Garmin
    /// Connect's are not: the answer is cut there and says so (reference garmin/README.md §3).
    pub retries_429: bool,
    /// The requests other than a GET this provider requires in order to read, besides the token
    /// endpoints and the revoke its OAuth declares (`OAuthSpec.token_urls`, `Revoke::Endpoint`):
    /// `http.rs` sends a non-GET only to a route declared here or there ([`ProviderSpec::non_gets`]).
    pub non_get: &'static [NonGet],
    /// What a field's values mean where its name does not say: its unit (`s`, `bpm`), its scale,
    /// or what its codes stand for, as (collection, field, meaning). An answer carries the
    /// entries of the fields it holds (`legend`); a night's hypnogram and series are read from
    /// its [`NightSpec`] when not listed here.
    pub legend: &'static [(&'static str, &'static str, &'static str)],
}

/// A request other than a GET that a provider requires in order to read (a registration, a
/// sign-in, a key exchange, a read that is a form POST), and why: the only kind `http.rs` sends
/// besides GETs, and only to a URL whose path ends with `route`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonGet {
    pub method: &'static str,
    pub route: &'static str,
    pub why: &'static str,
}

impl NonGet {
    pub const fn post(route: &'static str, why: &'static str) -> NonGet {
        NonGet { method: "POST", route, why }
    }
}

/// One normalised column of `vitals_daily`: what it holds, in which unit, and why one provider's
/// value is shown before another's when two measured the same day.
#[derive(Debug, Clone, Copy)]
pub struct DailyColumn {
    pub name: &'static str,
    pub unit: &'static str,
    pub why: &'static str,
}

/// A provider's value of a `vitals_daily` column: a field of one of its daily collections (the
/// day's record chosen by that collection's `DailyRule`), times `scale`, with the conversion said.
#[derive(Debug, Clone, Copy)]
pub struct DailySource {
    pub column: &'static str,
    pub collection: &'static str,
    pub field: &'static str,
    pub scale: f64,
    /// Said with every value converted (`seconds ÷ 60`); None: the provider's own unit.
    pub conversion: Option<&'static str>,
    /// Lower is shown first when two providers have the same day; the column's `why` says the rule.
    pub rank: u8,
}

impl DailySource {
    pub const fn same(column: &'static str, collection: &'static str, field: &'static str, rank: u8) -> DailySource {
        DailySource { column, collection, field, scale: 1.0, conversion: None, rank }
    }
}

/// The columns of `vitals_daily`, in order. Nothing is averaged across devices: each column shows
/// one provider's value by the rule in `why`, and every other provider's value of that day beside it.
pub static DAILY_COLUMNS: &[DailyColumn] = &[
    DailyColumn {
        name: "sleep_total_min",
        unit: "min",
        why: "the device worn overnight first (a ring, then a watch or a strap): it measures the sleeper, where a mat under the mattress can count a partner",
    },
    DailyColumn { name: "sleep_efficiency_pct", unit: "%", why: "the device worn overnight first, then a mat under the mattress" },
    DailyColumn {
        name: "sleep_score",
        unit: "score",
        why: "the device worn overnight first; every provider scores on its own scale, so scores of two providers are never compared",
    },
    DailyColumn {
        name: "resting_hr_bpm",
        unit: "bpm",
        why: "a watch's all-day resting heart rate first, then a ring's lowest heart rate of the night (what its app shows as resting) or a strap's resting heart rate of the night",
    },
    DailyColumn {
        name: "hrv_ms",
        unit: "ms",
        why: "night-time HRV (RMSSD) of a device worn overnight, in the order the server lists providers; devices average over different parts of the night, so their values differ",
    },
    DailyColumn { name: "steps", unit: "steps", why: "a watch worn all day first, then a ring, then Withings' tracker or phone" },
    DailyColumn { name: "active_kcal", unit: "kcal", why: "a watch worn all day first, then a ring, then Withings' tracker or phone" },
    DailyColumn { name: "weight_kg", unit: "kg", why: "a scale's first weigh-in of the day, first the scale's own provider, then a watch maker's copy" },
    DailyColumn { name: "body_fat_pct", unit: "%", why: "a scale's first weigh-in of the day, first the scale's own provider" },
    DailyColumn { name: "systolic_mmhg", unit: "mmHg", why: "the first blood-pressure reading of the day" },
    DailyColumn { name: "diastolic_mmhg", unit: "mmHg", why: "the first blood-pressure reading of the day" },
    DailyColumn {
        name: "readiness_score",
        unit: "score",
        why: "a provider's own readiness score; other providers' recovery measures are on other scales and are not put here",
    },
];

/// Activity files a provider serves (Polar's exercises, Garmin's activities).
#[derive(Debug, Clone, Copy)]
pub struct Files {
    pub formats: &'static [FileFormat],
    /// Formats the provider does not serve that vitals writes from its FIT (`activity_file`).
    pub from_fit: &'static [FileFormat],
    /// The collection whose `id` names an activity.
    pub listed_in: &'static str,
    /// Said when a file is not there (an unknown id, GPX without a route), in the provider's terms.
    pub missing: &'static str,
}

impl Files {
    /// Every format `vitals_export` writes: the provider's own, then those written from its FIT.
    pub fn offered(&self) -> Vec<FileFormat> {
        self.formats.iter().chain(self.from_fit).copied().collect()
    }
}

/// A file format of an exported activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Fit,
    Tcx,
    Gpx,
}

impl FileFormat {
    pub const ALL: [FileFormat; 3] = [FileFormat::Fit, FileFormat::Tcx, FileFormat::Gpx];
    pub fn as_str(self) -> &'static str {
        match self {
            FileFormat::Fit => "fit",
            FileFormat::Tcx => "tcx",
            FileFormat::Gpx => "gpx",
        }
    }
    pub fn parse(s: &str) -> Option<FileFormat> {
        FileFormat::ALL.into_iter().find(|f| f.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

impl ProviderSpec {
    /// A collection's name as the tools take it (`garmin.training_readiness`).
    pub fn qualified(&self, collection: &str) -> String {
        format!("{}.{collection}", self.namespace)
    }
    pub fn collection(&self, name: &str) -> Option<&'static CollectionSpec> {
        self.collections.iter().find(|c| c.name == name)
    }

    /// What `field` of `collection` means where its name does not say ([`ProviderSpec::legend`],
    /// then the collection's night: its hypnogram's codes, its series' units).
    pub fn meaning(&self, collection: &CollectionSpec, field: &str) -> Option<String> {
        if let Some((_, _, says)) = self.legend.iter().find(|(c, f, _)| *c == collection.name && *f == field) {
            return Some(says.to_string());
        }
        let night = collection.night?;
        if field == night.hypnogram {
            let codes: Vec<String> = night.legend.iter().map(|(ch, stage)| format!("{ch} {}", stage.as_str())).collect();
            return Some(format!("a digit per {} s: {}", night.epoch_s, codes.join(", ")));
        }
        let unit = [(night.heart_rate, "bpm"), (night.hrv, "ms")].into_iter().find(|(f, _)| *f == Some(field))?.1;
        Some(format!("{unit}, in `items` every `interval` s"))
    }

    /// Every non-GET request this provider may send, declared: its own [`NonGet`]s, its OAuth
    /// token endpoints (RFC 6749: a POST) and its revoke endpoint, each as (method, route, why).
    pub fn non_gets(&self) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = self.non_get.iter().map(|n| (n.method.into(), n.route.into(), n.why.into())).collect();
        if let Some(o) = self.connection.oauth() {
            for (url, _) in o.token_urls {
                out.push(("POST".into(), path_of(url), "the OAuth token endpoint: exchanging a code and refreshing a token are POSTs".into()));
            }
            if let crate::connection::Revoke::Endpoint { url, .. } = o.revoke {
                out.push(("POST".into(), path_of(url), "ending vitals' own grant when the user disconnects".into()));
            }
        }
        out
    }
}

/// The path of a URL (`https://host/a/b?q` → `/a/b`).
pub fn path_of(url: &str) -> String {
    url::Url::parse(url).map(|u| u.path().to_string()).unwrap_or_default()
}
