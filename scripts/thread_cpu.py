#!/usr/bin/env python3
"""Each thread's share of one core over SECONDS (10), the busiest LINES (12) first, from the
kernel's own counters (/proc/*/task/*/stat). To see which threads take the CPU while the page
trains (Chromium's renderer runs the training worker and its pool as threads of one process):
    python3 scripts/thread_cpu.py [SECONDS] [LINES]
"""
import glob
import os
import sys
import time


def snapshot():
    """(pid, tid) -> (name, CPU ticks in user and kernel mode) for every thread now running."""
    threads = {}
    for path in glob.glob("/proc/[0-9]*/task/[0-9]*/stat"):
        try:
            with open(path) as stat:
                line = stat.read()
        except OSError:
            continue  # the thread ended
        name = line[line.index("(") + 1 : line.rindex(")")]
        fields = line[line.rindex(")") + 2 :].split()
        pid, tid = path.split("/")[2], path.split("/")[4]
        threads[(pid, tid)] = (name, int(fields[11]) + int(fields[12]))
    return threads


seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
lines = int(sys.argv[2]) if len(sys.argv) > 2 else 12
ticks = os.sysconf("SC_CLK_TCK")
before, started = snapshot(), time.monotonic()
time.sleep(seconds)
after, elapsed = snapshot(), time.monotonic() - started
shares = sorted(
    ((after[key][1] - before[key][1]) / (elapsed * ticks) * 100, after[key][0], key)
    for key in before.keys() & after.keys()
)
for share, name, (pid, tid) in reversed(shares[-lines:]):
    if share >= 0.5:
        print(f"{share:6.1f} %  {name:<20} process {pid}, thread {tid}")
