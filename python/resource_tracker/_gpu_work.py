"""_gpu_work.py - what the GPUs did, as the Python packages hand it out: the C library 0.19's GPU
work of a run (rt_summary's gpu_* figures, NVML GPM: SM activity, the tensor cores, DRAM bandwidth,
FP64/32/16, PCIe and NVLink traffic) as ResourceTracker.stats()'s extra entries and as gpu_tracker's
gpu_work (`summary --json`'s "gpu_work" object)."""

from __future__ import annotations

from ._native_more import has

# the work's distributions, as `summary --json`'s gpu_work names them (rt_summary: gpu_ + name)
WORK = ("sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_active_pct", "fp64_active_pct",
        "fp32_active_pct", "fp16_active_pct", "pcie_bytes_per_sec", "nvlink_bytes_per_sec")


def _num(v):
    return None if v != v else v


def _new_enough(summary) -> bool:
    """A summary from a library that has the 0.19 members (the energy by part came with them)."""
    return bool(summary) and has("rt_summary_energy_words")


def gpu_work_of(summary) -> dict | None:
    """`summary --json`'s "gpu_work" of an rt_summary (a POINTER(Summary)), figures unrounded:
    {name: {mean, peak, p50, p95}} for each of WORK (percent, or bytes per second for the
    traffic; None where no record had the figure) and shared (True: the figures were the
    devices', shared with other processes; False: the job's alone; None). None when no record had
    a work figure (GPUs without GPM: before Hopper, AMD, Intel, an old driver), or from a library
    older than 0.19."""
    if not _new_enough(summary):
        return None
    s = summary.contents
    dists = {k: getattr(s, "gpu_" + k) for k in WORK}
    if all(d.mean != d.mean for d in dists.values()):
        return None
    out = {k: {"mean": _num(d.mean), "peak": _num(d.peak), "p50": _num(d.p50), "p95": _num(d.p95)}
           for k, d in dists.items()}
    shared = s.gpu_work_shared
    out["shared"] = None if shared != shared else shared == 1
    return out


def gpu_stats_of(summary) -> dict:
    """The entries ResourceTracker.stats() adds for the GPUs (0.19), in its shape {key: {agg:
    value}} with aggregate_stats' aggregations, rounded as its defaults (2 decimals): for each work
    figure a record had, "gpu_<name>" {"mean", "max"}; "gpu_work_shared" {"max": 1 the devices'
    figures, 0 the job's}; "process_gpus_busy" {"max"} (the most GPUs the tree kept busy at once);
    "process_gpu_vram_per_gpu_peak_mib" {"max"} (the most VRAM the tree held on one GPU);
    "gpu_idle_cpu_busy_secs" {"sum"} (seconds the tree's CPU was busy while its GPUs idled). Only
    the figures the run has: {} without GPUs, or from a library older than 0.19."""
    if not _new_enough(summary):
        return {}
    s = summary.contents
    out = {}
    for k in WORK:
        d = getattr(s, "gpu_" + k)
        if d.mean == d.mean:
            out["gpu_" + k] = {"mean": round(d.mean, 2), "max": round(d.peak, 2)}
    for key, agg, v in (("gpu_work_shared", "max", s.gpu_work_shared), ("process_gpus_busy", "max", s.process_gpus_busy),
                        ("process_gpu_vram_per_gpu_peak_mib", "max", s.process_gpu_vram_per_gpu_peak_mib),
                        ("gpu_idle_cpu_busy_secs", "sum", s.gpu_idle_cpu_busy_secs)):
        if v == v:
            out[key] = {agg: round(v, 2)}
    return out
