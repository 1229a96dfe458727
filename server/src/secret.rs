//! A wrapper for tokens and client secrets whose Debug and Display never show the value.
use std::fmt;

/// A secret value. Formatting it prints `[redacted N chars]`; the value is reachable only
/// through [`Secret::expose`], which is called exactly where the value goes on the wire.
/// The default is empty (a grant not filled in yet).
#[derive(Clone, Default, PartialEq, Eq)]
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

/// A provider's own error text, made safe to show: any run of 16 or more letters, digits, `-` or
/// `_` (the shape of a token, a code or a client secret) becomes `[redacted]`. Words are shorter.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.chars().count() >= 16 {
            out.push_str("[redacted]");
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
            run.push(ch);
        } else {
            flush(&mut run, &mut out);
            out.push(ch);
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_token_shaped_runs_and_keeps_words() {
        let t = "XRequestID: Not provided invalid_token: The access token b186a9d25ac9ef51c19fcd9619644ed443b7021b is invalid";
        let r = redact(t);
        assert!(!r.contains("b186a9d25ac9"), "{r}");
        assert!(r.starts_with("XRequestID: Not provided invalid_token: The access token [redacted] is invalid"), "{r}");
    }
    #[test]
    fn formatting_never_shows_the_value() {
        let s = Secret::new("tok-ABCDEF-123");
        assert!(!format!("{s}").contains("ABCDEF"));
        assert!(!format!("{s:?}").contains("ABCDEF"));
        assert!(!format!("{:?}", Some(&s)).contains("ABCDEF"));
        assert_eq!(s.expose(), "tok-ABCDEF-123");
    }
}
