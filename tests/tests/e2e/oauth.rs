//! MCP authorization against `serve --http --tenants DIR --auth oauth` (issue 40), walked by a raw
//! HTTP client (no OAuth library): 401 → resource metadata → server metadata → a client registered
//! by dynamic registration and one named by its metadata document (served by a local stand-in) →
//! the person allows it on their page → code → token with PKCE → MCP with the token → refresh
//! (rotated; a reused refresh token kills the grant) → revoke. And what is refused: a wrong
//! verifier, redirect URI or resource, a code twice, a token in the query string, a token after
//! its grant was revoked from the person's page or the person deleted everything; a client whose
//! metadata document could not be read said so, not said to be unknown.
use super::common::*;
use super::http::{client, folder, serve_tenants, tenant};
use super::people::{guarded, tenants_in, Person};
use serde_json::{json, Value};
use std::collections::HashMap;

/// A PKCE pair: the verifier and its S256 challenge.
pub(super) fn pkce(seed: &str) -> (String, String) {
    use base64::Engine as _;
    use sha2::Digest as _;
    let verifier = format!("verifier-{seed}-0123456789abcdefghijklmnopqrstuvwxyz");
    (verifier.clone(), base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes())))
}

pub(super) fn query_of(location: &str) -> HashMap<String, String> {
    url::Url::parse(location).unwrap().query_pairs().into_owned().collect()
}

pub(super) struct Flow<'a> {
    pub public: &'a str,
    pub client_id: String,
    pub redirect: String,
}

impl Flow<'_> {
    pub fn authorize_url(&self, challenge: &str, extra: &[(&str, &str)]) -> String {
        let mut u = url::Url::parse(&format!("{}/oauth/authorize", self.public)).unwrap();
        u.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", "st-1")
            .append_pair("resource", &format!("{}/mcp", self.public));
        let mut pairs: Vec<(String, String)> = u.query_pairs().into_owned().collect();
        for (k, v) in extra {
            pairs.retain(|(pk, _)| pk != k);
            pairs.push((k.to_string(), v.to_string()));
        }
        u.query_pairs_mut().clear().extend_pairs(pairs);
        u.path().to_string() + "?" + u.query().unwrap()
    }

    /// The person, signed in, allows the client: the code the browser brings back.
    pub async fn code(&self, me: &mut Person, challenge: &str) -> String {
        let page = me.get(&self.authorize_url(challenge, &[])).await;
        assert_eq!(page.status, 200, "{}", page.body);
        guarded(&page);
        let csp = page.headers["content-security-policy"].to_str().unwrap().to_string();
        assert!(csp.contains(&url::Url::parse(&self.redirect).unwrap().origin().ascii_serialization()), "the answer may go to the client: {csp}");
        let mut form = hidden_fields(&page.body);
        form.push(("decision".into(), "allow".into()));
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let back = me.post("/oauth/authorize", &pairs).await;
        assert_eq!(back.status, 303, "{}", back.body);
        let q = query_of(&back.location());
        assert!(back.location().starts_with(&self.redirect));
        assert_eq!((q["state"].as_str(), q["iss"].as_str()), ("st-1", self.public));
        q["code"].clone()
    }

    pub async fn token(&self, form: &[(&str, &str)]) -> (u16, Value) {
        let r = reqwest::Client::new().post(format!("{}/oauth/token", self.public)).form(form).send().await.unwrap();
        assert_eq!(r.headers()["cache-control"], "no-store");
        (r.status().as_u16(), r.json().await.unwrap())
    }

    pub async fn exchange(&self, code: &str, verifier: &str) -> (u16, Value) {
        let resource = format!("{}/mcp", self.public);
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &self.redirect),
            ("client_id", &self.client_id),
            ("code_verifier", verifier),
            ("resource", &resource),
        ])
        .await
    }
}

pub(super) fn hidden_fields(body: &str) -> Vec<(String, String)> {
    body.split("<input type=\"hidden\" ")
        .skip(1)
        .map(|s| {
            let name = s.split("name=\"").nth(1).unwrap().split('"').next().unwrap();
            let value = s.split("value=\"").nth(1).unwrap().split('"').next().unwrap().replace("&amp;", "&").replace("&quot;", "\"");
            (name.to_string(), value)
        })
        .collect()
}

pub(super) async fn mcp_status(public: &str, token: Option<&str>, query: &str) -> (u16, String) {
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let mut r = reqwest::Client::new()
        .post(format!("{public}/mcp{query}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init);
    if let Some(t) = token {
        r = r.header("authorization", format!("Bearer {t}"));
    }
    let resp = r.send().await.unwrap();
    let challenge = resp.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (resp.status().as_u16(), challenge)
}

/// The client's metadata document, served by a stand-in on its own port; its URL.
async fn metadata_document(redirect: &str) -> String {
    use axum::{routing::get, Router};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/oauth/client.json", listener.local_addr().unwrap().port());
    let doc = json!({"client_id": url, "client_name": "Stand-in assistant", "redirect_uris": [redirect]}).to_string();
    let app = Router::new().route("/oauth/client.json", get(move || async move { ([("content-type", "application/json")], doc) }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A stand-in whose "metadata document" is an HTML page; its URL.
async fn not_json_document() -> String {
    use axum::{routing::get, Router};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/oauth/client.json", listener.local_addr().unwrap().port());
    let app = Router::new().route("/oauth/client.json", get(|| async { ([("content-type", "text/html")], "<h1>Moved</h1>") }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn an_assistant_is_let_in_by_the_person_with_oauth_and_pkce() {
    let twin = twin().await;
    let tenants = folder("oauth-tenants");
    let (public, log, _child) = serve_tenants(&twin, &folder("oauth-cfg"), &tenants, &[], &["--auth", "oauth"]).await;
    // A person onboards with an invitation (their page is the authorization page).
    let link = tenant(&twin, &tenants, &["invite", "--public-url", &public]).await.unwrap();
    let mut me = Person::new(&public);
    let path = link.strip_prefix(&public).unwrap().to_string();
    let join = me.get(&path).await;
    let welcome = me.post(&path, &[("csrf", &join.csrf())]).await;
    let key = welcome.inside("data-key");
    let id = tenants_in(&tenants)[0].clone();

    // 401, and where to learn how to get in.
    let (status, challenge) = mcp_status(&public, None, "").await;
    assert_eq!(status, 401);
    let metadata = format!("{public}/.well-known/oauth-protected-resource/mcp");
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata}\"")), "{challenge}");
    let rm: Value = reqwest::get(&metadata).await.unwrap().json().await.unwrap();
    assert_eq!(rm["resource"], format!("{public}/mcp"));
    assert_eq!(rm["authorization_servers"], json!([public]));
    let asm: Value = reqwest::get(format!("{public}/.well-known/oauth-authorization-server")).await.unwrap().json().await.unwrap();
    assert_eq!(asm["issuer"], public);
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(asm["client_id_metadata_document_supported"], true);

    // Two clients: one registered here, one named by its metadata document.
    let redirect = "http://127.0.0.1:45999/callback".to_string();
    let reg = reqwest::Client::new()
        .post(asm["registration_endpoint"].as_str().unwrap())
        .json(&json!({"redirect_uris": [redirect], "client_name": "Registered assistant", "token_endpoint_auth_method": "none"}))
        .send()
        .await
        .unwrap();
    assert_eq!(reg.status(), 201);
    let reg: Value = reg.json().await.unwrap();
    let bad = reqwest::Client::new().post(format!("{public}/oauth/register")).json(&json!({"redirect_uris": ["http://evil.example/cb"]})).send().await.unwrap();
    assert_eq!(bad.status(), 400, "a plain-http redirect off loopback is refused");
    let document = metadata_document(&redirect).await;
    let dcr = Flow { public: &public, client_id: reg["client_id"].as_str().unwrap().into(), redirect: redirect.clone() };
    let cimd = Flow { public: &public, client_id: document, redirect: redirect.clone() };

    for flow in [&dcr, &cimd] {
        let (verifier, challenge) = pkce("a");
        let code = flow.code(&mut me, &challenge).await;
        // Refused at the token endpoint: each costs the code (a code is tried once).
        let (s, e) = flow.exchange(&code, "not-the-verifier-0123456789abcdefghijklmnopqrstuvwxyz").await;
        assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "{e}");
        let (s, e) = flow.exchange(&code, &verifier).await;
        assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "a code is tried once: {e}");
        let code = flow.code(&mut me, &challenge).await;
        let resource = format!("{public}/mcp");
        let (s, e) = flow
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:45999/other"),
                ("client_id", &flow.client_id),
                ("code_verifier", &verifier),
                ("resource", &resource),
            ])
            .await;
        assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "another redirect URI: {e}");
        let code = flow.code(&mut me, &challenge).await;
        let (s, e) = flow
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &flow.redirect),
                ("client_id", &flow.client_id),
                ("code_verifier", &verifier),
                ("resource", "http://elsewhere.example/mcp"),
            ])
            .await;
        assert_eq!((s, e["error"].as_str()), (400, Some("invalid_target")), "another resource: {e}");

        // The whole way: code → token → MCP with it.
        let code = flow.code(&mut me, &challenge).await;
        let (s, t) = flow.exchange(&code, &verifier).await;
        assert_eq!(s, 200, "{t}");
        assert_eq!(t["token_type"], "Bearer");
        let access = t["access_token"].as_str().unwrap().to_string();
        let refresh = t["refresh_token"].as_str().unwrap().to_string();
        let session = client(&format!("{public}/mcp"), Some(&access)).await;
        let check = session.ok("vitals_check", json!({})).await;
        let oura = check["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "oura").unwrap().clone();
        assert!(oura["redirect"].as_str().unwrap().starts_with(&format!("{public}/callback/oura ")), "the one callback of the server: {oura}");
        assert!(!check.to_string().contains(&id), "no answer names the person's folder: {check}");
        assert_eq!(mcp_status(&public, None, &format!("?access_token={access}")).await.0, 400, "never from the query string");

        // Refresh rotates; the old pair is gone; the old refresh again kills the grant.
        let (s, t2) = flow.token(&[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &flow.client_id)]).await;
        assert_eq!(s, 200, "{t2}");
        let access2 = t2["access_token"].as_str().unwrap().to_string();
        assert_ne!(access2, access);
        assert_eq!(mcp_status(&public, Some(&access), "").await.0, 401);
        assert_eq!(mcp_status(&public, Some(&access2), "").await.0, 200);
        let (s, e) = flow.token(&[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &flow.client_id)]).await;
        assert_eq!((s, e["error"].as_str()), (400, Some("invalid_grant")), "{e}");
        assert_eq!(mcp_status(&public, Some(&access2), "").await.0, 401, "a reused refresh token revokes the grant");

        // Revoke (RFC 7009).
        let code = flow.code(&mut me, &challenge).await;
        let (_, t3) = flow.exchange(&code, &verifier).await;
        let access3 = t3["access_token"].as_str().unwrap();
        assert_eq!(mcp_status(&public, Some(access3), "").await.0, 200);
        let r = reqwest::Client::new().post(format!("{public}/oauth/revoke")).form(&[("token", t3["refresh_token"].as_str().unwrap())]).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(mcp_status(&public, Some(access3), "").await.0, 401);
    }

    // Two people, one resource: each token opens its own person's tenant and never the other's
    // (the URL names no tenant; the token does).
    let link = tenant(&twin, &tenants, &["invite", "--public-url", &public]).await.unwrap();
    let mut other = Person::new(&public);
    let path_b = link.strip_prefix(&public).unwrap().to_string();
    let join_b = other.get(&path_b).await;
    other.post(&path_b, &[("csrf", &join_b.csrf())]).await;
    // The first person has an Oura login of their own (saved as the server saves one, sealed).
    let login = vitals::accounts::Tokens { access: vitals::secret::Secret::new(TOKEN), login: Some("a".into()), ..Default::default() };
    super::http::tenant_store(&tenants, &id).save("oura", &login).unwrap();
    let (verifier, challenge) = pkce("two");
    let mut answered = vec![];
    for who in [&mut me, &mut other] {
        let code = dcr.code(who, &challenge).await;
        let (_, t) = dcr.exchange(&code, &verifier).await;
        let session = client(&format!("{public}/mcp"), Some(t["access_token"].as_str().unwrap())).await;
        let check = session.ok("vitals_check", json!({})).await;
        let oura = check["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "oura").unwrap().clone();
        answered.push(oura["answered_by"].as_str().unwrap().to_string());
    }
    assert_eq!(answered, vec!["api", "sample_data"], "each token opens its own tenant alone");

    // Refused before a code: a redirect URI not registered (a page, never a redirect), plain PKCE,
    // another resource (back to the client with the error).
    let (_, challenge) = pkce("b");
    let page = me.get(&dcr.authorize_url(&challenge, &[("redirect_uri", "http://127.0.0.1:45999/elsewhere")])).await;
    assert_eq!(page.status, 400);
    assert!(page.headers.get("location").is_none());
    let plain = me.get(&dcr.authorize_url(&challenge, &[("code_challenge_method", "plain")])).await;
    assert_eq!(query_of(&plain.location())["error"], "invalid_request");
    let other = me.get(&dcr.authorize_url(&challenge, &[("resource", "http://elsewhere.example/mcp")])).await;
    assert_eq!(query_of(&other.location())["error"], "invalid_target");
    let denied = {
        let page = me.get(&dcr.authorize_url(&challenge, &[])).await;
        let mut form = hidden_fields(&page.body);
        form.push(("decision".into(), "deny".into()));
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        me.post("/oauth/authorize", &pairs).await
    };
    assert_eq!(query_of(&denied.location())["error"], "access_denied");

    // A client whose metadata document could not be read is said so, not said to be unknown here:
    // nothing answers at its address, or what answers is not JSON.
    let gone = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}/oauth/client.json", l.local_addr().unwrap().port())
    };
    for (client_id, why) in [(gone, "its metadata document could not be read ("), (not_json_document().await, "its metadata document is not JSON")] {
        let flow = Flow { public: &public, client_id, redirect: redirect.clone() };
        let page = me.get(&flow.authorize_url(&challenge, &[])).await;
        assert_eq!(page.status, 400);
        assert!(page.body.contains("The client could not be checked: client_id") && page.body.contains(why), "{}", page.body);
        assert!(!page.body.contains("not known here"), "a client that may exist is not said to be unknown: {}", page.body);
    }
    let unregistered = Flow { public: &public, client_id: "dcr-never-registered".into(), redirect: redirect.clone() };
    let page = me.get(&unregistered.authorize_url(&challenge, &[])).await;
    assert!(page.body.contains("The client is not known here: client_id"), "{}", page.body);

    // A stranger (no session, no key) cannot let anyone in, and makes no tenant.
    let mut stranger = Person::new(&public);
    let page = stranger.get(&dcr.authorize_url(&challenge, &[])).await;
    assert!(page.body.contains("name=\"key\""), "a browser not signed in is asked for the key");
    let mut form = hidden_fields(&page.body);
    form.extend([("decision".to_string(), "allow".to_string()), ("key".to_string(), "vk-guess".to_string())]);
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(stranger.post("/oauth/authorize", &pairs).await.status, 401);
    assert_eq!(tenants_in(&tenants).len(), 2, "the two people, no stranger");

    // The key typed on the consent page works too (a new phone, no session yet).
    let mut phone = Person::new(&public);
    let page = phone.get(&dcr.authorize_url(&challenge, &[])).await;
    let mut form = hidden_fields(&page.body);
    form.extend([("decision".to_string(), "allow".to_string()), ("key".to_string(), key.clone())]);
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let back = phone.post("/oauth/authorize", &pairs).await;
    assert_eq!(back.status, 303, "{}", back.body);
    let (verifier, challenge) = pkce("b");
    let code = dcr.code(&mut me, &challenge).await;
    let (_, t) = dcr.exchange(&code, &verifier).await;
    let access = t["access_token"].as_str().unwrap().to_string();

    // Revoked from the person's page, then after the person deleted everything.
    let page = me.get("/me").await;
    assert!(page.body.contains("Registered assistant"), "{}", page.body);
    let revoked = me.post("/me/revoke-client", &[("csrf", &page.csrf()), ("client_id", &dcr.client_id)]).await;
    assert!(revoked.body.contains("Revoked"), "{}", revoked.body);
    assert_eq!(mcp_status(&public, Some(&access), "").await.0, 401);
    let code = cimd.code(&mut me, &challenge).await;
    let (_, t) = cimd.exchange(&code, &verifier).await;
    let access = t["access_token"].as_str().unwrap().to_string();
    assert_eq!(mcp_status(&public, Some(&access), "").await.0, 200);
    let ask = me.get("/me/delete").await;
    me.post("/me/delete", &[("csrf", &ask.csrf())]).await;
    assert_eq!(mcp_status(&public, Some(&access), "").await.0, 401, "a deleted person's tokens open nothing");

    // No token, code, verifier or key in the server's log.
    let said = std::fs::read_to_string(&log).unwrap();
    for secret in [access.as_str(), key.as_str(), verifier.as_str(), code.as_str(), id.as_str()] {
        assert!(!said.contains(secret), "the log carries a secret: {said}");
    }
    assert!(said.contains("a person let a client in"), "{said}");
}
