//! A person's sign-in key: made when they make their tenant and shown to them once, so they can
//! come back to their page (and, later, let another client in) without the operator. The tenants
//! folder keeps only the key's SHA-256: `.keys/<hash>` names the tenant it opens, and the tenant's
//! own `signin.key` names the hash, so deleting the tenant deletes its key.
use super::super::hashed::{SIGN_IN, URL};
use super::super::tenants::{FolderError, TenantId, Tenants};
use crate::secret::Secret;

/// A new key for tenant `id` (replacing any it had): the key itself, to be shown once.
pub fn new_key(t: &Tenants, id: &TenantId) -> Result<Secret, FolderError> {
    let key = Secret::new(format!("vk-{}", super::super::mount::random_token()));
    SIGN_IN.set(t, id, key.expose())?;
    Ok(key)
}

/// The tenant `key` opens, if it still exists.
pub fn tenant_of(t: &Tenants, key: &str) -> Option<TenantId> {
    let shaped = key.len() == 46 && key.starts_with("vk-") && key[3..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    shaped.then(|| SIGN_IN.tenant_of(t, key)).flatten()
}

/// Remove a tenant (`vitals-mcp tenant delete`, or the person from their page): its sign-in key
/// and connector URL first, so they open nothing, then its folder.
pub fn remove_tenant(t: &Tenants, id: &str) -> Result<(), FolderError> {
    if let Some(tid) = TenantId::parse(id) {
        forget_key(t, &tid);
        URL.forget(t, &tid);
    }
    t.remove(id)
}

/// Remove tenant `id`'s key (before its folder goes, or when it gets a new one).
pub fn forget_key(t: &Tenants, id: &TenantId) {
    SIGN_IN.forget(t, id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_opens_its_tenant_until_it_is_replaced_or_the_tenant_is_removed() {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/signin-keys"));
        let _ = std::fs::remove_dir_all(&dir);
        let t = Tenants::at(dir);
        let id = t.add().unwrap();
        let key = new_key(&t, &id).unwrap();
        assert_eq!(tenant_of(&t, key.expose()), Some(id.clone()));
        assert_eq!(tenant_of(&t, "vk-nope"), None);
        let again = new_key(&t, &id).unwrap();
        assert_eq!(tenant_of(&t, key.expose()), None, "the old key is gone");
        assert_eq!(tenant_of(&t, again.expose()), Some(id.clone()));
        let stored = std::fs::read_to_string(t.dir.join(id.as_str()).join(SIGN_IN.own)).unwrap();
        assert!(!stored.contains(again.expose()), "only the hash is kept");
        remove_tenant(&t, id.as_str()).unwrap();
        assert_eq!(tenant_of(&t, again.expose()), None);
        assert_eq!(std::fs::read_dir(t.dir.join(SIGN_IN.folder)).unwrap().count(), 0);
    }
}
