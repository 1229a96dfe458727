//! `server.json`, the entry the official MCP Registry lists: made from the manifest and the bundle
//! just built (its SHA-256), and checked against the registry's schema plus the registry's own
//! rules the schema leaves out (an `mcpb` package carries `fileSha256`; a name is reverse DNS
//! with one slash; a description of at most 100 characters).
use serde_json::{json, Value};

/// The registry's `server.json` schema (the `draft/server.schema.json` of
/// modelcontextprotocol/registry, MIT, the newest this project could read; it is the 2025-12-11
/// schema with two relaxations: a remote URL may start with a template variable, and `cargo` is
/// named among the registry types).
pub const SCHEMA: &str = include_str!("../schema/registry-server.schema.json");

/// The schema version `server.json` says it follows.
pub const SCHEMA_URL: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The name the registry lists vitals under; README carries it as `mcp-name:` for the registry's
/// ownership check.
pub const NAME: &str = "io.github.vitals-mcp/vitals";

/// Where a release's bundle is downloaded from (the release workflow uploads it there).
pub fn bundle_url(repository: &str, version: &str) -> String {
    format!("{}/releases/download/v{version}/vitals-{version}.mcpb", repository.trim_end_matches('/'))
}

/// The entry for `manifest` (its version, description, repository) and the bundle whose SHA-256 is `sha256`.
pub fn server_json(manifest: &Value, sha256: &str) -> Value {
    let version = manifest["version"].as_str().unwrap_or_default();
    let repository = manifest.pointer("/repository/url").and_then(Value::as_str).unwrap_or("https://github.com/vitals-mcp/vitals");
    let description: String = manifest["description"].as_str().unwrap_or_default().chars().take(100).collect();
    json!({
        "$schema": SCHEMA_URL,
        "name": NAME,
        "title": manifest["display_name"],
        "description": description,
        "version": version,
        "repository": {"url": repository, "source": "github"},
        "websiteUrl": manifest["homepage"],
        "packages": [{
            "registryType": "mcpb",
            "identifier": bundle_url(repository, version),
            "version": version,
            "fileSha256": sha256,
            "transport": {"type": "stdio"}
        }],
        "remotes": [{
            "type": "streamable-http",
            "url": "https://{host}/mcp",
            "variables": {
                "host": {"description": "The host your operator serves vitals at with `serve --http --auth oauth` (you sign in and allow your assistant there)", "isRequired": true}
            }
        }, {
            "type": "streamable-http",
            "url": "https://{host}/u/{connector_secret}/mcp",
            "variables": {
                "host": {"description": "The host your operator serves vitals at (`vitals-mcp serve --http --public-url https://<host>`)", "isRequired": true},
                "connector_secret": {"description": "The 48-character secret of your own connector URL, shown once when it was made (your welcome page, your page's New connector URL, or `vitals-mcp tenant add`): keep it private", "isRequired": true, "isSecret": true}
            }
        }]
    })
}

/// Every problem of `v` as a `server.json`, each naming where it is.
pub fn validate(v: &Value) -> Result<(), Vec<String>> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the bundled schema is JSON");
    let validator = jsonschema::options().should_validate_formats(true).build(&schema).expect("the bundled schema compiles");
    let mut errors: Vec<String> = validator.iter_errors(v).map(|e| format!("{}: {e}", e.instance_path())).collect();
    if v["$schema"] != SCHEMA_URL {
        errors.push(format!("/$schema: must be {SCHEMA_URL}"));
    }
    let name = v["name"].as_str().unwrap_or_default();
    if name.matches('/').count() != 1 || !name.split('/').next().unwrap_or_default().contains('.') {
        errors.push(format!("/name: {name:?} must be reverse DNS with one slash (io.github.<owner>/<name>)"));
    }
    for (i, p) in v["packages"].as_array().into_iter().flatten().enumerate() {
        if p["registryType"] == "mcpb" {
            let sha = p["fileSha256"].as_str().unwrap_or_default();
            if sha.len() != 64 || !sha.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) {
                errors.push(format!("/packages/{i}/fileSha256: an mcpb package needs the bundle's SHA-256 (64 lowercase hex digits)"));
            }
            if !p["identifier"].as_str().unwrap_or_default().starts_with("https://") {
                errors.push(format!("/packages/{i}/identifier: an mcpb package is a direct HTTPS download"));
            }
        }
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Value {
        json!({"version": "1.2.3", "display_name": "vitals: your wearable data", "description": "Read-only access.",
               "homepage": "https://github.com/vitals-mcp/vitals", "repository": {"type": "git", "url": "https://github.com/vitals-mcp/vitals"}})
    }

    #[test]
    fn the_entry_names_the_bundle_by_its_hash_and_passes_the_schema() {
        let sha = "a".repeat(64);
        let v = server_json(&manifest(), &sha);
        assert_eq!(validate(&v), Ok(()));
        assert_eq!(v["packages"][0]["identifier"], "https://github.com/vitals-mcp/vitals/releases/download/v1.2.3/vitals-1.2.3.mcpb");
        assert_eq!(v["packages"][0]["fileSha256"], sha);
    }

    #[test]
    fn what_the_registry_refuses_is_refused() {
        let mut v = server_json(&manifest(), &"a".repeat(64));
        v["packages"][0]["fileSha256"] = json!("XYZ");
        v["packages"][0]["version"] = json!("latest");
        v["description"] = json!("x".repeat(101));
        v["name"] = json!("vitals");
        let e = validate(&v).unwrap_err().join("\n");
        for part in ["/packages/0/fileSha256", "/packages/0/version", "/description", "/name"] {
            assert!(e.contains(part), "{part} is refused: {e}");
        }
    }
}
