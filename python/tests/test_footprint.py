"""What tracking adds to the user's process: importing the package, running a tracker for 40
samples and reading process_metrics adds less than 4 MB of RSS with the bytecode compiled (an
installed package: 3.2-3.4 MB with 0.15) and 4.5 MB compiled from source at import
(PYTHONDONTWRITEBYTECODE, no __pycache__: the compiler's own memory on top; 3.9-4.1 MB with 0.15's
energy code and tables, at the old 4 MB bound); the import pulls in no heavy module (typing, json, csv, gzip, statistics),
and the code of statistics, reports, the Keeper and snapshots is not loaded until used."""
import os
import shutil
import subprocess
import sys

import pytest

import resource_tracker

PROBE = r"""
import sys
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
before = rss()
import resource_tracker
t = resource_tracker.ResourceTracker(autostart=True, interval=0.02)
t.wait_for_samples(40, timeout=30)
len(t.process_metrics)
added = rss() - before
heavy = {"typing", "json", "csv", "gzip", "statistics", "multiprocessing", "subprocess"}
cold = {"_analysis", "_snapshot", "_native_more", "_frame_io", "report", "keeper", "helpers",
        "server_info", "csv_trackers", "column_maps"}
loaded = (heavy & set(sys.modules)) | {m for m in cold if "resource_tracker." + m in sys.modules}
t.stop()
print(added, ",".join(sorted(loaded)))
"""


@pytest.mark.parametrize("bytecode", ["compiled", "from_source"])
def test_tracking_adds_little_memory(tmp_path, bytecode):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if bytecode == "compiled":
        env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pyc")
        subprocess.run([sys.executable, "-c", "import resource_tracker.tracker"], env=env, check=True)
    else:  # a copy of the package without __pycache__; the standard library's bytecode as is
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
        shutil.copytree(os.path.dirname(resource_tracker.__file__), tmp_path / "resource_tracker",
                        ignore=shutil.ignore_patterns("__pycache__"))
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path)] + env.get("PYTHONPATH", "").split(os.pathsep))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    added_kb = int(out[0])
    print(f"RSS added by import + 40 samples ({bytecode}): {added_kb} kB")
    assert len(out) == 1, f"loaded by import + tracking: {out[1]}"
    assert added_kb < (4 * 1024 if bytecode == "compiled" else 4.5 * 1024)
