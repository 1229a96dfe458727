//! `cargo xtask bench`: measured numbers on the twin, medians of several runs, vitals beside
//! mcp-oura 0.4.0 when it can be installed. Performance claims come from here, never from tests.
mod apple;
mod reads;
mod views;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The peer we compare against, installed into a venv under `target/` (nothing outside the repo).
const PEER: &str = "mcp-oura==0.4.0";

pub struct Options {
    pub latency_ms: u64,
    pub runs: usize,
    pub peer: bool,
    /// Only rows whose label contains this.
    pub only: Option<String>,
    /// The Apple Health exports' sizes, MB of XML.
    pub apple_mb: Vec<u32>,
}

/// One measured row: medians over the runs.
#[derive(Default, Clone)]
struct Measure {
    time: Option<Duration>,
    pages: Option<u64>,
    samples: Option<u64>,
    chars: Option<usize>,
    peak_rss_kb: Option<u64>,
    /// What reached the twin: requests, the longest run of them in a row, bytes of the bodies.
    requests: Option<usize>,
    round_trips: Option<usize>,
    bytes: Option<u64>,
    /// Where the time went (vitals' rows): see [`Split`].
    split: Option<Split>,
}

/// Where a question's time went, from what the twin saw: before its first request arrived (the
/// call reaching the server, planning, connecting), from then to the last answer (of which some
/// with no request in flight: the server deciding, decoding or waiting for a slot it had), and after
/// the last answer (decoding the last pages, reducing, rendering, the reply reaching the client).
#[derive(Default, Clone, Copy)]
struct Split {
    before: Duration,
    wire: Duration,
    idle: Duration,
    after: Duration,
    /// Along the longest run of requests in a row: the time the twin held them (its latency and
    /// any lateness of its own), and the time from each answer to the next request of the run
    /// arriving (the body's way back, the server's turn, the request's way there).
    chain_at_twin: Duration,
    chain_between: Duration,
}

impl Split {
    fn of(t0: Instant, end: Instant, xs: &[vitals_twin::traffic::Exchange]) -> Option<Split> {
        let first = xs.iter().map(|x| x.arrived).min()?;
        let last = xs.iter().map(|x| x.answered).max()?;
        let mut spans: Vec<_> = xs.iter().map(|x| (x.arrived, x.answered)).collect();
        spans.sort();
        // Gaps in the union of the requests' spans.
        let (mut idle, mut reach) = (Duration::ZERO, first);
        for (a, b) in spans {
            idle += a.saturating_duration_since(reach);
            reach = reach.max(b);
        }
        let chain = vitals_twin::traffic::longest_chain(xs);
        let chain_at_twin = chain.iter().map(|x| x.answered - x.arrived).sum();
        let chain_between = chain.windows(2).map(|w| w[1].arrived.saturating_duration_since(w[0].answered)).sum();
        Some(Split { before: first - t0, wire: last - first, idle, after: end.saturating_duration_since(last), chain_at_twin, chain_between })
    }
}

fn median<T: Ord + Copy>(mut v: Vec<T>) -> Option<T> {
    v.sort();
    v.get(v.len() / 2).copied()
}

/// `VmRSS` / `VmHWM` of a process, in kB (Linux; elsewhere unknown).
fn proc_kb(pid: Option<u32>, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A server to measure: how to start it and how to ask it each question.
trait Server {
    fn command(&self, base: &str) -> tokio::process::Command;
    /// Tool name and arguments for a range of one collection.
    fn query(&self, collection: &str, start: &str, end: &str) -> (&'static str, Value);
    /// (pages, samples accounted for) read from an answer.
    fn account(&self, r: &CallToolResult) -> (Option<u64>, Option<u64>);
    /// Served over streamable HTTP at this path (`serve --http`), not stdio.
    fn http_path(&self) -> Option<&'static str> {
        None
    }
}

/// The server binary and extra environment (to show a non-default setting).
#[derive(Clone)]
struct Vitals(PathBuf, Vec<(&'static str, &'static str)>);
struct McpOura(PathBuf);
/// vitals over streamable HTTP (`serve --http`), otherwise as [`Vitals`].
struct VitalsHttp(Vitals);

/// The fixed path the bench serves HTTP at (a throwaway: the server runs on loopback for one run).
const BENCH_PATH: &str = "/bench-0123456789abcdefghijklmnop/mcp";

impl Server for VitalsHttp {
    fn command(&self, base: &str) -> tokio::process::Command {
        self.0.command(base)
    }
    fn query(&self, collection: &str, start: &str, end: &str) -> (&'static str, Value) {
        self.0.query(collection, start, end)
    }
    fn account(&self, r: &CallToolResult) -> (Option<u64>, Option<u64>) {
        self.0.account(r)
    }
    fn http_path(&self) -> Option<&'static str> {
        Some(BENCH_PATH)
    }
}

impl Server for Vitals {
    fn command(&self, base: &str) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(&self.0);
        c.env("VITALS_OURA_BASE_URL", base).env("OURA_PAT", "twin-token").env("VITALS_TZ", "-06:00").env("VITALS_LOG", "warn");
        c.envs(self.1.iter().copied());
        c
    }
    fn query(&self, collection: &str, start: &str, end: &str) -> (&'static str, Value) {
        if collection == "today" {
            return ("vitals_today", json!({"days": 7}));
        }
        // Oura's names bare (the rows compare with mcp-oura), other providers' qualified; `?name`
        // after a collection turns that option on.
        let (collection, option) = collection.split_once('?').map_or((collection, None), |(c, o)| (c, Some(o)));
        let qualified = if collection.contains('.') { collection.to_string() } else { format!("oura.{collection}") };
        let mut args = json!({"collection": qualified, "start": start, "end": end});
        if let Some(o) = option {
            args["options"] = json!({ o: true });
        }
        ("vitals_query", args)
    }
    fn account(&self, r: &CallToolResult) -> (Option<u64>, Option<u64>) {
        let a = r.structured_content.clone().unwrap_or_default();
        let samples = a["resolution"]["raw_samples"].as_u64().or(a["count"].as_u64());
        (a["pages"].as_u64(), samples)
    }
}

impl Server for McpOura {
    fn command(&self, base: &str) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(&self.0);
        // It replaces the whole data prefix, which must end in /v2/usercollection.
        c.env("OURA_API_BASE_URL", format!("{base}/v2/usercollection")).env("OURA_PAT", "twin-token").env("OURA_TIMEZONE", "America/Chicago");
        c.stderr(std::process::Stdio::null());
        c
    }
    fn query(&self, collection: &str, start: &str, end: &str) -> (&'static str, Value) {
        ("oura_query", json!({"collection": collection, "start": start, "end": end}))
    }
    fn account(&self, r: &CallToolResult) -> (Option<u64>, Option<u64>) {
        let t: String = r.content.iter().filter_map(|c| c.as_text()).map(|x| x.text.clone()).collect();
        let v: Value = serde_json::from_str(&t).unwrap_or_default();
        (v["pages"].as_u64(), v["n"].as_u64().or(v["data"].as_array().map(|a| a.len() as u64)))
    }
}

async fn start(s: &dyn Server, base: &str) -> (RunningService<RoleClient, ()>, Option<u32>) {
    if let Some(path) = s.http_path() {
        return start_http(s, base, path).await;
    }
    let t = TokioChildProcess::new(s.command(base)).expect("spawn server");
    let pid = t.id();
    (().serve(t).await.expect("MCP handshake"), pid)
}

/// `serve --http` on a free port, asked until it answers the handshake. The child goes when the
/// client is cancelled and the process exits (it is killed on drop, from a task that holds it).
async fn start_http(s: &dyn Server, base: &str, path: &str) -> (RunningService<RoleClient, ()>, Option<u32>) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let config = std::env::temp_dir().join(format!("vitals-bench-http-{}-{port}", std::process::id()));
    let mut c = s.command(base);
    c.args(["serve", "--http", &format!("127.0.0.1:{port}"), "--path", path])
        .env("VITALS_CONFIG_DIR", &config)
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let child = c.spawn().expect("spawn vitals-mcp serve");
    let pid = child.id();
    let url = format!("http://127.0.0.1:{port}{path}");
    let client = loop {
        let t = rmcp::transport::StreamableHttpClientTransport::from_uri(url.clone());
        match ().serve(t).await {
            Ok(c) => break c,
            Err(_) => tokio::time::sleep(Duration::from_millis(2)).await,
        }
    };
    SERVING.lock().expect("serving lock").push((child, config));
    (client, pid)
}

/// The `serve --http` children started: a client's end does not end them, as it ends a stdio server.
static SERVING: std::sync::Mutex<Vec<(tokio::process::Child, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// End a client, and any HTTP server started for it.
async fn stop(client: RunningService<RoleClient, ()>) {
    let _ = client.cancel().await;
    let children: Vec<_> = SERVING.lock().expect("serving lock").drain(..).collect();
    for (mut child, config) in children {
        let _ = child.kill().await;
        let _ = std::fs::remove_dir_all(config);
    }
}

fn chars(r: &CallToolResult) -> usize {
    r.content.iter().filter_map(|c| c.as_text()).map(|x| x.text.chars().count()).sum()
}

/// spawn → tools/list, and the resident memory of the idle server after it.
async fn startup(s: &dyn Server, base: &str, runs: usize) -> (Measure, Option<u64>) {
    let (mut times, mut rss) = (vec![], vec![]);
    for _ in 0..runs {
        let t0 = Instant::now();
        let (client, pid) = start(s, base).await;
        client.list_all_tools().await.expect("tools/list");
        times.push(t0.elapsed());
        tokio::time::sleep(Duration::from_millis(200)).await;
        rss.extend(proc_kb(pid, "VmRSS:"));
        stop(client).await;
    }
    (Measure { time: median(times), ..Default::default() }, median(rss))
}

/// One question, each run in a fresh process (so neither server answers from its cache).
async fn question(s: &dyn Server, twin: &vitals_twin::Twin, runs: usize, collection: &str, start_day: &str, end_day: &str) -> Measure {
    let base = twin.base_url();
    let mut m = Measure::default();
    let (mut times, mut peaks, mut sizes, mut requests, mut trips, mut bytes) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut splits = vec![];
    for _ in 0..runs {
        let (client, pid) = start(s, &base).await;
        let (tool, args) = s.query(collection, start_day, end_day);
        twin.take_traffic();
        let t0 = Instant::now();
        let r = client.call_tool(CallToolRequestParams::new(tool).with_arguments(args.as_object().cloned().unwrap_or_default())).await.expect("tools/call");
        let end = Instant::now();
        times.push(end - t0);
        let served = twin.take_traffic();
        splits.extend(Split::of(t0, end, &served));
        requests.push(served.len());
        trips.push(vitals_twin::traffic::round_trips(&served));
        bytes.push(served.iter().map(|x| x.bytes).sum::<u64>());
        peaks.extend(proc_kb(pid, "VmHWM:"));
        sizes.push(chars(&r));
        (m.pages, m.samples) = s.account(&r);
        stop(client).await;
    }
    m.time = median(times);
    m.peak_rss_kb = median(peaks);
    m.chars = median(sizes);
    (m.requests, m.round_trips, m.bytes) = (median(requests), median(trips), median(bytes));
    // Each part's median on its own (they need not sum to the median time).
    let part = |f: fn(&Split) -> Duration| median(splits.iter().map(f).collect()).unwrap_or_default();
    if !splits.is_empty() {
        m.split = Some(Split {
            before: part(|s| s.before),
            wire: part(|s| s.wire),
            idle: part(|s| s.idle),
            after: part(|s| s.after),
            chain_at_twin: part(|s| s.chain_at_twin),
            chain_between: part(|s| s.chain_between),
        });
    }
    m
}

/// The same question twice in one process: the second is answered from vitals' memory cache.
async fn cached(s: &dyn Server, base: &str, runs: usize, collection: &str, start_day: &str, end_day: &str) -> Measure {
    let (client, pid) = start(s, base).await;
    let (tool, args) = s.query(collection, start_day, end_day);
    let call = || CallToolRequestParams::new(tool).with_arguments(args.as_object().cloned().unwrap_or_default());
    client.call_tool(call()).await.expect("warm-up call");
    let mut m = Measure::default();
    let mut times = vec![];
    for _ in 0..runs {
        let t0 = Instant::now();
        let r = client.call_tool(call()).await.expect("tools/call");
        times.push(t0.elapsed());
        m.chars = Some(chars(&r));
        (m.pages, m.samples) = s.account(&r);
    }
    m.peak_rss_kb = proc_kb(pid, "VmHWM:");
    m.time = median(times);
    stop(client).await;
    m
}

/// A Withings login the twin issued, saved in a config folder under `target/bench`, and the
/// environment that points a server at it. The twin pages as Withings does (about 300 a page).
fn withings_login(root: &Path, twin: &vitals_twin::Twin, base: &str, latency_ms: u64) -> Vec<(&'static str, &'static str)> {
    let dir = fresh(root.join("target/bench/withings-config"));
    save_withings(&dir, twin, latency_ms);
    vec![("VITALS_CONFIG_DIR", leak(dir.display().to_string())), ("VITALS_TOKEN_STORE", "file"), ("VITALS_WITHINGS_BASE_URL", leak(base.to_string()))]
}

/// An empty folder at `dir`.
fn fresh(dir: PathBuf) -> PathBuf {
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The environment outlives the call: leak the string (one bench run, a few times).
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// A Withings login the twin issued, saved into the token file in `dir`.
fn save_withings(dir: &Path, twin: &vitals_twin::Twin, latency_ms: u64) {
    let now = jiff::Timestamp::now();
    twin.withings(|w| {
        w.cfg.page_size = 300;
        w.cfg.faults.latency_ms = latency_ms;
    });
    let (access, refresh) = twin.state.withings.lock().unwrap().oauth.grant("user.info,user.metrics,user.activity", now);
    let tokens = vitals::accounts::Tokens {
        access: vitals::secret::Secret::new(access),
        refresh: Some(vitals::secret::Secret::new(refresh)),
        expires_at: Some(now.as_second() + 10_800),
        scopes: vec!["user.info".into(), "user.metrics".into(), "user.activity".into()],
        login: Some("bench".into()),
        ..Default::default()
    };
    vitals::accounts::TokenStore::file(dir).save("withings", &tokens).expect("the bench's token folder is writable");
}

/// A Polar login the twin issued (a user who trains every day), saved under `target/bench`, and
/// the environment that points a server at it.
fn polar_login(root: &Path, twin: &vitals_twin::Twin, latency_ms: u64) -> Vec<(&'static str, &'static str)> {
    let dir = fresh(root.join("target/bench/polar-config"));
    save_polar(&dir, twin, latency_ms);
    vec![("VITALS_CONFIG_DIR", leak(dir.display().to_string())), ("VITALS_TOKEN_STORE", "file"), ("VITALS_POLAR_BASE_URL", leak(twin.mounted("polar")))]
}

/// A WHOOP login the twin issued, saved into the token file in `dir`, and the environment that
/// points a server at the twin's WHOOP.
fn save_whoop(dir: &Path, twin: &vitals_twin::Twin) -> Vec<(&'static str, &'static str)> {
    let tokens = twin.whoop(|w| w.stored_login("bench"));
    vitals::accounts::TokenStore::file(dir).save("whoop", &tokens).expect("the bench's token folder is writable");
    let w = twin.mounted("whoop");
    vec![
        ("VITALS_WHOOP_BASE_URL", leak(format!("{w}/developer"))),
        ("VITALS_WHOOP_TOKEN_URL", leak(format!("{w}/oauth/oauth2/token"))),
        ("VITALS_WHOOP_CLIENT_ID", vitals_twin::whoop::CLIENT_ID),
        ("VITALS_WHOOP_CLIENT_SECRET", vitals_twin::whoop::CLIENT_SECRET),
    ]
}

/// A Polar login the twin issued, saved into the token file in `dir`.
fn save_polar(dir: &Path, twin: &vitals_twin::Twin, latency_ms: u64) {
    let tokens = twin.state.polar.lock().unwrap().stored_login("bench");
    twin.polar(|p| {
        p.cfg.person.every_day = true;
        p.cfg.faults.latency_ms = latency_ms;
    });
    vitals::accounts::TokenStore::file(dir).save("polar", &tokens).expect("the bench's token folder is writable");
}

/// A Garmin Connect session at the twin, as an import from garminconnect would save it.
fn garmin_connect_login(root: &Path, twin: &vitals_twin::Twin, base: &str, latency_ms: u64) -> Vec<(&'static str, &'static str)> {
    let dir = fresh(root.join("target/bench/garmin-connect-config"));
    let file = twin.garmin_connect(|g| {
        g.latency_ms = latency_ms;
        g.garminconnect_file("GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2")
    });
    let text = |k: &str| file[k].as_str().unwrap_or_default().to_string();
    let extra =
        [("generation", "di".to_string()), ("client_id", text("di_client_id")), ("display_name", vitals_twin::garmin_connect::DISPLAY_NAME.to_string())];
    let tokens = vitals::accounts::Tokens {
        access: vitals::secret::Secret::new(text("di_token")),
        refresh: Some(vitals::secret::Secret::new(text("di_refresh_token"))),
        expires_at: Some(jiff::Timestamp::now().as_second() + 86_000),
        extra: extra.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        login: Some("bench".into()),
        ..Default::default()
    };
    vitals::accounts::TokenStore::file(&dir).save("garmin-connect", &tokens).expect("the bench's token folder is writable");
    let mut env = vec![("VITALS_CONFIG_DIR", leak(dir.display().to_string())), ("VITALS_TOKEN_STORE", "file")];
    env.extend(vitals_twin::garmin_connect::GarminConnect::env(base).into_iter().map(|(k, v)| (k, leak(v))));
    env
}

/// Make `target/bench/peer-venv` with mcp-oura in it, once. None (and why) when that fails.
fn install_peer(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join("target/bench/peer-venv");
    let bin = venv.join("bin/oura-mcp");
    if bin.exists() {
        return Ok(bin);
    }
    let ok = |c: &mut std::process::Command| c.status().map(|s| s.success()).unwrap_or(false);
    if !ok(std::process::Command::new("python3").args(["-m", "venv"]).arg(&venv)) {
        return Err("python3 -m venv failed (is python3-venv installed?)".into());
    }
    eprintln!("installing {PEER} into {} ...", venv.display());
    if !ok(std::process::Command::new(venv.join("bin/pip")).args(["install", "--quiet", PEER])) {
        return Err(format!("pip install {PEER} failed (no access to the package index?)"));
    }
    bin.exists().then_some(bin).ok_or_else(|| "oura-mcp was not installed".into())
}

fn ms(d: Option<Duration>) -> String {
    d.map(|d| format!("{:.1} ms", d.as_secs_f64() * 1e3)).unwrap_or("-".into())
}
fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or("-".into())
}
fn mb(kb: Option<u64>) -> String {
    kb.map(|k| format!("{:.1} MB", k as f64 / 1024.0)).unwrap_or("-".into())
}
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.1}×", b / a),
        _ => "-".into(),
    }
}

pub async fn run(root: &Path, server: PathBuf, o: Options) {
    let twin = vitals_twin::start(Default::default(), 0).await.expect("twin");
    twin.set_faults(vitals_twin::Faults { latency_ms: o.latency_ms, ..Default::default() });
    let base = twin.base_url();
    let vitals = Vitals(server.clone(), vec![]);
    let peer = if o.peer { install_peer(root) } else { Err("--no-peer".into()) };
    let peer = match peer {
        Ok(bin) => Some(McpOura(bin)),
        Err(why) => {
            println!("{PEER}: not measured: {why}\n");
            None
        }
    };
    println!("vitals bench: twin at {} ms per request, median of {} runs, each question in a fresh process\n", o.latency_ms, o.runs);
    // One side of a row: time, its multiple of one round trip, requests, round trips in a row,
    // pages, samples, kB served, characters answered, peak RSS.
    let rtt = o.latency_ms.max(1) as f64;
    let side = |m: &Measure| {
        format!(
            "{:>10} {:>6} {:>5} {:>5} {:>5} {:>7} {:>7} {:>8} {:>9}",
            ms(m.time),
            m.time.map_or("-".into(), |t| format!("{:.1}", t.as_secs_f64() * 1000.0 / rtt)),
            opt(m.requests),
            opt(m.round_trips),
            opt(m.pages),
            opt(m.samples),
            opt(m.bytes.map(|b| b / 1024)),
            opt(m.chars),
            mb(m.peak_rss_kb)
        )
    };
    let head =
        format!("{:>10} {:>6} {:>5} {:>5} {:>5} {:>7} {:>7} {:>8} {:>9}", "time", "x RTT", "reqs", "trips", "pages", "samples", "kB", "chars", "peak RSS");
    println!("{:<40} {:^70} | {:^70} |", "", "vitals", PEER);
    println!("{:<40} {head} | {head} | {:>7} {:>7}", "row", "faster", "smaller");
    let line = |label: &str, v: &Measure, p: &Measure| {
        println!(
            "{:<40} {} | {} | {:>7} {:>7}",
            label,
            side(v),
            side(p),
            ratio(v.time.map(|t| t.as_secs_f64()), p.time.map(|t| t.as_secs_f64())),
            ratio(v.chars.map(|c| c as f64), p.chars.map(|c| c as f64)),
        );
        if let Some(t) = v.split {
            let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
            println!(
                "{:<40}   where it went: {} before the first request, {} from it to the last answer ({} of them with none in flight), {} after",
                "",
                ms(t.before),
                ms(t.wire),
                ms(t.idle),
                ms(t.after)
            );
            if let Some(n) = v.round_trips.filter(|n| *n > 1) {
                println!("{:<40}   the {n} in a row: {} at the twin, {} from an answer to the next request", "", ms(t.chain_at_twin), ms(t.chain_between));
            }
        }
    };

    let want = |label: &str| o.only.as_deref().is_none_or(|f| label.contains(f));
    let (vs, v_idle) = startup(&vitals, &base, o.runs).await;
    let (ps, p_idle) = match &peer {
        Some(p) => startup(p, &base, o.runs).await,
        None => (Measure::default(), None),
    };
    line("spawn -> tools/list", &vs, &ps);
    println!("{:<40} {:>70} | {:>70} |", "idle RSS", mb(v_idle), mb(p_idle));
    let over_http = VitalsHttp(vitals.clone());
    if want("spawn -> tools/list, over HTTP") {
        let (hs, h_idle) = startup(&over_http, &base, o.runs).await;
        line("spawn -> tools/list, over HTTP", &hs, &Measure::default());
        println!("{:<40} {:>70} | {:>70} |", "idle RSS, over HTTP", mb(h_idle), "-");
    }

    for (label, collection, s, e) in [
        ("heart rate, one local day", "heartrate", "2026-06-10", "2026-06-10"),
        ("heart rate, one month (30 days)", "heartrate", "2026-06-01", "2026-06-30"),
        ("daily_activity, 30 days", "daily_activity", "2026-06-01", "2026-06-30"),
    ] {
        if !want(label) {
            continue;
        }
        let v = question(&vitals, &twin, o.runs, collection, s, e).await;
        let p = match &peer {
            Some(p) => question(p, &twin, o.runs, collection, s, e).await,
            None => Measure::default(),
        };
        line(label, &v, &p);
    }
    // Rows vitals alone answers: (label, server, collection, first day, last day).
    let mut alone: Vec<(&str, Vitals, &str, String, String)> = vec![];
    let month = ("2026-06-01".to_string(), "2026-06-30".to_string());
    let year_back = ("2025-06-01".to_string(), "2026-05-31".to_string());
    // 37+ pages of 1,000: at Oura's 32 in flight that is two requests in a row; the old global pool
    // of 8 made it five. The second row shows what the per-provider limit buys.
    let narrow = Vitals(server.clone(), vec![("VITALS_CONCURRENCY", "8")]);
    alone.push(("heart rate, month, VITALS_CONCURRENCY=8", narrow, "heartrate", month.0.clone(), month.1.clone()));
    // A year of the densest collection, complete at the default page cap.
    alone.push(("heart rate, a year", vitals.clone(), "heartrate", year_back.0.clone(), year_back.1.clone()));
    alone.push(("daily_sleep, a year", vitals.clone(), "daily_sleep", year_back.0.clone(), year_back.1.clone()));
    let withings = withings_login(root, &twin, &base, o.latency_ms);
    let both = Vitals(server.clone(), withings);
    alone.push(("withings measurements, one year", both.clone(), "withings.measurements", "2025-06-02".into(), "2026-06-02".into()));
    // The day's report of the two connected accounts (Oura's four sections and Withings' three, read
    // at once); Polar and Garmin are not connected, so their samples are not in it.
    alone.push(("vitals_today, 7 days, Oura and Withings connected", both, "today", String::new(), String::new()));
    // Polar keeps 28 days of heart rate and 30 of exercises: the longest ranges it serves.
    let polar = Vitals(server.clone(), polar_login(root, &twin, o.latency_ms));
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(-6))).date();
    let back = |n: i64| today.checked_sub(jiff::Span::new().days(n)).unwrap_or(today).to_string();
    alone.push(("polar heart rate, 28 days (all it keeps)", polar.clone(), "polar.heartrate", back(27), today.to_string()));
    alone.push(("polar exercises + summaries, 30 days", polar, "polar.exercises?samples", back(29), today.to_string()));
    // Garmin's Personal API: two requests in flight per key, windows at each route's limit.
    twin.garmin(|g| g.cfg.latency_ms = o.latency_ms);
    let garmin = Vitals(
        server.clone(),
        vec![("VITALS_GARMIN_API_KEY", vitals_twin::garmin::KEY), ("VITALS_GARMIN_BASE_URL", Box::leak(twin.mounted("garmin").into_boxed_str()))],
    );
    alone.push(("garmin daily summaries, a year, 2 in flight", garmin.clone(), "garmin.daily_summary", back(365), back(1)));
    alone.push(("garmin sleep, a year, 2 in flight", garmin, "garmin.sleep", back(365), back(1)));
    // Garmin Connect (unofficial): training status is one request a day, two in flight.
    let connect = Vitals(server.clone(), garmin_connect_login(root, &twin, &base, o.latency_ms));
    alone.push(("garmin-connect training status, 90 days, 2 in flight", connect, "garmin.training_status", back(90), back(1)));

    if want("heart rate, one local day, over HTTP") {
        let v = question(&over_http, &twin, o.runs, "heartrate", "2026-06-10", "2026-06-10").await;
        line("heart rate, one local day, over HTTP", &v, &Measure::default());
    }
    if want("heart rate, month, again (cached)") {
        let v = cached(&vitals, &base, o.runs, "heartrate", &month.0, &month.1).await;
        line("heart rate, month, again (cached)", &v, &Measure::default());
    }
    for (label, server, collection, s, e) in alone.into_iter().filter(|r| want(r.0)) {
        let v = question(&server, &twin, o.runs, collection, &s, &e).await;
        line(label, &v, &Measure::default());
    }
    if want("what the model reads") {
        reads::run(root, &server, &twin, peer.as_ref()).await;
    }
    if want("views") {
        views::run(root, &server, &twin, o.runs).await;
    }
    if want("Apple Health") {
        apple::run(root, &server, &o.apple_mb).await;
    }
    println!(
        "\nx RTT = time over one round trip ({} ms); reqs = requests that reached the twin; trips = the longest run of them sent one after \
         another (the round trips waited through); pages = requests that returned data (as the answer counts them); samples = \
         records accounted for (vitals: the sum of bucket counts when resampled); kB = bodies served; chars = characters of the tool \
         result text.",
        o.latency_ms
    );
}
