//! The non-negotiables, checked on the source and on everything the server prints.
mod common;
use common::*;
use serde_json::json;
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Read-only: the server crate builds GET requests, plus exactly the POSTs a provider needs to
/// read: token requests (inside the `oauth2` crate, through `http::token_client`) and the revoke
/// that ends our own grant (`http::revoke`). No other file may name a method or a request builder.
#[test]
fn no_non_get_request_can_leave_the_server_crate() {
    let mut files = vec![];
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src"), &mut files);
    assert!(files.len() > 5);
    let forbidden = [".post(", ".put(", ".patch(", ".delete(", ".head(", ".request(", "Method::", "reqwest::Request"];
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        for pat in forbidden {
            let allowed = usize::from(f.ends_with("http.rs") && pat == ".post(");
            assert_eq!(src.matches(pat).count(), allowed, "{} contains {pat:?}: only GET may leave the crate (see http.rs)", f.display());
        }
        if f.ends_with("http.rs") {
            let post = src.find(".post(").unwrap();
            let owner = src[..post].rfind("pub async fn ").map(|i| &src[i..i + 30]).unwrap_or_default();
            assert!(owner.starts_with("pub async fn revoke("), "the one POST in http.rs is the revoke, not {owner:?}");
        } else {
            assert!(!src.contains("reqwest::Client"), "{} builds its own HTTP client; use http::Http", f.display());
        }
    }
}

/// And at run time: every request the twin saw from a full session was a GET with our User-Agent.
#[tokio::test(flavor = "multi_thread")]
async fn every_request_is_a_get_with_our_user_agent() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    s.ok("vitals_today", json!({"days": 2})).await;
    s.ok("vitals_check", json!({})).await;
    s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": "2026-06-10"})).await;
    s.close().await;
    let reqs = twin.requests();
    assert!(reqs.len() > 5);
    for r in reqs {
        assert_eq!(r.method, "GET", "{r:?}");
        assert!(r.user_agent.as_deref().unwrap_or("").starts_with("vitals/"), "{r:?}");
    }
}

/// Secrets never leak: run every tool and CLI command with a known token and known client secrets
/// (from the environment and from the settings file) and search all output.
const ENV_SECRET: &str = "env-client-SECRET-8c1f";
const FILE_SECRET: &str = "file-client-SECRET-77ad";

#[tokio::test(flavor = "multi_thread")]
async fn the_token_never_appears_in_any_output() {
    let twin = twin().await;
    twin.set_faults(Faults { server_error_next: 1, ..Default::default() });
    // A client secret from the environment and one from the settings file: neither may show.
    let cfg = std::env::temp_dir().join(format!("vitals-leak-{}", std::process::id()));
    vitals::accounts::Settings::at(&cfg).save("oura", "file-client-id", &vitals::secret::Secret::new(FILE_SECRET)).unwrap();
    let cfg_s = cfg.to_str().unwrap().to_string();
    let secrets: [(&str, &str); 3] = [("VITALS_OURA_CLIENT_ID", "env-client-id"), ("VITALS_OURA_CLIENT_SECRET", ENV_SECRET), ("VITALS_CONFIG_DIR", &cfg_s)];
    let s = connect(&twin, false, &secrets).await;
    let mut out = String::new();
    for (tool, args) in [
        ("vitals_sources", json!({})),
        ("vitals_check", json!({})),
        ("vitals_today", json!({"days": 1})),
        ("vitals_query", json!({"collection": "oura.daily_sleep", "day": "2026-06-10"})),
        ("vitals_query", json!({"collection": "oura.nope"})),
    ] {
        let r = s.call_raw(tool, args).await;
        out.push_str(&format!("{r:?}"));
    }
    twin.set_faults(Faults { unauthorized_from_page: Some(0), ..Default::default() });
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "oura.daily_sleep", "day": "2026-06-10"})).await));
    out.push_str(&s.close().await);
    twin.set_faults(Faults::default());
    for args in [&["--check"][..], &["--list-tools"], &["--help"], &["--bogus"], &["forget"], &["auth", "oura", "--manual"]] {
        let o = std::process::Command::new(server_bin())
            .args(args)
            .env("OURA_PAT", TOKEN)
            .env("VITALS_OURA_BASE_URL", twin.base_url())
            .env("VITALS_LOG", "debug")
            .env("VITALS_CONFIG_DIR", &cfg)
            .env("VITALS_OURA_CLIENT_SECRET", ENV_SECRET)
            .env("VITALS_TOKEN_STORE", "file")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        out.push_str(&String::from_utf8_lossy(&o.stdout));
        out.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    assert!(out.contains("personal_token"), "the check ran with the token");
    assert!(out.contains("from environment VITALS_OURA_CLIENT_ID") && out.contains("from settings file"), "both app-credential sources were reported");
    assert!(out.contains(&format!("{}", TOKEN.len())), "the token length is reported");
    for secret in [TOKEN, ENV_SECRET, FILE_SECRET] {
        assert!(!out.contains(secret), "{} characters of a secret leaked", secret.len());
        // Half of one is a leak too (a truncated or split value).
        let half = &secret[secret.len() / 2..];
        assert!(!out.contains(half), "part of a secret leaked");
    }
}
