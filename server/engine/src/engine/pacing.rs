//! Every sentence that speaks of waiting on a provider's limits, made from the facts the limiter
//! and the fetch measured (engine/limiter.rs, engine/stats.rs), never from what a wait was
//! planned to be: a query's `paced` and `rate_limited` notices (engine/shape.rs), its cut when a
//! request was held (engine/cut.rs), a file's refusal (engine/file.rs) and the day's report
//! (engine/today/said.rs). A 429 is said with `Retry-After` only when the provider sent one, and
//! a wait vitals chose is said as its own choice.
use super::answer::Waits;
use super::limiter::{Bound, Held, Hold, Told, Word, UNSAID_429_WAIT, UNSAID_RESET_WAIT};
use crate::catalog::RateBudget;
use std::time::Duration;

/// What the answer holds after the waits a notice tells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Fetching was not cut.
    Whole,
    /// Fetching was cut, and this names where that is said (`` `truncated` ``, `errors`).
    Cut(&'static str),
}

/// Seconds waited, as measured.
fn spent(d: Duration) -> String {
    match d.as_secs_f64() {
        s if s < 1.0 => format!("{s:.2} s"),
        s => format!("{s:.1} s"),
    }
}

/// Whole seconds of a wait still to come, rounded up: waiting this long is enough.
pub use crate::retry::ahead;

/// Too short a wait to speak of.
fn nothing(d: Duration) -> bool {
    d < Duration::from_millis(5)
}

/// How the provider told vitals to slow down, as it did.
pub fn told(display: &str, t: Told) -> String {
    match (t.refused, t.word) {
        (true, Word::RetryAfter) => format!("{display} answered 429 (too many requests) and said when to ask again (Retry-After)"),
        (true, Word::Reset) => format!("{display} answered 429 (too many requests) without Retry-After; its rate headers said when its budget resets"),
        (true, Word::Nothing) => format!(
            "{display} answered 429 (too many requests) and said neither when to ask again (no Retry-After) nor when its budget \
             resets; vitals waits {} s then, its own choice",
            UNSAID_429_WAIT.as_secs()
        ),
        (false, Word::Nothing) => format!(
            "{display}'s rate headers said its budget is spent but not when it resets; vitals waits {} s then, its own choice",
            UNSAID_RESET_WAIT.as_secs()
        ),
        (false, _) => format!("{display}'s rate headers said its budget is spent, and when it resets"),
    }
}

/// What held a request and when it could be sent, as a clause: in the provider's words when it
/// said when, else as vitals' own count or choice.
fn free(display: &str, budget: RateBudget, hold: Hold, wait: &str) -> String {
    match hold {
        Hold::Budget => format!(
            "vitals' own count of {display}'s budget ({} requests per {} s) is spent: the next request could be sent in {wait}",
            budget.requests,
            budget.per.as_secs()
        ),
        Hold::Told(t) => match (t.refused, t.word) {
            (true, Word::RetryAfter) => format!("{display} answered 429 (too many requests) and said to ask again in {wait} (Retry-After)"),
            (true, Word::Reset) => format!("{display} answered 429 (too many requests) without Retry-After; its rate headers said its budget resets in {wait}"),
            (false, Word::Reset | Word::RetryAfter) => format!("{display}'s rate headers said its budget is spent and resets in {wait}"),
            (_, Word::Nothing) => format!("{}, so the next request could be sent in {wait}", told(display, t)),
        },
    }
}

/// A request held rather than sent: why, in a clause that says what held it, when it could be
/// sent, which limit that passes and what was waited before; and that wait ("58 s", "60 s or
/// more") for the sentence's advice. `waited`: what the read had waited on limits before.
pub fn held(display: &str, budget: RateBudget, h: &Held, call_budget: Duration, wait_budget: Duration, waited: Duration) -> (String, String) {
    let wait = format!("{} s{}", ahead(h.free_in), if h.at_least { " or more" } else { "" });
    let limit = match h.bound {
        Bound::Call => {
            format!("later than this call's time budget allows ({} s of its {} s left, VITALS_CALL_BUDGET_S)", h.left.as_secs(), call_budget.as_secs().max(1))
        }
        Bound::Waits => {
            format!("longer than a read may wait on rate limits ({} s of its {} s left, VITALS_RATE_WAIT_BUDGET_S)", h.left.as_secs(), wait_budget.as_secs())
        }
    };
    let when = match nothing(waited) {
        true => "at once, without waiting".to_string(),
        false => format!("after {} of waiting", spent(waited)),
    };
    (format!("{}, {limit}, so this answer stopped {when}", free(display, budget, h.hold, &wait)), wait)
}

/// The `rate_limited` note: the 429s waited out and asked again after, as each said its wait,
/// the time waited for them as measured, and what the answer holds.
pub fn limited(display: &str, w: &Waits, after: After) -> String {
    let (l, waited) = (&w.limited, w.waited.refused);
    let mut how = vec![];
    if l.retry_after.times > 0 {
        how.push(format!("{} with Retry-After (up to {} s)", l.retry_after.times, ahead(l.retry_after.longest)));
    }
    if l.reset.times > 0 {
        how.push(format!("{} without Retry-After, its rate headers saying its budget resets in up to {} s", l.reset.times, ahead(l.reset.longest)));
    }
    if l.nothing.times > 0 {
        how.push(format!("{} saying neither Retry-After nor when its budget resets, so vitals chose to wait {} s", l.nothing.times, ahead(l.nothing.longest)));
    }
    let waits = match nothing(waited) {
        true => "the wait was over before the page was asked again".to_string(),
        false => format!("vitals waited {} and asked again", spent(waited)),
    };
    let holds = match after {
        After::Whole => "every page it refused was fetched after the wait".to_string(),
        After::Cut(see) => format!("the read was still cut ({see})"),
    };
    format!("{display} answered 429 (too many requests) {} time(s): {}. Then {waits}; {holds}.", l.times(), how.join("; "))
}

/// The `paced` notice: time waited before sending for vitals' own count of the provider's
/// budget, for its rate headers saying the budget was spent, and for a 429 another read was
/// answered (this read's own are `rate_limited`'s), as measured; None when nothing was waited.
pub fn paced(display: &str, budget: RateBudget, waits: &Waits, after: After) -> Option<String> {
    let w = &waits.waited;
    let mut parts = vec![];
    if !nothing(w.budget) {
        parts.push(format!(
            "waited {} before sending, to stay inside vitals' count of {display}'s budget of {} requests per {} s",
            spent(w.budget),
            budget.requests,
            budget.per.as_secs()
        ));
    }
    if !nothing(w.spent) {
        parts.push(format!("waited {} because {display}'s rate headers said its budget was spent", spent(w.spent)));
    }
    if waits.limited.times() == 0 && !nothing(w.refused) {
        parts.push(format!("waited {} because {display} had answered 429 (too many requests) to another read", spent(w.refused)));
    }
    if parts.is_empty() {
        return None;
    }
    let holds = match after {
        After::Whole => "nothing was left out for it".to_string(),
        After::Cut(see) => format!("the read was still cut ({see})"),
    };
    let text = format!("{}; {holds}.", parts.join("; "));
    Some(text[..1].to_uppercase() + &text[1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::limiter::Waited;
    use crate::engine::stats::{Asked, Limited};

    fn waits(limited: Limited, waited: Waited) -> Waits {
        Waits { limited, waited }
    }

    fn refused(s: f64) -> Waited {
        Waited { refused: secs(s), ..Default::default() }
    }

    const WHOOP: RateBudget = RateBudget { requests: 100, per: Duration::from_secs(60) };

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn a_held_request_says_what_held_it_when_it_frees_and_what_was_waited() {
        let spent = Told { refused: false, word: Word::Reset };
        let h = Held { hold: Hold::Told(spent), free_in: secs(57.2), at_least: false, bound: Bound::Call, left: secs(8.4), waited: Waited::default() };
        let (why, wait) = held("WHOOP", WHOOP, &h, secs(10.0), secs(120.0), Duration::ZERO);
        assert_eq!(wait, "58 s");
        assert_eq!(
            why,
            "WHOOP's rate headers said its budget is spent and resets in 58 s, later than this call's time budget allows (8 s of \
             its 10 s left, VITALS_CALL_BUDGET_S), so this answer stopped at once, without waiting"
        );
        assert!(!why.contains("Retry-After"), "WHOOP sent none");
        let own = Held { hold: Hold::Budget, at_least: true, bound: Bound::Waits, left: secs(5.0), free_in: secs(60.0), ..h };
        let (why, wait) = held("WHOOP", WHOOP, &own, secs(45.0), secs(5.0), secs(2.5));
        assert_eq!(wait, "60 s or more");
        assert!(
            why.starts_with("vitals' own count of WHOOP's budget (100 requests per 60 s) is spent: the next request could be sent in 60 s or more, longer"),
            "{why}"
        );
        assert!(why.ends_with("(5 s of its 5 s left, VITALS_RATE_WAIT_BUDGET_S), so this answer stopped after 2.5 s of waiting"), "{why}");
        let silent = Held { hold: Hold::Told(Told { refused: true, word: Word::Nothing }), free_in: secs(5.0), left: secs(2.7), ..h };
        let (why, _) = held("Oura", WHOOP, &silent, secs(3.0), secs(120.0), Duration::ZERO);
        assert!(why.starts_with("Oura answered 429 (too many requests) and said neither when to ask again (no Retry-After) nor when its budget resets; vitals waits 5 s then, its own choice, so the next request could be sent in 5 s, later than this call's time budget allows (2 s of its 3 s left"), "{why}");
    }

    #[test]
    fn a_429_is_said_as_the_provider_said_its_wait() {
        let retry = Limited { retry_after: Asked { times: 2, longest: secs(1.0) }, ..Default::default() };
        assert_eq!(
            limited("WHOOP", &waits(retry, refused(1.04)), After::Whole),
            "WHOOP answered 429 (too many requests) 2 time(s): 2 with Retry-After (up to 1 s). Then vitals waited 1.0 s and asked \
             again; every page it refused was fetched after the wait."
        );
        let silent = Limited { nothing: Asked { times: 1, longest: UNSAID_429_WAIT }, reset: Asked { times: 1, longest: secs(0.5) }, ..Default::default() };
        let note = limited("Oura", &waits(silent, refused(5.0)), After::Cut("see `truncated`"));
        assert!(!note.contains("with Retry-After"), "{note}");
        assert!(note.contains("1 without Retry-After, its rate headers saying its budget resets in up to 1 s"), "{note}");
        assert!(note.contains("1 saying neither Retry-After nor when its budget resets, so vitals chose to wait 5 s"), "{note}");
        assert!(note.ends_with("Then vitals waited 5.0 s and asked again; the read was still cut (see `truncated`)."), "{note}");
    }

    #[test]
    fn pacing_says_the_measured_wait_by_cause_and_nothing_when_none() {
        assert_eq!(paced("WHOOP", WHOOP, &Waits::default(), After::Whole), None);
        let w = Waited { budget: secs(12.34), spent: secs(0.5), refused: secs(3.0) };
        let own = Limited { retry_after: Asked { times: 1, longest: secs(3.0) }, ..Default::default() };
        assert_eq!(
            paced("WHOOP", WHOOP, &waits(own, w), After::Whole).unwrap(),
            "Waited 12.3 s before sending, to stay inside vitals' count of WHOOP's budget of 100 requests per 60 s; waited 0.50 s \
             because WHOOP's rate headers said its budget was spent; nothing was left out for it."
        );
        let headers = Waited { spent: secs(2.0), ..Default::default() };
        assert_eq!(
            paced("Polar", WHOOP, &waits(Limited::default(), headers), After::Cut("see `errors`")).unwrap(),
            "Waited 2.0 s because Polar's rate headers said its budget was spent; the read was still cut (see `errors`)."
        );
        // A pause another read's 429 set is this read's wait too, said here since it had no 429 of its own.
        assert_eq!(
            paced("WHOOP", WHOOP, &waits(Limited::default(), refused(1.5)), After::Whole).unwrap(),
            "Waited 1.5 s because WHOOP had answered 429 (too many requests) to another read; nothing was left out for it."
        );
    }
}
