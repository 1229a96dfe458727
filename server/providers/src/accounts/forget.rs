//! Disconnecting: end the grant at the provider the way it allows (a revoke endpoint), or say where
//! the user ends it themselves; then delete the local credential. The local deletion happens
//! whatever the provider answers, and both are reported.
use super::Home;
use crate::catalog::ProviderSpec;
use crate::connection::Revoke;

/// Why a login could not be forgotten: this machine's store or its chosen files could not be
/// read or changed (a failed revoke is not an error: it is said in [`Forgotten`]).
#[derive(Debug, thiserror::Error)]
pub enum ForgetError {
    #[error(transparent)]
    Store(#[from] super::StoreError),
}

/// At the edges (the settings app's commands, the CLI) a failure is said as it reads.
impl From<ForgetError> for String {
    fn from(e: ForgetError) -> String {
        e.to_string()
    }
}

/// What `forget` did for one provider, in words (no token).
pub struct Forgotten {
    pub provider: &'static str,
    pub message: String,
    /// Whether the login is gone everywhere this server can reach: false when the provider refused
    /// or missed the revoke, or when the key comes from the environment, which only its owner changes.
    pub complete: bool,
}

/// Forget `home`'s login of `p` (a hosted tenant's, from their page).
pub async fn forget_in(p: &ProviderSpec, home: &Home) -> Result<Forgotten, ForgetError> {
    if let Some(f) = p.connection.file() {
        return forget_file_of(p, f, home);
    }
    let store = home.store()?;
    let Some(tokens) = store.load(p.name)? else {
        // A key given in the environment is never stored: only the environment can take it away.
        let from_env = p.connection.api_key().map(|k| k.env).filter(|var| home.env_credential(var).is_some());
        let complete = from_env.is_none();
        let message = match from_env {
            Some(var) => format!(
                "{}: no login was stored ({}); the key in use comes from the environment variable {var} (or the extension's settings): \
                 remove it there to disconnect.",
                p.display,
                store.describe()
            ),
            None => format!("{}: no login was stored ({}); nothing to forget.", p.display, store.describe()),
        };
        return Ok(Forgotten { provider: p.name, message, complete });
    };
    let what = if tokens.key.is_some() { "key and token" } else { "tokens" };
    let (revoked, complete) = match p.connection.revoke() {
        Revoke::Nothing => ("nothing was granted at the provider".to_string(), true),
        Revoke::InAccount(place) => (format!("{} has no revoke endpoint: end the app's access {place} if you want it gone there too", p.display), true),
        Revoke::Endpoint { url, env, param } => match crate::http::revoke(&super::oauth::env_or(home.config(), env, url), url, param, &tokens.access).await {
            Ok(s) if (200..300).contains(&s) => (format!("access revoked at {} (HTTP {s})", p.display), true),
            Ok(s) => (
                format!(
                    "{} refused the revoke (HTTP {s}; the token may have expired already): end the app's access in your {} account settings to be sure",
                    p.display, p.display
                ),
                false,
            ),
            Err(e) => {
                (format!("the revoke request to {} failed ({e}): end the app's access in your {} account settings to be sure", p.display, p.display), false)
            }
        },
    };
    store.remove(p.name)?;
    let message = format!("{}: {revoked}; the local {what} were deleted from the {}.", p.display, store.describe());
    Ok(Forgotten { provider: p.name, message, complete })
}

/// A file connection forgets the path it was given (the file itself is left where it is).
fn forget_file_of(p: &ProviderSpec, f: &crate::connection::FileSpec, home: &Home) -> Result<Forgotten, ForgetError> {
    let had = super::files::forget_file(home, p.name)?;
    let from_env = home.env_credential(f.env).is_some();
    let message = match (had, from_env) {
        (_, true) => format!(
            "{}: the file in use comes from the environment variable {} (the extension's file setting): clear it there to stop reading it.",
            p.display, f.env
        ),
        (true, false) => format!("{}: the chosen file is forgotten (the file itself is left where it is; vitals never copied it).", p.display),
        (false, false) => format!("{}: no file was chosen; nothing to forget.", p.display),
    };
    Ok(Forgotten { provider: p.name, message, complete: !from_env })
}
