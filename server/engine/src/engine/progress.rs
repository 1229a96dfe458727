//! How far a long read is, for a client that asked (`progressToken`): pages done of pages known
//! (each window is one page until its provider says there is another), and the last day the answer
//! can already claim (the end of the finished windows before the first unfinished one). At most one
//! report every 250 ms: a year of heart rate is hundreds of pages.
use jiff::civil::Date;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const EVERY: Duration = Duration::from_millis(250);

/// Reports spaced at least [`EVERY`] apart: the first is due at once.
#[derive(Debug, Default)]
pub struct Throttle(Option<Instant>);

impl Throttle {
    /// Whether a report may go now (and if so, the next one waits [`EVERY`] from now).
    pub fn due(&mut self) -> bool {
        let now = Instant::now();
        if self.0.is_some_and(|t| now.duration_since(t) < EVERY) {
            return false;
        }
        self.0 = Some(now);
        true
    }
}

/// One report.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub done: u32,
    pub known: u32,
    pub message: String,
}

/// Where reports go (the MCP layer turns them into `notifications/progress`).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(Step) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

struct State {
    done: u32,
    known: u32,
    /// Windows finished, with their last day.
    finished: BTreeMap<usize, Option<Date>>,
    last: Throttle,
    /// How much of the provider's file was read before the first page (in %), once reported:
    /// counted as 100 steps before the pages, so progress only rises.
    file: Option<u32>,
}

/// One query's count, shared by its windows.
pub struct Tally {
    sink: Progress,
    collection: String,
    state: Mutex<State>,
}

impl Tally {
    pub fn new(sink: Progress, collection: String, windows: usize) -> Tally {
        let state = State { done: 0, known: windows as u32, finished: BTreeMap::new(), last: Throttle::default(), file: None };
        Tally { sink, collection, state: Mutex::new(state) }
    }

    /// A page came back; `more`: the provider said there is another for its window.
    pub fn page(&self, more: bool) {
        let step = {
            let mut s = self.state.lock().expect("progress lock");
            s.done += 1;
            s.known += u32::from(more);
            self.due(&mut s)
        };
        if let Some(step) = step {
            (self.sink.0)(step);
        }
    }

    /// The provider's file (`what`) is still being read: `percent` of it so far. Said only when it
    /// rose, as 100 steps ahead of the pages.
    pub fn reading(&self, what: &str, percent: u32) {
        let percent = percent.min(100);
        let step = {
            let mut s = self.state.lock().expect("progress lock");
            if s.file.is_some_and(|f| f >= percent) || !s.last.due() {
                return;
            }
            s.file = Some(percent);
            let message = format!("{}: waiting for {what} to be read, {percent} % so far", self.collection);
            Step { done: s.done + percent, known: s.known.max(s.done) + 100, message }
        };
        (self.sink.0)(step);
    }

    /// The windows not yet started were cut again: `before` of them are now `after`.
    pub fn replanned(&self, before: usize, after: usize) {
        let mut s = self.state.lock().expect("progress lock");
        s.known = (s.known + after as u32).saturating_sub(before as u32);
    }

    /// A window asks for nothing more (`last_day`: the last day it owns). A window served from
    /// memory counts as its one page.
    pub fn window_done(&self, window: usize, last_day: Option<Date>, from_memory: bool) {
        let step = {
            let mut s = self.state.lock().expect("progress lock");
            s.finished.insert(window, last_day);
            if from_memory {
                s.done += 1;
            }
            self.due(&mut s)
        };
        if let Some(step) = step {
            (self.sink.0)(step);
        }
    }

    fn due(&self, s: &mut State) -> Option<Step> {
        if !s.last.due() {
            return None;
        }
        // The finished windows from the first one on, without a hole: what the answer can claim.
        let reached = s.finished.iter().enumerate().take_while(|(i, (w, _))| *i == **w).filter_map(|(_, (_, d))| *d).last();
        let known = s.known.max(s.done);
        let day = reached.map_or_else(|| "no day complete yet".to_string(), |d| format!("complete through {d}"));
        let message = format!("{}: {} of {} pages known so far; {day}", self.collection, s.done, known);
        // A file read first counts as 100 steps before the pages.
        let file = s.file.map_or(0, |_| 100);
        Some(Step { done: s.done + file, known: known + file, message })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> (Progress, Arc<Mutex<Vec<Step>>>) {
        let seen = Arc::new(Mutex::new(vec![]));
        let s = seen.clone();
        (Progress(Arc::new(move |step| s.lock().unwrap().push(step))), seen)
    }

    #[test]
    fn reports_count_pages_and_the_day_reached_and_are_spaced() {
        let (sink, seen) = recorder();
        let t = Tally::new(sink, "oura.heartrate".into(), 3);
        t.page(true);
        // Within 250 ms of the first report: counted, not sent.
        t.page(false);
        t.window_done(1, Some(Date::constant(2026, 3, 2)), false);
        std::thread::sleep(EVERY + Duration::from_millis(20));
        t.window_done(0, Some(Date::constant(2026, 3, 1)), false);
        let s = seen.lock().unwrap().clone();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].done, s[0].known), (1, 4));
        assert!(s[0].message.contains("no day complete yet"));
        assert_eq!((s[1].done, s[1].known), (2, 4));
        assert!(s[1].message.starts_with("oura.heartrate: 2 of 4") && s[1].message.contains("complete through 2026-03-02"), "{}", s[1].message);
    }

    #[test]
    fn a_file_read_first_is_reported_as_it_rises_and_the_pages_count_above_it() {
        let (sink, seen) = recorder();
        let t = Tally::new(sink, "apple_health.activity".into(), 2);
        t.reading("the export", 30);
        std::thread::sleep(EVERY + Duration::from_millis(20));
        // Not risen: not said again.
        t.reading("the export", 30);
        t.reading("the export", 100);
        std::thread::sleep(EVERY + Duration::from_millis(20));
        t.page(false);
        let s = seen.lock().unwrap().clone();
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!((s[0].done, s[0].known), (30, 102));
        assert!(s[0].message.contains("waiting for the export to be read, 30 % so far"), "{}", s[0].message);
        assert_eq!((s[1].done, s[1].known), (100, 102));
        assert_eq!((s[2].done, s[2].known), (101, 102), "the pages after the file: {s:?}");
        assert!(s.windows(2).all(|w| w[1].done > w[0].done));
    }
}
