#!/bin/bash
# Device call: CubeCL's generated CUDA for the attention kernels, their ptxas resources
# (registers, spills, stack) and SASS instruction counts, then Nsight Compute sections of the
# forward kernel beside SDPA-flash's at the same shape. Everything lands under $OUT.
# Usage: bash scripts/device/sass.sh <attention_bench binary> [ncu]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bench=$(realpath "$1")
export FLINT_CACHE_DIR=$(mktemp -d)
work=$(mktemp -d)
cd "$work" || exit 1
# CubeCL reads cubecl.toml from the working directory: log every compiled source.
cat > cubecl.toml <<TOML
[compilation.logger]
level = "full"
file = "$work/kernels.log"
TOML
"$bench" --no-burn --no-kernel-cache --fwd-configs --dims 128 --seqs 4096 --iters 3 > "$OUT/bench.txt" 2>&1
"$bench" --no-burn --no-kernel-cache --bwd --bwd-configs --dims 128 --seqs 4096 --iters 3 >> "$OUT/bench.txt" 2>&1
rm cubecl.toml
python3 "$here/split_kernels.py" kernels.log src
for f in src/*.cu; do
    b=${f%.cu}
    nvcc -cubin -arch=sm_90a -O3 -lineinfo -Xptxas -v -o "$b.cubin" "$f" > "$b.ptxas.txt" 2>&1
    cuobjdump -sass "$b.cubin" > "$b.sass" 2>&1
done
python3 "$here/sass_stats.py" src > "$OUT/sass_stats.txt"
tar czf "$OUT/src.tgz" src
cat "$OUT/sass_stats.txt"
if [ "${2:-}" = ncu ]; then
    sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats --section SourceCounters"
    FLINT_AUTOTUNE=heuristic timeout 240 ncu --clock-control none -k regex:fwd_mma --launch-count 40 $sections \
        "$bench" --no-burn --no-kernel-cache --fwd-configs --dims 128 --seqs 4096 --iters 1 > "$OUT/ncu_flint.txt" 2>&1
    timeout 120 ncu --clock-control none -k regex:flash_fwd --launch-count 1 --launch-skip 1 $sections \
        python3 "$here/sdpa_one.py" 4 16 4096 128 > "$OUT/ncu_sdpa.txt" 2>&1
    grep -E "^  [a-z_]+.*\(|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Block Size|Grid Size" "$OUT/ncu_flint.txt" | head -80
    grep -E "Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible" "$OUT/ncu_sdpa.txt"
fi
