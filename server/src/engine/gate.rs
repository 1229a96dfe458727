//! The windows of one query share two things: request slots (`VITALS_CONCURRENCY`, requests in
//! flight) and the page cap (`VITALS_PAGE_CAP`, pages in all). Both go to the oldest window that
//! is waiting, not to whichever asked first: an answer can only claim days up to its first gap,
//! so a page spent on a later window while an earlier one still needs one is a page wasted. With
//! this order a cut loses at most the pages of the windows after the first gap (the ones already
//! in flight when the cap ran out), and a window's second page goes out before any later window's
//! first. tokio's semaphore is first come, first served, which is the wrong order here.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The page cap is spent: this window gets no further page.
#[derive(Debug, PartialEq, Eq)]
pub struct Capped;

/// Held from sending a request until its body has arrived.
pub struct Slot {
    gate: Arc<Gate>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.gate.release();
    }
}

struct Waiter {
    /// Whether this request starts a new page (a retry of the same page does not).
    page: bool,
    tx: oneshot::Sender<Result<Slot, Capped>>,
}

struct State {
    free: usize,
    pages: u32,
    /// Waiting requests by (window, arrival): the oldest window first.
    queue: BTreeMap<(usize, u64), Waiter>,
    arrivals: u64,
}

pub struct Gate {
    state: Mutex<State>,
}

impl Gate {
    pub fn new(slots: usize, pages: u32) -> Arc<Gate> {
        Arc::new(Gate { state: Mutex::new(State { free: slots.max(1), pages, queue: BTreeMap::new(), arrivals: 0 }) })
    }

    /// A request slot for `window` (smaller is older), and a page of the cap when `page`.
    pub async fn acquire(self: &Arc<Gate>, window: usize, page: bool) -> Result<Slot, Capped> {
        let rx = {
            let mut s = self.state.lock().expect("gate lock");
            if page && s.pages == 0 {
                return Err(Capped);
            }
            let older_waiting = s.queue.keys().next().is_some_and(|(w, _)| *w < window);
            if s.free > 0 && !older_waiting {
                s.free -= 1;
                s.pages -= u32::from(page);
                return Ok(Slot { gate: self.clone() });
            }
            let (tx, rx) = oneshot::channel();
            let n = s.arrivals;
            s.arrivals += 1;
            s.queue.insert((window, n), Waiter { page, tx });
            rx
        };
        // The gate never drops a waiter without an answer.
        rx.await.unwrap_or(Err(Capped))
    }

    /// Pages of the cap not yet given out.
    pub fn pages_left(&self) -> u32 {
        self.state.lock().expect("gate lock").pages
    }

    fn release(self: &Arc<Gate>) {
        // Answers whose waiter has gone are dropped after the lock is let go: dropping a slot
        // releases it again.
        let mut undelivered = vec![];
        {
            let mut s = self.state.lock().expect("gate lock");
            s.free += 1;
            while s.free > 0 {
                let Some((_, w)) = s.queue.pop_first() else { break };
                if w.page && s.pages == 0 {
                    let _ = w.tx.send(Err(Capped));
                    continue;
                }
                s.free -= 1;
                s.pages -= u32::from(w.page);
                if let Err(Ok(slot)) = w.tx.send(Ok(Slot { gate: self.clone() })) {
                    // Not this waiter's page after all: give it back, keep the slot's release for later.
                    s.pages += u32::from(w.page);
                    undelivered.push(slot);
                }
            }
            if s.pages == 0 {
                // Nobody waiting for a page will get one: say so now rather than when a slot frees.
                let capped: Vec<_> = s.queue.iter().filter(|(_, w)| w.page).map(|(k, _)| *k).collect();
                for k in capped {
                    if let Some(w) = s.queue.remove(&k) {
                        let _ = w.tx.send(Err(Capped));
                    }
                }
            }
        }
        drop(undelivered);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_oldest_waiting_window_is_served_first_and_the_cap_is_exact() {
        let gate = Gate::new(1, 3);
        let held = gate.acquire(5, true).await.unwrap();
        let order = Arc::new(Mutex::new(vec![]));
        let mut tasks = vec![];
        for w in [9, 7, 2, 8] {
            let (g, o) = (gate.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let got = g.acquire(w, true).await;
                o.lock().unwrap().push((w, got.is_ok()));
                drop(got);
            }));
            tokio::task::yield_now().await;
        }
        tokio::task::yield_now().await;
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        // Two pages were left: windows 2 and 7 get them, 8 and 9 are told the cap is spent.
        let got = order.lock().unwrap().clone();
        assert_eq!(got.iter().filter(|(_, ok)| *ok).map(|(w, _)| *w).collect::<Vec<_>>(), [2, 7]);
        assert_eq!(got.len(), 4);
        assert_eq!(gate.pages_left(), 0);
        // A retry needs no page: it still gets a slot.
        assert!(gate.acquire(1, false).await.is_ok());
        assert_eq!(gate.acquire(1, true).await.err(), Some(Capped));
    }

    #[tokio::test]
    async fn a_waiter_that_gave_up_does_not_keep_its_slot() {
        let gate = Gate::new(1, 10);
        let held = gate.acquire(0, true).await.unwrap();
        let g = gate.clone();
        let waiting = tokio::spawn(async move { g.acquire(1, true).await.map(|_| ()) });
        tokio::task::yield_now().await;
        waiting.abort();
        let _ = waiting.await;
        drop(held);
        let again = tokio::time::timeout(std::time::Duration::from_secs(5), gate.acquire(2, true)).await;
        assert!(again.expect("the slot came back").is_ok());
        assert_eq!(gate.pages_left(), 8);
    }
}
