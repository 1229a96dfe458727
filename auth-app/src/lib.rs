//! `vitals-settings`: one window to give a provider's app credentials, connect, see the state of
//! each login and revoke it. Everything it does is the server library's (`vitals::accounts`): the
//! same settings file, token store and browser login as `vitals-mcp`, so the server sees a change
//! on its next request.
pub mod commands;

/// What the window's commands share: the logins under way.
#[derive(Default)]
pub struct AppState {
    pub links: vitals::accounts::link::Links,
}

/// The app's commands and state on a builder (the real runtime, or the mock one in tests).
pub fn configure<R: tauri::Runtime>(b: tauri::Builder<R>) -> tauri::Builder<R> {
    b.manage(AppState::default()).invoke_handler(tauri::generate_handler![
        commands::providers,
        commands::save_app,
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
