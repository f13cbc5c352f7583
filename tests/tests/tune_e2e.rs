//! The selector end to end on a real CubeCL kernel over lavapipe: the first call
//! autotunes and persists, a new selector (a "new process") answers from disk without
//! benchmarking, and the chosen kernel computes the right thing.

use std::sync::{Arc, Mutex};

use flint_kernels::scale::{ScaleConfig, launch_scale};
use flint_tests::{f32_bytes, lavapipe, random_f32, read_f32};
use flint_tune::{EventKind, Policy, Selector, Tier};

fn selector(dir: &std::path::Path) -> (Selector, Arc<Mutex<Vec<EventKind>>>) {
    let selector = Selector::new(Policy::default().with_cache_dir(dir).with_samples(1, 3));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    selector.set_hook(Some(Arc::new(move |e: &flint_tune::Event<'_>| {
        sink.lock().unwrap().push(e.kind.clone())
    })));
    (selector, events)
}

fn tunes(events: &Mutex<Vec<EventKind>>) -> usize {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|k| matches!(k, EventKind::TuneStarted { .. }))
        .count()
}

#[test]
fn scale_autotunes_persists_and_reuses() {
    let (client, device) = lavapipe();
    autotunes_persists_and_reuses(client, device, &["llvmpipe", "lavapipe"]);
}

#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "CUDA: build with `--features cuda` and run on a machine with an NVIDIA GPU"
)]
fn scale_autotunes_persists_and_reuses_on_cuda() {
    #[cfg(feature = "cuda")]
    {
        let (client, device) = flint_tests::cuda();
        autotunes_persists_and_reuses(client, device, &["NVIDIA", "sm_"]);
    }
}

fn autotunes_persists_and_reuses<R: cubecl::Runtime>(
    client: cubecl::prelude::ComputeClient<R>,
    device: R::Device,
    device_names: &[&str],
) {
    let dir = tempfile::tempdir().unwrap();
    let len = 1000;
    let x = random_f32(len, 7);
    let input = client.create_from_slice(&f32_bytes(&x));
    let alpha = -1.75f32;
    let expected: Vec<f64> = x.iter().map(|&v| f64::from(v) * f64::from(alpha)).collect();

    let (first, first_events) = selector(dir.path());
    let output = client.empty(len * 4);
    let choice = launch_scale(&client, &device, &first, &input, &output, len, alpha, None).unwrap();
    assert_eq!(choice.tier, Tier::Autotune);
    assert_eq!(tunes(&first_events), 1);
    assert_close(&read_f32(&client, output), &expected);

    // The winner is on disk.
    let files: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        text.contains(&format!("vector_size: {}", choice.config.vector_size)),
        "{text}"
    );
    assert!(device_names.iter().any(|n| text.contains(n)), "{text}");

    // A second selector on the same directory: the disk answers, nothing is benchmarked.
    let (second, second_events) = selector(dir.path());
    let output = client.empty(len * 4);
    let again = launch_scale(
        &client,
        &device,
        &second,
        &input,
        &output,
        1024 - 24,
        alpha,
        None,
    )
    .unwrap();
    assert_eq!((again.tier, again.config), (Tier::Disk, choice.config));
    assert_eq!(tunes(&second_events), 0);
    assert_close(&read_f32(&client, output), &expected);

    // Every candidate gives the right answer, including an explicit override.
    for config in [
        ScaleConfig {
            vector_size: 1,
            cube_size: 64,
        },
        ScaleConfig {
            vector_size: 4,
            cube_size: 256,
        },
    ] {
        let output = client.empty(len * 4);
        let c = launch_scale(
            &client,
            &device,
            &second,
            &input,
            &output,
            len,
            alpha,
            Some(config),
        )
        .unwrap();
        assert_eq!((c.tier, c.config), (Tier::Override, config));
        assert_close(&read_f32(&client, output), &expected);
    }
}

#[test]
fn scale_rejects_bad_input_before_launch() {
    let (client, device) = lavapipe();
    let (selector, _) = selector(tempfile::tempdir().unwrap().path());
    let buf = client.empty(16);
    let err = launch_scale(&client, &device, &selector, &buf, &buf, 0, 1.0, None).unwrap_err();
    assert_eq!(err.to_string(), "`len` must be in 1..=2^32-1, got 0");
    let bad = ScaleConfig {
        vector_size: 4,
        cube_size: 64,
    };
    let err = launch_scale(&client, &device, &selector, &buf, &buf, 3, 1.0, Some(bad))
        .unwrap_err()
        .to_string();
    assert!(err.contains("vector_size 4 does not divide len 3"), "{err}");
}

fn assert_close(got: &[f32], expected: &[f64]) {
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (f64::from(*g) - e).abs() <= 1e-6 * e.abs().max(1.0),
            "element {i}: got {g}, expected {e}"
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The attention forward: the first selector autotunes its candidates on a real problem and
/// persists the winner; a second selector on the same directory (a later process) reuses it
/// from disk without benchmarking, and both launches match the f64 reference.
#[test]
fn attention_autotunes_persists_and_reuses() {
    let (client, device) = lavapipe();
    attention_persists_and_reuses(client, device);
}

#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "CUDA: build with `--features cuda` and run on a machine with an NVIDIA GPU"
)]
fn attention_autotunes_persists_and_reuses_on_cuda() {
    #[cfg(feature = "cuda")]
    {
        let (client, device) = flint_tests::cuda();
        attention_persists_and_reuses(client, device);
    }
}

fn attention_persists_and_reuses<R: cubecl::Runtime>(
    client: cubecl::prelude::ComputeClient<R>,
    device: R::Device,
) {
    use cubecl::prelude::{StorageType, TensorArg};
    use flint_kernels::attention::{AttentionFwdArgs, launch_attention_fwd};
    use flint_tests::reference::{RefInputs, RefOptions, attention_ref};

    let (b, h, s, d) = (1usize, 2usize, 24usize, 32usize);
    let problem = self_attention(b, h, s, d, "f32", (None, Some(0)));
    let len = b * h * s * d;
    let (q, k, v) = (random_f32(len, 1), random_f32(len, 2), random_f32(len, 3));
    let (want, _) = attention_ref(
        &RefInputs::from_f32((&q, &k, &v), (b, h, h, s, s, d, d), None, None),
        &RefOptions {
            causal: true,
            ..RefOptions::default()
        },
    );
    let (qh, kh, vh) = (
        client.create_from_slice(&f32_bytes(&q)),
        client.create_from_slice(&f32_bytes(&k)),
        client.create_from_slice(&f32_bytes(&v)),
    );
    let bias = client.create_from_slice(&f32_bytes(&[0.0]));
    let shape = [b, h, s, d];
    let strides = [h * s * d, s * d, d, 1];
    let run = |selector: &Selector| {
        let out = client.empty(len * 4);
        let lse = client.empty(b * h * s * 4);
        // SAFETY: every handle holds exactly the elements its shape and strides describe.
        let arg = |handle: &cubecl::server::Handle, shape: &[usize], strides: &[usize]| unsafe {
            TensorArg::<R>::from_raw_parts(handle.clone(), strides.into(), shape.into())
        };
        let choice = launch_attention_fwd(
            &client,
            &device,
            selector,
            &problem,
            StorageType::Scalar(cubecl::ir::ElemType::Float(cubecl::ir::FloatKind::F32)),
            None,
            || AttentionFwdArgs {
                q: arg(&qh, &shape, &strides),
                k: arg(&kh, &shape, &strides),
                v: arg(&vh, &shape, &strides),
                bias: arg(&bias, &[1, 1, 1, 1], &[1, 1, 1, 1]),
                bias_strides: (0, 0),
                out: arg(&out, &shape, &strides),
                lse: arg(&lse, &[b, h, s], &[h * s, s, 1]),
            },
        )
        .unwrap();
        let got = read_f32(&client, out);
        let err = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (f64::from(*g) - w).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-4, "{:?}: max error {err:e}", choice.config);
        choice
    };

    let dir = tempfile::tempdir().unwrap();
    let (first, first_events) = selector(dir.path());
    let tuned = run(&first);
    assert_eq!(tuned.tier, Tier::Autotune);
    assert_eq!(tunes(&first_events), 1);
    let (second, second_events) = selector(dir.path());
    let again = run(&second);
    assert_eq!((again.tier, again.config), (Tier::Disk, tuned.config));
    assert_eq!(tunes(&second_events), 0);
}

/// A warm call's config is kept by problem (`flint_kernels`' shortcut past the invocation),
/// but never answers in place of what the selector would answer: a config retuned into the
/// memory tier, a scoped overlay, an explicit config, another selector.
#[test]
fn warm_calls_answer_what_the_selector_would() {
    use cubecl::prelude::StorageType;
    use flint_kernels::attention::{
        AttentionFwdArgs, AttentionFwdConfig, AttentionFwdOp, Variant, choose_attention_fwd,
    };
    use flint_kernels::{DeviceLimits, fingerprint};
    use flint_tune::{Autotune, Invocation, Op, Overlay, overlay};

    let (client, device) = lavapipe();
    let problem = self_attention(1, 2, 24, 32, "f32", (None, None));
    let storage = StorageType::Scalar(cubecl::ir::ElemType::Float(cubecl::ir::FloatKind::F32));
    let no_tuning = || {
        Policy::default()
            .with_disk_cache(false)
            .with_autotune(Autotune::Off)
    };
    let selector = Selector::new(no_tuning());
    let op = AttentionFwdOp::new(DeviceLimits::of(&client));
    let inv = Invocation::new(op.id(), problem.signature(), fingerprint(&client, &device));
    let key = op.key(&inv);
    let put = |config: AttentionFwdConfig| {
        selector
            .memory()
            .insert(inv.fingerprint(), op.id(), op.version(), &key, config)
    };
    let choose = |selector: &Selector, config: Option<AttentionFwdConfig>| {
        let choice = choose_attention_fwd(
            &client,
            &device,
            selector,
            &problem,
            storage,
            config,
            || -> AttentionFwdArgs<_> { panic!("no tier here benchmarks") },
        )
        .unwrap();
        (choice.config, choice.tier)
    };
    let (a, b) = (
        AttentionFwdConfig::new(Variant::Portable, 16, 16),
        AttentionFwdConfig::new(Variant::Portable, 32, 16),
    );

    put(a);
    for _ in 0..3 {
        assert_eq!(choose(&selector, None), (a, Tier::Memory));
    }
    put(b);
    assert_eq!(choose(&selector, None), (b, Tier::Memory), "retuned");
    assert_eq!(choose(&selector, None), (b, Tier::Memory));
    {
        let _guard = overlay(Overlay::new().set(&op, a));
        assert_eq!(choose(&selector, None), (a, Tier::Overlay));
    }
    assert_eq!(choose(&selector, Some(a)), (a, Tier::Override));
    assert_eq!(choose(&selector, None), (b, Tier::Memory));
    let other = Selector::new(no_tuning());
    assert_eq!(
        choose(&other, None).1,
        Tier::Heuristic,
        "a selector of its own"
    );
    selector.memory().clear();
    assert_eq!(
        choose(&selector, None).1,
        Tier::Heuristic,
        "a cleared memory tier"
    );
}

/// `output[i] = input[i] * mul + 1`: one kernel per `mul`, for the background compiles.
mod affine_kernel {
    use cubecl::prelude::*;

    #[cube(launch_unchecked)]
    pub fn affine(input: &Array<f32>, output: &mut Array<f32>, #[comptime] mul: u32) {
        let i = ABSOLUTE_POS;
        if i < input.len() {
            output[i] = input[i] * f32::cast_from(mul) + 1.0;
        }
    }
}

/// With the workspace's CubeCL wgpu runtime (`vendor/README.md`), an empty dispatch runs
/// nothing and is no launch error: it compiles its kernel's pipeline on a background thread.
/// Four kernels compiled at once that way then run correctly on their first real launches.
#[test]
fn empty_dispatches_compile_in_the_background() {
    let (client, _) = lavapipe();
    empty_dispatches_compile(&client);
}

/// The same on CUDA, where an empty dispatch would otherwise be a launch error.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "CUDA: build with `--features cuda` and run on a machine with an NVIDIA GPU"
)]
fn empty_dispatches_compile_in_the_background_on_cuda() {
    #[cfg(feature = "cuda")]
    {
        let (client, _) = flint_tests::cuda();
        empty_dispatches_compile(&client);
    }
}

fn empty_dispatches_compile<R: cubecl::Runtime>(client: &cubecl::prelude::ComputeClient<R>) {
    use cubecl::prelude::{ArrayArg, CubeCount, CubeDim};
    assert!(
        flint_kernels::compiles_in_background(client),
        "the {} runtime is not the workspace's patched one",
        R::name(client)
    );
    let len = 1000usize;
    let input = random_f32(len, 7);
    let input_handle = client.create_from_slice(&f32_bytes(&input));
    let sentinel = vec![-7.5f32; len];
    let muls = [1u32, 2, 3, 5];
    let outputs: Vec<_> = muls
        .iter()
        .map(|_| client.create_from_slice(&f32_bytes(&sentinel)))
        .collect();
    let launch = |mul: u32, output: &cubecl::server::Handle, count: CubeCount| {
        // SAFETY: both arrays hold `len` f32 values and the kernel checks its index.
        unsafe {
            affine_kernel::affine::launch_unchecked::<R>(
                client,
                count,
                CubeDim::new_1d(128),
                ArrayArg::from_raw_parts(input_handle.clone(), len),
                ArrayArg::from_raw_parts(output.clone(), len),
                mul,
            )
        }
    };
    for (&mul, output) in muls.iter().zip(&outputs) {
        launch(mul, output, CubeCount::Static(0, 0, 0));
    }
    cubecl::future::block_on(client.sync()).expect("an empty dispatch is no launch error");
    for output in &outputs {
        assert_eq!(
            read_f32(client, output.clone()),
            sentinel,
            "an empty dispatch ran"
        );
    }
    let cubes = u32::try_from(len.div_ceil(128)).unwrap();
    for (&mul, output) in muls.iter().zip(&outputs) {
        launch(mul, output, CubeCount::Static(cubes, 1, 1));
    }
    for (&mul, output) in muls.iter().zip(&outputs) {
        let got = read_f32(client, output.clone());
        // The device may fuse the multiply and add: one rounding instead of two.
        let err = got
            .iter()
            .zip(&input)
            .map(|(g, x)| (f64::from(*g) - (f64::from(*x) * f64::from(mul) + 1.0)).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-5, "mul {mul}: max error {err:e}");
    }
}

/// The backward's candidates are prepared ahead of its first call only where that call would
/// tune them and the runtime compiles in the background (the workspace's CubeCL on wgpu and
/// CUDA): once per bucket, until the backward's config is cached in memory or on disk.
#[test]
fn backward_prepare_runs_only_before_a_first_tune() {
    let (client, device) = lavapipe();
    backward_prepared_once(client, device, "f32");
}

#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "CUDA: build with `--features cuda` and run on a machine with an NVIDIA GPU"
)]
fn backward_prepare_runs_only_before_a_first_tune_on_cuda() {
    #[cfg(feature = "cuda")]
    {
        let (client, device) = flint_tests::cuda();
        backward_prepared_once(client, device, "bf16");
    }
}

fn backward_prepared_once<R: cubecl::Runtime>(
    client: cubecl::prelude::ComputeClient<R>,
    device: R::Device,
    dtype: &'static str,
) {
    use flint_kernels::attention::{AttentionBwdArgs, choose_attention_bwd, prepare_attention_bwd};

    let (b, h, s, d) = (1usize, 2usize, 128usize, 64usize);
    let problem = self_attention(b, h, s, d, dtype, (None, None));
    let t = TimingTensors::new(&client, dtype, [b, h, s, d], 8, 3);
    let (full, row, one) = (|i| t.full::<R>(i), |i| t.row::<R>(i), || t.one::<R>());
    let storage = t.storage;
    let args = || AttentionBwdArgs {
        q: full(0),
        k: full(1),
        v: full(2),
        out: full(3),
        dout: full(4),
        lse: row(0),
        bias: one(),
        bias_strides: (0, 0),
        delta: row(1),
        lse2: row(2),
        dq: full(5),
        dk: full(6),
        dv: full(7),
        dbias: one(),
    };
    let prepare = |selector: &Selector| {
        prepare_attention_bwd(&client, &device, selector, &problem, storage, false, args)
    };

    let dir = tempfile::tempdir().unwrap();
    let (first, events) = selector(dir.path());
    assert!(prepare(&first), "a first use prepares");
    assert_eq!(tunes(&events), 0, "preparing tunes nothing");
    let choice = choose_attention_bwd(
        &client, &device, &first, &problem, storage, false, None, args,
    )
    .unwrap();
    assert_eq!(choice.tier, Tier::Autotune);
    assert!(!prepare(&first), "a tuned bucket is not prepared again");
    let (second, _) = selector(dir.path());
    assert!(!prepare(&second), "nor one tuned by an earlier process");
}

/// The forward's candidates are prepared ahead of its first call on the same terms as the
/// backward's: a training step's first forward queues its own compiles before the
/// backward's, and its tuning then finds them under way.
#[test]
fn forward_prepare_runs_only_before_a_first_tune() {
    let (client, device) = lavapipe();
    forward_prepared_once(client, device, "f32");
}

#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "CUDA: build with `--features cuda` and run on a machine with an NVIDIA GPU"
)]
fn forward_prepare_runs_only_before_a_first_tune_on_cuda() {
    #[cfg(feature = "cuda")]
    {
        let (client, device) = flint_tests::cuda();
        forward_prepared_once(client, device, "bf16");
    }
}

fn forward_prepared_once<R: cubecl::Runtime>(
    client: cubecl::prelude::ComputeClient<R>,
    device: R::Device,
    dtype: &'static str,
) {
    use flint_kernels::attention::{AttentionFwdArgs, choose_attention_fwd, prepare_attention_fwd};

    let (b, h, s, d) = (1usize, 2usize, 128usize, 64usize);
    let problem = self_attention(b, h, s, d, dtype, (None, Some(0)));
    let t = TimingTensors::new(&client, dtype, [b, h, s, d], 4, 1);
    let storage = t.storage;
    let args = || AttentionFwdArgs {
        q: t.full(0),
        k: t.full(1),
        v: t.full(2),
        bias: t.one(),
        bias_strides: (0, 0),
        out: t.full(3),
        lse: TimingTensors::arg(&t.rows[0], &[b, h, s, 1], &[h * s, s, 1, 1]),
    };
    let prepare = |selector: &Selector| {
        prepare_attention_fwd(&client, &device, selector, &problem, storage, args)
    };

    let dir = tempfile::tempdir().unwrap();
    let (first, events) = selector(dir.path());
    assert!(prepare(&first), "a first use prepares");
    assert!(!prepare(&first), "a bucket is prepared once");
    assert_eq!(tunes(&events), 0, "preparing tunes nothing");
    let choice =
        choose_attention_fwd(&client, &device, &first, &problem, storage, None, args).unwrap();
    assert_eq!(
        choice.tier,
        Tier::Autotune,
        "the prepared bucket still tunes"
    );
    let (second, _) = selector(dir.path());
    assert!(
        !prepare(&second),
        "a bucket tuned by an earlier process is not prepared"
    );
}

/// Random device tensors for tests that only time kernels (others check values): `full`
/// ones of `[b, h, s, d]` in the dtype (bf16 as the top halves of f32s), f32 `row` ones of
/// `[b, h, s]`, and a one-element f32 tensor.
struct TimingTensors {
    storage: cubecl::prelude::StorageType,
    shape: [usize; 4],
    full: Vec<cubecl::server::Handle>,
    rows: Vec<cubecl::server::Handle>,
    one: cubecl::server::Handle,
}

impl TimingTensors {
    fn new<R: cubecl::Runtime>(
        client: &cubecl::prelude::ComputeClient<R>,
        dtype: &str,
        shape: [usize; 4],
        full: u64,
        rows: u64,
    ) -> Self {
        use cubecl::ir::{ElemType, FloatKind};
        let half = dtype != "f32";
        let kind = if half {
            FloatKind::BF16
        } else {
            FloatKind::F32
        };
        let data = |len: usize, seed: u64| {
            let x = random_f32(len, seed);
            if half {
                x.iter()
                    .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
                    .collect()
            } else {
                f32_bytes(&x)
            }
        };
        let [b, h, s, d] = shape;
        Self {
            storage: cubecl::prelude::StorageType::Scalar(ElemType::Float(kind)),
            shape,
            full: (0..full)
                .map(|i| client.create_from_slice(&data(b * h * s * d, i)))
                .collect(),
            rows: (0..rows)
                .map(|i| client.create_from_slice(&f32_bytes(&random_f32(b * h * s, 10 + i))))
                .collect(),
            one: client.create_from_slice(&f32_bytes(&[0.5])),
        }
    }

    fn arg<R: cubecl::Runtime>(
        handle: &cubecl::server::Handle,
        shape: &[usize],
        strides: &[usize],
    ) -> cubecl::prelude::TensorArg<R> {
        // SAFETY: every handle holds exactly the elements its shape and strides describe.
        unsafe {
            cubecl::prelude::TensorArg::from_raw_parts(handle.clone(), strides.into(), shape.into())
        }
    }

    fn full<R: cubecl::Runtime>(&self, i: usize) -> cubecl::prelude::TensorArg<R> {
        let [_, h, s, d] = self.shape;
        Self::arg(&self.full[i], &self.shape, &[h * s * d, s * d, d, 1])
    }

    fn row<R: cubecl::Runtime>(&self, i: usize) -> cubecl::prelude::TensorArg<R> {
        let [b, h, s, _] = self.shape;
        Self::arg(&self.rows[i], &[b, h, s], &[h * s, s, 1])
    }

    fn one<R: cubecl::Runtime>(&self) -> cubecl::prelude::TensorArg<R> {
        Self::arg(&self.one, &[1, 1, 1, 1], &[1, 1, 1, 1])
    }
}

/// Multi-head self-attention of `b x h x s x d` with the default scale, no bias and no
/// dropout, masked by `window`.
fn self_attention(
    b: usize,
    h: usize,
    s: usize,
    d: usize,
    dtype: &'static str,
    window: (Option<usize>, Option<usize>),
) -> flint_kernels::attention::AttentionProblem {
    flint_kernels::attention::AttentionProblem {
        batch: b,
        heads: h,
        kv_heads: h,
        seq_q: s,
        seq_kv: s,
        head_dim: d,
        val_dim: d,
        dtype,
        scale: 1.0 / (d as f64).sqrt(),
        softcap: None,
        window,
        has_bias: false,
        dropout: None,
    }
}
