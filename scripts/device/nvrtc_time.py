#!/usr/bin/env python3
"""Times NVRTC on one CUDA source as CubeCL's CUDA runtime compiles it (sm_90a, -lineinfo),
with NVRTC's own per-phase timings (frontend, NVVM optimizer, PTX translation) from `--time`.
Runs without a GPU; on the GPU machine, point it at the driver's CUDA toolkit to time what
flint's first calls pay there (docs/PERF.md, "First use: what a compile costs").
Usage: nvrtc_time.py <libnvrtc.so> <in.cu> [out.ptx] [include dir ...] [-- nvrtc option ...]"""
import ctypes
import os
import sys
import tempfile
import time

args = sys.argv[1:]
extra = []
if "--" in args:
    extra = args[args.index("--") + 1 :]
    args = args[: args.index("--")]
lib = ctypes.CDLL(args[0])
src = open(args[1], "rb").read()
out = args[2] if len(args) > 2 else None
incs = args[3:]
timing = os.path.join(tempfile.mkdtemp(), "phases.csv")
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernel.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=sm_90a", b"-lineinfo", b"--time=" + timing.encode()]
opts += [b"--include-path=" + p.encode() for p in incs] + [o.encode() for o in extra]
arr = (ctypes.c_char_p * len(opts))(*opts)
start = time.time()
rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
wall = time.time() - start
if rc != 0:
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    sys.exit("nvrtc failed:\n" + log.value.decode(errors="replace")[:4000])
phases = []
if os.path.exists(timing):
    for line in open(timing).read().splitlines()[1:]:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3:
            phases.append(f"{parts[1]} {int(parts[2]) / 1000:.2f} s")
print(f"{os.path.basename(args[1])}: {wall:.2f} s ({'; '.join(phases)})")
if out:
    size = ctypes.c_size_t()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    open(out, "wb").write(ptx.value)
