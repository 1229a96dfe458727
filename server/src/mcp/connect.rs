//! Connecting an account from inside the chat, translated to what the client can do:
//! - 2026-07-28 with URL elicitation: an `input_required` result, finished on the client's retry;
//! - 2025-11-25 and older with URL elicitation: `elicitation/create` (mode `url`), then
//!   `notifications/elicitation/complete` once the callback has arrived;
//! - no URL elicitation (Claude Desktop today): the server opens the browser itself and waits with
//!   progress; if no browser opens, the URL and the CLI command come back as text.
//!
//! The login itself (listener, exchange, store) is [`crate::accounts::link`]; it keeps running for
//! its 10 minutes even when this call stops waiting, so a late sign-in still connects.
use crate::accounts::link::{ConnectError, Connected, Link, LinkError, Links};
use crate::catalog::ProviderSpec;
use crate::connection::Connection as Way;
use crate::engine::Deadline;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

// How long a call waits for the browser: what is left of its time budget (engine/deadline.rs).
// Claude Desktop drops a call after about a minute whatever progress is sent, so a login still
// open when the budget runs out answers "still waiting" with the link, and the next call joins it.
/// The key of our one input request in a 2026 `input_required` round.
const INPUT_KEY: &str = "connect";

/// What `vitals_connect` reports (never a token).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ConnectReport {
    pub provider: String,
    /// `connected`, `already_connected`, `waiting_for_browser`.
    pub state: String,
    pub message: String,
    /// The login address, when the user still has to open it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The terminal command that does the same login.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cli: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// Where a connect attempt ended for this call.
pub enum Connection {
    Done(Connected),
    /// 2026-07-28: ask the client, then finish on its retry.
    Ask(InputRequiredResult),
    /// Not finished (yet): what the user should do, with the link. Not an error.
    Waiting(ConnectReport),
    /// Declined, refused, or not possible: the reason in words.
    Failed(String),
}

fn cli_command(p: &ProviderSpec) -> String {
    match p.connection {
        Way::OAuth(_) => format!("vitals-mcp auth {}   (or, on a machine without a browser: vitals-mcp auth {} --manual)", p.name, p.name),
        _ => format!("vitals-mcp auth {}   (prompts in the terminal; nothing is echoed)", p.name),
    }
}

/// What the user does on the page, in words.
fn task(p: &ProviderSpec) -> String {
    match p.connection {
        Way::ApiKey(_) => format!("paste your {} key into vitals' own page on this computer", p.display),
        Way::Session(_) => format!("sign in to {} on vitals' own page on this computer (the password is used once, never stored)", p.display),
        _ => format!("sign in to {}", p.display),
    }
}

fn waiting(link: &Link, why: &str) -> Connection {
    let p = link.provider;
    let (where_, terminal) = match link.hosted {
        true => ("", ""),
        false => (" on this computer", " From a terminal, `cli` does the same."),
    };
    Connection::Waiting(ConnectReport {
        provider: p.name.into(),
        state: "waiting_for_browser".into(),
        message: format!(
            "{why} The login address is {}: open it in a browser{where_} and {}. The login stays open for {} more minute(s) and is \
             saved as soon as it is done; then call vitals_connect again to finish (or just ask again).{terminal}",
            link.url,
            task(p),
            link.minutes_left()
        ),
        url: Some(link.url.clone()),
        cli: (!link.hosted).then(|| cli_command(p)),
        scopes: None,
        expires_at: None,
    })
}

pub fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

fn url_elicitation(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.url.is_some())
}

fn message(p: &ProviderSpec) -> String {
    let mut t = task(p);
    t[..1].make_ascii_uppercase();
    format!("{t} to let vitals read your data (read-only).")
}

/// Said when a call stops waiting for a login that is still open.
const STILL_WAITING: &str = "Still waiting for the login: this call answers now so the client does not drop it.";

/// Connect `p` within `deadline`. `state` and `answers` are a 2026 retry's `requestState` and `inputResponses`.
pub async fn connect(
    links: &Links,
    p: &'static ProviderSpec,
    ctx: &RequestContext<RoleServer>,
    state: Option<String>,
    answers: Option<InputResponses>,
    deadline: Deadline,
) -> Connection {
    if let Some(state) = state {
        return finish_retry(links, ctx, &state, answers, deadline).await;
    }
    let link = match links.start(p) {
        Ok(l) => l,
        Err(LinkError::NoApp(help) | LinkError::NoPage(help)) => return Connection::Failed(help),
        Err(e) => return Connection::Failed(format!("The {} login could not start: {e}", p.display)),
    };
    if url_elicitation(ctx) && is_modern(ctx) {
        let mut reqs = InputRequests::new();
        reqs.insert(
            INPUT_KEY.into(),
            InputRequest::Elicitation(ElicitRequest::new(ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: message(p),
                url: link.url.clone(),
                elicitation_id: String::new(),
            })),
        );
        // The state is only a handle: the random link id. The login itself stays in this process.
        return Connection::Ask(InputRequiredResult::new(Some(reqs), Some(link.id.clone())));
    }
    if url_elicitation(ctx) {
        return elicit(&link, ctx, deadline).await;
    }
    // A hosted server's browser is not the person's.
    if links.hosted() {
        return waiting(&link, "This server runs elsewhere and cannot open a browser for you.");
    }
    // A second call joins the login under way and says what the first found: a window opened, or
    // none could be (then at once, as the first did, rather than waiting on a browser that never came).
    if let Err(why) = link.open_browser(|url| crate::accounts::browser::open(url, links.config())) {
        return waiting(&link, &format!("No browser could be opened on this machine ({why})."));
    }
    match wait_with_progress(&link, ctx, deadline).await {
        Some(Ok(c)) => Connection::Done(c),
        Some(Err(e)) => Connection::Failed(e.to_string()),
        None => waiting(&link, &format!("{STILL_WAITING} A browser window was opened for it, but it has not come back yet.")),
    }
}

/// ≤2025-11-25: ask the client to open the URL, wait for the callback, say it is complete.
async fn elicit(link: &Arc<Link>, ctx: &RequestContext<RoleServer>, deadline: Deadline) -> Connection {
    let Ok(url) = url::Url::parse(&link.url) else {
        return Connection::Failed("the login address is not a URL".into());
    };
    match ctx.peer.elicit_url(message(link.provider), url, link.id.clone()).await {
        Ok(ElicitationAction::Accept) => {}
        Ok(_) => return Connection::Failed(format!("The {} login was declined; nothing was connected.", link.provider.display)),
        Err(e) => return Connection::Failed(format!("The client could not show the login link ({e}).")),
    }
    match wait_with_progress(link, ctx, deadline).await {
        Some(Ok(c)) => {
            let done = CustomNotification::new("notifications/elicitation/complete", Some(serde_json::json!({ "elicitationId": link.id })));
            let _ = ctx.peer.send_notification(ServerNotification::CustomNotification(done)).await;
            Connection::Done(c)
        }
        Some(Err(e)) => Connection::Failed(e.to_string()),
        None => waiting(link, &format!("{STILL_WAITING} The login link was shown, but the browser has not come back yet.")),
    }
}

/// 2026-07-28 retry: the client answered our input request; the token store, not the answer, decides.
async fn finish_retry(links: &Links, ctx: &RequestContext<RoleServer>, state: &str, answers: Option<InputResponses>, deadline: Deadline) -> Connection {
    let Some(link) = links.by_id(state) else {
        return Connection::Failed(
            "This login is no longer under way (the server restarted, or another login replaced it). Call again to start a new one.".into(),
        );
    };
    let action = answers.as_ref().and_then(|a| a.get(INPUT_KEY)).and_then(|v| v.get("action")).and_then(|v| v.as_str()).unwrap_or("");
    if action != "accept" && link.outcome().is_none() {
        return Connection::Failed(format!("The {} login was declined; nothing was connected.", link.provider.display));
    }
    match wait_with_progress(&link, ctx, deadline).await {
        Some(Ok(c)) => Connection::Done(c),
        Some(Err(e)) => Connection::Failed(e.to_string()),
        None => waiting(&link, &format!("{STILL_WAITING} The login link was shown, but the browser has not come back yet.")),
    }
}

/// Wait for the login while the call's budget lasts, sending a progress notification every few
/// seconds when the caller asked for them; each carries the login address, so someone whose
/// browser never appeared is not left waiting without it.
async fn wait_with_progress(link: &Link, ctx: &RequestContext<RoleServer>, deadline: Deadline) -> Option<Result<Connected, ConnectError>> {
    let token = ctx.meta.get_progress_token();
    let start = Instant::now();
    let limit = deadline.left();
    let tick = Duration::from_secs(2);
    loop {
        let left = limit.saturating_sub(start.elapsed());
        if let Some(r) = link.wait(left.min(tick)).await {
            return Some(r);
        }
        if start.elapsed() >= limit {
            return None;
        }
        if let Some(t) = &token {
            let s = start.elapsed().as_secs();
            let note =
                format!("waiting for the {} login in the browser ({s} s of {} s); the login address: {}", link.provider.display, limit.as_secs(), link.url);
            let _ = ctx.peer.notify_progress(ProgressNotificationParam::new(t.clone(), s as f64).with_total(limit.as_secs() as f64).with_message(note)).await;
        }
    }
}

impl ConnectReport {
    pub fn connected(c: &Connected) -> ConnectReport {
        ConnectReport {
            provider: c.provider.into(),
            state: "connected".into(),
            message: format!("{} Queries now read the real account; nothing else is needed (no restart).", c.summary()),
            url: None,
            cli: None,
            scopes: Some(c.scopes.clone()),
            expires_at: c.expires_at.clone(),
        }
    }
}
