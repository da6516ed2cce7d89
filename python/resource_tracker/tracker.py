"""tracker.py - ResourceTracker: the Python resource-tracker's background tracker on the C
library's (rt_tracker_*: a thread of this process samples the process tree and the machine),
with its metrics frames, statistics, recommendations, report and snapshots. ProcessTracker,
SystemTracker and PidTracker (the CSV-writing loops) live in csv_trackers.py and are
re-exported here, where the Python tracker has them (imported at first use)."""

from __future__ import annotations

import os
from time import time
from weakref import finalize

from ._frames import MetricsCache
from ._native import (
    RT_ERR_INVALID,
    RT_ERR_NOT_FOUND,
    RT_SAVE_GZIP,
    LogCollector,
    NativeError,
    Recommendation,
    TrackerOptions,
    byref,
    capture_fd,
    encode,
    lib,
    new,
    out_handle,
    text,
)
from ._version import __version__  # noqa: F401
from .helpers import aggregate_stats, mean, round_memory
from .tiny_data_frame import StatSpec, TinyDataFrame

DEFAULT_STAT_SPECS = [
    StatSpec(column="process_cpu_usage", agg=mean, round=2),
    StatSpec(column="process_cpu_usage", agg=max, round=2),
    StatSpec(column="process_memory", agg=mean, round=2),
    StatSpec(column="process_memory", agg=max, round=2),
    StatSpec(column="process_gpu_usage", agg=mean, round=2),
    StatSpec(column="process_gpu_usage", agg=max, round=2),
    StatSpec(column="process_gpu_vram", agg=mean, round=2),
    StatSpec(column="process_gpu_vram", agg=max, round=2),
    StatSpec(column="process_gpu_utilized", agg=mean, round=2),
    StatSpec(column="process_gpu_utilized", agg=max, round=2),
    StatSpec(column="system_disk_space_used_gb", agg=max, round=2),
    StatSpec(column="system_net_recv_bytes", agg=sum),
    StatSpec(column="system_net_sent_bytes", agg=sum),
    StatSpec(column="timestamp", agg=lambda x: max(x) - min(x), agg_name="duration"),
]


class _Native:
    """The C objects of one tracker, freed by weakref.finalize (it must not refer to the
    tracker itself)."""

    __slots__ = ("tracker", "cloud")

    def __init__(self):
        self.tracker = None
        self.cloud = None

    def close(self):
        if self.tracker is not None:
            lib.rt_tracker_free(self.tracker)
            self.tracker = None
        if self.cloud is not None:
            lib.rt_cloud_free(self.cloud)
            self.cloud = None


def _json_safe(obj):
    """obj with NaN floats as None (the snapshot is strict JSON)."""
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


class ResourceTracker:
    """Tracks the resource usage of a process tree and of the machine in the background.

    A thread of this process (the C library's tracker) samples every `interval` seconds;
    the samples are read through `process_metrics`, `system_metrics` and
    `get_combined_metrics()` while it runs or after `stop()`.

    Args:
        pid: Process ID to track. Defaults to the current process.
        children: Whether to track the process's descendants too. Defaults to True.
        interval: Sampling interval in seconds. Defaults to 1.
        method: Accepted for compatibility and ignored: no subprocess is needed, the
            tracking runs on a thread of the C library.
        autostart: Whether to start tracking immediately. Defaults to True.
        track_processes: Whether to track the process tree. Defaults to True.
        track_system: Whether to report the system-wide metrics. Defaults to True.
        discover_server: Whether to report the server's specs (server_info). Defaults to True.
        discover_cloud: Whether to discover the cloud environment in the background at
            startup (honours TRACKER_CLOUD_DISCOVERY=0). Defaults to True.

    Example:

        >>> from resource_tracker.dummy_workloads import cpu_single, cpu_multi
        >>> tracker = ResourceTracker()
        >>> cpu_single()
        >>> tracker.recommend_resources()  # doctest: +SKIP
        {'cpu': 1, 'memory': 128, 'gpu': 0, 'vram': 0}
        >>> tracker = ResourceTracker()
        >>> while tracker.n_samples == 0:
        ...     cpu_multi(duration=0.25, ncores=2)
        >>> tracker.recommend_resources()  # doctest: +SKIP
        {'cpu': 2, 'memory': 128, 'gpu': 0, 'vram': 0}
        >>> sorted(tracker.recommend_resources())
        ['cpu', 'gpu', 'memory', 'vram']
        >>> tracker.stop()
        >>> tracker.running
        False
    """

    _server_info: dict | None = None
    _cloud_info: dict | None = None

    def __init__(
        self,
        pid: int | None = None,
        children: bool = True,
        interval: float = 1,
        method: str | None = None,
        autostart: bool = True,
        track_processes: bool = True,
        track_system: bool = True,
        discover_server: bool = True,
        discover_cloud: bool = True,
    ):
        self.pid = os.getpid() if pid is None else int(pid)
        self.children = children
        self.interval = interval
        self.method = method
        self.autostart = autostart
        self.trackers = []
        if track_processes:
            self.trackers.append("process_tracker")
        if track_system:
            self.trackers.append("system_tracker")
        self.discover_server = discover_server
        self.discover_cloud = discover_cloud
        self._native = _Native()
        self._finalizer = finalize(self, self._native.close)
        self._cache = MetricsCache(children)
        self._saved = None  # a loaded run's {"metadata", "server_info", "cloud_info"}
        if autostart:
            self.start()

    # ---- running -------------------------------------------------------------------------

    def start(self):
        """Starts the tracker's thread (no process is started)."""
        if self.running:
            raise RuntimeError("Resource tracker already running, cannot start again.")
        if hasattr(self, "stop_time"):
            raise RuntimeError(
                "Resource tracker already stopped. Create a new instance instead of trying to restart it."
            )
        own = self.pid == os.getpid()
        opts = new(TrackerOptions, interval_secs=float(self.interval), pss_max_age_secs=30.0,
                   no_children=0 if self.children else 1,
                   pid=(0 if own else self.pid) if "process_tracker" in self.trackers else -1)
        handle, ref = out_handle()
        err = lib.rt_tracker_start(byref(opts), ref)
        if err == RT_ERR_NOT_FOUND and not own:
            raise ProcessLookupError(f"No process with pid {self.pid} to track")
        if err == RT_ERR_INVALID:
            raise ValueError(f"Invalid tracker options (interval={self.interval!r})")
        if err:
            raise NativeError("rt_tracker_start", err)
        self._native.tracker = handle.value
        self.start_time = time()
        self.stop_time = None
        if self.discover_cloud:
            try:
                from .cloud_info import start_discovery

                self._native.cloud = start_discovery()
            except Exception as e:  # never fail the tracking for the discovery
                _log_warning(f"Cloud discovery failed to start: {e}")

    def stop(self):
        """Stops the tracker's thread after one last sample. Stopping again does nothing."""
        if self._native.tracker is not None:
            lib.rt_tracker_stop(self._native.tracker)
        if getattr(self, "stop_time", None) is None:
            self.stop_time = time()

    @property
    def running(self) -> bool:
        """True while the tracker samples (False after stop, for a loaded run, and in a
        child process forked from this one)."""
        return self._native.tracker is not None and lib.rt_tracker_running(self._native.tracker) == 1

    def __enter__(self):
        if not self.running and not hasattr(self, "stop_time"):
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def wait_for_samples(self, n: int = 1, timeout: float = 5):
        """Waits until at least n samples were collected.

        Raises:
            RuntimeError: when timeout seconds pass first, or the tracker is stopped with
                fewer samples.
        """
        deadline = time() + timeout
        while self.n_samples < n:
            if not self.running:
                raise RuntimeError(
                    f"Resource tracker has been already stopped with {self.n_samples} sample(s), "
                    f"cannot wait to collect the requested {n} sample(s)."
                )
            left = deadline - time()
            if left <= 0:
                raise RuntimeError(f"Timed out waiting for resource tracker to collect {n} samples")
            h = self._native.tracker
            # short waits, so that signals (Ctrl-C) are handled in between
            lib.rt_tracker_wait(h, lib.rt_tracker_count(h) + 1, min(left, 0.5))

    # ---- the samples ---------------------------------------------------------------------

    def _update(self) -> MetricsCache:
        if self._native.tracker is not None:
            self._cache.update(self._native.tracker)
        return self._cache

    @property
    def n_samples(self) -> int:
        """Number of samples collected."""
        cache = self._update()
        lengths = []
        if "process_tracker" in self.trackers:
            lengths.append(cache.process_len())
        if "system_tracker" in self.trackers:
            lengths.append(cache.system_len())
        return min(lengths) if lengths else 0

    @property
    def process_metrics(self) -> TinyDataFrame:
        """The process tree's metrics (the Python tracker's ProcessTracker columns): timestamp,
        pid, children, utime, stime (CPU seconds in the interval), cpu_usage (cores),
        memory (PSS, kB), read_bytes, write_bytes, gpu_usage, gpu_vram (MiB), gpu_utilized."""
        if "process_tracker" not in self.trackers:
            return TinyDataFrame(data=[])
        return TinyDataFrame(self._update().process)

    @property
    def system_metrics(self) -> TinyDataFrame:
        """The machine's metrics (the Python tracker's SystemTracker columns): timestamp,
        processes, utime, stime, cpu_usage, memory_* (kB), disk_read_bytes,
        disk_write_bytes, disk_space_*_gb (GiB), net_recv_bytes, net_sent_bytes, gpu_usage,
        gpu_vram (MiB), gpu_utilized."""
        if "system_tracker" not in self.trackers:
            return TinyDataFrame(data=[])
        return TinyDataFrame(self._update().system)

    def get_combined_metrics(self, bytes: bool = False, human_names: bool = False,
                             system_prefix: str | None = None,
                             process_prefix: str | None = None) -> TinyDataFrame:
        """The system and process metrics side by side (one row per sample): the system's
        columns prefixed "system_" ("System " with human_names), the process's "process_"
        ("Process "), one timestamp.

        Args:
            bytes: convert memory (kB), VRAM (MiB) and disk space (GiB) columns to bytes.
            human_names: human-readable column names (column_maps.HUMAN_NAMES_MAPPING).
            system_prefix, process_prefix: other prefixes.
        """
        from .column_maps import BYTE_MAPPING, HUMAN_NAMES_MAPPING

        process = self.process_metrics
        system = self.system_metrics
        n = min(len(process), len(system))
        if n == 0:
            return TinyDataFrame(data=[])
        process, system = process[:n], system[:n]
        if bytes:
            for frame in (system, process):
                for col, factor in BYTE_MAPPING.items():
                    if col in frame.columns:
                        frame[col] = [None if v is None else v * factor for v in frame[col]]
        if system_prefix is None:
            system_prefix = "System " if human_names else "system_"
        if process_prefix is None:
            process_prefix = "Process " if human_names else "process_"

        def name(col):
            return HUMAN_NAMES_MAPPING.get(col, col) if human_names else col

        combined = system.rename(
            {c: (name(c) if c == "timestamp" else system_prefix + name(c)) for c in system.columns}
        )
        for col in process.columns[1:]:
            combined[process_prefix + name(col)] = process[col]
        return combined

    def stats(self, specs: list[StatSpec] = DEFAULT_STAT_SPECS) -> dict:
        """Statistics of the combined metrics: {column: {agg_name: value}}; the duration
        (timestamp) counts the first sample's interval too.

        Raises:
            RuntimeError: when no sample was collected yet.
        """
        if self.n_samples == 0:
            raise RuntimeError("No metrics collected (yet)")
        stats = self.get_combined_metrics().stats(specs)
        if "duration" in stats.get("timestamp", {}):
            stats["timestamp"]["duration"] += self.interval
        return stats

    # ---- discovery -------------------------------------------------------------------------

    @property
    def server_info(self) -> dict | None:
        """The server's specs (get_server_info) and `allocation`: "dedicated" or "shared"
        to the tracked processes, guessed from the samples (None before any)."""
        if self._saved is not None:
            info = self._saved.get("server_info")
            if info is not None and self.n_samples > 0 and not info.get("allocation"):
                info["allocation"] = self._allocation()
            return info
        if not self.discover_server:
            return None
        if self._server_info is None:
            from .server_info import get_server_info

            try:
                self._server_info = get_server_info()
            except Exception as e:
                _log_warning(f"Error fetching server info: {e}")
                return None
        info = dict(self._server_info)
        info["allocation"] = self._allocation() if self.n_samples > 0 else None
        return info

    def _allocation(self) -> str | None:
        if self._native.tracker is None:
            return None
        return text(lib.rt_tracker_summary(self._native.tracker).contents.allocation)

    def _cloud(self, wait_secs: float) -> dict | None:
        if self._saved is not None:
            return self._saved.get("cloud_info")
        if self._cloud_info is None and self._native.cloud is not None:
            from .cloud_info import discovery_result

            self._cloud_info = discovery_result(self._native.cloud, wait_secs)
        elif self._cloud_info is None and self.discover_cloud and hasattr(self, "start_time"):
            from .cloud_info import unknown_cloud

            self._cloud_info = unknown_cloud()  # discovery turned off in the environment
        return self._cloud_info

    @property
    def cloud_info(self) -> dict | None:
        """The cloud environment (get_cloud_info): None while the discovery still runs."""
        return self._cloud(0.0)

    # ---- recommendations and the report ------------------------------------------------------

    def recommend_resources(self, historical_stats: list[dict] = []) -> dict:
        """Recommended resources for the next run: {'cpu': cores (the mean use), 'memory':
        MiB (peak PSS + 20%, rounded up), 'gpu': GPUs used, 'vram': MiB (peak + 20%)}.

        Args:
            historical_stats: stats() of earlier runs to combine with this one.
        """
        self.wait_for_samples(n=1, timeout=self.interval * 5)
        if not historical_stats:
            rec = new(Recommendation)
            err = lib.rt_tracker_recommend(self._native.tracker, byref(rec))
            if err:
                raise NativeError("rt_tracker_recommend", err, "no tracked process samples")
            return {"cpu": int(rec.cpu), "memory": int(rec.memory_mib), "gpu": int(rec.gpu),
                    "vram": int(rec.vram_mib)}
        stats = aggregate_stats([self.stats()] + list(historical_stats))
        gpu = stats["process_gpu_usage"]
        vram_max = stats["process_gpu_vram"]["max"]
        return {
            "cpu": max(1, round(stats["process_cpu_usage"]["mean"])),
            "memory": round_memory(mb=stats["process_memory"]["max"] * 1.2 / 1024),
            "gpu": max(1, round(gpu["max"])) if gpu["mean"] > 0 else 0,
            "vram": round_memory(mb=vram_max * 1.2) if vram_max > 0 else 0,
        }

    def recommend_server(self, **kwargs) -> dict:
        """The cheapest on-demand cloud server that fits recommend_resources(), from the Spare
        Cores Keeper API (TRACKER_KEEPER_URL): vendor_id, api_reference, display_name, vcpus,
        memory_amount (MiB), gpu_count, min_price_ondemand (USD/hour).

        Args:
            historical_stats: as for recommend_resources. Other keyword arguments (the Keeper's
                filters) are accepted and not applied.

        Raises:
            RuntimeError: when the lookup fails or no server fits.
        """
        from .keeper import cheapest, server_to_dict

        rec = self.recommend_resources(historical_stats=kwargs.pop("historical_stats", []))
        server, note = cheapest(rec)
        if server is None:
            raise RuntimeError(f"No server recommendation from the Keeper API: {note}")
        return server_to_dict(server)

    def report(self, integration: str = "standalone",
               historical_stats: list[dict] = [], status_failed: bool = False):
        """The HTML report of the run (a Report: a str with save() and browse()), made by the
        C library with the host, the cloud, the recommendation and the cheapest server. A
        failing Keeper lookup is noted in the report, never an error."""
        from .keeper import cheapest, get_instance_price, recommendation_struct
        from .report import cloud_from_cloud_info, host_from_server_info, make_report
        from .server_info import read_host

        self.wait_for_samples(n=1, timeout=self.interval * 5)
        rec_struct = None
        if historical_stats:
            rec = self.recommend_resources(historical_stats=historical_stats)
            rec_struct = recommendation_struct(rec)
            rec_struct.runs = 1 + len(historical_stats)
        else:
            rec = self.recommend_resources()
        try:
            server, note = cheapest(rec)
        except Exception as e:
            server, note = None, str(e)
        cloud = self._cloud(2.5)
        price = instance = None
        if cloud and cloud.get("instance_type", "unknown") != "unknown":
            instance = f"{cloud['vendor']}:{cloud['instance_type']}"
            try:
                price = get_instance_price(cloud["vendor"], cloud.get("region"), cloud["instance_type"])
            except Exception:
                price = None
        host_ptr = None
        try:
            if self._saved is None:
                host_ptr = read_host()
                host = type(host_ptr.contents).from_buffer_copy(host_ptr.contents)
                host.allocation = encode(self._allocation())
            else:
                host = host_from_server_info(self.server_info)
            return make_report(self._native.tracker, host, cloud_from_cloud_info(cloud), rec_struct,
                               server, note, status_failed, price, instance)
        finally:
            if host_ptr is not None:
                lib.rt_host_free(host_ptr)

    # ---- snapshots -------------------------------------------------------------------------

    def _extra_json(self) -> bytes:
        import json

        extra = {
            "server_info": self.server_info,
            "cloud_info": self.cloud_info,
            "metadata": {
                "method": self.method,
                "autostart": self.autostart,
                "track_processes": "process_tracker" in self.trackers,
                "track_system": "system_tracker" in self.trackers,
                "discover_server": self.discover_server,
                "discover_cloud": self.discover_cloud,
            },
        }
        return json.dumps(_json_safe(extra)).encode()

    def _save(self, flags: int, fd: int) -> None:
        if self._native.tracker is None:
            raise RuntimeError("Resource tracker was never started: nothing to save")
        err = lib.rt_tracker_save(self._native.tracker, self._extra_json(), flags, fd)
        if err:
            raise NativeError("rt_tracker_save", err)

    def snapshot(self) -> dict:
        """The run as a dict in the Python tracker's snapshot layout (metadata, server_info,
        cloud_info, process_metrics, system_metrics; "columns" at full precision)."""
        import json

        return json.loads(self.dumps())

    def dumps(self) -> str:
        """The snapshot as a JSON string."""
        _, data = capture_fd(lambda fd: self._save(0, fd))
        return data.decode("utf-8")

    def dump(self, file: str) -> None:
        """Writes the snapshot to file as gzipped JSON (the Python tracker's dump format)."""
        with open(file, "wb") as f:
            self._save(RT_SAVE_GZIP, f.fileno())

    @classmethod
    def from_snapshot(cls, snapshot: dict) -> "ResourceTracker":
        """A stopped tracker holding the run of a snapshot dict."""
        import json

        return cls.loads(json.dumps(snapshot))

    @classmethod
    def loads(cls, s) -> "ResourceTracker":
        """A stopped tracker holding the run of a JSON snapshot (str or bytes)."""
        data = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        log = LogCollector()
        handle, ref = out_handle()
        err = lib.rt_tracker_load_buffer(data, len(data), log.fn, None, ref)
        if err:
            raise ValueError(f"Not a resource tracker snapshot: {log.last() or text(lib.rt_strerror(err))}")
        return cls._from_handle(handle.value)

    @classmethod
    def load(cls, file: str) -> "ResourceTracker":
        """A stopped tracker holding the run of a snapshot file (gzipped or not)."""
        log = LogCollector()
        handle, ref = out_handle()
        err = lib.rt_tracker_load(os.fsencode(file), log.fn, None, ref)
        if err == RT_ERR_NOT_FOUND:
            raise FileNotFoundError(file)
        if err:
            raise ValueError(f"{file}: not a resource tracker snapshot: "
                             f"{log.last() or text(lib.rt_strerror(err))}")
        return cls._from_handle(handle.value)

    @classmethod
    def _from_handle(cls, handle) -> "ResourceTracker":
        import json

        saved = json.loads(text(lib.rt_tracker_saved_info(handle)) or "{}")
        meta = saved.get("metadata") or {}
        t = cls(pid=meta.get("pid") or 0, children=meta.get("children", True),
                interval=meta.get("interval") or 1, method=meta.get("method"), autostart=False,
                track_processes=meta.get("track_processes", True),
                track_system=meta.get("track_system", True),
                discover_server=meta.get("discover_server", True),
                discover_cloud=meta.get("discover_cloud", True))
        t.autostart = meta.get("autostart", True)
        t._native.tracker = handle
        t._saved = saved
        t.start_time = meta.get("start_time")
        t.stop_time = meta.get("stop_time")
        return t


def __getattr__(name):
    if name in ("PidTracker", "ProcessTracker", "SystemTracker"):
        from . import csv_trackers

        return getattr(csv_trackers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _log_warning(msg: str) -> None:
    from logging import getLogger

    getLogger("resource_tracker").warning(msg)
