"""What tracking adds to the user's process: importing the package and running a tracker for
40 samples adds less than 4 MB of RSS (with the bytecode compiled, as an installed package
has it), and the import pulls in no heavy module (typing, json, csv, gzip, statistics)."""
import os
import subprocess
import sys

PROBE = r"""
import sys
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
before = rss()
import resource_tracker
t = resource_tracker.ResourceTracker(interval=0.02)
t.wait_for_samples(40, timeout=30)
added = rss() - before
heavy = sorted({"typing", "json", "csv", "gzip", "statistics", "multiprocessing", "subprocess"}
               & set(sys.modules))
t.stop()
print(added, ",".join(heavy))
"""


def test_tracking_adds_little_memory(tmp_path):
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp_path / "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import resource_tracker"], env=env, check=True)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    added_kb = int(out[0])
    print(f"RSS added by import + 40 samples: {added_kb} kB")
    assert added_kb < 4 * 1024
    assert len(out) == 1, f"heavy modules imported: {out[1]}"
