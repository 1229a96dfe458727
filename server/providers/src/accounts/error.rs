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
}
