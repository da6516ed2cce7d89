"""The Keeper's price lookups turned off (TRACKER_KEEPER_URL=off, --no-price-lookup, the TOML key
[tracker] price_lookup = false): recommend, report and a tracking run's --report ask the local
Keeper stand-in nothing and warn of nothing; and a failed lookup (offline: Keeper at a closed
local port, never the real one) is one quiet line of the answer, "prices: offline (...)", with
nothing on stderr."""
import html
import json
import re

import pytest

from conftest import run, tracker_env
from test_recommend import canned_keeper, closed_port_url, keeper, run_file  # noqa: F401


def ways(tmp_path, url):
    """(name, extra args, env) for each way of turning the lookups off, with the stand-in's URL
    set wherever the way leaves TRACKER_KEEPER_URL alone (so a lookup would reach it)."""
    conf = tmp_path / "off.toml"
    conf.write_text("[tracker]\nprice_lookup = false\n")
    return [("env off", [], {"TRACKER_KEEPER_URL": "off"}),
            ("env OFF", [], {"TRACKER_KEEPER_URL": "OFF"}),
            ("flag", ["--no-price-lookup"], {"TRACKER_KEEPER_URL": url}),
            ("toml", ["-c", str(conf)], {"TRACKER_KEEPER_URL": url})]


def test_off_asks_nothing_and_says_nothing(tmp_path, keeper, run_file):
    k = keeper()
    path = run_file()
    # the control: with the lookups on, each of these asks the stand-in
    on = run(["recommend", path], env=tracker_env(TRACKER_KEEPER_URL=k.url))
    assert on.returncode == 0 and "cheapest" in on.stdout, on.stderr
    assert len(k.requests()) == 1
    for name, args, env in ways(tmp_path, k.url):
        before = len(k.requests())
        e = tracker_env(**env)
        if "-c" not in args:  # the subcommands read no config file
            r = run(["recommend", path, *args], env=e)
            assert r.returncode == 0 and r.stderr == "", (name, r.stderr)
            assert "cores" in r.stdout and "cheapest" not in r.stdout.lower(), (name, r.stdout)
            r = run(["recommend", path, "--json", *args], env=e)
            doc = json.loads(r.stdout)
            assert r.returncode == 0 and doc["cheapest"] is None and doc["server_lookup_error"] is None, (name, r.stdout)
            out = tmp_path / f"sub-{name}.html"
            r = run(["report", path, "-o", str(out), "--instance", "aws:m5.xlarge", *args], env=e)
            assert r.returncode == 0 and r.stderr == "", (name, r.stderr)
            assert "lookup failed" not in out.read_text() and "prices:" not in out.read_text(), name
        out = tmp_path / f"run-{name}.html"
        r = run(["-q", "--report", str(out), *args, "--", "sleep", "0.2"], env=e)
        assert r.returncode == 0, (name, r.stderr)
        assert "warning" not in r.stderr and "Keeper" not in r.stderr, (name, r.stderr)
        assert "lookup failed" not in out.read_text() and "prices:" not in out.read_text(), name
        assert len(k.requests()) == before, (name, k.requests()[before:])


def test_lookup_on_asks_the_tracking_run(tmp_path, keeper):
    """The control of the tracking run: --report with the lookups on asks the stand-in."""
    k = keeper()
    out = tmp_path / "r.html"
    r = run(["-q", "--report", str(out), "--", "sleep", "0.2"], env=tracker_env(TRACKER_KEEPER_URL=k.url))
    assert r.returncode == 0, r.stderr
    assert len(k.requests()) >= 1


OFFLINE = "prices: offline (Keeper not reached: "
STOP = "TRACKER_KEEPER_URL=off or --no-price-lookup stops the lookup)"


def prices_lines(page):
    """The page's lines about prices, as text."""
    return re.findall(r"prices: [^<]*", html.unescape(page))


def quiet_offline(page):
    """The one line of an offline lookup, once in the page, saying why and how to stop it."""
    lines = prices_lines(page)
    assert len(lines) == 1, lines
    assert html.unescape(page).count("prices:") == 1
    assert lines[0].startswith(OFFLINE) and lines[0].endswith(STOP), lines
    assert "lookup failed" not in page and "input/output error" not in page
    return lines[0]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9", "closed"])
def test_offline_is_one_quiet_line(tmp_path, run_file, url):
    """Keeper not reached (nothing listens: as offline, the DNS failure of the default URL): the
    report, a run's --report (with -q and without) and recommend's text each carry the one line
    "prices: offline (...)" with the reason and how to stop it, and stderr says nothing of it."""
    url = closed_port_url() if url == "closed" else url
    e = tracker_env(TRACKER_KEEPER_URL=url)
    path = run_file()
    out = tmp_path / "sub.html"
    r = run(["report", path, "-o", str(out), "--instance", "aws:m5.xlarge"], env=e)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    line = quiet_offline(out.read_text())
    assert "127.0.0.1" in line  # curl's reason names the host not reached
    for q in (["-q"], []):
        out = tmp_path / f"run{len(q)}.html"
        r = run([*q, "--report", str(out), "--", "sleep", "0.2"], env=e)
        assert r.returncode == 0, r.stderr
        assert "Keeper" not in r.stderr and "prices" not in r.stderr and "warning" not in r.stderr, r.stderr
        if q:
            assert r.stderr == "", r.stderr
        quiet_offline(out.read_text())
    r = run(["recommend", path], env=e)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [l for l in r.stdout.splitlines() if "prices" in l] == [r.stdout.splitlines()[-1]], r.stdout
    assert r.stdout.splitlines()[-1].startswith(OFFLINE) and r.stdout.endswith(STOP + "\n")


def test_wrong_answer_is_one_quiet_line_too(tmp_path, run_file):
    """A Keeper that replies, but wrongly (HTTP 503): the page's one line says "unavailable" with
    its reply, not "offline"; no warning on stderr either."""
    with canned_keeper(lambda path: (503, b"busy")) as url:
        out = tmp_path / "r.html"
        r = run(["report", run_file(), "-o", str(out)], env=tracker_env(TRACKER_KEEPER_URL=url))
        assert r.returncode == 0 and r.stderr == "", r.stderr
        lines = prices_lines(out.read_text())
        assert len(lines) == 1 and lines[0].startswith("prices: unavailable (") and "HTTP 503" in lines[0], lines
        assert lines[0].endswith(STOP)


def test_help_says_how_to_stop_it():
    for sub in ("report", "recommend"):
        r = run([sub, "--help"])
        assert r.returncode == 0 and "--no-price-lookup" in r.stdout
        assert "prices: offline (" in r.stdout and "nothing" in r.stdout, (sub, r.stdout)


@pytest.mark.parametrize("value", ['"no"', "0", '"false"'])
def test_toml_key_must_be_a_boolean(tmp_path, value):
    conf = tmp_path / "bad.toml"
    conf.write_text(f"[tracker]\nprice_lookup = {value}\n")
    marker = tmp_path / "ran"
    r = run(["-c", str(conf), "--", "touch", str(marker)])
    assert r.returncode == 2 and not marker.exists()
    assert f"{conf}:2" in r.stderr and "price_lookup" in r.stderr and "true or false" in r.stderr, r.stderr
