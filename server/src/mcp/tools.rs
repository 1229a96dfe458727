//! The tools. Each one parses its parameters, calls the engine, and returns the engine's answer.
use super::connect::{connect, ConnectReport, Connection};
use super::progress;
use super::{check_report, sources_report, CheckReport, SourcesReport};
use crate::accounts::link::Links;
use crate::engine::{Answer, Engine, QueryError, QueryRequest, TodayReport};
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, Json, RoleServer, ServerHandler};
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
pub struct QueryArgs {
    /// Qualified collection name from vitals_sources, e.g. `oura.daily_sleep` or `oura.heartrate`.
    pub collection: String,
    /// First local day, inclusive, YYYY-MM-DD. Defaults to 6 days before `end`.
    #[serde(default)]
    pub start: Option<String>,
    /// Last local day, inclusive, YYYY-MM-DD. Defaults to today.
    #[serde(default)]
    pub end: Option<String>,
    /// One local day, YYYY-MM-DD: shorthand for start = end = day.
    #[serde(default)]
    pub day: Option<String>,
    /// One record by its id, only for collections read one at a time (`garmin.activity`, with an `id` from garmin.activities).
    #[serde(default)]
    pub id: Option<String>,
    /// Field names to return (`id` and `day`, or `timestamp` for series, always come back).
    #[serde(default)]
    pub fields: Option<FieldsArg>,
    /// Only the most recent record; only for collections whose `latest` is true in vitals_sources, without a range.
    #[serde(default)]
    pub latest: Option<bool>,
    /// `columns` (default: {"columns": [...], "rows": [[...]]}), `records` (one object per record) or `csv`. `json` means `columns`.
    #[serde(default)]
    pub format: Option<String>,
    /// Time zone for local days: IANA name (Europe/Paris) or offset (-06:00). Defaults to the machine's zone.
    #[serde(default)]
    pub tz: Option<String>,
    /// For time series (and documents with embedded series): `raw`, `1m`, `5m`, `15m`, `30m`, `1h` or `1d`. Default: raw when it
    /// fits `max_chars`, else the finest that fits (said in notices.resolution_auto).
    #[serde(default)]
    pub resolution: Option<String>,
    /// Character budget of the answer, 5,000 to 2,000,000. Default 100,000.
    #[serde(default)]
    pub max_chars: Option<i64>,
    /// true empties this server's memory cache first, so everything is fetched again.
    #[serde(default)]
    pub forget: Option<bool>,
    /// Options of this collection alone, as vitals_sources lists them, e.g. {"include_manual": true} for withings.measurements.
    #[serde(default)]
    pub options: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectArgs {
    /// The provider to connect, e.g. `oura` (vitals_sources lists them).
    pub provider: String,
    /// true signs in again even when an account is connected (to switch accounts or renew consent).
    #[serde(default)]
    pub again: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodayArgs {
    /// How many days before today to include, 1 to 30. Default 7.
    #[serde(default)]
    pub days: Option<i64>,
    /// Character budget of the whole report, shared evenly by its sections, 20,000 to 2,000,000. Default 100,000.
    #[serde(default)]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// The provider whose activity to export: `polar` or `garmin` (vitals_sources says which offer files, and which formats).
    pub provider: String,
    /// The activity's `id`, as its collection gives it (e.g. polar.exercises).
    pub id: String,
    /// `fit`, `tcx` or `gpx` (GPX only for an activity recorded with GPS).
    pub format: String,
    /// Absolute path of the file to write, in a folder that exists, e.g. /home/me/runs/2026-12-01.fit. Ask the user for it.
    pub path: String,
    /// true replaces an existing file at `path`. Default false: an existing file is never touched.
    #[serde(default)]
    pub overwrite: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareArgs {
    /// A daily metric as `provider.collection.field` (nested paths allowed), e.g. `oura.daily_readiness.score` or `withings.measurements.weight_kg`.
    pub metric: String,
    /// First day of period A, YYYY-MM-DD (inclusive).
    pub a_start: String,
    /// Last day of period A, YYYY-MM-DD (inclusive).
    pub a_end: String,
    /// First day of period B, YYYY-MM-DD (inclusive); A and B must not overlap.
    pub b_start: String,
    /// Last day of period B, YYYY-MM-DD (inclusive).
    pub b_end: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelateArgs {
    /// The first daily metric, `provider.collection.field`, e.g. `withings.measurements.weight_kg`.
    pub x: String,
    /// The second daily metric, possibly of another provider, e.g. `oura.daily_activity.steps`.
    pub y: String,
    /// First local day, YYYY-MM-DD (inclusive). About three months are needed for a verdict.
    pub start: String,
    /// Last local day, YYYY-MM-DD (inclusive); today is never analysed.
    pub end: String,
    /// Days y follows x, 0 to 7. Default 0 (the same day).
    #[serde(default)]
    pub lag: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrendArgs {
    /// A daily metric as `provider.collection.field`, e.g. `garmin.daily_summary.resting_hr_bpm`.
    pub metric: String,
    /// First local day, YYYY-MM-DD (inclusive).
    pub start: String,
    /// Last local day, YYYY-MM-DD (inclusive); today is never analysed.
    pub end: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DailyArgs {
    /// First local day, YYYY-MM-DD (inclusive).
    pub start: String,
    /// Last local day, YYYY-MM-DD (inclusive), at most 92 days after `start`; today is never shown (it is not over).
    pub end: String,
    /// Columns to include (default all): sleep_total_min, sleep_efficiency_pct, sleep_score, resting_hr_bpm, hrv_ms, steps, active_kcal, weight_kg, body_fat_pct, systolic_mmhg, diastolic_mmhg, readiness_score.
    #[serde(default)]
    pub fields: Option<Vec<String>>,
}

/// The input schema of a tool's parameters (cleaned of non-standard formats in [`Vitals::new`]).
fn input<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|e| panic!("the input schema of {} is not an object: {e}", std::any::type_name::<T>()))
}

#[derive(Clone)]
pub struct Vitals {
    engine: Arc<Engine>,
    /// Logins under way in this process (a retry or a second call joins the same one).
    links: Arc<Links>,
    tool_router: ToolRouter<Self>,
}

fn structured<T: Serialize>(v: &T) -> CallToolResponse {
    CallToolResult::structured(serde_json::to_value(v).expect("reports serialise")).into()
}

#[tool_router(router = tool_router)]
impl Vitals {
    pub fn new(engine: Arc<Engine>) -> Self {
        Self::with_links(engine, Arc::new(Links::default()))
    }

    /// A handler sharing `links` with the others of one home: over HTTP each session (and each
    /// 2026 request) gets a handler of its own, and a retry must find the login its first call started.
    pub fn with_links(engine: Arc<Engine>, links: Arc<Links>) -> Self {
        let mut tool_router = Self::tool_router();
        for route in tool_router.map.values_mut() {
            let t = &mut route.attr;
            super::args::clean_schema(Arc::make_mut(&mut t.input_schema));
            if let Some(o) = t.output_schema.as_mut() {
                super::args::clean_schema(Arc::make_mut(o));
            }
        }
        Vitals { engine, links, tool_router }
    }

    /// `args` read as `tool`'s parameters, against the schema it lists (mcp/args.rs).
    fn args<T: serde::de::DeserializeOwned>(&self, tool: &str, args: JsonObject) -> Result<T, String> {
        let schema = self.tool_router.get(tool).map(|t| t.input_schema.clone()).unwrap_or_default();
        super::args::decode(tool, &schema, args)
    }

    /// The names of the tools this server lists, in order (pinned against the docs by a test).
    pub fn tool_names(&self) -> Vec<String> {
        self.tool_router.list_all().into_iter().map(|t| t.name.to_string()).collect()
    }

    #[tool(
        name = "vitals_sources",
        title = "What wearable data can be read",
        description = "Lists every provider with its state (`sandbox` = synthetic sample data, `connected`, `needs_credentials`) and, \
for each collection: the qualified name to pass to vitals_query (e.g. `oura.daily_sleep`), what it carries, its range kind \
(`date`, `datetime` for time series, `none`), whether `latest` is honoured, its fields and typical volume. Call this first.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    pub async fn vitals_sources(&self, args: JsonObject) -> Result<Json<SourcesReport>, String> {
        super::args::none("vitals_sources", &args)?;
        Ok(Json(sources_report(&self.engine)))
    }

    #[tool(
        name = "vitals_query",
        title = "Read one collection over a range of days",
        description = "Returns every record of one collection for a range of local days, both ends inclusive, whatever the provider's \
own rules are. It follows pagination to the end and reports `pages`. `data` is columnar by default ({columns, rows}); \
format=records or csv on request. Answers stay within `max_chars` (default 100,000): a time series too large raw comes back \
in buckets (n, avg, min, max per bucket; `resolution` says how) and says so in notices.resolution_auto; series inside documents \
are compacted (notices.compacted); only if that is not enough is the answer cut at a day boundary. `notices` says everything \
that happened: `synthetic` (sample data, not the user's: say so), `truncated` with `continue_from` (call again with \
start = continue_from), `pagination_cycle`, `rate_limited`, `paced`, `retried`, `credential_refreshed`, `cached`, `discarded_out_of_range`, \
`ignored_fields`, `fields_split`, `range_defaulted`, `empty` (no data vs not synced yet), `large_response`, \
`account_connected` (a collection that needs the user's account started the login, as vitals_connect does, and this is the result). Never treat an \
answer with `truncated` as complete. `latest=true` only on collections whose `latest` is true in vitals_sources, and never \
with a range. Unknown fields are listed, not silently dropped.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        input_schema = input::<QueryArgs>(),
        output_schema = schema_for_output::<Answer>()
    )]
    pub async fn vitals_query(
        &self,
        args: JsonObject,
        RequestState(state): RequestState,
        InputResponses(answers): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, String> {
        let a: QueryArgs = self.args("vitals_query", args)?;
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
            progress: None,
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
        match connect(&self.links, spec, &ctx, state, answers).await {
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
        description = "Connects the user's own account at a provider (e.g. `oura`) so queries read real data instead of the sample \
data: through the provider's login page in a browser, or, for a provider connected by a key or a password, through a page this server \
serves on this computer. When the client can show links, the user gets one to open; otherwise this server \
opens the browser on this computer, and if it cannot, returns the address (`url`) and the terminal command (`cli`) to give the user. \
Never ask the user for a password, key or secret in the chat. `state`: `connected`, `already_connected` (send again=true to sign in \
anew, e.g. to switch accounts), or `waiting_for_browser` (give the user `url`; the login stays open 10 minutes). If app \
credentials are missing, the error says where to get them.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        input_schema = input::<ConnectArgs>(),
        output_schema = schema_for_output::<ConnectReport>()
    )]
    pub async fn vitals_connect(
        &self,
        args: JsonObject,
        RequestState(state): RequestState,
        InputResponses(answers): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, String> {
        let a: ConnectArgs = self.args("vitals_connect", args)?;
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
        match connect(&self.links, p.spec(), &ctx, state, answers).await {
            Connection::Done(c) => Ok(structured(&ConnectReport::connected(&c))),
            Connection::Ask(ask) => Ok(ask.into()),
            Connection::Waiting(r) => Ok(structured(&r)),
            Connection::Failed(e) => Err(e),
        }
    }

    #[tool(
        name = "vitals_today",
        title = "Last night, today and the days before",
        description = "For each usable provider: last night's sleep and today's readiness and activity, with the `days` before them \
(1–30, default 7), and the latest weigh-in of the last 90 days, as vitals_query returns them (columnar; each section gets an equal share of `max_chars`, default 100,000 in all). `missing` names what the provider answered with no records (today is often not synced \
yet); `errors` names what failed or came back incomplete, with why. Computes nothing: summarise from the records yourself.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        input_schema = input::<TodayArgs>()
    )]
    pub async fn vitals_today(&self, args: JsonObject, ctx: RequestContext<RoleServer>) -> Result<Json<TodayReport>, String> {
        let a: TodayArgs = self.args("vitals_today", args)?;
        progress::reported(&ctx, |p| self.engine.today(a.days, a.max_chars, p)).await.map(Json).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_export",
        title = "Save one activity's file (FIT, TCX or GPX) where the user says",
        description = "Writes one activity (a Polar exercise, a Garmin activity, by the `id` its collection gives) as a FIT, TCX or GPX file to the \
absolute `path` the user named, in a folder that exists. Never overwrites a file unless overwrite=true. The only tool that writes \
to disk, and only the user's own file where they asked: call it only when the user asks to save or export an activity. The answer \
says the path, size and format; `synthetic` true means the sample's file, not the user's.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true),
        input_schema = input::<ExportArgs>(),
        output_schema = schema_for_output::<crate::export::Exported>()
    )]
    pub async fn vitals_export(&self, args: JsonObject) -> Result<CallToolResponse, String> {
        let a: ExportArgs = self.args("vitals_export", args)?;
        let req = crate::export::ExportRequest { provider: a.provider, id: a.id, format: a.format, path: a.path, overwrite: a.overwrite.unwrap_or(false) };
        crate::export::export(&self.engine, req).await.map(|e| structured(&e)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_compare",
        title = "Did a daily metric differ between two periods, beyond its own noise?",
        description = "Compares two periods of one daily metric (`provider.collection.field`, e.g. `oura.daily_readiness.score`) against \
the metric's own day-to-day noise, learnt from the 120 days before the earlier period: verdict `outside_noise`, `within_noise` (not \
evidence of a change, never \"no change\") or `cannot_tell` (with `why`), the means, the difference, the 95 % `noise_band`, \
`typical_daily_change`, the `method`, `excluded` counts, `daily_rule` (which record is a day's value) and a `reading` to repeat. \
Today is never analysed; an incomplete fetch is refused. Say `synthetic` when true.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        input_schema = input::<CompareArgs>(),
        output_schema = schema_for_output::<crate::analysis::ask::CompareReport>()
    )]
    pub async fn vitals_compare(&self, args: JsonObject) -> Result<CallToolResponse, String> {
        let a: CompareArgs = self.args("vitals_compare", args)?;
        crate::analysis::ask::compare(&self.engine, &a.metric, [&a.a_start, &a.a_end], [&a.b_start, &a.b_end])
            .await
            .map(|r| structured(&r))
            .map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_relate",
        title = "Do two daily metrics move together beyond chance?",
        description = "Whether the day-to-day changes of two daily metrics (`x`, `y`, possibly of two providers, e.g. \
`withings.measurements.weight_kg` and `oura.daily_activity.steps`) move together, y `lag` days (0–7) after x: weekday means removed, \
changes between consecutive days, Pearson r with a 95 % interval corrected for autocorrelation. Verdict `outside_noise`, \
`within_noise` (not evidence of a relation, never \"none\") or `cannot_tell` (about three months are needed), with `first_pair`, \
the `method`, `excluded`, `daily_rule` and a `reading`. An association, never a cause. Today is never analysed.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        input_schema = input::<RelateArgs>(),
        output_schema = schema_for_output::<crate::analysis::ask::RelateReport>()
    )]
    pub async fn vitals_relate(&self, args: JsonObject) -> Result<CallToolResponse, String> {
        let a: RelateArgs = self.args("vitals_relate", args)?;
        crate::analysis::ask::relate(&self.engine, &a.x, &a.y, &a.start, &a.end, a.lag).await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_trend",
        title = "Is a daily metric drifting?",
        description = "The slope of one daily metric over a range, per 30 days, with a 95 % interval that accounts for autocorrelation \
(effective days): verdict `rising`, `falling`, `flat_within_noise` (not evidence of a trend, never \"stable\") or `cannot_tell` (with \
`why`), the fitted start and end, the `method`, `excluded`, `daily_rule` and a `reading`. Today is never analysed; an incomplete \
fetch is refused.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        input_schema = input::<TrendArgs>(),
        output_schema = schema_for_output::<crate::analysis::ask::TrendReport>()
    )]
    pub async fn vitals_trend(&self, args: JsonObject) -> Result<CallToolResponse, String> {
        let a: TrendArgs = self.args("vitals_trend", args)?;
        crate::analysis::ask::trend(&self.engine, &a.metric, &a.start, &a.end).await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_daily",
        title = "One row per day across every provider",
        description = "One row per local day with normalised columns (sleep total, efficiency and score, resting heart rate, HRV, \
steps, active energy, weight, body fat, blood pressure, readiness): each value with `from` (provider.collection.field) and \
`converted` when its unit was converted. When two providers measured the same day, the column shows one by the rule in \
`columns[].shown` and the others are in `also`: nothing is averaged across devices. Only connected providers are read (sample \
data, labelled `synthetic`, only when none is connected); `left_out` and `errors` say what is missing and why.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true),
        input_schema = input::<DailyArgs>(),
        output_schema = schema_for_output::<crate::analysis::view::DailyReport>()
    )]
    pub async fn vitals_daily(&self, args: JsonObject) -> Result<CallToolResponse, String> {
        let a: DailyArgs = self.args("vitals_daily", args)?;
        crate::analysis::view::daily_view(&self.engine, &a.start, &a.end, a.fields).await.map(|r| structured(&r)).map_err(|e| e.to_string())
    }

    #[tool(
        name = "vitals_check",
        title = "Check credentials and connectivity",
        description = "Per provider: how it connects (oauth, api_key, session, import, none), the credential kind (none, sandbox, \
personal_token, oauth, api_key, session) and where it came from, scopes, the token's length (never the token), its expiry and a \
pasted key's own expiry, and who answered one cheap read (`answered_by`: `api`, `sample_data` for built-in sample data, `not_connected` for an opt-in connection nobody connected, or \
`nobody`, with why and what to check in `api_detail`), and `limits` (requests in flight now and by default, times a 429 halved them, the page \
cap per query, the budget kept). Shows no secret and no health value.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    pub async fn vitals_check(&self, args: JsonObject) -> Result<Json<CheckReport>, String> {
        super::args::none("vitals_check", &args)?;
        let mut report = check_report(&self.engine).await;
        // Hosted, the browser comes back to this server's own callback: that is what to register.
        for p in report.providers.iter_mut().filter(|p| p.redirect.is_some()) {
            if let Some(url) = self.links.hosted_redirect(&p.provider) {
                p.redirect = Some(format!("{url} (this server's callback; register exactly this URL with the provider)"));
            }
        }
        Ok(Json(report))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Vitals {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("vitals", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Read-only access to the user's own wearable data. Start with vitals_sources. Every answer carries `notices`: \
                 repeat `synthetic` (sample data) and `truncated` to the user; never present a truncated answer as complete. \
                 When the user wants their own data rather than the sample, call vitals_connect.",
            )
    }

    async fn list_resources(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(SOURCES_URI, "sources").with_mime_type(SOURCES_MIME)]))
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, _context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != SOURCES_URI {
            return Err(ErrorData::resource_not_found(format!("no resource at {}; the one resource is {SOURCES_URI}", request.uri), None));
        }
        let text = serde_json::to_string_pretty(&sources_report(&self.engine)).unwrap_or_default();
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri).with_mime_type(SOURCES_MIME)]).into())
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
