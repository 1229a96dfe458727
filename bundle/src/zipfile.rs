//! A reproducible zip of a staged folder: entries sorted, timestamps fixed (1980-01-01), Unix
//! modes (0755 for what runs, 0644 for the rest), files only (no directory entries), an ignore
//! list; and the end-of-central-directory record, whose comment length the signature patches.
use std::io::Write;
use std::path::Path;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, System, ZipWriter};

pub const EOCD_SIG: &[u8] = b"PK\x05\x06";
const EOCD_LEN: usize = 22;

/// Names never packed, wherever they are (what `mcpb pack` also leaves out that can occur here).
pub const IGNORED: &[&str] = &[".DS_Store", "Thumbs.db", ".git", ".gitignore", ".mcpbignore", ".env", "node_modules"];
const IGNORED_SUFFIXES: &[&str] = &[".log", ".map", ".mcpb", ".tmp"];

#[derive(Debug, thiserror::Error)]
pub enum ZipError {
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error("zip: {0}")]
    Zip(String),
    #[error("no end-of-central-directory record where a strict reader looks for it")]
    NoEocd,
    #[error("the comment would be {0} bytes; a zip comment holds at most 65,535")]
    CommentTooLong(usize),
}

/// Whether a packed path gets the executable mode: the launcher and the server binaries.
pub fn is_executable(rel: &str) -> bool {
    rel.starts_with("server/")
}

fn ignored(name: &str) -> bool {
    IGNORED.contains(&name) || IGNORED_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Every file under `root` (relative, `/`-separated, sorted), skipping the ignore list.
pub fn files(root: &Path) -> Result<Vec<String>, ZipError> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), ZipError> {
        let io = |e: std::io::Error| ZipError::Io { path: dir.display().to_string(), reason: e.to_string() };
        for e in std::fs::read_dir(dir).map_err(io)? {
            let e = e.map_err(io)?;
            let name = e.file_name().to_string_lossy().to_string();
            if ignored(&name) {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out)?;
            } else {
                let rel = p.strip_prefix(root).expect("under the root").components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = vec![];
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

/// Zip the folder. The same folder always gives the same bytes.
pub fn pack(root: &Path) -> Result<Vec<u8>, ZipError> {
    let base = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(9))
        // zip picks DOS as "made by" when built for Windows; the modes need Unix.
        .system(System::Unix)
        .last_modified_time(DateTime::default());
    let mut w = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for rel in files(root)? {
        let data = std::fs::read(root.join(&rel)).map_err(|e| ZipError::Io { path: rel.clone(), reason: e.to_string() })?;
        let opts = base.unix_permissions(if is_executable(&rel) { 0o755 } else { 0o644 });
        w.start_file(rel.as_str(), opts).map_err(|e| ZipError::Zip(e.to_string()))?;
        w.write_all(&data).map_err(|e| ZipError::Zip(e.to_string()))?;
    }
    Ok(w.finish().map_err(|e| ZipError::Zip(e.to_string()))?.into_inner())
}

/// The end-of-central-directory record as a strict reader finds it.
#[derive(Debug, Clone, Copy)]
pub struct Eocd {
    pub offset: usize,
    pub comment_len: usize,
}

impl Eocd {
    /// The last end-record signature within the final 64 KiB + 22 bytes, as yauzl searches.
    pub fn find(file: &[u8]) -> Result<Eocd, ZipError> {
        let from = file.len().saturating_sub(EOCD_LEN + 0xffff);
        let at = file[from..].windows(4).rposition(|w| w == EOCD_SIG).map(|i| i + from).ok_or(ZipError::NoEocd)?;
        if at + EOCD_LEN > file.len() {
            return Err(ZipError::NoEocd);
        }
        Ok(Eocd { offset: at, comment_len: u16::from_le_bytes([file[at + 20], file[at + 21]]) as usize })
    }

    /// Where the archive ends by this record: it must be the file's length for strict readers.
    pub fn end(&self) -> usize {
        self.offset + EOCD_LEN + self.comment_len
    }

    pub fn set_comment_len(&self, file: &mut [u8], len: usize) -> Result<(), ZipError> {
        let v = u16::try_from(len).map_err(|_| ZipError::CommentTooLong(len))?;
        file[self.offset + 20..self.offset + 22].copy_from_slice(&v.to_le_bytes());
        Ok(())
    }
}
