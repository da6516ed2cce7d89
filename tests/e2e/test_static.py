"""The static build (scripts/build-static, docs/install.md): one binary that needs nothing on the
target. Built here once per session (or taken from RT_STATIC_BUILD_DIR), then run in an empty
root -- a directory holding only the binary, a job and the mount points of /proc and /sys, the
host's bound there in a mount namespace of its own, entered with chroot -- on a real job (a static
program built here that touches 64 MiB and burns CPU, then says what getrusage counted): its
samples as JSON lines and CSV, the summary, recommend and the report of them, and that what it
cannot load (SQLite, libcurl, zlib, NVML) is said plainly: a usage error when asked for on the
command line, one warning when only the environment asks or an NVIDIA driver is there. Skipped, saying why, without musl-gcc (Debian's
musl-tools), jansson's source or a way to enter a root; and under the sanitizers and valgrind
(this build is its own, uninstrumented)."""
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import REPO, SANITIZED, VALGRIND
from test_stream import check_delivery, local_rows, no_secrets, peers, spilled_rows, stream_env, the_run  # noqa: F401 (peers: a fixture)

pytestmark = pytest.mark.skipif(SANITIZED or VALGRIND,
                                reason="the static build is its own uninstrumented build: nothing to check under "
                                       "the sanitizers or valgrind")

# The job: touches MIB mebibytes, runs ROUNDS million steps of arithmetic, prints the CPU seconds
# (user + system) the kernel counted for it, exits 3 (or its third argument).
JOB_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
int main(int argc, char **argv)
{
    size_t bytes = (size_t)strtoul(argv[1], NULL, 10) << 20;
    long rounds = strtol(argv[2], NULL, 10);
    volatile unsigned char *p = malloc(bytes);
    for (size_t i = 0; p && i < bytes; i += 4096)
        p[i] = 1;
    volatile unsigned long x = 0;
    for (long r = 0; r < rounds; r++)
        for (unsigned long i = 0; i < 1000000; i++)
            x += i ^ (unsigned long)r;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%.3f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    return argc > 3 ? (int)strtol(argv[3], NULL, 10) : 3;
}
"""
JOB_MIB = 64
JOB_ROUNDS = 2500
# the environment of a run in the root: the suite's loopback-only settings, and the PATH that finds
# unshare, mount and chroot outside it (inside, every path is absolute)
ENV = {"TRACKER_CLOUD_DISCOVERY": "0", "TRACKER_KEEPER_URL": "off", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@pytest.fixture(scope="module")
def static_tracker(tmp_path_factory):
    """The static binary: RT_STATIC_BUILD_DIR's, or built by scripts/build-static into build-static/."""
    given = os.environ.get("RT_STATIC_BUILD_DIR")
    if given and os.access(os.path.join(given, "resource-tracker"), os.X_OK):
        return os.path.join(given, "resource-tracker")
    if not shutil.which("musl-gcc"):
        pytest.skip("musl-gcc not found: scripts/install-deps --static (Debian package musl-tools)")
    out = given or os.path.join(REPO, "build-static")
    r = subprocess.run([os.path.join(REPO, "scripts", "build-static")], capture_output=True, text=True,
                       timeout=900, env={**os.environ, "RT_STATIC_BUILD_DIR": out})
    if r.returncode == 2:  # the script's word for "cannot be had here" (no jansson source)
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return os.path.join(out, "resource-tracker")


@pytest.fixture(scope="module")
def job(static_tracker, tmp_path_factory):
    d = tmp_path_factory.mktemp("static-job")
    (d / "job.c").write_text(JOB_C)
    r = subprocess.run(["musl-gcc", "-static", "-O1", "-o", str(d / "job"), str(d / "job.c")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return str(d / "job")


@pytest.fixture
def root(tmp_path, static_tracker, job):
    """An empty root: the binary, the job, the mount points of /proc and /sys; nothing else."""
    r = tmp_path / "root"
    r.mkdir()
    shutil.copy2(static_tracker, r / "resource-tracker")
    shutil.copy2(job, r / "job")
    (r / "proc").mkdir()
    (r / "sys").mkdir()
    return r


def in_root(root, args, env=None, timeout=120, then=""):
    """Runs args (paths inside root) in root, in a mount namespace of its own holding the host's
    /proc and /sys (a user namespace too when not root), with only env in the environment; then:
    shell commands run before entering ($0 is the root)."""
    if not shutil.which("unshare") or not shutil.which("chroot"):
        pytest.skip("unshare or chroot not found (util-linux, coreutils)")
    ns = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        ns[1:1] = ["--user", "--map-root-user"]
    script = f'mount --rbind /proc "$0/proc" && mount --rbind /sys "$0/sys" && {then or "true"} && exec chroot "$0" "$@"'
    r = subprocess.run(ns + ["sh", "-c", script, str(root)] + args, capture_output=True, text=True,
                       timeout=timeout, env={**ENV, **(env or {})})
    if r.returncode != 0 and "unshare failed" in r.stderr:
        pytest.skip(f"cannot enter a root here: {r.stderr.strip()}")
    return r


def elf_segments(path):
    """{type: memory size} of an ELF64 little-endian file's program headers."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit little-endian ELF file"
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = {}
    for i in range(phnum):
        at = phoff + i * phentsize
        out[struct.unpack_from("<I", data, at)[0]] = struct.unpack_from("<Q", data, at + 0x28)[0]  # p_type, p_memsz
    return out


PT_DYNAMIC, PT_INTERP, PT_GNU_STACK = 2, 3, 0x6474E551


def test_binary_needs_no_loader_nor_library(static_tracker):
    """no program interpreter (ld.so), no dynamic section (no library named), threads' stacks of
    glibc's 8 MiB (musl's default is 128 KiB: its PT_GNU_STACK sets it), and it runs"""
    segs = elf_segments(static_tracker)
    assert PT_INTERP not in segs and PT_DYNAMIC not in segs, segs
    assert segs.get(PT_GNU_STACK, 0) >= 8 << 20, segs
    if shutil.which("file"):
        out = subprocess.run(["file", "-L", static_tracker], capture_output=True, text=True).stdout
        assert "statically linked" in out, out
    # the check can fail: the normal build's binary has both
    from conftest import TRACKER
    if os.path.exists(TRACKER):
        assert PT_INTERP in elf_segments(TRACKER)
    r = subprocess.run([static_tracker, "--version"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("resource-tracker ") and "static build" in r.stdout, r.stdout


def test_tracks_a_real_job_in_an_empty_root(root):
    """JSON lines of a real job from an empty root: the job's exit status, its CPU time as the
    kernel counted it for the job, its 64 MiB; then the summary and the report of those samples,
    in the same root, and nothing else written there"""
    r = in_root(root, ["/resource-tracker", "-i", "0.2", "-o", "/run.jsonl", "--", "/job", str(JOB_MIB),
                       str(JOB_ROUNDS)])
    assert r.returncode == 3, r.stderr
    job_cpu = float(r.stdout.split()[-1])
    assert job_cpu > 0.1, r.stdout  # the job did burn CPU (else the comparison below says little)
    samples = [json.loads(line) for line in (root / "run.jsonl").read_text().splitlines()]
    assert len(samples) >= 2, samples
    tracked_cpu = max(s["process"]["cpu_secs_total"] for s in samples)
    assert job_cpu * 0.85 - 0.02 <= tracked_cpu <= job_cpu * 1.15 + 0.05, (job_cpu, tracked_cpu)
    rss_peak = max(s["process"]["rss_peak_mib"] for s in samples)
    assert JOB_MIB * 0.95 <= rss_peak <= JOB_MIB + 16, rss_peak
    assert samples[0]["memory"]["total_mib"] > 0 and samples[0]["cpu"]["per_core_pct"], samples[0]

    s = in_root(root, ["/resource-tracker", "summary", "--json", "/run.jsonl"])
    assert s.returncode == 0, s.stderr
    summary = json.loads(s.stdout)
    assert summary["samples"] == len(samples), summary["samples"]
    assert job_cpu * 0.85 - 0.02 <= summary["process"]["cpu_secs"] <= job_cpu * 1.15 + 0.05, summary["process"]
    text = in_root(root, ["/resource-tracker", "summary", "/run.jsonl"])
    assert text.returncode == 0 and "Memory used" in text.stdout, text.stdout + text.stderr

    rec = in_root(root, ["/resource-tracker", "recommend", "--json", "/run.jsonl"])
    assert rec.returncode == 0 and json.loads(rec.stdout), rec.stderr

    rep = in_root(root, ["/resource-tracker", "report", "/run.jsonl", "-o", "/report.html"])
    assert rep.returncode == 0, rep.stderr
    html = (root / "report.html").read_text()
    assert "Dygraph" in html and "<script src=" not in html  # the charts' library is inside, nothing fetched
    assert sorted(os.listdir(root)) == ["job", "proc", "report.html", "resource-tracker", "run.jsonl", "sys"]


def test_csv_in_an_empty_root(root):
    """-f csv from the empty root: a header and a row per sample, the job's status kept"""
    r = in_root(root, ["/resource-tracker", "-f", "csv", "-i", "0.2", "-o", "/run.csv", "--", "/job", "8", str(JOB_ROUNDS)])
    assert r.returncode == 3, r.stderr
    lines = (root / "run.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[0] == "timestamp" and "process_memory_mib" in header, header
    rows = [dict(zip(header, l.split(","))) for l in lines[1:]]
    assert rows and all(len(l.split(",")) == len(header) for l in lines[1:]), lines
    assert max(float(row["process_memory_mib"] or 0) for row in rows) >= 8 * 0.9, rows


def test_history_flag_is_a_usage_error(root):
    """--history needs SQLite, the machine's own, which a root without glibc cannot give: exit 2
    before the job starts, naming what is missing; the history, upload and recommend --job
    subcommands too"""
    r = in_root(root, ["/resource-tracker", "--history", "/h.db", "-o", "/run.jsonl", "--", "/job", "1", "1"])
    assert r.returncode == 2, r.stderr
    assert "static build" in r.stderr and "SQLite" in r.stderr and "no glibc" in r.stderr, r.stderr
    assert r.stdout == "" and not (root / "run.jsonl").exists() and not (root / "h.db").exists()
    for sub in (["history"], ["upload"], ["recommend", "--job", "nightly"]):
        r = in_root(root, ["/resource-tracker"] + sub)
        assert r.returncode == 2 and "static build" in r.stderr and "no glibc" in r.stderr, (sub, r.stderr)


def test_environment_asks_are_one_warning_each(root):
    """the Sentinel token, an OTLP endpoint and TRACKER_HISTORY from the environment, in a root
    without glibc: one warning each that libcurl or SQLite cannot be had here; the job runs and its
    status is kept"""
    env = {"SENTINEL_API_TOKEN": "t0ken", "SENTINEL_API_URL": "http://127.0.0.1:9",
           "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "TRACKER_HISTORY": "/h.db"}
    r = in_root(root, ["/resource-tracker", "-i", "0.2", "-o", "/run.jsonl", "--", "/job", "1", "300"], env=env)
    assert r.returncode == 3, r.stderr
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    for what in ("SENTINEL_API_TOKEN", "OTEL_EXPORTER_OTLP_ENDPOINT", "TRACKER_HISTORY"):
        said = [l for l in warnings if what in l]
        assert len(said) == 1 and "static build" in said[0] and "no glibc" in said[0], (what, r.stderr)
    assert len(warnings) == 3, r.stderr
    assert (root / "run.jsonl").stat().st_size > 0 and not (root / "h.db").exists()


def test_gzipped_snapshot_is_read(root):
    """zlib is linked in: a saved snapshot, gzipped (the Python tracker's, tests/fixtures/snapshots),
    is summarized in the empty root as the dynamic build summarizes it on the host"""
    fixture = os.path.join(REPO, "tests", "fixtures", "snapshots", "python-tracker.json.gz")
    shutil.copy2(fixture, root / "snap.json.gz")
    zipped = in_root(root, ["/resource-tracker", "summary", "--json", "/snap.json.gz"])
    assert zipped.returncode == 0, zipped.stderr
    got = json.loads(zipped.stdout)
    assert got["samples"] >= 2, got
    from conftest import TRACKER
    if os.path.exists(TRACKER):
        d = subprocess.run([TRACKER, "summary", "--json", fixture], capture_output=True, text=True, timeout=60)
        assert d.returncode == 0 and json.loads(d.stdout) == got, d.stderr


# ---- the loader helper: the target's own libcurl and SQLite ----------------------------------------

def helper_path(static_tracker):
    return os.path.join(os.path.dirname(static_tracker), "resource-tracker-bridge")


def test_helper_needs_glibc_2_17_and_is_inside(static_tracker):
    """the helper the static binary runs through the target's loader asks for no glibc symbol
    version newer than 2.17, names only glibc's own libraries and x86-64's loader, and its bytes
    are inside the static binary (nothing else is shipped)"""
    helper = helper_path(static_tracker)
    if not os.path.exists(helper):
        pytest.skip("no loader helper in this static build (it is built on x86-64 only)")
    if not shutil.which("objdump") or not shutil.which("readelf"):
        pytest.skip("objdump or readelf not found (binutils)")
    syms = subprocess.run(["objdump", "-T", helper], capture_output=True, text=True, check=True).stdout
    versions = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)\)", syms)}
    assert versions and max(versions) <= (2, 17), sorted(versions)
    dyn = subprocess.run(["readelf", "-d", "-l", helper], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"Shared library: \[([^]]+)\]", dyn))
    assert needed <= {"libc.so.6", "libdl.so.2", "libpthread.so.0", "libm.so.6"}, needed
    assert "/lib64/ld-linux-x86-64.so.2" in dyn
    with open(helper, "rb") as f, open(static_tracker, "rb") as g:
        assert f.read() in g.read()


def libs_of(path):
    """The files ldd says path loads (the loader too), as ldd names them, and path."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(/\S+) \(0x", out)) | {path}


@pytest.fixture
def glibc_root(root, static_tracker):
    """The empty root, plus glibc's loader and libraries, libsqlite3 and libcurl with everything
    they load, at their paths (the host's directory links, sonames and real files): a bare machine
    that has the libraries but no resource-tracker install."""
    helper = helper_path(static_tracker)
    if not os.path.exists(helper) or not shutil.which("ldd"):
        pytest.skip("no loader helper in this static build, or no ldd")
    for d in ("lib", "lib64"):  # merged /usr (Debian 12): /lib is a link to usr/lib
        if os.path.islink("/" + d):
            os.symlink(os.readlink("/" + d), root / d)
    want = libs_of(helper) - {helper} | {"/lib64/ld-linux-x86-64.so.2"}
    for name in ("libsqlite3.so.0", "libcurl.so.4"):
        found = [os.path.join(d, name) for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")
                 if os.path.exists(os.path.join(d, name))]
        if not found:
            pytest.skip(f"{name} not installed here")
        want |= libs_of(found[0])
    for path in sorted(want):
        # the name as the loader looks it up (a link, kept as one), then the file it leads to
        for p in (os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path)),
                  os.path.realpath(path)):
            dest = root / p.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(dest):
                continue
            if os.path.islink(p):
                os.symlink(os.readlink(p), dest)
            else:
                shutil.copy2(p, dest)
    return root


def test_history_through_the_machines_sqlite(glibc_root):
    """--history in a root holding glibc and libsqlite3 but no install: two runs recorded through
    the helper, listed by `history`, recommended from by `recommend --job`, and the database is
    the one the dynamic build reads"""
    root = glibc_root
    for status in ("0", "3"):
        r = in_root(root, ["/resource-tracker", "-q", "--history", "/h.db", "-n", "nightly", "-o", "/run.jsonl",
                           "--", "/job", "16", "200", status])
        assert r.returncode == int(status), r.stderr
        assert "warning" not in r.stderr, r.stderr
    h = in_root(root, ["/resource-tracker", "history", "--history", "/h.db", "--json"])
    assert h.returncode == 0, h.stderr
    runs = [json.loads(line) for line in h.stdout.splitlines()]
    assert len(runs) == 2 and all(x["job_name"] == "nightly" for x in runs), runs
    rec = in_root(root, ["/resource-tracker", "recommend", "--json", "--history", "/h.db", "--job", "nightly",
                         "--no-price-lookup"])
    assert rec.returncode == 0, rec.stderr
    assert json.loads(rec.stdout)
    from conftest import TRACKER
    if os.path.exists(TRACKER):
        d = subprocess.run([TRACKER, "history", "--history", str(root / "h.db"), "--json"], capture_output=True,
                           text=True, timeout=60)
        assert d.returncode == 0 and [json.loads(line) for line in d.stdout.splitlines()] == runs, d.stderr


def test_missing_sqlite_is_named(glibc_root):
    """glibc there, libsqlite3 not: --history exits 2 naming libsqlite3.so.0, nothing started"""
    root = glibc_root
    for p in root.rglob("libsqlite3.so*"):
        p.unlink()
    r = in_root(root, ["/resource-tracker", "--history", "/h.db", "-o", "/run.jsonl", "--", "/job", "1", "1"])
    assert r.returncode == 2 and "libsqlite3.so.0" in r.stderr, r.stderr
    assert not (root / "run.jsonl").exists() and not (root / "h.db").exists()


MARK = f"RT_TEST_STATIC_MARK={os.getpid()}-{time.monotonic_ns()}"


def bridges():
    """Pids of running loader helpers started by this test's runs: argv[0] resource-tracker-bridge
    and this module's mark in the environment they inherit (other runs on the machine have
    helpers of their own)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0")[0] != b"resource-tracker-bridge":
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if MARK.encode() in f.read().split(b"\0"):
                    out.append(int(pid))
        except PermissionError:  # a helper not looked at must not pass for none running
            raise
        except OSError:  # gone meanwhile
            pass
    return out


def marked(env):
    """env with the mark bridges() looks for, and only the variables a run in the root needs."""
    env = {k: v for k, v in env.items() if k.startswith(("SENTINEL_", "AWS_", "TRACKER_", "XDG_"))}
    name, value = MARK.split("=", 1)
    env[name] = value
    return env


def test_streams_through_the_machines_libcurl(glibc_root, tmp_path, peers):
    """SENTINEL_API_TOKEN in a root holding glibc and libcurl: the run is registered, its rows
    reach S3 gzipped (zlib linked in) and the finish names them, every local row once, the job's
    status kept and no secret printed; no helper is left running"""
    root = glibc_root
    api, s3 = peers()
    env = marked(stream_env(tmp_path, api.url, s3.url, XDG_STATE_HOME="/state"))
    r = in_root(root, ["/resource-tracker", "-i", "0.1", "-f", "csv", "-o", "/local.csv", "--job-name", "streamjob",
                       "--", "/job", "1", "1500"], env=env)
    assert r.returncode == 3, r.stderr
    assert r.stderr == "", r.stderr
    no_secrets(r.stdout, r.stderr, (root / "local.csv").read_text())
    fin = check_delivery(api, s3, local_rows(root / "local.csv"), "s3")
    assert fin["exit_code"] == 3
    assert not s3.rejections()
    assert bridges() == []


def test_otlp_through_the_machines_libcurl(glibc_root, tmp_path):
    """--otlp in a root holding glibc and libcurl: the strict OTLP receiver accepts gzipped pushes
    (zlib inside, libcurl the machine's), the last one after the job, with the job's status kept"""
    from test_otlp import Receiver
    root = glibc_root
    rcv = Receiver(tmp_path)
    try:
        r = in_root(root, ["/resource-tracker", "-i", "0.2", "-o", "/run.jsonl", "--otlp", rcv.url,
                           "--otlp-interval", "0.3", "--", "/job", "1", "2500"], env={"TRACKER_KEEPER_URL": "off"})
        assert r.returncode == 3 and r.stderr == "", r.stderr
        accepted = rcv.accepted()
        assert accepted and all(e["encoding"] == "gzip" for e in accepted), rcv.entries()
        assert len(accepted) == len(rcv.entries())  # nothing refused
    finally:
        rcv.stop()


def test_helpers_are_not_the_jobs(glibc_root, tmp_path, peers):
    """S3 hangs, so a helper holding libcurl lives through the whole job (its PUT never answered)
    while samples are taken: the tool's child, not the job's. The job's CPU time stays what the
    kernel counted for it, its peak memory its own 2 MiB (a helper is several times that), no
    child of it; the run ends within its finish timeout and the helper with it"""
    root = glibc_root
    api, s3 = peers(s3_extra=("--hang-secs", "60"))
    env = marked(stream_env(tmp_path, api.url, s3.url, XDG_STATE_HOME="/state", TRACKER_UPLOAD_INTERVAL="0.2",
                            TRACKER_FINISH_TIMEOUT="2"))
    r = in_root(root, ["/resource-tracker", "-i", "0.1", "-o", "/run.jsonl", "--", "/job", "2", "4000"], env=env,
                timeout=90)
    assert r.returncode == 3, r.stderr
    job_cpu = float(r.stdout.split()[-1])
    samples = [json.loads(line) for line in (root / "run.jsonl").read_text().splitlines()]
    assert len(samples) >= 5, samples
    tracked = max(s["process"]["cpu_secs_total"] for s in samples)
    assert job_cpu * 0.85 - 0.02 <= tracked <= job_cpu * 1.15 + 0.05, (job_cpu, tracked)
    peak = max(s["process"]["rss_peak_mib"] for s in samples)
    assert peak < 6, peak
    assert max(s["process"]["child_count"] for s in samples) == 0, [s["process"]["child_count"] for s in samples]
    assert s3.control()["puts"] >= 1  # a helper was in the hanging PUT while the job ran
    for _ in range(30):
        if not bridges():
            break
        time.sleep(0.1)
    assert bridges() == []


def test_hanging_s3_ends_with_the_run(glibc_root, tmp_path, peers):
    """S3 hangs for good (each PUT sent, never answered: it may land later): the run still ends
    within its finish timeout, is not finished (inline rows would repeat a late landing's) and
    keeps every row for a later delivery, as the dynamic tool does (test_stream's
    test_exit_bounded_when_s3_hangs); the helper in the hanging transfer does not outlive the
    tool"""
    root = glibc_root
    api, s3 = peers(s3_extra=("--hang-secs", "60"))
    env = marked(stream_env(tmp_path, api.url, s3.url, XDG_STATE_HOME="/state", TRACKER_FINISH_TIMEOUT="2"))
    r = in_root(root, ["/resource-tracker", "-i", "0.1", "-f", "csv", "-o", "/local.csv", "--", "/job", "1", "300"],
                env=env, timeout=60)
    assert r.returncode == 3, r.stderr
    assert "may still land" in r.stderr, r.stderr
    (run,) = api.doc()["runs"].values()
    assert run["finish"] is None
    assert sorted(spilled_rows(root)) == sorted(local_rows(root / "local.csv"))
    for _ in range(30):  # a helper sees its socket close within a second of libcurl's progress
        if not bridges():
            break
        time.sleep(0.1)
    assert bridges() == []


def test_nvidia_driver_is_one_warning(root):
    """where an NVIDIA driver is (its /proc/driver/nvidia/version, a stand-in mounted over the
    bound /proc in the root's namespace), one warning that this build cannot load NVML; the job
    runs and its status is kept. Without the driver the same run says nothing of NVML."""
    if os.geteuid() != 0 or not os.path.isdir("/proc/driver"):
        pytest.skip("mounting a stand-in driver file over /proc/driver needs root and /proc/driver")
    args = ["/resource-tracker", "-i", "0.2", "-o", "/run.jsonl", "--", "/job", "1", "300"]
    plain = in_root(root, args)
    assert plain.returncode == 3 and "NVML" not in plain.stderr, plain.stderr
    driver = ('mount -t tmpfs rt-stand-in "$0/proc/driver" && mkdir "$0/proc/driver/nvidia" && '
              'echo "NVRM version: stand-in" > "$0/proc/driver/nvidia/version"')
    r = in_root(root, args, then=driver)
    assert r.returncode == 3, r.stderr
    said = [l for l in r.stderr.splitlines() if "NVML" in l]
    assert len(said) == 1 and "static build" in said[0] and "warning" in said[0], r.stderr


def test_helper_not_readable_by_the_users_other_processes(static_tracker):
    """The loader helper holds the token and S3 keys in its requests: an exec resets the tool's own
    non-dumpable setting, so the helper sets it again, first thing, before it reads a request. Run
    by an unprivileged user (--history: helpers for the history's session), a helper runs as that
    user while its /proc/PID/environ (and mem) belongs to root: not readable by the job or any
    other process of the user, nor written to a core dump. Each helper is watched while it lives
    (the moments between its exec and that first call show the user's ownership)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv (util-linux) to run the tool as another user")
    if not os.path.exists("/lib64/ld-linux-x86-64.so.2"):
        pytest.skip("no glibc loader on this machine for the helper")
    with tempfile.TemporaryDirectory(dir="/tmp") as d:  # pytest's own is root's alone
        os.chmod(d, 0o777)
        tool = os.path.join(d, "resource-tracker")
        shutil.copy2(static_tracker, tool)
        seen = helpers_seen_as_nobody(tool, d)
    assert seen, "no helper seen in five runs"
    assert all(v[0] == 65534 for states in seen.values() for v in states), seen
    assert any((65534, 0, 0) in states for states in seen.values()), seen


def helpers_seen_as_nobody(tool, d):
    """{pid: [(its uid, /proc/PID/environ's owner, /proc/PID/mem's owner), ...]}: each state seen
    of the helpers that run while tool runs as nobody with a history in d, until one is seen
    root-owned (at most five runs)."""
    seen = {}
    for attempt in range(5):  # a helper lives tens of milliseconds
        db = os.path.join(d, f"h{attempt}.db")
        p = subprocess.Popen(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", tool,
                              "-q", "--history", str(db), "--", "sleep", "0.5"],
                             env={**ENV, **marked({})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while p.poll() is None:
            for pid in bridges():  # marked helpers alive now (a pid reused is not one)
                try:
                    with open(f"/proc/{pid}/status") as f:
                        uid = next(int(l.split()[1]) for l in f if l.startswith("Uid:"))
                    state = (uid, os.stat(f"/proc/{pid}/environ").st_uid,
                             os.stat(f"/proc/{pid}/mem").st_uid)
                    with open(f"/proc/{pid}/status") as f:  # its memory still there after the stats
                        alive = any(l.startswith("VmSize:") for l in f)
                except (OSError, StopIteration):  # ended meanwhile
                    continue
                if not alive:  # an ending process (its memory gone) shows root's files anyway
                    continue
                states = seen.setdefault(pid, [])
                if state not in states:
                    states.append(state)
        assert p.wait() == 0, p.stderr.read()
        if any((65534, 0, 0) in states for states in seen.values()):
            break
    return seen
