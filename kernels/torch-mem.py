#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""PyTorch and device memory limits, for kernels/h200/mem.sh.

Like torch-train.py it knows nothing of gpusched: the limit reaches it
only through libgpusched (LD_PRELOAD, GPUSCHED_MEM_LIMIT). Each command
prints one JSON line.

  oom        what torch.cuda.mem_get_info() says, then 1 GiB tensors until
             torch raises OutOfMemoryError; then everything is freed and the
             program goes on (allocates and computes again). With
             --ready-file/--go-file it holds what it got in between, so
             that a neighbour can run beside it.
  neighbour  allocate --gib GiB in 1 GiB tensors (a process with no limit
             next to one with a limit), then free them.
  loop       allocate and free tensors of mixed sizes in a loop, through
             PyTorch's caching allocator, and time it: --reps runs of
             --iters each; with --empty-every K, torch.cuda.empty_cache()
             every K iterations, so that the driver is called often.
"""
import argparse
import ctypes
import json
import os
import statistics
import time

import torch

GIB = 1 << 30
OOM = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError


def info():
    free, total = torch.cuda.mem_get_info()
    return round(free / GIB, 3), round(total / GIB, 3)


class NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


def nvml_info():
    """NVML's total and free of device 0 (found with dlopen and dlsym, as
    pynvml does), or None where NVML is not there."""
    try:
        nv = ctypes.CDLL("libnvidia-ml.so.1")
        dev = ctypes.c_void_p()
        mem = NvmlMemory()
        if (nv.nvmlInit_v2() or
                nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) or
                nv.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(mem))):
            return None
        return round(mem.total / GIB, 3), round(mem.free / GIB, 3)
    except OSError:
        return None


def wait_file(path, timeout=120):
    t0 = time.monotonic()
    while not os.path.exists(path) and time.monotonic() - t0 < timeout:
        time.sleep(0.05)


def cmd_oom(args, out):
    dev = torch.device("cuda")
    torch.empty(1, device=dev)      # the context and the allocator
    out["free_gib"], out["total_gib"] = info()
    out["device_total_gib"] = round(
        torch.cuda.get_device_properties(0).total_memory / GIB, 3)
    out["nvml_total_gib"], out["nvml_free_gib"] = nvml_info() or (None, None)
    held, err = [], None
    try:
        while len(held) < args.max_gib:
            held.append(torch.empty(GIB, dtype=torch.uint8, device=dev))
    except OOM as e:
        err = e
    out["allocated_gib"] = len(held)
    out["error"] = type(err).__name__ if err else None
    out["error_msg"] = str(err).splitlines()[0][:160] if err else None
    out["free_at_oom_gib"] = info()[0]
    if args.ready_file:
        open(args.ready_file, "w").close()
        wait_file(args.go_file)
    held.clear()
    torch.cuda.empty_cache()
    out["free_after_free_gib"] = info()[0]
    # Going on: half as much again, and a computation on it.
    n = max(1, out["allocated_gib"] // 2)
    x = torch.ones(n * GIB // 4, dtype=torch.float32, device=dev)
    out["recovered"] = bool(x.sum().item() == x.numel())
    out["recovered_gib"] = n


def cmd_neighbour(args, out):
    dev = torch.device("cuda")
    torch.empty(1, device=dev)
    out["free_gib"], out["total_gib"] = info()
    held, err = [], None
    try:
        while len(held) < args.gib:
            held.append(torch.empty(GIB, dtype=torch.uint8, device=dev))
    except OOM as e:
        err = e
    out["allocated_gib"] = len(held)
    out["error"] = type(err).__name__ if err else None
    held.clear()
    torch.cuda.empty_cache()


def cmd_loop(args, out):
    dev = torch.device("cuda")
    sizes = [1 << 20, 3 << 20, 16 << 20, 48 << 20, 256 << 20, 5 << 20]
    torch.empty(1, device=dev)

    def run(n):
        for i in range(n):
            x = torch.empty(sizes[i % len(sizes)], dtype=torch.uint8, device=dev)
            del x
            if args.empty_every and i % args.empty_every == args.empty_every - 1:
                torch.cuda.empty_cache()

    run(args.iters // 10)           # warm the cache
    rates = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        run(args.iters)
        rates.append(args.iters / (time.perf_counter() - t0))
    out["iters"] = args.iters
    out["empty_every"] = args.empty_every
    out["best_per_s"] = round(max(rates), 1)
    out["median_per_s"] = round(statistics.median(rates), 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["oom", "neighbour", "loop"])
    ap.add_argument("--label", default="torch-mem")
    ap.add_argument("--max-gib", type=int, default=1024)
    ap.add_argument("--gib", type=int, default=60)
    ap.add_argument("--ready-file")
    ap.add_argument("--go-file")
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--empty-every", type=int, default=0)
    args = ap.parse_args()
    out = {"label": args.label, "pid": os.getpid(),
           "mem_limit": os.environ.get("GPUSCHED_MEM_LIMIT"),
           "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF")}
    {"oom": cmd_oom, "neighbour": cmd_neighbour, "loop": cmd_loop}[args.command](args, out)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
