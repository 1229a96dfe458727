//! The Tauri commands: each one a thin call into the server library's accounts API (the same
//! settings file, token store and logins as `vitals-mcp`). Which fields a provider's row shows
//! follows its connection kind; no command names a provider. They return states and sentences,
//! never a token, a key, a password or a saved secret.
use crate::AppState;
use serde::{Deserialize, Serialize};
use vitals::accounts::grant::{self, Submitted};
use vitals::accounts::{default_dir, forget, link, Settings};
use vitals::catalog::ProviderSpec;
use vitals::connection::{Connection, SessionForm};
use vitals::secret::Secret;
use vitals::time::unix_rfc3339 as rfc3339;

/// What the window shows for one provider.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProviderState {
    pub provider: String,
    pub display: String,
    /// How it connects, which decides the row's fields: `oauth`, `api_key`, `session` or `import`.
    pub connection: String,
    /// `not_set_up`, `app_saved` (OAuth), `needs_code` (session), `connected` or `error`.
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
    /// When access expires, RFC 3339.
    pub expires_at: Option<String>,
    /// When a pasted key itself expires, RFC 3339, when the user said.
    pub key_expires_at: Option<String>,
    /// The redirect to register at the provider's developer portal (OAuth).
    pub redirect: String,
    /// Where the user gets what the connection needs (a developer portal, a key page).
    pub portal: String,
    /// Said beside a session login: what it is and what it risks.
    pub caution: Option<String>,
    /// The folder an import reads when none is given.
    pub import_from: Option<String>,
    /// What the import is, as offered ("Use tokens from another Garmin tool").
    pub import_offer: Option<String>,
    /// Where the tokens are kept.
    pub token_store: String,
    /// Whether "Revoke" also ends access at the provider (else only the local credential goes).
    pub revokes_at_provider: bool,
    /// Whether Connect can start a login now (OAuth: app credentials are there to sign in with).
    pub can_connect: bool,
    /// Whether Revoke has a saved login to act on.
    pub can_revoke: bool,
    /// Whether Forget app credentials has saved ones to delete (not ones from the environment,
    /// which only the environment can remove).
    pub can_forget_app: bool,
    /// A file connection: the file read (its path), once chosen.
    pub file: Option<String>,
    /// A file connection: which file, in words.
    pub file_what: Option<String>,
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

fn spec(state: &AppState, provider: &str) -> Result<&'static ProviderSpec, String> {
    let names: Vec<&str> = state.providers.iter().map(|s| s.name).collect();
    state
        .providers
        .iter()
        .copied()
        .find(|s| s.name == provider)
        .ok_or_else(|| format!("`provider`: {provider:?} is not a provider that can be connected; one of: {}.", names.join(", ")))
}

fn settings(state: &AppState) -> Result<Settings, String> {
    default_dir(state.home.config()).map(Settings::at).ok_or_else(|| "this computer has no configuration folder; set VITALS_CONFIG_DIR".into())
}

/// The state of one provider, read afresh from the settings file and the token store.
pub fn state_of(state: &AppState, p: &'static ProviderSpec) -> ProviderState {
    let waiting = state.waiting.lock().expect("waiting lock").contains_key(p.name);
    let kind = p.connection.kind();
    let mut s = ProviderState {
        provider: p.name.into(),
        display: p.display.into(),
        connection: kind.as_str().into(),
        state: "not_set_up".into(),
        summary: String::new(),
        client_id: None,
        secret_saved: false,
        app_source: None,
        scopes: vec![],
        expires_at: None,
        key_expires_at: None,
        redirect: p.connection.oauth().map(|o| o.redirect(state.home.config()).0).unwrap_or_default(),
        portal: p.connection.portal().unwrap_or_default().into(),
        caution: p.connection.session().map(|x| x.caution.to_string()),
        // The tools' own variable when one is set (GARTH_HOME), else the default as written (`~/…`).
        import_from: p
            .connection
            .session()
            .and_then(|x| x.import)
            .map(|i| vitals::accounts::grant::import_dir_env(&i, state.home.config()).unwrap_or_else(|| i.default_dir.to_string())),
        import_offer: p.connection.session().and_then(|x| x.import).map(|i| format!("{} ({})", i.offer, i.from)),
        token_store: String::new(),
        revokes_at_provider: p.connection.revoke().at_provider(),
        can_connect: false,
        can_revoke: false,
        can_forget_app: false,
        file: None,
        file_what: p.connection.file().map(|f| f.what.to_string()),
    };
    s.summary = match p.connection {
        Connection::OAuth(o) => format!("Not set up: create an app at {} with the redirect below, then save its client ID and secret here.", o.portal),
        Connection::ApiKey(k) => format!("Not set up: {}", k.create_help),
        Connection::Session(x) if x.login.is_some() => format!("Not connected: sign in to {} below.", p.display),
        Connection::Session(x) => grant::import_help(p, x.import),
        Connection::None => "Sample data only.".into(),
        Connection::File(f) => format!("No file chosen: choose {} below.", f.what),
    };
    if p.connection.file().is_some() {
        return file_state(s, p, &state.home);
    }
    // An error leaves nothing to connect or revoke with until it is mended (the summary says how).
    let error = |mut s: ProviderState, why: String| {
        s.state = "error".into();
        s.summary = why;
        s.can_connect = false;
        s.can_revoke = false;
        s
    };
    let mut app_missing = false;
    if let Some(o) = p.connection.oauth() {
        let app = match settings(state).and_then(|st| st.app_credentials(p.name, &o.app_env, state.home.config()).map_err(|e| e.to_string())) {
            Ok(a) => a,
            Err(e) => return error(s, format!("The settings could not be read: {e}")),
        };
        app_missing = app.is_none();
        if let Some(a) = &app {
            s.client_id = Some(a.client_id.clone());
            s.secret_saved = !a.client_secret.is_empty();
            s.app_source = Some(home_short(&a.origin(&o.app_env)));
            s.can_connect = true;
            s.can_forget_app = matches!(a.source, vitals::accounts::AppSource::Settings(_));
            s.state = "app_saved".into();
            s.summary = format!("App credentials saved. Press Connect to sign in to {} in your browser.", p.display);
        }
    }
    if waiting {
        s.state = "needs_code".into();
        s.summary = format!("{} sent a one-time code: type it below.", p.display);
    }
    let store = match state.home.store() {
        Ok(t) => t,
        Err(e) => return error(s, format!("The token store is not usable: {e}")),
    };
    s.token_store = home_short(&store.describe());
    match store.load(p.name) {
        Ok(Some(t)) => {
            s.state = "connected".into();
            s.can_revoke = true;
            s.scopes = t.scopes.clone();
            s.expires_at = rfc3339(t.expires_at);
            s.key_expires_at = rfc3339(t.key_expires_at);
            let now = jiff::Timestamp::now();
            // The expiry is said once, in local time and relative to now.
            s.summary = match (t.expires_at.map(|at| when(at, now)), &p.connection, t.refresh.is_some()) {
                (Some(w), Connection::ApiKey(_), _) => format!("Connected. Access renews from the key; the current token expires {w}."),
                (Some(w), _, true) => format!("Connected. Access renews on its own; the current token expires {w}."),
                (Some(w), _, false) => format!("Connected. Access expires {w}; connect again then."),
                (None, ..) => "Connected.".into(),
            };
            if let Some(at) = t.key_expires_at {
                s.summary.push_str(&format!(" The key itself expires {}: create a new one before then.", when(at, now)));
            }
            if let Some(step) = &t.setup_pending {
                s.summary.push_str(&format!(" Not ready yet: {step} has not succeeded; it is tried again on the next read."));
            }
            if app_missing {
                s.summary.push_str(" The app credentials are missing, so access cannot be renewed: save them again.");
            }
        }
        Ok(None) => {}
        Err(e) => return error(s, format!("The saved login could not be read: {e}")),
    }
    s
}

/// A file connection's state: the chosen file, or none (the environment's, when the extension set it).
fn file_state(mut s: ProviderState, p: &'static ProviderSpec, home: &vitals::accounts::Home) -> ProviderState {
    let chosen = vitals::accounts::saved_file(home, p.name).map(|f| (f, "chosen here"));
    let from_env = p.connection.file().and_then(|f| home.config().var(f.env)).map(|f| (std::path::PathBuf::from(f), "set by the extension"));
    if let Some((f, how)) = from_env.or(chosen) {
        s.state = "connected".into();
        s.can_revoke = how == "chosen here";
        s.summary = format!("Reads {} ({how}), in place: the file is never copied.", home_short(&f.display().to_string()));
        s.file = Some(f.display().to_string());
    }
    s
}

/// Choose the file a file connection reads: its path is saved, the file never copied.
#[tauri::command]
pub fn choose_file(state: tauri::State<'_, AppState>, provider: String, path: String) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    if p.connection.file().is_none() {
        return Err(format!("{} is not connected with a file.", p.display));
    }
    let path = path.trim();
    if path.is_empty() {
        return Err("`path`: type the path of the file.".into());
    }
    let abs = vitals::accounts::save_file(&state.home, p.name, std::path::Path::new(path))?;
    Ok(Done { message: format!("{} reads {} from now on, in place.", p.display, abs.display()), state: state_of(&state, p) })
}

/// Every provider's state.
#[tauri::command]
pub fn providers(state: tauri::State<'_, AppState>) -> Vec<ProviderState> {
    state.providers.iter().map(|p| state_of(&state, p)).collect()
}

/// Save the client ID and, when given, the secret (OAuth). An empty secret keeps the saved one.
#[tauri::command]
pub fn save_app(state: tauri::State<'_, AppState>, provider: String, client_id: String, client_secret: Option<String>) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let o = p.connection.oauth().ok_or_else(|| format!("{} has no app credentials: it connects another way.", p.display))?;
    let id = client_id.trim();
    if id.is_empty() {
        return Err(format!("The client ID is empty. Paste the client ID of your app at {}.", o.portal));
    }
    let st = settings(&state)?;
    let typed = client_secret.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let secret = match typed {
        Some(s) => Secret::new(s),
        None => match st.app_credentials(p.name, &o.app_env, state.home.config()).map_err(|e| e.to_string())? {
            Some(saved) if !saved.client_secret.is_empty() => saved.client_secret,
            _ => return Err(format!("The client secret is empty. Paste the client secret of the same app at {}.", o.portal)),
        },
    };
    st.save(p.name, id, &secret).map_err(|e| e.to_string())?;
    Ok(Done {
        message: format!("Saved the {} client ID and secret ({} characters; it is not shown again).", p.display, secret.len()),
        state: state_of(&state, p),
    })
}

/// Save a pasted key: exchanged once at the provider now, so a refused key is said at once.
#[tauri::command]
pub async fn save_key(state: tauri::State<'_, AppState>, provider: String, key: String, days: Option<u32>) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let c = grant::save_key_in(p, Secret::new(key.trim()), days, "the settings app", &state.home).await?;
    Ok(Done { message: connected(&c), state: state_of(&state, p) })
}

/// Sign in with email and password (never stored). When the provider sends a one-time code, the
/// form waits in memory for [`session_code`].
#[tauri::command]
pub async fn session_login(state: tauri::State<'_, AppState>, provider: String, email: String, password: String) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let form = SessionForm { email: email.trim().to_string(), password: Secret::new(password), code: None, waiting_as: None };
    submit(&state, p, form).await
}

/// The one-time code for the login waiting in memory.
#[tauri::command]
pub async fn session_code(state: tauri::State<'_, AppState>, provider: String, code: String) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let waiting = state.waiting.lock().expect("waiting lock").remove(p.name);
    let mut form = waiting.ok_or_else(|| format!("No {} sign-in is waiting for a code; sign in again.", p.display))?;
    if code.trim().is_empty() {
        state.waiting.lock().expect("waiting lock").insert(p.name, form);
        return Err("The code is empty. Type the code the provider sent you.".into());
    }
    form.code = Some(Secret::new(code.trim()));
    submit(&state, p, form).await
}

async fn submit(state: &AppState, p: &'static ProviderSpec, form: SessionForm) -> Result<Done, String> {
    match grant::submit_in(p, form.clone(), "the settings app", &state.home).await? {
        Submitted::Connected(c) => Ok(Done { message: connected(&c), state: state_of(state, p) }),
        Submitted::NeedsCode(words) => {
            state.waiting.lock().expect("waiting lock").insert(p.name, form);
            Ok(Done { message: words, state: state_of(state, p) })
        }
    }
}

/// Import the tokens another tool saved, from `folder` or that tool's own folder.
#[tauri::command]
pub async fn import(state: tauri::State<'_, AppState>, provider: String, folder: Option<String>) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let dir = folder.map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).map(std::path::PathBuf::from);
    let c = grant::import(p, dir, &state.home).await?;
    Ok(Done { message: connected(&c), state: state_of(&state, p) })
}

/// Start the browser login (or join the one under way) and open the browser on it.
#[tauri::command]
pub async fn connect_start(state: tauri::State<'_, AppState>, provider: String) -> Result<Started, String> {
    let p = spec(&state, &provider)?;
    let l = state.links.start(p).map_err(|e| e.to_string())?;
    let browser_opened = vitals::accounts::browser::open(&l.url, state.home.config()).is_ok();
    Ok(Started { url: l.url.clone(), browser_opened })
}

/// Wait for the login started by [`connect_start`] to land (up to its 10 minutes).
#[tauri::command]
pub async fn connect_wait(state: tauri::State<'_, AppState>, provider: String) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let l = state.links.current(p.name).ok_or_else(|| format!("No {} login was started; press Connect.", p.display))?;
    match l.wait(link::CALLBACK_WAIT + std::time::Duration::from_secs(5)).await {
        Some(Ok(c)) => Ok(Done { message: connected(&c), state: state_of(&state, p) }),
        Some(Err(e)) => Err(format!("Not connected: {e}")),
        None => Err("No browser came back in time; press Connect again.".into()),
    }
}

/// End access at the provider the way it allows (or say where to), and delete the local credential.
#[tauri::command]
pub async fn revoke(state: tauri::State<'_, AppState>, provider: String) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let f = forget::forget_in(p, &state.home).await?;
    Ok(Done { message: f.message, state: state_of(&state, p) })
}

/// Delete the saved client ID and secret.
#[tauri::command]
pub fn forget_app(state: tauri::State<'_, AppState>, provider: String) -> Result<Done, String> {
    let p = spec(&state, &provider)?;
    let st = settings(&state)?;
    let had = st.remove(p.name).map_err(|e| e.to_string())?;
    let message = if had {
        format!("Deleted the {} client ID and secret from {}.", p.display, st.path().display())
    } else {
        format!("No {} app credentials were saved in {}.", p.display, st.path().display())
    };
    Ok(Done { message, state: state_of(&state, p) })
}

/// Open the provider's portal (developer portal, key page) in the system browser (a link in the
/// window would navigate the window itself).
#[tauri::command]
pub fn open_portal(state: tauri::State<'_, AppState>, provider: String) -> Result<(), String> {
    let p = spec(&state, &provider)?;
    let portal = p.connection.portal().ok_or_else(|| format!("{} has no page to open.", p.display))?;
    vitals::accounts::browser::open(portal, state.home.config()).map_err(|e| format!("No browser could be opened: {e}"))
}

/// An instant in words for a person: relative to `now`, then the local date and time
/// ("in 16 hours (Sat 5 Dec, 11:16)", "3 days ago (Tue 1 Dec, 09:00)").
pub fn when(at_unix: i64, now: jiff::Timestamp) -> String {
    let Ok(at) = jiff::Timestamp::from_second(at_unix) else {
        return "at an unreadable time".into();
    };
    let secs = at.as_second() - now.as_second();
    let n = secs.abs();
    let amount = match n {
        0..60 => "less than a minute".to_string(),
        60..5_400 => plural(n / 60, "minute"),
        5_400..172_800 => plural((n + 1_800) / 3_600, "hour"),
        _ => plural((n + 43_200) / 86_400, "day"),
    };
    let local = at.to_zoned(jiff::tz::TimeZone::system()).strftime("%a %-d %b, %H:%M").to_string();
    if secs >= 0 {
        format!("in {amount} ({local})")
    } else {
        format!("{amount} ago ({local})")
    }
}

fn plural(n: i64, unit: &str) -> String {
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// A path under the home folder written from `~`, as a person reads it.
fn home_short(s: &str) -> String {
    match dirs::home_dir().map(|h| h.display().to_string()).filter(|h| h.len() > 1) {
        Some(home) => s.replace(&format!("{home}/"), "~/"),
        None => s.to_string(),
    }
}

/// What a finished login says in the window: that it worked, and any step still to come. The card
/// above it already says the expiry, the scopes and where the login is kept, once each.
fn connected(c: &grant::Connected) -> String {
    match c.pending_or_step() {
        Some(more) => format!("Connected {}. {more}", c.display),
        None => format!("Connected {}.", c.display),
    }
}
