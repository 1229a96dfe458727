//! The files a person chose for a file connection (an Apple Health export): their paths only,
//! in `files.json` beside the token file (sealed like it in a hosted tenant's folder). The data
//! stays where it is: vitals never copies it.
use super::home::Home;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The folder and the key of `home`'s files, or None without a config folder.
fn place(home: &Home) -> Option<(PathBuf, Option<std::sync::Arc<super::vault::Vault>>)> {
    match home {
        Home::Local { config } => super::default_dir(config).map(|d| (d, None)),
        Home::Tenant { dir, vault, .. } => Some((dir.clone(), vault.clone())),
    }
}

fn read(home: &Home) -> Result<BTreeMap<String, PathBuf>, String> {
    let Some((dir, vault)) = place(home) else { return Ok(BTreeMap::new()) };
    super::store::read_json_sealed(&dir.join("files.json"), vault.as_deref(), "the chosen files").map_err(|e| e.to_string())
}

/// The file saved for `provider`, if any.
pub fn saved_file(home: &Home, provider: &str) -> Option<PathBuf> {
    read(home).ok()?.remove(provider)
}

/// Remember `path` for `provider`: it must be a file that exists, and is kept as an absolute path.
pub fn save_file(home: &Home, provider: &str, path: &std::path::Path) -> Result<PathBuf, String> {
    let abs = std::fs::canonicalize(path).map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
    if !abs.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    let (dir, vault) = place(home).ok_or("there is no config folder to remember the path in (set VITALS_CONFIG_DIR)")?;
    let mut all = read(home)?;
    all.insert(provider.to_string(), abs.clone());
    super::store::write_json_sealed(&dir, &dir.join("files.json"), &all, vault.as_deref()).map_err(|e| e.to_string())?;
    Ok(abs)
}

/// Forget the file of `provider` (the file itself is left alone). Returns whether one was saved.
pub fn forget_file(home: &Home, provider: &str) -> Result<bool, String> {
    let mut all = read(home)?;
    if all.remove(provider).is_none() {
        return Ok(false);
    }
    let (dir, vault) = place(home).ok_or("no config folder")?;
    super::store::write_json_sealed(&dir, &dir.join("files.json"), &all, vault.as_deref()).map_err(|e| e.to_string())?;
    Ok(true)
}
