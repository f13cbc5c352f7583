//! The Tuner's timing trait implemented with CubeCL's profiler.

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use cubecl::Runtime;
use cubecl::prelude::{ComputeClient, CubeCount};
use flint_tune::Benchmark;

/// Whether a launch runs its kernels or only gets them compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Launch the kernels.
    Run,
    /// Launch every kernel on an empty grid: on CUDA and wgpu with the workspace's CubeCL
    /// (`vendor/README.md`) that starts compiling it on a background thread and runs nothing.
    CompileOnly,
}

impl Dispatch {
    /// The grid `(x, y, z)`, or an empty one when only compiling.
    pub fn grid(self, x: u32, y: u32, z: u32) -> CubeCount {
        match self {
            Dispatch::Run => CubeCount::Static(x, y, z),
            Dispatch::CompileOnly => CubeCount::Static(0, 0, 0),
        }
    }
}

/// Whether an empty dispatch compiles in the background on `R`, rather than failing (CubeCL's
/// published CUDA runtime) or compiling in line (its published wgpu runtime, other runtimes),
/// where it would gain nothing.
pub fn compiles_in_background<R: Runtime>(client: &ComputeClient<R>) -> bool {
    let name = R::name(client);
    (cfg!(flint_background_compile) && name == "cuda")
        // (No threads to compile on in a browser.)
        || (cfg!(all(flint_wgpu_background_compile, not(target_family = "wasm")))
            && name.starts_with("wgpu"))
}

/// Times one launch of a kernel per call: the wall time between device syncs. Before timing,
/// it has every candidate's kernels compiled at once where the runtime can
/// ([`compiles_in_background`]), since a first use otherwise compiles them one after another.
pub struct CubeclBenchmark<'a, R: Runtime, C, F> {
    client: &'a ComputeClient<R>,
    name: &'static str,
    launch: F,
    _config: PhantomData<fn(&C)>,
}

impl<'a, R: Runtime, C, F> CubeclBenchmark<'a, R, C, F>
where
    F: FnMut(&C, Dispatch) -> Result<(), String> + Send,
{
    /// Benchmarks `launch`, which enqueues the kernel once with a given config on the real
    /// inputs (it must be safe to repeat: write into a scratch or the real output), on the
    /// grids the [`Dispatch`] gives.
    pub fn new(client: &'a ComputeClient<R>, name: &'static str, launch: F) -> Self {
        Self {
            client,
            name,
            launch,
            _config: PhantomData,
        }
    }
}

impl<R: Runtime, C: Sync, F> Benchmark<C> for CubeclBenchmark<'_, R, C, F>
where
    F: FnMut(&C, Dispatch) -> Result<(), String> + Send,
{
    fn prepare(&mut self, candidates: &[C]) {
        if candidates.len() < 2 || !compiles_in_background(self.client) {
            return;
        }
        for config in candidates {
            // A candidate that cannot even be enqueued fails again, with its reason, when timed.
            let launch = &mut self.launch;
            if let Ok(Err(why)) =
                catch_unwind(AssertUnwindSafe(|| launch(config, Dispatch::CompileOnly)))
            {
                log::debug!("{}: no background compile: {why}", self.name);
            }
        }
    }

    fn run(&mut self, config: &C) -> Result<Duration, String> {
        // Wall time between two device syncs. `client.profile` would give device timestamps,
        // but it takes the device exclusively, which deadlocks when the launch runs inside a
        // Burn fusion stream (the default `Wgpu`/`Cuda` types); a sync-bracketed wall time is
        // what CubeCL's own system timing measures anyway.
        let sync = |client: &ComputeClient<R>| {
            cubecl::future::block_on(client.sync())
                .map_err(|e| format!("{}: device sync failed: {e:?}", self.name))
        };
        sync(self.client)?;
        let launch = &mut self.launch;
        let started = Instant::now();
        // A candidate that makes the compiler or runtime panic is skipped like any other
        // failure instead of taking the user's process down.
        catch_unwind(AssertUnwindSafe(|| launch(config, Dispatch::Run)))
            .map_err(|panic| format!("panicked: {}", panic_message(&panic)))??;
        sync(self.client)?;
        Ok(started.elapsed())
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}
