//! `vitals-twin --port 8787`: serve the provider twin on loopback for any client.
use clap::Parser;

#[derive(Parser)]
#[command(
    name = "vitals-twin",
    about = "Local twin of each provider API (Oura's real and sandbox routes, Withings, Polar, Garmin, Garmin Connect, WHOOP) with quirks and fault injection"
)]
struct Cli {
    #[arg(long, default_value_t = 8787)]
    port: u16,
    /// The user's zone on the twin: IANA name or fixed offset in hours (e.g. -6).
    #[arg(long, default_value = "-6")]
    tz: String,
    /// Bearer token the real routes accept.
    #[arg(long, default_value = "twin-token")]
    token: String,
    /// Latency added to every data request, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    let tz = match cli.tz.parse::<i8>() {
        Ok(h) => jiff::tz::TimeZone::fixed(jiff::tz::offset(h)),
        Err(_) => jiff::tz::TimeZone::get(&cli.tz).expect("--tz is an IANA name or whole hours"),
    };
    let cfg = vitals_twin::oura::OuraConfig { tz, token: cli.token, ..Default::default() };
    let twin = vitals_twin::start(cfg, cli.port).await.expect("bind the twin's port");
    twin.set_faults(vitals_twin::Faults { latency_ms: cli.latency_ms, ..Default::default() });
    eprintln!("vitals-twin listening on {} (faults: POST /_twin/faults, log: GET /_twin/requests)", twin.base_url());
    for t in vitals_twin::TWINS {
        eprintln!("  {} below {}", t.provider, twin.mounted(t.provider));
    }
    tokio::signal::ctrl_c().await.ok();
}
