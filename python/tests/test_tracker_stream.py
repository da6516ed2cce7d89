"""_stream.TrackerStream: a tracker's run streamed by the C library's stream against the strict
local Sentinel and SigV4 S3 stand-ins (sentinel_standins.py). The tracker's on_sample is the C
function rt_stream_add itself (no Python per sample); the run is registered with the metadata
as the contract wants it, every sample the tracker kept reaches S3 or the inline finish once,
the finish carries the exit code and status, and with the API down the result says why and the
rows stay in the spill directory. The last test drives it through ResourceTracker(sentinel_token=...)."""
import json
import socket
from ctypes import byref, c_void_p, cast
from types import SimpleNamespace

import pytest

from resource_tracker import ResourceTracker
from resource_tracker._native import TrackerHandle, TrackerOptions, lib, new, out_handle
from resource_tracker._stream import TrackerStream
from sentinel_standins import PREFIX, SECRETS, TOKEN, start_peers, stop_peers

METADATA = {"job_name": "py-stream", "project_name": "tests", "tags": {"team": "ml"},
            "command": "python train.py --epochs 2", "pid": 123, "stage_name": None}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    monkeypatch.setenv("TRACKER_FINISH_TIMEOUT", "20")
    monkeypatch.setenv("TRACKER_CLOUD_DISCOVERY", "0")
    return monkeypatch


@pytest.fixture
def peers(tmp_path, env):
    api, s3 = start_peers(tmp_path)
    env.setenv("SENTINEL_API_URL", api.url)
    env.setenv("AWS_ENDPOINT_URL_S3", s3.url)
    try:
        yield api, s3
    finally:
        stop_peers(api, s3)


def run_stream(metadata, samples=8, exit_code=0, run_status=None, upload_interval=0.1):
    """A C tracker of this process at 0.05 s whose samples go to a TrackerStream: (the finish's
    result, the samples the tracker kept, whether on_sample was rt_stream_add)."""
    native = SimpleNamespace(tracker=None, cloud=None)
    stream = TrackerStream(SimpleNamespace(_native=native, discover_cloud=False), TOKEN, upload_interval, metadata)
    opts = new(TrackerOptions, interval_secs=0.05, pss_max_age_secs=30.0)
    assert stream.attach(opts) is True
    direct = cast(opts.on_sample, c_void_p).value == cast(lib.rt_stream_add, c_void_p).value
    handle, ref = out_handle(TrackerHandle)
    assert lib.rt_tracker_start(byref(opts), ref) == 0
    native.tracker = handle
    try:
        lib.rt_tracker_wait(handle, samples, 30.0)
        lib.rt_tracker_stop(handle)
        result = stream.finish(exit_code, run_status)
        assert stream.finish(exit_code, run_status) is result  # once
        kept = lib.rt_tracker_count(handle)
        stream.close()
        stream.close()
    finally:
        native.tracker = None
        lib.rt_tracker_free(handle)
    return result, kept, direct


def the_run(api):
    runs = api.doc()["runs"]
    assert len(runs) == 1, runs
    return next(iter(runs.items()))


def rows_of(api, run_id):
    import urllib.request

    with urllib.request.urlopen(f"{api.url}/__runs/{run_id}/rows", timeout=30) as r:
        doc = json.loads(r.read())
    return [row for key in sorted(doc["s3"]) for row in doc["s3"][key]] + doc["inline"]


def test_stream_run(peers, caplog):
    caplog.set_level("DEBUG", logger="resource_tracker.streaming")
    api, s3 = peers
    result, kept, direct = run_stream(METADATA, samples=10)
    assert direct, "the tracker's on_sample is not rt_stream_add"
    assert result == {"run_status": "finished", "exit_code": 0, "reached_api": True, "error": None}
    run_id, run = the_run(api)
    reg = run["register"]
    assert {k: reg[k] for k in ("job_name", "project_name", "tags")} == {
        "job_name": "py-stream", "project_name": "tests", "tags": ["team=ml"]}
    assert json.loads(reg["command"]) == ["python", "train.py", "--epochs", "2"]
    assert "pid" not in reg and "stage_name" not in reg and reg["host_vcpus"] >= 1
    fin = run["finish"]
    assert (fin["exit_code"], fin["run_status"]) == (0, "finished")
    rows = rows_of(api, run_id)
    assert len(rows) == kept >= 10  # every sample once
    assert len({r.split(",")[0] for r in rows}) == len(rows)
    if fin["data_source"] == "s3":
        assert all(u.startswith(f"s3://bkt/{PREFIX}/{run_id}/") for u in fin["data_uris"])
    assert not any(secret in caplog.text for secret in SECRETS)  # the stream's messages
    assert [r for r in s3.rejections() if r["method"] == "PUT"] == []


def test_stream_failed_run(peers):
    api, _ = peers
    result, kept, _ = run_stream({"job_name": "fails"}, samples=3, exit_code=3, upload_interval=60)
    assert result == {"run_status": "failed", "exit_code": 3, "reached_api": True, "error": None}
    run_id, run = the_run(api)
    assert (run["finish"]["exit_code"], run["finish"]["run_status"]) == (3, "failed")
    assert len(rows_of(api, run_id)) == kept  # one batch, sent at the end


def test_stream_api_down(tmp_path, env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    env.setenv("SENTINEL_API_URL", closed)
    env.setenv("AWS_ENDPOINT_URL_S3", closed)
    env.setenv("TRACKER_FINISH_TIMEOUT", "1")
    result, _, _ = run_stream({"job_name": "down"}, samples=3)
    assert result["reached_api"] is False and result["run_status"] == "finished"
    assert "register" in result["error"] and TOKEN not in result["error"]
    spill = tmp_path / "state" / "resource-tracker"
    assert any(p.name.endswith(".csv.gz") for p in spill.iterdir())  # kept for a later delivery


def test_attach_refuses_quietly(env, caplog):
    stream = TrackerStream(SimpleNamespace(_native=None, discover_cloud=False), TOKEN, -1, None)
    opts = new(TrackerOptions, interval_secs=0.05)
    assert stream.attach(opts) is False and not opts.on_sample  # an upload interval out of range
    assert stream.finish(0)["error"].startswith("cannot start streaming")
    stream.close()
    assert "Streaming to the Sentinel API is off" in caplog.text


def test_resource_tracker_streams(peers):
    from resource_tracker.sentinel_api import RunStatus

    api, _ = peers
    t = ResourceTracker(interval=0.05, autostart=True, sentinel_token=TOKEN, upload_interval=0.1,
                        streaming_metadata={"job_name": "via-tracker"})
    assert t._streaming is not None
    t.wait_for_samples(6, timeout=30)
    t.stop(exit_code=1, run_status=RunStatus.failed)
    assert t.sentinel_result == {"run_status": "failed", "exit_code": 1, "reached_api": True, "error": None}
    run_id, run = the_run(api)
    assert run["register"]["job_name"] == "via-tracker" and run["finish"]["run_status"] == "failed"
    assert len(rows_of(api, run_id)) == t.n_samples
    t.cleanup()


def test_stream_dropped_while_tracking(peers):
    """A stream garbage-collected while its tracker still runs stops the tracker first (its thread
    calls rt_stream_add on the stream), then finishes the run (exit code 0) and frees it."""
    import gc

    api, _ = peers
    native = SimpleNamespace(tracker=None, cloud=None)
    stream = TrackerStream(SimpleNamespace(_native=native, discover_cloud=False), TOKEN, 0.1, {"job_name": "gc"})
    opts = new(TrackerOptions, interval_secs=0.02, pss_max_age_secs=30.0)
    assert stream.attach(opts)
    handle, ref = out_handle(TrackerHandle)
    assert lib.rt_tracker_start(byref(opts), ref) == 0
    native.tracker = handle
    try:
        lib.rt_tracker_wait(handle, 5, 30.0)
        del stream
        gc.collect()
        assert lib.rt_tracker_running(handle) == 0
        run_id, run = the_run(api)
        assert (run["finish"]["exit_code"], run["finish"]["run_status"]) == (0, "finished")
        assert len(rows_of(api, run_id)) == lib.rt_tracker_count(handle)
    finally:
        native.tracker = None
        lib.rt_tracker_free(handle)


def test_stream_left_open_at_exit(peers, tmp_path):
    """A program that ends without finishing its stream still finishes the run at exit."""
    import subprocess
    import sys

    api, _ = peers
    code = (
        "from ctypes import byref\n"
        "from types import SimpleNamespace\n"
        "from resource_tracker._native import TrackerHandle, TrackerOptions, lib, new, out_handle\n"
        "from resource_tracker._stream import TrackerStream\n"
        "native = SimpleNamespace(tracker=None, cloud=None)\n"
        f"s = TrackerStream(SimpleNamespace(_native=native, discover_cloud=False), {TOKEN!r}, 0.1, None)\n"
        "opts = new(TrackerOptions, interval_secs=0.02, pss_max_age_secs=30.0)\n"
        "assert s.attach(opts)\n"
        "h, ref = out_handle(TrackerHandle)\n"
        "assert lib.rt_tracker_start(byref(opts), ref) == 0\n"
        "native.tracker = h\n"
        "lib.rt_tracker_wait(h, 5, 30.0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    run_id, run = the_run(api)
    assert run["finish"]["run_status"] == "finished" and len(rows_of(api, run_id)) >= 5


def test_bad_options_register_no_run(peers):
    """An interval the library refuses, or a pid that is gone, fails start() before a stream
    registers a run at Sentinel for a tracking that never happens."""
    for kwargs, exc in (({"interval": -1}, ValueError), ({"pid": 2 ** 22 + 7}, ProcessLookupError)):
        t = ResourceTracker(sentinel_token=TOKEN, **kwargs)
        with pytest.raises(exc):
            t.start()
        assert getattr(t, "_streaming", None) is None
    api, _ = peers
    assert api.doc()["requests"] == []
