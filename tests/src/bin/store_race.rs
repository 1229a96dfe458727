//! One contender in the two-process refresh race (`tests/tests/e2e/store_race.rs` runs two at once):
//! it reads the stored tokens, then refreshes them through a simulated provider whose refresh
//! tokens work once, exactly as Oura's and Withings' rotate.
//!
//! `store_race <token dir> <provider dir> <label>`; prints the access token it ends with.
//! The store is the one `VITALS_TOKEN_STORE` picks (the test runs the race on the file and on a
//! real Secret Service). Label `seed` saves the first pair; `show` prints the stored access token;
//! `hold` takes the lock and waits there to be killed.
use std::path::PathBuf;
use vitals_providers::accounts::{TokenStore, Tokens};
use vitals_providers::secret::Secret;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // A binary: it reads its environment once, as vitals-mcp does.
    let config = vitals_providers::config::Config::from_env();
    let store = TokenStore::open(&args[1], &config).expect("a valid VITALS_TOKEN_STORE");
    let (provider, label) = (PathBuf::from(&args[2]), args[3].clone());
    eprintln!("backend {:?}", store.backend());
    match label.as_str() {
        "seed" => {
            let t = Tokens { access: Secret::new("A0"), refresh: Some(Secret::new("R0")), expires_at: None, ..Default::default() };
            store.save("oura", &t).expect("saved");
            return;
        }
        "show" => {
            println!("{}", store.load("oura").expect("readable").map(|t| t.access.expose().to_string()).unwrap_or_default());
            return;
        }
        _ => {}
    }
    let seen = store.load("oura").expect("readable").expect("tokens saved by the test");
    // Both contenders start together: wait for the test's signal.
    while !provider.join("go").exists() {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let out = store.refresh_with("oura", &seen, |t| {
        // `hold`: stop inside the lock, before the provider is asked, until the test kills it.
        if label == "hold" {
            std::fs::write(provider.join("holding"), "").expect("signal");
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
        let r = t.refresh.as_ref().ok_or("no refresh token")?.expose().to_string();
        // The provider's side: a refresh token spent twice is refused, and the login is lost.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(provider.join(format!("spent-{r}")))
            .map_err(|_| format!("refresh token {r} was already used: the login is lost"))?;
        std::thread::sleep(std::time::Duration::from_millis(150));
        Ok(Tokens { access: Secret::new(format!("A-{label}")), refresh: Some(Secret::new(format!("R-{label}"))), ..Default::default() })
    });
    match out {
        Ok(t) => println!("{}", t.access.expose()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
