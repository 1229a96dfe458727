//! How densely an account's series fills time, so that its windows are sized for one page each.
//! A ring records anywhere from a few hundred to well over a thousand heart-rate samples a day:
//! windows sized for one twin's density take three pages where one would do, or two pages in a
//! row where two windows side by side would take one round trip. The first pages of a query (or
//! an earlier query of the same account, remembered here, in memory only) say samples per hour.
use crate::catalog::Split;
use std::collections::HashMap;
use std::sync::Mutex;

/// Samples per hour of one account's collection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerHour(pub f64);

/// A window's length, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct StepSeconds(pub i64);

/// The share of a page a sized window aims to fill: the rest is room for a busier hour than
/// average (a workout) before a second page is needed.
const FILL: f64 = 0.9;
/// Below this share, the catalog's own window is too sparse to keep.
const SPARSE: f64 = 0.6;
/// Sizes step by 2^(1/8) (9 %) from the catalog's window, so that a density measured a little
/// differently next time gives the same windows (and the cache serves them).
const RUNGS_PER_DOUBLING: f64 = 8.0;
const MIN_STEP: i64 = 900;
const MAX_STEP: i64 = 31 * 86_400;

/// The window step for a collection at `density`. The catalog's window is kept while one page
/// holds it and it fills at least [`SPARSE`] of one; otherwise the largest rung of the ladder
/// whose samples fill at most [`FILL`] of a page.
pub fn step(split: Split, density: Option<PerHour>) -> Option<StepSeconds> {
    let Split::Fill { hours, page_rows } = split else {
        return None;
    };
    let default = i64::from(hours.max(1)) * 3600;
    let Some(PerHour(d)) = density.filter(|d| d.0 > 0.0) else {
        return Some(StepSeconds(default));
    };
    let rows = f64::from(page_rows);
    let at_default = d * default as f64 / 3600.0;
    if at_default <= rows && at_default >= SPARSE * rows {
        return Some(StepSeconds(default));
    }
    let ideal = FILL * rows / d * 3600.0;
    let rung = (RUNGS_PER_DOUBLING * (ideal / default as f64).log2()).floor();
    let sized = (default as f64 * (rung / RUNGS_PER_DOUBLING).exp2()) as i64;
    Some(StepSeconds(sized.clamp(MIN_STEP, MAX_STEP)))
}

/// What this process has measured, per account and collection.
#[derive(Default)]
pub struct Densities(Mutex<HashMap<String, PerHour>>);

impl Densities {
    pub fn get(&self, key: &str) -> Option<PerHour> {
        self.0.lock().expect("density lock").get(key).copied()
    }

    /// Remember `samples` over `seconds` of closed, complete windows (nothing when there is too
    /// little to go by).
    pub fn learn(&self, key: String, samples: usize, seconds: i64) {
        if samples == 0 || seconds < 3600 {
            return;
        }
        let d = PerHour(samples as f64 * 3600.0 / seconds as f64);
        self.0.lock().expect("density lock").insert(key, d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HR: Split = Split::Fill { hours: 19, page_rows: 1000 };

    fn per_page(density_per_day: f64) -> (f64, i64) {
        let s = step(HR, Some(PerHour(density_per_day / 24.0))).unwrap().0;
        (density_per_day / 86_400.0 * s as f64, s)
    }

    #[test]
    fn windows_hold_one_page_at_every_density_and_keep_the_catalog_window_where_it_fits() {
        assert_eq!(step(HR, None), Some(StepSeconds(19 * 3600)), "nothing measured: the catalog's window");
        assert_eq!(per_page(1231.0).1, 19 * 3600, "the catalog's window fits one page at ~1,231 a day");
        for day in [50.0, 400.0, 800.0, 1_500.0, 2_500.0, 5_000.0, 20_000.0] {
            let (rows, s) = per_page(day);
            if s == 19 * 3600 {
                assert!((600.0..=1000.0).contains(&rows), "{day}/day: the catalog's window kept at {rows} rows");
            } else {
                assert!(rows <= 900.0, "{day}/day: {rows} rows a window");
                assert!(rows > 900.0 / 1.1 || s == MAX_STEP, "{day}/day: {rows} rows a window wastes the page");
            }
        }
        // Densities within one rung (9 %) of each other give the same windows.
        assert_eq!(per_page(415.0).1, per_page(435.0).1);
        assert!(per_page(400.0).1 > per_page(415.0).1, "a rung further");
        assert_eq!(step(Split::Hours(19), Some(PerHour(5.0))), None, "only Fill collections are sized");
    }

    #[test]
    fn too_little_data_teaches_nothing() {
        let d = Densities::default();
        d.learn("k".into(), 0, 86_400);
        d.learn("k".into(), 10, 60);
        assert_eq!(d.get("k"), None);
        d.learn("k".into(), 2_400, 86_400);
        assert_eq!(d.get("k"), Some(PerHour(100.0)));
    }
}
