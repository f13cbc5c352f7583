//! A fake op and helpers shared by the selector tests.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use flint_tune::{DeviceFingerprint, EventKind, Invocation, Op, Policy, Selector, Signature, Tier};
use serde::{Deserialize, Serialize};

/// A config with a block size; the op accepts powers of two up to 1024.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockConfig {
    pub block: u32,
}

pub struct FakeOp {
    pub version: u32,
}

pub const FAKE: FakeOp = FakeOp { version: 1 };

impl Op for FakeOp {
    type Config = BlockConfig;
    fn id(&self) -> &'static str {
        "fake_op"
    }
    fn version(&self) -> u32 {
        self.version
    }
    fn heuristic(&self, inv: &Invocation) -> Result<BlockConfig, String> {
        match inv.signature().int("len") {
            Some(n) if n >= 0 => Ok(BlockConfig { block: 64 }),
            _ => Err("needs a non-negative `len`".into()),
        }
    }
    fn candidates(&self, _: &Invocation) -> Vec<BlockConfig> {
        [32, 64, 128, 256]
            .map(|block| BlockConfig { block })
            .to_vec()
    }
    fn key(&self, inv: &Invocation) -> flint_tune::CallKey {
        flint_tune::CallKey::new(
            self.id(),
            self.version,
            &inv.signature().clone().bucket_pow2("len"),
        )
    }
    fn check(&self, _: &Invocation, c: &BlockConfig) -> Result<(), String> {
        if c.block.is_power_of_two() && c.block <= 1024 {
            Ok(())
        } else {
            Err(format!(
                "block {} is not a power of two up to 1024",
                c.block
            ))
        }
    }
}

pub fn fingerprint() -> DeviceFingerprint {
    DeviceFingerprint::new("test-runtime", "test-device", "cc 1.0", "driver 1")
}

pub fn inv(len: usize) -> Invocation {
    Invocation::new(
        "fake_op",
        Signature::new().with("len", len).with("dtype", "f32"),
        fingerprint(),
    )
}

/// A benchmark where block 128 is fastest and block 256 fails.
pub fn bench(calls: Arc<Mutex<usize>>) -> impl FnMut(&BlockConfig) -> Result<Duration, String> {
    move |c: &BlockConfig| {
        *calls.lock().unwrap() += 1;
        match c.block {
            256 => Err("exceeds shared memory".into()),
            b => Ok(Duration::from_micros(u64::from(b.abs_diff(128)) + 10)),
        }
    }
}

/// A selector on `dir` that records the tier of every hit (and every event kind).
pub fn selector_on(dir: &std::path::Path) -> (Selector, Arc<Mutex<Vec<EventKind>>>) {
    let policy = Policy::default().with_cache_dir(dir).with_samples(1, 3);
    with_policy(policy)
}

pub fn with_policy(policy: Policy) -> (Selector, Arc<Mutex<Vec<EventKind>>>) {
    let selector = Selector::new(policy);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    selector.set_hook(Some(Arc::new(move |e: &flint_tune::Event<'_>| {
        sink.lock().unwrap().push(e.kind.clone())
    })));
    (selector, events)
}

/// The tiers of the `Hit` events recorded so far.
pub fn hits(events: &Mutex<Vec<EventKind>>) -> Vec<Tier> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|k| match k {
            EventKind::Hit { tier, .. } => Some(*tier),
            EventKind::TuneFinished { .. } => Some(Tier::Autotune),
            _ => None,
        })
        .collect()
}
