//! Windows already fetched, in memory only (no health data ever reaches the disk), bounded by
//! bytes. A window is kept as the page bodies the provider sent (no re-encoding, and what is
//! counted is what is held). The engine only offers windows that closed before today and came
//! back complete and non-empty; this type refuses empty ones itself as well.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Windows whose last day is this close to today may still change (a ring syncs the night late):
/// they are kept only for [`RECENT_TTL`].
pub const RECENT_DAYS: i64 = 2;
pub const RECENT_TTL: Duration = Duration::from_secs(600);

pub struct Cache {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Entry>,
    bytes: usize,
    tick: u64,
}

struct Entry {
    bodies: std::sync::Arc<Vec<Page>>,
    bytes: usize,
    fetched: Instant,
    expires: Option<Instant>,
    used: u64,
}

/// A page as it came, and the continuation it was asked with (a provider may read a page by it:
/// Garmin Connect's second route of a window).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub token: Option<String>,
    /// Shared with the records a series holds as their text in it (engine/flat.rs).
    pub body: std::sync::Arc<str>,
}

/// A window served from memory: the pages as they came.
pub struct Hit {
    pub bodies: std::sync::Arc<Vec<Page>>,
    pub age: Duration,
}

impl Cache {
    pub fn new(max_bytes: usize) -> Cache {
        Cache { max_bytes, inner: Mutex::new(Inner::default()) }
    }

    pub fn enabled(&self) -> bool {
        self.max_bytes > 0
    }

    pub fn get(&self, key: &str) -> Option<Hit> {
        let mut g = self.inner.lock().expect("cache lock");
        g.tick += 1;
        let tick = g.tick;
        let expired = g.map.get(key).is_some_and(|e| e.expires.is_some_and(|x| x <= Instant::now()));
        if expired {
            g.remove(key);
            return None;
        }
        let e = g.map.get_mut(key)?;
        e.used = tick;
        Some(Hit { bodies: e.bodies.clone(), age: e.fetched.elapsed() })
    }

    /// Keep a window's page bodies. Windows with no record (`records == 0`) are never kept:
    /// "nothing yet" must be asked again.
    pub fn keep(&self, key: String, bodies: Vec<Page>, records: usize, ttl: Option<Duration>) {
        let bytes: usize = bodies.iter().map(|p| p.body.len() + p.token.as_ref().map_or(0, String::len)).sum();
        if records == 0 || !self.enabled() || bytes > self.max_bytes {
            return;
        }
        let mut g = self.inner.lock().expect("cache lock");
        g.remove(&key);
        while g.bytes + bytes > self.max_bytes {
            let Some(oldest) = g.map.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else {
                break;
            };
            g.remove(&oldest);
        }
        g.tick += 1;
        g.bytes += bytes;
        let now = Instant::now();
        let used = g.tick;
        g.map.insert(key, Entry { bodies: std::sync::Arc::new(bodies), bytes, fetched: now, expires: ttl.map(|t| now + t), used });
    }

    /// Drop everything. Returns (windows, bytes) dropped.
    pub fn clear(&self) -> (usize, usize) {
        let mut g = self.inner.lock().expect("cache lock");
        let out = (g.map.len(), g.bytes);
        *g = Inner::default();
        out
    }

    /// Drop the windows whose key starts with `prefix` (one provider's). Returns (windows, bytes) dropped.
    pub fn clear_prefix(&self, prefix: &str) -> (usize, usize) {
        let mut g = self.inner.lock().expect("cache lock");
        let keys: Vec<String> = g.map.keys().filter(|k| k.starts_with(prefix)).cloned().collect();
        let before = g.bytes;
        for k in &keys {
            g.remove(k);
        }
        (keys.len(), before - g.bytes)
    }

    /// (windows, bytes) held now.
    pub fn size(&self) -> (usize, usize) {
        let g = self.inner.lock().expect("cache lock");
        (g.map.len(), g.bytes)
    }

    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }
}

impl Inner {
    fn remove(&mut self, key: &str) {
        if let Some(e) = self.map.remove(key) {
            self.bytes -= e.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Vec<Page> {
        vec![Page { token: None, body: r#"{"data":[{"timestamp":"2026-06-01T00:00:00+00:00","bpm":60}],"next_token":null}"#.into() }]
    }

    #[test]
    fn empty_windows_are_never_kept() {
        let c = Cache::new(1 << 20);
        c.keep("k".into(), vec![Page { token: None, body: r#"{"data":[],"next_token":null}"#.into() }], 0, None);
        assert!(c.get("k").is_none());
        assert_eq!(c.size(), (0, 0));
    }

    #[test]
    fn bytes_stay_under_the_bound_and_the_least_recent_goes_first() {
        let one = page()[0].body.len();
        let c = Cache::new(one * 2);
        c.keep("a".into(), page(), 1, None);
        c.keep("b".into(), page(), 1, None);
        assert!(c.get("a").is_some()); // a is now more recent than b
        c.keep("c".into(), page(), 1, None);
        assert!(c.get("b").is_none());
        assert!(c.get("a").is_some() && c.get("c").is_some());
        assert!(c.size().1 <= one * 2);
        assert_eq!(c.clear().0, 2);
        assert!(c.get("a").is_none());
    }

    #[test]
    fn recent_windows_expire() {
        let c = Cache::new(1 << 20);
        c.keep("k".into(), page(), 1, Some(Duration::ZERO));
        assert!(c.get("k").is_none());
        let c0 = Cache::new(0);
        c0.keep("k".into(), page(), 1, None);
        assert!(c0.get("k").is_none(), "a zero-byte cache holds nothing");
    }
}
