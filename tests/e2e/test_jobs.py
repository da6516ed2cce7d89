"""A job on several nodes (issue 52), on this machine: three trackers at once whose environment is
a SLURM step's on the nodes node0, node1 and node2 (or torchrun's, or --job-id and --node), each
with its own amount of work, write their files into one directory (-o DIR/), and `summary DIR`
puts them together. The job's view is held to each node's kernel figures (the workload's own
getrusage: CPU within 2%, its peak RSS within 5% of the memory need), its ask per node to the
largest node's, and proved by running every node's workload again in a memory cgroup limited to
the asked memory per node. Bad input: a node's file cut short, a node missing, two nodes claiming
one rank, clocks apart, files of two jobs, a file that names no job. `report DIR` opens with the
same view (a row per node) and `recommend DIR` gives the ask per node; the run history keeps each
node's place, and `recommend --job` answers the newest job's nodes with the ask per node. The Python
package puts a job's files together as `summary --json` does (the library's rule). The real
multi-node SLURM is test_slurm.py's."""
import html.parser
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED, TIMEOUT_SCALE, TRACKER, tracker_env
import test_rerun
from test_stream import peers  # noqa: F401 (the fixture: the Sentinel and S3 stand-ins)

PY = "/usr/bin/python3"

# cpu seconds of busy loop after touching mib MiB; writes "cpu_secs maxrss_kib" (getrusage of
# itself, the kernel's own account) to the file named last, then exits at once (the tracker counts
# the whole process: an interpreter's teardown after the figures would be CPU they never saw)
WORK = r"""
import os, resource, sys, time
secs, mib, out = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
buf = bytearray(mib << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
end = time.process_time() + secs
while time.process_time() < end:
    pass
ru = resource.getrusage(resource.RUSAGE_SELF)
if out != "-":
    open(out, "w").write(f"{ru.ru_utime + ru.ru_stime} {ru.ru_maxrss}\n")
os._exit(0)  # no teardown after the figures (freeing the buffer, the interpreter's exit)
"""

# each node's work: CPU seconds and MiB
NODES = [(1.0, 40), (2.0, 80), (3.0, 120)]


def slurm_env(job, i, n, **extra):
    """The environment of task i of an srun step of job on n nodes, one task a node, on node i;
    no SLURM client on the PATH (this machine may have one: no time limit asked)."""
    env = tracker_env(PATH="/nonexistent", SLURM_JOB_ID=job, SLURM_STEP_ID="0", SLURMD_NODENAME=f"node{i}",
                      SLURM_PROCID=str(i), SLURM_LOCALID="0", SLURM_NTASKS=str(n), SLURM_JOB_NUM_NODES=str(n),
                      SLURM_NODEID=str(i))
    env.update(extra)
    return env


def run_nodes(tmp_path, job="900", nodes=NODES, extra=()):
    """Every node's tracker at once (-o DIR/; extra: more of the tracker's options), its workload
    writing its rusage; returns the directory and [(cpu_secs, maxrss_mib)] by node."""
    d = tmp_path / "runs"
    d.mkdir()
    procs = []
    for i, (secs, mib) in enumerate(nodes):
        cmd = [TRACKER, "-i", "0.1", *extra, "-o", f"{d}/", "--", PY, "-c", WORK, str(secs), str(mib),
               str(tmp_path / f"ru{i}")]
        procs.append(subprocess.Popen(cmd, env=slurm_env(job, i, len(nodes)), stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=120 * TIMEOUT_SCALE)
        assert p.returncode == 0, err
    kernel = []
    for i in range(len(nodes)):
        cpu, rss = (tmp_path / f"ru{i}").read_text().split()
        kernel.append((float(cpu), int(rss) / 1024))
    return d, kernel


def summary(*args, check=True):
    r = subprocess.run([TRACKER, "summary"] + [str(a) for a in args], capture_output=True, text=True,
                       env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    if check:
        assert r.returncode == 0, r.stderr
    return r


class _Page(html.parser.HTMLParser):
    """The report page's parts a job's tests read: the rows of #job-nodes (each cell's text, and
    the row's class), the text of each element with an id."""

    def __init__(self):
        super().__init__()
        self.rows, self.ids, self.open = [], {}, []
        self.in_nodes = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") == "job-nodes":
            self.in_nodes = True
        if self.in_nodes and tag == "tr":
            self.rows.append({"class": a.get("class", ""), "cells": []})
        if self.in_nodes and tag in ("td", "th") and self.rows:
            self.rows[-1]["cells"].append("")
        if a.get("id"):
            self.ids[a["id"]] = ""
        self.open.append((tag, a.get("id")))

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_nodes = False
        while self.open:
            t, _ = self.open.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self.in_nodes and self.rows and self.rows[-1]["cells"]:
            self.rows[-1]["cells"][-1] += data
        for _, i in self.open:
            if i:
                self.ids[i] += data


def page_nodes(path):
    """The report page at path: ({node: its #job-nodes row as {header: cell}, with "class"}, the
    text of each element by id)."""
    p = _Page()
    p.feed(path.read_text())
    head = [c.strip() for c in p.rows[0]["cells"]]
    nodes = {}
    for row in p.rows[1:]:
        cells = dict(zip(head, (c.strip() for c in row["cells"])))
        cells["class"] = row["class"]
        nodes[cells["node"]] = cells
    return nodes, p.ids


def secs_of(cell):
    """Seconds of a duration cell under a minute ("2.19 s")."""
    m = re.fullmatch(r"([0-9.]+) s", cell.strip())
    assert m, cell
    return float(m.group(1))


def mib_of(cell):
    """MiB of a memory cell ("103.2 MiB", "1.2 GiB")."""
    m = re.match(r"([0-9.]+) (KiB|MiB|GiB)", cell.strip())
    assert m, cell
    return float(m.group(1)) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[m.group(2)]


def run_tool(*args):
    r = subprocess.run([TRACKER] + [str(a) for a in args], capture_output=True, text=True, env=tracker_env(),
                       timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    return r


def unwrapped(text):
    """The text with each line break and the indent after it one space (the answer wraps)."""
    return " ".join(line.strip() for line in text.splitlines())


def test_job_view_holds_each_nodes_kernel_figures(tmp_path):
    d, kernel = run_nodes(tmp_path)
    # -o DIR/: one file per node, named by the job, the node and the rank
    assert sorted(os.listdir(d)) == ["900.node0.r0.jsonl", "900.node1.r1.jsonl", "900.node2.r2.jsonl"]
    first = json.loads((d / "900.node1.r1.jsonl").read_text().splitlines()[0])
    assert first["member"] == {"job_id": "900", "step_id": "0", "node": "node1", "rank": 1, "local_rank": 0,
                               "ranks": 3, "nodes": 3, "node_index": 1, "from": "slurm", "per_node": False}
    lines = summary("--json", d).stdout.splitlines()
    assert len(lines) == 1  # one object for the job
    v = json.loads(lines[0])
    assert (v["job_id"], v["node_count"], v["run_count"], v["nodes_said"]) == ("900", 3, 3, 3)
    assert [n["node"] for n in v["nodes"]] == ["node0", "node1", "node2"]
    for n, (cpu, rss), run in zip(v["nodes"], kernel, v["runs"]):
        assert n["cpu_secs"] == pytest.approx(cpu, rel=0.02), (n, cpu)
        assert n["memory_need_mib"] == pytest.approx(rss, rel=0.05), (n, rss)
        assert run["member"]["node"] == n["node"]  # each file's own summary inside, in order
        assert n["ask_memory_mib"] == run["recommendation"]["memory_mib"]
        assert n["ask_cores"] == run["recommendation"]["cpu"]
    assert v["cpu_secs"] == pytest.approx(sum(c for c, _ in kernel), rel=0.02)
    # the ask per node is the largest node's, and names it
    ask = v["ask"]
    assert ask["memory_mib_per_node"] == max(n["ask_memory_mib"] for n in v["nodes"]) == v["nodes"][2]["ask_memory_mib"]
    assert ask["cores_per_task"] == max(n["ask_cores"] for n in v["nodes"])
    assert (ask["nodes"], ask["tasks_per_node"]) == (3, 1)
    assert ask["slurm"].startswith(f"--nodes=3 --ntasks-per-node=1 --cpus-per-task={ask['cores_per_task']} "
                                   f"--mem={ask['memory_mib_per_node']}M")
    assert v["memory_most"] == v["cpu_most"] == "node2" and v["cpu_least"] == "node0"
    median = sorted(c for c, _ in kernel)[1]
    assert v["cpu_imbalance_pct"] == pytest.approx((kernel[2][0] - median) / median * 100, abs=4)
    text = unwrapped(summary(d).stdout)
    assert "memory sized by node2" in text and ask["slurm"] in text, text
    # the answer is right when every node's work runs again under it: the asked memory per node
    kind = test_rerun.memory_kind()
    for i, (secs, mib) in enumerate(NODES):
        rerun, kills, peak = test_rerun.rerun_in(kind, f"jobs-{i}", ask["memory_mib_per_node"], WORK,
                                                 [str(secs), str(mib), "-"])
        assert rerun.returncode == 0 and not kills, (i, ask, peak, rerun.stderr[-1000:])


def test_report_and_recommend_of_a_job(tmp_path):
    d, kernel = run_nodes(tmp_path, job="901")
    v = json.loads(summary("--json", d).stdout)
    # a file of another job and one of no job beside them: left out, and said
    other = tmp_path / "other"
    other.mkdir()
    for name, env in (("b.jsonl", slurm_env("902", 0, 1)), ("c.jsonl", tracker_env())):
        subprocess.run([TRACKER, "-i", "0.1", "-o", str(other / name), "--", "/bin/true"], env=env, check=True,
                       timeout=60 * TIMEOUT_SCALE)
    page = tmp_path / "job.html"
    r = run_tool("report", d, other / "b.jsonl", other / "c.jsonl", "-o", page)
    assert f"{other / 'b.jsonl'} is of job 902, not 901: left out" in r.stderr, r.stderr
    assert f"{other / 'c.jsonl'} names no job" in r.stderr, r.stderr
    nodes, ids = page_nodes(page)
    assert "<h1>job 901 on 3 nodes</h1>" in page.read_text()
    assert list(nodes) == ["node0", "node1", "node2"]
    for (name, row), (cpu, rss) in zip(nodes.items(), kernel):
        assert secs_of(row["CPU"]) == pytest.approx(cpu, rel=0.02), (row, cpu)
        assert mib_of(row["memory need"]) == pytest.approx(rss, rel=0.05), (row, rss)
        assert row["runs"] == "1"
    # the ask per node, in each scheduler's words, sized by the node that needs most: shown below
    assert v["ask"]["slurm"] in ids["job-ask"] and "memory sized by node2" in ids["job-ask"], ids["job-ask"]
    assert "completions: 3, parallelism: 3" in ids["job-ask"] and "@parallel(num_parallel=3)" in ids["job-ask"]
    assert nodes["node2"]["class"] == "shown" and "sizes the memory" in nodes["node2"]["notes"]
    assert ids["job-shown"].startswith("The rest of this page is of node2, the node the memory ask is sized by")
    assert "The answer for node2" in page.read_text()
    # recommend: the ask per node, the same as the view's
    rec = json.loads(run_tool("recommend", "--json", "--no-price-lookup", d).stdout)
    ask = v["ask"]
    assert (rec["job_id"], rec["nodes"], rec["tasks_per_node"], rec["cpu_per_task"], rec["memory_mib_per_node"]) == (
        "901", 3, 1, ask["cores_per_task"], ask["memory_mib_per_node"])
    assert rec["memory_sized_by"] == "node2" and rec["schedulers"]["slurm"] == ask["slurm"]
    assert rec["view"]["nodes"] == v["nodes"]
    text = run_tool("recommend", "--no-price-lookup", *sorted(d.iterdir())).stdout
    assert f"memory: {ask['memory_mib_per_node']} MiB" in text and "memory sized by: node2" in text, text
    assert f"SLURM: {ask['slurm']}" in text, text
    assert "prices:" not in text
    # the lookup on, Keeper at a closed local port (conftest): as offline, one quiet line, no warning
    r = run_tool("recommend", *sorted(d.iterdir()))
    assert r.stderr == "" and r.stdout.count("prices: offline (Keeper not reached: ") == 1, (r.stdout, r.stderr)


def test_history_of_a_job(tmp_path):
    """Six nodes write one history (--history): the table names each node's job, node and rank;
    `recommend --job` reads the newest job's six runs (past --last's default of 5) and answers per
    node as the files do; an older run of the same name (no job of nodes), read by --last, is said
    unused."""
    db = tmp_path / "h.db"
    subprocess.run([TRACKER, "-q", "--history", str(db), "--job-name", "train", "--", "/bin/true"], env=tracker_env(),
                   check=True, timeout=60 * TIMEOUT_SCALE)
    six = [(0.6 + 0.1 * i, 20 + 15 * i) for i in range(6)]  # 2% of the least is a tick (10 ms) or more
    d, kernel = run_nodes(tmp_path, job="903", nodes=six, extra=("--history", str(db), "--job-name", "train"))
    table = run_tool("history", "--history", db).stdout
    for i in range(6):
        assert f"train (903 node{i} r{i})" in table, table
    rows = [json.loads(line) for line in run_tool("history", "--json", "--history", db).stdout.splitlines()]
    assert sorted(r["member"]["node"] for r in rows if r["member"]) == [f"node{i}" for i in range(6)]
    assert [r["member"] for r in rows].count(None) == 1
    r = subprocess.run([TRACKER, "recommend", "--json", "--no-price-lookup", "--job", "train", "--history", str(db)],
                       capture_output=True, text=True, env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # six rows read: the job's, all of them
    rec = json.loads(r.stdout)
    files = json.loads(run_tool("recommend", "--json", "--no-price-lookup", d).stdout)
    assert (rec["job_id"], rec["nodes"], rec["view"]["run_count"]) == ("903", 6, 6)
    assert rec["memory_sized_by"] == files["memory_sized_by"] == "node5"
    assert rec["memory_mib_per_node"] == files["memory_mib_per_node"], (rec, files)
    for n, (cpu, rss) in zip(rec["view"]["nodes"], kernel):
        assert n["cpu_secs"] == pytest.approx(cpu, rel=0.02), (n, cpu)
        assert n["memory_need_mib"] == pytest.approx(rss, rel=0.05), (n, rss)
    # --last as given is kept: seven rows, the older run of no job said unused; two rows, the
    # job's two newest nodes
    r = run_tool("recommend", "--json", "--no-price-lookup", "--job", "train", "--last", "7", "--history", db)
    assert "(903, 6 runs); its 1 older run of other jobs is not used" in r.stderr, r.stderr
    assert json.loads(r.stdout)["view"]["run_count"] == 6
    r = run_tool("recommend", "--json", "--no-price-lookup", "--job", "train", "--last", "2", "--history", db)
    assert json.loads(r.stdout)["view"]["run_count"] == 2


def test_bad_input_said_and_answered(tmp_path):
    """From one real run: four nodes' files made of it, one cut short, one with its clock 5 s
    ahead, two claiming rank 1, the runs saying 5 nodes."""
    src = tmp_path / "one.jsonl"
    r = subprocess.run([TRACKER, "--place", "off", "--job-id", "J7", "-i", "0.1", "-o", str(src), "--", PY, "-c",
                        WORK, "0.4", "20", "-"], capture_output=True, text=True, env=tracker_env(),
                       timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(l) for l in src.read_text().splitlines()]
    d = tmp_path / "runs"
    d.mkdir()
    plan = [("a", 0, 0.0), ("b", 1, 0.0), ("c", 1, 5.0), ("d", 3, 0.0)]  # node, rank, clock ahead
    for node, rank, ahead in plan:
        out = []
        for row in rows:
            row = dict(row, timestamp_secs=round(row["timestamp_secs"] + ahead, 3))
            row["member"] = dict(row["member"], node=node, rank=rank, nodes=5, ranks=5)
            out.append(json.dumps(row))
        text = "\n".join(out) + "\n"
        if node == "d":
            text = text[: len(text) - len(out[-1]) // 2]  # the last line cut in the middle
        (d / f"{node}.jsonl").write_text(text)
    r = summary(d)
    assert "d.jsonl: 1 malformed line skipped" in r.stderr, r.stderr
    text = unwrapped(r.stdout)
    for said in ("J7 (given): 4 nodes, 4 runs", "1 of 5 nodes missing", "rank 1 claimed twice, by b and c",
                 "the nodes started 5.00 s apart"):
        assert said in text, (said, text)
    v = json.loads(summary("--json", d).stdout)
    assert (v["node_count"], v["nodes_said"], v["duplicate_rank"], v["ranks_seen"]) == (4, 5, 1, 3)
    assert v["start_spread_secs"] == pytest.approx(5, abs=0.01)
    assert [n["node"] for n in v["nodes"]] == ["a", "b", "c", "d"]
    cut = v["nodes"][3]
    assert cut["cpu_secs"] > 0 and v["runs"][3]["samples"] == len(rows) - 1  # answered from what it has


def test_files_of_two_jobs_never_mixed(tmp_path):
    outs = []
    for job, node in (("A", "n1"), ("B", "n1"), ("A", "n2"), ("B", "n2"), (None, None)):
        out = tmp_path / f"{job}-{node}.jsonl"
        flags = ["--job-id", job, "--node", node] if job else []
        r = subprocess.run([TRACKER, "--place", "off", "-i", "0.1", "-o", str(out)] + flags + ["--", "true"],
                           capture_output=True, text=True, env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
        assert r.returncode == 0, r.stderr
        outs.append(out)
    r = summary("--json", *outs)
    objs = [json.loads(l) for l in r.stdout.splitlines()]
    assert [o.get("job_id") for o in objs] == ["A", "B", None]  # each job its view, in the order first given
    assert [[n["node"] for n in o["nodes"]] for o in objs[:2]] == [["n1", "n2"], ["n1", "n2"]]
    assert "samples" in objs[2] and objs[2]["member"] is None  # the file of no job: its own summary
    assert "the files name 2 jobs" in r.stderr and "None-None.jsonl names no job" in r.stderr, r.stderr
    # --each: after the view, each file's own summary
    text = summary("--each", outs[0], outs[2]).stdout
    assert text.count("== ") == 3 and f"== {outs[2]}" in text


@pytest.mark.skipif(SANITIZED, reason="a sanitizer build's library does not load into Debian's uninstrumented python")
def test_python_package_groups_a_jobs_files(tmp_path):
    """resource_tracker.recorded.jobs (the library's rule, rt_job_group, over ctypes) answers the
    files of a job on three nodes and a file of no job as `summary --json` does: the job's view
    with each run's summary, then the lone file's summary; the same dicts, in the same order."""
    d, _ = run_nodes(tmp_path, job="904")
    lone = d / "zz-lone.jsonl"
    r = subprocess.run([TRACKER, "--place", "off", "-i", "0.1", "-o", str(lone), "--", "true"], capture_output=True,
                       text=True, env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    files = sorted(str(p) for p in d.iterdir())
    want = [json.loads(l) for l in summary("--json", *files).stdout.splitlines()]
    assert want == [json.loads(l) for l in summary("--json", d).stdout.splitlines()]
    code = "import json, sys; from resource_tracker import recorded; print(json.dumps(recorded.jobs(sys.argv[1:])))"
    env = tracker_env(PYTHONPATH=os.path.join(REPO, "python"),
                      RESOURCE_TRACKER_LIBRARY=os.path.join(BUILD_DIR, "libresource-tracker.so"))
    r = subprocess.run([PY, "-c", code, *files], capture_output=True, text=True, env=env, timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [(o.get("job_id"), len(o.get("runs", []))) for o in got] == [("904", 3), (None, 0)]
    assert [n["node"] for n in got[0]["nodes"]] == ["node0", "node1", "node2"]
    assert got == want


def test_job_and_node_from_flags_variables_config_and_launchers(tmp_path):
    def member(env, *flags):
        out = tmp_path / "m.jsonl"
        r = subprocess.run([TRACKER, "-i", "0.1", "-o", str(out)] + list(flags) + ["--", "true"], capture_output=True,
                           text=True, env=env, timeout=60 * TIMEOUT_SCALE)
        assert r.returncode == 0, r.stderr
        return json.loads(out.read_text().splitlines()[0]).get("member")

    host = os.uname().nodename
    m = member(tracker_env(), "--place", "off", "--job-id", "run-1", "--node", "w3")
    assert (m["job_id"], m["node"], m["from"], m["rank"]) == ("run-1", "w3", "given", None)
    m = member(tracker_env(TRACKER_JOB_ID="run-2"), "--place", "off")
    assert (m["job_id"], m["node"]) == ("run-2", host)
    cfg = tmp_path / "c.toml"
    cfg.write_text('[job]\njob_id = "run-3"\nnode = "w9"\n')
    m = member(tracker_env(), "--place", "off", "-c", str(cfg))
    assert (m["job_id"], m["node"]) == ("run-3", "w9")
    assert member(tracker_env(), "--place", "off") is None  # nothing names a job: no member
    torch = tracker_env(TORCHELASTIC_RUN_ID="rdzv-7", RANK="5", LOCAL_RANK="1", WORLD_SIZE="8", GROUP_RANK="2",
                        GROUP_WORLD_SIZE="4")
    m = member(torch)
    assert m == {"job_id": "rdzv-7", "step_id": None, "node": host, "rank": 5, "local_rank": 1, "ranks": 8,
                 "nodes": 4, "node_index": 2, "from": "torchrun", "per_node": False}
    # the launcher's job, the user's node; --place off reads no launcher
    m = member(torch, "--node", "gpu-a")
    assert (m["job_id"], m["node"]) == ("rdzv-7", "gpu-a")
    assert member(torch, "--place", "off") is None
    # MPICH says no job id: --job-id makes the run a member, with the ranks MPI said
    m = member(tracker_env(PMI_RANK="1", PMI_SIZE="2"), "--job-id", "mpi-1")
    assert (m["job_id"], m["rank"], m["ranks"], m["from"]) == ("mpi-1", 1, 2, "mpi")
    # a bad value names the variable, and the run goes on
    out = tmp_path / "bad.jsonl"
    r = subprocess.run([TRACKER, "-i", "0.1", "-o", str(out), "--", "true"], capture_output=True, text=True,
                       env=tracker_env(TORCHELASTIC_RUN_ID="r", RANK="x"), timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 0 and "RANK: not a whole number: 'x'" in r.stderr, r.stderr
    # -o DIR/ needs the directory: a usage error before anything starts
    r = subprocess.run([TRACKER, "-o", str(tmp_path / "nowhere") + "/", "--", "true"], capture_output=True, text=True,
                       env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    assert r.returncode == 2 and "nowhere/" in r.stderr, r.stderr


def test_exporters_label_the_job_and_the_node(tmp_path):
    """Every exporter's series carry the job and the node (tag_job_id, tag_node, tag_rank): the
    node_exporter textfile, the Prometheus endpoint's text (the same format) and the OTLP
    receiver's resource; a fleet's dashboards group a job's nodes with no configuration."""
    import test_otlp
    rcv = test_otlp.Receiver(tmp_path)
    try:
        tf = tmp_path / "textfile"
        tf.mkdir()
        out = tmp_path / "s.jsonl"
        env = test_otlp.otlp_env(**slurm_env("4242", 2, 3))
        r = subprocess.run([TRACKER, "-i", "0.2", "-o", str(out), "--prometheus-textfile", str(tf), "--otlp", rcv.url,
                            "--otlp-interval", "0.2", "--", PY, "-c", WORK, "0.3", "10", "-"], capture_output=True,
                           text=True, env=env, timeout=60 * TIMEOUT_SCALE)
        assert r.returncode == 0, r.stderr
        prom = "".join(p.read_text() for p in tf.iterdir())
        for label in ('tag_job_id="4242"', 'tag_node="node2"', 'tag_rank="2"'):
            assert label in prom, (label, prom[:2000])
        accepted = rcv.accepted()
        assert accepted, rcv.entries()
        res = test_otlp.resource_of(accepted[-1])
        assert (res.get("resource_tracker.tag_job_id"), res.get("resource_tracker.tag_node"),
                res.get("resource_tracker.tag_rank")) == ("4242", "node2", "2"), res
    finally:
        rcv.stop()


def test_sentinel_run_names_the_job_and_the_node(tmp_path, peers):
    """The Sentinel run's metadata (its register call, against the stand-in API and S3) carries
    the job and the node as tags, beside the user's."""
    import test_stream
    api, s3 = peers()
    env = test_stream.stream_env(tmp_path, api.url, s3.url)
    out = tmp_path / "local.csv"
    p = subprocess.run([TRACKER, "--place", "off", "--job-id", "J9", "--node", "w2", "-i", "0.1", "-f", "csv", "-o",
                        str(out), "--tag", "team=x", "--", "true"], env=env, capture_output=True, text=True,
                       timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    _, run = test_stream.the_run(api)
    assert run["register"]["tags"] == ["team=x", "job_id=J9", "node=w2"], run["register"]
