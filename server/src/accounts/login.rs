//! A login from a terminal: `vitals-mcp auth <provider>` (browser and loopback callback) or
//! `--manual` (print the URL, read the pasted redirect: for SSH and headless machines).
use super::link::{app_for, complete, Connected, Link, CALLBACK_WAIT};
use super::oauth::begin;
use crate::catalog::ProviderSpec;
use std::io::BufRead;

/// Run the whole login and save the tokens. `manual` reads the redirect from standard input.
pub async fn login(p: &'static ProviderSpec, manual: bool) -> Result<Connected, String> {
    if manual {
        let (oauth, app) = app_for(p).map_err(|e| e.to_string())?;
        let pending = begin(&oauth, &app).map_err(|e| e.to_string())?;
        println!("{}", pending.url);
        eprintln!(
            "Open the address above in a browser, sign in to {}, and paste here the whole address the browser is sent to (it starts with {}):",
            p.display,
            pending.redirect()
        );
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("reading the pasted address failed: {e}"))?;
        return complete(p, &oauth, &app, pending, &line).await;
    }
    let link = Link::start(p).map_err(|e| e.to_string())?;
    if webbrowser::open(&link.url).is_err() {
        eprintln!("No browser could be opened here. Open this address yourself (or run again with --manual):");
    } else {
        eprintln!("A browser window opened; if it did not, open this address:");
    }
    println!("{}", link.url);
    match link.wait(CALLBACK_WAIT + std::time::Duration::from_secs(5)).await {
        Some(r) => r,
        None => Err("no browser came back in time; run the login again".into()),
    }
}
