//! One streaming pass over an export (reference §1, §2, §7): the zip opened in place (its central
//! directory read, the health XML found by its content since its name is localised, and inflated
//! as it is read), or a bare XML file; quick-xml pulls one element at a time and the index keeps
//! columns of numbers. The DTD is skipped as one opaque token (iOS 16 wrote a broken one), nothing
//! is extracted and nothing is written.
use super::index::{Builder, Index, Pending, RawValue, Summary, Workout};
use quick_xml::events::{BytesStart, Event};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an export could not be read, naming the file.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    #[error("{file} could not be opened: {why}")]
    Open { file: String, why: String },
    #[error("{file} is not an Apple Health export: {why}. Choose the export.zip the Health app made (Profile → Export All Health Data), or its export.xml")]
    NotAnExport { file: String, why: String },
    #[error("{file} is a damaged zip ({why}): copy the export again, or export it again from the Health app")]
    Damaged { file: String, why: String },
    #[error("{file} ends before the export does ({why}): the file was cut (a copy not finished?). Copy the export again")]
    Cut { file: String, why: String },
}

/// Bytes of the file read so far, for progress while the index is built.
#[derive(Default)]
pub struct Progress {
    pub read: AtomicU64,
    /// The tests' setting (`VITALS_APPLE_HEALTH_TEST_READ_S`): the read of a file of this many
    /// bytes is stretched to at least this long, so a call can arrive before the index is ready.
    pub stretch: Option<(std::time::Duration, u64)>,
}

/// A reader that counts the bytes it hands on.
struct Counting<'a, R> {
    inner: R,
    progress: &'a Progress,
}

impl<R: std::io::Seek> std::io::Seek for Counting<'_, R> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.read.fetch_add(n as u64, Ordering::Relaxed);
        if let Some((d, size)) = self.progress.stretch {
            std::thread::sleep(d.mul_f64(n as f64 / size.max(1) as f64));
        }
        Ok(n)
    }
}

/// What the file turned out to hold: the XML's own name inside the zip, if a zip.
pub struct Found {
    pub entry: Option<String>,
}

/// Read the export at `path` into an index.
pub fn read_file(path: &Path, progress: &Progress) -> Result<(Index, Found), ReadError> {
    let file = path.display().to_string();
    let open = |e: std::io::Error| ReadError::Open { file: file.clone(), why: e.to_string() };
    let mut f = std::fs::File::open(path).map_err(open)?;
    let mut magic = [0u8; 4];
    let n = f.read(&mut magic).map_err(open)?;
    drop(f);
    if n == 4 && &magic == b"PK\x03\x04" {
        return read_zip(path, &file, progress);
    }
    let f = std::fs::File::open(path).map_err(open)?;
    let counted = Counting { inner: f, progress };
    let index = read_xml(BufReader::with_capacity(1 << 20, counted), &file)?;
    Ok((index, Found { entry: None }))
}

/// The health XML inside a zip, found by its first bytes (its name is the phone's language's).
fn read_zip(path: &Path, file: &str, progress: &Progress) -> Result<(Index, Found), ReadError> {
    let damaged = |e: zip::result::ZipError| ReadError::Damaged { file: file.into(), why: e.to_string() };
    let f = std::fs::File::open(path).map_err(|e| ReadError::Open { file: file.into(), why: e.to_string() })?;
    let mut z = zip::ZipArchive::new(Counting { inner: f, progress }).map_err(damaged)?;
    let entry = find_entry(&mut z)
        .map_err(damaged)?
        .ok_or_else(|| ReadError::NotAnExport { file: file.into(), why: "the zip holds no Health XML (no .xml file starting with <HealthData>)".into() })?;
    drop(z);
    // The entry is inflated in a second thread while this one parses: two cores, one pass.
    let index = std::thread::scope(|sc| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(4);
        sc.spawn(move || inflate(path, entry.0, progress, &tx));
        read_xml(Chunks { rx, buf: vec![], pos: 0 }, file)
    })
    .map_err(|e| match e {
        // The zip crate checks the entry's CRC at its end: a failure there is a damaged zip.
        ReadError::Cut { why, .. } | ReadError::NotAnExport { why, .. } if why.contains("checksum") || why.contains("Invalid") => {
            ReadError::Damaged { file: file.into(), why }
        }
        e => e,
    })?;
    Ok((index, Found { entry: Some(entry.1) }))
}

/// The zip's entry `i` inflated into chunks of 1 MB sent to the parser; an error is sent as read.
/// Ends when the parser stops asking (the channel closed).
fn inflate(path: &Path, i: usize, progress: &Progress, tx: &std::sync::mpsc::SyncSender<std::io::Result<Vec<u8>>>) {
    let opened = std::fs::File::open(path).and_then(|f| zip::ZipArchive::new(Counting { inner: f, progress }).map_err(std::io::Error::other));
    let mut z = match opened {
        Ok(z) => z,
        Err(e) => {
            let _ = tx.send(Err(e));
            return;
        }
    };
    let mut e = match z.by_index(i) {
        Ok(e) => e,
        Err(e) => {
            let _ = tx.send(Err(std::io::Error::other(e)));
            return;
        }
    };
    loop {
        let mut chunk = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < chunk.len() {
            match e.read(&mut chunk[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => {
                    let _ = tx.send(Err(err));
                    return;
                }
            }
        }
        if got == 0 {
            return;
        }
        chunk.truncate(got);
        if tx.send(Ok(chunk)).is_err() {
            return;
        }
    }
}

/// The inflated chunks as one stream, read in place (no copy into another buffer).
struct Chunks {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let have = self.fill_buf()?;
        let n = have.len().min(out.len());
        out[..n].copy_from_slice(&have[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Chunks {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos >= self.buf.len() {
            match self.rx.recv() {
                Ok(Ok(b)) => (self.buf, self.pos) = (b, 0),
                Ok(Err(e)) => return Err(e),
                // The inflating thread is done: the end of the entry.
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.buf[self.pos..])
    }
    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

/// The index and name of the zip's health XML: an `.xml` entry whose first bytes open
/// `HealthData` (never the clinical document beside it).
fn find_entry<R: Read + std::io::Seek>(z: &mut zip::ZipArchive<R>) -> Result<Option<(usize, String)>, zip::result::ZipError> {
    for i in 0..z.len() {
        let mut e = z.by_index(i)?;
        let name = String::from_utf8_lossy(e.name_raw()).into_owned();
        if !name.to_lowercase().ends_with(".xml") {
            continue;
        }
        let mut head = vec![0u8; 16 * 1024];
        let mut got = 0;
        while got < head.len() {
            match e.read(&mut head[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        if is_health(&head[..got]) {
            return Ok(Some((i, name)));
        }
    }
    Ok(None)
}

/// Whether these first bytes are Apple Health's XML.
pub fn is_health(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    (text.contains("<!DOCTYPE HealthData") || text.contains("<HealthData")) && !text.contains("<ClinicalDocument")
}

/// One pass over the XML, every element read from its attributes.
pub fn read_xml<R: BufRead>(src: R, file: &str) -> Result<Index, ReadError> {
    let mut reader = quick_xml::Reader::from_reader(src);
    reader.config_mut().check_end_names = false;
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut b = Builder::default();
    let mut stack: Vec<Tag> = Vec::with_capacity(8);
    let mut pending: Option<Pending> = None;
    let mut workout: Option<Workout> = None;
    let mut seen_root = false;
    let mut closed_root = false;
    let cut = |why: String| ReadError::Cut { file: file.into(), why };
    loop {
        let ev = match reader.read_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) if seen_root => return Err(cut(format!("{e} at byte {}", reader.error_position()))),
            Err(e) => return Err(ReadError::NotAnExport { file: file.into(), why: format!("{e} at byte {}", reader.error_position()) }),
        };
        match ev {
            Event::Start(e) => {
                let tag = Tag::of(e.local_name().as_ref().as_bytes());
                if tag == Tag::HealthData {
                    seen_root = true;
                    b.locale = attr(&e, b"locale");
                }
                start(&mut b, &e, tag, &stack, &mut pending, &mut workout, true);
                stack.push(tag);
            }
            Event::Empty(e) => {
                let tag = Tag::of(e.local_name().as_ref().as_bytes());
                if tag == Tag::HealthData {
                    seen_root = true;
                    closed_root = true;
                }
                start(&mut b, &e, tag, &stack, &mut pending, &mut workout, false);
            }
            Event::End(_) => match stack.pop() {
                Some(Tag::Record) => {
                    if let Some(p) = pending.take() {
                        b.push(p);
                    }
                }
                Some(Tag::Workout) => {
                    if let Some(w) = workout.take() {
                        b.workout(w);
                    }
                }
                Some(Tag::HealthData) => closed_root = true,
                _ => {}
            },
            Event::Eof => break,
            // The DTD (broken in some iOS versions), text, comments: nothing vitals reads.
            _ => {}
        }
        buf.clear();
    }
    if !seen_root {
        return Err(ReadError::NotAnExport { file: file.into(), why: "it holds no <HealthData> element".into() });
    }
    if !closed_root {
        return Err(cut("the file stops before </HealthData>".into()));
    }
    Ok(b.finish())
}

/// The elements vitals reads, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    HealthData,
    ExportDate,
    Record,
    Correlation,
    Workout,
    WorkoutActivity,
    WorkoutStatistics,
    WorkoutRoute,
    FileReference,
    MetadataEntry,
    ActivitySummary,
    Other,
}

impl Tag {
    fn of(name: &[u8]) -> Tag {
        match name {
            b"HealthData" => Tag::HealthData,
            b"ExportDate" => Tag::ExportDate,
            b"Record" => Tag::Record,
            b"Correlation" => Tag::Correlation,
            b"Workout" => Tag::Workout,
            b"WorkoutActivity" => Tag::WorkoutActivity,
            b"WorkoutStatistics" => Tag::WorkoutStatistics,
            b"WorkoutRoute" => Tag::WorkoutRoute,
            b"FileReference" => Tag::FileReference,
            b"MetadataEntry" => Tag::MetadataEntry,
            b"ActivitySummary" => Tag::ActivitySummary,
            _ => Tag::Other,
        }
    }
}

/// One attribute's value, unescaped (device strings and units carry `&lt;`).
fn attr(e: &BytesStart, key: &[u8]) -> Option<String> {
    let a = e.attributes().with_checks(false).flatten().find(|a| a.key.as_ref().as_bytes() == key)?;
    match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
        Ok(v) => Some(v.into_owned()),
        Err(_) => Some(a.value.clone().into_owned()),
    }
}

/// Every attribute of an element, unescaped, in one walk.
fn attrs<'a>(e: &'a BytesStart, mut each: impl FnMut(&[u8], std::borrow::Cow<'a, [u8]>)) {
    use std::borrow::Cow;
    for a in e.attributes().with_checks(false).flatten() {
        let v: Cow<'a, str> = if a.value.contains('&') {
            match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                Ok(s) => Cow::Owned(s.into_owned()),
                Err(_) => a.value.clone(),
            }
        } else {
            a.value.clone()
        };
        let v = match v {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        };
        each(a.key.as_ref().as_bytes(), v);
    }
}

#[allow(clippy::too_many_arguments)]
fn start(b: &mut Builder, e: &BytesStart, tag: Tag, stack: &[Tag], pending: &mut Option<Pending>, workout: &mut Option<Workout>, open: bool) {
    let parent = stack.last().copied();
    match tag {
        Tag::ExportDate => b.export_date = attr(e, b"value"),
        // A Correlation's Records are repeated at top level (the DTD says so): read once, there.
        Tag::Record if parent == Some(Tag::Correlation) => {}
        Tag::Record => {
            let p = record(b, e);
            match (p, open) {
                (Some(p), true) => *pending = Some(p),
                (Some(p), false) => b.push(p),
                (None, _) => {}
            }
        }
        Tag::MetadataEntry => {
            if attr(e, b"key").as_deref() != Some("HKTimeZone") {
                return;
            }
            let zone = attr(e, b"value").unwrap_or_default();
            match parent {
                Some(Tag::Record) => {
                    if let Some(p) = pending.as_mut() {
                        p.zone = Some(zone);
                    }
                }
                Some(Tag::Workout) => {
                    if let Some(w) = workout.as_mut() {
                        w.zone = Some(zone);
                    }
                }
                _ => {}
            }
        }
        Tag::Workout => *workout = Some(workout_of(b, e)),
        Tag::WorkoutStatistics => {
            if let Some(w) = workout.as_mut() {
                statistic(w, e, parent == Some(Tag::WorkoutActivity));
            }
        }
        Tag::FileReference if parent == Some(Tag::WorkoutRoute) => {
            if let (Some(w), Some(p)) = (workout.as_mut(), attr(e, b"path")) {
                w.routes.push(p);
            }
        }
        Tag::ActivitySummary => {
            let mut s = Summary::default();
            attrs(e, |k, v| {
                let text = std::str::from_utf8(&v).unwrap_or("");
                let num = text.parse::<f64>().ok();
                match k {
                    b"dateComponents" => s.day = jiff::civil::Date::strptime("%Y-%m-%d", text).ok(),
                    b"activeEnergyBurned" => s.move_value = num,
                    b"activeEnergyBurnedGoal" => s.move_goal = num,
                    b"activeEnergyBurnedUnit" => s.move_unit = text.to_string(),
                    b"appleExerciseTime" => s.exercise_min = num,
                    b"appleExerciseTimeGoal" => s.exercise_goal_min = num,
                    b"appleStandHours" => s.stand_h = num,
                    b"appleStandHoursGoal" => s.stand_goal_h = num,
                    _ => {}
                }
            });
            b.summary(s);
        }
        _ => {}
    }
}

/// A top-level Record's attributes, or None when it has no type or no readable times.
fn record(b: &mut Builder, e: &BytesStart) -> Option<Pending> {
    let mut p = Pending::default();
    let mut ok = (false, false, false);
    attrs(e, |k, v| match k {
        b"type" => {
            p.ty = b.types.id(&v);
            ok.0 = true;
        }
        b"sourceName" => p.src = b.sources.id(&v),
        b"unit" => p.unit = b.units.id(&v),
        b"value" => {
            p.value = match std::str::from_utf8(&v).ok().and_then(|s| s.parse::<f64>().ok()) {
                Some(x) => RawValue::Number(x),
                None => RawValue::Category(b.categories.id(&v)),
            }
        }
        b"startDate" => {
            if let Some((t, o)) = stamp(&v) {
                p.start = t;
                p.offset_min = o;
                ok.1 = true;
            }
        }
        b"endDate" => {
            if let Some((t, _)) = stamp(&v) {
                p.end = t;
                ok.2 = true;
            }
        }
        _ => {}
    });
    if !(ok.0 && ok.1 && ok.2) {
        b.unreadable += 1;
        return None;
    }
    Some(p)
}

fn workout_of(b: &mut Builder, e: &BytesStart) -> Workout {
    let mut w = Workout::default();
    let mut total = (None, String::new(), None, String::new());
    attrs(e, |k, v| {
        let text = std::str::from_utf8(&v).unwrap_or("");
        match k {
            b"workoutActivityType" => w.kind = text.trim_start_matches("HKWorkoutActivityType").to_string(),
            b"duration" => w.duration = text.parse().ok(),
            b"durationUnit" => w.duration_unit = text.to_string(),
            b"totalDistance" => total.0 = text.parse::<f64>().ok(),
            b"totalDistanceUnit" => total.1 = text.to_string(),
            b"totalEnergyBurned" => total.2 = text.parse::<f64>().ok(),
            b"totalEnergyBurnedUnit" => total.3 = text.to_string(),
            b"sourceName" => w.src = b.sources.id(&v),
            b"startDate" => {
                if let Some((t, o)) = stamp(&v) {
                    w.start = t;
                    w.offset_min = o;
                }
            }
            b"endDate" => w.end = stamp(&v).map(|s| s.0).unwrap_or(0),
            _ => {}
        }
    });
    // Exports before iOS 16 carry the totals as attributes; later ones in WorkoutStatistics.
    w.distance_km = total.0.map(|d| super::units::convert(d, &total.1).0);
    w.energy_kcal = total.2.map(|k| super::units::convert(k, &total.3).0);
    w
}

/// A WorkoutStatistics child: the workout's own, else (newer exports may carry them only there)
/// its activity's, never both added.
fn statistic(w: &mut Workout, e: &BytesStart, in_activity: bool) {
    let (mut ty, mut unit, mut sum, mut avg, mut min, mut max) = (String::new(), String::new(), None, None, None, None);
    attrs(e, |k, v| {
        let text = std::str::from_utf8(&v).unwrap_or("");
        match k {
            b"type" => ty = text.to_string(),
            b"unit" => unit = text.to_string(),
            b"sum" => sum = text.parse::<f64>().ok(),
            b"average" => avg = text.parse::<f64>().ok(),
            b"minimum" => min = text.parse::<f64>().ok(),
            b"maximum" => max = text.parse::<f64>().ok(),
            _ => {}
        }
    });
    let conv = |x: Option<f64>| x.map(|x| super::units::convert(x, &unit).0);
    let slot = if in_activity { &mut w.from_activity } else { &mut w.own };
    match ty.trim_start_matches("HKQuantityTypeIdentifier") {
        "ActiveEnergyBurned" => slot.energy_kcal = slot.energy_kcal.or(conv(sum)),
        t if t.starts_with("Distance") => slot.distance_km = slot.distance_km.or(conv(sum)),
        "HeartRate" => {
            slot.hr = Some((conv(avg), conv(min), conv(max)));
        }
        _ => {}
    }
}

/// `yyyy-MM-dd HH:mm:ss ±hhmm` (reference §3): Unix seconds and the offset in minutes.
pub fn stamp(s: &[u8]) -> Option<(i64, i16)> {
    if s.len() != 25 || s[4] != b'-' || s[7] != b'-' || s[10] != b' ' || s[13] != b':' || s[16] != b':' || s[19] != b' ' {
        return None;
    }
    let n = |a: usize, b: usize| -> Option<i64> {
        let mut v = 0i64;
        for &c in &s[a..b] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        Some(v)
    };
    let (y, mo, d, h, mi, se) = (n(0, 4)?, n(5, 7)?, n(8, 10)?, n(11, 13)?, n(14, 16)?, n(17, 19)?);
    let sign = match s[20] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let off = sign * (n(21, 23)? * 60 + n(23, 25)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 || off.abs() > 18 * 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((days * 86_400 + h * 3600 + mi * 60 + se - off * 60, off as i16))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_its_instant_and_its_offset() {
        let (t, o) = stamp(b"2024-05-04 08:05:12 -0400").unwrap();
        assert_eq!(t, jiff::Timestamp::from_second(t).unwrap().as_second());
        assert_eq!(jiff::Timestamp::from_second(t).unwrap().to_string(), "2024-05-04T12:05:12Z");
        assert_eq!(o, -240);
        assert!(stamp(b"2024-05-04T08:05:12Z").is_none());
        assert!(stamp(b"2024-13-04 08:05:12 -0400").is_none());
    }
}

#[cfg(test)]
mod zip_tests {
    use super::super::generate::{write_zip, Plan};

    /// The XML is found inside the zip by its content, whatever its (localised) name.
    #[test]
    fn the_health_xml_is_found_in_a_zip_by_its_content() {
        let plan = Plan::new(jiff::civil::date(2026, 3, 1), 2, "Europe/Oslo");
        let zip = write_zip(&plan, "eksport.xml", std::io::Cursor::new(vec![])).unwrap().into_inner();
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
        let found = super::find_entry(&mut z).unwrap().map(|f| f.1);
        assert_eq!(found.as_deref(), Some("apple_health_export/eksport.xml"));
    }
}
