//! The backend-switching and cache-shipping examples run to success on this machine (NdArray
//! and wgpu over lavapipe), each with a private cache directory.

use std::process::Command;

fn run(exe: &str) -> String {
    let cache = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(exe)
        .env("FLINT_CACHE_DIR", cache.path())
        .env_remove("FLINT_AUTOTUNE")
        .output()
        .expect("running the example");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{exe} failed\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_same_model_agrees_on_every_backend() {
    let out = run(env!("CARGO_BIN_EXE_backends"));
    for name in ["Autodiff<NdArray>", "Wgpu", "Autodiff<Wgpu>"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}: {out}"));
        assert!(
            line.contains("max |out - ndarray|"),
            "{name} was skipped: {out}"
        );
    }
}

#[test]
fn a_shipped_cache_answers_every_call_on_another_machine() {
    let out = run(env!("CARGO_BIN_EXE_ship_cache"));
    assert!(
        out.contains("build machine") && out.contains("autotune"),
        "{out}"
    );
    assert!(out.contains("came from the shipped cache"), "{out}");
}
