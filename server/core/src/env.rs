//! Reading the environment the way an install passes it: a `.mcpb` host substitutes
//! `${user_config.KEY}` from the extension's settings and leaves the placeholder literal when the
//! user left the field empty, so a placeholder, like an empty or blank value, means "not set".

/// The variable's value, trimmed; None when unset, blank, or an unsubstituted `${...}` placeholder.
pub fn var(name: &str) -> Option<String> {
    read(&std::env::var(name).ok()?)
}

/// A value as the environment gives it, trimmed; None when blank or an unsubstituted placeholder
/// (also how [`crate::config::Config`] reads the values it is built from).
pub fn read(v: &str) -> Option<String> {
    let v = v.trim();
    let placeholder = v.starts_with("${") && v.ends_with('}');
    (!v.is_empty() && !placeholder).then(|| v.to_string())
}

/// A switch: `1`, `true`, `yes` or `on` (any case) is on; anything else, or not set, is off.
pub fn flag(name: &str) -> bool {
    var(name).is_some_and(|v| is_on(&v))
}

/// Whether a switch's value means on.
pub fn is_on(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_and_blanks_are_unset() {
        // Distinct names: tests run in parallel in one process.
        std::env::set_var("VTEST_ENV_A", "${user_config.oura_client_id}");
        std::env::set_var("VTEST_ENV_B", "  ");
        std::env::set_var("VTEST_ENV_C", " abc ");
        std::env::set_var("VTEST_ENV_D", "TRUE");
        assert_eq!(super::var("VTEST_ENV_A"), None);
        assert_eq!(super::var("VTEST_ENV_B"), None);
        assert_eq!(super::var("VTEST_ENV_C").as_deref(), Some("abc"));
        assert!(super::flag("VTEST_ENV_D") && !super::flag("VTEST_ENV_A"));
    }
}
