//! The pages a person reads, as HTML (maud escapes every value). No script anywhere: every action
//! is a form, so the pages work without JavaScript, and the CSP forbids scripts outright. Laid out
//! for a phone first.
use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = "body{font:16px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;background:#fafaf8;color:#1b1b1b}\
main{max-width:36rem;margin:0 auto;padding:1rem}h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.6rem}\
code,.secret{font-family:ui-monospace,monospace;word-break:break-all}.secret{display:block;background:#fff;border:1px solid #ccc;\
border-radius:6px;padding:.6rem;margin:.4rem 0}button,a.button{font:inherit;padding:.45rem 1rem;border-radius:6px;border:1px solid #888;\
background:#fff;color:inherit;cursor:pointer;text-decoration:none;display:inline-block}button.danger{border-color:#b3261e;color:#b3261e}.row{display:flex;justify-content:space-between;\
align-items:center;gap:.5rem;border-bottom:1px solid #ddd;padding:.5rem 0}.note{color:#555;font-size:.9rem}\
.flash{background:#eef6ee;border-radius:6px;padding:.6rem}.error{background:#fdeceb;border-radius:6px;padding:.6rem}\
input[type=password],input[type=text]{font:inherit;width:100%;box-sizing:border-box;padding:.45rem;margin:.3rem 0}\
@media (prefers-color-scheme:dark){body{background:#1b1b1b;color:#eee}.secret,button,a.button{background:#262626;color:#eee}\
.flash{background:#1f3321}.error{background:#3a1e1c}.note{color:#aaa}}";

/// A whole page.
pub fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · vitals" }
                style { (PreEscaped(STYLE)) }
            }
            body { main { (body) } }
        }
    }
    .into_string()
}

/// What vitals reads and keeps, said before anyone makes a tenant.
pub fn privacy() -> Markup {
    html! {
        h2 { "What vitals reads and keeps" }
        ul {
            li { "It reads your own data from the wearable accounts you connect here (Oura, Withings, Polar, Garmin), only when your AI assistant asks a question, and only to answer it." }
            li { "It keeps no health data on disk: answers are computed in memory, and what the providers sent is cached there (within a size limit) until the server restarts. Nothing you measured is ever written to a file." }
            li { "It keeps your logins to those accounts (their tokens), encrypted, in a folder of yours on this server, and the fingerprints of your sign-in key and connector URL; never the key or the URL itself. A copy of the server's disk without the operator's key shows only which accounts you connected, and when." }
            li { "It writes nothing to your accounts. You can disconnect an account or delete everything here at any time; the operator of this server can too." }
            li { "Whatever lets your assistant in (a connector URL, or the assistants you allow here) reads your data: give it only to your own assistant, and revoke it here when you stop using it." }
        }
    }
}

/// A form of one button (and its CSRF token) that posts to `action`.
pub fn button(action: &str, csrf: &str, label: &str, danger: bool) -> Markup {
    html! {
        form method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            button type="submit" class=[danger.then_some("danger")] { (label) }
        }
    }
}

/// The invitation's page: the privacy text, then one button that makes the tenant.
pub fn join(action: &str, csrf: &str, expires: &str) -> String {
    page(
        "Join",
        html! {
            h1 { "Your own vitals" }
            p { "You were invited to connect your wearables to your AI assistant through this server. This invitation can be used once; it expires on " (expires) "." }
            (privacy())
            (button(action, csrf, "Make my vitals", false))
        },
    )
}

/// How a person's assistant reaches their data on this server.
pub struct Connectors {
    /// The one URL every assistant is given under OAuth (the person allows each on this server).
    pub oauth: Option<String>,
    /// Their own connector URL (with `--auth url`), just made: shown this once.
    pub url: Option<String>,
}

fn connectors(c: &Connectors) -> Markup {
    html! {
        @if let Some(u) = &c.oauth {
            h2 { "Your connector URL" }
            p { "Add it to your assistant as a custom connector (in Claude: Settings, Connectors, Add custom connector). It names no one: your assistant sends you to this server to sign in and allow it, and you can revoke it here." }
            code.secret data-connector="oauth" { (u) }
        }
        @if let Some(u) = &c.url {
            h2 { @if c.oauth.is_some() { "Your own connector URL (without signing in)" } @else { "Your connector URL" } }
            p { "It is shown only now: keep it in your password manager. Whoever has it reads your data, so give it only to your own assistant (in Claude: Settings, Connectors, Add custom connector). You can make a new one on your page, which ends this one." }
            code.secret data-connector="url" { (u) }
        }
    }
}

/// After the tenant was made: the sign-in key and the connector URL, shown this once.
pub fn welcome(c: &Connectors, key: &str) -> String {
    page(
        "Welcome",
        html! {
            h1 { "Your vitals is ready" }
            h2 { "Your sign-in key" }
            p { "Keep it in your password manager: it is shown only now, and it is how you come back to this page (to connect an account, or to delete everything). Nobody can show it to you again." }
            code.secret data-key { (key) }
            (connectors(c))
            p { a href="/me" { "Connect your accounts →" } }
        },
    )
}

/// A time (Unix seconds) as people read it, in UTC.
fn when(t: i64) -> String {
    jiff::Timestamp::from_second(t).map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default()
}

pub fn sign_in(csrf: &str, error: Option<&str>) -> String {
    page(
        "Sign in",
        html! {
            h1 { "Sign in to your vitals" }
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form method="post" action="/signin" {
                input type="hidden" name="csrf" value=(csrf);
                label for="key" { "Your sign-in key (it starts with vk-)" }
                input #key type="password" name="key" autocomplete="current-password" required;
                button type="submit" { "Sign in" }
            }
            p.note { "No key? Ask the operator of this server for a new invitation." }
        },
    )
}

/// How the person's page connects a provider.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// A button that sends the browser to the provider's login and back.
    Redirect,
    /// A page of ours where a key is pasted.
    Key,
    /// A page of ours where email, password and a one-time code are typed.
    Login,
    /// Not from this page (tokens imported by the operator).
    Elsewhere,
}

/// One provider as the person's page shows it.
pub struct Row {
    pub name: &'static str,
    pub display: &'static str,
    pub connected: bool,
    pub how: How,
}

pub fn me(c: &Connectors, urls: bool, rows: &[Row], assistants: &[crate::hosted::oauth::grants::Assistant], csrf: &str, flash: Option<&str>) -> String {
    page(
        "Your vitals",
        html! {
            h1 { "Your vitals" }
            @if let Some(f) = flash { p.flash role="status" { (f) } }
            (connectors(c))
            @if urls && c.url.is_none() {
                @if c.oauth.is_none() { h2 { "Your connector URL" } }
                p.note { "Your connector URL was shown once, when it was made. Lost it, or gave it to an assistant you no longer use? A new one ends the old one at once." }
                (button("/me/new-url", csrf, "Make a new connector URL", false))
            }
            h2 { "Your accounts" }
            @for r in rows {
                div.row data-provider=(r.name) data-connected=(r.connected) {
                    span { b { (r.display) } " " span.note { @if r.connected { "connected" } @else { "not connected" } } }
                    @if r.connected {
                        (button(&format!("/me/disconnect/{}", r.name), csrf, "Disconnect", false))
                    } @else {
                        @match r.how {
                            How::Redirect => (button(&format!("/me/connect/{}", r.name), csrf, "Connect", false)),
                            How::Key => a.button href=(format!("/me/key/{}", r.name)) { "Connect" },
                            How::Login => a.button href=(format!("/me/login/{}", r.name)) { "Connect" },
                            How::Elsewhere => span.note { "ask the operator" },
                        }
                    }
                }
            }
            @if !assistants.is_empty() {
                h2 { "Assistants you let in" }
                @for a in assistants {
                    div.row data-client=(a.client_id) {
                        span {
                            b { (a.client_name) }
                            br;
                            span.note { "allowed " (when(a.allowed)) ", " @match a.last_used { Some(t) => { "last used " (when(t)) }, None => "not used yet" } }
                        }
                        form method="post" action="/me/revoke-client" {
                            input type="hidden" name="csrf" value=(csrf);
                            input type="hidden" name="client_id" value=(a.client_id);
                            button type="submit" { "Revoke" }
                        }
                    }
                }
            }
            h2 { "Leave" }
            (button("/signout", csrf, "Sign out", false))
            p { a href="/me/delete" { "Delete my vitals…" } }
        },
    )
}

/// The authorization page: which client asks, where it sends the answer, Allow or Deny; the
/// sign-in key too when the browser is not signed in.
pub fn consent(client: &str, host: &str, fields: &[(String, String)], csrf: &str, need_key: bool, error: Option<&str>) -> String {
    page(
        "Let an assistant in",
        html! {
            h1 { "Let " (client) " read your vitals?" }
            @if let Some(e) = error { p.error role="alert" { (e) } }
            p { (client) " asks to read your wearable data through this server (nothing is ever written to your accounts). Your answer goes back to " code { (host) } "." }
            p.note { "You can revoke it on your page at any time." }
            form method="post" action="/oauth/authorize" {
                input type="hidden" name="csrf" value=(csrf);
                @for (k, v) in fields { input type="hidden" name=(k) value=(v); }
                @if need_key {
                    label for="key" { "Your sign-in key (it starts with vk-)" }
                    input #key type="password" name="key" autocomplete="current-password";
                    p.note { "No key? Only a person with an invitation from this server's operator has one." }
                }
                button type="submit" name="decision" value="allow" { "Allow" }
                " "
                button type="submit" name="decision" value="deny" { "Deny" }
            }
        },
    )
}

/// Paste a provider's key.
pub fn key_form(display: &str, name: &str, help: &str, csrf: &str, error: Option<&str>) -> String {
    page(
        &format!("Connect {display}"),
        html! {
            h1 { "Connect " (display) }
            @if let Some(e) = error { p.error role="alert" { (e) } }
            p { "Paste your " (display) " key. It is checked with " (display) " and kept in your folder on this server, never shown again. " (help) }
            form method="post" action=(format!("/me/key/{name}")) {
                input type="hidden" name="csrf" value=(csrf);
                label for="key" { "Key" }
                input #key type="password" name="key" autocomplete="off" required;
                label for="days" { "It expires in (as you chose when you made it; optional)" }
                select #days name="days" { option value="" { "not said" } option { "30" } option { "90" } option { "180" } option value="365" { "365 (1 year)" } }
                p { button type="submit" { "Connect" } }
            }
            p { a href="/me" { "Back" } }
        },
    )
}

/// Sign in to a provider with email and password, or (`code`) type the one-time code it sent.
pub fn login_form(display: &str, name: &str, caution: &str, csrf: &str, code: Option<&str>, error: Option<&str>) -> String {
    page(
        &format!("Connect {display}"),
        html! {
            h1 { "Connect " (display) }
            @if let Some(e) = error { p.error role="alert" { (e) } }
            form method="post" action=(format!("/me/login/{name}")) {
                input type="hidden" name="csrf" value=(csrf);
                @if let Some(words) = code {
                    p { (words) }
                    label for="code" { "One-time code" }
                    input #code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required;
                } @else {
                    p { "Sign in with your account. The password is passed on in this one request and then dropped: it is never stored, logged or kept while a one-time code is sent to you." }
                    p.note { (caution) }
                    label for="email" { "Email" }
                    input #email type="text" name="email" autocomplete="username" required;
                    label for="password" { "Password" }
                    input #password type="password" name="password" autocomplete="current-password" required;
                }
                p { button type="submit" { "Connect" } }
            }
            p { a href="/me" { "Back" } }
        },
    )
}

pub fn confirm_delete(csrf: &str) -> String {
    page(
        "Delete",
        html! {
            h1 { "Delete your vitals?" }
            p { "Every connected account is disconnected (revoked at the provider where it allows), your logins and sign-in key are deleted, and your connector URL stops working at once. This cannot be undone." }
            (button("/me/delete", csrf, "Delete everything", true))
            p { a href="/me" { "Keep it" } }
        },
    )
}

pub fn deleted(said: &[String]) -> String {
    page(
        "Deleted",
        html! {
            h1 { "Deleted" }
            p { "Your vitals is gone from this server: your logins, your sign-in key, your connector URL." }
            @if !said.is_empty() { ul { @for s in said { li { (s) } } } }
        },
    )
}

/// A page that only says something (a refusal, an expired invitation).
pub fn message(title: &str, text: &str) -> String {
    page(title, html! { h1 { (title) } p { (text) } })
}
