//! A twin with an OAuth app registered at a free loopback redirect, and a config folder holding
//! that app's credentials: what every in-chat and CLI login test starts from.
use super::*;
use rmcp::service::ClientLifecycleMode;
use rmcp::ClientHandler;

pub const APP_ID: &str = "twin-client";
pub const APP_SECRET: &str = "twin-client-secret";

/// The twin, a config folder holding the app credentials, and the server's environment for them.
pub struct Fixture {
    pub twin: Twin,
    pub dir: std::path::PathBuf,
    pub redirect: String,
    pub browser_log: std::path::PathBuf,
}

impl Fixture {
    pub async fn new(tag: &str) -> Fixture {
        Fixture::with(tag, true).await
    }

    pub async fn with(tag: &str, app: bool) -> Fixture {
        let twin = twin().await;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let redirect = format!("http://localhost:{port}/callback/");
        twin.state.oauth.lock().unwrap().apps[0].redirect_uri = redirect.clone();
        let dir = super::scratch().join(format!("vitals-e2e-connect-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if app {
            vitals::accounts::Settings::at(&dir).save("oura", APP_ID, &vitals::secret::Secret::new(APP_SECRET)).unwrap();
        }
        let browser_log = dir.join("browser.log");
        Fixture { twin, dir, redirect, browser_log }
    }

    pub fn env(&self) -> Vec<(String, String)> {
        let b = self.twin.base_url();
        vec![
            ("VITALS_CONFIG_DIR".into(), self.dir.display().to_string()),
            ("VITALS_OURA_AUTHORIZE_URL".into(), format!("{b}/oauth/authorize")),
            ("VITALS_OURA_TOKEN_URL".into(), format!("{b}/oauth/v2/ext/oauth-token")),
            ("VITALS_OURA_TOKEN_URL_LEGACY".into(), format!("{b}/oauth/token")),
            ("VITALS_OURA_REVOKE_URL".into(), format!("{b}/oauth/revoke")),
            ("VITALS_OURA_REDIRECT_URI".into(), self.redirect.clone()),
            ("VITALS_TEST_BROWSER_LOG".into(), self.browser_log.display().to_string()),
        ]
    }

    /// A sandbox server (no OURA_PAT) with this fixture's OAuth environment plus `extra`.
    pub async fn server<H: ClientHandler>(&self, mode: ClientLifecycleMode, handler: H, extra: &[(&str, &str)]) -> Session<H> {
        let mut env = self.env();
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        connect_as(&self.twin, true, &pairs, mode, handler).await
    }

    pub fn stored(&self) -> Option<vitals::accounts::Tokens> {
        vitals::accounts::TokenStore::file(&self.dir).load("oura").unwrap()
    }

    /// What the stand-in browser logged. It writes after its page arrives, which can be just after
    /// the tool answered: wait for it a little.
    pub fn browser_said(&self) -> String {
        browser_said(&self.browser_log)
    }
}

/// What the stand-in browser logged to `log`, waiting a little for it (see [`Fixture::browser_said`]).
pub fn browser_said(log: &std::path::Path) -> String {
    for _ in 0..250 {
        let said = std::fs::read_to_string(log).unwrap_or_default();
        if said.ends_with('\n') {
            return said;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::read_to_string(log).unwrap_or_default()
}

/// What the user does with a login link: open it (the twin consents), land on the callback.
pub async fn open_in_browser(url: &str) -> (u16, String) {
    let c = no_redirects();
    let r = c.get(url).send().await.unwrap();
    assert!(r.status().is_redirection(), "the login page redirects: {}", r.status());
    let landing = r.headers()["location"].to_str().unwrap().replace("//localhost:", "//127.0.0.1:");
    let page = c.get(landing).send().await.unwrap();
    (page.status().as_u16(), page.text().await.unwrap())
}

/// A client without elicitation (Claude Desktop) that records progress notifications.
#[derive(Clone, Default)]
pub struct Watcher {
    pub progress: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl ClientHandler for Watcher {
    async fn on_progress(&self, p: rmcp::model::ProgressNotificationParam, _: rmcp::service::NotificationContext<rmcp::RoleClient>) {
        self.progress.lock().unwrap().push(p.message.unwrap_or_default());
    }
}
