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


def test_each_phase_under_other_core_counts():
    """recommend_resources()["cpu_time"] (0.18): each phase's own table and ask; a phase of one
    busy process asks 1 core, a phase of two busy children is predicted under 1 core at no less
    than its CPU seconds (less the jitter dropped above the machine's cores), and the phase that decided the cores is named when the ask is above 1."""
    if not hasattr(lib, "rt_cores_fewest") or not hasattr(lib.rt_cores_fewest, "argtypes"):
        pytest.skip("the library has no phase tables (older than 0.18)")
    t = ResourceTracker(interval=0.1)
    with t:
        with t.phase("narrow"):
            _burn(0.4)
        with t.phase("wide"):
            kids = []
            for _ in range(2):
                pid = os.fork()
                if pid == 0:
                    try:
                        _burn(0.6)
                    finally:
                        os._exit(0)
                kids.append(pid)
            for pid in kids:
                os.waitpid(pid, 0)
        t.wait_for_samples(t.n_samples + 2, timeout=30)
        rec = t.recommend_resources()
        # the bound as a keyword (0.18): any slowdown allowed asks for 1 core, named as used
        loose = t.recommend_resources(max_slowdown_pct=1000)
        with pytest.raises(ValueError):
            t.recommend_resources(max_slowdown_pct=-1)
    assert loose["cpu"] == 1 and loose["cpu_time"]["max_slowdown_pct"] == 1000, loose
    assert loose["cpu_time"]["phase"] is None, loose  # an ask of 1: decided by no phase
    assert rec["cpu_time"]["max_slowdown_pct"] == 10, rec
    ct = rec["cpu_time"]
    phases = {p["name"]: p for p in ct["phases"]}
    assert set(phases) == {"narrow", "wide"}, ct["phases"]
    narrow, wide = phases["narrow"], phases["wide"]
    assert narrow["cores_asked"] == 1 and narrow["table"][0]["duration_secs"] == pytest.approx(
        narrow["duration_secs"], rel=0.1), narrow
    # under 1 core its work runs one second after another: its CPU seconds, as near as two
    # sources agree (the phase's CPU is the marks' own stamps, the stretches' is the samples'
    # tree counters split at the marks, each mark's place clamped into its sample's CPU):
    # measured 0.973-0.984 of it alone, 0.936 once under the rehearsal's load before a
    # stretch's CPU above the machine's cores was carried to the next rather than dropped
    assert wide["cpu_secs"] >= 1.1 and wide["table"][0]["duration_secs"] >= 0.9 * wide["cpu_secs"], wide
    for p in (narrow, wide):  # its ask within 10% of its own duration, one fewer not
        rows = {r["cores"]: r["duration_secs"] for r in p["table"]}
        k = p["cores_asked"]
        assert rows[k] <= 1.1 * p["table"][-1]["duration_secs"] + 1e-9 or rows[k] <= 1.1 * p["duration_secs"], p
        assert k == 1 or rows[k - 1] > 1.1 * rows[max(rows)] - 1e-9, p
    if rec["cpu"] >= 2:
        assert ct["phase"] == "wide" and ct["phase_fewer_secs"] > 0, ct
    else:
        assert ct["phase"] is None and ct["phase_fewer_secs"] is None, ct


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
