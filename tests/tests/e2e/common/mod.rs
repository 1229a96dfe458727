//! Harness: a twin in this process, `vitals-mcp` as a child, and a real MCP client between them.
#![allow(dead_code, unused_imports)]
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;
pub mod login;
pub use vitals_twin::{oura::OuraConfig, Faults, Twin};

pub const TZ: &str = "-06:00";
pub const TOKEN: &str = "twin-token-0123456789-SECRET";

/// The server binary, taken as `cargo test` of the workspace built it (the `vitals` package's own
/// test, `server/tests/binary.rs`, makes it build the binary), or built once per test process when
/// older than a file under `server/` (`vitals_twin::built` says why).
pub fn server_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| vitals_twin::built::debug_binary(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."), "vitals", "vitals-mcp", &["server"])).clone()
}

/// The rule on a folder of its own: a binary at least as new as its sources and manifests is
/// taken; one older than any of them (a file changed, added or removed), or missing, is built again.
#[test]
fn a_server_binary_older_than_a_file_it_may_be_built_from_is_built_again() {
    use vitals_twin::built::{built_after_its_sources, MANIFESTS};
    let root = scratch().join(format!("server-bin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (bin, source) = (root.join("target/vitals-mcp"), root.join("server/engine/src/a send.rs"));
    let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let later = |s: u64| t0 + std::time::Duration::from_secs(s);
    let at = |p: &std::path::Path, t: std::time::SystemTime| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::OpenOptions::new().create(true).append(true).open(p).unwrap().set_modified(t).unwrap();
    };
    let folders = |t: std::time::SystemTime| {
        for d in ["server", "server/core", "server/providers", "server/engine", "server/engine/src"] {
            std::fs::File::open(root.join(d)).unwrap().set_modified(t).unwrap();
        }
    };
    for m in MANIFESTS {
        at(&root.join(m), t0);
    }
    at(&source, t0);
    folders(t0);
    let sources = ["server"];
    assert!(!built_after_its_sources(&bin, &root, &sources), "no binary: built");
    at(&bin, later(60));
    assert!(built_after_its_sources(&bin, &root, &sources), "newer than its sources (a path with a space) and manifests: taken");
    at(&source, later(120));
    assert!(!built_after_its_sources(&bin, &root, &sources), "a source changed since: built");
    at(&source, t0);
    at(&root.join("Cargo.lock"), later(120));
    assert!(!built_after_its_sources(&bin, &root, &sources), "the lock file changed since: built");
    at(&root.join("Cargo.lock"), t0);
    assert!(built_after_its_sources(&bin, &root, &sources), "all older again: taken");
    std::fs::remove_file(&source).unwrap();
    folders(t0);
    std::fs::File::open(root.join("server/engine/src")).unwrap().set_modified(later(120)).unwrap();
    assert!(!built_after_its_sources(&bin, &root, &sources), "a source removed since (its folder changed): built");
    let _ = std::fs::remove_dir_all(&root);
}

/// The server binary as a command that never starts a real browser (`VITALS_BROWSER=none`),
/// whatever this machine has installed. Every test spawns the server through here or
/// [`server_command`]; a test in `front_door.rs` holds it so.
pub fn vitals_cmd() -> std::process::Command {
    let mut c = std::process::Command::new(server_bin());
    c.env("VITALS_BROWSER", "none");
    c
}

/// [`vitals_cmd`] in an empty environment: only `PATH` and `VITALS_BROWSER=none` are set, so
/// nothing of the developer's (a token, a keyring choice, a browser) reaches the server.
pub fn bare_cmd() -> std::process::Command {
    let mut c = vitals_cmd();
    c.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).env("VITALS_BROWSER", "none");
    c
}

pub async fn twin() -> Twin {
    twin_with(OuraConfig::default()).await
}

/// A twin with a chosen configuration (the token is always [`TOKEN`]).
pub async fn twin_with(cfg: OuraConfig) -> Twin {
    vitals_twin::start(OuraConfig { token: TOKEN.into(), ..cfg }, 0).await.expect("twin starts")
}

pub struct Session<H: rmcp::ClientHandler = ()> {
    pub client: RunningService<RoleClient, H>,
    pub stderr: PathBuf,
}

/// Spawn the server pointed at `twin`, connected with a personal token unless `sandbox`.
/// The folder for a test's files: under `target/`, never the system temp folder (which a long
/// history of runs would fill); `cargo clean` empties it.
pub fn scratch() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e");
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub async fn connect(twin: &Twin, sandbox: bool, extra: &[(&str, &str)]) -> Session {
    connect_with(twin, sandbox, extra, rmcp::service::ClientLifecycleMode::Initialize).await
}

/// As [`connect`], on a chosen lifecycle (`Initialize` for ≤2025-11-25, `Discover` for 2026-07-28).
pub async fn connect_with(twin: &Twin, sandbox: bool, extra: &[(&str, &str)], mode: rmcp::service::ClientLifecycleMode) -> Session {
    connect_as(twin, sandbox, extra, mode, ()).await
}

/// As [`connect_with`], with a client handler of the test's own (elicitation, notifications).
pub async fn connect_as<H: rmcp::ClientHandler>(
    twin: &Twin,
    sandbox: bool,
    extra: &[(&str, &str)],
    mode: rmcp::service::ClientLifecycleMode,
    handler: H,
) -> Session<H> {
    let stderr = scratch().join(format!("vitals-e2e-{}-{}.log", std::process::id(), rand_suffix()));
    // Hermetic: never the developer's own saved login (a test that wants one passes its own).
    let mut cmd = server_command(twin, &scratch().join(format!("vitals-e2e-empty-config-{}", std::process::id())));
    if !sandbox {
        cmd.env("OURA_PAT", TOKEN);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(std::fs::File::create(&stderr).unwrap()).spawn().expect("spawn vitals-mcp");
    let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(handler, transport, mode).await.expect("MCP handshake");
    Session { client, stderr }
}

/// The server binary pointed at `twin` in an environment of its own: only what is set here, the
/// file token store (never the developer's keyring) and `config` as its config folder.
pub fn server_command(twin: &Twin, config: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::from(bare_cmd());
    cmd.env("VITALS_OURA_BASE_URL", twin.base_url())
        .env("VITALS_TZ", TZ)
        .env("VITALS_BACKOFF_MS", "10")
        .env("VITALS_LOG", "debug")
        .env("VITALS_TOKEN_STORE", "file")
        .env("VITALS_CONFIG_DIR", config);
    cmd
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

impl<H: rmcp::ClientHandler> Session<H> {
    pub async fn call_raw(&self, tool: &str, args: Value) -> CallToolResult {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().cloned().unwrap_or_default());
        self.client.call_tool(params).await.expect("tools/call answered")
    }
    /// Call a tool that must succeed; returns its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let r = self.call_raw(tool, args.clone()).await;
        assert!(!r.is_error.unwrap_or(false), "{tool} {args} failed: {:?}", text(&r));
        r.structured_content.clone().expect("structured content")
    }
    /// Call a tool that must fail; returns the error text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let r = self.call_raw(tool, args.clone()).await;
        assert!(r.is_error.unwrap_or(false), "{tool} {args} should have failed");
        text(&r)
    }
    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
    /// End the session; its stderr, read. The log file goes with it (a test that fails before
    /// closing keeps its log in `target/tmp/e2e/` to read).
    pub async fn close(self) -> String {
        let _ = self.client.cancel().await;
        let said = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let _ = std::fs::remove_file(&self.stderr);
        said
    }
}

/// The status the twin answers a data request with this bearer (200, or 401 once it is revoked).
pub async fn data_status(twin: &Twin, access: &str) -> u16 {
    reqwest::Client::new()
        .get(format!("{}/v2/usercollection/daily_sleep?start_date=2026-06-10&end_date=2026-06-11", twin.base_url()))
        .bearer_auth(access)
        .header("user-agent", "e2e")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// A client that, unlike a browser, stops at redirects (to read where the login sends it).
pub fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

pub fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

pub fn date(s: &str) -> jiff::civil::Date {
    s.parse().unwrap()
}

/// Today in the twins' people's zone and the server's ([`TZ`], -06:00), for suites on real time
/// (Polar and Garmin keep only recent days).
pub fn today() -> jiff::civil::Date {
    jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date()
}

/// `k` days before [`today`].
pub fn ago(k: i64) -> jiff::civil::Date {
    today().checked_sub(jiff::Span::new().days(k)).unwrap()
}

/// `v` with its numbers as every answer sends them (no float noise, whole numbers without a
/// fraction): what an expected value is compared as.
pub fn tidied(mut v: Value) -> Value {
    vitals::engine::render::tidy_numbers(&mut v);
    v
}

/// A day as the tools take it.
pub fn ds(d: jiff::civil::Date) -> String {
    d.to_string()
}

/// The records of an answer's `data`, whether columnar (`{columns, rows}`) or one object each.
pub fn records(data: &Value) -> Vec<Value> {
    if let Some(a) = data.as_array() {
        return a.clone();
    }
    let cols: Vec<String> = data["columns"].as_array().expect("columnar data has columns").iter().map(|c| c.as_str().unwrap().to_string()).collect();
    data["rows"]
        .as_array()
        .expect("columnar data has rows")
        .iter()
        .map(|row| {
            let cells = row.as_array().expect("a row is an array");
            assert_eq!(cells.len(), cols.len(), "every row has a cell per column");
            // A null cell is a key the record did not have.
            Value::Object(cols.iter().cloned().zip(cells.iter().cloned()).filter(|(_, v)| !v.is_null()).collect())
        })
        .collect()
}

/// Identity of a record for comparisons: `id`, else `timestamp`.
pub fn keys(data: &Value) -> Vec<String> {
    let recs = if data.is_array() { data.as_array().unwrap().clone() } else { records(data) };
    recs.iter().map(|r| r.get("id").or_else(|| r.get("timestamp")).and_then(Value::as_str).unwrap().to_string()).collect()
}

pub fn expected_keys(twin: &Twin, collection: &str, start: &str, end: &str) -> Vec<String> {
    let cfg = twin.state.oura.lock().unwrap().clone();
    let v = Value::Array(vitals_twin::oura::expected(&cfg, collection, date(start), date(end)));
    keys(&v)
}

pub const WITHINGS_SCOPES: &str = "user.info,user.metrics,user.activity";
pub const WITHINGS_APP_ID: &str = "withings-twin-client";
pub const WITHINGS_APP_SECRET: &str = "withings-twin-secret";

/// A config folder holding a Withings login the twin issued, and the environment that points a
/// server at the twin's Withings (data, token endpoint, authorize page, app credentials).
pub struct WithingsLogin {
    pub dir: PathBuf,
    pub access: String,
    pub refresh: String,
    pub env: Vec<(String, String)>,
}

impl WithingsLogin {
    pub fn new(twin: &Twin, tag: &str) -> WithingsLogin {
        let now = twin.state.withings.lock().unwrap().cfg.now();
        let (access, refresh) = twin.state.withings.lock().unwrap().oauth.grant(WITHINGS_SCOPES, now);
        let dir = scratch().join(format!("vitals-e2e-withings-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let tokens = vitals::accounts::Tokens {
            access: vitals::secret::Secret::new(access.clone()),
            refresh: Some(vitals::secret::Secret::new(refresh.clone())),
            expires_at: Some(now.as_second() + 10_800),
            scopes: WITHINGS_SCOPES.split(',').map(str::to_string).collect(),
            login: Some("login-1".into()),
            ..Default::default()
        };
        vitals::accounts::TokenStore::file(&dir).save("withings", &tokens).unwrap();
        let b = twin.base_url();
        let env = vec![
            ("VITALS_CONFIG_DIR".into(), dir.display().to_string()),
            ("VITALS_WITHINGS_BASE_URL".into(), b.clone()),
            ("VITALS_WITHINGS_TOKEN_URL".into(), format!("{b}/v2/oauth2")),
            ("VITALS_WITHINGS_AUTHORIZE_URL".into(), format!("{b}/oauth2_user/authorize2")),
            ("VITALS_WITHINGS_CLIENT_ID".into(), WITHINGS_APP_ID.into()),
            ("VITALS_WITHINGS_CLIENT_SECRET".into(), WITHINGS_APP_SECRET.into()),
        ];
        WithingsLogin { dir, access, refresh, env }
    }

    /// A server (Oura in its sandbox) reading the twin's Withings with this login.
    pub async fn server(&self, twin: &Twin, extra: &[(&str, &str)]) -> Session {
        let mut env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.extend_from_slice(extra);
        connect(twin, true, &env).await
    }

    pub fn stored(&self) -> vitals::accounts::Tokens {
        vitals::accounts::TokenStore::file(&self.dir).load("withings").unwrap().expect("a Withings login is stored")
    }
}

/// The raw measure groups the twin holds for local days `[start, end]` in its person's zone.
pub fn withings_groups(twin: &Twin, start: &str, end: &str) -> Vec<Value> {
    let cfg = twin.state.withings.lock().unwrap().cfg.clone();
    let mut out = vec![];
    let mut d = date(start);
    while d <= date(end) {
        out.extend(vitals::providers::withings::sample::groups_of_day(&cfg.person, d));
        d = d.tomorrow().unwrap();
    }
    out
}

/// `vitals_query` of `collection` (qualified) with `args`, as records and with room for every one
/// of them: what the provider suites compare with their twin's truth.
pub async fn records_of(s: &Session, collection: &str, args: Value) -> Value {
    let mut a = args.as_object().cloned().unwrap_or_default();
    a.insert("collection".into(), serde_json::json!(collection));
    a.entry("format").or_insert(serde_json::json!("records"));
    a.entry("max_chars").or_insert(serde_json::json!(2_000_000));
    s.ok("vitals_query", Value::Object(a)).await
}

/// What points a server at the twin's WHOOP (its API, token endpoint, authorize page and app).
pub fn whoop_env(twin: &Twin) -> Vec<(String, String)> {
    let w = twin.mounted("whoop");
    vec![
        ("VITALS_WHOOP_BASE_URL".into(), format!("{w}/developer")),
        ("VITALS_WHOOP_TOKEN_URL".into(), format!("{w}/oauth/oauth2/token")),
        ("VITALS_WHOOP_AUTHORIZE_URL".into(), format!("{w}/oauth/oauth2/auth")),
        ("VITALS_WHOOP_CLIENT_ID".into(), vitals_twin::whoop::CLIENT_ID.into()),
        ("VITALS_WHOOP_CLIENT_SECRET".into(), vitals_twin::whoop::CLIENT_SECRET.into()),
    ]
}

/// What points a server at the twin's Google Health (its API, token, revoke and consent pages,
/// and the app). The consent page keeps the parameters the default one carries.
pub fn google_health_env(twin: &Twin) -> Vec<(String, String)> {
    let g = twin.mounted("google-health");
    vec![
        ("VITALS_GOOGLE_HEALTH_BASE_URL".into(), format!("{g}/v4")),
        ("VITALS_GOOGLE_HEALTH_TOKEN_URL".into(), format!("{g}/token")),
        ("VITALS_GOOGLE_HEALTH_REVOKE_URL".into(), format!("{g}/revoke")),
        ("VITALS_GOOGLE_HEALTH_AUTHORIZE_URL".into(), format!("{g}/o/oauth2/v2/auth")),
        ("VITALS_GOOGLE_HEALTH_CLIENT_ID".into(), vitals_twin::google_health::CLIENT_ID.into()),
        ("VITALS_GOOGLE_HEALTH_CLIENT_SECRET".into(), vitals_twin::google_health::CLIENT_SECRET.into()),
    ]
}

/// One server reading every provider from `twin`: Oura with the personal token, Withings and
/// Polar and WHOOP and Google Health with logins the twin issued (in one config folder), Garmin with its API key. Returns the
/// session and the Withings login (its tokens, for secret sweeps).
pub async fn all_providers(twin: &Twin, tag: &str, extra: &[(&str, &str)]) -> (Session, WithingsLogin) {
    all_providers_as(twin, tag, extra, ()).await
}

/// As [`all_providers`], with a client handler of the test's own (a host's capabilities).
pub async fn all_providers_as<H: rmcp::ClientHandler>(twin: &Twin, tag: &str, extra: &[(&str, &str)], handler: H) -> (Session<H>, WithingsLogin) {
    let withings = WithingsLogin::new(twin, tag);
    let polar = twin.state.polar.lock().unwrap().stored_login(&format!("polar-login-{tag}"));
    vitals::accounts::TokenStore::file(&withings.dir).save("polar", &polar).unwrap();
    let whoop = twin.whoop(|w| w.stored_login(&format!("whoop-login-{tag}")));
    vitals::accounts::TokenStore::file(&withings.dir).save("whoop", &whoop).unwrap();
    let scopes = vitals_twin::google_health::all_scopes();
    let google = twin.google_health(|g| g.stored_login(&format!("google-login-{tag}"), &scopes));
    vitals::accounts::TokenStore::file(&withings.dir).save("google-health", &google).unwrap();
    let p = twin.mounted("polar");
    let mut env: Vec<(String, String)> = withings.env.clone();
    env.extend(whoop_env(twin));
    env.extend(google_health_env(twin));
    env.extend([
        ("VITALS_POLAR_BASE_URL".into(), p.clone()),
        ("VITALS_POLAR_TOKEN_URL".into(), format!("{p}/v2/oauth2/token")),
        ("VITALS_POLAR_AUTHORIZE_URL".into(), format!("{p}/oauth2/authorization")),
        ("VITALS_POLAR_CLIENT_ID".into(), vitals_twin::polar::CLIENT_ID.into()),
        ("VITALS_POLAR_CLIENT_SECRET".into(), vitals_twin::polar::CLIENT_SECRET.into()),
        ("VITALS_GARMIN_BASE_URL".into(), twin.mounted("garmin")),
        ("VITALS_GARMIN_API_KEY".into(), vitals_twin::garmin::KEY.into()),
    ]);
    let mut pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    pairs.extend_from_slice(extra);
    (connect_as(twin, false, &pairs, rmcp::service::ClientLifecycleMode::Initialize, handler).await, withings)
}

/// The providers [`all_providers`] connects: every one of the registry read over the web. A
/// provider read from the person's file (Apple Health's export) is connected by its own suite.
pub fn web_providers() -> impl Iterator<Item = &'static vitals::catalog::ProviderSpec> {
    vitals::providers::specs().filter(|s| s.connection.file().is_none())
}

/// The numbers of a sentence, in order (`4,120` and `4120` alike).
pub fn numbers(s: &str) -> Vec<usize> {
    let mut out = vec![];
    let mut cur = String::new();
    for c in s.chars().chain([' ']) {
        match c {
            '0'..='9' => cur.push(c),
            ',' if !cur.is_empty() => {}
            _ => {
                if let Ok(n) = cur.parse() {
                    out.push(n);
                }
                cur.clear();
            }
        }
    }
    out
}

/// One progress notification: (progress, total, message).
pub type Report = (f64, Option<f64>, String);

/// A client that records progress notifications.
#[derive(Clone, Default)]
pub struct Progressed(pub std::sync::Arc<std::sync::Mutex<Vec<Report>>>);

impl rmcp::ClientHandler for Progressed {
    async fn on_progress(&self, p: rmcp::model::ProgressNotificationParam, _: rmcp::service::NotificationContext<rmcp::RoleClient>) {
        self.0.lock().unwrap().push((p.progress, p.total, p.message.unwrap_or_default()));
    }
}

/// The server process whose environment names `dir` as its config folder (Linux: /proc).
pub fn server_pid_for(dir: &std::path::Path) -> u32 {
    let needle = format!("VITALS_CONFIG_DIR={}", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes())))
        .expect("the server's process")
}

/// The peak resident memory of process `pid` in MB (`VmHWM`, Linux: /proc); None when unreadable.
pub fn peak_rss_mb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}
