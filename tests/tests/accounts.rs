//! The credential store across processes: two refreshing at once must not lose the login.
use std::process::Command;
use vitals::accounts::{FileStore, Tokens};
use vitals::secret::Secret;

#[test]
fn two_processes_refreshing_at_once_keep_the_login() {
    let root = std::env::temp_dir().join(format!("vitals-race-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (dir, provider) = (root.join("vitals"), root.join("provider"));
    std::fs::create_dir_all(&provider).unwrap();
    let store = FileStore::at(&dir);
    store.save("oura", &Tokens { access: Secret::new("A0"), refresh: Some(Secret::new("R0")), expires_at: None, scopes: vec![] }).unwrap();

    let spawn = |label: &str| {
        Command::new(env!("CARGO_BIN_EXE_store_race"))
            .args([dir.to_str().unwrap(), provider.to_str().unwrap(), label])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(provider.join("go"), "").unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let said = |o: &std::process::Output| (o.status.success(), String::from_utf8_lossy(&o.stdout).trim().to_string(), String::from_utf8_lossy(&o.stderr).to_string());
    let (a, b) = (said(&a), said(&b));
    assert!(a.0 && b.0, "both contenders keep a working login: {a:?} {b:?}");
    assert_eq!(a.1, b.1, "the second adopted the first one's refresh instead of spending R0 again");
    let spent: Vec<_> = std::fs::read_dir(&provider).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("spent-")).collect();
    assert_eq!(spent.len(), 1, "the provider saw exactly one refresh");
    assert_eq!(store.load("oura").unwrap().unwrap().access.expose(), a.1, "and the file holds the pair it issued");
    let _ = std::fs::remove_dir_all(&root);
}
