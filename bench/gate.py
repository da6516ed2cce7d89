#!/usr/bin/python3
"""The cost gate (issue 68): what the tool costs per sample in the shapes that regressed unseen
before, each as a ratio to the machine sample (the tool with no tree: its reference, measured
beside each case in the same run), held to the ceilings in bench/gate_ceilings (each with the
reason for its value). Prints the table either way; exits 1 when a ratio passes its ceiling
three times over (a measure that fails is taken again, the reference with it: the machine is
shared and noisy, a regression is not), 2 on a setup problem.

A case: the tool at -i 0.1 (-q, -o FILE) over its job; after a warm-up, the on-CPU time of every
thread of the tool (/proc/PID/task/*/schedstat, its first field) over a window, divided by the
samples written in that window (the -o file's lines). Its start, the job's start and its end
are outside the window. The tool's peak RSS (VmHWM) at the window's end, against the
reference's, is a ratio too.

Cases: the machine sample (the reference); a job of 1,000 sleeping processes in its own cgroup
and with --cgroup off; --pid trees of 200 and 1,000; a memory-heavy job (stress-ng's VM worker
over 300 MiB, in its own cgroup); a machine with one H200 on the fake NVML whose calls burn the CPU the
real calls burn there (bench/gpu_cost.py's figures), at -i 1.

Usage: bench/gate.py [BUILD_DIR] [--window SECS] [--only CASE[,CASE]]"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_cost import H200, lines_in, tool_ns  # noqa: E402  (the H200 and its calls' costs, one place)
from tree_scaling import hwm_kib  # noqa: E402

WARMUP = 1.5     # seconds after the first sample before the window opens
TRIES = 3        # a ratio over its ceiling is measured again, at most this many times in all
INTERVAL = 0.1

# A job of n sleeping processes (one parent, n - 1 children), ready when it prints "ready".
SLEEPERS = r"""
import os, sys, time
n = int(sys.argv[1])
for _ in range(n - 1):
    if os.fork() == 0:
        time.sleep(3600)
        os._exit(0)
print("ready", flush=True)
time.sleep(3600)
"""
# A memory-heavy job, the issue's: stress-ng's one VM worker over 300 MiB (it maps, writes and
# unmaps again and again: the charge and the faults move all the time).
STRESS_VM = ["stress-ng", "--vm", "1", "--vm-bytes", "300M", "--timeout", "600", "--quiet"]


class Case:
    """A shape: how the tool is started over its job, and the job (None: none)."""

    def __init__(self, name, args, job=None, env=None, interval=INTERVAL, pid_job=False, shell=None):
        self.name, self.args, self.job, self.env = name, args, job, env or {}
        self.interval, self.pid_job, self.shell = interval, pid_job, shell


def wait_ready(p, timeout=60):
    """Waits for a job's "ready" line."""
    line = p.stdout.readline() if p.stdout else ""
    if "ready" not in line:
        raise RuntimeError(f"job not ready: {line!r}")


def measure(build, case, window, tmp):
    """(us per sample, peak RSS in KiB, samples) of the tool over case's job."""
    out = os.path.join(tmp, f"{case.name}.jsonl")
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", TRACKER_KEEPER_URL="off",
               TRACKER_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    env.update(case.env)
    tool = [os.path.join(build, "resource-tracker"), "-i", str(case.interval), "-q", "-o", out] + case.args
    job = None
    err = open(os.path.join(tmp, f"{case.name}.err"), "w")
    try:
        if case.pid_job:  # the job first, the tool on its pid
            job = subprocess.Popen([sys.executable, "-c"] + case.job, stdout=subprocess.PIPE, text=True,
                                   start_new_session=True)
            wait_ready(job)
            p = subprocess.Popen(tool + ["--pid", str(job.pid)], env=env, stderr=err, start_new_session=True)
        elif case.job:  # wrapper mode: the tool starts it
            p = subprocess.Popen(tool + ["--", sys.executable, "-c"] + case.job, env=env, stdout=subprocess.PIPE,
                                 stderr=err, text=True, start_new_session=True)
            wait_ready(p)
        elif case.shell:
            p = subprocess.Popen(tool + ["--"] + case.shell, env=env, stderr=err, start_new_session=True)
        else:
            p = subprocess.Popen(tool, env=env, stderr=err, start_new_session=True)
        deadline = time.monotonic() + 60
        while lines_in(out) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(WARMUP)
        ns0, n0 = tool_ns(p.pid), lines_in(out)
        time.sleep(window)
        ns1, n1 = tool_ns(p.pid), lines_in(out)
        rss = hwm_kib(p.pid)
        samples = n1 - n0
        if samples <= 0:
            raise RuntimeError(f"{case.name}: no sample in the window")
        return (ns1 - ns0) / 1e3 / samples, rss, samples
    finally:
        err.close()
        for proc in (locals().get("p"), job):  # the tool ends its job (SIGTERM passed on)
            if proc is None or proc.poll() is not None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()


def read_ceilings(path):
    """{case: ceiling} from the file: 'CASE CEILING  REASON...' lines, '#' comments."""
    ceilings = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            try:
                ceilings[words[0]] = float(words[1])
            except (IndexError, ValueError):
                raise SystemExit(f"{path}:{n}: want 'CASE CEILING  REASON'")
    return ceilings


def cases(build, tmp):
    cfg = os.path.join(tmp, "h200.cfg")
    with open(cfg, "w") as f:
        f.write(H200)
    gpu_env = {"TRACKER_NVML_LIBRARY": os.path.join(build, "libfake-nvml.so"), "FAKE_NVML_CONFIG": cfg,
               "FAKE_NVML_LOAD_ONCE": "1"}
    return [
        Case("tree1000_cgroup", [], [SLEEPERS, "1000"]),
        Case("tree1000_no_cgroup", ["--cgroup", "off"], [SLEEPERS, "1000"]),
        Case("pid200", [], [SLEEPERS, "200"], pid_job=True),
        Case("pid1000", [], [SLEEPERS, "1000"], pid_job=True),
        Case("memory_heavy", [], None, shell=STRESS_VM),
        Case("gpu_h200", [], None, env=gpu_env, interval=1.0),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--window", type=float, default=4.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--ceilings", default=os.path.join(HERE, "gate_ceilings"))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if not os.access(os.path.join(build, "resource-tracker"), os.X_OK):
        print(f"bench/gate.py: no tool in {build}", file=sys.stderr)
        return 2
    ceilings = read_ceilings(a.ceilings)
    only = set(filter(None, a.only.split(",")))
    failed = []
    with tempfile.TemporaryDirectory(prefix="rt-gate-") as tmp:
        ref = Case("machine", [])
        todo = [c for c in cases(build, tmp) if not only or c.name in only]
        print(f"{'case':<20} {'us/sample':>10} {'machine':>9} {'ratio':>7} {'ceiling':>8} "
              f"{'rss ratio':>9} {'ceiling':>8}  tries")
        for c in todo:
            for attempt in range(1, TRIES + 1):
                rus, rrss, _ = measure(build, ref, a.window, tmp)
                us, rss, _ = measure(build, c, a.window if c.interval == INTERVAL else a.window * 3, tmp)
                ratio, rss_ratio = us / rus, rss / rrss if rrss else float("nan")
                cpu_max = ceilings.get(c.name)
                rss_max = ceilings.get(c.name + ".rss")
                over = (cpu_max is not None and ratio > cpu_max) or (rss_max is not None and rss_ratio > rss_max)
                if not over or attempt == TRIES:
                    break
            mark = " <- over" if over else ""
            print(f"{c.name:<20} {us:10.0f} {rus:9.0f} {ratio:7.2f} {cpu_max if cpu_max else '-':>8} "
                  f"{rss_ratio:9.2f} {rss_max if rss_max else '-':>8}  {attempt}{mark}", flush=True)
            if over:
                failed.append(c.name)
    if failed:
        print(f"bench/gate.py: over the ceiling ({a.ceilings}), {TRIES} times: {', '.join(failed)}")
        return 1
    print("bench/gate.py: every ratio under its ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
