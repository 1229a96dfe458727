//! A tool's output schema as a model needs it. Hosts hand the tool list to the model with every
//! request, output schemas included, and the derived ones were three times the size of everything
//! else in it (types, bounds, `required`, `$defs`, `null` branches). What a model reads in an
//! output schema is what each field means: so a field keeps its description and the fields inside
//! it (an array's in `items`), an enumeration its values' meanings in words, and everything else
//! goes. The schema stays true of every answer, only more permissive (a client that validates
//! structured content against it still can): no type is asserted below the root, and a field
//! with nothing to say is not listed (JSON Schema allows properties it does not list).
use rmcp::model::JsonObject;
use serde_json::{Map, Value};

/// `schema` made lean in place: the root an object, its fields described.
pub fn lean_output(schema: &mut JsonObject) {
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let node = Value::Object(std::mem::take(schema));
    schema.insert("type".into(), "object".into());
    if let Some(Value::Object(lean)) = lean(&node, &defs) {
        schema.extend(lean);
    }
}

/// A node with its `$ref` or nullable branch resolved to the definition it names.
fn resolve<'a>(node: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    let by_ref = |n: &'a Value| n.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")).and_then(|k| defs.get(k));
    if let Some(d) = by_ref(node) {
        return resolve(d, defs);
    }
    if let Some(Value::Array(branches)) = node.get("anyOf") {
        let real: Vec<&Value> = branches.iter().filter(|b| b.get("type") != Some(&Value::from("null"))).collect();
        if let [one] = real.as_slice() {
            return resolve(one, defs);
        }
    }
    node
}

/// What a node says: its own description (or its definition's), and an enumeration's values with
/// theirs.
fn said(node: &Value, target: &Value) -> Option<String> {
    let own = node.get("description").or_else(|| target.get("description")).and_then(Value::as_str).map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "));
    let values: Vec<String> = target
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| {
            let name = b.get("const").cloned().or_else(|| b.get("enum").cloned())?;
            let name = match name {
                Value::Array(a) => a.iter().filter_map(Value::as_str).map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
                Value::String(s) => format!("`{s}`"),
                other => other.to_string(),
            };
            Some(match b.get("description").and_then(Value::as_str) {
                Some(d) => format!("{name}: {}", d.split_whitespace().collect::<Vec<_>>().join(" ")),
                None => name,
            })
        })
        .collect();
    match (own, values.is_empty()) {
        (own, true) => own,
        (Some(own), false) => Some(format!("{own} {}.", values.join("; "))),
        (None, false) => Some(format!("{}.", values.join("; "))),
    }
}

/// The lean form of a node: its description and its described fields; None when it says nothing.
fn lean(node: &Value, defs: &Map<String, Value>) -> Option<Value> {
    let target = resolve(node, defs);
    let mut out = Map::new();
    if let Some(d) = said(node, target) {
        out.insert("description".into(), d.into());
    }
    if let Some(props) = fields(target, defs) {
        out.insert("properties".into(), props);
    }
    let items = target.get("items").map(|i| resolve(i, defs));
    if let Some(props) = items.and_then(|i| fields(i, defs)) {
        out.insert("items".into(), Value::Object(Map::from_iter([("properties".to_string(), props)])));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The described fields of an object node.
fn fields(target: &Value, defs: &Map<String, Value>) -> Option<Value> {
    let props: Map<String, Value> = target.get("properties")?.as_object()?.iter().filter_map(|(k, p)| Some((k.clone(), lean(p, defs)?))).collect();
    (!props.is_empty()).then_some(Value::Object(props))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_keeps_its_meaning_and_loses_its_types() {
        let mut s = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["a", "v"],
            "$defs": {"Span": {"type": "object", "properties": {"start": {"type": "string"}, "end": {"type": "string", "description": "Inclusive."}}},
                      "V": {"description": "A verdict.", "oneOf": [{"const": "up", "description": "It rose."}, {"enum": ["x", "y"], "type": "string"}]}},
            "properties": {
                "a": {"$ref": "#/$defs/Span", "description": "Period A."},
                "b": {"anyOf": [{"$ref": "#/$defs/Span"}, {"type": "null"}]},
                "n": {"type": "integer", "minimum": 0},
                "v": {"$ref": "#/$defs/V"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Span"}, "description": "Spans."}
            }
        })
        .as_object()
        .cloned()
        .unwrap();
        lean_output(&mut s);
        assert_eq!(
            Value::Object(s),
            json!({"type": "object", "properties": {
                "a": {"description": "Period A.", "properties": {"end": {"description": "Inclusive."}}},
                "b": {"properties": {"end": {"description": "Inclusive."}}},
                "v": {"description": "A verdict. `up`: It rose.; `x`, `y`."},
                "list": {"description": "Spans.", "items": {"properties": {"end": {"description": "Inclusive."}}}}
            }})
        );
    }
}
