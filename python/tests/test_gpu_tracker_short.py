"""gpu_tracker's figures for a command shorter than the sleep time, and its parts adding up
(issue 54, items 1 and 2), judged against the kernel's own accounting.

A ~0.2 s command under `gpu-tracker -e CMD --st=0.3` (and under the Tracker API, stopped once
the child ended but before it is reaped) ends before the first sample: its figures come from
the stop sample of its zombie (CPU) and from the kernel's rusage kept for it (peak RSS). The
command writes the kernel's figures for itself at its end: getrusage(RUSAGE_SELF) +
(RUSAGE_CHILDREN) CPU seconds over its wall time (from its start time in /proc/self/stat to
CLOCK_BOOTTIME now) and VmHWM of /proc/self/status; ours must be within 10% of them. A shell
script running it is the same with descendants: the CPU is the script's own and its child's,
over the script's life. Then the parts: main + descendants = combined in every row of the
tracking file (CPU percentages and threads exactly; RAM between the larger part and the sum,
shared pages being counted once), each maximum the maximum of its rows (a CPU row standing for
less than half the time of its neighbour, the short one at the stop, counted with it, as the
library's peaks of rates are), and a command without children shows descendants 0 everywhere."""
import csv
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

from gpu_tracker import Tracker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("docopt") is None,
                                reason="gpu-tracker needs python3-docopt (scripts/install-deps --test)")

# The short command: holds ~35 MB, spins for 0.2 s of CPU, then writes the kernel's figures for
# itself (or, with a third argument "parent", for itself and its parent, the shell that ran it,
# over the parent's life: the parent's own CPU ticks, its start time) to argv[1].
SHORT = """import json, os, resource, sys, time
n = 35_000_000
held = bytearray(n)
held[::4096] = b"\\x01" * len(range(0, n, 4096))
t0 = time.process_time()
while time.process_time() - t0 < 0.2:
    pass
tck = os.sysconf("SC_CLK_TCK")
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024
who = os.getppid() if sys.argv[2:] == ["parent"] else os.getpid()
parent_cpu = (int(stat(who)[11]) + int(stat(who)[12])) / tck if who != os.getpid() else 0.0
start = (int(stat(who)[19]) + 0.5) / tck  # a tick's resolution: its middle
wall = time.clock_gettime(time.CLOCK_BOOTTIME) - start
with open(sys.argv[1], "w") as f:
    json.dump({"cpu_secs": cpu, "parent_cpu_secs": parent_cpu, "wall_secs": wall, "vm_hwm_bytes": hwm,
               "end": time.time()}, f)
"""

# A program using the Tracker API on the short command (argv[1]: the sleep time), which writes
# the command's status and the tracker's to_json() to api.json.
DRIVER = """import json, os, subprocess, sys
from gpu_tracker import Tracker
p = subprocess.Popen([sys.executable, "short.py", "kernel.json"])
tracker = Tracker(process_id=p.pid, sleep_time=float(sys.argv[1]), ram_unit="bytes", time_unit="seconds",
                  resource_usage_file="backup.json", tracking_file="rows.csv", overwrite=True)
with tracker:
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped
with open("api.json", "w") as f:
    json.dump({"status": p.wait(), "usage": tracker.to_json()}, f)
"""

# The sleep times tried in turn: the 0.3 s, then longer ones where a loaded machine
# stretched 0.2 s of CPU past the first (a sample saw the command running: not the case here).
SLEEP_TIMES = (0.3, 1.0, 3.0)

# A command with descendants, some at once: two 0.6 s spinners side by side, then a third.
SPIN = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < float(sys.argv[1]):\n    pass\n"


def gpu_tracker(cwd, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), PYTHONDONTWRITEBYTECODE="1",
               TRACKER_CLOUD_DISCOVERY="0")
    r = subprocess.run([sys.executable, "-m", "gpu_tracker", *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def kernel(path):
    with open(path) as f:
        k = json.load(f)
    k["cpu_pct"] = 100.0 * (k["cpu_secs"] + k["parent_cpu_secs"]) / k["wall_secs"]
    return k


def within(ours, theirs, what, rel=0.10):
    assert abs(ours - theirs) <= rel * theirs, f"{what}: ours {ours:.4g}, the kernel's {theirs:.4g}"


def rows_of(path):
    """The tracking file's timepoint rows (CSV), each value as a float, and the raw text."""
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    header = lines[2]
    return [dict(zip(header, map(float, line))) for line in lines[3:]], [dict(zip(header, line)) for line in lines[3:]]


def folded_peak(values, seconds):
    """The peak of a rate over rows standing for `seconds` each, a row standing for less than
    half the time of the one before it (or a first row, of the one after it) counted with it
    (the time-weighted mean of both): the library's rule for the peaks of rates (fold.h)."""
    peak, held, held_w, last, first, seen = -math.inf, 0.0, 0.0, 0.0, False, False
    for x, w in zip(values, seconds):
        if not (math.isfinite(x) and w > 0):
            continue
        if held_w > 0 and (w < 0.5 * last or (first and last < 0.5 * w)):
            held, held_w, last, first = (held * held_w + x * w) / (held_w + w), held_w + w, w, False
            continue
        if held_w > 0:
            peak = max(peak, held)
        first, seen = not seen, True
        held, held_w, last = x, w, w
    return max(peak, held) if held_w > 0 else peak


def check_parts_add_up(rows, usage):
    """main + descendants = combined in every row; each summary maximum is its rows' maximum
    (for the CPU, as the library folds short rows: folded_peak). usage's time is in seconds."""
    assert rows and usage["compute_time"]["unit"] == "seconds"
    stamps = [r["timestamp"] for r in rows]
    seconds = [usage["compute_time"]["time"] - (stamps[-1] - stamps[0])]  # the first row's
    seconds += [b - a for a, b in zip(stamps, stamps[1:])]
    for r in rows:
        for kind in ("sum", "hardware"):
            m, d, c = (r[f"cpu_{p}_{kind}_utilization_percent"] for p in ("main", "descendants", "combined"))
            assert c == pytest.approx(m + d, rel=1e-9, abs=1e-9), r
        assert r["combined_n_threads"] == r["main_n_threads"] + r["descendants_n_threads"], r
        m, d, c = r["main_ram"], r["descendants_ram"], r["combined_ram"]
        assert max(m, d) * (1 - 1e-9) <= c <= (m + d) * (1 + 1e-9), r
    cpu, ram = usage["cpu_utilization"], usage["max_ram"]
    for p in ("main", "descendants", "combined"):
        peak = folded_peak([r[f"cpu_{p}_sum_utilization_percent"] for r in rows], seconds)
        assert cpu[p]["max_sum_percent"] == pytest.approx(peak, rel=1e-5, abs=1e-6), (p, rows)
        assert cpu[p]["max_sum_percent"] <= max(r[f"cpu_{p}_sum_utilization_percent"] for r in rows) * (1 + 1e-6)
        assert cpu[f"{p}_n_threads"] == max(r[f"{p}_n_threads"] for r in rows), p
        assert ram[p]["total_rss"] == pytest.approx(max(r[f"{p}_ram"] for r in rows), rel=1e-9, abs=1e-9), p
    assert cpu["combined"]["max_sum_percent"] <= (cpu["main"]["max_sum_percent"]
                                                 + cpu["descendants"]["max_sum_percent"]) * (1 + 1e-6)
    assert ram["combined"]["total_rss"] <= (ram["main"]["total_rss"] + ram["descendants"]["total_rss"]) * (1 + 1e-9)
    assert cpu["combined_n_threads"] <= cpu["main_n_threads"] + cpu["descendants_n_threads"]


def run_short(tmp_path, run):
    """run(sleep_time) under SLEEP_TIMES in turn until the command ended before the first row
    (a command shorter than the sleep time); returns (usage as to_json(), rows, the kernel's)."""
    for st in SLEEP_TIMES:
        for name in ("kernel.json", "rows.csv", "api.json"):
            if (tmp_path / name).exists():
                os.remove(tmp_path / name)
        usage = run(st)
        rows, _ = rows_of(tmp_path / "rows.csv")
        k = kernel(tmp_path / "kernel.json")
        if rows[0]["timestamp"] >= k["end"]:
            return usage, rows, k
    pytest.fail(f"a sample saw the 0.2 s command running at every sleep time of {SLEEP_TIMES}")


def test_short_command_cli(tmp_path):
    """A 0.2 s command, no children: main and combined are the kernel's figures, descendants 0."""
    (tmp_path / "short.py").write_text(SHORT)

    def run(st):
        gpu_tracker(tmp_path, "-e", f"{sys.executable} short.py kernel.json", f"--st={st}", "--ru=bytes",
                    "--tu=seconds", "-f", "json", "-o", "out.json", "--tf=rows.csv", "--overwrite")
        return json.loads((tmp_path / "out.json").read_text())

    usage, rows, k = run_short(tmp_path, run)
    cpu, ram = usage["cpu_utilization"], usage["max_ram"]
    for part in ("main", "combined"):
        within(cpu[part]["max_sum_percent"], k["cpu_pct"], f"{part} CPU %")
        within(ram[part]["total_rss"], k["vm_hwm_bytes"], f"{part} peak RSS")
    assert cpu["descendants"]["max_sum_percent"] == 0 and ram["descendants"]["total_rss"] == 0
    assert (cpu["main_n_threads"], cpu["descendants_n_threads"], cpu["combined_n_threads"]) == (1, 0, 1)
    check_parts_add_up(rows, usage)


def test_short_script_with_a_child_cli(tmp_path):
    """A shell script running the 0.2 s command: combined is the kernel's figures for the two
    (the script's CPU and its child's over the script's life; the child's peak RSS, the
    largest), the child's in descendants (the part that used the CPU)."""
    (tmp_path / "short.py").write_text(SHORT)
    (tmp_path / "job.sh").write_text(f"{sys.executable} short.py kernel.json parent\ntrue\n")

    def run(st):
        gpu_tracker(tmp_path, "-e", "bash job.sh", f"--st={st}", "--ru=bytes", "--tu=seconds", "-f", "json",
                    "-o", "out.json", "--tf=rows.csv", "--overwrite")
        return json.loads((tmp_path / "out.json").read_text())

    usage, rows, k = run_short(tmp_path, run)
    cpu, ram = usage["cpu_utilization"], usage["max_ram"]
    within(cpu["combined"]["max_sum_percent"], k["cpu_pct"], "combined CPU %")
    within(ram["combined"]["total_rss"], k["vm_hwm_bytes"], "combined peak RSS")
    within(ram["descendants"]["total_rss"], k["vm_hwm_bytes"], "descendants' peak RSS")
    assert cpu["descendants"]["max_sum_percent"] > cpu["main"]["max_sum_percent"]
    check_parts_add_up(rows, usage)


def test_short_command_tracker_api(tmp_path):
    """The Tracker API on the same command, in a program that starts it and stops the tracker
    once it ended but before reaping it (os.waitid with WNOWAIT, then Popen.wait())."""
    (tmp_path / "short.py").write_text(SHORT)
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), PYTHONDONTWRITEBYTECODE="1",
               TRACKER_CLOUD_DISCOVERY="0")

    def run(st):
        subprocess.run([sys.executable, "driver.py", str(st)], cwd=tmp_path, env=env, check=True, timeout=120)
        result = json.loads((tmp_path / "api.json").read_text())
        assert result["status"] == 0  # the status is still the program's to take
        return result["usage"]

    usage, rows, k = run_short(tmp_path, run)
    cpu, ram = usage["cpu_utilization"], usage["max_ram"]
    for part in ("main", "combined"):
        within(cpu[part]["max_sum_percent"], k["cpu_pct"], f"{part} CPU %")
        within(ram[part]["total_rss"], k["vm_hwm_bytes"], f"{part} peak RSS")
    assert ram["descendants"]["total_rss"] == 0 and cpu["descendants"]["max_sum_percent"] == 0
    check_parts_add_up(rows, usage)


def test_short_small_command_is_not_the_trackers_memory(tmp_path):
    """A short command smaller than the tracking process: the kernel's peak for it starts at
    the image it was forked from (gpu-tracker's own, ~20 MB), so it is not taken for the
    command's; its RAM is never more than the command's own peak (a shell's VmHWM, ~3 MB)."""
    (tmp_path / "tiny.sh").write_text(  # ~0.5 s of the shell's own CPU (builtins: past the first sample at 0.3 s), then its VmHWM
        "i=0; while (( i < 600000 )); do (( i++ )); done\n"
        "while read -r key value unit; do [ \"$key\" = VmHWM: ] && echo \"$value\" > hwm.txt; done < /proc/$$/status\n"
        "true\n")
    gpu_tracker(tmp_path, "-e", "bash tiny.sh", "--st=0.3", "--ru=bytes", "--tu=seconds", "-f", "json", "-o",
                "out.json", "--tf=rows.csv")
    usage = json.loads((tmp_path / "out.json").read_text())
    hwm = int((tmp_path / "hwm.txt").read_text()) * 1024
    ram = usage["max_ram"]
    for part in ("main", "combined"):
        assert ram[part]["total_rss"] <= 1.1 * hwm, (part, ram[part]["total_rss"], hwm)
    rows, _ = rows_of(tmp_path / "rows.csv")
    check_parts_add_up(rows, usage)


def test_parts_without_descendants(tmp_path):
    """A command with no children, over several samples: descendants exactly 0 in every row (the
    int 0 of gpu_tracker's sum of nothing for the CPU) and in the maxima; combined = main."""
    (tmp_path / "spin.py").write_text(SPIN)
    gpu_tracker(tmp_path, "-e", f"{sys.executable} spin.py 1.2", "--st=0.2", "--tu=seconds", "-f", "json", "-o",
                "out.json", "--tf=rows.csv")
    usage = json.loads((tmp_path / "out.json").read_text())
    rows, raw = rows_of(tmp_path / "rows.csv")
    assert len(rows) >= 4
    for r, text in zip(rows, raw):
        assert text["cpu_descendants_sum_utilization_percent"] == "0", text
        assert (r["descendants_ram"], r["descendants_n_threads"]) == (0.0, 0), text
        assert (r["combined_ram"], r["cpu_combined_sum_utilization_percent"]) == (
            r["main_ram"], r["cpu_main_sum_utilization_percent"]), text
    cpu = usage["cpu_utilization"]
    assert cpu["descendants"] == {k: 0.0 for k in cpu["descendants"]} and cpu["descendants_n_threads"] == 0
    assert usage["max_ram"]["descendants"] == {"total_rss": 0.0, "private_rss": 0.0, "shared_rss": 0.0}
    assert cpu["main"]["max_sum_percent"] > 50  # the spinner was seen
    check_parts_add_up(rows, usage)


def test_parts_with_descendants_add_up(tmp_path):
    """A script whose children run two at once and then one: every row adds up, and so do the maxima."""
    (tmp_path / "spin.py").write_text(SPIN)
    py = sys.executable
    (tmp_path / "kids.sh").write_text(f"{py} spin.py 0.6 &\n{py} spin.py 0.6\nwait\n{py} spin.py 0.4\ntrue\n")
    gpu_tracker(tmp_path, "-e", "bash kids.sh", "--st=0.2", "--tu=seconds", "-f", "json", "-o", "out.json",
                "--tf=rows.csv")
    usage = json.loads((tmp_path / "out.json").read_text())
    rows, _ = rows_of(tmp_path / "rows.csv")
    assert max(r["cpu_descendants_sum_utilization_percent"] for r in rows) > 50
    assert max(r["descendants_n_threads"] for r in rows) >= 2
    check_parts_add_up(rows, usage)
