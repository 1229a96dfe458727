//! The binary the end-to-end suites spawn (`tests/tests/e2e/common/mod.rs`, `server_bin`). This
//! package having a test of its own is what makes `cargo test` build `vitals-mcp` in the same
//! command, with the features of every other test target, so the suites need not build it again
//! with others (DECISIONS 1xx); they take it when it is newer than every file its dep-info lists.
use std::path::Path;
use std::process::Command;

#[test]
fn the_binary_the_suites_spawn_is_built_with_its_dep_info_and_says_its_version() {
    let bin = Path::new(env!("CARGO_BIN_EXE_vitals-mcp"));
    let info = std::fs::read_to_string(bin.with_file_name("vitals-mcp.d")).expect("cargo writes the binary's dep-info beside it");
    let main = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join("main.rs");
    assert!(info.contains(&*main.to_string_lossy()), "the dep-info lists the sources it was built from: {info:.300}");
    let out = Command::new(bin).arg("--version").env_clear().output().expect("the binary runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("vitals-mcp {}", env!("CARGO_PKG_VERSION")));
}
