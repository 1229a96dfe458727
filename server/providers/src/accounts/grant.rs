//! A credential from any way in (a browser login, a pasted key, a session login, an import), saved
//! the same way: a fresh login id, saved before anything uses it, then the provider's step after
//! the exchange where it has one. And renewing a credential, whatever its kind.
pub use super::error::ConnectError;
use super::{TokenStore, Tokens};
use crate::catalog::ProviderSpec;
use crate::config::Config;
use crate::connection::{Connection, ConnectionKind, ImportSpec, KeyError, SessionForm, SessionStep};
use crate::provider::RenewError;
use crate::secret::Secret;
use std::sync::Arc;

/// A login that finished: what the user granted, never a token.
#[derive(Debug, Clone)]
pub struct Connected {
    pub provider: &'static str,
    pub display: &'static str,
    pub kind: ConnectionKind,
    pub scopes: Vec<String>,
    /// When access expires, RFC 3339.
    pub expires_at: Option<String>,
    /// When the key itself expires, RFC 3339 (a pasted key whose expiry the user gave).
    pub key_expires_at: Option<String>,
    /// Where the tokens went (keyring or file).
    pub saved_in: String,
    /// A step after the login that did not succeed yet, in words: the login is kept and the step
    /// runs again before the next read.
    pub pending: Option<String>,
    /// The provider's step after the login (`registering vitals with your Polar account`), when it has one.
    pub step: Option<&'static str>,
    /// Where the tokens came from, when another tool saved them (`imported from …`).
    pub source: Option<String>,
}

impl Connected {
    pub fn summary(&self) -> String {
        let scopes = if self.scopes.is_empty() { String::new() } else { format!("scopes {}; ", self.scopes.join(" ")) };
        let key = self.key_expires_at.as_deref().map(|k| format!("; the key itself expires {k}")).unwrap_or_default();
        let mut s = format!(
            "Connected {}{}: {scopes}access expires {}{key}; {} saved in the {}.",
            self.display,
            self.source.as_deref().map(|s| format!(" ({s}, which was only read)")).unwrap_or_default(),
            self.expires_at.as_deref().unwrap_or("(not said)"),
            if self.kind == ConnectionKind::ApiKey { "key and token" } else { "tokens" },
            self.saved_in
        );
        if let Some(more) = self.pending_or_step() {
            s.push(' ');
            s.push_str(&more);
        }
        s
    }

    /// The provider's step after the login in words: still to come, or done.
    pub fn pending_or_step(&self) -> Option<String> {
        match (&self.pending, self.step) {
            (Some(p), _) => Some(format!("Not ready yet: {p}")),
            (None, Some(step)) => Some(format!("{step}: done.")),
            _ => None,
        }
    }

    /// What saving `t` for `p` amounts to, in words.
    pub fn of(p: &'static ProviderSpec, t: &Tokens, saved_in: String, pending: Option<String>) -> Connected {
        let at = crate::time::unix_rfc3339;
        Connected {
            provider: p.name,
            display: p.display,
            kind: p.connection.kind(),
            scopes: t.scopes.clone(),
            expires_at: at(t.expires_at),
            key_expires_at: at(t.key_expires_at),
            saved_in,
            pending,
            step: p.connection.oauth().and_then(|o| o.after_exchange).map(|a| a.what),
            source: t.source.clone().filter(|s| s.starts_with("imported from")),
        }
    }
}

/// Save a new login for `p` into `home`'s store (a hosted tenant's own folder; a new login id: the
/// engine empties the provider's cache, since the account may have changed), then run the step
/// after the exchange if one is pending. A failed step keeps the login: it runs again before the
/// next read, and the words say what to do meanwhile.
pub async fn save_new_in(p: &'static ProviderSpec, mut tokens: Tokens, home: &super::Home) -> Result<Connected, ConnectError> {
    tokens.login = Some(oauth2::CsrfToken::new_random().secret().clone());
    let store = home.store()?;
    store.save(p.name, &tokens)?;
    let pending = setup(p, &store, home.config()).await.err().map(|e| e.to_string());
    let saved = store.load(p.name)?.unwrap_or(tokens);
    Ok(Connected::of(p, &saved, store.describe(), pending))
}

/// Run the step after the exchange if the saved login still owes it, with the server's settings.
/// Ok: nothing is owed (any more).
pub async fn setup(p: &ProviderSpec, store: &TokenStore, config: &Arc<Config>) -> Result<(), ConnectError> {
    let Some(step) = p.connection.oauth().and_then(|o| o.after_exchange) else {
        return Ok(());
    };
    let Some(t) = store.load(p.name)?.filter(|t| t.setup_pending.is_some()) else {
        return Ok(());
    };
    (step.run)(t.grant(), config.clone()).await.map_err(|e| ConnectError::step(e, |w| format!("{} did not succeed: {w}", step.what)))?;
    let (store, name) = (store.clone(), p.name);
    tokio::task::spawn_blocking(move || store.refresh_with(name, &t, |t| Ok(Tokens { setup_pending: None, ..t.clone() })))
        .await
        .map_err(|e| ConnectError::Failed(e.to_string()))??;
    Ok(())
}

/// A key the user pasted: exchanged once now (so a refused key is said at once, and never saved),
/// then saved with its token into `home`'s store (a hosted tenant's own folder). `key_days`: the
/// key's own lifetime, when the user gave it.
pub async fn save_key_in(p: &'static ProviderSpec, key: Secret, key_days: Option<u32>, source: &str, home: &super::Home) -> Result<Connected, ConnectError> {
    let spec = p.connection.api_key().ok_or_else(|| ConnectError::NotOffered(format!("{} does not connect with a key", p.display)))?;
    if key.is_empty() {
        return Err(ConnectError::Input(format!("The key is empty. {}", spec.create_help)));
    }
    let grant = (spec.exchange)(key.clone(), home.config().clone()).await.map_err(|e| match e {
        KeyError::Refused(w) => ConnectError::Refused(format!("{} refused the key ({w}); nothing was saved. {}", p.display, spec.create_help)),
        KeyError::Failed(w) => {
            ConnectError::Unavailable(format!("The key could not be checked with {} ({w}); nothing was saved. Try again in a moment.", p.display))
        }
        KeyError::Limited { why, .. } => ConnectError::Unavailable(format!("The key could not be checked with {} ({why}); nothing was saved.", p.display)),
    })?;
    let mut t = Tokens::from_grant(grant);
    t.key = Some(key);
    t.key_expires_at = key_days.map(|d| jiff::Timestamp::now().as_second() + i64::from(d) * 86_400);
    t.source = Some(source.to_string());
    save_new_in(p, t, home).await
}

/// Where a session login stands after one submission.
pub enum Submitted {
    Connected(Connected),
    /// The provider sent a one-time code: the words say where; submit again with it.
    NeedsCode(String),
}

/// One submission of a session login, saved into `home`'s store. The form (the password) is never
/// stored. A form with the one-time code needs no password: the login waiting for it holds
/// Garmin's session, not the password.
pub async fn submit_in(p: &'static ProviderSpec, form: SessionForm, source: &str, home: &super::Home) -> Result<Submitted, ConnectError> {
    let login =
        p.connection.session().and_then(|s| s.login).ok_or_else(|| ConnectError::NotOffered(format!("{} has no login this server offers", p.display)))?;
    if form.email.trim().is_empty() || (form.password.is_empty() && form.code.is_none()) {
        return Err(ConnectError::Input("Both the email and the password are needed.".into()));
    }
    match login(form, home.config().clone()).await.map_err(|e| ConnectError::step(e, |w| w))? {
        SessionStep::NeedsCode(words) => Ok(Submitted::NeedsCode(words)),
        SessionStep::Done(grant) => {
            let mut t = Tokens::from_grant(grant);
            t.source = Some(source.to_string());
            save_new_in(p, t, home).await.map(Submitted::Connected)
        }
    }
}

/// Import the tokens another tool saved, from `dir` or the provider's default folder, into `home`.
pub async fn import(p: &'static ProviderSpec, dir: Option<std::path::PathBuf>, home: &super::Home) -> Result<Connected, ConnectError> {
    let spec = p.connection.session().and_then(|s| s.import).ok_or_else(|| ConnectError::NotOffered(format!("{} has nothing to import", p.display)))?;
    let dir = dir.unwrap_or_else(|| import_dir(&spec, home.config()));
    let grant = (spec.read)(dir.clone(), home.config().clone())
        .await
        .map_err(|e| ConnectError::step(e, |w| format!("Nothing was imported from {}: {w}", dir.display())))?;
    let mut t = Tokens::from_grant(grant);
    t.source = Some(format!("imported from {}", dir.display()));
    save_new_in(p, t, home).await
}

/// The folder an import reads when the user names none: the first of the tools' variables that is
/// set to a folder in the server's settings, else the default folder.
pub fn import_dir(spec: &ImportSpec, config: &Config) -> std::path::PathBuf {
    import_dir_env(spec, config).map(std::path::PathBuf::from).unwrap_or_else(|| expand_home(spec.default_dir))
}

/// The first of the tools' folder variables that names a folder. A value starting with `{` is
/// garminconnect's tokens inline: secret, so never shown, echoed in an error, or read as a path.
pub fn import_dir_env(spec: &ImportSpec, config: &Config) -> Option<String> {
    spec.dir_env.iter().filter_map(|v| config.var(v)).find(|v| !v.trim_start().starts_with('{')).map(str::to_string)
}

fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => std::path::PathBuf::from(path),
    }
}

/// What to do for a connection that has no page to open: import from the terminal or the settings app.
pub fn import_help(p: &ProviderSpec, import: Option<ImportSpec>) -> String {
    match import {
        Some(i) => format!(
            "{} is connected by importing the tokens {} saved (default folder {}): run `vitals-mcp auth {} --import [FOLDER]` in a \
             terminal, or use Import in the vitals settings app.",
            p.display, i.from, i.default_dir, p.name
        ),
        None => format!("{} has no way to connect from here.", p.display),
    }
}

/// A fresh credential for `t`, as the provider's connection renews one, with `home`'s app
/// credentials and settings: an OAuth refresh, the key exchanged again, the session refreshed. The
/// caller saves it (under the store's lock). A token endpoint or key exchange that did not answer is
/// `RenewError::Unavailable`, so a read cuts its answer rather than calling the login bad.
pub async fn renew_in(p: &ProviderSpec, t: &Tokens, home: &super::Home) -> Result<Tokens, RenewError> {
    match p.connection {
        Connection::OAuth(_) => {
            let (oauth, app) = super::app::app_for_in(p, home).map_err(|e| e.to_string())?;
            super::oauth::refresh(&oauth, &app, t, home.config()).await.map_err(|e| match e {
                super::oauth::AuthError::Token(w) => RenewError::Failed(format!(
                    "{} refused to renew the login ({w}): it was revoked or has expired. Connect again: vitals_connect \
                     with provider={} and again=true, or `vitals-mcp auth {}`",
                    p.display, p.name, p.name
                )),
                super::oauth::AuthError::Unavailable(w) => RenewError::Unavailable(format!("{}'s token endpoint did not answer: {w}", p.display)),
                e @ super::oauth::AuthError::Limited { wait, .. } => RenewError::Limited { why: e.to_string(), wait },
                other => RenewError::Failed(other.to_string()),
            })
        }
        Connection::ApiKey(k) => {
            let key = t.key.clone().ok_or("no key is stored; paste the key again")?;
            // An exchange changes nothing at the provider: one that failed on the way is asked again.
            let grant = crate::http::once_more(|| (k.exchange)(key.clone(), home.config().clone()), |e| matches!(e, KeyError::Failed(_))).await;
            let grant = grant.map_err(|e| match e {
                KeyError::Refused(w) => RenewError::Failed(format!("{} refused the key ({w}). {}", p.display, k.create_help)),
                KeyError::Failed(w) => RenewError::Unavailable(w),
                KeyError::Limited { why, wait } => RenewError::Limited { why, wait },
            })?;
            Ok(t.renewed(grant))
        }
        Connection::Session(s) => match s.refresh {
            Some(refresh) => Ok(t.renewed(refresh(t.grant(), home.config().clone()).await?)),
            None => Err(format!("this {} session cannot be renewed from here; connect again", p.display).into()),
        },
        Connection::None | Connection::File(_) => Err(format!("{} has nothing to renew", p.display).into()),
    }
}

/// How a file connection is made: the person chooses the file, never the assistant.
pub fn file_help(p: &ProviderSpec, f: &crate::connection::FileSpec) -> String {
    format!(
        "{} is read from a file on this computer: {}. Choose it in the vitals extension's settings (its file setting), in the vitals \
         settings app, or with `vitals-mcp auth {} --file PATH` (or set {} to its path). vitals reads it in place and never copies it.",
        p.display, f.what, p.name, f.env
    )
}
