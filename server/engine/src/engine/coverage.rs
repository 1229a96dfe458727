//! Which part of its span a window can vouch for, whatever order the provider pages in.
//!
//! A window that reached the provider's last page has every record of its span. One that stopped
//! early (page cap, failures, rate budget, a repeated page token) has some, and which ones depends
//! on the order of the pages, not on the order they reached us: oldest-first pages that stopped
//! after a record at `t` hold every record before `t`; newest-first pages hold every record after
//! it; pages in no known order hold nothing anyone can vouch for. The catalog says the order
//! (`PageOrder`), and every page is checked against it: one page that disagrees and the window
//! vouches for nothing it did not finish. The answer then claims only days that every window
//! covering them vouches for (engine/shape.rs cuts there).
use crate::catalog::PageOrder;
use crate::time::Zone;
use jiff::civil::Date;
use jiff::Timestamp;

/// Where a record is in time, as its window reads it: its local day (windows of days) or its
/// instant (windows of instants). Records of one window are all read the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pos {
    Day(Date),
    At(Timestamp),
}

impl Pos {
    pub fn instant(self) -> Option<Timestamp> {
        match self {
            Pos::At(t) => Some(t),
            Pos::Day(_) => None,
        }
    }

    fn day(self, zone: &Zone) -> Date {
        match self {
            Pos::Day(d) => d,
            Pos::At(t) => t.to_zoned(zone.tz.clone()).date(),
        }
    }
}

/// What a window's pages vouch for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covered {
    /// The provider said there were no more pages: every record of the window's span.
    Whole,
    /// Every record before this position (oldest-first pages that stopped after it).
    Before(Pos),
    /// Every record after this position (newest-first pages that stopped after it).
    After(Pos),
    /// Nothing: no page arrived, the pages had no dated record, or their order is not known.
    Nothing,
}

/// The pages of one window, as they arrive.
#[derive(Debug)]
pub struct Coverage {
    order: PageOrder,
    /// The earliest and latest positions of every page so far.
    lo: Option<Pos>,
    hi: Option<Pos>,
    /// A page came in an order other than the declared one.
    disagreed: bool,
    finished: bool,
}

impl Coverage {
    pub fn new(order: PageOrder) -> Coverage {
        Coverage { order, lo: None, hi: None, disagreed: false, finished: false }
    }

    /// A page arrived whose dated records span `[lo, hi]` (None: it had none). Records inside a
    /// page may be in any order; pages must follow each other in the declared order.
    pub fn page(&mut self, span: Option<(Pos, Pos)>) {
        let Some((lo, hi)) = span else { return };
        let agrees = match self.order {
            PageOrder::OldestFirst => self.hi.is_none_or(|h| lo >= h),
            PageOrder::NewestFirst => self.lo.is_none_or(|l| hi <= l),
            PageOrder::Unknown => true,
        };
        self.disagreed |= !agrees;
        self.lo = Some(self.lo.map_or(lo, |l| l.min(lo)));
        self.hi = Some(self.hi.map_or(hi, |h| h.max(hi)));
    }

    /// The provider said this was the last page.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Pages came in another order than the catalog says (so the catalog is wrong for this
    /// provider, or the provider changed).
    pub fn disagreed(&self) -> bool {
        self.disagreed
    }

    pub fn covered(&self) -> Covered {
        if self.finished {
            return Covered::Whole;
        }
        if self.disagreed {
            return Covered::Nothing;
        }
        // Records equal to the last position seen may continue on the next page: only what is
        // strictly before (or after) it is vouched for.
        match (self.order, self.lo, self.hi) {
            (PageOrder::OldestFirst, _, Some(h)) => Covered::Before(h),
            (PageOrder::NewestFirst, Some(l), _) => Covered::After(l),
            _ => Covered::Nothing,
        }
    }
}

/// A window's span: local days `[a, b]`, or instants `[a, b)`.
#[derive(Debug, Clone, Copy)]
pub enum Span {
    Days(Date, Date),
    Instants(Timestamp, Timestamp),
}

/// The first local day of `span` that `covered` does not vouch for in full, or None when it
/// vouches for the whole span.
pub fn first_gap(span: Span, covered: Covered, zone: &Zone) -> Option<Date> {
    let start = match span {
        Span::Days(a, _) => a,
        Span::Instants(a, _) => a.to_zoned(zone.tz.clone()).date(),
    };
    match (span, covered) {
        (_, Covered::Whole) => None,
        (_, Covered::Nothing) => Some(start),
        // Every day before `d` is whole; `d` itself may go on in the next page.
        (Span::Days(a, b), Covered::Before(p)) => {
            let d = p.day(zone);
            (d <= b).then_some(d.max(a))
        }
        (Span::Days(a, _), Covered::After(p)) => (p.day(zone) >= a).then_some(a),
        (Span::Instants(a, b), Covered::Before(p)) => match p {
            Pos::At(t) => (t < b).then(|| Pos::At(t.max(a)).day(zone)),
            Pos::Day(_) => Some(start),
        },
        (Span::Instants(a, _), Covered::After(p)) => match p {
            Pos::At(t) => (t >= a).then_some(start),
            Pos::Day(_) => Some(start),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;
    use jiff::ToSpan;

    fn day(d: Date) -> Option<(Pos, Pos)> {
        Some((Pos::Day(d), Pos::Day(d)))
    }

    #[test]
    fn oldest_first_vouches_for_the_days_before_the_last_one_seen() {
        let z = Zone::parse("UTC").unwrap();
        let mut c = Coverage::new(PageOrder::OldestFirst);
        c.page(Some((Pos::Day(date(2026, 6, 1)), Pos::Day(date(2026, 6, 3)))));
        c.page(day(date(2026, 6, 5)));
        let span = Span::Days(date(2026, 6, 2), date(2026, 6, 9));
        assert_eq!(first_gap(span, c.covered(), &z), Some(date(2026, 6, 5)));
        // Stopped in the padding after the span: the span is whole.
        c.page(day(date(2026, 6, 10)));
        assert_eq!(first_gap(span, c.covered(), &z), None);
    }

    #[test]
    fn newest_first_vouches_for_the_days_after_and_so_for_no_prefix() {
        let z = Zone::parse("UTC").unwrap();
        let mut c = Coverage::new(PageOrder::NewestFirst);
        c.page(Some((Pos::Day(date(2026, 6, 8)), Pos::Day(date(2026, 6, 11)))));
        let span = Span::Days(date(2026, 6, 2), date(2026, 6, 9));
        assert_eq!(first_gap(span, c.covered(), &z), Some(date(2026, 6, 2)));
        // Stopped in the padding before the span: the span is whole.
        c.page(day(date(2026, 5, 31)));
        assert_eq!(first_gap(span, c.covered(), &z), None);
    }

    #[test]
    fn a_page_out_of_the_declared_order_or_no_order_vouches_for_nothing() {
        let z = Zone::parse("UTC").unwrap();
        let span = Span::Days(date(2026, 6, 2), date(2026, 6, 9));
        let mut c = Coverage::new(PageOrder::OldestFirst);
        c.page(day(date(2026, 6, 12)));
        c.page(day(date(2026, 6, 4)));
        assert!(c.disagreed());
        assert_eq!(first_gap(span, c.covered(), &z), Some(date(2026, 6, 2)));
        let mut u = Coverage::new(PageOrder::Unknown);
        u.page(day(date(2026, 6, 12)));
        assert_eq!(u.covered(), Covered::Nothing);
        u.finish();
        assert_eq!(first_gap(span, u.covered(), &z), None, "a finished window is whole in any order");
        // Ties across pages are in order.
        let mut t = Coverage::new(PageOrder::NewestFirst);
        t.page(day(date(2026, 6, 5)));
        t.page(day(date(2026, 6, 5)));
        assert!(!t.disagreed());
    }

    #[test]
    fn instants_cut_at_the_local_day_of_the_first_instant_not_vouched_for() {
        let z = Zone::parse("-06:00").unwrap();
        let a: Timestamp = "2026-06-02T06:00:00Z".parse().unwrap(); // local midnight of the 2nd
        let span = Span::Instants(a, a + 19.hours());
        let mut c = Coverage::new(PageOrder::OldestFirst);
        let t: Timestamp = "2026-06-02T20:00:00Z".parse().unwrap();
        c.page(Some((Pos::At(a), Pos::At(t))));
        assert_eq!(first_gap(span, c.covered(), &z), Some(date(2026, 6, 2)));
        c.page(Some((Pos::At(a + 19.hours()), Pos::At(a + 19.hours()))));
        assert_eq!(first_gap(span, c.covered(), &z), None, "the last sample seen is at the span's end");
        assert_eq!(first_gap(span, Covered::Nothing, &z), Some(date(2026, 6, 2)));
    }
}
