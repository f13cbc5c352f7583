//! Looking inside the persistent cache: every file it holds, and clearing it
//! (`flint cache list | show | clear`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::disk_cache::{DiskCache, DiskEntry, inspect};
use crate::DeviceFingerprint;
use crate::locked_file::FileLock;

/// One cache file: the configs of one op version on one device.
#[derive(Clone, Debug)]
pub struct StoredFile {
    /// Where it lives.
    pub path: PathBuf,
    /// The device it was tuned on.
    pub fingerprint: DeviceFingerprint,
    /// The op id.
    pub op: String,
    /// The op's config format version.
    pub op_version: u32,
    /// Call key digest -> entry.
    pub entries: BTreeMap<String, DiskEntry>,
}

/// What [`DiskCache::list`] found.
#[derive(Debug, Default)]
pub struct Listing {
    /// The readable cache files, sorted by path.
    pub files: Vec<StoredFile>,
    /// Files that are not usable cache files, with the reason (set-aside copies included).
    pub problems: Vec<(PathBuf, String)>,
}

/// What [`DiskCache::clear`] removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Cleared {
    /// Cache files removed.
    pub files: usize,
    /// Entries they held.
    pub entries: usize,
    /// Set-aside damaged copies (`*.bad-*`) removed.
    pub set_aside: usize,
}

/// `<op>@v<version>.yaml` -> `(op, version)` for a cache file name.
fn cache_file_name(name: &str) -> Option<(&str, u32)> {
    let stem = name.strip_suffix(".yaml")?;
    let (op, version) = stem.rsplit_once("@v")?;
    Some((op, version.parse().ok()?))
}

/// A set-aside copy: `<op>@v<version>.yaml.bad-<secs>-<pid>`; returns its op.
fn set_aside_op(name: &str) -> Option<&str> {
    let (file, _) = name.split_once(".yaml.bad-")?;
    Some(file.rsplit_once("@v")?.0)
}

fn is_digest(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

impl DiskCache {
    /// The `<dir>/<fingerprint digest>/` directories, sorted.
    fn device_dirs(&self) -> Vec<PathBuf> {
        let Ok(read) = fs::read_dir(self.dir()) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = read
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| e.file_name().to_str().is_some_and(is_digest))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        dirs
    }

    /// Every file of `dir` with its name, sorted; names that are not UTF-8 are skipped.
    fn named_files(dir: &Path) -> Vec<(String, PathBuf)> {
        let Ok(read) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut files: Vec<(String, PathBuf)> = read
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
            .collect();
        files.sort();
        files
    }

    /// Every cache file under the root, read fresh. Never fails: an absent directory is an
    /// empty listing, and an unusable file is listed among the problems (and left alone).
    pub fn list(&self) -> Listing {
        let mut listing = Listing::default();
        for dir in self.device_dirs() {
            for (name, path) in Self::named_files(&dir) {
                if set_aside_op(&name).is_some() {
                    listing
                        .problems
                        .push((path, "a damaged copy set aside earlier".to_string()));
                    continue;
                }
                let Some((op, version)) = cache_file_name(&name) else {
                    continue; // lock files, temp files
                };
                match inspect(&path) {
                    Ok(found) if found.op_version != version || !name_matches(op, &found.op) => {
                        listing.problems.push((
                            path,
                            format!(
                                "holds {}@v{} under another file name",
                                found.op, found.op_version
                            ),
                        ))
                    }
                    Ok(found) if dir.file_name() != Some(found.fingerprint.digest().as_ref()) => {
                        listing.problems.push((
                            path,
                            "its fingerprint does not match its directory".to_string(),
                        ))
                    }
                    Ok(found) => listing.files.push(StoredFile {
                        path,
                        fingerprint: found.fingerprint,
                        op: found.op,
                        op_version: found.op_version,
                        entries: found.entries,
                    }),
                    Err(why) => listing.problems.push((path, why)),
                }
            }
        }
        listing
    }

    /// Removes the cache files of `op` (every op when `None`), each under its lock so that a
    /// concurrent writer is not cut short, plus their set-aside damaged copies. Recorded
    /// invocations (`recorded.yaml`) are kept.
    ///
    /// # Errors
    /// The first file that could not be removed; files removed before it stay removed.
    pub fn clear(&self, op: Option<&str>) -> Result<Cleared, String> {
        let mut cleared = Cleared::default();
        let wanted = |name: &str| op.is_none_or(|op| name_matches(name, op));
        for dir in self.device_dirs() {
            for (name, path) in Self::named_files(&dir) {
                if let Some(file_op) = set_aside_op(&name) {
                    if wanted(file_op) {
                        remove(&path)?;
                        cleared.set_aside += 1;
                    }
                    continue;
                }
                let Some((file_op, _)) = cache_file_name(&name) else {
                    continue;
                };
                if !wanted(file_op) {
                    continue;
                }
                let _lock = FileLock::acquire(&path)
                    .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
                cleared.entries += inspect(&path).map_or(0, |f| f.entries.len());
                remove(&path)?;
                cleared.files += 1;
            }
        }
        Ok(cleared)
    }
}

/// Whether a file-name op (non-alphanumerics replaced by `_`) names `op`.
fn name_matches(file_op: &str, op: &str) -> bool {
    file_op.len() == op.len()
        && file_op.chars().zip(op.chars()).all(|(f, o)| {
            f == o || (f == '_' && !(o.is_ascii_alphanumeric() || o == '_' || o == '-'))
        })
}

fn remove(path: &Path) -> Result<(), String> {
    let meta = fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let result = if meta.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    result.map_err(|e| format!("cannot remove {}: {e}", path.display()))
}
