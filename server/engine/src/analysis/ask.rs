//! The three questions end to end: the dates checked (nothing after today; today only for a
//! value that is final once it exists, such as a night that ended this morning or today's
//! readiness, never for one still filling such as steps; and only days the provider still keeps),
//! the days fetched through the engine, the method run, and the verdict worded so that
//! `within_noise` is never read as "no change".
use super::compare::{self, Comparison};
use super::daily::{self, Excluded, Fetch};
use super::days::{between, round3, shift};
use super::metric::{self, Metric};
use super::relate::{self, Relation};
use super::trend::{self, Trend};
use super::Verdict;
use crate::catalog::Settles;
use crate::engine::{Engine, QueryError};
use crate::time::{read_date, Zone};
use jiff::civil::Date;
use schemars::JsonSchema;
use serde::Serialize;

/// The longest span one analysis reads, history included: three years.
pub const MAX_SPAN_DAYS: i64 = 1_096;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Span {
    pub start: String,
    pub end: String,
}

fn span(a: Date, b: Date) -> Span {
    Span { start: a.to_string(), end: b.to_string() }
}

/// What every analysis answer carries beside its result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Provenance {
    /// True when any value came from built-in sample data, never the user's own: say so.
    pub synthetic: bool,
    /// Which record is a day's value, per metric.
    pub daily_rule: Vec<String>,
    /// Counted before the method ran: days without a value (`no_value`), values not a number, records the daily rule left out (a nap, a later weigh-in), undated ones.
    pub excluded: Excluded,
    /// Things the caller should know: sample data (said once), today dropped, an end moved back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The zone of the days, when `tz` named one (else this machine's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// Each read behind the answer, with its notices (as vitals_query says them).
    pub fetches: Vec<Fetch>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CompareReport {
    pub metric: String,
    /// The unit of every number of the comparison (a duration in minutes, whatever the provider
    /// sends); absent for a score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub a: Span,
    pub b: Span,
    /// The days the autocorrelation was learnt from.
    pub history: Span,
    /// In plain words; `within_noise` is never "no change".
    pub reading: String,
    #[serde(flatten)]
    pub result: Comparison,
    pub multiple_comparisons: String,
    #[serde(flatten)]
    pub provenance: Provenance,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RelateReport {
    pub x: String,
    pub y: String,
    pub lag: i64,
    pub range: Span,
    pub reading: String,
    #[serde(flatten)]
    pub result: Relation,
    pub multiple_comparisons: String,
    #[serde(flatten)]
    pub provenance: Provenance,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TrendReport {
    pub metric: String,
    /// The unit of the slope and the fitted values (a duration in minutes); absent for a score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub range: Span,
    pub reading: String,
    #[serde(flatten)]
    pub result: Trend,
    /// Only with `cannot_tell`: the first and last weeks' means, a description, not a test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_and_last_weeks: Option<WeekChange>,
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// The plain change between the mean of a range's first seven days and that of its last seven.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WeekChange {
    pub first_week: WeekMean,
    pub last_week: WeekMean,
    /// The last week's mean minus the first's, in the metric's unit.
    pub change: f64,
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WeekMean {
    pub start: String,
    pub end: String,
    pub mean: f64,
    /// Days of the week with a value.
    pub n: usize,
}

/// When a trend cannot be told, what the days plainly did: the first week's mean and the last
/// week's, and the change between them. None: the weeks would overlap (under 14 days) or one has no value.
fn week_change(d: &super::days::Days, s: Date, e: Date) -> Option<WeekChange> {
    let (first_end, last_start) = (shift(s, 6)?, shift(e, -6)?);
    if first_end >= last_start {
        return None;
    }
    let week = |a: Date, b: Date| -> Option<WeekMean> {
        let xs: Vec<f64> = between(d, a, b).values().copied().collect();
        (!xs.is_empty()).then(|| WeekMean { start: a.to_string(), end: b.to_string(), mean: round3(super::days::mean(&xs)), n: xs.len() })
    };
    let (first, last) = (week(s, first_end)?, week(last_start, e)?);
    Some(WeekChange {
        change: round3(last.mean - first.mean),
        first_week: first,
        last_week: last,
        note: "A description of these days, not a test: it says nothing of whether the change exceeds the metric's day-to-day noise.".into(),
    })
}

fn bad(s: String) -> QueryError {
    QueryError::BadInput(s)
}

fn date(param: &str, v: &str) -> Result<Date, QueryError> {
    read_date(v.trim()).map_err(|e| bad(format!("`{param}`: {:?} {e}; send a local day as YYYY-MM-DD.", v.chars().take(40).collect::<String>())))
}

/// The zone the days are read in: `tz`, checked as vitals_query checks it, else this machine's;
/// and `tz` as it will be said back (only when one was sent).
pub(super) fn zone(engine: &Engine, tz: Option<&str>) -> Result<(Zone, Option<String>), QueryError> {
    let zone = crate::engine::plan::zone(engine, tz)?;
    let said = tz.map(|_| zone.name.clone());
    Ok((zone, said))
}

/// The last day a metric can be analysed through: today for a value final once it exists (a
/// night that ended this morning, today's readiness), yesterday for one still filling (steps so
/// far would look like a change).
pub(super) fn last_day(m: &Metric, today: Date) -> Date {
    match m.rule.settles {
        Settles::OnArrival => today,
        Settles::AtDayEnd => shift(today, -1).unwrap_or(today),
    }
}

/// A range checked: in order, not after today, not starting after `last` (the last day that can
/// be read whole: today, or yesterday for `what` still filling today); an end after `last` is
/// moved back to it and said.
pub(super) fn range(
    ps: &str,
    pe: &str,
    (start, end): (&str, &str),
    today: Date,
    last: Date,
    what: &str,
    notes: &mut Vec<String>,
) -> Result<(Date, Date), QueryError> {
    let (s, e) = (date(ps, start)?, date(pe, end)?);
    if s > e {
        return Err(bad(format!("`{pe}`: {e} is before `{ps}` {s}; send an end on or after the start (both inclusive).")));
    }
    if s > today {
        return Err(bad(format!("`{ps}`: {s} is after today ({today}): nothing after today has been measured. Send a range that starts by {last}.")));
    }
    if s > last {
        return Err(bad(format!(
            "`{ps}`: {s} is today, and today is not over: {what}'s value of today is the day so far. Send a range that starts by {last}."
        )));
    }
    if e > last {
        notes.push(if last == today {
            format!("`{pe}` {e} is after today: the days read stop at today ({today}), since nothing after it has been measured.")
        } else {
            format!("`{pe}` {e} was moved back to {last}: today ({today}) is not over, and {what}'s value of today is the day so far, which would look like a change.")
        });
        return Ok((s, last));
    }
    Ok((s, e))
}

/// How far back a metric's provider serves it, when it does not serve every day: the first day it
/// still serves, and the sentence that says so.
pub(super) struct Reach {
    pub first: Date,
    pub says: String,
}

pub(super) fn reach(engine: &Engine, m: &Metric, today: Date) -> Option<Reach> {
    let r = m.collection.retention?;
    let display = engine.provider(m.provider).map_or(m.provider, |p| p.spec().display);
    let first = r.first_day(today);
    Some(Reach { first, says: format!("{display} keeps {} only {} days ({}), back to {first}", m.qualified, r.days, r.why) })
}

/// A range that starts before a provider's reach is refused with why: the days before it cannot
/// be read by any app, and an analysis of part of the range would not be what it claims. The
/// range suggested starts where every metric's provider still serves and ends by `last`.
fn in_reach(param: &str, (s, e): (Date, Date), last: Date, limits: &[(Date, String)]) -> Result<(), QueryError> {
    let Some((earliest, says)) = limits.iter().max_by_key(|(d, _)| *d) else {
        return Ok(());
    };
    if s >= *earliest {
        return Ok(());
    }
    let send = if *earliest <= last {
        format!("Send a `{param}` from {earliest} on, for example {earliest} to {}.", e.clamp(*earliest, last))
    } else {
        "Nothing of it can be analysed yet.".into()
    };
    Err(bad(format!(
        "`{param}`: {s} is before {earliest}: {says}, so no app can read the days before it, and an analysis of part of the range would \
         not be what it claims. {send}"
    )))
}

fn within(first: Date, last: Date, what: &str) -> Result<(), QueryError> {
    let n = (last - first).get_days() as i64 + 1;
    if n > MAX_SPAN_DAYS {
        return Err(bad(format!(
            "{what}: {n} days from {first} to {last}; an analysis reads at most {MAX_SPAN_DAYS} days (three years). Send a shorter span."
        )));
    }
    Ok(())
}

fn provenance(metrics: &[&Metric], fetched: Vec<daily::DailyValues>, mut notes: Vec<String>, tz: Option<String>) -> Provenance {
    let mut excluded = Excluded::default();
    let mut fetches = vec![];
    let mut synthetic = false;
    let mut samples: Vec<String> = vec![];
    for f in fetched {
        excluded.add(&f.excluded);
        fetches.extend(f.fetches);
        synthetic |= f.synthetic;
        samples.extend(f.samples.into_iter().filter(|s| !samples.contains(s)).collect::<Vec<_>>());
    }
    // Sample data said once, first: not once per fetch.
    notes.splice(0..0, samples);
    let mut daily_rule: Vec<String> = metrics.iter().map(|m| format!("{}: {}", m.qualified, m.rule.says)).collect();
    daily_rule.dedup();
    Provenance { synthetic, daily_rule, excluded, notes, tz, fetches }
}

const MULTIPLE: &str = "At 95 %, one comparison in twenty of periods that do not differ comes out outside_noise by chance: if several \
periods or metrics were tried, expect some of those.";

pub async fn compare(engine: &Engine, metric: &str, a: [&str; 2], b: [&str; 2], tz: Option<&str>) -> Result<CompareReport, QueryError> {
    let m = metric::parse(engine, "metric", metric)?;
    let (zone, tz) = zone(engine, tz)?;
    let today = zone.today();
    let whole = last_day(&m, today);
    let mut notes = vec![];
    let (a0, a1) = range("a_start", "a_end", (a[0], a[1]), today, whole, &m.name, &mut notes)?;
    let (b0, b1) = range("b_start", "b_end", (b[0], b[1]), today, whole, &m.name, &mut notes)?;
    if a0 <= b1 && b0 <= a1 {
        return Err(bad(format!("`b_start`: period B ({b0} to {b1}) shares days with period A ({a0} to {a1}); send two periods that do not overlap.")));
    }
    let first = a0.min(b0);
    let mut h0 = shift(first, -compare::HISTORY_DAYS).unwrap_or(first);
    if let Some(r) = reach(engine, &m, today) {
        history_in_reach(if a0 <= b0 { "a_start" } else { "b_start" }, first, whole, &m.name, &r)?;
        if r.first > h0 {
            notes.push(format!("The history starts on {}, not {h0}: {}.", r.first, r.says));
            h0 = r.first;
        }
    }
    let h1 = shift(first, -1).unwrap_or(first);
    let last = a1.max(b1);
    within(h0, last, "`a_start` to `b_end`, with the 120 days of history before the earlier period")?;
    let v = daily::fetch(engine, "metric", &m, h0, last, &zone, tz.clone()).await?;
    let shown = metric::shown(&m);
    let days = in_unit(&v.days, &shown);
    let (history, da, db) = (between(&days, h0, h1), between(&days, a0, a1), between(&days, b0, b1));
    let result = compare::compare(&history, &da, &db);
    let reading = compare_reading(&m.name, &result, &unit_words(&shown));
    Ok(CompareReport {
        metric: m.name.clone(),
        unit: shown.unit,
        a: span(a0, a1),
        b: span(b0, b1),
        history: span(h0, h1),
        reading,
        result,
        multiple_comparisons: MULTIPLE.into(),
        provenance: provenance(&[&m], vec![v], notes, tz),
    })
}

/// A comparison needs the days of both periods and, before the earlier one, enough history to
/// learn how the metric swings: with a provider that keeps only recent days, the earlier period
/// can start no sooner than [`compare::MIN_HISTORY_DAYS`] after its first day. Earlier, the
/// verdict could only be `cannot_tell` for a reason nobody could fix, so it is refused with why,
/// and with two periods that fit, when any do.
fn history_in_reach(param: &str, first: Date, last: Date, name: &str, r: &Reach) -> Result<(), QueryError> {
    let min_history = compare::MIN_HISTORY_DAYS as i64;
    let earliest = shift(r.first, min_history).unwrap_or(r.first);
    if first >= earliest {
        return Ok(());
    }
    let n = (last - earliest).get_days() as i64 + 1;
    let example = if n >= 2 * compare::MIN_PERIOD_DAYS as i64 {
        let mid = shift(earliest, n / 2).unwrap_or(earliest);
        format!("For example period A {earliest} to {} and period B {mid} to {last}.", shift(mid, -1).unwrap_or(mid))
    } else {
        format!("That leaves no room for two periods of {} days or more by {last}: no comparison of {name} can be made.", compare::MIN_PERIOD_DAYS)
    };
    Err(bad(format!(
        "`{param}`: {first} is too early: {}. vitals_compare learns how {name} swings from the {} days before the earlier period and needs at \
         least {min_history} of them, so the earlier period can start on {earliest} at the soonest. {example}",
        r.says,
        compare::HISTORY_DAYS
    )))
}

/// The days' values in the unit the answer says them in.
fn in_unit(days: &super::days::Days, shown: &metric::Shown) -> super::days::Days {
    days.iter().map(|(d, x)| (*d, x * shown.factor)).collect()
}

/// The unit as it follows a number in a sentence (` min`), or nothing for a score.
fn unit_words(shown: &metric::Shown) -> String {
    shown.unit.as_ref().map(|u| format!(" {u}")).unwrap_or_default()
}

fn signed(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", round3(x))
    } else {
        format!("{}", round3(x))
    }
}

fn compare_reading(name: &str, c: &Comparison, u: &str) -> String {
    match (c.verdict, c.difference, c.noise_band) {
        (Verdict::OutsideNoise, Some(d), Some(band)) => format!(
            "{name}: period B's mean minus period A's is {}{u} ({}{u} → {}{u}), more than the ±{band}{u} that this metric's own day-to-day \
             swings produce at 95 %. The periods differ; this does not say why.",
            signed(d),
            c.mean_a.unwrap_or_default(),
            c.mean_b.unwrap_or_default()
        ),
        (Verdict::WithinNoise, Some(d), Some(band)) => format!(
            "{name}: period B's mean minus period A's ({}{u}) is inside the ±{band}{u} that this metric's own day-to-day swings produce at \
             95 %. That is not evidence of a change, and not evidence that nothing changed: a smaller change needs longer periods to show.",
            signed(d)
        ),
        _ => c.why.clone().unwrap_or_else(|| "Cannot tell.".into()),
    }
}

pub async fn relate(engine: &Engine, x: &str, y: &str, (start, end): (&str, &str), lag: Option<i64>, tz: Option<&str>) -> Result<RelateReport, QueryError> {
    let lag = lag.unwrap_or(0);
    if !(0..=relate::MAX_LAG).contains(&lag) {
        return Err(bad(format!("`lag`: {lag} is not a whole number of days from 0 to {}; send 0 (same day) or how many days y follows x.", relate::MAX_LAG)));
    }
    let mx = metric::parse(engine, "x", x)?;
    let my = metric::parse(engine, "y", y)?;
    if mx.name == my.name && lag == 0 {
        return Err(bad(format!("`y`: the same metric as `x` ({}) on the same day always moves with itself; send another metric, or a lag.", mx.name)));
    }
    let (zone, tz) = zone(engine, tz)?;
    let today = zone.today();
    let (lx, ly) = (last_day(&mx, today), last_day(&my, today));
    let mut notes = vec![];
    let (s, e) = range("start", "end", (start, end), today, lx, &mx.name, &mut notes)?;
    within(s, e, "`start` to `end`")?;
    let mut limits = vec![];
    if let Some(r) = reach(engine, &mx, today) {
        limits.push((r.first, format!("x: {}", r.says)));
    }
    if let Some(r) = reach(engine, &my, today) {
        let says = if lag > 0 { format!("y is read {lag} day(s) after x, and {}", r.says) } else { format!("y: {}", r.says) };
        limits.push((shift(r.first, -lag).unwrap_or(r.first), says));
    }
    in_reach("start", (s, e), lx, &limits)?;
    let wanted = shift(e, lag).unwrap_or(e);
    let (ys, ye) = (shift(s, lag).unwrap_or(s), wanted.min(ly));
    if ye < wanted {
        let why = if ly == today {
            "nothing after today has been measured".to_string()
        } else {
            format!("today is not over, and {}'s value of today is the day so far", my.name)
        };
        let after = if lag > 0 { format!(", {lag} day(s) after x,") } else { String::new() };
        notes.push(format!("y is read{after} up to {ye}: {why}, so the last x day(s) have no y to meet."));
    }
    let vx = daily::fetch(engine, "x", &mx, s, e, &zone, tz.clone()).await?;
    let vy = if ys <= ye {
        daily::fetch(engine, "y", &my, ys, ye, &zone, tz.clone()).await?
    } else {
        daily::DailyValues { days: Default::default(), excluded: Excluded::default(), synthetic: false, fetches: vec![], samples: vec![] }
    };
    let result = relate::relate(&vx.days, &vy.days, lag);
    let reading = relate_reading(&mx.name, &my.name, lag, &result);
    let multiple_comparisons = if lag > 0 {
        format!(
            "At 95 %, one metric pair or lag in twenty comes out outside_noise by chance: if several lags were tried, expect some of those. \
             Neighbouring lags often show the relation reversed (a change and its return), so read lag {lag} beside lag 0, never alone."
        )
    } else {
        "At 95 %, one pair of unrelated metrics in twenty comes out outside_noise by chance: if several pairs were tried, expect some of those.".into()
    };
    Ok(RelateReport {
        x: mx.name.clone(),
        y: my.name.clone(),
        lag,
        range: span(s, e),
        reading,
        result,
        multiple_comparisons,
        provenance: provenance(&[&mx, &my], vec![vx, vy], notes, tz),
    })
}

fn relate_reading(x: &str, y: &str, lag: i64, r: &Relation) -> String {
    let when = if lag == 0 { "on the same day".to_string() } else { format!("{lag} day(s) later") };
    match (r.verdict, r.correlation, r.interval) {
        (Verdict::OutsideNoise, Some(c), Some([lo, hi])) => format!(
            "When {x} changes from one day to the next, {y} tends to change {} {when} (r = {c}, 95 % interval {lo} to {hi}), beyond what chance \
             and the weekly rhythm produce. An association, not a cause.",
            if c > 0.0 { "the same way" } else { "the opposite way" }
        ),
        (Verdict::WithinNoise, Some(c), Some([lo, hi])) => format!(
            "The day-to-day changes of {x} and {y} ({when}) correlate at r = {c}, with a 95 % interval from {lo} to {hi} that includes 0: not \
             evidence of a relation, and not evidence that there is none."
        ),
        _ => r.why.clone().unwrap_or_else(|| "Cannot tell.".into()),
    }
}

pub async fn trend(engine: &Engine, metric: &str, (start, end): (&str, &str), tz: Option<&str>) -> Result<TrendReport, QueryError> {
    let m = metric::parse(engine, "metric", metric)?;
    let (zone, tz) = zone(engine, tz)?;
    let mut notes = vec![];
    let (s, e) = one_metric_range(engine, &m, (start, end), &zone, &mut notes)?;
    within(s, e, "`start` to `end`")?;
    let v = daily::fetch(engine, "metric", &m, s, e, &zone, tz.clone()).await?;
    let shown = metric::shown(&m);
    let days = in_unit(&v.days, &shown);
    let result = trend::trend(&days);
    let reading = trend_reading(&m.name, &result, &unit_words(&shown));
    let first_and_last_weeks = (result.verdict == Verdict::CannotTell).then(|| week_change(&days, s, e)).flatten();
    Ok(TrendReport {
        metric: m.name.clone(),
        unit: shown.unit,
        range: span(s, e),
        reading,
        result,
        first_and_last_weeks,
        provenance: provenance(&[&m], vec![v], notes, tz),
    })
}

/// The days of one metric a trend (and its view) reads: checked, up to its last whole day, and
/// within its provider's reach.
fn one_metric_range(engine: &Engine, m: &Metric, asked: (&str, &str), zone: &Zone, notes: &mut Vec<String>) -> Result<(Date, Date), QueryError> {
    let today = zone.today();
    let last = last_day(m, today);
    let (s, e) = range("start", "end", asked, today, last, &m.name, notes)?;
    let limits: Vec<(Date, String)> = reach(engine, m, today).map(|r| (r.first, r.says)).into_iter().collect();
    in_reach("start", (s, e), last, &limits)?;
    Ok((s, e))
}

fn trend_reading(name: &str, t: &Trend, u: &str) -> String {
    match (t.verdict, t.slope_per_30_days, t.interval) {
        (Verdict::Rising | Verdict::Falling, Some(sl), Some([lo, hi])) => format!(
            "{name} {} by about {}{u} per 30 days (95 % interval {lo}{u} to {hi}{u}), more than its day-to-day swings explain. A drift over \
             the range, not a forecast.",
            if t.verdict == Verdict::Rising { "rose" } else { "fell" },
            sl.abs()
        ),
        (Verdict::FlatWithinNoise, Some(sl), Some([lo, hi])) => format!(
            "{name}: the fitted slope ({}{u} per 30 days) has a 95 % interval from {lo}{u} to {hi}{u} that includes 0: not evidence of a \
             trend, and not evidence that there is none.",
            signed(sl)
        ),
        _ => t.why.clone().unwrap_or_else(|| "Cannot tell.".into()),
    }
}

/// A metric's daily values as the analyses read them (the same daily rule, the same exclusions,
/// the same days), for a view to draw beside a verdict.
#[derive(Debug, Serialize)]
pub struct MetricDays {
    pub metric: String,
    /// The unit of the values, as the analyses say them (a duration in minutes).
    pub unit: Option<String>,
    /// `[day, value]` of every day with a value, in order.
    pub days: Vec<(String, f64)>,
    pub synthetic: bool,
    pub excluded: Excluded,
    pub notes: Vec<String>,
}

pub async fn metric_days(engine: &Engine, metric: &str, asked: (&str, &str), tz: Option<&str>) -> Result<MetricDays, QueryError> {
    let m = metric::parse(engine, "metric", metric)?;
    let (zone, tz) = zone(engine, tz)?;
    let mut notes = vec![];
    let (s, e) = one_metric_range(engine, &m, asked, &zone, &mut notes)?;
    let v = daily::fetch(engine, "metric", &m, s, e, &zone, tz).await?;
    let shown = metric::shown(&m);
    Ok(MetricDays {
        metric: m.name.clone(),
        days: in_unit(&v.days, &shown).iter().map(|(d, x)| (d.to_string(), *x)).collect(),
        unit: shown.unit,
        synthetic: v.synthetic,
        excluded: v.excluded,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn the_first_and_last_weeks_are_described_from_their_own_days_only() {
        let s = date(2026, 6, 1);
        // Every third day missing; the value is the day's number.
        let d: super::super::days::Days = (0..20).filter(|i| i % 3 != 0).map(|i| (shift(s, i).unwrap(), i as f64)).collect();
        let w = week_change(&d, s, shift(s, 19).unwrap()).unwrap();
        assert_eq!((w.first_week.start.as_str(), w.first_week.end.as_str(), w.first_week.n, w.first_week.mean), ("2026-06-01", "2026-06-07", 4, 3.0));
        assert_eq!((w.last_week.start.as_str(), w.last_week.end.as_str(), w.last_week.n, w.last_week.mean), ("2026-06-14", "2026-06-20", 5, 15.8));
        assert_eq!(w.change, 12.8);
        assert!(w.note.contains("not a test"));
        assert!(week_change(&d, s, shift(s, 12).unwrap()).is_none(), "13 days: the weeks would share days");
        assert!(week_change(&d, shift(s, 30).unwrap(), shift(s, 49).unwrap()).is_none(), "weeks without a value");
    }
}
