"""A reader of the samples that stalls never holds the job hostage (issue 24, item 1): a FIFO whose
reader never reads, one that reads slowly, a paused pager (SIGSTOP, then continued or killed), a
pipe full at the very moment the job ends (its reader resuming within the finish timeout, or
never), and stderr (the default output, which the tool's own lines share) paused. In each the
tracker returns with the job's status 7, and the complete lines the reader got plus the samples
the one warning counts as dropped equal the samples taken (the summary's "Samples", and the M of
the warning's "N of M"). A regular file that never blocks still gets each sample with one write(2).

No wall-clock time is asserted: a tracker that waited for its reader would never return, and the
subprocess timeouts (generous, scaled for ASan and valgrind) would fail the test."""
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import termios
import threading
import time

import pytest

from conftest import SANITIZED, TIMEOUT_SCALE, TRACKER, VALGRIND, tracker_env

PY = "/usr/bin/python3"
LIMIT = 60 * TIMEOUT_SCALE  # a tracker that waits for its reader never gets here
F_GETPIPE_SZ, F_SETPIPE_SZ = 1032, 1031
WARNING = re.compile(r"resource-tracker: warning: the output's reader stalled: (\d+) of (\d+) samples dropped")


def job(go):
    """The wrapped command: runs until the file go exists, then exits 7."""
    return ["sh", "-c", f'while [ ! -e "{go}" ]; do sleep 0.02; done; exit 7']


def summary_samples(err):
    m = re.search(r"^  Samples\s+(\d+)$", err, re.M)
    assert m, err
    return int(m.group(1))


def dropped(err):
    """(N, M) of the one warning, or (0, None) without one."""
    found = WARNING.findall(err)
    assert len(found) <= 1, err
    return (int(found[0][0]), int(found[0][1])) if found else (0, None)


def samples_in(data):
    """The complete lines of data (bytes), each a JSON sample; a partial last line is left out."""
    lines = data.split(b"\n")[:-1]
    return [json.loads(l) for l in lines]


def read_now(fd):
    """Everything the pipe holds now (its writers gone or not)."""
    fl = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK)
    out = b""
    try:
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            out += b
    except BlockingIOError:
        pass
    fcntl.fcntl(fd, fcntl.F_SETFL, fl)
    return out


def queued(fd):
    b = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    return int.from_bytes(b, "little")


def wait_for(cond, what):
    deadline = time.monotonic() + LIMIT
    while not cond():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def wait_full(fd):
    """Until the pipe of fd is full, its reader stalled while the tracker samples on: within two
    pages of its size (a page partly read, and the last one partly written, are lost to it), or,
    where a line is longer than a page (a line written whole takes pages of its own, so the pipe's
    slots run out before its bytes do), holding the same bytes for a second while the tracker
    samples every 10 ms."""
    size = fcntl.fcntl(fd, F_GETPIPE_SZ)
    last = [-1, time.monotonic()]

    def full():
        n = queued(fd)
        if n >= size - 8192:
            return True
        if n != last[0]:
            last[:] = [n, time.monotonic()]
            return False
        return n > 4096 and time.monotonic() - last[1] >= 1.0 * max(1, TIMEOUT_SCALE // 2)

    wait_for(full, "the pipe filled up")


def check_counts(got, err):
    """Lines got + dropped = samples taken; returns the number dropped."""
    n, m = dropped(err)
    taken = summary_samples(err)
    if m is not None:
        assert m == taken, err
    assert len(got) + n == taken, f"{len(got)} lines + {n} dropped != {taken} samples\n{err}"
    return n


@pytest.fixture
def tracker_procs():
    """Processes a test started: killed at its end if they still run."""
    procs = []
    yield procs
    for p in procs:
        if p.poll() is None:
            with_signal(p, signal.SIGCONT)
            p.kill()
            p.wait()


def with_signal(p, sig):
    try:
        os.kill(p.pid, sig)
    except ProcessLookupError:
        pass


def test_fifo_never_read(tmp_path):
    """`-o FIFO` whose reader opened it and never reads: the job's status comes back after the
    finish timeout; what the FIFO holds plus the dropped count is every sample."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.fcntl(rfd, F_SETPIPE_SZ, 4096)  # full after a sample or two, under valgrind too
        r = subprocess.run([TRACKER, "-i", "0.01", "-o", str(fifo), "--summary", "--", "sh", "-c", "sleep 1; exit 7"],
                           capture_output=True, text=True, timeout=LIMIT, env=tracker_env(TRACKER_FINISH_TIMEOUT="1"))
        assert r.returncode == 7, r.stderr
        got = samples_in(read_now(rfd))
    finally:
        os.close(rfd)
    assert check_counts(got, r.stderr) > 0
    assert "Exit status                7" in r.stderr


def test_fifo_read_slowly(tmp_path):
    """A reader that takes 4 KiB every 50 ms (a tenth of what 100 samples a second make) and reads
    on to the end: the tracker returns with 7; the lines it got plus those dropped are every
    sample."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    data = []
    p = None

    def reader():
        while True:
            try:
                b = os.read(rfd, 4096)
            except BlockingIOError:
                b = None
            if b:
                data.append(b)
            elif b == b"" and p.poll() is not None:
                return  # the tracker's end of the FIFO closed with it, and all of it read
            time.sleep(0.05)

    t = threading.Thread(target=reader)
    try:
        p = subprocess.Popen([TRACKER, "-i", "0.01", "-o", str(fifo), "--summary", "--", "sh", "-c", "sleep 1; exit 7"],
                             stderr=subprocess.PIPE, text=True, env=tracker_env(TRACKER_FINISH_TIMEOUT="1"))
        t.start()
        _, err = p.communicate(timeout=LIMIT)
        assert p.returncode == 7, err
        t.join(timeout=LIMIT)
        assert not t.is_alive()
    finally:
        os.close(rfd)
    check_counts(samples_in(b"".join(data)), err)


PAGER = r"""
import os, sys, time
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
lines = 0
while lines < 3:  # a screenful, byte by byte: nothing past it is taken from the pipe
    b = os.read(0, 1)
    if not b:
        sys.exit(0)
    os.write(out, b)
    lines += b == b"\n"
while not os.path.exists(sys.argv[2]):  # the user looks at the screen
    time.sleep(0.02)
while True:
    b = os.read(0, 65536)
    if not b:
        break
    os.write(out, b)
"""


@pytest.mark.parametrize("then", ["continued", "killed"])
def test_paused_pager(tmp_path, tracker_procs, then):
    """`-o -` into a pager that took a screenful and was stopped (SIGSTOP); the job ends once the
    pipe is full; the tracker returns with 7 after the finish timeout. Then the pager is
    continued (it reads the rest to EOF) or killed (the test reads what the pipe still holds):
    the lines it got plus the dropped count are every sample."""
    got, resume, go = tmp_path / "got", tmp_path / "resume", tmp_path / "go"
    r, w = os.pipe()
    try:
        pager = subprocess.Popen([PY, "-c", PAGER, str(got), str(resume)], stdin=r)
        tracker_procs.append(pager)
        t = subprocess.Popen([TRACKER, "-i", "0.01", "-o", "-", "--summary", "--", *job(go)], stdout=w,
                             stderr=subprocess.PIPE, text=True, env=tracker_env(TRACKER_FINISH_TIMEOUT="1"))
        tracker_procs.append(t)
        os.close(w)
        w = -1
        wait_for(lambda: got.exists() and got.read_bytes().count(b"\n") >= 3, "the pager took a screenful")
        os.kill(pager.pid, signal.SIGSTOP)
        wait_full(r)
        go.touch()
        _, err = t.communicate(timeout=LIMIT)
        assert t.returncode == 7, err
        if then == "continued":
            resume.touch()
            os.kill(pager.pid, signal.SIGCONT)
            assert pager.wait(timeout=LIMIT) == 0
            data = got.read_bytes()
        else:
            os.kill(pager.pid, signal.SIGKILL)
            pager.wait(timeout=LIMIT)
            data = got.read_bytes() + read_now(r)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    assert check_counts(samples_in(data), err) > 0


@pytest.mark.parametrize("reader", ["resumes", "never"])
def test_pipe_full_when_job_ends(tmp_path, tracker_procs, reader):
    """The pipe is full at the moment the job ends. A reader that resumes then gets every sample
    (the end waits for it, up to the finish timeout: no warning); one that never does leaves the
    tracker returning after the finish timeout, the rest counted as dropped. Status 7 both ways."""
    go, pidfile = tmp_path / "go", tmp_path / "pid"
    r, w = os.pipe()
    timeout = str(LIMIT) if reader == "resumes" else "1"
    cmd = ["sh", "-c", f'echo $$ > "{pidfile}"; while [ ! -e "{go}" ]; do sleep 0.02; done; exit 7']
    try:
        t = subprocess.Popen([TRACKER, "-i", "0.01", "-o", "-", "--summary", "--", *cmd], stdout=w,
                             stderr=subprocess.PIPE, text=True, env=tracker_env(TRACKER_FINISH_TIMEOUT=timeout))
        tracker_procs.append(t)
        os.close(w)
        w = -1
        wait_full(r)
        wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), "the job started")
        pid = int(pidfile.read_text())
        go.touch()
        wait_for(lambda: not os.path.exists(f"/proc/{pid}"), "the job ended and was reaped")
        if reader == "resumes":
            data = b""
            while True:  # blocking reads to EOF: the tracker's end of the pipe closes when it exits
                b = os.read(r, 1 << 16)
                if not b:
                    break
                data += b
            _, err = t.communicate(timeout=LIMIT)
        else:
            _, err = t.communicate(timeout=LIMIT)
            data = read_now(r)
        assert t.returncode == 7, err
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    n = check_counts(samples_in(data), err)
    if reader == "resumes":
        assert n == 0 and data.endswith(b"\n"), err
    else:
        assert n > 0


@pytest.mark.parametrize("reader", ["resumes", "never"])
def test_stderr_paused(tmp_path, tracker_procs, reader):
    """Samples to stderr (the default) with --summary, its reader stalled until the job ended: the
    tool's own lines go through the same queue, after the samples before them, so a reader that
    resumes gets every sample, then the summary, whole lines in order; one that never does leaves
    the tracker returning with 7 after the finish timeout (its own lines dropped with the rest)."""
    go = tmp_path / "go"
    timeout = str(LIMIT) if reader == "resumes" else "1"
    t = subprocess.Popen([TRACKER, "-i", "0.01", "--summary", "--", *job(go)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=tracker_env(TRACKER_FINISH_TIMEOUT=timeout))
    tracker_procs.append(t)
    r = t.stderr.fileno()
    wait_full(r)
    go.touch()
    if reader == "resumes":
        err = t.stderr.read()
        assert t.wait(timeout=LIMIT) == 7
    else:
        assert t.wait(timeout=LIMIT) == 7
        err = read_now(r)
    t.stderr.close()
    text = err.decode(errors="replace")
    lines = err.split(b"\n")
    complete, rest = lines[:-1], lines[-1]
    samples = [json.loads(l) for l in complete if l.startswith(b"{")]
    own = [l for l in complete if not l.startswith(b"{")]
    if reader == "resumes":
        assert rest == b"", text
        assert own and own[0] == b"resource-tracker: summary of the run", text
        assert complete.index(own[0]) == len(samples)  # every sample before the summary
        assert summary_samples(text) == len(samples)
        assert dropped(text) == (0, None)
    else:
        assert samples and all(l.startswith(b"resource-tracker: ") for l in own), text


@pytest.mark.skipif(VALGRIND or SANITIZED or not shutil.which("strace"), reason="counts the tracker's own "
                    "system calls with strace (not through valgrind or a sanitizer's runtime)")
def test_regular_file_one_write_per_sample(tmp_path):
    """A regular file that never blocks: each sample is one write(2) of the whole line, as
    docs/contracts.md §2 promises."""
    out, log = tmp_path / "out.json", tmp_path / "strace.log"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=write,writev", "-o", str(log), TRACKER, "-i", "0.05",
                        "-o", str(out), "--", "sh", "-c", "sleep 0.5; exit 7"], capture_output=True, text=True,
                       timeout=LIMIT, env=tracker_env())
    if r.returncode != 7 and "ptrace" in r.stderr:
        pytest.skip(f"strace cannot trace here: {r.stderr.strip()}")
    assert r.returncode == 7, r.stderr
    lines = out.read_bytes().split(b"\n")[:-1]
    assert len(lines) >= 3
    writes = [int(m.group(1)) for m in re.finditer(r'write\(\d+, "\{\\"resource-tracker-version.*\) = (\d+)$', log.read_text(), re.M)]
    assert writes == [len(l) + 1 for l in lines]
