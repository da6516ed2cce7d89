"""resource_tracker - tracks the resource usage of a process tree and of the machine, with the
Python resource-tracker's interface, on the C library libresource-tracker (a thread of this
process samples: no subprocess, a small memory footprint)."""

from ._version import __version__
from .tracker import ResourceTracker

# imported when first used (PEP 562), so that `import resource_tracker` stays small
_LAZY = {"ProcessTracker": "csv_trackers", "SystemTracker": "csv_trackers",
         "PidTracker": "csv_trackers", "get_cloud_info": "cloud_info",
         "get_server_info": "server_info"}


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "ResourceTracker",
    "ProcessTracker",
    "SystemTracker",
    "PidTracker",
    "get_cloud_info",
    "get_server_info",
    "__version__",
]
