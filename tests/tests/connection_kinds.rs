//! The connection model, end to end through the MCP layer: five providers built in the test crate
//! (`vitals_twin::kinds`), one of each connection kind (OAuth with HTTP Basic, a user id and a
//! registration step; an API key; a session login with a one-time code; an import; none), served by
//! the real `vitals::mcp::Vitals` in this process, connected, checked, read and forgotten, with
//! no line of `accounts/`, `mcp/` or the settings app naming any of them. Every output is searched
//! for the secrets typed or issued.
use rmcp::model::*;
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, OnceLock};
use vitals::accounts::TokenStore;
use vitals_twin::kinds::{self, Answers, Lab};

/// The kinds API and one config folder for the whole binary: the environment is process-wide.
/// Each test uses its own providers, whose entries in the token store are their own.
fn lab() -> &'static Lab {
    static LAB: OnceLock<Lab> = OnceLock::new();
    LAB.get_or_init(|| Lab::start("kinds", &[("VITALS_KINDS_ENV_KEY", kinds::ENV_KEY), ("VITALS_BROWSER", "none")]))
}

/// A client with URL elicitation whose user opens every link and does what the page asks.
#[derive(Clone, Default)]
struct User {
    answers: Arc<Mutex<Answers>>,
    pages: Arc<Mutex<Vec<(u16, String)>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        ClientConfig::new(caps, Implementation::new("kinds-user", "0"))
    }

    async fn create_elicitation(&self, request: ElicitRequestParams, _: RequestContext<RoleClient>) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams { url, .. } = request else { panic!("vitals never asks for a secret through a form") };
        let (answers, pages) = (self.answers.lock().unwrap().clone(), self.pages.clone());
        tokio::spawn(async move {
            let seen = kinds::person(&url, answers).await;
            pages.lock().unwrap().extend(seen);
        });
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }
}

struct Server {
    client: RunningService<RoleClient, User>,
    user: User,
    /// Every tool result's text, to search for secrets.
    said: Mutex<String>,
}

/// This test binary's user, with the environment its suite set, read as the binary reads it.
fn home() -> vitals::accounts::Home {
    vitals::accounts::Home::local(Arc::new(vitals::config::Config::from_env()))
}

/// A server with these providers only: a `vitals_check` probes every provider it has, and a test
/// must not renew another test's credential.
async fn server(specs: &[&'static vitals::catalog::ProviderSpec]) -> Server {
    lab();
    let providers = specs.iter().map(|s| Arc::new(kinds::Kind::new(s)) as Arc<dyn vitals::providers::Provider>).collect();
    let config = Arc::new(vitals::config::Config::from_env());
    let engine = Arc::new(vitals::engine::Engine::new(providers, config.clone(), vitals::engine::Limits::from_config(&config)));
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = vitals::mcp::Vitals::new(engine).serve(theirs).await.expect("the server starts");
        let _ = running.waiting().await;
    });
    let user = User::default();
    let client = user.clone().serve(ours).await.expect("MCP handshake");
    Server { client, user, said: Mutex::new(String::new()) }
}

impl Server {
    async fn call(&self, tool: &str, args: Value) -> Result<Value, String> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().cloned().unwrap_or_default());
        let r = self.client.call_tool(params).await.expect("tools/call answered");
        let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n");
        self.said.lock().unwrap().push_str(&text);
        match r.is_error {
            Some(true) => Err(text),
            _ => Ok(r.structured_content.unwrap_or_else(|| serde_json::from_str(&text).unwrap_or(Value::String(text)))),
        }
    }
    async fn check(&self, provider: &str) -> Value {
        let c = self.call("vitals_check", json!({})).await.unwrap();
        c["providers"].as_array().unwrap().iter().find(|p| p["provider"] == provider).unwrap().clone()
    }
    async fn read(&self, provider: &str) -> Result<Value, String> {
        self.call("vitals_query", json!({"collection": format!("{provider}.daily"), "start": "2026-06-01", "end": "2026-06-03"})).await
    }
    /// The pages the user was shown, once there are `n` (the login can finish before the user's
    /// browser has read the last page).
    async fn pages(&self, n: usize) -> Vec<(u16, String)> {
        for _ in 0..100 {
            let p = self.user.pages.lock().unwrap().clone();
            if p.len() >= n {
                return p;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("the user saw fewer than {n} pages: {:?}", self.user.pages.lock().unwrap());
    }
    /// Nothing typed or issued is in any answer or page.
    fn assert_quiet(&self, issued: &[String]) {
        let mut all = self.said.lock().unwrap().clone();
        all.extend(self.user.pages.lock().unwrap().iter().map(|(_, p)| p.clone()));
        for s in
            [kinds::CLIENT_SECRET, kinds::GOOD_KEY, kinds::ENV_KEY, kinds::PASSWORD, kinds::CODE].iter().map(|s| s.to_string()).chain(issued.iter().cloned())
        {
            assert!(!all.contains(&s), "a secret ({} chars) reached an answer or a page", s.len());
        }
    }
}

/// Which kind of credential read each row (the API says it in every record).
fn read_with(a: &Value) -> Value {
    let cols = a["data"]["columns"].as_array().unwrap();
    let i = cols.iter().position(|c| c == "read_with").unwrap();
    a["data"]["rows"].as_array().unwrap().iter().map(|r| r[i].clone()).collect()
}

fn stored(provider: &str) -> Option<vitals::accounts::Tokens> {
    TokenStore::file(&lab().dir).load(provider).unwrap()
}

fn issued() -> Vec<String> {
    lab().api.book.lock().unwrap().tokens.keys().cloned().collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn oauth_with_basic_auth_a_user_id_and_a_step_after_the_exchange_retried_until_it_succeeds() {
    let s = server(&[&kinds::OAUTH]).await;
    let before = s.check("kinds_oauth").await;
    assert_eq!(
        (before["connection"].as_str(), before["credential"].as_str(), before["state"].as_str()),
        (Some("oauth"), Some("none"), Some("needs_credentials"))
    );

    // A query that needs the account connects it (the user signs in), then the registration step
    // fails: the consents are not accepted yet. The login is kept and the words say what to do.
    let e = s.read("kinds_oauth").await.unwrap_err();
    assert!(e.contains("registering vitals with the kinds account has not succeeded yet") && e.contains("mandatory consents"), "{e}");
    let t = stored("kinds_oauth").expect("the login is kept");
    assert_eq!(t.extra.get("x_user_id").map(String::as_str), Some("4242"), "the user id the token came with is kept");
    assert_eq!(t.setup_pending.as_deref(), Some("registering vitals with the kinds account"));
    assert_eq!(t.scopes, ["read", "profile"], "scopes joined and split with the provider's separator");
    {
        let b = lab().api.book.lock().unwrap();
        assert_eq!(b.token_auth, ["Basic"], "the client authenticated with HTTP Basic");
        assert!(!b.token_forms[0].contains_key("client_secret") && !b.token_forms[0].contains_key("code_verifier"), "{:?}", b.token_forms[0]);
    }

    // The person accepts the consents; the next read runs the step first, then reads with the user id.
    lab().api.book.lock().unwrap().consents_accepted = true;
    let a = s.read("kinds_oauth").await.unwrap();
    assert_eq!(a["synthetic"], false);
    assert!(
        a["notices"]["credential_refreshed"]
            .as_str()
            .unwrap()
            .contains("The step after the Kinds OAuth login (registering vitals with the kinds account) had not succeeded; it did now"),
        "{a}"
    );
    assert_eq!(read_with(&a), json!(["oauth", "oauth", "oauth"]), "{a}");
    assert_eq!(stored("kinds_oauth").unwrap().setup_pending, None);
    assert_eq!(lab().api.book.lock().unwrap().registrations, 1);
    let again = s.read("kinds_oauth").await.unwrap();
    assert!(again["notices"]["credential_refreshed"].is_null(), "nothing is owed any more: {again}");

    let c = s.check("kinds_oauth").await;
    assert_eq!((c["credential"].as_str(), c["state"].as_str(), c["api_answered"].as_bool()), (Some("oauth"), Some("connected"), Some(true)), "{c}");
    assert!(c["app_credentials"].as_str().unwrap().contains("VITALS_KINDS_OAUTH_CLIENT_ID"), "{c}");

    let f = vitals::accounts::forget::forget_in(&kinds::OAUTH, &home()).await.unwrap();
    assert!(f.message.contains("has no revoke endpoint: end the app's access in your kinds account's connected apps"), "{}", f.message);
    assert!(stored("kinds_oauth").is_none());
    s.assert_quiet(&issued());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_api_key_typed_into_our_page_is_checked_saved_with_its_expiry_and_exchanged_again_when_due() {
    let s = server(&[&kinds::KEY]).await;
    *s.user.answers.lock().unwrap() = Answers { keys: vec!["KINDS-KEY-WRONG-0000000000".into(), kinds::GOOD_KEY.into()], days: Some(90) };
    let r = s.call("vitals_connect", json!({"provider": "kinds_key"})).await.unwrap();
    assert_eq!(r["state"], "connected", "{r}");
    let pages = s.pages(2).await;
    assert_eq!(pages[0].0, 400, "the wrong key is refused on the page");
    assert!(pages[0].1.contains("refused the key") && pages[0].1.contains("Create a key at https://kinds.invalid/keys"), "{}", pages[0].1);
    assert!(pages[1].1.contains("Kinds Key is connected"), "{}", pages[1].1);
    let t = stored("kinds_key").unwrap();
    assert_eq!(t.key.as_ref().map(|k| k.expose()), Some(kinds::GOOD_KEY));
    let days = (t.key_expires_at.unwrap() - jiff::Timestamp::now().as_second()) / 86_400;
    assert!((89..=90).contains(&days), "{days}");
    assert_eq!(t.source.as_deref(), Some("vitals' login page"));

    let a = s.read("kinds_key").await.unwrap();
    assert_eq!(read_with(&a), json!(["api_key", "api_key", "api_key"]));
    let good = || lab().api.book.lock().unwrap().exchanges_of.get(kinds::GOOD_KEY).copied().unwrap_or(0);
    assert_eq!(good(), 1, "the good key was exchanged once when saved; reading did not exchange again");
    let c = s.check("kinds_key").await;
    assert_eq!((c["connection"].as_str(), c["credential"].as_str()), (Some("api_key"), Some("api_key")), "{c}");
    assert!(c["key_expires_at"].is_string() && c["expires_at"].is_string(), "{c}");
    assert!(c["credential_source"].as_str().unwrap().contains("API key and its token (from vitals' login page)"), "{c}");

    // The token is due: the key is exchanged again before the first request, and said.
    let store = TokenStore::file(&lab().dir);
    store.save("kinds_key", &vitals::accounts::Tokens { expires_at: Some(jiff::Timestamp::now().as_second()), ..t }).unwrap();
    let a = s.read("kinds_key").await.unwrap();
    assert!(a["notices"]["credential_refreshed"].as_str().unwrap().contains("about to expire"), "{a}");
    assert_eq!(good(), 2);

    let f = vitals::accounts::forget::forget_in(&kinds::KEY, &home()).await.unwrap();
    assert!(f.message.contains("at https://kinds.invalid/keys (delete the key)") && f.message.contains("local key and token were deleted"), "{}", f.message);
    s.assert_quiet(&issued());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_login_asks_for_its_one_time_code_and_never_keeps_the_password() {
    let s = server(&[&kinds::SESSION]).await;
    assert_eq!(s.check("kinds_session").await["state"], "needs_credentials");
    // Reading connects: the page asks for email and password, then for the code.
    let a = s.read("kinds_session").await.unwrap();
    assert_eq!(read_with(&a), json!(["session", "session", "session"]), "{a}");
    assert!(a["notices"]["account_connected"].is_string(), "{a}");
    let pages = s.pages(2).await;
    assert!(pages[0].1.contains("name=\"code\"") && pages[0].1.contains("a code was sent to p***@example.org"), "{}", pages[0].1);
    let file = std::fs::read_to_string(TokenStore::file(&lab().dir).path()).unwrap();
    assert!(!file.contains(kinds::PASSWORD) && !file.contains(kinds::EMAIL) && !file.contains(kinds::CODE), "only the tokens are saved");
    let c = s.check("kinds_session").await;
    assert_eq!((c["connection"].as_str(), c["credential"].as_str()), (Some("session"), Some("session")), "{c}");

    let token = stored("kinds_session").unwrap().access.expose().to_string();
    let f = vitals::accounts::forget::forget_in(&kinds::SESSION, &home()).await.unwrap();
    assert!(f.message.contains("access revoked at Kinds Session (HTTP 204)"), "{}", f.message);
    assert!(lab().api.book.lock().unwrap().revoked.contains(&token));
    s.assert_quiet(&issued());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_import_has_no_page_and_says_how_then_reads_with_the_imported_tokens() {
    let s = server(&[&kinds::IMPORT]).await;
    let e = s.call("vitals_connect", json!({"provider": "kinds_import"})).await.unwrap_err();
    assert!(e.contains("vitals-mcp auth kinds_import --import") && e.contains("~/.kinds-tool"), "{e}");
    let e = vitals::accounts::grant::import(&kinds::IMPORT, Some(lab().dir.join("nowhere")), &home()).await.unwrap_err();
    assert!(matches!(e, vitals::accounts::grant::ConnectError::Failed(_)), "a folder that cannot be read is neither refused nor unavailable: {e:?}");
    let e = e.to_string();
    assert!(e.starts_with("Nothing was imported from") && e.contains("oauth2_token.json"), "{e}");

    let folder = lab().dir.join("kinds-tool");
    std::fs::create_dir_all(&folder).unwrap();
    let access = lab().api.book.lock().unwrap().tokens.len().to_string();
    let token = {
        let mut b = lab().api.book.lock().unwrap();
        let t = format!("kinds-imported-{access}-abcdefghijklmnop");
        b.tokens.insert(t.clone(), "import");
        t
    };
    std::fs::write(folder.join("oauth2_token.json"), json!({"access_token": token, "refresh_token": "r-imported", "expires_in": 3600}).to_string()).unwrap();
    let c = vitals::accounts::grant::import(&kinds::IMPORT, Some(folder.clone()), &home()).await.unwrap();
    assert!(c.summary().starts_with("Connected Kinds Import"), "{}", c.summary());
    let a = s.read("kinds_import").await.unwrap();
    assert_eq!(read_with(&a), json!(["import", "import", "import"]));
    let chk = s.check("kinds_import").await;
    assert_eq!(chk["connection"], "import");
    assert!(chk["credential_source"].as_str().unwrap().contains(&format!("imported from {}", folder.display())), "{chk}");
    vitals::accounts::forget::forget_in(&kinds::IMPORT, &home()).await.unwrap();
    s.assert_quiet(&issued());
}

#[tokio::test(flavor = "multi_thread")]
async fn none_serves_sample_data_and_has_nothing_to_connect() {
    let s = server(&kinds::ALL).await;
    let e = s.call("vitals_connect", json!({"provider": "kinds_none"})).await.unwrap_err();
    assert!(e.contains("is not a provider that can be connected") && e.contains("kinds_oauth, kinds_key, kinds_session, kinds_import"), "{e}");
    let a = s.read("kinds_none").await.unwrap();
    assert_eq!(a["synthetic"], true);
    assert_eq!(read_with(&a), json!(["sample", "sample", "sample"]));
    let c = server(&[&kinds::NONE]).await.check("kinds_none").await;
    assert_eq!((c["connection"].as_str(), c["credential"].as_str(), c["state"].as_str()), (Some("none"), Some("sandbox"), Some("sandbox")), "{c}");
    let sources = s.call("vitals_sources", json!({})).await.unwrap();
    let none = sources["providers"].as_array().unwrap().iter().find(|p| p["provider"] == "kinds_none").unwrap().clone();
    assert!(none["connect"].as_str().unwrap().contains("no account to connect"), "{none}");
    // How each connects is in its full entry (the listing leaves it out: it does not pick a collection).
    let mut kinds: Vec<(String, String)> = vec![];
    for p in sources["providers"].as_array().unwrap() {
        let name = p["provider"].as_str().unwrap();
        let entry = s.call("vitals_sources", json!({"provider": name})).await.unwrap();
        kinds.push((name.into(), entry["providers"][0]["connection"].as_str().unwrap().into()));
    }
    assert_eq!(
        kinds,
        [("kinds_oauth", "oauth"), ("kinds_key", "api_key"), ("kinds_session", "session"), ("kinds_import", "import"), ("kinds_none", "none")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_in_the_environment_is_exchanged_once_in_memory_and_never_saved() {
    let s = server(&[&kinds::ENV_KEYED]).await;
    let exchanges = || lab().api.book.lock().unwrap().exchanges_of.get(kinds::ENV_KEY).copied().unwrap_or(0);
    // Two reads at once: one exchange between them.
    let (a, b) = tokio::join!(s.read("kinds_env_key"), s.read("kinds_env_key"));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((read_with(&a), read_with(&b)), (json!(["api_key", "api_key", "api_key"]), json!(["api_key", "api_key", "api_key"])));
    assert_eq!(exchanges(), 1, "one exchange at a time per key, and the second read used its token");
    let said: Vec<&Value> = [&a, &b].into_iter().filter_map(|x| x["notices"].get("credential_refreshed")).collect();
    assert!(said.iter().any(|n| n.as_str().unwrap().contains("key was exchanged for an access token")), "{a} {b}");
    let c = s.check("kinds_env_key").await;
    assert_eq!((c["credential"].as_str(), c["state"].as_str()), (Some("api_key"), Some("connected")), "{c}");
    assert!(c["credential_source"].as_str().unwrap().contains("environment VITALS_KINDS_ENV_KEY (the key's token is kept in memory only)"), "{c}");
    assert!(stored("kinds_env_key").is_none(), "a key from the environment is never written anywhere");
    assert_eq!(exchanges(), 1, "the check used the token in memory");
    let f = vitals::accounts::forget::forget_in(&kinds::ENV_KEYED, &home()).await.unwrap();
    assert!(f.message.contains("comes from the environment variable VITALS_KINDS_ENV_KEY") && f.message.contains("remove it there"), "{}", f.message);
    s.assert_quiet(&issued());
}
