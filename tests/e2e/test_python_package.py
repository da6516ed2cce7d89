"""End-to-end: the Python package installs offline into a fresh venv with pip (no index, pip's
default build isolation) and works from there. Once with the C library built by the package's
own backend (cmake, from the repository: RESOURCE_TRACKER_BUILD=1), once bundling the build's
library named by RESOURCE_TRACKER_LIBRARY; in each venv a ResourceTracker follows a short CPU
loop, and the package uninstalls cleanly. Without either, the backend bundles a library already
built (issue 70: no 4-minute rebuild): in a copy of the sources, the build tree's, passed over
when older than a source (then an installed one, found through pkg-config, is taken) or when it
is a sanitizer's; it says which it took and why it passed over the others. Needs cmake, a C
compiler and the library's -dev packages (as the build does) and Debian's python3-venv; skipped,
saying so, only when venv cannot be made."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED, VALGRIND

# the package's own build is not sanitized, and a sanitizer build's library does not load into
# Debian's uninstrumented python; valgrind would follow python and pip, not the tracker
pytestmark = pytest.mark.skipif(SANITIZED or VALGRIND, reason="pip-installed package: not under sanitizers or valgrind")

PYTHON = "/usr/bin/python3"
PACKAGE_DIR = os.path.join(REPO, "python")

# Runs inside the venv: a tracker at 0.1 s around a busy loop; prints what the test checks.
WORKLOAD = r"""
import json, os, sys, time
import resource_tracker
from resource_tracker import ResourceTracker
t0 = os.times()
tracker = ResourceTracker(interval=0.1, autostart=False, discover_server=False, discover_cloud=False)
tracker.start()
end = time.monotonic() + 1.5
x = 0
while time.monotonic() < end:
    x += 1
tracker.wait_for_samples(5)
tracker.stop()
t1 = os.times()
pm, sm = tracker.process_metrics, tracker.system_metrics
print(json.dumps({
    "file": resource_tracker.__file__,
    "version": resource_tracker.__version__,
    "n_samples": tracker.n_samples,
    "process_rows": len(pm["timestamp"]),
    "system_rows": len(sm["timestamp"]),
    "tracked_cpu": sum(pm["utime"]) + sum(pm["stime"]),
    "max_cpu_usage": max(pm["cpu_usage"]),
    "own_cpu": (t1.user - t0.user) + (t1.system - t0.system),
    "memory_mib": max(pm["memory_mib"]),  # the Python tracker 0.5's column: PSS in MiB
}))
"""


def _clean_env(**extra):
    """The environment without anything that would point Python at the source tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "RESOURCE_TRACKER_LIBRARY", "PIP_INDEX_URL", "PIP_FIND_LINKS")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", TRACKER_CLOUD_DISCOVERY="0")
    env.update(extra)
    return env


def _venv(path):
    """A fresh venv with pip; skips the test when python3-venv (ensurepip) is missing."""
    r = subprocess.run([PYTHON, "-m", "venv", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        if "ensurepip" in (r.stdout + r.stderr) or "No module named venv" in r.stderr:
            pytest.skip(f"python3-venv is not installed: {r.stdout.strip() or r.stderr.strip()}")
        raise AssertionError(f"venv failed: {r.stdout}{r.stderr}")
    return os.path.join(str(path), "bin", "python")


def _pip(vpy, *args, env=None, timeout=600):
    r = subprocess.run([vpy, "-m", "pip", *args], capture_output=True, text=True, timeout=timeout,
                       env=env or _clean_env(), cwd=REPO)
    assert r.returncode == 0, f"pip {' '.join(args)} failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r


def _run_workload(vpy, cwd):
    r = subprocess.run([vpy, "-c", WORKLOAD], capture_output=True, text=True, timeout=60,
                       env=_clean_env(), cwd=str(cwd))
    assert r.returncode == 0, f"workload failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def _check_installed(vpy, tmp_path):
    """The package runs from the venv and tracks the CPU loop; then it uninstalls."""
    out = _run_workload(vpy, tmp_path)
    venv = os.path.dirname(os.path.dirname(vpy))
    assert out["file"].startswith(venv), out["file"]  # the venv's copy, not the source tree
    lib = os.path.join(os.path.dirname(out["file"]), "libresource-tracker.so")
    assert os.path.isfile(lib)
    with open(os.path.join(PACKAGE_DIR, "resource_tracker", "_version.py")) as f:
        assert out["version"] in f.read()
    assert out["n_samples"] >= 5
    assert out["process_rows"] >= 5 and out["system_rows"] >= 5
    # the tracked tree is this process: its CPU is most of the loop's, never more than it burned
    # (plus a tick of rounding per sample)
    assert out["tracked_cpu"] > 0.5 * out["own_cpu"], out
    assert out["tracked_cpu"] <= out["own_cpu"] + 0.01 * out["n_samples"] + 0.05, out
    assert out["max_cpu_usage"] > 0.3, out
    assert out["memory_mib"] > 1, out

    r = _pip(vpy, "uninstall", "-y", "resource-tracker")
    assert "Successfully uninstalled resource-tracker" in r.stdout
    assert not os.path.exists(lib)
    r = subprocess.run([vpy, "-c", "import resource_tracker"], capture_output=True, text=True,
                       env=_clean_env(), cwd=str(tmp_path))
    assert r.returncode != 0 and "ModuleNotFoundError" in r.stderr


def _check_gpu_tracker_command(vpy, tmp_path):
    """pip wrote the console script gpu-tracker, which runs gpu_tracker.__main__ (docopt, not in
    the venv, from the system's python3-docopt through PYTHONPATH, alone)."""
    docopt = pytest.importorskip("docopt", reason="python3-docopt (scripts/install-deps --test)")
    only = tmp_path / "docopt-only"
    only.mkdir()
    os.symlink(docopt.__file__, only / os.path.basename(docopt.__file__))
    cmd = os.path.join(os.path.dirname(vpy), "gpu-tracker")
    r = subprocess.run([cmd, "-v"], capture_output=True, text=True, timeout=60,
                       env=_clean_env(PYTHONPATH=str(only)), cwd=str(tmp_path))
    # gpu_tracker's -v: the API version it implements, alone, as 5.0.1's own prints it (issue 68);
    # ours, the package's, is gpu_tracker.__implementation_version__
    assert r.returncode == 0 and r.stdout == "5.0.1\n", r.stdout + r.stderr
    with open(os.path.join(PACKAGE_DIR, "resource_tracker", "_version.py")) as f:
        ours = f.read()
    r = subprocess.run([vpy, "-c", "import gpu_tracker; print(gpu_tracker.__implementation_version__)"],
                       capture_output=True, text=True, timeout=60, env=_clean_env(PYTHONPATH=str(only)),
                       cwd=str(tmp_path))
    assert r.returncode == 0 and f'"{r.stdout.strip()}"' in ours, r.stdout + r.stderr


def test_install_builds_library_with_cmake(tmp_path):
    """pip install --no-index ./python with RESOURCE_TRACKER_BUILD=1: the backend builds the
    library with cmake, whatever is built already."""
    vpy = _venv(tmp_path / "venv")
    r = _pip(vpy, "install", "-v", "--no-index", "./python", env=_clean_env(RESOURCE_TRACKER_BUILD="1"))
    assert "--target resource-tracker-shared" in r.stdout + r.stderr  # built, not bundled
    _check_installed(vpy, tmp_path)


def _source_copy(top):
    """What the backend reads of the repository (python/, the C sources' CMakeLists.txt,
    include/ and src/), copied to top; returns the copy's python/."""
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", ".pytest_cache")
    for rel in ("python", "include", "src"):
        shutil.copytree(os.path.join(REPO, rel), os.path.join(str(top), rel), ignore=skip)
    shutil.copy(os.path.join(REPO, "CMakeLists.txt"), str(top))
    return os.path.join(str(top), "python")


def _wheel_library(vpy, python_dir, out, env):
    """pip wheel of python_dir into out: (pip's output, the wheel's library bytes)."""
    r = _pip(vpy, "wheel", "-v", "--no-index", "-w", str(out), python_dir, env=env)
    (whl,) = [os.path.join(str(out), w) for w in os.listdir(str(out)) if w.endswith(".whl")]
    with zipfile.ZipFile(whl) as z:
        data = z.read("resource_tracker/libresource-tracker.so")
    os.unlink(whl)
    return r.stdout + r.stderr, data


def test_wheel_bundles_a_library_already_built(tmp_path):
    """No RESOURCE_TRACKER_LIBRARY: the backend bundles the build tree's library (python/../build)
    when it is as new as the sources and no sanitizer's; else an installed one of the sources'
    version (pkg-config's libdir here); else it would build (refused here: no cmake on PATH), and
    says why it took none."""
    lib = os.path.realpath(os.path.join(BUILD_DIR, "libresource-tracker.so"))
    assert os.path.isfile(lib), f"build the library first ({lib})"
    with open(lib, "rb") as f:
        lib_bytes = f.read()
    vpy = _venv(tmp_path / "venv")
    python_dir = _source_copy(tmp_path / "repo")
    build = tmp_path / "repo" / "build"
    build.mkdir()
    tree_lib = str(build / "libresource-tracker.so")
    shutil.copy(lib, tree_lib)  # a fresh copy: newer than every source copied before it
    (build / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=RelWithDebInfo\nRT_SANITIZE:BOOL=OFF\n")
    out, data = _wheel_library(vpy, python_dir, tmp_path / "w", _clean_env())
    assert f"bundling {tree_lib} (the repository's build tree, version " in out, out[-3000:]
    assert "--target resource-tracker-shared" not in out and data == lib_bytes

    # older than a source: passed over; an installed library (pkg-config) is taken instead
    os.utime(tree_lib, (1, 1))
    inst = tmp_path / "inst"
    (inst / "lib").mkdir(parents=True)
    inst_lib = str(inst / "lib" / "libresource-tracker.so")
    shutil.copy(lib, inst_lib)
    (inst / "resource-tracker.pc").write_text(f"libdir={inst / 'lib'}\nName: resource-tracker\n"
                                              "Description: x\nVersion: 0\nLibs: -L${libdir} -lresource-tracker\n")
    out, data = _wheel_library(vpy, python_dir, tmp_path / "w", _clean_env(PKG_CONFIG_PATH=str(inst)))
    assert f"{tree_lib}: older than " in out, out[-3000:]
    assert f"bundling {inst_lib} (installed, version " in out, out[-3000:]
    assert data == lib_bytes

    # a sanitizer's build tree, nothing installed, no cmake: the build stops, saying why
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    cache = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
    if "libresource-tracker.so" in cache:
        pytest.skip("a libresource-tracker is installed on this machine (ldconfig -p): it would be bundled")
    shutil.copy(lib, tree_lib)
    (build / "CMakeCache.txt").write_text("RT_SANITIZE:BOOL=ON\n")
    env = _clean_env(PATH=os.path.dirname(vpy))  # pip's venv alone: no cmake, no pkg-config
    r = subprocess.run([vpy, "-m", "pip", "wheel", "-v", "--no-index", "-w", str(tmp_path / "w"), python_dir],
                       capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert f"no built library to bundle ({tree_lib}: a sanitizer's, coverage or fuzzing build" in out, out[-3000:]
    assert "cmake is not installed" in out, out[-3000:]


def test_install_bundles_given_library_and_wheel_layout(tmp_path):
    """pip wheel with RESOURCE_TRACKER_LIBRARY: the wheel holds that very library, a
    platform tag and hashes in RECORD; installing the wheel works the same."""
    given = os.path.join(BUILD_DIR, "libresource-tracker.so")
    assert os.path.isfile(given), f"build the library first ({given})"
    vpy = _venv(tmp_path / "venv")
    wheels = tmp_path / "wheels"
    r = _pip(vpy, "wheel", "-v", "--no-index", "-w", str(wheels), "./python",
             env=_clean_env(RESOURCE_TRACKER_LIBRARY=given))
    assert "bundling" in r.stdout + r.stderr
    (whl,) = [os.path.join(str(wheels), w) for w in os.listdir(str(wheels))]
    assert whl.endswith("-py3-none-linux_%s.whl" % os.uname().machine.replace("-", "_"))
    with zipfile.ZipFile(whl) as z, open(os.path.realpath(given), "rb") as f:
        assert z.read("resource_tracker/libresource-tracker.so") == f.read()
        names = z.namelist()
        (wheel_meta,) = [n for n in names if n.endswith(".dist-info/WHEEL")]
        assert "Root-Is-Purelib: false" in z.read(wheel_meta).decode()
        (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        rows = [l.split(",") for l in z.read(record).decode().splitlines()]
        assert {r[0] for r in rows} == set(names)
        assert all(r[1].startswith("sha256=") for r in rows if r[0] != record)
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        assert z.read(entry_points).decode() == "[console_scripts]\ngpu-tracker = gpu_tracker.__main__:main\n"
    _pip(vpy, "install", "--no-index", whl)
    _check_gpu_tracker_command(vpy, tmp_path)
    _check_installed(vpy, tmp_path)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
