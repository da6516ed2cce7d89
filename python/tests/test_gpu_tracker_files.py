"""gpu_tracker's Tracker(tracking_file=..., overwrite=...) on the C tracker (python/gpu_tracker/
tracker.py): the CSV and SQLite layouts byte for byte as gpu_tracker 5.0.1 writes them for the
same arguments (the headers and the tables' SQL below are what its own package wrote, run on this
machine), the static data from the constructor (FileExistsError there), one row per sample with
the figures judged against the kernel (a child holding 200 MiB) and the fake NVML, a file
removed while tracking; and the argument checks in gpu_tracker's order with its messages (the
public half of its test_validate_arguments), with no warning logged at construction."""
import csv
import io
import logging
import os
import sqlite3
import time

import pytest

from holders import holder, release

from gpu_tracker import Tracker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("RT_BUILD_DIR", os.path.join(REPO, "build"))
FAKE_NVML = os.path.join(BUILD, "libfake-nvml.so")
MIB = 1 << 20

# As gpu_tracker 5.0.1 (MoseleyBioinformaticsLab/gpu_tracker at 11d7448, its own package) wrote
# them for Tracker(sleep_time=0.2, tracking_file='t.csv' / 't.sqlite', ram_unit='megabytes').
STATIC_HEADER = ("ram_unit,gpu_ram_unit,time_unit,ram_system_capacity,gpu_ram_system_capacity,system_core_count,"
                 "n_expected_cores,system_gpu_count,n_expected_gpus")
ROW_HEADER = ("main_ram,descendants_ram,combined_ram,system_ram,main_gpu_ram,descendants_gpu_ram,combined_gpu_ram,"
              "system_gpu_ram,gpu_sum_utilization_percent,gpu_hardware_utilization_percent,main_n_threads,"
              "descendants_n_threads,combined_n_threads,cpu_system_sum_utilization_percent,"
              "cpu_system_hardware_utilization_percent,cpu_main_sum_utilization_percent,"
              "cpu_main_hardware_utilization_percent,cpu_descendants_sum_utilization_percent,"
              "cpu_descendants_hardware_utilization_percent,cpu_combined_sum_utilization_percent,"
              "cpu_combined_hardware_utilization_percent,timestamp")
STATIC_SQL = ("CREATE TABLE static_data (\n\tram_unit VARCHAR, \n\tgpu_ram_unit VARCHAR, \n\ttime_unit VARCHAR, "
              "\n\tram_system_capacity FLOAT, \n\tgpu_ram_system_capacity FLOAT, \n\tsystem_core_count INTEGER, "
              "\n\tn_expected_cores INTEGER, \n\tsystem_gpu_count INTEGER, \n\tn_expected_gpus INTEGER\n)")
DATA_SQL = ("CREATE TABLE data (\n\tmain_ram FLOAT, \n\tdescendants_ram FLOAT, \n\tcombined_ram FLOAT, "
            "\n\tsystem_ram FLOAT, \n\tmain_gpu_ram FLOAT, \n\tdescendants_gpu_ram FLOAT, \n\tcombined_gpu_ram FLOAT, "
            "\n\tsystem_gpu_ram FLOAT, \n\tgpu_sum_utilization_percent FLOAT, \n\tgpu_hardware_utilization_percent "
            "FLOAT, \n\tmain_n_threads INTEGER, \n\tdescendants_n_threads INTEGER, \n\tcombined_n_threads INTEGER, "
            "\n\tcpu_system_sum_utilization_percent FLOAT, \n\tcpu_system_hardware_utilization_percent FLOAT, "
            "\n\tcpu_main_sum_utilization_percent FLOAT, \n\tcpu_main_hardware_utilization_percent FLOAT, "
            "\n\tcpu_descendants_sum_utilization_percent INTEGER, \n\tcpu_descendants_hardware_utilization_percent "
            "FLOAT, \n\tcpu_combined_sum_utilization_percent FLOAT, \n\tcpu_combined_hardware_utilization_percent "
            "FLOAT, \n\ttimestamp FLOAT\n)")



def mem_total_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal")


def test_argument_checks_in_gpu_trackers_order(tmp_path, monkeypatch, caplog):
    """gpu_tracker's messages (its test_tracker.py:331-356), checked in its order: sleep_time,
    the units, the tracking file's name, the brand, the GPU uuids; no file left by a refusal."""
    monkeypatch.chdir(tmp_path)
    for kw, msg in (
        ({"sleep_time": 0.0}, "Sleep time of 0.0 is invalid. Must be at least 0.1 seconds."),
        ({"sleep_time": 0.09, "ram_unit": "x", "tracking_file": "a.txt"},
         "Sleep time of 0.09 is invalid. Must be at least 0.1 seconds."),
        ({"ram_unit": "milibytes"},
         '"milibytes" is not a valid RAM unit. Valid values are bytes, gigabytes, kilobytes, megabytes, terabytes'),
        ({"ram_unit": "milibytes", "gpu_ram_unit": "x"}, '"milibytes" is not a valid RAM unit.'),
        ({"gpu_ram_unit": "x", "time_unit": "weeks"}, '"x" is not a valid GPU RAM unit.'),
        ({"time_unit": "weeks", "tracking_file": "a.txt"},
         '"weeks" is not a valid time unit. Valid values are days, hours, minutes, seconds'),
        ({"tracking_file": "invalid.txt"},
         'Invalid file name: "invalid.txt". Valid file extensions are ".csv" and ".sqlite".'),
        ({"tracking_file": "a.txt", "gpu_brand": "intel"}, 'Invalid file name: "a.txt".'),
        ({"gpu_brand": "invalid-brand", "gpu_uuids": set()},
         '"invalid-brand" is not a valid GPU brand. Supported values are "nvidia" and "amd".'),
        ({"gpu_uuids": set(), "tracking_file": "t.csv"},
         "gpu_uuids is not None but the set is empty. Please provide a set of at least one GPU UUID."),
        ({"n_expected_cores": 0, "tracking_file": "t.csv"}, "n_expected_cores of 0 is invalid."),
    ):
        with pytest.raises(ValueError) as e:
            Tracker(**kw)
        assert str(e.value).startswith(msg), (kw, str(e.value))
    assert os.listdir(tmp_path) == []
    with caplog.at_level(logging.DEBUG):
        Tracker(sleep_time=0.1)
        Tracker(tracking_file="quiet.csv")
    assert not caplog.records  # gpu_tracker's test_cannot_connect_warnings: nothing at construction


def test_csv_layout_and_rows(tmp_path):
    """The CSV as gpu_tracker writes it (\\r\\n line ends, the static data's header and values,
    then the timepoints'), with one row per sample: a child holding 200 MiB is the main process."""
    path = tmp_path / "tracking.csv"
    kid = holder(200 * MIB)
    try:
        t = Tracker(sleep_time=0.1, process_id=kid.pid, ram_unit="megabytes", time_unit="seconds",
                    n_expected_cores=2, tracking_file=str(path), resource_usage_file=str(tmp_path / "u.json"))
        with open(path, "rb") as f:  # the static data, from the constructor
            before = f.read()
        t0 = time.time()
        with t:
            time.sleep(0.65)
            for _ in range(100):  # rows are written while tracking, not only at stop
                if path.read_bytes().count(b"\r\n") > 3:
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("no row written while tracking")
        t1 = time.time()
    finally:
        release(kid)
    raw = path.read_bytes()
    assert raw.startswith(before) and before.count(b"\r\n") == 2
    assert raw.endswith(b"\r\n") and raw.count(b"\n") == raw.count(b"\r\n")
    lines = raw.decode().split("\r\n")[:-1]
    assert lines[0] == STATIC_HEADER and lines[2] == ROW_HEADER
    static = dict(zip(STATIC_HEADER.split(","), lines[1].split(",")))
    assert (static["ram_unit"], static["gpu_ram_unit"], static["time_unit"]) == ("megabytes", "gigabytes", "seconds")
    assert float(static["ram_system_capacity"]) == pytest.approx(mem_total_bytes() / 1e6, rel=1e-9)
    assert static["system_core_count"] == str(os.sysconf("SC_NPROCESSORS_ONLN")) and static["n_expected_cores"] == "2"
    rows = [dict(zip(ROW_HEADER.split(","), r)) for r in csv.reader(io.StringIO("\n".join(lines[3:])))]
    assert len(rows) >= 5 and all(len(r) == 22 for r in rows)
    stamps = [float(r["timestamp"]) for r in rows]
    assert stamps == sorted(stamps) and t0 <= stamps[0] and stamps[-1] <= t1
    assert stamps[-1] >= t1 - 0.1  # the last sample is stop()'s
    for r in rows:
        assert 200 * MIB / 1e6 <= float(r["main_ram"]) <= 200 * MIB / 1e6 + 64, r
        assert r["combined_ram"] == r["main_ram"] and r["descendants_ram"] == "0.0"
        # gpu_tracker's sum over no descendant process is the int 0; its thread counts are ints
        assert r["cpu_descendants_sum_utilization_percent"] == "0"
        assert (r["main_n_threads"], r["descendants_n_threads"], r["combined_n_threads"]) == ("1", "0", "1")
        assert float(r["cpu_main_hardware_utilization_percent"]) == pytest.approx(
            float(r["cpu_main_sum_utilization_percent"]) / 2)
        assert 0 < float(r["system_ram"]) <= mem_total_bytes() / 1e6
        assert r["gpu_sum_utilization_percent"] == "0.0"
    # the peak the file holds is the resource usage's
    assert max(float(r["main_ram"]) for r in rows) == pytest.approx(t.resource_usage.max_ram.main.total_rss,
                                                                    rel=1e-6)


def test_sqlite_layout_and_rows(tmp_path):
    """The tables as gpu_tracker creates them, typed by their first row: a main process without
    descendants (gpu_tracker's descendants' CPU sum is then the int 0: an INTEGER column)."""
    path = tmp_path / "tracking.sqlite"
    kid = holder(MIB)
    try:
        with Tracker(sleep_time=0.1, process_id=kid.pid, ram_unit="megabytes", tracking_file=str(path),
                     resource_usage_file=str(tmp_path / "u.json")):
            time.sleep(0.45)
    finally:
        release(kid)
    con = sqlite3.connect(path)
    try:
        assert dict(con.execute("SELECT name, sql FROM sqlite_master")) == {"static_data": STATIC_SQL,
                                                                            "data": DATA_SQL}
        (static,) = con.execute("SELECT * FROM static_data").fetchall()
        assert static[:3] == ("megabytes", "gigabytes", "hours")
        assert static[3] == pytest.approx(mem_total_bytes() / 1e6, rel=1e-9)
        assert static[5:] == (os.sysconf("SC_NPROCESSORS_ONLN"),) * 2 + static[7:] and static[7] == static[8]
        rows = con.execute("SELECT typeof(main_ram), typeof(main_n_threads), main_n_threads, "
                           "typeof(cpu_descendants_sum_utilization_percent), timestamp FROM data").fetchall()
    finally:
        con.close()
    assert len(rows) >= 4
    assert all(r[:3] == ("real", "integer", 1) and r[3] == "integer" for r in rows), rows
    assert [r[4] for r in rows] == sorted(r[4] for r in rows)


def test_overwrite_and_the_static_data_of_the_constructor(tmp_path):
    for name in ("t.csv", "t.sqlite"):
        path = tmp_path / name
        path.write_bytes(b"keep me")
        with pytest.raises(FileExistsError) as e:
            Tracker(tracking_file=str(path))
        assert str(e.value) == f"File {path} already exists. Set overwrite to True to overwrite the existing file."
        assert path.read_bytes() == b"keep me"
        Tracker(tracking_file=str(path), overwrite=True)  # never started: the static data only
        if name.endswith(".csv"):
            assert path.read_text().splitlines()[0] == STATIC_HEADER and len(path.read_text().splitlines()) == 2
        else:
            con = sqlite3.connect(path)
            assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["static_data"]
            con.close()


def test_file_removed_while_tracking(tmp_path, caplog):
    """A removed tracking file stops the rows (a warning says so), never the tracking."""
    for disable_logs in (False, True):
        caplog.clear()
        path = tmp_path / f"gone-{disable_logs}.csv"
        with Tracker(sleep_time=0.1, tracking_file=str(path), disable_logs=disable_logs,
                     resource_usage_file=str(tmp_path / "u.json")) as t:
            time.sleep(0.25)
            os.remove(path)
            time.sleep(0.3)
        assert t.resource_usage.compute_time.time > 0 and not path.exists()
        warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        if disable_logs:
            assert not warned
        else:
            assert warned == [f"The tracking file {path} could not be written: The file {path} was removed in the "
                              f"middle of writing data to it."]


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake NVML is built with the C library")
def test_gpu_columns_through_fake_nvml(tmp_path, monkeypatch):
    """Two GPUs (30% and 70% busy, 2 GiB and 1 GiB used); this process holds 1 GiB of VRAM."""
    cfg = tmp_path / "nvml.conf"
    cfg.write_text(
        "gpu uuid=GPU-aaaa util=30 mem_total=8589934592 mem_used=2147483648\n"
        "gpu uuid=GPU-bbbb util=70 mem_total=17179869184 mem_used=1073741824\n"
        f"pid 0 {os.getpid()} mem=1073741824 sm=10\n"
    )
    monkeypatch.setenv("TRACKER_NVML_LIBRARY", FAKE_NVML)
    monkeypatch.setenv("FAKE_NVML_CONFIG", str(cfg))
    path = tmp_path / "gpu.csv"
    with Tracker(sleep_time=0.1, gpu_ram_unit="megabytes", tracking_file=str(path),
                 resource_usage_file=str(tmp_path / "u.json")):
        time.sleep(0.35)
    lines = path.read_text().splitlines()
    static = dict(zip(STATIC_HEADER.split(","), lines[1].split(",")))
    assert float(static["gpu_ram_system_capacity"]) == pytest.approx((8589934592 + 17179869184) / 1e6)
    assert (static["system_gpu_count"], static["n_expected_gpus"]) == ("2", "2")
    rows = [dict(zip(ROW_HEADER.split(","), r)) for r in csv.reader(lines[3:])]
    assert rows
    for r in rows:
        assert float(r["main_gpu_ram"]) == pytest.approx(1073741824 / 1e6)
        assert float(r["system_gpu_ram"]) == pytest.approx((2147483648 + 1073741824) / 1e6)
        assert float(r["gpu_sum_utilization_percent"]) == pytest.approx(100)
        assert float(r["gpu_hardware_utilization_percent"]) == pytest.approx(50)


def test_peer_readers_read_it(tmp_path):
    """gpu_tracker's own readers (pandas: read_csv with nrows=1 for the static data and
    skiprows=2 for the timepoints; read_sql of the data table) get the columns and dtypes."""
    pd = pytest.importorskip("pandas")
    for name in ("r.csv", "r.sqlite"):
        path = str(tmp_path / name)
        with Tracker(sleep_time=0.1, tracking_file=path, resource_usage_file=str(tmp_path / "u.json")):
            time.sleep(0.35)
        if name.endswith(".csv"):
            static = pd.read_csv(path, header=0, nrows=1).squeeze()
            data = pd.read_csv(path, skiprows=2)
        else:
            con = sqlite3.connect(path)
            static = pd.read_sql("SELECT * FROM static_data", con).squeeze()
            data = pd.read_sql("SELECT * FROM data", con)
            con.close()
        assert list(static.index) == STATIC_HEADER.split(",") and static["ram_unit"] == "gigabytes"
        assert list(data.columns) == ROW_HEADER.split(",") and len(data) >= 3
        assert str(data["main_n_threads"].dtype) == "int64" and str(data["timestamp"].dtype) == "float64"
