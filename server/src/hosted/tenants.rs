//! Several people from one process: `--tenants DIR` holds one folder per person (settings, token
//! file, both sealed under the operator's key: [`crate::accounts::vault`]). The folder's name is
//! the tenant's id (192 random bits as 48 lowercase hex digits), which opens nothing by itself: with
//! `--auth url` a person's connector URL is `/u/<secret>/mcp`, a secret of its own kept only as a
//! hash (by the hashed index of connector URLs); with `--auth oauth` a token opens the tenant. Each tenant's engine
//! reads only its own folder ([`Home::Tenant`]), so its cache, budgets and logins are its own.
use crate::accounts::vault::Vault;
use crate::accounts::Home;
use crate::secret::Secret;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why something of the tenants folder could not be done, by what the operator does next. The
/// words (none carries a secret) are printed as they are.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// A file or folder could not be read, made, written, renamed or removed (local I/O): the
    /// words name it and the system's reason.
    #[error("{0}")]
    Io(String),
    /// What was sent cannot be used (a tenant id, a folder that is not a vitals config folder,
    /// `--days`, the key in use as the new key): nothing was changed.
    #[error("{0}")]
    Input(String),
    /// Another process holds the folder (a rotation, a server): start again when it is done.
    #[error("{0}")]
    Busy(String),
    /// A file this folder wrote cannot be trusted (a damaged journal).
    #[error("{0}")]
    Damaged(String),
    /// The key and a sealed file do not go together, or no key was given.
    #[error(transparent)]
    Vault(#[from] crate::accounts::vault::VaultError),
    /// A sealed file could not be read or written through the token store's functions.
    #[error(transparent)]
    Store(#[from] crate::accounts::StoreError),
}

/// The variable that names the tenants folder for `serve` and every `tenant` command.
pub const TENANTS_ENV: &str = "VITALS_TENANTS_DIR";

/// A tenant's id, checked: 32 to 128 characters of `[a-z0-9-]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TenantId(String);

impl TenantId {
    pub fn parse(s: &str) -> Option<TenantId> {
        let ok = (32..=128).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        ok.then(|| TenantId(s.to_string()))
    }

    /// A new id: 24 random bytes as hex.
    pub fn random() -> TenantId {
        use base64::Engine as _;
        let raw = super::mount::random_token();
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(raw.as_bytes()).expect("the token is base64url");
        TenantId(bytes[..24].iter().map(|b| format!("{b:02x}")).collect())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The path a client is given for a connector URL secret: `/u/<secret>/mcp`.
pub fn mcp_path(secret: &Secret) -> String {
    format!("/u/{}/mcp", secret.expose())
}

/// The tenants folder, and the key its secrets are sealed under.
#[derive(Clone, Debug)]
pub struct Tenants {
    pub dir: PathBuf,
    pub vault: Option<Arc<Vault>>,
    /// The operator's settings, which every tenant's home carries (the operator's app, endpoints).
    pub config: Arc<crate::config::Config>,
}

/// The file at the folder's top that says its tenants are of this format (ids apart from URLs).
pub const FORMAT_FILE: &str = ".format";

impl Tenants {
    /// The tenants folder at `dir`, without a key (commands that read no secret).
    pub fn at(dir: impl Into<PathBuf>) -> Tenants {
        Tenants { dir: dir.into(), vault: None, config: Arc::default() }
    }

    /// `--tenants DIR`, else `VITALS_TENANTS_DIR` of the operator's settings.
    pub fn from(flag: Option<PathBuf>, config: &Arc<crate::config::Config>) -> Option<Tenants> {
        flag.or_else(|| config.var(TENANTS_ENV).map(PathBuf::from)).map(|d| Tenants::at(d).with_config(config.clone()))
    }

    /// The same folder, its tenants' homes carrying the operator's settings `config`.
    pub fn with_config(self, config: Arc<crate::config::Config>) -> Tenants {
        Tenants { config, ..self }
    }

    /// The same folder, its secrets sealed under `vault`.
    pub fn sealed(self, vault: Arc<Vault>) -> Tenants {
        Tenants { vault: Some(vault), ..self }
    }

    /// The home of a tenant that exists now. A deleted folder is no tenant from that moment on.
    pub fn home(&self, id: &TenantId) -> Option<Home> {
        let dir = self.dir.join(id.as_str());
        std::fs::symlink_metadata(&dir).ok().filter(|m| m.is_dir()).map(|_| Home::Tenant { dir, vault: self.vault.clone(), config: self.config.clone() })
    }

    /// Whether the folder says its tenants are of this format (ids apart from URLs; `serve` brings
    /// an older folder to it at start).
    pub fn current_format(&self) -> bool {
        self.dir.join(FORMAT_FILE).is_file()
    }

    /// Every tenant, by id.
    pub fn list(&self) -> Result<Vec<TenantId>, FolderError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(FolderError::Io(format!("the tenants folder {} cannot be read: {e}", self.dir.display()))),
        };
        let mut ids: Vec<TenantId> =
            entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).filter_map(|e| e.file_name().to_str().and_then(TenantId::parse)).collect();
        ids.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(ids)
    }

    /// A new, empty tenant (its folder 0700).
    pub fn add(&self) -> Result<TenantId, FolderError> {
        private_dir(&self.dir)?;
        // A folder with no tenant yet is of this format from the start; one holding older tenants
        // is brought to it by the next `serve`.
        if !self.current_format() && self.list()?.is_empty() {
            private_file(&self.dir.join(FORMAT_FILE), b"2\n")?;
        }
        let id = TenantId::random();
        let dir = self.dir.join(id.as_str());
        std::fs::create_dir(&dir).map_err(|e| FolderError::Io(format!("{} could not be created: {e}", dir.display())))?;
        private_dir(&dir)?;
        Ok(id)
    }

    /// A new tenant holding a copy of `from`: a vitals config folder (its `tokens.json` and
    /// `settings.json`). The source is read, never changed; the copies are sealed under the key,
    /// 0600 in a 0700 folder.
    pub fn import(&self, from: &Path) -> Result<(TenantId, Vec<&'static str>), FolderError> {
        let Some(vault) = self.vault.clone() else { return Err(crate::accounts::vault::VaultError::Missing.into()) };
        let meta = std::fs::metadata(from).map_err(|e| FolderError::Io(format!("{} cannot be read: {e}", from.display())))?;
        if !meta.is_dir() {
            return Err(FolderError::Input(format!("{} is not a folder; send a vitals config folder (the one holding tokens.json)", from.display())));
        }
        let found: Vec<&'static str> = IMPORTED.iter().copied().filter(|f| from.join(f).is_file()).collect();
        if found.is_empty() {
            return Err(FolderError::Input(format!(
                "{} holds none of {}: it is not a vitals config folder (on this machine: {})",
                from.display(),
                IMPORTED.join(", "),
                crate::accounts::default_dir(&self.config).map(|d| d.display().to_string()).unwrap_or_else(|| "none".into())
            )));
        }
        let id = self.add()?;
        let to = self.dir.join(id.as_str());
        for f in &found {
            let body = std::fs::read(from.join(f)).map_err(|e| FolderError::Io(format!("{} cannot be read: {e}", from.join(f).display())));
            let sealed = body.map(|b| vault.seal(&zeroize::Zeroizing::new(b), &crate::accounts::vault::aad_for(&to.join(f))));
            let written = sealed.and_then(|b| private_file(&to.join(f), &b));
            if let Err(e) = written {
                let _ = std::fs::remove_dir_all(&to);
                return Err(e);
            }
        }
        Ok((id, found))
    }

    /// Remove a tenant: its folder and everything in it. Its URL is 404 from the next request.
    pub fn remove(&self, id: &str) -> Result<(), FolderError> {
        let id = TenantId::parse(id)
            .ok_or_else(|| FolderError::Input(format!("{id:?} is not a tenant id (32 to 128 characters of a-z 0-9 -); `vitals-mcp tenant list` shows them")))?;
        let dir = self.dir.join(id.as_str());
        if self.home(&id).is_none() {
            return Err(FolderError::Input(format!("there is no tenant {} in {}", id.as_str(), self.dir.display())));
        }
        std::fs::remove_dir_all(&dir).map_err(|e| FolderError::Io(format!("{} could not be removed: {e}", dir.display())))
    }
}

/// What `tenant import` copies from a vitals config folder: credentials and settings, nothing else.
const IMPORTED: [&str; 2] = ["tokens.json", "settings.json"];

pub(crate) fn private_dir(dir: &Path) -> Result<(), FolderError> {
    std::fs::create_dir_all(dir).map_err(|e| FolderError::Io(format!("{} could not be created: {e}", dir.display())))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| FolderError::Io(format!("{} could not be made 0700: {e}", dir.display())))?;
    }
    Ok(())
}

pub(crate) fn private_file(path: &Path, body: &[u8]) -> Result<(), FolderError> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(|e| FolderError::Io(format!("{} could not be created: {e}", path.display())))?;
    f.write_all(body).and_then(|()| f.sync_all()).map_err(|e| FolderError::Io(format!("{} could not be written: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let d = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp")).join(format!("vitals-tenants-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn ids_are_long_random_and_checked() {
        let a = TenantId::random();
        assert_eq!(a.as_str().len(), 48);
        assert!(TenantId::parse(a.as_str()).is_some());
        assert_ne!(a, TenantId::random());
        for bad in ["", "short", &"A".repeat(40), &"a".repeat(129), &format!("{}/..", "a".repeat(40)), &format!("{}_", "a".repeat(40))] {
            assert!(TenantId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn add_import_list_delete() {
        let t = Tenants::at(folder("ops")).sealed(Arc::new(Vault::generate().0));
        let a = t.add().unwrap();
        let src = folder("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("tokens.json"), b"{\"oura\":{}}").unwrap();
        let (b, copied) = t.import(&src).unwrap();
        assert_eq!(copied, vec!["tokens.json"]);
        assert_eq!(std::fs::read(src.join("tokens.json")).unwrap(), b"{\"oura\":{}}", "the source is left as it was");
        let copy = std::fs::read(t.dir.join(b.as_str()).join("tokens.json")).unwrap();
        assert!(crate::accounts::vault::is_sealed(&copy), "the copy is sealed");
        assert!(matches!(Tenants::at(&t.dir).import(&src), Err(FolderError::Vault(_))), "no import without the key");
        assert!(Tenants::at(&t.dir).import(&src).unwrap_err().to_string().contains("no key was given"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&t.dir.join(b.as_str())), 0o700);
            assert_eq!(mode(&t.dir.join(b.as_str()).join("tokens.json")), 0o600);
        }
        let mut both = vec![a.clone(), b.clone()];
        both.sort_by(|x, y| x.0.cmp(&y.0));
        assert_eq!(t.list().unwrap(), both);
        t.remove(a.as_str()).unwrap();
        assert!(t.home(&a).is_none());
        assert_eq!(t.list().unwrap(), vec![b.clone()]);
        assert!(t.remove(a.as_str()).unwrap_err().to_string().contains("there is no tenant"));
        assert!(matches!(t.remove("../etc"), Err(FolderError::Input(e)) if e.contains("is not a tenant id")));
        let e = t.import(&folder("nothing-there")).unwrap_err().to_string();
        assert!(e.contains("cannot be read"), "{e}");
        std::fs::remove_dir_all(&t.dir).unwrap();
        std::fs::remove_dir_all(&src).unwrap();
    }
}
