//! What the process was started with: its environment, read once by the binary at start (with the
//! flags it overrides), and passed down from there. Code below the binary reads a `Config`, never
//! the environment, so a test can build a server with its own settings beside others in one
//! process, and a value cannot change under a running server.
use crate::time::Zone;
use std::collections::BTreeMap;
use std::time::Duration;

/// The variable that divides every provider's budget window ([`Config::time_scale`], [`crate::catalog::RateBudget::scaled`]).
pub const RATE_SCALE_ENV: &str = "VITALS_RATE_TIME_SCALE";

/// The settings of one server: variables by name, each already read as [`crate::env::read`] reads
/// one (trimmed; blank or an unsubstituted `${...}` placeholder is unset).
#[derive(Clone, Default)]
pub struct Config {
    vars: BTreeMap<String, String>,
}

/// Names only: a value may be a token (`OURA_PAT`), so none is ever printed.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config").field("set", &self.vars.keys().collect::<Vec<_>>()).finish()
    }
}

impl Config {
    /// This process's environment, now. Only the binary calls it, once, at start.
    pub fn from_env() -> Config {
        Config::from_pairs(std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))))
    }

    /// Settings as a test (or a host embedding the server) gives them, read as the environment is.
    pub fn from_pairs<K: Into<String>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Config {
        let mut c = Config::default();
        for (k, v) in pairs {
            c = c.with(k, v.as_ref());
        }
        c
    }

    /// This configuration with `name` set to `value` (unset when `value` is blank or a placeholder).
    pub fn with(mut self, name: impl Into<String>, value: &str) -> Config {
        let name = name.into();
        match crate::env::read(value) {
            Some(v) => self.vars.insert(name, v),
            None => self.vars.remove(&name),
        };
        self
    }

    /// The variable's value; None when unset, blank, or an unsubstituted placeholder.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// A switch: `1`, `true`, `yes` or `on` (any case) is on; anything else, or not set, is off.
    pub fn flag(&self, name: &str) -> bool {
        self.var(name).is_some_and(crate::env::is_on)
    }

    /// A number, or None when unset or not one.
    pub fn number<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.var(name).and_then(|v| v.parse().ok())
    }

    /// `var`, else `default`: a provider's endpoint the tests point at the twin.
    pub fn url(&self, name: &str, default: &str) -> String {
        self.var(name).unwrap_or(default).trim_end_matches('/').to_string()
    }

    /// The zone of local days when a call names none: `VITALS_TZ`, else the machine's.
    pub fn zone(&self) -> Zone {
        Zone::default_in(self.var("VITALS_TZ"))
    }

    /// How long one request may take (`VITALS_HTTP_TIMEOUT_MS`, default 30 s).
    pub fn http_timeout(&self) -> Duration {
        Duration::from_millis(self.number("VITALS_HTTP_TIMEOUT_MS").unwrap_or(30_000))
    }

    /// How many times faster than a provider's own its budget windows run: `VITALS_RATE_TIME_SCALE`
    /// (1, the provider's own, unless a test's twin runs its windows that much faster; 0 is no scale).
    pub fn time_scale(&self) -> u32 {
        self.number::<u32>(RATE_SCALE_ENV).filter(|s| *s > 0).unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_as_the_environment_is_and_never_printed() {
        let c = Config::from_pairs([("A", "${user_config.oura_client_id}"), ("B", "  "), ("C", " abc "), ("D", "TRUE"), ("OURA_PAT", "tok-SECRET")]);
        assert_eq!((c.var("A"), c.var("B"), c.var("C")), (None, None, Some("abc")));
        assert!(c.flag("D") && !c.flag("A") && !c.flag("C"));
        assert!(!format!("{c:?}").contains("tok-SECRET"));
        assert_eq!(c.clone().with("C", "").var("C"), None);
    }

    #[test]
    fn two_configurations_in_one_process_keep_their_own_values() {
        let (a, b) = (Config::default().with("VITALS_TZ", "+02:00"), Config::default().with("VITALS_TZ", "-06:00"));
        assert_eq!((a.zone().name.as_str(), b.zone().name.as_str()), ("+02:00", "-06:00"));
        assert_eq!(a.url("X", "https://host/"), "https://host");
        assert_eq!(a.clone().with("X", "http://127.0.0.1:9/").url("X", "https://host"), "http://127.0.0.1:9");
    }
}
