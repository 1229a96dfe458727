//! `vitals-mcp serve --http`: one person at a secret path, several from `--tenants`, and every
//! check a request meets before rmcp sees it (path, Origin, Host, bearer, body size), against the twin.
use super::common::*;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A `vitals-mcp serve` child and what it printed.
pub struct Hosted {
    child: tokio::process::Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The whole endpoint it printed (one person), or the tenants' base.
    pub url: String,
    pub stderr: PathBuf,
}

/// A fresh folder under target/.
pub fn folder(tag: &str) -> PathBuf {
    let d = scratch().join(format!("vitals-e2e-http-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The key every test server seals its tenants' secrets under (a test value, never a real one).
pub const TENANTS_KEY: &str = "3f1a9c7e5b2d8f4061c3e5a7b9d0f2143c5e7a9b1d3f5062847a9cbedf012345";

/// The tenants folder at `dir` with the tests' key, to read what a server sealed.
pub fn sealed_tenants(dir: &Path) -> vitals::hosted::tenants::Tenants {
    let vault = vitals::accounts::vault::Vault::from_text(TENANTS_KEY, "the tests' key").unwrap();
    vitals::hosted::tenants::Tenants::at(dir).sealed(std::sync::Arc::new(vault))
}

/// The tenant (its folder's name, an id that opens nothing) a connector URL opens.
pub fn tenant_of_url(dir: &Path, url: &str) -> String {
    let secret = url.split('/').nth(4).unwrap();
    vitals::hosted::hashed::tenant_of_url(&vitals::hosted::tenants::Tenants::at(dir), secret).expect("the URL opens a tenant").as_str().to_string()
}

/// A tenant's token store, opened with the tests' key.
pub fn tenant_store(dir: &Path, id: &str) -> vitals::accounts::TokenStore {
    let id = vitals::hosted::tenants::TenantId::parse(id).unwrap();
    sealed_tenants(dir).home(&id).expect("the tenant exists").store().unwrap()
}

/// Every server and `tenant` command of these tests is given the tests' key ([`TENANTS_KEY`]).
pub fn command(twin: &Twin, config: &Path, env: &[(&str, &str)]) -> tokio::process::Command {
    let mut cmd = server_command(twin, config);
    cmd.env("VITALS_TENANTS_KEY", TENANTS_KEY);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Start `vitals-mcp serve --http 127.0.0.1:0 <args>` and wait for the line that says where it serves.
pub async fn hosted(twin: &Twin, config: &Path, args: &[&str], env: &[(&str, &str)]) -> Hosted {
    let stderr = config.join(format!("serve-{}.log", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()));
    let mut cmd = command(twin, config, env);
    cmd.args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stderr(std::fs::File::create(&stderr).unwrap())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("spawn vitals-mcp serve");
    for _ in 0..600 {
        let said = std::fs::read_to_string(&stderr).unwrap_or_default();
        if let Some(line) = said.lines().find(|l| l.starts_with("vitals-mcp: serving")) {
            let url = line.split_whitespace().find(|w| w.starts_with("http")).expect("a URL on the line").to_string();
            let base = url.split('/').take(3).collect::<Vec<_>>().join("/");
            return Hosted { child, base, url, stderr };
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("vitals-mcp serve exited ({st}): {said}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("vitals-mcp serve never said where it serves: {}", std::fs::read_to_string(&stderr).unwrap_or_default());
}

/// `serve --http` on a port of its own with `--tenants` and a loopback `--public-url`: the public
/// URL, the log, and the child (killed when dropped).
pub async fn serve_tenants(
    twin: &Twin,
    config: &std::path::Path,
    tenants: &std::path::Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> (String, std::path::PathBuf, tokio::process::Child) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let public = format!("http://127.0.0.1:{port}");
    let log = config.join("serve.log");
    let mut cmd = command(twin, config, env);
    cmd.args(["serve", "--http", &format!("127.0.0.1:{port}"), "--tenants", tenants.to_str().unwrap(), "--public-url", &public])
        .args(args)
        .stderr(std::fs::File::create(&log).unwrap())
        .kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    for _ in 0..400 {
        if std::fs::read_to_string(&log).unwrap_or_default().contains("serving") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (public, log, child)
}

/// `serve --http` with `args`, expected to refuse to start: what it said.
pub async fn hosted_err(twin: &Twin, config: &Path, args: &[&str]) -> String {
    let o = command(twin, config, &[]).args(["serve", "--http", "127.0.0.1:0"]).args(args).output().await.unwrap();
    assert!(!o.status.success(), "it refused to start");
    String::from_utf8_lossy(&o.stderr).to_string()
}

impl Hosted {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    /// SIGTERM, then the exit status.
    pub async fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.pid();
        std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
        let st = tokio::time::timeout(Duration::from_secs(90), self.child.wait()).await.expect("stops after SIGTERM").unwrap();
        let log = self.log();
        (st, log)
    }
}

/// An MCP client over streamable HTTP, as a test session.
pub async fn client(url: &str, bearer: Option<&str>) -> Session {
    client_with(url, bearer, rmcp::service::ClientLifecycleMode::Initialize).await
}

pub async fn client_with(url: &str, bearer: Option<&str>, mode: rmcp::service::ClientLifecycleMode) -> Session {
    let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(b) = bearer {
        cfg = cfg.auth_header(b.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(cfg);
    let client = rmcp::service::ClientServiceExt::serve_with_lifecycle((), transport, mode).await.expect("MCP over HTTP");
    Session { client, stderr: scratch().join("no-such-log") }
}

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;

/// A raw POST of an `initialize`, with extra headers; the status and the body.
async fn post(url: &str, headers: &[(&str, &str)], body: String) -> (u16, String) {
    let mut r = reqwest::Client::new().post(url).header("content-type", "application/json").header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = r.body(body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap_or_default())
}

fn synthetic(answer: &Value) -> bool {
    answer["notices"]["synthetic"].is_string()
}

fn week() -> Value {
    json!({"collection": "oura.daily_sleep", "start": ds(ago(7)), "end": ds(ago(1)), "tz": TZ})
}

#[tokio::test]
async fn one_person_at_a_secret_path_kept_across_restarts() {
    let twin = twin().await;
    let config = folder("one");
    let h = hosted(&twin, &config, &[], &[("OURA_PAT", TOKEN)]).await;
    let path = h.url.strip_prefix(&h.base).unwrap().to_string();
    assert_eq!(path.len(), 1 + 43 + 4, "a 256-bit secret: {path}");
    assert!(h.log().contains("do not share or log it"), "{}", h.log());
    // Both lifecycles: a 2025 session, and 2026-07-28 requests that stand alone.
    let modern = rmcp::service::ClientLifecycleMode::Discover { preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28] };
    for mode in [rmcp::service::ClientLifecycleMode::Initialize, modern] {
        let s = client_with(&h.url, None, mode).await;
        let tools = s.client.list_all_tools().await.unwrap();
        assert_eq!(
            tools.len(),
            vitals::mcp::Vitals::new(std::sync::Arc::new(vitals::engine::Engine::new(
                vec![],
                Default::default(),
                vitals::engine::Limits::from_config(&Default::default())
            )))
            .tool_names()
            .len()
        );
        let a = s.ok("vitals_query", week()).await;
        assert!(!synthetic(&a), "the host's own login (OURA_PAT) answers at its own path: {a}");
        assert_eq!(keys(&a["data"]), expected_keys(&twin, "daily_sleep", &ds(ago(7)), &ds(ago(1))));
        let _ = s.client.cancel().await;
    }
    let (st, log) = h.stop().await;
    assert!(st.success(), "SIGTERM is a clean stop: {log}");
    let again = hosted(&twin, &config, &[], &[]).await;
    assert_eq!(again.url.strip_prefix(&again.base).unwrap(), path, "a restart keeps the URL");
    assert!(again.log().contains("http-path.json"), "{}", again.log());
    // Stateless, for several instances behind one proxy.
    let stateless = hosted(&twin, &folder("stateless"), &["--stateless"], &[]).await;
    let s = client(&stateless.url, None).await;
    assert!(synthetic(&s.ok("vitals_query", week()).await));
}

#[tokio::test]
async fn every_other_path_is_a_bare_404() {
    let twin = twin().await;
    let h = hosted(&twin, &folder("paths"), &[], &[]).await;
    let secret = h.url.strip_prefix(&h.base).unwrap().trim_end_matches("/mcp").to_string();
    let tenantish = format!("/u/{}/mcp", "a".repeat(48));
    for p in [
        "/",
        "/mcp",
        "/u/",
        &tenantish,
        &format!("{secret}/mcp/"),
        &format!("{secret}x/mcp"),
        &secret[..20],
        &format!("{secret}/callback/"),
        "/.well-known/oauth-authorization-server",
    ] {
        for (name, r) in
            [("GET", reqwest::Client::new().get(format!("{}{p}", h.base))), ("POST", reqwest::Client::new().post(format!("{}{p}", h.base)).body(INIT))]
        {
            let resp = r.send().await.unwrap();
            assert_eq!(resp.status().as_u16(), 404, "{name} {p}");
            assert_eq!(resp.text().await.unwrap(), "", "{name} {p}: a 404 says nothing");
        }
    }
}

#[tokio::test]
async fn origin_host_bearer_and_size_are_checked() {
    let twin = twin().await;
    let config = folder("checks");
    let token = "t0ken-".repeat(8);
    std::fs::write(config.join("bearer"), format!("{token}\n")).unwrap();
    let bearer = format!("Bearer {token}");
    let h = hosted(&twin, &config, &["--bearer-file", config.join("bearer").to_str().unwrap(), "--allow-origin", "https://app.example.com:443"], &[]).await;
    let port = h.base.rsplit(':').next().unwrap().to_string();
    // What a request carries, and the status it must get.
    type Case<'a> = (&'a str, Vec<(&'a str, String)>, u16);
    let cases: Vec<Case> = vec![
        ("no bearer", vec![], 401),
        ("a wrong bearer", vec![("authorization", format!("Bearer {}", "x".repeat(48)))], 401),
        ("the token without its scheme", vec![("authorization", token.clone())], 401),
        ("the bearer", vec![("authorization", bearer.clone())], 200),
        ("a foreign Origin", vec![("authorization", bearer.clone()), ("origin", "https://evil.example".into())], 403),
        ("a named Origin", vec![("authorization", bearer.clone()), ("origin", "https://app.example.com".into())], 200),
        ("this server's own Origin", vec![("authorization", bearer.clone()), ("origin", format!("http://localhost:{port}"))], 200),
        ("a rebinding Host", vec![("authorization", bearer.clone()), ("host", format!("evil.example:{port}"))], 403),
        ("an unknown protocol version", vec![("authorization", bearer.clone()), ("mcp-protocol-version", "1999-01-01".into())], 400),
    ];
    for (what, headers, want) in cases {
        let hs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, body) = post(&h.url, &hs, INIT.into()).await;
        assert_eq!(status, want, "{what}: {body}");
        assert!(!body.contains(&token), "{what}: the token is never echoed");
    }
    let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(2 << 20));
    let (status, _) = post(&h.url, &[("authorization", &bearer)], big).await;
    assert_eq!(status, 413, "a body over 1 MiB");
    let s = client(&h.url, Some(&token)).await;
    assert!(synthetic(&s.ok("vitals_query", week()).await));
    let _ = s.client.cancel().await;
    let (_, log) = h.stop().await;
    assert!(!log.contains(&token), "the bearer token is never logged");
}

#[tokio::test]
async fn what_serve_refuses_to_start_with() {
    let twin = twin().await;
    let config = folder("refusals");
    std::fs::write(config.join("short"), "short-token\n").unwrap();
    let short = config.join("short").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--http", "0.0.0.0:0"], "refusing to listen on 0.0.0.0:0"),
        (vec!["--http", "0.0.0.0:0", "--allow-remote"], "--allow-remote needs --public-url"),
        (vec!["--http", "127.0.0.1:0", "--path", "/short/mcp"], "`--path` \"/short/mcp\" is not a secret path"),
        (vec!["--http", "127.0.0.1:0", "--bearer-file", &short], "at least 32 printable characters"),
        (vec!["--http", "127.0.0.1:0", "--public-url", "http://vitals.example.com"], "must be https://host"),
        (vec!["--http", "localhost:port"], "is not [ADDR:]PORT"),
        (vec!["--http", "127.0.0.1:0", "--tenants", "/nonexistent", "--path", "/abcdefghijklmnopqrstuvwxyz012345/mcp"], "leave --path out"),
    ];
    for (args, says) in cases {
        let o = command(&twin, &config, &[]).arg("serve").args(&args).output().await.unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("short-token"), "a refused token is not shown");
    }
    // Several people's logins are sealed under a key given outside their folder, or no server starts.
    let tenants = folder("refusals-tenants");
    let inside = tenants.join("tenants.key");
    std::fs::write(&inside, format!("{TENANTS_KEY}\n")).unwrap();
    let open_key = config.join("open.key");
    std::fs::write(&open_key, format!("{TENANTS_KEY}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&open_key, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let t = tenants.to_str().unwrap();
    type Case<'a> = (Vec<&'a str>, &'a [(&'a str, &'a str)], &'a str);
    let keyless: Vec<Case> = vec![
        (vec!["--tenants", t], &[], "no key was given"),
        (vec!["--tenants", t], &[("VITALS_TENANTS_KEY", "0000000000000000000000000000000000000000000000000000000000000000")], "not made at random"),
        (vec!["--tenants", t], &[("VITALS_TENANTS_KEY", "hunter2")], "it is 7 characters"),
        (vec!["--tenants", t, "--key-file", inside.to_str().unwrap()], &[], "inside the tenants folder"),
        (vec!["--tenants", t, "--key-file", open_key.to_str().unwrap()], &[], "chmod 600"),
        (vec!["--tenants", t, "--auth", "both"], &[("VITALS_TENANTS_KEY", TENANTS_KEY)], "oauth-or-url"),
    ];
    for (args, env, says) in keyless {
        let mut cmd = command(&twin, &config, &[]);
        cmd.env_remove("VITALS_TENANTS_KEY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = cmd.args(["serve", "--http", "127.0.0.1:0"]).args(&args).output().await.unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains(TENANTS_KEY) && !err.contains("hunter2"), "no key is shown: {err}");
    }
    let remote = hosted(&twin, &config, &["--allow-remote", "--public-url", "https://vitals.example.com"], &[]).await;
    assert!(remote.log().contains("https://vitals.example.com/"), "the URL is said with the public address: {}", remote.log());
    assert!(remote.log().contains("WARNING") && remote.log().contains("Terminate TLS in front of it"), "{}", remote.log());
    let _ = remote.stop().await;
}

/// A tenant folder holding an Oura login the twin accepts (a copy of a person's config folder).
fn connected_config(tag: &str) -> PathBuf {
    let d = folder(tag);
    let t = vitals::accounts::Tokens { access: vitals::secret::Secret::new(TOKEN), login: Some("login-1".into()), ..Default::default() };
    vitals::accounts::TokenStore::file(&d).save("oura", &t).unwrap();
    d
}

/// `vitals-mcp tenant <args>` with this tenants folder: its stdout's last line, or the failure.
pub async fn tenant(twin: &Twin, tenants: &Path, args: &[&str]) -> Result<String, String> {
    let o = command(twin, &folder("tenant-cmd"), &[("VITALS_TENANTS_DIR", tenants.to_str().unwrap())]).arg("tenant").args(args).output().await.unwrap();
    match o.status.success() {
        true => Ok(String::from_utf8_lossy(&o.stdout).trim().lines().last().unwrap_or_default().to_string()),
        false => Err(String::from_utf8_lossy(&o.stderr).to_string()),
    }
}

#[tokio::test]
async fn tenants_are_apart_and_a_deleted_one_is_gone_at_once() {
    let twin = twin().await;
    let tenants = folder("tenants");
    let src = connected_config("tenant-src");
    let before = std::fs::read(src.join("tokens.json")).unwrap();
    let a_url = tenant(&twin, &tenants, &["import", src.to_str().unwrap()]).await.unwrap();
    assert_eq!(std::fs::read(src.join("tokens.json")).unwrap(), before, "the source folder is left as it was");
    let b_url = tenant(&twin, &tenants, &["add"]).await.unwrap();
    for u in [&a_url, &b_url] {
        assert!(u.starts_with("http://127.0.0.1:8790/u/") && u.ends_with("/mcp"), "{u}");
    }
    let secret = |u: &str| u.split('/').nth(4).unwrap().to_string();
    let (a, b) = (secret(&a_url), secret(&b_url));
    let (a_id, b_id) = (tenant_of_url(&tenants, &a_url), tenant_of_url(&tenants, &b_url));
    let listed = tenant(&twin, &tenants, &["list"]).await.unwrap();
    let all = vitals_cmd().args(["tenant", "list", "--tenants", tenants.to_str().unwrap()]).output().unwrap();
    let all = String::from_utf8_lossy(&all.stdout).to_string();
    assert!(all.contains(&a_id) && all.contains(&b_id) && listed.len() == 48, "{all}");
    assert!(!all.contains(&a) && !all.contains(&b), "the list names folders, never a connector URL: {all}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(tenants.join(&a_id)).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(tenants.join(&a_id).join("tokens.json")).unwrap().permissions().mode() & 0o777, 0o600);
    }
    // The host has a personal token in its environment and a login of its own: no tenant reads either.
    let host = connected_config("tenant-host");
    let h = hosted(&twin, &host, &["--tenants", tenants.to_str().unwrap()], &[("OURA_PAT", TOKEN)]).await;
    let at = |t: &str| format!("{}/u/{t}/mcp", h.base);
    let sa = client(&at(&a), None).await;
    let sb = client(&at(&b), None).await;
    let first = sa.ok("vitals_query", week()).await;
    assert!(!synthetic(&first), "tenant A reads its own login: {first}");
    let other = sb.ok("vitals_query", week()).await;
    assert!(synthetic(&other), "tenant B has no login: sample data, never A's cached days, the host's login or OURA_PAT: {other}");
    assert!(other["notices"]["cached"].is_null(), "B's answer came from no cache of A's: {other}");
    let again = sa.ok("vitals_query", week()).await;
    assert!(again["notices"]["cached"].is_object() && !synthetic(&again), "A's own cache answers A: {again}");
    let check = sb.ok("vitals_check", json!({})).await;
    let said = check.to_string();
    assert!(!said.contains(host.to_str().unwrap()) && !said.contains(tenants.to_str().unwrap()), "a tenant is told no server path: {said}");
    assert!(check["providers"][0]["credential"] == "sandbox", "{check}");
    // Unknown and malformed ids are 404, as any path.
    for p in
        [format!("/u/{}/mcp", "0".repeat(48)), format!("/u/{}/mcp", a.to_uppercase()), format!("/u/{a}/mcp/x"), format!("/u/{a}/callback/"), format!("/u/{a}")]
    {
        let r = reqwest::Client::new().post(format!("{}{p}", h.base)).header("content-type", "application/json").body(INIT).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 404, "{p}");
    }
    let (status, _) = post(&format!("{}/u/{a_id}/mcp", h.base), &[], INIT.into()).await;
    assert_eq!(status, 404, "a tenant's folder name is no URL");
    tenant(&twin, &tenants, &["delete", &a_id]).await.unwrap();
    let (status, _) = post(&at(&a), &[], INIT.into()).await;
    assert_eq!(status, 404, "a deleted tenant's URL is 404 from the next request");
    let (status, _) = post(&at(&b), &[], INIT.into()).await;
    assert_eq!(status, 200, "the others go on");
    let e = tenant(&twin, &tenants, &["delete", &a_id]).await.unwrap_err();
    assert!(e.contains("there is no tenant"), "{e}");
    let e = tenant(&twin, &tenants, &["import", folder("empty-src").to_str().unwrap()]).await.unwrap_err();
    assert!(e.contains("it is not a vitals config folder"), "{e}");
    let _ = h.stop().await;
}

#[tokio::test]
async fn a_tenant_logs_in_through_the_servers_own_callback() {
    let fx = login::Fixture::new("hosted").await;
    let tenants = folder("login-tenants");
    let tenant_url = tenant(&fx.twin, &tenants, &["add"]).await.unwrap();
    let id = tenant_of_url(&tenants, &tenant_url);
    let env: Vec<(String, String)> = fx.env().into_iter().filter(|(k, _)| k != "VITALS_OURA_REDIRECT_URI" && k != "VITALS_CONFIG_DIR").collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, _log, _child) = serve_tenants(&fx.twin, &fx.dir, &tenants, &env, &[]).await;
    // One callback for every person: the login's state says whose it is, so no URL names anyone.
    let redirect = format!("{public}/callback/oura");
    fx.twin.state.oauth.lock().unwrap().apps[0].redirect_uri = redirect.clone();
    let s = client(&tenant_url.replace("http://127.0.0.1:8790", &public), None).await;
    let check = s.ok("vitals_check", json!({})).await;
    let oura = check["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "oura").unwrap().clone();
    assert!(oura["redirect"].as_str().unwrap().starts_with(&format!("{redirect} (this server's callback")), "what to register: {oura}");
    let r = s.ok("vitals_connect", json!({"provider": "oura"})).await;
    assert_eq!(r["state"], "waiting_for_browser", "{r}");
    assert!(r["cli"].is_null() && !r["message"].as_str().unwrap().contains("this computer"), "a hosted login names no terminal: {r}");
    let url = r["url"].as_str().unwrap();
    assert!(url.contains(&url::form_urlencoded::byte_serialize(redirect.as_bytes()).collect::<String>()), "the provider sends the browser back here: {url}");
    let (status, page) = login::open_in_browser(url).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("is connected"), "{page}");
    let saved = tenant_store(&tenants, &id).load("oura").unwrap();
    assert!(saved.is_some(), "the login is saved in the tenant's own folder");
    let on_disk = std::fs::read(tenants.join(&id).join("tokens.json")).unwrap();
    assert!(vitals::accounts::vault::is_sealed(&on_disk), "sealed under the operator's key");
    let plain = vitals::accounts::TokenStore::file(tenants.join(&id)).load("oura").unwrap_err().to_string();
    assert!(plain.contains("encrypted") && !plain.contains(saved.unwrap().access.expose()), "read without the key: {plain}");
    assert!(fx.stored().is_none(), "and never in the host's");
    let a = s.ok("vitals_query", week()).await;
    assert!(!synthetic(&a), "the tenant now reads its account: {a}");
    // The same link again: nothing is waiting any more.
    let (status, _) = login::open_in_browser(url).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn sigterm_lets_a_call_under_way_finish() {
    let twin = twin().await;
    let h = hosted(&twin, &folder("drain"), &[], &[("OURA_PAT", TOKEN)]).await;
    twin.set_faults(Faults { latency_ms: 1_500, ..Default::default() });
    let s = client(&h.url, None).await;
    let call = tokio::spawn(async move {
        let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "start": ds(ago(3)), "end": ds(ago(1)), "tz": TZ})).await;
        (a, s)
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (st, log) = h.stop().await;
    let (a, _s) = call.await.unwrap();
    assert!(a["notices"]["truncated"].is_null() && a["count"].as_u64().unwrap() > 0, "the call under way was answered whole: {a}");
    assert!(st.success(), "{log}");
    assert!(log.contains("every call under way was answered"), "{log}");
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_sessions_across_twenty_tenants() {
    let twin = twin().await;
    let tenants = folder("load-tenants");
    let src = connected_config("load-src");
    let mut ids = Vec::new();
    for i in 0..20 {
        let args: Vec<&str> = if i % 2 == 0 { vec!["import", src.to_str().unwrap()] } else { vec!["add"] };
        let url = tenant(&twin, &tenants, &args).await.unwrap();
        ids.push((url.split('/').nth(4).unwrap().to_string(), i % 2 == 0));
        // (the URL's secret: what the person's assistant is given)
    }
    let h = hosted(&twin, &folder("load-host"), &["--tenants", tenants.to_str().unwrap()], &[("OURA_PAT", TOKEN)]).await;
    let mut tasks = Vec::new();
    for (id, connected) in ids.iter().cloned() {
        for k in 0..10 {
            let url = format!("{}/u/{id}/mcp", h.base);
            tasks.push(tokio::spawn(async move {
                let s = client(&url, None).await;
                let mut wrong = Vec::new();
                for q in 0..10 {
                    let back = 1 + ((k + q) % 5) as i64;
                    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "start": ds(ago(back + 6)), "end": ds(ago(back)), "tz": TZ})).await;
                    if synthetic(&a) == connected || a["notices"]["truncated"].is_object() {
                        wrong.push(a.to_string());
                    }
                }
                let _ = s.client.cancel().await;
                wrong
            }));
        }
    }
    let all = tokio::time::timeout(Duration::from_secs(600), futures_util::future::join_all(tasks)).await.expect("200 sessions finish");
    let wrong: Vec<String> = all.into_iter().flat_map(|r| r.expect("no session panicked")).collect();
    assert!(wrong.is_empty(), "{} of 2,000 answers were another tenant's or cut, e.g. {:?}", wrong.len(), wrong.first());
    let peak_mb = peak_rss_mb(h.pid()).expect("the server's peak memory (/proc)");
    eprintln!("200 sessions × 10 queries over 20 tenants: server peak RSS {peak_mb} MB");
    assert!(peak_mb < 1024, "memory stays bounded: {peak_mb} MB");
    let (st, log) = h.stop().await;
    assert!(st.success() && !log.contains("panicked"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_renews_an_imported_login_with_its_own_app() {
    let twin = twin().await;
    // A person's folder from their own machine: a Withings login and the app it was issued to.
    let login = WithingsLogin::new(&twin, "tenant-renew");
    vitals::accounts::Settings::at(&login.dir).save("withings", WITHINGS_APP_ID, &vitals::secret::Secret::new(WITHINGS_APP_SECRET)).unwrap();
    let tenants = folder("renew-tenants");
    let tenant_url = tenant(&twin, &tenants, &["import", login.dir.to_str().unwrap()]).await.unwrap();
    let (secret, id) = (tenant_url.split('/').nth(4).unwrap().to_string(), tenant_of_url(&tenants, &tenant_url));
    twin.withings(|w| w.oauth.expire_access_tokens());
    // The operator has no Withings app: only the twin's endpoints.
    let own_app = ["VITALS_CONFIG_DIR", "VITALS_WITHINGS_CLIENT_ID", "VITALS_WITHINGS_CLIENT_SECRET"];
    let env: Vec<(&str, &str)> = login.env.iter().filter(|(k, _)| !own_app.contains(&k.as_str())).map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let h = hosted(&twin, &folder("renew-host"), &["--tenants", tenants.to_str().unwrap()], &env).await;
    let s = client(&format!("{}/u/{secret}/mcp", h.base), None).await;
    let a = s.ok("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10"})).await;
    assert!(a["notices"]["credential_refreshed"].is_string() && !synthetic(&a), "{}", a["notices"]);
    let renewed = tenant_store(&tenants, &id).load("withings").unwrap().unwrap();
    assert_ne!(renewed.access.expose(), login.access, "the renewal is saved in the tenant's folder");
    assert_eq!(login.stored().access.expose(), login.access, "and never in the folder it was copied from");
    let _ = h.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_least_recently_asked_tenant_is_let_go_past_the_bound_and_made_again() {
    let twin = twin().await;
    let tenants = folder("bound-tenants");
    let t = sealed_tenants(&tenants);
    let ids: Vec<_> = (0..=vitals::hosted::TENANTS_IN_MEMORY).map(|_| t.add().and_then(|id| vitals::hosted::hashed::new_url(&t, &id)).unwrap()).collect();
    let h = hosted(&twin, &folder("bound-host"), &["--tenants", tenants.to_str().unwrap()], &[]).await;
    let ask = |secret: &vitals::secret::Secret| {
        let url = format!("{}{}", h.base, vitals::hosted::tenants::mcp_path(secret));
        async move {
            let s = client(&url, None).await;
            let a = s.ok("vitals_query", week()).await;
            let _ = s.client.cancel().await;
            a
        }
    };
    let first = &ids[0];
    ask(first).await;
    assert!(ask(first).await["notices"]["cached"].is_object(), "a tenant's second ask is answered from its cache");
    for id in &ids[1..] {
        ask(id).await;
    }
    let again = ask(first).await;
    assert!(again["notices"]["cached"].is_null() && synthetic(&again), "let go past the bound, then made again: {}", again["notices"]);
    let _ = h.stop().await;
}
