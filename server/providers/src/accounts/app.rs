//! App credentials (an OAuth client ID and secret) per provider, from the server's settings first
//! (its environment, read once at start: a `.mcpb` install passes the extension settings this way),
//! then the settings file the CLI and the settings app write. The file is read on every call, so a
//! change there shows up without a restart.
use super::default_dir;
use super::error::LinkError;
use super::store::StoreError;
use crate::catalog::ProviderSpec;
use crate::config::Config;
use crate::connection::{AppEnv, OAuthSpec};
use crate::secret::Secret;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppSource {
    /// Named variables of this process's environment.
    Environment,
    /// The settings file at this path.
    Settings(PathBuf),
    /// A hosted person's own settings file (imported with their logins; named without its folder).
    Tenant,
}

#[derive(Debug, Clone)]
pub struct AppCredentials {
    pub client_id: String,
    pub client_secret: Secret,
    pub source: AppSource,
}

impl AppCredentials {
    /// Where they came from, in words for `vitals_check`.
    pub fn origin(&self, env: &AppEnv) -> String {
        match &self.source {
            AppSource::Environment => {
                format!("environment {} / {}", env.client_id, env.client_secret)
            }
            AppSource::Settings(p) => format!("settings file {}", p.display()),
            AppSource::Tenant => "this person's own settings file on the server".into(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct OnDisk {
    client_id: String,
    client_secret: String,
}

/// `settings.json` beside the token file: app credentials per provider, 0600 like the tokens (and
/// sealed like them in a hosted tenant's folder).
pub struct Settings {
    dir: PathBuf,
    vault: Option<std::sync::Arc<super::vault::Vault>>,
    /// A tenant's file is named without its folder in errors and in `vitals_check`.
    tenant: bool,
}

impl Settings {
    pub fn at(dir: impl Into<PathBuf>) -> Settings {
        Settings { dir: dir.into(), vault: None, tenant: false }
    }

    /// A hosted tenant's settings file, sealed under `vault`.
    pub fn sealed(dir: impl Into<PathBuf>, vault: Option<std::sync::Arc<super::vault::Vault>>) -> Settings {
        Settings { dir: dir.into(), vault, tenant: true }
    }

    /// How the file is named where a person reads it.
    fn shown(&self) -> String {
        match self.tenant {
            true => "this person's own settings file on the server".into(),
            false => self.path().display().to_string(),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join("settings.json")
    }

    fn read_all(&self) -> Result<BTreeMap<String, OnDisk>, StoreError> {
        let read = super::store::read_json_sealed(&self.path(), self.vault.as_deref(), &self.shown());
        read.map_err(|e| if self.tenant { StoreError::Config(format!("{} could not be read", self.shown())).or_vault(e) } else { e })
    }

    fn write_all(&self, all: &BTreeMap<String, OnDisk>) -> Result<(), StoreError> {
        let written = super::store::write_json_sealed(&self.dir, &self.path(), all, self.vault.as_deref());
        written.map_err(|e| if self.tenant { StoreError::Config(format!("{} could not be written", self.shown())).or_vault(e) } else { e })
    }

    /// The credentials that win: both variables of the server's settings (`config`; empty means
    /// not set, as an extension setting left blank arrives), else the settings file.
    pub fn app_credentials(&self, provider: &str, env: &AppEnv, config: &Config) -> Result<Option<AppCredentials>, StoreError> {
        if let (Some(id), Some(secret)) = (config.var(env.client_id), config.var(env.client_secret)) {
            return Ok(Some(AppCredentials { client_id: id.to_string(), client_secret: Secret::new(secret), source: AppSource::Environment }));
        }
        self.in_file(provider)
    }

    /// The settings file's credentials alone.
    pub fn in_file(&self, provider: &str) -> Result<Option<AppCredentials>, StoreError> {
        Ok(self.read_all()?.remove(provider).map(|d| AppCredentials {
            client_id: d.client_id,
            client_secret: Secret::new(d.client_secret),
            source: match self.tenant {
                true => AppSource::Tenant,
                false => AppSource::Settings(self.path()),
            },
        }))
    }

    /// Save one provider's app credentials (what the CLI and the settings app do).
    pub fn save(&self, provider: &str, client_id: &str, client_secret: &Secret) -> Result<(), StoreError> {
        let mut all = self.read_all()?;
        all.insert(provider.into(), OnDisk { client_id: client_id.into(), client_secret: client_secret.expose().into() });
        self.write_all(&all)
    }

    /// Forget one provider's app credentials. Returns whether there were any.
    pub fn remove(&self, provider: &str) -> Result<bool, StoreError> {
        let mut all = self.read_all()?;
        let had = all.remove(provider).is_some();
        if had {
            self.write_all(&all)?;
        }
        Ok(had)
    }
}

/// Where to get app credentials and the four ways to give them, for a provider that has none.
pub fn missing_app_help(p: &ProviderSpec, oauth: &OAuthSpec, config: &Config) -> String {
    let env = oauth.app_env;
    let (redirect, _) = oauth.redirect(config);
    format!(
        "No {} app credentials are set. Create an app at {} with the redirect URI {redirect} (exactly), then give its client ID \
         and secret in one of four ways: the extension's settings in Claude Desktop; the vitals settings app; \
         `vitals-mcp app {}` (reads the secret from standard input); or the variables {} and {}.",
        p.display, oauth.portal, p.name, env.client_id, env.client_secret
    )
}

/// The provider's OAuth endpoints and the app credentials `home` uses now (the file re-read on every
/// call). A hosted tenant's own settings file wins (a login imported from the person's machine was
/// issued to their app, and only that app can renew it); else the operator's app, as on this machine.
pub fn app_for_in(p: &ProviderSpec, home: &super::Home) -> Result<(OAuthSpec, AppCredentials), LinkError> {
    let oauth = *p.connection.oauth().ok_or_else(|| LinkError::Setup(format!("{} does not connect with OAuth", p.display)))?;
    let env = oauth.app_env;
    if let super::Home::Tenant { dir, vault, .. } = home {
        if let Some(own) = Settings::sealed(dir, vault.clone()).in_file(p.name).map_err(|e| LinkError::Setup(e.to_string()))? {
            return Ok((oauth, own));
        }
    }
    let config = home.config();
    let dir = default_dir(config).ok_or_else(|| LinkError::Setup("this machine has no configuration folder; set VITALS_CONFIG_DIR".into()))?;
    let app = Settings::at(&dir).app_credentials(p.name, &env, config).map_err(|e| LinkError::Setup(e.to_string()))?;
    Ok((oauth, app.ok_or_else(|| LinkError::NoApp(missing_app_help(p, &oauth, config)))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENV: AppEnv = AppEnv { client_id: "TEST_ONLY_APP_CLIENT_ID", client_secret: "TEST_ONLY_APP_CLIENT_SECRET" };

    #[test]
    fn the_settings_win_then_the_settings_file_and_empty_means_unset() {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp")).join(format!("vitals-app-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Settings::at(&dir);
        let none = Config::default();
        assert!(s.app_credentials("oura", &ENV, &none).unwrap().is_none());
        s.save("oura", "file-id", &Secret::new("file-secret")).unwrap();
        let c = s.app_credentials("oura", &ENV, &none).unwrap().unwrap();
        assert_eq!((c.client_id.as_str(), c.source.clone()), ("file-id", AppSource::Settings(s.path())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(s.path()).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let blank = Config::from_pairs([(ENV.client_id, "env-id"), (ENV.client_secret, "   ")]);
        assert_eq!(s.app_credentials("oura", &ENV, &blank).unwrap().unwrap().client_id, "file-id", "a blank secret is not set");
        let given = blank.with(ENV.client_secret, "env-secret");
        let c = s.app_credentials("oura", &ENV, &given).unwrap().unwrap();
        assert_eq!((c.client_id.as_str(), c.client_secret.expose(), c.source.clone()), ("env-id", "env-secret", AppSource::Environment));
        assert!(!format!("{c:?}").contains("env-secret"));
        assert!(s.remove("oura").unwrap());
        assert!(s.app_credentials("oura", &ENV, &given).unwrap().is_some_and(|c| c.source == AppSource::Environment), "each server its own settings");
        assert!(s.app_credentials("oura", &ENV, &none).unwrap().is_none());
    }
}
