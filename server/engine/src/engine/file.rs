//! One file of one provider (an activity's FIT, TCX or GPX), read the way a query reads a page:
//! the credential prepared first (a key exchanged, a token about to expire renewed, a step after
//! the login finished), then sent by the one path of a request (engine/send.rs: one renewal after
//! a 401, a transient failure asked again, a 429 waited out with the provider's requests in flight
//! halved, the provider's limits kept), its statuses read by the same rules as a page's
//! (engine/fetch.rs `refusal`). `vitals_export` reads through here; nothing reads a provider
//! outside the engine.
use super::fetch::{refusal, StopReason};
use super::limiter::{Told, Word, UNSAID_429_WAIT};
use super::pacing;
use super::send::{Call, Ended, Reader, SendError};
use super::stats::Stats;
use super::{Deadline, Engine, QueryError};
use crate::http::Request;
use crate::providers::{Credential, Due, Mode, PageError, Provider};
use std::sync::Arc;

/// What the provider sent for a file.
pub struct FileReply {
    /// 200, or a status that means "no such file" (the provider's `no_data`, or 404).
    pub status: u16,
    pub bytes: Vec<u8>,
    /// The built-in sample's file, not the user's.
    pub synthetic: bool,
    /// What was done to the credential on the way, in words (said with the answer).
    pub credential: Option<String>,
}

/// A file as the one path of a request reads it (engine/send.rs): its request built from the
/// credential in use (again after a renewal), its statuses read by the page's rules.
struct FileReader<'a, M> {
    p: &'a dyn Provider,
    source: &'a super::Source,
    make: M,
    request: Request,
    cred: Credential,
}

impl<M: Fn(&Credential) -> Option<Request>> Reader for FileReader<'_, M> {
    type Reply = crate::http::FileReply;
    type Answer = FileReply;

    async fn send(&mut self, bearer: &crate::secret::Secret) -> Result<Self::Reply, SendError> {
        Ok(self.source.http.read_file(&self.request, bearer).await?)
    }

    async fn judge(&mut self, reply: Self::Reply) -> Result<FileReply, PageError> {
        let body = String::from_utf8_lossy(&reply.body).chars().take(300).collect::<String>();
        match refusal(self.p, &self.cred, reply.status, || body) {
            None => Ok(FileReply { status: reply.status, bytes: reply.body, synthetic: false, credential: None }),
            // "No such file" is the caller's to say, in the words of what was asked.
            Some(PageError::Refused(_)) if reply.status == 404 => Ok(FileReply { status: 404, bytes: vec![], synthetic: false, credential: None }),
            Some(e) => Err(e),
        }
    }

    fn renewed(&mut self, cred: &Credential) {
        // The request is the credential's (a provider may sign it): made again with the new one.
        if let Some(r) = (self.make)(cred) {
            self.request = r;
        }
        self.cred = cred.clone();
    }
}

impl Engine {
    /// The file `make` asks for, of provider `p`, within `deadline`.
    pub async fn file(&self, p: &Arc<dyn Provider>, make: impl Fn(&Credential) -> Option<Request>, deadline: Deadline) -> Result<FileReply, QueryError> {
        let spec = p.spec();
        let source = self.source(spec.name).expect("a provider of this engine has a source");
        let (cred, due) = self.ready(p).await?;
        let said = due.map(|d| self.prepared_words(p.as_ref(), &d));
        let no_request = || QueryError::BadInput(format!("{} builds no file request", spec.display));
        let request = make(&cred).ok_or_else(no_request)?;
        if let Some(api) = p.local(&cred) {
            if let Some(wait) = p.ready() {
                if deadline.within(wait).await.is_none() {
                    return Err(QueryError::Upstream(format!("{}'s file is still being read; nothing was written. Ask again in a moment.", spec.display)));
                }
            }
            let (status, bytes) = api.file(&request);
            return match refusal(p.as_ref(), &cred, status, String::new) {
                Some(PageError::Refused(_)) | None => Ok(FileReply { status, bytes, synthetic: cred.mode() == Mode::Sandbox, credential: said }),
                Some(e) => Err(file_error(p.as_ref(), e)),
            };
        }
        let call = Call { provider: p, source, cred: &cred, limits: &self.limits, deadline, offline: false };
        let mut reader = FileReader { p: p.as_ref(), source, make, request, cred: cred.clone() };
        let mut stats = Stats::default();
        let ended = call.send(&mut reader, &mut stats).await?;
        let renewed =
            stats.credential_refreshed.then(|| format!("{} said the access token had expired; it was renewed and the file asked for again.", spec.display));
        match ended {
            Ended::Answer(reply) => Ok(FileReply { credential: renewed.or(said), ..reply }),
            Ended::Stop(why) => Err(self.file_stopped(p.as_ref(), why, deadline, &stats)),
            Ended::Refused(e) => Err(file_error(p.as_ref(), e)),
            Ended::Behind => unreachable!("a file is no window of a query: nothing is behind it"),
        }
    }

    /// A file read the one path stopped before an answer, in words: nothing was written, and when to ask again.
    fn file_stopped(&self, p: &dyn Provider, why: StopReason, deadline: Deadline, stats: &Stats) -> QueryError {
        let spec = p.spec();
        match why {
            StopReason::Held { held, call_budget, wait_budget, waited } => {
                let (why, wait) = pacing::held(spec.display, spec.rate_budget, &held, call_budget, wait_budget, waited);
                QueryError::Upstream(format!("{why}; nothing was written. Ask again in {wait}."))
            }
            StopReason::RateLimitedOnce(wait) => {
                let told = Told { refused: true, word: if wait.is_some() { Word::RetryAfter } else { Word::Nothing } };
                let said = wait.unwrap_or(UNSAID_429_WAIT);
                QueryError::Upstream(format!("{}; nothing was written. Ask again in {} s.", pacing::told(spec.display, told), pacing::ahead(said)))
            }
            StopReason::Transient(e) | StopReason::Unreachable(e) => file_error(p, PageError::Transient(e)),
            // The token endpoint down for a moment: the provider failing, not a dead login.
            StopReason::Renewal(e) => QueryError::Upstream(format!(
                "{} turned the token away, and its token endpoint did not answer when asked to renew it ({e}); nothing was written",
                spec.display
            )),
            StopReason::RenewalLimited { why, wait } => QueryError::Upstream(format!(
                "{} turned the token away, and its token endpoint limited the renewal ({why}); nothing was written. Ask again in {} s.",
                spec.display,
                pacing::ahead(wait)
            )),
            StopReason::TimeBudget(_) | StopReason::PageCap(_) | StopReason::Cycle => {
                tracing::debug!(requests = stats.requests, "the file read ran out of time");
                QueryError::Upstream(format!(
                    "{} did not send the file within this call's time budget of {} s; nothing was written. Try again.",
                    spec.display,
                    deadline.seconds()
                ))
            }
        }
    }

    /// What preparing the credential did, in the words an answer says it with.
    fn prepared_words(&self, p: &dyn Provider, due: &Due) -> String {
        let display = p.spec().display;
        match due {
            Due::Expiring => format!("The {display} access token was about to expire; it was renewed and saved before the request."),
            Due::Exchange => format!("The {display} key was exchanged for an access token before the request."),
            Due::Setup(step) => format!("The step after the {display} login ({step}) had not succeeded; it did now, before the request."),
        }
    }
}

/// A failed file read, in words: nothing was written.
fn file_error(p: &dyn Provider, e: PageError) -> QueryError {
    let display = p.spec().display;
    match e {
        PageError::Unauthorized => QueryError::Auth(p.auth_help(401, &p.credential().current())),
        PageError::Forbidden(why) => QueryError::Auth(why),
        // A 429 ends in the one path of a request (engine/send.rs), never here; said plainly all the same.
        PageError::RateLimited { .. } => {
            QueryError::Upstream(format!("{display} answered 429 (too many requests); nothing was written. Ask again in a minute."))
        }
        PageError::Transient(e) => QueryError::Upstream(format!("{display} kept failing ({e}); nothing was written. Try again in a little while.")),
        PageError::Refused(why) | PageError::AskAgain(why) => QueryError::Upstream(format!("{why}; nothing was written.")),
    }
}
