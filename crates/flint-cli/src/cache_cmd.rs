//! `flint cache path | list | show | clear | export | import`: the persistent tuning cache,
//! readable, and shipped between machines.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use flint_tune::{Bundle, DeviceFingerprint, DiskCache, DiskEntry, Policy, StoredFile};
use serde_json::{Value, json};

use crate::failure::{Failure, Outcome};

/// The cache directory: `--cache-dir`, else `FLINT_CACHE_DIR`, else the user cache dir.
pub fn dir(flag: Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(dir) = flag {
        return Ok(dir);
    }
    let policy = Policy::from_env().map_err(|e| Failure::Input(e.to_string()))?;
    policy.resolved_cache_dir().ok_or_else(|| {
        Failure::Input(
            "this platform has no user cache directory; pass --cache-dir or set FLINT_CACHE_DIR"
                .into(),
        )
    })
}

/// The op ids this build knows.
fn known_ops() -> Vec<&'static str> {
    flint_kernels::op_specs().iter().map(|s| s.id).collect()
}

/// Refuses an op that this build does not know and the cache does not hold either.
fn known_op(op: &str, files: &[StoredFile]) -> Outcome {
    if known_ops().contains(&op) || files.iter().any(|f| f.op == op) {
        Ok(())
    } else {
        Err(Failure::Input(format!(
            "unknown op `{op}` (this build has {}; the cache holds no other)",
            known_ops().join(", ")
        )))
    }
}

fn fingerprint_json(fp: &DeviceFingerprint) -> Value {
    let mut v = serde_json::to_value(fp).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.insert("digest".into(), json!(fp.digest()));
    }
    v
}

fn device_line(fp: &DeviceFingerprint) -> String {
    format!(
        "{} {} {} (driver {}, flint {}) [{}]",
        fp.runtime(),
        fp.device(),
        fp.compute().split(' ').next().unwrap_or(""),
        fp.driver(),
        fp.flint_version(),
        fp.digest()
    )
}

/// `flint cache path`.
pub fn path(dir: &Path, json: bool) -> Outcome {
    if json {
        println!("{}", json!({"dir": dir, "exists": dir.is_dir()}));
    } else {
        println!("{}", dir.display());
    }
    Ok(())
}

/// `flint cache list`.
pub fn list(dir: &Path, json: bool) -> Outcome {
    let listing = DiskCache::new(dir).list();
    if json {
        let files: Vec<Value> = listing
            .files
            .iter()
            .map(|f| {
                json!({
                    "path": f.path,
                    "op": f.op,
                    "op_version": f.op_version,
                    "entries": f.entries.len(),
                    "fingerprint": fingerprint_json(&f.fingerprint),
                })
            })
            .collect();
        let problems: Vec<Value> = listing
            .problems
            .iter()
            .map(|(p, why)| json!({"path": p, "reason": why}))
            .collect();
        println!(
            "{}",
            json!({"dir": dir, "files": files, "problems": problems})
        );
        return Ok(());
    }
    println!("cache {}", dir.display());
    if listing.files.is_empty() {
        println!("  no tuned configs yet");
    }
    let mut last: Option<&DeviceFingerprint> = None;
    for f in &listing.files {
        if last != Some(&f.fingerprint) {
            println!("device {}", device_line(&f.fingerprint));
            last = Some(&f.fingerprint);
        }
        println!(
            "  {:<16} v{:<3} {:>4} entries  {}",
            f.op,
            f.op_version,
            f.entries.len(),
            f.path.display()
        );
    }
    for (p, why) in &listing.problems {
        println!("unusable {}: {why}", p.display());
    }
    Ok(())
}

fn entry_json(digest: &str, e: &DiskEntry) -> Value {
    json!({
        "key": digest,
        "signature": e.signature,
        "config": serde_json::to_value(&e.config).unwrap_or(Value::Null),
        "source": e.source,
        "median_us": e.median_us,
        "created": e.created,
    })
}

/// `flint cache show <op>`.
pub fn show(dir: &Path, op: &str, json: bool) -> Outcome {
    let listing = DiskCache::new(dir).list();
    known_op(op, &listing.files)?;
    let files: Vec<&StoredFile> = listing.files.iter().filter(|f| f.op == op).collect();
    if json {
        let out: Vec<Value> = files
            .iter()
            .map(|f| {
                json!({
                    "path": f.path,
                    "op_version": f.op_version,
                    "fingerprint": fingerprint_json(&f.fingerprint),
                    "entries": f.entries.iter().map(|(d, e)| entry_json(d, e)).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", json!({"op": op, "files": out}));
        return Ok(());
    }
    if files.is_empty() {
        println!("no cached configs for {op} in {}", dir.display());
    }
    for f in files {
        println!("{op}@v{} on {}", f.op_version, device_line(&f.fingerprint));
        for (digest, e) in &f.entries {
            let config = serde_json::to_string(&e.config).unwrap_or_default();
            let time = e
                .median_us
                .map_or("-".to_string(), |us| format!("{us:.1} us"));
            println!(
                "  {}  {config}  {} {time}\n      {}",
                &digest[..12.min(digest.len())],
                e.source,
                e.signature
            );
        }
    }
    Ok(())
}

/// `flint cache clear [--op OP]`.
pub fn clear(dir: &Path, op: Option<&str>, json: bool) -> Outcome {
    let cache = DiskCache::new(dir);
    if let Some(op) = op {
        known_op(op, &cache.list().files)?;
    }
    let cleared = cache.clear(op).map_err(Failure::Input)?;
    if json {
        println!(
            "{}",
            json!({"files": cleared.files, "entries": cleared.entries, "set_aside": cleared.set_aside})
        );
    } else {
        println!(
            "removed {} file(s) holding {} entries{} from {}",
            cleared.files,
            cleared.entries,
            if cleared.set_aside > 0 {
                format!(" and {} damaged copies", cleared.set_aside)
            } else {
                String::new()
            },
            dir.display()
        );
    }
    Ok(())
}

/// `flint cache export FILE [--op OP]`; `-` writes the bundle to stdout.
pub fn export(dir: &Path, file: &Path, op: Option<&str>, json: bool) -> Outcome {
    let cache = DiskCache::new(dir);
    if let Some(op) = op {
        known_op(op, &cache.list().files)?;
    }
    let bundle = cache.export(op);
    let text = bundle.to_yaml().map_err(Failure::Input)?;
    let summary = format!(
        "exported {} entries ({} file(s))",
        bundle.len(),
        bundle.files.len()
    );
    if file == Path::new("-") {
        std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Input(format!("cannot write to stdout: {e}")))?;
        eprintln!("{summary}");
        return Ok(());
    }
    std::fs::write(file, text)
        .map_err(|e| Failure::Input(format!("cannot write {}: {e}", file.display())))?;
    if json {
        println!(
            "{}",
            json!({"file": file, "entries": bundle.len(), "files": bundle.files.len()})
        );
    } else {
        println!("{summary} to {}", file.display());
    }
    Ok(())
}

/// `flint cache import FILE`: every entry validated; skipped entries are a `Found` failure.
pub fn import(dir: &Path, file: &Path, json: bool) -> Outcome {
    let bundle = Bundle::read(file).map_err(Failure::Input)?;
    let report = DiskCache::new(dir)
        .import(&bundle, &flint_kernels::check_entry)
        .map_err(Failure::Input)?;
    if json {
        let skipped: Vec<Value> = report
            .skipped
            .iter()
            .map(|s| json!({"op": s.op, "key": s.key, "reason": s.reason}))
            .collect();
        println!(
            "{}",
            json!({
                "added": report.added,
                "replaced": report.replaced,
                "unchanged": report.unchanged,
                "skipped": skipped,
            })
        );
    } else {
        println!(
            "imported {} into {}: {} added, {} replaced, {} unchanged, {} skipped",
            file.display(),
            dir.display(),
            report.added,
            report.replaced,
            report.unchanged,
            report.skipped.len()
        );
        for s in &report.skipped {
            println!(
                "  skipped {} {}: {}",
                s.op,
                &s.key[..12.min(s.key.len())],
                s.reason
            );
        }
    }
    if report.skipped.is_empty() {
        Ok(())
    } else {
        Err(Failure::Found(format!(
            "{} entr{} skipped",
            report.skipped.len(),
            if report.skipped.len() == 1 {
                "y"
            } else {
                "ies"
            }
        )))
    }
}
