use cubecl_common::backtrace::BackTrace;
use cubecl_cpp::formatter::format_cpp;
use cubecl_cpp::{cuda::arch::CudaArchitecture, shared::CompilationOptions};
use cubecl_runtime::{
    compiler::CompilationError,
    validation::{validate_cube_dim, validate_units},
};

use super::storage::gpu::GpuResource;
use crate::{CudaCompiler, compute::stream::Stream};
use crate::{
    install::{cccl_include_path, include_path},
};
use cubecl_core::{
    compilation_cache::CompilationCache,
    hash::StableHash,
    server::ResourceLimitError,
    {ir::DeviceProperties, prelude::*},
};
use cubecl_runtime::timestamp_profiler::TimestampProfiler;
use cubecl_runtime::{compiler::CubeTask, logging::ServerLogger};
use cudarc::driver::DriverError;
use cudarc::driver::sys::CUfunc_st;
use cudarc::driver::sys::{CUctx_st, CUfunction_attribute, CUtensorMap};
use std::collections::HashMap;
use std::ffi::CString;
use std::ffi::c_char;
use std::str::FromStr;
use std::sync::Arc;
use std::{ffi::CStr, os::raw::c_void};

use cubecl_common::cache::CacheOption;

#[derive(Debug)]
pub(crate) struct CudaContext {
    pub context: *mut CUctx_st,
    pub module_names: HashMap<KernelId, CompiledKernel>,
    ptx_cache: Option<CompilationCache<StableHash, PtxCacheEntry>>,
    // flint patch: kernels compiling on background threads.
    #[allow(clippy::type_complexity)]
    pending: HashMap<KernelId, std::thread::JoinHandle<Result<BackgroundCompiled, LaunchError>>>,
    pub timestamps: TimestampProfiler,
    pub arch: CudaArchitecture,
    pub compilation_options: CompilationOptions,
    pub properties: DeviceProperties,
}

#[derive(Debug)]
pub struct CompiledKernel {
    cube_dim: CubeDim,
    shared_mem_bytes: usize,
    func: *mut CUfunc_st,
}

#[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq, Clone)]
pub struct PtxCacheEntry {
    entrypoint_name: String,
    shared_mem_bytes: usize,
    ptx: Vec<std::ffi::c_char>,
}

impl CudaContext {
    pub fn new(
        compilation_options: CompilationOptions,
        properties: DeviceProperties,
        context: *mut CUctx_st,
        arch: CudaArchitecture,
    ) -> Self {
        Self {
            context,
            module_names: HashMap::new(),
            pending: HashMap::new(),
            ptx_cache: {
                use cubecl_runtime::config::RuntimeConfig;
                let config = cubecl_runtime::config::CubeClRuntimeConfig::get();
                if let Some(cache) = &config.compilation.cache {
                    let root = cache.root();
                    Some(CompilationCache::new(
                        "ptx",
                        CacheOption::default().name("cuda").root(root),
                    ))
                } else {
                    None
                }
            },
            arch,
            timestamps: TimestampProfiler::default(),
            compilation_options,
            properties,
        }
    }

    /// Switches the current CUDA context to this context.
    pub fn unsafe_set_current(&self) -> Result<(), DriverError> {
        // SAFETY: `self.context` is a valid CUDA context obtained from `primary_ctx::retain`
        // during server initialization and remains valid for the server's lifetime.
        unsafe { cudarc::driver::result::ctx::set_current(self.context) }
    }

    pub fn compile_kernel(
        &mut self,
        kernel_id: &KernelId,
        kernel: Box<dyn CubeTask<CudaCompiler>>,
        mode: ExecutionMode,
        logger: Arc<ServerLogger>,
    ) -> Result<(), LaunchError> {
        // flint patch: a kernel an empty dispatch started compiling is waited for.
        if let Some(handle) = self.pending.remove(kernel_id) {
            return self.finish_background_compile(kernel_id, handle);
        }
        let Some(hash) = self.load_cached(kernel_id)? else {
            return Ok(());
        };

        log::trace!("Compiling kernel");

        validate_cube_dim(&self.properties, kernel_id)?;
        validate_units(&self.properties, kernel_id)?;

        let compiled = self.compile_job(kernel_id, kernel, mode, logger).run()?;
        self.insert_cached(hash, &compiled);
        // flint patch: NVRTC's cubin where it loads (see `load_compiled`).
        let func = load_compiled(&compiled)?;
        self.insert_module(kernel_id, &compiled, func);
        Ok(())
    }

    // flint patch: compiles on a background thread (NVRTC, then the driver's PTX load with
    // this context current there), for an empty dispatch. The kernel's first real launch
    // waits for the thread in `compile_kernel`, so several kernels compile at once. Nothing
    // here is an error: a kernel that cannot start compiling is left to its first real
    // launch, which compiles it in line and reports what fails to the caller that launched it.
    pub fn compile_kernel_in_background(
        &mut self,
        kernel_id: &KernelId,
        kernel: Box<dyn CubeTask<CudaCompiler>>,
        mode: ExecutionMode,
        logger: Arc<ServerLogger>,
    ) {
        if self.pending.contains_key(kernel_id) {
            return;
        }
        let hash = match self.load_cached(kernel_id) {
            Ok(Some(hash)) => hash,
            Ok(None) => return,
            Err(err) => {
                log::debug!("No background compile, the cached PTX did not load: {err}");
                return;
            }
        };
        if validate_cube_dim(&self.properties, kernel_id).is_err()
            || validate_units(&self.properties, kernel_id).is_err()
        {
            return;
        }

        let job = self.compile_job(kernel_id, kernel, mode, logger);
        let context = SendPtr(self.context as *mut c_void);
        let spawned = std::thread::Builder::new()
            .name("cubecl-cuda-compile".into())
            .spawn(move || {
                let _permit = CompilePermit::acquire();
                let compiled = job.run()?;
                // SAFETY: the context is the server's primary context, alive while the
                // server is; making it current on this thread only affects this thread.
                unsafe { cudarc::driver::result::ctx::set_current(context.get() as *mut CUctx_st) }
                    .map_err(|err| CompilationError::Generic {
                        reason: format!("Unable to set the CUDA context: {err:?}"),
                        backtrace: BackTrace::capture(),
                    })?;
                let func = load_compiled(&compiled)?;
                Ok(BackgroundCompiled {
                    compiled,
                    hash,
                    func: SendPtr(func as *mut c_void),
                })
            });
        match spawned {
            Ok(handle) => {
                self.pending.insert(kernel_id.clone(), handle);
            }
            Err(err) => log::warn!("No background compile thread, compiling on first use: {err}"),
        }
    }

    fn finish_background_compile(
        &mut self,
        kernel_id: &KernelId,
        handle: std::thread::JoinHandle<Result<BackgroundCompiled, LaunchError>>,
    ) -> Result<(), LaunchError> {
        let done = handle.join().map_err(|_| CompilationError::Generic {
            reason: "The background compile thread panicked".into(),
            backtrace: BackTrace::capture(),
        })??;
        self.insert_cached(done.hash, &done.compiled);
        self.insert_module(kernel_id, &done.compiled, done.func.0 as *mut CUfunc_st);
        Ok(())
    }

    // flint patch: records a kernel compiled here (in line or in the background) as loaded.
    fn insert_module(&mut self, kernel_id: &KernelId, compiled: &CompiledPtx, func: *mut CUfunc_st) {
        self.module_names.insert(
            kernel_id.clone(),
            CompiledKernel {
                cube_dim: compiled.cube_dim,
                shared_mem_bytes: compiled.shared_mem_bytes,
                func,
            },
        );
    }

    /// Loads the kernel from the PTX cache if it is there (`None`), else returns the key it
    /// will be cached under (`Some(None)` without a cache).
    fn load_cached(&mut self, kernel_id: &KernelId) -> Result<Option<Option<StableHash>>, LaunchError> {
        let Some(cache) = &self.ptx_cache else {
            return Ok(Some(None));
        };
        let hash = kernel_id.stable_hash();
        if let Some(entry) = cache.get(&hash) {
            log::trace!("Using PTX cache");
            let entry = entry.clone();
            self.load_ptx(
                entry.ptx,
                kernel_id.clone(),
                entry.entrypoint_name,
                kernel_id.cube_dim,
                entry.shared_mem_bytes,
            )?;
            return Ok(None);
        }
        Ok(Some(Some(hash)))
    }

    fn insert_cached(&mut self, hash: Option<StableHash>, compiled: &CompiledPtx) {
        if let (Some(cache), Some(hash)) = (&mut self.ptx_cache, hash) {
            let result = cache.insert(
                hash,
                PtxCacheEntry {
                    entrypoint_name: compiled.entrypoint_name.clone(),
                    shared_mem_bytes: compiled.shared_mem_bytes,
                    ptx: compiled.ptx.clone(),
                },
            );
            if let Err(err) = result {
                log::warn!("Unable to save the ptx {err:?}");
            }
        }
    }

    fn compile_job(
        &self,
        kernel_id: &KernelId,
        kernel: Box<dyn CubeTask<CudaCompiler>>,
        mode: ExecutionMode,
        logger: Arc<ServerLogger>,
    ) -> CompileJob {
        let arch = if self.arch.version >= 90 {
            format!("--gpu-architecture=sm_{}a", self.arch)
        } else {
            format!("--gpu-architecture=sm_{}", self.arch)
        };
        CompileJob {
            kernel_id: kernel_id.clone(),
            kernel,
            mode,
            logger,
            arch,
            options: self.compilation_options.clone(),
            max_shared_memory_size: self.properties.hardware.max_shared_memory_size,
        }
    }

    fn load_ptx(
        &mut self,
        ptx: Vec<c_char>,
        kernel_id: KernelId,
        entrypoint_name: String,
        cube_dim: CubeDim,
        shared_mem_bytes: usize,
    ) -> Result<(), CompilationError> {
        let func = load_module(&ptx, &entrypoint_name)?;
        self.module_names.insert(
            kernel_id.clone(),
            CompiledKernel {
                cube_dim,
                shared_mem_bytes,
                func,
            },
        );

        Ok(())
    }

    pub fn execute_task(
        &mut self,
        stream: &mut Stream,
        kernel_id: KernelId,
        dispatch_count: (u32, u32, u32),
        tensor_maps: &[CUtensorMap],
        resources: &[GpuResource],
        const_info: Option<*mut c_void>,
    ) -> Result<(), LaunchError> {
        let mut bindings = tensor_maps
            .iter()
            .map(|map| map as *const _ as *mut c_void)
            .collect::<Vec<_>>();
        bindings.extend(resources.iter().map(|memory| memory.binding));
        bindings.extend(const_info);

        let kernel = self.module_names.get(&kernel_id).unwrap();
        let cube_dim = kernel.cube_dim;
        // SAFETY: `kernel.func` is a valid function handle from a loaded module.
        // `stream.sys` is a valid CUDA stream. `bindings` contains valid device pointers
        // for all kernel arguments. The dispatch and cube dimensions are validated by
        // the caller.
        unsafe {
            cudarc::driver::result::function::set_function_attribute(
                kernel.func,
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                kernel.shared_mem_bytes as i32,
            )
            .map_err(|err| LaunchError::Unknown {
                reason: format!("{err:?}"),
                backtrace: BackTrace::capture(),
            })?;
            cudarc::driver::result::launch_kernel(
                kernel.func,
                dispatch_count,
                (cube_dim.x, cube_dim.y, cube_dim.z),
                // Shared memory is collected into a single buffer, with each shared memory being
                // an offset pointer
                kernel.shared_mem_bytes as u32,
                stream.sys,
                &mut bindings,
            )
            .map_err(|err| LaunchError::Unknown {
                reason: format!("{err:?}"),
                backtrace: BackTrace::capture(),
            })?;
        };

        Ok(())
    }
}

// flint patch: a raw CUDA handle moved to or from a background compile thread.
struct SendPtr(*mut c_void);

// SAFETY: CUDA contexts and functions are process-wide handles that the driver API accepts
// from any thread; the wrapper only carries them across.
unsafe impl Send for SendPtr {}

impl SendPtr {
    // A method, so that a closure captures the wrapper rather than its raw field.
    fn get(&self) -> *mut c_void {
        self.0
    }
}

// flint patch: at most one background compile per host core at a time, since each NVRTC
// instance holds its own memory; the others wait for a permit.
struct CompilePermit;

static COMPILE_PERMITS: std::sync::Mutex<Option<usize>> = std::sync::Mutex::new(None);
static COMPILE_PERMIT_FREED: std::sync::Condvar = std::sync::Condvar::new();

impl CompilePermit {
    fn acquire() -> Self {
        let mut free = COMPILE_PERMITS.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let left = free.get_or_insert_with(|| {
                std::thread::available_parallelism().map_or(4, |n| n.get())
            });
            if *left > 0 {
                *left -= 1;
                return CompilePermit;
            }
            free = COMPILE_PERMIT_FREED
                .wait(free)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for CompilePermit {
    fn drop(&mut self) {
        let mut free = COMPILE_PERMITS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(left) = free.as_mut() {
            *left += 1;
        }
        COMPILE_PERMIT_FREED.notify_one();
    }
}

// flint patch: what a compile to PTX needs, taken out of the context so that it can run
// on another thread.
struct CompileJob {
    kernel_id: KernelId,
    kernel: Box<dyn CubeTask<CudaCompiler>>,
    mode: ExecutionMode,
    logger: Arc<ServerLogger>,
    arch: String,
    options: CompilationOptions,
    max_shared_memory_size: usize,
}

// flint patch: a kernel compiled to PTX, and the SASS NVRTC made from it.
struct CompiledPtx {
    ptx: Vec<c_char>,
    // flint patch: NVRTC runs ptxas itself for an `sm_` architecture; loading its cubin
    // spares the driver a second PTX compile (its JIT) of the same kernel.
    cubin: Option<Vec<c_char>>,
    entrypoint_name: String,
    cube_dim: CubeDim,
    shared_mem_bytes: usize,
}

// flint patch: a background compile's result, its module already loaded.
struct BackgroundCompiled {
    compiled: CompiledPtx,
    hash: Option<StableHash>,
    func: SendPtr,
}

impl CompileJob {
    /// CubeCL's IR to CUDA C++, then NVRTC to PTX.
    fn run(self) -> Result<CompiledPtx, LaunchError> {
        let CompileJob {
            kernel_id,
            kernel,
            mode,
            logger,
            arch,
            options: compilation_options,
            max_shared_memory_size,
        } = self;
        let mut kernel_compiled = kernel.compile(
            &mut Default::default(),
            &compilation_options,
            mode,
            kernel.address_type(),
        )?;

        let requested = kernel_compiled.repr.as_ref().map(|repr| repr.shared_memory_size());
        if let Some(requested) = requested
            && requested > max_shared_memory_size
        {
            return Err(ResourceLimitError::SharedMemory {
                requested,
                max: max_shared_memory_size,
                backtrace: BackTrace::capture(),
            }
            .into());
        }

        if logger.compilation_activated() {
            kernel_compiled.debug_info = Some(DebugInformation::new("cpp", kernel_id.clone()));

            if let Ok(formatted) = format_cpp(&kernel_compiled.source) {
                kernel_compiled.source = formatted;
            }
        }

        let cube_dim = kernel_compiled.cube_dim;

        let include_path = include_path();
        let include_option = format!("--include-path={}", include_path.to_str().unwrap());
        let cccl_include_path = cccl_include_path();
        let cccl_include_option = format!("--include-path={}", cccl_include_path.to_str().unwrap());
        let mut options = vec![arch.as_str(), include_option.as_str(), "-lineinfo"];
        if cccl_include_path.exists() {
            options.push(&cccl_include_option);
        }

        logger.log_compilation(&kernel_compiled);

        // SAFETY: Calling NVRTC FFI to create, compile, and extract PTX from a program.
        // The `CString` source is null-terminated and outlives the program. On compilation
        // failure, the error log is retrieved and reported before returning.
        let (ptx, cubin) = unsafe {
            // I'd like to set the name to the kernel name, but keep getting UTF-8 errors so let's
            // leave it `None` for now
            let source = CString::from_str(&kernel_compiled.source).unwrap();
            let program =
                cudarc::nvrtc::result::create_program(source.as_c_str(), None).map_err(|err| {
                    CompilationError::Generic {
                        reason: format!("{err:?}"),
                        backtrace: BackTrace::capture(),
                    }
                })?;
            if cudarc::nvrtc::result::compile_program(program, &options).is_err() {
                let log_raw = cudarc::nvrtc::result::get_program_log(program).map_err(|err| {
                    CompilationError::Generic {
                        reason: format!("{err:?}"),
                        backtrace: BackTrace::capture(),
                    }
                })?;

                let log_ptr = log_raw.as_ptr();
                let log = CStr::from_ptr(log_ptr).to_str().unwrap();
                let mut message = "[Compilation Error] ".to_string();
                for line in log.split('\n') {
                    if !line.is_empty() {
                        message += format!("\n    {line}").as_str();
                    }
                }
                let source = kernel
                    .compile(
                        &mut Default::default(),
                        &compilation_options,
                        mode,
                        kernel.address_type(),
                    )?
                    .source;
                Err(CompilationError::Generic {
                    reason: format!("{message}\n[Source]  \n{source}"),
                    backtrace: BackTrace::capture(),
                })?;
            };
            let ptx = cudarc::nvrtc::result::get_ptx(program).map_err(|err| {
                CompilationError::Generic {
                    reason: format!("{err:?}"),
                    backtrace: BackTrace::capture(),
                }
            })?;
            (ptx, get_cubin(program))
        };

        let repr = kernel_compiled.repr.unwrap();
        Ok(CompiledPtx {
            ptx,
            cubin,
            entrypoint_name: kernel_compiled.entrypoint_name,
            cube_dim,
            shared_mem_bytes: repr.shared_memory_size(),
        })
    }
}

// flint patch: the cubin when NVRTC made one and the driver takes it, else the PTX.
fn load_compiled(compiled: &CompiledPtx) -> Result<*mut CUfunc_st, CompilationError> {
    if let Some(cubin) = &compiled.cubin {
        match load_module(cubin, &compiled.entrypoint_name) {
            Ok(func) => return Ok(func),
            Err(err) => log::debug!("The cubin did not load, loading the PTX: {err}"),
        }
    }
    load_module(&compiled.ptx, &compiled.entrypoint_name)
}

// flint patch: NVRTC's cubin of a compiled program, if it made one (an `sm_` architecture).
//
// # Safety
//
// `program` must be a program NVRTC compiled successfully and has not destroyed.
unsafe fn get_cubin(program: cudarc::nvrtc::sys::nvrtcProgram) -> Option<Vec<c_char>> {
    use cudarc::nvrtc::sys::{nvrtcGetCUBIN, nvrtcGetCUBINSize, nvrtcResult};
    let mut size = 0usize;
    // SAFETY: `program` is compiled (the caller's contract); the buffer has `size` bytes.
    unsafe {
        if nvrtcGetCUBINSize(program, &mut size) != nvrtcResult::NVRTC_SUCCESS || size == 0 {
            return None;
        }
        let mut cubin = vec![0 as c_char; size];
        if nvrtcGetCUBIN(program, cubin.as_mut_ptr()) != nvrtcResult::NVRTC_SUCCESS {
            return None;
        }
        Some(cubin)
    }
}

/// Loads PTX (or a cubin) as a module in the current context and fetches its entry point.
fn load_module(ptx: &[c_char], entrypoint_name: &str) -> Result<*mut CUfunc_st, CompilationError> {
    let func_name = CString::new(entrypoint_name).unwrap();
    // SAFETY: `ptx` is a valid null-terminated PTX binary from NVRTC, or (flint patch) NVRTC's
    // cubin, an ELF image whose header gives its size. `func_name` is a
    // null-terminated `CString` matching the kernel entry point in the compiled module.
    unsafe {
        let module = cudarc::driver::result::module::load_data(ptx.as_ptr() as *const _)
            .map_err(|err| CompilationError::Generic {
                reason: format!("Unable to load the PTX: {err:?}"),
                backtrace: BackTrace::capture(),
            })?;

        cudarc::driver::result::module::get_function(module, func_name).map_err(|err| {
            CompilationError::Generic {
                reason: format!("Unable to fetch the function from the module: {err:?}"),
                backtrace: BackTrace::capture(),
            }
        })
    }
}
