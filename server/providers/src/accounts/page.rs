//! Our own page on loopback, for the connections whose secret the user types (a pasted key; a
//! session's email, password and one-time code), so it is typed there and never into the chat.
//! 127.0.0.1 only, one random path, open for [`CALLBACK_WAIT`]; a refused entry shows the form
//! again with why. A login waiting for its one-time code is held in this listener's memory only (a
//! provider's login may take the password again with the code; Garmin's completes its own session
//! with the code alone, which is what the hosted people's page relies on).
use super::browser::{escape, html, outcome_page, CALLBACK_WAIT};
use super::error::{ConnectError, LinkError};
use super::grant::Connected;
use super::grant::{save_key_in, submit_in, Submitted};
use super::Home;
use crate::catalog::ProviderSpec;
use crate::connection::{Connection, SessionForm};
use crate::secret::Secret;
use std::collections::HashMap;
use std::io::Read;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Said wherever a credential was typed into this page.
const SOURCE: &str = "vitals' login page";

/// The most a form post may carry: a key, an email, a password and a code are far less.
const MAX_BODY: u64 = 16 * 1024;

/// Start serving the page for `p` at `/connect/<id>`; returns its address. The outcome (a
/// connection, or the time running out) goes to `tx`.
pub fn serve(p: &'static ProviderSpec, id: &str, home: &Home, tx: watch::Sender<Option<Result<Connected, ConnectError>>>) -> Result<String, LinkError> {
    let server = tiny_http::Server::http(("127.0.0.1", 0)).map_err(|e| LinkError::Busy(format!("no local port could be opened for the login page ({e})")))?;
    let port = server.server_addr().to_ip().map(|a| a.port()).ok_or_else(|| LinkError::Setup("the login page has no TCP port".into()))?;
    let path = format!("/connect/{id}");
    let url = format!("http://127.0.0.1:{port}{path}");
    let (handle, home) = (tokio::runtime::Handle::current(), home.clone());
    tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + CALLBACK_WAIT;
        let mut held: Option<SessionForm> = None;
        let outcome = loop {
            if Instant::now() >= deadline {
                break Err(ConnectError::TimedOut(format!("the login page was not used within {} minutes; start again", CALLBACK_WAIT.as_secs() / 60)));
            }
            let Ok(Some(mut req)) = server.recv_timeout(Duration::from_millis(250)) else {
                continue;
            };
            if req.url().split('?').next() != Some(path.as_str()) {
                let _ = req.respond(tiny_http::Response::from_string("Not found.").with_status_code(404));
                continue;
            }
            // The browser posting the form back to us (incoming: nothing leaves the machine).
            if req.method().as_str() != "POST" {
                let _ = req.respond(html(200, &form(p, None, held.is_some())));
                continue;
            }
            let mut body = String::new();
            let _ = req.as_reader().take(MAX_BODY).read_to_string(&mut body);
            let fields: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
            match handle.block_on(post(p, &fields, &mut held, &home)) {
                Ok(Posted::Done(c)) => {
                    let done = Ok(c);
                    let _ = req.respond(outcome_page(&done));
                    break done;
                }
                Ok(Posted::Code(words)) => {
                    let _ = req.respond(html(200, &form(p, Some(Note::Said(&words)), true)));
                }
                Err(e) => {
                    let _ = req.respond(html(400, &form(p, Some(Note::Refused(&e.to_string())), held.is_some())));
                }
            }
        };
        if let Err(e) = &outcome {
            tracing::info!("the {} login page closed: {e}", p.display);
        }
        let _ = tx.send(Some(outcome));
    });
    Ok(url)
}

/// Where one posted form left the login.
enum Posted {
    Done(Connected),
    /// The provider sent a one-time code (its words say where); the form is held for it.
    Code(String),
}

/// What the page says above its fields.
enum Note<'a> {
    Said(&'a str),
    Refused(&'a str),
}

async fn post(p: &'static ProviderSpec, f: &HashMap<String, String>, held: &mut Option<SessionForm>, home: &Home) -> Result<Posted, ConnectError> {
    let get = |k: &str| f.get(k).map(|v| v.trim().to_string()).unwrap_or_default();
    match p.connection {
        Connection::ApiKey(_) => {
            let days = match get("days").as_str() {
                "" => None,
                d => Some(d.parse::<u32>().map_err(|_| ConnectError::Input(format!("`days` must be a whole number of days; got {d:?}")))?),
            };
            save_key_in(p, Secret::new(get("key")), days, SOURCE, home).await.map(Posted::Done)
        }
        Connection::Session(_) => {
            let form = match held.take() {
                Some(mut waiting) if !get("code").is_empty() => {
                    waiting.code = Some(Secret::new(get("code")));
                    waiting
                }
                _ => SessionForm { email: get("email"), password: Secret::new(f.get("password").cloned().unwrap_or_default()), code: None, waiting_as: None },
            };
            match submit_in(p, form.clone(), SOURCE, home).await {
                Ok(Submitted::Connected(c)) => Ok(Posted::Done(c)),
                Ok(Submitted::NeedsCode(words)) => {
                    *held = Some(form);
                    Ok(Posted::Code(words))
                }
                Err(e) => Err(e),
            }
        }
        _ => Err(ConnectError::NotOffered(format!("{} is not connected with this page", p.display))),
    }
}

/// The form for `p`'s connection, with what the provider said, or why the last entry was refused, above it.
fn form(p: &ProviderSpec, note: Option<Note>, needs_code: bool) -> String {
    let error = match note {
        Some(Note::Said(w)) => format!("<p>{}</p>", escape(w)),
        Some(Note::Refused(e)) => format!("<p style=\"color:#a00\">{}</p>", escape(e)),
        None => String::new(),
    };
    let input = |label: &str, name: &str, kind: &str| {
        format!("<p><label>{label}<br><input name=\"{name}\" type=\"{kind}\" autocomplete=\"off\" style=\"width:100%\" required></label></p>")
    };
    let (intro, fields) = match p.connection {
        Connection::ApiKey(k) => (
            format!("Paste your {} key. It is kept on this computer and never shown again. {}", p.display, escape(k.create_help)),
            format!(
                "{}<p><label>The key expires in (as you chose when you created it; optional)<br><select name=\"days\"><option value=\"\">not \
                 said</option><option>30</option><option>90</option><option>180</option><option value=\"365\">365 (1 year)</option></select> days</label></p>",
                input("Key", "key", "password")
            ),
        ),
        Connection::Session(s) if needs_code => {
            (format!("{} sent you a one-time code. {}", p.display, escape(s.caution)), input("One-time code", "code", "text"))
        }
        Connection::Session(s) => (
            format!("Sign in to {}. The password is used once, here, and never stored. {}", p.display, escape(s.caution)),
            format!("{}{}", input("Email", "email", "email"), input("Password", "password", "password")),
        ),
        _ => (String::new(), String::new()),
    };
    format!("<h1>Connect {}</h1><p>{intro}</p>{error}<form method=\"post\">{fields}<p><button>Connect</button></p></form>", p.display)
}
