"""Every view of a sample held byte for byte to its golden file (tests/golden/): the JSON line,
the CSV row, the Prometheus text and OpenMetrics bodies, the OTLP/JSON body, the embedded
tracker's store row and the analysis record (and, from 0.17, the Rust tool's JSON line of
`--format json-rs`), of each captured fixture (replayed through
build/fixture-sample) and of the synthetic samples (build/golden-synthetic: a full sample with
pressure, groups, parts and GPU details, and three with parts missing). The views are written
from the sample's structs by separate code today; these files are what a change to that code
must leave unchanged, to the byte. RT_UPDATE_GOLDEN=1 rewrites them (review the diff before
committing: a changed golden file is a changed output users see)."""
import difflib
import os
import subprocess

import pytest

from conftest import BUILD_DIR
from fixture_util import FIXTURES, replay

GOLDEN = os.path.join(os.path.dirname(FIXTURES), "golden")
CASES = sorted(d for d in os.listdir(FIXTURES) if os.path.isfile(os.path.join(FIXTURES, d, "clock")))


def check(name, text):
    path = os.path.join(GOLDEN, name + ".txt")
    if os.environ.get("RT_UPDATE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        want = f.read()
    if text != want:
        diff = "".join(list(difflib.unified_diff(want.splitlines(True), text.splitlines(True), path, "now"))[:80])
        pytest.fail(f"{name}: the views differ from {path}:\n{diff}")


@pytest.mark.parametrize("case", CASES)
def test_fixture_views(case, tmp_path):
    _, text, err = replay(case, tmp_path, views=True)
    assert text.endswith("== end\n"), err
    check(case, text)


def test_synthetic_views():
    p = subprocess.run([os.path.join(BUILD_DIR, "golden-synthetic")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("== end\n") == 4
    check("synthetic", p.stdout)


def test_every_view_in_every_file():
    """A golden file holds each view of each of its samples, so none can drop out unseen."""
    views = ["json", "json-rs", "csv", "prometheus", "openmetrics", "otlp", "store", "record", "end"]
    for name in CASES + ["synthetic"]:
        with open(os.path.join(GOLDEN, name + ".txt")) as f:
            heads = [l[3:].strip() for l in f if l.startswith("== ")]
        assert heads and heads == views * (len(heads) // len(views)), (name, heads)
