"""docs/where.md's recipes for a job on several nodes other than sbatch's (issue 52: "Recipe:
torchrun, mpirun, a Kubernetes indexed Job"), on this machine, whose one host is every node.

mpirun: the recipe's line run as written (the build's tracker as `resource-tracker` on the PATH,
its `./simulate` a program of ours in the working directory, a temporary directory for
/shared/runs/), one tracker per rank under Debian's Open MPI 4, each rank doing its own known
amount of CPU work; then the recipe's `resource-tracker summary` of the directory. The job view
is one job of the ranks, each file naming its rank, each rank's CPU held to the rank's own
getrusage (2%). Without --job-id, Open MPI 4 names the job itself (PMIX_NAMESPACE). Skips
where mpirun is missing.

torchrun: the recipe's shape, two "nodes" on this host, each its own tracker (--node, since
they share the host name) around torchrun with the c10d rendezvous, train.py a gloo all_reduce
on the CPU; the job view is the two nodes, each held to its agent's own account of its tree
(the agent's os.times() at exit: itself and the workers it reaped). Skips where torch is not
installed (Debian's python3-torch).

A Kubernetes indexed Job cannot run here: its three pods' environment (JOB_COMPLETION_INDEX,
and POD_NAME, POD_JOB_NAME from the downward API) around trackers run at once gives one job of
three nodes, the pods, each held to its own getrusage."""
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import REPO, TIMEOUT_SCALE, TRACKER, tracker_env

PY = "/usr/bin/python3"
HOST = socket.gethostname()

# a rank's (a pod's) work: rank + 1 times STEP CPU seconds, the rank read from the variable named
# by the first argument; its getrusage (CPU seconds) and what the launcher told it to
# $OUT/ru.RANK, then it exits at once (no teardown after the figures)
STEP = 0.3
WORK = r"""#!/usr/bin/python3
import json, os, resource, sys, time
rank = int(os.environ[sys.argv[1] if len(sys.argv) > 1 else "OMPI_COMM_WORLD_RANK"])
end = time.process_time() + (rank + 1) * %r
while time.process_time() < end:
    sum(i * i for i in range(2000))
ru = resource.getrusage(resource.RUSAGE_SELF)
said = {k: v for k, v in os.environ.items() if k.startswith(("OMPI_COMM_WORLD_", "PMIX_NAMESPACE", "PMIX_RANK"))}
with open(os.path.join(os.environ["OUT"], "ru.%%d" %% rank), "w") as f:
    json.dump({"cpu": ru.ru_utime + ru.ru_stime, "env": said}, f)
os._exit(0)
""" % STEP


def recipe_block():
    """The sh block of docs/where.md's "Recipe: torchrun, mpirun, a Kubernetes indexed Job"."""
    with open(os.path.join(REPO, "docs", "where.md")) as f:
        text = f.read()
    part = text.split("### Recipe: torchrun, mpirun, a Kubernetes indexed Job", 1)[1]
    return re.search(r"```sh\n(.*?)```", part, re.S).group(1)


def recipe_line(word):
    """The recipe's command that starts with word (its continuation lines joined)."""
    block = recipe_block().replace("\\\n", " ")
    lines = [l.strip() for l in block.splitlines() if l.strip().startswith(word + " ")]
    assert len(lines) == 1, block
    return re.sub(r"\s+", " ", lines[0])


def tool_dir(tmp_path):
    """A directory holding `resource-tracker` (the build's), to put first on the PATH."""
    b = tmp_path / "bin"
    if not b.is_dir():
        b.mkdir()
        os.symlink(TRACKER, b / "resource-tracker")
    return str(b)


def job_view(d):
    r = subprocess.run([TRACKER, "summary", "--json", str(d)], capture_output=True, text=True, env=tracker_env(),
                       timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout[:2000]  # one object: one job
    return json.loads(lines[0])


def held_to(got, own, what):
    """got within 2% of own, and a tick or two of the kernel's clock (10 ms) either way."""
    assert got == pytest.approx(own, rel=0.02, abs=0.02), (what, got, own)


# ---------------------------------------------------------------------------------------------
# mpirun

needs_mpirun = pytest.mark.skipif(not shutil.which("mpirun"),
                                  reason="mpirun missing (Debian's openmpi-bin: scripts/install-deps --test)")


def mpi_env(tmp_path, out):
    """Where the recipe runs: our tracker first on the PATH; Open MPI told, by its variables and
    not the command line, that root may run it (a container's user) and that this machine's few
    cores may take more ranks than it has (a cluster's hostfile gives the slots)."""
    return tracker_env(PATH=tool_dir(tmp_path) + ":" + os.environ.get("PATH", "/usr/bin:/bin"), OUT=str(out),
                       OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                       OMPI_MCA_rmaps_base_oversubscribe="1")


def run_mpi(tmp_path, line, ranks):
    """line (the recipe's mpirun, /shared/runs/ put in tmp_path) run by sh in tmp_path, where
    ./simulate is WORK; returns (the directory of the trackers' files, {rank: its getrusage and
    the variables it saw})."""
    runs = tmp_path / "runs"
    runs.mkdir()
    sim = tmp_path / "simulate"
    sim.write_text(WORK)
    sim.chmod(0o755)
    line = line.replace("/shared/runs/", f"{runs}/")
    r = subprocess.run(["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True,
                       env=mpi_env(tmp_path, tmp_path), timeout=120 * TIMEOUT_SCALE)
    assert r.returncode == 0, (line, r.stdout[-2000:], r.stderr[-3000:])
    own = {}
    for rank in range(ranks):
        own[rank] = json.loads((tmp_path / f"ru.{rank}").read_text())
    return runs, own


@needs_mpirun
def test_mpirun_recipe_as_written(tmp_path):
    line = recipe_line("mpirun")
    assert " resource-tracker -q --job-id " in line and " -o /shared/runs/ -- ./simulate" in line, line
    ranks = int(re.search(r" -np (\d+) ", line).group(1))
    assert ranks >= 2, line
    runs, own = run_mpi(tmp_path, line, ranks)
    names = sorted(os.listdir(runs))
    job = names[0].split(".", 1)[0]
    assert re.fullmatch(r"sim-\d+", job), names  # "sim-$(date +%s)": the shell's, once for every rank
    # -o DIR/: a file per rank, named by the job, the node (the host: every rank's here) and the rank
    assert names == sorted(f"{job}.{HOST}.r{r}.jsonl" for r in range(ranks)), names
    # the recipe's last line: the job's view of the directory
    r = subprocess.run(["sh", "-c", recipe_line("resource-tracker summary").replace("/shared/runs/", f"{runs}/")],
                       capture_output=True, text=True, env=mpi_env(tmp_path, tmp_path), timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    text = " ".join(l.strip() for l in r.stdout.splitlines())
    assert f"{job} (mpi): 1 node, {ranks} runs" in text, r.stdout
    v = job_view(runs)
    assert (v["job_id"], v["from"], v["run_count"], v["node_count"]) == (job, "mpi", ranks, 1), v
    assert (v["ranks_said"], v["ranks_seen"], v["duplicate_rank"]) == (ranks, ranks, None), v
    assert [n["node"] for n in v["nodes"]] == [HOST] and v["nodes"][0]["runs"] == ranks
    seen = {}
    for run in v["runs"]:
        m = run["member"]
        seen[m["rank"]] = run
        # Open MPI's own words for the rank, the local rank and the size; the job the user gave
        assert (m["job_id"], m["node"], m["from"], m["ranks"]) == (job, HOST, "mpi", ranks), m
        assert m["local_rank"] == int(own[m["rank"]]["env"]["OMPI_COMM_WORLD_LOCAL_RANK"]), m
    assert sorted(seen) == list(range(ranks))
    for rank, run in seen.items():
        held_to(run["process"]["cpu_secs"], own[rank]["cpu"], f"rank {rank}")
        assert own[rank]["cpu"] >= (rank + 1) * STEP  # each rank its own amount
    held_to(v["cpu_secs"], sum(o["cpu"] for o in own.values()), "the job")
    held_to(v["nodes"][0]["cpu_secs"], v["cpu_secs"], "the one node")
    # the file names its rank: the member of its every line
    for rank in range(ranks):
        rows = [json.loads(l) for l in (runs / f"{job}.{HOST}.r{rank}.jsonl").read_text().splitlines()]
        assert rows and {row["member"]["rank"] for row in rows} == {rank}
    print(f"{line}\n{r.stdout}" + "; ".join(f"r{k} {seen[k]['process']['cpu_secs']} (own {own[k]['cpu']:.3f})"
                                            for k in sorted(seen)))


@needs_mpirun
def test_open_mpi_names_the_job(tmp_path):
    """Without --job-id: Open MPI 4 (Debian's, with PMIx) sets PMIX_NAMESPACE for every rank (its
    job id, a number), and the trackers take it for the job."""
    line = recipe_line("mpirun")
    line = re.sub(r" -np \d+ ", " -np 3 ", re.sub(r" --job-id (\"[^\"]*\"|\S+)", "", line))
    assert "--job-id" not in line, line
    runs, own = run_mpi(tmp_path, line, 3)
    ns = {o["env"].get("PMIX_NAMESPACE") for o in own.values()}
    assert len(ns) == 1 and None not in ns, own
    ns = ns.pop()
    assert sorted(os.listdir(runs)) == [f"{ns}.{HOST}.r{r}.jsonl" for r in range(3)]
    v = job_view(runs)
    assert (v["job_id"], v["from"], v["run_count"], v["ranks_seen"]) == (ns, "mpi", 3, 3), v
    for run in v["runs"]:
        held_to(run["process"]["cpu_secs"], own[run["member"]["rank"]]["cpu"], run["member"])


# ---------------------------------------------------------------------------------------------
# torchrun

def torch_version():
    """The installed torch's version ("1.13.0a0+gitunknown": Debian 12's), or None; read without
    importing torch (seconds of CPU, in every collecting worker)."""
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


TORCH = torch_version()
TORCHRUN = shutil.which("torchrun", path="/usr/bin:/usr/local/bin") if TORCH else None

# train.py: a gloo all_reduce loop on the CPU, then rank + 1 times STEP CPU seconds of its own
TRAIN = r"""
import os, time
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
x = torch.ones(4096)
for _ in range(20):
    dist.all_reduce(x)
    x /= world
assert torch.allclose(x, torch.ones(4096)), x[:4]
end = time.process_time() + (rank + 1) * %r
while time.process_time() < end:
    sum(i * i for i in range(2000))
dist.barrier()
dist.destroy_process_group()
""" % STEP

# every python process of the run (torchrun's agent and its workers) writes its own account at
# exit: os.times() (itself, and the children it reaped: the agent's is its whole tree) and what
# torchrun told it. The agent's is written at its sys.exit, and it exits at once after: an
# interpreter that loaded torch spends a quarter of a second's CPU on its teardown.
ACCOUNT = r"""
import json, os, sys

def _account():
    t = os.times()
    said = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID",
                                       "RT_NODE")}
    with open(os.path.join(os.environ["RT_ACCOUNTS"], str(os.getpid())), "w") as f:
        json.dump({"argv": sys.argv, "self": t.user + t.system, "tree": t.user + t.system + t.children_user
                   + t.children_system, "env": said}, f)

def _exit(code=0):
    sys.stdout.flush()
    sys.stderr.flush()
    _account()
    os._exit(code if isinstance(code, int) else 1 if code else 0)

if os.environ.get("RT_ACCOUNTS"):
    if os.path.basename(sys.argv[0]) == "torchrun":
        sys.exit = _exit
    else:
        import atexit
        atexit.register(_account)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not TORCHRUN, reason="torch or torchrun not installed (Debian's python3-torch: "
                                         "about 600 MB installed, not in scripts/install-deps)")
def test_torchrun_two_nodes(tmp_path):
    r = subprocess.run([PY, "-c", "import torch.distributed as d; print(d.is_available() and d.is_gloo_available())"],
                       capture_output=True, text=True, timeout=120 * TIMEOUT_SCALE)
    if r.stdout.strip() != "True":
        pytest.skip(f"this torch ({TORCH}) has no gloo backend: {r.stdout.strip()} {r.stderr.strip()[-300:]}")
    runs, accounts, hook = tmp_path / "runs", tmp_path / "accounts", tmp_path / "hook"
    for d in (runs, accounts, hook):
        d.mkdir()
    (tmp_path / "train.py").write_text(TRAIN)
    (hook / "usercustomize.py").write_text(ACCOUNT)
    rdzv = "rt-rdzv-1"
    bin_dir = tool_dir(tmp_path)
    os.symlink(TORCHRUN, os.path.join(bin_dir, "torchrun"))  # the one of the torch found, first
    env = tracker_env(PATH=bin_dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"), RDZV_ID=rdzv,
                      PYTHONPATH=str(hook), RT_ACCOUNTS=str(accounts))
    env.pop("PYTHONNOUSERSITE", None)
    if TORCH.split(".")[0] in ("0", "1") and sys.version_info >= (3, 11):
        # torch 1's torchrun reads its default --redirects and --tee ("0") as None under Python
        # 3.11 (an IntFlag's 0 is no member to iterate): every worker start fails, Debian 12's
        # included; set both by torchrun's own variables (PET_*), not on the command line
        env.update(PET_REDIRECTS="1", PET_TEE="1")
    # the recipe's line on each node: one tracker a node around torchrun; the spellings with _ are
    # the ones every torchrun knows (torch 1's has no --nproc-per-node)
    cmd = ('resource-tracker -q --job-id "$RDZV_ID" --node {node} -o {runs}/ -- torchrun --nnodes=2 '
           '--nproc_per_node=2 --rdzv_backend=c10d --rdzv_id="$RDZV_ID" --rdzv_endpoint=127.0.0.1:{port} '
           'train.py')
    port = free_port()
    procs = [subprocess.Popen(["sh", "-c", cmd.format(node=node, runs=runs, port=port)], cwd=tmp_path,
                              env=dict(env, RT_NODE=node), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
             for node in ("nodeA", "nodeB")]
    for p in procs:
        out, _ = p.communicate(timeout=300 * TIMEOUT_SCALE)
        assert p.returncode == 0, out[-4000:]
    assert sorted(os.listdir(runs)) == [f"{rdzv}.nodeA.jsonl", f"{rdzv}.nodeB.jsonl"]
    agents, workers = {}, {}
    for f in accounts.iterdir():
        a = json.loads(f.read_text())
        if a["env"]["RANK"] is not None:
            workers[int(a["env"]["RANK"])] = a
        elif os.path.basename(a["argv"][0]) == "torchrun":
            agents[a["env"]["RT_NODE"]] = a
    assert sorted(workers) == [0, 1, 2, 3], workers
    assert {w["env"]["TORCHELASTIC_RUN_ID"] for w in workers.values()} == {rdzv}
    assert sorted(agents) == ["nodeA", "nodeB"], agents
    v = job_view(runs)
    assert (v["job_id"], v["from"], v["run_count"], v["node_count"]) == (rdzv, "given", 2, 2), v
    assert [n["node"] for n in v["nodes"]] == ["nodeA", "nodeB"]
    # each node's tree is its agent's: the agent and the two workers it reaped (the rendezvous
    # said which two: GROUP_RANK, the same for both)
    for n in v["nodes"]:
        held_to(n["cpu_secs"], agents[n["node"]]["tree"], n["node"])
        mine = [w for w in workers.values() if w["env"]["RT_NODE"] == n["node"]]
        assert len(mine) == 2 and len({w["env"]["GROUP_RANK"] for w in mine}) == 1, mine
        assert agents[n["node"]]["tree"] >= sum(w["self"] for w in mine)
    held_to(v["cpu_secs"], sum(a["tree"] for a in agents.values()), "the job")
    for rank, w in workers.items():
        assert w["self"] >= (rank + 1) * STEP
    print(f"torch {TORCH}: nodes " + ", ".join(f"{n['node']} {n['cpu_secs']} s" for n in v["nodes"])
          + "; agents' trees " + ", ".join(f"{k} {a['tree']:.2f}" for k, a in sorted(agents.items()))
          + "; workers " + ", ".join(f"r{k} {w['self']:.2f}" for k, w in sorted(workers.items())))


# ---------------------------------------------------------------------------------------------
# a Kubernetes indexed Job's pods

def test_kubernetes_indexed_job_pods(tmp_path):
    """Three pods of the indexed Job "train" as Kubernetes and the downward API (docs/where.md's
    Kubernetes section) set them, each its tracker as the container's command with -o on the
    shared volume, all at once."""
    runs = tmp_path / "runs"
    runs.mkdir()
    work = tmp_path / "work.py"
    work.write_text(WORK)
    pods = [f"train-{i}-{s}" for i, s in enumerate(("x7k2p", "9qzvd", "m4c8t"))]
    procs = []
    for i, pod in enumerate(pods):
        env = tracker_env(KUBERNETES_SERVICE_HOST="10.96.0.1", KUBERNETES_SERVICE_PORT="443", HOSTNAME=pod,
                          JOB_COMPLETION_INDEX=str(i), POD_NAME=pod, POD_JOB_NAME="train", POD_NAMESPACE="default",
                          NODE_NAME=f"worker-{i % 2}", POD_UID=f"00000000-0000-4000-8000-00000000000{i}",
                          CPU_REQUEST="1", MEMORY_REQUEST="268435456", OUT=str(tmp_path))
        procs.append(subprocess.Popen([TRACKER, "-q", "-o", f"{runs}/", "--", PY, str(work), "JOB_COMPLETION_INDEX"],
                                      env=env, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=120 * TIMEOUT_SCALE)
        assert p.returncode == 0, err
    assert sorted(os.listdir(runs)) == [f"train.{pod}.r{i}.jsonl" for i, pod in enumerate(pods)]
    v = job_view(runs)
    assert (v["job_id"], v["from"], v["run_count"], v["node_count"]) == ("train", "kubernetes", 3, 3), v
    assert [n["node"] for n in v["nodes"]] == pods  # a pod is the job's node
    assert [n["node_index"] for n in v["nodes"]] == [0, 1, 2] and [n["first_rank"] for n in v["nodes"]] == [0, 1, 2]
    total = 0
    for i, (n, run) in enumerate(zip(v["nodes"], v["runs"])):
        own = json.loads((tmp_path / f"ru.{i}").read_text())["cpu"]
        total += own
        assert run["member"] == {"job_id": "train", "step_id": None, "node": pods[i], "rank": i, "local_rank": None,
                                 "ranks": None, "nodes": None, "node_index": i, "from": "kubernetes", "per_node": False}
        held_to(n["cpu_secs"], own, pods[i])
        assert own >= (i + 1) * STEP
        # the pod's request, from the downward API's variables
        eff = run["efficiency"]
        assert (eff["requested_cpu_cores"], eff["requested_memory_mib"]) == (1, 256), eff
    held_to(v["cpu_secs"], total, "the job")
    assert v["cpu_most"] == pods[2] and v["cpu_least"] == pods[0]
    assert v["ask"]["nodes"] == 3 and v["ask"]["tasks_per_node"] == 1
