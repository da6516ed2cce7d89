"""The job in its own cgroup (issue 12), with the kernel as the judge: the group's own counters
against the tracker's totals, the left-behind line and --wait-all, an OOM kill and a CPU quota
in test-made v1 groups, pressure, the group's path and removal, stale groups of a killed
tracker, --cgroup off, --pid reading the group a process already lives in, and the whole
machine reading the group the tracker itself runs in.

Every group a test makes is removed in a finally block. Tests skip (with the reason) where no
cgroup can be made: not root, a read-only /sys/fs/cgroup, a layout without the hierarchy."""
import json
import os
import resource
import signal
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, VALGRIND, tracker_env

PY = "/usr/bin/python3"


# ---------------------------------------------------------------------------------------------
# The machine's cgroup layout, from /proc/self/mounts and /proc/PID/cgroup.

def mounts():
    """{"unified": dir of the cgroup2 mount or None, "v1": {controller: dir}}."""
    unified, v1 = None, {}
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype, opts = line.split()[:4]
            if fstype == "cgroup2":
                unified = unified or mnt
            elif fstype == "cgroup":
                for o in opts.split(","):
                    if o in ("cpu", "cpuacct", "memory", "blkio", "pids"):
                        v1.setdefault(o, mnt)
    return {"unified": unified, "v1": v1}


LAYOUT = mounts()


def groups_of(pid="self"):
    """{"unified": path or None, controller: path} from /proc/PID/cgroup."""
    out = {"unified": None}
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if ctrls == "":
                out["unified"] = path
            for c in ctrls.split(","):
                out[c] = path
    return out


def dir_of(hier, path):
    """The directory of a group path in a hierarchy ("unified" or a v1 controller)."""
    mnt = LAYOUT["unified"] if hier == "unified" else LAYOUT["v1"].get(hier)
    return None if mnt is None else os.path.join(mnt, path.lstrip("/"))


def hierarchies():
    """Every hierarchy the tracker may make a group in, that exists here."""
    return (["unified"] if LAYOUT["unified"] else []) + sorted(LAYOUT["v1"])


def can_make(hier):
    """Whether a group can be made below this process's own group in hier (tried, then removed)."""
    if hier != "unified" and hier not in LAYOUT["v1"]:
        return False
    d = dir_of(hier, os.path.join(groups_of()[hier] or "/", f"rt-test-probe-{os.getpid()}"))
    try:
        os.mkdir(d)
    except OSError:
        return False
    os.rmdir(d)
    return True


def need(*hiers):
    for h in hiers:
        if not can_make(h):
            pytest.skip(f"cannot make a cgroup in the {h} hierarchy here (not root, read-only "
                        f"/sys/fs/cgroup, or no such hierarchy)")


def need_any():
    if not any(can_make(h) for h in hierarchies()):
        pytest.skip("no writable cgroup hierarchy here: the tracker runs the job without a cgroup")


def rmdir_tree(d):
    """Removes a group and its child groups (deepest first), after moving nothing: the tests
    only remove groups whose processes are gone. Missing is fine, even when it goes while we look
    (the tracker removing its own a moment later)."""
    if not d:
        return
    try:
        subs = os.listdir(d)
    except (FileNotFoundError, NotADirectoryError):
        return
    for sub in subs:
        if os.path.isdir(os.path.join(d, sub)):
            rmdir_tree(os.path.join(d, sub))
    for _ in range(50):
        try:
            os.rmdir(d)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)  # tasks that just exited leave the group a moment later


def job_dirs(path):
    """The directories of the job's group (its path's last part) in every hierarchy: below
    the tracker's own group there, which is this process's own group (the tracker inherits it)."""
    name = os.path.basename(path)
    assert name.startswith("resource-tracker-"), path  # never a group of someone else
    out = []
    for h in hierarchies():
        own = groups_of()[h]
        if own is not None:
            out.append(dir_of(h, os.path.join(own, name)))
    return out


def kill_group_procs(d):
    """SIGKILLs every process listed in the group's cgroup.procs (a group the test made or a
    job group left behind) and waits until the group is empty."""
    procs = os.path.join(d, "cgroup.procs")
    for _ in range(100):
        try:
            with open(procs) as f:
                pids = [int(x) for x in f.read().split()]
        except OSError:
            return
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def make_v1(ctrl, tag, settings=()):
    """Makes a group below this process's own group in ctrl (a v1 controller, or "unified");
    returns its directory."""
    d = dir_of(ctrl, os.path.join(groups_of()[ctrl], f"rt-test-{tag}-{os.getpid()}"))
    os.mkdir(d)
    for name, value in settings:
        with open(os.path.join(d, name), "w") as f:
            f.write(str(value))
    return d


def stop_after_two(t, out):
    """Stops the tracker t (a Popen with stderr piped) with SIGTERM once its output file out has
    two samples (or after 10 s), and asserts it exited 0."""
    try:
        deadline = time.monotonic() + 10 * TIMEOUT_SCALE
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 2):
            time.sleep(0.02)
        t.terminate()
        _, err = t.communicate(timeout=10)
        assert t.returncode == 0, err
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()


def run_tracker(args, timeout=30, **kw):
    return subprocess.run([TRACKER] + args, capture_output=True, text=True, timeout=timeout,
                          env=tracker_env(), **kw)


def samples_of(path):
    return [json.loads(l) for l in open(path).read().splitlines() if l.strip()]


# ---------------------------------------------------------------------------------------------
# a. Children reaped by the kernel: the group counts them, per-process sampling cannot.

# A parent that ignores SIGCHLD starts 4 children that burn 0.5 s of CPU each, a direct dd
# writing 64 MiB, then 60 short children (0.02 s of CPU each, two at a time: most live less
# than a sampling interval); the kernel reaps them all, so their CPU and bytes reach nobody's
# counters but the group's. At its end the job reads its own group's CPU counter (the judge)
# into the file argv[2].
LOST_JOB = r"""
import os, signal, sys, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
def burn(secs):
    t = time.process_time()
    while time.process_time() - t < secs:
        pass
for _ in range(4):
    if os.fork() == 0:
        burn(0.5)
        os._exit(0)
if os.fork() == 0:
    os.execvp("dd", ["dd", "if=/dev/zero", "of=" + sys.argv[1], "bs=1M", "count=64", "oflag=direct",
                     "status=none"])
def wait_all():
    try:
        while True:
            os.wait()  # with SIGCHLD ignored: blocks until every child is gone, then ECHILD
    except ChildProcessError:
        pass
wait_all()
for _ in range(30):
    for _ in range(2):
        if os.fork() == 0:
            burn(0.02)
            os._exit(0)
    wait_all()
judge = None
for line in open("/proc/self/cgroup"):
    _, ctrls, path = line.rstrip("\n").split(":", 2)
    if ctrls == "" and sys.argv[3] != "-":
        with open(os.path.join(sys.argv[3], path.lstrip("/"), "cpu.stat")) as f:
            judge = int(dict(l.split() for l in f)["usage_usec"]) / 1e6
    elif "cpuacct" in ctrls.split(",") and sys.argv[4] != "-" and judge is None:
        with open(os.path.join(sys.argv[4], path.lstrip("/"), "cpuacct.usage")) as f:
            judge = int(f.read()) / 1e9
open(sys.argv[2], "w").write(str(judge))
"""


def lost_job(tmp_path, mode):
    out, judge = tmp_path / f"{mode}.jsonl", tmp_path / f"{mode}.judge"
    r = run_tracker(["-i", "0.2", "--cgroup", mode, "-o", str(out), "--", PY, "-c", LOST_JOB,
                     str(tmp_path / f"{mode}.dd"), str(judge), LAYOUT["unified"] or "-",
                     LAYOUT["v1"].get("cpuacct", "-")], timeout=60)
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / f"{mode}.dd") == 64 << 20
    return samples_of(out), judge.read_text()


def test_kernel_reaped_children_are_counted_by_the_group(tmp_path):
    need_any()
    s, judge = lost_job(tmp_path, "auto")
    last = s[-1]["process"]
    cg = last["cgroup"]
    assert cg is not None and cg["own"] is True and cg["exclusive"] is True, cg
    judge = float(judge)  # the job's own group, read by the job at its very end
    assert judge >= 3.0, judge  # 4 children x 0.5 s and 60 x 0.02 s at least
    assert abs(last["cpu_secs_total"] - judge) <= 0.02 * judge, (last["cpu_secs_total"], judge)
    assert abs(last["write_bytes_total"] - (64 << 20)) <= 0.02 * (64 << 20), last["write_bytes_total"]
    assert last["memory_peak_mib"] is not None and last["memory_peak_mib"] > 0

    # the same job with --cgroup off: the kernel-reaped children's bytes are lost, and their CPU
    # too unless the kernel's exit records count it (as root: the same CPU as the group's in
    # another run of the job, 5% apart at most)
    s, _ = lost_job(tmp_path, "off")
    last = s[-1]["process"]
    assert last["cgroup"] is None and last["memory_peak_mib"] is None
    if last["exits_counted"] is None:
        assert last["cpu_secs_total"] < 0.75 * judge, (last["cpu_secs_total"], judge)  # measured: 46% lost
    else:
        assert abs(last["cpu_secs_total"] - judge) <= 0.05 * judge, (last["cpu_secs_total"], judge)
    # (dd's bytes: only what it wrote after the last sample that saw it is lost, so how much
    # varies from run to run; never more than it wrote)
    assert last["write_bytes_total"] <= (64 << 20) + (1 << 20), last["write_bytes_total"]


# ---------------------------------------------------------------------------------------------
# b. Orphans that outlive the command.

# The command exits at once; a background subshell sleeps 1.5 s, then burns 0.5 s of CPU.
ORPHANS = ("(sleep 1.5; " + PY + " -c 'import time\nt = time.process_time()\n"
           "while time.process_time() - t < 0.5: pass') & exit 0")


def test_orphans_left_behind_by_default_and_waited_for_with_wait_all(tmp_path):
    out = tmp_path / "default.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "0.2", "-o", str(out), "--", "sh", "-c", ORPHANS],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tracker_env(),
                         start_new_session=True)
    left_dirs = []
    try:
        _, err = p.communicate(timeout=20)
        assert p.returncode == 0, err
        lines = [l for l in err.splitlines() if "still running" in l]
        assert len(lines) == 1, err
        assert "processes of the job still running (left behind; --wait-all waits for them)" in lines[0] \
            or "1 process of the job still running" in lines[0], lines[0]
        assert int(lines[0].split()[1]) >= 1, lines[0]
        last = samples_of(out)[-1]["process"]
        assert last["alive"] is False
        if last["cgroup"] is not None and last["cgroup"]["own"]:  # the group stays while they run
            left_dirs = job_dirs(last["cgroup"]["path"])
            assert any(os.path.isdir(d) for d in left_dirs), left_dirs
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the orphans are in the tracker's session
        except ProcessLookupError:
            pass
        for d in left_dirs:
            kill_group_procs(d)
            rmdir_tree(d)

    cfg = tmp_path / "rt.toml"  # the config file's keys do the same as the flags
    cfg.write_text("[tracker]\nwait_all = true\ncgroup = 'off'\n")
    for mode in ("auto", "off"):
        out = tmp_path / f"wait-{mode}.jsonl"
        t0 = time.monotonic()
        flags = ["--wait-all", "--cgroup", mode] if mode == "auto" else ["-c", str(cfg)]
        r = run_tracker(["-i", "0.2"] + flags + ["-o", str(out), "--", "sh", "-c", ORPHANS])
        took = time.monotonic() - t0
        assert r.returncode == 0, r.stderr
        assert "still running" not in r.stderr, r.stderr
        assert took >= 1.5, took  # it waited for the sleep
        last = samples_of(out)[-1]["process"]
        assert last["cpu_secs_total"] >= 0.45, (mode, last)  # and counted the orphan's CPU
        if mode == "off":
            assert last["cgroup"] is None
        elif last["cgroup"] is not None and last["cgroup"]["own"]:
            assert not any(os.path.isdir(d) for d in job_dirs(last["cgroup"]["path"]))


# ---------------------------------------------------------------------------------------------
# c, d. An OOM kill and a CPU quota, in test-made v1 groups the tracker runs inside (so the
# job's own group is a child of the limited one).

@pytest.mark.skipif(VALGRIND, reason="the tracker runs inside the limited group: valgrind's own use of it decides")
def test_oom_kill_in_a_memory_limited_group(tmp_path):
    need("memory")
    limited = None
    out = tmp_path / "oom.jsonl"
    try:
        limited = make_v1("memory", "oom", [("memory.limit_in_bytes", 64 << 20)])
        if os.path.exists(os.path.join(limited, "memory.memsw.limit_in_bytes")):
            with open(os.path.join(limited, "memory.memsw.limit_in_bytes"), "w") as f:
                f.write(str(64 << 20))
        script = (f"echo $$ > {limited}/cgroup.procs && exec {TRACKER} --summary -i 0.2 -o {out} -- "
                  f"{PY} -c 'x = b\"x\" * (200 << 20)'")
        r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, env=tracker_env())
        assert r.returncode == 137, r.stderr  # SIGKILL by the OOM killer, passed through
        last = samples_of(out)[-1]["process"]
        cg = last["cgroup"]
        assert cg is not None, last
        assert cg["oom_kills"] >= 1, cg
        assert cg["memory_limit_mib"] == 64, cg
        assert "killed by the OOM killer" in r.stderr, r.stderr
    finally:
        if limited:
            kill_group_procs(limited)
            rmdir_tree(limited)


BUSY2 = ("import os, time\nos.fork()\nend = time.monotonic() + 1.5\n"
         "while time.monotonic() < end: pass\n")


@pytest.mark.serial  # side by side, two busy processes may not get the 0.5 cores the quota would hold them to
@pytest.mark.skipif(VALGRIND, reason="the tracker runs inside the limited group: valgrind's own use of it decides")
def test_cpu_quota_throttles_a_two_process_job(tmp_path):
    need("cpu")
    limited = None
    out = tmp_path / "quota.jsonl"
    try:
        limited = make_v1("cpu", "quota", [("cpu.cfs_period_us", 100000), ("cpu.cfs_quota_us", 50000)])
        script = f"echo $$ > {limited}/cgroup.procs && exec {TRACKER} --summary -i 0.2 -o {out} -- {PY} -c '{BUSY2}'"
        r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, env=tracker_env())
        assert r.returncode == 0, r.stderr
        cg = samples_of(out)[-1]["process"]["cgroup"]
        assert cg is not None
        assert cg["cpu_quota_cores"] == 0.5, cg
        assert cg["cpu_throttled_periods"] > 0, cg
        assert "CPU throttled in" in r.stderr, r.stderr
    finally:
        if limited:
            kill_group_procs(limited)
            rmdir_tree(limited)


# ---------------------------------------------------------------------------------------------
# e, f, h. Pressure, the group's place and removal, and --cgroup off.

PSI_KEYS = {"some_avg10", "full_avg10", "some_pct", "full_pct", "some_total_usec", "full_total_usec"}


def short_job(tmp_path, mode):
    """A job of ~0.8 s that lasts until the groups are listed (it waits on a stop file, so a
    slow tracker's first sample never comes after the job and its group are gone); returns its
    samples and the directories of this tracker's resource-tracker-* groups seen while it ran
    (in every hierarchy)."""
    out = tmp_path / f"short-{mode}.jsonl"
    stop = tmp_path / f"stop-{mode}"
    job = f"sleep 0.8; i=0; until [ -e '{stop}' ] || [ $i -ge 600 ]; do sleep 0.05; i=$((i+1)); done"
    p = subprocess.Popen([TRACKER, "-i", "0.2", "--cgroup", mode, "-o", str(out), "--", "sh", "-c", job],
                         stderr=subprocess.PIPE, text=True, env=tracker_env())
    seen = []
    try:
        deadline = time.monotonic() + 10 * TIMEOUT_SCALE
        while time.monotonic() < deadline and (not out.exists() or not out.read_text().count("\n")):
            time.sleep(0.02)
        for h in hierarchies():
            own = groups_of()[h]
            d = dir_of(h, own) if own is not None else None
            if d and os.path.isdir(d):
                seen += [os.path.join(d, n) for n in os.listdir(d) if n.startswith(f"resource-tracker-{p.pid}-")]
        stop.touch()
        _, err = p.communicate(timeout=20 * TIMEOUT_SCALE)
        assert p.returncode == 0, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return samples_of(out), seen


def test_pressure_path_and_removal(tmp_path):
    need_any()
    s, seen = short_job(tmp_path, "auto")
    last = s[-1]
    if os.path.exists("/proc/pressure/cpu"):
        assert last["pressure"] is not None
        for r in ("cpu", "memory", "io"):
            assert set(last["pressure"][r]) == PSI_KEYS, last["pressure"]
            assert last["pressure"][r]["some_total_usec"] is not None
    cg = last["process"]["cgroup"]
    assert cg is not None and cg["own"] is True
    assert last["cgroup"] is None  # wrapper mode: the job's group is process.cgroup, none at the top
    name = os.path.basename(cg["path"])
    assert name.startswith("resource-tracker-"), cg["path"]
    if LAYOUT["unified"] and can_make("unified"):
        own = groups_of()["unified"]
        assert cg["path"] in ("/" + name, os.path.join(own, name)), cg["path"]
        if os.path.exists(os.path.join(dir_of("unified", own), "cpu.pressure")):
            for r in ("cpu", "memory", "io"):
                assert cg["pressure"][r] is not None and set(cg["pressure"][r]) == PSI_KEYS, cg["pressure"]
        if LAYOUT["v1"]:
            assert cg["version"] == "hybrid", cg
        else:
            assert cg["version"] == "v2", cg
    elif LAYOUT["v1"]:
        assert cg["version"] == "v1", cg
    assert seen, "no resource-tracker-* group seen while the job ran"
    for d in seen + job_dirs(cg["path"]):
        assert not os.path.exists(d), f"{d} left behind"


def test_cgroup_off_makes_and_reads_none(tmp_path):
    s, seen = short_job(tmp_path, "off")
    assert seen == []
    for x in s:
        assert x["process"]["cgroup"] is None and x["process"]["memory_peak_mib"] is None
    assert s[-1]["process"]["alive"] is False
    # the rest of the sample as before
    assert {"cpu", "memory", "disk", "network", "gpu", "process"} <= set(s[-1])


# ---------------------------------------------------------------------------------------------
# g. A tracker killed with SIGKILL leaves its (empty) group; the next run removes it.

def test_stale_group_of_a_killed_tracker_is_removed_by_the_next_run(tmp_path):
    need_any()
    out = tmp_path / "killed.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "0.2", "-o", str(out), "--", "sleep", "30"], env=tracker_env(),
                         stderr=subprocess.DEVNULL)
    dirs = []
    try:
        deadline = time.monotonic() + 10 * TIMEOUT_SCALE
        while time.monotonic() < deadline and (not out.exists() or not out.read_text().count("\n")):
            time.sleep(0.02)
        first = json.loads(out.read_text().split("\n")[0])["process"]  # the second may be half written
        assert first["cgroup"] is not None and first["cgroup"]["own"], first["cgroup"]
        dirs = [d for d in job_dirs(first["cgroup"]["path"]) if os.path.isdir(d)]
        assert dirs
        p.kill()
        p.wait()
        os.kill(first["pid"], signal.SIGKILL)  # the command outlives its tracker: end it too
        for d in dirs:
            kill_group_procs(d)
        # (not asserted: that they are still there; another tracker starting on this machine
        # now may already have removed them)
        r = run_tracker(["-q", "--", "true"])
        assert r.returncode == 0, r.stderr
        left = [d for d in dirs if os.path.exists(d)]
        assert left == [], left
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for d in dirs:
            kill_group_procs(d)
            rmdir_tree(d)


# ---------------------------------------------------------------------------------------------
# i. --pid: the group the process already lives in.

def test_pid_mode_reads_the_process_own_group(tmp_path):
    need("memory")
    limited, v2, p = None, None, None
    try:
        limited = make_v1("memory", "pid", [("memory.limit_in_bytes", 96 << 20)])
        if LAYOUT["unified"] and can_make("unified"):  # hybrid: its v2 group is a test-made one too
            v2 = make_v1("unified", "pid")
        enter = f"echo $$ > {limited}/cgroup.procs && " + (f"echo $$ > {v2}/cgroup.procs && " if v2 else "")
        p = subprocess.Popen(["sh", "-c", enter + "exec sleep 30"])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and groups_of(p.pid).get("memory", "").find("rt-test-pid") < 0:
            time.sleep(0.02)
        out = tmp_path / "pid.jsonl"
        stop_after_two(subprocess.Popen([TRACKER, "-i", "0.2", "-p", str(p.pid), "-o", str(out)],
                                        env=tracker_env(), stderr=subprocess.PIPE, text=True), out)
        cg = samples_of(out)[-1]["process"]["cgroup"]
        assert cg is not None
        assert samples_of(out)[-1]["cgroup"] is None  # with a tree, its group is process.cgroup
        assert cg["own"] is False, cg
        assert cg["memory_limit_mib"] == 96, cg
        # the v2 path when it has one, else the memory controller's
        want = groups_of(p.pid)["unified"] if v2 else groups_of(p.pid)["memory"]
        assert cg["path"] == want, (cg["path"], want)
        assert cg["path"].endswith(f"rt-test-pid-{os.getpid()}"), cg["path"]
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()
        for d in (limited, v2):
            if d:
                kill_group_procs(d)
                rmdir_tree(d)


# ---------------------------------------------------------------------------------------------
# j. The whole machine: the group the tracker itself runs in (a container, a SLURM step).

def machine_run(limited, out, *flags):
    """The tracker of the whole machine started inside the group limited, stopped with SIGTERM
    after its second sample; returns its samples."""
    with open(out, "w") as f:
        stop_after_two(subprocess.Popen(["sh", "-c", f"echo $$ > {limited}/cgroup.procs && exec {TRACKER} "
                                         "-i 0.2 -o - " + " ".join(flags)], stdout=f, stderr=subprocess.PIPE,
                                        text=True, env=tracker_env()), out)
    s = samples_of(out)
    assert len(s) >= 2
    return s


def test_whole_machine_reads_the_tracker_own_group(tmp_path):
    need("memory")
    limited = None
    try:
        limited = make_v1("memory", "machine", [("memory.limit_in_bytes", 160 << 20)])
        out = tmp_path / "machine.jsonl"
        for x in machine_run(limited, out):
            assert x["process"] is None
            cg = x["cgroup"]
            assert cg is not None, x
            assert cg["own"] is False and cg["exclusive"] is False, cg
            assert cg["memory_limit_mib"] == 160, cg
            assert cg["path"].endswith(f"rt-test-machine-{os.getpid()}"), cg["path"]
            assert cg["version"] in ("v1", "hybrid"), cg  # a v1 memory group at least
            assert cg["memory_mib"] is not None and 0 < cg["memory_mib"] <= 160, cg
            assert cg["oom_kills"] == 0, cg
        r = run_tracker(["summary", str(out)])
        assert r.returncode == 0, r.stderr
        assert any("emory limit" in l and "160.0 MiB" in l for l in r.stdout.splitlines()), r.stdout
        j = json.loads(run_tracker(["summary", "--json", str(out)]).stdout)
        assert j["cgroup"]["memory_limit_mib"] == 160 and j["cgroup"]["oom_kills"] == 0, j["cgroup"]
        # --cgroup off: nothing read, the member null
        for x in machine_run(limited, tmp_path / "off.jsonl", "--cgroup", "off"):
            assert x["cgroup"] is None
    finally:
        if limited:
            kill_group_procs(limited)
            rmdir_tree(limited)


# ---------------------------------------------------------------------------------------------
# k. Few file descriptors (issue 50): what the group's files give with the descriptors there
# are, and what they cannot give said once.

# Touches 200 MiB, then reads its own group's memory peak (the judge: v2 memory.peak where the
# v2 group has the memory controller, else v1 memory.max_usage_in_bytes) into argv[1].
PEAK_JOB = r"""
import os, sys
x = bytearray(200 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
peak = None
for line in open("/proc/self/cgroup"):
    _, ctrls, path = line.rstrip("\n").split(":", 2)
    for mnt, name in ((sys.argv[2], "memory.peak"), (sys.argv[3], "memory.max_usage_in_bytes")):
        f = os.path.join(mnt, path.lstrip("/"), name)
        if peak is None and mnt != "-" and (ctrls == "" if name == "memory.peak" else "memory" in ctrls.split(",")) \
                and os.path.exists(f):
            peak = int(open(f).read())
open(sys.argv[1], "w").write(str(peak))
sys.exit(7)
"""


@pytest.mark.skipif(VALGRIND, reason="valgrind keeps descriptors of its own below the limit")
@pytest.mark.parametrize("limit", [48, 64, 80, 4096])
def test_few_descriptors_each_figure_there_or_said(tmp_path, limit):
    """Under `ulimit -n 48..80` (soft and hard) the job gets its own group, whose files are kept
    open as far as the descriptors go, those a run is judged by first: each of the memory peak,
    the tasks' peak and the CPU time either meets the kernel's (the peak read by the job itself
    at its end) or is null with one warning, said once, naming its file and the limit; with
    descriptors enough, every figure and no warning. Before 0.18 a limit of 48 to 80 read null
    figures without a word; before 0.20 they were null at 48 and 64 (said): now the three are
    kept open before every other file (issue 67 item 6), the phase marks' socket given up for
    them at 48 (said in a warning of its own)."""
    need("memory")
    out, judge = tmp_path / "fd.jsonl", tmp_path / "fd.judge"
    r = run_tracker(["-i", "0.2", "-o", str(out), "--", PY, "-c", PEAK_JOB, str(judge),
                     LAYOUT["unified"] or "-", LAYOUT["v1"].get("memory", "-")],
                    timeout=60 * TIMEOUT_SCALE,
                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    assert r.returncode == 7, r.stderr
    warns = [l for l in r.stderr.splitlines() if "warning" in l and "no phase marks for this run" not in l]
    assert len(warns) <= 1, r.stderr  # one group, said once
    said = warns[0] if warns else ""
    if said:
        assert "too few file descriptors to keep open" in said and f"the open files limit {limit}:" in said, said
    want = int(judge.read_text()) / (1 << 20)
    assert want >= 200, want
    cg = samples_of(out)[-1]["process"]["cgroup"]
    assert cg is not None and cg["own"] is True, cg
    # (the output's MiB have 3 decimals: half of the last one of slack)
    if cg["memory_peak_mib"] is None:
        assert "memory.max_usage_in_bytes" in said or "memory.peak" in said, (cg, said)
    else:
        assert cg["memory_peak_mib"] >= want - 0.0005, (cg, want)
    if cg["pids_peak"] is None:
        assert "pids.peak" in said or ", ..." in said, (cg, said)
    else:
        assert cg["pids_peak"] >= 1, cg
    if cg["cpu_secs_total"] is None:
        assert "cpu.stat" in said or "cpuacct.usage" in said, (cg, said)
    else:
        assert cg["cpu_secs_total"] > 0, cg
    if limit >= 4096:
        assert not said and cg["memory_peak_mib"] is not None and cg["pids_peak"] is not None, (cg, r.stderr)
    # the figures first kept fit from 48 on (hybrid: 83 descriptors held in all at 4096)
    print(f"\nulimit -n {limit}: memory_peak_mib {cg['memory_peak_mib']}, pids_peak {cg['pids_peak']}, "
          f"cpu_secs_total {cg['cpu_secs_total']}")
    assert None not in (cg["memory_peak_mib"], cg["pids_peak"], cg["cpu_secs_total"]), (cg, said)
