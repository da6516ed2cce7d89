"""_native.py - loads libresource-tracker with ctypes and declares what the package uses of it.

The structs mirror include/resource_tracker.h field for field (the header's ABI rules: the
options structs begin with struct_size, library-owned structs grow only at their end). Every
call goes through ctypes.CDLL, which releases the GIL for the call's duration, so the long
ones (rt_tracker_wait, rt_tracker_stop, the Keeper lookup) do not block other threads.

The library is looked up, in order: the path in $RESOURCE_TRACKER_LIBRARY, the file
libresource-tracker.so next to this package (an installed wheel), libresource-tracker.so.0
from the system's library path. None found: ImportError saying so.
"""

import os
from ctypes import (
    CDLL,
    CFUNCTYPE,
    POINTER,
    Structure,
    byref,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint,
    c_uint64,
    c_void_p,
    sizeof,
)

# the oldest library with the embedding API (0.5.0, as RT_VERSION_NUM)
MIN_VERSION_NUM = 0x000500

# rt_error codes
RT_OK = 0
RT_ERR_NOMEM = 1
RT_ERR_INVALID = 2
RT_ERR_IO = 3
RT_ERR_PARSE = 4
RT_ERR_NOT_FOUND = 5
RT_ERR_UNSUPPORTED = 6
RT_ERR_SYSTEM = 7
RT_ERR_DISABLED = 8

RT_SAVE_GZIP = 1

# rt_column numbers (they never change)
COL = {
    "timestamp": 0, "interval": 1,
    "cpu_runnable": 2, "cpu_utime": 3, "cpu_stime": 4, "cpu_cores": 5, "cpu_count": 6,
    "mem_total_mib": 7, "mem_free_mib": 8, "mem_used_mib": 9, "mem_buffers_mib": 10,
    "mem_cached_mib": 11, "mem_active_mib": 12, "mem_inactive_mib": 13,
    "mem_available_mib": 14, "swap_used_mib": 15,
    "disk_read_bytes": 16, "disk_write_bytes": 17, "disk_space_total_bytes": 18,
    "disk_space_used_bytes": 19, "disk_space_free_bytes": 20,
    "net_recv_bytes": 21, "net_sent_bytes": 22,
    "gpu_usage": 23, "gpu_vram_mib": 24, "gpu_utilized": 25, "gpu_count": 26,
    "gpu_vram_total_mib": 27,
    "proc_pid": 28, "proc_alive": 29, "proc_children": 30, "proc_threads": 31,
    "proc_utime": 32, "proc_stime": 33, "proc_cores": 34, "proc_cpu_secs_total": 35,
    "proc_pss_mib": 36, "proc_rss_mib": 37, "proc_rss_peak_mib": 38, "proc_swap_mib": 39,
    "proc_read_bytes": 40, "proc_write_bytes": 41, "proc_gpu_usage": 42,
    "proc_gpu_vram_mib": 43, "proc_gpu_utilized": 44,
}

LOG_FN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)
SAMPLE_FN = CFUNCTYPE(None, c_void_p, c_void_p)


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


class Cloud(Structure):
    _fields_ = [
        ("vendor_id", c_char_p), ("account_id", c_char_p), ("region_id", c_char_p),
        ("zone_id", c_char_p), ("instance_type", c_char_p), ("discovery_secs", c_double),
    ]


class CloudOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("disabled", c_int), ("metadata_url", c_char_p),
        ("log", LOG_FN), ("log_user", c_void_p),
    ]


class Dist(Structure):
    _fields_ = [("mean", c_double), ("peak", c_double), ("p50", c_double), ("p95", c_double)]


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
    ]


class Recommendation(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("cpu", c_int64), ("memory_mib", c_int64), ("gpu", c_int64),
        ("vram_mib", c_int64), ("runs", c_uint64), ("duration_secs", c_double),
    ]


class KeeperOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("url", c_char_p), ("timeout_secs", c_double),
        ("log", LOG_FN), ("log_user", c_void_p),
    ]


class Server(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("vendor_id", c_char * 64), ("api_reference", c_char * 128),
        ("display_name", c_char * 128), ("vcpus", c_int64), ("memory_mib", c_double),
        ("gpu_count", c_int64), ("price_usd_per_hour", c_double),
    ]


class ReportInfo(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("title", c_char_p), ("job", POINTER(Job)),
        ("command", c_char_p), ("host", POINTER(Host)), ("cloud", POINTER(Cloud)),
        ("exit_status", c_int), ("summary", POINTER(Summary)),
        ("recommendation", POINTER(Recommendation)), ("cheapest", POINTER(Server)),
        ("keeper_note", c_char_p), ("current_price_usd_per_hour", c_double),
        ("current_instance", c_char_p),
    ]


class TrackerOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("pid", c_int64), ("no_children", c_int),
        ("interval_secs", c_double), ("max_samples", c_uint64), ("proc_root", c_char_p),
        ("sys_root", c_char_p), ("nvml_library", c_char_p), ("pss_max_age_secs", c_double),
        ("job", POINTER(Job)), ("log", LOG_FN), ("log_user", c_void_p),
        ("on_sample", SAMPLE_FN), ("on_sample_user", c_void_p),
    ]


def new(struct_type, **fields):
    """An instance of an options-like struct with struct_size set (the *_INIT macros)."""
    s = struct_type(**fields)
    s.struct_size = sizeof(struct_type)
    return s


# name: (restype, argtypes)
_PROTOTYPES = {
    "rt_strerror": (c_char_p, [c_int]),
    "rt_version": (c_char_p, []),
    "rt_version_num": (c_uint, []),
    "rt_host_read": (c_int, [POINTER(HostOptions), POINTER(POINTER(Host))]),
    "rt_host_free": (None, [POINTER(Host)]),
    "rt_cloud_start": (c_int, [POINTER(CloudOptions), POINTER(c_void_p)]),
    "rt_cloud_result": (POINTER(Cloud), [c_void_p, c_double]),
    "rt_cloud_free": (None, [c_void_p]),
    "rt_round_memory_mib": (c_int64, [c_double]),
    "rt_keeper_cheapest": (c_int, [POINTER(KeeperOptions), POINTER(Recommendation), POINTER(Server)]),
    "rt_keeper_price": (c_int, [POINTER(KeeperOptions), c_char_p, c_char_p, c_char_p, POINTER(c_double)]),
    "rt_tracker_start": (c_int, [POINTER(TrackerOptions), POINTER(c_void_p)]),
    "rt_tracker_stop": (c_int, [c_void_p]),
    "rt_tracker_running": (c_int, [c_void_p]),
    "rt_tracker_count": (c_uint64, [c_void_p]),
    "rt_tracker_first": (c_uint64, [c_void_p]),
    "rt_tracker_wait": (c_uint64, [c_void_p, c_uint64, c_double]),
    "rt_column_count": (c_int, []),
    "rt_column_name": (c_char_p, [c_int]),
    "rt_column_by_name": (c_int, [c_char_p]),
    "rt_tracker_column": (c_size_t, [c_void_p, c_int, c_uint64, c_size_t, POINTER(c_double)]),
    "rt_tracker_summary": (POINTER(Summary), [c_void_p]),
    "rt_tracker_recommend": (c_int, [c_void_p, POINTER(Recommendation)]),
    "rt_tracker_report": (c_int, [c_void_p, POINTER(ReportInfo), c_int]),
    "rt_tracker_save": (c_int, [c_void_p, c_char_p, c_int, c_int]),
    "rt_tracker_load": (c_int, [c_char_p, LOG_FN, c_void_p, POINTER(c_void_p)]),
    "rt_tracker_load_buffer": (c_int, [c_char_p, c_size_t, LOG_FN, c_void_p, POINTER(c_void_p)]),
    "rt_tracker_saved_info": (c_char_p, [c_void_p]),
    "rt_tracker_free": (None, [c_void_p]),
}


# functions a library being built may lack: calling one raises, importing does not
_OPTIONAL = {"rt_tracker_save", "rt_tracker_load", "rt_tracker_load_buffer", "rt_tracker_saved_info"}


def _missing(name):
    def call(*_args):
        raise RuntimeError(f"this libresource-tracker has no {name}")

    return call


def _candidates():
    env = os.environ.get("RESOURCE_TRACKER_LIBRARY")
    if env:
        yield env
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libresource-tracker.so")
    if os.path.exists(here):
        yield here
    yield "libresource-tracker.so.0"


def _load():
    errors = []
    for path in _candidates():
        try:
            lib = CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        missing = [name for name in _PROTOTYPES if not hasattr(lib, name) and name not in _OPTIONAL]
        if missing:
            errors.append(f"{path}: lacks {', '.join(missing[:3])} (older than 0.5.0?)")
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            if not hasattr(lib, name):
                setattr(lib, name, _missing(name))
                continue
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        if lib.rt_version_num() < MIN_VERSION_NUM:
            errors.append(f"{path}: version {lib.rt_version().decode()} is older than 0.5.0")
            continue
        return lib
    raise ImportError(
        "resource_tracker needs the C library libresource-tracker (0.5.0 or newer), which was not "
        "found: set RESOURCE_TRACKER_LIBRARY to its path, install it on the library path, or "
        "install the package's wheel that carries it. Tried: " + "; ".join(errors)
    )


lib = _load()


class NativeError(RuntimeError):
    """A call into libresource-tracker failed; .code is the rt_error code."""

    def __init__(self, what, code, detail=None):
        msg = f"{what}: {lib.rt_strerror(code).decode()}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)
        self.code = code


def text(b):
    """A C string (bytes or None) as str or None."""
    return None if b is None else b.decode("utf-8", "replace")


def encode(s):
    """A str (or None) as bytes for a const char * field."""
    return None if s is None else str(s).encode("utf-8")


class LogCollector:
    """A log callback that keeps the messages of one synchronous call (as str)."""

    def __init__(self):
        self.messages = []
        self.fn = LOG_FN(self._log)

    def _log(self, _user, level, msg):
        self.messages.append(text(msg))

    def last(self):
        return self.messages[-1] if self.messages else None


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


def out_handle():
    """A c_void_p for an out-parameter, and byref of it."""
    h = c_void_p()
    return h, byref(h)
