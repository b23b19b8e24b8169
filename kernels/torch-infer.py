#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An ordinary PyTorch inference loop: one request every --period-ms.

Like torch-train.py it knows nothing of gpusched. After the common start
instant (GPUSCHED_START_AT) it runs a forward pass of a small MLP on a
fresh batch every period (an absolute schedule; a request that finishes
after the next tick pushes the schedule, and the skipped ticks are counted
as missed) and times each from submission to the result on the host. It
prints one JSON line with the latency percentiles in microseconds; with
--span, also the GPU span of each request (CUDA events before its first
kernel and after its last: the time its context must have the GPU).
"""
import argparse
import json
import math
import os
import time

import torch

from gs_torch import mlp, wait_start


def pct(v, q):
    if not v:
        return 0.0
    k = min(len(v), max(1, math.ceil(q * len(v))))
    return v[k - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--period-ms", type=float, default=10)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--label", default="torch-infer")
    ap.add_argument("--span", action="store_true",
                    help="also time each request's GPU span with CUDA events")
    args = ap.parse_args()

    dev = torch.device("cuda")
    model = mlp(args.width, dev).eval()
    x = torch.randn(args.batch, args.width, device=dev)

    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    spans = []

    def request():
        with torch.inference_mode():
            if args.span:
                ev[0].record()
            y = model(x).argmax(dim=1)
            if args.span:
                ev[1].record()
            return y.cpu()

    for _ in range(50):
        request()

    wait_start()

    period = args.period_ms / 1e3
    t0, c0 = time.monotonic(), time.process_time()
    nxt = t0
    lat = []
    missed = 0
    while nxt < t0 + args.seconds:
        now = time.monotonic()
        if now < nxt:
            time.sleep(nxt - now)
        sub = time.monotonic()
        request()
        done = time.monotonic()
        lat.append((done - sub) * 1e6)
        if args.span:
            spans.append(ev[0].elapsed_time(ev[1]) * 1e3)
        nxt += period
        while nxt < done:
            nxt += period
            missed += 1
    wall = time.monotonic() - t0
    cpu = time.process_time() - c0

    def dist(v):
        v.sort()
        return {"n": len(v), "p50": round(pct(v, 0.5), 1),
                "p99": round(pct(v, 0.99), 1),
                "max": round(v[-1] if v else 0, 1)}

    out = {"label": args.label, "pid": os.getpid(), "requests": len(lat),
           "missed_periods": missed, "wall_s": round(wall, 4),
           "cpu_s": round(cpu, 4),
           "latency_us": dist(lat)}
    if args.span:
        out["gpu_span_us"] = dist(spans)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
