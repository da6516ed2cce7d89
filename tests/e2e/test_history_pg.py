"""A PostgreSQL run history (issue 69, items 1, 2 and 5; docs/contracts.md §1 --history) against a
real server the tests start themselves (pg_server.py: initdb in a temporary directory, a free
loopback port, password authentication): the same `history` and `recommend --job` from it as from
an SQLite file with the same runs; 50 runs ending at once give 50 rows, once each; the server
down, slow (a lock held past the deadline), refusing the password or full (a tablespace on a small
tmpfs, root only) never changes the job's exit status, keeps the row in the state directory and
writes it later, once; an SQLite history migrated from schema 11 answers `recommend --job` as
before. Skipped, saying why, where postgresql is not installed (scripts/install-deps --test)."""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env
import pg_server

_why = pg_server.unavailable_reason()
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")


@pytest.fixture(scope="module")
def pg():
    with pg_server.PgServer() as server:
        yield server


_dbs = iter(range(1, 10000))


@pytest.fixture
def db(pg):
    """A new database of the server, its name."""
    name = f"h{next(_dbs)}"
    pg.create_db(name)
    return name


def env_of(pg, tmp_path, **extra):
    """The tracker's environment: the server's password file, a state directory of the test's,
    no price lookup (its time in recommend's last line would differ between two answers)."""
    extra.setdefault("TRACKER_KEEPER_URL", "off")
    return tracker_env(XDG_STATE_HOME=str(tmp_path / "state"), **pg.env(**extra))


def track(pg, tmp_path, history, *cmd, job="pgjob", extra_env=None, timeout=120):
    env = env_of(pg, tmp_path, **(extra_env or {}))
    t0 = time.monotonic()
    p = subprocess.run([TRACKER, "-q", "-i", "0.2", "--job-name", job, "--history", history, "--", *cmd], env=env,
                       capture_output=True, text=True, timeout=timeout * TIMEOUT_SCALE)
    p.elapsed = time.monotonic() - t0
    return p


def tool(pg, tmp_path, *args, extra_env=None):
    return subprocess.run([TRACKER, *args], env=env_of(pg, tmp_path, **(extra_env or {})), capture_output=True,
                          text=True, timeout=120 * TIMEOUT_SCALE)


def pg_rows(pg, db):
    return pg.sql("SELECT exit_status, run_uuid FROM runs ORDER BY id", db=db)


def kept_files(tmp_path):
    return sorted((tmp_path / "state" / "resource-tracker").glob("history-*.pending"))


def test_same_history_and_recommend_as_sqlite(pg, db, tmp_path):
    """Runs recorded in an SQLite file, then moved into PostgreSQL by the tool itself (the file
    handed to `upload` as a kept row of the URL): `history`, `history --json` and `recommend
    --job` say the same of both."""
    lite = str(tmp_path / "h.db")
    for cmd in (["true"], ["sleep", "0.3"], ["sh", "-c", "exit 4"], ["python3", "-c", "x = bytearray(30 << 20)"]):
        assert track(pg, tmp_path, lite, *cmd).returncode in (0, 4)
    assert track(pg, tmp_path, lite, "true", job="other").returncode == 0
    state = tmp_path / "state" / "resource-tracker"
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o700)
    kept = state / "history-1-1.pending"
    shutil.copyfile(lite, kept)
    con = sqlite3.connect(kept)
    con.execute("CREATE TABLE kept_for (path TEXT)")
    con.execute("INSERT INTO kept_for VALUES (?)", (pg.url(db),))
    con.commit()
    con.close()
    up = tool(pg, tmp_path, "upload")
    assert "was written" in up.stderr, up.stderr
    assert not kept.exists()
    url = pg.url(db)
    for args in (["history"], ["history", "--json"], ["history", "--job", "pgjob", "--last", "2"],
                 ["recommend", "--job", "pgjob"], ["recommend", "--job", "other"]):
        a = tool(pg, tmp_path, *args, "--history", lite)
        b = tool(pg, tmp_path, *args, "--history", url)
        assert a.returncode == b.returncode == 0, (args, a.stderr, b.stderr)
        assert a.stdout == b.stdout and a.stdout, args
        assert a.stderr == b.stderr.replace(url, lite), args


def test_export_import_moves_a_history_both_ways(pg, db, tmp_path):
    """`history --export` of an SQLite history imported into PostgreSQL, twice (the second adds
    nothing: each run's run_uuid is there), and back out of PostgreSQL into a new SQLite file:
    the same runs, the same `recommend --job` from all three (issue 69 item 4)."""
    lite = str(tmp_path / "h.db")
    for cmd in (["true"], ["sleep", "0.3"], ["python3", "-c", "x = bytearray(30 << 20)"]):
        assert track(pg, tmp_path, lite, *cmd).returncode == 0
    url = pg.url(db)
    out = tmp_path / "runs.jsonl"
    assert tool(pg, tmp_path, "history", "--history", lite, "--export", out).returncode == 0
    first = tool(pg, tmp_path, "history", "--history", url, "--import", out)
    assert first.returncode == 0 and "3 runs added, 0 skipped" in first.stdout, (first.stdout, first.stderr)
    again = tool(pg, tmp_path, "history", "--history", url, "--import", out)
    assert again.returncode == 0 and "0 runs added, 3 skipped" in again.stdout, (again.stdout, again.stderr)
    back_file = tmp_path / "back.jsonl"
    assert tool(pg, tmp_path, "history", "--history", url, "--export", back_file).returncode == 0
    back = str(tmp_path / "back.db")
    assert tool(pg, tmp_path, "history", "--history", back, "--import", back_file).returncode == 0
    uuids = [json.loads(line)["run_uuid"] for line in out.read_text().splitlines()]
    assert [json.loads(line)["run_uuid"] for line in back_file.read_text().splitlines()] == uuids
    answers = [tool(pg, tmp_path, "recommend", "--job", "pgjob", "--history", h) for h in (lite, url, back)]
    assert all(a.returncode == 0 for a in answers), [a.stderr for a in answers]
    assert answers[0].stdout == answers[1].stdout == answers[2].stdout and answers[0].stdout


def test_fifty_runs_ending_at_once_give_fifty_rows(pg, db, tmp_path):
    url = pg.url(db)
    env = env_of(pg, tmp_path, TRACKER_FINISH_TIMEOUT="120")
    start = tmp_path / "go"
    procs = [subprocess.Popen([TRACKER, "-q", "-i", "0.5", "--job-name", f"w{i % 5}", "--history", url, "--", "sh",
                               "-c", f"while [ ! -e {start} ]; do sleep 0.05; done; exit {i % 3}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(50)]
    time.sleep(1.0)
    t0 = time.monotonic()
    start.touch()
    errs = []
    for i, p in enumerate(procs):
        _, err = p.communicate(timeout=300 * TIMEOUT_SCALE)
        assert p.returncode == i % 3, err
        errs.append(err)
    took = time.monotonic() - t0
    if kept_files(tmp_path):  # none expected, but a row kept is written by upload, once
        tool(pg, tmp_path, "upload")
    got = pg_rows(pg, db)
    print(f"\n50 runs ending at once: {len(got)} rows, the last run ended {took:.1f} s after the start; "
          f"{len(kept_files(tmp_path))} kept")
    assert len(got) == 50, "".join(errs)
    assert len({u for _, u in got}) == 50 and all(len(u) == 32 for _, u in got)
    assert sorted(int(s) for s, _ in got) == sorted(i % 3 for i in range(50))


def _delivered_once(pg, tmp_path, db, want, how="upload", url=None):
    """The kept row is written by `upload` (or the next run), once: copying its file back and
    uploading again stores nothing more."""
    kept = kept_files(tmp_path)
    assert len(kept) == 1, kept
    saved = kept[0].read_bytes()
    if how == "upload":
        p = tool(pg, tmp_path, "upload")
        assert "was written" in p.stderr, p.stderr
    else:
        p = track(pg, tmp_path, url, "true")
        assert p.returncode == 0 and "was written" in p.stderr, p.stderr
        want = want + [0]
    assert not kept[0].exists()
    kept[0].write_bytes(saved)  # a copy whose file could not be removed, or a COMMIT whose answer was lost
    tool(pg, tmp_path, "upload")
    got = pg_rows(pg, db)
    assert sorted(int(s) for s, _ in got) == sorted(want), got
    assert len({u for _, u in got}) == len(got)


def test_server_stopped_mid_run(pg, db, tmp_path):
    url = pg.url(db)
    assert track(pg, tmp_path, url, "true").returncode == 0
    env = env_of(pg, tmp_path, TRACKER_FINISH_TIMEOUT="3")
    p = subprocess.Popen([TRACKER, "-q", "-i", "0.2", "--job-name", "pgjob", "--history", url, "--", "sh", "-c",
                          "sleep 2; exit 3"], env=env, stderr=subprocess.PIPE, text=True)
    pg.stop_server()
    t0 = time.monotonic()
    try:
        _, err = p.communicate(timeout=120)
    finally:
        pg.restart()
    end = time.monotonic() - t0
    print(f"\nserver down: the run ended {end:.2f} s after the server stopped (a 2 s job, TRACKER_FINISH_TIMEOUT=3)")
    assert p.returncode == 3, err
    assert "the run's row is kept in" in err, err
    _delivered_once(pg, tmp_path, db, [0, 3])


def test_slow_server_past_the_deadline(pg, db, tmp_path):
    url = pg.url(db)
    assert track(pg, tmp_path, url, "true").returncode == 0
    holder = pg.hold("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE", db=db)
    try:
        p = track(pg, tmp_path, url, "sh", "-c", "exit 5", extra_env={"TRACKER_FINISH_TIMEOUT": "2"})
    finally:
        pg.release(holder)
    print(f"\nslow server (a lock held 600 s): the run took {p.elapsed:.2f} s with TRACKER_FINISH_TIMEOUT=2")
    assert p.returncode == 5, p.stderr
    assert "the run's row is kept in" in p.stderr, p.stderr
    assert p.elapsed < 60  # not the lock's 600 s
    _delivered_once(pg, tmp_path, db, [0, 5], how="next-run", url=url)


def test_frozen_server(pg, db, tmp_path):
    """A server that takes the connection but never answers (its postmaster stopped with SIGSTOP:
    the kernel still accepts): the connect waits until the deadline, no longer."""
    url = pg.url(db)
    assert track(pg, tmp_path, url, "true").returncode == 0
    os.kill(pg.proc.pid, signal.SIGSTOP)
    try:
        p = track(pg, tmp_path, url, "sh", "-c", "exit 4", extra_env={"TRACKER_FINISH_TIMEOUT": "2"})
    finally:
        os.kill(pg.proc.pid, signal.SIGCONT)
    print(f"\nfrozen server: the run took {p.elapsed:.2f} s with TRACKER_FINISH_TIMEOUT=2")
    assert p.returncode == 4, p.stderr
    assert "before the deadline" in p.stderr and "the run's row is kept in" in p.stderr, p.stderr
    assert p.elapsed < 60
    _delivered_once(pg, tmp_path, db, [0, 4])


def test_password_refused(pg, db, tmp_path):
    secret = "Wr0ngSecret9"
    url = pg.url(db, password=secret)
    p = track(pg, tmp_path, url, "sh", "-c", "exit 6", extra_env={"PGPASSFILE": "/dev/null"})
    print(f"\npassword refused: the run took {p.elapsed:.2f} s")
    assert p.returncode == 6, p.stderr
    assert "password authentication failed" in p.stderr and "the run's row is kept in" in p.stderr, p.stderr
    assert secret not in p.stderr
    kept = kept_files(tmp_path)
    assert len(kept) == 1 and secret not in kept[0].name and secret.encode() not in kept[0].read_bytes()
    _delivered_once(pg, tmp_path, db, [6])  # upload: the password from PGPASSFILE


def test_password_never_shown(pg, db, tmp_path):
    """A password in the URL: never in the tracker's argv while it runs (ps), nor in what it says."""
    secret = pg.password
    url = pg.url(db, password=secret)
    env = env_of(pg, tmp_path, PGPASSFILE="/dev/null")
    p = subprocess.Popen([TRACKER, "-q", "--history", url, "--", "sleep", "1.5"], env=env, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(0.8)
    with open(f"/proc/{p.pid}/cmdline", "rb") as f:
        cmdline = f.read()
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert secret.encode() not in cmdline and b"postgresql://rt:" in cmdline
    assert len(pg_rows(pg, db)) == 1
    bad = tool(pg, tmp_path, "history", "--history", pg.url(db, password="Nope12345"),
               extra_env={"PGPASSFILE": "/dev/null"})
    assert bad.returncode == 1 and "Nope12345" not in bad.stderr and "password authentication" in bad.stderr


class _SilentResolver:
    """A DNS server on a loopback address of its own (127.0.0.N, port 53) that takes every query and
    never answers: a resolver that holds getaddrinfo for its whole timeout."""

    def __enter__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for n in range(77, 250):
            try:
                self.sock.bind((f"127.0.0.{n}", 53))
                break
            except OSError:
                continue
        else:
            self.sock.close()
            pytest.skip("no loopback address with port 53 free")
        self.addr = self.sock.getsockname()[0]
        return self

    def queries(self):
        self.sock.setblocking(False)
        n = 0
        try:
            while self.sock.recv(4096):
                n += 1
        except BlockingIOError:
            pass
        return n

    def __exit__(self, *exc):
        self.sock.close()


def _in_namespace(files, argv):
    """argv run in a mount namespace of its own, each of files' {path: source} bind-mounted over
    path (the machine's own /etc stays as it is)."""
    mounts = " && ".join(f"mount --bind {src} {dst}" for dst, src in files.items())
    return ["unshare", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh", *argv]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                    reason="a resolver of the test's own needs a mount namespace (root, unshare)")
def test_host_lookup_that_never_answers(pg, db, tmp_path):
    """The server's host name looked up by a resolver that never answers (libpq's getaddrinfo blocks
    for the resolver's 60 s): the run ends at TRACKER_FINISH_TIMEOUT with the job's exit status and
    the row kept; `upload`, with the name found, writes it once."""
    name = "histdb.example.test"
    url = f"postgresql://rt@{name}:{pg.port}/{db}"
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"{name}:{pg.port}:*:rt:{pg.password}\n")
    passfile.chmod(0o600)
    resolv, hosts = tmp_path / "resolv.conf", tmp_path / "hosts"
    hosts.write_text(f"127.0.0.1 localhost\n127.0.0.1 {name}\n")
    extra = {"TRACKER_FINISH_TIMEOUT": "2", "PGPASSFILE": str(passfile)}
    assert track(pg, tmp_path, pg.url(db), "true").returncode == 0  # the schema made
    with _SilentResolver() as dns:
        resolv.write_text(f"nameserver {dns.addr}\noptions timeout:60 attempts:1\n")
        env = env_of(pg, tmp_path, **extra)
        t0 = time.monotonic()
        p = subprocess.run(_in_namespace({"/etc/resolv.conf": resolv}, [
            TRACKER, "-q", "--job-name", "pgjob", "--history", url, "--", "sh", "-c", "exit 7"]),
            env=env, capture_output=True, text=True, timeout=50 * TIMEOUT_SCALE)
        elapsed = time.monotonic() - t0
        asked = dns.queries()
    print(f"\nsilent resolver: the run took {elapsed:.2f} s with TRACKER_FINISH_TIMEOUT=2 ({asked} queries)")
    assert asked >= 1  # the name was looked up there, and got no answer
    assert p.returncode == 7, p.stderr
    assert "looked up" in p.stderr and "the run's row is kept in" in p.stderr, p.stderr
    assert len(kept_files(tmp_path)) == 1 and len(pg_rows(pg, db)) == 1
    up = subprocess.run(_in_namespace({"/etc/hosts": hosts}, [TRACKER, "upload"]), env=env, capture_output=True,
                        text=True, timeout=120 * TIMEOUT_SCALE)
    assert "was written" in up.stderr, up.stderr
    assert [int(s) for s, _ in pg_rows(pg, db)] == [0, 7] and kept_files(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_full_tablespace(pg, tmp_path):
    mnt = tempfile_dir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "rt-pg-full", mnt], check=True)
    try:
        space = os.path.join(mnt, "space")
        os.mkdir(space, 0o700)
        os.chown(space, pg.uid, pg.gid)
        pg.psql(f"CREATE TABLESPACE rtfull LOCATION '{space}'")
        name = f"full{next(_dbs)}"
        pg.create_db(name, tablespace="rtfull")
        url = pg.url(name)
        assert track(pg, tmp_path, url, "true").returncode == 0
        filler = os.path.join(mnt, "filler")
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)  # to ENOSPC
        # rows enough to need a new page of the table (a page holds a few)
        codes = []
        for i in range(6):
            p = track(pg, tmp_path, url, "sh", "-c", "exit 7")
            assert p.returncode == 7, p.stderr
            codes.append(7)
            if "the run's row is kept in" in p.stderr:
                break
        print(f"\nfull tablespace: {p.stderr.strip()[:300]}")
        assert "the run's row is kept in" in p.stderr, p.stderr
        os.unlink(filler)
        _delivered_once(pg, tmp_path, name, [0] + codes)
        pg.psql(f"DROP DATABASE {name}")
        pg.psql("DROP TABLESPACE rtfull")
    finally:
        subprocess.run(["umount", "-l", mnt], check=False)
        os.rmdir(mnt)


def tempfile_dir():
    import tempfile
    return tempfile.mkdtemp(prefix="rt-pg-full-")


def test_migrated_sqlite_history_answers_the_same(pg, tmp_path):
    """An SQLite history of schema 11 (made here with the sqlite3 module: run_uuid and its index
    dropped, user_version 11) answers `recommend --job` as before, and the same once a run of
    another job has migrated it to 12."""
    lite = str(tmp_path / "old.db")
    for cmd in (["true"], ["sleep", "0.2"], ["sh", "-c", "exit 0"]):
        assert track(pg, tmp_path, lite, *cmd, job="old").returncode == 0
    con = sqlite3.connect(lite)
    con.execute("DROP INDEX IF EXISTS runs_uuid")
    con.execute("DROP INDEX IF EXISTS runs_job_id")
    con.execute("ALTER TABLE runs DROP COLUMN run_uuid")
    con.execute("PRAGMA user_version = 11")
    con.commit()
    con.close()
    before = tool(pg, tmp_path, "recommend", "--job", "old", "--history", lite)
    assert before.returncode == 0, before.stderr
    assert track(pg, tmp_path, lite, "true", job="new").returncode == 0
    con = sqlite3.connect(lite)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 12
    assert "run_uuid" in [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    con.close()
    after = tool(pg, tmp_path, "recommend", "--job", "old", "--history", lite)
    assert after.returncode == 0 and after.stdout == before.stdout, (before.stdout, after.stdout)


def _libpq_path():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith("libpq.so.5 ") and "=>" in line:
            return line.split("=>")[1].strip()
    return None


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="hiding libpq needs root (a mount namespace)")
def test_missing_libpq_is_a_usage_error(tmp_path):
    """Without libpq (an empty file bound over it in a mount namespace of its own), a URL given on
    the command line is refused before the job starts, saying what to install; a file history
    still works."""
    lib = _libpq_path()
    if not lib:
        pytest.skip("libpq.so.5 is not in ldconfig's cache")
    marker = tmp_path / "ran"
    script = (f'mount --bind /dev/null "{lib}" && exec "$@"')
    p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", TRACKER, "-q", "--history",
                        "postgresql://u:pw123@127.0.0.1:9/x", "--", "touch", str(marker)],
                       env=tracker_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "apt-get install libpq5" in p.stderr and not marker.exists() and "pw123" not in p.stderr
    p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", TRACKER, "-q", "--history",
                        str(tmp_path / "h.db"), "--", "touch", str(marker)],
                       env=tracker_env(), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and marker.exists(), p.stderr


def test_config_url_and_environment(pg, db, tmp_path):
    """`[history] url` in the config file (the team's two lines, README) and TRACKER_HISTORY name a
    PostgreSQL history as --history does; `history` and `recommend --job` read it from there."""
    url = pg.url(db)
    (tmp_path / "resource-tracker.toml").write_text(f'[history]\nurl = "{url}"\n')
    env = env_of(pg, tmp_path)
    p = subprocess.run([TRACKER, "-q", "--job-name", "cfg", "--", "true"], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = subprocess.run([TRACKER, "-q", "--job-name", "cfg", "--", "true"], env=dict(env, TRACKER_HISTORY=url),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert len(pg_rows(pg, db)) == 2
    h = subprocess.run([TRACKER, "history", "--job", "cfg"], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert h.returncode == 0 and h.stdout.count(" cfg ") == 2, h.stdout + h.stderr
    r = subprocess.run([TRACKER, "recommend", "--job", "cfg"], env=dict(env, TRACKER_HISTORY=url),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "runs: 2" in r.stdout, r.stdout + r.stderr


def test_sslmode_passes_to_libpq(pg, db, tmp_path):
    """sslmode in the URL is libpq's: `require` against this server (no TLS) is refused by libpq,
    the row kept; `disable` writes."""
    p = track(pg, tmp_path, pg.url(db) + "?sslmode=require", "sh", "-c", "exit 2")
    assert p.returncode == 2, p.stderr
    assert "SSL" in p.stderr and "the run's row is kept in" in p.stderr, p.stderr
    p = track(pg, tmp_path, pg.url(db) + "?sslmode=disable", "true")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert len(pg_rows(pg, db)) == 1
