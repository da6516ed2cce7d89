#!/usr/bin/python3
"""Benchmark, prints figures and asserts nothing: the Python resource-tracker (a checkout's
src/, given with --python-tracker-src or $PYTHON_TRACKER_SRC) and this project's package
(python/ over the C library, $RESOURCE_TRACKER_LIBRARY or build/libresource-tracker.so) side
by side. Each run is a fresh interpreter that holds some memory and spins a CPU loop while a
ResourceTracker(interval=...) tracks it for --seconds; measured there, before stop():
  rss_added_kib   the user's process: VmRSS now minus VmRSS before the import
  extra_procs     processes the tracking started (descendants found through /proc)
  extra_rss_kib   their VmRSS summed (a forked child's RSS counts pages shared with its parent)
  extra_pss_kib   their Pss (smaps_rollup) summed: shared pages split between the sharers
  cpu_us/sample   the tracking's on-CPU time (schedstat, ns) over the samples taken: the extra
                  processes' for the Python tracker, the threads the tracker started for ours
Usage: /usr/bin/python3 bench/python_compare.py --python-tracker-src DIR [--seconds N]
       [--intervals 0.1,1] [--workload-mib M] [--preload] [--no-psutil] [--library PATH]
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return sum(int(l.split()[1]) for l in f if l.startswith("Pss:"))
    except OSError:
        return 0


def _on_cpu_ns(pid, tids=None):
    """Exact on-CPU time of the given threads of pid (all of them by default)."""
    total = 0
    try:
        tids = tids if tids is not None else os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def _descendants(root):
    """PIDs of every live descendant of root."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


# Modules most programs have imported already (with --preload): their memory is then not
# counted as the tracking's.
PRELOAD = ("typing", "re", "enum", "collections", "functools", "contextlib", "weakref", "json",
           "ctypes", "csv", "gzip", "statistics", "threading")


def child(impl, interval, seconds, workload_mib, preload):
    """One measured run in this (fresh) interpreter; prints one JSON line."""
    me = os.getpid()
    if preload:
        import importlib
        for name in PRELOAD:
            importlib.import_module(name)
    ballast = bytearray(workload_mib << 20)  # the user's memory, touched before the baseline
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    rss0 = _status_kib(me, "VmRSS")
    tasks0 = set(os.listdir(f"/proc/{me}/task"))
    if os.environ.get("BENCH_NO_PSUTIL") == "1":
        sys.modules["psutil"] = None  # the Python tracker then reads procfs itself
    from resource_tracker import ResourceTracker  # noqa: the import is part of the cost
    tracker = ResourceTracker(interval=interval, autostart=False, discover_server=False,
                              discover_cloud=False)
    tracker.start()
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:  # the user's steady CPU loop
        x += 1
    n = tracker.n_samples
    rss1 = _status_kib(me, "VmRSS")
    kids = _descendants(me)
    new_tasks = sorted(set(os.listdir(f"/proc/{me}/task")) - tasks0)
    if impl == "python":
        cpu_ns = sum(_on_cpu_ns(k) for k in kids)
    else:
        cpu_ns = _on_cpu_ns(me, new_tasks)
    result = {
        "impl": impl, "interval": interval, "samples": n, "rss_added_kib": rss1 - rss0,
        "extra_procs": len(kids), "extra_rss_kib": sum(_status_kib(k, "VmRSS") for k in kids),
        "extra_pss_kib": sum(_pss_kib(k) for k in kids), "tracker_threads": len(new_tasks),
        "cpu_us_per_sample": cpu_ns / 1000 / n if n else None,
    }
    tracker.stop()
    print(json.dumps(result), flush=True)


def run(impl, interval, seconds, workload_mib, preload, no_psutil, src, library):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RESOURCE_TRACKER_LIBRARY")}
    env["TRACKER_CLOUD_DISCOVERY"] = "0"
    env["BENCH_NO_PSUTIL"] = "1" if no_psutil else "0"
    if impl == "python":
        env["PYTHONPATH"] = src
    else:
        env["PYTHONPATH"] = os.path.join(REPO, "python")
        env["RESOURCE_TRACKER_LIBRARY"] = library
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", impl, str(interval),
                        str(seconds), str(workload_mib), str(int(preload))], capture_output=True, text=True, env=env, cwd="/tmp",
                       timeout=seconds + 120)
    if r.returncode != 0:
        sys.exit(f"{impl} at {interval}s failed:\n{r.stdout}{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python-tracker-src", default=os.environ.get("PYTHON_TRACKER_SRC"),
                    help="src/ of a SpareCores/resource-tracker checkout (or $PYTHON_TRACKER_SRC)")
    ap.add_argument("--library", default=os.environ.get("RESOURCE_TRACKER_LIBRARY")
                    or os.path.join(REPO, "build", "libresource-tracker.so"))
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--intervals", default="0.1,1")
    ap.add_argument("--workload-mib", type=int, default=16, help="memory the user's process holds")
    ap.add_argument("--preload", action="store_true",
                    help="import common standard modules (typing, re, ctypes, json...) before the baseline")
    ap.add_argument("--no-psutil", action="store_true",
                    help="hide psutil from the Python tracker (it prefers psutil to its procfs reader)")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], float(a.child[1]), float(a.child[2]), int(a.child[3]), a.child[4] == "1")
        return
    src = a.python_tracker_src
    if not src or not os.path.exists(os.path.join(src, "resource_tracker", "tracker.py")):
        sys.exit(f"--python-tracker-src: no resource_tracker/tracker.py under {src!r}")
    if not os.path.isfile(a.library):
        sys.exit(f"no C library at {a.library} (build it, or give --library)")
    print(f"workload: a CPU loop holding {a.workload_mib} MiB, {a.seconds:g} s per run; "
          "discover_server=False, discover_cloud=False; "
          f"{'common modules imported before the baseline; ' if a.preload else ''}"
          f"Python tracker on {'procfs' if a.no_psutil else 'psutil where installed'}; python: "
          f"{sys.executable} {sys.version.split()[0]}")
    head = ("impl", "interval", "samples", "rss_added_kib", "extra_procs", "extra_rss_kib",
            "extra_pss_kib", "cpu_us/sample")
    print("%-8s %8s %8s %14s %12s %14s %14s %14s" % head)
    for interval in (float(i) for i in a.intervals.split(",")):
        for impl in ("python", "ours"):
            r = run(impl, interval, a.seconds, a.workload_mib, a.preload, a.no_psutil, os.path.abspath(src), os.path.abspath(a.library))
            cpu = "n/a" if r["cpu_us_per_sample"] is None else "%.0f" % r["cpu_us_per_sample"]
            print("%-8s %8g %8d %14d %12d %14d %14d %14s" % (
                impl, interval, r["samples"], r["rss_added_kib"], r["extra_procs"],
                r["extra_rss_kib"], r["extra_pss_kib"], cpu), flush=True)


if __name__ == "__main__":
    main()
