"""--per-node (issue 52): one tracker a node where several tasks of a job share it. The task of
local rank 0 (SLURM_LOCALID, LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK) tracks its own command and
the node's other tasks, the other children of its parent (slurmstepd), each to its end, and
writes the node's one file; a task of a higher local rank runs its command in the tracker's
place (the same pid, its own exit status), untracked and silent. Here on this machine: a small
parent stands in for slurmstepd (a launcher's environment faked), reaping its children at once
or in order (a task ended while the node's tracker waits is a zombie then); and on the real
SLURM of slurm_cluster.py, a job of 2 nodes x 2 tasks. Each node's tracked CPU is held to the
sum of its tasks' own (getrusage of each, within 2%, plus 0.03 s a task: the task reads its own
figures in whole 10 ms ticks, truncated, and its exit, after them, frees its memory), its memory
need to at least its largest task's peak RSS, and summary's job view has one run a node. Bad
input (--per-node=VALUE, a config value that is no boolean, TRACKER_PER_NODE=maybe, no
command) exits 2 naming it; no local rank to go by is one warning."""
import json
import os
import subprocess
import sys

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env
# a task: secs CPU seconds of busy loop over mib MiB touched, its own getrusage to a file, then exit
from test_jobs import WORK

PY = "/usr/bin/python3"

# slurmstepd's stand-in: starts a tracker per task (local rank i, the task's own work), the later
# ones `late` seconds apart, and reaps them at once as they end ("prompt", as slurmstepd does)
# or in the order started ("in-order": a task that ended first stays a zombie meanwhile); prints
# [[pid, exit status], ...]
PARENT = r"""
import json, os, subprocess, sys, time
spec = json.loads(sys.argv[1])
procs = []
for i, t in enumerate(spec["tasks"]):
    env = dict(os.environ, SLURM_PROCID=str(i), SLURM_LOCALID=str(i))
    procs.append(subprocess.Popen(t["argv"], env=env))
    time.sleep(spec["late"])
status = {}
if spec["reap"] == "prompt":
    while len(status) < len(procs):
        pid, st = os.wait()
        status[pid] = os.waitstatus_to_exitcode(st)
else:
    for p in procs:
        status[p.pid] = p.wait()
print(json.dumps([[p.pid, status[p.pid]] for p in procs]))
"""

# the slack of a node's CPU against its tasks' own, per task (see the top)
SLACK_PER_TASK = 0.03


def env_of(**extra):
    """The tracker's environment with no launcher's variables but those given, and no SLURM
    client on the PATH (no time limit asked)."""
    env = tracker_env(PATH="/nonexistent")
    for k in list(env):
        if k.startswith(("SLURM_", "OMPI_", "PMI", "TORCHELASTIC_", "MPI_", "PALS_")) or k in (
                "RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK", "JOB_COMPLETION_INDEX"):
            del env[k]
    env.update(extra)
    return env


def own(path):
    cpu, rss = path.read_text().split()
    return float(cpu), int(rss) / 1024


def last_line(path):
    with open(path) as f:
        return json.loads(f.read().splitlines()[-1])


def summary_json(*paths):
    r = subprocess.run([TRACKER, "summary", "--json"] + [str(p) for p in paths], capture_output=True, text=True,
                       env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def assert_node_cpu(tracked, tasks, what):
    """tracked (a node's CPU seconds) against its tasks' own [(cpu, rss_mib)]: within 2% plus the
    slack per task."""
    total = sum(cpu for cpu, _ in tasks)
    assert abs(tracked - total) <= 0.02 * total + SLACK_PER_TASK * len(tasks), (what, tracked, total, tasks)


def test_higher_local_rank_runs_the_command_in_place(tmp_path):
    """Local rank 1: the command replaces the tracker (the pid Popen got is the one the command
    reports), its exit status is the tool's, nothing is written and nothing said."""
    d = tmp_path / "runs"
    d.mkdir()
    env = env_of(SLURM_JOB_ID="501", SLURMD_NODENAME="n1", SLURM_PROCID="3", SLURM_LOCALID="1")
    p = subprocess.Popen([TRACKER, "--per-node", "--summary", "-o", f"{d}/", "--", "/bin/sh", "-c",
                          'echo "$$"; echo "$SLURM_LOCALID"; exit 7'], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=30 * TIMEOUT_SCALE)
    assert p.returncode == 7, err
    assert out.split() == [str(p.pid), "1"], out
    assert err == "", err
    assert os.listdir(d) == []
    # a command that cannot be run: said, 127, still nothing written
    r = subprocess.run([TRACKER, "--per-node", "-o", f"{d}/", "--", "/nonexistent/cmd"], env=env,
                       capture_output=True, text=True, timeout=30 * TIMEOUT_SCALE)
    assert r.returncode == 127 and "cannot run '/nonexistent/cmd'" in r.stderr, r
    assert os.listdir(d) == []
    # torchrun's and Open MPI's local ranks say it too
    for extra in ({"TORCHELASTIC_RUN_ID": "t1", "RANK": "5", "LOCAL_RANK": "2"},
                  {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "PMIX_NAMESPACE": "ns"}):
        r = subprocess.run([TRACKER, "--per-node", "-o", f"{d}/", "--", "/bin/sh", "-c", "exit 3"], env=env_of(**extra),
                           capture_output=True, text=True, timeout=30 * TIMEOUT_SCALE)
        assert (r.returncode, r.stderr, os.listdir(d)) == (3, "", []), (extra, r)


@pytest.mark.parametrize("reap", ["prompt", "in-order"])
def test_local_rank_zero_tracks_the_node(tmp_path, reap):
    """A parent (slurmstepd's stand-in) with three tasks, each through `resource-tracker
    --per-node`: local rank 0's tracker counts its own task and the two others (the last one
    started 0.3 s later, found at a later sample), each to its end (the others run longer than
    its own: it samples on until they ended), whether the parent reaped them at once (their time
    then in its counters) or not yet (zombies); the one file is the node's, rank 0's."""
    d = tmp_path / "runs"
    d.mkdir()
    work = [(0.3, 20), (1.0, 60), (0.8, 40)]
    tasks = [{"argv": [TRACKER, "--per-node", "-q", "-i", "0.2", "-o", f"{d}/", "--", PY, "-c", WORK, str(secs),
                       str(mib), str(tmp_path / f"ru{i}")]} for i, (secs, mib) in enumerate(work)]
    env = env_of(SLURM_JOB_ID="502", SLURM_STEP_ID="0", SLURMD_NODENAME="n1", SLURM_NTASKS="3",
                 SLURM_JOB_NUM_NODES="1", SLURM_NODEID="0")
    r = subprocess.run([PY, "-c", PARENT, json.dumps({"tasks": tasks, "late": 0.15, "reap": reap})], env=env,
                       capture_output=True, text=True, timeout=120 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    assert [st for _, st in json.loads(r.stdout)] == [0, 0, 0], (r.stdout, r.stderr)
    assert r.stderr == "", r.stderr  # -q: not a word, nor from the others
    assert os.listdir(d) == ["502.n1.r0.jsonl"]
    kernel = [own(tmp_path / f"ru{i}") for i in range(len(work))]
    line = last_line(d / "502.n1.r0.jsonl")
    assert line["member"]["rank"] == 0 and line["member"]["local_rank"] == 0, line["member"]
    assert line["member"]["per_node"] is True  # the node's run says so
    assert_node_cpu(line["process"]["cpu_secs_total"], kernel, reap)
    s = summary_json(d / "502.n1.r0.jsonl")
    assert s["memory_need"]["need_mib"] >= max(rss for _, rss in kernel), (s["memory_need"], kernel)
    print(f"{reap}: tracked {line['process']['cpu_secs_total']} CPU s, tasks' own {kernel}, "
          f"need {s['memory_need']['need_mib']} MiB")


def test_no_local_rank_is_one_warning(tmp_path):
    """--per-node with no launcher's local rank: one warning, and the task's own command is
    tracked as without it."""
    d = tmp_path / "runs"
    d.mkdir()
    r = subprocess.run([TRACKER, "--per-node", "-q", "-o", f"{d}/", "--", "/bin/sh", "-c", "exit 4"], env=env_of(),
                       capture_output=True, text=True, timeout=30 * TIMEOUT_SCALE)
    assert r.returncode == 4, r.stderr
    assert r.stderr.count("warning") == 1 and "--per-node: no local rank to go by" in r.stderr, r.stderr
    assert len(os.listdir(d)) == 1
    # TRACKER_PER_NODE=1 and [job] per_node = true ask the same
    r = subprocess.run([TRACKER, "-q", "--", "/bin/true"], env=env_of(TRACKER_PER_NODE="1"), capture_output=True,
                       text=True, timeout=30 * TIMEOUT_SCALE)
    assert r.returncode == 0 and "--per-node: no local rank" in r.stderr, r.stderr
    conf = tmp_path / "rt.toml"
    conf.write_text("[job]\nper_node = true\n")
    r = subprocess.run([TRACKER, "-c", str(conf), "-q", "--", "/bin/true"], env=env_of(), capture_output=True, text=True,
                       timeout=30 * TIMEOUT_SCALE)
    assert r.returncode == 0 and "--per-node: no local rank" in r.stderr, r.stderr


def test_bad_input_exits_2(tmp_path):
    def run(args, env=None):
        return subprocess.run([TRACKER] + args, env=env or env_of(), capture_output=True, text=True,
                              timeout=30 * TIMEOUT_SCALE)

    r = run(["--per-node=yes", "--", "/bin/true"])
    assert r.returncode == 2 and "'--per-node' takes no value" in r.stderr, r.stderr
    r = run(["--per-node"])
    assert r.returncode == 2 and "--per-node needs a command to run" in r.stderr, r.stderr
    r = run(["-q", "--", "/bin/true"], env=env_of(TRACKER_PER_NODE="maybe"))
    assert r.returncode == 2 and "TRACKER_PER_NODE" in r.stderr, r.stderr
    conf = tmp_path / "rt.toml"
    conf.write_text('[job]\njob_id = "x"\nper_node = "yes"\n')
    r = run(["-c", str(conf), "-q", "--", "/bin/true"])
    assert r.returncode == 2 and f"{conf}:3:1: [job] per_node must be true or false" in r.stderr, r.stderr
    r = run(["--help"])
    assert r.returncode == 0 and "--per-node" in r.stdout


# ---- the real SLURM -------------------------------------------------------------------------------

# the task's work: (rank + 1) x 0.5 CPU seconds over (rank + 1) x 20 MiB; its own figures to
# $OUT/ru.NODE.RANK
SLURM_WORK = r"""
import os, resource, time
i = int(os.environ["SLURM_PROCID"])
buf = bytearray((i + 1) * 20 << 20)
for k in range(0, len(buf), 4096):
    buf[k] = 1
end = time.process_time() + (i + 1) * 0.5
while time.process_time() < end:
    pass
ru = resource.getrusage(resource.RUSAGE_SELF)
with open(os.path.join(os.environ["OUT"], f"ru.{os.environ['SLURMD_NODENAME']}.{i}"), "w") as f:
    f.write(f"{ru.ru_utime + ru.ru_stime} {ru.ru_maxrss}\n")
os._exit(0)
"""

SLURM_SCRIPT = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=1
mkdir -p runs/$SLURM_JOB_ID
srun {tracker} --per-node -q -o runs/$SLURM_JOB_ID/ -- {py} {work}
{tracker} summary runs/$SLURM_JOB_ID
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """slurm_cluster's cluster with accounting, imported only here: the tests above need none."""
    from slurm_cluster import SlurmCluster, unavailable_reason
    reason = unavailable_reason(accounting=True)
    if reason:
        pytest.skip(reason)
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"), nodes=2, accounting=True)
    c.start()
    yield c
    c.stop()


def test_slurm_two_nodes_two_tasks_each(cluster, tmp_path):
    from test_slurm_cluster import seconds
    (tmp_path / "work.py").write_text(SLURM_WORK)
    script = SLURM_SCRIPT.format(tracker=TRACKER, py=PY, work=tmp_path / "work.py")
    job = cluster.sbatch(script, f"--chdir={tmp_path}", f"--output={tmp_path}/job.out", env={"OUT": str(tmp_path)})
    result = cluster.wait(job, timeout=120 * TIMEOUT_SCALE)
    log = (tmp_path / "job.out").read_text()
    assert (result.state, result.exit_code) == ("COMPLETED", 0), log
    runs = tmp_path / "runs" / str(job)
    # one file a node, named by the rank of its local rank 0 (block distribution: 0 and 2)
    assert sorted(os.listdir(runs)) == [f"{job}.rtnode1.r0.jsonl", f"{job}.rtnode2.r2.jsonl"], os.listdir(runs)
    text = " ".join(line.strip() for line in log.splitlines())
    assert f"{job} (slurm step 0): 2 nodes, 2 runs (a run a node: --per-node)" in text, log
    assert "ranks missing" not in text, log  # a node's run stands for its two tasks
    v = summary_json(runs)
    assert (v["job_id"], v["node_count"], len(v["runs"]), v["per_node"]) == (str(job), 2, 2, True), v
    assert (v["ranks_said"], v["ranks_seen"]) == (4, 4), v
    # the ask per node is for the node's two tasks, each its share of the node's cores
    ask = v["ask"]
    assert ask["tasks_per_node"] == 2 and ask["slurm"].startswith("--nodes=2 --ntasks-per-node=2 "), ask
    most = max(n["ask_cores"] for n in v["nodes"])
    assert ask["cores_per_task"] == -(-most // 2), (ask, v["nodes"])
    report = []
    for n, ranks in zip(v["nodes"], ((0, 1), (2, 3))):
        assert (n["runs"], n["tasks"]) == (1, 2), n
        tasks = [own(tmp_path / f"ru.{n['node']}.{r}") for r in ranks]
        assert_node_cpu(n["cpu_secs"], tasks, n["node"])
        assert n["memory_need_mib"] >= max(rss for _, rss in tasks), (n, tasks)
        report.append(f"{n['node']}: {n['cpu_secs']} CPU s (tasks' own {[c for c, _ in tasks]}), "
                      f"need {n['memory_need_mib']} MiB (tasks' peaks {[round(m, 1) for _, m in tasks]})")
    # SLURM's own count of the step: the tasks (with the untracked ones' moment as trackers before
    # their exec) and the two node trackers' own CPU, which the files leave out
    rows = cluster.sacct(job, ("JobID", "State", "NodeList", "NTasks", "TotalCPU"), steps=1,
                         timeout=30 * TIMEOUT_SCALE)
    step = {row["JobID"]: row for row in rows}[f"{job}.0"]
    assert step["NTasks"] == "4", rows
    total = seconds(step["TotalCPU"])
    assert v["cpu_secs"] <= total + 0.02 and total - v["cpu_secs"] <= 0.5 * TIMEOUT_SCALE, (v["cpu_secs"], rows)
    print(log)
    print("; ".join(report) + f"; sacct TotalCPU {total}")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
