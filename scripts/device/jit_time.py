#!/usr/bin/env python3
"""Times the driver's load of each PTX or cubin file given (cuModuleLoadData): for PTX that is
the driver's JIT to SASS, which CubeCL's CUDA runtime pays once per kernel after NVRTC.
Needs a GPU. Set CUDA_CACHE_DISABLE=1 to bypass the driver's JIT cache (~/.nv/ComputeCache).
Usage: jit_time.py FILE [FILE ...]"""
import ctypes
import sys
import time

cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
for path in sys.argv[1:]:
    data = open(path, "rb").read() + b"\0"
    module = ctypes.c_void_p()
    start = time.time()
    rc = cu.cuModuleLoadData(ctypes.byref(module), data)
    print(f"{path}: cuModuleLoadData rc {rc}, {time.time() - start:.3f} s")
