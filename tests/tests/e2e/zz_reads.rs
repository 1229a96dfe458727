//! TEMPORARY (not committed): the bench's "what the model reads" questions, sizes printed.
use crate::common::*;
use serde_json::{json, Value};

fn day(back: i64) -> String {
    ds(ago(back))
}

fn questions() -> Vec<(&'static str, &'static str, Value)> {
    let q = |c: &str, s: String, e: String| json!({"collection": c, "start": s, "end": e});
    vec![
        ("catalog", "vitals_sources", json!({})),
        ("sleep_last_night", "vitals_query", q("oura.sleep", day(0), day(0))),
        ("today", "vitals_today", json!({})),
        ("today1", "vitals_today", json!({"days": 1})),
        ("week_sleep", "vitals_query", q("oura.sleep", day(6), day(0))),
        ("hr_yesterday", "vitals_query", json!({"collection": "oura.heartrate", "day": day(1)})),
        ("weight_month", "vitals_query", q("withings.measurements", day(29), day(0))),
        ("runs", "vitals_query", q("oura.workout", day(29), day(0))),
        ("daily14", "vitals_daily", json!({"start": day(14), "end": day(1)})),
        ("garmin_runs", "vitals_query", q("garmin.activities", day(29), day(0))),
    ]
}

async fn run<H: rmcp::ClientHandler>(s: &Session<H>, tag: &str) {
    let dir = std::path::PathBuf::from(format!("/tmp/49c/reads-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = s.client.list_all_tools().await.unwrap();
    let input: usize = tools
        .iter()
        .map(|t| {
            t.name.chars().count()
                + t.description.as_deref().map_or(0, |d| d.chars().count())
                + serde_json::to_string(&*t.input_schema).unwrap().chars().count()
        })
        .sum();
    let output: usize = tools.iter().map(|t| t.output_schema.as_ref().map_or(0, |o| serde_json::to_string(&**o).unwrap().chars().count())).sum();
    println!("READS {tag} tools_input {input} tools_output {output}");
    for (label, tool, args) in questions() {
        let r = s.call_raw(tool, args).await;
        let t = text(&r);
        std::fs::write(dir.join(format!("{label}.json")), &t).unwrap();
        println!("READS {tag} {label} {} err={:?}", t.chars().count(), r.is_error);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reads() {
    let twin = twin().await;
    let s = connect(&twin, false, &[]).await;
    run(&s, "oura").await;
    s.close().await;
    twin.withings(|w| w.cfg.page_size = 300);
    twin.polar(|p| p.cfg.person.every_day = true);
    let (s, _l) = all_providers(&twin, "zzreads", &[]).await;
    run(&s, "every").await;
    s.close().await;
    let s = connect(&twin, true, &[]).await;
    run(&s, "sample").await;
    s.close().await;
}
