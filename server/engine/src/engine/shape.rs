//! From fetched windows to the records of the answer: the provider's rules and de-duplication,
//! the cut at the last complete day when fetching stopped early (engine/cut.rs), projection, and
//! every notice the fetch earned, said from its merged counts (engine/stats.rs). Fitting the
//! budget is the next step (engine/fit.rs), called by `Engine::query`.
use super::answer::*;
use super::cut::cut;
use super::fetch::Fetched;
use super::kept::Kept;
use super::pacing::{self, After};
use super::plan::Plan;
use super::record::{dedup, project, record_day};
use super::rules::Basis;
use super::stats::Stats;
use crate::catalog::Settles;
use crate::providers::{Due, Mode};
use jiff::civil::Date;

/// The records of an answer before it is fitted to `max_chars`, with the days they cover and
/// every notice earned so far.
pub struct Shaped {
    pub kept: Kept,
    pub range: Option<(Date, Date)>,
    pub notices: Notices,
    pub synthetic: bool,
    pub pages: u32,
    /// The records as they came, while the provider's rules said something of them.
    pub basis: Option<Basis>,
}

pub fn shape(plan: &Plan, f: Fetched) -> Shaped {
    let mut n = Notices::default();
    let c = plan.collection;
    let synthetic = plan.cred.mode() == Mode::Sandbox;
    if synthetic {
        n.synthetic = Some(plan.provider.synthetic_notice());
    }
    let mut basis = None;
    let mut kept = match f.kept {
        Kept::Documents(records) => {
            // Kept while the rules have something to say, to say it again of fewer records.
            let raw = records.clone();
            let finished = plan.provider.finish(c, records, &plan.options);
            if !finished.notes.is_empty() {
                n.rules = Some(finished.notes);
                basis = Some(Basis::new(plan.provider.clone(), c, plan.options.clone(), plan.zone.clone(), raw));
            }
            Kept::Documents(dedup(finished.records, c))
        }
        // Stamped, de-duplicated and projected page by page (engine/kept.rs).
        series @ Kept::Series(_) => series,
    };
    let reading = plan.provider.reading_notes(c, &plan.zone);
    if !reading.is_empty() {
        n.rules.get_or_insert_with(Vec::new).extend(reading);
    }
    // Each window kept only its own records (engine/window.rs): the range is already exact.
    let mut range = plan.range;
    if let Some(reason) = &f.stopped {
        let (t, claimed) = cut(plan, &mut kept, f.gap, reason);
        n.truncated = Some(t);
        range = claimed;
        if let Some(b) = &basis {
            n.rules = match (claimed, plan.range) {
                (Some((s, e)), Some(_)) => b.within(Some(s), Some(e)),
                (None, Some(_)) => b.nothing(),
                _ => n.rules.take(),
            };
        }
    }
    said(plan, &f.stats, f.windows, f.stopped.is_some(), &mut n);
    if !plan.ignored_fields.is_empty() {
        n.ignored_fields = Some(plan.ignored_fields.clone());
    }
    if plan.fields_split {
        n.fields_split = Some("`fields` arrived as one comma-separated string and was split into names.".into());
    }
    n.range_defaulted = plan.range_note.clone();
    n.after_today = plan.after_today.clone();
    n.beyond_retention = plan.beyond_retention.clone();
    n.partial = partial(plan, &kept);
    if let (Some(fields), Kept::Documents(records)) = (&plan.fields, &mut kept) {
        *records = project(std::mem::take(records), fields);
    }
    if let Some(keep) = plan.keep_last.filter(|k| kept.len() > *k) {
        let dropped = kept.len() - keep;
        kept.drop_first(dropped, &plan.zone);
        n.kept_last = Some(format!("Only the {keep} most recent record(s) of the range are shown; {dropped} earlier one(s) were left out on purpose."));
        if let (Some(b), Kept::Documents(records)) = (&basis, &kept) {
            n.rules = b.last(keep, records.first().and_then(|r| record_day(r, c, &plan.zone)));
        }
    }
    let mut outside = None;
    if let Some((from, to)) = plan.window {
        let before = kept.len();
        kept.keep_within(from.as_second(), to.as_second(), &plan.zone);
        let what = match &plan.window_label {
            Some(label) => format!("{label} ({from} up to {to})"),
            None => format!("from {from} up to {to}"),
        };
        n.window = Some(format!("Only the samples {what} are shown, as asked: {} of {before} that these days hold.", kept.len()));
        outside = Some((what, before));
    }
    // `empty` says the provider answered and had nothing: never for days it did not answer for.
    let answered = range.is_some() || (plan.range.is_none() && f.stopped.is_none());
    if kept.is_empty() && answered {
        n.empty = Some(match outside {
            // The days had samples, or not, and the span none: never "the days were empty".
            Some((what, before)) => format!("No samples {what}: {before} sample(s) of these days, none in that span. It does not mean zero."),
            None => empty(plan, range),
        });
    }
    Shaped { kept, range, notices: n, synthetic, pages: f.stats.pages, basis }
}

/// Said when the answer holds today's record of a collection whose day's value grows until the
/// day is over (steps so far): that record is the day so far, not the day. A night or a morning
/// score is final once it is there (`Settles::OnArrival`) and needs no such word.
fn partial(plan: &Plan, kept: &Kept) -> Option<String> {
    let Kept::Documents(records) = kept else { return None };
    if plan.collection.daily.is_none_or(|r| r.settles != Settles::AtDayEnd) {
        return None;
    }
    let today = plan.zone.today();
    let of_today = records.iter().any(|r| record_day(r, plan.collection, &plan.zone) == Some(today));
    of_today.then(|| format!("{today} is today and not over: its record holds the day so far (totals still grow), not the whole day."))
}

fn empty(plan: &Plan, range: Option<(Date, Date)>) -> String {
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
    match plan.provider.empty_hint(plan.collection) {
        Some(hint) => format!("{said} {hint}"),
        None => said,
    }
}

/// What the fetch's counts say: every retry, wait, cache hit, cycle and disagreement. `cut`:
/// fetching stopped short (the waits' sentences say so rather than that nothing is missing).
fn said(plan: &Plan, st: &Stats, windows: u32, cut: bool, n: &mut Notices) {
    let p = plan.provider.spec();
    // Records of the padding days (asked for to catch those a provider files under another day)
    // are no part of the answer: said to the log, not to the model.
    if st.discarded_out_of_range > 0 {
        tracing::debug!(collection = %plan.qualified, records = st.discarded_out_of_range, "records outside the asked days left out");
    }
    if st.undated_kept > 0 {
        n.undated_kept = Some(st.undated_kept);
    }
    if st.cycle {
        n.pagination_cycle = Some(format!(
            "{} sent a page token it had sent before; following it would loop, so that window stopped there. Its days that \
             were not fetched in full are not in `range` (see `truncated`).",
            p.display,
        ));
    }
    if st.order_disagreed > 0 {
        n.page_order = Some(format!(
            "{} sent the pages of {} window(s) in another order than the {} this server expects of {}; those windows were \
             read whole where they finished, and vouch for no day where they did not. Please report it: the catalog's page \
             order for this collection needs correcting.",
            p.display,
            st.order_disagreed,
            plan.collection.order.as_str().replace('_', " "),
            plan.qualified
        ));
    }
    let after = if cut { After::Cut("see `truncated`") } else { After::Whole };
    n.waits = Waits { limited: st.limited, waited: st.waited };
    if st.limited.times() > 0 {
        n.rate_limited = Some(RateLimited {
            retries: st.limited.times(),
            waited_seconds: st.waited.refused.as_secs_f64(),
            note: pacing::limited(p.display, &n.waits, after),
        });
    }
    if st.transient_retries > 0 {
        n.retried = Some(format!("{} request(s) failed transiently and were retried.", st.transient_retries));
    }
    if st.cached_windows > 0 {
        n.cached = Some(Cached {
            windows_cached: st.cached_windows,
            windows,
            oldest_seconds: st.cache_age.unwrap_or_default().as_secs(),
            note: format!(
                "CACHED: {} of {} window(s) came from this process's memory (fetched earlier, {} page(s) then), not from {} now. \
                 Only days before today are kept, and the last {} days for at most {} minutes, because {}. \
                 Send forget=true to fetch everything again.",
                st.cached_windows,
                windows,
                st.cached_pages,
                p.display,
                super::cache::RECENT_DAYS,
                super::cache::RECENT_TTL.as_secs() / 60,
                p.late_sync
            ),
        });
    }
    if st.credential_refreshed {
        n.credential_refreshed =
            Some(format!("{} said the access token had expired; it was refreshed, saved, and the request was sent again. Nothing is missing.", p.display));
    } else if let Some(due) = &plan.prepared {
        let display = p.display;
        n.credential_refreshed = Some(match due {
            Due::Expiring => format!(
                "The {display} access token was about to expire (within {} s); it was refreshed and saved before the first request.",
                crate::providers::EXPIRY_MARGIN_S
            ),
            Due::Exchange => format!("The {display} key was exchanged for an access token before the first request."),
            Due::Setup(step) => format!("The step after the {display} login ({step}) had not succeeded; it did now, before the first request."),
        });
    }
    if let Some(why) = plan.provider.credential().current().unsaved {
        // Said over "refreshed and saved", which would not be true.
        n.credential_refreshed = Some(format!(
            "{}: {why}. Meanwhile this process reads with the renewed login, kept in memory until it exits; nothing in this \
             answer is missing.",
            p.display
        ));
    }
    n.paced = pacing::paced(p.display, p.rate_budget, &n.waits, after);
}
