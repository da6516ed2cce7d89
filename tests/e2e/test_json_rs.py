"""The Rust tool's JSON lines (`--format json-rs`, docs/contracts.md §2 "The Rust tool's line") on a
real job: every object's keys in serde_json's order (sorted by bytes), the types the Rust
resource-tracker 0.1.14's structs have (integers where it has integer types), actual_interval_ms
left out of the first line only, the tree's figures under cpu in its units, held to what the
kernel and the job itself say (its CPU seconds from its own times(), its pid, the memory it
touched), and read back by `summary`; the GPUs through the fake NVML, whole machine and tracked
tree, in the Rust tool's units, with its GPU ids and detail map; a link's speed as its file says
it; the same format through the config file and TRACKER_FORMAT; a bad name exits 2; a missing -c
file is a warning with this format only."""
import json
import os
import subprocess
import sys

import pytest

from conftest import TRACKER, run, tracker_env
from test_gpu import A100, FAKE, H100

# The Rust tool's Sample at 3825a8c (src/metrics/*.rs): each member's JSON type ("int" for its
# u64/u32/i64/i32, "float" for f64, "str" for String), "?" for an Option (null allowed).
CPU = {"cgroup_usage_secs": "float?", "cgroup_utilization_pct": "float?", "per_core_pct": "list",
       "process_child_count": "int?", "process_cores_used": "float?", "process_count": "int",
       "process_disk_read_bytes": "int?", "process_disk_write_bytes": "int?", "process_gpu_usage": "float?",
       "process_gpu_utilized": "int?", "process_gpu_vram_mib": "float?", "process_pss_mib": "int?",
       "process_rss_mib": "int?", "process_stime_secs": "float?", "process_utime_secs": "float?",
       "stime_secs": "float", "utilization_pct": "float", "utime_secs": "float"}
MEMORY = {k: "int" for k in ("active_mib", "available_mib", "buffers_mib", "cached_mib", "free_mib", "inactive_mib",
                             "swap_total_mib", "swap_used_mib", "total_mib", "used_mib")}
MEMORY.update(swap_used_pct="float", used_pct="float")
NETWORK = {"driver": "str?", "interface": "str", "mac_address": "str?", "mtu": "int?", "operstate": "str?",
           "rx_bytes_per_sec": "float", "rx_bytes_total": "int", "speed_mbps": "int?", "tx_bytes_per_sec": "float",
           "tx_bytes_total": "int"}
MOUNT = {"available_bytes": "int", "filesystem": "str", "mount_point": "str", "total_bytes": "int", "used_bytes": "int",
         "used_pct": "float"}
DISK = {"capacity_bytes": "int?", "device": "str", "device_type": "str?", "model": "str?", "mounts": "list",
        "read_bytes_per_sec": "float", "read_bytes_total": "int", "serial": "str?", "vendor": "str?",
        "write_bytes_per_sec": "float", "write_bytes_total": "int"}
SAMPLE = {"actual_interval_ms": "int", "cpu": "dict", "disk": "list", "gpu": "list", "job_name": "str?",
          "memory": "dict", "network": "list", "resource-tracker-version": "str", "timestamp_secs": "int",
          "tracked_pid": "int?"}

# A job that touches 64 MiB, burns 0.8 s of CPU, then writes its pid and its own CPU
# seconds (times(): user, system) to a file.
JOB = r"""
import os, sys, time
buf = bytearray(64 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
t = time.process_time()
n = 0
while time.process_time() - t < 0.8:  # 0.8 s of CPU, however loaded the machine is
    n += 1
time.sleep(0.3)
tm = os.times()
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getpid()} {tm.user} {tm.system}")
time.sleep(0.3)
"""


def pairs(items):
    """object_pairs_hook: the keys in the order written, and no key twice."""
    keys = [k for k, _ in items]
    assert len(keys) == len(set(keys)), keys
    return ("obj", keys, dict(items))


def check(node, spec, where):
    """Holds a decoded object to spec: its keys sorted by their bytes as serde_json writes a map,
    exactly spec's, each of spec's type."""
    tag, keys, obj = node
    assert tag == "obj", where
    assert keys == sorted(keys, key=lambda k: k.encode()), (where, keys)
    want = set(spec) - ({"actual_interval_ms"} if "actual_interval_ms" not in obj else set())
    assert set(keys) == want, (where, set(keys) ^ want)
    for k, t in spec.items():
        if k not in obj:
            continue
        v = obj[k]
        if t.endswith("?") and v is None:
            continue
        base = t.rstrip("?")
        kinds = {"int": int, "float": float, "str": str, "list": list, "dict": tuple}
        if base == "float" and v is None:
            continue  # serde_json writes an f64 NaN as null
        assert isinstance(v, kinds[base]) and not isinstance(v, bool), (where, k, v)
    return obj


def decode(line):
    return json.loads(line, object_pairs_hook=pairs)


def test_real_job_in_the_rust_tools_shape(tmp_path):
    out, facts = tmp_path / "run.jsonl", tmp_path / "facts"
    r = run(["-i", "0.25", "-f", "json-rs", "-o", str(out), "--job-name", "rs-e2e", "--",
             sys.executable, "-c", JOB, str(facts)], timeout=60)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert len(lines) >= 4, lines
    pid, user, system = facts.read_text().split()
    cpu_secs = rss_max = 0
    for i, line in enumerate(lines):
        s = check(decode(line), SAMPLE, f"line {i}")
        assert ("actual_interval_ms" in s) == (i > 0), (i, line[:60])
        if i > 0:
            assert 0 < s["actual_interval_ms"] < 10000
        assert s["resource-tracker-version"] == run(["--version"]).stdout.split()[-1]
        assert s["job_name"] == "rs-e2e"
        assert s["tracked_pid"] == int(pid)
        cpu = check(s["cpu"], CPU, "cpu")
        # a core with no clock tick in the interval cannot tell its share: NaN, which serde_json
        # writes as null; only in an interval under two ticks (the last sample, taken as the
        # command ends, can come a few ms after the one before: 1 run in the ASan rehearsal)
        short = i > 0 and s["actual_interval_ms"] < 2000 / os.sysconf("SC_CLK_TCK")
        assert all(isinstance(c, float) or (c is None and short) for c in cpu["per_core_pct"]), \
            (i, s.get("actual_interval_ms"), cpu["per_core_pct"])
        mem = check(s["memory"], MEMORY, "memory")
        assert 0 < mem["used_mib"] <= mem["total_mib"] and mem["free_mib"] <= mem["total_mib"]
        for n in s["network"]:
            check(n, NETWORK, "network")
        for d in s["disk"]:
            disk = check(d, DISK, "disk")
            for m in disk["mounts"]:
                check(m, MOUNT, "mount")
        cpu_secs += (cpu["process_utime_secs"] or 0) + (cpu["process_stime_secs"] or 0)
        rss_max = max(rss_max, cpu["process_rss_mib"] or 0)
        assert cpu["process_pss_mib"] <= cpu["process_rss_mib"] + 1
        assert cpu["process_disk_read_bytes"] is not None and cpu["process_disk_read_bytes"] >= 0
    # the tree's CPU seconds of the intervals add up to what the job's own times() said (it
    # ran 0.3 s idle after reading them, so nothing of its later CPU is left out)
    own = float(user) + float(system)
    assert own > 0.5
    assert abs(cpu_secs - own) <= 0.1 * own + 0.05, (cpu_secs, own)
    assert rss_max >= 64, rss_max  # whole MiB: the 64 MiB it touched
    # the summary reads the Rust tool's lines back: the job's CPU seconds and memory
    r = run(["summary", "--json", str(out)])
    assert r.returncode == 0, r.stderr
    summ = json.loads(r.stdout)
    assert summ["samples"] == len(lines) and summ["job_name"] == "rs-e2e", summ
    assert abs(summ["process"]["cpu_secs"] - cpu_secs) < 0.02, (summ["process"], cpu_secs)
    assert summ["process"]["rss_mib"]["peak"] == rss_max


def test_config_and_environment(tmp_path):
    (tmp_path / "rt.toml").write_text('[tracker]\nformat = "json-rs"\n')
    r = run(["-c", str(tmp_path / "rt.toml"), "-i", "0.2", "-o", "-", "--", "sleep", "0.5"], timeout=30)
    assert r.returncode == 0, r.stderr
    first = decode(r.stdout.splitlines()[0])
    assert first[1][0] == "cpu" and "actual_interval_ms" not in first[2]  # sorted keys, the first line
    r = run(["-i", "0.2", "-o", "-", "--", "sleep", "0.5"], timeout=30, env=tracker_env(TRACKER_FORMAT="json-rs"))
    assert r.returncode == 0, r.stderr
    assert all(decode(l)[1][-2:] == ["timestamp_secs", "tracked_pid"] for l in r.stdout.splitlines())
    # our own JSON line opens with the version, under the Rust tool's key
    r = run(["-i", "0.2", "-o", "-", "--", "sleep", "0.3"], timeout=30)
    assert decode(r.stdout.splitlines()[0])[1][:2] == ["resource-tracker-version", "timestamp_secs"]
    for args, env in ((["-f", "json_rs"], {}), ([], {"TRACKER_FORMAT": "rust"})):
        r = run(args + ["--", "true"], env=tracker_env(**env))
        assert r.returncode == 2 and "json-rs" in r.stderr, r.stderr
    (tmp_path / "bad.toml").write_text('[tracker]\nformat = "jsonrs"\n')
    r = run(["-c", str(tmp_path / "bad.toml"), "--", "true"])
    assert r.returncode == 2 and "bad.toml:2:" in r.stderr and "json-rs" in r.stderr, r.stderr


GPU = {"core_count": "int?", "detail": "dict", "device_type": "str", "frequency_mhz": "int", "host_id": "str",
       "name": "str", "power_watts": "float", "temperature_celsius": "int", "utilization_pct": "float", "uuid": "str",
       "vram_total_bytes": "int", "vram_used_bytes": "int", "vram_used_pct": "float"}


def test_gpus_through_the_fake_nvml(tmp_path):
    """The GPUs in the Rust tool's shape (integer temperature and clock, the detail map sorted);
    without a tracked tree the process GPU members hold every process on the GPUs (as the Rust
    tool fills them without --pid: 1 + 2 + 5 MiB, 20 + 30 + 90 % = 1.4 GPUs, both GPUs); with a
    tree, its own share (nothing of it is on the GPUs: 0)."""
    if not os.path.exists(FAKE):
        pytest.skip("the fake NVML is not built")
    cfg = tmp_path / "nvml.cfg"
    # every process is "the job" without --pid: each GPU's own utilization is theirs (50 and 90,
    # as their samples sum), the per-process samples read only where another shares a job's GPU
    cfg.write_text(f"{A100.replace('util=40', 'util=50')}\n{H100.replace('util=0', 'util=90')}\n"
                   "pid 0 1 mem=1048576 sm=20\npid 0 4242 mem=2097152 sm=30\npid 1 1 mem=5242880 sm=90\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "json-rs", "-o", "-"], env=env, stdout=subprocess.PIPE, text=True)
    lines = [p.stdout.readline() for _ in range(3)]
    p.terminate()
    p.wait(timeout=10)
    for line in lines:
        s = check(decode(line), SAMPLE, "sample")
        assert s["tracked_pid"] is None
        cpu = check(s["cpu"], CPU, "cpu")
        assert cpu["process_gpu_vram_mib"] == pytest.approx(8.0)
        assert cpu["process_gpu_usage"] == pytest.approx(1.4)
        assert cpu["process_gpu_utilized"] == 2
        assert cpu["process_pss_mib"] is None and cpu["process_utime_secs"] is None
        gpus = [check(g, GPU, "gpu") for g in s["gpu"]]
        assert [g["uuid"] for g in gpus] == ["GPU-11111111-2222-3333-4444-555555555555", "GPU-22222222"]
        a100 = gpus[0]
        assert (a100["temperature_celsius"], a100["frequency_mhz"], a100["core_count"]) == (55, 1410, 6912)
        assert a100["utilization_pct"] == 50.0 and a100["power_watts"] == 210.5
        assert a100["vram_total_bytes"] == 85899345920 and a100["vram_used_bytes"] == 1073741824
        _, keys, _ = s["gpu"][0][2]["detail"]
        assert keys == sorted(keys, key=lambda k: k.encode()) and keys, keys
        # the ids and the detail map as the Rust tool fills them: the NVML index, NVML's own
        # spelling of the PCI address (ours, in host_id of our line, is the kernel's)
        assert (a100["host_id"], gpus[1]["host_id"]) == ("0", "1")
        assert a100["detail"] == ("obj", ["driver_version", "pci_bus_id"],
                                  {"driver_version": "550.54.15", "pci_bus_id": "00000000:3B:00.0"})
        assert gpus[1]["detail"][2] == {"driver_version": "550.54.15", "pci_bus_id": "00000000:86:00.0"}
    r = run(["-i", "0.2", "-f", "json-rs", "-o", "-", "--", "sleep", "0.5"],
            env=tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg)))
    assert r.returncode == 0, r.stderr
    for line in r.stdout.splitlines():
        cpu = decode(line)[2]["cpu"][2]
        assert (cpu["process_gpu_vram_mib"], cpu["process_gpu_utilized"]) == (0.0, 0), cpu


def test_gpu_ids_with_a_gpu_nvml_cannot_open(tmp_path):
    """NVML's GPU 0 gives no handle and GPU 2 no UUID: the Rust tool skips GPU 0 and keeps the
    others' NVML indexes ("1", "2"), the one without a UUID named "nvidia-2"; our own line lists
    the same two GPUs by their PCI addresses, its detail without NVML's spelling."""
    if not os.path.exists(FAKE):
        pytest.skip("the fake NVML is not built")
    cfg = tmp_path / "nvml.cfg"
    cfg.write_text(f"{A100}\n{H100}\n{H100.replace('GPU-22222222', 'GPU-33333333').replace('86:00.0', '87:00.0')}\n"
                   "fail 0 999 handle\nunsupported 2 uuid\n")
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    r = run(["-i", "0.2", "-f", "json-rs", "-o", "-", "--", "sleep", "0.3"], env=env)
    assert r.returncode == 0, r.stderr
    gpus = [check(g, GPU, "gpu") for g in decode(r.stdout.splitlines()[0])[2]["gpu"]]
    assert [(g["host_id"], g["uuid"], g["detail"][2]["pci_bus_id"]) for g in gpus] == \
        [("1", "GPU-22222222", "00000000:86:00.0"), ("2", "nvidia-2", "00000000:87:00.0")]
    r = run(["-i", "0.2", "-o", "-", "--", "sleep", "0.3"], env=env)
    assert r.returncode == 0, r.stderr
    ours = json.loads(r.stdout.splitlines()[0])["gpu"]
    assert [(g["host_id"], g["uuid"]) for g in ours] == [("0000:86:00.0", "GPU-22222222"), ("0000:87:00.0", None)]
    assert all("pci_bus_id" not in g["detail"] for g in ours)


def sysfs_speed(iface):
    """The link's speed file as the Rust tool reads it: its number (-1 too), None when unreadable."""
    try:
        with open(f"/sys/class/net/{iface}/speed") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def test_speed_as_the_kernel_wrote_it():
    """speed_mbps is the link's speed file as written: -1 where the driver knows no speed (our
    own line has null there), null where the file cannot be read (a virtual link)."""
    r = run(["-i", "0.2", "-f", "json-rs", "-o", "-", "--", "sleep", "0.3"])
    assert r.returncode == 0, r.stderr
    nets = decode(r.stdout.splitlines()[0])[2]["network"]
    assert nets, "no network interface to look at"
    for n in nets:
        n = n[2]
        assert n["speed_mbps"] == sysfs_speed(n["interface"]), n
    r = run(["-i", "0.2", "-o", "-", "--", "sleep", "0.3"])
    for n in json.loads(r.stdout.splitlines()[0])["network"]:
        want = sysfs_speed(n["interface"])
        assert n["speed_mbps"] == (want if want is not None and want >= 0 else None), n


@pytest.mark.parametrize("how", ["flag", "env"])
def test_missing_config_file_is_skipped(tmp_path, how):
    """A -c FILE that is not there: the Rust tool runs on with its defaults, and so does ours with
    its JSON lines (-f json-rs, or TRACKER_FORMAT=json-rs), without a word as the Rust tool
    (issue 68: its readers take stderr's first line as a sample; 0.18-0.20 said one warning);
    with our own formats it is still an error before anything starts (exit 2), as the command
    line's -f json overrides TRACKER_FORMAT."""
    missing = tmp_path / "not-there.toml"
    args, env = (["-f", "json-rs"], tracker_env()) if how == "flag" else ([], tracker_env(TRACKER_FORMAT="json-rs"))
    r = run(["-c", str(missing), "-i", "0.2", "-o", "-"] + args + ["--", "sleep", "0.3"], env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    assert lines and all(check(decode(l), SAMPLE, "sample") for l in lines)
    for fmt in (["-f", "json"], ["-f", "csv"], []):
        r = run(["-c", str(missing), "-i", "0.2"] + fmt + ["--", "true"],
                env=env if fmt else tracker_env())
        assert r.returncode == 2 and str(missing) in r.stderr and r.stdout == "", (fmt, r.stderr)
