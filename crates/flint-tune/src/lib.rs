//! Flint's ops layer: which kernel configuration runs a call.
//!
//! An [`Op`] is one tunable operation. A launcher describes a call as an [`Invocation`]
//! (op id, abstract [`Signature`], [`DeviceFingerprint`], optional explicit config), and the
//! [`Selector`] answers with a config from the first tier that has one: override, overlay,
//! memory cache, disk cache, autotune, heuristic, or a typed error saying why each missed.
//!
//! This crate depends on neither Burn nor CubeCL; `flint-kernels` implements [`Benchmark`]
//! with CubeCL's timing.
//!
//! ```
//! use flint_tune::{DeviceFingerprint, Invocation, Op, Policy, Selector, Signature, Tier};
//!
//! struct Scale;
//! impl Op for Scale {
//!     type Config = u32; // threads per cube
//!     fn id(&self) -> &'static str { "scale" }
//!     fn version(&self) -> u32 { 1 }
//!     fn heuristic(&self, _: &Invocation) -> Result<u32, String> { Ok(256) }
//!     fn candidates(&self, _: &Invocation) -> Vec<u32> { vec![64, 128, 256] }
//!     fn check(&self, _: &Invocation, c: &u32) -> Result<(), String> {
//!         if c.is_power_of_two() { Ok(()) } else { Err(format!("{c} is not a power of two")) }
//!     }
//! }
//!
//! let selector = Selector::new(Policy::default().with_disk_cache(false));
//! let fp = DeviceFingerprint::new("cpu", "example", "-", "-");
//! let inv = Invocation::new("scale", Signature::new().with("len", 1000usize), fp);
//! // No benchmark given: the autotune tier is skipped and the heuristic answers.
//! let choice = selector.choose(&Scale, &inv, None).unwrap();
//! assert_eq!((choice.config, choice.tier), (256, Tier::Heuristic));
//! ```
#![warn(missing_docs)]

mod error;
mod events;
mod fingerprint;
mod invocation;
mod key;
mod locked_file;
mod op;
mod policy;
pub mod record;
pub mod registry;
mod selector;
mod spec;
pub mod tuner;

pub use error::TuneError;
pub use events::{Event, EventKind, Hook, Tier};
pub use fingerprint::DeviceFingerprint;
pub use invocation::{Invocation, OverrideConfig, SigValue, Signature, bucket_pow2};
pub use key::CallKey;
pub use locked_file::MAX_FILE_BYTES;
pub use op::Op;
pub use policy::{Autotune, CacheMiss, Policy};
pub use selector::{
    BUNDLE_SCHEMA, Bundle, BundleFile, CACHE_SCHEMA, CacheWriter, Choice, Cleared, DiskCache,
    DiskEntry, EntryCheck, ImportReport, Listing, MAX_BUNDLE_BYTES, MEMORY_CACHE_CAPACITY,
    MemoryCache, Overlay, OverlayGuard, Selector, Skipped, StoredFile, WarmMemo, WarmToken,
    overlay, overlay_depth,
};
pub use spec::{OpSpec, OutputShapesFn};
pub use tuner::{Benchmark, Stats, TuneReport, Tuner};
