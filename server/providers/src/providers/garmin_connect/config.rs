//! Everything of Garmin Connect's private API that Garmin changes without notice, as data: hosts
//! (each overridable, which is also how the twin stands in), the SSO variants in the order they
//! are tried, the DI client ids in order, the pause Cloudflare wants between page and login, and
//! the headers the mobile app sends (reference garmin/README.md §1, §2.1, §2.4, §4). The next
//! Garmin change should be a diff of this file.
use crate::catalog::NonGet;
use crate::config::Config;
use std::time::Duration;

/// The one route of flow B's OAuth1 → OAuth2 exchange, relative to Garmin Connect's data host.
pub const OAUTH1_EXCHANGE: &str = "/oauth-service/oauth/exchange/user/2.0";

/// What Garmin Connect's catalog declares it sends besides GETs (`ProviderSpec.non_get`): its
/// sign-in, for each SSO variant, and its token endpoints. None writes the user's data.
pub static NON_GET: &[NonGet] = &[
    NonGet::post("/mobile/api/login", "Garmin's mobile sign-in: email and password for a service ticket (reference §2.1)"),
    NonGet::post("/mobile/api/mfa/verifyCode", "the one-time code of the mobile sign-in"),
    NonGet::post("/portal/api/login", "the web portal's sign-in, when the mobile one is gone"),
    NonGet::post("/portal/api/mfa/verifyCode", "the one-time code of the portal's sign-in"),
    NonGet::post("/di-oauth2-service/oauth/token", "the DI token endpoint: a ticket exchanged, a DI token refreshed (reference §2.4)"),
    NonGet::post(OAUTH1_EXCHANGE, "the previous login generation's OAuth1 → OAuth2 exchange (reference §2.3)"),
];

/// The SSO host: sign-in pages, the JSON login, the one-time code.
pub const SSO_ENV: &str = "VITALS_GARMIN_SSO_URL";
const SSO: &str = "https://sso.garmin.com";
/// The data API.
pub const API_ENV: &str = "VITALS_GARMIN_CONNECT_API_URL";
const API: &str = "https://connectapi.garmin.com";
/// The DI OAuth2 token endpoint (flow C's tickets and refreshes).
pub const DI_TOKEN_ENV: &str = "VITALS_GARMIN_DI_TOKEN_URL";
const DI_TOKEN: &str = "https://diauth.garmin.com/di-oauth2-service/oauth/token";
/// Milliseconds between the sign-in page and the login POST (Cloudflare flags an instant one).
pub const PAUSE_ENV: &str = "VITALS_GARMIN_LOGIN_PAUSE_MS";
const PAUSE: Duration = Duration::from_millis(3000);

// Each read from the server's settings (`Config`), where the binary put the environment's values.
fn host(c: &Config, var: &str, default: &str) -> String {
    c.url(var, default)
}
pub fn sso(c: &Config) -> String {
    host(c, SSO_ENV, SSO)
}
pub fn api(c: &Config) -> String {
    host(c, API_ENV, API)
}
pub fn di_token_url(c: &Config) -> String {
    host(c, DI_TOKEN_ENV, DI_TOKEN)
}
pub fn pause(c: &Config) -> Duration {
    c.number(PAUSE_ENV).map(Duration::from_millis).unwrap_or(PAUSE)
}

/// One way into Garmin's SSO: its client, the service the ticket is for, and its pages.
#[derive(Debug, Clone, Copy)]
pub struct SsoVariant {
    pub name: &'static str,
    pub client_id: &'static str,
    pub service: &'static str,
    pub sign_in: &'static str,
    pub login: &'static str,
    pub verify: &'static str,
    pub remember_me: bool,
    pub user_agent: &'static str,
}

const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148";
const DESKTOP: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15";

/// The mobile sign-in of flow C, and its fallbacks: flow B through the Android client, then the
/// web portal (reference §2.1). Only "this way in is broken" answers move on, never Garmin's defences.
pub const MOBILE_IOS: SsoVariant = SsoVariant {
    name: "mobile (iOS) with the DI token",
    client_id: "GCM_IOS_DARK",
    service: "https://mobile.integration.garmin.com/gcm/ios",
    sign_in: "/mobile/sso/en_US/sign-in",
    login: "/mobile/api/login",
    verify: "/mobile/api/mfa/verifyCode",
    remember_me: true,
    user_agent: IPHONE,
};
pub const MOBILE_ANDROID: SsoVariant = SsoVariant {
    name: "mobile (Android) with OAuth1",
    client_id: "GCM_ANDROID_DARK",
    service: "https://mobile.integration.garmin.com/gcm/android",
    sign_in: "/mobile/sso/en/sign-in",
    login: "/mobile/api/login",
    verify: "/mobile/api/mfa/verifyCode",
    remember_me: false,
    user_agent: ANDROID,
};
pub const PORTAL: SsoVariant = SsoVariant {
    name: "web portal with the DI token",
    client_id: "GarminConnect",
    service: "https://connect.garmin.com/app",
    sign_in: "/portal/sso/en-US/sign-in",
    login: "/portal/api/login",
    verify: "/portal/api/mfa/verifyCode",
    remember_me: true,
    user_agent: DESKTOP,
};

const ANDROID: &str = "Mozilla/5.0 (Linux; Android 13; sdk_gphone64_arm64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36";

/// Where flow B's OAuth1 consumer key and secret (extracted from the Android app) are published.
pub const CONSUMER_ENV: &str = "VITALS_GARMIN_OAUTH_CONSUMER_URL";
const CONSUMER: &str = "https://thegarth.s3.amazonaws.com/oauth_consumer.json";
pub fn consumer_url(c: &Config) -> String {
    host(c, CONSUMER_ENV, CONSUMER)
}
/// Flow B's routes on the data API's host, and the audience its login asks for.
pub const PREAUTHORIZED: &str = "/oauth-service/oauth/preauthorized";
pub const OAUTH1_AUDIENCE: &str = "GARMIN_CONNECT_MOBILE_ANDROID_DI";
pub const OAUTH1_USER_AGENT: &str = "com.garmin.android.apps.connectmobile";

/// The DI clients a ticket is exchanged with, newest first: a refusal moves to the next, a 429 stops.
pub const DI_CLIENT_IDS: &[&str] =
    &["GARMIN_CONNECT_MOBILE_ANDROID_DI_2025Q2", "GARMIN_CONNECT_MOBILE_ANDROID_DI_2024Q4", "GARMIN_CONNECT_MOBILE_ANDROID_DI", "GARMIN_CONNECT_MOBILE_IOS_DI"];

/// The DI grant type of a service ticket.
pub const TICKET_GRANT: &str = "https://connectapi.garmin.com/di-oauth2-service/oauth/grant/service_ticket";

/// The sign-in page as a phone's browser asks for it.
pub const PAGE_HEADERS: &[(&str, &str)] = &[
    ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    ("accept-language", "en-US,en;q=0.9"),
    ("sec-fetch-mode", "navigate"),
    ("sec-fetch-dest", "document"),
    ("sec-fetch-site", "none"),
];

/// What the mobile app sends with every data request (flow C's native headers).
pub const DATA_HEADERS: &[(&str, &str)] = &[
    ("accept", "application/json"),
    ("user-agent", "GCM-Android-5.23"),
    ("x-garmin-user-agent", "com.garmin.android.apps.connectmobile/5.23; ; Google/sdk_gphone64_arm64/google; Android/33; Dalvik/2.1.0"),
    ("x-garmin-paired-app-version", "10861"),
    ("x-garmin-client-platform", "Android"),
    ("x-app-ver", "10861"),
    ("x-lang", "en"),
    ("x-gcexperience", "GC5"),
    ("accept-language", "en-US,en;q=0.9"),
];

/// A DI token is renewed this long before its JWT says it ends (reference §2.6).
pub const RENEW_BEFORE_S: i64 = 900;

/// How long no new login is tried after Garmin refused one from this network, when it said no
/// time of its own (reports speak of hours; reference §3).
pub const BACK_OFF: Duration = Duration::from_secs(4 * 3600);
