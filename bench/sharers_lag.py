#!/usr/bin/python3
"""How late the job's PSS follows a process outside the job that maps, then unmaps, a mapping
the job shares (issue 66 item 4), and what the tool spends a sample meanwhile. The scenario is
tests/e2e/sharers_scenario.py's: a job of 4 processes sharing one mapping of SIZE MiB (a file
mapped MAP_SHARED, or a SysV shm segment), an outsider mapping it, touching every page, holding
it and unmapping it, ROUNDS times. The lag of one event is the first sample's timestamp (the
JSON line's timestamp_secs) from the event's start on whose pss_mib is within a tenth of the
way from the old level to the new one (the kernel's sum of Pss over the job's processes, read
while nothing moves), less the outsider's own timestamp of the event's end (0 when the sample
came while the outsider was still touching). The cost: the tool's own on-CPU time per sample
(the schedstat of each of its threads) from the job's mapping to the outsider's end; with
--rounds 0 no outsider comes and it is over HOLD seconds of the steady job. Prints figures,
asserts nothing.

Usage: bench/sharers_lag.py BUILD_DIR [-i INTERVAL] [--kind file|shm] [--rounds N] [--hold SECS]
       [--size MIB] [--stress] [--cgroup off]  (LAG_DUMP=1: each sample too)"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
from sharers_scenario import run  # noqa: E402
from sharers_cost import tool_cpu  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("-i", type=float, default=0.1)
    ap.add_argument("--kind", choices=["file", "shm"], default="file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hold", type=float, default=3.0)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--stress", action="store_true")
    ap.add_argument("--cgroup")
    a = ap.parse_args()
    env = dict(os.environ, TRACKER_KEEPER_URL="off", TRACKER_CLOUD_DISCOVERY="0")
    stress = subprocess.Popen(["stress-ng", "--cpu", "2", "-q"], stdout=subprocess.DEVNULL) if a.stress else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            levels, times, samples, (cpu, wall) = run(
                os.path.join(a.build, "resource-tracker"), tmp, env, a.kind, a.i, a.rounds, a.hold, a.size,
                ["--cgroup", a.cgroup] if a.cgroup else [], steady=tool_cpu)
    finally:
        if stress:
            stress.terminate()
            stress.wait()
    print(f"-i {a.i} {a.kind} {a.size} MiB{' beside stress-ng --cpu 2' if a.stress else ''}"
          f"{' --cgroup ' + a.cgroup if a.cgroup else ''}: levels " + " ".join(f"{v:.0f}" for v in levels))
    lags = {"map": [], "unmap": []}
    for k in range(len(times) // 2):
        start, end, old, new = times[2 * k], times[2 * k + 1], levels[k], levels[k + 1]
        lag = next((max(0.0, t - end) for t, v in samples if t >= start and abs(v - new) <= 0.1 * abs(new - old)), None)
        lags["unmap" if k % 2 else "map"].append(lag)
    for ev, ls in lags.items() if a.rounds else ():
        print(f"  {ev} lag s: " + " ".join("never" if l is None else f"{l:.2f}" for l in ls))
    if os.environ.get("LAG_DUMP") and times:
        print(" ".join(f"{t - times[0]:.2f}:{v:.0f}" for t, v in samples if t >= times[0] - 1))
        print(" ".join(f"{t - times[0]:.2f}" for t in times))
    print(f"  tool CPU {1e3 * cpu / wall:.2f} ms/s, {1e6 * cpu / (wall / a.i):.0f} us per sample")


main()
