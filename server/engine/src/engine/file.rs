//! One file of one provider (an activity's FIT, TCX or GPX), read the way a query reads a page:
//! the credential prepared first (a key exchanged, a token about to expire renewed, a step after
//! the login finished), one renewal after a 401, a transient failure asked again, the provider's
//! limits kept, and its statuses read by the same rules as a page's (engine/fetch.rs
//! `refusal`). `vitals_export` reads through here; nothing reads a provider outside the engine.
use super::fetch::refusal;
use super::limiter::{Told, Until, Word, UNSAID_429_WAIT};
use super::pacing;
use super::{Deadline, Engine, QueryError};
use crate::http::Request;
use crate::providers::{Credential, Due, Mode, PageError, Provider};
use std::sync::Arc;
use std::time::Duration;

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

impl Engine {
    /// The file `make` asks for, of provider `p`, within `deadline`.
    pub async fn file(&self, p: &Arc<dyn Provider>, make: impl Fn(&Credential) -> Option<Request>, deadline: Deadline) -> Result<FileReply, QueryError> {
        let spec = p.spec();
        let source = self.source(spec.name).expect("a provider of this engine has a source");
        let (mut cred, due) = self.ready(p).await?;
        let mut said = due.map(|d| self.prepared_words(p.as_ref(), &d));
        let no_request = || QueryError::BadInput(format!("{} builds no file request", spec.display));
        if let Some(api) = p.offline().filter(|_| cred.mode() == Mode::Sandbox) {
            let (status, bytes) = api.file(&make(&cred).ok_or_else(no_request)?);
            return match refusal(p.as_ref(), &cred, status, String::new) {
                Some(PageError::Refused(_)) | None => Ok(FileReply { status, bytes, synthetic: true, credential: said }),
                Some(e) => Err(file_error(p.as_ref(), e)),
            };
        }
        let (mut renewed, mut transient) = (false, 0u32);
        loop {
            let request = make(&cred).ok_or_else(no_request)?;
            let bearer = cred.bearer.clone().ok_or_else(|| QueryError::Auth(p.auth_help(401, &cred)))?;
            let out_of_time = || {
                QueryError::Upstream(format!(
                    "{} did not send the file within this call's time budget of {} s; nothing was written. Try again.",
                    spec.display,
                    deadline.seconds()
                ))
            };
            // A wait that would pass the call's deadline is not started: said at once (engine/limiter.rs).
            let until = Until::new(deadline.fetch_by(), self.limits.rate_wait_budget, Duration::ZERO);
            let _permit = match source.limiter.acquire(until).await {
                Ok((_, permit)) => permit,
                Err(held) => {
                    let (why, wait) = pacing::held(spec.display, spec.rate_budget, &held, deadline.budget(), self.limits.rate_wait_budget, held.waited.total());
                    return Err(QueryError::Upstream(format!("{why}; nothing was written. Ask again in {wait}.")));
                }
            };
            let sent = deadline.within(async {
                let _slot = source.in_flight.enter().await;
                source.http.read_file(&request, &bearer).await.map_err(|e| PageError::Transient(e.to_string()))
            });
            let reply = match sent.await.ok_or_else(out_of_time)? {
                Ok(r) => r,
                Err(PageError::Transient(e)) if transient < self.limits.transient_retries => {
                    transient += 1;
                    tracing::warn!("the file request to {} failed ({e}); asking again", spec.display);
                    deadline.within(tokio::time::sleep(self.limits.backoff_base * 2u32.pow(transient - 1))).await.ok_or_else(out_of_time)?;
                    continue;
                }
                Err(e) => return Err(file_error(p.as_ref(), e)),
            };
            if reply.status == 429 {
                // Not asked again: said with the wait as the provider said it, and every read of
                // it paused meanwhile.
                let (word, said) = reply.retry_after.map_or((Word::Nothing, UNSAID_429_WAIT), |w| (Word::RetryAfter, w));
                let told = Told { refused: true, word };
                source.limiter.pause(told, said);
                return Err(QueryError::Upstream(format!(
                    "{}; nothing was written. Ask again in {} s.",
                    pacing::told(spec.display, told),
                    pacing::ahead(said)
                )));
            }
            let body = String::from_utf8_lossy(&reply.body).chars().take(300).collect::<String>();
            match refusal(p.as_ref(), &cred, reply.status, || body) {
                None => return Ok(FileReply { status: reply.status, bytes: reply.body, synthetic: false, credential: said }),
                // "No such file" is the caller's to say, in the words of what was asked.
                Some(PageError::Refused(_)) if reply.status == 404 => return Ok(FileReply { status: 404, bytes: vec![], synthetic: false, credential: said }),
                Some(PageError::Unauthorized) if !renewed => {
                    let Some(renew) = p.renew(Some(bearer)) else {
                        return Err(QueryError::Auth(p.auth_help(401, &cred)));
                    };
                    renewed = true;
                    renew.await.map_err(|e| QueryError::Auth(format!("{} turned the token away, and renewing it failed: {e}", spec.display)))?;
                    cred = p.credential().current();
                    said = Some(format!("{} said the access token had expired; it was renewed and the file asked for again.", spec.display));
                }
                Some(PageError::Transient(e)) if transient < self.limits.transient_retries => {
                    transient += 1;
                    tracing::warn!("{e}; asking for the file again");
                    deadline.within(tokio::time::sleep(self.limits.backoff_base * 2u32.pow(transient - 1))).await.ok_or_else(out_of_time)?;
                }
                Some(e) => return Err(file_error(p.as_ref(), e)),
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
        // A file's 429 is said where it is read, with the wait the provider said (Engine::file).
        PageError::RateLimited { .. } => {
            QueryError::Upstream(format!("{display} answered 429 (too many requests); nothing was written. Ask again in a minute."))
        }
        PageError::Transient(e) => QueryError::Upstream(format!("{display} kept failing ({e}); nothing was written. Try again in a little while.")),
        PageError::Refused(why) => QueryError::Upstream(format!("{why}; nothing was written.")),
    }
}
