//! One value per local day, and the few statistics every method here is built from. Days without
//! a value are absent, never zero: a gap is a gap, and pairs of "consecutive" days are pairs of
//! calendar neighbours, so a missing day never makes two days a week apart look like neighbours.
use jiff::civil::Date;
use jiff::ToSpan;
use std::collections::BTreeMap;

/// A daily metric: local day → that day's value.
pub type Days = BTreeMap<Date, f64>;

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The sample variance (n − 1); 0 for fewer than two values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Whether the values differ at all (sample-data scores do not; a method cannot judge them).
pub fn varies(d: &Days) -> bool {
    let mut it = d.values();
    it.next().is_some_and(|first| it.any(|x| x != first))
}

pub fn shift(d: Date, days: i64) -> Option<Date> {
    d.checked_add(days.days()).ok()
}

/// The values `k` calendar days apart, both present: (x(t), x(t + k)).
pub fn lagged(d: &Days, k: i64) -> Vec<(f64, f64)> {
    d.iter().filter_map(|(day, x)| shift(*day, k).and_then(|t| d.get(&t)).map(|y| (*x, *y))).collect()
}

/// Lag-`k` autocorrelation over calendar neighbours. Each sum is divided by its own count, so
/// missing days neither bias it towards 0 nor count as pairs. None: fewer than 3 pairs or no spread.
pub fn autocorrelation(d: &Days, k: i64) -> Option<f64> {
    let xs: Vec<f64> = d.values().copied().collect();
    let m = mean(&xs);
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64;
    let pairs = lagged(d, k);
    if pairs.len() < 3 || v <= 0.0 {
        return None;
    }
    let c = pairs.iter().map(|(a, b)| (a - m) * (b - m)).sum::<f64>() / pairs.len() as f64;
    Some(c / v)
}

pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 })
}

/// The median absolute change between calendar neighbours: what "a normal day's swing" is.
pub fn typical_daily_change(d: &Days) -> Option<f64> {
    median(lagged(d, 1).into_iter().map(|(a, b)| (b - a).abs()).collect())
}

/// The days of `d` from `start` to `end`, both inclusive.
pub fn between(d: &Days, start: Date, end: Date) -> Days {
    if start > end {
        return Days::new();
    }
    d.range(start..=end).map(|(k, v)| (*k, *v)).collect()
}

/// Rounded half-up (away from zero at the half) to three decimals, after removing the float
/// noise below the ninth decimal that would turn 0.0005 into 0.000499999.
pub fn round3(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let scaled = (x * 1e3 * 1e6).round() / 1e6;
    let r = scaled.round() / 1e3;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// How much smaller the sample variance of `n` days of an AR(1) series with lag-1
/// autocorrelation `rho` is expected to be than the series' own variance:
/// E[s²]/σ² = 1 − (2 / (n(n−1))) · Σₖ (n−k) ρᵏ.
pub fn variance_shrinkage(n: usize, rho: f64) -> f64 {
    if n < 2 {
        return 1.0;
    }
    let n_f = n as f64;
    let s: f64 = (1..n).map(|k| (n_f - k as f64) * rho.powi(k as i32)).sum();
    (1.0 - 2.0 * s / (n_f * (n_f - 1.0))).max(0.05)
}

/// The two-sided 95 % critical value of Student's t at `df` degrees of freedom (rounded down to a
/// whole number, as the tables that methods like this are checked against are).
pub fn t_critical(df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let df = df.floor().max(1.0);
    StudentsT::new(0.0, 1.0, df).map(|t| t.inverse_cdf(0.975)).unwrap_or(f64::INFINITY)
}

/// The two-sided 95 % critical value of the normal distribution.
pub fn z_critical() -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::new(0.0, 1.0).map(|n| n.inverse_cdf(0.975)).unwrap_or(1.959_963_984_540_054)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(vals: &[Option<f64>]) -> Days {
        let d0 = Date::constant(2026, 1, 1);
        vals.iter().enumerate().filter_map(|(i, v)| v.map(|v| (shift(d0, i as i64).unwrap(), v))).collect()
    }

    #[test]
    fn neighbours_are_calendar_neighbours_and_gaps_are_not_bridged() {
        let d = days(&[Some(1.0), Some(2.0), None, Some(4.0), Some(5.0)]);
        assert_eq!(lagged(&d, 1), vec![(1.0, 2.0), (4.0, 5.0)]);
        assert_eq!(typical_daily_change(&d), Some(1.0));
    }

    #[test]
    fn autocorrelation_by_hand() {
        // mean 3, variance (4+1+0+1+4)/5 = 2; lag-1 pairs (1,2)(2,3)(3,4)(4,5): (2+0+0+2)/4 = 1 → 0.5
        let d = days(&[Some(1.0), Some(2.0), Some(3.0), Some(4.0), Some(5.0)]);
        assert!((autocorrelation(&d, 1).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(autocorrelation(&days(&[Some(2.0), Some(2.0), Some(2.0), Some(2.0)]), 1), None);
    }

    #[test]
    fn rounding_is_half_up_at_three_decimals() {
        assert_eq!(round3(0.0005), 0.001);
        assert_eq!(round3(1.0005), 1.001);
        assert_eq!(round3(2.4994999), 2.499);
        assert_eq!(round3(-0.0005), -0.001);
        assert_eq!(round3(-0.0001), 0.0);
    }

    #[test]
    fn critical_values_match_the_tables() {
        assert!((t_critical(10.0) - 2.228).abs() < 1e-3);
        assert!((t_critical(30.9) - 2.042).abs() < 1e-3);
        assert!((z_critical() - 1.96).abs() < 1e-3);
    }
}
