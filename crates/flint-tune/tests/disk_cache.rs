//! The persistent cache: bad files, unwritable directories and concurrent processes.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::*;
use flint_tune::{CallKey, DiskCache, DiskEntry, EventKind, Op, Tier};

fn tune_into(dir: &Path, lens: &[usize]) {
    let (selector, _) = selector_on(dir);
    let mut b = bench(Arc::new(Mutex::new(0)));
    for &len in lens {
        let c = selector.choose(&FAKE, &inv(len), Some(&mut b)).unwrap();
        assert_eq!(c.tier, Tier::Autotune);
    }
}

fn cache_file(dir: &Path) -> PathBuf {
    DiskCache::new(dir).file_path(&fingerprint(), "fake_op", 1)
}

fn set_aside_files(dir: &Path) -> Vec<PathBuf> {
    let parent = cache_file(dir).parent().unwrap().to_path_buf();
    fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".bad-"))
        .collect()
}

/// After a bad file: the selector misses the disk (no panic), retunes, and the rebuilt file
/// is good for a third process.
fn assert_recovers(dir: &Path) {
    let (selector, events) = selector_on(dir);
    let mut b = bench(Arc::new(Mutex::new(0)));
    let c = selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Autotune));
    assert!(
        !events
            .lock()
            .unwrap()
            .iter()
            .any(|k| matches!(k, EventKind::CacheWriteFailed { .. }))
    );
    let (third, _) = selector_on(dir);
    assert_eq!(third.choose(&FAKE, &inv(8), None).unwrap().tier, Tier::Disk);
    assert_eq!(
        set_aside_files(dir).len(),
        1,
        "the bad file is kept aside for inspection"
    );
}

#[test]
fn garbage_file_is_set_aside_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    fs::write(cache_file(dir.path()), b"\x00\xff not: [yaml").unwrap();
    assert_recovers(dir.path());
}

#[test]
fn truncated_file_is_set_aside_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    // Cut inside the header: nothing is salvageable.
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, &text[..text.find("fingerprint").unwrap() + 5]).unwrap();
    assert_recovers(dir.path());
}

#[test]
fn file_truncated_mid_entry_keeps_its_whole_entries() {
    let dir = tempfile::tempdir().unwrap();
    let lens = [8, 64, 512, 4096];
    tune_into(dir.path(), &lens);
    let path = cache_file(dir.path());
    let text = fs::read_to_string(&path).unwrap();
    // Cut inside the last entry's `created:` value.
    fs::write(&path, &text[..text.rfind("created:").unwrap() + 4]).unwrap();

    let (selector, _) = selector_on(dir.path());
    let mut b = bench(Arc::new(Mutex::new(0)));
    let tiers: Vec<Tier> = lens
        .iter()
        .map(|&len| {
            selector
                .choose(&FAKE, &inv(len), Some(&mut b))
                .unwrap()
                .tier
        })
        .collect();
    let from_disk = tiers.iter().filter(|t| **t == Tier::Disk).count();
    let retuned = tiers.iter().filter(|t| **t == Tier::Autotune).count();
    assert_eq!((from_disk, retuned), (3, 1), "{tiers:?}");
    let (third, _) = selector_on(dir.path());
    for len in lens {
        assert_eq!(
            third.choose(&FAKE, &inv(len), None).unwrap().tier,
            Tier::Disk
        );
    }
}

#[test]
fn wrong_schema_is_set_aside_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace("schema: 1", "schema: 99");
    fs::write(&path, text).unwrap();
    assert_recovers(dir.path());
}

#[test]
fn unreadable_file_is_set_aside_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    // A directory where the file should be cannot be read as one, even by root.
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    assert_recovers(dir.path());
}

#[test]
fn a_bad_entry_costs_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8, 64, 512]);
    let path = cache_file(dir.path());
    let key = FAKE.key(&inv(64));
    // Poison one entry's config with a block the op rejects, and another's with junk.
    let mut doc: serde_yaml::Value =
        serde_yaml::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    doc["entries"][key.digest()]["config"]["block"] = 3.into();
    doc["entries"][FAKE.key(&inv(512)).digest()] = "junk".into();
    fs::write(&path, serde_yaml::to_string(&doc).unwrap()).unwrap();

    let (selector, events) = selector_on(dir.path());
    assert_eq!(
        selector.choose(&FAKE, &inv(8), None).unwrap().tier,
        Tier::Disk
    );
    assert_eq!(
        selector.choose(&FAKE, &inv(64), None).unwrap().tier,
        Tier::Heuristic
    );
    assert_eq!(
        selector.choose(&FAKE, &inv(512), None).unwrap().tier,
        Tier::Heuristic
    );
    assert!(events.lock().unwrap().iter().any(|k| matches!(
        k,
        EventKind::Rejected { tier: Tier::Disk, reason } if reason.contains("block 3")
    )));
    assert!(
        set_aside_files(dir.path()).is_empty(),
        "the file itself was fine"
    );
}

#[test]
fn huge_file_is_set_aside_unread() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    let file = fs::File::create(&path).unwrap();
    file.set_len(flint_tune::MAX_FILE_BYTES + 1).unwrap();
    assert_recovers(dir.path());
}

#[cfg(unix)]
#[test]
fn symlinked_file_is_set_aside_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    let target = dir.path().join("victim.txt");
    fs::write(&target, "precious").unwrap();
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    assert_recovers(dir.path());
    assert_eq!(fs::read_to_string(&target).unwrap(), "precious");
}

#[test]
fn foreign_file_is_not_applied() {
    // A file for another device copied into this device's slot.
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace("test-device", "some-other-gpu");
    fs::write(&path, text).unwrap();
    assert_recovers(dir.path());
}

/// Whether this process can write into a directory whose write bits are cleared (root can).
fn permissions_bind(dir: &Path) -> bool {
    fs::write(dir.join("probe"), b"x").is_err()
}

#[cfg(unix)]
#[test]
fn read_only_directory_keeps_working_in_memory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let ro = |p: &Path, mode| fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
    let fp_dir = cache_file(dir.path()).parent().unwrap().to_path_buf();
    ro(&fp_dir, 0o500);
    ro(dir.path(), 0o500);
    let enforced = permissions_bind(&fp_dir);

    let (selector, events) = selector_on(dir.path());
    let mut b = bench(Arc::new(Mutex::new(0)));
    // Entries committed before the directory turned read-only still answer.
    assert_eq!(
        selector.choose(&FAKE, &inv(8), None).unwrap().tier,
        Tier::Disk
    );
    // A new tune works and is served from memory afterwards.
    let c = selector.choose(&FAKE, &inv(64), Some(&mut b)).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Autotune));
    assert_eq!(
        selector.choose(&FAKE, &inv(64), None).unwrap().tier,
        Tier::Memory
    );
    ro(&fp_dir, 0o700);
    ro(dir.path(), 0o700);
    if enforced {
        let failed = events
            .lock()
            .unwrap()
            .iter()
            .filter(|k| matches!(k, EventKind::CacheWriteFailed { .. }))
            .count();
        assert_eq!(failed, 1);
    } else {
        eprintln!(
            "note: running as root, so the directory stayed writable; checked memory-only path with a file in the way instead"
        );
    }
    // Also a directory that cannot even be created: a file where the cache dir should be.
    let blocker = dir.path().join("blocked");
    fs::write(&blocker, b"not a dir").unwrap();
    let (selector, events) = selector_on(&blocker);
    let c = selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();
    assert_eq!(c.tier, Tier::Autotune);
    assert_eq!(
        selector.choose(&FAKE, &inv(8), None).unwrap().tier,
        Tier::Memory
    );
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|k| matches!(k, EventKind::CacheWriteFailed { .. }))
    );
}

#[test]
fn cache_files_are_private_and_carry_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    tune_into(dir.path(), &[8]);
    let path = cache_file(dir.path());
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("schema: 1\n"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}

const CHILD_ENV: &str = "FLINT_TEST_CHILD_WRITER";

/// Run in child processes by the multi-process tests below; does nothing otherwise.
#[test]
#[ignore = "child process of the multi-process cache tests"]
fn child_writer() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.split('|');
    let (dir, index) = (parts.next().unwrap(), parts.next().unwrap());
    let index: usize = index.parse().unwrap();
    match parts.next() {
        // Autotune one shared key through a selector; the answer must be the fastest config.
        Some("same") => {
            let (selector, _) = selector_on(Path::new(dir));
            let mut b = bench(Arc::new(Mutex::new(0)));
            let c = selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();
            assert_eq!(c.config.block, 128);
            return;
        }
        // Write new keys until killed.
        Some("spin") => {
            let cache = DiskCache::new(dir);
            for j in 0.. {
                put_block_64(&cache, 1_000_000 + j);
            }
            return;
        }
        _ => {}
    }
    let cache = DiskCache::new(dir);
    for j in 0..10 {
        put_block_64(&cache, 1000 * index + j);
    }
}

/// Commits block 64 for the key of `inv(len)`.
fn put_block_64(cache: &DiskCache, len: usize) {
    let key = CallKey::new("fake_op", 1, &inv(len).signature().clone());
    let entry = DiskEntry::tuned(
        &key,
        serde_yaml::to_value(BlockConfig { block: 64 }).unwrap(),
        1.0,
    );
    cache
        .put(&fingerprint(), "fake_op", 1, &key, entry)
        .unwrap();
}

#[test]
fn eight_processes_write_distinct_keys() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..8)
        .map(|i| {
            std::process::Command::new(&exe)
                .args(["child_writer", "--exact", "--ignored", "--test-threads=1"])
                .env(CHILD_ENV, format!("{}|{i}", dir.path().display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let entries = DiskCache::new(dir.path()).entries(&fingerprint(), "fake_op", 1);
    assert_eq!(entries.len(), 80, "every process's every entry survives");
    for i in 0..8 {
        for j in 0..10 {
            let key = CallKey::new("fake_op", 1, &inv(1000 * i + j).signature().clone());
            assert!(entries.contains_key(key.digest()), "missing entry {i}/{j}");
        }
    }
    assert!(set_aside_files(dir.path()).is_empty());
}

fn child(dir: &Path, index: usize, mode: &str) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["child_writer", "--exact", "--ignored", "--test-threads=1"])
        .env(CHILD_ENV, format!("{}|{index}|{mode}", dir.display()))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn four_processes_autotune_the_same_key() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..4).map(|i| child(dir.path(), i, "same")).collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a process got a wrong config");
    }
    let entries = DiskCache::new(dir.path()).entries(&fingerprint(), "fake_op", 1);
    assert_eq!(entries.len(), 1, "one key, one entry: {:?}", entries.keys());
    assert!(entries.contains_key(FAKE.key(&inv(8)).digest()));
    assert!(
        set_aside_files(dir.path()).is_empty(),
        "the file is not corrupt"
    );
    let (selector, _) = selector_on(dir.path());
    let c = selector.choose(&FAKE, &inv(8), None).unwrap();
    assert_eq!((c.tier, c.config.block), (Tier::Disk, 128));
}

#[test]
fn a_writer_killed_mid_write_loses_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let committed = [8, 64, 512, 4096];
    tune_into(dir.path(), &committed);
    for (round, wait_ms) in [3u64, 11, 29, 57, 101].into_iter().enumerate() {
        let mut c = child(dir.path(), round, "spin");
        std::thread::sleep(std::time::Duration::from_millis(wait_ms));
        c.kill().unwrap(); // SIGKILL: no unwinding, no cleanup
        c.wait().unwrap();
        let (selector, _) = selector_on(dir.path());
        for &len in &committed {
            let got = selector.choose(&FAKE, &inv(len), None).unwrap();
            assert_eq!(
                (got.tier, got.config.block),
                (Tier::Disk, 128),
                "round {round}: committed key {len} lost"
            );
        }
        assert!(
            set_aside_files(dir.path()).is_empty(),
            "round {round}: a kill left a corrupt file"
        );
    }
    // The writers were killed while active: what they committed before dying is there too.
    let entries = DiskCache::new(dir.path()).entries(&fingerprint(), "fake_op", 1);
    assert!(
        entries.len() > committed.len(),
        "the killed writers committed nothing: the test did not exercise a live writer"
    );
}

mod fuzz {
    use proptest::prelude::*;

    use super::*;

    /// Whatever bytes the cache file holds, a selector on it answers correctly and never
    /// panics: a bad entry is rejected or the file set aside, and the call is retuned.
    fn survives(dir: &Path) {
        let (selector, _) = selector_on(dir);
        let mut b = bench(Arc::new(Mutex::new(0)));
        let c = selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();
        assert_eq!(c.config.block, 128);
        assert!(
            matches!(c.tier, Tier::Disk | Tier::Autotune),
            "{:?}",
            c.tier
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
            let dir = tempfile::tempdir().unwrap();
            tune_into(dir.path(), &[8]);
            fs::write(cache_file(dir.path()), &bytes).unwrap();
            survives(dir.path());
        }

        #[test]
        fn mutated_valid_file(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            tune_into(dir.path(), &[8, 64, 512]);
            let path = cache_file(dir.path());
            let mut bytes = fs::read(&path).unwrap();
            for (at, byte, kind) in edits {
                let i = at.index(bytes.len().max(1));
                match kind {
                    0 if i < bytes.len() => bytes[i] = byte,
                    1 => bytes.insert(i.min(bytes.len()), byte),
                    _ if i < bytes.len() => { bytes.remove(i); }
                    _ => {}
                }
            }
            let keep = cut.index(bytes.len() + 1);
            bytes.truncate(keep.max(bytes.len() / 2));
            fs::write(&path, &bytes).unwrap();
            survives(dir.path());
        }
    }
}

/// Write errors injected through the writer seam (disk full, permission denied, and a write
/// that fills half a temp file then fails): each put fails cleanly, leaves no temp file, and
/// every entry committed before survives; the cache takes writes again once the fault clears.
#[test]
fn injected_write_errors_lose_nothing_committed() {
    use std::io::{Error, ErrorKind, Write};
    let dir = tempfile::tempdir().unwrap();
    let good = DiskCache::new(dir.path());
    for len in [1, 2, 3] {
        put_block_64(&good, len);
    }
    let faults: Vec<(&str, flint_tune::CacheWriter)> = vec![
        (
            "disk full",
            Arc::new(|_: &Path, _: &str| Err(Error::new(ErrorKind::StorageFull, "disk full"))),
        ),
        (
            "permission denied",
            Arc::new(|_: &Path, _: &str| Err(Error::from(ErrorKind::PermissionDenied))),
        ),
        (
            "cut short",
            Arc::new(|path: &Path, text: &str| {
                let mut tmp = tempfile::Builder::new()
                    .prefix(".flint-tmp-")
                    .tempfile_in(path.parent().unwrap())?;
                tmp.write_all(&text.as_bytes()[..text.len() / 2])?;
                Err(Error::new(ErrorKind::WriteZero, "device went away"))
            }),
        ),
    ];
    let mut injected = 0;
    for (name, writer) in faults {
        let faulty = DiskCache::new(dir.path()).with_writer(writer);
        let key = CallKey::new("fake_op", 1, &inv(100 + injected).signature().clone());
        let entry = DiskEntry::tuned(
            &key,
            serde_yaml::to_value(BlockConfig { block: 64 }).unwrap(),
            1.0,
        );
        let err = faulty
            .put(&fingerprint(), "fake_op", 1, &key, entry)
            .expect_err(name);
        assert!(err.contains("cannot write"), "{name}: {err}");
        injected += 1;
        // Nothing committed is lost, nothing half-written is left, the file still parses.
        let fresh = DiskCache::new(dir.path());
        let entries = fresh.entries(&fingerprint(), "fake_op", 1);
        assert_eq!(entries.len(), 3, "{name}: {entries:?}");
        let parent = cache_file(dir.path()).parent().unwrap().to_path_buf();
        let leftovers: Vec<_> = fs::read_dir(&parent)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".flint-tmp-") || n.contains(".bad-"))
            .collect();
        assert!(leftovers.is_empty(), "{name}: {leftovers:?}");
    }
    assert_eq!(injected, 3);
    // The fault cleared: the next write commits alongside the old entries.
    put_block_64(&good, 4);
    assert_eq!(
        DiskCache::new(dir.path())
            .entries(&fingerprint(), "fake_op", 1)
            .len(),
        4
    );
}
