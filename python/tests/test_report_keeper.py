"""recommend_server against the local Keeper stand-in, and the HTML report: made by the C
library, saved, opened with a fake browser ($BROWSER records its argument), and still made
when the Keeper is down."""
import os
import re
import stat
import subprocess
import sys

import pytest

from resource_tracker.keeper import get_recommended_cloud_servers
from resource_tracker.report import Report

KEEPER_FIELDS = {"vendor_id", "api_reference", "display_name", "vcpus", "memory_amount",
                 "gpu_count", "min_price_ondemand"}


def test_recommend_server_from_the_stub(tracker):
    server = tracker.recommend_server()
    assert KEEPER_FIELDS <= set(server)
    rec = tracker.recommend_resources()
    assert server["vcpus"] >= rec["cpu"] and server["memory_amount"] >= rec["memory"]
    assert server["min_price_ondemand"] > 0
    # the stand-in's cheapest with 1 vCPU and 128 MiB: hcloud's 2-vCPU, 4 GiB at 0.006
    assert (server["vendor_id"], server["api_reference"]) == ("upcloud", "DEV-2xCPU-3GB")
    assert tracker.recommend_server(historical_stats=[tracker.stats()], vendor_id="aws")


def test_keeper_helpers():
    assert get_recommended_cloud_servers(cpu=4, memory=16384)[0]["vcpus"] >= 4
    assert get_recommended_cloud_servers(cpu=4, memory=16384, gpu=1, vram=20000)[0][
        "api_reference"] == "g2-standard-4"


def test_keeper_down(tracker, monkeypatch, capfd):
    monkeypatch.setenv("TRACKER_KEEPER_URL", "http://127.0.0.1:9")
    with pytest.raises(RuntimeError, match="Keeper"):
        tracker.recommend_server()
    capfd.readouterr()
    html = tracker.report()  # never fails for the Keeper
    assert isinstance(html, Report) and "<html" in html.lower()
    # offline (nothing listens): one quiet line in the page, why and how to stop it; no stderr
    assert capfd.readouterr().err == ""
    lines = re.findall(r"prices: [^<]*", html)
    assert len(lines) == 1, lines
    assert lines[0].startswith("prices: offline (Keeper not reached: ") and "127.0.0.1" in lines[0], lines
    assert lines[0].endswith("TRACKER_KEEPER_URL=off stops the lookup)")
    assert "lookup failed" not in html


def test_prices_line_words():
    """The package words a failed lookup as the tool does (cli_prices_line), its own way to stop it."""
    from resource_tracker.keeper import lookup_cheapest, prices_line

    assert prices_line(None, None) is None
    assert prices_line("Spare Cores Keeper at http://k replied HTTP 503", None) == \
        "prices: unavailable (Spare Cores Keeper at http://k replied HTTP 503; TRACKER_KEEPER_URL=off stops the lookup)"
    assert prices_line("x", "Could not resolve host: k") == \
        "prices: offline (Keeper not reached: Could not resolve host: k; TRACKER_KEEPER_URL=off stops the lookup)"
    server, why, offline = lookup_cheapest({"cpu": 1, "memory": 128})  # the stand-in answers
    assert server is not None and why is None and offline is None


def test_report_save(tracker, tmp_path):
    report = tracker.report()
    assert isinstance(report, str) and report.lower().lstrip().startswith("<!doctype html")
    out = tmp_path / "report.html"
    assert report.save(str(out)) is report
    assert out.read_text(encoding="utf-8") == report
    failed = tracker.report(integration="metaflow", historical_stats=[tracker.stats()],
                            status_failed=True)
    assert "<html" in failed.lower()
    # the recommendation made from history (an rt_recommendation the package fills) has no
    # quota or OOM kill behind it: the 0.6 figures are null, not ctypes' zeros
    assert "cores above" not in failed and "memory above" not in failed


def test_report_browse_uses_the_browser(tmp_path):
    record = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {record}\n')
    browser.chmod(browser.stat().st_mode | stat.S_IEXEC)
    code = ("from resource_tracker import ResourceTracker\n"
            "t = ResourceTracker(autostart=True, interval=0.2)\n"
            "t.wait_for_samples(1)\n"
            "t.stop()\n"
            "r = t.report()\n"
            "assert r.browse() is r\n")
    env = dict(os.environ, BROWSER=str(browser))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    opened = record.read_text().strip()
    assert opened.startswith("file://") and opened.endswith(".html")
    path = opened[len("file://"):]
    with open(path, encoding="utf-8") as f:
        assert "<html" in f.read().lower()
    os.unlink(path)


def test_keeper_off(tracker, monkeypatch):
    """TRACKER_KEEPER_URL=off: no lookup, and the reason says so rather than an error's name."""
    from resource_tracker.keeper import cheapest, get_instance_price

    monkeypatch.setenv("TRACKER_KEEPER_URL", "off")
    assert cheapest({"cpu": 1, "memory": 128}) == (None, None)
    assert get_recommended_cloud_servers(cpu=1, memory=128) == []
    assert get_instance_price("aws", None, "m5.large") is None
    with pytest.raises(RuntimeError, match="TRACKER_KEEPER_URL=off"):
        tracker.recommend_server()
    html = tracker.report()
    assert "lookup failed" not in str(html)
