//! Load (issue 22): 200 `vitals_query` calls at once, over every provider and ranges from a day
//! to a quarter, in one server process. Every answer is complete or says what it lacks, no call
//! waits past its time budget (and a watchdog fails the test on a deadlock), no provider's budget
//! is exceeded across the calls (the twin counts: Withings' 120 requests a minute, WHOOP's 100,
//! Garmin's requests in flight, which a 429 would mean were passed), and the server's peak memory
//! stays under [`PEAK_RSS_MB`] (a debug build; the release build is measured by `cargo xtask bench`).
use crate::common;
use common::*;
use serde_json::{json, Value};

const CALLS: usize = 200;
/// The server's peak resident memory, debug build: what 200 answers in flight may take.
const PEAK_RSS_MB: u64 = 250;
const WATCHDOG: std::time::Duration = std::time::Duration::from_secs(240);

/// The queries, by provider: collection and length in days.
const MIX: [(&str, i64); 14] = [
    ("oura.heartrate", 2),
    ("oura.daily_sleep", 60),
    ("oura.daily_activity", 30),
    ("withings.measurements", 90),
    ("withings.activity", 30),
    ("withings.sleep", 14),
    ("polar.activity", 5),
    ("polar.sleep", 7),
    ("garmin.daily_summary", 6),
    ("garmin.sleep", 5),
    ("whoop.sleep", 10),
    ("whoop.recovery", 14),
    ("google_health.sleep", 10),
    ("google_health.resting_heart_rate", 14),
];

/// The providers of the registry the mix leaves out, and why.
const NOT_IN_THE_MIX: &[(&str, &str)] = &[
    ("garmin-connect", "Garmin's unofficial session is not connected here: the mix's garmin.* queries read Garmin's Personal API"),
    ("apple-health", "a file read in place: no budget or request in flight to hold"),
];

/// Every provider of the registry is in the mix, but those `NOT_IN_THE_MIX` names.
#[test]
fn every_provider_of_the_registry_is_in_the_mix() {
    for spec in vitals::providers::specs().filter(|s| s.connection.connects()) {
        let skipped = NOT_IN_THE_MIX.iter().any(|(p, _)| *p == spec.name);
        let mixed = MIX.iter().any(|(c, _)| c.split_once('.').is_some_and(|(ns, _)| ns == spec.namespace));
        assert!(mixed || skipped, "{}: no query of it in the load mix", spec.name);
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_queries_at_once_all_answer_within_budgets() {
    let twin = twin().await;
    twin.set_faults(Faults { latency_ms: 5, ..Default::default() });
    // Withings' and WHOOP's minutes, on the twin and in the server alike, last six seconds: the
    // calls spend the same budgets and the twin judges every window, a tenth as long each.
    twin.scale_minutes(10);
    let (s, withings) = all_providers(&twin, "load", &[("VITALS_RATE_TIME_SCALE", "10")]).await;
    // Found by its own config folder: other tests of this binary run servers at the same time.
    let pid = server_pid_for(&withings.dir);
    let calls = (0..CALLS).map(|i| {
        let (collection, days) = MIX[i % MIX.len()];
        // Ranges that overlap and differ, so some answers come from memory and most do not.
        let shift = (i / MIX.len()) as i64 % 7;
        let args = json!({"collection": collection, "start": ds(ago(days + shift)), "end": ds(ago(1 + shift)), "tz": TZ});
        let s = &s;
        async move {
            let t0 = std::time::Instant::now();
            let r = s.call_raw("vitals_query", args).await;
            (collection, r, t0.elapsed())
        }
    });
    let answers = tokio::time::timeout(WATCHDOG, futures_util::future::join_all(calls)).await.expect("every call answered before the watchdog (no deadlock)");

    let (mut complete, mut said, mut refused) = (0, 0, 0);
    let mut causes: std::collections::BTreeMap<String, usize> = Default::default();
    let slowest = answers.iter().map(|(_, _, took)| *took).max().unwrap_or_default();
    for (collection, r, _) in &answers {
        if r.is_error == Some(true) {
            let t = text(r);
            let ns = collection.split('.').next().unwrap_or_default();
            let display = vitals::providers::specs().find(|s| s.namespace == ns).map(|s| s.display).unwrap();
            assert!(t.contains(display), "{collection}: a refusal that does not name {display}: {t}");
            refused += 1;
            continue;
        }
        let a = r.structured_content.as_ref().unwrap();
        match &a["notices"]["truncated"] {
            Value::Null => complete += 1,
            t => {
                assert!(t["continue_from"].is_string() && t["reason"].is_string(), "{collection}: a cut that does not say where to go on: {t}");
                // Each provider's limits hold across the 200 calls, so calls queue; a call that would
                // wait past its time budget answers what is complete: at its deadline, or at once when
                // the provider's budget (vitals' count of it, or its rate headers) frees only after it.
                // No provider refused one (no 429, below). Nothing else may cut one.
                let cause = t["cause"].as_str().unwrap_or_default();
                let reason = t["reason"].as_str().unwrap_or_default();
                assert!(cause == "time_budget" || (cause == "rate_limited" && !reason.contains("429")), "{collection}: {t}");
                *causes.entry(format!("{collection} ({cause})")).or_default() += 1;
                said += 1;
            }
        }
        let recs = records(&a["data"]);
        let mut seen = std::collections::BTreeSet::new();
        for rec in &recs {
            assert!(seen.insert(rec.to_string()), "{collection}: a record twice: {rec}");
        }
    }
    let peak = peak_rss_mb(pid).unwrap_or(0);
    let over = twin.state.withings.lock().unwrap().over_budget;
    let (garmin_peak, garmin_429) = {
        let g = twin.state.garmin.lock().unwrap();
        (g.peak_in_flight, g.rate_limited)
    };
    let whoop_429 = twin.whoop(|w| w.rate_limited);
    let log = s.close().await;
    eprintln!(
        "load: {CALLS} queries at once: {complete} complete, {said} cut and said, {refused} refused; server peak RSS {peak} MB; \
         Withings over budget {over}; WHOOP 429s {whoop_429}; Garmin peak in flight {garmin_peak}, Garmin 429s {garmin_429}; cut by the time budget or a budget freeing after it: {causes:?}; \
         slowest answer {slowest:?}"
    );
    assert_eq!(complete + said + refused, CALLS);
    assert!(complete >= CALLS / 2, "most answers are complete: {complete} of {CALLS}");
    // Every call answers within the 45 s budget (with room for the answer to travel on a loaded debug build).
    assert!(slowest < std::time::Duration::from_secs(60), "the slowest call took {slowest:?}");
    assert_eq!(garmin_429, 0, "Garmin was asked past its two requests in flight");
    assert_eq!(over, 0, "Withings' 120 requests a minute were exceeded {over} times");
    assert_eq!(whoop_429, 0, "WHOOP's 100 requests a minute were exceeded {whoop_429} times");
    assert!(garmin_peak <= 2, "Garmin saw {garmin_peak} requests in flight");
    assert!(peak > 0 && peak <= PEAK_RSS_MB, "the server's peak RSS was {peak} MB (bound {PEAK_RSS_MB} MB)");
    assert!(!log.contains("panicked"), "the server panicked");
    assert!(!log.contains(&withings.access) && !log.contains(&withings.refresh) && !log.contains(TOKEN), "a secret in the log");
}
