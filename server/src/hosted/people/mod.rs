//! The pages a person uses on a hosted server with `--tenants`, without its operator: an invitation
//! (`/join/<token>`, or `/join` when sign-up is open) makes their tenant and shows their sign-in key
//! once; their page (`/me`) shows their connector URL and accounts, connects an OAuth provider by
//! redirect, disconnects one, and deletes everything. `/signin` brings them back with their key.
//!
//! Invariants: every page is a form or a link (no script; the CSP forbids one), every form carries
//! the session's CSRF token, pages refuse framing and are never cached, cookies are HttpOnly and
//! SameSite=Lax (Secure behind https), failed sign-ins are limited, and no key, token or code is
//! logged or written anywhere but the tenant's token store.
pub mod invite;
pub mod pages;
pub mod person;
pub mod session;

use super::tenants::TenantId;
use super::Server;
use crate::accounts::Home;
use crate::catalog::ProviderSpec;
use crate::connection::{Connection, SessionForm};
use crate::secret::Secret;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Request};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use invite::Invitations;
use std::collections::HashMap;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Arc;

/// The largest form taken.
const MAX_FORM: usize = 16 * 1024;
/// Where a login saved from these pages was typed (shown by `vitals_check`).
const SOURCE: &str = "vitals' hosted page";

/// What a request to a person's page needs to know of the browser.
struct Visit {
    session: Option<String>,
    tenant: Option<TenantId>,
}

/// The people's pages as routes of axum's router (with `--tenants`): the invitation, sign-in and
/// the person's page. `/join` without a token only when sign-up is open.
pub(super) fn routes(open_signup: bool) -> Router<Arc<Server>> {
    let r = Router::new()
        .route("/join/{token}", get(|c: Ctx, Path(t): Path<String>| async move { c.join_page(Some(&t)) }).post(join_with))
        .route("/signin", get(|c: Ctx| async move { c.sign_in_page(None, StatusCode::OK) }).post(|c: Ctx, f: PostForm| async move { c.sign_in(&f.0) }))
        .route("/signout", post(|c: Ctx, f: PostForm| async move { c.sign_out(&f.0) }))
        .route("/me", get(|c: Ctx| async move { c.me(None) }))
        .route("/me/delete", get(confirm_delete).post(|c: Ctx, f: PostForm| async move { c.delete_everything(&f.0).await }))
        .route("/me/connect/{provider}", post(|c: Ctx, Path(p): Path<String>, f: PostForm| async move { c.connect(&p, &f.0) }))
        .route("/me/disconnect/{provider}", post(|c: Ctx, Path(p): Path<String>, f: PostForm| async move { c.disconnect(&p, &f.0).await }))
        .route("/me/revoke-client", post(|c: Ctx, f: PostForm| async move { c.revoke_client(&f.0) }))
        .route("/me/new-url", post(|c: Ctx, f: PostForm| async move { c.new_url(&f.0) }))
        .route("/me/key/{provider}", get(|c: Ctx, Path(p): Path<String>| async move { c.key_page(&p, None) }).post(key_with))
        .route("/me/login/{provider}", get(|c: Ctx, Path(p): Path<String>| async move { c.login_page(&p, None, None) }).post(login_with));
    match open_signup {
        true => r.route("/join", get(|c: Ctx| async move { c.join_page(None) }).post(|c: Ctx, f: PostForm| async move { c.join(None, &f.0) })),
        false => r,
    }
}

async fn join_with(c: Ctx, Path(t): Path<String>, f: PostForm) -> Response {
    c.join(Some(&t), &f.0)
}

async fn confirm_delete(c: Ctx) -> Response {
    c.signed_in(|_, csrf| c.html(StatusCode::OK, pages::confirm_delete(csrf), None))
}

async fn key_with(c: Ctx, Path(p): Path<String>, f: PostForm) -> Response {
    c.key(&p, &f.0).await
}

async fn login_with(c: Ctx, Path(p): Path<String>, f: PostForm) -> Response {
    c.login(&p, &f.0).await
}

/// A posted form's fields; none when it is not a form or is over [`MAX_FORM`] (its CSRF check fails).
pub(super) struct PostForm(pub HashMap<String, String>);

impl<S: Send + Sync> axum::extract::FromRequest<S> for PostForm {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, _: &S) -> Result<PostForm, Self::Rejection> {
        Ok(PostForm(read_form(req).await))
    }
}

/// A request to a person's page: the server, its tenants, the browser's session and its address.
impl axum::extract::FromRequestParts<Arc<Server>> for Ctx {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, server: &Arc<Server>) -> Result<Ctx, Response> {
        let tenants = server.opts.tenants.clone().ok_or_else(super::not_found)?;
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).unwrap_or(IpAddr::from([127, 0, 0, 1]));
        let visit = visit_of(server, &parts.headers);
        Ok(Ctx { server: server.clone(), tenants, visit, peer })
    }
}

/// The session the browser's cookie names, if it is alive.
fn visit_of(server: &Server, headers: &axum::http::HeaderMap) -> Visit {
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .flatten()
        .find(|c| c.name() == session::COOKIE)
        .map(|c| c.value().to_string());
    match cookie.and_then(|id| server.people.get(&id).map(|t| (id, t))) {
        Some((id, tenant)) => Visit { session: Some(id), tenant },
        None => Visit { session: None, tenant: None },
    }
}

/// A posted form's fields; none when it is not a form or is over [`MAX_FORM`] (its CSRF check fails).
pub(super) async fn read_form(req: Request) -> HashMap<String, String> {
    use axum::extract::FromRequest;
    let req = req.map(|b| Body::new(http_body_util::Limited::new(b, MAX_FORM)));
    axum::Form::<HashMap<String, String>>::from_request(req, &()).await.map(|f| f.0).unwrap_or_default()
}

struct Ctx {
    server: Arc<Server>,
    tenants: super::tenants::Tenants,
    visit: Visit,
    peer: IpAddr,
}

/// Where the Set-Cookie of a response comes from: a session to keep, or one to clear.
enum Cookie {
    Set(String),
    Clear,
}

impl Ctx {
    fn sessions(&self) -> &session::Sessions {
        &self.server.people
    }

    /// This browser's session, made if it has none: its id, and whether it was just made.
    fn session(&self) -> (String, bool) {
        match &self.visit.session {
            Some(s) => (s.clone(), false),
            None => (self.sessions().start(None), true),
        }
    }

    /// Whether a posted form carries this session's CSRF token.
    fn csrf_ok(&self, form: &HashMap<String, String>) -> bool {
        match (&self.visit.session, form.get("csrf")) {
            (Some(s), Some(t)) => self.sessions().csrf_ok(s, t),
            _ => false,
        }
    }

    fn refused_form(&self) -> Response {
        let text = "This form was not sent from this server's own page, or the page is too old (the server may have restarted). Go back, reload the page and send it again.";
        self.html(StatusCode::FORBIDDEN, pages::message("Not sent", text), None)
    }

    /// The connector URL every person's assistant is given under OAuth (it names no one: the
    /// token the person allows says whose data it reads).
    fn oauth_connector(&self) -> Option<String> {
        self.server.opts.auth.oauth().then(|| self.server.resource())
    }

    /// A new connector URL for tenant `id` (with `--auth url`): its secret kept as a hash, the URL
    /// shown this once; the one it had stops working.
    fn new_connector(&self, id: &TenantId) -> Result<Option<String>, super::tenants::FolderError> {
        if !self.server.opts.auth.urls() {
            return Ok(None);
        }
        let secret = super::hashed::new_url(&self.tenants, id)?;
        Ok(Some(format!("{}{}", self.server.base_url, super::tenants::mcp_path(&secret))))
    }

    fn join_page(&self, token: Option<&str>) -> Response {
        let invitations = Invitations::of(&self.tenants);
        let expires = match token.map(|t| invitations.check(t)) {
            Some(Err(e)) => return self.html(StatusCode::NOT_FOUND, pages::message("Invitation", &e.to_string()), None),
            Some(Ok(at)) => at.strftime("%Y-%m-%d %H:%M UTC").to_string(),
            None => "never (sign-up is open)".into(),
        };
        let (sid, made) = self.session();
        let action = token.map_or("/join".to_string(), |t| format!("/join/{t}"));
        self.html(StatusCode::OK, pages::join(&action, &self.sessions().csrf(&sid), &expires), made.then_some(Cookie::Set(sid)))
    }

    fn join(&self, token: Option<&str>, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        if let Some(t) = token {
            if let Err(e) = Invitations::of(&self.tenants).claim(t) {
                return self.html(StatusCode::NOT_FOUND, pages::message("Invitation", &e.to_string()), None);
            }
        }
        let made = self.tenants.add().and_then(|id| person::new_key(&self.tenants, &id).map(|k| (id, k)));
        let made = made.and_then(|(id, k)| self.new_connector(&id).map(|u| (id, k, u)));
        let (id, key, url) = match made {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("a tenant could not be made: {e}");
                let text = "Your vitals could not be made on this server (its folder could not be written). The operator can see why in the server's log; the invitation is used, so ask for a new one.";
                return self.html(StatusCode::INTERNAL_SERVER_ERROR, pages::message("Not made", text), None);
            }
        };
        tracing::info!("a person made a tenant from {}", if token.is_some() { "an invitation" } else { "open sign-up" });
        let sid = self.sessions().sign_in(self.visit.session.as_deref(), id);
        let connectors = pages::Connectors { oauth: self.oauth_connector(), url };
        self.html(StatusCode::OK, pages::welcome(&connectors, key.expose()), Some(Cookie::Set(sid)))
    }

    fn sign_in_page(&self, error: Option<&str>, status: StatusCode) -> Response {
        let (sid, made) = self.session();
        self.html(status, pages::sign_in(&self.sessions().csrf(&sid), error), made.then_some(Cookie::Set(sid)))
    }

    fn sign_in(&self, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        if let Some(wait) = self.sessions().sign_in_wait(self.peer) {
            let text = format!("Too many wrong keys from here. Try again in {} minutes.", wait.as_secs().div_ceil(60));
            return self.sign_in_page(Some(&text), StatusCode::TOO_MANY_REQUESTS);
        }
        let key = form.get("key").map(|k| k.trim()).unwrap_or_default();
        match person::tenant_of(&self.tenants, key) {
            Some(id) => {
                let sid = self.sessions().sign_in(self.visit.session.as_deref(), id);
                self.redirect("/me", Some(Cookie::Set(sid)))
            }
            None => {
                self.sessions().failed(self.peer);
                self.sign_in_page(Some("That key opens nothing here. Check it (it starts with vk-) and try again."), StatusCode::UNAUTHORIZED)
            }
        }
    }

    fn sign_out(&self, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        if let Some(s) = &self.visit.session {
            self.sessions().end(s);
        }
        self.redirect("/signin", Some(Cookie::Clear))
    }

    /// `page(tenant, csrf)` for a signed-in browser; the sign-in page for any other.
    fn signed_in(&self, page: impl FnOnce(&TenantId, &str) -> Response) -> Response {
        match (&self.visit.session, &self.visit.tenant) {
            (Some(s), Some(t)) if self.tenants.home(t).is_some() => page(t, &self.sessions().csrf(s)),
            _ => self.redirect("/signin", None),
        }
    }

    fn rows(&self, id: &TenantId) -> Vec<pages::Row> {
        let store = self.tenants.home(id).and_then(|h| h.store().ok());
        crate::providers::specs()
            .map(|s| pages::Row {
                name: s.name,
                display: s.display,
                connected: store.as_ref().is_some_and(|st| st.load(s.name).ok().flatten().is_some()),
                how: match &s.connection {
                    Connection::OAuth(_) => pages::How::Redirect,
                    Connection::ApiKey(_) => pages::How::Key,
                    Connection::Session(x) if x.login.is_some() => pages::How::Login,
                    _ => pages::How::Elsewhere,
                },
            })
            .collect()
    }

    fn me(&self, flash: Option<&str>) -> Response {
        self.me_with(flash, None)
    }

    /// Their page; `new_url` is a connector URL just made, shown this once.
    fn me_with(&self, flash: Option<&str>, new_url: Option<String>) -> Response {
        // The Connect buttons end at each provider's login page.
        let logins: Vec<String> = crate::providers::specs()
            .filter_map(|s| s.connection.oauth())
            .filter_map(|o| origin_of(&crate::accounts::oauth::env_or(&self.server.opts.config, o.authorize_env, o.authorize_url)))
            .collect();
        self.signed_in(|t, csrf| {
            let assistants = self.server.auth.as_ref().map(|a| a.grants.assistants(t)).unwrap_or_default();
            let connectors = pages::Connectors { oauth: self.oauth_connector(), url: new_url };
            let urls = self.server.opts.auth.urls();
            let page = pages::me(&connectors, urls, &self.rows(t), &assistants, csrf, flash);
            self.html_posting_to(StatusCode::OK, page, None, &logins)
        })
    }

    /// A new connector URL (with `--auth url`): the old one stops working at once.
    fn new_url(&self, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let Some(t) = self.visit.tenant.clone().filter(|t| self.tenants.home(t).is_some()) else { return self.redirect("/signin", None) };
        match self.new_connector(&t) {
            Ok(Some(url)) => self.me_with(Some("A new connector URL is made; the one you had opens nothing from now on."), Some(url)),
            Ok(None) => self.me(Some("This server lets assistants in with OAuth only: there is no connector URL to make.")),
            Err(e) => {
                tracing::warn!("a connector URL could not be made: {e}");
                self.me(Some("A new connector URL could not be made (the server's folder could not be written); the operator can see why in its log."))
            }
        }
    }

    fn connect(&self, provider: &str, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let Some(t) = self.visit.tenant.clone() else { return self.redirect("/signin", None) };
        let Some(site) = self.server.tenant(&t) else { return self.redirect("/signin", None) };
        let Some(spec) = crate::providers::spec(provider) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        match site.links.start(spec) {
            Ok(link) => self.redirect(&link.url, None),
            Err(e) => self.me(Some(&e.to_string())),
        }
    }

    async fn disconnect(&self, provider: &str, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let Some((t, home)) = self.visit.tenant.clone().and_then(|t| self.tenants.home(&t).map(|h| (t, h))) else { return self.redirect("/signin", None) };
        let Some(spec) = crate::providers::spec(provider) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let said = match crate::accounts::forget::forget_in(spec, &home).await {
            Ok(f) => f.message,
            Err(e) => format!("{}: not disconnected ({e})", spec.display),
        };
        self.server.drop_tenant(&t);
        self.me(Some(&said))
    }

    /// A signed-in person's tenant, its home, and the provider `name` connected the way `how` says.
    fn provider(&self, name: &str, how: pages::How) -> Option<(TenantId, Home, &'static ProviderSpec)> {
        let t = self.visit.tenant.clone()?;
        let home = self.tenants.home(&t)?;
        let row = self.rows(&t).into_iter().find(|r| r.name == name && r.how == how)?;
        let spec = crate::providers::spec(row.name)?;
        Some((t, home, spec))
    }

    fn key_page(&self, name: &str, error: Option<&str>) -> Response {
        let Some((_, _, spec)) = self.provider(name, pages::How::Key) else { return self.redirect("/me", None) };
        let help = spec.connection.api_key().map(|k| k.create_help).unwrap_or_default();
        let csrf = self.visit.session.as_deref().map(|s| self.sessions().csrf(s)).unwrap_or_default();
        let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        self.html(status, pages::key_form(spec.display, spec.name, help, &csrf, error), None)
    }

    async fn key(&self, name: &str, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let Some((t, home, spec)) = self.provider(name, pages::How::Key) else { return self.redirect("/me", None) };
        let days = match form.get("days").map(|d| d.trim()).unwrap_or("") {
            "" => None,
            d => match d.parse::<u32>() {
                Ok(n) => Some(n),
                Err(_) => return self.key_page(name, Some(&format!("`days` must be a whole number of days; got {d:?}"))),
            },
        };
        let key = Secret::new(form.get("key").map(|k| k.trim()).unwrap_or_default());
        match crate::accounts::grant::save_key_in(spec, key, days, SOURCE, &home).await {
            Ok(_) => {
                self.server.drop_tenant(&t);
                self.me(Some(&format!("{} is connected.", spec.display)))
            }
            Err(e) => self.key_page(name, Some(&e.to_string())),
        }
    }

    fn login_page(&self, name: &str, code: Option<&str>, error: Option<&str>) -> Response {
        let Some((_, _, spec)) = self.provider(name, pages::How::Login) else { return self.redirect("/me", None) };
        let caution = spec.connection.session().map(|s| s.caution).unwrap_or_default();
        let csrf = self.visit.session.as_deref().map(|s| self.sessions().csrf(s)).unwrap_or_default();
        let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
        self.html(status, pages::login_form(spec.display, spec.name, caution, &csrf, code, error), None)
    }

    /// Email and password (dropped when this request ends), or the one-time code of the login this
    /// session waits on: Garmin's session is what the code completes, not the password.
    async fn login(&self, name: &str, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let Some((t, home, spec)) = self.provider(name, pages::How::Login) else { return self.redirect("/me", None) };
        // Wrong passwords and codes count with wrong sign-in keys (a provider that did not answer does
        // not): past the limit, this waits too.
        if let Some(wait) = self.sessions().sign_in_wait(self.peer) {
            return self.login_page(name, None, Some(&format!("Too many refused attempts from here. Try again in {} minutes.", wait.as_secs().div_ceil(60))));
        }
        let sid = self.visit.session.clone().unwrap_or_default();
        let waiting = self.sessions().waiting(&sid).filter(|(p, _)| p == spec.name);
        let code = form.get("code").map(|c| c.trim()).filter(|c| !c.is_empty());
        let submitted = match (code, &waiting) {
            (Some(code), Some((_, email))) => {
                SessionForm { email: email.clone(), password: Secret::default(), code: Some(Secret::new(code)), waiting_as: Some(t.as_str().to_string()) }
            }
            (Some(_), None) => return self.login_page(name, None, Some("No login is waiting for a code here (it may have taken too long). Sign in again.")),
            (None, _) => SessionForm {
                email: form.get("email").map(|e| e.trim().to_string()).unwrap_or_default(),
                password: Secret::new(form.get("password").cloned().unwrap_or_default()),
                code: None,
                waiting_as: Some(t.as_str().to_string()),
            },
        };
        let email = submitted.email.clone();
        self.sessions().wait_for_code(&sid, None);
        match crate::accounts::grant::submit_in(spec, submitted, SOURCE, &home).await {
            Ok(crate::accounts::grant::Submitted::Connected(_)) => {
                self.server.drop_tenant(&t);
                self.me(Some(&format!("{} is connected.", spec.display)))
            }
            Ok(crate::accounts::grant::Submitted::NeedsCode(words)) => {
                self.sessions().wait_for_code(&sid, Some((spec.name.to_string(), email)));
                self.login_page(name, Some(&words), None)
            }
            Err(e) => {
                if e.is_refused_answer() {
                    self.sessions().failed(self.peer);
                }
                self.login_page(name, None, Some(&e.to_string()))
            }
        }
    }

    fn revoke_client(&self, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let (Some(t), Some(auth), Some(client)) = (self.visit.tenant.clone(), self.server.auth.as_ref(), form.get("client_id")) else {
            return self.redirect("/signin", None);
        };
        let said = match auth.grants.revoke_client(&t, Some(client)) {
            Ok(()) if self.server.opts.auth.urls() => {
                "Revoked: that assistant's tokens open nothing from now on. If you also gave it your connector URL, make a new one below: this server still opens your data to that URL.".to_string()
            }
            Ok(()) => "Revoked: every token that assistant holds opens nothing from now on.".to_string(),
            Err(e) => format!("Not revoked ({e})."),
        };
        self.me(Some(&said))
    }

    async fn delete_everything(&self, form: &HashMap<String, String>) -> Response {
        if !self.csrf_ok(form) {
            return self.refused_form();
        }
        let Some((t, home)) = self.visit.tenant.clone().and_then(|t| self.tenants.home(&t).map(|h| (t, h))) else { return self.redirect("/signin", None) };
        let mut said = vec![];
        for spec in crate::providers::specs() {
            let connected = home.store().ok().and_then(|s| s.load(spec.name).ok().flatten()).is_some();
            if connected {
                said.push(match crate::accounts::forget::forget_in(spec, &home).await {
                    Ok(f) => f.message,
                    Err(e) => format!("{}: could not be revoked ({e}); its login was deleted with the rest", spec.display),
                });
            }
        }
        self.sessions().end_all(&t);
        if let Some(auth) = &self.server.auth {
            if let Err(e) = auth.grants.revoke_client(&t, None) {
                said.push(format!("The assistants you let in could not be revoked ({e}); their tokens open nothing once your folder is gone."));
            }
        }
        self.server.drop_tenant(&t);
        if let Err(e) = person::remove_tenant(&self.tenants, t.as_str()) {
            tracing::warn!("a tenant's folder could not be removed: {e}");
            let text = "Your accounts were disconnected and your sign-in key deleted, but the rest of your folder could not be removed. The operator can see why in the server's log.";
            return self.html(StatusCode::INTERNAL_SERVER_ERROR, pages::message("Not all deleted", text), Some(Cookie::Clear));
        }
        tracing::info!("a person deleted their tenant");
        self.html(StatusCode::OK, pages::deleted(&said), Some(Cookie::Clear))
    }
}

/// The headers every page carries: no caching, no framing, no script, no referrer. Forms post to
/// this server, or to `also` (a form whose answer redirects elsewhere: browsers check the CSP's
/// `form-action` against where the redirect goes).
pub(super) fn secure_headers_for(resp: &mut Response, also: &[String]) {
    let h = resp.headers_mut();
    let csp = format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'{}; frame-ancestors 'none'; base-uri 'none'",
        also.iter().map(|o| format!(" {o}")).collect::<String>()
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

pub(super) fn secure_headers(resp: &mut Response) {
    secure_headers_for(resp, &[]);
}

/// The origin of a URL (`https://host[:port]`), for a CSP source.
pub(super) fn origin_of(u: &str) -> Option<String> {
    let u = url::Url::parse(u).ok()?;
    Some(u.origin().ascii_serialization()).filter(|o| o != "null")
}

fn set_cookie(resp: &mut Response, cookie: Option<Cookie>, https: bool) {
    let secure = if https { "; Secure" } else { "" };
    let value = match cookie {
        Some(Cookie::Set(id)) => format!("{}={id}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}", session::COOKIE, session::MAX_AGE.as_secs()),
        Some(Cookie::Clear) => format!("{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}", session::COOKIE),
        None => return,
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
}

/// The live session a request's cookie names, and its tenant (for the authorization page).
pub(super) fn session_of(server: &Server, req: &Request) -> Option<(String, Option<TenantId>)> {
    let v = visit_of(server, req.headers());
    v.session.map(|s| (s, v.tenant))
}

/// That session, or a new one: its id, tenant, and whether it was just made (its cookie to set).
pub(super) fn session_or_new(server: &Server, s: Option<(String, Option<TenantId>)>) -> (String, Option<TenantId>, bool) {
    match s {
        Some((id, t)) => (id, t, false),
        None => (server.people.start(None), None, true),
    }
}

/// Set a new session's cookie on a page of another module (the authorization page).
pub(super) fn set_session(resp: &mut Response, made: Option<String>, server: &Server) {
    set_cookie(resp, made.map(Cookie::Set), super::https(server));
}

impl Ctx {
    fn html(&self, status: StatusCode, body: String, cookie: Option<Cookie>) -> Response {
        self.html_posting_to(status, body, cookie, &[])
    }

    /// A page whose forms may end at `also` (a provider's login page, after our redirect).
    fn html_posting_to(&self, status: StatusCode, body: String, cookie: Option<Cookie>, also: &[String]) -> Response {
        let mut r = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], Body::from(body)).into_response();
        secure_headers_for(&mut r, also);
        set_cookie(&mut r, cookie, super::https(&self.server));
        r
    }

    fn redirect(&self, to: &str, cookie: Option<Cookie>) -> Response {
        let mut r = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
        secure_headers(&mut r);
        set_cookie(&mut r, cookie, super::https(&self.server));
        r
    }
}
