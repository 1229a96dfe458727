//! One record, whatever step holds it: its local day, its projection to the asked fields, and
//! the de-duplication of records a provider sent twice. Every step from the window to the fit
//! reads records through here, so none of them needs another step to do it.
use super::flat::Fields;
use crate::catalog::{CollectionSpec, Dating};
use crate::time::{local_day, own_day, Zone};
use jiff::civil::Date;
use serde_json::{Map, Value};

/// A record's local day, from the first day key present, by the one day rule (`Dating`): the
/// date where it happened (the provider's day, or its time in its own recorded offset); `zone`
/// dates only an instant sent without that offset, and re-dates one with it when the person gave
/// `tz`.
pub fn record_day(rec: &impl Fields, c: &CollectionSpec, zone: &Zone) -> Option<Date> {
    c.day_keys.iter().find_map(|k| rec.str_of(k).and_then(|s| day_of(s, c.dating, zone)))
}

fn day_of(s: &str, dating: Dating, zone: &Zone) -> Option<Date> {
    match dating {
        Dating::QueryZone => local_day(s, zone),
        Dating::OwnOffset | Dating::AccountZone if zone.asked => local_day(s, zone),
        Dating::ProviderDay | Dating::RecordedDay | Dating::OwnOffset | Dating::AccountZone | Dating::Undated => own_day(s),
    }
}

/// Keep only `fields` (which already include the always-returned keys), in that order.
pub fn project(records: Vec<Value>, fields: &[String]) -> Vec<Value> {
    records.into_iter().map(|r| project_one(r, fields)).collect()
}

pub fn project_one(r: Value, fields: &[String]) -> Value {
    match r {
        Value::Object(mut m) => {
            // Moved, not cloned: a month of heart rate is 36,000 records.
            let mut out = Map::new();
            for f in fields {
                if let Some(v) = m.remove(f.as_str()) {
                    out.insert(f.clone(), v);
                }
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// The rows of `rows` (an answer as sent) that carry each of the collection's flags, counted and
/// said with what the flag means, so a reader knows which values to read apart and how to find
/// them (`field=value` is on every such row). None: no row is flagged.
pub fn flagged(c: &CollectionSpec, rows: &[Value]) -> Option<String> {
    let said: Vec<String> = c
        .flags
        .iter()
        .filter_map(|f| match rows.iter().filter(|r| f.on(r)).count() {
            0 => None,
            n => Some(format!("{n} row(s) {}={}: {}.", f.field, f.is, f.means)),
        })
        .collect();
    (!said.is_empty()).then(|| said.join(" "))
}

/// Drop duplicates the provider sent across pages: records with the same value in the
/// collection's key field. A collection without one keeps every record.
pub fn dedup(records: Vec<Value>, c: &CollectionSpec) -> Vec<Value> {
    let Some(field) = c.key else {
        return records;
    };
    let keep: Vec<bool> = {
        let mut seen = std::collections::HashSet::with_capacity(records.len());
        records
            .iter()
            .map(|r| match r.get(field).and_then(Value::as_str) {
                Some(k) => seen.insert(k),
                None => true,
            })
            .collect()
    };
    records.into_iter().zip(keep).filter_map(|(r, k)| k.then_some(r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The one day rule: a record is under the date where it happened; the query's zone dates
    /// only an instant sent without its offset, and re-dates one with it only when asked.
    #[test]
    fn a_record_is_under_the_date_where_it_happened_and_tz_re_dates_only_when_given() {
        let polar = crate::providers::polar::catalog::POLAR.collection("exercises").unwrap();
        let run = json!({"id": "r", "start_time": "2026-06-10T21:30:00-06:00"});
        let here = Zone { asked: false, ..Zone::parse("+09:00").unwrap() };
        assert_eq!(record_day(&run, polar, &here), Some(jiff::civil::date(2026, 6, 10)), "its own offset, not this machine's zone");
        let asked = Zone::parse("+09:00").unwrap();
        assert_eq!(record_day(&run, polar, &asked), Some(jiff::civil::date(2026, 6, 11)), "a tz the person gives re-dates it");
        let whoop = crate::providers::whoop::catalog::WHOOP.collection("sleep").unwrap();
        let night = json!({"id": "n", "day": "2026-06-10"});
        assert_eq!(record_day(&night, whoop, &asked), Some(jiff::civil::date(2026, 6, 10)), "a day as the provider files it never moves");
        let hr = crate::providers::oura::catalog::OURA.collection("heartrate").unwrap();
        let sample = json!({"timestamp": "2026-06-10T21:30:00+00:00", "bpm": 60});
        assert_eq!(record_day(&sample, hr, &here), Some(jiff::civil::date(2026, 6, 11)), "a UTC instant is dated in the query's zone");
    }

    #[test]
    fn projection_keeps_only_named_fields_in_order() {
        let out = project(vec![json!({"id": "x", "day": "d", "score": 80, "contributors": {}})], &["id".into(), "day".into(), "score".into()]);
        assert_eq!(out[0], json!({"id": "x", "day": "d", "score": 80}));
    }

    #[test]
    fn dedup_drops_repeats_of_the_collection_key_only() {
        let sleep = crate::providers::oura::catalog::OURA.collection("daily_sleep").unwrap();
        let out = dedup(vec![json!({"id": "a", "day": "d1"}), json!({"id": "a", "day": "d1"}), json!({"id": "b", "day": "d1"})], sleep);
        assert_eq!(out.len(), 2);
        // Withings' daily activity rows name no record: two rows of one day are both kept (and said by the provider's rules).
        let activity = crate::providers::withings::catalog::WITHINGS.collection("activity").unwrap();
        assert_eq!(dedup(vec![json!({"date": "d1"}), json!({"date": "d1"})], activity).len(), 2);
    }
}
