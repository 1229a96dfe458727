//! The workspace's debug binaries, for the tests of a package other than theirs (which get no
//! `CARGO_BIN_EXE_…`). `cargo test --workspace` has built each already, with the features every test
//! target of the command is built with; `cargo build -p <package>` resolves other features (no
//! dev-dependencies) and so compiles every crate under the binary a second time (the server's took
//! 2 m 20 s of a fresh clone's test command, DECISIONS 121). A binary is built here only when a file
//! it may be built from is newer, as after `cargo test -p vitals-twin --test e2e` with the server changed.
//!
//! The rule reads the source folders rather than cargo's dep-info: `cargo test` leaves none beside a
//! binary, and the one in `deps/` lists only the binary's own crate, by paths relative to the
//! workspace (DECISIONS 137).
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The manifests every binary of the workspace is built from, besides its source folders.
pub const MANIFESTS: &[&str] =
    &["Cargo.lock", "Cargo.toml", "server/Cargo.toml", "server/core/Cargo.toml", "server/providers/Cargo.toml", "server/engine/Cargo.toml", "tests/Cargo.toml"];

/// The debug binary `name` of `package` in the workspace at `root`, built first only when a file
/// or folder under `sources` (folders of `root`), or a manifest, is newer than it.
pub fn debug_binary(root: &Path, package: &str, name: &str, sources: &[&str]) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(root.join("target"));
    let bin = target.join("debug").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if built_after_its_sources(&bin, root, sources) {
        return bin;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = std::process::Command::new(cargo).args(["build", "--quiet", "-p", package, "--bin", name]).current_dir(root).status().expect("run cargo build");
    assert!(st.success(), "building {name} failed");
    bin
}

/// Whether `bin` is at least as new as every file and folder under `sources` and every manifest:
/// cargo's own rule for a binary that needs no building, over what it may be built from. A
/// folder's time moves when a file in it is added, renamed or removed, so a deleted source counts
/// too. Anything missing or unreadable says no.
pub fn built_after_its_sources(bin: &Path, root: &Path, sources: &[&str]) -> bool {
    let Some(built) = modified(bin) else {
        return false;
    };
    let manifests = MANIFESTS.iter().all(|m| modified(&root.join(m)).is_some_and(|t| t <= built));
    manifests && sources.iter().all(|s| newest(&root.join(s)).is_some_and(|t| t <= built))
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The newest time of `dir` and everything under it (None: unreadable).
fn newest(dir: &Path) -> Option<SystemTime> {
    let mut latest = modified(dir)?;
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let t = if entry.file_type().ok()?.is_dir() { newest(&entry.path())? } else { modified(&entry.path())? };
        latest = latest.max(t);
    }
    Some(latest)
}
