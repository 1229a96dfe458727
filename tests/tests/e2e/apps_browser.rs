//! The MCP Apps views in a real browser (issue 39): headless Chromium (Debian's, through its
//! ChromeDriver) loads a host page built on the `@modelcontextprotocol/ext-apps` package's own
//! host bridge (`tests/browser/host.js`, bundled here with esbuild), connected to `vitals-mcp serve
//! --http` against the twins. Each view is checked against the data it was given (points drawn =
//! samples, stage minutes = the night's, the noise band = the answer's), in light and dark, a zoom
//! that asks the app-only tool again, and a screenshot of each is kept in `target/e2e-apps/`.
use crate::common::*;
use crate::http::hosted;
use serde_json::{json, Value};
use vitals_twin::apps_host::{host_bundle, page, page_via_proxy, serve_host, serve_sandbox, Browser};

fn luminance(css: &str) -> f64 {
    let n: Vec<f64> =
        css.trim_start_matches("rgba(").trim_start_matches("rgb(").trim_end_matches(')').split(',').filter_map(|x| x.trim().parse().ok()).collect();
    (0.2126 * n[0] + 0.7152 * n[1] + 0.0722 * n[2]) / 255.0
}

#[tokio::test(flavor = "multi_thread")]
async fn each_view_draws_what_it_was_given_in_a_real_browser() {
    let bundle = tokio::task::spawn_blocking(host_bundle).await.unwrap();
    let origin = serve_host(bundle).await;
    let twin = twin().await;
    let config = scratch().join(format!("apps-browser-{}", std::process::id()));
    std::fs::create_dir_all(&config).unwrap();
    let h = hosted(&twin, &config, &["--allow-origin", &origin], &[("OURA_PAT", TOKEN)]).await;
    let mcp = h.url.clone();
    let b = Browser::start(&scratch().join(format!("chromium-{}", std::process::id()))).await;
    // The same server, read by the test itself: what each view should show.
    let s = connect(&twin, false, &[]).await;
    let day = ds(ago(1));

    // A day of heart rate: every sample drawn, then a zoom asks the app-only tool again.
    let args = json!({"collection": "oura.heartrate", "day": day});
    b.open(&page(&origin, &mcp, "vitals_query", args, "light")).await;
    let v = b.drawn(2).await;
    let tools = v["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "vitals_view_data" && t["ui"]["visibility"] == json!(["app"])), "{tools:?}");
    let raw = s.ok("vitals_query", json!({"collection": "oura.heartrate", "day": day, "resolution": "raw", "max_chars": 2_000_000})).await;
    let samples = raw["data"]["rows"].as_array().unwrap().len();
    assert_eq!(v["lines"][0], json!({"series": "bpm", "points": samples}), "every sample of the day is a point: {}", v["text"]);
    assert_eq!(v["sample"], 0, "a connected account's data is not marked as sample data");
    let light = luminance(v["background"].as_str().unwrap());
    b.screenshot("series").await;
    let before = v["calls"].as_array().unwrap().len();
    b.run(
        r#"const d = document.getElementById("view").contentDocument, svg = d.querySelector("svg[role=img]"), r = svg.getBoundingClientRect();
           const at = (type, f) => svg.dispatchEvent(new PointerEvent(type, { clientX: r.left + r.width * f, clientY: r.top + r.height / 2, bubbles: true }));
           at("pointerdown", 0.35); at("pointermove", 0.5); at("pointerup", 0.5);"#,
        json!([]),
    )
    .await;
    let z = b.drawn_when(before + 1, |v| v["zoomed"] == json!(true) && !v["lines"].as_array().unwrap().is_empty()).await;
    let zoom = z["calls"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(zoom["name"], "vitals_view_data", "a zoom asks the app-only tool: {zoom}");
    let (from, to): (jiff::Timestamp, jiff::Timestamp) =
        (zoom["arguments"]["from"].as_str().unwrap().parse().unwrap(), zoom["arguments"]["to"].as_str().unwrap().parse().unwrap());
    let inside = raw["data"]["rows"].as_array().unwrap().iter().filter(|r| {
        let t: jiff::Timestamp = r[0].as_str().unwrap().parse().unwrap();
        t >= from && t < to
    });
    assert_eq!(z["lines"][0]["points"], inside.count(), "the zoom draws every sample of its span");

    // A span asked of vitals_query itself (`from`, `to`) is drawn as the answer holds it: zoomed to
    // the span, its every sample a point, none of the rest of the day.
    let (from, to) = (format!("{day}T07:30:00-06:00"), format!("{day}T09:00:00-06:00"));
    b.open(&page(&origin, &mcp, "vitals_query", json!({"collection": "oura.heartrate", "from": from, "to": to}), "light")).await;
    let v = b.drawn_when(2, |v| v["zoomed"] == json!(true) && !v["lines"].as_array().unwrap().is_empty()).await;
    let span = s.ok("vitals_query", json!({"collection": "oura.heartrate", "from": from, "to": to, "resolution": "raw", "max_chars": 2_000_000})).await;
    assert!(span["count"].as_u64().unwrap() > 0 && span["count"].as_u64().unwrap() < samples as u64);
    assert_eq!(v["lines"][0]["points"], span["count"], "every sample of the span, no other: {}", v["text"]);

    // The same view in dark: the host's theme, not the page's default.
    b.open(&page(&origin, &mcp, "vitals_query", json!({"collection": "oura.heartrate", "day": day}), "dark")).await;
    let v = b.drawn(2).await;
    let dark = luminance(v["background"].as_str().unwrap());
    assert!(light > 0.8 && dark < 0.2, "light {light}, dark {dark}");
    b.screenshot("series-dark").await;

    // Last night: the hypnogram's stage minutes are the night's, the numbers the provider's.
    b.open(&page(&origin, &mcp, "vitals_today", json!({"days": 1}), "light")).await;
    let v = b.drawn(2).await;
    let call = v["calls"].as_array().unwrap().iter().find(|c| c["name"] == "vitals_view_data").unwrap().clone();
    let nights = s.ok("vitals_view_data", call["arguments"].clone()).await;
    let night = nights["nights"].as_array().unwrap().iter().rev().find(|n| n["stages"].as_array().is_some_and(|s| !s.is_empty())).unwrap();
    for stage in ["deep", "light", "rem", "awake"] {
        let drawn = v["stageMin"][stage].as_f64().unwrap_or(0.0);
        assert!((drawn - night["minutes"][stage].as_f64().unwrap()).abs() < 0.05, "{stage}: drawn {drawn}, night {}", night["minutes"]);
    }
    b.screenshot("night").await;

    // The days side by side: a point per day with a value.
    let (start, end) = (ds(ago(14)), ds(ago(1)));
    b.open(&page(&origin, &mcp, "vitals_daily", json!({"start": start, "end": end}), "light")).await;
    let v = b.drawn(1).await;
    let rows = v["result"]["rows"].as_array().unwrap();
    for spark in v["sparks"].as_array().unwrap() {
        let m = spark["metric"].as_str().unwrap();
        let with_value = rows.iter().filter(|r| r[m].get("value").is_some_and(Value::is_number)).count();
        assert_eq!(spark["points"], with_value, "{m}");
    }
    b.screenshot("days").await;
    // Grouped, a table of each group's means: every group of the answer, no sparkline of days.
    b.open(&page(&origin, &mcp, "vitals_daily", json!({"start": start, "end": end, "group": "week"}), "light")).await;
    let v = b.drawn(1).await;
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("By week") && text.contains("not a test") && v["sparks"].as_array().unwrap().is_empty(), "{text}");
    for g in v["result"]["groups"].as_array().unwrap() {
        assert!(text.contains(g["group"].as_str().unwrap()), "{} not drawn: {text}", g["group"]);
    }

    // A comparison: the noise band drawn is the verdict's own.
    let args = json!({"metric": "oura.daily_readiness.score", "a_start": ds(ago(28)), "a_end": ds(ago(15)), "b_start": ds(ago(14)), "b_end": ds(ago(1))});
    b.open(&page(&origin, &mcp, "vitals_compare", args, "light")).await;
    let v = b.drawn(2).await;
    let r = &v["result"];
    if let (Some(mean), Some(band)) = (r["mean_a"].as_f64(), r["noise_band"].as_f64()) {
        let drawn = v["band"][0].as_array().unwrap();
        assert!((drawn[0].as_f64().unwrap() - (mean - band)).abs() < 1e-9 && (drawn[1].as_f64().unwrap() - (mean + band)).abs() < 1e-9, "{drawn:?}");
    } else {
        panic!("the twin's readiness gives a comparison with a band: {r}");
    }
    b.screenshot("compare").await;

    // A workout of each provider that has them: every sample of each series a point, the laps
    // and the zones as the workout has them. Neither provider is connected here: sample data, said.
    let (start, end) = (ds(ago(6)), ds(ago(0)));
    let listing = s.ok("vitals_query", json!({"collection": "garmin.activities", "start": start, "end": end, "fields": ["id"]})).await;
    let activity = listing["data"]["rows"][0][0].as_str().unwrap().to_string();
    for (name, tool_args) in [
        ("workout", json!({"collection": "polar.exercises", "start": start, "end": end})),
        ("workout-garmin", json!({"collection": "garmin.activity", "id": activity, "options": {"laps": true}})),
    ] {
        b.open(&page(&origin, &mcp, "vitals_query", tool_args.clone(), "light")).await;
        let v = b.drawn_when(2, |v| !v["traces"].as_array().unwrap().is_empty()).await;
        let call = v["calls"].as_array().unwrap().iter().rev().find(|c| c["arguments"]["id"].is_string()).unwrap().clone();
        assert_eq!(call["name"], "vitals_view_data", "{call}");
        let one = s.ok("vitals_view_data", call["arguments"].clone()).await;
        let w = &one["workout"];
        let traces = w["traces"].as_array().unwrap();
        assert!(traces.len() >= 3, "{name}: heart rate, speed and altitude at least: {traces:?}");
        for t in traces {
            let points = t["points"].as_array().unwrap().len();
            let drawn = v["traces"].as_array().unwrap().iter().find(|d| d["what"] == t["what"]).unwrap_or_else(|| panic!("{name}: {} not drawn", t["what"]));
            assert_eq!(drawn["samples"], points, "{name} {}", t["what"]);
            // Every sample is a point, but on foot a sample standing still (under 1 km/h) has no pace
            // and is left out, said (a sample workout may stop for a moment, as a real one does).
            let per_km_h = if t["unit"] == "m/s" { 3.6 } else { 1.0 };
            let moving = t["points"].as_array().unwrap().iter().filter(|p| p[1].as_f64().is_some_and(|v| v * per_km_h >= 1.0)).count();
            let drawn_points = drawn["points"].as_u64().unwrap() as usize;
            assert!(
                drawn_points == points || (t["what"] == "speed" && drawn_points == moving),
                "{name} {}: every sample is a point ({drawn_points} of {points}, {moving} moving)",
                t["what"]
            );
        }
        let seconds = |v: &Value, key: &str| v.as_array().unwrap().iter().map(|l| l.get(key).unwrap_or(l).as_f64().unwrap()).collect::<Vec<f64>>();
        assert!(!w["laps"].as_array().unwrap().is_empty(), "{name}: laps or splits");
        assert_eq!(seconds(&v["laps"], "seconds"), seconds(&w["laps"], "seconds"), "{name}: a row per lap");
        assert_eq!(seconds(&v["zones"], "seconds"), seconds(&w["zones"], "seconds"), "{name}: a bar per zone");
        assert!(v["sample"].as_u64().unwrap() >= 1, "{name}: sample data is marked in the view: {}", v["text"]);
        b.screenshot(name).await;
    }

    // As a web host (claude.ai, ChatGPT) loads a view: through a sandbox proxy on another origin, in
    // an inner frame sandboxed to scripts alone, under the CSP the resource declared (none beyond
    // the default). The page cannot reach the view's document, as in such a host: it initializes,
    // asks the app-only tool for the day's samples and reports the size of a drawn chart; WebDriver,
    // which reaches any frame, then counts the points drawn inside.
    let proxy = serve_sandbox().await;
    b.open(&page_via_proxy(&origin, &mcp, "vitals_query", json!({"collection": "oura.heartrate", "day": day}), &proxy)).await;
    let v = b
        .until(|v| {
            let asked = v["calls"].as_array().unwrap().iter().any(|c| c["name"] == "vitals_view_data");
            asked && v["sizes"].as_array().unwrap().iter().any(|h| h.as_f64().unwrap_or(0.0) > 250.0)
        })
        .await;
    assert_eq!(v["stage"], "view initialized", "{v}");
    let inside = b
        .run_in_frames(
            &["iframe#view", "iframe"],
            r#"return { origin: String(window.origin), drawn: document.getElementById("view").dataset.drawn,
                points: [...document.querySelectorAll("polyline[data-series]")].map((e) => +e.dataset.points),
                text: document.body.innerText.slice(0, 300) };"#,
        )
        .await;
    assert_eq!(inside["origin"], "null", "the view runs in an opaque origin: {inside}");
    assert_eq!(inside["points"], json!([samples]), "every sample drawn inside the sandbox: {inside}");

    b.close().await;
    s.close().await;
    drop(h);
}
