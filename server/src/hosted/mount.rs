//! Where the MCP endpoint lives: `--path`, or a random path made once and kept (0600) in the config
//! folder so a restart serves the same URL. The path is the first secret of a hosted server: anyone
//! who has it can read (unless `--bearer-file` asks for more), so it is long, random and URL-safe.
use crate::accounts::store::{read_json, write_json_private};
use std::path::Path;

/// The file, in the config folder, that keeps the generated path.
pub const PATH_FILE: &str = "http-path.json";

/// Why no MCP path could be served: the one sent is not a secret (bad input), or the one to keep
/// has nowhere to be kept (local I/O).
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    #[error(
        "`--path` {0:?} is not a secret path: send /<secret>/mcp where the secret is at least 22 characters of A-Z a-z 0-9 - _ \
         (about 128 bits), or leave --path out and a random one is made and kept"
    )]
    NotSecret(String),
    #[error("this machine has no configuration folder to keep the MCP path in; set VITALS_CONFIG_DIR, or send --path /<secret>/mcp")]
    NoFolder,
    /// The file that keeps the path could not be read or written.
    #[error(transparent)]
    Store(#[from] crate::accounts::StoreError),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// `/<secret>/mcp`.
    pub path: String,
    /// Where it came from, in words (`--path`, or the file that keeps it).
    pub from: String,
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Kept {
    path: Option<String>,
}

impl Mount {
    /// `--path` when given (checked), else the kept one, else a new one, kept.
    pub fn resolve(given: Option<&str>, config: Option<&Path>) -> Result<Mount, MountError> {
        if let Some(p) = given {
            check(p)?;
            return Ok(Mount { path: p.to_string(), from: "--path".into() });
        }
        let dir = config.ok_or(MountError::NoFolder)?;
        let file = dir.join(PATH_FILE);
        let kept: Kept = read_json(&file)?;
        if let Some(p) = kept.path.filter(|p| check(p).is_ok()) {
            return Ok(Mount { path: p, from: file.display().to_string() });
        }
        let path = format!("/{}/mcp", random_token());
        write_json_private(dir, &file, &Kept { path: Some(path.clone()) })?;
        Ok(Mount { path, from: format!("{} (new)", file.display()) })
    }

    /// `/<secret>`: what the person's routes (`/mcp`, `/callback/<provider>`) hang under.
    pub fn base(&self) -> &str {
        self.path.strip_suffix("/mcp").unwrap_or(&self.path)
    }
}

/// 32 random bytes (256 bits), base64url without padding: 43 URL-safe characters.
pub fn random_token() -> String {
    oauth2::CsrfToken::new_random_len(32).secret().clone()
}

/// A path a client can be given: `/<at least 22 URL-safe characters>/mcp`.
fn check(p: &str) -> Result<(), MountError> {
    let secret = p.strip_prefix('/').and_then(|r| r.strip_suffix("/mcp")).unwrap_or("");
    let safe = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if secret.len() < 22 || !secret.chars().all(safe) {
        return Err(MountError::NotSecret(p.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_path_is_kept_and_served_again() {
        let d = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp")).join(format!("vitals-mount-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let a = Mount::resolve(None, Some(&d)).unwrap();
        assert!(a.from.ends_with("(new)"), "{a:?}");
        assert_eq!(a.path.len(), "/".len() + 43 + "/mcp".len(), "{a:?}");
        let b = Mount::resolve(None, Some(&d)).unwrap();
        assert_eq!(a.path, b.path);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(d.join(PATH_FILE)).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(format!("{}/mcp", a.base()), a.path);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_short_or_strange_path_is_refused_with_what_to_send() {
        for p in ["/mcp", "/short/mcp", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaa/other", "/aaaaaaaaaaaaaaaaaaaaaa aaaa/mcp", "aaaaaaaaaaaaaaaaaaaaaaaaa/mcp"] {
            let e = Mount::resolve(Some(p), None).unwrap_err();
            assert!(matches!(e, MountError::NotSecret(_)), "{e:?}");
            let e = e.to_string();
            assert!(e.contains("`--path`") && e.contains("/<secret>/mcp"), "{e}");
        }
        assert!(Mount::resolve(Some("/abcdefghijklmnopqrstuvwxyz012345/mcp"), None).is_ok());
    }
}
