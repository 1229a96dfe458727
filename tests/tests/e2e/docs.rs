//! Every enumerable claim in the docs is pinned to the code: tool names, env vars, paths.
use crate::common;
use std::path::Path;

fn doc(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name)).unwrap()
}

fn server_source() -> String {
    let mut s = String::new();
    fn walk(d: &Path, s: &mut String) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, s)
            } else {
                s.push_str(&std::fs::read_to_string(&p).unwrap())
            }
        }
    }
    // The server, and the commands that build it (their variables are documented too).
    for d in ["../server/src", "../server/core/src", "../server/providers/src", "../server/engine/src", "../xtask/src"] {
        walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join(d), &mut s);
    }
    s
}

/// Backticked words in `doc` that match `pred`.
fn claims(doc: &str, pred: impl Fn(&str) -> bool) -> Vec<String> {
    let mut v: Vec<String> = doc.split('`').skip(1).step_by(2).filter(|w| pred(w)).map(str::to_string).collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn tool_names_in_the_docs_are_the_tools_the_server_lists() {
    let out = common::vitals_cmd().arg("--list-tools").output().unwrap();
    let mut listed: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    // `--list-tools` lists the model's tools; the docs also name the one only views call.
    let engine = std::sync::Arc::new(vitals::engine::Engine::new(vec![], Default::default(), vitals::engine::Limits::from_config(&Default::default())));
    listed.extend(vitals::mcp::Vitals::new(engine).view_tool_names());
    listed.sort();
    for d in ["README.md", "ARCHITECTURE.md"] {
        let named = claims(&doc(d), |w| w.starts_with("vitals_") && w.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
        assert_eq!(named, listed, "{d} names tools the server does not list, or misses one");
    }
}

#[test]
fn env_vars_in_the_docs_exist_in_the_code_and_back() {
    let src = server_source();
    // Every whole upper-case word of the source that names a variable (a prefix like `VITALS_` alone is not one).
    let mut in_code: Vec<String> = src
        .split(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .filter(|w| (w.starts_with("VITALS_") || *w == "OURA_PAT") && !w.ends_with('_'))
        .map(str::to_string)
        .collect();
    in_code.sort();
    in_code.dedup();
    for d in ["README.md", "ARCHITECTURE.md"] {
        let named = claims(&doc(d), |w| (w.starts_with("VITALS_") || w == "OURA_PAT") && w.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        for v in &named {
            assert!(in_code.contains(v), "{d} documents {v}, which the server does not read");
        }
        if d == "README.md" {
            assert_eq!(&named, &in_code, "README's environment table differs from what the server reads");
        }
    }
}

/// The defaults README's environment table gives for the engine's limits are the engine's.
#[test]
fn readme_gives_the_engine_limits_defaults() {
    let readme = doc("README.md");
    let default_of = |var: &str| -> u64 {
        let row = readme.lines().find(|l| l.starts_with(&format!("| `{var}` |"))).unwrap_or_else(|| panic!("README has no row for {var}"));
        let cell = row.trim_end_matches('|').rsplit('|').next().unwrap().trim();
        cell.parse().unwrap_or_else(|_| panic!("README's default for {var} is not a number: {cell}"))
    };
    // Settings that set none of them.
    let l = vitals::engine::Limits::from_config(&vitals::config::Config::default());
    assert_eq!(default_of("VITALS_PAGE_CAP"), u64::from(l.page_cap));
    assert_eq!(default_of("VITALS_CONCURRENCY"), l.concurrency as u64);
    assert_eq!(default_of("VITALS_CACHE_MB"), (l.cache_bytes >> 20) as u64);
}

#[test]
fn paths_named_in_architecture_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for p in claims(&doc("ARCHITECTURE.md"), |w| w.contains('/') && (w.ends_with(".rs") || w.ends_with('/'))) {
        assert!(root.join(&p).exists(), "ARCHITECTURE.md names {p}, which does not exist");
    }
    // README's reliability table names its suites by path.
    for p in claims(&doc("README.md"), |w| w.contains('/') && w.ends_with(".rs")) {
        assert!(root.join(&p).exists(), "README.md names {p}, which does not exist");
    }
}

#[test]
fn connection_and_credential_kinds_in_the_readme_are_the_code_s() {
    let readme = doc("README.md");
    let section = &readme[readme.find("## How a provider connects").unwrap()..readme.find("\n## Oura\n").unwrap()];
    let table: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).map(|l| l.split('`').nth(1).unwrap()).collect();
    let kinds: Vec<&str> = vitals::connection::ConnectionKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(table, kinds, "README's table of connections is the code's list, in order");
    let para = &section[section.find("The credential in use is one of").unwrap()..];
    let para = &para[..para.find(", read once per query").unwrap()];
    let named: Vec<&str> = para.split('`').skip(1).step_by(2).collect();
    let creds: Vec<&str> = vitals::connection::CredentialKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(named, creds, "README's credential kinds are the code's");
}

#[test]
fn readme_test_command_is_what_ci_runs() {
    let ci = doc(".ci/run");
    assert!(doc("README.md").contains("cargo test --workspace --locked"));
    assert!(ci.contains("cargo test --workspace --locked"));
    assert!(ci.contains("cargo fmt --all --check"), "CI checks formatting");
    assert!(ci.contains("cargo clippy --workspace --all-targets --locked -- -D warnings"), "CI denies lint warnings");
}

/// README's set-up and run commands are the ones CI runs, so CI tests what a newcomer types.
#[test]
fn readme_setup_and_run_commands_are_what_ci_runs() {
    let readme = doc("README.md");
    let ci = doc(".ci/run");
    let blocks: Vec<&str> = readme.split("```sh\n").skip(1).map(|b| &b[..b.find("```").unwrap()]).take(3).collect();
    assert_eq!(blocks[0].lines().next(), Some("./setup.sh"), "README's set-up starts with the script");
    let run = blocks[1].trim();
    assert!(run.starts_with("cargo run --release --locked -p vitals --bin vitals-mcp"), "README's run command: {run}");
    assert!(ci.lines().any(|l| l.trim() == "./setup.sh"), "CI runs README's set-up script as it is");
    assert!(ci.contains(run), "CI runs README's run command: {run}");
    assert_eq!(blocks[2].trim(), "cargo test --workspace --locked");
    // The release build setup.sh ends with is the one `cargo xtask dist` builds, so dist reuses it.
    let setup = doc("setup.sh");
    let dist = doc("xtask/src/dist.rs");
    assert!(setup.contains("cargo build --release --locked -p vitals --bin vitals-mcp"));
    assert!(dist.contains(r#""build", "--release", "--locked", "--quiet", "-p", "vitals", "--bin", "vitals-mcp""#));
    // The settings window test's driver: setup.sh installs the version the test would, where it looks.
    let window = doc("auth-app/tests/window.rs");
    assert!(
        setup.contains(r#"tools="${CARGO_TARGET_DIR:-target}/tools""#)
            && setup.contains(r#"cargo install --quiet tauri-driver --version '^2' --locked --root "$tools""#)
    );
    assert!(
        window.contains(r#"target().join("tools/bin/tauri-driver")"#)
            && window.contains(r#""install", "--quiet", "tauri-driver", "--version", "^2", "--locked""#)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn query_parameters_in_the_readme_are_the_tool_schema() {
    let line = doc("README.md").lines().find(|l| l.starts_with("`vitals_query` parameters:")).expect("README lists vitals_query's parameters").to_string();
    let mut named = claims(&line, |w| w != "vitals_query");
    let twin = common::twin().await;
    let s = common::connect(&twin, true, &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let q = tools.iter().find(|t| t.name == "vitals_query").unwrap();
    let mut props: Vec<String> = q.input_schema["properties"].as_object().unwrap().keys().cloned().collect();
    props.sort();
    named.sort();
    assert_eq!(named, props, "README's vitals_query parameters differ from the tool's input schema");
    s.close().await;
}

#[test]
fn every_truncation_cause_is_in_the_readme_and_the_answer_schema() {
    let readme = doc("README.md");
    let answer = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/engine/src/engine/answer.rs")).unwrap();
    for cause in vitals::engine::cut::CAUSES {
        assert!(readme.contains(&format!("`{cause}`")), "README.md does not name the truncation cause `{cause}`");
        assert!(answer.contains(&format!("`{cause}`")), "the `cause` field's doc does not name `{cause}`");
    }
    let list = &readme[readme.find("`cause` (").unwrap() + "`cause` (".len()..];
    let list = &list[..list.find(')').unwrap()];
    for w in claims(list, |_| true) {
        assert!(vitals::engine::cut::CAUSES.contains(&w.as_str()), "README names a cause `{w}` the engine never gives");
    }
}

/// README's hosted section gives the server's own numbers and names: port, kept path, limits.
#[test]
fn readme_hosted_section_is_the_servers() {
    let readme = doc("README.md");
    let hosted = &readme[readme.find("## Hosted").expect("README has a hosted section")..readme.find("## Environment").unwrap()];
    assert!(hosted.contains(vitals::hosted::DEFAULT_ADDR), "the default address");
    assert!(hosted.contains(&format!("`{}`", vitals::hosted::mount::PATH_FILE)), "the file that keeps the path");
    assert!(hosted.contains(&format!("{} MiB", vitals::hosted::MAX_BODY >> 20)), "the body limit");
    assert!(hosted.contains(&format!("up to {} s", vitals::hosted::DRAIN.as_secs())), "the drain");
    assert!(hosted.contains(&format!("at least {} characters", vitals::hosted::guard::BEARER_MIN)), "the bearer's length");
    assert!(hosted.contains(&format!("at most {} tenants are kept in memory", vitals::hosted::TENANTS_IN_MEMORY)), "tenants in memory");
    use vitals::hosted::oauth::clients::{MAX_CLIENTS, REGISTER_PER_ADDRESS, REGISTER_WINDOW};
    assert_eq!(REGISTER_WINDOW.as_secs(), 3600, "README says an hour");
    assert!(
        hosted.contains(&format!("takes {REGISTER_PER_ADDRESS} clients an hour"))
            && hosted.contains(&format!("at most {},{:03}", MAX_CLIENTS / 1000, MAX_CLIENTS % 1000)),
        "registration bounds"
    );
    assert_eq!(vitals::hosted::TENANT_CACHE_SHARE, 8, "README says a tenant's cache is an eighth");
    assert!(
        hosted.contains(&format!("under {} × `VITALS_CACHE_MB`", vitals::hosted::TENANTS_IN_MEMORY / vitals::hosted::TENANT_CACHE_SHARE)),
        "the caches' bound"
    );
    assert!(hosted.contains(super::conformance::CONFORMANCE.rsplit('@').next().unwrap()), "the suite's version");
    // Every scenario of the suite is named: those that pass in the sentence before the table, the others in it.
    let (pass, table) = hosted.split_at(hosted.find("| scenario |").expect("the table of scenarios that do not apply"));
    for s in super::conformance::APPLIES {
        assert!(pass.contains(&format!("`{s}`")) && !table.contains(&format!("`{s}`")), "{s} is said to pass");
    }
    for (s, _) in super::conformance::NOT_APPLICABLE {
        assert!(table.contains(&format!("`{s}`")), "{s} is in the table of scenarios that do not apply");
    }
}

/// Every provider of the registry has its section in README, and every collection of its catalog
/// is in a table there; no table names a collection that does not exist.
#[test]
fn readme_has_a_section_and_every_collection_of_every_provider() {
    let readme = doc("README.md");
    let all = vitals::providers::all_in(&Default::default(), &vitals::accounts::Home::tenant(common::scratch().join("docs-registry")));
    let mut known = vec![];
    for p in &all {
        let s = p.spec();
        if s.namespace == s.name {
            let title = s.display.split_whitespace().next().unwrap();
            assert!(readme.contains(&format!("\n## {title}\n")), "README has no section `## {title}`");
        }
        for c in s.collections {
            let q = s.qualified(c.name);
            let listed = readme.lines().any(|l| l.starts_with("| `") && l.split(" | ").next().unwrap_or("").contains(&format!("`{q}`")));
            assert!(listed, "README's tables do not list {q}");
            known.push(q);
        }
    }
    for l in readme.lines().filter(|l| l.starts_with("| `")) {
        let first = l.split(" | ").next().unwrap();
        for w in claims(first, |w| w.contains('.') && !w.contains(' ') && !w.contains('=')) {
            let ns = w.split('.').next().unwrap();
            if all.iter().any(|p| p.spec().namespace == ns) {
                assert!(known.contains(&w), "README lists {w}, which no catalog has");
            }
        }
    }
}

/// README's numbers of requests in flight are the catalogs', and the extension's settings count is
/// the manifest's.
#[test]
fn readme_in_flight_and_settings_counts_are_the_code_s() {
    let readme = doc("README.md");
    let all = vitals::providers::all_in(&Default::default(), &vitals::accounts::Home::tenant(common::scratch().join("docs-flight")));
    let named: Vec<String> =
        all.iter().filter(|p| p.spec().namespace == p.spec().name).map(|p| format!("{} {}", p.spec().display, p.spec().in_flight)).collect();
    let line = named.join(", ");
    assert!(readme.contains(&format!("({line};")), "README's windows sentence says ({line}; ...)");
    let m: serde_json::Value = serde_json::from_str(&doc("manifest.json")).unwrap();
    let n = m["user_config"].as_object().unwrap().len();
    assert!(readme.contains(&format!("Its {n} settings")), "README names the extension's {n} settings");
}

/// ARCHITECTURE's table of crates is the workspace: every member, its folder, and the workspace
/// crates it depends on (normal dependencies; dev-dependencies in parentheses are not compared).
#[test]
fn architecture_crates_and_their_dependencies_are_the_workspaces() {
    let meta = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&meta.stdout).expect("cargo metadata");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
    let members: Vec<&serde_json::Value> = meta["packages"].as_array().unwrap().iter().collect();
    let names: Vec<&str> = members.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let doc = doc("ARCHITECTURE.md");
    let table = &doc[doc.find("## Crates").unwrap()..doc.find("Beside the crates:").unwrap()];
    let rows: Vec<Vec<&str>> = table.lines().filter(|l| l.starts_with("| `")).map(|l| l.split(" | ").collect()).collect();
    let ticked = |cell: &str| -> Vec<String> {
        let before = cell.split('(').next().unwrap_or("");
        before.split('`').skip(1).step_by(2).map(str::to_string).collect()
    };
    assert_eq!(rows.len(), members.len(), "one row per workspace member");
    for p in &members {
        let name = p["name"].as_str().unwrap();
        let row = rows.iter().find(|r| ticked(r[0]).first().map(String::as_str) == Some(name)).unwrap_or_else(|| panic!("ARCHITECTURE has no row for {name}"));
        let folder = Path::new(p["manifest_path"].as_str().unwrap()).parent().unwrap().strip_prefix(&root).unwrap().display().to_string();
        assert_eq!(ticked(row[1]), vec![format!("{folder}/")], "{name}'s folder");
        let mut deps: Vec<String> = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null() && names.contains(&d["name"].as_str().unwrap()))
            .map(|d| d["name"].as_str().unwrap().to_string())
            .collect();
        deps.sort();
        let mut said = ticked(row[2]);
        said.sort();
        assert_eq!(said, deps, "ARCHITECTURE's dependencies of {name}");
    }
}

/// The Rust files under `dir` (below the workspace), with their text.
fn rust_files(dir: &str) -> Vec<(std::path::PathBuf, String)> {
    fn walk(d: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out)
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                out.push((p, text));
            }
        }
    }
    let mut out = vec![];
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir), &mut out);
    out
}

/// Every library is built with `doctest = false` and the targets without tests with `test = false`
/// (the test command's time: rustdoc expanded each crate for no test at all). That holds only while
/// no doc comment holds a code block and those targets hold no test: a new one fails here rather
/// than being skipped without a word.
#[test]
fn no_test_is_in_a_target_built_without_its_tests() {
    for dir in ["server/src", "server/core/src", "server/engine/src", "server/providers/src", "bundle/src", "auth-app/src", "tests/src"] {
        for (p, text) in rust_files(dir) {
            let block = text.lines().map(str::trim_start).find(|l| (l.starts_with("///") || l.starts_with("//!")) && l.contains("```"));
            assert!(block.is_none(), "{}: a code block in a doc comment, which `doctest = false` never runs: {block:?}", p.display());
        }
    }
    let untested = [
        "server/src/main.rs",
        "auth-app/src/main.rs",
        "auth-app/src/lib.rs",
        "auth-app/src/commands.rs",
        "tests/src/main.rs",
        "tests/src/bin/store_race.rs",
        "tests/src/bin/browser.rs",
    ];
    assert_eq!(rust_files("auth-app/src").len(), 3, "a new file in the settings app's library, which is built with `test = false`: list it here");
    for f in untested {
        let text = doc(f);
        assert!(
            !["#[test]", "#[cfg(test)]", "tokio::test"].iter().any(|t| text.contains(t)),
            "{f}: a test in a target built with `test = false` (its Cargo.toml): move it or build the target's tests"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("mod ") || l.starts_with("pub mod ")) || f.ends_with("lib.rs"),
            "{f}: a module of a target without tests: list it here"
        );
    }
}
