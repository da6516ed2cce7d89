"""resource_tracker.history: a run history (SQLite, and a real PostgreSQL the test starts through
tests/e2e/pg_server.py) read back by the C library (rt_history_runs) gives the tool's answers:
history.runs the runs `recommend --job` answers from, newest first, each as `summary --json`'s
dict with who ran it; history.recommend the "recommendation" of `recommend --job NAME --json`,
key for key (with --any-command and --last too), and for a job of three nodes the tool's ask per
node; a missing history raises, naming why."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from resource_tracker import _native, history

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PY = sys.executable

# a second's busy loop, one with 80 MiB held, two busy threads, and a run of another command line
WORK = [
    "import time\nt=time.time()\nwhile time.time()-t<0.6: pass",
    "x=bytearray(80<<20)\nimport time\nt=time.time()\nwhile time.time()-t<0.5: x[0]=1",
    "import threading,time\ndef f():\n t=time.time()\n while time.time()-t<0.6: pass\n"
    "ts=[threading.Thread(target=f) for _ in range(2)]\n[t.start() for t in ts]\n[t.join() for t in ts]",
]


def tool():
    """The resource-tracker binary built beside the library (skips without one)."""
    lib = os.environ.get("RESOURCE_TRACKER_LIBRARY")
    exe = os.path.join(os.path.dirname(lib), "resource-tracker") if lib else None
    if not (exe and os.access(exe, os.X_OK)):
        pytest.skip("no resource-tracker binary beside the library")
    return exe


def env_of(tmp_path, extra=None):
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", TRACKER_KEEPER_URL="off",
               XDG_STATE_HOME=str(tmp_path / "state"), **(extra or {}))
    env.pop("SLURM_JOB_ID", None)
    return env


def fill(target, env):
    """Four runs of job "train" (the newest of another command line) and one of job "other"."""
    exe = tool()
    runs = [("train", WORK[0]), ("other", WORK[0]), ("train", WORK[1]), ("train", WORK[2]), ("train", "pass")]
    for job, code in runs:
        subprocess.run([exe, "-q", "-i", "0.2", "--job-name", job, "--history", target, "--", PY, "-c", code],
                       env=env, check=True, capture_output=True, timeout=120)


def cli_json(target, env, *args):
    r = subprocess.run([tool(), "recommend", "--job", "train", "--json", "--history", target, *args], env=env,
                       check=True, capture_output=True, timeout=120)
    return json.loads(r.stdout)


def check_answers(target, env, monkeypatch):
    for k, v in env.items():  # libpq finds the password where the tool does
        monkeypatch.setenv(k, v)
    runs = history.runs(target, job="train")
    assert len(runs) == 4
    assert [r["who"]["command"] is not None for r in runs] == [True] * 4
    assert json.loads(runs[0]["who"]["command"])[-1] == "pass"  # newest first
    assert all(r["duration_secs"] > 0 for r in runs)
    assert len(history.runs(target)) == 5 and len(history.runs(target, job="train", last=2)) == 2
    assert history.runs(target, job="nope") == []
    for args, kw in (((), {}), (("--any-command",), {"any_command": True}),
                     (("--any-command", "--last", "2"), {"any_command": True, "last": 2})):
        want = cli_json(target, env, *args)
        got = history.recommend("train", target, **kw)
        assert got["runs"] == want["runs"], args
        for key, value in got.items():
            if key != "runs":
                assert want["recommendation"][key] == value, (args, key)
    assert history.recommend("train", target, any_command=True)["runs"] == 4
    with pytest.raises(LookupError):
        history.recommend("nope", target)


def test_sqlite_history_answers_as_the_tool(tmp_path, monkeypatch):
    env = env_of(tmp_path)
    db = str(tmp_path / "h.db")
    fill(db, env)
    check_answers(db, env, monkeypatch)


def test_missing_history_raises(tmp_path):
    with pytest.raises(_native.NativeError, match="no such file"):
        history.runs(str(tmp_path / "missing.db"))
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    with pytest.raises(_native.NativeError):
        history.runs(str(junk))
    with pytest.raises(ValueError):
        history.runs(str(junk), last=0)


def _pg_server():
    """tests/e2e/pg_server.py, imported by path."""
    spec = importlib.util.spec_from_file_location("pg_server", os.path.join(REPO, "tests", "e2e", "pg_server.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_postgresql_history_answers_as_the_tool(tmp_path, monkeypatch):
    pg_server = _pg_server()
    why = pg_server.unavailable_reason()
    if why:
        pytest.skip(why)
    with pg_server.PgServer() as pg:
        pg.create_db("pyhist")
        url = pg.url("pyhist")
        env = env_of(tmp_path, pg.env())
        fill(url, env)
        check_answers(url, env, monkeypatch)
        pg.create_db("pyjob")
        check_three_nodes(pg.url("pyjob"), env, monkeypatch)
        # a wrong password: the library's reason, never the password
        monkeypatch.delenv("PGPASSFILE")
        with pytest.raises(_native.NativeError) as e:
            history.runs(pg.url("pyhist", password="wrong-secret"))
        assert "wrong-secret" not in str(e.value)


def check_three_nodes(target, env, monkeypatch):
    """A SLURM job of three nodes, run twice (6 runs, past the tool's default --last of 5), each
    node's tracker writing the history at target, after an older run of no job: history.recommend
    gives `recommend --job NAME --json`'s answer, key for key but the server lookup's, without
    --last, with --last 8 (the older run said left out, as the tool says it) and --last 2."""
    exe = tool()
    for k, v in env.items():  # libpq finds the password where the tool does
        monkeypatch.setenv(k, v)

    def track(extra):
        subprocess.run([exe, "-q", "-i", "0.2", "--job-name", "train", "--history", target, "--", PY, "-c", WORK[0]],
                       env=dict(env, **extra), check=True, capture_output=True, timeout=120)

    track({})
    for step in ("0", "1"):
        for i in range(3):
            track(dict(SLURM_JOB_ID="812", SLURM_STEP_ID=step, SLURMD_NODENAME=f"node{i}", SLURM_PROCID=str(i),
                       SLURM_LOCALID="0", SLURM_NTASKS="3", SLURM_JOB_NUM_NODES="3", SLURM_NODEID=str(i)))
    for args, kw in (((), {}), (("--last", "8"), {"last": 8}), (("--last", "2"), {"last": 2})):
        r = subprocess.run([exe, "recommend", "--job", "train", "--json", "--no-price-lookup", "--history", target,
                            *args], env=env, check=True, capture_output=True, timeout=120)
        want = json.loads(r.stdout)
        got = history.recommend("train", target, **kw)
        for key in ("cheapest_per_node", "server_lookup_error", "note"):
            want.pop(key)
        assert got == want, args
    assert got["based_on"]["runs"] == 2 and got["view"]["run_count"] == 2
    got = history.recommend("train", target)
    assert (got["job_id"], got["nodes"], got["based_on"]["runs"], got["based_on"]["hosts"]) == ("812", 3, 6, 3)
    got = history.recommend("train", target, last=8)
    assert got["based_on"]["left_out"] == 1 and set(got["schedulers"]) == {"metaflow", "kubernetes", "slurm"}
    assert got["schedulers"]["slurm"].startswith("--nodes=3 ")


def test_job_of_three_nodes_answers_as_the_tool(tmp_path, monkeypatch):
    check_three_nodes(str(tmp_path / "h.db"), env_of(tmp_path), monkeypatch)
