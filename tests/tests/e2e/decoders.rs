//! Decoders under hostile bodies (issue 22): every provider's page decoder and its rules over
//! merged records, fed each of its reference samples (`tests/samples/<provider>/`, copied from
//! the reference so a clean checkout has them), structural mutations of them (a field's value
//! replaced by each wrong JSON type, a key removed, an unknown key added), cut and byte-flipped
//! bodies, and arbitrary text. Whatever arrives: no panic, and a refusal is words
//! that say what was wrong (named, short), never a debug dump.
use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use vitals::catalog::CollectionSpec;
use vitals::providers::{PageAt, PageError, Provider};

/// A provider's reference bodies: the `response` of a `{_meta, response}` sample, else the file.
fn samples(provider: &str) -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(provider);
    let mut out = vec![];
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                let body = match v {
                    Value::Object(mut m) if m.contains_key("_meta") => m.remove("response").unwrap_or(Value::Null),
                    v => v,
                };
                out.push((p.file_name().unwrap().to_string_lossy().into_owned(), body));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 5, "{provider}: the reference samples are missing from tests/samples");
    out
}

/// Every path to a value in `v`, up to `limit` of them (a heart-rate page has thousands).
fn paths(v: &Value, limit: usize) -> Vec<Vec<Value>> {
    fn walk(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>, limit: usize) {
        if out.len() >= limit {
            return;
        }
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    at.push(json!(k));
                    walk(x, at, out, limit);
                    at.pop();
                }
            }
            // The first three elements of an array: the rest are the same shape.
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate().take(3) {
                    at.push(json!(i));
                    walk(x, at, out, limit);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = vec![];
    walk(v, &mut vec![], &mut out, limit);
    out
}

fn at_path<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        Value::String(k) => v.get_mut(k.as_str()),
        Value::Number(i) => v.get_mut(i.as_u64()? as usize),
        _ => None,
    })
}

/// What a field might be instead of what the docs say.
fn wrong_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!("85"),
        json!(""),
        json!("ünïcødé 👍\u{202e}"),
        json!(-1),
        json!(0),
        json!(1e300),
        json!(-9_223_372_036_854_775_808i64),
        json!(18_446_744_073_709_551_615u64),
        json!(2.5),
        json!(true),
        json!({}),
        json!([]),
        json!([[[[[]]]]]),
        json!({"unknown": 1}),
        json!("9999-12-31T23:59:59+14:00"),
        json!("0000-01-01"),
        json!("2026-02-30"),
    ]
}

/// Structural mutations of a body: each path's value replaced by each wrong value, each key
/// removed, an unknown key added to each object.
fn mutations(body: &Value) -> Vec<Value> {
    let mut out = vec![];
    for path in paths(body, 400) {
        for w in wrong_values() {
            let mut m = body.clone();
            if let Some(x) = at_path(&mut m, &path) {
                *x = w;
                out.push(m);
            }
        }
        if let Some((last, parent)) = path.split_last() {
            let mut m = body.clone();
            match (at_path(&mut m, parent), last) {
                (Some(Value::Object(o)), Value::String(k)) => {
                    o.remove(k.as_str());
                }
                (Some(Value::Array(a)), Value::Number(i)) => {
                    a.remove(i.as_u64().unwrap() as usize);
                }
                _ => continue,
            }
            out.push(m);
        }
        let mut m = body.clone();
        if let Some(Value::Object(o)) = at_path(&mut m, &path) {
            o.insert("an_unknown_field".into(), json!({"nested": [1, "two", null]}));
            out.push(m);
        }
    }
    out
}

/// A small deterministic generator (xorshift): byte damage is the same in every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Byte-level damage: cut at many places, bytes flipped, bytes inserted, and arbitrary text.
fn damaged(text: &str, rng: &mut Rng) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = vec![String::new(), "null".into(), "[]".into(), "{}".into(), "<html><body>502 Bad Gateway</body></html>".into()];
    for i in 0..24 {
        let cut = b.len() * i / 24;
        out.push(String::from_utf8_lossy(&b[..cut]).into_owned());
    }
    for _ in 0..24 {
        let mut v = b.to_vec();
        for _ in 0..3 {
            if v.is_empty() {
                break;
            }
            let i = rng.below(v.len());
            const NOISE: &[u8] = b"{}[]\",:0-9eE.ntfu\\ ";
            v[i] = NOISE[rng.below(NOISE.len())];
        }
        out.push(String::from_utf8_lossy(&v).into_owned());
    }
    for _ in 0..8 {
        let n = rng.below(200);
        out.push((0..n).map(|_| char::from_u32(rng.below(0x2FFF) as u32).unwrap_or('?')).collect());
    }
    out
}

fn at(token: Option<&str>) -> PageAt {
    PageAt {
        zone: vitals::time::Zone::parse("-06:00").unwrap(),
        token: token.map(str::to_string),
        options: Map::new(),
        record: None,
        window: vitals::providers::Window::Unbounded,
    }
}

/// One body through one collection's decoder and the provider's rules: panics caught and
/// returned as a failure, a refusal checked for words.
fn feed(p: &dyn Provider, c: &'static CollectionSpec, body: &str, token: Option<&str>) -> Result<(), String> {
    let who = format!("{}.{}", p.spec().name, c.name);
    let r = catch_unwind(AssertUnwindSafe(|| match p.parse_page(c, body, &at(token)) {
        Ok(page) => {
            let n = page.records.len();
            let finished = p.finish(c, page.records, &Map::new());
            // The rules may merge (Withings' groups of one weigh-in) but never make records up.
            (finished.records.len() <= n).then_some(()).ok_or(format!("{who}: {n} records became {}", finished.records.len()))
        }
        Err(PageError::Transient(e) | PageError::Refused(e) | PageError::Forbidden(e)) => {
            if e.trim().is_empty() || e.len() > 2_000 {
                return Err(format!("{who}: a refusal of {} characters: {e:.200}", e.len()));
            }
            Ok(())
        }
        Err(PageError::RateLimited { detail, .. }) if detail.trim().is_empty() => Err(format!("{who}: a rate limit said in no words")),
        Err(_) => Ok(()),
    }));
    match r {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(format!("{who} panicked on {:.300}: {msg}", body))
        }
    }
}

/// `f` over `items` on every core, the results in the items' order. The fuzz only computes (it
/// waits on nothing: 29 voluntary context switches in a run), so its one thread was its time;
/// every case is still fed, each to the same collection, and its failures said in the same order.
fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, items.len().max(1));
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = vec![];
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(x) = items.get(i) else { break mine };
                        mine.push((i, f(x)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn every_decoder_survives_every_mutation_of_its_reference_samples() {
    let mut rng = Rng(0x5eed_cafe_f00d_d00d);
    let (mut cases, mut failures) = (0usize, Vec::<String>::new());
    let mut per_provider = vec![];
    for p in vitals::providers::all(&Default::default()) {
        let spec = p.spec();
        // By namespace: Garmin's folder holds the reference samples of both its connections.
        let bodies = samples(spec.namespace);
        // Every collection sees each sample whole and damaged; the structural mutations (tens of
        // thousands) are dealt out, each to two collections, so the run stays short.
        let mutated: Vec<String> = on_every_core(&bodies, |(_, body)| mutations(body).iter().map(Value::to_string).collect::<Vec<_>>()).concat();
        let mut whole: Vec<String> = vec![];
        for (_, body) in &bodies {
            let text = body.to_string();
            whole.extend(damaged(&text, &mut rng));
            whole.push(text);
        }
        let n = spec.collections.len();
        let collections: Vec<(usize, &'static CollectionSpec)> = spec.collections.iter().enumerate().collect();
        let fed = on_every_core(&collections, |&(ci, c)| {
            let dealt = mutated.iter().enumerate().filter(|(i, _)| i % n == ci || (i * 7 + 3) % n == ci).map(|(_, t)| t);
            // Each asked as a first and as a later page.
            let (mut count, mut failed) = (0usize, vec![]);
            for (i, t) in whole.iter().chain(dealt).enumerate() {
                let token = (i % 3 == 0).then_some("40");
                count += 1;
                if let Err(e) = feed(p.as_ref(), c, t, token) {
                    failed.push(e);
                }
            }
            (count, failed)
        });
        let before = cases;
        for (count, failed) in fed {
            cases += count;
            failures.extend(failed);
        }
        per_provider.push(format!("{} {} bodies", spec.name, cases - before));
    }
    eprintln!("decoders: {cases} bodies decoded ({}), {} failures", per_provider.join(", "), failures.len());
    assert!(
        failures.is_empty(),
        "{} of {cases} bodies failed; the first ones:\n{}",
        failures.len(),
        failures.iter().take(15).cloned().collect::<Vec<_>>().join("\n")
    );
}
