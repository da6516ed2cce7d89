"""Shared settings for the end-to-end tests: where the build is, and environment that keeps
every test on loopback (no cloud metadata, no real Sentinel)."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_DIR = os.environ.get("RT_BUILD_DIR", os.path.join(REPO, "build"))
TRACKER = os.path.join(BUILD_DIR, "resource-tracker")

# scripts/test sets these: RT_SANITIZED=1 when BUILD_DIR is a sanitizer build (ASan+UBSan or
# TSan), RT_VALGRIND=1 to run every tracker under valgrind memcheck. Tests import the booleans
# to skip what makes no sense there (a sanitized library in an uninstrumented python) and
# TIMEOUT_SCALE to widen their limits.
# scripts/coverage runs the plain coverage build as each section would: RT_COVERAGE_AS=asan or
# valgrind gives the flags (the same skips and limits) without the sanitizer or the wrapper.
COVERAGE_AS = os.environ.get("RT_COVERAGE_AS", "")
SANITIZED = os.environ.get("RT_SANITIZED", "") not in ("", "0") or COVERAGE_AS == "asan"
VALGRIND_WRAP = os.environ.get("RT_VALGRIND", "") not in ("", "0")
VALGRIND = VALGRIND_WRAP or COVERAGE_AS == "valgrind"
TIMEOUT_SCALE = 10 if VALGRIND else 3 if SANITIZED else 1
# RT_QUICK=1 (scripts/test --quick): the files that only re-check long runs (test_soak.py) skip
QUICK = os.environ.get("RT_QUICK", "") not in ("", "0")
# RT_LONG=1 (scripts/test --long, before a release): the long runs at their full size (the soak's
# 5 minutes)
LONG = os.environ.get("RT_LONG", "") not in ("", "0")

# Nothing in the suite may reach a metadata service or the internet.
os.environ["TRACKER_CLOUD_DISCOVERY"] = "0"
os.environ["TRACKER_KEEPER_URL"] = "http://127.0.0.1:9"
os.environ.pop("SENTINEL_API_TOKEN", None)
for _k in [k for k in os.environ if k.startswith("OTEL_")]:  # an OTLP endpoint would turn pushes on
    del os.environ[_k]
# on GitHub Actions every tracking run would append its Markdown to the job's real summary
os.environ.pop("GITHUB_STEP_SUMMARY", None)
# Where the job runs (--place auto) and whether stderr goes to a log people read (the log view) are
# told by these: the suite's runs are the same on a SLURM node, in a pod or on a CI runner as anywhere
# (test_place.py and test_log_view.py set their own)
for _k in [k for k in os.environ if k.startswith(("SLURM_", "SLURMD_")) or
           k in ("KUBERNETES_SERVICE_HOST", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "BUILDKITE")]:
    del os.environ[_k]

import json
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

# The sanitizers' and valgrind's reports go to files, one per process, in REPORT_DIR rather than
# to the tracker's stderr (which a test may read only in part, or not at all, and whose exit
# status it may expect to be non-zero anyway): the autouse fixture below fails the test during
# which a report appears, and the session's end catches any written later.
REPORT_DIR = tempfile.mkdtemp(prefix="rt-e2e-reports-") if (SANITIZED or VALGRIND) and not COVERAGE_AS else None
if REPORT_DIR and SANITIZED:
    for _var, _defaults in (("ASAN_OPTIONS", "detect_leaks=1"), ("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1"),
                            # TSan's 1 s pause at exit would break the tests of a prompt exit
                            ("TSAN_OPTIONS", "halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=0")):
        _prefix = _var.split("_")[0].lower()
        os.environ[_var] = ":".join(x for x in (_defaults, os.environ.get(_var, ""),
                                                 f"log_path={REPORT_DIR}/{_prefix}") if x)
if VALGRIND_WRAP:
    # every start of TRACKER (run(), Tracker, a test's own subprocess or `sh -c "exec ..."`) goes
    # through this wrapper; exec keeps the pid, so signals and /proc/PID reach the tracker. It
    # lives in BUILD_DIR (a real disk for tests that write next to TRACKER), one per session.
    REAL_TRACKER = TRACKER
    TRACKER = os.path.join(tempfile.mkdtemp(prefix="valgrind-", dir=BUILD_DIR), "resource-tracker")
    with open(TRACKER, "w") as _f:
        # valgrind by its full path: a test may run the tracker with a PATH of its own
        _f.write(f"#!/bin/sh\nexec {shutil.which('valgrind') or 'valgrind'} -q --vgdb=no --error-exitcode=99 "
                 "--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --track-fds=no --num-callers=40 "
                 f"--suppressions={REPO}/tests/valgrind.supp --log-file={REPORT_DIR}/valgrind.%p "
                 f'{REAL_TRACKER} "$@"\n')
    os.chmod(TRACKER, 0o755)

    class _ValgrindPopen(subprocess.Popen):
        """Popen that, for the tracker, returns once it can take its signals (its signalfd is
        open): valgrind needs a second or more to get there, and tests signal a tracker they
        started a moment before. Not for the subcommands (they open none), nor when the test
        feeds stdin (the tracker may wait on it)."""

        def __init__(self, args, *a, **kw):
            super().__init__(args, *a, **kw)
            first = args[0] if isinstance(args, (list, tuple)) and args else None
            sub = args[1] if first and len(args) > 1 else None
            if (first in (TRACKER, TRACKER.encode()) and kw.get("stdin") != subprocess.PIPE
                    and sub not in _SUBCOMMANDS):
                deadline = time.monotonic() + 30
                while self.poll() is None and not _has_signalfd(self.pid):
                    if time.monotonic() > deadline:
                        # never go on silently: a test that signals a tracker not yet able to
                        # take signals would test nothing (e.g. /proc/PID/fd unreadable: a
                        # tracker holding the token is not dumpable, and we are not root)
                        raise RuntimeError(f"valgrind: tracker {self.pid} never opened its signalfd")
                    time.sleep(0.05)

    _SUBCOMMANDS = {x for name in ("summary", "recommend", "report", "history", "info", "upload", "phase") for x in (name, name.encode())}

    def _has_signalfd(pid):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return False
        for fd in fds:
            try:
                if "signalfd" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                    return True
            except OSError:
                pass
        return False

    subprocess.Popen = _ValgrindPopen

_reported = set()


def _new_reports():
    """Names and text of the report files that are not empty and not yet reported."""
    out = []
    for name in sorted(os.listdir(REPORT_DIR)):
        path = os.path.join(REPORT_DIR, name)
        if name not in _reported and os.path.getsize(path) > 0:
            _reported.add(name)
            with open(path, errors="replace") as f:
                out.append(f"--- {name}\n{f.read()}")
    return out


@pytest.fixture(autouse=True)
def no_memory_errors():
    """Fails the test when a sanitizer or valgrind wrote a report while it ran."""
    yield
    if REPORT_DIR:
        reports = _new_reports()
        if reports:
            pytest.fail("memory/UB/race errors reported:\n" + "\n".join(reports)[:20000], pytrace=False)


# Sections (scripts/test, docs/testing.md "Side by side"): most files run side by side under
# pytest-xdist, a file a worker, since their time is a job's or another program's wall clock.
# Two markers take tests out of that:
#   serial   the test judges per-interval timing or CPU shares against the machine (a busy
#            process seen at a whole core, two at once, a tick on time): it runs after the
#            side-by-side part, alone, so that its figures stay exact with no tolerance widened;
#   release  it judges the Release build's timing (its bounds are tighter at TIMEOUT_SCALE 1):
#            the gcc section runs it, with every test the ASan section skipped, and nothing else
#            (each other path runs once, under ASan+UBSan).
# RT_SKIPPED_OUT=FILE: the node ids of the tests this run skipped are added to FILE (the ASan
# section's list); RT_RELEASE_ONLY=FILE: this run keeps the release tests and those FILE lists.


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: judges timing or CPU shares against the machine: runs alone")
    config.addinivalue_line("markers", "release: judges the Release build's timing: runs in the gcc section")


def pytest_collection_modifyitems(config, items):
    only = os.environ.get("RT_RELEASE_ONLY")
    if not only:
        return
    with open(only) as f:
        listed = {line.strip() for line in f if line.strip()}
    keep, drop = [], []
    for item in items:
        (keep if item.get_closest_marker("release") or item.nodeid in listed else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# a pytest-xdist worker (the controller sees every worker's reports: each is written once, there)
_XDIST_WORKER = "PYTEST_XDIST_WORKER" in os.environ


def pytest_runtest_logreport(report):
    out = os.environ.get("RT_SKIPPED_OUT")
    if out and report.skipped and report.when in ("setup", "call") and not _XDIST_WORKER:
        with open(out, "a") as f:
            f.write(report.nodeid + "\n")
    # RT_FAILED_OUT=FILE (scripts/test's side-by-side part): the failed tests, which it runs again
    # alone; never one whose failure is a sanitizer's or valgrind's report (that is no load)
    out = os.environ.get("RT_FAILED_OUT")
    if out and report.failed and not _XDIST_WORKER:
        with open(out, "a") as f:
            f.write(("memory-report " if "memory/UB/race errors reported" in str(report.longrepr) else "")
                    + report.nodeid + "\n")


def pytest_sessionfinish(session, exitstatus):
    if REPORT_DIR:
        reports = _new_reports()
        if reports:
            print("\nconftest: reports written after their tests ended:\n" + "\n".join(reports))
            session.exitstatus = 1
        if VALGRIND_WRAP:
            shutil.rmtree(os.path.dirname(TRACKER), ignore_errors=True)
        if not _reported:
            shutil.rmtree(REPORT_DIR, ignore_errors=True)
        else:
            print(f"\nconftest: the reports are in {REPORT_DIR}")


if os.environ.get("RT_COVERAGE_DIR"):
    @pytest.fixture(autouse=True, scope="module")
    def coverage_prefix(request):
        """scripts/coverage: each file's gcov counts in a directory of their own."""
        stem = os.path.splitext(os.path.basename(str(request.node.fspath)))[0]
        name = os.environ.get("RT_COVERAGE_UNIT") or f"e2e.{stem}" + (f"@{COVERAGE_AS}" if COVERAGE_AS else "")
        os.environ["GCOV_PREFIX"] = os.path.join(os.environ["RT_COVERAGE_DIR"], name)
        os.environ["GCOV_PREFIX_STRIP"] = os.environ.get("RT_COVERAGE_STRIP", "0")
        yield
        os.environ.pop("GCOV_PREFIX", None)
        os.environ.pop("GCOV_PREFIX_STRIP", None)  # alone it would write counts below the cwd


# the state directory (kept history rows, spilled batches) of every run a test does not give one:
# never the user's own ~/.local/state, where a test's kept row would outlive its history
STATE_HOME = tempfile.mkdtemp(prefix="rt-e2e-state-")


@pytest.fixture(scope="session", autouse=True)
def _state_home_removed():
    yield
    shutil.rmtree(STATE_HOME, ignore_errors=True)


def tracker_env(**extra):
    env = dict(os.environ)
    env["XDG_STATE_HOME"] = STATE_HOME
    for k in list(env):
        if (k.startswith("TRACKER_") and k not in ("TRACKER_CLOUD_DISCOVERY",)) or k.startswith("OTEL_"):
            del env[k]
    env["TRACKER_CLOUD_DISCOVERY"] = "0"
    # the Keeper is never the real one: a closed local port unless a test starts a stand-in
    env["TRACKER_KEEPER_URL"] = "http://127.0.0.1:9"
    # texts for people break at COLUMNS where the output is no terminal (80 without it): the tests
    # read their lines whole, unbroken (test_columns.py holds them at 80 and 120 columns)
    env["COLUMNS"] = "1000"
    env.update(extra)
    return env


def run(args, timeout=30, **kw):
    """Runs the tracker to completion; returns CompletedProcess with text output."""
    kw.setdefault("env", tracker_env())
    return subprocess.run([TRACKER] + list(args), capture_output=True, text=True, timeout=timeout * TIMEOUT_SCALE, **kw)


class Tracker:
    """A tracker running in the background, writing JSON lines to stdout."""

    def __init__(self, args, env=None, cwd=None):
        self.p = subprocess.Popen([TRACKER] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env or tracker_env(), cwd=cwd)
        self.lines = []

    def next_sample(self, timeout=10):
        deadline = time.monotonic() + timeout * TIMEOUT_SCALE
        line = self.p.stdout.readline()
        assert line, f"tracker ended: rc={self.p.poll()} stderr={self.p.stderr.read()}"
        assert time.monotonic() < deadline + 5
        self.lines.append(line)
        return json.loads(line)

    def stop(self, sig=signal.SIGTERM, timeout=10):
        self.p.send_signal(sig)
        out, err = self.p.communicate(timeout=timeout * TIMEOUT_SCALE)
        self.lines += [l for l in out.splitlines() if l.strip()]
        return self.p.returncode, err

    def samples(self):
        return [json.loads(l) for l in self.lines]


@pytest.fixture
def tracker_factory():
    started = []

    def make(args, **kw):
        t = Tracker(args, **kw)
        started.append(t)
        return t

    yield make
    for t in started:
        if t.p.poll() is None:
            t.p.kill()
            t.p.wait()
