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


# rt_gpu_work's figures, the keys of each GPU's work in the JSON line (docs/contracts.md)
WORK_KEYS = ("sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "tensor_hmma_active_pct",
             "tensor_imma_active_pct", "tensor_dfma_active_pct", "dram_active_pct", "fp64_active_pct",
             "fp32_active_pct", "fp16_active_pct", "pcie_tx_bytes_per_sec", "pcie_rx_bytes_per_sec",
             "nvlink_tx_bytes_per_sec", "nvlink_rx_bytes_per_sec")


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
        "temperature_celsius": 55, "power_watts": 210.5, "frequency_mhz": 1410, "core_count": 6912,
        "power_throttled_secs": 0, "thermal_throttled_secs": 0,  # the violation counters, from the first sample
        **{k: None for k in WORK_KEYS},  # no GPM on this one (no gpm line)
        "vram_reserved_bytes": 0, "mig": []}  # NVML's v2 memory: nothing reserved on the fake
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


@pytest.mark.serial  # its first row must come while the 0.7 s job lives: a loaded machine starts it late
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
    set_cfg(cfg, f"{A100}\n{H100}\nlost 1\n")  # whole at once: never a read of half a file
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3  # the job's status, whatever the GPU did
    samples = [json.loads(l) for l in out.read_text().splitlines()]
    before, after = samples[0], samples[-1]
    assert before["gpu"][1]["utilization_pct"] == 0
    assert after["gpu"][1]["utilization_pct"] is None and after["gpu"][1]["vram_used_bytes"] is None
    assert after["gpu"][1]["uuid"] == "GPU-22222222"  # still listed, with what is known
    assert after["gpu"][0]["utilization_pct"] == 40  # the other GPU is unaffected
    assert err.count("fallen off the bus") == 1


def test_throttled_seconds(tmp_path):
    """The GPUs' time at power and thermal limits in the JSON line: GPU 0 from NVML's violation
    counters (their growth since the first sample, rewritten mid-run), GPU 1 (counters not
    supported) from the throttle reasons times the interval: none set, so 0, not null."""
    cfg = tmp_path / "nvml.cfg"
    stop = tmp_path / "stop"
    cfg.write_text(f"{A100} viol_power_ns=1000000000 viol_thermal_ns=5\n{H100} reasons=0x1\nunsupported 1 violation\n")
    out = tmp_path / "s.jsonl"
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    job = [PY, "-c", "import os, sys, time\nfor _ in range(1200):\n    if os.path.exists(sys.argv[1]): break\n"
                     "    time.sleep(0.05)", str(stop)]
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), "--", *job], env=env, stderr=subprocess.PIPE,
                         text=True)
    try:
        wait_for(lambda: out.exists() and out.read_text().count("\n") >= 1, "a first sample")
        set_cfg(cfg, f"{A100} viol_power_ns=2500000000 viol_thermal_ns=250000005\n{H100} reasons=0x1\n"
                     "unsupported 1 violation\n")
        wait_for(lambda: '"power_throttled_secs":1.5' in out.read_text(), "the counters' growth")
    finally:
        stop.write_text("")
        _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    samples = [json.loads(l) for l in out.read_text().splitlines()]
    first, last = samples[0]["gpu"], samples[-1]["gpu"]
    assert first[0]["power_throttled_secs"] == 0 and first[0]["thermal_throttled_secs"] == 0
    assert last[0]["power_throttled_secs"] == 1.5 and last[0]["thermal_throttled_secs"] == 0.25
    assert last[1]["power_throttled_secs"] == 0 and last[1]["thermal_throttled_secs"] == 0  # GpuIdle only


def test_missing_symbols_null_their_fields(tmp_path):
    p = run_with(f"{A100}\n", tmp_path, ["sleep", "0.4"], lib=FAKE_MIN)
    assert p.returncode == 0, p.stderr
    g = samples_of(p)[0]["gpu"][0]
    assert g["name"] == "NVIDIA A100-SXM4-80GB" and g["vram_total_bytes"] == 85899345920
    for k in ("uuid", "host_id", "utilization_pct", "temperature_celsius", "power_watts", "frequency_mhz",
              "core_count", "power_throttled_secs", "thermal_throttled_secs"):
        assert g[k] is None, k
    assert g["detail"] == {"driver": "nvidia"}
    pr = samples_of(p)[0]["process"]
    assert pr["gpu_utilization_pct"] is None and pr["gpu_vram_used_bytes"] is None


@pytest.mark.serial  # the first sample has the NVML worker's answer only when the machine is not loaded
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


def test_whole_machine_mode_process_gpu_columns(tmp_path):
    """Without a tracked process the CSV's process GPU columns hold every process on the GPUs
    (as the Rust tool fills them without --pid): pid 1 on both GPUs, another pid on the first;
    the other process columns stay empty. With a tracked process they are the tree's alone."""
    cfg = tmp_path / "nvml.cfg"
    # every process is "the job" here: each GPU's own utilization is theirs (the per-process
    # samples are read only where another process shares a job's GPU), 50 and 90 as theirs sum
    cfg.write_text(f"{A100.replace('util=40', 'util=50')}\n{H100.replace('util=0', 'util=90')}\n"
                   "pid 0 1 mem=1048576 sm=20\npid 0 4242 mem=2097152 sm=30\npid 1 1 mem=5242880 sm=90\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", "-"], env=env, stdout=subprocess.PIPE, text=True)
    lines = [p.stdout.readline() for _ in range(4)]
    p.terminate()
    p.wait(timeout=10)
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    assert len(rows) == 3
    for r in rows:
        assert float(r["process_gpu_vram_mib"]) == pytest.approx(8.0)  # 1 + 2 + 5 MiB
        assert r["process_gpu_utilized"] == "2"  # both GPUs have a process
        assert float(r["process_gpu_usage"]) == pytest.approx(1.4)  # 20 + 30 + 90 percent
        assert [r[c] for c in ("process_pid", "process_children", "process_utime", "process_memory_mib",
                               "process_disk_write_bytes")] == [""] * 5
    # a tracked process: its own share only (nothing of it is on the GPUs)
    p = run_with(cfg.read_text(), tmp_path, ["sleep", "0.4"], fmt="csv")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert rows and all(float(r["process_gpu_vram_mib"]) == 0 and r["process_gpu_utilized"] == "0" for r in rows)


# ---- NVML failing or hanging: the tracker goes on, the job's status is passed through ----------

def set_cfg(cfg, text):
    """Rewrites the fake's config whole (a rename: the tracker never reads half of it)."""
    tmp = cfg.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, cfg)


def wait_for(pred, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def read_samples(out):
    return [json.loads(l) for l in out.read_text().splitlines() if l.endswith("}")] if out.exists() else []


def start_tracked(tmp_path, cfg_text, job_args=True):
    """The tracker writing samples to s.jsonl, with (job_args) a job that exits 3 once the
    file `go` exists. Returns (process, cfg, out, go)."""
    cfg, out, go = tmp_path / "nvml.cfg", tmp_path / "s.jsonl", tmp_path / "go"
    set_cfg(cfg, cfg_text)
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    job = ["--", PY, "-c", f"import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
           "raise SystemExit(3)"] if job_args else []
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), *job], env=env, stderr=subprocess.PIPE, text=True)
    return p, cfg, out, go


def stderr_until(p, text, timeout=60):
    """Reads the tracker's stderr line by line until a line holds text; returns what was read."""
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"no {text!r} on stderr: {''.join(seen)!r}")


def test_calls_failing_mid_run(tmp_path):
    """Any error code, not only a lost GPU: the failing fields are null, each told once per GPU
    and kind, the rest goes on."""
    base = f"{A100}\n{H100}\nchildren 0 mem=536870912 sm=70\n"
    p, cfg, out, go = start_tracked(tmp_path, base)
    wait_for(lambda: len(read_samples(out)) >= 2, "two samples")
    set_cfg(cfg, base + "fail 0 999 util temp procs procutil\nfail 1 10 power\n")
    n = len(read_samples(out))
    wait_for(lambda: len(read_samples(out)) >= n + 4, "four more samples")
    go.touch()
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3, err
    last = read_samples(out)[-1]
    g0, g1 = last["gpu"]
    assert g0["utilization_pct"] is None and g0["temperature_celsius"] is None
    assert g0["vram_used_bytes"] == 1073741824 and g0["power_watts"] == 210.5
    assert g1["power_watts"] is None and g1["utilization_pct"] == 0
    # the tree's share: GPU 0's lists fail, GPU 1 has none of the tree's processes
    assert last["process"]["gpu_vram_used_bytes"] == 0 and last["process"]["gpu_utilization_pct"] == 0
    for kind in ("utilization", "temperature", "process list", "per-process utilization"):
        assert err.count(f"GPU GPU-11111111-2222-3333-4444-555555555555: NVML could not read its {kind} "
                         "(error 999)") == 1, err
    assert err.count("GPU GPU-22222222: NVML could not read its power draw (error 10)") == 1, err
    assert sum("NVML" in line for line in err.splitlines()) == 5, err


def test_count_failing_no_gpus(tmp_path):
    p = run_with(f"count_fail 999\n{A100}\n", tmp_path, [PY, "-c", "raise SystemExit(5)"])
    assert p.returncode == 5
    assert samples_of(p)[0]["gpu"] == []
    assert p.stderr.count("NVML could not count the GPUs (error 999)") == 1


def test_hang_mid_run(tmp_path):
    """A driver that stops answering: one warning after the deadline, the GPU figures null from
    then on, samples keep coming, and the tool ends as soon as the job does."""
    p, cfg, out, go = start_tracked(tmp_path, f"{A100}\nchildren 0 mem=536870912 sm=70\n")
    wait_for(lambda: len(read_samples(out)) >= 2, "two samples")
    set_cfg(cfg, f"{A100}\nchildren 0 mem=536870912 sm=70\nhang util\n")
    stderr_until(p, "NVML did not answer within 2 s; NVIDIA GPUs are not tracked from now on")
    n = len(read_samples(out))
    wait_for(lambda: len(read_samples(out)) >= n + 3, "three more samples")  # sampling never waits again
    go.touch()
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3, err
    assert "NVML did not answer" not in err  # told once
    samples = read_samples(out)
    assert samples[0]["gpu"][0]["utilization_pct"] == 40
    assert samples[0]["process"]["gpu_vram_used_bytes"] == 536870912
    for s in samples[n:]:
        g = s["gpu"][0]
        assert g["uuid"] == "GPU-11111111-2222-3333-4444-555555555555"  # still listed, with what is known
        assert g["utilization_pct"] is None and g["vram_used_bytes"] is None and g["temperature_celsius"] is None
        assert s["process"]["gpu_vram_used_bytes"] is None and s["process"]["gpu_utilization_pct"] is None
        assert s["process"]["alive"] is not None


def test_hang_at_start(tmp_path):
    """nvmlInit never returns: the job runs meanwhile (it starts before the sampler), the
    tracker goes on without NVIDIA GPUs after the deadline, with the job's status."""
    cfg, out, go, marker = tmp_path / "nvml.cfg", tmp_path / "s.jsonl", tmp_path / "go", tmp_path / "job-ran"
    set_cfg(cfg, f"{A100}\nhang init\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), "--", PY, "-c",
                          f"open({str(marker)!r}, 'w').close()\nimport os, time\n"
                          f"while not os.path.exists({str(go)!r}): time.sleep(0.02)\nraise SystemExit(3)"],
                         env=env, stderr=subprocess.PIPE, text=True)
    stderr_until(p, "NVML did not answer within 10 s; NVIDIA GPUs are not tracked from now on")
    assert marker.exists()  # the job was running while the tracker waited
    wait_for(lambda: len(read_samples(out)) >= 2, "two samples")
    go.touch()
    _, err = p.communicate(timeout=30)
    assert p.returncode == 3, err
    assert "NVML did not answer" not in err
    assert all(s["gpu"] == [] for s in read_samples(out))


def test_hang_whole_machine_sigterm(tmp_path):
    """Whole-machine mode: SIGTERM ends the tool promptly after NVML got stuck mid-run, and
    while it is stuck at the start."""
    p, cfg, out, _ = start_tracked(tmp_path, f"{A100}\n", job_args=False)
    wait_for(lambda: len(read_samples(out)) >= 2, "two samples")
    set_cfg(cfg, f"{A100}\nhang memory\n")
    stderr_until(p, "NVML did not answer within 2 s")
    n = len(read_samples(out))
    wait_for(lambda: len(read_samples(out)) >= n + 2, "two more samples")
    p.terminate()
    _, err = p.communicate(timeout=10)  # no waiting on the stuck thread
    assert p.returncode == 0, err
    assert read_samples(out)[-1]["gpu"][0]["vram_used_bytes"] is None

    out.unlink()
    set_cfg(cfg, f"{A100}\nhang init\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out)], env=env, stderr=subprocess.PIPE, text=True)
    # the NVML worker exists: signals are blocked and NVML is starting
    wait_for(lambda: len(os.listdir(f"/proc/{p.pid}/task")) >= 2, "the NVML worker")
    p.terminate()
    _, err = p.communicate(timeout=30)  # at most the start's deadline
    assert p.returncode == 0, err
    assert err.count("NVML did not answer within 10 s") == 1


def test_hang_info(tmp_path):
    """The host's facts (resource-tracker info) open NVML too: the same deadline."""
    cfg = tmp_path / "nvml.cfg"
    set_cfg(cfg, f"{A100}\nhang count\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.run([TRACKER, "info", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert info["host"]["gpu_count"] == 0
    assert p.stderr.count("NVML did not answer within 10 s") == 1


# ---- NVML's cost (issue 65 item 4) and nvidia-smi's memory rule (item 5) -----------------------

def calls_of(path):
    """The fake's call counts ($FAKE_NVML_CALLS_OUT): {call: count}."""
    return {k: int(v) for k, v in (l.split() for l in path.read_text().splitlines() if l.strip())}


def test_counters_at_start_mark_and_end_exact(tmp_path):
    """The energy counter (4 ms of CPU a call on an H200) is read at the first sample, at the
    sample after a phase's mark and at the run's end, not at every sample: a job of ~1.5 s at
    -i 0.1 reads it 3 times in 15 samples. Between, the total grows by the power drawn times the
    time; the end's reading makes it the counter's own to the millijoule (the counter grew by
    1234.567 J while the power said 100 W), and the phase's energy ends at the mark's reading."""
    cfg, calls = tmp_path / "nvml.cfg", tmp_path / "calls"
    gpu = f"{A100.replace('power_mw=210500', 'power_mw=100000')} energy_mj={{mj}}\nchildren 0 mem=1048576 sm=50\n"
    cfg.write_text(gpu.format(mj=1000000))
    job = (f"import os, subprocess, time\n"
           f"time.sleep(0.5)\n"
           f"open({str(cfg)!r} + '.tmp', 'w').write({gpu!r}.format(mj=1500000)); os.replace({str(cfg)!r} + '.tmp', {str(cfg)!r})\n"
           f"subprocess.run([{TRACKER!r}, 'phase', 'start', 'train'], check=True)\n"
           f"time.sleep(0.5)\n"
           f"open({str(cfg)!r} + '.tmp', 'w').write({gpu!r}.format(mj=2234567)); os.replace({str(cfg)!r} + '.tmp', {str(cfg)!r})\n"
           f"time.sleep(0.5)\n")
    p = run_with(cfg.read_text(), tmp_path, [PY, "-c", job], interval="0.1",
                 extra_env={"FAKE_NVML_CALLS_OUT": str(calls)})
    assert p.returncode == 0, p.stderr
    lines = samples_of(p)
    assert len(lines) >= 10
    n = calls_of(calls)
    assert (n["energy"], n["violation"], n["acct"]) == (3, 2 * 3, 3), calls.read_text()  # violation: 2 policies
    g0 = [next(d for d in l["energy"]["domain"] if d["name"] == "gpu-0") for l in lines]
    assert g0[-1]["energy_joules_total"] == 1234.567
    assert g0[-1]["process_energy_joules_total"] == 1234.567  # the job alone on it all along
    totals = [g["energy_joules_total"] for g in g0]
    assert totals == sorted(totals)  # never back before the end
    # the sample after the mark read the counter: 500 J then, whatever the estimates said
    marked = next(i for i, l in enumerate(lines) if l.get("phases") and l["phases"]["marks"])
    assert 500.0 in totals[marked:marked + 2], (marked, totals)


@pytest.mark.parametrize("shared", [False, True])
def test_per_process_samples_only_where_shared(tmp_path, shared):
    """NVML's per-process utilization (1.4 ms a call on an H200) is read where another process
    shares the job's GPU, each sample; with the job alone on it only at the first look (the
    device's own utilization is then the job's: util=40 here, its samples say 70)."""
    calls = tmp_path / "calls"
    cfg = f"{A100}\nchildren 0 mem=536870912 sm=70\n" + ("pid 0 1 mem=999 sm=20\n" if shared else "")
    p = run_with(cfg, tmp_path, [PY, "-c", "import time; time.sleep(1.0)"],
                 extra_env={"FAKE_NVML_CALLS_OUT": str(calls)})
    assert p.returncode == 0, p.stderr
    live = [s for s in samples_of(p) if s["process"]["alive"] and s["process"]["gpu_count_used"]]
    assert len(live) >= 3
    n = calls_of(calls)["procutil"]
    if shared:
        assert n >= 2 * len(live)  # a size query and the samples, every look
        assert all(s["process"]["gpu_utilization_pct"] == 70 for s in live)  # its own samples
    else:
        assert n <= 2  # the first look only
        assert all(s["process"]["gpu_utilization_pct"] == 40 for s in live[1:])  # the device's


@pytest.mark.parametrize("lib", ["full", "minimal"])
def test_vram_used_by_nvidia_smis_rule(tmp_path, lib):
    """VRAM used as nvidia-smi shows it: NVML's v2 memory information leaves the memory it
    reserves for the driver and firmware apart (615 MiB on an idle H200: nvidia-smi says 0 MiB
    used), vram_reserved_bytes; a driver without the v2 call (the minimal library) counts it in
    used, as its v1 call does, and reserved is null."""
    reserved = 644874240
    cfg = f"{A100.replace('mem_used=1073741824', 'mem_used=0')} mem_reserved={reserved}\n"
    p = run_with(cfg, tmp_path, ["sleep", "0.5"], lib=FAKE if lib == "full" else FAKE_MIN)
    assert p.returncode == 0, p.stderr
    g = samples_of(p)[0]["gpu"][0]
    if lib == "full":
        assert (g["vram_used_bytes"], g["vram_reserved_bytes"], g["vram_used_pct"]) == (0, reserved, 0)
    else:
        assert (g["vram_used_bytes"], g["vram_reserved_bytes"]) == (reserved, None)
