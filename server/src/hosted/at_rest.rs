//! The tenants folder at rest: what `serve` settles before it answers anyone, and the key's rotation.
//!
//! - [`settle`]: a rotation a crash interrupted is finished or undone; tenants of the older format
//!   (whose folder name was their connector URL's secret) get a new id, their URL kept as a hash;
//!   secrets written before they were sealed are sealed; and every sealed file is checked to open
//!   under the key given, so a wrong key stops the server at start with the key id it needs.
//! - [`rotate`]: every sealed file re-sealed under a new key, old or new and never a mix: the new
//!   copies are written beside the old (`*.next`), then a journal naming them is written (the
//!   commit), then they replace the old ones, then the journal goes. A crash before the journal
//!   leaves the old files (the copies are removed at the next start); after it, the next start
//!   finishes the renames.
//! - [`Serving`]: `serve` holds the folder's lock shared, a rotation holds it alone, so no key is
//!   rotated under a running server that would go on writing with the old one.
use super::hashed::{SIGN_IN, URL};
use super::tenants::{private_file, FolderError, TenantId, Tenants, FORMAT_FILE};
use crate::accounts::store::write_private;
use crate::accounts::vault::{aad_for, is_sealed, sealed_by, Vault, VaultError};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The files of a tenant that hold secrets, sealed.
pub const SEALED: [&str; 2] = ["tokens.json", "settings.json"];
/// A rotation's journal, at the folder's top: the commit point.
const JOURNAL: &str = ".rotation.json";
/// The folder's lock: shared by every server serving it, alone for a rotation.
const LOCK: &str = ".serving.lock";
/// What a new copy waiting for the commit is called beside its file.
const NEXT: &str = "next";

/// What [`settle`] did, said at start.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Tenants of the older format given a new id: (old, new). Their grants follow them.
    pub renamed: Vec<(TenantId, TenantId)>,
    /// Files sealed now that were written plain.
    pub sealed: usize,
    /// A rotation finished (true) or undone (false) after a crash.
    pub recovered: Option<bool>,
}

impl Settled {
    /// In words, for the server's log (no id, no secret).
    pub fn said(&self) -> Vec<String> {
        let mut out = vec![];
        match self.recovered {
            Some(true) => out.push("a key rotation interrupted after its commit was finished: every secret is sealed under the new key".into()),
            Some(false) => out.push("a key rotation interrupted before its commit was undone: every secret is sealed under the old key".into()),
            None => {}
        }
        if !self.renamed.is_empty() {
            out.push(format!(
                "{} tenant(s) of the older format got an internal id apart from their connector URL, whose secret is now kept as a hash only (their URLs are unchanged)",
                self.renamed.len()
            ));
        }
        if self.sealed > 0 {
            out.push(format!("{} file(s) of secrets written before they were sealed are sealed now", self.sealed));
        }
        out
    }
}

/// The folder's lock, held while `serve` runs.
pub struct Serving(#[allow(dead_code)] File);

impl Serving {
    /// Take it shared: several servers may serve one folder; a rotation may not run beside them.
    pub fn take(t: &Tenants) -> Result<Serving, FolderError> {
        let f = lock_file(t)?;
        match f.try_lock_shared() {
            Ok(()) => Ok(Serving(f)),
            Err(_) => Err(FolderError::Busy(format!(
                "the tenants folder {} is being re-sealed by `vitals-mcp tenant rotate-key`; start the server when it is done",
                t.dir.display()
            ))),
        }
    }
}

fn lock_file(t: &Tenants) -> Result<File, FolderError> {
    super::tenants::private_dir(&t.dir)?;
    let path = t.dir.join(LOCK);
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| FolderError::Io(format!("{} could not be opened ({})", path.display(), e.kind())))
}

/// Every sealed file of every tenant that exists now.
fn secret_files(t: &Tenants) -> Result<Vec<PathBuf>, FolderError> {
    Ok(t.list()?.iter().flat_map(|id| SEALED.iter().map(move |f| t.dir.join(id.as_str()).join(f))).filter(|p| p.is_file()).collect())
}

fn next_of(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(format!(".{NEXT}"));
    PathBuf::from(s)
}

fn read(p: &Path) -> Result<Vec<u8>, FolderError> {
    std::fs::read(p).map_err(|e| FolderError::Io(format!("{} cannot be read ({})", p.display(), e.kind())))
}

/// How a file is named in errors: its tenant folder and name (the folder's name opens nothing).
fn shown(p: &Path) -> String {
    p.display().to_string()
}

/// Bring the folder to a state a server can serve with `vault`; see the module's doc.
pub fn settle(t: &Tenants, vault: &Vault) -> Result<Settled, FolderError> {
    let mut done = Settled { recovered: recover(t)?, ..Default::default() };
    if !t.current_format() {
        done.renamed = separate_urls(t)?;
        private_file(&t.dir.join(FORMAT_FILE), b"2\n").or_else(|e| if t.current_format() { Ok(()) } else { Err(e) })?;
    }
    for p in secret_files(t)? {
        let bytes = read(&p)?;
        match sealed_by(&bytes) {
            Some(id) if id == vault.id() => {}
            Some(id) => return Err(VaultError::WrongKey { what: shown(&p), needs: id, given: vault.id().into() }.into()),
            None => {
                let dir = p.parent().expect("a tenant's file has a folder");
                write_private(dir, &p, &vault.seal(&zeroize::Zeroizing::new(bytes), &aad_for(&p)))?;
                done.sealed += 1;
            }
        }
    }
    Ok(done)
}

/// Tenants of the older format, whose folder's name was their connector URL's secret: each gets a
/// new id (its folder renamed), its URL's secret is kept as a hash, and its sign-in key follows.
fn separate_urls(t: &Tenants) -> Result<Vec<(TenantId, TenantId)>, FolderError> {
    let mut renamed = vec![];
    for old in t.list()? {
        if URL.has(t, &old) {
            continue;
        }
        let new = TenantId::random();
        std::fs::rename(t.dir.join(old.as_str()), t.dir.join(new.as_str()))
            .map_err(|e| FolderError::Io(format!("a tenant's folder could not be renamed ({})", e.kind())))?;
        URL.set(t, &new, old.as_str())?;
        SIGN_IN.rename(t, &old, &new)?;
        renamed.push((old, new));
    }
    Ok(renamed)
}

/// A rotation a crash interrupted: finished when its journal was written, else undone.
fn recover(t: &Tenants) -> Result<Option<bool>, FolderError> {
    let journal = t.dir.join(JOURNAL);
    if journal.is_file() {
        let files: Vec<PathBuf> =
            serde_json::from_slice::<Vec<PathBuf>>(&read(&journal)?).map_err(|_| FolderError::Damaged(format!("{} is damaged", journal.display())))?;
        for f in files {
            let next = next_of(&f);
            if next.is_file() {
                std::fs::rename(&next, &f).map_err(|e| FolderError::Io(format!("{} could not be replaced ({})", f.display(), e.kind())))?;
            }
        }
        std::fs::remove_file(&journal).map_err(|e| FolderError::Io(format!("{} could not be removed ({})", journal.display(), e.kind())))?;
        return Ok(Some(true));
    }
    let mut undone = false;
    for id in t.list()? {
        for f in SEALED {
            let next = next_of(&t.dir.join(id.as_str()).join(f));
            if next.is_file() {
                std::fs::remove_file(&next).map_err(|e| FolderError::Io(format!("{} could not be removed ({})", next.display(), e.kind())))?;
                undone = true;
            }
        }
    }
    Ok(undone.then_some(false))
}

/// Where a rotation may be stopped in tests, to show a crash there leaves old or new.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// After this many new copies were written, before the journal.
    Copies(usize),
    /// After the journal, before this many renames.
    Renames(usize),
}

/// Re-seal every secret of the folder under `new` (see the module's doc). Needs the folder alone
/// (no server running on it) and `old` to open every file. Says what it did.
pub fn rotate(t: &Tenants, old: &Vault, new: &Vault) -> Result<String, FolderError> {
    rotate_until(t, old, new, None)
}

pub fn rotate_until(t: &Tenants, old: &Vault, new: &Vault, crash: Option<Step>) -> Result<String, FolderError> {
    if old == new {
        return Err(FolderError::Input("the new key is the key in use: make a new one (`vitals-mcp tenant new-key FILE`)".into()));
    }
    let lock = lock_file(t)?;
    lock.try_lock().map_err(|_| {
        FolderError::Busy(format!("a server is serving {}: stop it first (it would go on sealing with the old key), then rotate", t.dir.display()))
    })?;
    recover(t)?;
    let files = secret_files(t)?;
    for (n, p) in files.iter().enumerate() {
        if crash == Some(Step::Copies(n)) {
            return Err(FolderError::Io("stopped (test)".into()));
        }
        let bytes = read(p)?;
        let plain = if is_sealed(&bytes) { old.open(&bytes, &aad_for(p), &shown(p))? } else { zeroize::Zeroizing::new(bytes) };
        let dir = p.parent().expect("a tenant's file has a folder");
        write_private(dir, &next_of(p), &new.seal(&plain, &aad_for(p)))?;
    }
    let journal = serde_json::to_vec(&files).expect("paths serialise");
    write_private(&t.dir, &t.dir.join(JOURNAL), &journal)?;
    for (n, p) in files.iter().enumerate() {
        if crash == Some(Step::Renames(n)) {
            return Err(FolderError::Io("stopped (test)".into()));
        }
        std::fs::rename(next_of(p), p).map_err(|e| FolderError::Io(format!("{} could not be replaced ({})", p.display(), e.kind())))?;
    }
    std::fs::remove_file(t.dir.join(JOURNAL)).map_err(|e| FolderError::Io(format!("the journal could not be removed ({})", e.kind())))?;
    let _ = lock.unlock();
    Ok(format!(
        "Re-sealed {} file(s) of {} tenant(s) under key {} (was {}). Start the server with the new key; the old one opens nothing now: destroy it.",
        files.len(),
        t.list()?.len(),
        new.id(),
        old.id()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::Tokens;
    use crate::secret::Secret;
    use std::sync::Arc;

    fn folder(name: &str) -> PathBuf {
        let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/at-rest")).join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn with_tokens(t: &Tenants, n: usize) -> Vec<TenantId> {
        (0..n)
            .map(|i| {
                let id = t.add().unwrap();
                let store = t.home(&id).unwrap().store().unwrap();
                store.save("oura", &Tokens { access: Secret::new(format!("ACCESS-SECRET-{i}")), ..Default::default() }).unwrap();
                id
            })
            .collect()
    }

    fn every_file(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir).unwrap().flatten().flat_map(|e| if e.path().is_dir() { every_file(&e.path()) } else { vec![e.path()] }).collect()
    }

    /// Which key opens each secret file: all must be one.
    fn opened_by(t: &Tenants, keys: &[&Arc<Vault>]) -> Vec<String> {
        secret_files(t)
            .unwrap()
            .iter()
            .map(|p| sealed_by(&std::fs::read(p).unwrap()).unwrap())
            .map(|id| keys.iter().find(|k| k.id() == id).unwrap().id().to_string())
            .collect()
    }

    #[test]
    fn a_crash_at_any_step_of_a_rotation_leaves_the_old_key_or_the_new_never_a_mix() {
        let (old, new) = (Arc::new(Vault::generate().0), Arc::new(Vault::generate().0));
        for crash in [Step::Copies(0), Step::Copies(2), Step::Renames(0), Step::Renames(1), Step::Renames(2)] {
            let t = Tenants::at(folder("rotate")).sealed(old.clone());
            let ids = with_tokens(&t, 3);
            assert!(rotate_until(&t, &old, &new, Some(crash)).is_err());
            // The next start (with whichever key the operator has) settles it first.
            let recovered = recover(&t).unwrap();
            let by = opened_by(&t, &[&old, &new]);
            let want = if matches!(crash, Step::Copies(_)) { old.id() } else { new.id() };
            assert!(by.iter().all(|k| k == want), "{crash:?}: {by:?}");
            let said = match crash {
                Step::Copies(0) => None,
                Step::Copies(_) => Some(false),
                Step::Renames(_) => Some(true),
            };
            assert_eq!(recovered, said, "{crash:?}");
            let key = if want == old.id() { old.clone() } else { new.clone() };
            let t = Tenants::at(&t.dir).sealed(key);
            for (i, id) in ids.iter().enumerate() {
                let tokens = t.home(id).unwrap().store().unwrap().load("oura").unwrap().unwrap();
                assert_eq!(tokens.access.expose(), format!("ACCESS-SECRET-{i}"), "{crash:?}");
            }
        }
        let t = Tenants::at(folder("rotate-whole")).sealed(old.clone());
        with_tokens(&t, 2);
        let said = rotate(&t, &old, &new).unwrap();
        assert!(said.contains(new.id()) && said.contains("2 file(s) of 2 tenant(s)"), "{said}");
        assert_eq!(opened_by(&t, &[&old, &new]), vec![new.id().to_string(); 2]);
        assert!(matches!(rotate(&t, &new, &new), Err(FolderError::Input(e)) if e.contains("the key in use")));
    }

    #[test]
    fn no_rotation_under_a_running_server_and_no_start_with_another_key() {
        let (old, new) = (Arc::new(Vault::generate().0), Arc::new(Vault::generate().0));
        let t = Tenants::at(folder("serving")).sealed(old.clone());
        with_tokens(&t, 1);
        let serving = Serving::take(&t).unwrap();
        assert!(matches!(rotate(&t, &old, &new), Err(FolderError::Busy(e)) if e.contains("stop it first")));
        drop(serving);
        rotate(&t, &old, &new).unwrap();
        let e = settle(&t, &old).unwrap_err();
        assert!(matches!(e, FolderError::Vault(VaultError::WrongKey { .. })), "{e:?}");
        let e = e.to_string();
        assert!(e.contains(new.id()) && e.contains(old.id()) && e.contains("start with the key"), "{e}");
        assert_eq!(settle(&t, &new).unwrap(), Settled::default());
    }

    #[test]
    fn an_older_folder_is_settled_its_urls_kept_as_hashes_and_its_secrets_sealed() {
        let t = Tenants::at(folder("older"));
        // The older format: the folder's name is the URL's secret, the token file plain.
        let legacy = TenantId::parse(&"c".repeat(48)).unwrap();
        std::fs::create_dir_all(t.dir.join(legacy.as_str())).unwrap();
        std::fs::write(t.dir.join(legacy.as_str()).join("tokens.json"), r#"{"oura":{"access_token":"PLAIN-SECRET"}}"#).unwrap();
        let key = crate::hosted::people::person::new_key(&t, &legacy).unwrap();
        let vault = Arc::new(Vault::generate().0);
        let settled = settle(&t, &vault).unwrap();
        let new = settled.renamed[0].1.clone();
        assert_eq!((settled.renamed.len(), settled.sealed), (1, 1), "{settled:?}");
        assert_eq!(super::super::hashed::tenant_of_url(&t, legacy.as_str()), Some(new.clone()), "the old URL still opens its tenant");
        assert_eq!(crate::hosted::people::person::tenant_of(&t, key.expose()), Some(new.clone()), "so does the sign-in key");
        assert!(!t.dir.join(legacy.as_str()).exists(), "no folder is named by the URL's secret");
        let everything: String =
            every_file(&t.dir).iter().map(|p| format!("{}\n{}", p.display(), String::from_utf8_lossy(&std::fs::read(p).unwrap()))).collect();
        assert!(!everything.contains("PLAIN-SECRET") && !everything.contains(legacy.as_str()), "{everything}");
        let sealed = Tenants::at(&t.dir).sealed(vault);
        assert_eq!(sealed.home(&new).unwrap().store().unwrap().load("oura").unwrap().unwrap().access.expose(), "PLAIN-SECRET");
        let e = Tenants::at(&t.dir).home(&new).unwrap().store().unwrap().load("oura").unwrap_err().to_string();
        assert!(e.contains("encrypted") && e.contains("no key was given") && !e.contains("PLAIN-SECRET"), "read without the key: {e}");
        assert!(!e.contains(new.as_str()), "nor the tenant's folder: {e}");
        assert_eq!(settle(&sealed, sealed.vault.as_ref().unwrap()).unwrap(), Settled::default(), "settled once");
    }
}
