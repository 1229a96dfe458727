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

/// Read-only: the server crate builds GET requests, plus exactly the POSTs a provider needs to
/// read: token requests (inside the `oauth2` crate, through `http::token_client`), the revoke that
/// ends our own grant (`http::revoke`), Withings' form reads (`Http::read`), whose `action` must be
/// one of [`vitals::http::READ_ACTIONS`], and Polar's registration (`http::register_polar_user`),
/// to exactly [`vitals::http::POLAR_REGISTRATION`], Garmin's key exchange, and Garmin Connect's
/// sign-in (to [`vitals::http::GARMIN_SSO_POSTS`] only) and token endpoint. No other file may name a
/// method or a request builder.
#[test]
fn no_non_get_request_can_leave_the_server_crate() {
    let mut files = vec![];
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/src"), &mut files);
    assert!(files.len() > 5);
    let forbidden = [".post(", ".put(", ".patch(", ".delete(", ".head(", ".request(", ".form(", "Method::", "reqwest::Request"];
    for f in &files {
        // `ReadMethod::` is our own enum of the two ways to read, not an HTTP method type.
        let src = std::fs::read_to_string(f).unwrap().replace("ReadMethod::", "");
        for pat in forbidden {
            let allowed = if !f.ends_with("http.rs") {
                0
            } else {
                match pat {
                    ".post(" => 7,
                    ".form(" => 1,
                    _ => 0,
                }
            };
            assert_eq!(src.matches(pat).count(), allowed, "{} contains {pat:?}: only reads may leave the crate (see http.rs)", f.display());
        }
        if f.ends_with("http.rs") {
            let owners: Vec<&str> =
                src.match_indices(".post(").map(|(i, _)| src[..i].rfind("pub async fn ").map(|j| &src[j..j + 22]).unwrap_or_default()).collect();
            assert_eq!(
                owners,
                [
                    "pub async fn read(&sel",
                    "pub async fn revoke(ur",
                    "pub async fn register_",
                    "pub async fn exchange_",
                    "pub async fn garmin_ss",
                    "pub async fn garmin_di",
                    "pub async fn garmin_oa"
                ],
                "the POSTs in http.rs are the guarded read, the revoke, Polar's registration, Garmin's key exchange, Garmin Connect's \
                 sign-in, its token endpoint and its OAuth1 exchange"
            );
            let o1 = &src[src.find("pub async fn garmin_oauth1_exchange(").unwrap()..];
            let o1 = &o1[..o1.find("\n}\n").unwrap()];
            assert!(o1.contains("format!(\"{}{GARMIN_OAUTH1_EXCHANGE}\""), "the OAuth1 exchange goes to its one route and nowhere else");
            let sso = &src[src.find("pub async fn garmin_sso_post(").unwrap()..];
            let sso = &sso[..sso.find("\n    }\n").unwrap()];
            assert!(
                sso.find("GARMIN_SSO_POSTS.contains(&path)").expect("the sign-in POST checks its path") < sso.find(".post(").unwrap(),
                "the sign-in's path is checked before the POST is built"
            );
            let reg = &src[src.find("pub async fn register_polar_user(").unwrap()..];
            let reg = &reg[..reg.find("\n}\n").unwrap()];
            assert!(reg.contains("format!(\"{}{POLAR_REGISTRATION}\""), "the registration POST goes to its one route and nowhere else");
            let ex = &src[src.find("pub async fn exchange_garmin_key(").unwrap()..];
            let ex = &ex[..ex.find("\n}\n").unwrap()];
            assert!(ex.contains("format!(\"{}{GARMIN_KEY_EXCHANGE}\""), "the key exchange goes to its one route and nowhere else");
            let read = &src[src.find("pub async fn read(").unwrap()..src.find("pub async fn read(").unwrap() + 900];
            let guard = read.find("READ_ACTIONS.contains(&action)").expect("the form POST checks its action");
            assert!(guard < read.find(".post(").unwrap(), "the action is checked before the POST is built");
        } else {
            assert!(!src.contains("reqwest::Client"), "{} builds its own HTTP client; use http::Http", f.display());
        }
    }
    assert_eq!(vitals::http::POLAR_REGISTRATION, "/v3/users");
    assert_eq!(vitals::http::GARMIN_KEY_EXCHANGE, "/personalapitoken-service/personal-api/personal-api-key/token");
    // Garmin Connect's login and one-time code, for its two SSO variants, and nothing else (reference garmin §2.1).
    assert_eq!(vitals::http::GARMIN_OAUTH1_EXCHANGE, "/oauth-service/oauth/exchange/user/2.0");
    assert_eq!(vitals::http::GARMIN_SSO_POSTS, ["/mobile/api/login", "/mobile/api/mfa/verifyCode", "/portal/api/login", "/portal/api/mfa/verifyCode"]);
    // Withings' read services and nothing else (reference §1).
    assert_eq!(vitals::http::READ_ACTIONS, ["getmeas", "getactivity", "getworkouts", "getintradayactivity", "getsummary", "getdevice"]);
}

/// And at run time: every request the twin saw from full sessions (Oura with a token, Withings
/// and Polar with a login) was a GET, a POST to a Withings service whose action is a read, or
/// Polar's registration, with our User-Agent.
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
    for c in ["measurements", "blood_pressure", "activity", "sleep", "workouts", "intraday", "devices"] {
        s.ok("vitals_query", json!({"collection": format!("withings.{c}"), "day": "2026-06-10"})).await;
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
    for r in reqs {
        let action: Option<String> = url::form_urlencoded::parse(r.query.as_bytes()).find(|(k, _)| k == "action").map(|(_, v)| v.to_string());
        match r.method.as_str() {
            "GET" => {}
            // Polar's registration: the one POST to its API (run after a login, never a data write).
            "POST" if r.path.starts_with("/v3/") => assert_eq!(r.path, vitals::http::POLAR_REGISTRATION, "{r:?}"),
            "POST" => assert!(action.as_deref().is_some_and(|a| vitals::http::READ_ACTIONS.contains(&a)), "{r:?}"),
            _ => panic!("{r:?}"),
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
