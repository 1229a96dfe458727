//! Local days, time zones and the parsing of the time strings providers send.
use jiff::civil::{Date, DateTime};
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

/// A time zone together with the name the user gave (or the machine's).
#[derive(Clone, Debug)]
pub struct Zone {
    pub tz: TimeZone,
    pub name: String,
    /// The person gave it (`tz`): then it also re-dates a record written in the offset it was
    /// recorded in (`Dating::OwnOffset`); this machine's zone never does.
    pub asked: bool,
}

impl Zone {
    /// The zone `VITALS_TZ` names (`configured`, from [`crate::config::Config::zone`]), else the
    /// machine's (a desktop extension runs on the user's machine).
    pub fn default_in(configured: Option<&str>) -> Zone {
        if let Some(name) = configured {
            if let Ok(z) = Zone::parse(name) {
                return Zone { asked: false, ..z };
            }
            tracing::warn!("VITALS_TZ={name:?} is not a time zone; using the machine's");
        }
        let tz = TimeZone::system();
        let name = tz.iana_name().unwrap_or("system").to_string();
        Zone { tz, name, asked: false }
    }

    /// An IANA name (`Europe/Paris`) or a fixed offset (`+02:00`, `-06:00`, `Z`/`UTC`).
    pub fn parse(s: &str) -> Result<Zone, ZoneError> {
        let t = s.trim();
        let shown: String = s.chars().take(40).collect();
        if t.starts_with('+') || t.starts_with('-') {
            let sign = if t.starts_with('-') { -1 } else { 1 };
            let rest = &t[1..];
            let (h, m) = rest.split_once(':').unwrap_or((rest, "00"));
            let two = |x: &str| (1..=2).contains(&x.len()) && x.bytes().all(|b| b.is_ascii_digit());
            let (h, m): (i32, i32) = match (two(h) && two(m), h.parse(), m.parse()) {
                (true, Ok(h), Ok(m)) if h <= 14 && m < 60 && h * 60 + m <= 14 * 60 => (h, m),
                _ => return Err(ZoneError::Offset(shown)),
            };
            let off = Offset::from_seconds(sign * (h * 3600 + m * 60)).map_err(|_| ZoneError::OutOfRange(shown))?;
            return Ok(Zone { tz: TimeZone::fixed(off), name: t.to_string(), asked: true });
        }
        TimeZone::get(t).map(|tz| Zone { tz, name: t.to_string(), asked: true }).map_err(|_| ZoneError::Unknown(shown))
    }

    pub fn today(&self) -> Date {
        Timestamp::now().to_zoned(self.tz.clone()).date()
    }

    /// The instant a local day starts (DST-aware: the first valid instant of that day). Days that
    /// come from input are bounded by `engine/plan.rs` (`FIRST_DAY` to a year after today), far inside
    /// the range where this cannot overflow in any zone; a day outside it is a bug, not bad input.
    pub fn day_start(&self, d: Date) -> jiff::Zoned {
        d.to_zoned(self.tz.clone()).expect("days reaching here are bounded by the query plan")
    }
}

/// Parse `YYYY-MM-DD` strictly.
pub fn parse_date(s: &str) -> Option<Date> {
    read_date(s).ok()
}

/// Parse `YYYY-MM-DD` strictly, or say what is wrong: the shape, the month, or a day the month
/// does not have (`2026-02-30`), in words a person can act on.
pub fn read_date(s: &str) -> Result<Date, DateError> {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) || !digits(8..10) {
        return Err(DateError::Shape);
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<i16>().unwrap_or(0);
    let (y, m, d) = (num(0..4), num(5..7) as i8, num(8..10) as i8);
    if !(1..=12).contains(&m) {
        return Err(DateError::Month(m));
    }
    let first = Date::new(y, m, 1).map_err(|_| DateError::Shape)?;
    let days = first.days_in_month();
    if !(1..=days).contains(&d) {
        return Err(DateError::Day { month: first.strftime("%B").to_string(), year: y, days });
    }
    Date::new(y, m, d).map_err(|_| DateError::Shape)
}

/// Why a zone given as text is none: said to the person, after the parameter's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZoneError {
    #[error("{0:?} is not an offset from -14:00 to +14:00 written ±HH:MM")]
    Offset(String),
    #[error("{0:?} is not an offset from -14:00 to +14:00")]
    OutOfRange(String),
    #[error("{0:?} is not a known IANA time zone name")]
    Unknown(String),
}

/// Why a day given as text is none: said after the value, so "2026-02-30 does not exist: …".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    #[error("is not a calendar date as YYYY-MM-DD")]
    Shape,
    #[error("does not exist: months run from 01 to 12, not {0:02}")]
    Month(i8),
    #[error("does not exist: {month} {year} has {days} days")]
    Day { month: String, year: i16, days: i8 },
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

/// The local day of a provider time string where it happened: a date as it is, an instant's date
/// in the offset it is written in (`2026-06-10T23:30:00-06:00` is the 10th, wherever the query
/// is), a naive local datetime's own date.
pub fn own_day(s: &str) -> Option<Date> {
    if let Some(d) = parse_date(s) {
        return Some(d);
    }
    if s.parse::<Timestamp>().is_ok() {
        return jiff::fmt::temporal::Pieces::parse(s).ok().map(|p| p.date());
    }
    s.parse::<DateTime>().ok().map(|dt| dt.date())
}

/// The local wall-clock time (`HH:MM`) of a provider time string: an instant in `zone`, a naive
/// local datetime (no offset) as it is. None: not a time.
pub fn local_clock(s: &str, zone: &Zone) -> Option<String> {
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Some(ts.to_zoned(zone.tz.clone()).strftime("%H:%M").to_string());
    }
    s.parse::<DateTime>().ok().map(|dt| dt.strftime("%H:%M").to_string())
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
        // Where it happened: the offset it is written in, whatever the query's zone.
        assert_eq!(own_day("2026-07-16T23:30:00-06:00"), Some(jiff::civil::date(2026, 7, 16)));
        assert_eq!(own_day("2026-07-17T07:10:00+09:00"), Some(jiff::civil::date(2026, 7, 17)));
        assert_eq!(own_day("2026-07-17T01:30:00Z"), Some(jiff::civil::date(2026, 7, 17)));
        assert_eq!(own_day("2026-07-17"), Some(jiff::civil::date(2026, 7, 17)));
        assert_eq!(own_day("2026-07-17T23:10:00"), Some(jiff::civil::date(2026, 7, 17)));
        assert_eq!(own_day("yesterday"), None);
    }

    #[test]
    fn day_start_follows_dst() {
        let z = Zone::parse("America/Chicago").unwrap();
        let a = z.day_start(jiff::civil::date(2026, 3, 8));
        let b = z.day_start(jiff::civil::date(2026, 3, 9));
        assert_eq!(b.timestamp().as_second() - a.timestamp().as_second(), 23 * 3600);
    }
}
