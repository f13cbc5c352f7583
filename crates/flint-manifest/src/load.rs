//! Loading `manifest/*.yaml`, with errors that name the file, entry and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::expr::Expr;
use crate::schema::Entry;

/// Manifest files larger than this are refused unread.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// A load error: where, and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}{}: {message}", .file.display(), .entry.as_ref().map(|e| format!(": entry `{e}`")).unwrap_or_default(), .line.map(|l| format!(" (line {l})")).unwrap_or_default())]
pub struct LoadError {
    /// The file.
    pub file: PathBuf,
    /// The entry, when known.
    pub entry: Option<String>,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// An entry with its expressions parsed.
#[derive(Clone, Debug)]
pub struct LoadedEntry {
    /// The op id.
    pub id: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The entry as written.
    pub entry: Entry,
    /// Shape rules, parsed.
    pub shape_rules: Vec<Expr>,
    /// Output shapes, parsed: name -> one expression per dimension.
    pub outputs: BTreeMap<String, Vec<Expr>>,
    /// Input shapes, parsed.
    pub inputs: BTreeMap<String, Vec<Expr>>,
    /// FLOPs, parsed.
    pub flops: Expr,
    /// Bytes, parsed.
    pub bytes: Expr,
}

/// Every entry of a manifest directory, by op id.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    /// Entries by op id.
    pub entries: BTreeMap<String, LoadedEntry>,
}

impl Manifest {
    /// Loads every `*.yaml` file of `dir`.
    ///
    /// # Errors
    /// The first file that cannot be read or parsed, or an op id defined twice.
    pub fn load_dir(dir: &Path) -> Result<Self, LoadError> {
        let err = |file: &Path, message: String| LoadError {
            file: file.to_path_buf(),
            entry: None,
            line: None,
            message,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| err(dir, format!("cannot read directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        let mut manifest = Manifest::default();
        for file in files {
            let meta = std::fs::metadata(&file).map_err(|e| err(&file, e.to_string()))?;
            if meta.len() > MAX_MANIFEST_BYTES {
                return Err(err(
                    &file,
                    format!("larger than {MAX_MANIFEST_BYTES} bytes"),
                ));
            }
            let text = std::fs::read_to_string(&file).map_err(|e| err(&file, e.to_string()))?;
            for (id, entry) in Self::parse(&text, &file)?.entries {
                if let Some(prev) = manifest.entries.get(&id) {
                    return Err(LoadError {
                        file: file.clone(),
                        entry: Some(id.clone()),
                        line: line_of(&text, &format!("{id}:")),
                        message: format!("op defined twice (also in {})", prev.file.display()),
                    });
                }
                manifest.entries.insert(id, entry);
            }
        }
        Ok(manifest)
    }

    /// Parses one file's text; `file` names it in errors.
    ///
    /// # Errors
    /// A YAML or schema error (with entry and line), or an expression that does not parse.
    pub fn parse(text: &str, file: &Path) -> Result<Self, LoadError> {
        let raw: BTreeMap<String, Entry> = serde_yaml::from_str(text).map_err(|e| {
            let message = e.to_string();
            let entry = message
                .split(['.', ':'])
                .next()
                .filter(|head| text.lines().any(|l| l.starts_with(&format!("{head}:"))))
                .map(str::to_string);
            LoadError {
                file: file.to_path_buf(),
                entry,
                line: e.location().map(|l| l.line()),
                message,
            }
        })?;
        let mut entries = BTreeMap::new();
        for (id, entry) in raw {
            let fail = |needle: &str, message: String| LoadError {
                file: file.to_path_buf(),
                entry: Some(id.clone()),
                line: line_of(text, needle),
                message,
            };
            let parse = |what: &str, s: &str| {
                Expr::parse(s).map_err(|e| fail(s, format!("{what} `{s}`: {e}")))
            };
            let shapes =
                |map: &BTreeMap<String, String>| -> Result<BTreeMap<String, Vec<Expr>>, LoadError> {
                    map.iter()
                        .map(|(name, shape)| {
                            let dims = parse_shape(shape).map_err(|e| {
                                fail(shape, format!("shape of `{name}` `{shape}`: {e}"))
                            })?;
                            Ok((name.clone(), dims))
                        })
                        .collect()
                };
            let loaded = LoadedEntry {
                shape_rules: entry
                    .signature
                    .shape_rules
                    .iter()
                    .map(|r| parse("shape rule", r))
                    .collect::<Result<_, _>>()?,
                outputs: shapes(&entry.signature.outputs)?,
                inputs: shapes(&entry.signature.inputs)?,
                flops: parse("roofline flops", &entry.roofline.flops)?,
                bytes: parse("roofline bytes", &entry.roofline.bytes)?,
                id: id.clone(),
                file: file.to_path_buf(),
                entry,
            };
            entries.insert(id, loaded);
        }
        Ok(Self { entries })
    }
}

/// `"[B, H, Sq, D]"` -> one expression per dimension.
fn parse_shape(shape: &str) -> Result<Vec<Expr>, String> {
    let inner = shape
        .trim()
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .ok_or("expected `[dim, ...]`")?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner.split(',').map(|d| Expr::parse(d.trim())).collect()
}

/// The 1-based line of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}
