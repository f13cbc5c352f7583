//! The Tuner's timing trait implemented with CubeCL's profiler.

use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use cubecl::Runtime;
use cubecl::prelude::ComputeClient;
use flint_tune::Benchmark;

/// Times one launch of a kernel per call: the wall time between device syncs.
pub struct CubeclBenchmark<'a, R: Runtime, C, F> {
    client: &'a ComputeClient<R>,
    name: &'static str,
    launch: F,
    _config: PhantomData<fn(&C)>,
}

impl<'a, R: Runtime, C, F> CubeclBenchmark<'a, R, C, F>
where
    F: FnMut(&C) -> Result<(), String> + Send,
{
    /// Benchmarks `launch`, which enqueues the kernel once with a given config on the real
    /// inputs (it must be safe to repeat: write into a scratch or the real output).
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
    F: FnMut(&C) -> Result<(), String> + Send,
{
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
        catch_unwind(AssertUnwindSafe(|| launch(config)))
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
