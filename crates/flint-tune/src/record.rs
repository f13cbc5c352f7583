//! Invocation recording (`FLINT_RECORD=1`): the invocations a process saw, kept on disk so
//! that `flint tune --recorded` can tune them offline.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::locked_file::{self, FileLock, ReadFault};
use crate::{CallKey, Invocation};

/// The version of the recording file layout.
pub const RECORD_SCHEMA: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordFile {
    schema: u32,
    /// `<op>/<call key digest>` -> the first invocation seen with that key.
    invocations: BTreeMap<String, Invocation>,
}

/// Appends each new `(op, key)` seen by this process to `<dir>/recorded.yaml`.
pub struct Recorder {
    path: PathBuf,
    seen: Mutex<HashSet<String>>,
}

impl Recorder {
    /// A recorder writing to `<dir>/recorded.yaml`.
    pub fn new(dir: &Path) -> Self {
        Self {
            path: dir.join("recorded.yaml"),
            seen: Mutex::new(HashSet::new()),
        }
    }

    /// The recording file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `inv` unless its key was already recorded by this process.
    ///
    /// # Errors
    /// A description of the I/O failure (recording is best-effort; the caller logs it).
    pub fn record(&self, inv: &Invocation, key: &CallKey) -> Result<(), String> {
        let id = format!("{}/{}", inv.op(), key.digest());
        if !self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone())
        {
            return Ok(());
        }
        if let Some(dir) = self.path.parent() {
            locked_file::create_private_dir(dir).map_err(|e| e.to_string())?;
        }
        let _lock = FileLock::acquire(&self.path).map_err(|e| e.to_string())?;
        let mut file = read(&self.path);
        file.schema = RECORD_SCHEMA;
        file.invocations.entry(id).or_insert_with(|| inv.clone());
        let text = serde_yaml::to_string(&file).map_err(|e| e.to_string())?;
        locked_file::write_atomic(&self.path, &text).map_err(|e| e.to_string())
    }

    /// Every invocation recorded in `<dir>/recorded.yaml` (an unusable file reads as empty).
    pub fn load(dir: &Path) -> Vec<Invocation> {
        read(&dir.join("recorded.yaml"))
            .invocations
            .into_values()
            .collect()
    }
}

fn read(path: &Path) -> RecordFile {
    match locked_file::read_bounded(path) {
        Ok(Some(text)) => match serde_yaml::from_str::<RecordFile>(&text) {
            Ok(file) if file.schema == RECORD_SCHEMA => file,
            Ok(file) => {
                log::warn!(
                    "flint recording {}: schema {} ignored",
                    path.display(),
                    file.schema
                );
                RecordFile::default()
            }
            Err(e) => {
                log::warn!(
                    "flint recording {} is unreadable ({e}); starting afresh",
                    path.display()
                );
                RecordFile::default()
            }
        },
        Ok(None) => RecordFile::default(),
        Err(ReadFault::Bad(why)) => {
            log::warn!(
                "flint recording {} is unusable ({why}); starting afresh",
                path.display()
            );
            RecordFile::default()
        }
    }
}
