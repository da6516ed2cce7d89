#!/usr/bin/python3
"""What NVML costs the tool (issue 65): the tool at one sample a second (-i 1) in wrapper mode
over `sleep SECS` with `--cgroup off`, on the fake NVML (tests/stubs/fake_nvml.c) as one H200
whose calls burn the CPU the real calls burn there (driver 580: nvmlInit 37 ms once, the energy
counter 3.9 ms a call, per-process utilization 1.4 ms, a violation counter 0.55 ms, a GPM
sample 0.23 ms, every other call 20 us; the config read once), against the same run with NVML
off (no library), and with the fake's costs off (what the tool's own NVML code costs).

Steady state: the on-CPU time of every thread of the tool (schedstat: the NVML worker too) from
the moment its 2nd sample lands in the -o file to the moment its last sample before the job's
end lands, over the samples in between; the start (nvmlInit among it) is printed apart, and the
whole run's CPU (wait4's rusage) per sample beside. The variants run interleaved, ROUNDS rounds;
per round and the median: us per sample with NVML, without, and their ratio (issue 65's target:
at most 1.5 at -i 1). Then how many calls of each NVML function a sample made (the fake's call
counts over the whole run, $FAKE_NVML_CALLS_OUT, over its samples). Prints figures, asserts
nothing.

Usage: bench/gpu_cost.py [BUILD_DIR] [--rounds N] [--secs S] [--interval I]"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

H200 = ("gpu uuid=GPU-6a4c0f7e-0000-4000-8000-000000000200 name=NVIDIA_H200 bus=00000000:19:00.0 util=97 "
        "mem_total=150754820096 mem_used=35433480192 mem_reserved=644874240 temp=61 power_mw=540000 clock=1980 "
        "cores=16896 cc=9.0 power_limit_mw=700000 energy_mj=1000000\n"
        "gpm 0 graphics=99 sm=95.1 occ=14.1 int=2 tensor=92.4 hmma=92.4 dfma=0 imma=0 dram=16 fp64=0 fp32=0 fp16=1 "
        "pcie_tx=120 pcie_rx=850 nvlink_tx=0 nvlink_rx=0\n"
        "children 0 mem=35433480192 sm=95\n")
VARIANTS = (("nvml", H200), ("off", None), ("free", H200 + "cost off\n"))


def tool_ns(pid):
    """On-CPU ns of every live thread of pid (schedstat's first field)."""
    total = 0
    for f in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(f) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def alive(pid):
    """Whether the child pid runs yet (not reaped: wait4 gives its rusage after)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def lines_in(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def run(build, name, cfg_text, secs, interval, tmp):
    """One run of the tool: its steady-state CPU per sample, its start, its whole run, its calls."""
    out = os.path.join(tmp, f"{name}.jsonl")
    calls = os.path.join(tmp, f"{name}.calls")
    for p in (out, calls):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", TRACKER_KEEPER_URL="off")
    if cfg_text is None:
        env["TRACKER_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
    else:
        cfg = os.path.join(tmp, f"{name}.cfg")
        with open(cfg, "w") as f:
            f.write(cfg_text)
        env.update(TRACKER_NVML_LIBRARY=os.path.join(build, "libfake-nvml.so"), FAKE_NVML_CONFIG=cfg,
                   FAKE_NVML_LOAD_ONCE="1", FAKE_NVML_CALLS_OUT=calls)
    p = subprocess.Popen([os.path.join(build, "resource-tracker"), "-i", str(interval), "-q", "-o", out,
                          "--cgroup", "off", "--", "sleep", str(secs)], env=env)
    seen = {}  # line count -> the tool's on-CPU ns when that line was first seen
    n = 0
    while alive(p.pid):
        k = lines_in(out)
        if k != n:
            ns = tool_ns(p.pid)
            if ns and alive(p.pid):
                seen.setdefault(k, ns)
            n = k
        time.sleep(0.005)
    _, status, ru = os.wait4(p.pid, 0)  # reaped here, for its rusage
    p.returncode = os.waitstatus_to_exitcode(status)
    total = lines_in(out)
    rusage_cpu = ru.ru_utime + ru.ru_stime
    # the last sample before the job's end: the line before the final one (the end's own sample)
    last = max((k for k in seen if 2 < k < total), default=None)
    res = {"samples": total, "steady": None, "start_ms": None, "calls": {}}
    if 2 in seen and last is not None:
        res["steady"] = (seen[last] - seen[2]) / 1e3 / (last - 2)
        res["start_ms"] = seen[2] / 1e6
        res["steady_n"] = last - 2
    res["whole"] = rusage_cpu * 1e6 / total if total else None
    if os.path.exists(calls):
        with open(calls) as f:
            for line in f:
                w = line.split()
                if len(w) == 2:
                    res["calls"][w[0]] = int(w[1])
    return res


def fmt(v, spec=".0f"):
    return "-" if v is None else format(v, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


def figures(res):
    """A round's figures by (variant, figure), and the two ratios to NVML off."""
    v = {(name, key): res[name][key] for name in res for key in ("steady", "start_ms", "whole")}
    v["ratio"] = ratio(v["nvml", "steady"], v["off", "steady"])
    v["free_ratio"] = ratio(v["free", "steady"], v["off", "steady"])
    return v


def line(label, v, tail=""):
    """A row of the table."""
    print(f"{label:>6} {fmt(v['nvml', 'steady']):>7} {fmt(v['off', 'steady']):>6} {fmt(v['ratio'], '.2f'):>6}"
          f" {fmt(v['free', 'steady']):>6} {fmt(v['free_ratio'], '.2f'):>8}"
          f" | {fmt(v['nvml', 'start_ms'], '.1f'):>8}/{fmt(v['off', 'start_ms'], '.1f'):<8}"
          f" | {fmt(v['nvml', 'whole']):>8}/{fmt(v['off', 'whole'])}/{fmt(v['free', 'whole'])}{tail}")


def median(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=12)
    ap.add_argument("--interval", type=float, default=1)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rt-gpu-cost-")
    print(f"tool at -i {a.interval:g} over sleep {a.secs:g}, --cgroup off; one H200 on the fake NVML "
          f"(H200 call costs), against NVML off and the fake's costs off; {a.rounds} rounds, interleaved")
    print("us per sample, steady state (schedstat of every thread, from the 2nd sample to the last before the end)")
    print(f"{'round':>6} {'nvml':>7} {'off':>6} {'ratio':>6} {'free':>6} {'free/off':>8}"
          f" | start ms nvml/off | whole run us/sample nvml/off/free")
    table, res = [], {}
    for r in range(a.rounds):
        order = VARIANTS[r % 3:] + VARIANTS[:r % 3]  # each variant first once in three rounds
        res = {name: run(a.build, name, cfg, a.secs, a.interval, tmp) for name, cfg in order}
        table.append(figures(res))
        line(str(r + 1), table[-1], f" ({res['nvml']['samples']}/{res['off']['samples']}/{res['free']['samples']} samples)")
    if table:
        line("median", {k: median(row[k] for row in table) for k in table[0]})
    last = res.get("nvml", {"calls": {}})
    if last["calls"] and last["samples"]:
        print(f"NVML calls a sample (the last round's, whole run: {last['samples']} samples; the start's one-off "
              "calls spread over them):")
        print("  " + "  ".join(f"{k} {v / last['samples']:.2f}" for k, v in last["calls"].items() if v))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
