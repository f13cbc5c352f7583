use super::storage::{WgpuResource, WgpuStorage};
use crate::schedule::{BindingsResource, ScheduleTask, ScheduledWgpuBackend};
use crate::{AutoCompiler, AutoRepresentation};
use alloc::sync::Arc;
use cubecl_common::{
    backtrace::BackTrace,
    bytes::Bytes,
    profile::{ProfileDuration, TimingMethod},
    stream_id::StreamId,
};
use cubecl_core::server::{Binding, StreamErrorMode};
use cubecl_core::zspace::Shape;
use cubecl_core::{
    MemoryConfiguration, WgpuCompilationOptions,
    future::DynFut,
    prelude::*,
    server::{
        CopyDescriptor, IoError, KernelArguments, LaunchError, ProfileError, ProfilingToken,
        ResourceLimitError, ServerCommunication, ServerError, ServerUtilities,
    },
    zspace::{Strides, strides},
};
#[cfg(feature = "spirv")]
use cubecl_core::{cache::CacheOption, compilation_cache::CompilationCache, hash::StableHash};
use cubecl_ir::MemoryDeviceProperties;
use cubecl_runtime::allocator::ContiguousMemoryLayoutPolicy;
use cubecl_runtime::memory_management::{ManagedMemoryHandle, MemoryUsage};
use cubecl_runtime::{
    compiler::CubeTask,
    config::{CubeClRuntimeConfig, RuntimeConfig},
    logging::ServerLogger,
    memory_management::MemoryAllocationMode,
    server::ComputeServer,
    storage::ManagedResource,
    stream::scheduler::{SchedulerMultiStream, SchedulerMultiStreamOptions, SchedulerStrategy},
    validation::{validate_cube_dim, validate_units},
};
use hashbrown::HashMap;
use wgpu::ComputePipeline;

/// Wgpu compute server.
#[derive(Debug)]
pub struct WgpuServer {
    pub(crate) device: wgpu::Device,
    // A buffer that can be used to store stream id without extra allocations.
    streams_pool: Vec<StreamId>,
    pipelines: HashMap<KernelId, Arc<ComputePipeline>>,
    // flint patch: pipelines compiling on background threads (`compile_in_background`).
    pending: HashMap<KernelId, std::thread::JoinHandle<Result<BackgroundPipeline, LaunchError>>>,
    scheduler: SchedulerMultiStream<ScheduledWgpuBackend>,
    #[cfg(feature = "spirv")]
    pub(crate) spirv_cache:
        Option<CompilationCache<(u64, StableHash), cubecl_spirv::SpirvCacheEntry>>,
    pub compilation_options: WgpuCompilationOptions,
    pub(crate) backend: wgpu::Backend,
    pub(crate) utilities: Arc<ServerUtilities<Self>>,
}

impl ServerCommunication for WgpuServer {
    const SERVER_COMM_ENABLED: bool = false;
}

impl WgpuServer {
    /// Create a new server.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        memory_properties: MemoryDeviceProperties,
        memory_config: MemoryConfiguration,
        compilation_options: WgpuCompilationOptions,
        device: wgpu::Device,
        queue: wgpu::Queue,
        tasks_max: usize,
        backend: wgpu::Backend,
        timing_method: TimingMethod,
        utilities: ServerUtilities<Self>,
    ) -> Self {
        let backend_scheduler = ScheduledWgpuBackend::new(
            device.clone(),
            queue.clone(),
            memory_properties,
            memory_config,
            timing_method,
            tasks_max,
            utilities.logger.clone(),
        );

        let config = CubeClRuntimeConfig::get();
        let max_streams = config.streaming.max_streams;

        Self {
            compilation_options,
            streams_pool: Vec::new(),
            device,
            pipelines: HashMap::new(),
            pending: HashMap::new(),
            scheduler: SchedulerMultiStream::new(
                utilities.logger.clone(),
                backend_scheduler,
                SchedulerMultiStreamOptions {
                    max_streams,
                    max_tasks: tasks_max,
                    strategy: SchedulerStrategy::Interleave,
                },
            ),
            #[cfg(feature = "spirv")]
            spirv_cache: {
                let config = cubecl_runtime::config::CubeClRuntimeConfig::get();
                if let Some(cache) = &config.compilation.cache {
                    let root = cache.root();
                    Some(CompilationCache::new(
                        "spirv",
                        CacheOption::default().name("vulkan").root(root),
                    ))
                } else {
                    None
                }
            },
            backend,
            utilities: Arc::new(utilities),
        }
    }

    fn prepare_bindings(&mut self, bindings: KernelArguments) -> Result<BindingsResource, IoError> {
        // Store all the resources we'll be using. This could be eliminated if
        // there was a way to tie the lifetime of the resource to the memory handle.
        let mut resources = Vec::with_capacity(bindings.buffers.len());

        for b in bindings.buffers.into_iter() {
            let stream = self.scheduler.stream(&b.stream);
            let resource = stream.mem_manage.get_resource(b)?;
            resources.push(resource);
        }

        Ok(BindingsResource {
            resources,
            info: bindings.info,
        })
    }

    fn pipeline(
        &mut self,
        kernel: <Self as ComputeServer>::Kernel,
        bindings: &KernelArguments,
        mode: ExecutionMode,
    ) -> Result<Arc<ComputePipeline>, LaunchError> {
        let mut kernel_id = kernel.id();
        kernel_id.mode(mode);

        if let Some(pipeline) = self.pipelines.get(&kernel_id) {
            return Ok(pipeline.clone());
        }

        // flint patch: a pipeline an empty dispatch started compiling is waited for.
        if let Some(handle) = self.pending.remove(&kernel_id) {
            return self.finish_background_compile(kernel_id, handle);
        }

        let cached = self.load_cached_pipeline(&kernel_id, bindings, mode)?;

        if let Some(Ok(pipeline)) = cached {
            self.pipelines.insert(kernel_id, pipeline.clone());
            return Ok(pipeline);
        }

        validate_cube_dim(&self.utilities.properties, &kernel_id)?;
        validate_units(&self.utilities.properties, &kernel_id)?;

        let mut compiler = compiler(self.backend, &self.compilation_options);
        let mut compiled = compiler.compile(self, kernel, mode)?;

        if self.scheduler.logger.compilation_activated() {
            compiled.debug_info = Some(DebugInformation::new(
                compiler.lang_tag(),
                kernel_id.clone(),
            ));
        }
        self.scheduler.logger.log_compilation(&compiled);

        self.validate_shared(&compiled.repr)?;

        // /!\ Do not delete the following commented code.
        // This is useful while working on the metal compiler.
        // Also the errors are printed nicely which is not the case when this is the runtime
        // that does it.
        // println!("SOURCE:\n{}", compiled.source);
        // {
        //     // Write shader in metal file then compile it for error
        //     std::fs::write("shader.metal", &compiled.source).expect("should write to file");
        //     let _status = std::process::Command::new("xcrun")
        //         .args(vec![
        //             "-sdk",
        //             "macosx",
        //             "metal",
        //             "-o",
        //             "shader.ir",
        //             "-c",
        //             "shader.metal",
        //             "-w",
        //         ])
        //         .status()
        //         .expect("should launch the command");
        //     // std::process::exit(status.code().unwrap());
        // }
        let repr = compiled.repr.as_ref().map(|it| it.as_ref());
        let module = self.create_module(&compiled.entrypoint_name, repr, &compiled.source, mode)?;
        let pipeline = self.create_pipeline(&compiled.entrypoint_name, repr, module, bindings);
        self.pipelines.insert(kernel_id.clone(), pipeline.clone());

        #[cfg(feature = "spirv")]
        if let Some(Err(key)) = cached
            && let Some(crate::AutoRepresentation::SpirV(kernel)) = compiled.repr
        {
            let cache = self.spirv_cache.as_mut().unwrap();
            let result = cache.insert(
                key,
                cubecl_spirv::SpirvCacheEntry::new(compiled.entrypoint_name, kernel),
            );
            if let Err(err) = result {
                log::warn!("Unable to save the SPIR-V {err:?}");
            }
        }

        Ok(pipeline)
    }

    fn validate_shared(&self, repr: &Option<crate::AutoRepresentation>) -> Result<(), LaunchError> {
        validate_shared_within(
            repr,
            self.utilities.properties.hardware.max_shared_memory_size,
        )
    }

    // flint patch: compiles a kernel and makes its pipeline on a background thread, for an
    // empty dispatch. The kernel's first real launch waits for the thread (`pipeline`), so
    // several kernels compile at once, on the host's cores and in the driver. Nothing here
    // is an error: a kernel that cannot start compiling is left to its first real launch,
    // which compiles it in line and reports what fails to the caller that launched it.
    fn compile_in_background(
        &mut self,
        kernel: <Self as ComputeServer>::Kernel,
        args: &KernelArguments,
        mode: ExecutionMode,
    ) {
        let mut kernel_id = kernel.id();
        kernel_id.mode(mode);
        if self.pipelines.contains_key(&kernel_id) || self.pending.contains_key(&kernel_id) {
            return;
        }
        if validate_cube_dim(&self.utilities.properties, &kernel_id).is_err()
            || validate_units(&self.utilities.properties, &kernel_id).is_err()
        {
            return;
        }
        // The SPIR-V cache is read here and written when the thread is joined, on this one.
        #[cfg(feature = "spirv")]
        let (cached, cache_key) = match &self.spirv_cache {
            Some(cache) => {
                let key = (self.utilities.properties_hash, kernel_id.stable_hash());
                match cache.get(&key) {
                    Some(entry) => (Some(entry.clone()), None),
                    None => (None, Some(key)),
                }
            }
            None => (None, None),
        };
        // The layout needs only whether the kernel has an info buffer, not the buffers.
        let bindings = KernelArguments {
            info: cubecl_core::server::MetadataBindingInfo::new(
                args.info.data.clone(),
                args.info.dynamic_metadata_offset,
            ),
            ..Default::default()
        };
        let device = self.device.clone();
        let options = self.compilation_options;
        let backend = self.backend;
        let max_smem = self.utilities.properties.hardware.max_shared_memory_size;
        let spawned = std::thread::Builder::new()
            .name("cubecl-wgpu-compile".into())
            .spawn(move || {
                let _permit = CompilePermit::acquire();
                #[cfg(feature = "spirv")]
                if let Some(entry) = cached {
                    let repr = crate::AutoRepresentationRef::SpirV(&entry.kernel);
                    let module = crate::backend::create_module_on(
                        &device,
                        &entry.entrypoint_name,
                        Some(repr),
                        "",
                        mode,
                    )?;
                    let pipeline = crate::backend::create_pipeline_on(
                        &device,
                        &entry.entrypoint_name,
                        Some(repr),
                        module,
                        &bindings,
                    );
                    return Ok(BackgroundPipeline {
                        pipeline,
                        compiled: None,
                        #[cfg(feature = "spirv")]
                        cache_key: None,
                    });
                }
                let mut compiler = compiler(backend, &options);
                let compiled = kernel.compile(&mut compiler, &options, mode, kernel.address_type())?;
                validate_shared_within(&compiled.repr, max_smem)?;
                let repr = compiled.repr.as_ref().map(|it| it.as_ref());
                let module = crate::backend::create_module_on(
                    &device,
                    &compiled.entrypoint_name,
                    repr,
                    &compiled.source,
                    mode,
                )?;
                let pipeline = crate::backend::create_pipeline_on(
                    &device,
                    &compiled.entrypoint_name,
                    repr,
                    module,
                    &bindings,
                );
                Ok(BackgroundPipeline {
                    pipeline,
                    compiled: Some(compiled),
                    #[cfg(feature = "spirv")]
                    cache_key,
                })
            });
        match spawned {
            Ok(handle) => {
                self.pending.insert(kernel_id, handle);
            }
            Err(err) => log::warn!("No background compile thread, compiling on first use: {err}"),
        }
    }

    // flint patch: joins a background compile and records its pipeline, as `pipeline` does
    // for a compile in line (the compilation log, the SPIR-V cache).
    fn finish_background_compile(
        &mut self,
        kernel_id: KernelId,
        handle: std::thread::JoinHandle<Result<BackgroundPipeline, LaunchError>>,
    ) -> Result<Arc<ComputePipeline>, LaunchError> {
        let done = handle.join().map_err(|_| {
            LaunchError::from(cubecl_runtime::compiler::CompilationError::Generic {
                reason: "The background compile thread panicked".into(),
                backtrace: BackTrace::capture(),
            })
        })??;
        if let Some(mut compiled) = done.compiled {
            if self.scheduler.logger.compilation_activated() {
                let tag = compiler(self.backend, &self.compilation_options).lang_tag();
                compiled.debug_info = Some(DebugInformation::new(tag, kernel_id.clone()));
            }
            self.scheduler.logger.log_compilation(&compiled);
            #[cfg(feature = "spirv")]
            if let (Some(key), Some(cache), Some(crate::AutoRepresentation::SpirV(kernel))) =
                (done.cache_key, self.spirv_cache.as_mut(), compiled.repr)
            {
                let entry = cubecl_spirv::SpirvCacheEntry::new(compiled.entrypoint_name, kernel);
                if let Err(err) = cache.insert(key, entry) {
                    log::warn!("Unable to save the SPIR-V {err:?}");
                }
            }
        }
        self.pipelines.insert(kernel_id, done.pipeline.clone());
        Ok(done.pipeline)
    }
}

// flint patch: what a background compile hands back to the server's thread.
struct BackgroundPipeline {
    pipeline: Arc<ComputePipeline>,
    // `None` when the SPIR-V came from the cache.
    compiled: Option<cubecl_core::prelude::CompiledKernel<AutoCompiler>>,
    #[cfg(feature = "spirv")]
    cache_key: Option<(u64, StableHash)>,
}

// flint patch: at most one background compile per host core runs at a time; the rest wait.
struct CompilePermit;

static COMPILES: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static COMPILE_DONE: std::sync::Condvar = std::sync::Condvar::new();

impl CompilePermit {
    fn acquire() -> Self {
        let slots = std::thread::available_parallelism().map_or(4, |n| n.get());
        let mut running = COMPILES.lock().unwrap_or_else(|e| e.into_inner());
        while *running >= slots {
            running = COMPILE_DONE.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running += 1;
        CompilePermit
    }
}

impl Drop for CompilePermit {
    fn drop(&mut self) {
        let mut running = COMPILES.lock().unwrap_or_else(|e| e.into_inner());
        *running -= 1;
        COMPILE_DONE.notify_one();
    }
}

// flint patch: `validate_shared` against a given limit, for background compiles.
fn validate_shared_within(
    repr: &Option<crate::AutoRepresentation>,
    max_smem: usize,
) -> Result<(), LaunchError> {
    let shared_bytes = repr.as_ref().map(|repr| match repr {
        AutoRepresentation::Wgsl(repr) => repr.shared_memory_bytes(),
        #[cfg(feature = "msl")]
        AutoRepresentation::Msl(repr) => repr.shared_memory_size(),
        #[cfg(feature = "spirv")]
        AutoRepresentation::SpirV(repr) => repr.shared_size,
    });
    if let Some(shared_bytes) = shared_bytes
        && shared_bytes > max_smem
    {
        Err(ResourceLimitError::SharedMemory {
            requested: shared_bytes,
            max: max_smem,
            backtrace: BackTrace::capture(),
        }
        .into())
    } else {
        Ok(())
    }
}

impl ComputeServer for WgpuServer {
    type Kernel = Box<dyn CubeTask<AutoCompiler>>;
    type Storage = WgpuStorage;
    type MemoryLayoutPolicy = ContiguousMemoryLayoutPolicy;
    type Info = wgpu::Backend;

    fn logger(&self) -> Arc<ServerLogger> {
        self.scheduler.logger.clone()
    }

    fn utilities(&self) -> Arc<ServerUtilities<Self>> {
        self.utilities.clone()
    }

    fn staging(
        &mut self,
        _sizes: &[usize],
        _stream_id: StreamId,
    ) -> Result<Vec<Bytes>, ServerError> {
        // TODO: Check if using a staging buffer is useful here.
        Err(IoError::UnsupportedIoOperation {
            backtrace: BackTrace::capture(),
        }
        .into())
    }

    fn initialize_memory(&mut self, memory: ManagedMemoryHandle, size: u64, stream_id: StreamId) {
        let stream = self.scheduler.stream(&stream_id);
        let reserved = stream.empty(size).unwrap();
        stream.mem_manage.bind(reserved, memory);
    }

    fn read(
        &mut self,
        descriptors: Vec<CopyDescriptor>,
        stream_id: StreamId,
    ) -> DynFut<Result<Vec<Bytes>, ServerError>> {
        let mut streams = vec![stream_id];
        let mut resources = Vec::with_capacity(descriptors.len());
        for desc in descriptors {
            if contiguous_strides(&desc.shape) != desc.strides {
                return Box::pin(async {
                    Err(IoError::UnsupportedStrides {
                        backtrace: BackTrace::capture(),
                    }
                    .into())
                });
            }
            if !streams.contains(&desc.handle.stream) {
                streams.push(desc.handle.stream);
            }
            let stream = self.scheduler.stream(&desc.handle.stream);
            let resource = match stream.mem_manage.get_resource(desc.handle) {
                Ok(val) => val,
                Err(err) => return Box::pin(async move { Err(err.into()) }),
            };
            resources.push((resource, desc.shape, desc.elem_size));
        }

        self.scheduler.execute_streams(streams);

        let stream = self.scheduler.stream(&stream_id);
        stream.read_resources(resources)
    }

    fn write(&mut self, descriptors: Vec<(CopyDescriptor, Bytes)>, stream_id: StreamId) {
        for (desc, data) in descriptors {
            let stream = self.scheduler.stream(&desc.handle.stream);

            if contiguous_strides(&desc.shape) != desc.strides {
                stream.error(ServerError::Io(IoError::UnsupportedStrides {
                    backtrace: BackTrace::capture(),
                }));
                return;
            }

            let resource = match stream.mem_manage.get_resource(desc.handle) {
                Ok(r) => r,
                Err(err) => {
                    stream.error(ServerError::Io(err));
                    return;
                }
            };
            let task = ScheduleTask::Write {
                data,
                buffer: resource,
            };

            self.scheduler.register(stream_id, task, &[]);
        }
    }

    fn get_resource(
        &mut self,
        binding: Binding,
        stream_id: StreamId,
    ) -> Result<ManagedResource<WgpuResource>, ServerError> {
        let mut streams = vec![stream_id];
        if binding.stream != stream_id {
            streams.push(binding.stream);
        }
        self.scheduler.execute_streams(streams);
        let stream = self.scheduler.stream(&binding.stream);
        let memory = binding.memory.clone();
        let resource = stream.mem_manage.get_resource(binding)?;

        Ok(ManagedResource::new(memory, resource))
    }

    unsafe fn launch(
        &mut self,
        kernel: Self::Kernel,
        count: CubeCount,
        args: KernelArguments,
        mode: ExecutionMode,
        stream_id: StreamId,
    ) {
        // flint patch: an empty dispatch runs nothing; it starts compiling the kernel's
        // pipeline on a background thread instead, so that a caller can compile several
        // kernels at once ahead of their first launches.
        if let CubeCount::Static(x, y, z) = count
            && (x == 0 || y == 0 || z == 0)
        {
            self.compile_in_background(kernel, &args, mode);
            return;
        }
        let pipeline = match self.pipeline(kernel, &args, mode) {
            Ok(val) => val,
            Err(err) => {
                // We make the stream that would execute the kernel in error.
                let stream = self.scheduler.stream(&stream_id);
                stream.errors.push(ServerError::Launch(err));
                return;
            }
        };

        self.streams_pool.clear();
        args.buffers
            .iter()
            .for_each(|b| self.streams_pool.push(b.stream));

        let resources = match self.prepare_bindings(args) {
            Ok(val) => val,
            Err(err) => {
                // We make the stream that would execute the kernel in error.
                let stream = self.scheduler.stream(&stream_id);
                stream.errors.push(ServerError::Io(err));
                return;
            }
        };
        let task = ScheduleTask::Execute {
            pipeline,
            count,
            resources,
        };

        self.scheduler.register(stream_id, task, &self.streams_pool);
    }

    fn flush(&mut self, stream_id: StreamId) -> Result<(), ServerError> {
        self.scheduler.execute_streams(vec![stream_id]);

        let stream = self.scheduler.stream(&stream_id);

        stream.flush(StreamErrorMode {
            ignore: false,
            flush: true,
        })
    }

    /// Returns the total time of GPU work this sync completes.
    fn sync(&mut self, stream_id: StreamId) -> DynFut<Result<(), ServerError>> {
        self.scheduler.execute_streams(vec![stream_id]);
        let stream = self.scheduler.stream(&stream_id);

        stream.sync()
    }

    fn start_profile(&mut self, stream_id: StreamId) -> Result<ProfilingToken, ServerError> {
        self.scheduler.execute_streams(vec![stream_id]);
        let stream = self.scheduler.stream(&stream_id);
        stream.start_profile()
    }

    fn end_profile(
        &mut self,
        stream_id: StreamId,
        token: ProfilingToken,
    ) -> Result<ProfileDuration, ProfileError> {
        self.scheduler.execute_streams(vec![stream_id]);
        let stream = self.scheduler.stream(&stream_id);

        stream.end_profile(token)
    }

    fn memory_usage(&mut self, stream_id: StreamId) -> Result<MemoryUsage, ServerError> {
        self.scheduler.execute_streams(vec![stream_id]);
        let stream = self.scheduler.stream(&stream_id);
        Ok(stream.mem_manage.memory_usage())
    }

    fn memory_cleanup(&mut self, stream_id: StreamId) {
        self.scheduler.execute_streams(vec![stream_id]);
        let stream = self.scheduler.stream(&stream_id);
        stream.mem_manage.memory_cleanup(true);
    }

    fn allocation_mode(&mut self, mode: MemoryAllocationMode, stream_id: StreamId) {
        self.scheduler.execute_streams(vec![stream_id]);
        let stream = self.scheduler.stream(&stream_id);
        stream.mem_manage.mode(mode);
    }
}

fn compiler(backend: wgpu::Backend, options: &WgpuCompilationOptions) -> AutoCompiler {
    let _ = options; // Unused without `spirv` feature
    match backend {
        #[cfg(feature = "spirv")]
        wgpu::Backend::Vulkan if options.supports_vulkan => AutoCompiler::SpirV(Default::default()),
        #[cfg(feature = "msl")]
        wgpu::Backend::Metal => AutoCompiler::Msl(Default::default()),
        _ => AutoCompiler::Wgsl(Default::default()),
    }
}

pub(crate) fn contiguous_strides(shape: &Shape) -> Strides {
    let rank = shape.len();
    let mut strides = strides![1; rank];
    for i in (0..rank - 1).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}
