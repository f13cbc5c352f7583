#!/usr/bin/env python3
"""Per kernel: NVRTC (sm_90a, -lineinfo, as CubeCL) wall time, then the driver's load of its PTX
(JIT, cache disabled) and of NVRTC's cubin; then all kernels at once on threads: NVRTC, PTX
loads, cubin loads (docs/PERF.md, "NVRTC's cubin instead of a second compile"). Needs a GPU;
the sources come from the `cuda_source` bin (scripts/device/local_ptxas.sh).
Usage: compile_par.py LIBNVRTC INCLUDE_DIR FILE.cu..."""
import ctypes, sys, time, threading, os
os.environ["CUDA_CACHE_DISABLE"] = "1"
nv = ctypes.CDLL(sys.argv[1]); inc = sys.argv[2]; files = sys.argv[3:]
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int(); assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p(); assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
def nvrtc(path):
    src = open(path, "rb").read(); prog = ctypes.c_void_p()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None) == 0
    opts = [b"--gpu-architecture=sm_90a", b"-lineinfo", b"--include-path=" + inc.encode()]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    t = time.time(); rc = nv.nvrtcCompileProgram(prog, len(opts), arr); dt = time.time() - t
    assert rc == 0, path
    size = ctypes.c_size_t(); nv.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value); nv.nvrtcGetPTX(prog, ptx)
    nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value); nv.nvrtcGetCUBIN(prog, cubin)
    return dt, ptx.raw, cubin.raw
def load(data):
    cu.cuCtxSetCurrent(ctx); m = ctypes.c_void_p(); t = time.time()
    rc = cu.cuModuleLoadData(ctypes.byref(m), data); dt = time.time() - t
    assert rc == 0, rc
    return dt
res = {}
for f in files:
    dt, ptx, cubin = nvrtc(f)
    res[f] = (ptx, cubin)
    print(f"{os.path.basename(f)}: nvrtc {dt:.2f} s, ptx load {load(ptx):.3f} s, cubin load {load(cubin):.3f} s", flush=True)
def par(fn, items):
    out = [None] * len(items)
    def run(i, x): out[i] = fn(x)
    th = [threading.Thread(target=run, args=(i, x)) for i, x in enumerate(items)]
    t = time.time(); [x.start() for x in th]; [x.join() for x in th]
    return time.time() - t, out
w, outs = par(nvrtc, files); print(f"all {len(files)} at once: nvrtc wall {w:.2f} s (each {min(o[0] for o in outs):.2f}-{max(o[0] for o in outs):.2f} s)")
w, outs = par(load, [res[f][0] for f in files]); print(f"all at once: ptx loads wall {w:.2f} s (each {min(outs):.3f}-{max(outs):.3f} s, sum {sum(outs):.2f})")
w, outs = par(load, [res[f][1] for f in files]); print(f"all at once: cubin loads wall {w:.3f} s (sum {sum(outs):.3f})")
