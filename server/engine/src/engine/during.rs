//! A series during one workout (`vitals_query`'s `workout`): the workout is read by its id from the
//! provider's workout collection, through the engine as any query, and its span of time becomes
//! the `from` and `to` the series is then read over. Which collection holds a provider's workouts,
//! and where a record keeps its start and end, is catalog data (`CollectionSpec::workout_span`).
use super::plan::{DEFAULT_DAYS, MAX_MAX_CHARS};
use super::{Answer, Engine, QueryError, QueryRequest};
use crate::catalog::{CollectionSpec, Span, SpanEnd};
use crate::time::Zone;
use jiff::civil::DateTime;
use jiff::{SignedDuration, Timestamp, ToSpan};
use serde_json::Value;

fn bad(s: String) -> QueryError {
    QueryError::BadInput(s)
}

/// `req` with its `workout` turned into `from` and `to`: the span of that workout, read from the
/// provider's workout collection (by id where one reads a workout by id, else over `day`,
/// `start`/`end`, the collection's reach, or the last days). A request without `workout` is
/// returned as it is.
pub async fn resolve(engine: &Engine, req: QueryRequest) -> Result<QueryRequest, QueryError> {
    let Some(id) = req.workout.clone() else {
        return Ok(req);
    };
    let id = id.trim().to_string();
    let ok = !id.is_empty() && id.len() <= 64 && id.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
    if !ok {
        let shown: String = id.chars().take(40).collect();
        return Err(bad(format!("`workout` must be a workout's `id` as its collection lists it (letters, digits, `-`, `_`); got {shown:?}.")));
    }
    let Some((ns, cname)) = req.collection.split_once('.') else {
        // The plan's own refusal names the collections there are.
        return Ok(QueryRequest { workout: None, ..req });
    };
    let Some((_, series)) = engine.resolve(ns, cname) else {
        return Ok(QueryRequest { workout: None, ..req });
    };
    if series.series.is_none() {
        let with = engine.collections_where(|c| c.series.is_some());
        return Err(bad(format!(
            "`workout`: {} is not a time series, so it has no samples during a workout. `workout` applies to {}.",
            req.collection,
            with.join(", ")
        )));
    }
    if req.from.is_some() || req.to.is_some() || req.latest || req.id.is_some() {
        return Err(bad("`workout`: the workout names the span itself; send it without `from`, `to`, `latest` or `id`.".into()));
    }
    let Some((wq, wc)) = workouts(engine, ns) else {
        return Err(bad(format!(
            "`workout`: {ns} has no workout collection to find a workout in; send `from` and `to` with the workout's start and end instead."
        )));
    };
    let zone = match req.tz.as_deref().map(Zone::parse) {
        Some(Ok(z)) => z,
        // A bad `tz` is refused by the plan, naming it; the workout is not read before.
        Some(Err(_)) => return Ok(QueryRequest { workout: None, ..req }),
        None => engine.zone(),
    };
    let (answer, looked) = read(engine, &req, &wq, wc, &id).await.map_err(|e| match e {
        QueryError::BadInput(s) => bad(format!("`workout`: reading it from {wq}: {s}")),
        other => other,
    })?;
    let span = wc.workout_span().expect("a workout collection has a span");
    let key = wc.key.unwrap_or("id");
    let rows = records(answer.data);
    // An id is a string in most listings, a number in some.
    let named = |v: &Value| match v {
        Value::String(s) => *s == id,
        Value::Number(n) => n.to_string() == id,
        _ => false,
    };
    let Some(w) = rows.iter().find(|r| r.get(key).is_some_and(named)) else {
        let cut = answer.notices.truncated.as_ref().map(|t| format!(" (that read was cut: {})", t.reason)).unwrap_or_default();
        return Err(bad(format!(
            "`workout`: no workout {id:?} in {wq}{looked}{cut}. Send the `id` of a row of {wq}{}.",
            if wc.by_id { "" } else { ", with `day` set to its day" }
        )));
    };
    let (from, to) = span_of(w, span, &zone)
        .ok_or_else(|| bad(format!("`workout`: workout {id:?} of {wq} carries no start and end to read a series over; send `from` and `to` instead.")))?;
    Ok(QueryRequest {
        from: Some(from.to_string()),
        to: Some(to.to_string()),
        start: None,
        end: None,
        day: None,
        workout: None,
        window_label: Some(format!("during workout {id} of {wq}")),
        ..req
    })
}

/// The provider's collection to find a workout in: one that reads a workout by id first.
fn workouts(engine: &Engine, ns: &str) -> Option<(String, &'static CollectionSpec)> {
    let found: Vec<&'static CollectionSpec> =
        engine.providers().filter(|p| p.spec().namespace == ns).flat_map(|p| p.spec().collections.iter()).filter(|c| c.workout_span().is_some()).collect();
    let c = found.iter().find(|c| c.by_id).or(found.first())?;
    Some((format!("{ns}.{}", c.name), *c))
}

/// The workout collection read for `id`: by id, or over the days the request names, else the
/// collection's whole reach, else the last [`DEFAULT_DAYS`] days. Returns the answer and the days
/// it looked at, in words.
async fn read(engine: &Engine, req: &QueryRequest, wq: &str, wc: &CollectionSpec, id: &str) -> Result<(Answer, String), QueryError> {
    let base = QueryRequest {
        collection: wq.to_string(),
        tz: req.tz.clone(),
        format: Some("records".into()),
        max_chars: Some(MAX_MAX_CHARS as i64),
        deadline: req.deadline,
        ..Default::default()
    };
    if wc.by_id {
        if req.start.is_some() || req.end.is_some() || req.day.is_some() {
            return Err(bad(format!("`workout`: {wq} finds a workout by its id alone; leave out `day`, `start` and `end`.")));
        }
        return Ok((engine.query_one(QueryRequest { id: Some(id.to_string()), ..base }).await?, String::new()));
    }
    let (start, end, day) = match (&req.start, &req.end, &req.day) {
        (None, None, None) => {
            let zone = req.tz.as_deref().and_then(|t| Zone::parse(t).ok()).unwrap_or_else(|| engine.zone());
            let today = zone.today();
            let days = wc.retention.map_or(DEFAULT_DAYS, |r| i64::from(r.days.max(1)));
            (Some(today.checked_sub((days - 1).days()).unwrap_or(today).to_string()), Some(today.to_string()), None)
        }
        (s, e, d) => (s.clone(), e.clone(), d.clone()),
    };
    let a = engine.query_one(QueryRequest { start, end, day, ..base }).await?;
    let looked = a.range.as_ref().map(|r| format!(" from {} to {}", r.start, r.end)).unwrap_or_default();
    Ok((a, looked))
}

/// An answer's rows as records (the read asks for `records`).
fn records(data: Value) -> Vec<Value> {
    match data {
        Value::Array(rows) => rows,
        _ => vec![],
    }
}

/// A workout's start and end as instants: a time with an offset as it is, a wall-clock time in `zone`.
fn span_of(w: &Value, span: Span, zone: &Zone) -> Option<(Timestamp, Timestamp)> {
    let instant = |field: &str| -> Option<Timestamp> {
        let s = w.get(field)?.as_str()?;
        s.parse::<Timestamp>().ok().or_else(|| s.parse::<DateTime>().ok()?.to_zoned(zone.tz.clone()).ok().map(|z| z.timestamp()))
    };
    let from = instant(span.start)?;
    let to = match span.end {
        SpanEnd::At(field) => instant(field)?,
        SpanEnd::Seconds(field) => from.checked_add(SignedDuration::try_from_secs_f64(w.get(field)?.as_f64()?).ok()?).ok()?,
    };
    (to > from).then_some((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_span_is_read_from_instants_wall_clocks_and_durations() {
        let zone = Zone::parse("-06:00").unwrap();
        let at = Span { start: "start", end: SpanEnd::At("end") };
        let w = json!({"start": "2026-06-10T07:00:00-06:00", "end": "2026-06-10T07:45:00-06:00"});
        let (f, t) = span_of(&w, at, &zone).unwrap();
        assert_eq!((f.to_string().as_str(), t.to_string().as_str()), ("2026-06-10T13:00:00Z", "2026-06-10T13:45:00Z"));
        let local = json!({"start": "2026-06-10 07:00:00", "end": "2026-06-10T07:45:00"});
        assert_eq!(span_of(&local, at, &zone), Some((f, t)), "a wall clock is read in the query's zone");
        let timed = json!({"start": "2026-06-10T13:00:00Z", "duration_s": 2700.0});
        assert_eq!(span_of(&timed, Span { start: "start", end: SpanEnd::Seconds("duration_s") }, &zone), Some((f, t)));
        assert_eq!(span_of(&json!({"start": "2026-06-10T13:00:00Z"}), at, &zone), None, "no end, no span");
        assert_eq!(span_of(&json!({"start": "2026-06-10T13:00:00Z", "end": "2026-06-10T12:00:00Z"}), at, &zone), None);
    }
}
