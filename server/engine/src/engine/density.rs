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

/// What the first round of a query showed of the page cap against the rest of its range.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Pages of the cap not yet spent.
    pub pages_left: u32,
    /// Pages the first round's windows took each, on average (a window that spilled into a second
    /// page for its busiest hours counts two).
    pub pages_per_window: f64,
    /// The first round's window.
    pub first_step: StepSeconds,
    /// The rest of the range, in seconds.
    pub rest: StepSeconds,
}

/// Day-to-day spread allowed for when whole days are packed into pages.
const DAY_SPREAD: f64 = 0.03;
/// The longest window of whole days: its pages follow one another, one round trip each.
const MOST_DAYS: i64 = 7;

/// The window for the rest of a range when the page cap cannot hold it at `step`: windows of
/// whole days, as many as fill their pages best. A series denser at some hours than others (a
/// ring's day) spills windows sized for one page into a nearly empty second one, so a capped
/// answer would keep two thirds of the days its pages could hold; a window of whole days holds
/// the same count wherever it starts, and several days fill their last page better than one
/// (1,231 a day at 1,000 a page: 2 pages a day, or 9 pages for 7 days). Its pages come one
/// after another, so this is chosen only when the cap would otherwise cut the answer short;
/// otherwise `step` (one page a window, fetched side by side) stands.
pub fn thrifty(split: Split, density: Option<PerHour>, step: StepSeconds, b: Budget) -> StepSeconds {
    let (Split::Fill { page_rows, .. }, Some(PerHour(d))) = (split, density.filter(|d| d.0 > 0.0)) else {
        return step;
    };
    let rows = f64::from(page_rows.max(1));
    let at_step = if step == b.first_step { b.pages_per_window } else { (d * step.0 as f64 / 3600.0 / rows).ceil().max(1.0) };
    let windows = (b.rest.0 as f64 / step.0.max(1) as f64).ceil();
    if windows * at_step <= f64::from(b.pages_left) {
        return step;
    }
    let daily = d * 24.0 * (1.0 + DAY_SPREAD);
    let per_day = |k: i64| (k as f64 * daily / rows).ceil() / k as f64;
    let Some(best) = (1..=MOST_DAYS).min_by(|a, b| per_day(*a).total_cmp(&per_day(*b))) else {
        return step;
    };
    let now = at_step * 86_400.0 / step.0.max(1) as f64;
    if per_day(best) < now {
        StepSeconds(best * 86_400)
    } else {
        step
    }
}

/// What this process has measured, per account and collection.
#[derive(Default)]
pub struct Densities(Mutex<HashMap<String, Learnt>>);

#[derive(Clone, Copy)]
struct Learnt {
    per_hour: PerHour,
    /// Pages a window of this length took on average, when a first round measured it.
    pages: Option<(StepSeconds, f64)>,
}

impl Densities {
    pub fn get(&self, key: &str) -> Option<PerHour> {
        self.0.lock().expect("density lock").get(key).map(|l| l.per_hour)
    }

    /// Remember `samples` over `seconds` of closed, complete windows (nothing when there is too
    /// little to go by).
    pub fn learn(&self, key: String, samples: usize, seconds: i64) {
        if samples == 0 || seconds < 3600 {
            return;
        }
        let per_hour = PerHour(samples as f64 * 3600.0 / seconds as f64);
        let mut m = self.0.lock().expect("density lock");
        let pages = m.get(&key).and_then(|l| l.pages);
        m.insert(key, Learnt { per_hour, pages });
    }

    /// Remember that `windows` windows of `step` took `pages` pages (a first round's, all fetched),
    /// so a later query of the same account knows whether its windows spill before it starts.
    pub fn learn_pages(&self, key: &str, step: StepSeconds, pages: u32, windows: usize) {
        if pages == 0 || windows == 0 {
            return;
        }
        if let Some(l) = self.0.lock().expect("density lock").get_mut(key) {
            l.pages = Some((step, f64::from(pages) / windows as f64));
        }
    }

    /// Pages a window of `step` took on average, as measured.
    pub fn pages_per_window(&self, key: &str, step: StepSeconds) -> Option<f64> {
        self.0.lock().expect("density lock").get(key).and_then(|l| l.pages).filter(|(s, _)| *s == step).map(|(_, p)| p)
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
    fn under_a_cap_that_cannot_hold_the_rest_windows_are_whole_days_that_fill_their_pages() {
        let d = Some(PerHour(1231.0 / 24.0));
        let step = StepSeconds(19 * 3600);
        let budget = |pages_left, pages_per_window| Budget { pages_left, pages_per_window, first_step: step, rest: StepSeconds(280 * 86_400) };
        // 280 days at 19 hours, a window in two pages on average: 708 pages, 352 left.
        let s = thrifty(HR, d, step, budget(352, 1.5));
        assert_eq!(s, StepSeconds(7 * 86_400), "9 pages for 7 days: 1.29 pages a day against 1.89");
        // Enough pages left: one page a window, side by side.
        assert_eq!(thrifty(HR, d, step, budget(800, 1.5)), step);
        // Windows that never spill cannot be beaten by whole days at this density.
        assert_eq!(thrifty(HR, d, step, budget(100, 1.0)), step);
        // Nothing known, or not a series sized by its density: as it was.
        assert_eq!(thrifty(HR, None, step, budget(10, 2.0)), step);
        assert_eq!(thrifty(Split::Days(1), d, step, budget(10, 2.0)), step);
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
