"""gpu_tracker's split of the job (process.main / descendants / combined, and the summary's
gpu_tracker member), judged by the kernel: a parent holding 300 MiB with two children each
holding 200 MiB of their own and sharing 100 MiB (a memfd both map), against the amounts
held and against the processes' own smaps_rollup read by the test; thread counts of a
two-thread main and a single-threaded child, exactly; the hardware percentages with 1 and 2
expected cores against the main process's own CPU time (os.times); --expected-cores, --gpus
and the config file's keys."""
import json
import os
import subprocess
import tempfile
import textwrap
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, VALGRIND, tracker_env

PY = "/usr/bin/python3"
MIB = 1 << 20

PARENT = textwrap.dedent("""
    import os, subprocess, sys, time
    MIB = 1 << 20
    work, hold = sys.argv[1], sys.argv[2]
    shm = os.memfd_create("rt-parts")  # shared memory that is no file in a size-limited /dev/shm
    os.ftruncate(shm, 100 * MIB)
    mine = bytearray(300 * MIB)
    mine[::4096] = b"\\x01" * (len(mine) // 4096)  # every page written: private, resident
    kids = [subprocess.Popen([sys.executable, "-c", CHILD, str(shm), work, str(i), hold], pass_fds=[shm])
            for i in range(2)]
    while not all(os.path.exists(f"{work}/k{i}") for i in range(2)):
        time.sleep(0.02)
    with open(f"{work}/pids.tmp", "w") as f:  # when all is held, and who holds it
        f.write(" ".join(str(p) for p in [time.time(), os.getpid()] + [k.pid for k in kids]))
    os.rename(f"{work}/pids.tmp", f"{work}/pids")
    open(f"{work}/go", "w").close()  # the children hold from now on, for `hold` seconds
    for k in kids:
        k.wait()
""")

CHILD = textwrap.dedent("""
    import mmap, os, sys, time
    MIB = 1 << 20
    shm, work, me, hold = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    mine = bytearray(200 * MIB)
    mine[::4096] = b"\\x01" * (len(mine) // 4096)
    m = mmap.mmap(shm, 100 * MIB, mmap.MAP_SHARED)
    m[::4096] = b"\\x02" * (100 * MIB // 4096)  # both children touch every page: mapped twice
    open(f"{work}/k{me}", "w").close()
    while not os.path.exists(f"{work}/go"):
        time.sleep(0.01)
    time.sleep(hold)
""")


def track(cmd, extra=(), interval="0.2", timeout=120, env=None):
    """Runs `resource-tracker -i INTERVAL -o FILE [extra] -- cmd` (env: more variables); returns
    (rc, samples, out path)."""
    fd, out = tempfile.mkstemp(prefix="rt-parts-", suffix=".jsonl")
    os.close(fd)
    p = subprocess.run([TRACKER, "-i", interval, "-o", out, *extra, "--", *cmd], capture_output=True, text=True,
                       timeout=timeout * TIMEOUT_SCALE, env=dict(tracker_env(), **(env or {})))
    with open(out) as f:
        samples = [json.loads(line) for line in f if line.strip()]
    return p, samples, out


def rollup(pid):
    """The kernel's own figures of pid (KiB): private and shared pages, from smaps_rollup."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        v = {line.split(":")[0]: int(line.split()[1]) for line in f if line.rstrip().endswith("kB")}
    return v["Private_Clean"] + v["Private_Dirty"], v["Shared_Clean"] + v["Shared_Dirty"]


def peak(samples, part, key):
    vals = [s["process"][part][key] for s in samples if s["process"] and s["process"][part][key] is not None]
    return max(vals) if vals else None


def held(samples, since, until):
    """The samples whose whole interval lies between `since` and `until` (Unix time)."""
    return [s for s in samples if s["timestamp_secs"] - s["interval_secs"] >= since + 0.05
            and s["timestamp_secs"] <= until - 0.05]


@pytest.mark.skipif(VALGRIND, reason="1.1 GiB written page by page under valgrind's tracker is only slow")
def test_main_descendants_combined_memory():
    with tempfile.TemporaryDirectory(prefix="rt-parts-") as work:
        kernel = {}

        def sample_kernel():
            # the test's own look at the processes while they hold everything (ground truth)
            while not os.path.exists(f"{work}/pids"):
                time.sleep(0.02)
            time.sleep(0.3)
            with open(f"{work}/pids") as f:
                held_at, *pids = f.read().split()
            kernel["held_at"] = float(held_at)
            kernel["main"] = rollup(int(pids[0]))
            kernel["kids"] = [rollup(int(p)) for p in pids[1:]]

        import threading

        t = threading.Thread(target=sample_kernel)
        t.start()
        # the job's own group: the parts' memory is the walk's, carried between walks with its
        # age (the two clocks); at most 0.5 s apart here, so the hold has walks to judge
        p, samples, out = track([PY, "-c", PARENT.replace("CHILD", repr(CHILD)), work, "2.5"],
                                env={"TRACKER_WALK_MAX_AGE": "0.5"})
        t.join(30)
        os.unlink(out)
    assert p.returncode == 0, p.stderr
    assert kernel, "the test never saw the processes"
    # while everything is held (before it, the first child alone mapped the shared file: its
    # pages were then that child's private ones, a true state of its own)
    everything = samples
    samples = held(samples, kernel["held_at"], kernel["held_at"] + 2.5)  # the children hold 2.5 s
    assert len(samples) >= 5, [(s["timestamp_secs"], s["process"]["combined"]) for s in everything]
    nominal = {  # MiB held: (private, shared), and the tolerance: 5% of the part's total
        "main": (300, 0),
        "descendants": (400, 100),
        "combined": (700, 100),
    }
    assert all(s["process"]["walk_age_secs"] <= 0.5 + s["interval_secs"] + 1e-3 for s in samples)
    walked = [s for s in samples if s["process"]["walk_age_secs"] == 0]
    assert len(walked) >= 3, [s["process"]["walk_age_secs"] for s in samples]
    for s in walked:  # every walk of the hold, not only the peak
        for part, (priv, shared) in nominal.items():
            tol = 0.05 * (priv + shared)
            v = s["process"][part]
            assert abs(v["private_rss_mib"] - priv) <= tol, (part, v, priv)
            assert abs(v["shared_rss_mib"] - shared) <= tol, (part, v, shared)
            assert abs(v["total_rss_mib"] - (priv + shared)) <= tol, (part, v, priv + shared)
    # against the kernel's rollups as the test read them: private exactly summed (within 5%:
    # a page or two moves between the readings), shared no more than every member's summed
    # and no less than the largest member's
    k_main_priv = kernel["main"][0] / 1024
    k_kids_priv = sum(k[0] for k in kernel["kids"]) / 1024
    assert abs(peak(samples, "main", "private_rss_mib") - k_main_priv) <= 0.05 * k_main_priv
    assert abs(peak(samples, "descendants", "private_rss_mib") - k_kids_priv) <= 0.05 * k_kids_priv
    kids_shared = [k[1] / 1024 for k in kernel["kids"]]
    d_shared = peak(samples, "descendants", "shared_rss_mib")
    assert max(kids_shared) * 0.95 <= d_shared <= sum(kids_shared) * 1.05, (d_shared, kids_shared)
    # total is private + shared in every sample, and combined's private is the parts' sum
    for s in samples:
        for part in ("main", "descendants", "combined"):
            v = s["process"][part]
            if v["total_rss_mib"] is not None:
                assert abs(v["total_rss_mib"] - v["private_rss_mib"] - v["shared_rss_mib"]) < 0.002
        m, d, c = (s["process"][k] for k in ("main", "descendants", "combined"))
        if c["private_rss_mib"] is not None:
            assert abs(c["private_rss_mib"] - m["private_rss_mib"] - d["private_rss_mib"]) < 0.002


THREADS = textwrap.dedent("""
    import subprocess, sys, threading, time
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    kid.wait()
    stop.set()
    t.join()
""")


def test_thread_counts_exact():
    p, samples, out = track([PY, "-c", THREADS], interval="0.1")
    os.unlink(out)
    assert p.returncode == 0, p.stderr
    assert peak(samples, "main", "thread_count") == 2
    assert peak(samples, "descendants", "thread_count") == 1
    assert peak(samples, "combined", "thread_count") == 3
    for s in samples:
        m, d, c = (s["process"][k]["thread_count"] for k in ("main", "descendants", "combined"))
        assert m + d == c == s["process"]["thread_count"]


BUSY = textwrap.dedent("""
    import os, time
    t = time.process_time()
    while time.process_time() - t < 1.5:
        pass
    c = os.times()
    print(c.user + c.system)
""")


def summary_json(path, *extra):
    p = subprocess.run([TRACKER, "summary", "--json", "--time-unit", "seconds", *extra, path], capture_output=True,
                       text=True, env=tracker_env(), timeout=30 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["gpu_tracker"]


def test_hardware_percentages_against_kernel_cpu_time():
    p, samples, out = track([PY, "-c", BUSY], interval="0.2")
    try:
        assert p.returncode == 0, p.stderr
        kernel_cpu = float(p.stdout.strip())  # the main process's own user+system seconds
        one, two = summary_json(out, "--expected-cores", "1"), summary_json(out, "--expected-cores", "2")
        plain = summary_json(out)
    finally:
        os.unlink(out)
    cpu1, cpu2 = one["cpu_utilization"], two["cpu_utilization"]
    assert cpu1["n_expected_cores"] == 1 and cpu2["n_expected_cores"] == 2
    assert plain["cpu_utilization"]["n_expected_cores"] == os.cpu_count()
    assert cpu1["system_core_count"] == os.cpu_count()
    secs = one["compute_time"]["time"]
    assert one["compute_time"]["unit"] == "seconds"
    # the mean sum of percentages over the run is the CPU time the kernel counted
    main_cpu = cpu1["main"]["mean_sum_percent"] / 100 * secs
    assert abs(main_cpu - kernel_cpu) <= 0.05 * kernel_cpu + 0.03, (main_cpu, kernel_cpu, secs)
    for part in ("main", "descendants", "combined"):
        a, b = cpu1[part], cpu2[part]
        assert a["mean_sum_percent"] == pytest.approx(b["mean_sum_percent"])
        assert a["mean_hardware_percent"] == pytest.approx(a["mean_sum_percent"], rel=1e-6, abs=1e-3)
        assert b["mean_hardware_percent"] == pytest.approx(a["mean_sum_percent"] / 2, rel=1e-6, abs=1e-3)
        assert b["max_hardware_percent"] == pytest.approx(a["max_sum_percent"] / 2, rel=1e-6, abs=1e-3)
    assert cpu1["descendants"]["max_sum_percent"] == pytest.approx(0, abs=1e-9)
    # one busy thread: about 100% of a core at its peak, never more than the machine
    assert 50 <= cpu1["main"]["max_sum_percent"] <= 100 * os.cpu_count() + 1e-6
    sysp = cpu1["system"]
    assert sysp["max_hardware_percent"] == pytest.approx(sysp["max_sum_percent"] / os.cpu_count(), rel=1e-6, abs=1e-3)
    # the machine's RAM, in gigabytes (decimal) as gpu_tracker counts them
    ram = summary_json_units(plain)
    assert ram


def summary_json_units(g):
    """The RAM member's unit and capacity as gpu_tracker has them (gigabytes by default)."""
    assert g["max_ram"]["unit"] == "gigabytes"
    with open("/proc/meminfo") as f:
        total_kib = int(f.readline().split()[1])
    assert g["max_ram"]["system_capacity"] == pytest.approx(total_kib * 1024 / 1e9, rel=1e-6)
    return g["max_ram"]


def test_flags_and_config(tmp_path):
    # --expected-cores and --gpus are checked before anything starts
    for bad in (["--expected-cores", "0"], ["--expected-cores", "x"], ["--gpus", "a,,b"], ["--gpus", ""]):
        p = subprocess.run([TRACKER, *bad, "--", "true"], capture_output=True, text=True, env=tracker_env(), timeout=30)
        assert p.returncode == 2, (bad, p.stderr)
        assert "--expected-cores" in p.stderr or "--gpus" in p.stderr
    conf = tmp_path / "rt.toml"
    conf.write_text('[tracker]\nexpected_cores = 0\n')
    p = subprocess.run([TRACKER, "-c", str(conf), "--", "true"], capture_output=True, text=True, env=tracker_env(),
                       timeout=30)
    assert p.returncode == 2 and f"{conf}:2:" in p.stderr, p.stderr
    conf.write_text('[tracker]\ngpus = ["GPU-a", 3]\n')
    p = subprocess.run([TRACKER, "-c", str(conf), "--", "true"], capture_output=True, text=True, env=tracker_env(),
                       timeout=30)
    assert p.returncode == 2 and f"{conf}:2:" in p.stderr, p.stderr
    # from the config file: the summary at exit divides by its expected cores
    conf.write_text('[tracker]\nexpected_cores = 4\ngpus = "GPU-nowhere"\nsummary = true\n')
    p = subprocess.run([TRACKER, "-q", "-c", str(conf), "--", PY, "-c", "pass"], capture_output=True, text=True,
                       env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    assert "of 4)" in p.stderr, p.stderr
    assert "no GPU 'GPU-nowhere' was seen" in p.stderr
    # the summary subcommand's own flags
    p = subprocess.run([TRACKER, "summary", "--expected-cores", "-1", "x.jsonl"], capture_output=True, text=True,
                       env=tracker_env(), timeout=30)
    assert p.returncode == 2 and "--expected-cores" in p.stderr
