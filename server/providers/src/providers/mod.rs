//! One folder per provider. A provider is data (its catalog) plus a small adapter that knows its
//! wire format and where its credential comes from; everything else is the engine's.
pub mod apple_health;
pub mod credential;
#[cfg(test)]
mod declared;
pub mod garmin;
pub mod garmin_connect;
pub mod google_health;
pub mod oura;
pub mod polar;
pub mod series;
pub mod whoop;
pub mod withings;

use crate::catalog::ProviderSpec;
use crate::config::Config;
/// The provider vocabulary lives in the core crate, so the engine reads providers only through it.
pub use crate::provider::*;

/// A stable pseudo-random number per day and purpose (splitmix64): what the built-in sample people
/// are made of, so the same day is the same data in every process.
pub fn day_hash(d: jiff::civil::Date, salt: u64) -> u64 {
    let n = (d - jiff::civil::Date::constant(1970, 1, 1)).get_days() as u64;
    let mut z = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An opt-in connection nobody connected (Garmin Connect before its login): it has nothing to read
/// and no sample data, and that is no failure (`vitals_check`), nor part of the day (`vitals_today`).
pub fn unasked(p: &dyn Provider) -> bool {
    let cred = p.credential().current();
    p.spec().connection.session().is_some_and(|s| s.explicit) && cred.mode() == Mode::NeedsCredentials && cred.problem.is_none()
}

/// Every provider this build knows, with the settings the binary was started with, reading this
/// machine's user's credentials (found with the same settings).
pub fn all(config: &Config) -> Vec<std::sync::Arc<dyn Provider>> {
    all_in(config, &crate::accounts::Home::local(std::sync::Arc::new(config.clone())))
}

/// One provider of the registry: its catalog, and how to make its adapter for a home.
pub struct Registered {
    pub spec: &'static ProviderSpec,
    pub make: fn(&Config, &crate::accounts::Home) -> std::sync::Arc<dyn Provider>,
}

/// The registry: the one list of the providers this build knows, in the order they are shown.
/// Everything else (the engine, the settings app, the people's pages, the docs' checks, the
/// tests) iterates it; adding a provider is its folder and one line here.
pub static REGISTRY: &[Registered] = &[
    Registered { spec: &oura::catalog::OURA, make: |c, h| std::sync::Arc::new(oura::Oura::in_home(c, h)) },
    Registered { spec: &withings::catalog::WITHINGS, make: |c, h| std::sync::Arc::new(withings::Withings::in_home(c, h)) },
    Registered { spec: &polar::catalog::POLAR, make: |c, h| std::sync::Arc::new(polar::Polar::in_home(c, h)) },
    Registered { spec: &garmin::catalog::GARMIN, make: |c, h| std::sync::Arc::new(garmin::Garmin::in_home(c, h)) },
    Registered { spec: &garmin_connect::catalog::GARMIN_CONNECT, make: |c, h| std::sync::Arc::new(garmin_connect::GarminConnect::in_home(c, h)) },
    Registered { spec: &whoop::catalog::WHOOP, make: |c, h| std::sync::Arc::new(whoop::Whoop::in_home(c, h)) },
    Registered { spec: &google_health::catalog::GOOGLE_HEALTH, make: |c, h| std::sync::Arc::new(google_health::GoogleHealth::in_home(c, h)) },
    Registered { spec: &apple_health::catalog::APPLE_HEALTH, make: |c, h| std::sync::Arc::new(apple_health::AppleHealth::in_home(c, h)) },
];

/// Every provider's catalog, in the registry's order.
pub fn specs() -> impl Iterator<Item = &'static ProviderSpec> {
    REGISTRY.iter().map(|r| r.spec)
}

/// The catalog of the provider (connection) named `name`.
pub fn spec(name: &str) -> Option<&'static ProviderSpec> {
    specs().find(|s| s.name == name)
}

/// Every provider this build knows, with `config`'s settings, reading `home`'s credentials.
pub fn all_in(config: &Config, home: &crate::accounts::Home) -> Vec<std::sync::Arc<dyn Provider>> {
    REGISTRY.iter().map(|r| (r.make)(config, home)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_adapter_is_made_from_its_own_catalog() {
        let home = crate::accounts::Home::tenant(std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp/registry")));
        for r in super::REGISTRY {
            assert!(std::ptr::eq((r.make)(&super::Config::default(), &home).spec(), r.spec), "{}: its adapter answers with another catalog", r.spec.name);
        }
        let names: std::collections::HashSet<&str> = super::specs().map(|s| s.name).collect();
        assert_eq!(names.len(), super::REGISTRY.len(), "a name twice in the registry");
    }

    #[test]
    fn no_two_connections_of_a_namespace_name_the_same_collection() {
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp/namespaces"));
        let all = super::all_in(&super::Config::default(), &crate::accounts::Home::tenant(dir));
        let mut seen = std::collections::HashSet::new();
        for p in &all {
            for c in p.spec().collections {
                assert!(seen.insert(p.spec().qualified(c.name)), "{} is named by two connections", p.spec().qualified(c.name));
            }
        }
        let garmin: Vec<&str> = all.iter().filter(|p| p.spec().namespace == "garmin").map(|p| p.spec().name).collect();
        assert_eq!(garmin, ["garmin", "garmin-connect"]);
    }

    /// What `vitals_sources` lists and `vitals_today` shows is data: every collection has its few
    /// words, and every column of a day's section reads a field its collection has.
    #[test]
    fn every_collection_is_briefed_and_every_headline_column_reads_a_real_field() {
        use crate::catalog::{Derive, EmbeddedKind};
        let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp/briefs"));
        for p in super::all_in(&super::Config::default(), &crate::accounts::Home::tenant(dir)) {
            let spec = p.spec();
            for c in spec.collections {
                let name = spec.qualified(c.name);
                assert!(!c.brief.is_empty() && c.brief.len() <= 45, "{name}: a brief of 1 to 45 characters, not {:?}", c.brief);
                for f in c.flags {
                    assert!(c.knows_field(f.field) && serde_json::from_str::<serde_json::Value>(f.is).is_ok(), "{name}: flag {}={}", f.field, f.is);
                }
            }
            for t in spec.today {
                let c = spec.collection(t.collection).unwrap_or_else(|| panic!("{}: today names {} it does not have", spec.name, t.collection));
                assert!(!t.lead.is_empty(), "{}.{}: a section leads with something", spec.namespace, c.name);
                for l in t.lead {
                    assert!(c.knows_field(l.root()), "{}.{}: column {} reads {}, not a field of it", spec.namespace, c.name, l.name, l.from);
                    if let Derive::Series(_) = l.how {
                        let e = c.embedded.iter().find(|e| e.field == l.from);
                        assert!(matches!(e.map(|e| e.kind), Some(EmbeddedKind::Samples(_))), "{}: {} is not a series of samples", c.name, l.from);
                    }
                }
            }
        }
    }
}
