//! One key per door on a hosted server of several people (issue 47), by raw HTTP: under `--auth
//! oauth` a tenant opens only with a token (no connector URL does, and a revoke ends the
//! assistant's access); nothing an assistant reads names the person's folder or carries a secret;
//! a provider's login comes back through the one callback of the server, found by its `state`; a
//! replayed code revokes what it issued; the person's page shows one row per assistant; every
//! response carries the security headers; and a copy of the tenants folder without the operator's
//! key holds no secret, while the key itself is rotated old-or-new.
use super::common::*;
use super::http::{command, folder, sealed_tenants, serve_tenants, tenant, tenant_store, TENANTS_KEY};
use super::oauth::{hidden_fields, mcp_status, pkce, Flow};
use super::people::{every_file, tenants_in, Person};
use serde_json::{json, Value};

/// A person who joined with an invitation: their browser, sign-in key, folder id, what the welcome
/// page showed, and the invitation's token.
struct Joined {
    me: Person,
    key: String,
    id: String,
    welcome: String,
    invitation: String,
}

async fn join(twin: &Twin, tenants: &std::path::Path, public: &str) -> Joined {
    let before = tenants_in(tenants);
    let link = tenant(twin, tenants, &["invite", "--public-url", public]).await.unwrap();
    let path = link.strip_prefix(public).unwrap().to_string();
    let mut me = Person::new(public);
    let page = me.get(&path).await;
    let welcome = me.post(&path, &[("csrf", &page.csrf())]).await;
    assert_eq!(welcome.status, 200, "{}", welcome.body);
    let id = tenants_in(tenants).into_iter().find(|t| !before.contains(t)).unwrap();
    Joined { key: welcome.inside("data-key"), welcome: welcome.body, me, id, invitation: path.trim_start_matches("/join/").to_string() }
}

/// A client registered by dynamic registration, with a loopback redirect.
async fn registered<'a>(public: &'a str, name: &str) -> Flow<'a> {
    let redirect = "http://127.0.0.1:45999/callback".to_string();
    let reg: Value = reqwest::Client::new()
        .post(format!("{public}/oauth/register"))
        .json(&json!({"redirect_uris": [redirect], "client_name": name, "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    Flow { public, client_id: reg["client_id"].as_str().unwrap().into(), redirect }
}

/// The person allows the client: its access and refresh tokens, and the code they came from.
async fn allowed(flow: &Flow<'_>, me: &mut Person, seed: &str) -> (String, String, String, String) {
    let (verifier, challenge) = pkce(seed);
    let code = flow.code(me, &challenge).await;
    let (status, t) = flow.exchange(&code, &verifier).await;
    assert_eq!(status, 200, "{t}");
    (t["access_token"].as_str().unwrap().into(), t["refresh_token"].as_str().unwrap().into(), code, verifier)
}

/// MCP over HTTP by hand, with a bearer token; every byte of every response (status, headers,
/// body) is kept in `seen`.
struct Raw {
    url: String,
    token: String,
    session: Option<String>,
    next: u64,
    seen: String,
}

impl Raw {
    async fn open(url: &str, token: &str) -> Raw {
        let mut r = Raw { url: url.into(), token: token.into(), session: None, next: 1, seen: String::new() };
        let init = r.send("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})).await;
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        r.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        r
    }

    async fn post(&mut self, body: Value) -> String {
        let mut req = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("authorization", format!("Bearer {}", self.token));
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let resp = req.body(body.to_string()).send().await.unwrap();
        if let Some(s) = resp.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().unwrap().to_string());
        }
        self.seen.push_str(&format!("{} {:?}\n", resp.status(), resp.headers()));
        let text = resp.text().await.unwrap();
        self.seen.push_str(&text);
        text
    }

    /// A request; its JSON-RPC response (read from the event stream or the JSON body).
    async fn send(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let text = self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let events: Vec<Value> = text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str(d.trim()).ok()).collect();
        let whole = serde_json::from_str::<Value>(&text).ok();
        events.into_iter().chain(whole).find(|v| v["id"] == id).unwrap_or_else(|| panic!("{method}: no answer in {text}"))
    }

    async fn call(&mut self, tool: &str, args: Value) -> Value {
        self.send("tools/call", json!({"name": tool, "arguments": args})).await
    }
}

/// Every secret of the person and the server must be absent from `text`.
fn holds_none(text: &str, secrets: &[(&str, &str)], what: &str) {
    for (name, s) in secrets {
        assert!(!s.is_empty() && !text.contains(s), "{what} carries {name}");
    }
}

#[tokio::test]
async fn under_oauth_a_tenant_opens_only_with_a_token_and_a_revoke_ends_the_assistants_access() {
    let twin = twin().await;
    let tenants = folder("keys-oauth-tenants");
    let (public, _log, child) = serve_tenants(&twin, &folder("keys-oauth-cfg"), &tenants, &[], &["--auth", "oauth"]).await;
    let mut p = join(&twin, &tenants, &public).await;
    assert!(p.welcome.contains(&format!("data-connector=\"oauth\">{public}/mcp<")), "the one URL, naming no one: {}", p.welcome);
    assert!(!p.welcome.contains("/u/"), "no URL that opens a tenant is made under OAuth: {}", p.welcome);
    // A connector URL made for this tenant (as `--auth url` once did) opens nothing here.
    let secret = vitals::hosted::hashed::new_url(&sealed_tenants(&tenants), &vitals::hosted::tenants::TenantId::parse(&p.id).unwrap()).unwrap();
    let by_url = format!("{public}{}", vitals::hosted::tenants::mcp_path(&secret));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let post = |u: String| async move {
        reqwest::Client::new()
            .post(u)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init)
            .send()
            .await
            .unwrap()
            .status()
    };
    assert_eq!(post(by_url.clone()).await, 404, "under --auth oauth no URL opens a tenant");
    assert_eq!(post(format!("{public}/u/{}/mcp", p.id)).await, 404, "nor does the folder's name");

    let flow = registered(&public, "Stand-in assistant").await;
    let (access, refresh, _, _) = allowed(&flow, &mut p.me, "a").await;
    assert_eq!(mcp_status(&public, Some(&access), "").await.0, 200);
    let page = p.me.get("/me").await;
    p.me.post("/me/revoke-client", &[("csrf", &page.csrf()), ("client_id", &flow.client_id)]).await;
    assert_eq!(mcp_status(&public, Some(&access), "").await.0, 401, "revoked: the token opens nothing");
    let (s, e) = flow.token(&[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &flow.client_id)]).await;
    assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "nor its refresh token: {e}");
    assert_eq!(post(by_url.clone()).await, 404, "and the old URL still opens nothing");
    drop(child);

    // Both doors only by the operator's named choice, whose risk `serve --help` states.
    let (public, _log, _child) = serve_tenants(&twin, &folder("keys-both-cfg"), &tenants, &[], &["--auth", "oauth-or-url"]).await;
    let by_url = format!("{public}{}", vitals::hosted::tenants::mcp_path(&secret));
    assert_eq!(post(by_url).await, 200, "--auth oauth-or-url: the URL opens the tenant too");
    let help = vitals_cmd().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    assert!(help.contains("oauth-or-url") && help.contains("still reads after the person revokes"), "{help}");
}

#[tokio::test]
async fn nothing_an_assistant_reads_over_oauth_names_the_person_or_carries_a_secret() {
    let fx = login::Fixture::new("keys-script").await;
    let tenants = folder("keys-script-tenants");
    let env: Vec<(String, String)> = fx.env().into_iter().filter(|(k, _)| k != "VITALS_OURA_REDIRECT_URI").collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, log, _child) = serve_tenants(&fx.twin, &fx.dir, &tenants, &env, &["--auth", "oauth"]).await;
    let mut p = join(&fx.twin, &tenants, &public).await;
    let flow = registered(&public, "Scripted assistant").await;
    let (access, refresh, code, verifier) = allowed(&flow, &mut p.me, "script").await;
    let mut raw = Raw::open(&format!("{public}/mcp"), &access).await;

    // What a person's assistant does in a first conversation, errors included.
    raw.send("tools/list", json!({})).await;
    raw.send("resources/list", json!({})).await;
    raw.send("resources/read", json!({"uri": "vitals://sources"})).await;
    let week = json!({"collection": "oura.daily_sleep", "start": ds(ago(7)), "end": ds(ago(1)), "tz": TZ});
    for (tool, args) in [
        ("vitals_sources", json!({})),
        ("vitals_sources", json!({"provider": "oura"})),
        ("vitals_check", json!({})),
        ("vitals_today", json!({})),
        ("vitals_query", week.clone()),
        ("vitals_daily", json!({"start": ds(ago(3)), "end": ds(ago(1))})),
        ("vitals_query", json!({"collection": "oura.nothing", "start": "2026-13-01"})),
        ("vitals_query", json!({"collection": "oura.daily_sleep", "start": "yesterday"})),
        ("vitals_export", json!({"provider": "garmin", "id": "1", "format": "fit", "path": "relative.fit"})),
        ("vitals_trend", json!({"metric": "oura.daily_sleep.score", "start": ds(ago(30)), "end": ds(ago(1))})),
        ("vitals_connect", json!({"provider": "garmin"})),
        ("vitals_connect", json!({"provider": "garmin-connect"})),
        ("vitals_connect", json!({"provider": "polar"})),
        ("vitals_connect", json!({"provider": "nobody"})),
    ] {
        raw.call(tool, args).await;
    }
    // An OAuth provider's login: the link names the server's one callback and the login's state alone.
    fx.twin.state.oauth.lock().unwrap().apps[0].redirect_uri = format!("{public}/callback/oura");
    let connect = raw.call("vitals_connect", json!({"provider": "oura"})).await;
    let link = connect["result"]["structuredContent"]["url"].as_str().unwrap_or_else(|| panic!("a login link: {connect}")).to_string();
    let redirect: String = url::form_urlencoded::byte_serialize(format!("{public}/callback/oura").as_bytes()).collect();
    assert!(link.contains(&format!("redirect_uri={redirect}&")) || link.ends_with(&format!("redirect_uri={redirect}")), "{link}");
    // A forged state lands nowhere and says nothing of whose login it is not.
    let forged = no_redirects().get(format!("{public}/callback/oura?code=x&state=forged-state-0123")).send().await.unwrap();
    assert_eq!(forged.status(), 404);
    assert!(forged.text().await.unwrap().contains("No login is waiting here"));
    let (status, landed) = login::open_in_browser(&link).await;
    assert!(status == 200 && landed.contains("is connected"), "{landed}");
    let saved = tenant_store(&tenants, &p.id).load("oura").unwrap().expect("the state led the login to this person's folder");
    let now = raw.call("vitals_query", week).await;
    assert!(now["result"]["structuredContent"]["notices"]["synthetic"].is_null(), "the person's own account answers: {now}");
    raw.call("vitals_check", json!({})).await;

    let tenants_dir = tenants.display().to_string();
    let secrets = [
        ("the tenant's id", p.id.as_str()),
        ("the sign-in key", p.key.as_str()),
        ("the invitation", p.invitation.as_str()),
        ("the refresh token", refresh.as_str()),
        ("the code", code.as_str()),
        ("the verifier", verifier.as_str()),
        ("Oura's access token", saved.access.expose()),
        ("Oura's refresh token", saved.refresh.as_ref().expect("the twin issues a refresh token").expose()),
        ("the app's client secret", login::APP_SECRET),
        ("the tenants key", TENANTS_KEY),
        ("the person's session", p.me.cookie.as_deref().unwrap()),
        ("the tenants folder", tenants_dir.as_str()),
    ];
    holds_none(&raw.seen, &secrets, "what the assistant read");
    assert!(!raw.seen.contains(&access), "the access token is never echoed");
    let said = std::fs::read_to_string(&log).unwrap();
    holds_none(&said, &secrets[..secrets.len() - 1], "the server's log");
    assert!(!said.contains(&access), "the log carries the access token");
}

#[tokio::test]
async fn a_replayed_code_revokes_every_token_it_issued_and_the_page_shows_one_row_per_assistant() {
    let twin = twin().await;
    let tenants = folder("keys-replay-tenants");
    let (public, _log, _child) = serve_tenants(&twin, &folder("keys-replay-cfg"), &tenants, &[], &["--auth", "oauth"]).await;
    let mut p = join(&twin, &tenants, &public).await;
    let flow = registered(&public, "Twice-allowed assistant").await;
    let (access, refresh, code, verifier) = allowed(&flow, &mut p.me, "first").await;
    let (s, t2) = flow.token(&[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &flow.client_id)]).await;
    assert_eq!(s, 200, "{t2}");
    let access2 = t2["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp_status(&public, Some(&access2), "").await.0, 200);
    // The second login of the same assistant (another device): one row on the page, both grants.
    let (other_access, _, _, _) = allowed(&flow, &mut p.me, "second").await;
    let page = p.me.get("/me").await;
    assert_eq!(page.body.matches(&format!("data-client=\"{}\"", flow.client_id)).count(), 1, "one row per assistant: {}", page.body);
    assert!(page.body.contains("Twice-allowed assistant") && page.body.contains("allowed 20") && page.body.contains("last used 20"), "{}", page.body);

    // The first code again: every token issued from it goes, the rotated ones included.
    let (s, e) = flow.exchange(&code, &verifier).await;
    assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "{e}");
    assert!(e["error_description"].as_str().unwrap().contains("revoked"), "{e}");
    for (what, token) in [("the first access token", &access), ("its rotated one", &access2)] {
        assert_eq!(mcp_status(&public, Some(token), "").await.0, 401, "{what} after the replay");
    }
    let (s, _) = flow.token(&[("grant_type", "refresh_token"), ("refresh_token", t2["refresh_token"].as_str().unwrap()), ("client_id", &flow.client_id)]).await;
    assert_eq!(s, 400, "its refresh token too");
    assert_eq!(mcp_status(&public, Some(&other_access), "").await.0, 200, "another code's grant stands");
    // Revoking the assistant from the page ends every token it holds.
    let page = p.me.get("/me").await;
    p.me.post("/me/revoke-client", &[("csrf", &page.csrf()), ("client_id", &flow.client_id)]).await;
    assert_eq!(mcp_status(&public, Some(&other_access), "").await.0, 401);
    assert!(!p.me.get("/me").await.body.contains("data-client="), "no row left");
}

#[tokio::test]
async fn every_response_carries_the_security_headers_and_https_cookies_are_secure() {
    let twin = twin().await;
    let tenants = folder("keys-headers-tenants");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let log = folder("keys-headers-cfg").join("serve.log");
    let mut cmd = command(&twin, &folder("keys-headers-cfg"), &[]);
    cmd.args([
        "serve",
        "--http",
        &format!("127.0.0.1:{port}"),
        "--tenants",
        tenants.to_str().unwrap(),
        "--public-url",
        "https://vitals.test",
        "--auth",
        "oauth",
        "--open-signup",
    ])
    .stderr(std::fs::File::create(&log).unwrap())
    .kill_on_drop(true);
    let _child = cmd.spawn().unwrap();
    for _ in 0..400 {
        if std::fs::read_to_string(&log).unwrap_or_default().contains("serving") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let base = format!("http://127.0.0.1:{port}");
    let c = no_redirects();
    let get = |path: &str| c.get(format!("{base}{path}")).header("host", "vitals.test").send();
    let join = get("/join").await.unwrap();
    let cookie = join.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
    let mut seen = vec![("/join".to_string(), join.headers().clone(), join.status().as_u16())];
    for path in
        ["/signin", "/me", "/callback/oura?code=x&state=y", "/nothing-here", "/.well-known/oauth-protected-resource", "/mcp", "/oauth/authorize?client_id=x"]
    {
        let r = get(path).await.unwrap();
        seen.push((path.to_string(), r.headers().clone(), r.status().as_u16()));
    }
    let token = c.post(format!("{base}/oauth/token")).header("host", "vitals.test").form(&[("grant_type", "x")]).send().await.unwrap();
    seen.push(("/oauth/token".into(), token.headers().clone(), token.status().as_u16()));
    for (path, h, status) in &seen {
        assert_eq!(h.get("strict-transport-security").map(|v| v.to_str().unwrap()), Some("max-age=31536000"), "{path} ({status})");
        assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        let html = h.get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/html"));
        if html {
            let csp = h["content-security-policy"].to_str().unwrap();
            assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'") && !csp.contains("script-src"), "{path}: {csp}");
        }
    }
    let html_pages = seen.iter().filter(|(_, h, _)| h.get("content-type").is_some_and(|v| v.to_str().unwrap().starts_with("text/html"))).count();
    assert!(html_pages >= 4, "the pages and the callback are HTML: {html_pages}");
}

#[tokio::test]
async fn a_copy_of_the_tenants_folder_without_the_key_holds_no_secret_and_the_key_rotates_old_or_new() {
    let fx = login::Fixture::new("keys-disk").await;
    let tenants = folder("keys-disk-tenants");
    let env: Vec<(String, String)> = fx.env().into_iter().filter(|(k, _)| k != "VITALS_OURA_REDIRECT_URI").collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, _log, child) = serve_tenants(&fx.twin, &fx.dir, &tenants, &env, &["--auth", "oauth"]).await;
    let mut p = join(&fx.twin, &tenants, &public).await;
    fx.twin.state.oauth.lock().unwrap().apps[0].redirect_uri = format!("{public}/callback/oura");
    let page = p.me.get("/me").await;
    let go = p.me.post("/me/connect/oura", &[("csrf", &page.csrf())]).await;
    let (status, landed) = login::open_in_browser(&go.location()).await;
    assert!(status == 200 && landed.contains("is connected"), "{landed}");
    let flow = registered(&public, "Disk assistant").await;
    let (access, refresh, _, _) = allowed(&flow, &mut p.me, "disk").await;
    let saved = tenant_store(&tenants, &p.id).load("oura").unwrap().unwrap();

    // A copy of the disk: every file, read without the key.
    let secrets = [
        ("Oura's access token", saved.access.expose()),
        ("Oura's refresh token", saved.refresh.as_ref().unwrap().expose()),
        ("the sign-in key", p.key.as_str()),
        ("the invitation", p.invitation.as_str()),
        ("the assistant's access token", access.as_str()),
        ("the assistant's refresh token", refresh.as_str()),
        ("the tenants key", TENANTS_KEY),
    ];
    let files = every_file(&tenants);
    for f in &files {
        holds_none(&String::from_utf8_lossy(&std::fs::read(f).unwrap()), &secrets, &f.display().to_string());
    }
    let e = vitals::accounts::TokenStore::file(tenants.join(&p.id)).load("oura").unwrap_err().to_string();
    assert!(e.contains("is encrypted") && e.contains("no key was given"), "read without the key: {e}");

    // The key rotates only with the server stopped; after it, the old key opens nothing.
    let new_key = folder("keys-disk-newkey").join("new.key");
    let refused = tenant(&fx.twin, &tenants, &["rotate-key", "--new-key-file", new_key.to_str().unwrap()]).await.unwrap_err();
    assert!(refused.contains("stop it first"), "{refused}");
    drop(child);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let said = tenant(&fx.twin, &tenants, &["rotate-key", "--new-key-file", new_key.to_str().unwrap()]).await.unwrap();
    assert_eq!(said, new_key.display().to_string(), "the new key's file is the last line");
    let new_text = std::fs::read_to_string(&new_key).unwrap();
    assert!(!new_text.contains(TENANTS_KEY));
    let o = command(&fx.twin, &fx.dir, &[]).args(["serve", "--http", "127.0.0.1:0", "--tenants", tenants.to_str().unwrap()]).output().await.unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("is encrypted under key") && err.contains("start with the key"), "the old key: {err}");
    assert!(!err.contains(TENANTS_KEY) && !err.contains(new_text.trim()), "{err}");
    let rotated = vitals::accounts::vault::Vault::from_file(&new_key, &tenants).unwrap();
    let with_new = vitals::hosted::tenants::Tenants::at(&tenants).sealed(std::sync::Arc::new(rotated));
    let id = vitals::hosted::tenants::TenantId::parse(&p.id).unwrap();
    assert_eq!(with_new.home(&id).unwrap().store().unwrap().load("oura").unwrap().unwrap().access.expose(), saved.access.expose(), "the logins survive");
    let (public, _log, _child) =
        serve_tenants(&fx.twin, &fx.dir, &tenants, &[("VITALS_TENANTS_KEY_FILE", new_key.to_str().unwrap())], &["--auth", "oauth"]).await;
    let mut back = Person::new(&public);
    let form = back.get("/signin").await;
    assert_eq!(back.post("/signin", &[("csrf", &form.csrf()), ("key", &p.key)]).await.status, 303);
    let page = back.get("/me").await;
    assert!(page.body.contains("data-provider=\"oura\" data-connected=\"true\""), "the server starts with the new key and reads the login: {}", page.body);
    let after = every_file(&tenants);
    assert!(after.iter().all(|f| !f.ends_with(".rotation.json") && f.extension().is_none_or(|e| e != "next")), "no journal or copy is left: {after:?}");
}

/// The consent page refuses a key that opens nothing, without saying whose keys exist.
#[tokio::test]
async fn the_tenant_folder_name_is_no_key_anywhere() {
    let twin = twin().await;
    let tenants = folder("keys-names-tenants");
    let (public, _log, _child) = serve_tenants(&twin, &folder("keys-names-cfg"), &tenants, &[], &["--auth", "oauth"]).await;
    let p = join(&twin, &tenants, &public).await;
    let flow = registered(&public, "Guessing assistant").await;
    let (_, challenge) = pkce("g");
    let mut stranger = Person::new(&public);
    let page = stranger.get(&flow.authorize_url(&challenge, &[])).await;
    let mut form = hidden_fields(&page.body);
    form.extend([("decision".to_string(), "allow".to_string()), ("key".to_string(), p.id.clone())]);
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let r = stranger.post("/oauth/authorize", &pairs).await;
    assert_eq!(r.status, 401, "a folder's name is no sign-in key: {}", r.body);
    assert!(!r.body.contains(&p.id));
}
