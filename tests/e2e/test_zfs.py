"""ZFS pools' space (0.17), as the Rust tool 0.1.14 lists pools and the Python tracker 0.5 sums
them: the tool on the zfs-pools fixture (TRACKER_PROC_ROOT: the kernel module's layout under
spl/kstat/zfs, zfs datasets in mountinfo) with a stand-in `zpool` first on the PATH. Checks the
JSON disk list, the json-rs view and the CSV's space sums; a zpool that hangs, fails, prints
garbage or is missing gives one warning and samples without the pools."""
import csv
import io
import json
import os
import shutil
import subprocess

import pytest

from conftest import TRACKER, tracker_env
from fixture_util import FIXTURES

CASE = os.path.join(FIXTURES, "zfs-pools")
RPOOL = (494927872000, 123731968000, 371195904000)  # size, allocated, free (bytes), zpool-two's
TANK = (7971459301376, 2391437790412, 5580021510964)


def run_tool(tmp_path, zpool, fmt, lines):
    """The tool on the fixture without a command (the whole machine), every 0.2 s, until it wrote
    `lines` lines; stopped by its own PID. zpool: the stand-in's kind, or None for none at all."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if zpool:
        shutil.copy(os.path.join(CASE, "bin", "zpool-" + zpool), bin_dir / "zpool")
    env = tracker_env(TRACKER_PROC_ROOT=os.path.join(CASE, "proc"), TRACKER_SYS_ROOT=str(tmp_path / "no-sys"),
                      PATH=f"{bin_dir}:/usr/bin:/bin", SOME_TOKEN="not for zpool")
    p = subprocess.Popen([TRACKER, "-i", "0.2", "-f", fmt, "-o", "-"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        out = "".join(p.stdout.readline() for _ in range(lines))
    finally:
        p.terminate()
        _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    return out, err


def test_pools_in_json(tmp_path):
    out, err = run_tool(tmp_path, "two", "json", 2)
    assert "zpool" not in err, err
    for line in out.splitlines():
        s = json.loads(line)
        disks = s["disk"]
        # sorted with the other disks by name; the pools' datasets are never listed on their own
        assert [d["device"] for d in disks] == ["nvme0n1", "sda", "sdb", "zfs:rpool", "zfs:tank"]
        by = {d["device"]: d for d in disks}
        for name, (size, alloc, free), mnt in (("zfs:rpool", RPOOL, "/home"), ("zfs:tank", TANK, "/tank")):
            d = by[name]
            assert d["capacity_bytes"] == size and d["device_type"] is None and d["model"] is None
            assert d["read_bytes_total"] == 0 and d["write_bytes_total"] == 0  # its devices carry its I/O
            assert d["is_virtual"] is True
            assert d["mounts"] == [{"mount_point": mnt, "filesystem": "zfs", "total_bytes": size,
                                    "used_bytes": alloc, "available_bytes": free,
                                    "used_pct": pytest.approx(alloc / size * 100, abs=0.01)}]
        assert by["sda"]["is_virtual"] is False and by["sda"]["read_bytes_total"] > 0


def test_pools_in_json_rs(tmp_path):
    out, err = run_tool(tmp_path, "two", "json-rs", 2)
    assert "zpool" not in err, err
    s = json.loads(out.splitlines()[-1])
    disks = s["disk"]
    assert [d["device"] for d in disks] == ["nvme0n1", "sda", "sdb", "zfs:rpool", "zfs:tank"]
    tank = disks[-1]
    # the Rust tool's synthetic entry: no model, vendor, serial or type; capacity = size; zero I/O
    assert tank == {"capacity_bytes": TANK[0], "device": "zfs:tank", "device_type": None, "model": None,
                    "mounts": [{"available_bytes": TANK[2], "filesystem": "zfs", "mount_point": "/tank",
                                "total_bytes": TANK[0], "used_bytes": TANK[1],
                                "used_pct": pytest.approx(TANK[1] / TANK[0] * 100)}],
                    "read_bytes_per_sec": 0.0, "read_bytes_total": 0, "serial": None, "vendor": None,
                    "write_bytes_per_sec": 0.0, "write_bytes_total": 0}
    assert isinstance(tank["read_bytes_total"], int) and isinstance(tank["read_bytes_per_sec"], float)


def test_pools_in_csv_sums(tmp_path):
    """The Python tracker 0.5 adds each pool's size, allocated and free (10^9 bytes) to the
    sums and leaves the zfs mounts themselves out (its datasets share the pool's space); here
    the fixture's only filesystems are zfs datasets, so the sums are the two pools'."""
    out, err = run_tool(tmp_path, "two", "csv", 3)
    assert "zpool" not in err, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2
    for row in rows:
        assert float(row["system_disk_space_total_gb"]) == pytest.approx((RPOOL[0] + TANK[0]) / 1e9, abs=0.001)
        assert float(row["system_disk_space_used_gb"]) == pytest.approx((RPOOL[1] + TANK[1]) / 1e9, abs=0.001)
        assert float(row["system_disk_space_free_gb"]) == pytest.approx((RPOOL[2] + TANK[2]) / 1e9, abs=0.001)


@pytest.mark.parametrize("kind,why", [("hang", "no answer within"), ("fail", "exited with status 1"),
                                      ("garbage", "not a list of pools"), (None, "not on the PATH")])
def test_zpool_that_does_not_answer(tmp_path, kind, why):
    """One warning, then samples without the pools (never a crash, never a stopped sampler);
    a hung zpool is killed (its group) and reaped: nothing of it is left behind."""
    out, err = run_tool(tmp_path, kind, "csv", 5)
    warnings = [line for line in err.splitlines() if "zpool" in line]
    assert len(warnings) == 1 and why in warnings[0], err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 4
    for row in rows:
        assert row["system_disk_space_total_gb"] == ""  # no filesystem left to count
    if kind == "hang":
        with open(tmp_path / "bin" / "zpool.pid") as f:
            pid = int(f.read())
        assert not os.path.exists(f"/proc/{pid}")  # killed and reaped, not left running or a zombie


def test_summary_counts_pools(tmp_path):
    """The summary read back from the JSON lines counts each pool's space once, a pool with no
    dataset mounted (mount_point "") too: two such pools are two, not one mount point."""
    out, err = run_tool(tmp_path, "two", "json", 3)
    want_total, want_used = RPOOL[0] + TANK[0], RPOOL[1] + TANK[1]
    for name, text in (("mounted", out), ("unmounted", out.replace('"/home"', '""').replace('"/tank"', '""'))):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text)
        p = subprocess.run([TRACKER, "summary", "--json", str(path)], capture_output=True, text=True,
                           env=tracker_env(), timeout=60)
        assert p.returncode == 0, p.stderr
        s = json.loads(p.stdout)
        found = {}

        def walk(o):
            if isinstance(o, dict):
                for k, v in o.items():
                    if k in ("disk_space_total_bytes", "disk_space_used_peak_bytes"):
                        found[k] = v
                    walk(v)
        walk(s)
        assert found == {"disk_space_total_bytes": want_total, "disk_space_used_peak_bytes": want_used}, name
