"""One history for a team (issue 69's end): a job of three nodes on a real SLURM cluster
(slurm_cluster.py: each node its own host, in its own network and UTS namespaces) runs its work
twice, as two srun steps, and every node's tracker writes its run into one PostgreSQL history, a
real server the test starts (pg_server.py), reached through its Unix socket (the nodes' network
namespaces have no route to the machine's loopback; the file system is the machine's) with the
password from a ~/.pgpass-style file (PGPASSFILE), never the URL. `recommend --job` from that
history gives the same answer as the job view of the six files the same runs wrote (the ask per
node, the node that sizes the memory, each scheduler's words, every node's ask and figures), and says it
is based on 6 runs on 3 hosts by 1 user; `history` lists each run once, from its own host.
Skipped, saying why, where SLURM or PostgreSQL cannot be started here."""
import json
import os
import subprocess

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env
import pg_server

PY = "/usr/bin/python3"

# the task's work: (node number) x 0.4 CPU seconds over (node number) x 24 MiB, so that the nodes
# differ and the last one sizes the memory
WORK = r"""
import os, time
n = int(os.environ["SLURMD_NODENAME"][len("rtnode"):])
buf = bytearray(n * 24 << 20)
for k in range(0, len(buf), 4096):
    buf[k] = 1
end = time.process_time() + n * 0.4
while time.process_time() < end:
    pass
"""

# two steps of the same work, one tracker a node each, every one writing the one history and a
# file of its own (a folder a step: the tool names a node's file by the job, node and rank)
SCRIPT = """#!/bin/bash
#SBATCH --nodes=3
#SBATCH --ntasks-per-node=1
for step in 0 1; do
    mkdir -p runs/$SLURM_JOB_ID/s$step
    srun {tracker} -q -i 0.1 --history "$RT_HISTORY_URL" --job-name train -o runs/$SLURM_JOB_ID/s$step/ \\
        -- {py} {work}
done
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from slurm_cluster import SlurmCluster, unavailable_reason
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"), nodes=3)
    c.start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def pg():
    why = pg_server.unavailable_reason()
    if why:
        pytest.skip(why)
    with pg_server.PgServer() as server:
        yield server


def run_tool(*args, env):
    r = subprocess.run([TRACKER, *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=120 * TIMEOUT_SCALE)
    assert r.returncode == 0, (args, r.stderr)
    return r


def test_three_nodes_twice_one_postgresql_history(cluster, pg, tmp_path):
    pg.create_db("team")
    # the password line for the server's socket (libpq matches a socket outside its default
    # directory by the directory's path), root's alone
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"{pg.dir}:{pg.port}:team:{pg_server.USER}:{pg.password}\n")
    os.chmod(passfile, 0o600)
    url = f"postgresql://{pg_server.USER}@/team?host={pg.dir}&port={pg.port}"
    (tmp_path / "work.py").write_text(WORK)
    script = SCRIPT.format(tracker=TRACKER, py=PY, work=tmp_path / "work.py")
    job = cluster.sbatch(script, f"--chdir={tmp_path}", f"--output={tmp_path}/job.out",
                         env={"RT_HISTORY_URL": url, "PGPASSFILE": str(passfile), "TRACKER_CLOUD_DISCOVERY": "0",
                              "XDG_STATE_HOME": str(tmp_path / "state")})
    result = cluster.wait(job, timeout=180 * TIMEOUT_SCALE)
    log = (tmp_path / "job.out").read_text()
    assert (result.state, result.exit_code) == ("COMPLETED", 0), log
    assert "warning" not in log and "kept" not in log, log  # every row written, none kept for later
    runs = tmp_path / "runs" / str(job)
    files = sorted(p for step in ("s0", "s1") for p in (runs / step).iterdir())
    assert len(files) == 6, files

    env = tracker_env(PGPASSFILE=str(passfile))
    # each run once, from its own host
    rows = [json.loads(line) for line in run_tool("history", "--json", "--history", url, env=env).stdout.splitlines()]
    assert len(rows) == 6 and len({r["run_uuid"] for r in rows}) == 6, rows
    assert sorted(r["host_hostname"] for r in rows) == sorted(["rtnode1", "rtnode2", "rtnode3"] * 2), rows
    assert {(r["node"], r["job_id"], r["user_uid"]) for r in rows} == {(f"rtnode{i}", str(job), os.getuid())
                                                                        for i in (1, 2, 3)}, rows
    # the filters, on the server: a node's two runs, this user's six, the last hour's six
    for args, want in ((["--host", "rtnode2"], 2), (["--user", rows[0]["user_name"]], 6), (["--since", "1h"], 6),
                       (["--host", "rtnode3", "--since", "1h", "--job", "train"], 2)):
        got = run_tool("history", "--json", "--history", url, *args, env=env).stdout.splitlines()
        assert len(got) == want, (args, got)

    r = run_tool("recommend", "--json", "--no-price-lookup", "--job", "train", "--history", url, env=env)
    assert r.stderr == "", r.stderr
    rec = json.loads(r.stdout)
    view = json.loads(run_tool("recommend", "--json", "--no-price-lookup", *files, env=env).stdout)
    assert rec["based_on"] == {"runs": 6, "hosts": 3, "users": 1, "runs_without_user": 0, "left_out": 0,
                               "left_out_why": None}, rec["based_on"]
    assert (rec["job_id"], rec["nodes"], rec["view"]["run_count"]) == (str(job), 3, 6), rec
    for key in ("nodes", "tasks_per_node", "cpu_per_task", "memory_mib_per_node", "memory_sized_by"):
        assert rec[key] == view[key], (key, rec[key], view[key])
    assert rec["memory_sized_by"] == "rtnode3"
    assert rec["schedulers"] == view["schedulers"], (rec["schedulers"], view["schedulers"])
    # every node's ask and figures as its files have them (a run's own figures round-trip the
    # history's columns to the printed decimals; its start is the tool's, its file's first sample)
    for h, f in zip(rec["view"]["nodes"], view["view"]["nodes"]):
        for key in ("node", "runs", "tasks", "ask_cores", "ask_memory_mib", "ask_gpus", "straggler", "idled"):
            assert h[key] == f[key], (key, h, f)
        for key in ("cpu_secs", "memory_need_mib"):  # sums of two runs' figures, each to 3 decimals
            assert h[key] == pytest.approx(f[key], abs=0.002), (key, h, f)
    text = run_tool("recommend", "--no-price-lookup", "--job", "train", "--history", url, env=env).stdout
    assert "based on 6 runs on 3 hosts by 1 user" in text, text
    print(text)
