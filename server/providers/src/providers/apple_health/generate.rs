//! Exports written as the Health app writes them (reference §1–§5), for the built-in sample person
//! and for the tests and the bench: a synthetic person with an Apple Watch and an iPhone whose
//! steps, distance and flights overlap, other apps writing into Health (Oura's sleep, Withings'
//! scale, a blood-pressure cuff), the units a person chose (lb, mi, kJ, °F, mmol/L), a trip
//! across time zones (instants stamped in the exporting phone's zone, `HKTimeZone` where Apple
//! writes it), exact duplicates and a record ending before it starts. Deterministic: the same
//! plan is the same bytes. Every value is made up.
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::ToSpan;
use std::io::Write;

pub const WATCH: &str = "Sam’s Apple Watch";
pub const PHONE: &str = "Sam’s iPhone";
pub const OURA_APP: &str = "Oura";
pub const SCALE_APP: &str = "Withings";
pub const CUFF_APP: &str = "OMRON connect";
pub const BROKEN_APP: &str = "SyncPal";
/// A sleep-tracking app writing a longer night over the Watch's (`Plan::sleep_app`).
pub const SLEEP_APP: &str = "AutoSleep";
/// Minutes asleep in the sleep app's night (the Watch's: 410).
pub const SLEEP_APP_ASLEEP_MIN: i64 = 440;
const WATCH_DEVICE: &str = "&lt;&lt;HKDevice: 0x3027a3d90&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.4&gt;";
const PHONE_DEVICE: &str = "&lt;&lt;HKDevice: 0x3027a2b10&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.4&gt;";

/// What an export holds.
#[derive(Debug, Clone)]
pub struct Plan {
    pub first: Date,
    pub days: u32,
    /// The person's home zone, which is also the exporting phone's.
    pub zone: String,
    /// Heart-rate samples a day from the Watch.
    pub hr_per_day: u32,
    /// US units (lb, mi, °F, kJ for energy, mmol/L for glucose) instead of metric ones.
    pub imperial: bool,
    /// The traps: the iPhone and other apps overlapping the Watch, duplicates, a record ending
    /// before it starts, a trip.
    pub traps: bool,
    /// Days `[from, to)` of the plan (0-based) spent in Europe/Paris.
    pub travel: Option<(u32, u32)>,
    /// iOS 16's broken DTD instead of a sound one.
    pub broken_dtd: bool,
    /// Nothing after this instant (a sample person's day not over yet).
    pub until: Option<i64>,
    /// The app writing the blood-pressure readings (another provider's, to test copies).
    pub cuff: &'static str,
    /// A sleep app ([`SLEEP_APP`]) writes its own night over the Watch's too.
    pub sleep_app: bool,
}

impl Plan {
    pub fn new(first: Date, days: u32, zone: &str) -> Plan {
        Plan {
            first,
            days,
            zone: zone.into(),
            hr_per_day: 96,
            imperial: false,
            traps: true,
            travel: None,
            broken_dtd: false,
            until: None,
            cuff: CUFF_APP,
            sleep_app: false,
        }
    }
    fn tz(&self) -> TimeZone {
        TimeZone::get(&self.zone).unwrap_or(TimeZone::UTC)
    }
    /// The zone the person is in on day `i` of the plan.
    fn zone_on(&self, i: u32) -> (TimeZone, Option<&'static str>) {
        match self.travel {
            Some((a, b)) if (a..b).contains(&i) => (TimeZone::get("Europe/Paris").unwrap_or(TimeZone::UTC), Some("Europe/Paris")),
            _ => (self.tz(), None),
        }
    }
}

/// A stable number per day and purpose.
fn h(d: Date, salt: u64) -> u64 {
    super::super::day_hash(d, salt)
}

/// One stamp as Apple writes it: the instant in the exporting phone's zone (`±hhmm`).
fn stamp(t: i64, export: &TimeZone) -> String {
    let z = jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH).to_zoned(export.clone());
    z.strftime("%Y-%m-%d %H:%M:%S %z").to_string()
}

/// Unix seconds of a local wall time on day `d` in `tz`.
fn at(d: Date, h: i8, m: i8, tz: &TimeZone) -> i64 {
    DateTime::from_parts(d, jiff::civil::time(h, m, 0, 0)).to_zoned(tz.clone()).map(|z| z.timestamp().as_second()).unwrap_or(0)
}

struct Out<'a, W: Write> {
    w: &'a mut W,
    export: TimeZone,
    until: Option<i64>,
}

impl<W: Write> Out<'_, W> {
    #[allow(clippy::too_many_arguments)]
    fn record(&mut self, ty: &str, src: &str, unit: Option<&str>, start: i64, end: i64, value: &str, zone: Option<&str>) -> std::io::Result<()> {
        if self.until.is_some_and(|u| start.max(end) > u) {
            return Ok(());
        }
        let device = match src {
            WATCH => format!(" device=\"{WATCH_DEVICE}\""),
            PHONE => format!(" device=\"{PHONE_DEVICE}\""),
            _ => String::new(),
        };
        let unit = unit.map(|u| format!(" unit=\"{u}\"")).unwrap_or_default();
        let value = if value.is_empty() { String::new() } else { format!(" value=\"{value}\"") };
        let (s, e) = (stamp(start, &self.export), stamp(end, &self.export));
        let head = format!(
            "<Record type=\"{ty}\" sourceName=\"{src}\" sourceVersion=\"10.4\"{device}{unit} creationDate=\"{e}\" startDate=\"{s}\" endDate=\"{e}\"{value}"
        );
        match zone {
            Some(z) => writeln!(self.w, " {head}>\n  <MetadataEntry key=\"HKTimeZone\" value=\"{z}\"/>\n </Record>"),
            None => writeln!(self.w, " {head}/>"),
        }
    }
}

const SOUND_DTD: &str = "<!DOCTYPE HealthData [\n<!-- HealthKit Export Version: 14 -->\n<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>\n<!ATTLIST HealthData\n  locale CDATA #REQUIRED\n>\n<!ELEMENT ExportDate EMPTY>\n<!ATTLIST ExportDate\n  value CDATA #REQUIRED\n>\n]>\n";
/// iOS 16's DTD: an ATTLIST left open and a stray `>` (reference §2.1).
const BROKEN_DTD: &str = "<!DOCTYPE HealthData [\n<!-- HealthKit Export Version: 12 -->\n<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>\n<!ATTLIST VisionPrescription\n  type CDATA #REQUIRED\n  dateIssued CDATA #REQUIRED\n<!ELEMENT ExportDate EMPTY>\n>\n]>\n";

/// The whole `export.xml` of `plan`.
pub fn write_xml<W: Write>(plan: &Plan, w: &mut W) -> std::io::Result<()> {
    let export = plan.tz();
    let last = plan.first.checked_add((plan.days as i64).days()).unwrap_or(plan.first);
    let exported = plan.until.unwrap_or_else(|| at(last, 9, 0, &export));
    write!(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}", if plan.broken_dtd { BROKEN_DTD } else { SOUND_DTD })?;
    writeln!(w, "<HealthData locale=\"{}\">", if plan.imperial { "en_US" } else { "en_GB" })?;
    writeln!(w, " <ExportDate value=\"{}\"/>", stamp(exported, &export))?;
    writeln!(w, " <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1988-03-02\" HKCharacteristicTypeIdentifierBiologicalSex=\"HKBiologicalSexNotSet\"/>")?;
    let mut o = Out { w, export: export.clone(), until: plan.until };
    for i in 0..plan.days {
        let d = plan.first.checked_add((i as i64).days()).unwrap_or(plan.first);
        day(plan, i, d, &mut o)?;
    }
    for i in 0..plan.days {
        let d = plan.first.checked_add((i as i64).days()).unwrap_or(plan.first);
        pressure(plan, d, &mut o)?;
    }
    for i in 0..plan.days {
        let d = plan.first.checked_add((i as i64).days()).unwrap_or(plan.first);
        workout(plan, i, d, &mut o)?;
    }
    for i in 0..plan.days {
        let d = plan.first.checked_add((i as i64).days()).unwrap_or(plan.first);
        summary(plan, d, &mut o)?;
    }
    writeln!(o.w, "</HealthData>")
}

/// The steps of hour `hr` of day `d` as the Watch counted them.
pub fn watch_steps(d: Date, hr: i8) -> u32 {
    300 + (h(d, 100 + hr as u64) % 600) as u32
}

fn day<W: Write>(plan: &Plan, i: u32, d: Date, o: &mut Out<W>) -> std::io::Result<()> {
    let (tz, zone) = plan.zone_on(i);
    let q = |t: &str| format!("HKQuantityTypeIdentifier{t}");
    // Heart rate through the day, from the Watch.
    let day0 = at(d, 0, 0, &tz);
    let step = 86_400 / i64::from(plan.hr_per_day.max(1));
    for k in 0..plan.hr_per_day {
        let t = day0 + i64::from(k) * step;
        let bpm = 58 + ((k * 7 + (h(d, 1) % 13) as u32) % 40);
        o.record(&q("HeartRate"), WATCH, Some("count/min"), t, t, &bpm.to_string(), None)?;
        if plan.traps && k == 3 {
            // The same sample twice, as a re-sync writes it.
            o.record(&q("HeartRate"), WATCH, Some("count/min"), t, t, &bpm.to_string(), None)?;
        }
    }
    let morning = at(d, 7, 0, &tz);
    o.record(&q("RestingHeartRate"), WATCH, Some("count/min"), day0, at(d, 23, 59, &tz), &(52 + h(d, 2) % 8).to_string(), None)?;
    o.record(&q("WalkingHeartRateAverage"), WATCH, Some("count/min"), day0, at(d, 23, 59, &tz), &(95 + h(d, 3) % 10).to_string(), None)?;
    let hrv = at(d, 3, 10, &tz);
    o.record(&q("HeartRateVariabilitySDNN"), WATCH, Some("ms"), hrv, hrv + 60, &format!("{}.5", 38 + h(d, 4) % 20), None)?;
    // Steps, distance, energy each hour from 08:00 to 21:00 on the Watch; the iPhone in the
    // same hours (overlapping) and alone at 22:00 (the Watch charging).
    let (dist_unit, per_km) = if plan.imperial { ("mi", 1.0 / 1.609_344) } else { ("km", 1.0) };
    let (kcal_unit, per_kcal) = if plan.imperial { ("kJ", 4.184) } else { ("kcal", 1.0) };
    for hr in 8..22i8 {
        let (s, e) = (at(d, hr, 0, &tz), at(d, hr, 59, &tz));
        let steps = watch_steps(d, hr);
        o.record(&q("StepCount"), WATCH, Some("count"), s, e, &steps.to_string(), None)?;
        o.record(&q("DistanceWalkingRunning"), WATCH, Some(dist_unit), s, e, &format!("{:.4}", f64::from(steps) * 0.0008 * per_km), None)?;
        o.record(&q("ActiveEnergyBurned"), WATCH, Some(kcal_unit), s, e, &format!("{:.3}", f64::from(steps) * 0.04 * per_kcal), None)?;
        if plan.traps {
            o.record(&q("StepCount"), PHONE, Some("count"), s + 60, e - 60, &(steps * 4 / 5).to_string(), None)?;
        }
    }
    if plan.traps {
        let (s, e) = (at(d, 22, 0, &tz), at(d, 22, 30, &tz));
        o.record(&q("StepCount"), PHONE, Some("count"), s, e, "400", None)?;
        // A record ending before it starts, from an app that wrote one wrong.
        o.record(&q("StepCount"), BROKEN_APP, Some("count"), e, s, "999", None)?;
    }
    for hr in 0..24i8 {
        let s = at(d, hr, 0, &tz);
        o.record(&q("BasalEnergyBurned"), WATCH, Some(kcal_unit), s, s + 3600, &format!("{:.3}", 70.0 * per_kcal), None)?;
    }
    o.record(&q("FlightsClimbed"), WATCH, Some("count"), at(d, 12, 0, &tz), at(d, 12, 5, &tz), "4", None)?;
    if plan.traps {
        o.record(&q("FlightsClimbed"), PHONE, Some("count"), at(d, 12, 0, &tz), at(d, 12, 5, &tz), "3", None)?;
    }
    for hr in 9..21i8 {
        let s = at(d, hr, 0, &tz);
        let v = if hr % 5 == 0 { "HKCategoryValueAppleStandHourIdle" } else { "HKCategoryValueAppleStandHourStood" };
        o.record("HKCategoryTypeIdentifierAppleStandHour", WATCH, None, s, s + 3600, v, None)?;
    }
    sleep(plan, i, d, o)?;
    // Body from the scale's app, in the person's units.
    let kg = 70.0 + (h(d, 5) % 20) as f64 / 10.0;
    let (mass, mass_unit) = if plan.imperial { (kg / 0.453_592_37, "lb") } else { (kg, "kg") };
    o.record(&q("BodyMass"), SCALE_APP, Some(mass_unit), morning, morning, &format!("{mass:.3}"), None)?;
    o.record(&q("BodyFatPercentage"), SCALE_APP, Some("%"), morning, morning, &format!("0.{}", 180 + h(d, 6) % 30), None)?;
    o.record(&q("BodyMassIndex"), SCALE_APP, Some("count"), morning, morning, &format!("{:.1}", kg / 1.78 / 1.78), None)?;
    o.record(&q("LeanBodyMass"), SCALE_APP, Some(mass_unit), morning, morning, &format!("{:.3}", mass * 0.8), None)?;
    // Night-time readings from the Watch.
    let night = at(d, 2, 30, &tz);
    o.record(&q("OxygenSaturation"), WATCH, Some("%"), night, night, &format!("0.{}", 94 + h(d, 7) % 5), None)?;
    o.record(&q("RespiratoryRate"), WATCH, Some("count/min"), night, night + 60, &format!("{}.5", 13 + h(d, 8) % 3), None)?;
    let (temp, temp_unit) = if plan.imperial { (96.8 + (h(d, 9) % 10) as f64 / 10.0, "degF") } else { (36.0 + (h(d, 9) % 6) as f64 / 10.0, "degC") };
    o.record(&q("AppleSleepingWristTemperature"), WATCH, Some(temp_unit), at(d, 1, 0, &tz), at(d, 6, 0, &tz), &format!("{temp:.2}"), None)?;
    if d.weekday() == jiff::civil::Weekday::Monday {
        o.record(&q("VO2Max"), WATCH, Some("mL/min·kg"), morning, morning, &format!("{}.2", 42 + h(d, 10) % 4), None)?;
    }
    let (glucose, glucose_unit) = if plan.imperial { (5.2, "mmol&lt;180.1558800000541&gt;/L") } else { (94.0, "mg/dL") };
    o.record(&q("BloodGlucose"), "Dexcom", Some(glucose_unit), morning + 600, morning + 600, &format!("{glucose}"), None)?;
    let calm = at(d, 20, 0, &tz);
    o.record("HKCategoryTypeIdentifierMindfulSession", PHONE, None, calm, calm + 600, "", zone)?;
    Ok(())
}

/// The night ending on the morning of `d`: the Watch's stages, and Oura's night written into
/// Health by the Oura app (the same night, another source).
fn sleep<W: Write>(plan: &Plan, i: u32, d: Date, o: &mut Out<W>) -> std::io::Result<()> {
    let (tz, zone) = plan.zone_on(i);
    let eve = d.yesterday().unwrap_or(d);
    let bed = at(eve, 23, 0, &tz);
    let c = "HKCategoryTypeIdentifierSleepAnalysis";
    let v = |s: &str| format!("HKCategoryValueSleepAnalysis{s}");
    o.record(c, WATCH, None, bed, bed + 7 * 3600 + 1800, &v("InBed"), zone)?;
    let stages = [("AsleepCore", 90), ("AsleepDeep", 60), ("AsleepREM", 30), ("Awake", 10), ("AsleepCore", 120), ("AsleepREM", 50), ("AsleepCore", 60)];
    let mut t = bed + 600;
    for (s, m) in stages {
        o.record(c, WATCH, None, t, t + m * 60, &v(s), zone)?;
        t += m * 60;
    }
    if plan.traps {
        o.record(c, OURA_APP, None, bed + 300, bed + 300 + 7 * 3600, &v("InBed"), None)?;
        o.record(c, OURA_APP, None, bed + 900, bed + 900 + 6 * 3600 + 1800, &v("AsleepUnspecified"), None)?;
    }
    if plan.sleep_app {
        o.record(c, SLEEP_APP, None, bed - 600, bed + 8 * 3600, &v("InBed"), zone)?;
        o.record(c, SLEEP_APP, None, bed + 300, bed + 300 + SLEEP_APP_ASLEEP_MIN * 60, &v("AsleepUnspecified"), zone)?;
    }
    Ok(())
}

fn pressure<W: Write>(plan: &Plan, d: Date, o: &mut Out<W>) -> std::io::Result<()> {
    if !h(d, 11).is_multiple_of(3) {
        return Ok(());
    }
    let t = at(d, 8, 15, &plan.tz());
    if plan.until.is_some_and(|u| t > u) {
        return Ok(());
    }
    let (sys, dia) = (115 + h(d, 12) % 15, 72 + h(d, 13) % 10);
    let s = stamp(t, &o.export);
    let cuff = plan.cuff;
    let child = |ty: &str, v: u64| {
        format!("  <Record type=\"HKQuantityTypeIdentifier{ty}\" sourceName=\"{cuff}\" unit=\"mmHg\" creationDate=\"{s}\" startDate=\"{s}\" endDate=\"{s}\" value=\"{v}\"/>\n")
    };
    write!(
        o.w,
        " <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"{cuff}\" creationDate=\"{s}\" startDate=\"{s}\" endDate=\"{s}\">\n{}{}</Correlation>\n",
        child("BloodPressureDiastolic", dia),
        child("BloodPressureSystolic", sys)
    )?;
    // The DTD says a Correlation's records also appear at top level.
    o.record("HKQuantityTypeIdentifierBloodPressureDiastolic", cuff, Some("mmHg"), t, t, &dia.to_string(), None)?;
    o.record("HKQuantityTypeIdentifierBloodPressureSystolic", cuff, Some("mmHg"), t, t, &sys.to_string(), None)
}

/// The route file of the workout starting at `t` (its name as the Health app makes it).
pub fn route_name(t: i64, tz: &TimeZone) -> String {
    let z = jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH).to_zoned(tz.clone());
    format!("route_{}.gpx", z.strftime("%Y-%m-%d_%-I.%M%P"))
}

/// Whether day `d` has a run.
pub fn runs_on(d: Date) -> bool {
    h(d, 14).is_multiple_of(2)
}

fn workout<W: Write>(plan: &Plan, i: u32, d: Date, o: &mut Out<W>) -> std::io::Result<()> {
    if !runs_on(d) {
        return Ok(());
    }
    let (tz, zone) = plan.zone_on(i);
    let (s, e) = (at(d, 7, 30, &tz), at(d, 8, 15, &tz));
    if plan.until.is_some_and(|u| e > u) {
        return Ok(());
    }
    let km = 7.0 + (h(d, 15) % 30) as f64 / 10.0;
    let (dist, dist_unit) = if plan.imperial { (km / 1.609_344, "mi") } else { (km, "km") };
    let (ss, es) = (stamp(s, &o.export), stamp(e, &o.export));
    let zone_meta = zone.map(|z| format!("  <MetadataEntry key=\"HKTimeZone\" value=\"{z}\"/>\n")).unwrap_or_default();
    write!(
        o.w,
        " <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"45\" durationUnit=\"min\" sourceName=\"{WATCH}\" sourceVersion=\"10.4\" \
         device=\"{WATCH_DEVICE}\" creationDate=\"{es}\" startDate=\"{ss}\" endDate=\"{es}\">\n{zone_meta}  \
         <MetadataEntry key=\"HKIndoorWorkout\" value=\"0\"/>\n  <WorkoutEvent type=\"HKWorkoutEventTypeSegment\" date=\"{ss}\" duration=\"9.2\" durationUnit=\"min\"/>\n  \
         <WorkoutActivity uuid=\"{:08X}-0000-4000-8000-000000000000\" startDate=\"{ss}\" endDate=\"{es}\" duration=\"45\" durationUnit=\"min\">\n   \
         <WorkoutStatistics type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" startDate=\"{ss}\" endDate=\"{es}\" sum=\"{dist:.5}\" unit=\"{dist_unit}\"/>\n  \
         </WorkoutActivity>\n  \
         <WorkoutStatistics type=\"HKQuantityTypeIdentifierActiveEnergyBurned\" startDate=\"{ss}\" endDate=\"{es}\" sum=\"{:.1}\" unit=\"kcal\"/>\n  \
         <WorkoutStatistics type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" startDate=\"{ss}\" endDate=\"{es}\" sum=\"{dist:.5}\" unit=\"{dist_unit}\"/>\n  \
         <WorkoutStatistics type=\"HKQuantityTypeIdentifierHeartRate\" startDate=\"{ss}\" endDate=\"{es}\" average=\"{}\" minimum=\"98\" maximum=\"171\" unit=\"count/min\"/>\n  \
         <WorkoutRoute sourceName=\"{WATCH}\" creationDate=\"{es}\" startDate=\"{ss}\" endDate=\"{es}\">\n   <FileReference path=\"/workout-routes/{}\"/>\n  </WorkoutRoute>\n </Workout>\n",
        h(d, 16) as u32,
        km * 65.0,
        140 + h(d, 17) % 15,
        route_name(s, &o.export),
    )?;
    for m in 0..45 {
        let t = s + m * 60;
        o.record("HKQuantityTypeIdentifierAppleExerciseTime", WATCH, Some("min"), t, t + 60, "1", None)?;
    }
    Ok(())
}

fn summary<W: Write>(plan: &Plan, d: Date, o: &mut Out<W>) -> std::io::Result<()> {
    if plan.until.is_some_and(|u| at(d, 0, 0, &plan.tz()) > u) {
        return Ok(());
    }
    let steps: u32 = (8..22).map(|hr| watch_steps(d, hr)).sum();
    let kcal = f64::from(steps) * 0.04;
    let (energy, unit) = if plan.imperial { (kcal * 4.184, "kJ") } else { (kcal, "kcal") };
    let ex = if runs_on(d) { 45 } else { 0 };
    writeln!(
        o.w,
        " <ActivitySummary dateComponents=\"{d}\" activeEnergyBurned=\"{energy:.3}\" activeEnergyBurnedGoal=\"{}\" activeEnergyBurnedUnit=\"{unit}\" \
         appleMoveTime=\"0\" appleMoveTimeGoal=\"0\" appleExerciseTime=\"{ex}\" appleExerciseTimeGoal=\"30\" appleStandHours=\"10\" appleStandHoursGoal=\"12\"/>",
        if plan.imperial { 2092 } else { 500 }
    )
}

/// A GPX track of a run, as the Health app writes one into `workout-routes/`.
pub fn route_gpx(start: i64) -> String {
    let mut pts = String::new();
    for k in 0..30 {
        let t = jiff::Timestamp::from_second(start + k * 90).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        pts.push_str(&format!(
            "   <trkpt lon=\"-73.{:06}\" lat=\"40.{:06}\"><ele>12.0</ele><time>{}</time></trkpt>\n",
            780_000 + k * 300,
            760_000 + k * 200,
            t.strftime("%Y-%m-%dT%H:%M:%SZ")
        ));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"Apple Health Export\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n <trk>\n  <name>Route</name>\n  <trkseg>\n{pts}  </trkseg>\n </trk>\n</gpx>\n"
    )
}

/// The export zipped as the Health app zips it: `apple_health_export/<xml_name>` (the name is the
/// phone's language's), the clinical document beside it, and a route file per run.
pub fn write_zip<W: Write + std::io::Seek>(plan: &Plan, xml_name: &str, w: W) -> std::io::Result<W> {
    let mut z = zip::ZipWriter::new(w);
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(true);
    let err = |e: zip::result::ZipError| std::io::Error::other(e.to_string());
    z.start_file("apple_health_export/export_cda.xml", opts).map_err(err)?;
    z.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ClinicalDocument xmlns=\"urn:hl7-org:v3\">\n</ClinicalDocument>\n")?;
    z.start_file(format!("apple_health_export/{xml_name}"), opts).map_err(err)?;
    {
        let mut buf = std::io::BufWriter::with_capacity(1 << 20, &mut z);
        write_xml(plan, &mut buf)?;
        buf.flush()?;
    }
    let export = plan.tz();
    for i in 0..plan.days {
        let d = plan.first.checked_add((i as i64).days()).unwrap_or(plan.first);
        if !runs_on(d) {
            continue;
        }
        let s = at(d, 7, 30, &plan.zone_on(i).0);
        if plan.until.is_some_and(|u| s + 2700 > u) {
            continue;
        }
        z.start_file(format!("apple_health_export/workout-routes/{}", route_name(s, &export)), opts).map_err(err)?;
        z.write_all(route_gpx(s).as_bytes())?;
    }
    z.finish().map_err(err)
}
