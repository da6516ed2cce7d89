"""The public header as other languages bind it: the shared library exports exactly the
functions the header marks RT_API, its SONAME carries the major version, the header compiles
as C and C++ (each of its parts on its own too; the experimental parts only with
RT_EXPERIMENTAL_API, the deprecated names not with RT_NO_DEPRECATED), Python's ctypes can drive a
sampler through the library alone and hand in a record shorter than the library's, and
scripts/abi-check (abidiff against the release's ABI) passes the build, fails doctored baselines
the rules forbid and passes ones that only grew."""
import ctypes
import glob
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD_DIR, REPO, SANITIZED

HEADER = os.path.join(REPO, "include", "resource_tracker.h")
PARTS = sorted(glob.glob(os.path.join(REPO, "include", "resource_tracker", "*.h")))
LIB = os.path.join(BUILD_DIR, "libresource-tracker.so")


def header_text():
    """The umbrella header and every part it includes, as one text."""
    text = ""
    for path in [HEADER] + PARTS:
        with open(path) as f:
            text += f.read()
    return text


def header_version():
    t = header_text()
    return tuple(int(re.search(rf"#define RT_VERSION_{p} (\d+)", t).group(1)) for p in ("MAJOR", "MINOR", "PATCH"))


def test_exports_are_the_headers_functions():
    declared = set(re.findall(r"RT_API [^;(]*?\b(rt_\w+)\(", header_text()))
    out = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True, check=True).stdout
    exported = {l.split()[-1] for l in out.splitlines() if l.split() and l.split()[-1].startswith("rt_")}
    others = {l.split()[-1] for l in out.splitlines() if len(l.split()) == 3 and l.split()[1] in "TDBR"} - exported
    assert exported == declared
    assert not others, others  # nothing else leaks out of the library


def test_soname_carries_the_major_version():
    out = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True, check=True).stdout
    major = header_version()[0]
    assert f"[libresource-tracker.so.{major}]" in out


@pytest.mark.parametrize("lang,std", [("c", "c11"), ("c", "c99"), ("c++", "c++20")])
def test_header_compiles(tmp_path, lang, std):
    compiler = "cc" if lang == "c" else "c++"
    if not shutil.which(compiler):
        pytest.skip(f"no {compiler}")
    src = tmp_path / ("t.c" if lang == "c" else "t.cpp")
    src.write_text('#include "resource_tracker.h"\n'
                   "int main(void) {\n"
                   "    rt_sampler_options so = RT_SAMPLER_OPTIONS_INIT;\n"
                   "    rt_host_options ho = RT_HOST_OPTIONS_INIT;\n"
                   "    rt_cloud_options co = RT_CLOUD_OPTIONS_INIT;\n"
                   "    rt_job job = RT_JOB_INIT;\n"
                   "    return (int)(so.struct_size + ho.struct_size + co.struct_size + job.struct_size) == 0;\n"
                   "}\n")
    # C++ warns of designated initializers that leave members out (the point of the macros)
    quiet = ["-Wno-missing-field-initializers"] if lang == "c++" else []
    r = subprocess.run([compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-pedantic", *quiet, "-I",
                        os.path.join(REPO, "include"), "-fsyntax-only", str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def compile_c(tmp_path, source, *flags):
    src = tmp_path / "t.c"
    src.write_text(source)
    return subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", os.path.join(REPO, "include"),
                           *flags, "-fsyntax-only", str(src)], capture_output=True, text=True)


def test_umbrella_includes_every_part():
    """resource_tracker.h includes each part and names it in its contents map."""
    with open(HEADER) as f:
        umbrella = f.read()
    assert len(PARTS) >= 20, PARTS
    for path in PARTS:
        name = os.path.basename(path)
        assert f'#include "resource_tracker/{name}"' in umbrella, name
        assert re.search(rf"^ \*   {re.escape(name)} ", umbrella, re.M), name


@pytest.mark.parametrize("part", [os.path.basename(p) for p in PARTS])
def test_each_part_compiles_alone(tmp_path, part):
    """A file that includes one part alone compiles: the part includes what it needs. An
    experimental part declares nothing without RT_EXPERIMENTAL_API."""
    if not shutil.which("cc"):
        pytest.skip("no cc")
    source = f'#include "resource_tracker/{part}"\ntypedef int not_empty;\n'  # ISO C: no empty unit
    for flags in ([], ["-DRT_EXPERIMENTAL_API"]):
        r = compile_c(tmp_path, source, *flags)
        assert r.returncode == 0, (flags, r.stderr)


# one call of each experimental part, and of the deprecated names, with the stable calls around it
EXPERIMENTAL_CALLS = {
    "pipeline.h": "(void)rt_pipeline_new(0, 0);",
    "schema.h": "(void)rt_schema_field_count();",
    "phase.h": "(void)rt_phase_listener_poll_fd(0);",
    "energy.h": "(void)rt_co2e_grams(1.0, 2.0);",
    "place.h": "(void)rt_place_detect(0, 0);",
    "ci_summary.h": "(void)rt_summary_write_workflow(0, 0, 0, 0, 0);",
    "jobview.h": "rt_job_view_free(0);",
    "helper.h": "(void)rt_helper_only_left();",
    "sqlite.h": "(void)rt_sqlite_calls();",
    "db.h": "(void)rt_db_is_url(0);",
}


@pytest.mark.parametrize("part", sorted(EXPERIMENTAL_CALLS))
def test_experimental_parts_need_the_macro(tmp_path, part):
    """Through the umbrella, an experimental call is undeclared without RT_EXPERIMENTAL_API (an
    implicit declaration, an error here) and declared with it; a stable call is declared either
    way."""
    if not shutil.which("cc"):
        pytest.skip("no cc")
    source = ('#include "resource_tracker.h"\n'
              "int main(void) {\n    (void)rt_version();\n    %s\n    return 0;\n}\n" % EXPERIMENTAL_CALLS[part])
    r = compile_c(tmp_path, source, "-Werror=implicit-function-declaration")
    assert r.returncode != 0 and "implicit declaration" in r.stderr, r.stderr
    r = compile_c(tmp_path, source, "-Werror=implicit-function-declaration", "-DRT_EXPERIMENTAL_API")
    assert r.returncode == 0, r.stderr


def test_no_deprecated_leaves_the_old_names_out(tmp_path):
    """RT_NO_DEPRECATED: the deprecated names are not declared, their replacements are."""
    if not shutil.which("cc"):
        pytest.skip("no cc")
    old = '#include "resource_tracker.h"\nint main(void) {\n    rt_stats_free(rt_stats_new());\n    return 0;\n}\n'
    new = ('#include "resource_tracker.h"\nint main(void) {\n    rt_stats *st = 0;\n'
           "    (void)rt_stats_new_with(0, &st);\n    rt_stats_free(st);\n    return 0;\n}\n")
    assert compile_c(tmp_path, old, "-DRT_NO_DEPRECATED_WARNINGS").returncode == 0
    r = compile_c(tmp_path, old, "-DRT_NO_DEPRECATED", "-Werror=implicit-function-declaration")
    assert r.returncode != 0 and "rt_stats_new" in r.stderr, r.stderr
    r = compile_c(tmp_path, new, "-DRT_NO_DEPRECATED", "-Werror=implicit-function-declaration")
    assert r.returncode == 0, r.stderr


class Cpu(ctypes.Structure):
    _fields_ = [("utilization_pct", ctypes.c_double), ("per_core_pct", ctypes.POINTER(ctypes.c_double)),
                ("core_count", ctypes.c_size_t)]


class Memory(ctypes.Structure):
    _fields_ = [("total_mib", ctypes.c_double)]


class Sample(ctypes.Structure):
    _fields_ = [("timestamp_secs", ctypes.c_double), ("interval_secs", ctypes.c_double),
                ("cpu", ctypes.POINTER(Cpu)), ("memory", ctypes.POINTER(Memory))]


class SamplerOptions(ctypes.Structure):
    """Only the fields up to pid: an older, shorter struct as a binding may declare it."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("proc_root", ctypes.c_char_p), ("sys_root", ctypes.c_char_p),
                ("log", ctypes.c_void_p), ("log_user", ctypes.c_void_p), ("pid", ctypes.c_int64)]


@pytest.mark.skipif(SANITIZED, reason="a sanitizer build's library does not load into Debian's uninstrumented python")
def test_ctypes_binding_samples_the_machine():
    lib = ctypes.CDLL(LIB)
    lib.rt_version_num.restype = ctypes.c_uint
    major, minor, patch = header_version()
    assert lib.rt_version_num() == (major << 16) | (minor << 8) | patch
    lib.rt_strerror.restype = ctypes.c_char_p
    assert lib.rt_strerror(8) == b"turned off by the options"
    lib.rt_sampler_new.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.rt_sampler_sample.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(Sample))]
    lib.rt_sampler_free.argtypes = [ctypes.c_void_p]
    # a shorter options struct than the library's: the newer fields take their defaults
    opts = SamplerOptions(struct_size=ctypes.sizeof(SamplerOptions), pid=os.getpid())
    s = ctypes.c_void_p()
    assert lib.rt_sampler_new(ctypes.byref(opts), ctypes.byref(s)) == 0
    smp = ctypes.POINTER(Sample)()
    for _ in range(2):
        assert lib.rt_sampler_sample(s, ctypes.byref(smp)) == 0
    cpu = smp.contents.cpu.contents
    assert cpu.core_count == os.cpu_count()
    assert smp.contents.memory.contents.total_mib > 0
    lib.rt_sampler_free(s)
    # a struct_size that cannot be: refused, nothing created
    opts.struct_size = 1
    assert lib.rt_sampler_new(ctypes.byref(opts), ctypes.byref(s)) == 2  # RT_ERR_INVALID


PC_PROGRAM = r'''#include <stdio.h>
#include "resource_tracker.h"
int main(void)
{
    printf("%s %zu %s\n", rt_version(), rt_job_field_count(), rt_job_field_name(0));
    return 0;
}
'''


@pytest.mark.parametrize("link", ["shared", "static"])
def test_installed_pkg_config(tmp_path, link):
    """An installed library is found and linked through pkg-config alone (resource-tracker.pc),
    shared and static, by a program outside the source tree."""
    if SANITIZED or not shutil.which("pkg-config"):
        pytest.skip("needs pkg-config and an uninstrumented build")
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", str(prefix)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    pcdirs = [str(p.parent) for p in prefix.rglob("resource-tracker.pc")]
    assert len(pcdirs) == 1, pcdirs
    env = dict(os.environ, PKG_CONFIG_PATH=pcdirs[0])
    args = ["pkg-config", "--cflags", "--libs", "resource-tracker"] + (["--static"] if link == "static" else [])
    flags = subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout.split()
    incs = [os.path.realpath(f[2:]) for f in flags if f.startswith("-I")]
    assert incs == [str(prefix / "include")], flags
    src = tmp_path / "app.c"
    src.write_text(PC_PROGRAM)
    exe = tmp_path / "app"
    if link == "static":  # the archive, not the shared library beside it
        flags = ["-l:libresource-tracker.a" if f == "-lresource-tracker" else f for f in flags]
    r = subprocess.run(["cc", "-Wall", "-Werror", str(src), "-o", str(exe)] + flags, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    needed = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True, check=True).stdout
    assert ("libresource-tracker.so" in needed) == (link == "shared"), needed
    run_env = dict(os.environ, LD_LIBRARY_PATH=str(next(prefix.rglob("libresource-tracker.so")).parent))
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=run_env, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"{'.'.join(map(str, header_version()))} 11 job_name\n"


# ---- 0.10: deprecated names beside their replacements ---------------------------------------

DEPRECATED = {  # old name: its replacement (the header's RT_DEPRECATED)
    "rt_job_cgroup_create": "rt_job_cgroup_new",
    "rt_job_cgroup_enter": "rt_job_cgroup_join",
    "rt_host_read": "rt_host_new",
    "rt_allocation_new": "rt_allocation_new_with",
    "rt_record_from_sample": "rt_record_from_sample_sized",
    "rt_reader_close": "rt_reader_free",
    "rt_stats_new": "rt_stats_new_with",
    "rt_format_summary": "rt_format_summary_json",
    "rt_report_new": "rt_report_new_with",
    "rt_stats_add": "rt_stats_add_sized",
    "rt_report_add": "rt_report_add_sized",
}


def exported_symbols():
    out = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True, check=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.split()}


def test_deprecated_names_stay_exported_beside_their_replacements():
    t = header_text()
    marked = dict(re.findall(r"RT_API [^;(]*?\b(rt_\w+)\([^;]*?\)\s*RT_DEPRECATED\(\"(rt_\w+)\"\);", t))
    assert marked == DEPRECATED  # a name deprecated (or undeprecated) is a decision: list it here
    exported = exported_symbols()
    for old, new in DEPRECATED.items():
        assert old in exported and new in exported, (old, new)
    # every fd output has its callback twin, X and X_cb
    for fd_call in re.findall(r"RT_API [^;(]*?\b(rt_\w+)\([^;]*\bint fd\b", t):
        assert fd_call + "_cb" in exported, fd_call


OLD_NAMES_PROGRAM = r'''#include <stdio.h>
#include "resource_tracker.h"
int main(void)
{
    rt_stats *st = rt_stats_new();
    rt_report *rep = rt_report_new();
    rt_allocation *a = rt_allocation_new();
    char buf[16384];
    size_t n = rt_format_summary(rt_stats_summary(st), NULL, NULL, buf, sizeof buf);
    printf("%d %d\n", st && rep && a, n > 0 && n < sizeof buf);
    rt_stats_free(st);
    rt_report_free(rep);
    rt_allocation_free(a);
    rt_reader_close(NULL);
    return 0;
}
'''


@pytest.mark.skipif(SANITIZED, reason="links the uninstrumented way")
def test_old_names_build_with_werror_when_silenced(tmp_path):
    """A program on the old names: -Werror fails on the deprecation, RT_NO_DEPRECATED_WARNINGS
    silences it, and the program links against the library and runs."""
    if not shutil.which("cc"):
        pytest.skip("no cc")
    src = tmp_path / "old.c"
    src.write_text(OLD_NAMES_PROGRAM)
    exe = tmp_path / "old"
    base = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(REPO, "include"), str(src),
            "-o", str(exe), "-L", BUILD_DIR, "-lresource-tracker"]
    r = subprocess.run(base, capture_output=True, text=True)
    assert r.returncode != 0 and "use rt_stats_new_with" in r.stderr, r.stderr
    r = subprocess.run(base + ["-DRT_NO_DEPRECATED_WARNINGS"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, LD_LIBRARY_PATH=BUILD_DIR))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "1 1\n"


@pytest.mark.skipif(SANITIZED, reason="a sanitizer build's library does not load into Debian's uninstrumented python")
def test_ctypes_callback_output_and_last_error():
    """A binding captures the writer's output through rt_write_fn (no file descriptor) and
    reads the last error message after a failing call."""
    lib = ctypes.CDLL(LIB)
    lib.rt_last_error_message.restype = ctypes.c_char_p
    WRITE_FN = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    got = []

    def write(_user, buf, n):
        got.append(ctypes.string_at(buf, n))
        return n

    fn = WRITE_FN(write)
    lib.rt_writer_new_cb.argtypes = [ctypes.c_int, WRITE_FN, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.POINTER(ctypes.c_void_p)]
    lib.rt_sampler_new.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.rt_sampler_sample.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.rt_writer_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.rt_writer_free.argtypes = [ctypes.c_void_p]
    lib.rt_sampler_free.argtypes = [ctypes.c_void_p]
    s, w, smp = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.rt_sampler_new(None, ctypes.byref(s)) == 0
    assert lib.rt_writer_new_cb(1, fn, None, None, ctypes.byref(w)) == 0  # CSV
    assert lib.rt_sampler_sample(s, ctypes.byref(smp)) == 0
    assert lib.rt_writer_write(w, smp) == 0
    lib.rt_writer_free(w)
    lib.rt_sampler_free(s)
    text = b"".join(got).decode()
    assert text.startswith("timestamp,") and text.count("\n") == 2, text[:200]
    lib.rt_reader_open.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    r = ctypes.c_void_p()
    assert lib.rt_reader_open(b"/nonexistent/run.jsonl", None, ctypes.byref(r)) == 5  # RT_ERR_NOT_FOUND
    assert lib.rt_last_error_message().startswith(b"/nonexistent/run.jsonl: cannot open")


class OldRecord(ctypes.Structure):
    """The first members of rt_record only: a record as a binding of an older header has it."""
    _fields_ = [("timestamp_secs", ctypes.c_double), ("interval_secs", ctypes.c_double),
                ("job_name", ctypes.c_char_p), ("cpu_cores", ctypes.c_double), ("cpu_count", ctypes.c_double)]


@pytest.mark.skipif(SANITIZED, reason="a sanitizer build's library does not load into Debian's uninstrumented python")
def test_ctypes_binding_hands_in_a_shorter_record():
    """rt_stats_add_sized takes a binding's shorter rt_record at its size: its figures count, the
    members it lacks are null (not whatever lies past it)."""
    import json
    lib = ctypes.CDLL(LIB)
    lib.rt_stats_new_with.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.rt_stats_add_sized.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.rt_stats_summary.argtypes = [ctypes.c_void_p]
    lib.rt_stats_summary.restype = ctypes.c_void_p
    lib.rt_format_summary_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    lib.rt_stats_free.argtypes = [ctypes.c_void_p]
    st = ctypes.c_void_p()
    assert lib.rt_stats_new_with(None, ctypes.byref(st)) == 0
    # each record at the start of a larger buffer whose bytes past it read as large numbers
    buf = ctypes.create_string_buffer(b"\x41" * 4096)
    for i in range(3):
        rec = OldRecord(1700000000.0 + i, 1.0, b"old", 1.5, 4.0)
        ctypes.memmove(buf, ctypes.byref(rec), ctypes.sizeof(rec))
        lib.rt_stats_add_sized(st, buf, ctypes.sizeof(OldRecord))
    out = ctypes.create_string_buffer(65536)
    n = ctypes.c_size_t()
    assert lib.rt_format_summary_json(lib.rt_stats_summary(st), None, None, out, len(out), ctypes.byref(n)) == 0
    lib.rt_stats_free(st)
    s = json.loads(out.value)
    assert s["samples"] == 3 and s["job_name"] == "old" and s["duration_secs"] == 3
    assert s["machine"]["cpu_count"] == 4 and s["machine"]["cores"]["peak"] == 1.5
    assert s["machine"]["memory_used_mib"]["peak"] is None and s["process"] is None


# ---- scripts/abi-check: abidiff against the release's ABI (abi/libresource-tracker.abi) ------

ABI_CHECK = os.path.join(REPO, "scripts", "abi-check")
BASELINE = os.path.join(REPO, "abi", "libresource-tracker.abi")
needs_abidiff = pytest.mark.skipif(not shutil.which("abidiff") or SANITIZED,
                                   reason="abidiff missing (abigail-tools: scripts/install-deps --test), or a "
                                          "sanitizer build (the gcc section judges the ABI)")


def baseline_text():
    with open(BASELINE) as f:
        return f.read()


def abi_check(tmp_path, text=None, constants=None):
    """scripts/abi-check on the built library against the committed baseline, or against TEXT
    (a doctored copy of it) and CONSTANTS (a doctored copy of abi/constants.txt): (exit
    status, output, abidiff's exit status)"""
    args = [ABI_CHECK, BUILD_DIR]
    if text is not None:
        doctored = tmp_path / "doctored.abi"
        doctored.write_text(text)
        args += ["--baseline", str(doctored)]
    if constants is not None:
        doctored = tmp_path / "constants.txt"
        doctored.write_text(constants)
        args += ["--constants", str(doctored)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    m = re.search(r"abidiff exit (\d+)", r.stdout)
    return r.returncode, r.stdout + r.stderr, int(m.group(1)) if m else None


def element(text, tag, name):
    """the text of the baseline's one <TAG name='NAME' ...>...</TAG>"""
    found = re.findall(rf"    <{tag} name='{name}'[^>]*[^/]>\n.*?\n    </{tag}>\n", text, re.S)
    assert len(found) == 1, (tag, name, len(found))
    return found[0]


def type_id(text, name):
    return re.search(rf"<type-decl name='{name}' size-in-bits='\d+' id='([^']+)'", text).group(1)


def drop_last_member(struct_text, by_bits):
    """a struct as it was before its last member came (the size BY_BITS smaller)"""
    last = re.findall(r"      <data-member [^>]*>\n.*?</data-member>\n", struct_text, re.S)[-1]
    size = int(re.search(r"size-in-bits='(\d+)'", struct_text).group(1))
    return struct_text.replace(last, "").replace(f"size-in-bits='{size}'", f"size-in-bits='{size - by_bits}'", 1)


@needs_abidiff
def test_abi_check_passes_the_built_library(tmp_path):
    rc, out, abidiff_rc = abi_check(tmp_path)
    assert rc == 0, out
    assert abidiff_rc in (0, 4), out  # the same, or grown since the release


@needs_abidiff
def test_abi_check_fails_a_removed_function(tmp_path):
    """the baseline declares rt_abi_gone, which the library lacks: abidiff's incompatible bit"""
    t = baseline_text()
    fn = element(t, "function-decl", "rt_strerror")
    sym = re.search(r"    <elf-symbol name='rt_strerror'[^\n]*\n", t).group(0)
    t = t.replace(sym, sym + sym.replace("rt_strerror", "rt_abi_gone"), 1)
    t = t.replace(fn, fn + fn.replace("rt_strerror", "rt_abi_gone"), 1)
    rc, out, abidiff_rc = abi_check(tmp_path, t)
    assert rc == 1 and abidiff_rc == 12, out
    assert "rt_abi_gone" in out and "bump MAJOR" in out and "scripts/abi-baseline" in out


@pytest.mark.parametrize("change", ["parameter type", "enum renumbered", "member inserted in the middle",
                                    "by-value struct grown"])
@needs_abidiff
def test_abi_check_fails_a_changed_abi(tmp_path, change):
    """changes abidiff flags as an ABI change (exit 4), not an incompatible one: the check fails them"""
    t = baseline_text()
    if change == "parameter type":  # rt_strerror took a double at the release
        fn = element(t, "function-decl", "rt_strerror")
        old = re.search(r"<parameter type-id='[^']+'", fn).group(0)
        t = t.replace(fn, fn.replace(old, f"<parameter type-id='{type_id(t, 'double')}'"))
        expect = "rt_strerror"
    elif change == "enum renumbered":
        t = t.replace("<enumerator name='RT_ERR_DISABLED' value='8'/>", "<enumerator name='RT_ERR_DISABLED' value='9'/>")
        expect = "RT_ERR_DISABLED"
    elif change == "member inserted in the middle":  # rt_sample had no interval_secs: the rest moved
        s = element(t, "class-decl", "rt_sample")
        gone = re.search(r"      <data-member [^>]*>\n\s*<var-decl name='interval_secs'.*?</data-member>\n", s, re.S)
        size = int(re.search(r"size-in-bits='(\d+)'", s).group(1))
        older = re.sub(r"layout-offset-in-bits='(\d+)'", lambda m: f"layout-offset-in-bits='{max(int(m.group(1)) - 64, 0)}'",
                       s.replace(gone.group(0), ""))
        t = t.replace(s, older.replace(f"size-in-bits='{size}'", f"size-in-bits='{size - 64}'", 1))
        expect = "offset changed"
    else:  # rt_usage_pct lives in arrays of rt_usage: its size is ABI even at the end
        s = element(t, "class-decl", "rt_usage_pct")
        t = t.replace(s, drop_last_member(s, 64))
        # and the arrays of it (cpu[3]) as long as 3 of the smaller one
        typedef = re.search(r"<typedef-decl name='rt_usage_pct' type-id='[^']+' id='([^']+)'", t).group(1)
        t = re.sub(rf"(<array-type-def dimensions='1' type-id='{typedef}' size-in-bits=')(\d+)'",
                   lambda m: f"{m.group(1)}{int(m.group(2)) - 3 * 64}'", t)
        expect = "struct rt_usage_pct changed, and its size is part of the ABI"
    rc, out, abidiff_rc = abi_check(tmp_path, t)
    assert rc == 1 and abidiff_rc == 4, out
    assert expect in out and "the ABI rules" in out, out


@pytest.mark.parametrize("growth", ["function added", "enum value added", "struct grown at its end",
                                    "options grown at their end"])
@needs_abidiff
def test_abi_check_allows_growth(tmp_path, growth):
    """what the rules allow: the release lacked a function, an enum value, a struct's last member"""
    t = baseline_text()
    if growth == "function added":
        t = re.sub(r"    <elf-symbol name='rt_version_num'[^\n]*\n", "", t)
        t = t.replace(element(t, "function-decl", "rt_version_num"), "")
    elif growth == "enum value added":
        t = t.replace("      <enumerator name='RT_ERR_DISABLED' value='8'/>\n", "")
    else:
        s = element(t, "class-decl", "rt_sample" if growth == "struct grown at its end" else "rt_sampler_options")
        t = t.replace(s, drop_last_member(s, 64))
    rc, out, abidiff_rc = abi_check(tmp_path, t)
    assert rc == 0, out
    if growth == "enum value added":
        # harmless to abidiff, which reports nothing of it (exit 0, or 4 when the library has grown
        # otherwise since the release: the functions added, reported as such)
        assert "RT_ERR_DISABLED" not in out and abidiff_rc in (0, 4), out
    else:
        assert abidiff_rc == 4, out


CONSTANTS = os.path.join(REPO, "abi", "constants.txt")


def constants_text():
    with open(CONSTANTS) as f:
        return f.read()


@pytest.mark.parametrize("change", ["enum passed as int renumbered", "enumerator gone", "moved to another enum",
                                    "macro changed"])
@needs_abidiff
def test_abi_check_fails_a_changed_constant(tmp_path, change):
    """the constants abidiff cannot see (enums that no exported signature reaches, macros): a
    value of the release changed or gone fails, naming it"""
    t = constants_text()
    line = {"enum passed as int renumbered": "RT_NOTE_OOM_KILLED rt_note_kind ",
            "enumerator gone": "RT_NEED_PSS rt_need_source ", "moved to another enum": "RT_FORMAT_CSV rt_format ",
            "macro changed": "RT_SAVE_GZIP macro "}[change]
    old = re.search(rf"^{re.escape(line)}(\S+)$", t, re.M)
    assert old, (line, t)
    name = line.split()[0]
    if change == "enumerator gone":  # the release had one the header lacks now
        t = t.replace(old.group(0), old.group(0).replace(name, name + "_GONE"))
        name += "_GONE"
    elif change == "moved to another enum":
        t = t.replace(old.group(0), old.group(0).replace("rt_format", "rt_log_level"))
    else:
        t = t.replace(old.group(0), f"{line}{int(old.group(1)) + 1}")
    rc, out, _ = abi_check(tmp_path, constants=t)
    assert rc == 1, out
    assert f"constant {name}" in out and "the ABI rules" in out, out


@needs_abidiff
def test_abi_check_constants_only_grew(tmp_path):
    """a constant the release lacked (an enumerator or a macro added since) is growth; the
    committed file holds the enums passed as int that abidiff's baseline lacks"""
    t = constants_text()
    for name in ("RT_COL_TIMESTAMP", "RT_NEED_PSS", "RT_NOTE_OOM_KILLED", "RT_SAVE_GZIP", "RT_NULL_I64"):
        assert re.search(rf"^{name} ", t, re.M), name
        assert f"'{name}'" not in baseline_text(), name  # abidiff alone cannot see them
    t = re.sub(r"^RT_NOTE_OOM_KILLED .*\n", "", t, flags=re.M)
    t = re.sub(r"^RT_NOTES_MAX .*\n", "", t, flags=re.M)
    rc, out, _ = abi_check(tmp_path, constants=t)
    assert rc == 0 and "2 new" in out, out
