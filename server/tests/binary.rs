//! The binary the end-to-end suites spawn (`tests/tests/e2e/common/mod.rs`, `server_bin`). This
//! package having a test of its own is what makes `cargo test` build `vitals-mcp` in the same
//! command, with the features of every other test target, so the suites need not build it again
//! with others (DECISIONS 126); they take it when it is newer than every file under `server/` (DECISIONS 137).
use std::path::Path;
use std::process::Command;

#[test]
fn the_binary_the_suites_spawn_is_built_and_says_its_version() {
    let bin = Path::new(env!("CARGO_BIN_EXE_vitals-mcp"));
    // Where the suites look for it.
    assert_eq!(bin.file_name().and_then(|n| n.to_str()), Some(format!("vitals-mcp{}", std::env::consts::EXE_SUFFIX).as_str()));
    let out = Command::new(bin).arg("--version").env_clear().output().expect("the binary runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("vitals-mcp {}", env!("CARGO_PKG_VERSION")));
}
