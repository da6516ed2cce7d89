"""Workflow engines' files (docs/workflows.md): --benchmark FILE and summary --format snakemake |
nextflow, judged by Debian's real snakemake (7.21, installed by scripts/install-deps --test): a
Snakefile whose rule runs a real workload under the tracker writing the rule's benchmark TSV as
an output, a second rule reading it, Snakemake's own benchmark file of the same job beside it
(same header, same columns), Snakemake's BenchmarkRecord writing our figures back byte for byte,
and `snakemake --report` embedding our file. Every figure matches `summary --json` of the same
run within the file's two decimals. Snakemake 7.21 has no reader of benchmark files (users read
them as TSV), and its --report downloads licences and scripts from the internet: the test runs
it with requests.get answered offline (nothing leaves the machine)."""
import base64
import csv
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import conftest
from conftest import TIMEOUT_SCALE, run, tracker_env

PY = "/usr/bin/python3"

# the job: 100 MiB held while at least a second of CPU is burnt, then 8 MiB written and synced
WORK = """import os, time
b = bytearray(100 * 1024 * 1024)
t0 = time.process_time()
while time.process_time() - t0 < 1.0:
    pass
with open("written.bin", "wb") as f:
    f.write(b"x" * (8 << 20))
    f.flush()
    os.fsync(f.fileno())
"""

SNAKEFILE = """TRACKER = config["tracker"]

rule all:
    input: "parsed.tsv"

rule work:
    output:
        ours=report("ours.tsv", category="benchmark"),
        jsonl="run.jsonl",
    benchmark: "theirs.tsv"
    shell: "{TRACKER} -i 0.1 -q -o {output.jsonl} --benchmark {output.ours} -- /usr/bin/python3 work.py"

rule read:
    input: ours="ours.tsv", theirs="theirs.tsv"
    output: "parsed.tsv"
    run:
        import csv
        with open(output[0], "w") as out:
            for name in (input.ours, input.theirs):
                with open(name) as f:
                    rows = list(csv.DictReader(f, delimiter="\\t"))
                assert len(rows) == 1, rows
                out.write(name + "\\t" + "\\t".join(rows[0][k] for k in ("s", "max_rss", "cpu_time")) + "\\n")
"""

# snakemake's own main with requests.get answered offline: its --report fetches licences and
# scripts from GitHub and CDNs, which a test must not reach
OFFLINE = """import sys
import requests

class Offline:
    status_code = requests.codes.ok
    text = "(not fetched: this test runs offline)"

requests.get = lambda url, *a, **k: Offline()
from snakemake import main
sys.argv[0] = "snakemake"
sys.exit(main())
"""

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time"


def have_snakemake():
    return subprocess.run([PY, "-c", "import snakemake.benchmark"], capture_output=True).returncode == 0


# CI installs it (scripts/install-deps --test): a missing snakemake fails there, never skips
needs_snakemake = pytest.mark.skipif(not have_snakemake() and not os.environ.get("CI"),
                                     reason="Debian's snakemake is not installed (scripts/install-deps --test)")


def read_tsv(path):
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    assert text.endswith("\n") and len(lines) == 3, text
    return text, lines[0], dict(zip(lines[0].split("\t"), lines[1].split("\t")))


def summary_json(path):
    r = run(["summary", "--json", str(path)])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def mib(x):
    return x / 1048576.0


def near(a, b, tol=0.006):
    return abs(a - b) <= tol


def check_against_summary(row, js):
    """The row's figures are summary --json's of the same run (two decimals)."""
    p = js["process"]
    assert near(float(row["max_rss"]), p["rss_mib"]["peak"]), (row, p["rss_mib"])
    assert near(float(row["max_vms"]), p["vms_peak_mib"]), (row, p["vms_peak_mib"])
    uss = js["gpu_tracker"]["max_ram"]["combined"]["private_rss"]  # gigabytes: 1e9 bytes
    assert js["gpu_tracker"]["max_ram"]["unit"] == "gigabytes"
    assert near(float(row["max_uss"]), mib(uss * 1e9)), (row, uss)
    assert near(float(row["max_pss"]), p["pss_mib"]["peak"]), (row, p["pss_mib"])
    assert near(float(row["io_in"]), mib(p["read_bytes"])), (row, p["read_bytes"])
    assert near(float(row["io_out"]), mib(p["write_bytes"])), (row, p["write_bytes"])
    assert near(float(row["cpu_time"]), p["cpu_secs"]), (row, p["cpu_secs"])
    # mean_load: the CPU seconds over the row's own seconds, in percent of a core
    assert near(float(row["mean_load"]), p["cpu_secs"] / float(row["s"]) * 100, 0.01 + 0.001 * float(row["mean_load"]))


@needs_snakemake
def test_snakemake_reads_and_reports_our_benchmark_file(tmp_path):
    (tmp_path / "work.py").write_text(WORK)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "offline_snakemake.py").write_text(OFFLINE)
    env = tracker_env(XDG_CACHE_HOME=str(tmp_path / "cache"), HOME=str(tmp_path))
    cmd = [PY, str(tmp_path / "offline_snakemake.py"), "--cores", "1", "--config", f"tracker={conftest.TRACKER}"]
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stdout + r.stderr

    ours_text, header, ours = read_tsv(tmp_path / "ours.tsv")
    # Snakemake's own benchmark file of the same job: the same header line, the same columns
    _, their_header, theirs = read_tsv(tmp_path / "theirs.tsv")
    assert header == their_header == HEADER
    assert list(ours) == list(theirs)
    # the second rule read both (one row each)
    parsed = (tmp_path / "parsed.tsv").read_text().splitlines()
    assert [l.split("\t")[0] for l in parsed] == ["ours.tsv", "theirs.tsv"]
    assert parsed[0].split("\t")[1:] == [ours["s"], ours["max_rss"], ours["cpu_time"]]

    # Snakemake's writer, fed our figures, writes our row to the byte: its header, its numbers
    check = f"""
import sys
from snakemake.benchmark import BenchmarkRecord
row = dict(zip({HEADER!r}.split("\\t"), sys.stdin.read().rstrip("\\n").split("\\t")))
f = lambda k: None if row[k] == "-" else float(row[k])
rt = float(row["s"])
r = BenchmarkRecord(running_time=rt, max_rss=f("max_rss"), max_vms=f("max_vms"), max_uss=f("max_uss"),
                    max_pss=f("max_pss"), io_in=f("io_in"), io_out=f("io_out"),
                    cpu_usages=float(row["mean_load"]) * rt, cpu_time=f("cpu_time"))
r.data_collected = True
print(BenchmarkRecord.get_header())
print(r.to_tsv())
"""
    back = subprocess.run([PY, "-c", check], input=ours_text.split("\n")[1], capture_output=True, text=True,
                          timeout=60 * TIMEOUT_SCALE)
    assert back.returncode == 0, back.stderr
    assert back.stdout == ours_text

    # our figures are the run's, as summary --json of the samples the same run wrote says
    js = summary_json(tmp_path / "run.jsonl")
    check_against_summary(ours, js)
    assert float(ours["s"]) + 0.001 >= js["duration_secs"]  # the tool's whole life covers the samples'
    h, m, s = (int(x) for x in ours["h:m:s"].split(":"))
    assert h * 3600 + m * 60 + s == int(float(ours["s"]))
    # and the workload's: 100 MiB held, a second of CPU at least, virtual memory above resident
    assert float(ours["max_rss"]) >= 100 and float(ours["max_pss"]) >= 95 and float(ours["max_uss"]) >= 95
    assert float(ours["max_vms"]) >= 100 and float(ours["cpu_time"]) >= 1.0
    # Snakemake measured a superset of our tree (the shell and the tracker too) every 0.5 s while
    # the 100 MiB were held for a second: the same order of magnitude, so the same unit (MiB)
    assert float(theirs["max_rss"]) >= 0.9 * float(ours["max_rss"])

    # --report: the workflow's report with our file embedded (a table, its bytes intact)
    r = subprocess.run(cmd + ["--report", "report.html"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300 * TIMEOUT_SCALE)
    assert r.returncode == 0, r.stdout + r.stderr
    html = (tmp_path / "report.html").read_text()
    m = re.search(r"data:text/tab-separated-values;charset=[^;]*;filename=ours\.tsv;base64,([A-Za-z0-9+/=]+)", html)
    assert m, "our benchmark file is not in the report"
    assert base64.b64decode(m.group(1)).decode() == ours_text


def test_benchmark_file_replaced_and_matching_summary_formats(tmp_path):
    out, bench = tmp_path / "run.jsonl", tmp_path / "bench.tsv"
    bench.write_text("an older file\n")
    r = run(["-i", "0.1", "-q", "-o", str(out), "--benchmark", str(bench), "--", PY, "-c",
             "import time\nb = bytearray(50 << 20)\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass"],
            timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert sorted(os.listdir(tmp_path)) == ["bench.tsv", "run.jsonl"]  # no FILE.tmp left
    text, header, row = read_tsv(bench)
    assert header == HEADER
    js = summary_json(out)
    check_against_summary(row, js)
    assert float(row["max_rss"]) >= 50

    # summary --format snakemake of the recording: the same figures but s (the samples' span),
    # within the JSON line's three decimals (a figure at .xx5 may round either way)
    r = run(["summary", "--format", "snakemake", str(out)])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert lines[0] == HEADER and lines[2:] == [""]
    again = dict(zip(HEADER.split("\t"), lines[1].split("\t")))
    for k in ("max_rss", "max_vms", "max_uss", "max_pss", "io_in", "io_out", "cpu_time"):
        assert near(float(again[k]), float(row[k]), 0.0101), (k, again[k], row[k])
    assert float(again["s"]) == pytest.approx(js["duration_secs"], abs=0.0006)

    # the Nextflow trace of the same recording: Nextflow's names and units, "-" where unknown
    r = run(["summary", "--format", "nextflow", str(out)], env=tracker_env(TZ="UTC"))
    assert r.returncode == 0, r.stderr
    head, vals, end = r.stdout.split("\n")
    assert end == ""
    nf = dict(zip(head.split("\t"), vals.split("\t")))
    assert list(nf) == ["name", "status", "exit", "start", "complete", "duration", "realtime", "%cpu", "peak_rss",
                        "peak_vmem", "rchar", "wchar", "read_bytes", "write_bytes"]
    assert nf["status"] == nf["exit"] == nf["rchar"] == nf["wchar"] == "-"  # a file knows no exit status
    num, unit = nf["peak_rss"].split(" ")
    assert unit == "MB" and abs(float(num) - js["process"]["rss_mib"]["peak"]) <= 0.051
    num, unit = nf["peak_vmem"].split(" ")
    assert unit == "MB" and abs(float(num) - js["process"]["vms_peak_mib"]) <= 0.051
    assert re.fullmatch(r"\d+(\.\d)?%", nf["%cpu"])
    assert abs(float(nf["%cpu"][:-1]) - js["process"]["cpu_secs"] / js["duration_secs"] * 100) <= 0.1
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}", nf["start"])


def test_benchmark_unwritable_is_one_warning_and_the_status_stands(tmp_path):
    r = run(["-q", "--benchmark", str(tmp_path / "missing" / "b.tsv"), "--", "sh", "-c", "exit 3"])
    assert r.returncode == 3
    assert r.stderr.count("--benchmark") == 1, r.stderr
    assert "warning: --benchmark: cannot write" in r.stderr
    # files of the user's beside FILE are never written: FILE.tmp kept as it is, a link at FILE
    # replaced (not followed), no temporary file left
    target = tmp_path / "target"
    target.write_text("keep\n")
    (tmp_path / "b.tsv.tmp").write_text("mine\n")
    os.symlink(target, tmp_path / "b.tsv")
    r = run(["-q", "--benchmark", str(tmp_path / "b.tsv"), "--", "true"])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert target.read_text() == "keep\n" and (tmp_path / "b.tsv.tmp").read_text() == "mine\n"
    assert not os.path.islink(tmp_path / "b.tsv") and read_tsv(tmp_path / "b.tsv")[1] == HEADER
    assert sorted(os.listdir(tmp_path)) == ["b.tsv", "b.tsv.tmp", "target"]


def test_benchmark_from_the_environment_and_the_config_file(tmp_path):
    r = run(["-q", "--", "true"], env=tracker_env(TRACKER_BENCHMARK=str(tmp_path / "env.tsv")))
    assert r.returncode == 0, r.stderr
    assert read_tsv(tmp_path / "env.tsv")[1] == HEADER
    cfg = tmp_path / "rt.toml"
    cfg.write_text(f'[tracker]\nbenchmark = "{tmp_path / "cfg.tsv"}"\n')
    r = run(["-q", "-c", str(cfg), "--", "true"])
    assert r.returncode == 0, r.stderr
    assert read_tsv(tmp_path / "cfg.tsv")[1] == HEADER
