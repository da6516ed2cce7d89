"""_stream.py - TrackerStream: a ResourceTracker's run streamed to the Sentinel API and S3
(docs/contracts.md §5) by the C library's stream (rt_stream_*), not by Python: the tracker's
thread hands every sample straight to rt_stream_add (its on_sample is that C function, its user
pointer the stream), and the stream's own thread registers the run, uploads the gzipped CSV
batches, refreshes the credentials and finishes the run. No Python runs per sample.

ResourceTracker uses it so (tracker.py):
    self._streaming = TrackerStream(self, token, self.upload_interval, self.streaming_metadata)
    self._streaming.attach(opts)     # the rt_tracker_options, before rt_tracker_start
    self._sentinel_result = self._streaming.finish(exit_code, run_status)  # after rt_tracker_stop
    self._streaming.close()          # in cleanup()

The library reads no environment; as the tool does, this reads SENTINEL_API_URL,
AWS_ENDPOINT_URL_S3, AWS_REGION, TRACKER_FINISH_TIMEOUT and XDG_STATE_HOME (the spill
directory)."""

from __future__ import annotations

import os
from ctypes import POINTER, byref, c_char_p, c_void_p, cast, pointer
from logging import getLogger
from weakref import finalize

from ._native import LOG_FN, SAMPLE_FN, encode, lib, new, text

logger = getLogger("resource_tracker.streaming")

# streaming_metadata keys that are rt_job's fields (rt_job_field_name's order)
JOB_FIELDS = ("job_name", "project_name", "stage_name", "task_name", "team", "env", "language",
              "orchestrator", "executor", "external_run_id", "container_image")
_LEVELS = {0: 10, 1: 20, 2: 30, 3: 40}  # rt_log_level -> logging's levels


def _log(_user, level, msg):
    """The stream's messages (from its own thread) on the logger resource_tracker.streaming;
    they never hold the token nor the S3 keys (the library's promise)."""
    logger.log(_LEVELS.get(level, 30), "%s", text(msg))


_LOG_FN = LOG_FN(_log)  # one for every stream, alive as long as the module


def _env_float(name: str) -> float:
    try:
        v = float(os.environ.get(name) or 0)
    except ValueError:
        logger.warning("%s is not a number: ignored", name)
        return 0.0
    return v if v > 0 else 0.0


def _spill_dir() -> str | None:
    """Where batches not yet sent wait, as the tool picks it: $XDG_STATE_HOME/resource-tracker
    (an absolute one), else ~/.local/state/resource-tracker (when HOME is a directory), else
    /tmp/resource-tracker-UID."""
    state, home = os.environ.get("XDG_STATE_HOME"), os.environ.get("HOME")
    if state and state.startswith("/"):
        return os.path.join(state, "resource-tracker")
    if home and home.startswith("/") and os.path.isdir(home):
        return os.path.join(home, ".local", "state", "resource-tracker")
    return f"/tmp/resource-tracker-{os.geteuid()}"


def _spill_fallback_dir() -> str | None:
    """Where batches go when the spill directory cannot be ours, as the tool picks it:
    $XDG_RUNTIME_DIR/resource-tracker (an absolute one), else None (the library's own fallbacks)."""
    rt = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(rt, "resource-tracker") if rt and rt.startswith("/") else None


def _job_and_command(metadata: dict | None):
    """(rt_job fields {name: str}, tags as "k=v" strings, the command's argv or None) of 0.5's
    streaming_metadata: the job's fields, `tags` (a dict or a list of "k=v"), `command` (a
    list, or a shell string split with shlex). Other keys are logged and not sent (`pid`
    silently: the API takes none)."""
    fields, tags, command, other = {}, [], None, []
    for key, value in (metadata or {}).items():
        if value is None or value == "":
            continue
        if key in JOB_FIELDS:
            fields[key] = str(value)
        elif key == "tags":
            items = value.items() if isinstance(value, dict) else None
            tags = [f"{k}={v}" for k, v in items] if items is not None else [str(t) for t in value]
        elif key == "command":
            if isinstance(value, str):
                from shlex import split

                value = split(value)
            command = [str(a) for a in value] or None
        elif key != "pid":
            other.append(key)
    if other:
        logger.warning("streaming_metadata: not sent to the Sentinel API (no such run field): %s",
                       ", ".join(sorted(other)))
    return fields, tags, command


class _State:
    """The C objects of one stream, freed by weakref.finalize (it must not refer to the
    TrackerStream nor to the tracker, only to the tracker's own _Native holder)."""

    __slots__ = ("stream", "native", "pid")

    def __init__(self, native):
        self.stream = None
        self.native = native
        self.pid = os.getpid()

    def close(self):
        if self.stream is None:
            return
        if os.getpid() != self.pid:  # a forked child: the stream's thread is the parent's
            self.stream = None
            return
        # the tracker's thread calls rt_stream_add on this stream: it stops before the stream goes
        tracker = getattr(self.native, "tracker", None)
        if tracker is not None:
            lib.rt_tracker_stop(tracker)
        stream, self.stream = self.stream, None
        lib.rt_stream_free(stream)  # finishes the run (exit code 0) when finish() was not called


class TrackerStream:
    """A tracker's run streamed by the C library (see the module's docstring).

    Args:
        tracker: the ResourceTracker (its discover_cloud, and its cloud discovery when started).
        token: the Sentinel API token.
        upload_interval: seconds between S3 batches (0.01 to 86400).
        metadata: 0.5's streaming_metadata: the job's fields, tags, command (see
            _job_and_command).
    """

    def __init__(self, tracker, token: str, upload_interval: float = 60, metadata: dict | None = None):
        self.token = token
        self.upload_interval = upload_interval
        self.metadata = dict(metadata or {})
        self._tracker_native = getattr(tracker, "_native", None)
        self._discover_cloud = bool(getattr(tracker, "discover_cloud", True))
        self._state = _State(self._tracker_native)
        self._finalizer = finalize(self, self._state.close)
        self._start_error: str | None = None
        self._result: dict | None = None

    @property
    def started(self) -> bool:
        """Whether the stream runs (attach succeeded and close() was not called)."""
        return self._state.stream is not None

    def attach(self, opts) -> bool:
        """Starts the stream and makes it the tracker's on_sample (rt_stream_add, the stream as
        its user pointer) in opts, the rt_tracker_options not yet started. True when streaming;
        False (a warning logged, opts untouched) when the stream cannot start: an invalid
        setting, libcurl or zlib missing, opts' on_sample already taken. Never raises for it."""
        from ._native_stream import StreamHandle, StreamOptions

        if self._state.stream is not None:
            raise RuntimeError("the stream is attached already")
        if opts.on_sample:
            return self._failed("the tracker's on_sample is taken")
        keep = []  # what must stay alive until rt_stream_start has copied it
        so = new(StreamOptions, token=encode(self.token), upload_interval_secs=float(self.upload_interval),
                 api_url=encode(os.environ.get("SENTINEL_API_URL") or None),
                 s3_endpoint_url=encode(os.environ.get("AWS_ENDPOINT_URL_S3") or None),
                 region=encode(os.environ.get("AWS_REGION") or None),
                 spill_dir=encode(_spill_dir()), spill_fallback_dir=encode(_spill_fallback_dir()),
                 finish_timeout_secs=_env_float("TRACKER_FINISH_TIMEOUT"), log=_LOG_FN)
        fields, tags, command = _job_and_command(self.metadata)
        if fields or tags:
            from ._native_more import Job

            job = new(Job, **{k: encode(v) for k, v in fields.items()})
            if tags:
                arr = (c_char_p * len(tags))(*[encode(t) for t in tags])
                keep.append(arr)
                job.tags, job.tag_count = cast(arr, POINTER(c_char_p)), len(tags)
            keep.append(job)
            so.job = pointer(job)
        if command:
            argv = (c_char_p * (len(command) + 1))(*[encode(a) for a in command], None)
            keep.append(argv)
            so.command = cast(argv, POINTER(c_char_p))
        host = self._host()
        cloud, own_cloud = self._cloud()
        if host:
            so.host = host
        if cloud is not None:
            so.cloud = cloud.value
        handle = StreamHandle()
        self._state.pid = os.getpid()
        try:
            err = lib.rt_stream_start(byref(so), byref(handle))
        finally:
            if host:
                lib.rt_host_free(host)
            if own_cloud:
                lib.rt_cloud_free(cloud)  # the stream holds a reference of its own
        del keep
        if err:
            return self._failed(text(lib.rt_strerror(err)))
        self._state.stream = handle
        try:  # older runs left in the spill directory go once the API answers
            lib.rt_stream_deliver_earlier(handle)
        except RuntimeError:  # a library before 0.22 does it on its own
            pass
        # the tracker's thread calls rt_stream_add(stream, sample) itself: rt_sample_fn and
        # rt_stream_add take the same two pointers; rt_stream_add's rt_error is dropped (an int
        # return value left unread by a void call, as every supported ABI allows)
        opts.on_sample = SAMPLE_FN(cast(lib.rt_stream_add, c_void_p).value)
        opts.on_sample_user = handle.value
        return True

    def _failed(self, why: str) -> bool:
        self._start_error = f"cannot start streaming: {why}"
        logger.warning("Streaming to the Sentinel API is off: %s", why)
        return False

    def _host(self):
        """The host's facts (a POINTER(Host) to free), or None when they cannot be read."""
        try:
            from .server_info import read_host

            return read_host()
        except Exception as e:  # registered without host fields
            logger.debug("no host facts for the run's registration: %s", e)
            return None

    def _cloud(self):
        """(a CloudHandle or None, whether it is ours to free): the tracker's discovery when it
        runs already, else one of our own unless the tracker discovers no cloud."""
        handle = getattr(self._tracker_native, "cloud", None)
        if handle is not None:
            return handle, False
        if not self._discover_cloud:
            return None, False
        try:
            from .cloud_info import start_discovery

            handle = start_discovery()
        except Exception as e:
            logger.debug("no cloud discovery for the run's registration: %s", e)
            handle = None
        return handle, handle is not None

    def finish(self, exit_code: int = 0, run_status=None) -> dict:
        """Ends the run at the API, after the tracker stopped: the last batch uploaded, then the
        finish call (within TRACKER_FINISH_TIMEOUT, default 10 s). run_status: RunStatus or
        "finished"/"failed" (None: failed when exit_code is not 0). Returns the dict kept as
        ResourceTracker.sentinel_result:
            run_status   "finished" or "failed", as sent
            exit_code    as sent
            reached_api  True when the API took the finish (rt_stream_finish gave RT_OK)
            error        None, or the stream's last failure (rt_stream_errmsg) when it did not;
                         what could not be sent stays in the spill directory for a later
                         delivery (`resource-tracker upload`, or the next streamed run)
        Calling it again returns the same dict."""
        if self._result is not None:
            return self._result
        status = getattr(run_status, "value", run_status)
        if status is None:
            status = "finished" if int(exit_code) == 0 else "failed"
        if status not in ("finished", "failed"):
            raise ValueError(f"run_status must be finished or failed, not {run_status!r}")
        result = {"run_status": status, "exit_code": int(exit_code), "reached_api": False, "error": None}
        stream = self._state.stream
        if stream is None or os.getpid() != self._state.pid:
            result["error"] = self._start_error or ("the stream was closed" if stream is None
                                                    else "a forked child does not stream")
        else:
            tracker = getattr(self._tracker_native, "tracker", None)
            if tracker is not None:
                lib.rt_tracker_stop(tracker)  # no rt_stream_add may follow the finish
            err = lib.rt_stream_finish(stream, int(exit_code), 1 if status == "failed" else 0)
            result["reached_api"] = err == 0
            if err:
                result["error"] = text(lib.rt_stream_errmsg(stream)) or text(lib.rt_strerror(err))
        self._result = result
        return result

    def close(self) -> None:
        """Stops the tracker's thread if it still runs, then frees the stream (which first
        finishes the run with exit code 0 when finish() was not called). Safe to call twice."""
        self._finalizer()
