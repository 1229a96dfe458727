//! A wrapper for tokens and client secrets whose Debug and Display never show the value.
use std::fmt;

/// A secret value. Formatting it prints `[redacted N chars]`; the value is reachable only
/// through [`Secret::expose`], which is called exactly where the value goes on the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The raw value, for building an `Authorization` header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// Length in characters: `vitals_check` reports it so a user can spot a truncated paste.
    pub fn len(&self) -> usize {
        self.0.chars().count()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret([redacted {} chars])", self.len())
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[redacted {} chars]", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn formatting_never_shows_the_value() {
        let s = Secret::new("tok-ABCDEF-123");
        assert!(!format!("{s}").contains("ABCDEF"));
        assert!(!format!("{s:?}").contains("ABCDEF"));
        assert!(!format!("{:?}", Some(&s)).contains("ABCDEF"));
        assert_eq!(s.expose(), "tok-ABCDEF-123");
    }
}
