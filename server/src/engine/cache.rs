//! Windows already fetched, in memory only (no health data ever reaches the disk), bounded by
//! bytes. The engine only offers it windows that closed before today and came back complete and
//! non-empty; this type refuses empty ones itself as well.
use serde_json::Value;
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
    /// The window's records as compact JSON: what is counted is what is held.
    body: String,
    pages: u32,
    fetched: Instant,
    expires: Option<Instant>,
    used: u64,
}

/// A window served from memory.
pub struct Hit {
    pub records: Vec<Value>,
    pub pages: u32,
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
        let records = serde_json::from_str(&e.body).ok()?;
        Some(Hit { records, pages: e.pages, age: e.fetched.elapsed() })
    }

    /// Keep a window. Empty windows are never kept: "nothing yet" must be asked again.
    pub fn keep(&self, key: String, records: &[Value], pages: u32, ttl: Option<Duration>) {
        if records.is_empty() || !self.enabled() {
            return;
        }
        let Ok(body) = serde_json::to_string(records) else { return };
        if body.len() > self.max_bytes {
            return;
        }
        let mut g = self.inner.lock().expect("cache lock");
        g.remove(&key);
        while g.bytes + body.len() > self.max_bytes {
            let Some(oldest) = g.map.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else { break };
            g.remove(&oldest);
        }
        g.tick += 1;
        g.bytes += body.len();
        let now = Instant::now();
        let used = g.tick;
        g.map.insert(key, Entry { body, pages, fetched: now, expires: ttl.map(|t| now + t), used });
    }

    /// Drop everything. Returns (windows, bytes) dropped.
    pub fn clear(&self) -> (usize, usize) {
        let mut g = self.inner.lock().expect("cache lock");
        let out = (g.map.len(), g.bytes);
        *g = Inner::default();
        out
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
            self.bytes -= e.body.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_windows_are_never_kept() {
        let c = Cache::new(1 << 20);
        c.keep("k".into(), &[], 1, None);
        assert!(c.get("k").is_none());
        assert_eq!(c.size(), (0, 0));
    }

    #[test]
    fn bytes_stay_under_the_bound_and_the_least_recent_goes_first() {
        let rec = vec![json!({"timestamp": "2026-06-01T00:00:00+00:00", "bpm": 60})];
        let one = serde_json::to_string(&rec).unwrap().len();
        let c = Cache::new(one * 2);
        c.keep("a".into(), &rec, 1, None);
        c.keep("b".into(), &rec, 1, None);
        assert!(c.get("a").is_some()); // a is now more recent than b
        c.keep("c".into(), &rec, 1, None);
        assert!(c.get("b").is_none());
        assert!(c.get("a").is_some() && c.get("c").is_some());
        assert!(c.size().1 <= one * 2);
        assert_eq!(c.clear().0, 2);
        assert!(c.get("a").is_none());
    }

    #[test]
    fn recent_windows_expire() {
        let c = Cache::new(1 << 20);
        c.keep("k".into(), &[json!({"id": "x"})], 1, Some(Duration::ZERO));
        assert!(c.get("k").is_none());
        let c0 = Cache::new(0);
        c0.keep("k".into(), &[json!({"id": "x"})], 1, None);
        assert!(c0.get("k").is_none(), "a zero-byte cache holds nothing");
    }
}
