//! Every `flint` subcommand on a temporary cache directory: happy paths, then errors.
//! Kernel-running commands (tune, bench, devices) use the wgpu device the test script
//! installs (Mesa lavapipe), with tiny shapes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `flint args` from the repository root with the cache at `cache`.
fn flint_in(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flint"));
    cmd.args(args)
        .current_dir(repo())
        .env("FLINT_CACHE_DIR", cache)
        .env_remove("FLINT_AUTOTUNE")
        .env_remove("FLINT_CACHE")
        .env_remove("FLINT_RECORD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running the flint binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn fails(out: &Output, code: i32, wanted: &str) {
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {err}\nstdout: {}",
        text(&out.stdout)
    );
    assert!(err.contains(wanted), "stderr lacks {wanted:?}: {err}");
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).expect("JSON output")
}

#[test]
fn help_names_every_subcommand() {
    let tmp = tempfile::tempdir().unwrap();
    let help = ok(&flint_in(tmp.path(), &["--help"], &[]));
    for sub in ["devices", "cache", "tune", "bench", "manifest"] {
        assert!(help.contains(sub), "--help lacks {sub}: {help}");
    }
    let help = ok(&flint_in(tmp.path(), &["cache", "--help"], &[]));
    for sub in ["path", "list", "show", "clear", "export", "import"] {
        assert!(help.contains(sub), "cache --help lacks {sub}: {help}");
    }
    let help = ok(&flint_in(tmp.path(), &["tune", "--help"], &[]));
    for flag in [
        "--workloads",
        "--recorded",
        "--shape",
        "--dtype",
        "--backend",
    ] {
        assert!(help.contains(flag), "tune --help lacks {flag}");
    }
    fails(
        &flint_in(tmp.path(), &["frobnicate"], &[]),
        2,
        "unrecognized",
    );
}

#[test]
fn cache_path_follows_the_flag_and_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let from_env = ok(&flint_in(tmp.path(), &["cache", "path"], &[]));
    assert_eq!(from_env.trim(), tmp.path().to_str().unwrap());
    let other = tmp.path().join("other");
    let flag = ok(&flint_in(
        tmp.path(),
        &["cache", "path", "--cache-dir", other.to_str().unwrap()],
        &[],
    ));
    assert_eq!(flag.trim(), other.to_str().unwrap());
    let listed = json(&flint_in(tmp.path(), &["cache", "list", "--json"], &[]));
    assert_eq!(listed["files"].as_array().map(Vec::len), Some(0));
    fails(
        &flint_in(
            tmp.path(),
            &["cache", "list"],
            &[("FLINT_AUTOTUNE", "sometimes")],
        ),
        2,
        "FLINT_AUTOTUNE",
    );
}

#[test]
fn devices_lists_the_test_device_with_its_features() {
    let tmp = tempfile::tempdir().unwrap();
    let found = json(&flint_in(tmp.path(), &["devices", "--json"], &[]));
    let devices = found["devices"].as_array().expect("a device list");
    assert!(
        !devices.is_empty(),
        "the test script installs lavapipe; no device was found: {found}"
    );
    for d in devices {
        let digest = d["fingerprint"].as_str().unwrap();
        assert_eq!(digest.len(), 32, "{d}");
        assert!(d["shared_memory"].as_u64().unwrap() > 0, "{d}");
    }
    let human = ok(&flint_in(tmp.path(), &["devices"], &[]));
    assert!(
        human.contains("fingerprint") && human.contains("shared memory"),
        "{human}"
    );
}

/// tune -> list/show -> tune again (disk) -> export -> clear -> import -> tune (disk), and the
/// same bundle poisoned.
#[test]
fn tune_list_show_export_clear_import_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let shape = ["tune", "--shape", "1,2,2,24,40,32", "--op", "fwd", "--json"];
    let first = json(&flint_in(&cache, &shape, &[]));
    let tiers: Vec<&str> = first["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tier"].as_str().unwrap())
        .collect();
    assert!(
        tiers.len() == 1 && tiers[0].starts_with("autotune"),
        "{first}"
    );
    let listed = json(&flint_in(&cache, &["cache", "list", "--json"], &[]));
    let files = listed["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{listed}");
    assert_eq!(files[0]["op"], "attention_fwd");
    assert_eq!(files[0]["entries"], 1);
    let shown = json(&flint_in(
        &cache,
        &["cache", "show", "attention_fwd", "--json"],
        &[],
    ));
    let entry = &shown["files"][0]["entries"][0];
    assert_eq!(entry["config"]["variant"], "portable", "{shown}");
    assert!(
        entry["signature"].as_str().unwrap().contains("seq_kv=64"),
        "{shown}"
    );
    let human = ok(&flint_in(&cache, &["cache", "show", "attention_fwd"], &[]));
    assert!(
        human.contains("autotune") && human.contains("block_q"),
        "{human}"
    );

    // A second process answers from disk.
    let again = json(&flint_in(&cache, &shape, &[]));
    assert_eq!(again["rows"][0]["tier"], "disk cache", "{again}");

    // Ship it: export, clear, import.
    let bundle = tmp.path().join("bundle.yaml");
    ok(&flint_in(
        &cache,
        &["cache", "export", bundle.to_str().unwrap()],
        &[],
    ));
    let cleared = json(&flint_in(&cache, &["cache", "clear", "--json"], &[]));
    assert_eq!(
        (cleared["files"].as_u64(), cleared["entries"].as_u64()),
        (Some(1), Some(1))
    );
    let empty = json(&flint_in(&cache, &["cache", "list", "--json"], &[]));
    assert_eq!(empty["files"].as_array().map(Vec::len), Some(0));
    let imported = json(&flint_in(
        &cache,
        &["cache", "import", bundle.to_str().unwrap(), "--json"],
        &[],
    ));
    assert_eq!(imported["added"], 1, "{imported}");
    let after = json(&flint_in(&cache, &shape, &[]));
    assert_eq!(after["rows"][0]["tier"], "disk cache", "{after}");

    // A poisoned bundle: a block size outside the op's space is skipped, with the reason.
    let body = std::fs::read_to_string(&bundle).unwrap();
    let at = body.find("block_q: ").expect("a block_q in the bundle") + "block_q: ".len();
    let digits = body[at..].bytes().take_while(u8::is_ascii_digit).count();
    let poisoned = tmp.path().join("poisoned.yaml");
    std::fs::write(
        &poisoned,
        format!("{}3{}", &body[..at], &body[at + digits..]),
    )
    .unwrap();
    let other = tmp.path().join("other-cache");
    let out = flint_in(
        &other,
        &["cache", "import", poisoned.to_str().unwrap()],
        &[],
    );
    fails(&out, 1, "1 entry skipped");
    assert!(
        text(&out.stdout).contains("block_q 3 is not a power of two"),
        "{}",
        text(&out.stdout)
    );
    let nothing = json(&flint_in(&other, &["cache", "list", "--json"], &[]));
    assert_eq!(nothing["files"].as_array().map(Vec::len), Some(0));
}

#[test]
fn recorded_invocations_are_tuned_offline() {
    let tmp = tempfile::tempdir().unwrap();
    fails(
        &flint_in(tmp.path(), &["tune", "--recorded"], &[]),
        2,
        "no recorded invocations",
    );
    // A run with recording on (here the tune itself) leaves its invocations behind.
    ok(&flint_in(
        tmp.path(),
        &["tune", "--shape", "1,1,1,16,16,32:causal", "--op", "bwd"],
        &[("FLINT_RECORD", "1")],
    ));
    assert!(tmp.path().join("recorded.yaml").is_file());
    ok(&flint_in(tmp.path(), &["cache", "clear"], &[]));
    let out = json(&flint_in(
        tmp.path(),
        &["tune", "--recorded", "--json"],
        &[],
    ));
    let rows = out["rows"].as_array().unwrap();
    let ops: Vec<&str> = rows.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert!(
        ops.contains(&"attention_fwd") && ops.contains(&"attention_bwd"),
        "{out}"
    );
    assert!(
        rows.iter()
            .all(|r| r["tier"].as_str().unwrap().starts_with("autotune")
                || r["tier"] == "memory cache"),
        "{out}"
    );
}

#[test]
fn bench_writes_a_table_a_csv_and_a_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let (csv, svg, reference) = (
        tmp.path().join("out.csv"),
        tmp.path().join("out.svg"),
        tmp.path().join("sdpa.txt"),
    );
    std::fs::write(
        &reference,
        "name d causal seq batch heads fwd_ms fwd_tflops\nsdpa-flash 32 0 32 1 2 0.01 0.5\n",
    )
    .unwrap();
    let out = ok(&flint_in(
        tmp.path(),
        &[
            "bench",
            "--dtype",
            "f32",
            "--dims",
            "32",
            "--seqs",
            "32",
            "--tokens",
            "32",
            "--hidden",
            "64",
            "--iters",
            "1",
            "--no-burn",
            "--csv",
            csv.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
            "--reference",
            reference.to_str().unwrap(),
        ],
        &[],
    ));
    assert!(out.contains("flint 32 0 32"), "{out}");
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() >= 3);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("sdpa-flash") && chart.contains("flint"));
    fails(
        &flint_in(tmp.path(), &["bench", "--reference", "/nonexistent"], &[]),
        2,
        "no such file",
    );
    fails(
        &flint_in(tmp.path(), &["bench", "--dtype", "f64"], &[]),
        2,
        "unknown dtype",
    );
}

#[test]
fn errors_name_what_was_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("junk.yaml");
    std::fs::write(&junk, "files: [").unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["cache", "show", "nope"], 2, "unknown op `nope`"),
        (&["cache", "clear", "--op", "nope"], 2, "unknown op `nope`"),
        (
            &["cache", "export", "/nonexistent/dir/b.yaml"],
            2,
            "cannot write",
        ),
        (&["cache", "import", "/nonexistent.yaml"], 2, "cannot open"),
        (
            &["cache", "import", junk.to_str().unwrap()],
            2,
            "not a flint cache bundle",
        ),
        (&["tune"], 2, "nothing to tune"),
        (&["tune", "--shape", "1,2,3"], 2, "6 or 7 numbers"),
        (
            &["tune", "--shape", "1,2,2,8,8,32:sideways"],
            2,
            "unknown flag",
        ),
        (
            &["tune", "--shape", "1,2,2,8,8,32", "--dtype", "f8"],
            2,
            "unknown dtype",
        ),
        (
            &["tune", "--shape", "1,2,2,8,8,32", "--backend", "tpu"],
            2,
            "unknown backend",
        ),
        (
            &["tune", "--workloads", "--manifest", "/nonexistent"],
            2,
            "--manifest",
        ),
    ];
    for (args, code, wanted) in cases {
        fails(&flint_in(tmp.path(), args, &[]), *code, wanted);
    }
    fails(
        &flint_in(
            tmp.path(),
            &["tune", "--shape", "1,2,2,8,8,32"],
            &[("FLINT_AUTOTUNE", "off")],
        ),
        2,
        "FLINT_AUTOTUNE=off",
    );
    // Bad tensor input reaches the kernel layer's validation, which names the rule.
    fails(
        &flint_in(
            tmp.path(),
            &["tune", "--shape", "1,3,2,8,8,32", "--op", "fwd"],
            &[],
        ),
        1,
        "1 call(s) failed",
    );
}
