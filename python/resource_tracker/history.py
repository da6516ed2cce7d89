"""history.py - a run history (an SQLite file, or a PostgreSQL database named by a postgresql://
URL: what `resource-tracker --history` writes) read back by the C library (rt_history_runs,
experimental): its runs as the summary dicts `resource-tracker summary --json` prints (runs),
and what `resource-tracker recommend --job NAME --json` answers from them (recommend: its
"recommendation" member)."""

from __future__ import annotations

import os
from ctypes import POINTER, byref, c_size_t, create_string_buffer, sizeof


def _read(target, job, last):
    """(native module, POINTER(Summary) block, count, POINTER(HistoryWho)): the runs of job (None:
    all) that `recommend --job` answers from, newest first, the last `last` (None: all); free the
    block with rt_history_free. Raises NativeError with the library's reason (no such file, not a
    history, no server, no libpq: never a password; a URL is shown as "the history")."""
    from . import _native_runs as nr
    from ._native import NativeError
    from ._native_more import Summary

    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
        raise ValueError(f"last must be a count of runs, 1 or more, not {last!r}")
    runs = POINTER(Summary)()
    who = POINTER(nr.HistoryWho)()
    n = c_size_t()
    err = create_string_buffer(1024)
    rc = nr.lib.rt_history_runs(os.fsencode(target), job.encode() if job is not None else None, last or 0,
                                byref(runs), byref(n), byref(who), err, len(err))
    if rc:
        shown = target if "://" not in str(target) else "the history"
        code = 1 if rc == 7 else 3  # RT_DB_NOMEM: RT_ERR_NOMEM; else RT_ERR_IO (the reason says which)
        raise NativeError("rt_history_runs", code, f"{shown}: {err.value.decode(errors='replace')}", message=None)
    return nr, runs, n.value, who


def _text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _at(block, i):
    """A POINTER(Summary) to the i-th summary of block."""
    from ctypes import addressof, cast

    return cast(addressof(block.contents) + i * sizeof(block._type_), type(block))


def runs(target, job: str | None = None, last: int | None = None) -> list[dict]:
    """The runs of the history at target (a file name, or a postgresql:// URL) that `recommend
    --job` answers from (those that succeeded, or that the OOM killer, a time limit or a
    SIGTERM, SIGKILL or SIGXCPU ended), of job (None: every job), the last `last` of them
    (None: all), newest first: each the dict of `resource-tracker summary --json` of the run's
    summary as the history keeps it, with "who": {"host", "user", "command"} (the node it ran
    on, the login name, the command line as a JSON list; None where the row does not say).
    Raises NativeError when the history cannot be read (its message says why)."""
    from .recorded import _summary_json

    nr, block, n, who = _read(target, job, last)
    try:
        out = []
        for i in range(n):
            d = _summary_json(_at(block, i))
            d["who"] = {"host": _text(who[i].host), "user": _text(who[i].user), "command": _text(who[i].command)}
            out.append(d)
        return out
    finally:
        if n:
            nr.lib.rt_history_free(block)


def _job_id(summary):
    """The job_id of a summary's member (rt_member: after its struct_size); None without one."""
    from ctypes import c_char_p

    if not summary.member:
        return None
    return c_char_p.from_address(summary.member + sizeof(c_size_t)).value


def _num(v):
    return None if v != v or v in (float("inf"), float("-inf")) else v


def recommend(job: str, target, last: int = 5, max_slowdown_pct: float = 10.0, any_command: bool = False) -> dict:
    """What `resource-tracker recommend --job JOB --history TARGET --json` answers, its
    "recommendation" member: the library's rule (rt_recommend_with) over the last `last` runs of
    job in the history at target (a file name or a postgresql:// URL), those of another command
    line than the newest run's left out unless any_command (as the tool does): "cpu",
    "memory_mib" (None: unknown), "gpu", "vram_mib", "oom_killed", the needs and their sources,
    "headroom_pct", "max_slowdown_pct", the cores' time ("cpu_duration_secs", "cpu_fewer", ...,
    "cpu_basis", "cpu_phase"), "time_limit_secs", "time_words", the floors after a kill, the
    re-read files, "left_behind"; with "runs": how many it is based on. Not the keys that need the
    Keeper's price table (cpu_cost_usd, the GPU ask's notes and models). Raises LookupError when
    the history has no run of job, ValueError when the newest is a node of a job of several
    (the tool answers that with the ask per node), NativeError when it cannot be read."""
    from . import _native_runs as nr
    from ._native import NativeError
    from ._native_more import RT_NULL_I64, RecommendOptions, Summary, new_recommendation

    if not (isinstance(max_slowdown_pct, (int, float)) and max_slowdown_pct >= 0):
        raise ValueError(f"max_slowdown_pct must be a number of percent, 0 or more, not {max_slowdown_pct!r}")
    lib, block, n, who = _read(target, job, last)
    lib = lib.lib
    try:
        if n == 0:
            raise LookupError(f"no run of job {job!r} in the history")
        newest = _job_id(block[0])
        if newest is not None and sum(1 for i in range(n) if _job_id(block[i]) == newest) >= 2:
            raise ValueError(f"the newest run of job {job!r} is a node of a job of several: "
                             "`resource-tracker recommend --job` answers it with the ask per node")
        keep = [i for i in range(n) if any_command or who[i].command == who[0].command]
        ptrs = (POINTER(Summary) * len(keep))(*[_at(block, i) for i in keep])
        rec = new_recommendation()
        opts = RecommendOptions(struct_size=sizeof(RecommendOptions), max_slowdown_pct=float(max_slowdown_pct),
                                usd_per_core_hour=0.0)
        err = lib.rt_recommend_with(byref(opts), ptrs, len(keep), byref(rec))
        if err:
            raise NativeError("rt_recommend_with", err, "the runs have no tracked process")
        words = create_string_buffer(300)
        left, left_mib = 0.0, float("nan")
        for i in keep:
            if block[i].left_behind > left:
                left, left_mib = block[i].left_behind, block[i].left_behind_mib
        return {
            "runs": int(rec.runs), "cpu": int(rec.cpu),
            "memory_mib": None if rec.memory_mib == RT_NULL_I64 else int(rec.memory_mib),
            "gpu": int(rec.gpu), "vram_mib": int(rec.vram_mib), "oom_killed": bool(rec.oom_killed),
            "cpu_quota_cores": _num(rec.cpu_quota_cores), "cpu_throttled_pct": _num(rec.cpu_throttled_pct),
            "memory_need_mib": _num(rec.memory_need_mib),
            "memory_source": _text(lib.rt_need_source_name(rec.memory_source)),
            "memory_sampled": bool(rec.memory_sampled), "headroom_pct": _num(rec.headroom_pct),
            "vram_need_mib": _num(rec.vram_need_mib), "vram_source": _text(lib.rt_need_source_name(rec.vram_source)),
            "max_slowdown_pct": _num(rec.max_slowdown_pct), "cpu_duration_secs": _num(rec.cpu_duration_secs),
            "cpu_run_duration_secs": _num(rec.cpu_run_duration_secs), "cpu_fewer": int(rec.cpu_fewer),
            "cpu_fewer_duration_secs": _num(rec.cpu_fewer_duration_secs), "time_limit_secs": _num(rec.time_limit_secs),
            "cpu_basis": _text(rec.cpu_basis), "cpu_phase": _text(rec.cpu_phase) or None,
            "cpu_phase_fewer_secs": _num(rec.cpu_phase_fewer_secs), "gpu_held": int(rec.gpu_held),
            "gpu_busy": int(rec.gpu_busy), "memory_floor_mib": _num(rec.memory_floor_mib),
            "memory_learn": bool(rec.memory_learn), "time_floor_secs": _num(rec.time_floor_secs),
            "time_words": words.value.decode() if lib.rt_recommendation_time_words(byref(rec), words, len(words)) else None,
            "memory_reread_files_mib": _num(rec.memory_reread_files_mib),
            "left_behind": int(left), "left_behind_mib": _num(left_mib),
        }
    finally:
        if n:
            lib.rt_history_free(block)


__all__ = ["runs", "recommend"]
