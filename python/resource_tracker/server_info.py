"""server_info.py - the machine's hardware (vCPUs, memory, GPUs) as the Python tracker's
get_server_info reports it, read by the C library (rt_host_new, rt_host_read before 0.10: /proc,
/sys and NVML)."""

import os
from ctypes import POINTER, byref

from ._native import NativeError, lib, new, text
from ._native_more import Host, HostOptions, has


def read_host():
    """rt_host_new with default options: a POINTER(Host); free it with lib.rt_host_free."""
    opts = new(HostOptions, nvml_library=os.environ.get("TRACKER_NVML_LIBRARY", "").encode() or None)
    host = POINTER(Host)()
    name = "rt_host_new" if has("rt_host_new") else "rt_host_read"
    err = getattr(lib, name)(byref(opts), byref(host))
    if err:
        raise NativeError(name, err)
    return host


def host_to_server_info(h) -> dict:
    """The Python tracker's server_info dict of an rt_host."""
    gpu_count = h.gpu_count if h.gpu_count > 0 else 0
    gpu_name = text(h.gpu_model) or ""
    memory = h.memory_mib
    vram = h.gpu_memory_mib
    return {
        "os": os.uname().sysname,
        "vcpus": int(h.vcpus) if h.vcpus > 0 else os.cpu_count(),
        "memory_mb": round(memory, 2) if memory == memory else 0,
        "gpu_count": int(gpu_count),
        "gpu_names": [gpu_name] * int(gpu_count) if gpu_name else [],
        "gpu_name": gpu_name,
        "gpu_memory_mb": float(vram) if vram == vram and gpu_count else 0.0,
    }


def get_server_info() -> dict:
    """The server's vCPUs, memory and GPUs.

    Returns:
        A dict with `os`, `vcpus` (online logical CPUs), `memory_mb` (total memory in MiB),
        `gpu_count`, `gpu_names` (a list, empty without GPUs), `gpu_name` (the GPUs' name,
        "" without) and `gpu_memory_mb` (VRAM of all GPUs in MiB, 0 without).

    >>> info = get_server_info()
    >>> sorted(info)
    ['gpu_count', 'gpu_memory_mb', 'gpu_name', 'gpu_names', 'memory_mb', 'os', 'vcpus']
    >>> info["vcpus"] >= 1 and info["memory_mb"] > 0
    True
    """
    host = read_host()
    try:
        return host_to_server_info(host.contents)
    finally:
        lib.rt_host_free(host)
