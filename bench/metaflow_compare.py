#!/usr/bin/python3
"""Benchmark, prints figures and asserts nothing: the cost of `@track_resources` on a real
Metaflow step (Metaflow's source from ../shared/testdata/metaflow or --metaflow), ours (python/
over the C library) against the Python tracker's own decorator (src/ of a SpareCores/
resource-tracker checkout, --python-tracker-src or $PYTHON_TRACKER_SRC), and no decorator.
Cards are off (create_card=False) so that only the tracking is compared. Each flow's step spins
a fixed amount of Python work, timed inside the step, then sleeps --seconds, so that:
  work_s          the fixed work's wall time inside the step (its slowdown is the tracking's
                  interference with the job)
  procs           processes under the task process during the step (the tracking's own)
  run_cpu_s       the whole `flow.py run`'s CPU (user+system from wait4, children included)
  tracking_cpu    run_cpu_s minus the undecorated run's, per run (start, samples, stop)
  cpu_ms/sample   the slope of tracking_cpu over two sleep lengths, per sample (interval 1 s)
Usage: /usr/bin/python3 bench/metaflow_compare.py [--python-tracker-src DIR] [--metaflow DIR]
       [--seconds 5,20] [--repeat 3]
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


class BenchFlow(FlowSpec):
    {deco}
    @step
    def start(self):
        t = time.perf_counter()
        x = 0
        for i in range(4_000_000):
            x += i * i % 7
        self.work_s = time.perf_counter() - t
        self.procs = len(descendants(os.getpid()))
        time.sleep({sleep})
        self.next(self.end)

    @step
    def end(self):
        print("BENCH", self.work_s, self.procs)


if __name__ == "__main__":
    BenchFlow()
'''


def run_flow(variant, src, metaflow, sleep, tmp):
    deco = "" if variant == "none" else "@track_resources(create_card=False)"
    imp = "" if variant == "none" else ", track_resources"
    flow = os.path.join(tmp, "bench_flow.py")
    with open(flow, "w") as f:
        f.write(FLOW.format(deco=deco, imp=imp, sleep=sleep))
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
    work_s, procs = line.split("BENCH", 1)[1].split()
    return float(work_s), int(procs), ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python-tracker-src", default=os.environ.get("PYTHON_TRACKER_SRC"))
    ap.add_argument("--metaflow", default=os.path.join(REPO, "..", "shared", "testdata", "metaflow"))
    ap.add_argument("--seconds", default="5,20")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sleeps = [float(s) for s in a.seconds.split(",")]
    variants = [("none", os.path.join(REPO, "python")), ("ours", os.path.join(REPO, "python"))]
    if a.python_tracker_src:
        variants.append(("python-tracker", a.python_tracker_src))
    res = {}
    for sleep in sleeps:
        for name, src in variants:
            rows = []
            for _ in range(a.repeat):
                tmp = tempfile.mkdtemp(prefix="mfbench-")
                try:
                    rows.append(run_flow(name, src, os.path.abspath(a.metaflow), sleep, tmp))
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
            res[name, sleep] = [sorted(c)[len(c) // 2] for c in zip(*rows)]  # medians
    print(f"{'variant':16} {'sleep_s':>7} {'work_s':>8} {'procs':>5} {'run_cpu_s':>9} {'tracking_cpu':>12}")
    for (name, sleep), (work, procs, cpu) in res.items():
        extra = cpu - res["none", sleep][2]
        print(f"{name:16} {sleep:7.0f} {work:8.3f} {procs:5d} {cpu:9.3f} {extra:12.3f}")
    if len(sleeps) >= 2:
        lo, hi = min(sleeps), max(sleeps)
        for name, _ in variants[1:]:
            slope = ((res[name, hi][2] - res["none", hi][2]) - (res[name, lo][2] - res["none", lo][2])) / (hi - lo)
            slow = res[name, lo][0] / res["none", lo][0] - 1
            print(f"{name}: {slope * 1000:.2f} ms CPU per sample (1 s interval), "
                  f"the step's work {slow * 100:+.1f}% against no decorator")


if __name__ == "__main__":
    main()
