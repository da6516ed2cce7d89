"""history.py - a run history (an SQLite file, or a PostgreSQL database named by a postgresql://
URL: what `resource-tracker --history` writes) read back by the C library (rt_history_runs,
experimental): its runs as the summary dicts `resource-tracker summary --json` prints (runs),
and what `resource-tracker recommend --job NAME --json` answers from them (recommend: its
"recommendation" member, or for a job of several nodes its ask per node)."""

from __future__ import annotations

import os
from ctypes import POINTER, byref, c_size_t, create_string_buffer, sizeof


def _read(target, job, last, whole_job=None):
    """(native module, POINTER(Summary) block, count, POINTER(HistoryWho)): the runs of job (None:
    all) that `recommend --job` answers from, newest first, the last `last` (None: all); with
    whole_job (a count, not None: rt_history_job_runs) the last whole_job of them, and when the
    newest is a node of a job of several, as many as that job had runs. Free the block with
    rt_history_free. Raises NativeError with the library's reason (no such file, not a history,
    no server, no libpq: never a password; a URL is shown as "the history")."""
    from . import _native_runs as nr
    from ._native import NativeError
    from ._native_more import Summary

    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
        raise ValueError(f"last must be a count of runs, 1 or more, not {last!r}")
    runs = POINTER(Summary)()
    who = POINTER(nr.HistoryWho)()
    n = c_size_t()
    err = create_string_buffer(1024)
    name = job.encode() if job is not None else None
    if whole_job is not None:
        fn, rc = "rt_history_job_runs", nr.lib.rt_history_job_runs(
            os.fsencode(target), name, whole_job, 1, byref(runs), byref(n), byref(who), err, len(err))
    else:
        fn, rc = "rt_history_runs", nr.lib.rt_history_runs(
            os.fsencode(target), name, last or 0, byref(runs), byref(n), byref(who), err, len(err))
    if rc:
        shown = target if "://" not in str(target) else "the history"
        code = 1 if rc == 7 else 3  # RT_DB_NOMEM: RT_ERR_NOMEM; else RT_ERR_IO (the reason says which)
        raise NativeError(fn, code, f"{shown}: {err.value.decode(errors='replace')}", message=None)
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


def _num(v):
    return None if v != v or v in (float("inf"), float("-inf")) else v


def _job_answer(nr, block, n, who, idx, k):
    """The dict of `recommend --job NAME --json` for the job of the runs block[idx[0..k)] (a job
    of several nodes, of the n runs read): the ask per node, from the library's job view, and
    what it is based on (rt_history_basis_of)."""
    from ._native import NativeError
    from ._native_more import Summary
    from .recorded import _job_view

    view, words = _job_view((POINTER(Summary) * k)(*[_at(block, idx[i]) for i in range(k)]))
    basis = nr.HistoryBasis()
    err = nr.lib.rt_history_basis_of(who, idx, k, byref(basis))
    if err:
        raise NativeError("rt_history_basis_of", err)
    ask = view["ask"]
    left = n - k
    return {
        "job_id": view["job_id"],
        "based_on": {"runs": basis.runs, "hosts": basis.hosts, "users": basis.users,
                     "runs_without_user": basis.runs_without_user, "left_out": left,
                     "left_out_why": "runs of other jobs than the newest run's" if left else None},
        "nodes": ask["nodes"], "tasks_per_node": ask["tasks_per_node"], "cpu_per_task": ask["cores_per_task"],
        "memory_mib_per_node": ask["memory_mib_per_node"], "gpu_per_node": ask["gpus_per_node"],
        "time_limit_secs": None if ask["time_limit_secs"] is None else float(ask["time_limit_secs"]),
        "memory_sized_by": view["memory_most"], "cores_sized_by": view["cores_most"],
        "schedulers": words, "view": view,
    }


def recommend(job: str, target, last: int | None = None, max_slowdown_pct: float = 10.0,
              any_command: bool = False) -> dict:
    """What `resource-tracker recommend --job JOB --history TARGET --json` answers from the
    history at target (a file name or a postgresql:// URL), over the last `last` runs of job
    (None: the tool's default, 5, and every run of the newest job when it ran on several nodes:
    rt_history_job_runs). Raises LookupError when the history has no run of job, NativeError
    when it cannot be read.

    When the newest run is a node of a job of several nodes (its runs name one job id, two runs
    or more of them among those read: the library's rt_job_pick), the tool's whole answer for
    it: "job_id", "nodes", "tasks_per_node", "cpu_per_task", "memory_mib_per_node" (None:
    unknown), "gpu_per_node", "time_limit_secs", "memory_sized_by", "cores_sized_by",
    "schedulers" (the ask per node in each one's words), "based_on" (runs, hosts, users,
    runs_without_user, left_out: the older runs of other jobs, left_out_why) and "view" (the job
    view's dict, rt_format_job_view_json); not the server lookup's keys ("cheapest_per_node",
    "server_lookup_error", "note": absent). any_command and max_slowdown_pct do not apply (the
    job view sizes each run by its own answer).

    Otherwise its "recommendation" member: the library's rule (rt_recommend_with) over the runs,
    those of another command line than the newest run's left out unless any_command (as the tool
    does): "cpu", "memory_mib" (None: unknown), "gpu", "vram_mib", "oom_killed", the needs and
    their sources, "headroom_pct", "max_slowdown_pct", the cores' time ("cpu_duration_secs",
    "cpu_fewer", ..., "cpu_basis", "cpu_phase"), "time_limit_secs", "time_words", the floors
    after a kill, the re-read files, "left_behind"; with "runs": how many it is based on. Not the
    keys that need the Keeper's price table (cpu_cost_usd, the GPU ask's notes and models)."""
    from ._native import NativeError
    from ._native_more import RT_NULL_I64, RecommendOptions, Summary, new_recommendation

    if not (isinstance(max_slowdown_pct, (int, float)) and max_slowdown_pct >= 0):
        raise ValueError(f"max_slowdown_pct must be a number of percent, 0 or more, not {max_slowdown_pct!r}")
    nr, block, n, who = _read(target, job, last, 5 if last is None else None)
    lib = nr.lib
    try:
        if n == 0:
            raise LookupError(f"no run of job {job!r} in the history")
        idx = (c_size_t * n)()
        k = lib.rt_job_pick((POINTER(Summary) * n)(*[_at(block, i) for i in range(n)]), n, 1, idx)
        if k >= 2:
            return _job_answer(nr, block, n, who, idx, k)
        if any_command:
            keep = list(range(n))
        else:  # the newest run's command line only (rt_history_same_command)
            same = (c_size_t * n)()
            keep = list(same[:lib.rt_history_same_command(who, n, same)])
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
