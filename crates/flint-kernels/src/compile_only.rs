//! Kernels built only to be compiled, never launched.
//!
//! CubeCL 0.10 keeps a launch's scalars and tensor metadata in thread-local builders
//! (`cubecl-core`, `compute/launcher.rs`) that only a launch empties. A kernel whose
//! arguments are registered so that it can be compiled, and that is never launched, leaves
//! them there, and the next launch on that thread sends them ahead of its own. Its kernel
//! then reads every scalar, shape and stride from the wrong place: on CUDA an illegal address
//! in some processes and a wrong result in others (`docs/PERF.md`, "A second process crashes
//! in `--overhead`'s bursts").

/// Runs `f`, which registers launch arguments without launching them, on a thread of its own,
/// so that what it registers ends with that thread. A panic in `f` resumes on the caller.
pub(crate) fn on_own_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}
