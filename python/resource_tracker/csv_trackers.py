"""csv_trackers.py - ProcessTracker and SystemTracker: blocking loops that write one CSV row
per interval (the Python tracker 0.5's columns, strings quoted: QUOTE_NONNUMERIC) to stdout or a
file, on a C tracker (rt_tracker_wait for each next sample); PidTracker, the deprecated name
of ProcessTracker."""

from __future__ import annotations

import os
import sys
from time import sleep, time

from ._frames import INT_COLUMNS, PROCESS_COLUMNS, SYSTEM_COLUMNS, alive_prefix, read_rows
from ._native import RT_ERR_NOT_FOUND, NativeError, TrackerHandle, TrackerOptions, byref, lib, new, out_handle


def _csv_value(v, integer: bool):
    if v is None:
        return None
    return int(v) if integer else v


class _CsvLoop:
    """What ProcessTracker and SystemTracker share: the start, the C tracker and the loop."""

    _kind = "system"
    _spec = SYSTEM_COLUMNS

    def _init(self, start_time: float | None, interval: float):
        self.status = "running"
        self.interval = interval
        self.cycle = 0
        self.start_time = time() if start_time is None else start_time

    def __call__(self):
        """Does nothing (the Python tracker's classes are callable)."""

    def _options(self) -> TrackerOptions:
        return new(TrackerOptions, pid=-1, interval_secs=float(self.interval), pss_max_age_secs=30.0)

    def _wait_for_start(self):
        if self.start_time > time():
            sleep(self.start_time - time())

    def start_tracking(self, output_file: str | None = None, print_header: bool = True):
        """Writes a CSV row every interval seconds (the header first) until the tracked
        process exits (ProcessTracker) or forever (SystemTracker), or KeyboardInterrupt."""
        from .helpers import render_csv_row

        handle, ref = out_handle(TrackerHandle)
        err = lib.rt_tracker_start(byref(self._options()), ref)
        if err == RT_ERR_NOT_FOUND:
            raise ProcessLookupError(f"No process with pid {getattr(self, 'pid', None)} to track")
        if err:
            raise NativeError("rt_tracker_start", err)
        h = handle
        out = open(output_file, "wb") if output_file else sys.stdout.buffer
        ints = INT_COLUMNS[self._kind]
        names = [c[0] for c in self._spec]
        try:
            if print_header:
                out.write(render_csv_row(names))
                out.flush()
            done = lib.rt_tracker_count(h)
            while self.status == "running":
                # short waits, so that signals (Ctrl-C) are handled in between
                count = lib.rt_tracker_wait(h, done + 1, min(0.5, self.interval + 0.5))
                if count <= done:
                    continue
                n = count - done
                keep = alive_prefix(h, done, n) if self._kind == "process" else n
                rows = read_rows(h, self._spec, done, keep, getattr(self, "children", True))
                for i in range(keep):
                    self.cycle += 1
                    out.write(render_csv_row([_csv_value(rows[c][i], c in ints) for c in names]))
                out.flush()
                if keep < n:
                    self.status = "exited"
                done = count
        finally:
            lib.rt_tracker_free(h)
            if output_file:
                out.close()


class ProcessTracker(_CsvLoop):
    """Tracks a process (and by default its descendants), writing a CSV row every interval
    seconds to stdout or output_file until the process exits. Columns: timestamp, pid,
    children, utime, stime (CPU seconds in the interval), cpu_usage (cores), memory_mib (PSS
    in MiB), disk_read_bytes, disk_write_bytes (in the interval), gpu_usage, gpu_vram_mib,
    gpu_utilized (the Python tracker 0.5's; 0.4 wrote memory in kB, read_bytes, write_bytes,
    gpu_vram).

    Args:
        pid: Process ID to track. Defaults to the current process.
        start_time: Unix time to start at. Defaults to now.
        interval: Sampling interval in seconds. Defaults to 1.
        children: Whether to track descendants. Defaults to True.
        autostart: Whether to start tracking (blocking) at once. Defaults to True.
        output_file: File to write to. Defaults to None: stdout.
    """

    _kind = "process"
    _spec = PROCESS_COLUMNS

    def __init__(self, pid: int | None = None, start_time: float | None = None,
                 interval: float = 1, children: bool = True, autostart: bool = True,
                 output_file: str | None = None):
        self.pid = os.getpid() if pid is None else int(pid)
        self.children = children
        self._init(start_time, interval)
        if autostart:
            self._wait_for_start()
            self.start_tracking(output_file)

    def _options(self) -> TrackerOptions:
        opts = super()._options()
        opts.pid = 0 if self.pid == os.getpid() else self.pid
        opts.no_children = 0 if self.children else 1
        return opts


class PidTracker(ProcessTracker):
    """Old name of ProcessTracker (deprecated)."""

    def __init__(self, *args, **kwargs):
        from warnings import warn

        warn("PidTracker is deprecated and will be removed in a future release. "
             "Please use ProcessTracker instead.", DeprecationWarning, stacklevel=2)
        super().__init__(*args, **kwargs)


class SystemTracker(_CsvLoop):
    """Tracks the whole machine, writing a CSV row every interval seconds to stdout or
    output_file. Columns: timestamp, processes (runnable), utime, stime (CPU seconds in the
    interval), cpu_usage (cores), memory_free_mib, memory_used_mib, memory_buffers_mib,
    memory_cached_mib, memory_active_mib, memory_inactive_mib (MiB), disk_read_bytes,
    disk_write_bytes (in the interval), disk_space_total_gb, disk_space_used_gb,
    disk_space_free_gb (GB of 1000**3 bytes), net_recv_bytes, net_sent_bytes (in the
    interval), gpu_usage, gpu_vram_mib, gpu_utilized (the Python tracker 0.5's; 0.4 wrote
    memory_* in kB, disk space in GiB, gpu_vram).

    Args:
        start_time: Unix time to start at. Defaults to now.
        interval: Sampling interval in seconds. Defaults to 1.
        autostart: Whether to start tracking (blocking) at once. Defaults to True.
        output_file: File to write to. Defaults to None: stdout.
    """

    def __init__(self, start_time: float | None = None, interval: float = 1,
                 autostart: bool = True, output_file: str | None = None):
        self._init(start_time, interval)
        if autostart:
            self._wait_for_start()
            self.start_tracking(output_file)
