"""ResourceTracker on the C library: its figures against the kernel's own accounting (CPU time
through getrusage, a 200 MB buffer in the process's memory), the system columns, the frames'
shapes, statistics, recommendations, the errors, the context manager, fork safety and GC."""
import gc
import os
import resource
import subprocess
import sys
import time

import pytest

from resource_tracker import ResourceTracker
from resource_tracker.tiny_data_frame import TinyDataFrame

# the Python resource-tracker 0.5's columns (MiB, GB)
PROCESS_COLUMNS = ["timestamp", "pid", "children", "utime", "stime", "cpu_usage", "memory_mib",
                   "disk_read_bytes", "disk_write_bytes", "gpu_usage", "gpu_vram_mib", "gpu_utilized"]
SYSTEM_COLUMNS = ["timestamp", "processes", "utime", "stime", "cpu_usage", "memory_free_mib",
                  "memory_used_mib", "memory_buffers_mib", "memory_cached_mib", "memory_active_mib",
                  "memory_inactive_mib", "disk_read_bytes", "disk_write_bytes", "disk_space_total_gb",
                  "disk_space_used_gb", "disk_space_free_gb", "net_recv_bytes", "net_sent_bytes",
                  "gpu_usage", "gpu_vram_mib", "gpu_utilized"]

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {secs}: pass\n"


def tree_cpu():
    """This process's CPU seconds plus its reaped children's (the kernel's microseconds)."""
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def test_process_cpu_matches_the_kernel():
    """The tracker's exact total (the library's process_cpu_secs_total, which the per-interval
    utime/stime columns add up to but may still owe at the last sample: they are held to the
    machine's busy time of each interval) against getrusage taken before and after it."""
    import multiprocessing

    from resource_tracker._frames import read_column
    from resource_tracker._native import column, lib

    multiprocessing.active_children()  # reap what earlier tests' pools left, before `before`
    before = tree_cpu()
    t = ResourceTracker(autostart=True, interval=0.2, discover_cloud=False)
    child = subprocess.Popen([sys.executable, "-c", BURN.format(secs=1.0)])
    os.waitpid(child.pid, 0)  # reaped here: its time moves to RUSAGE_CHILDREN and to our cutime
    child.returncode = 0
    t.wait_for_samples(2)
    t.stop()
    kernel = tree_cpu() - before
    h = t._native.tracker
    n = lib.rt_tracker_count(h)
    total = read_column(h, column("process_cpu_secs_total"), n - 1, 1)[0]
    # /proc counts whole 10 ms ticks, each of utime, stime, cutime, cstime truncated: the
    # baseline can read up to 4 ticks low (the total gains them), the last sample as many
    # (it loses them); the CPU before the baseline and after the last sample (starting and
    # stopping the tracker: a few ms, 10-20 on a loaded VM) is outside the tracker's window but
    # inside [before, after].
    assert kernel - 0.07 <= total <= kernel + 0.04, (total, kernel)
    m = t.process_metrics
    columns = sum(m["utime"]) + sum(m["stime"])
    assert columns <= total + 1e-6 * len(m), (columns, total)  # deferred, never invented
    ncpu = os.cpu_count()
    assert all(0 <= c <= ncpu + 1e-9 for c in m["cpu_usage"])


def test_memory_shows_a_200mb_buffer():
    t = ResourceTracker(autostart=True, interval=0.2)
    t.wait_for_samples(1)
    base = t.process_metrics["memory_mib"][-1]
    buf = bytearray(b"\x01") * (200 * 1024 * 1024)  # written: resident
    n = t.n_samples
    t.wait_for_samples(n + 2)
    peak = max(t.process_metrics["memory_mib"])
    del buf
    t.stop()
    assert peak - base >= 190, (base, peak)  # MiB


def test_system_columns_are_sane():
    t = ResourceTracker(autostart=True, interval=0.2)
    t.wait_for_samples(2)
    t.stop()
    s = t.system_metrics
    assert s.columns == SYSTEM_COLUMNS
    assert t.process_metrics.columns == PROCESS_COLUMNS
    ncpu = os.cpu_count()
    for row in s:
        assert 0 <= row["cpu_usage"] <= ncpu + 0.01
        assert row["memory_used_mib"] > 0 and row["memory_free_mib"] > 0
        assert row["utime"] >= 0 and row["stime"] >= 0
        assert row["disk_space_total_gb"] >= row["disk_space_used_gb"] >= 0
        assert row["net_recv_bytes"] >= 0 and row["disk_read_bytes"] >= 0
        assert row["gpu_usage"] >= 0
    with open("/proc/meminfo") as f:
        total_kb = int(f.readline().split()[1])
    assert s["memory_used_mib"][0] + s["memory_free_mib"][0] <= total_kb / 1024
    p = t.process_metrics
    assert set(p["pid"]) == {os.getpid()} and all(type(v) is int for v in p["pid"])
    assert all(m > 0 for m in p["memory_mib"])
    assert p["timestamp"] == s["timestamp"][: len(p)]


FAKE_NVML = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build",
                         "libfake-nvml.so")


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake NVML is built with the C library")
def test_gpu_ask(tmp_path, monkeypatch):
    """recommend_resources' "gpu_ask" (0.19): this process holds 33.1 GiB on a fake H200 whose SMs
    are 15.9% busy: a 40 GiB GPU is asked, the A100 40GB named first, and the smaller GPU said."""
    cfg = tmp_path / "nvml.cfg"
    cfg.write_text("cost off\ngpu uuid=GPU-h200 name=NVIDIA_H200 mem_total=150754820096 mem_used=0 util=95\n"
                   "gpm 0 sm=15.9 occ=0.85\n"
                   f"pid 0 {os.getpid()} mem=35540000000 sm=42\n")
    monkeypatch.setenv("TRACKER_NVML_LIBRARY", FAKE_NVML)
    monkeypatch.setenv("FAKE_NVML_CONFIG", str(cfg))
    t = ResourceTracker(autostart=True, interval=0.2)
    t.wait_for_samples(3)
    t.stop()
    rec = t.recommend_resources()
    ask = rec["gpu_ask"]
    assert rec["gpu"] == 1 and ask["gpus"] == 1 and ask["held"] == 1
    assert ask["words"] == "1 GPU with >= 40 GiB (peak 33.1 GiB)"
    assert ask["vram_per_gpu_mib"] == 40960 and ask["models"][:2] == ["A100 40GB", "L40S 48GB"]
    assert ask["vram_per_gpu_need_mib"] == pytest.approx(35540000000 / 2 ** 20, abs=0.001)
    assert ask["smaller"] is True and ask["memory_had_mib"] == 143771
    assert any(n.endswith("a 40 GiB GPU would do") for n in ask["notes"])
    assert "--constraint" in ask["scheduler_notes"]["slurm"]


def test_combined_metrics_stats_and_recommendation():
    t = ResourceTracker(autostart=True, interval=0.2)
    t.wait_for_samples(3)
    t.stop()
    n = t.n_samples
    c = t.get_combined_metrics()
    assert isinstance(c, TinyDataFrame) and len(c) == n
    assert c.columns == (["timestamp"] + ["system_" + x for x in SYSTEM_COLUMNS[1:]]
                         + ["process_" + x for x in PROCESS_COLUMNS[1:]])
    b = t.get_combined_metrics(bytes=True, human_names=True)
    assert len(b.columns) == len(c.columns) and "Process memory usage" in b.columns
    assert b["Process memory usage"] == [v * 1024 ** 2 for v in c["process_memory_mib"]]
    assert b["System disk space used"] == [v * 1000 ** 3 for v in c["system_disk_space_used_gb"]]
    assert "Process CPU time (user)" in b.columns and "System CPU time (user)" in b.columns
    assert t.get_combined_metrics(offset=1).to_dict() == c[1:].to_dict()
    assert len(t.get_combined_metrics(offset=n)) == 0
    custom = t.get_combined_metrics(system_prefix="s.", process_prefix="p.")
    assert "s.cpu_usage" in custom.columns and "p.cpu_usage" in custom.columns
    stats = t.stats()
    assert set(stats) == {"process_cpu_usage", "process_memory_mib", "process_gpu_usage",
                          "process_gpu_vram_mib", "process_gpu_utilized", "system_disk_space_used_gb",
                          "system_net_recv_bytes", "system_net_sent_bytes", "timestamp"}
    assert set(stats["process_cpu_usage"]) == {"mean", "max"}
    assert stats["timestamp"]["duration"] == pytest.approx(
        max(c["timestamp"]) - min(c["timestamp"]) + 0.2)
    rec = t.recommend_resources()
    assert set(rec) == {"cpu", "memory", "gpu", "vram", "cpu_time", "gpu_ask"}  # 0.5's keys, the cores' time, the GPU ask
    assert rec["gpu_ask"] is None  # no GPU
    assert rec["cpu"] >= 1 and rec["memory"] >= 128 and rec["gpu"] == 0 and rec["vram"] == 0
    hist = t.recommend_resources(historical_stats=[stats, stats])
    assert hist["cpu"] >= 1 and hist["memory"] >= 128


def test_recommendation_sees_a_peak_between_samples():
    """A 300 MiB buffer held for 0.15 s between two samples: the PSS of the samples never
    shows it, the kernel's peak RSS of the process does, and recommend_resources (the library's
    one rule) asks for enough: 300 MiB x 1.2 rounded up, not the 128 of the sampled figure."""
    import mmap

    with ResourceTracker(interval=2.0) as t:
        t.wait_for_samples(n=1, timeout=10)  # then at once: the next sample is 2 s away, room
        # for the buffer to come and go even on a loaded machine (slow page faults)
        m = mmap.mmap(-1, 300 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0x8000))
        m[:: 1 << 12] = b"\x01" * ((300 << 20) >> 12)  # every page touched, even without MAP_POPULATE
        time.sleep(0.15)
        m.close()
        t.wait_for_samples(n=3, timeout=10)
        pss_peak = max(t.process_metrics["memory_mib"])
        rec = t.recommend_resources()
    assert pss_peak < 300, pss_peak  # the samples missed the buffer
    assert rec["memory"] >= 512, rec  # 300 MiB x 1.2 = 360 -> 512
    hist = t.recommend_resources(historical_stats=[{"process_memory_mib": {"mean": 1, "max": 2}}])
    assert hist["memory"] >= 512, hist  # the highest need of the runs: still this run's peak


def test_server_and_cloud_info():
    t = ResourceTracker(autostart=True, interval=0.2)
    assert t.server_info["allocation"] is None or t.n_samples > 0
    t.wait_for_samples(1)
    info = t.server_info
    assert info["vcpus"] == os.cpu_count() and info["memory_mib"] > 0
    assert info["allocation"] in ("dedicated", "shared")
    assert t.cloud_info["vendor"] == "unknown"  # TRACKER_CLOUD_DISCOVERY=0
    t.stop()
    quiet = ResourceTracker(autostart=True, discover_server=False, discover_cloud=False, interval=0.2)
    assert quiet.server_info is None and quiet.cloud_info is None
    quiet.stop()


def test_errors():
    t = ResourceTracker(autostart=True, interval=0.2, method="spawn")  # method: accepted, ignored
    with pytest.raises(RuntimeError, match="already running"):
        t.start()
    t.stop()
    first_stop = t.stop_time
    t.stop()  # stopping again does nothing
    assert t.stop_time == first_stop and not t.running
    with pytest.raises(RuntimeError, match="already stopped"):
        t.start()
    slow = ResourceTracker(autostart=True, interval=30)
    with pytest.raises(RuntimeError, match="Timed out"):
        slow.wait_for_samples(1, timeout=0.3)
    slow.stop()
    with pytest.raises(RuntimeError, match="already stopped"):
        slow.wait_for_samples(5, timeout=0.3)
    with pytest.raises(RuntimeError, match="No metrics"):
        ResourceTracker(autostart=False).stats()
    with pytest.raises(ProcessLookupError):
        ResourceTracker(autostart=True, pid=2 ** 22 + 12345)


def test_the_0_5_signature_and_defaults():
    import inspect

    params = inspect.signature(ResourceTracker).parameters
    assert list(params)[:12] == ["pid", "children", "interval", "method", "autostart", "track_processes",
                                 "track_system", "discover_server", "discover_cloud", "sentinel_token",
                                 "upload_interval", "streaming_metadata"]
    # the package's own (0.11: the carbon's grid), keyword-only after 0.5's, so 0.5's calls stand
    assert list(params)[12:] == ["grid_zone", "grid_intensity"]
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY and params[p].default is None
               for p in list(params)[12:])
    assert params["autostart"].default is False and params["upload_interval"].default == 60
    assert list(inspect.signature(ResourceTracker.stop).parameters) == ["self", "exit_code", "run_status"]
    assert list(inspect.signature(ResourceTracker.report).parameters)[1:] == [
        "integration", "historical_stats", "status_failed", "integration_version"]
    t = ResourceTracker(interval=0.2)  # 0.5: not started
    assert not t.running and t._streaming is None and t.sentinel_result is None
    t.start()
    t.wait_for_samples(1)
    t.stop(exit_code=3)
    assert not t.running and t.sentinel_result is None
    t.cleanup()  # stopped already: nothing to do, nothing raised
    assert t.n_samples >= 1  # the samples stay readable


def test_context_manager_reraises_and_stops():
    with pytest.raises(ZeroDivisionError):
        with ResourceTracker(interval=0.2) as t:
            assert t.running and t.autostart
            1 / 0
    assert not t.running


class FakeStream:
    """Stands in for _stream.TrackerStream (helper module of the streaming): records the calls
    the tracker makes."""

    made = []

    def __init__(self, tracker, token, upload_interval, metadata):
        self.calls = [("init", token, upload_interval, metadata)]
        self.tracker = tracker
        FakeStream.made.append(self)

    def attach(self, opts):
        self.calls.append(("attach", type(opts).__name__, self.tracker.running))

    def finish(self, exit_code, run_status):
        self.calls.append(("finish", exit_code, run_status))
        return {"run_id": "r-1", "exit_code": exit_code}

    def close(self):
        self.calls.append(("close",))


def test_streaming_hook(monkeypatch):
    """With a token (the argument, else SENTINEL_API_TOKEN) start() makes a TrackerStream and
    attaches it to the C tracker's options before starting; stop() finishes it once (exit code
    and run status: failed when a with block raised) and keeps its answer as sentinel_result;
    cleanup() closes it. Without a token nothing of it is made."""
    import types

    from resource_tracker import tracker as tracker_module

    fake = types.ModuleType("resource_tracker._stream")
    fake.TrackerStream = FakeStream
    monkeypatch.setitem(sys.modules, "resource_tracker._stream", fake)
    monkeypatch.delenv("SENTINEL_API_TOKEN", raising=False)
    FakeStream.made = []
    with pytest.raises(KeyError):
        with ResourceTracker(interval=0.2, sentinel_token="tok", upload_interval=5,
                             streaming_metadata={"job_name": "j"}) as t:
            t.wait_for_samples(1)
            raise KeyError("boom")
    (st,) = FakeStream.made
    assert t._streaming is st
    failed = tracker_module._run_status("failed")
    assert st.calls == [("init", "tok", 5, {"job_name": "j"}), ("attach", "TrackerOptions", False),
                        ("finish", 1, failed)]
    assert t.sentinel_result == {"run_id": "r-1", "exit_code": 1}
    t.stop()  # finished once only
    t.cleanup()
    assert st.calls[3:] == [("close",)]

    monkeypatch.setenv("SENTINEL_API_TOKEN", "from-env")
    u = ResourceTracker(interval=0.2, autostart=True)
    u.stop()
    assert FakeStream.made[1].calls[0] == ("init", "from-env", 60, None)
    assert FakeStream.made[1].calls[2] == ("finish", 0, tracker_module._run_status("finished"))
    monkeypatch.delenv("SENTINEL_API_TOKEN")
    v = ResourceTracker(interval=0.2, autostart=True)
    v.stop()
    assert len(FakeStream.made) == 2 and v._streaming is None and v.sentinel_result is None


def test_not_started_and_context_manager():
    t = ResourceTracker(autostart=False, interval=0.2)
    assert not t.running and t.n_samples == 0 and len(t.process_metrics) == 0
    with t as same:
        assert same is t and t.running
        t.wait_for_samples(1)
    assert not t.running and t.n_samples >= 1


def test_track_system_or_processes_only():
    s = ResourceTracker(autostart=True, track_processes=False, interval=0.2)
    s.wait_for_samples(1)
    s.stop()
    assert len(s.process_metrics) == 0 and len(s.system_metrics) >= 1
    assert len(s.get_combined_metrics()) == 0
    p = ResourceTracker(autostart=True, track_system=False, interval=0.2)
    p.wait_for_samples(1)
    p.stop()
    assert len(p.system_metrics) == 0 and len(p.process_metrics) >= 1


def test_another_process_without_children():
    child = subprocess.Popen([sys.executable, "-c", BURN.format(secs=0.6)])
    try:
        t = ResourceTracker(autostart=True, pid=child.pid, children=False, interval=0.2)
        child.wait()
        time.sleep(0.5)
        t.stop()
    finally:
        child.wait()
    m = t.process_metrics
    assert set(m["pid"]) == {float(child.pid)}
    assert set(m["children"]) == {None}
    # the rows end where the root exited; the machine is still sampled after that
    assert len(t.system_metrics) >= len(m)


def test_fork_child_holds_a_stopped_copy():
    t = ResourceTracker(autostart=True, interval=0.2)
    t.wait_for_samples(1)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            code |= 1 if t.running else 0
            code |= 2 if t.n_samples < 1 else 0
            t.stop()
            code |= 4 if t.running else 0
        except BaseException:
            code |= 8
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert t.running  # the parent's thread still runs
    n = t.n_samples
    t.wait_for_samples(n + 1)
    t.stop()


def test_garbage_collection_frees_the_tracker():
    t = ResourceTracker(autostart=True, interval=0.2)
    fin = t._finalizer
    assert fin.alive
    del t
    gc.collect()
    assert not fin.alive


def test_the_0_5_helpers(tmp_path):
    """helpers' public 0.5 functions: files and processes cleaned up, errors ignored."""
    import multiprocessing

    from resource_tracker import helpers

    f = tmp_path / "x.csv"
    f.write_text("1")
    helpers.cleanup_files([str(f), str(tmp_path / "missing")])
    assert not f.exists()
    p = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,), daemon=True)
    p.start()
    helpers.cleanup_processes([p, object()])
    with pytest.raises(ValueError):  # closed
        p.is_alive()
    with pytest.raises(AttributeError):
        helpers.no_such_helper


FAKE_NVML = os.path.join(os.path.dirname(os.environ.get("RESOURCE_TRACKER_LIBRARY", "")), "libfake-nvml.so")


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake NVML is built with the C library")
def test_stats_gpu_work_through_fake_nvml(tmp_path, monkeypatch):
    """0.19: stats() gains the GPUs' work where the GPU measures it (NVML GPM), in its own shape
    ({mean, max}; the tree's GPUs, the job's alone here), and the GPUs the tree kept busy; a GPU
    without GPM gives none of the work's entries; the CSV columns stay 0.5's."""
    cfg = tmp_path / "nvml.conf"
    gpu = "gpu uuid=GPU-aaaa util=40 mem_total=8589934592 mem_used=1073741824\n"
    mine = f"pid 0 {os.getpid()} mem=1073741824 sm=42\n"
    monkeypatch.setenv("TRACKER_NVML_LIBRARY", FAKE_NVML)
    monkeypatch.setenv("FAKE_NVML_CONFIG", str(cfg))
    cfg.write_text("cost off\n" + gpu + "gpm 0 sm=15.9 tensor=0 dram=0.5 fp32=2.3\n" + mine)
    with ResourceTracker(interval=0.1) as t:
        time.sleep(0.6)
    st = t.stats()
    assert st["gpu_sm_active_pct"]["max"] == pytest.approx(15.9, abs=0.01)
    assert 0 < st["gpu_sm_active_pct"]["mean"] <= 15.9
    assert st["gpu_dram_active_pct"]["max"] == pytest.approx(0.5, abs=0.01)
    assert "gpu_fp64_active_pct" not in st and "gpu_pcie_bytes_per_sec" not in st  # not scripted
    assert st["gpu_work_shared"] == {"max": 0}
    assert st["process_gpus_busy"] == {"max": 1}
    assert st["process_gpu_vram_per_gpu_peak_mib"] == {"max": 1024}
    assert st["process_cpu_usage"]  # the 0.5 statistics as before
    assert t.process_metrics.columns == PROCESS_COLUMNS
    assert t.stats(specs=[])  == {}  # specs given: theirs only
    from resource_tracker.helpers import aggregate_stats

    assert aggregate_stats([st, st])["gpu_sm_active_pct"]["max"] == st["gpu_sm_active_pct"]["max"]
    assert t.recommend_resources(historical_stats=[st])["gpu"] == 1

    cfg.write_text("cost off\n" + gpu + mine)  # no GPM
    with ResourceTracker(interval=0.1) as t:
        time.sleep(0.35)
    assert not [k for k in t.stats() if k.startswith("gpu_") and k != "gpu_idle_cpu_busy_secs"]
