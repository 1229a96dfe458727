//! A stand-in for the user's browser, for `BROWSER=<this>`: it opens the login address, where the
//! twin consents at once, follows the redirect to the server's loopback callback, and appends
//! what happened to the file named by `VITALS_TEST_BROWSER_LOG` (one line: status and page).
//! `VITALS_TEST_BROWSER_DELAY_MS` makes it a slow user (the server's progress notifications).
use std::io::Write;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().nth(1).expect("the address to open");
    let delay = std::env::var("VITALS_TEST_BROWSER_DELAY_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("a client");
    let line = match visit(&client, &url).await {
        Ok((status, page)) => format!("{status} {}", page.replace('\n', " ")),
        Err(e) => format!("failed {e}"),
    };
    if let Ok(path) = std::env::var("VITALS_TEST_BROWSER_LOG") {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("the browser log opens");
        writeln!(f, "{line}").expect("the browser log is written");
    }
}

async fn visit(client: &reqwest::Client, url: &str) -> Result<(u16, String), String> {
    let consent = client.get(url).send().await.map_err(|e| e.to_string())?;
    let landing = consent.headers().get("location").and_then(|l| l.to_str().ok()).ok_or("the login page did not redirect")?.to_string();
    // The listener is on 127.0.0.1; "localhost" may resolve to ::1 first.
    let r = client.get(landing.replace("//localhost:", "//127.0.0.1:")).send().await.map_err(|e| e.to_string())?;
    let status = r.status().as_u16();
    Ok((status, r.text().await.map_err(|e| e.to_string())?))
}
