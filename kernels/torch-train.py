#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An ordinary PyTorch training loop, for running unmodified under libgpusched.

Nothing here knows about gpusched: the library reaches this program only
through LD_PRELOAD, gating the launches the CUDA runtime makes through
cuGetProcAddress. It trains a small MLP on random data for --seconds after
a common start instant (GPUSCHED_START_AT, CLOCK_REALTIME seconds, as the
kernels/ clients use) and prints one JSON line: steps, wall seconds, steps
per second. By default it reads the loss back every tenth step, as loops
that log do; --sync-each synchronizes the device after every step instead.
"""
import argparse
import json
import os
import time

import torch

from gs_torch import mlp, wait_start


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--label", default="torch-train")
    ap.add_argument("--sync-each", action="store_true",
                    help="torch.cuda.synchronize() after every step")
    args = ap.parse_args()

    dev = torch.device("cuda")
    model = mlp(args.width, dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.width, device=dev)
    y = torch.randint(0, 10, (args.batch,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(20):     # warm-up: cuBLAS handles, allocator, kernels
        step()
    torch.cuda.synchronize()

    wait_start()

    t0, c0 = time.monotonic(), time.process_time()
    steps = 0
    while time.monotonic() - t0 < args.seconds:
        loss = step()
        steps += 1
        if args.sync_each:
            torch.cuda.synchronize()
        elif steps % 10 == 0:
            loss.item()     # bounds the queue the way real loops log
    torch.cuda.synchronize()
    wall = time.monotonic() - t0
    print(json.dumps({"label": args.label, "pid": os.getpid(), "steps": steps,
                      "wall_s": round(wall, 4),
                      "cpu_s": round(time.process_time() - c0, 4),
                      "steps_per_s": round(steps / wall, 3),
                      "sync_each": args.sync_each,
                      "loss": round(float(loss), 4)}), flush=True)


if __name__ == "__main__":
    main()
