//! Do two periods of one daily metric differ by more than its own day-to-day noise?
//!
//! A daily metric is autocorrelated: yesterday's readiness predicts today's, so 28 days carry
//! fewer than 28 independent looks at it, and a textbook t-test calls a third of ordinary
//! fluctuations "significant". The method (after mcp-oura's): the lag-1 autocorrelation ρ comes
//! from the 120 days before the earlier period, each period counts n·(1−ρ)/(1+ρ) effective days,
//! and the difference of means is judged against a Welch band t·SE at those effective days. One
//! step is ours: a period's sample variance of autocorrelated days is too small (its days are
//! spread less around their own mean than around the metric's), so it is divided by its expected
//! shrinkage under AR(1) before it enters the band (DECISIONS.md says why).
use super::days::{self, round3, Days};
use super::Verdict;
use schemars::JsonSchema;
use serde::Serialize;

/// Days of history the autocorrelation is estimated from, before the earlier period.
pub const HISTORY_DAYS: i64 = 120;
/// Fewer values than this in either period, and the comparison is not judged.
pub const MIN_PERIOD_DAYS: usize = 7;
pub const MIN_HISTORY_DAYS: usize = 60;
pub const MIN_HISTORY_PAIRS: usize = 20;
/// ρ is clamped here: at 1 a period would hold no independent day at all.
pub const MAX_RHO: f64 = 0.95;
/// With fewer effective days than this in a period, its variance says nothing.
pub const MIN_EFFECTIVE_DAYS: f64 = 2.0;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Comparison {
    pub verdict: Verdict,
    /// Why the method would not judge (`cannot_tell` only): what was missing, exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Period A's mean, in `unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_a: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_b: Option<f64>,
    /// mean_b − mean_a: positive when B is higher.
    #[serde(skip_serializing_if = "Option::is_none", rename = "difference_b_minus_a")]
    pub difference: Option<f64>,
    /// Half-width of the 95 % band a difference must leave to be outside the noise, in `unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_band: Option<f64>,
    /// Median change from a day to the next in the history, in `unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typical_daily_change: Option<f64>,
    pub days: PeriodDays,
    pub method: CompareMethod,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PeriodDays {
    /// Days with a value in period A, period B, and the history before them.
    pub a: usize,
    pub b: usize,
    pub history: usize,
    // Pairs of calendar-neighbour days in the history (what ρ is estimated from).
    pub history_pairs: usize,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompareMethod {
    pub name: &'static str,
    // Lag-1 autocorrelation of the history, clamped to [0, 0.95].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autocorrelation: Option<f64>,
    pub estimated_from_days: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_days: Option<EffectiveDays>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degrees_of_freedom: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_critical: Option<f64>,
    pub confidence: f64,
    pub variance: &'static str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EffectiveDays {
    pub a: f64,
    pub b: f64,
}

/// `history`: the days before period A (the method reads the last [`HISTORY_DAYS`] of them).
pub fn compare(history: &Days, a: &Days, b: &Days) -> Comparison {
    let pairs = days::lagged(history, 1).len();
    let mut out = Comparison {
        verdict: Verdict::CannotTell,
        why: None,
        mean_a: None,
        mean_b: None,
        difference: None,
        noise_band: None,
        typical_daily_change: days::typical_daily_change(history).map(round3),
        days: PeriodDays { a: a.len(), b: b.len(), history: history.len(), history_pairs: pairs },
        method: CompareMethod {
            name: "autocorrelation-corrected Welch comparison of means",
            autocorrelation: None,
            estimated_from_days: history.len(),
            effective_days: None,
            degrees_of_freedom: None,
            t_critical: None,
            confidence: 0.95,
            variance: "each period's sample variance, divided by its expected shrinkage under lag-1 autocorrelation",
        },
    };
    let (xa, xb): (Vec<f64>, Vec<f64>) = (a.values().copied().collect(), b.values().copied().collect());
    if !xa.is_empty() && !xb.is_empty() {
        let (ma, mb) = (days::mean(&xa), days::mean(&xb));
        out.mean_a = Some(round3(ma));
        out.mean_b = Some(round3(mb));
        out.difference = Some(round3(mb - ma));
    }
    let mut missing = vec![];
    if xa.len() < MIN_PERIOD_DAYS || xb.len() < MIN_PERIOD_DAYS {
        missing.push(format!("at least {MIN_PERIOD_DAYS} days with a value in each period (A has {}, B has {})", xa.len(), xb.len()));
    }
    if history.len() < MIN_HISTORY_DAYS {
        missing.push(format!(
            "at least {MIN_HISTORY_DAYS} days with a value in the {HISTORY_DAYS} days before period A, to learn how the metric swings (there are {})",
            history.len()
        ));
    } else if pairs < MIN_HISTORY_PAIRS {
        missing.push(format!("at least {MIN_HISTORY_PAIRS} pairs of consecutive days in that history (there are {pairs})"));
    }
    let mut all = history.clone();
    all.extend(a.iter().chain(b.iter()).map(|(k, v)| (*k, *v)));
    if !days::varies(&all) {
        missing.push("a metric that varies: every value is the same (sample data often is), so there is no noise to compare against".into());
    }
    if !missing.is_empty() {
        out.why = Some(format!("Cannot tell: this needs {}.", missing.join("; and ")));
        return out;
    }
    let rho = days::autocorrelation(history, 1).unwrap_or(0.0).clamp(0.0, MAX_RHO);
    let eff = |n: usize| n as f64 * (1.0 - rho) / (1.0 + rho);
    let (na, nb) = (eff(xa.len()), eff(xb.len()));
    out.method.autocorrelation = Some(round3(rho));
    out.method.effective_days = Some(EffectiveDays { a: round3(na), b: round3(nb) });
    if na < MIN_EFFECTIVE_DAYS || nb < MIN_EFFECTIVE_DAYS {
        out.why = Some(format!(
            "Cannot tell: the metric is so autocorrelated (ρ = {:.2}) that the periods hold {:.1} and {:.1} independent days; each needs at least \
             {MIN_EFFECTIVE_DAYS}. Longer periods would do.",
            rho, na, nb
        ));
        return out;
    }
    let va = days::variance(&xa) / days::variance_shrinkage(xa.len(), rho) / na;
    let vb = days::variance(&xb) / days::variance_shrinkage(xb.len(), rho) / nb;
    let se = (va + vb).sqrt();
    let df = if se > 0.0 { (va + vb).powi(2) / (va.powi(2) / (na - 1.0) + vb.powi(2) / (nb - 1.0)) } else { na + nb - 2.0 };
    let t = days::t_critical(df);
    let band = t * se;
    let diff = days::mean(&xb) - days::mean(&xa);
    out.method.degrees_of_freedom = Some(df.floor().max(1.0));
    out.method.t_critical = Some(round3(t));
    out.noise_band = Some(round3(band));
    out.verdict = if diff.abs() > band { Verdict::OutsideNoise } else { Verdict::WithinNoise };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::days::shift;
    use jiff::civil::Date;

    fn run(d0: Date, vals: &[f64]) -> Days {
        vals.iter().enumerate().map(|(i, v)| (shift(d0, i as i64).unwrap(), *v)).collect()
    }

    #[test]
    fn shrinkage_is_one_without_autocorrelation_and_known_for_two_days() {
        assert_eq!(days::variance_shrinkage(10, 0.0), 1.0);
        // n = 2: 1 − (2/2)·ρ = 1 − ρ
        assert!((days::variance_shrinkage(2, 0.4) - 0.6).abs() < 1e-12);
    }

    /// A hand-computed case: history alternates (ρ < 0, clamped to 0), periods of 7 days.
    #[test]
    fn a_known_band() {
        let d0 = Date::constant(2026, 1, 1);
        let hist: Vec<f64> = (0..120).map(|i| if i % 2 == 0 { 10.0 } else { 12.0 }).collect();
        let history = run(d0, &hist);
        let a = run(shift(d0, 120).unwrap(), &[10.0, 11.0, 12.0, 10.0, 11.0, 12.0, 11.0]);
        let b = run(shift(d0, 127).unwrap(), &[13.0, 14.0, 15.0, 13.0, 14.0, 15.0, 14.0]);
        let c = compare(&history, &a, &b);
        // ρ clamps to 0: 7 effective days each; s² = 4/6 each; SE = sqrt(2·(4/6)/7); df = 12.
        let se = (2.0 * (4.0 / 6.0) / 7.0_f64).sqrt();
        let band = 2.178_812_829_663_418 * se;
        assert_eq!(c.method.autocorrelation, Some(0.0));
        assert_eq!(c.method.degrees_of_freedom, Some(12.0));
        assert!((c.noise_band.unwrap() - round3(band)).abs() < 1e-9, "{:?}", c.noise_band);
        assert_eq!(c.difference, Some(3.0));
        assert_eq!(c.verdict, Verdict::OutsideNoise);
        assert_eq!(c.typical_daily_change, Some(2.0));
    }

    #[test]
    fn a_constant_metric_and_a_short_history_are_not_judged_and_say_why() {
        let d0 = Date::constant(2026, 1, 1);
        let c = compare(&run(d0, &[80.0; 120]), &run(shift(d0, 120).unwrap(), &[80.0; 10]), &run(shift(d0, 130).unwrap(), &[80.0; 10]));
        assert_eq!(c.verdict, Verdict::CannotTell);
        assert!(c.why.unwrap().contains("every value is the same"));
        let c = compare(&run(d0, &[1.0, 2.0, 3.0]), &run(shift(d0, 120).unwrap(), &[1.0, 2.0]), &run(shift(d0, 130).unwrap(), &[2.0; 10]));
        let why = c.why.unwrap();
        assert!(why.contains("A has 2, B has 10") && why.contains("(there are 3)"), "{why}");
    }
}
