//! The manifest against the code: the real manifest passes every level, and a broken
//! fixture for each level is rejected with the right message.

use std::path::{Path, PathBuf};

use flint_manifest::{Level, Manifest, validate};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_manifest_matches_the_code() {
    let manifest = Manifest::load_dir(&root().join("manifest")).unwrap_or_else(|e| panic!("{e}"));
    let specs = flint_kernels::op_specs();
    assert!(!manifest.entries.is_empty());
    let findings = validate(&manifest, &specs, &root());
    assert!(
        findings.is_empty(),
        "manifest findings:\n{}",
        findings
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for spec in &specs {
        assert!(manifest.entries.contains_key(spec.id), "{}", spec.id);
    }
}

/// Every config the attention ops can tune or fall back to (candidates and heuristic, on a
/// tensor-core device and on one without, for decoding and prefill shapes, every head dim)
/// lies in the tuning space its manifest entry declares.
#[test]
fn the_tuning_space_covers_every_candidate_and_heuristic() {
    use flint_kernels::DeviceLimits;
    use flint_kernels::attention::{AttentionBwdOp, AttentionFwdOp, SUPPORTED_HEAD_DIMS};
    use flint_tune::{DeviceFingerprint, Invocation, Op, Signature};

    let manifest = Manifest::load_dir(&root().join("manifest")).unwrap_or_else(|e| panic!("{e}"));
    // (shared memory, register-level MMA dtypes, cmma dtypes, sm_90: warpgroup MMA and
    // two-element f32 atomics)
    let devices = [
        (232_448, vec!["f16", "bf16"], vec!["f16", "bf16"], true), // an H100 on CUDA
        (232_448, vec!["f16", "bf16"], vec!["f16", "bf16"], false), // an sm_80-like CUDA GPU
        (49_152, vec![], vec!["f16", "bf16"], false),              // Vulkan: cooperative matrices
        (32_768, vec![], vec![], false), // lavapipe: no tensor cores, 32 KiB
    ];
    type Device = (usize, Vec<&'static str>, Vec<&'static str>, bool);
    let limits = |(smem, mma, cmma, hopper): &Device| DeviceLimits {
        shared_memory: *smem,
        max_units_per_cube: 1024,
        max_vector_size: 8,
        plane_size: (32, 32),
        plane_ops: !cmma.is_empty(),
        cmma: !cmma.is_empty(),
        mma_16x8x16: mma.clone(),
        cmma_16x16x16: cmma.clone(),
        atomic_add_f32x2: *hopper,
        wgmma: *hopper,
        arrays_across_barriers: *hopper,
    };
    let inv = |op: &str, d: usize, seq_q: usize, dtype: &str| {
        let sig = Signature::new()
            .with("batch", 2usize)
            .with("heads", 32usize)
            .with("kv_heads", 8usize)
            .with("seq_q", seq_q)
            .with("seq_kv", 8192usize)
            .with("head_dim", d)
            .with("val_dim", d)
            .with("dtype", dtype)
            .with("masked", false)
            .with("bias", false)
            .with("softcap", false)
            .with("dropout", false);
        Invocation::new(op, sig, DeviceFingerprint::new("cuda", "x", "sm_90", "1"))
    };
    // Each field of a config, as YAML, must be one of the values the entry lists for it.
    fn covered<C: serde::Serialize>(manifest: &Manifest, op: &str, config: &C) -> Vec<String> {
        let tuning = &manifest.entries[op].entry.tuning;
        let value = serde_yaml::to_value(config).expect("configs serialise");
        let serde_yaml::Value::Mapping(fields) = value else {
            return vec![format!("{op}: config is not a mapping")];
        };
        fields
            .iter()
            .filter_map(|(k, v)| {
                let name = k.as_str().unwrap_or_default();
                let listed = tuning.get(name)?;
                (!listed.contains(v)).then(|| format!("{op}: {name} = {v:?} is not in {listed:?}"))
            })
            .collect()
    }
    let mut missing = Vec::new();
    let mut seen = 0;
    for device in &devices {
        let fwd = AttentionFwdOp::new(limits(device));
        let bwd = AttentionBwdOp::new(limits(device));
        for d in SUPPORTED_HEAD_DIMS {
            for seq_q in [1, 8192] {
                for dtype in ["bf16", "f32"] {
                    let i = inv("attention_fwd", d, seq_q, dtype);
                    for c in fwd.candidates(&i).iter().chain(fwd.heuristic(&i).iter()) {
                        missing.extend(covered(&manifest, "attention_fwd", c));
                        seen += 1;
                    }
                    let i = inv("attention_bwd", d, seq_q, dtype);
                    for c in bwd.candidates(&i).iter().chain(bwd.heuristic(&i).iter()) {
                        missing.extend(covered(&manifest, "attention_bwd", c));
                        seen += 1;
                    }
                }
            }
        }
    }
    assert!(seen > 100, "only {seen} configs checked");
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "outside the declared tuning space:\n{}",
        missing.join("\n")
    );
}

/// The real `scale` entry with one edit applied.
fn scale_with(edit: impl FnOnce(String) -> String) -> Manifest {
    let text = std::fs::read_to_string(root().join("manifest/scale.yaml")).unwrap();
    Manifest::parse(&edit(text), Path::new("fixture.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

fn findings(m: &Manifest) -> Vec<String> {
    validate(m, &flint_kernels::op_specs(), &root())
        .into_iter()
        .map(|f| f.to_string())
        .collect()
}

fn assert_finding(m: &Manifest, level: Level, needle: &str) {
    let all = validate(m, &flint_kernels::op_specs(), &root());
    assert!(
        all.iter()
            .any(|f| f.level == level && f.to_string().contains(needle)),
        "expected a {level:?} finding containing {needle:?}, got {all:#?}"
    );
}

#[test]
fn l0_unknown_keys_and_bad_yaml_are_load_errors_with_file_entry_and_line() {
    let text = std::fs::read_to_string(root().join("manifest/scale.yaml")).unwrap();
    let bad = text.replace("  roofline:", "  rooflines:");
    let err = Manifest::parse(&bad, Path::new("bad.yaml")).unwrap_err();
    assert_eq!(err.entry.as_deref(), Some("scale"), "{err}");
    assert!(err.line.is_some(), "{err}");
    assert!(
        err.to_string().starts_with("bad.yaml: entry `scale` (line"),
        "{err}"
    );
    assert!(err.message.contains("unknown field `rooflines`"), "{err}");

    let err = Manifest::parse("scale: [unclosed", Path::new("x.yaml")).unwrap_err();
    assert!(err.line.is_some(), "{err}");

    let err = Manifest::parse(
        &text.replace("\"N >= 1\"", "\"N >= \""),
        Path::new("r.yaml"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("shape rule `N >= `: expected a value"),
        "{err}"
    );
    assert!(err.line.is_some());

    let err = Manifest::parse(
        &text.replace("{x: \"[N]\"}", "{x: \"N\"}"),
        Path::new("s.yaml"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("expected `[dim, ...]`"), "{err}");
}

#[test]
fn l0_key_format() {
    let m = scale_with(|t| t.replacen("scale:", "Scale-Op:", 1));
    assert_finding(&m, Level::L0, "op id `Scale-Op` must match");
}

#[test]
fn l1_ops_and_entries_match_one_to_one() {
    let m = scale_with(|t| t.replacen("scale:", "scale_unregistered:", 1));
    assert_finding(
        &m,
        Level::L1,
        "op `scale_unregistered`: L1: has a manifest entry but no op registered",
    );
    assert_finding(
        &m,
        Level::L1,
        "op `scale`: L1: registered in code but has no manifest entry",
    );
}

#[test]
fn l1_params_agree() {
    let m = scale_with(|t| t.replace("alpha: {type: f32", "alpha: {type: f64"));
    assert_finding(
        &m,
        Level::L1,
        "param `alpha` has type `f64` in the manifest but `f32` in code",
    );
    let m = scale_with(|t| t.replace("alpha: {", "beta: {"));
    assert_finding(
        &m,
        Level::L1,
        "param `alpha` is accepted by the op but missing",
    );
    assert_finding(
        &m,
        Level::L1,
        "param `beta` is in the manifest but the op does not accept it",
    );
}

#[test]
fn l2_shape_rules_hold_on_workloads() {
    let m = scale_with(|t| t.replace("{label: tiny, N: 1}", "{label: tiny, N: 0}"));
    assert_finding(
        &m,
        Level::L2,
        "shape rule `N >= 1` fails on workload `tiny`",
    );
    let m = scale_with(|t| t.replace("\"N >= 1\"", "\"M >= 1\""));
    assert_finding(&m, Level::L2, "unknown name `M`");
}

#[test]
fn l2_output_shapes_agree_with_the_op() {
    let m = scale_with(|t| t.replace("{out: \"[N]\"}", "{out: \"[N / 2]\"}"));
    assert_finding(
        &m,
        Level::L2,
        "output `out` on workload `one-million`: manifest says [524288], the op says [1048576]",
    );
    let m = scale_with(|t| t.replace("{out: \"[N]\"}", "{result: \"[N]\"}"));
    assert_finding(&m, Level::L2, "output `result` is not produced by the op");
}

#[test]
fn l3_dtypes_agree() {
    let m = scale_with(|t| t.replace("dtypes: [f32]", "dtypes: [f32, bf16]"));
    assert_finding(
        &m,
        Level::L3,
        "dtype `bf16` is listed but the op rejects it",
    );
    let m = scale_with(|t| t.replace("dtypes: [f32]", "dtypes: [f32, f8e4m3]"));
    assert_finding(&m, Level::L3, "dtype `f8e4m3` is not one of");
    let m = scale_with(|t| t.replace("dtypes: [f32]", "dtypes: []"));
    assert_finding(
        &m,
        Level::L3,
        "the op accepts dtype `f32` but the manifest does not list it",
    );
}

#[test]
fn l4_rooflines_and_sources() {
    let m = scale_with(|t| t.replace("bytes: \"8 * N\"", "bytes: \"N - N\""));
    assert_finding(
        &m,
        Level::L4,
        "roofline bytes `N - N` is 0 on workload `tiny`",
    );
    let m = scale_with(|t| t.replace("flops: \"N\"", "flops: \"N / (N - 1)\""));
    assert_finding(&m, Level::L4, "division by zero");
    let m = scale_with(|t| t.replace("scale/kernel.rs", "scale/missing.rs"));
    assert_finding(
        &m,
        Level::L4,
        "source kernel `crates/flint-kernels/src/scale/missing.rs` does not exist",
    );
}

#[test]
fn load_dir_rejects_duplicates_and_reads_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("manifest/scale.yaml")).unwrap();
    std::fs::write(dir.path().join("a.yaml"), &text).unwrap();
    assert_eq!(Manifest::load_dir(dir.path()).unwrap().entries.len(), 1);
    std::fs::write(dir.path().join("b.yaml"), &text).unwrap();
    let err = Manifest::load_dir(dir.path()).unwrap_err();
    assert!(err.to_string().contains("op defined twice"), "{err}");
    // The scale entry alone is clean; only the ops it leaves out are reported.
    let alone = findings(&scale_with(|t| t));
    assert!(
        alone.iter().all(|f| !f.starts_with("op `scale`")),
        "{alone:?}"
    );
    assert!(
        alone.iter().any(|f| f.contains("op `attention_fwd`: L1")),
        "{alone:?}"
    );
}

/// The loader and the expression parser reject hostile input with an error, never a panic.
mod fuzz {
    use std::path::Path;

    use flint_manifest::{Expr, Manifest};
    use proptest::prelude::*;

    fn real_manifest() -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest/attention.yaml");
        std::fs::read_to_string(root).expect("manifest/attention.yaml")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
            let _ = Manifest::parse(&text, Path::new("fuzz.yaml"));
            let _ = Expr::parse(&text);
        }

        #[test]
        fn arbitrary_expressions_never_panic(text in "[A-Za-z0-9_ +*/%()<>=!&|?:.,\\[\\]-]{0,60}") {
            if let Ok(e) = Expr::parse(&text) {
                let env = flint_manifest::Env::new();
                let _ = e.eval(&env);
            }
        }

        #[test]
        fn mutated_manifest_never_panics(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>(), any::<bool>()), 1..6),
        ) {
            let mut text: Vec<char> = real_manifest().chars().collect();
            for (at, c, insert) in edits {
                let i = at.index(text.len());
                if insert { text.insert(i, c) } else { text[i] = c }
            }
            let text: String = text.into_iter().collect();
            let _ = Manifest::parse(&text, Path::new("attention.yaml"));
        }
    }
}
