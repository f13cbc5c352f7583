//! `flint manifest check`: the op contracts in `manifest/*.yaml` against the code.

use std::path::PathBuf;

use flint_manifest::{Manifest, validate};

use crate::failure::{Failure, Outcome};

/// Checks every entry (levels L0 to L4); broken rules are a `Found` failure.
pub fn check(dir: PathBuf, root: Option<PathBuf>, json: bool) -> Outcome {
    let manifest = Manifest::load_dir(&dir).map_err(|e| Failure::Input(e.to_string()))?;
    let root = root.unwrap_or_else(|| {
        dir.canonicalize()
            .ok()
            .and_then(|d| d.parent().map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("."))
    });
    let findings = validate(&manifest, &flint_kernels::op_specs(), &root);
    if json {
        let list: Vec<_> = findings
            .iter()
            .map(|f| {
                serde_json::json!({
                    "op": f.op,
                    "level": format!("{:?}", f.level),
                    "rule": f.rule,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "entries": manifest.entries.len(),
                "ok": findings.is_empty(),
                "findings": list,
            })
        );
    } else if findings.is_empty() {
        println!(
            "manifest {}: {} entries, every level (L0-L4) holds",
            dir.display(),
            manifest.entries.len()
        );
    } else {
        for f in &findings {
            eprintln!("{f}");
        }
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(Failure::Found(format!("{} broken rule(s)", findings.len())))
    }
}
