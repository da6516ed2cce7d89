"""Where the job runs (--place, docs/where.md), end to end: a fake SLURM environment (SLURM_*
variables and stand-in `scontrol` and `squeue` scripts on the PATH that answer as the real ones
do per SLURM's man pages) around real workloads under the tool. The job's metadata reaches the
JSON lines and the summary; a malformed value is exactly one warning and leaves the job's exit
status and outputs alone; a hung scontrol does not hang the run and is killed with its
children; --place off reads and runs nothing; a job that used 6% of its memory request and one
at 95% of its time limit get their notes."""
import json
import os
import shutil
import re
import sqlite3
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, run, tracker_env

# about 64 MiB touched and held for a second: 6% of a 1 GiB request
HOLD_64M = "/usr/bin/python3 -c \"import time\nx=bytearray(64<<20)\nfor i in range(0,len(x),4096): x[i]=1\ntime.sleep(1.2)\""
SAY_AND_FAIL = "/usr/bin/python3 -c \"import sys\nprint('hello from the job')\nsys.stderr.write('job stderr\\n')\nsys.exit(3)\""


def scontrol_line(job_id, limit, start):
    """One line of `scontrol show job -o ID` as SLURM prints it (times local: TZ=UTC here)."""
    st = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start))
    return (f"JobId={job_id} JobName=train UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=4294 "
            f"Nice=0 Account=physics QOS=normal JobState=RUNNING Reason=None Dependency=(null) Requeue=1 "
            f"Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:09:30 TimeLimit={limit} TimeMin=N/A "
            f"SubmitTime={st} EligibleTime={st} AccrueTime={st} StartTime={st} EndTime=Unknown Deadline=N/A "
            f"Partition=gpu AllocNode:Sid=login1:4242 NodeList=node07 BatchHost=node07 NumNodes=1 NumCPUs=4 "
            f"NumTasks=1 CPUs/Task=4 TRES=cpu=4,mem=1G,node=1 Command=/home/alice/job.sh WorkDir=/home/alice")


class FakeSlurm:
    """A bin directory with stand-in scontrol/squeue scripts, and the environment of a job step."""

    def __init__(self, tmp_path):
        self.dir = tmp_path
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.marker = tmp_path / "asked"
        # the PATH holds the stand-ins and the few tools the jobs run, never the machine's own
        # SLURM clients (the SLURM of test_slurm.py is installed here)
        self.tools = tmp_path / "tools"
        self.tools.mkdir()
        for tool in ("sh", "true", "sleep", "cat", "env"):
            (self.tools / tool).symlink_to(shutil.which(tool))

    def script(self, name, body):
        p = self.bin / name
        p.write_text("#!/bin/sh\n" f"echo \"$0 $*\" >> '{self.marker}'\n" + body)
        p.chmod(0o755)

    def scontrol_answers(self, limit, start, job_id="4242"):
        self.script("scontrol", f"[ \"$1 $2 $3 $4\" = 'show job -o {job_id}' ] || "
                                "{ echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1; }\n"
                                f"echo '{scontrol_line(job_id, limit, start)}'\n")

    def env(self, **extra):
        e = tracker_env(PATH=f"{self.bin}:{self.tools}", TZ="UTC",
                        SLURM_JOB_ID="4242", SLURM_JOB_NAME="train", SLURM_CPUS_PER_TASK="4",
                        SLURM_CPUS_ON_NODE="8", SLURM_MEM_PER_NODE="1024", SLURM_JOB_USER="alice",
                        SLURM_JOB_ACCOUNT="physics", SLURM_JOB_PARTITION="gpu", SLURM_CLUSTER_NAME="hal",
                        SLURMD_NODENAME="node07", SLURM_STEP_ID="0")
        e.update(extra)
        return {k: v for k, v in e.items() if v is not None}

    def asked(self):
        return self.marker.read_text().splitlines() if self.marker.exists() else []


@pytest.fixture
def slurm(tmp_path):
    return FakeSlurm(tmp_path)


def track(args, env, cmd, timeout=60):
    return subprocess.run([TRACKER] + list(args) + ["--", "/bin/sh", "-c", cmd], capture_output=True, text=True,
                          env=env, timeout=timeout * TIMEOUT_SCALE)


def lines_of(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def summary_json(path):
    r = run(["summary", "--json", str(path)])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def notes_block(stderr):
    """The live summary's Notes: its line and the indented ones after it."""
    out, inside = [], False
    for line in stderr.splitlines():
        if line.startswith("Notes"):
            inside = True
        elif inside and not line.startswith(" "):
            break
        if inside:
            out.append(line)
    return "\n".join(out)


def test_slurm_metadata_reaches_the_outputs(slurm, tmp_path):
    slurm.scontrol_answers("01:00:00", time.time() - 60)
    out, db = tmp_path / "run.jsonl", tmp_path / "runs.db"
    r = track(["-i", "0.2", "-o", str(out), "--summary", "--history", str(db), "--tag", "user=bob"], slurm.env(),
              "sleep 0.5")
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(db) as con:
        row = con.execute("SELECT job_name, orchestrator, external_run_id, tags FROM runs").fetchone()
    assert row[:3] == ("train", "slurm", "4242")
    tags = json.loads(row[3])  # the user's tag wins by key; the place's others are added
    assert "user=bob" in tags and "user=alice" not in tags
    assert {"account=physics", "partition=gpu", "cluster=hal", "node=node07", "step=0"} <= set(tags)
    assert "warning" not in r.stderr, r.stderr
    assert slurm.asked() == [f"{slurm.bin}/scontrol show job -o 4242"]
    samples = lines_of(out)
    assert samples and all(s.get("job_name") == "train" for s in samples)
    assert summary_json(out)["job_name"] == "train"
    assert re.search(r"^\s+Job\s+train$", r.stderr, re.M), r.stderr
    # the user's own name wins
    r = track(["-i", "0.2", "-o", str(out), "--job-name", "mine"], slurm.env(), "true")
    assert r.returncode == 0, r.stderr
    assert {s.get("job_name") for s in lines_of(out)} == {"mine"}
    r = track(["-i", "0.2", "-o", str(out)], slurm.env(TRACKER_JOB_NAME="from-env"), "true")
    assert {s.get("job_name") for s in lines_of(out)} == {"from-env"}


def test_github_and_kubernetes_names(tmp_path):
    out = tmp_path / "run.jsonl"
    env = tracker_env(GITHUB_ACTIONS="true", GITHUB_JOB="build", GITHUB_RUN_ID="987")
    r = track(["-i", "0.2", "-o", str(out)], env, "true")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert {s.get("job_name") for s in lines_of(out)} == {"build"}
    env = tracker_env(KUBERNETES_SERVICE_HOST="10.0.0.1", POD_NAME="train-7x2kq", POD_JOB_NAME="train",
                      CPU_REQUEST="2", MEMORY_REQUEST="512Mi")
    r = track(["-i", "0.2", "-o", str(out)], env, "true")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert {s.get("job_name") for s in lines_of(out)} == {"train"}


@pytest.mark.parametrize("var,value", [("SLURM_MEM_PER_NODE", "abc"), ("SLURM_CPUS_PER_TASK", "-3"),
                                       ("SLURM_GPUS", "a100:x")])
def test_malformed_value_is_one_warning(slurm, tmp_path, var, value):
    slurm.scontrol_answers("01:00:00", time.time() - 60)
    outs = {}
    for place in ("auto", "off"):
        out = tmp_path / f"{place}.jsonl"
        r = track(["-i", "0.2", "-o", str(out), "--place", place], slurm.env(**{var: value}), SAY_AND_FAIL)
        assert r.returncode == 3, r.stderr
        assert r.stdout == "hello from the job\n"
        assert "job stderr" in r.stderr
        samples = lines_of(out)
        assert samples and samples[-1]["timestamp_secs"] > 0
        outs[place] = r.stderr
    warnings = [l for l in outs["auto"].splitlines() if "warning" in l]
    assert len(warnings) == 1, outs["auto"]
    assert var in warnings[0] and f"'{value}'" in warnings[0]
    assert "warning" not in outs["off"], outs["off"]


def test_kubernetes_malformed_value_is_one_warning(tmp_path):
    out = tmp_path / "run.jsonl"
    env = tracker_env(KUBERNETES_SERVICE_HOST="10.0.0.1", CPU_REQUEST="-3", MEMORY_REQUEST="lots")
    r = track(["-i", "0.2", "-o", str(out)], env, SAY_AND_FAIL)
    assert r.returncode == 3 and r.stdout == "hello from the job\n"
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 2, r.stderr  # one per malformed value
    assert any("CPU_REQUEST" in w and "'-3'" in w for w in warnings)
    assert any("MEMORY_REQUEST" in w and "'lots'" in w for w in warnings)


def test_hung_scontrol_does_not_hang_the_run(slurm, tmp_path):
    pids = tmp_path / "pids"
    # the script and a child of its own hang; both are killed (its process group) at the timeout
    slurm.script("scontrol", f"echo $$ >> '{pids}'\nsleep 300 &\necho $! >> '{pids}'\nwait\n")
    out = tmp_path / "run.jsonl"
    r = track(["-i", "0.2", "-o", str(out)], slurm.env(), SAY_AND_FAIL, timeout=60)
    assert r.returncode == 3, r.stderr
    assert r.stdout == "hello from the job\n"
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "scontrol" in warnings[0] and "killed" in warnings[0], r.stderr
    assert {s.get("job_name") for s in lines_of(out)} == {"train"}  # the rest of the place stands
    for pid in map(int, pids.read_text().split()):
        assert process_state(pid) in (None, "Z"), pid  # gone, or dead and not yet reaped by its new parent


def process_state(pid):
    """The state letter of /proc/PID/stat, None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def test_failing_scontrol_and_squeue(slurm, tmp_path):
    out = tmp_path / "run.jsonl"
    slurm.script("scontrol", "echo 'slurm_load_jobs error: Socket timed out on send/recv operation' >&2\nexit 1\n")
    r = track(["-i", "0.2", "-o", str(out)], slurm.env(), "true")
    assert r.returncode == 0
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "status 1" in warnings[0], r.stderr
    # without scontrol, squeue is asked, as its man page's -o "%l %S" answers
    (slurm.bin / "scontrol").unlink()
    slurm.script("squeue", "echo '1:00:00 2026-11-25T05:00:00'\n")
    r = track(["-i", "0.2", "-o", str(out)], slurm.env(), "true")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert slurm.asked()[-1] == f"{slurm.bin}/squeue -h -j 4242 -o %l %S"


def test_place_off_reads_nothing(slurm, tmp_path):
    slurm.scontrol_answers("01:00:00", time.time() - 60)
    out = tmp_path / "run.jsonl"
    for how in (["--place", "off"], [], ["-c", str(tmp_path / "off.toml")]):
        (tmp_path / "off.toml").write_text('[tracker]\nplace = "off"\n')
        extra = {"TRACKER_PLACE": "off"} if not how else {}
        r = track(["-i", "0.2", "-o", str(out)] + how, slurm.env(SLURM_MEM_PER_NODE="abc", **extra), "true")
        assert r.returncode == 0, r.stderr
        assert "warning" not in r.stderr, (how, r.stderr)
        assert slurm.asked() == [], how
        assert all(s.get("job_name") is None for s in lines_of(out)), how
    # the same with the place looked for: asked, warned, named (the test can fail)
    r = track(["-i", "0.2", "-o", str(out)], slurm.env(SLURM_MEM_PER_NODE="abc"), "true")
    assert len(slurm.asked()) == 1 and "SLURM_MEM_PER_NODE" in r.stderr
    assert {s.get("job_name") for s in lines_of(out)} == {"train"}


def note_kinds(summary):
    return [n.get("kind") for n in summary.get("notes") or []]


def test_ran_to_its_time_limit_asks_twice(slurm, tmp_path):
    """0.20, after a kill, ask to learn: a job step whose time limit (SLURM_JOB_START_TIME and
    SLURM_JOB_END_TIME: 600 s, ending 2 s from now) runs out and is ended by the scheduler's
    SIGTERM (sent here after 3 s, as slurmstepd would at the end time): its duration is a floor,
    the time asked at least twice it, and the notes say so in place of "near the limit"."""
    now = time.time()
    env = slurm.env(SLURM_JOB_START_TIME=str(int(now) - 598), SLURM_JOB_END_TIME=str(int(now) + 2))
    out = tmp_path / "run.jsonl"
    p = subprocess.Popen([TRACKER, "-i", "0.5", "-o", str(out), "--", "/bin/sh", "-c", "exec sleep 60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(3)
        p.terminate()  # the end time passed: SIGTERM, as SLURM sends it
        _, err = p.communicate(timeout=60 * TIMEOUT_SCALE)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143, err  # the command's SIGTERM, passed through
    s = summary_json(out)
    assert s["efficiency"]["time_limit_pct"] >= 99, s["efficiency"]
    ended = [n["text"] for n in s["notes"] if n["kind"] == "time_ended"]
    assert ended and "it needs more than the" in ended[0] and "(2x the run) to learn it" in ended[0], s["notes"]
    assert "time_limit" not in note_kinds(s), s["notes"]  # one fact, one note
    r = run(["recommend", "--json", str(out)])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rec = doc["recommendation"]
    assert rec["time_floor_secs"] >= 599, rec
    assert rec["time_limit_secs"] >= 2 * rec["time_floor_secs"], rec
    assert re.search(r"--time=0:(2[0-9]|[3-5][0-9]):00", doc["schedulers"]["slurm"]), doc["schedulers"]


def test_memory_over_requested_note(slurm, tmp_path):
    # about 73 MiB needed of 1200 MB asked for: 6%
    slurm.scontrol_answers("01:00:00", time.time() - 60)
    out = tmp_path / "run.jsonl"
    r = track(["-i", "0.2", "-o", str(out), "--summary"], slurm.env(SLURM_MEM_PER_NODE="1200"), HOLD_64M)
    assert r.returncode == 0, r.stderr
    eff = summary_json(out)["efficiency"]
    assert eff["place"] == "slurm"
    assert eff["requested_memory_mib"] == 1200 and eff["requested_memory_from"] == "SLURM_MEM_PER_NODE"
    assert eff["requested_cpu_cores"] == 4 and eff["requested_cpu_from"] == "SLURM_CPUS_PER_TASK"
    assert 3 <= eff["memory_pct"] <= 15, eff
    s = summary_json(out)
    assert "memory_over_requested" in note_kinds(s), s.get("notes")
    live = notes_block(r.stderr)
    assert re.search(r"\d+% of the memory", live), r.stderr
    assert "SLURM_MEM_PER_NODE" in live


def test_time_limit_note(slurm, tmp_path):
    # started 9.5 minutes ago with a 10-minute limit: at 95% by the end of the run
    slurm.scontrol_answers("00:10:00", time.time() - 570)
    out = tmp_path / "run.jsonl"
    r = track(["-i", "0.2", "-o", str(out), "--summary"], slurm.env(), "sleep 1")
    assert r.returncode == 0, r.stderr
    s = summary_json(out)
    eff = s["efficiency"]
    assert eff["time_limit_secs"] == 600 and eff["time_limit_from"] == "scontrol"
    assert eff["time_limit_pct"] >= 95, eff
    assert "time_limit" in note_kinds(s), s.get("notes")
    assert re.search(r"time limit", notes_block(r.stderr)), r.stderr
