//! Files that arrive packed: the one file of a ZIP (Garmin's activity download), a gzip stream
//! (Polar's TCX). Used by the export and by a provider that reads a file inside a query.

/// The first file named `*.<ext>` inside a ZIP, and its name.
pub fn unzip_one(b: &[u8], ext: &str) -> Result<(String, Vec<u8>), String> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(b)).map_err(|e| e.to_string())?;
    for i in 0..z.len() {
        let mut f = z.by_index(i).map_err(|e| e.to_string())?;
        let name = f.name().map_err(|e| e.to_string())?.to_string();
        if name.to_ascii_lowercase().ends_with(&format!(".{ext}")) {
            let mut out = vec![];
            f.read_to_end(&mut out).map_err(|e| e.to_string())?;
            return Ok((name, out));
        }
    }
    Err(format!("{} file(s), none ending in .{ext}", z.len()))
}

pub fn gunzip(b: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = vec![];
    flate2::read::GzDecoder::new(b).read_to_end(&mut out)?;
    Ok(out)
}
