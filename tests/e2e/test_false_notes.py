"""No false notes (issue 67, item 6): what the end of a run says is so.

- "N process(es) of the job still running" only for processes that run: as an ordinary user
  without a cgroup (nobody, --cgroup off) the tracker, the job's subreaper, reads its descendants
  anew at the end, zombies left out (the last sample's count took in a child that was exiting as
  the command ended, not yet reaped), and the summary's note follows it; 20 clean runs say
  nothing, a job that leaves a process behind is still told."""
import os
import shutil
import subprocess

import pytest

from conftest import TIMEOUT_SCALE
from test_delegation import as_nobody, collect_reports, nobody_dir, nobody_tracker

# a child it never waits for, exiting as the command does
SPAWNER = "import subprocess; subprocess.Popen(['true'])"


@pytest.fixture
def nobody_home():
    """(a directory of nobody's, the tracker to run as nobody there, its environment)."""
    if os.geteuid() != 0:
        pytest.skip("not root: the test runs the tracker as nobody")
    d = nobody_dir()
    try:
        yield (d, *nobody_tracker(d))
    finally:
        collect_reports(d)
        shutil.rmtree(d, ignore_errors=True)


def as_nobody_run(home, cmd):
    d, tracker, env = home
    return subprocess.run([tracker, "-q", "--summary", "--cgroup", "off", "-o", "/dev/null", "--", *cmd],
                          capture_output=True,
                          text=True, env=env, cwd=d, timeout=60 * TIMEOUT_SCALE, preexec_fn=as_nobody())


def test_clean_runs_say_nothing_is_left(nobody_home):
    said = []
    for _ in range(20):
        p = as_nobody_run(nobody_home, ["/usr/bin/python3", "-c", SPAWNER])
        assert p.returncode == 0, p.stderr
        said += [line for line in p.stderr.splitlines() if "still running" in line or "left behind" in line]
    print(f"\n{len(said)} of 20 clean runs said a process was left")
    assert said == []


def test_a_process_left_behind_is_told(nobody_home):
    p = as_nobody_run(nobody_home, ["sh", "-c", "(sleep 2 &)"])
    assert p.returncode == 0, p.stderr
    assert "1 process of the job still running" in p.stderr, p.stderr
    assert "process left behind" in p.stderr, p.stderr  # the summary's note too
