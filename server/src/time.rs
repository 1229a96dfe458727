//! Local days, time zones and the parsing of the time strings providers send.
use jiff::civil::{Date, DateTime};
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// A time zone together with the name the user gave (or the machine's).
#[derive(Clone, Debug)]
pub struct Zone {
    pub tz: TimeZone,
    pub name: String,
}

impl Zone {
    /// The machine's zone (a desktop extension runs on the user's machine), unless `VITALS_TZ` says otherwise.
    pub fn default_zone() -> Zone {
        if let Ok(name) = std::env::var("VITALS_TZ") {
            if let Ok(z) = Zone::parse(&name) {
                return z;
            }
            tracing::warn!("VITALS_TZ={name:?} is not a time zone; using the machine's");
        }
        let tz = TimeZone::system();
        let name = tz.iana_name().unwrap_or("system").to_string();
        Zone { tz, name }
    }

    /// An IANA name (`Europe/Paris`) or a fixed offset (`+02:00`, `-06:00`, `Z`/`UTC`).
    pub fn parse(s: &str) -> Result<Zone, String> {
        let t = s.trim();
        if t.starts_with('+') || t.starts_with('-') {
            let sign = if t.starts_with('-') { -1 } else { 1 };
            let rest = &t[1..];
            let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
            let (h, m): (i32, i32) = match (h.parse(), m.parse()) {
                (Ok(h), Ok(m)) if h <= 14 && m < 60 => (h, m),
                _ => return Err(format!("{s:?} is not an offset of the form ±HH:MM")),
            };
            let off = Offset::from_seconds(sign * (h * 3600 + m * 60)).map_err(|e| e.to_string())?;
            return Ok(Zone { tz: TimeZone::fixed(off), name: t.to_string() });
        }
        TimeZone::get(t).map(|tz| Zone { tz, name: t.to_string() }).map_err(|_| format!("{s:?} is not a known IANA time zone name"))
    }

    pub fn today(&self) -> Date {
        Timestamp::now().to_zoned(self.tz.clone()).date()
    }

    /// The instant a local day starts (DST-aware: the first valid instant of that day).
    pub fn day_start(&self, d: Date) -> jiff::Zoned {
        d.to_zoned(self.tz.clone()).expect("every civil date in range has a start")
    }
}

/// Parse `YYYY-MM-DD` strictly.
pub fn parse_date(s: &str) -> Option<Date> {
    if s.len() != 10 {
        return None;
    }
    s.parse::<Date>().ok()
}

/// The local day of a provider time string: a date as it is, an instant converted to `zone`,
/// a naive local datetime (no offset) taken as already local.
pub fn local_day(s: &str, zone: &Zone) -> Option<Date> {
    if let Some(d) = parse_date(s) {
        return Some(d);
    }
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Some(ts.to_zoned(zone.tz.clone()).date());
    }
    s.parse::<DateTime>().ok().map(|dt| dt.date())
}

/// RFC 3339 with the zone's offset at that instant, seconds precision: what we send upstream.
/// Unix seconds as an RFC 3339 instant (UTC), for reports of expiries. None: none, or out of range.
pub fn unix_rfc3339(s: Option<i64>) -> Option<String> {
    s.and_then(|s| Timestamp::from_second(s).ok()).map(|t| t.to_string())
}

pub fn rfc3339(z: &jiff::Zoned) -> String {
    z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_names_parse() {
        assert!(Zone::parse("-06:00").is_ok());
        assert!(Zone::parse("+05:30").is_ok());
        assert!(Zone::parse("America/Chicago").is_ok());
        assert!(Zone::parse("Mars/Olympus").is_err());
        assert!(Zone::parse("+25:00").is_err());
    }

    #[test]
    fn local_day_converts_instants_into_the_zone() {
        let z = Zone::parse("-06:00").unwrap();
        // 01:30 UTC on the 17th is 19:30 on the 16th at -06:00: the workout skew.
        assert_eq!(local_day("2026-07-17T01:30:00+00:00", &z), Some(jiff::civil::date(2026, 7, 16)));
        assert_eq!(local_day("2026-07-17", &z), Some(jiff::civil::date(2026, 7, 17)));
        assert_eq!(local_day("2026-07-17T23:10:00", &z), Some(jiff::civil::date(2026, 7, 17)));
        assert_eq!(local_day("yesterday", &z), None);
    }

    #[test]
    fn day_start_follows_dst() {
        let z = Zone::parse("America/Chicago").unwrap();
        let a = z.day_start(jiff::civil::date(2026, 3, 8));
        let b = z.day_start(jiff::civil::date(2026, 3, 9));
        assert_eq!(b.timestamp().as_second() - a.timestamp().as_second(), 23 * 3600);
    }
}
