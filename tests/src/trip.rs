//! A person who travels: a time zone whose offset changes once, at the instant of a flight, so a
//! twin's sample person living in it records every record in the zone of the moment (the trip
//! week of the day rule, `tests/tests/e2e/trip.rs`). jiff reads zones from TZif data, so the
//! trip is written as one (RFC 8536, version 2): two local time types and one transition.
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// The zone of someone at `before` until `flight`, at `after` from then on.
pub fn zone(before: Offset, flight: Timestamp, after: Offset) -> TimeZone {
    let data = tzif(before, flight.as_second(), after);
    TimeZone::tzif("Trip", &data).expect("a TZif zone of two types and one transition")
}

fn designation(o: Offset) -> String {
    let h = o.seconds() / 3600;
    format!("{}{:02}", if h < 0 { '-' } else { '+' }, h.abs())
}

/// One data block: the transition times at `width` bytes (4 in version 1, 8 in version 2).
fn block(out: &mut Vec<u8>, width: usize, at: i64, types: &[(i32, u8)], chars: &[u8]) {
    let counts = [0u32, 0, 0, 1, types.len() as u32, chars.len() as u32];
    out.extend_from_slice(b"TZif2");
    out.extend_from_slice(&[0; 15]);
    for c in counts {
        out.extend_from_slice(&c.to_be_bytes());
    }
    match width {
        4 => out.extend_from_slice(&(at as i32).to_be_bytes()),
        _ => out.extend_from_slice(&at.to_be_bytes()),
    }
    out.push(1);
    for (utoff, idx) in types {
        out.extend_from_slice(&utoff.to_be_bytes());
        out.push(0);
        out.push(*idx);
    }
    out.extend_from_slice(chars);
}

fn tzif(before: Offset, at: i64, after: Offset) -> Vec<u8> {
    let (a, b) = (designation(before), designation(after));
    let mut chars = Vec::new();
    chars.extend_from_slice(a.as_bytes());
    chars.push(0);
    let second = chars.len() as u8;
    chars.extend_from_slice(b.as_bytes());
    chars.push(0);
    let types = [(before.seconds(), 0u8), (after.seconds(), second)];
    let mut out = Vec::new();
    block(&mut out, 4, at, &types, &chars);
    block(&mut out, 8, at, &types, &chars);
    // The footer: the rule after the last transition, in POSIX TZ form (its sign is reversed).
    let h = after.seconds() / 3600;
    out.extend_from_slice(format!("\n<{b}>{}\n", -h).as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trip_zone_changes_its_offset_at_the_flight_and_only_there() {
        let flight: Timestamp = "2026-06-10T14:00:00Z".parse().unwrap();
        let z = zone(Offset::constant(-6), flight, Offset::constant(9));
        let before = flight.checked_sub(jiff::SignedDuration::from_secs(1)).unwrap();
        assert_eq!(z.to_offset(before), Offset::constant(-6));
        assert_eq!(z.to_offset(flight), Offset::constant(9));
        assert_eq!(z.to_offset("2026-01-01T00:00:00Z".parse().unwrap()), Offset::constant(-6));
        assert_eq!(z.to_offset("2027-01-01T00:00:00Z".parse().unwrap()), Offset::constant(9));
    }
}
