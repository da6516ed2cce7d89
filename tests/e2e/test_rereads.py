"""The memory ask that keeps the job's speed (issue 66 item 5, docs/answers.md "Re-reads"): a job
that lives under a memory limit too small for the file it reads again and again is kept alive
but re-reads the file from storage every time. The tracker runs as root inside a memory group
the test makes (v1 memory.limit_in_bytes, or v2 memory.max), so that its job's own group lies
under that limit; the job reads a 300 MiB file 3 times.

- Under 160 MiB: the group's refaults (memory.stat workingset_refault_file) say the job read back
  about 600 MiB. The summary carries them (cgroup.memory_refault_mib, within 10% of the kernel's
  own count in the test's group), the note memory_reread says how much and which limit keeps the
  files, and the ask keeps them (recommendation.memory_reread_files_mib at most the file).
- The second run, directly in a group limited to that ask, is judged by the kernel: it re-reads
  (almost) nothing.
- Under 512 MiB the file fits: no refault to speak of, no note, the ask the need's.

The file's pages are dropped before each run (posix_fadvise DONTNEED on it alone, never the
machine's caches). No figure here depends on time or CPU: it holds with `stress-ng --cpu 2`
beside it. Skips (with the reason) where no memory group can be made (not root, no memory
controller) or no real disk holds the file."""
import json
import os
import subprocess
import tempfile

import pytest

from conftest import BUILD_DIR, TIMEOUT_SCALE, TRACKER, tracker_env
from test_rerun import Limited, drop_cache, fs_type, memory_kind, read

PY = "/usr/bin/python3"
MIB = 1 << 20
FILE_MIB = 300
PASSES = 3

# reads the file argv[1] PASSES times through the page cache in 1 MiB chunks
REREAD = r"""
import sys
buf = bytearray(1 << 20)
for _ in range(int(sys.argv[2])):
    with open(sys.argv[1], "rb", buffering=0) as f:
        while f.readinto(buf):
            pass
"""


def refault_pages(group):
    """The group's file refaults (pages), hierarchical: v1's total_workingset_refault_file,
    v2's workingset_refault_file (workingset_refault before 5.9); None without them."""
    found = {}
    for line in (read(group, "memory.stat") or "").splitlines():
        k, _, v = line.partition(" ")
        found[k] = int(v)
    for k in ("total_workingset_refault_file", "workingset_refault_file", "workingset_refault"):
        if k in found:
            return found[k]
    return None


@pytest.fixture(scope="module")
def big_file():
    """A 300 MiB file of bytes that are not zeros on a real disk (not tmpfs): the build
    directory's file system; removed at the end."""
    if fs_type(BUILD_DIR) in ("tmpfs", "ramfs"):
        pytest.skip("the build directory is on tmpfs: no disk to evict the file's pages to")
    st = os.statvfs(BUILD_DIR)
    if st.f_bavail * st.f_frsize < (FILE_MIB + 200) * MIB:
        pytest.skip("no room for the 300 MiB file beside the build")
    fd, path = tempfile.mkstemp(prefix="rt-rereads-", suffix=".bin", dir=BUILD_DIR)
    try:
        chunk = bytes(range(256)) * 4096
        for _ in range(FILE_MIB):
            os.write(fd, chunk)
        os.close(fd)
        yield path
    finally:
        os.unlink(path)


def tracked(tmp_path, limit_mib, path, tag):
    """Runs the re-reading job under the tracker inside a group limited to limit_mib; returns
    (summary --json, recommend --json, the kernel's refault bytes in the limited group)."""
    kind = memory_kind()
    page = os.sysconf("SC_PAGESIZE")
    out = tmp_path / f"{tag}.jsonl"
    g = Limited(kind, tag, limit_mib * MIB)
    try:
        before = refault_pages(g.dir)
        drop_cache(path)
        r = subprocess.run([TRACKER, "-i", "0.5", "-o", str(out), "--", PY, "-c", REREAD, path, str(PASSES)],
                           capture_output=True, text=True, timeout=120 * TIMEOUT_SCALE, env=tracker_env(),
                           preexec_fn=g.enter)
        assert r.returncode == 0, r.stderr
        after = refault_pages(g.dir)
        assert g.oom_kills() in (0, None)
    finally:
        g.close()
    kernel = None if before is None or after is None else (after - before) * page
    s = subprocess.run([TRACKER, "summary", "--json", str(out)], capture_output=True, text=True,
                       timeout=60 * TIMEOUT_SCALE, env=tracker_env())
    assert s.returncode == 0, s.stderr
    rec = subprocess.run([TRACKER, "recommend", "--json", str(out)], capture_output=True, text=True,
                         timeout=60 * TIMEOUT_SCALE, env=tracker_env())
    assert rec.returncode == 0, rec.stderr
    return json.loads(s.stdout), json.loads(rec.stdout)["recommendation"], kernel


def reread_notes(summary):
    return [n["text"] for n in summary.get("notes") or [] if n["kind"] == "memory_reread"]


def test_rereads_under_a_small_limit_are_told_and_the_ask_keeps_them(tmp_path, big_file):
    summary, rec, kernel = tracked(tmp_path, 160, big_file, "small")
    if kernel is None:
        pytest.skip("this kernel's memory.stat has no refault counter (an older kernel's v1)")
    got = summary["cgroup"]["memory_refault_mib"]
    # the kernel's own count in the test's group (the tracker's job group lies under it)
    assert got == pytest.approx(kernel / MIB, rel=0.1), (got, kernel / MIB)
    # every pass after the first read the file back: (PASSES - 1) x 300 MiB, less what stayed
    assert got >= (PASSES - 1) * FILE_MIB * 0.8, got
    texts = reread_notes(summary)
    assert len(texts) == 1, summary.get("notes")
    text = texts[0]
    assert f"the job read back {got:.0f} MiB of files its 160 MiB memory limit had evicted" in text, text
    assert "of its" in text and "storage reads" in text, text
    assert "keeps them cached (the ask)" in text, text
    files = rec["memory_reread_files_mib"]
    assert files is not None and FILE_MIB * 0.8 <= files <= FILE_MIB * 1.05, rec
    asked = rec["memory_mib"]
    assert asked >= 384, rec  # the need, the 300 MiB file and headroom
    print(f"rereads: {got:.0f} MiB re-read (kernel {kernel / MIB:.0f}), ask {asked} MiB, {text}")

    # the second run, in a group of the ask, judged by the kernel: the file stays cached
    g = Limited(memory_kind(), "second", asked * MIB)
    try:
        before = refault_pages(g.dir)
        drop_cache(big_file)
        r = subprocess.run([PY, "-c", REREAD, big_file, str(PASSES)], capture_output=True, text=True,
                           timeout=120 * TIMEOUT_SCALE, preexec_fn=g.enter)
        assert r.returncode == 0, r.stderr
        again = (refault_pages(g.dir) - before) * os.sysconf("SC_PAGESIZE") / MIB
        assert g.oom_kills() in (0, None)
    finally:
        g.close()
    assert again < 64, f"the second run under {asked} MiB still re-read {again:.0f} MiB"


def test_no_note_when_the_file_fits(tmp_path, big_file):
    summary, rec, kernel = tracked(tmp_path, 512, big_file, "fits")
    got = summary["cgroup"]["memory_refault_mib"]
    assert got is None or got < 64, got
    assert reread_notes(summary) == [], summary.get("notes")
    assert rec["memory_reread_files_mib"] is None, rec
    assert rec["memory_mib"] <= 256, rec  # the need's (the page cache is no need)
