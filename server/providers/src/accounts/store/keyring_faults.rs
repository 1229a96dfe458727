//! The keyring that answers, then fails (issue 22): a Secret Service that gets locked or goes
//! away while the server runs. keyring's own mock keeps nothing between entries, so this is a
//! small store behind keyring's credential API, in memory, that can be told to refuse reads,
//! writes or both.
use super::tests::{temp, tokens};
use super::*;
use keyring::credential::{Credential, CredentialApi, CredentialBuilderApi};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Shared {
    entries: HashMap<String, Vec<u8>>,
    refuse_reads: bool,
    refuse_writes: bool,
}

#[derive(Clone, Default)]
struct FakeKeyring(Arc<Mutex<Shared>>);

struct FakeEntry {
    user: String,
    shared: FakeKeyring,
}

fn locked() -> keyring::Error {
    keyring::Error::NoStorageAccess("org.freedesktop.Secret.Error.IsLocked: the collection is locked".into())
}

impl CredentialApi for FakeEntry {
    fn set_secret(&self, secret: &[u8]) -> keyring::Result<()> {
        let mut s = self.shared.0.lock().unwrap();
        if s.refuse_writes {
            return Err(locked());
        }
        s.entries.insert(self.user.clone(), secret.to_vec());
        Ok(())
    }
    fn get_secret(&self) -> keyring::Result<Vec<u8>> {
        let s = self.shared.0.lock().unwrap();
        if s.refuse_reads {
            return Err(locked());
        }
        s.entries.get(&self.user).cloned().ok_or(keyring::Error::NoEntry)
    }
    fn delete_credential(&self) -> keyring::Result<()> {
        let mut s = self.shared.0.lock().unwrap();
        if s.refuse_writes {
            return Err(locked());
        }
        s.entries.remove(&self.user).map(|_| ()).ok_or(keyring::Error::NoEntry)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CredentialBuilderApi for FakeKeyring {
    fn build(&self, _target: Option<&str>, _service: &str, user: &str) -> keyring::Result<Box<Credential>> {
        Ok(Box::new(FakeEntry { user: user.to_string(), shared: self.clone() }))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl FakeKeyring {
    fn refuse(&self, reads: bool, writes: bool) {
        let mut s = self.0.lock().unwrap();
        (s.refuse_reads, s.refuse_writes) = (reads, writes);
    }
}

#[test]
fn a_keyring_that_answers_then_fails_loses_no_login_and_says_what_to_do() {
    let keyring = FakeKeyring::default();
    let dir = temp();
    let s = TokenStore::keyring_of(&dir, Box::new(keyring.clone()));
    let old = tokens("A1-SECRET", "R1-SECRET");
    s.save("withings", &old).unwrap();
    assert_eq!(s.load("withings").unwrap(), Some(old.clone()));
    assert!(!s.path().exists(), "with the keyring answering, no token file is written");

    // Locked: nothing can be read, so nothing is renewed (the stored refresh token is not spent).
    keyring.refuse(true, true);
    let e = s.load("withings").unwrap_err().to_string();
    assert!(e.contains("OS keyring failed") && e.contains("locked") && e.contains("VITALS_TOKEN_STORE=file"), "{e}");
    let e = s.refresh_with("withings", &old, |_| panic!("a renewal whose result cannot be saved would retire the stored pair")).unwrap_err();
    assert!(matches!(e, StoreError::Keyring(_)), "{e}");
    assert!(!e.to_string().contains("SECRET"), "{e}");

    // Reads answer, writes fail: the renewal happens, is handed back to be kept in memory, said,
    // and the keyring still holds the old pair whole.
    keyring.refuse(false, true);
    let e = s.refresh_with("withings", &old, |_| Ok(tokens("A2-SECRET", "R2-SECRET"))).unwrap_err();
    let StoreError::Unsaved { why, fresh } = &e else { panic!("{e}") };
    assert_eq!(fresh.access.expose(), "A2-SECRET");
    assert!(why.contains("could not be saved") && why.contains("OS keyring failed") && why.contains("connect again"), "{why}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
    assert_eq!(s.load("withings").unwrap(), Some(old.clone()));
    assert!(!s.path().exists(), "a keyring that fails is not quietly replaced by a file");

    // It answers again: the renewed login is saved and read back.
    keyring.refuse(false, false);
    s.save("withings", fresh).unwrap();
    assert_eq!(s.load("withings").unwrap().unwrap().access.expose(), "A2-SECRET");
    assert_eq!(s.remove("withings").unwrap().map(|t| t.refresh.unwrap().expose().to_string()), Some("R2-SECRET".into()));
}
