#!/usr/bin/env python3
"""A whole `slackindex search` process to its first line of output, and `--version`, for several builds
interleaved run by run (issue 54: ≤ 15 ms for a selective query at 1M). Each run starts the process, reads one line
of its stdout (the first hit's header) and takes the time since the start; the rest of the output is drained.

    Benchmarks/scripts/first-line.py RUNS QUERY BINARY=ARCHIVE [BINARY=ARCHIVE ...]

e.g. `first-line.py 25 flimflam .build/release/slackindex=big.sqlite /tmp/old-slackindex=big-old.sqlite`.
Prints each build's median and minimum, in ms.
"""
import statistics
import subprocess
import sys
import time

runs, query = int(sys.argv[1]), sys.argv[2]
builds = [argument.split("=", 1) for argument in sys.argv[3:]]
first_line = {binary: [] for binary, _ in builds}
version = {binary: [] for binary, _ in builds}


def timed(command):
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    process.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    process.stdout.read()
    process.wait()
    return elapsed


for _ in range(runs):
    for binary, archive in builds:
        first_line[binary].append(timed([binary, "--db", archive, "search", query, "--limit", "5"]))
        version[binary].append(timed([binary, "--version"]))
for binary, _ in builds:
    print(f"{binary}: search first line median {statistics.median(first_line[binary]):.1f} ms "
          f"(min {min(first_line[binary]):.1f}), --version {statistics.median(version[binary]):.1f} ms")
