//! Turning what the caller asked into an exact plan, or a clear error before any request.
use super::answer::BeyondRetention;
use super::render::Format;
use super::resolution::Resolution;
use super::{Engine, QueryError};
use crate::catalog::{CollectionSpec, RangeKind};
use crate::providers::{Credential, Due, Mode, Options, Provider};
use crate::time::{read_date, Zone};
use jiff::civil::Date;
use jiff::{Timestamp, ToSpan};
use std::sync::Arc;

/// Days fetched beyond each end of a date range: covers exclusive `end_date`s and UTC-filtered
/// collections; the records outside the asked range are trimmed by their own local day.
pub const PAD_DAYS: i64 = 2;
/// Days covered when the caller gives no range at all (said in the answer).
pub const DEFAULT_DAYS: i64 = 7;
/// Characters an answer may take unless the caller says otherwise, and the bounds of what it may say.
pub const DEFAULT_MAX_CHARS: usize = 100_000;
pub const MIN_MAX_CHARS: usize = 5_000;
pub const MAX_MAX_CHARS: usize = 2_000_000;

/// The caller's question, as the MCP layer received it.
#[derive(Debug, Default, Clone)]
pub struct QueryRequest {
    pub collection: String,
    pub start: Option<String>,
    pub end: Option<String>,
    pub day: Option<String>,
    pub fields: Option<Vec<String>>,
    pub fields_split: bool,
    pub latest: bool,
    pub format: Option<String>,
    pub tz: Option<String>,
    pub resolution: Option<String>,
    pub max_chars: Option<i64>,
    /// Fetch every window again (the fresh result still refreshes the cache).
    pub fresh: bool,
    /// Empty the whole memory cache first.
    pub forget: bool,
    /// Collection-specific options (`{"include_manual": true}`).
    pub options: Option<serde_json::Map<String, serde_json::Value>>,
    /// Keep only the last this-many records of the range (vitals_today's latest weigh-in); said in notices.
    pub keep_last: Option<usize>,
    /// One record by its id, for collections read one at a time (`garmin.activity`).
    pub id: Option<String>,
    /// Only a series' samples from the first instant up to (not including) the second: a chart
    /// zoomed into part of the days read (said in notices.window).
    pub window: Option<(jiff::Timestamp, jiff::Timestamp)>,
    /// `vitals_query`'s `from` and `to`: the same, as the caller wrote the instants (checked here).
    pub from: Option<String>,
    pub to: Option<String>,
    /// Only a series' samples during this workout, by its id in the provider's workout collection
    /// (engine/during.rs turns it into `from` and `to`).
    pub workout: Option<String>,
    /// What the window is, said in notices.window (a workout); None: its instants alone.
    pub window_label: Option<String>,
    /// Where to report how far the read is (a client that sent a `progressToken`).
    pub progress: Option<super::progress::Progress>,
    /// When the tool call must answer (shared by every read of one call); None: a budget from now.
    pub deadline: Option<super::Deadline>,
}

/// Characters kept for everything around `data` (notices, range, counts).
pub const ENVELOPE: usize = 3_000;

pub struct Plan {
    pub provider: Arc<dyn Provider>,
    pub collection: &'static CollectionSpec,
    pub qualified: String,
    pub zone: Zone,
    /// Inclusive local days asked for (None for `latest` and range-less collections).
    pub range: Option<(Date, Date)>,
    pub latest: bool,
    /// Fields asked for and known, plus the always-returned ones.
    pub fields: Option<Vec<String>>,
    /// What is sent upstream: `fields` plus the keys needed to trim.
    pub upstream_fields: Option<Vec<String>>,
    pub ignored_fields: Vec<String>,
    pub fields_split: bool,
    pub format: Format,
    pub range_note: Option<String>,
    /// The asked end was after today: the range stops at today, and this says so.
    pub after_today: Option<String>,
    /// None: automatic (raw when it fits the budget, else the finest resolution that does).
    pub resolution: Option<Resolution>,
    pub max_chars: usize,
    pub fresh: bool,
    pub forget: bool,
    /// Every option of the collection, set or defaulted.
    pub options: Options,
    pub keep_last: Option<usize>,
    /// The provider's credential, read once for this query (again only after renewing it).
    pub cred: Credential,
    /// What was done to the credential before the first request, if anything was due.
    pub prepared: Option<Due>,
    /// The asked range began before the provider's retention: it was cut to what can be reached.
    pub beyond_retention: Option<BeyondRetention>,
    /// The one record asked for by id.
    pub id: Option<String>,
    /// Only a series' samples in this span of instants ([`QueryRequest::window`]).
    pub window: Option<(jiff::Timestamp, jiff::Timestamp)>,
    pub window_label: Option<String>,
    pub progress: Option<super::progress::Progress>,
    /// When fetching must stop so the call still answers in time.
    pub deadline: super::Deadline,
}

impl Plan {
    /// The characters `data` may take: `max_chars` less the [`ENVELOPE`] and the room the
    /// collection's `legend` may take (engine/legend.rs).
    pub fn data_budget(&self) -> usize {
        self.max_chars.saturating_sub(self.envelope())
    }

    /// What an answer keeps for everything around `data`.
    pub fn envelope(&self) -> usize {
        ENVELOPE + super::legend::room(self.provider.spec(), self.collection)
    }
}

fn bad(s: String) -> QueryError {
    QueryError::BadInput(s)
}

/// The earliest day a query may name: no wearable recorded anything before it.
pub const FIRST_DAY: Date = jiff::civil::date(1970, 1, 1);

/// How far after today a query may reach: a provider's predictions (a cycle's next days) reach no
/// further, and any later day could only be empty.
const AHEAD_DAYS: i64 = 366;

/// A day parameter: a real calendar date, from [`FIRST_DAY`] to a year after today.
fn date_param(name: &str, v: &str, today: Date) -> Result<Date, QueryError> {
    let shown: String = v.chars().take(40).collect();
    let shown = if shown.len() < v.len() { format!("{shown:?}… ({} characters)", v.chars().count()) } else { format!("{v:?}") };
    let d = read_date(v.trim()).map_err(|why| bad(format!("`{name}`: {shown} {why}. Send a calendar date as YYYY-MM-DD, for example {today}.")))?;
    let last = today.checked_add(AHEAD_DAYS.days()).unwrap_or(today);
    if d < FIRST_DAY || d > last {
        return Err(bad(format!(
            "`{name}`: {d} is outside the days a query can name, {FIRST_DAY} to {last} (a year after today, {today}): no provider has data \
             {}. Send a day in that span.",
            if d < FIRST_DAY { "from before 1970" } else { "that far ahead" }
        )));
    }
    Ok(d)
}

/// Check every parameter, one function each, into a plan; the first bad one is an error naming it.
pub fn plan(engine: &Engine, req: QueryRequest) -> Result<Plan, QueryError> {
    let (provider, collection, qualified) = target(engine, &req.collection)?;
    let cred = usable(&provider, collection, &qualified)?;
    let zone = zone(engine, req.tz.as_deref())?;
    let format = format(req.format.as_deref())?;
    let resolution = resolution(engine, req.resolution.as_deref(), collection, &qualified)?;
    let max_chars = max_chars(req.max_chars)?;
    latest(engine, &req, collection, &qualified)?;
    let span = span(engine, &req, collection, &qualified)?;
    let asked = match span {
        Some(w) => Asked { days: Some(span_days(w, &zone)?), defaulted: None, after_today: None },
        None => range(&req, collection, &qualified, &zone)?,
    };
    let names = if span.is_some() { "`from`/`to`" } else { "`start`/`end`" };
    let (range, beyond_retention) = retention(asked.days, provider.spec().display, collection, &qualified, &zone, names)?;
    longest(range, &provider, names)?;
    let (fields, upstream_fields, ignored_fields) = fields(req.fields.as_deref(), collection, &qualified)?;
    let options = plan_options(collection, &qualified, req.options.as_ref())?;
    let id = record_id(engine, req.id.as_deref(), &req, collection, &qualified)?;
    Ok(Plan {
        provider,
        collection,
        qualified,
        zone,
        range,
        latest: req.latest,
        fields,
        upstream_fields,
        ignored_fields,
        fields_split: req.fields_split,
        format,
        range_note: asked.defaulted,
        after_today: asked.after_today,
        resolution,
        max_chars,
        fresh: req.fresh,
        forget: req.forget,
        options,
        keep_last: req.keep_last,
        cred,
        prepared: None,
        beyond_retention,
        id,
        window: req.window.or(span),
        window_label: req.window_label.clone(),
        progress: req.progress.clone(),
        deadline: req.deadline.unwrap_or_else(|| super::Deadline::after(engine.limits.call_budget)),
    })
}

/// `collection`: a qualified name of a provider this engine has.
fn target(engine: &Engine, name: &str) -> Result<(Arc<dyn Provider>, &'static CollectionSpec, String), QueryError> {
    let names = || engine.collection_names().join(", ");
    let (pname, cname) = name
        .split_once('.')
        .ok_or_else(|| bad(format!("`collection` must be a qualified name `provider.collection`; got {name:?}. Available: {}.", names())))?;
    if !engine.knows_namespace(pname) {
        return Err(bad(format!("`collection`: unknown provider {pname:?}. Available collections: {}.", names())));
    }
    let (provider, collection) =
        engine.resolve(pname, cname).ok_or_else(|| bad(format!("`collection`: {name:?} is not a collection. Available: {}.", names())))?;
    Ok((provider.clone(), collection, format!("{pname}.{cname}")))
}

/// The provider's credential, read once for the query, and whether it can serve the collection.
fn usable(provider: &Arc<dyn Provider>, collection: &CollectionSpec, qualified: &str) -> Result<Credential, QueryError> {
    let cred = provider.credential().current();
    let p = provider.spec();
    if let Some(why) = &cred.problem {
        return Err(QueryError::NeedsAccount { provider: p.name, why: format!("{qualified}: {why}") });
    }
    if cred.mode() == Mode::NeedsCredentials {
        let involves = p.connection.session().map(|s| format!(" What connecting involves: {}", s.caution)).unwrap_or_default();
        return Err(QueryError::NeedsAccount {
            provider: p.name,
            why: format!(
                "{qualified} needs the user's {} account connected: {} has no sample data. Connect it with vitals_connect \
                 (provider={}) or `vitals-mcp auth {}`.{involves}",
                p.display, p.display, p.name, p.name
            ),
        });
    }
    match provider.unavailable(collection, &cred) {
        Some(why) => Err(QueryError::NeedsAccount { provider: p.name, why }),
        None => Ok(cred),
    }
}

/// `tz`: an IANA name or an offset; this machine's zone when absent.
/// A word-valued parameter as it was sent: an empty or space-padded value is refused with what to
/// send, never taken to mean the default (or the trimmed word) without a word said.
fn word<'a>(name: &str, v: Option<&'a str>, send: &str) -> Result<Option<&'a str>, QueryError> {
    match v {
        None => Ok(None),
        Some("") => Err(bad(format!("`{name}`: an empty string is not a value. {send}, or leave `{name}` out for the default."))),
        Some(v) if v.trim() != v => Err(bad(format!("`{name}`: {v:?} has spaces around it. Send {:?} without them.", v.trim()))),
        Some(v) => Ok(Some(v)),
    }
}

const TZ_SEND: &str = "Send an IANA name such as Europe/Paris or an offset such as -06:00";

/// `tz` of any tool that reads local days: an IANA name or an offset; this machine's zone when
/// absent. Every tool refuses a bad one in the same words.
pub fn zone(engine: &Engine, tz: Option<&str>) -> Result<Zone, QueryError> {
    match word("tz", tz, TZ_SEND)? {
        Some(t) => Zone::parse(t).map_err(|e| bad(format!("`tz`: {e}. {TZ_SEND}."))),
        None => Ok(engine.zone()),
    }
}

/// `format`: columns (default), records or csv.
fn format(f: Option<&str>) -> Result<Format, QueryError> {
    match word("format", f, "Send `columns`, `records` or `csv`")? {
        None | Some("columns") | Some("json") => Ok(Format::Columns),
        Some("records") => Ok(Format::Records),
        Some("csv") => Ok(Format::Csv),
        Some(f) => Err(bad(format!(
            "`format`: {f:?} is not a format. Send `columns` (the default: {{\"columns\": [...], \"rows\": [[...]]}}), `records` (one object per record) or `csv`."
        ))),
    }
}

/// `resolution`: a known one, and only where the collection has a series to resample.
fn resolution(engine: &Engine, r: Option<&str>, collection: &CollectionSpec, qualified: &str) -> Result<Option<Resolution>, QueryError> {
    let Some(r) = word("resolution", r, &format!("Send one of {}", Resolution::names()))? else {
        return Ok(None);
    };
    let res = Resolution::parse(r).ok_or_else(|| bad(format!("`resolution`: {r:?} is not a resolution. Send one of {}.", Resolution::names())))?;
    if !collection.has_resolution() {
        let with = engine.collections_where(CollectionSpec::has_resolution);
        return Err(bad(format!("`resolution`: {qualified} has no time series to resample. It applies to {}; leave it out here.", with.join(", "))));
    }
    Ok(Some(res))
}

/// `max_chars`: within the bounds, or the default.
fn max_chars(n: Option<i64>) -> Result<usize, QueryError> {
    match n {
        None => Ok(DEFAULT_MAX_CHARS),
        Some(n) if (MIN_MAX_CHARS as i64..=MAX_MAX_CHARS as i64).contains(&n) => Ok(n as usize),
        Some(n) => Err(bad(format!(
            "`max_chars`: {n} is out of range. Send a number of characters from {MIN_MAX_CHARS} to {MAX_MAX_CHARS} (default {DEFAULT_MAX_CHARS})."
        ))),
    }
}

/// `latest`: only where the provider honours it, and never with a range; `day` never with `start`/`end`.
fn latest(engine: &Engine, req: &QueryRequest, collection: &CollectionSpec, qualified: &str) -> Result<(), QueryError> {
    let has_range = req.start.is_some() || req.end.is_some() || req.day.is_some();
    if req.latest && !collection.latest {
        let honour = engine.collections_where(|c| c.latest);
        return Err(bad(format!(
            "`latest`: {qualified} does not honour latest=true (upstream would silently return the whole range). \
             Collections that honour it: {}. For the most recent record here, ask for a recent range (for example `day` = today or the last 7 days) and take the last record.",
            honour.join(", ")
        )));
    }
    if req.latest && has_range {
        return Err(bad(
            "`latest`: latest=true returns the single most recent record and cannot be combined with `start`, `end` or `day`. Send one or the other.".into(),
        ));
    }
    if req.day.is_some() && (req.start.is_some() || req.end.is_some()) {
        return Err(bad("`day` is shorthand for start=end=day; send either `day` or `start`/`end`, not both.".into()));
    }
    Ok(())
}

/// `start`, `end`, `day`: inclusive local days, defaults said, up to today.
struct Asked {
    /// None for `latest` and range-less collections.
    days: Option<(Date, Date)>,
    /// A default taken for a missing `start` or `end`, said.
    defaulted: Option<String>,
    /// An end after today moved back to today, said.
    after_today: Option<String>,
}

fn range(req: &QueryRequest, collection: &CollectionSpec, qualified: &str, zone: &Zone) -> Result<Asked, QueryError> {
    let has_range = req.start.is_some() || req.end.is_some() || req.day.is_some();
    let none = |defaulted| Asked { days: None, defaulted, after_today: None };
    if req.latest {
        return Ok(none(None));
    }
    let today = zone.today();
    if collection.range == RangeKind::None {
        // Not used, but still read: a value that is not a day is refused, never passed over.
        for (name, v) in [("day", &req.day), ("start", &req.start), ("end", &req.end)] {
            if let Some(v) = v {
                date_param(name, v, today)?;
            }
        }
        let note = has_range.then(|| format!("{qualified} is not filtered by time: `start`/`end`/`day` were not used, and every record is returned."));
        return Ok(none(note));
    }
    if req.day.is_some() && (req.start.is_some() || req.end.is_some()) {
        return Err(bad("`day` is one day by itself: send either `day`, or `start` and `end`, not both.".into()));
    }
    let mut note = None;
    let (s, e) = match (&req.day, &req.start, &req.end) {
        (Some(d), _, _) => {
            let d = date_param("day", d, today)?;
            (d, d)
        }
        (None, Some(s), Some(e)) => (date_param("start", s, today)?, date_param("end", e, today)?),
        (None, Some(s), None) => {
            let s = date_param("start", s, today)?;
            if s > today {
                return Err(bad(format!(
                    "`start` ({s}) is after today ({today}) and `end` was not given, so the range would end today, before it starts. \
                     Send a `start` up to {today}, or an `end` as well."
                )));
            }
            note = Some(format!("`end` was not given: the range ends today ({today})."));
            (s, today)
        }
        (None, None, Some(e)) => {
            let e = date_param("end", e, today)?;
            let s = e.checked_sub((DEFAULT_DAYS - 1).days()).unwrap_or(e);
            note = Some(format!("`start` was not given: the range starts {DEFAULT_DAYS} days before `end`, on {s}."));
            (s, e)
        }
        (None, None, None) => {
            let s = today.checked_sub((DEFAULT_DAYS - 1).days()).unwrap_or(today);
            note = Some(format!("No range was given: the last {DEFAULT_DAYS} local days ({s} to {today}) were used."));
            (s, today)
        }
    };
    if e < s {
        return Err(bad(format!("`end` ({e}) is before `start` ({s}). Send a range with start ≤ end; both ends are inclusive.")));
    }
    let (e, after_today) = up_to_today(req, collection, (s, e), today, zone)?;
    Ok(Asked { days: Some((s, e)), defaulted: note, after_today })
}

/// Nothing after today has been measured: a range wholly after it is refused (an answer would
/// claim days that have not happened), and one ending after it is answered through today, said.
/// A collection whose records reach ahead (a cycle's predicted days) is read as asked.
fn up_to_today(req: &QueryRequest, c: &CollectionSpec, (s, e): (Date, Date), today: Date, zone: &Zone) -> Result<(Date, Option<String>), QueryError> {
    if c.ahead || e <= today {
        return Ok((e, None));
    }
    if s > today {
        let name = if req.day.is_some() {
            "day"
        } else if req.start.is_some() {
            "start"
        } else {
            "end"
        };
        return Err(bad(format!(
            "`{name}`: {s} to {e} is after today ({today} in {}): nothing after today has been measured, so no provider has data \
             for those days. Send days up to {today}.",
            zone.name
        )));
    }
    Ok((today, Some(format!("`end` {e} is after today ({today}): the answer stops at today, since nothing after it has been measured."))))
}

/// The provider's longest range per query, checked on the days that will be asked (after the
/// retention cut), so the range a refusal suggests can itself be read; `names` the parameters
/// that asked for them.
fn longest(range: Option<(Date, Date)>, provider: &Arc<dyn Provider>, names: &str) -> Result<(), QueryError> {
    let (Some((s, e)), Some(max)) = (range, provider.spec().max_days) else {
        return Ok(());
    };
    let days = (e - s).get_days() + 1;
    if days > max as i32 {
        let last = s.checked_add((i64::from(max) - 1).days()).unwrap_or(e);
        return Err(bad(format!(
            "{names}: {days} days asked ({s} to {e}), but {} allows at most {max} days per query. Send at most {max} days \
             (for example {s} to {last}) and ask for the rest in a second call.",
            provider.spec().display
        )));
    }
    Ok(())
}

const INSTANT_SEND: &str = "Send an instant in RFC 3339 with its offset, for example 2026-06-10T07:30:00-06:00 or 2026-06-10T13:30:00Z";

/// `from` and `to` (or `workout`, turned into them by engine/during.rs): a span of instants inside
/// the days, for a series only, never with a range of days or `latest`.
fn span(engine: &Engine, req: &QueryRequest, c: &CollectionSpec, qualified: &str) -> Result<Option<(Timestamp, Timestamp)>, QueryError> {
    let (f, t) = match (word("from", req.from.as_deref(), INSTANT_SEND)?, word("to", req.to.as_deref(), INSTANT_SEND)?) {
        (None, None) => return Ok(None),
        (Some(f), Some(t)) => (f, t),
        (Some(_), None) => return Err(bad("`to`: `from` was sent without it. Send both, the span's first instant and the one it ends before.".into())),
        (None, Some(_)) => return Err(bad("`from`: `to` was sent without it. Send both, the span's first instant and the one it ends before.".into())),
    };
    if c.series.is_none() {
        let with = engine.collections_where(|c| c.series.is_some());
        return Err(bad(format!("`from`: {qualified} is not a time series, so it has no samples to keep between two instants. `from` and `to` apply to {}; for {qualified} send days (`start`, `end` or `day`).", with.join(", "))));
    }
    if req.start.is_some() || req.end.is_some() || req.day.is_some() || req.latest {
        return Err(bad("`from`: `from` and `to` name the span themselves; send them without `start`, `end`, `day` or `latest`.".into()));
    }
    let instant = |name: &str, v: &str| -> Result<Timestamp, QueryError> {
        let shown: String = v.chars().take(40).collect();
        v.parse::<Timestamp>().map_err(|_| bad(format!("`{name}`: {shown:?} is not an instant with its offset. {INSTANT_SEND}.")))
    };
    let (f, t) = (instant("from", f)?, instant("to", t)?);
    if t <= f {
        return Err(bad(format!(
            "`to` ({t}) is not after `from` ({f}). Send a `to` later than `from`: the span keeps samples from `from` up to, not including, `to`."
        )));
    }
    Ok(Some((f, t)))
}

/// The local days a span of instants touches, within the days a query can name and the provider's longest range.
fn span_days((f, t): (Timestamp, Timestamp), zone: &Zone) -> Result<(Date, Date), QueryError> {
    let today = zone.today();
    let last = t.checked_sub(jiff::SignedDuration::from_nanos(1)).unwrap_or(t);
    let day = |name: &str, x: Timestamp| -> Result<Date, QueryError> {
        let d = x.to_zoned(zone.tz.clone()).date();
        let ahead = today.checked_add(AHEAD_DAYS.days()).unwrap_or(today);
        match (FIRST_DAY..=ahead).contains(&d) {
            true => Ok(d),
            false => Err(bad(format!("`{name}`: {x} is on {d}, outside the days a query can name, {FIRST_DAY} to {ahead} (a year after today, {today}). Send an instant in that span."))),
        }
    };
    Ok((day("from", f)?, day("to", last)?))
}

/// The days to fetch, and what was cut off before the provider's reach.
type Reachable = (Option<(Date, Date)>, Option<BeyondRetention>);

/// The part of the range the provider still serves. A range that starts before the first
/// reachable day is answered from that day, and the answer says so; one that ends before it is an
/// error: nothing of it can be fetched, and "empty" would be a lie.
fn retention(
    range: Option<(Date, Date)>,
    display: &str,
    collection: &CollectionSpec,
    qualified: &str,
    zone: &Zone,
    names: &str,
) -> Result<Reachable, QueryError> {
    let (Some((s, e)), Some(r)) = (range, collection.retention) else {
        return Ok((range, None));
    };
    let first = r.first_day(zone.today());
    if e < first {
        return Err(bad(format!(
            "{names}: {s} to {e} is entirely before {first}, the first day {display} still serves for {qualified}, \
             which reaches back {} days ({}). Nothing older can be read from {display} by any app; ask for days from {first} on.",
            r.days, r.why
        )));
    }
    if s >= first {
        return Ok((range, None));
    }
    let before = (first - s).get_days();
    let note = format!(
        "{qualified} reaches back only {} days, to {first} ({}). The {before} asked day(s) from {s} to {} cannot be read from \
         {display} by any app, so this answer covers {first} to {e}: those days are unreachable, not empty.",
        r.days,
        r.why,
        first.yesterday().unwrap_or(first)
    );
    let out = BeyondRetention { first_reachable: first.to_string(), asked_start: s.to_string(), unreachable_days: before as u32, note };
    Ok((Some((first, e)), Some(out)))
}

/// `id`: required by a collection read one record at a time, refused anywhere else, and only
/// letters, digits, `-` and `_` (it becomes part of a request's path).
fn record_id(engine: &Engine, id: Option<&str>, req: &QueryRequest, c: &CollectionSpec, qualified: &str) -> Result<Option<String>, QueryError> {
    let by_id = || engine.collections_where(|c| c.by_id).join(", ");
    match (id.map(str::trim), c.by_id) {
        (None, false) => Ok(None),
        (Some(_), false) => Err(bad(format!("`id`: {qualified} is read over a range, not by id; leave `id` out. It applies to {}.", by_id()))),
        (None, true) => {
            Err(bad(format!("`id`: {qualified} reads one record by its id; send `id` (for example the `id` of a row of its listing collection) and no range.")))
        }
        (Some(i), true) => {
            if req.start.is_some() || req.end.is_some() || req.day.is_some() || req.latest {
                return Err(bad(format!("`id`: {qualified} reads one record by id; send `id` alone, without `start`, `end`, `day` or `latest`.")));
            }
            let ok = !i.is_empty() && i.len() <= 64 && i.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
            if !ok {
                return Err(bad(format!("`id` must be a record id as the listing gives it (letters, digits, `-`, `_`); got {i:?}.")));
            }
            Ok(Some(i.to_string()))
        }
    }
}

/// `fields`: the known ones plus the always-returned keys and the flags (and, upstream, the day
/// keys the cut needs); unknown ones are named in the answer; none known is an error.
type Fields = (Option<Vec<String>>, Option<Vec<String>>, Vec<String>);

fn fields(asked: Option<&[String]>, collection: &CollectionSpec, qualified: &str) -> Result<Fields, QueryError> {
    let Some(asked) = asked else {
        return Ok((None, None, vec![]));
    };
    let asked: Vec<String> = asked.iter().map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).collect();
    let (known, unknown): (Vec<String>, Vec<String>) = asked.into_iter().partition(|f| collection.knows_field(f));
    if known.is_empty() {
        return Err(bad(format!("`fields`: none of {:?} is a field of {qualified}. Available fields: {}.", unknown, collection.fields.join(", "))));
    }
    // A flag stays on its row whatever was asked: without it a value reads as the others do.
    let flags = collection.flags.iter().map(|f| f.field);
    let mut keep: Vec<String> = vec![];
    for f in collection.always.iter().copied().chain(flags).map(String::from).chain(known) {
        if !keep.contains(&f) {
            keep.push(f);
        }
    }
    let mut up = keep.clone();
    for k in collection.day_keys {
        if !up.iter().any(|f| f == k) {
            up.push(k.to_string());
        }
    }
    Ok((Some(keep), Some(up), unknown))
}

/// The collection's options with what the caller set; an unknown name or a non-boolean is an error.
fn plan_options(c: &CollectionSpec, qualified: &str, asked: Option<&serde_json::Map<String, serde_json::Value>>) -> Result<Options, QueryError> {
    let mut out: Options = c.options.iter().filter(|o| !o.text).map(|o| (o.name.to_string(), serde_json::Value::Bool(o.default))).collect();
    for (k, v) in asked.into_iter().flatten() {
        let Some(o) = c.option(k) else {
            let known: Vec<String> = c.options.iter().map(|o| format!("{} ({})", o.name, o.doc)).collect();
            return Err(bad(if known.is_empty() {
                format!("`options`: {qualified} has no options, so {k:?} means nothing here; leave `options` out.")
            } else {
                format!("`options`: {k:?} is not an option of {qualified}. Its options: {}.", known.join("; "))
            }));
        };
        if o.text {
            let t = v.as_str().filter(|t| !t.trim().is_empty()).ok_or_else(|| bad(format!("`options.{}` must be a text ({}); got {v}.", o.name, o.doc)))?;
            out.insert(o.name.to_string(), serde_json::Value::String(t.trim().to_string()));
            continue;
        }
        let b = v.as_bool().ok_or_else(|| bad(format!("`options.{}` must be true or false; got {v}.", o.name)))?;
        out.insert(o.name.to_string(), serde_json::Value::Bool(b));
    }
    // A text option marked `default: true` must be sent (catalog.rs, `OptionSpec`).
    if let Some(o) = c.options.iter().find(|o| o.text && o.default && !out.contains_key(o.name)) {
        return Err(bad(format!("`options.{}`: {qualified} needs it: {}. Send e.g. options: {{\"{}\": \"…\"}}.", o.name, o.doc, o.name)));
    }
    Ok(out)
}
