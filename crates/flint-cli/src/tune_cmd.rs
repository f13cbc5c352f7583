//! `flint tune`: warms the cache ahead of first use, for the manifest's workloads, for given
//! shapes, or for the invocations a run recorded with `FLINT_RECORD=1`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use burn::backend::Autodiff;
use burn::tensor::{DType, Distribution, Tensor};
use flint::{AttentionOptions, FlashAttentionBackend};
use flint_tune::record::Recorder;
use flint_tune::{Autotune, CacheMiss, EventKind, Invocation, Policy, Selector, SigValue};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::failure::{Failure, Outcome};

/// Which ops to warm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Ops {
    /// The forward only.
    Fwd,
    /// Forward and backward (training).
    Bwd,
    /// Both: forward workloads as forward calls, backward workloads and shapes as training
    /// steps (which tune the forward too).
    All,
}

/// The arguments of `flint tune`.
#[derive(Clone, Debug, clap::Args)]
pub struct TuneArgs {
    /// Tune the workloads listed in the manifest (`manifest/attention.yaml`).
    #[arg(long)]
    pub workloads: bool,
    /// Tune the invocations recorded under `FLINT_RECORD=1` (`<cache dir>/recorded.yaml`).
    #[arg(long)]
    pub recorded: bool,
    /// Tune an attention shape `B,H,Hkv,Sq,Sk,D[,Dv]` (repeatable), optionally `:causal`.
    #[arg(long, value_name = "SHAPE")]
    pub shape: Vec<String>,
    /// Element types for workloads and shapes (comma-separated): bf16, f16, f32. Default:
    /// bf16 on CUDA, f32 on wgpu.
    #[arg(long, value_delimiter = ',')]
    pub dtype: Vec<String>,
    /// Runtime to tune on: cuda or wgpu. Default: CUDA when this build has it and a GPU is
    /// present, else wgpu.
    #[arg(long)]
    pub backend: Option<String>,
    /// Ops to warm.
    #[arg(long, value_enum, default_value = "all")]
    pub op: Ops,
    /// The manifest directory (for --workloads).
    #[arg(long, default_value = "manifest")]
    pub manifest: PathBuf,
}

/// One call to make.
#[derive(Clone, Debug)]
struct Job {
    label: String,
    train: bool,
    dims: [usize; 7],
    dtype: DType,
    causal: bool,
    bias: bool,
    softcap: bool,
    dropout: bool,
}

/// One row of the final table.
#[derive(Debug)]
struct Row {
    label: String,
    op: String,
    dtype: String,
    tier: String,
    config: String,
    seconds: f64,
}

fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        _ => "f32",
    }
}

fn parse_shape(text: &str, dtype: DType, train: bool) -> Result<Job, Failure> {
    let (dims, causal) = match text.split_once(':') {
        Some((dims, "causal")) => (dims, true),
        Some((_, other)) => {
            return Err(Failure::Input(format!(
                "--shape {text}: unknown flag `{other}` (only `causal`)"
            )));
        }
        None => (text, false),
    };
    let nums: Vec<usize> = dims
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| Failure::Input(format!("--shape {text}: expected B,H,Hkv,Sq,Sk,D[,Dv]")))?;
    let dims = match nums[..] {
        [b, h, hkv, sq, sk, d] => [b, h, hkv, sq, sk, d, d],
        [b, h, hkv, sq, sk, d, dv] => [b, h, hkv, sq, sk, d, dv],
        _ => {
            return Err(Failure::Input(format!(
                "--shape {text}: expected 6 or 7 numbers B,H,Hkv,Sq,Sk,D[,Dv]"
            )));
        }
    };
    Ok(Job {
        label: text.to_string(),
        train,
        dims,
        dtype,
        causal,
        bias: false,
        softcap: false,
        dropout: false,
    })
}

fn from_invocation(inv: &Invocation) -> Option<Job> {
    let sig = inv.signature();
    let size = |k: &str| sig.size(k).ok();
    let dtype = match sig.get("dtype") {
        Some(SigValue::Str(d)) => flint_benches::attention_bench::dtype(d).ok()?,
        _ => return None,
    };
    let train = match inv.op() {
        "attention_fwd" => false,
        "attention_bwd" => true,
        _ => return None,
    };
    let dims = [
        size("batch")?,
        size("heads")?,
        size("kv_heads")?,
        size("seq_q")?,
        size("seq_kv")?,
        size("head_dim")?,
        size("val_dim")?,
    ];
    Some(Job {
        label: format!("recorded {}", inv.op()),
        train,
        dims,
        dtype,
        causal: sig.flag("masked"),
        bias: sig.flag("bias"),
        softcap: sig.flag("softcap"),
        dropout: sig.flag("dropout"),
    })
}

fn jobs(
    args: &TuneArgs,
    cache_dir: &std::path::Path,
    dtypes: &[DType],
) -> Result<Vec<Job>, Failure> {
    let mut jobs = Vec::new();
    if args.workloads {
        let mut lists = Vec::new();
        if args.op != Ops::Bwd {
            lists.push(("attention_fwd", false));
        }
        if args.op != Ops::Fwd {
            lists.push(("attention_bwd", true));
        }
        for (op, train) in lists {
            let list = flint_benches::attention_bench::manifest_workloads(Some(&args.manifest), op)
                .map_err(|e| Failure::Input(format!("{e} (pass --manifest DIR)")))?;
            for w in list {
                for &dtype in dtypes {
                    jobs.push(Job {
                        label: w.label.clone(),
                        train,
                        dims: [w.b, w.h, w.hkv, w.sq, w.sk, w.d, w.dv],
                        dtype,
                        causal: w.causal,
                        bias: false,
                        softcap: false,
                        dropout: false,
                    });
                }
            }
        }
    }
    for shape in &args.shape {
        for &dtype in dtypes {
            jobs.push(parse_shape(shape, dtype, args.op != Ops::Fwd)?);
        }
    }
    if args.recorded {
        let recorded = Recorder::load(cache_dir);
        if recorded.is_empty() {
            return Err(Failure::Input(format!(
                "no recorded invocations in {} (run your program once with FLINT_RECORD=1)",
                cache_dir.join("recorded.yaml").display()
            )));
        }
        jobs.extend(recorded.iter().filter_map(from_invocation));
    }
    Ok(jobs)
}

/// One call (forward, or forward and backward through `Autodiff<B>`) of `job`'s shape.
fn call<B: FlashAttentionBackend>(job: &Job, device: &B::Device) -> Result<(), String>
where
    Autodiff<B>: FlashAttentionBackend,
{
    type A<B> = Autodiff<B>;
    let [b, h, hkv, sq, sk, d, dv] = job.dims;
    let rand = |shape: [usize; 4]| {
        Tensor::<A<B>, 4>::from_inner(
            Tensor::<B, 4>::random(shape, Distribution::Normal(0.0, 1.0), device).cast(job.dtype),
        )
    };
    let track = |t: Tensor<A<B>, 4>| if job.train { t.require_grad() } else { t };
    let (q, k, v) = (
        track(rand([b, h, sq, d])),
        track(rand([b, hkv, sk, d])),
        track(rand([b, hkv, sk, dv])),
    );
    let bias = job.bias.then(|| track(rand([1, 1, sq, sk])));
    let mut options = AttentionOptions::new().with_causal(job.causal);
    if job.softcap {
        options = options.softcap(30.0);
    }
    if job.dropout {
        options = options.dropout(0.1, 0);
    }
    let out = flint::try_flash_attention_full(q.clone(), k, v, None, bias, options)
        .map_err(|e| e.to_string())?
        .out;
    if job.train {
        let dout = rand([b, h, sq, dv]);
        let grads = (out * dout).sum().backward();
        let _ = q.grad(&grads);
    }
    B::sync(device).map_err(|e| format!("{e:?}"))
}

type Events = Arc<Mutex<Vec<(String, EventKind)>>>;

fn run_all<B: FlashAttentionBackend>(
    device: &B::Device,
    jobs: &[Job],
    events: &Events,
    bar: &ProgressBar,
) -> Vec<Row>
where
    Autodiff<B>: FlashAttentionBackend,
{
    let mut rows = Vec::new();
    for job in jobs {
        bar.set_message(format!("{} {}", job.label, dtype_name(job.dtype)));
        let started = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| call::<B>(job, device)))
            .unwrap_or_else(|_| Err("the call panicked (see the message above)".to_string()));
        let seconds = started.elapsed().as_secs_f64();
        let taken: Vec<(String, EventKind)> =
            std::mem::take(&mut *events.lock().unwrap_or_else(|p| p.into_inner()));
        let row = |op: &str, tier: String, config: String| Row {
            label: job.label.clone(),
            op: op.to_string(),
            dtype: dtype_name(job.dtype).to_string(),
            tier,
            config,
            seconds,
        };
        if let Err(e) = result {
            rows.push(row("-", "failed".into(), e));
        }
        for (op, kind) in taken {
            match kind {
                // The backward re-chooses with the forward's config passed explicitly: not news.
                EventKind::Hit {
                    tier: flint_tune::Tier::Override,
                    ..
                } => {}
                EventKind::Hit { tier, config } => rows.push(row(&op, tier.to_string(), config)),
                EventKind::TuneFinished { config, median, .. } => rows.push(row(
                    &op,
                    format!("autotune ({:.1} us)", median.as_secs_f64() * 1e6),
                    config,
                )),
                EventKind::Failed { reason } => rows.push(row(&op, "failed".into(), reason)),
                _ => {}
            }
        }
        bar.inc(1);
    }
    rows
}

fn pick_backend(flag: Option<&str>) -> Result<&'static str, Failure> {
    match flag {
        Some("cuda") if cfg!(feature = "cuda") => Ok("cuda"),
        Some("wgpu") if cfg!(feature = "wgpu") => Ok("wgpu"),
        Some(b @ ("cuda" | "wgpu")) => Err(Failure::Input(format!(
            "this flint was built without the `{b}` feature"
        ))),
        Some(other) => Err(Failure::Input(format!(
            "unknown backend `{other}` (expected cuda or wgpu)"
        ))),
        None => {
            #[cfg(feature = "cuda")]
            if !flint_kernels::devices::cuda_devices().is_empty() {
                return Ok("cuda");
            }
            if cfg!(feature = "wgpu") {
                Ok("wgpu")
            } else {
                Err(Failure::Device(
                    "no CUDA device found and this build has no wgpu".into(),
                ))
            }
        }
    }
}

/// `flint tune`.
pub fn run(args: &TuneArgs, cache_dir: Option<PathBuf>, json: bool) -> Outcome {
    if !args.workloads && !args.recorded && args.shape.is_empty() {
        return Err(Failure::Input(
            "nothing to tune: pass --workloads, --recorded or --shape B,H,Hkv,Sq,Sk,D".into(),
        ));
    }
    let dir = crate::cache_cmd::dir(cache_dir)?;
    let mut policy = Policy::from_env()
        .map_err(|e| Failure::Input(e.to_string()))?
        .with_cache_dir(&dir);
    if policy.autotune == Autotune::Off {
        return Err(Failure::Input(
            "FLINT_AUTOTUNE=off forbids benchmarking; unset it to tune".into(),
        ));
    }
    if !policy.disk_cache {
        return Err(Failure::Input(
            "FLINT_CACHE=off: tuned configs would not be kept; unset it to tune".into(),
        ));
    }
    // An explicit tune benchmarks on a miss whatever FLINT_AUTOTUNE=heuristic says.
    policy.cache_miss = CacheMiss::Autotune;
    Selector::init_global(policy)
        .map_err(|_| Failure::Device("the selector was already in use".into()))?;
    // Kept beside the tuned configs: later processes load the kernels instead of compiling.
    log::debug!("compiled kernels: {:?}", flint::enable_kernel_cache());
    let backend = pick_backend(args.backend.as_deref())?;
    let dtypes: Vec<DType> = if args.dtype.is_empty() {
        vec![if backend == "cuda" {
            DType::BF16
        } else {
            DType::F32
        }]
    } else {
        args.dtype
            .iter()
            .map(|d| flint_benches::attention_bench::dtype(d))
            .collect::<Result<_, _>>()
            .map_err(Failure::Input)?
    };
    let jobs = jobs(args, &dir, &dtypes)?;

    let selector = Selector::global().map_err(|e| Failure::Input(e.to_string()))?;
    let events: Events = Arc::default();
    let sink = events.clone();
    selector.set_hook(Some(Arc::new(move |e: &flint_tune::Event<'_>| {
        sink.lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((e.op.to_string(), e.kind.clone()));
    })));
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(jobs.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let started = Instant::now();
    let rows = match backend {
        #[cfg(feature = "cuda")]
        "cuda" => run_all::<burn::backend::Cuda>(&Default::default(), &jobs, &events, &bar),
        #[cfg(feature = "wgpu")]
        "wgpu" => run_all::<burn::backend::Wgpu>(&Default::default(), &jobs, &events, &bar),
        other => return Err(Failure::Input(format!("backend `{other}` is not built in"))),
    };
    bar.finish_and_clear();
    let failed = rows.iter().filter(|r| r.tier == "failed").count();
    print_rows(&rows, backend, &dir, started.elapsed(), json);
    if failed > 0 {
        return Err(Failure::Found(format!("{failed} call(s) failed")));
    }
    Ok(())
}

fn print_rows(rows: &[Row], backend: &str, dir: &std::path::Path, took: Duration, json: bool) {
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "label": r.label, "op": r.op, "dtype": r.dtype, "tier": r.tier,
                    "config": r.config, "seconds": r.seconds,
                })
            })
            .collect();
        println!(
            "{}",
            json!({"backend": backend, "cache_dir": dir, "rows": list, "seconds": took.as_secs_f64()})
        );
        return;
    }
    println!(
        "{:<28} {:<14} {:<5} {:<22} {:>8}  config",
        "workload", "op", "dtype", "tier", "call s"
    );
    for r in rows {
        println!(
            "{:<28} {:<14} {:<5} {:<22} {:>8.2}  {}",
            r.label, r.op, r.dtype, r.tier, r.seconds, r.config
        );
    }
    println!(
        "tuned on {backend} in {:.1} s; configs are in {}",
        took.as_secs_f64(),
        dir.display()
    );
}
