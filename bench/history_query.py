#!/usr/bin/python3
"""What `recommend --job` and `history --job` cost over a history of 100,000 runs (issue 69), in
each engine: an SQLite file and a PostgreSQL database (a server of its own, tests/e2e/pg_server.py),
each filled by SQL with copies of one real run (the tool's own row) spread over 1,000 job names
(100 runs each; the copies' summary_json left NULL, the columns recommend reads kept), then the
tool's wall time for `recommend --job NAME` and `history --job NAME --last 20` (the median of
ROUNDS). Prints figures, asserts nothing.

Usage: bench/history_query.py [BUILD_DIR] [RUNS]"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import pg_server  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
JOBS = 1000
ROUNDS = 5
TRACKER = os.path.join(BUILD, "resource-tracker")


def timed(env, *args):
    took = []
    for _ in range(ROUNDS):
        t0 = time.monotonic()
        p = subprocess.run([TRACKER, *args], env=env, capture_output=True, text=True)
        took.append(time.monotonic() - t0)
        if p.returncode != 0:
            raise RuntimeError(f"{args}: {p.stderr}")
    return statistics.median(took)


def fill_sql(cols, series, uuid):
    """An INSERT ... SELECT of RUNS copies of run 1 from series (n: 1..RUNS)."""
    def value(c):
        if c == "job_name":
            return f"'job' || (n % {JOBS})"
        if c == "run_uuid":
            return uuid
        if c == "summary_json":
            return "NULL"
        if c == "start_secs":
            return "start_secs + n"
        return c
    names = ", ".join(cols)
    return f"INSERT INTO runs ({names}) SELECT {', '.join(value(c) for c in cols)} FROM runs, {series} WHERE id = 1"


def main():
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", TRACKER_KEEPER_URL="off")
    tmp = tempfile.mkdtemp(prefix="rt-bench-history-")
    lite = os.path.join(tmp, "h.db")
    with pg_server.PgServer() as pg:
        pg.create_db("bench")
        url = pg.url("bench")
        env.update(pg.env(), XDG_STATE_HOME=os.path.join(tmp, "state"))
        for history in (lite, url):
            p = subprocess.run([TRACKER, "-q", "--job-name", "seed", "--history", history, "--", "sleep", "0.2"],
                               env=env, capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
        con = sqlite3.connect(lite)
        cols = [r[1] for r in con.execute("PRAGMA table_info(runs)") if r[1] != "id"]
        t0 = time.monotonic()
        con.execute(f"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {RUNS}) "
                    + fill_sql(cols, "g", "lower(hex(randomblob(16)))"))
        con.commit()
        con.close()
        fill_lite = time.monotonic() - t0
        t0 = time.monotonic()
        pg.psql(fill_sql(cols, f"generate_series(1, {RUNS}) AS s(n)", "md5(random()::text || n::text)"),
                db="bench", timeout=1800)
        pg.psql("ANALYZE runs", db="bench")
        fill_pg = time.monotonic() - t0
        print(f"{RUNS} runs over {JOBS} job names ({RUNS // JOBS} each): filled SQLite in {fill_lite:.1f} s, "
              f"PostgreSQL in {fill_pg:.1f} s; size {os.path.getsize(lite) / 2**20:.0f} MiB (SQLite)")
        print(f"{'':28s}{'SQLite':>10s}{'PostgreSQL':>12s}   (wall s, median of {ROUNDS})")
        for what, args in (("recommend --job job7", ["recommend", "--job", "job7"]),
                           ("history --job job7 --last 20", ["history", "--job", "job7", "--last", "20"]),
                           ("history --job job7", ["history", "--job", "job7"]),
                           ("history --last 20", ["history", "--last", "20"])):
            a = timed(env, *args, "--history", lite)
            b = timed(env, *args, "--history", url)
            print(f"{what:28s}{a:10.3f}{b:12.3f}")
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    why = pg_server.unavailable_reason()
    if why:
        print(f"skipped: {why}")
        sys.exit(0)
    main()
