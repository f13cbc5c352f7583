#!/usr/bin/env python3
"""Compiles a CUDA source dumped by CubeCL (see split_kernels.py) to PTX through NVRTC, with
the options CubeCL's CUDA runtime passes (sm_90a, -lineinfo), so that `ptxas -v` and
`cuobjdump -sass` see what the driver runs. Works without a GPU.
Usage: nvrtc_ptx.py <libnvrtc.so> <in.cu> <out.ptx> [include dir ...]"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
src = open(sys.argv[2], "rb").read()
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernel.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=sm_90a", b"-lineinfo"] + [b"--include-path=" + p.encode() for p in sys.argv[4:]]
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
size = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
lib.nvrtcGetProgramLog(prog, log)
if rc != 0:
    sys.exit("nvrtc failed:\n" + log.value.decode(errors="replace")[:4000])
lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
ptx = ctypes.create_string_buffer(size.value)
lib.nvrtcGetPTX(prog, ptx)
open(sys.argv[3], "wb").write(ptx.value)
