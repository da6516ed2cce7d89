"""Snapshots through the C library's save and load: dumps/loads and dump/load (gzip) give back
equal frames, the Python tracker's layout (docs/contracts.md §12: metadata.version, the extra
metadata, server_info and cloud_info as saved) with 0.5's rows (memory_mib ...), from_snapshot
of a dict, a real Python-tracker 0.5 file, a 0.4 snapshot (kB, memory_mb) loading with 0.5's
names and units, and bad input."""
import gzip
import json
import os

import pytest

from resource_tracker import ResourceTracker
from resource_tracker import _native

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_FIXTURE = os.path.join(REPO, "tests", "fixtures", "snapshots", "python-tracker.json.gz")

pytestmark = pytest.mark.skipif(
    not hasattr(_native.lib.rt_tracker_save, "argtypes"), reason="library without rt_tracker_save")


@pytest.fixture(scope="module")
def tracker():
    t = ResourceTracker(autostart=True, interval=0.2, method="fork")
    t.wait_for_samples(3)
    t.stop()
    return t


def same_run(a, b):
    assert a.process_metrics == b.process_metrics
    assert a.system_metrics == b.system_metrics
    assert a.n_samples == b.n_samples
    assert a.stats() == b.stats()
    assert a.recommend_resources() == b.recommend_resources()


def test_snapshot_layout(tracker):
    snap = tracker.snapshot()
    meta = snap["metadata"]
    assert meta["version"] == 1
    assert meta["pid"] == os.getpid() and meta["children"] is True and meta["interval"] == 0.2
    assert meta["method"] == "fork" and meta["track_processes"] and meta["track_system"]
    assert meta["discover_server"] and meta["discover_cloud"] and meta["autostart"]
    assert {"start_time", "stop_time", "duration"} <= set(meta)
    assert snap["server_info"]["vcpus"] == os.cpu_count()
    assert snap["cloud_info"]["vendor"] == "unknown"
    assert len(snap["process_metrics"]) == tracker.n_samples
    assert set(snap["process_metrics"][0]) >= {"timestamp", "pid", "cpu_usage"}
    # the Python tracker 0.5's rows: its names, MiB
    assert list(snap["process_metrics"][0]) == tracker.process_metrics.columns
    assert list(snap["system_metrics"][0]) == tracker.system_metrics.columns
    assert "memory_mib" in snap["process_metrics"][0] and "memory_used_mib" in snap["system_metrics"][0]
    assert [r["memory_mib"] for r in snap["process_metrics"]] == tracker.process_metrics["memory_mib"]
    assert snap["server_info"]["memory_mib"] > 0 and "memory_mb" not in snap["server_info"]


def test_a_0_4_snapshot_loads_with_0_5_names(tracker):
    """The rows renamed and converted as 0.4 wrote them (kB, GiB, memory_mb), without our
    "columns": loaded, the frames have 0.5's names in MiB and server_info 0.5's keys."""
    snap = tracker.snapshot()
    del snap["columns"]
    kib = {"memory_mib": "memory", "disk_read_bytes": "read_bytes",
           "disk_write_bytes": "write_bytes", "gpu_vram_mib": "gpu_vram"}
    snap["process_metrics"] = [
        {kib.get(k, k): (round(v * 1024) if k == "memory_mib" else v) for k, v in row.items()}
        for row in snap["process_metrics"]]
    snap["system_metrics"] = [
        {(k[:-4] if k.startswith("memory_") else "gpu_vram" if k == "gpu_vram_mib" else k):
         (round(v * 1024) if k.startswith("memory_") else v) for k, v in row.items()}
        for row in snap["system_metrics"]]
    info = snap["server_info"]
    info["memory_mb"], info["gpu_memory_mb"] = info.pop("memory_mib"), info.pop("gpu_memory_mib")
    old = ResourceTracker.from_snapshot(snap)
    assert old.process_metrics.columns == tracker.process_metrics.columns
    assert old.process_metrics["memory_mib"] == pytest.approx(tracker.process_metrics["memory_mib"], abs=1e-3)
    assert old.system_metrics["memory_used_mib"] == pytest.approx(
        tracker.system_metrics["memory_used_mib"], abs=1e-3)
    assert old.server_info["memory_mib"] == tracker.server_info["memory_mib"]
    assert "memory_mb" not in old.server_info


def test_dumps_loads(tracker):
    text = tracker.dumps()
    assert isinstance(text, str) and json.loads(text)["metadata"]["version"] == 1
    back = ResourceTracker.loads(text)
    assert not back.running
    same_run(tracker, back)
    assert back.server_info["vcpus"] == tracker.server_info["vcpus"]
    assert back.cloud_info == tracker.cloud_info
    assert back.method == "fork" and back.interval == 0.2 and back.pid == os.getpid()
    assert back.start_time == pytest.approx(tracker.start_time, abs=0.5)
    with pytest.raises(RuntimeError):
        back.start()
    back.stop()  # does nothing


def test_dump_load_gzip(tracker, tmp_path):
    path = tmp_path / "run.json.gz"
    tracker.dump(str(path))
    with gzip.open(path) as f:
        assert json.load(f)["metadata"]["version"] == 1
    back = ResourceTracker.load(str(path))
    same_run(tracker, back)
    again = tmp_path / "again.json.gz"
    back.dump(str(again))
    same_run(tracker, ResourceTracker.load(str(again)))
    html = back.report()
    assert "<html" in html.lower()


def test_from_snapshot(tracker):
    back = ResourceTracker.from_snapshot(tracker.snapshot())
    same_run(tracker, back)


def test_the_python_trackers_file():
    if not os.path.exists(PY_FIXTURE):
        pytest.skip("no Python-tracker snapshot fixture")
    t = ResourceTracker.load(PY_FIXTURE)
    with gzip.open(PY_FIXTURE) as f:
        raw = json.load(f)
    assert t.n_samples == len(raw["process_metrics"])
    assert t.process_metrics.columns[:3] == ["timestamp", "pid", "children"]
    assert t.process_metrics["timestamp"] == pytest.approx(
        [r["timestamp"] for r in raw["process_metrics"]], abs=2e-3)
    assert t.interval == raw["metadata"]["interval"]
    assert t.server_info["vcpus"] == raw["server_info"]["vcpus"]
    assert t.process_metrics["memory_mib"] == pytest.approx([r["memory_mib"] for r in raw["process_metrics"]])
    assert t.stats()["process_cpu_usage"]["max"] > 0
    assert set(t.recommend_resources()) == {"cpu", "memory", "gpu", "vram", "cpu_time", "gpu_ask"}


def test_bad_input(tmp_path):
    with pytest.raises(ValueError):
        ResourceTracker.loads("{\"not\": \"a snapshot\"")
    with pytest.raises(FileNotFoundError):
        ResourceTracker.load(str(tmp_path / "missing.json.gz"))
    with pytest.raises(RuntimeError, match="never started"):
        ResourceTracker(autostart=False).dumps()


def test_output_through_the_write_callback(tracker, monkeypatch):
    """A 0.10 library hands the snapshot and the report to a callback (no memfd); an older one
    (without the _cb functions) gets the fd, with the same bytes."""
    from resource_tracker import _native_more

    if not _native_more.has("rt_tracker_save_cb"):
        pytest.skip("library older than 0.10")
    text = tracker.dumps()
    html = str(tracker.report())

    def no_fd(_write):
        raise AssertionError("the fd path was taken")

    monkeypatch.setattr(_native_more, "capture_fd", no_fd)
    assert tracker.dumps() == text
    assert str(tracker.report()) == html
    monkeypatch.undo()
    monkeypatch.setattr(_native_more, "has", lambda name: not name.endswith("_cb"))
    assert tracker.dumps() == text
    assert str(tracker.report()) == html
