"""Two trackers on one `-o` file (a job script run twice, `srun` without `%t`; issue 67, item 3;
src/cli/outshare.c): every line of both runs stays whole, as through the shell's `>>`. The file
is appended to (O_APPEND, one write(2) per sample), emptied only by a tracker that finds no other
writing it, and a CSV file gets its header once, first. Both timings: started together, and the
second a second after the first (while the first still writes).

No wall-clock time is asserted: the runs' own figures tell whether a line is missing (a JSON
line's interval_secs against the step between its run's timestamps)."""
import collections
import csv
import json
import subprocess
import time

import pytest

from conftest import TIMEOUT_SCALE, TRACKER, tracker_env

INTERVAL = 0.2
JOB = ["sleep", "3"]
LIMIT = 60 * TIMEOUT_SCALE


def two_runs(tmp_path, fmt, apart):
    out = tmp_path / "samples"
    out.write_text("a line of an older run\n")  # the first tracker empties the file
    args = [TRACKER, "-q", "-o", str(out), "--format", fmt, "--interval", str(INTERVAL), "--", *JOB]
    first = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=tracker_env())
    if apart:
        deadline = time.monotonic() + LIMIT
        while out.stat().st_size == 0 or out.read_text().startswith("a line"):  # the first writes
            assert first.poll() is None and time.monotonic() < deadline, "the first run wrote nothing"
            time.sleep(0.05)
        time.sleep(1)
    second = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=tracker_env())
    for p in (first, second):
        _, err = p.communicate(timeout=LIMIT)
        assert p.returncode == 0, err
        assert err == "", err
    text = out.read_text()
    assert text.endswith("\n")
    assert "older run" not in text
    return text.splitlines()


@pytest.mark.parametrize("apart", [False, True], ids=["together", "one-second-apart"])
def test_json_lines_of_both_runs_stay_whole(tmp_path, apart):
    lines = two_runs(tmp_path, "json", apart)
    runs = collections.defaultdict(list)
    for n, line in enumerate(lines, 1):
        try:
            sample = json.loads(line)
        except ValueError:
            pytest.fail(f"line {n} of {len(lines)} is not a whole JSON line: {line[:200]!r}")
        runs[sample["process"]["pid"]].append(sample)
    assert len(runs) == 2, f"the lines of {len(runs)} run(s), not 2"
    for pid, samples in runs.items():
        assert len(samples) >= 5, (pid, len(samples))
        for before, s in zip(samples, samples[1:]):
            step = s["timestamp_secs"] - before["timestamp_secs"]
            # a line of this run missing between them: the step is an interval longer
            assert abs(step - s["interval_secs"]) < INTERVAL / 2, (pid, before["timestamp_secs"], s["timestamp_secs"],
                                                                   s["interval_secs"])


@pytest.mark.parametrize("apart", [False, True], ids=["together", "one-second-apart"])
def test_csv_rows_of_both_runs_stay_whole_with_one_header(tmp_path, apart):
    lines = two_runs(tmp_path, "csv", apart)
    rows = list(csv.reader(lines))
    header = rows[0]
    assert header[0] == "timestamp"
    assert sum(1 for r in rows if r and r[0] == "timestamp") == 1, "the header more than once"
    pid_at = header.index("process_pid")
    runs = collections.defaultdict(list)
    for n, r in enumerate(rows[1:], 2):
        assert len(r) == len(header), f"line {n} is not a whole row: {lines[n - 1][:200]!r}"
        runs[r[pid_at]].append(float(r[0]))
    assert len(runs) == 2, f"the rows of {len(runs)} run(s), not 2"
    for pid, stamps in runs.items():
        assert stamps == sorted(stamps), pid
        # every sample of the run is there: about one per interval over its span
        expected = (stamps[-1] - stamps[0]) / INTERVAL + 1
        assert len(stamps) >= 5 and len(stamps) >= 0.75 * expected, (pid, len(stamps), expected)
