//! The token store: the OS keyring when it answers, else `<config dir>/vitals/tokens.json`, folder
//! 0700 and file 0600; one entry per provider. Refresh tokens rotate (the old one dies when the new one is used), so a refresh runs
//! under an exclusive cross-process lock, re-reads the file after taking it (another process may
//! have refreshed already), and replaces the file atomically (temporary file, then rename): two
//! processes refreshing at once never lose the login, and a crash never leaves half a file.
use super::vault::{Vault, VaultError};
use crate::config::Config;
use crate::secret::Secret;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One provider's tokens. Debug redacts (the fields are [`Secret`]s).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    pub access: Secret,
    pub refresh: Option<Secret>,
    /// Unix seconds.
    pub expires_at: Option<i64>,
    pub scopes: Vec<String>,
    /// Names one login (random, set when the account was connected, kept across refreshes): when it
    /// changes, the account may have changed, and the engine empties that provider's cache.
    pub login: Option<String>,
    /// Non-secret fields the provider sent with the tokens and its routes need (a user id).
    pub extra: BTreeMap<String, String>,
    /// The API key the access token is exchanged from, for a provider connected by key.
    pub key: Option<Secret>,
    /// When the key itself expires (Unix seconds), when the user said.
    pub key_expires_at: Option<i64>,
    /// A step after the login that has not succeeded yet (its name): run before the next read.
    pub setup_pending: Option<String>,
    /// How this credential arrived, in words (`the settings app`, `imported from ~/.garminconnect`).
    pub source: Option<String>,
}

impl Tokens {
    /// Tokens from a provider's grant; `login` is set by whoever saves a new login.
    pub fn from_grant(g: crate::connection::Grant) -> Tokens {
        Tokens { access: g.access, refresh: g.refresh, expires_at: g.expires_at, scopes: g.scopes, extra: g.extra, ..Default::default() }
    }
    /// The grant these tokens hold (what a provider's hook is given).
    pub fn grant(&self) -> crate::connection::Grant {
        crate::connection::Grant {
            access: self.access.clone(),
            refresh: self.refresh.clone(),
            expires_at: self.expires_at,
            scopes: self.scopes.clone(),
            extra: self.extra.clone(),
        }
    }
    /// Replace the grant, keeping what belongs to the connection (login, key, pending step, source).
    /// A provider that sends no new refresh token keeps the old one valid.
    pub fn renewed(&self, g: crate::connection::Grant) -> Tokens {
        let mut out = Tokens::from_grant(g);
        out.refresh = out.refresh.or_else(|| self.refresh.clone());
        for (k, v) in &self.extra {
            out.extra.entry(k.clone()).or_insert_with(|| v.clone());
        }
        out.login = self.login.clone();
        out.key = self.key.clone();
        out.key_expires_at = self.key_expires_at;
        out.setup_pending = self.setup_pending.clone();
        out.source = self.source.clone();
        out
    }
}

/// The stored shape. Private: the only place a secret is turned into text for the store.
#[derive(Clone, Serialize, Deserialize)]
struct OnDisk {
    access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<i64>,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    login: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    extra: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    api_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_expires_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    setup_pending: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

impl From<&Tokens> for OnDisk {
    fn from(t: &Tokens) -> OnDisk {
        OnDisk {
            access_token: t.access.expose().to_string(),
            refresh_token: t.refresh.as_ref().map(|r| r.expose().to_string()),
            expires_at: t.expires_at,
            scopes: t.scopes.clone(),
            login: t.login.clone(),
            extra: t.extra.clone(),
            api_key: t.key.as_ref().map(|k| k.expose().to_string()),
            key_expires_at: t.key_expires_at,
            setup_pending: t.setup_pending.clone(),
            source: t.source.clone(),
        }
    }
}

impl From<OnDisk> for Tokens {
    fn from(d: OnDisk) -> Tokens {
        Tokens {
            access: Secret::new(d.access_token),
            refresh: d.refresh_token.map(Secret::new),
            expires_at: d.expires_at,
            scopes: d.scopes,
            login: d.login,
            extra: d.extra,
            key: d.api_key.map(Secret::new),
            key_expires_at: d.key_expires_at,
            setup_pending: d.setup_pending,
            source: d.source,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path} could not be {action}: {reason}; {hint}")]
    Io { path: PathBuf, action: &'static str, reason: String, hint: &'static str },
    #[error("the token file {0} is not valid JSON (cut short or edited), so no login in it can be trusted; move it aside and connect again")]
    Corrupt(PathBuf),
    /// What the refresh callback returned (already free of secrets: it comes from our own errors).
    #[error("{0}")]
    Refresh(crate::provider::RenewError),
    #[error("the OS keyring failed: {0}; set VITALS_TOKEN_STORE=file to keep tokens in the 0600 file instead")]
    Keyring(String),
    #[error("{0}")]
    Config(String),
    /// No folder to keep the token file in (no home folder, no `VITALS_CONFIG_DIR`).
    #[error("this machine has no configuration folder; set VITALS_CONFIG_DIR")]
    NoFolder,
    /// The login was renewed but could not be saved: `fresh` is the renewed pair, which this
    /// process may keep using in memory (the provider may have retired the saved one).
    #[error("{why}")]
    Unsaved { why: String, fresh: Box<Tokens> },
    /// A sealed file of a hosted tenant that could not be opened (no key, another key, damaged).
    #[error(transparent)]
    Vault(#[from] VaultError),
}

impl StoreError {
    /// A vault error as it is (it names no path), any other as `self`.
    pub(crate) fn or_vault(self, e: StoreError) -> StoreError {
        match e {
            StoreError::Vault(v) => StoreError::Vault(v),
            _ => self,
        }
    }

    /// The same error with `path` named as `shown` (a tenant's files are named without their folder,
    /// whose name must not reach a tool answer).
    fn shown_as(self, shown: Option<&str>) -> StoreError {
        let Some(label) = shown else { return self };
        let rename = |p: PathBuf| PathBuf::from(format!("{label} ({})", p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default()));
        match self {
            StoreError::Io { path, action, reason, hint } => StoreError::Io { path: rename(path), action, reason, hint },
            StoreError::Corrupt(path) => StoreError::Corrupt(rename(path)),
            other => other,
        }
    }
}

fn io(path: &Path, action: &'static str, e: std::io::Error) -> StoreError {
    use std::io::ErrorKind as K;
    let hint = match e.kind() {
        K::StorageFull | K::QuotaExceeded | K::FileTooLarge => "free some space on that disk; the login saved before is unchanged",
        K::IsADirectory => "a folder stands where the file should be; move it away",
        K::NotADirectory => "a file stands where a folder should be; move it away or set VITALS_CONFIG_DIR to another folder",
        K::PermissionDenied | K::ReadOnlyFilesystem => "this user cannot write there; fix its permissions or set VITALS_CONFIG_DIR to a folder it can write",
        _ => "check that folder, or set VITALS_CONFIG_DIR to another one",
    };
    StoreError::Io { path: path.to_path_buf(), action, reason: e.kind().to_string(), hint }
}

/// Where the token file lives: `VITALS_CONFIG_DIR` of the server's settings if set (tests,
/// portable installs), else the platform's configuration folder joined with `vitals`.
pub fn default_dir(config: &Config) -> Option<PathBuf> {
    match config.var("VITALS_CONFIG_DIR") {
        Some(d) => Some(PathBuf::from(d)),
        None => dirs::config_dir().map(|d| d.join("vitals")),
    }
}

/// This machine's token store (keyring or file), in the default folder of `config`.
pub fn token_store(config: &Config) -> Result<TokenStore, StoreError> {
    let dir = default_dir(config).ok_or(StoreError::NoFolder)?;
    TokenStore::open(dir, config)
}

/// Read a JSON map file; a missing file is an empty map.
pub fn read_json<T: serde::de::DeserializeOwned + Default>(path: &Path) -> Result<T, StoreError> {
    read_json_sealed(path, None, "")
}

/// Read a JSON file that may be sealed (a hosted tenant's secrets): opened with `vault`, or refused
/// with what to do when there is no key; `what` names it in that error. A plain file is read as it
/// is (one written before its tenants were sealed: the next write seals it).
pub fn read_json_sealed<T: serde::de::DeserializeOwned + Default>(path: &Path, vault: Option<&Vault>, what: &str) -> Result<T, StoreError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(T::default()),
        Err(e) => return Err(io(path, "read", e)),
    };
    let plain = match (super::vault::is_sealed(&bytes), vault) {
        (false, _) => zeroize::Zeroizing::new(bytes),
        (true, Some(v)) => v.open(&bytes, &super::vault::aad_for(path), what)?,
        (true, None) => return Err(VaultError::Locked(what.to_string()).into()),
    };
    serde_json::from_slice(&plain).map_err(|_| StoreError::Corrupt(path.to_path_buf()))
}

/// Make `dir` (0700), then replace `path` atomically: a sibling temporary file, created 0600,
/// synced, renamed over. A crash leaves the old file or the new one, never half of one.
pub fn write_json_private<T: Serialize>(dir: &Path, path: &Path, value: &T) -> Result<(), StoreError> {
    write_json_sealed(dir, path, value, None)
}

/// As [`write_json_private`], sealed under `vault` when there is one (bound to the file's tenant
/// folder and name).
pub fn write_json_sealed<T: Serialize>(dir: &Path, path: &Path, value: &T, vault: Option<&Vault>) -> Result<(), StoreError> {
    let plain = zeroize::Zeroizing::new(serde_json::to_vec_pretty(value).expect("credentials serialise"));
    let body = match vault {
        Some(v) => v.seal(&plain, &super::vault::aad_for(path)),
        None => plain.to_vec(),
    };
    write_private(dir, path, &body)
}

/// Replace `path` with `body` atomically, `dir` made 0700 and the file 0600.
pub fn write_private(dir: &Path, path: &Path, body: &[u8]) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, "created", e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| io(dir, "restricted to 0700", e))?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp).map_err(|e| io(&tmp, "created", e))?;
    let written = fail_write_for_test().map_or_else(|| f.write_all(body).and_then(|_| f.sync_all()), Err);
    if let Err(e) = written.map_err(|e| io(&tmp, "written", e)).and_then(|_| std::fs::rename(&tmp, path).map_err(|e| io(path, "replaced", e))) {
        // The old file stays whole; the half-written copy goes.
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// A write error the next private write meets (a full disk), for this thread's tests.
    static FAIL_WRITE: std::cell::Cell<Option<std::io::ErrorKind>> = const { std::cell::Cell::new(None) };
}

fn fail_write_for_test() -> Option<std::io::Error> {
    #[cfg(test)]
    return FAIL_WRITE.with(|f| f.take()).map(std::io::Error::from);
    #[cfg(not(test))]
    None
}

/// What [`repair_mode`] fixed in this process, said by `vitals_check` (`token_store`).
static REPAIRED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The permissions this process found too open on the token file or its folder and closed, in words.
pub fn repairs() -> Vec<String> {
    REPAIRED.lock().map(|r| r.clone()).unwrap_or_default()
}

/// Close a token file or folder that others can read (a copy, a backup restore, an editor) back to
/// `mode`, and say so: in the log now, in `vitals_check` after. Missing is fine (nothing saved yet).
fn repair_mode(path: &Path, mode: u32, record: bool) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::metadata(path) else { return };
        let had = meta.permissions().mode() & 0o777;
        if had & 0o077 == 0 {
            return;
        }
        let said = match std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)) {
            Ok(()) => format!("{} was open to other users (mode {had:04o}); vitals set it to {mode:04o}", path.display()),
            Err(e) => format!("{} is open to other users (mode {had:04o}) and could not be set to {mode:04o}: {}", path.display(), e.kind()),
        };
        tracing::warn!("{said}");
        if let (Ok(mut r), true) = (REPAIRED.lock(), record) {
            if !r.contains(&said) {
                r.push(said);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode, record);
}

/// Which store holds the tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The OS credential store (macOS Keychain, Windows Credential Manager, Secret Service).
    Keyring,
    /// `tokens.json`, 0600 in a 0700 folder.
    File,
}

/// The keyring's service name; the account name is the provider.
pub const KEYRING_SERVICE: &str = "vitals";

/// The variable that picks the token store: `keyring`, `file`, or unset (the keyring when it answers).
pub const STORE_ENV: &str = "VITALS_TOKEN_STORE";

/// Does the OS keyring answer here? Asked once per process: on a machine without a desktop session
/// the Secret Service cannot even be reached, and that is not going to change while we run.
fn keyring_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| match keyring::Entry::new(KEYRING_SERVICE, "vitals-probe").and_then(|e| e.get_password()) {
        Ok(_) | Err(keyring::Error::NoEntry) => true,
        Err(e) => {
            tracing::debug!("the OS keyring is not usable here ({e}); tokens go to the 0600 file");
            false
        }
    })
}

/// The token store: one entry per provider, in the OS keyring when it works, else in the file.
/// Either way the lock is a file (`tokens.lock`) in the config folder, shared by every process.
#[derive(Clone)]
pub struct TokenStore {
    dir: PathBuf,
    backend: Backend,
    /// Where keyring entries are built: the OS keyring (`None`), or another store behind
    /// keyring's own API (the tests' keyring that answers, then fails).
    keyring: Option<std::sync::Arc<keyring::CredentialBuilder>>,
    /// A hosted tenant's key: the file is sealed under it ([`super::vault`]).
    vault: Option<std::sync::Arc<Vault>>,
    /// How errors name the file: a tenant's folder name must not reach a tool answer.
    shown: Option<&'static str>,
}

/// How a tenant's token file is named in errors and in `vitals_check`.
pub const TENANT_FILE: &str = "this person's own token file on the server";

impl TokenStore {
    /// The store this machine should use: `VITALS_TOKEN_STORE` of `config` if set, else the
    /// keyring when it answers.
    pub fn open(dir: impl Into<PathBuf>, config: &Config) -> Result<TokenStore, StoreError> {
        let backend = match config.var(STORE_ENV).map(|v| v.to_ascii_lowercase()).as_deref() {
            None | Some("auto") => {
                if keyring_works() {
                    Backend::Keyring
                } else {
                    Backend::File
                }
            }
            Some("keyring") => Backend::Keyring,
            Some("file") => Backend::File,
            Some(other) => {
                return Err(StoreError::Config(format!("{STORE_ENV}={other:?} is not a token store; set it to keyring, file or auto (or unset it)")))
            }
        };
        Ok(TokenStore { dir: dir.into(), backend, keyring: None, vault: None, shown: None })
    }

    /// The file store in `dir`, whatever the keyring does (tests, and the fallback itself).
    pub fn file(dir: impl Into<PathBuf>) -> TokenStore {
        TokenStore { dir: dir.into(), backend: Backend::File, keyring: None, vault: None, shown: None }
    }

    /// A hosted tenant's file store in `dir`: sealed under `vault` when there is one, and named
    /// in errors without its folder.
    pub fn tenant(dir: impl Into<PathBuf>, vault: Option<std::sync::Arc<Vault>>) -> TokenStore {
        TokenStore { vault, shown: Some(TENANT_FILE), ..TokenStore::file(dir) }
    }

    /// The keyring store in `dir`, its entries built by `builder` instead of the OS keyring.
    #[cfg(test)]
    pub(crate) fn keyring_of(dir: impl Into<PathBuf>, builder: Box<keyring::CredentialBuilder>) -> TokenStore {
        TokenStore { dir: dir.into(), backend: Backend::Keyring, keyring: Some(builder.into()), vault: None, shown: None }
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where the tokens are, in words (for vitals_check and the CLI).
    pub fn describe(&self) -> String {
        if let Some(shown) = self.shown {
            return shown.to_string();
        }
        match self.backend {
            Backend::Keyring => format!("OS keyring (service {KEYRING_SERVICE:?}, one entry per provider; lock in {})", self.dir.display()),
            Backend::File => format!("file {}", self.path().display()),
        }
    }

    /// The token file (used by the file backend; the keyring backend reads it only to migrate).
    pub fn path(&self) -> PathBuf {
        self.dir.join("tokens.json")
    }

    fn read_file(&self) -> Result<BTreeMap<String, OnDisk>, StoreError> {
        let path = self.path();
        if path.is_file() {
            // A tenant's repair is logged, not said in vitals_check: that list is this process's,
            // and one person's answer must not speak of another's files.
            let said = self.shown.is_none();
            repair_mode(&self.dir, 0o700, said);
            repair_mode(&path, 0o600, said);
        }
        read_json_sealed(&path, self.vault.as_deref(), self.shown.unwrap_or("the token file")).map_err(|e| e.shown_as(self.shown))
    }

    fn entry(&self, provider: &str) -> Result<keyring::Entry, StoreError> {
        let entry = match &self.keyring {
            None => keyring::Entry::new(KEYRING_SERVICE, provider),
            Some(b) => b.build(None, KEYRING_SERVICE, provider).map(keyring::Entry::new_with_credential),
        };
        entry.map_err(|e| StoreError::Keyring(e.to_string()))
    }

    fn get(&self, provider: &str) -> Result<Option<OnDisk>, StoreError> {
        if self.backend == Backend::Keyring {
            match self.entry(provider)?.get_password() {
                Ok(s) => {
                    return serde_json::from_str(&s)
                        .map(Some)
                        .map_err(|_| StoreError::Keyring(format!("the keyring entry {provider:?} is not valid; connect again")))
                }
                Err(keyring::Error::NoEntry) => {}
                Err(e) => return Err(StoreError::Keyring(e.to_string())),
            }
        }
        // The file: the file backend's home, and where tokens saved before the keyring worked still are.
        Ok(self.read_file()?.remove(provider))
    }

    /// Write (or with `None`, delete) one provider's entry. Callers hold the lock.
    fn write_entry(&self, provider: &str, value: Option<&OnDisk>) -> Result<(), StoreError> {
        if self.backend == Backend::Keyring {
            let e = self.entry(provider)?;
            match value {
                Some(v) => e.set_password(&serde_json::to_string(v).expect("credentials serialise")).map_err(|e| StoreError::Keyring(e.to_string()))?,
                None => match e.delete_credential() {
                    Ok(()) | Err(keyring::Error::NoEntry) => {}
                    Err(e) => return Err(StoreError::Keyring(e.to_string())),
                },
            }
        }
        // The file keeps the file backend's entries; with the keyring, a copy there is migrated away.
        let mut all = self.read_file()?;
        let changed = match value.filter(|_| self.backend == Backend::File) {
            Some(v) => {
                all.insert(provider.to_string(), v.clone());
                true
            }
            None => all.remove(provider).is_some(),
        };
        if changed {
            write_json_sealed(&self.dir, &self.path(), &all, self.vault.as_deref()).map_err(|e| e.shown_as(self.shown))
        } else {
            Ok(())
        }
    }

    pub fn load(&self, provider: &str) -> Result<Option<Tokens>, StoreError> {
        Ok(self.get(provider)?.map(Tokens::from))
    }

    /// Save one provider's tokens (under the lock, so a concurrent refresh is not overwritten).
    pub fn save(&self, provider: &str, t: &Tokens) -> Result<(), StoreError> {
        self.locked(|| self.write_entry(provider, Some(&t.into())))
    }

    /// Delete one provider's tokens. Returns what was there.
    pub fn remove(&self, provider: &str) -> Result<Option<Tokens>, StoreError> {
        self.locked(|| {
            let had = self.get(provider)?;
            if had.is_some() {
                self.write_entry(provider, None)?;
            }
            Ok(had.map(Tokens::from))
        })
    }

    /// Refresh under the lock. `seen` is the token the caller found stale: if the store now holds
    /// another one, some other process refreshed first and that one is returned without calling
    /// `refresh` (whose refresh token would already be dead). Otherwise `refresh` runs and its
    /// result is saved before it is returned, so the rotated pair is never only in memory.
    pub fn refresh_with(
        &self,
        provider: &str,
        seen: &Tokens,
        refresh: impl FnOnce(&Tokens) -> Result<Tokens, crate::provider::RenewError>,
    ) -> Result<Tokens, StoreError> {
        self.locked(|| {
            let current: Option<Tokens> = self.get(provider)?.map(Tokens::from);
            let base = match current {
                Some(c) if c != *seen => return Ok(c),
                Some(c) => c,
                None => seen.clone(),
            };
            let mut fresh = refresh(&base).map_err(StoreError::Refresh)?;
            // The same login, so the same account: the engine keeps its cache.
            fresh.login = base.login.clone();
            match self.write_entry(provider, Some(&(&fresh).into())) {
                Ok(()) => Ok(fresh),
                // The provider has already retired the old refresh token if it rotates them: the
                // saved login may not work again, and saying "unchanged" would be a lie.
                Err(e) => Err(StoreError::Unsaved {
                    why: format!(
                        "the login was renewed but the renewed tokens could not be saved ({e}). If the provider rotates \
                         refresh tokens, the saved login no longer works: after fixing that, connect again (vitals-mcp auth {provider})"
                    ),
                    fresh: Box::new(fresh),
                }),
            }
        })
    }

    /// Run `f` holding an exclusive lock on `tokens.lock`, shared by every process using this folder.
    fn locked<T>(&self, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        let hide = |e: StoreError| e.shown_as(self.shown);
        std::fs::create_dir_all(&self.dir).map_err(|e| hide(io(&self.dir, "created", e)))?;
        let path = self.dir.join("tokens.lock");
        let lock = File::options().create(true).truncate(false).write(true).open(&path).map_err(|e| hide(io(&path, "opened", e)))?;
        lock.lock().map_err(|e| hide(io(&path, "locked", e)))?;
        let out = f();
        let _ = lock.unlock();
        out
    }
}

#[cfg(test)]
mod keyring_faults;

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn tokens(a: &str, r: &str) -> Tokens {
        Tokens {
            access: Secret::new(a),
            refresh: Some(Secret::new(r)),
            expires_at: Some(1_800_000_000),
            scopes: vec!["daily".into()],
            login: Some("L1".into()),
            ..Default::default()
        }
    }

    pub(super) fn temp() -> PathBuf {
        let d = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp")).join(format!(
            "vitals-store-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d.join("vitals")
    }

    #[test]
    fn saves_loads_and_deletes_with_private_permissions() {
        let dir = temp();
        let s = TokenStore::file(&dir);
        assert_eq!(s.load("oura").unwrap(), None);
        s.save("oura", &tokens("A1", "R1")).unwrap();
        assert_eq!(s.load("oura").unwrap(), Some(tokens("A1", "R1")));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
            assert_eq!(std::fs::metadata(s.path()).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(s.remove("oura").unwrap(), Some(tokens("A1", "R1")));
        assert_eq!(s.remove("oura").unwrap(), None);
        assert_eq!(s.load("oura").unwrap(), None);
        assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")), "no temporary file left");
    }

    #[test]
    fn a_refresh_another_process_already_did_is_adopted_not_repeated() {
        let s = TokenStore::file(temp());
        let stale = tokens("A1", "R1");
        s.save("oura", &stale).unwrap();
        let first = s.refresh_with("oura", &stale, |t| {
            assert_eq!(t.refresh.as_ref().unwrap().expose(), "R1");
            Ok(tokens("A2", "R2"))
        });
        assert_eq!(first.unwrap(), tokens("A2", "R2"));
        // A second caller that also saw A1 must not spend R1 again.
        let second = s.refresh_with("oura", &stale, |_| panic!("R1 is dead: refreshing again would lose the login"));
        assert_eq!(second.unwrap(), tokens("A2", "R2"));
    }

    #[test]
    fn a_failed_refresh_keeps_the_stored_tokens() {
        let s = TokenStore::file(temp());
        let t = tokens("A1", "R1");
        s.save("oura", &t).unwrap();
        let e = s.refresh_with("oura", &t, |_| Err("the provider said invalid_grant".into())).unwrap_err();
        assert!(e.to_string().contains("invalid_grant"));
        assert_eq!(s.load("oura").unwrap(), Some(t));
    }

    #[test]
    fn a_full_disk_at_rotation_leaves_the_old_file_whole_and_says_connect_again() {
        let s = TokenStore::file(temp());
        let t = tokens("A1", "R1");
        s.save("withings", &t).unwrap();
        let before = std::fs::read(s.path()).unwrap();
        FAIL_WRITE.with(|f| f.set(Some(std::io::ErrorKind::StorageFull)));
        let e = s.refresh_with("withings", &t, |_| Ok(tokens("A2-SECRET", "R2-SECRET"))).unwrap_err();
        let StoreError::Unsaved { fresh, .. } = &e else { panic!("{e}") };
        assert_eq!(fresh.access.expose(), "A2-SECRET", "the renewed pair comes back, for the process to keep in memory");
        let e = e.to_string();
        assert!(e.contains("could not be saved") && e.contains("free some space") && e.contains("vitals-mcp auth withings"), "{e}");
        assert!(!e.contains("SECRET"), "{e}");
        assert_eq!(std::fs::read(s.path()).unwrap(), before, "the old file is whole");
        let left: Vec<_> = std::fs::read_dir(s.path().parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(!left.iter().any(|n| n.to_string_lossy().ends_with(".tmp")), "no half-written copy is left: {left:?}");
    }

    #[test]
    fn damaged_token_files_are_errors_that_say_what_to_do() {
        let s = TokenStore::file(temp());
        std::fs::create_dir_all(s.path().parent().unwrap()).unwrap();
        let whole = r#"{"oura": {"access_token": "A-SECRET", "refresh_token": "R-SECRET"}}"#;
        for (what, body) in [("cut short", &whole[..whole.len() / 2]), ("not JSON", "<html>"), ("empty", "")] {
            std::fs::write(s.path(), body).unwrap();
            let e = s.load("oura").unwrap_err().to_string();
            assert!(e.contains("not valid JSON") && e.contains("connect again") && !e.contains("SECRET"), "{what}: {e}");
        }
        std::fs::remove_file(s.path()).unwrap();
        std::fs::create_dir(s.path()).unwrap();
        let e = s.load("oura").unwrap_err().to_string();
        assert!(e.contains("a folder stands where the file should be"), "{e}");
        let e = s.save("oura", &tokens("A", "R")).unwrap_err().to_string();
        assert!(e.contains("a folder stands where the file should be"), "{e}");
    }

    #[test]
    fn a_config_folder_that_cannot_be_written_is_said_with_the_way_out() {
        // A file where the folder should be: refused whoever runs the test (root ignores modes).
        let base = temp();
        std::fs::create_dir_all(base.parent().unwrap()).unwrap();
        std::fs::write(&base, "not a folder").unwrap();
        let s = TokenStore::file(base.join("inner"));
        let e = s.save("oura", &tokens("A", "R")).unwrap_err().to_string();
        assert!(e.contains("a file stands where a folder should be") && e.contains("VITALS_CONFIG_DIR"), "{e}");
        let e = s.load("oura").unwrap_err().to_string();
        assert!(e.contains("a file stands where a folder should be"), "reading says the same: {e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_open_to_others_is_closed_to_0600_and_said() {
        use std::os::unix::fs::PermissionsExt;
        let s = TokenStore::file(temp());
        s.save("oura", &tokens("A", "R")).unwrap();
        std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(s.path().parent().unwrap(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(s.load("oura").unwrap().is_some());
        assert_eq!(std::fs::metadata(s.path()).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(s.path().parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        let said = repairs().join("\n");
        assert!(said.contains(&format!("{} was open to other users (mode 0644); vitals set it to 0600", s.path().display())), "{said}");
    }

    #[test]
    fn debug_of_tokens_shows_no_secret() {
        let t = tokens("ACCESS-SECRET-1", "REFRESH-SECRET-1");
        let t = Tokens { key: Some(Secret::new("KEY-SECRET-1")), ..t };
        let d = format!("{t:?}");
        assert!(!d.contains("ACCESS-SECRET") && !d.contains("REFRESH-SECRET") && !d.contains("KEY-SECRET"), "{d}");
    }
}
