#!/usr/bin/python3
"""The sharers' re-reads and the machine's noise (issue 53's CI failure): the tool in wrapper
mode at -i 0.1 over a job of 4 processes mapping one 512 MiB file, for SECS seconds, once with
nothing beside it and once beside a loop that starts `sleep 0.05` again and again (each start
and exit moves the machine's page tables by a process's own tables: a move that could ask for a
re-read of the 4 rollups). Prints the tool's own on-CPU time per second (the schedstat of every
thread of the tool, read while the job still runs: the job's own time is not in it). Prints
figures, asserts nothing.

Usage: bench/sharers_cost.py BUILD_DIR [SECS]"""
import glob
import os
import subprocess
import sys
import tempfile
import time

MAIN = __name__ == "__main__"  # (bench/sharers_lag.py takes tool_cpu from here)
BUILD = sys.argv[1] if MAIN and len(sys.argv) > 1 else "build"
SECS = float(sys.argv[2]) if MAIN and len(sys.argv) > 2 else 10.0
PY = "/usr/bin/python3"

JOB = r"""
import mmap, os, sys, time
path, ready, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
def touch_all():  # maps the file and faults every page in: the mapping's tables are built
    view = mmap.mmap(os.open(path, os.O_RDONLY), 0, prot=mmap.PROT_READ)
    for off in range(0, len(view), 4096):
        view[off]
    return view
hold_r, hold_w = os.pipe()  # the children hold their mapping until the parent ends
for _ in range(3):
    if os.fork() == 0:
        os.close(hold_w)
        view = touch_all()
        os.read(hold_r, 1)
        os._exit(0)
view = touch_all()
open(ready, "w").close()
time.sleep(secs)
"""


def tool_cpu(pid):
    total = 0
    for f in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(f) as s:
                total += int(s.read().split()[0])
        except (OSError, ValueError):
            pass
    return total / 1e9


def one(tmp, data, churn):
    ready = os.path.join(tmp, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    env = dict(os.environ, TRACKER_KEEPER_URL="off", TRACKER_CLOUD_DISCOVERY="0")
    tool = subprocess.Popen([os.path.join(BUILD, "resource-tracker"), "-i", "0.1", "-q", "-o",
                             os.path.join(tmp, "out.jsonl"), "--", PY, "-c", JOB, data, ready, str(SECS + 2)],
                            env=env, stderr=subprocess.DEVNULL)
    while not os.path.exists(ready):
        if tool.poll() is not None:
            sys.exit("the job ended before it mapped its file")
        time.sleep(0.05)
    start, c0 = time.monotonic(), tool_cpu(tool.pid)
    while time.monotonic() - start < SECS:
        if churn:
            subprocess.run(["sleep", "0.05"])
        else:
            time.sleep(0.05)
    used, took = tool_cpu(tool.pid) - c0, time.monotonic() - start
    tool.wait()
    what = "beside a `sleep` started every 50 ms" if churn else "nothing beside it"
    print(f"{what}: tool {1e3 * used / took:.2f} ms CPU per second over {took:.0f} s")


if MAIN:
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "shared.bin")
        with open(data, "wb") as f:
            for _ in range(512):
                f.write(bytes(range(256)) * 4096)
        one(tmp, data, False)
        one(tmp, data, True)
