#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the table of a kernels/h200/run.sh run.

usage: summarize.py calib.json results.jsonl

calib.json: the --calibrate lines; results.jsonl: one JSON line per process,
labelled mode/case/index. Standard library only (the H200 image's python3).
"""
import json
import sys
from collections import OrderedDict


def lines(path):
    out = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except ValueError as e:
                    print("%s:%d: not JSON (%s)" % (path, n, e))
    except OSError as e:
        print("%s: %s" % (path, e))
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    calib, results = lines(argv[1]), lines(argv[2])

    print("calibration (alone, CUDA events; kernel time = overhead + iters / rate)")
    for c in calib:
        chk = ", ".join("%g us -> %.2f" % (x["solo_us"], x["measured_us"])
                        for x in c.get("check", []))
        print("  %-8s %s, %d SMs, grid %d x %d: %.3f iters/us, overhead %.2f us;"
              " measured %s" % (c["api"], c["device"], c["sms"], c["blocks"],
                                c["threads"], c["iters_per_us"],
                                c["overhead_us"], chk))

    cases = OrderedDict()
    for r in results:
        mode, case, _ = (r.get("label", "") + "//").split("/", 2)
        cases.setdefault((mode, case), []).append(r)

    print()
    hdr = "%-9s %-15s %-2s %-8s %-8s %9s %8s %7s %8s  %s" % (
        "mode", "case", "#", "api", "kernel", "kernels", "wall_s",
        "share", "late_us", "latency p50/p99/max us")
    print(hdr)
    print("-" * len(hdr))
    for (mode, case), rs in cases.items():
        busy = 0.0
        for r in rs:
            lat = r.get("latency_us")
            lat_s = ("%.0f / %.0f / %.0f" % (lat["p50"], lat["p99"], lat["max"])
                     if lat else "")
            print("%-9s %-15s %-2s %-8s %-8s %9d %8.3f %7.4f %8.0f  %s" % (
                mode, case, r.get("label", "").rsplit("/", 1)[-1], r["api"],
                "%gus%s" % (r["kernel_us"],
                            "/%gms" % (r["period_us"] / 1000)
                            if r["pattern"] == "periodic" else ""),
                r["kernels"], r["wall_s"], r["share"], r["start_late_us"],
                lat_s))
            busy += r["share"]
        if len(rs) > 1:
            print("%-9s %-15s %-2s %-8s %-8s %9s %8s %7.4f" % (
                "", "", "", "", "sum", "", "", busy))
    ready = [r.get("ready_ms", 0) for r in results]
    if ready:
        print("\nslowest init + warm-up: %.0f ms (GS_START_DELAY must exceed it)"
              % max(ready))
    late = [r for r in results if r.get("start_late_us", 0) > 1000]
    if late:
        print("\nWARNING: %d process(es) started over 1 ms late; raise "
              "GS_START_DELAY" % len(late))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
