"""report.py - the HTML report: Report (the HTML as a str, with save and browse) and its
making from a tracker by the C library (rt_tracker_report), with the host, the cloud, the
recommendation, the cheapest server and the prices passed in (ResourceTracker.report), in the
Python tracker 0.5's words (its chart titles and lines, its status Pending, Finished or
Failed: RT_REPORT_WORDING_PY05), after the library's answer."""

from __future__ import annotations

from ctypes import byref, pointer

from ._native import Cloud, NativeError, encode, lib, new
from ._native_more import (RT_REPORT_WORDING_PY05, RT_RUN_FAILED, RT_RUN_FINISHED, RT_RUN_RUNNING, Host, Job,
                           Recommendation, ReportInfo, Server, capture)
from .helpers import round_memory  # noqa: F401  (the Python tracker exports it from here)

RT_NULL_I64 = -(2 ** 63)
NAN = float("nan")


class Report(str):
    """An HTML report (a str) that can be saved and opened in a browser."""

    def browse(self) -> "Report":
        """Writes the report to a temporary file and opens it in the default web browser
        (the webbrowser module: $BROWSER is honoured). Returns the report."""
        import tempfile
        import webbrowser

        with tempfile.NamedTemporaryFile(suffix=".html", delete=False) as f:
            f.write(self.encode("utf-8"))
        webbrowser.open("file://" + f.name)
        return self

    def save(self, filepath: str) -> "Report":
        """Writes the report to filepath (UTF-8). Returns the report."""
        with open(filepath, "w", encoding="utf-8") as f:
            f.write(self)
        return self


def host_from_server_info(info: dict | None) -> Host | None:
    """An rt_host of a server_info dict (a loaded run's: 0.5's memory_mib and gpu_memory_mib,
    or 0.4's memory_mb and gpu_memory_mb), or None."""
    if not info:
        return None
    names = info.get("gpu_names") or []
    return Host(
        vcpus=int(info.get("vcpus") or 0) or RT_NULL_I64,
        memory_mib=float(info.get("memory_mib") or info.get("memory_mb") or NAN),
        gpu_model=encode(info.get("gpu_name") or (names[0] if names else None)),
        gpu_count=int(info.get("gpu_count") or 0),
        gpu_memory_mib=float(info.get("gpu_memory_mib") or info.get("gpu_memory_mb") or 0.0),
        storage_gb=NAN,
        os=encode(info.get("os")),
        allocation=encode(info.get("allocation")),
    )


def cloud_from_cloud_info(info: dict | None) -> Cloud | None:
    """An rt_cloud of a cloud_info dict ("unknown" as not found), or None."""
    if not info:
        return None

    def known(key):
        v = info.get(key)
        return encode(v) if v and v != "unknown" else None

    t = info.get("discovery_time")
    return Cloud(vendor_id=known("vendor"), region_id=known("region"),
                 instance_type=known("instance_type"),
                 discovery_secs=float(t) if t is not None else NAN)


def make_report(handle, host: Host | None, cloud: Cloud | None,
                recommendation: Recommendation | None, server: Server | None,
                keeper_note: str | None, status_failed: bool,
                current_price: float | None, current_instance: str | None,
                orchestrator: str | None = None, stopped: bool = True) -> Report:
    """rt_tracker_report with these facts, in the Python tracker 0.5's words; the tracker's own
    summary (and recommendation, when none is given). orchestrator: shown as the job's (e.g.
    "metaflow"). The status: Failed (exit status 1) with status_failed, else Finished when
    stopped, else Pending."""
    state = RT_RUN_FAILED if status_failed else RT_RUN_FINISHED if stopped else RT_RUN_RUNNING
    info = new(ReportInfo, exit_status=1 if status_failed else -1,
               current_price_usd_per_hour=current_price if current_price is not None else NAN,
               run_state=state, wording=RT_REPORT_WORDING_PY05)
    job = new(Job, orchestrator=encode(orchestrator)) if orchestrator else None
    keep = [host, cloud, recommendation, server, job]  # alive through the call
    if job is not None:
        info.job = pointer(job)
    if host is not None:
        info.host = pointer(host)
    if cloud is not None:
        info.cloud = pointer(cloud)
    if recommendation is not None:
        info.recommendation = pointer(recommendation)
    if server is not None:
        info.cheapest = pointer(server)
    info.keeper_note = encode(keeper_note)
    info.current_instance = encode(current_instance)
    err, html = capture("rt_tracker_report_cb",
                        lambda fn: lib.rt_tracker_report_cb(handle, byref(info), fn, None),
                        lambda fd: lib.rt_tracker_report(handle, byref(info), fd))
    del keep
    if err:
        raise NativeError("rt_tracker_report", err)
    return Report(html.decode("utf-8", "replace"))


def tracker_report(t, integration: str, historical_stats: list[dict], status_failed: bool,
                   integration_version: str | None = None) -> Report:
    """ResourceTracker.report: the recommendation of recommend_resources(historical_stats),
    the cheapest server for it (a failing lookup is one quiet line of the report, "prices:
    offline (...)" when Keeper was not reached; nothing on stderr), the price of the
    instance the run is on (a failing lookup leaves it out), the host with the allocation
    guess; integration other than "standalone" shown as the job's orchestrator (followed by
    integration_version when given); the status as 0.5 words it: Failed with status_failed
    (exit status 1), else Finished once stop() was called (or a loaded run that was stopped),
    else Pending."""
    from ._analysis import allocation
    from .keeper import get_instance_price, lookup_cheapest, prices_line, recommendation_struct

    t.wait_for_samples(n=1, timeout=t.interval * 5)
    rec = t.recommend_resources(historical_stats=historical_stats)
    rec_struct = None
    if historical_stats:
        rec_struct = recommendation_struct(rec)
        rec_struct.runs = 1 + len(historical_stats)
    try:
        server, why, offline = lookup_cheapest(rec)
        note = prices_line(why, offline)  # one quiet line: "prices: offline (...)" without a network
    except Exception as e:
        server, note, offline = None, prices_line(str(e), None), None
    cloud = t._cloud(2.5)
    price = instance = None
    if cloud and cloud.get("instance_type", "unknown") != "unknown":
        instance = f"{cloud['vendor']}:{cloud['instance_type']}"
    if instance and not offline:  # Keeper not reached: not waited for twice
        try:
            price = get_instance_price(cloud["vendor"], cloud.get("region"), cloud["instance_type"])
        except Exception:
            price = None
    host_ptr = None
    try:
        if t._saved is None:
            from .server_info import read_host

            host_ptr = read_host()
            host = Host.from_buffer_copy(host_ptr.contents)
            host.allocation = encode(allocation(t))
        else:
            host = host_from_server_info(t.server_info)
        orchestrator = integration if integration and integration != "standalone" else None
        if orchestrator and integration_version:
            orchestrator = f"{orchestrator} {integration_version}"
        stopped = getattr(t, "stop_time", None) is not None
        return make_report(t._native.tracker, host, cloud_from_cloud_info(cloud), rec_struct,
                           server, note, status_failed, price, instance, orchestrator, stopped)
    finally:
        if host_ptr is not None:
            lib.rt_host_free(host_ptr)


__all__ = ["Report", "round_memory", "make_report", "tracker_report", "host_from_server_info",
           "cloud_from_cloud_info"]
