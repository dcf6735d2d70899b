#!/usr/bin/env python3
"""The median wall time of a command over N runs, in ms: the benchmarks' one timer.

usage: bench/median-ms.py N COMMAND [ARG...]   (output and failures of the command are ignored)
"""
import statistics
import subprocess
import sys
import time

runs, cmd = int(sys.argv[1]), sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(times):.1f}")
