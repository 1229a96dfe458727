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

/// The SHA-256 of a secret, as hex: what is kept of a key, a token or a code in place of it.
pub fn digest(secret: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs of 32 or more lowercase hex digits (a tenant's id, a digest) as `[id]`: what the server's
/// log writer does to every line, so a path or a message that names a tenant's folder names no one.
pub fn redact_ids(text: &str) -> String {
    replace_runs(text, |ch| ch.is_ascii_digit() || ('a'..='f').contains(&ch), 32, "[id]")
}

/// `text` with every run of at least `min` characters that are `part` of one replaced by `with`.
fn replace_runs(text: &str, part: impl Fn(char) -> bool, min: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        out.push_str(if run.chars().count() >= min { with } else { run });
        run.clear();
    };
    for ch in text.chars() {
        if part(ch) {
            run.push(ch);
        } else {
            flush(&mut run, &mut out);
            out.push(ch);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A log writer that passes each line through [`redact_ids`] (the log formatter writes a whole
/// event at once).
pub struct IdsRedacted<W: std::io::Write>(pub W);

impl<W: std::io::Write> std::io::Write for IdsRedacted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(redact_ids(&String::from_utf8_lossy(buf)).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A provider's own error text, made safe to show: any run of 16 or more letters, digits, `-` or
/// `_` (the shape of a token, a code or a client secret) becomes `[redacted]`. Words are shorter.
pub fn redact(text: &str) -> String {
    replace_runs(text, |ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_', 16, "[redacted]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenants_id_never_reaches_the_log_whole() {
        let id = "0123456789abcdef0123456789abcdef0123456789abcdef";
        let line = format!("/srv/tenants/{id}/tokens.json was open to other users; activity 21482825013 read");
        let said = redact_ids(&line);
        assert_eq!(said, "/srv/tenants/[id]/tokens.json was open to other users; activity 21482825013 read");
        let mut out = IdsRedacted(Vec::new());
        std::io::Write::write_all(&mut out, line.as_bytes()).unwrap();
        assert!(!String::from_utf8(out.0).unwrap().contains(id));
    }

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
