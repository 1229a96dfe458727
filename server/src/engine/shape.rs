//! From fetched windows to the answer: cut at the last complete day when fetching stopped early,
//! project fields, fit the budget, and say what happened.
use super::answer::*;
use super::cut::cut;
use super::fetch::Fetched;
use super::fit::fit;
use super::kept::Kept;
use super::plan::Plan;
use super::record::{dedup, project};
use super::QueryError;
use crate::providers::{Due, Mode};
use jiff::ToSpan;
use serde_json::Value;

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

pub fn shape(plan: &Plan, f: Fetched) -> Result<Answer, QueryError> {
    let mut n = Notices::default();
    let c = plan.collection;
    let synthetic = plan.cred.mode() == Mode::Sandbox;
    if synthetic {
        n.synthetic = Some(plan.provider.synthetic_notice());
    }
    let mut kept = match f.kept {
        Kept::Documents(records) => {
            let finished = plan.provider.finish(c, records, &plan.options);
            if !finished.notes.is_empty() {
                n.rules = Some(finished.notes);
            }
            Kept::Documents(dedup(finished.records))
        }
        // Stamped, de-duplicated and projected page by page (engine/kept.rs).
        series @ Kept::Series(_) => series,
    };
    let mut range = plan.range;

    // Each window kept only its own records (engine/window.rs): the range is already exact.
    if f.discarded_out_of_range > 0 {
        n.discarded_out_of_range = Some(f.discarded_out_of_range);
    }
    if f.undated_kept > 0 {
        n.undated_kept = Some(f.undated_kept);
    }

    if let Some(reason) = &f.stopped {
        let (t, claimed) = cut(plan, &mut kept, f.gap, reason);
        n.truncated = Some(t);
        range = claimed;
    }
    if f.cycle {
        n.pagination_cycle = Some(format!(
            "{} sent a page token it had sent before; following it would loop, so that window stopped there. Its days that \
             were not fetched in full are not in `range` (see `truncated`).",
            plan.provider.spec().display,
        ));
    }
    if f.order_disagreed > 0 {
        n.page_order = Some(format!(
            "{} sent the pages of {} window(s) in another order than the {} this server expects of {}; those windows were \
             read whole where they finished, and vouch for no day where they did not. Please report it: the catalog's page \
             order for this collection needs correcting.",
            plan.provider.spec().display,
            f.order_disagreed,
            plan.collection.order.as_str().replace('_', " "),
            plan.qualified
        ));
    }
    if f.rate_limit_retries > 0 {
        n.rate_limited = Some(RateLimited {
            retries: f.rate_limit_retries,
            waited_seconds: f.rate_limit_waited.as_secs_f64(),
            note: "The provider rate-limited us; we waited as it asked (Retry-After) and carried on.".into(),
        });
    }
    if f.transient_retries > 0 {
        n.retried = Some(format!("{} request(s) failed transiently and were retried.", f.transient_retries));
    }
    if !plan.ignored_fields.is_empty() {
        n.ignored_fields = Some(plan.ignored_fields.clone());
    }
    if plan.fields_split {
        n.fields_split = Some("`fields` arrived as one comma-separated string and was split into names.".into());
    }
    n.range_defaulted = plan.range_note.clone();
    if let (Some(fields), Kept::Documents(records)) = (&plan.fields, &mut kept) {
        *records = project(std::mem::take(records), fields);
    }
    if let Some(keep) = plan.keep_last.filter(|k| kept.len() > *k) {
        let dropped = kept.len() - keep;
        kept.drop_first(dropped, &plan.zone);
        n.kept_last = Some(format!("Only the {keep} most recent record(s) of the range are shown; {dropped} earlier one(s) were left out on purpose."));
    }
    // `empty` says the provider answered and had nothing: never for days it did not answer for.
    let answered = range.is_some() || (plan.range.is_none() && f.stopped.is_none());
    if kept.is_empty() && answered {
        let today = plan.zone.today();
        let said = match range {
            Some((_, e)) if e >= today => format!(
                "No records. The range includes today ({today}): the provider often has nothing for today until the device \
                 syncs (sleep and readiness appear after the app is opened), so this means not synced yet, not 'no sleep' or 'no activity'."
            ),
            Some((s, e)) => format!(
                "No records for {s} to {e}: {} answered and had none (the device recorded nothing, or the data was never synced). \
                 It does not mean zero.",
                plan.provider.spec().display
            ),
            None => "No records.".into(),
        };
        n.empty = Some(match plan.provider.empty_hint(c) {
            Some(hint) => format!("{said} {hint}"),
            None => said,
        });
    }

    if f.cached_windows > 0 {
        n.cached = Some(Cached {
            windows_cached: f.cached_windows,
            windows: f.windows,
            oldest_seconds: f.cache_age.unwrap_or_default().as_secs(),
            note: format!(
                "CACHED: {} of {} window(s) came from this process's memory (fetched earlier, {} page(s) then), not from {} now. \
                 Only days before today are kept, and the last {} days for at most {} minutes, because a ring can sync late. \
                 Send forget=true to fetch everything again.",
                f.cached_windows,
                f.windows,
                f.cached_pages,
                plan.provider.spec().display,
                super::cache::RECENT_DAYS,
                super::cache::RECENT_TTL.as_secs() / 60
            ),
        });
    }
    if f.credential_refreshed {
        n.credential_refreshed = Some(format!(
            "{} said the access token had expired; it was refreshed, saved, and the request was sent again. Nothing is missing.",
            plan.provider.spec().display
        ));
    } else if let Some(due) = &plan.prepared {
        let display = plan.provider.spec().display;
        n.credential_refreshed = Some(match due {
            Due::Expiring => format!(
                "The {display} access token was about to expire (within {} s); it was refreshed and saved before the first request.",
                crate::providers::EXPIRY_MARGIN_S
            ),
            Due::Exchange => format!("The {display} key was exchanged for an access token before the first request."),
            Due::Setup(step) => format!("The step after the {display} login ({step}) had not succeeded; it did now, before the first request."),
        });
    }
    if f.paced.as_millis() > 0 {
        let b = plan.provider.spec().rate_budget;
        n.paced = Some(format!(
            "Waited {:.1}s to stay inside {}'s budget of {} requests per {} seconds.",
            f.paced.as_secs_f64(),
            plan.provider.spec().display,
            b.requests,
            b.per.as_secs()
        ));
    }

    let fitted = fit(plan, kept)?;
    if let Some((from, whole)) = fitted.cut {
        let start = range.map(|(s, _)| s).unwrap_or(from);
        range = Some((start, from.checked_sub(1.day()).unwrap_or(start)));
        let why = format!(
            "INCOMPLETE: the whole answer would take about {whole} characters, over max_chars = {}. Every day in `range` is complete; \
             call again with `start` = `continue_from` for the rest{}.",
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
        pages: f.pages,
        format: plan.format.name().into(),
        resolution: fitted.resolution,
        data: fitted.data,
        notices: n,
    })
}
