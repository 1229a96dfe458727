//! A metric's name (`oura.daily_readiness.score`, `withings.measurements.weight_kg`, nested
//! paths such as `oura.daily_readiness.contributors.hrv_balance`) read against the catalog, or an
//! error that names the parameter and lists what can be sent instead.
use crate::catalog::{CollectionSpec, DailyRule, RangeKind};
use crate::engine::{Engine, QueryError};

#[derive(Debug, Clone)]
pub struct Metric {
    /// As it will be said back: `provider.collection.field.path`.
    pub name: String,
    pub provider: &'static str,
    pub collection: &'static CollectionSpec,
    /// `provider.collection`, as vitals_query takes it.
    pub qualified: String,
    /// The field, then the keys inside it.
    pub path: Vec<String>,
    pub rule: DailyRule,
}

/// The collection's daily rule, when it is one a day can be read from.
pub fn daily_rule(c: &CollectionSpec) -> Option<DailyRule> {
    c.daily.filter(|_| c.range == RangeKind::Date && !c.by_id)
}

/// Every collection a metric can come from, qualified (for errors).
pub fn daily_collections(engine: &Engine) -> Vec<String> {
    engine.collections_where(|c| daily_rule(c).is_some())
}

pub fn parse(engine: &Engine, param: &str, raw: &str) -> Result<Metric, QueryError> {
    let bad = |what: String| QueryError::BadInput(format!("`{param}`: {what}"));
    let list = || daily_collections(engine).join(", ");
    let shown: String = raw.chars().take(80).collect();
    let parts: Vec<&str> = raw.trim().split('.').collect();
    if parts.len() < 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(bad(format!(
            "{shown:?} is not a metric. Send `provider.collection.field`, e.g. `oura.daily_readiness.score`, from one of these daily collections: {}.",
            list()
        )));
    }
    let namespace = parts[0].to_ascii_lowercase();
    if !engine.knows_namespace(&namespace) {
        return Err(bad(format!("{shown:?} names no provider this server has. Send a metric of one of these daily collections: {}.", list())));
    }
    let Some((provider, collection)) = engine.resolve(&namespace, parts[1]) else {
        return Err(bad(format!("{namespace} has no collection {:?}. Daily collections a metric can come from: {}.", parts[1], list())));
    };
    let spec = provider.spec();
    let qualified = spec.qualified(collection.name);
    let Some(rule) = daily_rule(collection) else {
        return Err(bad(format!(
            "{qualified} is not a daily metric (it has no one-value-a-day rule: {}). Send a field of one of these: {}.",
            match collection.range {
                RangeKind::DateTime => "it is a time series",
                RangeKind::None => "it is not dated",
                RangeKind::Date => "several records a day, none of them the day's",
            },
            list()
        )));
    };
    let path: Vec<String> = parts[2..].iter().map(|p| p.to_string()).collect();
    if !collection.fields.contains(&path[0].as_str()) {
        return Err(bad(format!("{qualified} has no field {:?}. Its fields: {}.", path[0], collection.fields.join(", "))));
    }
    Ok(Metric { name: format!("{qualified}.{}", path.join(".")), provider: spec.name, collection, qualified, path, rule })
}

/// The unit an analysis says a metric's numbers in, and what its values are multiplied by to be
/// in it: a duration in seconds (or a WHOOP `_milli` duration) is said in minutes, as people read
/// durations; any other value in its own unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// None: no unit is known (a score).
    pub unit: Option<String>,
    pub factor: f64,
}

/// Units a field's name ends with, longest first.
const SUFFIXES: &[(&str, &str)] = &[
    ("_per_min", "/min"),
    ("_percentage", "%"),
    ("_celsius", "°C"),
    ("_milli", "ms"),
    ("_mmhg", "mmHg"),
    ("_kcal", "kcal"),
    ("_bpm", "bpm"),
    ("_min", "min"),
    ("_pct", "%"),
    ("_m_s", "m/s"),
    ("_ms", "ms"),
    ("_kg", "kg"),
    ("_km", "km"),
    ("_cm", "cm"),
    ("_ml", "ml"),
    ("_c", "°C"),
    ("_s", "s"),
    ("_m", "m"),
];

/// The units a legend's meaning may start with.
const UNITS: &[&str] = &["s", "ms", "min", "bpm", "%", "kcal", "m", "km", "kg", "°C", "m/s", "breaths/min", "ml/kg/min", "years", "mmHg"];

/// What `m`'s numbers are in: its name's unit, else the one its provider's legend gives.
pub fn shown(m: &Metric) -> Shown {
    let field = m.path.last().map(String::as_str).unwrap_or_default();
    let named = SUFFIXES.iter().find(|(s, _)| field.ends_with(s)).map(|(_, u)| u.to_string());
    // The legend's meaning, when it starts with a unit (`bpm`, `ms (RMSSD)`, `°C from the baseline`).
    let legend = || {
        let spec = crate::providers::specs().find(|s| s.name == m.provider)?;
        let says = spec.meaning(m.collection, &m.path.join("."))?;
        let first = says.split([' ', ',']).next()?;
        UNITS.contains(&first).then(|| first.to_string())
    };
    let unit = named.or_else(legend);
    // A duration (never an HRV, which is in ms too) reads in minutes.
    let duration = |u: &str| u == "s" || (u == "ms" && field.ends_with("_milli") && !["hrv", "rmssd", "sdnn"].iter().any(|h| field.contains(h)));
    match unit {
        Some(u) if duration(&u) => Shown { unit: Some("min".into()), factor: if u == "s" { 1.0 / 60.0 } else { 1.0 / 60_000.0 } },
        unit => Shown { unit, factor: 1.0 },
    }
}

#[cfg(test)]
mod shown_tests {
    use super::*;

    fn metric(provider: &'static str, collection: &str, path: &[&str]) -> Metric {
        let spec = crate::providers::specs().find(|s| s.name == provider).unwrap();
        let c = spec.collection(collection).unwrap();
        Metric {
            name: String::new(),
            provider,
            collection: c,
            qualified: String::new(),
            path: path.iter().map(|s| s.to_string()).collect(),
            rule: c.daily.unwrap(),
        }
    }

    #[test]
    fn a_duration_reads_in_minutes_and_every_other_number_in_its_unit() {
        let min = |u: &str| Some(u.to_string());
        assert_eq!(shown(&metric("oura", "sleep", &["total_sleep_duration"])), Shown { unit: min("min"), factor: 1.0 / 60.0 });
        assert_eq!(shown(&metric("oura", "sleep", &["average_hrv"])).unit.as_deref(), Some("ms"));
        assert_eq!(shown(&metric("oura", "daily_readiness", &["temperature_deviation"])).unit.as_deref(), Some("°C"));
        assert_eq!(shown(&metric("whoop", "sleep", &["total_sleep_time_milli"])).factor, 1.0 / 60_000.0);
        assert_eq!(shown(&metric("whoop", "recovery", &["hrv_rmssd_milli"])), Shown { unit: min("ms"), factor: 1.0 });
        assert_eq!(shown(&metric("withings", "measurements", &["weight_kg"])).unit.as_deref(), Some("kg"));
        assert_eq!(shown(&metric("oura", "daily_readiness", &["score"])).unit, None);
        assert_eq!(shown(&metric("garmin", "daily_summary", &["steps"])).unit, None);
    }
}

#[cfg(test)]
mod tests {
    use crate::catalog::Settles;

    /// Today's value is read as complete only where it is final once it exists: every night and
    /// every morning score `vitals_today` shows settles on arrival, every day's totals at its end.
    #[test]
    fn nights_and_morning_scores_settle_on_arrival_and_a_day_s_totals_at_its_end() {
        for spec in crate::providers::specs() {
            for t in spec.today {
                let c = spec.collection(t.collection).unwrap();
                let Some(rule) = super::daily_rule(c) else { continue };
                let want = match t.role {
                    // Google's resting heart rate is computed from the night (`WITH_SLEEP`), as a morning score is.
                    "sleep" | "sleep_score" | "readiness" | "recovery" | "recharge" | "hrv" | "resting_hr" => Settles::OnArrival,
                    "activity" | "strain" | "body_battery" => Settles::AtDayEnd,
                    "weigh_in" => Settles::OnArrival,
                    other => panic!("{}.{}: classify the role {other}", spec.name, c.name),
                };
                assert_eq!(rule.settles, want, "{}.{} ({})", spec.name, c.name, t.role);
            }
            for c in spec.collections.iter().filter(|c| c.night.is_some()) {
                if let Some(rule) = super::daily_rule(c) {
                    assert_eq!(rule.settles, Settles::OnArrival, "{}.{} is a night", spec.name, c.name);
                }
            }
        }
    }
}
