"""The gpu_tracker-compatible Tracker (python/gpu_tracker) on the C tracker: gpu_tracker's API
(arguments, units and their errors, states and their errors, the context manager, to_json's
shape and __str__'s layout), its figures against the kernel (1 GiB held by a child process in
gigabytes and in bytes; a two-thread main), the GPU fields through the fake NVML with
gpu_uuids choosing one of two GPUs, and resource_usage_file (written while tracking, removed
at the end, left behind when the tracking process dies)."""
import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from holders import holder, release

from gpu_tracker import ProcessingUnitPercentages, ResourceUsage, Tracker
from gpu_tracker.tracker import ComputeTime, CPUUtilization, GPUUtilization, MaxGPURAM, MaxRAM, RSSValues

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("RT_BUILD_DIR", os.path.join(REPO, "build"))
FAKE_NVML = os.path.join(BUILD, "libfake-nvml.so")
GIB = 1 << 30



def test_arguments_and_their_errors(tmp_path):
    for kw, msg in (
        ({"ram_unit": "milibytes"},
         '"milibytes" is not a valid RAM unit. Valid values are bytes, gigabytes, kilobytes, megabytes, terabytes'),
        ({"gpu_ram_unit": "x"}, '"x" is not a valid GPU RAM unit.'),
        ({"time_unit": "weeks"}, '"weeks" is not a valid time unit. Valid values are days, hours, minutes, seconds'),
        ({"gpu_brand": "intel"}, '"intel" is not a valid GPU brand. Supported values are "nvidia" and "amd".'),
        ({"gpu_uuids": set()}, "gpu_uuids is not None but the set is empty."),
        ({"sleep_time": 0.001}, "Sleep time of 0.001 is invalid."),
        # gpu_tracker's floor, 0.1 s, since issue 27 (0.01 s before)
        ({"sleep_time": 0.05}, "Sleep time of 0.05 is invalid. Must be at least 0.1 seconds."),
        ({"n_expected_cores": 0}, "n_expected_cores of 0 is invalid."),
    ):
        with pytest.raises(ValueError) as e:
            Tracker(**kw)
        assert str(e.value).startswith(msg), (kw, str(e.value))
    t = Tracker(resource_usage_file=str(tmp_path / "u.json"))
    assert repr(t) == "State: NEW" and t.state == Tracker.State.NEW and Tracker.State.STOPPED.value == 2
    assert t.resource_usage is None
    assert t.n_join_attempts == 5 and t.join_timeout == 10.0
    default = Tracker()
    assert default.resource_usage_file.startswith(".gpu-tracker_") and default.resource_usage_file.endswith(".json")


def test_states_and_their_errors(tmp_path):
    t = Tracker(sleep_time=0.1, resource_usage_file=str(tmp_path / "u.json"))
    with pytest.raises(RuntimeError, match="Cannot stop tracking when tracking has not started yet."):
        t.stop()
    with pytest.raises(RuntimeError, match="before tracking completes"):
        str(t)
    with pytest.raises(RuntimeError, match="before tracking completes"):
        t.to_json()
    t.start()
    assert t.state == Tracker.State.STARTED
    with pytest.raises(RuntimeError, match="Cannot start tracking when tracking has already started."):
        t.start()
    t.stop()
    assert t.state == Tracker.State.STOPPED and isinstance(t.resource_usage, ResourceUsage)
    with pytest.raises(RuntimeError, match="Cannot stop tracking when tracking has already stopped."):
        t.stop()
    with pytest.raises(RuntimeError, match="Cannot start tracking when tracking has already stopped."):
        t.start()
    with Tracker(sleep_time=0.1, resource_usage_file=str(tmp_path / "v.json")) as c:
        assert c.state == Tracker.State.STARTED
        time.sleep(0.25)
    assert c.state == Tracker.State.STOPPED
    assert c.resource_usage.compute_time.time > 0


def test_to_json_shape_and_str_layout():
    t = Tracker(ram_unit="megabytes", gpu_ram_unit="kilobytes")
    pct = ProcessingUnitPercentages(276.3, 69.075, 261.96666, 65.49166)
    zero = ProcessingUnitPercentages()
    t.resource_usage = ResourceUsage(
        MaxRAM("megabytes", 67000.0, 31000.0, RSSValues(0.0171, 0.0071, 0.01), RSSValues(), RSSValues(1.5, 1.0, 0.5)),
        MaxGPURAM("kilobytes", 36594000.0, 6500000.0, 1600000.0, 4300000.0, 5800000.0),
        CPUUtilization(4, 1, pct, zero, zero, zero, 2, 6, 8),
        GPUUtilization(3, 2, ProcessingUnitPercentages(125.0, 62.5, 75.0, 37.5)),
        ComputeTime("hours", 0.08333333),
    )
    j = t.to_json()
    assert list(j) == ["max_ram", "max_gpu_ram", "cpu_utilization", "gpu_utilization", "compute_time"]
    assert list(j["max_ram"]) == ["unit", "system_capacity", "system", "main", "descendants", "combined"]
    assert list(j["max_ram"]["main"]) == ["total_rss", "private_rss", "shared_rss"]
    assert list(j["cpu_utilization"]) == ["system_core_count", "n_expected_cores", "system", "main", "descendants",
                                          "combined", "main_n_threads", "descendants_n_threads", "combined_n_threads"]
    assert list(j["cpu_utilization"]["system"]) == ["max_sum_percent", "max_hardware_percent", "mean_sum_percent",
                                                    "mean_hardware_percent"]
    assert j["cpu_utilization"]["system"]["mean_sum_percent"] == 261.96666  # to_json keeps every digit
    text = str(t)
    lines = text.split("\n")
    assert not text.endswith("\n")
    assert lines[:9] == ["Max RAM:", "   Unit: megabytes", "   System capacity: 67000.0", "   System: 31000.0",
                         "   Main:", "      Total RSS: 0.017", "      Private RSS: 0.007", "      Shared RSS: 0.01",
                         "   Descendants:"]
    for want in ("Max GPU RAM:", "   Unit: kilobytes", "   System capacity: 36594000.0", "   Main: 1600000.0",
                 "CPU utilization:", "   System core count: 4", "   Number of expected cores: 1",
                 "      Max sum percent: 276.3", "      Max hardware percent: 69.075",
                 "      Mean sum percent: 261.967", "      Mean hardware percent: 65.492",
                 "   Main number of threads: 2", "   Descendants number of threads: 6",
                 "   Combined number of threads: 8", "GPU utilization:", "   System GPU count: 3",
                 "   Number of expected GPUs: 2", "   GPU percentages:", "      Max hardware percent: 62.5",
                 "Compute time:", "   Unit: hours", "   Time: 0.083"):
        assert want in lines, (want, text)
    assert lines[-1] == "   Time: 0.083"


def test_one_gib_in_gigabytes_and_bytes(tmp_path):
    """1 GiB held by a child reads 1.07 gigabytes (gpu_tracker's decimal units) and
    1,073,741,824 bytes more or less the interpreter's own few MiB."""
    kid = holder(GIB)
    try:
        gb = Tracker(sleep_time=0.1, process_id=kid.pid, ram_unit="gigabytes",
                     resource_usage_file=str(tmp_path / "gb.json"))
        b = Tracker(sleep_time=0.1, process_id=kid.pid, ram_unit="bytes", resource_usage_file=str(tmp_path / "b.json"))
        with gb, b:
            time.sleep(0.5)
    finally:
        release(kid)
    m_gb, m_b = gb.resource_usage.max_ram.main, b.resource_usage.max_ram.main
    assert GIB <= m_b.private_rss <= GIB + 32 * (1 << 20), m_b
    assert 1.0737 <= m_gb.private_rss <= 1.0737 + 0.034, m_gb
    assert m_b.total_rss == pytest.approx(m_b.private_rss + m_b.shared_rss, abs=4096)
    assert m_gb.private_rss == pytest.approx(m_b.private_rss / 1e9, rel=0.01)
    assert re.search(r"^      Private RSS: 1\.0[78]\d*$", str(gb), re.M), str(gb)  # 1 GiB + the interpreter
    assert gb.resource_usage.max_ram.descendants == RSSValues(0.0, 0.0, 0.0)
    with open("/proc/meminfo") as f:
        total = int(f.readline().split()[1]) * 1024
    assert b.resource_usage.max_ram.system_capacity == pytest.approx(total, rel=1e-9)
    assert gb.resource_usage.max_ram.system_capacity == pytest.approx(total / 1e9, rel=1e-9)


THREADED = textwrap.dedent("""
    import subprocess, sys, threading
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    kid = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE)
    print(kid.pid, flush=True)
    sys.stdin.readline()
    kid.stdin.close()
    kid.wait()
    stop.set()
    t.join()
""")


def test_thread_counts_and_cpu_of_a_tracked_process(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", THREADED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    try:
        with Tracker(sleep_time=0.1, process_id=p.pid, n_expected_cores=2,
                     resource_usage_file=str(tmp_path / "u.json")) as t:
            time.sleep(0.6)
    finally:
        p.stdin.write("\n")
        p.stdin.close()
        p.wait(10)
        p.stdout.close()
    cpu = t.resource_usage.cpu_utilization
    assert (cpu.main_n_threads, cpu.descendants_n_threads, cpu.combined_n_threads) == (2, 1, 3)
    assert cpu.n_expected_cores == 2 and cpu.system_core_count == os.cpu_count()
    assert cpu.main.max_hardware_percent == pytest.approx(cpu.main.max_sum_percent / 2, abs=1e-6)
    assert cpu.system.max_hardware_percent == pytest.approx(cpu.system.max_sum_percent / os.cpu_count(), abs=1e-6)


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake NVML is built with the C library")
def test_gpu_fields_through_fake_nvml(tmp_path, monkeypatch):
    """Two GPUs (30% and 70% busy); gpu_uuids chooses the second. This process holds 1 GiB of
    VRAM on the first, a child 512 MiB on the second."""
    kid = holder(4096)
    cfg = tmp_path / "nvml.conf"
    cfg.write_text(
        "gpu uuid=GPU-aaaa util=30 mem_total=8589934592 mem_used=2147483648\n"
        "gpu uuid=GPU-bbbb util=70 mem_total=17179869184 mem_used=1073741824\n"
        f"pid 0 {os.getpid()} mem=1073741824 sm=10\n"
        f"pid 1 {kid.pid} mem=536870912 sm=20\n"
    )
    monkeypatch.setenv("TRACKER_NVML_LIBRARY", FAKE_NVML)
    monkeypatch.setenv("FAKE_NVML_CONFIG", str(cfg))
    with pytest.raises(ValueError, match="GPU UUID of GPU-cccc is not valid. Available UUIDs are: GPU-aaaa, GPU-bbbb"):
        Tracker(gpu_uuids={"GPU-cccc"})
    try:
        with Tracker(sleep_time=0.1, gpu_uuids={"GPU-bbbb"}, gpu_ram_unit="megabytes",
                     resource_usage_file=str(tmp_path / "u.json")) as t:
            time.sleep(0.6)
    finally:
        release(kid)
    g, r = t.resource_usage.gpu_utilization, t.resource_usage.max_gpu_ram
    assert (g.system_gpu_count, g.n_expected_gpus) == (2, 1)
    assert g.gpu_percentages.max_sum_percent == pytest.approx(70)
    assert g.gpu_percentages.max_hardware_percent == pytest.approx(70)
    assert g.gpu_percentages.mean_sum_percent == pytest.approx(70)
    assert r.unit == "megabytes"
    assert r.system_capacity == pytest.approx((8589934592 + 17179869184) / 1e6)
    assert r.system == pytest.approx((2147483648 + 1073741824) / 1e6)
    assert r.main == pytest.approx(1073741824 / 1e6)
    assert r.descendants == pytest.approx(536870912 / 1e6)
    assert r.combined == pytest.approx((1073741824 + 536870912) / 1e6)
    # every GPU counts when none is chosen
    with Tracker(sleep_time=0.1, resource_usage_file=str(tmp_path / "all.json")) as every:
        time.sleep(0.35)
    ga = every.resource_usage.gpu_utilization
    assert (ga.system_gpu_count, ga.n_expected_gpus) == (2, 2)
    assert ga.gpu_percentages.max_sum_percent == pytest.approx(100)
    assert ga.gpu_percentages.max_hardware_percent == pytest.approx(50)


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake NVML is built with the C library")
def test_gpu_work_through_fake_nvml(tmp_path, monkeypatch):
    """0.19: where the GPU measures its work (NVML GPM), ResourceUsage.gpu_work has it and
    to_json() and str() end with it; where it does not, gpu_work is None and both are exactly
    gpu_tracker's (no key, no line)."""
    cfg = tmp_path / "nvml.conf"
    gpu = "gpu uuid=GPU-aaaa util=40 mem_total=8589934592 mem_used=1073741824\n"
    mine = f"pid 0 {os.getpid()} mem=1073741824 sm=42\n"
    monkeypatch.setenv("TRACKER_NVML_LIBRARY", FAKE_NVML)
    monkeypatch.setenv("FAKE_NVML_CONFIG", str(cfg))
    cfg.write_text("cost off\n" + gpu + "gpm 0 sm=15.9 occ=0.85 tensor=0 dram=0.5 fp32=2.3 pcie_tx=10 pcie_rx=20\n" + mine)
    with Tracker(sleep_time=0.1) as t:
        time.sleep(0.6)
    w = t.resource_usage.gpu_work
    assert w["sm_active_pct"]["peak"] == pytest.approx(15.9, abs=1e-4)
    assert w["fp32_active_pct"]["peak"] == pytest.approx(2.3, abs=1e-4)
    assert w["pcie_bytes_per_sec"]["peak"] == pytest.approx(30 * 1048576)
    assert w["fp64_active_pct"] == {"mean": None, "peak": None, "p50": None, "p95": None}  # not scripted
    assert w["shared"] is False
    j = t.to_json()
    assert list(j) == ["max_ram", "max_gpu_ram", "cpu_utilization", "gpu_utilization", "compute_time", "gpu_work"]
    assert j["gpu_work"] == w
    lines = str(t).splitlines()
    assert "GPU work:" in lines and "   sm active pct:" in lines
    assert lines.index("GPU work:") > lines.index("Compute time:")

    cfg.write_text("cost off\n" + gpu + mine)  # no GPM: gpu_tracker's own shape
    with Tracker(sleep_time=0.1) as t:
        time.sleep(0.35)
    assert t.resource_usage.gpu_work is None
    assert list(t.to_json()) == ["max_ram", "max_gpu_ram", "cpu_utilization", "gpu_utilization", "compute_time"]
    assert "GPU work" not in str(t)


def test_resource_usage_file(tmp_path):
    path = tmp_path / "usage.json"
    t = Tracker(sleep_time=0.1, resource_usage_file=str(path))
    assert not path.exists()  # not before tracking starts
    t.start()
    deadline = time.time() + 5
    while not path.exists() and time.time() < deadline:
        time.sleep(0.05)
    with open(path) as f:
        backup = json.load(f)
    assert set(backup) == {"max_ram", "max_gpu_ram", "cpu_utilization", "gpu_utilization", "compute_time"}
    t.stop()
    assert not path.exists()  # a completed run keeps its figures in memory only
    # a tracking process that dies leaves the backup with the figures so far
    dead = tmp_path / "dead.json"
    code = textwrap.dedent(f"""
        import os, time
        from gpu_tracker import Tracker
        t = Tracker(sleep_time=0.1, resource_usage_file={str(dead)!r}, ram_unit="megabytes")
        t.start()
        time.sleep(0.5)
        os._exit(3)
    """)
    p = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), timeout=60)
    assert p.returncode == 3
    with open(dead) as f:
        left = json.load(f)
    assert left["max_ram"]["unit"] == "megabytes" and left["max_ram"]["main"]["total_rss"] > 1
    assert left["compute_time"]["time"] > 0


def test_vanished_process_warns_and_reports_nothing(tmp_path, caplog):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    t = Tracker(process_id=p.pid, resource_usage_file=str(tmp_path / "u.json"))
    with caplog.at_level("WARNING"):
        t.start()
        t.stop()
    assert f"The target process of ID {p.pid} ended before tracking could begin." in caplog.text
    assert t.resource_usage.max_ram.main.total_rss == 0.0
    quiet = Tracker(process_id=p.pid, disable_logs=True, resource_usage_file=str(tmp_path / "v.json"))
    caplog.clear()
    with caplog.at_level("WARNING"):
        quiet.start()
        quiet.stop()
    assert "ended before tracking could begin" not in caplog.text
