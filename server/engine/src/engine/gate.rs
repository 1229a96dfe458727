//! The windows of one query share two things: request slots (`VITALS_CONCURRENCY`) and the page
//! cap (`VITALS_PAGE_CAP`, pages in all). Both go to the oldest window that is waiting, not to
//! whichever asked first: an answer can only claim days up to its first gap, so a page spent on a
//! later window while an earlier one still needs one is a page wasted. tokio's semaphore is first
//! come, first served, which is the wrong order here.
//!
//! A window keeps its slot from its first request until its last page is decoded, rather than handing it back
//! after each page: it has one request in flight at a time anyway, and a slot handed back while
//! the window decodes would go to a later window, so windows would take turns page by page and a
//! cap would leave every one of them unfinished. With one slot, windows run one after another.
//! The exception is a window sized to one page (`Gate::step_aside`): its page decodes while the
//! next window's request is on the wire, unless the cap is near.
//!
//! A quarter of the cap is kept for the oldest window still running: without it, windows running
//! together could spend the cap while the oldest still needs pages, and an answer cut that way
//! claims nothing, as would every call again from its `continue_from`. With it, a call makes
//! progress whenever its first window needs no more than a quarter of the cap. A window that may
//! not touch the reserve gives its slot back while it waits.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The page cap is spent: this window gets no further page.
#[derive(Debug, PartialEq, Eq)]
pub struct Capped;

/// Held by a window while it may still ask for pages; dropping it frees the window's slot.
pub struct Running {
    gate: Arc<Gate>,
    window: usize,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.gate.change(|s| {
            s.running.remove(&self.window);
            s.holding.remove(&self.window);
        });
    }
}

struct Waiter {
    /// Whether this request starts a new page (a retry of the same page does not).
    page: bool,
    tx: oneshot::Sender<Result<(), Capped>>,
}

struct State {
    /// Windows that may hold a slot at once (the provider's in-flight limit, which can move).
    slots: usize,
    pages: u32,
    /// Pages only the oldest running window may have.
    reserve: u32,
    /// Waiting requests by (window, arrival): the oldest window first.
    queue: BTreeMap<(usize, u64), Waiter>,
    arrivals: u64,
    /// Windows that may still ask for a page.
    running: BTreeSet<usize>,
    /// Windows holding a slot.
    holding: BTreeSet<usize>,
}

pub struct Gate {
    state: Mutex<State>,
}

impl Gate {
    /// A gate for `windows` windows (numbered from 0, oldest first), all running until their
    /// [`Running`] guard drops.
    pub fn new(slots: usize, pages: u32, windows: usize) -> Arc<Gate> {
        let state = State {
            slots: slots.max(1),
            pages,
            reserve: pages.div_ceil(4),
            queue: BTreeMap::new(),
            arrivals: 0,
            running: (0..windows).collect(),
            holding: BTreeSet::new(),
        };
        Arc::new(Gate { state: Mutex::new(state) })
    }

    /// The guard of `window`: when it drops, the window asks for nothing more.
    pub fn running(self: &Arc<Gate>, window: usize) -> Running {
        Running { gate: self.clone(), window }
    }

    /// Windows `from..from + n` join, after every window already here (the rest of a range,
    /// planned once its first windows showed how: engine/fetch.rs), each running until its guard drops.
    pub fn more(&self, from: usize, n: usize) {
        self.change(|s| s.running.extend(from..from + n));
    }

    /// Leave to send a request for `window` (smaller is older): a page of the cap when `page`,
    /// and the window's slot, kept until its guard drops.
    pub async fn acquire(self: &Arc<Gate>, window: usize, page: bool) -> Result<(), Capped> {
        let (tx, rx) = oneshot::channel();
        self.change(|s| {
            let n = s.arrivals;
            s.arrivals += 1;
            s.queue.insert((window, n), Waiter { page, tx });
        });
        // The gate never drops a waiter without an answer.
        rx.await.unwrap_or(Err(Capped))
    }

    /// `window`'s request was answered and its page is being decoded, and the window likely asks
    /// for no other (one sized to a page): while the cap has pages to spare for every slot beyond
    /// the reserve, its slot goes to the oldest window waiting now rather than after the decode
    /// (should it ask for another page, it waits for a slot again, first in line as the oldest).
    /// Near the cap the window keeps it, as the module says why.
    pub fn step_aside(&self, window: usize) {
        self.change(|s| {
            if s.pages > s.reserve.saturating_add(s.slots as u32) {
                s.holding.remove(&window);
            }
        });
    }

    /// The provider's in-flight limit moved: windows already holding a slot keep it (a request
    /// is not taken back), and new slots go out only while fewer than `n` are held.
    pub fn set_slots(&self, n: usize) {
        self.change(|s| s.slots = n.max(1));
    }

    /// Pages of the cap not yet given out.
    pub fn pages_left(&self) -> u32 {
        self.state.lock().expect("gate lock").pages
    }

    /// Apply `f`, then answer every waiter that can be answered now, oldest window first.
    fn change(&self, f: impl FnOnce(&mut State)) {
        let mut s = self.state.lock().expect("gate lock");
        f(&mut s);
        loop {
            let mut freed = false;
            let keys: Vec<(usize, u64)> = s.queue.keys().copied().collect();
            for k in keys {
                let w = k.0;
                let page = s.queue[&k].page;
                if page && s.pages == 0 {
                    // Nobody waiting for a page will get one: say so now rather than when a slot frees.
                    if let Some(waiter) = s.queue.remove(&k) {
                        let _ = waiter.tx.send(Err(Capped));
                    }
                    continue;
                }
                let oldest = s.running.first().is_none_or(|o| *o >= w);
                if page && !oldest && s.pages <= s.reserve {
                    // Only the reserve is left: wait for it without keeping a slot from the oldest.
                    if s.holding.remove(&w) {
                        freed = true;
                    }
                    continue;
                }
                let holds = s.holding.contains(&w);
                if !holds && s.holding.len() >= s.slots {
                    continue;
                }
                let Some(waiter) = s.queue.remove(&k) else {
                    continue;
                };
                // A waiter that has gone gets nothing; its guard frees whatever its window held.
                if waiter.tx.send(Ok(())).is_ok() {
                    if !holds {
                        s.holding.insert(w);
                    }
                    s.pages -= u32::from(page);
                }
            }
            if !freed {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Guards for windows `0..n`; the ones in `idle` are dropped at once.
    fn guards(gate: &Arc<Gate>, n: usize, idle: &[usize]) -> Vec<Option<Running>> {
        (0..n).map(|w| Some(gate.running(w)).filter(|_| !idle.contains(&w))).collect()
    }

    #[tokio::test]
    async fn a_window_keeps_its_slot_until_done_and_the_next_is_the_oldest_waiting() {
        let gate = Gate::new(1, 10, 2);
        let mut g = guards(&gate, 2, &[]);
        gate.acquire(0, true).await.unwrap();
        let gg = gate.clone();
        let second = tokio::spawn(async move { gg.acquire(1, true).await });
        tokio::task::yield_now().await;
        // Window 0's next page needs no other slot; window 1 waits for window 0 to be done.
        gate.acquire(0, true).await.unwrap();
        assert!(!second.is_finished());
        g[0] = None;
        assert_eq!(second.await.unwrap(), Ok(()));
        assert_eq!(gate.pages_left(), 7);
    }

    #[tokio::test]
    async fn windows_that_join_later_keep_the_reserve_for_the_oldest_of_them() {
        let gate = Gate::new(2, 4, 1);
        drop(gate.running(0));
        gate.more(1, 2);
        let (first, second) = (gate.running(1), gate.running(2));
        gate.acquire(1, true).await.unwrap();
        gate.acquire(2, true).await.unwrap();
        gate.acquire(1, true).await.unwrap();
        // One page left, the reserve (a quarter of 4): only window 1, the oldest running, may have it.
        let g = gate.clone();
        let waiting = tokio::spawn(async move { g.acquire(2, true).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "a window that joined later is not the oldest while window 1 runs");
        drop(first);
        assert_eq!(waiting.await.unwrap(), Ok(()));
        drop(second);
        assert_eq!(gate.pages_left(), 0);
    }

    #[tokio::test]
    async fn a_decoding_window_steps_aside_only_while_the_cap_has_pages_to_spare() {
        let gate = Gate::new(1, 100, 2);
        let _g = guards(&gate, 2, &[]);
        gate.acquire(0, true).await.unwrap();
        let gg = gate.clone();
        let second = tokio::spawn(async move { gg.acquire(1, true).await });
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "one slot, and window 0 holds it");
        gate.step_aside(0);
        assert_eq!(second.await.unwrap(), Ok(()), "the slot went to window 1 while window 0 decodes");
        // Window 0's next page waits for the slot again.
        let gg = gate.clone();
        let next = tokio::spawn(async move { gg.acquire(0, true).await });
        tokio::task::yield_now().await;
        assert!(!next.is_finished());
        gate.step_aside(1);
        assert_eq!(next.await.unwrap(), Ok(()));

        // Near the cap (no more pages than the reserve and one a slot), a window keeps its slot.
        let gate = Gate::new(1, 3, 2);
        let _g = guards(&gate, 2, &[]);
        gate.acquire(0, true).await.unwrap();
        gate.step_aside(0);
        let gg = gate.clone();
        let second = tokio::spawn(async move { gg.acquire(1, true).await });
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "window 0 kept its slot with 2 pages left");
        second.abort();
    }

    #[tokio::test]
    async fn a_lowered_limit_takes_no_slot_back_and_a_raised_one_lets_the_oldest_in() {
        let gate = Gate::new(2, 100, 3);
        let mut g = guards(&gate, 3, &[]);
        gate.acquire(0, true).await.unwrap();
        gate.acquire(1, true).await.unwrap();
        gate.set_slots(1);
        // Both holders go on; window 2 waits even when one of them is done, until fewer than one is held.
        gate.acquire(1, true).await.unwrap();
        let gg = gate.clone();
        let third = tokio::spawn(async move { gg.acquire(2, true).await });
        tokio::task::yield_now().await;
        g[0] = None;
        tokio::task::yield_now().await;
        assert!(!third.is_finished(), "one slot, and window 1 holds it");
        gate.set_slots(2);
        assert_eq!(third.await.unwrap(), Ok(()));
        g[1] = None;
    }

    #[tokio::test]
    async fn slots_go_oldest_first_and_the_cap_is_exact() {
        let gate = Gate::new(1, 3, 10);
        let mut g = guards(&gate, 10, &[0, 1, 3, 4, 6]);
        gate.acquire(5, true).await.unwrap();
        let order = Arc::new(Mutex::new(vec![]));
        let mut tasks = vec![];
        for w in [9, 7, 2, 8] {
            let (o, guard, gg) = (order.clone(), g[w].take(), gate.clone());
            tasks.push(tokio::spawn(async move {
                let got = gg.acquire(w, true).await;
                o.lock().unwrap().push((w, got.is_ok()));
                drop(guard);
            }));
            tokio::task::yield_now().await;
        }
        // Window 5 holds the slot: its second page goes out, one page is left (the reserve).
        gate.acquire(5, true).await.unwrap();
        g[5] = None;
        for t in tasks {
            t.await.unwrap();
        }
        // The last page goes to window 2, the oldest; 7, 8 and 9 are told the cap is spent.
        let got = order.lock().unwrap().clone();
        assert_eq!(got.iter().filter(|(_, ok)| *ok).map(|(w, _)| *w).collect::<Vec<_>>(), [2]);
        assert_eq!(got.len(), 4);
        assert_eq!(gate.pages_left(), 0);
        // A retry needs no page: it still gets a slot.
        assert!(gate.acquire(3, false).await.is_ok());
        assert_eq!(gate.acquire(4, true).await.err(), Some(Capped));
    }

    #[tokio::test]
    async fn a_quarter_of_the_cap_is_kept_for_the_oldest_running_window() {
        let gate = Gate::new(3, 4, 3);
        let g = guards(&gate, 3, &[]);
        for w in 0..3 {
            gate.acquire(w, true).await.unwrap();
        }
        // One page left, and it is the reserve: window 1 waits rather than take it.
        let gg = gate.clone();
        let more = tokio::spawn(async move { gg.acquire(1, true).await });
        tokio::task::yield_now().await;
        assert!(!more.is_finished());
        // The oldest window can still have its next page.
        gate.acquire(0, true).await.unwrap();
        assert_eq!(gate.pages_left(), 0);
        assert_eq!(more.await.unwrap(), Err(Capped));
        drop(g);

        // When the oldest finishes without it, the reserve goes to the next oldest.
        let gate = Gate::new(3, 4, 3);
        let mut g = guards(&gate, 3, &[]);
        for w in 0..3 {
            gate.acquire(w, true).await.unwrap();
        }
        let gg = gate.clone();
        let more = tokio::spawn(async move { gg.acquire(1, true).await });
        tokio::task::yield_now().await;
        assert!(!more.is_finished(), "window 0 still runs");
        g[0] = None;
        assert_eq!(more.await.unwrap(), Ok(()));
    }

    #[tokio::test]
    async fn a_waiter_that_gave_up_takes_no_slot() {
        let gate = Gate::new(1, 10, 3);
        let mut g = guards(&gate, 3, &[]);
        gate.acquire(0, true).await.unwrap();
        let gg = gate.clone();
        let waiting = tokio::spawn(async move { gg.acquire(1, true).await });
        tokio::task::yield_now().await;
        waiting.abort();
        let _ = waiting.await;
        g[0] = None;
        let again = tokio::time::timeout(Duration::from_secs(5), gate.acquire(2, true)).await;
        assert!(again.expect("the slot came back").is_ok());
        assert_eq!(gate.pages_left(), 8);
    }
}
