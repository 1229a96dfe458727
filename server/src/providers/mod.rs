//! One folder per provider. A provider is data (its catalog) plus a small adapter that knows its
//! wire format and where its credential comes from; everything else is the engine's.
pub mod credential;
pub mod garmin;
pub mod garmin_connect;
pub mod oura;
pub mod polar;
pub mod series;
pub mod whoop;
pub mod withings;

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
    /// Do what the credential needs: renew it (an OAuth refresh, a key exchanged again, a session
    /// refreshed) or finish a step after the login. `refused` is the access token the provider
    /// turned away (None: work that was due before the first request). None: nothing can be done.
    fn renew(&self, _refused: Option<Secret>) -> Option<BoxFuture<'_, Result<(), String>>> {
        None
    }
    /// The request for one activity's file, where the provider offers files (`ProviderSpec.files`).
    fn file_request(&self, _id: &str, _format: FileFormat, _cred: &Credential) -> Option<Request> {
        None
    }
}

/// A stable pseudo-random number per day and purpose (splitmix64): what the built-in sample people
/// are made of, so the same day is the same data in every process.
pub fn day_hash(d: jiff::civil::Date, salt: u64) -> u64 {
    let n = (d - jiff::civil::Date::constant(1970, 1, 1)).get_days() as u64;
    let mut z = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An opt-in connection nobody connected (Garmin Connect before its login): it has nothing to read
/// and no sample data, and that is no failure (`vitals_check`), nor part of the day (`vitals_today`).
pub fn unasked(p: &dyn Provider) -> bool {
    let cred = p.credential().current();
    p.spec().connection.session().is_some_and(|s| s.explicit) && cred.mode() == Mode::NeedsCredentials && cred.problem.is_none()
}

/// Every provider this build knows, reading this machine's user's credentials.
pub fn all_from_env() -> Vec<std::sync::Arc<dyn Provider>> {
    all_in(&crate::accounts::Home::Local)
}

/// One provider of the registry: its catalog, and how to make its adapter for a home.
pub struct Registered {
    pub spec: &'static ProviderSpec,
    pub make: fn(&crate::accounts::Home) -> std::sync::Arc<dyn Provider>,
}

/// The registry: the one list of the providers this build knows, in the order they are shown.
/// Everything else (the engine, the settings app, the people's pages, the docs' checks, the
/// tests) iterates it; adding a provider is its folder and one line here.
pub static REGISTRY: &[Registered] = &[
    Registered { spec: &oura::catalog::OURA, make: |h| std::sync::Arc::new(oura::Oura::in_home(h)) },
    Registered { spec: &withings::catalog::WITHINGS, make: |h| std::sync::Arc::new(withings::Withings::in_home(h)) },
    Registered { spec: &polar::catalog::POLAR, make: |h| std::sync::Arc::new(polar::Polar::in_home(h)) },
    Registered { spec: &garmin::catalog::GARMIN, make: |h| std::sync::Arc::new(garmin::Garmin::in_home(h)) },
    Registered { spec: &garmin_connect::catalog::GARMIN_CONNECT, make: |h| std::sync::Arc::new(garmin_connect::GarminConnect::in_home(h)) },
    Registered { spec: &whoop::catalog::WHOOP, make: |h| std::sync::Arc::new(whoop::Whoop::in_home(h)) },
];

/// Every provider's catalog, in the registry's order.
pub fn specs() -> impl Iterator<Item = &'static ProviderSpec> {
    REGISTRY.iter().map(|r| r.spec)
}

/// The catalog of the provider (connection) named `name`.
pub fn spec(name: &str) -> Option<&'static ProviderSpec> {
    specs().find(|s| s.name == name)
}

/// Every provider this build knows, reading `home`'s credentials.
pub fn all_in(home: &crate::accounts::Home) -> Vec<std::sync::Arc<dyn Provider>> {
    REGISTRY.iter().map(|r| (r.make)(home)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_adapter_is_made_from_its_own_catalog() {
        let home = crate::accounts::Home::tenant(std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/registry")));
        for r in super::REGISTRY {
            assert!(std::ptr::eq((r.make)(&home).spec(), r.spec), "{}: its adapter answers with another catalog", r.spec.name);
        }
        let names: std::collections::HashSet<&str> = super::specs().map(|s| s.name).collect();
        assert_eq!(names.len(), super::REGISTRY.len(), "a name twice in the registry");
    }

    #[test]
    fn no_two_connections_of_a_namespace_name_the_same_collection() {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/namespaces"));
        let all = super::all_in(&crate::accounts::Home::tenant(dir));
        let mut seen = std::collections::HashSet::new();
        for p in &all {
            for c in p.spec().collections {
                assert!(seen.insert(p.spec().qualified(c.name)), "{} is named by two connections", p.spec().qualified(c.name));
            }
        }
        let garmin: Vec<&str> = all.iter().filter(|p| p.spec().namespace == "garmin").map(|p| p.spec().name).collect();
        assert_eq!(garmin, ["garmin", "garmin-connect"]);
    }

    /// What `vitals_sources` lists and `vitals_today` shows is data: every collection has its few
    /// words, and every column of a day's section reads a field its collection has.
    #[test]
    fn every_collection_is_briefed_and_every_headline_column_reads_a_real_field() {
        use crate::catalog::{Derive, EmbeddedKind};
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/briefs"));
        for p in super::all_in(&crate::accounts::Home::tenant(dir)) {
            let spec = p.spec();
            for c in spec.collections {
                let name = spec.qualified(c.name);
                assert!(!c.brief.is_empty() && c.brief.len() <= 45, "{name}: a brief of 1 to 45 characters, not {:?}", c.brief);
            }
            for t in spec.today {
                let c = spec.collection(t.collection).unwrap_or_else(|| panic!("{}: today names {} it does not have", spec.name, t.collection));
                assert!(!t.lead.is_empty(), "{}.{}: a section leads with something", spec.namespace, c.name);
                for l in t.lead {
                    assert!(c.knows_field(l.root()), "{}.{}: column {} reads {}, not a field of it", spec.namespace, c.name, l.name, l.from);
                    if let Derive::Series(_) = l.how {
                        let e = c.embedded.iter().find(|e| e.field == l.from);
                        assert!(matches!(e.map(|e| e.kind), Some(EmbeddedKind::Samples(_))), "{}: {} is not a series of samples", c.name, l.from);
                    }
                }
            }
        }
    }
}
