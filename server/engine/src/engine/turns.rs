//! Turns on the cores for a query's page work (decoding a page, placing its records), one per core,
//! the oldest window first. Thirty pages worked on at once on two cores finish no sooner, only all
//! together; and in the order their answers came, the oldest windows' pages wait behind the
//! others', though it is the oldest that the answer merges first and that size the rest of a long
//! range (engine/rest.rs). A year of heart rate sent its second round 11–15 ms after its first
//! answers while pages were decoded in the order asked and placed all at once, and 7–8 ms after
//! with one turn a core, the oldest first (DECISIONS 140).
use std::collections::BinaryHeap;
use std::sync::Mutex;
use tokio::sync::oneshot;

pub struct Turns {
    state: Mutex<State>,
}

struct State {
    free: usize,
    waiting: BinaryHeap<Waiting>,
    /// Ties between pages of one window go to the one that asked first.
    asked: u64,
}

struct Waiting {
    /// (window index, order asked): the smallest goes first.
    rank: (usize, u64),
    wake: oneshot::Sender<()>,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Waiting) -> bool {
        self.rank == other.rank
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Waiting) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Waiting) -> std::cmp::Ordering {
        // A max-heap: reversed, so the oldest window is on top.
        other.rank.cmp(&self.rank)
    }
}

/// A turn held; dropping it hands it to the oldest waiting, or frees it.
pub struct Turn<'a> {
    turns: &'a Turns,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.turns.release();
    }
}

/// A wait for a turn; dropped after its turn was handed over but before it was taken (its call
/// ran out of time), it passes the turn on rather than losing it.
struct Pending<'a> {
    turns: &'a Turns,
    woken: Option<oneshot::Receiver<()>>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(mut woken) = self.woken.take() {
            woken.close();
            if woken.try_recv().is_ok() {
                self.turns.release();
            }
        }
    }
}

impl Turns {
    pub fn new(cores: usize) -> Turns {
        Turns { state: Mutex::new(State { free: cores.max(1), waiting: BinaryHeap::new(), asked: 0 }) }
    }

    /// A turn for work on a page of window `window` (its place in its query, oldest first).
    pub async fn take(&self, window: usize) -> Turn<'_> {
        let woken = {
            let mut s = self.state.lock().expect("turns lock");
            if s.free > 0 {
                s.free -= 1;
                return Turn { turns: self };
            }
            let (wake, woken) = oneshot::channel();
            s.asked += 1;
            let rank = (window, s.asked);
            s.waiting.push(Waiting { rank, wake });
            woken
        };
        let mut pending = Pending { turns: self, woken: Some(woken) };
        if let Some(woken) = pending.woken.as_mut() {
            // The sender is only dropped by a hand-over to a wait that is gone: never this one.
            let _ = woken.await;
        }
        pending.woken = None;
        Turn { turns: self }
    }

    /// A turn given back: to the oldest window waiting whose wait is still there, else freed.
    fn release(&self) {
        let mut s = self.state.lock().expect("turns lock");
        while let Some(next) = s.waiting.pop() {
            if next.wake.send(()).is_ok() {
                return;
            }
        }
        s.free += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// With every turn taken, the oldest window waiting goes next, whatever order they asked in.
    #[tokio::test]
    async fn the_oldest_window_waiting_goes_next() {
        let turns = Arc::new(Turns::new(1));
        let held = turns.take(9).await;
        let order = Arc::new(Mutex::new(vec![]));
        let mut waits = vec![];
        for window in [5, 2, 7, 2] {
            let (turns, order) = (turns.clone(), order.clone());
            waits.push(tokio::spawn(async move {
                let _turn = turns.take(window).await;
                order.lock().unwrap().push(window);
            }));
            tokio::task::yield_now().await;
        }
        drop(held);
        for w in waits {
            w.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [2, 2, 5, 7]);
    }

    /// A wait given up after its turn was handed to it passes the turn on: none is lost.
    #[tokio::test]
    async fn a_wait_given_up_loses_no_turn() {
        let turns = Turns::new(1);
        let held = turns.take(0).await;
        {
            let waiting = turns.take(1);
            tokio::pin!(waiting);
            assert!(futures::poll!(waiting.as_mut()).is_pending());
            drop(held);
            // Handed over, then given up before it was taken.
        }
        let again = tokio::time::timeout(std::time::Duration::from_secs(5), turns.take(2)).await;
        assert!(again.is_ok(), "the turn was lost");
        assert_eq!(turns.state.lock().unwrap().free, 0);
        drop(again);
        assert_eq!(turns.state.lock().unwrap().free, 1);
    }
}
