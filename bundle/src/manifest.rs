//! `manifest.json` against the 0.3 rules, strictly: the JSON schema `mcpb` 2.1.2 ships (unknown
//! keys anywhere are errors), plus what the schema leaves out but `mcpb` and Claude Desktop
//! enforce: `manifest_version` present, a local PNG icon, `user_config` keys a host can substitute.
use serde_json::Value;

/// The schema `@anthropic-ai/mcpb` 2.1.2 validates a 0.3 manifest with.
pub const SCHEMA_0_3: &str = include_str!("../schema/mcpb-manifest-v0.3.schema.json");

/// Every problem found, each naming where it is (`/server/type: ...`).
pub fn validate(m: &Value) -> Result<(), Vec<String>> {
    let schema: Value = serde_json::from_str(SCHEMA_0_3).expect("the bundled schema is JSON");
    let validator = jsonschema::options().should_validate_formats(true).build(&schema).expect("the bundled schema compiles");
    let mut errors: Vec<String> = validator.iter_errors(m).map(|e| format!("{}: {e}", pointer(&e.instance_path().to_string()))).collect();
    if m.get("manifest_version").and_then(Value::as_str) != Some("0.3") {
        errors.push("/manifest_version: must be \"0.3\" (the schema does not require it; mcpb and Claude Desktop do)".into());
    }
    if let Some(icon) = m.get("icon").and_then(Value::as_str) {
        if icon.contains("${") || icon.starts_with('/') || icon.contains("://") || icon.contains('\\') {
            errors.push(format!("/icon: {icon:?} must be a relative path to a PNG inside the bundle"));
        }
        if !icon.ends_with(".png") {
            errors.push(format!("/icon: {icon:?} must be a PNG"));
        }
    }
    if let Some(cfg) = m.get("user_config").and_then(Value::as_object) {
        for k in cfg.keys() {
            // The host puts the key into a regular expression unescaped.
            if k.is_empty() || !k.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
                errors.push(format!("/user_config/{k}: keys must be [a-z0-9_] (the host substitutes them through a regular expression)"));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn pointer(p: &str) -> String {
    if p.is_empty() {
        "/".into()
    } else {
        p.to_string()
    }
}

/// The tool names a manifest lists, in order.
pub fn tool_names(m: &Value) -> Vec<String> {
    m.get("tools").and_then(Value::as_array).map(|a| a.iter().filter_map(|t| t.get("name")?.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// Width and height of a PNG, or why it is not one.
pub fn png_size(bytes: &[u8]) -> Result<(u32, u32), String> {
    const MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
    if !bytes.starts_with(MAGIC) || bytes.len() < 24 || &bytes[12..16] != b"IHDR" {
        return Err("not a PNG file".into());
    }
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Ok((be(16), be(20)))
}

/// What the staged files must hold for this manifest: the entry point and a 512×512 PNG icon.
pub fn check_files(m: &Value, read: impl Fn(&str) -> Option<Vec<u8>>) -> Result<(), Vec<String>> {
    let mut errors = vec![];
    match m.pointer("/server/entry_point").and_then(Value::as_str) {
        Some(e) if read(e).is_some() => {}
        Some(e) => errors.push(format!("/server/entry_point: {e} is not in the bundle")),
        None => errors.push("/server/entry_point: missing".into()),
    }
    if let Some(icon) = m.get("icon").and_then(Value::as_str) {
        match read(icon).map(|b| png_size(&b)) {
            None => errors.push(format!("/icon: {icon} is not in the bundle")),
            Some(Err(e)) => errors.push(format!("/icon: {icon} is {e}")),
            Some(Ok((512, 512))) => {}
            Some(Ok((w, h))) => errors.push(format!("/icon: {icon} is {w}x{h}; it must be 512x512")),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
