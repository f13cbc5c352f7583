//! Tier 4: the persistent cache. One YAML file per device fingerprint and op version:
//! `<dir>/<fingerprint digest>/<op>@v<version>.yaml`.
//!
//! Writes are read-merge-write under an exclusive lock with an atomic replace, so concurrent
//! processes lose no entries. A bad file is logged, set aside and rebuilt; a bad entry is
//! dropped alone. An unwritable directory degrades to memory-only with one warning.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::locked_file::{self, FileLock, ReadFault};
use crate::{CallKey, DeviceFingerprint};

/// The version of the file layout. A file with another schema is set aside and rebuilt.
pub const CACHE_SCHEMA: u32 = 1;

/// One cached config, as stored on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskEntry {
    /// The canonical signature of the call key (for people; the map key is the digest).
    pub signature: String,
    /// The config, in the op's own serde form.
    pub config: serde_yaml::Value,
    /// Where it came from: `autotune` or `import`.
    pub source: String,
    /// The winner's median time in microseconds, when tuned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_us: Option<f64>,
    /// Unix seconds when it was written.
    pub created: u64,
}

impl DiskEntry {
    /// An entry for a config that autotuning chose.
    pub fn tuned(key: &CallKey, config: serde_yaml::Value, median_us: f64) -> Self {
        Self {
            signature: key.canonical().to_string(),
            config,
            source: "autotune".to_string(),
            median_us: Some(median_us),
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }
}

/// The file as stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheFile {
    schema: u32,
    op: String,
    op_version: u32,
    fingerprint: DeviceFingerprint,
    entries: BTreeMap<String, DiskEntry>,
}

/// The header fields read before the entries, so that a bad entry costs only itself.
#[derive(Deserialize)]
struct RawFile {
    schema: serde_yaml::Value,
    op: String,
    op_version: u32,
    fingerprint: DeviceFingerprint,
    #[serde(default)]
    entries: BTreeMap<String, serde_yaml::Value>,
}

type Entries = BTreeMap<String, DiskEntry>;

/// How a cache file's new text reaches the disk: `(path, text)`, atomically or not at all.
pub type CacheWriter = Arc<dyn Fn(&Path, &str) -> std::io::Result<()> + Send + Sync>;

/// The persistent cache rooted at one directory.
pub struct DiskCache {
    dir: PathBuf,
    /// Files already read by this process: path -> entries.
    loaded: Mutex<HashMap<PathBuf, Arc<Entries>>>,
    warned_unwritable: AtomicBool,
    writer: CacheWriter,
}

impl DiskCache {
    /// A cache rooted at `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            loaded: Mutex::new(HashMap::new()),
            warned_unwritable: AtomicBool::new(false),
            writer: Arc::new(|path: &Path, text: &str| locked_file::write_atomic(path, text)),
        }
    }

    /// Replaces the final write (an atomic temp-file-and-rename by default): a seam for
    /// injecting write faults (disk full, permission denied, a write cut short) in tests.
    /// The lock, the re-read and the merge around it are unchanged.
    pub fn with_writer(mut self, writer: CacheWriter) -> Self {
        self.writer = writer;
        self
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds `op@version` configs for `fp`.
    pub fn file_path(&self, fp: &DeviceFingerprint, op: &str, version: u32) -> PathBuf {
        let safe: String = op
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.dir
            .join(fp.digest())
            .join(format!("{safe}@v{version}.yaml"))
    }

    /// The stored entry for `key`, reading the file on first use in this process.
    pub fn get(
        &self,
        fp: &DeviceFingerprint,
        op: &str,
        version: u32,
        key: &CallKey,
    ) -> Option<DiskEntry> {
        let path = self.file_path(fp, op, version);
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        let entries = loaded
            .entry(path.clone())
            .or_insert_with(|| Arc::new(load(&path, fp, op, version, Locked::No)));
        entries.get(key.digest()).cloned()
    }

    /// Every entry of `op@version` for `fp`, read fresh from disk.
    pub fn entries(&self, fp: &DeviceFingerprint, op: &str, version: u32) -> Entries {
        let path = self.file_path(fp, op, version);
        load(&path, fp, op, version, Locked::No)
    }

    /// Adds or replaces the entry for `key`, merging with whatever other processes wrote.
    ///
    /// # Errors
    /// A description of the I/O failure; the caller keeps the config in memory. The first
    /// failure of this cache also logs one warning.
    pub fn put(
        &self,
        fp: &DeviceFingerprint,
        op: &str,
        version: u32,
        key: &CallKey,
        entry: DiskEntry,
    ) -> Result<(), String> {
        self.put_all(fp, op, version, vec![(key.digest().to_string(), entry)])
    }

    /// Adds or replaces several entries of one file in one locked write; the entries of the
    /// file as written are returned. Used by [`DiskCache::put`] and imports.
    ///
    /// # Errors
    /// As [`DiskCache::put`].
    pub(crate) fn put_all(
        &self,
        fp: &DeviceFingerprint,
        op: &str,
        version: u32,
        new: Vec<(String, DiskEntry)>,
    ) -> Result<(), String> {
        let path = self.file_path(fp, op, version);
        let result = self.merge_write(&path, fp, op, version, new);
        match &result {
            Ok(entries) => {
                let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
                loaded.insert(path, Arc::new(entries.clone()));
            }
            Err(reason) => {
                if !self.warned_unwritable.swap(true, Ordering::Relaxed) {
                    log::warn!(
                        "flint cache at {} is not writable ({reason}); tuned configs stay in memory for this process",
                        self.dir.display()
                    );
                }
            }
        }
        result.map(|_| ())
    }

    fn merge_write(
        &self,
        path: &Path,
        fp: &DeviceFingerprint,
        op: &str,
        version: u32,
        new: Vec<(String, DiskEntry)>,
    ) -> Result<Entries, String> {
        let parent = path.parent().unwrap_or(&self.dir);
        locked_file::create_private_dir(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        let _lock =
            FileLock::acquire(path).map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        // Re-read under the lock: another process may have added entries since our load.
        let mut entries = load(path, fp, op, version, Locked::Yes);
        entries.extend(new);
        write_file(self.writer.as_ref(), path, fp, op, version, &entries)?;
        Ok(entries)
    }
}

/// What [`inspect`] found in one cache file.
pub(crate) struct Inspected {
    pub(crate) fingerprint: DeviceFingerprint,
    pub(crate) op: String,
    pub(crate) op_version: u32,
    pub(crate) entries: Entries,
}

/// Reads a cache file without knowing whose it is (listing, export). Bad entries are skipped
/// as in [`load`]; a bad file is an error and is left where it is.
pub(crate) fn inspect(path: &Path) -> Result<Inspected, String> {
    let text = match locked_file::read_bounded(path) {
        Ok(Some(text)) => text,
        Ok(None) => return Err("vanished".to_string()),
        Err(ReadFault::Bad(why)) => return Err(why),
    };
    let raw: RawFile = serde_yaml::from_str(&text).map_err(|e| format!("not a cache file: {e}"))?;
    let (fingerprint, op, op_version) = (raw.fingerprint.clone(), raw.op.clone(), raw.op_version);
    let entries = parse(&text, &fingerprint, &op, op_version)?;
    Ok(Inspected {
        fingerprint,
        op,
        op_version,
        entries,
    })
}

/// Writes the whole file atomically.
fn write_file(
    writer: &dyn Fn(&Path, &str) -> std::io::Result<()>,
    path: &Path,
    fp: &DeviceFingerprint,
    op: &str,
    version: u32,
    entries: &Entries,
) -> Result<(), String> {
    let file = CacheFile {
        schema: CACHE_SCHEMA,
        op: op.to_string(),
        op_version: version,
        fingerprint: fp.clone(),
        entries: entries.clone(),
    };
    let text = serde_yaml::to_string(&file).map_err(|e| format!("cannot encode: {e}"))?;
    writer(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Whether the caller already holds the file's lock (flock is per open file, so taking it
/// twice in one process would deadlock).
#[derive(Clone, Copy, PartialEq)]
enum Locked {
    Yes,
    No,
}

/// Reads `path`. Never fails: a bad file is logged and set aside (when the directory allows
/// it); whole entries before a truncation are salvaged and written back; a bad entry is
/// logged and skipped.
fn load(path: &Path, fp: &DeviceFingerprint, op: &str, version: u32, locked: Locked) -> Entries {
    let read = |path: &Path| -> Result<Entries, (String, Entries)> {
        match locked_file::read_bounded(path) {
            Ok(None) => Ok(Entries::new()),
            Ok(Some(text)) => {
                parse(&text, fp, op, version).map_err(|why| (why, salvage(&text, fp, op, version)))
            }
            Err(ReadFault::Bad(why)) => Err((why, Entries::new())),
        }
    };
    let why = match read(path) {
        Ok(entries) => return entries,
        Err((why, _)) => why,
    };
    let repair = || -> Result<Option<(PathBuf, Entries)>, String> {
        match read(path) {
            // Another process replaced the file with a good one meanwhile.
            Ok(_) => Ok(None),
            Err((_, salvaged)) => {
                let aside = locked_file::set_aside(path).map_err(|e| e.to_string())?;
                if !salvaged.is_empty() {
                    write_file(&locked_file::write_atomic, path, fp, op, version, &salvaged)?;
                }
                Ok(Some((aside, salvaged)))
            }
        }
    };
    let repaired = match locked {
        Locked::Yes => repair(),
        Locked::No => FileLock::acquire(path)
            .map_err(|e| e.to_string())
            .and_then(|_lock| repair()),
    };
    match repaired {
        Ok(Some((aside, salvaged))) => {
            log::warn!(
                "flint cache file {} is unusable ({why}); moved to {}, kept {} whole entries, rebuilding",
                path.display(),
                aside.display(),
                salvaged.len()
            );
            salvaged
        }
        Ok(None) => read(path).unwrap_or_default(),
        Err(e) => {
            log::warn!(
                "flint cache file {} is unusable ({why}) and could not be moved aside ({e}); ignoring it",
                path.display()
            );
            Entries::new()
        }
    }
}

/// The entries of a file cut short (e.g. by a full disk under a non-atomic copy): retries
/// the parse at each entry boundary, last first, and keeps the longest prefix that parses.
fn salvage(text: &str, fp: &DeviceFingerprint, op: &str, version: u32) -> Entries {
    let is_entry_start = |line: &str| {
        line.len() == 2 + 32 + 1
            && line.starts_with("  ")
            && line.ends_with(':')
            && line[2..34].bytes().all(|b| b.is_ascii_hexdigit())
    };
    let mut offset = 0;
    let mut cuts = Vec::new();
    for line in text.split_inclusive('\n') {
        if is_entry_start(line.trim_end_matches('\n')) {
            cuts.push(offset);
        }
        offset += line.len();
    }
    // Bounded: a file holds at most a few hundred entries, and the size limit caps the rest.
    cuts.iter()
        .rev()
        .take(64)
        .find_map(|&cut| parse(&text[..cut], fp, op, version).ok())
        .unwrap_or_default()
}

fn parse(text: &str, fp: &DeviceFingerprint, op: &str, version: u32) -> Result<Entries, String> {
    let raw: RawFile = serde_yaml::from_str(text).map_err(|e| format!("not a cache file: {e}"))?;
    if raw.schema != CACHE_SCHEMA {
        return Err(format!("schema {:?} is not {CACHE_SCHEMA}", raw.schema));
    }
    if raw.op != op || raw.op_version != version || raw.fingerprint != *fp {
        return Err(format!(
            "holds {}@v{} for another device; expected {op}@v{version}",
            raw.op, raw.op_version
        ));
    }
    let mut entries = Entries::new();
    for (digest, value) in raw.entries {
        match serde_yaml::from_value::<DiskEntry>(value) {
            Ok(entry) if digest.len() == 32 && digest.bytes().all(|b| b.is_ascii_hexdigit()) => {
                entries.insert(digest, entry);
            }
            Ok(_) => log::warn!("flint cache: dropped an entry with malformed key {digest:?}"),
            Err(e) => log::warn!("flint cache: dropped entry {digest}: {e}"),
        }
    }
    Ok(entries)
}
