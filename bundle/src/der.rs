//! Just enough DER to write and read the one CMS shape `.mcpb` uses. Hand-written because the
//! layout must match `mcpb sign` byte for byte (attribute and certificate order), which the
//! RustCrypto `cms` builder does not keep (it DER-sorts both).

pub const SEQUENCE: u8 = 0x30;
pub const SET: u8 = 0x31;
pub const INTEGER: u8 = 0x02;
pub const OCTET_STRING: u8 = 0x04;
pub const BIT_STRING: u8 = 0x03;
pub const NULL: u8 = 0x05;
pub const OID: u8 = 0x06;
pub const UTF8_STRING: u8 = 0x0c;
pub const UTC_TIME: u8 = 0x17;
pub const GENERALIZED_TIME: u8 = 0x18;
pub const BOOLEAN: u8 = 0x01;
/// `[n]` constructed, context-specific (EXPLICIT, or IMPLICIT over a constructed type).
pub const fn ctx(n: u8) -> u8 {
    0xa0 | n
}

/// Object identifiers, already encoded (content bytes, without tag and length).
pub mod oid {
    pub const SIGNED_DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
    pub const DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01];
    pub const SHA256: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01];
    pub const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    pub const SHA256_WITH_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
    pub const CONTENT_TYPE: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03];
    pub const MESSAGE_DIGEST: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04];
    pub const SIGNING_TIME: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x05];
    pub const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
    pub const KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x0f];
    pub const EXT_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];
    pub const BASIC_CONSTRAINTS: &[u8] = &[0x55, 0x1d, 0x13];
    pub const CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];
}

/// One TLV.
pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes: Vec<u8> = n.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// A constructed value from already-encoded parts, in the order given.
pub fn cons(tag: u8, parts: &[&[u8]]) -> Vec<u8> {
    tlv(tag, &parts.concat())
}

pub fn oid(o: &[u8]) -> Vec<u8> {
    tlv(OID, o)
}

pub fn null() -> Vec<u8> {
    vec![NULL, 0]
}

/// A non-negative INTEGER from big-endian magnitude bytes (a leading zero added when the top bit is set).
pub fn uint(be: &[u8]) -> Vec<u8> {
    let trimmed: Vec<u8> = be.iter().copied().skip_while(|b| *b == 0).collect();
    let mut c = if trimmed.is_empty() { vec![0] } else { trimmed };
    if c[0] & 0x80 != 0 {
        c.insert(0, 0);
    }
    tlv(INTEGER, &c)
}

/// `AlgorithmIdentifier { oid, NULL }`.
pub fn alg(o: &[u8]) -> Vec<u8> {
    cons(SEQUENCE, &[&oid(o), &null()])
}

/// UTCTime for 1950–2049, GeneralizedTime outside, as RFC 5280 and `mcpb sign` do.
pub fn time(t: jiff::Timestamp) -> Vec<u8> {
    let z = t.to_zoned(jiff::tz::TimeZone::UTC);
    if (1950..2050).contains(&z.year()) {
        tlv(UTC_TIME, z.strftime("%y%m%d%H%M%SZ").to_string().as_bytes())
    } else {
        tlv(GENERALIZED_TIME, z.strftime("%Y%m%d%H%M%SZ").to_string().as_bytes())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("malformed DER: {0}")]
pub struct Malformed(pub &'static str);

/// A TLV read from a buffer: its tag, content, the whole encoding, and what follows it.
pub struct Read<'a> {
    pub tag: u8,
    pub content: &'a [u8],
    pub whole: &'a [u8],
    pub rest: &'a [u8],
}

pub fn read(buf: &[u8]) -> Result<Read<'_>, Malformed> {
    let (&tag, after) = buf.split_first().ok_or(Malformed("empty"))?;
    let (&first, after) = after.split_first().ok_or(Malformed("no length"))?;
    let (len, after) = if first < 0x80 {
        (first as usize, after)
    } else {
        let k = (first & 0x7f) as usize;
        if k == 0 || k > 4 || after.len() < k {
            return Err(Malformed("bad length"));
        }
        (after[..k].iter().fold(0usize, |a, b| (a << 8) | *b as usize), &after[k..])
    };
    if after.len() < len {
        return Err(Malformed("length past the end"));
    }
    let header = buf.len() - after.len();
    Ok(Read { tag, content: &after[..len], whole: &buf[..header + len], rest: &after[len..] })
}

/// Read a TLV that must carry `tag`.
pub fn expect<'a>(buf: &'a [u8], tag: u8, what: &'static str) -> Result<Read<'a>, Malformed> {
    let r = read(buf)?;
    if r.tag != tag {
        return Err(Malformed(what));
    }
    Ok(r)
}

/// Every TLV in `buf`, in order.
pub fn items(mut buf: &[u8]) -> Result<Vec<Read<'_>>, Malformed> {
    let mut out = vec![];
    while !buf.is_empty() {
        let r = read(buf)?;
        buf = r.rest;
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lengths_and_integers_round_trip() {
        let big = vec![7u8; 300];
        let t = tlv(OCTET_STRING, &big);
        assert_eq!(&t[..4], &[0x04, 0x82, 0x01, 0x2c]);
        let r = read(&t).unwrap();
        assert_eq!((r.tag, r.content.len(), r.rest.len()), (OCTET_STRING, 300, 0));
        assert_eq!(uint(&[0x80]), vec![0x02, 0x02, 0x00, 0x80]);
        assert_eq!(uint(&[0, 0, 5]), vec![0x02, 0x01, 0x05]);
    }

    #[test]
    fn times_pick_utc_or_generalized() {
        let t: jiff::Timestamp = "2026-12-03T13:00:05Z".parse().unwrap();
        assert_eq!(time(t), tlv(UTC_TIME, b"261203130005Z"));
        let t: jiff::Timestamp = "2051-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(time(t)[0], GENERALIZED_TIME);
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        assert!(read(&[0x30, 0x05, 1, 2]).is_err());
        assert!(read(&[0x30]).is_err());
        assert!(read(&[0x30, 0x85, 0, 0, 0, 0, 1]).is_err());
    }
}
