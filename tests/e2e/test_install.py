"""The install and the Debian package of the test's build (RT_BUILD_DIR): `cpack -G DEB` makes the
.deb (into a scratch directory); its control fields (Package, Version = the tool's --version,
Section, Depends naming the package of every shared library the tool and the library link, per
dpkg -S of ldd's list, Recommends naming those opened with dlopen), its contents (each file where
a Debian system keeps it, every docs/*.1, nothing of the tests), its Depends met by the packages
installed here and resolved by apt (--simulate); then the package unpacked into a scratch root
(dpkg-deb -x: the real system is not changed) and run from there: the tool on a real workload,
its man pages through groff, the Python package imported by /usr/bin/python3 from the root's
dist-packages, finding the root's libresource-tracker.so.0 through the loader (LD_LIBRARY_PATH),
tracking a call. Also `cmake --install` with a DESTDIR, and scripts/install-deps' plain set
holding no test tool. Plain builds only: skips under the sanitizers and valgrind, and where cpack
or dpkg-deb is missing, saying why."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED, TRACKER, VALGRIND

pytestmark = [
    pytest.mark.skipif(SANITIZED or VALGRIND, reason="packages a plain build: not under the sanitizers or valgrind"),
    pytest.mark.skipif(not os.path.exists(os.path.join(BUILD_DIR, "CPackConfig.cmake")),
                       reason="the build has no CPackConfig.cmake (not configured by CMake)"),
    pytest.mark.skipif(not all(shutil.which(t) for t in ("cpack", "dpkg-deb", "dpkg-shlibdeps", "dpkg-query")),
                       reason="cpack, dpkg-deb, dpkg-shlibdeps or dpkg-query missing (build-essential, cmake)"),
]

MAN_PAGES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "docs", "*.1")))
PYTHON_PACKAGES = ("resource_tracker", "gpu_tracker")
# what the plain scripts/install-deps must never install (the test toolchain)
TEST_TOOLS = ("clang", "libcmocka-dev", "valgrind", "chromium", "prometheus", "prometheus-node-exporter",
              "nodejs", "npm", "python3-pytest", "stress-ng", "python3-pytest-xdist", "ccache", "gcovr",
              "slurmctld", "slurmd", "slurm-client", "munge", "slurmdbd", "mariadb-server-core", "openmpi-bin",
              "abigail-tools")


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def tool_version(path, env=None):
    r = sh([path, "--version"], env=env)
    assert r.returncode == 0, r.stderr
    m = re.match(r"resource-tracker (\S+)$", r.stdout.strip())
    assert m, r.stdout
    return m.group(1)


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    r = sh(["cpack", "-G", "DEB", "--config", os.path.join(BUILD_DIR, "CPackConfig.cmake"), "-B", str(out)],
           cwd=BUILD_DIR)
    assert r.returncode == 0, r.stdout + r.stderr
    debs = glob.glob(os.path.join(out, "*.deb"))
    assert len(debs) == 1, (debs, r.stdout)
    return debs[0]


@pytest.fixture(scope="module")
def root(deb, tmp_path_factory):
    """the package unpacked into a scratch root"""
    d = tmp_path_factory.mktemp("root")
    r = sh(["dpkg-deb", "-x", deb, str(d)])
    assert r.returncode == 0, r.stderr
    return str(d)


def field(deb, name):
    r = sh(["dpkg-deb", "-f", deb, name])
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def names(relation):
    """the package names of a Depends-style field ('a (>= 1), b | c' -> {a, b, c})"""
    return {re.split(r"[\s(:]", alt.strip())[0] for part in relation.split(",") for alt in part.split("|") if alt.strip()}


def owner(path):
    """the Debian package that holds a library path from ldd (tried as given, resolved, and across
    the merged /usr)"""
    tries = [path, os.path.realpath(path)]
    for p in list(tries):
        tries.append(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for p in tries:
        r = sh(["dpkg-query", "-S", p])
        if r.returncode == 0:
            return r.stdout.split(":")[0].strip()
    return None


def linked(path):
    """the shared libraries (paths) that path loads, per ldd"""
    r = sh(["ldd", path])
    assert r.returncode == 0, r.stdout + r.stderr
    libs = []
    for line in r.stdout.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def libdir(root):
    """the directory of libresource-tracker.so.0 in the root"""
    found = glob.glob(os.path.join(root, "usr/lib/**/libresource-tracker.so.0"), recursive=True)
    assert len(found) == 1, found
    return os.path.dirname(found[0])


def test_control_fields(deb):
    assert field(deb, "Package") == "resource-tracker"
    assert field(deb, "Version") == tool_version(TRACKER)
    assert field(deb, "Section") == "utils"
    assert field(deb, "Architecture") == sh(["dpkg", "--print-architecture"]).stdout.strip()
    assert "<" in field(deb, "Maintainer") and field(deb, "Description")
    depends = names(field(deb, "Depends"))
    # every library the tool and the shared library link is its package's Depends
    lib = os.path.join(BUILD_DIR, "libresource-tracker.so.0")
    for path in linked(TRACKER) + linked(lib):
        pkg = owner(path)
        assert pkg, f"no package holds {path}"
        assert pkg in depends, f"{path} is in {pkg}, not in Depends: {sorted(depends)}"
    # what is opened with dlopen at first use: SQLite (history), libcurl (uploads, prices), zlib
    assert {"libsqlite3-0", "libcurl4", "zlib1g", "python3"} <= names(field(deb, "Recommends"))


def test_depends_satisfied_here(deb):
    """each Depends entry is met by a package installed on this machine, its version included"""
    depends = field(deb, "Depends")
    assert depends, "no Depends"
    for part in depends.split(","):
        m = re.match(r"\s*([^\s(]+)\s*(?:\((\S+)\s+([^)]+)\))?", part)
        name, op, version = m.groups()
        r = sh(["dpkg-query", "-W", "-f", "${Status} ${Version}", name])
        assert r.returncode == 0 and r.stdout.startswith("install ok installed"), f"{name}: {r.stdout}{r.stderr}"
        if op:
            have = r.stdout.split()[-1]
            assert sh(["dpkg", "--compare-versions", have, op, version]).returncode == 0, f"{name} {have} {op} {version}"


def test_apt_resolves(deb):
    """apt, simulating (nothing installed), finds everything the package needs"""
    if not shutil.which("apt-get"):
        pytest.skip("apt-get missing")
    r = sh(["apt-get", "install", "--simulate", "-q", os.path.abspath(deb)], env=dict(os.environ, LC_ALL="C"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^Inst resource-tracker ", r.stdout, re.M), r.stdout


def test_contents(deb, root):
    r = sh(["dpkg-deb", "-c", deb])
    assert r.returncode == 0, r.stderr
    files = {line.split()[5].lstrip(".") for line in r.stdout.splitlines()}
    assert "/usr/bin/resource-tracker" in files
    assert "/usr/bin/gpu-tracker" in files
    lib = libdir(root)
    version = tool_version(TRACKER)
    real = os.path.join(lib, f"libresource-tracker.so.{version}")
    assert os.path.isfile(real) and not os.path.islink(real)
    assert os.readlink(os.path.join(lib, "libresource-tracker.so.0")) == f"libresource-tracker.so.{version}"
    assert os.readlink(os.path.join(lib, "libresource-tracker.so")) == "libresource-tracker.so.0"
    assert os.path.isfile(os.path.join(lib, "libresource-tracker.a"))
    soname = sh(["objdump", "-p", real]).stdout
    assert re.search(r"SONAME\s+libresource-tracker\.so\.0\b", soname), soname
    assert "/usr/include/resource_tracker.h" in files
    for part in glob.glob(os.path.join(REPO, "include", "resource_tracker", "*.h")):  # the header's parts
        assert "/usr/include/resource_tracker/" + os.path.basename(part) in files, part
    pc = os.path.join(lib, "pkgconfig", "resource-tracker.pc")
    with open(pc) as f:
        assert f"Version: {version}" in f.read()
    assert MAN_PAGES, "docs/*.1 is empty"
    for page in MAN_PAGES:
        assert f"/usr/share/man/man1/{page}" in files, page
    for pkg in PYTHON_PACKAGES:
        assert f"/usr/lib/python3/dist-packages/{pkg}/__init__.py" in files
        src = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "python", pkg, "*.py")))
        assert sorted(os.listdir(os.path.join(root, "usr/lib/python3/dist-packages", pkg))) == src
    for data in ("cpu-tdp.csv", "grid-intensity.csv"):  # the tables compiled into the library, as data
        assert f"/usr/share/resource-tracker/{data}" in files, data
    # nothing else: no tests, test helpers, fake libraries, benchmarks, bytecode
    allowed = ("/usr/bin/resource-tracker", "/usr/bin/gpu-tracker", "/usr/include/resource_tracker.h",
               "/usr/include/resource_tracker/", "/usr/share/man/man1/",
               "/usr/share/resource-tracker/",
               "/usr/lib/python3/dist-packages/", lib[len(root):] + "/")
    for f in files:
        if not f.endswith("/"):
            assert f.startswith(allowed) and "__pycache__" not in f, f"unexpected in the package: {f}"


def test_maintainer_scripts_run_ldconfig(deb, tmp_path):
    """the library goes to a directory of the loader's: postinst and postrm run ldconfig"""
    r = sh(["dpkg-deb", "-e", deb, str(tmp_path / "DEBIAN")])
    assert r.returncode == 0, r.stderr
    for script in ("postinst", "postrm"):
        with open(tmp_path / "DEBIAN" / script) as f:
            assert "ldconfig" in f.read(), script


def test_installed_tool_runs(root):
    tool = os.path.join(root, "usr/bin/resource-tracker")
    assert tool_version(tool) == tool_version(TRACKER)
    r = sh([tool, "-i", "0.1", "-o", "-", "--", "sleep", "0.2"])
    assert r.returncode == 0, r.stderr
    samples = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert samples and all("cpu" in s and "memory" in s for s in samples), r.stdout[:500]


def test_installed_man_pages_render(root):
    groff = shutil.which("groff")
    if not groff:
        pytest.skip("groff missing (groff-base)")
    for page in MAN_PAGES:
        path = os.path.join(root, "usr/share/man/man1", page)
        r = sh([groff, "-man", "-z", "-ww", path])
        assert r.returncode == 0 and not r.stderr.strip(), f"{page}: {r.stderr}"


def test_installed_python_package_tracks(root):
    """/usr/bin/python3 imports the root's package, which loads the root's library through the loader"""
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "usr/lib/python3/dist-packages"),
               LD_LIBRARY_PATH=libdir(root), PYTHONDONTWRITEBYTECODE="1", TRACKER_CLOUD_DISCOVERY="0")
    env.pop("RESOURCE_TRACKER_LIBRARY", None)
    code = """if 1:
        import time, resource_tracker, gpu_tracker
        from resource_tracker import ResourceTracker
        with ResourceTracker(interval=0.1) as t:
            time.sleep(0.5)
        maps = open("/proc/self/maps").read()
        lib = [l.split()[-1] for l in maps.splitlines() if "libresource-tracker.so" in l][0]
        print(resource_tracker.__file__)
        print(lib)
        print(len(t.system_metrics))
    """
    r = sh(["/usr/bin/python3", "-c", code], env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    module, lib, rows = r.stdout.split()
    assert module.startswith(root), module
    assert lib.startswith(root), lib
    assert int(rows) > 0


def test_installed_gpu_tracker_command_runs(root, tmp_path):
    """/usr/bin/gpu-tracker (gpu_tracker's command) runs the root's package: a command tracked,
    its tracker printed as JSON"""
    pytest.importorskip("docopt", reason="python3-docopt (scripts/install-deps --test)")
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "usr/lib/python3/dist-packages"),
               LD_LIBRARY_PATH=libdir(root), PYTHONDONTWRITEBYTECODE="1", TRACKER_CLOUD_DISCOVERY="0")
    env.pop("RESOURCE_TRACKER_LIBRARY", None)
    r = sh([os.path.join(root, "usr/bin/gpu-tracker"), "-e", "sleep 0.3", "--st=0.1", "-f", "json"],
           env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    first, rest = r.stdout.split("\n", 1)
    assert first == "Resource tracking complete. Process completed with status code: 0", r.stdout
    assert json.loads(rest)["compute_time"]["unit"] == "hours"


def test_cmake_install_destdir(tmp_path):
    """`cmake --install` with a DESTDIR and the prefix /usr: the same places as the package"""
    r = sh(["cmake", "--install", BUILD_DIR, "--prefix", "/usr"], env=dict(os.environ, DESTDIR=str(tmp_path)))
    assert r.returncode == 0, r.stdout + r.stderr
    usr = tmp_path / "usr"
    assert (usr / "bin/resource-tracker").is_file()
    assert (usr / "include/resource_tracker.h").is_file()
    assert (usr / "include/resource_tracker/version.h").is_file()
    assert glob.glob(str(usr / "lib/**/libresource-tracker.so.0"), recursive=True)
    assert glob.glob(str(usr / "lib/**/pkgconfig/resource-tracker.pc"), recursive=True)
    for page in MAN_PAGES:
        assert (usr / "share/man/man1" / page).is_file(), page
    for data in ("cpu-tdp.csv", "grid-intensity.csv"):
        assert (usr / "share/resource-tracker" / data).is_file(), data
    for pkg in PYTHON_PACKAGES:
        assert (usr / "lib/python3/dist-packages" / pkg / "__init__.py").is_file(), pkg
    assert os.access(usr / "bin/gpu-tracker", os.X_OK)


def test_install_deps_sets():
    """the plain set (the README's first command) holds no test tool; --test adds them, and the
    static build's tools (--static) too"""
    script = os.path.join(REPO, "scripts", "install-deps")
    plain = sh([script, "--list"])
    both = sh([script, "--list", "--test"])
    assert plain.returncode == 0 and both.returncode == 0, plain.stderr + both.stderr
    plain, both = set(plain.stdout.split()), set(both.stdout.split())
    assert {"cmake", "libjansson-dev", "libsqlite3-dev", "libjs-dygraphs"} <= plain
    # the README's Python lines make a venv (tests/e2e/test_readme.py): python3-venv is plain
    assert "python3-venv" in plain
    assert not plain & set(TEST_TOOLS), plain & set(TEST_TOOLS)
    assert plain < both and set(TEST_TOOLS) <= both
    # gpu_tracker 5's suite and the gpu-tracker command (python/tests/test_peer_gpu_tracker.py)
    assert {"python3-pandas", "python3-sqlalchemy", "python3-pytest-mock", "python3-deepdiff", "python3-docopt",
            "python3-tqdm"} <= both - plain
    # Debian's snakemake reads our benchmark files (tests/e2e/test_workflow.py), with pygments for
    # its --report
    assert {"snakemake", "python3-pygments"} <= both - plain
    # the static build's (scripts/build-static): --static alone, and with --test
    static = sh([script, "--list", "--static"])
    assert static.returncode == 0, static.stderr
    static = set(static.stdout.split())
    assert {"musl-tools", "dpkg-dev"} <= static - plain and {"musl-tools", "dpkg-dev"} <= both
    assert not static & set(TEST_TOOLS), static & set(TEST_TOOLS)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
