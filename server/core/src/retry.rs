//! When a request is asked again, and after how long, for every request vitals sends: a query's
//! page and an activity's file (engine/send.rs, the engine's one path, which adds what needs the
//! engine: the provider's budget and requests in flight, the call's deadline) and a login's token
//! request (an OAuth exchange or refresh, Garmin Connect's DI and OAuth1 token services), which
//! has neither and is sent through [`paced`]. Here: a status classified by what asking again can
//! do ([`classify`]), the provider's own word on how long to wait (`Retry-After` in seconds or as
//! an HTTP date on the provider's clock, its rate headers' reset: [`said`]), the growing pause
//! after a failure on the way ([`backoff`]), and how long a login may wait ([`Policy`]). Before,
//! a token endpoint's 429 was said as "down or busy" after one blind second, whatever it asked.
use std::future::Future;
use std::time::Duration;

/// The longest one pause lasts: the provider is asked again after it, and a 429 then is handled
/// as one. A reset hours away (Polar's day budget) still holds a call that cannot wait that long
/// at once, since the decision reads what the provider said, not the pause.
pub const MAX_PAUSE: Duration = Duration::from_secs(60);

/// What vitals waits after a 429 that says neither `Retry-After` nor when the budget resets.
pub const UNSAID_429_WAIT: Duration = Duration::from_secs(5);

/// What vitals waits when rate headers say the budget is spent but not when it resets.
pub const UNSAID_RESET_WAIT: Duration = Duration::from_secs(60);

/// The pause before a login's request that failed on the way (unreachable, a server error) is sent again.
pub const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// The most a login waits in all on what a token endpoint's 429s asked: a renewal runs inside a
/// tool call (45 s by default, and clients drop an answer near a minute), so a wait longer than
/// this is said with when to come back rather than idled on.
pub const LOGIN_WAIT: Duration = Duration::from_secs(10);

/// What a status means for asking again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 2xx.
    Success,
    /// 401: the token was turned away (a renewal may help).
    Unauthorized,
    /// 403: no access (asking again cannot help).
    Forbidden,
    /// 429: too many requests; asked again after the wait the provider says.
    RateLimited,
    /// 5xx: the provider failing for a moment; asked again after a growing pause.
    Failing,
    /// 400, 404, 422: the request refused as it was.
    BadRequest,
    /// Anything else (a 3xx, an undocumented 4xx).
    Unexpected,
}

/// The kind of `status`.
pub fn classify(status: u16) -> Kind {
    match status {
        200..=299 => Kind::Success,
        401 => Kind::Unauthorized,
        403 => Kind::Forbidden,
        429 => Kind::RateLimited,
        500..=599 => Kind::Failing,
        400 | 404 | 422 => Kind::BadRequest,
        _ => Kind::Unexpected,
    }
}

/// What a provider said of how long to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// `Retry-After`.
    RetryAfter,
    /// Its rate headers' reset (`X-RateLimit-Reset`, `RateLimit-Reset`).
    Reset,
    /// Nothing: the wait is vitals' own choice.
    Nothing,
}

/// The wait as the provider said it: `Retry-After`, else its rate headers' reset, else
/// `unsaid`, vitals' own choice; and which of them it is.
pub fn said(retry_after: Option<Duration>, reset: Option<Duration>, unsaid: Duration) -> (Word, Duration) {
    match (retry_after, reset) {
        (Some(w), _) => (Word::RetryAfter, w),
        (None, Some(r)) => (Word::Reset, r),
        (None, None) => (Word::Nothing, unsaid),
    }
}

/// How long `Retry-After` (`value`) asks to wait: seconds, or an HTTP date. A date is read against
/// the answer's own `Date` header (`date`), not this computer's clock, so a provider whose clock is
/// minutes off is neither waited on for those minutes nor retried at once; without `Date`, against ours.
pub fn retry_after(value: &str, date: Option<&str>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(s) = value.parse::<u64>() {
        return Some(Duration::from_secs(s));
    }
    let parse = |v: &str| jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(v.trim()).ok();
    let until = parse(value)?;
    let now = date.and_then(parse).unwrap_or_else(jiff::Timestamp::now);
    Some(until.duration_since(now).try_into().unwrap_or(Duration::ZERO))
}

/// Whole seconds of a wait still to come, rounded up: waiting this long is enough.
pub fn ahead(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The pause before the `retry`-th retry (from 1) after a failure on the way: `base`, doubled each time.
pub fn backoff(base: Duration, retry: u32) -> Duration {
    base.saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)))
}

/// How a request without the engine is asked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Retries after a failure on the way or a 5xx.
    pub retries: u32,
    /// The first retry's pause ([`backoff`]).
    pub base: Duration,
    /// The most waited in all on what the provider's 429s asked; a 429 asking more is not waited.
    pub afford: Duration,
}

impl Policy {
    /// A login's token request: asked once more after a failure on the way (a failed renewal would
    /// otherwise cost the whole query), and a 429's wait waited up to [`LOGIN_WAIT`] in all.
    pub const LOGIN: Policy = Policy { retries: 1, base: RETRY_PAUSE, afford: LOGIN_WAIT };
}

/// A reply whose status and `Retry-After` say what its attempt came to.
pub trait Answered {
    fn status(&self) -> u16;
    fn retry_after(&self) -> Option<Duration>;
}

/// What a request sent once came to, by the one rule: failed on the way or a 5xx is asked again,
/// a 429 keeps the wait it said, anything else is the answer.
pub fn attempt<R: Answered, E>(sent: Result<R, E>) -> Attempt<Result<R, E>> {
    match sent {
        Err(e) => Attempt::Failing(Err(e)),
        Ok(r) => match classify(r.status()) {
            Kind::RateLimited => {
                let after = r.retry_after();
                Attempt::Limited(Ok(r), after)
            }
            Kind::Failing => Attempt::Failing(Ok(r)),
            _ => Attempt::Done(Ok(r)),
        },
    }
}

/// What one attempt came to, as [`paced`] reads it; each carries the attempt's outcome.
pub enum Attempt<T> {
    /// An answer to hand back: a success, or a refusal that asking again cannot change.
    Done(T),
    /// Failed on the way, or the provider failing (a 5xx): asked again while retries last.
    Failing(T),
    /// A 429, and its `Retry-After` when it sent one.
    Limited(T, Option<Duration>),
}

/// Why [`paced`] stopped asking, with the last attempt's outcome.
pub enum Stop<T> {
    /// Still failing after the policy's retries.
    Failing(T),
    /// A 429 whose wait is more than the policy can afford: the wait as the provider said it
    /// (`word`), not waited.
    Limited { last: T, word: Word, wait: Duration },
}

impl<T> Stop<T> {
    /// The last attempt's outcome, whatever stopped it.
    pub fn last(self) -> T {
        match self {
            Stop::Failing(t) | Stop::Limited { last: t, .. } => t,
        }
    }
}

/// Send with `send` until it is answered (`Ok`), or it still fails after `policy`'s retries, or a
/// 429 asks for more than `policy` can afford (`Err`): a failure on the way or a 5xx asked again
/// after [`backoff`]; a 429 waited as it said (else [`UNSAID_429_WAIT`], as a query's is) while the
/// waits fit `policy.afford`, then asked again.
pub async fn paced<T, F: Future<Output = Attempt<T>>>(policy: Policy, mut send: impl FnMut() -> F) -> Result<T, Stop<T>> {
    let (mut retries, mut waited) = (0u32, Duration::ZERO);
    loop {
        match send().await {
            Attempt::Done(t) => return Ok(t),
            Attempt::Failing(t) if retries >= policy.retries => return Err(Stop::Failing(t)),
            Attempt::Failing(_) => {
                retries += 1;
                let pause = backoff(policy.base, retries);
                tracing::debug!(retry = retries, "a request failed on the way; asking again after {pause:?}");
                tokio::time::sleep(pause).await;
            }
            Attempt::Limited(t, after) => {
                let (word, wait) = said(after, None, UNSAID_429_WAIT);
                if waited.saturating_add(wait) > policy.afford {
                    return Err(Stop::Limited { last: t, word, wait });
                }
                waited += wait;
                tracing::info!(wait_s = wait.as_secs_f64(), "answered 429 (too many requests); waiting as it said, then asking again");
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// Run `send`, and once more after [`RETRY_PAUSE`] if it failed on the way (`transient`): for a
/// key exchange, where one failed renewal would otherwise cost the whole query.
pub async fn once_more<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(mut send: impl FnMut() -> F, transient: impl Fn(&E) -> bool) -> Result<T, E> {
    let policy = Policy { retries: 1, base: RETRY_PAUSE, afford: Duration::ZERO };
    let sent = paced(policy, || {
        let sending = send();
        let transient = &transient;
        async move {
            match sending.await {
                Err(e) if transient(&e) => {
                    tracing::debug!("{e}; asking once more");
                    Attempt::Failing(Err(e))
                }
                done => Attempt::Done(done),
            }
        }
    });
    sent.await.unwrap_or_else(Stop::last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_retry_after_date_is_read_on_the_providers_clock() {
        assert_eq!(retry_after(" 7 ", None), Some(Duration::from_secs(7)));
        // Ten minutes ahead of us, or behind: the wait is what the provider's own clock says.
        assert_eq!(retry_after("Sat, 05 Dec 2026 12:10:02 GMT", Some("Sat, 05 Dec 2026 12:10:00 GMT")), Some(Duration::from_secs(2)));
        // A date already past on the provider's clock: no wait at all.
        assert_eq!(retry_after("Sat, 05 Dec 2026 11:59:00 GMT", Some("Sat, 05 Dec 2026 12:00:00 GMT")), Some(Duration::ZERO));
        assert_eq!(retry_after("soon", None), None);
    }

    #[test]
    fn statuses_are_classified_by_what_asking_again_can_do() {
        let kinds: Vec<Kind> = [200, 204, 401, 403, 429, 500, 503, 400, 404, 422, 302, 418].map(classify).to_vec();
        use Kind::*;
        assert_eq!(
            kinds,
            [Success, Success, Unauthorized, Forbidden, RateLimited, Failing, Failing, BadRequest, BadRequest, BadRequest, Unexpected, Unexpected]
        );
        assert_eq!(backoff(Duration::from_millis(250), 3), Duration::from_secs(1));
        assert_eq!(said(None, None, UNSAID_429_WAIT), (Word::Nothing, UNSAID_429_WAIT));
        assert_eq!(said(None, Some(Duration::from_secs(3)), UNSAID_429_WAIT), (Word::Reset, Duration::from_secs(3)));
    }

    /// A 429 whose wait fits is waited and asked again; one past what the policy affords is
    /// handed back at once with the wait as said, not slept.
    #[tokio::test(start_paused = true)]
    async fn a_short_429_is_waited_and_a_long_one_said_at_once() {
        let sent = AtomicU32::new(0);
        let send = |after: u64| {
            let n = sent.fetch_add(1, Ordering::SeqCst);
            async move {
                match n % 2 {
                    0 => Attempt::Limited(n, Some(Duration::from_secs(after))),
                    _ => Attempt::Done(n),
                }
            }
        };
        let start = tokio::time::Instant::now();
        assert!(matches!(paced(Policy::LOGIN, || send(3)).await, Ok(1)));
        assert_eq!(start.elapsed(), Duration::from_secs(3), "waited as Retry-After said");
        let start = tokio::time::Instant::now();
        match paced(Policy::LOGIN, || send(3600)).await {
            Err(Stop::Limited { word, wait, last }) => assert_eq!((word, wait, last), (Word::RetryAfter, Duration::from_secs(3600), 2)),
            _ => panic!("a wait of an hour is not waited"),
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "said at once");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_on_the_way_is_asked_again_as_the_policy_says() {
        let sent = AtomicU32::new(0);
        let failing = || {
            sent.fetch_add(1, Ordering::SeqCst);
            async { Attempt::<()>::Failing(()) }
        };
        assert!(matches!(paced(Policy::LOGIN, failing).await, Err(Stop::Failing(()))));
        assert_eq!(sent.load(Ordering::SeqCst), 2, "once more, then given up");
    }
}
