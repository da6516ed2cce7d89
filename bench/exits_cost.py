#!/usr/bin/python3
"""What the kernel's exit records cost (issue 66 item 3: taskstats as root, the job's tmpfs and
/dev/shm): the tool at -i 0.1 --cgroup off over `sleep SECS`, its CPU per sample from wait4's
rusage (the tool's own, startup included) over the samples it wrote, once with nothing beside it
and once beside a loop that runs /bin/true again and again (each exit on the machine is one
record the tool reads and drops); with BASE_BUILD_DIR, the same for that build, interleaved, so
that a shared machine's drift falls on both. Prints figures, asserts nothing.

Usage: bench/exits_cost.py BUILD_DIR [SECS] [BASE_BUILD_DIR]"""
import os
import statistics
import subprocess
import sys
import tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 8.0
BASE = sys.argv[3] if len(sys.argv) > 3 else None
ROUNDS = 3


def per_sample_us(build, load):
    """CPU microseconds per sample of one run of the tool in build."""
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0")
    loop = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"]) if load else None
    fd, out = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        p = subprocess.Popen([os.path.join(build, "resource-tracker"), "-i", "0.1", "--cgroup", "off", "-o", out,
                              "--", "sleep", str(SECS)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        with open(out) as f:
            n = sum(1 for _ in f)
        return (ru.ru_utime + ru.ru_stime) / max(n, 1) * 1e6
    finally:
        if loop:
            loop.kill()
            loop.wait()
        os.unlink(out)


def main():
    builds = [("this", BUILD)] + ([("base", BASE)] if BASE else [])
    for load in (False, True):
        got = {name: [] for name, _ in builds}
        for _ in range(ROUNDS):
            for name, build in builds:
                got[name].append(per_sample_us(build, load))
        for name, _ in builds:
            print(f"{'beside /bin/true loop' if load else 'quiet'}: {name} build: us/sample "
                  + " ".join(f"{x:.0f}" for x in got[name]) + f", median {statistics.median(got[name]):.0f}")


if __name__ == "__main__":
    main()
