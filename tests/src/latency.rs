//! The twin's network latency, kept to the microsecond. tokio's timer counts whole milliseconds
//! and rounds a deadline up to the next one, so a twin that slept `latency_ms` on it held every
//! answer about a millisecond longer than it said (51.3 ms a request at 50 in the bench's year of
//! heart rate): a yardstick that was itself late, by an amount that grew with the round trips
//! measured. One thread here keeps the deadlines and sleeps to the nearest with the OS's
//! nanosecond timer; each waiting answer is woken when its own deadline has passed (DECISIONS 140).
use std::collections::BinaryHeap;
use std::sync::mpsc;
use std::sync::LazyLock;
use std::time::Instant;
use tokio::sync::oneshot;

/// One answer waiting: its deadline, and who to wake. Ordered soonest first (a min-heap).
struct Due(Instant, oneshot::Sender<()>);

impl PartialEq for Due {
    fn eq(&self, other: &Due) -> bool {
        self.0 == other.0
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Due) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Due {
    fn cmp(&self, other: &Due) -> std::cmp::Ordering {
        other.0.cmp(&self.0)
    }
}

static CLOCK: LazyLock<mpsc::Sender<Due>> = LazyLock::new(|| {
    let (tx, rx) = mpsc::channel::<Due>();
    std::thread::Builder::new().name("twin-latency".into()).spawn(move || keep(rx)).expect("the twin's latency thread");
    tx
});

/// The clock's thread: wakes each waiting answer at its deadline, and ends with the process.
fn keep(rx: mpsc::Receiver<Due>) {
    let mut waiting: BinaryHeap<Due> = BinaryHeap::new();
    loop {
        let now = Instant::now();
        while waiting.peek().is_some_and(|d| d.0 <= now) {
            if let Some(Due(_, wake)) = waiting.pop() {
                // The answer was given up (its connection closed): nobody to wake.
                let _ = wake.send(());
            }
        }
        let next = match waiting.peek() {
            Some(d) => rx.recv_timeout(d.0 - now),
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match next {
            Ok(due) => waiting.push(due),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Wait until `due`, to within the OS timer's slack rather than tokio's millisecond.
pub async fn until(due: Instant) {
    if due <= Instant::now() {
        return;
    }
    let (wake, woken) = oneshot::channel();
    if CLOCK.send(Due(due, wake)).is_err() {
        tokio::time::sleep_until(due.into()).await;
        return;
    }
    let _ = woken.await;
}

/// Wait `ms` milliseconds from now (none for 0).
pub async fn after_ms(ms: u64) {
    if ms > 0 {
        until(Instant::now() + std::time::Duration::from_millis(ms)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Each wait ends at or after its own deadline, in deadline order whatever order they came in.
    #[tokio::test]
    async fn waits_end_at_their_deadlines_not_before() {
        let t0 = Instant::now();
        let waits = [30u64, 10, 20].map(|ms| {
            tokio::spawn(async move {
                let due = t0 + Duration::from_millis(ms);
                until(due).await;
                (ms, Instant::now().duration_since(due))
            })
        });
        for w in waits {
            let (ms, late) = w.await.unwrap();
            assert!(Instant::now() >= t0 + Duration::from_millis(ms), "ended before its deadline");
            // Not a timing assertion of speed: a wait must end, not hang, and never early.
            assert!(late < Duration::from_secs(5), "{ms} ms wait never woke");
        }
        until(t0).await;
    }
}
