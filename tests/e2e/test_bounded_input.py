"""Bounded input (docs/contracts.md, `summary`, `recommend` and `report`): no recorded run can make
the subcommands that read one take more than a set bound of memory. JSON lines and CSV, gzipped
or not, are read as a stream, a line at most 16 MiB: a gzip bomb, a single line of tens of MiB
and one in the middle of a file are each one clear error naming the file and the line (exit 2),
and a bomb of valid lines is read through as the long run it is; a gzip file shaped as a
snapshot (read whole: it is one JSON document) is refused as it gunzips past 64 MiB at more
than 256 times its size. `history` lists any number of runs in the memory of one. The peak RSS
is the child's own (wait4's ru_maxrss).

The inputs are made here in about a second in all (zlib over a repeated block)."""
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib

import pytest

from conftest import REPO, SANITIZED, TIMEOUT_SCALE, TRACKER, VALGRIND, tracker_env

MiB = 1024 * 1024
# What the stream readers take at most: a 16 MiB line and 1 MiB more of buffer, zlib's state, the
# statistics and the report (about 20 MiB measured on any such input). A snapshot is read whole:
# a bomb shaped as one is stopped after 64 MiB of JSON. Under AddressSanitizer every allocation
# carries its redzones and freed memory waits in quarantine; valgrind's RSS is its own.
LINES_BOUND = (512 if SANITIZED else 64) * MiB
SNAPSHOT_BOUND = (640 if SANITIZED else 128) * MiB
SUBCOMMANDS = ("summary", "recommend", "report")


# Writes the inputs into the folder argv[1], block by block (about 1 s in all), in a process of
# its own: a child's ru_maxrss starts from its parent's RSS at the fork, so this one stays small.
MAKE_INPUTS = r"""
import os, sys, zlib
d, lines = sys.argv[1], open(sys.argv[2], "rb").read()
MiB = 1 << 20
first, rest = lines.split(b"\n", 1)
files = {
    # 128 MiB of zeros in about 0.5 MiB: no newline anywhere
    "zeros.jsonl.gz": ([(bytes(MiB), 128)], 1),
    # valid lines, 3 a block: 40 MiB once gunzipped
    "lines.jsonl.gz": ([(lines * 4096, 5)], 1),
    # a snapshot's opening, then 128 MiB of numbers in about 128 KiB
    "snapshot.json.gz": ([(b'{"metadata":{"version":1,"interval":1},"columns":{"timestamp":[', 1),
                          (b"0," * (MiB // 2), 128), (b"0]}}", 1)], 6),
    # one line of 40 MiB and no newline (a file that is no recording: it was "empty")
    "one-line.jsonl": ([(b"a" * MiB, 40)], 0),
    # a good line, a line of 17 MiB, two good lines
    "middle.jsonl": ([(first + b"\n", 1), (b"7" * MiB, 17), (b"\n" + rest, 1)], 0),
}
for name, (parts, level) in files.items():
    c = zlib.compressobj(level, zlib.DEFLATED, 31) if level else None
    with open(os.path.join(d, name), "wb") as f:
        for block, count in parts:
            for _ in range(count):
                f.write(c.compress(block) if c else block)
        if c:
            f.write(c.flush())
"""
NAMES = ("zeros.jsonl.gz", "lines.jsonl.gz", "snapshot.json.gz", "one-line.jsonl", "middle.jsonl")


@pytest.fixture(scope="module")
def inputs():
    d = tempfile.mkdtemp(prefix="rt-bounded-")
    tool = os.path.join(REPO, "tests", "fixtures", "runs", "tool.jsonl")
    subprocess.run([sys.executable, "-c", MAKE_INPUTS, d, tool], check=True, timeout=60 * TIMEOUT_SCALE)
    with open(tool, "rb") as f:
        assert f.read().count(b"\n") == 3
    yield d, 5 * 4096 * 3
    for name in NAMES:
        os.unlink(os.path.join(d, name))
    os.rmdir(d)


# Runs argv[2:] and writes its exit status and peak RSS (KiB, wait4's ru_maxrss) to argv[1]: a
# small process of its own forks it, since a child's ru_maxrss starts from its parent's RSS at
# the fork (pytest's own is some 30 MiB, this one's about 10).
MEASURE = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%d %d" % (os.waitstatus_to_exitcode(status), ru.ru_maxrss))
"""


def measured(sub, path, tmp_path, timeout=60):
    """Runs `resource-tracker SUB PATH` (summary: --json; report: to tmp_path/r.html); returns
    its exit status, stdout, stderr and peak RSS in bytes (the kernel's, from wait4)."""
    args = [sub, path] + (["-o", str(tmp_path / "r.html")] if sub == "report" else [])
    if sub == "summary":
        args.insert(1, "--json")
    return measured_args(args, tmp_path, timeout)


def measured_args(args, tmp_path, timeout=60):
    """Runs the tracker with args: its exit status, stdout, stderr and peak RSS in bytes."""
    args = [TRACKER] + args
    res = tmp_path / "rss"
    p = subprocess.Popen([sys.executable, "-c", MEASURE, str(res)] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=tracker_env(), start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout * TIMEOUT_SCALE)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        raise
    rc, kib = (int(x) for x in res.read_text().split())
    return rc, out, err, kib * 1024


def assert_under(rss, bound, what):
    if not VALGRIND:
        assert rss < bound, f"{what}: peak RSS {rss / MiB:.1f} MiB, bound {bound / MiB:.0f} MiB"


def assert_refused(inputs, name, sub, tmp_path, said, bound=LINES_BOUND):
    """SUB on the input name exits 2, its stderr saying said (each of them, when a tuple; PATH
    stands for the file's path), under bound; returns its stderr."""
    path = os.path.join(inputs[0], name)
    rc, _, err, rss = measured(sub, path, tmp_path)
    assert rc == 2, err
    for words in said if isinstance(said, tuple) else (said,):
        assert words.replace("PATH", path) in err, err
    assert_under(rss, bound, f"{sub} on {name}")
    return err


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_gzip_bomb(inputs, sub, tmp_path):
    """128 MiB of zeros gzipped to 0.5 MiB: read as a stream, its first line passes 16 MiB
    without a newline: exit 2 naming the file and line 1, in bounded memory (it took the whole
    of it, gunzipped at once)."""
    assert_refused(inputs, "zeros.jsonl.gz", sub, tmp_path, "PATH:1: a line longer than 16 MiB")


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_gzip_bomb_of_valid_lines(inputs, sub, tmp_path):
    """40 MiB of valid JSON lines in a small gzip file is a long recorded run: read through as
    a stream, every line a sample, in the same bounded memory (it was taken for a snapshot,
    gunzipped whole and refused)."""
    d, n = inputs
    rc, out, err, rss = measured(sub, os.path.join(d, "lines.jsonl.gz"), tmp_path, timeout=120)
    assert rc == 0, err
    if sub == "summary":
        assert json.loads(out)["samples"] == n
    assert_under(rss, LINES_BOUND, f"{sub} on {n} lines gzipped")


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_one_huge_line(inputs, sub, tmp_path):
    """A file that is one line of 40 MiB: exit 2 naming the file and line 1 (it was called
    "empty"), having read no more than the cap."""
    err = assert_refused(inputs, "one-line.jsonl", sub, tmp_path,
                         "PATH:1: a line longer than 16 MiB, which no recorded run has: not read further")
    assert "empty" not in err, err


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_huge_line_mid_file(inputs, sub, tmp_path):
    """A line of 17 MiB after a good one: the read ends there, exit 2 naming line 2 (it was
    skipped, and the run summed as if whole)."""
    assert_refused(inputs, "middle.jsonl", sub, tmp_path, "PATH:2: a line longer than 16 MiB")


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_gzip_bomb_shaped_as_a_snapshot(inputs, sub, tmp_path):
    """A gzip file opening as a snapshot, then 128 MiB of numbers in about 128 KiB: refused as
    it gunzips once past 64 MiB at more than 256 times its size, exit 2 naming the file (it was
    gunzipped whole and took it all, then failed for want of memory, exit 1)."""
    assert_refused(inputs, "snapshot.json.gz", sub, tmp_path,
                   ("error: PATH: ", " bytes of gzip gunzip to more than 256 times as much (a gzip bomb?"),
                   SNAPSHOT_BOUND)


def test_history_of_many_runs(tmp_path):
    """`history` over 40,000 runs lists them all in the memory of one (it kept every row's cells,
    1.25 KiB a run: a million runs took 1.2 GiB), the table as it was."""
    import sqlite3

    db = str(tmp_path / "h.db")
    r = subprocess.run([TRACKER, "-q", "--history", db, "-o", os.devnull, "--", "true"], env=tracker_env(),
                       capture_output=True, timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    n = 40000
    with sqlite3.connect(db) as c:
        c.executemany("INSERT INTO runs (job_name) VALUES (?)", (("job %d" % i,) for i in range(n)))
    c.close()
    rc, out, err, rss = measured_args(["history", "--history", db], tmp_path, timeout=120)
    assert rc == 0, err
    rows = out.splitlines()
    assert len(rows) == n + 2 and rows[0].split()[:2] == ["ID", "START"], rows[:3]
    widths = {len(l.rstrip()) for l in rows[1:-1]}  # aligned: every added run's line as wide
    assert len(widths) == 1 and rows[1].split()[:4] == [str(n + 1), "-", "job", str(n - 1)], rows[:3]
    assert_under(rss, 32 * MiB if not SANITIZED else LINES_BOUND, "history over 40,000 runs")
