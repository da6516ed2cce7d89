"""pg_server.py - a PostgreSQL server of the tests' own, for the PostgreSQL history's tests
(test_history_pg.py, bench/history_query.py): Debian's postgresql (initdb, postgres) in a
temporary directory, a cluster made afresh with password authentication (scram-sha-256, so that a
wrong password is refused for real), listening on a free loopback port and a Unix socket in that
directory, run as an unprivileged user (postgres refuses root: the `postgres` account when the
tests run as root) and stopped by its own PID (SIGINT, then SIGKILL). The client side is psql's.

    with PgServer() as pg:
        url = pg.url("db1")            # postgresql://rt@127.0.0.1:PORT/db1 (password: pg.env())
        pg.sql("SELECT 1", db="db1")

unavailable_reason() says why none can be started here (None when one can)."""
import ctypes
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

USER = "rt"
PASSWORD = "rt-test-pw-4b1d"


def _bin_dir():
    """Debian's postgresql server programs, the newest version installed; None without."""
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]) if
                  d.split("/")[-2].isdigit() else 0)
    for d in reversed(dirs):
        if all(os.access(os.path.join(d, p), os.X_OK) for p in ("initdb", "postgres")):
            return d
    return None


def _psql():
    return shutil.which("psql") or next(iter(glob.glob("/usr/lib/postgresql/*/bin/psql")), None)


def _run_as():
    """(uid, gid) the server runs as: ours unless we are root, then the postgres account's
    (Debian's package makes it), else nobody's."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    for name in ("postgres", "nobody"):
        try:
            p = pwd.getpwnam(name)
            return p.pw_uid, p.pw_gid
        except KeyError:
            pass
    return None


def unavailable_reason():
    if not _bin_dir():
        return "postgresql is not installed (/usr/lib/postgresql/*/bin/initdb; scripts/install-deps --test installs it)"
    if not _psql():
        return "psql is not installed (Debian package postgresql-client; scripts/install-deps --test)"
    if not _run_as():
        return "no unprivileged user to run postgres as (it refuses root)"
    return None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


class PgServer:
    def __init__(self, password=PASSWORD):
        self.password = password
        self.bin = _bin_dir()
        self.uid, self.gid = _run_as()
        self.dir = None
        self.port = None
        self.proc = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def _as_user(self):
        uid, gid = self.uid, self.gid

        def drop():
            _die_with_parent()
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
        return drop

    def start(self, timeout=60):
        # under /tmp itself: pytest's own temporary directories are root's alone (0700)
        self.dir = tempfile.mkdtemp(prefix="rt-pg-")
        os.chmod(self.dir, 0o755)
        os.chown(self.dir, self.uid, self.gid)
        self.data = os.path.join(self.dir, "data")
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(self.password + "\n")
        os.chown(pwfile, self.uid, self.gid)
        r = subprocess.run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", USER, "--pwfile", pwfile,
                            "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"],
                           preexec_fn=self._as_user(), capture_output=True, text=True, timeout=timeout,
                           cwd=self.dir)
        os.unlink(pwfile)
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed: {r.stderr[-2000:]}")
        self.port = free_port()
        self.log = os.path.join(self.dir, "postgres.log")
        self._spawn()
        self.passfile = os.path.join(self.dir, "pgpass-root")
        with open(self.passfile, "w") as f:
            f.write(f"127.0.0.1:{self.port}:*:{USER}:{self.password}\n")
        os.chmod(self.passfile, 0o600)
        deadline = time.monotonic() + timeout
        while True:
            r = self.psql("SELECT 1", check=False)
            if r.returncode == 0:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"postgres did not start: {r.stderr[-500:]}")
            time.sleep(0.1)

    def _spawn(self):
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [os.path.join(self.bin, "postgres"), "-D", self.data, "-p", str(self.port), "-k", self.dir,
                 "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200",
                 "-c", "shared_buffers=32MB", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=self._as_user(),
                start_new_session=True, cwd=self.dir)

    def restart(self, timeout=60):
        """Starts the server again on its port after stop_server()."""
        self._spawn()
        deadline = time.monotonic() + timeout
        while self.psql("SELECT 1", check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("postgres did not start again")
            time.sleep(0.1)

    def stop_server(self, timeout=30):
        """Stops the server by its PID (fast shutdown, SIGKILL when it lingers); the data stay."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def stop(self):
        self.stop_server()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def env(self, **extra):
        """libpq's environment that finds the password (PGPASSFILE) and no other server."""
        e = {"PGPASSFILE": self.passfile}
        e.update(extra)
        return e

    def url(self, db="postgres", password=None):
        who = f"{USER}:{password}" if password else USER
        return f"postgresql://{who}@127.0.0.1:{self.port}/{db}"

    def psql(self, sql, db="postgres", check=True, timeout=60):
        env = dict(os.environ, PGPASSWORD=self.password, PGCONNECT_TIMEOUT="5")
        env.pop("PGPASSFILE", None)
        r = subprocess.run([_psql(), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p",
                            str(self.port), "-U", USER, "-d", db, "-c", sql],
                           env=env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {r.stderr.strip()}")
        return r

    def sql(self, sql, db="postgres"):
        """The rows of sql as lists of text."""
        out = self.psql(sql, db=db).stdout
        return [line.split("|") for line in out.splitlines() if line]

    def create_db(self, name, tablespace=None):
        self.psql(f"CREATE DATABASE {name}" + (f" TABLESPACE {tablespace}" if tablespace else ""))

    def hold(self, sql, db="postgres"):
        """A session that runs sql (a lock, say) and holds it until its process is killed: the
        Popen, its statement begun once its first line came back."""
        env = dict(os.environ, PGPASSWORD=self.password)
        env.pop("PGPASSFILE", None)
        p = subprocess.Popen([_psql(), "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(self.port), "-U", USER,
                              "-d", db], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        p.stdin.write(f"BEGIN;\n{sql};\nSELECT 'held';\nSELECT pg_sleep(600) AS rt_hold;\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if line.strip() != "held":
            p.kill()
            raise RuntimeError(f"the hold did not begin: {line!r} {p.stderr.read()[-500:]}")
        return p

    def release(self, holder):
        """Ends a hold(): its server process terminated (a client killed alone leaves the server
        sleeping with the lock), then its psql."""
        self.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600) AS rt_hold%' "
                  "AND pid <> pg_backend_pid()")
        holder.kill()
        holder.wait()
