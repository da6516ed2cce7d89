"""The config reader against the TOML project's own test suite (toml-test, TOML 1.0 cases).

Every invalid case must be rejected with a clear "LINE:COL: problem" message (never accepted,
never a crash); every valid case must read to exactly the expected values, or, when it uses a
construct outside the supported subset (dates/times, arrays of tables), be rejected with a
message naming that construct. Skips cleanly when ../shared/testdata is not present.
"""
import json
import math
import os
import re
import subprocess

import pytest

from conftest import BUILD_DIR, REPO

SUITE = os.environ.get("RT_TOML_TEST_DIR", os.path.join(REPO, "..", "shared", "testdata", "toml-test"))
LIST = os.path.join(SUITE, "tests", "files-toml-1.0.0")
DUMP = os.path.join(BUILD_DIR, "toml-dump")

if not os.path.exists(LIST):
    pytest.skip("toml-test suite not present (../shared/testdata/toml-test)", allow_module_level=True)

with open(LIST) as f:
    CASES = [line.strip() for line in f if line.strip().endswith(".toml")]
INVALID = [c for c in CASES if c.startswith("invalid/")]
VALID = [c for c in CASES if c.startswith("valid/")]
DATETIME_TYPES = {"datetime", "datetime-local", "date-local", "time-local"}


def run_dump(case):
    path = os.path.join(SUITE, "tests", case)
    p = subprocess.run([DUMP, path], capture_output=True, timeout=30)
    assert p.returncode in (0, 1), f"{case}: toml-dump crashed or failed oddly (rc={p.returncode}): {p.stderr!r}"
    return p


def uses_datetime(expected):
    if isinstance(expected, dict):
        if set(expected) == {"type", "value"} and isinstance(expected["type"], str):
            return expected["type"] in DATETIME_TYPES
        return any(uses_datetime(v) for v in expected.values())
    if isinstance(expected, list):
        return any(uses_datetime(v) for v in expected)
    return False


def same(got, exp):
    if isinstance(exp, dict) and set(exp) == {"type", "value"} and isinstance(exp["type"], str):
        if not (isinstance(got, dict) and got.get("type") == exp["type"]):
            return False
        if exp["type"] == "float":
            a, b = float(got["value"]), float(exp["value"])
            return (math.isnan(a) and math.isnan(b)) or a == b
        if exp["type"] == "integer":
            return int(got["value"]) == int(exp["value"])
        return got["value"] == exp["value"]
    if isinstance(exp, dict):
        return isinstance(got, dict) and got.keys() == exp.keys() and all(same(got[k], exp[k]) for k in exp)
    if isinstance(exp, list):
        return isinstance(got, list) and len(got) == len(exp) and all(same(g, e) for g, e in zip(got, exp))
    return False


@pytest.mark.parametrize("case", INVALID)
def test_invalid_rejected(case):
    p = run_dump(case)
    assert p.returncode == 1, f"{case} was accepted: {p.stdout!r}"
    assert re.search(rb": \d+:\d+: \S", p.stderr), f"{case}: message lacks LINE:COL: {p.stderr!r}"


@pytest.mark.parametrize("case", VALID)
def test_valid_read_exactly(case):
    p = run_dump(case)
    with open(os.path.join(SUITE, "tests", case[:-5] + ".json")) as f:
        expected = json.load(f)
    if p.returncode == 1:
        msg = p.stderr.decode("utf-8", "replace")
        with open(os.path.join(SUITE, "tests", case), "rb") as f:
            src = f.read()
        if "dates and times are not supported" in msg:
            assert uses_datetime(expected), f"{case}: rejected as a date/time but has none: {msg}"
        elif "arrays of tables" in msg:
            assert re.search(rb"(^|\n)[ \t]*\[\[", src), f"{case}: rejected as an array of tables: {msg}"
        else:
            pytest.fail(f"{case}: valid case rejected: {msg}")
        return
    got = json.loads(p.stdout)
    assert same(got, expected), f"{case}: read {got!r}, expected {expected!r}"


def test_subset_coverage():
    """Most of the valid suite is inside the subset: a reader that rejected everything would fail here."""
    read = sum(1 for c in VALID if run_dump(c).returncode == 0)
    assert read >= 0.75 * len(VALID) - 40, f"only {read} of {len(VALID)} valid cases read"
