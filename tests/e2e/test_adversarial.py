"""Adversarial end-to-end tests: the cases where tick-truncated CPU time, a stale PSS, a missed
peak or cancelled writes make the figures disagree with the kernel's own accounting.

Every run here goes through one helper (`track`) and one checker (`check_invariants`) that
applies the per-sample rules to every sample of every run:

  rule 1  process.cores_used <= os.cpu_count(), cpu.utilization_pct <= os.cpu_count(), and,
          when cpu.utilization_pct is not null, process.cores_used <= cpu.utilization_pct
          (float and print slack only, no tick slack): the tree never uses more CPU than the
          machine did in the same interval;
  rule 3  cpu.utilization_pct is derived from the per-core figures: null when every
          per_core_pct is null, otherwise equal to sum(per_core_pct)/100 within the printed
          rounding;
  rule 7  no negative rate, no null where the figure is known, cpu_secs_total never decreasing.

The truth is the kernel's: bash's `times`, a process's own getrusage, /proc/PID/smaps_rollup,
/proc/PID/io. No test asserts a wall-clock duration."""
import decimal
import json
import os
import signal
import subprocess
import tempfile
import textwrap
import time

import pytest

from conftest import REPO, TRACKER, VALGRIND, tracker_env

# CPU within the machine's in every interval, PSS at its stated age, peaks between samples: alone, after the files that run side by side
pytestmark = pytest.mark.serial
from test_process import busy, parse_times

PY = "/usr/bin/python3"
NCPU = os.cpu_count()
MiB = 1024 * 1024


# ---- running the tracker -------------------------------------------------------------------------

class Run:
    def __init__(self, label, rc, raw, stdout, stderr):
        self.label, self.rc, self.raw, self.stdout, self.stderr = label, rc, raw, stdout, stderr
        self.samples = [json.loads(l) for l in raw]
        # the same lines with every number kept as printed, for the printed decimals
        self.printed = [json.loads(l, parse_float=decimal.Decimal) for l in raw]

    def __repr__(self):
        return f"<run {self.label}: rc={self.rc}, {len(self.samples)} samples>"


def out_file():
    with tempfile.NamedTemporaryFile(prefix="rt-adv-", suffix=".jsonl", delete=False) as f:
        return f.name


def start(cmd, interval, out, extra=()):
    """Starts `resource-tracker -i INTERVAL -o OUT [extra] [-- cmd...]` in the background."""
    args = [TRACKER, "-i", str(interval), "-o", out, *extra]
    if cmd:
        args += ["--", *cmd]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tracker_env())


def finish(p, out, label, timeout=120):
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    with open(out) as f:
        raw = [l for l in f if l.strip()]
    return Run(label, p.returncode, raw, stdout, stderr)


def track(cmd, interval, timeout=120, label=None):
    """Runs `resource-tracker -i INTERVAL -o FILE -- cmd...` to completion (like
    test_process.wrapped). cmd may be a function of the output file's path, for a workload
    that watches the samples arrive. Returns a Run."""
    out = out_file()
    try:
        argv = cmd(out) if callable(cmd) else cmd
        label = label or " ".join(argv).replace("\n", "; ")[:80]
        return finish(start(argv, interval, out), out, f"-i {interval} -- {label}", timeout)
    finally:
        os.unlink(out)


def assert_total_matches_times(run):
    expected = parse_times(run.stdout)
    got = run.samples[-1]["process"]["cpu_secs_total"]
    assert abs(got - expected) <= max(0.02 * expected, 0.02), \
        f"{run.label}: cpu_secs_total {got} vs bash times {expected:.3f}"


# ---- the per-sample rules ------------------------------------------------------------------------

def decimals(v):
    return -v.as_tuple().exponent if isinstance(v, decimal.Decimal) else 0


def cpu_bound_problems(run):
    """Rule 1: the tree within the machine, the machine within its cores."""
    bad = []
    for i, s in enumerate(run.samples):
        where = f"{run.label} sample {i + 1}/{len(run.samples)} (interval {s['interval_secs']} s)"
        u = s["cpu"]["utilization_pct"]
        if u is not None and u > NCPU + 1e-6:
            bad.append((u, f"{where}: cpu.utilization_pct {u} > {NCPU} cores"))
        p = s.get("process")
        if not p or p["cores_used"] is None:
            continue
        c = p["cores_used"]
        if c > NCPU + 1e-6:
            bad.append((c, f"{where}: process.cores_used {c} > {NCPU} cores on this machine"))
        elif u is not None and c > u + 1e-3:
            bad.append((c - u, f"{where}: process.cores_used {c} > cpu.utilization_pct {u}"))
    return bad


def machine_cpu_problems(run):
    """Rule 3: utilization_pct == sum(per_core_pct)/100 within the printed rounding."""
    bad = []
    du = max((decimals(s["cpu"]["utilization_pct"]) for s in run.printed), default=0) or 4
    dp = max((decimals(c) for s in run.printed for c in s["cpu"]["per_core_pct"]), default=0) or 2
    for i, (s, ps) in enumerate(zip(run.samples, run.printed)):
        where = f"{run.label} sample {i + 1}/{len(run.samples)} (interval {s['interval_secs']} s)"
        u = s["cpu"]["utilization_pct"]
        cores = s["cpu"]["per_core_pct"]
        n = len(cores)
        known = [c for c in cores if c is not None]
        if not known:
            if u is not None:
                bad.append((abs(u), f"{where}: utilization_pct {u} with every per_core_pct null {cores}"))
            continue
        if u is None:
            bad.append((1.0, f"{where}: utilization_pct null with per_core_pct {cores}"))
            continue
        tol = max(0.0005 + n * 0.00005, 0.5 * 10 ** -du + n * 0.005 * 10 ** -dp) + 1e-9
        diff = abs(u - sum(known) / 100)
        if diff > tol:
            bad.append((diff, f"{where}: utilization_pct {u} vs per_core_pct {cores} (sum/100 "
                              f"{sum(known) / 100:.4f}, off by {diff:.4f} > {tol:.5f})"))
    return bad


RATES = ("cores_used", "utime_secs", "stime_secs", "read_bytes_per_sec", "write_bytes_per_sec")
KNOWN = ("cores_used", "utime_secs", "stime_secs", "cpu_secs_total", "rss_mib")


def sanity_problems(run):
    """Rule 7: no negative rate, no null where the figure is known, totals never decreasing."""
    bad = []
    prev = 0.0
    for i, s in enumerate(run.samples):
        where = f"{run.label} sample {i + 1}/{len(run.samples)}"
        cpu = s["cpu"]
        for k in ("utilization_pct", "utime_secs", "stime_secs"):
            if cpu[k] is not None and cpu[k] < 0:
                bad.append((0, f"{where}: cpu.{k} {cpu[k]} < 0"))
        for c in cpu["per_core_pct"]:
            if c is not None and not 0 <= c <= 100:
                bad.append((0, f"{where}: per_core_pct {c} outside 0..100"))
        for n in s["network"]:
            for k in ("rx_bytes_per_sec", "tx_bytes_per_sec"):
                if n[k] is not None and n[k] < 0:
                    bad.append((0, f"{where}: {n['interface']}.{k} {n[k]} < 0"))
        for d in s["disk"]:
            for k in ("read_bytes_per_sec", "write_bytes_per_sec"):
                if d[k] is not None and d[k] < 0:
                    bad.append((0, f"{where}: {d['device']}.{k} {d[k]} < 0"))
        p = s.get("process")
        if p is None:
            continue
        for k in RATES:
            if p[k] is not None and p[k] < 0:
                bad.append((0, f"{where}: process.{k} {p[k]} < 0"))
        if s["interval_secs"] > 0:
            for k in KNOWN:
                if p[k] is None:
                    bad.append((0, f"{where}: process.{k} is null"))
        t = p["cpu_secs_total"]
        if t is not None:
            if t < prev - 1e-9:
                bad.append((prev - t, f"{where}: cpu_secs_total went back from {prev} to {t}"))
            prev = t
    return bad


def check_invariants(runs):
    """Rules 1, 3 and 7 on every sample of every run; one message listing the worst cases."""
    report = []
    for name, fn in (("rule 1 (cores within the machine)", cpu_bound_problems),
                     ("rule 3 (utilization = sum of per-core)", machine_cpu_problems),
                     ("rule 7 (no negative, null or decreasing)", sanity_problems)):
        bad = [b for r in runs for b in fn(r)]
        if bad:
            n = sum(len(r.samples) for r in runs)
            worst = sorted(bad, key=lambda b: -b[0])[:6]
            report.append(f"{name}: {len(bad)} of {n} samples break it; worst:\n    " +
                          "\n    ".join(w[1] for w in worst))
    assert not report, "\n".join(report)


def assert_ok(run):
    assert run.rc == 0, f"{run.label}: rc={run.rc} stderr={run.stderr}"
    assert run.samples, f"{run.label}: no samples"


# ---- 1. impossible cores: tick-truncated /proc/PID/stat against wait4's microseconds -----------

def test_many_short_lived_processes_stay_within_the_machine():
    """300 short-lived processes at 0.01-0.05 s: each one's time is cut to 10 ms ticks while it
    lives and counted to the microsecond when reaped, so the remainder must not pile up in one
    interval (seen: 2.52 cores on 2 cores in a 0.022 s final interval)."""
    runs = []
    for rep in range(2):
        for interval in ("0.01", "0.02", "0.03", "0.05"):
            r = track(["bash", "-c", "for i in $(seq 300); do /bin/true; done; times"], interval)
            assert_ok(r)
            assert_total_matches_times(r)
            runs.append(r)
    check_invariants(runs)


def test_two_busy_processes_stay_within_the_machine():
    """Two busy processes on both cores for ~1 s: the tree can use both cores, never more, and
    never more than the machine's own figure for the interval. Whether they got both cores is
    the kernel's to say (beside other work they share them): where their CPU over the run's wall
    time (bash's `times` over the samples' span) was 1.6 cores or more, some sample shows 1.5."""
    runs = []
    for interval in ("0.01", "0.03", "0.05"):
        r = track(["bash", "-c", f"{busy(1.0)} & {busy(1.0)} & wait; times"], interval)
        assert_ok(r)
        assert_total_matches_times(r)
        wall = sum(s["interval_secs"] or 0 for s in r.samples[1:])
        mean = parse_times(r.stdout) / wall if wall > 0 else 0
        peak = max(s["process"]["cores_used"] or 0 for s in r.samples)
        assert mean < 1.6 or peak >= 1.5, (r.label, peak, mean)
        runs.append(r)
    check_invariants(runs)


EXIT_AFTER_SAMPLE = textwrap.dedent("""
    import os, sys, time
    out, secs = sys.argv[1], float(sys.argv[2])
    t = time.process_time()
    while time.process_time() - t < secs:
        pass
    n = os.stat(out).st_size
    while os.stat(out).st_size == n:   # busy until the next sample is written, then exit at once
        pass
""")


def test_busy_process_exiting_just_after_a_sample():
    """Busy processes that exit right after a sample is written: the final interval is a few
    milliseconds long and holds only what was really used in it (seen: 30.4 cores in 0.001 s)."""
    runs = []
    for rep in range(2):
        for interval in ("0.01", "0.02", "0.05"):
            def cmd(out):
                one = f"{PY} -c '{EXIT_AFTER_SAMPLE}' {out} 0.3"
                return ["bash", "-c", f"{one} & {one} & wait; times"]
            r = track(cmd, interval, label="2 x (busy 0.3 s, exit after the next sample); times")
            assert_ok(r)
            assert_total_matches_times(r)
            runs.append(r)
    check_invariants(runs)


# ---- 2. the first (and only) interval of a short command ----------------------------------------

def test_first_interval_of_a_short_command():
    """`true`, `sleep 0.01` and a 0.05 s busy python: one sample covering the command's whole
    life; its cores within the machine's and within what the machine itself used."""
    runs = []
    for rep in range(6):
        runs.append(track(["true"], "0.1"))
        runs.append(track(["sleep", "0.01"], "0.1"))
        runs.append(track([PY, "-c", "import time\nt=time.process_time()\nwhile time.process_time()-t<0.05: pass"],
                          "1", label="python busy 0.05 s"))
    for r in runs:
        assert_ok(r)
    check_invariants(runs)


# ---- 3. the machine's CPU agrees with itself -------------------------------------------------------

def test_machine_utilization_is_the_sum_of_its_cores():
    """No command, -i 0.05 for ~4 s while one process is busy and another bursts on and off:
    utilization_pct is sum(per_core_pct)/100 in every sample (today it differs by more than
    0.05 cores in about a third of the samples at -i 0.1)."""
    out = out_file()
    work = []
    p = start(None, "0.05", out)
    try:
        deadline = time.monotonic() + 20
        while os.path.getsize(out) == 0 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        work.append(subprocess.Popen(["bash", "-c", busy(3.0)]))
        work.append(subprocess.Popen([PY, "-c", textwrap.dedent("""
            import time
            end = time.time() + 3.5
            while time.time() < end:
                t = time.time()
                while time.time() - t < 0.07:
                    pass
                time.sleep(0.045)
        """)]))
        for w in work:
            w.wait(timeout=60)
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        r = finish(p, out, "-i 0.05 (whole machine, busy work)")
    finally:
        for w in work:
            if w.poll() is None:
                w.kill()
                w.wait()
        if p.poll() is None:
            p.kill()
            p.wait()
        os.unlink(out)
    assert_ok(r)
    assert len(r.samples) >= 40
    assert max(s["cpu"]["utilization_pct"] or 0 for s in r.samples) >= 0.9  # the work was seen
    check_invariants([r])


def test_short_command_utilization_null_only_with_every_core_null():
    """`sleep 0.01` at -i 0.1: the one sample's utilization_pct comes from the same per-core
    lines (seen: utilization_pct 1 with every per_core_pct null)."""
    runs = [track(["sleep", "0.01"], "0.1") for _ in range(10)]
    for r in runs:
        assert_ok(r)
    check_invariants(runs)


# ---- 4. PSS after copy-on-write ----------------------------------------------------------------------

COW = textwrap.dedent("""
    import os, sys, time
    phases, pidfile, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
    size = 400 << 20

    def mark(name):
        with open(phases, "a") as f:
            f.write(f"{name} {time.time():.6f}\\n")

    def pids(ps):
        with open(pidfile + ".tmp", "w") as f:
            f.write(" ".join(map(str, ps)))
        os.rename(pidfile + ".tmp", pidfile)

    pids([os.getpid()])
    buf = bytearray(size)
    for i in range(0, size, 4096):
        buf[i] = 1
    mark("alone")
    time.sleep(hold)
    mark("forking")                           # the alone phase ends as the forks begin
    done_r, done_w = os.pipe()
    go_r, go_w = os.pipe()
    kids = []
    for k in range(3):
        pid = os.fork()
        if pid == 0:
            os.read(go_r, 1)                  # sleep through the shared phase
            for i in range(0, size, 4096):    # break copy-on-write on every page
                buf[i] = 2
            os.write(done_w, b"x")
            os.read(go_r, 1)                  # sleep through the written phase
            os._exit(0)
        kids.append(pid)
    pids([os.getpid()] + kids)
    mark("shared")
    time.sleep(hold)
    mark("writing")
    os.write(go_w, b"xxx")
    for _ in kids:
        os.read(done_r, 1)
    mark("written")
    time.sleep(hold)
    mark("end")
    os.write(go_w, b"xxx")
    for pid in kids:
        os.waitpid(pid, 0)
""")


def smaps_pss_mib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0.0


def read_phases(path):
    try:
        with open(path) as f:
            return {name: float(t) for name, t in (l.split() for l in f if l.strip())}
    except FileNotFoundError:
        return {}


def test_pss_follows_copy_on_write(tmp_path):
    """A parent with 400 MiB touched, then 3 forked children sharing it, then each child writing
    every page of its copy: PSS in each phase within 5% of the sum of the tree's
    /proc/PID/smaps_rollup Pss read in the middle of the phase (today: ~808 MiB instead of ~1600
    after the copy-on-write break; the RSS does not change, so PSS is never re-read)."""
    interval, hold = 0.5, 2.0  # each phase: 2 or 3 samples after one interval to settle
    phases_file, pid_file = tmp_path / "phases", tmp_path / "pids"
    script = tmp_path / "cow.py"
    script.write_text(COW)
    out = out_file()
    truth = {}
    order = ("alone", "shared", "written")
    p = None
    try:
        p = start([PY, str(script), str(phases_file), str(pid_file), str(hold)], interval, out)
        deadline = time.monotonic() + 90
        while p.poll() is None and time.monotonic() < deadline:
            ph = read_phases(phases_file)
            for name in order:
                if name in ph and name not in truth and time.time() >= ph[name] + hold / 2:
                    pids = pid_file.read_text().split()
                    truth[name] = sum(smaps_pss_mib(pid) for pid in pids)
            time.sleep(0.02)
        r = finish(p, out, f"-i {interval} -- cow.py")
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        os.unlink(out)
    assert_ok(r)
    ph = read_phases(phases_file)
    assert set(truth) == set(order), (truth, ph)
    assert truth["written"] >= 1500, truth  # the kernel saw the four private copies
    # each phase ends where the next change begins: the forks (3 copies of 400 MiB of page
    # tables, slow under a sanitizer) come before the "shared" mark, and a sample among them
    # sees the parent's pages already shared with a child the walk has not met yet
    ends = {"alone": ph["forking"], "shared": ph["writing"], "written": ph["end"]}
    report = []
    for name in order:
        lo, hi = ph[name] + interval, ends[name] - 0.05  # one interval to settle after the change
        inside = [s for s in r.samples if lo <= s["timestamp_secs"] <= hi]
        assert len(inside) >= 2, (name, lo, hi, [s["timestamp_secs"] for s in r.samples])
        for s in inside:
            pss = s["process"]["pss_mib"]
            if pss is None or abs(pss - truth[name]) > 0.05 * truth[name]:
                report.append(f"{name} phase: pss_mib {pss} vs kernel's {truth[name]:.1f} "
                              f"(at {s['timestamp_secs'] - ph[name]:.2f} s into the phase)")
    assert not report, "\n".join(report)
    check_invariants([r])


# ---- 5. peak RSS -------------------------------------------------------------------------------------

PEAK_JOB = textwrap.dedent("""
    import resource, sys, time
    b = bytearray(300 << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    time.sleep(0.4)                              # held 0.4 s once touched (faults may be slow)
    del b                                        # the peak is gone before the job ends
    time.sleep(0.3)
    with open(sys.argv[1], "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
""")


def check_peak(run):
    bad = []
    prev = 0.0
    for i, s in enumerate(run.samples):
        p = s["process"]
        where = f"{run.label} sample {i + 1}/{len(run.samples)}"
        if "rss_peak_mib" not in p or p["rss_peak_mib"] is None:
            bad.append(f"{where}: no process.rss_peak_mib (rss_mib {p['rss_mib']}, pss_mib {p['pss_mib']})")
            continue
        peak = p["rss_peak_mib"]
        if peak < prev - 1e-9:
            bad.append(f"{where}: rss_peak_mib went back from {prev} to {peak}")
        if peak < p["rss_mib"] - 1e-3:
            bad.append(f"{where}: rss_peak_mib {peak} < rss_mib {p['rss_mib']}")
        prev = max(prev, peak)
    return bad


def test_peak_rss(tmp_path):
    """A 0.7 s job that touches 300 MiB and frees it: process.rss_peak_mib in every sample,
    never decreasing, at least every sampled rss_mib, and at the end at least the job's own
    ru_maxrss (today there is no such field, and the only sample at -i 1 shows rss_mib 0)."""
    maxrss = tmp_path / "maxrss"
    slow = track([PY, "-c", PEAK_JOB, str(maxrss)], "1", label="python peak 300 MiB")
    assert_ok(slow)
    kib = int(maxrss.read_text())
    assert kib >= 300 * 1024
    fast = track([PY, "-c", PEAK_JOB, str(maxrss)], "0.1", label="python peak 300 MiB")
    assert_ok(fast)
    bad = check_peak(slow) + check_peak(fast)
    final = slow.samples[-1]["process"]
    if final.get("rss_peak_mib") is not None and final["rss_peak_mib"] < kib / 1024 * 0.99:
        bad.append(f"{slow.label} final: rss_peak_mib {final['rss_peak_mib']} < ru_maxrss {kib / 1024:.1f} MiB")
    sampled = max(s["process"]["rss_mib"] for s in fast.samples)
    # the -i 0.1 run saw the allocation (under valgrind a sample takes longer than the plateau):
    # within 5% of it, the two clocks' rule for a new high (a walk at once when the job's group
    # rose 5% above the most any walk saw; a walk at 295 MiB, then the 0.4 s plateau at 308 is
    # walked only when the moved budget allows: a rollup of 300 MiB is 3-4 ms of CPU, 0.7 s of
    # the budget); the kernel's own peak (VmHWM, ru_maxrss at the reaping) has all of it
    assert sampled >= 300 * 0.95 or (VALGRIND and sampled > 0), sampled
    hwm = fast.samples[-1]["process"].get("rss_hwm_mib")
    assert hwm is not None and hwm >= 300, hwm
    fpeak = fast.samples[-1]["process"].get("rss_peak_mib")
    if fpeak is not None and fpeak < sampled - 1e-3:
        bad.append(f"{fast.label} final: rss_peak_mib {fpeak} < sampled rss_mib {sampled}")
    assert not bad, "\n".join(bad[:8] + [f"({len(bad)} problems)"])
    check_invariants([slow, fast])


# ---- 6. cancelled writes -------------------------------------------------------------------------------

CANCEL_JOB = textwrap.dedent("""
    import os, sys, time
    path = sys.argv[1]
    chunk = b"\\x5a" * (1 << 20)
    with open(path, "wb") as f:
        for _ in range(300):
            f.write(chunk)
    os.unlink(path)          # before writeback: the dirty pages are dropped, never written
    time.sleep(0.5)
""")


def test_cancelled_writes(tmp_path):
    """300 MiB written to a disk filesystem and unlinked before writeback: write_bytes_total
    counts them (storage-level, as today) and the new cancelled_write_bytes_total says they
    never reached the disk."""
    base = os.path.join(REPO, "build") if os.path.isdir(os.path.join(REPO, "build")) else "/var/tmp"
    d = tempfile.mkdtemp(prefix="rt-adv-cancel-", dir=base)
    try:
        fstype = subprocess.run(["stat", "-f", "-c", "%T", d], capture_output=True, text=True).stdout.strip()
        if fstype in ("tmpfs", "ramfs"):
            pytest.skip(f"{d} is on {fstype}: no writeback to cancel")
        target = os.path.join(d, "cancelled.bin")
        r = track([PY, "-c", CANCEL_JOB, target], "0.5", label="python write 300 MiB, unlink")
    finally:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
    assert_ok(r)
    p = r.samples[-1]["process"]
    size = 300 * MiB
    assert p["write_bytes_total"] >= 0.9 * size, p
    assert "cancelled_write_bytes_total" in p, \
        f"no process.cancelled_write_bytes_total (write_bytes_total {p['write_bytes_total']})"
    c = p["cancelled_write_bytes_total"]
    assert c is not None and 0.9 * size <= c <= p["write_bytes_total"], (c, p["write_bytes_total"])
    prev = 0
    for s in r.samples:
        v = s["process"]["cancelled_write_bytes_total"]
        assert v is not None and v >= prev, (v, prev)
        prev = v
    check_invariants([r])
