//! What the twin served: when each request to a provider route arrived and was answered, and the
//! bytes of its body. The bench reads it for each row's requests, round trips and bytes, so the
//! distance to the physical limit (one round trip) is measured where the requests land.
use axum::body::HttpBody;
use axum::extract::{Request, State as AxState};
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    pub arrived: Instant,
    pub answered: Instant,
    pub bytes: u64,
}

pub async fn layer(AxState(s): AxState<Arc<crate::State>>, req: Request, next: Next) -> Response {
    if req.uri().path().starts_with("/_twin") {
        return next.run(req).await;
    }
    let arrived = Instant::now();
    let resp = next.run(req).await;
    // Every twin body is built whole; a streamed fault body counts as nothing.
    let bytes = resp.body().size_hint().exact().unwrap_or(0);
    let mut t = s.traffic.lock().unwrap();
    if t.len() >= 200_000 {
        // Nobody is reading it (a long-running twin): keep it bounded.
        t.clear();
    }
    t.push(Exchange { arrived, answered: Instant::now(), bytes });
    resp
}

/// The longest chain of requests each sent after the one before it was answered: the round trips
/// a reader waited through one after another, however many it had in flight beside them.
pub fn round_trips(xs: &[Exchange]) -> usize {
    longest_chain(xs).len()
}

/// The requests of the longest chain (see [`round_trips`]), first to last: where a long read's
/// time goes between the twin's answers and the requests that waited for them.
pub fn longest_chain(xs: &[Exchange]) -> Vec<Exchange> {
    let mut by_end: Vec<&Exchange> = xs.iter().collect();
    by_end.sort_by_key(|x| x.answered);
    // chain[i]: the length of the longest chain ending with by_end[i], and the request before it.
    let mut chain: Vec<(usize, Option<usize>)> = Vec::with_capacity(by_end.len());
    for (i, x) in by_end.iter().enumerate() {
        let before = (0..i).filter(|&j| by_end[j].answered <= x.arrived).max_by_key(|&j| chain[j].0);
        chain.push((before.map_or(0, |j| chain[j].0) + 1, before));
    }
    let mut at = (0..chain.len()).max_by_key(|&i| chain[i].0);
    let mut out = vec![];
    while let Some(i) = at {
        out.push(*by_end[i]);
        at = chain[i].1;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn round_trips_count_requests_in_a_row_not_side_by_side() {
        let t0 = Instant::now();
        let at = |a: u64, b: u64| Exchange { arrived: t0 + Duration::from_millis(a), answered: t0 + Duration::from_millis(b), bytes: 1 };
        assert_eq!(round_trips(&[]), 0);
        // Three side by side, then two in a row after them.
        let xs = [at(0, 50), at(1, 51), at(2, 52), at(53, 103), at(104, 154)];
        assert_eq!(round_trips(&xs), 3);
        assert_eq!(round_trips(&xs[..3]), 1);
        let chain = longest_chain(&xs);
        assert_eq!(chain.len(), 3);
        assert_eq!(chain[1].arrived, t0 + Duration::from_millis(53));
        assert_eq!(chain[2].answered, t0 + Duration::from_millis(154));
    }
}
