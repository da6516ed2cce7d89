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
import shutil
import struct
import subprocess

import pytest

from conftest import REPO, SANITIZED, VALGRIND

pytestmark = pytest.mark.skipif(SANITIZED or VALGRIND,
                                reason="the static build is its own uninstrumented build: nothing to check under "
                                       "the sanitizers or valgrind")

# The job: touches MIB mebibytes, runs ROUNDS million steps of arithmetic, prints the CPU seconds
# (user + system) the kernel counted for it, exits 3.
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
    return 3;
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
    """--history needs SQLite, which a static binary cannot load: exit 2 before the job starts; the
    history, upload and recommend --job subcommands too"""
    r = in_root(root, ["/resource-tracker", "--history", "/h.db", "-o", "/run.jsonl", "--", "/job", "1", "1"])
    assert r.returncode == 2, r.stderr
    assert "static build" in r.stderr and "SQLite" in r.stderr, r.stderr
    assert r.stdout == "" and not (root / "run.jsonl").exists() and not (root / "h.db").exists()
    for sub in (["history"], ["upload"], ["recommend", "--job", "nightly"]):
        r = in_root(root, ["/resource-tracker"] + sub)
        assert r.returncode == 2 and "static build" in r.stderr, (sub, r.stderr)


def test_environment_asks_are_one_warning_each(root):
    """the Sentinel token, an OTLP endpoint and TRACKER_HISTORY from the environment: one warning
    each that this build cannot load libcurl or SQLite; the job runs and its status is kept"""
    env = {"SENTINEL_API_TOKEN": "t0ken", "SENTINEL_API_URL": "http://127.0.0.1:9",
           "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "TRACKER_HISTORY": "/h.db"}
    r = in_root(root, ["/resource-tracker", "-i", "0.2", "-o", "/run.jsonl", "--", "/job", "1", "300"], env=env)
    assert r.returncode == 3, r.stderr
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    for what in ("SENTINEL_API_TOKEN", "OTEL_EXPORTER_OTLP_ENDPOINT", "TRACKER_HISTORY"):
        said = [l for l in warnings if what in l]
        assert len(said) == 1 and "static build" in said[0], (what, r.stderr)
    assert len(warnings) == 3, r.stderr
    assert (root / "run.jsonl").stat().st_size > 0 and not (root / "h.db").exists()


def test_gzipped_input_says_why(root):
    """a gzipped run file needs zlib: the summary says this build cannot load it, and fails"""
    r = in_root(root, ["/resource-tracker", "-i", "0.2", "-o", "/run.jsonl", "--", "/job", "1", "100"])
    assert r.returncode == 3, r.stderr
    with open(root / "run.jsonl", "rb") as f, gzip.open(root / "run.jsonl.gz", "wb") as z:
        z.write(f.read())
    s = in_root(root, ["/resource-tracker", "summary", "/run.jsonl.gz"])
    assert s.returncode != 0 and "static build" in s.stderr and "libz" in s.stderr, s.stderr


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
