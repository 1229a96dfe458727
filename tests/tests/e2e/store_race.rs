//! The credential store across processes: two refreshing at once must not lose the login, on the
//! 0600 file and on a real OS keyring (a private D-Bus session with an unlocked gnome-keyring).
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn store_race(env: &HashMap<String, String>, dir: &Path, provider: &Path, label: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_store_race"));
    c.args([dir.to_str().unwrap(), provider.to_str().unwrap(), label]).envs(env).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn said(o: &Output) -> (bool, String, String) {
    (o.status.success(), String::from_utf8_lossy(&o.stdout).trim().to_string(), String::from_utf8_lossy(&o.stderr).to_string())
}

/// Seed a pair, let two processes refresh it at the same instant, and check one refresh happened
/// and both ended with the same, stored, pair. Returns what the seeding process said (its backend).
fn race(root: &Path, env: &HashMap<String, String>) -> String {
    let (dir, provider) = (root.join("vitals"), root.join("provider"));
    std::fs::create_dir_all(&provider).unwrap();
    let seed = said(&store_race(env, &dir, &provider, "seed").output().unwrap());
    assert!(seed.0, "seeding failed: {seed:?}");
    let (a, b) = (store_race(env, &dir, &provider, "a").spawn().unwrap(), store_race(env, &dir, &provider, "b").spawn().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(provider.join("go"), "").unwrap();
    let (a, b) = (said(&a.wait_with_output().unwrap()), said(&b.wait_with_output().unwrap()));
    assert!(a.0 && b.0, "both contenders keep a working login: {a:?} {b:?}");
    assert_eq!(a.1, b.1, "the second adopted the first one's refresh instead of spending R0 again");
    let spent = std::fs::read_dir(&provider).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("spent-")).count();
    assert_eq!(spent, 1, "the provider saw exactly one refresh");
    let shown = said(&store_race(env, &dir, &provider, "show").output().unwrap());
    assert_eq!(shown.1, a.1, "and the store holds the pair it issued");
    seed.2
}

fn temp(tag: &str) -> PathBuf {
    let root = crate::common::scratch().join(format!("vitals-race-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root
}

#[test]
fn two_processes_refreshing_at_once_keep_the_login_in_the_file() {
    let root = temp("file");
    let env = HashMap::from([("VITALS_TOKEN_STORE".to_string(), "file".to_string())]);
    assert!(race(&root, &env).contains("File"));
    let file = root.join("vitals/tokens.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_process_killed_while_it_holds_the_refresh_lock_leaves_the_survivor_the_login() {
    let root = temp("kill");
    let env = HashMap::from([("VITALS_TOKEN_STORE".to_string(), "file".to_string())]);
    let (dir, provider) = (root.join("vitals"), root.join("provider"));
    std::fs::create_dir_all(&provider).unwrap();
    std::fs::write(provider.join("go"), "").unwrap();
    assert!(said(&store_race(&env, &dir, &provider, "seed").output().unwrap()).0);
    let mut holder = store_race(&env, &dir, &provider, "hold").spawn().unwrap();
    let since = std::time::Instant::now();
    while !provider.join("holding").exists() {
        assert!(since.elapsed() < std::time::Duration::from_secs(20), "the holder never took the lock");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let survivor = store_race(&env, &dir, &provider, "b").spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    // kill -9: no destructor, no unlock; the kernel drops the lock with the process.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let b = said(&survivor.wait_with_output().unwrap());
    assert!(b.0, "the survivor refreshed and kept the login: {b:?}");
    assert_eq!(b.1, "A-b");
    assert_eq!(said(&store_race(&env, &dir, &provider, "show").output().unwrap()).1, "A-b", "and saved it");
    let left: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!left.iter().any(|n| n.ends_with(".tmp")), "no half-written file: {left:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A private session bus with gnome-keyring's Secret Service on it, torn down on drop.
struct SecretService {
    env: HashMap<String, String>,
    keyring: std::process::Child,
    bus_pid: u32,
}

impl SecretService {
    fn start(root: &Path) -> SecretService {
        let need = "the keyring test needs dbus-daemon and gnome-keyring-daemon (Debian: apt-get install dbus gnome-keyring; .ci/run installs them)";
        let (home, runtime) = (root.join("home"), root.join("run"));
        for d in [&home, &runtime] {
            std::fs::create_dir_all(d).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
            }
        }
        let bus = Command::new("dbus-daemon").args(["--session", "--fork", "--print-address=1", "--print-pid=1"]).output().expect(need);
        let out = String::from_utf8_lossy(&bus.stdout).to_string();
        let mut lines = out.lines();
        let address = lines.next().expect("dbus-daemon printed its address").trim().to_string();
        let bus_pid: u32 = lines.next().and_then(|l| l.trim().parse().ok()).expect("dbus-daemon printed its pid");
        let mut env = HashMap::from([
            ("DBUS_SESSION_BUS_ADDRESS".to_string(), address),
            ("HOME".to_string(), home.display().to_string()),
            ("XDG_RUNTIME_DIR".to_string(), runtime.display().to_string()),
            ("XDG_DATA_HOME".to_string(), home.join(".local/share").display().to_string()),
        ]);
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--components=secrets", "--foreground"])
            .envs(&env)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(need);
        {
            use std::io::Write;
            let mut stdin = keyring.stdin.take().unwrap();
            stdin.write_all(b"ci-password").unwrap();
        }
        // The daemon has claimed the Secret Service name once a lookup answers (found or not).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let probe = Command::new("dbus-send")
                .args([
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.secrets",
                ])
                .envs(&env)
                .output()
                .expect(need);
            if String::from_utf8_lossy(&probe.stdout).contains("boolean true") {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "gnome-keyring never came up on the private bus");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        env.insert("VITALS_TOKEN_STORE".into(), "auto".into());
        SecretService { env, keyring, bus_pid }
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        let _ = self.keyring.kill();
        let _ = self.keyring.wait();
        let _ = Command::new("kill").arg(self.bus_pid.to_string()).status();
    }
}

#[test]
fn two_processes_refreshing_at_once_keep_the_login_in_the_os_keyring() {
    let root = temp("keyring");
    let ss = SecretService::start(&root);
    let backend = race(&root, &ss.env);
    assert!(backend.contains("Keyring"), "with a Secret Service answering, `auto` picks the keyring: {backend}");
    assert!(!root.join("vitals/tokens.json").exists(), "no token file when the keyring holds the tokens");
    let _ = std::fs::remove_dir_all(&root);
}
