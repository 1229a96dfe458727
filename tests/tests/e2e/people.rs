//! A person on a hosted server's pages, without its operator (issue 40): an invitation makes their
//! tenant and shows their sign-in key once; their page connects an OAuth provider through the
//! server's own callback, disconnects it, signs out and in again, and deletes everything. Every
//! form is refused without its session's CSRF token, failed sign-ins are limited, every page
//! refuses framing and scripts, and no key, invitation or token reaches the server's log.
use super::common::*;
use super::http::{client, folder, serve_tenants, tenant};
use reqwest::header::HeaderMap;

/// A browser without JavaScript: follows nothing by itself, keeps its one cookie.
pub struct Person {
    http: reqwest::Client,
    base: String,
    pub cookie: Option<String>,
}

pub struct Page {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Page {
    /// The CSRF token of the page's first form.
    pub fn csrf(&self) -> String {
        let at = self.body.find("name=\"csrf\" value=\"").unwrap_or_else(|| panic!("a form: {}", self.body)) + 19;
        self.body[at..].split('"').next().unwrap().to_string()
    }
    pub fn location(&self) -> String {
        self.headers["location"].to_str().unwrap().to_string()
    }
    /// The text inside the first element carrying `attr`.
    pub fn inside(&self, attr: &str) -> String {
        let at = self.body.find(attr).unwrap_or_else(|| panic!("{attr} in {}", self.body));
        let from = at + self.body[at..].find('>').unwrap() + 1;
        self.body[from..from + self.body[from..].find('<').unwrap()].to_string()
    }
}

impl Person {
    pub fn new(base: &str) -> Person {
        Person { http: no_redirects(), base: base.into(), cookie: None }
    }

    async fn send(&mut self, r: reqwest::RequestBuilder) -> Page {
        let r = match &self.cookie {
            Some(c) => r.header("cookie", format!("vitals_session={c}")),
            None => r,
        };
        let resp = r.send().await.unwrap();
        let headers = resp.headers().clone();
        if let Some(set) = headers.get("set-cookie").and_then(|v| v.to_str().ok()) {
            let value = set.split(';').next().unwrap().trim_start_matches("vitals_session=").to_string();
            self.cookie = (!value.is_empty()).then_some(value);
        }
        Page { status: resp.status().as_u16(), headers, body: resp.text().await.unwrap() }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let r = self.http.get(format!("{}{path}", self.base));
        self.send(r).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let r = self.http.post(format!("{}{path}", self.base)).form(form);
        self.send(r).await
    }
}

/// Every page's headers: no framing, no script, never cached, no referrer.
pub fn guarded(p: &Page) {
    let csp = p.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'") && !csp.contains("script-src"), "{csp}");
    assert_eq!(p.headers["x-frame-options"], "DENY");
    assert_eq!(p.headers["cache-control"], "no-store");
    assert_eq!(p.headers["referrer-policy"], "no-referrer");
    assert!(!p.body.contains("<script"), "no script in a page");
}

#[tokio::test]
async fn a_person_joins_connects_and_leaves_without_the_operator() {
    let fx = login::Fixture::new("people").await;
    let tenants = folder("people-tenants");
    let env: Vec<(String, String)> = fx.env().into_iter().filter(|(k, _)| k != "VITALS_OURA_REDIRECT_URI" && k != "VITALS_CONFIG_DIR").collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, log, _child) = serve_tenants(&fx.twin, &fx.dir, &tenants, &env, &[]).await;
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(said.contains(&format!("people sign in at {public}/signin")), "{said}");

    // Sign-up is closed: only an invitation lets someone in.
    let mut stranger = Person::new(&public);
    assert_eq!(stranger.get("/join").await.status, 404);
    let link = tenant(&fx.twin, &tenants, &["invite", "--days", "1", "--public-url", &public]).await.unwrap();
    let path = link.strip_prefix(&public).unwrap().to_string();
    let token = path.trim_start_matches("/join/").to_string();
    assert!(stranger.get("/join/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").await.body.contains("never existed"));

    // The invitation: what vitals reads and keeps, then one button.
    let mut me = Person::new(&public);
    let join = me.get(&path).await;
    assert_eq!(join.status, 200, "{}", join.body);
    guarded(&join);
    assert!(join.body.contains("keeps no health data"), "the privacy text comes first: {}", join.body);
    let set = join.headers["set-cookie"].to_str().unwrap();
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Lax") && !set.contains("Secure"), "Secure only behind https: {set}");
    // A form without this session's token is refused, whoever sends it.
    assert_eq!(me.post(&path, &[]).await.status, 403);
    let other = stranger.get(&path).await.csrf();
    assert_eq!(me.post(&path, &[("csrf", &other)]).await.status, 403, "another session's token");
    assert!(tenants_in(&tenants).is_empty(), "nothing made by a refused form");
    let welcome = me.post(&path, &[("csrf", &join.csrf())]).await;
    assert_eq!(welcome.status, 200, "{}", welcome.body);
    guarded(&welcome);
    let key = welcome.inside("data-key");
    let connector = welcome.inside("data-connector=\"url\"");
    let ids = tenants_in(&tenants);
    assert_eq!(ids.len(), 1);
    let id = ids[0].clone();
    assert!(connector.starts_with(&format!("{public}/u/")) && connector.ends_with("/mcp") && !connector.contains(&id), "{connector}");
    assert_eq!(super::http::tenant_of_url(&tenants, &connector), id, "their URL opens their tenant; its secret is not the folder's name");
    assert!(key.starts_with("vk-"));
    // Used once: nobody else gets in with it.
    let again = stranger.get(&path).await;
    assert_eq!(again.status, 404);
    assert!(again.body.contains("used already"), "{}", again.body);

    // The connector URL is theirs: their assistant reads through it.
    let s = client(&connector, None).await;
    s.ok("vitals_check", serde_json::json!({})).await;

    // Their page: the URL was shown once; connect Oura through the server's own callback, then disconnect it.
    let page = me.get("/me").await;
    guarded(&page);
    assert!(!page.body.contains(&connector) && page.body.contains("Make a new connector URL"), "{}", page.body);
    assert!(page.body.contains("data-provider=\"oura\" data-connected=\"false\""), "{}", page.body);
    fx.twin.state.oauth.lock().unwrap().apps[0].redirect_uri = format!("{public}/callback/oura");
    assert_eq!(me.post("/me/connect/oura", &[("csrf", "x")]).await.status, 403);
    let go = me.post("/me/connect/oura", &[("csrf", &page.csrf())]).await;
    assert_eq!(go.status, 303, "{}", go.body);
    let (status, landed) = login::open_in_browser(&go.location()).await;
    assert_eq!(status, 200, "{landed}");
    assert!(landed.contains("is connected") && landed.contains("href=\"/me\""), "{landed}");
    assert!(super::http::tenant_store(&tenants, &id).load("oura").unwrap().is_some(), "saved in the tenant's folder");
    let page = me.get("/me").await;
    assert!(page.body.contains("data-provider=\"oura\" data-connected=\"true\""), "{}", page.body);
    let gone = me.post("/me/disconnect/oura", &[("csrf", &page.csrf())]).await;
    assert_eq!(gone.status, 200);
    assert!(gone.body.contains("data-provider=\"oura\" data-connected=\"false\""), "{}", gone.body);
    assert!(super::http::tenant_store(&tenants, &id).load("oura").unwrap().is_none());

    // A new connector URL: shown once, the old one opens nothing from then on.
    let made = me.post("/me/new-url", &[("csrf", &gone.csrf())]).await;
    let fresh = made.inside("data-connector=\"url\"");
    assert!(fresh != connector && made.body.contains("opens nothing from now on"), "{}", made.body);
    assert_eq!(no_redirects().post(&connector).send().await.unwrap().status(), 404, "the old URL stops at once");
    client(&fresh, None).await.ok("vitals_check", serde_json::json!({})).await;
    let connector = fresh;

    // Out and back in with the key; the old session opens nothing.
    let old = me.cookie.clone();
    assert_eq!(me.post("/signout", &[("csrf", &gone.csrf())]).await.location(), "/signin");
    me.cookie = old;
    assert_eq!(me.get("/me").await.location(), "/signin", "a signed-out session is gone");
    let form = me.get("/signin").await;
    guarded(&form);
    let before = me.cookie.clone();
    let back = me.post("/signin", &[("csrf", &form.csrf()), ("key", &key)]).await;
    assert_eq!((back.status, back.location()), (303, "/me".to_string()));
    assert_ne!(me.cookie, before, "signing in makes a new session");

    // Delete: asked once, then gone, and said.
    let ask = me.get("/me/delete").await;
    assert!(ask.body.contains("cannot be undone"));
    let done = me.post("/me/delete", &[("csrf", &ask.csrf())]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(done.body.contains("gone from this server"));
    assert!(tenants_in(&tenants).is_empty(), "the folder is gone");
    assert_eq!(no_redirects().post(&connector).send().await.unwrap().status(), 404, "the connector URL stops at once");
    assert_eq!(me.get("/me").await.location(), "/signin");

    // The key opens nothing now; wrong keys are limited per address.
    let mut guesser = Person::new(&public);
    let mut last = 0;
    for _ in 0..session_limit() + 1 {
        let f = guesser.get("/signin").await;
        last = guesser.post("/signin", &[("csrf", &f.csrf()), ("key", &key)]).await.status;
        if last == 429 {
            break;
        }
        assert_eq!(last, 401);
    }
    assert_eq!(last, 429, "refused for a while after {} wrong keys", session_limit());

    // An expired invitation says when it expired, and lets no one in.
    let link = tenant(&fx.twin, &tenants, &["invite", "--public-url", &public]).await.unwrap();
    let token2 = link.rsplit('/').next().unwrap().to_string();
    let past = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60);
    std::fs::write(tenants.join(".invitations").join(vitals::hosted::people::invite::digest(&token2)), past.as_second().to_string()).unwrap();
    let expired = stranger.get(&format!("/join/{token2}")).await;
    assert!(expired.status == 404 && expired.body.contains("expired on"), "{}", expired.body);

    // Nothing secret reached the log.
    let said = std::fs::read_to_string(&log).unwrap();
    for secret in [key.as_str(), token.as_str(), token2.as_str(), id.as_str()] {
        assert!(!said.contains(secret), "the log carries a secret: {said}");
    }
    assert!(said.contains("a person made a tenant") && said.contains("a person deleted their tenant"), "{said}");
}

#[tokio::test]
async fn open_sign_up_is_a_choice_of_the_operator() {
    let twin = twin().await;
    let tenants = folder("people-open");
    let h = super::http::hosted(&twin, &folder("people-open-cfg"), &["--tenants", tenants.to_str().unwrap(), "--open-signup"], &[]).await;
    let mut p = Person::new(&h.base);
    let join = p.get("/join").await;
    assert_eq!(join.status, 200);
    assert!(join.body.contains("sign-up is open"));
    let welcome = p.post("/join", &[("csrf", &join.csrf())]).await;
    assert_eq!(welcome.status, 200);
    assert_eq!(tenants_in(&tenants).len(), 1);
    let e = super::http::hosted_err(&twin, &folder("people-open-bad"), &["--open-signup"]).await;
    assert!(e.contains("--open-signup") && e.contains("--tenants"), "{e}");
}

fn session_limit() -> usize {
    vitals::hosted::people::session::FAILS_PER_ADDRESS
}

pub fn tenants_in(dir: &std::path::Path) -> Vec<String> {
    vitals::hosted::tenants::Tenants::at(dir).list().unwrap().iter().map(|t| t.as_str().to_string()).collect()
}

/// Garmin's Personal API key pasted into the person's page, and a Garmin Connect login with its
/// one-time code, against the twins: saved in the tenant's folder; the password goes to Garmin in
/// the one request and is never in the server's memory past it (the code completes Garmin's own
/// session), nor in the log, a page or a file; a wrong key or password is said on the page.
#[tokio::test]
async fn garmin_is_connected_from_the_page_with_a_key_and_with_a_login_and_its_code() {
    use vitals_twin::garmin_connect::{GarminConnect, CODE, EMAIL, PASSWORD};
    let twin = twin().await;
    twin.garmin_connect(|g| g.mfa = Some("email"));
    let tenants = folder("people-garmin");
    let cfg = folder("people-garmin-cfg");
    let mut env: Vec<(String, String)> = GarminConnect::env(&twin.base_url()).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    env.push(("VITALS_GARMIN_BASE_URL".into(), twin.mounted("garmin")));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, log, _child) = serve_tenants(&twin, &cfg, &tenants, &env, &["--open-signup"]).await;
    let mut me = Person::new(&public);
    let join = me.get("/join").await;
    let connector = me.post("/join", &[("csrf", &join.csrf())]).await.inside("data-connector=\"url\"");
    let id = tenants_in(&tenants)[0].clone();
    let page = me.get("/me").await;
    assert!(page.body.contains("href=\"/me/key/garmin\"") && page.body.contains("href=\"/me/login/garmin-connect\""), "{}", page.body);

    // From the chat, a key or a password is not asked for: the answer points at the page.
    let s = client(&connector, None).await;
    let said = text(&s.call_raw("vitals_connect", serde_json::json!({"provider": "garmin"})).await);
    assert!(said.contains(&format!("{public}/me")) && said.contains("never into the chat"), "{said}");

    // The key: a wrong one is said and saves nothing; the right one connects.
    let form = me.get("/me/key/garmin").await;
    guarded(&form);
    assert!(form.body.contains("name=\"key\""));
    let wrong = me.post("/me/key/garmin", &[("csrf", &form.csrf()), ("key", "not-a-key-at-all"), ("days", "")]).await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(wrong.body.contains("refused the key") && wrong.body.contains("nothing was saved"), "{}", wrong.body);
    let ok = me.post("/me/key/garmin", &[("csrf", &form.csrf()), ("key", vitals_twin::garmin::KEY), ("days", "90")]).await;
    assert!(ok.body.contains("Garmin is connected") && ok.body.contains("data-provider=\"garmin\" data-connected=\"true\""), "{}", ok.body);
    let saved = super::http::tenant_store(&tenants, &id).load("garmin").unwrap().expect("saved in the tenant's folder");
    assert_eq!(saved.source.as_deref(), Some("vitals' hosted page"));

    // Garmin Connect: the consent text first, then the password, then the code Garmin sent.
    let form = me.get("/me/login/garmin-connect").await;
    guarded(&form);
    assert!(form.body.contains("never stored, logged or kept"), "{}", form.body);
    let refused = me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("email", EMAIL), ("password", "not-the-password")]).await;
    assert!(refused.body.contains("did not accept that email and password"), "{}", refused.body);
    let asked = me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("email", EMAIL), ("password", PASSWORD)]).await;
    assert!(asked.body.contains("one-time code") && asked.body.contains("name=\"code\"") && !asked.body.contains("name=\"password\""), "{}", asked.body);
    // Another person cannot finish this login with the code: it waits for this one alone.
    let mut other = Person::new(&public);
    let j = other.get("/join").await;
    other.post("/join", &[("csrf", &j.csrf())]).await;
    let f = other.get("/me/login/garmin-connect").await;
    let stolen = other.post("/me/login/garmin-connect", &[("csrf", &f.csrf()), ("code", CODE)]).await;
    assert!(stolen.body.contains("No login is waiting for a code here"), "{}", stolen.body);
    let done = me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("code", CODE)]).await;
    assert!(done.body.contains("is connected") && done.body.contains("data-provider=\"garmin-connect\" data-connected=\"true\""), "{}", done.body);
    let session = super::http::tenant_store(&tenants, &id).load("garmin-connect").unwrap().expect("saved");

    // A login Garmin's token services could not finish says so, and does not count as a refused guess.
    twin.garmin_connect(|g| (g.di_down, g.token_503_next, g.mfa) = (true, 1000, None));
    for _ in 0..session_limit() {
        let failed = me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("email", EMAIL), ("password", PASSWORD)]).await;
        assert!(failed.body.contains("did not work through any of its ways in"), "{}", failed.body);
    }
    twin.garmin_connect(|g| (g.di_down, g.token_503_next, g.mfa) = (false, 0, Some("email")));
    let wrong = me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("email", EMAIL), ("password", "wrong-again")]).await;
    assert!(wrong.body.contains("did not accept that email and password") && !wrong.body.contains("Too many"), "{}", wrong.body);

    // Refused passwords count against the address, as wrong keys do: past the limit the page waits.
    for _ in 1..session_limit() {
        me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("email", EMAIL), ("password", "wrong-again")]).await;
    }
    let held = me.post("/me/login/garmin-connect", &[("csrf", &form.csrf()), ("email", EMAIL), ("password", PASSWORD)]).await;
    assert!(held.body.contains("Too many refused attempts"), "{}", held.body);

    // The password and the code are nowhere: not in the log, not in any file of the tenants folder;
    // the key and the session Garmin issued are in no file either (sealed under the operator's key).
    let log = std::fs::read_to_string(&log).unwrap();
    let issued = [saved.key.as_ref().unwrap().expose(), session.access.expose()];
    for secret in [PASSWORD, CODE, vitals_twin::garmin::KEY].into_iter().chain(issued) {
        assert!(!log.contains(secret), "the log carries {secret}");
        for f in every_file(&tenants) {
            let body = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
            assert!(!body.contains(secret), "{} carries a secret", f.display());
        }
    }
    twin.garmin_connect(|g| g.mfa = None);
}

/// Every file under `dir`.
pub fn every_file(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(every_file(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Google Health from the person's page (issue 52): Google's login with PKCE and offline access,
/// back through the server's own callback, saved in the tenant's folder with its refresh token,
/// and read by their assistant from their account, not from the sample person.
#[tokio::test]
async fn google_health_is_connected_from_the_page_and_read() {
    let twin = twin().await;
    let tenants = folder("people-google");
    let cfg = folder("people-google-cfg");
    let env = google_health_env(&twin);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, log, _child) = serve_tenants(&twin, &cfg, &tenants, &env, &["--open-signup"]).await;
    twin.google_health(|g| g.cfg.redirect = format!("{public}/callback/google-health"));
    let mut me = Person::new(&public);
    let join = me.get("/join").await;
    let connector = me.post("/join", &[("csrf", &join.csrf())]).await.inside("data-connector=\"url\"");
    let id = tenants_in(&tenants)[0].clone();
    let page = me.get("/me").await;
    assert!(page.body.contains("data-provider=\"google-health\" data-connected=\"false\""), "{}", page.body);
    let go = me.post("/me/connect/google-health", &[("csrf", &page.csrf())]).await;
    assert_eq!(go.status, 303, "{}", go.body);
    let to = go.location();
    assert!(to.contains("code_challenge_method=S256") && to.contains("access_type=offline"), "{to}");
    let (status, landed) = login::open_in_browser(&to).await;
    assert_eq!(status, 200, "{landed}");
    assert!(landed.contains("is connected"), "{landed}");
    let saved = super::http::tenant_store(&tenants, &id).load("google-health").unwrap().expect("saved in the tenant's folder");
    assert!(saved.refresh.is_some(), "offline access was asked, so Google issued a refresh token");
    assert_eq!(twin.google_health(|g| g.token_requests.clone()), [("authorization_code".to_string(), 200)]);
    assert!(me.get("/me").await.body.contains("data-provider=\"google-health\" data-connected=\"true\""));

    // Their assistant reads their account through their connector URL.
    let s = client(&connector, None).await;
    let day = ds(ago(1));
    let a = s.ok("vitals_query", serde_json::json!({"collection": "google_health.steps", "day": day, "format": "records"})).await;
    assert_eq!(a["synthetic"], false, "their account, not the sample person: {a}");
    assert!(a["data"].as_array().is_some_and(|d| d.len() == 1 && d[0]["steps"].as_f64().is_some_and(|n| n > 0.0)), "{a}");
    let said = std::fs::read_to_string(&log).unwrap();
    for secret in twin.google_health(|g| g.secrets()).iter().map(String::as_str).chain([vitals_twin::google_health::CLIENT_SECRET]) {
        assert!(!said.contains(secret), "the log carries a secret");
    }
}
