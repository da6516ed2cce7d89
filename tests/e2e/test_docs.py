"""The documents follow the schema: every figure the library lists (rt_schema_field_*, through the
Python package's _native.schema()) is named in docs/contracts.md, so a figure added to the
schema without its contract fails here."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED, VALGRIND

PY = "/usr/bin/python3"

# The library loaded into Python: the plain build's run checks it (not under the sanitizers or valgrind).
pytestmark = pytest.mark.skipif(SANITIZED or VALGRIND, reason="the library loaded into python3: plain build only")


def schema_names():
    code = ("import json\nfrom resource_tracker import _native\n"
            "print(json.dumps([[f['struct'], f['name']] for f in _native.schema()]))")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"),
               RESOURCE_TRACKER_LIBRARY=os.path.join(BUILD_DIR, "libresource-tracker.so"),
               TRACKER_CLOUD_DISCOVERY="0")
    out = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_figure_is_in_the_contracts():
    names = schema_names()
    assert len(names) >= 147
    with open(os.path.join(REPO, "docs", "contracts.md")) as f:
        words = set(re.findall(r"[A-Za-z0-9_]+", f.read()))
    missing = [f"{st}.{name}" for st, name in names if name not in words]
    assert not missing, f"not named in docs/contracts.md: {missing}"
