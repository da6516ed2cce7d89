"""gpu_tracker - the gpu_tracker package's API (docs/contracts.md §14) on resource-tracker's
C library: `from gpu_tracker import Tracker` works as with gpu_tracker, and code written for it
runs unchanged. The tracking runs on a thread of this process (the library's tracker), not in a
separate tracking process; see python/README.md for where it differs. Sub-tracking
(`SubTracker`, `sub_track`, `SubTrackingAnalyzer`, `TrackingComparison`) is sub_tracker.py.
`__version__` is the gpu_tracker API implemented (5.0.1); `__implementation_version__` ours."""

from .tracker import (  # noqa: F401
    ComputeTime,
    CPUUtilization,
    GPUUtilization,
    MaxGPURAM,
    MaxRAM,
    ProcessingUnitPercentages,
    ResourceUsage,
    RSSValues,
    Tracker,
)
from .sub_tracker import (  # noqa: F401
    CodeBlockResults,
    ComparisonResults,
    SubTracker,
    SubTrackingAnalyzer,
    SubTrackingResults,
    TrackingComparison,
    sub_track,
)

from resource_tracker._version import __version__ as __implementation_version__  # noqa: E402

# The gpu_tracker version whose API this module implements, for code that checks for 5.x;
# __implementation_version__ is this implementation's (the resource-tracker package's).
__version__ = "5.0.1"
