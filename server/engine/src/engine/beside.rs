//! Which providers' answers may stand beside which, decided once for every report that reads
//! several providers (`vitals_today`, `vitals_daily`): sample data only when nothing is
//! connected, so a connected account's answer never carries another provider's samples beside
//! it; an opt-in connection nobody connected, or a file nobody chose, is no part of a connected
//! person's answer; a provider whose login is
//! damaged is read, so its error is said rather than passed over as "not connected". Two copies
//! of this rule had drifted apart (the daily view left a damaged login out, and listed an opt-in
//! connection nobody asked for); the callers now only word what it decided.
use super::Engine;
use crate::providers::{Mode, Provider};
use std::sync::Arc;

/// Why a provider is left out of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Not connected while another provider is: only its sample data exists, never shown beside
    /// a connected account's.
    Samples,
    /// Not connected, and it has no sample data.
    Nothing,
}

/// The providers a report reads, and those it leaves out, each in the engine's order.
pub struct Beside {
    pub read: Vec<Arc<dyn Provider>>,
    pub left: Vec<(&'static str, Left)>,
}

impl Beside {
    /// The names left out for `why`, in the engine's order.
    pub fn left_for(&self, why: Left) -> Vec<&'static str> {
        self.left.iter().filter(|(_, w)| *w == why).map(|(n, _)| *n).collect()
    }
}

/// The one rule, over the engine's providers as their credentials stand now.
pub fn beside(engine: &Engine) -> Beside {
    let asked: Vec<(&Arc<dyn Provider>, Mode, bool)> = engine
        .providers()
        .filter(|p| !crate::providers::unasked(p.as_ref()))
        .map(|p| {
            let cred = p.credential().current();
            (p, cred.mode(), cred.problem.is_some())
        })
        .collect();
    let connected = asked.iter().any(|(_, m, _)| *m == Mode::Connected);
    let mut out = Beside { read: vec![], left: vec![] };
    for (p, mode, damaged) in asked {
        match mode {
            Mode::Connected => out.read.push(p.clone()),
            Mode::Sandbox if !connected => out.read.push(p.clone()),
            // A provider read from a file nobody chose (Apple Health's export): like an opt-in
            // connection nobody asked for, no part of a connected person's answer, nor said left out.
            Mode::Sandbox if p.spec().connection.file().is_some() => {}
            Mode::Sandbox => out.left.push((p.spec().name, Left::Samples)),
            Mode::NeedsCredentials if damaged => out.read.push(p.clone()),
            Mode::NeedsCredentials => out.left.push((p.spec().name, Left::Nothing)),
        }
    }
    out
}
