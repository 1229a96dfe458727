//! What a provider's own rules did (`notices.rules`: groups merged into a weigh-in, nights WHOOP
//! could not score), said of the records an answer holds. The rules run over every record a read
//! kept; when part of them is left out (a read cut short, the latest record kept, the days over
//! `max_chars`, a day's report left days out), they are said again over what is left, so that a
//! count never describes records the answer does not carry. What was left out is said apart
//! (`truncated`, `kept_last`, `shortened`).
use super::record::{dedup, record_day};
use crate::catalog::CollectionSpec;
use crate::providers::{Options, Provider};
use crate::time::Zone;
use jiff::civil::Date;
use serde_json::Value;
use std::sync::Arc;

/// The records of a read as they came (before the provider's `finish`), and what the rules need.
pub struct Basis {
    provider: Arc<dyn Provider>,
    collection: &'static CollectionSpec,
    options: Options,
    zone: Zone,
    raw: Vec<Value>,
}

impl std::fmt::Debug for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Basis({}, {} records)", self.collection.name, self.raw.len())
    }
}

impl Basis {
    pub fn new(provider: Arc<dyn Provider>, collection: &'static CollectionSpec, options: Options, zone: Zone, raw: Vec<Value>) -> Basis {
        Basis { provider, collection, options, zone, raw }
    }

    /// The rules said over `records` (as they came), with the provider's reading notes; None
    /// when they say nothing.
    fn said(&self, records: Vec<Value>) -> (Option<Vec<String>>, usize) {
        let finished = self.provider.finish(self.collection, records, &self.options);
        let n = dedup(finished.records, self.collection).len();
        let mut notes = finished.notes;
        notes.extend(self.provider.reading_notes(self.collection, &self.zone));
        ((!notes.is_empty()).then_some(notes), n)
    }

    fn day(&self, r: &Value) -> Option<Date> {
        record_day(r, self.collection, &self.zone)
    }

    /// The rules over no record: the reading notes alone (a cut answer that holds no day).
    pub fn nothing(&self) -> Option<Vec<String>> {
        self.said(vec![]).0
    }

    /// The rules over the records of the days from `from` (None: the first) through `to`; a
    /// record whose day cannot be told stays, as it does in the answer.
    pub fn within(&self, from: Option<Date>, to: Option<Date>) -> Option<Vec<String>> {
        let picked = self.raw.iter().filter(|r| self.day(r).is_none_or(|d| from.is_none_or(|f| d >= f) && to.is_none_or(|t| d <= t))).cloned().collect();
        self.said(picked).0
    }

    /// The rules over the last records that make the `keep` records an answer kept, the first of
    /// them on `from`: the records of those days, fewer from the earliest on while they would
    /// make more.
    pub fn last(&self, keep: usize, from: Option<Date>) -> Option<Vec<String>> {
        let mut picked: Vec<Value> = self.raw.iter().filter(|r| from.is_none_or(|f| self.day(r).is_none_or(|d| d >= f))).cloned().collect();
        let key = |r: &Value| self.collection.day_keys.iter().find_map(|k| r.get(*k).and_then(Value::as_str).map(str::to_string));
        picked.sort_by_key(key);
        loop {
            let (notes, made) = self.said(picked.clone());
            if made <= keep || picked.is_empty() {
                return notes;
            }
            picked.remove(0);
        }
    }
}
