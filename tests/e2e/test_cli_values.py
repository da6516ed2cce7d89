"""Issue 70: a subcommand's values read through their rows of the one settings table (type,
range, default): a bad value of each is one line in the row's words and exit status 2 with
nothing read or written; a mistyped long flag gets "did you mean --FLAG?"; -o DIR without its
'/' a hint that DIR/ writes into it."""
import subprocess

import pytest

from conftest import TRACKER, tracker_env


def run(args, cwd):
    return subprocess.run([TRACKER, *args], capture_output=True, text=True, timeout=30, cwd=cwd,
                          env=tracker_env(TRACKER_KEEPER_URL="off"))


def usage_line(r):
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


# (arguments, the line said): every value a subcommand takes that its row checks
BAD_VALUES = [
    (["recommend", "run.jsonl", "--max-slowdown", "5x"],
     "recommend: --max-slowdown: '5x' is not a percentage from 0 to 1000"),
    (["recommend", "run.jsonl", "--instance", "aws"],
     "recommend: --instance: 'aws' is not a server as VENDOR:TYPE (e.g. aws:t3.medium)"),
    (["recommend", "--job", ""], "recommend: --job: the value is empty"),
    (["recommend", "--job", "j", "--last", "0"], "recommend: --last: '0' is not a whole number of runs from 1"),
    (["summary", "--format", "yaml", "run.jsonl"],
     "summary: --format: 'yaml' is not a format (text, json, markdown, snakemake, nextflow)"),
    (["summary", "--memory-unit", "MiB", "run.jsonl"],
     "summary: --memory-unit: 'MiB' is not a unit (bytes, kilobytes, megabytes, gigabytes, terabytes)"),
    (["summary", "--time-unit", "weeks", "run.jsonl"],
     "summary: --time-unit: 'weeks' is not a unit (seconds, minutes, hours, days)"),
    (["summary", "--expected-cores", "0", "run.jsonl"],
     "summary: --expected-cores: '0' is not a number of cores above 0"),
    (["summary", "--gpus", "GPU-a,,GPU-b", "run.jsonl"],
     "summary: --gpus: an empty GPU uuid in the list: 'GPU-a,,GPU-b'"),
    (["history", "--last", "2.5"], "history: --last: '2.5' is not a whole number of runs from 1"),
    (["history", "--since", "yesterday"],
     "history: --since: 'yesterday' is not an ISO 8601 date or time (2026-11-29, 2026-11-29T07:30:00Z) or an age "
     "(90s, 30m, 12h, 7d, 2w)"),
    (["history", "--export", ""], "history: --export: the file name is empty"),
    (["report", "run.jsonl", "-o", ""], "report: --output: the file name is empty"),
    (["report", "run.jsonl", "-o", "r.html", "--instance", "aws:"],
     "report: --instance: 'aws:' is not a server as VENDOR:TYPE (e.g. aws:t3.medium)"),
    (["report", "run.jsonl", "-o", "r.html", "--grid-intensity", "0"],
     "report: --grid-intensity: '0' is not a number of grams of CO2e per kWh above 0, at most 10000"),
]


@pytest.mark.parametrize("args,said", BAD_VALUES, ids=[" ".join(a[:1] + a[-2:-1]) for a, _ in BAD_VALUES])
def test_bad_value_is_the_rows_message(tmp_path, args, said):
    assert usage_line(run(args, tmp_path)) == f"resource-tracker: {said}"
    assert list(tmp_path.iterdir()) == []  # nothing written, no history made


@pytest.mark.parametrize("args,said", [
    (["--outptu", "x.jsonl", "--", "true"], "unknown option '--outptu'; did you mean --output? (see --help)"),
    (["--intervl=1", "--", "true"], "unknown option '--intervl=1'; did you mean --interval? (see --help)"),
    (["summary", "--jsno", "x.jsonl"],
     "summary: unknown option '--jsno'; did you mean --json? (see resource-tracker summary --help)"),
    (["report", "x.jsonl", "--outptu", "r.html"],
     "report: unknown option '--outptu'; did you mean --output? (see resource-tracker report --help)"),
    (["history", "--frobnicate"], "history: unknown option '--frobnicate' (see resource-tracker history --help)"),
])
def test_mistyped_flag_gets_its_name(tmp_path, args, said):
    """One edit from a flag of up to 5 letters, two beyond (the rule `summery` gets), of the
    command's own flags; nothing runs."""
    assert usage_line(run(args, tmp_path)) == f"resource-tracker: {said}"
    assert list(tmp_path.iterdir()) == []


def test_output_directory_without_its_slash(tmp_path):
    """-o DIR/ is a directory where the run names its file; -o DIR (an existing directory) is a
    usage error as before, with the hint; DIR/ writes into it."""
    d = tmp_path / "results"
    d.mkdir()
    line = usage_line(run(["-q", "-o", "results", "--", "true"], tmp_path))
    assert line == ("resource-tracker: --output: cannot open 'results': Is a directory; to write into it, end it "
                    "with '/': -o results/")
    assert list(d.iterdir()) == []
    r = run(["-q", "-o", "results/", "--", "true"], tmp_path)
    assert r.returncode == 0, r.stderr
    (f,) = d.iterdir()
    assert f.name.endswith(".jsonl") and f.stat().st_size > 0


@pytest.mark.parametrize("flag", ["--report", "--history"])
def test_a_file_flag_refuses_a_directory_slash(tmp_path, flag):
    """Only -o takes DIR/: --report ./ and --history ./ are refused before the job starts (the
    report was said to fail at the run's end), with no hint."""
    line = usage_line(run(["-q", flag, "./", "--", "true"], tmp_path))
    assert line == f"resource-tracker: {flag}: cannot open './': Is a directory"
