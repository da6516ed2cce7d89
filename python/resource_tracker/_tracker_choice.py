"""_tracker_choice.py - which module answers get_process_stats / get_system_stats, with
resource-tracker 0.5's helpers get_tracker_implementation, is_psutil_available and
is_procfs_available (re-exported by helpers.py). Both 0.5 modules are answered by the C
library here, so the choice only needs a readable /proc; psutil is never required."""

from __future__ import annotations

import os
from functools import cache
from importlib.util import find_spec
from typing import Callable


def is_psutil_available() -> bool:
    """Whether psutil can be imported (0.5's test; the trackers here do not need it)."""
    try:
        return find_spec("psutil") is not None
    except (ImportError, ValueError):
        return False


@cache
def is_procfs_available() -> bool:
    """Whether /proc is there and readable."""
    return os.path.isdir("/proc") and os.access("/proc", os.R_OK)


@cache
def get_tracker_implementation() -> tuple[Callable, Callable]:
    """(get_process_stats, get_system_stats) of the implementation to use: in 0.5 psutil's when
    psutil is installed, else procfs's; here both are the C library's, so this is
    tracker_psutil's pair when psutil is installed (as 0.5 picks it) and tracker_procfs's
    otherwise, the same functions either way. Raises ImportError without a readable /proc.

    >>> get_tracker_implementation()[0].__name__
    'get_process_stats'
    """
    if not is_procfs_available():
        raise ImportError("No tracker implementation available: the C library reads /proc, which is not readable here.")
    if is_psutil_available():
        from .tracker_psutil import get_process_stats, get_system_stats
    else:
        from .tracker_procfs import get_process_stats, get_system_stats
    return get_process_stats, get_system_stats
