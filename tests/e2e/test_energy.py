"""Energy of a run, end to end: the JSON lines' energy object from a powercap tree whose counters
a thread advances at a known power while the tracker runs (TRACKER_SYS_ROOT), judged by the
counters and the kernel's CPU accounting: the totals lose nothing, a wrap-around in the middle of
the run is undone, the job's share is its share of the busy CPU time (two jobs of known CPU time
on the machine's two cores: half each), a root-only energy_uj read as another user gives the
estimate and one sentence on how to grant the counters; on this machine (no counters) the CPU
estimate; --energy off writes none."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, VALGRIND, run, tracker_env

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {secs}: pass\n"
RANGE_UJ = 262143328850


def make_zone(sys_root, zone, name, uj=0, max_uj=RANGE_UJ):
    d = os.path.join(sys_root, "class", "powercap", zone)
    os.makedirs(d, exist_ok=True)
    for f, v in (("name", name), ("energy_uj", str(uj)), ("max_energy_range_uj", str(max_uj)), ("enabled", "1")):
        with open(os.path.join(d, f), "w") as fh:
            fh.write(v + "\n")
    return os.path.join(d, "energy_uj")


class Meter(threading.Thread):
    """Advances a zone's energy_uj at watts W, wrapping at max_uj, rewriting the file in place
    every 5 ms (as the kernel's counter moves under a reader)."""

    def __init__(self, path, watts, max_uj=RANGE_UJ):
        super().__init__(daemon=True)
        self.path, self.watts, self.max_uj = path, watts, max_uj
        self.stop_ev = threading.Event()
        self.t0 = time.monotonic()

    def run(self):
        while not self.stop_ev.wait(0.005):
            uj = int(self.watts * 1e6 * (time.monotonic() - self.t0)) % self.max_uj
            with open(self.path, "r+") as fh:
                fh.write(str(uj).ljust(20) + "\n")  # the same length every time: never a short read

    def stop(self):
        self.stop_ev.set()
        self.join()


def energy_lines(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return [l for l in lines if l.get("energy")]


def domain(e, name):
    for d in e["domain"]:
        if d["name"] == name:
            return d
    raise AssertionError(f"no domain {name} in {e}")


def tracker_on(sys_root, args, **kw):
    env = tracker_env(TRACKER_SYS_ROOT=sys_root, **kw)
    return run(["--cgroup", "off", "-i", "0.2", "-q"] + args, env=env, timeout=60)


def check_lossless(lines, name):
    """Every interval's energy adds up to the running total: nothing lost, nothing counted twice."""
    got = 0.0
    for l in lines:
        d = domain(l["energy"], name)
        assert d["method"] == "measured"
        if d["energy_joules"] is not None:
            assert d["energy_joules"] >= 0
            got += d["energy_joules"]
        assert abs(got - d["energy_joules_total"]) < 1e-3 * max(1.0, got), (got, d)
    return got


def test_two_jobs_share_the_package_by_cpu_time(tmp_path):
    sys_root = str(tmp_path / "sys")
    meter = Meter(make_zone(sys_root, "intel-rapl:0", "package-0"), watts=30.0)
    meter.start()
    # the other job: a whole core outside the tracked tree for as long as the tracked one runs
    other = subprocess.Popen([sys.executable, "-c", BURN.format(secs=60)])
    try:
        out = str(tmp_path / "out.jsonl")
        r = tracker_on(sys_root, ["-o", out, "--", sys.executable, "-c", BURN.format(secs=2.0)])
        assert r.returncode == 0, r.stderr
    finally:
        other.kill()
        other.wait()
        meter.stop()
    lines = energy_lines(out)
    assert len(lines) >= 5
    total = check_lossless(lines, "package-0")
    mine = 0.0
    for l in lines:
        e, d = l["energy"], domain(l["energy"], "package-0")
        assert d["in_total"] is True
        assert e["energy_joules"] == pytest.approx(d["energy_joules"], abs=1e-3)
        cpu, proc = l["cpu"], l["process"]
        if d["energy_joules"] is None or proc["cores_used"] is None:
            continue
        # the rule, line by line: the tree's cores over the machine's busy cores (as written,
        # to the lines' decimals)
        busy = cpu["utilization_pct"]
        share = min(1.0, proc["cores_used"] / busy) if busy else 0.0
        assert d["process_share"] == pytest.approx(share, abs=2e-3)
        assert d["process_energy_joules"] == pytest.approx(share * d["energy_joules"], abs=2e-3 * d["energy_joules"] + 1e-3)
        mine += d["process_energy_joules"]
    assert e["process_method"] == "measured"
    assert e["process_energy_joules_total"] == pytest.approx(mine, rel=1e-3, abs=1e-3)
    # two jobs burning a core each on two cores: the tracked one is charged for its own CPU time
    # (the kernel's, cpu_secs_total) out of the machine's busy time, not for the other job's
    job_cpu = lines[-1]["process"]["cpu_secs_total"]
    busy = sum(l["cpu"]["utilization_pct"] * l["interval_secs"] for l in lines)
    assert mine / total == pytest.approx(job_cpu / busy, rel=0.2), (mine, total, job_cpu, busy)
    assert 0.1 < mine / total < 0.75, (mine, total)
    # the counter ran at 30 W: so does the machine's mean power
    watts = [l["energy"]["power_watts"] for l in lines[1:] if l["energy"]["power_watts"] is not None]
    assert sum(watts) / len(watts) == pytest.approx(30.0, rel=0.25)


def test_wrap_around_in_the_middle_of_a_run(tmp_path):
    sys_root = str(tmp_path / "sys")
    max_uj = 40_000_000  # 40 J: at 30 W the counter wraps every 1.33 s
    path = make_zone(sys_root, "intel-rapl:0", "package-0", max_uj=max_uj)
    meter = Meter(path, watts=30.0, max_uj=max_uj)
    meter.start()
    try:
        out = str(tmp_path / "out.jsonl")
        r = tracker_on(sys_root, ["-o", out, "--", "sleep", "3.5"])
        assert r.returncode == 0, r.stderr
    finally:
        meter.stop()
    lines = energy_lines(out)
    total = check_lossless(lines, "package-0")
    assert total > 40.0  # more than the range: it wrapped, and was undone
    watts = [domain(l["energy"], "package-0")["power_watts"] for l in lines[1:]]
    watts = [w for w in watts if w is not None]
    assert min(watts) > 0
    assert sum(watts) / len(watts) == pytest.approx(30.0, rel=0.25)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the tracker as another user")
def test_root_only_counter_read_as_another_user():
    top = tempfile.mkdtemp(prefix="rt-energy-ro-", dir="/tmp")  # a path nobody can walk
    os.chmod(top, 0o755)
    try:
        root_only_as_nobody(top)
    finally:
        shutil.rmtree(top)


def root_only_as_nobody(top):
    sys_root = os.path.join(top, "sys")
    path = make_zone(sys_root, "intel-rapl:0", "package-0", uj=123456)
    os.chmod(path, 0o400)  # root-only, as since CVE-2020-8694
    for d, _, _ in os.walk(sys_root):
        os.chmod(d, 0o755)
    env = tracker_env(TRACKER_SYS_ROOT=sys_root)
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", TRACKER, "--cgroup", "off", "-i", "0.2",
           "-q", "-o", "-", "--", "sh", "-c", "sleep 0.7; exit 3"]
    if VALGRIND:
        pytest.skip("the valgrind wrapper lives in a directory nobody may not read")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 3, r.stderr  # the job's status, whatever energy could not be read
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    assert lines
    e = lines[-1]["energy"]
    assert e["missing"] and "chmod" in e["missing"] and "energy_uj" in e["missing"], e["missing"]
    assert [d["name"] for d in e["domain"]] == ["cpu"]
    assert e["method"] == "estimated"


def test_estimate_on_a_machine_without_counters(tmp_path):
    out = str(tmp_path / "out.jsonl")
    r = run(["--cgroup", "off", "-i", "0.2", "-q", "-o", out, "--", sys.executable, "-c", BURN.format(secs=1.0)],
            timeout=60)
    assert r.returncode == 0, r.stderr
    lines = energy_lines(out)
    if any(d["source"] != "model" for d in lines[0]["energy"]["domain"]):
        pytest.skip("this machine has energy counters")
    e = lines[-1]["energy"]
    d = domain(e, "cpu")
    assert d["method"] == "estimated" and e["method"] == "estimated" and e["process_method"] == "estimated"
    assert e["model"]  # the model in words, never a silent constant
    assert e["energy_joules_total"] > 0 and 0 < e["process_energy_joules_total"] <= e["energy_joules_total"] + 1e-3


def test_energy_off_writes_none(tmp_path):
    out = str(tmp_path / "out.jsonl")
    r = run(["--energy", "off", "--cgroup", "off", "-i", "0.2", "-q", "-o", out, "--", "sleep", "0.5"], timeout=60)
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    assert lines and all("energy" not in l for l in lines)


def test_gpu_energy_and_the_jobs_share(tmp_path):
    """GPU 0 (NVML's energy counter, the job's processes alone on it) goes wholly to the job, to
    the millijoule of the counter's growth; GPU 1 (no counter: its power draw times the time)
    is sampled, and none of it is the job's (no process of the job there)."""
    from test_gpu import A100, FAKE, H100, PY, set_cfg, wait_for
    cfg = tmp_path / "nvml.cfg"
    stop = tmp_path / "stop"
    head = f"{A100} energy_mj=1000000\n{H100} power_mw=150000\nunsupported 1 energy\nchildren 0 mem=1048576 sm=50\n"
    cfg.write_text(head)
    out = tmp_path / "s.jsonl"
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    job = [PY, "-c", "import os, sys, time\nfor _ in range(1200):\n    if os.path.exists(sys.argv[1]): break\n"
                     "    time.sleep(0.05)", str(stop)]
    p = subprocess.Popen([TRACKER, "--cgroup", "off", "-i", "0.1", "-o", str(out), "--", *job], env=env,
                         stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: out.exists() and out.read_text().count("\n") >= 2, "two samples")
        set_cfg(cfg, head.replace("energy_mj=1000000", "energy_mj=1250500"))
        # the counter is read every 30 s (and at a run's end): meanwhile the total grows by the
        # power drawn times the time (210.5 W here, less than the counter's growth)
        n = out.read_text().count("\n")
        wait_for(lambda: out.read_text().count("\n") >= n + 3, "three more samples")
    finally:
        stop.write_text("")
        _, err = p.communicate(timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, err
    lines = [json.loads(l) for l in out.read_text().splitlines() if l.strip()]
    e = lines[-1]["energy"]
    g0, g1 = domain(e, "gpu-0"), domain(e, "gpu-1")
    assert (g0["method"], g0["source"], g0["device"]) == ("measured", "nvml", "GPU-11111111-2222-3333-4444-555555555555")
    # the run's last reading of the counter: its own figure (the estimates stayed below it)
    assert g0["energy_joules_total"] == 250.5
    assert g0["process_energy_joules_total"] == 250.5  # the job alone on it: all of it
    # mid-run (the counter not read): 15/16 of the power drawn (210.5 W) times each interval
    for l in lines[1:-1]:
        g = domain(l["energy"], "gpu-0")
        assert g["energy_joules"] == pytest.approx(210.5 * 15 / 16 * l["interval_secs"], rel=0.05)  # NVML read when the sample is
    assert (g1["method"], g1["source"]) == ("sampled", "nvml")
    # 150 W all along: the power times the time the lines cover
    covered = sum(l["interval_secs"] for l in lines)
    assert g1["energy_joules_total"] == pytest.approx(150.0 * covered, abs=150.0 * 0.001 * len(lines))
    assert g1["process_energy_joules_total"] == 0
    # the CPU's estimate is in the machine's total (in every interval it could be made: a last
    # interval of a few ms under load may have no CPU figure to estimate from)
    with_cpu = [l["energy"] for l in lines if domain(l["energy"], "cpu")["energy_joules"] is not None]
    assert with_cpu and all(x["method"] == "estimated" for x in with_cpu)
    parts = sum(d["process_energy_joules_total"] for d in e["domain"] if d["process_energy_joules_total"] is not None)
    assert e["process_energy_joules_total"] == pytest.approx(parts, abs=1e-3)


def test_summary_energy_and_carbon(tmp_path):
    """The run's energy in the summary's first lines and its JSON, and its carbon: a given intensity
    (exactly joules / 3.6e6 x g/kWh), a zone of the shipped table for a recorded file, and
    "unknown" (never a world average) when neither is set."""
    out = str(tmp_path / "out.jsonl")
    r = run(["--cgroup", "off", "-i", "0.2", "-q", "-o", out, "--summary", "--grid-intensity", "400", "--",
             sys.executable, "-c", BURN.format(secs=0.5)], timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines() + r.stderr.splitlines()
    energy = [l for l in lines if l.startswith("Energy ")]
    carbon = [l for l in lines if l.startswith("Carbon ")]
    assert energy and "estimated" in energy[0] and "machine" in energy[0], lines
    assert carbon and "CO2e" in carbon[0] and "400 g/kWh, given" in carbon[0], carbon

    def summary(*extra):
        p = run(["summary", "--json", *extra, out], timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)["energy"]

    e = summary()
    recorded = energy_lines(out)
    assert e["process_joules"] == pytest.approx(sum(l["energy"]["process_energy_joules"] or 0 for l in recorded),
                                                abs=1e-3)
    assert e["method"] == "estimated" and e["process_method"] == "estimated"
    assert e["carbon"] is None  # a recorded file without a grid: unknown
    e = summary("--grid-intensity", "400")
    assert e["carbon"]["process_co2e_grams"] == pytest.approx(e["process_joules"] / 3.6e6 * 400, abs=2e-6)
    assert e["carbon"]["source"] == "given"
    e = summary("--grid-zone", "fr")
    assert (e["carbon"]["zone"], e["carbon"]["name"]) == ("FR", "France")
    assert e["carbon"]["co2e_grams"] == pytest.approx(e["joules"] / 3.6e6 * e["carbon"]["g_per_kwh"], abs=2e-6)
    p = run(["summary", out], timeout=60)
    assert "Carbon      unknown (set --grid-zone or --grid-intensity)" in p.stdout, p.stdout
