"""GitHub Actions' job summary (src/cli/step_summary.c, src/lib/analysis/report_md.c): with
GITHUB_ACTIONS=true and GITHUB_STEP_SUMMARY naming a file, a tracking run of a real workload
appends its Markdown (twice for two runs, nothing truncated), whose Mermaid charts Mermaid's own
parser (tests/stubs/mermaid-check.js, npm's mermaid under jsdom) accepts; --step-summary off,
TRACKER_STEP_SUMMARY=off and [tracker] step_summary = false write nothing; an unwritable file
(a directory, a read-only one, a FIFO nobody reads, a full device) is one warning with the exit status and the
samples untouched; a file near GitHub's 1 MiB is never pushed past it; `summary --format
markdown` prints the same block for the recorded run; the checker catches a broken block."""
import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import REPO, TIMEOUT_SCALE, run, tracker_env

LIMIT = 1 << 20
CHECKER = os.path.join(REPO, "tests", "stubs", "mermaid-check.js")
NODE = shutil.which("node")
MERMAID = os.path.join(REPO, "tests", "stubs", "node_modules", "mermaid", "package.json")
HEADING = "### resource-tracker: "

# a real workload: a second of CPU with 40 MiB touched
WORK = ["python3", "-c",
        "import time\nb = bytearray(40 << 20)\nt = time.time()\nwhile time.time() - t < 1.0: pass\n"]


def gha_env(path, **extra):
    return tracker_env(GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(path), **extra)


def track(path, *args, cmd=None, env=None, **extra):
    return run(["-q", "-i", "0.1", *args, "--", *(cmd or WORK)], env=env or gha_env(path, **extra), timeout=60)


def mermaid_check(*files, expect_ok=True):
    if not NODE or not os.path.exists(MERMAID):
        pytest.skip("mermaid is not installed in tests/stubs (scripts/install-deps --test)")
    p = subprocess.run([NODE, CHECKER, "--require-block", *map(str, files)], capture_output=True, text=True,
                       timeout=120 * TIMEOUT_SCALE)
    if expect_ok:
        assert p.returncode == 0, p.stderr
    return p


def warnings(stderr):
    return [line for line in stderr.splitlines() if "GITHUB_STEP_SUMMARY" in line]


def test_two_runs_append_two_blocks_that_parse(tmp_path):
    path = tmp_path / "summary.md"
    path.write_text("# the workflow's own words\n")
    first = track(path, "--job-name", 'build | `test` "x" 训练;%#')
    assert first.returncode == 0, first.stderr
    # the same second of work, so that it is sampled alive even under valgrind (a job gone before
    # its first sample has no memory figure, and so no memory chart)
    second = track(path, cmd=["sh", "-c", '"$@"; exit 3', "sh", *WORK])
    assert second.returncode == 3, second.stderr
    assert not warnings(first.stderr + second.stderr)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# the workflow's own words\n\n" + HEADING + 'build \\| \\`test\\` "x" 训练;%\\#\n')
    assert text.count(HEADING) == 2
    assert text.count("}}}}%%\nxychart-beta\n") == 4
    first_block = text.split(HEADING)[1]
    assert "**Used:**" in first_block and "**Ask for:**" in first_block
    assert "| CPU time |" in first_block and "| exit status | 0 |" in first_block
    assert "| exit status | 3 |" in text.split(HEADING)[2]
    assert len(text) < 20000
    mermaid_check(path)


@pytest.mark.parametrize("how", ["flag", "env", "toml", "not-actions"])
def test_turned_off_writes_nothing(tmp_path, how):
    path = tmp_path / "summary.md"
    args, env = [], gha_env(path)
    if how == "flag":
        args = ["--step-summary", "off"]
    elif how == "env":
        env["TRACKER_STEP_SUMMARY"] = "off"
    elif how == "toml":
        conf = tmp_path / "rt.toml"
        conf.write_text("[tracker]\nstep_summary = false\n")
        args = ["-c", str(conf)]
    else:
        env["GITHUB_ACTIONS"] = "false"
    r = track(path, *args, cmd=["true"], env=env)
    assert r.returncode == 0, r.stderr
    assert not path.exists()
    assert not warnings(r.stderr)


def test_the_flag_wins_over_the_environment(tmp_path):
    path = tmp_path / "summary.md"
    r = track(path, "--step-summary", "auto", cmd=["true"], env=gha_env(path, TRACKER_STEP_SUMMARY="off"))
    assert r.returncode == 0, r.stderr
    assert path.read_text().startswith(HEADING)


def unwritable(tmp_path, kind):
    if kind == "directory":
        return tmp_path
    if kind == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes a read-only file")
        p = tmp_path / "ro.md"
        p.write_text("")
        p.chmod(0o444)
        return p
    if kind == "missing-dir":
        return tmp_path / "no" / "such.md"
    if kind == "fifo":  # nobody reads it: waited for within the finish timeout, never longer
        p = tmp_path / "fifo"
        os.mkfifo(p)
        return p
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    return "/dev/full"


@pytest.mark.parametrize("kind", ["directory", "read-only", "missing-dir", "fifo", "full"])
def test_unwritable_file_is_one_warning(tmp_path, kind):
    path = unwritable(tmp_path, kind)
    out = tmp_path / "samples.jsonl"
    # the command ends once two samples are in the file (looked at each tenth of a second, for
    # 30 s at most, longer under the sanitizers): a fixed half second gave one sample under ASan
    # on a loaded machine, and a short Python run gave one on a loaded CI machine
    wait = (f"n=0; while [ \"$(cat {shlex.quote(str(out))} 2>/dev/null | wc -l)\" -lt 2 ]"
            f" && [ $n -lt {300 * TIMEOUT_SCALE} ]; do sleep 0.1; n=$((n+1)); done; exit 5")
    r = track(path, "-o", str(out), cmd=["sh", "-c", wait], TRACKER_FINISH_TIMEOUT="1")
    assert r.returncode == 5, r.stderr
    assert len(warnings(r.stderr)) == 1, r.stderr
    assert "warning:" in warnings(r.stderr)[0]
    lines = out.read_text().splitlines()
    assert len(lines) >= 2 and all(line.startswith("{") for line in lines)


@pytest.mark.parametrize("room", [20, 300, 1200])
def test_a_file_near_1_mib_is_not_pushed_past_it(tmp_path, room):
    path = tmp_path / "summary.md"
    before = ("x" * 99 + "\n") * ((LIMIT - room) // 100) + "y" * ((LIMIT - room) % 100)
    path.write_text(before)
    r = track(path, "--job-name", "near")
    assert r.returncode == 0, r.stderr
    text = path.read_text()
    assert len(text.encode()) <= LIMIT
    assert text.startswith(before)
    added = text[len(before):]
    if room == 20:  # not even the note fits: nothing, and a warning
        assert added == ""
        assert len(warnings(r.stderr)) == 1
    elif room == 300:  # the note
        assert re.fullmatch(r"\nresource-tracker: this run's summary \(\d+ bytes\) is left out: .*\n", added)
        assert len(warnings(r.stderr)) == 1
    else:  # the answer, the rest left out and said so
        assert added.startswith("\n" + HEADING)
        assert "**Used:**" in added and "```mermaid" not in added
        assert "Left out to keep this summary under" in added
        assert not warnings(r.stderr)


def test_summary_markdown_prints_the_same_block(tmp_path):
    path, rec = tmp_path / "summary.md", tmp_path / "run.jsonl"
    r = track(path, "--job-name", "same", "-o", str(rec))
    assert r.returncode == 0, r.stderr
    live = path.read_text()
    s = run(["summary", "--format", "markdown", str(rec)])
    assert s.returncode == 0, s.stderr
    md = s.stdout
    (tmp_path / "recorded.md").write_text(md)
    assert md.startswith(HEADING + "same\n")

    def lines(text, prefix):
        return [line for line in text.splitlines() if line.startswith(prefix)]

    # the same answer and charts; a recorded file knows no command or exit status
    for prefix in ("### ", "**Used:**", "**Ask for:**", "**Notes:**", "- ", "    title"):
        assert lines(md, prefix) == lines(live, prefix), prefix
    assert [len(x.split(",")) for x in lines(md, "    line [")] == [len(x.split(",")) for x in lines(live, "    line [")]
    assert "| exit status |" in live and "| exit status |" not in md
    mermaid_check(tmp_path / "recorded.md")


def test_the_checker_catches_a_broken_block(tmp_path):
    good = tmp_path / "good.md"
    good.write_text('text\n\n```mermaid\nxychart-beta\n    title "ok"\n    x-axis "s" 0 --> 2\n'
                    '    y-axis "cores" 0 --> 1\n    line [0.5, 0.7]\n```\n')
    mermaid_check(good)
    bad = tmp_path / "bad.md"
    bad.write_text(good.read_text().replace('title "ok"', 'title "a "quoted" job"'))
    p = mermaid_check(bad, expect_ok=False)
    assert p.returncode == 1
    assert "Parse error" in p.stderr and "bad.md:4" in p.stderr
    none = tmp_path / "none.md"
    none.write_text("no chart\n")
    assert mermaid_check(none, expect_ok=False).returncode == 1


@pytest.mark.parametrize("how", ["flag", "env", "toml"])
def test_a_bad_value_is_a_usage_error(tmp_path, how):
    path = tmp_path / "summary.md"
    args, env = [], gha_env(path)
    if how == "flag":
        args, words = ["--step-summary", "maybe"], "--step-summary: 'maybe' is not a choice (auto or off)"
    elif how == "env":
        env["TRACKER_STEP_SUMMARY"] = "no"
        words = "TRACKER_STEP_SUMMARY: not a choice (auto or off): 'no'"
    else:
        conf = tmp_path / "rt.toml"
        conf.write_text("[tracker]\nstep_summary = 3\n")
        args, words = ["-c", str(conf)], '[tracker] step_summary must be true, false, "auto" or "off"'
    r = run([*args, "--", "true"], env=env)
    assert r.returncode == 2
    assert words in r.stderr
    assert not path.exists()


def test_what_the_job_was_given_is_in_the_markdown(tmp_path):
    """A recording whose lines carry a request (SLURM's 8 cores, 16 GiB, a 1-hour limit): the
    answer's efficiency line and the table say each figure with what said it; the notes say
    what was over-requested."""
    import json
    rec, given = tmp_path / "run.jsonl", tmp_path / "given.jsonl"
    r = run(["-q", "-i", "0.1", "-o", str(rec), "--job-name", "train", "--", *WORK], timeout=60)
    assert r.returncode == 0, r.stderr
    req = {"place": "slurm", "cpu_cores": 8, "memory_mib": 16384, "gpus": None, "time_limit_secs": 3600,
           "job_start_secs": None, "cpu_from": "SLURM_CPUS_PER_TASK", "memory_from": "SLURM_MEM_PER_NODE",
           "gpus_from": None, "time_limit_from": "scontrol"}
    tail = ',"request":' + json.dumps(req, separators=(",", ":")) + "}"
    given.write_text("".join(line[:-1] + tail + "\n" for line in rec.read_text().splitlines()))
    s = run(["summary", "--format", "markdown", str(given)])
    assert s.returncode == 0, s.stderr
    md = s.stdout
    eff = [line for line in md.splitlines() if line.startswith("**Efficiency:**")]
    assert len(eff) == 1
    share = r"(?:\d+|&lt;1)%"  # a share under 1% reads <1% (escaped for Markdown's HTML)
    assert re.match(r"\*\*Efficiency:\*\* CPU \d+% of 8 cores \(SLURM\\_CPUS\\_PER\\_TASK\), memory " + share + r" of 16 GiB "
                    r"\(SLURM\\_MEM\\_PER\\_NODE\), time limit " + share + r" of 60 min \(scontrol\)  $", eff[0]), eff[0]
    assert "| cores given | 8 cores (SLURM\\_CPUS\\_PER\\_TASK) |" in md
    assert "| memory given | 16.0 GiB (SLURM\\_MEM\\_PER\\_NODE) |" in md
    assert "| time limit | 1 h 0 min 0 s (scontrol) |" in md
    assert "GPUs given" not in md and "nan" not in md
    notes = md.split("**Notes:**", 1)[1].split("<details", 1)[0]
    assert len([line for line in notes.splitlines() if line.startswith("- ")]) >= 2
