#!/usr/bin/python3
"""Benchmark, prints figures and asserts nothing: what tracking a job costs as its tree grows,
this tool beside the peers in one run (issue 31's table). Jobs: trees of 1, 200, 1,000 and
10,000 sleeping processes (forks of one small holder, each paused) and a fork storm (a holder
forking children that live 1 to 50 ms, 20 alive at a time, about 2,000 over 10 s). Trackers,
each alone against each job at -i 0.1 and -i 1:
  tool-group   resource-tracker wrapping the job (its own cgroup where one can be made)
  tool-pid     resource-tracker --pid ROOT --cgroup off (the tree walked, no group)
  machine      resource-tracker with no job to attribute (the whole-machine part alone)
  top          top -b -d SECS (every process of the machine; one column set)
  pidstat      pidstat -h -u -r -d -T ALL -p ROOT's tree (its -p takes a list), SECS >= 1 only
  python       the Python tracker 0.5's ProcessTracker (with --python-tracker-src DIR or
               $PYTHON_TRACKER_SRC: a checkout's src/), where it keeps up
  vmstat       vmstat -n 1 (whole machine, 1 s only: its interval is whole seconds)
tool-group writes JSON lines: its last sample's walk cadence (process.walk_period_secs, the
oldest its PSS and per-process figures get, issue 31's two clocks) is printed beside it, and it
is measured over --tool-seconds (default 60: a window that holds its slowest walks, so each
walk's cost is amortized over the samples it serves).
For tool-group, also each walk's own cost per process: the tool's CPU is read every 10 ms in
the window, and a walk (a sample with walk_age_secs 0) shows as a jump over the median cost of
the window's spans without a walk; "walk us/proc" gives the median and the most over the window's walks
(--walk-max-age SECS sets TRACKER_WALK_MAX_AGE, for several walks in the window).
Every tracker writes its output to a file on the same file system (the tool and the Python
tracker their samples, the others their standard output), as a user keeps it.
For each: CPU per sample in µs (the on-CPU time, schedstat, of the tracker's own threads and of
any process it started, over the samples it should have taken in the window; the walk's cost is
so amortized over the samples it serves) and its peak RSS in KiB (VmHWM; for the Python tracker
the largest of its processes). A tracker that took fewer than 80% of its samples is marked
"behind".
Usage: /usr/bin/python3 bench/tree_scaling.py [--sizes 1,200,1000,10000] [--storm]
       [--intervals 0.1,1] [--seconds N] [--tool-seconds N] [--warmup N] [--trackers tool-group,...]
       [--walk-max-age SECS] [--python-tracker-src DIR] [--tracker build/resource-tracker]
"""
import argparse
import bisect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the job: argv[1] = "tree N" or "storm"; it writes its pid's readiness to argv[2] once the tree
# is complete, and lives until SIGTERM (tree) or argv[3] seconds (storm)
HOLDER = r"""
import os, random, signal, sys, time
kind, ready = sys.argv[1], sys.argv[2]
def done(*_):
    os.killpg(0, signal.SIGKILL) if kind == "tree" else None
    os._exit(0)
os.setpgid(0, 0)
if kind == "tree":
    n = int(sys.argv[3])
    for _ in range(n - 1):
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            while True:
                signal.pause()
    signal.signal(signal.SIGTERM, done)
    open(ready, "w").write(str(os.getpid()))
    while True:
        signal.pause()
else:
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    open(ready, "w").write(str(os.getpid()))
    end = time.time() + float(sys.argv[3])
    alive, started = 0, 0
    while time.time() < end:
        while alive < 20:
            life = random.uniform(0.001, 0.05)
            if os.fork() == 0:
                t = time.time() + life
                while time.time() < t:
                    pass
                os._exit(0)
            alive += 1
            started += 1
        os.wait()
        alive -= 1
    while alive:
        os.wait()
        alive -= 1
    print("storm_children", started, file=sys.stderr)
"""


def tasks_ns(pid):
    """On-CPU ns of every thread of pid (schedstat's first field), 0 when it is gone."""
    total = 0
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return total


def reaped_ns(pid):
    """The CPU of pid's reaped children (cutime + cstime of /proc/PID/stat), in ns."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        v = s[s.rindex(")") + 2:].split()
        return (int(v[13]) + int(v[14])) * 1e9 / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0


def hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid):
    """pid's descendants now (through /proc/*/stat's ppid)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
                kids.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(d))
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def wait_ready(path, proc, limit=300):
    t = time.time()
    while time.time() - t < limit:
        if os.path.exists(path) and os.path.getsize(path):
            with open(path) as f:
                return int(f.read())
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError("the job did not start")


def run_one(a, tracker, job, secs, d):
    """One tracker against one job: (cpu µs per sample, peak RSS KiB, samples taken or None)."""
    ready = os.path.join(d, "ready")
    if os.path.exists(ready):
        os.unlink(ready)
    holder = [sys.executable, "-c", HOLDER]
    window = a.tool_seconds if tracker == "tool-group" else a.seconds
    warm = max(1.5, 2 * secs, a.warmup if tracker.startswith("tool") else 0)
    # a storm outlives its tracker's warm-up and window (with --warmup 60 it had ended 30 s into
    # the tool's window: "behind", its samples never due)
    jobargs = ["tree", ready, str(job)] if job != "storm" else ["storm", ready, str(warm + window + 30)]
    out = os.path.join(d, "out")
    # every tracker writes what it reads to a file of the same file system (the tool with -o,
    # the others their standard output), so each pays for its own output as a user keeps it
    sink = open(out, "wb") if tracker in ("top", "pidstat", "vmstat") else None
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", TRACKER_KEEPER_URL="off")
    if a.walk_max_age is not None:
        env["TRACKER_WALK_MAX_AGE"] = f"{a.walk_max_age:g}"
    interval = f"{secs:g}"
    procs, job_proc, root = [], None, None
    if tracker == "tool-group":
        tp = subprocess.Popen([a.tracker, "-i", interval, "-f", "json", "-o", out, "--"] + holder + jobargs,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        root = wait_ready(ready, tp)
        procs = [tp]
    else:
        job_proc = subprocess.Popen(holder + jobargs, stderr=subprocess.DEVNULL)
        root = wait_ready(ready, job_proc)
        if tracker == "tool-pid":
            procs = [subprocess.Popen([a.tracker, "-i", interval, "-f", "json", "-o", out, "-p", str(root),
                                       "--cgroup", "off"], env=env, stderr=subprocess.DEVNULL)]
        elif tracker == "machine":
            procs = [subprocess.Popen([a.tracker, "-i", interval, "-f", "json", "-o", out], env=env,
                                      stderr=subprocess.DEVNULL)]
        elif tracker == "top":
            procs = [subprocess.Popen(["top", "-b", "-d", interval], stdout=sink)]
        elif tracker == "pidstat":
            pids = ",".join(str(p) for p in [root] + descendants(root))
            procs = [subprocess.Popen(["pidstat", "-h", "-u", "-r", "-d", "-p", pids, interval],
                                      stdout=sink, stderr=subprocess.DEVNULL)]
        elif tracker == "vmstat":
            procs = [subprocess.Popen(["vmstat", "-n", interval], stdout=sink)]
        elif tracker == "python":
            code = ("import sys; sys.path.insert(0, sys.argv[1]);"
                    "from resource_tracker.tracker import ProcessTracker;"
                    "ProcessTracker(pid=int(sys.argv[2]), interval=float(sys.argv[3]), output_file=sys.argv[4])")
            procs = [subprocess.Popen([sys.executable, "-c", code, a.python_tracker_src, str(root), interval, out],
                                      stderr=subprocess.DEVNULL)]
    # start-up and the first full walk left out of the window; --warmup, the tool's learning
    # walks too (the peers learn nothing)
    time.sleep(warm)
    mine = lambda: [p.pid for p in procs] + ([] if tracker in ("tool-group",) else
                                              [c for p in procs for c in descendants(p.pid)])
    counted = tracker.startswith("tool") or tracker in ("machine", "python")
    lines0 = _lines(out) if counted else None
    # the Python tracker starts a short-lived nvidia-smi each sample: its reaped children count
    reaped = lambda: sum(reaped_ns(p.pid) for p in procs) if tracker == "python" else 0
    ns0 = sum(tasks_ns(p) for p in mine()) + reaped()
    t0 = time.time()
    peak = 0
    # the tool's own CPU every 10 ms (tool-group: its walks' cost), its peak every 0.5 s
    looks, next_peak = [], t0
    while time.time() - t0 < window:
        if tracker == "tool-group":
            time.sleep(0.01)
            looks.append((time.time(), tasks_ns(procs[0].pid)))
        else:
            time.sleep(0.5)
        if time.time() >= next_peak:
            peak = max([peak] + [hwm_kib(p) for p in mine()])
            next_peak += 0.5
    ns1 = sum(tasks_ns(p) for p in mine()) + reaped()
    elapsed = time.time() - t0
    lines1 = _lines(out) if counted else None
    period = _walk_period(out) if tracker == "tool-group" else None
    walks = _walk_costs(out, looks, secs) if tracker == "tool-group" else []
    # the whole job first (its holder leads a process group of its own): no process of it
    # outlives the run, and the tool's own group is left empty for it to remove
    try:
        os.killpg(root, signal.SIGKILL)
    except OSError:
        pass
    for p in procs:
        p.send_signal(signal.SIGINT if tracker.startswith("tool") or tracker == "machine" else signal.SIGTERM)
    for p in procs + ([job_proc] if job_proc else []):
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if sink:
        sink.close()
    expected = elapsed / secs
    taken = (lines1 - lines0) if lines0 is not None and lines1 is not None else None
    if os.path.exists(out):
        os.unlink(out)
    return (ns1 - ns0) / 1000 / expected, peak, taken, expected, period, walks


def _walk_costs(path, looks, secs):
    """The CPU ns of each walk in the window: the tool's CPU over the looks from 2 intervals
    before to 2 after a walk's sample (walk_age_secs 0), less what the samples of that span cost
    by the median of the spans of the same length without a walk."""
    try:
        with open(path, "rb") as f:
            rows = [json.loads(l) for l in f.read().split(b"\n")[:-1] if l.strip()]
    except (OSError, ValueError):
        return []
    if len(looks) < 3:
        return []
    t_first, t_last = looks[0][0], looks[-1][0]
    walk_ts = [r["timestamp_secs"] for r in rows
               if (r.get("process") or {}).get("walk_age_secs") == 0 and t_first + 2 * secs < r["timestamp_secs"] < t_last - 2 * secs]
    ts = [t for t, _ in looks]

    def cpu_between(a, b):
        i = max(0, bisect.bisect_right(ts, a) - 1)
        j = min(len(ts) - 1, bisect.bisect_left(ts, b))
        return looks[j][1] - looks[i][1], ts[j] - ts[i]

    quiet = []
    t = t_first
    while t + 4 * secs < t_last:
        if not any(t - secs <= w <= t + 5 * secs for w in walk_ts):
            ns, span = cpu_between(t, t + 4 * secs)
            if span > 0:
                quiet.append(ns / span)
        t += 4 * secs
    if not quiet:
        return []
    per_sec = sorted(quiet)[len(quiet) // 2]
    out = []
    for w in walk_ts:
        ns, span = cpu_between(w - 2 * secs, w + 2 * secs)
        out.append(max(0.0, ns - per_sec * span))
    return out


def _walk_period(path):
    """The walk's cadence in the last complete JSON line of path (None without one)."""
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        for line in reversed(lines[:-1]):
            proc = json.loads(line).get("process")
            if proc:
                return proc.get("walk_period_secs")
    except (OSError, ValueError):
        pass
    return None


def _lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,200,1000,10000")
    ap.add_argument("--storm", action="store_true", default=True)
    ap.add_argument("--no-storm", dest="storm", action="store_false")
    ap.add_argument("--intervals", default="0.1,1")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--tool-seconds", type=float, default=60)
    ap.add_argument("--warmup", type=float, default=0,
                    help="seconds left out before the tool's window (at least 1.5 and two intervals): with the tool "
                         "wrapping the job, its walks learn their cost while the tree is built under it")
    ap.add_argument("--trackers", default="machine,tool-group,tool-pid,top,pidstat,python,vmstat")
    ap.add_argument("--walk-max-age", type=float, default=None,
                    help="TRACKER_WALK_MAX_AGE for the tool (default: the tool's own, 60 s)")
    ap.add_argument("--python-tracker-src", default=os.environ.get("PYTHON_TRACKER_SRC"))
    ap.add_argument("--tracker", default=os.path.join(REPO, "build", "resource-tracker"))
    a = ap.parse_args()
    jobs = [int(s) for s in a.sizes.split(",") if s] + (["storm"] if a.storm else [])
    trackers = [t for t in a.trackers.split(",") if t]
    skip = {"top": shutil.which("top") is None, "pidstat": shutil.which("pidstat") is None,
            "vmstat": shutil.which("vmstat") is None, "python": not a.python_tracker_src}
    for t in trackers:
        if skip.get(t):
            print(f"# {t}: not here (pidstat: Debian's sysstat; python: --python-tracker-src)")
    print(f"{'job':>7s} {'interval':>8s} {'tracker':>10s} {'cpu_us/sample':>14s} {'peak_rss_kib':>12s}  samples")
    with tempfile.TemporaryDirectory() as d:
        for job in jobs:
            for secs in [float(s) for s in a.intervals.split(",") if s]:
                for t in trackers:
                    if skip.get(t) or (t in ("pidstat", "vmstat") and secs < 1) or (t == "vmstat" and job != jobs[0]):
                        continue
                    if t == "pidstat" and job == "storm":
                        continue  # its -p list is fixed at its start: a storm's children are not in it
                    cpu, rss, taken, expected, period, walks = run_one(a, t, job, secs, d)
                    note = "" if taken is None else f"{taken}/{expected:.0f}" + (
                        " behind" if taken < 0.8 * expected else "")
                    if period is not None:
                        note += f"  walk every {period:.2f} s"
                    if walks and job != "storm":
                        w = sorted(walks)
                        note += (f"  walk us/proc {w[len(w) // 2] / 1000 / job:.2f} median, {w[-1] / 1000 / job:.2f} most"
                                 f" ({len(w)} walks)")
                    print(f"{job!s:>7s} {secs:8g} {t:>10s} {cpu:14.1f} {rss:12d}  {note}", flush=True)


if __name__ == "__main__":
    main()
