//! GPX 1.1: the track of an activity (a point for each record with a position: latitude,
//! longitude, altitude, time) with heart rate and cadence in Garmin's TrackPointExtension v1, the
//! extension every reader of GPX from a watch knows. A GPX is a track, so an activity without
//! positions has none.
use super::{num, xml_text, xml_time, Recording, Sport};

/// Why no GPX could be written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GpxError {
    #[error("the activity has no GPS positions (recorded indoors or without GPS), and a GPX is a track of positions")]
    NoPositions,
}

/// `r` as a GPX document named `name`, made by `creator`.
pub fn write(r: &Recording, name: &str, creator: &str) -> Result<String, GpxError> {
    let with_position: Vec<_> = r.points.iter().filter_map(|p| p.position.map(|pos| (p, pos))).collect();
    let Some((first, _)) = with_position.first() else {
        return Err(GpxError::NoPositions);
    };
    let mut out = String::with_capacity(with_position.len() * 200 + 800);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<gpx version=\"1.1\" creator=\"{}\" xmlns=\"http://www.topografix.com/GPX/1/1\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xmlns:gpxtpx=\"http://www.garmin.com/xmlschemas/TrackPointExtension/v1\" \
         xsi:schemaLocation=\"http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
         http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www.garmin.com/xmlschemas/TrackPointExtensionv1.xsd\">\n",
        xml_text(creator).replace('"', "&quot;")
    ));
    out.push_str(&format!(" <metadata><time>{}</time></metadata>\n", xml_time(first.at)));
    let kind = match r.sport {
        Sport::Running => "running",
        Sport::Cycling => "cycling",
        Sport::Other => "other",
    };
    out.push_str(&format!(" <trk><name>{}</name><type>{kind}</type><trkseg>\n", xml_text(name)));
    for (p, (lat, lon)) in with_position {
        out.push_str(&format!("  <trkpt lat=\"{}\" lon=\"{}\">", num(lat, 7), num(lon, 7)));
        if let Some(a) = p.altitude_m {
            out.push_str(&format!("<ele>{}</ele>", num(a, 1)));
        }
        out.push_str(&format!("<time>{}</time>", xml_time(p.at)));
        if p.hr_bpm.is_some() || p.cadence_rpm.is_some() {
            out.push_str("<extensions><gpxtpx:TrackPointExtension>");
            if let Some(hr) = p.hr_bpm {
                out.push_str(&format!("<gpxtpx:hr>{hr}</gpxtpx:hr>"));
            }
            if let Some(c) = p.cadence_rpm {
                out.push_str(&format!("<gpxtpx:cad>{c}</gpxtpx:cad>"));
            }
            out.push_str("</gpxtpx:TrackPointExtension></extensions>");
        }
        out.push_str("</trkpt>\n");
    }
    out.push_str(" </trkseg></trk>\n</gpx>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_track_of_every_point_with_a_position_and_none_without() {
        let r = super::super::tests::run(50, true);
        let x = write(&r, "Evening <Run>", "vitals").unwrap();
        assert_eq!(x.matches("<trkpt ").count(), 50);
        assert!(x.contains("<name>Evening &lt;Run&gt;</name>"), "{x:.600}");
        assert!(x.contains("<trkpt lat=\"60.17001\" lon=\"24.94\"><ele>20.2</ele><time>2026-11-20T18:00:01Z</time>"), "{x:.900}");
        assert_eq!(write(&super::super::tests::run(50, false), "Ride", "vitals"), Err(GpxError::NoPositions));
    }
}
