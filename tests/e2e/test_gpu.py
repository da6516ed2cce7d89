"""GPUs through a fake NVML library loaded with TRACKER_NVML_LIBRARY: every device field, NVML
errors turning only their fields null, a GPU lost mid-run, missing symbols, more GPUs than the
Python tracker can see, and the tracker's own children reported as GPU processes so the
per-process attribution is checked end to end. No real GPU is needed."""
import csv
import io
import json
import os
import subprocess
import time

import pytest

from conftest import BUILD_DIR, TRACKER, tracker_env

FAKE = os.path.join(BUILD_DIR, "libfake-nvml.so")
FAKE_MIN = os.path.join(BUILD_DIR, "libfake-nvml-min.so")
PY = "/usr/bin/python3"

A100 = ("gpu uuid=GPU-11111111-2222-3333-4444-555555555555 name=NVIDIA_A100-SXM4-80GB bus=00000000:3B:00.0 "
        "util=40 mem_total=85899345920 mem_used=1073741824 temp=55 power_mw=210500 clock=1410 cores=6912 cc=8.0 "
        "serial=1324021000123 power_limit_mw=400000")
H100 = ("gpu uuid=GPU-22222222 name=NVIDIA_H100_80GB_HBM3 bus=00000000:86:00.0 util=0 mem_total=85899345920 "
        "mem_used=0 temp=31 power_mw=70000 clock=345 cores=16896 cc=9.0")


def run_with(cfg_text, tmp_path, cmd, lib=FAKE, interval="0.2", fmt="json", extra_env=None, timeout=60):
    cfg = tmp_path / "nvml.cfg"
    cfg.write_text(cfg_text)
    env = tracker_env(TRACKER_NVML_LIBRARY=lib, FAKE_NVML_CONFIG=str(cfg), **(extra_env or {}))
    p = subprocess.run([TRACKER, "-i", interval, "-f", fmt, "-o", "-", "--", *cmd], capture_output=True, text=True,
                       env=env, timeout=timeout)
    return p


def samples_of(p):
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def test_device_fields(tmp_path):
    p = run_with(f"{A100}\n{H100}\n", tmp_path, ["sleep", "0.5"])
    assert p.returncode == 0, p.stderr
    s = samples_of(p)[0]
    assert len(s["gpu"]) == 2
    g = s["gpu"][0]
    assert g == {
        "uuid": "GPU-11111111-2222-3333-4444-555555555555", "name": "NVIDIA A100-SXM4-80GB", "device_type": "GPU",
        "host_id": "0000:3b:00.0",
        "detail": {"driver": "nvidia", "driver_version": "550.54.15", "cuda_driver_version": "12.4",
                   "pci_device_id": "0x20b010de", "pci_subsystem_id": "0x134f10de", "compute_capability": "8.0",
                   "serial": "1324021000123", "power_limit_watts": "400.0", "max_sm_clock_mhz": "1410",
                   "max_memory_clock_mhz": "1593"},
        "utilization_pct": 40, "vram_total_bytes": 85899345920, "vram_used_bytes": 1073741824, "vram_used_pct": 1.25,
        "temperature_celsius": 55, "power_watts": 210.5, "frequency_mhz": 1410, "core_count": 6912}
    assert s["gpu"][1]["name"] == "NVIDIA H100 80GB HBM3" and s["gpu"][1]["core_count"] == 16896
    assert p.stderr == ""


def test_tracker_children_attributed(tmp_path):
    """The fake reports the tracker's own children (the wrapped command) on GPU 0, and an
    unrelated process (pid 1) on GPU 0 and GPU 1: only the tree's share is the process's."""
    cfg = f"{A100}\n{H100}\nchildren 0 mem=536870912 sm=70\npid 0 1 mem=999 sm=20\npid 1 1 mem=5 sm=90\n"
    p = run_with(cfg, tmp_path, [PY, "-c", "import time; time.sleep(1.0)"])
    assert p.returncode == 0, p.stderr
    live = [s for s in samples_of(p) if s["process"]["alive"]]
    assert live
    for s in live:
        pr = s["process"]
        assert pr["gpu_vram_used_bytes"] == 536870912  # listed in both lists, counted once
        assert pr["gpu_utilization_pct"] == 70
        assert pr["gpu_count_used"] == 1


def test_csv_gpu_columns(tmp_path):
    cfg = f"{A100}\n{H100}\nchildren 0 mem=536870912 sm=70\n"
    p = run_with(cfg, tmp_path, [PY, "-c", "import time; time.sleep(0.7)"], fmt="csv")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    r = rows[0]
    assert float(r["system_gpu_usage"]) == pytest.approx(0.4)  # 40% + 0%: 0.4 GPUs busy
    assert float(r["system_gpu_vram_mib"]) == pytest.approx(1024.0)
    assert r["system_gpu_utilized"] == "1"
    assert float(r["process_gpu_usage"]) == pytest.approx(0.7)
    assert float(r["process_gpu_vram_mib"]) == pytest.approx(512.0)
    assert r["process_gpu_utilized"] == "1"


def test_not_supported_nulls_only_its_fields(tmp_path):
    cfg = f"{A100}\n{H100}\nunsupported 0 power temp procutil\n"
    p = run_with(cfg, tmp_path, ["sleep", "0.5"])
    assert p.returncode == 0, p.stderr
    g = samples_of(p)[0]["gpu"][0]
    assert g["power_watts"] is None and g["temperature_celsius"] is None
    assert "power_limit_watts" not in g["detail"]
    assert g["utilization_pct"] == 40 and g["vram_used_bytes"] == 1073741824
    assert samples_of(p)[0]["gpu"][1]["power_watts"] == 70
    assert p.stderr == ""


def test_gpu_lost_mid_run(tmp_path):
    cfg = tmp_path / "nvml.cfg"
    cfg.write_text(f"{A100}\n{H100}\n")
    out = tmp_path / "s.jsonl"
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), "--", PY, "-c", "import time; time.sleep(1.2)\nraise SystemExit(3)"],
                         env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while (not out.exists() or out.read_text().count("\n") < 2) and time.monotonic() < deadline:
        time.sleep(0.02)
    cfg.write_text(f"{A100}\n{H100}\nlost 1\n")
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3  # the job's status, whatever the GPU did
    samples = [json.loads(l) for l in out.read_text().splitlines()]
    before, after = samples[0], samples[-1]
    assert before["gpu"][1]["utilization_pct"] == 0
    assert after["gpu"][1]["utilization_pct"] is None and after["gpu"][1]["vram_used_bytes"] is None
    assert after["gpu"][1]["uuid"] == "GPU-22222222"  # still listed, with what is known
    assert after["gpu"][0]["utilization_pct"] == 40  # the other GPU is unaffected
    assert err.count("fallen off the bus") == 1


def test_missing_symbols_null_their_fields(tmp_path):
    p = run_with(f"{A100}\n", tmp_path, ["sleep", "0.4"], lib=FAKE_MIN)
    assert p.returncode == 0, p.stderr
    g = samples_of(p)[0]["gpu"][0]
    assert g["name"] == "NVIDIA A100-SXM4-80GB" and g["vram_total_bytes"] == 85899345920
    for k in ("uuid", "host_id", "utilization_pct", "temperature_celsius", "power_watts", "frequency_mhz",
              "core_count"):
        assert g[k] is None, k
    assert g["detail"] == {"driver": "nvidia"}
    pr = samples_of(p)[0]["process"]
    assert pr["gpu_utilization_pct"] is None and pr["gpu_vram_used_bytes"] is None


def test_more_than_four_gpus(tmp_path):
    """The Python tracker sees 4 GPUs through nvidia-smi pmon; every GPU counts here."""
    gpus = "".join(f"gpu uuid=GPU-{i} name=G{i} bus=00000000:{i + 16:02X}:00.0 util={i * 10} mem_total=100 "
                   f"mem_used={i} temp=40 power_mw=1000 clock=100 cores=10 cc=8.0\n" for i in range(6))
    p = run_with(gpus + "children 5 mem=4096 sm=55\n", tmp_path, [PY, "-c", "import time; time.sleep(0.7)"])
    s = samples_of(p)[0]
    assert [g["uuid"] for g in s["gpu"]] == [f"GPU-{i}" for i in range(6)]
    assert s["process"]["gpu_utilization_pct"] == 55 and s["process"]["gpu_vram_used_bytes"] == 4096


def test_no_library_no_gpu_no_warning(tmp_path):
    p = run_with(f"{A100}\n", tmp_path, ["sleep", "0.3"], lib=str(tmp_path / "no-such-libnvidia-ml.so"))
    assert p.returncode == 0
    s = samples_of(p)[0]
    assert s["gpu"] == []
    assert s["process"]["gpu_utilization_pct"] is None and s["process"]["gpu_count_used"] is None
    assert p.stderr == ""
    p = run_with("init_fail\n" + A100 + "\n", tmp_path, ["sleep", "0.3"])
    assert samples_of(p)[0]["gpu"] == [] and p.stderr == ""


def test_whole_machine_mode_lists_gpus(tmp_path):
    cfg = tmp_path / "nvml.cfg"
    cfg.write_text(f"{A100}\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", "-"], env=env, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    p.terminate()
    p.wait(timeout=10)
    s = json.loads(line)
    assert len(s["gpu"]) == 1 and s["process"] is None
