//! Multi-process safe YAML files: bounded reads, and read-merge-write under an exclusive
//! lock with an atomic replace. Used by the disk cache and the invocation recorder.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Files larger than this are treated as bad and set aside, never parsed: a cache holds a
/// few hundred entries of well under 1 KiB each.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// Why a file could not be used.
#[derive(Debug)]
pub(crate) enum ReadFault {
    /// It exists but is not usable (not a regular file, too large, unreadable, not UTF-8).
    Bad(String),
}

/// Reads `path` if it is a regular file within [`MAX_FILE_BYTES`]. `Ok(None)` if absent.
pub(crate) fn read_bounded(path: &Path) -> Result<Option<String>, ReadFault> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReadFault::Bad(format!("cannot stat: {e}"))),
    };
    if !meta.file_type().is_file() {
        return Err(ReadFault::Bad("not a regular file".to_string()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadFault::Bad(format!(
            "{} bytes exceeds the {MAX_FILE_BYTES}-byte limit",
            meta.len()
        )));
    }
    let mut text = String::new();
    File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| ReadFault::Bad(format!("cannot read: {e}")))?;
    Ok(Some(text))
}

/// Renames a bad file aside as `<name>.bad-<secs>-<pid>` so that it can be inspected, and
/// returns the new path. A directory or symlink is moved aside the same way.
pub(crate) fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".bad-{secs}-{}", std::process::id()));
    let aside = path.with_file_name(name);
    fs::rename(path, &aside)?;
    Ok(aside)
}

/// Creates `dir` (and parents) private to the user.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Holds an exclusive lock on `<path>.lock` until dropped.
pub(crate) struct FileLock {
    file: File,
}

impl FileLock {
    /// Blocks until the lock of `path` is held. The lock lives in a sibling file because the
    /// data file itself is replaced by rename on every write.
    pub(crate) fn acquire(path: &Path) -> std::io::Result<Self> {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(path.with_file_name(name))?;
        file.lock()?;
        Ok(Self { file })
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Writes `text` to `path` atomically: a fresh private temp file in the same directory
/// (created exclusively, so a planted symlink is never followed), synced, then renamed over.
pub(crate) fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".flint-tmp-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
