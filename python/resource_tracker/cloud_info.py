"""cloud_info.py - which cloud, instance type and region the machine runs in, as the Python
tracker's get_cloud_info reports it, found by the C library (every vendor's metadata service
asked at once, 2 s at most). The library reads no environment: TRACKER_CLOUD_DISCOVERY=0 and
TRACKER_CLOUD_METADATA_URL are read here."""

import os
from ctypes import byref
from time import time

from ._native import RT_ERR_DISABLED, CloudHandle, CloudOptions, NativeError, lib, new, text

UNKNOWN = "unknown"


def discovery_disabled() -> bool:
    """TRACKER_CLOUD_DISCOVERY set to 0 (or false, no, off)."""
    return os.environ.get("TRACKER_CLOUD_DISCOVERY", "").strip().lower() in ("0", "false", "no", "off")


def start_discovery():
    """Starts discovery in the background: its handle (a CloudHandle), or None when it is turned off.
    Free the handle with lib.rt_cloud_free."""
    if discovery_disabled():
        return None
    url = os.environ.get("TRACKER_CLOUD_METADATA_URL") or None
    opts = new(CloudOptions, metadata_url=url.encode() if url else None)
    handle = CloudHandle()
    err = lib.rt_cloud_start(byref(opts), byref(handle))
    if err == RT_ERR_DISABLED:
        return None
    if err:
        raise NativeError("rt_cloud_start", err, url)
    return handle


def discovery_result(handle, wait_secs: float):
    """The cloud_info dict of a discovery, or None while it still runs after wait_secs."""
    r = lib.rt_cloud_result(handle, wait_secs)
    if not r:
        return None
    c = r.contents
    return {
        "vendor": text(c.vendor_id) or UNKNOWN,
        "instance_type": text(c.instance_type) or UNKNOWN,
        "region": text(c.region_id) or UNKNOWN,
        "discovery_time": c.discovery_secs if c.discovery_secs == c.discovery_secs else 0.0,
    }


def unknown_cloud(discovery_time: float = 0.0) -> dict:
    return {"vendor": UNKNOWN, "instance_type": UNKNOWN, "region": UNKNOWN,
            "discovery_time": discovery_time}


def get_cloud_info() -> dict:
    """Detects the cloud environment (at most about 2 seconds).

    Returns:
        A dict with `vendor` (aws, gcp, azure, hcloud, upcloud, ...), `instance_type`,
        `region` ("unknown" where not found, all "unknown" off a cloud or with
        TRACKER_CLOUD_DISCOVERY=0) and `discovery_time` (seconds taken).

    >>> sorted(get_cloud_info())
    ['discovery_time', 'instance_type', 'region', 'vendor']
    """
    t0 = time()
    handle = start_discovery()
    if handle is None:
        return unknown_cloud(time() - t0)
    try:
        return discovery_result(handle, 3.0) or unknown_cloud(time() - t0)
    finally:
        lib.rt_cloud_free(handle)
