#!/usr/bin/env bash
# Runs the CUDA integration tests on the GPU machine in groups that each fit one device call
# (its 10-minute limit): the test binary is built here
# (`cargo build --release -p flint-tests --tests --features flint-tests/cuda`, then
# target/release/deps/root-*) and carried. Usage, from the repository root there:
#   bash scripts/device/cuda_tests.sh BINARY quick|half|fwd|bwd|bwd-wgmma [THREADS [LIBTEST ARGS...]]
# `quick` (a few minutes): tuning, background compiles and the forward's and backward's preparation, one
# forward and one backward test, eight threads, the MHA module, the warpgroup MMA (sm_90). `half`: the bf16/f16 forward and backward tests. `fwd`,
# `bwd` and `bwd-wgmma`: every other test but the lavapipe ones, which need the software
# Vulkan device that only CI has; the warpgroup backward's tests have a group of their own
# because with them `bwd` no longer finished inside one call on a machine without CubeCL's
# compiled kernels (killed at 421 s, 2026-12-02). The five groups together run every CUDA
# test once. Measured on an H200 at 8 threads (2026-12-02): `bwd` 398 s on a cold machine;
# on a warm one `fwd` 181 s and `bwd-wgmma` 173 s side by side, `quick` 65 s and `half`
# 164 s side by side. `fwd` cold takes more than 200 s; `quick`, `half` and `fwd` side by side
# at 5 threads each on a cold machine: 96, 263 and 356 s (2026-12-03); `bwd-wgmma` 209 s and
# `bwd` 450 s alone (8 threads, 2026-12-03): `bwd` is the one near the limit.
set -euo pipefail
bin=$(realpath "$1")
group=$2
threads=${3:-4}
quick=(
    tune_e2e::empty_dispatches_compile_in_the_background_on_cuda
    tune_e2e::backward_prepare_runs_only_before_a_first_tune_on_cuda
    tune_e2e::forward_prepare_runs_only_before_a_first_tune_on_cuda
    tune_e2e::attention_autotunes_persists_and_reuses_on_cuda
    tune_e2e::scale_autotunes_persists_and_reuses_on_cuda
    attention_fwd::matches_reference_on_gpu
    attention_fwd::eight_threads_with_mixed_shapes_on_one_device
    attention_bwd::gradients_match_reference_on_gpu
    mha::
    wgmma::
)
half=(
    attention_fwd::half_precision
    attention_fwd::strided_half
    attention_bwd::half_precision
    attention_bwd::strided_half
)
case $group in
    quick) args=("${quick[@]}") ;;
    half) args=("${half[@]}") ;;
    fwd | bwd)
        args=(--skip tune_e2e::)
        for t in "${quick[@]}" "${half[@]}"; do args+=(--skip "$t"); done
        if [ "$group" = bwd ]; then
            args+=(--skip attention_bwd::wgmma attention_bwd::)
        else
            args+=(--skip attention_bwd::)
        fi
        ;;
    bwd-wgmma) args=(attention_bwd::wgmma) ;;
    *) echo "unknown group $group (quick, half, fwd, bwd or bwd-wgmma)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../../tests"
exec "$bin" --test-threads="$threads" "${args[@]}" "${@:4}"
