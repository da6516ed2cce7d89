"""The GPU ask (docs/answers.md, "The GPU ask"), run as a user would: a short job tracked on the
fake NVML (tests/stubs/fake_nvml.c) whose children hold a known amount of VRAM, then its summary,
`recommend` (text and --json) and `report`, each judged against what the fake GPU held and the
shipped table of GPU models (data/gpu-models.csv): the summary of a 33 GiB job on a 141 GiB H200
names the GPU memory it needs (accounting on and off); two GPUs held with work on one or both;
what the smaller GPU saves against the local Keeper stand-in, and without prices. Every run sets
TRACKER_CLOUD_DISCOVERY=0, and TRACKER_KEEPER_URL to off or the stand-in on 127.0.0.1."""
import csv
import html
import importlib.util
import json
import math
import os
import re
import subprocess

import pytest

from conftest import BUILD_DIR, REPO, TRACKER, tracker_env

FAKE = os.path.join(BUILD_DIR, "libfake-nvml.so")
SERVER = os.path.join(REPO, "tests", "stubs", "keeper_server.py")
PY = "/usr/bin/python3"
H200 = "gpu uuid=GPU-h200 name=NVIDIA_H200 mem_total=150754820096 mem_used=0 util=95"
GPM_LOW = "gpm 0 sm=15.9 occ=0.85 tensor=0 hmma=0 dram=0.5 fp32=2.3 fp16=0 fp64=0"
HELD = 35540000000  # bytes the job's children hold on the GPU: 33.1 GiB
JOB = [PY, "-c", "import time; time.sleep(1.2)"]


def models():
    """data/gpu-models.csv's rows, in its order."""
    with open(os.path.join(REPO, "data", "gpu-models.csv")) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def asked(need_mib):
    """The size rule, from the table: the smallest memory that holds the need plus 20% headroom
    (one run), and the models with at least that much, smallest first."""
    want = need_mib * 1.2
    size = min(int(r["memory_mib"]) for r in models() if int(r["memory_mib"]) >= want)
    fit = sorted((r for r in models() if int(r["memory_mib"]) >= size), key=lambda r: int(r["memory_mib"]))
    return size, [r["model"] for r in fit]


def gib(mib):
    """GiB as the words put it: rounded down to a tenth, no ".0"."""
    t = math.floor(mib / 1024 * 10 + 1e-9) / 10
    return f"{t:.0f}" if t == int(t) else f"{t:.1f}"


def record(tmp_path, cfg, name="run"):
    """Tracks JOB at -i 0.2 on the fake NVML configured by cfg (NVML's costs off); the file."""
    (tmp_path / f"{name}.cfg").write_text("cost off\n" + cfg)
    out = tmp_path / f"{name}.jsonl"
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(tmp_path / f"{name}.cfg"),
                      TRACKER_KEEPER_URL="off")
    p = subprocess.run([TRACKER, "-i", "0.2", "-o", str(out), "--", *JOB], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return out


def tool(*args, keeper="off", **extra):
    p = subprocess.run([TRACKER, *map(str, args)], env=tracker_env(TRACKER_KEEPER_URL=keeper, **extra),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def summary_field(text, label):
    """A labelled line of the summary's answer with its wrapped lines, as one line."""
    lines = text.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith(label))
    part = [lines[i][12:]]
    for l in lines[i + 1:]:
        if not l.startswith(" " * 12):
            break
        part.append(l.strip())
    return " ".join(part)


def report_row(page, row_id):
    m = re.search(r'<tr id="%s">(.*?)</tr>\n' % row_id, page, re.S)
    assert m, f"no {row_id} row"
    return html.unescape(re.sub(r"<[^>]+>", " ", m.group(1)))


class Keeper:
    """The stand-in on a free port, stopped by its own pid."""

    def __init__(self, tmp_path):
        self.log = tmp_path / "keeper.json"
        self.p = subprocess.Popen([PY, SERVER, "--log", str(self.log)], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.p.stdout.readline())}"

    def queries(self):
        return [r["raw_query"] for r in json.loads(self.log.read_text()) if r["path"] == "/servers"]

    def stop(self):
        self.p.kill()
        self.p.wait()


@pytest.fixture(scope="module")
def h200_run(tmp_path_factory):
    """The issue's job: 33.1 GiB on a 141 GiB H200, its SMs 15.9% active (accounting off)."""
    return record(tmp_path_factory.mktemp("h200"), f"{H200}\n{GPM_LOW}\nchildren 0 mem={HELD} sm=42\n")


@pytest.mark.parametrize("accounting", [False, True])
def test_h200_job_asks_for_40_gib(tmp_path, h200_run, accounting):
    """The issue's "done when": the summary of a 33 GiB job on a 141 GiB GPU names the GPU memory
    it needs, and recommend, the Kubernetes and SLURM words and the report say the same."""
    run = h200_run
    if accounting:  # NVML's accounting of the children: its peak is the need
        run = record(tmp_path, f"{H200}\n{GPM_LOW}\nchildren 0 mem={HELD} sm=42\naccounting 0 on\n"
                               f"acct_children 0 mem={HELD}\n")
    need = HELD / 2**20
    size, fit = asked(need)
    assert size == 40960 and fit[:2] == ["A100 40GB", "L40S 48GB"]  # the table, as the issue expects
    words = f"1 GPU with >= {gib(size)} GiB (peak {HELD / 2**30:.1f} GiB)"
    assert words == "1 GPU with >= 40 GiB (peak 33.1 GiB)"
    # the summary's answer
    text = tool("summary", run)
    ask = summary_field(text, "Ask for")
    assert f", {words}: " in ask and "--gres=gpu:1 " in ask and ask.endswith("(SLURM)"), ask
    gpu = summary_field(text, "GPU ask")
    assert f"GPUs with >= 40 GiB: {', '.join(fit[:4])} (and {len(fit) - 4} larger)" in gpu, gpu
    assert "--constraint=FEATURE" in gpu and "a 40 GiB GPU would do" in gpu
    # recommend, text
    text = tool("recommend", run)
    assert f"gpu: {words}\n" in text
    assert f"vram: {size} MiB ({size / 1024:.2f} GiB) each GPU\n" in text
    src = "VRAM peak, NVML's accounting" if accounting else "VRAM peak of the samples"
    assert f"vram from: {need:.1f} MiB held on one GPU ({src}) + 20% headroom" in text
    assert f"note: GPUs with >= 40 GiB: {', '.join(fit[:4])}" in text
    assert "note: SLURM: --gres=gpu:1 takes any GPU: add --constraint=FEATURE" in text
    assert "note: Metaflow: @resources(gpu=1) has no GPU memory knob" in text
    # recommend --json
    j = json.loads(tool("recommend", run, "--json"))
    r = j["recommendation"]
    assert r["gpu"] == 1 and r["gpu_held"] == 1 and r["gpu_busy"] == 1
    assert r["gpu_words"] == words
    assert r["vram_per_gpu_mib"] == size and r["vram_per_gpu_gib"] == size / 1024
    assert r["vram_per_gpu_need_mib"] == pytest.approx(need, abs=0.001)
    assert r["vram_per_gpu_source"] == ("nvml_peak" if accounting else "vram")
    assert r["gpu_models"] == fit[:4] and r["gpu_models_count"] == len(fit)
    assert r["gpu_memory_had_mib"] == 150754820096 / 2**20
    assert r["gpu_smaller"] is True and r["gpu_sm_active_pct"] < 25
    assert j["gpu_like_this"] is None  # no lookup
    k8s = j["schedulers"]["kubernetes"]
    assert k8s.endswith('; affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: '
                       '{nodeSelectorTerms: [{matchExpressions: [{key: nvidia.com/gpu.memory, operator: Gt, '
                       f'values: ["{size - 1}"]}}]}}]}}}}}}'), k8s
    assert 'nvidia.com/gpu: "1"' in k8s
    assert " --gres=gpu:1 " in j["schedulers"]["slurm"] + " "
    assert "--constraint" in r["gpu_scheduler_notes"]["slurm"]
    assert "nvidia.com/gpu.memory" in r["gpu_scheduler_notes"]["kubernetes"]
    assert "no GPU memory knob" in r["gpu_scheduler_notes"]["metaflow"]
    # the report's ask
    out = tmp_path / "r.html"
    tool("report", run, "-o", out)
    page = out.read_text()
    row = report_row(page, "answer-ask")
    assert words in row and f'values: ["{size - 1}"]' in row, row
    row = report_row(page, "answer-gpu")
    assert ", ".join(fit[:4]) in row and "a 40 GiB GPU would do" in row and "--constraint" in row, row


def test_two_gpus_held_one_busy(tmp_path):
    """Memory on two GPUs, work (per-process SM) on one: ask for 1 and say why; busy on both: 2,
    each with the memory the larger held."""
    def h100s(u0, u1):  # each GPU's own utilization is the job's (its processes alone on it)
        return "".join(f"gpu uuid=GPU-{i} name=NVIDIA_H100_80GB_HBM3 bus=00000000:0{i + 1}:00.0 "
                       f"mem_total=85520809984 mem_used=0 util={u}\n" for i, u in enumerate((u0, u1)))
    big, small = 20000 * 2**20, 10000 * 2**20
    size, fit = asked(big / 2**20)
    one = record(tmp_path, f"{h100s(60, 0)}children 0 mem={big} sm=60\nchildren 1 mem={small}\n", "one")
    both = record(tmp_path, f"{h100s(60, 30)}children 0 mem={big} sm=60\nchildren 1 mem={small} sm=30\n", "both")
    peak = f"{big / 2**30:.1f}"
    text = tool("summary", one)
    assert f", 1 GPU with >= {gib(size)} GiB (peak {peak} GiB): " in summary_field(text, "Ask for")
    assert "2 GPUs held, 1 did work: ask for 1" in summary_field(text, "GPU ask")
    r = json.loads(tool("recommend", one, "--json"))["recommendation"]
    assert (r["gpu"], r["gpu_held"], r["gpu_busy"]) == (1, 2, 1)
    assert r["vram_per_gpu_need_mib"] == pytest.approx(big / 2**20, abs=0.001)  # the larger, not the sum
    assert r["vram_per_gpu_mib"] == size and r["gpu_models"] == fit[:4]
    assert "2 GPUs held, 1 did work: ask for 1" in r["gpu_notes"]
    assert "--gres=gpu:1" in json.loads(tool("recommend", one, "--json"))["schedulers"]["slurm"]
    r = json.loads(tool("recommend", both, "--json"))["recommendation"]
    assert (r["gpu"], r["gpu_held"], r["gpu_busy"]) == (2, 2, 2)
    assert r["gpu_words"] == f"2 GPUs with >= {gib(size)} GiB each (peak {peak} GiB on one)"
    assert r["vram_per_gpu_mib"] == size
    assert not any("did work" in n for n in r["gpu_notes"])
    text = tool("recommend", both)
    assert "SLURM: --cpus-per-task=1 --mem=128M --gres=gpu:2 " in text


def stand_in_catalog():
    spec = importlib.util.spec_from_file_location("keeper_server", SERVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CATALOG


def cheapest_with(per_gpu_mib):
    """The stand-in's cheapest server with one GPU of at least per_gpu_mib."""
    fits = [s for s in stand_in_catalog() if s["gpu_count"] >= 1 and (s["gpu_memory_min"] or 0) >= per_gpu_mib]
    return min(fits, key=lambda s: s["min_price_ondemand"])


def test_smaller_gpu_saving(tmp_path, h200_run):
    """Against the Keeper stand-in pricing a 40 GB-class server and an H200 one: the line with both
    prices and the percentage, in recommend and the report; with TRACKER_KEEPER_URL=off only the
    smaller GPU."""
    size, _ = asked(HELD / 2**20)
    small, like = cheapest_with(size), cheapest_with(150754820096 / 2**20)
    assert small["api_reference"] == "g6e.xlarge" and like["api_reference"] == "gpu-h200x1"
    a, b = small["min_price_ondemand"], like["min_price_ondemand"]
    pct = round(100 * (a - b) / b)
    saving = (f"a 40 GiB GPU would do: the cheapest server with one, {small['vendor_id']} {small['api_reference']}, "
              f"costs ${a}/h against ${b:.2f}/h for one like this ({pct:+d}%)")
    assert saving.endswith("costs $1.861/h against $4.50/h for one like this (-59%)")
    k = Keeper(tmp_path)
    try:
        text = tool("recommend", h200_run, keeper=k.url)
        assert re.search(r"^note: the job held 33\.1 GiB of its GPU's 140\.4 GiB, its SMs \d+\.\d% active: "
                         + re.escape(saving) + "$", text, re.M), text
        j = json.loads(tool("recommend", h200_run, "--json", keeper=k.url))
        assert j["cheapest"]["api_reference"] == "g6e.xlarge"
        assert j["gpu_like_this"]["api_reference"] == "gpu-h200x1" and j["gpu_like_this"]["price_usd_per_hour"] == b
        assert any(n.endswith(saving) for n in j["recommendation"]["gpu_notes"])
        out = tmp_path / "r.html"
        tool("report", h200_run, "-o", out, keeper=k.url)
        assert saving in report_row(out.read_text(), "answer-gpu")
        # the query: each GPU's memory and all of them, in Keeper's GB (MiB / 1024); then one
        # like the job's (its 143771 MiB)
        q = k.queries()
        assert "&gpu_min=1&gpu_memory_min=40&gpu_memory_total=40&" in q[0], q
        assert "&gpu_min=1&gpu_memory_min=140.4013671875&gpu_memory_total=140.4013671875&" in q[1], q
    finally:
        k.stop()
    text = tool("recommend", h200_run)  # prices off: the smaller GPU alone
    assert re.search(r"^note: the job held 33\.1 GiB of its GPU's 140\.4 GiB, its SMs \d+\.\d% active: "
                     r"a 40 GiB GPU would do$", text, re.M), text
    assert "cheapest server" not in text
