"""recorded.py - a recorded run read back by the C library, whatever its kind: the tool's JSON
lines or CSV, the Python resource-tracker's CSV files, or a saved tracker snapshot
(ResourceTracker.dump, rt_tracker_save), told apart by content (rt_run_read). Its statistics
as the dict `resource-tracker summary --json` prints (summary), or as the text for people that
`resource-tracker summary` prints (summary_text), byte for byte; the same text of a live
ResourceTracker's statistics (tracker_summary_text, its summary_text method); the files of a job
that ran on several nodes put together as `summary --json FILE...` does (jobs)."""

from __future__ import annotations

import json
import os
from ctypes import byref, c_size_t, create_string_buffer, string_at


def _read(path):
    """(the native module, an rt_stats handle holding the run at path: free it with
    rt_stats_free); the reader's warnings (malformed lines skipped, "FILE:LINE: problem") go to
    the logger "resource_tracker.recorded"; raises NativeError naming the file (and the line,
    where the reader knows it) when it cannot be read."""
    from logging import getLogger

    from . import _native_runs as nr
    from ._native import LOG_FN, NativeError, StatsHandle, last_error, new, out_handle, text

    logger = getLogger(__name__)

    def log(_user, level, msg):
        if level >= 2:  # RT_LOG_WARN, RT_LOG_ERROR (the error is raised too)
            logger.warning("%s", text(msg))

    log_fn = LOG_FN(log)
    opts = new(nr.RunReadOptions, log=log_fn)
    info = new(nr.RunReadInfo)
    st, ref = out_handle(StatsHandle)
    err = nr.lib.rt_stats_new_with(None, ref)
    if err:
        raise NativeError("rt_stats_new_with", err)
    err = nr.lib.rt_run_read(os.fsencode(path), byref(opts), ref, 1, None, byref(info))
    if err:
        # the reason behind info.message ("cannot read the snapshot: ..."): rt_run_read opens
        # the file with rt_tracker_load or rt_reader_open, which clear the last error and set
        # it (only its own argument checks, which this call passes, come before them)
        why = last_error()
        nr.lib.rt_stats_free(st)
        raise NativeError("rt_run_read", err, text(info.message) or None, message=why)
    return nr, st


def summary(path) -> dict:
    """The statistics of the recorded run at path (any kind rt_run_read knows) as a dict: the
    JSON object of `resource-tracker summary --json` (memory in MiB, times in seconds).
    Malformed lines are skipped (the reader's warnings are not raised); a file that cannot be
    read, is of no known kind or holds no valid sample raises NativeError, its message naming
    the file."""
    nr, st = _read(path)
    try:
        return _summary_json(nr.lib.rt_stats_summary(st))
    finally:
        nr.lib.rt_stats_free(st)


def jobs(paths) -> list[dict]:
    """The recorded runs at paths (files of any kind rt_run_read knows) as `resource-tracker
    summary --json FILE...` answers them, one dict a line of it: the runs that name one job
    (their member's job_id: the library's rule, rt_job_group) put together as the job's view
    (the dict of rt_format_job_view_json with "runs": each run's summary dict, in the order
    given), each job at its first file; a file of no job, or the only file of its job, as its
    own summary dict (as summary() gives it). Raises NativeError as summary() does."""
    from ctypes import POINTER

    from . import _native_runs as nr
    from ._native_more import Summary

    read, handles = [], []
    try:
        for path in paths:
            _, st = _read(path)
            handles.append(st)
            read.append(nr.lib.rt_stats_summary(st))
        n = len(read)
        sums = (POINTER(Summary) * max(n, 1))(*read)
        group = (c_size_t * max(n, 1))()
        nr.lib.rt_job_group(sums, n, group)
        out = []
        for i in range(n):
            members = [j for j in range(i, n) if group[j] == i]
            if group[i] != i:  # with its job's first run
                continue
            if len(members) < 2:
                out.append(_summary_json(read[i]))
                continue
            out.append(_job_view_json((POINTER(Summary) * len(members))(*(read[j] for j in members))))
            out[-1]["runs"] = [_summary_json(read[j]) for j in members]
        return out
    finally:
        for st in handles:
            nr.lib.rt_stats_free(st)


def _job_view_json(runs) -> dict:
    """The dict of rt_format_job_view_json of the view of runs (an array of POINTER(Summary)
    naming one job)."""
    return _job_view(runs)[0]


def _job_view(runs):
    """(the dict of rt_format_job_view_json, the ask per node in each scheduler's words
    (rt_job_view_ask: {"metaflow", "kubernetes", "slurm"})) of the view of runs (an array of
    POINTER(Summary) naming one job)."""
    from ctypes import c_void_p

    from . import _native_runs as nr
    from ._native import NativeError

    view = c_void_p()
    err = nr.lib.rt_job_view_new(runs, len(runs), byref(view))
    if err:
        raise NativeError("rt_job_view_new", err)
    try:
        n = c_size_t()
        err = nr.lib.rt_format_job_view_json(view, None, 0, byref(n))
        if not err:
            buf = create_string_buffer(n.value + 1)
            err = nr.lib.rt_format_job_view_json(view, buf, n.value + 1, byref(n))
        if err:
            raise NativeError("rt_format_job_view_json", err)
        words = {}
        for name in ("metaflow", "kubernetes", "slurm"):
            ask = create_string_buffer(400)
            nr.lib.rt_job_view_ask(view, nr.SCHEDULERS[name], ask, len(ask))
            words[name] = ask.value.decode("utf-8", "replace")
        return json.loads(buf.raw[: n.value].decode("utf-8")), words
    finally:
        nr.lib.rt_job_view_free(view)


def _summary_json(s) -> dict:
    """The dict of `resource-tracker summary --json` of an rt_summary (a POINTER(Summary)):
    rt_format_summary_json (0.10), rt_format_summary before."""
    from . import _native_runs as nr
    from ._native import NativeError

    if not hasattr(nr.lib.rt_format_summary_json, "argtypes"):
        n = nr.lib.rt_format_summary(s, None, None, None, 0)
        buf = create_string_buffer(n + 1)
        n = nr.lib.rt_format_summary(s, None, None, buf, n + 1)
        return json.loads(buf.raw[:n].decode("utf-8"))
    n = c_size_t()
    err = nr.lib.rt_format_summary_json(s, None, None, None, 0, byref(n))
    if not err:
        buf = create_string_buffer(n.value + 1)
        err = nr.lib.rt_format_summary_json(s, None, None, buf, n.value + 1, byref(n))
    if err:
        raise NativeError("rt_format_summary_json", err)
    return json.loads(buf.raw[: n.value].decode("utf-8"))


def summary_text(path, memory_unit: str | None = None, time_unit: str | None = None,
                 scheduler: str = "slurm", width: int | None = None) -> str:
    """The summary of the recorded run at path as `resource-tracker summary FILE` prints it:
    the answer (what the job used, what to ask for, the notes), the run, the job's process
    tree, the cgroup's limits, the machine. memory_unit and time_unit: gpu_tracker's names
    ("bytes", "kilobytes", "megabytes", "gigabytes", "terabytes"; "seconds", "minutes",
    "hours", "days"), None for readable units; scheduler: whose words the "Ask for" line takes
    ("slurm", "kubernetes", "metaflow"); width: the column the lines break before (default: the
    tool's without a terminal, COLUMNS when set, else 80).
    Raises ValueError for an unknown unit or scheduler, NativeError when the file cannot be
    read (its message names the file)."""
    opts = _text_options(memory_unit, time_unit, scheduler, width)
    nr, st = _read(path)
    try:
        return _write_text(nr.lib.rt_stats_summary(st), opts, memory_unit, time_unit)
    finally:
        nr.lib.rt_stats_free(st)


def _text_options(memory_unit, time_unit, scheduler, width):
    """The rt_summary_text_options of summary_text's arguments; ValueError for an unknown
    scheduler."""
    from . import _native_runs as nr
    from ._native import encode, new

    sched = nr.SCHEDULERS.get(str(scheduler).lower())
    if sched is None:
        raise ValueError(f"unknown scheduler {scheduler!r} (slurm, kubernetes, metaflow)")
    if not width:  # the tool's width where no terminal is: COLUMNS, else 80
        cols = os.environ.get("COLUMNS", "")
        width = int(cols) if cols.isdigit() and int(cols) > 0 else 80
    return new(nr.SummaryTextOptions, memory_unit=encode(memory_unit), time_unit=encode(time_unit),
               scheduler=sched, width=int(width))


def _write_text(s, opts, memory_unit, time_unit) -> str:
    """rt_summary_write_text_cb of an rt_summary (a POINTER(Summary)) with no run facts (as for a
    recorded file), as str; ValueError for an unknown unit."""
    from . import _native_runs as nr
    from ._native import NativeError

    chunks = []

    def write(_user, buf, n):
        chunks.append(string_at(buf, n))
        return n

    write_fn = nr.WRITE_FN(write)
    err = nr.lib.rt_summary_write_text_cb(s, None, byref(opts), write_fn, None)
    if err == 2:  # RT_ERR_INVALID: the options were checked before anything was written
        raise ValueError(f"unknown unit: memory_unit={memory_unit!r}, time_unit={time_unit!r}")
    if err:
        raise NativeError("rt_summary_write_text_cb", err)
    return b"".join(chunks).decode("utf-8", "replace")


def tracker_summary_text(t, memory_unit=None, time_unit=None, scheduler="slurm", width=None) -> str:
    """ResourceTracker.summary_text: the text of the tracker's own statistics
    (rt_tracker_summary), as summary_text prints the run saved by t.dump()."""
    from ._native_more import lib

    opts = _text_options(memory_unit, time_unit, scheduler, width)
    if t._native.tracker is None:
        raise RuntimeError("Resource tracker was never started: no summary")
    return _write_text(lib.rt_tracker_summary(t._native.tracker), opts, memory_unit, time_unit)


__all__ = ["summary", "summary_text"]
