"""tracker.py - gpu_tracker's Tracker (gpu_tracker.tracker.Tracker; docs/contracts.md §14) on
resource-tracker's C tracker: the library samples the process tree and the machine on a thread
of this process and keeps gpu_tracker's view of the run (rt_usage: peaks and means of RAM and
GPU RAM for the main process, its descendants and both; CPU and GPU utilization as sums of
percentages and as shares of the hardware expected to be used), which stop() turns into
gpu_tracker's data classes in the units asked for. While tracking, a thread rewrites
resource_usage_file (JSON, not gpu_tracker's pickle) after the first sample and then every
second (or sleep_time, when longer), so that an interrupted run leaves its figures behind; a
completed run deletes it. With tracking_file, every sample is also written as one of
gpu_tracker 5's timepoint rows, to CSV or SQLite in its layout (the static data first, from the
constructor), by a second thread that reads the samples out of the library's store. A tracked
child that ended unreaped (a command shorter than sleep_time) gets the kernel's figures for it
at stop() (_exit.py, _fold_exit)."""

from __future__ import annotations

import csv
import dataclasses as dclass
import enum
import json
import logging
import math
import os
import sqlite3
import threading
import uuid
import weakref
from ctypes import POINTER, Structure, byref, c_char_p, c_double, c_size_t, c_void_p, cast

from resource_tracker._native import (
    RT_ERR_NOT_FOUND,
    column,
    SAMPLE_FN,
    NativeError,
    TrackerHandle,
    TrackerOptions,
    lib,
    new,
    out_handle,
)
from resource_tracker._energy import energy_of, grid_of, set_grid
from resource_tracker._gpu_work import gpu_work_of
from resource_tracker._native_more import lib as _lib_more  # declares rt_tracker_summary

from ._exit import ExitFigures, exit_figures

_MIN_VERSION_NUM = 0x000800  # rt_usage came with 0.8.0
if lib.rt_version_num() < _MIN_VERSION_NUM:
    raise ImportError(
        f"gpu_tracker needs libresource-tracker 0.8.0 or newer; this one is {lib.rt_version().decode()}"
    )

_RAM_UNITS = {"bytes": 1.0, "kilobytes": 1e-3, "megabytes": 1e-6, "gigabytes": 1e-9, "terabytes": 1e-12}
_TIME_UNITS = {"seconds": 1.0, "minutes": 1 / 60, "hours": 1 / 3600, "days": 1 / 86400}
_MIB = 1048576.0


# ---- gpu_tracker's data classes ------------------------------------------------------------


@dclass.dataclass
class RSSValues:
    """The resident set size (RSS): total = private + shared (each kept as its own peak)."""

    total_rss: float = 0.0
    private_rss: float = 0.0
    shared_rss: float = 0.0


@dclass.dataclass
class MaxRAM:
    """The peak RAM of the machine and of the main process, its descendants and both."""

    unit: str
    system_capacity: float
    system: float = 0.0
    main: RSSValues = dclass.field(default_factory=RSSValues)
    descendants: RSSValues = dclass.field(default_factory=RSSValues)
    combined: RSSValues = dclass.field(default_factory=RSSValues)


@dclass.dataclass
class MaxGPURAM:
    """The peak GPU RAM of all the machine's GPUs and of the main process, its descendants and both."""

    unit: str
    system_capacity: float
    system: float = 0.0
    main: float = 0.0
    descendants: float = 0.0
    combined: float = 0.0


@dclass.dataclass
class ProcessingUnitPercentages:
    """Utilization: the sum of the units' percentages and that sum divided by the units
    expected to be used (hardware), each as its peak and its mean over the run."""

    max_sum_percent: float = 0.0
    max_hardware_percent: float = 0.0
    mean_sum_percent: float = 0.0
    mean_hardware_percent: float = 0.0


@dclass.dataclass
class CPUUtilization:
    """Core counts, core utilization of the machine and of the parts, and peak thread counts."""

    system_core_count: int
    n_expected_cores: int
    system: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    main: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    descendants: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    combined: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)
    main_n_threads: int = 0
    descendants_n_threads: int = 0
    combined_n_threads: int = 0


@dclass.dataclass
class GPUUtilization:
    """GPU counts and the utilization of the GPUs tracked (gpu_uuids)."""

    system_gpu_count: int
    n_expected_gpus: int
    gpu_percentages: ProcessingUnitPercentages = dclass.field(default_factory=ProcessingUnitPercentages)


@dclass.dataclass
class ComputeTime:
    """The wall-clock time tracked."""

    unit: str
    time: float = 0.0


@dclass.dataclass
class ResourceUsage:
    """The resource usage of a tracked run.

    energy (not in gpu_tracker, so not a dataclass field: to_json(), str(), == and the fields
    stay gpu_tracker's): the run's energy from the C library 0.15, the dict of
    ResourceTracker.stats(energy=True)["energy"] (the machine's and the job's joules with their
    methods, power, idle floor, the GPUs' power and thermal throttle seconds, carbon with
    TRACKER_GRID_ZONE or TRACKER_GRID_INTENSITY); None without energy or with an older library.

    gpu_work (0.19, likewise an attribute): what the tracked GPUs did as NVML's GPM measured it
    (Hopper and newer): `summary --json`'s "gpu_work" ({sm_active_pct, sm_occupancy_pct,
    tensor_active_pct, dram_active_pct, fp64_active_pct, fp32_active_pct, fp16_active_pct: percent,
    pcie_bytes_per_sec, nvlink_bytes_per_sec: each {mean, peak, p50, p95}}, shared: True when the
    figures were the devices', shared with other processes); None where the GPUs give no such
    figure (then to_json() and str() are gpu_tracker's exactly) or with an older library."""

    max_ram: MaxRAM
    max_gpu_ram: MaxGPURAM
    cpu_utilization: CPUUtilization
    gpu_utilization: GPUUtilization
    compute_time: ComputeTime
    energy = None  # no annotation: an attribute, not a field (see above)
    gpu_work = None  # likewise


# ---- the library's rt_usage ---------------------------------------------------------------


class _Pct(Structure):
    _fields_ = [("max_sum_pct", c_double), ("max_hardware_pct", c_double),
                ("mean_sum_pct", c_double), ("mean_hardware_pct", c_double)]


class _Rss(Structure):
    _fields_ = [("total_mib", c_double), ("private_mib", c_double), ("shared_mib", c_double)]


class _Usage(Structure):
    _fields_ = [
        ("duration_secs", c_double),
        ("ram_capacity_mib", c_double), ("ram_system_peak_mib", c_double), ("ram_system_mean_mib", c_double),
        ("ram_peak", _Rss * 3), ("ram_mean", _Rss * 3),
        ("gpu_ram_capacity_mib", c_double), ("gpu_ram_system_peak_mib", c_double),
        ("gpu_ram_system_mean_mib", c_double),
        ("gpu_ram_peak_mib", c_double * 3), ("gpu_ram_mean_mib", c_double * 3),
        ("system_core_count", c_double), ("expected_cores", c_double),
        ("cpu_system", _Pct), ("cpu", _Pct * 3), ("threads_peak", c_double * 3),
        ("system_gpu_count", c_double), ("expected_gpus", c_double), ("gpu", _Pct),
    ]


class _Gpu(Structure):  # rt_gpu's first fields: read through pointers only
    _fields_ = [("uuid", c_char_p)]


class _Sample(Structure):  # rt_sample up to its GPU list: read through a pointer only
    _fields_ = [
        ("timestamp_secs", c_double), ("interval_secs", c_double), ("cpu", c_void_p), ("memory", c_void_p),
        ("network", c_void_p), ("network_count", c_size_t), ("disk", c_void_p), ("disk_count", c_size_t),
        ("gpu", POINTER(POINTER(_Gpu))), ("gpu_count", c_size_t),
    ]


def _num(v: float) -> float:
    """A library figure as gpu_tracker shows it: 0.0 where the machine reported nothing."""
    return 0.0 if v is None or math.isnan(v) else float(v)


def _count(v: float) -> int:
    return 0 if v is None or math.isnan(v) else int(round(v))


def _pct(p: _Pct) -> ProcessingUnitPercentages:
    return ProcessingUnitPercentages(_num(p.max_sum_pct), _num(p.max_hardware_pct), _num(p.mean_sum_pct),
                                     _num(p.mean_hardware_pct))


def _machine(nvml_library: str | None) -> tuple[list[str], dict[str, float]]:
    """The uuids of the machine's GPUs and its static figures (memory_total_mib, cpu_count,
    gpu_count, gpu_vram_total_mib), from one sample of a short-lived machine-only tracker."""
    found: list[str] = []
    figures: dict[str, float] = {}

    def on_sample(_user, sample):
        s = cast(sample, POINTER(_Sample)).contents
        for i in range(s.gpu_count):
            u = s.gpu[i].contents.uuid
            if u:
                found.append(u.decode("utf-8", "replace"))

    cb = SAMPLE_FN(on_sample)
    opts = new(TrackerOptions, pid=-1, interval_secs=0.01, max_samples=2, pss_max_age_secs=30.0,
               nvml_library=nvml_library.encode() if nvml_library else None, on_sample=cb)
    handle, ref = out_handle(TrackerHandle)
    err = lib.rt_tracker_start(byref(opts), ref)
    if err:
        raise NativeError("rt_tracker_start", err)
    try:
        lib.rt_tracker_wait(handle, 1, 5.0)
        lib.rt_tracker_stop(handle)
        last = lib.rt_tracker_count(handle) - 1
        for name in ("memory_total_mib", "cpu_count", "gpu_count", "gpu_vram_total_mib"):
            v = c_double(math.nan)
            lib.rt_tracker_column(handle, column(name), last, 1, byref(v))
            figures[name] = v.value
    finally:
        lib.rt_tracker_free(handle)
    return sorted(set(found)), figures


# ---- the tracking file: gpu_tracker 5's static data and timepoint rows ------------------------

# the static data's fields and the timepoint row's, in gpu_tracker's order
_STATIC_FIELDS = ("ram_unit", "gpu_ram_unit", "time_unit", "ram_system_capacity", "gpu_ram_system_capacity",
                  "system_core_count", "n_expected_cores", "system_gpu_count", "n_expected_gpus")
_ROW_FIELDS = (
    "main_ram", "descendants_ram", "combined_ram", "system_ram", "main_gpu_ram", "descendants_gpu_ram",
    "combined_gpu_ram", "system_gpu_ram", "gpu_sum_utilization_percent", "gpu_hardware_utilization_percent",
    "main_n_threads", "descendants_n_threads", "combined_n_threads", "cpu_system_sum_utilization_percent",
    "cpu_system_hardware_utilization_percent", "cpu_main_sum_utilization_percent",
    "cpu_main_hardware_utilization_percent", "cpu_descendants_sum_utilization_percent",
    "cpu_descendants_hardware_utilization_percent", "cpu_combined_sum_utilization_percent",
    "cpu_combined_hardware_utilization_percent", "timestamp",
)
# the store's columns a row is made of (rt_column_name's names)
_ROW_COLUMNS = (
    "timestamp", "cpu_cores", "memory_used_mib", "gpu_usage", "gpu_vram_mib", "process_children",
    "main_total_rss_mib", "main_cores", "main_threads", "main_gpu_vram_mib",
    "descendants_total_rss_mib", "descendants_cores", "descendants_threads", "descendants_gpu_vram_mib",
    "combined_total_rss_mib", "combined_cores", "combined_threads", "combined_gpu_vram_mib", "process_alive",
)
_SQL_TYPES = {str: "VARCHAR", int: "INTEGER", float: "FLOAT"}  # the DDL gpu_tracker's SQLAlchemy writes


class _TrackingFile:
    """One tracking file in gpu_tracker 5's layout. CSV (excel dialect, lines end in \\r\\n):
    the static data's header and values, then the timepoints' header and one line a timepoint,
    each value as str() writes it. SQLite: the tables static_data (one row) and data, each
    created with column types taken from its first row's Python types. Both are appended to
    file-open by file-open, so that the file is whole between two writes."""

    def __init__(self, path: str):
        self.path = path
        self.sqlite = path.endswith(".sqlite")
        self.has_rows = False

    def write_static(self, values: dict) -> None:
        self._write("static_data", values.keys(), [list(values.values())], create=True)

    def write_rows(self, rows: list[list]) -> None:
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"The file {self.path} was removed in the middle of writing data to it.")
        self._write("data", _ROW_FIELDS, rows, create=not self.has_rows)
        self.has_rows = True

    def _write(self, table, names, rows, create):
        if self.sqlite:
            con = sqlite3.connect(self.path)
            try:
                if create:
                    cols = ", \n\t".join(f"{n} {_SQL_TYPES[type(v)]}" for n, v in zip(names, rows[0]))
                    con.execute(f"CREATE TABLE {table} (\n\t{cols}\n)")
                marks = ",".join("?" * len(rows[0]))
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
                con.commit()
            finally:
                con.close()
            return
        with open(self.path, "a", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            if create:
                w.writerow(names)
            w.writerows(rows)


class _RowWriter(threading.Thread):
    """Writes every sample of the C tracker to the tracking file as a gpu_tracker timepoint row:
    the samples taken since the last write, at most once a second (each write opens the file,
    and SQLite's commit syncs it: a row at a time would cost several times the sample), waiting
    in the library (GIL released); the last ones once the tracker stopped (the Tracker sets
    stop_event before rt_tracker_stop and joins after it). A file that cannot be written stops
    the rows, never the tracking (a warning says why, unless logs are disabled). It holds no
    reference to the Tracker."""

    EVERY = 1.0  # seconds between two writes at least

    def __init__(self, native, out: _TrackingFile, scale: dict, warn):
        super().__init__(name="gpu_tracker-tracking-file", daemon=True)
        self.native, self.out, self.scale, self.warn = native, out, scale, warn
        self.stop_event = threading.Event()
        self.final = threading.Event()  # set (with fold) once the tracker's last sample is in
        self.fold = _ExitFold()
        self.next = 0

    def run(self):
        handle = self.native.tracker
        while handle is not None:
            n = lib.rt_tracker_wait(handle, self.next + 1, 0.5)
            if self.stop_event.is_set():  # the rest, once the tracker stopped and `final` is set
                self.final.wait()
                n = lib.rt_tracker_count(handle)
                if n > self.next:
                    self.write(handle, n, last=True)
                return
            if n > self.next and not self.write(handle, n):
                return
            self.stop_event.wait(self.EVERY)

    def write(self, handle, n, last=False) -> bool:
        """Writes the rows of samples self.next to n - 1. While tracking, the rows from the
        first sample that found the tracked process ended are held back until the last write
        (last=True), where that row takes self.fold: the kernel's figures for a command that
        ended unreaped (see _fold_exit), which the row after its end carries."""
        first = max(self.next, lib.rt_tracker_first(handle))
        count = n - first
        cols = {}
        for name in _ROW_COLUMNS:
            buf = (c_double * count)()
            got = lib.rt_tracker_column(handle, column(name), first, count, buf)
            cols[name] = buf[:got]
        count = min(len(v) for v in cols.values())
        ended = [a == 0.0 for a in cols["process_alive"][:count]]  # NaN (unknown) is not 0
        end = ended.index(True) if True in ended else None
        if not last and end is not None:
            count = end  # held back from the first row after the process ended
        self.next = first + count
        samples = [{k: v[i] for k, v in cols.items()} for i in range(count)]
        fold = self.fold if last and end is not None else None
        if fold is not None:  # the CPU over the command's life, shared as the sample shared it
            samples[end]["main_cores"] *= fold.cpu_scale
            samples[end]["descendants_cores"] *= fold.cpu_scale
        rows = [self.row(c) for c in samples]
        if fold is not None:
            for i, v in fold.raise_to.items():
                rows[end][i] = max(rows[end][i], v)
        try:
            if rows:
                self.out.write_rows(rows)
        except Exception as e:  # a file that cannot be written never stops the tracking
            self.warn(f"The tracking file {self.out.path} could not be written: {e}")
            return False
        return True

    def row(self, c: dict) -> list:
        """One sample as gpu_tracker's timepoint row: RAM in ram_unit, GPU RAM in gpu_ram_unit,
        utilization as sums of percentages and as those sums over the units expected; thread
        counts are ints, and so is a CPU sum over no process (gpu_tracker's sum of nothing)."""
        k = self.scale
        ram, gram = k["ram"], k["gpu_ram"]
        row = [_num(c["main_total_rss_mib"]) * ram, _num(c["descendants_total_rss_mib"]) * ram,
               _num(c["combined_total_rss_mib"]) * ram, _num(c["memory_used_mib"]) * ram,
               _num(c["main_gpu_vram_mib"]) * gram, _num(c["descendants_gpu_vram_mib"]) * gram,
               _num(c["combined_gpu_vram_mib"]) * gram, _num(c["gpu_vram_mib"]) * gram]
        gpu = _num(c["gpu_usage"]) * 100.0
        row += [gpu, gpu / k["gpus"] if k["gpus"] else 0.0]
        row += [_count(c["main_threads"]), _count(c["descendants_threads"]), _count(c["combined_threads"])]
        system = _num(c["cpu_cores"]) * 100.0
        row += [system, system / k["system_cores"] if k["system_cores"] else 0.0]
        # main's own CPU, the descendants' (live and reaped: the library's split) and their sum,
        # so that combined = main + descendants in every row, as in gpu_tracker's; the
        # descendants' is the int 0 where there were none (gpu_tracker's sum of nothing)
        main = _num(c["main_cores"]) * 100.0
        desc = _num(c["descendants_cores"]) * 100.0
        if desc == 0.0 and _count(c["process_children"]) == 0:
            desc = 0
        for total in (main, desc, main + desc):
            row += [total, total / k["cores"] if k["cores"] else 0.0]
        row.append(_num(c["timestamp"]))
        return row


# The C trackers of this process's started Trackers: a SubTracker's block is also a phase of
# each (rt_tracker_phase_start/stop), under _running_lock so that no tracker is freed while
# it is marked.
_running_lock = threading.Lock()
_running: set = set()


def mark_phase(start: bool, name: bytes) -> None:
    """Marks name (valid phase-name bytes) as a phase's start or stop in every C tracker this
    process's Trackers run; never raises (a library older than 0.14 has no phases)."""
    fn = lib.rt_tracker_phase_start if start else lib.rt_tracker_phase_stop
    if not _running or not hasattr(fn, "argtypes"):
        return
    with _running_lock:
        for native in _running:
            if native.tracker is not None:
                fn(native.tracker, name)  # refusals are the library's to count


class _Native:
    """The C tracker, what it must outlive (the uuid array), and the backup thread. Freed by
    weakref.finalize of the Tracker (from whatever thread drops it last, or the collector's):
    the backup thread is stopped and joined first, then the C tracker is freed."""

    __slots__ = ("tracker", "keep", "backup", "writer")

    def __init__(self):
        self.tracker = None
        self.keep = []
        self.backup = None
        self.writer = None

    def stop_backup(self):
        b, self.backup = self.backup, None
        if b is not None:
            b.stop_event.set()
            if b is not threading.current_thread():
                b.join()

    def stop_tracker(self):
        """Stops the C tracker (its last sample; this also ends a wait of the backup thread,
        told to stop first); the row writer waits for finish_writer."""
        if self.backup is not None:
            self.backup.stop_event.set()
        if self.writer is not None:
            self.writer.stop_event.set()
        if self.tracker is not None:
            lib.rt_tracker_stop(self.tracker)

    def finish_writer(self, fold=None):
        """Lets the row writer write the rest (with fold, an _ExitFold, applied to the row
        after the tracked command's end) and joins it."""
        w, self.writer = self.writer, None
        if w is not None:
            if fold is not None:
                w.fold = fold
            w.final.set()
            if w is not threading.current_thread():
                w.join()

    def stop_writer(self):
        """Stops the C tracker (its last sample) and lets the row writer write the rest."""
        self.stop_tracker()
        self.finish_writer()

    def close(self):
        self.stop_backup()
        self.stop_writer()
        with _running_lock:
            _running.discard(self)
            t, self.tracker = self.tracker, None
        if t is not None:
            lib.rt_tracker_free(t)


def _resource_usage(handle, ram_unit, gpu_ram_unit, time_unit, n_expected_cores) -> ResourceUsage:
    """The C tracker's usage so far as gpu_tracker's data classes, in the units asked for."""
    s = _lib_more.rt_tracker_summary(handle)
    if not s or not s.contents.usage:
        return _empty_usage(ram_unit, gpu_ram_unit, time_unit, n_expected_cores)
    u = cast(s.contents.usage, POINTER(_Usage)).contents
    energy = energy_of(s)  # before the figures below: read from the same summary copy
    gpu_work = gpu_work_of(s)
    ram = _RAM_UNITS[ram_unit] * _MIB
    gram = _RAM_UNITS[gpu_ram_unit] * _MIB
    parts = [RSSValues(_num(r.total_mib) * ram, _num(r.private_mib) * ram, _num(r.shared_mib) * ram) for r in u.ram_peak]
    cores = _count(u.system_core_count)
    expected = n_expected_cores if n_expected_cores is not None else cores
    usage = ResourceUsage(
        max_ram=MaxRAM(ram_unit, _num(u.ram_capacity_mib) * ram, _num(u.ram_system_peak_mib) * ram,
                       parts[0], parts[1], parts[2]),
        max_gpu_ram=MaxGPURAM(gpu_ram_unit, _num(u.gpu_ram_capacity_mib) * gram, _num(u.gpu_ram_system_peak_mib) * gram,
                              _num(u.gpu_ram_peak_mib[0]) * gram, _num(u.gpu_ram_peak_mib[1]) * gram,
                              _num(u.gpu_ram_peak_mib[2]) * gram),
        cpu_utilization=CPUUtilization(cores, expected, _pct(u.cpu_system), _pct(u.cpu[0]), _pct(u.cpu[1]),
                                       _pct(u.cpu[2]), _count(u.threads_peak[0]), _count(u.threads_peak[1]),
                                       _count(u.threads_peak[2])),
        gpu_utilization=GPUUtilization(_count(u.system_gpu_count), _count(u.expected_gpus), _pct(u.gpu)),
        compute_time=ComputeTime(time_unit, _num(u.duration_secs) * _TIME_UNITS[time_unit]),
    )
    usage.energy = energy
    usage.gpu_work = gpu_work
    return usage


# the tracking file's row: the indexes of main_ram, descendants_ram, combined_ram and the threads
_ROW_RAM = {"main": 0, "descendants": 1, "combined": 2}
_ROW_THREADS = {"main": 10, "descendants": 11, "combined": 12}


@dclass.dataclass
class _ExitFold:
    """What _fold_exit changed, for the tracking file's row of the first sample that found the
    command ended: its parts' CPU multiplied by cpu_scale, figures raised to raise_to's
    ({row index: figure})."""

    cpu_scale: float = 1.0
    raise_to: dict = dclass.field(default_factory=dict)


def _fold_exit(usage: ResourceUsage, ended: ExitFigures, ram_unit: str, handle,
               seen_peak_bytes: int | None = None) -> _ExitFold:
    """Brings usage to what the kernel kept for a tracked command that ended unreaped
    (_exit.exit_figures), for a command shorter than the time between two samples, which no
    sample saw running; returns the same change for the tracking file's row of the first
    sample that found it ended (the row after its end), so that the rows keep adding up and
    every maximum stays that of its rows. Nothing changes when no kept sample found it ended
    (the last one saw it just before its end, the stop sample then coming too soon to be taken).

    CPU, when no sample saw the command running and nothing of its tree ran after: the first
    sample's parts (the zombie's own and reaped children's CPU times since the tracker's
    baseline, split as main and descendants) are scaled to the kernel's figure over its whole
    life, ru_utime + ru_stime over the seconds from its start to that sample (or to now, when
    earlier): the tracker's baseline comes after the command started, and on a loaded machine
    the two stretches' rates can differ by half. Every part's peak and mean scale alike, the
    later samples' parts being 0.

    RAM: ru_maxrss is the largest peak RSS of the command or of one descendant it reaped (not
    used where it may be this process's own: see _exit); when it exceeds both parts' sampled
    peaks, it is the peak of main when the command had no descendants (no CPU ticks reaped
    from children, none sampled), otherwise of the part that used more CPU (the kernel keeps
    one figure for both: a shell script's peak is its job's, a program's that runs a small
    helper its own); combined is raised to it too. Private and shared keep their sampled
    peaks (the kernel does not split its figure). Threads: a command that no sample saw
    running had one thread at least: main and combined 1."""
    fold = _ExitFold()
    first, n = lib.rt_tracker_first(handle), lib.rt_tracker_count(handle)
    cols = {}
    for name in ("process_alive", "timestamp", "combined_cores"):
        buf = (c_double * (n - first))()
        cols[name] = buf[:lib.rt_tracker_column(handle, column(name), first, n - first, buf)]
    ended_at = [i for i, a in enumerate(cols["process_alive"]) if a == 0.0]  # NaN: unknown, not 0
    if not ended_at:
        return fold
    ram = usage.max_ram
    cpu = usage.cpu_utilization
    scale = _life_cpu_scale(ended, cols) if first == 0 and ended_at[0] == 0 else None
    if scale is not None:
        fold.cpu_scale = scale
        for part in (cpu.main, cpu.descendants, cpu.combined):
            part.max_sum_percent *= scale
            part.max_hardware_percent *= scale
            part.mean_sum_percent *= scale
            part.mean_hardware_percent *= scale
    peak_bytes = ended.peak_rss_bytes
    if peak_bytes is None:  # ru_maxrss may be this process's: the kernel's VmHWM of the tree's
        # processes, read while they lived (the library's process_rss_hwm_mib; gpu-tracker's own
        # first readings), is theirs: a command shorter than the sleep time still has its own
        # peak (`sleep 0.3`: 1.6 MB), a lower bound
        seen = max(_column_max(handle, "process_rss_hwm_mib") * _MIB, float(seen_peak_bytes or 0))
        peak_bytes = seen if seen > 0 else None
    peak = -1.0 if peak_bytes is None else peak_bytes * _RAM_UNITS[ram_unit]
    had_descendants = (ended.children_ticks > 0 or ram.descendants.total_rss > 0
                       or cpu.descendants.max_sum_percent > 0 or cpu.descendants_n_threads > 0)
    if peak > max(ram.main.total_rss, ram.descendants.total_rss):
        part = "descendants" if had_descendants and ended.children_ticks > ended.own_ticks else "main"
        getattr(ram, part).total_rss = peak
        ram.combined.total_rss = max(ram.combined.total_rss, peak)
        fold.raise_to[_ROW_RAM[part]] = fold.raise_to[_ROW_RAM["combined"]] = peak
    if cpu.combined_n_threads == 0:
        cpu.main_n_threads = cpu.combined_n_threads = 1
        fold.raise_to[_ROW_THREADS["main"]] = fold.raise_to[_ROW_THREADS["combined"]] = 1
    return fold


def _column_max(handle, name: str) -> float:
    """The largest figure of the tracker's column name over its kept samples; 0.0 when it
    has none (NaN where unknown)."""
    first, n = lib.rt_tracker_first(handle), lib.rt_tracker_count(handle)
    if n <= first:
        return 0.0
    buf = (c_double * (n - first))()
    got = lib.rt_tracker_column(handle, column(name), first, n - first, buf)
    return max((v for v in buf[:got] if v == v), default=0.0)


def _life_cpu_scale(ended: ExitFigures, cols: dict) -> float | None:
    """The factor that turns the first sample's combined CPU (a sample that found the command
    ended) into the command's over its life (see _fold_exit); None when a later sample saw
    its tree use CPU (descendants that outlived it), or the figures are not there."""
    if any(v > 0 for v in cols["combined_cores"][1:]):  # NaN compares False: nothing there
        return None
    seen = cols["combined_cores"][0] * 100.0
    end = ended.boot_now - max(0.0, ended.real_now - cols["timestamp"][0])  # that sample (boot clock), or now
    life = end - ended.start_secs
    if not (seen > 0 and life > 0):
        return None
    return 100.0 * ended.cpu_secs / life / seen


def _empty_usage(ram_unit, gpu_ram_unit, time_unit, n_expected_cores) -> ResourceUsage:
    cores = os.cpu_count() or 0
    return ResourceUsage(MaxRAM(ram_unit, 0.0), MaxGPURAM(gpu_ram_unit, 0.0),
                         CPUUtilization(cores, n_expected_cores or cores), GPUUtilization(0, 0), ComputeTime(time_unit))


class _Backup(threading.Thread):
    """Rewrites resource_usage_file while tracking: after the first sample, then every
    `every` seconds (a rewrite costs a fraction of a millisecond of CPU). A Python thread of
    its own, not a callback on the library's thread: a callback from a thread Python did not
    start costs more than the sample it follows, and one that runs while a sample is taken
    would block a fork(2) in another thread. It holds no reference to the Tracker."""

    def __init__(self, native, path, units, every):
        super().__init__(name="gpu_tracker-backup", daemon=True)
        self.native, self.path, self.units, self.every = native, path, units, every
        self.stop_event = threading.Event()

    def run(self):
        handle = self.native.tracker
        while handle is not None and not self.stop_event.is_set() and lib.rt_tracker_count(handle) == 0:
            lib.rt_tracker_wait(handle, 1, 0.2)  # the first sample, in short waits
        while handle is not None and not self.stop_event.is_set():
            self.write(handle)
            self.stop_event.wait(self.every)

    def write(self, handle):
        try:
            data = json.dumps(dclass.asdict(_resource_usage(handle, *self.units)))
            tmp = f"{self.path}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except Exception:  # a backup that cannot be written never stops the tracking
            pass


class Tracker:
    """Tracks the RAM, GPU RAM, CPU and GPU utilization of a process and its descendants, and of
    the machine, from start() (or entering the context manager) to stop() (or leaving it).

    gpu_tracker's Tracker on resource-tracker's C library: no tracking process is started; a
    thread of this process samples every `sleep_time` seconds on a fixed grid. Where it
    differs from gpu_tracker:
      - RAM comes from the kernel's smaps_rollup (private = Private_Clean + Private_Dirty;
        shared = pages other processes map too, counted once as far as the rollups tell: see
        docs/accounting.md), read under the PSS freshness rule rather than by walking every mapping;
      - GPU RAM is the driver's bytes converted exactly (gpu_tracker reads nvidia-smi's MiB as
        megabytes); like gpu_tracker, gpu_uuids chooses only the GPUs whose utilization counts;
      - means are weighted by the seconds each sample covers;
      - resource_usage_file is a JSON file (to_json()'s shape), not a pickle, rewritten after
        the first sample and then every second (or sleep_time, when longer); its default
        name is .gpu-tracker_<uuid>.json;
      - n_join_attempts and join_timeout are accepted for compatibility: stopping joins a
        thread of this process, which ends within one sample;
      - gpu_brand is checked ("nvidia", "amd" or None) but the library reads NVIDIA GPUs
        through NVML and AMD GPUs through the kernel's DRM files either way;
      - when tracking the calling process, the library's own sampling thread is one of main's
        threads and its (small) CPU time is part of main's;
      - a tracked process that is an ended, unreaped child of this process at stop() (stop
        once it ended, before Popen.wait(), as the gpu-tracker command does) gets the
        kernel's figures for it where no sample saw it running (_fold_exit);
      - tracking_file gets one row per sample of the library's grid (the first one sleep_time
        after start, the last one at stop) rather than one per gpu_tracker loop, those from
        the first sample that found the tracked process ended written at stop(); its
        per-row GPU utilization is the sum over all the machine's GPUs even when gpu_uuids
        chooses some (the store keeps the machine's sum), while resource_usage counts the
        chosen ones only.

    Raises:
        ValueError: invalid sleep_time (below 0.1 seconds, as gpu_tracker, or above a day), units,
            tracking_file name (neither .csv nor .sqlite), gpu_brand, gpu_uuids or n_expected_cores.
        FileExistsError: tracking_file exists and overwrite is False (the static data is written
            by the constructor, as gpu_tracker does).
    """

    class State(enum.Enum):
        """The state of the Tracker."""

        NEW = 0
        STARTED = 1
        STOPPED = 2

    def __init__(
        self,
        sleep_time: float = 1.0,
        ram_unit: str = "gigabytes",
        gpu_ram_unit: str = "gigabytes",
        time_unit: str = "hours",
        n_expected_cores: int = None,
        gpu_uuids: set[str] = None,
        disable_logs: bool = False,
        process_id: int = None,
        resource_usage_file: str | None = None,
        n_join_attempts: int = 5,
        join_timeout: float = 10.0,
        gpu_brand: str | None = None,
        tracking_file: str | None = None,
        overwrite: bool = False,
    ):
        # gpu_tracker's checks, in its order: sleep_time, the units, the tracking file's name,
        # the GPU brand, the GPU uuids; then ours (n_expected_cores); then the static data
        if not isinstance(sleep_time, (int, float)) or sleep_time < 0.1:
            raise ValueError(f"Sleep time of {sleep_time} is invalid. Must be at least 0.1 seconds.")
        if sleep_time > 86400:
            raise ValueError(f"Sleep time of {sleep_time} is invalid. Must be at most 86400 seconds (a day).")
        _check_unit(ram_unit, _RAM_UNITS, "RAM")
        _check_unit(gpu_ram_unit, _RAM_UNITS, "GPU RAM")
        _check_unit(time_unit, _TIME_UNITS, "time")
        if tracking_file is not None and not os.fspath(tracking_file).endswith((".csv", ".sqlite")):
            raise ValueError(
                f'Invalid file name: "{tracking_file}". Valid file extensions are ".csv" and ".sqlite".')
        if gpu_brand is not None and gpu_brand not in ("nvidia", "amd"):
            raise ValueError(f'"{gpu_brand}" is not a valid GPU brand. Supported values are "nvidia" and "amd".')
        self._nvml_library = os.environ.get("TRACKER_NVML_LIBRARY") or None
        machine = None
        self.gpu_uuids = None
        if gpu_uuids is not None:
            gpu_uuids = set(gpu_uuids)
            if not gpu_uuids:
                raise ValueError(
                    "gpu_uuids is not None but the set is empty. Please provide a set of at least one GPU UUID."
                )
            machine = _machine(self._nvml_library)
            available = machine[0]
            for u in sorted(gpu_uuids):
                if u not in available:
                    raise ValueError(f"GPU UUID of {u} is not valid. Available UUIDs are: {', '.join(available)}")
            self.gpu_uuids = gpu_uuids
        if n_expected_cores is not None and not (isinstance(n_expected_cores, (int, float)) and n_expected_cores > 0):
            raise ValueError(f"n_expected_cores of {n_expected_cores} is invalid. Must be a number above 0.")
        self.sleep_time = float(sleep_time)
        self.ram_unit, self.gpu_ram_unit, self.time_unit = ram_unit, gpu_ram_unit, time_unit
        self.n_expected_cores = n_expected_cores
        self.disable_logs = disable_logs
        self.process_id = os.getpid() if process_id is None else int(process_id)
        self.n_join_attempts = n_join_attempts
        self.join_timeout = join_timeout
        self.gpu_brand = gpu_brand
        self.resource_usage_file = (
            resource_usage_file if resource_usage_file is not None else f".gpu-tracker_{uuid.uuid1()}.json"
        )
        self.tracking_file = tracking_file
        self.overwrite = overwrite
        self._tracking_file = None
        self._scale = None
        if tracking_file is not None:
            self._open_tracking_file(machine or _machine(self._nvml_library))
        self.resource_usage: ResourceUsage | None = None
        self.state = Tracker.State.NEW
        self._native = _Native()
        # the largest VmHWM of the command's own image that gpu-tracker --execute read in its
        # first moments (_exit.early_peak), bytes; None: not read
        self._seen_peak_bytes = None
        weakref.finalize(self, self._native.close)  # a tracker never stopped: its thread ends

    def __repr__(self):
        return f"State: {self.state.name}"

    # ---- running -------------------------------------------------------------------------

    def __enter__(self) -> Tracker:
        if self.state == Tracker.State.STARTED:
            raise RuntimeError("Cannot start tracking when tracking has already started.")
        if self.state == Tracker.State.STOPPED:
            raise RuntimeError("Cannot start tracking when tracking has already stopped.")
        self.state = Tracker.State.STARTED
        self._start_native()
        return self

    def __exit__(self, *exc):
        if self.state == Tracker.State.NEW:
            raise RuntimeError("Cannot stop tracking when tracking has not started yet.")
        if self.state == Tracker.State.STOPPED:
            raise RuntimeError("Cannot stop tracking when tracking has already stopped.")
        t = self._native.tracker
        if t is not None:
            # a tracked child that ended and waits to be reaped: the kernel's figures for it,
            # read before the last sample (which then sees the zombie's CPU times)
            ended = exit_figures(self.process_id) if self.process_id != os.getpid() else None
            fold = None
            try:
                self._native.stop_tracker()  # one last sample (the thread joins within it)
                self._native.stop_backup()  # before the last figures: one summary at a time
                self.resource_usage = _resource_usage(t, *self._units())
                if ended is not None:
                    fold = _fold_exit(self.resource_usage, ended, self.ram_unit, t, self._seen_peak_bytes)
            finally:
                self._native.finish_writer(fold)  # the last rows
        else:  # the process was gone before tracking began
            self._native.stop_backup()
            self.resource_usage = _empty_usage(*self._units())
        self._native.close()
        self._native.keep = []
        try:
            os.remove(self.resource_usage_file)
        except OSError:
            pass
        self.state = Tracker.State.STOPPED

    def start(self):
        """Begins tracking until stop() is called. Equivalent to entering the context manager."""
        self.__enter__()

    def stop(self):
        """Stops tracking. Equivalent to exiting the context manager."""
        self.__exit__(None, None, None)

    def _warn(self, msg: str) -> None:
        if not self.disable_logs:
            logging.warning(msg)

    def _start_native(self) -> None:
        keep = self._native.keep
        uuids = sorted(self.gpu_uuids) if self.gpu_uuids else []
        arr = (c_char_p * max(len(uuids), 1))(*[u.encode() for u in uuids])
        # No Python callback on the library's thread (no log, no on_sample): one called while
        # a sample is being taken would wait for the GIL that a fork(2) in another thread holds
        # while it waits for the sample to end. The backup is a Python thread of its own.
        keep.append(arr)
        own = self.process_id == os.getpid()
        opts = new(TrackerOptions, pid=0 if own else self.process_id, interval_secs=self.sleep_time,
                   pss_max_age_secs=30.0,
                   expected_cores=float(self.n_expected_cores or 0), gpu_uuids=cast(arr, POINTER(c_char_p)),
                   gpu_uuid_count=len(uuids),
                   nvml_library=self._nvml_library.encode() if self._nvml_library else None)
        handle, ref = out_handle(TrackerHandle)
        err = lib.rt_tracker_start(byref(opts), ref)
        if err == RT_ERR_NOT_FOUND and not own:
            self._warn(f"The target process of ID {self.process_id} ended before tracking could begin.")
            return
        if err:
            raise NativeError("rt_tracker_start", err)
        self._native.tracker = handle
        set_grid(handle, grid_of(None, None))  # TRACKER_GRID_ZONE / _INTENSITY: the carbon's grid
        with _running_lock:
            _running.add(self._native)
        self._native.backup = _Backup(self._native, self.resource_usage_file, self._units(),
                                      max(1.0, self.sleep_time))
        self._native.backup.start()
        if self._tracking_file is not None:
            self._native.writer = _RowWriter(self._native, self._tracking_file, self._scale, self._warn)
            self._native.writer.start()

    def _open_tracking_file(self, machine) -> None:
        """Checks tracking_file against overwrite and writes its static data (gpu_tracker does
        both in its constructor): an existing file is FileExistsError unless overwrite."""
        uuids, fig = machine
        path = os.fspath(self.tracking_file)
        if os.path.isfile(path):
            if not self.overwrite:
                raise FileExistsError(f"File {path} already exists. Set overwrite to True to overwrite the existing file.")
            os.remove(path)
        ram = _RAM_UNITS[self.ram_unit] * _MIB
        gram = _RAM_UNITS[self.gpu_ram_unit] * _MIB
        cores = _count(fig["cpu_count"]) or (os.cpu_count() or 0)
        expected = self.n_expected_cores if self.n_expected_cores is not None else cores
        gpus = max(_count(fig["gpu_count"]), len(uuids))
        expected_gpus = len(self.gpu_uuids) if self.gpu_uuids else gpus
        self._scale = {"ram": ram, "gpu_ram": gram, "system_cores": cores, "cores": expected, "gpus": expected_gpus}
        self._tracking_file = _TrackingFile(path)
        self._tracking_file.write_static(dict(zip(_STATIC_FIELDS, (
            self.ram_unit, self.gpu_ram_unit, self.time_unit, _num(fig["memory_total_mib"]) * ram,
            _num(fig["gpu_vram_total_mib"]) * gram, cores, expected, gpus, expected_gpus))))

    # ---- the figures -----------------------------------------------------------------------

    def _units(self):
        return self.ram_unit, self.gpu_ram_unit, self.time_unit, self.n_expected_cores

    # ---- presentation ----------------------------------------------------------------------

    def to_json(self) -> dict[str, dict]:
        """The measurements and their units as a dictionary (gpu_tracker's shape), and last
        "gpu_work" (0.19, ResourceUsage.gpu_work) only where the GPUs measured their work."""
        if self.resource_usage is None:
            raise RuntimeError(
                "Cannot display the tracker in string or JSON format before tracking completes. Exit the content "
                "manager or call the stop() method before calling to_json() or str()"
            )
        out = dclass.asdict(self.resource_usage)
        if self.resource_usage.gpu_work is not None:
            out["gpu_work"] = self.resource_usage.gpu_work
        return out

    def __str__(self) -> str:
        """The measurements as gpu_tracker prints them: one "Label: value" line per figure,
        nested three spaces a level, floats to 3 decimals."""
        lines: list[str] = []
        _text_lines(self.to_json(), 0, lines)
        return "\n".join(lines)


# ---- helpers ------------------------------------------------------------------------------


def _check_unit(unit: str, table: dict, kind: str) -> None:
    if unit not in table:
        raise ValueError(f'"{unit}" is not a valid {kind} unit. Valid values are {", ".join(sorted(table))}')


# label words as gpu_tracker capitalises them, applied in this order to "words with spaces"
_LABEL_RULES = (
    ("max", "Max"), ("ram", "RAM"), ("unit", "Unit"), ("system", "System"), ("compute", "Compute"),
    ("rss", "RSS"), ("total", "Total"), ("private", "Private"), ("shared", "Shared"), ("main", "Main"),
    ("descendants", "Descendants"), ("combined", "Combined"), ("gpu", "GPU"), ("mean", "Mean"), ("cpu", "CPU"),
    ("n threads", "number of threads"), ("n expected", "Number of expected"),
)


def _label(key: str, leaf: bool) -> str:
    text = key.replace("_", " ")
    for old, new_text in _LABEL_RULES:
        text = text.replace(old, new_text)
    if leaf and text == "time":
        text = "Time"
    return text


def _value_text(v) -> str:
    if isinstance(v, float):
        return repr(float(f"{v:.3f}"))
    return str(v)


def _text_lines(d: dict, depth: int, out: list) -> None:
    pad = "   " * depth
    for key, v in d.items():
        if isinstance(v, dict):
            out.append(f"{pad}{_label(key, False)}:")
            _text_lines(v, depth + 1, out)
        else:
            out.append(f"{pad}{_label(key, True)}: {_value_text(v)}")
