//! MCP authorization (`serve --http --tenants DIR --auth oauth`): this server is both the protected
//! resource (`<public>/mcp`) and its OAuth 2.1 authorization server, so a client such as Claude's
//! custom connectors can be let in by the person, on their own page, without a secret URL.
//!
//! - RFC 9728 resource metadata at `/.well-known/oauth-protected-resource[/mcp]`, named by the
//!   `WWW-Authenticate` challenge of every 401; RFC 8414 server metadata at
//!   `/.well-known/oauth-authorization-server`.
//! - Clients: dynamic registration (RFC 7591, `/oauth/register`) or a Client ID Metadata Document.
//! - `/oauth/authorize`: authorization code with PKCE S256 only, redirect URIs matched exactly, the
//!   RFC 8707 `resource` required and equal to this server's; the person consents on the same page
//!   they sign in on (their sign-in key), and a stranger cannot make a tenant there.
//! - `/oauth/token`: the code once, for its client, redirect URI, resource and verifier; refresh
//!   tokens rotate and a reused one revokes its grant. `/oauth/revoke` (RFC 7009).
//! - An access token opens one tenant at this resource only, for an hour; never from a query string.
pub mod clients;
pub mod grants;

use super::people::PostForm;
use super::people::{pages, person};
use super::tenants::TenantId;
use super::Server;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Arc;

/// The scope a token carries: reading, the only thing this server does.
pub const SCOPE: &str = "vitals:read";

/// The OAuth state of a server that lets clients in with tokens.
pub struct Auth {
    pub clients: clients::Clients,
    pub grants: grants::Grants,
}

impl Auth {
    pub fn in_tenants(t: &super::tenants::Tenants, loopback: bool) -> Auth {
        let dir = t.dir.join(".oauth");
        Auth { clients: clients::Clients::in_dir(dir.clone(), loopback), grants: grants::Grants::in_dir(dir) }
    }
}

/// The protected resource: this server's MCP endpoint.
fn resource(server: &Server) -> String {
    server.resource()
}

fn metadata_url(server: &Server) -> String {
    format!("{}/.well-known/oauth-protected-resource/mcp", server.base_url)
}

/// 401 with the challenge that names the resource metadata (and why, when a token was sent).
pub(super) fn challenge(server: &Server, error: Option<&str>) -> Response {
    let mut v = format!("Bearer resource_metadata=\"{}\", scope=\"{SCOPE}\"", metadata_url(server));
    if let Some(e) = error {
        v.push_str(&format!(", error=\"invalid_token\", error_description=\"{e}\""));
    }
    let mut r = (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "application/json")], json!({"error": "invalid_token"}).to_string()).into_response();
    if let Ok(h) = HeaderValue::from_str(&v) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, h);
    }
    r
}

/// The tenant a request's bearer token opens at `/mcp`, or the answer that refuses it.
pub(super) fn tenant_of_request(server: &Server, auth: &Auth, req: &Request) -> Result<TenantId, Box<Response>> {
    let query = req.uri().query().unwrap_or("");
    if url::form_urlencoded::parse(query.as_bytes()).any(|(k, _)| k == "access_token") {
        let body = json!({"error": "invalid_request", "error_description": "an access token is sent in the Authorization header, never in the URL"});
        return Err(Box::new((StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()));
    }
    let Some(value) = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return Err(Box::new(challenge(server, None)));
    };
    let Some(token) = value.strip_prefix("Bearer ").map(str::trim) else { return Err(Box::new(challenge(server, Some("send Authorization: Bearer <token>")))) };
    match auth.grants.tenant_of(token, &resource(server)) {
        Some(t) if server.opts.tenants.as_ref().is_some_and(|d| d.home(&t).is_some()) => Ok(t),
        _ => Err(Box::new(challenge(server, Some("the token is unknown, expired, revoked or for another resource")))),
    }
}

/// The authorization routes (with `--auth oauth`), as routes of axum's router.
pub(super) fn routes() -> Router<Arc<Server>> {
    let resource_metadata = get(|State(s): State<Arc<Server>>| async move {
        json_ok(json!({
            "resource": resource(&s), "authorization_servers": [s.base_url], "bearer_methods_supported": ["header"],
            "scopes_supported": [SCOPE], "resource_name": "vitals",
        }))
    });
    Router::new()
        .route("/.well-known/oauth-protected-resource", resource_metadata.clone())
        .route("/.well-known/oauth-protected-resource/mcp", resource_metadata)
        .route("/.well-known/oauth-authorization-server", get(|State(s): State<Arc<Server>>| async move { json_ok(server_metadata(&s)) }))
        .route(
            "/oauth/register",
            post(|State(s): State<Arc<Server>>, ConnectInfo(peer): ConnectInfo<SocketAddr>, req: Request| async move {
                register(auth_of(&s), req, peer.ip()).await
            }),
        )
        .route("/oauth/authorize", get(authorize_get).post(authorize_form))
        .route("/oauth/token", post(|State(s): State<Arc<Server>>, f: PostForm| async move { token(&s, auth_of(&s), f.0).await }))
        .route("/oauth/revoke", post(|State(s): State<Arc<Server>>, f: PostForm| async move { revoke(auth_of(&s), &f.0) }))
}

/// The authorization server of a server whose routes include these (they are mounted with it only).
fn auth_of(server: &Server) -> &Auth {
    server.auth.as_ref().expect("the authorization routes are served with --auth oauth only")
}

async fn authorize_get(State(server): State<Arc<Server>>, req: Request) -> Response {
    let q: HashMap<String, String> = url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect();
    let session = super::people::session_of(&server, &req);
    drop(req);
    authorize(&server, auth_of(&server), session, q).await
}

async fn authorize_form(State(server): State<Arc<Server>>, ConnectInfo(peer): ConnectInfo<SocketAddr>, req: Request) -> Response {
    let cookie = super::people::session_of(&server, &req);
    let form = super::people::read_form(req).await;
    authorize_post(&server, auth_of(&server), cookie, form, peer.ip()).await
}

/// RFC 7009: the grant a token belongs to is revoked; the answer is the same whatever it was.
fn revoke(auth: &Auth, form: &HashMap<String, String>) -> Response {
    if let Some(t) = form.get("token") {
        let _ = auth.grants.revoke_token(t);
    }
    json_ok(json!({}))
}

fn server_metadata(server: &Server) -> Value {
    let b = &server.base_url;
    json!({
        "issuer": b, "authorization_endpoint": format!("{b}/oauth/authorize"), "token_endpoint": format!("{b}/oauth/token"),
        "registration_endpoint": format!("{b}/oauth/register"), "revocation_endpoint": format!("{b}/oauth/revoke"),
        "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"], "scopes_supported": [SCOPE],
        "client_id_metadata_document_supported": true, "authorization_response_iss_parameter_supported": true,
    })
}

fn json_ok(v: Value) -> Response {
    json_status(StatusCode::OK, v)
}

fn json_status(status: StatusCode, v: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], v.to_string()).into_response()
}

fn oauth_error(error: &str, description: &str) -> Response {
    json_status(StatusCode::BAD_REQUEST, json!({"error": error, "error_description": description}))
}

async fn register(auth: &Auth, req: Request, from: IpAddr) -> Response {
    let body = match axum::body::to_bytes(req.into_body(), 16 * 1024).await.ok().and_then(|b| serde_json::from_slice::<Value>(&b).ok()) {
        Some(v) => v,
        None => return oauth_error("invalid_client_metadata", "send the client's metadata as a JSON object"),
    };
    match auth.clients.register(&body, from) {
        Ok(v) => json_status(StatusCode::CREATED, v),
        Err(e) => {
            let (code, status) = e.code();
            json_status(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), json!({"error": code, "error_description": e.to_string()}))
        }
    }
}

/// An authorization request, checked: what the consent page shows and the code is bound to.
struct Ask {
    client: clients::Client,
    redirect_uri: String,
    challenge: String,
    state: Option<String>,
    resource: String,
}

/// Check an authorization request. Before the redirect URI is known good the error is a page of
/// ours (never a redirect to an unchecked address); after, it goes back to the client.
async fn check(server: &Server, auth: &Auth, q: &HashMap<String, String>) -> Result<Ask, Box<Response>> {
    let page = |text: String| Err(Box::new(html(StatusCode::BAD_REQUEST, pages::message("Not a valid request", &text))));
    let Some(client_id) = q.get("client_id") else { return page("The client sent no client_id.".into()) };
    let client = match auth.clients.resolve(client_id).await {
        Ok(c) => c,
        Err(e) if e.unread() => return page(format!("The client could not be checked: {e}.")),
        Err(e) => return page(format!("The client is not known here: {e}.")),
    };
    let Some(redirect_uri) = q.get("redirect_uri").filter(|r| client.redirect_uris.contains(r)).cloned() else {
        return page("The client's redirect_uri is not one it registered (they must match exactly).".into());
    };
    let back = |error: &str, description: &str| {
        let mut u = url::Url::parse(&redirect_uri).expect("a registered redirect URI is a URL");
        u.query_pairs_mut().append_pair("error", error).append_pair("error_description", description).append_pair("iss", &server.base_url);
        if let Some(s) = q.get("state") {
            u.query_pairs_mut().append_pair("state", s);
        }
        Err(Box::new((StatusCode::SEE_OTHER, [(header::LOCATION, u.to_string())]).into_response()))
    };
    if q.get("response_type").map(String::as_str) != Some("code") {
        return back("unsupported_response_type", "only response_type=code");
    }
    let Some(challenge) = q.get("code_challenge").filter(|c| (43..=128).contains(&c.len())).cloned() else {
        return back("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256");
    };
    if q.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return back("invalid_request", "code_challenge_method must be S256");
    }
    let ours = resource(server);
    if q.get("resource") != Some(&ours) {
        return back("invalid_target", &format!("resource must be {ours}"));
    }
    Ok(Ask { client, redirect_uri, challenge, state: q.get("state").cloned(), resource: ours })
}

/// The consent page: who asks, for what, and Allow / Deny (with the sign-in key if not signed in).
async fn authorize(server: &Server, auth: &Auth, session: Option<(String, Option<TenantId>)>, q: HashMap<String, String>) -> Response {
    let ask = match check(server, auth, &q).await {
        Ok(a) => a,
        Err(r) => return *r,
    };
    let (sid, tenant, made) = super::people::session_or_new(server, session);
    let fields: Vec<(String, String)> = q.into_iter().filter(|(k, _)| PASSED.contains(&k.as_str())).collect();
    let host = url::Url::parse(&ask.redirect_uri).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
    let body = pages::consent(&ask.client.client_name, &host, &fields, &server.people.csrf(&sid), tenant.is_none(), None);
    let mut r = html_to(StatusCode::OK, body, &ask.redirect_uri);
    super::people::set_session(&mut r, made.then_some(sid), server);
    r
}

/// The request's parameters the consent form carries back.
const PASSED: &[&str] = &["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "resource", "scope"];

async fn authorize_post(server: &Server, auth: &Auth, sid: Option<(String, Option<TenantId>)>, form: HashMap<String, String>, peer: IpAddr) -> Response {
    let Some((sid, tenant)) = sid.filter(|(s, _)| form.get("csrf").is_some_and(|t| server.people.csrf_ok(s, t))) else {
        return html(
            StatusCode::FORBIDDEN,
            pages::message("Not sent", "This form was not sent from this server's own page, or the page is too old. Start again from your assistant."),
        );
    };
    let ask = match check(server, auth, &form).await {
        Ok(a) => a,
        Err(r) => return *r,
    };
    let mut back = url::Url::parse(&ask.redirect_uri).expect("a registered redirect URI is a URL");
    if form.get("decision").map(String::as_str) != Some("allow") {
        back.query_pairs_mut().append_pair("error", "access_denied").append_pair("iss", &server.base_url);
        if let Some(s) = &ask.state {
            back.query_pairs_mut().append_pair("state", s);
        }
        return (StatusCode::SEE_OTHER, [(header::LOCATION, back.to_string())]).into_response();
    }
    let tenants = server.opts.tenants.as_ref().expect("oauth runs with tenants");
    let tenant = match tenant {
        Some(t) if tenants.home(&t).is_some() => t,
        _ => {
            // Not signed in: the key typed on this page, counted as any sign-in is.
            let again = |text: &str| {
                let fields: Vec<(String, String)> = form.iter().filter(|(k, _)| PASSED.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
                let host = back.host_str().unwrap_or_default().to_string();
                html_to(
                    StatusCode::UNAUTHORIZED,
                    pages::consent(&ask.client.client_name, &host, &fields, &server.people.csrf(&sid), true, Some(text)),
                    &ask.redirect_uri,
                )
            };
            if let Some(wait) = server.people.sign_in_wait(peer) {
                return again(&format!("Too many wrong keys from here. Try again in {} minutes.", wait.as_secs().div_ceil(60)));
            }
            match form.get("key").and_then(|k| person::tenant_of(tenants, k.trim())) {
                Some(t) => t,
                None => {
                    server.people.failed(peer);
                    return again("That key opens nothing here. Check it (it starts with vk-); without one, ask the operator for an invitation.");
                }
            }
        }
    };
    let code = auth.grants.code(tenant, (&ask.client.client_id, &ask.client.client_name), &ask.redirect_uri, &ask.challenge, &ask.resource);
    auth.clients.used(&ask.client.client_id);
    tracing::info!("a person let a client in");
    back.query_pairs_mut().append_pair("code", code.expose()).append_pair("iss", &server.base_url);
    if let Some(s) = &ask.state {
        back.query_pairs_mut().append_pair("state", s);
    }
    (StatusCode::SEE_OTHER, [(header::LOCATION, back.to_string())]).into_response()
}

async fn token(server: &Server, auth: &Auth, form: HashMap<String, String>) -> Response {
    let get = |k: &str| form.get(k).map(String::as_str).unwrap_or("");
    let issued = match get("grant_type") {
        "authorization_code" => {
            if get("resource") != resource(server) {
                return oauth_error("invalid_target", &format!("resource must be {}", resource(server)));
            }
            auth.grants.exchange(get("code"), get("client_id"), get("redirect_uri"), get("code_verifier"), get("resource"))
        }
        "refresh_token" => auth.grants.refresh(get("refresh_token"), get("client_id")),
        "" => return oauth_error("invalid_request", "send grant_type"),
        other => return oauth_error("unsupported_grant_type", &format!("{other:?}: only authorization_code and refresh_token")),
    };
    match issued {
        Ok(t) => json_ok(json!({
            "access_token": t.access.expose(), "token_type": "Bearer", "expires_in": t.expires_in,
            "refresh_token": t.refresh.expose(), "scope": SCOPE,
        })),
        Err(grants::Refused::Store(e)) => {
            tracing::warn!("the OAuth grants could not be saved: {e}");
            json_status(StatusCode::INTERNAL_SERVER_ERROR, json!({"error": "server_error"}))
        }
        Err(e) => oauth_error("invalid_grant", &e.to_string()),
    }
}

fn html(status: StatusCode, body: String) -> Response {
    html_to(status, body, "")
}

/// A page whose form's answer redirects to `redirect_uri` (the consent page): its origin is a
/// `form-action` source, since browsers check redirects after a form against it.
fn html_to(status: StatusCode, body: String, redirect_uri: &str) -> Response {
    let mut r = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], Body::from(body)).into_response();
    let also: Vec<String> = super::people::origin_of(redirect_uri).into_iter().collect();
    super::people::secure_headers_for(&mut r, &also);
    r
}
