//! The workspace's debug binaries, for the tests of a package other than theirs (which get no
//! `CARGO_BIN_EXE_…`). `cargo test --workspace` has built each already, with the features every test
//! target of the command is built with; `cargo build -p <package>` resolves other features (no
//! dev-dependencies) and so compiles every crate under the binary a second time (the server's took
//! 2 m 20 s of a fresh clone's test command, DECISIONS 121). A binary is built here only when it is
//! older than a file it was built from, as after `cargo test -p vitals-twin --test e2e` with the
//! server changed.
use std::path::{Path, PathBuf};

/// The manifests every binary of the workspace is built from, besides its dep-info's sources.
pub const MANIFESTS: &[&str] =
    &["Cargo.lock", "Cargo.toml", "server/Cargo.toml", "server/core/Cargo.toml", "server/providers/Cargo.toml", "server/engine/Cargo.toml", "tests/Cargo.toml"];

/// The debug binary `name` of `package` in the workspace at `root`, built first only when stale.
pub fn debug_binary(root: &Path, package: &str, name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(root.join("target"));
    let bin = target.join("debug").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if built_from_these_sources(&bin, root) {
        return bin;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = std::process::Command::new(cargo).args(["build", "--quiet", "-p", package, "--bin", name]).current_dir(root).status().expect("run cargo build");
    assert!(st.success(), "building {name} failed");
    bin
}

/// Whether `bin` is at least as new as every file cargo's dep-info says it was built from, and
/// as the lock file and the manifests: cargo's own rule for a binary that needs no building.
/// Anything missing or unreadable says no.
pub fn built_from_these_sources(bin: &Path, root: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let (Some(built), Some(info)) = (modified(bin), dep_info(bin)) else {
        return false;
    };
    let Some((_, deps)) = info.lines().next().and_then(|l| l.split_once(": ")) else {
        return false;
    };
    // Make's syntax: paths split by spaces, a space inside a path escaped (`\ `).
    let deps: Vec<PathBuf> = deps.replace("\\ ", "\0").split_whitespace().map(|p| PathBuf::from(p.replace('\0', " "))).collect();
    !deps.is_empty() && deps.iter().cloned().chain(MANIFESTS.iter().map(|m| root.join(m))).all(|p| modified(&p).is_some_and(|t| t <= built))
}

/// Cargo's dep-info of `bin`: beside it (`<name>.d`, written by `cargo build`), or, for a binary
/// `cargo test` built for a test target (which writes none beside it), the one of the file in
/// `deps/` that `bin` is a hard link of.
fn dep_info(bin: &Path) -> Option<String> {
    if let Ok(info) = std::fs::read_to_string(bin.with_extension("d")) {
        return Some(info);
    }
    linked_in_deps(bin).and_then(|d| std::fs::read_to_string(d.with_extension("d")).ok())
}

#[cfg(unix)]
fn linked_in_deps(bin: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(bin).ok()?;
    // deps/ names a binary's files after it with `_` for `-` and a hash: `vitals_mcp-0123abcd`.
    let prefix = format!("{}-", bin.file_stem()?.to_str()?.replace('-', "_"));
    let deps = std::fs::read_dir(bin.parent()?.join("deps")).ok()?;
    deps.filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix) && !n.contains('.')))
        .find(|p| std::fs::metadata(p).is_ok_and(|d| d.dev() == m.dev() && d.ino() == m.ino()))
}

#[cfg(not(unix))]
fn linked_in_deps(_: &Path) -> Option<PathBuf> {
    None
}
