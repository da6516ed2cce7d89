"""What a GPU did (issue 65 item 1: NVML GPM's SM activity, tensor cores, DRAM bandwidth, FP units,
PCIe and NVLink traffic), end to end through the fake NVML (tests/stubs/fake_nvml.c, `cost off`):
real runs of the tool whose JSON line carries exactly what the fake scripted, per GPU, per MIG
instance and for the job (its scope: the job's alone, or the device's when another process
shares it); and every view a person or a service reads: the summary's text (80 columns), JSON and
Markdown, the history's columns and table, the report's chart (its page data and Chromium's DOM),
OTLP's points (the strict receiver stand-in) and Prometheus' series (the real server); a GPU
without GPM and an old driver without GPM's symbols give nulls and the summary's one line
"utilization only". Jobs of 1-2 s at -i 0.2."""
import json
import os
import re
import sqlite3
import subprocess
import time

import pytest

import report_util as ru
from conftest import BUILD_DIR, TIMEOUT_SCALE, TRACKER, tracker_env

FAKE = os.path.join(BUILD_DIR, "libfake-nvml.so")
FAKE_MIN = os.path.join(BUILD_DIR, "libfake-nvml-min.so")
PY = "/usr/bin/python3"
MIB = 1048576

# NVML's utilization 42: the job's own where it is alone on the GPU (its per-process samples are read
# only where another process shares it)
H200 = "gpu uuid=GPU-1 name=NVIDIA_H200 mem_total=150754820096 mem_used=0 mem_reserved=645922816 util=42"
# every GPM metric the fake offers, as a loop of small fp32 matmuls left them on an H200 (and some
# traffic); pcie_* and nvlink_* in MiB/s
GPM = ("gpm 0 sm=15.9 occ=0.85 tensor=12.5 hmma=10 imma=2 dfma=0.5 dram=30.25 fp64=1.5 fp32=2.3 fp16=4 "
       "pcie_tx=10 pcie_rx=20 nvlink_tx=5 nvlink_rx=6")
JOB_ON_GPU = "children 0 mem=35540000000 sm=42"
WANT = {"sm_active_pct": 15.9, "sm_occupancy_pct": 0.85, "tensor_active_pct": 12.5, "tensor_hmma_active_pct": 10,
        "tensor_imma_active_pct": 2, "tensor_dfma_active_pct": 0.5, "dram_active_pct": 30.25, "fp64_active_pct": 1.5,
        "fp32_active_pct": 2.3, "fp16_active_pct": 4, "pcie_tx_bytes_per_sec": 10 * MIB,
        "pcie_rx_bytes_per_sec": 20 * MIB, "nvlink_tx_bytes_per_sec": 5 * MIB, "nvlink_rx_bytes_per_sec": 6 * MIB}
WORK_KEYS = tuple(WANT)


def config(tmp_path, *lines):
    cfg = tmp_path / "nvml.cfg"
    cfg.write_text("cost off\n" + "\n".join(lines) + "\n")
    return cfg


def track(tmp_path, cfg, *flags, secs=1.2, lib=FAKE, out="s.jsonl"):
    """The tool wrapping a job of secs seconds, every 0.2 s; its JSON lines."""
    path = tmp_path / out
    env = tracker_env(TRACKER_NVML_LIBRARY=lib, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.run([TRACKER, "-q", "-i", "0.2", "-o", str(path), *flags, "--", PY, "-c",
                        f"import time; time.sleep({secs})"], capture_output=True, text=True, env=env,
                       timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    return path, [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def tool(*args, env=None):
    p = subprocess.run([TRACKER, *args], capture_output=True, text=True, env=env or tracker_env(),
                       timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    return p.stdout


def with_work(lines):
    """The lines whose GPU gave its work (GPM compares two samples), the job alive."""
    got = [s for s in lines if s["gpu"] and s["gpu"][0]["sm_active_pct"] is not None and s["process"]["alive"]]
    assert got, "no line with the GPU's work"
    return got


def work_line(text):
    """The summary text's "GPU work" line, its broken lines joined."""
    m = re.search(r"\n  GPU work {19}(.*\n(?: {29}.*\n)*)", text)
    assert m, text
    return " ".join(l.strip() for l in m.group(1).splitlines()), m.group(0)


def summary_json(path):
    return json.loads(tool("summary", "--json", str(path)))


# ---- the JSON line ----------------------------------------------------------------------------


def test_json_line_carries_what_the_fake_scripted(tmp_path):
    """Each GPU's 14 work keys, its reserved memory and empty mig[]; the job's gpu_* keys (its one
    GPU's, scope job: it is alone there), the GPUs it kept busy and its VRAM on one GPU."""
    _, lines = track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU))
    assert all(k in lines[0]["gpu"][0] for k in WORK_KEYS)
    for s in with_work(lines):
        g, p = s["gpu"][0], s["process"]
        assert {k: g[k] for k in WORK_KEYS} == pytest.approx(WANT, abs=0.005), g
        assert g["vram_reserved_bytes"] == 645922816 and g["mig"] == []
        assert {k: p["gpu_" + k] for k in WORK_KEYS} == pytest.approx(WANT, abs=0.005), p
        assert p["gpu_work_scope"] == "job"
        assert p["gpu_count_busy"] == 1 and p["gpu_vram_per_gpu_max_bytes"] == 35540000000


def test_rewritten_mid_run_folds_time_weighted(tmp_path):
    """The config rewritten mid-run: each line's SM activity is one of the scripted values or
    between them (the fake integrates over time), and the summary's mean is the records' mean
    weighted by their intervals, its peak the higher value."""
    cfg = config(tmp_path, H200, "gpm 0 sm=10 dram=1", JOB_ON_GPU)
    path = tmp_path / "s.jsonl"
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "-q", "-i", "0.2", "-o", str(path), "--", PY, "-c", "import time; time.sleep(1.6)"],
                         env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20 * TIMEOUT_SCALE
    while (not path.exists() or path.read_text().count("\n") < 3) and time.monotonic() < deadline:
        time.sleep(0.02)
    new = tmp_path / "nvml.new"
    new.write_text(f"cost off\n{H200}\ngpm 0 sm=50 dram=1\n{JOB_ON_GPU}\n")
    os.replace(new, cfg)  # whole at once
    assert p.wait(timeout=60 * TIMEOUT_SCALE) == 0, p.stderr.read()
    p.stderr.close()
    lines = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    sm = [s["process"]["gpu_sm_active_pct"] for s in with_work(lines)]
    assert sm[0] == 10 and sm[-1] == 50 and all(10 <= v <= 50 for v in sm), sm
    known = [s for s in lines if s["process"]["gpu_sm_active_pct"] is not None]
    mean = sum(s["process"]["gpu_sm_active_pct"] * s["interval_secs"] for s in known) / sum(
        s["interval_secs"] for s in known)
    got = summary_json(path)["gpu_work"]["sm_active_pct"]
    assert got["mean"] == pytest.approx(mean, abs=0.006) and got["peak"] == 50


# ---- MIG: the job's instance, and who else is in it --------------------------------------------


@pytest.mark.parametrize("other,scope", [(None, "job"), ("pid 0 1 mem=5 sm=10 gi=1", "device"),
                                         ("pid 0 1 mem=5 sm=10 gi=2", "job")])
def test_mig_instance_is_the_jobs(tmp_path, other, scope):
    """A GPU in MIG mode: its instances in mig[] with their own work; the job's processes in
    instance 1 (gi=1): the job's work is that instance's, scope job; another process in the same
    instance makes it the device's; one in another instance does not."""
    lines_cfg = [H200, "mig 0 1 sm=42 tensor=7 dram=3 fp32=1", "mig 0 2 sm=5", "children 0 mem=1073741824 sm=50 gi=1"]
    _, lines = track(tmp_path, config(tmp_path, *lines_cfg, *([other] if other else [])))
    got = [s for s in lines if s["process"]["alive"] and s["gpu"][0]["mig"] and
           s["gpu"][0]["mig"][0]["sm_active_pct"] is not None]
    assert got
    for s in got:
        mig = s["gpu"][0]["mig"]
        assert [(m["gpu_instance_id"], m["uuid"]) for m in mig] == [(1, "MIG-1-1"), (2, "MIG-1-2")]
        assert (mig[0]["sm_active_pct"], mig[0]["tensor_active_pct"], mig[0]["dram_active_pct"]) == (42, 7, 3)
        assert mig[1]["sm_active_pct"] == 5 and mig[1]["tensor_active_pct"] is None
        assert s["gpu"][0]["sm_active_pct"] is None  # the GPU itself was given no gpm line
        p = s["process"]
        assert (p["gpu_sm_active_pct"], p["gpu_tensor_active_pct"], p["gpu_fp32_active_pct"]) == (42, 7, 1)
        assert p["gpu_work_scope"] == scope


# ---- the summary: text at 80 columns, JSON, Markdown --------------------------------------------


def test_summary_text_json_markdown(tmp_path):
    path, lines = track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU))
    s = summary_json(path)
    w = s["gpu_work"]
    assert list(w) == ["sm_active_pct", "sm_occupancy_pct", "tensor_active_pct", "dram_active_pct", "fp64_active_pct",
                       "fp32_active_pct", "fp16_active_pct", "pcie_bytes_per_sec", "nvlink_bytes_per_sec", "shared"]
    assert list(s)[-3:] == ["gpu_work", "end_signal", "clock"] and w["shared"] is False
    assert (w["sm_active_pct"]["peak"], w["fp32_active_pct"]["p95"]) == (15.9, 2.3)
    assert w["pcie_bytes_per_sec"]["peak"] == 30 * MIB and w["nvlink_bytes_per_sec"]["peak"] == 11 * MIB
    assert s["process"]["gpus_busy"] == 1
    assert s["process"]["gpu_vram_per_gpu_peak_mib"] == pytest.approx(35540000000 / MIB, abs=0.001)
    assert s["process"]["gpu_idle_cpu_busy_secs"] == 0  # the job's GPU never idled

    # the text a person reads in a terminal of 80 columns (a pty)
    r = subprocess.run(["script", "-qc", f"stty cols 80; {TRACKER} summary {path}", "/dev/null"], capture_output=True,
                       text=True, env=tracker_env(), timeout=60 * TIMEOUT_SCALE)
    text = r.stdout.replace("\r\n", "\n")
    words, block = work_line(text)
    # the means as the JSON keeps them (2 decimals) and as the text shows them (1, of the unrounded)
    shape = (r"SM ([\d.]+)% \(p95 15\.9, peak 15\.9\), tensor ([\d.]+)%, DRAM ([\d.]+)%, FP64 ([\d.]+)%, "
             r"FP32 ([\d.]+)%, FP16 ([\d.]+)%; PCIe ([\d.]+) MiB/s, NVLink ([\d.]+) MiB/s")
    m = re.fullmatch(shape, words)
    assert m, words
    keys = ("sm_active_pct", "tensor_active_pct", "dram_active_pct", "fp64_active_pct", "fp32_active_pct",
            "fp16_active_pct", "pcie_bytes_per_sec", "nvlink_bytes_per_sec")
    for k, shown in zip(keys, m.groups()):
        want = w[k]["mean"] / (MIB if k.endswith("_sec") else 1)
        assert abs(float(shown) - want) <= (0.5 if k.endswith("_sec") and want >= 9.95 else 0.05) + 0.006, (k, words)
    rows = block.strip("\n").splitlines()
    assert len(rows) == 3 and all(len(l) <= 80 for l in rows), block  # under its own column, 80 wide
    assert all(re.match(r" {29}(tensor|DRAM|FP\d\d|PCIe|NVLink) ", l) for l in rows[1:]), block  # a figure never cut
    assert text.index("GPUs used") < text.index("GPU work") < text.index("Peak RSS of a process")
    assert "shared with other processes" not in text and "utilization only" not in text

    md = tool("summary", "--format", "markdown", str(path))
    assert f"| GPU work (the job's GPUs) | {words} |" in md


def test_shared_gpu_is_said_to_be_the_devices(tmp_path):
    """Another process on the job's GPU: the figures are the device's, and each view says so."""
    db = tmp_path / "h.db"
    path, lines = track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU, "pid 0 1 mem=5 sm=10"), "--history",
                        str(db))
    assert {s["process"]["gpu_work_scope"] for s in with_work(lines)} == {"device"}
    assert summary_json(path)["gpu_work"]["shared"] is True
    words, _ = work_line(tool("summary", str(path)))
    assert re.search(r"; PCIe [\d.]+ MiB/s, NVLink [\d.]+ MiB/s \(the devices', shared with other processes\)$", words)
    table = tool("history", "--history", str(db))
    assert "% (shared)" in table.splitlines()[1]
    html = tmp_path / "r.html"
    tool("report", str(path), "-o", str(html))
    assert "The job&#39;s GPUs, shared with other processes: the figures are the devices&#39;" in html.read_text()


# ---- without GPM: a GPU that gives none, an old driver without its symbols -----------------------


def assert_no_work(lines):
    for s in lines:
        g, p = s["gpu"][0], s["process"]
        assert all(g[k] is None for k in WORK_KEYS) and g["mig"] == []
        assert all(p["gpu_" + k] is None for k in WORK_KEYS) and p["gpu_work_scope"] is None


@pytest.mark.parametrize("why", ["", "unsupported 0 gpm"], ids=["no-gpm-line", "gpm-not-supported"])
def test_without_gpm_nulls_and_utilization_only(tmp_path, why):
    """A GPU that gives no GPM figure (before Hopper; or a driver that answers NOT_SUPPORTED to
    GPM's calls): nulls, and the summary says once that its utilization is all there is."""
    db = tmp_path / "h.db"
    gpm = "gpm 0 sm=15.9" if why else ""  # scripted, but refused
    path, lines = track(tmp_path, config(tmp_path, H200, gpm, why, JOB_ON_GPU), "--history", str(db))
    assert_no_work(lines)
    assert lines[-2]["gpu"][0]["vram_reserved_bytes"] == 645922816
    s = summary_json(path)
    assert s["gpu_work"] is None and s["process"]["gpus_busy"] == 1
    text = tool("summary", str(path))
    assert text.count("utilization only") == 1, text
    assert work_line(text)[0] == ("utilization only (a kernel was running): this GPU gives no SM or tensor figures "
                                  "(GPM: Hopper and newer)")
    assert "utilization only (a kernel was running)" in tool("summary", "--format", "markdown", str(path))
    head, row = tool("history", "--history", str(db)).splitlines()[:2]
    assert "GPU (BUSY, SM)" in head and re.search(r"\b0\.\d\d, - ", row), row
    row = json.loads(tool("history", "--history", str(db), "--json"))
    assert row["gpu_sm_active_pct_mean"] is None and row["process_gpus_busy"] == 1
    html = tmp_path / "r.html"
    tool("report", str(path), "-o", str(html))
    page = html.read_text()
    assert "gpuwork" not in page and "<h3>GPU utilization</h3>" in page


def test_old_driver_without_gpm_symbols(tmp_path):
    """The minimal fake (an old driver: no GPM, MIG, v2 memory, process lists or utilization
    symbols): every work figure null, no GPU work in the summary (its GPUs tell not even that a
    kernel ran), no chart; the run goes on."""
    db = tmp_path / "h.db"
    path, lines = track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU), "--history", str(db), lib=FAKE_MIN)
    assert_no_work(lines)
    assert all(s["gpu"][0]["vram_reserved_bytes"] is None and s["gpu"][0]["utilization_pct"] is None for s in lines)
    assert summary_json(path)["gpu_work"] is None
    assert "GPU work" not in tool("summary", str(path))
    assert "GPU (BUSY, SM)" not in tool("history", "--history", str(db))
    html = tmp_path / "r.html"
    tool("report", str(path), "-o", str(html))
    assert "gpuwork" not in html.read_text()


# ---- the history -------------------------------------------------------------------------------


def test_history_columns_and_table(tmp_path):
    db = tmp_path / "h.db"
    track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU), "--history", str(db))
    track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU), "--history", str(db), "--job-name", "cpu-only",
          lib=os.path.join(BUILD_DIR, "no-such-nvml.so"), out="t.jsonl")  # no GPU at all
    row = json.loads(tool("history", "--history", str(db), "--json", "--last", "2").splitlines()[1])
    assert row["gpu_sm_active_pct_peak"] == pytest.approx(15.9, abs=1e-4)
    assert row["gpu_fp32_active_pct_p95"] == pytest.approx(2.3, abs=1e-4)
    assert row["gpu_pcie_bytes_per_sec_peak"] == 30 * MIB and row["gpu_work_shared"] == 0
    assert row["process_gpus_busy"] == 1 and row["gpu_idle_cpu_busy_secs"] == 0
    assert row["summary"]["gpu_work"]["sm_active_pct"]["peak"] == 15.9
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 12
    head, cpu_only, gpu = tool("history", "--history", str(db)).splitlines()
    at = head.index("GPU (BUSY, SM)")
    assert cpu_only[at:].split()[0] == "-"
    busy, sm = re.search(r" (\d+\.\d\d), (\d+\.\d)% ", gpu).groups()
    assert 0 < float(busy) <= 0.42 and 0 < float(sm) <= 15.9
    assert float(sm) == pytest.approx(row["gpu_sm_active_pct_mean"], abs=0.05)


# ---- the report: the chart in the page's data and in Chromium's DOM ------------------------------


def test_report_chart(tmp_path):
    path, lines = track(tmp_path, config(tmp_path, H200, GPM, JOB_ON_GPU), secs=1.6)
    html = tmp_path / "r.html"
    tool("report", str(path), "-o", str(html))
    page = html.read_text()
    m = re.search(r'\{id:(\d+),title:"GPU work",unit:"pct",m:0,s:\[(.*?)\]\}', page)
    assert m, "no GPU work chart in the page's data"
    lines_of = dict((name, int(k)) for k, name in re.findall(r'\[(\d+),"([^"]+)","#[0-9a-f]+"\]', m.group(2)))
    assert list(lines_of) == ["SM active", "tensor cores", "DRAM bandwidth", "FP32", "FP16", "FP64",
                              "utilization (NVML)"]
    t, s = ru.page_data(page)
    sm = s[lines_of["SM active"]][1::3]  # each point's mean
    assert [v for v in sm if v is not None] and all(v == pytest.approx(15.9, abs=0.01) for v in sm if v is not None)
    util = [v for v in s[lines_of["utilization (NVML)"]][1::3] if v is not None]
    assert util and all(v == pytest.approx(42, abs=0.01) for v in util)  # the job's 42% of its one GPU
    gpu_chart = page.index('id="b-gpu"')
    assert gpu_chart < page.index('id="b-gpuwork"') < page.index('id="b-vram"')
    assert "The job&#39;s GPUs, the job&#39;s alone: its processes were the only ones on them." in page
    if not ru.CHROMIUM:
        pytest.skip("no Chromium: the page's data checked, not its drawing")
    dom, requests = ru.render(html, tmp_path / "r.png", 1280, 3000)
    assert requests == []
    body = ru.body_attrs(dom)
    assert body["data-charts-drawn"] == body["data-charts-expected"]
    block = re.search(r'<div class="chart-block" id="b-gpuwork">(.*?)<div class="chart-print"', dom, re.S).group(1)
    assert 'id="cap-gpuwork"' in block and "SM active" in block and "utilization (NVML)" in block
    chart = [c for c in ru.charts(dom) if c["id"] == f"c{m.group(1)}"][0]
    assert chart["series_max"] == pytest.approx(42, abs=0.01) and chart["plot"]


# ---- OTLP: the strict receiver ------------------------------------------------------------------


def test_otlp_points(tmp_path):
    from test_otlp import Receiver, otlp_env
    rcv = Receiver(tmp_path)
    try:
        cfg = config(tmp_path, H200, GPM, "mig 0 1 sm=42", JOB_ON_GPU)
        env = otlp_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
        p = subprocess.run([TRACKER, "-q", "-i", "0.2", "-o", str(tmp_path / "s.jsonl"), "--otlp", rcv.url,
                            "--otlp-interval", "0.5", "--", PY, "-c", "import time; time.sleep(1.2)"],
                           capture_output=True, text=True, env=env, timeout=60 * TIMEOUT_SCALE)
        assert p.returncode == 0, p.stderr
        got = rcv.accepted()
    finally:
        rcv.stop()
    assert got and all(e["error"] is None for e in got)
    points = {}
    for e in got:
        for m in e["json"]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]:
            body = m.get("gauge") or m.get("sum")
            for dp in body["dataPoints"]:
                a = {x["key"]: x["value"]["stringValue"] for x in dp.get("attributes", [])}
                points.setdefault(m["name"], []).append((a, dp.get("asDouble"), m["unit"]))

    def values(name, **attrs):
        return [v for a, v, _ in points[name] if all(a.get(k) == w for k, w in attrs.items())]

    assert {u for _, _, u in points["resource_tracker.gpu.activity"]} == {"1"}
    assert set(values("resource_tracker.gpu.activity", **{"hw.id": "GPU-1", "resource_tracker.gpu.unit": "sm"})) == {
        0.159}
    assert set(values("resource_tracker.gpu.activity", **{"resource_tracker.gpu.unit": "tensor_dfma"})) == {0.005}
    assert set(values("resource_tracker.gpu.activity", **{"hw.id": "MIG-1-1", "hw.parent": "GPU-1"})) == {0.42}
    io = values("hw.gpu.io", **{"network.io.direction": "receive", "resource_tracker.gpu.link": "pcie"})
    assert io == sorted(io) and io[-1] > 0  # a counter: bytes since the series began
    job = values("resource_tracker.process.gpu.activity", **{"resource_tracker.gpu.unit": "sm",
                                                            "resource_tracker.gpu.work_scope": "job"})
    assert job and set(job) <= {0.159, 0.0}  # the job's GPU; after its end it is on none: 0
    rates = values("resource_tracker.process.gpu.io.rate", **{"network.io.direction": "transmit",
                                                              "resource_tracker.gpu.link": "nvlink"})
    assert 5 * MIB in rates


# ---- Prometheus: the real server scraping the tool ----------------------------------------------


@pytest.mark.skipif(not os.path.exists("/usr/bin/prometheus"), reason="Debian's prometheus absent")
def test_real_prometheus_scrapes_the_work(tmp_path):
    from test_prometheus import Prom, tracker_port, wait_for
    cfg = config(tmp_path, H200, GPM, "mig 0 1 sm=42 dram=3", "mig 0 2 sm=5", JOB_ON_GPU)
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    t = subprocess.Popen([TRACKER, "-i", "0.2", "-o", str(tmp_path / "s.jsonl"), "--prometheus", "127.0.0.1:0", "--",
                          PY, "-c", "import time; time.sleep(6)"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, env=env)
    prom = None
    try:
        prom = Prom(tmp_path, tracker_port(t))

        def value(q):
            r = prom.query(q)
            return float(r[0]["value"][1]) if len(r) == 1 else None

        wait_for("the MIG series", lambda: value('resource_tracker_gpu_mig_sm_active_ratio{gpu_instance="2"}') is not None,
                 proc=prom.p)
        assert value('resource_tracker_gpu_sm_active_ratio{gpu="GPU-1"}') == pytest.approx(0.159)
        assert value('resource_tracker_gpu_mig_sm_active_ratio{gpu="GPU-1",gpu_instance="1"}') == pytest.approx(0.42)
        assert value('resource_tracker_gpu_mig_dram_active_ratio{gpu="GPU-1",gpu_instance="1"}') == pytest.approx(0.03)
        assert value('resource_tracker_gpu_mig_sm_active_ratio{gpu="GPU-1",gpu_instance="2"}') == pytest.approx(0.05)
        assert prom.query('resource_tracker_gpu_mig_dram_active_ratio{gpu_instance="2"}') == []  # not offered
        assert value("resource_tracker_process_gpu_sm_active_ratio") == pytest.approx(0.159)
        assert value("resource_tracker_gpu_pcie_receive_bytes_per_second") == 20 * MIB
    finally:
        if prom:
            from test_prometheus import stop
            stop(prom.p)
        t.kill()
        t.wait()
        t.stderr.close()
