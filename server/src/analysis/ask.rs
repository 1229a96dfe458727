//! The three questions end to end: the dates checked (today is never analysed: it is not over),
//! the days fetched through the engine, the method run, and the verdict worded so that
//! `within_noise` is never read as "no change".
use super::compare::{self, Comparison};
use super::daily::{self, Excluded, Fetch};
use super::days::{between, round3, shift};
use super::metric::{self, Metric};
use super::relate::{self, Relation};
use super::trend::{self, Trend};
use super::Verdict;
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
    /// What was left out before the method ran, and why.
    pub excluded: Excluded,
    /// Things the caller should know: today dropped, an end moved back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Every engine answer read, with its notices.
    pub fetches: Vec<Fetch>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CompareReport {
    pub metric: String,
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
    pub range: Span,
    pub reading: String,
    #[serde(flatten)]
    pub result: Trend,
    #[serde(flatten)]
    pub provenance: Provenance,
}

fn bad(s: String) -> QueryError {
    QueryError::BadInput(s)
}

fn date(param: &str, v: &str) -> Result<Date, QueryError> {
    read_date(v.trim()).map_err(|e| bad(format!("`{param}`: {:?} {e}; send a local day as YYYY-MM-DD.", v.chars().take(40).collect::<String>())))
}

/// A range checked: in order, not wholly today or later; an end on or after today is moved to
/// yesterday and said.
pub(super) fn range(ps: &str, pe: &str, start: &str, end: &str, today: Date, notes: &mut Vec<String>) -> Result<(Date, Date), QueryError> {
    let (s, e) = (date(ps, start)?, date(pe, end)?);
    if s > e {
        return Err(bad(format!("`{pe}`: {e} is before `{ps}` {s}; send an end on or after the start (both inclusive).")));
    }
    let yesterday = shift(today, -1).unwrap_or(today);
    if s > yesterday {
        return Err(bad(format!("`{ps}`: {s} is today or later; today is not over, so a range must start by {yesterday}.")));
    }
    if e > yesterday {
        notes.push(format!("`{pe}` {e} was moved back to {yesterday}: today is not over, and a day still filling would look like a change."));
        return Ok((s, yesterday));
    }
    Ok((s, e))
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

fn provenance(metrics: &[&Metric], fetched: Vec<daily::DailyValues>, notes: Vec<String>) -> Provenance {
    let mut excluded = Excluded::default();
    let mut fetches = vec![];
    let mut synthetic = false;
    for f in fetched {
        excluded.add(&f.excluded);
        fetches.extend(f.fetches);
        synthetic |= f.synthetic;
    }
    let mut daily_rule: Vec<String> = metrics.iter().map(|m| format!("{}: {}", m.qualified, m.rule.says)).collect();
    daily_rule.dedup();
    Provenance { synthetic, daily_rule, excluded, notes, fetches }
}

const MULTIPLE: &str = "At 95 %, one comparison in twenty of periods that do not differ comes out outside_noise by chance: if several \
periods or metrics were tried, expect some of those.";

pub async fn compare(engine: &Engine, metric: &str, a: [&str; 2], b: [&str; 2]) -> Result<CompareReport, QueryError> {
    let m = metric::parse(engine, "metric", metric)?;
    let zone = Zone::default_zone();
    let today = zone.today();
    let mut notes = vec![];
    let (a0, a1) = range("a_start", "a_end", a[0], a[1], today, &mut notes)?;
    let (b0, b1) = range("b_start", "b_end", b[0], b[1], today, &mut notes)?;
    if a0 <= b1 && b0 <= a1 {
        return Err(bad(format!("`b_start`: period B ({b0} to {b1}) shares days with period A ({a0} to {a1}); send two periods that do not overlap.")));
    }
    let first = a0.min(b0);
    let h0 = shift(first, -compare::HISTORY_DAYS).unwrap_or(first);
    let h1 = shift(first, -1).unwrap_or(first);
    let last = a1.max(b1);
    within(h0, last, "`a_start` to `b_end`, with the 120 days of history before the earlier period")?;
    let v = daily::fetch(engine, "metric", &m, h0, last, &zone).await?;
    let (history, da, db) = (between(&v.days, h0, h1), between(&v.days, a0, a1), between(&v.days, b0, b1));
    let result = compare::compare(&history, &da, &db);
    let reading = compare_reading(&m.name, &result);
    Ok(CompareReport {
        metric: m.name.clone(),
        a: span(a0, a1),
        b: span(b0, b1),
        history: span(h0, h1),
        reading,
        result,
        multiple_comparisons: MULTIPLE.into(),
        provenance: provenance(&[&m], vec![v], notes),
    })
}

fn signed(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", round3(x))
    } else {
        format!("{}", round3(x))
    }
}

fn compare_reading(name: &str, c: &Comparison) -> String {
    match (c.verdict, c.difference, c.noise_band) {
        (Verdict::OutsideNoise, Some(d), Some(band)) => format!(
            "{name}: period B's mean differs from period A's by {} ({} → {}), more than the ±{band} that this metric's own day-to-day swings \
             produce at 95 %. The periods differ; this does not say why.",
            signed(d),
            c.mean_a.unwrap_or_default(),
            c.mean_b.unwrap_or_default()
        ),
        (Verdict::WithinNoise, Some(d), Some(band)) => format!(
            "{name}: the difference between the periods ({}) is inside the ±{band} that this metric's own day-to-day swings produce at 95 %. \
             That is not evidence of a change, and not evidence that nothing changed: a smaller change needs longer periods to show.",
            signed(d)
        ),
        _ => c.why.clone().unwrap_or_else(|| "Cannot tell.".into()),
    }
}

pub async fn relate(engine: &Engine, x: &str, y: &str, start: &str, end: &str, lag: Option<i64>) -> Result<RelateReport, QueryError> {
    let lag = lag.unwrap_or(0);
    if !(0..=relate::MAX_LAG).contains(&lag) {
        return Err(bad(format!("`lag`: {lag} is not a whole number of days from 0 to {}; send 0 (same day) or how many days y follows x.", relate::MAX_LAG)));
    }
    let mx = metric::parse(engine, "x", x)?;
    let my = metric::parse(engine, "y", y)?;
    if mx.name == my.name && lag == 0 {
        return Err(bad(format!("`y`: the same metric as `x` ({}) on the same day always moves with itself; send another metric, or a lag.", mx.name)));
    }
    let zone = Zone::default_zone();
    let today = zone.today();
    let mut notes = vec![];
    let (s, e) = range("start", "end", start, end, today, &mut notes)?;
    within(s, e, "`start` to `end`")?;
    let yesterday = shift(today, -1).unwrap_or(today);
    let (ys, ye) = (shift(s, lag).unwrap_or(s), shift(e, lag).unwrap_or(e).min(yesterday));
    if lag > 0 && ye < shift(e, lag).unwrap_or(e) {
        notes.push(format!("y is read {lag} day(s) after x, up to {ye}: the days after that are today or later, so the last x days have no y to meet."));
    }
    let vx = daily::fetch(engine, "x", &mx, s, e, &zone).await?;
    let vy = if ys <= ye {
        daily::fetch(engine, "y", &my, ys, ye, &zone).await?
    } else {
        daily::DailyValues { days: Default::default(), excluded: Excluded::default(), synthetic: false, fetches: vec![] }
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
        provenance: provenance(&[&mx, &my], vec![vx, vy], notes),
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

pub async fn trend(engine: &Engine, metric: &str, start: &str, end: &str) -> Result<TrendReport, QueryError> {
    let m = metric::parse(engine, "metric", metric)?;
    let zone = Zone::default_zone();
    let mut notes = vec![];
    let (s, e) = range("start", "end", start, end, zone.today(), &mut notes)?;
    within(s, e, "`start` to `end`")?;
    let v = daily::fetch(engine, "metric", &m, s, e, &zone).await?;
    let result = trend::trend(&v.days);
    let reading = trend_reading(&m.name, &result);
    Ok(TrendReport { metric: m.name.clone(), range: span(s, e), reading, result, provenance: provenance(&[&m], vec![v], notes) })
}

fn trend_reading(name: &str, t: &Trend) -> String {
    match (t.verdict, t.slope_per_30_days, t.interval) {
        (Verdict::Rising | Verdict::Falling, Some(sl), Some([lo, hi])) => format!(
            "{name} {} by about {} per 30 days (95 % interval {lo} to {hi}), more than its day-to-day swings explain. A drift over the range, \
             not a forecast.",
            if t.verdict == Verdict::Rising { "rose" } else { "fell" },
            sl.abs()
        ),
        (Verdict::FlatWithinNoise, Some(sl), Some([lo, hi])) => format!(
            "{name}: the fitted slope ({} per 30 days) has a 95 % interval from {lo} to {hi} that includes 0: not evidence of a trend, and not \
             evidence that there is none.",
            signed(sl)
        ),
        _ => t.why.clone().unwrap_or_else(|| "Cannot tell.".into()),
    }
}

/// A metric's daily values as the analyses read them (the same daily rule, the same exclusions),
/// for a view to draw beside a verdict. Today is left out here too.
#[derive(Debug, Serialize)]
pub struct MetricDays {
    pub metric: String,
    /// `[day, value]` of every day with a value, in order.
    pub days: Vec<(String, f64)>,
    pub synthetic: bool,
    pub excluded: Excluded,
    pub notes: Vec<String>,
}

pub async fn metric_days(engine: &Engine, metric: &str, start: &str, end: &str) -> Result<MetricDays, QueryError> {
    let m = metric::parse(engine, "metric", metric)?;
    let zone = Zone::default_zone();
    let mut notes = vec![];
    let (s, e) = range("start", "end", start, end, zone.today(), &mut notes)?;
    let v = daily::fetch(engine, "metric", &m, s, e, &zone).await?;
    Ok(MetricDays {
        metric: m.name.clone(),
        days: v.days.iter().map(|(d, x)| (d.to_string(), *x)).collect(),
        synthetic: v.synthetic,
        excluded: v.excluded,
        notes,
    })
}
