"""_frames.py - the C tracker's store columns as the Python tracker 0.5's process and system
metrics: which store column feeds which of its columns, in its units (MiB, GB of 1000**3
bytes, seconds in the interval), rounded as it rounds, read in batches with
rt_tracker_column; and a cache that converts only the samples taken since the last look."""

from ctypes import c_double

from ._native import column, lib

_GB = 1000.0 ** 3

# (name, store column, factor, rounding: "int", digits, or None, value for null)
# Integer columns are whole numbers in the Python tracker's CSV and ints in the frames, as
# its 0.5 CSV reader gives them back. Memory and VRAM are MiB with
# 4 decimals and disk space GB (bytes / 1000**3) with 2, as 0.5 writes them.
PROCESS_COLUMNS = [
    ("timestamp", "timestamp", 1.0, 3, None),
    ("pid", "process_pid", 1.0, "int", None),
    ("children", "process_children", 1.0, "int", None),
    ("utime", "process_utime", 1.0, 6, None),
    ("stime", "process_stime", 1.0, 6, None),
    ("cpu_usage", "process_cores", 1.0, 4, None),
    ("memory_mib", "process_pss_mib", 1.0, 4, None),
    ("disk_read_bytes", "process_read_bytes", 1.0, "int", None),
    ("disk_write_bytes", "process_write_bytes", 1.0, "int", None),
    ("gpu_usage", "process_gpu_usage", 1.0, 4, 0.0),
    ("gpu_vram_mib", "process_gpu_vram_mib", 1.0, 4, 0.0),
    ("gpu_utilized", "process_gpu_utilized", 1.0, "int", 0),
]

SYSTEM_COLUMNS = [
    ("timestamp", "timestamp", 1.0, 3, None),
    ("processes", "cpu_runnable", 1.0, "int", None),
    ("utime", "cpu_utime", 1.0, 6, None),
    ("stime", "cpu_stime", 1.0, 6, None),
    ("cpu_usage", "cpu_cores", 1.0, 4, None),
    ("memory_free_mib", "memory_free_mib", 1.0, 4, None),
    ("memory_used_mib", "memory_used_mib", 1.0, 4, None),
    ("memory_buffers_mib", "memory_buffers_mib", 1.0, 4, None),
    ("memory_cached_mib", "memory_cached_mib", 1.0, 4, None),
    ("memory_active_mib", "memory_active_mib", 1.0, 4, None),
    ("memory_inactive_mib", "memory_inactive_mib", 1.0, 4, None),
    ("disk_read_bytes", "disk_read_bytes", 1.0, "int", None),
    ("disk_write_bytes", "disk_write_bytes", 1.0, "int", None),
    ("disk_space_total_gb", "disk_space_total_bytes", 1.0 / _GB, 2, None),
    ("disk_space_used_gb", "disk_space_used_bytes", 1.0 / _GB, 2, None),
    ("disk_space_free_gb", "disk_space_free_bytes", 1.0 / _GB, 2, None),
    ("net_recv_bytes", "net_recv_bytes", 1.0, "int", None),
    ("net_sent_bytes", "net_sent_bytes", 1.0, "int", None),
    ("gpu_usage", "gpu_usage", 1.0, 4, 0.0),
    ("gpu_vram_mib", "gpu_vram_mib", 1.0, 4, 0.0),
    ("gpu_utilized", "gpu_utilized", 1.0, "int", 0),
]

INT_COLUMNS = {
    "process": {c[0] for c in PROCESS_COLUMNS if c[3] == "int"},
    "system": {c[0] for c in SYSTEM_COLUMNS if c[3] == "int"},
}


def read_column(handle, col: int, first: int, n: int) -> list:
    """n figures of store column col from sample index first (NaN for null); fewer when the
    store has fewer."""
    if n <= 0:
        return []
    buf = (c_double * n)()
    got = lib.rt_tracker_column(handle, col, first, n, buf)
    return buf[:got]


def _convert(values, factor, rounding, null):
    out = []
    for v in values:
        if v != v:  # NaN: null
            out.append(null)
        elif rounding == "int":
            out.append(int(round(v * factor)))
        elif rounding is None:
            out.append(v * factor)
        else:
            out.append(round(v * factor, rounding))
    return out


def read_rows(handle, spec, first: int, n: int, children: bool = True) -> dict:
    """Columns of spec for samples first .. first+n-1 as {name: [values]}."""
    out = {}
    for name, col, factor, rounding, null in spec:
        if name == "children" and not children:
            out[name] = [None] * len(out.get("timestamp", []))
            continue
        out[name] = _convert(read_column(handle, column(col), first, n), factor, rounding, null)
    return out


def alive_prefix(handle, first: int, n: int) -> int:
    """How many of samples first .. first+n-1 come before the tracked root exited."""
    alive = read_column(handle, column("process_alive"), first, n)
    for i, a in enumerate(alive):
        if a == 0.0:
            return i
    return len(alive)


class MetricsCache:
    """The process and system metrics of one tracker, extended as samples arrive. The process
    rows end where the tracked root exited (as the Python tracker's process tracker ends)."""

    def __init__(self, children: bool):
        self.children = children
        self.first = None
        self.next = 0          # the next sample index to convert
        self.process_done = False
        self.process = {c[0]: [] for c in PROCESS_COLUMNS}
        self.system = {c[0]: [] for c in SYSTEM_COLUMNS}

    def update(self, handle) -> None:
        # The store may drop its oldest block between two of the calls below (every 4,096
        # samples once it is full): the columns read would then differ in length. Such a
        # read is thrown away and done again from the new first sample.
        for _ in range(8):
            first = lib.rt_tracker_first(handle)
            count = lib.rt_tracker_count(handle)
            if self.first != first:  # the first look, or the store dropped its oldest samples
                self.__init__(self.children)
                self.first = first
                self.next = first
            n = count - self.next
            if n <= 0:
                return
            system = read_rows(handle, SYSTEM_COLUMNS, self.next, n)
            process, done = None, self.process_done
            if not done:
                keep = alive_prefix(handle, self.next, n)
                done = keep < n
                if keep > 0:
                    process = read_rows(handle, PROCESS_COLUMNS, self.next, keep, self.children)
            if lib.rt_tracker_first(handle) != first:
                continue
            for name, values in system.items():
                self.system[name].extend(values)
            for name, values in (process or {}).items():
                self.process[name].extend(values)
            self.process_done = done
            self.next = count
            return

    def process_len(self) -> int:
        return len(self.process["timestamp"])

    def system_len(self) -> int:
        return len(self.system["timestamp"])
