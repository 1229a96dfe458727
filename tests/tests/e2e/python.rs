//! The in-chat login driven by an independent client: Python `mcp` 2.3 (installed into
//! `target/e2e-py` on first run), on both lifecycles: `legacy` (initialize, 2025-11-25: an
//! `elicitation/create` with an id, then `notifications/elicitation/complete` with the same id) and
//! `auto` (2026-07-28: the `input_required` round, retried by the SDK itself).
use crate::common;
use common::login::*;
use common::*;
use std::path::PathBuf;
use std::process::Command;

/// The venv with `mcp==2.3.0`, made once (a lock file keeps parallel test binaries from racing).
fn python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(root.join("target"));
    let venv = target.join("e2e-py");
    let py = venv.join("bin/python");
    std::fs::create_dir_all(&target).unwrap();
    let lock = std::fs::File::create(target.join("e2e-py.lock")).unwrap();
    lock.lock().unwrap();
    let ready = Command::new(&py).args(["-c", "import mcp, mcp_types"]).output().is_ok_and(|o| o.status.success());
    if !ready {
        let need = "the Python client test needs python3 with venv and pip (Debian: python3-venv) and PyPI";
        assert!(Command::new("python3").args(["-m", "venv"]).arg(&venv).status().expect(need).success(), "{need}");
        let pip = Command::new(venv.join("bin/pip")).args(["install", "-q", "mcp==2.3.0"]).status().expect(need);
        assert!(pip.success(), "pip install mcp==2.3.0 failed: {need}");
    }
    py
}

fn drive(fx: &Fixture, mode: &str) -> serde_json::Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/connect.py");
    let mut c = Command::new(python());
    c.arg(script).arg(server_bin()).arg(mode).env_clear().env("VITALS_BROWSER", "none").env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in fx.env() {
        c.env(k, v);
    }
    let o =
        c.env("VITALS_OURA_BASE_URL", fx.twin.base_url()).env("VITALS_TZ", TZ).env("VITALS_TOKEN_STORE", "file").env("VITALS_LOG", "debug").output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string());
    assert!(o.status.success(), "the Python client failed:\n{out}\n{err}");
    let t = fx.stored().expect("the login was saved");
    for secret in [t.access.expose(), t.refresh.as_ref().unwrap().expose(), APP_SECRET] {
        assert!(!out.contains(secret) && !err.contains(secret), "a secret leaked into the client's or the server's output");
    }
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn python_mcp_connects_through_url_elicitation_on_2025_11_25() {
    let fx = Fixture::new("py-legacy").await;
    let fx_ref = &fx;
    let r = tokio::task::block_in_place(|| drive(fx_ref, "legacy"));
    assert_eq!(r["protocol"], "2025-11-25", "{r}");
    assert_eq!(r["connect_error"], false, "{r}");
    assert_eq!(r["connect"]["state"], "connected", "{r}");
    let id = r["elicited"][0]["id"].as_str().unwrap();
    assert!(id.len() >= 16, "{r}");
    assert_eq!(r["completed"], serde_json::json!([id]), "the complete notification names the elicitation: {r}");
    assert_eq!(r["pages"], serde_json::json!([200]));
    assert_eq!(r["page_says_connected"], true);
    assert_eq!(r["synthetic"], false, "real data after the login: {r}");
    assert_eq!(r["count"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn python_mcp_connects_through_input_required_on_2026_07_28() {
    let fx = Fixture::new("py-auto").await;
    let fx_ref = &fx;
    let r = tokio::task::block_in_place(|| drive(fx_ref, "auto"));
    assert_eq!(r["protocol"], "2026-07-28", "{r}");
    assert_eq!(r["connect"]["state"], "connected", "{r}");
    assert_eq!(r["elicited"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["elicited"][0]["id"], "", "no elicitationId on 2026-07-28: {r}");
    assert_eq!(r["completed"], serde_json::json!([]), "{r}");
    assert_eq!(r["synthetic"], false, "{r}");
    assert_eq!(r["count"], 3);
}

/// Issue 20: progress reaches an independent client too, and only one that asked for it.
#[tokio::test(flavor = "multi_thread")]
async fn python_mcp_gets_progress_on_a_long_read_only_when_it_asks() {
    use vitals_twin::wire::{Fault, Rule};
    let twin = twin().await;
    // The first answers trickle (about a second a page), so the read takes seconds.
    twin.wire(vec![Rule::data(1, 3, Fault::Slow { pause_ms: 1 })]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/progress.py");
    let (start, end) = (ds(ago(4)), ds(ago(1)));
    let py = tokio::task::block_in_place(python);
    let o = tokio::task::block_in_place(|| {
        Command::new(py)
            .arg(script)
            .arg(server_bin())
            .args([&start, &end])
            .env_clear()
            .env("VITALS_BROWSER", "none")
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("VITALS_OURA_BASE_URL", twin.base_url())
            .env("OURA_PAT", TOKEN)
            .env("VITALS_TZ", TZ)
            .env("VITALS_CACHE_MB", "0")
            .env("VITALS_CONCURRENCY", "2")
            .env("VITALS_TOKEN_STORE", "file")
            .env("VITALS_CONFIG_DIR", scratch().join("py-progress-config"))
            .output()
            .unwrap()
    });
    twin.wire(vec![]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "the Python client failed:\n{out}\n{err}");
    let r: serde_json::Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!((r["first_cut"].as_bool(), r["second_cut"].as_bool()), (Some(false), Some(false)), "{r}");
    let reports = r["reports"].as_array().unwrap();
    assert!(reports.len() >= 2, "{r}");
    assert!(reports.iter().all(|p| p["message"].as_str().unwrap().starts_with("oura.heartrate: ") && p["total"].as_f64() >= p["progress"].as_f64()), "{r}");
    assert_eq!(r["reports_without_token"], 0, "no token, no reports: {r}");
}
