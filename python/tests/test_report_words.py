"""The Python report's words: ResourceTracker.report() is the C library's page in the Python
tracker 0.5's words (RT_REPORT_WORDING_PY05): the answer first, then 0.5's section titles over
the charts ("CPU Usage", "Memory Usage", ...) and its line names in their legends ("Process CPU
usage", "System CPU usage", ...), and the run's status as 0.5 says it: Pending while the tracker
runs, Finished after stop() and for a loaded run, Failed with status_failed=True.
The tool's own `report` of the same run keeps its own words. In Chromium, the legends a user
sees carry 0.5's names."""
import os
import re
import subprocess
import sys

import pytest

from resource_tracker import ResourceTracker

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import report_util as ru  # noqa: E402

# 0.5's section titles by our chart's key (its template's; power is ours, titled in its style)
TITLES_05 = {"cpu": "CPU Usage", "memory": "Memory Usage", "gpu": "GPU Usage", "vram": "VRAM Usage",
             "disk": "Disk I/O Usage", "network": "Network Usage", "space": "Disk Space Usage",
             "power": "Power Usage"}
OWN_TITLES = {"CPU", "Memory", "GPU utilization", "GPU memory (VRAM)", "Disk I/O", "Network", "Disk space used",
              "Power"}


def titles(html):
    """[(key, title)] of the charts drawn, then of those shown as a line of text, in page order."""
    drawn = re.findall(r'<div class="chart-block" id="b-(\w+)"><h3>([^<]*)</h3>', html)
    text = re.findall(r'<p class="chart-text" id="t-(\w+)">([^<:]*):', html)
    return drawn + text


def lines(html):
    """{chart title: [its lines' names]} from the page's chart definitions (var CH)."""
    ch = html[html.index("var CH=["):]
    ch = ch[:ch.index("];\n")]
    return {t: re.findall(r'\[\d+,"([^"]*)","#', s)
            for t, s in re.findall(r'\{id:\d+,title:"([^"]*)",unit:"\w+",m:\d+,s:\[(.*?)\]\}', ch)}


def status(html):
    """(value, bad) of the answer's status figure; exactly one."""
    found = re.findall(r'<div class="fig( bad)?" id="answer-status"><b>([^<]*)</b>', html)
    assert len(found) == 1, found
    return found[0][1], bool(found[0][0])


def test_answer_first_then_the_05_titles_over_the_charts(tracker):
    html = tracker.report()
    answer, charts = html.index('<section id="answer">'), html.index('<section id="charts">')
    shown = titles(html)
    assert answer < charts < html.index("<h3>CPU Usage</h3>") < html.index("<h3>Memory Usage</h3>")
    assert {"cpu", "memory"} <= {k for k, _ in shown}, shown
    for key, title in shown:
        assert title == TITLES_05[key] or title.startswith(TITLES_05[key] + " ("), (key, title)
        assert title not in OWN_TITLES
    named = lines(html)
    assert named["CPU Usage"] == ["Process CPU usage", "System CPU usage"], named
    assert named["Memory Usage"][-1] == "System used memory"
    assert all(n.startswith("Process memory usage") for n in named["Memory Usage"][:-1]), named
    for chart, names in named.items():
        assert names and all(n.startswith(("Process ", "System ")) for n in names), (chart, names)
    # the status after the run's figures, in the answer
    assert answer < html.index('id="answer-status"') < charts


def test_pending_finished_failed():
    t = ResourceTracker(interval=0.2)
    t.start()
    try:
        t.wait_for_samples(n=2, timeout=10)
        running = t.report()
        assert status(running) == ("Pending", False)
        assert "Finished" not in running and "Failed" not in running
        assert "still running, the figures so far" in running
    finally:
        t.stop()
    finished = t.report()
    assert status(finished) == ("Finished", False)
    assert "Pending" not in finished and "Failed" not in finished
    failed = t.report(status_failed=True)
    assert status(failed) == ("Failed", True)
    assert "status, exit status 1: the figures may be incomplete" in failed
    assert "Pending" not in failed and "Finished" not in failed
    # the answer shows one status: no separate exit status figure beside it
    assert 'id="answer-exit"' not in failed


def test_a_loaded_run_is_finished(tracker):
    """A snapshot has a stop time even when taken while the tracker runs (0.5 writes one too):
    a loaded run is Finished, or Failed when said so."""
    assert status(ResourceTracker.from_snapshot(tracker.snapshot()).report())[0] == "Finished"
    t = ResourceTracker(interval=0.2)
    t.start()
    try:
        t.wait_for_samples(n=2, timeout=10)
        taken = t.snapshot()
        assert status(t.report())[0] == "Pending"
    finally:
        t.stop()
    assert taken["metadata"]["stop_time"] > 0
    loaded = ResourceTracker.from_snapshot(taken)
    assert status(loaded.report())[0] == "Finished"
    assert status(loaded.report(status_failed=True)) == ("Failed", True)


def test_the_tool_keeps_its_own_words(tracker, tmp_path):
    lib = os.environ.get("RESOURCE_TRACKER_LIBRARY")
    exe = os.path.join(os.path.dirname(lib), "resource-tracker") if lib else None
    if not exe or not os.access(exe, os.X_OK):
        pytest.skip("no resource-tracker binary beside the library")
    run = tmp_path / "run.json"
    tracker.dump(str(run))
    out = tmp_path / "tool.html"
    subprocess.run([exe, "report", str(run), "-o", str(out), "--no-price-lookup"], check=True,
                   capture_output=True, env=dict(os.environ, TRACKER_CLOUD_DISCOVERY="0"), timeout=60)
    html = out.read_text(encoding="utf-8")
    assert "<h3>CPU</h3>" in html and lines(html)["CPU"] == ["job", "machine"]
    assert not any(t in TITLES_05.values() for _, t in titles(html))
    assert "Process CPU usage" not in html and 'id="answer-status"' not in html
    # the Python report of the same run: the same charts, in 0.5's words
    ours = titles(tracker.report())
    assert [k for k, _ in ours] == [k for k, _ in titles(html)]


@pytest.mark.skipif(ru.CHROMIUM is None, reason="chromium not installed (scripts/install-deps)")
def test_the_legends_a_user_sees(tracker, tmp_path):
    page = tmp_path / "report.html"
    tracker.report().save(str(page))
    dom, requests = ru.render(str(page), str(tmp_path / "report.png"), 1280, 1300)
    assert requests == []
    body = ru.body_attrs(dom)
    assert int(body["data-charts-drawn"]) == int(body["data-charts-expected"]) >= 2, body
    legend = re.search(r'<div class="legend" id="l0">(.*?)</div><div class="chart"', dom, re.S)
    assert legend, "no legend of the first chart"
    seen = re.sub(r"<[^>]+>", " ", legend.group(1)).replace("&nbsp;", " ")
    assert "Process CPU usage" in seen and "System CPU usage" in seen, seen
