//! `cargo xtask dist`: build the server for every target this machine can build, stage it with
//! the manifest, icon and launcher, pack, sign, verify, and write `dist/vitals-<version>.mcpb`
//! with its SHA-256. `cargo xtask verify FILE` checks a bundle the same way.
use bundle::{binary_path, manifest, sign, verify, TARGETS};
use std::path::{Path, PathBuf};
use std::process::Command;

pub enum Signing {
    Unsigned,
    SelfSigned,
    Pem { key: PathBuf, cert: PathBuf, intermediates: Vec<PathBuf> },
}

pub struct Options {
    /// Targets to build; empty means every target of the release matrix this machine can build.
    pub targets: Vec<String>,
    /// Binaries built elsewhere (the release workflow's runners): target → path.
    pub prebuilt: Vec<(String, PathBuf)>,
    pub signing: Signing,
}

/// Cargo, without what `cargo run` put in our environment for xtask itself (package variables, a
/// library path): inherited, they change build-script and rustc fingerprints, and every `dist`
/// would rebuild the server from scratch.
pub fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or("cargo".into()));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().to_string();
        let ours = ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_", "CARGO_CRATE_", "CARGO_PRIMARY_PACKAGE", "CARGO_RUSTC_CURRENT_DIR"];
        if ours.iter().any(|p| k.starts_with(p)) || k == "LD_LIBRARY_PATH" || k == "DYLD_FALLBACK_LIBRARY_PATH" {
            c.env_remove(&k);
        }
    }
    c
}

fn host() -> String {
    let out = Command::new("rustc").arg("-vV").output().expect("rustc runs");
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| l.strip_prefix("host: ").map(str::to_string)).expect("rustc names its host")
}

fn installed_targets() -> Vec<String> {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().map(|l| l.trim().to_string()).collect())
        .unwrap_or_default()
}

/// The workspace version, from `[workspace.package]` in the root Cargo.toml.
pub fn workspace_version(root: &Path) -> String {
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace Cargo.toml");
    let section = &toml[toml.find("[workspace.package]").expect("a [workspace.package] section")..];
    let line = section.lines().find(|l| l.trim_start().starts_with("version")).expect("a workspace version");
    line.split('"').nth(1).expect("a quoted version").to_string()
}

fn build(root: &Path, target: &str, host: &str) -> Result<PathBuf, String> {
    let mut c = cargo();
    c.args(["build", "--release", "--locked", "--quiet", "-p", "vitals", "--bin", "vitals-mcp"]).current_dir(root);
    if target != host {
        c.args(["--target", target]);
    }
    let out = c.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| l.contains("error")).unwrap_or("the build failed").trim().to_string();
        return Err(format!("build failed: {last}"));
    }
    let dir = if target == host { root.join("target/release") } else { root.join("target").join(target).join("release") };
    Ok(dir.join(format!("vitals-mcp{}", if target.contains("windows") { ".exe" } else { "" })))
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to.parent().expect("a staged path has a folder")).map_err(|e| e.to_string())?;
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("{} → {}: {e}", from.display(), to.display()))
}

pub fn dist(root: &Path, opts: Options) -> Result<PathBuf, String> {
    let version = workspace_version(root);
    let manifest_text = std::fs::read_to_string(root.join("manifest.json")).map_err(|e| format!("manifest.json: {e}"))?;
    let m: serde_json::Value = serde_json::from_str(&manifest_text).map_err(|e| format!("manifest.json is not JSON: {e}"))?;
    if m["version"] != version.as_str() {
        return Err(format!("manifest.json says version {} but the workspace is {version}; make them equal", m["version"]));
    }
    manifest::validate(&m).map_err(|e| format!("manifest.json:\n  {}", e.join("\n  ")))?;

    // Which binaries go in.
    let host = host();
    let installed = installed_targets();
    let wanted: Vec<String> = if opts.targets.is_empty() { TARGETS.iter().map(|t| t.2.to_string()).collect() } else { opts.targets.clone() };
    let mut binaries: Vec<(String, PathBuf)> = opts.prebuilt.clone();
    let mut skipped: Vec<(String, String)> = vec![];
    for t in wanted.iter().filter(|t| !opts.prebuilt.iter().any(|(p, _)| p == *t)) {
        if !TARGETS.iter().any(|x| x.2 == t) {
            return Err(format!("`--target {t}` is not in the release matrix: {}", TARGETS.iter().map(|x| x.2).collect::<Vec<_>>().join(", ")));
        }
        if *t != host && !installed.contains(t) {
            skipped.push((t.clone(), format!("its toolchain is not installed (rustup target add {t})")));
            continue;
        }
        eprintln!("building {t} ...");
        match build(root, t, &host) {
            Ok(p) => binaries.push((t.clone(), p)),
            Err(e) => skipped.push((t.clone(), e)),
        }
    }
    if binaries.is_empty() {
        return Err("no server binary could be built or was given; nothing to bundle".into());
    }

    // Stage.
    let stage = root.join("target/dist/stage");
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(stage.join("server")).map_err(|e| e.to_string())?;
    std::fs::write(stage.join("manifest.json"), &manifest_text).map_err(|e| e.to_string())?;
    copy(&root.join("icons/icon.png"), &stage.join("icons/icon.png"))?;
    for doc in ["README.md", "PRIVACY.md", "LICENSE"] {
        if root.join(doc).exists() {
            copy(&root.join(doc), &stage.join(doc))?;
        }
    }
    std::fs::write(stage.join("server/launch.js"), bundle::LAUNCHER).map_err(|e| e.to_string())?;
    for (t, p) in &binaries {
        copy(p, &stage.join(binary_path(t)))?;
    }
    manifest::check_files(&m, |p| std::fs::read(stage.join(p)).ok()).map_err(|e| e.join("; "))?;

    // The manifest's tools are the tools the server lists.
    if let Some((_, p)) = binaries.iter().find(|(t, _)| *t == host) {
        let out = Command::new(p).arg("--list-tools").output().map_err(|e| e.to_string())?;
        let mut listed: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
        let mut named = manifest::tool_names(&m);
        listed.sort();
        named.sort();
        if listed != named {
            return Err(format!("manifest.json lists tools {:?} but the server lists {listed:?}", manifest::tool_names(&m)));
        }
    }

    // Pack, sign, verify.
    let zip = bundle::zipfile::pack(&stage).map_err(|e| e.to_string())?;
    let now = signing_time()?;
    let file = match opts.signing {
        Signing::Unsigned => zip,
        Signing::SelfSigned => {
            let signer = throwaway_signer(&root.join("target/dist"), now)?;
            sign::sign(&zip, &signer, now).map_err(|e| e.to_string())?
        }
        Signing::Pem { key, cert, intermediates } => {
            let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
            let inter: Vec<String> = intermediates.iter().map(|p| read(p)).collect::<Result<_, _>>()?;
            let signer =
                sign::Signer::from_pem(&read(&key)?, &read(&cert)?, &inter.iter().map(String::as_str).collect::<Vec<_>>()).map_err(|e| e.to_string())?;
            sign::sign(&zip, &signer, now).map_err(|e| e.to_string())?
        }
    };
    let report = verify::verify(&file).map_err(|e| format!("the bundle just made does not verify: {e}"))?;
    match openssl_check(root, &file) {
        Some(Err(e)) => return Err(e),
        Some(Ok(msg)) => eprintln!("{msg}"),
        None => {}
    }

    let out_dir = root.join("dist");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let name = format!("vitals-{version}.mcpb");
    let out = out_dir.join(&name);
    std::fs::write(&out, &file).map_err(|e| e.to_string())?;
    let sha = bundle::sha256_hex(&file);
    std::fs::write(out_dir.join(format!("{name}.sha256")), format!("{sha}  {name}\n")).map_err(|e| e.to_string())?;
    // The registry's entry for this very bundle, checked before it is written.
    let entry = bundle::registry::server_json(&m, &sha);
    bundle::registry::validate(&entry).map_err(|e| format!("server.json does not pass the registry's rules: {}", e.join("; ")))?;
    std::fs::write(out_dir.join("server.json"), serde_json::to_string_pretty(&entry).map_err(|e| e.to_string())? + "\n").map_err(|e| e.to_string())?;

    println!("{} ({} bytes, sha256 {sha}); the registry's entry in {}", out.display(), file.len(), out_dir.join("server.json").display());
    for (t, _) in &binaries {
        println!("  included {t}");
    }
    for (t, why) in &skipped {
        println!("  skipped  {t}: {why}");
    }
    let platforms: Vec<&str> =
        m.pointer("/compatibility/platforms").and_then(|p| p.as_array()).map(|a| a.iter().filter_map(|v| v.as_str()).collect()).unwrap_or_default();
    for p in platforms {
        if !binaries.iter().any(|(t, _)| TARGETS.iter().any(|x| x.0 == p && x.2 == t)) {
            println!("  warning  the manifest lists {p}, but this bundle has no {p} server (the release workflow builds them all)");
        }
    }
    println!("  {}", describe(&report));
    Ok(out)
}

pub fn describe(r: &verify::Report) -> String {
    match &r.signature {
        None => format!("unsigned; {} files; manifest valid", r.entries.len()),
        Some(s) => format!(
            "signed by {}{} (sha256 {}, valid {} to {}, {} certificate(s)); {} files; manifest valid",
            s.subject,
            if s.self_signed { ", self-signed" } else { "" },
            s.fingerprint,
            s.not_before,
            s.not_after,
            s.certificates,
            r.entries.len()
        ),
    }
}

/// A second opinion from `openssl cms -verify` when OpenSSL is installed (chain not checked).
fn openssl_check(root: &Path, file: &[u8]) -> Option<Result<String, String>> {
    let (content, sig) = verify::split(file).ok()??;
    let dir = root.join("target/dist");
    let (c, s) = (dir.join("content.bin"), dir.join("sig.der"));
    std::fs::write(&c, content).ok()?;
    std::fs::write(&s, sig).ok()?;
    let o = Command::new("openssl")
        .args(["cms", "-verify", "-binary", "-inform", "DER", "-noverify", "-out"])
        .arg(if cfg!(windows) { "NUL" } else { "/dev/null" })
        .arg("-in")
        .arg(&s)
        .arg("-content")
        .arg(&c)
        .output()
        .ok()?;
    Some(if o.status.success() {
        Ok("  openssl cms -verify: successful".into())
    } else {
        Err(format!("openssl cms -verify refused the signature: {}", String::from_utf8_lossy(&o.stderr).trim()))
    })
}

/// When the signature says it was made: `SOURCE_DATE_EPOCH` (the reproducible-builds convention) when
/// set, so two runs over the same binaries give the same bytes; otherwise now.
fn signing_time() -> Result<jiff::Timestamp, String> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|s| jiff::Timestamp::from_second(s).ok())
            .ok_or_else(|| format!("SOURCE_DATE_EPOCH is {v:?}: send whole seconds since 1970-01-01 UTC, e.g. 1767225600")),
        Err(_) => Ok(jiff::Timestamp::now()),
    }
}

/// Days a kept throwaway certificate is reused before a new one is made (it is valid for a year).
const THROWAWAY_DAYS: u64 = 300;

/// `--self-signed`: the throwaway key and certificate kept in `dir` (key 0600), made once and reused,
/// so two `dist` runs sign with the same certificate and, with `SOURCE_DATE_EPOCH`, give the same bytes.
fn throwaway_signer(dir: &Path, now: jiff::Timestamp) -> Result<sign::Signer, String> {
    let (key, cert) = (dir.join("self-signed-key.pem"), dir.join("self-signed-cert.pem"));
    let young =
        |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|a| a.as_secs() < THROWAWAY_DAYS * 86_400);
    if young(&cert) {
        if let (Ok(k), Ok(c)) = (std::fs::read_to_string(&key), std::fs::read_to_string(&cert)) {
            if let Ok(s) = sign::Signer::from_pem(&k, &c, &[]) {
                return Ok(s);
            }
        }
    }
    let s = sign::Signer::self_signed("vitals self-signed (local use only)", now).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    write_private(&key, &s.key_pem)?;
    std::fs::write(&cert, &s.cert_pem).map_err(|e| format!("{}: {e}", cert.display()))?;
    Ok(s.signer)
}

fn write_private(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path).and_then(|mut f| f.write_all(text.as_bytes())).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throwaway_certificate_is_kept_and_reused_so_signing_is_repeatable() {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp")).join(format!("vitals-xtask-selfsigned-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let at = jiff::Timestamp::from_second(1_767_225_600).unwrap();
        let stage = dir.join("stage");
        std::fs::create_dir_all(&stage).unwrap();
        std::fs::write(stage.join("manifest.json"), "{}").unwrap();
        let zip = bundle::zipfile::pack(&stage).unwrap();
        let first = sign::sign(&zip, &throwaway_signer(&dir, at).unwrap(), at).unwrap();
        let second = sign::sign(&zip, &throwaway_signer(&dir, at).unwrap(), at).unwrap();
        assert_eq!(first, second, "same key, same certificate, same signing time: same bytes");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("self-signed-key.pem")).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the throwaway key is private");
        }
        // A damaged pair is replaced, not used.
        std::fs::write(dir.join("self-signed-key.pem"), "not a key").unwrap();
        let third = sign::sign(&zip, &throwaway_signer(&dir, at).unwrap(), at).unwrap();
        assert_ne!(first, third, "a new key signs differently");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
