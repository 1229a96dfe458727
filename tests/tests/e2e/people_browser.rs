//! A person onboards in a real browser (issue 40): headless Chromium (Debian's) at a phone's size,
//! web security on, so the pages' CSP (no script; forms only to this server and, for Connect, the
//! provider's login page) is the browser's to enforce. From an invitation it makes the tenant,
//! connects Oura and Google Health through the twins' OAuth and the server's callback, pastes a Garmin key, and signs
//! in to Garmin Connect with a one-time code; each page is screenshotted for README. The password
//! and the code are then searched for in the server's log, every page seen and every file written.
use super::common::*;
use super::http::serve_tenants;
use super::http::{folder, tenant};
use super::people::{every_file, tenants_in};
use std::time::Duration;
use vitals_twin::apps_host::Browser;
use vitals_twin::garmin_connect::{GarminConnect, CODE, EMAIL, PASSWORD};

/// Until the page's address satisfies `ok` (a form's answer may take a moment); its HTML.
async fn landed(b: &Browser, ok: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        if ok(&b.url().await) {
            return b.source().await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the browser is at {}: {}", b.url().await, b.source().await);
}

/// Until the page holds `text` (a form posted to its own address answers at the same URL); its HTML.
async fn showing(b: &Browser, text: &str) -> String {
    for _ in 0..100 {
        let html = b.source().await;
        if html.contains(text) {
            return html;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the page never showed {text:?}: {}", b.source().await);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_onboards_in_a_real_browser_on_a_phone() {
    let fx = login::Fixture::new("people-browser").await;
    fx.twin.garmin_connect(|g| g.mfa = Some("email"));
    let tenants = folder("people-browser-tenants");
    let base = fx.twin.base_url();
    let mut env: Vec<(String, String)> = fx.env().into_iter().filter(|(k, _)| k != "VITALS_OURA_REDIRECT_URI" && k != "VITALS_CONFIG_DIR").collect();
    env.extend(GarminConnect::env(&base).into_iter().map(|(k, v)| (k.to_string(), v)));
    env.push(("VITALS_GARMIN_BASE_URL".into(), fx.twin.mounted("garmin")));
    env.extend(google_health_env(&fx.twin));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (public, log, _child) = serve_tenants(&fx.twin, &fx.dir, &tenants, &env, &[]).await;
    let link = tenant(&fx.twin, &tenants, &["invite", "--public-url", &public]).await.unwrap();
    let b = Browser::start_with(&scratch().join(format!("chromium-people-{}", std::process::id())), (390, 844), true).await;
    let mut seen = vec![];

    // The invitation, the privacy text, one button.
    b.open(&link).await;
    seen.push(landed(&b, |u| u.contains("/join/")).await);
    assert!(seen.last().unwrap().contains("What vitals reads and keeps"));
    b.screenshot("people-join").await;
    b.click("button[type=submit]").await;
    seen.push(showing(&b, "data-key").await);
    let key = b.text_of("[data-key]").await;
    assert!(key.starts_with("vk-"), "{key}");
    b.screenshot("people-welcome").await;
    assert_eq!(tenants_in(&tenants).len(), 1);

    // Oura, by the provider's login and back to the server's one callback (the CSP lets the form
    // end at the twin's login page).
    fx.twin.state.oauth.lock().unwrap().apps[0].redirect_uri = format!("{public}/callback/oura");
    b.open(&format!("{public}/me")).await;
    seen.push(landed(&b, |u| u.ends_with("/me")).await);
    b.screenshot("people-me").await;
    b.click("[data-provider=oura] button[type=submit]").await;
    let back = landed(&b, |u| u.contains("/callback/oura")).await;
    assert!(back.contains("is connected"), "{back}");
    seen.push(back);
    b.click("a[href='/me']").await;
    seen.push(landed(&b, |u| u.ends_with("/me")).await);
    assert!(seen.last().unwrap().contains("data-provider=\"oura\" data-connected=\"true\""));

    // Google Health the same way: Google's consent page (PKCE, offline access) and back.
    fx.twin.google_health(|g| g.cfg.redirect = format!("{public}/callback/google-health"));
    b.click("[data-provider=google-health] button[type=submit]").await;
    let back = landed(&b, |u| u.contains("/callback/google-health")).await;
    assert!(back.contains("is connected"), "{back}");
    seen.push(back);
    b.click("a[href='/me']").await;
    seen.push(landed(&b, |u| u.ends_with("/me")).await);
    assert!(seen.last().unwrap().contains("data-provider=\"google-health\" data-connected=\"true\""));

    // Garmin's key, pasted.
    b.click("a[href='/me/key/garmin']").await;
    seen.push(landed(&b, |u| u.contains("/me/key/garmin")).await);
    b.screenshot("people-garmin-key").await;
    b.type_into("#key", vitals_twin::garmin::KEY).await;
    b.click("button[type=submit]").await;
    seen.push(showing(&b, "data-provider=\"garmin\" data-connected=\"true\"").await);

    // Garmin Connect: email and password, then the code Garmin sent.
    b.open(&format!("{public}/me/login/garmin-connect")).await;
    seen.push(landed(&b, |u| u.contains("/me/login/")).await);
    b.screenshot("people-garmin-connect").await;
    b.type_into("#email", EMAIL).await;
    b.type_into("#password", PASSWORD).await;
    b.click("button[type=submit]").await;
    seen.push(showing(&b, "name=\"code\"").await);
    b.screenshot("people-garmin-code").await;
    b.type_into("#code", CODE).await;
    b.click("button[type=submit]").await;
    seen.push(showing(&b, "data-provider=\"garmin-connect\" data-connected=\"true\"").await);
    b.screenshot("people-connected").await;
    b.close().await;

    // The password and the code: in no page, no log line, no file.
    let said = std::fs::read_to_string(&log).unwrap();
    let files: Vec<String> =
        [&tenants, &fx.dir].iter().flat_map(|d| every_file(d)).map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).to_string()).collect();
    for secret in [PASSWORD, CODE] {
        assert!(!said.contains(secret), "the log carries {secret}");
        assert!(seen.iter().all(|p| !p.contains(secret)), "a page carries {secret}");
        assert!(files.iter().all(|f| !f.contains(secret)), "a file carries {secret}");
    }
    assert!(!said.contains(&key), "the log carries the sign-in key");
    fx.twin.garmin_connect(|g| g.mfa = None);
}
