"""_native_reading.py - the ctypes declarations of libresource-tracker's counters read now
(rt_counters, added in 0.13), and the two readings in resource-tracker 0.5's shapes that
tracker_procfs and tracker_psutil give: a process tree's and the machine's cumulative counters
at the moment of the call. Nothing here reads /proc: the C library does.

One handle per process, made at the first reading (TRACKER_NVML_LIBRARY names the NVML
library, as for the host facts) and used under a lock: a handle serves one thread at a time.
A fork gets a fresh one."""

import os
import threading
from ctypes import (
    POINTER,
    Structure,
    byref,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint64,
    c_void_p,
    sizeof,
)
from math import isnan

from ._native import LOG_FN, NativeError, bind_optional, lib, new

NULL_U64 = 2**64 - 1
NULL_I64 = -(2**63)
_MIB = 1024.0 * 1024.0


class CountersOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("proc_root", c_char_p), ("sys_root", c_char_p),
        ("log", LOG_FN), ("log_user", c_void_p), ("nvml_library", c_char_p), ("gpu_off", c_int),
    ]


class TreeCounters(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("timestamp_secs", c_double), ("pid", c_int64),
        ("child_count", c_int64), ("utime_secs", c_double), ("stime_secs", c_double),
        ("pss_mib", c_double), ("read_bytes", c_uint64), ("write_bytes", c_uint64),
        ("gpu_usage", c_double), ("gpu_vram_mib", c_double), ("gpu_utilized", c_int64),
        ("unread_count", c_int64),
    ]


class DiskCounters(Structure):
    _fields_ = [("device", c_char_p), ("read_bytes", c_uint64), ("write_bytes", c_uint64)]


class MountSpace(Structure):
    _fields_ = [
        ("mount_point", c_char_p), ("total_bytes", c_uint64), ("used_bytes", c_uint64),
        ("free_bytes", c_uint64),
    ]


class SystemCounters(Structure):
    _fields_ = [
        ("timestamp_secs", c_double), ("pid_count", c_int64), ("utime_secs", c_double),
        ("stime_secs", c_double), ("memory_free_mib", c_double), ("memory_used_mib", c_double),
        ("memory_buffers_mib", c_double), ("memory_cached_mib", c_double),
        ("memory_active_mib", c_double), ("memory_inactive_mib", c_double),
        ("disks", POINTER(POINTER(DiskCounters))), ("disk_count", c_size_t),
        ("mounts", POINTER(POINTER(MountSpace))), ("mount_count", c_size_t),
        ("net_rx_bytes", c_uint64), ("net_tx_bytes", c_uint64),
        ("gpu_usage", c_double), ("gpu_vram_mib", c_double), ("gpu_utilized", c_int64),
    ]


CountersHandle = c_void_p

bind_optional({
    "rt_counters_new": (c_int, [POINTER(CountersOptions), POINTER(CountersHandle)]),
    "rt_counters_tree": (c_int, [CountersHandle, c_int64, c_int, POINTER(TreeCounters)]),
    "rt_counters_system": (c_int, [CountersHandle, POINTER(POINTER(SystemCounters))]),
    "rt_counters_free": (None, [CountersHandle]),
})

RT_ERR_NOT_FOUND = 5

_lock = threading.Lock()
_handle = None
_handle_pid = None


def _after_fork_in_child():
    """A child forked while another thread held the lock gets a free one (and, by its pid, a
    handle of its own at its first call)."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _counters():
    """The process's handle (made at the first call; again in a forked child). Call with _lock
    held."""
    global _handle, _handle_pid
    if _handle is None or _handle_pid != os.getpid():
        opts = new(CountersOptions, nvml_library=os.environ.get("TRACKER_NVML_LIBRARY", "").encode() or None)
        h = CountersHandle()
        err = lib.rt_counters_new(byref(opts), byref(h))
        if err:
            raise NativeError("rt_counters_new", err)
        _handle, _handle_pid = h, os.getpid()  # a forked child's copy is left to its parent
    return _handle


def _f(x, default=0.0):
    """A double of the library as float; null (NaN) as default (0.5 gives 0 where it has no
    figure)."""
    return default if isnan(x) else float(x)


def _u(x, default=0):
    return default if x == NULL_U64 else int(x)


def _i(x, default=0):
    return default if x == NULL_I64 else int(x)


def process_counters(pid, children=True):
    """A process tree's counters now, as 0.5's get_process_stats returns them (see
    tracker_procfs). A pid that is not there gives zeros, as 0.5's procfs module does."""
    out = TreeCounters()
    out.struct_size = sizeof(TreeCounters)
    with _lock:
        err = lib.rt_counters_tree(_counters(), int(pid), 1 if children else 0, byref(out))
    if err and err != RT_ERR_NOT_FOUND:
        raise NativeError("rt_counters_tree", err)
    return {
        "timestamp": out.timestamp_secs,
        "pid": int(pid),
        "children": (_i(out.child_count) if children else None),
        "utime": _f(out.utime_secs),
        "stime": _f(out.stime_secs),
        "memory_mib": _f(out.pss_mib),
        "disk_read_bytes": _u(out.read_bytes),
        "disk_write_bytes": _u(out.write_bytes),
        "gpu_usage": _f(out.gpu_usage),
        "gpu_vram_mib": _f(out.gpu_vram_mib),
        "gpu_utilized": _i(out.gpu_utilized),
    }


def system_counters():
    """The machine's counters now, as 0.5's get_system_stats returns them (see
    tracker_procfs)."""
    p = POINTER(SystemCounters)()
    with _lock:
        err = lib.rt_counters_system(_counters(), byref(p))
        if err and not p:
            raise NativeError("rt_counters_system", err)
        s = p.contents
        disks = {}
        for i in range(s.disk_count):
            d = s.disks[i].contents
            disks[d.device.decode("utf-8", "replace")] = {
                "read_bytes": _u(d.read_bytes), "write_bytes": _u(d.write_bytes),
            }
        spaces = {}
        for i in range(s.mount_count):
            m = s.mounts[i].contents
            if m.total_bytes == NULL_U64:
                continue  # statvfs failed: no figures to give
            spaces[m.mount_point.decode("utf-8", "replace")] = {
                "total": int(m.total_bytes), "used": _u(m.used_bytes), "free": _u(m.free_bytes),
            }
        return {
            "timestamp": s.timestamp_secs,
            "processes": _i(s.pid_count),
            "utime": _f(s.utime_secs),
            "stime": _f(s.stime_secs),
            "memory_free_mib": _f(s.memory_free_mib),
            "memory_used_mib": _f(s.memory_used_mib),
            "memory_buffers_mib": _f(s.memory_buffers_mib),
            "memory_cached_mib": _f(s.memory_cached_mib),
            "memory_active_mib": _f(s.memory_active_mib),
            "memory_inactive_mib": _f(s.memory_inactive_mib),
            "disk_stats": disks,
            "disk_spaces": spaces,
            "net_recv_bytes": _u(s.net_rx_bytes),
            "net_sent_bytes": _u(s.net_tx_bytes),
            "gpu_usage": _f(s.gpu_usage),
            "gpu_vram_mib": _f(s.gpu_vram_mib),
            "gpu_utilized": _i(s.gpu_utilized),
        }
