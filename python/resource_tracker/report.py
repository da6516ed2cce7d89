"""report.py - the HTML report: Report (the HTML as a str, with save and browse) and its
making from a tracker by the C library (rt_tracker_report), with the host, the cloud, the
cheapest server and the prices passed in."""

from ctypes import byref, pointer
from typing import Optional

from ._native import (
    Cloud,
    Host,
    NativeError,
    Recommendation,
    ReportInfo,
    Server,
    capture_fd,
    encode,
    lib,
    new,
)
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


def host_from_server_info(info: Optional[dict]) -> Optional[Host]:
    """An rt_host of a server_info dict (a loaded run's), or None."""
    if not info:
        return None
    names = info.get("gpu_names") or []
    return Host(
        vcpus=int(info.get("vcpus") or 0) or RT_NULL_I64,
        memory_mib=float(info.get("memory_mb") or NAN),
        gpu_model=encode(info.get("gpu_name") or (names[0] if names else None)),
        gpu_count=int(info.get("gpu_count") or 0),
        gpu_memory_mib=float(info.get("gpu_memory_mb") or 0.0),
        storage_gb=NAN,
        os=encode(info.get("os")),
        allocation=encode(info.get("allocation")),
    )


def cloud_from_cloud_info(info: Optional[dict]) -> Optional[Cloud]:
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


def make_report(handle, host: Optional[Host], cloud: Optional[Cloud],
                recommendation: Optional[Recommendation], server: Optional[Server],
                keeper_note: Optional[str], status_failed: bool,
                current_price: Optional[float], current_instance: Optional[str]) -> Report:
    """rt_tracker_report with these facts; the tracker's own summary (and recommendation,
    when none is given)."""
    info = new(ReportInfo, exit_status=1 if status_failed else -1,
               current_price_usd_per_hour=current_price if current_price is not None else NAN)
    keep = [host, cloud, recommendation, server]  # alive through the call
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
    err, html = capture_fd(lambda fd: lib.rt_tracker_report(handle, byref(info), fd))
    del keep
    if err:
        raise NativeError("rt_tracker_report", err)
    return Report(html.decode("utf-8", "replace"))


__all__ = ["Report", "round_memory", "make_report", "host_from_server_info",
           "cloud_from_cloud_info"]
