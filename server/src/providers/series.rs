//! Series helpers every provider's decoder shares.
use serde_json::{json, Value};

/// Timed points → an evenly spaced series at their median spacing (a slot without a point is null).
pub fn even(points: &[(f64, f64)], start: &str) -> Value {
    let mut gaps: Vec<f64> = points.windows(2).map(|w| w[1].0 - w[0].0).filter(|g| *g > 0.0).collect();
    gaps.sort_by(f64::total_cmp);
    let interval = gaps.get(gaps.len() / 2).copied().unwrap_or(300.0).max(1.0);
    let first = points.first().map_or(0.0, |p| p.0);
    let slots = points.last().map_or(0, |l| ((l.0 - first) / interval).round() as usize + 1);
    let mut items = vec![Value::Null; slots];
    for (t, v) in points {
        if let Some(x) = items.get_mut(((t - first) / interval).round() as usize) {
            *x = json!(v);
        }
    }
    json!({"interval_s": interval, "start": start, "items": items})
}
