//! What the authorization server has handed out: codes (in memory, single use, a few minutes) and
//! grants (a tenant's consent to one client, with its current access and refresh tokens), kept in
//! `<tenants>/.oauth/grants.json` (0600, atomic replace) as SHA-256 hashes only. A refresh token is
//! replaced at every use; presenting one already used revokes its whole grant (reuse detection); a
//! code presented again revokes every token issued from it (OAuth 2.1, section 4.1.3).
use super::super::people::invite::digest;
use super::super::tenants::TenantId;
use crate::secret::Secret;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

pub const CODE_LIFETIME_S: i64 = 300;
pub const ACCESS_LIFETIME_S: i64 = 3600;
pub const REFRESH_LIFETIME_S: i64 = 30 * 24 * 3600;

/// A code's promise, checked at the token endpoint.
pub struct Code {
    pub tenant: TenantId,
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub challenge: String,
    pub resource: String,
    expires: Timestamp,
}

/// One client's access to one tenant.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Grant {
    pub tenant: String,
    pub client_id: String,
    pub client_name: String,
    pub resource: String,
    pub made: i64,
    access: String,
    access_expires: i64,
    refresh: String,
    refresh_expires: i64,
    /// Refresh tokens of this grant already used: one of them again means a thief has one.
    used: Vec<String>,
    /// The hash of the code this grant was issued from: that code again revokes the grant.
    #[serde(default)]
    code: String,
    /// When one of its access tokens last opened the tenant (Unix seconds).
    #[serde(default)]
    pub last_used: Option<i64>,
}

/// One assistant a person let in, as their page shows it: every grant of one client together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assistant {
    pub client_id: String,
    pub client_name: String,
    /// When the person first let it in (Unix seconds).
    pub allowed: i64,
    pub last_used: Option<i64>,
    /// How many logins (grants) it holds.
    pub grants: usize,
}

/// New tokens of a grant, to send once.
pub struct Issued {
    pub access: Secret,
    pub refresh: Secret,
    pub expires_in: i64,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the code is unknown, used or expired")]
    Code,
    #[error("the code was used already: every token issued from it is revoked")]
    Replayed,
    #[error("the code was given to another client, redirect URI or resource")]
    Mismatch,
    #[error("the code_verifier does not match the code_challenge")]
    Verifier,
    #[error("the refresh token is unknown or expired")]
    Refresh,
    #[error("the refresh token was used already: every token of this grant is revoked")]
    Reused,
    #[error("the grants could not be saved ({0})")]
    Store(String),
}

pub struct Grants {
    file: PathBuf,
    dir: PathBuf,
    codes: Mutex<HashMap<String, Code>>,
    saved: Mutex<()>,
    /// When each live access token (by hash) last opened its tenant, until written with the grants.
    seen: Mutex<HashMap<String, i64>>,
}

/// How often a grant's last use is written to disk at most (it is kept in memory in between).
const LAST_USED_EVERY_S: i64 = 300;

fn random() -> Secret {
    Secret::new(super::super::mount::random_token())
}

fn pkce_s256(verifier: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

impl Grants {
    pub fn in_dir(dir: PathBuf) -> Grants {
        Grants { file: dir.join("grants.json"), dir, codes: Mutex::new(HashMap::new()), saved: Mutex::new(()), seen: Mutex::new(HashMap::new()) }
    }

    /// A code for this consent, to send back through the browser.
    pub fn code(&self, tenant: TenantId, client: (&str, &str), redirect_uri: &str, challenge: &str, resource: &str) -> Secret {
        let (client_id, client_name) = client;
        let code = random();
        let expires = Timestamp::now() + jiff::SignedDuration::from_secs(CODE_LIFETIME_S);
        let mut codes = self.codes.lock().expect("codes lock");
        let now = Timestamp::now();
        codes.retain(|_, c| c.expires > now);
        let c = Code {
            tenant,
            client_id: client_id.into(),
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            challenge: challenge.into(),
            resource: resource.into(),
            expires,
        };
        codes.insert(digest(code.expose()), c);
        code
    }

    /// Trade a code for tokens: once, before it expires, by the client it was given to, with the
    /// same redirect URI and resource, and the verifier of its challenge.
    pub fn exchange(&self, code: &str, client_id: &str, redirect_uri: &str, verifier: &str, resource: &str) -> Result<Issued, Refused> {
        // Taken out whatever follows: a code is tried once.
        let hash = digest(code);
        let Some(c) = self.codes.lock().expect("codes lock").remove(&hash) else {
            return self.replayed(&hash);
        };
        if c.expires <= Timestamp::now() {
            return Err(Refused::Code);
        }
        if c.client_id != client_id || c.redirect_uri != redirect_uri || c.resource != resource {
            return Err(Refused::Mismatch);
        }
        if pkce_s256(verifier) != c.challenge {
            return Err(Refused::Verifier);
        }
        let (grant, issued) = fresh(c.tenant.as_str(), client_id, &c.client_name, resource);
        self.change(|all| {
            all.push(Grant { code: hash, ..grant });
            Ok(())
        })?;
        Ok(issued)
    }

    /// A code no longer waiting: if tokens were issued from it, it is a replay, and they all go.
    fn replayed(&self, hash: &str) -> Result<Issued, Refused> {
        let mut found = false;
        self.change(|all| {
            let before = all.len();
            all.retain(|g| g.code != hash);
            found = all.len() < before;
            Ok(())
        })?;
        if found {
            tracing::warn!("an authorization code was presented again: the tokens issued from it are revoked");
            return Err(Refused::Replayed);
        }
        Err(Refused::Code)
    }

    /// New tokens for a refresh token, the old one used up; a used one again revokes the grant.
    pub fn refresh(&self, token: &str, client_id: &str) -> Result<Issued, Refused> {
        let h = digest(token);
        let now = Timestamp::now().as_second();
        let mut out = None;
        let result = self.change(|all| {
            if let Some(i) = all.iter().position(|g| g.used.contains(&h)) {
                all.remove(i);
                return Err(Refused::Reused);
            }
            let g = all.iter_mut().find(|g| g.refresh == h && g.client_id == client_id && g.refresh_expires > now).ok_or(Refused::Refresh)?;
            let (next, issued) = fresh(&g.tenant, &g.client_id, &g.client_name, &g.resource);
            let mut used = std::mem::take(&mut g.used);
            used.push(h.clone());
            *g = Grant { used, made: g.made, code: std::mem::take(&mut g.code), last_used: g.last_used, ..next };
            out = Some(issued);
            Ok(())
        });
        result.map(|()| out.expect("issued when changed"))
    }

    /// The tenant an access token opens for `resource`, if it is alive; its use is noted.
    pub fn tenant_of(&self, access: &str, resource: &str) -> Option<TenantId> {
        let h = digest(access);
        let now = Timestamp::now().as_second();
        let g = self.load().into_iter().find(|g| g.access == h && g.access_expires > now && g.resource == resource)?;
        self.seen.lock().expect("seen lock").insert(h, now);
        if g.last_used.is_none_or(|t| now - t >= LAST_USED_EVERY_S) {
            let _ = self.change(|_| Ok(()));
        }
        TenantId::parse(&g.tenant)
    }

    /// Revoke the grant a token (access or refresh) belongs to; nothing when it belongs to none.
    pub fn revoke_token(&self, token: &str) -> Result<(), Refused> {
        let h = digest(token);
        self.change(|all| {
            all.retain(|g| g.access != h && g.refresh != h && !g.used.contains(&h));
            Ok(())
        })
    }

    /// The grants of a tenant.
    pub fn of(&self, tenant: &TenantId) -> Vec<Grant> {
        let seen = self.seen.lock().expect("seen lock").clone();
        let mut all: Vec<Grant> = self.load().into_iter().filter(|g| g.tenant == tenant.as_str()).collect();
        for g in &mut all {
            g.last_used = g.last_used.max(seen.get(&g.access).copied());
        }
        all
    }

    /// The assistants a tenant let in, one per client, oldest first: for their page.
    pub fn assistants(&self, tenant: &TenantId) -> Vec<Assistant> {
        let mut out: Vec<Assistant> = vec![];
        for g in self.of(tenant) {
            match out.iter_mut().find(|a| a.client_id == g.client_id) {
                Some(a) => {
                    a.allowed = a.allowed.min(g.made);
                    a.last_used = a.last_used.max(g.last_used);
                    a.grants += 1;
                }
                None => out.push(Assistant { client_id: g.client_id, client_name: g.client_name, allowed: g.made, last_used: g.last_used, grants: 1 }),
            }
        }
        out.sort_by_key(|a| a.allowed);
        out
    }

    /// Grants of tenant `old` now belong to `new` (its folder was renamed at start).
    pub fn rename_tenant(&self, old: &TenantId, new: &TenantId) -> Result<(), Refused> {
        self.change(|all| {
            all.iter_mut().filter(|g| g.tenant == old.as_str()).for_each(|g| g.tenant = new.as_str().to_string());
            Ok(())
        })
    }

    /// Revoke a tenant's grant of one client (from their page), or all of them (`None`: deleted).
    pub fn revoke_client(&self, tenant: &TenantId, client_id: Option<&str>) -> Result<(), Refused> {
        self.change(|all| {
            all.retain(|g| g.tenant != tenant.as_str() || client_id.is_some_and(|c| c != g.client_id));
            Ok(())
        })
    }

    fn load(&self) -> Vec<Grant> {
        crate::accounts::store::read_json::<Vec<Grant>>(&self.file).unwrap_or_default()
    }

    /// Read, change and write the grants under one lock (one process writes them).
    fn change(&self, f: impl FnOnce(&mut Vec<Grant>) -> Result<(), Refused>) -> Result<(), Refused> {
        let _held = self.saved.lock().expect("grants lock");
        let mut all = self.load();
        let now = Timestamp::now().as_second();
        all.retain(|g| g.refresh_expires > now);
        let seen = std::mem::take(&mut *self.seen.lock().expect("seen lock"));
        for g in &mut all {
            g.last_used = g.last_used.max(seen.get(&g.access).copied());
        }
        let outcome = f(&mut all);
        crate::accounts::store::write_json_private(&self.dir, &self.file, &all).map_err(|e| Refused::Store(e.to_string()))?;
        outcome
    }
}

fn fresh(tenant: &str, client_id: &str, client_name: &str, resource: &str) -> (Grant, Issued) {
    let (access, refresh) = (random(), random());
    let now = Timestamp::now().as_second();
    let grant = Grant {
        tenant: tenant.into(),
        client_id: client_id.into(),
        client_name: client_name.into(),
        resource: resource.into(),
        made: now,
        access: digest(access.expose()),
        access_expires: now + ACCESS_LIFETIME_S,
        refresh: digest(refresh.expose()),
        refresh_expires: now + REFRESH_LIFETIME_S,
        used: vec![],
        code: String::new(),
        last_used: None,
    };
    (grant, Issued { access, refresh, expires_in: ACCESS_LIFETIME_S })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(name: &str) -> Grants {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/grants")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        Grants::in_dir(dir)
    }

    fn tenant() -> TenantId {
        TenantId::parse(&"b".repeat(48)).unwrap()
    }

    const R: &str = "http://127.0.0.1:1/mcp";

    #[test]
    fn a_code_is_traded_once_with_its_verifier_and_refresh_tokens_rotate() {
        let g = grants("flow");
        let verifier = "a-verifier-of-at-least-forty-three-characters-long";
        let code = g.code(tenant(), ("c1", "App"), "https://app/cb", &pkce_s256(verifier), R);
        assert_eq!(g.exchange(code.expose(), "c1", "https://app/cb", "wrong", R).err(), Some(Refused::Verifier));
        assert_eq!(g.exchange(code.expose(), "c1", "https://app/cb", verifier, R).err(), Some(Refused::Code), "a code is tried once");
        assert_eq!(g.exchange("never-issued", "c1", "https://app/cb", verifier, R).err(), Some(Refused::Code));
        let code = g.code(tenant(), ("c1", "App"), "https://app/cb", &pkce_s256(verifier), R);
        assert_eq!(g.exchange(code.expose(), "c2", "https://app/cb", verifier, R).err(), Some(Refused::Mismatch));
        let code = g.code(tenant(), ("c1", "App"), "https://app/cb", &pkce_s256(verifier), R);
        let t = g.exchange(code.expose(), "c1", "https://app/cb", verifier, R).unwrap();
        assert_eq!(g.tenant_of(t.access.expose(), R), Some(tenant()));
        assert_eq!(g.tenant_of(t.access.expose(), "http://elsewhere/mcp"), None, "bound to its resource");
        let t2 = g.refresh(t.refresh.expose(), "c1").unwrap();
        assert_eq!(g.tenant_of(t.access.expose(), R), None, "the old access token went with its refresh");
        assert_eq!(g.tenant_of(t2.access.expose(), R), Some(tenant()));
        assert_eq!(g.refresh(t.refresh.expose(), "c1").err(), Some(Refused::Reused));
        assert_eq!(g.tenant_of(t2.access.expose(), R), None, "reuse revokes the whole grant");
        let kept = std::fs::read_to_string(&g.file).unwrap();
        assert!(!kept.contains(t2.refresh.expose()) && !kept.contains(t2.access.expose()), "hashes only");
    }

    #[test]
    fn a_replayed_code_revokes_every_token_issued_from_it() {
        let g = grants("replay");
        let verifier = "a-verifier-of-at-least-forty-three-characters-long";
        let code = g.code(tenant(), ("c1", "App"), "https://app/cb", &pkce_s256(verifier), R);
        let t = g.exchange(code.expose(), "c1", "https://app/cb", verifier, R).unwrap();
        let t2 = g.refresh(t.refresh.expose(), "c1").unwrap();
        let other = g.code(tenant(), ("c1", "App"), "https://app/cb", &pkce_s256(verifier), R);
        let kept = g.exchange(other.expose(), "c1", "https://app/cb", verifier, R).unwrap();
        assert_eq!(g.tenant_of(t2.access.expose(), R), Some(tenant()));
        assert_eq!(g.exchange(code.expose(), "c1", "https://app/cb", verifier, R).err(), Some(Refused::Replayed));
        assert_eq!(g.tenant_of(t2.access.expose(), R), None, "the rotated tokens of that code are revoked too");
        assert_eq!(g.refresh(t2.refresh.expose(), "c1").err(), Some(Refused::Refresh));
        assert_eq!(g.tenant_of(kept.access.expose(), R), Some(tenant()), "another code's grant stands");
    }

    #[test]
    fn a_persons_page_shows_one_row_per_assistant_with_when_and_last_use() {
        let g = grants("rows");
        let verifier = "a-verifier-of-at-least-forty-three-characters-long";
        let issue = |c: &str| {
            let code = g.code(tenant(), (c, "App"), "https://app/cb", &pkce_s256(verifier), R);
            g.exchange(code.expose(), c, "https://app/cb", verifier, R).unwrap()
        };
        let (a1, _a2, _b) = (issue("c1"), issue("c1"), issue("c2"));
        let rows = g.assistants(&tenant());
        assert_eq!(rows.iter().map(|a| (a.client_id.as_str(), a.grants)).collect::<Vec<_>>(), vec![("c1", 2), ("c2", 1)]);
        assert!(rows.iter().all(|a| a.last_used.is_none()));
        g.tenant_of(a1.access.expose(), R).unwrap();
        let rows = g.assistants(&tenant());
        assert!(rows[0].last_used.is_some() && rows[1].last_used.is_none(), "{rows:?}");
        g.revoke_client(&tenant(), Some("c1")).unwrap();
        assert_eq!(g.assistants(&tenant()).len(), 1);
        assert_eq!(g.tenant_of(a1.access.expose(), R), None);
    }

    #[test]
    fn an_expired_code_is_refused() {
        let g = grants("expired");
        let verifier = "a-verifier-of-at-least-forty-three-characters-long";
        let code = g.code(tenant(), ("c1", "App"), "https://app/cb", &pkce_s256(verifier), R);
        for c in g.codes.lock().unwrap().values_mut() {
            c.expires = Timestamp::now() - jiff::SignedDuration::from_secs(1);
        }
        assert_eq!(g.exchange(code.expose(), "c1", "https://app/cb", verifier, R).err(), Some(Refused::Code));
    }

    #[test]
    fn a_grant_is_revoked_by_its_token_or_from_the_persons_page() {
        let g = grants("revoke");
        let verifier = "another-verifier-of-at-least-forty-three-characters";
        let issue = |c: &str| {
            let code = g.code(tenant(), (c, c), "https://app/cb", &pkce_s256(verifier), R);
            g.exchange(code.expose(), c, "https://app/cb", verifier, R).unwrap()
        };
        let (a, b) = (issue("c1"), issue("c2"));
        g.revoke_token(a.refresh.expose()).unwrap();
        assert_eq!(g.tenant_of(a.access.expose(), R), None);
        assert_eq!(g.of(&tenant()).len(), 1);
        g.revoke_client(&tenant(), Some("c2")).unwrap();
        assert_eq!(g.tenant_of(b.access.expose(), R), None);
    }
}
