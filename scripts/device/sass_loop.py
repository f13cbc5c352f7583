#!/usr/bin/env python3
"""Per kernel, the size of the tensor-core loop in SASS: instructions from the first `HMMA` or
`HGMMA` to the last (for the warpgroup kernels, a work item's whole walk), and how many of
them are register moves, with the whole kernel's count, for the cubins
`scripts/device/local_ptxas.sh` writes (no GPU needed). With a second directory, only kernels
whose loop differs by more than `--slack` instructions are printed, side by side:
the check to run after any kernel edit, since ptxas's allocation follows the order of the
CUDA source (docs/PERF.md, "Accumulator tiles as arrays of their own").
`cuobjdump` is not in NVIDIA's pip wheels of the CUDA compiler; triton's wheel carries one
(`triton/backends/nvidia/bin/cuobjdump`).
Usage: sass_loop.py CUOBJDUMP DIR [BASE_DIR] [--slack N]"""
import pathlib
import re
import subprocess
import sys

args = sys.argv[1:]
slack = 4
if "--slack" in args:
    i = args.index("--slack")
    slack = int(args[i + 1])
    del args[i : i + 2]
cuobjdump, dirs = args[0], [pathlib.Path(d) for d in args[1:]]


def stats(cubin):
    sass = subprocess.run(
        [cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    ops = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", line)
        if m:
            ops.append(m.group(1))
    hmma = [i for i, op in enumerate(ops) if op.startswith(("HMMA", "HGMMA"))]
    loop = ops[hmma[0] : hmma[-1] + 1] if hmma else []
    return len(ops), len(loop), sum("MOV" in op for op in loop)


for cubin in sorted(dirs[0].glob("*.cubin")):
    new = stats(cubin)
    if len(dirs) == 1:
        print(f"{cubin.stem:72s} total {new[0]:5d}  loop {new[1]:5d}  moves {new[2]:4d}")
        continue
    other = dirs[1] / cubin.name
    if not other.exists():
        print(f"{cubin.stem:72s} (not in {dirs[1]})")
        continue
    base = stats(other)
    if abs(new[1] - base[1]) > slack:
        print(f"{cubin.stem:72s} loop {base[1]} -> {new[1]}, moves {base[2]} -> {new[2]}, "
              f"total {base[0]} -> {new[0]}")
