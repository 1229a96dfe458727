//! The Tauri commands: each one a thin call into the server library's accounts API (the same
//! settings file, token store and browser login as `vitals-mcp`). They return states and
//! sentences, never a token or a saved secret.
use serde::{Deserialize, Serialize};
use vitals::accounts::{default_dir, forget, link, token_store, Settings};
use vitals::catalog::ProviderSpec;
use vitals::secret::Secret;

/// What the window shows for one provider.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProviderState {
    pub provider: String,
    pub display: String,
    /// `not_set_up`, `app_saved`, `connected` or `error`.
    pub state: String,
    /// The state in plain words.
    pub summary: String,
    /// The saved client ID (not a secret; it names the app).
    pub client_id: Option<String>,
    /// Whether a client secret is saved (it is never sent to the window).
    pub secret_saved: bool,
    /// Where the app credentials the server would use come from.
    pub app_source: Option<String>,
    pub scopes: Vec<String>,
    /// When access expires, RFC 3339 (renewed with the saved refresh token).
    pub expires_at: Option<String>,
    /// The redirect to register at the provider's developer portal.
    pub redirect: String,
    pub portal: String,
    /// Where the tokens are kept.
    pub token_store: String,
    /// Whether "Revoke" also ends access at the provider (else only the local tokens go).
    pub revokes_at_provider: bool,
}

/// A finished action: what it did, in words, and the provider's state after it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Done {
    pub message: String,
    pub state: ProviderState,
}

/// A login under way: the address the browser was sent to (shown, in case no browser opened).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Started {
    pub url: String,
    pub browser_opened: bool,
}

/// Every provider that connects with a login, in the server's order: later providers appear
/// here without any change to the window.
pub fn specs() -> Vec<&'static ProviderSpec> {
    vitals::providers::all_from_env().iter().map(|p| p.spec()).filter(|s| s.oauth.is_some()).collect()
}

fn spec(provider: &str) -> Result<&'static ProviderSpec, String> {
    let all = specs();
    let names: Vec<&str> = all.iter().map(|s| s.name).collect();
    all.into_iter()
        .find(|s| s.name == provider)
        .ok_or_else(|| format!("`provider`: {provider:?} is not a provider that connects with a login; one of: {}.", names.join(", ")))
}

fn settings() -> Result<Settings, String> {
    default_dir().map(Settings::at).ok_or_else(|| "this computer has no configuration folder; set VITALS_CONFIG_DIR".into())
}

/// The state of one provider, read afresh from the settings file and the token store.
pub fn state_of(p: &'static ProviderSpec) -> ProviderState {
    let oauth = p.oauth.expect("only OAuth providers are listed");
    let env = p.app_env.expect("an OAuth provider names its app variables");
    let (redirect, _) = oauth.redirect();
    let mut s = ProviderState {
        provider: p.name.into(),
        display: p.display.into(),
        state: "not_set_up".into(),
        summary: format!("Not set up: create an app at {} with the redirect below, then save its client ID and secret here.", oauth.portal),
        client_id: None,
        secret_saved: false,
        app_source: None,
        scopes: vec![],
        expires_at: None,
        redirect,
        portal: oauth.portal.into(),
        token_store: String::new(),
        revokes_at_provider: oauth.revoke.is_some(),
    };
    let error = |mut s: ProviderState, why: String| {
        s.state = "error".into();
        s.summary = why;
        s
    };
    let app = match settings().and_then(|st| st.app_credentials(p.name, &env).map_err(|e| e.to_string())) {
        Ok(a) => a,
        Err(e) => return error(s, format!("The settings could not be read: {e}")),
    };
    if let Some(a) = &app {
        s.client_id = Some(a.client_id.clone());
        s.secret_saved = !a.client_secret.is_empty();
        s.app_source = Some(a.origin(&env));
        s.state = "app_saved".into();
        s.summary = format!("App credentials saved. Press Connect to sign in to {} in your browser.", p.display);
    }
    let store = match token_store() {
        Ok(t) => t,
        Err(e) => return error(s, format!("The token store is not usable: {e}")),
    };
    s.token_store = store.describe();
    match store.load(p.name) {
        Ok(Some(t)) => {
            s.state = "connected".into();
            s.scopes = t.scopes.clone();
            s.expires_at = t.expires_at.and_then(|x| jiff::Timestamp::from_second(x).ok()).map(|x| x.to_string());
            let renew = if t.refresh.is_some() { " and renews on its own" } else { "; connect again then" };
            s.summary = match &s.expires_at {
                Some(at) => format!("Connected. Access expires {at}{renew}."),
                None => "Connected.".into(),
            };
            if app.is_none() {
                s.summary.push_str(" The app credentials are missing, so access cannot be renewed: save them again.");
            }
        }
        Ok(None) => {}
        Err(e) => return error(s, format!("The saved login could not be read: {e}")),
    }
    s
}

/// Every provider's state.
#[tauri::command]
pub fn providers() -> Vec<ProviderState> {
    specs().into_iter().map(state_of).collect()
}

/// Save the client ID and, when given, the secret. An empty secret keeps the saved one.
#[tauri::command]
pub fn save_app(provider: String, client_id: String, client_secret: Option<String>) -> Result<Done, String> {
    let p = spec(&provider)?;
    let portal = p.oauth.map(|o| o.portal).unwrap_or_default();
    let id = client_id.trim();
    if id.is_empty() {
        return Err(format!("The client ID is empty. Paste the client ID of your app at {portal}."));
    }
    let st = settings()?;
    let env = p.app_env.expect("an OAuth provider names its app variables");
    let typed = client_secret.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let secret = match typed {
        Some(s) => Secret::new(s),
        None => match st.app_credentials(p.name, &env).map_err(|e| e.to_string())? {
            Some(saved) if !saved.client_secret.is_empty() => saved.client_secret,
            _ => return Err(format!("The client secret is empty. Paste the client secret of the same app at {portal}.")),
        },
    };
    st.save(p.name, id, &secret).map_err(|e| e.to_string())?;
    Ok(Done { message: format!("Saved the {} client ID and secret ({} characters; it is not shown again).", p.display, secret.len()), state: state_of(p) })
}

/// Start the browser login (or join the one under way) and open the browser on it.
#[tauri::command]
pub async fn connect_start(state: tauri::State<'_, crate::AppState>, provider: String) -> Result<Started, String> {
    let p = spec(&provider)?;
    let l = state.links.start(p).map_err(|e| e.to_string())?;
    let browser_opened = webbrowser::open(&l.url).is_ok();
    Ok(Started { url: l.url.clone(), browser_opened })
}

/// Wait for the login started by [`connect_start`] to land (up to its 10 minutes).
#[tauri::command]
pub async fn connect_wait(state: tauri::State<'_, crate::AppState>, provider: String) -> Result<Done, String> {
    let p = spec(&provider)?;
    let l = state.links.current(p.name).ok_or_else(|| format!("No {} login was started; press Connect.", p.display))?;
    match l.wait(link::CALLBACK_WAIT + std::time::Duration::from_secs(5)).await {
        Some(Ok(c)) => Ok(Done { message: c.summary(), state: state_of(p) }),
        Some(Err(e)) => Err(format!("Not connected: {e}")),
        None => Err("No browser came back in time; press Connect again.".into()),
    }
}

/// Revoke the login at the provider where it has a revoke endpoint, and delete the local tokens.
#[tauri::command]
pub async fn revoke(provider: String) -> Result<Done, String> {
    let p = spec(&provider)?;
    let f = forget::forget(p).await?;
    Ok(Done { message: f.message, state: state_of(p) })
}

/// Delete the saved client ID and secret.
#[tauri::command]
pub fn forget_app(provider: String) -> Result<Done, String> {
    let p = spec(&provider)?;
    let st = settings()?;
    let had = st.remove(p.name).map_err(|e| e.to_string())?;
    let message = if had {
        format!("Deleted the {} client ID and secret from {}.", p.display, st.path().display())
    } else {
        format!("No {} app credentials were saved in {}.", p.display, st.path().display())
    };
    Ok(Done { message, state: state_of(p) })
}

/// Open the provider's developer portal in the system browser (a link in the window would
/// navigate the window itself).
#[tauri::command]
pub fn open_portal(provider: String) -> Result<(), String> {
    let p = spec(&provider)?;
    webbrowser::open(p.oauth.map(|o| o.portal).unwrap_or_default()).map_err(|e| format!("No browser could be opened: {e}"))
}
