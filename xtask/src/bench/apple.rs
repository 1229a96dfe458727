//! Apple Health: exports of about 100 MB and 1 GB of XML, generated with the traps and zipped as
//! the Health app zips them (under `target/bench/apple-health/`, never in the repo), read by the
//! server from its start: the time to its first answer (the index built meanwhile), later answers
//! from memory, the server's peak RSS and MB/s of XML, beside a plain quick-xml pass over the same
//! zip entry that reads every attribute of every element and keeps nothing.
use super::{proc_kb, stop};
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vitals::providers::apple_health::generate::{write_zip, Plan};

/// An export's size class: days and heart-rate samples a day (about 330 bytes a record, and about
/// 150 other records a day), for about `mb` MB of XML (20 MB at least: a year of days).
struct Size {
    label: String,
    days: u32,
    hr_per_day: u32,
}

impl Size {
    fn of(mb: u32) -> Size {
        let days = if mb > 300 { 1095 } else { 365 };
        let hr_per_day = ((f64::from(mb) * 1e6 / 330.0 / f64::from(days)) as u32).saturating_sub(150).max(24);
        let label = if mb >= 1000 && mb.is_multiple_of(1000) { format!("{} GB", mb / 1000) } else { format!("{mb} MB") };
        Size { label, days, hr_per_day }
    }
}

/// The zip of `size`, made once (the generator is deterministic, so a file already there is the same).
fn export(root: &Path, size: &Size) -> PathBuf {
    let dir = root.join("target/bench/apple-health");
    std::fs::create_dir_all(&dir).expect("target/bench/apple-health");
    let path = dir.join(format!("export-{}-{}.zip", size.days, size.hr_per_day));
    if !path.is_file() {
        let mut plan = Plan::new(jiff::civil::date(2023, 1, 1), size.days, "America/New_York");
        plan.hr_per_day = size.hr_per_day;
        plan.imperial = true;
        plan.travel = Some((100, 110));
        let part = path.with_extension("part");
        write_zip(&plan, "export.xml", std::fs::File::create(&part).expect("create the export")).expect("write the export");
        std::fs::rename(&part, &path).expect("rename the export");
    }
    path
}

/// A plain streaming pass: the zip entry inflated as read, every attribute of every element
/// unescaped, nothing kept. Returns the XML's bytes and the time.
fn plain_pass(path: &Path) -> (u64, Duration) {
    let t0 = Instant::now();
    let mut z = zip::ZipArchive::new(std::fs::File::open(path).expect("open")).expect("a zip");
    let i = (0..z.len()).find(|&i| z.by_index(i).ok().and_then(|e| e.name().ok().map(|n| n.ends_with("export.xml"))).unwrap_or(false)).expect("export.xml");
    let e = z.by_index(i).expect("entry");
    let size = e.size();
    let mut r = quick_xml::Reader::from_reader(std::io::BufReader::with_capacity(1 << 20, e));
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut n = 0u64;
    loop {
        match r.read_event_into(&mut buf) {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => {
                for a in e.attributes().with_checks(false).flatten() {
                    n += a.normalized_value(quick_xml::XmlVersion::Implicit1_0).map(|v| v.len() as u64).unwrap_or(0);
                }
            }
            Ok(_) => {}
            Err(e) => panic!("the plain pass failed: {e}"),
        }
        buf.clear();
    }
    std::hint::black_box(n);
    (size, t0.elapsed())
}

/// The server on `path`: time from its start to the first answer, later answers, peak RSS.
async fn server_pass(server: &Path, path: &Path) -> (Duration, Vec<(String, Duration)>, Option<u64>) {
    let mut c = tokio::process::Command::new(server);
    c.env("VITALS_APPLE_HEALTH_FILE", path)
        .env("VITALS_TZ", "America/New_York")
        .env("VITALS_LOG", "warn")
        .env("VITALS_CONFIG_DIR", path.with_extension("config"));
    let t0 = Instant::now();
    let transport = rmcp::transport::TokioChildProcess::new(c).expect("spawn vitals-mcp");
    let pid = transport.id();
    let client = rmcp::ServiceExt::serve((), transport).await.expect("MCP handshake");
    let call = |args: serde_json::Value| CallToolRequestParams::new("vitals_query").with_arguments(args.as_object().cloned().unwrap_or_default());
    // The first complete answer: a call past its budget while the index is built is cut
    // (`time_budget`), and the question is asked again until it is answered whole.
    let to_first = loop {
        let first = client.call_tool(call(json!({"collection": "apple_health.activity", "start": "2025-06-01", "end": "2025-06-07"}))).await.expect("first");
        assert!(!first.is_error.unwrap_or(false), "the first answer failed: {:?}", first.content);
        let whole = first.structured_content.as_ref().is_some_and(|a| a["notices"]["truncated"].is_null());
        if whole {
            break t0.elapsed();
        }
        assert!(t0.elapsed() < Duration::from_secs(1800), "no complete answer in 30 minutes");
    };
    let mut later = vec![];
    for (what, args) in [
        ("activity, 30 days", json!({"collection": "apple_health.activity", "start": "2025-05-01", "end": "2025-05-30"})),
        ("sleep, 30 days", json!({"collection": "apple_health.sleep", "start": "2025-05-01", "end": "2025-05-30"})),
        ("heart rate, one day, hourly", json!({"collection": "apple_health.heart_rate", "day": "2025-05-10", "resolution": "1h"})),
        ("workouts, 90 days", json!({"collection": "apple_health.workout", "start": "2025-03-01", "end": "2025-05-30"})),
        ("body, 90 days", json!({"collection": "apple_health.body", "start": "2025-03-01", "end": "2025-05-30"})),
    ] {
        let t = Instant::now();
        let r = client.call_tool(call(args)).await.expect("later");
        assert!(!r.is_error.unwrap_or(false), "{what} failed: {:?}", r.content);
        later.push((what.to_string(), t.elapsed()));
    }
    let peak = proc_kb(pid, "VmHWM:");
    stop(client).await;
    (to_first, later, peak)
}

pub async fn run(root: &Path, server: &Path, sizes_mb: &[u32]) {
    println!("\nApple Health: generated exports (zipped), read by the server from its start, beside a plain quick-xml pass");
    println!("{:<8} {:>9} {:>9} {:>12} {:>9} {:>12} {:>10} {:>10}", "export", "XML MB", "zip MB", "plain pass", "MB/s", "1st answer", "MB/s", "peak RSS");
    for size in sizes_mb.iter().map(|&mb| Size::of(mb)) {
        let path = export(root, &size);
        let zip_mb = std::fs::metadata(&path).map(|m| m.len() as f64 / 1e6).unwrap_or(0.0);
        let (xml, plain) = plain_pass(&path);
        let xml_mb = xml as f64 / 1e6;
        let (first, later, peak) = server_pass(server, &path).await;
        println!(
            "{:<8} {:>9.0} {:>9.1} {:>10.2} s {:>9.0} {:>10.2} s {:>10.0} {:>10}",
            size.label,
            xml_mb,
            zip_mb,
            plain.as_secs_f64(),
            xml_mb / plain.as_secs_f64(),
            first.as_secs_f64(),
            xml_mb / first.as_secs_f64(),
            peak.map(|k| format!("{:.0} MB", k as f64 / 1024.0)).unwrap_or("-".into())
        );
        let later: Vec<String> = later.iter().map(|(w, d)| format!("{w} {:.1} ms", d.as_secs_f64() * 1e3)).collect();
        println!("{:<8} later answers from memory: {}", "", later.join("; "));
    }
}
