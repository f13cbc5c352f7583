#!/usr/bin/env bash
# Flint's whole test suite, as the README gives it: checks (and installs) the software
# Vulkan device, then formatting, lints and every test. Kernels run on wgpu over lavapipe;
# CUDA tests show as ignored unless built with `--features cuda` on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

if ! command -v cargo >/dev/null 2>&1; then
  echo "test: cargo is not installed; install Rust from https://rustup.rs (1.89 or newer)" >&2
  exit 1
fi

# wgpu/Vulkan want a runtime dir; a bare CI shell may have none.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/flint-xdg-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi
# Tests pick the CPU adapter explicitly; this covers code that asks for the default device.
export CUBECL_WGPU_DEFAULT_DEVICE="${CUBECL_WGPU_DEFAULT_DEVICE:-Cpu}"
# A one-off run gains nothing from incremental state, which doubles the build folder's size
# (a full disk once failed CI); a developer may still set it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Never let a developer's real cache leak into (or out of) a test run.
export FLINT_CACHE_DIR="${FLINT_CACHE_DIR:-$(mktemp -d)}"

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (with the CUDA code paths; compiling them needs no GPU)"
cargo clippy --workspace --all-targets --locked \
  --features flint-kernels/cuda,flint-tests/cuda,flint-examples/cuda,flint-benches/cuda,flint-cli/cuda -- -D warnings
echo "== cargo check --features rocm (builds without a ROCm install; no AMD GPU runs it here)"
cargo check -p flint --no-default-features --features rocm --locked
echo "== cargo doc (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
echo "== cargo test"
cargo test --workspace --locked "$@"
echo "== cargo test: the generated CUDA source (CUDA compiler, no GPU; vendor/README.md)"
cargo test -p flint-kernels --features cuda --locked --lib attention::cuda_source
