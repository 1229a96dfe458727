//! The report within `max_chars`, shared by need rather than split evenly: every section whole
//! while the report fits; then, `full` detail summarised to headline columns; then the oldest
//! days left out, the most recent kept. Each step is said in `shortened`, with how to get the rest.
use super::super::headline::{table, Detail};
use super::super::record::record_day;
use super::super::QueryError;
use super::read::Section;
use super::{section, TodayProvider, TodayReport};
use crate::time::Zone;
use serde_json::Value;

pub fn fit(report: &mut TodayReport, parts: Vec<(TodayProvider, Vec<Section>)>, detail: Detail, max: usize, zone: &Zone) -> Result<(), QueryError> {
    let report_from = report.from.clone();
    let days = report_days(&report.from, &report.today);
    let build = |detail: Detail, from: Option<&str>| -> Vec<TodayProvider> {
        parts
            .iter()
            .map(|(p, sections)| TodayProvider {
                sections: sections
                    .iter()
                    .filter(|s| !s.records.is_empty())
                    .map(|s| {
                        let first = from.unwrap_or(&report_from);
                        // Only the days shown are counted (their series too): never a night left out.
                        let shown: Vec<Value> = match s.latest {
                            true => s.records.clone(),
                            false => {
                                s.records.iter().filter(|r| record_day(r, s.spec, zone).is_none_or(|d| d.to_string().as_str() >= first)).cloned().collect()
                            }
                        };
                        let t = table(&shown, s.lead, s.spec, zone, detail);
                        let mut out = section(s, t);
                        if !s.latest && s.error.is_none() {
                            out.no_record = days
                                .iter()
                                .filter(|d| d.as_str() >= first && !out.rows.iter().any(|r| r.first() == Some(&Value::from(d.as_str()))))
                                .cloned()
                                .collect();
                        }
                        out
                    })
                    .filter(|s| !s.rows.is_empty())
                    .collect(),
                provider: p.provider.clone(),
                synthetic: p.synthetic,
                missing: p.missing.clone(),
                errors: p.errors.clone(),
                notices: notices_from(p, sections, from),
            })
            .collect()
    };
    report.providers = build(detail, None);
    let whole = report.chars();
    if whole <= max {
        return Ok(());
    }
    let mut said = vec![];
    if detail == Detail::Full {
        report.providers = build(Detail::Headline, None);
        report.detail = Detail::Headline.name().into();
        said.push(format!(
            "With every field (detail=full) the report would take {whole} characters, over max_chars = {max}: each section shows \
             only its headline columns (each `raw` call returns every field)."
        ));
        report.shortened = Some(said.join(" "));
        if report.chars() <= max {
            return Ok(());
        }
    }
    // Leave out the oldest days, one at a time, keeping the most recent.
    let mut shown: Vec<String> = report
        .providers
        .iter()
        .flat_map(|p| p.sections.iter().flat_map(|s| s.rows.iter().filter_map(|r| r.first().and_then(Value::as_str).map(String::from))))
        .collect();
    shown.sort();
    shown.dedup();
    let headline = report.chars();
    for from in shown.iter().skip(1) {
        report.providers = build(Detail::Headline, Some(from));
        let mut now = said.clone();
        now.push(format!(
            "The report from {} would take {headline} characters, over max_chars = {max}: the days before {from} are left out. \
             Ask again with a larger max_chars or fewer `days`, or use a section's `raw` call for those days.",
            report.from
        ));
        report.shortened = Some(now.join(" "));
        if report.chars() <= max {
            return Ok(());
        }
    }
    // The last day measured alone, as the report would be without a word about shortening: the
    // same size whatever `days` or `detail` was asked.
    report.shortened = None;
    Err(QueryError::BadInput(format!(
        "`max_chars`: even the last day alone takes more than max_chars = {max} characters ({} with every provider's sections). Send a \
         larger max_chars (up to {}).",
        report.chars(),
        super::super::plan::MAX_MAX_CHARS
    )))
}

/// A provider's notices, the rules said again of the days from `from` when the days before it are
/// left out: no count of a night the report no longer shows.
fn notices_from(p: &TodayProvider, sections: &[Section], from: Option<&str>) -> std::collections::BTreeMap<String, String> {
    let mut notices = p.notices.clone();
    if let Some(first) = from.and_then(|f| f.parse::<jiff::civil::Date>().ok()) {
        match super::said::rules(sections, Some(first)) {
            Some(text) => notices.insert("rules".into(), text),
            None => notices.remove("rules"),
        };
        // The days a provider does not keep lie before every day it answered for, so before
        // `from`: they are among the days left out, which `shortened` says.
        notices.remove("beyond_retention");
    }
    notices
}

/// Every day from `from` to `today`, both included, as YYYY-MM-DD.
fn report_days(from: &str, today: &str) -> Vec<String> {
    let (Ok(mut d), Ok(last)) = (from.parse::<jiff::civil::Date>(), today.parse::<jiff::civil::Date>()) else {
        return vec![];
    };
    let mut out = vec![];
    while d <= last {
        out.push(d.to_string());
        match d.tomorrow() {
            Ok(n) => d = n,
            Err(_) => break,
        }
    }
    out
}
