"""_snapshot.py - saving and loading a ResourceTracker's run, imported when first used: the
Python tracker's snapshot layout (metadata, server_info, cloud_info, process_metrics,
system_metrics; metadata.version 1) written by the C library with 0.5's names and units
(rt_tracker_save with RT_SAVE_PY05) and read by it (rt_tracker_load*: 0.4's names in kB and
0.5's), as a dict, a JSON string or a gzipped JSON file. Our snapshots carry one extra
member, "columns": the C store's columns at full precision, which a load prefers. A 0.4
snapshot's server_info (memory_mb, gpu_memory_mb) loads with 0.5's keys."""

from __future__ import annotations

import json
import os

from ._native import RT_ERR_NOT_FOUND, RT_SAVE_GZIP, NativeError, TrackerHandle, lib, out_handle, text
from ._native_more import LogCollector, capture

RT_SAVE_PY05 = 2  # the rows with the Python tracker 0.5's names and units (library 0.13)


def _json_safe(obj):
    """obj with NaN floats as None (the snapshot is strict JSON)."""
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def _extra_json(t) -> bytes:
    """What the library's snapshot cannot know: server_info, cloud_info, the options."""
    extra = {
        "server_info": t.server_info,
        "cloud_info": t.cloud_info,
        "metadata": {
            "method": t.method,
            "autostart": t.autostart,
            "track_processes": "process_tracker" in t.trackers,
            "track_system": "system_tracker" in t.trackers,
            "discover_server": t.discover_server,
            "discover_cloud": t.discover_cloud,
        },
    }
    return json.dumps(_json_safe(extra)).encode()


def _save(t, flags: int, fd: int = -1, fn=None) -> None:
    """rt_tracker_save to fd, or rt_tracker_save_cb to fn (an rt_write_fn) when given."""
    if t._native.tracker is None:
        raise RuntimeError("Resource tracker was never started: nothing to save")
    if fn is not None:
        err = lib.rt_tracker_save_cb(t._native.tracker, _extra_json(t), flags | RT_SAVE_PY05, fn, None)
    else:
        err = lib.rt_tracker_save(t._native.tracker, _extra_json(t), flags | RT_SAVE_PY05, fd)
    if err:
        raise NativeError("rt_tracker_save", err)


def dumps(t) -> str:
    """ResourceTracker.dumps."""
    _, data = capture("rt_tracker_save_cb", lambda fn: _save(t, 0, fn=fn), lambda fd: _save(t, 0, fd))
    return data.decode("utf-8")


def snapshot(t) -> dict:
    """ResourceTracker.snapshot."""
    return json.loads(dumps(t))


def dump(t, file: str) -> None:
    """ResourceTracker.dump."""
    with open(file, "wb") as f:
        _save(t, RT_SAVE_GZIP, f.fileno())


def loads(cls, s):
    """ResourceTracker.loads: s a str or bytes."""
    data = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    log = LogCollector()
    handle, ref = out_handle(TrackerHandle)
    err = lib.rt_tracker_load_buffer(data, len(data), log.fn, None, ref)
    if err:
        raise ValueError(f"Not a resource tracker snapshot: {log.last() or text(lib.rt_strerror(err))}")
    return _from_handle(cls, handle)


def from_snapshot(cls, snap: dict):
    """ResourceTracker.from_snapshot."""
    return loads(cls, json.dumps(snap))


def load(cls, file: str):
    """ResourceTracker.load."""
    log = LogCollector()
    handle, ref = out_handle(TrackerHandle)
    err = lib.rt_tracker_load(os.fsencode(file), log.fn, None, ref)
    if err == RT_ERR_NOT_FOUND:
        raise FileNotFoundError(file)
    if err:
        raise ValueError(f"{file}: not a resource tracker snapshot: "
                         f"{log.last() or text(lib.rt_strerror(err))}")
    return _from_handle(cls, handle)


def _from_handle(cls, handle):
    """A stopped tracker of class cls holding a loaded run (the handle is its from now)."""
    saved = json.loads(text(lib.rt_tracker_saved_info(handle)) or "{}")
    _server_info_05(saved.get("server_info"))
    meta = saved.get("metadata") or {}
    t = cls(pid=meta.get("pid") or 0, children=meta.get("children", True),
            interval=meta.get("interval") or 1, method=meta.get("method"), autostart=False,
            track_processes=meta.get("track_processes", True),
            track_system=meta.get("track_system", True),
            discover_server=meta.get("discover_server", True),
            discover_cloud=meta.get("discover_cloud", True))
    t.autostart = meta.get("autostart", False)
    t._native.tracker = handle
    t._saved = saved
    t.start_time = meta.get("start_time")
    t.stop_time = meta.get("stop_time")
    return t


def _server_info_05(info) -> None:
    """A loaded server_info with the Python tracker 0.5's keys: 0.4's memory_mb and
    gpu_memory_mb (both MiB) renamed memory_mib and gpu_memory_mib, in place."""
    if not isinstance(info, dict):
        return
    for old, new in (("memory_mb", "memory_mib"), ("gpu_memory_mb", "gpu_memory_mib")):
        if old in info:
            value = info.pop(old)
            info.setdefault(new, value)
