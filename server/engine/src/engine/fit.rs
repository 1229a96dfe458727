//! Keeping an answer inside `max_chars` without losing anything silently: a series too large
//! raw is bucketed at the finest resolution that fits, embedded document series are compacted,
//! and only when that is not enough (or the caller fixed the resolution) is the answer cut at a
//! day boundary, with `truncated` and `continue_from`.
use super::answer::*;
use super::flat::Held;
use super::kept::{Kept, Series};
use super::plan::Plan;
use super::record::record_day;
use super::render::{costs, render_in, size as exact_size};
use super::resolution::{bucket, compact_documents, method, Resolution, Samples, STEPS};
use super::shape::Shaped;
use super::QueryError;
use crate::catalog::SeriesSpec;
use jiff::civil::Date;
use jiff::ToSpan;
use serde_json::Value;

pub use super::plan::ENVELOPE;

pub struct Fitted {
    pub rows: Vec<Value>,
    pub data: Value,
    pub resolution: Option<ResolutionOut>,
    pub resolution_auto: Option<ResolutionAuto>,
    pub compacted: Option<Compacted>,
    /// Every record in its headline fields, to fit: why (`notices.headline`).
    pub headline: Option<String>,
    /// The answer was cut for size: (first day left out, characters the whole would have taken).
    pub cut: Option<(Date, usize)>,
}

fn size(rows: &[Value], plan: &Plan) -> usize {
    exact_size(rows, plan.format)
}

/// Buckets built to measure what a row costs before choosing a resolution.
const PROBE_ROWS: usize = 64;

pub fn fit(plan: &Plan, kept: Kept) -> Result<Fitted, QueryError> {
    let c = plan.collection;
    let budget = plan.data_budget();
    let mut out = Fitted { rows: vec![], data: Value::Null, resolution: None, resolution_auto: None, compacted: None, headline: None, cut: None };
    let rows = match (kept, c.series) {
        (Kept::Series(series), Some(spec)) => fit_series(plan, &spec, series, budget, &mut out),
        (kept, _) if !c.embedded.is_empty() => fit_documents(plan, kept.into_records(), budget, &mut out),
        (kept, _) => {
            let records = kept.into_records();
            let whole = size(&records, plan);
            match whole > budget {
                true => headline(plan, &records, whole, budget, &mut out).unwrap_or(records),
                false => records,
            }
        }
    };

    let total = size(&rows, plan);
    let mut rows = rows;
    if total > budget && plan.range.is_some() {
        let (frame, per) = costs(&rows, plan.format);
        let keep = cut_point(&rows, &per, frame, budget, plan)?;
        if keep < rows.len() {
            let from = record_day(&rows[keep], c, &plan.zone).expect("a cut is made at a dated row");
            rows.truncate(keep);
            out.cut = Some((from, total));
            // The resampling says what the answer holds: its rows, and the samples in them.
            if let Some(r) = out.resolution.as_mut() {
                r.rows = rows.len();
                r.raw_samples = rows.iter().filter_map(|b| b.get("n").and_then(Value::as_u64)).sum::<u64>() as usize;
            }
        }
    }
    let order: Vec<&str> = c.always.iter().chain(c.fields).copied().collect();
    out.data = render_in(&rows, plan.format, &order);
    out.rows = rows;
    Ok(out)
}

/// Past this many characters of data an answer says `large_response`.
pub const LARGE_CHARS: usize = 100_000;

fn weights(records: &[Value], total: usize) -> Vec<FieldWeight> {
    let mut by: std::collections::BTreeMap<String, usize> = Default::default();
    for r in records {
        if let Value::Object(m) = r {
            for (k, v) in m {
                *by.entry(k.clone()).or_default() += k.len() + 3 + v.to_string().len();
            }
        }
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    v.into_iter().take(3).map(|(field, n)| FieldWeight { field, percent: ((n * 100) / total.max(1)) as u32 }).collect()
}

/// The answer: `shaped` fitted into `max_chars` (resampled, compacted, and only then cut at a day
/// boundary, with `truncated`), rendered, and said when large.
pub fn answer(plan: &Plan, shaped: Shaped) -> Result<Answer, QueryError> {
    let Shaped { mut kept, mut range, notices: mut n, synthetic, pages, basis } = shaped;
    let mut absent = kept.take_absent();
    let fitted = fit(plan, kept)?;
    if let Some((from, _)) = fitted.cut {
        let edge = plan.zone.day_start(from).timestamp().as_second();
        absent.retain(|(st, _)| st.is_none_or(|st| st.midnight < edge));
    }
    n.excluded = excluded(plan, &absent);
    n.flagged = super::record::flagged(plan.collection, &fitted.rows);
    if let Some((from, whole)) = fitted.cut {
        if from <= plan.zone.today() {
            // Today's record was cut out with the days after `range`: nothing partial is left.
            n.partial = None;
        }
        let start = range.map(|(s, _)| s).unwrap_or(from);
        range = Some((start, from.checked_sub(1.day()).unwrap_or(start)));
        if let (Some(b), Some((s, e))) = (&basis, range) {
            n.rules = b.within(Some(s), Some(e));
        }
        // Like with like: the data's size against the part of max_chars left for data.
        let why = format!(
            "INCOMPLETE: the data would take about {whole} characters, over the {} that max_chars = {} leaves for it (the rest is \
             kept for `notices`). Every day in `range` is complete; call again with `start` = `continue_from` for the rest{}.",
            plan.data_budget(),
            plan.max_chars,
            if plan.collection.has_resolution() {
                ", or a coarser `resolution`, or a larger max_chars"
            } else {
                ", or ask for fewer `fields`, or a larger max_chars"
            }
        );
        let missing = plan.range.map(|(_, e)| DaysOut { start: from.to_string(), end: e.to_string() });
        n.truncated = Some(Truncated {
            reason: match n.truncated.take() {
                Some(t) => format!("{why} Also: {}", t.reason),
                None => why,
            },
            cause: super::cut::MAX_CHARS.into(),
            continue_from: Some(from.to_string()),
            missing,
        });
    }
    n.resolution_auto = fitted.resolution_auto;
    n.compacted = fitted.compacted;
    n.headline = fitted.headline;
    let chars = fitted.data.to_string().len();
    if chars > LARGE_CHARS {
        n.large_response = Some(LargeResponse {
            characters: chars,
            heaviest_fields: weights(&fitted.rows, chars),
            advice: "Large answer: ask for fewer `fields`, a shorter range, a coarser `resolution`, or a smaller max_chars.".into(),
        });
    }
    Ok(Answer {
        collection: plan.qualified.clone(),
        synthetic,
        range: range.map(|(s, e)| RangeOut { start: s.to_string(), end: e.to_string(), tz: plan.zone.name.clone() }),
        count: fitted.rows.len(),
        pages,
        format: plan.format.name().into(),
        resolution: fitted.resolution,
        legend: super::legend::of(plan.provider.spec(), plan.collection, &fitted.rows),
        data: fitted.data,
        notices: n,
        basis,
    })
}

/// What the no-reading samples left in the answer's days say: a count per reason, and why.
fn excluded(plan: &Plan, absent: &[(Option<super::resolution::Stamp>, String)]) -> Option<ExcludedSamples> {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for (_, why) in absent {
        *counts.entry(why.clone()).or_default() += 1;
    }
    if counts.is_empty() {
        return None;
    }
    let display = plan.provider.spec().display;
    let said: Vec<String> = counts
        .iter()
        .map(|(why, n)| {
            let because = plan.provider.no_reading(plan.collection, why).unwrap_or_else(|| format!("{display} marked them `{why}`"));
            format!("{n} sample(s) {display} sent are no reading ({why}): {because}.")
        })
        .collect();
    Some(ExcludedSamples { counts, note: format!("{} They are left out of the rows and of every bucket, and counted here.", said.join(" ")) })
}

/// A series: raw when it fits (or is asked for), else buckets at the asked or the finest fitting resolution.
fn fit_series(plan: &Plan, spec: &SeriesSpec, series: Series, budget: usize, out: &mut Fitted) -> Vec<Value> {
    let Series { records, raw, cut_after_let_go, readings, tally, .. } = series;
    let raw_samples = readings.stamps.len();
    let samples = Samples::from_stamps(&readings.stamps);
    let bucketed = |step: u32, limit: usize| {
        let mut rows = bucket(&readings, &samples, &plan.zone, step, limit);
        if limit == usize::MAX {
            // Samples with no readable instant are returned as they came.
            match raw {
                true => rows.extend(samples.unreadable.iter().map(|i| records[*i].clone().into_value())),
                false => rows.extend(records.iter().cloned().map(Held::into_value)),
            }
        }
        rows
    };
    let describe = |step: u32, rows: &[Value]| ResolutionOut {
        applied: Resolution::Step(step).name().into(),
        method: method(spec, Resolution::Step(step).name(), &plan.zone),
        raw_samples,
        rows: rows.len(),
    };
    match plan.resolution {
        Some(Resolution::Raw) => records.into_iter().map(Held::into_value).collect(),
        Some(Resolution::Step(step)) => {
            let rows = bucketed(step, usize::MAX);
            out.resolution = Some(describe(step, &rows));
            free_later(records);
            rows
        }
        None => {
            // Tallied page by page as the windows came in (engine/kept.rs).
            let raw_chars = tally.size();
            if raw && raw_chars <= budget {
                records.into_iter().map(Held::into_value).collect()
            } else {
                // Estimate each resolution from its bucket count and a measured sample of rows,
                // build the finest that should fit, and step coarser only if the exact size says so.
                let last = STEPS.len() - 1;
                let fits = |i: usize| {
                    let step = STEPS[i].1;
                    let probe = bucketed(step, PROBE_ROWS);
                    let per_row = size(&probe, plan) as f64 / probe.len().max(1) as f64;
                    // The most rows that fit: counting stops past them.
                    let most = (budget as f64 / per_row.max(1.0)) as usize;
                    per_row * samples.count_to(step, most) as f64 <= budget as f64
                };
                let mut i = (0..last).find(|i| fits(*i)).unwrap_or(last);
                let rows = loop {
                    let rows = bucketed(STEPS[i].1, usize::MAX);
                    if i == last || size(&rows, plan) <= budget {
                        break rows;
                    }
                    i += 1;
                };
                let step = STEPS[i].1;
                let name = Resolution::Step(step).name();
                out.resolution = Some(describe(step, &rows));
                out.resolution_auto = Some(ResolutionAuto {
                    chosen: name.into(),
                    raw_characters: raw_chars,
                    raw_samples,
                    max_chars: plan.max_chars,
                    note: format!(
                        "RESAMPLED: {}, over the {budget} that max_chars = {} leaves for data, so they are returned as {name} \
                         buckets (the finest resolution that fits); every sample is counted in a bucket's `n`. For raw samples ask \
                         for a shorter range, or resolution=raw with a larger max_chars (up to {}).",
                        if cut_after_let_go {
                            format!("the {raw_samples} raw samples of `range` (fetching stopped early) would take more characters")
                        } else {
                            format!("the {raw_samples} raw samples would take {raw_chars} characters")
                        },
                        plan.max_chars,
                        super::plan::MAX_MAX_CHARS
                    ),
                });
                free_later(records);
                rows
            }
        }
    }
}

/// Free records the answer no longer needs on the blocking pool: a month of heart rate is 36,000
/// maps, some milliseconds to free, and the answer need not wait for that.
fn free_later(records: Vec<Held>) {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(move || drop(records))),
        Err(_) => drop(records),
    }
}

/// Documents: whole when they fit (or raw is asked for), else their embedded series compacted.
fn fit_documents(plan: &Plan, records: Vec<Value>, budget: usize, out: &mut Fitted) -> Vec<Value> {
    let c = plan.collection;
    let mut records = records;
    match plan.resolution {
        Some(Resolution::Raw) => records,
        Some(Resolution::Step(step)) => {
            let fields = compact_documents(&mut records, c.embedded, step);
            out.compacted = compacted(step, fields, None, false);
            records
        }
        None => {
            let raw_chars = size(&records, plan);
            if raw_chars <= budget {
                records
            } else {
                let mut chosen = None;
                for (_, step) in STEPS {
                    let mut trial = records.clone();
                    let fields = compact_documents(&mut trial, c.embedded, *step);
                    if size(&trial, plan) <= budget || *step == STEPS[STEPS.len() - 1].1 {
                        chosen = Some((*step, fields, trial));
                        break;
                    }
                }
                let (step, fields, trial) = chosen.expect("STEPS is not empty");
                if size(&trial, plan) > budget {
                    if let Some(rows) = headline(plan, &records, raw_chars, budget, out) {
                        return rows;
                    }
                }
                out.compacted = compacted(step, fields, Some(raw_chars), true);
                trial
            }
        }
    }
}

/// Every record of the range in its headline fields (the columns `vitals_today` shows for the
/// collection: minutes, local clock times, units in the names, a series summarised), when every
/// field of them would not fit and those do: a year of nights whole in what people ask about,
/// rather than four months of every field. Only when the caller chose neither `fields` nor a
/// `resolution`, and the collection has headline columns; said in `notices.headline`.
fn headline(plan: &Plan, records: &[Value], whole: usize, budget: usize, out: &mut Fitted) -> Option<Vec<Value>> {
    let c = plan.collection;
    if plan.range.is_none() || plan.fields.is_some() || plan.resolution.is_some() {
        return None;
    }
    let lead = plan.provider.spec().today.iter().find(|t| t.collection == c.name)?.lead;
    let t = super::headline::table(records, lead, c, &plan.zone, super::headline::Detail::Headline);
    let rows: Vec<Value> = t.rows.into_iter().map(|r| Value::Object(t.columns.iter().cloned().zip(r).collect())).collect();
    let fits = size(&rows, plan);
    if fits > budget {
        return None;
    }
    out.headline = Some(format!(
        "HEADLINE: every field of these {} records would take about {whole} characters, over the {budget} that max_chars = {} leaves \
         for data, so each is given in its headline fields ({fits} characters): what vitals_today shows, units in the names, series \
         summarised. Every record of `range` is here. For every field and the series, ask for fewer days at a time, or name them in \
         `fields`, or a larger max_chars (up to {}).",
        rows.len(),
        plan.max_chars,
        super::plan::MAX_MAX_CHARS
    ));
    Some(rows)
}

fn compacted(step: u32, fields: Vec<String>, raw_chars: Option<usize>, auto: bool) -> Option<Compacted> {
    (!fields.is_empty()).then(|| {
        let name = Resolution::Step(step).name();
        Compacted {
            resolution: name.into(),
            fields: fields.clone(),
            raw_characters: raw_chars,
            note: format!(
                "{}{}: compacted to {name}. Sample series (`{{interval, items, timestamp}}`) now hold bucket averages in `items` \
                 with `min`, `max` and `n` (readings per bucket) beside them and `compacted_from_interval`; one-character-per-epoch \
                 strings hold the most frequent character of each {name}. Every other field is whole. For full resolution ask for \
                 fewer days or resolution=raw with a larger max_chars.",
                if auto { "COMPACTED to fit max_chars: " } else { "" },
                fields.join(", ")
            ),
        }
    })
}

/// The number of leading rows to keep: whole days only, as many as fit.
fn cut_point(rows: &[Value], per: &[usize], frame: usize, budget: usize, plan: &Plan) -> Result<usize, QueryError> {
    let c = plan.collection;
    let mut total = frame;
    let mut keep = 0;
    let mut prev: Option<Date> = None;
    for (i, r) in rows.iter().enumerate() {
        let day = record_day(r, c, &plan.zone).or(prev);
        if i > 0 && day != prev {
            if total > budget {
                break;
            }
            keep = i;
        }
        total += per[i];
        prev = day;
    }
    if total <= budget {
        return Ok(rows.len());
    }
    if keep == 0 {
        let d0 = record_day(&rows[0], c, &plan.zone);
        let first_day: usize = rows.iter().zip(per).take_while(|(r, _)| record_day(r, c, &plan.zone) == d0).map(|(_, n)| *n).sum::<usize>() + frame;
        let coarser = if c.has_resolution() { " or a coarser `resolution`" } else { " or fewer `fields`" };
        return Err(QueryError::BadInput(format!(
            "`max_chars`: the first day alone needs about {} characters, more than max_chars = {} allows. Send a larger max_chars (up to {}){coarser}.",
            first_day + plan.envelope(),
            plan.max_chars,
            super::plan::MAX_MAX_CHARS
        )));
    }
    Ok(keep)
}
