//! Encryption at rest for a hosted server's tenants: every file in a tenant's folder that holds a
//! secret (`tokens.json`: provider access and refresh tokens, API keys, Garmin sessions;
//! `settings.json`: an imported app's client secret) is sealed with XChaCha20-Poly1305 under a key
//! the operator keeps outside the tenants folder. A copy of the disk or a backup without that key
//! yields no secret.
//!
//! A sealed file is a small JSON envelope naming the cipher and the key's id (a fingerprint, never
//! the key), so a file read with the wrong key is said as such, with the id it needs. The
//! associated data binds a file to its tenant and its name: a sealed `tokens.json` moved into
//! another tenant's folder opens nothing.
use crate::secret::Secret;
use base64::Engine as _;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The variable holding the key itself (64 hex digits, or 32 bytes in base64).
pub const KEY_ENV: &str = "VITALS_TENANTS_KEY";
/// The variable naming a key file (its first line is the key).
pub const KEY_FILE_ENV: &str = "VITALS_TENANTS_KEY_FILE";
/// The envelope's format version.
const VERSION: u32 = 1;
const CIPHER: &str = "XChaCha20-Poly1305";
/// Fewer distinct byte values than this in 32 bytes is not a random key (a pattern, a word, zeros).
const MIN_DISTINCT: usize = 16;
/// How to make a good key, said with every refusal.
pub const MAKE_ONE: &str = "make one with `vitals-mcp tenant new-key <file outside the tenants folder>` (or `openssl rand -hex 32`)";

/// Why a key or a sealed file could not be used. No variant carries a key or a secret.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    #[error(
        "a server of several people keeps each person's provider tokens encrypted, and no key was given: send --key-file FILE, \
         or set {KEY_FILE_ENV} (a file) or {KEY_ENV} (the key); {MAKE_ONE}"
    )]
    Missing,
    #[error("the tenants key {from} is not a key: {why}; {MAKE_ONE}")]
    Weak { from: String, why: String },
    #[error("the tenants key file {0} cannot be read ({1})")]
    Unreadable(PathBuf, String),
    #[error("the tenants key file {0} can be read by other users (mode {1:04o}): run `chmod 600 {0}` and start again")]
    Open(PathBuf, u32),
    #[error("the tenants key file {0} is inside the tenants folder, so any copy of the folder would carry its key: move it out (for example to /etc/vitals/)")]
    Inside(PathBuf),
    #[error("{what} is encrypted under key {needs}, and the key given is {given}: start with the key that sealed it (after `tenant rotate-key`, the new one)")]
    WrongKey { what: String, needs: String, given: String },
    /// A new key file could not be made (it exists already, or its folder cannot be written).
    #[error("{0} could not be created ({1}); it must not exist yet")]
    NotCreated(PathBuf, std::io::ErrorKind),
    #[error("{0} could not be written ({1})")]
    NotWritten(PathBuf, std::io::ErrorKind),
    #[error("{0} is encrypted, and no key was given to open it: send the tenants key (--key-file, {KEY_FILE_ENV} or {KEY_ENV})")]
    Locked(String),
    #[error("{0} is damaged or was changed by hand: it does not open under its key (nothing in it can be trusted); the person must connect again")]
    Damaged(String),
}

/// The operator's key, and its id. Debug shows the id alone.
pub struct Vault {
    key: Zeroizing<[u8; 32]>,
    id: String,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Vault({})", self.id)
    }
}

impl PartialEq for Vault {
    fn eq(&self, other: &Vault) -> bool {
        self.id == other.id
    }
}

impl Eq for Vault {}

/// A sealed file as it sits on disk.
#[derive(Serialize, Deserialize)]
struct Envelope {
    vitals_sealed: u32,
    cipher: String,
    key_id: String,
    nonce: String,
    ciphertext: String,
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD_NO_PAD
}

impl Vault {
    /// A key from its text: 64 hex digits, or 32 bytes in base64 or base64url (padded or not).
    /// `from` says where it came from, for the error.
    pub fn from_text(text: &str, from: &str) -> Result<Vault, VaultError> {
        let t = text.trim();
        let weak = |why: &str| VaultError::Weak { from: from.to_string(), why: why.to_string() };
        if t.is_empty() {
            return Err(weak("it is empty"));
        }
        let bytes: Zeroizing<Vec<u8>> = Zeroizing::new(if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..32).map(|i| u8::from_str_radix(&t[2 * i..2 * i + 2], 16).expect("hex digits")).collect()
        } else {
            let unpadded = t.trim_end_matches('=');
            let std = unpadded.replace('-', "+").replace('_', "/");
            b64()
                .decode(std.as_bytes())
                .map_err(|_| weak(&format!("it is {} characters that are neither 64 hex digits nor 32 bytes in base64", t.chars().count())))?
        });
        if bytes.len() != 32 {
            return Err(weak(&format!("its {} characters hold {} bytes, and a key is 32 random bytes (64 hex digits)", t.chars().count(), bytes.len())));
        }
        let distinct = bytes.iter().collect::<std::collections::BTreeSet<_>>().len();
        if distinct < MIN_DISTINCT {
            return Err(weak(&format!("its 32 bytes take only {distinct} different values, so it was not made at random")));
        }
        let mut key = Zeroizing::new([0u8; 32]);
        key.copy_from_slice(&bytes);
        Ok(Vault::of(key))
    }

    fn of(key: Zeroizing<[u8; 32]>) -> Vault {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        h.update(b"vitals tenants key id\0");
        h.update(key.as_slice());
        let id = format!("k-{}", h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect::<String>());
        Vault { key, id }
    }

    /// A new random key and its text (64 hex digits), to be written once to the operator's file.
    pub fn generate() -> (Vault, Secret) {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        let text = Secret::new(key.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let mut raw = Zeroizing::new([0u8; 32]);
        raw.copy_from_slice(&key);
        (Vault::of(raw), text)
    }

    /// The key a hosted server was given: `--key-file`, else `VITALS_TENANTS_KEY_FILE`, else
    /// `VITALS_TENANTS_KEY` of the operator's settings; checked to be strong, private and outside
    /// `tenants_dir`.
    pub fn given(key_file: Option<&Path>, tenants_dir: &Path, config: &crate::config::Config) -> Result<Vault, VaultError> {
        let file = key_file.map(Path::to_path_buf).or_else(|| config.var(KEY_FILE_ENV).map(PathBuf::from));
        match (file, config.var(KEY_ENV)) {
            (Some(f), _) => Vault::from_file(&f, tenants_dir),
            (None, Some(k)) => Vault::from_text(&Zeroizing::new(k.to_string()), &format!("in {KEY_ENV}")),
            (None, None) => Err(VaultError::Missing),
        }
    }

    /// A key file: its first line, the file readable by its owner alone and not inside the tenants folder.
    pub fn from_file(path: &Path, tenants_dir: &Path) -> Result<Vault, VaultError> {
        let unreadable = |e: std::io::Error| VaultError::Unreadable(path.to_path_buf(), e.kind().to_string());
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(VaultError::Open(path.to_path_buf(), mode));
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        if let (Ok(f), Ok(d)) = (path.canonicalize(), tenants_dir.canonicalize()) {
            if f.starts_with(&d) {
                return Err(VaultError::Inside(path.to_path_buf()));
            }
        }
        let body = Zeroizing::new(std::fs::read_to_string(path).map_err(unreadable)?);
        Vault::from_text(body.lines().next().unwrap_or(""), &format!("file {}", path.display()))
    }

    /// The key's id (a fingerprint, safe to show): which key sealed a file.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(self.key.as_slice().into())
    }

    /// `plain` sealed for the file named by `aad` (its tenant and name): the envelope's bytes.
    pub fn seal(&self, plain: &[u8], aad: &str) -> Vec<u8> {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let ct = self.cipher().encrypt(&nonce, Payload { msg: plain, aad: aad.as_bytes() }).expect("XChaCha20-Poly1305 seals any length");
        let env = Envelope { vitals_sealed: VERSION, cipher: CIPHER.into(), key_id: self.id.clone(), nonce: b64().encode(nonce), ciphertext: b64().encode(ct) };
        serde_json::to_vec_pretty(&env).expect("an envelope serialises")
    }

    /// The plain bytes of a sealed file; `what` names it in an error (never with its content).
    pub fn open(&self, sealed: &[u8], aad: &str, what: &str) -> Result<Zeroizing<Vec<u8>>, VaultError> {
        let env = envelope(sealed).ok_or_else(|| VaultError::Damaged(what.to_string()))?;
        if env.key_id != self.id {
            return Err(VaultError::WrongKey { what: what.to_string(), needs: env.key_id, given: self.id.clone() });
        }
        let nonce = b64().decode(&env.nonce).ok().filter(|n| n.len() == 24).ok_or_else(|| VaultError::Damaged(what.to_string()))?;
        let ct = b64().decode(&env.ciphertext).map_err(|_| VaultError::Damaged(what.to_string()))?;
        self.cipher()
            .decrypt(XNonce::from_slice(&nonce), Payload { msg: &ct, aad: aad.as_bytes() })
            .map(Zeroizing::new)
            .map_err(|_| VaultError::Damaged(what.to_string()))
    }
}

fn envelope(bytes: &[u8]) -> Option<Envelope> {
    serde_json::from_slice::<Envelope>(bytes).ok().filter(|e| e.vitals_sealed == VERSION && e.cipher == CIPHER)
}

/// Whether these bytes are a sealed file (whatever key sealed it).
pub fn is_sealed(bytes: &[u8]) -> bool {
    envelope(bytes).is_some()
}

/// The id of the key that sealed these bytes, if they are a sealed file.
pub fn sealed_by(bytes: &[u8]) -> Option<String> {
    envelope(bytes).map(|e| e.key_id)
}

/// What a sealed file of a tenant is bound to: its tenant folder's name and its own name.
pub fn aad_for(path: &Path) -> String {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    format!("vitals:{}:{}", name(path.parent()), name(Some(path)))
}

/// Write a new key file (0600, never over an existing file): the key's id.
pub fn write_new_key(path: &Path, tenants_dir: Option<&Path>) -> Result<Vault, VaultError> {
    if let (Some(parent), Some(d)) = (path.parent().and_then(|p| p.canonicalize().ok()), tenants_dir.and_then(|d| d.canonicalize().ok())) {
        if parent.starts_with(&d) {
            return Err(VaultError::Inside(path.to_path_buf()));
        }
    }
    let (vault, text) = Vault::generate();
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    use std::io::Write as _;
    let mut f = opts.open(path).map_err(|e| VaultError::NotCreated(path.to_path_buf(), e.kind()))?;
    f.write_all(format!("{}\n", text.expose()).as_bytes()).and_then(|()| f.sync_all()).map_err(|e| VaultError::NotWritten(path.to_path_buf(), e.kind()))?;
    Ok(vault)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp/vault")).join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn sealed_bytes_open_only_with_their_key_and_for_their_file() {
        let (v, text) = Vault::generate();
        let sealed = v.seal(b"{\"oura\":{\"access_token\":\"SECRET-A\"}}", "vitals:t1:tokens.json");
        let shown = String::from_utf8_lossy(&sealed).to_string();
        assert!(!shown.contains("SECRET-A") && !shown.contains(text.expose()) && shown.contains(v.id()), "{shown}");
        assert!(is_sealed(&sealed));
        assert_eq!(&v.open(&sealed, "vitals:t1:tokens.json", "t1").unwrap()[..], b"{\"oura\":{\"access_token\":\"SECRET-A\"}}");
        assert_eq!(v.open(&sealed, "vitals:t2:tokens.json", "t2").unwrap_err(), VaultError::Damaged("t2".into()), "another tenant's folder");
        let (other, _) = Vault::generate();
        let e = other.open(&sealed, "vitals:t1:tokens.json", "t1").unwrap_err();
        assert!(matches!(&e, VaultError::WrongKey { needs, .. } if needs == v.id()), "{e}");
        let mut bent = sealed.clone();
        let at = shown.find("ciphertext").unwrap() + 16;
        bent[at] = if bent[at] == b'A' { b'B' } else { b'A' };
        assert!(matches!(v.open(&bent, "vitals:t1:tokens.json", "t1").unwrap_err(), VaultError::Damaged(_)));
        assert_eq!(Vault::from_text(text.expose(), "t").unwrap(), v, "the text is the key");
        assert!(!format!("{v:?}").contains(text.expose()));
    }

    #[test]
    fn weak_open_or_misplaced_keys_are_refused_with_what_to_do() {
        for (bad, why) in [("", "empty"), ("abc", "3 characters hold 2 bytes"), (&"0".repeat(64), "different values"), (&"ab".repeat(32), "different values")] {
            let e = Vault::from_text(bad, "in test").unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("tenant new-key"), "{bad}: {e}");
        }
        let short = b64().encode([7u8; 16]);
        assert!(Vault::from_text(&short, "x").unwrap_err().to_string().contains("16 bytes"));
        let (v, text) = Vault::generate();
        let as_b64 = b64().encode((0..32).map(|i| u8::from_str_radix(&text.expose()[2 * i..2 * i + 2], 16).unwrap()).collect::<Vec<u8>>());
        assert_eq!(Vault::from_text(&as_b64, "b64").unwrap(), v);
        let d = scratch("files");
        let tenants = d.join("tenants");
        std::fs::create_dir_all(&tenants).unwrap();
        let inside = tenants.join("k");
        write_new_key(&d.join("k"), Some(&tenants)).unwrap();
        let e = write_new_key(&d.join("k"), Some(&tenants)).unwrap_err();
        assert!(matches!(e, VaultError::NotCreated(_, std::io::ErrorKind::AlreadyExists)) && e.to_string().contains("must not exist"), "{e}");
        assert!(Vault::from_file(&d.join("k"), &tenants).is_ok());
        std::fs::copy(d.join("k"), &inside).unwrap();
        assert!(matches!(Vault::from_file(&inside, &tenants), Err(VaultError::Inside(_))));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(d.join("k"), std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = Vault::from_file(&d.join("k"), &tenants).unwrap_err().to_string();
            assert!(e.contains("chmod 600") && e.contains("0644"), "{e}");
        }
    }
}
