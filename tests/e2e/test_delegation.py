"""The job's own cgroup for an ordinary user (issue 22, items 4 and 5), with the kernel as the
judge. As root the test makes a cgroup v2 group in the unified hierarchy and hands it to nobody
the way systemd delegates (Delegate=yes: the directory and the files the kernel lists in
/sys/kernel/cgroup/delegate chowned), then runs the tracker as nobody inside it: the job's
group is made there without root, and the CPU of children the kernel reaps for a parent that
ignores SIGCHLD is counted exactly (the job reads its own group's cpu.stat at its end), with no
accounting note; the job's group is removed at the end. Without any delegation, and with a
broken one (nobody owns the directory but not cgroup.procs, or the other way round), the job
runs as before, its status passed through, and the summary says once that the accounting may
be incomplete (the note of item 4; also a note of kind accounting_incomplete in
`summary --json`). Found along the way: the summary at exit sums the null I/O totals of
samples in which a process of the tree could not be read as 2^64 bytes each.

Every group a test makes is removed in a finally block. Tests skip (with the reason) where not
root, where there is no cgroup2 mount or no group can be made in it, or where nobody cannot run
the tracker. Under the sanitizers and valgrind, the reports of the tracker run as nobody go to a
directory of nobody's and are moved to the suite's report directory (conftest.py fails the test
on any)."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

import conftest
from conftest import TIMEOUT_SCALE, TRACKER, VALGRIND, run, tracker_env
from test_cgroup import LAYOUT, dir_of, groups_of, kill_group_procs, rmdir_tree, samples_of

PY = "/usr/bin/python3"
NOBODY = 65534
NOTE = "accounting may be incomplete"
EXIT = 7  # the job's exit status, which the tracker passes through

# A parent that ignores SIGCHLD starts 4 children that burn 0.5 s of CPU each, then 60 short
# children (0.02 s each, two at a time: most live less than a sampling interval); the kernel
# reaps them all, so their CPU reaches no counter but the group's. Each child appends its own
# CPU time (time.process_time(), which starts at 0 in a forked child) to the file argv[1]. At its
# end the parent writes to argv[2] its v2 group as it sees it (/proc/self/cgroup), that group's
# CPU counter (cpu.stat usage_usec under the cgroup2 mount argv[3]: the judge) and its own CPU
# time; it exits argv[4].
DELEG_JOB = r"""
import json, os, signal, sys, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
def burn(secs):
    t = time.process_time()
    while time.process_time() - t < secs:
        pass
def child(secs):
    burn(secs)
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, b"%.6f\n" % time.process_time())  # one write with O_APPEND: whole lines
    os._exit(0)
def wait_all():
    try:
        while True:
            os.wait()  # with SIGCHLD ignored: blocks until every child is gone, then ECHILD
    except ChildProcessError:
        pass
for _ in range(4):
    if os.fork() == 0:
        child(0.5)
wait_all()
for _ in range(30):
    for _ in range(2):
        if os.fork() == 0:
            child(0.02)
    wait_all()
group = [l.rstrip("\n").split(":", 2)[2] for l in open("/proc/self/cgroup") if l.startswith("0::")][0]
with open(os.path.join(sys.argv[3], group.lstrip("/"), "cpu.stat")) as f:
    usage = int(dict(l.split() for l in f)["usage_usec"]) / 1e6
with open(sys.argv[2] + ".tmp", "w") as f:
    json.dump({"group": group, "usage_secs": usage, "self_secs": time.process_time()}, f)
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
sys.exit(int(sys.argv[4]))
"""
CHILD_SECS = 4 * 0.5 + 60 * 0.02  # the least the children burn


# ---------------------------------------------------------------------------------------------
# Helpers: the delegated group, a directory of nobody's, the tracker run as nobody.

def need_root_and_cgroup2():
    if os.geteuid() != 0:
        pytest.skip("not root: the test makes a cgroup and runs the tracker as nobody")
    if not LAYOUT["unified"]:
        pytest.skip("no cgroup2 mount here (cgroup v1 only): nothing to delegate")


def delegation_files(d):
    """The files of the group d that systemd chowns to the delegatee: those the kernel lists in
    /sys/kernel/cgroup/delegate that the group has (else the three every kernel delegates)."""
    try:
        names = open("/sys/kernel/cgroup/delegate").read().split()
    except OSError:
        names = ["cgroup.procs", "cgroup.threads", "cgroup.subtree_control"]
    return [n for n in names if os.path.exists(os.path.join(d, n))]


def make_delegated(tag, chown_dir=True, keep=()):
    """Makes a v2 group below this process's own v2 group and hands it to nobody as systemd
    does (the directory and delegation_files chowned to nobody:nogroup), except the parts named:
    the directory when chown_dir is false, the files in keep. Returns its directory; skips when
    no group can be made here."""
    d = dir_of("unified", os.path.join(groups_of()["unified"] or "/", f"rt-test-deleg-{tag}-{os.getpid()}"))
    try:
        os.mkdir(d)
    except OSError as e:
        pytest.skip(f"cannot make a cgroup in the v2 hierarchy here ({d}: {e.strerror})")
    try:
        if chown_dir:
            os.chown(d, NOBODY, NOBODY)
        for name in delegation_files(d):
            if name not in keep:
                os.chown(os.path.join(d, name), NOBODY, NOBODY)
    except BaseException:
        remove_group(d)
        raise
    return d


def remove_group(d):
    """Ends every process in the group d and its child groups (cgroup.kill where the kernel has
    it), then removes them all, deepest first."""
    if not d or not os.path.isdir(d):
        return
    try:
        with open(os.path.join(d, "cgroup.kill"), "w") as f:
            f.write("1")
    except OSError:
        pass
    for root, dirs, _ in os.walk(d, topdown=False):
        for sub in dirs:
            kill_group_procs(os.path.join(root, sub))
    kill_group_procs(d)
    rmdir_tree(d)


def group_path(d):
    """The group path of the directory d in the unified hierarchy ("/a/b")."""
    return "/" + os.path.relpath(d, LAYOUT["unified"])


def job_groups_in(d):
    """The resource-tracker-* groups inside d."""
    return [n for n in os.listdir(d) if n.startswith("resource-tracker-") and os.path.isdir(os.path.join(d, n))]


def nobody_dir():
    """A directory under /tmp of nobody's (pytest's tmp_path is root's 0700)."""
    d = tempfile.mkdtemp(prefix="rt-deleg-", dir="/tmp")
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    return d


def as_nobody(group=None):
    """A preexec_fn: enters the group directory group while still root (the tracker then starts
    inside it, as in a delegated session or service), then drops to nobody:nogroup."""
    def become():
        if group:
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    return become


def nobody_tracker(d):
    """(the tracker to start as nobody, its environment). The sanitizers' and valgrind's reports
    go to conftest.REPORT_DIR, root's 0700: for a tracker run as nobody they go to d/reports
    instead (collect_reports moves them over). Under valgrind conftest's TRACKER is a wrapper in
    a 0700 directory of BUILD_DIR: a copy of it, writing there, is made in d. Skips when nobody
    cannot run the tracker (a build directory nobody cannot reach)."""
    env = tracker_env(HOME=d)
    tracker = TRACKER
    if conftest.REPORT_DIR:
        reports = os.path.join(d, "reports")
        os.mkdir(reports)
        os.chown(reports, NOBODY, NOBODY)
        for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
            if var in env:
                env[var] = env[var].replace(f"log_path={conftest.REPORT_DIR}/", f"log_path={reports}/")
        if VALGRIND:
            text = open(TRACKER).read()
            old = f"--log-file={conftest.REPORT_DIR}/"
            if old not in text:
                pytest.skip(f"valgrind: conftest's wrapper {TRACKER} writes its reports elsewhere than expected")
            tracker = os.path.join(d, "resource-tracker")
            with open(tracker, "w") as f:
                f.write(text.replace(old, f"--log-file={reports}/"))
            os.chmod(tracker, 0o755)
    r = subprocess.run([tracker, "--version"], capture_output=True, text=True, env=env,
                       timeout=30 * TIMEOUT_SCALE, preexec_fn=as_nobody())
    if r.returncode != 0:
        collect_reports(d)
        pytest.skip(f"nobody cannot run the tracker {tracker} (rc {r.returncode}: {r.stderr.strip()[:200]})")
    return tracker, env


def collect_reports(d):
    """Moves the non-empty sanitizer and valgrind reports of d/reports to conftest.REPORT_DIR,
    where the autouse fixture no_memory_errors finds them and fails the test."""
    reports = os.path.join(d, "reports")
    if not conftest.REPORT_DIR or not os.path.isdir(reports):
        return
    for name in os.listdir(reports):
        src = os.path.join(reports, name)
        if os.path.getsize(src) > 0:
            shutil.copyfile(src, os.path.join(conftest.REPORT_DIR, f"deleg-{os.getpid()}-{name}"))
        os.unlink(src)


def run_job(d, group=None):
    """The tracker as nobody (inside the group directory group when given) with --summary over
    DELEG_JOB, whose status it asserts passed through; returns (its stderr, its samples, the job's
    report, the children's CPU times)."""
    tracker, env = nobody_tracker(d)
    out, kids, judge = (os.path.join(d, n) for n in ("s.jsonl", "children", "judge.json"))
    p = subprocess.Popen([tracker, "-i", "0.2", "--summary", "-o", out, "--", PY, "-c", DELEG_JOB,
                          kids, judge, LAYOUT["unified"], str(EXIT)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=d,
                         preexec_fn=as_nobody(group))
    try:
        _, err = p.communicate(timeout=60 * TIMEOUT_SCALE)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        collect_reports(d)
    assert p.returncode == EXIT, err  # the job's status passed through
    assert os.path.exists(judge), f"the job did not finish: {err}"
    children = [float(x) for x in open(kids).read().split()]
    assert len(children) == 64, children  # every child ran to its end
    return err, samples_of(out), json.load(open(judge)), children


def tracker_lines(err):
    """stderr's lines that the tracker says in its own name (warnings, errors, the summary's
    head). A process in its exit, once the kernel has detached its memory (exit_mm) and before
    it is gone, has its /proc/PID files owned by root for a moment (task_dump_owner): a tracker
    that is not root cannot read its io then, and once warned as for another user's process
    (and nulled that sample's I/O) in about 1 run of 3 to 10 with DELEG_JOB's 64 exiting
    children. It now tells the two apart, so no such warning may appear here."""
    return [l for l in err.splitlines() if l.startswith("resource-tracker:")]


def summary_notes(err):
    """The notes of the summary on stderr, each whole: a note starts with "- " under "Notes"
    and goes on in lines indented past it (the summary breaks long lines to fit a terminal)."""
    notes, inside = [], False
    for l in err.splitlines():
        if l.startswith("Notes "):
            inside = True
        elif inside and not l.startswith(" "):
            inside = False
        if not inside:
            continue
        body = l[12:]
        if body.startswith("- "):
            notes.append(body[2:])
        elif notes and body.startswith("  "):
            notes[-1] += " " + body.strip()
    return notes


def note_lines(err):
    return [n for n in summary_notes(err) if NOTE in n]


def json_notes(out):
    r = run(["summary", "--json", out])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout).get("notes")


def check_note(d, err, why):
    """The accounting note (issue 22 item 4): once in the summary on stderr, with its reason and
    what is not counted; one note of kind accounting_incomplete in `summary --json`.
    why: words of the reason that must be in the note."""
    lines = note_lines(err)
    assert len(lines) == 1, f"the accounting note {len(lines)} times, not once:\n{err}"
    note = lines[0]
    assert NOTE + ": " in note, note  # the spec's text begins "accounting may be incomplete: "
    assert "SIGCHLD" in note and "not counted" in note, note  # what is lost, and that it is not counted
    assert why in note.lower(), (why, note)  # why no group of the job's own was read
    notes = json_notes(os.path.join(d, "s.jsonl"))
    assert notes is not None, "summary --json has no notes"
    kinds = [n["kind"] for n in notes]
    assert kinds.count("accounting_incomplete") == 1, notes
    text = [n["text"] for n in notes if n["kind"] == "accounting_incomplete"][0]
    assert text.startswith(NOTE + ": ") and "SIGCHLD" in text, text


# ---------------------------------------------------------------------------------------------
# 1. A delegated subtree: the job's group made there without root; the CPU exact.

def test_delegated_subtree_counts_kernel_reaped_children():
    need_root_and_cgroup2()
    x, d = None, None
    try:
        x = make_delegated("ok")
        d = nobody_dir()
        err, s, job, children = run_job(d, group=x)

        # the job ran in a group the tracker made inside the delegated one, and that group is
        # the job's own in the samples
        cg = s[-1]["process"]["cgroup"]
        assert cg is not None and cg["own"] is True and cg["exclusive"] is True, cg
        assert os.path.dirname(cg["path"]) == group_path(x), (cg["path"], group_path(x))
        assert os.path.basename(cg["path"]).startswith("resource-tracker-"), cg["path"]
        assert job["group"] == cg["path"], (job["group"], cg["path"])  # as the job itself saw it
        assert cg["version"] in ("v2", "hybrid"), cg

        # the CPU: the group's counter (the judge, read by the job at its very end), the
        # children's own figures, and the tracker's total
        total = s[-1]["process"]["cpu_secs_total"]
        assert sum(children) >= CHILD_SECS, children
        assert job["usage_secs"] >= sum(children) + job["self_secs"] - 0.01, job
        assert abs(total - job["usage_secs"]) <= 0.02 * job["usage_secs"], (total, job)
        assert total >= sum(children) + job["self_secs"] - 0.01, (total, sum(children), job)
        print(f"delegated: tracker {total:.3f} s, judge {job['usage_secs']:.3f} s, children "
              f"{sum(children):.3f} s + parent {job['self_secs']:.3f} s")

        # the summary: nothing said but the summary itself, and no accounting note
        assert "summary of the run" in err, err
        assert tracker_lines(err) == ["resource-tracker: summary of the run"], err
        assert note_lines(err) == [], err
        notes = json_notes(os.path.join(d, "s.jsonl")) or []
        assert "accounting_incomplete" not in [n["kind"] for n in notes], notes

        # the pressure (issue 49, item 5): the group has its own pressure files (v2), and the
        # summary shows them under a heading that says whose they are, never "the machine's";
        # the figures are the group's own in every sample
        if cg["pressure"] is not None and cg["pressure"]["cpu"] is not None:
            headings = [l for l in err.splitlines() if l.startswith(("Pressure (", "Limits ("))]
            assert headings, err
            assert "machine" not in headings[0] and "job's cgroup" in headings[0], headings
            print(f"delegated: {headings[0]}")
            for smp in s[1:]:
                g = smp["process"]["cgroup"]["pressure"]["cpu"]
                assert g["some_pct"] is not None, smp["process"]["cgroup"]

        # the tracker removed the job's group: only the delegated one is left
        assert job_groups_in(x) == [], os.listdir(x)
    finally:
        remove_group(x)
        if d:
            shutil.rmtree(d, ignore_errors=True)
    assert not os.path.exists(x), f"{x} left behind"


# ---------------------------------------------------------------------------------------------
# 2. No delegation: the job runs as before, and the summary says so once.

def test_no_delegation_says_so_once():
    need_root_and_cgroup2()
    d = None
    try:
        d = nobody_dir()
        # the tracker starts in this process's own groups (root's): it can make no group
        err, s, job, children = run_job(d)
        assert len(s) >= 2, s
        cg = s[-1]["process"]["cgroup"]
        assert cg is None or cg["own"] is False, cg
        assert not os.path.basename(job["group"]).startswith("resource-tracker-"), job
        # what the note warns of: the kernel-reaped children's CPU is lost (measured: ~40%)
        total = s[-1]["process"]["cpu_secs_total"]
        assert 0 < total < 0.8 * (sum(children) + job["self_secs"]), (total, sum(children), job)
        print(f"no delegation: tracker {total:.3f} s, children {sum(children):.3f} s + parent "
              f"{job['self_secs']:.3f} s")
        assert tracker_lines(err) == ["resource-tracker: summary of the run"], err  # no warning

        # the note, once, saying why (no group may be made: not root, no delegation) and what
        # is not counted
        check_note(d, err, "not root, and no cgroup delegated to this user")
    finally:
        if d:
            shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# 3. A broken delegation: nobody owns the directory but not its cgroup.procs (the job's group
# is made, but nobody may move the job into it: the kernel asks for write access to the
# cgroup.procs of the common ancestor), or the files but not the directory (no group can be
# made). The job runs where the tracker runs, as without delegation.

@pytest.mark.parametrize("broken", ["procs_kept", "dir_kept"])
def test_broken_delegation_runs_the_job_and_says_so(broken):
    need_root_and_cgroup2()
    x, d = None, None
    try:
        if broken == "procs_kept":
            x = make_delegated("procs", keep=("cgroup.procs",))
        else:
            x = make_delegated("dir", chown_dir=False)
        d = nobody_dir()
        err, s, job, children = run_job(d, group=x)
        assert len(s) >= 2, s
        cg = s[-1]["process"]["cgroup"]
        assert cg is None or cg["own"] is False, cg
        assert job["group"] == group_path(x), job  # the job ran in the tracker's group
        if cg is not None:
            assert cg["path"] == group_path(x), cg  # in v2, the group the job lives in
        total = s[-1]["process"]["cpu_secs_total"]
        assert 0 < total < 0.8 * (sum(children) + job["self_secs"]), (total, sum(children), job)
        assert tracker_lines(err) == ["resource-tracker: summary of the run"], err  # no warning
        # a group made but not entered is removed at the end too
        assert job_groups_in(x) == [], os.listdir(x)

        # the note, once, saying why: the job could not be moved into the group made for it,
        # or no group could be made
        check_note(d, err, "could not be moved into the group" if broken == "procs_kept" else "not root")
    finally:
        remove_group(x)
        if d:
            shutil.rmtree(d, ignore_errors=True)
    assert not os.path.exists(x), f"{x} left behind"


# ---------------------------------------------------------------------------------------------
# 4. Found with these tests: I/O counters the tracker cannot read are never summed as bytes.

# A child makes itself non-dumpable (its /proc files become root's: a tracker that is not root
# cannot read its io, as for another user's process) for 0.6 s; then dd writes 16 KiB to argv[1].
NODUMP_JOB = r"""
import ctypes, os, subprocess, sys, time
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    time.sleep(0.6)
    os._exit(0)
os.waitpid(pid, 0)
subprocess.run(["dd", "if=/dev/zero", "of=" + sys.argv[1], "bs=4096", "count=4", "oflag=direct", "status=none"],
               check=True)
"""


def storage_line(text):
    """The job's "Storage read / written" line of a summary (the first; the machine's follows)."""
    lines = [l.strip() for l in text.splitlines() if l.strip().startswith("Storage read / written")]
    assert lines, text
    return lines[0]


def test_unreadable_io_is_never_counted_as_bytes():
    """The samples while a process of the tree cannot be read have null I/O totals; the summary
    at exit (--summary) must skip them as `summary FILE` does. NOT YET FIXED: the live summary
    turns each null into 2^64 bytes ("16384.0 PiB" a sample: RT_NULL_U64 cast to double in
    process_part() of src/lib/analysis/record.c), while `summary FILE` of the same samples says
    the true figures. u64_or_nan() there, as for the GPU's bytes, fixes it (tried)."""
    if os.geteuid() != 0:
        pytest.skip("not root: the test runs the tracker as nobody")
    d = None
    try:
        d = nobody_dir()
        tracker, env = nobody_tracker(d)
        out = os.path.join(d, "s.jsonl")
        try:
            r = subprocess.run([tracker, "-i", "0.1", "--summary", "-o", out, "--", PY, "-c", NODUMP_JOB,
                                os.path.join(d, "dd")], capture_output=True, text=True, env=env, cwd=d,
                               timeout=60 * TIMEOUT_SCALE, preexec_fn=as_nobody())
        finally:
            collect_reports(d)
        assert r.returncode == 0, r.stderr
        s = samples_of(out)
        if not any(x["process"]["read_bytes_total"] is None for x in s):
            pytest.skip("the tracker read the tree's I/O throughout (its group counts it): nothing unreadable")
        f = run(["summary", out])
        assert f.returncode == 0, f.stderr
        assert "PiB" not in r.stderr, storage_line(r.stderr)
        assert storage_line(r.stderr) == storage_line(f.stdout), (storage_line(r.stderr), storage_line(f.stdout))
    finally:
        if d:
            shutil.rmtree(d, ignore_errors=True)
