"""tracker_procfs.py - resource-tracker 0.5's `tracker_procfs` module: a process tree's and
the machine's cumulative counters at the moment of the call, in 0.5's keys, types and units,
read by the C library (rt_counters_tree, rt_counters_system), not by Python.

`get_process_stats(pid, children=True)` gives:
  timestamp (float, Unix time), pid, children (live descendants; None with children=False),
  utime, stime (float seconds since each process started: the root's utime+cutime plus each
  live descendant's; with children=False the root's own utime, stime), memory_mib (float, the
  tree's PSS read now), disk_read_bytes, disk_write_bytes (int, /proc/PID/io summed over the
  tree), gpu_usage (float, busy GPUs 0..count), gpu_vram_mib (float), gpu_utilized (int).
  A pid that is not there gives zeros, as in 0.5.
`get_system_stats()` gives:
  timestamp, processes (int, the process ids in /proc), utime (user+nice), stime (float
  seconds since boot), memory_free_mib, memory_used_mib (total - available),
  memory_buffers_mib, memory_cached_mib (Cached + SReclaimable), memory_active_mib,
  memory_inactive_mib (float MiB), disk_stats {disk: {read_bytes, write_bytes}} (whole
  physical disks, since boot), disk_spaces {mount point: {total, used, free}} (bytes; the
  filesystems on those disks; free is what users may still use, used = total - free),
  net_recv_bytes, net_sent_bytes (int, since boot, loopback left out), gpu_usage,
  gpu_vram_mib, gpu_utilized. A figure the machine does not give is 0, as in 0.5.

>>> import os
>>> s = get_process_stats(os.getpid())
>>> s["pid"] == os.getpid() and s["memory_mib"] > 0 and isinstance(s["disk_read_bytes"], int)
True
>>> get_process_stats(os.getpid(), children=False)["children"] is None
True
>>> get_system_stats()["processes"] > 0
True
"""

from __future__ import annotations

from ._native_reading import process_counters, system_counters

__all__ = ["get_process_stats", "get_system_stats"]


def get_process_stats(pid: int, children: bool = True) -> dict:
    """The tree of pid now (with children, its descendants too): see the module's docstring
    for the keys."""
    return process_counters(pid, children)


def get_system_stats() -> dict:
    """The machine now: see the module's docstring for the keys."""
    return system_counters()
