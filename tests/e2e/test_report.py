"""The HTML report, looked at: headless Chromium renders it to PNG and DOM, behind a proxy that
counts every request the page makes. A synthetic day (86,400 one-second records with one
one-second spike) and a real short stress-ng run; the report subcommand's usage errors."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, TRACKER, run, tracker_env
import report_util as ru

DEMO = os.path.join(BUILD_DIR, "report-demo")

needs_chromium = pytest.mark.skipif(ru.CHROMIUM is None, reason="chromium not installed (scripts/install-deps)")


def pil():
    return pytest.importorskip("PIL.Image", reason="Pillow not installed (Debian package python3-pil)")


def check_drawn(dom, img, least=4):
    """Every chart drawn (at least `least`), and none blank: returns the charts' attributes."""
    body = ru.body_attrs(dom)
    expected = int(body["data-charts-expected"])
    assert expected >= least
    assert int(body["data-charts-drawn"]) == expected
    charts = ru.charts(dom)
    assert len(charts) == expected
    for c in charts:
        assert c["plot"], c
        px = ru.plot_pixels(img, c["plot"])
        flat = [p for rowpx in px for p in rowpx]
        inked = sum(1 for p in flat if min(p) < 235)
        colours = len(set(flat))
        assert inked > 200 and colours >= 3, f"chart {c['id']} looks blank: {inked} inked pixels, {colours} colours"
    return charts


def check_self_contained(html, requests):
    assert requests == [], f"the page made requests: {requests}"
    assert ru.external_urls(html) == []
    # an address may appear only inside a comment (the libraries' licence headers)
    for m in re.finditer(r"https?://", html):
        before = html[:m.start()]
        if before.endswith("Spare Cores Keeper at "):  # a failed lookup's words, as text: no request
            continue
        assert before.rfind("/*") > before.rfind("*/"), html[m.start() - 80:m.start() + 40]


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """The synthetic 24-hour report, rendered once."""
    if ru.CHROMIUM is None:
        pytest.skip("chromium not installed (scripts/install-deps)")
    image = pil()
    d = tmp_path_factory.mktemp("day")
    html = d / "day.html"
    p = subprocess.run([DEMO, "synth", "86400", "43200", str(html)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    print(p.stdout.strip(), f"size: {html.stat().st_size} bytes")
    png = d / "day.png"
    dom, requests = ru.render(html, png)
    return {"html": html.read_text(), "size": html.stat().st_size, "dom": dom, "requests": requests,
            "img": image.open(png)}


@needs_chromium
def test_day_small_and_self_contained(day):
    assert day["size"] < 3 * 1024 * 1024
    check_self_contained(day["html"], day["requests"])
    assert "@license" in day["html"] and "dygraphs" in day["html"]  # the library's licence header kept


@needs_chromium
def test_day_every_chart_drawn(day):
    check_drawn(day["dom"], day["img"])


@needs_chromium
def test_day_one_second_spike_visible(day):
    cpu = ru.charts(day["dom"])[0]
    assert cpu["series_max"] == pytest.approx(2.0)
    assert cpu["ymax"] >= 2.0
    x, y, w, h = cpu["plot"]
    px = ru.plot_pixels(day["img"], cpu["plot"])
    red_rows = [j for j, rowpx in enumerate(px) if any(ru.is_red(p) for p in rowpx)]
    assert red_rows, "the job's series is not drawn"
    top_value = cpu["ymax"] * (1 - min(red_rows) / h)
    assert top_value > 1.5, f"the spike reaches only {top_value:.2f} cores on screen"
    # and it is one narrow spike: the baseline (0.2 cores) is far below it
    assert cpu["ymax"] * (1 - max(red_rows) / h) < 0.4


def test_print_stylesheet(tmp_path):
    html = tmp_path / "r.html"
    subprocess.run([DEMO, "synth", "600", "-1", str(html)], check=True, capture_output=True, timeout=60)
    text = html.read_text()
    media = text[text.index("@media print"):]
    media = media[:media.index("</style>")]
    assert "break-inside:avoid" in media
    assert "break-before:page" not in media  # no forced breaks: no nearly empty pages
    assert re.search(r"\.chart-block[^{]*\{[^}]*break-inside:avoid", text)
    # a chart keeps its drawn height in print (else its time labels fall on the next chart's title)
    assert not re.search(r"\.chart\{[^}]*height", media)


def test_gpu_charts_only_with_gpus(tmp_path):
    # the synthetic run: CPU, memory, disk I/O and network drawn; its disk space, flat within 1%, as text
    for extra, expected in (([], 4), (["--gpu"], 7)):  # with a GPU: its utilization, work (0.19) and VRAM
        html = tmp_path / "r.html"
        subprocess.run([DEMO, "synth", "600", "-1", str(html)] + extra, check=True, capture_output=True, timeout=60)
        text = html.read_text()
        assert f'data-charts-expected="{expected}"' in text
        for gpu_words in ("GPU utilization", "machine GPU (GPUs busy)", "<th>GPUs</th>", "<th>GPU memory</th>",
                          '<h3>GPU work</h3>', "job GPUs&#39; SM active"):
            assert (gpu_words in text) == bool(extra), gpu_words
        assert '<p class="chart-text" id="t-space">Disk space used: between 93.1 GiB and 93.2 GiB throughout</p>' in text


@needs_chromium
def test_proxy_counts_requests(tmp_path):
    """The counter works: a page that does fetch is caught."""
    page = tmp_path / "leaky.html"
    page.write_text('<html><body><img src="http://example.invalid/logo.png">'
                    '<script>fetch("http://127.0.0.1:9/x")</script></body></html>')
    _, requests = ru.render(page, tmp_path / "leaky.png", 400, 300)
    assert any("example.invalid" in r for r in requests), requests
    assert ru.external_urls(page.read_text())


def record_short_run(tmp_path):
    if not shutil.which("stress-ng"):
        pytest.skip("stress-ng not installed")
    jsonl = tmp_path / "run.jsonl"
    p = run(["-i", "0.2", "-o", str(jsonl), "--job-name", "stress", "--", "stress-ng", "--cpu", "1", "--timeout",
             "2s", "-q"], timeout=60)
    assert p.returncode == 0, p.stderr
    return jsonl


@needs_chromium
@pytest.mark.serial  # stress-ng's one busy core is seen above half a core
def test_real_run_report(tmp_path):
    image = pil()
    jsonl = record_short_run(tmp_path)
    html = tmp_path / "run.html"
    p = run(["report", str(jsonl), "-o", str(html)], timeout=60,
            env=tracker_env(TRACKER_KEEPER_URL="http://127.0.0.1:9"))
    assert p.returncode == 0, p.stderr
    dom, requests = ru.render(html, tmp_path / "run.png", 1280, 2400)
    text = html.read_text()
    check_self_contained(text, requests)
    charts = check_drawn(dom, image.open(tmp_path / "run.png"), 2)  # CPU, memory (others may be text)
    assert charts[0]["series_max"] > 0.5  # stress-ng kept about one core busy
    assert "stress" in text
    assert "prices: offline (Keeper not reached: " in text or "No recommendation" in text
    assert "warning" not in p.stderr, p.stderr  # a failed price lookup is no warning


def usage_line(p):
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stderr)
    return lines[0]


def test_usage_errors(tmp_path):
    assert "no FILE" in usage_line(run(["report", "-o", str(tmp_path / "o.html")]))
    assert "-o OUT.html" in usage_line(run(["report", "x.jsonl"]))
    assert "--bogus" in usage_line(run(["report", "x.jsonl", "-o", "o.html", "--bogus"]))
    assert "needs a value" in usage_line(run(["report", "x.jsonl", "-o"]))
    assert "VENDOR:TYPE" in usage_line(run(["report", "x.jsonl", "-o", "o.html", "--instance", "aws"]))
    assert not (tmp_path / "o.html").exists()


def test_bad_inputs(tmp_path):
    out = tmp_path / "o.html"
    assert "missing.jsonl" in usage_line(run(["report", str(tmp_path / "missing.jsonl"), "-o", str(out)]))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "empty.jsonl" in usage_line(run(["report", str(empty), "-o", str(out)]))
    assert not out.exists()


# ---- the report subcommand against a Keeper stand-in (tests/stubs/keeper_server.py) ----------

# the stand-in and recorded runs of the recommend tests (fixtures keeper and run_file)
from test_recommend import keeper, machine_run, run_file  # noqa: E402,F401


def report(args, url, timeout=30):
    return run(["report", *args], timeout=timeout, env=tracker_env(TRACKER_KEEPER_URL=url))


def test_unwritable_output_fails_before_any_lookup(tmp_path, keeper, run_file):
    k = keeper()
    out = tmp_path / "no-such-dir" / "r.html"
    p = report([run_file(), "-o", str(out), "--instance", "aws:m5.xlarge"], k.url)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1 and str(out) in lines[0], p.stderr
    assert k.requests() == []  # nothing asked of Keeper for a report that cannot be written


def test_full_disk_is_one_line_exit_1(run_file, keeper):
    k = keeper()
    p = report([run_file(), "-o", "/dev/full"], k.url)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert "/dev/full" in lines[0] and "No space left" in lines[0]


def test_stalling_keeper_is_asked_once(tmp_path, keeper, run_file):
    """Keeper that never answers: the price of --instance is not asked after the search timed
    out, so the whole lookup stays within its 5 s (hang guard only here)."""
    k = keeper("--stall")
    out = tmp_path / "r.html"
    p = report([run_file(), "-o", str(out), "--instance", "aws:m5.xlarge"], k.url)
    assert p.returncode == 0, p.stderr
    assert len(k.requests()) == 1
    assert p.stderr == "", p.stderr
    assert out.read_text().count("prices: offline (Keeper not reached: ") == 1  # no reply: as offline


def test_cheapest_and_price_in_the_page(tmp_path, keeper, run_file):
    k = keeper()
    out = tmp_path / "r.html"
    p = report([run_file(), "-o", str(out), "--instance", "aws:m5.xlarge"], k.url)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    text = out.read_text()
    assert "upcloud DEV-2xCPU-3GB (Developer 2xCPU-3GB)" in text
    assert "$0.1920 per hour (on demand)" in text
    assert [r["path"] for r in k.requests()] == ["/servers", "/server/aws/m5.xlarge/prices"]
    # the run's energy there (0.15): the stand-in's EPYC 7543 (225 W / 64 threads), 2 vCPUs for the
    # recommendation's 60 s with the run's 96 CPU seconds (recommend's test works the same figure)
    busy = 225 / 64
    want = 60 * 2 * 0.3 * busy + 96 * 0.7 * busy
    words = f"{want:.3g} J (estimated: AMD EPYC 7543, 225 W TDP / 64 threads)"
    assert f'<span id="answer-cheapest-energy">energy of this run there: {words}</span>' in text
    assert f"<tr><th>energy of this run there</th><td>{words}</td></tr>" in text


def test_run_without_process_is_named(tmp_path, tmp_path_factory, run_file):
    machine = machine_run(tmp_path / "machine.jsonl", tmp_path_factory)
    out = tmp_path / "r.html"
    p = report([run_file(), str(machine), "-o", str(out)], "http://127.0.0.1:9")
    assert p.returncode == 0, p.stderr
    assert f"No recommendation: {machine} has no tracked process tree." in out.read_text()


# ---- the page looked at: the answer on the first screen, axes, charts only for what happened,
# no broken or falling lines, print -------------------------------------------------------------

from test_recommend import template_line  # noqa: E402


def recorded_run(path, tpl, n=60, step=1.0, missing_pss=None):
    """Writes n samples step seconds apart in the tool's shape: a job holding 1,000 MiB PSS
    (1,100 MiB RSS) to its end, one core busy, nothing sent or received, the disk space the same
    throughout; missing_pss: the index of a sample without PSS. The last sample is the tool's
    reading a moment after the job ended (20 ms, the root gone, memory 0). Returns path."""
    t0 = 1_790_000_000.0
    with open(path, "w") as f:
        for i in range(n + 1):
            s = json.loads(json.dumps(tpl))
            end = i == n
            s["timestamp_secs"] = t0 + i * step + (0.02 - step if end else 0)
            s["interval_secs"] = 0.02 if end else step
            p = s["process"]
            p.update(alive=not end, child_count=0, cores_used=1.0, cpu_secs_total=1.0 * step * (i + 1),
                     pss_mib=0 if end else 1000.0, rss_mib=0 if end else 1100.0)
            if i == missing_pss:
                p["pss_mib"] = None
            if isinstance(p.get("cgroup"), dict):
                p["cgroup"]["pids"] = 0 if end else 1
            s["cpu"]["process_cores_used"] = 1.0
            for net in s.get("network") or []:
                net["rx_bytes_per_sec"] = net["tx_bytes_per_sec"] = 0
            for disk in s.get("disk") or []:
                for m in disk.get("mounts") or []:
                    m["used_bytes"] = 19_000_000_000
            f.write(json.dumps(s) + "\n")
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Reports from recorded files through `resource-tracker report`: a minute (one PSS missing)
    and 80 minutes a minute apart; {name: (html path, text)}."""
    tpl = template_line(tmp_path_factory)
    d = tmp_path_factory.mktemp("recorded")
    out = {}
    for name, kw in (("minute", dict(n=60, step=1.0, missing_pss=30)), ("hours", dict(n=80, step=60.0))):
        jsonl = recorded_run(d / f"{name}.jsonl", tpl, **kw)
        html = d / f"{name}.html"
        p = run(["report", str(jsonl), "-o", str(html)], timeout=120,
                env=tracker_env(TRACKER_KEEPER_URL="http://127.0.0.1:9"))
        assert p.returncode == 0, p.stderr
        out[name] = (html, html.read_text())
    return out


def test_flat_and_zero_charts_are_text(recorded):
    _, text = recorded["minute"]
    assert '<p class="chart-text" id="t-network">Network: nothing sent or received</p>' in text
    assert '<p class="chart-text" id="t-space">Disk space used: 17.7 GiB throughout</p>' in text
    assert 'id="b-network"' not in text and 'id="b-space"' not in text  # no chart for them
    assert 'id="b-cpu"' in text and 'id="b-memory"' in text


def test_no_false_drop_at_the_end(recorded):
    """The reading after the job ended (memory 0) is no point of the job's lines: the last point
    holds the job's 1,000 MiB, and the short reading made no point of its own."""
    for name, n in (("minute", 60), ("hours", 80)):
        t, s = ru.page_data(recorded[name][1])
        assert len(t) == n, name
        pss, rss = s[2], s[3]  # RPT_JOB_PSS, RPT_JOB_RSS: low, mean, high per point
        assert pss[-3:] == [1000, 1000, 1000] and rss[-3:] == [1100, 1100, 1100], name


@needs_chromium
def test_single_missing_value_bridged(recorded, tmp_path):
    """One sample without PSS: the job's PSS line (red) runs on through it, no gap in any column
    of the plot between its first and last point."""
    image = pil()
    html, text = recorded["minute"]
    t, s = ru.page_data(text)
    assert s[2][3 * 30] is None  # the point is missing in the data ...
    dom, _ = ru.render(html, tmp_path / "m.png", 1400, 1400)
    mem = ru.charts(dom)[1]
    x, y, w, h = mem["plot"]
    px = ru.plot_pixels(image.open(tmp_path / "m.png"), mem["plot"])
    def pss_red(p):  # the job PSS line's #d62728, not the RSS line's orange
        return p[0] > 150 and p[1] < 90 and p[2] < 90
    red_cols = [i for i in range(w) if any(pss_red(px[j][i]) for j in range(h))]
    assert red_cols, "the job's PSS is not drawn"
    missing = [i for i in range(red_cols[0], red_cols[-1] + 1) if i not in set(red_cols)]
    assert missing == [], f"the PSS line breaks at plot columns {missing[:5]}..."  # ... and not on the page


def x_labels(chart):
    return [l["text"] for l in sorted(chart["x"], key=lambda l: l["box"][0])]


@needs_chromium
def test_time_axis_elapsed_with_units_under_an_hour(recorded, tmp_path):
    html, text = recorded["minute"]
    assert 'data-time-axis="elapsed"' in text
    m, _ = ru.measure(html, str(tmp_path))
    for c in m["charts"]:
        labels = x_labels(c)
        assert labels[0] == "0 s", labels
        assert all(re.fullmatch(r"\d+(\.\d)? s|\d+ min( \d+ s)?", l) for l in labels), labels
        assert len(labels) >= 4


@needs_chromium
def test_time_axis_clock_beyond_an_hour(recorded, tmp_path):
    html, text = recorded["hours"]
    assert 'data-time-axis="clock"' in text and "Time of day, UTC." in text
    m, _ = ru.measure(html, str(tmp_path))
    labels = x_labels(m["charts"][0])
    assert len(labels) >= 4 and all(re.fullmatch(r"\d\d:\d\d|\d\d [A-Z][a-z]{2}", l) for l in labels), labels


def check_axis_labels(m):
    """Every axis label on one line, with its unit on the y axis; neighbours apart; the time
    labels inside their chart's block (never over the next chart's title)."""
    assert m["charts"]
    for c in m["charts"]:
        for l in c["x"] + c["y"]:
            assert l["box"][3] <= 1.6 * l["fs"], f"{c['id']}: label {l['text']!r} wraps ({l['box'][3]} px high)"
        xs = sorted(c["x"], key=lambda l: l["ink"][0])  # the text's own box (a label's box is wider)
        for a, b in zip(xs, xs[1:]):
            assert a["ink"][0] + a["ink"][2] < b["ink"][0], f"{c['id']}: {a['text']!r} overlaps {b['text']!r}"
        # each y axis' labels apart (the memory chart's machine line has its own axis at the right)
        mid = sum(l["ink"][0] for l in c["x"]) / len(c["x"]) if c["x"] else 0
        for side in (True, False):
            ys = sorted((l for l in c["y"] if (l["ink"][0] < mid) == side), key=lambda l: l["ink"][1])
            for a, b in zip(ys, ys[1:]):
                assert a["ink"][1] + a["ink"][3] <= b["ink"][1], f"{c['id']}: {a['text']!r} overlaps {b['text']!r}"
        for y in c["y"]:  # nor the time axis' first label
            for x in c["x"]:
                apart = (y["ink"][0] + y["ink"][2] <= x["ink"][0] or x["ink"][0] + x["ink"][2] <= y["ink"][0] or
                         y["ink"][1] + y["ink"][3] <= x["ink"][1] or x["ink"][1] + x["ink"][3] <= y["ink"][1])
                assert apart, f"{c['id']}: {y['text']!r} overlaps {x['text']!r}"
        for l in c["y"]:
            assert re.search(r"\d ?[A-Za-z%]", l["text"]), f"{c['id']}: no unit in {l['text']!r}"  # 0.19: "20%"
        bottom = c["block"][1] + c["block"][3]
        assert all(l["box"][1] + l["box"][3] <= bottom + 1 for l in c["x"]), c["id"]


@needs_chromium
@pytest.mark.parametrize("width", [1400, 420])
def test_axis_labels_one_line_with_units(tmp_path, width):
    html = tmp_path / "r.html"
    subprocess.run([DEMO, "synth", "600", "-1", str(html), "--gpu"], check=True, capture_output=True, timeout=60)
    m, _ = ru.measure(html, str(tmp_path), width)
    assert len(m["charts"]) == 7  # the GPU work's (0.19) too: percent on one line
    check_axis_labels(m)
    rates = [l["text"] for c in m["charts"] for l in c["y"] if l["text"].endswith("/s")]
    assert any(" KiB/s" in r for r in rates), rates


@needs_chromium
def test_first_screen_holds_the_answer(tmp_path):
    """At 1400 x 900 the answer's parts (what the job used, the exit status, what to ask for, the
    cost, the notes) end above 900 px; at 420 px nothing runs off the page's width."""
    html = tmp_path / "r.html"
    subprocess.run([DEMO, "synth", "600", "-1", str(html)], check=True, capture_output=True, timeout=60)
    m, _ = ru.measure(html, str(tmp_path), 1400, 900)
    for part in ("answer-used", "answer-exit", "answer-ask", "answer-cost", "answer-notes"):
        assert part in m["ids"], part
        left, top, w, h = m["ids"][part]
        assert top + h <= 900, f"{part} ends at {top + h} px"
    m, _ = ru.measure(html, str(tmp_path), 420, 900)
    assert m["viewport"][0] == 420
    assert m["scrollWidth"] <= m["clientWidth"], f"{m['scrollWidth']} px wide at {m['clientWidth']}"
    check_axis_labels(m)


def test_killed_job_exit_status_in_words(tmp_path):
    """A job killed by SIGINT: the summary's words in the answer and in the run's table. The job
    sets SIGINT's default action first: a suite started in the background of a shell without job
    control inherits SIGINT ignored, which a wrapper passes on and sh cannot undo."""
    html = tmp_path / "r.html"
    job = "import os, signal; signal.signal(signal.SIGINT, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGINT)"
    p = run(["-q", "--report", str(html), "--", sys.executable, "-c", job], timeout=60,
            env=tracker_env(TRACKER_KEEPER_URL="http://127.0.0.1:9"))
    assert p.returncode == 130, p.stderr
    text = html.read_text()
    assert 'id="answer-exit"><b>130 (killed by signal 2, SIGINT)</b>' in text
    assert "<th>exit status</th><td>130 (killed by signal 2, SIGINT)</td>" in text
    assert "(failure)" not in text


@needs_chromium
@pytest.mark.parametrize("name", ["synth", "day"])
def test_printed_pages(tmp_path, name):
    """Printed: at most a page per two charts beyond the pages of the rest (the same page printed
    with its charts left out)."""
    html = tmp_path / "r.html"
    args = ["600", "-1"] if name == "synth" else ["86400", "43200"]
    subprocess.run([DEMO, "synth", *args, str(html)], check=True, capture_output=True, timeout=60)
    text = html.read_text()
    charts = int(re.search(r'data-charts-expected="(\d+)"', text).group(1))
    bare = tmp_path / "bare.html"
    bare.write_text(text.replace("</style>", "#charts{display:none}</style>", 1))
    ru.print_pdf(html, tmp_path / "r.pdf")
    ru.print_pdf(bare, tmp_path / "bare.pdf")
    pages, rest = ru.pdf_pages(tmp_path / "r.pdf"), ru.pdf_pages(tmp_path / "bare.pdf")
    assert 0 < rest <= pages <= rest + -(-charts // 2), (pages, rest, charts)


# ---- energy (0.15): the answer's energy line and the power chart ------------------------------

from test_energy import BURN, Meter, make_zone  # noqa: E402


def page_data(text):
    """The page's embedded data: S (per series, low/mean/high per point, flattened) and the power
    chart's definition (its title and the series indices it draws, by name)."""
    s = re.search(r"var S=(\[.*?\]);\nvar CH=", text, re.S)
    assert s, "no series in the page"
    series = json.loads(s.group(1))
    m = re.search(r'\{id:(\d+),title:"(Power[^"]*)",unit:"watts",m:0,s:\[(.*?)\]\}', text)
    power = None
    if m:
        power = {"id": int(m.group(1)), "title": m.group(2),
                 "series": {name: int(k) for k, name in re.findall(r'\[(\d+),"([^"]+)","#[0-9a-f]+"\]', m.group(3))}}
    return series, power


def record_powers(jsonl, key):
    """Each record's power in W: its energy (machine: energy_joules, job: process_energy_joules)
    over its interval, where it has one with its method."""
    out = []
    for line in open(jsonl):
        d = json.loads(line)
        e = d.get("energy")
        method = e and e.get("method" if key == "energy_joules" else "process_method")
        if e and method and e.get(key) is not None and d.get("interval_secs"):
            out.append(e[key] / d["interval_secs"])
    return out


def check_energy_line(line, summary, how):
    """The answer's energy line: the job's and the machine's joules as summary --json has them (to
    the line's three significant digits: the page rounds the unrounded figure, so a figure on a
    rounding edge may differ in its last digit from the JSON's rounded one), the job's by its one
    part, the CPU, with how it was had (0.19: "estimated", "measured by RAPL")."""
    m = re.match(rf"job ([0-9.]+) (k?J) \(CPU [0-9.]+ k?J {re.escape(how)}\), machine ([0-9.]+) (k?J)<br>", line)
    assert m, line
    scale = {"J": 1, "kJ": 1000}
    job, machine = float(m.group(1)) * scale[m.group(2)], float(m.group(3)) * scale[m.group(4)]
    assert job == pytest.approx(summary["process_joules"], rel=6e-3), (line, summary)
    assert machine == pytest.approx(summary["joules"], rel=6e-3), (line, summary)


def answer_energy(text):
    m = re.search(r'<tr id="answer-energy"><th>Energy</th><td>(.*?)</td></tr>', text, re.S)
    assert m, "no energy line in the answer"
    return m.group(1)


def check_power_chart(text, dom, jsonl, how):
    """The power chart by source (0.19): the job's one part (the CPU, its line named with how it was
    had) and the machine's, every record's power on them."""
    series, power = page_data(text)
    assert power and power["title"] == "Power (by source)", power
    job = f"job CPU ({how})"
    assert set(power["series"]) == {job, "machine"}
    for name, key in (("machine", "energy_joules"), (job, "process_energy_joules")):
        want = record_powers(jsonl, key)
        assert len(want) >= 3
        got = series[power["series"][name]]
        lows, means, highs = got[0::3], got[1::3], got[2::3]
        known = [v for v in highs if v is not None]
        assert known, name
        # every record's power is on the chart: the least and greatest are the records' own
        assert max(known) == pytest.approx(max(want), rel=1e-5), name
        assert min(v for v in lows if v is not None) == pytest.approx(min(want), rel=1e-5), name
        # each point's mean within its band (the band's ends are kept as floats: 1e-5 apart at most)
        assert all(lo - 1e-5 * abs(lo) <= m <= hi + 1e-5 * abs(hi) for lo, m, hi in zip(lows, means, highs)
                   if m is not None)
    # drawn by the page's script: the chart's greatest value is the machine's greatest power
    drawn = {c["id"]: c for c in ru.charts(dom)}
    assert drawn[f"c{power['id']}"]["series_max"] == pytest.approx(max(record_powers(jsonl, "energy_joules")),
                                                                        rel=1e-5)
    assert '<h3>Power (by source)</h3>' in text
    return series, power


@needs_chromium
def test_energy_estimated(tmp_path):
    """A machine without counters (an empty sys root, as on this VM): the CPU estimate, its method on
    the answer's line and on the chart's line of it (0.19: by source); CO2e unknown with how to set
    a grid, then known from a zone."""
    jsonl = tmp_path / "run.jsonl"
    sys_root = tmp_path / "sys"
    sys_root.mkdir()
    p = run(["--cgroup", "off", "-i", "0.2", "-q", "-o", str(jsonl), "--", sys.executable, "-c",
             BURN.format(secs=1.0)], env=tracker_env(TRACKER_SYS_ROOT=str(sys_root)), timeout=60)
    assert p.returncode == 0, p.stderr
    summary = json.loads(run(["summary", "--json", str(jsonl)], timeout=60).stdout)["energy"]
    assert summary["method"] == "estimated"
    html = tmp_path / "r.html"
    p = report([str(jsonl), "-o", str(html)], "off")
    assert p.returncode == 0, p.stderr
    text = html.read_text()
    line = answer_energy(text)
    check_energy_line(line, summary, "estimated")
    assert "CO2e: unknown" in line and "--grid-zone" in line and "--grid-intensity" in line
    assert 'id="answer-energy-model">estimated: ' in line
    dom, _ = ru.render(html, tmp_path / "r.png", 1280, 2400)
    check_power_chart(text, dom, jsonl, "estimated")
    # a zone: the carbon with its grid (France in the shipped table)
    p = report([str(jsonl), "-o", str(html), "--grid-zone", "FR"], "off")
    assert p.returncode == 0, p.stderr
    line = answer_energy(html.read_text())
    assert "CO2e: job " in line and "FR (France): " in line and "g/kWh" in line and "unknown" not in line


@needs_chromium
def test_energy_measured(tmp_path):
    """A package counter advancing at 30 W (a powercap fixture): the chart's power is the records'
    (measured), the answer's energy the summary's, the CO2e at a given intensity computed by hand."""
    sys_root = str(tmp_path / "sys")
    meter = Meter(make_zone(sys_root, "intel-rapl:0", "package-0"), watts=30.0)
    meter.start()
    jsonl = tmp_path / "run.jsonl"
    try:
        p = run(["--cgroup", "off", "-i", "0.2", "-q", "-o", str(jsonl), "--", sys.executable, "-c",
                 BURN.format(secs=1.0)], env=tracker_env(TRACKER_SYS_ROOT=sys_root), timeout=60)
        assert p.returncode == 0, p.stderr
    finally:
        meter.stop()
    summary = json.loads(run(["summary", "--json", str(jsonl)], timeout=60).stdout)["energy"]
    assert summary["method"] == "measured"
    html = tmp_path / "r.html"
    p = report([str(jsonl), "-o", str(html), "--grid-intensity", "100"], "off")
    assert p.returncode == 0, p.stderr
    text = html.read_text()
    line = answer_energy(text)
    check_energy_line(line, summary, "measured by RAPL")
    grams = summary["joules"] / 3.6e6 * 100
    # the summary's joules are rounded to its decimals: at a tie the report's own figure, from
    # the unrounded one, may round the other way (0.8265 from 29.754 J against 0.826)
    shown = {f"machine {g * 1000:.3g} mg" for g in (grams * (1 - 1e-4), grams, grams * (1 + 1e-4))}
    assert any(s in line for s in shown), (grams, line)
    assert "100 g/kWh" in line and "answer-energy-model" not in line
    dom, _ = ru.render(html, tmp_path / "r.png", 1280, 2400)
    series, power = check_power_chart(text, dom, jsonl, "measured by RAPL")
    machine = [v for v in series[power["series"]["machine"]][1::3] if v is not None]
    assert sum(machine) / len(machine) == pytest.approx(30.0, rel=0.25)  # the meter's 30 W, give or take its steps


PY = sys.executable


def two_node_job(tmp_path):
    """A job of two nodes run one after the other (n2 starting as n1 ends): the job's span is
    about the sum of theirs. Returns the two files."""
    files = []
    for node, secs in (("n1", "0.8"), ("n2", "1.6")):
        f = tmp_path / f"{node}.jsonl"
        r = run(["-q", "-i", "0.1", "-o", str(f), "--job-id", "J70", "--node", node, "--", PY, "-c",
                 f"x = bytearray(17 << 20); import time; time.sleep({secs})"], timeout=60)
        assert r.returncode == 0, r.stderr
        files.append(f)
    return files


def test_job_page_subtitle_is_the_jobs_span(tmp_path):
    """Issue 70: the job page's subtitle is the job's span (its earliest start to its latest end
    over the nodes), as its Job row says, not the span of the node shown below it."""
    files = two_node_job(tmp_path)
    html = tmp_path / "job.html"
    r = run(["report", *map(str, files), "-o", str(html)], env=tracker_env(TRACKER_KEEPER_URL="off"))
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    sub = re.search(r'<p class="sub">([^<]*)</p>', text).group(1)
    m = re.search(r"\u00b7 ([\d.]+) s on 2 nodes \((n[12]), shown below: ([\d.]+) s\)$", sub)
    assert m, sub
    job_row = re.search(r"J70 \(given\): 2 nodes, 2 runs; from [^,]*, ([\d.]+) s", text)
    assert job_row, text[:2000]
    span, node_secs = float(m.group(1)), float(m.group(3))
    assert abs(span - float(job_row.group(1))) < 0.06, (sub, job_row.group(0))
    assert span > node_secs + 0.5, sub  # the job's, not the node's


@needs_chromium
def test_memory_axis_is_the_jobs(tmp_path):
    """Issue 70: a 17 MiB job's memory is drawn on its own scale (the axis to its peak with
    headroom), the machine's used memory on an axis of its own at the right, not as the axis."""
    f = tmp_path / "run.jsonl"
    html = tmp_path / "run.html"
    r = run(["-q", "-i", "0.1", "-o", str(f), "--report", str(html), "--", PY, "-c",
             "x = bytearray(17 << 20); import time; time.sleep(1.5)"], timeout=60,
            env=tracker_env(TRACKER_KEEPER_URL="off"))
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    assert re.search(r'\[\d+,"machine used","#1f77b4",1\]', text), "the machine's line not on its own axis"
    machine = max(json.loads(l)["memory"]["used_mib"] for l in open(f))
    dom, _ = ru.render(html, tmp_path / "r.png", 1280, 2400)
    memory = ru.charts(dom)[1]
    assert 17 <= memory["series_max"] < 200, memory  # the job's lines' peak, MiB
    assert memory["ymax"] <= 1.25 * memory["series_max"], memory
    assert machine > 2 * memory["ymax"], (machine, memory)  # the machine's would have flattened it
    assert "machine used (right axis)" in dom
