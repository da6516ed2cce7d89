"""A FIFO as an output never holds the job or the tracker (issue 50, item 2; src/cli/finish.c):
`-o FIFO` with no reader is a usage error before the job starts (2, the job never ran), and so is
a FIFO as `--history`; `--report FIFO` is written after the job ended, so its reader is waited for
within TRACKER_FINISH_TIMEOUT (a reader that comes in time gets the whole report, none is one
warning) and a reader that stops taking it is given up on by then too; the status is the job's
(3) throughout; the report subcommand's `-o FIFO` is bounded alike. SIGTERM or SIGINT while the
end waits cuts it short, with the job's status.

No wall-clock time is asserted: a tracker that waited would never return, and the subprocess
timeouts (generous, scaled for ASan and valgrind) would fail the test."""
import fcntl
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env

LIMIT = 30 * TIMEOUT_SCALE  # a tracker that waits for a reader never gets here
F_SETPIPE_SZ = 1031
JOB = ["sh", "-c", "touch done; exit 3"]  # "done" says the job ended; the end of the run follows


def start(tmp_path, args, cmd=JOB, **env):
    return subprocess.Popen([TRACKER, "-q", *args, "--", *cmd], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=tracker_env(**env))


def finish(p):
    """(status, stderr) of p; killed should it outlive LIMIT."""
    try:
        _, err = p.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        pytest.fail(f"the tracker never returned (killed): {err}")
    return p.returncode, err


def wait_done(tmp_path, p):
    """Until the job ended (its file), then a moment: the tracker is in the end of the run."""
    deadline = time.monotonic() + LIMIT
    while not (tmp_path / "done").exists():
        assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
        time.sleep(0.02)
    time.sleep(0.3)


def fifo(tmp_path):
    f = tmp_path / "f"
    os.mkfifo(f)
    return f


@pytest.mark.parametrize("flag", ["-o", "--history"])
def test_fifo_without_reader_before_the_job_is_a_usage_error(tmp_path, flag):
    f = fifo(tmp_path)
    r = subprocess.run([TRACKER, "-q", flag, str(f), "--", "touch", "x"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=LIMIT, env=tracker_env())
    assert r.returncode == 2, r.stderr
    assert not (tmp_path / "x").exists()  # the job never started
    assert str(f) in r.stderr and "FIFO" in r.stderr, r.stderr


def test_report_fifo_without_reader_is_one_warning(tmp_path):
    f = fifo(tmp_path)
    code, err = finish(start(tmp_path, ["--report", str(f)], TRACKER_FINISH_TIMEOUT="1"))
    assert code == 3, err
    lines = [l for l in err.splitlines() if "warning:" in l]
    assert len(lines) == 1 and str(f) in lines[0] and "no reader" in lines[0], err


def test_report_fifo_reader_within_the_timeout_gets_it_all(tmp_path):
    f = fifo(tmp_path)
    p = start(tmp_path, ["--report", str(f)], TRACKER_FINISH_TIMEOUT=str(10 * TIMEOUT_SCALE))
    try:
        wait_done(tmp_path, p)  # the tracker tried the FIFO and found no reader: it tries again
        rfd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)
        data, deadline = b"", time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            select.select([rfd], [], [], 0.5)
            chunk = os.read(rfd, 1 << 16)
            if not chunk and (data or p.poll() is not None):
                break  # the writer came and went (or never comes)
            data += chunk
        os.close(rfd)
    finally:
        code, err = finish(p)
    assert code == 3, err
    assert data.startswith(b"<!DOCTYPE html>") and data.rstrip().endswith(b"</html>"), (len(data), err)
    assert "report:" not in err, err


def test_report_fifo_reader_that_stops_reading_is_given_up(tmp_path):
    f = fifo(tmp_path)
    rfd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)  # there, and never reads
    try:
        fcntl.fcntl(rfd, F_SETPIPE_SZ, 4096)  # one page: the report never fits
        code, err = finish(start(tmp_path, ["--report", str(f)], TRACKER_FINISH_TIMEOUT="1"))
    finally:
        os.close(rfd)
    assert code == 3, err
    lines = [l for l in err.splitlines() if "warning:" in l and "report:" in l]
    assert len(lines) == 1 and "its reader took" in lines[0], err


def test_report_subcommand_fifo_without_reader(tmp_path):
    """`report -o FIFO` is bounded the same way: exit 1 with one line once the wait is over."""
    rec = tmp_path / "run.jsonl"
    r = subprocess.run([TRACKER, "-q", "-i", "0.05", "-o", str(rec), "--", "sleep", "0.2"], capture_output=True,
                       text=True, timeout=LIMIT, env=tracker_env())
    assert r.returncode == 0, r.stderr
    f = fifo(tmp_path)
    r = subprocess.run([TRACKER, "report", str(rec), "-o", str(f), "--no-price-lookup"], capture_output=True, text=True,
                       timeout=LIMIT, env=tracker_env(TRACKER_FINISH_TIMEOUT="1"))
    assert r.returncode == 1, r.stderr
    assert f"report: {f}: a FIFO that no reader opened" in r.stderr, r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_while_the_report_waits_for_its_reader(tmp_path, sig):
    f = fifo(tmp_path)
    p = start(tmp_path, ["--report", str(f)], TRACKER_FINISH_TIMEOUT="3600")
    wait_done(tmp_path, p)
    p.send_signal(sig)
    code, err = finish(p)
    assert code == 3, err
    assert f"signal {int(sig)}: the end of the run is cut short" in err, err


def test_signal_while_the_sample_reader_stalls(tmp_path):
    """The end waits for the samples' reader (beside the library's ends, which no FIFO wait can
    cut): a signal ends it all the same, a second later at most, with the job's status."""
    f = fifo(tmp_path)
    rfd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)  # there, and never reads
    try:
        fcntl.fcntl(rfd, F_SETPIPE_SZ, 4096)
        p = start(tmp_path, ["-i", "0.01", "-o", str(f)], cmd=["sh", "-c", "sleep 0.3; touch done; exit 3"],
                  TRACKER_FINISH_TIMEOUT="3600")
        wait_done(tmp_path, p)
        p.send_signal(signal.SIGTERM)
        code, err = finish(p)
    finally:
        os.close(rfd)
    assert code == 3, err
    assert "signal 15: the end of the run is cut short" in err, err
