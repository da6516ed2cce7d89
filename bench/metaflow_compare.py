#!/usr/bin/python3
"""Benchmark, prints figures and asserts nothing: the cost of `@track_resources` on a real
Metaflow step (Metaflow's source from ../shared/testdata/metaflow or --metaflow), ours (python/
over the C library) against the Python tracker's own decorator (src/ of a SpareCores/
resource-tracker checkout, --python-tracker-src or $PYTHON_TRACKER_SRC), and no decorator.
Cards are off (create_card=False) so that only the tracking is compared. The step spins a fixed
Python loop (timed inside the step), then sleeps --seconds; runs of the variants interleave:
  work_s      the loop's wall time inside the step (its slowdown: the tracking's interference)
  procs       processes under the task process during the step (the tracking's own)
  run_cpu_s   the whole `flow.py run`'s CPU (user+system from wait4, children included);
              +cpu_s is that minus the undecorated run's (import, start, samples, stop)
  ms/sample   the tracking's on-CPU time while the step sleeps (schedstat of the threads started
              after the flow's import, and of the task's descendant processes), per sample,
              less the same figure of the undecorated run
Usage: /usr/bin/python3 bench/metaflow_compare.py [--python-tracker-src DIR] [--metaflow DIR]
       [--seconds 20] [--interval 1] [--repeat 3]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLOW = '''
import os, time
from metaflow import FlowSpec, step{imp}

TASKS0 = set(os.listdir("/proc/self/task"))  # this process's threads before any hook ran


def descendants(pid):
    kids = {{}}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{{d}}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def on_cpu_ns(path):
    try:
        with open(path + "/schedstat") as f:
            return int(f.read().split()[0])
    except OSError:
        return 0


def tracking_ns():
    """on-CPU time of the threads started after this module was imported (ours: the
    tracker's) and of every descendant process (the Python tracker's two)"""
    me = os.getpid()
    new = set(os.listdir(f"/proc/{{me}}/task")) - TASKS0
    return (sum(on_cpu_ns(f"/proc/{{me}}/task/{{t}}") for t in new)
            + sum(on_cpu_ns(f"/proc/{{k}}") for k in descendants(me)))


class BenchFlow(FlowSpec):
    {deco}
    @step
    def start(self):
        t = time.perf_counter()
        x = 0
        for i in range(30_000_000):
            x += i * i % 7
        self.work_s = time.perf_counter() - t
        self.procs = len(descendants(os.getpid()))
        c1, t1 = tracking_ns(), time.monotonic()
        time.sleep({sleep})
        c2, t2 = tracking_ns(), time.monotonic()
        self.per_sample_ms = (c2 - c1) / 1e6 / ((t2 - t1) / {interval})
        self.next(self.end)

    @step
    def end(self):
        print("BENCH", self.work_s, self.procs, self.per_sample_ms)


if __name__ == "__main__":
    BenchFlow()
'''


def run_flow(variant, src, metaflow, sleep, interval, tmp):
    deco = "" if variant == "none" else f"@track_resources(create_card=False, interval={interval})"
    imp = "" if variant == "none" else ", track_resources"
    flow = os.path.join(tmp, "bench_flow.py")
    with open(flow, "w") as f:
        f.write(FLOW.format(deco=deco, imp=imp, sleep=sleep, interval=interval))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, metaflow) if p),
               USERNAME="bench", METAFLOW_HOME=os.path.join(tmp, "mfhome"),
               METAFLOW_DATASTORE_SYSROOT_LOCAL=tmp, TRACKER_CLOUD_DISCOVERY="0",
               TRACKER_KEEPER_URL="off", PYTHONDONTWRITEBYTECODE="1")
    env.pop("METAFLOW_CARD_LOCALROOT", None)
    p = subprocess.Popen([sys.executable, flow, "--no-pylint", "run"], cwd=tmp, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.stdout.close()
    if status != 0:
        raise SystemExit(f"{variant}: the flow failed:\n{out[-2000:]}")
    line = next(l for l in out.splitlines() if "BENCH" in l)
    work_s, procs, per_sample = line.split("BENCH", 1)[1].split()
    return float(work_s), int(procs), ru.ru_utime + ru.ru_stime, float(per_sample)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python-tracker-src", default=os.environ.get("PYTHON_TRACKER_SRC"))
    ap.add_argument("--metaflow", default=os.path.join(REPO, "..", "shared", "testdata", "metaflow"))
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    variants = [("none", os.path.join(REPO, "python")), ("ours", os.path.join(REPO, "python"))]
    if a.python_tracker_src:
        variants.append(("python-tracker", a.python_tracker_src))
    res = {}
    for _ in range(a.repeat):  # interleaved, so that a noisy minute hits every variant
        for name, src in variants:
            tmp = tempfile.mkdtemp(prefix="mfbench-")
            try:
                res.setdefault(name, []).append(
                    run_flow(name, src, os.path.abspath(a.metaflow), a.seconds, a.interval, tmp))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'variant':16} {'work_s':>8} {'procs':>5} {'run_cpu_s':>9} {'+cpu_s':>7} {'ms/sample':>9}"
          f"   (medians of {a.repeat}; interval {a.interval} s, {a.seconds:.0f} s idle in the step)")
    med = {n: [sorted(c)[len(c) // 2] for c in zip(*rows)] for n, rows in res.items()}
    for name, (work, procs, cpu, per) in med.items():
        base = med["none"]
        print(f"{name:16} {work:8.3f} {procs:5d} {cpu:9.3f} {cpu - base[2]:7.3f} {per - base[3]:9.3f}"
              f"   work {(work / base[0] - 1) * 100:+.1f}%")


if __name__ == "__main__":
    main()
