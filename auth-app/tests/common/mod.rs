//! What the settings app's command tests share: a window on the mock runtime, and a command
//! invoked as the window does.
#![allow(dead_code)]
use serde_json::Value;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;

pub type Window = tauri::WebviewWindow<MockRuntime>;

/// The app, configured by `configure` (the server's providers, or a test's own), and its window.
pub fn app(configure: impl FnOnce(tauri::Builder<MockRuntime>) -> tauri::Builder<MockRuntime>) -> (tauri::App<MockRuntime>, Window) {
    let app = configure(mock_builder()).build(mock_context(noop_assets())).unwrap();
    let wv = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, wv)
}

/// Invoke a command as the window does; Ok(value) or Err(the error text).
pub fn invoke(wv: &Window, cmd: &str, args: Value) -> Result<Value, String> {
    let req = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: if cfg!(windows) { "http://tauri.localhost" } else { "tauri://localhost" }.parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(wv, req).map(|b| b.deserialize::<Value>().unwrap()).map_err(|e| e.as_str().map(str::to_string).unwrap_or(e.to_string()))
}
