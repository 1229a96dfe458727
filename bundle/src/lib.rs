//! The signed `.mcpb` Claude Desktop installs: its manifest rules, a reproducible zip, the detached
//! CMS signature `mcpb sign` defines (with the zip trailer fixed so strict readers open it), the
//! verifier, and the launcher that makes one bundle run on every platform and architecture.
pub mod der;
pub mod manifest;
pub mod registry;
pub mod sign;
pub mod verify;
pub mod zipfile;

/// The Node launcher staged as `server/launch.js` (Claude Desktop runs it with its own Node).
pub const LAUNCHER: &str = include_str!("../launch.js");

/// Where the launcher looks for each platform's binary: `server/bin/<target>/vitals-mcp[.exe]`.
/// (Node's `process.platform`, `process.arch`, the Rust target.) `launch.js` holds the same table;
/// a test keeps the two equal.
pub const TARGETS: &[(&str, &str, &str)] = &[
    ("darwin", "arm64", "aarch64-apple-darwin"),
    ("darwin", "x64", "x86_64-apple-darwin"),
    ("win32", "x64", "x86_64-pc-windows-msvc"),
    ("linux", "x64", "x86_64-unknown-linux-gnu"),
    ("linux", "arm64", "aarch64-unknown-linux-gnu"),
];

/// The staged path of a target's server binary.
pub fn binary_path(target: &str) -> String {
    let exe = if target.contains("windows") { ".exe" } else { "" };
    format!("server/bin/{target}/vitals-mcp{exe}")
}

/// SHA-256 of `bytes`, lowercase hex (the `.sha256` file beside a bundle).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use rsa::sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
