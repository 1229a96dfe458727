//! How a provider is connected, as data its catalog declares, with the few functions of its own a
//! login needs (a token reply in a foreign dialect, a step after the exchange, a key exchange, a
//! session login, reading another tool's files). `accounts/`, `mcp/` and the settings app read a
//! [`Connection`] and render it; none of them names a provider, so a provider added later brings
//! its login with it.
use crate::config::Config;
use crate::secret::Secret;
use std::collections::BTreeMap;
use std::sync::Arc;

pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// The ways in a provider offers. One per provider: what the settings app shows, what
/// `vitals_connect` and `vitals-mcp auth` run.
#[derive(Debug, Clone, Copy)]
pub enum Connection {
    /// Nothing to connect: the provider serves sample data only.
    None,
    /// A browser login (OAuth 2 authorization code).
    OAuth(OAuthSpec),
    /// A key the user creates at the provider and pastes once.
    ApiKey(ApiKeySpec),
    /// A login with email, password and maybe a one-time code, typed only into a page or prompt of
    /// ours; and/or tokens another tool already saved, imported.
    Session(SessionSpec),
    /// A file the person exports from their phone and chooses (Apple Health has no web API):
    /// vitals remembers its path and reads it in place, never a copy.
    File(FileSpec),
}

/// A file connection: where the path comes from and what file it is.
#[derive(Debug, Clone, Copy)]
pub struct FileSpec {
    /// The variable the path is read from (the extension's file picker, a script).
    pub env: &'static str,
    /// Which file, in words, for the chooser and the errors.
    pub what: &'static str,
    /// The file names' endings the chooser offers.
    pub extensions: &'static [&'static str],
}

/// The kind of a connection, as `vitals_check`, `vitals_sources` and the settings app name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionKind {
    None,
    #[serde(rename = "oauth")]
    OAuth,
    ApiKey,
    Session,
    /// A session whose only way in is importing another tool's saved tokens.
    Import,
    /// A file the person chooses (an export), read in place.
    File,
}

impl ConnectionKind {
    /// Every kind, for documentation and its test.
    pub const ALL: [ConnectionKind; 6] =
        [ConnectionKind::OAuth, ConnectionKind::ApiKey, ConnectionKind::Session, ConnectionKind::Import, ConnectionKind::File, ConnectionKind::None];

    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionKind::None => "none",
            ConnectionKind::OAuth => "oauth",
            ConnectionKind::ApiKey => "api_key",
            ConnectionKind::Session => "session",
            ConnectionKind::Import => "import",
            ConnectionKind::File => "file",
        }
    }
}

impl Connection {
    pub fn kind(&self) -> ConnectionKind {
        match self {
            Connection::None => ConnectionKind::None,
            Connection::OAuth(_) => ConnectionKind::OAuth,
            Connection::ApiKey(_) => ConnectionKind::ApiKey,
            Connection::Session(s) if s.login.is_none() => ConnectionKind::Import,
            Connection::Session(_) => ConnectionKind::Session,
            Connection::File(_) => ConnectionKind::File,
        }
    }
    /// Whether anything can be connected at all.
    pub fn connects(&self) -> bool {
        !matches!(self, Connection::None)
    }
    pub fn oauth(&self) -> Option<&OAuthSpec> {
        match self {
            Connection::OAuth(o) => Some(o),
            _ => None,
        }
    }
    pub fn api_key(&self) -> Option<&ApiKeySpec> {
        match self {
            Connection::ApiKey(k) => Some(k),
            _ => None,
        }
    }
    pub fn session(&self) -> Option<&SessionSpec> {
        match self {
            Connection::Session(s) => Some(s),
            _ => None,
        }
    }
    pub fn file(&self) -> Option<&FileSpec> {
        match self {
            Connection::File(f) => Some(f),
            _ => None,
        }
    }
    /// How access ends at the provider when the user disconnects.
    pub fn revoke(&self) -> Revoke {
        match self {
            Connection::None | Connection::File(_) => Revoke::Nothing,
            Connection::OAuth(o) => o.revoke,
            Connection::ApiKey(k) => k.revoke,
            Connection::Session(s) => s.revoke,
        }
    }
    /// Where the user gets what this connection needs (a developer portal, a key page).
    pub fn portal(&self) -> Option<&'static str> {
        match self {
            Connection::OAuth(o) => Some(o.portal),
            Connection::ApiKey(k) => Some(k.portal),
            Connection::Session(s) => s.portal,
            Connection::None | Connection::File(_) => None,
        }
    }
}

/// How a provider ends a grant, when the user disconnects.
#[derive(Debug, Clone, Copy)]
pub enum Revoke {
    /// `POST url?<param>=<access token>` (overridable by `env`).
    Endpoint { url: &'static str, env: &'static str, param: &'static str },
    /// The provider has no revoke we may call: the user removes access there, where this says.
    InAccount(&'static str),
    /// Nothing was granted (sample data only).
    Nothing,
}

impl Revoke {
    pub fn at_provider(&self) -> bool {
        matches!(self, Revoke::Endpoint { .. })
    }
}

/// The environment variables one provider's app credentials are read from.
#[derive(Debug, Clone, Copy)]
pub struct AppEnv {
    pub client_id: &'static str,
    pub client_secret: &'static str,
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `client_id` and `client_secret` in the form body.
    Body,
    /// HTTP Basic `client_id:client_secret`.
    Basic,
}

/// A token endpoint's reply turned into RFC 6749 JSON, or the refusal it carried
/// (`(error, description)`, free of secrets).
pub type TokenReply = Result<serde_json::Value, (String, String)>;

/// One provider's OAuth 2 authorization code flow, as data in its catalog.
#[derive(Debug, Clone, Copy)]
pub struct OAuthSpec {
    pub app_env: AppEnv,
    pub authorize_url: &'static str,
    pub authorize_env: &'static str,
    /// Query parameters every authorize URL carries besides RFC 6749's (Google's
    /// `access_type=offline`), added to an overriding URL too unless it names them itself.
    pub authorize_params: &'static [(&'static str, &'static str)],
    /// Token endpoints in the order to try them, each with the variable that overrides it.
    pub token_urls: &'static [(&'static str, &'static str)],
    /// The redirect registered at the provider's developer portal (exactly, trailing slash included).
    pub redirect: &'static str,
    pub redirect_env: &'static str,
    pub scopes: &'static [&'static str],
    /// How the provider joins scopes in the authorize URL and in its reply (` ` by RFC 6749).
    pub scope_separator: &'static str,
    /// Prefix the provider adds to granted scopes, stripped on receipt.
    pub scope_prefix: &'static str,
    pub client_auth: ClientAuth,
    pub pkce: bool,
    /// Form fields every token request carries besides RFC 6749's.
    pub token_params: &'static [(&'static str, &'static str)],
    /// The provider's token reply in RFC 6749 terms, when it speaks another dialect. `None`: it does not.
    pub reply: Option<fn(u16, &[u8]) -> TokenReply>,
    /// Fields of the token reply kept with the tokens (a user id the data routes need).
    pub keep: &'static [&'static str],
    /// A step that must succeed once after the first exchange before any data can be read.
    pub after_exchange: Option<AfterExchange>,
    /// Where a user registers an app.
    pub portal: &'static str,
    pub revoke: Revoke,
}

impl OAuthSpec {
    /// The redirect a server with `config` sends, and where the value came from.
    pub fn redirect(&self, config: &Config) -> (String, String) {
        match config.var(self.redirect_env) {
            Some(v) => (v.to_string(), format!("the environment variable {}", self.redirect_env)),
            None => (self.redirect.to_string(), "the default".into()),
        }
    }
}

/// A step run once after a successful exchange (a registration the provider requires), and again
/// on the next use while it has not succeeded. Its error is said to the user as it is: it should
/// say what they can do (accept the consents, then ask again).
#[derive(Debug, Clone, Copy)]
pub struct AfterExchange {
    /// What the step is, in words (`registering vitals with your Polar account`).
    pub what: &'static str,
    /// Run with the server's settings (where the provider's routes are).
    pub run: fn(Grant, Arc<Config>) -> BoxFuture<'static, Result<(), StepError>>,
}

/// What a login yields: the credential the data routes take, and what the provider said with it.
#[derive(Debug, Clone, Default)]
pub struct Grant {
    pub access: Secret,
    pub refresh: Option<Secret>,
    /// Unix seconds.
    pub expires_at: Option<i64>,
    pub scopes: Vec<String>,
    /// Non-secret fields kept with the tokens (`userid`, `x_user_id`).
    pub extra: BTreeMap<String, String>,
}

/// Why one of a connection's own steps failed (a registration after the exchange, a session
/// login's submission, reading another tool's saved tokens), by what can be done next. The words
/// are said to the person as they are: they say what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The provider did not answer about it (unreachable, a 5xx, a 429): the same step may
    /// succeed in a moment.
    #[error("{0}")]
    Unavailable(String),
    /// The provider refused it, or what the person gave cannot be used: the person acts first
    /// (accepts consents, types another password, connects again).
    #[error("{0}")]
    Refused(String),
    /// Anything else (a folder that could not be read, a reply that could not be understood).
    #[error("{0}")]
    Failed(String),
}

impl From<String> for StepError {
    fn from(why: String) -> Self {
        StepError::Failed(why)
    }
}

impl From<&str> for StepError {
    fn from(why: &str) -> Self {
        StepError::Failed(why.to_string())
    }
}

/// A key the user creates at the provider, exchanged for short-lived access tokens.
#[derive(Debug, Clone, Copy)]
pub struct ApiKeySpec {
    /// The variable a key can also come from.
    pub env: &'static str,
    /// Where the user creates a key, in words and address.
    pub portal: &'static str,
    pub create_help: &'static str,
    /// Exchange the key for an access token, at the host the server's settings name. The error
    /// says, in words, whether the key was refused.
    pub exchange: fn(Secret, Arc<Config>) -> BoxFuture<'static, Result<Grant, KeyError>>,
    /// How long before its expiry the exchanged token is renewed (Garmin's clients: an hour).
    pub renew_before_s: i64,
    pub revoke: Revoke,
}

/// Why a key exchange failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KeyError {
    /// The provider refused the key itself (expired, deleted, mistyped): a new one is needed.
    #[error("{0}")]
    Refused(String),
    /// The exchange did not happen (network, provider down): the key may be fine.
    #[error("{0}")]
    Failed(String),
    /// The exchange answered 429 (too many requests) with a longer wait than a login takes
    /// (`retry::LOGIN_WAIT`): the key may be fine; `wait` is what it asked.
    #[error("{why}")]
    Limited { why: String, wait: std::time::Duration },
}

/// A login with email, password and maybe a one-time code, and/or an import of saved tokens.
#[derive(Debug, Clone, Copy)]
pub struct SessionSpec {
    /// The login, where this server offers it. `None`: import only.
    pub login: Option<SessionLogin>,
    /// Renewing the session's tokens, where they expire.
    pub refresh: Option<SessionRefresh>,
    pub import: Option<ImportSpec>,
    pub portal: Option<&'static str>,
    /// Said wherever the connection is offered: what this connection is and what it risks.
    pub caution: &'static str,
    pub revoke: Revoke,
    /// How long before its expiry the session's token is renewed.
    pub renew_before_s: i64,
    /// Started only when the user asks for this connection by name (`vitals_connect`, `vitals-mcp
    /// auth`, the settings app), never by a query that needs it: a password login to an unofficial
    /// API is the user's choice, not the assistant's. The query's error says what connecting involves.
    pub explicit: bool,
    /// Variables a script sets the email and the password in for the terminal login (read, never stored).
    pub login_env: Option<(&'static str, &'static str)>,
}

/// One submission of a session login, at the hosts the server's settings name.
pub type SessionLogin = fn(SessionForm, Arc<Config>) -> BoxFuture<'static, Result<SessionStep, StepError>>;
/// A session's tokens renewed, at the hosts the server's settings name. A sign-in service that did
/// not answer about the session (unreachable, a 5xx, a 429) is `RenewError::Unavailable`, so a read
/// cuts its answer as for any transient fault; a refused session is `Failed`.
pub type SessionRefresh = fn(Grant, Arc<Config>) -> BoxFuture<'static, Result<Grant, RenewError>>;

/// What the user typed into our own login page, window or prompt. Never stored, never logged.
#[derive(Debug, Clone)]
pub struct SessionForm {
    pub email: String,
    pub password: Secret,
    /// The one-time code, once the provider has asked for one.
    pub code: Option<Secret>,
    /// Whose login this is on a server of several people (a tenant's id): a login waiting for its
    /// code is found again only by the same person. None on a person's own machine.
    pub waiting_as: Option<String>,
}

/// Where a session login stands after one submission.
#[derive(Debug, Clone)]
pub enum SessionStep {
    Done(Grant),
    /// The provider sent a one-time code: ask for it (the text says where it went) and submit again.
    NeedsCode(String),
}

/// Tokens another tool already saved, read from its folder.
#[derive(Debug, Clone, Copy)]
pub struct ImportSpec {
    /// The folder read when the user names none (`~` is the home folder), after `dir_env`.
    pub default_dir: &'static str,
    /// Variables the other tools name their folder in, tried in order before `default_dir`.
    pub dir_env: &'static [&'static str],
    /// Which tool writes these files, in words.
    pub from: &'static str,
    /// The offer, as the settings window and the login page say it ("Use tokens from another Garmin tool").
    pub offer: &'static str,
    /// Read the folder (never write it) into a login; it may check the tokens with the provider.
    pub read: fn(std::path::PathBuf, Arc<Config>) -> BoxFuture<'static, Result<Grant, StepError>>,
}

/// A credential's kind, at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialKind {
    /// No credential and no sample data: the provider needs connecting before anything is read.
    None,
    /// Sample data (the provider's sandbox, or built-in synthetic data).
    Sandbox,
    /// A personal token from the environment, where a provider still issues them (`OURA_PAT`).
    PersonalToken,
    OAuth,
    ApiKey,
    Session,
    /// A file the person chose, read in place.
    File,
}

impl CredentialKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialKind::None => "none",
            CredentialKind::Sandbox => "sandbox",
            CredentialKind::PersonalToken => "personal_token",
            CredentialKind::OAuth => "oauth",
            CredentialKind::ApiKey => "api_key",
            CredentialKind::Session => "session",
            CredentialKind::File => "file",
        }
    }
    /// Every kind, for documentation and its test.
    pub const ALL: [CredentialKind; 7] = [
        CredentialKind::None,
        CredentialKind::Sandbox,
        CredentialKind::PersonalToken,
        CredentialKind::OAuth,
        CredentialKind::ApiKey,
        CredentialKind::Session,
        CredentialKind::File,
    ];
}

/// Why a credential could not be renewed, by what a read does next: a renewal that the provider's
/// token endpoint did not answer about is a transient fault (the read is cut with `continue_from`,
/// as for a 503 on a data request); any other failure asks the person to act (an auth error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenewError {
    /// The token endpoint or key exchange did not answer about the credential (unreachable, a 5xx
    /// or a 429), after its one retry: nothing says the login is bad.
    #[error("{0}")]
    Unavailable(String),
    /// The token endpoint answered 429 (too many requests) and asked for a wait longer than a
    /// login may take (`retry::LOGIN_WAIT`): nothing says the login is bad; `wait` is what it asked.
    #[error("{why}")]
    Limited { why: String, wait: std::time::Duration },
    /// Refused, revoked, nothing stored, not saved: the words say what the person can do.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for RenewError {
    fn from(why: String) -> Self {
        RenewError::Failed(why)
    }
}

impl From<&str> for RenewError {
    fn from(why: &str) -> Self {
        RenewError::Failed(why.to_string())
    }
}
