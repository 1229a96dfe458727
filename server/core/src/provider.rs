//! The vocabulary between the engine and a provider: what a provider is (`Provider`), where it
//! stands (`Mode`), its credential as read for one query (`Credential`), and one page of a
//! collection (`Page`, `PageAt`, `PageError`). Providers implement it; the engine reads only it.
pub use crate::catalog::FileFormat;
use crate::catalog::{CollectionSpec, ProviderSpec};
/// How a read is sent is the HTTP client's vocabulary; providers build it.
pub use crate::http::{ReadMethod, Request};
use crate::secret::Secret;
use serde_json::Value;

pub use crate::connection::{BoxFuture, CredentialKind};

/// Where a provider stands for this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Synthetic data from the provider's sandbox: never the user's.
    Sandbox,
    Connected,
    /// No credential and no sample data: nothing can be read until the account is connected.
    NeedsCredentials,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sandbox => "sandbox",
            Mode::Connected => "connected",
            Mode::NeedsCredentials => "needs_credentials",
        }
    }
}

/// Work a credential needs before its first request of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// The access token expires within [`EXPIRY_MARGIN_S`]: renewed now rather than after a 401.
    Expiring,
    /// There is a key but no access token yet (an environment key, exchanged in memory).
    Exchange,
    /// A step after the login has not succeeded yet (its name): run before reading.
    Setup(String),
}

/// A provider's credential as it stands: read once per query (and again only after renewing it).
#[derive(Debug, Clone)]
pub struct Credential {
    pub kind: CredentialKind,
    /// Where it came from, in words (`environment OURA_PAT`, `OAuth login in the file …`).
    pub origin: String,
    pub bearer: Option<Secret>,
    pub scopes: Option<Vec<String>>,
    /// Unix seconds.
    pub expires_at: Option<i64>,
    /// When a pasted key itself expires, Unix seconds, when the user said.
    pub key_expires_at: Option<i64>,
    /// Which login this is (changes when another account may have been connected). None: no login.
    pub account: Option<String>,
    /// Non-secret fields kept with the login that a provider's routes need (a user id).
    pub extra: std::collections::BTreeMap<String, String>,
    pub due: Option<Due>,
    /// Why the saved login could not be read (a damaged token file, a keyring that fails): the
    /// provider then answers with this, never with sample data in the login's place.
    pub problem: Option<String>,
    /// The login was renewed but could not be saved (a full disk): why, in words. This process
    /// reads with the renewed tokens, kept in memory only.
    pub unsaved: Option<String>,
}

impl Credential {
    pub fn mode(&self) -> Mode {
        match self.kind {
            CredentialKind::Sandbox => Mode::Sandbox,
            CredentialKind::None => Mode::NeedsCredentials,
            _ => Mode::Connected,
        }
    }
    /// A credential of `kind` with nothing but its origin.
    pub fn bare(kind: CredentialKind, origin: String) -> Credential {
        Credential {
            kind,
            origin,
            bearer: None,
            scopes: None,
            expires_at: None,
            key_expires_at: None,
            account: None,
            extra: Default::default(),
            due: None,
            problem: None,
            unsaved: None,
        }
    }
}

/// Where a provider's credential comes from, whatever its kind.
pub trait CredentialSource: Send + Sync {
    /// The credential now: one read of the environment and the token store.
    fn current(&self) -> Credential;
}

/// How close to its expiry an access token is refreshed before use.
pub const EXPIRY_MARGIN_S: i64 = 60;

/// The time window of one upstream request, already padded by the engine.
#[derive(Debug, Clone)]
pub enum Window {
    Dates {
        start: jiff::civil::Date,
        end: jiff::civil::Date,
    },
    Instants {
        start: String,
        end: String,
    },
    Latest,
    Unbounded,
    /// One record, by the id the caller gave (`CollectionSpec.by_id`).
    Record(String),
}

/// One page as the provider sent it.
pub struct Page {
    pub records: Vec<Value>,
    /// What continues the listing (Oura's `next_token`, Withings' `offset`), if more follows.
    pub next_token: Option<String>,
}

/// A series page read in place ([`Provider::series_page`]): where each sample's text lies in the body.
pub struct SeriesPage {
    pub spans: Vec<std::ops::Range<usize>>,
    pub next_token: Option<String>,
}

/// Where `part`, a slice of `body` (as a borrowed `serde_json` `RawValue` is), lies in it.
pub fn span_in(body: &str, part: &str) -> Option<std::ops::Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    (start + part.len() <= body.len()).then_some(start..start + part.len())
}

/// Why a page that arrived (HTTP 200 included: Withings says everything inside the body) is not data.
/// The engine treats each kind the same way whatever the provider.
#[derive(Debug, Clone)]
pub enum PageError {
    /// Not a whole answer (cut body, an HTML error page, a provider timeout): retried with backoff.
    Transient(String),
    /// The access token was refused: refreshed once, then the provider's re-authorise help.
    Unauthorized,
    /// The credential lacks permission for this data (scope).
    Forbidden(String),
    /// Over the provider's request budget: every window waits, then asks again.
    RateLimited { wait: Option<std::time::Duration>, detail: String },
    /// The provider refused the query as asked: an error naming what it said.
    Refused(String),
    /// The provider refused the request as asked, and its adapter asks another way from now on
    /// ([`Provider::refusal`]): the page is asked once more, rebuilt; refused if that fails too.
    AskAgain(String),
}

/// What a page was asked with, for a provider whose body does not say it all.
#[derive(Debug, Clone)]
pub struct PageAt {
    /// The query's zone: a provider whose times carry none (a watch's clock) reads them in it, and
    /// says so in [`Provider::reading_notes`].
    pub zone: crate::time::Zone,
    /// The continuation this page was asked with (None: the first page), for offset paging whose
    /// next offset the body does not carry (Garmin's activity search).
    pub token: Option<String>,
    /// The query's options, where one decides what follows a page (Garmin's `laps`).
    pub options: Options,
    /// The id a by-id read asked for (`CollectionSpec.by_id`), for a reply that does not repeat
    /// it (Withings' ECG signal).
    pub record: Option<String>,
    /// The window the listing was asked for (padded), for a listing read wider than asked that
    /// ends once it has passed the window (Google's sleeps listed without their filter).
    pub window: Window,
}

/// What an adapter makes of a refusal ([`Provider::refusal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The engine's words: the provider refused the request, with what it said.
    AsUsual,
    /// The adapter asks another way from now on: the page is asked once more, built anew.
    AskAgain,
    /// Refused, in the adapter's words (which parameter, and what to send).
    Said(String),
}

/// Collection-specific options of a query (`include_manual`), validated against the catalog.
pub type Options = serde_json::Map<String, Value>;

/// The key a decoder puts in a series sample that is no reading (Polar's 0 bpm without skin
/// contact), its value the reason's name (`no_contact`). The engine places such a sample like any
/// other, so only those of the answer's own days are counted, never keeps it (no row, no bucket),
/// and says the count in `notices.excluded`, in the words of [`Provider::no_reading`].
pub const NO_READING: &str = "_no_reading";

/// What a provider's own rules did to the merged records, said in `notices.rules`.
pub struct Finished {
    pub records: Vec<Value>,
    pub notes: Vec<String>,
}

/// A provider without an official sandbox serves its sample data through this: built-in,
/// deterministic, in the provider's own wire format, answered in process (no network), so the
/// sandbox runs the same request, paging and decoding code as a connected account.
pub trait SampleApi: Send + Sync {
    fn answer(&self, req: &Request) -> crate::http::Reply;
    /// A file (an exercise's FIT, TCX or GPX) as the provider would send it: status and bytes.
    fn file(&self, _req: &Request) -> (u16, Vec<u8>) {
        (404, vec![])
    }
}

/// The provider-specific half of a query.
pub trait Provider: Send + Sync {
    fn spec(&self) -> &'static ProviderSpec;
    fn credential(&self) -> &dyn CredentialSource;
    /// The request for one page of a collection over one window, with the query's credential and
    /// options (an option that changes what is fetched, such as Garmin's `laps`).
    fn read_request(
        &self,
        c: &CollectionSpec,
        w: &Window,
        fields: Option<&[String]>,
        next_token: Option<&str>,
        cred: &Credential,
        options: &Options,
    ) -> Request;
    /// Decode one page body, asked as `at` says.
    fn parse_page(&self, c: &CollectionSpec, body: &str, at: &PageAt) -> Result<Page, PageError>;
    /// A series page whose samples lie in the body as they are, read without decoding them: where
    /// each sample's text is, so the engine reads it in place (engine/flat.rs) rather than building
    /// a map per sample. Only where `parse_page` would hand over exactly `serde_json::from_str` of
    /// each span, in order, with the same `next_token`; None (the default) for anything else, and
    /// for a body it cannot read, which `parse_page` then reads and words. A record whose text is
    /// JSON but not one a `Value` holds (a number out of range) fails the page where it is placed.
    fn series_page(&self, _c: &CollectionSpec, _body: &str, _at: &PageAt) -> Option<SeriesPage> {
        None
    }
    /// What every answer of `c` should say about how the provider's data was read (a time
    /// without a zone read in `zone`), in `notices.rules`.
    fn reading_notes(&self, _c: &CollectionSpec, _zone: &crate::time::Zone) -> Vec<String> {
        vec![]
    }
    /// The provider's rules over all merged records of a query (Withings merges the groups of one
    /// weigh-in, which can straddle pages). Runs before de-duplication and projection, for document
    /// collections only: a series is shaped page by page as it arrives (engine/kept.rs).
    fn finish(&self, _c: &CollectionSpec, records: Vec<Value>, _options: &Options) -> Finished {
        Finished { records, notes: vec![] }
    }
    /// Why samples marked [`NO_READING`] with `reason` are no reading, in a sentence for
    /// `notices.excluded` (None: the reason's name and the count are all that is said).
    fn no_reading(&self, _c: &CollectionSpec, _reason: &str) -> Option<String> {
        None
    }
    /// How the adapter reads a refusal of `req` (`status` 400, 404 or 422, and its `body`) before
    /// the engine words it: asked again another way (a filter some accounts reject: the adapter
    /// builds the request anew from now on and says so in [`Provider::finish`]'s notes), or said
    /// in words that name the parameter at fault.
    fn refusal(&self, _c: &CollectionSpec, _req: &Request, _status: u16, _body: &str) -> Refusal {
        Refusal::AsUsual
    }
    /// What to tell the user when the credential is missing or refused (401/403).
    fn auth_help(&self, status: u16, cred: &Credential) -> String;
    /// Why a collection cannot be served with this credential, if it cannot.
    fn unavailable(&self, c: &CollectionSpec, cred: &Credential) -> Option<String>;
    /// Words that every sandbox answer carries.
    fn synthetic_notice(&self) -> String;
    /// What an empty answer of this collection means, when the provider knows better than "nothing synced".
    fn empty_hint(&self, _c: &CollectionSpec) -> Option<String> {
        None
    }
    /// The in-process sample API that answers in sandbox mode, when this provider has no official sandbox.
    fn offline(&self) -> Option<&dyn SampleApi> {
        None
    }
    /// What answers this credential's requests in process, if anything does: the sample API in
    /// sandbox mode; a provider read from a file (an export indexed in memory) always.
    fn local(&self, cred: &Credential) -> Option<&dyn SampleApi> {
        self.offline().filter(|_| cred.mode() == Mode::Sandbox)
    }
    /// Waits until the in-process answers can be given (an export's index still being built),
    /// reporting how far it is in words. None: nothing to wait for.
    fn ready(&self) -> Option<BoxFuture<'_, ()>> {
        None
    }
    /// While [`Provider::ready`] waits: what is being read, in words, and how much of it, in %
    /// (for a client's progress notifications). None: nothing is being read.
    fn reading(&self) -> Option<(String, u32)> {
        None
    }
    /// Do what the credential needs: renew it (an OAuth refresh, a key exchanged again, a session
    /// refreshed) or finish a step after the login. `refused` is the access token the provider
    /// turned away (None: work that was due before the first request). None: nothing can be done.
    fn renew(&self, _refused: Option<Secret>) -> Option<BoxFuture<'_, Result<(), RenewError>>> {
        None
    }
    /// The request for one activity's file, where the provider offers files (`ProviderSpec.files`).
    fn file_request(&self, _id: &str, _format: FileFormat, _cred: &Credential) -> Option<Request> {
        None
    }
}

pub use crate::connection::RenewError;
