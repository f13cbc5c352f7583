//! Host-side cost of `Selector::choose`: a memory hit (every warm call pays it) and the
//! first disk hit of a process (one file read and parse). No GPU is involved: the `scale`
//! op is used with fixed device limits.
//!
//! ```text
//! cargo run --release -p flint-benches --bin selector_bench
//! ```
//! Targets (issue 2): memory hit < 2 µs, first disk hit < 1 ms.

use std::hint::black_box;
use std::time::{Duration, Instant};

use flint_benches::{human, median};
use flint_kernels::DeviceLimits;
use flint_kernels::scale::{ScaleConfig, ScaleOp};
use flint_tune::{DeviceFingerprint, DiskEntry, Invocation, Op, Policy, Selector, Signature, Tier};

fn invocation(len: usize) -> Invocation {
    Invocation::new(
        "scale",
        Signature::new().with("len", len).with("dtype", "f32"),
        DeviceFingerprint::new("bench", "bench-device", "cc 9.0", "driver 1"),
    )
}

fn main() {
    let op = ScaleOp::new(DeviceLimits {
        shared_memory: 48 << 10,
        max_units_per_cube: 1024,
        max_vector_size: 4,
        plane_size: (32, 32),
        plane_ops: true,
        cmma: true,
        mma_16x8x16: vec!["f16", "bf16"],
        cmma_16x16x16: vec!["f16", "bf16"],
        atomic_add_f32x2: false,
        wgmma: false,
        arrays_across_barriers: false,
    });
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = ScaleConfig {
        vector_size: 4,
        cube_size: 256,
    };

    // A realistic cache file: 200 tuned buckets for this device and op.
    let disk = flint_tune::DiskCache::new(dir.path());
    for i in 0..200usize {
        let inv = invocation(1024 * (i + 1));
        let key = op.key(&inv);
        let value = serde_yaml::to_value(config).expect("config serialises");
        disk.put(
            inv.fingerprint(),
            op.id(),
            op.version(),
            &key,
            DiskEntry::tuned(&key, value, 12.5),
        )
        .expect("bench cache is writable");
    }
    let probe = invocation(1024 * 77);

    // First disk hit in a fresh process: a new selector each time.
    let mut first_disk = Vec::new();
    for _ in 0..50 {
        let selector = Selector::new(Policy::default().with_cache_dir(dir.path()));
        let started = Instant::now();
        let choice = selector.choose(&op, &probe, None).expect("disk hit");
        first_disk.push(started.elapsed());
        assert_eq!(choice.tier, Tier::Disk);
    }

    // Memory hits on a warm selector, timed in batches to keep timer overhead out.
    let selector = Selector::new(Policy::default().with_cache_dir(dir.path()));
    selector.choose(&op, &probe, None).expect("warm-up");
    let batch = 10_000;
    let mut memory = Vec::new();
    for _ in 0..30 {
        let started = Instant::now();
        for _ in 0..batch {
            let choice = selector
                .choose(&op, black_box(&probe), None)
                .expect("memory hit");
            black_box(choice);
        }
        memory.push(started.elapsed() / batch);
    }
    let selector_total: Duration = memory.iter().sum();
    black_box(selector_total);

    println!("selector_bench: 200-entry cache file, scale op");
    println!(
        "memory hit      median {:>10}  (target < 2 µs)",
        human(median(&mut memory))
    );
    println!(
        "first disk hit  median {:>10}  (target < 1 ms)",
        human(median(&mut first_disk))
    );
}
