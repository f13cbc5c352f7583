#!/usr/bin/env bash
# Compiles the tensor-core kernels (forward and backward) for sm_90a on a machine without a GPU: CubeCL's
# CUDA source (the `cuda_source` bin), NVRTC with the CUDA runtime's options, then
# `ptxas -v` for registers and spills. NVRTC, ptxas and the headers come from NVIDIA's pip
# wheels, fetched once into $FLINT_CUDA_TOOLS. Exits non-zero if any kernel fails to compile.
#   scripts/device/local_ptxas.sh [OUT_DIR]
# FLINT_KERNELS (shell patterns separated by spaces, e.g. '*dkdv*p8_fused *fwd*q128_kv64')
# limits NVRTC and ptxas to the kernels whose names match one; every source is still written.
# `sass_loop.py` then compares the kernels' loops (instructions, moves) with another run's.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-target/cuda-source}"
tools="${FLINT_CUDA_TOOLS:-$HOME/.cache/flint-cuda-tools}"
if [ ! -x "$tools/nvidia/cuda_nvcc/bin/ptxas" ]; then
  mkdir -p "$tools/wheels"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 -d "$tools/wheels" \
    nvidia-cuda-nvrtc-cu12==12.8.93 nvidia-cuda-nvcc-cu12==12.8.93 \
    nvidia-cuda-runtime-cu12==12.8.90 nvidia-cuda-cccl-cu12==12.8.90
  for w in "$tools"/wheels/*.whl; do python3 -m zipfile -e "$w" "$tools"; done
  chmod +x "$tools/nvidia/cuda_nvcc/bin/ptxas"
fi
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
  export XDG_RUNTIME_DIR="${TMPDIR:-/tmp}/flint-xdg-$(id -u)"
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
fi
export CUBECL_WGPU_DEFAULT_DEVICE="${CUBECL_WGPU_DEFAULT_DEVICE:-Cpu}"
rm -rf "$out" && mkdir -p "$out"
cargo run ${FLINT_PROFILE:+--profile "$FLINT_PROFILE"} --quiet --locked -p flint-benches --features cuda --bin cuda_source -- "$out" >/dev/null
inc="$tools/nvidia/cuda_runtime/include $tools/nvidia/cuda_nvcc/include $tools/nvidia/cuda_cccl/include"
failed=0
for cu in "$out"/*.cu; do
  name="$(basename "$cu" .cu)"
  wanted=0
  set -f # the patterns are matched, not expanded
  for pat in ${FLINT_KERNELS:-*}; do
    # shellcheck disable=SC2254
    case "$name" in $pat) wanted=1 ;; esac
  done
  set +f
  [ "$wanted" = 1 ] || continue
  # shellcheck disable=SC2086
  if ! python3 scripts/device/nvrtc_ptx.py "$tools/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" \
      "$cu" "$out/$name.ptx" $inc > "$out/$name.log" 2>&1; then
    echo "FAILED $name (see $out/$name.log)"; failed=1; continue
  fi
  info="$("$tools/nvidia/cuda_nvcc/bin/ptxas" -v -arch=sm_90a "$out/$name.ptx" -o "$out/$name.cubin" 2>&1)"
  regs="$(grep -o 'Used [0-9]* registers' <<<"$info" | grep -o '[0-9]*')"
  spill="$(grep -o '[0-9]* bytes spill stores' <<<"$info" | grep -o '^[0-9]*')"
  # C7510-C7515: ptxas serialized the kernel's `wgmma`s (each waits for the one before),
  # printed as an info line that is easy to miss.
  serial="$(grep -o 'C751[0-9]' <<<"$info" | sort -u | tr '\n' ' ' || true)"
  printf '%-72s %3s registers %4s bytes spilled%s\n' "$name" "$regs" "$spill" \
    "${serial:+  wgmma SERIALIZED ($serial)}"
done
exit "$failed"
