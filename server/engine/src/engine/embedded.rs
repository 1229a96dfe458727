//! An embedded series of evenly spaced samples (a record's `{start, interval, items}`, named by
//! its collection's [`SampleShape`]), read as instants and values for a chart.
use crate::catalog::{CollectionSpec, EmbeddedKind, SampleShape};
use serde_json::Value;

/// The readings of one embedded series.
#[derive(Debug, Default, PartialEq)]
pub struct Readings {
    /// `[instant_ms, value]` of every reading present (nulls left out).
    pub points: Vec<(i64, f64)>,
    pub interval_s: f64,
    /// When the engine compacted the series to fit an answer: the interval it had before.
    pub compacted_from_s: Option<f64>,
}

/// The series in `field` of record `r`; None when the collection declares no such series or the
/// record lacks its start, interval or items.
pub fn read(c: &CollectionSpec, field: &str, r: &Value) -> Option<Readings> {
    let shape: SampleShape = c.embedded.iter().find_map(|e| match e.kind {
        EmbeddedKind::Samples(s) if e.field == field => Some(s),
        _ => None,
    })?;
    let o = r.get(field)?;
    let t0 = instant_ms(o.get(shape.start)?.as_str()?)?;
    let interval_s = o.get(shape.interval)?.as_f64()?;
    let step = (interval_s * 1000.0) as i64;
    let items = o.get(shape.items)?.as_array()?;
    Some(Readings {
        points: items.iter().enumerate().filter_map(|(i, v)| Some((t0 + i as i64 * step, v.as_f64()?))).collect(),
        interval_s,
        compacted_from_s: o.get("compacted_from_interval").and_then(Value::as_f64),
    })
}

/// Milliseconds since the epoch of an RFC 3339 instant.
pub fn instant_ms(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond())
}
