//! Cutting one query into windows that can be fetched at the same time, and deciding which
//! records belong to which window so that the merge is exact: each record is kept by exactly one
//! window (its own), whatever overlap the upstream filters have at the edges.
use super::coverage::{Pos, Span};
use super::density::StepSeconds;
use super::flat::Fields;
use super::plan::{Plan, PAD_DAYS};
use super::record::record_day;
use crate::catalog::{CollectionSpec, RangeKind, Split};
use crate::providers::Window;
use crate::time::{rfc3339, Zone};
use jiff::civil::Date;
use jiff::{Timestamp, ToSpan};
use serde_json::Value;

/// The part of the asked range a window answers for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Own {
    /// Local days, both ends inclusive.
    Days(Date, Date),
    /// Instants, start inclusive, end exclusive.
    Instants(Timestamp, Timestamp),
    /// Everything upstream sends (range-less collections, `latest`).
    All,
}

/// One window: what is asked upstream and what of the answer it keeps.
#[derive(Debug, Clone)]
pub struct Piece {
    pub upstream: Window,
    pub own: Own,
    /// Only the first window keeps records whose day cannot be told, so they appear once.
    pub keeps_undated: bool,
}

const EPOCH: Date = jiff::civil::date(1970, 1, 1);

/// The windows of a plan, oldest first; `step`: the window of a [`Split::Fill`] collection
/// (engine/density.rs).
pub fn split(plan: &Plan, step: Option<StepSeconds>) -> Vec<Piece> {
    let c = plan.collection;
    let Some((s, e)) = plan.range else {
        let upstream = match (&plan.id, plan.latest) {
            (Some(id), _) => Window::Record(id.clone()),
            (None, true) => Window::Latest,
            (None, false) => Window::Unbounded,
        };
        return vec![Piece { upstream, own: Own::All, keeps_undated: true }];
    };
    let owns = match (c.range, c.split) {
        (RangeKind::DateTime, Split::Hours(h)) => hour_grid(&plan.zone, s, e, StepSeconds(i64::from(h) * 3600)),
        (RangeKind::DateTime, Split::Fill { hours, .. }) => hour_grid(&plan.zone, s, e, step.unwrap_or(StepSeconds(i64::from(hours) * 3600))),
        // A series read a local day (or n) per request: the days' instants.
        (RangeKind::DateTime, Split::Days(n)) => day_grid(s, e, n)
            .into_iter()
            .map(|o| match o {
                Own::Days(a, b) => Own::Instants(start_of(&plan.zone, a), start_of(&plan.zone, next(b))),
                other => other,
            })
            .collect(),
        (RangeKind::DateTime, _) => vec![Own::Instants(start_of(&plan.zone, s), start_of(&plan.zone, next(e)))],
        (_, Split::Days(n)) if fits_one_recent(s, e, n, plan.zone.today()) => vec![Own::Days(s, e)],
        (_, Split::Days(n)) => day_grid(s, e, n),
        (_, Split::Hours(h) | Split::Fill { hours: h, .. }) => day_grid(s, e, (h / 24).max(1)),
        (_, Split::Whole) => vec![Own::Days(s, e)],
    };
    pieces(plan, owns, true)
}

/// A range no longer than one window that reaches today is one request. The grid exists so a
/// closed window is the same window in the next query and the cache can serve it; a window that
/// reaches today is never kept, so cutting such a range on the grid would only cost a second
/// request over padded, overlapping days (a week of `vitals_today` across a grid line).
fn fits_one_recent(s: Date, e: Date, n: u32, today: Date) -> bool {
    i64::from((e - s).get_days()) < i64::from(n.max(1)) && e >= today
}

/// The windows of a plan's instants from `from` (a window's end) to the end of its range, at
/// `step`: the rest of a query once its first windows have shown the data's density.
pub fn split_from(plan: &Plan, from: Timestamp, step: StepSeconds) -> Vec<Piece> {
    let Some((_, e)) = plan.range else {
        return vec![];
    };
    pieces(plan, instant_grid(from.as_second(), start_of(&plan.zone, next(e)).as_second(), step), false)
}

/// `keeps_undated`: whether the first window is the query's first (the one that keeps records
/// whose day cannot be told).
fn pieces(plan: &Plan, owns: Vec<Own>, keeps_undated: bool) -> Vec<Piece> {
    let pad = if plan.collection.exact_days { 0 } else { PAD_DAYS };
    let piece = |(i, own): (usize, Own)| Piece { upstream: upstream_of(&own, &plan.zone, pad), own, keeps_undated: keeps_undated && i == 0 };
    owns.into_iter().enumerate().map(piece).collect()
}

fn next(d: Date) -> Date {
    d.tomorrow().unwrap_or(d)
}

fn start_of(zone: &Zone, d: Date) -> Timestamp {
    zone.day_start(d).timestamp()
}

/// The local days `[s, e]` as instants, cut on a grid of `step` fixed from the Unix epoch.
fn hour_grid(zone: &Zone, s: Date, e: Date, step: StepSeconds) -> Vec<Own> {
    instant_grid(start_of(zone, s).as_second(), start_of(zone, next(e)).as_second(), step)
}

/// The instants `[a, b)` cut on a grid of `step` fixed from the Unix epoch.
fn instant_grid(a: i64, b: i64, step: StepSeconds) -> Vec<Own> {
    let step = step.0.max(1);
    let mut out = vec![];
    let mut t = a;
    while t < b {
        let cell_end = (t.div_euclid(step) + 1) * step;
        let end = cell_end.min(b);
        out.push(Own::Instants(ts(t), ts(end)));
        t = end;
    }
    out
}

/// The days `[s, e]` cut on a grid of `n` days fixed from 1970-01-01.
fn day_grid(s: Date, e: Date, n: u32) -> Vec<Own> {
    let n = i64::from(n.max(1));
    let mut out = vec![];
    let mut d = s;
    while d <= e {
        let idx = (d - EPOCH).get_days() as i64;
        let cell_last = EPOCH.checked_add(((idx.div_euclid(n) + 1) * n - 1).days()).unwrap_or(e);
        let last = cell_last.min(e);
        out.push(Own::Days(d, last));
        d = next(last);
        if last == e {
            break;
        }
    }
    out
}

fn ts(s: i64) -> Timestamp {
    Timestamp::from_second(s).expect("instants of a civil date are in range")
}

/// What is asked upstream for a window: its days padded by `pad` on each side (covering exclusive
/// ends and UTC-filtered collections), or its instants.
fn upstream_of(own: &Own, zone: &Zone, pad: i64) -> Window {
    match own {
        Own::Days(a, b) => Window::Dates { start: a.checked_sub(pad.days()).unwrap_or(*a), end: b.checked_add(pad.days()).unwrap_or(*b) },
        Own::Instants(a, b) => Window::Instants { start: rfc3339(&a.to_zoned(zone.tz.clone())), end: rfc3339(&b.to_zoned(zone.tz.clone())) },
        Own::All => Window::Unbounded,
    }
}

/// The instant a record is at, from its first day key that holds one.
pub fn record_instant(rec: &impl Fields, c: &CollectionSpec) -> Option<Timestamp> {
    c.day_keys.iter().find_map(|k| rec.str_of(k).and_then(|s| s.parse::<Timestamp>().ok()))
}

/// Where a record fetched by a window belongs.
#[derive(Debug, PartialEq, Eq)]
pub enum Place {
    Mine,
    /// Kept although its day cannot be told (by the first window only).
    MineUndated,
    /// Another window's, or outside the asked days.
    Elsewhere,
}

impl Piece {
    /// Whether `rec` belongs to this window (and so to no other).
    pub fn place(&self, rec: &Value, c: &CollectionSpec, zone: &Zone) -> Place {
        self.locate(rec, c, zone).0
    }

    /// [`Piece::place`], and where the record is in time as this window reads it (its local day,
    /// or its instant for windows of instants), whatever the place: coverage reads the records
    /// of the padding too, and a series sample's timestamp is parsed once.
    pub fn locate(&self, rec: &impl Fields, c: &CollectionSpec, zone: &Zone) -> (Place, Option<Pos>) {
        let (pos, inside) = match &self.own {
            Own::All => return (Place::Mine, None),
            Own::Days(a, b) => {
                let d = record_day(rec, c, zone);
                (d.map(Pos::Day), d.map(|d| d >= *a && d <= *b))
            }
            Own::Instants(a, b) => {
                let t = record_instant(rec, c);
                (t.map(Pos::At), t.map(|t| t >= *a && t < *b))
            }
        };
        let place = match inside {
            Some(true) => Place::Mine,
            Some(false) => Place::Elsewhere,
            None if self.keeps_undated => Place::MineUndated,
            None => Place::Elsewhere,
        };
        (place, pos)
    }

    /// The span this window answers for, when it answers for a part of a range.
    pub fn span(&self) -> Option<Span> {
        match &self.own {
            Own::Days(a, b) => Some(Span::Days(*a, *b)),
            Own::Instants(a, b) => Some(Span::Instants(*a, *b)),
            Own::All => None,
        }
    }

    /// Whether every moment this window answers for ended before `today` began in `zone`:
    /// only such windows may be cached.
    pub fn closed_before(&self, today: Date, zone: &Zone) -> bool {
        match &self.own {
            Own::Days(_, b) => *b < today,
            Own::Instants(_, b) => *b <= start_of(zone, today),
            Own::All => false,
        }
    }

    /// The first local day this window answers for.
    pub fn first_day(&self, zone: &Zone) -> Option<Date> {
        match &self.own {
            Own::Days(a, _) => Some(*a),
            Own::Instants(a, _) => Some(a.to_zoned(zone.tz.clone()).date()),
            Own::All => None,
        }
    }

    /// The last local day this window answers for.
    pub fn last_day(&self, zone: &Zone) -> Option<Date> {
        match &self.own {
            Own::Days(_, b) => Some(*b),
            Own::Instants(_, b) => Some((*b - 1.second()).to_zoned(zone.tz.clone()).date()),
            Own::All => None,
        }
    }

    /// The instants this window answers for, when it answers for instants.
    pub fn instants(&self) -> Option<(Timestamp, Timestamp)> {
        match &self.own {
            Own::Instants(a, b) => Some((*a, *b)),
            _ => None,
        }
    }

    /// A stable name for this window, for the cache key and for logs.
    pub fn label(&self) -> String {
        match &self.own {
            Own::Days(a, b) => format!("{a}..{b}"),
            Own::Instants(a, b) => format!("{a}..{b}"),
            Own::All => "all".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn hours(o: &Own) -> i64 {
        match o {
            Own::Instants(a, b) => (b.as_second() - a.as_second()) / 3600,
            _ => panic!("not instants"),
        }
    }

    #[test]
    fn hour_windows_tile_the_local_days_exactly_across_dst() {
        let z = Zone::parse("America/Chicago").unwrap();
        // 2026-03-08 has 23 hours, 2026-11-01 has 25.
        for (s, e, total) in [(date(2026, 3, 7), date(2026, 3, 9), 71), (date(2026, 10, 31), date(2026, 11, 2), 73)] {
            let w = hour_grid(&z, s, e, StepSeconds(19 * 3600));
            assert_eq!(w.iter().map(hours).sum::<i64>(), total);
            for pair in w.windows(2) {
                match (&pair[0], &pair[1]) {
                    (Own::Instants(_, b), Own::Instants(a, _)) => {
                        assert_eq!(b, a, "no gap and no overlap")
                    }
                    _ => unreachable!(),
                }
            }
            assert!(w.iter().all(|o| hours(o) <= 19));
        }
    }

    #[test]
    fn grid_cells_are_the_same_whatever_the_range() {
        let z = Zone::parse("-06:00").unwrap();
        let a = hour_grid(&z, date(2026, 6, 1), date(2026, 6, 30), StepSeconds(19 * 3600));
        let b = hour_grid(&z, date(2026, 6, 10), date(2026, 6, 20), StepSeconds(19 * 3600));
        // Every interior window of the shorter range is a window of the longer one.
        for o in &b[1..b.len() - 1] {
            assert!(a.contains(o), "{o:?}");
        }
    }

    #[test]
    fn day_windows_cover_each_day_once() {
        let w = day_grid(date(2026, 5, 20), date(2026, 7, 3), 18);
        let mut days = vec![];
        for o in &w {
            let Own::Days(a, b) = o else { unreachable!() };
            let mut d = *a;
            while d <= *b {
                days.push(d);
                d = d.tomorrow().unwrap();
            }
        }
        assert_eq!(days.len(), 45);
        assert!(days.windows(2).all(|p| p[1] == p[0].tomorrow().unwrap()));
        assert_eq!(day_grid(date(2026, 6, 10), date(2026, 6, 10), 18), vec![Own::Days(date(2026, 6, 10), date(2026, 6, 10))]);
    }

    #[test]
    fn a_short_range_that_reaches_today_is_one_window() {
        let today = date(2026, 6, 10);
        // Eight days across the 18-day grid's line at 2026-06-07, up to today: one request.
        assert!(fits_one_recent(date(2026, 6, 3), today, 18, today));
        assert!(!fits_one_recent(date(2026, 6, 3), date(2026, 6, 9), 18, today), "closed: on the grid, for the cache");
        assert!(!fits_one_recent(date(2026, 5, 1), today, 18, today), "longer than a window");
        assert!(fits_one_recent(today, today, 1, today));
    }

    #[test]
    fn records_are_placed_by_their_own_local_day() {
        use crate::providers::oura::catalog::OURA;
        use serde_json::json;
        let z = Zone::parse("-06:00").unwrap();
        let w = OURA.collection("workout").unwrap();
        let piece = |keeps_undated| Piece { upstream: Window::Unbounded, own: Own::Days(date(2026, 7, 16), date(2026, 7, 17)), keeps_undated };
        // Without Oura's day, a workout is under the date it started where it was (the offset Oura
        // wrote), not the query's: 19:30 at -06:00 is the 17th; 01:30 on the 18th in Tokyo is the
        // 18th, although it is the 17th at -06:00.
        assert_eq!(piece(false).place(&json!({"start_datetime": "2026-07-17T19:30:00-06:00"}), w, &z), Place::Mine);
        assert_eq!(piece(false).place(&json!({"start_datetime": "2026-07-18T01:30:00+09:00"}), w, &z), Place::Elsewhere);
        assert_eq!(piece(false).place(&json!({"day": "2026-07-15"}), w, &z), Place::Elsewhere);
        assert_eq!(piece(true).place(&json!({"id": "d"}), w, &z), Place::MineUndated);
        assert_eq!(piece(false).place(&json!({"id": "d"}), w, &z), Place::Elsewhere);
        let hr = OURA.collection("heartrate").unwrap();
        let midnight = start_of(&z, date(2026, 7, 17));
        let p = Piece { upstream: Window::Unbounded, own: Own::Instants(midnight, midnight + 19.hours()), keeps_undated: false };
        assert_eq!(p.place(&json!({"timestamp": "2026-07-17T05:59:59+00:00"}), hr, &z), Place::Elsewhere);
        assert_eq!(p.place(&json!({"timestamp": "2026-07-17T06:00:00+00:00"}), hr, &z), Place::Mine);
        assert_eq!(p.place(&json!({"timestamp": "2026-07-18T01:00:00+00:00"}), hr, &z), Place::Elsewhere, "the end is exclusive");
    }

    #[test]
    fn only_windows_ended_before_today_are_closed() {
        let z = Zone::parse("-06:00").unwrap();
        let today = date(2026, 6, 10);
        let piece = |own| Piece { upstream: Window::Unbounded, own, keeps_undated: false };
        assert!(piece(Own::Days(date(2026, 6, 1), date(2026, 6, 9))).closed_before(today, &z));
        assert!(!piece(Own::Days(date(2026, 6, 1), date(2026, 6, 10))).closed_before(today, &z));
        let midnight = start_of(&z, today);
        assert!(piece(Own::Instants(midnight - 5.hours(), midnight)).closed_before(today, &z));
        assert!(!piece(Own::Instants(midnight - 5.hours(), midnight + 1.second())).closed_before(today, &z));
        assert!(!piece(Own::All).closed_before(today, &z));
    }
}
