//! Each selector tier answers in order, asserted through events.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use flint_tune::{
    Autotune, CacheMiss, EventKind, Invocation, Overlay, Policy, Signature, Tier, TuneError,
    overlay, overlay_depth,
};

#[test]
fn tiers_answer_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(Mutex::new(0));
    let (selector, events) = selector_on(dir.path());
    let mut b = bench(calls.clone());

    // 5. autotune: first call on a new bucket; 256 fails, 128 wins.
    let c = selector.choose(&FAKE, &inv(1000), Some(&mut b)).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Autotune));
    let tuned_calls = *calls.lock().unwrap();
    assert_eq!(
        tuned_calls,
        3 * 4 + 1,
        "3 candidates x (1 warmup + 3 samples) + 1 failure"
    );
    assert!(events.lock().unwrap().iter().any(|k| matches!(
        k,
        EventKind::CandidateFailed { reason, .. } if reason == "exceeds shared memory"
    )));

    // 3. memory: same bucket (1000 and 1024 share the key), no benchmarking.
    let c = selector.choose(&FAKE, &inv(1024), Some(&mut b)).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Memory));
    assert_eq!(*calls.lock().unwrap(), tuned_calls);

    // 4. disk: a new selector on the same directory, i.e. a new process.
    let (second, second_events) = selector_on(dir.path());
    let c = second.choose(&FAKE, &inv(1000), Some(&mut b)).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Disk));
    assert_eq!(
        *calls.lock().unwrap(),
        tuned_calls,
        "a disk hit must not benchmark"
    );
    let c = second.choose(&FAKE, &inv(1000), None).unwrap();
    assert_eq!(c.tier, Tier::Memory, "a disk hit is promoted to memory");

    // 2. overlay beats the caches.
    {
        let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 32 }));
        let c = second.choose(&FAKE, &inv(1000), None).unwrap();
        assert_eq!((c.config.block, c.tier), (32, Tier::Overlay));
        // 1. override beats the overlay.
        let c = second
            .choose(
                &FAKE,
                &inv(1000).with_override(BlockConfig { block: 512 }),
                None,
            )
            .unwrap();
        assert_eq!((c.config.block, c.tier), (512, Tier::Override));
    }

    // 6. heuristic: a new bucket with no benchmark.
    let c = second.choose(&FAKE, &inv(5000), None).unwrap();
    assert_eq!((c.config.block, c.tier), (64, Tier::Heuristic));

    assert_eq!(hits(&events), vec![Tier::Autotune, Tier::Memory]);
    assert_eq!(
        hits(&second_events),
        vec![
            Tier::Disk,
            Tier::Memory,
            Tier::Overlay,
            Tier::Override,
            Tier::Heuristic
        ]
    );
}

#[test]
fn error_tier_names_every_miss() {
    let policy = Policy::default()
        .with_disk_cache(false)
        .with_heuristics(false)
        .with_autotune(Autotune::Off);
    let (selector, events) = with_policy(policy);
    let err = selector.choose(&FAKE, &inv(10), None).unwrap_err();
    let TuneError::NoConfig { op, misses, .. } = &err else {
        panic!("expected NoConfig, got {err:?}")
    };
    assert_eq!(op, "fake_op");
    let tiers: Vec<Tier> = misses.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        tiers,
        vec![Tier::Memory, Tier::Disk, Tier::Autotune, Tier::Heuristic]
    );
    let text = err.to_string();
    assert!(
        text.starts_with("no configuration for op `fake_op`"),
        "{text}"
    );
    assert!(text.contains("autotune: disabled by policy"), "{text}");
    assert!(matches!(
        events.lock().unwrap().last(),
        Some(EventKind::Failed { .. })
    ));
}

#[test]
fn heuristic_failure_is_reported() {
    let (selector, _) = with_policy(Policy::default().with_disk_cache(false));
    let bad = flint_tune::Invocation::new(
        "fake_op",
        flint_tune::Signature::new().with("len", -3i64),
        fingerprint(),
    );
    let err = selector.choose(&FAKE, &bad, None).unwrap_err().to_string();
    assert!(
        err.contains("heuristic: needs a non-negative `len`"),
        "{err}"
    );
}

#[test]
fn all_candidates_failing_falls_back_to_the_heuristic() {
    let (selector, events) = with_policy(Policy::default().with_disk_cache(false));
    let mut failing =
        |_: &BlockConfig| -> Result<std::time::Duration, String> { Err("boom".into()) };
    let c = selector.choose(&FAKE, &inv(8), Some(&mut failing)).unwrap();
    assert_eq!(c.tier, Tier::Heuristic);
    let failures = events
        .lock()
        .unwrap()
        .iter()
        .filter(|k| matches!(k, EventKind::CandidateFailed { .. }))
        .count();
    assert_eq!(failures, 4);
}

#[test]
fn bad_override_is_an_error_not_ignored() {
    let (selector, _) = with_policy(Policy::default().with_disk_cache(false));
    let err = selector
        .choose(
            &FAKE,
            &inv(8).with_override(BlockConfig { block: 100 }),
            None,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "override config BlockConfig { block: 100 } for op `fake_op` is invalid: \
         block 100 is not a power of two up to 1024"
    );
    let err = selector
        .choose(&FAKE, &inv(8).with_override(7u8), None)
        .unwrap_err();
    assert!(
        err.to_string().contains("expected a config of type"),
        "{err}"
    );
}

#[test]
fn invalid_overlay_entry_is_rejected_and_the_next_tier_answers() {
    let (selector, events) = with_policy(Policy::default().with_disk_cache(false));
    let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 3 }));
    let c = selector.choose(&FAKE, &inv(8), None).unwrap();
    assert_eq!(c.tier, Tier::Heuristic);
    assert!(events.lock().unwrap().iter().any(|k| matches!(
        k,
        EventKind::Rejected {
            tier: Tier::Overlay,
            ..
        }
    )));
}

#[test]
fn a_strict_overlay_entry_the_op_refuses_is_an_error() {
    let (selector, _) = with_policy(Policy::default().with_disk_cache(false));
    let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 3 }).strict());
    let err = selector.choose(&FAKE, &inv(8), None).unwrap_err();
    assert!(
        matches!(&err, TuneError::InvalidOverlay { reason, .. } if !reason.is_empty()),
        "{err}"
    );
    // A valid config of a strict overlay answers as any overlay does.
    let _g = overlay(
        Overlay::new()
            .set(&FAKE, BlockConfig { block: 32 })
            .strict(),
    );
    let c = selector.choose(&FAKE, &inv(8), None).unwrap();
    assert_eq!((c.config.block, c.tier), (32, Tier::Overlay));
}

#[test]
fn wrong_op_is_an_error() {
    let (selector, _) = with_policy(Policy::default().with_disk_cache(false));
    let other = flint_tune::Invocation::new("other", flint_tune::Signature::new(), fingerprint());
    assert!(matches!(
        selector.choose(&FAKE, &other, None),
        Err(TuneError::WrongOp { .. })
    ));
}

#[test]
fn heuristic_policy_skips_autotune_but_explicit_tune_works() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::default()
        .with_cache_dir(dir.path())
        .with_cache_miss(CacheMiss::Heuristic)
        .with_samples(0, 1);
    let (selector, _) = with_policy(policy);
    let calls = Arc::new(Mutex::new(0));
    let mut b = bench(calls.clone());
    let c = selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();
    assert_eq!(c.tier, Tier::Heuristic);
    assert_eq!(*calls.lock().unwrap(), 0);
    let report = selector.tune(&FAKE, &inv(8), &mut b).unwrap();
    assert_eq!(report.best().unwrap().0.block, 128);
    let c = selector.choose(&FAKE, &inv(8), None).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Memory));

    let off = Policy::default()
        .with_disk_cache(false)
        .with_autotune(Autotune::Off);
    let (selector, _) = with_policy(off);
    assert!(selector.tune(&FAKE, &inv(8), &mut b).is_err());
}

#[test]
fn overlays_nest_and_pop_on_drop() {
    let (selector, _) = with_policy(Policy::default().with_disk_cache(false));
    let block = |s: &flint_tune::Selector| s.choose(&FAKE, &inv(8), None).unwrap();
    assert_eq!(overlay_depth(), 0);
    let outer = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 32 }));
    assert_eq!(block(&selector).config.block, 32);
    {
        let key = flint_tune::Op::key(&FAKE, &inv(8));
        let _inner = overlay(Overlay::new().set_for_key(&FAKE, &key, BlockConfig { block: 512 }));
        assert_eq!(overlay_depth(), 2);
        assert_eq!(block(&selector).config.block, 512);
        // The inner overlay is keyed: another bucket still sees the outer one.
        let other = selector.choose(&FAKE, &inv(100), None).unwrap();
        assert_eq!(other.config.block, 32);
    }
    assert_eq!(overlay_depth(), 1);
    assert_eq!(block(&selector).config.block, 32);
    drop(outer);
    assert_eq!(overlay_depth(), 0);
    assert_eq!(block(&selector).tier, Tier::Heuristic);
}

#[test]
fn overlays_pop_during_a_panic() {
    let result = std::panic::catch_unwind(|| {
        let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 32 }));
        assert_eq!(overlay_depth(), 1);
        panic!("model code panicked");
    });
    assert!(result.is_err());
    assert_eq!(overlay_depth(), 0);
}

#[test]
fn overlays_are_per_thread() {
    let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 32 }));
    let depth_elsewhere = std::thread::spawn(overlay_depth).join().unwrap();
    assert_eq!((overlay_depth(), depth_elsewhere), (1, 0));
}

#[test]
fn memory_cache_under_eight_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (selector, _) = selector_on(dir.path());
    let selector = Arc::new(selector);
    let calls = Arc::new(Mutex::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let selector = selector.clone();
            let calls = calls.clone();
            std::thread::spawn(move || {
                let mut b = bench(calls);
                let mut tiers = Vec::new();
                for i in 0..200 {
                    // 4 buckets shared by all threads, plus one per thread.
                    let len = if i % 2 == 0 {
                        1 << (4 + (i / 2) % 4)
                    } else {
                        1 << (12 + t)
                    };
                    let c = selector.choose(&FAKE, &inv(len), Some(&mut b)).unwrap();
                    assert_eq!(c.config.block, 128);
                    tiers.push(c.tier);
                }
                tiers
            })
        })
        .collect();
    let tiers: Vec<Tier> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let tuned = tiers.iter().filter(|t| **t == Tier::Autotune).count();
    // Each of the 4 + 8 buckets is tuned exactly once; the tune lock stops duplicates.
    assert_eq!(tuned, 12);
    assert_eq!(selector.memory().len(), 12);
    assert_eq!(*calls.lock().unwrap(), 12 * 13);
}

#[test]
fn keys_differ_between_devices_and_op_versions() {
    use flint_tune::{DeviceFingerprint, Op};
    let dir = tempfile::tempdir().unwrap();
    let (selector, _) = selector_on(dir.path());
    let calls = Arc::new(Mutex::new(0));
    let mut b = bench(calls.clone());
    selector.choose(&FAKE, &inv(8), Some(&mut b)).unwrap();

    // Another device: its own file, so a fresh selector misses the disk.
    let other_device = flint_tune::Invocation::new(
        "fake_op",
        inv(8).signature().clone(),
        DeviceFingerprint::new("test-runtime", "other-device", "cc 2.0", "driver 1"),
    );
    let (fresh, _) = selector_on(dir.path());
    assert_eq!(
        fresh.choose(&FAKE, &other_device, None).unwrap().tier,
        Tier::Heuristic
    );

    // A new op version: a new key and a new file.
    let v2 = FakeOp { version: 2 };
    assert_ne!(v2.key(&inv(8)), FAKE.key(&inv(8)));
    assert_eq!(
        fresh.choose(&v2, &inv(8), None).unwrap().tier,
        Tier::Heuristic
    );
    assert_eq!(fresh.choose(&FAKE, &inv(8), None).unwrap().tier, Tier::Disk);
    let disk = fresh.disk().unwrap();
    assert_ne!(
        disk.file_path(&fingerprint(), "fake_op", 1),
        disk.file_path(&fingerprint(), "fake_op", 2)
    );
}

#[test]
fn record_keeps_each_new_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::default()
        .with_cache_dir(dir.path())
        .with_record(true)
        .with_disk_cache(false);
    let (selector, _) = with_policy(policy);
    for len in [8, 7, 100, 8] {
        selector.choose(&FAKE, &inv(len), None).unwrap();
    }
    // 7 and 8 share a bucket; 100 has its own; the first invocation of each key is kept.
    let recorded = flint_tune::record::Recorder::load(dir.path());
    let mut lens: Vec<i64> = recorded
        .iter()
        .map(|i| i.signature().int("len").unwrap())
        .collect();
    lens.sort();
    assert_eq!(lens, vec![8, 100]);
    assert!(
        recorded
            .iter()
            .all(|i| i.op() == "fake_op" && *i.fingerprint() == fingerprint())
    );
    // A second process appends without losing the first's entries.
    let (other, _) = with_policy(
        Policy::default()
            .with_cache_dir(dir.path())
            .with_record(true)
            .with_disk_cache(false),
    );
    other.choose(&FAKE, &inv(5000), None).unwrap();
    assert_eq!(flint_tune::record::Recorder::load(dir.path()).len(), 3);
}

#[test]
fn policy_from_env_reaches_the_global_selector() {
    // The global selector reads the real environment once; this process sets nothing, so
    // it must come up with the default policy apart from FLINT_* variables the runner set.
    let selector = flint_tune::Selector::global().expect("the test environment is valid");
    let from_env = Policy::from_env().unwrap();
    assert_eq!(selector.policy(), &from_env);
}

#[test]
fn memory_cache_evicts_the_least_recently_used() {
    use flint_tune::{CallKey, MEMORY_CACHE_CAPACITY, MemoryCache};
    let cache = MemoryCache::default();
    let fp = fingerprint();
    let key = |i: usize| CallKey::new("fake_op", 1, &Signature::new().with("id", i));
    for i in 0..MEMORY_CACHE_CAPACITY {
        cache.insert(&fp, "fake_op", 1, &key(i), BlockConfig { block: 32 });
    }
    // Key 0 is the oldest insert, but a hit makes it the most recently used.
    assert!(
        cache
            .get::<BlockConfig>(&fp, "fake_op", 1, &key(0))
            .is_some()
    );
    cache.insert(
        &fp,
        "fake_op",
        1,
        &key(usize::MAX),
        BlockConfig { block: 64 },
    );
    assert_eq!(cache.len(), MEMORY_CACHE_CAPACITY);
    assert!(
        cache
            .get::<BlockConfig>(&fp, "fake_op", 1, &key(0))
            .is_some()
    );
    assert!(
        cache
            .get::<BlockConfig>(&fp, "fake_op", 1, &key(1))
            .is_none()
    );
    assert_eq!(
        cache.get::<BlockConfig>(&fp, "fake_op", 1, &key(usize::MAX)),
        Some(BlockConfig { block: 64 })
    );
    // Re-inserting a present key at capacity evicts nothing.
    cache.insert(&fp, "fake_op", 1, &key(2), BlockConfig { block: 128 });
    assert_eq!(cache.len(), MEMORY_CACHE_CAPACITY);
    assert!(
        cache
            .get::<BlockConfig>(&fp, "fake_op", 1, &key(3))
            .is_some()
    );
}

#[test]
fn ten_thousand_calls_over_many_buckets_stay_bounded() {
    use flint_tune::MEMORY_CACHE_CAPACITY;
    let (selector, _) = with_policy(Policy::default().with_disk_cache(false).with_samples(0, 1));
    let calls = Arc::new(Mutex::new(0));
    let mut b = bench(calls);
    let distinct = 10_000usize;
    for i in 0..distinct {
        let inv = Invocation::new(
            "fake_op",
            Signature::new().with("len", 64usize).with("id", i),
            fingerprint(),
        );
        let c = selector.choose(&FAKE, &inv, Some(&mut b)).unwrap();
        assert_eq!(c.config.block, 128);
        assert!(selector.memory().len() <= MEMORY_CACHE_CAPACITY);
    }
    assert_eq!(selector.memory().len(), MEMORY_CACHE_CAPACITY);
    // The most recent buckets are still answered from memory.
    let recent = Invocation::new(
        "fake_op",
        Signature::new()
            .with("len", 64usize)
            .with("id", distinct - 1),
        fingerprint(),
    );
    let c = selector.choose(&FAKE, &recent, Some(&mut b)).unwrap();
    assert_eq!(c.tier, Tier::Memory);
}

/// A benchmark that counts runs and records what it was asked to prepare.
struct Preparing {
    prepared: Vec<Vec<u32>>,
    runs: usize,
}

impl flint_tune::Benchmark<BlockConfig> for Preparing {
    fn run(&mut self, c: &BlockConfig) -> Result<std::time::Duration, String> {
        self.runs += 1;
        Ok(std::time::Duration::from_micros(
            u64::from(c.block.abs_diff(128)) + 10,
        ))
    }

    fn prepare(&mut self, candidates: &[BlockConfig]) {
        self.prepared
            .push(candidates.iter().map(|c| c.block).collect());
    }
}

#[test]
fn prepare_hands_over_the_candidates_only_where_choose_would_tune() {
    let dir = tempfile::tempdir().unwrap();
    let (selector, events) = selector_on(dir.path());
    let mut b = Preparing {
        prepared: Vec::new(),
        runs: 0,
    };
    // A miss: every valid candidate, nothing run, nothing cached or reported.
    assert!(selector.prepare(&FAKE, &inv(1000), &mut b));
    assert_eq!(b.prepared, vec![vec![32, 64, 128, 256]]);
    assert_eq!(b.runs, 0);
    assert!(events.lock().unwrap().is_empty(), "{:?}", events.lock());
    // Once per bucket: a tracked forward whose backward has not run yet prepares nothing more.
    assert!(!selector.prepare(&FAKE, &inv(1000), &mut b));
    assert!(!selector.prepare(&FAKE, &inv(1024), &mut b));
    assert_eq!(b.prepared.len(), 1);
    let c = selector.choose(&FAKE, &inv(1000), Some(&mut b)).unwrap();
    assert_eq!((c.config.block, c.tier), (128, Tier::Autotune));
    let prepared = b.prepared.len();
    assert_eq!(prepared, 2, "choose prepares once more when it tunes");

    // Memory, disk (a new selector on the same directory), overlay and override answer
    // before the autotune tier: nothing to prepare.
    assert!(!selector.prepare(&FAKE, &inv(1024), &mut b));
    let (second, _) = selector_on(dir.path());
    assert!(!second.prepare(&FAKE, &inv(1000), &mut b));
    {
        let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 32 }));
        assert!(!second.prepare(&FAKE, &inv(9000), &mut b));
    }
    let forced = inv(9000).with_override(BlockConfig { block: 512 });
    assert!(!second.prepare(&FAKE, &forced, &mut b));
    // A lenient overlay entry the op refuses falls through to the tuner: prepared.
    {
        let _g = overlay(Overlay::new().set(&FAKE, BlockConfig { block: 3 }));
        assert!(second.prepare(&FAKE, &inv(9000), &mut b));
    }
    // Policies that never tune a miss, and another op's call.
    for policy in [
        Policy::default()
            .with_disk_cache(false)
            .with_cache_miss(CacheMiss::Heuristic),
        Policy::default()
            .with_disk_cache(false)
            .with_autotune(Autotune::Off),
    ] {
        let (s, _) = with_policy(policy);
        assert!(!s.prepare(&FAKE, &inv(9000), &mut b));
    }
    let other = Invocation::new("other", Signature::new(), fingerprint());
    assert!(!second.prepare(&FAKE, &other, &mut b));
    assert_eq!(b.prepared.len(), prepared + 1);
    assert_eq!(b.runs, 4 * (1 + 3), "only choose ran candidates");
}

#[test]
fn every_timed_candidate_is_reported_before_the_winner() {
    let (selector, events) = with_policy(Policy::default().with_disk_cache(false));
    // Block 128 fails; the others take 1000 / block microseconds, so block 256 wins.
    let mut timed = |c: &BlockConfig| -> Result<std::time::Duration, String> {
        if c.block == 128 {
            return Err("boom".into());
        }
        Ok(std::time::Duration::from_micros(1000 / c.block as u64))
    };
    let c = selector.choose(&FAKE, &inv(8), Some(&mut timed)).unwrap();
    assert_eq!(c.config, BlockConfig { block: 256 });
    let events = events.lock().unwrap();
    let timed: Vec<(String, std::time::Duration)> = events
        .iter()
        .filter_map(|k| match k {
            EventKind::CandidateTimed {
                config,
                median,
                min,
                max,
                samples,
            } => {
                assert!(min <= median && median <= max, "{min:?} {median:?} {max:?}");
                // Steady timings: no close race, so the policy's samples exactly.
                assert_eq!(*samples, Policy::default().samples, "{samples}");
                Some((config.clone(), *median))
            }
            _ => None,
        })
        .collect();
    let micros = std::time::Duration::from_micros;
    assert_eq!(
        timed,
        vec![
            (format!("{:?}", BlockConfig { block: 32 }), micros(31)),
            (format!("{:?}", BlockConfig { block: 64 }), micros(15)),
            (format!("{:?}", BlockConfig { block: 256 }), micros(3)),
        ]
    );
    let last_timed = events
        .iter()
        .rposition(|k| matches!(k, EventKind::CandidateTimed { .. }));
    let finished = events
        .iter()
        .position(|k| matches!(k, EventKind::TuneFinished { .. }));
    assert!(last_timed < finished, "{events:?}");
}
