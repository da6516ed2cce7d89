"""The HTML report, looked at: headless Chromium renders it to PNG and DOM, behind a proxy that
counts every request the page makes. A synthetic day (86,400 one-second records with one
one-second spike) and a real short stress-ng run; the report subcommand's usage errors."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD_DIR, TRACKER, run, tracker_env
import report_util as ru

DEMO = os.path.join(BUILD_DIR, "report-demo")

needs_chromium = pytest.mark.skipif(ru.CHROMIUM is None, reason="chromium not installed (scripts/install-deps)")


def pil():
    return pytest.importorskip("PIL.Image", reason="Pillow not installed (Debian package python3-pil)")


def check_drawn(dom, img):
    """Every chart drawn, and none blank: returns the charts' attributes."""
    body = ru.body_attrs(dom)
    expected = int(body["data-charts-expected"])
    assert expected >= 4
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
    assert "break-inside:avoid" in media and "break-before:page" in media
    assert re.search(r"\.chart-block[^{]*\{[^}]*break-inside:avoid", text)


def test_gpu_charts_only_with_gpus(tmp_path):
    for extra, expected in (([], 5), (["--gpu"], 7)):
        html = tmp_path / "r.html"
        subprocess.run([DEMO, "synth", "600", "-1", str(html)] + extra, check=True, capture_output=True, timeout=60)
        text = html.read_text()
        assert f'data-charts-expected="{expected}"' in text
        assert ("GPU utilization" in text) == bool(extra)


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
    charts = check_drawn(dom, image.open(tmp_path / "run.png"))
    assert charts[0]["series_max"] > 0.5  # stress-ng kept about one core busy
    assert "stress" in text
    assert "server lookup failed" in text or "No recommendation" in text


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
    assert "server lookup failed" in out.read_text()


def test_cheapest_and_price_in_the_page(tmp_path, keeper, run_file):
    k = keeper()
    out = tmp_path / "r.html"
    p = report([run_file(), "-o", str(out), "--instance", "aws:m5.xlarge"], k.url)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    text = out.read_text()
    assert "upcloud DEV-2xCPU-3GB (Developer 2xCPU-3GB)" in text
    assert "$0.1920 per hour (on demand)" in text
    assert [r["path"] for r in k.requests()] == ["/servers", "/server/aws/m5.xlarge/prices"]


def test_run_without_process_is_named(tmp_path, tmp_path_factory, run_file):
    machine = machine_run(tmp_path / "machine.jsonl", tmp_path_factory)
    out = tmp_path / "r.html"
    p = report([run_file(), str(machine), "-o", str(out)], "http://127.0.0.1:9")
    assert p.returncode == 0, p.stderr
    assert f"No recommendation: {machine} has no tracked process tree." in out.read_text()
