//! Disconnecting: revoke the grant at the provider where it has a revoke endpoint, then delete the
//! local tokens. The local deletion happens whatever the provider answers, and both are reported.
use super::token_store;
use crate::catalog::ProviderSpec;

/// What `forget` did for one provider, in words (no token).
pub struct Forgotten {
    pub provider: &'static str,
    pub message: String,
}

pub async fn forget(p: &ProviderSpec) -> Result<Forgotten, String> {
    let store = token_store()?;
    let Some(tokens) = store.load(p.name).map_err(|e| e.to_string())? else {
        return Ok(Forgotten { provider: p.name, message: format!("{}: no login was stored ({}); nothing to forget.", p.display, store.describe()) });
    };
    let revoked = match p.oauth.and_then(|o| o.revoke) {
        None => format!("{} has no revoke endpoint: end the app's access in your {} account settings if you want it gone there too", p.display, p.display),
        Some(r) => match crate::http::revoke(&r.url(), r.param, &tokens.access).await {
            Ok(s) if (200..300).contains(&s) => format!("access revoked at {} (HTTP {s})", p.display),
            Ok(s) => format!(
                "{} refused the revoke (HTTP {s}; the token may have expired already): end the app's access in your {} account settings to be sure",
                p.display, p.display
            ),
            Err(e) => format!("the revoke request to {} failed ({e}): end the app's access in your {} account settings to be sure", p.display, p.display),
        },
    };
    store.remove(p.name).map_err(|e| e.to_string())?;
    Ok(Forgotten { provider: p.name, message: format!("{}: {revoked}; the local tokens were deleted from the {}.", p.display, store.describe()) })
}
