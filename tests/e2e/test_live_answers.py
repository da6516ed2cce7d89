"""The answers of a tracking run at its end: --summary, --report and --history together, with the
cloud found through the metadata stand-in and prices from the Keeper stand-in; the statistics
kept while sampling agree with those read back from the run's own output; none of it changes
the job's exit status."""
import json
import sqlite3

import pytest

from conftest import run, tracker_env
from test_info import Standin
from test_recommend import Keeper

JOB = "/usr/bin/python3 -c \"import time\nt=time.time()\nwhile time.time()-t<0.8: pass\nx=bytearray(48<<20)\ntime.sleep(0.3)\nraise SystemExit(5)\""


@pytest.fixture
def services(tmp_path):
    cloud = Standin("aws", tmp_path)
    keeper = Keeper(tmp_path)
    yield cloud, keeper
    cloud.stop()
    keeper.stop()


def test_summary_report_and_history_at_exit(services, tmp_path):
    cloud, keeper = services
    out, html, db = tmp_path / "run.jsonl", tmp_path / "run.html", tmp_path / "runs.db"
    env = tracker_env(TRACKER_CLOUD_DISCOVERY="1", TRACKER_CLOUD_METADATA_URL=cloud.url,
                      TRACKER_KEEPER_URL=keeper.url)
    r = run(["-i", "0.1", "-o", str(out), "--summary", "--report", str(html), "--history", str(db),
             "--job-name", "live", "--tag", "team=<ml>", "--", "/bin/sh", "-c", JOB], env=env, timeout=60)
    assert r.returncode == 5, r.stderr
    # the summary on stderr: exit status, the cloud the stand-in describes
    lines = {l.strip().split("  ")[0]: l for l in r.stderr.splitlines() if l.startswith("  ")}
    assert lines["Exit status"].split()[-1] == "5"
    assert "aws g4dn.xlarge eu-central-1" in lines["Cloud"]
    assert "CPU time" in lines and "PSS" in lines
    # the report: where it ran and its price there (eu-central-1: 0.526 x 1.15), the exit status,
    # the job and its escaped tag; the Keeper was asked for the cheapest server and the price
    text = html.read_text()
    assert "aws:g4dn.xlarge" in text and "$0.6049" in text
    assert "team=&lt;ml&gt;" in text and "<ml>" not in text
    assert "live" in text
    paths = [q["path"] for q in keeper.requests()]
    assert "/servers" in paths and "/server/aws/g4dn.xlarge/prices" in paths
    # the history row, with the statistics kept while sampling ...
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        (row,) = c.execute("SELECT * FROM runs").fetchall()
    assert row["job_name"] == "live" and row["exit_status"] == 5
    assert row["cloud_vendor_id"] == "aws" and row["cloud_instance_type"] == "g4dn.xlarge"
    live = json.loads(row["summary_json"])
    # ... agree with the same run's output read back
    back = json.loads(run(["summary", "--json", str(out)]).stdout)
    assert live["samples"] == back["samples"]
    assert live["process"]["cpu_secs"] == pytest.approx(back["process"]["cpu_secs"], abs=0.002)
    assert live["duration_secs"] == pytest.approx(back["duration_secs"], abs=0.01)
    # the file holds figures rounded to 3-4 decimals: means and peaks agree within that; a
    # percentile is its histogram slot's middle, and a rounded value may fall into the next
    # slot (128 per power of two): within 1/128 then
    for key in ("cores", "pss_mib", "rss_mib"):
        for stat in ("mean", "peak", "p50", "p95"):
            rel = 0.005 if stat in ("mean", "peak") else 1 / 128 + 0.001
            assert live["process"][key][stat] == pytest.approx(back["process"][key][stat], rel=rel, abs=0.002), (key, stat)
    for key in ("cores", "memory_used_mib"):
        assert live["machine"][key]["peak"] == pytest.approx(back["machine"][key]["peak"], rel=0.005, abs=0.002)
    assert live["process"]["write_bytes"] == back["process"]["write_bytes"]


def test_answers_never_change_the_exit_status(tmp_path):
    """A report whose directory is gone by the end, a history that is no database, Keeper down:
    warnings, and the job's own status (paths that cannot be written already at the start are
    refused before the command: test_terminal.py)."""
    gone = tmp_path / "gone"
    gone.mkdir()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"garbage, not SQLite\n" * 500)
    r = run(["-q", "-i", "0.1", "--summary", "--report", str(gone / "r.html"),
             "--history", str(junk), "--", "/bin/sh", "-c", f"rm -r {gone}; exit 7"], timeout=60)
    assert r.returncode == 7, r.stderr
    assert "r.html" in r.stderr
    assert sum("history" in l for l in r.stderr.splitlines()) == 1


def test_config_turns_them_on(tmp_path):
    html = tmp_path / "cfg.html"
    cfg = tmp_path / "rt.toml"
    cfg.write_text(f'[tracker]\nquiet = true\nsummary = true\nreport = "{html}"\n\n[history]\npath = "{tmp_path / "h.db"}"\n')
    r = run(["-c", str(cfg), "-i", "0.1", "--", "/bin/sh", "-c", "sleep 0.3"], timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Exit status" in r.stderr
    assert html.exists() and "<html" in html.read_text()[:200].lower()
    assert (tmp_path / "h.db").exists()
    r = run(["history", "--json", "--history", str(tmp_path / "h.db")])
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1


def test_recommend_from_history_prices_where_the_job_ran(services, tmp_path):
    """recommend --job without --instance: the costs where the job's newest run ran, as cloud
    discovery found it (the stand-in says aws g4dn.xlarge in eu-central-1)."""
    cloud, keeper = services
    db = tmp_path / "runs.db"
    env = tracker_env(TRACKER_CLOUD_DISCOVERY="1", TRACKER_CLOUD_METADATA_URL=cloud.url,
                      TRACKER_KEEPER_URL=keeper.url)
    for _ in range(2):
        r = run(["-q", "-i", "0.1", "--history", str(db), "--job-name", "nightly", "--", "/usr/bin/python3", "-c",
                 "x = bytearray(32 << 20); sum(range(3_000_000))"], env=env, timeout=60)
        assert r.returncode == 0, r.stderr
    r = run(["recommend", "--job", "nightly", "--history", str(db)], env=env)
    assert r.returncode == 0, r.stderr
    assert "runs: 2" in r.stdout
    line = [l for l in r.stdout.splitlines() if l.startswith("instance:")][0]
    assert "aws:g4dn.xlarge in eu-central-1" in line and "$0.6049/hour" in line and "where the last run ran" in line
    assert any(q["path"] == "/server/aws/g4dn.xlarge/prices" for q in keeper.requests())
    # --instance still wins
    r = run(["recommend", "--job", "nightly", "--history", str(db), "--instance", "aws:m5.xlarge"], env=env)
    assert "instance: aws:m5.xlarge," in r.stdout
