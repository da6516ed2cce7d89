"""The Metaflow extension without running a flow: the layout Metaflow demands of
metaflow_extensions (namespace packages), the wheel carrying it (top_level.txt, RECORD) and
Metaflow finding the decorator and the card in the installed wheel; the card's HTML
(card_html.py, loaded by path: it needs no Metaflow) from good, failed and broken artifacts,
never raising, with no request leaving it."""
import importlib.util
import os
import re
import subprocess
import sys
import types
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON_DIR = os.path.join(REPO, "python")
EXT = os.path.join(PYTHON_DIR, "metaflow_extensions")
PLUGINS = os.path.join(EXT, "resource_tracker", "plugins")
CARD_DIR = os.path.join(PLUGINS, "cards", "tracked_resources")
METAFLOW = os.environ.get("RT_METAFLOW_SOURCE") or os.path.join(os.path.dirname(REPO), "shared", "testdata",
                                                                   "metaflow")
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import report_util as ru  # noqa: E402


def _card_html():
    spec = importlib.util.spec_from_file_location("rt_card_html", os.path.join(CARD_DIR, "card_html.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


card_html = _card_html()


def test_namespace_layout():
    """Metaflow refuses an __init__.py in metaflow_extensions/ and treats plugins/cards/ as a
    namespace of card packages: neither may have one."""
    assert not os.path.exists(os.path.join(EXT, "__init__.py"))
    assert not os.path.exists(os.path.join(PLUGINS, "cards", "__init__.py"))
    assert os.path.isfile(os.path.join(PLUGINS, "mfextinit_resource_tracker.py"))
    assert os.path.isfile(os.path.join(CARD_DIR, "__init__.py"))


def _wheel(tmp_path):
    sys.path.insert(0, os.path.join(PYTHON_DIR, "_build"))
    try:
        import backend
    finally:
        sys.path.pop(0)
    lib = os.environ.get("RESOURCE_TRACKER_LIBRARY")
    if not lib or not os.path.isfile(lib):
        pytest.skip("no built library to put in the wheel (RESOURCE_TRACKER_LIBRARY)")
    name = backend.build_wheel(str(tmp_path / "dist"), {"library": lib})
    return str(tmp_path / "dist" / name)


def test_wheel_carries_the_extension(tmp_path):
    whl = _wheel(tmp_path)
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        (top,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert "metaflow_extensions" in z.read(top).decode().split()
        (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        recorded = {line.split(",")[0] for line in z.read(record).decode().splitlines()}
    for rel in ("metaflow_extensions/resource_tracker/plugins/mfextinit_resource_tracker.py",
                "metaflow_extensions/resource_tracker/plugins/track_resources/track_resources_decorator.py",
                "metaflow_extensions/resource_tracker/plugins/cards/tracked_resources/__init__.py",
                "metaflow_extensions/resource_tracker/plugins/cards/tracked_resources/card_html.py"):
        assert rel in names and rel in recorded, rel
    assert "metaflow_extensions/__init__.py" not in names
    assert "metaflow_extensions/resource_tracker/plugins/cards/__init__.py" not in names


@pytest.mark.skipif(not os.path.isfile(os.path.join(METAFLOW, "metaflow", "__init__.py")),
                    reason=f"no Metaflow source at {METAFLOW} (set RT_METAFLOW_SOURCE)")
def test_metaflow_finds_the_installed_wheel(tmp_path):
    """the wheel unpacked as pip installs it (its dist-info beside): Metaflow names it an installed
    extension package and binds track_resources and the card type"""
    whl = _wheel(tmp_path)
    site = tmp_path / "site"
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith("METAFLOW_")}
    env.update(PYTHONPATH=f"{site}{os.pathsep}{METAFLOW}", USERNAME="ci", METAFLOW_HOME=str(tmp_path / "mf"),
               METAFLOW_DEBUG_EXT="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("RESOURCE_TRACKER_LIBRARY", None)  # the wheel's own library
    code = ("from metaflow import track_resources\n"
            "from metaflow.plugins import CARDS\n"
            "print(track_resources.args[0].__module__)\n"
            "print([c.type for c in CARDS if c.type == 'tracked_resources'])\n")
    r = subprocess.run(["/usr/bin/python3", "-c", code], env=env, cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0 and "No module named 'requests'" in r.stderr:
        pytest.skip("Metaflow needs python3-requests (scripts/install-deps --test)")
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("\n")[:2] == [
        "metaflow_extensions.resource_tracker.plugins.track_resources.track_resources_decorator",
        "['tracked_resources']"], r.stdout
    assert "Found extension package 'resource-tracker'" in r.stderr or \
        "Found extension package 'resource_tracker'" in r.stderr, r.stderr[-3000:]


# ---- the card's HTML ------------------------------------------------------------------------

class FakeTask:
    """What the card reads of a client Task: pathspec and data.<artifact>."""

    def __init__(self, artifact=None, name="resource_tracker_data", pathspec="DemoFlow/17/train/3"):
        self.pathspec = pathspec
        self.data = types.SimpleNamespace()
        if artifact is not None:
            setattr(self.data, name, artifact)


@pytest.fixture(scope="module")
def artifact(tracker):
    return {"step_failed": False, "tracker": tracker.snapshot(),
            "historical_stats": [tracker.stats(), tracker.stats()], "historical_runs": ["12", "9"]}


def test_card_of_a_tracked_step(artifact, monkeypatch):
    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    html = card_html.render_card(FakeTask(artifact), "resource_tracker_data")
    assert html.startswith("<!DOCTYPE html>") and len(html) > 100_000
    # the section sits under the report's header, which names the step
    assert html.index("<h1>DemoFlow/17/train/3</h1>") < html.index('<section id="metaflow">') < \
        html.index('id="answer"')
    assert "Process CPU usage" in html and "System CPU usage" in html and "from <code>Metaflow</code>" in html
    assert '<span class="status">Finished</span>' in html and "Failed" not in html
    assert 'id="mf-resources">@resources(cpu=' in html
    assert html.count('class="bar"') == 9  # three charts, the two earlier runs and this one
    assert "<td>run 12</td>" in html and "<td>run 9</td>" in html
    assert ru.external_urls(html) == []


def test_card_of_a_failed_step(artifact, monkeypatch):
    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    html = card_html.render_card(FakeTask(dict(artifact, step_failed=True, historical_stats=[])), "resource_tracker_data")
    assert '<span class="status failed">Failed</span>' in html and "exit status" in html
    assert html.count('class="bar"') == 3


def test_memory_in_mb_one_unit_on_the_card(tracker):
    assert card_html.resources_line({"cpu": 2, "memory": 1024, "gpu": 0}) == "@resources(cpu=2, memory=1074)"
    assert card_html.resources_line({"cpu": 1, "memory": 3072, "gpu": 1}) == \
        "@resources(cpu=1, memory=3222, gpu=1)"
    # the report under the card words it the same (the C library's rt_format_recommendation)
    rec = tracker.recommend_resources()
    assert card_html.resources_line(rec) in tracker.report()
    report = "<html><body><header><h1>resource-tracker run</h1></header><p>x</p></body></html>"
    out = card_html.inject(report, "<section>S</section>", "F/1/s/2")
    assert out.index("<h1>F/1/s/2</h1>") < out.index("<section>S</section>") < out.index("<p>x</p>")


@pytest.mark.parametrize("artifact", [
    None,  # no artifact at all
    "not a dict",
    {},
    {"error": {"error_type": "ValueError", "error_message": "<b>bad</b>", "traceback": "Traceback <x>"},
     "step_failed": True},
    {"error": "a bare string"},
    {"step_failed": False, "tracker": {"metadata": "garbage"}},
    {"step_failed": True, "tracker": {"metadata": {}, "process_metrics": {}, "system_metrics": {}}},
])
def test_card_never_raises(artifact):
    html = card_html.render_card(FakeTask(artifact), "resource_tracker_data")
    assert html.startswith("<!DOCTYPE html>") and "DemoFlow/17/train/3" in html
    assert "<b>bad</b>" not in html and "<x>" not in html  # escaped
    assert ru.external_urls(html) == []
    if isinstance(artifact, dict) and artifact.get("step_failed"):
        assert "Failed" in html


def test_card_with_history_from_another_version(artifact, monkeypatch):
    """history stats with 0.5's column names (memory in MiB) or unknown ones still make a card"""
    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    hist = [{"process_cpu_usage": {"mean": 1.5, "max": 2.0}, "process_memory_mib": {"mean": 900.0, "max": 1000.0},
             "timestamp": {"duration": 30.0}}, {"something": {"else": 1}}]
    html = card_html.render_card(FakeTask(dict(artifact, historical_stats=hist, historical_runs=["5", "4"])),
                                 "resource_tracker_data")
    assert "1000 MiB" in html and "Process CPU usage" in html
    assert 'id="mf-resources">@resources(cpu=' in html


def test_card_with_a_stalling_keeper(artifact, monkeypatch):
    """a Keeper that accepts and never answers: the lookup gives up (its bounded timeout, far under
    the 45 s Metaflow gives a card) and the card says so in a line, with everything else"""
    import signal

    stub = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "stubs", "keeper_server.py"), "--stall"],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(stub.stdout.readline())
        monkeypatch.setenv("TRACKER_KEEPER_URL", f"http://127.0.0.1:{port}")
        html = card_html.render_card(FakeTask(artifact), "resource_tracker_data")
    finally:
        os.kill(stub.pid, signal.SIGTERM)
        stub.wait(10)
        stub.stdout.close()
    # no reply in time: as offline, one quiet line (the answer's cost row), the way to stop it
    assert html.count("prices: offline (Keeper not reached: ") == 1
    assert "TRACKER_KEEPER_URL=off stops the lookup)" in html
    assert "Cheapest server that fits" not in html
    assert 'id="mf-resources">@resources(cpu=' in html and html.count('class="bar"') == 9


# ---- one answer, one figure (issue 53, item 7) ----------------------------------------------

def _section(html):
    start = html.index('<section id="metaflow">')
    return html[start:html.index("</section>", start)]


def _answer_figure(html, what):
    """The value of the report's answer figure whose label starts with what."""
    m = re.search(r'<div class="fig"><b>([^<]+)</b><span>' + re.escape(what), html)
    assert m, what
    return m.group(1)


def _visible(html):
    """The page's text as a person sees it: no head, scripts, styles or tags."""
    html = re.sub(r"(?s)<(head|script|style)\b.*?</\1>", " ", html)
    return re.sub(r"<[^>]+>", " ", html)


def test_card_memory_is_the_answers(artifact, monkeypatch):
    """The card's section gives this run's memory (and cores, duration) as the answer's own
    figures, named for what they are: no second memory peak of the process (the old "process
    memory ... peak (PSS of the process tree)" row beside the answer's kernel-counted need), and
    the earlier runs' PSS peaks in the history are said to be PSS."""
    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    html = card_html.render_card(FakeTask(artifact), "resource_tracker_data")
    section = _section(html)
    memory = _answer_figure(html, "memory: ")
    cores = _answer_figure(html, "cores, mean / peak").split(" / ")
    cells = re.findall(r"<td>([^<]*)</td>", re.search(r'<tr class="this">(.*?)</tr>', section).group(1))
    assert cells[4] == memory and cells[2:4] == cores, ("two figures for one question", cells, memory, cores)
    table = re.search(r'<table class="kv" id="mf-usage">.*?</table>', section).group(0)
    usage = dict(re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", table))
    process_memory = [k for k in usage if "memory" in k and "system" not in k]
    assert process_memory == ["memory need"], ("a second memory figure of the step", usage)
    assert usage["memory need"].startswith(f"{memory} ("), usage  # the answer's, with its meaning
    assert usage["Process CPU usage"].startswith(f"{cores[0]} cores mean, {cores[1]} peak"), usage
    assert usage["duration"] == _answer_figure(html, "duration"), usage
    svg = re.search(r'<svg id="mf-hist-memory".*?</svg>', section).group(0)
    assert f"<title>this: {memory}</title>" in svg, svg  # the chart's bar of this run: the same figure
    assert "Memory need" in svg and "memory need" in section
    note = re.search(r'id="mf-history-note">([^<]*)', section).group(1)
    assert "the answer" in note and "PSS peak" in note  # each figure named for what it is


def test_card_names_its_versions_once(artifact, monkeypatch):
    """One version line: the library's (the report's), the Python package's and Metaflow's,
    where the report's footer had the library's alone; no other version of resource-tracker."""
    from resource_tracker import __version__
    from resource_tracker._native import lib

    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    html = card_html.render_card(FakeTask(artifact), "resource_tracker_data")
    library = lib.rt_version().decode()
    named = re.findall(r"resource-tracker (\d+\.\d+\.\d+)", _visible(html))
    assert named == [library], named
    footer = re.search(r"<footer>([^<]*)</footer>", html).group(1)
    assert footer.startswith(f"resource-tracker {library} (library), Python package {__version__}"), footer
    assert _visible(html).count(__version__) == 1 or __version__ == library
    # without a report to carry it, the section names them, once
    page = card_html.render_card(FakeTask({"error": "x"}), "resource_tracker_data")
    assert re.findall(r"resource-tracker (\d+\.\d+\.\d+)", _visible(page)) == [library]
    assert f"Python package {__version__}" in page


def test_card_offline_is_one_quiet_line(artifact, monkeypatch, capfd):
    """Keeper not reached (a closed local port, as offline): the card carries one line, "prices:
    offline (...)", with the reason and how to stop it, and nothing goes to stderr."""
    monkeypatch.setenv("TRACKER_KEEPER_URL", "http://127.0.0.1:9")
    capfd.readouterr()
    html = card_html.render_card(FakeTask(artifact), "resource_tracker_data")
    out, err = capfd.readouterr()
    assert err == "" and out == "", (out, err)
    lines = re.findall(r"prices: [^<]*", html)
    assert len(lines) == 1 and lines[0].startswith("prices: offline (Keeper not reached: "), lines
    assert lines[0].endswith("TRACKER_KEEPER_URL=off stops the lookup)") and "127.0.0.1" in lines[0]
    assert "lookup failed" not in html and "Cheapest server that fits" not in html


FAKE_NVML = os.path.join(os.environ.get("RT_BUILD_DIR", os.path.join(REPO, "build")), "libfake-nvml.so")


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake NVML is built with the C library")
def test_card_carries_the_gpu_notes(tmp_path, monkeypatch):
    """A step whose process held an H200 doing a device copy (the fake NVML scripted to what the
    H200 measured: DRAM 88.3%, SMs 98.9%, every math unit 0): the memory-bound note (0.19) shows in
    the card's answer, as in the tracker's summary text; the bf16 matmul neighbour has none."""
    from resource_tracker import ResourceTracker

    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    monkeypatch.setenv("TRACKER_NVML_LIBRARY", FAKE_NVML)
    cfg = tmp_path / "nvml.cfg"
    monkeypatch.setenv("FAKE_NVML_CONFIG", str(cfg))

    def notes_of(gpm, util):
        cfg.write_text("cost off\n"
                       f"gpu uuid=GPU-1 name=NVIDIA_H200 mem_total=150754820096 mem_used=2147483648 util={util}\n"
                       f"gpm 0 {gpm}\npid 0 {os.getpid()} mem=2147483648 sm={util}\n")
        t = ResourceTracker(autostart=True, interval=0.2)
        t.wait_for_samples(4)
        t.stop()
        html = card_html.render_card(FakeTask({"step_failed": False, "tracker": t.snapshot()}),
                                     "resource_tracker_data")
        answer = re.search(r'<tr id="answer-notes">(.*?)</tr>', html, re.S).group(1)
        return answer, " ".join(t.summary_text().split())

    answer, text = notes_of("sm=98.9 occ=79.9 tensor=0 hmma=0 dram=88.3 fp32=0 fp16=0 fp64=0", 100)
    note = re.search(r"device memory bandwidth at \d+% with the math units at most 0% busy \(tensor cores, FP32, "
                     r"FP16, FP64\): memory-bound; fuse kernels, use larger batches, or a GPU with more bandwidth",
                     answer)
    assert note, answer
    assert note.group(0) in text, text
    answer, text = notes_of("sm=95.1 occ=14.1 tensor=92.4 hmma=92.4 dram=16 fp32=0 fp16=0 fp64=0", 99)
    assert "memory-bound" not in answer and "tensor cores idle" not in answer and "memory-bound" not in text
