"""Where the job runs, from Python (C library 0.16): a tracker started under SLURM's variables
measures the job against what SLURM gave it (stats(efficiency=True), as `summary --json`'s
"efficiency"), TRACKER_PLACE=off reads nothing, and a run with nothing said has no efficiency.
Each case runs in a child process so that its environment is its own."""
import json
import os
import subprocess
import sys

PROBE = r"""
import json, time
from resource_tracker import ResourceTracker
with ResourceTracker(interval=0.1) as t:
    held = bytearray(40 << 20)  # 40 MiB touched
    end = time.time() + 0.6
    while time.time() < end:
        pass
print(json.dumps(t.stats(efficiency=True)["efficiency"]))
"""


def probe(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "GITHUB_")) and k not in ("KUBERNETES_SERVICE_HOST", "TRACKER_PLACE")}
    env["PATH"] = "/nonexistent"  # no scontrol, no squeue (the machine may have SLURM): no time limit
    env.update(extra)
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_slurm_request_gives_the_efficiency():
    eff = probe({"SLURM_JOB_ID": "77", "SLURM_CPUS_PER_TASK": "4", "SLURM_MEM_PER_NODE": "1024"})
    assert eff["place"] == "slurm"
    assert eff["requested_cpu_cores"] == 4 and eff["requested_cpu_from"] == "SLURM_CPUS_PER_TASK"
    assert eff["requested_memory_mib"] == 1024 and eff["requested_memory_from"] == "SLURM_MEM_PER_NODE"
    assert 0 < eff["cpu_pct"] <= 25 + 1  # one busy core at most, of 4
    assert 3 <= eff["memory_pct"] <= 20, eff  # 40 MiB and the interpreter, of 1 GiB
    assert eff["time_limit_secs"] is None and eff["time_limit_pct"] is None  # nothing said it


def test_place_off_and_nothing_said():
    off = probe({"SLURM_JOB_ID": "77", "SLURM_CPUS_PER_TASK": "4", "TRACKER_PLACE": "off"})
    plain = probe({})
    for eff in (off, plain):  # no request; a cgroup limit of the test's own may still say something
        assert eff is None or (eff["place"] is None and eff["requested_cpu_from"] != "SLURM_CPUS_PER_TASK"), eff


def test_malformed_value_is_not_a_figure():
    eff = probe({"SLURM_JOB_ID": "77", "SLURM_MEM_PER_NODE": "abc", "SLURM_CPUS_PER_TASK": "2"})
    assert eff["place"] == "slurm" and eff["requested_cpu_cores"] == 2
    mem_from = eff["requested_memory_from"]  # not the malformed variable: nothing, or a cgroup's limit
    assert mem_from is None or mem_from.startswith("cgroup"), eff
