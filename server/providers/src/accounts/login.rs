//! A login from a terminal, as the provider's connection asks: `vitals-mcp auth <provider>` opens
//! the browser (OAuth) or prompts for a key or for email, password and one-time code (typed without
//! echo, never stored but the tokens they yield); `--manual` prints the OAuth address and reads the
//! pasted redirect (SSH, headless machines); `--import [FOLDER]` reads tokens another tool saved.
use super::grant::{import, save_key_in, submit_in, ConnectError, Submitted};
use super::link::{app_for_in, complete_in, Connected, Link, CALLBACK_WAIT};
use super::oauth::begin;
use super::Home;
use crate::catalog::ProviderSpec;
use crate::connection::{Connection, SessionForm};
use crate::secret::Secret;
use std::io::BufRead;
use std::path::PathBuf;

/// How the terminal login goes.
pub enum How {
    /// Open the browser (OAuth) or prompt here (key, session).
    Interactive,
    /// OAuth: print the address, read the address the browser lands on from standard input.
    Manual,
    /// Read the tokens another tool saved, from this folder or the provider's default.
    Import(Option<PathBuf>),
}

/// Said wherever a credential was typed into the terminal.
const SOURCE: &str = "the terminal (vitals-mcp auth)";

/// Run the whole login and save the credential in `home` (this machine's user, with the settings
/// the binary was started with).
pub async fn login(p: &'static ProviderSpec, how: How, home: &Home) -> Result<Connected, ConnectError> {
    let config = home.config();
    match (p.connection, how) {
        (_, How::Import(dir)) => import(p, dir, home).await,
        (Connection::OAuth(_), How::Manual) => {
            let (oauth, app) = app_for_in(p, home)?;
            let pending = begin(&oauth, &app, config)?;
            println!("{}", pending.url);
            eprintln!(
                "Open the address above in a browser, sign in to {}, and paste here the whole address the browser is sent to (it starts with {}):",
                p.display,
                pending.redirect()
            );
            let line = read_line()?;
            complete_in(p, &oauth, &app, pending, &line, home).await
        }
        (Connection::OAuth(_), How::Interactive) => browser(p, home).await,
        (Connection::ApiKey(k), _) => {
            eprintln!("{}", k.create_help);
            let key = secret(&format!("Paste your {} key (it is not shown): ", p.display))?;
            eprintln!("How many days until the key expires, as you chose when you created it (30, 90, 180, 365; Enter to skip)?");
            let days = read_line()?;
            let days = match days.trim() {
                "" => None,
                d => Some(
                    d.parse::<u32>()
                        .map_err(|_| ConnectError::Input(format!("{d:?} is not a whole number of days; run the command again and send e.g. 90, or nothing")))?,
                ),
            };
            save_key_in(p, key, days, SOURCE, home).await
        }
        (Connection::Session(s), _) if s.login.is_some() => {
            eprintln!("{}", s.caution);
            let from_env = s.login_env.and_then(|(e, w)| Some((e, w, config.var(e)?.to_string(), config.var(w)?.to_string())));
            let (email, password) = match from_env {
                Some((e, w, email, password)) => {
                    eprintln!("Signing in as {email} with the password in {w} ({e} and {w} are read, never stored).");
                    (email.trim().to_string(), Secret::new(password))
                }
                None => {
                    eprintln!("{} email:", p.display);
                    let email = read_line()?.trim().to_string();
                    (email, secret("Password (it is not shown, and never stored): ")?)
                }
            };
            let mut form = SessionForm { email, password, code: None, waiting_as: None };
            loop {
                match submit_in(p, form.clone(), SOURCE, home).await? {
                    Submitted::Connected(c) => return Ok(c),
                    Submitted::NeedsCode(words) => {
                        eprintln!("{words}");
                        form.code = Some(secret("One-time code: ")?);
                    }
                }
            }
        }
        (Connection::Session(s), _) => Err(ConnectError::NotOffered(super::grant::import_help(p, s.import))),
        (Connection::None, _) => Err(ConnectError::NotOffered(format!("{} serves sample data only: there is no account to connect.", p.display))),
        (Connection::File(f), _) => Err(ConnectError::NotOffered(super::grant::file_help(p, &f))),
    }
}

async fn browser(p: &'static ProviderSpec, home: &Home) -> Result<Connected, ConnectError> {
    let link = Link::start(p, home)?;
    if super::browser::open(&link.url, home.config()).is_err() {
        eprintln!("No browser could be opened here. Open this address yourself (or run again with --manual):");
    } else {
        eprintln!("A browser window opened; if it did not, open this address:");
    }
    println!("{}", link.url);
    match link.wait(CALLBACK_WAIT + std::time::Duration::from_secs(5)).await {
        Some(r) => r,
        None => Err(ConnectError::TimedOut("no browser came back in time; run the login again".into())),
    }
}

fn read_line() -> Result<String, ConnectError> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| ConnectError::Local(format!("reading standard input failed: {e}")))?;
    Ok(line)
}

/// A secret typed without echo at a terminal; from a pipe, one line.
pub fn secret(prompt: &str) -> Result<Secret, ConnectError> {
    use std::io::IsTerminal;
    let text = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(prompt).map_err(|e| ConnectError::Local(format!("reading the secret failed: {e}")))?
    } else {
        eprint!("{prompt}");
        read_line()?
    };
    Ok(Secret::new(text.trim()))
}
