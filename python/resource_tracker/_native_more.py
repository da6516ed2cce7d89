"""_native_more.py - the part of libresource-tracker's ctypes declarations that tracking does
not need: the structs and calls of the host, the Keeper, the summary, the recommendation and
the report, and helpers of synchronous calls (a log collector, output captured through the
library's rt_write_fn, or an in-memory fd from a library older than 0.10). Imported when first
used, so that importing and running a tracker compiles less (see _native.py).

Names of 0.10 (rt_host_new, the `_cb` outputs) are used when the loaded library has them,
else the older names they replace."""

import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_long,
    c_size_t,
    c_uint64,
    c_void_p,
    string_at,
)
from math import nan as NAN

from ._native import LOG_FN, Cloud, TrackerHandle, bind_optional, lib, new, text


class Job(Structure):
    _fields_ = [("struct_size", c_size_t)] + [
        (name, c_char_p)
        for name in ("job_name", "project_name", "stage_name", "task_name", "team", "env",
                     "language", "orchestrator", "executor", "external_run_id", "container_image")
    ] + [("tags", POINTER(c_char_p)), ("tag_count", c_size_t)]


class Host(Structure):
    _fields_ = [
        ("hostname", c_char_p), ("host_id", c_char_p), ("ip", c_char_p), ("vcpus", c_int64),
        ("cpu_model", c_char_p), ("memory_mib", c_double), ("gpu_model", c_char_p),
        ("gpu_count", c_int64), ("gpu_memory_mib", c_double), ("storage_gb", c_double),
        ("kernel", c_char_p), ("os", c_char_p), ("allocation", c_char_p),
    ]


class HostOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("proc_root", c_char_p), ("sys_root", c_char_p),
        ("log", LOG_FN), ("log_user", c_void_p), ("nvml_library", c_char_p),
    ]


class Dist(Structure):
    _fields_ = [("mean", c_double), ("peak", c_double), ("p50", c_double), ("p95", c_double)]


class Need(Structure):
    _fields_ = [("mib", c_double), ("source", c_int), ("sampled", c_int)]


class CoresRow(Structure):
    """rt_cores_row (0.18): the run's predicted duration under this many cores."""

    _fields_ = [("cores", c_int64), ("duration_secs", c_double), ("core_hours", c_double), ("wait_bound", c_int)]


class CoresTable(Structure):
    """rt_cores_table (0.18): the run under 1, 2, ... cores (docs/answers.md, "The CPU answer")."""

    _fields_ = [
        ("n", c_size_t), ("rows", POINTER(CoresRow)), ("duration_secs", c_double), ("cores_had", c_double),
        ("peak_cores", c_double), ("wait_secs", c_double), ("wait_from", c_char_p),
        # added in 0.20 (a library of 0.20 or newer allocates them): the job's own demand
        ("own_secs", c_double), ("others_cores", c_double), ("machine_cores", c_double), ("demand_cores", c_double),
    ]


class PhaseSummary(Structure):
    """rt_phase_summary (0.14; cores 0.18): one phase name's figures over its calls."""

    _fields_ = [
        ("name", c_char_p), ("calls", c_uint64), ("unterminated", c_uint64), ("samples", c_uint64),
        ("empty_calls", c_uint64), ("first_start_secs", c_double), ("duration_secs", c_double),
        ("call_min_secs", c_double), ("call_max_secs", c_double), ("call_mean_secs", c_double),
        ("cpu_secs", c_double), ("cpu_exact", c_int), ("cores_mean", c_double), ("cores_peak", c_double),
        ("rss_peak_mib", c_double), ("pss_peak_mib", c_double), ("memory_peak_mib", c_double),
        ("memory_need", Need), ("gpu_usage_mean", c_double), ("gpu_usage_peak", c_double),
        ("gpu_vram_mean_mib", c_double), ("gpu_vram_peak_mib", c_double), ("read_bytes", c_double),
        ("write_bytes", c_double),
        # added in 0.18: read only from a library of 0.18 or newer (phase_tables checks)
        ("cores", POINTER(CoresTable)),
    ]


def cores_rows(table) -> list:
    """The rows of an rt_cores_table pointer as dicts (an empty list for NULL)."""
    if not table:
        return []
    t = table.contents
    return [{"cores": int(r.cores), "duration_secs": r.duration_secs, "core_hours": r.core_hours,
             "wait_bound": bool(r.wait_bound)} for r in (t.rows[i] for i in range(t.n))]


class Summary(Structure):
    _fields_ = [
        ("samples", c_uint64), ("start_secs", c_double), ("end_secs", c_double),
        ("duration_secs", c_double), ("job_name", c_char_p), ("has_process", c_int),
        ("process_cpu_secs", c_double),
        ("process_cores", Dist), ("process_pss_mib", Dist), ("process_rss_mib", Dist),
        ("process_gpu_usage", Dist), ("process_gpu_vram_mib", Dist),
        ("process_gpus_used", c_double),
        ("process_read_bytes", c_double), ("process_write_bytes", c_double),
        ("cpu_count", c_double), ("cpu_cores", Dist), ("memory_used_mib", Dist),
        ("memory_total_mib", c_double), ("gpu_usage", Dist), ("gpu_vram_mib", Dist),
        ("gpu_count", c_double), ("gpu_vram_total_mib", c_double),
        ("disk_read_bytes", c_double), ("disk_write_bytes", c_double),
        ("net_recv_bytes", c_double), ("net_sent_bytes", c_double),
        ("disk_space_used_peak_bytes", c_double), ("disk_space_total_bytes", c_double),
        ("allocation", c_char_p),
        # added in 0.6 (the tree's cgroup): read only from a library of 0.6 or newer, as a
        # 0.5 library's rt_summary ends at allocation
        ("process_memory_peak_mib", c_double), ("oom_kills", c_double),
        ("oom_kill_secs", c_double), ("memory_limit_mib", c_double),
        ("memory_high_mib", c_double), ("cpu_quota_cores", c_double),
        ("cpu_periods", c_double), ("cpu_throttled_periods", c_double),
        ("cpu_throttled_secs", c_double), ("pids_peak", c_double), ("pids_limit", c_double),
        ("pressure_cpu_some_pct", Dist), ("pressure_memory_some_pct", Dist),
        ("pressure_memory_full_pct", Dist), ("pressure_io_some_pct", Dist),
        ("pressure_io_full_pct", Dist),
        # added in 0.8: read only from a library of 0.8 or newer (gpu_tracker checks)
        ("usage", c_void_p),
        # added in 0.9: what the run needed (rt_need) and what it is made from
        ("process_rss_hwm_mib", c_double), ("process_unreclaimable_peak_mib", c_double),
        ("process_gpu_vram_peak_mib", c_double), ("process_cancelled_write_bytes", c_double),
        ("process_cgroup_exclusive", c_double), ("left_behind", c_double),
        ("memory_need", Need), ("vram_need", Need),
        # 0.14: the phases (rt_phase_summary pointers) and the counts of marks
        ("phases", c_void_p), ("phase_count", c_size_t), ("phase_counts", c_void_p),
        # 0.15: energy and carbon; read only from a library of 0.15 or newer (_energy.py checks)
        ("energy_joules", c_double), ("process_energy_joules", c_double),
        ("energy_method", c_char_p), ("process_energy_method", c_char_p),
        ("power_watts", Dist), ("process_power_watts", Dist), ("idle_power_watts", c_double),
        ("gpu_power_throttled_secs", c_double), ("gpu_thermal_throttled_secs", c_double),
        ("energy_model", c_char_p), ("energy_missing", c_char_p),
        ("co2e_grams", c_double), ("process_co2e_grams", c_double), ("grid", c_void_p),
        # 0.16: what the job was given (an rt_request, _place.py) and the efficiencies; read only
        # from a library of 0.16 or newer (_place.py checks)
        ("request", c_void_p), ("requested_cpu_cores", c_double), ("requested_memory_mib", c_double),
        ("requested_gpus", c_double), ("time_limit_secs", c_double),
        ("requested_cpu_from", c_char_p), ("requested_memory_from", c_char_p),
        ("requested_gpus_from", c_char_p), ("time_limit_from", c_char_p),
        ("cpu_efficiency_pct", c_double), ("memory_efficiency_pct", c_double),
        ("gpu_efficiency_pct", c_double), ("time_limit_used_pct", c_double),
        ("process_vms_peak_mib", c_double),
        # 0.18: the oldest the walk's own figures were in a sample (the two clocks)
        ("process_walk_age_max_secs", c_double),
        # and the processes' peaks as if at once (the memory need's process_peaks)
        ("process_rss_hwm_tree_mib", c_double),
        # and the safe side's part of the cgroup's unreclaimable peak
        ("process_unreclaimable_unsure_mib", c_double),
        # whose the pressure figures are: 1 the group's in every record, 0 some the machine's
        ("pressure_group", c_double),
        # the run under other core counts (NULL in a summary made here)
        ("cores", POINTER(CoresTable)),
        # the slowdown bound of the run's own answers (NaN in a summary made here: the default)
        ("max_slowdown_pct", c_double),
        # the run's place in a job of several nodes (an rt_member; NULL in a summary made here)
        ("member", c_void_p),
        # 0.19: what the job's GPUs did (NVML GPM), the GPUs kept busy, the VRAM on one GPU,
        # the time the GPUs idled while the CPU was busy
        ("gpu_sm_active_pct", Dist), ("gpu_sm_occupancy_pct", Dist), ("gpu_tensor_active_pct", Dist),
        ("gpu_dram_active_pct", Dist), ("gpu_fp64_active_pct", Dist), ("gpu_fp32_active_pct", Dist),
        ("gpu_fp16_active_pct", Dist), ("gpu_pcie_bytes_per_sec", Dist), ("gpu_nvlink_bytes_per_sec", Dist),
        ("gpu_work_shared", c_double), ("process_gpus_busy", c_double),
        ("process_gpu_vram_per_gpu_peak_mib", c_double), ("gpu_idle_cpu_busy_secs", c_double),
        # and the energy by part (EnergyPart pointers, the largest first) and a platform
        # meter's source; read only from a library that has rt_summary_energy_words (_energy.py)
        ("energy_parts", c_void_p), ("energy_part_count", c_size_t), ("energy_meter_source", c_char_p),
        # 0.20: file data the job's group read back after its memory evicted it (re-reads)
        ("memory_refault_mib", c_double),
        # what the processes left behind held at the end (NaN: none left)
        ("left_behind_mib", c_double),
        # the tree's processes whose end the kernel's exit records told (NaN: not listened to)
        ("process_exits_counted", c_double),
        # 0.21: the tree's processes seen ignoring SIGCHLD (their children's CPU: a lower bound without
        # the exit records)
        ("process_unwaited_parents", c_double),
        # 0.21: the signal that ended the command (0: none; NaN: not known)
        ("end_signal", c_double),
        # 0.21: the clocks: the wall clock's steps, the sampling's gaps
        ("clock_steps", c_double),
        ("clock_step_secs", c_double),
        ("clock_step_largest_secs", c_double),
        ("sampling_gaps", c_double),
        ("sampling_gap_secs", c_double),
        ("sampling_gap_longest_secs", c_double),
    ]


class EnergyPart(Structure):
    """rt_summary_energy_part (0.19): the run's energy of one kind from one source by one method."""

    _fields_ = [
        ("kind", c_char_p), ("source", c_char_p), ("method", c_char_p), ("energy_joules", c_double),
        ("process_energy_joules", c_double), ("devices", c_double),
    ]


class Grid(Structure):
    """rt_grid (0.15): a grid's carbon intensity, g CO2e per kWh, and where the figure came from."""

    _fields_ = [
        ("struct_size", c_size_t), ("g_per_kwh", c_double), ("zone", c_char_p), ("name", c_char_p),
        ("source", c_char_p), ("year", c_int),
    ]


class Recommendation(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("cpu", c_int64), ("memory_mib", c_int64), ("gpu", c_int64),
        ("vram_mib", c_int64), ("runs", c_uint64), ("duration_secs", c_double),
        # added in 0.6; a 0.5 library fills only up to duration_secs (struct_size), so the
        # caller's defaults stay: see new_recommendation
        ("oom_killed", c_int), ("cpu_quota_cores", c_double), ("cpu_throttled_pct", c_double),
        # added in 0.9: the need the memory was made from, its source, the headroom
        ("memory_need_mib", c_double), ("memory_source", c_int), ("memory_sampled", c_int),
        ("headroom_pct", c_double), ("vram_need_mib", c_double), ("vram_source", c_int),
        # added in 0.18: the cores' time (rt_cores_table)
        ("max_slowdown_pct", c_double), ("cpu_duration_secs", c_double), ("cpu_run_duration_secs", c_double),
        ("cpu_fewer", c_int64), ("cpu_fewer_duration_secs", c_double), ("cpu_cost_usd", c_double),
        ("time_limit_secs", c_double), ("cpu_basis", c_char_p),
        ("cpu_phase", c_char * 256), ("cpu_phase_fewer_secs", c_double),
        # added in 0.19: the GPU ask (gpu above is then the GPUs asked)
        ("gpu_held", c_int64), ("gpu_busy", c_int64), ("vram_per_gpu_need_mib", c_double),
        ("vram_per_gpu_source", c_int), ("vram_per_gpu_mib", c_int64), ("vram_per_gpu_gib", c_double),
        ("gpu_models", c_char_p * 4), ("gpu_models_count", c_size_t), ("gpu_memory_had_mib", c_double),
        ("gpu_sm_active_pct", c_double), ("gpu_busy_pct", c_double), ("gpu_smaller", c_int),
        # added in 0.20: after a kill, ask to learn (a run stopped at a limit puts a floor under the ask)
        ("memory_floor_mib", c_double), ("memory_learn", c_int), ("time_floor_secs", c_double),
        # 0.20: the files a run re-read that the memory ask keeps cached (NaN: none)
        ("memory_reread_files_mib", c_double),
    ]


class RecommendOptions(Structure):
    """rt_recommend_options (0.18): the slowdown bound and a core-hour's price."""

    _fields_ = [("struct_size", c_size_t), ("max_slowdown_pct", c_double), ("usd_per_core_hour", c_double)]


def new_recommendation(**fields) -> Recommendation:
    """An rt_recommendation as RT_RECOMMENDATION_INIT, with the 0.6 and 0.9 figures null (NaN)
    rather than ctypes' zeros: a quota of 0.0 cores would read as one that held a run back."""
    for name in ("cpu_quota_cores", "cpu_throttled_pct", "memory_need_mib", "headroom_pct", "vram_need_mib",
                 "max_slowdown_pct", "cpu_duration_secs", "cpu_run_duration_secs", "cpu_fewer_duration_secs",
                 "cpu_cost_usd", "time_limit_secs", "cpu_phase_fewer_secs", "vram_per_gpu_need_mib",
                 "gpu_memory_had_mib", "gpu_sm_active_pct", "gpu_busy_pct", "memory_floor_mib", "time_floor_secs"):
        fields.setdefault(name, NAN)
    return new(Recommendation, **fields)


RT_NULL_I64 = -(1 << 63)
NEED_UNKNOWN = 0  # rt_need_source RT_NEED_UNKNOWN
NEED_PSS = 4  # rt_need_source RT_NEED_PSS


def summary_of_stats(stats: dict) -> Summary:
    """An rt_summary standing for a run known only by the Python tracker's stats() dict (its
    peaks and means, sampled: the PSS peak is its memory; 0.5's keys, process_memory_mib in
    MiB, or 0.4's, process_memory in kB), for rt_recommend over several runs:
    every figure it lacks is null."""
    s = Summary()
    for name, ctype in Summary._fields_:
        if ctype is c_double:
            setattr(s, name, NAN)
        elif ctype is Dist:
            setattr(s, name, Dist(NAN, NAN, NAN, NAN))
    for name in ("start_secs", "end_secs"):
        setattr(s, name, NAN)
    s.has_process = 1
    s.samples = 1

    def stat(key, field):
        v = (stats.get(key) or {}).get(field)
        return float(v) if isinstance(v, (int, float)) else NAN

    s.duration_secs = stat("timestamp", "duration")
    s.process_cores = Dist(stat("process_cpu_usage", "mean"), stat("process_cpu_usage", "max"), NAN, NAN)
    if "process_memory_mib" in stats:  # the Python tracker 0.5's stats(): MiB
        pss, pss_mean = stat("process_memory_mib", "max"), stat("process_memory_mib", "mean")
    else:  # 0.4's process_memory: kB
        pss, pss_mean = stat("process_memory", "max") / 1024, stat("process_memory", "mean") / 1024
    s.process_pss_mib = Dist(pss_mean, pss, NAN, NAN)
    gpu_mean, gpu_max = stat("process_gpu_usage", "mean"), stat("process_gpu_usage", "max")
    s.process_gpu_usage = Dist(gpu_mean, gpu_max, NAN, NAN)
    vram_key = "process_gpu_vram_mib" if "process_gpu_vram_mib" in stats else "process_gpu_vram"
    vram = stat(vram_key, "max")
    s.process_gpu_vram_mib = Dist(stat(vram_key, "mean"), vram, NAN, NAN)
    used = stat("process_gpu_utilized", "max")
    if used != used and gpu_mean > 0:  # no count of GPUs used: the busy GPUs at the peak, as
        # the Python resource-tracker 0.4 counts them
        used = float(max(1, round(gpu_max)))
    s.process_gpus_used = used
    s.memory_need = Need(pss, NEED_PSS if pss == pss else 0, 1 if pss == pss else 0)
    s.vram_need = Need(vram, 6 if vram == vram else 0, 1 if vram == vram else 0)
    # 0.19: the GPUs' work and the tree's GPUs, where stats() had them (_gpu_work.gpu_stats_of)
    from ._gpu_work import WORK

    for name in ("gpu_" + k for k in WORK):
        setattr(s, name, Dist(stat(name, "mean"), stat(name, "max"), NAN, NAN))
    for name, agg in (("gpu_work_shared", "max"), ("process_gpus_busy", "max"),
                      ("process_gpu_vram_per_gpu_peak_mib", "max"), ("gpu_idle_cpu_busy_secs", "sum")):
        setattr(s, name, stat(name, agg))
    return s


class KeeperOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("url", c_char_p), ("timeout_secs", c_double),
        ("log", LOG_FN), ("log_user", c_void_p),
        ("offline_why", c_void_p), ("offline_why_cap", c_size_t),  # 0.18; an older library ignores them
    ]


class Server(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("vendor_id", c_char * 64), ("api_reference", c_char * 128),
        ("display_name", c_char * 128), ("vcpus", c_int64), ("memory_mib", c_double),
        ("gpu_count", c_int64), ("price_usd_per_hour", c_double),
        # added in 0.15: Keeper's facts of the server's CPU
        ("cpu_manufacturer", c_char * 64), ("cpu_family", c_char * 64), ("cpu_model", c_char * 128),
    ]


class ReportInfo(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("title", c_char_p), ("job", POINTER(Job)),
        ("command", c_char_p), ("host", POINTER(Host)), ("cloud", POINTER(Cloud)),
        ("exit_status", c_int), ("summary", POINTER(Summary)),
        ("recommendation", POINTER(Recommendation)), ("cheapest", POINTER(Server)),
        ("keeper_note", c_char_p), ("current_price_usd_per_hour", c_double),
        ("current_instance", c_char_p),
        # added in 0.9
        ("cgroup_why", c_char_p),
        # added in 0.18
        ("job_view", c_void_p), ("node_shown", c_char_p),
        # added in 0.18 too: rt_run_state, rt_report_wording
        ("run_state", c_int), ("wording", c_int),
        # added in 0.19: the cheapest server with GPUs like the job's (the GPU ask's saving)
        ("gpu_like_this", POINTER(Server)),
    ]


# rt_run_state and rt_report_wording (0.18)
RT_RUN_RUNNING, RT_RUN_FINISHED, RT_RUN_FAILED = 1, 2, 3
RT_REPORT_WORDING_PY05 = 1


# rt_write_fn: long (*)(void *user, const void *buf, size_t len)
WRITE_FN = CFUNCTYPE(c_long, c_void_p, c_void_p, c_size_t)

_PROTOTYPES = {
    "rt_host_new": (c_int, [POINTER(HostOptions), POINTER(POINTER(Host))]),  # 0.10
    "rt_host_read": (c_int, [POINTER(HostOptions), POINTER(POINTER(Host))]),
    "rt_host_free": (None, [POINTER(Host)]),
    "rt_keeper_cheapest": (c_int, [POINTER(KeeperOptions), POINTER(Recommendation), POINTER(Server)]),
    "rt_keeper_price": (c_int, [POINTER(KeeperOptions), c_char_p, c_char_p, c_char_p, POINTER(c_double)]),
    "rt_tracker_summary": (POINTER(Summary), [TrackerHandle]),
    "rt_tracker_recommend": (c_int, [TrackerHandle, POINTER(Recommendation)]),
    "rt_recommend": (c_int, [POINTER(POINTER(Summary)), c_size_t, POINTER(Recommendation)]),
    "rt_recommendation_time_words": (c_size_t, [POINTER(Recommendation), c_char_p, c_size_t]),  # 0.18
    "rt_cores_fewest": (c_int64, [POINTER(CoresTable), c_double]),  # 0.18
    "rt_recommend_with": (c_int, [POINTER(RecommendOptions), POINTER(POINTER(Summary)), c_size_t,
                                  POINTER(Recommendation)]),  # 0.18
    "rt_tracker_report": (c_int, [TrackerHandle, POINTER(ReportInfo), c_int]),
    "rt_tracker_report_cb": (c_int, [TrackerHandle, POINTER(ReportInfo), WRITE_FN, c_void_p]),  # 0.10
    "rt_tracker_save_cb": (c_int, [TrackerHandle, c_char_p, c_int, WRITE_FN, c_void_p]),  # 0.10
    "rt_grid_lookup": (c_int, [c_char_p, POINTER(Grid)]),  # 0.15
    "rt_tracker_set_grid": (c_int, [TrackerHandle, POINTER(Grid)]),  # 0.15
    "rt_need_source_text": (c_char_p, [c_int]),
    "rt_summary_energy_words": (c_int, [POINTER(Summary), c_int, c_char_p, c_size_t, POINTER(c_size_t)]),  # 0.19
    "rt_recommendation_gpu_words": (c_size_t, [POINTER(Recommendation), c_char_p, c_size_t]),  # 0.19
    "rt_recommendation_gpu_notes": (c_size_t, [POINTER(Recommendation), POINTER(Server), POINTER(Server), c_char_p,
                                               c_size_t]),  # 0.19
    "rt_recommendation_gpu_scheduler_note": (c_size_t, [POINTER(Recommendation), c_int, c_char_p, c_size_t]),  # 0.19
}

bind_optional(_PROTOTYPES)


class LogCollector:
    """A log callback that keeps the messages of one synchronous call (as str)."""

    def __init__(self):
        self.messages = []
        self.fn = LOG_FN(self._log)

    def _log(self, _user, level, msg):
        self.messages.append(text(msg))

    def last(self):
        return self.messages[-1] if self.messages else None


def has(name):
    """Whether the loaded library has the function (declared above or in _native.py)."""
    return hasattr(getattr(lib, name), "argtypes")


def phase_tables(summary, max_slowdown_pct: float) -> list:
    """Each phase of a summary (an rt_summary pointer) under other core counts (0.18): its name,
    its own duration, the fewest cores within max_slowdown_pct of it, and its table's rows; an
    empty list without phases or from a library older than 0.18."""
    from ctypes import cast

    if not summary or not has("rt_cores_fewest"):
        return []
    s = summary.contents
    if not s.phases or not s.phase_count:
        return []
    items = cast(s.phases, POINTER(POINTER(PhaseSummary)))
    out = []
    for i in range(s.phase_count):
        p = items[i].contents
        t = p.cores
        asked = int(lib.rt_cores_fewest(t, max_slowdown_pct)) if t else 0
        out.append({"name": text(p.name), "duration_secs": p.duration_secs, "cpu_secs": p.cpu_secs,
                    "cores_asked": asked or None, "table": cores_rows(t)})
    return out


def capture(name, call_cb, call_fd):
    """(result, the bytes written) of an output call: call_cb(write_fn) through the library's
    `_cb` function name when it has it (0.10), else call_fd(fd) into an in-memory file."""
    if not has(name):
        return capture_fd(call_fd)
    chunks = []

    def write(_user, buf, n):
        chunks.append(string_at(buf, n))
        return n

    fn = WRITE_FN(write)  # alive through the call
    result = call_cb(fn)
    return result, b"".join(chunks)


def capture_fd(write):
    """Calls write(fd) with a fresh in-memory file and returns (result, the bytes written)."""
    try:
        fd = os.memfd_create("resource-tracker", getattr(os, "MFD_CLOEXEC", 0))
    except (AttributeError, OSError):
        from tempfile import TemporaryFile

        f = TemporaryFile()
        fd = os.dup(f.fileno())
        f.close()
    try:
        result = write(fd)
        size = os.lseek(fd, 0, os.SEEK_END)
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while size > 0:
            chunk = os.read(fd, min(size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
        return result, b"".join(chunks)
    finally:
        os.close(fd)


