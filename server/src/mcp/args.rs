//! Tool arguments read against the tool's own input schema before they are decoded, so every
//! refusal names the parameter, says what was wrong and what to send (the schema's description),
//! instead of a decoder's words about types the client never saw ("untagged enum FieldsArg",
//! "expected i64"). The schemas are cleaned of formats JSON Schema does not define, which clients
//! warn about.
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::JsonObject;
use rmcp::ErrorData;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A server that lists each tool's input schema by name (the MCP layer's `Vitals`): what the
/// extractors read arguments against, named here so this module needs nothing of the tools.
pub trait ListsSchemas {
    fn input_schema(&self, tool: &str) -> Option<std::sync::Arc<JsonObject>>;
}

/// A tool's parameters, read as `P` against the schema the tool lists, the tool named by the call
/// itself: a tool's name is written once (its `#[tool]`), and its schema is `P`'s (rmcp's macro
/// reads a `Parameters<P>` argument for it, as it does rmcp's own). Unlike rmcp's extractor, a
/// refusal is the tool's answer (`isError`, naming the parameter, `decode`), not a protocol error:
/// it is handed to the tool, which returns it.
pub struct Parameters<P>(pub Result<P, String>);

impl<P: JsonSchema> JsonSchema for Parameters<P> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        P::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        P::json_schema(generator)
    }
}

impl<P: DeserializeOwned, S: ListsSchemas> FromContextPart<ToolCallContext<'_, S>> for Parameters<P> {
    fn from_context_part(ctx: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let args = ctx.arguments.take().unwrap_or_default();
        // The call was routed to this tool by this name, so it lists a schema; said if not, never read against none.
        let read = match ctx.service.input_schema(&ctx.name) {
            Some(schema) => decode(&ctx.name, &schema, args),
            None => Err(format!("{} lists no input schema; this is a bug of vitals.", ctx.name)),
        };
        Ok(Parameters(read))
    }
}

/// A tool without parameters: anything sent is refused by name (`none`), handed to the tool.
pub struct NoParameters(pub Result<(), String>);

impl<S> FromContextPart<ToolCallContext<'_, S>> for NoParameters {
    fn from_context_part(ctx: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let args = ctx.arguments.take().unwrap_or_default();
        Ok(NoParameters(none(&ctx.name, &args)))
    }
}

/// Formats JSON Schema (2020-12) defines; schemars adds Rust's own (`uint32`, `int64`, `double`).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Remove every `format` that is not a JSON Schema format, at any depth (the bounds schemars
/// writes beside them, `minimum: 0`, stay). A property schema written as `true` (any JSON value,
/// as schemars writes it) becomes `{}`: MCP's schema wants an object for each property, and the
/// conformance suite refuses the listing otherwise.
pub fn clean_schema(v: &mut JsonObject) {
    if v.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f)) {
        v.remove("format");
    }
    if let Some(Value::Object(props)) = v.get_mut("properties") {
        for p in props.values_mut().filter(|p| **p == Value::Bool(true)) {
            *p = Value::Object(JsonObject::new());
        }
    }
    for (_, child) in v.iter_mut() {
        clean_value(child);
    }
}

/// A tool's input schema as lean as a model needs it (hosts hand it to the model with every
/// request): an optional parameter is simply not `required`, so the `null` schemars adds to its
/// type, its `default: null` and the `$schema` line go; a `$ref` to a definition is written in
/// place. A client that sends `null` for an optional parameter is still understood
/// ([`decode`] reads it as absent).
pub fn lean_schema(v: &mut JsonObject) {
    v.remove("$schema");
    let defs = v.remove("$defs");
    let required: Vec<String> = v.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).map(String::from).collect();
    if let Some(Value::Object(props)) = v.get_mut("properties") {
        for (name, p) in props.iter_mut() {
            let Value::Object(p) = p else { continue };
            if let (Some(Value::String(r)), Some(Value::Object(defs))) = (p.get("$ref").cloned(), &defs) {
                if let Some(Value::Object(def)) = r.strip_prefix("#/$defs/").and_then(|k| defs.get(k)) {
                    p.remove("$ref");
                    for (k, x) in def.iter().filter(|(k, _)| *k != "description") {
                        p.entry(k.clone()).or_insert_with(|| x.clone());
                    }
                }
            }
            if required.contains(name) {
                continue;
            }
            if p.get("default").is_some_and(Value::is_null) {
                p.remove("default");
            }
            if let Some(Value::Array(ts)) = p.get_mut("type") {
                ts.retain(|t| t != "null");
                if ts.len() == 1 {
                    let one = ts.remove(0);
                    p.insert("type".into(), one);
                }
            }
            if let Some(Value::Array(branches)) = p.get("anyOf").cloned() {
                let kept: Vec<Value> = branches.into_iter().filter(|b| b.get("type") != Some(&Value::from("null"))).collect();
                p.remove("anyOf");
                match kept.as_slice() {
                    [Value::Object(one)] => {
                        let one = one.clone();
                        let defs = defs.as_ref().and_then(Value::as_object);
                        let one = match (one.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")), defs) {
                            (Some(k), Some(d)) => d.get(k).and_then(Value::as_object).cloned().unwrap_or(one),
                            _ => one,
                        };
                        for (k, x) in one.into_iter().filter(|(k, _)| k != "description") {
                            p.entry(k).or_insert(x);
                        }
                    }
                    _ => {
                        p.insert("anyOf".into(), Value::Array(kept));
                    }
                }
            }
        }
    }
}

fn clean_value(v: &mut Value) {
    match v {
        Value::Object(o) => clean_schema(o),
        Value::Array(a) => a.iter_mut().for_each(clean_value),
        _ => {}
    }
}

/// Read `args` as `tool`'s parameters described by `schema`: unknown names, missing ones and wrong
/// JSON types are refused in words; then the decode (which no longer meets a type it cannot read).
pub fn decode<T: DeserializeOwned>(tool: &str, schema: &JsonObject, args: JsonObject) -> Result<T, String> {
    check(tool, schema, &args)?;
    serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("The arguments of {tool} could not be read ({e}). Send them as its input schema lists them."))
}

/// A tool without parameters: anything sent is refused by name, never ignored.
pub fn none(tool: &str, args: &JsonObject) -> Result<(), String> {
    match args.keys().next() {
        None => Ok(()),
        Some(k) => Err(format!("`{}` is not a parameter of {tool}: it takes none. Send {{}} (no arguments).", shorten(k))),
    }
}

fn check(tool: &str, schema: &JsonObject, args: &JsonObject) -> Result<(), String> {
    let empty = JsonObject::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    for k in args.keys() {
        if !props.contains_key(k) {
            let near = names.iter().find(|n| n.eq_ignore_ascii_case(k.trim()) || n.replace('_', "") == k.to_ascii_lowercase().replace(['_', '-', ' '], ""));
            let hint = near.map(|n| format!(" Did you mean `{n}`?")).unwrap_or_default();
            return Err(format!("`{}` is not a parameter of {tool}.{hint} Its parameters are: {}.", shorten(k), names.join(", ")));
        }
    }
    for req in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if !args.contains_key(req) {
            return Err(format!("`{req}` is missing: {tool} needs it. Send {}", send(props.get(req), schema)));
        }
    }
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    for (k, v) in args {
        if v.is_null() && !required.contains(&k.as_str()) {
            // An optional parameter sent as null: the same as not sent.
            continue;
        }
        let prop = &props[k];
        let allowed = types(prop, schema);
        if allowed.is_empty() || allowed.iter().any(|t| fits(t, v)) {
            if let (Value::Array(items), Some(item)) = (v, prop_items(prop, schema)) {
                let item_types = types(item, schema);
                if let Some(bad) = items.iter().find(|i| !item_types.iter().any(|t| fits(t, i))) {
                    return Err(format!("`{k}`: one of its items is {}, not {}. Send {}", what(bad), expected(&item_types), send(Some(prop), schema)));
                }
            }
            continue;
        }
        let integer_out_of_range = allowed.contains(&"integer") && v.as_f64().is_some_and(|f| f.fract() == 0.0);
        let why = if integer_out_of_range { format!("{} is too large a number", what(v)) } else { format!("{} is not {}", what(v), expected(&allowed)) };
        return Err(format!("`{k}`: {why}. Send {}", send(Some(prop), schema)));
    }
    Ok(())
}

/// The JSON types a property schema allows (`null` among them when it is optional), through
/// `$ref`, `anyOf` and `oneOf`.
fn types<'a>(prop: &'a Value, root: &'a JsonObject) -> Vec<&'a str> {
    let prop = resolve(prop, root);
    let mut out = vec![];
    match prop.get("type") {
        Some(Value::String(t)) => out.push(t.as_str()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        for sub in prop.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.extend(types(sub, root));
        }
    }
    if prop.get("const").is_some_and(Value::is_null) {
        out.push("null");
    }
    out
}

/// The item schema of an array-typed property (directly, or in one of its `anyOf` branches).
fn prop_items<'a>(prop: &'a Value, root: &'a JsonObject) -> Option<&'a Value> {
    let prop = resolve(prop, root);
    prop.get("items")
        .or_else(|| ["anyOf", "oneOf"].iter().flat_map(|k| prop.get(*k).and_then(Value::as_array).into_iter().flatten()).find_map(|s| prop_items(s, root)))
}

fn resolve<'a>(v: &'a Value, root: &'a JsonObject) -> &'a Value {
    let Some(path) = v.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/")) else {
        return v;
    };
    let mut parts = path.split('/');
    let first = parts.next().and_then(|p| root.get(p));
    parts.try_fold(first, |at, part| at.map(|a| a.get(part))).flatten().unwrap_or(v)
}

fn fits(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() && v.as_u64().is_some_and(|u| i64::try_from(u).is_ok()),
        _ => true,
    }
}

/// A value as the message shows it: its kind and a short preview (a 10 MB string is not echoed).
fn what(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => format!("the fractional number {n}"),
        Value::Number(n) => format!("the number {}", shorten(&n.to_string())),
        Value::String(s) => format!("the string {:?}", shorten(s)),
        Value::Array(a) => format!("an array of {} item(s)", a.len()),
        Value::Object(o) => format!("an object of {} key(s)", o.len()),
    }
}

fn expected(types: &[&str]) -> String {
    let words: Vec<&str> = types
        .iter()
        .filter(|t| **t != "null")
        .map(|t| match *t {
            "boolean" => "true or false",
            "string" => "a string",
            "object" => "an object",
            "array" => "an array",
            "number" => "a number",
            "integer" => "a whole number",
            other => other,
        })
        .collect();
    match words.as_slice() {
        [] => "null".into(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// What to send for a property: its description, with its type.
fn send(prop: Option<&Value>, root: &JsonObject) -> String {
    let Some(prop) = prop else {
        return "it as the input schema lists it.".into();
    };
    let kind = expected(&types(prop, root));
    match prop.get("description").and_then(Value::as_str) {
        Some(d) => format!("{kind}: {d}"),
        None => format!("{kind}."),
    }
}

fn shorten(s: &str) -> String {
    let head: String = s.chars().take(40).collect();
    if head.len() < s.len() {
        format!("{head}… ({} characters)", s.chars().count())
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> JsonObject {
        json!({
            "type": "object",
            "properties": {
                "collection": {"type": "string", "description": "Qualified collection name."},
                "max_chars": {"type": ["integer", "null"], "format": "int64", "description": "Character budget."},
                "fields": {"anyOf": [{"$ref": "#/$defs/Fields"}, {"type": "null"}], "description": "Field names."},
                "latest": {"type": ["boolean", "null"]},
            },
            "required": ["collection"],
            "$defs": {"Fields": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]}}
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn refused(args: Value) -> String {
        check("vitals_query", &schema(), args.as_object().unwrap()).unwrap_err()
    }

    #[test]
    fn each_refusal_names_the_parameter_and_what_to_send() {
        let e = refused(json!({"collection": "oura.sleep", "fields": 123}));
        assert!(e.starts_with("`fields`: the number 123 is not an array or a string. Send an array or a string: Field names."), "{e}");
        let e = refused(json!({"collection": "oura.sleep", "max_chars": "abc"}));
        assert!(e.starts_with("`max_chars`: the string \"abc\" is not a whole number. Send a whole number: Character budget."), "{e}");
        let e = refused(json!({"collection": "oura.sleep", "max_chars": 1e30}));
        assert!(e.contains("too large"), "{e}");
        let e = refused(json!({"collection": "oura.sleep", "max_chars": 2.5}));
        assert!(e.contains("fractional number 2.5 is not a whole number"), "{e}");
        let e = refused(json!({"max_chars": 5000}));
        assert!(e.starts_with("`collection` is missing: vitals_query needs it. Send a string: Qualified collection name."), "{e}");
        let e = refused(json!({"collection": "x", "Latest": true}));
        assert!(e.starts_with("`Latest` is not a parameter of vitals_query. Did you mean `latest`?"), "{e}");
        let e = refused(json!({"collection": "x", "fields": ["a", 1]}));
        assert!(e.starts_with("`fields`: one of its items is the number 1, not a string."), "{e}");
        let e = refused(json!({"collection": "x".repeat(100), "latest": "x".repeat(1_000_000)}));
        assert!(e.len() < 300 && e.contains("(1000000 characters)"), "a huge value is not echoed: {} chars", e.len());
        assert!(check("vitals_query", &schema(), json!({"collection": "x", "fields": null, "latest": null}).as_object().unwrap()).is_ok());
    }

    #[test]
    fn a_lean_schema_says_optional_by_not_requiring_and_still_takes_null() {
        let mut s = schema();
        lean_schema(&mut s);
        let props = s["properties"].as_object().unwrap();
        assert_eq!(props["max_chars"]["type"], json!("integer"));
        assert_eq!(props["latest"], json!({"type": "boolean"}));
        assert_eq!(props["fields"]["anyOf"], json!([{"type": "array", "items": {"type": "string"}}, {"type": "string"}]), "the definition in place");
        assert!(s.get("$defs").is_none());
        assert!(check("vitals_query", &s, json!({"collection": "x", "fields": null, "latest": null}).as_object().unwrap()).is_ok());
        let e = check("vitals_query", &s, json!({"collection": "x", "latest": "yes"}).as_object().unwrap()).unwrap_err();
        assert!(e.starts_with("`latest`: the string \"yes\" is not true or false."), "{e}");
    }

    #[test]
    fn only_json_schema_formats_stay() {
        let mut s = json!({"properties": {"n": {"type": "integer", "format": "uint32", "minimum": 0}, "t": {"type": "string", "format": "date-time"}}})
            .as_object()
            .unwrap()
            .clone();
        clean_schema(&mut s);
        assert_eq!(Value::Object(s), json!({"properties": {"n": {"type": "integer", "minimum": 0}, "t": {"type": "string", "format": "date-time"}}}));
    }
}
