//! The extension as Claude Desktop gets it: `manifest.json` agrees with the server and the workspace,
//! the launcher restores the executable bit and starts the right binary, a signed bundle opens in
//! the strict zip reader Claude Desktop uses (yauzl) and in `mcpb` 2.1.2 itself, and the server reads
//! an unset extension setting (`${user_config.…}` left literal) as unset.
use crate::common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join("manifest.json")).unwrap()).unwrap()
}

fn workspace_version() -> String {
    let toml = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let section = &toml[toml.find("[workspace.package]").unwrap()..];
    section.lines().find(|l| l.starts_with("version")).unwrap().split('"').nth(1).unwrap().to_string()
}

#[test]
fn the_manifest_matches_the_workspace_and_the_server() {
    let m = manifest();
    assert_eq!(bundle::manifest::validate(&m), Ok(()));
    assert_eq!(m["version"], workspace_version(), "manifest.json's version drifted from the workspace's");
    assert_eq!(m["version"], env!("CARGO_PKG_VERSION"));
    let out = vitals_cmd().arg("--list-tools").output().unwrap();
    let mut listed: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    let mut named = bundle::manifest::tool_names(&m);
    listed.sort();
    named.sort();
    assert_eq!(named, listed, "manifest.json's tools are the tools the server lists");
    // Every setting reaches the server through the environment, and every placeholder names a setting.
    let env = m.pointer("/server/mcp_config/env").unwrap().as_object().unwrap();
    let settings = m["user_config"].as_object().unwrap();
    for (var, value) in env {
        let key = value.as_str().unwrap().strip_prefix("${user_config.").and_then(|v| v.strip_suffix('}')).unwrap_or_else(|| panic!("{var} is not a setting"));
        assert!(settings.contains_key(key), "{var} names the unknown setting {key}");
    }
    // Every provider that connects with OAuth gets its app credentials as settings.
    for p in vitals::providers::all(&Default::default()).iter().filter_map(|p| p.spec().connection.oauth().map(|o| o.app_env)) {
        assert!(env.contains_key(p.client_id) && env.contains_key(p.client_secret), "the extension passes {} and {}", p.client_id, p.client_secret);
    }
    // Every provider that connects with a key gets it as a setting.
    for k in vitals::providers::all(&Default::default()).iter().filter_map(|p| p.spec().connection.api_key()) {
        assert!(env.contains_key(k.env), "the extension passes {}", k.env);
    }
    // Every provider read from a file gets a file setting: Claude Desktop's file picker.
    for f in vitals::providers::specs().filter_map(|s| s.connection.file()) {
        let k = env[f.env].as_str().unwrap().trim_start_matches("${user_config.").trim_end_matches('}');
        assert_eq!(settings[k]["type"], "file", "{k} is chosen with the host's file picker");
        assert_eq!(settings[k]["required"], false, "{k} is optional: the extension starts on sample data");
    }
    assert!(env.contains_key("VITALS_SANDBOX"), "the extension passes VITALS_SANDBOX");
    // Every credential setting (what a provider's client id, secret or key comes from) is masked.
    let credentials = vitals::providers::specs().flat_map(|s| {
        let oauth = s.connection.oauth().map(|o| [o.app_env.client_id, o.app_env.client_secret]).into_iter().flatten();
        oauth.chain(s.connection.api_key().map(|k| k.env))
    });
    for var in credentials {
        let k = env[var].as_str().unwrap().trim_start_matches("${user_config.").trim_end_matches('}');
        assert_eq!(settings[k]["sensitive"], true, "{k} is masked and kept in the keychain");
        assert_eq!(settings[k]["required"], false, "{k} is optional: the extension starts on sample data");
    }
    // The install screen names every provider the registry has, and no "follow later".
    for field in ["description", "long_description"] {
        let text = m[field].as_str().unwrap();
        for p in vitals::providers::all(&Default::default()) {
            let name = p.spec().display.split_whitespace().next().unwrap();
            assert!(text.contains(name), "manifest.json's {field} does not name {name}: {text}");
        }
        assert!(!text.contains("follow)") && !text.contains("Oura's sandbox"), "manifest.json's {field} says what vitals was: {text}");
    }
    // The platforms promised are platforms the launcher has a binary for.
    for p in m.pointer("/compatibility/platforms").unwrap().as_array().unwrap() {
        assert!(bundle::TARGETS.iter().any(|t| t.0 == p), "{p}");
    }
    assert_eq!(m["icon"], "icons/icon.png", "the repo's own icon, so `mcpb validate manifest.json` works in the tree too");
    assert_eq!(bundle::manifest::png_size(&std::fs::read(root().join("icons/icon.png")).unwrap()), Ok((512, 512)));
}

#[test]
fn the_launcher_knows_the_same_targets_as_the_bundle() {
    let js = bundle::LAUNCHER;
    for (platform, arch, target) in bundle::TARGETS {
        assert!(js.contains(&format!("\"{platform}-{arch}\": \"{target}\"")), "launch.js lacks {platform}-{arch}");
    }
    assert_eq!(js.matches("\": \"").count(), bundle::TARGETS.len(), "launch.js has a target bundle::TARGETS lacks");
}

fn host_target() -> String {
    let o = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8_lossy(&o.stdout).lines().find_map(|l| l.strip_prefix("host: ").map(str::to_string)).unwrap()
}

/// A bundle folder as Claude Desktop extracts it: every file 0600, the launcher beside the binaries.
fn extracted(tag: &str) -> PathBuf {
    let d = common::scratch().join(format!("vitals-mcpb-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let bin = d.join(bundle::binary_path(&host_target()));
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    // Copied by `cp`, not by this process: a child another test thread forks meanwhile would inherit
    // our write descriptor, and the launcher's exec of the binary would fail with "Text file busy".
    assert!(Command::new("cp").arg(server_bin()).arg(&bin).status().unwrap().success());
    std::fs::write(d.join("server/launch.js"), bundle::LAUNCHER).unwrap();
    std::fs::write(d.join("manifest.json"), serde_json::to_vec_pretty(&manifest()).unwrap()).unwrap();
    std::fs::create_dir_all(d.join("icons")).unwrap();
    std::fs::copy(root().join("icons/icon.png"), d.join("icons/icon.png")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    d
}

#[cfg(unix)]
#[test]
fn the_launcher_restores_the_executable_bit_and_starts_the_server() {
    use std::os::unix::fs::PermissionsExt;
    let need = "this test needs node (Claude Desktop runs the launcher with its own)";
    let d = extracted("launch");
    let o = Command::new("node").arg(d.join("server/launch.js")).arg("--list-tools").output().expect(need);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).lines().any(|l| l == "vitals_query"), "the server's stdout reaches the client");
    let bin = d.join(bundle::binary_path(&host_target()));
    assert_eq!(std::fs::metadata(&bin).unwrap().permissions().mode() & 0o777, 0o755);
    // Exit codes pass through, and a missing binary is said on stderr, not stdout (the MCP channel).
    let o = Command::new("node").arg(d.join("server/launch.js")).arg("--bogus").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_file(&bin).unwrap();
    let o = Command::new("node").arg(d.join("server/launch.js")).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("built without"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// yauzl 3 (Claude Desktop's zip reader) and `@anthropic-ai/mcpb` 2.1.2, installed once into target/.
fn npm_tools() -> PathBuf {
    let dir = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or(root().join("target")).join("e2e-npm");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    if !dir.join("node_modules/yauzl").exists() || !dir.join("node_modules/.bin/mcpb").exists() {
        let need = "this test needs npm and the npm registry";
        let o = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .args(["yauzl@3.2.0", "@anthropic-ai/mcpb@2.1.2"])
            .output()
            .expect(need);
        assert!(o.status.success(), "{need}: {}", String::from_utf8_lossy(&o.stderr));
    }
    dir
}

fn yauzl(tools: &Path, file: &Path) -> (bool, String) {
    let script = "const y=require('yauzl');y.open(process.argv[1],{strictFileNames:true,validateEntrySizes:true},(e,z)=>{if(e){console.log('refused: '+e.message);process.exit(1)}let n=0;z.on('entry',()=>n++);z.on('end',()=>console.log('entries '+n))})";
    let o = Command::new("node").arg("-e").arg(script).arg(file).env("NODE_PATH", tools.join("node_modules")).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).trim().to_string())
}

#[cfg(unix)]
#[test]
fn a_signed_bundle_opens_in_claude_desktops_zip_reader_and_in_mcpb() {
    use std::os::unix::fs::PermissionsExt;
    let tools = npm_tools();
    let d = extracted("signed");
    // Any bytes do for the server here (nothing runs it), and a small one keeps unoptimised deflate quick.
    std::fs::write(d.join(bundle::binary_path(&host_target())), b"\x7fELF stand-in").unwrap();
    let zip = bundle::zipfile::pack(&d).unwrap();
    let signer = bundle::sign::Signer::self_signed("vitals e2e", jiff::Timestamp::now()).unwrap().signer;
    let signed = bundle::sign::sign(&zip, &signer, jiff::Timestamp::now()).unwrap();
    let file = d.with_extension("mcpb");
    std::fs::write(&file, &signed).unwrap();
    assert_eq!(yauzl(&tools, &file), (true, "entries 4".to_string()));
    // The registry's entry for this bundle: the schema's, and its hash is this file's.
    let entry = bundle::registry::server_json(&manifest(), &bundle::sha256_hex(&signed));
    assert_eq!(bundle::registry::validate(&entry), Ok(()));
    assert_eq!(entry["packages"][0]["fileSha256"].as_str().unwrap(), bundle::sha256_hex(&std::fs::read(&file).unwrap()));
    assert!(
        std::fs::read_to_string(root().join("README.md")).unwrap().contains(&format!("mcp-name: {}", bundle::registry::NAME)),
        "README carries the line the registry reads"
    );

    // What `mcpb sign` 2.1.2 writes (the comment length left at 0) is what Claude Desktop refuses.
    let mut unpatched = signed.clone();
    let eocd = bundle::zipfile::Eocd::find(&zip).unwrap();
    unpatched[eocd.offset + 20..eocd.offset + 22].copy_from_slice(&[0, 0]);
    let bad = d.with_extension("unpatched.mcpb");
    std::fs::write(&bad, &unpatched).unwrap();
    let (ok, said) = yauzl(&tools, &bad);
    assert!(!ok && said.contains("comment length"), "{said}");

    // mcpb itself unpacks ours, restores the modes, and accepts the manifest.
    let out = d.with_extension("unpacked");
    let mcpb = tools.join("node_modules/.bin/mcpb");
    let o = Command::new(&mcpb).arg("unpack").arg(&file).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bin = out.join(bundle::binary_path(&host_target()));
    assert_eq!(std::fs::metadata(&bin).unwrap().permissions().mode() & 0o777, 0o755);
    let o = Command::new(&mcpb).arg("validate").arg(out.join("manifest.json")).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && said.contains("Manifest schema validation passes"), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unset_extension_setting_is_unset_and_the_sample_switch_works() {
    let twin = twin().await;
    // What Claude Desktop passes when the user left the fields empty: the placeholders, literally.
    let unset = [
        ("VITALS_OURA_CLIENT_ID", "${user_config.oura_client_id}"),
        ("VITALS_OURA_CLIENT_SECRET", "${user_config.oura_client_secret}"),
        ("VITALS_SANDBOX", "${user_config.sample_data}"),
    ];
    let s = connect(&twin, false, &unset).await;
    let c = s.ok("vitals_check", json!({})).await;
    let p = &c["providers"][0];
    assert!(p["app_credentials"].as_str().unwrap().starts_with("not set"), "{p}");
    assert_eq!(p["credential"], "personal_token", "the placeholder does not force the sandbox: {p}");
    s.close().await;
    let s = connect(&twin, false, &[("VITALS_SANDBOX", "true")]).await;
    let a = s.ok("vitals_query", json!({"collection": "oura.daily_sleep", "day": "2026-06-10"})).await;
    assert_eq!(a["synthetic"], true, "the switch on: sample data even with a token");
    s.close().await;
}

#[test]
fn the_release_matrix_is_the_bundles_targets() {
    let dist = std::fs::read_to_string(root().join("dist-workspace.toml")).unwrap();
    let line = dist.lines().find(|l| l.starts_with("targets = ")).expect("cargo-dist lists its targets");
    let mut listed: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    let mut ours: Vec<&str> = bundle::TARGETS.iter().map(|t| t.2).collect();
    listed.sort();
    ours.sort();
    assert_eq!(listed, ours, "dist-workspace.toml and bundle::TARGETS name the same targets");
    let wf = std::fs::read_to_string(root().join(".github/workflows/mcpb.yml")).unwrap();
    for t in &ours {
        assert!(wf.contains(&format!("target: {t},")), "the workflow builds {t} on its own runner");
        assert!(wf.contains(&format!("--prebuilt {t}=artifacts/server-{t}/")), "and bundles it");
        assert!(dist.contains(&format!("{t} = \"")), "cargo-dist names a runner for {t}");
    }
    assert!(wf.contains("cargo xtask dist") && wf.contains("cargo xtask verify"), "the release assembles with the same xtask");
}

/// What Claude Desktop does with the bundle: unpack it into a folder whose path has spaces, leave
/// every file without its executable bit, substitute `${__dirname}` and the settings into
/// `mcp_config`, start the command, and talk MCP to it.
#[tokio::test(flavor = "multi_thread")]
async fn the_extension_starts_the_way_claude_desktop_starts_it() {
    let tools = npm_tools();
    let staged = extracted("desktop");
    let file = staged.with_extension("mcpb");
    std::fs::write(&file, bundle::zipfile::pack(&staged).unwrap()).unwrap();
    let install = common::scratch().join(format!("vitals mcpb {} / Claude Extensions/local.dxt.vitals", std::process::id()));
    let _ = std::fs::remove_dir_all(&install);
    let o = Command::new(tools.join("node_modules/.bin/mcpb")).arg("unpack").arg(&file).arg(&install).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in bundle::zipfile::files(&install).unwrap() {
            std::fs::set_permissions(install.join(&f), std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
    // The host's substitution: the install folder, and the settings the user left empty (their
    // placeholders stay literal) with the switch at its default.
    let m = manifest();
    let dirname = install.display().to_string();
    // The file picker's choice: an Apple Health export in a folder whose name has spaces, passed as
    // its absolute path (what the host substitutes for a `file` setting).
    let export = install.parent().unwrap().join(format!("Health exports {}/export.zip", std::process::id()));
    std::fs::create_dir_all(export.parent().unwrap()).unwrap();
    let plan = vitals::providers::apple_health::generate::Plan::new(common::ago(4), 4, "America/Chicago");
    vitals::providers::apple_health::generate::write_zip(&plan, "export.xml", std::fs::File::create(&export).unwrap()).unwrap();
    let chosen = export.display().to_string();
    let subst =
        |v: &str| v.replace("${__dirname}", &dirname).replace("${user_config.sample_data}", "false").replace("${user_config.apple_health_file}", &chosen);
    let cfg = &m["server"]["mcp_config"];
    let command = subst(cfg["command"].as_str().unwrap());
    let args: Vec<String> = cfg["args"].as_array().unwrap().iter().map(|a| subst(a.as_str().unwrap())).collect();
    let twin = twin().await;
    let mut cmd = tokio::process::Command::new(&command);
    cmd.args(&args).env_clear().env("VITALS_BROWSER", "none").env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in cfg["env"].as_object().unwrap() {
        cmd.env(k, subst(v.as_str().unwrap()));
    }
    // Hermetic: the twin instead of Oura, a private config folder.
    cmd.env("VITALS_OURA_BASE_URL", twin.base_url()).env("VITALS_CONFIG_DIR", install.join("config")).env("VITALS_TOKEN_STORE", "file");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd).stderr(std::process::Stdio::null()).spawn().unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.expect("the MCP handshake through the launcher");
    let names: Vec<String> = client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    let mut named = bundle::manifest::tool_names(&m);
    named.sort();
    let mut listed = names.clone();
    listed.sort();
    assert_eq!(listed, named);
    let args = json!({"collection": "oura.daily_sleep", "day": "2026-06-10"});
    let r = client.call_tool(rmcp::model::CallToolRequestParams::new("vitals_query").with_arguments(args.as_object().unwrap().clone())).await.unwrap();
    let a = r.structured_content.expect("an answer");
    assert_eq!(a["synthetic"], true, "a fresh install answers from the sample data: {a}");
    assert_eq!(a["count"], 1);
    let args = json!({"collection": "apple_health.activity", "start": common::ds(common::ago(3)), "end": common::ds(common::ago(2))});
    let r = client.call_tool(rmcp::model::CallToolRequestParams::new("vitals_query").with_arguments(args.as_object().unwrap().clone())).await.unwrap();
    let a = r.structured_content.expect("an answer");
    assert_eq!(a["synthetic"], false, "the chosen export is read, not the sample: {a}");
    assert_eq!(a["count"], 2, "{a}");
    let _ = client.cancel().await;
}

#[test]
fn mcpb_accepts_the_manifest_and_reads_the_bundle() {
    let tools = npm_tools();
    let mcpb = tools.join("node_modules/.bin/mcpb");
    let o = Command::new(&mcpb).arg("validate").arg(root().join("manifest.json")).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && said.contains("Manifest schema validation passes"), "{said}");
    let d = extracted("info");
    std::fs::write(d.join(bundle::binary_path(&host_target())), b"\x7fELF stand-in").unwrap();
    let file = d.with_extension("mcpb");
    std::fs::write(&file, bundle::zipfile::pack(&d).unwrap()).unwrap();
    let o = Command::new(&mcpb).arg("info").arg(&file).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    // mcpb 2.1.2 can never call a bundle signed (its PKCS#7 check is a stub); it must read the file.
    assert!(said.contains("vitals-mcpb") && said.contains("Size:"), "{said}");
}
