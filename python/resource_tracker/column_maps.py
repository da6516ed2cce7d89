"""column_maps.py - the column names of the metrics frames: human-readable names, the factors
that turn a column into bytes, and the server allocation checks, as the Python
resource-tracker 0.5 documents them (memory and VRAM in MiB, disk space in GB of 1000**3
bytes)."""

# column name -> human-readable name (get_combined_metrics(human_names=True))
HUMAN_NAMES_MAPPING = {
    "timestamp": "Timestamp",
    # the machine
    "processes": "processes",
    "utime": "CPU time (user)",
    "stime": "CPU time (system)",
    "cpu_usage": "CPU usage",
    "memory_free_mib": "free memory",
    "memory_used_mib": "used memory",
    "memory_buffers_mib": "memory buffers",
    "memory_cached_mib": "memory page/file cached",
    "memory_active_mib": "active memory",
    "memory_inactive_mib": "inactive memory",
    "disk_read_bytes": "disk read",
    "disk_write_bytes": "disk write",
    "disk_space_total_gb": "disk space total",
    "disk_space_used_gb": "disk space used",
    "disk_space_free_gb": "disk space free",
    "net_recv_bytes": "inbound network traffic",
    "net_sent_bytes": "outbound network traffic",
    "gpu_usage": "GPU usage",
    "gpu_vram_mib": "VRAM used",
    "gpu_utilized": "GPUs in use",
    # the tracked process tree (disk_read_bytes ... as above)
    "pid": "PID",
    "children": "children",
    "memory_mib": "memory usage",
}

_MIB = 1024 * 1024
_GB = 1000 * 1000 * 1000

# column name -> factor to bytes (get_combined_metrics(bytes=True))
BYTE_MAPPING = {
    "memory_mib": _MIB,
    "memory_free_mib": _MIB,
    "memory_used_mib": _MIB,
    "memory_buffers_mib": _MIB,
    "memory_cached_mib": _MIB,
    "memory_active_mib": _MIB,
    "memory_inactive_mib": _MIB,
    "gpu_vram_mib": _MIB,
    "disk_space_total_gb": _GB,
    "disk_space_used_gb": _GB,
    "disk_space_free_gb": _GB,
}

# The Python tracker's rules for "shared" (kept for reference and for code that reads them):
# the machine's mean above the tree's times percent, or above the tree's plus absolute. This
# package takes the guess from the C library's rule instead (rt_allocation, see server_info).
# The memory row's absolute is 0.5's as it stands (512 * 1024, its comment says 512 MiB: a kB
# figure left from 0.4 next to the MiB columns), kept so that code reading it sees 0.5's table.
SERVER_ALLOCATION_CHECKS = [
    {"process_column": "cpu_usage", "system_column": "cpu_usage", "percent": 1.25, "absolute": 0.25},
    {"process_column": "memory_mib", "system_column": "memory_used_mib", "percent": 1.5, "absolute": 512 * 1024},
    {"process_column": "gpu_usage", "system_column": "gpu_usage", "percent": 1.25, "absolute": 0.2},
    {"process_column": "gpu_vram_mib", "system_column": "gpu_vram_mib", "percent": 1.25, "absolute": 512},
]

# The columns of the Python tracker's report charts (get_combined_metrics(bytes=True,
# human_names=True) names); our report is the C library's, this is kept for code that reads it.
REPORT_CSV_MAPPING = {
    "cpu": ["Timestamp", "Process CPU usage", "System CPU usage"],
    "mem": ["Timestamp", "Process memory usage", "System used memory"],
    "disk": ["Timestamp", "Process disk read", "System disk read", "Process disk write", "System disk write"],
    "disk_space": ["Timestamp", "System disk space used"],
    "net": ["Timestamp", "System inbound network traffic", "System outbound network traffic"],
    "gpu_usage": ["Timestamp", "Process GPU usage", "System GPU usage"],
    "gpu_utilized": ["Timestamp", "Process GPUs in use", "System GPUs in use"],
    "gpu_vram_mib": ["Timestamp", "Process VRAM used", "System VRAM used"],
}
