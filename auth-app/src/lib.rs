//! `vitals-settings`: one window to connect each provider the way it connects (an OAuth app and a
//! browser login, a pasted key, a session login, an import), see the state of each login and
//! revoke it. Everything it does is the server library's (`vitals::accounts`): the same settings
//! file, token store and logins as `vitals-mcp`, so the server sees a change on its next request.
pub mod commands;

use vitals::catalog::ProviderSpec;

/// What the window's commands share.
pub struct AppState {
    /// The providers shown, in the server's order: every one that can be connected.
    pub providers: Vec<&'static ProviderSpec>,
    /// This computer's user, with the settings the app read from its environment once, at start.
    pub home: vitals::accounts::Home,
    /// The browser logins under way.
    pub links: vitals::accounts::link::Links,
    /// A session login waiting for its one-time code, per provider (memory only).
    pub waiting: std::sync::Mutex<std::collections::HashMap<&'static str, vitals::connection::SessionForm>>,
}

impl AppState {
    pub fn new(providers: Vec<&'static ProviderSpec>) -> AppState {
        let home = vitals::accounts::Home::local(std::sync::Arc::new(vitals::config::Config::from_env()));
        let links = vitals::accounts::link::Links::local(&home);
        AppState { providers: providers.into_iter().filter(|p| p.connection.connects()).collect(), home, links, waiting: Default::default() }
    }
}

/// The app's commands and the server's providers on a builder (the real runtime, or the mock one in tests).
pub fn configure<R: tauri::Runtime>(b: tauri::Builder<R>) -> tauri::Builder<R> {
    configure_with(b, vitals::providers::specs().collect())
}

/// The same with these providers (a test's own, with every connection kind).
pub fn configure_with<R: tauri::Runtime>(b: tauri::Builder<R>, providers: Vec<&'static ProviderSpec>) -> tauri::Builder<R> {
    b.manage(AppState::new(providers)).invoke_handler(tauri::generate_handler![
        commands::providers,
        commands::save_app,
        commands::save_key,
        commands::session_login,
        commands::session_code,
        commands::import,
        commands::choose_file,
        commands::connect_start,
        commands::connect_wait,
        commands::revoke,
        commands::forget_app,
        commands::open_portal,
    ])
}

pub fn run() {
    configure(tauri::Builder::default()).run(tauri::generate_context!()).expect("the vitals settings window starts");
}
