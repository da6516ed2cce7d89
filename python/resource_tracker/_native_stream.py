"""_native_stream.py - the ctypes declarations of the C library's Sentinel stream
(rt_stream_start, rt_stream_add, rt_stream_finish, rt_stream_errmsg, rt_stream_free,
rt_stream_deliver_earlier and
rt_stream_options, mirroring include/resource_tracker.h), for _stream.py. Imported when first
used: only a tracker that streams needs it."""

from ctypes import POINTER, Structure, c_char_p, c_double, c_int, c_size_t, c_void_p

from ._native import LOG_FN, Handle, bind_optional
from ._native_more import Host, Job


class StreamHandle(Handle):
    """rt_stream *: a run being streamed to the Sentinel API and S3 (rt_stream_start)."""


class StreamOptions(Structure):
    _fields_ = [
        ("struct_size", c_size_t), ("api_url", c_char_p), ("token", c_char_p),
        ("upload_interval_secs", c_double), ("s3_endpoint_url", c_char_p), ("region", c_char_p),
        ("job", POINTER(Job)), ("command", POINTER(c_char_p)), ("host", POINTER(Host)),
        ("cloud", c_void_p), ("spill_dir", c_char_p), ("memory_limit_bytes", c_size_t),
        ("finish_timeout_secs", c_double), ("log", LOG_FN), ("log_user", c_void_p),
        ("spill_fallback_dir", c_char_p),  # 0.18
    ]


_PROTOTYPES = {
    "rt_stream_start": (c_int, [POINTER(StreamOptions), POINTER(StreamHandle)]),
    # rt_error (*)(rt_stream *, const rt_sample *): the tracker calls it as its on_sample
    "rt_stream_add": (c_int, [StreamHandle, c_void_p]),
    "rt_stream_finish": (c_int, [StreamHandle, c_int, c_int]),
    "rt_stream_errmsg": (c_char_p, [StreamHandle]),
    "rt_stream_free": (None, [StreamHandle]),
    # 0.22: the stream delivers older runs once registered only when asked (before, on its own)
    "rt_stream_deliver_earlier": (c_int, [StreamHandle]),
}

bind_optional(_PROTOTYPES)
