"""tracker.py - ResourceTracker: the Python resource-tracker's background tracker on the C
library's (rt_tracker_*: a thread of this process samples the process tree and the machine).
This file holds what tracking needs (start, stop, the samples as metrics frames); statistics,
recommendations, the report and snapshots are thin methods over _analysis.py, keeper.py,
report.py and _snapshot.py, imported when first used, so that importing and tracking compile
little. ProcessTracker, SystemTracker and PidTracker (the CSV-writing loops) live in
csv_trackers.py and are re-exported here, where the Python tracker has them."""

from __future__ import annotations

import os
from time import time
from weakref import finalize

from ._frames import MetricsCache
from ._native import (RT_ERR_INVALID, RT_ERR_NOT_FOUND, NativeError, TrackerHandle, TrackerOptions, byref, lib,
                      new, out_handle)
from ._version import __version__  # noqa: F401
from .tiny_data_frame import TinyDataFrame


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


class _Phase:
    """What ResourceTracker.phase returns: marks the start on entry and the stop on exit."""

    __slots__ = ("_tracker", "_name")

    def __init__(self, tracker, name):
        self._tracker = tracker
        self._name = name

    def __enter__(self):
        self._tracker._mark(lib.rt_tracker_phase_start, self._name)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self._tracker._mark(lib.rt_tracker_phase_stop, self._name)
        return False


class ResourceTracker:
    """Tracks the resource usage of a process tree and of the machine in the background.

    A thread of this process (the C library's tracker) samples every `interval` seconds;
    the samples are read through `process_metrics`, `system_metrics` and
    `get_combined_metrics()` while it runs or after `stop()`. Where it differs from the
    Python tracker 0.5 (python/README.md lists all): no subprocess (`method` is ignored); one
    timestamp per sample for both frames; `processes` counts runnable processes; a second
    stop() does nothing; recommend_server ignores the Keeper filters; snapshots carry an
    extra "columns" member; streaming to Sentinel goes through the C library's stream. The
    columns, units and defaults are 0.5's (`memory_mib`, `autostart=False`).

    Args:
        pid: Process ID to track. Defaults to the current process.
        children: Whether to track the process's descendants too. Defaults to True.
        interval: Sampling interval in seconds. Defaults to 1.
        method: Accepted for compatibility and ignored: no subprocess is needed, the
            tracking runs on a thread of the C library.
        autostart: Whether to start tracking immediately. Defaults to False (0.4: True);
            `with ResourceTracker() as t:` starts it.
        track_processes: Whether to track the process tree. Defaults to True.
        track_system: Whether to report the system-wide metrics. Defaults to True.
        discover_server: Whether to report the server's specs (server_info). Defaults to True.
        discover_cloud: Whether to discover the cloud environment in the background at
            startup (honours TRACKER_CLOUD_DISCOVERY=0). Defaults to True.
        sentinel_token: Sentinel API token to stream the metrics with; None: the environment
            variable SENTINEL_API_TOKEN; streaming is off without a token.
        upload_interval: Seconds between two uploads while streaming. Defaults to 60.
        streaming_metadata: The run's metadata sent to Sentinel (project_name, job_name,
            tags...). Defaults to None.
        grid_zone: Where the electricity comes from, for the run's carbon (C library 0.15):
            a country code ("FR") or "vendor:region" ("aws:eu-west-3") of the library's
            table; ValueError when it is not there. None: TRACKER_GRID_ZONE, else unknown.
        grid_intensity: The grid's carbon intensity in g CO2e per kWh (wins over grid_zone);
            None: TRACKER_GRID_INTENSITY, else from the zone. The carbon is in
            stats(energy=True) and the report; unknown (None) without a grid, never a
            world average.

    Example:

        >>> from resource_tracker.dummy_workloads import cpu_single, cpu_multi
        >>> tracker = ResourceTracker(autostart=True)
        >>> cpu_single()
        >>> tracker.recommend_resources()  # doctest: +SKIP
        {'cpu': 1, 'memory': 128, 'gpu': 0, 'vram': 0}
        >>> tracker = ResourceTracker()
        >>> tracker.start()
        >>> while tracker.n_samples == 0:
        ...     cpu_multi(duration=0.25, ncores=2)
        >>> tracker.recommend_resources()  # doctest: +SKIP
        {'cpu': 2, 'memory': 128, 'gpu': 0, 'vram': 0}
        >>> sorted(tracker.recommend_resources())  # 0.5's keys, the cores' time (0.18), the GPU ask (0.19)
        ['cpu', 'cpu_time', 'gpu', 'gpu_ask', 'memory', 'vram']
        >>> tracker.stop()
        >>> tracker.running
        False
        >>> with ResourceTracker(interval=0.1) as t:
        ...     t.running
        True
        >>> t.running, t.sentinel_result
        (False, None)
    """

    _server_info: dict | None = None
    _cloud_info: dict | None = None

    def __init__(
        self,
        pid: int | None = None,
        children: bool = True,
        interval: float = 1,
        method: str | None = None,
        autostart: bool = False,
        track_processes: bool = True,
        track_system: bool = True,
        discover_server: bool = True,
        discover_cloud: bool = True,
        sentinel_token: str | None = None,
        upload_interval: float = 60,
        streaming_metadata: dict | None = None,
        *,
        grid_zone: str | None = None,
        grid_intensity: float | None = None,
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
        self.sentinel_token = sentinel_token
        self.upload_interval = upload_interval
        self.streaming_metadata = streaming_metadata
        self._streaming = None  # a TrackerStream (_stream.py) while streaming, else None
        self._sentinel_result = None
        self._stream_finished = False
        self._native = _Native()
        self._finalizer = finalize(self, self._native.close)
        self._cache = MetricsCache(children)
        self._saved = None  # a loaded run's {"metadata", "server_info", "cloud_info"}
        self._grid = None  # the carbon's rt_grid (_energy.py), None: unknown
        if grid_zone is not None or grid_intensity is not None or os.environ.get("TRACKER_GRID_ZONE") \
                or os.environ.get("TRACKER_GRID_INTENSITY"):
            from ._energy import grid_of

            self._grid = grid_of(grid_zone, grid_intensity)
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
        # what rt_tracker_start would refuse, refused before a stream registers a run for it
        interval = float(self.interval)
        if interval != 0 and not 0.01 <= interval <= 86400:
            raise ValueError(f"Invalid tracker options (interval={self.interval!r}: from 0.01 to 86400 s)")
        if not own and "process_tracker" in self.trackers and not os.path.exists(f"/proc/{self.pid}"):
            raise ProcessLookupError(f"No process with pid {self.pid} to track")
        # TRACKER_NVML_LIBRARY names the NVML to load, as for the tool and gpu_tracker's Tracker
        nvml = os.environ.get("TRACKER_NVML_LIBRARY", "").encode() or None
        opts = new(TrackerOptions, interval_secs=interval, pss_max_age_secs=30.0,
                   no_children=0 if self.children else 1, nvml_library=nvml,
                   pid=(0 if own else self.pid) if "process_tracker" in self.trackers else -1)
        if self.discover_cloud and self._native.cloud is None:
            # started first, so that a stream's registration shares this discovery
            try:
                from .cloud_info import start_discovery

                self._native.cloud = start_discovery()
            except Exception as e:  # never fail the tracking for the discovery
                _log_warning(f"Cloud discovery failed to start: {e}")
        token = self.sentinel_token or os.environ.get("SENTINEL_API_TOKEN")
        if token:
            from ._stream import TrackerStream

            self._streaming = TrackerStream(self, token, self.upload_interval, self.streaming_metadata)
            self._streaming.attach(opts)  # sets opts.on_sample / on_sample_user to the C stream
        handle, ref = out_handle(TrackerHandle)
        err = lib.rt_tracker_start(byref(opts), ref)
        if err and self._streaming is not None:
            self._streaming.close()
            self._streaming = None
        if err == RT_ERR_NOT_FOUND and not own:
            raise ProcessLookupError(f"No process with pid {self.pid} to track")
        if err == RT_ERR_INVALID:
            raise ValueError(f"Invalid tracker options (interval={self.interval!r})")
        if err:
            raise NativeError("rt_tracker_start", err)
        self._native.tracker = handle
        if self._grid is not None:
            from ._energy import set_grid

            set_grid(handle, self._grid)
        from ._place import set_place

        set_place(handle)  # what SLURM, Kubernetes or a GitHub runner gave the job (0.16)
        self.start_time = time()
        self.stop_time = None

    def stop(self, exit_code: int = 0, run_status=None):
        """Stops the tracker's thread after one last sample; while streaming, ends the
        Sentinel run with exit_code and run_status (sentinel_api.RunStatus; None: finished)
        and keeps what it answered as sentinel_result. Stopping again does nothing (the
        Python tracker's second stop() moves stop_time; ours keeps the first)."""
        if run_status is None:
            run_status = _run_status("finished")
        if self._native.tracker is not None:
            lib.rt_tracker_stop(self._native.tracker)
        if getattr(self, "stop_time", None) is None:
            self.stop_time = time()
        if self._streaming is not None and not self._stream_finished:
            self._stream_finished = True
            try:
                self._sentinel_result = self._streaming.finish(exit_code, run_status)
            except Exception as e:  # the run's data is kept; never fail the stop for it
                _log_warning(f"Streaming finalization failed: {e}")

    def cleanup(self):
        """Stops the tracker and ends what it started (the stream); removes the temporary
        files it made (this tracker makes none: its samples live in the C library's memory,
        which stays readable). Exceptions are suppressed."""
        from contextlib import suppress

        with suppress(Exception):
            self.stop()
        with suppress(Exception):
            if self._streaming is not None:
                self._streaming.close()

    @property
    def sentinel_result(self) -> dict | None:
        """What Sentinel answered when the streamed run was finished (by stop()); None when
        not streaming or not stopped yet."""
        return self._sentinel_result

    @property
    def running(self) -> bool:
        """True while the tracker samples (False after stop, for a loaded run, and in a
        child process forked from this one)."""
        return self._native.tracker is not None and lib.rt_tracker_running(self._native.tracker) == 1

    def __enter__(self):
        """Starts tracking (unless already started) and returns the tracker."""
        self.autostart = True
        if not self.running and not hasattr(self, "stop_time"):
            self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        """Stops: with exit_code=1 and RunStatus.failed when the block raised (the exception
        is never suppressed), else finished."""
        if not self.running:
            return False
        if exc_type is not None:
            self.stop(exit_code=1, run_status=_run_status("failed"))
        else:
            self.stop(exit_code=0, run_status=_run_status("finished"))
        return False

    def phase(self, name: str):
        """A context manager that marks a phase of the job, `name`, while its block runs (the
        library's rt_tracker_phase_start/stop, 0.14): phases nest, may overlap across threads,
        and are matched by name (the block's exit closes the latest open phase of its name).
        A mark costs about a microsecond and never blocks; its CPU reading is this process's
        own, exact. The phases go with the samples to the run's summary, report and snapshot.
        Best effort: a tracker that is not running, a forked child's copy, a library without
        phases or a full queue leave the block unmarked, and the block runs anyway.

        Raises:
            ValueError: name is not 1 to 255 bytes of UTF-8 without control characters.

        >>> t = ResourceTracker(interval=0.05)
        >>> with t:
        ...     with t.phase("load"):
        ...         data = list(range(1000))
        """
        if not isinstance(name, str):
            raise TypeError(f"phase name must be a str, not {type(name).__name__}")
        return _Phase(self, name)

    def _mark(self, fn, name: str) -> None:
        """Marks name with fn (rt_tracker_phase_start or _stop) when the tracker can take it."""
        data = name.encode("utf-8", "surrogatepass")
        bad = not 1 <= len(data) <= 255 or any(b < 0x20 or b == 0x7F for b in data)
        if not bad:
            try:
                data.decode("utf-8")  # no lone surrogates
            except UnicodeDecodeError:
                bad = True
        if bad:
            raise ValueError(f"not a phase name: {name!r} (1 to 255 bytes of UTF-8 without control characters)")
        handle = self._native.tracker
        if handle is None or not hasattr(fn, "argtypes"):
            return  # not started, or a library without phases (older than 0.14)
        fn(handle, data)  # refusals (stopped, forked, a full queue) are the library's to count

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
        """The process tree's metrics (the Python tracker 0.5's ProcessTracker columns):
        timestamp, pid, children, utime, stime (CPU seconds in the interval), cpu_usage
        (cores), memory_mib (PSS, MiB), disk_read_bytes, disk_write_bytes, gpu_usage,
        gpu_vram_mib, gpu_utilized. The rows end where the tracked root exited."""
        if "process_tracker" not in self.trackers:
            return TinyDataFrame(data=[])
        return TinyDataFrame(self._update().process)

    @property
    def system_metrics(self) -> TinyDataFrame:
        """The machine's metrics (the Python tracker 0.5's SystemTracker columns): timestamp,
        processes (runnable processes, /proc/stat procs_running), utime, stime, cpu_usage,
        memory_free_mib, memory_used_mib, memory_buffers_mib, memory_cached_mib,
        memory_active_mib, memory_inactive_mib (MiB), disk_read_bytes, disk_write_bytes,
        disk_space_total_gb, disk_space_used_gb, disk_space_free_gb (GB of 1000**3 bytes),
        net_recv_bytes, net_sent_bytes, gpu_usage, gpu_vram_mib, gpu_utilized. Each row has the
        same timestamp as the process row of the same sample (one reading for both)."""
        if "system_tracker" not in self.trackers:
            return TinyDataFrame(data=[])
        return TinyDataFrame(self._update().system)

    def get_combined_metrics(self, bytes: bool = False, human_names: bool = False,
                             system_prefix: str | None = None,
                             process_prefix: str | None = None,
                             offset: int | None = None) -> TinyDataFrame:
        """The system and process metrics side by side (one row per sample): the system's
        columns prefixed "system_" ("System " with human_names), the process's "process_"
        ("Process "), one timestamp (the system's and the process's samples are one reading).

        Args:
            bytes: convert the memory and VRAM columns (*_mib) and disk space (*_gb, GB) to
                bytes (column_maps.BYTE_MAPPING).
            human_names: human-readable column names (column_maps.HUMAN_NAMES_MAPPING).
            system_prefix, process_prefix: other prefixes.
            offset: skip the first offset rows (the rows read before, for incremental reads).
        """
        from ._analysis import combined_metrics

        return combined_metrics(self, bytes, human_names, system_prefix, process_prefix, offset)

    def stats(self, specs=None, energy: bool = False, efficiency: bool = False) -> dict:
        """Statistics of the combined metrics: {column: {agg_name: value}}.

        Args:
            specs: StatSpec list; None: the Python tracker's defaults (_analysis.DEFAULT_STAT_SPECS:
                mean and max of process_cpu_usage, process_memory_mib, process_gpu_usage,
                process_gpu_vram_mib, process_gpu_utilized; max of system_disk_space_used_gb; sum
                of system_net_recv_bytes and system_net_sent_bytes; timestamp "duration":
                last - first timestamp + interval, as the first sample covers an interval too);
                and (0.19, not in the Python tracker, so only where the run has them) the GPUs'
                work as NVML GPM measured it (Hopper and newer): gpu_sm_active_pct,
                gpu_sm_occupancy_pct, gpu_tensor_active_pct, gpu_dram_active_pct,
                gpu_fp64_active_pct, gpu_fp32_active_pct, gpu_fp16_active_pct (percent),
                gpu_pcie_bytes_per_sec, gpu_nvlink_bytes_per_sec, each {mean, max} (the job's
                GPUs', the devices' when gpu_work_shared {max} is 1: other processes shared
                them), process_gpus_busy {max}, process_gpu_vram_per_gpu_peak_mib {max} and
                gpu_idle_cpu_busy_secs {sum}.
            energy: True adds "energy" (not in the Python tracker, so off by default): the run's
                energy from the C library 0.15, as `summary --json`'s "energy" member with the
                figures unrounded: joules and method of the machine, process_joules and
                process_method of the job's share ("measured", "sampled" or "estimated"; a
                figure without its method is None), power_watts and process_power_watts
                ({mean, peak, p50, p95}), idle_power_watts, model, missing, the GPUs' throttle
                seconds, and carbon ({co2e_grams, process_co2e_grams, g_per_kwh, zone, name,
                source, year}; None when no grid is known: see grid_zone), and parts (0.19:
                the energy by part, the largest first: [{kind, source, method, joules,
                process_joules, devices}], e.g. the GPUs measured by NVML and the CPU estimated;
                None from a library older than 0.19) with meter_source. "energy" is None
                when the run has no energy figure or the library is older than 0.15.
            efficiency: True adds "efficiency" (C library 0.16): what the job was given where it
                runs (SLURM, Kubernetes, a GitHub Actions runner, else its cgroup's limits) and how
                much of it it used, as `summary --json`'s "efficiency" member with the figures
                unrounded (cpu_pct, memory_pct, gpu_pct, time_limit_pct, the requested figures
                with what said each); None when nothing said what the job was given.

        Raises:
            RuntimeError: when no sample was collected yet.
        """
        from ._analysis import stats

        result = stats(self, specs)
        if energy:
            from ._analysis import energy_stats

            result["energy"] = energy_stats(self)
        if efficiency:
            from ._analysis import efficiency_stats

            result["efficiency"] = efficiency_stats(self)
        return result

    @property
    def server_info(self) -> dict | None:
        """The server's specs (get_server_info) with `allocation`: None before any sample,
        then the C library's guess (rt_summary.allocation) "dedicated" or "shared" to the
        tracked processes, "unknown" when it cannot tell (no process or no system samples).
        None with discover_server=False."""
        from ._analysis import server_info

        return server_info(self)

    def summary_text(self, memory_unit: str | None = None, time_unit: str | None = None,
                     scheduler: str = "slurm", width: int | None = None) -> str:
        """The run so far as text for people, as `resource-tracker summary` prints it (the C
        library's rt_summary_write_text_cb of the tracker's statistics): the answer (what the job
        used, what to ask for, the notes), the run, the process tree, the cgroup's limits, the
        machine. Once stopped (or loaded), the same text as recorded.summary_text of the file
        dump() writes; its arguments are recorded.summary_text's.

        Raises:
            ValueError: an unknown unit or scheduler.
            RuntimeError: when the tracker was never started.
        """
        from .recorded import tracker_summary_text

        return tracker_summary_text(self, memory_unit, time_unit, scheduler, width)

    # ---- discovery -----------------------------------------------------------------------

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

    # ---- recommendations and the report ----------------------------------------------------

    def recommend_resources(self, historical_stats: list[dict] = [], *, max_slowdown_pct: float = 10.0) -> dict:
        """Recommended resources for the next run: {'cpu': cores, 'memory': MiB (the need +
        headroom, rounded up by round_memory), 'gpu': GPUs used, 'vram': MiB (peak + 20%),
        'cpu_time': what the cores cost in time (0.18)}: the C library's rt_recommend over this
        run and the historical ones. The cores are the fewest under which this run is predicted
        within max_slowdown_pct of its own duration (with historical stats, which have no table:
        the mean use, at least 1).

        Args:
            historical_stats: stats() of earlier runs to combine with this one.
            max_slowdown_pct: how much slower than this run the asked cores may make it, percent
                (0.18; `recommend --max-slowdown` of the tool).
        """
        from ._analysis import recommend_resources

        return recommend_resources(self, historical_stats, max_slowdown_pct)

    def recommend_server(self, **kwargs) -> dict:
        """The cheapest on-demand cloud server that fits recommend_resources(), from the Spare
        Cores Keeper API (TRACKER_KEEPER_URL): vendor_id, server_id, api_reference,
        display_name, vcpus, memory_amount (MiB), gpu_count, min_price_ondemand (USD/hour).

        Args:
            historical_stats: as for recommend_resources.
            **kwargs: the Python tracker's Keeper filters (vendor_id, compliance_framework_id,
                ...) are accepted and IGNORED: the C library's lookup takes no filters.

        Raises:
            RuntimeError: when the lookup fails or no server fits.
        """
        from .keeper import recommend_server

        return recommend_server(self, **kwargs)

    def report(self, integration: str = "standalone",
               historical_stats: list[dict] = [], status_failed: bool = False,
               integration_version: str | None = None):
        """The HTML report of the run (a Report: a str with save() and browse()), made by the
        C library (not the Python tracker's template) with the host, the cloud, the
        recommendation (of historical_stats too) and the cheapest server: the answer first,
        then the charts under the Python tracker's section titles ("CPU Usage", ...) with its
        line names ("Process CPU usage", "System CPU usage", ...). A failing Keeper or price
        lookup is noted in the report, never an error. integration other than "standalone"
        shows as the job's orchestrator (with integration_version after it). The status, as
        the Python tracker words it: "Pending" while the tracker runs, "Finished" after
        stop(), "Failed" with status_failed (exit status 1)."""
        from .report import tracker_report

        return tracker_report(self, integration, historical_stats, status_failed, integration_version)

    # ---- snapshots ---------------------------------------------------------------------------

    def snapshot(self) -> dict:
        """The run as a dict in the Python tracker's snapshot layout (metadata, server_info,
        cloud_info, process_metrics, system_metrics) plus "columns": the C store's columns at
        full precision, which loading prefers (a snapshot without it loads from the frames)."""
        from ._snapshot import snapshot

        return snapshot(self)

    def dumps(self) -> str:
        """The snapshot as a JSON string."""
        from ._snapshot import dumps

        return dumps(self)

    def dump(self, file: str) -> None:
        """Writes the snapshot to file as gzipped JSON (the Python tracker's dump format)."""
        from ._snapshot import dump

        dump(self, file)

    @classmethod
    def from_snapshot(cls, snapshot: dict) -> "ResourceTracker":
        """A stopped tracker holding the run of a snapshot dict."""
        from ._snapshot import from_snapshot

        return from_snapshot(cls, snapshot)

    @classmethod
    def loads(cls, s) -> "ResourceTracker":
        """A stopped tracker holding the run of a JSON snapshot (str or bytes)."""
        from ._snapshot import loads

        return loads(cls, s)

    @classmethod
    def load(cls, file: str) -> "ResourceTracker":
        """A stopped tracker holding the run of a snapshot file (gzipped or not)."""
        from ._snapshot import load

        return load(cls, file)


def __getattr__(name):
    if name in ("PidTracker", "ProcessTracker", "SystemTracker"):
        from . import csv_trackers

        return getattr(csv_trackers, name)
    if name == "DEFAULT_STAT_SPECS":
        from ._analysis import DEFAULT_STAT_SPECS

        return DEFAULT_STAT_SPECS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _run_status(name: str):
    """sentinel_api.RunStatus[name], or name itself while that module is absent."""
    try:
        from .sentinel_api import RunStatus
    except ImportError:
        return name
    return RunStatus[name]


def _log_warning(msg: str) -> None:
    from logging import getLogger

    getLogger("resource_tracker").warning(msg)
