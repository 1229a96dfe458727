//! The cut of an answer that could not be fetched in full: it ends the day before the first day
//! some window did not fetch every record of (engine/coverage.rs), so `range` claims only whole
//! days and `continue_from` resumes exactly where it stopped; the reason says which days are
//! whole, which are missing, why, and what to do.
use super::answer::{DaysOut, Truncated};
use super::fetch::StopReason;
use super::kept::Kept;
use super::plan::Plan;
use jiff::civil::Date;
use jiff::ToSpan;

/// Every `truncated.cause` an answer can carry (README lists them; a test holds the two equal).
pub const CAUSES: &[&str] = &["page_cap", "provider_failing", UNREACHABLE, "rate_limited", "pagination_cycle", TIME_BUDGET, MAX_CHARS];

/// The cause of an answer cut because the tool call's time budget ran out (engine/deadline.rs).
pub const TIME_BUDGET: &str = "time_budget";

/// The cause of an answer cut because the provider could not be reached at all (the network).
pub const UNREACHABLE: &str = "unreachable";

/// The cause of an answer cut to fit `max_chars` (engine/shape.rs), not because fetching stopped.
pub const MAX_CHARS: &str = "max_chars";

/// Why fetching stopped, as a cause word, a sentence and what to do about it.
fn why(plan: &Plan, reason: &StopReason) -> (&'static str, String, String) {
    let who = plan.provider.spec().display;
    match reason {
        StopReason::PageCap(cap) => (
            "page_cap",
            format!("the page cap of {cap} pages (VITALS_PAGE_CAP) was reached before {who}'s last page"),
            "call again with `start` = `continue_from` for the rest, or ask for fewer days at a time".into(),
        ),
        StopReason::Transient(e) => (
            "provider_failing",
            format!("{who} kept failing: {e}"),
            "call again with `start` = `continue_from` in a little while; this is the provider failing, not missing data".into(),
        ),
        StopReason::Unreachable(e) => (
            UNREACHABLE,
            format!("{who} could not be reached: {e}"),
            "check this computer's network connection (and any proxy or firewall), then call again with `start` = \
             `continue_from`; nothing is known about the data itself"
                .into(),
        ),
        StopReason::RateLimitedOnce(w) => (
            "rate_limited",
            format!("{who} answered 429 (too many requests); it is not asked again at once, because asking again is what keeps a client throttled"),
            match w {
                Some(w) => format!("wait at least {}s, then call again with `start` = `continue_from`", w.as_secs().max(1)),
                None => "wait a few minutes, then call again with `start` = `continue_from`".into(),
            },
        ),
        StopReason::Held { held, call_budget, wait_budget, waited } => {
            let (why, wait) = super::pacing::held(who, plan.provider.spec().rate_budget, held, *call_budget, *wait_budget, *waited);
            ("rate_limited", why, format!("wait {wait}, then call again with `start` = `continue_from`"))
        }
        StopReason::TimeBudget(b) => (
            TIME_BUDGET,
            format!(
                "this call's time budget of {} s (VITALS_CALL_BUDGET_S; clients drop an answer that takes about a minute) ran out while \
                 {who} was still being read",
                b.as_secs().max(1)
            ),
            "call again with `start` = `continue_from` for the rest (or ask for fewer days at a time)".into(),
        ),
        StopReason::Renewal(e) => (
            "provider_failing",
            format!("{who} turned the access token away, and its token endpoint did not answer when asked to renew it: {e}"),
            "call again with `start` = `continue_from` in a few minutes; the saved login is not known to be bad, and this is not \
             missing data"
                .into(),
        ),
        StopReason::RenewalLimited { why, wait } => (
            "rate_limited",
            format!("{who} turned the access token away, and its token endpoint limited the renewal: {why}"),
            format!(
                "wait {} s, then call again with `start` = `continue_from`; the saved login is not known to be bad, and this is not \
                 missing data",
                super::pacing::ahead(*wait)
            ),
        ),
        StopReason::Cycle => (
            "pagination_cycle",
            format!("{who} sent a page token it had sent before, so following it would loop"),
            "call again with `start` = `continue_from`; if it happens again, ask for fewer days at a time".into(),
        ),
    }
}

/// Cut `kept` at `gap` (the first day not fetched in full) and say so. Returns the notice and the
/// days the answer still claims (None: not one whole day).
pub fn cut(plan: &Plan, kept: &mut Kept, gap: Option<Date>, reason: &StopReason) -> (Truncated, Option<(Date, Date)>) {
    let (cause, why, todo) = why(plan, reason);
    let (Some((s, e)), Some(g)) = (plan.range, gap) else {
        // A listing without days: what arrived is all there is to give.
        let t = Truncated {
            reason: format!("INCOMPLETE: {why}. The records below are the ones that arrived before it stopped; there are more. Call again later."),
            cause: cause.into(),
            continue_from: None,
            missing: None,
        };
        return (t, plan.range);
    };
    kept.keep_days_before(g, plan);
    let missing = Some(DaysOut { start: g.to_string(), end: e.to_string() });
    let t = |reason| Truncated { reason, cause: cause.into(), continue_from: Some(g.to_string()), missing };
    if g <= s {
        // The same call again would stop in the same place: only a larger cap gets a day through.
        let todo = match reason {
            StopReason::PageCap(_) => "the first of these days need more pages than this cap left them: raise VITALS_PAGE_CAP, then call again".into(),
            _ => todo,
        };
        let reason = format!(
            "INCOMPLETE: {why}. Not one day could be fetched in full, so no records are returned (part of a day would read as \
             the whole day); {s} to {e} are missing. To go on: {todo}."
        );
        return (t(reason), None);
    }
    let last = g.checked_sub(1.day()).unwrap_or(s);
    let reason = format!(
        "INCOMPLETE: {why}. {s} to {last} (`range`) are complete: every record of those days is here. {g} to {e} are missing: \
         nothing of those days is in this answer. To go on: {todo}."
    );
    (t(reason), Some((s, last)))
}
