//! Do the day-to-day changes of two daily metrics move together beyond chance?
//!
//! Two metrics that both drift, or both follow the week (more steps and later nights on
//! Saturdays), correlate in their levels without one having anything to do with the other: a
//! plain correlation of levels calls that a relation most of the time. So (after mcp-oura's
//! method): each metric's weekday means are removed, only the changes between calendar
//! neighbours are correlated, the pairs are discounted for the autocorrelation the two change
//! series share (Bartlett: 1 + 2·Σ ρx(k)·ρy(k) over lags 1–3) and for the 12 weekday means
//! estimated, and the verdict reads a Fisher-z 95 % interval.
use super::days::{self, round3, shift, Days};
use super::Verdict;
use jiff::civil::Date;
use schemars::JsonSchema;
use serde::Serialize;

/// Fewer effective pairs than this, and the method does not judge (about three months of days).
pub const MIN_EFFECTIVE_PAIRS: f64 = 20.0;
/// Degrees of freedom spent on the weekday means (6 per metric).
pub const WEEKDAY_DF: f64 = 12.0;
pub const MAX_LAG: i64 = 7;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Relation {
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Pearson correlation of the paired day-to-day changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correlation: Option<f64>,
    /// Its 95 % interval, [low, high].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// Pairs of changes: x's change into day t with y's change into day t + lag.
    pub pairs: usize,
    // The earliest pair: which x day met which y day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_pair: Option<FirstPair>,
    pub method: RelateMethod,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FirstPair {
    pub x_day: String,
    pub y_day: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelateMethod {
    pub name: &'static str,
    pub weekday_means_removed: bool,
    pub day_to_day_changes: bool,
    // Pairs ÷ the Bartlett factor, minus the 12 degrees of freedom of the weekday means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_pairs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autocorrelation_correction: Option<f64>,
    pub confidence: f64,
}

/// Each value minus the mean of its weekday over the series.
pub fn without_weekday_means(d: &Days) -> Days {
    let mut sum = [0.0; 7];
    let mut n = [0usize; 7];
    for (day, v) in d {
        let w = day.weekday().to_monday_zero_offset() as usize;
        sum[w] += v;
        n[w] += 1;
    }
    d.iter()
        .map(|(day, v)| (*day, v - sum[day.weekday().to_monday_zero_offset() as usize] / n[day.weekday().to_monday_zero_offset() as usize] as f64))
        .collect()
}

/// The change into each day from the calendar day before (both present), keyed by the later day.
pub fn changes(d: &Days) -> Days {
    d.iter().filter_map(|(day, v)| shift(*day, -1).and_then(|p| d.get(&p)).map(|prev| (*day, v - prev))).collect()
}

pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let n = pairs.len() as f64;
    let (mx, my) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx).powi(2);
        syy += (y - my).powi(2);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

pub fn relate(x: &Days, y: &Days, lag: i64) -> Relation {
    let (dx, dy) = (without_weekday_means(&changes(x)), without_weekday_means(&changes(y)));
    let mut paired: Vec<(Date, Date, f64, f64)> = vec![];
    for (t, a) in &dx {
        if let Some(b) = shift(*t, lag).and_then(|u| dy.get(&u).map(|b| (u, *b))) {
            paired.push((*t, b.0, *a, b.1));
        }
    }
    let pairs: Vec<(f64, f64)> = paired.iter().map(|p| (p.2, p.3)).collect();
    let mut out = Relation {
        verdict: Verdict::CannotTell,
        why: None,
        correlation: None,
        interval: None,
        pairs: pairs.len(),
        first_pair: paired.first().map(|p| FirstPair { x_day: p.0.to_string(), y_day: p.1.to_string() }),
        method: RelateMethod {
            name: "correlation of day-to-day changes, weekday means removed, pairs corrected for autocorrelation (Bartlett), Fisher-z interval",
            weekday_means_removed: true,
            day_to_day_changes: true,
            effective_pairs: None,
            autocorrelation_correction: None,
            confidence: 0.95,
        },
    };
    let still: Vec<&str> = [("x", x), ("y", y)].into_iter().filter(|(_, d)| !days::varies(d)).map(|(n, _)| n).collect();
    if !still.is_empty() {
        out.why = Some(format!(
            "Cannot tell: {} never changed over the range (every value is the same; sample data often is), so nothing can move with it.",
            still.join(" and ")
        ));
        return out;
    }
    let rho = |d: &Days, k| days::autocorrelation(d, k).unwrap_or(0.0);
    let factor = (1.0 + 2.0 * (1..=3).map(|k| rho(&dx, k) * rho(&dy, k)).sum::<f64>()).max(1.0);
    let eff = pairs.len() as f64 / factor - WEEKDAY_DF;
    out.method.autocorrelation_correction = Some(round3(factor));
    out.method.effective_pairs = Some(round3(eff.max(0.0)));
    let Some(r) = pearson(&pairs) else {
        out.why = Some(format!("Cannot tell: {} pairs of day-to-day changes, and one of the two never changed across them.", pairs.len()));
        return out;
    };
    out.correlation = Some(round3(r));
    if eff < MIN_EFFECTIVE_PAIRS {
        out.why = Some(format!(
            "Cannot tell: {} pairs of consecutive-day changes count as {:.1} independent ones after the corrections; the method needs at least \
             {MIN_EFFECTIVE_PAIRS} (about three months of days in both metrics, consecutive days included).",
            pairs.len(),
            eff.max(0.0)
        ));
        return out;
    }
    let z = r.clamp(-0.999_999, 0.999_999).atanh();
    let half = days::z_critical() / (eff - 3.0).sqrt();
    let (lo, hi) = ((z - half).tanh(), (z + half).tanh());
    out.interval = Some([round3(lo), round3(hi)]);
    out.verdict = if lo > 0.0 || hi < 0.0 { Verdict::OutsideNoise } else { Verdict::WithinNoise };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_by_hand() {
        // x 1,2,3,4; y 2,4,5,9: mx 2.5, my 5; sxy = 1.5·3+0.5·1+0.5·0+1.5·4 = 11; sxx = 5; syy = 9+1+0+16 = 26
        let r = pearson(&[(1.0, 2.0), (2.0, 4.0), (3.0, 5.0), (4.0, 9.0)]).unwrap();
        assert!((r - 11.0 / (5.0_f64 * 26.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn weekday_means_and_changes() {
        let d0 = Date::constant(2026, 1, 5); // a Monday
        let d: Days = (0..14).map(|i| (shift(d0, i).unwrap(), if i % 7 == 5 { 10.0 + i as f64 } else { i as f64 })).collect();
        let w = without_weekday_means(&d);
        // Each weekday appears twice, 7 apart: minus its mean leaves −3.5 and +3.5.
        assert!(w.values().all(|v| (v.abs() - 3.5).abs() < 1e-12));
        let c = changes(&d);
        assert_eq!(c.len(), 13);
        assert_eq!(c[&shift(d0, 5).unwrap()], 11.0);
    }
}
