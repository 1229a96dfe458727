//! Invitations: the one-time links an operator makes (`vitals-mcp tenant invite`) to let one person
//! make their own tenant. A link holds a random token; the tenants folder keeps only its SHA-256
//! (`.invitations/<hash>`, 0600, holding the expiry), so the folder's contents open nothing. Claimed
//! by renaming the file away before the tenant is made: two browsers racing get one tenant.
use super::super::tenants::{private_dir, private_file, FolderError, Tenants};
use crate::secret::Secret;
use jiff::Timestamp;
use std::path::PathBuf;

/// The longest an invitation may be valid.
pub const MAX_DAYS: u32 = 30;

/// Why an invitation does not let someone in.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("this invitation was used already, or never existed: ask whoever sent it for a new one")]
    Unknown,
    #[error("this invitation expired on {0}: ask whoever sent it for a new one")]
    Expired(Timestamp),
    #[error("the invitations could not be read ({0})")]
    Store(String),
}

pub struct Invitations {
    dir: PathBuf,
}

/// The SHA-256 of a token, hex: the name its file is kept under.
pub use crate::secret::digest;

impl Invitations {
    pub fn of(t: &Tenants) -> Invitations {
        Invitations { dir: t.dir.join(".invitations") }
    }

    /// A new invitation valid for `days`: its token (for the link) and when it expires.
    pub fn make(&self, days: u32) -> Result<(Secret, Timestamp), FolderError> {
        if !(1..=MAX_DAYS).contains(&days) {
            return Err(FolderError::Input(format!("`--days` {days}: an invitation is valid from 1 to {MAX_DAYS} days; send e.g. --days 7")));
        }
        private_dir(&self.dir)?;
        let token = Secret::new(super::super::mount::random_token());
        // Whole seconds: what the file keeps is what is said.
        let expires = Timestamp::from_second(Timestamp::now().as_second() + 24 * 3600 * i64::from(days)).map_err(|e| FolderError::Input(e.to_string()))?;
        private_file(&self.dir.join(digest(token.expose())), expires.as_second().to_string().as_bytes())?;
        Ok((token, expires))
    }

    /// Whether `token` lets someone in now (an expired one is removed when seen).
    pub fn check(&self, token: &str) -> Result<Timestamp, Refused> {
        let path = self.path(token).ok_or(Refused::Unknown)?;
        let body = match std::fs::read_to_string(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refused::Unknown),
            Err(e) => return Err(Refused::Store(e.to_string())),
        };
        let expires = body.trim().parse::<i64>().ok().and_then(|s| Timestamp::from_second(s).ok()).ok_or(Refused::Unknown)?;
        if expires <= Timestamp::now() {
            let _ = std::fs::remove_file(&path);
            return Err(Refused::Expired(expires));
        }
        Ok(expires)
    }

    /// Use `token` up: from now on it lets no one in. Err when it did not let anyone in.
    pub fn claim(&self, token: &str) -> Result<(), Refused> {
        self.check(token)?;
        let path = self.path(token).ok_or(Refused::Unknown)?;
        // The rename is the claim: of two at once, one finds the file gone.
        let taken = path.with_extension("claimed");
        std::fs::rename(&path, &taken).map_err(|_| Refused::Unknown)?;
        let _ = std::fs::remove_file(taken);
        Ok(())
    }

    /// The file of a token of the shape we make (43 URL-safe characters); None for anything else.
    fn path(&self, token: &str) -> Option<PathBuf> {
        let shaped = token.len() == 43 && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        shaped.then(|| self.dir.join(digest(token)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invitations(name: &str) -> Invitations {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/invitations")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        Invitations::of(&Tenants::at(dir))
    }

    #[test]
    fn an_invitation_lets_one_person_in_once() {
        let inv = invitations("once");
        let (token, expires) = inv.make(7).unwrap();
        assert!(expires > Timestamp::now() + jiff::SignedDuration::from_hours(24 * 7 - 1));
        assert_eq!(inv.check(token.expose()), Ok(expires));
        inv.claim(token.expose()).unwrap();
        assert_eq!(inv.claim(token.expose()), Err(Refused::Unknown), "used up");
        assert_eq!(inv.check("x"), Err(Refused::Unknown));
        let kept: Vec<_> = std::fs::read_dir(&inv.dir).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        assert!(kept.is_empty(), "nothing left behind: {kept:?}");
    }

    #[test]
    fn an_expired_invitation_says_when_and_is_removed() {
        let inv = invitations("expired");
        let (token, _) = inv.make(1).unwrap();
        let past = Timestamp::now() - jiff::SignedDuration::from_secs(5);
        std::fs::write(inv.dir.join(digest(token.expose())), past.as_second().to_string()).unwrap();
        assert!(matches!(inv.check(token.expose()), Err(Refused::Expired(_))));
        assert_eq!(inv.check(token.expose()), Err(Refused::Unknown), "removed once seen expired");
        assert!(inv.make(0).is_err() && inv.make(MAX_DAYS + 1).is_err());
    }

    #[test]
    fn the_folder_keeps_no_token() {
        let inv = invitations("hashed");
        let (token, _) = inv.make(2).unwrap();
        let names: Vec<String> = std::fs::read_dir(&inv.dir).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        assert_eq!(names, vec![digest(token.expose())]);
        let body = std::fs::read_to_string(inv.dir.join(&names[0])).unwrap();
        assert!(!body.contains(token.expose()));
    }
}
