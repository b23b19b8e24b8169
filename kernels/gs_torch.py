# SPDX-License-Identifier: GPL-2.0
"""What torch-train.py and torch-infer.py share: the model and the start."""
import os
import time

import torch


def mlp(width, dev):
    """The small MLP both loops run (three linear layers, ReLU between)."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(width, width), torch.nn.ReLU(),
        torch.nn.Linear(width, width), torch.nn.ReLU(),
        torch.nn.Linear(width, 10)).to(dev)


def wait_start():
    """The common start: GPUSCHED_START_FILE (gpusched-bench: say ready,
    then wait for the instant it writes), else GPUSCHED_START_AT."""
    path = os.environ.get("GPUSCHED_START_FILE")
    start_at = float(os.environ.get("GPUSCHED_START_AT", "0"))
    if path:
        with open(path + ".ready", "a") as f:
            f.write("%d\n" % os.getpid())
        while True:
            try:
                with open(path) as f:
                    text = f.read().strip()
                if text:
                    start_at = float(text)
                    break
            except FileNotFoundError:
                pass
            time.sleep(0.001)
    while time.time() < start_at:
        time.sleep(min(0.001, max(0.0, start_at - time.time())))
