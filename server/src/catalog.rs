//! Provider-neutral descriptions of what can be queried. The engine reads these; it knows no provider.

/// How a collection is addressed in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    /// Filtered by calendar day (`start_date`/`end_date` style).
    Date,
    /// Filtered by instant (`start_datetime`/`end_datetime` style): a time series.
    DateTime,
    /// Not filtered by time at all (profile, configuration).
    None,
}

impl RangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RangeKind::Date => "date",
            RangeKind::DateTime => "datetime",
            RangeKind::None => "none",
        }
    }
}

/// One collection of one provider, as data.
#[derive(Debug)]
pub struct CollectionSpec {
    /// Name as the provider spells it (`daily_sleep`, `vO2_max`).
    pub name: &'static str,
    /// Path below the provider's collection prefix.
    pub path: &'static str,
    pub summary: &'static str,
    pub range: RangeKind,
    /// Whether the provider honours `latest=true` (elsewhere it is silently ignored upstream).
    pub latest: bool,
    /// Whether the provider accepts a `fields` projection.
    pub projectable: bool,
    /// Keys, in order of preference, that give a record's local day (dates or datetimes).
    pub day_keys: &'static [&'static str],
    /// Keys always returned whatever `fields` says (`id`, `day`, `timestamp`).
    pub always: &'static [&'static str],
    /// Every field the provider documents for this collection.
    pub fields: &'static [&'static str],
    /// Whether the list route wraps records in an envelope (else one bare object).
    pub enveloped: bool,
    /// Whether the provider's sandbox serves it.
    pub in_sandbox: bool,
    pub volume: &'static str,
}

impl CollectionSpec {
    pub fn knows_field(&self, f: &str) -> bool {
        self.fields.contains(&f) || self.always.contains(&f)
    }
}

/// One provider, as data.
#[derive(Debug)]
pub struct ProviderSpec {
    pub name: &'static str,
    pub display: &'static str,
    pub collections: &'static [CollectionSpec],
    /// The collection whose one-day read `vitals_check` uses to see that the API answers.
    pub probe: &'static str,
    /// What `vitals_today` reads: (role, collection), role being `sleep`, `readiness` or `activity`.
    pub today: &'static [(&'static str, &'static str)],
}

impl ProviderSpec {
    pub fn collection(&self, name: &str) -> Option<&'static CollectionSpec> {
        self.collections.iter().find(|c| c.name == name)
    }
}
