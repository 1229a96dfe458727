//! The one path of a request to a provider, for every reader (a query's page, an activity's
//! file): the call's deadline, the provider's budget (engine/limiter.rs) and its requests in
//! flight (engine/flight.rs) kept; the reply classified by the engine's one set of rules
//! (engine/fetch.rs `refusal`, and the reader's verdict on a 200 body); one renewal after a 401;
//! a transient failure asked again with a growing pause; and a 429 handled here and nowhere else:
//! the wait read as the provider said it, every reader of the provider paused, its requests in
//! flight halved, and asked again when the wait fits the call, else said at once. What a reader
//! supplies ([`Reader`]) is only what differs: how it is admitted, what it sends, how it reads a
//! reply. Before this, a file's read had its own loop that neither halved nor asked again after
//! a 429.
use super::limiter::{Held, Hold, Told, Until, Waited, Word, MAX_PAUSE, UNSAID_429_WAIT, UNSAID_RESET_WAIT};
use super::stats::Stats;
use super::{Deadline, Limits, QueryError, Source};
use crate::http::{FileReply, HttpError, Quota, Reply};
use crate::providers::{Credential, PageError, Provider, RenewError};
use crate::secret::Secret;
use std::sync::Arc;
use std::time::Duration;

/// What the provider sent, whatever was asked: what the one path reads of it before the reader does.
pub(crate) trait Replied {
    fn status(&self) -> u16;
    fn retry_after(&self) -> Option<Duration>;
    /// The provider's rate headers, where the reply carries them.
    fn quota(&self) -> Option<Quota>;
}

impl Replied for Reply {
    fn status(&self) -> u16 {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
    fn quota(&self) -> Option<Quota> {
        self.quota
    }
}

impl Replied for FileReply {
    fn status(&self) -> u16 {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
    fn quota(&self) -> Option<Quota> {
        None
    }
}

/// Why a request got no reply: kept as its kind, so a request this process refuses to send (not
/// a read) ends at once instead of being asked again as if the network had failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    /// The transport's fault (a timeout, a connection that failed), or a request refused before
    /// it was built.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// An export's index was still being built when the call's time ran out (its provider's name).
    #[error("{0}'s file was still being read when this call's time ran out")]
    NotReady(&'static str),
}

impl SendError {
    /// Whether asking again could help: a request refused before it was built never can.
    fn transient(&self) -> bool {
        !matches!(self, SendError::Http(HttpError::NotARead(_) | HttpError::Undeclared(..)))
    }
}

/// One reader's part of a request: what differs between a page and a file.
pub(crate) trait Reader {
    type Reply: Replied;
    type Answer;
    /// Before every attempt (`first`: the first of this request): whether it may be sent now.
    async fn admit(&mut self, _first: bool) -> Result<(), Ended<Self::Answer>> {
        Ok(())
    }
    /// The request sent once, with `bearer`; an error is the transport's, or a refusal to send it.
    async fn send(&mut self, bearer: &Secret) -> Result<Self::Reply, SendError>;
    /// A reply read: the answer, or the failure it means. A 429's wait is the one path's to read.
    async fn judge(&mut self, reply: Self::Reply) -> Result<Self::Answer, PageError>;
    /// The credential was renewed: the attempts after this use it.
    fn renewed(&mut self, _cred: &Credential) {}
    /// The provider's requests in flight are now `n` (after a 429, or a run of clean replies).
    fn slots(&self, _n: usize) {}
}

/// Why a window stopped before the provider said "no more pages".
#[derive(Debug, Clone)]
pub enum StopReason {
    PageCap(u32),
    Transient(String),
    /// Not one attempt at the page got an HTTP answer: the network, not the provider.
    Unreachable(String),
    /// The next request could not be sent within the call's time budget or the read's wait
    /// budget (engine/limiter.rs): answered at once with what is complete rather than idling
    /// until the deadline. `waited`: what the window had waited on rate limits before.
    Held {
        held: Held,
        call_budget: Duration,
        wait_budget: Duration,
        waited: Duration,
    },
    /// A 429 from a provider whose 429s are never asked again (`ProviderSpec.retries_429`).
    RateLimitedOnce(Option<Duration>),
    /// The provider handed back a page token it had given before: following it would loop.
    Cycle,
    /// The tool call's time budget ran out (engine/deadline.rs): what is complete is answered.
    TimeBudget(Duration),
    /// The provider turned the access token away and its token endpoint did not answer a renewal
    /// (`RenewError::Unavailable`): a transient fault, not a dead login.
    Renewal(String),
    /// The provider turned the access token away and its token endpoint answered the renewal with
    /// a 429 asking for longer than a login waits (`RenewError::Limited`): said with when to come back.
    RenewalLimited {
        why: String,
        wait: Duration,
    },
}

/// How one request ended, for its reader to word.
pub(crate) enum Ended<A> {
    Answer(A),
    /// Stopped before an answer came: a page's window is cut with `continue_from`, a file refused.
    Stop(StopReason),
    /// An earlier window left a gap while this one waited: nothing was sent.
    Behind,
    /// The provider refused it for good (a token turned away after its renewal, no access, a bad request).
    Refused(PageError),
}

/// What one request is sent under.
pub(crate) struct Call<'a> {
    pub provider: &'a Arc<dyn Provider>,
    pub source: &'a Source,
    pub cred: &'a Credential,
    pub limits: &'a Limits,
    pub deadline: Deadline,
    /// Answered in process (built-in sample data): no budget to keep and no network.
    pub offline: bool,
}

/// What the one path tells its loop after a failed attempt.
enum Next<A> {
    Again,
    End(Ended<A>),
}

impl Call<'_> {
    /// The request `reader` makes, sent until it is answered or ends; its requests, waits, 429s,
    /// retries and renewal counted in `stats`.
    pub(crate) async fn send<R: Reader>(&self, reader: &mut R, stats: &mut Stats) -> Result<Ended<R::Answer>, QueryError> {
        let p = self.provider;
        let refused = || QueryError::Auth(p.auth_help(401, self.cred));
        let mut bearer = self.cred.bearer.clone().ok_or_else(refused)?;
        let (mut transient, mut attempt, mut replied, mut renewed, mut asked_again) = (0u32, 0u32, false, false, false);
        loop {
            if self.deadline.passed() {
                return Ok(self.out_of_time());
            }
            stats.requests += 1;
            // The first request spends what admission counts (a page of the cap); retries do not.
            if let Err(end) = reader.admit(attempt == 0).await {
                return Ok(end);
            }
            attempt += 1;
            let sent = match self.attempt(reader, &bearer, stats).await {
                Ok(sent) => sent,
                Err(end) => return Ok(end),
            };
            self.heed_quota(&sent);
            replied |= sent.is_ok();
            let reset = sent.as_ref().ok().and_then(Replied::quota).and_then(|q| q.reset);
            let failure = match sent {
                Ok(reply) => match self.read(reader, reply).await {
                    Ok(answer) => return Ok(Ended::Answer(answer)),
                    // Refused token with a renewable credential: renewed once, then asked again.
                    Err(PageError::Unauthorized) if !renewed => {
                        bearer = match self.renew(&bearer, reader).await? {
                            Ok(bearer) => bearer,
                            // The token endpoint down or limiting for a moment: cut here, as for any transient fault.
                            Err(why) => return Ok(Ended::Stop(why)),
                        };
                        (renewed, stats.credential_refreshed) = (true, true);
                        continue;
                    }
                    Err(PageError::RateLimited { wait, detail }) => match self.limited(reader, (wait, reset), detail, stats).await {
                        Next::Again => continue,
                        Next::End(end) => return Ok(end),
                    },
                    Err(PageError::Transient(e)) => e,
                    // Asked another way (the reader rebuilt its request): once, then refused.
                    Err(PageError::AskAgain(why)) if !asked_again => {
                        tracing::info!(%why, "asking {} another way", p.spec().display);
                        asked_again = true;
                        continue;
                    }
                    Err(PageError::AskAgain(why)) => return Ok(Ended::Refused(PageError::Refused(why))),
                    Err(e) => return Ok(Ended::Refused(e)),
                },
                // A request refused before it was built (not a read) is refused for good.
                Err(e) if !e.transient() => return Ok(Ended::Refused(PageError::Refused(e.to_string()))),
                Err(e) => e.to_string(),
            };
            if transient >= self.limits.transient_retries {
                let failure = format!("{failure} (after {transient} retries)");
                return Ok(Ended::Stop(if replied { StopReason::Transient(failure) } else { StopReason::Unreachable(failure) }));
            }
            transient += 1;
            stats.transient_retries += 1;
            let wait = crate::retry::backoff(self.limits.backoff_base, transient);
            tracing::warn!(%failure, attempt = transient, "transient failure; retrying after {:?}", wait);
            if self.deadline.within(tokio::time::sleep(wait)).await.is_none() {
                return Ok(self.out_of_time());
            }
        }
    }

    fn out_of_time<A>(&self) -> Ended<A> {
        Ended::Stop(StopReason::TimeBudget(self.deadline.budget()))
    }

    /// The limits every wait of this request is planned against, from now: the call's deadline,
    /// and the read's wait budget less what it already waited on the provider's word.
    fn until(&self, stats: &Stats) -> Until {
        Until::new(self.deadline.fetch_by(), self.limits.rate_wait_budget, stats.waited.told())
    }

    /// Held before it could be sent within its limits: answered at once with why.
    fn held<A>(&self, held: Held, stats: &mut Stats) -> Ended<A> {
        stats.waited.then(held.waited);
        let (call_budget, wait_budget, waited) = (self.deadline.budget(), self.limits.rate_wait_budget, stats.waited.total());
        Ended::Stop(StopReason::Held { held, call_budget, wait_budget, waited })
    }

    /// One attempt on the wire: the budget's turn and a place in flight waited for (every wait
    /// measured, none started that would end past `until`).
    async fn attempt<R: Reader>(&self, reader: &mut R, bearer: &Secret, stats: &mut Stats) -> Result<Result<R::Reply, SendError>, Ended<R::Answer>> {
        if self.offline {
            return Ok(reader.send(bearer).await);
        }
        let _answered = match self.source.limiter.acquire(self.until(stats)).await {
            Ok((waited, permit)) => {
                stats.waited.then(waited);
                permit
            }
            Err(h) => return Err(self.held(h, stats)),
        };
        // The provider's limit of requests in flight holds across every query (engine/flight.rs).
        let sent = self.deadline.within(async {
            let _slot = self.source.in_flight.enter().await;
            reader.send(bearer).await
        });
        sent.await.ok_or_else(|| self.out_of_time())
    }

    /// The provider's own headers saying its budget is spent: every reader waits for it to reset
    /// (a 429 says the same, and is handled as one).
    fn heed_quota<T: Replied>(&self, sent: &Result<T, SendError>) {
        let Some(q) = sent.as_ref().ok().filter(|r| r.status() != 429).and_then(Replied::quota).filter(|q| q.remaining == 0) else { return };
        let (word, said) = q.reset.map_or((Word::Nothing, UNSAID_RESET_WAIT), |r| (Word::Reset, r));
        tracing::info!(reset_s = said.as_secs_f64(), "{}'s rate headers say its budget is spent; every window waits", self.provider.spec().display);
        self.source.limiter.pause(Told { refused: false, word }, said);
    }

    /// A reply read by the reader, a 429 carrying the `Retry-After` the provider sent; a clean
    /// reply earns back a request in flight.
    async fn read<R: Reader>(&self, reader: &mut R, reply: R::Reply) -> Result<R::Answer, PageError> {
        let retry_after = reply.retry_after();
        match reader.judge(reply).await {
            Ok(answer) => {
                if let Some(n) = self.source.in_flight.clean_page() {
                    tracing::debug!(in_flight = n, "clean replies from {}: one more request in flight", self.provider.spec().display);
                    reader.slots(n);
                }
                Ok(answer)
            }
            Err(PageError::RateLimited { detail, .. }) => Err(PageError::RateLimited { wait: retry_after, detail }),
            Err(e) => Err(e),
        }
    }

    /// The token turned away: renewed once, and the bearer it gives; `Ok(Err(why))` when the
    /// token endpoint did not answer (`RenewError::Unavailable`) or limited the login
    /// (`RenewError::Limited`), a transient fault to cut on. The renewal's own waits (a short 429
    /// waited, a failure asked once more: `retry::Policy::LOGIN`) are inside the call's deadline.
    async fn renew<R: Reader>(&self, bearer: &Secret, reader: &mut R) -> Result<Result<Secret, StopReason>, QueryError> {
        let p = self.provider;
        let refused = || QueryError::Auth(p.auth_help(401, self.cred));
        let renew = p.renew(Some(bearer.clone())).ok_or_else(refused)?;
        let Some(renewed) = self.deadline.within(renew).await else {
            return Ok(Err(StopReason::TimeBudget(self.deadline.budget())));
        };
        match renewed {
            Ok(()) => {}
            Err(RenewError::Unavailable(e)) => return Ok(Err(StopReason::Renewal(e))),
            Err(RenewError::Limited { why, wait }) => return Ok(Err(StopReason::RenewalLimited { why, wait })),
            Err(RenewError::Failed(e)) => return Err(QueryError::Auth(format!("{} turned the token away, and renewing it failed: {e}", p.spec().display))),
        }
        let cred = p.credential().current();
        reader.renewed(&cred);
        cred.bearer.ok_or_else(refused).map(Ok)
    }

    /// A 429: said at once where the provider's 429s are never asked again or its wait does not
    /// fit the call; else every reader of the provider pauses, its requests in flight are halved,
    /// and this one is asked again after the wait.
    /// `wait`: its `Retry-After`, and its rate headers' reset.
    async fn limited<R: Reader>(&self, reader: &mut R, wait: (Option<Duration>, Option<Duration>), detail: String, stats: &mut Stats) -> Next<R::Answer> {
        let p = self.provider;
        if !p.spec().retries_429 {
            return Next::End(Ended::Stop(StopReason::RateLimitedOnce(wait.0)));
        }
        // The wait as the provider said it: Retry-After, else its rate headers' reset, else a
        // few seconds of vitals' own choosing.
        let (word, said) = crate::retry::said(wait.0, wait.1, UNSAID_429_WAIT);
        let told = Told { refused: true, word };
        if let Err(h) = self.until(stats).fits(Hold::Told(told), said, false) {
            // Longer than the call or the read may wait: answered now, and not paused for (a
            // later call asks again, and hears the same).
            return Next::End(self.held(h, stats));
        }
        let n = self.source.in_flight.halve();
        reader.slots(n);
        tracing::info!(wait_s = said.as_secs_f64(), in_flight = n, "rate limited by {} ({detail}); every window waits", p.spec().display);
        stats.limited.add(word, said);
        if !self.offline {
            // Waited out (and measured) by the limiter before the request is sent again.
            self.source.limiter.pause(told, said);
            return Next::Again;
        }
        // Answers in process keep no budget and skip the limiter: this reader waits.
        let from = tokio::time::Instant::now();
        tokio::time::sleep(said.min(MAX_PAUSE)).await;
        stats.waited.then(Waited { refused: from.elapsed(), ..Default::default() });
        Next::Again
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::connection::CredentialKind;

    /// A reader whose every request is refused before it is built (a POST whose action is no
    /// read), counting how often it was sent.
    struct NoRead {
        sent: u32,
    }

    impl Reader for NoRead {
        type Reply = Reply;
        type Answer = ();
        async fn send(&mut self, _: &Secret) -> Result<Reply, SendError> {
            self.sent += 1;
            Err(HttpError::NotARead("setmeas".into()).into())
        }
        async fn judge(&mut self, _: Reply) -> Result<(), PageError> {
            Ok(())
        }
    }

    /// Asking again cannot make a write a read: before its error kept its kind, such a request
    /// was retried as a network fault and then said as "unreachable" with `continue_from`.
    #[tokio::test]
    async fn a_request_refused_before_it_is_built_is_refused_once_not_retried_as_a_network_fault() {
        let config = Config::from_pairs([("VITALS_BACKOFF_MS", "1")]);
        let limits = Limits::from_config(&config);
        let provider = crate::providers::all_in(&config, &crate::accounts::Home::local(std::sync::Arc::new(config.clone())))
            .into_iter()
            .find(|p| p.spec().name == "withings")
            .expect("withings");
        let source = Source::new(provider.clone(), limits.concurrency, &config);
        let mut cred = Credential::bare(CredentialKind::OAuth, "a test".into());
        cred.bearer = Some(Secret::new("token"));
        let call =
            Call { provider: &provider, source: &source, cred: &cred, limits: &limits, deadline: Deadline::after(Duration::from_secs(30)), offline: false };
        let mut reader = NoRead { sent: 0 };
        let ended = call.send(&mut reader, &mut Stats::default()).await.expect("an end, not a query error");
        let refused = match ended {
            Ended::Refused(PageError::Refused(why)) => why,
            Ended::Stop(why) => panic!("stopped as if it could be asked again: {why:?}"),
            _ => panic!("not refused"),
        };
        assert!(refused.contains("\"setmeas\" is not a read"), "{refused}");
        assert_eq!(reader.sent, 1, "sent once");
    }
}
