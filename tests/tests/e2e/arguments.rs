//! Every argument error names the parameter, says what was wrong and what to send, for every tool,
//! every parameter and every JSON type the parameter does not take: read from the schemas the
//! server lists, so a new parameter is covered without a new line here.
use crate::common::*;
use serde_json::{json, Map, Value};

/// One value of each JSON type.
fn every_type() -> Vec<(&'static str, Value)> {
    vec![
        ("null", Value::Null),
        ("boolean", json!(true)),
        ("integer", json!(7)),
        ("number", json!(2.5)),
        ("string", json!("x")),
        ("array", json!(["a"])),
        ("object", json!({"k": 1})),
    ]
}

/// The JSON types a property schema allows, through `$ref` and `anyOf`.
fn allowed(prop: &Value, root: &Value) -> Vec<String> {
    let prop = match prop["$ref"].as_str().and_then(|r| r.strip_prefix("#/")) {
        Some(path) => path.split('/').fold(root, |v, p| &v[p]),
        None => prop,
    };
    let mut out: Vec<String> = match &prop["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts.iter().filter_map(|t| t.as_str().map(str::to_string)).collect(),
        _ => vec![],
    };
    for sub in prop["anyOf"].as_array().into_iter().flatten() {
        out.extend(allowed(sub, root));
    }
    if out.iter().any(|t| t == "number") {
        out.push("integer".into());
    }
    out
}

/// A valid value for a required parameter, so the call reaches the parameter under test.
fn valid(tool: &str, name: &str) -> Value {
    match (tool, name) {
        (_, "collection") => json!("withings.devices"),
        (_, "provider") => json!("polar"),
        (_, "format") => json!("fit"),
        (_, "id") => json!("1"),
        (_, "path") => json!("/nonexistent-folder/x.fit"),
        (_, "metric" | "x") => json!("oura.daily_sleep.score"),
        (_, "y") => json!("oura.daily_activity.steps"),
        (_, "a_start" | "start") => json!("2026-01-01"),
        (_, "a_end") => json!("2026-01-31"),
        (_, "b_start") => json!("2026-02-01"),
        (_, "b_end" | "end") => json!("2026-02-28"),
        (_, "fields") => json!(["steps"]),
        _ => panic!("no valid value for {tool}.{name}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_wrong_type_of_every_parameter_is_refused_by_name() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let mut cases = 0;
    for t in &tools {
        let schema = Value::Object((*t.input_schema).clone());
        let props = schema["properties"].as_object().cloned().unwrap_or_default();
        let required: Vec<String> = schema["required"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect();
        let base: Map<String, Value> = required.iter().map(|r| (r.clone(), valid(&t.name, r))).collect();
        for (name, prop) in &props {
            let ok = allowed(prop, &schema);
            assert!(!ok.is_empty(), "{}.{name} has a type in its schema", t.name);
            for (kind, v) in every_type() {
                if ok.iter().any(|a| a == kind) {
                    continue;
                }
                if kind == "null" && !required.contains(name) {
                    // An optional parameter sent as null is the same as not sent (the listed schema
                    // says "optional" by not requiring it): never refused as a wrong type.
                    let mut args = base.clone();
                    args.insert(name.clone(), v.clone());
                    let r = s.call_raw(&t.name, Value::Object(args)).await;
                    assert!(!text(&r).starts_with(&format!("`{name}`: null")), "{}.{name} = null: {}", t.name, text(&r));
                    cases += 1;
                    continue;
                }
                let mut args = base.clone();
                args.insert(name.clone(), v.clone());
                let e = s.err(&t.name, Value::Object(args)).await;
                assert!(e.starts_with(&format!("`{name}`: ")), "{}.{name} = {v}: {e}", t.name);
                assert!(e.contains(" is not ") && e.contains("Send "), "{}.{name} = {v}: says what was wrong and what to send: {e}", t.name);
                assert!(!e.contains("untagged") && !e.contains("i64") && !e.contains("invalid type"), "no decoder words: {e}");
                cases += 1;
            }
        }
        // A missing required parameter, and an unknown one.
        for r in &required {
            let mut args = base.clone();
            args.remove(r);
            let e = s.err(&t.name, Value::Object(args)).await;
            assert!(e.starts_with(&format!("`{r}` is missing: {} needs it. Send ", t.name)), "{e}");
            cases += 1;
        }
        let mut args = base.clone();
        args.insert("bogus_key".into(), json!(1));
        let e = s.err(&t.name, Value::Object(args)).await;
        assert!(e.starts_with(&format!("`bogus_key` is not a parameter of {}", t.name)), "{e}");
        cases += 1;
    }
    assert!(cases > 60, "{cases} cases");

    // Values of the right type that cannot mean anything.
    for (args, param, says) in [
        (json!({"collection": "oura.daily_sleep", "day": "2026-02-30"}), "day", "does not exist: February 2026 has 28 days"),
        (json!({"collection": "oura.daily_sleep", "day": "2026-13-01"}), "day", "months run from 01 to 12"),
        (json!({"collection": "withings.devices", "start": "2026-13-01"}), "start", "does not exist"),
        (json!({"collection": "withings.intraday", "day": "9999-12-31"}), "day", "outside the days a query can name"),
        (json!({"collection": "withings.intraday", "day": "9999-12-31", "tz": "-12:00"}), "day", "outside the days a query can name"),
        (json!({"collection": "withings.intraday", "start": "9999-12-25", "end": "9999-12-31"}), "start", "outside the days"),
        (json!({"collection": "withings.intraday", "start": "9999-12-31"}), "start", "outside the days"),
        (json!({"collection": "oura.daily_sleep", "day": "2026-06-10", "start": "2026-06-01"}), "day", "not both"),
        (json!({"collection": "oura.daily_sleep", "format": ""}), "format", "empty string"),
        (json!({"collection": "oura.daily_sleep", "format": "columns "}), "format", "spaces around it"),
        (json!({"collection": "oura.daily_sleep", "tz": ""}), "tz", "empty string"),
        (json!({"collection": "oura.daily_sleep", "tz": "+-5:00"}), "tz", "not an offset from -14:00 to +14:00"),
        (json!({"collection": "oura.daily_sleep", "tz": "+-99:00"}), "tz", "not an offset"),
        (json!({"collection": "oura.daily_sleep", "tz": "+25:00"}), "tz", "not an offset"),
        (json!({"collection": "oura.heartrate", "resolution": ""}), "resolution", "empty string"),
        (json!({"collection": "oura.daily_sleep", "max_chars": 4999}), "max_chars", "out of range"),
        (json!({"collection": "oura.daily_sleep", "max_chars": 1e30}), "max_chars", "too large"),
    ] {
        let e = s.err("vitals_query", args.clone()).await;
        assert!(e.starts_with(&format!("`{param}`")) && e.contains(says), "{args}: {e}");
        assert!(e.contains("Send") || e.contains("send"), "{args}: says what to send: {e}");
    }
    // A day after today with no end cannot end today.
    let e = s.err("vitals_query", json!({"collection": "oura.daily_sleep", "start": ds(today().tomorrow().unwrap())})).await;
    assert!(e.starts_with("`start`") && e.contains("after today"), "{e}");
    s.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn listed_schemas_carry_only_json_schema_formats() {
    let twin = twin().await;
    let s = connect(&twin, true, &[]).await;
    fn formats(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(f) = o.get("format").and_then(Value::as_str) {
                    out.push(f.to_string());
                }
                o.values().for_each(|c| formats(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| formats(c, out)),
            _ => {}
        }
    }
    let mut found = vec![];
    for t in s.client.list_all_tools().await.unwrap() {
        formats(&Value::Object((*t.input_schema).clone()), &mut found);
        if let Some(o) = &t.output_schema {
            formats(&Value::Object((**o).clone()), &mut found);
        }
    }
    found.retain(|f| !["date-time", "date", "uri"].contains(&f.as_str()));
    assert!(found.is_empty(), "formats JSON Schema does not define: {found:?}");
    s.close().await;
}
