//! What a request must carry before rmcp sees it. The path is checked by the router (anything else
//! is a bare 404); here, the bearer token of `--bearer-file`, compared in constant time. rmcp itself
//! checks `Host` and `Origin` (DNS rebinding), `MCP-Protocol-Version` and the body's size.
use crate::secret::Secret;
use std::path::Path;
use subtle::ConstantTimeEq;

/// The shortest token a bearer file may hold: a short one could be guessed.
pub const BEARER_MIN: usize = 32;

/// Why a bearer file gives no token: it cannot be read (local I/O), or what it holds could be
/// guessed (bad input). Neither message shows what the file holds.
#[derive(Debug, thiserror::Error)]
pub enum BearerError {
    #[error("`--bearer-file` {path} cannot be read: {source}")]
    Unreadable { path: std::path::PathBuf, source: std::io::Error },
    #[error(
        "`--bearer-file` {path}: its first line must be a token of at least {BEARER_MIN} printable characters without spaces \
         (for example the output of `openssl rand -hex 32`); it has {chars} character(s)"
    )]
    Weak { path: std::path::PathBuf, chars: usize },
}

/// The token of a bearer file: its first line, trimmed.
pub fn read_bearer(path: &Path) -> Result<Secret, BearerError> {
    let body = std::fs::read_to_string(path).map_err(|source| BearerError::Unreadable { path: path.to_path_buf(), source })?;
    let token = body.lines().next().unwrap_or("").trim().to_string();
    if token.len() < BEARER_MIN || token.chars().any(|c| !c.is_ascii_graphic()) {
        return Err(BearerError::Weak { path: path.to_path_buf(), chars: token.chars().count() });
    }
    Ok(Secret::new(token))
}

/// Whether `header` (the request's `Authorization`) carries `token`.
pub fn bearer_matches(header: Option<&[u8]>, token: &Secret) -> bool {
    let Some(given) = header.and_then(|h| h.strip_prefix(b"Bearer ")) else {
        return false;
    };
    given.ct_eq(token.expose().as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_passes() {
        let t = Secret::new("a".repeat(40));
        assert!(bearer_matches(Some(format!("Bearer {}", "a".repeat(40)).as_bytes()), &t));
        for bad in [
            None,
            Some(b"".as_slice()),
            Some(b"Bearer "),
            Some(b"Basic aaaa"),
            Some(format!("Bearer {}", "a".repeat(39)).as_bytes()),
            Some(format!("bearer {}", "a".repeat(40)).as_bytes()),
        ] {
            assert!(!bearer_matches(bad, &t), "{bad:?}");
        }
    }

    #[test]
    fn a_short_token_file_is_refused_without_showing_it() {
        let f = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp")).join(format!("vitals-bearer-{}", std::process::id()));
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, "hunter2-short\n").unwrap();
        let e = read_bearer(&f).unwrap_err().to_string();
        assert!(e.contains("at least 32") && !e.contains("hunter2"), "{e}");
        std::fs::write(&f, format!("{}\nignored", "b".repeat(64))).unwrap();
        assert_eq!(read_bearer(&f).unwrap().expose(), "b".repeat(64));
        std::fs::remove_file(&f).unwrap();
    }
}
