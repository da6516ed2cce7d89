"""ProcessTracker and SystemTracker: the Python tracker's CSV (its column names, strings
quoted and numbers not: QUOTE_NONNUMERIC), one row per interval; ProcessTracker ends when its
process exits; PidTracker warns that it is deprecated."""
import csv
import os
import signal
import subprocess
import sys
import time

import pytest

from resource_tracker import PidTracker, ProcessTracker
from resource_tracker.tiny_data_frame import TinyDataFrame

PROCESS_HEADER = ('"timestamp","pid","children","utime","stime","cpu_usage","memory_mib",'
                  '"disk_read_bytes","disk_write_bytes","gpu_usage","gpu_vram_mib","gpu_utilized"')
SYSTEM_HEADER = ('"timestamp","processes","utime","stime","cpu_usage","memory_free_mib","memory_used_mib",'
                 '"memory_buffers_mib","memory_cached_mib","memory_active_mib","memory_inactive_mib",'
                 '"disk_read_bytes","disk_write_bytes","disk_space_total_gb","disk_space_used_gb",'
                 '"disk_space_free_gb","net_recv_bytes","net_sent_bytes","gpu_usage","gpu_vram_mib",'
                 '"gpu_utilized"')
BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.8: pass\n"


def test_process_tracker_writes_csv_until_the_process_exits(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", BURN])
    out = tmp_path / "process.csv"
    try:
        t = ProcessTracker(pid=child.pid, interval=0.1, output_file=str(out))  # blocks
    finally:
        child.wait()
    assert t.status == "exited"
    lines = out.read_text().splitlines()
    assert lines[0] == PROCESS_HEADER
    assert len(lines) >= 4
    for line in lines[1:]:
        assert '"' not in line  # every value is a number
    df = TinyDataFrame(csv_file_path=str(out))
    assert set(df["pid"]) == {float(child.pid)}
    assert sum(df["utime"]) + sum(df["stime"]) > 0.5
    assert all(m > 0 for m in df["memory_mib"])
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[1][1] == str(child.pid)  # an integer column is written as one


def test_process_tracker_without_children_quotes_the_empty_count(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", BURN])
    out = tmp_path / "p.csv"
    try:
        ProcessTracker(pid=child.pid, interval=0.2, children=False, output_file=str(out))
    finally:
        child.wait()
    row = out.read_text().splitlines()[1].split(",")
    assert row[2] == '""'  # children: None, as the Python tracker writes it


def test_system_tracker_writes_csv_to_stdout():
    code = ("from resource_tracker import SystemTracker\n"
            "SystemTracker(interval=0.1)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        lines = [p.stdout.readline() for _ in range(4)]
    finally:
        os.kill(p.pid, signal.SIGTERM)
        p.wait(10)
        p.stdout.close()
    assert lines[0].rstrip("\n") == SYSTEM_HEADER
    rows = list(csv.reader(lines[1:], quoting=csv.QUOTE_NONNUMERIC))
    assert all(len(r) == 21 for r in rows)
    ts = [r[0] for r in rows]
    assert ts == sorted(ts) and all(isinstance(v, float) for r in rows for v in r)
    assert all(r[4] >= 0 and r[6] > 0 for r in rows)  # cpu_usage, memory_used


def test_autostart_false_and_pid_tracker(tmp_path):
    t = ProcessTracker(autostart=False, interval=0.5)
    assert t.pid == os.getpid() and t.status == "running"
    t()  # callable, does nothing
    with pytest.warns(DeprecationWarning):
        PidTracker(autostart=False)
    with pytest.raises(ProcessLookupError):
        ProcessTracker(pid=2 ** 22 + 12345, output_file=str(tmp_path / "x.csv"))


def test_start_time_in_the_future_is_waited_for(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    out = tmp_path / "later.csv"
    start = time.time() + 0.2
    try:
        ProcessTracker(pid=child.pid, start_time=start, interval=0.1, output_file=str(out))
    finally:
        child.wait()
    df = TinyDataFrame(csv_file_path=str(out))
    assert len(df) >= 1 and df["timestamp"][0] >= round(start, 3)
