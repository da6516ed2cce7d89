"""PEP 517/660 build backend of the resource_tracker package, standard library only.

pip runs it in-tree (pyproject.toml: requires = [], backend-path = ["_build"]), so
`pip install ./python` needs neither an index nor setuptools. The wheel holds the package
files (resource_tracker, gpu_tracker, and the metaflow_extensions namespace package with the
Metaflow step decorator and card) and the C library as resource_tracker/libresource-tracker.so,
the first of:
- the file named by RESOURCE_TRACKER_LIBRARY (or --config-settings library=PATH);
- one already built: the repository's build tree (python/../build, the README's build; not a
  sanitizer's or coverage build, not older than a C source, its version the sources'), then an
  installed one (pkg-config's libdir for resource-tracker, then ldconfig's cache) whose version is
  the sources';
- one built with cmake from the repository's sources (python/.., or the _csrc/ copy inside an
  sdist) in a temporary directory (about 4 minutes on 2 cores): when none of the above is found,
  or always with RESOURCE_TRACKER_BUILD=1 (or --config-settings library=build).
It says which on stderr (pip shows it with -v), and why each one it passed over was not taken.
"""
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
PACKAGE = "resource_tracker"
# gpu_tracker-compatible module on the same C library (python/gpu_tracker), shipped beside it
EXTRA_PACKAGES = ("gpu_tracker",)
# namespace packages (no __init__.py, by their owners' rules): metaflow_extensions holds the
# Metaflow step decorator and card, found by Metaflow through top_level.txt and RECORD
NAMESPACE_PACKAGES = ("metaflow_extensions",)
LIBRARY_NAME = "libresource-tracker.so"
CMAKE_TARGET = "resource-tracker-shared"
# What the C build needs from the repository (CMakeLists.txt names these even for one target);
# an sdist carries them under _csrc/.
C_SOURCE_PATHS = ("CMakeLists.txt", "cmake", "include", "src", "bench", "examples", "docs",
                  "tests/tools", "tests/stubs", "LICENSE")
SDIST_C_DIR = "_csrc"
SKIP_NAMES = ("__pycache__", ".pytest_cache", ".git", "node_modules")


class BuildError(RuntimeError):
    """A build that cannot go on, with what to do about it."""


# ---- metadata -------------------------------------------------------------------------------

def _project_table():
    """The [project] table of pyproject.toml (tomllib where there is one, else its string keys
    and [project.scripts] as "scripts")."""
    path = os.path.join(PROJECT_DIR, "pyproject.toml")
    try:
        import tomllib
        with open(path, "rb") as f:
            return tomllib.load(f).get("project", {})
    except ImportError:
        table, inside = {}, None
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line.startswith("["):
                    inside = {"[project]": table, "[project.scripts]": table.setdefault("scripts", {})}.get(line)
                m = re.match(r'([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"', line) if inside is not None else None
                if m:
                    inside[m.group(1)] = m.group(2)
        return table


def _version():
    """__version__ from resource_tracker/_version.py, read as text (nothing is imported)."""
    path = os.path.join(PROJECT_DIR, PACKAGE, "_version.py")
    try:
        with open(path, encoding="utf-8") as f:
            m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', f.read(), re.M)
    except OSError as e:
        raise BuildError(f"cannot read the version: {e}") from e
    if not m:
        raise BuildError(f"no __version__ = \"...\" line in {path}")
    return m.group(1)


def _names():
    """(distribution name, normalized file-name stem, version)."""
    name = _project_table().get("name", "resource-tracker")
    return name, re.sub(r"[-_.]+", "_", name).lower(), _version()


def _metadata_text():
    project = _project_table()
    name, _, version = _names()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    lic = project.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append(f"License: {lic['text']}")
    for url_name, url in (project.get("urls") or {}).items():
        lines.append(f"Project-URL: {url_name}, {url}")
    lines.append("Classifier: Operating System :: POSIX :: Linux")
    body = ""
    readme = os.path.join(PROJECT_DIR, "README.md")
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _entry_points_text():
    """entry_points.txt: [project.scripts] as console scripts (pip writes their commands)."""
    scripts = _project_table().get("scripts") or {}
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{name} = {target}\n" for name, target in scripts.items())


def _platform_tag():
    """The wheel's platform tag, e.g. linux_x86_64 (the library is a native binary)."""
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


def _wheel_text(tag):
    return ("Wheel-Version: 1.0\nGenerator: resource_tracker _build/backend.py\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n")


def _dist_info():
    _, stem, version = _names()
    return f"{stem}-{version}.dist-info"


# ---- the C library ----------------------------------------------------------------------------

def _c_source_root():
    """The directory with the C sources' CMakeLists.txt: an sdist's _csrc/, or python/.."""
    for root in (os.path.join(PROJECT_DIR, SDIST_C_DIR), os.path.dirname(PROJECT_DIR)):
        if os.path.exists(os.path.join(root, "CMakeLists.txt")) and \
                os.path.exists(os.path.join(root, "include", "resource_tracker.h")):
            return root
    return None


def _given_library(config_settings):
    """The library named by --config-settings library=PATH or RESOURCE_TRACKER_LIBRARY."""
    path = (config_settings or {}).get("library") or os.environ.get("RESOURCE_TRACKER_LIBRARY")
    if not path or path == "build":
        return None
    if not os.path.isfile(path):
        raise BuildError(f"RESOURCE_TRACKER_LIBRARY names {path!r}, which is not a file")
    return os.path.realpath(path)


def _build_library(tmp):
    """Builds the shared library with cmake in tmp; returns the path of the real file."""
    root = _c_source_root()
    cmake = shutil.which("cmake")
    if root is None or cmake is None:
        raise BuildError(
            "cannot get the C library: " +
            ("cmake is not installed" if cmake is None else
             "the C sources (CMakeLists.txt, include/, src/) are not next to python/") +
            ". Either build it (cmake -S . -B build && cmake --build build --target "
            "resource-tracker-shared) and install with RESOURCE_TRACKER_LIBRARY=$PWD/build/"
            "libresource-tracker.so, or install cmake, a C compiler, libjansson-dev and "
            "libsqlite3-dev (scripts/install-deps).")
    build = os.path.join(tmp, "cmake-build")
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    steps = [[cmake, "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DRT_TESTS=OFF",
              "-DRT_WERROR=OFF"],
             [cmake, "--build", build, "--target", CMAKE_TARGET, "-j", jobs]]
    for cmd in steps:
        print("resource_tracker build:", " ".join(cmd), file=sys.stderr, flush=True)
        # cmake's own output goes to stderr too: pip shows it on failure or with -v
        r = subprocess.run(cmd, stdout=sys.stderr.fileno(), stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise BuildError(f"cmake failed (exit {r.returncode}): {' '.join(cmd)}")
    lib = os.path.join(build, LIBRARY_NAME)
    if not os.path.exists(lib):
        raise BuildError(f"cmake built no {lib}")
    return os.path.realpath(lib)


def _source_version(root):
    """MAJOR.MINOR.PATCH of the C sources at root (include/resource_tracker/version.h), or None."""
    try:
        with open(os.path.join(root, "include", "resource_tracker", "version.h"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    parts = [re.search(rf"^#define RT_VERSION_{p} (\d+)", text, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


# Run by the build's python in a child: a library that cannot load here (a sanitizer's build
# aborts the process that loads it) costs the child only
_VERSION_PROBE = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); "
                  "lib.rt_version.restype = ctypes.c_char_p; print(lib.rt_version().decode())")


def _library_version(path):
    """rt_version() of the library at path, or None when it does not load or has none."""
    try:
        r = subprocess.run([sys.executable, "-c", _VERSION_PROBE, path], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    out = r.stdout.strip()
    return out if r.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+", out) else None


def _newest_source(root):
    """(mtime, path) of the newest C source under root (CMakeLists.txt, include/, src/)."""
    newest = (0.0, "")
    for rel in ("CMakeLists.txt", "include", "src"):
        for path, _ in _walk(os.path.join(root, rel), root):
            mtime = os.stat(path).st_mtime
            if mtime > newest[0]:
                newest = (mtime, path)
    return newest


def _build_tree_library(root, why):
    """The library of root's build tree (root/build) when it fits; else None, with why."""
    build = os.path.join(root, "build")
    lib = os.path.join(build, LIBRARY_NAME)
    if not os.path.isfile(lib):
        why.append(f"{lib}: not built")
        return None
    try:
        with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            cache = f.read()
    except OSError:
        cache = ""
    if re.search(r"^RT_(SANITIZE|COVERAGE|FUZZ):BOOL=(ON|1|TRUE)", cache, re.M | re.I) or "-fsanitize" in cache:
        why.append(f"{lib}: a sanitizer's, coverage or fuzzing build")
        return None
    mtime, newest = _newest_source(root)
    if mtime > os.stat(os.path.realpath(lib)).st_mtime:
        why.append(f"{lib}: older than {os.path.relpath(newest, root)} (cmake --build build brings it up to date)")
        return None
    return lib


def _installed_libraries():
    """Paths of installed libraries: pkg-config's libdir for resource-tracker, then ldconfig's."""
    pkg_config = shutil.which("pkg-config")
    if pkg_config:
        r = subprocess.run([pkg_config, "--variable=libdir", "resource-tracker"], capture_output=True, text=True)
        libdir = r.stdout.strip()
        if r.returncode == 0 and libdir:
            yield os.path.join(libdir, LIBRARY_NAME)
    for ldconfig in (shutil.which("ldconfig"), "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        if ldconfig and os.path.isfile(ldconfig):
            r = subprocess.run([ldconfig, "-p"], capture_output=True, text=True)
            for m in re.finditer(r"^\s*libresource-tracker\.so(?:\.\d+)* \(([^)]*)\) => (\S+)$", r.stdout, re.M):
                yield m.group(2)
            break


def _built_library(root, why):
    """(path, where) of an already built library of the sources' version: the build tree's, then
    an installed one; (None, None) when none fits (why says what was passed over)."""
    want = _source_version(root) if root else None
    seen = set()
    candidates = [(_build_tree_library(root, why) if root else None, "the repository's build tree")]
    candidates += [(path, "installed") for path in _installed_libraries()]
    for path, where in candidates:
        if not path or not os.path.isfile(path) or os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        version = _library_version(path)
        if version is None:
            why.append(f"{path}: does not load here (or has no rt_version)")
        elif want and version != want:
            why.append(f"{path}: version {version}, the sources' is {want}")
        else:
            return os.path.realpath(path), f"{where}, version {version}"
    if not why:
        why.append("no build tree and no installed library")
    return None, None


def _library(config_settings, tmp):
    given = _given_library(config_settings)
    if given:
        print(f"resource_tracker build: bundling {given} (RESOURCE_TRACKER_LIBRARY)",
              file=sys.stderr, flush=True)
        return given
    if (config_settings or {}).get("library") == "build" or os.environ.get("RESOURCE_TRACKER_BUILD") == "1":
        print("resource_tracker build: building the library (RESOURCE_TRACKER_BUILD=1)", file=sys.stderr, flush=True)
        return _build_library(tmp)
    why = []
    lib, where = _built_library(_c_source_root(), why)
    if lib:
        passed = f"; passed over: {'; '.join(why)}" if why else ""
        print(f"resource_tracker build: bundling {lib} ({where}){passed}", file=sys.stderr, flush=True)
        return lib
    print("resource_tracker build: no built library to bundle (" + "; ".join(why) + "): building it",
          file=sys.stderr, flush=True)
    return _build_library(tmp)


# ---- files ------------------------------------------------------------------------------------

def _walk(top, rel_to):
    """(absolute path, path relative to rel_to) of the files under top, sorted, caches skipped."""
    if os.path.isfile(top):
        yield top, os.path.relpath(top, rel_to)
        return
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_NAMES)
        for fn in sorted(filenames):
            if fn.endswith((".pyc", ".pyo", ".so")) or fn.startswith("."):
                continue
            path = os.path.join(dirpath, fn)
            yield path, os.path.relpath(path, rel_to)


def _package_files():
    files = []
    for name in (PACKAGE,) + EXTRA_PACKAGES:
        pkg = os.path.join(PROJECT_DIR, name)
        if not os.path.exists(os.path.join(pkg, "__init__.py")):
            raise BuildError(f"no package at {pkg}")
        files += list(_walk(pkg, PROJECT_DIR))
    for name in NAMESPACE_PACKAGES:
        pkg = os.path.join(PROJECT_DIR, name)
        if os.path.exists(os.path.join(pkg, "__init__.py")) or not os.path.isdir(pkg):
            raise BuildError(f"{pkg} must be a namespace package (a directory without __init__.py)")
        files += list(_walk(pkg, PROJECT_DIR))
    return files


def _zip_time():
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, reproducible
    return time.gmtime(max(epoch, 315532800))[:6]


class _Wheel:
    """A wheel being written: every file hashed into RECORD, which is written last."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=_zip_time())
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def add_file(self, arcname, path, mode=0o644):
        with open(path, "rb") as f:
            self.add(arcname, f.read(), mode)

    def close(self, dist_info):
        record = f"{dist_info}/RECORD"
        text = "\n".join(self.records + [f"{record},,"]) + "\n"
        info = zipfile.ZipInfo(record, date_time=_zip_time())
        info.external_attr = (0o100644) << 16
        self.zip.writestr(info, text)
        self.zip.close()


def _write_wheel(wheel_directory, files, extra=()):
    """Writes the wheel of files [(arcname, path, mode)] and extra [(arcname, bytes)]."""
    _, stem, version = _names()
    tag = f"py3-none-{_platform_tag()}"
    name = f"{stem}-{version}-{tag}.whl"
    dist_info = _dist_info()
    os.makedirs(wheel_directory, exist_ok=True)
    wheel = _Wheel(os.path.join(wheel_directory, name))
    try:
        for arcname, path, mode in files:
            wheel.add_file(arcname, path, mode)
        for arcname, data in extra:
            wheel.add(arcname, data)
        wheel.add(f"{dist_info}/METADATA", _metadata_text().encode("utf-8"))
        wheel.add(f"{dist_info}/WHEEL", _wheel_text(tag).encode("utf-8"))
        if _entry_points_text():
            wheel.add(f"{dist_info}/entry_points.txt", _entry_points_text().encode("utf-8"))
        wheel.add(f"{dist_info}/top_level.txt", "".join(f"{p}\n" for p in (PACKAGE,) + EXTRA_PACKAGES + NAMESPACE_PACKAGES).encode())
    finally:
        wheel.close(dist_info)
    return name


# ---- PEP 517 hooks ----------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = os.path.join(metadata_directory, _dist_info())
    os.makedirs(dist_info, exist_ok=True)
    with open(os.path.join(dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata_text())
    with open(os.path.join(dist_info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_text(f"py3-none-{_platform_tag()}"))
    if _entry_points_text():
        with open(os.path.join(dist_info, "entry_points.txt"), "w", encoding="utf-8") as f:
            f.write(_entry_points_text())
    return os.path.basename(dist_info)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = [(rel, path, 0o644) for path, rel in _package_files()]
    with tempfile.TemporaryDirectory(prefix="resource-tracker-build-") as tmp:
        lib = _library(config_settings, tmp)
        files.append((f"{PACKAGE}/{LIBRARY_NAME}", lib, 0o755))
        return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth naming python/, and the library copied (git-ignored) into
    python/resource_tracker/ where the package's loader finds it."""
    with tempfile.TemporaryDirectory(prefix="resource-tracker-build-") as tmp:
        lib = _library(config_settings, tmp)
        target = os.path.join(PROJECT_DIR, PACKAGE, LIBRARY_NAME)
        if os.path.realpath(target) != lib:
            shutil.copyfile(lib, target)
            os.chmod(target, 0o755)
    pth = (PROJECT_DIR + "\n").encode()
    return _write_wheel(wheel_directory, [], extra=[(f"_{PACKAGE}_editable.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    """The Python project plus the C sources under _csrc/, so a wheel builds from it alone."""
    _, stem, version = _names()
    top = f"{stem}-{version}"
    members = []
    for rel in ("pyproject.toml", "README.md", "_build", PACKAGE, *EXTRA_PACKAGES, *NAMESPACE_PACKAGES, "tests"):
        path = os.path.join(PROJECT_DIR, rel)
        if os.path.exists(path):
            members += [(p, f"{top}/{r}") for p, r in _walk(path, PROJECT_DIR)]
    root = _c_source_root()
    if root is None:
        raise BuildError("the C sources are not next to python/: cannot make a complete sdist")
    for rel in C_SOURCE_PATHS:
        path = os.path.join(root, rel)
        if os.path.exists(path):
            members += [(p, f"{top}/{SDIST_C_DIR}/{r}") for p, r in _walk(path, root)]
    name = f"{top}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    mtime = time.mktime(_zip_time() + (0, 0, -1))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arcname, data):
            info = tarfile.TarInfo(arcname)
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            tar.addfile(info, io.BytesIO(data))
        add(f"{top}/PKG-INFO", _metadata_text().encode("utf-8"))
        for path, arcname in members:
            with open(path, "rb") as f:
                add(arcname, f.read())
    return name
