//! After Garmin refuses a login from this network (429, 427, a Cloudflare 403, a CAPTCHA), no new
//! login is tried until the time is up, in this process or any other: the time is kept in
//! `garmin-connect-backoff.json` in the configuration folder (0600; no health data, no secret).
//! Logging in again at once is what keeps a network blocked (reference garmin/README.md §3).
use crate::config::Config;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

pub const FILE: &str = "garmin-connect-backoff.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Kept {
    /// Unix seconds until which no login is tried.
    until: i64,
    /// What Garmin answered, in words.
    why: String,
}

fn path(c: &Config) -> Option<(PathBuf, PathBuf)> {
    let dir = crate::accounts::default_dir(c)?;
    Some((dir.join(FILE), dir))
}

/// The sentence every refusal ends with, `wait` from now.
pub fn sentence(wait: Duration) -> String {
    let hours = wait.as_secs().div_ceil(3600).max(1);
    format!(
        "Garmin refused the login from this network; try again in {hours} hour{}, or import tokens from a tool that logged in from your \
         own network (vitals-mcp auth garmin-connect --import, or \"Use tokens from another Garmin tool\" in the settings app).",
        if hours == 1 { "" } else { "s" }
    )
}

/// Remember Garmin's refusal for `wait`, and say it.
pub fn refuse(why: &str, wait: Duration, c: &Config) -> String {
    let until = jiff::Timestamp::now().as_second() + wait.as_secs() as i64;
    if let Some((file, dir)) = path(c) {
        if let Err(e) = crate::accounts::store::write_json_private(&dir, &file, &Kept { until, why: why.to_string() }) {
            tracing::warn!("the Garmin login back-off could not be kept on disk ({e}); it holds for this process only");
        }
    }
    MEMORY.lock().expect("back-off lock").replace(until);
    format!("{} (Garmin answered: {why}.)", sentence(wait))
}

/// The back-off of a process whose file could not be written.
static MEMORY: std::sync::Mutex<Option<i64>> = std::sync::Mutex::new(None);

/// A refusal that still holds: no login is tried for `wait` more; `why`, what Garmin answered (if kept).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{} No login was tried.", sentence(*wait), if why.is_empty() { String::new() } else { format!(" (Garmin answered: {why}.)") })]
pub struct Held {
    pub wait: Duration,
    pub why: String,
}

/// Err while a refusal still holds.
pub fn check(c: &Config) -> Result<(), Held> {
    let now = jiff::Timestamp::now().as_second();
    let kept: Kept = path(c).and_then(|(f, _)| crate::accounts::store::read_json(&f).ok()).unwrap_or_default();
    let until = kept.until.max(MEMORY.lock().expect("back-off lock").unwrap_or(0));
    if until > now {
        return Err(Held { wait: Duration::from_secs((until - now) as u64), why: kept.why });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_sentence_counts_whole_hours() {
        assert!(super::sentence(std::time::Duration::from_secs(60)).contains("try again in 1 hour,"));
        assert!(super::sentence(std::time::Duration::from_secs(4 * 3600)).contains("try again in 4 hours,"));
        assert!(super::sentence(std::time::Duration::from_secs(4 * 3600 + 1)).contains("in 5 hours"));
    }
}
