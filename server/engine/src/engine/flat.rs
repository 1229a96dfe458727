//! A series sample read where it lies in its page's text. Decoded as a `serde_json::Value`, every
//! sample of a heart-rate page was a map of its own (a node, three keys and two strings on the
//! heap), built, read three times and freed: a third of a year's CPU went to the allocator.
//! A provider whose series pages carry their samples as they are ([`Provider::series_page`])
//! hands over where each sample's text lies instead, and placing and keeping read it here, in
//! place: its fields by name and their values as their text says them (engine/render.rs `Tally`
//! counts the size each takes as JSON from them).
//!
//! Only what reads exactly as its `Value` would is read here: a JSON object whose values are
//! scalars and whose strings and keys carry no escapes, no key twice. Anything else (nested
//! values, escapes, a repeated key, not an object) is decoded as a `Value`, by the same path as
//! every other provider's records, so the two readings never disagree (tests hold them equal).
//!
//! [`Provider::series_page`]: crate::providers::Provider::series_page
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Number, Value};
use std::ops::Range;
use std::sync::Arc;

/// A record's fields by name, however it is held: what placing and keeping read of a record.
pub trait Fields {
    /// The field's value when it is a string.
    fn str_of(&self, key: &str) -> Option<&str>;
}

impl<T: Fields + ?Sized> Fields for &T {
    fn str_of(&self, key: &str) -> Option<&str> {
        (**self).str_of(key)
    }
}

impl Fields for Value {
    fn str_of(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
}

/// One field's value, as its text says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(Number),
    /// A string's text between its quotes, which carries no escape: the string itself.
    Str(&'a str),
}

impl Scalar<'_> {
    pub fn to_value(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Number(n) => Value::Number(n.clone()),
            Scalar::Str(s) => Value::String(s.to_string()),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// Whether it is the same JSON value as `v`.
    pub fn is(&self, v: &Value) -> bool {
        match (self, v) {
            (Scalar::Null, Value::Null) => true,
            (Scalar::Bool(a), Value::Bool(b)) => a == b,
            (Scalar::Number(a), Value::Number(b)) => a == b,
            (Scalar::Str(a), Value::String(b)) => a == b,
            _ => false,
        }
    }
}

/// A field: its key and its value.
#[derive(Debug, Clone)]
pub struct Field<'a> {
    pub key: &'a str,
    pub value: Scalar<'a>,
}

/// A flat JSON object read in place: its fields in the order a `serde_json::Map` keeps them
/// (by key), each key once.
#[derive(Debug, Default)]
pub struct Flat<'a> {
    fields: Vec<Field<'a>>,
}

impl<'a> Flat<'a> {
    /// Read `text` into this (its fields replaced; the buffer is reused from sample to sample).
    /// False when it is not a flat object this reads exactly as its `Value` (see the module).
    pub fn read(&mut self, text: &'a str) -> bool {
        self.fields.clear();
        let mut de = serde_json::Deserializer::from_str(text);
        if (Fill(&mut self.fields)).deserialize(&mut de).is_err() || de.end().is_err() {
            return false;
        }
        // A map's order, and the value it keeps of a repeated key is its own business: those go the other way.
        self.fields.sort_by(|a, b| a.key.cmp(b.key));
        !self.fields.windows(2).any(|w| w[0].key == w[1].key)
    }

    pub fn get(&self, key: &str) -> Option<&Scalar<'a>> {
        self.fields.iter().find(|f| f.key == key).map(|f| &f.value)
    }

    /// The fields, in a `serde_json::Map`'s order.
    pub fn fields(&self) -> &[Field<'a>] {
        &self.fields
    }
}

impl Fields for Flat<'_> {
    fn str_of(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Scalar::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// A field's text as a scalar; None for what is read as a `Value`.
fn scalar(text: &str) -> Option<Scalar<'_>> {
    Some(match text.as_bytes().first()? {
        // Valid JSON, so without a backslash the text between the quotes is the string itself,
        // and written back it is the same text.
        b'"' if !text.contains('\\') => Scalar::Str(&text[1..text.len() - 1]),
        b'"' | b'{' | b'[' => return None,
        b'n' => Scalar::Null,
        b't' => Scalar::Bool(true),
        b'f' => Scalar::Bool(false),
        _ => Scalar::Number(text.parse().ok()?),
    })
}

/// Fills a [`Flat`]'s fields from the object a deserializer reads.
struct Fill<'v, 'a>(&'v mut Vec<Field<'a>>);

impl<'de, 'v> DeserializeSeed<'de> for Fill<'v, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, 'v> Visitor<'de> for Fill<'v, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a flat JSON object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        // A key with an escape is no borrowed string: an error, and the record goes the other way.
        while let Some(key) = map.next_key::<&'de str>()? {
            let raw: &'de RawValue = map.next_value()?;
            let Some(value) = scalar(raw.get()) else {
                return Err(serde::de::Error::custom("not a scalar this reads in place"));
            };
            self.0.push(Field { key, value });
        }
        Ok(())
    }
}

/// A record held as its text in its page: decoded only when an answer needs it whole.
#[derive(Debug, Clone)]
pub struct Text {
    body: Arc<str>,
    at: Range<usize>,
}

impl Text {
    pub fn new(body: &Arc<str>, at: Range<usize>) -> Text {
        Text { body: body.clone(), at }
    }

    pub fn get(&self) -> &str {
        &self.body[self.at.clone()]
    }

    /// The record as a `Value`.
    pub fn read(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.get())
    }
}

/// A record a series holds whole: decoded, or its text in its page.
#[derive(Debug, Clone)]
pub enum Held {
    Value(Value),
    Text(Text),
}

impl Held {
    /// The record as a `Value`. Only a record [`Flat::read`] read is held as its text, every
    /// value of it already read (a number within range, a string without escape), so reading it
    /// again does not fail; were it ever to, the text itself is returned rather than a value made up.
    pub fn into_value(self) -> Value {
        match self {
            Held::Value(v) => v,
            Held::Text(t) => t.read().unwrap_or_else(|_| Value::String(t.get().to_string())),
        }
    }
}

/// A page's records as their spans in its body (`Provider::series_page`), or decoded.
pub enum Records {
    Values(Vec<Value>),
    Spans(Vec<Range<usize>>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read in place, a record says what its `Value` says: each field, and its size as JSON.
    #[test]
    fn a_flat_record_reads_as_its_value() {
        let text = r#"{"timestamp":"2026-06-01T12:00:00+00:00","bpm":61,"source":"awake","x":-2.50e1,"y":null,"z":true,"w":-0}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let mut flat = Flat::default();
        assert!(flat.read(text));
        let keys: Vec<&str> = flat.fields().iter().map(|f| f.key).collect();
        assert_eq!(keys, v.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>(), "a map's order");
        for f in flat.fields() {
            assert_eq!(f.value.to_value(), v[f.key], "{}", f.key);
            assert!(f.value.is(&v[f.key]));
        }
        assert_eq!(flat.str_of("source"), v.str_of("source"));
        assert_eq!(flat.str_of("bpm"), None);
    }

    /// What this cannot read exactly as its `Value` is left to the `Value` path.
    #[test]
    fn what_a_flat_read_could_misread_goes_the_other_way() {
        let mut flat = Flat::default();
        for text in
            [r#"{"a":"caf\u00e9"}"#, r#"{"a\n":1}"#, r#"{"a":1,"a":2}"#, r#"{"a":[1]}"#, r#"{"a":{"b":1}}"#, r#"[1,2]"#, r#"5"#, r#"{"a":1} x"#, r#"{"a":1"#]
        {
            assert!(!flat.read(text), "{text}");
        }
        assert!(flat.read("{}"));
        assert!(flat.fields().is_empty());
    }
}
