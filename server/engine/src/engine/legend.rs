//! What the fields of an answer mean where their names do not say: a unit (`s`, `bpm`), a scale
//! (`0 to 21`) or what codes stand for (`1 very poor … 6 very good`), from the provider's catalog
//! (`ProviderSpec::meaning`), for the fields the answer's rows hold, once per answer rather than
//! beside every value.
use crate::catalog::{CollectionSpec, ProviderSpec};
use serde_json::Value;
use std::collections::BTreeMap;

/// What a bucket's columns add to the field they summarise (`bpm_avg` is `bpm`'s average).
const BUCKET_SUFFIXES: &[&str] = &["_avg", "_min", "_max", "_first", "_last"];

/// The meaning of every field of `rows` that has one; None when none has.
pub fn of(spec: &ProviderSpec, c: &CollectionSpec, rows: &[Value]) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut seen: Vec<&str> = vec![];
    for r in rows {
        let Value::Object(m) = r else { continue };
        for k in m.keys() {
            if seen.contains(&k.as_str()) {
                continue;
            }
            seen.push(k);
            let bucket = || BUCKET_SUFFIXES.iter().find_map(|s| k.strip_suffix(s).filter(|f| c.knows_field(f)));
            let field = if c.series.is_some() { bucket().unwrap_or(k) } else { k };
            if let Some(says) = spec.meaning(c, field) {
                out.insert(field.to_string(), says);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The most characters a legend of `c` can take (every field it explains present), kept out of
/// the room for data so that an answer with its legend still fits `max_chars`.
pub fn room(spec: &ProviderSpec, c: &CollectionSpec) -> usize {
    let all: Vec<Value> =
        vec![Value::Object(c.always.iter().chain(c.fields).chain(c.embedded.iter().map(|e| &e.field)).map(|f| (f.to_string(), Value::Null)).collect())];
    of(spec, c, &all).map_or(0, |l| serde_json::to_string(&l).map_or(0, |s| s.len() + ",\"legend\":".len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_fields_an_answer_holds_are_explained_once() {
        let spec = &crate::providers::polar::catalog::POLAR;
        let c = spec.collection("nightly_recharge").unwrap();
        let rows =
            vec![json!({"day": "2026-12-01", "nightly_recharge_status": 5, "hr_avg_bpm": 54}), json!({"day": "2026-12-02", "nightly_recharge_status": 3})];
        let l = of(spec, c, &rows).unwrap();
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(l["nightly_recharge_status"].contains("5 good"), "{l:?}");
        assert!(of(spec, c, &[json!({"day": "2026-12-01", "hr_avg_bpm": 54})]).is_none(), "a name that says its unit needs no entry");
    }

    #[test]
    fn a_hypnogram_s_codes_come_from_its_night() {
        let spec = &crate::providers::oura::catalog::OURA;
        let c = spec.collection("sleep").unwrap();
        let l = of(spec, c, &[json!({"sleep_phase_5_min": "1234", "heart_rate": {}})]).unwrap();
        assert_eq!(l["sleep_phase_5_min"], "a digit per 300 s: 1 deep, 2 light, 3 REM, 4 awake");
        assert_eq!(l["heart_rate"], "bpm, in `items` every `interval` s");
    }
}
