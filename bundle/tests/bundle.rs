//! The bundle library against its rules: the manifest schema (strict), the reproducible zip, the
//! signature layout and trailer, the verifier's refusals, and OpenSSL's second opinion.
use bundle::{manifest, sign, verify, zipfile};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

fn repo_manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest.json")).unwrap()).unwrap()
}

fn leaf_signer() -> sign::Signer {
    sign::Signer::from_pem(&fixture("leaf-key.pem"), &fixture("leaf.pem"), &[&fixture("ca.pem")]).unwrap()
}

fn time() -> jiff::Timestamp {
    "2026-12-03T12:00:00Z".parse().unwrap()
}

/// A staged bundle: the repo's manifest, a 512 px icon, the launcher, a fake server binary, and
/// files the ignore list must leave out.
fn stage(tag: &str) -> PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vitals-bundle-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("server/bin/x86_64-unknown-linux-gnu")).unwrap();
    std::fs::write(d.join("manifest.json"), serde_json::to_vec_pretty(&repo_manifest()).unwrap()).unwrap();
    std::fs::create_dir_all(d.join("icons")).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../icons/icon.png"), d.join("icons/icon.png")).unwrap();
    std::fs::write(d.join("server/launch.js"), bundle::LAUNCHER).unwrap();
    std::fs::write(d.join("server/bin/x86_64-unknown-linux-gnu/vitals-mcp"), b"\x7fELF fake server").unwrap();
    std::fs::write(d.join(".DS_Store"), b"junk").unwrap();
    std::fs::write(d.join("debug.log"), b"junk").unwrap();
    d
}

fn errors_of(m: &Value) -> String {
    manifest::validate(m).err().unwrap_or_default().join("\n")
}

#[test]
fn the_repo_manifest_is_valid_and_each_rule_is_enforced() {
    let good = repo_manifest();
    assert_eq!(manifest::validate(&good), Ok(()));
    type Break = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Break, &str)> = vec![
        ("unknown key", Box::new(|m| m["colour"] = json!("teal")), "colour"),
        ("unknown nested key", Box::new(|m| m["server"]["mcp_config"]["cwd"] = json!("/")), "/server/mcp_config"),
        ("server type", Box::new(|m| m["server"]["type"] = json!("uv")), "/server/type"),
        ("user_config type", Box::new(|m| m["user_config"]["sample_data"]["type"] = json!("array")), "/user_config/sample_data/type"),
        (
            "user_config title",
            Box::new(|m| {
                m["user_config"]["sample_data"].as_object_mut().unwrap().remove("title");
            }),
            "/user_config/sample_data",
        ),
        (
            "user_config key",
            Box::new(|m| m["user_config"]["Client-ID"] = json!({"type": "string", "title": "t", "description": "d"})),
            "/user_config/Client-ID",
        ),
        (
            "manifest_version",
            Box::new(|m| {
                m.as_object_mut().unwrap().remove("manifest_version");
            }),
            "/manifest_version",
        ),
        ("old manifest_version", Box::new(|m| m["manifest_version"] = json!("0.2")), "/manifest_version"),
        ("absolute icon", Box::new(|m| m["icon"] = json!("${__dirname}/icons/icon.png")), "/icon"),
        ("author email", Box::new(|m| m["author"]["email"] = json!("not an email")), "/author/email"),
        (
            "missing name",
            Box::new(|m| {
                m.as_object_mut().unwrap().remove("name");
            }),
            "name",
        ),
    ];
    for (what, mutate, needle) in cases {
        let mut m = good.clone();
        mutate(&mut m);
        let e = errors_of(&m);
        assert!(e.contains(needle), "{what}: expected an error naming {needle:?}, got: {e:?}");
    }
}

#[test]
fn staged_files_must_hold_the_entry_point_and_a_512_px_png() {
    let m = repo_manifest();
    let d = stage("files");
    assert_eq!(manifest::check_files(&m, |p| std::fs::read(d.join(p)).ok()), Ok(()));
    let e = manifest::check_files(&m, |p| if p == "icons/icon.png" { Some(b"GIF89a".to_vec()) } else { std::fs::read(d.join(p)).ok() }).unwrap_err();
    assert!(e[0].contains("not a PNG"), "{e:?}");
    let e = manifest::check_files(&m, |p| if p.starts_with("server/") { None } else { std::fs::read(d.join(p)).ok() }).unwrap_err();
    assert!(e[0].contains("server/launch.js is not in the bundle"), "{e:?}");
    assert_eq!(manifest::png_size(&std::fs::read(d.join("icons/icon.png")).unwrap()), Ok((512, 512)));
}

#[test]
fn packing_is_reproducible_sorted_files_only_with_modes_and_ignores() {
    let d = stage("pack");
    let a = zipfile::pack(&d).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let b = zipfile::pack(&d).unwrap();
    assert_eq!(a, b, "the same folder gives the same bytes, whatever the clock says");
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(&a)).unwrap();
    let names: Vec<String> = (0..z.len()).map(|i| z.by_index(i).unwrap().name().unwrap().to_string()).collect();
    assert_eq!(names, ["icons/icon.png", "manifest.json", "server/bin/x86_64-unknown-linux-gnu/vitals-mcp", "server/launch.js"]);
    for i in 0..z.len() {
        let f = z.by_index(i).unwrap();
        let want = if f.name().unwrap().starts_with("server/") { 0o755 } else { 0o644 };
        assert_eq!(f.unix_mode().unwrap() & 0o777, want, "{:?}", f.name());
        assert_eq!(f.last_modified().map(|t| t.year()), Some(1980));
    }
    let eocd = zipfile::Eocd::find(&a).unwrap();
    assert_eq!((eocd.end(), eocd.comment_len), (a.len(), 0));
}

#[test]
fn a_signed_bundle_is_still_a_strict_zip_and_verifies() {
    let zip = zipfile::pack(&stage("sign")).unwrap();
    let signed = sign::sign(&zip, &leaf_signer(), time()).unwrap();
    // The block is the zip's comment: a strict reader's end record ends the file.
    let eocd = zipfile::Eocd::find(&signed).unwrap();
    assert_eq!(eocd.end(), signed.len());
    assert_eq!(eocd.comment_len, signed.len() - zip.len());
    assert!(signed.ends_with(sign::FOOTER));
    let (content, der) = verify::split(&signed).unwrap().unwrap();
    assert_eq!(&content[..content.len() - 22], &zip[..zip.len() - 22], "only the comment length changed");
    // The layout: header, u32 LE length, DER, footer.
    let h = content.len();
    assert_eq!(&signed[h..h + 11], sign::HEADER);
    assert_eq!(u32::from_le_bytes(signed[h + 11..h + 15].try_into().unwrap()) as usize, der.len());
    let r = verify::verify(&signed).unwrap();
    let s = r.signature.unwrap();
    assert!(s.subject.contains("vitals test signer"), "{s:?}");
    assert!(!s.self_signed);
    assert_eq!(s.certificates, 2, "leaf and intermediate");
    assert_eq!(r.manifest["name"], "vitals");
    zip::ZipArchive::new(std::io::Cursor::new(&signed)).expect("zip readers open the signed file");
    assert!(sign::sign(&signed, &leaf_signer(), time()).is_err(), "a signed file is not signed again blindly");
}

#[test]
fn the_signed_attributes_and_certificates_are_in_mcpb_order() {
    let zip = zipfile::pack(&stage("order")).unwrap();
    let signed = sign::sign(&zip, &leaf_signer(), time()).unwrap();
    let der = verify::split(&signed).unwrap().unwrap().1.to_vec();
    let find = |needle: &[u8]| der.windows(needle.len()).position(|w| w == needle).unwrap();
    let (ct, md, st) = (find(bundle::der::oid::CONTENT_TYPE), find(bundle::der::oid::MESSAGE_DIGEST), find(bundle::der::oid::SIGNING_TIME));
    assert!(ct < md && md < st, "contentType, messageDigest, signingTime: not DER-sorted");
    assert!(find(&leaf_der()) < find(&ca_der()), "the signer's certificate comes first");
    assert!(der.windows(13).any(|w| w == b"261203120000Z"), "signingTime as UTCTime");
}

fn pem_der(pem: &str) -> Vec<u8> {
    use der::DecodePem;
    let c = x509_cert::Certificate::from_pem(pem.as_bytes()).unwrap();
    der::Encode::to_der(&c).unwrap()
}

fn leaf_der() -> Vec<u8> {
    pem_der(&fixture("leaf.pem"))
}

fn ca_der() -> Vec<u8> {
    pem_der(&fixture("ca.pem"))
}

#[test]
fn the_verifier_refuses_every_kind_of_damage() {
    let zip = zipfile::pack(&stage("damage")).unwrap();
    let signed = sign::sign(&zip, &leaf_signer(), time()).unwrap();
    // A flipped byte anywhere before the block: the local headers, the data, the central directory, the end record.
    let block_at = verify::split(&signed).unwrap().unwrap().0.len();
    for at in (0..block_at).step_by(97).chain([block_at - 1, block_at - 22, block_at - 3]) {
        let mut t = signed.clone();
        t[at] ^= 1;
        assert!(verify::verify(&t).is_err(), "a flipped byte at {at} of {block_at} went unnoticed");
        if let Some((content, der)) = verify::split(&t).ok().flatten() {
            assert!(matches!(verify::check_signature(content, der), Err(verify::VerifyError::Digest)), "byte {at}");
        }
    }
    // One byte of the RSA signature (the last bytes of the DER).
    let mut t = signed.clone();
    let at = t.len() - sign::FOOTER.len() - 5;
    t[at] ^= 1;
    assert!(matches!(verify::verify(&t), Err(verify::VerifyError::Signature)), "{:?}", verify::verify(&t));
    // The comment length left at 0, as `mcpb sign` 2.1.2 writes it: strict readers refuse.
    let mut t = signed.clone();
    let eocd = zipfile::Eocd::find(&zip).unwrap();
    t[eocd.offset + 20] = 0;
    t[eocd.offset + 21] = 0;
    assert!(matches!(verify::verify(&t), Err(verify::VerifyError::Trailer { .. })), "{:?}", verify::verify(&t));
    // Certificates reordered: the first one is no longer the signer.
    let swapped = sign::Signer::from_pem(&fixture("leaf-key.pem"), &fixture("leaf.pem"), &[&fixture("ca.pem")]).unwrap();
    let good = swapped.signed_data(b"content", time()).unwrap();
    let (l, c) = (leaf_der(), ca_der());
    let pos = good.windows(l.len()).position(|w| w == l.as_slice()).unwrap();
    let mut reordered = good.clone();
    reordered.splice(pos..pos + l.len() + c.len(), [c.clone(), l.clone()].concat());
    assert!(matches!(verify::check_signature(b"content", &reordered), Err(verify::VerifyError::Signature) | Err(verify::VerifyError::SignerMismatch)));
    // Truncations never panic.
    for cut in [10, 200, 1000, signed.len() / 2] {
        assert!(verify::verify(&signed[..signed.len() - cut]).is_err());
    }
    // A key that is not the certificate's.
    let other = sign::Signer::from_pem(&fixture("ca-key.pem"), &fixture("leaf.pem"), &[]);
    assert!(matches!(other, Err(sign::SignError::KeyMismatch)));
    assert!(sign::Signer::from_pem("not a key", &fixture("leaf.pem"), &[]).is_err());
}

#[test]
fn a_pkcs1_key_signs_the_same_bytes() {
    let pkcs1 = sign::Signer::from_pem(&fixture("leaf-key-pkcs1.pem"), &fixture("leaf.pem"), &[&fixture("ca.pem")]).unwrap();
    assert_eq!(pkcs1.signed_data(b"abc", time()).unwrap(), leaf_signer().signed_data(b"abc", time()).unwrap(), "PKCS#1 v1.5 is deterministic");
}

#[test]
fn an_unsigned_bundle_verifies_as_unsigned() {
    let zip = zipfile::pack(&stage("unsigned")).unwrap();
    assert!(verify::verify(&zip).unwrap().signature.is_none());
}

/// OpenSSL's opinion of our signature and of a self-signed certificate we made.
#[test]
fn openssl_verifies_the_signature_and_reads_the_self_signed_certificate() {
    let need = "this test needs the openssl command (Debian: openssl)";
    let dir = stage("openssl");
    let zip = zipfile::pack(&dir).unwrap();
    let made = sign::Signer::self_signed("vitals test self-signed", time()).unwrap();
    for (label, signer) in [("leaf", leaf_signer()), ("self", made.signer)] {
        let signed = sign::sign(&zip, &signer, time()).unwrap();
        let r = verify::verify(&signed).unwrap();
        assert_eq!(r.signature.as_ref().unwrap().self_signed, label == "self");
        let (content, der) = verify::split(&signed).unwrap().unwrap();
        let (c, s) = (dir.join(format!("{label}.content")), dir.join(format!("{label}.der")));
        std::fs::write(&c, content).unwrap();
        std::fs::write(&s, der).unwrap();
        let mut cmd = std::process::Command::new("openssl");
        cmd.args(["cms", "-verify", "-binary", "-inform", "DER", "-out", "/dev/null", "-in"]).arg(&s).arg("-content").arg(&c);
        if label == "leaf" {
            cmd.arg("-CAfile").arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ca.pem")).args(["-purpose", "any"]);
        } else {
            cmd.arg("-noverify");
        }
        let o = cmd.output().expect(need);
        assert!(o.status.success(), "{label}: openssl refused: {}", String::from_utf8_lossy(&o.stderr));
    }
    let pem = dir.join("self.pem");
    std::fs::write(&pem, &made.cert_pem).unwrap();
    let o = std::process::Command::new("openssl").args(["x509", "-noout", "-text", "-in"]).arg(&pem).output().expect(need);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("Code Signing") && text.contains("vitals test self-signed") && text.contains("3072 bit"), "{text}");
    assert!(made.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
}
