"""gpu_tracker's tutorial, its sub-tracking cells run unchanged against this package
(data/gpu_tracker_tutorial: the cells' source from gpu_tracker 5.0.1's notebook, with its
licence): cells 5 and 38-63 in one Python process (a Tracker writing tracking.csv, SubTrackers
and a @sub_track function writing sub-tracking.csv, the analysis, results.pkl; cell 63 ends the
process with os._exit), cells 65-85 in a second one (overwrite=True, results2.pkl, the
comparison), then the `gpu-tracker sub-track` shell cells 110-119 (combine, analyze to text and
to a pickle, compare). Each cell runs as a notebook runs it: one namespace, the value of a cell
ending in an expression printed. The notebook's example_module needs torch and CUDA; the
stand-in here holds 64 MiB of touched memory for 0.7 s. In an empty temporary directory (the
cells use relative paths, and overwrite=False refuses existing files). Needs pandas; skips
without it."""
import importlib.util
import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data", "gpu_tracker_tutorial")

for _name in ("pandas", "docopt"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"the tutorial needs {_name} (scripts/install-deps --test)", allow_module_level=True)

EXAMPLE_MODULE = '''"""Stand-in for the tutorial's example_module (torch tensors on a GPU): some work that holds
memory for a while."""
import time


def example_function():
    block = bytearray(64 << 20)
    block[::4096] = b"\\x01" * (len(block) // 4096)
    time.sleep(0.7)
    return len(block)
'''

# Runs the cells given by index, notebook-style: one namespace; a cell whose last statement is
# an expression prints that value's repr (as Jupyter shows it); "!command" lines run in a shell.
RUNNER = '''import ast, json, subprocess, sys
cells = {c["index"]: c["source"] for c in json.load(open(sys.argv[1]))["cells"]}
ns = {"__name__": "__main__"}
for index in map(int, sys.argv[2:]):
    source = cells[index]
    print(f"[cell {index}]", flush=True)
    if source.startswith("!"):
        rc = subprocess.run(source[1:], shell=True).returncode
        print(f"[rc {rc}]", flush=True)
        if rc:
            sys.exit(rc)
        continue
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, f"<cell {index}>", "exec"), ns)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), f"<cell {index}>", "eval"), ns)
        if value is not None:
            print(repr(value), flush=True)
'''

FIRST = [5, 38, 41, 45, 47, 49, 51, 53, 55, 56, 58, 60, 63]
SECOND = [65, 67, 69, 71, 73, 75, 77, 79, 81, 83, 85]
SHELL = [110, 113, 117, 119]


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """Runs the three parts in order in one empty directory; {part: CompletedProcess}, the dir."""
    tmp = tmp_path_factory.mktemp("tutorial")
    (tmp / "example_module.py").write_text(EXAMPLE_MODULE)
    (tmp / "run_cells.py").write_text(RUNNER)
    bin_dir = tmp_path_factory.mktemp("bin")
    command = bin_dir / "gpu-tracker"
    command.write_text(f"#!{sys.executable}\nfrom gpu_tracker.__main__ import main\nmain()\n")
    command.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), str(tmp)]),
               PYTHONDONTWRITEBYTECODE="1", TRACKER_CLOUD_DISCOVERY="0",
               PATH=str(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    cells = os.path.join(DATA, "cells.json")
    runs = {}
    for part, indexes in (("first", FIRST), ("second", SECOND), ("shell", SHELL)):
        if part == "shell":  # cell 110 combines the notebook's two (identical) sub-tracking files
            for name in ("sub-tracking1.csv", "sub-tracking2.csv"):
                shutil.copy(os.path.join(DATA, "sub-tracking.csv"), tmp / name)
        runs[part] = subprocess.run([sys.executable, "-u", "run_cells.py", cells, *map(str, indexes)], cwd=tmp,
                                    env=env, capture_output=True, text=True, timeout=600)
    return runs, tmp


def _ok(run):
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


def test_first_process_tracks_sub_tracks_and_analyzes(tutorial):
    runs, tmp = tutorial
    out = _ok(runs["first"])
    assert "[cell 63]" in out  # reached its end (os._exit(0))
    assert "<class 'gpu_tracker.sub_tracker.SubTrackingResults'>" in out
    assert "<class 'gpu_tracker.sub_tracker.CodeBlockResults'>" in out
    assert "('my-code-block', 5, " in out  # cell 58: name, num_calls, ...
    with open(tmp / "results.pkl", "rb") as f:
        results = pickle.load(f)
    names = [r.name for r in results.code_block_results]
    assert names == ["my-code-block", "my-function"]
    assert [r.num_calls for r in results.code_block_results] == [5, 3]


def test_second_process_overwrites_and_compares(tutorial):
    runs, tmp = tutorial
    out = _ok(runs["second"])
    assert "<class 'gpu_tracker.sub_tracker.ComparisonResults'>" in out
    assert "dict_keys(['my-code-block', 'my-function'])" in out  # cell 77
    assert "[cell 85]" in out
    with open(tmp / "results2.pkl", "rb") as f:
        results2 = pickle.load(f)
    assert [r.num_calls for r in results2.code_block_results] == [3, 3]
    # the second Tracker overwrote tracking.csv: its static data once, at the top
    with open(tmp / "tracking.csv", newline="") as f:
        assert f.read().count("ram_unit,gpu_ram_unit,time_unit") == 1


def test_shell_cells_combine_analyze_and_compare(tutorial):
    runs, tmp = tutorial
    out = _ok(runs["shell"])
    with open(tmp / "combined-file.csv") as f:
        combined = f.read().splitlines()
    with open(os.path.join(DATA, "sub-tracking.csv")) as f:
        one = f.read().splitlines()
    assert combined[0] == one[0] and len(combined) == 2 * len(one) - 1
    assert "Code Block Results:" in out and "my-code-block" in out  # cell 113
    with open(tmp / "my-results.pkl", "rb") as f:  # cell 117
        assert [r.name for r in pickle.load(f).code_block_results] == ["my-code-block", "my-function"]
    assert out.rstrip().endswith("[rc 0]") and "[cell 119]" in out
