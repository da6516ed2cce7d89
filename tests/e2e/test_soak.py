"""Soak: the tool at -i 0.1 wrapping a churning tree (build/churn: processes and threads starting
and ending all the time) for RT_SOAK_SECS (default 120), watched through /proc/PID by bench/soak's
code. Judges growth, never speed: no sample missed on the grid, no warning, the exit status
passed through, file descriptors and RSS flat after warm-up, CPU per sample late vs early."""
import importlib.machinery
import importlib.util
import os

import pytest

import conftest
from conftest import BUILD_DIR, REPO, tracker_env

SECS = float(os.environ.get("RT_SOAK_SECS", "120"))
INTERVAL = 0.1
WARMUP = min(20.0, SECS / 6)
RSS_GROWTH_KIB = 64
CPU_RATIO = 1.5
CHURN = os.path.join(BUILD_DIR, "churn")


def load_soak():
    """bench/soak (a script with no .py) as a module: the bench and this test share its code."""
    path = os.path.join(REPO, "bench", "soak")
    loader = importlib.machinery.SourceFileLoader("bench_soak", path)
    spec = importlib.util.spec_from_loader("bench_soak", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


pytestmark = [
    pytest.mark.skipif(getattr(conftest, "SANITIZED", False), reason="sanitizers change the tool's memory and CPU"),
    pytest.mark.skipif(getattr(conftest, "VALGRIND", False), reason="under valgrind the 0.1 s grid cannot be kept"),
    pytest.mark.skipif(not os.path.exists(CHURN), reason="build/churn not built"),
]


@pytest.fixture(scope="module")
def soak(tmp_path_factory):
    bench = load_soak()
    s = bench.Soak(conftest.TRACKER, CHURN, SECS, INTERVAL, poll=0.5, workdir=str(tmp_path_factory.mktemp("soak")),
                   env=tracker_env(), exit_code=7)
    s.run()
    f = s.figures(WARMUP)
    bench.print_final(s, f)  # shown with -s or on failure
    return f


def test_exit_status_and_no_warning(soak):
    assert soak["rc"] == 7, soak["stderr"]
    assert soak["stderr"] == ""
    # churn checked every child's status itself (bad) and started what it was asked to
    assert soak["churn"].get("bad") == "0" and soak["churn"].get("errors") == "0", soak["churn"]
    assert float(soak["churn"]["procs_per_sec"]) > 20 and float(soak["churn"]["threads_per_sec"]) > 40


def test_no_sample_missed(soak):
    # by the samples' own timestamps: one in every slot of the grid, none twice
    # a sample is missed only when the tool could not run for a whole interval: when it was
    # runnable and kept off the CPU for half an interval or more then (schedstat), the machine
    # missed it, not the tool (a sample within 2 ms of its next slot is then judged to be in
    # it: 'doubled'); every other one off the grid fails
    assert len(soak["off_grid"]) == soak["off_grid_starved"], soak
    assert soak["got"] == soak["expected"] - soak["missed"]
    assert abs(soak["got"] - SECS / INTERVAL) <= SECS / INTERVAL * 0.1 + 10  # the run lasted about SECS


def test_fds_flat(soak):
    # besides the files of the processes it tracks (four each, closed once they end) the tool
    # holds the same descriptors at the end as after warm-up (the fewest over five looks each),
    # and never more than the few a sample opens for a moment (its own task list)
    assert soak["fds_end"] == soak["fds_warm"], soak
    assert soak["fds_max"] - soak["fds_warm"] <= 8, soak
    assert soak["held_gone"] == 0, soak  # no descriptor of a process gone for a second
    assert soak["tree_fds_max"] <= 8 * soak["tree_pids_max"]


def test_rss_flat(soak):
    assert soak["rss_end"] - soak["rss_warm"] < RSS_GROWTH_KIB, soak
    assert soak["rss_max"] - soak["rss_warm"] < RSS_GROWTH_KIB, soak


def test_cpu_per_sample_flat(soak):
    # the tool's own CPU (schedstat / utime+stime) per sample, the last third after warm-up
    # against the first third: a generous bound, since the tree's size varies and others share
    # the machine
    assert soak["cpu_early_us"] and soak["cpu_late_us"]
    assert soak["cpu_late_us"] / soak["cpu_early_us"] < CPU_RATIO, soak


def test_grid_check_judges_late_missed_and_doubled():
    # the judge itself, on made-up timestamps: late (< one interval) is not missed
    g = load_soak().grid_check
    base = 1795361596.044
    ts = [round(base + k * 0.1, 3) for k in range(50)]
    assert g(ts, 0.1)["missed"] == 0 and g(ts, 0.1)["got"] == 49
    late = list(ts)
    late[10] = round(late[10] + 0.09, 3)
    late[30] = round(late[30] + 0.05, 3)
    r = g(late, 0.1)
    assert (r["missed"], r["doubled"], r["max_late_ms"]) == (0, 0, 90)
    dropped = ts[:20] + ts[21:]
    r = g(dropped, 0.1)
    assert (r["missed"], r["got"], r["expected"], r["off_grid"]) == (1, 48, 49, [20])
    r = g(ts[:20] + [ts[19] + 0.05] + ts[20:], 0.1)
    assert r["doubled"] == 1


def test_miss_excused_only_while_starved():
    # a sample off the grid is the machine's when the tool waited for a CPU then, else the tool's
    bench = load_soak()
    s = bench.Soak("tracker", "churn", 10, 0.1, poll=1.0, workdir="/nonexistent")
    s.polls = [{"samples": 10 * k, "wait_ns": 0} for k in range(10)]
    assert not s.starved(45)
    s.polls[5]["wait_ns"] = 60_000_000  # 60 ms runnable but not run, between looks 4 and 5
    s.polls[6:] = [dict(q, wait_ns=60_000_000) for q in s.polls[6:]]
    assert s.starved(45) and s.starved(35)
    assert not s.starved(85) and not s.starved(15)
