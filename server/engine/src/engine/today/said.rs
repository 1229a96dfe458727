//! What a provider's sections say, said once: a failure shared by every section is one error, a
//! notice shared by several is one notice (naming the sections when not all of them), and the
//! counts of notices that carry counts are added up.
use super::super::answer::{Notices, Waits};
use super::super::pacing::{self, After};
use super::read::Section;
use super::TodayProvider;
use crate::providers::Provider;
use std::collections::BTreeMap;

/// The provider's part of the report, before its sections' tables are made (engine/today/fit.rs).
pub fn provider(p: &dyn Provider, sections: Vec<Section>) -> (TodayProvider, Vec<Section>) {
    let out = TodayProvider {
        provider: p.spec().name.into(),
        synthetic: sections.iter().any(|s| s.synthetic),
        sections: vec![],
        missing: sections.iter().filter(|s| s.empty).map(|s| s.collection.clone()).collect(),
        errors: errors(&sections),
        notices: notices(p, &sections),
    };
    (out, sections)
}

/// Each distinct failure once, with the sections it hit.
fn errors(sections: &[Section]) -> Vec<String> {
    let mut by: Vec<(String, Vec<&str>)> = vec![];
    for s in sections {
        let Some(e) = &s.error else { continue };
        match by.iter_mut().find(|(x, _)| x == e) {
            Some((_, names)) => names.push(&s.collection),
            None => by.push((e.clone(), vec![&s.collection])),
        }
    }
    by.into_iter().map(|(e, names)| format!("{}: {e}", names.join(", "))).collect()
}

/// The notices of a provider's sections that tell what happened on the way, each said once.
/// Left to other parts of the report: `synthetic` (the report's), `truncated` and
/// `pagination_cycle` (errors), `empty` (missing), `kept_last` (the section's range); not
/// applying to a table of headline fields: resampling, compaction, projection and size notes.
fn notices(p: &dyn Provider, sections: &[Section]) -> BTreeMap<String, String> {
    let all: Vec<(&str, &Notices)> = sections.iter().filter_map(|s| Some((s.collection.as_str(), s.notices.as_ref()?))).collect();
    let mut out = BTreeMap::new();
    let texts = |pick: &dyn Fn(&Notices) -> Option<String>| -> Vec<(&str, String)> { all.iter().filter_map(|(c, n)| Some((*c, pick(n)?))).collect() };
    let mut once = |key: &str, found: Vec<(&str, String)>| {
        if let Some(text) = one(found, all.len()) {
            out.insert(key.to_string(), text);
        }
    };
    once("credential_refreshed", texts(&|n| n.credential_refreshed.clone()));
    once("cache_cleared", texts(&|n| n.cache_cleared.clone()));
    once("page_order", texts(&|n| n.page_order.clone()));
    once("beyond_retention", texts(&|n| n.beyond_retention.as_ref().map(|b| b.note.clone())));
    once("flagged", texts(&|n| n.flagged.clone()));
    once("retried", texts(&|n| n.retried.clone()));
    once("undated_kept", texts(&|n| n.undated_kept.map(|k| format!("{k} record(s) without a readable day were kept"))));
    if let Some(text) = rules(sections, None) {
        out.insert("rules".into(), text);
    }
    let display = p.spec().display;
    let cached: Vec<_> = all.iter().filter_map(|(_, n)| n.cached.as_ref()).collect();
    if !cached.is_empty() {
        let (hit, of): (u32, u32) = cached.iter().fold((0, 0), |(h, w), c| (h + c.windows_cached, w + c.windows));
        out.insert(
            "cached".into(),
            format!(
                "CACHED: {hit} of {of} window(s) of these sections came from this process's memory (fetched earlier), not from \
                 {display} now; recent days are kept only {} minutes, because {}.",
                super::super::cache::RECENT_TTL.as_secs() / 60,
                p.spec().late_sync
            ),
        );
    }
    let budget = p.spec().rate_budget;
    if let Some(text) = waits(&all, |n| n.rate_limited.is_some(), |w, after| Some(pacing::limited(display, w, after))) {
        out.insert("rate_limited".into(), text);
    }
    if let Some(text) = waits(&all, |n| n.paced.is_some(), |w, after| pacing::paced(display, budget, w, after)) {
        out.insert("paced".into(), text);
    }
    out
}

/// What the providers' own rules did, once for the provider (naming the sections when not all of
/// them say it): over every record read, or with `from`, over the days from it (a report that
/// left the days before out says them of what it keeps). A latest-record section keeps its own.
pub fn rules(sections: &[Section], from: Option<jiff::civil::Date>) -> Option<String> {
    let all: Vec<&Section> = sections.iter().filter(|s| s.notices.is_some()).collect();
    let found: Vec<(&str, String)> = all
        .iter()
        .filter_map(|s| {
            let said = match (from, &s.basis) {
                (Some(f), Some(b)) if !s.latest => b.within(Some(f), None),
                _ => s.notices.as_ref()?.rules.clone(),
            };
            Some((s.collection.as_str(), said?.join(" ")))
        })
        .collect();
    one(found, all.len())
}

/// A notice about waiting, said once for the sections that carry it (`has`), from the facts of
/// every section: 429s added up, each cause's wait the longest (the sections are read at once, and
/// one waits on another's pause), cut when any of those sections was; the sections named when
/// not every one carries it.
fn waits(all: &[(&str, &Notices)], has: impl Fn(&Notices) -> bool, say: impl Fn(&Waits, After) -> Option<String>) -> Option<String> {
    let saying: Vec<&str> = all.iter().filter(|(_, n)| has(n)).map(|(c, _)| *c).collect();
    if saying.is_empty() {
        return None;
    }
    let mut w = Waits::default();
    for (_, n) in all {
        w.limited.merge(&n.waits.limited);
        w.waited.beside(n.waits.waited);
    }
    let cut = all.iter().any(|(_, n)| has(n) && n.truncated.is_some());
    let text = say(&w, if cut { After::Cut("see `errors`") } else { After::Whole })?;
    Some(match saying.len() == all.len() {
        true => text,
        false => format!("{}: {text}", saying.join(", ")),
    })
}

/// One notice from several sections: the text once when they agree (naming the sections when not
/// every one said it), else each section's own.
fn one(found: Vec<(&str, String)>, sections: usize) -> Option<String> {
    let first = found.first()?.1.clone();
    if found.iter().all(|(_, t)| *t == first) {
        return Some(match found.len() == sections {
            true => first,
            false => format!("{} ({})", first, found.iter().map(|(c, _)| *c).collect::<Vec<_>>().join(", ")),
        });
    }
    Some(found.iter().map(|(c, t)| format!("{c}: {t}")).collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::one;

    #[test]
    fn a_notice_every_section_says_is_said_once() {
        let same = vec![("a", "x".to_string()), ("b", "x".to_string())];
        assert_eq!(one(same.clone(), 2).as_deref(), Some("x"));
        assert_eq!(one(same, 3).as_deref(), Some("x (a, b)"));
        let differ = vec![("a", "x".to_string()), ("b", "y".to_string())];
        assert_eq!(one(differ, 2).as_deref(), Some("a: x b: y"));
        assert_eq!(one(vec![], 2), None);
    }
}
