"""The SLURM cluster harness (slurm_cluster.py) itself, on one real 3-node cluster with
accounting: a `sbatch --nodes=3` job's srun runs one task on each node, in that node's
namespaces (its hostname, SLURMD_NODENAME, node and task ranks, the usual SLURM_* variables);
srun from the test runs the repo's build on the three nodes; nodes doing different amounts of
CPU work finish COMPLETED, and sacct reports each step's nodes and the CPU time done there; stop()
ends a running job with the daemons and leaves no process, namespace, veth or bridge behind.

CPU work is counted in CPU seconds (time.process_time), not wall clock, so the figures hold on a
loaded machine: the file is not serial. Skips (with the reason) where the cluster cannot start:
not root, no SLURM, munge or MariaDB, a kernel without network namespaces."""
import os
import re
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER
from slurm_cluster import alive, cluster, ns_id  # noqa: F401 (cluster: the module's fixture)

# CPU seconds each node works in test_uneven_work's steps: rtnodeN works N * WORK_UNIT
WORK_UNIT = 0.3
# CPU seconds a task may spend above its work: python's start (a few hundredths)
STARTUP_CPU = 0.25
# a task's work: WORK_UNIT CPU seconds times its node's number, then its hostname and the CPU
# time it took to $OUT/STEP.NODE
BUSY = f"""import os, time
e = os.environ
node = e["SLURMD_NODENAME"]
while time.process_time() < {WORK_UNIT} * int(node[len("rtnode"):]):
    pass
with open(f"{{e['OUT']}}/{{e['SLURM_STEP_ID']}}.{{node}}", "w") as f:
    f.write(f"{{os.uname().nodename}} {{time.process_time()}}")
"""


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        return f"({e})"


def seconds(text):
    """sacct's [D-][HH:]MM:SS[.mmm] as seconds."""
    days, _, rest = text.rpartition("-")
    parts = [float(x) for x in rest.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    return int(days or 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def test_three_nodes_are_three_hosts(cluster, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    job = cluster.sbatch(
        "#!/bin/sh\n"
        "srun --ntasks-per-node=1 sh -c 'echo $(hostname) $SLURMD_NODENAME $SLURM_NODEID $SLURM_PROCID"
        " > $OUT/$SLURMD_NODENAME.txt; env > $OUT/$SLURMD_NODENAME.env'\n",
        "--nodes=3", f"--output={tmp_path}/job.out", env={"OUT": str(out)})
    result = cluster.wait(job, timeout=60 * TIMEOUT_SCALE)
    assert (result.state, result.exit_code) == ("COMPLETED", 0), read(tmp_path / "job.out")
    assert sorted(p.name for p in out.glob("*.txt")) == [f"{n}.txt" for n in cluster.node_names]
    for rank, node in enumerate(cluster.node_names):
        # the node's own hostname (its UTS namespace), its name, node and task rank
        assert (out / f"{node}.txt").read_text().split() == [node, node, str(rank), str(rank)]
        env = dict(line.split("=", 1) for line in (out / f"{node}.env").read_text().splitlines() if "=" in line)
        assert env["SLURM_JOB_ID"] == str(job)
        assert env["SLURM_STEP_ID"] == "0"
        assert env["SLURM_JOB_NUM_NODES"] == env["SLURM_NNODES"] == "3"
        assert env["SLURM_NTASKS"] == "3"
        assert env["SLURM_JOB_NODELIST"] == "rtnode[1-3]"
        assert env["SLURM_CLUSTER_NAME"] == f"rt{cluster.token}"
        assert env["SLURM_JOB_PARTITION"] == "rt"
        assert env["OUT"] == str(out)  # the test's environment travels with the job
    # and each node is a host of its own: a network namespace each, none the test's
    spaces = [cluster.namespaces()[n] for n in cluster.node_names]
    assert len(set(spaces)) == 3 and ns_id("self") not in spaces


def test_srun_runs_the_build_on_every_node(cluster):
    if not os.access(TRACKER, os.X_OK):
        pytest.skip(f"no build at {TRACKER}")
    r = cluster.run("srun", "--nodes=3", "--ntasks-per-node=1", "--label", TRACKER, "--version",
                    timeout=60 * TIMEOUT_SCALE)
    lines = sorted(r.stdout.splitlines())
    assert len(lines) == 3, r
    for rank, line in enumerate(lines):
        assert re.fullmatch(rf"{rank}: resource-tracker \S+", line), r


@pytest.fixture(scope="module")
def uneven_job(cluster, tmp_path_factory):
    """A 3-node job whose nodes do different amounts of CPU work: step 0 runs a task on each
    node, steps 1 to 3 one node each (at once); rtnodeN works N * WORK_UNIT CPU seconds in each."""
    tmp = tmp_path_factory.mktemp("uneven")
    out = tmp / "out"
    out.mkdir()
    busy = f"/usr/bin/python3 {tmp}/busy.py"
    (tmp / "busy.py").write_text(BUSY)
    job = cluster.sbatch(
        "#!/bin/sh\n"
        f"srun --ntasks-per-node=1 {busy} || exit 1\n"
        f"for n in 1 2 3; do srun --nodes=1 --ntasks=1 --nodelist=rtnode$n {busy} & done\n"
        "wait\n",
        "--nodes=3", "--ntasks-per-node=1", f"--output={tmp}/job.out", env={"OUT": str(out)})
    return job, cluster.wait(job, timeout=90 * TIMEOUT_SCALE), out, tmp / "job.out"


def test_uneven_work(uneven_job):
    job, result, out, log = uneven_job
    assert (result.state, result.exit_code) == ("COMPLETED", 0), read(log)
    # step 0 ran a task on each node; steps 1 to 3 (numbered in the order the loop's sruns
    # started) one node each
    names = sorted(p.name for p in out.iterdir())
    assert [n for n in names if n.startswith("0.")] == ["0.rtnode1", "0.rtnode2", "0.rtnode3"], names
    others = [n.split(".") for n in names if not n.startswith("0.")]
    assert sorted(step for step, _ in others) == ["1", "2", "3"], names
    assert sorted(node for _, node in others) == ["rtnode1", "rtnode2", "rtnode3"], names
    # each ran on its node (its hostname) and did its share
    for name in names:
        node = name.split(".")[1]
        host, cpu = (out / name).read_text().split()
        assert host == node
        assert float(cpu) >= WORK_UNIT * int(node[len("rtnode"):])


def test_sacct_reports_each_step_and_its_cpu_time(cluster, uneven_job):
    job, result, out, log = uneven_job
    assert result.state == "COMPLETED", read(log)
    rows = cluster.sacct(job, ("JobID", "State", "ExitCode", "NodeList", "NTasks", "TotalCPU"), steps=4,
                         timeout=30 * TIMEOUT_SCALE)
    by_id = {r["JobID"]: r for r in rows}
    assert by_id[str(job)]["NodeList"] == "rtnode[1-3]", rows
    assert by_id[f"{job}.batch"]["NodeList"] == "rtnode1", rows
    # step 0: a task on each node, N * WORK_UNIT CPU seconds on rtnodeN
    step0 = by_id[f"{job}.0"]
    assert (step0["State"], step0["ExitCode"], step0["NodeList"], step0["NTasks"]) == \
        ("COMPLETED", "0:0", "rtnode[1-3]", "3"), rows
    assert 6 * WORK_UNIT <= seconds(step0["TotalCPU"]) <= 6 * WORK_UNIT + 3 * STARTUP_CPU, rows
    # steps 1 to 3: one node each, the CPU time of that node's work
    nodes = set()
    for s in (1, 2, 3):
        step = by_id[f"{job}.{s}"]
        assert (step["State"], step["ExitCode"], step["NTasks"]) == ("COMPLETED", "0:0", "1"), rows
        work = WORK_UNIT * int(step["NodeList"][len("rtnode"):])
        assert work <= seconds(step["TotalCPU"]) <= work + STARTUP_CPU, rows
        nodes.add(step["NodeList"])
    assert nodes == set(cluster.node_names), rows


def start_ticks(pid):
    """A process's start time in clock ticks since boot, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def links():
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, timeout=10).stdout


def test_stop_leaves_nothing(cluster, tmp_path):
    """Last in the file: stops the module's cluster (the fixture's stop() then does nothing)."""
    job = cluster.sbatch("#!/bin/sh\nsrun --ntasks-per-node=1 sleep 300\n", "--nodes=3",
                         f"--output={tmp_path}/job.out")
    # until the step's three sleeps run (in the nodes' namespaces)
    deadline = time.monotonic() + 60 * TIMEOUT_SCALE
    while len([p for p in cluster.processes_in_namespaces() if read(f"/proc/{p}/comm").strip() == "sleep"]) < 3:
        assert time.monotonic() < deadline, (cluster.job_fields(job), read(tmp_path / "job.out"))
        time.sleep(0.1)
    # sstat reads the running step's figures from its slurmstepds
    r = cluster.run("sstat", "-a", "-P", "-n", "-j", f"{job}.0", "--format=JobID,NodeList,NTasks")
    assert r.stdout.split() == [f"{job}.0|rtnode[1-3]|3"], r
    # what must be gone: every daemon and every process in the namespaces (by PID and start
    # time: a PID may be reused), the links named after the cluster's token, its run directory
    procs = {pid: start_ticks(pid) for pid in list(cluster.pids().values()) + cluster.processes_in_namespaces()}
    assert len(procs) >= 3 + 3 + 3  # daemons, slurmstepds, sleeps
    spaces = set(cluster.namespaces().values())
    token, rundir, bridge = cluster.token, cluster.rundir, cluster.bridge
    assert f" {bridge}: " in links()
    before = time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK")

    cluster.stop()
    print(f"stopped in {cluster.stop_seconds:.2f} s")

    left = [pid for pid, ticks in procs.items() if alive(pid) and start_ticks(pid) == ticks]
    assert not left, [(pid, read(f"/proc/{pid}/cmdline")) for pid in left]
    # a namespace lives while a process is in it (the kernel may give a later namespace the same
    # inode: a process that started after stop() began is not ours)
    inside = [int(p) for p in os.listdir("/proc") if p.isdigit() and ns_id(p) in spaces
              and (start_ticks(p) or before + 1) <= before]
    assert not inside, [(pid, read(f"/proc/{pid}/cmdline")) for pid in inside]
    assert token not in links(), links()
    assert not os.path.exists(rundir)
    assert cluster.stop_seconds < 5
