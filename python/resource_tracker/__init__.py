"""resource_tracker - tracks the resource usage of a process tree and of the machine, with the
Python resource-tracker's interface, on the C library libresource-tracker (a thread of this
process samples: no subprocess, a small memory footprint)."""

from ._version import __version__
from .cloud_info import get_cloud_info
from .server_info import get_server_info
from .tracker import PidTracker, ProcessTracker, ResourceTracker, SystemTracker

__all__ = [
    "ResourceTracker",
    "ProcessTracker",
    "SystemTracker",
    "PidTracker",
    "get_cloud_info",
    "get_server_info",
    "__version__",
]
