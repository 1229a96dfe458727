//! Compact summaries of Polar's raw sensor strings, each with the method that made it and the
//! number of samples it came from: thousands of per-second values become a few numbers a model
//! can read, and nothing about how they were made is left to guess. Pure functions over
//! `Option<f64>` (None: the sensor was offline for that sample).
use serde_json::{json, Value};

/// Round to one decimal: these are summaries, not measurements.
pub fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Round to two decimals (paces in minutes, fractions of a kilometre).
pub fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn valid(xs: &[Option<f64>]) -> impl Iterator<Item = f64> + '_ {
    xs.iter().flatten().copied().filter(|x| x.is_finite())
}

/// `{min, avg, max, samples, missing, method}` of the valid samples; None when there are none.
pub fn min_avg_max(xs: &[Option<f64>], what: &str) -> Option<Value> {
    let v: Vec<f64> = valid(xs).collect();
    if v.is_empty() {
        return None;
    }
    let (min, max) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
    let avg = v.iter().sum::<f64>() / v.len() as f64;
    Some(json!({
        "min": r1(min), "avg": r1(avg), "max": r1(max),
        "samples": v.len(), "missing": xs.len() - v.len(),
        "method": format!("{what}: arithmetic mean, minimum and maximum of the valid samples (offline samples left out)"),
    }))
}

/// Normalised power: the 30-second rolling mean of power, each raised to the 4th power, their
/// mean, and its 4th root. A rolling window that holds an offline sample is left out, so a
/// dropout is not read as zero watts. Returns `{avg, normalized, max, variability_index, ...}`.
pub fn power(watts: &[Option<f64>], rate_s: f64) -> Option<Value> {
    let basic = min_avg_max(watts, "power")?;
    let avg = basic["avg"].as_f64()?;
    let window = (30.0 / rate_s.max(0.001)).round().max(1.0) as usize;
    let mut fourth = vec![];
    for w in watts.windows(window.min(watts.len()).max(1)) {
        if w.iter().all(Option::is_some) {
            let mean = w.iter().flatten().sum::<f64>() / w.len() as f64;
            fourth.push(mean.powi(4));
        }
    }
    let np = (!fourth.is_empty()).then(|| (fourth.iter().sum::<f64>() / fourth.len() as f64).powf(0.25));
    Some(json!({
        "avg_w": basic["avg"], "max_w": basic["max"],
        "normalized_w": np.map(r1),
        "variability_index": np.filter(|_| avg > 0.0).map(|np| r2(np / avg)),
        "samples": basic["samples"], "missing": basic["missing"],
        "method": format!(
            "normalized = 30 s rolling mean ({window} samples at {rate_s} s), 4th power, mean, 4th root; windows holding an offline sample \
             left out ({} windows used). variability_index = normalized / average.",
            fourth.len()
        ),
    }))
}

/// Ascent and descent: the sum of rises and of falls between consecutive valid altitude samples
/// (no smoothing, so a noisy barometer adds to both), and the elevation range.
pub fn elevation(alt: &[Option<f64>]) -> Option<Value> {
    let v: Vec<f64> = valid(alt).collect();
    let (first, rest) = v.split_first()?;
    let (mut up, mut down, mut lo, mut hi, mut prev) = (0.0, 0.0, *first, *first, *first);
    for x in rest {
        let d = x - prev;
        if d > 0.0 {
            up += d;
        } else {
            down -= d;
        }
        lo = lo.min(*x);
        hi = hi.max(*x);
        prev = *x;
    }
    Some(json!({
        "ascent_m": r1(up), "descent_m": r1(down), "min_m": r1(lo), "max_m": r1(hi),
        "samples": v.len(), "missing": alt.len() - v.len(),
        "method": "ascent/descent = sum of rises/falls between consecutive valid altitude samples, unsmoothed; min/max of the valid samples",
    }))
}

/// RR intervals (ms) → `{min, avg, max}` and RMSSD (root mean square of successive differences).
pub fn hrv(rr_ms: &[Option<f64>]) -> Option<Value> {
    let mut out = min_avg_max(rr_ms, "RR interval (ms)")?;
    let v: Vec<f64> = valid(rr_ms).collect();
    let diffs: Vec<f64> = v.windows(2).map(|w| (w[1] - w[0]).powi(2)).collect();
    let rmssd = (!diffs.is_empty()).then(|| (diffs.iter().sum::<f64>() / diffs.len() as f64).sqrt());
    out["rmssd_ms"] = json!(rmssd.map(r1));
    out["method"] = json!(
        "RR intervals (ms): mean, minimum, maximum of the valid intervals; rmssd = root mean square of the differences between consecutive valid intervals"
    );
    Some(out)
}

/// One row per whole kilometre: elapsed time, pace and average heart rate inside it. The
/// distance is the watch's cumulative distance samples where it sent them, else the speed
/// integrated (km/h × seconds); a kilometre mark is placed by linear interpolation between the
/// two samples around it. A last partial kilometre is said as `partial_km`.
pub fn km_splits(distance_m: Option<&[Option<f64>]>, speed_kmh: Option<&[Option<f64>]>, hr: Option<&[Option<f64>]>, rate_s: f64) -> Option<Value> {
    let (cumulative, source) = match (distance_m, speed_kmh) {
        (Some(d), _) if valid(d).next().is_some() => (carry_forward(d), "the watch's cumulative distance samples"),
        (_, Some(s)) if valid(s).next().is_some() => {
            // Sample i is the speed over [i, i+1) × rate: the distance at time i × rate is the sum before it.
            let mut acc = 0.0;
            let c: Vec<f64> = std::iter::once(0.0)
                .chain(s.iter().map(|x| {
                    acc += x.unwrap_or(0.0) / 3.6 * rate_s;
                    acc
                }))
                .collect();
            (c, "speed samples integrated (km/h ÷ 3.6 × seconds; offline samples count as standing still)")
        }
        _ => return None,
    };
    // Time (s from start) at which each whole kilometre was passed.
    let mut marks = vec![0.0];
    let mut next_km = 1000.0;
    for i in 1..cumulative.len() {
        let (a, b) = (cumulative[i - 1], cumulative[i]);
        while b >= next_km && b > a {
            let frac = (next_km - a) / (b - a);
            marks.push((i as f64 - 1.0 + frac) * rate_s);
            next_km += 1000.0;
        }
    }
    let total = cumulative.last().copied().unwrap_or(0.0);
    let rows: Vec<Value> = marks
        .windows(2)
        .enumerate()
        .map(|(k, w)| {
            let secs = w[1] - w[0];
            let avg_hr = hr.and_then(|h| {
                let (i, j) = ((w[0] / rate_s).floor() as usize, ((w[1] / rate_s).ceil() as usize).min(h.len()));
                let v: Vec<f64> = valid(h.get(i..j).unwrap_or(&[])).collect();
                (!v.is_empty()).then(|| r1(v.iter().sum::<f64>() / v.len() as f64))
            });
            json!({"km": k + 1, "time_s": r1(secs), "pace_min_per_km": r2(secs / 60.0), "avg_hr_bpm": avg_hr})
        })
        .collect();
    Some(json!({
        "splits": rows,
        "partial_km": r2((total - 1000.0 * (marks.len() - 1) as f64) / 1000.0),
        "total_m": r1(total),
        "samples": cumulative.len(),
        "method": format!(
            "distance from {source}; each kilometre mark by linear interpolation between the samples around it ({rate_s} s apart); \
             pace = split time / 1 km; avg_hr_bpm = mean of the valid heart-rate samples inside the split"
        ),
    }))
}

/// Offline distance samples repeat the last known distance (the watch did not move backwards).
fn carry_forward(d: &[Option<f64>]) -> Vec<f64> {
    let mut last = 0.0;
    d.iter()
        .map(|x| {
            if let Some(v) = x.filter(|v| v.is_finite()) {
                last = v;
            }
            last
        })
        .collect()
}

/// Least-squares slope of `(seconds, value)` points, per hour.
pub fn slope_per_hour(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| r2(sxy / sxx * 3600.0))
}

/// The lowest mean of any run of consecutive samples spanning `window_s` (the run's length from
/// the median spacing of the samples): the nadir of a night's heart rate without one odd sample
/// deciding it. Returns the nadir and the run length.
pub fn rolling_nadir(points: &[(f64, f64)], window_s: f64) -> Option<(f64, usize)> {
    let mut gaps: Vec<f64> = points.windows(2).map(|w| w[1].0 - w[0].0).filter(|g| *g > 0.0).collect();
    gaps.sort_by(f64::total_cmp);
    let spacing = gaps.get(gaps.len() / 2).copied()?;
    let k = ((window_s / spacing).round() as usize).clamp(1, points.len());
    let best = points.windows(k).map(|w| w.iter().map(|p| p.1).sum::<f64>() / k as f64).fold(f64::MAX, f64::min);
    Some((r1(best), k))
}

/// `{min, avg, max, trend_per_hour, samples}` of a night's timed samples, plus the rolling nadir
/// when `nadir_window_s` is given.
pub fn night_series(points: &[(f64, f64)], no_reading: usize, unit: &str, nadir_window_s: Option<f64>) -> Option<Value> {
    // Samples that were no reading (0) count as missing, as an offline sensor's do.
    let xs: Vec<Option<f64>> = points.iter().map(|p| Some(p.1)).chain(std::iter::repeat_n(None, no_reading)).collect();
    let mut out = min_avg_max(&xs, unit)?;
    out["trend_per_hour"] = json!(slope_per_hour(points));
    let mut method = format!("{unit}: mean, minimum, maximum of the samples; trend_per_hour = least-squares slope over the night, per hour");
    if let Some(w) = nadir_window_s {
        let nadir = rolling_nadir(points, w);
        out["nadir"] = json!(nadir.map(|n| n.0));
        let k = nadir.map_or(0, |n| n.1);
        method.push_str(&format!("; nadir = lowest mean of any {k} consecutive samples (a rolling {} min window)", w / 60.0));
    }
    out["method"] = json!(method);
    Some(out)
}

/// Hypnogram epochs (one stage digit per 30 s: 0 wake, 1 REM, 2 lighter non-REM, 3 light
/// non-REM, 4 deep, 5 unknown) → the night's architecture.
pub fn architecture(epochs: &str, epoch_s: u32) -> Option<Value> {
    let e: Vec<u8> = epochs.bytes().map(|b| b.wrapping_sub(b'0')).collect();
    if e.is_empty() {
        return None;
    }
    let min = |n: usize| r1(n as f64 * f64::from(epoch_s) / 60.0);
    let thirds = |stage: u8| -> Vec<f64> {
        let n = e.len();
        (0..3).map(|k| min(e[k * n / 3..(k + 1) * n / 3].iter().filter(|x| **x == stage).count())).collect()
    };
    // A REM episode ends a cycle; REM separated by less than 15 minutes is the same episode.
    let gap = (15 * 60 / epoch_s.max(1)) as usize;
    let (mut cycles, mut last_rem): (u32, Option<usize>) = (0, None);
    for (i, s) in e.iter().enumerate() {
        if *s == 1 {
            if last_rem.is_none_or(|l| i - l > gap) {
                cycles += 1;
            }
            last_rem = Some(i);
        }
    }
    let first_deep = e.iter().position(|s| *s == 4).map(min);
    Some(json!({
        "cycles": cycles,
        "deep_min_by_third": thirds(4),
        "rem_min_by_third": thirds(1),
        "time_to_first_deep_min": first_deep,
        "epochs": e.len(),
        "method": format!(
            "from the hypnogram's {epoch_s} s epochs between sleep start and end: cycles = REM episodes (REM less than 15 min apart is one \
             episode); deep/REM minutes in each third of the night; time_to_first_deep_min from sleep start"
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_power_of_a_steady_effort_is_its_average() {
        let w: Vec<Option<f64>> = vec![Some(200.0); 120];
        let p = power(&w, 1.0).unwrap();
        assert_eq!(p["normalized_w"], 200.0);
        assert_eq!(p["variability_index"], 1.0);
        // Surges raise normalised power above the average.
        let surges: Vec<Option<f64>> = (0..600).map(|i| Some(if (i / 60) % 2 == 0 { 100.0 } else { 300.0 })).collect();
        let p = power(&surges, 1.0).unwrap();
        assert!(p["normalized_w"].as_f64().unwrap() > 220.0, "{p}");
    }

    #[test]
    fn splits_interpolate_the_kilometre_marks() {
        // 5 m/s for 500 s = 2.5 km, one sample per second.
        let d: Vec<Option<f64>> = (0..=500).map(|i| Some(i as f64 * 5.0)).collect();
        let s = km_splits(Some(&d), None, None, 1.0).unwrap();
        let rows = s["splits"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["time_s"], 200.0);
        assert_eq!(rows[1]["pace_min_per_km"], 3.33);
        assert_eq!(s["partial_km"], 0.5);
        // The same run from speed alone.
        let v: Vec<Option<f64>> = vec![Some(18.0); 500];
        assert_eq!(km_splits(None, Some(&v), None, 1.0).unwrap()["splits"][0]["time_s"], 200.0);
    }

    #[test]
    fn architecture_counts_rem_episodes_and_thirds() {
        // 30 min light, 20 deep, 10 REM, 30 light, 10 REM (30 s epochs).
        let night = format!("{}{}{}{}{}", "2".repeat(60), "4".repeat(40), "1".repeat(20), "3".repeat(60), "1".repeat(20));
        let a = architecture(&night, 30).unwrap();
        assert_eq!(a["cycles"], 2);
        assert_eq!(a["time_to_first_deep_min"], 30.0);
        assert_eq!(a["deep_min_by_third"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).sum::<f64>(), 20.0);
    }

    #[test]
    fn nadir_and_slope() {
        let pts: Vec<(f64, f64)> = (0..12).map(|i| (i as f64 * 300.0, 60.0 - i as f64)).collect();
        assert_eq!(slope_per_hour(&pts), Some(-12.0));
        // Three 5-minute samples span 15 minutes: the last three are 51, 50, 49.
        assert_eq!(rolling_nadir(&pts, 900.0), Some((50.0, 3)));
        assert!(elevation(&[Some(10.0), None, Some(15.0), Some(12.0)]).unwrap()["ascent_m"] == 5.0);
    }
}
