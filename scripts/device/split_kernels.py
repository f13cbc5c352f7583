#!/usr/bin/env python3
"""Splits a CubeCL compilation log (`[compilation.logger] level = "full"`) into one
CUDA source file per kernel: `<out>/<nn>_<name>.cu`, with the kernel id as a comment."""
import pathlib
import re
import sys

log = pathlib.Path(sys.argv[1]).read_text(errors="replace")
out = pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
blocks = re.findall(r"\[START_KERNEL_COMPILATION\](.*?)\[END_KERNEL_COMPILATION\]", log, re.S)
for n, block in enumerate(blocks):
    name = re.search(r"name: (\S+)", block)
    name = re.sub(r"[^A-Za-z0-9_]", "_", name.group(1) if name else "kernel")[:60]
    src = re.search(r"source:\n```\w*\n(.*)```", block, re.S)
    if not src:
        continue
    head = block[: block.find("source:")]
    comment = "/*\n" + head.replace("*/", "* /") + "\n*/\n"
    (out / f"{n:02d}_{name}.cu").write_text(comment + src.group(1))
print(f"{len(blocks)} kernels -> {out}")
