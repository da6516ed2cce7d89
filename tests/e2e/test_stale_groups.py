"""Stale job groups judged by ownership, not by pid (issue 24): a tracker's group carries its
owner's lock (flock on the group's directory, shared by its guardian), so a tracker starting
removes only groups whose owner is provably gone. A live tracker in another PID namespace keeps
its empty group while a tracker starts beside it; a guardian whose tracker was killed still owns
the group; a group whose tracker and guardian were both SIGKILLed is removed by the next start,
but only once empty: one with processes in it is never removed.

The kernel is the judge: cgroup directories listed, /proc scanned for the processes that carry
the test's marker. The first tracker's group is kept empty by its job moving itself out to the
tracker's own group (the test's, which the tracker inherits) in every hierarchy. Every group and
process a test makes is removed in a finally block; the tests skip where no cgroup can be made
(and the PID namespace one where unshare or root is missing)."""
import json
import os
import random
import shutil
import signal
import subprocess

import pytest

from conftest import TIMEOUT_SCALE, TRACKER
from test_cgroup import dir_of, groups_of, hierarchies, job_dirs, need_any, run_tracker
from test_faults import cleanup, guardian_of, marked, marked_env, wait_for

WAIT = 20 * TIMEOUT_SCALE


def parents():
    """cgroup.procs of this process's own group in every hierarchy: where a job moves itself to
    leave its group empty."""
    out = []
    for h in hierarchies():
        own = groups_of()[h]
        if own is not None:
            out.append(os.path.join(dir_of(h, own), "cgroup.procs"))
    return out


def moving_out_job(tmp_path):
    """A shell job that moves itself out of its groups (into the tracker's own), touches
    tmp_path/ready, and waits for tmp_path/stop."""
    moves = "; ".join(f"echo $$ > {p}" for p in parents())
    return ["sh", "-c", f"{moves}; touch {tmp_path}/ready; while [ ! -e {tmp_path}/stop ]; do sleep 0.05; done"]


def first_path(out):
    """The job group's path from the first sample in the file out (waits for it)."""
    assert wait_for(lambda: out.exists() and out.read_text().count("\n") >= 1, WAIT), "no sample"
    cg = json.loads(out.read_text().split("\n")[0])["process"]["cgroup"]
    assert cg is not None and cg["own"], cg
    return cg["path"]


def empty(d):
    with open(os.path.join(d, "cgroup.procs")) as f:
        return f.read().strip() == ""


def start_beside(dirs):
    """Runs a tracker out here to its end (it exited 0); returns which of dirs are gone."""
    r = run_tracker(["-q", "--", "true"])
    assert r.returncode == 0, r.stderr
    return [d for d in dirs if not os.path.isdir(d)]


def free_pid():
    """A pid number no process of this namespace has (for the tracker in another namespace)."""
    with open("/proc/sys/kernel/pid_max") as f:
        top = min(int(f.read()), 1 << 22)
    for _ in range(1000):
        k = random.randrange(top // 4, top - 100)
        if not any(os.path.exists(f"/proc/{k + i}") for i in range(-2, 3)):
            return k
    pytest.skip("no free pid number found")


def test_live_tracker_in_another_pid_namespace_keeps_its_empty_group(tmp_path):
    """A tracker in a PID namespace of its own, with a pid that no process has out here, and
    its group left empty by its job: a tracker starting out here leaves that group alone (its
    pid means nothing here; its lock is held). The first tracker then removes it at its end."""
    need_any()
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare or not os.path.exists("/proc/sys/kernel/ns_last_pid"):
        pytest.skip("needs root, unshare and /proc/sys/kernel/ns_last_pid for a PID namespace")
    env, mark = marked_env()
    k = free_pid()
    out = tmp_path / "ns.jsonl"
    inner = " ".join(f"'{a}'" for a in [TRACKER, "-i", "0.1", "-o", str(out), "--"] + moving_out_job(tmp_path))
    # the tracker is the shell's child (not the namespace's init: that one has no guardian)
    script = f"echo {k - 1} > /proc/sys/kernel/ns_last_pid && {inner}; exit $?"
    p = subprocess.Popen([unshare, "-p", "-f", "--mount-proc", "--kill-child", "sh", "-c", script], env=env,
                         stderr=subprocess.PIPE, text=True)
    try:
        path = first_path(out)
        assert os.path.basename(path).startswith(f"resource-tracker-{k}-"), path
        dirs = [d for d in job_dirs(path) if os.path.isdir(d)]
        assert dirs
        assert wait_for(lambda: (tmp_path / "ready").exists(), WAIT)
        assert wait_for(lambda: all(empty(d) for d in dirs), WAIT), dirs
        assert not os.path.exists(f"/proc/{k}")  # kill(pid, 0) here: ESRCH, the owner lives
        gone = start_beside(dirs)
        assert gone == [], f"the live tracker's group was removed: {gone}"
        (tmp_path / "stop").touch()
        _, err = p.communicate(timeout=WAIT)
        assert p.returncode == 0, err
        left = [d for d in dirs if os.path.exists(d)]
        assert left == [], left
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        cleanup(mark, k)


def test_guardian_of_a_killed_tracker_owns_the_group(tmp_path):
    """The tracker SIGKILLed while its guardian is stopped: the group (empty: the job moved
    out) is the guardian's now, so a tracker starting leaves it alone; the guardian, let go,
    removes it and exits."""
    need_any()
    env, mark = marked_env()
    out = tmp_path / "g.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), "--"] + moving_out_job(tmp_path), env=env,
                         stderr=subprocess.DEVNULL)
    guard = []
    try:
        path = first_path(out)
        dirs = [d for d in job_dirs(path) if os.path.isdir(d)]
        assert dirs
        assert wait_for(lambda: (tmp_path / "ready").exists(), WAIT)
        assert wait_for(lambda: all(empty(d) for d in dirs), WAIT), dirs
        guard = guardian_of(mark)
        assert len(guard) == 1, marked(mark)
        os.kill(guard[0], signal.SIGSTOP)
        p.kill()
        p.wait(timeout=WAIT)
        gone = start_beside(dirs)
        assert gone == [], f"the guardian's group was removed: {gone}"
        os.kill(guard[0], signal.SIGCONT)
        assert wait_for(lambda: not guardian_of(mark), WAIT), marked(mark)
        left = [d for d in dirs if os.path.exists(d)]
        assert left == [], left
    finally:
        for g in guard:
            try:
                os.kill(g, signal.SIGCONT)
            except ProcessLookupError:
                pass
        if p.poll() is None:
            p.kill()
            p.wait()
        (tmp_path / "stop").touch()
        cleanup(mark, p.pid)


def test_group_of_a_dead_owner_goes_once_empty(tmp_path):
    """Guardian and tracker both SIGKILLed (the guardian first, so it removes nothing), a
    grandchild of the job still in the group: the next start leaves the group and the process
    alone; once the process is gone, the next start removes the group."""
    need_any()
    env, mark = marked_env()
    out = tmp_path / "d.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), "--", "sh", "-c", "setsid sleep 300 & exec sleep 300"],
                         env=env, stderr=subprocess.DEVNULL)
    try:
        path = first_path(out)
        dirs = [d for d in job_dirs(path) if os.path.isdir(d)]
        assert dirs
        assert wait_for(lambda: len([c for c in marked(mark).values() if c == "sleep"]) == 2, WAIT), marked(mark)
        guard = guardian_of(mark)
        assert len(guard) == 1, marked(mark)
        os.kill(guard[0], signal.SIGKILL)
        assert wait_for(lambda: not guardian_of(mark), WAIT), marked(mark)
        p.kill()
        p.wait(timeout=WAIT)
        # the command dies with the tracker (its parent-death signal); the grandchild stays
        assert wait_for(lambda: list(marked(mark).values()) == ["sleep"], WAIT), marked(mark)
        (orphan,) = marked(mark)
        gone = start_beside(dirs)
        assert gone == [], f"a group with a process in it was removed: {gone}"
        assert list(marked(mark)) == [orphan]  # and nothing in it was killed
        os.kill(orphan, signal.SIGKILL)
        assert wait_for(lambda: not marked(mark) and all(empty(d) for d in dirs), WAIT), dirs
        assert start_beside(dirs) == dirs
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        cleanup(mark, p.pid)
