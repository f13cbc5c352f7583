#!/usr/bin/env bash
# Device call: two `attention_bench` builds (a base and a change) timed in alternation, each
# process with a fresh tuning cache, so that a card's drift between processes shows as spread
# rather than as a difference; then SDPA in the same call, for the ratios. Writes $OUT/ab.txt,
# which `scripts/device/ab_table.py` turns into a table.
#   bash scripts/device/ab_bench.sh BASE_BENCH NEW_BENCH [ROUNDS [BENCH ARGS...]]
# Default bench arguments: D = 128 and 64 at 1k-16k, then the one-tile sweep at 2k
# (`--seqs-kv 128,512`), whose rows measure a block's fixed cost. FLINT_AUTOTUNE defaults to
# `heuristic` (the same tiling in both builds); export `on` to compare the tuner's picks
# (`on`, `off` and `heuristic` are its values: `crates/flint-tune/src/policy.rs`).
set -uo pipefail
base=$(realpath "$1")
new=$(realpath "$2")
rounds=${3:-2}
shift $(($# < 3 ? $# : 3))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--no-burn --dims 128,64 --seqs 1024,2048,4096,16384 --iters 10)
log="$OUT/ab.txt"
export FLINT_AUTOTUNE="${FLINT_AUTOTUNE:-heuristic}"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader >> "$log" 2>&1
for round in $(seq 1 "$rounds"); do
  for v in base new; do
    bin=$base; [ "$v" = new ] && bin=$new
    cache=$(mktemp -d)
    echo "== bench $v round $round" >> "$log"
    FLINT_CACHE_DIR=$cache timeout 150 "$bin" "${args[@]}" >> "$log" 2>&1
    echo "== sweep $v round $round" >> "$log"
    FLINT_CACHE_DIR=$cache timeout 60 "$bin" --no-burn --dims 128 --seqs 2048 \
      --seqs-kv 128,512 --iters 10 >> "$log" 2>&1
  done
done
# The GPU machine has no `../shared`: the reference script travels in the carried folder.
# It runs the default arguments' sizes, whatever BENCH ARGS were given.
sdpa=${FLINT_SDPA:-carry/sdpa_reference.py}
echo "== sdpa" >> "$log"
if [ -f "$sdpa" ]; then
  timeout 120 python3 "$sdpa" --dims 64,128 --seqs 1024,2048,4096,16384 >> "$log" 2>&1
else
  echo "SKIPPED sdpa: no $sdpa (copy ../shared/bench/sdpa_reference.py there)" >> "$log"
fi
echo "== done" >> "$log"
