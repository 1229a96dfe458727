//! Series helpers every provider's decoder shares.
use serde_json::{json, Value};

/// The most slots an even series is given (one day at one second is 86,400).
const MAX_SLOTS: usize = 200_000;

/// Timed points → an evenly spaced series at their median spacing (a slot without a point is null).
pub fn even(points: &[(f64, f64)], start: &str) -> Value {
    let mut gaps: Vec<f64> = points.windows(2).map(|w| w[1].0 - w[0].0).filter(|g| *g > 0.0).collect();
    gaps.sort_by(f64::total_cmp);
    let interval = gaps.get(gaps.len() / 2).copied().unwrap_or(300.0).max(1.0);
    let first = points.first().map_or(0.0, |p| p.0);
    let slots = points.last().map_or(0, |l| ((l.0 - first) / interval).round() as usize + 1);
    // Times far apart for their spacing (a clock jump, a damaged sample) would make a series
    // mostly of nulls, as large as the gap: the points are given as they are instead, and said.
    if slots > MAX_SLOTS.max(points.len() * 16) {
        let pairs: Vec<Value> = points.iter().map(|(t, v)| json!([t - first, v])).collect();
        return json!({"start": start, "points": pairs, "note": "the samples' times are too far apart for an evenly spaced series: [seconds from start, value] pairs"});
    }
    let mut items = vec![Value::Null; slots];
    for (t, v) in points {
        if let Some(x) = items.get_mut(((t - first) / interval).round() as usize) {
            *x = json!(v);
        }
    }
    json!({"interval_s": interval, "start": start, "items": items})
}
