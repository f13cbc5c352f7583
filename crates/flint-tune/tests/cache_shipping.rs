//! Listing, clearing, exporting and importing the persistent cache.

mod common;

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::*;
use flint_tune::{
    Bundle, DeviceFingerprint, DiskCache, MAX_BUNDLE_BYTES, Op, SigValue, Signature, Tier,
};
use proptest::prelude::*;

/// The check a real import uses, for the fake op: known op, current version, a config the
/// op accepts.
fn fake_check(
    _: &DeviceFingerprint,
    op: &str,
    version: u32,
    sig: &Signature,
    config: &serde_yaml::Value,
) -> Result<(), String> {
    if op != FAKE.id() {
        return Err(format!("unknown op `{op}`"));
    }
    if version != FAKE.version() {
        return Err(format!(
            "version {version}, this build has {}",
            FAKE.version()
        ));
    }
    let config: BlockConfig =
        serde_yaml::from_value(config.clone()).map_err(|e| format!("undecodable: {e}"))?;
    let inv = flint_tune::Invocation::new(op, sig.clone(), fingerprint());
    FAKE.check(&inv, &config)
}

/// Tunes `lens` into a cache at `dir` (block 128 wins each).
fn tuned(dir: &Path, lens: &[usize]) {
    let (selector, _) = selector_on(dir);
    let mut b = bench(Arc::new(Mutex::new(0)));
    for &len in lens {
        selector.choose(&FAKE, &inv(len), Some(&mut b)).unwrap();
    }
}

#[test]
fn list_shows_every_file_and_flags_damaged_ones() {
    let dir = tempfile::tempdir().unwrap();
    tuned(dir.path(), &[8, 100, 1000]);
    let cache = DiskCache::new(dir.path());
    let listing = cache.list();
    assert_eq!(listing.files.len(), 1);
    let file = &listing.files[0];
    assert_eq!((file.op.as_str(), file.op_version), ("fake_op", 1));
    assert_eq!(file.entries.len(), 3);
    assert!(listing.problems.is_empty());

    // A damaged file beside it is reported, not parsed into the listing, and not touched.
    let other = file.path.with_file_name("other_op@v3.yaml");
    fs::write(&other, "schema: [not a cache").unwrap();
    let listing = cache.list();
    assert_eq!(listing.files.len(), 1);
    assert_eq!(listing.problems.len(), 1, "{:?}", listing.problems);
    assert_eq!(listing.problems[0].0, other);
    assert!(other.exists());
    // An empty or absent root lists nothing.
    assert!(
        DiskCache::new(dir.path().join("absent"))
            .list()
            .files
            .is_empty()
    );
}

#[test]
fn clear_removes_one_op_or_all_and_keeps_recordings() {
    let dir = tempfile::tempdir().unwrap();
    tuned(dir.path(), &[8, 100]);
    let cache = DiskCache::new(dir.path());
    let path = cache.list().files[0].path.clone();
    let other = path.with_file_name("other_op@v1.yaml");
    fs::copy(&path, &other).unwrap();
    fs::write(path.with_file_name("fake_op@v1.yaml.bad-1-2"), "junk").unwrap();
    fs::write(
        dir.path().join("recorded.yaml"),
        "schema: 1\ninvocations: {}\n",
    )
    .unwrap();

    let cleared = cache.clear(Some("fake_op")).unwrap();
    assert_eq!(
        (cleared.files, cleared.entries, cleared.set_aside),
        (1, 2, 1)
    );
    assert!(!path.exists() && other.exists());
    let cleared = cache.clear(None).unwrap();
    assert_eq!(cleared.files, 1);
    assert!(!other.exists());
    assert!(dir.path().join("recorded.yaml").exists());
    // A second process tunes again: nothing stale answers.
    let (selector, events) = selector_on(dir.path());
    let mut b = bench(Arc::new(Mutex::new(0)));
    selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();
    assert_eq!(hits(&events), vec![Tier::Autotune]);
}

#[test]
fn exported_configs_answer_from_disk_after_import_elsewhere() {
    let (from, to) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    tuned(from.path(), &[8, 100, 1000]);
    let bundle = DiskCache::new(from.path()).export(None);
    assert_eq!(bundle.len(), 3);
    let path = from.path().join("bundle.yaml");
    fs::write(&path, bundle.to_yaml().unwrap()).unwrap();

    let read = Bundle::read(&path).unwrap();
    assert_eq!(read, bundle);
    let cache = DiskCache::new(to.path());
    let report = cache.import(&read, &fake_check).unwrap();
    assert_eq!((report.added, report.replaced, report.unchanged), (3, 0, 0));
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let file = &cache.list().files[0];
    assert!(file.entries.values().all(|e| e.source == "import"));

    // The other machine answers every shape from disk and benchmarks nothing.
    let (selector, events) = selector_on(to.path());
    let calls = Arc::new(Mutex::new(0));
    let mut b = bench(calls.clone());
    for len in [8, 100, 1000] {
        let c = selector.choose(&FAKE, &inv(len), Some(&mut b)).unwrap();
        assert_eq!(c.config.block, 128);
    }
    assert_eq!(hits(&events), vec![Tier::Disk; 3]);
    assert_eq!(*calls.lock().unwrap(), 0);

    // Importing again changes nothing.
    let again = cache.import(&read, &fake_check).unwrap();
    assert_eq!((again.added, again.unchanged), (0, 3));
}

#[test]
fn import_skips_every_poisoned_entry_with_its_reason() {
    let from = tempfile::tempdir().unwrap();
    tuned(from.path(), &[8, 100, 1000, 5000]);
    let mut bundle = DiskCache::new(from.path()).export(None);
    let file = &mut bundle.files[0];
    let mut digests: Vec<String> = file.entries.keys().cloned().collect();
    digests.sort();
    // 1: a config outside the op's space; 2: a signature edited after tuning;
    // 3: a config of the wrong shape. The fourth stays good.
    file.entries.get_mut(&digests[0]).unwrap().config =
        serde_yaml::from_str("{block: 100000}").unwrap();
    file.entries.get_mut(&digests[1]).unwrap().signature = "dtype=\"f32\";len=2".into();
    file.entries.get_mut(&digests[2]).unwrap().config = serde_yaml::from_str("[1, 2]").unwrap();
    // A whole file for an op this build does not have, and one of an old version.
    let mut unknown = bundle.files[0].clone();
    unknown.op = "no_such_op".into();
    let mut old = bundle.files[0].clone();
    old.op_version = 0;
    bundle.files.extend([unknown, old]);

    let to = tempfile::tempdir().unwrap();
    let cache = DiskCache::new(to.path());
    let report = cache.import(&bundle, &fake_check).unwrap();
    assert_eq!(report.added, 1);
    let reasons: Vec<&str> = report.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(report.skipped.len(), 3 + 4 + 4, "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("not a power of two")));
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("does not match its signature"))
    );
    assert!(reasons.iter().any(|r| r.contains("undecodable")));
    // The unknown op's entries are refused by the check, not because of their keys (which
    // were made for another op, so they do not match either: either reason refuses them).
    assert!(
        report
            .skipped
            .iter()
            .filter(|s| s.op == "no_such_op")
            .all(|s| !s.reason.is_empty())
    );
    let listing = cache.list();
    assert_eq!(listing.files.len(), 1);
    assert_eq!(listing.files[0].entries.len(), 1);
}

#[test]
fn bad_bundles_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        fs::write(&p, text).unwrap();
        p
    };
    let missing = Bundle::read(&dir.path().join("absent.yaml")).unwrap_err();
    assert!(missing.contains("cannot open"), "{missing}");
    let junk = Bundle::read(&write("junk.yaml", b"files: [")).unwrap_err();
    assert!(junk.contains("not a flint cache bundle"), "{junk}");
    let schema = Bundle::read(&write("s.yaml", b"schema: 99\nfiles: []\n")).unwrap_err();
    assert!(schema.contains("schema 99"), "{schema}");
    let binary = Bundle::read(&write("b.yaml", &[0xff, 0xfe, 0])).unwrap_err();
    assert!(binary.contains("cannot read"), "{binary}");
    let huge = dir.path().join("huge.yaml");
    fs::File::create(&huge)
        .unwrap()
        .set_len(MAX_BUNDLE_BYTES + 1)
        .unwrap();
    let huge = Bundle::read(&huge).unwrap_err();
    assert!(huge.contains("bundle limit"), "{huge}");
}

fn sig_value() -> impl Strategy<Value = SigValue> {
    prop_oneof![
        any::<bool>().prop_map(SigValue::Bool),
        any::<i64>().prop_map(SigValue::Int),
        any::<f64>().prop_map(SigValue::Float),
        ".{0,12}".prop_map(SigValue::Str),
        proptest::collection::vec(any::<u64>(), 0..5).prop_map(SigValue::Dims),
    ]
}

proptest! {
    /// Canonical text parses back to the same signature (floats by their canonical text,
    /// since NaN != NaN).
    #[test]
    fn canonical_signatures_parse_back(
        values in proptest::collection::btree_map("[a-z_][a-z0-9_]{0,8}", sig_value(), 0..6)
    ) {
        let mut sig = Signature::new();
        for (k, v) in values {
            sig = sig.with(k, v);
        }
        let text = sig.canonical();
        let back: Signature = text.parse().map_err(|e: String| TestCaseError::fail(e))?;
        prop_assert_eq!(back.canonical(), text);
    }

    /// Arbitrary text never panics the parser.
    #[test]
    fn signature_parser_takes_any_text(text in ".{0,64}") {
        let _ = text.parse::<Signature>();
    }
}
