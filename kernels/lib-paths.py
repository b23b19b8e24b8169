#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lib-paths.py CHECK: one of libgpusched's correctness paths on a real GPU,
as programs other than the bench's take them. Run it under the library
(kernels/h200/lib-paths.sh does, beside a busy neighbour); it prints
"ok CHECK: ..." or "not ok CHECK: ..." and exits 0 or 1. What the library
kept (its state records, its counters) the runner reads from
GPUSCHED_DEBUG=stats at exit.

Checks:
  capture   PyTorch captures CUDA graphs (torch.cuda.graph: global capture
            mode) while another thread launches: every capture succeeds and
            every replay computes what eager mode does
  retain    a driver-API retain and release of the primary context, 50
            times, while PyTorch's work runs on it: PyTorch's results stay
            right
  ctxcycle  20 contexts created, a kernel loaded and launched in each,
            then destroyed (driver API, no PyTorch)
  reset     the primary context reset (cudaDeviceReset) and used again, 5
            times
  pools     under GPUSCHED_MEM_LIMIT=1G: 768 MiB from a pool on the GPU
            succeeds, 512 MiB more by cuMemAlloc is refused
            (CUDA_ERROR_OUT_OF_MEMORY); 768 MiB from a pool in host memory
            succeeds (no GPU's)
"""
import ctypes
import sys
import threading

CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_LOCATION_TYPE_HOST = 2
CU_MEM_ALLOCATION_TYPE_PINNED = 1
CUDA_ERROR_OUT_OF_MEMORY = 2

# A kernel that spins for its parameter's nanoseconds on the GPU's clock.
SPIN_PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 ns)
{
  .reg .u64 %t0, %t1, %d, %n;
  .reg .pred %p;
  ld.param.u64 %n, [ns];
  mov.u64 %t0, %globaltimer;
LOOP:
  mov.u64 %t1, %globaltimer;
  sub.u64 %d, %t1, %t0;
  setp.lt.u64 %p, %d, %n;
  @%p bra LOOP;
  ret;
}
\0"""


class MemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class MemPoolProps(ctypes.Structure):
    _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int),
                ("location", MemLocation),
                ("win32SecurityAttributes", ctypes.c_void_p),
                ("maxSize", ctypes.c_size_t), ("usage", ctypes.c_ushort),
                ("reserved", ctypes.c_ubyte * 54)]


class Driver:
    """The entry points used, found as a program finds them (dlsym on
    libcuda, which the library answers for those it interposes)."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check("cuInit", 0)

    def call(self, name, *args):
        return getattr(self.lib, name)(*args)

    def check(self, name, *args):
        r = self.call(name, *args)
        if r:
            raise RuntimeError("%s failed: %d" % (name, r))

    def ctx_create(self, dev):
        ctx = ctypes.c_void_p()
        try:    # CUDA 12.5 on: cuCtxCreate_v4 (NULL parameters)
            self.check("cuCtxCreate_v4", ctypes.byref(ctx), None, 0, dev)
        except AttributeError:
            self.check("cuCtxCreate_v2", ctypes.byref(ctx), 0, dev)
        return ctx

    def spin_function(self):
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check("cuModuleLoadData", ctypes.byref(mod), SPIN_PTX)
        self.check("cuModuleGetFunction", ctypes.byref(fn), mod, b"spin")
        return fn

    def spin(self, fn, ns, n=1):
        arg = ctypes.c_uint64(ns)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg),
                                                   ctypes.c_void_p))
        for _ in range(n):
            self.check("cuLaunchKernel", fn, 1, 1, 1, 1, 1, 1, 0, None,
                       params, None)


def say(ok, name, what):
    print("%s %s: %s" % ("ok" if ok else "not ok", name, what), flush=True)
    return 0 if ok else 1


def check_capture():
    import torch
    dev = torch.device("cuda")
    a = torch.randn(1024, 1024, device=dev)
    stop = threading.Event()
    errors = []

    def op(x):
        return (x @ x).relu_() + 1

    # Warm up on a side stream before capturing, as PyTorch's documentation
    # asks (libraries load and allocate outside the capture).
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            op(a)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()

    def busy():
        # Launches only, into preallocated tensors: what another thread
        # may do while a capture in global mode runs. The library's own
        # queries and waits on its events come with them.
        m = torch.randn(2048, 2048, device=dev)
        o = torch.empty_like(m)
        side = torch.cuda.Stream()
        try:
            with torch.cuda.stream(side):
                while not stop.is_set():
                    torch.mm(m, m, out=o)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=busy)
    t.start()
    captured = right = 0
    want = op(a)
    try:
        for _ in range(20):
            g = torch.cuda.CUDAGraph()
            x = a.clone()
            with torch.cuda.graph(g):
                y = op(x)
            captured += 1
            x.copy_(a)
            g.replay()
            torch.cuda.synchronize()
            right += bool(torch.allclose(y, want, rtol=1e-4, atol=1e-3))
    except RuntimeError as e:
        errors.append(str(e))
    stop.set()
    t.join()
    torch.cuda.synchronize()
    return say(captured == 20 and right == 20 and not errors, "capture",
               "%d of 20 captures, %d replays right%s" %
               (captured, right, "; " + errors[0] if errors else ""))


def check_retain():
    import torch
    a = torch.randn(2048, 2048, device="cuda")
    want = (a @ a).sum().item()
    drv = Driver()
    ctx = ctypes.c_void_p()
    failed = wrong = 0
    for _ in range(50):
        b = a @ a                           # in flight through the cycle
        failed += drv.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx),
                           0) != 0
        failed += drv.call("cuDevicePrimaryCtxRelease_v2", 0) != 0
        wrong += abs(b.sum().item() - want) > 1e-3 * abs(want)
    return say(failed == 0 and wrong == 0, "retain",
               "50 retain/release pairs: %d failed, %d results wrong" %
               (failed, wrong))


def cycles(n, make, drop):
    """n times: make a context current (make(drv) returns it), load the
    kernel, launch it three times, synchronise, drop(drv, ctx). The
    number of cycles that failed."""
    drv = Driver()
    failed = 0
    for _ in range(n):
        try:
            ctx = make(drv)
            fn = drv.spin_function()
            drv.spin(fn, 1000000, 3)
            drv.check("cuCtxSynchronize")
            drop(drv, ctx)
        except RuntimeError as e:
            failed += 1
            print("# " + str(e), flush=True)
    return failed


def check_ctxcycle():
    failed = cycles(20, lambda drv: drv.ctx_create(0),
                    lambda drv, ctx: drv.check("cuCtxDestroy_v2", ctx))
    return say(failed == 0, "ctxcycle", "20 contexts: %d failed" % failed)


def primary(drv):
    ctx = ctypes.c_void_p()
    drv.check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), 0)
    drv.check("cuCtxSetCurrent", ctx)
    return ctx


def check_reset():
    failed = cycles(5, primary,
                    lambda drv, ctx: drv.check("cuDevicePrimaryCtxReset_v2", 0))
    return say(failed == 0, "reset", "5 resets: %d failed" % failed)


def check_pools():
    drv = Driver()
    primary(drv)
    mib = 1 << 20
    bad = 0

    def pool(loc_type):
        props = MemPoolProps()
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED
        props.location.type = loc_type
        props.location.id = 0
        p = ctypes.c_void_p()
        r = drv.call("cuMemPoolCreate", ctypes.byref(p), ctypes.byref(props))
        return p if r == 0 else r

    def from_pool(p, n):
        ptr = ctypes.c_uint64()
        r = drv.call("cuMemAllocFromPoolAsync", ctypes.byref(ptr),
                     ctypes.c_size_t(n), p, None)
        drv.call("cuStreamSynchronize", None)
        return r

    on_gpu = pool(CU_MEM_LOCATION_TYPE_DEVICE)
    if isinstance(on_gpu, int):
        return say(False, "pools", "cuMemPoolCreate on the GPU: %d" % on_gpu)
    r1 = from_pool(on_gpu, 768 * mib)
    ptr = ctypes.c_uint64()
    r2 = drv.call("cuMemAlloc_v2", ctypes.byref(ptr),
                  ctypes.c_size_t(512 * mib))
    bad += r1 != 0
    bad += r2 != CUDA_ERROR_OUT_OF_MEMORY
    what = "GPU pool 768 MiB: %d, cuMemAlloc 512 MiB more: %d" % (r1, r2)
    host = pool(CU_MEM_LOCATION_TYPE_HOST)
    if isinstance(host, int):
        what += "; no pool in host memory on this driver (%d)" % host
    else:
        r3 = from_pool(host, 768 * mib)
        bad += r3 != 0
        what += ", host pool 768 MiB: %d" % r3
    return say(bad == 0, "pools", what)


CHECKS = {"capture": check_capture, "retain": check_retain,
          "ctxcycle": check_ctxcycle, "reset": check_reset,
          "pools": check_pools}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CHECKS:
        sys.exit("usage: lib-paths.py " + "|".join(CHECKS))
    sys.exit(CHECKS[sys.argv[1]]())
