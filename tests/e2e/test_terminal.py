"""The tool on a terminal (docs/contracts.md §1, the view): run under a pseudo-terminal and read
through a terminal emulator (pyte), the human view says one start line, keeps the terminal's
last row for one status line (shorter than the terminal; the job's output scrolls above it,
never mixed with it; the row given back at the end; in place on a terminal of under 4 rows) and
ends with the summary, and no sample line reaches the terminal; with
stderr a pipe the samples view stays what programs read; -q -o FILE writes FILE; and every path
the run will write is checked before the command starts (exit 2, one line, nothing run)."""
import fcntl
import json
import os
import pty
import re
import select
import shlex
import signal
import struct
import subprocess
import termios
import time

import pytest

pyte = pytest.importorskip("pyte", reason="python3-pyte (scripts/install-deps --test) emulates the terminal")

from conftest import REPO, TIMEOUT_SCALE, TRACKER, VALGRIND, run, tracker_env

ERASE = "\r\x1b[K"
START = "resource-tracker: tracking "
SUMMARY = "resource-tracker: summary of the run"
# under valgrind the first sample comes 0.3-0.5 s after the start (its code translated on first
# run): the jobs whose samples are counted last that much longer there
PAD = 1.0 if VALGRIND else 0.0


ROWS = 24


def pty_run(args, cols=100, env=None, stop_when=None, timeout=30, rows=ROWS):
    """Runs the tracker with stdin, stdout and stderr on a pseudo-terminal cols wide. With
    stop_when (a function of the output so far), SIGINT is sent once it is true. Returns the
    exit status and everything the terminal got (its \\n made \\r\\n by the line discipline)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    p = subprocess.Popen([TRACKER, *args], stdin=slave, stdout=slave, stderr=slave, env=env or tracker_env(),
                         start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout * TIMEOUT_SCALE
    signalled = False
    try:
        while time.monotonic() < deadline:
            if stop_when and not signalled and stop_when(out.decode(errors="replace")):
                p.send_signal(signal.SIGINT)
                signalled = True
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                if p.poll() is not None and not select.select([master], [], [], 0.2)[0]:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal's other end has gone
                break
            if not chunk:
                break
            out += chunk
        rc = p.wait(timeout=10 * TIMEOUT_SCALE)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        os.close(master)
    return rc, out.decode(errors="replace")


def draw_move(rows=ROWS):
    """A drawing of the status line: the cursor to the kept last row, the line erased."""
    return f"\x1b[{rows};1H\x1b[K"


def status_draws(text, rows=ROWS):
    """How many times the status line was drawn on its kept row."""
    return text.count(draw_move(rows))


def emulate(text, cols, rows=ROWS):
    """Feeds what the terminal got to an emulated terminal (pyte). Returns the screen's rows at
    the end, and after each drawing of the status line (the whole screen, as a person saw it)."""
    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    seen = []
    for part in re.split(r"(?<=\x1b8)", text):
        stream.feed(part)
        if draw_move(rows) in part:
            seen.append([r.rstrip() for r in screen.display])
    return [r.rstrip() for r in screen.display], seen


def start_of(text, cols):
    """The start line (broken at the terminal's width: its later rows begin with two spaces) as
    one line, and what follows it. Each of its rows fits the terminal, broken between words (a
    word longer than a row alone on its row)."""
    rows = text.split("\r\n")
    n = 1
    while n < len(rows) and rows[n].startswith("  ") and not rows[n].startswith("   "):
        n += 1
    assert all(len(r) <= cols or " " not in r.strip() for r in rows[:n]), rows[:n]  # a word too long: alone
    assert all(not r.endswith(" ") for r in rows[:n]), rows[:n]
    return " ".join(r.strip() for r in rows[:n]), "\r\n".join(rows[n:])


def assert_human_run(text, cols, full=False, rows=ROWS):
    assert text.startswith(START), text[:300]
    start_line, rest = start_of(text, cols)
    assert len(start_line) < 400
    assert "Ctrl-C" in start_line and "every 0.2 s" in start_line, start_line
    assert '{"' not in text and "timestamp," not in text, text[:2000]  # no JSON line nor CSV header
    assert text.count(SUMMARY) == 1, text
    live, summary = rest.split(SUMMARY, 1)
    # the last row kept for the line (a scroll region of the rows above) and given back before
    # the summary; every drawing on that row, shorter than the terminal; nothing else there
    assert f"\x1b[1;{rows - 1}r" in live and live.rstrip("\r\n").endswith("\x1b[r\x1b8"), repr(live[-200:])
    end, seen = emulate(text, cols, rows)
    assert len(seen) >= 2, repr(live)
    draws = []
    for screen in seen:
        d = screen[rows - 1]
        assert d.startswith("resource-tracker ") and len(d) < cols, (len(d), d)
        assert not any("resource-tracker 0:" in r for r in screen[:rows - 1]), screen
        draws.append(d)
    assert not any("resource-tracker 0:" in r for r in end), end  # erased at the end
    # the answer first; alone (brief, a line of the run and where the rest is) unless --summary
    lines = summary.strip("\r\n").split("\r\n")
    assert lines[0].startswith("Used ") and any(l.startswith("Ask for ") for l in lines), summary
    if full:
        assert "Machine" in summary and "Job (the process tree)" in summary and "More " not in summary, summary
    else:
        more = max(i for i, l in enumerate(lines) if l.startswith("More "))  # its later rows indented
        assert all(l.startswith(" " * 12) for l in lines[more + 1:]), summary
        said = " ".join(l.strip() for l in lines[more:])
        assert "--summary" in said or "resource-tracker summary " in said, summary
        assert lines[more - 1].startswith("Ran ") and "Machine" not in summary, summary
        assert more <= 12, summary
    return start_line, draws


@pytest.mark.parametrize("cols,extra", [(100, []), (40, ["--summary"])])
def test_human_view_on_a_terminal(cols, extra):
    """The start line, several redrawings of one status line (cut to a narrow terminal too),
    no sample line, and the summary once (also when --summary asks for it)."""
    rc, text = pty_run(["-i", "0.2", *extra, "--", "sleep", "3"], cols=cols)
    assert rc == 0, text
    start_line, draws = assert_human_run(text, cols, full=bool(extra))
    if not extra:
        assert re.search(r"\r\nRan +3\.\d+ s, exit status 0\r\n", text), text[-600:]
    assert "`sleep 3`" in start_line and "samples not kept (-o FILE keeps them)" in start_line, start_line
    assert "Ctrl-C stops the command" in start_line
    if cols >= 100:
        assert any(re.search(r"\| job [\d.]+ cores, [\d.]+ [MG]iB \| peak [\d.]+ cores, [\d.]+ [MG]iB", d) for d in draws), draws


def test_whole_machine_on_a_terminal_says_so():
    """No command on a terminal: the start line says the whole machine is tracked and how to stop;
    SIGINT ends it with the summary."""
    rc, text = pty_run(["-i", "0.2"], stop_when=lambda t: status_draws(t) >= 2)
    assert rc == 0, text
    start_line, draws = assert_human_run(text, 100)
    assert "the whole machine (no command given)" in start_line, start_line
    assert "Ctrl-C stops and prints the summary" in start_line, start_line
    assert any("| machine " in d for d in draws), draws


def test_job_output_scrolls_above_the_status_line():
    """A job that prints a line every 0.25 s while the line is drawn every second: each of its
    lines stays whole on a row of its own, above the status line, at every drawing and at the
    end (the old in-place line glued its text to whatever the job printed next)."""
    job = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo \"line $i of the job\"; sleep 0.25; done"
    # 40 rows: the job's 12 lines and the whole summary fit at the end, whatever notes a busy
    # machine adds to it (0.20's cpu_shared: at 24 rows line 1 scrolled off, as it should)
    rows = 40
    rc, text = pty_run(["-i", "0.2", "--", "sh", "-c", job], rows=rows)
    assert rc == 0, text
    assert_human_run(text, 100, rows=rows)
    end, seen = emulate(text, 100, rows=rows)
    want = [f"line {i} of the job" for i in range(1, 13)]
    assert [r for r in end if r.startswith("line ")] == want, end
    for screen in seen:  # what a person saw at each drawing
        job_rows = [r for r in screen[:rows - 1] if "of the job" in r]
        assert job_rows == want[:len(job_rows)], screen


def test_a_terminal_of_three_rows_gets_the_line_in_place():
    """Too few rows to keep one: the line is redrawn in place ("\\r", erase), no scroll region."""
    rc, text = pty_run(["-i", "0.2", "--", "sleep", "2.5"], rows=3)
    assert rc == 0, text
    assert "\x1b[1;" not in text and "\x1b7" not in text, repr(text[:400])
    live = start_of(text, 100)[1].split(SUMMARY, 1)[0]
    assert "\n" not in live and live.count(ERASE) >= 2 and live.endswith(ERASE), repr(live)


def test_view_samples_on_a_terminal_prints_json_lines():
    rc, text = pty_run(["-i", "0.2", "--view", "samples", "--", "sleep", str(1 + PAD)])
    assert rc == 0, text
    lines = [l for l in text.split("\r\n") if l]
    assert len(lines) >= 3 and all(l.startswith('{"') for l in lines), text[:1000]
    assert START not in text and ERASE not in text and "\x1b7" not in text


def answer_rows(text):
    """The rows of the answer (from the summary's heading to the end), as the terminal got them."""
    return text.split(SUMMARY, 1)[1].strip("\r\n").split("\r\n")


@pytest.mark.parametrize("view", [[], ["--view", "human"]])
def test_output_file_keeps_the_human_view_at_80_columns(tmp_path, view):
    """-o FILE on a terminal (as the plain run's start line advises) keeps the human view: the
    start line naming FILE, the status line, the answer; FILE gets the samples. On 80 columns
    every row of the start line and the answer fits, broken between words (a long path stays
    whole on its row), so the terminal never breaks a word."""
    out = tmp_path / ("a-rather-long-directory-name-for-the-samples" * 2) / "s.jsonl"
    out.parent.mkdir()
    rc, text = pty_run(["-i", "0.2", *view, "-o", str(out), "--", "sleep", str(2.5 + PAD)], cols=80)
    assert rc == 0, text
    start_line, draws = assert_human_run(text, 80)
    assert f"samples to {out}" in start_line, start_line
    rows = answer_rows(text)
    too_wide = [r for r in rows if len(r) > 80 and str(out) not in r]
    assert not too_wide, rows
    assert any(r.startswith("            ") for r in rows), rows  # something was broken onto a second row
    words = " ".join(r.strip() for r in rows)
    assert f"resource-tracker summary {out}; resource-tracker report {out} -o run.html" in words, rows
    assert len([json.loads(l) for l in out.read_text().splitlines()]) >= 3


@pytest.mark.serial  # two samples at -i 0.2 within a 0.7 s job: a loaded machine starts it late
def test_quiet_on_a_terminal_prints_nothing_and_writes_the_file(tmp_path):
    out = tmp_path / "q.jsonl"
    rc, text = pty_run(["-q", "-i", "0.2", "-o", str(out), "--", "sleep", str(0.7 + PAD)])
    assert rc == 0 and text == "", repr(text)
    samples = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(samples) >= 2 and "cpu" in samples[0]


def test_quiet_with_output_writes_the_file(tmp_path):
    """-q -o FILE: quiet means nothing on the terminal; the samples still go to FILE."""
    out = tmp_path / "q.jsonl"
    r = run(["-q", "-i", "0.1", "-o", str(out), "--", "true"])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    samples = [json.loads(l) for l in out.read_text().splitlines()]
    assert samples and "cpu" in samples[0]


def keys_of(stderr):
    """The kinds of line written: each line's keys (every line JSON). A set, not a list: how many
    samples fit in the job's 0.55 s is timing's (under valgrind one run took one more)."""
    return {tuple(json.loads(l)) for l in stderr.splitlines()}


def test_stderr_a_pipe_is_the_samples_view():
    """Not a terminal: auto is the samples view (the golden tests hold the exact bytes): the
    same lines with the same keys as --view samples; human writes the start line and the
    summary and no sample line, also when asked for in the environment or the config file."""
    args = ["-i", "0.1", "--", "sleep", str(0.55 + PAD)]
    auto = run(args)
    samples = run(["--view", "samples", *args])
    env = run(args, env=tracker_env(TRACKER_VIEW="samples"))
    assert auto.returncode == samples.returncode == env.returncode == 0
    assert keys_of(auto.stderr) and keys_of(auto.stderr) == keys_of(samples.stderr) == keys_of(env.stderr)
    assert min(len(x.stderr.splitlines()) for x in (auto, samples, env)) >= 3
    human = run(args, env=tracker_env(TRACKER_VIEW="human"))
    assert human.returncode == 0 and human.stderr.startswith(START), human.stderr
    assert '{"' not in human.stderr and "\r" not in human.stderr and human.stderr.count(SUMMARY) == 1


def test_view_in_the_config_file_and_bad_values(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[tracker]\nview = "human"\n')
    r = run(["-c", str(cfg), "-i", "0.1", "--", "true"])
    assert r.returncode == 0 and r.stderr.startswith(START) and SUMMARY in r.stderr, r.stderr
    # the command line wins over the file
    r = run(["-c", str(cfg), "--view", "samples", "-i", "0.1", "--", "true"])
    assert r.returncode == 0 and r.stderr.startswith('{"'), r.stderr
    for args, env, words in ((["--view", "tty"], {}, ["--view", "'tty'", "auto, human, log or samples"]),
                             ([], {"TRACKER_VIEW": "loud"}, ["TRACKER_VIEW", "'loud'"])):
        r = run([*args, "--", "true"], env=tracker_env(**env))
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        for w in words:
            assert w in r.stderr, (w, r.stderr)
    cfg.write_text('[tracker]\nview = "loud"\n')
    r = run(["-c", str(cfg), "--", "true"])
    assert r.returncode == 2 and "view" in r.stderr and '"samples"' in r.stderr, r.stderr


def unwritable_paths(tmp_path):
    """(flag, path, what) the run cannot write: each refused before the command starts."""
    missing = tmp_path / "no" / "such"
    yield "--report", str(missing / "r.html"), "No such file or directory"
    yield "--history", str(missing / "h.db"), "No such file or directory"
    yield "--history", str(tmp_path), "Is a directory"
    yield "--prometheus-textfile", str(missing), "No such file or directory"
    yield "--output", str(missing / "o.jsonl"), "No such file or directory"
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(exist_ok=True)
        os.chmod(ro, 0o555)
        yield "--report", str(ro / "r.html"), "Permission denied"
        yield "--history", str(ro / "h.db"), "Permission denied"
        yield "--prometheus-textfile", str(ro), "Permission denied"


def test_paths_the_run_writes_are_checked_before_the_command(tmp_path):
    marker = tmp_path / "ran"
    for flag, path, why in unwritable_paths(tmp_path):
        r = run([flag, path, "-q", "--", "sh", "-c", f"touch {marker}"])
        assert r.returncode == 2, (flag, path, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 1, (flag, r.stderr)
        assert flag in lines[0] and f"'{path}'" in lines[0] and why in lines[0], lines[0]
        assert not marker.exists(), (flag, path)  # the command never ran
        assert flag == "--history" and path == str(tmp_path) or not os.path.exists(path), path  # nothing left behind
    # from the config file too (named by the flag, as a bad -o is)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[tracker]\nreport = "{tmp_path}/no/such/r.html"\n')
    r = run(["-c", str(cfg), "--", "sh", "-c", f"touch {marker}"])
    assert r.returncode == 2 and "--report: cannot open" in r.stderr and not marker.exists(), r.stderr


def test_writable_paths_pass_the_check(tmp_path):
    """An existing file, a new file in a writable directory: the run goes on and writes them."""
    hist = tmp_path / "h.db"
    for _ in range(2):  # created, then appended to
        r = run(["-q", "-i", "0.1", "--history", str(hist), "--report", str(tmp_path / "r.html"),
                 "--prometheus-textfile", str(tmp_path), "--", "true"])
        assert r.returncode == 0, r.stderr
    assert hist.stat().st_size > 0 and (tmp_path / "r.html").stat().st_size > 0


def test_readme_first_command_ends_with_the_answer_on_80x24():
    """The README's first command, as written (its tracking run, with build/ the tests' build):
    on a terminal of 80 columns and 24 rows the last screen holds the answer (Used, Ask for),
    each row whole: no --summary pushing it up out of sight."""
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    first = re.search(r"```sh\n(.*?)\n```", readme, re.S).group(1)
    steps = first.split(" && ")
    assert steps[:3] == ["scripts/install-deps", "cmake -S . -B build", "cmake --build build -j"], first
    argv = shlex.split(steps[3])
    assert argv[0] == "build/resource-tracker" and "--summary" not in argv and "--" in argv, argv
    rc, text = pty_run(argv[1:], cols=80, rows=24, timeout=120)
    assert rc == 0, text
    end, _ = emulate(text, 80, 24)
    assert any(r.startswith("Used ") for r in end) and any(r.startswith("Ask for ") for r in end), end
    assert all(len(r) <= 80 for r in answer_rows(text)), answer_rows(text)
