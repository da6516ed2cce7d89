"""_native.py - loads libresource-tracker with ctypes and declares what tracking needs of it
(the tracker's calls and options, the cloud discovery's); _native_more.py declares the rest
(host, Keeper, summary, report) when first used, which keeps this file, compiled at import,
small.

The structs mirror include/resource_tracker.h field for field (the header's ABI rules: the
options structs begin with struct_size, library-owned structs grow only at their end). Each
kind of opaque handle has a ctypes type of its own (TrackerHandle, StatsHandle, ...: see
Handle), so that a handle of one kind handed where another is expected raises
ctypes.ArgumentError instead of reaching the library. Every call goes through ctypes.CDLL,
which releases the GIL for the call's duration, so the long ones (rt_tracker_wait,
rt_tracker_stop, the Keeper lookup) do not block other threads.

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

# the oldest library with what the package calls (0.13.0: rt_counters, RT_SAVE_PY05; as RT_VERSION_NUM)
MIN_VERSION_NUM = 0x000D00

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


class Handle(c_void_p):
    """An opaque handle of the library (an rt_tracker *, an rt_stats *, ...): each kind is a
    subclass, which the prototypes name in their restype, argtypes and out-pointers. As an
    argument a kind takes only itself or None (NULL): another kind of handle, a bare c_void_p
    or an int raises ctypes.ArgumentError. False when NULL."""

    __slots__ = ()

    @classmethod
    def from_param(cls, obj):
        if obj is None or isinstance(obj, cls):
            return obj
        raise TypeError(f"expected {cls.__name__} or None, got {type(obj).__name__}")

    def __repr__(self):
        return f"{type(self).__name__}({hex(self.value) if self.value else 'NULL'})"


class TrackerHandle(Handle):
    """rt_tracker *: a background tracker, live or loaded (rt_tracker_start, rt_tracker_load)."""


class CloudHandle(Handle):
    """rt_cloud_discovery *: a cloud discovery running in the background (rt_cloud_start)."""


class StatsHandle(Handle):
    """rt_stats *: statistics of a run (rt_stats_new_with), fed by rt_run_read."""


class ReportHandle(Handle):
    """rt_report *: a report being fed (rt_report_new_with; rt_run_read's report argument)."""


LOG_FN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)
SAMPLE_FN = CFUNCTYPE(None, c_void_p, c_void_p)


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


class TrackerOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("pid", c_int64), ("no_children", c_int),
        ("interval_secs", c_double), ("max_samples", c_uint64), ("proc_root", c_char_p),
        ("sys_root", c_char_p), ("nvml_library", c_char_p), ("pss_max_age_secs", c_double),
        ("job", c_void_p), ("log", LOG_FN), ("log_user", c_void_p),
        ("on_sample", SAMPLE_FN), ("on_sample_user", c_void_p),
        # added in 0.8 (a 0.7 library reads only up to on_sample_user: struct_size)
        ("expected_cores", c_double), ("gpu_uuids", POINTER(c_char_p)), ("gpu_uuid_count", c_size_t),
        ("phase_check_secs", c_double),  # 0.14
    ]


def new(struct_type, **fields):
    """An instance of an options-like struct with struct_size set (the *_INIT macros)."""
    s = struct_type(**fields)
    s.struct_size = sizeof(struct_type)
    return s


# name: (restype, argtypes); the calls of the analysis (host, Keeper, summary, report) are
# declared by _native_more.py, with their structs, when first used
_PROTOTYPES = {
    "rt_strerror": (c_char_p, [c_int]),
    "rt_version": (c_char_p, []),
    "rt_version_num": (c_uint, []),
    "rt_cloud_start": (c_int, [POINTER(CloudOptions), POINTER(CloudHandle)]),
    "rt_cloud_result": (POINTER(Cloud), [CloudHandle, c_double]),
    "rt_cloud_free": (None, [CloudHandle]),
    "rt_round_memory_mib": (c_int64, [c_double]),
    "rt_tracker_start": (c_int, [POINTER(TrackerOptions), POINTER(TrackerHandle)]),
    "rt_tracker_stop": (c_int, [TrackerHandle]),
    "rt_tracker_running": (c_int, [TrackerHandle]),
    "rt_tracker_count": (c_uint64, [TrackerHandle]),
    "rt_tracker_first": (c_uint64, [TrackerHandle]),
    "rt_tracker_wait": (c_uint64, [TrackerHandle, c_uint64, c_double]),
    "rt_column_count": (c_int, []),
    "rt_column_name": (c_char_p, [c_int]),
    "rt_column_by_name": (c_int, [c_char_p]),
    "rt_tracker_column": (c_size_t, [TrackerHandle, c_int, c_uint64, c_size_t, POINTER(c_double)]),
    "rt_tracker_save": (c_int, [TrackerHandle, c_char_p, c_int, c_int]),
    "rt_tracker_load": (c_int, [c_char_p, LOG_FN, c_void_p, POINTER(TrackerHandle)]),
    "rt_tracker_load_buffer": (c_int, [c_char_p, c_size_t, LOG_FN, c_void_p, POINTER(TrackerHandle)]),
    "rt_tracker_saved_info": (c_char_p, [TrackerHandle]),
    "rt_tracker_free": (None, [TrackerHandle]),
    "rt_tracker_phase_start": (c_int, [TrackerHandle, c_char_p]),  # 0.14, experimental
    "rt_tracker_phase_stop": (c_int, [TrackerHandle, c_char_p]),  # 0.14, experimental
    "rt_last_error_message": (c_char_p, []),  # 0.10
    "rt_schema_field_count": (c_size_t, []),
    "rt_schema_field_struct": (c_char_p, [c_size_t]),
    "rt_schema_field_name": (c_char_p, [c_size_t]),
    "rt_schema_field_type": (c_int, [c_size_t]),
    "rt_schema_field_unit": (c_char_p, [c_size_t]),
    "rt_schema_field_since": (c_char_p, [c_size_t]),
    "rt_schema_field_help": (c_char_p, [c_size_t]),
}


# functions a library being built may lack: calling one raises, importing does not
_OPTIONAL = {"rt_tracker_save", "rt_tracker_load", "rt_tracker_load_buffer", "rt_tracker_saved_info",
             "rt_last_error_message", "rt_tracker_phase_start", "rt_tracker_phase_stop"} | {
    name for name in _PROTOTYPES if name.startswith("rt_schema_")  # 0.9
}


def missing_function(name):
    def call(*_args):
        raise RuntimeError(f"this libresource-tracker has no {name}")

    return call


def bind_optional(prototypes):
    """Types each function of prototypes ({name: (restype, argtypes)}) on lib; one this library
    lacks becomes missing_function(name), so importing works and calling it raises."""
    for name, (restype, argtypes) in prototypes.items():
        fn = getattr(lib, name, None)
        if fn is None:
            setattr(lib, name, missing_function(name))
            continue
        fn.restype = restype
        fn.argtypes = argtypes


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
            errors.append(f"{path}: lacks {', '.join(missing[:3])} (older than 0.13.0?)")
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            if not hasattr(lib, name):
                setattr(lib, name, missing_function(name))
                continue
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        if lib.rt_version_num() < MIN_VERSION_NUM:
            errors.append(f"{path}: version {lib.rt_version().decode()} is older than 0.13.0")
            continue
        return lib
    raise ImportError(
        "resource_tracker needs the C library libresource-tracker (0.13.0 or newer), which was not "
        "found: set RESOURCE_TRACKER_LIBRARY to its path, install it on the library path, or "
        "install the package's wheel that carries it. Tried: " + "; ".join(errors)
    )


lib = _load()


# The calls the package makes whose contract says "last error" (they clear the calling
# thread's last error message when they begin and set it when they fail): a NativeError of one
# of them carries rt_last_error_message. Another call may leave a message of an earlier one.
SETS_LAST_ERROR = frozenset({
    "rt_host_new", "rt_stats_new_with", "rt_format_summary_json",
    "rt_tracker_save", "rt_tracker_save_cb", "rt_tracker_load", "rt_tracker_load_buffer",
})


def last_error():
    """The calling thread's last error message (rt_last_error_message, 0.10) as str; None when
    it is empty or the library is older than 0.10. Meaningful only right after a failed call
    of SETS_LAST_ERROR, on the same thread."""
    if not hasattr(lib.rt_last_error_message, "argtypes"):
        return None
    return text(lib.rt_last_error_message()) or None


_READ_NOW = object()


class NativeError(RuntimeError):
    """A call into libresource-tracker failed; .code is the rt_error code, .message the
    library's last error message for the call ("run.json: not a snapshot: ..."), or None when
    the call sets none (see SETS_LAST_ERROR) or the library is older than 0.10. The text is
    "what: rt_strerror (detail; message)", each part there when known (message not repeated
    when detail holds it).

    message: by default read here (last_error(), when `what` is in SETS_LAST_ERROR), so make
    no other library call between the failing one and this; a caller that must passes what
    last_error() said right after the failure."""

    def __init__(self, what, code, detail=None, message=_READ_NOW):
        if message is _READ_NOW:
            message = last_error() if what in SETS_LAST_ERROR else None
        msg = f"{what}: {lib.rt_strerror(code).decode()}"
        extra = [d for d in (detail, message) if d]
        if detail and message and message in detail:
            extra = [detail]
        if extra:
            msg += f" ({'; '.join(extra)})"
        super().__init__(msg)
        self.code = code
        self.message = message or None


def text(b):
    """A C string (bytes or None) as str or None."""
    return None if b is None else b.decode("utf-8", "replace")


def encode(s):
    """A str (or None) as bytes for a const char * field."""
    return None if s is None else str(s).encode("utf-8")


def out_handle(kind):
    """A handle of kind (TrackerHandle, ...) for an out-parameter, and byref of it."""
    h = kind()
    return h, byref(h)


_columns = {}


def column(name: str) -> int:
    """The store column named name (rt_column_name's names: "process_pss_mib"), as the loaded
    library numbers it: asked of rt_column_by_name once, so no number is kept here."""
    c = _columns.get(name)
    if c is None:
        c = lib.rt_column_by_name(name.encode())
        if c < 0:
            raise KeyError(f"the library has no column {name!r}")
        _columns[name] = c
    return c


_FIELD_TYPES = ("string", "u64", "i64", "double", "flag")


def schema():
    """Every figure of a sample as the library lists it (rt_schema_field_*, 0.9): a list of
    dicts with struct ("process"), name ("rss_mib", its key in the JSON line), type ("double",
    "u64", "i64", "string", "flag"), unit ("MiB"), since ("0.1") and help."""
    out = []
    for i in range(lib.rt_schema_field_count()):
        out.append(
            {
                "struct": text(lib.rt_schema_field_struct(i)),
                "name": text(lib.rt_schema_field_name(i)),
                "type": _FIELD_TYPES[lib.rt_schema_field_type(i)],
                "unit": text(lib.rt_schema_field_unit(i)),
                "since": text(lib.rt_schema_field_since(i)),
                "help": text(lib.rt_schema_field_help(i)),
            }
        )
    return out
