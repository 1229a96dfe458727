//! The three shapes an answer's `data` can take, and what each row costs in characters (so the
//! budget can be kept by cutting at a day boundary rather than mid-day).
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{"columns": [...], "rows": [[...], ...]}`: each key written once, not once per record.
    Columns,
    /// One object per record, as the provider shapes them.
    Records,
    /// One CSV string, nested values as JSON in a quoted cell.
    Csv,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Columns => "columns",
            Format::Records => "records",
            Format::Csv => "csv",
        }
    }
}

/// Every key of `records`, identity columns first (`day`, `id` for documents, `timestamp` for a series), then in order of appearance.
pub fn columns(records: &[Value]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in records {
        if let Value::Object(m) = r {
            for k in m.keys() {
                if !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
    }
    // Documents lead with `day, id`; a series (no `day`) leads with its `timestamp`, which in a
    // document is just another field.
    let lead: &[&str] = if cols.iter().any(|c| c == "day") { &["id", "day"] } else { &["id", "timestamp"] };
    for k in lead {
        if let Some(pos) = cols.iter().position(|c| c == k) {
            let c = cols.remove(pos);
            cols.insert(0, c);
        }
    }
    cols
}

fn row(r: &Value, cols: &[String]) -> Value {
    Value::Array(cols.iter().map(|c| r.get(c).cloned().unwrap_or(Value::Null)).collect())
}

fn csv_line(r: &Value, cols: &[String]) -> String {
    let cell = |v: Option<&Value>| -> String {
        let s = match v {
            None | Some(Value::Null) => return String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s
        }
    };
    let mut line = cols.iter().map(|c| cell(r.get(c))).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

pub fn to_csv(records: &[Value]) -> String {
    let cols = columns(records);
    let mut out = cols.join(",");
    out.push('\n');
    for r in records {
        out.push_str(&csv_line(r, &cols));
    }
    out
}

pub fn render(records: &[Value], f: Format) -> Value {
    match f {
        Format::Records => Value::Array(records.to_vec()),
        Format::Csv => Value::String(to_csv(records)),
        Format::Columns => {
            let cols = columns(records);
            let rows: Vec<Value> = records.iter().map(|r| row(r, &cols)).collect();
            json!({"columns": cols, "rows": rows})
        }
    }
}

/// Counts what serde_json writes, without keeping it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn chars_of(v: &Value) -> usize {
    let mut c = Count(0);
    serde_json::to_writer(&mut c, v).expect("counting never fails");
    c.0
}

/// Exactly `render(records, f).to_string().len()`, without building the rendered value.
pub fn size(records: &[Value], f: Format) -> usize {
    let commas = records.len().saturating_sub(1);
    match f {
        Format::Records => 2 + commas + records.iter().map(chars_of).sum::<usize>(),
        Format::Csv => chars_of(&Value::String(to_csv(records))),
        Format::Columns => {
            let cols = columns(records);
            let frame = json!({"columns": cols, "rows": []}).to_string().len();
            let null = Value::Null;
            let rows: usize = records
                .iter()
                .map(|r| 2 + cols.len().saturating_sub(1) + cols.iter().map(|c| chars_of(r.get(c).unwrap_or(&null))).sum::<usize>())
                .sum();
            frame + rows + commas
        }
    }
}

/// Characters `render` writes around the rows, and for each record. The serialised length of
/// `render(records[..k])` is at most `frame + sum(per_row[..k])` (a CSV string's escapes aside,
/// which the final measure catches).
pub fn costs(records: &[Value], f: Format) -> (usize, Vec<usize>) {
    let cols = columns(records);
    let frame = match f {
        Format::Records => 2,
        Format::Csv => cols.join(",").len() + 4,
        Format::Columns => json!({"columns": cols, "rows": []}).to_string().len(),
    };
    let per = records
        .iter()
        .map(|r| match f {
            Format::Records => r.to_string().len() + 1,
            Format::Columns => row(r, &cols).to_string().len() + 1,
            Format::Csv => Value::String(csv_line(r, &cols)).to_string().len() - 2,
        })
        .collect();
    (frame, per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_put_identity_first_and_fill_gaps_with_null() {
        let recs = vec![json!({"bpm": 60, "timestamp": "t1"}), json!({"timestamp": "t2", "source": "rest"})];
        assert_eq!(render(&recs, Format::Columns), json!({"columns": ["timestamp", "bpm", "source"], "rows": [["t1", 60, null], ["t2", null, "rest"]]}));
    }

    #[test]
    fn csv_quotes_nested_values() {
        let csv = to_csv(&[json!({"id": "x", "c": {"a": 1, "b": 2}})]);
        assert_eq!(csv, "id,c\nx,\"{\"\"a\"\":1,\"\"b\"\":2}\"\n");
    }

    #[test]
    fn size_is_exact() {
        let recs: Vec<Value> = (0..30).map(|i| json!({"timestamp": format!("t{i}"), "bpm": i, "x": if i % 2 == 0 { json!(null) } else { json!({"a": [1, 2]}) }})).collect();
        for f in [Format::Columns, Format::Records, Format::Csv] {
            assert_eq!(size(&recs, f), render(&recs, f).to_string().len(), "{f:?}");
            assert_eq!(size(&[], f), render(&[], f).to_string().len(), "{f:?} empty");
        }
    }

    #[test]
    fn costs_bound_the_rendered_size() {
        let recs: Vec<Value> = (0..50).map(|i| json!({"timestamp": format!("t{i}"), "bpm": i, "note": "a,\"b\""})).collect();
        for f in [Format::Columns, Format::Records, Format::Csv] {
            let (frame, per) = costs(&recs, f);
            let real = render(&recs, f).to_string().len();
            let est = frame + per.iter().sum::<usize>();
            assert!(real <= est && est <= real + 60, "{f:?}: real {real}, estimated {est}");
        }
    }
}
