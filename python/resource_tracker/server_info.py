"""server_info.py - the machine's hardware (vCPUs, memory, GPUs) as the Python tracker 0.5's
get_server_info and get_total_memory_mib report it, read by the C library (rt_host_new, rt_host_read before 0.10: /proc,
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
    """The Python tracker 0.5's server_info dict of an rt_host."""
    gpu_count = h.gpu_count if h.gpu_count > 0 else 0
    gpu_name = text(h.gpu_model) or ""
    memory = h.memory_mib
    vram = h.gpu_memory_mib
    return {
        "os": os.uname().sysname,
        "vcpus": int(h.vcpus) if h.vcpus > 0 else os.cpu_count(),
        "memory_mib": round(memory, 2) if memory == memory else 0,
        "gpu_count": int(gpu_count),
        "gpu_names": [gpu_name] * int(gpu_count) if gpu_name else [],
        "gpu_name": gpu_name,
        "gpu_memory_mib": float(vram) if vram == vram and gpu_count else 0.0,
    }


def get_server_info() -> dict:
    """The server's vCPUs, memory and GPUs.

    Returns:
        A dict with `os`, `vcpus` (online logical CPUs), `memory_mib` (total memory in MiB),
        `gpu_count`, `gpu_names` (a list, empty without GPUs), `gpu_name` (the GPUs' name,
        "" without) and `gpu_memory_mib` (VRAM of all GPUs in MiB, 0 without). The Python
        tracker 0.4 named them `memory_mb` and `gpu_memory_mb`.

    >>> info = get_server_info()
    >>> sorted(info)
    ['gpu_count', 'gpu_memory_mib', 'gpu_name', 'gpu_names', 'memory_mib', 'os', 'vcpus']
    >>> info["vcpus"] >= 1 and info["memory_mib"] > 0
    True
    """
    host = read_host()
    try:
        return host_to_server_info(host.contents)
    finally:
        lib.rt_host_free(host)


def get_total_memory_mib() -> float:
    """The machine's total memory (MemTotal) in MiB, rounded to 2 decimals, as the C library
    reads it (rt_host).

    >>> get_total_memory_mib() > 0
    True
    """
    host = read_host()
    try:
        memory = host.contents.memory_mib
    finally:
        lib.rt_host_free(host)
    if memory != memory:
        raise RuntimeError("The total memory could not be read")
    return round(float(memory), 2)
