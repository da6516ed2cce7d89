"""Faults, each end to end (issue 13): the output disk fills up, the output pipe closes early,
/proc entries vanish mid-read, the job exhausts its process limit with the tracker's own threads
in the same group, the command is SIGKILLed or stopped and resumed, a flood of signals, the
real-time clock jumps, and the tracker itself is SIGKILLed. In each the tracker keeps going or
ends with one clear message, and the command's exit status passes through untouched.

The kernel is the judge: exit statuses from wait, cgroup directories listed, /proc scanned for
processes that carry the test's marker in their environment. No test asserts wall-clock time:
the grid checks use the samples' own timestamps. Groups a test makes are removed in finally
blocks; tests that need root, a tmpfs or a writable cgroup skip with the reason elsewhere."""
import contextlib
import json
import math
import os
import signal
import subprocess
import threading
import time
import uuid

import pytest

from conftest import BUILD_DIR, REPO, TRACKER, VALGRIND, tracker_env
from test_cgroup import LAYOUT, can_make, dir_of, groups_of, hierarchies, kill_group_procs, need_any, rmdir_tree

PY = "/usr/bin/python3"
FAKE_CLOCK = os.path.join(BUILD_DIR, "libfake-clock.so")
FAULT_PROC = os.path.join(BUILD_DIR, "libfault-proc.so")
METADATA = os.path.join(REPO, "tests", "stubs", "metadata_server.py")


# ---------------------------------------------------------------------------------------------
# Helpers: the marker, the processes that carry it, the groups of a tracker, samples.

def marked_env(**extra):
    """tracker_env with a fresh marker RT_FAULT_MARK (inherited by the tracker, its guardian
    and the whole job); returns (env, marker)."""
    mark = uuid.uuid4().hex
    return tracker_env(RT_FAULT_MARK=mark, **extra), mark


def state_of(pid):
    """The process state letter from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def marked(mark):
    """{pid: comm} of the live (not zombie) processes whose environment holds the marker."""
    needle = f"RT_FAULT_MARK={mark}".encode()
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0") and state_of(name) not in (None, "Z", "X"):
            out[int(name)] = comm_of(name)
    return out


def wait_for(pred, secs=10.0):
    """Polls pred every 20 ms until it is true or secs passed; returns its last value."""
    deadline = time.monotonic() + secs
    v = pred()
    while not v and time.monotonic() < deadline:
        time.sleep(0.02)
        v = pred()
    return v


def tracker_groups(tracker_pid):
    """Directories of resource-tracker-PID-* groups in every hierarchy, below this process's
    own group there (the tracker inherits it)."""
    out = []
    for h in hierarchies():
        own = groups_of()[h]
        d = dir_of(h, own or "/") if own is not None else None
        if not d or not os.path.isdir(d):
            continue
        out += [os.path.join(d, n) for n in os.listdir(d) if n.startswith(f"resource-tracker-{tracker_pid}-")]
    return out


def cleanup(mark, tracker_pid):
    """Kills whatever of the marked processes is left and removes the tracker's groups."""
    for pid in marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for d in tracker_groups(tracker_pid):
        kill_group_procs(d)
        rmdir_tree(d)


def parse(lines):
    """Every line as JSON (each must be valid)."""
    return [json.loads(l) for l in lines if l.strip()]


def messages(err):
    """The tracker's lines on stderr."""
    return [l for l in err.splitlines() if l.strip()]


@contextlib.contextmanager
def tracking(args, env=None):
    """The tracker started with args (stdout and stderr piped, text); killed at the end of the
    block if it still runs."""
    p = subprocess.Popen([TRACKER] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env or tracker_env())
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def check_grid(ts, iv):
    """The samples' own timestamps ts (one run, no jump inside) sit on the grid of interval iv:
    each falls in a grid slot of its own (no burst: slots strictly increasing), most sit near
    their slot's point, and few slots are skipped (no stall). A sample is due at its slot's
    point and may come late (the machine busy, a flood of signals to handle) but never early, so
    a slot runs from a little before its point to most of an interval after it; a late sample
    followed by one on time is no burst. The grid's phase is the one of the samples that fits
    most of them (not the first sample's own: under valgrind the first, cold scan can end 40 ms
    after the point it was due at while the rest sit on the grid)."""
    def fit(t0):
        slots = [math.floor((t - t0) / iv + 0.2) for t in ts]
        resid = sorted(abs(t - t0 - s * iv) for t, s in zip(ts, slots))
        return resid[len(resid) // 2], slots
    median, slots = min((fit(t0) for t0 in ts), key=lambda f: f[0])
    assert all(b > a for a, b in zip(slots, slots[1:])), f"two samples in one slot: {slots}"
    assert median < iv / 4, f"off the grid: median residual {median:.3f}"
    skipped = slots[-1] - slots[0] + 1 - len(slots)
    assert skipped <= max(2, len(slots) // 5), f"{skipped} grid slots without a sample: {slots}"


# ---------------------------------------------------------------------------------------------
# The output disk fills up: one line, the job runs on, --summary, report and history warn once.

@pytest.fixture
def full_tmpfs(tmp_path):
    """A 32 KiB tmpfs with 4 KiB free; skips where it cannot be mounted."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k,mode=0755", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (not root?): {r.stderr.strip()}")
    try:
        with open(mnt / "pad", "wb") as f:
            f.write(b"\0" * (28 * 1024))
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_samples(full_tmpfs):
    out = full_tmpfs / "out.json"
    r = subprocess.run([TRACKER, "-i", "0.02", "-o", str(out), "--summary", "--",
                        "sh", "-c", "sleep 1; exit 7"], capture_output=True, text=True, timeout=60,
                       env=tracker_env())
    assert r.returncode == 7, r.stderr
    said = [l for l in messages(r.stderr) if "cannot write samples" in l]
    assert said == ["resource-tracker: cannot write samples: No space left on device"], r.stderr
    assert "summary of the run" in r.stderr
    assert "Exit status                7" in r.stderr
    assert out.stat().st_size > 0  # it wrote until the disk was full


def test_dev_full():
    """/dev/full (ENOSPC on every write; no mount needed): the same one line, status 9."""
    r = subprocess.run([TRACKER, "-i", "0.05", "-o", "/dev/full", "--", "sh", "-c", "sleep 0.3; exit 9"],
                       capture_output=True, text=True, timeout=60, env=tracker_env())
    assert r.returncode == 9, r.stderr
    assert messages(r.stderr) == ["resource-tracker: cannot write samples: No space left on device"], r.stderr


def test_disk_full_report_and_history(full_tmpfs):
    fd = os.open(full_tmpfs / "pad2", os.O_WRONLY | os.O_CREAT)
    try:  # the last 4 KiB
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    r = subprocess.run([TRACKER, "-i", "0.05", "-q", "--report", str(full_tmpfs / "r.html"), "--history",
                        str(full_tmpfs / "h.db"), "--", "sh", "-c", "sleep 0.2; exit 5"], capture_output=True,
                       text=True, timeout=60, env=tracker_env())
    assert r.returncode == 5, r.stderr
    lines = messages(r.stderr)
    assert len([l for l in lines if "r.html" in l]) == 1, r.stderr
    assert len([l for l in lines if "h.db" in l]) == 1, r.stderr
    assert all("No space" in l or "full" in l for l in lines if "r.html" in l or "h.db" in l), r.stderr


# ---------------------------------------------------------------------------------------------
# The output pipe closes early: no "Broken pipe", the job untouched, SIGPIPE the job's default.

def test_pipe_closed_early(tmp_path):
    """The reader takes one sample and closes the pipe; the job (which writes nothing to
    stdout) finishes and its status 3 comes back; it ran with SIGPIPE not ignored."""
    go, sigign = tmp_path / "go", tmp_path / "sigign"
    job = f"grep SigIgn /proc/self/status > {sigign}; while [ ! -e {go} ]; do sleep 0.02; done; exit 3"
    with tracking(["-i", "0.05", "-o", "-", "--", "sh", "-c", job]) as p:
        json.loads(p.stdout.readline())
        p.stdout.close()  # the reader is gone: the next sample meets EPIPE
        time.sleep(0.3)
        go.touch()
        err = p.stderr.read()
        assert p.wait(timeout=30) == 3, err
    assert messages(err) == [], err
    mask = int(sigign.read_text().split()[1], 16)
    assert not mask & (1 << (signal.SIGPIPE - 1)), "the job inherited an ignored SIGPIPE"


def test_stderr_closed():
    """Samples to stderr (the default) whose reader is gone at once: nothing to say and no one
    to say it to; the job runs on and its status 5 comes back."""
    with tracking(["-i", "0.05", "--", "sh", "-c", "sleep 0.5; exit 5"]) as p:
        p.stderr.close()
        assert p.wait(timeout=30) == 5


def test_pipe_closed_job_writes(tmp_path):
    """`| head -1` in a shell: the job that writes to the closed pipe after it is killed by
    SIGPIPE as it would be without the tracker, and 141 comes back through the tracker."""
    go = tmp_path / "go"
    script = (f'"{TRACKER}" -i 0.05 -o - -- sh -c \'while [ ! -e {go} ]; do sleep 0.02; done; '
              f'while :; do echo x; done; exit 9\' | head -1 >/dev/null; echo "rc=${{PIPESTATUS[0]}}"')
    r = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=tracker_env())
    time.sleep(0.5)  # head has its line by then, most likely (either way the job meets EPIPE)
    go.touch()
    out, err = r.communicate(timeout=30)
    assert out.strip() == f"rc={128 + signal.SIGPIPE}", err
    assert "Broken pipe" not in err and messages(err) == [], err


# ---------------------------------------------------------------------------------------------
# /proc entries vanish mid-read: a churning tree at 10 ms, then the same with reads that fail.

# Threads and processes come and go for argv[1] seconds; with argv[2] "orphans" each child
# leaves a grandchild to the tracker (a child subreaper; the command ends only after the last
# has exited, so none is left behind on a loaded machine), else the job's own CPU time (its
# rusage and its children's: all of it then) goes to the file argv[3] at the end.
CHURN = r"""
import os, resource, sys, threading, time
end = time.monotonic() + float(sys.argv[1])
orphans = sys.argv[2] == "orphans"
held, hold = os.pipe()  # every orphan holds the write end until it exits: the end waits for them
def worker():
    while time.monotonic() < end:
        pid = os.fork()
        if pid == 0:
            if orphans and os.fork() == 0:
                os._exit(0)
            os._exit(0)
        os.waitpid(pid, 0)
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
ts = [threading.Thread(target=worker) for _ in range(3)]
[t.start() for t in ts]
[t.join() for t in ts]
os.close(hold)
os.read(held, 1)  # EOF once the last orphan has exited: none is left behind at the command's end
if not orphans:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(sys.argv[3], "w") as f:
        f.write(str(a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime))
sys.exit(6)
"""


def churn_run(env, *job_args, flags=()):
    """The churning job sampled every 10 ms: status 6, not a word, every sample JSON, the
    totals never going backwards. Returns the samples."""
    r = subprocess.run([TRACKER, "-i", "0.01", "-o", "-", *flags, "--", PY, "-c", CHURN, *job_args],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 6, r.stderr
    assert messages(r.stderr) == [], r.stderr
    samples = parse(r.stdout.splitlines())
    assert len(samples) > 20
    for key in ("cpu_secs_total", "read_bytes_total", "write_bytes_total"):
        vals = [s["process"][key] for s in samples if s["process"][key] is not None]
        assert vals == sorted(vals), f"process.{key} went backwards: {vals}"
    cg = [s["process"]["cgroup"]["cpu_secs_total"] for s in samples
          if s["process"].get("cgroup") and s["process"]["cgroup"]["cpu_secs_total"] is not None]
    assert cg == sorted(cg)
    return samples


def test_proc_churn():
    churn_run(tracker_env(), "3", "orphans")


def test_proc_reads_fail(tmp_path):
    """Through the fault shim: every 7th per-process open fails (ENOENT), every 5th read fails
    (ESRCH), every 11th comes back half, and the process it hit is gone for the tracker from
    then on. The tracker goes on without a word, and (per process, no cgroup) its total is the
    job's own CPU time: what it could no longer read comes with the rusage at the reap."""
    assert os.path.exists(FAULT_PROC), "build the fault-proc target"
    report, judge = tmp_path / "faults", tmp_path / "cpu"
    env = tracker_env(LD_PRELOAD=FAULT_PROC, FAULT_PROC_OPEN="7", FAULT_PROC_READ="5", FAULT_PROC_SHORT="11",
                      FAULT_PROC_REPORT=str(report))
    samples = churn_run(env, "2", "-", str(judge), flags=("--cgroup", "off"))
    made = dict(l.split() for l in report.read_text().splitlines())
    assert all(int(made[k]) > 0 for k in ("open", "read", "short")), made
    want = float(judge.read_text())
    got = samples[-1]["process"]["cpu_secs_total"]
    assert abs(got - want) <= 0.02 * want + 0.02, (got, want)


# ---------------------------------------------------------------------------------------------
# Descriptors run short: what the walk could not open is counted, never silently dropped.

def fd_limited_run(limit, children, tmp_path):
    """The tracker and a job of `children` sleeping children under RLIMIT_NOFILE limit (soft
    and hard, so the tracker cannot raise it); returns (samples, stderr)."""
    import resource

    def lower():
        if limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    out = tmp_path / f"fd{limit}.jsonl"
    job = f"for i in $(seq {children}); do sleep 4 & done; wait"
    p = subprocess.run([TRACKER, "-i", "0.4", "-o", str(out), "--cgroup", "off", "--", "sh", "-c", job],
                       env=tracker_env(), preexec_fn=lower, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return [json.loads(l) for l in out.read_text().splitlines()], p.stderr


@pytest.mark.skipif(VALGRIND, reason="valgrind keeps descriptors of its own within the limit")
def test_unread_processes_counted(tmp_path):
    """Under 200 descriptors with 300 children the walk cannot keep every child's files open:
    it reads those it cannot keep one file at a time, so every child is counted (child_count
    reaches the job's 300), nothing is unread and nothing said; without the limit, the same.
    (What is unread when not even one file can be opened: test_proctree_live's
    short_of_descriptors; the job's CPU against the kernel's: test_limits.py.)"""
    n = 300
    for limit in (200, 0):
        samples, err = fd_limited_run(limit, n, tmp_path)
        procs = [s["process"] for s in samples]
        assert all(p["unread_count"] == 0 for p in procs), [p["unread_count"] for p in procs]
        assert max(p["child_count"] for p in procs) == n, [p["child_count"] for p in procs]
        assert "out of file descriptors" not in err, err


# ---------------------------------------------------------------------------------------------
# The job exhausts its process limit, the tracker's own threads in the same group.

FORK_BOMB = r"""
import os, sys, time
end = time.monotonic() + 2.0
fails, kids = 0, set()
while time.monotonic() < end:
    try:
        pid = os.fork()
    except BlockingIOError:
        fails += 1
        time.sleep(0.005)
    else:
        if pid == 0:
            time.sleep(0.3)
            os._exit(0)
        kids.add(pid)
    while kids:
        try:
            p, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if p == 0:
            break
        kids.discard(p)
for p in kids:
    os.waitpid(p, 0)
sys.exit(4 if fails else 5)
"""


@pytest.mark.parametrize("pids_max", [2, 4, 12])
def test_pids_limit(tmp_path, pids_max):
    """The tracker runs in a pids group with a low pids.max, its own threads in it (cloud
    discovery against a stand-in that never answers, streaming to a closed port), the job a
    fork bomb for 2 s: the job hits EAGAIN (its status 4 says so), and the tracker never
    crashes, passes 4 through, and says no line twice. At 2 its guardian cannot be forked (one
    warning); at 4 its threads cannot all start."""
    hier = "pids" if can_make("pids") else None
    if hier is None and LAYOUT["unified"] and can_make("unified"):
        with open(os.path.join(dir_of("unified", groups_of()["unified"] or "/"), "cgroup.controllers")) as f:
            hier = "unified" if "pids" in f.read().split() else None
    if hier is None:
        pytest.skip("no writable pids controller (v1 pids or v2 with pids) here")
    d = dir_of(hier, os.path.join(groups_of()[hier] or "/", f"rt-faults-pids-{os.getpid()}"))
    os.mkdir(d)
    if not os.path.exists(os.path.join(d, "pids.max")):  # v2: pids not enabled for children here
        os.rmdir(d)
        pytest.skip("the pids controller is not enabled for new groups here")
    meta = subprocess.Popen([PY, METADATA, "silent"], stdout=subprocess.PIPE, text=True)
    t = None
    try:
        with open(os.path.join(d, "pids.max"), "w") as f:
            f.write(str(pids_max))
        url = f"http://127.0.0.1:{int(meta.stdout.readline())}"
        env, mark = marked_env(TRACKER_CLOUD_DISCOVERY="1", TRACKER_CLOUD_METADATA_URL=url,
                               SENTINEL_API_TOKEN="t0ken", SENTINEL_API_URL="http://127.0.0.1:9",
                               TRACKER_FINISH_TIMEOUT="1", XDG_STATE_HOME=str(tmp_path / "state"))
        t = subprocess.Popen(["sh", "-c", f'echo $$ > {d}/cgroup.procs && exec "$0" "$@"', TRACKER, "-i", "0.05",
                              "-o", str(tmp_path / "out.json"), "--summary", "--", PY, "-c", FORK_BOMB],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        out, err = t.communicate(timeout=120)
        assert t.returncode == 4, err
        assert "Exit status                4" in err
        said = [l for l in messages(err) if l.startswith("resource-tracker:") and "summary of the run" not in l]
        kinds = ["".join(c for c in l if not c.isdigit()) for l in said]
        assert len(kinds) == len(set(kinds)), err
        if pids_max == 2:
            assert len([l for l in said if "no guardian" in l]) == 1, err
        parse((tmp_path / "out.json").read_text().splitlines())
    finally:
        meta.kill()
        meta.wait()
        if t is not None and t.poll() is None:
            t.kill()
            t.wait()
        kill_group_procs(d)
        rmdir_tree(d)


# ---------------------------------------------------------------------------------------------
# The command is SIGKILLed; stopped and resumed.

def test_child_sigkilled():
    with tracking(["-i", "0.05", "-o", "-", "--", "sleep", "60"]) as p:
        first = json.loads(p.stdout.readline())
        os.kill(first["process"]["pid"], signal.SIGKILL)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 128 + signal.SIGKILL, err
    assert messages(err) == [], err
    last = parse(out.splitlines())[-1]
    assert last["process"]["alive"] is False


BURN = r"""
import sys, time
while time.process_time() < 0.6:
    pass
sys.exit(5)
"""


def test_child_stopped_and_resumed():
    """SIGSTOP: the tracker samples on while the job uses no CPU; SIGCONT: it finishes, 5."""
    with tracking(["-i", "0.05", "-o", "-", "--", PY, "-c", BURN]) as p:
        seen = [json.loads(p.stdout.readline())]
        pid = seen[0]["process"]["pid"]
        os.kill(pid, signal.SIGSTOP)
        assert wait_for(lambda: state_of(pid) == "T"), state_of(pid)
        since = time.time()  # samples whose interval began after this saw only the stopped job
        stopped = []
        while len(stopped) < 6:
            s = json.loads(p.stdout.readline())
            seen.append(s)
            if s["timestamp_secs"] - s["interval_secs"] > since:
                stopped.append(s)
        assert state_of(pid) == "T"
        os.kill(pid, signal.SIGCONT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 5, err
    assert messages(err) == [], err
    # the kernel counted nothing while the job was stopped: its total stands still
    assert all(s["process"]["alive"] for s in stopped), stopped
    assert len({s["process"]["cpu_secs_total"] for s in stopped}) == 1, stopped
    # the stopped intervals may still show CPU the machine's 10 ms ticks held back from earlier
    # ones, never more: what was shown up to the end of the stop is at most what was counted
    shown = sum(s["process"]["cores_used"] * s["interval_secs"] for s in seen[1:])
    assert shown <= stopped[-1]["process"]["cpu_secs_total"] + 0.001 * len(seen), (shown, stopped[-1])
    last = parse(out.splitlines())[-1]
    # the job used at least 0.6 s; each interval is capped by the machine's busy time, which
    # /proc/stat counts in 10 ms ticks
    assert last["process"]["cpu_secs_total"] >= 0.6 - 0.01


# ---------------------------------------------------------------------------------------------
# A flood of signals: the job ignores them, the tracker keeps its grid.

def test_signal_flood(tmp_path):
    go = tmp_path / "go"
    job = f"trap '' USR1 USR2 HUP; while [ ! -e {go} ]; do sleep 0.05; done; exit 4"
    lines = []
    with tracking(["-i", "0.1", "-o", "-", "--", "sh", "-c", job]) as p:
        reader = threading.Thread(target=lambda: lines.extend(p.stdout))
        reader.start()
        assert wait_for(lambda: lines or p.poll() is not None), "no sample"
        sigs = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP)
        for i in range(6000):
            os.kill(p.pid, sigs[i % 3])
            if i % 500 == 0:
                time.sleep(0.05)
        go.touch()
        err = p.stderr.read()
        assert p.wait(timeout=30) == 4, err
    reader.join()
    assert messages(err) == [], err
    samples = parse(lines)
    assert len(samples) >= 6
    # the first sample (before the flood; under valgrind its cold walk can end most of an
    # interval late) and the last (the partial interval) left out
    check_grid([s["timestamp_secs"] for s in samples[1:-1]], 0.1)


@pytest.mark.serial  # the grid's slots are 80 ms wide: four ASan workers beside it delayed one sample past its slot
def test_sigchld_flood():
    """Hundreds of orphans re-parented to the tracker (a child subreaper) exit at once, and
    SIGCHLD is sent by hand too: the grid holds, the status passes through."""
    job = "for i in $(seq 300); do (sleep 0.3 &) ; done; sleep 1; exit 8"
    with tracking(["-i", "0.1", "-o", "-", "--", "sh", "-c", job]) as p:
        p.stdout.readline()
        for _ in range(2000):
            os.kill(p.pid, signal.SIGCHLD)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 8, err
    assert messages(err) == [], err
    samples = parse(out.splitlines())
    check_grid([s["timestamp_secs"] for s in samples[1:-1]], 0.1)


# ---------------------------------------------------------------------------------------------
# The real-time clock jumps: timestamps follow it, the monotonic grid does not notice.

def test_clock_jump(tmp_path):
    assert os.path.exists(FAKE_CLOCK), "build the fake-clock target"
    offset = tmp_path / "offset"
    offset.write_text("0")
    go = tmp_path / "go"
    env = tracker_env(LD_PRELOAD=FAKE_CLOCK, FAKE_CLOCK_FILE=str(offset))
    got = []

    def read_until_jump(p, n_after):
        """Reads samples until one jumped (more than 100 s from the one before), then n_after more."""
        start = len(got)
        for _ in range(200):
            got.append(p.stdout.readline())
            ts = [json.loads(l)["timestamp_secs"] for l in got[max(start - 1, 0):]]
            if any(abs(b - a) > 100 for a, b in zip(ts, ts[1:])):
                break
        else:
            pytest.fail(f"the clock did not jump in 200 samples (is {FAKE_CLOCK} loaded?)")
        got.extend(p.stdout.readline() for _ in range(n_after))

    with tracking(["-i", "0.1", "-o", "-", "--summary", "--", "sh", "-c",
                   f"while [ ! -e {go} ]; do sleep 0.05; done; exit 2"], env=env) as p:
        got += [p.stdout.readline() for _ in range(8)]
        for jump in ("3600", "-7200"):
            tmp = tmp_path / "offset.new"
            tmp.write_text(jump)
            os.rename(tmp, offset)  # whole at once for the reader
            read_until_jump(p, 8)
        go.touch()
        out, err = p.communicate(timeout=30)
    assert p.returncode == 2, err
    samples = parse(got + out.splitlines())
    ts = [s["timestamp_secs"] for s in samples]
    steps = [b - a for a, b in zip(ts, ts[1:])]
    jumps = [(i, d) for i, d in enumerate(steps) if abs(d) > 100]
    assert [round(d / 3600) for _, d in jumps] == [1, -3], jumps  # +1 h, then -2 h from there
    # undo the jumps: the timestamps are then one grid, on the monotonic clock's pace
    shift, fixed = 0.0, [ts[0]]
    for i, d in enumerate(steps):
        if abs(d) > 100:
            shift += round(d / 3600) * 3600
        fixed.append(ts[i + 1] - shift)
    check_grid(fixed[1:-1], 0.1)
    ivs = [s["interval_secs"] for s in samples[1:-1]]
    assert all(0 < v < 1 for v in ivs), ivs  # no burst, no stall from the jumps
    dur = [l for l in err.splitlines() if l.strip().startswith("Duration")]
    assert dur and dur[0].split()[-1] == "s" and float(dur[0].split()[-2]) < 60, err


# ---------------------------------------------------------------------------------------------
# The tracker itself is SIGKILLed: nothing is left behind.

DAEMONS = "(sleep 300 &) ; (setsid sh -c 'sleep 300 & sleep 300' &) ; sleep 300 & sleep 300"


def guardian_of(mark):
    return [pid for pid, comm in marked(mark).items() if comm == "rt-guardian"]


def test_tracker_sigkilled():
    """A job with double-forked grandchildren (one in a session of its own); SIGKILL the
    tracker: its guardian kills the whole group, removes it, and exits; nothing remains."""
    need_any()
    env, mark = marked_env()
    with tracking(["-i", "0.1", "-o", "-", "--", "sh", "-c", DAEMONS], env=env) as p:
        try:
            json.loads(p.stdout.readline())
            assert wait_for(lambda: len([c for c in marked(mark).values() if c == "sleep"]) >= 5), marked(mark)
            assert len(guardian_of(mark)) == 1, marked(mark)
            assert tracker_groups(p.pid)
            p.kill()
            _, err = p.communicate(timeout=30)
            assert p.returncode == -signal.SIGKILL
            assert wait_for(lambda: not marked(mark)), f"left behind: {marked(mark)}"
            assert wait_for(lambda: not tracker_groups(p.pid)), tracker_groups(p.pid)
            assert len([l for l in messages(err) if "the tracker died" in l]) == 1, err
        finally:
            cleanup(mark, p.pid)


def test_tracker_sigkilled_no_cgroup():
    """--cgroup off: the command dies with the tracker (parent-death signal)."""
    env, mark = marked_env()
    with tracking(["-i", "0.1", "-o", "-", "--cgroup", "off", "--", "sleep", "300"], env=env) as p:
        try:
            json.loads(p.stdout.readline())
            assert not guardian_of(mark)  # no group: nothing for a guardian to do
            p.kill()
            p.communicate(timeout=30)
            assert wait_for(lambda: not marked(mark)), f"left behind: {marked(mark)}"
        finally:
            cleanup(mark, p.pid)


def test_guardian_leaves_after_normal_end():
    """A normal end: the guardian exits (before the tracker does) without touching what the
    job left behind (said as left behind), and the status passes through."""
    need_any()
    env, mark = marked_env()
    with tracking(["-i", "0.1", "-q", "--", "sh", "-c", "(sleep 300 >/dev/null 2>&1 &); exit 3"], env=env) as p:
        try:
            _, err = p.communicate(timeout=30)
            assert p.returncode == 3, err
            assert "left behind" in err
            assert not guardian_of(mark), marked(mark)  # gone before the tracker exited
            time.sleep(0.2)
            assert list(marked(mark).values()) == ["sleep"], marked(mark)
        finally:
            cleanup(mark, p.pid)
