"""The log view (docs/contracts.md §1): where stderr goes to a log people read (GitHub Actions,
GitLab CI, Jenkins, Buildkite, a SLURM job; told by their variables), a tracking run writes a start
line naming the samples' file (on a CI runner in its temporary directory, never the checkout, and
gzipped at the end; in a SLURM job the working directory), a progress line at each phase (and
each minute: unit test_status), and the answer; the samples go to that file whole, and
`summary FILE` of it gives the answer the log got. --view samples, or --format without -o (the
Rust tool's TRACKER_FORMAT too), keeps the samples on stderr; -o FILE keeps the log's lines with
FILE the samples' file (as written); -q writes nothing; a run never writes over an earlier run's
file; a directory that cannot be written costs the samples (said), never the job's exit status."""
import gzip
import json
import os
import re

import pytest

from conftest import TRACKER, run, tracker_env

START = "resource-tracker: tracking "
SUMMARY = "resource-tracker: summary of the run"

# each place: its variables (the checkout at {ws}/checkout), and where the samples' file goes
# (None: the working directory): the runner's temporary directory (RUNNER_TEMP; GitLab's
# RUNNER_TEMP_PROJECT_DIR, else $CI_PROJECT_DIR.tmp; Jenkins' WORKSPACE_TMP; else TMPDIR)
PLACES = {
    "github": ({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "{ws}/checkout", "RUNNER_TEMP": "{ws}/tmp"},
               "{ws}/tmp"),
    "gitlab": ({"GITLAB_CI": "true", "CI_PROJECT_DIR": "{ws}/checkout", "RUNNER_TEMP_PROJECT_DIR": "{ws}/tmp"},
               "{ws}/tmp"),
    "gitlab-beside": ({"GITLAB_CI": "true", "CI_PROJECT_DIR": "{ws}/checkout"}, "{ws}/checkout.tmp"),
    "jenkins": ({"JENKINS_URL": "http://127.0.0.1:9/", "WORKSPACE": "{ws}/checkout", "WORKSPACE_TMP": "{ws}/tmp"},
                "{ws}/tmp"),
    "buildkite": ({"BUILDKITE": "true", "BUILDKITE_BUILD_CHECKOUT_PATH": "{ws}/checkout", "TMPDIR": "{ws}/tmp"},
                  "{ws}/tmp"),
    "slurm": ({"SLURM_JOB_ID": "4242", "SLURM_PROCID": "0", "SLURMD_NODENAME": "n1"}, None),
}
RUNNER_TMP = ("RUNNER_TEMP", "RUNNER_TEMP_PROJECT_DIR", "WORKSPACE_TMP")


def place_env(name, ws, **extra):
    """The place's variables with its directories under ws (made where ws can be written)."""
    variables, _ = PLACES[name]
    for d in ("checkout", "checkout.tmp", "tmp"):
        try:
            os.makedirs(os.path.join(ws, d), exist_ok=True)
        except OSError:
            pass
    env = tracker_env(**dict({k: v.format(ws=ws) for k, v in variables.items()}, **extra))
    for k in RUNNER_TMP:  # the runner this suite may itself run on
        if k not in variables and k not in extra:
            env.pop(k, None)
    return env


def samples_file(stderr):
    """The samples' file the start line names (after the warnings of a SLURM job without SLURM:
    its time limit cannot be asked)."""
    start = next((l for l in stderr.splitlines() if l.startswith(START)), "")
    m = re.search(r"; samples to (\S+?)(?: \(gzipped at the end\))?;", start)
    assert m, stderr[:400]
    return m.group(1)


def answer(stderr):
    """The answer's rows after the summary's heading, up to Ran."""
    rows = stderr.split(SUMMARY, 1)[1].strip("\n").split("\n")
    return [r for r in rows[:next(i for i, r in enumerate(rows) if r.startswith("Ran "))]]


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_log_gets_the_lines_and_the_file_the_samples(tmp_path, place):
    ws = tmp_path / "workspace"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    step = tmp_path / "step.md"
    r = run(["-i", "0.1", "--", "sh", "-c", "sleep 1; echo done"], cwd=cwd,
            env=place_env(place, ws, GITHUB_STEP_SUMMARY=str(step)))
    assert r.returncode == 0, r.stderr
    err = r.stderr
    assert START in err and "\r" not in err and "\x1b" not in err, err[:400]
    assert '{"' not in err, err[:400]  # no sample in the log
    assert err.count(SUMMARY) == 1 and "\nUsed " in err and "\nAsk for " in err and "\nMore " in err, err
    path = samples_file(err)
    where = PLACES[place][1]
    assert os.path.dirname(path) == (where.format(ws=ws) if where else str(cwd)), (path, place)
    assert not os.listdir(ws / "checkout"), "a file in the checkout"
    name = os.path.basename(path)
    if place == "slurm":  # the job, node and rank name it, as it is written
        assert name == "resource-tracker-4242.n1.r0.jsonl", name
        text = open(path).read()
        kept = path
    else:  # gzipped at the end, the plain file gone, the end saying where
        assert re.fullmatch(r"resource-tracker-[^/]+\.\d+\.jsonl", name), name
        assert f"; samples to {path} (gzipped at the end);" in err, err[:400]
        kept = path + ".gz"
        assert not os.path.exists(path) and f"resource-tracker: samples gzipped to {kept}\n" in err, err
        with open(kept, "rb") as f:
            raw = f.read()
        text = gzip.decompress(raw).decode()
        assert len(raw) * 3 < len(text), (len(raw), len(text))  # far smaller
    lines = text.splitlines()
    samples = [json.loads(l) for l in lines]
    assert len(samples) >= 5 and all("cpu" in s for s in samples), lines[:2]
    # the log's bytes are a small part of the samples' (a 10 s job's 56 KB once went to the log)
    assert len(err) * 2 < sum(len(l) for l in lines), (len(err), sum(len(l) for l in lines))
    # the file read back (gzipped or not) gives the answer the log got
    s = run(["summary", kept], env=tracker_env())
    assert s.returncode == 0, s.stderr
    asks = [r for r in s.stdout.splitlines() if r.startswith("Ask for ")]
    assert asks and asks[0] in answer(err), (asks, err)
    assert f"More resource-tracker summary {kept};" in " ".join(err.split()), err
    if place == "github":  # the step summary names the file
        assert f"Samples: `{kept}`" in step.read_text(), step.read_text()[-400:]


def test_phases_get_a_line_each(tmp_path):
    """A mark of the job's prints a progress line at the next sample: the phase's name, started
    or ended, with the job's figures."""
    job = ("resource-tracker phase start load; sleep 0.4; resource-tracker phase stop load; "
           "resource-tracker phase start train; sleep 0.4; resource-tracker phase stop train; sleep 0.3")
    env = place_env("github", tmp_path)
    env["PATH"] = os.path.dirname(TRACKER) + os.pathsep + env["PATH"]
    r = run(["-i", "0.1", "--", "sh", "-c", job], env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    progress = [l for l in r.stderr.splitlines() if l.startswith("resource-tracker ") and " | " in l]
    said = " ".join(progress)
    for phase in ("load started", "load ended", "train started", "train ended"):
        assert phase in said, progress
    assert all(re.search(r"^resource-tracker \d+:\d\d \| phase .* \| job [\d.]+ cores, .* \| peak ", l)
               for l in progress), progress
    assert len(progress) <= 4, progress  # one at each sample with marks, none between (a minute apart)


@pytest.mark.parametrize("how", ["--view samples", "TRACKER_VIEW", "--format csv", "TRACKER_FORMAT"])
def test_samples_on_stderr_when_asked(tmp_path, how):
    """--view samples (flag or TRACKER_VIEW), or a format without -o (the Rust tool's
    TRACKER_FORMAT too): the samples on stderr as before, no file made."""
    args, extra = [], {}
    if how == "TRACKER_VIEW":
        extra["TRACKER_VIEW"] = "samples"
    elif how == "TRACKER_FORMAT":
        extra["TRACKER_FORMAT"] = "json"
    else:
        args = how.split()
    r = run([*args, "-i", "0.1", "--", "sleep", "0.5"], env=place_env("github", tmp_path, **extra), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = r.stderr.splitlines()
    assert START not in r.stderr and len(rows) >= 3, r.stderr[:400]
    if "csv" in how:
        assert rows[0].startswith("timestamp,"), rows[0]
    else:
        assert all(l.startswith("{") for l in rows), rows[:3]
    assert not list(tmp_path.glob("resource-tracker-*")), list(tmp_path.iterdir())


def test_output_file_keeps_the_lines_and_quiet_writes_nothing(tmp_path):
    out = tmp_path / "mine.jsonl"
    r = run(["-i", "0.1", "-o", str(out), "--", "sleep", "0.5"], env=place_env("gitlab", tmp_path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert samples_file(r.stderr) == str(out) and r.stderr.count(SUMMARY) == 1, r.stderr
    assert len(out.read_text().splitlines()) >= 3
    q = run(["-q", "-i", "0.1", "--", "sleep", "0.3"], env=place_env("gitlab", tmp_path), cwd=tmp_path)
    assert q.returncode == 0 and q.stderr == "", q.stderr
    made = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if not p.is_dir()]
    assert made == ["mine.jsonl"], made


def test_a_second_run_gets_a_file_of_its_own(tmp_path):
    """Two runs of one SLURM job's step on one node (a batch script's two commands) name the same
    file: the second gets "-2", the first is kept whole."""
    env = place_env("slurm", tmp_path)
    first = run(["-i", "0.1", "--", "sleep", "0.4"], env=env, cwd=tmp_path)
    second = run(["-i", "0.1", "--", "sleep", "0.4"], env=env, cwd=tmp_path)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    a, b = samples_file(first.stderr), samples_file(second.stderr)
    assert os.path.basename(a) == "resource-tracker-4242.n1.r0.jsonl", a
    assert os.path.basename(b) == "resource-tracker-4242.n1.r0-2.jsonl", b
    assert len(open(a).read().splitlines()) >= 3 and len(open(b).read().splitlines()) >= 3


def test_an_unwritable_workspace_costs_the_samples_not_the_job(tmp_path):
    """/proc as the runner's temporary directory: no file can be made there, root or not."""
    r = run(["-i", "0.1", "--", "sh", "-c", "sleep 0.3; exit 7"], env=place_env("github", "/proc", RUNNER_TEMP="/proc"),
            cwd=tmp_path)
    assert r.returncode == 7, r.stderr
    assert "cannot make a file for the samples in /proc (" in r.stderr, r.stderr
    assert "samples not kept (-o FILE keeps them)" in r.stderr and r.stderr.count(SUMMARY) == 1, r.stderr
    assert '{"' not in r.stderr and list(tmp_path.iterdir()) == [], r.stderr
