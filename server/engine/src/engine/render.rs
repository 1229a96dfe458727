//! The three shapes an answer's `data` can take, and what each row costs in characters (so the
//! budget can be kept by cutting at a day boundary rather than mid-day).
use super::flat::{Flat, Scalar};
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
    lead(cols)
}

/// Identity columns first. Documents lead with `day, id`; a series (no `day`) leads with its
/// `timestamp`, which in a document is just another field.
fn lead(mut cols: Vec<String>) -> Vec<String> {
    for k in identity(&cols) {
        if let Some(pos) = cols.iter().position(|c| c == k) {
            let c = cols.remove(pos);
            cols.insert(0, c);
        }
    }
    cols
}

/// The identity columns of these columns, last first.
fn identity(cols: &[String]) -> &'static [&'static str] {
    if cols.iter().any(|c| c == "day") {
        &["id", "day"]
    } else {
        &["id", "timestamp"]
    }
}

fn row(r: &Value, cols: &[String]) -> Value {
    Value::Array(cols.iter().map(|c| r.get(c).cloned().unwrap_or(Value::Null)).collect())
}

/// One CSV cell: empty for null or missing, quoted (quotes doubled) when it holds `,`, `"` or a newline.
fn csv_cell(v: Option<&Value>) -> String {
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
}

fn csv_line(r: &Value, cols: &[String]) -> String {
    let mut line = cols.iter().map(|c| csv_cell(r.get(c))).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

pub fn to_csv(records: &[Value]) -> String {
    to_csv_in(records, &[])
}

/// [`to_csv`] with the columns in `order` (see [`in_order`]).
fn to_csv_in(records: &[Value], order: &[&str]) -> String {
    let cols = in_order(columns(records), order);
    let mut out = cols.join(",");
    out.push('\n');
    for r in records {
        out.push_str(&csv_line(r, &cols));
    }
    out
}

pub fn render(records: &[Value], f: Format) -> Value {
    render_in(records, f, &[])
}

/// The columns after the identity ones in the order the catalog lists its fields (`order`), so
/// that fields which belong together (heart-rate zones 0 to 5) sit together in that order rather
/// than alphabetically; a field the catalog does not list follows, in order of appearance. The
/// order changes no size.
pub fn in_order(cols: Vec<String>, order: &[&str]) -> Vec<String> {
    if order.is_empty() {
        return cols;
    }
    let ids = cols.iter().take_while(|c| identity(&cols).contains(&c.as_str())).count();
    let mut rest: Vec<(usize, String)> = cols[ids..].iter().cloned().enumerate().collect();
    rest.sort_by_key(|(i, c)| (order.iter().position(|o| o == c).unwrap_or(order.len()), *i));
    cols[..ids].iter().cloned().chain(rest.into_iter().map(|(_, c)| c)).collect()
}

/// [`render`] with the columns in the catalog's `order` ([`in_order`]).
pub fn render_in(records: &[Value], f: Format, order: &[&str]) -> Value {
    match f {
        Format::Records => Value::Array(records.to_vec()),
        Format::Csv => Value::String(to_csv_in(records, order)),
        Format::Columns => {
            let cols = in_order(columns(records), order);
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

/// Characters `v` takes as JSON. The scalars a series is made of are counted directly (this runs
/// once per value of every record); anything else is written out to a counter.
fn chars_of(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::String(s) if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') => s.len() + 2,
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let (neg, mut x) = match n.as_i64() {
                Some(i) => (i < 0, i.unsigned_abs()),
                None => (false, n.as_u64().unwrap_or(0)),
            };
            let mut digits = 1;
            while x >= 10 {
                x /= 10;
                digits += 1;
            }
            digits + usize::from(neg)
        }
        other => {
            let mut c = Count(0);
            serde_json::to_writer(&mut c, other).expect("counting never fails");
            c.0
        }
    }
}

/// [`chars_of`] a value read in place: a string read in place carries no escape (engine/flat.rs).
fn scalar_chars(v: &Scalar) -> usize {
    match v {
        Scalar::Str(s) => s.len() + 2,
        Scalar::Number(n) => chars_of(&Value::Number(n.clone())),
        Scalar::Null => 4,
        Scalar::Bool(b) => 4 + usize::from(!b),
    }
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
            let rows: usize =
                records.iter().map(|r| 2 + cols.len().saturating_sub(1) + cols.iter().map(|c| chars_of(r.get(c).unwrap_or(&null))).sum::<usize>()).sum();
            frame + rows + commas
        }
    }
}

/// What [`size`] needs to know of a run of records, gathered one record at a time where the
/// records are fresh (each page as it is decoded, while other windows are still in flight) and
/// added up across windows in order. `Tally::size` is exactly `size` of those records in the
/// tally's format (only what that format needs is counted: this runs once per value).
#[derive(Debug, Clone)]
pub struct Tally {
    format: Format,
    records: usize,
    /// Records that are not JSON objects, counted whole in `other`.
    non_objects: usize,
    /// Σ over object records of max(keys − 1, 0): the commas between their entries.
    entry_commas: usize,
    /// Characters of records that are not objects, as JSON.
    other: usize,
    /// Keys in order of first appearance, as [`columns`] finds them.
    keys: Vec<(String, KeyTally)>,
}

#[derive(Debug, Default, Clone, Copy)]
struct KeyTally {
    /// Records carrying the key (a null value included).
    present: usize,
    /// Σ of the values as JSON.
    json: usize,
    /// Σ of the values as CSV cells, once escaped inside the JSON string that carries the CSV.
    csv: usize,
}

/// Length of `s` written as the inside of a JSON string (escapes counted, quotes not).
fn escaped(s: &str) -> usize {
    let mut c = Count(0);
    serde_json::to_writer(&mut c, s).expect("counting never fails");
    c.0 - 2
}

impl Tally {
    pub fn new(format: Format) -> Tally {
        Tally { format, records: 0, non_objects: 0, entry_commas: 0, other: 0, keys: vec![] }
    }

    pub fn add(&mut self, r: &Value) {
        self.records += 1;
        let Value::Object(m) = r else {
            self.non_objects += 1;
            self.other += chars_of(r);
            return;
        };
        self.entry_commas += m.len().saturating_sub(1);
        let format = self.format;
        for (k, v) in m {
            let t = self.key(k);
            match format {
                Format::Csv => {
                    t.csv += match v {
                        Value::String(s) if !s.contains([',', '"', '\n']) => escaped(s),
                        Value::Null => 0,
                        other => escaped(&csv_cell(Some(other))),
                    }
                }
                Format::Columns | Format::Records => t.json += chars_of(v),
            }
        }
    }

    /// The tally of key `k`, counted once more present (a key first seen goes last, as [`columns`] orders them).
    fn key(&mut self, k: &str) -> &mut KeyTally {
        let i = match self.keys.iter().position(|(x, _)| x == k) {
            Some(i) => i,
            None => {
                self.keys.push((k.to_string(), KeyTally::default()));
                self.keys.len() - 1
            }
        };
        let t = &mut self.keys[i].1;
        t.present += 1;
        t
    }

    /// [`Tally::add`] of a record read in place (engine/flat.rs): the same tally.
    pub fn add_read(&mut self, r: &Flat) {
        self.records += 1;
        let fields = r.fields();
        self.entry_commas += fields.len().saturating_sub(1);
        let format = self.format;
        for f in fields {
            let t = self.key(f.key);
            match format {
                Format::Csv => {
                    t.csv += match &f.value {
                        // Without an escape in its text, a string needs none inside the JSON either.
                        Scalar::Str(s) if !s.contains([',', '"', '\n']) => s.len(),
                        Scalar::Null => 0,
                        other => escaped(&csv_cell(Some(&other.to_value()))),
                    }
                }
                Format::Columns | Format::Records => t.json += scalar_chars(&f.value),
            }
        }
    }

    /// The records of `other` (tallied in the same format) follow these.
    pub fn append(&mut self, other: Tally) {
        self.records += other.records;
        self.entry_commas += other.entry_commas;
        self.other += other.other;
        self.non_objects += other.non_objects;
        for (k, t) in other.keys {
            match self.keys.iter_mut().find(|(x, _)| *x == k) {
                Some((_, mine)) => {
                    mine.present += t.present;
                    mine.json += t.json;
                    mine.csv += t.csv;
                }
                None => self.keys.push((k, t)),
            }
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Exactly `size(records, format)` of the records added.
    pub fn size(&self) -> usize {
        self.frame() + self.body()
    }

    /// What the rendering spends around the records: brackets, and the column names once.
    fn frame(&self) -> usize {
        let cols = || lead(self.keys.iter().map(|(k, _)| k.clone()).collect());
        match self.format {
            Format::Records => 2,
            Format::Columns => json!({"columns": cols(), "rows": []}).to_string().len(),
            Format::Csv => 2 + escaped(&cols().join(",")) + 2,
        }
    }

    /// What the records themselves take, without the frame: an answer holding these records (and
    /// maybe more) takes at least this much (engine/kept.rs judges by it whether raw can fit).
    pub fn body(&self) -> usize {
        let n = self.records;
        let commas = n.saturating_sub(1);
        match self.format {
            Format::Records => {
                // An object is its braces, its entries (`"key":value`) and the commas between them.
                let entries: usize = self.keys.iter().map(|(k, t)| t.present * (escaped(k) + 3) + t.json).sum();
                commas + self.other + 2 * (n - self.non_objects) + self.entry_commas + entries
            }
            Format::Columns => {
                let cols = lead(self.keys.iter().map(|(k, _)| k.clone()).collect()).len();
                let cells: usize = self.keys.iter().map(|(_, t)| t.json + 4 * (n - t.present)).sum();
                n * (2 + cols.saturating_sub(1)) + cells + commas
            }
            Format::Csv => {
                let cols = lead(self.keys.iter().map(|(k, _)| k.clone()).collect()).len();
                let cells: usize = self.keys.iter().map(|(_, t)| t.csv).sum();
                n * (cols.saturating_sub(1) + 2) + cells
            }
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

/// Significant digits a number an answer carries keeps: far more than any device measures, and
/// fewer than the 17 where a float's binary noise shows (`5023.9800000000005`).
const SIGNIFICANT: usize = 12;

/// Every number in `v` as a person would write it: no float noise (rounded to [`SIGNIFICANT`]
/// digits), and a whole number without a fraction (`11002`, not `11002.0`: a count reads as one).
/// Values that are already integers are left as they are.
pub fn tidy_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64() {
                *v = tidy_f64(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy_numbers),
        Value::Object(m) => m.values_mut().for_each(tidy_numbers),
        _ => {}
    }
}

fn tidy_f64(x: f64) -> Value {
    let r: f64 = format!("{x:.prec$e}", prec = SIGNIFICANT - 1).parse().unwrap_or(x);
    if r.fract() == 0.0 && r.abs() < 9.0e15 {
        json!(r as i64)
    } else {
        json!(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lose_their_float_noise_and_whole_ones_their_fraction() {
        // As a provider's JSON carries them (float noise and all).
        let mut v: Value = serde_json::from_str(
            r#"{"a": 5023.9800000000005, "b": [11002.0, 7.5600000000000005, -2.0999999999999996], "c": {"d": 0.00012345678901234},
                "e": 1733467200000.0, "f": 42, "g": "5.0", "h": 1.5, "i": -0.0}"#,
        )
        .unwrap();
        tidy_numbers(&mut v);
        assert_eq!(
            v,
            json!({"a": 5023.98, "b": [11002, 7.56, -2.1], "c": {"d": 0.000_123_456_789_012}, "e": 1_733_467_200_000i64, "f": 42, "g": "5.0",
                              "h": 1.5, "i": 0})
        );
        assert_eq!(v.to_string(), r#"{"a":5023.98,"b":[11002,7.56,-2.1],"c":{"d":0.000123456789012},"e":1733467200000,"f":42,"g":"5.0","h":1.5,"i":0}"#);
    }

    #[test]
    fn the_catalog_orders_columns_after_the_identity_ones() {
        let recs = vec![json!({"day": "d", "id": "x", "zone_five": 5, "zone_one": 1, "zone_zero": 0, "other": 9})];
        let order = ["day", "zone_zero", "zone_one", "zone_five"];
        assert_eq!(render_in(&recs, Format::Columns, &order)["columns"], json!(["day", "id", "zone_zero", "zone_one", "zone_five", "other"]));
        assert!(to_csv_in(&recs, &order).starts_with("day,id,zone_zero,zone_one,zone_five,other\n"));
    }

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
        let recs: Vec<Value> =
            (0..30).map(|i| json!({"timestamp": format!("t{i}"), "bpm": i, "x": if i % 2 == 0 { json!(null) } else { json!({"a": [1, 2]}) }})).collect();
        for f in [Format::Columns, Format::Records, Format::Csv] {
            assert_eq!(size(&recs, f), render(&recs, f).to_string().len(), "{f:?}");
            assert_eq!(size(&[], f), render(&[], f).to_string().len(), "{f:?} empty");
        }
    }

    #[test]
    fn characters_of_a_value_are_what_serde_json_writes() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(9),
            json!(10),
            json!(-1),
            json!(-10),
            json!(99),
            json!(100),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(0.5),
            json!(-1.25e-7),
            json!(1e300),
            json!(""),
            json!("plain"),
            json!("quote\" back\\ nl\n tab\t bell\u{7}"),
            json!("é ✓ \u{7f}"),
            json!([1, "a"]),
            json!({"k": {"n": null}}),
        ];
        for v in values {
            assert_eq!(chars_of(&v), v.to_string().len(), "{v}");
        }
    }

    #[test]
    fn a_tally_added_up_across_windows_is_the_exact_size() {
        // Escapes, quotes, commas, newlines, non-ASCII, nulls, nesting, keys that come and go, a non-object.
        let recs: Vec<Value> = (0..40)
            .map(|i| match i % 7 {
                0 => json!({"timestamp": format!("t{i}"), "bpm": i}),
                1 => json!({"timestamp": format!("t{i}"), "source": "a,\"b\"\nc", "x": null}),
                2 => json!({"id": format!("é{i}"), "day": "2026-06-01", "nested": {"a": [1, 2.5, "\\"]}}),
                3 => json!({}),
                4 => json!({"bpm": -1.25e-3, "tab": "\t\u{1}"}),
                5 => json!("not an object"),
                _ => json!({"timestamp": format!("t{i}"), "flag": true, "note": "plain"}),
            })
            .collect();
        for f in [Format::Columns, Format::Records, Format::Csv] {
            for cut in [0, 1, 13, 40] {
                let (mut a, mut b) = (Tally::new(f), Tally::new(f));
                recs[..cut].iter().for_each(|r| a.add(r));
                recs[cut..].iter().for_each(|r| b.add(r));
                a.append(b);
                assert_eq!(a.size(), size(&recs, f), "{f:?}, windows cut at {cut}");
            }
            assert_eq!(Tally::new(f).size(), size(&[], f), "{f:?} empty");
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
