"""The energy by part, end to end (0.19): a job burning a CPU core with its process on a GPU of the
fake NVML, whose energy counter the test moves by a known amount while the job runs. The
summary's text, its JSON and its Markdown name the GPU part measured by NVML with exactly the
counter's growth (to the millijoule) and the CPU part with its method; the report's power chart
has a line per part, its legend naming each method and source (checked in the page's data and in
the DOM headless Chromium built, a screenshot kept beside it)."""
import json
import re
import subprocess

import pytest

import report_util as ru
from conftest import TIMEOUT_SCALE, TRACKER, run, tracker_env
from test_gpu import A100, FAKE, PY, set_cfg, wait_for

START_MJ, GROWN_MJ = 1000000, 1251250  # the counter grows by 251.25 J
CFG = f"{A100} energy_mj={{mj}}\nchildren 0 mem=1048576 sm=50\ncost off\n"
# the job: one core busy until the stop file is there
BURN = "import os, sys, time\nend = time.monotonic() + 60\nwhile not os.path.exists(sys.argv[1]) and time.monotonic() < end:\n" \
       "    t = time.process_time()\n    while time.process_time() - t < 0.05: pass\n"


def how(part):
    """How the text says a part was had: "measured by NVML", the estimate "estimated"."""
    words = {"nvml": "NVML", "intel-rapl": "RAPL", "amd-rapl": "RAPL"}.get(part["source"], part["source"])
    return part["method"] if part["source"] in (None, "model") else f"{part['method']} by {words}"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The run: its JSON lines and the tool's own --summary text (stderr)."""
    tmp = tmp_path_factory.mktemp("parts")
    cfg, stop, out = tmp / "nvml.cfg", tmp / "stop", tmp / "run.jsonl"
    cfg.write_text(CFG.format(mj=START_MJ))
    env = tracker_env(TRACKER_NVML_LIBRARY=FAKE, FAKE_NVML_CONFIG=str(cfg))
    p = subprocess.Popen([TRACKER, "--cgroup", "off", "-i", "0.1", "-o", str(out), "--summary", "--", PY, "-c", BURN,
                          str(stop)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: out.exists() and out.read_text().count("\n") >= 3, "three samples")
        set_cfg(cfg, CFG.format(mj=GROWN_MJ))
        # the counter is read every 30 s and at the run's end, which settles what the power's
        # estimates between gave (0.19): its growth shows whole on the last line
        wait_for(lambda: out.read_text().count("\n") >= 8, "a few samples more")
    finally:
        stop.write_text("")
        so, se = p.communicate(timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 0, se
    return out, so + se


def parts_of(out):
    p = run(["summary", "--json", str(out)], timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["energy"]


def test_json_names_each_part_with_its_source(recorded):
    out, _ = recorded
    e = parts_of(out)
    parts = e["parts"]
    gpu, cpu = parts[0], [p for p in parts if p["kind"] == "cpu"]
    # the job alone on the GPU: all of the counter's growth is its, to the millijoule
    assert (gpu["kind"], gpu["source"], gpu["method"], gpu["devices"]) == ("gpu", "nvml", "measured", 1)
    assert gpu["joules"] == 251.25 and gpu["process_joules"] == 251.25
    assert len(cpu) == 1 and cpu[0]["method"] in ("measured", "sampled", "estimated") and cpu[0]["process_joules"] > 0
    # the parts make the job's energy and the machine's (no platform meter here)
    assert sum(p["process_joules"] for p in parts) == pytest.approx(e["process_joules"], abs=2e-3)
    assert sum(p["joules"] for p in parts) == pytest.approx(e["joules"], abs=2e-3)
    assert e["meter_source"] is None
    # the sums of the domains' figures in the file, exactly
    lines = [json.loads(l) for l in out.read_text().splitlines() if l.strip()]
    doms = [d for l in lines if l.get("energy") for d in l["energy"]["domain"] if d["kind"] in ("cpu", "package")]
    assert cpu[0]["joules"] == pytest.approx(sum(d["energy_joules"] or 0 for d in doms), abs=1e-3)


def test_text_and_markdown_say_each_part(recorded):
    out, tool_text = recorded
    cpu = [p for p in parts_of(out)["parts"] if p["kind"] == "cpu"][0]
    want = re.compile(r"Energy +[\d.]+ k?J \(GPU 251 J measured by NVML, CPU [\d.]+ k?J " + re.escape(how(cpu)) +
                      r"; machine [\d.]+ k?J")
    for text in (tool_text, run(["summary", str(out)]).stdout):
        assert want.search(" ".join(text.split())), text  # the line may wrap
    md = run(["summary", "--format", "markdown", str(out)]).stdout
    assert re.search(r"\*\*Energy:\*\* [\d.]+ k?J \(GPU 251 J measured by NVML, CPU ", md), md
    assert re.search(r"\| energy \(the job's\) \| [\d.]+ k?J \(GPU 251 J measured by NVML, CPU [^|]*" +
                     re.escape(how(cpu)) + r"\) \|", md), md


def test_report_power_chart_by_source(recorded, tmp_path):
    out, _ = recorded
    cpu = [p for p in parts_of(out)["parts"] if p["kind"] == "cpu"][0]
    html = tmp_path / "report.html"
    p = run(["report", str(out), "-o", str(html)], timeout=60)
    assert p.returncode == 0, p.stderr
    page = html.read_text()
    chart = re.search(r'\{id:\d+,title:"Power \(by source\)",unit:"watts",m:0,s:\[(.*?)\]\}', page)
    assert chart, re.search(r"var CH=.*?;\n", page, re.S).group(0)
    names = re.findall(r'\[\d+,"([^"]*)","#[0-9a-f]{6}"\]', chart.group(1))
    assert names == ["job GPU (measured by NVML)", f"job CPU ({how(cpu)})", "job", "machine"]
    assert '<h3>Power (by source)</h3>' in page
    assert "(GPU 251 J measured by NVML, CPU " in page  # the answer's energy by part
    if ru.CHROMIUM is None:
        pytest.skip("chromium not installed (scripts/install-deps): the page's data checked, not its drawing")
    png = tmp_path / "report.png"
    dom, requests = ru.render(html, png, width=1200, height=3200)
    assert requests == []
    attrs = ru.body_attrs(dom)
    assert attrs["data-charts-drawn"] == attrs["data-charts-expected"]
    legend = re.search(r'<h3>Power \(by source\)</h3><div class="legend" id="l\d+">(.*?)</div><div class="chart"', dom,
                       re.S)
    assert legend, "no power legend in the DOM"
    for name in names:  # dygraphs wrote each line's name into the legend
        assert name in legend.group(1), legend.group(1)
