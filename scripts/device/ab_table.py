#!/usr/bin/env python3
"""Turns `ab_bench.sh`'s log into a Markdown table: each label's launch times (ms) for the
base and the new build, one per process, and the ratio of their sums (new / base time; below
1 is faster), then the causal / non-causal time ratio per size and the SDPA rows' TFLOP/s.

    python3 scripts/device/ab_table.py ab.txt
"""
import re
import sys
from collections import defaultdict


def main(path):
    times = defaultdict(list)
    sdpa = []
    current = None
    for line in open(path):
        m = re.match(r"== (bench|sweep) (base|new) round \d+", line)
        if m:
            current = m.group(2)
            continue
        if line.startswith("== sdpa"):
            current = "sdpa"
            continue
        fields = line.split()
        if current in ("base", "new") and fields[:1] == ["flint"] and len(fields) >= 10:
            times[(fields[9], current)].append(float(fields[6]))
        elif current == "sdpa" and fields[:1] and fields[0].startswith("sdpa-"):
            sdpa.append(fields)
    labels = sorted({label for label, _ in times}, key=sort_key)
    print("| label | base (ms) | new (ms) | new / base time |")
    print("| --- | --- | --- | --- |")
    for label in labels:
        base, new = times[(label, "base")], times[(label, "new")]
        ratio = f"{sum(new) / sum(base):.3f}" if base and new else "-"
        print(f"| `{label}` | {fmt(base)} | {fmt(new)} | {ratio} |")
    print()
    for build in ("base", "new"):
        parts = []
        for label in labels:
            _, _, k, causal = parse(label) or (0, 0, None, None)
            if k or causal:
                continue
            plain = times.get((label, build))
            causal = times.get((label + "-causal", build))
            if plain and causal:
                ratio = (sum(causal) / len(causal)) / (sum(plain) / len(plain))
                parts.append(f"{label} {ratio:.3f}")
        print(f"causal / non-causal time, {build}: " + ", ".join(parts))
    if sdpa:
        print()
        print("SDPA (TFLOP/s): " + ", ".join(
            f"{f[0]} d{f[1]}{' causal' if f[2] == '1' else ''} s{f[3]} {f[7]}" for f in sdpa))


def parse(label):
    """`d128-s2048-k512-causal` as (128, 2048, 512, True); k is None outside the sweep."""
    m = re.fullmatch(r"d(\d+)-s(\d+)(?:-k(\d+))?(-causal)?", label)
    if not m:
        return None
    d, s, k, causal = m.groups()
    return int(d), int(s), int(k) if k else None, bool(causal)


def sort_key(label):
    parsed = parse(label)
    if not parsed:
        return (1 << 30, 0, 0, 0, label)
    d, s, k, causal = parsed
    return (-d, 1 if k else 0, 1 if causal else 0, s, k or 0)


def fmt(values):
    return ", ".join(f"{v:.4f}" for v in values) or "-"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ab_table.py AB_LOG")
    main(sys.argv[1])
