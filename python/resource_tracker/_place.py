"""_place.py - where the job runs (C library 0.16): what a SLURM job, a Kubernetes pod or a
GitHub Actions runner gave the job, found by the library (rt_place_detect) and handed to a
tracker's statistics (rt_tracker_set_request), and an rt_summary's requested figures and
efficiencies as a dict (ResourceTracker.stats(efficiency=True)), as `summary --json`'s
"efficiency" member. A library older than 0.16 has none of it: nothing is set and the dict is
None (the symbols are looked up, never assumed). TRACKER_PLACE=off turns the detection off, as
for the tool."""

from __future__ import annotations

import math
import os
from ctypes import POINTER, Structure, byref, c_char_p, c_double, c_int, c_size_t, c_void_p, cast, sizeof

from ._native import TrackerHandle, bind_optional, lib, text

PLACE_VERSION_NUM = 0x001000  # 0.16.0: rt_place, rt_request, rt_summary's efficiencies


class Request(Structure):
    """rt_request (0.16): what the job was given where it runs; a figure counts only with its *_from."""

    _fields_ = [
        ("struct_size", c_size_t), ("place", c_char_p), ("cpu_cores", c_double), ("memory_mib", c_double),
        ("gpus", c_double), ("time_limit_secs", c_double), ("job_start_secs", c_double),
        ("cpu_from", c_char_p), ("memory_from", c_char_p), ("gpus_from", c_char_p), ("time_limit_from", c_char_p),
    ]


class PlaceOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("envp", c_void_p), ("no_query", c_int), ("query_timeout_secs", c_double),
        ("log", c_void_p), ("log_user", c_void_p),
    ]


bind_optional({
    "rt_place_detect": (c_int, [POINTER(PlaceOptions), POINTER(c_void_p)]),
    "rt_place_request": (POINTER(Request), [c_void_p]),
    "rt_place_free": (None, [c_void_p]),
    "rt_tracker_set_request": (c_int, [TrackerHandle, POINTER(Request)]),
})


def available() -> bool:
    """Whether the loaded library knows where a job runs (0.16 or newer: every symbol above)."""
    return lib.rt_version_num() >= PLACE_VERSION_NUM


def set_place(handle) -> bool:
    """Finds where the job runs and hands what it was given to the tracker's statistics (the
    library copies it). Nothing with TRACKER_PLACE=off or an older library. True when set."""
    if not handle or not available() or os.environ.get("TRACKER_PLACE", "auto").strip().lower() == "off":
        return False
    opts = PlaceOptions(struct_size=sizeof(PlaceOptions))
    place = c_void_p()
    if lib.rt_place_detect(byref(opts), byref(place)) != 0 or not place.value:
        return False
    try:
        return lib.rt_tracker_set_request(handle, lib.rt_place_request(place)) == 0
    finally:
        lib.rt_place_free(place)


def _num(v: float, known: bool = True) -> float | None:
    return float(v) if known and v is not None and math.isfinite(v) else None


def efficiency_of(summary) -> dict | None:
    """The requested figures and efficiencies of an rt_summary (a POINTER(Summary)) in the shape
    of `summary --json`'s "efficiency" member, figures unrounded: place, cpu_pct, memory_pct,
    gpu_pct, time_limit_pct, requested_cpu_cores (+ _from), requested_memory_mib (+ _from),
    requested_gpus (+ _from), time_limit_secs (+ _from), job_start_secs. None when nothing said
    what the job was given, or the library is older than 0.16."""
    if not available() or not summary:
        return None
    s = summary.contents
    froms = [text(s.requested_cpu_from), text(s.requested_memory_from), text(s.requested_gpus_from),
             text(s.time_limit_from)]
    if not s.request and not any(froms):
        return None
    r = cast(s.request, POINTER(Request)).contents if s.request else None
    return {
        "place": text(r.place) if r else None,
        "cpu_pct": _num(s.cpu_efficiency_pct),
        "memory_pct": _num(s.memory_efficiency_pct),
        "gpu_pct": _num(s.gpu_efficiency_pct),
        "time_limit_pct": _num(s.time_limit_used_pct),
        "requested_cpu_cores": _num(s.requested_cpu_cores, froms[0] is not None),
        "requested_cpu_from": froms[0],
        "requested_memory_mib": _num(s.requested_memory_mib, froms[1] is not None),
        "requested_memory_from": froms[1],
        "requested_gpus": _num(s.requested_gpus, froms[2] is not None),
        "requested_gpus_from": froms[2],
        "time_limit_secs": _num(s.time_limit_secs, froms[3] is not None),
        "time_limit_from": froms[3],
        "job_start_secs": _num(r.job_start_secs, r.job_start_secs > 0) if r else None,
    }
