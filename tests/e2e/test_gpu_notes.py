"""The notes of what a job's GPUs did (0.19), each proven on a scripted workload: the real tool
wrapping a real job, the fake NVML (tests/stubs/fake_nvml.c, `cost off`) scripted to what the
job's GPU showed on an H200 (issue 65, ../shared/gpu-check's table): its GPM figures, its
utilization, the job on the GPU with its VRAM and SM share. For each note the workload that must
raise it (the summary's Notes, `summary --json`'s notes by kind, the figures in its text against
what was scripted) and the neighbour that must not. The starved GPU's test has the job itself
rewrite the config between its phases while it burns real cores, so its seconds are the kernel's
accounting of the job's CPU beside the fake's idle GPU."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, TIMEOUT_SCALE, TRACKER, tracker_env

FAKE = os.path.join(BUILD_DIR, "libfake-nvml.so")
PY = "/usr/bin/python3"
INTERVAL = 0.2

GIB = 1 << 30
GPU = "gpu uuid=GPU-1 name=NVIDIA_H200 mem_total=150754820096 mem_used={mem} util={util}"

# the H200's loads (util, and the GPM line's figures)
BF16_MATMUL = dict(util=99, sm=95.1, occ=14.1, tensor=92.4, hmma=92.4, dram=16.0, fp32=0, fp16=0, fp64=0)
DEVICE_COPY = dict(util=100, sm=98.9, occ=79.9, tensor=0, hmma=0, dram=88.3, fp32=0, fp16=0, fp64=0)
SMALL_MATMULS = dict(util=42, sm=15.9, occ=0.85, tensor=0, hmma=0, dram=0.5, fp32=2.3, fp16=0, fp64=0)
IDLE = dict(util=0, sm=0, occ=0, tensor=0, hmma=0, dram=0, fp32=0, fp16=0, fp64=0)

KINDS = ("gpu_busy_idle", "gpu_tensor_idle", "gpu_memory_bound", "gpu_starved", "gpu_held_unused")


def config(load, vram=2 * GIB, job_on_gpu=True, other=None, gpm=True):
    """The fake's config: one H200 showing load, the job's processes on it holding vram at the
    load's utilization (job_on_gpu), another process (other: (pid, sm)) beside it."""
    lines = ["cost off", GPU.format(mem=vram + (GIB if other else 0), util=load["util"])]
    if gpm:
        lines.append("gpm 0 " + " ".join(f"{k}={v}" for k, v in load.items() if k != "util"))
    if job_on_gpu:
        lines.append(f"children 0 mem={vram} sm={load['util'] - (other[1] if other else 0)}")
    if other:
        lines.append(f"pid 0 {other[0]} mem={GIB} sm={other[1]}")
    return "\n".join(lines) + "\n"


def track(tmp_path, cfg_text, job):
    """Runs the tool on job (argv) with the fake scripted to cfg_text; returns (the summary's
    text, summary --json)."""
    cfg, out = tmp_path / "nvml.cfg", tmp_path / "run.jsonl"
    cfg.write_text(cfg_text)
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.run([TRACKER, "-i", str(INTERVAL), "-o", str(out), "--", *job], capture_output=True, text=True,
                       env=env, timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    text = subprocess.run([TRACKER, "summary", str(out)], capture_output=True, text=True, env=env,
                          timeout=30 * TIMEOUT_SCALE)
    js = subprocess.run([TRACKER, "summary", "--json", str(out)], capture_output=True, text=True, env=env,
                        timeout=30 * TIMEOUT_SCALE)
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    return text.stdout, json.loads(js.stdout)


def gpu_notes(js):
    """{kind: text} of the summary's GPU work notes."""
    notes = {n["kind"]: n["text"] for n in js["notes"] if n["kind"] in KINDS}
    assert len(notes) == len([n for n in js["notes"] if n["kind"] in KINDS])  # never two of a kind
    return notes


def in_text(summary, note):
    """Whether the summary's text shows the note (its lines wrapped to fit a terminal)."""
    return note in " ".join(summary.split())


def pct(text, pattern):
    """The percent the pattern's group finds in text."""
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not in {text!r}"
    return float(m.group(1))


def near(found, scripted, js):
    """Whether a run's mean found is the scripted figure within the sampling's resolution: the
    tool's last sample comes after the job ended (its GPU figures 0 there), the note rounds."""
    share = 1 - 2 * INTERVAL / js["duration_secs"]
    return scripted * share - 0.5 <= found <= scripted + 0.5


SLEEP = ["sleep", "1.2"]


def test_busy_but_idle_small_kernels(tmp_path):
    """A loop of small fp32 matmuls: busy 42% of the time, its SMs 15.9% active: busy but idle
    (and its FP32 math on idle tensor cores); the bf16 matmuls keep their SMs busy."""
    text, js = track(tmp_path, config(SMALL_MATMULS), SLEEP)
    notes = gpu_notes(js)
    busy = notes["gpu_busy_idle"]
    assert busy.endswith("many small kernels; batch them or use CUDA graphs"), busy
    assert near(pct(busy, r"busy (\d+)% of the time"), 42, js), busy
    assert near(pct(busy, r"SMs were active (\d+)%"), 15.9, js), busy
    assert "device's figure" not in busy
    assert in_text(text, busy)
    assert set(notes) == {"gpu_busy_idle", "gpu_tensor_idle"}

    text, js = track(tmp_path, config(BF16_MATMUL), SLEEP)
    assert gpu_notes(js) == {}


def test_tensor_idle_fp32_math(tmp_path):
    """FP32 math with the tensor cores idle: the small fp32 matmuls (FP32 2.3%) and large ones
    (scripted: SMs 96%, FP32 70%, alone of the notes); the bf16 matmuls use the tensor cores."""
    text, js = track(tmp_path, config(SMALL_MATMULS), SLEEP)
    note = gpu_notes(js)["gpu_tensor_idle"]
    assert note.startswith("tensor cores idle (0%) while the SMs did FP32 math"), note
    assert near(pct(note, r"FP32 units ([\d.]+)% busy"), 2.3, js), note
    assert note.endswith("mixed precision (bf16/fp16 autocast, TF32) would use them")
    assert in_text(text, note)

    large = dict(util=100, sm=96, occ=40, tensor=0, hmma=0, dram=30, fp32=70, fp16=0, fp64=0)
    text, js = track(tmp_path, config(large), SLEEP)
    notes = gpu_notes(js)
    assert set(notes) == {"gpu_tensor_idle"}
    assert near(pct(notes["gpu_tensor_idle"], r"FP32 units (\d+)% busy"), 70, js)

    text, js = track(tmp_path, config(BF16_MATMUL), SLEEP)
    assert "gpu_tensor_idle" not in gpu_notes(js)


def test_memory_bound_copy(tmp_path):
    """The device copy: DRAM 88% with every math unit idle (its SMs 99% active, waiting on
    memory): memory-bound; the bf16 matmuls (DRAM 16%, tensor 92%) are not."""
    text, js = track(tmp_path, config(DEVICE_COPY), SLEEP)
    notes = gpu_notes(js)
    assert set(notes) == {"gpu_memory_bound"}
    note = notes["gpu_memory_bound"]
    assert near(pct(note, r"bandwidth at (\d+)%"), 88.3, js), note
    assert "math units at most 0% busy" in note
    assert note.endswith("memory-bound; fuse kernels, use larger batches, or a GPU with more bandwidth")
    assert in_text(text, note)

    text, js = track(tmp_path, config(BF16_MATMUL), SLEEP)
    assert "gpu_memory_bound" not in gpu_notes(js)


def test_shared_gpu(tmp_path):
    """Another process on the job's GPU: the work figures are the device's. Busy but idle still
    holds (the device's SM activity is never below the job's) and says whose figure it is; the
    tensor and memory notes are held back (the math or the bandwidth may be the other's)."""
    load = dict(SMALL_MATMULS, util=52)
    text, js = track(tmp_path, config(load, other=(1, 10)), SLEEP)
    notes = gpu_notes(js)
    assert set(notes) == {"gpu_busy_idle"}, notes
    assert "(the device's figure: other processes shared it; the job's own is at most that)" in notes["gpu_busy_idle"]
    assert near(pct(notes["gpu_busy_idle"], r"busy (\d+)% of the time"), 42, js)

    text, js = track(tmp_path, config(DEVICE_COPY, other=(1, 10)), SLEEP)
    assert "gpu_memory_bound" not in gpu_notes(js)


def test_no_gpm_no_work_note(tmp_path):
    """A GPU without GPM (older GPUs, old drivers): utilization only, and no note claims the
    work figures it has not got."""
    text, js = track(tmp_path, config(SMALL_MATMULS, gpm=False), SLEEP)
    assert gpu_notes(js) == {}


def test_held_never_used(tmp_path):
    """A job that held 2 GiB on its GPU (a CUDA context) and never ran a kernel; the neighbours:
    one that used it, one on no GPU at all (the machine's idle GPU has its own note)."""
    text, js = track(tmp_path, config(IDLE), SLEEP)
    notes = gpu_notes(js)
    assert set(notes) == {"gpu_held_unused"}
    assert notes["gpu_held_unused"] == ("the job held 2 GiB of VRAM on a GPU and never used it (GPU usage and SM "
                                        "activity 0 all run): drop the GPU (or the CUDA init in a process that needs "
                                        "none)")
    assert in_text(text, notes["gpu_held_unused"])
    assert not any(n["kind"] in ("gpu_idle", "gpu_unused") for n in js["notes"])

    text, js = track(tmp_path, config(SMALL_MATMULS), SLEEP)
    assert "gpu_held_unused" not in gpu_notes(js)

    text, js = track(tmp_path, config(IDLE, job_on_gpu=False), SLEEP)
    assert gpu_notes(js) == {}
    assert [n["kind"] for n in js["notes"] if n["kind"].startswith("gpu")] == ["gpu_idle"]


# The starved GPU's job: it burns BURNERS processes for CPU_SECS while its GPU idles (so that it
# keeps a quarter of a core or more busy with `stress-ng --cpu 2` beside it on two cores: 3 of 5
# runnable tasks, 1.2 cores; with the kernel's autogroup its session's share, 1 core, 0.5 with
# two more sessions busy), then rewrites the fake's config to the GPU's busy figures, notes the time (Unix) in its last argument's file,
# and sleeps GPU_SECS.
BURNERS, CPU_SECS, GPU_SECS = 3, 2.4, 0.8
STARVING_JOB = r"""
import os, sys, time
cfg, busy, cpu_secs, burners, gpu_secs, switched = sys.argv[1:7]
end = time.monotonic() + float(cpu_secs)
kids = []
for _ in range(int(burners)):
    pid = os.fork()
    if pid == 0:
        while time.monotonic() < end:
            pass
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
with open(cfg + ".tmp", "w") as f:
    f.write(busy)
os.replace(cfg + ".tmp", cfg)
with open(switched, "w") as f:
    f.write(repr(time.time()))
time.sleep(float(gpu_secs))
"""


@pytest.mark.serial  # the job's CPU share against the machine's cores
def test_starved_by_the_cpu(tmp_path):
    """The job keeps cores busy for 2.4 s with its GPU idle (held, nothing running), then runs
    bf16 matmuls for 0.8 s with its CPU quiet: its GPU idled about three quarters of the run
    while its CPU was busy. The neighbour does the same with its GPU busy all along."""
    busy, switched = config(BF16_MATMUL), tmp_path / "switched"
    job = [PY, "-c", STARVING_JOB, str(tmp_path / "nvml.cfg"), busy, str(CPU_SECS), str(BURNERS), str(GPU_SECS),
           str(switched)]
    text, js = track(tmp_path, config(IDLE), job)
    notes = gpu_notes(js)
    assert set(notes) == {"gpu_starved"}, js["notes"]
    note = notes["gpu_starved"]
    assert note.endswith("while its CPU was busy (a quarter of a core or more): the input pipeline starves it "
                         "(more DataLoader workers, pin_memory, prefetch)"), note
    share = pct(note, r"idled (\d+)% of the run")
    m = re.search(r"\(([\d.]+) s of ([\d.]+) s\)", note)
    idle, run = float(m.group(1)), float(m.group(2))
    run_secs = js["duration_secs"]  # the text's seconds are rounded to 0.1 s, its share to 1%
    assert abs(run - run_secs) <= 0.05 and abs(100 * idle / run_secs - share) <= 100 * 0.05 / run_secs + 0.5, \
        (note, run_secs)
    # the idle GPU's seconds are those from the run's start to the switch (the job's start-up, then
    # its CPU phase), to the sample (one at each edge); a loaded machine may take records out (a
    # moment the job's cores fell under a quarter of a core), never put them in
    scripted = float(switched.read_text()) - js["start_secs"]
    assert scripted / 2 <= idle <= scripted + 2 * INTERVAL + 0.05, (idle, scripted)
    assert in_text(text, note)

    text, js = track(tmp_path, busy, job)
    assert gpu_notes(js) == {}
