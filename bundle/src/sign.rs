//! The `.mcpb` signature: a detached CMS SignedData (SHA-256, RSA PKCS#1 v1.5, signed attributes
//! contentType, messageDigest, signingTime in that order, certificates leaf first), framed as
//! `MCPB_SIG_V1 ‖ u32 LE length ‖ DER ‖ MCPB_SIG_END` after the zip. The zip's end-of-central-
//! directory comment length is set to cover that block *before* signing, so the file stays a valid
//! zip for strict readers (Claude Desktop's) and the signed bytes are exactly the bytes on disk.
use crate::der::{self, cons, oid, tlv};
use crate::zipfile::Eocd;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use rsa::sha2::{Digest, Sha256};
use rsa::{Generate, PrivateKey};
use x509_cert::der::pem::LineEnding;
use x509_cert::der::{Decode, DecodePem, Encode, EncodePem};

pub const HEADER: &[u8] = b"MCPB_SIG_V1";
pub const FOOTER: &[u8] = b"MCPB_SIG_END";

#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("the signing key is not an unencrypted RSA key in PEM (PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`): {0}")]
    Key(String),
    #[error("the certificate is not a PEM X.509 certificate: {0}")]
    Cert(String),
    #[error("the certificate's public key is not the signing key's")]
    KeyMismatch,
    #[error("signing failed: {0}")]
    Rsa(String),
    #[error("{0}")]
    Zip(String),
}

/// A key and its certificate chain (leaf first).
pub struct Signer {
    key: PrivateKey,
    chain: Vec<Vec<u8>>,
}

/// A throwaway certificate and its key, in PEM, for local use (`--self-signed`).
pub struct SelfSigned {
    pub signer: Signer,
    pub cert_pem: String,
    pub key_pem: String,
}

fn first_cert(pem: &str) -> Result<Vec<u8>, SignError> {
    let begin = pem.find("-----BEGIN CERTIFICATE-----").ok_or_else(|| SignError::Cert("no BEGIN CERTIFICATE".into()))?;
    let end = pem[begin..].find("-----END CERTIFICATE-----").ok_or_else(|| SignError::Cert("no END CERTIFICATE".into()))? + begin + 25;
    let cert = x509_cert::Certificate::from_pem(&pem[begin..end]).map_err(|e| SignError::Cert(e.to_string()))?;
    cert.to_der().map_err(|e| SignError::Cert(e.to_string()))
}

impl Signer {
    /// From PEM text: the key, the leaf certificate, and any intermediates (first certificate of each).
    pub fn from_pem(key_pem: &str, cert_pem: &str, intermediates: &[&str]) -> Result<Signer, SignError> {
        let key = PrivateKey::from_pkcs8_pem(key_pem).or_else(|_| PrivateKey::from_pkcs1_pem(key_pem)).map_err(|e| SignError::Key(e.to_string()))?;
        let mut chain = vec![first_cert(cert_pem)?];
        for i in intermediates {
            chain.push(first_cert(i)?);
        }
        let signer = Signer { key, chain };
        if signer.leaf_spki()? != signer.key.to_public_key().to_public_key_der().map_err(|e| SignError::Key(e.to_string()))?.as_bytes() {
            return Err(SignError::KeyMismatch);
        }
        Ok(signer)
    }

    fn leaf_spki(&self) -> Result<Vec<u8>, SignError> {
        let c = x509_cert::Certificate::from_der(&self.chain[0]).map_err(|e| SignError::Cert(e.to_string()))?;
        c.tbs_certificate().subject_public_key_info().to_der().map_err(|e| SignError::Cert(e.to_string()))
    }

    /// A fresh RSA-3072 key and a certificate for it, valid one year from `now`, with the
    /// codeSigning usage (what a real certificate would need once verifiers check it).
    pub fn self_signed(common_name: &str, now: jiff::Timestamp) -> Result<SelfSigned, SignError> {
        let key = PrivateKey::generate();
        let spki = key.to_public_key().to_public_key_der().map_err(|e| SignError::Key(e.to_string()))?;
        let name =
            cons(der::SEQUENCE, &[&cons(der::SET, &[&cons(der::SEQUENCE, &[&oid(der::oid::COMMON_NAME), &tlv(der::UTF8_STRING, common_name.as_bytes())])])]);
        let mut serial = Sha256::digest(format!("{common_name}{}{}", now.as_nanosecond(), std::process::id())).to_vec();
        serial.truncate(16);
        serial[0] &= 0x7f;
        let until = now.checked_add(jiff::SignedDuration::from_hours(24 * 365)).map_err(|e| SignError::Cert(e.to_string()))?;
        let ext = |id: &[u8], critical: bool, value: Vec<u8>| {
            let crit = if critical { vec![der::BOOLEAN, 1, 0xff] } else { vec![] };
            cons(der::SEQUENCE, &[&oid(id), &crit, &tlv(der::OCTET_STRING, &value)])
        };
        let extensions = cons(
            der::ctx(3),
            &[&cons(
                der::SEQUENCE,
                &[
                    &ext(der::oid::BASIC_CONSTRAINTS, true, cons(der::SEQUENCE, &[])),
                    &ext(der::oid::KEY_USAGE, true, vec![der::BIT_STRING, 2, 7, 0x80]),
                    &ext(der::oid::EXT_KEY_USAGE, false, cons(der::SEQUENCE, &[&oid(der::oid::CODE_SIGNING)])),
                ],
            )],
        );
        let tbs = cons(
            der::SEQUENCE,
            &[
                &cons(der::ctx(0), &[&der::uint(&[2])]),
                &der::uint(&serial),
                &der::alg(der::oid::SHA256_WITH_RSA),
                &name,
                &cons(der::SEQUENCE, &[&der::time(now), &der::time(until)]),
                &name,
                spki.as_bytes(),
                &extensions,
            ],
        );
        let sig = key.pkcs1v15_sign::<Sha256>(&tbs).map_err(|e| SignError::Rsa(e.to_string()))?;
        let mut bits = vec![0u8];
        bits.extend(sig);
        let cert = cons(der::SEQUENCE, &[&tbs, &der::alg(der::oid::SHA256_WITH_RSA), &tlv(der::BIT_STRING, &bits)]);
        let parsed = x509_cert::Certificate::from_der(&cert).map_err(|e| SignError::Cert(e.to_string()))?;
        let cert_pem = parsed.to_pem(LineEnding::LF).map_err(|e| SignError::Cert(e.to_string()))?;
        let key_pem = key.to_pkcs8_pem(LineEnding::LF).map_err(|e| SignError::Key(e.to_string()))?.to_string();
        Ok(SelfSigned { signer: Signer { key, chain: vec![cert] }, cert_pem, key_pem })
    }

    /// The detached SignedData over `content`, laid out as `mcpb sign` 2.1.2 lays it out.
    pub fn signed_data(&self, content: &[u8], signing_time: jiff::Timestamp) -> Result<Vec<u8>, SignError> {
        let leaf = x509_cert::Certificate::from_der(&self.chain[0]).map_err(|e| SignError::Cert(e.to_string()))?;
        let tbs = leaf.tbs_certificate();
        let issuer = tbs.issuer().to_der().map_err(|e| SignError::Cert(e.to_string()))?;
        let serial = tbs.serial_number().to_der().map_err(|e| SignError::Cert(e.to_string()))?;
        let attr = |id: &[u8], value: Vec<u8>| cons(der::SEQUENCE, &[&oid(id), &cons(der::SET, &[&value])]);
        let attrs = [
            attr(der::oid::CONTENT_TYPE, oid(der::oid::DATA)),
            attr(der::oid::MESSAGE_DIGEST, tlv(der::OCTET_STRING, &Sha256::digest(content))),
            attr(der::oid::SIGNING_TIME, der::time(signing_time)),
        ]
        .concat();
        // The signature covers the attributes re-tagged as a SET (RFC 5652 §5.4).
        let signature = self.key.pkcs1v15_sign::<Sha256>(&tlv(der::SET, &attrs)).map_err(|e| SignError::Rsa(e.to_string()))?;
        let signer_info = cons(
            der::SEQUENCE,
            &[
                &der::uint(&[1]),
                &cons(der::SEQUENCE, &[&issuer, &serial]),
                &der::alg(der::oid::SHA256),
                &tlv(der::ctx(0), &attrs),
                &der::alg(der::oid::RSA_ENCRYPTION),
                &tlv(der::OCTET_STRING, &signature),
            ],
        );
        let signed = cons(
            der::SEQUENCE,
            &[
                &der::uint(&[1]),
                &cons(der::SET, &[&der::alg(der::oid::SHA256)]),
                &cons(der::SEQUENCE, &[&oid(der::oid::DATA)]),
                &tlv(der::ctx(0), &self.chain.concat()),
                &cons(der::SET, &[&signer_info]),
            ],
        );
        Ok(cons(der::SEQUENCE, &[&oid(der::oid::SIGNED_DATA), &cons(der::ctx(0), &[&signed])]))
    }
}

fn frame(der: &[u8]) -> Vec<u8> {
    [HEADER, &(der.len() as u32).to_le_bytes()[..], der, FOOTER].concat()
}

/// Sign a zip: patch its comment length to cover the block, sign the patched bytes, append.
pub fn sign(zip: &[u8], signer: &Signer, signing_time: jiff::Timestamp) -> Result<Vec<u8>, SignError> {
    if zip.ends_with(FOOTER) {
        return Err(SignError::Zip("this file is signed already; sign the unsigned zip (one signature per bundle)".into()));
    }
    let eocd = Eocd::find(zip).map_err(|e| SignError::Zip(e.to_string()))?;
    if eocd.end() != zip.len() {
        return Err(SignError::Zip("the zip already has something after its end record (signed already?)".into()));
    }
    // The block's length is fixed for a key and chain (the RSA signature's length is the key's).
    let trial = frame(&signer.signed_data(zip, signing_time)?).len();
    let mut t = signing_time;
    for _ in 0..8 {
        let mut content = zip.to_vec();
        eocd.set_comment_len(&mut content, eocd.comment_len + trial).map_err(|e| SignError::Zip(e.to_string()))?;
        let block = frame(&signer.signed_data(&content, t)?);
        assert_eq!(block.len(), trial, "the block length depends only on the key and chain");
        // A DER that happens to contain the end-record signature would confuse readers: sign again a second later.
        if !block.windows(4).any(|w| w == crate::zipfile::EOCD_SIG) {
            content.extend(block);
            return Ok(content);
        }
        t = t.checked_add(jiff::SignedDuration::from_secs(1)).unwrap_or(t);
    }
    Err(SignError::Zip("every signature contained a zip end-record signature".into()))
}
