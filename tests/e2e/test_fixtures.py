"""Fixture trees captured from (or modelled on) real machines, replayed through the library:
the whole sample, JSON and CSV, must equal the reviewed expected output exactly.
RT_UPDATE_FIXTURES=1 rewrites the expected files (review the diff before committing)."""
import json
import os
import re

import pytest

from fixture_util import FIXTURES, replay

CASES = sorted(d for d in os.listdir(FIXTURES) if os.path.isfile(os.path.join(FIXTURES, d, "clock")))


@pytest.mark.parametrize("case", CASES)
def test_fixture_output(case, tmp_path):
    sample, row, err = replay(case, tmp_path)
    # the version opens every line; the expected files hold the rest, unchanged by a release
    assert re.fullmatch(r"\d+\.\d+\.\d+", sample.pop("resource-tracker-version"))
    expected_path = os.path.join(FIXTURES, case, "expected.json")
    if os.environ.get("RT_UPDATE_FIXTURES") == "1":
        with open(expected_path, "w") as f:
            json.dump({"json": sample, "csv": row}, f, indent=1, sort_keys=False)
            f.write("\n")
    with open(expected_path) as f:
        expected = json.load(f)
    assert sample == expected["json"]
    assert row == expected["csv"]
    assert "warn" not in err.lower() or case == "awkward", err


def test_all_cases_present():
    assert {"vm-virtio", "server-nvme-lvm", "awkward"} <= set(CASES)


def test_awkward_cases(tmp_path):
    """The odd kernel shapes the expected file must keep covering."""
    s, _row, _err = replay("awkward", tmp_path)
    disks = {d["device"]: d for d in s["disk"]}
    assert disks["sda"]["write_bytes_per_sec"] == 1048576  # 14-field line
    assert disks["sdb"]["read_bytes_per_sec"] == 0  # counter went backwards: 0, never negative
    assert disks["sdc"]["capacity_bytes"] is None  # a disk reporting 0 sectors is still listed, size unknown
    assert "cciss/c0d0" in disks and disks["cciss/c0d0"]["mounts"][0]["mount_point"] == "/var"
    assert "ram0" not in disks
    nets = {n["interface"]: n for n in s["network"]}
    assert "lo" not in nets
    assert nets["eth0"]["rx_bytes_per_sec"] == 0  # backwards
    assert nets["ppp0"]["speed_mbps"] is None and nets["ppp0"]["mac_address"] is None
    assert s["memory"]["available_mib"] is None  # no MemAvailable: null, not 0
    assert s["cpu"]["per_core_pct"][1] is None  # a core whose counters went backwards


def test_server_layout(tmp_path):
    """Partitions, LVM (one volume spanning two disks), md RAID1, btrfs, a bind mount."""
    s, _row, _err = replay("server-nvme-lvm", tmp_path)
    mounts = {d["device"]: [m["mount_point"] for m in d["mounts"]] for d in s["disk"]}
    assert mounts["nvme0n1"] == ["/", "/boot", "/boot/efi", "/home"]
    assert mounts["sda"] == ["/home"]
    assert mounts["sdb"] == ["/data"] and mounts["sdc"] == ["/data"]
    assert mounts["nvme1n1"] == ["/srv"]
    assert mounts["sdd"] == ["/media/usb stick"]
    # 0.17: the virtual devices listed too (not loop), as the Rust tool lists them, each with
    # the filesystem mounted from it; sorted by name
    assert mounts["dm-0"] == ["/"] and mounts["dm-1"] == ["/home"] and mounts["md0"] == ["/data"]
    assert mounts["zram0"] == []
    assert list(mounts) == ["dm-0", "dm-1", "md0", "nvme0n1", "nvme1n1", "sda", "sdb", "sdc", "sdd", "sr0", "zram0"]
    assert {d["device"] for d in s["disk"] if d["is_virtual"]} == {"dm-0", "dm-1", "md0", "zram0"}
    types = {d["device"]: d["device_type"] for d in s["disk"]}
    assert types["nvme0n1"] == "nvme" and types["sda"] == "hdd" and types["sdb"] == "ssd"


def test_gpu_amd_intel(tmp_path):
    """amdgpu and i915 cards from sysfs; the tree's share from DRM fdinfo: engine time over the
    interval (the busiest engine per GPU), VRAM of each client once (a dup'd fd is one client)."""
    s, row, _err = replay("gpu-amd-intel", tmp_path)
    amd, intel = s["gpu"]
    assert amd["name"] == "AMD Instinct MI210" and amd["host_id"] == "0000:03:00.0"
    assert amd["utilization_pct"] == 87 and amd["vram_used_bytes"] == 21474836480
    assert amd["temperature_celsius"] == 54 and amd["power_watts"] == 231 and amd["frequency_mhz"] == 1700
    assert intel["host_id"] == "0000:04:00.0" and intel["frequency_mhz"] == 2100
    assert intel["utilization_pct"] is None  # i915 has no busy file: null, not 0
    assert len(s["gpu"]) == 2  # not the connector, the render node or the virtio display card
    p = s["process"]
    assert p["gpu_utilization_pct"] == 65  # amdgpu: gfx 0.8 s of 2 s; i915: render 0.5 s of 2 s
    assert p["gpu_vram_used_bytes"] == (1024 + 512 + 256) * 1024 * 1024
    assert p["gpu_count_used"] == 2
