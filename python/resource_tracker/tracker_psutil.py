"""tracker_psutil.py - resource-tracker 0.5's `tracker_psutil` module, with the same two
functions, keys, types and units as `tracker_procfs` (see its docstring). In 0.5 these were
answered by psutil; here both modules are answered by the C library (rt_counters_*), so psutil
is not needed and the two modules agree by construction. They differ from 0.5's psutil module
in one figure: memory_used_mib is MemTotal - MemAvailable (as 0.5's procfs module and recent
psutil compute it), where psutil before 5.9.5 gave total - free - buffers - cached.

>>> import os
>>> from resource_tracker import tracker_procfs
>>> sorted(get_process_stats(os.getpid())) == sorted(tracker_procfs.get_process_stats(os.getpid()))
True
"""

from __future__ import annotations

from .tracker_procfs import get_process_stats, get_system_stats

__all__ = ["get_process_stats", "get_system_stats"]
