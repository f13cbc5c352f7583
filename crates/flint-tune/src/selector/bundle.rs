//! Shipping tuned configs between machines: a cache exported to one YAML bundle, and a
//! bundle imported entry by entry, each one validated before it is merged.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::disk_cache::{DiskCache, DiskEntry};
use crate::{CallKey, DeviceFingerprint, Signature};

/// The version of the bundle layout.
pub const BUNDLE_SCHEMA: u32 = 1;

/// Bundles larger than this are refused unread.
pub const MAX_BUNDLE_BYTES: u64 = 64 << 20;

/// Tuned configs for export: every file of a cache, or of one op.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    /// [`BUNDLE_SCHEMA`].
    pub schema: u32,
    /// One group per cache file.
    pub files: Vec<BundleFile>,
}

/// The configs of one op version on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleFile {
    /// The device they were tuned on.
    pub fingerprint: DeviceFingerprint,
    /// The op id.
    pub op: String,
    /// The op's config format version.
    pub op_version: u32,
    /// Call key digest -> entry.
    pub entries: BTreeMap<String, DiskEntry>,
}

/// Checks that an imported config is one the op accepts: `(fingerprint, op, version,
/// signature, config)`. It knows the ops (the kernels crate provides it); an unknown op, an
/// old version, an undecodable config or one the op's check refuses is an `Err` with why.
pub type EntryCheck<'a> =
    &'a dyn Fn(&DeviceFingerprint, &str, u32, &Signature, &serde_yaml::Value) -> Result<(), String>;

/// What an import did.
#[derive(Debug, Default)]
pub struct ImportReport {
    /// Entries added.
    pub added: usize,
    /// Entries that replaced a different config for the same key.
    pub replaced: usize,
    /// Entries already present with the same config.
    pub unchanged: usize,
    /// Entries refused, and why.
    pub skipped: Vec<Skipped>,
}

/// One refused entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// The op the entry claims.
    pub op: String,
    /// Its call key digest (or the file's description when the whole file was refused).
    pub key: String,
    /// Why.
    pub reason: String,
}

impl Bundle {
    /// Reads a bundle from `path`.
    ///
    /// # Errors
    /// A missing, oversized, non-UTF-8 or non-bundle file, or another schema.
    pub fn read(path: &Path) -> Result<Self, String> {
        let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len > MAX_BUNDLE_BYTES {
            return Err(format!(
                "{} is {len} bytes, over the {MAX_BUNDLE_BYTES}-byte bundle limit",
                path.display()
            ));
        }
        let mut text = String::new();
        file.take(MAX_BUNDLE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses bundle text.
    ///
    /// # Errors
    /// Text that is not a bundle, or a bundle of another schema.
    pub fn parse(text: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Header {
            schema: u32,
        }
        let header: Header =
            serde_yaml::from_str(text).map_err(|e| format!("not a flint cache bundle: {e}"))?;
        if header.schema != BUNDLE_SCHEMA {
            return Err(format!(
                "bundle schema {} is not {BUNDLE_SCHEMA} (made by another flint release)",
                header.schema
            ));
        }
        serde_yaml::from_str(text).map_err(|e| format!("not a flint cache bundle: {e}"))
    }

    /// The bundle as YAML.
    ///
    /// # Errors
    /// When a config does not serialise (it came from a cache, so it did before).
    pub fn to_yaml(&self) -> Result<String, String> {
        serde_yaml::to_string(self).map_err(|e| format!("cannot encode the bundle: {e}"))
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.files.iter().map(|f| f.entries.len()).sum()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl DiskCache {
    /// Every readable entry of `op` (every op when `None`), as a bundle. Unusable files are
    /// left out (see [`DiskCache::list`]).
    pub fn export(&self, op: Option<&str>) -> Bundle {
        let files = self
            .list()
            .files
            .into_iter()
            .filter(|f| op.is_none_or(|op| f.op == op))
            .map(|f| BundleFile {
                fingerprint: f.fingerprint,
                op: f.op,
                op_version: f.op_version,
                entries: f.entries,
            })
            .collect();
        Bundle {
            schema: BUNDLE_SCHEMA,
            files,
        }
    }

    /// Merges `bundle` into this cache. Every entry must have a key that matches its
    /// signature and pass `check`; the rest are skipped with the reason. Accepted entries are
    /// marked `source: import` and merged under the file lock like a tuned entry.
    ///
    /// # Errors
    /// The first write that failed; entries of earlier files stay imported.
    pub fn import(&self, bundle: &Bundle, check: EntryCheck<'_>) -> Result<ImportReport, String> {
        let mut report = ImportReport::default();
        for file in &bundle.files {
            let existing = self.entries(&file.fingerprint, &file.op, file.op_version);
            let mut accepted = Vec::new();
            for (digest, entry) in &file.entries {
                let skip = |reason: String| Skipped {
                    op: file.op.clone(),
                    key: digest.clone(),
                    reason,
                };
                if let Err(reason) = validate(file, digest, entry, check) {
                    report.skipped.push(skip(reason));
                    continue;
                }
                match existing.get(digest) {
                    Some(old) if old.config == entry.config => {
                        report.unchanged += 1;
                        continue;
                    }
                    Some(_) => report.replaced += 1,
                    None => report.added += 1,
                }
                let mut entry = entry.clone();
                entry.source = "import".to_string();
                accepted.push((digest.clone(), entry));
            }
            if !accepted.is_empty() {
                self.put_all(&file.fingerprint, &file.op, file.op_version, accepted)?;
            }
        }
        Ok(report)
    }
}

fn validate(
    file: &BundleFile,
    digest: &str,
    entry: &DiskEntry,
    check: EntryCheck<'_>,
) -> Result<(), String> {
    if file.op.is_empty() || file.op.len() > 64 {
        return Err(format!("op name {:?} is not an op id", file.op));
    }
    let key = CallKey::from_canonical(&file.op, file.op_version, entry.signature.clone());
    if key.digest() != digest {
        return Err("its key does not match its signature (edited or damaged)".to_string());
    }
    let signature: Signature = entry
        .signature
        .parse()
        .map_err(|e| format!("unreadable signature: {e}"))?;
    check(
        &file.fingerprint,
        &file.op,
        file.op_version,
        &signature,
        &entry.config,
    )
}
