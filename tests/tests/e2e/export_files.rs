//! The shape of the TCX and GPX files `vitals_export` writes, read with an XML parser and held to
//! their schemas (Garmin's TrainingCenterDatabase v2, Topografix GPX 1.1): the namespaces, each
//! element's children in the order the schema's sequence requires, required attributes and values
//! of their types (times, degrees in range, heart rates a positive byte), times in order. Used by
//! the suites that export (not a suite itself).
use quick_xml::events::Event;

/// An element, its attributes and children, and its text.
#[derive(Debug, Default)]
pub struct Node {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    pub text: String,
}

impl Node {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
    }
    fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }
    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
    fn number(&self) -> f64 {
        self.text.trim().parse().unwrap_or_else(|_| panic!("<{}> holds {:?}, not a number", self.name, self.text))
    }
}

/// The document's root element, parsed whole (a well-formed document or a panic saying where not).
pub fn parse(xml: &str) -> Node {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<Node> = vec![Node::default()];
    let open = |e: &quick_xml::events::BytesStart| Node {
        name: e.name().as_ref().to_string(),
        attrs: e
            .attributes()
            .map(|a| {
                let a = a.expect("a well-formed attribute");
                (a.key.as_ref().to_string(), a.value.to_string())
            })
            .collect(),
        ..Default::default()
    };
    loop {
        match r.read_event().unwrap_or_else(|e| panic!("not well-formed XML at {}: {e}", r.buffer_position())) {
            Event::Start(e) => stack.push(open(&e)),
            Event::Empty(e) => stack.last_mut().unwrap().children.push(open(&e)),
            Event::Text(t) => stack.last_mut().unwrap().text.push_str(&t),
            Event::End(e) => {
                let done = stack.pop().unwrap();
                assert_eq!(done.name, e.name().as_ref(), "an element closed by another's end tag");
                stack.last_mut().unwrap().children.push(done);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "every element is closed");
    let mut top = stack.pop().unwrap();
    assert_eq!(top.children.len(), 1, "one root element");
    top.children.remove(0)
}

/// The children of `n` follow `seq`: (name, fewest, most) in order, nothing else.
fn sequence(n: &Node, seq: &[(&str, usize, usize)]) {
    let names: Vec<&str> = n.children.iter().map(|c| c.name.as_str()).collect();
    let mut i = 0;
    for (name, min, max) in seq {
        let k = names[i..].iter().take_while(|x| *x == name).count();
        assert!(k >= *min && k <= *max, "<{}>: {k} <{name}> where {min} to {max} belong, in {names:?}", n.name);
        i += k;
    }
    assert_eq!(i, names.len(), "<{}>: {:?} is out of the schema's order ({names:?})", n.name, names.get(i));
}

fn time(n: &Node) -> jiff::Timestamp {
    n.text.trim().parse().unwrap_or_else(|e| panic!("<{}> {:?} is not an xsd:dateTime: {e}", n.name, n.text))
}

const MANY: usize = usize::MAX;

/// What a TCX holds: its trackpoints and each lap's distance.
pub struct Tcx {
    pub trackpoints: usize,
    pub laps: Vec<f64>,
}

pub fn tcx(xml: &str) -> Tcx {
    let root = parse(xml);
    assert_eq!(root.name, "TrainingCenterDatabase");
    assert_eq!(root.attr("xmlns"), Some("http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"));
    sequence(&root, &[("Activities", 1, 1)]);
    let acts = root.child("Activities").unwrap();
    sequence(acts, &[("Activity", 1, 1)]);
    let act = acts.child("Activity").unwrap();
    assert!(["Running", "Biking", "Other"].contains(&act.attr("Sport").unwrap_or("")), "Sport {:?}", act.attr("Sport"));
    sequence(act, &[("Id", 1, 1), ("Lap", 1, MANY), ("Notes", 0, 1), ("Training", 0, 1), ("Creator", 0, 1), ("Extensions", 0, 1)]);
    time(act.child("Id").unwrap());
    let (mut points, mut laps, mut last) = (0, vec![], None);
    let mut last_distance = 0.0;
    for lap in act.all("Lap") {
        lap.attr("StartTime").expect("a lap's StartTime").parse::<jiff::Timestamp>().expect("StartTime is a time");
        sequence(
            lap,
            &[
                ("TotalTimeSeconds", 1, 1),
                ("DistanceMeters", 1, 1),
                ("MaximumSpeed", 0, 1),
                ("Calories", 1, 1),
                ("AverageHeartRateBpm", 0, 1),
                ("MaximumHeartRateBpm", 0, 1),
                ("Intensity", 1, 1),
                ("Cadence", 0, 1),
                ("TriggerMethod", 1, 1),
                ("Track", 0, MANY),
                ("Notes", 0, 1),
                ("Extensions", 0, 1),
            ],
        );
        let calories = lap.child("Calories").unwrap().number();
        assert!(calories.fract() == 0.0 && (0.0..=65_535.0).contains(&calories), "Calories {calories}");
        assert!(["Active", "Resting"].contains(&lap.child("Intensity").unwrap().text.as_str()));
        assert!(["Manual", "Distance", "Location", "Time", "HeartRate"].contains(&lap.child("TriggerMethod").unwrap().text.as_str()));
        for hr in ["AverageHeartRateBpm", "MaximumHeartRateBpm"].iter().filter_map(|k| lap.child(k)) {
            bpm(hr);
        }
        laps.push(lap.child("DistanceMeters").unwrap().number());
        for tp in lap.all("Track").flat_map(|t| t.all("Trackpoint")) {
            sequence(
                tp,
                &[
                    ("Time", 1, 1),
                    ("Position", 0, 1),
                    ("AltitudeMeters", 0, 1),
                    ("DistanceMeters", 0, 1),
                    ("HeartRateBpm", 0, 1),
                    ("Cadence", 0, 1),
                    ("SensorState", 0, 1),
                    ("Extensions", 0, 1),
                ],
            );
            let t = time(tp.child("Time").unwrap());
            assert!(last.is_none_or(|l| t > l), "trackpoints in time order ({t})");
            last = Some(t);
            if let Some(p) = tp.child("Position") {
                sequence(p, &[("LatitudeDegrees", 1, 1), ("LongitudeDegrees", 1, 1)]);
                degrees(p.child("LatitudeDegrees").unwrap().number(), p.child("LongitudeDegrees").unwrap().number());
            }
            if let Some(d) = tp.child("DistanceMeters") {
                assert!(d.number() >= last_distance, "distance never goes back");
                last_distance = d.number();
            }
            if let Some(hr) = tp.child("HeartRateBpm") {
                bpm(hr);
            }
            if let Some(x) = tp.child("Extensions") {
                assert_eq!(root.attr("xmlns:ns3"), Some("http://www.garmin.com/xmlschemas/ActivityExtension/v2"), "the extension's namespace");
                let tpx = x.child("ns3:TPX").expect("TPX in a trackpoint's extensions");
                sequence(tpx, &[("ns3:Speed", 0, 1), ("ns3:RunCadence", 0, 1), ("ns3:Watts", 0, 1), ("ns3:Extensions", 0, 1)]);
            }
            if let Some(c) = tp.child("Cadence") {
                assert!((0.0..=254.0).contains(&c.number()) && c.number().fract() == 0.0, "Cadence {}", c.text);
            }
            points += 1;
        }
    }
    Tcx { trackpoints: points, laps }
}

fn bpm(n: &Node) {
    sequence(n, &[("Value", 1, 1)]);
    let v = n.child("Value").unwrap().number();
    assert!(v.fract() == 0.0 && (1.0..=255.0).contains(&v), "<{}> {v} is not a positive byte", n.name);
}

fn degrees(lat: f64, lon: f64) {
    assert!((-90.0..=90.0).contains(&lat) && (-180.0..180.0).contains(&lon), "{lat}, {lon}");
}

/// What a GPX holds: its track points.
pub struct Gpx {
    pub points: usize,
}

pub fn gpx(xml: &str) -> Gpx {
    let root = parse(xml);
    assert_eq!(root.name, "gpx");
    assert_eq!((root.attr("version"), root.attr("xmlns")), (Some("1.1"), Some("http://www.topografix.com/GPX/1/1")));
    assert!(root.attr("creator").is_some_and(|c| !c.is_empty()), "GPX requires its creator");
    sequence(&root, &[("metadata", 0, 1), ("wpt", 0, MANY), ("rte", 0, MANY), ("trk", 0, MANY), ("extensions", 0, 1)]);
    let (mut points, mut last) = (0, None);
    for trk in root.all("trk") {
        let seq = [
            ("name", 0, 1),
            ("cmt", 0, 1),
            ("desc", 0, 1),
            ("src", 0, 1),
            ("link", 0, MANY),
            ("number", 0, 1),
            ("type", 0, 1),
            ("extensions", 0, 1),
            ("trkseg", 0, MANY),
        ];
        sequence(trk, &seq);
        for pt in trk.all("trkseg").flat_map(|s| s.all("trkpt")) {
            let coord = |k: &str| pt.attr(k).unwrap_or_else(|| panic!("trkpt without {k}")).parse::<f64>().unwrap();
            degrees(coord("lat"), coord("lon"));
            sequence(pt, &[("ele", 0, 1), ("time", 0, 1), ("extensions", 0, 1)]);
            if let Some(t) = pt.child("time").map(time) {
                assert!(last.is_none_or(|l| t > l), "track points in time order ({t})");
                last = Some(t);
            }
            if let Some(x) = pt.child("extensions").and_then(|e| e.child("gpxtpx:TrackPointExtension")) {
                assert_eq!(root.attr("xmlns:gpxtpx"), Some("http://www.garmin.com/xmlschemas/TrackPointExtension/v1"), "the extension's namespace");
                sequence(x, &[("gpxtpx:atemp", 0, 1), ("gpxtpx:wtemp", 0, 1), ("gpxtpx:depth", 0, 1), ("gpxtpx:hr", 0, 1), ("gpxtpx:cad", 0, 1)]);
            }
            points += 1;
        }
    }
    Gpx { points }
}
