//! The files a person chose for a file connection (an Apple Health export): their paths only,
//! in `files.json` beside the token file (sealed like it in a hosted tenant's folder). The data
//! stays where it is: vitals never copies it.
use super::home::Home;
use super::StoreError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a chosen file could not be remembered or forgotten: the person's path (bad input), or this
/// machine's folder (local I/O).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path} cannot be read: {source}")]
    Unreadable { path: PathBuf, source: std::io::Error },
    #[error("{0} is not a file")]
    NotAFile(PathBuf),
    #[error("there is no config folder to remember the path in (set VITALS_CONFIG_DIR)")]
    NoFolder,
    /// `files.json` could not be read or written (or opened, in a tenant's sealed folder).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// At the edges (the settings app's commands, the CLI) a failure is said as it reads.
impl From<FileError> for String {
    fn from(e: FileError) -> String {
        e.to_string()
    }
}

/// The folder and the key of `home`'s files, or None without a config folder.
fn place(home: &Home) -> Option<(PathBuf, Option<std::sync::Arc<super::vault::Vault>>)> {
    match home {
        Home::Local { config } => super::default_dir(config).map(|d| (d, None)),
        Home::Tenant { dir, vault, .. } => Some((dir.clone(), vault.clone())),
    }
}

fn read(home: &Home) -> Result<BTreeMap<String, PathBuf>, StoreError> {
    let Some((dir, vault)) = place(home) else { return Ok(BTreeMap::new()) };
    super::store::read_json_sealed(&dir.join("files.json"), vault.as_deref(), "the chosen files")
}

/// The file saved for `provider`, if any.
pub fn saved_file(home: &Home, provider: &str) -> Option<PathBuf> {
    read(home).ok()?.remove(provider)
}

/// Remember `path` for `provider`: it must be a file that exists, and is kept as an absolute path.
pub fn save_file(home: &Home, provider: &str, path: &std::path::Path) -> Result<PathBuf, FileError> {
    let abs = std::fs::canonicalize(path).map_err(|source| FileError::Unreadable { path: path.to_path_buf(), source })?;
    if !abs.is_file() {
        return Err(FileError::NotAFile(path.to_path_buf()));
    }
    let (dir, vault) = place(home).ok_or(FileError::NoFolder)?;
    let mut all = read(home)?;
    all.insert(provider.to_string(), abs.clone());
    super::store::write_json_sealed(&dir, &dir.join("files.json"), &all, vault.as_deref())?;
    Ok(abs)
}

/// Forget the file of `provider` (the file itself is left alone). Returns whether one was saved.
pub fn forget_file(home: &Home, provider: &str) -> Result<bool, StoreError> {
    let mut all = read(home)?;
    // Without a folder nothing was read, so nothing is removed above.
    let Some((dir, vault)) = place(home).filter(|_| all.remove(provider).is_some()) else {
        return Ok(false);
    };
    super::store::write_json_sealed(&dir, &dir.join("files.json"), &all, vault.as_deref())?;
    Ok(true)
}
