//! The credential a provider reads with, whatever its connection: `VITALS_SANDBOX` forces sample
//! data; else a personal token from the environment where the provider still issues them
//! (`OURA_PAT`); else an API key from the environment (exchanged in memory); else what the token
//! store holds (an OAuth login, a pasted key and its token, a session), re-read at the start of
//! every query, so a login shows up without a restart; else sample data where the provider has
//! some, and nothing where it has none. Provider-neutral: each provider builds one from its spec.
use super::{Credential, CredentialKind, CredentialSource, Due, EXPIRY_MARGIN_S};
use crate::accounts::{Home, StoreError, TokenStore, Tokens};
use crate::catalog::ProviderSpec;
use crate::config::Config;
use crate::connection::Connection;
use crate::secret::Secret;

pub struct StoredCredential {
    spec: &'static ProviderSpec,
    /// The variable a personal token is read from, where the provider has them, and the token.
    personal_env: Option<&'static str>,
    personal: Option<(&'static str, Secret)>,
    /// An API key from the environment, and the token it was exchanged for (memory only).
    env_key: Option<(&'static str, Secret)>,
    exchanged: std::sync::Mutex<Option<Tokens>>,
    /// One exchange at a time per key.
    exchanging: tokio::sync::Mutex<()>,
    sandbox_forced: bool,
    /// The token store, or why there is none (no config folder, a bad VITALS_TOKEN_STORE).
    store: Result<TokenStore, StoreError>,
    /// What the sample data is, in words (`Oura's sandbox`, `built-in sample data`); None: there is none.
    sandbox_is: Option<&'static str>,
    /// A renewal this process could not save (engine answers say so).
    unsaved: std::sync::Mutex<Option<Unsaved>>,
    /// Whose credential this is (a hosted tenant renews with its own app credentials first).
    home: Home,
}

/// A login renewed but not saved (a full disk): the provider may already have retired the saved
/// pair, so this process reads with the renewed one, from memory, for as long as the store still
/// holds the pair it was renewed from.
struct Unsaved {
    base: Tokens,
    fresh: Tokens,
    why: String,
}

impl StoredCredential {
    /// The credential of `home`: its token store, and where the home reads the environment,
    /// `personal_env` (if the provider has personal tokens) and its API key variable (if it
    /// connects by key), read from the settings the binary was started with. `VITALS_SANDBOX`
    /// counts everywhere.
    pub fn in_home(
        spec: &'static ProviderSpec,
        personal_env: Option<&'static str>,
        sandbox_is: Option<&'static str>,
        home: &Home,
        config: &Config,
    ) -> StoredCredential {
        let env = home.reads_env_credentials();
        let from = |var: &'static str| config.var(var).filter(|_| env).map(|v| (var, Secret::new(v.to_string())));
        StoredCredential {
            spec,
            personal_env,
            personal: personal_env.and_then(from),
            env_key: spec.connection.api_key().and_then(|k| from(k.env)),
            exchanged: Default::default(),
            exchanging: Default::default(),
            sandbox_forced: config.flag("VITALS_SANDBOX"),
            store: home.store(),
            sandbox_is,
            unsaved: Default::default(),
            home: home.clone(),
        }
    }

    pub fn stored(&self) -> Option<Tokens> {
        self.load().ok().flatten()
    }

    /// The saved login, or why it cannot be read. No store at all (no config folder) is no login.
    fn load(&self) -> Result<Option<Tokens>, StoreError> {
        match &self.store {
            Ok(s) => s.load(self.spec.name),
            Err(_) => Ok(None),
        }
    }

    /// How long before its expiry the token is renewed: the key connection's own margin, else the default.
    fn margin(&self) -> i64 {
        match self.spec.connection {
            Connection::ApiKey(k) => k.renew_before_s,
            Connection::Session(s) => s.renew_before_s,
            _ => EXPIRY_MARGIN_S,
        }
    }

    /// The kind a saved login has, from the provider's connection.
    fn stored_kind(&self) -> CredentialKind {
        match self.spec.connection {
            Connection::OAuth(_) => CredentialKind::OAuth,
            Connection::ApiKey(_) => CredentialKind::ApiKey,
            Connection::Session(_) | Connection::None => CredentialKind::Session,
            Connection::File(_) => CredentialKind::File,
        }
    }

    /// A provider that cannot be renewed here has nothing to do: then `renew` is None.
    pub fn renewer(&self, refused: Option<Secret>) -> Option<super::BoxFuture<'_, Result<(), super::RenewError>>> {
        let kind = self.current().kind;
        matches!(kind, CredentialKind::OAuth | CredentialKind::ApiKey | CredentialKind::Session)
            .then(|| Box::pin(self.renew(refused)) as super::BoxFuture<'_, Result<(), super::RenewError>>)
    }

    /// Do what the credential needs. An environment key is exchanged in memory, one exchange at a
    /// time. A saved login first finishes a step still owed, then is renewed under the store's lock;
    /// `refused` is the access token the provider turned away: when the store already holds another
    /// one, some process (this one or another) renewed since that request was sent, and its
    /// credential is used instead of renewing again.
    pub async fn renew(&self, refused: Option<Secret>) -> Result<(), super::RenewError> {
        if let Some((_, key)) = &self.env_key {
            let _one = self.exchanging.lock().await;
            let now = self.exchanged.lock().expect("exchanged lock").clone();
            let fresh = now.as_ref().is_some_and(|t| {
                refused.as_ref() != Some(&t.access) && credential_of(t.clone(), CredentialKind::ApiKey, String::new(), self.margin()).due.is_none()
            });
            if !fresh {
                let base = Tokens { key: Some(key.clone()), ..Default::default() };
                let t = crate::accounts::grant::renew_in(self.spec, &base, &self.home).await?;
                *self.exchanged.lock().expect("exchanged lock") = Some(t);
            }
            return Ok(());
        }
        let store = self.store.as_ref().map_err(|e| e.to_string())?.clone();
        // A step still owed that failed fails the read: the person's to act on when the provider
        // refused it, the provider's failing (said as such, nothing known of the login) when it
        // did not answer.
        crate::accounts::grant::setup(self.spec, &store, self.home.config()).await.map_err(|e| match e {
            crate::accounts::error::ConnectError::Unavailable(w) => super::RenewError::Unavailable(w),
            e => super::RenewError::Failed(e.to_string()),
        })?;
        let seen = self.stored().ok_or("no login is stored")?;
        let in_memory = self.in_memory(&seen);
        let current = in_memory.clone().unwrap_or_else(|| seen.clone());
        let due = credential_of(current.clone(), self.stored_kind(), String::new(), self.margin()).due;
        match refused {
            Some(r) if current.access != r => return Ok(()),
            None if due.is_none() => return Ok(()),
            _ => {}
        }
        let spec = self.spec;
        let result = match in_memory {
            // The saved pair may be retired: renew the one in use, and try to save it again.
            Some(fresh) => {
                let mut renewed = crate::accounts::grant::renew_in(spec, &fresh, &self.home).await?;
                renewed.login = fresh.login.clone();
                let keep = renewed.clone();
                let saved = tokio::task::spawn_blocking(move || store.save(spec.name, &keep)).await.map_err(|e| e.to_string())?;
                saved.map(|()| renewed.clone()).map_err(|e| crate::accounts::StoreError::Unsaved {
                    why: format!("the renewed tokens could not be saved either ({e}); after fixing that, connect again (vitals-mcp auth {})", spec.name),
                    fresh: Box::new(renewed),
                })
            }
            None => {
                let handle = tokio::runtime::Handle::current();
                let home = self.home.clone();
                // The store's lock is a blocking file lock: hold it on the blocking pool, and run
                // the renewal from there.
                tokio::task::spawn_blocking(move || store.refresh_with(spec.name, &seen, |t| handle.block_on(crate::accounts::grant::renew_in(spec, t, &home))))
                    .await
                    .map_err(|e| e.to_string())?
            }
        };
        let stored_now = self.stored();
        let mut unsaved = self.unsaved.lock().expect("unsaved lock");
        match result {
            Ok(_) => {
                *unsaved = None;
                Ok(())
            }
            Err(crate::accounts::StoreError::Unsaved { why, fresh }) => {
                tracing::warn!("{} was renewed but not saved; this process keeps the renewed login in memory: {why}", spec.display);
                *unsaved = stored_now.map(|base| Unsaved { base, fresh: *fresh, why });
                Ok(())
            }
            // The renewal's own error keeps its kind: a token endpoint down for a moment is not a
            // refused login.
            Err(crate::accounts::StoreError::Refresh(e)) => Err(e),
            Err(e) => Err(e.to_string().into()),
        }
    }

    /// The renewed login this process reads with instead of `saved`, when its renewal could not be
    /// saved and the store still holds `saved`.
    fn in_memory(&self, saved: &Tokens) -> Option<Tokens> {
        self.unsaved.lock().expect("unsaved lock").as_ref().filter(|u| u.base == *saved).map(|u| u.fresh.clone())
    }
}

impl CredentialSource for StoredCredential {
    fn current(&self) -> Credential {
        if self.sandbox_forced && self.sandbox_is.is_some() {
            return sandbox("VITALS_SANDBOX=1 (sandbox forced)".into());
        }
        if let Some((var, token)) = &self.personal {
            return Credential { bearer: Some(token.clone()), ..Credential::bare(CredentialKind::PersonalToken, format!("environment {var}")) };
        }
        if let Some((var, _)) = &self.env_key {
            let origin = format!("environment {var} (the key's token is kept in memory only)");
            return match self.exchanged.lock().expect("exchanged lock").clone() {
                Some(t) => credential_of(t, CredentialKind::ApiKey, origin, self.margin()),
                None => Credential { due: Some(Due::Exchange), ..Credential::bare(CredentialKind::ApiKey, origin) },
            };
        }
        let saved = match self.load() {
            Ok(t) => t,
            Err(e) => {
                let why = format!(
                    "the saved logins, {}'s among them, could not be read: {e}. Nothing is read in its place (no sample data). \
                     After fixing it, or to start again, connect: vitals-mcp auth {}",
                    self.spec.display, self.spec.name
                );
                return Credential { problem: Some(why.clone()), ..Credential::bare(CredentialKind::None, format!("none: {why}")) };
            }
        };
        if let Some(t) = saved {
            let store = self.store.as_ref().map(|s| s.describe()).unwrap_or_default();
            let kind = self.stored_kind();
            let what = match kind {
                CredentialKind::OAuth => "OAuth login".to_string(),
                CredentialKind::ApiKey => "API key and its token".to_string(),
                _ => "session".to_string(),
            };
            let from = t.source.as_deref().map(|s| format!(" (from {s})")).unwrap_or_default();
            if let Some(u) = self.unsaved.lock().expect("unsaved lock").as_ref().filter(|u| u.base == t) {
                let origin = format!("{what}{from}, renewed and kept in memory only (the {store} could not take it)");
                return Credential { unsaved: Some(u.why.clone()), ..credential_of(u.fresh.clone(), kind, origin, self.margin()) };
            }
            return credential_of(t, kind, format!("{what}{from} in the {store}"), self.margin());
        }
        let none = format!(
            "none: {}no {} account is connected (vitals-mcp auth {})",
            self.personal_env.map(|v| format!("{v} is not set and ")).unwrap_or_default(),
            self.spec.display,
            self.spec.name,
        );
        match self.sandbox_is {
            Some(sample) => sandbox(format!("{none}, so {sample} is used")),
            None => Credential::bare(CredentialKind::None, format!("{none}, and it has no sample data")),
        }
    }
}

/// A sandbox accepts any bearer: send a fixed, harmless one.
fn sandbox(origin: String) -> Credential {
    Credential { bearer: Some(Secret::new("sandbox")), ..Credential::bare(CredentialKind::Sandbox, origin) }
}

/// The credential saved tokens make, and what is due before they are used (`margin_s`: how long
/// before its expiry a token is renewed).
fn credential_of(t: Tokens, kind: CredentialKind, origin: String, margin_s: i64) -> Credential {
    let expiring = t.expires_at.is_some_and(|at| at - jiff::Timestamp::now().as_second() <= margin_s);
    let due = match (&t.setup_pending, expiring, t.access.is_empty()) {
        (Some(step), _, _) => Some(Due::Setup(step.clone())),
        (None, _, true) => Some(Due::Exchange),
        (None, true, false) => Some(Due::Expiring),
        (None, false, false) => None,
    };
    Credential {
        kind,
        origin,
        bearer: (!t.access.is_empty()).then_some(t.access),
        scopes: (!t.scopes.is_empty() || kind == CredentialKind::OAuth).then_some(t.scopes),
        expires_at: t.expires_at,
        key_expires_at: t.key_expires_at,
        account: t.login,
        extra: t.extra,
        due,
        problem: None,
        unsaved: None,
    }
}
