//! Apple Health (reference `apple-health/README.md`): no web API, an export the person makes on
//! their phone and chooses (`Connection::File`). The file is read in place, once, in the
//! background from the moment a server with a file configured starts (`index.rs`, `read.rs`), and
//! read again when its size or modification time changes; questions are answered from the index
//! in memory through the same request, page and decoding path as every provider (`answer.rs`
//! behind an in-process API). The built-in sample person is an export generated in process
//! (`generate.rs`), read by the same reader.
pub mod answer;
pub mod catalog;
pub mod generate;
pub mod index;
pub mod read;
pub mod units;

use super::{Credential, CredentialKind, CredentialSource, Page, PageAt, PageError, Provider, ReadMethod, Request, SampleApi, Window};
use crate::catalog::{CollectionSpec, ProviderSpec, RangeKind};
use crate::secret::Secret;
use index::Index;
use read::{Progress, ReadError};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The address of the in-process API (never sent anywhere: `local` answers it).
const BASE: &str = "apple-health://export";

/// What identifies one version of a file: its size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified: Option<std::time::SystemTime>,
}

fn stamp_of(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp { size: m.len(), modified: m.modified().ok() })
}

/// An index ready to answer, and what the file was.
pub struct Ready {
    pub index: Index,
    pub entry: Option<String>,
    pub read_at: jiff::Timestamp,
    pub took: std::time::Duration,
}

enum State {
    Building,
    Ready(Arc<Ready>),
    Failed(ReadError),
}

/// One file being read or read: shared by every provider of the process, so the settings app, the
/// engine and the tests never read the same version twice.
pub struct Load {
    path: PathBuf,
    stamp: Stamp,
    /// This process read an earlier version of the file (its size or modification time changed).
    pub again: bool,
    progress: Progress,
    state: Mutex<State>,
}

impl Load {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// The index, once read; the error, if it could not be.
    pub fn ready(&self) -> Option<Result<Arc<Ready>, ReadError>> {
        match &*self.state() {
            State::Building => None,
            State::Ready(r) => Some(Ok(r.clone())),
            State::Failed(e) => Some(Err(e.clone())),
        }
    }
    /// Which version of the file this is, for the engine's cache: a changed file is another
    /// account, so no answer of the old one is served for it.
    pub fn version(&self) -> String {
        let t = self.stamp.modified.and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        format!("{}:{t}", self.stamp.size)
    }
    /// How much of the file has been read, in %.
    pub fn percent(&self) -> u64 {
        (self.progress.read.load(std::sync::atomic::Ordering::Relaxed) * 100).checked_div(self.stamp.size).unwrap_or(0).min(100)
    }
}

fn loads() -> &'static Mutex<HashMap<PathBuf, Arc<Load>>> {
    static LOADS: OnceLock<Mutex<HashMap<PathBuf, Arc<Load>>>> = OnceLock::new();
    LOADS.get_or_init(Default::default)
}

/// The load of `path` as it is now: the one under way or done, or a new one started in the
/// background when there is none or the file changed since. `stretch`: the tests' slower read.
pub fn load(path: &Path, stretch: Option<std::time::Duration>) -> Arc<Load> {
    let stamp = stamp_of(path).unwrap_or(Stamp { size: 0, modified: None });
    let mut all = loads().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(l) = all.get(path).filter(|l| l.stamp == stamp) {
        return l.clone();
    }
    let again = all.contains_key(path);
    let l = Arc::new(Load {
        path: path.to_path_buf(),
        stamp,
        again,
        progress: Progress { stretch: stretch.map(|d| (d, stamp.size)), ..Progress::default() },
        state: Mutex::new(State::Building),
    });
    all.insert(path.to_path_buf(), l.clone());
    let bg = l.clone();
    std::thread::spawn(move || {
        let from = std::time::Instant::now();
        let done = match read::read_file(&bg.path, &bg.progress) {
            Ok((index, found)) => {
                tracing::info!(records = index.len(), took_s = from.elapsed().as_secs_f64(), "read the Apple Health export");
                State::Ready(Arc::new(Ready { index, entry: found.entry, read_at: jiff::Timestamp::now(), took: from.elapsed() }))
            }
            Err(e) => State::Failed(e),
        };
        *bg.state() = done;
    });
    l
}

/// The built-in sample person: 30 days up to now in `zone` (the server's), written as an export
/// and read back; made once per zone a process serves.
fn sample(zone: &crate::time::Zone) -> Arc<Ready> {
    static SAMPLES: OnceLock<Mutex<HashMap<String, Arc<Ready>>>> = OnceLock::new();
    let mut made = SAMPLES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    let made = made.entry(zone.name.clone()).or_insert_with(|| {
        let today = zone.today();
        let first = today.checked_sub(jiff::Span::new().days(29)).unwrap_or(today);
        let name = zone.tz.iana_name().unwrap_or("UTC").to_string();
        let mut plan = generate::Plan::new(first, 30, &name);
        plan.until = Some(jiff::Timestamp::now().as_second());
        let mut xml = vec![];
        generate::write_xml(&plan, &mut xml).expect("writing to memory");
        let index = read::read_xml(std::io::Cursor::new(xml), "the built-in sample export").expect("the sample export reads");
        Arc::new(Ready { index, entry: None, read_at: jiff::Timestamp::now(), took: std::time::Duration::ZERO })
    });
    made.clone()
}

/// Where the export's path comes from: the environment (the extension's file picker sets it),
/// else the path saved by the settings app or the CLI.
pub struct FileCredential {
    env_path: Option<PathBuf>,
    home: crate::accounts::Home,
    sandbox_forced: bool,
    /// The tests' slower read (`VITALS_APPLE_HEALTH_TEST_READ_S`).
    stretch: Option<std::time::Duration>,
}

impl FileCredential {
    /// The file, and where its path came from.
    pub fn path(&self) -> Option<(PathBuf, String)> {
        if let Some(p) = &self.env_path {
            return Some((p.clone(), format!("the environment variable {}", catalog::FILE_ENV)));
        }
        crate::accounts::saved_file(&self.home, catalog::APPLE_HEALTH.name).map(|p| (p, "the path saved by vitals' settings".to_string()))
    }
}

impl CredentialSource for FileCredential {
    fn current(&self) -> Credential {
        let file = Some(Secret::new("file"));
        if self.sandbox_forced {
            return Credential { bearer: file, ..Credential::bare(CredentialKind::Sandbox, "VITALS_SANDBOX is set, so built-in sample data is used".into()) };
        }
        let Some((path, from)) = self.path() else {
            return Credential {
                bearer: file,
                ..Credential::bare(CredentialKind::Sandbox, "none: no Apple Health export is chosen, so built-in sample data is used".into())
            };
        };
        if !path.is_file() {
            let why = format!("the Apple Health export {} (from {from}) is not there: choose the file again", path.display());
            return Credential { problem: Some(why.clone()), ..Credential::bare(CredentialKind::None, format!("none: {why}")) };
        }
        let l = load(&path, self.stretch);
        let origin = match l.ready() {
            None => format!("the export {} (from {from}), being read: {} % so far", path.display(), l.percent()),
            Some(Err(e)) => e.to_string(),
            Some(Ok(r)) => describe(&path, &from, &r),
        };
        Credential { bearer: file, account: Some(l.version()), ..Credential::bare(CredentialKind::File, origin) }
    }
}

/// The file as `vitals_check` says it: its name, size, export date, and what was read when.
fn describe(path: &Path, from: &str, r: &Ready) -> String {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let c = &r.index.counts;
    format!(
        "the export {} (from {from}; {:.1} MB{}, exported {}): {} records read at {} in {:.1} s, {} duplicates and {} records ending before they start left out",
        path.display(),
        size as f64 / 1e6,
        r.entry.as_deref().map(|e| format!(", its XML {e}")).unwrap_or_default(),
        r.index.export_date.as_deref().unwrap_or("on an unknown date"),
        r.index.len(),
        r.read_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        r.took.as_secs_f64(),
        c.duplicates,
        c.backwards,
    )
}

pub struct AppleHealth {
    cred: FileCredential,
    api: Api,
}

/// The in-process API over the index (or the sample's).
struct Api {
    env_path: Option<PathBuf>,
    home: crate::accounts::Home,
    sandbox_forced: bool,
    stretch: Option<std::time::Duration>,
    priority: answer::Priority,
    /// The server's zone, the sample person's.
    zone: crate::time::Zone,
}

impl Api {
    fn cred(&self) -> FileCredential {
        FileCredential { env_path: self.env_path.clone(), home: self.home.clone(), sandbox_forced: self.sandbox_forced, stretch: self.stretch }
    }
    /// The index this request reads (a person's file, or the sample's when none is chosen), or
    /// why the chosen file cannot answer.
    fn index(&self) -> Result<Indexed, Unread> {
        let c = self.cred();
        match (c.current().kind, c.path()) {
            (CredentialKind::File, Some((path, _))) => match load(&path, self.stretch).ready() {
                Some(Ok(r)) => Ok(Indexed::File(r, path)),
                Some(Err(e)) => Err(Unread::Failed(e)),
                None => Err(Unread::Reading(path)),
            },
            _ => Ok(Indexed::Sample),
        }
    }
}

/// What a request to the file's API reads.
enum Indexed {
    /// The person's export, indexed, and where it is.
    File(Arc<Ready>, PathBuf),
    /// No file chosen: the sample person's export.
    Sample,
}

/// Why the chosen export cannot answer (said in the reply's `error`).
#[derive(Debug, thiserror::Error)]
enum Unread {
    #[error("{0}")]
    Failed(ReadError),
    #[error("the export {} is still being read", .0.display())]
    Reading(PathBuf),
}

fn reply(status: u16, body: String) -> crate::http::Reply {
    crate::http::Reply { status, retry_after: None, quota: None, body: Ok(body) }
}

impl SampleApi for Api {
    fn answer(&self, req: &Request) -> crate::http::Reply {
        let (path, params) = req.route();
        let collection = path.trim_start_matches('/');
        let prio = self.priority.clone();
        if let Some(problem) = prio.problem.clone().filter(|_| matches!(collection, "activity" | "sleep")) {
            return reply(200, json!({"error": problem}).to_string());
        }
        let only = params.get("type").cloned();
        let run = |ix: &Index| -> Value {
            if let Some(Err(e)) = only.as_deref().map(|t| answer::check_type(ix, t)) {
                return json!({"error": e.to_string()});
            }
            let offset: usize = params.get("offset").and_then(|o| o.parse().ok()).unwrap_or(0);
            let rows = if collection == "heart_rate" {
                let at = |k: &str| params.get(k).and_then(|v| v.parse::<jiff::Timestamp>().ok()).map(|t| t.as_second());
                match (at("from"), at("to")) {
                    (Some(f), Some(t)) => answer::heart_rate(ix, f, t),
                    _ => {
                        let last = ix.span().map(|s| s.1).unwrap_or(0);
                        answer::heart_rate(ix, last - 86_400, last + 1).into_iter().last().into_iter().collect()
                    }
                }
            } else {
                let day = |k: &str| params.get(k).and_then(|v| crate::time::parse_date(v)).map(answer::days_of);
                let (lo, hi) = (day("start").unwrap_or(0), day("end").unwrap_or(i64::MAX / 86_400 - 3));
                answer::rows(ix, collection, lo, hi, &prio, only.as_deref())
            };
            let next = (rows.len() > offset + answer::PAGE_ROWS).then(|| (offset + answer::PAGE_ROWS).to_string());
            let page: Vec<Value> = rows.into_iter().skip(offset).take(answer::PAGE_ROWS).collect();
            json!({"data": page, "next": next})
        };
        match self.index() {
            Ok(Indexed::File(r, _)) => reply(200, run(&r.index).to_string()),
            Ok(Indexed::Sample) => reply(200, run(&sample(&self.zone).index).to_string()),
            Err(e) => reply(200, json!({"error": e.to_string()}).to_string()),
        }
    }
    fn file(&self, req: &Request) -> (u16, Vec<u8>) {
        let (_, params) = req.route();
        let id = params.get("id").cloned().unwrap_or_default();
        let (ready, path) = match self.index() {
            Ok(Indexed::File(r, p)) => (Some(r), Some(p)),
            Ok(Indexed::Sample) => (None, None),
            Err(_) => return (404, vec![]),
        };
        let ready = ready.unwrap_or_else(|| sample(&self.zone));
        let ix = &ready.index;
        let Some(w) = ix.workouts.iter().find(|w| answer::workout_id(ix, w) == id) else { return (404, vec![]) };
        let Some(route) = w.routes.first() else { return (404, vec![]) };
        match path {
            None => (200, generate::route_gpx(w.start).into_bytes()),
            Some(p) => route_from(&p, route).map(|b| (200, b)).unwrap_or((404, vec![])),
        }
    }
}

/// A route's GPX read out of the zip (`/workout-routes/…` is relative to the export's folder).
fn route_from(zip_path: &Path, route: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::fs::File::open(zip_path).ok()?).ok()?;
    let want = route.trim_start_matches('/');
    let name = z.file_names().flatten().find(|n| n.ends_with(want))?.into_owned();
    let mut out = vec![];
    z.by_name(&name).ok()?.read_to_end(&mut out).ok()?;
    Some(out)
}

impl AppleHealth {
    pub fn in_home(config: &crate::config::Config, home: &crate::accounts::Home) -> AppleHealth {
        let env_path = config.var(catalog::FILE_ENV).filter(|_| home.reads_env_credentials()).map(expand);
        let sandbox_forced = config.flag("VITALS_SANDBOX");
        let priority = answer::Priority::from_config(config);
        if let Some(p) = &priority.problem {
            tracing::warn!("{p}");
        }
        let stretch = config.var(catalog::TEST_READ_ENV).and_then(|s| s.parse::<f64>().ok()).and_then(|s| std::time::Duration::try_from_secs_f64(s).ok());
        let api = Api { env_path: env_path.clone(), home: home.clone(), sandbox_forced, stretch, priority, zone: config.zone() };
        let cred = FileCredential { env_path, home: home.clone(), sandbox_forced, stretch };
        // The index starts building now, so the first question waits as little as it can.
        if let Some((path, _)) = cred.path().filter(|(p, _)| p.is_file() && !sandbox_forced) {
            load(&path, stretch);
        }
        AppleHealth { cred, api }
    }
}

/// A path as the person wrote it: `~/` is their home folder.
fn expand(p: &str) -> PathBuf {
    match p.strip_prefix("~/").zip(dirs::home_dir()) {
        Some((rest, home)) => home.join(rest),
        None => PathBuf::from(p),
    }
}

impl Provider for AppleHealth {
    fn spec(&self) -> &'static ProviderSpec {
        &catalog::APPLE_HEALTH
    }
    fn credential(&self) -> &dyn CredentialSource {
        &self.cred
    }
    fn read_request(&self, c: &CollectionSpec, w: &Window, _f: Option<&[String]>, next: Option<&str>, _cred: &Credential, o: &super::Options) -> Request {
        let mut p: Vec<(String, String)> = vec![];
        if let Some(t) = o.get("type").and_then(Value::as_str) {
            p.push(("type".into(), t.to_string()));
        }
        match w {
            Window::Dates { start, end } => {
                p.push(("start".into(), start.to_string()));
                p.push(("end".into(), end.to_string()));
            }
            Window::Instants { start, end } => {
                p.push(("from".into(), start.clone()));
                p.push(("to".into(), end.clone()));
            }
            _ => {}
        }
        if let Some(t) = next {
            p.push(("offset".into(), t.to_string()));
        }
        Request { method: ReadMethod::Get, url: format!("{BASE}/{}", c.path), params: p, headers: &[] }
    }
    fn parse_page(&self, _c: &CollectionSpec, body: &str, _at: &PageAt) -> Result<Page, PageError> {
        let v: Value = serde_json::from_str(body).map_err(|e| PageError::Transient(format!("the export's answer is not JSON ({e})")))?;
        if let Some(e) = v.get("error").and_then(Value::as_str) {
            return Err(PageError::Refused(e.to_string()));
        }
        let records = v.get("data").and_then(Value::as_array).cloned().unwrap_or_default();
        let next_token = v.get("next").and_then(Value::as_str).map(String::from);
        Ok(Page { records, next_token })
    }
    fn reading_notes(&self, c: &CollectionSpec, _zone: &crate::time::Zone) -> Vec<String> {
        let mut notes = vec![];
        if c.range == RangeKind::Date {
            notes.push(
                "Each record's day is read in its own offset: the zone the phone had when the export was made, or the zone the device \
                 recorded (HKTimeZone) where it did."
                    .to_string(),
            );
        }
        let prio = &self.api.priority;
        if c.name == "activity" {
            notes.push(prio.words(&answer::TYPE_WORDS[1..].iter().map(|(_, id)| *id).collect::<Vec<_>>()));
        }
        if c.name == "sleep" {
            notes.push(format!("Which night counts for a day (`counts`): {}", prio.words(&[answer::SLEEP])));
        }
        if let Some((what, percent)) = self.reading() {
            notes.push(format!(
                "{what} was still being read ({percent} % so far) when this answer was given: once it is read, the same question is answered from it."
            ));
        }
        if let Ok(Indexed::File(r, p)) = self.api.index() {
            if load(&p, self.cred.stretch).again {
                notes.push(format!(
                    "The export {} changed (its size or modification time) since this server first read it, and was read again at {}.",
                    p.display(),
                    r.read_at.strftime("%Y-%m-%d %H:%M:%S UTC")
                ));
            }
            let n = &r.index.counts;
            if n.duplicates + n.backwards > 0 {
                notes.push(format!(
                    "The export held {} exact duplicates and {} records ending before they start: left out of every answer.",
                    n.duplicates, n.backwards
                ));
            }
        }
        notes
    }
    fn auth_help(&self, _status: u16, cred: &Credential) -> String {
        cred.problem.clone().unwrap_or_else(|| {
            "Choose the Apple Health export: the file setting of the vitals extension, the settings app, or `vitals-mcp auth apple-health --file PATH`.".into()
        })
    }
    fn unavailable(&self, _c: &CollectionSpec, cred: &Credential) -> Option<String> {
        cred.problem.clone()
    }
    fn synthetic_notice(&self) -> String {
        "SAMPLE DATA: this is vitals' built-in sample of an Apple Health export (synthetic, generated in the export's own format, \
         no file read), not the user's own. No Apple Health export is chosen. Say so when you use it. To read the user's own data, \
         export it from the Health app and choose the file (the extension's settings, or `vitals-mcp auth apple-health --file PATH`)."
            .into()
    }
    fn empty_hint(&self, c: &CollectionSpec) -> Option<String> {
        Some(format!("The export holds no {} for these days: it has what the phone had when it was exported.", c.brief))
    }
    fn offline(&self) -> Option<&dyn SampleApi> {
        Some(&self.api)
    }
    fn local(&self, _cred: &Credential) -> Option<&dyn SampleApi> {
        Some(&self.api)
    }
    fn ready(&self) -> Option<super::BoxFuture<'_, ()>> {
        let (path, _) = self.cred.path().filter(|_| !self.cred.sandbox_forced)?;
        let l = load(&path, self.cred.stretch);
        l.ready().is_none().then(|| {
            let fut: super::BoxFuture<'_, ()> = Box::pin(async move {
                let mut said = 0;
                while l.ready().is_none() {
                    let pct = l.percent();
                    if pct >= said + 10 {
                        tracing::info!(percent = pct, "reading the Apple Health export");
                        said = pct;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
            });
            fut
        })
    }
    fn reading(&self) -> Option<(String, u32)> {
        let (path, _) = self.cred.path().filter(|(p, _)| !self.cred.sandbox_forced && p.is_file())?;
        let l = load(&path, self.cred.stretch);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        l.ready().is_none().then(|| (format!("the Apple Health export {name}"), l.percent() as u32))
    }
    fn file_request(&self, id: &str, _format: super::FileFormat, _cred: &Credential) -> Option<Request> {
        Some(Request { method: ReadMethod::Get, url: format!("{BASE}/route"), params: vec![("id".into(), id.to_string())], headers: &[] })
    }
}
