"""resource_tracker.recorded: a recorded run of any kind read back through the C library
(rt_run_read) gives the tool's own summary, the text byte for byte as `resource-tracker
summary` prints it and the dict as `summary --json`; a dumped tracker reads back the same way;
failures name the file; the ctypes mirrors of the new structs match the header."""
import re
import json
import os
import shutil
import subprocess
import textwrap
from ctypes import sizeof

import pytest

from resource_tracker import _native, recorded

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUNS = os.path.join(REPO, "tests", "fixtures", "runs")
SNAPSHOTS = os.path.join(REPO, "tests", "fixtures", "snapshots")
FIXTURES = [os.path.join(RUNS, f) for f in ("tool.jsonl", "tool.csv", "cgroup-oom.jsonl", "malformed.jsonl",
                                             "python-process.csv", "python-system.csv", "python-combined.csv")]
FIXTURES += [os.path.join(SNAPSHOTS, f) for f in sorted(os.listdir(SNAPSHOTS)) if f.endswith(".json.gz")]


def tool():
    """The resource-tracker binary built beside the library, or None."""
    lib = os.environ.get("RESOURCE_TRACKER_LIBRARY")
    exe = os.path.join(os.path.dirname(lib), "resource-tracker") if lib else None
    return exe if exe and os.access(exe, os.X_OK) else None


def cli(*args, **more_env):
    exe = tool()
    if exe is None:
        pytest.skip("no resource-tracker binary beside the library")
    env = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0", **more_env)
    env.pop("SLURM_JOB_ID", None)
    return subprocess.run([exe, "summary", *args], capture_output=True, check=True, env=env).stdout


@pytest.mark.parametrize("path", FIXTURES, ids=os.path.basename)
def test_text_is_the_tools(path):
    assert recorded.summary_text(path).encode() == cli(path)


@pytest.mark.parametrize("path", FIXTURES[:3], ids=os.path.basename)
def test_dict_is_the_tools_json(path):
    assert recorded.summary(path) == json.loads(cli("--json", path))


def test_dict_before_rt_format_summary_json(monkeypatch):
    # a library older than 0.10 has only rt_format_summary: the same dict through it
    from resource_tracker import _native_runs

    path = os.path.join(RUNS, "tool.jsonl")
    new = recorded.summary(path)
    monkeypatch.setattr(_native_runs.lib, "rt_format_summary_json", _native.missing_function("x"))
    assert recorded.summary(path) == new


def test_units_scheduler_and_width():
    path = os.path.join(RUNS, "tool.jsonl")
    text = recorded.summary_text(path, memory_unit="gigabytes", time_unit="hours", scheduler="kubernetes")
    # the tool speaks Kubernetes' words inside a pod
    assert text.encode() == cli("--memory-unit", "gigabytes", "--time-unit", "hours", path,
                                KUBERNETES_SERVICE_HOST="10.0.0.1")
    assert "(Kubernetes)" in text
    narrow = recorded.summary_text(path, width=60)
    notes = narrow[narrow.index("Notes"):narrow.index("\nRun\n")]
    assert max(len(line) for line in notes.splitlines()) <= 60
    with pytest.raises(ValueError):
        recorded.summary_text(path, memory_unit="gibibytes")
    with pytest.raises(ValueError):
        recorded.summary_text(path, scheduler="pbs")


def test_a_dumped_tracker_reads_back(tracker, tmp_path):
    f = tmp_path / "run.json.gz"
    tracker.dump(str(f))
    s = recorded.summary(str(f))
    assert s["samples"] >= 3
    assert recorded.summary_text(str(f)).encode() == cli(str(f))


def _but_energy_parts(text):
    """The text with its Energy line's parts left out (what a saved run cannot say: its rows hold
    the energy's figures, not the domains they were made of; docs/energy.md): the line's total
    and the machine's figure stay."""
    out = []
    for line in text.splitlines():
        m = re.match(r"(Energy +[^(]*)\((?:[^;]*; )?machine ([^ ,;]+ [^ ,;)]+)", line)
        out.append(f"{m.group(1)}machine {m.group(2)}" if m else line)
    return "\n".join(out)


def test_a_live_trackers_text_is_its_dumps(tracker, tmp_path):
    # ResourceTracker.summary_text: the tracker's own statistics, the text of its saved run (but
    # for the energy by part, which the live tracker has and a saved run does not)
    f = tmp_path / "run.json.gz"
    tracker.dump(str(f))
    assert _but_energy_parts(tracker.summary_text()) == _but_energy_parts(recorded.summary_text(str(f)))
    assert tracker.summary_text().startswith("Used ")
    kw = dict(memory_unit="megabytes", time_unit="minutes", scheduler="metaflow", width=70)
    assert _but_energy_parts(tracker.summary_text(**kw)) == _but_energy_parts(recorded.summary_text(str(f), **kw))
    with pytest.raises(ValueError):
        tracker.summary_text(time_unit="fortnights")
    from resource_tracker import ResourceTracker

    with pytest.raises(RuntimeError, match="never started"):
        ResourceTracker(autostart=False).summary_text()


def test_failures_name_the_file(tmp_path, caplog):
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(_native.NativeError) as e:
        recorded.summary(str(missing))
    assert e.value.code == _native.RT_ERR_NOT_FOUND and "missing.jsonl" in str(e.value)
    unknown = tmp_path / "notes.txt"
    unknown.write_text("hello\n")
    with pytest.raises(_native.NativeError) as e:
        recorded.summary_text(str(unknown))
    assert e.value.code == _native.RT_ERR_PARSE and "notes.txt:1:" in str(e.value)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(_native.NativeError, match="empty.csv"):
        recorded.summary(str(empty))
    header = tmp_path / "header.csv"
    with open(os.path.join(RUNS, "tool.csv")) as src:
        header.write_text(src.readline())
    with pytest.raises(_native.NativeError, match="header.csv: no valid sample in the file"):
        recorded.summary(str(header))
    # a broken snapshot: the reason (the library's last error) beside rt_run_read's message
    broken = tmp_path / "broken.json"
    broken.write_text('{"metadata": {"version": 1}, "columns": [')
    with pytest.raises(_native.NativeError) as e:
        recorded.summary(str(broken))
    assert e.value.code == _native.RT_ERR_PARSE and "broken.json: cannot read the snapshot" in str(e.value)
    if hasattr(_native.lib.rt_last_error_message, "argtypes"):
        assert "broken.json: not JSON" in e.value.message and e.value.message in str(e.value)
    # a malformed line is a warning on the package's logger, not an error
    caplog.clear()
    with caplog.at_level("WARNING", logger="resource_tracker.recorded"):
        recorded.summary(os.path.join(RUNS, "malformed.jsonl"))
    assert any("malformed.jsonl:" in r.getMessage() for r in caplog.records)


def test_layouts_match_the_header(tmp_path):
    from resource_tracker import _native_runs as nr

    mirrors = {"rt_run_facts": nr.RunFacts, "rt_summary_text_options": nr.SummaryTextOptions,
               "rt_run_read_options": nr.RunReadOptions, "rt_run_read_info": nr.RunReadInfo}
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    lines = []
    for cname, py in mirrors.items():
        lines.append(f'printf("{cname} size %zu\\n", sizeof({cname}));')
        lines += [f'printf("{cname} {f} %zu\\n", offsetof({cname}, {f}));' for f, _ in py._fields_]
    src = tmp_path / "layout.c"
    src.write_text(textwrap.dedent("""\
        #include <stddef.h>
        #include <stdio.h>
        #include "resource_tracker.h"
        int main(void) {
        %s
        return 0;
        }
        """) % "\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", os.path.join(REPO, "include"), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        cname, what, value = line.split()
        py = mirrors[cname]
        assert (sizeof(py) if what == "size" else getattr(py, what).offset) == int(value), line
    assert len(out.splitlines()) == sum(1 + len(p._fields_) for p in mirrors.values())
