//! The twin itself: the quirks and knobs the end-to-end suites rely on behave as the real API does.
use crate::common;
use common::*;
use serde_json::{json, Value};

async fn get(twin: &Twin, path_query: &str) -> (u16, Value) {
    let r = reqwest::Client::new().get(format!("{}{path_query}", twin.base_url())).bearer_auth(TOKEN).header("user-agent", "twin-test").send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn post(twin: &Twin, path: &str, body: Value) -> u16 {
    let r = reqwest::Client::new().post(format!("{}{path}", twin.base_url())).json(&body).send().await.unwrap();
    r.status().as_u16()
}

#[tokio::test]
async fn impossible_dates_get_fastapi_validation_errors() {
    let twin = twin().await;
    let (status, body) = get(&twin, "/v2/usercollection/daily_sleep?start_date=2026-02-29&end_date=2026-03-02").await;
    assert_eq!(status, 422);
    assert_eq!(body["detail"][0]["loc"], json!(["query", "start_date"]));
    let (status, _) = get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T25:00:00Z").await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn scope_and_membership_knobs_answer_403() {
    let twin = twin().await;
    assert_eq!(post(&twin, "/_twin/oura", json!({"denied_collections": ["heartrate"]})).await, 204);
    assert_eq!(get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T00:00:00Z").await.0, 403);
    assert_eq!(get(&twin, "/v2/usercollection/daily_sleep?start_date=2026-06-10").await.0, 200);
    post(&twin, "/_twin/oura", json!({"denied_collections": [], "membership_lapsed": true})).await;
    assert_eq!(get(&twin, "/v2/usercollection/daily_sleep?start_date=2026-06-10").await.0, 403);
    assert_eq!(post(&twin, "/_twin/oura", json!({"no_such_knob": 1})).await, 422, "unknown knobs are refused, not ignored");
}

#[tokio::test]
async fn the_count_based_rate_limit_refills_with_its_window() {
    let twin = twin().await;
    post(&twin, "/_twin/faults", json!({"rate_budget": {"requests": 3, "window_ms": 1500}})).await;
    let path = "/v2/usercollection/daily_sleep?start_date=2026-06-10&end_date=2026-06-11";
    for _ in 0..3 {
        assert_eq!(get(&twin, path).await.0, 200);
    }
    let r = reqwest::Client::new().get(format!("{}{path}", twin.base_url())).bearer_auth(TOKEN).header("user-agent", "t").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    let after: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&after), "Retry-After {after}");
    tokio::time::sleep(std::time::Duration::from_millis(1600)).await;
    assert_eq!(get(&twin, path).await.0, 200, "the window frees its slots");
}

#[tokio::test]
async fn late_sync_and_today_knobs_change_what_a_closed_day_holds() {
    let twin = twin().await;
    let path = "/v2/usercollection/daily_sleep?start_date=2026-06-10&end_date=2026-06-10";
    let (_, before) = get(&twin, path).await;
    post(&twin, "/_twin/oura", json!({"revised_days": ["2026-06-10"]})).await;
    let (_, after) = get(&twin, path).await;
    assert_eq!(before["data"][0]["id"], after["data"][0]["id"], "same record");
    assert_ne!(before["data"][0]["contributors"], after["data"][0]["contributors"], "re-analysed values");

    post(&twin, "/_twin/oura", json!({"now": "2026-06-20T15:00:00Z", "today_synced": false})).await;
    let today = "/v2/usercollection/daily_sleep?start_date=2026-06-20&end_date=2026-06-20";
    assert_eq!(get(&twin, today).await.1["data"], json!([]), "today's sleep is absent until the app syncs");
    post(&twin, "/_twin/oura", json!({"today_synced": true})).await;
    assert_eq!(get(&twin, today).await.1["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_dst_zone_gives_23_and_25_hour_days() {
    let tz = jiff::tz::TimeZone::get("America/Chicago").unwrap();
    let twin = twin_with(OuraConfig { tz, ..Default::default() }).await;
    let cfg = twin.state.oura.lock().unwrap().clone();
    let spring = vitals_twin::oura::expected(&cfg, "ring_battery_level", date("2026-03-08"), date("2026-03-08"));
    let fall = vitals_twin::oura::expected(&cfg, "ring_battery_level", date("2026-11-01"), date("2026-11-01"));
    assert_eq!(spring.len(), 23 * 12, "five-minute battery rows over a 23-hour day");
    assert_eq!(fall.len(), 25 * 12, "and over a 25-hour day");
    let last = spring.last().unwrap()["timestamp"].as_str().unwrap().to_string();
    assert!(last.as_str() < "2026-03-09T05:00:00+00:00", "{last}: the short day ends at 05:00 UTC");
}

#[tokio::test]
async fn naive_datetimes_are_read_as_utc() {
    // mcp-oura sends `T00:00:00` without an offset; how Oura reads that is unmeasured, the twin reads UTC.
    let twin = twin().await;
    let (status, naive) = get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T00:00:00&end_datetime=2026-06-10T01:00:00").await;
    assert_eq!(status, 200);
    let (_, utc) = get(&twin, "/v2/usercollection/heartrate?start_datetime=2026-06-10T00:00:00Z&end_datetime=2026-06-10T01:00:00Z").await;
    assert!(!naive["data"].as_array().unwrap().is_empty());
    assert_eq!(naive["data"], utc["data"]);
}

mod oauth {
    use super::*;
    use std::collections::HashMap;

    const REDIRECT: &str = "http://localhost:9876/callback/";
    // RFC 7636 appendix B: this verifier's S256 challenge.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    /// Follow the authorize URL like a browser whose user consents; the callback's query.
    async fn authorize(twin: &Twin, state: &str) -> HashMap<String, String> {
        let url = format!(
            "{}/oauth/authorize?response_type=code&client_id=twin-client&redirect_uri={}&scope=daily%20heartrate&state={state}&code_challenge={CHALLENGE}&code_challenge_method=S256",
            twin.base_url(),
            url_enc(REDIRECT)
        );
        let r = no_redirects().get(url).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 303, "a redirect to the callback");
        let to = r.headers()["location"].to_str().unwrap().to_string();
        assert!(to.starts_with(REDIRECT), "{to}");
        url::Url::parse(&to).unwrap().query_pairs().into_owned().collect()
    }

    fn url_enc(s: &str) -> String {
        url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
    }

    async fn token(twin: &Twin, path: &str, form: &[(&str, &str)]) -> (u16, Value) {
        let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let r = reqwest::Client::new()
            .post(format!("{}{path}", twin.base_url()))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    const NEW: &str = "/oauth/v2/ext/oauth-token";
    const LEGACY: &str = "/oauth/token";

    fn exchange<'a>(code: &'a str, verifier: &'a str) -> Vec<(&'a str, &'a str)> {
        vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", "twin-client"),
            ("client_secret", "twin-client-secret"),
            ("code_verifier", verifier),
        ]
    }

    fn refresh(r: &str) -> Vec<(&str, &str)> {
        vec![("grant_type", "refresh_token"), ("refresh_token", r), ("client_id", "twin-client"), ("client_secret", "twin-client-secret")]
    }

    async fn data(twin: &Twin, bearer: &str) -> u16 {
        reqwest::Client::new()
            .get(format!("{}/v2/usercollection/daily_sleep?start_date=2026-06-10&end_date=2026-06-11", twin.base_url()))
            .bearer_auth(bearer)
            .header("user-agent", "twin-test")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    #[tokio::test]
    async fn a_code_is_issued_with_state_and_iss_redeemed_once_with_pkce() {
        let twin = twin().await;
        let cb = authorize(&twin, "st-1").await;
        assert_eq!((cb["state"].as_str(), cb["iss"].as_str()), ("st-1", vitals_twin::oura::oauth::ISS));
        let code = cb["code"].clone();
        let (st, t) = token(&twin, NEW, &exchange(&code, "wrong-verifier")).await;
        assert_eq!((st, t["error"].as_str()), (400, Some("invalid_grant")), "a wrong PKCE verifier fails and burns the code");
        let code = authorize(&twin, "st-2").await["code"].clone();
        let (st, t) = token(&twin, NEW, &exchange(&code, VERIFIER)).await;
        assert_eq!(st, 200, "{t}");
        assert_eq!(t["scope"], "extapi:daily extapi:heartrate");
        assert_eq!(t["expires_in"], 86_400);
        assert_eq!(data(&twin, t["access_token"].as_str().unwrap()).await, 200, "the access token reads data");
        let (st, t) = token(&twin, NEW, &exchange(&code, VERIFIER)).await;
        assert_eq!((st, t["error"].as_str()), (400, Some("invalid_grant")), "a code works once");
    }

    #[tokio::test]
    async fn the_legacy_endpoint_refuses_new_portal_apps_and_burns_the_code() {
        let twin = twin().await;
        let code = authorize(&twin, "s").await["code"].clone();
        let (st, _) = token(&twin, LEGACY, &exchange(&code, VERIFIER)).await;
        assert_eq!(st, 401);
        let (st, _) = token(&twin, NEW, &exchange(&code, VERIFIER)).await;
        assert_eq!(st, 400, "the code tried at the legacy endpoint first is gone");
        let code = authorize(&twin, "s").await["code"].clone();
        let (_, t) = token(&twin, NEW, &exchange(&code, VERIFIER)).await;
        let (st, e) = token(&twin, LEGACY, &refresh(t["refresh_token"].as_str().unwrap())).await;
        assert_eq!((st, e["error"].as_str()), (400, Some("invalid_request")), "legacy refresh of a new-portal app");
        // A refused refresh does not spend the refresh token.
        assert_eq!(token(&twin, NEW, &refresh(t["refresh_token"].as_str().unwrap())).await.0, 200);
    }

    #[tokio::test]
    async fn refresh_tokens_rotate_and_work_once_and_access_tokens_expire_and_revoke() {
        let twin = twin().await;
        let code = authorize(&twin, "s").await["code"].clone();
        let (_, first) = token(&twin, NEW, &exchange(&code, VERIFIER)).await;
        let r1 = first["refresh_token"].as_str().unwrap().to_string();
        let (st, second) = token(&twin, NEW, &refresh(&r1)).await;
        assert_eq!(st, 200);
        assert_ne!(second["refresh_token"], first["refresh_token"], "a new refresh token every time");
        let (st, e) = token(&twin, NEW, &refresh(&r1)).await;
        assert_eq!((st, e["error_description"].as_str()), (400, Some("Refresh token already used")));
        let access = second["access_token"].as_str().unwrap().to_string();
        assert_eq!(data(&twin, &access).await, 200);
        twin.state.oauth.lock().unwrap().expire_access_tokens();
        assert_eq!(data(&twin, &access).await, 401, "an expired access token");
        let (_, third) = token(&twin, NEW, &refresh(second["refresh_token"].as_str().unwrap())).await;
        let access = third["access_token"].as_str().unwrap().to_string();
        let revoked = reqwest::Client::new().post(format!("{}/oauth/revoke?access_token={access}", twin.base_url())).send().await.unwrap();
        assert_eq!(revoked.status().as_u16(), 200);
        assert_eq!(data(&twin, &access).await, 401, "a revoked access token");
        assert_eq!(token(&twin, NEW, &refresh(third["refresh_token"].as_str().unwrap())).await.0, 400, "and its refresh token");
    }

    #[tokio::test]
    async fn a_refusal_comes_back_on_the_callback_and_wrong_redirects_are_refused() {
        let twin = twin().await;
        twin.state.oauth.lock().unwrap().deny = true;
        let cb = authorize(&twin, "s9").await;
        assert_eq!((cb["error"].as_str(), cb["state"].as_str()), ("access_denied", "s9"));
        let r = no_redirects()
            .get(format!(
                "{}/oauth/authorize?response_type=code&client_id=twin-client&redirect_uri={}&state=x",
                twin.base_url(),
                url_enc("http://localhost:9876/callback")
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 400, "the redirect must match exactly, trailing slash included");
    }
}

/// Withings' transport as the reference describes it: HTTP 200 and `{status, body}` always, the
/// action from the query or the form, the token from the header or a parameter.
#[tokio::test(flavor = "multi_thread")]
async fn withings_answers_inside_http_200_and_takes_parameters_from_query_or_form() {
    let twin = twin().await;
    let now = jiff::Timestamp::now();
    let (access, _) = twin.state.withings.lock().unwrap().oauth.grant("user.metrics", now);
    let c = reqwest::Client::new();
    let call = |req: reqwest::RequestBuilder| async move {
        let r = req.send().await.unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap_or(Value::Null))
    };
    let b = twin.base_url();
    // Form body with the header, and the old style: GET, everything (token too) in the query.
    let (http, v) = call(c.post(format!("{b}/v2/user")).bearer_auth(&access).form(&[("action", "getdevice")])).await;
    assert_eq!((http, v["status"].as_i64()), (200, Some(0)));
    let (_, v) = call(c.get(format!("{b}/v2/user?action=getdevice&access_token={access}"))).await;
    assert_eq!(v["status"], 0);
    // An unknown action, a missing scope, an unknown token: all HTTP 200.
    let (http, v) = call(c.post(format!("{b}/v2/measure")).bearer_auth(&access).form(&[("action", "deletemeas")])).await;
    assert_eq!((http, v["status"].as_i64(), v["body"].clone()), (200, Some(2554), json!({})));
    let (_, v) = call(c.post(format!("{b}/v2/measure")).bearer_auth(&access).form(&[
        ("action", "getactivity"),
        ("startdateymd", "2026-06-01"),
        ("enddateymd", "2026-06-02"),
    ]))
    .await;
    assert_eq!(v["status"], 214, "user.activity was not granted");
    let (http, v) = call(c.post(format!("{b}/measure")).bearer_auth("0123456789abcdef0123456789abcdef01234567").form(&[("action", "getmeas")])).await;
    assert_eq!((http, v["status"].as_i64()), (200, Some(401)));
    assert_eq!(v["error"], vitals_twin::withings::INVALID_TOKEN);
    // Both date forms at once are invalid params; paging says `more` as 0/1 on getmeas.
    let (_, v) = call(c.post(format!("{b}/measure")).bearer_auth(&access).form(&[
        ("action", "getmeas"),
        ("startdate", "1780000000"),
        ("enddate", "1781000000"),
        ("lastupdate", "1"),
    ]))
    .await;
    assert_eq!(v["status"], 503);
    let (_, v) =
        call(c.post(format!("{b}/measure")).bearer_auth(&access).form(&[("action", "getmeas"), ("startdate", "1780000000"), ("enddate", "1782000000")])).await;
    assert_eq!(v["body"]["more"], 1, "25 groups a page: {}", v["body"]["measuregrps"].as_array().unwrap().len());
    // A real HTTP 502 with an HTML page.
    twin.withings(|w| w.cfg.faults.html_502_next = 1);
    let r = c.post(format!("{b}/v2/user")).bearer_auth(&access).form(&[("action", "getdevice")]).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 502);
    assert!(r.text().await.unwrap().starts_with("<html>"));
    // A budget per application and minute (120 for real), then status 601: the calls above
    // already spent this minute's 5, another application's token still gets through.
    twin.withings(|w| w.cfg.rate_per_minute = Some(5));
    let (_, v) = call(c.post(format!("{b}/v2/user")).bearer_auth(&access).form(&[("action", "getdevice")])).await;
    assert_eq!((v["status"].as_i64(), v["body"]["wait_seconds"].as_i64()), (Some(601), Some(1)));
    let other = {
        let mut w = twin.state.withings.lock().unwrap();
        let mut app = w.oauth.apps[0].clone();
        app.client_id = "another-app".into();
        w.oauth.apps.insert(0, app);
        w.oauth.grant("user.metrics", now).0
    };
    let (_, v) = call(c.post(format!("{b}/v2/user")).bearer_auth(&other).form(&[("action", "getdevice")])).await;
    assert_eq!(v["status"], 0);
}

/// The twin is a set of providers: each of `TWINS` answers below its own prefix only, prefixes are
/// unique, and a path no twin serves is a 404 rather than another provider's answer.
#[tokio::test(flavor = "multi_thread")]
async fn each_mounted_twin_answers_below_its_own_prefix_only() {
    let twin = twin().await;
    let prefixes: std::collections::HashSet<&str> = vitals_twin::TWINS.iter().map(|t| t.prefix).collect();
    assert_eq!(prefixes.len(), vitals_twin::TWINS.len(), "two twins share a prefix");
    for t in vitals_twin::TWINS {
        assert!(vitals::providers::spec(t.provider).is_some(), "{} is a provider of the registry", t.provider);
    }
    let c = reqwest::Client::new();
    let status = |url: String| {
        let c = c.clone();
        async move { c.get(url).header("user-agent", "t").send().await.unwrap().status().as_u16() }
    };
    // Each provider's own refusal of a request without a token, below its prefix.
    assert_eq!(status(format!("{}/v3/users/12345678/activities", twin.mounted("polar"))).await, 401);
    assert_eq!(status(format!("{}/developer/v2/cycle", twin.mounted("whoop"))).await, 401);
    assert_ne!(status(format!("{}/wellness-api/rest/dailies", twin.mounted("garmin"))).await, 404);
    // The same paths at the root, or below another provider's prefix, are nobody's.
    for path in ["/v3/users/12345678/activities", "/developer/v2/cycle", "/wellness-api/rest/dailies", "/polar/developer/v2/cycle", "/whoop/v3/users"] {
        assert_eq!(status(format!("{}{path}", twin.base_url())).await, 404, "{path}");
    }
}
