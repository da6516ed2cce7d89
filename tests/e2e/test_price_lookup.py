"""The Keeper's price lookups turned off (TRACKER_KEEPER_URL=off, --no-price-lookup, the TOML key
[tracker] price_lookup = false): recommend, report and a tracking run's --report ask the local
Keeper stand-in nothing and warn of nothing; and a failed lookup reads the same in the report as
on the terminal."""
import html
import json
import re

import pytest

from conftest import run, tracker_env
from test_recommend import closed_port_url, keeper, run_file  # noqa: F401


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
            assert "lookup failed" not in out.read_text(), name
        out = tmp_path / f"run-{name}.html"
        r = run(["-q", "--report", str(out), *args, "--", "sleep", "0.2"], env=e)
        assert r.returncode == 0, (name, r.stderr)
        assert "warning" not in r.stderr and "Keeper" not in r.stderr, (name, r.stderr)
        assert "lookup failed" not in out.read_text(), name
        assert len(k.requests()) == before, (name, k.requests()[before:])


def test_lookup_on_asks_the_tracking_run(tmp_path, keeper):
    """The control of the tracking run: --report with the lookups on asks the stand-in."""
    k = keeper()
    out = tmp_path / "r.html"
    r = run(["-q", "--report", str(out), "--", "sleep", "0.2"], env=tracker_env(TRACKER_KEEPER_URL=k.url))
    assert r.returncode == 0, r.stderr
    assert len(k.requests()) >= 1


def test_failed_lookup_reads_the_same_in_the_report(tmp_path):
    """Keeper down: the report's note carries the terminal's words, not an errno's name."""
    url = closed_port_url()
    out = tmp_path / "r.html"
    r = run(["-q", "--report", str(out), "--", "sleep", "0.2"], env=tracker_env(TRACKER_KEEPER_URL=url))
    assert r.returncode == 0
    warn = [l for l in r.stderr.splitlines() if "warning: " in l and url in l]
    assert len(warn) == 1, r.stderr
    said = warn[0].split("warning: ", 1)[1]
    page = html.unescape(out.read_text())
    assert said in page, (said, re.findall(r"lookup failed[^<]*", page))
    assert "input/output error" not in page


@pytest.mark.parametrize("value", ['"no"', "0", '"false"'])
def test_toml_key_must_be_a_boolean(tmp_path, value):
    conf = tmp_path / "bad.toml"
    conf.write_text(f"[tracker]\nprice_lookup = {value}\n")
    marker = tmp_path / "ran"
    r = run(["-c", str(conf), "--", "touch", str(marker)])
    assert r.returncode == 2 and not marker.exists()
    assert f"{conf}:2" in r.stderr and "price_lookup" in r.stderr and "true or false" in r.stderr, r.stderr
