#!/usr/bin/python3
"""Benchmark, prints figures and asserts nothing: gpu_tracker's Tracker (a checkout's src/,
given with --gpu-tracker-src or $GPU_TRACKER_SRC; it needs psutil, pandas, sqlalchemy and tqdm,
Debian's python3-psutil python3-pandas python3-sqlalchemy python3-tqdm) and this project's
gpu_tracker module (python/ over the C library) side by side. Each run is a fresh interpreter
that starts --children sleeping processes holding --workload-mib MiB each and spins a CPU loop
while a Tracker(sleep_time=...) tracks it (and them) for --seconds; measured before stop():
  rss_added_kib   the user's process: VmRSS now minus VmRSS before the import
  extra_procs     processes the tracking started (gpu_tracker: its tracking process and
                  multiprocessing's resource tracker)
  extra_pss_kib   their Pss (smaps_rollup) summed
  cpu_ms/s        the tracking's on-CPU time (schedstat) per second tracked: the extra
                  processes' for gpu_tracker, the threads the tracker started for ours
  samples         ours: the library's count; gpu_tracker: its iterations, estimated as the
                  seconds over (sleep_time + 0.1 s of its own measuring pause)
  cpu_us/sample   cpu over samples
Usage: /usr/bin/python3 bench/gpu_tracker_compare.py --gpu-tracker-src DIR [--seconds N]
       [--intervals 0.1,1] [--children K] [--workload-mib M] [--library PATH]
"""
import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
from python_compare import _descendants, _on_cpu_ns, _pss_kib, _status_kib  # noqa: E402

SLEEPER = "import sys; b = bytearray(int(sys.argv[1]) << 20); b[::4096] = b'1' * (len(b) // 4096); sys.stdin.read()"


def child(impl, interval, seconds, kids, workload_mib):
    """One measured run in this (fresh) interpreter; prints one JSON line."""
    me = os.getpid()
    sleepers = [subprocess.Popen([sys.executable, "-c", SLEEPER, str(workload_mib)], stdin=subprocess.PIPE)
                for _ in range(kids)]
    time.sleep(0.5)
    known = set(_descendants(me))
    rss0 = _status_kib(me, "VmRSS")
    tasks0 = set(os.listdir(f"/proc/{me}/task"))
    from gpu_tracker import Tracker  # noqa: the import is part of the cost

    tracker = Tracker(sleep_time=interval, disable_logs=True, resource_usage_file=f"/tmp/gtc-{me}.usage")
    tracker.start()
    t0 = time.monotonic()
    end = t0 + seconds
    x = 0
    while time.monotonic() < end:  # the user's steady CPU loop
        x += 1
    took = time.monotonic() - t0
    rss1 = _status_kib(me, "VmRSS")
    extra = [k for k in _descendants(me) if k not in known]
    new_tasks = sorted(set(os.listdir(f"/proc/{me}/task")) - tasks0)
    if impl == "gpu_tracker":
        cpu_ns = sum(_on_cpu_ns(k) for k in extra)
        samples = took / (interval + 0.1)
    else:
        from resource_tracker._native import lib

        cpu_ns = _on_cpu_ns(me, new_tasks)
        samples = lib.rt_tracker_count(tracker._native.tracker)
    result = {
        "impl": impl, "interval": interval, "samples": samples, "rss_added_kib": rss1 - rss0,
        "extra_procs": len(extra), "extra_pss_kib": sum(_pss_kib(k) for k in extra),
        "cpu_ms_per_s": cpu_ns / 1e6 / took, "cpu_us_per_sample": cpu_ns / 1000 / samples if samples else None,
    }
    tracker.stop()
    for s in sleepers:
        s.stdin.close()
        s.wait()
    print(json.dumps(result), flush=True)


def run(impl, interval, seconds, kids, workload_mib, src, library):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RESOURCE_TRACKER_LIBRARY")}
    env["TRACKER_CLOUD_DISCOVERY"] = "0"
    env["PYTHONPATH"] = src if impl == "gpu_tracker" else os.path.join(REPO, "python")
    env["RESOURCE_TRACKER_LIBRARY"] = library
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", impl, str(interval), str(seconds),
                        str(kids), str(workload_mib)], capture_output=True, text=True, env=env, cwd="/tmp",
                       timeout=seconds + 180)
    if r.returncode != 0:
        sys.exit(f"{impl} at {interval}s failed:\n{r.stdout}{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu-tracker-src", default=os.environ.get("GPU_TRACKER_SRC"),
                    help="src/ of a gpu_tracker checkout (or $GPU_TRACKER_SRC)")
    ap.add_argument("--library", default=os.environ.get("RESOURCE_TRACKER_LIBRARY")
                    or os.path.join(REPO, "build", "libresource-tracker.so"))
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--intervals", default="0.1,1")
    ap.add_argument("--children", type=int, default=4, help="sleeping children of the tracked process")
    ap.add_argument("--workload-mib", type=int, default=16, help="memory each child holds")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], float(a.child[1]), float(a.child[2]), int(a.child[3]), int(a.child[4]))
        return
    src = a.gpu_tracker_src
    if not src or not os.path.exists(os.path.join(src, "gpu_tracker", "tracker.py")):
        sys.exit(f"--gpu-tracker-src: no gpu_tracker/tracker.py under {src!r}")
    if not os.path.isfile(a.library):
        sys.exit(f"no C library at {a.library} (build it, or give --library)")
    print(f"workload: a CPU loop with {a.children} sleeping children of {a.workload_mib} MiB each, {a.seconds:g} s "
          f"per run; python: {sys.executable} {sys.version.split()[0]}")
    head = ("impl", "interval", "samples", "rss_added_kib", "extra_procs", "extra_pss_kib", "cpu_ms/s", "cpu_us/sample")
    print("%-12s %8s %8s %14s %12s %14s %10s %14s" % head)
    for interval in (float(i) for i in a.intervals.split(",")):
        for impl in ("gpu_tracker", "ours"):
            r = run(impl, interval, a.seconds, a.children, a.workload_mib, os.path.abspath(src),
                    os.path.abspath(a.library))
            cpu = "n/a" if r["cpu_us_per_sample"] is None else "%.0f" % r["cpu_us_per_sample"]
            print("%-12s %8g %8.0f %14d %12d %14d %10.2f %14s" % (
                impl, interval, r["samples"], r["rss_added_kib"], r["extra_procs"], r["extra_pss_kib"],
                r["cpu_ms_per_s"], cpu), flush=True)


if __name__ == "__main__":
    main()
