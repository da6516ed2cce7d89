"""Sharers outside the job (issue 66 item 4): a process that is not the job's maps a mapping the
job's 4 processes share (a 200 MiB file mapped MAP_SHARED, or a SysV shm segment), touches
every page, holds it and unmaps it (sharers_scenario.py). Each page's share moves with its
mapcount, so the job's PSS falls by a fifth and comes back with nothing in the job changing.
The job's pss_mib must follow within one interval of each of the outsider's maps and unmaps:
every JSON line stamped one interval or more after the outsider's own timestamp of its map's
(unmap's) end, and one interval or more before its next one began, is within 5% of the
kernel's level then (the Pss
of the job's processes' smaps_rollup, summed by this test in the middle of each hold). The tool
follows through the sharers' probe: as root the mapcounts of a few of the shared pages, read
every sample from /proc/kpagecount; as an ordinary user (the tool and the job run as nobody,
the outsider stays root) the pages' exclusive flags in pagemap, which cannot tell 4 mappers
from 5, and the sentinel, one job process's smaps_rollup read every sample, which can. They
hold with `stress-ng --cpu 2` beside them (before the probe all three failed as root: the map
followed 0.6 s late at -i 0.1, the unmap only once the outsider exited; as nobody before the
sentinel the unmap of the file was never followed, the SysV segment's 5-11 s late)."""
import os
import shutil
import tempfile

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, VALGRIND, tracker_env
from sharers_scenario import run

SHAPES = [("file", 0.1, None), ("shm", 0.1, "off"), ("file", 1.0, None)]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def judge(tmp, kind, interval, cgroup, prefix=()):
    rounds, hold = (2, 1.5) if interval < 1 else (1, 4.0)
    levels, times, samples, _ = run(TRACKER, tmp, tracker_env(), kind, interval, rounds, hold,
                                    args=["--cgroup", cgroup] if cgroup else [], timeout=60 * TIMEOUT_SCALE,
                                    prefix=prefix)
    # the outsider moved the job's PSS, as meant: a fifth of 200 MiB either way
    for a, b in zip(levels, levels[1:]):
        assert abs(a - b) > 30, levels
    wrong, judged = [], 0
    for k in range(2 * rounds):
        end = times[2 * k + 1]
        until = times[2 * k + 2] if 2 * k + 2 < len(times) else end + hold
        level = levels[k + 1]
        # (a line stamped less than an interval before the outsider's next move may have been
        # read after it began: beside stress-ng the walk comes tens of ms after the stamp)
        within = [(round(t - end, 2), v) for t, v in samples if end + interval <= t < until - interval]
        assert within, (k, end, until)  # a sample to judge in each hold
        judged += len(within)
        wrong += [("unmap" if k % 2 else "map", t, v, round(level)) for t, v in within if abs(v - level) > 0.05 * level]
    assert wrong == [], (levels, wrong)
    assert judged >= (2 * rounds if interval >= 1 else 10 * rounds), judged


@pytest.mark.parametrize("kind,interval,cgroup", SHAPES)
def test_pss_follows_an_outsider_within_one_interval(tmp_path, kind, interval, cgroup):
    if os.geteuid() != 0:
        pytest.skip("the sharers' probe reads /proc/kpagecount as root (an ordinary user's: the test below)")
    judge(str(tmp_path), kind, interval, cgroup)


@pytest.mark.parametrize("kind,interval,cgroup", SHAPES)
def test_pss_follows_an_outsider_as_an_ordinary_user(kind, interval, cgroup):
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv") or VALGRIND:
            pytest.skip("needs setpriv (util-linux) to run the tool as nobody, outside valgrind's wrapper")
        prefix = NOBODY
    tmp = tempfile.mkdtemp(prefix="rt-sharers-", dir="/tmp")  # pytest's tmp_path is root's 0700
    os.chmod(tmp, 0o777)
    try:
        judge(tmp, kind, interval, cgroup, prefix)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
