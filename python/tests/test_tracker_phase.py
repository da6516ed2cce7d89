"""test_tracker_phase.py - ResourceTracker.phase: the marks reach the run (its snapshot's
"phases": names, a start and a stop per block, this process's pid, the marker's exact CPU over
the block), bad names raise before the block, a tracker not started marks nothing."""

import os
import time

import pytest

from resource_tracker import ResourceTracker
from resource_tracker._native import lib

pytestmark = pytest.mark.skipif(not hasattr(lib.rt_tracker_phase_start, "argtypes"),
                                reason="the library has no phases (older than 0.14)")


def _burn(secs):
    end = time.process_time() + secs
    while time.process_time() < end:
        pass


def test_phase_marks_reach_the_snapshot():
    t = ResourceTracker(interval=0.05)
    with t:
        with t.phase("load"):
            c0 = time.process_time()
            _burn(0.2)
            c1 = time.process_time()
        with t.phase("train"):
            with t.phase("step"):
                pass
        t.wait_for_samples(t.n_samples + 2, timeout=30)
    snap = t.snapshot()
    ph = snap["phases"]
    assert ph["names"] == ["load", "train", "step"]
    marks = ph["marks"]
    assert [(m[0], ph["names"][m[1]]) for m in marks] == [
        (1, "load"), (2, "load"), (1, "train"), (1, "step"), (2, "step"), (2, "train")]
    assert all(m[3] == os.getpid() for m in marks)
    assert all(m[5] == 4 for m in marks)  # RT_PHASE_CPU_MARKER: this process's exact CPU
    # the phase's CPU is this process's (all its threads: the tracker's too) within the block
    load_cpu = marks[1][4] - marks[0][4]
    assert c1 - c0 - 0.002 <= load_cpu <= c1 - c0 + 0.05


def test_bad_names_and_not_started():
    t = ResourceTracker(interval=0.05)
    with t.phase("before start"):  # not started: nothing to mark, no error
        pass
    for bad in ("", "x" * 256, "tab\there", "nul\x00", "\ud800"):
        with pytest.raises(ValueError):
            with t.phase(bad):
                pytest.fail("the block must not run")
    with pytest.raises(TypeError):
        t.phase(b"bytes")
    assert len("é" * 127) == 127 and len(("é" * 127).encode()) == 254
    with t.phase("é" * 127):
        pass
