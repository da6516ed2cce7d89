#!/usr/bin/python3
"""Benchmark, prints figures and asserts nothing: the CSV's shared columns of the Python
resource-tracker 0.5's SystemTracker (a checkout's src/, given with --python-tracker-src or
$PYTHON_TRACKER_SRC; its psutil backend, or its procfs one with --procfs) and of this tool's
`-f csv`, written side by side on this machine over the same whole seconds while a workload runs
(a core busy, 300 MiB written and synced, 800 MiB held). Rows are paired by timestamp; each
column is printed with the two trackers' sums (per-interval columns) or means (the others),
their difference and the largest difference of one row. tests/e2e/test_python_columns.py checks
the same columns against the peer's formulas on every CI run; this is the check against the peer
itself, which is not on the CI machine.
Usage: /usr/bin/python3 bench/python_columns_compare.py --python-tracker-src DIR [--procfs]
       [--seconds N] [--tracker build/resource-tracker]
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PER_INTERVAL = {"utime", "stime", "cpu_usage", "disk_read_bytes", "disk_write_bytes",
                "net_recv_bytes", "net_sent_bytes"}

PEER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import resource_tracker.helpers as h
if sys.argv[4] == "procfs":
    h.is_psutil_available = lambda: False
from resource_tracker.tracker import SystemTracker
SystemTracker(start_time=float(sys.argv[2]), interval=1, output_file=sys.argv[3])
"""

WORKLOAD = """
import os, time
time.sleep(3)
fd = os.open(os.path.join(os.environ["DIR"], "blob"), os.O_WRONLY | os.O_CREAT, 0o600)
buf = os.urandom(1 << 20)
for _ in range(300):
    os.write(fd, buf)
os.fsync(fd)
os.close(fd)
os.unlink(os.path.join(os.environ["DIR"], "blob"))
held = bytearray(800 << 20)
t = time.time()
while time.time() - t < 6:
    sum(range(100000))
"""


def paired(py_rows, our_rows):
    out = []
    for p in py_rows:
        t = float(p["timestamp"])
        best = min(our_rows, key=lambda u: abs(float(u["timestamp"]) - t))
        if abs(float(best["timestamp"]) - t) < 0.3:
            out.append((p, best))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python-tracker-src", default=os.environ.get("PYTHON_TRACKER_SRC"))
    ap.add_argument("--procfs", action="store_true", help="the peer's procfs backend, not psutil")
    ap.add_argument("--seconds", type=int, default=25)
    ap.add_argument("--tracker", default=os.path.join(REPO, "build", "resource-tracker"))
    ap.add_argument("--rows", metavar="COLUMN", help="also print this column row by row")
    a = ap.parse_args()
    if not a.python_tracker_src or not os.path.isdir(os.path.join(a.python_tracker_src, "resource_tracker")):
        sys.exit("--python-tracker-src: a checkout's src/ (the folder holding resource_tracker/) is needed")
    impl = "procfs" if a.procfs else "psutil"
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:  # on a disk, not a tmpfs
        py_csv, our_csv = os.path.join(d, "py.csv"), os.path.join(d, "ours.csv")
        t0 = int(time.time()) + 3
        peer = subprocess.Popen([sys.executable, "-c", PEER, a.python_tracker_src, str(t0), py_csv, impl])
        time.sleep(max(0.0, t0 - time.time()))
        env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", TRACKER_KEEPER_URL="off")
        ours = subprocess.Popen([a.tracker, "-i", "1", "-f", "csv", "-o", our_csv], env=env)
        subprocess.run([sys.executable, "-c", WORKLOAD], env=dict(os.environ, DIR=d), check=True)
        time.sleep(max(0.0, t0 + a.seconds - time.time()))
        ours.send_signal(2)
        peer.terminate()
        for p in (ours, peer):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        with open(py_csv) as f:
            py_rows = list(csv.DictReader(f))
        with open(our_csv) as f:
            our_rows = list(csv.DictReader(f))
    pairs = paired(py_rows, our_rows)
    if not pairs:
        sys.exit("no rows to pair")
    print(f"Python tracker 0.5 ({impl} backend) vs ours: {len(py_rows)} and {len(our_rows)} rows, "
          f"{len(pairs)} paired (timestamps at most "
          f"{max(abs(float(p['timestamp']) - float(u['timestamp'])) for p, u in pairs):.3f} s apart)")
    print(f"{'column':22s} {'python':>16s} {'ours':>16s} {'diff %':>8s} {'max row %':>10s}")
    for c in py_rows[0]:
        if c == "timestamp":
            continue
        if "system_" + c not in our_rows[0]:
            print(f"{c:22s} missing in ours")
            continue
        x = [float(p[c] or 0) for p, _ in pairs]
        y = [float(u["system_" + c] or 0) for _, u in pairs]
        agg = sum if c in PER_INTERVAL else (lambda v: sum(v) / len(v))
        X, Y = agg(x), agg(y)
        diff = 100 * (Y - X) / X if X else (0.0 if Y == 0 else float("inf"))
        rows = [100 * abs(v - u) / abs(u) for u, v in zip(x, y) if u]
        print(f"{c:22s} {X:16.3f} {Y:16.3f} {diff:8.2f} {max(rows, default=0):10.2f}"
              f"  ({'sum' if c in PER_INTERVAL else 'mean'})")
    if a.rows:
        for p, u in pairs:
            print(p["timestamp"], u["timestamp"], p.get(a.rows), u.get("system_" + a.rows))


if __name__ == "__main__":
    main()
