//! How a value of the environment is read, the way an install passes it: a `.mcpb` host substitutes
//! `${user_config.KEY}` from the extension's settings and leaves the placeholder literal when the
//! user left the field empty, so a placeholder, like an empty or blank value, means "not set".
//! Only the binary reads the environment itself, once, into a [`crate::config::Config`] that reads
//! each value with [`read`]; nothing here looks a variable up.

/// A value as the environment gives it, trimmed; None when blank or an unsubstituted placeholder.
pub fn read(v: &str) -> Option<String> {
    let v = v.trim();
    let placeholder = v.starts_with("${") && v.ends_with('}');
    (!v.is_empty() && !placeholder).then(|| v.to_string())
}

/// Whether a switch's value means on: `1`, `true`, `yes` or `on` (any case).
pub fn is_on(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_and_blanks_are_unset() {
        assert_eq!(super::read("${user_config.oura_client_id}"), None);
        assert_eq!(super::read("  "), None);
        assert_eq!(super::read(" abc ").as_deref(), Some("abc"));
        assert!(super::is_on("TRUE") && !super::is_on("${user_config.x}"));
    }
}
