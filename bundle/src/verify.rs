//! The bundle verifier (run after every signing, and by `cargo xtask verify`): the framing, the
//! strict zip trailer (what decides whether Claude Desktop opens the file), the digest, the RSA
//! signature with `certificates[0]`'s key, that `certificates[0]` is the SignerInfo's issuer and
//! serial, and the packed manifest, entry point, icon and executable modes.
use crate::der::{self, expect, items};
use crate::sign::{FOOTER, HEADER};
use crate::zipfile::{is_executable, Eocd};
use rsa::pkcs8::DecodePublicKey;
use rsa::sha2::{Digest, Sha256};
use serde_json::Value;
use std::io::Read;
use x509_cert::der::{Decode, Encode};

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("signature block: {0}")]
    Framing(&'static str),
    #[error(
        "the zip's end record does not end the file (comment length {comment}, {extra} bytes unaccounted): strict readers such as Claude Desktop's refuse it"
    )]
    Trailer { comment: usize, extra: i64 },
    #[error("{0}")]
    Zip(String),
    #[error("signature: {0}")]
    Der(#[from] der::Malformed),
    #[error("signature: the messageDigest is not the SHA-256 of the bundle (the file was changed after signing)")]
    Digest,
    #[error("signature: the RSA signature does not verify with the first certificate's key")]
    Signature,
    #[error("signature: the first certificate is not the signer named in the SignerInfo (certificates reordered?)")]
    SignerMismatch,
    #[error("certificate: {0}")]
    Cert(String),
    #[error("manifest: {}", .0.join("; "))]
    Manifest(Vec<String>),
}

/// Who signed, as the official verifier would report it.
#[derive(Debug, Clone)]
pub struct SignatureInfo {
    pub subject: String,
    pub issuer: String,
    pub self_signed: bool,
    pub not_before: String,
    pub not_after: String,
    /// SHA-256 of the signing certificate's DER, hex.
    pub fingerprint: String,
    pub certificates: usize,
}

#[derive(Debug)]
pub struct Report {
    pub manifest: Value,
    /// Packed paths and their Unix modes.
    pub entries: Vec<(String, u32)>,
    pub signature: Option<SignatureInfo>,
}

/// A signed file's two parts: the content that was signed, and the DER of the signature.
pub type Parts<'a> = (&'a [u8], &'a [u8]);

/// Split a signed file into (content, DER), or None when it carries no block.
pub fn split(file: &[u8]) -> Result<Option<Parts<'_>>, VerifyError> {
    if !file.ends_with(FOOTER) {
        return Ok(None);
    }
    let footer = file.len() - FOOTER.len();
    let header = file[..footer].windows(HEADER.len()).rposition(|w| w == HEADER).ok_or(VerifyError::Framing("MCPB_SIG_END without MCPB_SIG_V1"))?;
    let len_at = header + HEADER.len();
    let len = u32::from_le_bytes(file.get(len_at..len_at + 4).ok_or(VerifyError::Framing("no length"))?.try_into().expect("4 bytes")) as usize;
    if len_at + 4 + len != footer {
        return Err(VerifyError::Framing("the length does not reach MCPB_SIG_END"));
    }
    Ok(Some((&file[..header], &file[len_at + 4..footer])))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Check a signature over `content`; the signer's details.
pub fn check_signature(content: &[u8], sig: &[u8]) -> Result<SignatureInfo, VerifyError> {
    let ci = expect(sig, der::SEQUENCE, "ContentInfo")?;
    let ci = items(ci.content)?;
    if ci.len() != 2 || ci[0].content != der::oid::SIGNED_DATA {
        return Err(der::Malformed("not a SignedData").into());
    }
    let sd = items(expect(ci[1].content, der::SEQUENCE, "SignedData")?.content)?;
    let certs = sd.iter().find(|r| r.tag == der::ctx(0)).ok_or(der::Malformed("no certificates"))?;
    let certs: Vec<&[u8]> = items(certs.content)?.iter().map(|c| c.whole).collect();
    let infos = sd.last().filter(|r| r.tag == der::SET).ok_or(der::Malformed("no SignerInfos"))?;
    let si = items(expect(infos.content, der::SEQUENCE, "SignerInfo")?.content)?;
    let [_version, sid, _digest_alg, attrs, _sig_alg, signature] = si.as_slice() else {
        return Err(der::Malformed("SignerInfo has unexpected fields").into());
    };
    if attrs.tag != der::ctx(0) || signature.tag != der::OCTET_STRING {
        return Err(der::Malformed("SignerInfo without signed attributes").into());
    }
    // Each attribute is SEQUENCE { OID, SET { value } }.
    let mut digest = None;
    for attr in items(attrs.content)? {
        if let [id, values] = items(attr.content)?.as_slice() {
            if id.content == der::oid::MESSAGE_DIGEST {
                digest = Some(expect(values.content, der::OCTET_STRING, "messageDigest")?.content);
            }
        }
    }
    let digest = digest.ok_or(der::Malformed("no messageDigest"))?;
    if digest != Sha256::digest(content).as_slice() {
        return Err(VerifyError::Digest);
    }
    let leaf_der = certs.first().ok_or(der::Malformed("no certificate"))?;
    let leaf = x509_cert::Certificate::from_der(leaf_der).map_err(|e| VerifyError::Cert(e.to_string()))?;
    let tbs = leaf.tbs_certificate();
    let spki = tbs.subject_public_key_info().to_der().map_err(|e| VerifyError::Cert(e.to_string()))?;
    let key = rsa::PublicKey::from_public_key_der(&spki).map_err(|e| VerifyError::Cert(format!("not an RSA key ({e})")))?;
    key.pkcs1v15_verify::<Sha256>(&der::tlv(der::SET, attrs.content), signature.content).map_err(|_| VerifyError::Signature)?;
    let sid = items(sid.content)?;
    let issuer = tbs.issuer().to_der().map_err(|e| VerifyError::Cert(e.to_string()))?;
    let serial = tbs.serial_number().to_der().map_err(|e| VerifyError::Cert(e.to_string()))?;
    if sid.len() != 2 || sid[0].whole != issuer.as_slice() || sid[1].whole != serial.as_slice() {
        return Err(VerifyError::SignerMismatch);
    }
    Ok(SignatureInfo {
        subject: tbs.subject().to_string(),
        issuer: tbs.issuer().to_string(),
        self_signed: tbs.subject() == tbs.issuer(),
        not_before: tbs.validity().not_before.to_string(),
        not_after: tbs.validity().not_after.to_string(),
        fingerprint: hex(&Sha256::digest(leaf_der)),
        certificates: certs.len(),
    })
}

/// Verify a whole `.mcpb` file, signed or not.
pub fn verify(file: &[u8]) -> Result<Report, VerifyError> {
    let eocd = Eocd::find(file).map_err(|e| VerifyError::Zip(e.to_string()))?;
    if eocd.end() != file.len() {
        return Err(VerifyError::Trailer { comment: eocd.comment_len, extra: file.len() as i64 - eocd.end() as i64 });
    }
    let signature = match split(file)? {
        Some((content, sig)) => Some(check_signature(content, sig)?),
        None => None,
    };
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(file)).map_err(|e| VerifyError::Zip(e.to_string()))?;
    let mut entries = vec![];
    let mut contents = std::collections::HashMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).map_err(|e| VerifyError::Zip(e.to_string()))?;
        let name = f.name().map_err(|e| VerifyError::Zip(e.to_string()))?.to_string();
        if f.is_dir() {
            return Err(VerifyError::Zip(format!("{name}: a directory entry (bundles hold files only)")));
        }
        if name.starts_with('/') || name.split('/').any(|c| c == "..") {
            return Err(VerifyError::Zip(format!("{name}: a path outside the bundle")));
        }
        let mode = f.unix_mode().unwrap_or(0) & 0o777;
        if is_executable(&name) && mode != 0o755 {
            return Err(VerifyError::Zip(format!("{name}: mode {mode:o}, but what runs must be packed 0755")));
        }
        let mut data = vec![];
        f.read_to_end(&mut data).map_err(|e| VerifyError::Zip(format!("{name}: {e}")))?;
        entries.push((name.clone(), mode));
        contents.insert(name, data);
    }
    let manifest: Value = contents
        .get("manifest.json")
        .ok_or_else(|| VerifyError::Manifest(vec!["manifest.json is not in the bundle".into()]))
        .and_then(|b| serde_json::from_slice(b).map_err(|e| VerifyError::Manifest(vec![format!("manifest.json is not JSON: {e}")])))?;
    crate::manifest::validate(&manifest).map_err(VerifyError::Manifest)?;
    crate::manifest::check_files(&manifest, |p| contents.get(p).cloned()).map_err(VerifyError::Manifest)?;
    Ok(Report { manifest, entries, signature })
}
