#!/usr/bin/python3
"""The memory watch's cost (issue 49): the tool in wrapper mode (the job's own cgroup: run as
root) at one sample a second over a job at rest (sleep) and over a job whose memory moves all
the time (a 1 GiB file read through the page cache again and again, its cache dropped each
time), for SECS seconds each. Prints the tool's own on-CPU time per second (the schedstat of
every thread of the tool, read just before the job ends: the job's own time is not in it) and
how many samples it wrote. Prints figures, asserts nothing.

Usage: bench/watch_cost.py BUILD_DIR [SECS]"""
import glob
import os
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
PY = "/usr/bin/python3"

MOVING = r"""
import os, sys, time
path, until = sys.argv[1], time.monotonic() + float(sys.argv[2])
buf = bytearray(1 << 20)
while time.monotonic() < until:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    while os.readv(fd, [buf]) and time.monotonic() < until:
        pass
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
time.sleep(1.5)  # the tool's figures are read meanwhile
"""
REST = "import sys, time; time.sleep(float(sys.argv[2]) + 1.5)"


def tool_ns(pid):
    total = 0
    for f in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            total += int(open(f).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def measure(name, code, path):
    out = tempfile.mktemp(suffix=".jsonl")
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0")
    p = subprocess.Popen([os.path.join(BUILD, "resource-tracker"), "-q", "-i", "1", "-o", out, "--",
                          PY, "-c", code, path, str(SECS)], env=env)
    time.sleep(SECS + 0.7)  # the job is in its last sleep: the tool's time so far
    ns = tool_ns(p.pid)
    p.wait()
    n = sum(1 for _ in open(out))
    os.unlink(out)
    print(f"{name}: tool {ns / 1e3 / SECS:.0f} us CPU per second over {SECS:.0f} s ({n} samples)")


def main():
    big = os.path.join(tempfile.mkdtemp(prefix="rt-watch-", dir=BUILD), "big.bin")
    chunk = bytes(range(256)) * 4096
    with open(big, "wb") as f:
        for _ in range(1024):
            f.write(chunk)
    try:
        measure("job at rest (sleep)", REST, big)
        measure("job streaming a 1 GiB file through the page cache", MOVING, big)
    finally:
        os.unlink(big)
        os.rmdir(os.path.dirname(big))


main()
