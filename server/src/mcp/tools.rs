//! The tools. Each one parses its parameters, calls the engine, and returns the engine's answer.
use super::args::{NoParameters, Parameters};
use super::connect::{connect, ConnectReport, Connection};
use super::{apps, progress};
use super::{check_report, sources_report, CheckReport};
use crate::accounts::link::Links;
use crate::engine::{Answer, Deadline, Engine, QueryError, QueryRequest, TodayReport, TodayRequest};
use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const SOURCES_URI: &str = "vitals://sources";
/// Said the same way when the resource is listed and when it is read.
const SOURCES_MIME: &str = "application/json";

/// `fields` as an array of names, or (accepted, and said in the answer) one comma-separated string.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FieldsArg {
    List(Vec<String>),
    Comma(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourcesArgs {
    /// One provider's full entry, e.g. `withings`.
    #[serde(default)]
    pub provider: Option<String>,
    /// One collection's full entry, e.g. `oura.sleep`.
    #[serde(default)]
    pub collection: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    /// Qualified name from vitals_sources, e.g. `oura.sleep`.
    pub collection: String,
    /// First local day, YYYY-MM-DD. Default: 6 days before `end`.
    #[serde(default)]
    pub start: Option<String>,
    /// Last local day (inclusive), YYYY-MM-DD. Default: today.
    #[serde(default)]
    pub end: Option<String>,
    /// One local day, YYYY-MM-DD, instead of start and end.
    #[serde(default)]
    pub day: Option<String>,
    /// One record by id: `garmin.activity` with an id from garmin.activities.
    #[serde(default)]
    pub id: Option<String>,
    /// Series: from this instant (RFC 3339, offset), with `to`.
    #[serde(default)]
    pub from: Option<String>,
    /// Series: until this instant.
    #[serde(default)]
    pub to: Option<String>,
    /// Series: during this workout (id from its listing).
    #[serde(default)]
    pub workout: Option<String>,
    /// Field names to return.
    #[serde(default)]
    pub fields: Option<FieldsArg>,
    /// Only the latest record (collections whose `latest` is true).
    #[serde(default)]
    pub latest: Option<bool>,
    /// `columns` (default), `records` or `csv`.
    #[serde(default)]
    pub format: Option<String>,
    /// IANA zone or ±HH:MM. Default: the server's.
    #[serde(default)]
    pub tz: Option<String>,
    /// Series: `raw`, `1m`, `5m`, `15m`, `30m`, `1h` or `1d`. Default: raw if it fits.
    #[serde(default)]
    pub resolution: Option<String>,
    /// Answer budget in characters, 5,000 to 2,000,000. Default 100,000.
    #[serde(default)]
    pub max_chars: Option<i64>,
    /// true empties the memory cache first.
    #[serde(default)]
    pub forget: Option<bool>,
    /// The collection's options from its vitals_sources entry, e.g. {"include_manual": true}.
    #[serde(default)]
    pub options: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectArgs {
    /// e.g. `oura` (vitals_sources lists them).
    pub provider: String,
    /// true signs in anew although connected (to switch accounts).
    #[serde(default)]
    pub again: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodayArgs {
    /// Days before today, 1 to 30. Default 7; 1 for last night and today.
    #[serde(default)]
    pub days: Option<i64>,
    /// `headline` (default) or `full` (every field).
    #[serde(default)]
    pub detail: Option<String>,
    /// Budget in characters, 2,000 to 2,000,000. Default 100,000.
    #[serde(default)]
    pub max_chars: Option<i64>,
    /// IANA zone or ±HH:MM. Default: the server's.
    #[serde(default)]
    pub tz: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// `polar` or `garmin`.
    pub provider: String,
    /// The activity's id, from polar.exercises or garmin.activities.
    pub id: String,
    /// `fit`, `tcx` or `gpx` (GPX needs a GPS track).
    pub format: String,
    /// Absolute path or ~/path, in a folder that exists, e.g. ~/run.fit. Ask the user.
    pub path: String,
    /// true replaces an existing file. Default false.
    #[serde(default)]
    pub overwrite: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareArgs {
    /// `provider.collection.field`, e.g. `oura.daily_readiness.score`.
    pub metric: String,
    /// Period A's first day, YYYY-MM-DD.
    pub a_start: String,
    /// Period A's last day (inclusive).
    pub a_end: String,
    /// Period B's first day; A and B must not overlap.
    pub b_start: String,
    /// Period B's last day (inclusive).
    pub b_end: String,
    /// IANA zone or ±HH:MM. Default: the server's.
    #[serde(default)]
    pub tz: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelateArgs {
    /// A daily metric, e.g. `withings.measurements.weight_kg`.
    pub x: String,
    /// Another, e.g. `oura.daily_activity.steps`.
    pub y: String,
    /// First day, YYYY-MM-DD.
    pub start: String,
    /// Last day (inclusive).
    pub end: String,
    /// Days y follows x, 0 to 7. Default 0.
    #[serde(default)]
    pub lag: Option<i64>,
    /// IANA zone or ±HH:MM. Default: the server's.
    #[serde(default)]
    pub tz: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrendArgs {
    /// `provider.collection.field`, e.g. `garmin.daily_summary.resting_hr_bpm`.
    pub metric: String,
    /// First day, YYYY-MM-DD.
    pub start: String,
    /// Last day (inclusive).
    pub end: String,
    /// IANA zone or ±HH:MM. Default: the server's.
    #[serde(default)]
    pub tz: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DailyArgs {
    /// First day, YYYY-MM-DD.
    pub start: String,
    /// Last day (inclusive); ≤ 92 days, 366 with `group`.
    pub end: String,
    /// `week`, `month`, `weekday` or `weekend`: mean, min, max, n, not days.
    #[serde(default)]
    pub group: Option<String>,
    /// Columns (default all): sleep_total_min, sleep_efficiency_pct, sleep_score, resting_hr_bpm, hrv_ms, steps, active_kcal, weight_kg, body_fat_pct, systolic_mmhg, diastolic_mmhg, readiness_score.
    #[serde(default)]
    pub fields: Option<Vec<String>>,
    /// IANA zone or ±HH:MM. Default: the server's.
    #[serde(default)]
    pub tz: Option<String>,
}

#[derive(Clone)]
pub struct Vitals {
    engine: Arc<Engine>,
    /// Logins under way in this process (a retry or a second call joins the same one).
    links: Arc<Links>,
    tool_router: ToolRouter<Self>,
}

/// A report as a tool result: structured content and its text copy, every number tidied
/// (engine/render.rs: no float noise, a whole number without a fraction).
fn structured<T: Serialize>(v: &T) -> CallToolResponse {
    let mut value = serde_json::to_value(v).expect("reports serialise");
    crate::engine::render::tidy_numbers(&mut value);
    CallToolResult::structured(value).into()
}

#[tool_router(router = tool_router)]
impl Vitals {
    pub fn new(engine: Arc<Engine>) -> Self {
        let links = Arc::new(Links::local(engine.home()));
        Self::with_links(engine, links)
    }

    /// A handler sharing `links` with the others of one home: over HTTP each session (and each
    /// 2026 request) gets a handler of its own, and a retry must find the login its first call started.
    pub fn with_links(engine: Arc<Engine>, links: Arc<Links>) -> Self {
        let mut tool_router = Self::tool_router();
        for route in tool_router.map.values_mut() {
            let t = &mut route.attr;
            super::args::clean_schema(Arc::make_mut(&mut t.input_schema));
            super::args::lean_schema(Arc::make_mut(&mut t.input_schema));
            if let Some(o) = t.output_schema.as_mut() {
                super::outputs::lean_output(Arc::make_mut(o));
            }
        }
        Vitals { engine, links, tool_router }
    }

    /// The input schema `tool` lists, cleaned (its arguments are read against it: mcp/args.rs).
    pub(super) fn input_schema(&self, tool: &str) -> Option<Arc<JsonObject>> {
        self.tool_router.get(tool).map(|t| t.input_schema.clone())
    }

    /// This call's time budget, from now (engine/deadline.rs).
    fn deadline(&self) -> Deadline {
        Deadline::after(self.engine.limits.call_budget)
    }

    /// The names of the tools this server lists, in order (pinned against the docs by a test).
    pub fn tool_names(&self) -> Vec<String> {
        apps::without_views(self.tool_router.list_all()).into_iter().map(|t| t.name.to_string()).collect()
    }

    /// The tools only a host's views call (listed to a host with MCP Apps, `visibility: ["app"]`).
    pub fn view_tool_names(&self) -> Vec<String> {
        let model = self.tool_names();
        self.tool_router.list_all().into_iter().map(|t| t.name.to_string()).filter(|n| !model.contains(n)).collect()
    }

    #[tool(
        name = "vitals_sources",
        title = "What wearable data can be read",
        description = "Each provider's state (`connected`: the user's own data; `sandbox`: sample data, not the user's; \
`needs_credentials`) with how to connect it, and its collections: the qualified names vitals_query takes, with what each holds. \
With `provider` or `collection`: the full entry (fields, options, range kind, volume, retention).",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    pub async fn vitals_sources(&self, Parameters(args): Parameters<SourcesArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        match (&a.provider, &a.collection) {
            (None, None) => Ok(structured(&super::sources::listing(&self.engine))),
            (p, c) => super::sources::entry(&self.engine, p.as_deref(), c.as_deref()).map(|r| structured(&r)),
        }
    }

    #[tool(
        name = "vitals_query",
        title = "Read one collection over a range of days",
        description = "Every record of one collection over inclusive local days, every page followed. `data` is {columns, rows} \
unless `format` says otherwise; a series too large for max_chars comes back in buckets (said in notices.resolution_auto). \
Read `notices`: `synthetic` is sample data, not the user's (say so); `truncated` is incomplete: call again with `start` = its \
`continue_from`. For last night, readiness or a day's activity, vitals_today is cheaper.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<Answer>()
    )]
    pub async fn vitals_query(
        &self,
        Parameters(args): Parameters<QueryArgs>,
        RequestState(state): RequestState,
        InputResponses(answers): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, String> {
        let a = args?;
        let (fields, fields_split) = match a.fields {
            None => (None, false),
            Some(FieldsArg::List(v)) => (Some(v), false),
            Some(FieldsArg::Comma(s)) => (Some(s.split(',').map(|f| f.trim().to_string()).collect()), s.contains(',')),
        };
        let req = QueryRequest {
            collection: a.collection,
            start: a.start,
            end: a.end,
            day: a.day,
            fields,
            fields_split,
            latest: a.latest.unwrap_or(false),
            format: a.format,
            tz: a.tz,
            resolution: a.resolution,
            max_chars: a.max_chars,
            fresh: false,
            forget: a.forget.unwrap_or(false),
            options: a.options,
            keep_last: None,
            id: a.id,
            window: None,
            from: a.from,
            to: a.to,
            workout: a.workout,
            window_label: None,
            progress: None,
            deadline: Some(self.deadline()),
        };
        // A retry of a 2026 `input_required` round: the connect this query started is finishing.
        let needs = match state {
            Some(_) => None,
            None => match progress::reported(&ctx, |p| self.engine.query(QueryRequest { progress: p, ..req.clone() })).await {
                Ok(answer) => return Ok(structured(&answer)),
                Err(QueryError::NeedsAccount { provider, why }) => Some((provider, why)),
                Err(e) => return Err(e.to_string()),
            },
        };
        let of_collection = || {
            let (namespace, collection) = req.collection.split_once('.')?;
            self.engine.resolve(namespace, collection).map(|(p, _)| p.spec().name)
        };
        let pname = needs.as_ref().map(|(p, _)| *p).or_else(of_collection).unwrap_or_default();
        let why = needs.map(|(_, w)| w).unwrap_or_default();
        // A connection the user must ask for by name is never started by a query: its error says how.
        let explicit = |s: &&'static crate::catalog::ProviderSpec| s.connection.session().is_some_and(|x| x.explicit);
        let Some(spec) = self.engine.provider(pname).map(|p| p.spec()).filter(|s| s.connection.connects() && !explicit(s)) else {
            return Err(if why.is_empty() { "`collection`: this retry belongs to no login under way; send the query again.".into() } else { why });
        };
        match connect(&self.links, spec, &ctx, state, answers, req.deadline.unwrap_or_else(|| self.deadline())).await {
            Connection::Done(c) => {
                let mut answer = self.engine.query(req).await.map_err(|e| e.to_string())?;
                answer.notices.account_connected = Some(format!("{} This answer is the connected account's own data.", c.summary()));
                Ok(structured(&answer))
            }
            Connection::Ask(ask) => Ok(ask.into()),
            Connection::Waiting(r) => {
                Err(format!("{why} {} Login address: {} Terminal: {}", r.message, r.url.unwrap_or_default(), r.cli.unwrap_or_default()).trim().to_string())
            }
            Connection::Failed(e) => Err(format!("{why} {e}").trim().to_string()),
        }
    }

    #[tool(
        name = "vitals_connect",
        title = "Connect a wearable account",
        description = "Connects the user's own account at a provider (e.g. `oura`) so queries read real data: a login page in the \
browser, or for a key or password a page this server serves on this computer. Never ask for a password or key in the chat. \
`state`: `connected`, `already_connected` (again=true signs in anew) or `waiting_for_browser`: give the user `url`, then call \
again to finish (the login stays open 10 minutes).",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<ConnectReport>()
    )]
    pub async fn vitals_connect(
        &self,
        Parameters(args): Parameters<ConnectArgs>,
        RequestState(state): RequestState,
        InputResponses(answers): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, String> {
        let deadline = self.deadline();
        let a = args?;
        let connectable: Vec<&str> = self.engine.providers().filter(|p| p.spec().connection.connects()).map(|p| p.spec().name).collect();
        let name = a.provider.trim().to_ascii_lowercase();
        let Some(p) = self.engine.provider(&name).filter(|p| p.spec().connection.connects()) else {
            return Err(format!("`provider`: {:?} is not a provider that can be connected; send one of: {}.", a.provider, connectable.join(", ")));
        };
        let cred = p.credential().current();
        if state.is_none() && !a.again.unwrap_or(false) && cred.mode() == crate::providers::Mode::Connected {
            let how = match cred.kind {
                crate::providers::CredentialKind::PersonalToken => format!(
                    "{} is connected with a personal access token ({}); it takes precedence over a login. Unset it to use a login instead.",
                    p.spec().display,
                    cred.origin
                ),
                _ => format!("{} is already connected ({}). Send again=true to sign in anew.", p.spec().display, cred.origin),
            };
            return Ok(structured(&ConnectReport {
                provider: name,
                state: "already_connected".into(),
                message: how,
                url: None,
                cli: None,
                scopes: cred.scopes,
                expires_at: crate::time::unix_rfc3339(cred.expires_at),
            }));
        }
        match connect(&self.links, p.spec(), &ctx, state, answers, deadline).await {
            Connection::Done(c) => Ok(structured(&ConnectReport::connected(&c))),
            Connection::Ask(ask) => Ok(ask.into()),
            Connection::Waiting(r) => Ok(structured(&r)),
            Connection::Failed(e) => Err(e),
        }
    }

    #[tool(
        name = "vitals_today",
        title = "Last night, today and the days before",
        description = "Last night's sleep, readiness and activity for today and the `days` before it, and the latest weigh-in, from \
every connected provider at once (sample data only when none is): per section a small table of the fields people ask about, \
and `raw`, the vitals_query call for every other field. `missing`: no record yet (today may not be synced); `errors`: failed, \
with why.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<TodayReport>()
    )]
    pub async fn vitals_today(&self, Parameters(args): Parameters<TodayArgs>, ctx: RequestContext<RoleServer>) -> Result<CallToolResponse, String> {
        let a = args?;
        let deadline = Some(self.deadline());
        let req = |progress| TodayRequest { days: a.days, max_chars: a.max_chars, detail: a.detail.clone(), tz: a.tz.clone(), progress, deadline };
        progress::reported(&ctx, |p| self.engine.today(req(p))).await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_export",
        title = "Save one activity's file (FIT, TCX or GPX) where the user says",
        description = "Writes one activity (a Polar exercise or a Garmin activity, by the `id` its collection gives) as a FIT, TCX \
or GPX file to the absolute `path` the user named. Call it only when the user asks to save a file; an existing file is never \
replaced unless overwrite=true. `synthetic` true: the sample's file, not the user's.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        output_schema = schema_for_output::<crate::export::Exported>()
    )]
    pub async fn vitals_export(&self, Parameters(args): Parameters<ExportArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        let req = crate::export::ExportRequest { provider: a.provider, id: a.id, format: a.format, path: a.path, overwrite: a.overwrite.unwrap_or(false) };
        crate::export::export(&self.engine, req, self.deadline()).await.map(|e| structured(&e)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_compare",
        title = "Did a daily metric differ between two periods, beyond its own noise?",
        description = "Did a daily metric differ between two periods beyond its own day-to-day noise (learnt from the 120 days \
before)? Verdict `outside_noise`, `within_noise` (not evidence of a change, never \"no change\") or `cannot_tell`, with the \
means, the band, the method and a `reading` to repeat.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<crate::analysis::ask::CompareReport>()
    )]
    pub async fn vitals_compare(&self, Parameters(args): Parameters<CompareArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        crate::analysis::ask::compare(&self.engine, &a.metric, [&a.a_start, &a.a_end], [&a.b_start, &a.b_end], a.tz.as_deref())
            .await
            .map(|r| structured(&r))
            .map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_relate",
        title = "Do two daily metrics move together beyond chance?",
        description = "Do the day-to-day changes of two daily metrics (`x`, `y`, possibly of two providers) move together, y `lag` \
days after x, beyond chance? Verdict `outside_noise`, `within_noise` (not evidence of a relation) or `cannot_tell` (about three \
months are needed), with r, its interval, the method and a `reading`. An association, never a cause.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<crate::analysis::ask::RelateReport>()
    )]
    pub async fn vitals_relate(&self, Parameters(args): Parameters<RelateArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        let ask = crate::analysis::ask::relate(&self.engine, &a.x, &a.y, (&a.start, &a.end), a.lag, a.tz.as_deref());
        ask.await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_trend",
        title = "Is a daily metric drifting?",
        description = "Is a daily metric drifting? The slope per 30 days with a 95 % interval that allows for autocorrelation: \
`rising`, `falling`, `flat_within_noise` (not evidence of no trend) or `cannot_tell`, with the method and a `reading`.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<crate::analysis::ask::TrendReport>()
    )]
    pub async fn vitals_trend(&self, Parameters(args): Parameters<TrendArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        crate::analysis::ask::trend(&self.engine, &a.metric, (&a.start, &a.end), a.tz.as_deref()).await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_daily",
        title = "One row per day across every provider",
        description = "One row per local day (or per `group`) with normalised columns across the connected providers, each value with `from` \
(provider.collection.field). When two devices measured a day, one is shown by the rule in `columns[].shown` and the others are \
in `also`: nothing is averaged across devices.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<crate::analysis::view::DailyReport>()
    )]
    pub async fn vitals_daily(&self, Parameters(args): Parameters<DailyArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        let view = crate::analysis::view::daily_view(&self.engine, (&a.start, &a.end), a.fields, a.tz.as_deref(), a.group.as_deref());
        view.await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_view_data",
        title = "Every sample of a span, for a chart",
        description = "For this server's views only (MCP Apps, visibility app): a sleep collection's nights (hypnogram runs, stage \
minutes, heart rate and HRV), or a series at the finest resolution that fits, over inclusive local days, optionally only `from` \
`to` (a zoom); or a `metric`'s daily values as the analyses read them. `kind` says which: `night`, `series`, `days` or \
`records` (nothing to draw).",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    pub async fn vitals_view_data(&self, Parameters(args): Parameters<apps::ViewDataArgs>) -> Result<CallToolResponse, String> {
        let a = args?;
        super::apps::view_data(&self.engine, a, self.deadline()).await.map(|v| structured(&v))
    }

    #[tool(
        name = "vitals_check",
        title = "Check credentials and connectivity",
        description = "Per provider: how it connects, the credential in use and its expiry (never a secret), who answered one cheap \
read (`answered_by`: `api`, `sample_data`, `not_connected` or `nobody`, with why) and the request limits. For diagnosing a \
connection.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        output_schema = schema_for_output::<CheckReport>()
    )]
    pub async fn vitals_check(&self, NoParameters(args): NoParameters) -> Result<CallToolResponse, String> {
        args?;
        let mut report = check_report(&self.engine).await;
        // Hosted, the browser comes back to this server's own callback: that is what to register.
        for p in report.providers.iter_mut().filter(|p| p.redirect.is_some()) {
            if let Some(url) = self.links.hosted_redirect(&p.provider) {
                p.redirect = Some(format!("{url} (this server's callback; register exactly this URL with the provider)"));
            }
        }
        Ok(structured(&report))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Vitals {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("vitals", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Read-only access to the user's own wearable data. For last night's sleep, readiness or the day's activity, call \
                 vitals_today (one call covers every connected provider). vitals_sources lists the rest (a short list; its \
                 `provider` and `collection` entries give the details). Every answer says what happened in `notices`: tell the user \
                 when it is `synthetic` (sample data) or `truncated` (incomplete), and never present a truncated answer as \
                 complete. When the user wants their own data rather than the sample, call vitals_connect.",
            )
    }

    /// The tools, with their views for a host that declared MCP Apps, as before for any other.
    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tool_router.list_all();
        let tools = if apps::host_supports(context.peer.peer_info().as_deref()) { apps::with_views(tools) } else { apps::without_views(tools) };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(&self, _request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        let mut all = vec![Resource::new(SOURCES_URI, "sources").with_mime_type(SOURCES_MIME)];
        if apps::host_supports(context.peer.peer_info().as_deref()) {
            all.extend(apps::resources());
        }
        Ok(ListResourcesResult::with_all_items(all))
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, _context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(html) = apps::html(&request.uri) {
            let contents = ResourceContents::text(html, request.uri).with_mime_type(apps::MIME).with_meta(apps::resource_meta());
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if request.uri != SOURCES_URI {
            let views: Vec<&str> = apps::VIEWS.iter().map(|v| v.uri).collect();
            return Err(ErrorData::resource_not_found(
                format!("no resource at {}; there are {SOURCES_URI} and the views {}", request.uri, views.join(", ")),
                None,
            ));
        }
        let text = serde_json::to_string_pretty(&sources_report(&self.engine)).unwrap_or_default();
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri).with_mime_type(SOURCES_MIME)]).into())
    }
}

impl super::args::ListsSchemas for Vitals {
    fn input_schema(&self, tool: &str) -> Option<Arc<JsonObject>> {
        Vitals::input_schema(self, tool)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn vitals_daily_lists_every_column_of_the_view() {
        let schema = serde_json::to_string(&schemars::schema_for!(super::DailyArgs)).unwrap();
        for c in crate::analysis::view::column_names() {
            assert!(schema.contains(c), "vitals_daily's `fields` does not list {c}");
        }
    }
}
