#!/usr/bin/python3
"""What the watch of the job's tmpfs between walks costs (issue 66 item 3, fswatch.c: fanotify
wakes a thread at the job's writes, which reads the used blocks at most every 20 ms): the tool
at -i 0.1 --cgroup off (root) over a job that mounts a tmpfs of its own (unshare -m) and writes
64 KiB to it every millisecond for SECS; the tool's own CPU (every thread's schedstat, ns) over
the middle of the run, per sample (10 a second), and per reading of the watch where the build
has one; with BASE_BUILD_DIR, the same for that build, interleaved (a shared machine's drift
falls on both). Prints figures, asserts nothing.

Usage: bench/fswatch_cost.py BUILD_DIR [SECS] [BASE_BUILD_DIR]"""
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 6.0
BASE = sys.argv[3] if len(sys.argv) > 3 else None
ROUNDS = 3

JOB = r"""
import ctypes, os, subprocess, sys, time
if ctypes.CDLL(None, use_errno=True).unshare(0x00020000) != 0:
    sys.exit(8)
subprocess.run(["mount", "--make-rprivate", "/"], check=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "rt-bench", sys.argv[1]], check=True)
end = time.monotonic() + float(sys.argv[2])
chunk = b"\x05" * 65536
with open(os.path.join(sys.argv[1], "f"), "wb") as f:
    while time.monotonic() < end:
        f.seek(0)
        f.write(chunk)
        f.flush()
        time.sleep(0.001)
"""


def tool_ns(pid):
    """The tool's CPU so far (ns, all its threads), and its watch thread's (None: none)."""
    total, watch = 0, None
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(task + "/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(task + "/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        total += ns
        if comm == "rt-fswatch":
            watch = ns
    return total, watch


def run(build):
    """(the tool's CPU per sample in µs over the middle of the run, the watch thread's share)."""
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0")
    d = tempfile.mkdtemp(prefix="rt-fswatch-bench-")
    mnt = os.path.join(d, "mnt")
    os.mkdir(mnt)
    try:
        p = subprocess.Popen([os.path.join(build, "resource-tracker"), "-i", "0.1", "--cgroup", "off", "-o",
                              os.path.join(d, "out.jsonl"), "--", "/usr/bin/python3", "-c", JOB, mnt, str(SECS)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        a, wa = tool_ns(p.pid)
        t0 = time.monotonic()
        time.sleep(SECS - 2.5)
        b, wb = tool_ns(p.pid)
        span = time.monotonic() - t0
        p.wait()
        per = (b - a) / 1e3 / (span / 0.1)
        return per, (None if wb is None else (wb - (wa or 0)) / max(b - a, 1))
    finally:
        subprocess.run(["rm", "-rf", d])


def main():
    if os.geteuid() != 0:
        sys.exit("root only (mount, fanotify)")
    builds = [("this", BUILD)] + ([("base", BASE)] if BASE else [])
    got = {name: [] for name, _ in builds}
    share = []
    for _ in range(ROUNDS):
        for name, build in builds:
            per, w = run(build)
            got[name].append(per)
            if name == "this" and w is not None:
                share.append(w)
    for name, _ in builds:
        print(f"{name} build: us/sample " + " ".join(f"{x:.0f}" for x in got[name])
              + f", median {statistics.median(got[name]):.0f}")
    if share:
        print("the watch thread's share of the tool's CPU: " + " ".join(f"{x:.0%}" for x in share))
    if BASE:
        print(f"ratio this/base: {statistics.median(got['this']) / statistics.median(got['base']):.2f}")


if __name__ == "__main__":
    main()
