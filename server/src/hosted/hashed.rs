//! Secrets a tenants folder answers to but never keeps: a person's sign-in key (`vk-…`) and, with
//! `--auth url`, their connector URL's secret. The folder keeps each one's SHA-256 only, as the name
//! of a file in an index folder (`.keys/`, `.urls/`) that names the tenant it opens; the tenant's
//! own folder names the hash back (`signin.key`, `url.key`), so deleting the tenant or making a new
//! secret deletes the old entry. Read without the secret, the folder opens nothing.
use super::people::invite::digest;
use super::tenants::{private_dir, private_file, FolderError, TenantId, Tenants};
use crate::secret::Secret;
use std::path::PathBuf;

/// A new connector URL secret for tenant `id`, replacing the one it had: to be shown once.
pub fn new_url(t: &Tenants, id: &TenantId) -> Result<Secret, FolderError> {
    let secret = Secret::new(TenantId::random().as_str());
    URL.set(t, id, secret.expose())?;
    Ok(secret)
}

/// The tenant a connector URL secret opens, if any.
pub fn tenant_of_url(t: &Tenants, secret: &str) -> Option<TenantId> {
    TenantId::parse(secret).and_then(|s| URL.tenant_of(t, s.as_str()))
}

/// One kind of hashed secret: where its index lives and what the tenant's own file is called.
pub struct Index {
    pub folder: &'static str,
    pub own: &'static str,
}

/// Sign-in keys: the person's way back to their page.
pub const SIGN_IN: Index = Index { folder: ".keys", own: "signin.key" };
/// Connector URL secrets (`/u/<secret>/mcp`), with `--auth url`.
pub const URL: Index = Index { folder: ".urls", own: "url.key" };

impl Index {
    fn dir(&self, t: &Tenants) -> PathBuf {
        t.dir.join(self.folder)
    }

    /// Let `secret` open tenant `id`, in place of the one it had.
    pub fn set(&self, t: &Tenants, id: &TenantId, secret: &str) -> Result<(), FolderError> {
        self.forget(t, id);
        let hash = digest(secret);
        private_dir(&self.dir(t))?;
        private_file(&self.dir(t).join(&hash), id.as_str().as_bytes())?;
        private_file(&t.dir.join(id.as_str()).join(self.own), hash.as_bytes())
    }

    /// The tenant `secret` opens, if it still exists.
    pub fn tenant_of(&self, t: &Tenants, secret: &str) -> Option<TenantId> {
        let id = TenantId::parse(std::fs::read_to_string(self.dir(t).join(digest(secret))).ok()?.trim())?;
        t.home(&id).map(|_| id)
    }

    /// Whether tenant `id` has a secret of this kind.
    pub fn has(&self, t: &Tenants, id: &TenantId) -> bool {
        t.dir.join(id.as_str()).join(self.own).is_file()
    }

    /// Remove tenant `id`'s entry (before its folder goes, or when it gets a new secret).
    pub fn forget(&self, t: &Tenants, id: &TenantId) {
        if let Ok(hash) = std::fs::read_to_string(t.dir.join(id.as_str()).join(self.own)) {
            let hash = hash.trim();
            if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                let _ = std::fs::remove_file(self.dir(t).join(hash));
            }
            let _ = std::fs::remove_file(t.dir.join(id.as_str()).join(self.own));
        }
    }

    /// Point every entry that opened `old` at `new` (a folder renamed by [`Tenants::settle`]).
    pub fn rename(&self, t: &Tenants, old: &TenantId, new: &TenantId) -> Result<(), FolderError> {
        let Ok(entries) = std::fs::read_dir(self.dir(t)) else { return Ok(()) };
        for e in entries.flatten() {
            if std::fs::read_to_string(e.path()).is_ok_and(|s| s.trim() == old.as_str()) {
                let moved = e.path().with_extension("moving");
                private_file(&moved, new.as_str().as_bytes())?;
                std::fs::rename(&moved, e.path()).map_err(|err| FolderError::Io(format!("{} could not be replaced: {}", e.path().display(), err.kind())))?;
            }
        }
        Ok(())
    }
}
