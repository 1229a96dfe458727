//! The report within `max_chars`, shared by need rather than split evenly: every section whole
//! while the report fits; then, `full` detail summarised to headline columns; then the oldest
//! days left out, the most recent kept. Each step is said in `shortened`, with how to get the rest.
use super::super::headline::{table, Detail};
use super::super::record::record_day;
use super::super::QueryError;
use super::read::Section;
use super::{section, TodayProvider, TodayReport, TodaySection};
use crate::time::Zone;
use serde_json::Value;

/// The report's providers built again for each step of shortening, from the sections as read.
struct Build<'a> {
    parts: &'a [(TodayProvider, Vec<Section>)],
    /// The report's first day, and every day of it.
    from: &'a str,
    days: Vec<String>,
    zone: &'a Zone,
}

impl Build<'_> {
    /// Every provider's sections in `detail`, from the day `from` (None: every day of the report).
    fn providers(&self, detail: Detail, from: Option<&str>) -> Vec<TodayProvider> {
        self.parts
            .iter()
            .map(|(p, sections)| TodayProvider {
                sections: sections.iter().filter(|s| !s.records.is_empty()).map(|s| self.section(s, detail, from)).filter(|s| !s.rows.is_empty()).collect(),
                provider: p.provider.clone(),
                synthetic: p.synthetic,
                missing: p.missing.clone(),
                errors: p.errors.clone(),
                notices: notices_from(p, sections, from),
            })
            .collect()
    }

    /// One section's table of the days shown, and the days it has no record of.
    fn section(&self, s: &Section, detail: Detail, from: Option<&str>) -> TodaySection {
        let first = from.unwrap_or(self.from);
        // Only the days shown are counted (their series too): never a night left out.
        let shown: Vec<Value> = match s.latest {
            true => s.records.clone(),
            false => s.records.iter().filter(|r| record_day(r, s.spec, self.zone).is_none_or(|d| d.to_string().as_str() >= first)).cloned().collect(),
        };
        let t = table(&shown, s.lead, s.spec, self.zone, detail);
        let mut out = section(s, t);
        if !s.latest && s.error.is_none() {
            out.no_record =
                self.days.iter().filter(|d| d.as_str() >= first && !out.rows.iter().any(|r| r.first() == Some(&Value::from(d.as_str())))).cloned().collect();
        }
        out
    }
}

pub fn fit(report: &mut TodayReport, parts: Vec<(TodayProvider, Vec<Section>)>, detail: Detail, max: usize, zone: &Zone) -> Result<(), QueryError> {
    let report_from = report.from.clone();
    let build = Build { parts: &parts, from: &report_from, days: report_days(&report.from, &report.today), zone };
    report.providers = build.providers(detail, None);
    let whole = report.chars();
    if whole <= max {
        return Ok(());
    }
    let mut said = vec![];
    if detail == Detail::Full {
        report.providers = build.providers(Detail::Headline, None);
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
    if oldest_days_out(report, &build, &said, max) {
        return Ok(());
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

/// Leave out the oldest days, one at a time, keeping the most recent, until the report fits
/// (true) or only the last day is left (false); `said`: the shortening said before.
fn oldest_days_out(report: &mut TodayReport, build: &Build, said: &[String], max: usize) -> bool {
    let mut shown: Vec<String> = report
        .providers
        .iter()
        .flat_map(|p| p.sections.iter().flat_map(|s| s.rows.iter().filter_map(|r| r.first().and_then(Value::as_str).map(String::from))))
        .collect();
    shown.sort();
    shown.dedup();
    let headline = report.chars();
    for from in shown.iter().skip(1) {
        report.providers = build.providers(Detail::Headline, Some(from));
        let mut now = said.to_vec();
        now.push(format!(
            "The report from {} would take {headline} characters, over max_chars = {max}: the days before {from} are left out. \
             Ask again with a larger max_chars or fewer `days`, or use a section's `raw` call for those days.",
            report.from
        ));
        report.shortened = Some(now.join(" "));
        if report.chars() <= max {
            return true;
        }
    }
    false
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
