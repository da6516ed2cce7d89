"""End-to-end: docs/metaflow.md's venv works as written (issue 70: it lacked Metaflow's `requests`).

The "## Use" section's first shell block (the venv with Metaflow and the package) runs as
written, with `sh -e`, from the repository root, as test_readme.py runs the README's: HOME a
scratch directory, Debian's /usr/bin/python3 as `python3`, no index (PIP_NO_INDEX). What PyPI
would give, a local wheel gives: Metaflow's, made here from its source (../shared/testdata/metaflow,
or $RT_METAFLOW_SOURCE), declaring what Metaflow's own declares (requests, boto3), found through
PIP_FIND_LINKS, which the page names for offline use. requests and boto3 must then come from
Debian's packages through the venv's --system-site-packages: a venv without them fails here, as
the page's did for a user. Then the section's flow runs with the block's commands (`run`, and
`card get` of the tracked_resources card) in the venv's python (its 500 MiB cut to 50: the
memory of a test beside three others), and the card is written.
RESOURCE_TRACKER_LIBRARY names the build's library (test_readme.py's reason: the backend's own
build is test_python_package.py's).

Skipped under the sanitizers and valgrind, without Metaflow's source, Debian's python3-requests
and python3-boto3 (scripts/install-deps --test), or python3-venv."""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import zipfile

import pytest

from conftest import REPO, SANITIZED, VALGRIND
from test_readme import LIBRARY, debian_python_or_skip, environment, fenced_blocks

METAFLOW = os.environ.get("RT_METAFLOW_SOURCE") or os.path.join(os.path.dirname(REPO), "shared", "testdata",
                                                                   "metaflow")
PAGE = os.path.join(REPO, "docs", "metaflow.md")


# why the test cannot run here, the first that holds; None: it runs
MISSING = next((why for cannot, why in (
    (lambda: SANITIZED or VALGRIND, "pip-installed package: not under the sanitizers or valgrind"),
    (lambda: not os.path.isfile(os.path.join(METAFLOW, "metaflow", "__init__.py")),
     f"no Metaflow source at {METAFLOW} (set RT_METAFLOW_SOURCE)"),
    (lambda: subprocess.run(["/usr/bin/python3", "-c", "import requests, boto3"], capture_output=True).returncode,
     "the page's venv uses Debian's python3-requests and python3-boto3 (scripts/install-deps --test)"),
) if cannot()), None)
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def use_section():
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    start = text.index("## Use\n")
    rest = text[start + len("## Use\n"):]
    m = re.search(r"^## ", rest, re.M)
    return rest[:m.start()] if m else rest


def metaflow_wheel(out):
    """A wheel of Metaflow's source into out (what `pip install metaflow` would fetch), with its
    requirements as Metaflow declares them."""
    with open(os.path.join(METAFLOW, "metaflow", "version.py"), encoding="utf-8") as f:
        version = re.search(r'metaflow_version\s*=\s*"([^"]+)"', f.read()).group(1)
    info = f"metaflow-{version}.dist-info"
    path = os.path.join(str(out), f"metaflow-{version}-py3-none-any.whl")
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(name, data):
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{name},sha256={digest},{len(data)}")
        for dirpath, dirnames, filenames in os.walk(os.path.join(METAFLOW, "metaflow")):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for fn in sorted(filenames):
                if fn.endswith(".pyc"):
                    continue
                full = os.path.join(dirpath, fn)
                with open(full, "rb") as f:
                    add(os.path.relpath(full, METAFLOW), f.read())
        add(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: metaflow\nVersion: {version}\n"
                                "Requires-Dist: requests\nRequires-Dist: boto3\n".encode())
        add(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: test_docs_metaflow\nRoot-Is-Purelib: true\n"
                             b"Tag: py3-none-any\n")
        add(f"{info}/top_level.txt", b"metaflow\n")
        z.writestr(f"{info}/RECORD", "\n".join(records + [f"{info}/RECORD,,"]) + "\n")
    return path


def test_metaflow_page_venv_runs_its_flow(tmp_path):
    debian_python_or_skip()
    assert os.path.isfile(LIBRARY), f"build the library first ({LIBRARY})"
    section = use_section()
    blocks = [body for info, body in fenced_blocks(section) if info in ("sh", "shell", "bash")]
    assert len(blocks) == 2, f"the page's Use section: a venv block and a flow block, found {len(blocks)}"
    venv_lines, flow_lines = blocks
    assert "-m venv" in venv_lines and "./python" in venv_lines and "metaflow" in venv_lines, venv_lines
    (flow_src,) = [body for info, body in fenced_blocks(section) if info == "python"]

    home, wheels = tmp_path / "home", tmp_path / "wheels"
    home.mkdir()
    wheels.mkdir()
    metaflow_wheel(wheels)
    env = environment(str(home), PIP_FIND_LINKS=str(wheels), RESOURCE_TRACKER_LIBRARY=LIBRARY)
    r = subprocess.run(["/bin/sh", "-e", "-c", venv_lines], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"the page's venv line failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"

    # the flow, from the page's own block, run by the block's commands where a user runs them
    flow_dir = home / "flow"
    flow_dir.mkdir()
    (flow_dir / "train.py").write_text(flow_src.replace("bytearray(500 << 20)", "bytearray(50 << 20)"))
    run_env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
    run_env.update(USERNAME="ci", METAFLOW_HOME=str(home / "mfhome"), METAFLOW_DEFAULT_DATASTORE="local",
                   METAFLOW_DEFAULT_METADATA="local", METAFLOW_DATASTORE_SYSROOT_LOCAL=str(flow_dir))
    r = subprocess.run(["/bin/sh", "-e", "-c", flow_lines], cwd=str(flow_dir), env=run_env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"the page's flow lines failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    with open(flow_dir / "card.html", encoding="utf-8", errors="replace") as f:
        card = f.read()
    assert "start" in card and len(card) > 1000, card[:500]
    shutil.rmtree(str(home / "venv"), ignore_errors=True)
