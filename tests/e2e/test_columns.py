"""The texts people read fit the terminal (docs/contracts.md §1, "Widths"): --help, each
subcommand's --help, summary's text (its detail section), recommend's text and a job's Nodes table,
run on a pseudo-terminal 80 and 120 columns wide (TIOCSWINSZ), have no line wider than the
terminal and break no word (their words, in order, are those of the same text at 1000 columns);
without a terminal the width is COLUMNS, else 80. `--report FILE` says where it wrote."""
import pytest

from conftest import run, tracker_env
from test_terminal import pty_run

WIDTHS = (80, 120)
HELPS = ["--help"] + [f"{sub} --help" for sub in ("summary", "recommend", "report", "history", "info", "upload",
                                                  "phase")]


def pty_output(args, cols, env=None):
    """The tool's stdout and stderr on a pseudo-terminal cols wide (its width the terminal's:
    COLUMNS is not read there), its \r\n made \n."""
    rc, out = pty_run(args, cols=cols, env=env, timeout=60)
    return rc, out.replace("\r\n", "\n")


def wide_output(args, env=None):
    """The same text without a terminal at 1000 columns: nothing broken."""
    r = run(list(args), env=dict(env or tracker_env(), COLUMNS="1000"), timeout=60)
    return r.stdout + r.stderr


def split_nodes(text):
    """The text less a job's Nodes part, and that part (a table at one width, a paragraph a node at
    another: the same figures, other words around them)."""
    if "\nNodes " not in text:
        return text, ""
    a = text.index("\nNodes ")
    b = text.index("\nNotes ", a)
    return text[:a] + text[b:], text[a:b]


def check_fits(args, cols, env=None):
    rc, text = pty_output(args, cols, env)
    assert rc == 0, text[-600:]
    over = [l for l in text.splitlines() if len(l) > cols]
    assert not over, f"{' '.join(args)} at {cols}: {len(over)} lines wider: {over[:3]}"
    # no word broken: the words, in order, are the unbroken text's
    rest, nodes = split_nodes(text)
    wide_rest, wide_nodes = split_nodes(wide_output(args, env))
    assert rest.split() == wide_rest.split(), f"{' '.join(args)} at {cols}: words differ"
    # the Nodes part: its figures whole, in the order of the table's
    figures = lambda t: [w.strip(",():") for w in t.split() if any(c.isdigit() for c in w)]
    assert figures(nodes) == figures(wide_nodes), (nodes, wide_nodes)
    return text


@pytest.mark.parametrize("cols", WIDTHS)
@pytest.mark.parametrize("help_args", HELPS)
def test_help_fits(help_args, cols):
    text = check_fits(help_args.split(), cols)
    assert "-h, --help" in text


def test_help_without_a_terminal_is_80_or_columns():
    env = tracker_env()
    env.pop("COLUMNS")
    r = run(["--help"], env=env)
    assert r.returncode == 0 and max(len(l) for l in r.stdout.splitlines()) <= 80
    # hanging indents: an option's further lines under its text's column
    lines = r.stdout.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("  -o, --output FILE"))
    assert lines[at + 1].startswith(" " * 26) and lines[at + 1][26] != " ", lines[at:at + 2]
    r = run(["--help"], env=dict(env, COLUMNS="120"))
    widths = [len(l) for l in r.stdout.splitlines()]
    assert max(widths) <= 120 and max(widths) > 100, max(widths)


@pytest.fixture(scope="module")
def job_files(tmp_path_factory):
    """Two nodes' runs of one job (one node with a long name: its table passes 80 columns)."""
    d = tmp_path_factory.mktemp("job")
    for node, job in (("n1", "sleep 0.6"), ("node-with-a-rather-long-name-7", "sleep 1.2")):
        r = run(["-q", "-i", "0.1", "-o", str(d / f"{node}.jsonl"), "--job-id", "J70", "--node", node, "--",
                 "sh", "-c", job], timeout=60)
        assert r.returncode == 0, r.stderr
    return sorted(str(p) for p in d.glob("*.jsonl"))


@pytest.mark.parametrize("cols", WIDTHS)
def test_summary_detail_fits(job_files, cols):
    text = check_fits(["summary", job_files[0]], cols)
    assert "\nJob (the process tree)\n" in text and "\nMachine\n" in text


@pytest.mark.parametrize("cols", WIDTHS)
def test_recommend_fits(job_files, cols):
    env = tracker_env(TRACKER_KEEPER_URL="off")
    text = check_fits(["recommend", job_files[0]], cols, env)
    assert "\ncpu from: " in text


@pytest.mark.parametrize("cols", WIDTHS)
def test_nodes_table_fits(job_files, cols):
    """At 120 columns the Nodes table, its columns as wide as their cells; at 80 a paragraph a
    node."""
    text = check_fits(["summary", *job_files], cols)
    nodes = text[text.index("\nNodes "):]
    if cols == 120:
        assert nodes.startswith("\nNodes       node ") and " rank " in nodes.splitlines()[1], nodes
    else:
        assert "\nNodes       n1 (rank -): ran " in nodes, nodes
        assert "\n            node-with-a-rather-long-name-7 (rank -): ran " in nodes, nodes
    text = check_fits(["recommend", *job_files], cols, tracker_env(TRACKER_KEEPER_URL="off"))
    assert "\nNodes " in text


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A history of two runs, one with a command of 70 characters."""
    db = str(tmp_path_factory.mktemp("hist") / "h.db")
    for cmd in (["true"], ["sh", "-c", "echo a-rather-long-command-line-that-a-table-cannot-hold >/dev/null"]):
        r = run(["-q", "--history", db, "--job-name", "fit", "--", *cmd], timeout=60)
        assert r.returncode == 0, r.stderr
    return db


@pytest.mark.parametrize("cols", WIDTHS)
def test_history_fits(history, cols):
    """`history` on a terminal: at 120 the table, its NOTES and COMMAND cut with '...' where they
    would pass the width; at 80, where the other columns alone pass it, a paragraph a run (its
    figures, then its command cell whole); no line wider. A pipe gets the table as ever."""
    piped = wide_output(["history", "--history", history])
    # the newest run's COMMAND cell (stripped: a NOTES column widened by an older run's note, as
    # cpu_shared on a busy machine, pads its "-" by an odd count)
    command = piped.splitlines()[1].split("  ")[-1].strip()
    assert command.startswith("sh -c echo a-rather-long-command"), piped
    rc, text = pty_output(["history", "--history", history], cols)
    assert rc == 0, text
    assert max(len(l) for l in text.splitlines()) <= cols, text
    if cols == 120:
        assert text.startswith("ID  START (UTC)"), text
        assert command in text or command[:16] in text, text
    else:
        assert "ID  START" not in text and "  fit  exit 0\n" in text, text
        assert f"\n    {command}\n" in text, text


def test_report_says_where_it_wrote(tmp_path):
    out = tmp_path / "run.html"
    r = run(["--report", str(out), "-o", str(tmp_path / "s.jsonl"), "--", "sleep", "0.3"],
            env=tracker_env(TRACKER_KEEPER_URL="off"))
    assert r.returncode == 0, r.stderr
    assert f"resource-tracker: report written to {out}\n" in r.stderr and out.stat().st_size > 0, r.stderr
    q = run(["-q", "--report", str(out), "--", "sleep", "0.2"], env=tracker_env(TRACKER_KEEPER_URL="off"))
    assert q.returncode == 0 and "report written" not in q.stderr, q.stderr
