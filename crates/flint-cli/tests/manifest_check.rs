//! `flint manifest check` on the real manifest and on broken copies of it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn flint(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("running the flint binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_repository_manifest_passes() {
    let out = flint(&["manifest", "check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("every level"),
        "{}",
        text(&out.stdout)
    );
    let out = flint(&["manifest", "check", "--json"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains("\"ok\":true"),
        "{}",
        text(&out.stdout)
    );
}

/// A copy of the manifest with `from` replaced by `to` in attention.yaml.
fn broken(from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    for entry in std::fs::read_dir(repo().join("manifest")).expect("manifest/") {
        let path = entry.expect("an entry").path();
        let body = std::fs::read_to_string(&path).expect("a manifest file");
        let body = if path.ends_with("attention.yaml") {
            assert!(body.contains(from), "the fixture edit `{from}` must apply");
            body.replacen(from, to, 1)
        } else {
            body
        };
        std::fs::write(dir.path().join(path.file_name().expect("a name")), body)
            .expect("writing the copy");
    }
    dir
}

#[test]
fn a_broken_rule_fails_with_the_op_level_and_rule() {
    let dir = broken("\"H % Hkv == 0\"", "\"H % Hkv == 1\"");
    let root = repo();
    let out = flint(&[
        "manifest",
        "check",
        "--dir",
        dir.path().to_str().expect("utf-8 path"),
        "--root",
        root.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("op `attention_fwd`: L2") && err.contains("H % Hkv == 1"),
        "{err}"
    );
}

#[test]
fn bad_yaml_and_a_missing_dir_are_load_errors() {
    let dir = broken("family: attention", "family: [attention");
    let out = flint(&[
        "manifest",
        "check",
        "--dir",
        dir.path().to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("attention.yaml"),
        "{}",
        text(&out.stderr)
    );
    let out = flint(&["manifest", "check", "--dir", "/nonexistent/manifest"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stderr).is_empty());
    let out = flint(&["manifest", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}
