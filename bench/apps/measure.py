#!/usr/bin/env python3
"""Standalone application sketches: build each program in this directory with
`tern build -O2`, run the pairs interleaved REPS times, and print the median
CPU time (user+sys) and the peak resident memory of each, with the ratio of
each program to the first of its group. Usage: measure.py TERN [REPS]."""

import os
import resource
import subprocess
import statistics
import sys
import tempfile

GROUPS = [["graph_vec", "graph_vec_pool", "graph_append"], ["bytes_put_u8", "bytes_append"]]


def run(exe):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, out


def peak_kib(launcher, exe, tmp):
    # Through tern bench's launcher: measured from this Python process, the
    # child's ru_maxrss would count the interpreter's image it was forked from.
    rss = os.path.join(tmp, "peak.rss")
    subprocess.run([launcher, rss, exe], capture_output=True, check=True)
    with open(rss) as f:
        return int(f.read())


def main():
    tern = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp(prefix="tern-apps-")
    launcher = os.path.join(tmp, "launcher")
    subprocess.run(["cc", "-O2", "-o", launcher,
                    os.path.join(here, "..", "workloads", "c", "launcher.c")], check=True)
    for group in GROUPS:
        exes = {}
        for name in group:
            exe = os.path.join(tmp, name)
            subprocess.run([tern, "build", "-O2", os.path.join(here, name + ".tern"), "-o", exe],
                           check=True)
            exes[name] = exe
        times = {name: [] for name in group}
        outputs = set()
        for _ in range(reps):
            for name in group:
                cpu, out = run(exes[name])
                times[name].append(cpu)
                outputs.add(out)
        assert len(outputs) == 1, f"outputs differ in {group}"
        base = statistics.median(times[group[0]])
        for name in group:
            med = statistics.median(times[name])
            print(f"{name:14} {med * 1000:8.1f} ms  x{med / base:5.2f}  {peak_kib(launcher, exes[name], tmp) / 1024:7.1f} MiB")


if __name__ == "__main__":
    main()
