//! Files that arrive packed: the one file of a ZIP (Garmin's activity download), a gzip stream
//! (Polar's TCX). Used by the export and by a provider that reads a file inside a query.

/// Why a ZIP gave no file of the kind asked for (said as the cause, after what was being read).
#[derive(Debug, thiserror::Error)]
pub enum UnzipError {
    /// Not a ZIP, or a damaged one.
    #[error("{0}")]
    Zip(#[from] zip::result::ZipError),
    /// The file's bytes could not be inflated.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    #[error("{files} file(s), none ending in .{ext}")]
    NoneWith { files: usize, ext: String },
}

/// The first file named `*.<ext>` inside a ZIP, and its name.
pub fn unzip_one(b: &[u8], ext: &str) -> Result<(String, Vec<u8>), UnzipError> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(b))?;
    for i in 0..z.len() {
        let mut f = z.by_index(i)?;
        let name = f.name()?.to_string();
        if name.to_ascii_lowercase().ends_with(&format!(".{ext}")) {
            let mut out = vec![];
            f.read_to_end(&mut out)?;
            return Ok((name, out));
        }
    }
    Err(UnzipError::NoneWith { files: z.len(), ext: ext.to_string() })
}

pub fn gunzip(b: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = vec![];
    flate2::read::GzDecoder::new(b).read_to_end(&mut out)?;
    Ok(out)
}
