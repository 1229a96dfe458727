//! Who a browser is: a random session id in an HttpOnly cookie, kept in memory only (a restart
//! signs everyone out; nothing about a person is written for it). Every form carries a CSRF token,
//! the HMAC of the session id under a key made at start, so a page of another site cannot post one.
//! Signing in replaces the session id (no fixation). Failed sign-ins are counted per address and in
//! all, and refused for a while past a limit.
use super::super::tenants::TenantId;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The cookie's name.
pub const COOKIE: &str = "vitals_session";
/// A session unused this long is gone; one this old is gone however used.
pub const IDLE: Duration = Duration::from_secs(12 * 3600);
pub const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// The most sessions kept at once; past it the least recently used goes.
const MAX_SESSIONS: usize = 10_000;
/// Failed sign-ins allowed per address, and from every address together, within [`WINDOW`].
pub const FAILS_PER_ADDRESS: usize = 5;
pub const FAILS_IN_ALL: usize = 100;
pub const WINDOW: Duration = Duration::from_secs(15 * 60);

struct Session {
    tenant: Option<TenantId>,
    made: Instant,
    used: Instant,
    /// A provider login waiting for its one-time code: the provider and the email (never the password).
    waiting: Option<(String, String)>,
}

pub struct Sessions {
    key: String,
    map: Mutex<HashMap<String, Session>>,
    fails: Mutex<Vec<(Instant, IpAddr)>>,
}

impl Default for Sessions {
    fn default() -> Sessions {
        // 256 random bits (as the URL-safe text of the server's other secrets) key the HMAC.
        let key = super::super::mount::random_token();
        Sessions { key, map: Mutex::new(HashMap::new()), fails: Mutex::new(vec![]) }
    }
}

impl Sessions {
    /// A new session, signed in to `tenant` or not: its id for the cookie.
    pub fn start(&self, tenant: Option<TenantId>) -> String {
        let id = super::super::mount::random_token();
        let mut map = self.map.lock().expect("sessions lock");
        let now = Instant::now();
        map.retain(|_, s| alive(s, now));
        if map.len() >= MAX_SESSIONS {
            let oldest = map.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| k.clone());
            oldest.map(|k| map.remove(&k));
        }
        map.insert(id.clone(), Session { tenant, made: now, used: now, waiting: None });
        id
    }

    /// Whether `id` is a live session, and the tenant it is signed in to.
    pub fn get(&self, id: &str) -> Option<Option<TenantId>> {
        let mut map = self.map.lock().expect("sessions lock");
        let now = Instant::now();
        let s = map.get_mut(id)?;
        if !alive(s, now) {
            map.remove(id);
            return None;
        }
        s.used = now;
        Some(s.tenant.clone())
    }

    /// Sign `old` in to `tenant`: a new session id replaces it.
    pub fn sign_in(&self, old: Option<&str>, tenant: TenantId) -> String {
        if let Some(o) = old {
            self.end(o);
        }
        self.start(Some(tenant))
    }

    /// Hold (or with None, let go) the login session `id` is waiting on a code for.
    pub fn wait_for_code(&self, id: &str, waiting: Option<(String, String)>) {
        if let Some(s) = self.map.lock().expect("sessions lock").get_mut(id) {
            s.waiting = waiting;
        }
    }

    /// The provider and email of the login session `id` waits on a code for.
    pub fn waiting(&self, id: &str) -> Option<(String, String)> {
        self.map.lock().expect("sessions lock").get(id).and_then(|s| s.waiting.clone())
    }

    pub fn end(&self, id: &str) {
        self.map.lock().expect("sessions lock").remove(id);
    }

    /// Every session of `tenant` ends (the tenant was deleted).
    pub fn end_all(&self, tenant: &TenantId) {
        self.map.lock().expect("sessions lock").retain(|_, s| s.tenant.as_ref() != Some(tenant));
    }

    /// The CSRF token of session `id`.
    pub fn csrf(&self, id: &str) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.mac(id).finalize().into_bytes())
    }

    /// Whether `token` is session `id`'s CSRF token (compared in constant time).
    pub fn csrf_ok(&self, id: &str, token: &str) -> bool {
        use base64::Engine as _;
        let Ok(raw) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token) else { return false };
        self.mac(id).verify_slice(&raw).is_ok()
    }

    fn mac(&self, id: &str) -> Hmac<Sha256> {
        let mut m = Hmac::<Sha256>::new_from_slice(self.key.as_bytes()).expect("any key length");
        m.update(id.as_bytes());
        m
    }

    /// How long `addr` must wait before trying to sign in again, if it must.
    pub fn sign_in_wait(&self, addr: IpAddr) -> Option<Duration> {
        let mut fails = self.fails.lock().expect("fails lock");
        let now = Instant::now();
        fails.retain(|(t, _)| now.duration_since(*t) < WINDOW);
        let mine: Vec<Instant> = fails.iter().filter(|(_, a)| *a == addr).map(|(t, _)| *t).collect();
        let oldest = |v: &[Instant]| v.iter().min().map(|t| WINDOW.saturating_sub(now.duration_since(*t)));
        if mine.len() >= FAILS_PER_ADDRESS {
            return oldest(&mine);
        }
        if fails.len() >= FAILS_IN_ALL {
            return oldest(&fails.iter().map(|(t, _)| *t).collect::<Vec<_>>());
        }
        None
    }

    /// A failed sign-in from `addr`.
    pub fn failed(&self, addr: IpAddr) {
        self.fails.lock().expect("fails lock").push((Instant::now(), addr));
    }
}

fn alive(s: &Session, now: Instant) -> bool {
    now.duration_since(s.used) < IDLE && now.duration_since(s.made) < MAX_AGE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csrf_token_is_its_sessions_alone() {
        let s = Sessions::default();
        let (a, b) = (s.start(None), s.start(None));
        assert!(s.csrf_ok(&a, &s.csrf(&a)));
        assert!(!s.csrf_ok(&a, &s.csrf(&b)));
        assert!(!s.csrf_ok(&a, "") && !s.csrf_ok(&a, "not base64!"));
        assert!(!Sessions::default().csrf_ok(&a, &s.csrf(&a)), "another process's key");
    }

    #[test]
    fn signing_in_replaces_the_session_and_deleting_ends_every_one() {
        let s = Sessions::default();
        let t = TenantId::parse(&"a".repeat(48)).unwrap();
        let before = s.start(None);
        let after = s.sign_in(Some(&before), t.clone());
        assert_eq!(s.get(&before), None, "the old id opens nothing");
        assert_eq!(s.get(&after), Some(Some(t.clone())));
        let other = s.start(Some(t.clone()));
        s.end_all(&t);
        assert_eq!((s.get(&after), s.get(&other)), (None, None));
    }

    #[test]
    fn failed_sign_ins_are_limited_per_address() {
        let s = Sessions::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        for _ in 0..FAILS_PER_ADDRESS {
            assert_eq!(s.sign_in_wait(a), None);
            s.failed(a);
        }
        let wait = s.sign_in_wait(a).unwrap();
        assert!(wait > WINDOW - Duration::from_secs(5) && wait <= WINDOW);
        assert_eq!(s.sign_in_wait(b), None, "another address is not held back by a's failures");
    }
}
