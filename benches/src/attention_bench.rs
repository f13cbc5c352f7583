//! Attention forward timings: flint against Burn's own `attention`, on the manifest's
//! workloads or on a grid of sequence lengths, with TFLOP/s and percent of the roofline.
//!
//! The printed table uses the columns of `../shared/bench/sdpa_reference.py` (name d causal
//! seq batch heads fwd_ms fwd_tflops) plus the roofline percentage and the workload label,
//! so that both outputs sit side by side when they run in one device call. `--csv FILE` also
//! writes every row as CSV.
//!
//! Grid shapes follow the FlashAttention convention: heads = hidden / d, batch = tokens / seq.
//! FLOPs and bytes come from the manifest's roofline formulas (FLOPs = 4·B·H·Sq·Sk·D, halved
//! when causal). The roofline time is `max(flops / peak, bytes / bandwidth)` with the peaks
//! given by `--peak-tflops` (default 800, the H100's measured dense bf16 matmul ceiling) and
//! `--peak-gbps` (on CUDA by default the device's own, from its memory clock and bus width;
//! elsewhere 3350, the H100's HBM3 bandwidth).
//!
//! ```text
//! cargo run --release -p flint-benches --features cuda --bin attention_bench -- \
//!     [--workloads | --workload LABEL] [--dims 128 --seqs 1024,4096 [--seqs-kv 128,256]] [--dtype bf16|f16|f32] [--no-burn] \
//!     [--csv out.csv] [--svg out.svg --reference sdpa.txt] [--iters 5] [--bwd]
//!     [--bwd-configs | --bwd-only NAME] [--fwd-configs | --fwd-only NAME] [--only LABEL,...]
//!     [--split-configs] [--portable-configs] [--check]
//!     [--overhead] [--wgpu] [--no-fusion] [--no-kernel-cache]
//! ```
//!
//! The backend is CUDA in a build with the `cuda` feature, else wgpu; `--wgpu` picks wgpu in
//! a build with both. `--no-fusion` times the CUDA forward rows on Burn's `CubeBackend`
//! itself instead of the default `Cuda` (its fusion stream costs tens of microseconds a call,
//! which a decode's few kernels can hide behind). Compiled kernels are kept across runs
//! ([`flint::enable_kernel_cache`]); `--no-kernel-cache` compiles everything, as a machine's
//! first process does.
//!
//! `--svg FILE` draws TFLOP/s against sequence length (see [`crate::chart`]), with the lines of
//! `--reference FILE[,FILE...]` (saved `sdpa_reference.py` output, or this bench's own rows)
//! beside flint's and Burn's; `--plot-only` draws it from those files alone, measuring nothing.
//!
//! `--bwd` times training instead: forward + backward through `Autodiff<B>` (loss
//! `sum(out ∘ dO)`, `fwdbwd_ms`), and the backward (FLOPs 2.5× the forward's, as
//! FlashAttention counts): for flint its backward op alone on a saved output and LSE, as
//! SDPA's reference times `autograd.grad`; for Burn's attention under autodiff (its
//! decomposed fallback) `fwd+bwd − fwd`, which also counts the loss's kernels. The device
//! memory reserved by the pool after the run is reported too. Each workload's first training
//! step runs before anything else, as a model's first step does (it tunes the forward and the
//! backward): `# flint first fwd+bwd call`; `# tuned OP in S s` gives each tuning's wall time.
//! `--bwd-configs` adds one row per tensor-core backward tiling, two-kernel and fused dQ
//! (`flint-mma64-fused`, sm90+), with 4 planes per cube and with 8 (`-p8`), with the dK/dV
//! kernel's planes as a grid (`-grid`), the cooperative-matrix tilings (`flint-cmma`, Vulkan's
//! tensor cores), forced through an overlay (`--bwd-only NAME`: the rows whose name contains
//! NAME);
//! `--fwd-configs` one row per tensor-core forward tiling, forced through the options;
//! `--split-configs` one row per one-plane tiling and split-K part count for workloads of at
//! most 16 queries (decoding); `--portable-configs` one row per portable-kernel tiling.
//! `--check` compares each forward with Burn's attention in f32 on the same device (the
//! relative L2 error, failing the run above 2%): for backends the test suite cannot reach,
//! such as Vulkan on a GPU machine. With `--bwd` it compares the gradients instead (dQ, dK
//! and dV against Burn's attention under autodiff in f32, failing above 3%), for the
//! selector's backward and each forced one.
//! `--overhead` adds the host-side cost of one `flash_attention` call on a warm cache (with
//! `--bwd`, of a forward under autodiff, tracked and not), and, forward, each workload's own
//! pace: back to back until queued and until done, and host bursts, on its real inputs.
//! Through Burn's fusion type it also times what the stream itself costs one custom op
//! ([`crate::fusion_cost`]), beside a call that keeps its LSE and one with its config given.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::tensor::backend::Backend;
use burn::tensor::module::attention as burn_attention;
use burn::tensor::ops::AttentionModuleOptions;
use burn::tensor::{DType, Distribution, ElementConversion, Tensor};
use flint::kernels::attention::AttentionProblem;
use flint::{
    AttentionBwdConfig, AttentionBwdInputs, AttentionFwdConfig, AttentionOptions,
    FlashAttentionBackend, Overlay, Variant,
};
use flint_manifest::{Manifest, Val, WorkloadValue, env_of};

use crate::chart::{Point, panel, parse_reference, svg};

/// What to measure and where to write it (see the module docs for each flag).
#[derive(Clone, Debug)]
pub struct Args {
    /// Head dims of the grid.
    pub dims: Vec<usize>,
    /// Sequence lengths of the grid.
    pub seqs: Vec<usize>,
    /// Key lengths of the grid (`--seqs-kv`), each against every query length; empty: each
    /// query length's own. Short key lengths against long queries time a block's fixed
    /// cost apart from its key tiles (`docs/PERF.md`).
    pub seqs_kv: Vec<usize>,
    /// Time the manifest's workloads instead of the grid.
    pub workloads: bool,
    /// With `workloads`, only those whose label contains this (`--workload decode`).
    pub workload: Option<String>,
    /// Element type of q, k, v.
    pub dtype: DType,
    /// Grid tokens per call (batch = tokens / seq).
    pub tokens: usize,
    /// Grid hidden size (heads = hidden / d).
    pub hidden: usize,
    /// Also time Burn's own attention.
    pub burn: bool,
    /// The fewest back-to-back calls per timing round (a round also lasts at least
    /// 20 ms, after a 50 ms warm-up; the median round is reported).
    pub iters: usize,
    /// Write every row as CSV here.
    pub csv: Option<PathBuf>,
    /// Write the SVG chart here.
    pub svg: Option<PathBuf>,
    /// `sdpa_reference.py` output to draw beside flint.
    pub reference: Option<PathBuf>,
    /// `--plot-only`: draw `--svg` from saved rows alone (`--reference`, several files
    /// comma-separated: SDPA's and this bench's own output), measuring nothing.
    pub plot_only: bool,
    /// Roofline compute peak.
    pub peak_tflops: f64,
    /// Roofline memory bandwidth (`--peak-gbps`); when not given, the device's own on CUDA
    /// (its memory clock times its bus width), else an H100's 3350.
    pub peak_gbps: Option<f64>,
    /// Time forward + backward instead of the forward.
    pub bwd: bool,
    /// With `bwd`: also time each tensor-core backward tiling, forced through an overlay.
    pub bwd_configs: bool,
    /// With `bwd_configs`: only the tilings whose row name contains this.
    pub bwd_filter: Option<String>,
    /// Forward: also time each tensor-core forward tiling, forced through the options.
    pub fwd_configs: bool,
    /// With `fwd_configs`: only the tilings whose row name contains this.
    pub fwd_filter: Option<String>,
    /// Only the workloads whose label is one of these (comma-separated on the command line).
    pub only: Vec<String>,
    /// Forward, decode-like workloads: also time one-plane tilings at each split-K count.
    pub split_configs: bool,
    /// Forward: also time the portable kernel's tilings (f32, adapters without tensor cores).
    pub portable_configs: bool,
    /// Forward: compare flint's output with Burn's attention computed in f32 on the same
    /// device, and fail on a relative error above 2%.
    pub check: bool,
    /// Forward: also measure the host-side cost of one call on a warm cache.
    pub overhead: bool,
    /// Run on wgpu even in a build with CUDA.
    pub wgpu: bool,
    /// Forward rows on CUDA through Burn's `CubeBackend` itself rather than the default
    /// `Cuda` (= `Fusion<CubeBackend>`): the same kernels without the fusion stream's cost
    /// per call.
    pub no_fusion: bool,
}

impl Default for Args {
    fn default() -> Self {
        Self {
            dims: vec![128],
            seqs: vec![1024, 4096],
            seqs_kv: Vec::new(),
            workloads: false,
            workload: None,
            dtype: DType::BF16,
            tokens: 16384,
            hidden: 2048,
            burn: true,
            iters: 5,
            csv: None,
            svg: None,
            reference: None,
            plot_only: false,
            peak_tflops: 800.0,
            peak_gbps: None,
            bwd: false,
            bwd_configs: false,
            bwd_filter: None,
            fwd_filter: None,
            only: Vec::new(),
            fwd_configs: false,
            split_configs: false,
            portable_configs: false,
            check: false,
            overhead: false,
            wgpu: false,
            no_fusion: false,
        }
    }
}

/// One attention shape, with its FLOPs and bytes from the manifest's roofline formulas.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The manifest label or a grid name (`d128-s4096-causal`).
    pub label: String,
    /// Batch.
    pub b: usize,
    /// Query heads.
    pub h: usize,
    /// Key/value heads.
    pub hkv: usize,
    /// Query length.
    pub sq: usize,
    /// Key length.
    pub sk: usize,
    /// Query/key head dim.
    pub d: usize,
    /// Value head dim.
    pub dv: usize,
    /// Causal mask.
    pub causal: bool,
    /// Forward FLOPs.
    pub flops: f64,
    /// Forward bytes moved.
    pub bytes: f64,
}

/// Parses the command line of `attention_bench` (without the program name).
///
/// # Errors
/// An unknown flag, a missing value or a bad number, named.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut a = Args::default();
    let list = |v: &str| -> Result<Vec<usize>, String> {
        v.split(',')
            .map(|x| x.parse().map_err(|_| format!("bad number `{x}`")))
            .collect()
    };
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--dims" => a.dims = list(&value()?)?,
            "--seqs" => a.seqs = list(&value()?)?,
            "--seqs-kv" => a.seqs_kv = list(&value()?)?,
            "--workloads" => a.workloads = true,
            "--workload" => {
                a.workloads = true;
                a.workload = Some(value()?);
            }
            "--tokens" => a.tokens = value()?.parse().map_err(|_| "bad --tokens")?,
            "--hidden" => a.hidden = value()?.parse().map_err(|_| "bad --hidden")?,
            "--iters" => a.iters = value()?.parse().map_err(|_| "bad --iters")?,
            "--csv" => a.csv = Some(PathBuf::from(value()?)),
            "--svg" => a.svg = Some(PathBuf::from(value()?)),
            "--reference" => a.reference = Some(PathBuf::from(value()?)),
            "--plot-only" => a.plot_only = true,
            "--peak-tflops" => a.peak_tflops = value()?.parse().map_err(|_| "bad --peak-tflops")?,
            "--peak-gbps" => {
                a.peak_gbps = Some(value()?.parse().map_err(|_| "bad --peak-gbps")?);
            }
            "--no-burn" => a.burn = false,
            "--bwd" => a.bwd = true,
            "--bwd-configs" => {
                a.bwd = true;
                a.bwd_configs = true;
            }
            "--bwd-only" => {
                a.bwd = true;
                a.bwd_configs = true;
                a.bwd_filter = Some(value()?);
            }
            "--fwd-configs" => a.fwd_configs = true,
            "--fwd-only" => {
                a.fwd_configs = true;
                a.fwd_filter = Some(value()?);
            }
            "--only" => a.only = value()?.split(',').map(str::to_string).collect(),
            "--split-configs" => a.split_configs = true,
            "--portable-configs" => a.portable_configs = true,
            "--check" => a.check = true,
            "--overhead" => a.overhead = true,
            "--wgpu" => a.wgpu = true,
            "--no-fusion" => a.no_fusion = true,
            // Read by the binary's `main` before any device exists.
            "--no-kernel-cache" => {}
            "--dtype" => a.dtype = dtype(&value()?)?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(a)
}

/// `bf16`, `f16` or `f32`.
///
/// # Errors
/// Any other name.
pub fn dtype(name: &str) -> Result<DType, String> {
    match name {
        "bf16" => Ok(DType::BF16),
        "f16" => Ok(DType::F16),
        "f32" => Ok(DType::F32),
        other => Err(format!(
            "unknown dtype `{other}` (expected bf16, f16 or f32)"
        )),
    }
}

/// The attention entry of the manifest, found from the working directory or the binary's
/// location (the benches run from the repository root, or from a copy beside the binary).
fn manifest_entry(
    explicit: Option<&Path>,
    op: &str,
) -> Result<flint_manifest::LoadedEntry, String> {
    let mut dirs = vec![PathBuf::from("manifest")];
    if let Some(dir) = explicit {
        dirs = vec![dir.to_path_buf()];
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        dirs.push(dir.join("manifest"));
    }
    let dir = dirs
        .iter()
        .find(|d| d.join("attention.yaml").is_file())
        .ok_or_else(|| match explicit {
            Some(dir) => format!("no attention.yaml in {}", dir.display()),
            None => "no manifest/attention.yaml in the working directory or beside the binary"
                .to_string(),
        })?;
    let m = Manifest::load_dir(dir).map_err(|e| e.to_string())?;
    m.entries
        .get(op)
        .cloned()
        .ok_or_else(|| format!("the manifest has no {op} entry"))
}

fn workload(
    entry: &flint_manifest::LoadedEntry,
    label: String,
    values: std::collections::BTreeMap<String, WorkloadValue>,
) -> Result<Workload, String> {
    let env = env_of(entry, &values);
    let int = |k: &str| match env.get(k) {
        Some(Val::Int(i)) => usize::try_from(*i).map_err(|_| format!("{label}: bad `{k}`")),
        _ => Err(format!("{label}: missing `{k}`")),
    };
    let num = |e: &flint_manifest::Expr| e.eval(&env).and_then(Val::as_f64);
    Ok(Workload {
        b: int("B")?,
        h: int("H")?,
        hkv: int("Hkv")?,
        sq: int("Sq")?,
        sk: int("Sk")?,
        d: int("D")?,
        dv: int("Dv")?,
        causal: matches!(env.get("causal"), Some(Val::Bool(true))),
        flops: num(&entry.flops)?,
        bytes: num(&entry.bytes)?,
        label,
    })
}

/// The workloads the manifest in `dir` (default: `./manifest`, else beside the binary) lists
/// for `op` (`attention_fwd` or `attention_bwd`), with the forward's FLOPs and bytes.
///
/// # Errors
/// No manifest found, or an entry or workload it cannot evaluate.
pub fn manifest_workloads(dir: Option<&Path>, op: &str) -> Result<Vec<Workload>, String> {
    let fwd = manifest_entry(dir, "attention_fwd")?;
    let listed = manifest_entry(dir, op)?;
    listed
        .entry
        .workloads
        .iter()
        .map(|w| workload(&fwd, w.label.clone(), w.values.clone()))
        .collect()
}

fn workloads(a: &Args) -> Result<Vec<Workload>, String> {
    // FLOPs and bytes are the forward's; the backward's workloads are the backward entry's.
    if a.workloads {
        let op = if a.bwd {
            "attention_bwd"
        } else {
            "attention_fwd"
        };
        let mut list = manifest_workloads(None, op)?;
        if let Some(only) = &a.workload {
            list.retain(|w| w.label.contains(only.as_str()));
        }
        return Ok(only(a, list));
    }
    let entry = manifest_entry(None, "attention_fwd")?;
    let mut out = Vec::new();
    for &d in &a.dims {
        for causal in [false, true] {
            for &s in &a.seqs {
                let (b, h) = ((a.tokens / s).max(1), (a.hidden / d).max(1));
                let own = [s];
                let keys = if a.seqs_kv.is_empty() {
                    &own[..]
                } else {
                    &a.seqs_kv[..]
                };
                for &sk in keys {
                    let values = [
                        ("B", b),
                        ("H", h),
                        ("Hkv", h),
                        ("Sq", s),
                        ("Sk", sk),
                        ("D", d),
                        ("Dv", d),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), WorkloadValue::Int(v as i64)))
                    .chain([("causal".to_string(), WorkloadValue::Bool(causal))])
                    .collect();
                    let keys = if sk == s {
                        String::new()
                    } else {
                        format!("-k{sk}")
                    };
                    let label = format!("d{d}-s{s}{keys}{}", if causal { "-causal" } else { "" });
                    out.push(workload(&entry, label, values)?);
                }
            }
        }
    }
    Ok(only(a, out))
}

/// `list` less the workloads `--only` leaves out.
fn only(a: &Args, mut list: Vec<Workload>) -> Vec<Workload> {
    if !a.only.is_empty() {
        list.retain(|w| a.only.contains(&w.label));
    }
    list
}

/// The backward op, to key overlays by (its id and version; the limits are not consulted).
fn bwd_op() -> flint_kernels::attention::AttentionBwdOp {
    flint_kernels::attention::AttentionBwdOp::new(flint_kernels::DeviceLimits {
        shared_memory: 0,
        max_units_per_cube: 0,
        max_vector_size: 0,
        plane_size: (0, 0),
        plane_ops: false,
        cmma: false,
        mma_16x8x16: Vec::new(),
        cmma_16x16x16: Vec::new(),
        atomic_add_f32x2: false,
        wgmma: false,
        arrays_across_barriers: false,
    })
}

/// Milliseconds per call of `f` in steady state, and the first run's milliseconds.
///
/// After a first synced run, calls run back to back for [`WARMUP_MS`] (the GPU leaves its
/// idle clocks and the memory pool reaches its working size), then [`TIMING_ROUNDS`] rounds
/// each of at least `iters` calls and at least [`ROUND_MS`], each ended by one sync; the
/// median round's time per call. This is what SDPA's `do_bench` measures (a 25 ms warm-up,
/// then about 100 ms of calls): rounds of a few milliseconds started on an idle GPU read
/// 3-45% slow on sub-millisecond calls (see docs/PERF.md, 2026-11-24). The last
/// [`OUTPUT_RING`] outputs stay alive, as in a model's loop, so that no backend can skip an
/// unused result and the pool reuses freed blocks.
fn time_any<B: Backend, T>(
    device: &B::Device,
    iters: usize,
    mut f: impl FnMut() -> T,
) -> (f64, f64) {
    let started = Instant::now();
    let _ = f();
    let _ = B::sync(device);
    let first = started.elapsed().as_secs_f64() * 1e3;
    let mut ring: Vec<T> = Vec::with_capacity(OUTPUT_RING);
    let mut call = |i: usize| {
        let out = f();
        if ring.len() < OUTPUT_RING {
            ring.push(out);
        } else {
            ring[i % OUTPUT_RING] = out;
        }
    };
    // Warm-up, which also estimates the time per call.
    let started = Instant::now();
    let mut warm = 0;
    while warm < 1 || started.elapsed().as_secs_f64() * 1e3 < WARMUP_MS {
        call(warm);
        warm += 1;
        if warm % 8 == 0 {
            let _ = B::sync(device);
        }
    }
    let _ = B::sync(device);
    let per_call = started.elapsed().as_secs_f64() * 1e3 / warm as f64;
    let n = ((ROUND_MS / per_call).ceil() as usize).clamp(iters.max(1), MAX_ROUND_CALLS);
    let mut ms: Vec<f64> = (0..TIMING_ROUNDS)
        .map(|_| {
            let started = Instant::now();
            for i in 0..n {
                call(i);
            }
            let _ = B::sync(device);
            started.elapsed().as_secs_f64() * 1e3 / n as f64
        })
        .collect();
    drop(ring);
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], first)
}

/// Runs the inputs' pending work (a fusion backend records it lazily) so that a row's first
/// call times flint alone, and prints how long the inputs took when that is noticeable:
/// in a new process, the device's start, NVRTC's loading and the input kernels' compiles.
fn inputs_ready<B: Backend>(device: &B::Device, started: Instant) {
    let _ = B::sync(device);
    let s = started.elapsed().as_secs_f64();
    if s > 0.1 {
        println!(
            "# inputs ready in {s:.2} s (the device's start and the input kernels' compiles on first use)"
        );
    }
}

/// Rounds [`time_any`] takes the median of.
const TIMING_ROUNDS: usize = 3;
/// Milliseconds of back-to-back calls before [`time_any`] times any.
const WARMUP_MS: f64 = 50.0;
/// The shortest round [`time_any`] times, in milliseconds.
const ROUND_MS: f64 = 20.0;
/// The most calls in one round (microsecond calls would otherwise make thousands).
const MAX_ROUND_CALLS: usize = 5000;
/// Outputs [`time_any`] keeps alive at a time.
const OUTPUT_RING: usize = 8;

/// Device memory the pool holds, in GiB, where the backend can tell.
type MemProbe<'a> = &'a dyn Fn(bool) -> Option<f64>;

/// Training timings: forward, forward + backward (a training step through autodiff, with the
/// loss `sum(out ∘ dout)`), and the backward: flint's backward op alone, the step less the
/// forward for the forced configs and for Burn's attention (where its scores fit).
fn run_bwd<B: FlashAttentionBackend>(
    name: &str,
    device: &B::Device,
    a: &Args,
    list: &[Workload],
    mem: MemProbe,
    points: &mut Vec<Point>,
) -> Result<String, String>
where
    burn::backend::Autodiff<B>: FlashAttentionBackend,
{
    type A<B> = burn::backend::Autodiff<B>;
    let mut csv = String::from(
        "impl,label,d,dv,causal,seq_q,seq_k,batch,heads,kv_heads,dtype,fwd_ms,fwdbwd_ms,bwd_ms,bwd_tflops,reserved_gib\n",
    );
    println!(
        "# flint attention_bench --bwd on {name}, dtype {:?}",
        a.dtype
    );
    if a.overhead {
        // A training loop's forward: q tracked (each call a new graph leaf), then the same
        // through the autodiff backend with nothing tracked.
        let tracked = autodiff_overhead::<B>(device, a.dtype, |q, k, v| {
            flint::flash_attention(q.require_grad(), k, v)
        });
        println!(
            "# flash_attention under autodiff, q tracked, warm cache, {OVERHEAD_CALLS} calls at {OVERHEAD_SHAPE:?}: {tracked}"
        );
        let untracked = autodiff_overhead::<B>(device, a.dtype, flint::flash_attention);
        println!("# the same with nothing tracked: {untracked}");
        // A training step's attention: the forward with q tracked, then the backward to dq.
        let step = || {
            autodiff_overhead::<B>(device, a.dtype, |q, k, v| {
                let q = q.require_grad();
                let grads = flint::flash_attention(q.clone(), k, v).sum().backward();
                let dq = q.grad(&grads).expect("q is tracked");
                Tensor::from_inner(dq)
            })
        };
        println!(
            "# a step: forward (q tracked), sum, backward to dq, warm cache, {OVERHEAD_CALLS} steps at {OVERHEAD_SHAPE:?}: {}",
            step()
        );
        println!(
            "# the same through the selector's tiers (no warm shortcut): {}",
            through_the_tiers(step)
        );
    }
    println!(
        "name d causal seq batch heads fwd_ms fwd_tflops bwd_ms bwd_tflops fwdbwd_ms reserved_gib label"
    );
    let mut failed: Vec<String> = Vec::new();
    for w in list {
        let inputs_started = Instant::now();
        let rand = |shape: [usize; 4]| {
            Tensor::<A<B>, 4>::from_inner(
                Tensor::<B, 4>::random(shape, Distribution::Normal(0.0, 1.0), device).cast(a.dtype),
            )
            .require_grad()
        };
        let q = rand([w.b, w.h, w.sq, w.d]);
        let k = rand([w.b, w.hkv, w.sk, w.d]);
        let v = rand([w.b, w.hkv, w.sk, w.dv]);
        let dout = Tensor::<A<B>, 4>::from_inner(
            Tensor::<B, 4>::random(
                [w.b, w.h, w.sq, w.dv],
                Distribution::Normal(0.0, 1.0),
                device,
            )
            .cast(a.dtype),
        );
        inputs_ready::<B>(device, inputs_started);
        // `bwd`: the backward alone where it can be timed so (flint's op on a saved output and
        // LSE, as SDPA's reference times `autograd.grad`), else the training step less the
        // forward (which then also counts the loss's own kernels).
        let mut row = |imp: &str, fwd: f64, fb: f64, bwd: Option<f64>, reserved: Option<f64>| {
            // A step no slower than its forward (timing spread on a slow decomposed forward)
            // has no measurable backward: NaN, and no point on the chart.
            let bwd = bwd.unwrap_or(fb - fwd);
            let bwd = if bwd > 0.0 { bwd } else { f64::NAN };
            let (ftf, btf) = (w.flops / fwd / 1e9, 2.5 * w.flops / bwd / 1e9);
            let gib = reserved.map_or("-".to_string(), |g| format!("{g:.2}"));
            for (dir, t) in [("forward", ftf), ("backward", btf)] {
                if t.is_finite() {
                    points.push(Point {
                        series: imp.to_string(),
                        panel: panel(dir, w.d, w.causal),
                        seq: w.sq,
                        tflops: t,
                    });
                }
            }
            println!(
                "{imp} {} {} {} {} {} {fwd:.4} {ftf:.1} {bwd:.4} {btf:.1} {fb:.4} {gib} {}",
                w.d, w.causal as u8, w.sq, w.b, w.h, w.label
            );
            let _ = writeln!(
                csv,
                "{imp},{},{},{},{},{},{},{},{},{},{:?},{fwd:.5},{fb:.5},{bwd:.5},{btf:.2},{gib}",
                w.label, w.d, w.dv, w.causal as u8, w.sq, w.sk, w.b, w.h, w.hkv, a.dtype
            );
        };
        let opts = AttentionOptions::new().with_causal(w.causal);
        let flint_fwd =
            |q: Tensor<A<B>, 4>, k, v| flint::flash_attention_with(q, k, v, opts.clone());
        let step = || {
            let out = flint_fwd(q.clone(), k.clone(), v.clone());
            let grads = (out * dout.clone()).sum().backward();
            q.grad(&grads)
        };
        // A training step first, as a model's first step: it tunes the forward and the
        // backward. The pool is cleaned after it, so that the reservation leaves out the
        // tuner's scratch tensors.
        let started = Instant::now();
        let _ = step();
        let _ = B::sync(device);
        let first = started.elapsed().as_secs_f64();
        println!("# flint first fwd+bwd call {first:.2} s");
        mem(true);
        let (fb, _) = time_any::<B, _>(device, a.iters, step);
        let reserved = mem(false);
        let (fwd, _) = time_any::<B, _>(device, a.iters, || {
            flint_fwd(q.clone().detach(), k.clone().detach(), v.clone().detach())
        });
        let inner = [&q, &k, &v, &dout].map(|t| t.clone().inner());
        let alone = bwd_alone::<B>(device, a, w, inner.clone(), None);
        row("flint", fwd, fb, alone, reserved);
        if a.check
            && let Err(why) = check_grads_against_burn::<B>([&q, &k, &v, &dout], w, "flint")
        {
            println!("# CHECK FAILED: {why}");
            failed.push(why);
        }
        if a.bwd_configs {
            let mma = |bq, bkv| AttentionBwdConfig::new(Variant::Mma, bq, bkv);
            let tilings = [(64, 64), (32, 64), (64, 32), (32, 32)].map(|(bq, bkv)| mma(bq, bkv));
            let wide = [(64, 64), (64, 32), (32, 32)].map(|(bq, bkv)| mma(bq, bkv).with_planes(8));
            let fused = [
                mma(64, 64),
                mma(32, 64),
                mma(64, 64).with_planes(8),
                mma(32, 32).with_planes(8),
            ]
            .map(AttentionBwdConfig::with_fused_dq);
            let grid = [
                mma(64, 64).with_planes(8).with_fused_dq(),
                mma(128, 64).with_planes(8).with_fused_dq(),
                mma(64, 32).with_planes(8),
                mma(32, 32).with_planes(8).with_fused_dq(),
            ]
            .map(AttentionBwdConfig::with_grid);
            // The warpgroup-MMA backward (sm_90; refused, and said so, elsewhere), and with dQ
            // fused (D = 128).
            let wgmma = [
                AttentionBwdConfig::new(Variant::Wgmma, 128, 128),
                AttentionBwdConfig::new(Variant::Wgmma, 128, 128).with_fused_dq(),
            ];
            // The portable tilings, with the accumulators in shared memory and in registers
            // (CUDA and ROCm; refused, and said so, elsewhere).
            let portable = [(128, 32), (64, 64), (64, 32), (32, 64), (32, 32)]
                .map(|(bq, bkv)| AttentionBwdConfig::new(Variant::Portable, bq, bkv));
            let portable_regs = portable.map(AttentionBwdConfig::with_registers);
            // And with dQ fused into the dK/dV kernel (sm90+).
            let portable_fused = portable_regs.map(AttentionBwdConfig::with_fused_dq);
            // And sliced (`s`: operands staged 32 columns at a time, for small shared
            // memories).
            let portable_sliced = portable.map(AttentionBwdConfig::with_slices);
            // The cooperative-matrix backward: the op's own tilings (`cmma`).
            let cmma = flint::kernels::attention::AttentionBwdOp::cmma_tilings();
            for config in tilings
                .into_iter()
                .chain(wide)
                .chain(fused)
                .chain(grid)
                .chain(wgmma)
                .chain(portable)
                .chain(portable_regs)
                .chain(portable_fused)
                .chain(portable_sliced)
                .chain(cmma)
            {
                let (bq, bkv) = (config.block_q, config.block_kv);
                let planes = if config.planes == 4 {
                    String::new()
                } else {
                    format!("-p{}", config.planes)
                };
                let grid = if config.grid { "-grid" } else { "" };
                let name = if config.variant == Variant::Portable {
                    let regs = match (config.registers, config.sliced) {
                        (_, true) => "s",
                        (true, false) => "r",
                        (false, false) => "",
                    };
                    let fused = if config.fused_dq { "-fused" } else { "" };
                    format!("flint-portable{bq}x{bkv}{regs}{fused}")
                } else if config.variant == Variant::Wgmma {
                    let fused = if config.fused_dq { "-fused" } else { "" };
                    format!("flint-wgmma{bq}x{bkv}{fused}")
                } else if config.variant == Variant::Cmma {
                    format!("flint-cmma{bq}x{bkv}{planes}{grid}")
                } else if config.fused_dq {
                    format!("flint-mma{bq}-fused{planes}{grid}")
                } else {
                    format!("flint-mma{bq}x{bkv}{planes}{grid}")
                };
                if a.bwd_filter
                    .as_ref()
                    .is_some_and(|f| !name.contains(f.as_str()))
                {
                    continue;
                }
                // A scoped overlay the op refuses falls through to the selector: say so
                // rather than time the selector's config under this name.
                if let Err(why) = B::flash_attention_bwd_config(
                    &problem_of(a, w),
                    a.dtype,
                    false,
                    device,
                    Some(config),
                ) {
                    println!("# {name} {}: refused: {why}", w.label);
                    continue;
                }
                let _forced = flint::overlay(Overlay::new().set(&bwd_op(), config).strict());
                let (fb, _) = time_any::<B, _>(device, a.iters, || {
                    let out = flint_fwd(q.clone(), k.clone(), v.clone());
                    let grads = (out * dout.clone()).sum().backward();
                    q.grad(&grads)
                });
                let alone = bwd_alone::<B>(device, a, w, inner.clone(), Some(config));
                row(&name, fwd, fb, alone, None);
                if a.check
                    && let Err(why) = check_grads_against_burn::<B>([&q, &k, &v, &dout], w, &name)
                {
                    println!("# CHECK FAILED: {why}");
                    failed.push(why);
                }
            }
        }
        let scores = (w.b * w.h * w.sq * w.sk) as f64 * 4.0;
        if a.burn && scores <= BURN_SCORES_LIMIT / 2.0 {
            let burn_fwd = |q, k: Tensor<A<B>, 4>, v: Tensor<A<B>, 4>| {
                burn_attention(
                    q,
                    expand_kv(k, w, w.d),
                    expand_kv(v, w, w.dv),
                    None,
                    None,
                    AttentionModuleOptions {
                        scale: None,
                        softcap: None,
                        is_causal: w.causal,
                    },
                )
            };
            let (fwd, _) = time_any::<B, _>(device, a.iters, || {
                burn_fwd(q.clone().detach(), k.clone().detach(), v.clone().detach())
            });
            mem(true);
            let (fb, _) = time_any::<B, _>(device, a.iters, || {
                let out = burn_fwd(q.clone(), k.clone(), v.clone());
                let grads = (out * dout.clone()).sum().backward();
                q.grad(&grads)
            });
            row("burn", fwd, fb, None, mem(false));
        } else if a.burn {
            println!(
                "# burn skipped for {}: its scores alone need {:.1} GiB (x2 with their gradient)",
                w.label,
                scores / (1u64 << 30) as f64
            );
        }
    }
    if failed.is_empty() {
        Ok(csv)
    } else {
        // Every row ran; the checks that failed fail the run.
        Err(failed.join("; "))
    }
}

/// The dtype as flint's problems and signatures name it.
fn dtype_label(dtype: DType) -> &'static str {
    match dtype {
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        _ => "f32",
    }
}

/// The problem flint validates for workload `w` without options but its causal mask.
fn problem_of(a: &Args, w: &Workload) -> AttentionProblem {
    AttentionProblem {
        batch: w.b,
        heads: w.h,
        kv_heads: w.hkv,
        seq_q: w.sq,
        seq_kv: w.sk,
        head_dim: w.d,
        val_dim: w.dv,
        dtype: dtype_label(a.dtype),
        scale: 1.0 / (w.d as f64).sqrt(),
        softcap: None,
        window: (None, w.causal.then_some(0)),
        has_bias: false,
        dropout: None,
    }
}

/// Milliseconds per call of flint's backward op alone on `B`, outside autodiff: the forward's
/// output and LSE made once, then the backward on them with `config` (the selector's choice
/// without one). SDPA's reference times the same (`torch.autograd.grad` of the output). `None`,
/// said on stdout, when a call fails.
fn bwd_alone<B: FlashAttentionBackend>(
    device: &B::Device,
    a: &Args,
    w: &Workload,
    [q, k, v, dout]: [Tensor<B, 4>; 4],
    config: Option<AttentionBwdConfig>,
) -> Option<f64> {
    let problem = problem_of(a, w);
    if let Ok(Some(c)) = B::flash_attention_bwd_config(&problem, a.dtype, false, device, config) {
        println!("# {}: the backward config {c:?}", w.label);
    }
    let prim = |t: &Tensor<B, 4>| t.clone().into_primitive().tensor();
    let (out, lse) =
        match B::flash_attention_fwd(prim(&q), prim(&k), prim(&v), None, &problem, None) {
            Ok(saved) => saved,
            Err(why) => {
                println!("# {}: no forward for the backward alone: {why}", w.label);
                return None;
            }
        };
    let run = || {
        let inputs = AttentionBwdInputs {
            q: prim(&q),
            k: prim(&k),
            v: prim(&v),
            out: out.clone(),
            lse: lse.clone(),
            dout: prim(&dout),
            bias: None,
        };
        B::flash_attention_bwd(inputs, &problem, false, config)
    };
    if let Err(why) = run() {
        println!("# {}: the backward alone failed: {why}", w.label);
        return None;
    }
    Some(time_any::<B, _>(device, a.iters, || run().ok()).0)
}

/// [`time_any`] for calls that return a tensor: milliseconds per call, and the first run's
/// milliseconds (which compiles and, for flint on a cache miss, tunes).
fn time<B: Backend>(
    device: &B::Device,
    iters: usize,
    f: impl FnMut() -> Tensor<B, 4>,
) -> (f64, f64) {
    time_any::<B, _>(device, iters, f)
}

/// Back-to-back calls timed by `--overhead`.
const OVERHEAD_CALLS: usize = 2000;
/// The tensor-core forward tilings `--fwd-configs` times (those the op refuses for a shape,
/// e.g. for register pressure, are reported as refused).
const FWD_TILINGS: [(u32, u32); 6] = [
    (64, 64),
    (128, 64),
    (64, 32),
    (128, 32),
    (64, 128),
    (128, 128),
];

/// Key-tile widths and split-K part counts `--split-configs` times with one-plane (16-row)
/// query blocks, for workloads of at most 16 queries.
const SPLIT_TILES: [u32; 3] = [32, 64, 128];
/// See [`SPLIT_TILES`].
const SPLIT_PARTS: [u32; 6] = [4, 8, 16, 32, 64, 128];
/// The portable kernel's tilings `--portable-configs` times (query rows, keys per tile); those
/// the device's shared memory cannot hold are reported as refused.
const PORTABLE_TILINGS: [(u32, u32); 8] = [
    (16, 16),
    (32, 32),
    (64, 16),
    (64, 32),
    (32, 64),
    (64, 64),
    (128, 32),
    (128, 64),
];

/// Prints each autotuned bucket's wall time, its candidates' compiles included, after each
/// candidate's timing or why it was skipped (what the choice was made on). The hook skips
/// memory hits, so that warm calls keep their shortcut past the selector's tiers.
pub fn install_tuning_hook() {
    if let Ok(selector) = flint::Selector::global() {
        selector.set_hook_skipping_memory_hits(Some(tuning_hook()));
    }
}

fn tuning_hook() -> flint::tune::Hook {
    std::sync::Arc::new(|e: &flint::tune::Event<'_>| {
        use flint::tune::EventKind;
        match &e.kind {
            EventKind::TuneFinished {
                config, elapsed, ..
            } => println!(
                "# tuned {} in {:.2} s -> {config}",
                e.op,
                elapsed.as_secs_f64()
            ),
            // The selector's own wording of each candidate's timing or failure.
            EventKind::CandidateTimed { .. } | EventKind::CandidateFailed { .. } => {
                println!("#   {e}")
            }
            _ => {}
        }
    })
}

/// Runs `measure` with every call taken through the selector's tiers (the same hook, told of
/// memory hits, which takes calls off their warm shortcut), as before the shortcut existed.
fn through_the_tiers<T>(measure: impl FnOnce() -> T) -> T {
    let Ok(selector) = flint::Selector::global() else {
        return measure();
    };
    selector.set_hook(Some(tuning_hook()));
    let out = measure();
    selector.set_hook_skipping_memory_hits(Some(tuning_hook()));
    out
}

/// The roofline bandwidth where neither `--peak-gbps` nor the device gives one: an H100's
/// HBM3, in GB/s.
const DEFAULT_PEAK_GBPS: f64 = 3350.0;

/// Outputs `--overhead` keeps alive at a time.
const OVERHEAD_RING: usize = 64;
/// A shape whose kernel takes a few microseconds, so the host side dominates.
const OVERHEAD_SHAPE: [usize; 4] = [1, 4, 64, 64];

/// Host cost of one call of `op` (flash attention, on a warm cache), in microseconds: the
/// time until `OVERHEAD_CALLS` back-to-back calls have returned (queued), until the device
/// has finished them, and the median cost per call of bursts of `OVERHEAD_BURST` calls that
/// start on an idle device. Back to back, the slowest stage (the host, CubeCL's device thread
/// or the GPU) sets the pace; a burst is too short to fill the queues between them, so it
/// times the host's own work.
fn call_overhead<B: FlashAttentionBackend, O>(
    device: &B::Device,
    dtype: DType,
    op: impl Fn(Tensor<B, 4>, Tensor<B, 4>, Tensor<B, 4>) -> O,
) -> Overhead {
    let rand = || overhead_input::<B>(device, dtype);
    overhead_loop(
        || {
            let _ = B::sync(device);
        },
        [rand(), rand(), rand()],
        op,
    )
}

/// [`call_overhead`] of `op` under `Autodiff<B>`, on untracked inputs (`op` may track them).
fn autodiff_overhead<B: FlashAttentionBackend>(
    device: &B::Device,
    dtype: DType,
    op: impl Fn(
        Tensor<burn::backend::Autodiff<B>, 4>,
        Tensor<burn::backend::Autodiff<B>, 4>,
        Tensor<burn::backend::Autodiff<B>, 4>,
    ) -> Tensor<burn::backend::Autodiff<B>, 4>,
) -> Overhead
where
    burn::backend::Autodiff<B>: FlashAttentionBackend,
{
    let rand = || Tensor::from_inner(overhead_input::<B>(device, dtype));
    overhead_loop(
        || {
            let _ = B::sync(device);
        },
        [rand(), rand(), rand()],
        op,
    )
}

/// One random input of [`OVERHEAD_SHAPE`].
fn overhead_input<B: Backend>(device: &B::Device, dtype: DType) -> Tensor<B, 4> {
    Tensor::<B, 4>::random(OVERHEAD_SHAPE, Distribution::Normal(0.0, 1.0), device).cast(dtype)
}

/// The loop of [`call_overhead`], with `sync` waiting for the device.
fn overhead_loop<T: Backend, O>(
    sync: impl Fn(),
    [q, k, v]: [Tensor<T, 4>; 3],
    op: impl Fn(Tensor<T, 4>, Tensor<T, 4>, Tensor<T, 4>) -> O,
) -> Overhead {
    let call = || op(q.clone(), k.clone(), v.clone());
    for _ in 0..20 {
        drop(call());
    }
    sync();
    // The last outputs are kept so that no backend can skip an unused result, and only the
    // last few, so that the memory pool reuses freed blocks as in a model's loop (keeping all
    // 2000 would time the pool's growth).
    let mut outs: Vec<O> = Vec::with_capacity(OVERHEAD_RING);
    let started = Instant::now();
    for i in 0..OVERHEAD_CALLS {
        let out = call();
        if outs.len() < OVERHEAD_RING {
            outs.push(out);
        } else {
            outs[i % OVERHEAD_RING] = out;
        }
    }
    let queued = started.elapsed().as_secs_f64();
    sync();
    let done = started.elapsed().as_secs_f64();
    let mut bursts: Vec<f64> = (0..OVERHEAD_CALLS / OVERHEAD_BURST)
        .map(|_| {
            sync();
            let started = Instant::now();
            let burst: Vec<O> = (0..OVERHEAD_BURST).map(|_| call()).collect();
            let elapsed = started.elapsed().as_secs_f64();
            drop(burst);
            elapsed
        })
        .collect();
    sync();
    drop(outs);
    bursts.sort_by(f64::total_cmp);
    let per_call = |s: f64, n: usize| s * 1e6 / n as f64;
    Overhead {
        queued: per_call(queued, OVERHEAD_CALLS),
        done: per_call(done, OVERHEAD_CALLS),
        burst: per_call(bursts[bursts.len() / 2], OVERHEAD_BURST),
    }
}

/// What [`call_overhead`] measures, in microseconds per call.
struct Overhead {
    queued: f64,
    done: f64,
    burst: f64,
}

impl std::fmt::Display for Overhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "back to back {:.1} us/call until queued, {:.1} until the device is done; \
             host {:.1} us/call (median of bursts of {OVERHEAD_BURST} on an idle device)",
            self.queued, self.done, self.burst
        )
    }
}

/// Calls per burst of [`call_overhead`].
const OVERHEAD_BURST: usize = 8;

/// Burn's attention materialises the `[B, H, Sq, Sk]` scores; past this it is skipped.
const BURN_SCORES_LIMIT: f64 = 16.0 * (1u64 << 30) as f64;
/// The largest f32 score matrix `--check` asks Burn's attention for.
const CHECK_SCORES_LIMIT: f64 = (1u64 << 30) as f64;

fn run<B: FlashAttentionBackend>(
    name: &str,
    device: &B::Device,
    a: &Args,
    list: &[Workload],
    points: &mut Vec<Point>,
) -> Result<String, String> {
    let mut csv = String::from(
        "impl,label,d,dv,causal,seq_q,seq_k,batch,heads,kv_heads,dtype,ms,tflops,roofline_pct,first_call_ms\n",
    );
    println!("# flint attention_bench on {name}, dtype {:?}", a.dtype);
    println!("name d causal seq batch heads fwd_ms fwd_tflops roofline_pct label");
    if a.overhead {
        let flint =
            call_overhead::<B, _>(device, a.dtype, |q, k, v| flint::flash_attention(q, k, v));
        println!(
            "# flash_attention, warm cache, {OVERHEAD_CALLS} calls at {OVERHEAD_SHAPE:?}: {flint}"
        );
        let tiers = through_the_tiers(|| {
            call_overhead::<B, _>(device, a.dtype, |q, k, v| flint::flash_attention(q, k, v))
        });
        println!("# the same through the selector's tiers (no warm shortcut): {tiers}");
        // The same loop over one Burn op of the same backend: its own dispatch cost.
        let burn = call_overhead::<B, _>(device, a.dtype, |q, k, _| q * k);
        println!("# the same for Burn's elementwise q * k: {burn}");
    }
    for w in list {
        let inputs_started = Instant::now();
        let rand = |shape: [usize; 4]| {
            Tensor::<B, 4>::random(shape, Distribution::Normal(0.0, 1.0), device).cast(a.dtype)
        };
        let q = rand([w.b, w.h, w.sq, w.d]);
        let k = rand([w.b, w.hkv, w.sk, w.d]);
        let v = rand([w.b, w.hkv, w.sk, w.dv]);
        inputs_ready::<B>(device, inputs_started);
        let roofline_ms = (w.flops / (a.peak_tflops * 1e12))
            .max(w.bytes / (a.peak_gbps.unwrap_or(DEFAULT_PEAK_GBPS) * 1e9))
            * 1e3;
        let mut row = |imp: &str, (ms, first): (f64, f64)| {
            let tflops = w.flops / ms / 1e9;
            let pct = 100.0 * roofline_ms / ms;
            points.push(Point {
                series: imp.to_string(),
                panel: panel("forward", w.d, w.causal),
                seq: w.sq,
                tflops,
            });
            println!(
                "{imp} {} {} {} {} {} {ms:.4} {tflops:.1} {pct:.1} {} first_call_s={:.2}",
                w.d,
                w.causal as u8,
                w.sq,
                w.b,
                w.h,
                w.label,
                first / 1e3
            );
            let _ = writeln!(
                csv,
                "{imp},{},{},{},{},{},{},{},{},{},{:?},{ms:.5},{tflops:.2},{pct:.2},{first:.1}",
                w.label, w.d, w.dv, w.causal as u8, w.sq, w.sk, w.b, w.h, w.hkv, a.dtype
            );
        };
        let timing = time::<B>(device, a.iters, || {
            flint::flash_attention_with(
                q.clone(),
                k.clone(),
                v.clone(),
                AttentionOptions::new().with_causal(w.causal),
            )
        });
        row("flint", timing);
        if a.overhead {
            // The workload's own pace: host (queued), host and device (done), host alone
            // (bursts). A decode's few microseconds of kernels can be set by the host.
            let causal = w.causal;
            let pace = overhead_loop(
                || {
                    let _ = B::sync(device);
                },
                [q.clone(), k.clone(), v.clone()],
                |q, k, v| {
                    flint::flash_attention_with(
                        q,
                        k,
                        v,
                        AttentionOptions::new().with_causal(causal),
                    )
                },
            );
            println!("# {}: {pace}", w.label);
        }
        // Which config the selector runs (from its memory tier now): tuned picks can differ
        // between processes, and a row is read against its pick.
        match B::flash_attention_fwd_config(&problem_of(a, w), a.dtype, device, None) {
            Ok(Some(c)) => println!("# {}: the selector's forward config {c:?}", w.label),
            Ok(None) => {}
            Err(why) => println!("# {}: no forward config: {why}", w.label),
        }
        if a.check {
            check_against_burn::<B>(&q, &k, &v, w)?;
        }
        let mut forced: Vec<(String, AttentionFwdConfig)> = Vec::new();
        if a.fwd_configs {
            for (bq, bkv) in FWD_TILINGS {
                let config = AttentionFwdConfig::new(Variant::Mma, bq, bkv);
                forced.push((format!("flint-mma{bq}x{bkv}"), config));
            }
            // Warpgroup MMA (sm_90 only; refused, and said so, elsewhere).
            // 64-row tilings run one consumer warpgroup, two cubes an SM.
            for (bq, bkv) in [
                (192, 64),
                (128, 128),
                (128, 64),
                (192, 128),
                (64, 64),
                (64, 128),
            ] {
                let config = AttentionFwdConfig::new(Variant::Wgmma, bq, bkv);
                forced.push((format!("flint-wgmma{bq}x{bkv}"), config));
            }
        }
        if a.split_configs && w.sq <= 16 {
            for bkv in SPLIT_TILES {
                for splits in SPLIT_PARTS {
                    let config = AttentionFwdConfig {
                        splits,
                        ..AttentionFwdConfig::new(Variant::Mma, 16, bkv)
                    };
                    forced.push((format!("flint-mma16x{bkv}-s{splits}"), config));
                }
            }
        }
        if a.portable_configs {
            for (bq, bkv) in PORTABLE_TILINGS {
                let config = AttentionFwdConfig::new(Variant::Portable, bq, bkv);
                forced.push((format!("flint-portable{bq}x{bkv}"), config));
                // The accumulator in registers (CUDA and ROCm; refused, and said so,
                // elsewhere).
                forced.push((
                    format!("flint-portable{bq}x{bkv}r"),
                    config.with_registers(),
                ));
                // Sliced: Q and K staged 32 columns at a time, V a chunk of keys at a time.
                forced.push((format!("flint-portable{bq}x{bkv}s"), config.with_slices()));
            }
        }
        if let Some(keep) = &a.fwd_filter {
            forced.retain(|(name, _)| name.contains(keep.as_str()));
        }
        for (name, config) in forced {
            let options = AttentionOptions::new().with_causal(w.causal).config(config);
            let first =
                flint::try_flash_attention_with(q.clone(), k.clone(), v.clone(), options.clone());
            if let Err(why) = first {
                println!("# {name} {}: refused: {why}", w.label);
                continue;
            }
            let timing = time::<B>(device, a.iters, || {
                flint::flash_attention_with(q.clone(), k.clone(), v.clone(), options.clone())
            });
            row(&name, timing);
        }
        let scores = (w.b * w.h * w.sq * w.sk) as f64 * 4.0;
        if a.burn && scores <= BURN_SCORES_LIMIT {
            let (k, v) = (expand_kv(k.clone(), w, w.d), expand_kv(v.clone(), w, w.dv));
            let timing = time::<B>(device, a.iters, || {
                burn_attention(
                    q.clone(),
                    k.clone(),
                    v.clone(),
                    None,
                    None,
                    AttentionModuleOptions {
                        scale: None,
                        softcap: None,
                        is_causal: w.causal,
                    },
                )
            });
            row("burn", timing);
        } else if a.burn {
            println!(
                "# burn skipped for {}: its scores alone need {:.1} GiB",
                w.label,
                scores / (1u64 << 30) as f64
            );
        }
    }
    Ok(csv)
}

/// `t` (k or v of `w`, `[B, Hkv, Sk, dd]`) repeated for every query head of its group: Burn's
/// attention has no GQA.
fn expand_kv<B: Backend>(t: Tensor<B, 4>, w: &Workload, dd: usize) -> Tensor<B, 4> {
    t.unsqueeze_dim::<5>(2)
        .expand([w.b, w.hkv, w.h / w.hkv, w.sk, dd])
        .reshape([w.b, w.h, w.sk, dd])
}

/// Flint's forward against Burn's attention on f32 copies of the inputs, on the same device.
///
/// # Errors
/// A relative L2 error above 2% (bf16/f16 inputs round P and the output; the kernels land
/// near 1e-3).
fn check_against_burn<B: FlashAttentionBackend>(
    q: &Tensor<B, 4>,
    k: &Tensor<B, 4>,
    v: &Tensor<B, 4>,
    w: &Workload,
) -> Result<(), String> {
    // Burn's attention materialises the f32 scores in one buffer, and wgpu refuses buffers
    // past a device limit (2 GiB and more were refused on an H100 through Vulkan).
    let scores = (w.b * w.h * w.sq * w.sk * 4) as f64;
    if scores > CHECK_SCORES_LIMIT {
        println!(
            "# check {}: skipped (Burn's f32 scores would need {:.1} GiB)",
            w.label,
            scores / (1u64 << 30) as f64
        );
        return Ok(());
    }
    let got = flint::flash_attention_with(
        q.clone(),
        k.clone(),
        v.clone(),
        AttentionOptions::new().with_causal(w.causal),
    )
    .cast(DType::F32);
    let expand = |t: &Tensor<B, 4>, dd| expand_kv(t.clone().cast(DType::F32), w, dd);
    let want = burn_attention(
        q.clone().cast(DType::F32),
        expand(k, w.d),
        expand(v, w.dv),
        None,
        None,
        AttentionModuleOptions {
            scale: None,
            softcap: None,
            is_causal: w.causal,
        },
    );
    let sq = |t: Tensor<B, 4>| t.powi_scalar(2).sum().into_scalar().elem::<f64>();
    let rel = (sq(got - want.clone()) / sq(want)).sqrt();
    println!(
        "# check {}: relative L2 error against Burn's attention in f32: {rel:.2e}",
        w.label
    );
    if rel.is_nan() || rel > 2e-2 {
        return Err(format!(
            "{}: relative error {rel:.2e} exceeds 2e-2",
            w.label
        ));
    }
    Ok(())
}

/// Flint's gradients (through `Autodiff`, the selector's or a forced backward config)
/// against those of Burn's attention under autodiff on f32 copies of the inputs, on the same
/// device: the backward's check for backends the test suite cannot reach.
///
/// # Errors
/// A relative L2 error above 3% in dQ, dK or dV (half-precision inputs round P, dS and the
/// gradients; the tests' tolerance is per element).
fn check_grads_against_burn<B: FlashAttentionBackend>(
    [q, k, v, dout]: [&Tensor<burn::backend::Autodiff<B>, 4>; 4],
    w: &Workload,
    name: &str,
) -> Result<(), String> {
    type A<B> = burn::backend::Autodiff<B>;
    // Burn's decomposed backward keeps several score-sized f32 buffers.
    let scores = (w.b * w.h * w.sq * w.sk * 4) as f64;
    if scores > CHECK_SCORES_LIMIT / 4.0 {
        println!(
            "# check {name} {} gradients: skipped (too large for Burn's)",
            w.label
        );
        return Ok(());
    }
    let fresh = |t: &Tensor<A<B>, 4>, dtype| {
        Tensor::<A<B>, 4>::from_inner(t.clone().inner().cast(dtype)).require_grad()
    };
    let grads =
        |q: &Tensor<A<B>, 4>, k: &Tensor<A<B>, 4>, v: &Tensor<A<B>, 4>, out: Tensor<A<B>, 4>| {
            // The loss in f32 on both sides: only the attention differs.
            let dout = Tensor::<A<B>, 4>::from_inner(dout.clone().inner().cast(DType::F32));
            let g = (out.cast(DType::F32) * dout).sum().backward();
            [q.grad(&g), k.grad(&g), v.grad(&g)].map(|t| t.map(|t| t.cast(DType::F32)))
        };
    let dtype = q.dtype();
    let (q1, k1, v1) = (fresh(q, dtype), fresh(k, dtype), fresh(v, dtype));
    let out = flint::flash_attention_with(
        q1.clone(),
        k1.clone(),
        v1.clone(),
        AttentionOptions::new().with_causal(w.causal),
    );
    let got = grads(&q1, &k1, &v1, out);
    let (q2, k2, v2) = (
        fresh(q, DType::F32),
        fresh(k, DType::F32),
        fresh(v, DType::F32),
    );
    let out = burn_attention(
        q2.clone(),
        expand_kv(k2.clone(), w, w.d),
        expand_kv(v2.clone(), w, w.dv),
        None,
        None,
        AttentionModuleOptions {
            scale: None,
            softcap: None,
            is_causal: w.causal,
        },
    );
    let want = grads(&q2, &k2, &v2, out);
    let sq = |t: Tensor<B, 4>| t.powi_scalar(2).sum().into_scalar().elem::<f64>();
    let mut worst = 0.0f64;
    for ((grad, got), want) in ["dq", "dk", "dv"].iter().zip(got).zip(want) {
        let (Some(got), Some(want)) = (got, want) else {
            return Err(format!("{name} {}: no {grad}", w.label));
        };
        let rel = (sq(got - want.clone()) / sq(want)).sqrt();
        println!(
            "# check {name} {}: {grad} relative L2 error against Burn's attention in f32: {rel:.2e}",
            w.label
        );
        worst = if rel.is_nan() {
            f64::NAN
        } else {
            worst.max(rel)
        };
    }
    if worst.is_nan() || worst > 3e-2 {
        return Err(format!(
            "{name} {}: gradient error {worst:.2e} exceeds 3e-2",
            w.label
        ));
    }
    Ok(())
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(feature = "cuda")]
fn run_cuda(args: &Args, list: &[Workload], points: &mut Vec<Point>) -> Result<String, String> {
    let device: cubecl::cuda::CudaDevice = Default::default();
    // The pool's reservation after a run approximates its peak: cleaned before each run.
    let mem = |reset: bool| {
        use cubecl::Runtime;
        let client = cubecl::cuda::CudaRuntime::client(&device);
        if reset {
            client.memory_cleanup();
        }
        let usage = client.memory_usage().ok()?;
        Some(usage.bytes_reserved as f64 / (1u64 << 30) as f64)
    };
    let mut args = args.clone();
    if args.peak_gbps.is_none() {
        args.peak_gbps = flint_kernels::devices::cuda_memory_bandwidth_gbps(device.index);
    }
    println!(
        "# roofline: {} TFLOP/s, {:.0} GB/s",
        args.peak_tflops,
        args.peak_gbps.unwrap_or(DEFAULT_PEAK_GBPS)
    );
    let args = &args;
    if args.overhead {
        direct_overhead::<burn_cubecl::CubeBackend<cubecl::cuda::CudaRuntime, f32, i32, u8>>(
            &device, args,
        );
        launch_overhead::<cubecl::cuda::CudaRuntime, u8>(&device, args);
    }
    if args.overhead && !args.no_fusion && !args.bwd {
        fusion_overhead::<burn_cubecl::CubeBackend<cubecl::cuda::CudaRuntime, f32, i32, u8>>(
            &device, args,
        );
    }
    if args.bwd {
        run_bwd::<burn::backend::Cuda>("cuda", &device, args, list, &mem, points)
    } else if args.no_fusion {
        type Direct = burn_cubecl::CubeBackend<cubecl::cuda::CudaRuntime, f32, i32, u8>;
        run::<Direct>("cuda (CubeBackend, no fusion)", &device, args, list, points)
    } else {
        run::<burn::backend::Cuda>("cuda", &device, args, list, points)
    }
}

#[cfg(not(feature = "cuda"))]
fn run_cuda(_: &Args, _: &[Workload], _: &mut Vec<Point>) -> Result<String, String> {
    Err("this build has no CUDA backend (build with `--features cuda`)".into())
}

#[cfg(feature = "wgpu")]
fn run_wgpu(args: &Args, list: &[Workload], points: &mut Vec<Point>) -> Result<String, String> {
    let device = Default::default();
    if args.overhead {
        direct_overhead::<burn_cubecl::CubeBackend<cubecl::wgpu::WgpuRuntime, f32, i32, u32>>(
            &device, args,
        );
        launch_overhead::<cubecl::wgpu::WgpuRuntime, u32>(&device, args);
    }
    if args.overhead && !args.bwd {
        fusion_overhead::<burn_cubecl::CubeBackend<cubecl::wgpu::WgpuRuntime, f32, i32, u32>>(
            &device, args,
        );
    }
    if args.bwd {
        run_bwd::<burn::backend::Wgpu>("wgpu", &device, args, list, &|_| None, points)
    } else {
        run::<burn::backend::Wgpu>("wgpu", &device, args, list, points)
    }
}

#[cfg(not(feature = "wgpu"))]
fn run_wgpu(_: &Args, _: &[Workload], _: &mut Vec<Point>) -> Result<String, String> {
    Err("this build has no wgpu backend (build with `--features wgpu`)".into())
}

/// `--overhead` on Burn's CubeCL backend itself, without the fusion stream, with the parts
/// of a call timed apart: a call with its config given (no selector), and one empty tensor
/// (one allocation task on CubeCL's device thread).
fn direct_overhead<B: FlashAttentionBackend>(device: &B::Device, args: &Args) {
    let report = |what: &str, overhead: Overhead| {
        println!(
            "# {what} on CubeBackend (no fusion), {OVERHEAD_CALLS} calls at {OVERHEAD_SHAPE:?}: \
             {overhead}"
        );
    };
    report(
        "call overhead",
        call_overhead::<B, _>(device, args.dtype, |q, k, v| {
            flint::flash_attention(q, k, v)
        }),
    );
    report(
        "the same through the selector's tiers (no warm shortcut)",
        through_the_tiers(|| {
            call_overhead::<B, _>(device, args.dtype, |q, k, v| {
                flint::flash_attention(q, k, v)
            })
        }),
    );
    let config = overhead_config(args.dtype);
    report(
        &format!("the same with {config:?} given"),
        call_overhead::<B, _>(device, args.dtype, |q, k, v| {
            flint::flash_attention_with(q, k, v, AttentionOptions::new().config(config))
        }),
    );
    // The selector alone: the config of the same problem, as a call on a warm cache asks.
    let problem = overhead_problem(args.dtype);
    let started = Instant::now();
    for _ in 0..OVERHEAD_CALLS {
        let _ = B::flash_attention_fwd_config(&problem, args.dtype, device, None);
    }
    let us = started.elapsed().as_secs_f64() * 1e6 / OVERHEAD_CALLS as f64;
    println!("# the selector alone (a warm memory-tier hit): {us:.1} us/call");
    report(
        "one Burn empty tensor",
        call_overhead::<B, _>(device, args.dtype, |q, _, _| {
            Tensor::<B, 4>::empty(q.dims(), (&q.device(), q.dtype()))
        }),
    );
    report(
        "Burn's q * k",
        call_overhead::<B, _>(device, args.dtype, |q, k, _| q * k),
    );
}

/// The problem of a call at [`OVERHEAD_SHAPE`], as `flint` makes it.
fn overhead_problem(dtype: DType) -> AttentionProblem {
    let [b, h, s, d] = OVERHEAD_SHAPE;
    AttentionProblem {
        batch: b,
        heads: h,
        kv_heads: h,
        seq_q: s,
        seq_kv: s,
        head_dim: d,
        val_dim: d,
        dtype: dtype_label(dtype),
        scale: 1.0 / (d as f64).sqrt(),
        softcap: None,
        window: (None, None),
        has_bias: false,
        dropout: None,
    }
}

/// `--overhead`: the forward's launch alone (`launch_attention_fwd_chosen` with the config of
/// [`overhead_config`], into outputs made once), without Burn's tensors, `flint`'s checks,
/// the selector or the outputs' allocation: what CubeCL's launch of flint's kernel costs.
fn launch_overhead<R, BT>(device: &R::Device, args: &Args)
where
    R: burn_cubecl::CubeRuntime,
    BT: burn_cubecl::BoolElement,
{
    type B<R, BT> = burn_cubecl::CubeBackend<R, f32, i32, BT>;
    let problem = overhead_problem(args.dtype);
    let config = overhead_config(args.dtype);
    let dtype = args.dtype;
    let made = |t: Tensor<B<R, BT>, 4>| t.into_primitive().tensor();
    let out = made(overhead_input::<B<R, BT>>(device, dtype));
    let lse = made(Tensor::<B<R, BT>, 4>::zeros(
        [OVERHEAD_SHAPE[0], OVERHEAD_SHAPE[1], OVERHEAD_SHAPE[2], 1],
        (device, DType::F32),
    ));
    let bias = made(Tensor::<B<R, BT>, 4>::zeros(
        [1, 1, 1, 1],
        (device, DType::F32),
    ));
    let rand = || overhead_input::<B<R, BT>>(device, dtype);
    let overhead = overhead_loop(
        || {
            let _ = <B<R, BT> as Backend>::sync(device);
        },
        [rand(), rand(), rand()],
        |q, k, v| {
            let (q, k, v) = (made(q), made(k), made(v));
            let args = flint::kernels::attention::AttentionFwdArgs {
                q: q.clone().into_tensor_arg(),
                k: k.into_tensor_arg(),
                v: v.into_tensor_arg(),
                bias: bias.clone().into_tensor_arg(),
                bias_strides: (0, 0),
                out: out.clone().into_tensor_arg(),
                lse: lse.clone().into_tensor_arg(),
            };
            flint::kernels::attention::launch_attention_fwd_chosen(
                &q.client,
                &problem,
                dtype.into(),
                &config,
                args,
            )
            .expect("the overhead config launches");
        },
    );
    println!(
        "# the launch alone ({config:?}, outputs made once) on CubeBackend (no fusion), \
         {OVERHEAD_CALLS} calls at {OVERHEAD_SHAPE:?}: {overhead}"
    );
}

/// `--overhead` through Burn's fusion stream (`Fusion<B>`, the default `Cuda`): a flint call
/// that keeps its LSE (no drop of it through the stream), one with its config given (no
/// selector on the caller's thread), and custom ops registered as flint's forward is that do
/// no work of their own ([`crate::fusion_cost`]): the stream's own cost per op.
fn fusion_overhead<B>(device: &burn::tensor::Device<burn_fusion::Fusion<B>>, args: &Args)
where
    B: burn_fusion::FusionBackend + FlashAttentionBackend,
    burn_fusion::Fusion<B>: FlashAttentionBackend,
{
    type F<B> = burn_fusion::Fusion<B>;
    let report = |what: &str, overhead: Overhead| {
        println!(
            "# {what} through fusion, {OVERHEAD_CALLS} calls at {OVERHEAD_SHAPE:?}: {overhead}"
        );
    };
    let dtype = args.dtype;
    report(
        "flash_attention_full, LSE kept",
        call_overhead::<F<B>, _>(device, dtype, |q, k, v| {
            let o = flint::flash_attention_full(q, k, v, None, None, AttentionOptions::new());
            (o.out, o.lse)
        }),
    );
    report(
        "flash_attention, config given",
        call_overhead::<F<B>, _>(device, dtype, |q, k, v| {
            flint::flash_attention_with(
                q,
                k,
                v,
                AttentionOptions::new().config(overhead_config(dtype)),
            )
        }),
    );
    report(
        "an empty custom op (output = q)",
        call_overhead::<F<B>, _>(device, dtype, |q, k, v| {
            crate::fusion_cost::custom_op(q, k, v, false)
        }),
    );
    report(
        "an empty custom op allocating its output",
        call_overhead::<F<B>, _>(device, dtype, |q, k, v| {
            crate::fusion_cost::custom_op(q, k, v, true)
        }),
    );
}

/// The config `--overhead` gives where it times a call without the selector.
fn overhead_config(dtype: DType) -> AttentionFwdConfig {
    if matches!(dtype, DType::F32) {
        AttentionFwdConfig::new(Variant::Portable, 16, 16)
    } else {
        AttentionFwdConfig::new(Variant::Mma, 64, 64)
    }
}

/// Runs the benchmark on the best backend of this build (CUDA, else wgpu) and writes the
/// CSV and chart asked for.
///
/// # Errors
/// Bad workloads, or a file that could not be written or read.
pub fn run_bench(args: &Args) -> Result<(), String> {
    let mut points = Vec::new();
    if !args.plot_only {
        let list = workloads(args)?;
        #[cfg(feature = "cuda")]
        let cuda = !args.wgpu;
        #[cfg(not(feature = "cuda"))]
        let cuda = false;
        let csv = if cuda {
            run_cuda(args, &list, &mut points)?
        } else {
            run_wgpu(args, &list, &mut points)?
        };
        if let Some(path) = &args.csv {
            write_file(path, &csv)?;
        }
    }
    if let Some(path) = &args.svg {
        let mut saved = Vec::new();
        let files = args.reference.iter().flat_map(|r| {
            r.to_str().map_or(vec![r.clone()], |s| {
                s.split(',').map(PathBuf::from).collect()
            })
        });
        for reference in files {
            let text = std::fs::read_to_string(&reference)
                .map_err(|e| format!("cannot read {}: {e}", reference.display()))?;
            saved.extend(parse_reference(&text));
        }
        // Panels are those flint has points in: measured here, or saved under `flint`.
        let ours: std::collections::BTreeSet<String> = points
            .iter()
            .chain(
                saved
                    .iter()
                    .filter(|p| args.plot_only && p.series == "flint"),
            )
            .map(|p| p.panel.clone())
            .collect();
        points.extend(saved.into_iter().filter(|p| ours.contains(&p.panel)));
        let title = format!(
            "flint attention {:?}{}: TFLOP/s against sequence length",
            args.dtype,
            if args.bwd { ", training" } else { "" }
        );
        write_file(path, &svg(&title, &points))?;
    }
    Ok(())
}
