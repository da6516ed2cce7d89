"""_analysis.py - what ResourceTracker computes from its samples, imported when first used:
the combined metrics frame, stats() with the Python tracker's default statistics (and the
library's energy with stats(energy=True)), the server_info with the C library's allocation guess, and recommend_resources (the library's
rule, rt_recommend, for this run and any historical runs)."""

from __future__ import annotations

from ._native import text
from .helpers import mean
from .tiny_data_frame import StatSpec, TinyDataFrame

DEFAULT_STAT_SPECS = [
    StatSpec(column="process_cpu_usage", agg=mean, round=2),
    StatSpec(column="process_cpu_usage", agg=max, round=2),
    StatSpec(column="process_memory_mib", agg=mean, round=2),
    StatSpec(column="process_memory_mib", agg=max, round=2),
    StatSpec(column="process_gpu_usage", agg=mean, round=2),
    StatSpec(column="process_gpu_usage", agg=max, round=2),
    StatSpec(column="process_gpu_vram_mib", agg=mean, round=2),
    StatSpec(column="process_gpu_vram_mib", agg=max, round=2),
    StatSpec(column="process_gpu_utilized", agg=mean, round=2),
    StatSpec(column="process_gpu_utilized", agg=max, round=2),
    StatSpec(column="system_disk_space_used_gb", agg=max, round=2),
    StatSpec(column="system_net_recv_bytes", agg=sum),
    StatSpec(column="system_net_sent_bytes", agg=sum),
    StatSpec(column="timestamp", agg=lambda x: max(x) - min(x), agg_name="duration"),
]


def combined_metrics(t, bytes: bool, human_names: bool, system_prefix: str | None,
                     process_prefix: str | None, offset: int | None = None) -> TinyDataFrame:
    """ResourceTracker.get_combined_metrics."""
    from .column_maps import BYTE_MAPPING, HUMAN_NAMES_MAPPING

    process = t.process_metrics
    system = t.system_metrics
    n = min(len(process), len(system))
    if n == 0:
        return TinyDataFrame(data=[])
    start = offset if offset is not None and offset > 0 else 0
    if start >= n:
        return TinyDataFrame(data=[])
    process, system = process[start:n], system[start:n]
    if bytes:
        for frame in (system, process):
            for col, factor in BYTE_MAPPING.items():
                if col in frame.columns:
                    frame[col] = [None if v is None else v * factor for v in frame[col]]
    if system_prefix is None:
        system_prefix = "System " if human_names else "system_"
    if process_prefix is None:
        process_prefix = "Process " if human_names else "process_"

    def name(col):
        return HUMAN_NAMES_MAPPING.get(col, col) if human_names else col

    combined = system.rename(
        {c: (name(c) if c == "timestamp" else system_prefix + name(c)) for c in system.columns}
    )
    for col in process.columns[1:]:
        combined[process_prefix + name(col)] = process[col]
    return combined


def stats(t, specs: list[StatSpec] | None) -> dict:
    """ResourceTracker.stats: the specs' statistics of the combined metrics; with the defaults,
    also the GPUs' work where the run has it (0.19, gpu_stats)."""
    if t.n_samples == 0:
        raise RuntimeError("No metrics collected (yet)")
    result = t.get_combined_metrics().stats(DEFAULT_STAT_SPECS if specs is None else specs)
    if "duration" in result.get("timestamp", {}):
        result["timestamp"]["duration"] += t.interval
    if specs is None:
        result.update(gpu_stats(t))
    return result


def gpu_stats(t) -> dict:
    """stats()'s GPU entries (0.19, _gpu_work.gpu_stats_of): the C library's GPU work of the run so
    far and the GPUs the tree kept busy; {} without them."""
    from ._gpu_work import gpu_stats_of
    from ._native_more import lib  # declares rt_tracker_summary

    if t._native.tracker is None:
        return {}
    return gpu_stats_of(lib.rt_tracker_summary(t._native.tracker))


def energy_stats(t) -> dict | None:
    """stats(energy=True)'s "energy": the C library's (0.15) energy of the run so far, the grid
    handed first (a loaded run's statistics have none of their own)."""
    from ._energy import energy_of, set_grid
    from ._native_more import lib  # declares rt_tracker_summary

    if t._native.tracker is None:
        return None
    set_grid(t._native.tracker, getattr(t, "_grid", None))
    return energy_of(lib.rt_tracker_summary(t._native.tracker))


def efficiency_stats(t) -> dict | None:
    """stats(efficiency=True)'s "efficiency": what the job was given where it runs and how much
    of it the run used so far (the C library 0.16's, _place.py)."""
    from ._native_more import lib  # declares rt_tracker_summary
    from ._place import efficiency_of

    if t._native.tracker is None:
        return None
    return efficiency_of(lib.rt_tracker_summary(t._native.tracker))


def answer_figures(t) -> dict | None:
    """The figures of the run's answer, as the report's "The answer" (and its summary table)
    shows them (the C library's rt_tracker_summary): duration_secs, cpu_secs, cores_mean and
    cores_peak of the process tree, memory_need_mib (the need the recommendation sizes from;
    None unknown) and memory_words (what that figure is, e.g. "largest process's peak RSS,
    kernel-counted", with ", a lower bound" when it is one), gpu_peak and vram_peak_mib; the
    machine's machine_cores_mean, machine_cores_peak, machine_memory_used_peak_mib and vcpus;
    None without a tracked process sample."""
    from ._native_more import NEED_UNKNOWN, has, lib  # declares rt_tracker_summary

    if t._native.tracker is None or t.n_samples == 0:
        return None
    p = lib.rt_tracker_summary(t._native.tracker)
    if not p or not p.contents.has_process:
        return None
    s = p.contents

    def num(v):
        return v if v == v else None

    need = s.memory_need
    known = need.source != NEED_UNKNOWN and need.mib == need.mib
    words = text(lib.rt_need_source_text(need.source)) if known and has("rt_need_source_text") else None
    if words and need.sampled:
        words += ", a lower bound"
    return {"duration_secs": num(s.duration_secs), "cpu_secs": num(s.process_cpu_secs),
            "cores_mean": num(s.process_cores.mean), "cores_peak": num(s.process_cores.peak),
            "memory_need_mib": need.mib if known else None, "memory_words": words,
            "gpu_peak": num(s.process_gpu_usage.peak), "vram_peak_mib": num(s.process_gpu_vram_mib.peak),
            "machine_cores_mean": num(s.cpu_cores.mean), "machine_cores_peak": num(s.cpu_cores.peak),
            "machine_memory_used_peak_mib": num(s.memory_used_mib.peak), "vcpus": num(s.cpu_count)}


def allocation(t) -> str | None:
    """The C library's guess (rt_summary.allocation): None before any sample, "dedicated" or
    "shared", "unknown" when it cannot tell (no tracked process samples)."""
    from ._native_more import lib  # declares rt_tracker_summary

    if t._native.tracker is None or t.n_samples == 0:
        return None
    return text(lib.rt_tracker_summary(t._native.tracker).contents.allocation) or "unknown"


def server_info(t) -> dict | None:
    """ResourceTracker.server_info."""
    if t._saved is not None:
        info = t._saved.get("server_info")
        if info is not None and t.n_samples > 0 and not info.get("allocation"):
            info["allocation"] = allocation(t)
        return info
    if not t.discover_server:
        return None
    if t._server_info is None:
        from .server_info import get_server_info

        try:
            t._server_info = get_server_info()
        except Exception as e:
            from logging import getLogger

            getLogger("resource_tracker").warning(f"Error fetching server info: {e}")
            return None
    info = dict(t._server_info)
    info["allocation"] = allocation(t)
    return info


def recommend_resources(t, historical_stats: list[dict], max_slowdown_pct: float = 10.0) -> dict:
    """ResourceTracker.recommend_resources: the library's rule (rt_recommend) over this run and
    the historical runs given as stats() dicts: cores from this run's predicted duration under
    each count, the fewest within max_slowdown_pct of its own (the mean of the runs' means when
    historical runs, which have no table, are given; the table and the time under "cpu_time",
    see cpu_time), memory
    from the highest need (this run's the kernel's peak where known, a historical run's its PSS
    peak) plus headroom that shrinks as runs agree (20% for one run), GPUs the most kept busy,
    and (0.19) "gpu_ask": each GPU's memory and the models that have it (gpu_ask)."""
    from ctypes import POINTER, byref, sizeof

    from ._native import NativeError
    from ._native_more import RT_NULL_I64, RecommendOptions, Summary, has, lib, new_recommendation, summary_of_stats

    if not (isinstance(max_slowdown_pct, (int, float)) and max_slowdown_pct >= 0):
        raise ValueError(f"max_slowdown_pct must be a number of percent, 0 or more, not {max_slowdown_pct!r}")
    t.wait_for_samples(n=1, timeout=t.interval * 5)
    rec = new_recommendation()
    own = lib.rt_tracker_summary(t._native.tracker)
    if not own or not own.contents.has_process:
        raise NativeError("rt_tracker_summary", 2, "no tracked process samples")
    past = [summary_of_stats(h) for h in historical_stats]
    runs = (POINTER(Summary) * (1 + len(past)))(own, *[POINTER(Summary)(p) for p in past])
    if has("rt_recommend_with"):
        opts = RecommendOptions(struct_size=sizeof(RecommendOptions), max_slowdown_pct=float(max_slowdown_pct),
                                usd_per_core_hour=0.0)
        err = lib.rt_recommend_with(byref(opts), runs, len(runs), byref(rec))
    elif max_slowdown_pct != 10.0:
        raise NativeError("rt_recommend_with", 3, "the library has no max_slowdown_pct (older than 0.18)")
    else:
        err = lib.rt_recommend(runs, len(runs), byref(rec))
    if err:
        raise NativeError("rt_recommend", err, "the runs have no tracked process")
    memory = None if rec.memory_mib == RT_NULL_I64 else int(rec.memory_mib)
    out = {"cpu": int(rec.cpu), "memory": memory, "gpu": int(rec.gpu), "vram": int(rec.vram_mib)}
    out.update(cpu_time(rec, own))
    out["gpu_ask"] = gpu_ask(rec)
    return out


def gpu_ask(rec) -> dict | None:
    """The 0.5 dict's key "gpu_ask" (0.19): what to ask of each GPU (docs/answers.md, "The GPU
    ask"): "words" ("1 GPU with >= 40 GiB (peak 33.1 GiB)"), "gpus" (asked: those that did work),
    "held", "busy", "vram_per_gpu_mib" (the smallest GPU memory of the library's table that holds
    the most one GPU held plus headroom; 0: none), "vram_per_gpu_need_mib", "vram_per_gpu_source",
    "models" (the first four that have it), "models_count", "memory_had_mib", "sm_active_pct",
    "busy_pct", "smaller" (a smaller GPU would do), "notes" and "scheduler_notes" {"metaflow",
    "kubernetes", "slurm"}; None without a GPU asked or from a library without it."""
    from ctypes import byref, create_string_buffer

    from ._native_more import has, lib

    if not has("rt_recommendation_gpu_words") or rec.gpu <= 0:
        return None

    def num(v):
        return None if v != v else v

    buf = create_string_buffer(2048)
    lib.rt_recommendation_gpu_words(byref(rec), buf, len(buf))
    words = buf.value.decode()
    lib.rt_recommendation_gpu_notes(byref(rec), None, None, buf, len(buf))
    notes = [n for n in buf.value.decode().split("\n") if n]
    how = {}
    for i, key in enumerate(("metaflow", "kubernetes", "slurm")):  # rt_scheduler's order
        how[key] = buf.value.decode() if lib.rt_recommendation_gpu_scheduler_note(byref(rec), i, buf, len(buf)) else None
    need_source = lib.rt_need_source_text(rec.vram_per_gpu_source) if has("rt_need_source_text") else None
    return {"words": words, "gpus": int(rec.gpu), "held": int(rec.gpu_held), "busy": int(rec.gpu_busy),
            "vram_per_gpu_mib": int(rec.vram_per_gpu_mib), "vram_per_gpu_need_mib": num(rec.vram_per_gpu_need_mib),
            "vram_per_gpu_source": need_source.decode() if need_source else None,
            "models": [m.decode() for m in rec.gpu_models if m], "models_count": int(rec.gpu_models_count),
            "memory_had_mib": num(rec.gpu_memory_had_mib), "sm_active_pct": num(rec.gpu_sm_active_pct),
            "busy_pct": num(rec.gpu_busy_pct), "smaller": bool(rec.gpu_smaller), "notes": notes,
            "scheduler_notes": how}


def cpu_time(rec, own) -> dict:
    """The 0.5 dict's one new key (0.18): "cpu_time", what the asked cores cost in time: the
    prediction under them and under one fewer, the time limit, how they were decided, in words,
    and "table", this run's predicted duration under 1, 2, ... cores (docs/answers.md, "The CPU
    answer"); "phase", the phase that decided the cores (None: none) and "phases", each phase's
    own ask and table; None from a library without it."""
    from ctypes import byref, create_string_buffer

    from ._native_more import cores_rows, has, lib, phase_tables

    def num(v):
        return None if v != v else v

    basis = rec.cpu_basis.decode() if rec.cpu_basis else None
    if basis is None:
        return {"cpu_time": None}
    words = None
    if has("rt_recommendation_time_words"):
        buf = create_string_buffer(400)
        if lib.rt_recommendation_time_words(byref(rec), buf, len(buf)):
            words = buf.value.decode()
    return {"cpu_time": {"cores": int(rec.cpu), "duration_secs": num(rec.cpu_duration_secs),
                         "run_duration_secs": num(rec.cpu_run_duration_secs), "fewer": int(rec.cpu_fewer),
                         "fewer_duration_secs": num(rec.cpu_fewer_duration_secs),
                         "time_limit_secs": num(rec.time_limit_secs), "max_slowdown_pct": num(rec.max_slowdown_pct),
                         "basis": basis, "words": words, "table": cores_rows(own.contents.cores) if own else [],
                         "phase": rec.cpu_phase.decode() or None, "phase_fewer_secs": num(rec.cpu_phase_fewer_secs),
                         "phases": phase_tables(own, num(rec.max_slowdown_pct) or 10.0)}}
