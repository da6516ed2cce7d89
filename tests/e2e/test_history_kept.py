"""A history row that could not be written is kept, and written later, once (issue 67, item 6;
docs/contracts.md §1 --history): another process holds the SQLite history's lock past the
tracker's busy timeout (10 s) while the run ends; the run's row is kept in the state directory
($XDG_STATE_HOME/resource-tracker), said, and the next run with that history, or
`resource-tracker upload` (no token needed for it), writes it, once. Before: the row was lost
(1 of 2 runs stored)."""
import sqlite3
import subprocess
import sys

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env

HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("COMMIT")
"""


def rows(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT start_secs, exit_status FROM runs ORDER BY id").fetchall()
    finally:
        con.close()


def track(tmp_path, db, code):
    return subprocess.run([TRACKER, "-q", "-i", "0.2", "--history", str(db), "--", "sh", "-c", f"exit {code}"],
                          env=tracker_env(XDG_STATE_HOME=str(tmp_path / "state")), capture_output=True, text=True,
                          timeout=120 * TIMEOUT_SCALE)


@pytest.mark.parametrize("later", ["upload", "next-run"])
def test_row_of_a_locked_history_is_written_later_once(tmp_path, later):
    db = tmp_path / "h.db"
    first = track(tmp_path, db, 0)
    assert first.returncode == 0 and rows(db) and len(rows(db)) == 1, first.stderr
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db), "12"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        locked = track(tmp_path, db, 3)  # ends while the lock is held past its 10 s
    finally:
        holder.wait(timeout=60)
    assert locked.returncode == 3, locked.stderr
    assert "the run's row is kept in" in locked.stderr, locked.stderr
    kept = list((tmp_path / "state" / "resource-tracker").glob("history-*.pending"))
    assert len(kept) == 1 and len(rows(db)) == 1
    env = tracker_env(XDG_STATE_HOME=str(tmp_path / "state"))
    if later == "upload":
        saved = kept[0].read_bytes()
        p = subprocess.run([TRACKER, "upload"], env=env, capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
        assert p.returncode == 0, p.stderr
        assert "the row kept in" in p.stderr and "was written" in p.stderr, p.stderr
        # a copy whose file could not be removed: the next upload finds its run there already
        kept[0].write_bytes(saved)
        p = subprocess.run([TRACKER, "upload"], env=env, capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
        assert p.returncode == 0, p.stderr
        again = subprocess.run([TRACKER, "upload"], env=env, capture_output=True, text=True,
                               timeout=60 * TIMEOUT_SCALE)
        assert again.returncode == 2  # nothing left, no token: as before
        want = [0, 3]
    else:
        p = track(tmp_path, db, 5)
        assert p.returncode == 5, p.stderr
        want = [0, 5, 3]  # its own row first, then the one kept
    got = rows(db)
    print(f"\nlocked history, then {later}: {len(got)} rows stored ({[r[1] for r in got]})")
    assert [r[1] for r in got] == want and len({r[0] for r in got}) == len(got)  # each run once
    assert not kept[0].exists()
