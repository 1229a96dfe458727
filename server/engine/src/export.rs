//! `vitals_export`: one activity's file (FIT, TCX or GPX), fetched from its provider and written to
//! the path the user named. The one place this server writes health data to disk, and only when
//! asked: an absolute path (or one from `~/`, the person's home, said in the answer), in a folder
//! that exists, never over an existing file unless `overwrite` says so, written whole or not at
//! all. Nothing here names a provider: a provider offers files in its catalog
//! (`ProviderSpec.files`) and builds the request (`file_request`); a format it does not serve but
//! lists in `Files.from_fit` is written here from its FIT (`activity_file`).
use crate::accounts::Home;
use crate::activity_file::{self, Recording};
use crate::catalog::FileFormat;
use crate::engine::{Engine, QueryError};
use crate::providers::Mode;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    pub provider: String,
    pub id: String,
    pub format: String,
    pub path: String,
    pub overwrite: bool,
}

/// What was written.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Exported {
    pub provider: String,
    pub id: String,
    /// `fit`, `tcx` or `gpx`.
    pub format: String,
    /// The absolute path written.
    pub path: String,
    /// Size of the file written, in bytes.
    pub bytes: u64,
    /// True when this is the built-in sample's file, not the user's own.
    pub synthetic: bool,
    /// Whether an existing file was replaced (only with overwrite=true).
    pub replaced: bool,
    /// Everything done to the bytes on the way, and anything to tell the user.
    pub notes: Vec<String>,
}

fn bad(s: String) -> QueryError {
    QueryError::BadInput(s)
}

/// `~` at the start of `path` read as the home folder `home` (None: this server has none of the
/// person's, being hosted), and the words that say so; any other path as it is.
fn expand_home(path: &str, home: Option<&Path>) -> Result<(String, Option<String>), QueryError> {
    let t = path.trim();
    let Some(rest) = t.strip_prefix('~') else {
        return Ok((t.to_string(), None));
    };
    if !(rest.is_empty() || rest.starts_with(['/', '\\'])) {
        return Err(bad(format!("`path` {path:?}: only `~/` (the home folder) is understood, not another user's `~name`. Send an absolute path.")));
    }
    let Some(home) = home else {
        return Err(bad(format!("`path` {path:?}: this vitals runs on a server for many people, so `~` is no one's home folder here. Send an absolute path.")));
    };
    let full = home.join(rest.trim_start_matches(['/', '\\']));
    Ok((full.display().to_string(), Some(format!("`~` is the home folder, {}.", home.display()))))
}

/// The checked destination: absolute, its folder exists, and not an existing file unless allowed.
fn destination(path: &str, overwrite: bool) -> Result<(PathBuf, bool), QueryError> {
    let p = PathBuf::from(path.trim());
    if path.trim().is_empty() || !p.is_absolute() {
        return Err(bad(format!(
            "`path` must be an absolute path of the file to write, or one from ~/ (for example /home/me/runs/run.fit, ~/run.fit or \
             C:\\Users\\me\\run.fit); got {path:?}. Ask the user where to save it."
        )));
    }
    if p.file_name().is_none() || path.trim().ends_with(['/', '\\']) {
        return Err(bad(format!("`path` {path:?} names a folder, not a file. Send the full path of the file to write, ending in its name.")));
    }
    let dir = p.parent().unwrap_or(Path::new("/"));
    if !dir.is_dir() {
        return Err(bad(format!("`path`: the folder {} does not exist. Send a path in a folder that exists; this tool creates no folders.", dir.display())));
    }
    if p.is_dir() {
        return Err(bad(format!("`path` {} is a folder. Send the path of a file inside it, e.g. {}.", p.display(), p.join("activity.fit").display())));
    }
    let exists = p.exists();
    if exists && !overwrite {
        return Err(bad(format!("`path`: {} already exists and was left as it is. Send overwrite=true to replace it, or another path.", p.display())));
    }
    Ok((p, exists))
}

/// Ids are what the provider's listing gave: letters, digits, `-` and `_` only, so one cannot
/// reach another route.
fn check_id(id: &str, listed_in: &str) -> Result<(), QueryError> {
    let ok = !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(bad(format!("`id` must be an activity id as `{listed_in}` gives it (letters and digits, e.g. 2AC312F); got {id:?}.")))
    }
}

pub async fn export(engine: &Engine, req: ExportRequest, deadline: crate::engine::Deadline) -> Result<Exported, QueryError> {
    let (source, format, fetched) = chosen(engine, &req)?;
    let p = &source.provider;
    let spec = p.spec();
    let files = spec.files.expect("a provider chosen for its files has them");
    check_id(req.id.trim(), &spec.qualified(files.listed_in))?;
    let home = match engine.home() {
        Home::Local { .. } => dirs::home_dir(),
        Home::Tenant { .. } => None,
    };
    let (full, home_said) = expand_home(&req.path, home.as_deref())?;
    let (path, exists) = destination(&full, req.overwrite)?;
    connected(p.as_ref())?;
    let id = req.id.trim();
    // Read as a query reads: the credential prepared first, one renewal after a 401, the engine's
    // rules for the provider's statuses (engine/file.rs).
    let reply = engine.file(p, |cred| p.file_request(id, fetched, cred), deadline).await?;
    let synthetic = reply.synthetic;
    let mut notes: Vec<String> = reply.credential.into_iter().chain(home_said).collect();
    let bytes = received(spec, reply.status, reply.bytes, format, id)?;
    let bytes = unpacked(spec, bytes, (format, fetched), id, &mut notes)?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    if ext != format.as_str() {
        notes.push(format!("The file holds {} but its name ends in {:?}; it was written where asked.", format.as_str().to_uppercase(), ext));
    }
    if synthetic {
        notes.push(p.synthetic_notice());
    }
    write(&path, &bytes, req.overwrite).map_err(|e| QueryError::Upstream(format!("{} could not be written: {e}. Nothing was left behind.", path.display())))?;
    Ok(Exported {
        provider: spec.name.into(),
        id: id.into(),
        format: format.as_str().into(),
        path: path.display().to_string(),
        bytes: bytes.len() as u64,
        synthetic,
        replaced: exists,
        notes,
    })
}

/// The provider asked for, if it offers files, and the format asked for with the one read to
/// make it (a format the provider does not serve is written from its FIT).
fn chosen<'e>(engine: &'e Engine, req: &ExportRequest) -> Result<(&'e crate::engine::Source, FileFormat, FileFormat), QueryError> {
    let with_files: Vec<String> = engine
        .providers()
        .filter_map(|p| p.spec().files.map(|f| format!("{} ({})", p.spec().name, f.offered().iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", "))))
        .collect();
    let name = req.provider.trim().to_ascii_lowercase();
    let source = engine
        .source(&name)
        .filter(|s| s.provider.spec().files.is_some())
        .ok_or_else(|| bad(format!("`provider`: {:?} offers no activity files. Providers that do: {}.", req.provider, with_files.join("; "))))?;
    let spec = source.provider.spec();
    let files = spec.files.expect("filtered above");
    let formats = files.offered().iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", ");
    let format = FileFormat::parse(&req.format)
        .filter(|f| files.offered().contains(f))
        .ok_or_else(|| bad(format!("`format`: {:?} is not a file {} serves. Send one of: {formats}.", req.format, spec.display)))?;
    let fetched = if files.formats.contains(&format) { format } else { FileFormat::Fit };
    Ok((source, format, fetched))
}

/// An export reads the user's own account: a damaged login or none is said, never sample data's file passed off.
fn connected(p: &dyn crate::providers::Provider) -> Result<(), QueryError> {
    let spec = p.spec();
    let cred = p.credential().current();
    if let Some(why) = &cred.problem {
        return Err(QueryError::NeedsAccount { provider: spec.name, why: why.clone() });
    }
    if cred.mode() == Mode::NeedsCredentials {
        return Err(QueryError::NeedsAccount {
            provider: spec.name,
            why: format!("Exporting needs the user's {} account connected (vitals_connect provider={}).", spec.display, spec.name),
        });
    }
    Ok(())
}

/// The file's bytes from what the provider answered; "no such file" said with where the ids are.
fn received(spec: &crate::catalog::ProviderSpec, status: u16, body: Vec<u8>, format: FileFormat, id: &str) -> Result<Vec<u8>, QueryError> {
    let files = spec.files.expect("a provider chosen for its files has them");
    match status {
        200 => Ok(body),
        s if spec.no_data.contains(&s) || s == 404 => Err(QueryError::BadInput(format!(
            "`id`/`format`: {} has no {} file for {id:?}: {}. The ids are in {}.{}. Nothing was written.",
            spec.display,
            format.as_str().to_uppercase(),
            files.missing,
            spec.name,
            files.listed_in
        ))),
        s => Err(QueryError::Upstream(format!("{} answered HTTP {s}; nothing was written.", spec.display))),
    }
}

/// The file as it is written: unpacked from gzip or a ZIP, converted from its FIT where the
/// format asked for is not served (`formats`: asked, fetched), each step said in `notes`.
fn unpacked(
    spec: &crate::catalog::ProviderSpec,
    bytes: Vec<u8>,
    (format, fetched): (FileFormat, FileFormat),
    id: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<u8>, QueryError> {
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        notes.push(format!("{} sent the file gzipped; it was unpacked, so the file is plain {}.", spec.display, format.as_str().to_uppercase()));
        crate::archive::gunzip(&bytes)
            .map_err(|e| QueryError::Upstream(format!("{} sent a gzipped file that does not unpack ({e}); nothing was written.", spec.display)))?
    } else {
        bytes
    };
    let bytes = if bytes.starts_with(b"PK\x03\x04") {
        let (name, inner) = crate::archive::unzip_one(&bytes, fetched.as_str())
            .map_err(|e| QueryError::Upstream(format!("{} sent a ZIP without a .{} file in it ({e}); nothing was written.", spec.display, fetched.as_str())))?;
        if fetched == format {
            notes.push(format!("{} sent a ZIP; its {name} was extracted, so the file is the {} itself.", spec.display, format.as_str().to_uppercase()));
        }
        inner
    } else {
        bytes
    };
    let bytes = if fetched == format {
        bytes
    } else {
        let (converted, said) = from_fit(&bytes, format, spec.display, id)?;
        notes.push(said);
        converted
    };
    if bytes.is_empty() {
        return Err(QueryError::Upstream(format!("{} sent an empty file; nothing was written.", spec.display)));
    }
    Ok(bytes)
}

/// A format the provider does not serve, written from its FIT: the file, and what it holds in words.
fn from_fit(fit: &[u8], to: FileFormat, display: &str, id: &str) -> Result<(Vec<u8>, String), QueryError> {
    let rec =
        activity_file::fit::read(fit).map_err(|e| QueryError::Upstream(format!("{display}'s FIT of {id:?} could not be read ({e}); nothing was written.")))?;
    let name = format!("{display} activity {id}");
    let upper = to.as_str().to_uppercase();
    let (xml, points) = match to {
        FileFormat::Gpx => {
            let xml = activity_file::gpx::write(&rec, &name, "vitals").map_err(|e| {
                bad(format!("`format`: {display} activity {id} cannot be a GPX: {e}, so nothing was written. Send format=tcx or fit for its heart rate, speed and distance."))
            })?;
            (xml, rec.points.iter().filter(|p| p.position.is_some()).count())
        }
        FileFormat::Tcx => (activity_file::tcx::write(&rec, &name), rec.points.len()),
        FileFormat::Fit => return Ok((fit.to_vec(), String::new())),
    };
    Ok((xml.into_bytes(), format!("{display} serves only the FIT; vitals wrote this {upper} from it: {}.", holds(&rec, to, points))))
}

/// What a GPX or TCX written from `rec` holds: its points and their readings, its laps.
fn holds(rec: &Recording, to: FileFormat, points: usize) -> String {
    let has = |f: &dyn Fn(&activity_file::Point) -> bool| rec.points.iter().any(f);
    let mut what: Vec<&str> = vec!["time"];
    for (name, present) in [
        ("position", has(&|p| p.position.is_some())),
        ("altitude", has(&|p| p.altitude_m.is_some())),
        ("heart rate", has(&|p| p.hr_bpm.is_some())),
        ("cadence", has(&|p| p.cadence_rpm.is_some())),
        ("distance", to == FileFormat::Tcx && has(&|p| p.distance_m.is_some())),
        ("speed", to == FileFormat::Tcx && has(&|p| p.speed_m_s.is_some())),
        ("power", to == FileFormat::Tcx && has(&|p| p.power_w.is_some())),
    ] {
        if present {
            what.push(name);
        }
    }
    let kind = if to == FileFormat::Gpx { "track points" } else { "trackpoints" };
    let laps = if to == FileFormat::Tcx { format!(" in {} laps", rec.laps.len()) } else { String::new() };
    let no_gps = if rec.has_positions() { "" } else { "; no GPS positions (the activity was recorded without GPS)" };
    format!("{points} {kind}{laps} with {}{no_gps}", what.join(", "))
}

/// Whole or not at all: the bytes go to a hidden file beside the target, then take its name, by
/// a rename (replacing) or a hard link (which fails if a file appeared there meanwhile).
fn write(path: &Path, bytes: &[u8], overwrite: bool) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("/"));
    let tmp = dir.join(format!(".{}.vitals-{}.part", path.file_name().and_then(|n| n.to_str()).unwrap_or("export"), std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if overwrite {
            std::fs::rename(&tmp, path)
        } else {
            std::fs::hard_link(&tmp, path)
        }
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_is_absolute_in_a_folder_that_exists_and_new() {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/tmp")).join(format!("vitals-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.fit");
        assert!(destination("runs/a.fit", false).is_err());
        assert!(destination(&dir.join("missing/a.fit").display().to_string(), false).is_err());
        assert!(destination(&dir.display().to_string(), true).is_err(), "a folder");
        assert_eq!(destination(&f.display().to_string(), false).unwrap(), (f.clone(), false));
        write(&f, b"one", false).unwrap();
        assert!(write(&f, b"two", false).is_err(), "never over an existing file without overwrite");
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        assert!(destination(&f.display().to_string(), false).unwrap_err().to_string().contains("overwrite=true"));
        write(&f, b"two", true).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no part file left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_from_the_home_folder_is_said_and_only_one_s_own() {
        let home = Path::new("/home/me");
        let (p, said) = expand_home(" ~/runs/a.gpx", Some(home)).unwrap();
        assert_eq!(p, "/home/me/runs/a.gpx");
        assert!(said.unwrap().contains("/home/me"));
        assert_eq!(expand_home("/tmp/a.fit", Some(home)).unwrap(), ("/tmp/a.fit".to_string(), None));
        assert!(expand_home("~bob/a.fit", Some(home)).unwrap_err().to_string().contains("another user"));
        assert!(expand_home("~/a.fit", None).unwrap_err().to_string().contains("Send an absolute path"));
        assert!(destination(&expand_home("~", Some(home)).unwrap().0, false).unwrap_err().to_string().contains("folder"), "the home folder itself");
    }

    #[test]
    fn ids_cannot_reach_another_route() {
        assert!(check_id("2AC312F", "polar.exercises").is_ok());
        for bad in ["", "../users", "a/b", "x?y=1", &"a".repeat(65)] {
            assert!(check_id(bad, "polar.exercises").is_err(), "{bad}");
        }
    }
}
