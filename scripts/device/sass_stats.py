#!/usr/bin/env python3
"""Summarises each `<dir>/*.sass` (cuobjdump -sass) with its `*.ptxas.txt` (nvcc -Xptxas -v):
registers, spills, stack, and counts of the instruction classes that matter for attention
kernels (tensor-core MMAs, ldmatrix, async copies, local memory, special functions)."""
import collections
import pathlib
import re
import sys

CLASSES = ["HMMA", "LDSM", "LDGSTS", "LDG", "STG", "LDS", "STS", "LDL", "STL", "MUFU",
           "FFMA", "FMUL", "FADD", "FMNMX", "FSEL", "FSETP", "SHFL", "BAR", "F2FP", "IMAD",
           "IADD3", "LOP3", "ISETP", "SEL", "BRA"]

d = pathlib.Path(sys.argv[1])
for sass in sorted(d.glob("*.sass")):
    counts = collections.Counter()
    widths = collections.Counter()
    for line in sass.read_text(errors="replace").splitlines():
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)(\.[A-Z0-9_.]+)?", line)
        if not m:
            continue
        op = m.group(1)
        counts[op] += 1
        if op in ("LDG", "STG", "LDS", "STS", "LDGSTS"):
            widths[op + (m.group(2) or "")] += 1
    ptxas = sass.with_suffix(".ptxas.txt")
    info = ""
    if ptxas.exists():
        text = ptxas.read_text(errors="replace")
        info = " ".join(re.findall(r"(Used \d+ registers|\d+ bytes stack frame|\d+ bytes spill stores|\d+ bytes spill loads|\d+ bytes smem)", text))
    print(f"== {sass.stem}: {info}")
    print("   " + " ".join(f"{c}={counts[c]}" for c in CLASSES if counts[c]))
    print("   widths: " + " ".join(f"{k}={v}" for k, v in sorted(widths.items())))
    print(f"   total={sum(counts.values())}")
