//! The non-negotiables, checked on the source and on everything the server prints.
use crate::common;
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

/// Read-only, as data: every request other than a GET that a provider may send is declared in its
/// catalog (`ProviderSpec::non_gets`: its own `NonGet`s, its OAuth token endpoints and revoke), each
/// with why; all are POSTs; none is a route data is read from with a GET.
#[test]
fn every_non_get_request_is_declared_with_why_in_a_catalog() {
    let mut table = vec![];
    for spec in vitals::providers::specs() {
        let gets: Vec<&str> = spec.collections.iter().map(|c| c.path).collect();
        for (method, route, why) in spec.non_gets() {
            assert_eq!(method, "POST", "{}: {method} {route}: vitals sends no other method", spec.name);
            assert!(route.starts_with('/') && route.len() > 1, "{}: {route:?} is a route", spec.name);
            assert!(why.split_whitespace().count() >= 5, "{}: {route} says why in words: {why:?}", spec.name);
            // A provider that reads with POSTs (Withings) declares its read routes; nobody else
            // may declare a route it reads data from.
            let reads_by_post = gets.iter().any(|g| route.trim_start_matches('/') == *g);
            assert!(!reads_by_post || why.contains("form POST"), "{}: {route} is a data route declared as a POST", spec.name);
            table.push(format!("{} {method} {route}: {why}", spec.name));
        }
    }
    eprintln!("declared non-GET requests:\n{}", table.join("\n"));
    assert!(table.len() >= 15, "{table:#?}");
    // Withings' reads carry one of its read actions and nothing else (reference §1): `list` and
    // `get` are the heart and high-resolution sleep services' reads.
    assert_eq!(vitals::http::READ_ACTIONS, ["getmeas", "getactivity", "getworkouts", "getintradayactivity", "getsummary", "getdevice", "list", "get"]);
}

/// Read-only, in the source: no file of the server crate but `http.rs` names an HTTP method or a
/// request builder, and in `http.rs` every function that builds a POST checks its URL against the
/// declarations (`allowed`, or `token_post`'s own check) before it builds it.
#[test]
fn no_request_but_a_declared_one_can_leave_the_server_crate() {
    // A fact of the workspace: of the server's crates, only the core depends on the HTTP library, so
    // no other crate can send a request but through the core's client.
    let meta = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).expect("cargo metadata");
    let server = ["vitals", "vitals-core", "vitals-providers", "vitals-engine", "vitals-settings"];
    let mut with_http = vec![];
    for p in meta["packages"].as_array().unwrap().iter().filter(|p| server.contains(&p["name"].as_str().unwrap())) {
        let normal = p["dependencies"].as_array().unwrap().iter().filter(|d| d["kind"].is_null());
        if normal.into_iter().any(|d| ["reqwest", "hyper", "ureq", "isahc", "surf"].contains(&d["name"].as_str().unwrap())) {
            with_http.push(p["name"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(with_http, ["vitals-core"], "only the core crate may depend on an HTTP client library");
    // Inside the core: only http.rs builds a request, and each POST there is checked first.
    let mut files = vec![];
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/core/src"), &mut files);
    assert!(files.len() > 5);
    let builders = [".post(", ".put(", ".patch(", ".delete(", ".head(", ".request(", ".form(", "Method::", "reqwest::Request", "AsyncHttpClient::call"];
    let mut posts = 0;
    for f in &files {
        // `ReadMethod::` is our own enum of the two ways to read, not an HTTP method type.
        let src = std::fs::read_to_string(f).unwrap().replace("ReadMethod::", "");
        if !f.ends_with("http.rs") {
            for pat in builders {
                assert!(!src.contains(pat), "{} contains {pat:?}: only http.rs sends requests", f.display());
            }
            assert!(!src.contains("reqwest::Client"), "{} builds its own HTTP client; use http::Http", f.display());
            continue;
        }
        let code = &src[..src.find("#[cfg(test)]").unwrap_or(src.len())];
        for pat in [".put(", ".patch(", ".delete(", ".head(", ".request(", "Method::", "reqwest::Request"] {
            assert!(!code.contains(pat), "http.rs contains {pat:?}: vitals sends GETs and declared POSTs only");
        }
        // Each function, from its `fn` to the next one's.
        let starts: Vec<usize> = code.match_indices("fn ").map(|(i, _)| i).collect();
        for (n, at) in starts.iter().enumerate() {
            let body = &code[*at..starts.get(n + 1).copied().unwrap_or(code.len())];
            let name = body[3..].split(['(', '<']).next().unwrap_or("");
            for pat in [".post(", "AsyncHttpClient::call", ".form("] {
                let Some(built) = body.find(pat) else { continue };
                posts += 1;
                let checked = body.find("allowed(").is_some_and(|c| c < built);
                assert!(checked, "http.rs: `{name}` builds a POST ({pat}) without checking its route against the declarations first");
            }
        }
    }
    assert!(posts >= 8, "the scan found the POSTs of http.rs ({posts})");
}

/// And at run time: every request the twin saw from full sessions (Oura with a token, Withings
/// and Polar with a login) was a GET or a POST to a route a catalog declares (a Withings service
/// with a read action, Polar's registration), with our User-Agent.
#[tokio::test(flavor = "multi_thread")]
async fn every_request_is_a_read_with_our_user_agent() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    s.ok("vitals_today", json!({"days": 2})).await;
    s.ok("vitals_check", json!({})).await;
    s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": "2026-06-10"})).await;
    s.close().await;
    let login = WithingsLogin::new(&twin, "readonly");
    let s = login.server(&twin, &[]).await;
    s.ok("vitals_today", json!({"days": 2})).await;
    s.ok("vitals_check", json!({})).await;
    // Every collection: one read by id (an ECG's signal, by the id its listing gave) and the others over a day.
    let ecgs = s.ok("vitals_query", json!({"collection": "withings.ecg", "start": "2026-06-01", "end": "2026-06-30", "format": "records"})).await;
    let signal = ecgs["data"][0]["id"].as_str().expect("an ECG in June").to_string();
    for c in vitals::providers::withings::catalog::WITHINGS.collections {
        let args = if c.by_id { json!({"id": signal}) } else { json!({"day": "2026-06-10"}) };
        let mut args = args.as_object().unwrap().clone();
        args.insert("collection".into(), json!(format!("withings.{}", c.name)));
        s.ok("vitals_query", serde_json::Value::Object(args)).await;
    }
    s.close().await;
    // Polar, every collection and an export.
    let s = crate::polar::connected(&twin, "readonly", &[]).await;
    s.ok("vitals_today", json!({"days": 2})).await;
    s.ok("vitals_check", json!({})).await;
    for c in vitals::providers::polar::catalog::POLAR.collections {
        s.ok("vitals_query", json!({"collection": format!("polar.{}", c.name)})).await;
    }
    s.close().await;
    let reqs = twin.requests();
    assert!(reqs.iter().filter(|r| r.method == "POST").count() >= 7, "the Withings reads were seen");
    assert!(reqs.iter().filter(|r| r.path.starts_with("/v3/")).count() >= 8, "the Polar reads were seen");
    let declared: Vec<(String, String)> = vitals::providers::specs().flat_map(|s| s.non_gets()).map(|(m, r, _)| (m, r)).collect();
    for r in reqs {
        let action: Option<String> = url::form_urlencoded::parse(r.query.as_bytes()).find(|(k, _)| k == "action").map(|(_, v)| v.to_string());
        match r.method.as_str() {
            "GET" => {}
            // A declared route (Polar's registration, Withings' form reads), and a form read carries a read action.
            m => {
                assert!(declared.iter().any(|(dm, route)| dm == m && r.path.ends_with(route.as_str())), "an undeclared {m}: {r:?}");
                if r.path.starts_with("/v3/") {
                    assert_eq!(r.path, vitals::providers::polar::auth::REGISTRATION, "{r:?}");
                } else {
                    assert!(action.as_deref().is_some_and(|a| vitals::http::READ_ACTIONS.contains(&a)), "{r:?}");
                }
            }
        }
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
    let cfg = common::scratch().join(format!("vitals-leak-{}", std::process::id()));
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
        let o = vitals_cmd()
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

/// The same for a Withings login: its access and refresh tokens (before and after rotation) and
/// its client secret appear in no tool result, log line or CLI output, on success or failure.
#[tokio::test(flavor = "multi_thread")]
async fn withings_tokens_and_secret_never_appear_in_any_output() {
    let twin = twin().await;
    let login = WithingsLogin::new(&twin, "leak");
    let s = login.server(&twin, &[]).await;
    let mut out = String::new();
    for (tool, args) in [
        ("vitals_sources", json!({})),
        ("vitals_check", json!({})),
        ("vitals_today", json!({"days": 1})),
        ("vitals_query", json!({"collection": "withings.measurements", "day": "2026-06-10"})),
        ("vitals_connect", json!({"provider": "withings"})),
    ] {
        out.push_str(&format!("{:?}", s.call_raw(tool, args).await));
    }
    twin.withings(|w| w.oauth.expire_access_tokens());
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "withings.activity", "day": "2026-06-10"})).await));
    let rotated = login.stored();
    // A dead refresh token: the failure is reported, without the token.
    let mut dead = rotated.clone();
    dead.refresh = Some(vitals::secret::Secret::new("deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"));
    vitals::accounts::TokenStore::file(&login.dir).save("withings", &dead).unwrap();
    twin.withings(|w| w.oauth.expire_access_tokens());
    out.push_str(&format!("{:?}", s.call_raw("vitals_query", json!({"collection": "withings.sleep", "day": "2026-06-10", "forget": true})).await));
    out.push_str(&s.close().await);
    for args in [&["--check"][..], &["auth", "withings", "--manual"], &["forget", "withings"]] {
        let mut cmd = vitals_cmd();
        cmd.args(args).env("VITALS_LOG", "debug").env("VITALS_TOKEN_STORE", "file").stdin(std::process::Stdio::null());
        for (k, v) in &login.env {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        out.push_str(&String::from_utf8_lossy(&o.stdout));
        out.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    assert!(out.contains("credential_refreshed") && out.contains("withings_status_"), "the refresh and its failure were exercised");
    let secrets = [
        login.access.clone(),
        login.refresh.clone(),
        rotated.access.expose().to_string(),
        rotated.refresh.unwrap().expose().to_string(),
        WITHINGS_APP_SECRET.to_string(),
    ];
    for secret in &secrets {
        assert!(!out.contains(secret.as_str()), "{} characters of a secret leaked", secret.len());
        assert!(!out.contains(&secret[secret.len() / 2..]), "part of a secret leaked");
    }
}

/// Settings passed in, in the source: below the binary nothing reads the process's environment.
/// `main.rs` reads it once into a `Config` (`core/src/config.rs` is that reading, `env.rs` how a
/// value is read) and hands it down, so two servers with their own settings can share a process.
/// Test modules may set variables of their own; the code they test may not read them.
#[test]
fn nothing_below_the_binary_reads_the_environment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server");
    let mut files = vec![];
    for crate_src in ["core/src", "providers/src", "engine/src", "src"] {
        rust_files(&root.join(crate_src), &mut files);
    }
    let allowed = ["core/src/env.rs", "core/src/config.rs", "server/src/main.rs"];
    let reads = ["env::var", "env::flag", "env::vars", "Config::from_env(", "env::home_dir", "var_os("];
    let mut found = vec![];
    for f in files.iter().filter(|f| !allowed.iter().any(|a| f.ends_with(a))) {
        let src = std::fs::read_to_string(f).unwrap();
        let code = &src[..src.find("#[cfg(test)]\nmod tests").unwrap_or(src.len())];
        for pat in reads.iter().filter(|p| code.contains(*p)) {
            found.push(format!("{} reads the environment ({pat})", f.strip_prefix(&root).unwrap_or(f).display()));
        }
    }
    assert!(files.len() > 100, "the scan found the server's files ({})", files.len());
    assert!(found.is_empty(), "read the setting from the Config handed down instead:\n{}", found.join("\n"));
}
