"""_native_runs.py - the ctypes declarations of a recorded run read back and of the text
summary (0.10): rt_run_read, rt_summary_write_text_cb, the statistics they feed (rt_stats_*),
rt_format_summary_json (rt_format_summary before 0.10) and a job's runs put together (rt_job_group,
rt_job_pick, rt_job_view_*), and a run history's runs (rt_history_runs, rt_history_job_runs, rt_history_basis_of,
0.22 experimental); their structs mirror
include/resource_tracker.h (rt_summary and rt_write_fn are _native_more.py's). A library older
than 0.10 lacks some: importing still works, calling one raises (as _native.py does for newer
symbols). Imported when first used, by recorded.py."""

from ctypes import POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint64
from ctypes import c_long, c_void_p

from ._native import LOG_FN, ReportHandle, StatsHandle, bind_optional, lib
from ._native_more import WRITE_FN, Summary

# rt_scheduler
SCHEDULERS = {"metaflow": 0, "kubernetes": 1, "k8s": 1, "slurm": 2}


class RunFacts(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("job", c_void_p), ("command", POINTER(c_char_p)),
        ("pid", c_int64), ("exit_status", c_int), ("start_secs", c_double), ("end_secs", c_double),
        ("host", c_void_p), ("cloud", c_void_p), ("cgroup_why", c_char_p),
    ]


class SummaryTextOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("memory_unit", c_char_p), ("time_unit", c_char_p),
        ("scheduler", c_int), ("width", c_int), ("brief", c_int),
    ]


class RunReadOptions(Structure):
    _fields_ = [("struct_size", c_size_t), ("log", LOG_FN), ("log_user", c_void_p)]


class RunReadInfo(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("format", c_char_p), ("records", c_uint64), ("skipped", c_uint64),
        ("opened", c_int), ("logged", c_int), ("message", c_char * 512),
    ]


class HistoryWho(Structure):
    """rt_history_who: who ran a run of a history (NULL where the row does not say)."""

    _fields_ = [("host", c_char_p), ("user", c_char_p), ("command", c_char_p)]


class HistoryBasis(Structure):
    """rt_history_basis: what an answer from a history's runs is based on (0.23)."""

    _fields_ = [("runs", c_size_t), ("hosts", c_size_t), ("users", c_size_t), ("runs_without_user", c_size_t)]


_PROTOTYPES = {
    "rt_stats_new_with": (c_int, [c_void_p, POINTER(StatsHandle)]),
    "rt_stats_summary": (POINTER(Summary), [StatsHandle]),
    "rt_stats_free": (None, [StatsHandle]),
    "rt_format_summary": (c_size_t, [POINTER(Summary), c_char_p, c_char_p, c_char_p, c_size_t]),
    "rt_format_summary_json": (c_int, [POINTER(Summary), c_char_p, c_char_p, c_char_p, c_size_t,
                                       POINTER(c_size_t)]),  # 0.10
    "rt_run_read": (c_int, [c_char_p, POINTER(RunReadOptions), POINTER(StatsHandle), c_size_t, ReportHandle,
                            POINTER(RunReadInfo)]),
    "rt_summary_write_text_cb": (c_int, [POINTER(Summary), POINTER(RunFacts), POINTER(SummaryTextOptions),
                                      WRITE_FN, c_void_p]),
    # a job on several nodes (experimental): which runs are one job (0.22), the job's view (0.18)
    "rt_job_group": (c_size_t, [POINTER(POINTER(Summary)), c_size_t, POINTER(c_size_t)]),
    "rt_job_view_new": (c_int, [POINTER(POINTER(Summary)), c_size_t, POINTER(c_void_p)]),
    "rt_job_view_free": (None, [c_void_p]),
    "rt_format_job_view_json": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(c_size_t)]),
    "rt_job_view_ask": (c_size_t, [c_void_p, c_int, c_char_p, c_size_t]),
    "rt_job_pick": (c_size_t, [POINTER(POINTER(Summary)), c_size_t, c_int, POINTER(c_size_t)]),  # 0.23
    # a run history read back (experimental, 0.22): its runs as summaries, who ran each
    "rt_history_runs": (c_int, [c_char_p, c_char_p, c_long, POINTER(POINTER(Summary)), POINTER(c_size_t),
                                POINTER(POINTER(HistoryWho)), c_char_p, c_size_t]),
    "rt_history_job_runs": (c_int, [c_char_p, c_char_p, c_long, c_int, POINTER(POINTER(Summary)), POINTER(c_size_t),
                                    POINTER(POINTER(HistoryWho)), c_char_p, c_size_t]),
    "rt_history_free": (None, [POINTER(Summary)]),
    "rt_history_basis_of": (c_int, [POINTER(HistoryWho), POINTER(c_size_t), c_size_t, POINTER(HistoryBasis)]),
    "rt_history_same_command": (c_size_t, [POINTER(HistoryWho), c_size_t, POINTER(c_size_t)]),  # 0.23
    "rt_need_source_name": (c_char_p, [c_int]),
}

bind_optional(_PROTOTYPES)
