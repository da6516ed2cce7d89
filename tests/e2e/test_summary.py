"""`resource-tracker summary` and `--summary`: the statistics of real recorded runs, checked
against figures computed here from the very same file (and, for CPU time, against the kernel's
own total that the tool records), in JSON lines and CSV, with gpu_tracker's units, and the
errors a user can make."""
import csv
import json
import math
import os
import re
import subprocess

import pytest

from conftest import TRACKER, run, tracker_env

BUSY = "/usr/bin/python3 -c \"import time\nt=time.time()\nwhile time.time()-t<1.2: pass\nx=bytearray(64<<20)\ntime.sleep(0.5)\""


def weighted_percentile(values, weights, q):
    pairs = sorted(zip(values, weights))
    total = sum(weights)
    acc = 0.0
    for v, w in pairs:
        acc += w
        if acc >= q * total - 1e-12:
            return v
    return pairs[-1][0]


def folded(values, weights):
    """A rate's intervals as the statistics count them (src/lib/analysis/fold.h): a record shorter
    than half its neighbour before it (or a first record shorter than half the next) is folded
    into that neighbour, their time-weighted mean. Returns (values, weights) of the windows."""
    out, held = [], None  # held: [x, w, last, first]
    for x, w in zip(values, weights):
        if held and (w < 0.5 * held[2] or (held[3] and held[2] < 0.5 * w)):
            held = [(held[0] * held[1] + x * w) / (held[1] + w), held[1] + w, w, False]
            continue
        if held:
            out.append((held[0], held[1]))
        held = [x, w, w, not out and held is None]
    if held:
        out.append((held[0], held[1]))
    return [x for x, _ in out], [w for _, w in out]


def close(a, b, rel=0.006, abs_=0.002):
    return abs(a - b) <= max(abs_, rel * abs(b))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One real wrapped run as JSON lines and one as CSV: a second of busy CPU, then 64 MiB."""
    d = tmp_path_factory.mktemp("summary")
    out = {}
    for fmt in ("json", "csv"):
        path = str(d / f"run.{fmt}")
        r = run(["-i", "0.1", "-f", fmt, "-o", path, "--job-name", "busy", "--", "/bin/sh", "-c", BUSY],
                timeout=60)
        assert r.returncode == 0, r.stderr
        out[fmt] = path
    return out


def summary_json(*args):
    r = run(["summary", "--json"] + list(args))
    assert r.returncode == 0, r.stderr
    return [json.loads(l) for l in r.stdout.splitlines()]


def test_jsonl_summary_matches_the_file(recorded):
    lines = [json.loads(l) for l in open(recorded["json"])]
    (s,) = summary_json(recorded["json"])
    w = [l["interval_secs"] for l in lines]
    cores = [l["process"]["cores_used"] for l in lines]
    assert s["samples"] == len(lines)
    assert s["job_name"] == "busy"
    assert close(s["duration_secs"], sum(w), abs_=0.01)
    p = s["process"]
    # the kernel's exact total, as the tool recorded it in the last line
    assert close(p["cpu_secs"], lines[-1]["process"]["cpu_secs_total"])
    assert p["cpu_secs"] > 0.2  # a busy second, less what a loaded machine leaves it
    assert close(p["cores"]["mean"], sum(c * x for c, x in zip(cores, w)) / sum(w), abs_=0.01)
    fc, fw = folded(cores, w)  # a short interval (a slow start under valgrind) is its neighbour's
    assert close(p["cores"]["peak"], max(fc))
    for q, key in ((0.5, "p50"), (0.95, "p95")):
        assert close(p["cores"][key], weighted_percentile(fc, fw, q), abs_=0.01), key
    pss = [l["process"]["pss_mib"] for l in lines]
    assert close(p["pss_mib"]["peak"], max(pss))
    assert p["pss_mib"]["peak"] > 64
    rss_peak = max(max(l["process"]["rss_mib"] for l in lines), max(l["process"]["rss_peak_mib"] for l in lines))
    assert close(p["rss_mib"]["peak"], rss_peak)
    assert p["read_bytes"] == lines[-1]["process"]["read_bytes_total"]
    assert p["write_bytes"] == lines[-1]["process"]["write_bytes_total"]
    m = s["machine"]
    assert m["cpu_count"] == os.cpu_count()
    # the machine's cores fold as the tree's do: a short interval (valgrind's slow start) is its neighbour's
    mw = [(l["cpu"]["utilization_pct"], l["interval_secs"]) for l in lines if l["cpu"]["utilization_pct"] is not None]
    assert close(m["cores"]["peak"], max(folded([c for c, _ in mw], [x for _, x in mw])[0]))
    assert close(m["memory_used_mib"]["peak"], max(l["memory"]["used_mib"] for l in lines))
    assert close(m["memory_total_mib"], lines[0]["memory"]["total_mib"])
    assert s["allocation"] in ("dedicated", "shared")


def test_csv_summary_matches_the_file(recorded):
    rows = list(csv.DictReader(open(recorded["csv"])))
    (s,) = summary_json(recorded["csv"])
    ts = [float(r["timestamp"]) for r in rows]
    w = [b - a for a, b in zip(ts, ts[1:])]
    w = [w[0]] + w
    cores = [float(r["process_cpu_usage"]) for r in rows]
    assert s["samples"] == len(rows)
    assert close(s["duration_secs"], sum(w), abs_=0.01)
    p = s["process"]
    cpu = sum(float(r["process_utime"]) + float(r["process_stime"]) for r in rows)
    assert close(p["cpu_secs"], cpu)
    assert close(p["cores"]["mean"], sum(c * x for c, x in zip(cores, w)) / sum(w), abs_=0.01)
    # folded as in the JSON lines' test: a short last interval (the job's exit, 7 ms under ASan in
    # rehearsal 9) may read 2.0 cores, held to the machine, and is its neighbour's in the peak
    assert close(p["cores"]["peak"], max(folded(cores, w)[0]))
    assert close(p["pss_mib"]["peak"], max(float(r["process_memory_mib"]) for r in rows))
    assert p["write_bytes"] == sum(int(r["process_disk_write_bytes"]) for r in rows)
    assert s["machine"]["net_recv_bytes"] == sum(int(r["system_net_recv_bytes"]) for r in rows)
    gb = 1e9  # the CSV's GB (0.17: 10^9 bytes, as both peers)
    assert close(s["machine"]["disk_space_used_peak_bytes"] / gb,
                 max(float(r["system_disk_space_used_gb"]) for r in rows), abs_=0.002)


def test_units_rename_and_convert(recorded):
    (base,) = summary_json(recorded["json"])
    (s,) = summary_json("--memory-unit", "gigabytes", "--time-unit", "hours", recorded["json"])
    assert "pss_mib" not in s["process"]
    assert close(s["process"]["pss_gigabytes"]["peak"], base["process"]["pss_mib"]["peak"] * 1048576 / 1e9)
    assert close(s["duration_hours"], base["duration_secs"] / 3600, abs_=1e-6)
    assert close(s["process"]["cpu_hours"], base["process"]["cpu_secs"] / 3600, abs_=1e-6)
    r = run(["summary", "--memory-unit", "megabytes", "--time-unit", "minutes", recorded["json"]])
    assert r.returncode == 0, r.stderr
    assert " megabytes" in r.stdout and " minutes" in r.stdout


def test_text_summary_is_aligned(recorded):
    r = run(["summary", recorded["json"], recorded["csv"]])
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("== ") == 2
    for label in ("Duration", "Samples", "CPU time", "Cores", "PSS", "Memory used"):
        assert label in r.stdout
    # values start in one column
    cols = {l.index(l.split()[-1]) for l in r.stdout.splitlines() if l.startswith("  Samples")}
    assert len(cols) == 1


def test_summary_at_exit_carries_the_exit_status(tmp_path):
    r = run(["-q", "-i", "0.1", "--summary", "--job-name", "failing", "--", "/bin/sh", "-c", "sleep 0.3; exit 3"])
    assert r.returncode == 3
    assert "Exit status" in r.stderr and "failing" in r.stderr
    status_line = [l for l in r.stderr.splitlines() if "Exit status" in l][0]
    assert status_line.split()[-1] == "3"
    assert "Host" in r.stderr
    # the config file says the same
    (tmp_path / "rt.toml").write_text("[tracker]\nsummary = true\nquiet = true\n")
    r = run(["-c", str(tmp_path / "rt.toml"), "--", "/bin/sh", "-c", "kill -9 $$"])
    assert r.returncode == 137
    assert "SIGKILL" in r.stderr


def test_errors(tmp_path):
    r = run(["summary"])
    assert r.returncode == 2 and "no FILE" in r.stderr
    r = run(["summary", str(tmp_path / "missing.jsonl")])
    assert r.returncode == 2 and "missing.jsonl" in r.stderr
    r = run(["summary", "--memory-unit", "parsecs", "x"])
    assert r.returncode == 2 and "parsecs" in r.stderr
    r = run(["summary", "--bogus", "x"])
    assert r.returncode == 2
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    r = run(["summary", str(junk)])
    assert r.returncode == 2 and "junk.txt" in r.stderr
    only_bad = tmp_path / "bad.jsonl"
    only_bad.write_text('{"timestamp_secs": 1, "interval_secs": \n')
    r = run(["summary", str(only_bad)])
    assert r.returncode == 2
    assert "bad.jsonl" in r.stderr


def test_malformed_lines_are_reported_and_skipped(recorded, tmp_path):
    lines = open(recorded["json"]).read().splitlines()
    broken = lines[:2] + ['{"timestamp_secs": oops}'] + lines[2:]
    p = tmp_path / "broken.jsonl"
    p.write_text("\n".join(broken) + "\n")
    r = run(["summary", "--json", str(p)])
    assert r.returncode == 0, r.stderr
    assert f"{p}:3:" in r.stderr
    assert json.loads(r.stdout)["samples"] == len(lines)


RUNS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "runs")


@pytest.mark.parametrize("name", ["tool.jsonl", "tool.csv", "python-process.csv", "python-combined.csv",
                                  "python05-process.csv", "python05-combined.csv"])
def test_fixture_statistics_by_hand(name):
    """The hand-made recordings of tests/fixtures/runs (see its README): three one-second
    samples with the tree at 1, 2, 3 cores and 100, 200, 300 MiB PSS (python05-*: the same run
    in the Python resource-tracker 0.5's names and units)."""
    (s,) = summary_json(os.path.join(RUNS, name))
    assert s["samples"] == 3
    assert s["duration_secs"] == 3
    assert s["start_secs"] == 1700000000 and s["end_secs"] == 1700000003
    p = s["process"]
    assert p["cpu_secs"] == 6
    assert p["cores"]["mean"] == 2 and p["cores"]["peak"] == 3
    assert abs(p["cores"]["p50"] - 2) <= 2 / 256 and abs(p["cores"]["p95"] - 3) <= 3 / 256
    assert p["pss_mib"]["mean"] == 200 and p["pss_mib"]["peak"] == 300
    assert p["read_bytes"] == 24576 and p["write_bytes"] == 3 * 1048576
    assert p["gpus_used"] == 1 and p["gpu_vram_mib"]["peak"] == 1024
    if name == "tool.jsonl":
        assert s["job_name"] == "fixture-job"
        assert p["rss_mib"]["peak"] == 350
    if name.endswith("-process.csv"):
        assert s["machine"]["cores"]["peak"] is None
    else:
        m = s["machine"]
        assert m["cores"]["mean"] == 2 and m["memory_used_mib"]["peak"] == 3000
        assert m["net_recv_bytes"] == 6000 and m["disk_read_bytes"] == 6000
        assert m["disk_space_used_peak_bytes"] == 15 * 1024 ** 3
        assert m["gpu_usage"]["peak"] == 0.5


@pytest.mark.parametrize("name", ["python-system.csv", "python05-system.csv"])
def test_python_system_tracker_has_no_tree(name):
    (s,) = summary_json(os.path.join(RUNS, name))
    assert s["process"] is None
    assert s["machine"]["memory_used_mib"]["mean"] == 2000


def summary_text(path, **env):
    r = run(["summary", str(path)], env=tracker_env(**env))
    assert r.returncode == 0, r.stderr
    return r.stdout


def value_of(text, label):
    return [l for l in text.splitlines() if l.startswith("  " + label + " ")][0][len("  ") + 27:]


def test_text_rounds_durations_up_to_the_next_unit(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"timestamp_secs":1000,"interval_secs":89.985}\n{"timestamp_secs":1089.985,"interval_secs":89.985}\n')
    assert value_of(summary_text(p), "Duration") == "3 min 00.0 s"
    p.write_text('{"timestamp_secs":1000,"interval_secs":59.999,'
                 '"process":{"pid":1,"cores_used":1,"read_bytes_total":1048570,"write_bytes_total":0}}\n')
    text = summary_text(p)
    assert value_of(text, "Duration") == "1 min 00.0 s"
    assert value_of(text, "Storage read / written") == "1.0 MiB / 0 B"  # not "1024.0 KiB"


def test_text_shows_missing_and_absurd_figures_as_dash_or_short(tmp_path):
    """A figure the file lacks is "-", never "nan"; an absurd one (1e300 cores, a duration of
    millions of years from timestamps jumping back and forth) prints short and without an
    integer overflow (the sanitizer build aborts on one)."""
    p = tmp_path / "odd.jsonl"
    lines = ['{"timestamp_secs":1000,"interval_secs":1,"cpu":{"utilization_pct":1e300},'
             '"memory":{"used_mib":1e300,"total_mib":1e300},'
             '"process":{"pid":5,"cores_used":1,"gpu_utilization_pct":50,"gpu_count_used":null,'
             '"gpu_vram_used_bytes":null,"pss_mib":-0.0,"cpu_secs_total":1e300}}']
    for i in range(4000):
        lines.append('{"timestamp_secs":%d,"interval_secs":null}' % (0 if i % 2 else 99999999999))
    p.write_text("\n".join(lines) + "\n")
    text = summary_text(p, COLUMNS="100")
    assert "nan" not in text.lower() and "inf" not in text.lower()
    assert not re.search(r"\s-0(\.0+)?\b", text)
    for l in text.splitlines():
        assert len(l) < 120, l
    assert value_of(text, "GPUs used") == "-"
    assert not value_of(text, "Duration").startswith("-")


SNAPSHOT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "snapshots", "python-tracker.json.gz")


def test_a_python_tracker_snapshot_reads_like_a_run(tmp_path):
    """A file written by the Python tracker's ResourceTracker.dump (gzipped JSON) is read by
    summary, recommend and report, its figures those of the file's own rows."""
    import gzip

    snap = json.load(gzip.open(SNAPSHOT, "rt"))
    proc = snap["process_metrics"]
    (s,) = summary_json(SNAPSHOT)
    assert s["samples"] == len(proc)
    p = s["process"]
    assert close(p["cpu_secs"], sum(r["utime"] + r["stime"] for r in proc), abs_=0.011)
    assert close(p["pss_mib"]["peak"], max(r["memory_mib"] for r in proc))
    r = run(["recommend", SNAPSHOT])
    assert r.returncode == 0, r.stderr
    assert "@resources(cpu=1" in r.stdout
    out = tmp_path / "r.html"
    r = run(["report", "-o", str(out), SNAPSHOT])
    assert r.returncode == 0, r.stderr
    assert out.read_text().lstrip().lower().startswith("<!doctype html")


def test_a_plain_json_snapshot_and_a_broken_one(tmp_path):
    """The same snapshot ungzipped reads the same; a snapshot cut short exits 2 and says why."""
    import gzip

    text = gzip.open(SNAPSHOT, "rt").read()
    plain = tmp_path / "snap.json"
    plain.write_text(text)
    assert summary_json(str(plain)) == summary_json(SNAPSHOT)
    broken = tmp_path / "broken.json"
    broken.write_text(text[: len(text) // 2])
    r = run(["summary", str(broken)])
    assert r.returncode == 2
    assert "broken.json" in r.stderr and "snapshot" in r.stderr


def with_phases(lines, marks, flood=0):
    """The lines with the JSON-lines member `phases` (docs/contracts.md §2) as the tool writes
    it: each mark (event, name, t, readings or None) on the first line at or after its time,
    the open phases and the counts on every line from the first mark on."""
    out, open_, k, n = [], [], 0, 0
    for l in lines:
        ms = []
        while k < len(marks) and marks[k][2] <= l["timestamp_secs"]:
            ev, name, t, cpu = marks[k]
            ms.append({"event": ev, "name": name, "timestamp_secs": t, "pid": 1,
                       "cpu_secs_total": cpu, "cpu_source": "group" if cpu is not None else "none",
                       "read_bytes_total": None, "write_bytes_total": None, "rss_mib": None,
                       "memory_peak_mib": None, "reading_lag_secs": None})
            if ev == "start":
                open_.append(name)
            else:
                open_.reverse(); open_.remove(name); open_.reverse()
            k += 1
            n += 1
        l = dict(l)
        if n:
            l["phases"] = {"open": list(open_), "marks": ms,
                           "counts": {"accepted": n, "unknown_stop": 0, "unterminated": 0, "too_long": 0,
                                      "malformed": 0, "flood": flood, "dropped": 0, "too_many_names": 0,
                                      "too_deep": 0, "refused": 0}}
        out.append(json.dumps(l))
    return "\n".join(out) + "\n"


def test_phases_of_a_recorded_file(recorded, tmp_path):
    """A recorded run whose lines carry phases (0.14): summary --json lists each phase by name with
    its figures (CPU from the readings at its marks, exact), the counts and a note; the text
    summary a Phases block; the report bands and a table; many phases still make one object."""
    lines = [json.loads(l) for l in open(recorded["json"])]
    assert len(lines) >= 8
    a, b = lines[2], lines[6]
    t0 = lines[0]["timestamp_secs"]
    marks = [("start", "busy part", a["timestamp_secs"], a["process"]["cpu_secs_total"]),
             ("start", "inner", a["timestamp_secs"] + 0.01, None),
             ("stop", "inner", a["timestamp_secs"] + 0.03, None),
             ("stop", "busy part", b["timestamp_secs"], b["process"]["cpu_secs_total"]),
             ("start", "left open", b["timestamp_secs"] + 0.05, None)]
    path = tmp_path / "phases.jsonl"
    path.write_text(with_phases(lines, marks, flood=4))
    (s,) = summary_json(str(path))
    names = [p["name"] for p in s["phases"]]
    assert names == ["busy part", "inner", "left open"]
    p = s["phases"][0]
    assert p["calls"] == 1 and p["unterminated"] == 0
    assert close(p["duration_secs"], b["timestamp_secs"] - a["timestamp_secs"], abs_=1e-6)
    assert p["cpu_exact"] is True
    assert close(p["cpu_secs"], b["process"]["cpu_secs_total"] - a["process"]["cpu_secs_total"], abs_=1e-6)
    assert p["samples"] == 5  # the lines at its start and stop included
    assert close(p["rss_peak_mib"], max(l["process"]["rss_mib"] for l in lines[2:7]), abs_=1e-3)
    assert s["phases"][1]["samples"] == 0 and s["phases"][1]["empty_calls"] == 1
    assert s["phases"][1]["cpu_exact"] is False
    assert s["phases"][2]["unterminated"] == 1
    assert close(s["phases"][2]["duration_secs"], lines[-1]["timestamp_secs"] - b["timestamp_secs"] - 0.05, abs_=1e-6)
    assert s["phase_marks"]["accepted"] == 5 and s["phase_marks"]["flood"] == 4
    assert s["phase_marks"]["unterminated"] == 1
    assert [n["kind"] for n in s["notes"]].count("phase_marks") == 1
    # the same run without the member: both null
    (plain,) = summary_json(recorded["json"])
    assert plain["phases"] is None and plain["phase_marks"] is None
    # the text summary and the report
    r = run(["summary", str(path)])
    assert r.returncode == 0, r.stderr
    assert "Phases (by name" in r.stdout and "  busy part " in r.stdout
    html = tmp_path / "r.html"
    r = run(["report", str(path), "-o", str(html), "--no-price-lookup"])
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    assert 'id="phase-table"' in page and ',pn:["busy part","inner","left open"]' in page
    # hundreds of phases: a summary longer than any fixed buffer
    many = [(ev, f"phase {i:04d}", t0 + 0.001 * i + (0.0005 if ev == "stop" else 0), None)
            for i in range(400) for ev in ("start", "stop")]
    path.write_text(with_phases(lines, many))
    (s,) = summary_json(str(path))
    assert len(s["phases"]) == 400 and s["phase_marks"]["accepted"] == 800
