//! TCX (Garmin's Training Center Database v2): one activity, a `Lap` for each lap with its totals
//! and a trackpoint for each record (time, position when there is one, altitude, distance, heart
//! rate, a ride's cadence), speed, a run's cadence and power in the ActivityExtension v2 `TPX`.
//! Elements are in the order the schema's sequences require. A TCX needs no position, so an
//! indoor activity has one too.
use super::{num, xml_text, xml_time, Point, Recording, Sport};

/// `r` as a TCX document, with `notes` (the activity's name) after its laps.
pub fn write(r: &Recording, notes: &str) -> String {
    let sport = match r.sport {
        Sport::Running => "Running",
        Sport::Cycling => "Biking",
        Sport::Other => "Other",
    };
    let id = r.points.first().map(|p| p.at).or(r.laps.first().map(|l| l.start));
    let mut out = String::with_capacity(r.points.len() * 330 + 1000);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(
        "<TrainingCenterDatabase xmlns=\"http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2\" \
         xmlns:ns3=\"http://www.garmin.com/xmlschemas/ActivityExtension/v2\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 \
         http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd\">\n",
    );
    out.push_str(&format!(" <Activities>\n  <Activity Sport=\"{sport}\">\n   <Id>{}</Id>\n", id.map(xml_time).unwrap_or_default()));
    for (l, points) in r.laps.iter().zip(r.lap_points()) {
        out.push_str(&format!("   <Lap StartTime=\"{}\">", xml_time(l.start)));
        out.push_str(&format!("<TotalTimeSeconds>{}</TotalTimeSeconds>", num(l.timer_s, 1)));
        out.push_str(&format!("<DistanceMeters>{}</DistanceMeters>", num(l.distance_m, 2)));
        if let Some(v) = l.max_speed_m_s {
            out.push_str(&format!("<MaximumSpeed>{}</MaximumSpeed>", num(v, 3)));
        }
        // Required by the schema: 0 when the file did not say.
        out.push_str(&format!("<Calories>{}</Calories>", l.calories_kcal.unwrap_or(0)));
        if let Some(hr) = l.avg_hr_bpm.filter(|x| *x > 0) {
            out.push_str(&format!("<AverageHeartRateBpm><Value>{hr}</Value></AverageHeartRateBpm>"));
        }
        if let Some(hr) = l.max_hr_bpm.filter(|x| *x > 0) {
            out.push_str(&format!("<MaximumHeartRateBpm><Value>{hr}</Value></MaximumHeartRateBpm>"));
        }
        out.push_str("<Intensity>Active</Intensity>");
        out.push_str(&format!("<TriggerMethod>{}</TriggerMethod>\n", if l.by_distance { "Distance" } else { "Manual" }));
        if !points.is_empty() {
            out.push_str("    <Track>\n");
            for p in points {
                trackpoint(&mut out, p, r.sport);
            }
            out.push_str("    </Track>\n");
        }
        out.push_str("   </Lap>\n");
    }
    out.push_str(&format!("   <Notes>{}</Notes>\n  </Activity>\n </Activities>\n</TrainingCenterDatabase>\n", xml_text(notes)));
    out
}

fn trackpoint(out: &mut String, p: &Point, sport: Sport) {
    out.push_str(&format!("     <Trackpoint><Time>{}</Time>", xml_time(p.at)));
    if let Some((lat, lon)) = p.position {
        out.push_str(&format!("<Position><LatitudeDegrees>{}</LatitudeDegrees><LongitudeDegrees>{}</LongitudeDegrees></Position>", num(lat, 7), num(lon, 7)));
    }
    if let Some(a) = p.altitude_m {
        out.push_str(&format!("<AltitudeMeters>{}</AltitudeMeters>", num(a, 1)));
    }
    if let Some(d) = p.distance_m {
        out.push_str(&format!("<DistanceMeters>{}</DistanceMeters>", num(d, 2)));
    }
    if let Some(hr) = p.hr_bpm.filter(|x| *x > 0) {
        out.push_str(&format!("<HeartRateBpm><Value>{hr}</Value></HeartRateBpm>"));
    }
    // The trackpoint's own cadence is a bike's; a run's goes in the extension.
    let cadence = p.cadence_rpm.filter(|c| *c <= 254);
    if let (Some(c), false) = (cadence, sport == Sport::Running) {
        out.push_str(&format!("<Cadence>{c}</Cadence>"));
    }
    let run_cadence = cadence.filter(|_| sport == Sport::Running);
    if p.speed_m_s.is_some() || run_cadence.is_some() || p.power_w.is_some() {
        out.push_str("<Extensions><ns3:TPX>");
        if let Some(v) = p.speed_m_s {
            out.push_str(&format!("<ns3:Speed>{}</ns3:Speed>", num(v, 3)));
        }
        if let Some(c) = run_cadence {
            out.push_str(&format!("<ns3:RunCadence>{c}</ns3:RunCadence>"));
        }
        if let Some(w) = p.power_w {
            out.push_str(&format!("<ns3:Watts>{w}</ns3:Watts>"));
        }
        out.push_str("</ns3:TPX></Extensions>");
    }
    out.push_str("</Trackpoint>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lap_per_lap_and_a_trackpoint_per_record() {
        let r = super::super::tests::run(700, false);
        let x = write(&r, "Evening Run");
        assert_eq!(x.matches("<Lap StartTime=").count(), 3);
        assert_eq!(x.matches("<Trackpoint>").count(), 700);
        assert!(!x.contains("<Position>"), "no position invented");
        assert!(x.contains("<DistanceMeters>1002</DistanceMeters>"), "{x:.1500}");
        assert!(x.contains("<Notes>Evening Run</Notes>\n  </Activity>"));
    }
}
