//! Why a login could not start, in words that say what to do.

/// Why a login could not start.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// No client ID/secret: the text says where to get them and the three ways to give them.
    #[error("{0}")]
    NoApp(String),
    #[error("{0}")]
    Setup(String),
    /// This connection has no page to open (an import, or nothing to connect): what to do instead.
    #[error("{0}")]
    NoPage(String),
    /// A local port the login needs could not be opened (in use by another program, or another login).
    #[error("{0}")]
    Busy(String),
}

/// Why a credential could not be made and saved (a key pasted, a session login submitted, another
/// tool's tokens imported, a browser login's code exchanged), by what can be done next. Each
/// message is the sentence the person reads.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectError {
    /// What the person gave cannot be used (an empty key, no email): nothing was sent.
    #[error("{0}")]
    Input(String),
    /// The provider has no such way in.
    #[error("{0}")]
    NotOffered(String),
    /// The provider refused (the key, the password, the consents): the person acts first.
    #[error("{0}")]
    Refused(String),
    /// The provider did not answer about it (unreachable, a 5xx, a 429): the same may work in a moment.
    #[error("{0}")]
    Unavailable(String),
    /// This server cannot start it as it is set up (no app credentials, a redirect not on this
    /// machine): the person or the operator changes the settings.
    #[error("{0}")]
    Setup(String),
    /// Nobody came back in time (the browser, the login page): start the login again.
    #[error("{0}")]
    TimedOut(String),
    /// This machine could not do its part: the token store could not be opened, read or written,
    /// a local port could not be opened, the terminal could not be read.
    #[error("{0}")]
    Local(String),
    /// Anything else (another tool's folder that could not be read, a reply not understood).
    #[error("{0}")]
    Failed(String),
}

impl ConnectError {
    /// Whether the person's own answer was refused (a wrong password or code, nothing usable given):
    /// only these count toward a sign-in limit. A provider that did not answer, or a login this server
    /// could not finish, says nothing about whoever is guessing.
    pub fn is_refused_answer(&self) -> bool {
        matches!(self, ConnectError::Refused(_) | ConnectError::Input(_))
    }

    /// A connection step's failure, its words prefixed as the caller says them, its kind kept.
    pub fn step(e: crate::connection::StepError, said: impl FnOnce(String) -> String) -> ConnectError {
        use crate::connection::StepError;
        match e {
            StepError::Unavailable(w) => ConnectError::Unavailable(said(w)),
            StepError::Refused(w) => ConnectError::Refused(said(w)),
            StepError::Failed(w) => ConnectError::Failed(said(w)),
        }
    }
}

impl From<LinkError> for ConnectError {
    fn from(e: LinkError) -> Self {
        match e {
            LinkError::NoApp(w) | LinkError::Setup(w) => ConnectError::Setup(w),
            LinkError::NoPage(w) => ConnectError::NotOffered(w),
            LinkError::Busy(w) => ConnectError::Local(w),
        }
    }
}

impl From<super::StoreError> for ConnectError {
    fn from(e: super::StoreError) -> Self {
        ConnectError::Local(e.to_string())
    }
}

/// At the edges (the settings app's commands, the CLI, a tool's answer) a failure is said as it reads.
impl From<ConnectError> for String {
    fn from(e: ConnectError) -> String {
        e.to_string()
    }
}
