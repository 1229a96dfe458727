//! Is a daily metric drifting? The least-squares slope against the calendar, per 30 days, with
//! an interval that accounts for autocorrelation: days that follow each other are not
//! independent, so the slope's standard error is widened by (1+ρ)/(1−ρ) — an effective number of
//! days — where ρ is the lag-1 autocorrelation of the residuals, corrected for the bias a short
//! series puts on it (it reads low by about (1 + 4ρ)/n once a line is fitted). A plain OLS
//! interval on daily data calls a rising or falling metric in a third of flat ones.
use super::days::{self, round3, Days};
use super::Verdict;
use jiff::civil::Date;
use schemars::JsonSchema;
use serde::Serialize;

pub const MIN_DAYS: usize = 14;
/// Fewer effective days than this, and a slope says nothing.
pub const MIN_EFFECTIVE_DAYS: f64 = 10.0;
pub const MAX_RHO: f64 = 0.95;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Trend {
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The fitted change over 30 days, in `unit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slope_per_30_days: Option<f64>,
    /// Its 95 % interval, [low, high].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// The fitted values at the first and the last day.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fitted_start: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fitted_end: Option<f64>,
    pub days: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typical_daily_change: Option<f64>,
    pub method: TrendMethod,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TrendMethod {
    pub name: &'static str,
    // Lag-1 autocorrelation of the residuals, bias-corrected, clamped to [0, 0.95].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autocorrelation: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_days: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degrees_of_freedom: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_critical: Option<f64>,
    pub confidence: f64,
}

pub struct Line {
    pub slope: f64,
    pub intercept: f64,
    pub residuals: Days,
    /// Σ(t − t̄)².
    pub sxx: f64,
}

/// Least squares of value on the day number (days since `origin`).
pub fn fit(d: &Days, origin: Date) -> Option<Line> {
    let pts: Vec<(f64, f64)> = d.iter().map(|(day, v)| ((*day - origin).get_days() as f64, *v)).collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let (mt, mv) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mt).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = pts.iter().map(|p| (p.0 - mt) * (p.1 - mv)).sum::<f64>() / sxx;
    let intercept = mv - slope * mt;
    let residuals = d.iter().zip(&pts).map(|((day, _), (t, v))| (*day, v - (intercept + slope * t))).collect();
    Some(Line { slope, intercept, residuals, sxx })
}

pub fn trend(d: &Days) -> Trend {
    let mut out = Trend {
        verdict: Verdict::CannotTell,
        why: None,
        slope_per_30_days: None,
        interval: None,
        fitted_start: None,
        fitted_end: None,
        days: d.len(),
        typical_daily_change: days::typical_daily_change(d).map(round3),
        method: TrendMethod {
            name: "least-squares slope, standard error widened for lag-1 autocorrelation of the residuals (effective days)",
            autocorrelation: None,
            effective_days: None,
            degrees_of_freedom: None,
            t_critical: None,
            confidence: 0.95,
        },
    };
    if !days::varies(d) {
        out.why = Some("Cannot tell: every value is the same (sample data often is), so there is nothing to fit.".into());
        return out;
    }
    let (Some((first, _)), Some((last, _))) = (d.first_key_value(), d.last_key_value()) else {
        out.why = Some("Cannot tell: there are no values.".into());
        return out;
    };
    let span = (*last - *first).get_days() + 1;
    if d.len() < MIN_DAYS || span < MIN_DAYS as i32 {
        out.why = Some(format!(
            "Cannot tell: a trend needs at least {MIN_DAYS} days with a value spread over {MIN_DAYS} days or more; there are {} over {span}.",
            d.len()
        ));
        return out;
    }
    let Some(line) = fit(d, *first) else {
        out.why = Some("Cannot tell: the days do not spread in time.".into());
        return out;
    };
    let n = d.len() as f64;
    let raw = days::autocorrelation(&line.residuals, 1).unwrap_or(0.0);
    let rho = (raw + (2.0 + 4.0 * raw.max(0.0)) / n).clamp(0.0, MAX_RHO);
    let eff = n * (1.0 - rho) / (1.0 + rho);
    out.method.autocorrelation = Some(round3(rho));
    out.method.effective_days = Some(round3(eff));
    out.slope_per_30_days = Some(round3(line.slope * 30.0));
    out.fitted_start = Some(round3(line.intercept));
    out.fitted_end = Some(round3(line.intercept + line.slope * f64::from(span - 1)));
    if eff < MIN_EFFECTIVE_DAYS {
        out.why = Some(format!(
            "Cannot tell: the residuals are so autocorrelated (ρ = {rho:.2}) that {} days hold {eff:.1} independent ones; a slope needs at least {MIN_EFFECTIVE_DAYS}. \
             A longer range would do; a metric that wanders like this may also have no single trend to find.",
            d.len()
        ));
        return out;
    }
    // Residuals of autocorrelated days spread less around the line than the days' own noise does.
    let s2 = line.residuals.values().map(|r| r * r).sum::<f64>() / (n - 2.0) / days::variance_shrinkage(d.len(), rho);
    let se = (s2 / line.sxx * (1.0 + rho) / (1.0 - rho)).sqrt();
    let df = eff - 2.0;
    let t = days::t_critical(df);
    let (lo, hi) = ((line.slope - t * se) * 30.0, (line.slope + t * se) * 30.0);
    out.method.degrees_of_freedom = Some(df.floor().max(1.0));
    out.method.t_critical = Some(round3(t));
    out.interval = Some([round3(lo), round3(hi)]);
    out.verdict = if lo > 0.0 {
        Verdict::Rising
    } else if hi < 0.0 {
        Verdict::Falling
    } else {
        Verdict::FlatWithinNoise
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::days::shift;

    #[test]
    fn a_straight_line_is_its_own_slope() {
        let d0 = Date::constant(2026, 3, 1);
        let d: Days = (0..20).map(|i| (shift(d0, i).unwrap(), 50.0 + 0.5 * i as f64)).collect();
        let l = fit(&d, d0).unwrap();
        assert!((l.slope - 0.5).abs() < 1e-12 && (l.intercept - 50.0).abs() < 1e-9);
        assert!(l.residuals.values().all(|r| r.abs() < 1e-9));
    }

    /// Hand-computed: t = 0..4, x = 1, 3, 2, 5, 4 → t̄ 2, x̄ 3, Sxx 10, Sxy = (−2)(−2)+(−1)(0)+0+1·2+2·1 = 8 → slope 0.8.
    #[test]
    fn a_known_slope() {
        let d0 = Date::constant(2026, 3, 1);
        let d: Days = [1.0, 3.0, 2.0, 5.0, 4.0].iter().enumerate().map(|(i, v)| (shift(d0, i as i64).unwrap(), *v)).collect();
        let l = fit(&d, d0).unwrap();
        assert!((l.slope - 0.8).abs() < 1e-12);
        assert!((l.intercept - 1.4).abs() < 1e-12);
        assert!((l.sxx - 10.0).abs() < 1e-12);
    }

    #[test]
    fn too_few_days_and_flat_values_say_why() {
        let d0 = Date::constant(2026, 3, 1);
        let few: Days = (0..5).map(|i| (shift(d0, i).unwrap(), i as f64)).collect();
        assert!(trend(&few).why.unwrap().contains("at least 14 days"));
        let flat: Days = (0..60).map(|i| (shift(d0, i).unwrap(), 7.0)).collect();
        assert_eq!(trend(&flat).verdict, Verdict::CannotTell);
    }
}
