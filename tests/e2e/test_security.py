"""Security, judged from the outside: secrets (the API token, the S3 keys) reach no output, log,
file, /proc entry of the tracker or environment of the job, and the tracker is not dumpable while
it holds them; arguments after `--` reach execvp verbatim (no shell); files the tracker creates
get modes within the umask and are never followed through a symlink planted in a shared
directory (the kernel's fs.protected_symlinks rule, proven with the sysctl off); the tracker
runs as nobody with no capability. Peers are the local stand-ins (tests/stubs) on 127.0.0.1."""
import ctypes
import glob
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED, TRACKER, VALGRIND, tracker_env
from test_recommend import closed_port_url
from test_stream import AK, BUCKET, S3STUB, SENTINEL, SK, ST, TOKEN, Sentinel

SECRETS = (TOKEN, SK, ST, AK)

# what these tests judge (the kernel's copy of the environment, the dumpable flag, another user
# running the tool) is what valgrind itself changes: scripts/test does not run them under it
pytestmark = pytest.mark.skipif(VALGRIND, reason="valgrind keeps its own copy of the environment and its own flags")
NOBODY = 65534
# The wrapped command: writes $SECURITY_OUT/child.json (its pid, argv and environment; whole, by
# rename), sleeps argv[1] seconds, exits 7 when argv[2] is "exit7".
CHILD_CODE = """
import json, os, sys, time
out = os.environ["SECURITY_OUT"]
env = open("/proc/self/environ", "rb").read().decode("utf-8", "replace")
doc = {"pid": os.getpid(), "argv": sys.argv[1:], "environ": env}
with open(os.path.join(out, ".child.tmp"), "w") as f:
    json.dump(doc, f)
os.replace(os.path.join(out, ".child.tmp"), os.path.join(out, "child.json"))
time.sleep(float(sys.argv[1]))
sys.exit(7 if sys.argv[2:3] == ["exit7"] else 0)
"""
CHILD = ["/usr/bin/python3", "-c", CHILD_CODE]


def s3_store(tmp_path, **kw):
    """The SigV4 checker with its in-memory store (no s3rver needed)."""
    if not os.path.exists(S3STUB) or not os.path.exists(SENTINEL):
        pytest.skip("the S3 and Sentinel stand-ins are not on this branch")
    sys.path.insert(0, os.path.dirname(S3STUB))
    import s3_sigv4
    args = dict(secret=SK, token=ST, buckets=(BUCKET,), access_key=AK, s3rver=False)
    args.update(kw)
    return s3_sigv4.start(tmp_path, **args)


def shared_dir(mode=0o1777, owner=0):
    """A directory under /tmp that nobody (65534) can reach (pytest's tmp_path is root's 0700)."""
    d = tempfile.mkdtemp(prefix="rt-sec-", dir="/tmp")
    os.chmod(d, mode)
    os.chown(d, owner, owner)
    return d


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def no_secret_in(where, data):
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    for s in SECRETS:
        assert s not in data, f"a secret ({s[:6]}...) leaked into {where}"


def proc_read(pid, name):
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def wait_for(path, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.05)
    return False


# ---- 1. secrets -----------------------------------------------------------------------------------


class Peers:
    """The stand-ins for one scenario: the Sentinel API (right or wrong token, failing or not) and
    S3 (right or wrong keys), or dead ports."""

    def __init__(self, tmp_path, scenario):
        self.made = []
        self.api_url = self.s3_url = None
        if scenario == "dead":
            self.api_url, self.s3_url = closed_port_url(), closed_port_url()
            return
        # api401: the stand-in expects another token (a later --token wins), so every call is a 401
        flags = {"api401": ["--token", "another-token"],
                 "api500": ["--fail-register", "2", "--fail-finish", "100", "--fail-status", "500"]}.get(scenario, [])
        api = Sentinel(tmp_path, *flags)
        self.made.append(api)
        s3kw = {"s3bad": {"secret": "not-the-secret"}, "s3key": {"access_key": "AKIAOTHERKEY"}}.get(scenario, {})
        s3 = s3_store(tmp_path, **s3kw)
        self.made.append(s3)
        self.api, self.s3 = api, s3
        self.api_url, self.s3_url = api.url, s3.url

    def stop(self):
        for m in self.made:
            m.stop()


@pytest.mark.parametrize("scenario", ["ok", "api401", "api500", "s3bad", "s3key", "dead"])
def test_secrets_reach_no_output(tmp_path, scenario):
    """Streaming with the token, with the peers working or failing: the token and the S3 keys are
    in no output, no file the run writes (samples, report, history, spill), not in the tracker's
    cmdline, comm or environ, and the wrapped command's environment has no SENTINEL_API_TOKEN."""
    peers = Peers(tmp_path, scenario)
    try:
        state = tmp_path / "state"
        env = tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=peers.api_url, AWS_ENDPOINT_URL_S3=peers.s3_url,
                          AWS_REGION="eu-central-1", TRACKER_UPLOAD_INTERVAL="0.3", TRACKER_FINISH_TIMEOUT="2",
                          XDG_STATE_HOME=str(state), SECURITY_OUT=str(tmp_path))
        out, rep, hist = tmp_path / "samples.csv", tmp_path / "report.html", tmp_path / "history.db"
        t = subprocess.Popen([TRACKER, "-i", "0.1", "-f", "csv", "-o", str(out), "--summary", "--report", str(rep),
                              "--history", str(hist), "--", *CHILD, "2.5"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert wait_for(tmp_path / "child.json"), "the wrapped command did not start"
        # the tracker's own /proc entries while it holds the secrets
        for name in ("cmdline", "comm", "environ"):
            no_secret_in(f"/proc/TRACKER/{name}", proc_read(t.pid, name))
        so, se = t.communicate(timeout=60)
        assert t.returncode == 0, se
        child = json.loads((tmp_path / "child.json").read_text())
        assert "SENTINEL_API_TOKEN" not in child["environ"], "the job inherited the token"
        no_secret_in("/proc/CHILD/environ", json.dumps(child))
        no_secret_in("stdout", so)
        no_secret_in("stderr", se)
        for f in [out, rep, hist] + [p for p in tmp_path.rglob("*") if p.is_file() and "sentinel" not in p.name
                                     and "s3_sigv4" not in p.name]:
            no_secret_in(str(f), f.read_bytes())
        spilled = list(state.rglob("*.csv.gz")) if state.exists() else []
        if scenario == "dead":
            assert spilled, "nothing was spilled with the API down"
        assert out.read_text().startswith("timestamp,")
        if scenario == "ok":
            run = next(iter(peers.api.doc()["runs"].values()))
            assert run["finish"]["data_source"] == "s3"
        if scenario in ("api401", "api500"):
            assert f"HTTP {scenario[3:]}" in se.decode(), se  # the failure was met and said
        if scenario in ("s3bad", "s3key"):
            assert "upload of batch" in se.decode(), se  # the S3 error was met and said
    finally:
        peers.stop()


LIB_LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"]


class StreamOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("api_url", ctypes.c_char_p), ("token", ctypes.c_char_p),
                ("upload_interval_secs", ctypes.c_double), ("s3_endpoint_url", ctypes.c_char_p),
                ("region", ctypes.c_char_p), ("job", ctypes.c_void_p), ("command", ctypes.c_void_p),
                ("host", ctypes.c_void_p), ("cloud", ctypes.c_void_p), ("spill_dir", ctypes.c_char_p),
                ("memory_limit_bytes", ctypes.c_size_t), ("finish_timeout_secs", ctypes.c_double),
                ("log", ctypes.c_void_p), ("log_user", ctypes.c_void_p)]


LOGFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


@pytest.mark.skipif(SANITIZED, reason="a sanitizer build's library does not load into Debian's uninstrumented python")
@pytest.mark.parametrize("scenario", ["ok", "api401", "api500", "s3bad", "dead"])
def test_library_messages_at_every_level(tmp_path, scenario):
    """The tool drops the library's debug and info messages; the library's stream, driven through
    its public API with a log callback that keeps every level, says no secret either."""
    lib_path = os.path.join(BUILD_DIR, "libresource-tracker.so")
    if not os.path.exists(lib_path):
        pytest.skip("no shared library in the build")
    lib = ctypes.CDLL(lib_path)
    peers = Peers(tmp_path, scenario)
    msgs = []
    cb = LOGFN(lambda _u, level, msg: msgs.append((level, msg.decode("utf-8", "replace"))))
    try:
        o = StreamOptions(struct_size=ctypes.sizeof(StreamOptions), api_url=peers.api_url.encode(),
                          token=TOKEN.encode(), upload_interval_secs=0.3, s3_endpoint_url=peers.s3_url.encode(),
                          region=b"eu-central-1", spill_dir=str(tmp_path / "spill").encode(),
                          finish_timeout_secs=2.0, log=ctypes.cast(cb, ctypes.c_void_p))
        sampler, st, sample = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        assert lib.rt_sampler_new(None, ctypes.byref(sampler)) == 0
        rc = lib.rt_stream_start(ctypes.byref(o), ctypes.byref(st))
        if rc != 0:
            pytest.skip("streaming is not available (libcurl or zlib missing)")
        for _ in range(15):
            time.sleep(0.1)
            assert lib.rt_sampler_sample(sampler, ctypes.byref(sample)) == 0
            lib.rt_stream_add(st, sample)
        lib.rt_stream_finish(st, 1, 1)
        lib.rt_stream_free(st)
        lib.rt_sampler_free(sampler)
    finally:
        peers.stop()
    assert msgs, "the stream said nothing"
    for level, m in msgs:
        no_secret_in(f"a {LIB_LEVELS[level]} message", m)
    for f in (tmp_path / "spill").rglob("*") if (tmp_path / "spill").exists() else []:
        no_secret_in(str(f), f.read_bytes())
    print(f"\n{scenario}: {len(msgs)} messages, levels {sorted({LIB_LEVELS[l] for l, _ in msgs})}")


def owner(path):
    return os.stat(path).st_uid


def test_not_dumpable_while_holding_the_token():
    """As nobody with the token: the tracker is not dumpable (its /proc files are root's, so no
    core dump and no environ or memory for others of the same uid), yet it samples its job, and
    the job after exec is dumpable as usual (its /proc files are nobody's). Without a token the
    tracker stays dumpable."""
    d = shared_dir(0o755, NOBODY)
    try:
        for token in (TOKEN, None):
            env = tracker_env(SENTINEL_API_URL=closed_port_url(), AWS_ENDPOINT_URL_S3=closed_port_url(),
                              TRACKER_FINISH_TIMEOUT="1", XDG_STATE_HOME=d, HOME=d, SECURITY_OUT=d)
            if token:
                env["SENTINEL_API_TOKEN"] = token
            for f in ("child.json",):
                if os.path.exists(os.path.join(d, f)):
                    os.unlink(os.path.join(d, f))
            out = os.path.join(d, "samples.jsonl")
            t = subprocess.Popen([TRACKER, "-i", "0.1", "-o", out, "--", *CHILD, "1.5"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=as_nobody)
            assert wait_for(os.path.join(d, "child.json"))
            child = json.loads(open(os.path.join(d, "child.json")).read())
            tracker_owner = owner(f"/proc/{t.pid}/environ")
            child_owner = owner(f"/proc/{child['pid']}/environ")
            so, se = t.communicate(timeout=30)
            assert t.returncode == 0, se
            assert child_owner == NOBODY, "the job is not dumpable after exec"
            if token:
                assert tracker_owner == 0, "the tracker holding the token is dumpable"
                assert "SENTINEL_API_TOKEN" not in child["environ"]
            else:
                assert tracker_owner == NOBODY
            samples = [json.loads(l) for l in open(out)]
            assert len(samples) >= 5
            assert samples[-1]["process"]["pid"] == child["pid"]
            assert any(s["process"]["cpu_secs_total"] for s in samples)
            no_secret_in("stderr", se)
            # reading its own /proc/self files (root's while not dumpable) costs nothing: the only
            # words are the stream's about the API on a dead port
            said = [l for l in se.decode().splitlines() if l.startswith("resource-tracker:")]
            assert all("stream:" in l for l in said), se
    finally:
        shutil.rmtree(d)


# execs argv[1] (JSON: {"argv": [...], "envp": [...]}) with that exact environment block, which
# may hold a name twice (a mapping cannot)
EXECVE_CODE = """
import ctypes, json, sys
a = json.loads(sys.argv[1])
def vec(xs):
    return (ctypes.c_char_p * (len(xs) + 1))(*[x.encode() for x in xs], None)
ctypes.CDLL(None).execve(a["argv"][0].encode(), vec(a["argv"]), vec(a["envp"]))
sys.exit(127)
"""


def test_duplicate_token_entries_all_wiped(tmp_path):
    """SENTINEL_API_TOKEN twice in the environment (execve allows it; getenv sees the first):
    neither value is left in the tracker's /proc/PID/environ (its initial block), and the job
    inherits neither."""
    second = "second-token-d41d8cd98f00b204e980"
    env = tracker_env(SENTINEL_API_URL=closed_port_url(), AWS_ENDPOINT_URL_S3=closed_port_url(),
                      TRACKER_FINISH_TIMEOUT="1", XDG_STATE_HOME=str(tmp_path), SECURITY_OUT=str(tmp_path))
    env.pop("SENTINEL_API_TOKEN", None)
    envp = [f"{k}={v}" for k, v in env.items()]
    envp += [f"SENTINEL_API_TOKEN={TOKEN}", f"SENTINEL_API_TOKEN={second}"]
    argv = [TRACKER, "-q", "-i", "0.1", "--", *CHILD, "1.5"]
    t = subprocess.Popen(["/usr/bin/python3", "-c", EXECVE_CODE, json.dumps({"argv": argv, "envp": envp})],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_for(tmp_path / "child.json")
        environ = proc_read(t.pid, "environ")
        child = json.loads((tmp_path / "child.json").read_text())
    finally:
        so, se = t.communicate(timeout=30)
    assert t.returncode == 0, se
    assert b"SENTINEL_API_TOKEN=" in environ  # the names stay; the values are wiped
    assert TOKEN.encode() not in environ and second.encode() not in environ
    assert "SENTINEL_API_TOKEN" not in child["environ"]


@pytest.mark.skipif(SANITIZED or VALGRIND,
                    reason="AddressSanitizer and valgrind catch SIGSEGV themselves (valgrind writes vgcore files of its own)")
def test_no_core_dump_while_holding_the_token():
    """SIGSEGV to a tracker (as nobody, core size unlimited, core_pattern a plain file name)
    leaves a core file without the token (the control) and none with it."""
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    if pattern.startswith("|") or "/" in pattern:
        pytest.skip(f"core_pattern {pattern!r} is not a plain file name in the working directory")
    import resource

    def nobody_with_cores():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        as_nobody()

    d = shared_dir(0o755, NOBODY)
    try:
        cores = {}
        for token in (None, TOKEN):
            run_dir = os.path.join(d, "with" if token else "without")
            os.mkdir(run_dir)
            os.chown(run_dir, NOBODY, NOBODY)
            env = tracker_env(SENTINEL_API_URL=closed_port_url(), AWS_ENDPOINT_URL_S3=closed_port_url(), HOME=d,
                              XDG_STATE_HOME=d)
            if token:
                env["SENTINEL_API_TOKEN"] = token
            t = subprocess.Popen([TRACKER, "-q", "-i", "0.1", "--", "sleep", "30"], env=env, cwd=run_dir,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=nobody_with_cores)
            time.sleep(0.8)
            children = [int(c) for c in proc_read(t.pid, f"task/{t.pid}/children").split()]
            os.kill(t.pid, signal.SIGSEGV)
            t.wait(timeout=30)
            for c in children:
                try:
                    os.kill(c, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            assert t.returncode == -signal.SIGSEGV
            cores[bool(token)] = [f for f in os.listdir(run_dir) if f.startswith("core")]
        assert cores[False], "no core without the token: the control failed (core dumps off here?)"
        assert cores[True] == [], "a core dump of the tracker holding the token"
    finally:
        shutil.rmtree(d)


# ---- 2. no shell ----------------------------------------------------------------------------------

ODD_ARGS = ["$(touch X)", "`touch X`", ";", "touch X;", "|", "*", ">", "> X", "a\nb\n", "", "-x", "--", "--help",
            "&& touch X", "'", '"', "\\", "$HOME", "~", "X"]


def test_arguments_after_dashdash_are_not_interpreted(tmp_path):
    """Each argument reaches the command as it is: no command substitution, no globbing, no
    redirection, no splitting; empty and leading-dash arguments kept."""
    env = tracker_env(SECURITY_OUT=str(tmp_path))
    p = subprocess.run([TRACKER, "-q", "--", *CHILD, "0", *ODD_ARGS], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    child = json.loads((tmp_path / "child.json").read_text())
    assert child["argv"] == ["0", *ODD_ARGS]
    assert sorted(os.listdir(tmp_path)) == ["child.json"], "something was interpreted"
    # without `--` too: the first word that is not an option starts the command
    p = subprocess.run([TRACKER, "-q", *CHILD, "0", "-q", "*", "$(touch X)"], env=env,
                       cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "child.json").read_text())["argv"] == ["0", "-q", "*", "$(touch X)"]
    assert not (tmp_path / "X").exists()


def test_no_shell_in_the_sources():
    """Nothing in src/ starts a shell: no system(), popen(), "sh -c" or /bin/sh."""
    bad = re.compile(r"\b(system|popen)\s*\(|\"sh\"|sh -c|/bin/sh|\bexecl\w*\s*\(")
    hits = []
    for f in glob.glob(os.path.join(REPO, "src", "**", "*.[ch]"), recursive=True):
        for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
            code = line.split("//")[0]
            if bad.search(code) and not code.lstrip().startswith(("*", "/*")):
                hits.append(f"{os.path.relpath(f, REPO)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)


# ---- 3. files -------------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o077, 0o022])
def test_modes_within_the_umask(tmp_path, umask):
    """Samples, report, history: no mode bit outside 0666 & ~umask; spill files 0600 in a 0700
    directory (the API on a dead port makes the run spill)."""
    state = tmp_path / "state"
    env = tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=closed_port_url(),
                      AWS_ENDPOINT_URL_S3=closed_port_url(), TRACKER_UPLOAD_INTERVAL="0.3",
                      TRACKER_FINISH_TIMEOUT="1", XDG_STATE_HOME=str(state))
    out, rep, hist = tmp_path / "s.jsonl", tmp_path / "r.html", tmp_path / "h.db"
    p = subprocess.run([TRACKER, "-i", "0.1", "-o", str(out), "--report", str(rep), "--history", str(hist), "--",
                        "sleep", "1.2"], env=env, capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: os.umask(umask))
    assert p.returncode == 0, p.stderr
    allowed = 0o666 & ~umask
    for f in (out, rep, hist):
        mode = stat.S_IMODE(os.stat(f).st_mode)
        assert mode & ~allowed == 0, f"{f.name}: {oct(mode)} with umask {oct(umask)}"
    assert stat.S_IMODE(os.stat(out).st_mode) == allowed  # the umask decides, as for any tool
    spill = state / "resource-tracker"
    files = list(spill.iterdir())
    # no temporary left: batches, and the run's record and lock (a later delivery's)
    assert files and all(f.name.endswith((".csv.gz", ".run", ".lock")) for f in files), files
    assert stat.S_IMODE(os.stat(spill).st_mode) == 0o700
    assert all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in files)


@pytest.fixture
def symlinks_unprotected():
    """fs.protected_symlinks off for the test (restored after), so that the kernel does not do
    our check for us; skipped where the sysctl cannot be written."""
    path = "/proc/sys/fs/protected_symlinks"
    try:
        old = open(path).read().strip()
    except OSError:
        pytest.skip("no fs.protected_symlinks here")
    if old != "0":
        try:
            with open(path, "w") as f:
                f.write("0")
        except OSError:
            pytest.skip("fs.protected_symlinks is on and cannot be turned off (not root)")
    try:
        yield
    finally:
        if old != "0":
            with open(path, "w") as f:
                f.write(old)


def plant(shared, name, target, uid=NOBODY):
    link = os.path.join(shared, name)
    os.symlink(target, link)
    os.lchown(link, uid, uid)
    return link


@pytest.mark.parametrize("flag", ["-o", "--report", "--history"])
def test_planted_symlink_refused(tmp_path, symlinks_unprotected, flag):
    """A symlink owned by nobody in a 1777 directory (root's), pointing at a victim: refused with
    exit 2 before anything starts, the victim untouched. A link of ours, or of the directory's
    owner, is followed as usual."""
    shared = shared_dir()
    try:
        victim = tmp_path / "victim"
        victim.write_text("precious\n")
        link = plant(shared, "out", str(victim))
        marker = tmp_path / "started"
        quiet = ["-q"] if flag != "-o" else []
        p = subprocess.run([TRACKER, "-i", "0.1", *quiet, flag, link, "--", "touch", str(marker)],
                           env=tracker_env(), capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, p.stderr
        assert "refusing" in p.stderr and "symlink" in p.stderr, p.stderr
        assert "cannot open" not in p.stderr, p.stderr  # one line says why
        assert not marker.exists(), "the command started"
        assert victim.read_text() == "precious\n"
        # the rule's other side: a link owned by the directory's owner (root, us) is followed
        os.unlink(link)
        ours = tmp_path / "ours.out"
        plant(shared, "out", str(ours), uid=0)
        p = subprocess.run([TRACKER, "-i", "0.1", flag, link, "--", "sleep", "0.3"], env=tracker_env(),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert ours.exists() and ours.stat().st_size > 0
    finally:
        shutil.rmtree(shared)


def test_history_journal_link_not_followed(tmp_path, symlinks_unprotected):
    """SQLite's journal beside the history has a predictable name: a link planted there (by
    nobody, in a 1777 directory) is not written through (SQLite opens with O_NOFOLLOW)."""
    shared = shared_dir()
    try:
        victim = tmp_path / "victim"
        victim.write_text("precious\n")
        plant(shared, "h.db-journal", str(victim))
        p = subprocess.run([TRACKER, "-q", "-i", "0.1", "--history", os.path.join(shared, "h.db"), "--", "true"],
                           env=tracker_env(), capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        assert victim.read_text() == "precious\n"
    finally:
        shutil.rmtree(shared)


def test_planted_symlink_refused_report_subcommand(tmp_path, symlinks_unprotected):
    fixture = os.path.join(REPO, "tests", "fixtures", "runs", "tool.csv")
    shared = shared_dir()
    try:
        victim = tmp_path / "victim"
        victim.write_text("precious\n")
        link = plant(shared, "report.html", str(victim))
        p = subprocess.run([TRACKER, "report", fixture, "-o", link], env=tracker_env(), capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 2 and "symlink" in p.stderr, p.stderr
        assert victim.read_text() == "precious\n"
    finally:
        shutil.rmtree(shared)


def test_output_to_dev_stdout_still_works():
    p = subprocess.run([TRACKER, "-i", "0.1", "-o", "/dev/stdout", "--", "sleep", "0.3"], env=tracker_env(),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[0])["timestamp_secs"] > 0


@pytest.mark.parametrize("plant_kind", ["link", "foreign_dir"])
def test_spill_dir_planted_in_shared_dir(tmp_path, symlinks_unprotected, plant_kind):
    """The spill directory ($XDG_STATE_HOME/resource-tracker) in a shared directory: a symlink
    planted there by nobody (to a private directory of ours), or a directory nobody made first
    and others can write, is not spilled into (one warning); the batches go to a directory of
    our own instead ($XDG_RUNTIME_DIR/resource-tracker, said), none lost; the job's status
    stands."""
    shared = shared_dir()
    try:
        victim = tmp_path / "victimdir"
        victim.mkdir(mode=0o700)
        if plant_kind == "link":
            plant(shared, "resource-tracker", str(victim))
            target = victim
        else:
            target = os.path.join(shared, "resource-tracker")
            os.mkdir(target)
            os.chmod(target, 0o777)
            os.chown(target, NOBODY, NOBODY)
        rt = tmp_path / "run"
        rt.mkdir(mode=0o700)
        env = tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=closed_port_url(),
                          AWS_ENDPOINT_URL_S3=closed_port_url(), TRACKER_UPLOAD_INTERVAL="0.3",
                          TRACKER_FINISH_TIMEOUT="1", XDG_STATE_HOME=shared, XDG_RUNTIME_DIR=str(rt))
        p = subprocess.run([TRACKER, "-q", "-i", "0.1", "--", "sh", "-c", "sleep 1; exit 4"], env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 4, p.stderr
        assert "not a directory of ours alone" in p.stderr, p.stderr
        assert f"kept in {rt}/resource-tracker instead" in p.stderr, p.stderr
        assert "are lost" not in p.stderr, p.stderr
        assert os.listdir(target) == []
        assert any(n.endswith(".csv.gz") for n in os.listdir(rt / "resource-tracker"))
        no_secret_in("stderr", p.stderr)
    finally:
        shutil.rmtree(shared)


def spill_run(state):
    """A streamed run (API and S3 on dead ports, so it spills) with $XDG_STATE_HOME at state
    and $XDG_RUNTIME_DIR at state/../run (its fallback, made 0700)."""
    rt = state.parent / "run"
    rt.mkdir(mode=0o700, exist_ok=True)
    env = tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=closed_port_url(),
                      AWS_ENDPOINT_URL_S3=closed_port_url(), TRACKER_UPLOAD_INTERVAL="0.3",
                      TRACKER_FINISH_TIMEOUT="1", XDG_STATE_HOME=str(state), XDG_RUNTIME_DIR=str(rt))
    return subprocess.run([TRACKER, "-q", "-i", "0.1", "--", "sleep", "1"], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("group", ["ours", "another"])
def test_spill_dir_group_writable(tmp_path, group):
    """A spill directory made under umask 002 (0775, as Debian's user-private groups have it):
    spilled into when its group is our own (egid), refused when it is another's (the batches
    then go to $XDG_RUNTIME_DIR/resource-tracker, said)."""
    spill = tmp_path / "state" / "resource-tracker"
    spill.mkdir(parents=True)
    os.chmod(spill, 0o775)
    os.chown(spill, -1, os.getegid() if group == "ours" else NOBODY)
    p = spill_run(tmp_path / "state")
    assert p.returncode == 0, p.stderr
    if group == "ours":
        assert "cannot spill" not in p.stderr, p.stderr
        assert any(f.name.endswith(".csv.gz") for f in spill.iterdir()), p.stderr
    else:
        assert "not a directory of ours alone" in p.stderr and "instead" in p.stderr, p.stderr
        assert list(spill.iterdir()) == []
        assert any(f.name.endswith(".csv.gz") for f in (tmp_path / "run" / "resource-tracker").iterdir())


def test_spill_failure_not_called_foreign(tmp_path):
    """A spill directory of ours that refuses new files with EPERM (immutable, chattr +i): the
    warning says so, not that the directory is another's."""
    spill = tmp_path / "state" / "resource-tracker"
    spill.mkdir(parents=True, mode=0o700)
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(spill)], capture_output=True).returncode:
        pytest.skip("chattr +i does not work here")
    try:
        p = spill_run(tmp_path / "state")
    finally:
        subprocess.run(["chattr", "-i", str(spill)], check=True)
    assert p.returncode == 0, p.stderr
    assert "cannot spill" in p.stderr and "Operation not permitted" in p.stderr, p.stderr
    assert "not a directory of ours alone" not in p.stderr, p.stderr


# ---- 4. unprivileged ------------------------------------------------------------------------------


def test_binary_needs_no_privilege():
    """No setuid/setgid bit and no file capabilities on the tool."""
    st = os.stat(TRACKER)
    assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID)
    try:
        os.getxattr(TRACKER, "security.capability")
        pytest.fail("the tool carries file capabilities")
    except OSError:
        pass


def test_wrapper_mode_as_nobody():
    """As nobody with no capability at all: samples and the summary, the job's status passed
    through, the tracker's effective capabilities empty, and nothing said on stderr but the
    summary (no cgroup it may not make is a warning)."""
    d = shared_dir(0o755, NOBODY)
    try:
        out = os.path.join(d, "s.jsonl")
        env = tracker_env(SECURITY_OUT=d, HOME=d)
        t = subprocess.Popen([TRACKER, "-i", "0.1", "-o", out, "--summary", "--", *CHILD, "1",
                              "exit7"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=as_nobody)
        assert wait_for(os.path.join(d, "child.json"))
        status = proc_read(t.pid, "status").decode()
        so, se = t.communicate(timeout=30)
        assert t.returncode == 7, se
        assert re.search(r"^CapEff:\s*0+$", status, re.M), status
        assert re.search(r"^Uid:\s*65534\s", status, re.M)
        lines = [l for l in se.splitlines() if l.startswith("resource-tracker:")]
        assert lines == ["resource-tracker: summary of the run"], se
        samples = [json.loads(l) for l in open(out)]
        assert len(samples) >= 5 and samples[-1]["process"] is not None
        assert samples[-1]["process"]["cpu_secs_total"] > 0
    finally:
        shutil.rmtree(d)


def test_whole_machine_as_nobody():
    d = shared_dir(0o755, NOBODY)
    try:
        out = os.path.join(d, "s.jsonl")
        t = subprocess.Popen([TRACKER, "-i", "0.1", "-o", out, "--summary"], env=tracker_env(HOME=d),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_nobody)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not os.path.exists(out) or len(open(out).readlines()) < 4):
            time.sleep(0.05)
        t.send_signal(signal.SIGTERM)
        so, se = t.communicate(timeout=30)
        assert t.returncode == 0, se
        samples = [json.loads(l) for l in open(out)]
        assert len(samples) >= 4 and samples[-1]["memory"]["total_mib"] > 0
        assert any(s["cpu"]["utilization_pct"] is not None for s in samples)
        assert [l for l in se.splitlines() if l.startswith("resource-tracker:")] == \
            ["resource-tracker: summary of the run"], se
    finally:
        shutil.rmtree(d)
