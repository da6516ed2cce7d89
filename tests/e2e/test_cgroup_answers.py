"""The answers about a run in its own cgroup (0.6): `summary` says in plain words that the job was
OOM-killed and throttled, `summary --json` carries the cgroup and pressure objects, `recommend`
never asks for less than the peak that got the job killed nor for the quota that held it back,
and `report` marks the kill, the throttled stretches, the limit and the quota. The recorded run
is tests/fixtures/runs/cgroup-oom.jsonl (hand-made, see the README beside it); a run without a
cgroup (tool.jsonl) gets nothing new."""
import json
import os
import re

import pytest

from conftest import REPO, run
import report_util as ru

RUNS = os.path.join(REPO, "tests", "fixtures", "runs")
OOM = os.path.join(RUNS, "cgroup-oom.jsonl")
PLAIN = os.path.join(RUNS, "tool.jsonl")


def ok(args):
    p = run(args)
    assert p.returncode == 0, p.stderr
    return p.stdout


def summary_json(path, *flags):
    return json.loads(ok(["summary", "--json", *flags, path]))


def test_summary_text_says_oom_and_throttling():
    out = ok(["summary", OOM])
    assert "killed by the OOM killer at 7.9 GiB (limit 8.0 GiB)" in out
    assert "CPU throttled in 40% of periods (quota 2 cores), 4.00 s in all" in out
    assert re.search(r"Memory limit +8.0 GiB, peak 7.9 GiB \(99%\)", out), out
    assert re.search(r"Pressure \(mean\) +CPU 12% \(some\), memory 3% \(some\) / 1% \(full\), I/O 0% \(some\) / 0% \(full\)", out), out
    assert "Tasks" in out and "peak 5, limit 100" in out


def test_summary_text_nothing_new_without_cgroup():
    out = ok(["summary", PLAIN])
    for word in ("OOM", "throttled", "Limits", "pressure", "quota"):
        assert word not in out


def test_summary_json_fields():
    s = summary_json(OOM)
    assert s["process"]["memory_peak_mib"] == 8100
    c = s["cgroup"]
    assert c["oom_kills"] == 1
    assert c["oom_kill_secs"] == 1700000007
    assert c["memory_limit_mib"] == 8192 and c["memory_high_mib"] is None
    assert c["cpu_quota_cores"] == 2
    assert (c["cpu_periods"], c["cpu_throttled_periods"], c["cpu_throttled_pct"]) == (80, 32, 40)
    assert c["cpu_throttled_secs"] == 4
    assert (c["pids_peak"], c["pids_limit"]) == (5, 100)
    p = s["pressure"]
    assert set(p) == {"cpu_some_pct", "memory_some_pct", "memory_full_pct", "io_some_pct", "io_full_pct"}
    assert p["cpu_some_pct"]["mean"] == 12  # the group's, not the machine's 50
    assert p["memory_full_pct"]["peak"] == 1
    # units: memory in the memory unit, the throttled time in the time unit
    g = summary_json(OOM, "--memory-unit", "gigabytes", "--time-unit", "minutes")
    assert g["cgroup"]["memory_limit_gigabytes"] == pytest.approx(8192 * 1.048576e-3, rel=1e-6)
    assert g["cgroup"]["cpu_throttled_minutes"] == pytest.approx(4 / 60, abs=1e-6)
    assert g["process"]["memory_peak_gigabytes"] == pytest.approx(8100 * 1.048576e-3, rel=1e-6)
    assert "memory_limit_mib" not in g["cgroup"]


def test_summary_json_null_without_cgroup():
    s = summary_json(PLAIN)
    assert s["cgroup"] is None and s["pressure"] is None
    assert s["process"]["memory_peak_mib"] is None


def test_two_runs_in_one_file(tmp_path):
    """The same run twice, the second with another pid: the kills and periods add up."""
    lines = open(OOM).read().splitlines()
    second = [l.replace('"pid":812', '"pid":813').replace('"timestamp_secs":17000000', '"timestamp_secs":17000001')
              for l in lines]
    f = tmp_path / "two.jsonl"
    f.write_text("\n".join(lines + second) + "\n")
    c = summary_json(str(f))["cgroup"]
    assert c["oom_kills"] == 2
    assert c["oom_kill_secs"] == 1700000007
    assert (c["cpu_periods"], c["cpu_throttled_periods"]) == (160, 64)


def test_recommend_respects_oom_peak_and_quota():
    out = ok(["recommend", OOM])
    # 0.20: above the limit the need is unknown: twice the limit, to learn it (issue 66)
    assert ("the job was OOM-killed at its 8 GiB limit (peak 7.9 GiB): its need is above that, unknown; "
            "asking for 16 GiB (2x the limit) to learn it") in out
    assert "memory floor: 16384 MiB, at least twice the limit a run was stopped at" in out
    assert "the CPU quota of 2 cores held the job back: throttled in 40% of periods; asking for 3" in out
    r = json.loads(ok(["recommend", "--json", OOM]))["recommendation"]
    assert r["memory_mib"] == 16384 and r["memory_floor_mib"] == 16384 and r["memory_learn"] is True
    assert r["cpu"] >= 3
    assert r["oom_killed"] is True
    assert r["cpu_quota_cores"] == 2 and r["cpu_throttled_pct"] == 40


def test_recommend_without_cgroup_unchanged():
    out = ok(["recommend", PLAIN])
    assert "OOM" not in out and "quota" not in out
    r = json.loads(ok(["recommend", "--json", PLAIN]))["recommendation"]
    assert r["oom_killed"] is False and r["cpu_quota_cores"] is None and r["cpu_throttled_pct"] is None
    assert r["memory_floor_mib"] is None and r["memory_learn"] is False and r["time_floor_secs"] is None


def test_report_has_the_marks(tmp_path):
    html = tmp_path / "r.html"
    ok(["report", OOM, "-o", str(html)])
    text = html.read_text()
    m = re.search(r"var MK=\{oom:\[\[([\d.]+),1\]\],thr:\[\[([\d.]+),([\d.]+)\]\],limit:8192,quota:2\};", text)
    assert m, re.search(r"var MK=[^\n]*", text)
    assert float(m.group(1)) == pytest.approx(7.0)  # the record that saw the kill, after T0
    assert (float(m.group(2)), float(m.group(3))) == (0.0, 8.0)  # throttled all along: one stretch
    assert "job OOM kills" in text and "job CPU quota (cores)" in text
    # 0.20: killed at its limit, the need above it unknown: the floor is twice the limit
    assert "<th>memory floor</th><td>twice the limit a run was stopped at (its need above it unknown)</td>" in text
    assert "<th>cores above</th><td>the quota of 2.00 cores (throttled in 40% of its periods)</td>" in text
    plain = tmp_path / "p.html"
    ok(["report", PLAIN, "-o", str(plain)])
    assert "var MK={oom:[],thr:[],limit:null,quota:null};" in plain.read_text()


@pytest.mark.skipif(ru.CHROMIUM is None, reason="chromium not installed (scripts/install-deps)")
def test_report_marks_drawn(tmp_path):
    """Rendered: the CPU chart draws its stretch and quota line, the memory chart its limit and
    the kill (a red vertical line where no series is red: the job's PSS is near 0 then)."""
    image = pytest.importorskip("PIL.Image", reason="Pillow not installed (Debian package python3-pil)")
    html = tmp_path / "r.html"
    ok(["report", OOM, "-o", str(html)])
    dom, requests = ru.render(html, tmp_path / "r.png", height=1400)
    assert requests == []
    marks = re.findall(r'<div class="chart" id="c(\d+)"[^>]*data-marks="(\d+)"', dom)
    marks = {int(k): int(v) for k, v in marks}
    assert marks.get(0) == 2 and marks.get(1) == 2, marks
    mem = ru.charts(dom)[1]
    assert mem["ymax"] >= 8192  # the limit is on the chart
    x, y, w, h = mem["plot"]
    px = ru.plot_pixels(image.open(tmp_path / "r.png"), mem["plot"])
    red_cols = [i for i in range(w) if sum(1 for j in range(h) if ru.is_red(px[j][i])) > h * 0.8]
    assert red_cols, "no vertical OOM marker"
    # at 7 s of an 8 s chart (x range padded): right of the middle
    assert min(red_cols) > w * 0.6


def test_whole_machine_group_oom_is_the_neighbours_not_a_job(tmp_path):
    """A whole-machine run (no process) inside a group whose OOM killer struck: the summary
    says tasks in the group were killed, not that a job was, and never prints a peak it lacks."""
    lines = []
    with open(OOM) as f:
        for line in f:
            if not line.strip():
                continue
            s = json.loads(line)
            s["cgroup"] = dict(s["process"]["cgroup"], own=False, exclusive=False)
            s["process"] = None
            lines.append(json.dumps(s))
    path = tmp_path / "machine.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = ok(["summary", str(path)])
    assert "Limits (the cgroup the tracker ran in)" in out, out
    assert re.search(r"OOM +1 task in the group killed by the OOM killer \(limit 8\.0 GiB\)", out), out
    assert "killed by the OOM killer at" not in out


def test_no_memory_figure_is_memory_unknown(tmp_path):
    """A recording with a tracked tree but no memory figure at all (no PSS, RSS, peak or cgroup):
    the recommendation says memory unknown, with a note, never a number that looks measured,
    and the schedulers' words ask for no memory."""
    f = tmp_path / "nomem.jsonl"
    f.write_text("".join(
        json.dumps({"timestamp_secs": 1700000000 + i, "interval_secs": 1, "process": {
            "pid": 42, "alive": True, "cores_used": 1.4, "cpu_secs_total": 1.4 * (i + 1), "pss_mib": None,
            "rss_mib": None}}) + "\n" for i in range(5)))
    out = ok(["recommend", str(f)])
    assert "memory: unknown" in out and "memory from: no figure (memory unknown)" in out, out
    # 1.4 cores throughout: one core would take 40% longer, so 2 (with the time limit that goes)
    assert "SLURM: --cpus-per-task=2 --time=0:10:00\n" in out and "--mem" not in out, out
    assert "note: memory unknown: no run has a memory figure" in out, out
    doc = json.loads(ok(["recommend", "--json", str(f)]))
    r = doc["recommendation"]
    assert r["memory_mib"] is None and r["memory_source"] == "unknown" and r["memory_need_mib"] is None
    assert "memory_unknown" in [n["kind"] for n in doc["notes"]]
    s = summary_json(str(f))
    assert s["memory_need"] == {"need_mib": None, "source": "unknown", "sampled": False}
    assert s["recommendation"]["memory_mib"] is None
    assert "memory_unknown" in [n["kind"] for n in s["notes"]]
    text = ok(["summary", str(f)])
    assert "Ask for     2 cores, memory unknown: --cpus-per-task=2 --time=0:10:00 (SLURM)" in text, text
    assert "Used        7.00 s CPU (mean 1.40 cores, peak 1.40); memory unknown" in text, text
