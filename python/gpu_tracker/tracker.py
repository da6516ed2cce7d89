"""tracker.py - gpu_tracker's Tracker (gpu_tracker.tracker.Tracker; docs/contracts.md §14) on
resource-tracker's C tracker: the library samples the process tree and the machine on a thread
of this process and keeps gpu_tracker's view of the run (rt_usage: peaks and means of RAM and
GPU RAM for the main process, its descendants and both; CPU and GPU utilization as sums of
percentages and as shares of the hardware expected to be used), which stop() turns into
gpu_tracker's data classes in the units asked for. While tracking, a thread rewrites
resource_usage_file (JSON, not gpu_tracker's pickle) after the first sample and then every
second (or sleep_time, when longer), so that an interrupted run leaves its figures behind; a
completed run deletes it."""

from __future__ import annotations

import dataclasses as dclass
import enum
import json
import logging
import math
import os
import threading
import uuid
import weakref
from ctypes import POINTER, Structure, byref, c_char_p, c_double, c_size_t, c_void_p, cast

from resource_tracker._native import (
    RT_ERR_NOT_FOUND,
    SAMPLE_FN,
    NativeError,
    TrackerHandle,
    TrackerOptions,
    lib,
    new,
    out_handle,
)
from resource_tracker._native_more import lib as _lib_more  # declares rt_tracker_summary

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
    """The resource usage of a tracked run."""

    max_ram: MaxRAM
    max_gpu_ram: MaxGPURAM
    cpu_utilization: CPUUtilization
    gpu_utilization: GPUUtilization
    compute_time: ComputeTime


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


def _machine_gpus(nvml_library: str | None) -> list[str]:
    """The uuids of the machine's GPUs, from one sample of a short-lived machine-only tracker."""
    found: list[str] = []

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
    finally:
        lib.rt_tracker_free(handle)
    return sorted(set(found))


class _Native:
    """The C tracker, what it must outlive (the uuid array), and the backup thread. Freed by
    weakref.finalize of the Tracker (from whatever thread drops it last, or the collector's):
    the backup thread is stopped and joined first, then the C tracker is freed."""

    __slots__ = ("tracker", "keep", "backup")

    def __init__(self):
        self.tracker = None
        self.keep = []
        self.backup = None

    def stop_backup(self):
        b, self.backup = self.backup, None
        if b is not None:
            b.stop_event.set()
            if b is not threading.current_thread():
                b.join()

    def close(self):
        self.stop_backup()
        t, self.tracker = self.tracker, None
        if t is not None:
            lib.rt_tracker_free(t)


def _resource_usage(handle, ram_unit, gpu_ram_unit, time_unit, n_expected_cores) -> ResourceUsage:
    """The C tracker's usage so far as gpu_tracker's data classes, in the units asked for."""
    s = _lib_more.rt_tracker_summary(handle)
    if not s or not s.contents.usage:
        return _empty_usage(ram_unit, gpu_ram_unit, time_unit, n_expected_cores)
    u = cast(s.contents.usage, POINTER(_Usage)).contents
    ram = _RAM_UNITS[ram_unit] * _MIB
    gram = _RAM_UNITS[gpu_ram_unit] * _MIB
    parts = [RSSValues(_num(r.total_mib) * ram, _num(r.private_mib) * ram, _num(r.shared_mib) * ram) for r in u.ram_peak]
    cores = _count(u.system_core_count)
    expected = n_expected_cores if n_expected_cores is not None else cores
    return ResourceUsage(
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
        threads and its (small) CPU time is part of main's.

    Raises:
        ValueError: invalid units, sleep_time, n_expected_cores, gpu_uuids or gpu_brand.
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
    ):
        _check_unit(ram_unit, _RAM_UNITS, "RAM")
        _check_unit(gpu_ram_unit, _RAM_UNITS, "GPU RAM")
        _check_unit(time_unit, _TIME_UNITS, "time")
        if not (isinstance(sleep_time, (int, float)) and 0.01 <= sleep_time <= 86400):
            raise ValueError(f"Sleep time of {sleep_time} is invalid. Must be at least 0.01 seconds (and at most a day).")
        if n_expected_cores is not None and not (isinstance(n_expected_cores, (int, float)) and n_expected_cores > 0):
            raise ValueError(f"n_expected_cores of {n_expected_cores} is invalid. Must be a number above 0.")
        if gpu_brand is not None and gpu_brand not in ("nvidia", "amd"):
            raise ValueError(f'"{gpu_brand}" is not a valid GPU brand. Supported values are "nvidia" and "amd".')
        self.sleep_time = float(sleep_time)
        self.ram_unit, self.gpu_ram_unit, self.time_unit = ram_unit, gpu_ram_unit, time_unit
        self.n_expected_cores = n_expected_cores
        self.disable_logs = disable_logs
        self.process_id = os.getpid() if process_id is None else int(process_id)
        self.n_join_attempts = n_join_attempts
        self.join_timeout = join_timeout
        self.gpu_brand = gpu_brand
        self._nvml_library = os.environ.get("TRACKER_NVML_LIBRARY") or None
        self.gpu_uuids = None
        if gpu_uuids is not None:
            gpu_uuids = set(gpu_uuids)
            if not gpu_uuids:
                raise ValueError(
                    "gpu_uuids is not None but the set is empty. Please provide a set of at least one GPU UUID."
                )
            available = _machine_gpus(self._nvml_library)
            for u in sorted(gpu_uuids):
                if u not in available:
                    raise ValueError(f"GPU UUID of {u} is not valid. Available UUIDs are: {', '.join(available)}")
            self.gpu_uuids = gpu_uuids
        self.resource_usage_file = (
            resource_usage_file if resource_usage_file is not None else f".gpu-tracker_{uuid.uuid1()}.json"
        )
        self.resource_usage: ResourceUsage | None = None
        self.state = Tracker.State.NEW
        self._native = _Native()
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
        self._native.stop_backup()  # before the last figures: one summary at a time
        if t is not None:
            lib.rt_tracker_stop(t)  # one last sample; the thread joins within it
            self.resource_usage = _resource_usage(t, *self._units())
        else:  # the process was gone before tracking began
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
        self._native.backup = _Backup(self._native, self.resource_usage_file, self._units(),
                                      max(1.0, self.sleep_time))
        self._native.backup.start()

    # ---- the figures -----------------------------------------------------------------------

    def _units(self):
        return self.ram_unit, self.gpu_ram_unit, self.time_unit, self.n_expected_cores

    # ---- presentation ----------------------------------------------------------------------

    def to_json(self) -> dict[str, dict]:
        """The measurements and their units as a dictionary (gpu_tracker's shape)."""
        if self.resource_usage is None:
            raise RuntimeError(
                "Cannot display the tracker in string or JSON format before tracking completes. Exit the content "
                "manager or call the stop() method before calling to_json() or str()"
            )
        return dclass.asdict(self.resource_usage)

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
