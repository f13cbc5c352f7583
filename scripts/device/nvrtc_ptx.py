#!/usr/bin/env python3
"""Compiles a CUDA source dumped by CubeCL (see split_kernels.py) to PTX through NVRTC, with
the options CubeCL's CUDA runtime passes (sm_90a, -lineinfo), so that `ptxas -v` and
`cuobjdump -sass` see what the driver runs. Works without a GPU. Prints the compile's wall
time and NVRTC's own phases (frontend, NVVM optimizer, PTX translation, from `--time`): on
the GPU machine, pointed at the driver's CUDA toolkit, that is what a first call pays there
(docs/PERF.md, "First use: what a compile costs").
Usage: nvrtc_ptx.py <libnvrtc.so> <in.cu> <out.ptx> [include dir ...] [-- nvrtc option ...]"""
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
timing = os.path.join(tempfile.mkdtemp(), "phases.csv")
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernel.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=sm_90a", b"-lineinfo", b"--time=" + timing.encode()]
opts += [b"--include-path=" + p.encode() for p in args[3:]] + [o.encode() for o in extra]
arr = (ctypes.c_char_p * len(opts))(*opts)
start = time.time()
rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
wall = time.time() - start
size = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
lib.nvrtcGetProgramLog(prog, log)
if rc != 0:
    sys.exit("nvrtc failed:\n" + log.value.decode(errors="replace")[:4000])
phases = []
if os.path.exists(timing):
    for line in open(timing).read().splitlines()[1:]:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3:
            phases.append(f"{parts[1]} {int(parts[2]) / 1000:.2f} s")
print(f"{os.path.basename(args[1])}: {wall:.2f} s ({'; '.join(phases)})")
lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
lib.nvrtcGetPTX(prog, ptx)
open(args[2], "wb").write(ptx.value)
