"""The clocks (docs/contracts.md "Clocks"): a wall clock set back and forward an hour mid-run (the
fake-clock shim, the monotonic clocks left alone) and a tracker stopped for a few seconds
(SIGSTOP, SIGCONT) leave the record's durations the monotonic clock's and the job's, the
history's start before its end, and say so: the samples around it marked ("clock"), one line on
stderr, a note in the summary (clock_jump, sampling_gap)."""
import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from conftest import BUILD_DIR, TRACKER, TIMEOUT_SCALE, tracker_env

FAKE_CLOCK = os.path.join(BUILD_DIR, "libfake-clock.so")


def lines(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def summary_json(path):
    r = subprocess.run([TRACKER, "summary", "--json", str(path)], capture_output=True, text=True,
                       env=tracker_env(), timeout=30 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def history_row(db):
    con = sqlite3.connect(str(db))
    try:
        return con.execute("SELECT start_secs, end_secs FROM runs").fetchall()
    finally:
        con.close()


def test_wall_clock_set_back_and_forward(tmp_path):
    assert os.path.exists(FAKE_CLOCK), "build the fake-clock target"
    off = tmp_path / "offset"
    off.write_text("0")
    out, db = tmp_path / "run.jsonl", tmp_path / "history.db"
    # the job sets the clock itself: back an hour at ~1 s, forward again at ~2 s (written whole),
    # a phase of its own across the first
    job = (f"{TRACKER} phase start load; sleep 1; echo -3600 > offset.new; mv offset.new offset; "
           f"sleep 1; {TRACKER} phase stop load; echo 0 > offset.new; mv offset.new offset; sleep 1")
    r = subprocess.run([TRACKER, "-i", "0.1", "-o", str(out), "--summary", "--history", str(db), "--",
                        "sh", "-c", job], cwd=tmp_path, capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE,
                       env=tracker_env(LD_PRELOAD=FAKE_CLOCK, FAKE_CLOCK_FILE=str(off)))
    assert r.returncode == 0, r.stderr
    samples = lines(out)
    # every sample, in order: the intervals are the monotonic clock's, none lost to the jumps
    ivs = [s["interval_secs"] for s in samples]
    assert all(0 < v < 1.5 for v in ivs), ivs
    total = sum(ivs)
    assert 2.9 < total < 10, total
    # the two samples whose interval held a jump are marked, and only those
    marked = [(i, s["clock"]) for i, s in enumerate(samples) if "clock" in s]
    assert [round(c["step_secs"] / 3600) for _, c in marked] == [-1, 1], marked
    assert all(c["gap_secs"] == 0 for _, c in marked), marked
    ts = [s["timestamp_secs"] for s in samples]
    for i, c in marked:
        assert abs((ts[i] - ts[i - 1]) - ivs[i] - c["step_secs"]) < 0.5, (i, c, ts[i - 1:i + 1])
    # said once on stderr, and as a note
    assert r.stderr.count("warning: the wall clock was set back 3600") == 1, r.stderr
    assert r.stderr.count("the wall clock was set") == 2, r.stderr  # the warning, then the note
    dur = [l for l in r.stderr.splitlines() if l.strip().startswith("Duration")]
    assert dur and float(dur[0].split()[-2]) < 10, r.stderr
    # the history's row: its end after its start, by the run's monotonic time
    (start, end), = history_row(db)
    assert 0 < end - start < 10 * TIMEOUT_SCALE, (start, end)
    # the file read back: the same steps, the end its start plus its duration
    s = summary_json(out)
    assert abs(s["end_secs"] - s["start_secs"] - s["duration_secs"]) < 0.01, s
    notes = {n["kind"]: n["text"] for n in s["notes"]}
    assert "set 2 times" in notes.get("clock_jump", ""), notes
    assert s["clock"]["steps"] == 2 and abs(s["clock"]["step_secs"]) < 1, s["clock"]
    # the phase's duration is the monotonic clock's: its marks' difference less the steps
    load, = [p for p in s["phases"] if p["name"] == "load"]
    assert 1.9 < load["duration_secs"] < 3, load


def test_sentinel_finish_not_before_registration(tmp_path):
    """The wall clock set back an hour mid-run: the finish's finished_at is the start's wall clock
    plus the monotonic time since, never before the registration (S3 refused: the rows go inline)."""
    from rust_sentinel_util import Peer, closed_port, stream_env
    import calendar
    peer = Peer()
    try:
        off = tmp_path / "offset"
        off.write_text("0")
        env = stream_env(tmp_path, peer.url, closed_port(), TRACKER_FINISH_TIMEOUT="2",
                         LD_PRELOAD=FAKE_CLOCK, FAKE_CLOCK_FILE=str(off))
        t0 = time.time()
        r = subprocess.run([TRACKER, "-i", "0.2", "-q", "--", "sh", "-c",
                            "sleep 1; echo -3600 > offset.new; mv offset.new offset; sleep 0.5"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
        t1 = time.time()
        fin = peer.api("/finish")
    finally:
        peer.stop()
    assert r.returncode == 0, r.stderr
    assert len(fin) == 1, (peer.seen, r.stderr)
    when = json.loads(fin[0][2])["finished_at"]
    secs = calendar.timegm(time.strptime(when, "%Y-%m-%dT%H:%M:%SZ"))
    assert int(t0) <= secs <= t1 + 1, (t0, when, t1)


def test_tracker_stopped(tmp_path):
    """The tracker stopped (SIGSTOP) for 4 s while its 3 s job ends: the gap is marked, said and
    noted, and the run's duration is the job's (its end the kernel's, read at the reaping), not
    the tracker's wake."""
    out, db = tmp_path / "run.jsonl", tmp_path / "history.db"
    p = subprocess.Popen([TRACKER, "-i", "0.1", "-o", str(out), "--summary", "--history", str(db), "--",
                          "sleep", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tracker_env())
    try:
        deadline = time.monotonic() + 10 * TIMEOUT_SCALE
        while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 3):
            time.sleep(0.05)
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(4)
        os.kill(p.pid, signal.SIGCONT)
        _, err = p.communicate(timeout=30 * TIMEOUT_SCALE)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    samples = lines(out)
    gaps = [s["clock"]["gap_secs"] for s in samples if "clock" in s]
    assert len(gaps) == 1 and 3.5 < gaps[0] < 10, gaps
    assert err.count("warning: no sample for") == 1, err
    s = summary_json(out)
    assert "no sample for" in {n["kind"]: n["text"] for n in s["notes"]}.get("sampling_gap", ""), s["notes"]
    assert s["clock"]["gaps"] == 1 and s["clock"]["steps"] == 0, s["clock"]
    if not os.path.exists("/proc/self/sched"):
        pytest.skip("no /proc/PID/sched (CONFIG_SCHED_DEBUG): the job's end is the tracker's wake")
    # the job's 3 s, not its 3 s and the tracker's stop beyond it
    assert 2.9 < s["duration_secs"] < 3.6, s["duration_secs"]
    dur = [l for l in err.splitlines() if l.strip().startswith("Duration")]
    assert dur and float(dur[0].split()[-2]) < 3.6, err
    (start, end), = history_row(db)
    assert 2.9 < end - start < 3 + TIMEOUT_SCALE, (start, end)
