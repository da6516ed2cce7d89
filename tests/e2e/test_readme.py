"""End-to-end: README.md's Python lines work as written on Debian's own Python (issue 53).

The fenced shell block of the README's "### Python and Metaflow" section runs as written, with
`sh -e`, from the repository root, with Debian's /usr/bin/python3 as the `python3` it names and
/usr/bin first on PATH: on Debian 12 a bare `pip install` there is refused (PEP 668,
externally-managed-environment), so the README must make a venv and use its pip. Then the
section's `>>>` example runs in that venv's python, statement by statement as the interactive
prompt runs it, and what it shows must match the README's output (`{...}`: any value).

How it runs, so that it takes seconds and leaves nothing behind: HOME is a temporary directory
(the README's venv is under `~`, never in the checkout); pip gets no index (PIP_NO_INDEX: the
install must work offline) and installs only into a venv (PIP_REQUIRE_VIRTUALENV: a bare pip
line fails here even on a system without Debian's marker, and never writes into a system
Python); RESOURCE_TRACKER_LIBRARY names the build's library so the package's backend bundles it
instead of building it again with cmake (that path is test_python_package.py's). The example
imports the venv's copy, with the library bundled beside it, not the source tree's.

Skipped under the sanitizers and valgrind (the package loads an uninstrumented build into
Debian's python) and where /usr/bin/python3 or python3-venv (ensurepip) is missing."""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED, VALGRIND

pytestmark = pytest.mark.skipif(SANITIZED or VALGRIND,
                                reason="pip-installed package: not under the sanitizers or valgrind")

PYTHON = "/usr/bin/python3"  # Debian's own
SECTION = "### Python and Metaflow"
LIBRARY = os.path.join(BUILD_DIR, "libresource-tracker.so")


def section_text(readme=os.path.join(REPO, "README.md")):
    """The README's section, from its heading to the next heading of its level or above."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    start = text.index(SECTION + "\n")
    rest = text[start + len(SECTION) + 1:]
    m = re.search(r"^#{1,3} ", rest, re.M)
    return rest[:m.start()] if m else rest


def fenced_blocks(text):
    """[(info string, body)] of the ``` blocks of a Markdown text."""
    return [(m.group(1).strip(), m.group(2))
            for m in re.finditer(r"^```([^\n]*)\n(.*?)^```[ \t]*$", text, re.S | re.M)]


def shell_lines(section):
    """The section's shell lines: its ```sh (or ```shell, ```bash) blocks, joined."""
    blocks = [body for info, body in fenced_blocks(section) if info in ("sh", "shell", "bash")]
    assert blocks, f"no ```sh block in the README's {SECTION!r} section: how to install is not shown"
    return "".join(blocks)


def prompt_examples(section):
    """[(source, shown output)] of the section's `>>>` block, as the interactive prompt runs it."""
    blocks = [body for _, body in fenced_blocks(section) if body.startswith(">>> ")]
    assert len(blocks) == 1, f"one >>> example in {SECTION!r}, found {len(blocks)}"
    examples = []
    for line in blocks[0].splitlines():
        if line.startswith(">>> "):
            examples.append([line[4:] + "\n", ""])
        elif line.startswith("..."):
            examples[-1][0] += line[4:] + "\n"
        else:
            examples[-1][1] += line + "\n"
    return [(src, shown.strip()) for src, shown in examples]


def shown_matches(shown, got):
    """The README's output, read as a Python literal, against the value the prompt printed: the
    same keys, the same values, `...` or `{...}` standing for any value."""
    if shown is Ellipsis or shown == {Ellipsis}:
        return True
    if isinstance(shown, dict):
        return isinstance(got, dict) and set(shown) == set(got) and all(
            shown_matches(v, got[k]) for k, v in shown.items())
    return type(shown) is type(got) and shown == got


def debian_python_or_skip():
    if not os.access(PYTHON, os.X_OK):
        pytest.skip(f"{PYTHON} missing: the README's lines are Debian's")
    r = subprocess.run([PYTHON, "-c", "import ensurepip, venv"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"python3-venv is not installed (scripts/install-deps installs it): {r.stderr.strip()}")


def externally_managed():
    """Whether Debian's Python carries PEP 668's marker (its pip then refuses to install outside
    a venv: externally-managed-environment)."""
    r = subprocess.run([PYTHON, "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                       capture_output=True, text=True)
    return r.returncode == 0 and os.path.isfile(os.path.join(r.stdout.strip(), "EXTERNALLY-MANAGED"))


def environment(home, **extra):
    """A user's shell on Debian: HOME a scratch directory, python3 Debian's, nothing pointing
    Python or pip at the source tree, an index or a venv. Without Debian's marker,
    PIP_REQUIRE_VIRTUALENV does its part: a pip outside a venv installs nothing."""
    bindir = os.path.join(home, ".test-bin")
    os.makedirs(bindir, exist_ok=True)
    if not os.path.exists(os.path.join(bindir, "python3")):
        os.symlink(PYTHON, os.path.join(bindir, "python3"))  # before any other python3 on PATH
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PYTHON")) and k not in ("RESOURCE_TRACKER_LIBRARY", "VIRTUAL_ENV")}
    env.update(HOME=home, PATH=f"{bindir}:/usr/bin:/bin", PIP_NO_INDEX="1",
               PIP_REQUIRE_VIRTUALENV=None if externally_managed() else "1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1",
               TRACKER_CLOUD_DISCOVERY="0")
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def run_shell(lines, home, **extra):
    """The lines as a user's shell runs them, from the repository root (stdin empty: a python
    the lines start reads end of file and exits)."""
    return subprocess.run(["/bin/sh", "-e", "-c", lines], cwd=REPO, env=environment(home, **extra),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


def repo_entries():
    """What pip could leave in the checkout: the entries of python/ and python/_build."""
    out = set()
    for d in ("python", os.path.join("python", "_build")):
        out |= {os.path.join(d, n) for n in os.listdir(os.path.join(REPO, d)) if n != "__pycache__"}
    return out


# Runs in the venv: each example as the interactive prompt runs it (compiled "single": an
# expression statement's value goes to sys.displayhook), train() as the README's comment says.
HARNESS = r"""
import hashlib, json, sys
def train():  # 64 MiB hashed 20 times
    data = bytes(64 << 20)
    for _ in range(20):
        hashlib.sha256(data).digest()
shown = []
sys.displayhook = lambda value: shown.append(value) if value is not None else None
ns = {"train": train, "__name__": "__main__"}
outputs = []
for source in json.loads(sys.argv[1]):
    del shown[:]
    exec(compile(source, "<README.md>", "single"), ns)
    outputs.append(repr(shown[-1]) if shown else "")
import resource_tracker
print(json.dumps({"outputs": outputs, "file": resource_tracker.__file__}))
"""


def test_readme_python_lines_work_as_written_on_debian(tmp_path):
    debian_python_or_skip()
    assert os.path.isfile(LIBRARY), f"build the library first ({LIBRARY})"
    section = section_text()
    lines = shell_lines(section)
    m = re.search(r"-m venv\s+(\S+)", lines)
    assert not m or m.group(1).startswith("~/"), f"the README's venv {m.group(1)!r} would be made in the checkout"
    home = str(tmp_path / "home")
    os.makedirs(home)

    before = repo_entries()
    r = run_shell(lines, home, RESOURCE_TRACKER_LIBRARY=os.path.realpath(LIBRARY))
    assert r.returncode == 0, f"the README's lines failed:\n{lines}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    assert m, f"the README's Python lines make no venv (python3 -m venv ~/DIR): {lines!r}"
    venv = os.path.join(home, m.group(1)[2:])
    assert "Successfully installed resource-tracker" in r.stdout, r.stdout[-4000:]
    assert repo_entries() == before, repo_entries() ^ before  # nothing written into the checkout

    vpy = os.path.join(venv, "bin", "python")
    examples = prompt_examples(section)
    r = subprocess.run([vpy, "-c", HARNESS, json.dumps([src for src, _ in examples])], cwd=str(tmp_path),
                       env=environment(home), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"the README's example failed in {venv}:\n{r.stdout}\n{r.stderr}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # the venv's copy, with the library bundled beside it, not the source tree's
    assert out["file"].startswith(venv + os.sep), out["file"]
    assert os.path.isfile(os.path.join(os.path.dirname(out["file"]), "libresource-tracker.so"))
    for (src, shown), got in zip(examples, out["outputs"]):
        if not shown:
            assert got == "", f"{src!r} shows {got}, the README nothing"
            continue
        assert got, f"{src!r} shows nothing, the README {shown}"
        assert shown_matches(ast.literal_eval(shown), ast.literal_eval(got)), \
            f"{src.strip()!r}: the README shows {shown}, the package {got}"


def test_a_bare_pip_install_fails_here(tmp_path):
    """The check above has teeth: the line the README had, `pip install ./python`, fails in the
    same shell (Debian's refusal where its marker is; else no venv, PIP_REQUIRE_VIRTUALENV)."""
    debian_python_or_skip()
    home = str(tmp_path / "home")
    os.makedirs(home)
    r = run_shell("pip install ./python\n", home)
    said = r.stdout + r.stderr
    assert r.returncode != 0, said
    if externally_managed() and "not found" not in said:  # a Debian without python3-pip has no pip
        assert "externally-managed-environment" in said, said


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
