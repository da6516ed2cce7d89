"""column_maps.py - the column names of the metrics frames: human-readable names, the factors
that turn a column into bytes, and the server allocation checks, as the Python
resource-tracker documents them (process memory and the system's memory in kB, VRAM in MiB,
disk space in GiB)."""

# column name -> human-readable name (get_combined_metrics(human_names=True))
HUMAN_NAMES_MAPPING = {
    "timestamp": "Timestamp",
    # the machine
    "processes": "processes",
    "utime": "CPU time (user)",
    "stime": "CPU time (system)",
    "cpu_usage": "CPU usage",
    "memory_free": "free memory",
    "memory_used": "used memory",
    "memory_buffers": "memory buffers",
    "memory_cached": "memory page/file cached",
    "memory_active": "active memory",
    "memory_inactive": "inactive memory",
    "disk_read_bytes": "disk read",
    "disk_write_bytes": "disk write",
    "disk_space_total_gb": "disk space total",
    "disk_space_used_gb": "disk space used",
    "disk_space_free_gb": "disk space free",
    "net_recv_bytes": "inbound network traffic",
    "net_sent_bytes": "outbound network traffic",
    "gpu_usage": "GPU usage",
    "gpu_vram": "VRAM used",
    "gpu_utilized": "GPUs in use",
    # the tracked process tree
    "pid": "PID",
    "children": "children",
    "memory": "memory usage",
    "read_bytes": "disk read",
    "write_bytes": "disk write",
}

_KIB = 1024
_MIB = 1024 * 1024
_GIB = 1024 * 1024 * 1024

# column name -> factor to bytes (get_combined_metrics(bytes=True))
BYTE_MAPPING = {
    "memory": _KIB,
    "memory_free": _KIB,
    "memory_used": _KIB,
    "memory_buffers": _KIB,
    "memory_cached": _KIB,
    "memory_active": _KIB,
    "memory_inactive": _KIB,
    "gpu_vram": _MIB,
    "disk_space_total_gb": _GIB,
    "disk_space_used_gb": _GIB,
    "disk_space_free_gb": _GIB,
}

# The Python tracker's rules for "shared" (kept for reference and for code that reads them):
# the machine's mean above the tree's times percent, or above the tree's plus absolute. This
# package takes the guess from the C library's rule instead (rt_allocation, see server_info).
SERVER_ALLOCATION_CHECKS = [
    {"process_column": "cpu_usage", "system_column": "cpu_usage", "percent": 1.25, "absolute": 0.25},
    {"process_column": "memory", "system_column": "memory_used", "percent": 1.5, "absolute": 512 * 1024},
    {"process_column": "gpu_usage", "system_column": "gpu_usage", "percent": 1.25, "absolute": 0.2},
    {"process_column": "gpu_vram", "system_column": "gpu_vram", "percent": 1.25, "absolute": 512},
]
