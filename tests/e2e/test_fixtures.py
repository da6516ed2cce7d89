"""Fixture trees captured from (or modelled on) real machines, replayed through the library:
the whole sample, JSON and CSV, must equal the reviewed expected output exactly.
RT_UPDATE_FIXTURES=1 rewrites the expected files (review the diff before committing)."""
import json
import os

import pytest

from fixture_util import FIXTURES, replay

CASES = sorted(d for d in os.listdir(FIXTURES) if os.path.isfile(os.path.join(FIXTURES, d, "clock")))


@pytest.mark.parametrize("case", CASES)
def test_fixture_output(case, tmp_path):
    sample, row, err = replay(case, tmp_path)
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
    assert disks["sdc"]["capacity_bytes"] == 0  # a disk reporting 0 sectors is still listed
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
    assert set(mounts) == {"nvme0n1", "nvme1n1", "sda", "sdb", "sdc", "sdd", "sr0"}  # no dm, md, loop, zram
    types = {d["device"]: d["device_type"] for d in s["disk"]}
    assert types["nvme0n1"] == "nvme" and types["sda"] == "hdd" and types["sdb"] == "ssd"
