"""The ctypes mirrors of the public header's structs against the C compiler's layout (sizeof
and every field's offset), struct_size handling, the library loader's order and error, handles
typed by kind (one kind where another is expected: ArgumentError), and NativeError carrying
the library's last error message."""
import os
import shutil
import subprocess
import sys
import textwrap
from ctypes import ArgumentError, byref, c_void_p, sizeof

import pytest

from resource_tracker import _native, _native_more

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

m = _native_more
n = _native
MIRRORS = {
    "rt_job": m.Job, "rt_host": m.Host, "rt_host_options": m.HostOptions, "rt_cloud": n.Cloud,
    "rt_cloud_options": n.CloudOptions, "rt_dist": m.Dist, "rt_need": m.Need, "rt_summary": m.Summary,
    "rt_recommendation": m.Recommendation, "rt_keeper_options": m.KeeperOptions,
    "rt_server": m.Server, "rt_report_info": m.ReportInfo, "rt_tracker_options": n.TrackerOptions,
}


def test_layouts_match_the_header(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    lines = []
    for cname, py in MIRRORS.items():
        lines.append(f'printf("{cname} size %zu\\n", sizeof({cname}));')
        for field, _ in py._fields_:
            lines.append(f'printf("{cname} {field} %zu\\n", offsetof({cname}, {field}));')
    src = tmp_path / "layout.c"
    src.write_text(textwrap.dedent("""\
        #include <stddef.h>
        #include <stdio.h>
        #include "resource_tracker.h"
        int main(void) {
        %s
        return 0;
        }
        """) % "\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", os.path.join(REPO, "include"), str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    mismatches = []
    for line in out.splitlines():
        cname, what, value = line.split()
        py = MIRRORS[cname]
        got = sizeof(py) if what == "size" else getattr(py, what).offset
        if got != int(value):
            mismatches.append(f"{cname}.{what}: C {value}, ctypes {got}")
    assert not mismatches, mismatches
    assert len(out.splitlines()) == sum(1 + len(p._fields_) for p in MIRRORS.values())


def test_struct_size_is_set():
    for py in (m.HostOptions, n.CloudOptions, m.KeeperOptions, n.TrackerOptions, m.Recommendation,
               m.Server, m.ReportInfo, m.Job):
        assert n.new(py).struct_size == sizeof(py)


def test_a_too_small_struct_size_is_refused():
    opts = n.new(n.TrackerOptions, pid=-1, interval_secs=1.0)
    opts.struct_size = 4
    handle, ref = n.out_handle(n.TrackerHandle)
    assert n.lib.rt_tracker_start(n.byref(opts), ref) == n.RT_ERR_INVALID
    assert not handle.value


def test_recommendation_is_filled_within_struct_size(tracker):
    # a 0.5 rt_recommendation ends at duration_secs: the library fills no more, so the
    # package's 0.6 defaults (null) stay, as they do with a 0.5 library (MIN_VERSION_NUM)
    rec = m.new_recommendation(oom_killed=7)
    rec.struct_size = m.Recommendation.oom_killed.offset
    assert n.lib.rt_tracker_recommend(tracker._native.tracker, n.byref(rec)) == n.RT_OK
    assert rec.cpu >= 1 and rec.runs == 1
    assert rec.oom_killed == 7 and rec.cpu_quota_cores != rec.cpu_quota_cores
    full = m.new_recommendation()
    assert n.lib.rt_tracker_recommend(tracker._native.tracker, n.byref(full)) == n.RT_OK
    assert (full.cpu, full.memory_mib) == (rec.cpu, rec.memory_mib) and full.oom_killed in (0, 1)


def test_version_and_columns():
    assert n.lib.rt_version_num() >= n.MIN_VERSION_NUM
    from resource_tracker import _frames
    names = {c[1] for c in _frames.PROCESS_COLUMNS + _frames.SYSTEM_COLUMNS} | {"process_alive"}
    for name in names:  # every column the package reads, by the library's own name
        assert n.lib.rt_column_name(n.column(name)).decode() == name
    assert n.column("timestamp") == 0
    with pytest.raises(KeyError):
        n.column("no_such_column")


def test_schema_lists_every_figure():
    fields = n.schema()
    by_name = {(f["struct"], f["name"]): f for f in fields}
    assert len(by_name) == len(fields)  # each once
    rss = by_name[("process", "rss_mib")]
    assert (rss["type"], rss["unit"], rss["since"]) == ("double", "MiB", "0.1")
    assert by_name[("process_part", "total_rss_mib")]["since"] == "0.8"
    assert by_name[("cgroup", "memory_unreclaimable_peak_mib")]["unit"] == "MiB"
    assert by_name[("net_iface", "interface")]["type"] == "string"
    assert by_name[("process", "alive")]["type"] == "flag"
    assert {f["struct"] for f in fields} == {"sample", "cpu", "memory", "net_iface", "disk", "mount", "gpu",
                                             "pressure", "cgroup", "process", "process_part", "host", "cloud",
                                             "energy", "energy_domain", "request", "gpu_use", "gpu_mig"}
    w = by_name[("gpu", "sm_active_pct")]  # 0.19: the GPU's work (NVML GPM), the tree's as gpu_*
    assert (w["type"], w["unit"], w["since"]) == ("double", "%", "0.19")
    assert by_name[("process", "gpu_tensor_active_pct")]["since"] == "0.19"
    assert by_name[("gpu_mig", "gpu_instance_id")]["type"] == "i64"
    j = by_name[("energy", "energy_joules")]  # 0.15
    assert (j["type"], j["unit"], j["since"]) == ("double", "J", "0.15")
    assert by_name[("energy_domain", "method")]["type"] == "string"
    q = by_name[("request", "memory_mib")]  # 0.16
    assert (q["type"], q["unit"], q["since"]) == ("double", "MiB", "0.16")
    g = by_name[("gpu_use", "vram_used_bytes")]  # 0.17: every process's use of the GPUs
    assert (g["type"], g["unit"], g["since"]) == ("u64", "bytes", "0.17")
    assert by_name[("cpu", "all_process_count")]["since"] == "0.17"
    assert by_name[("disk", "is_virtual")]["type"] == "flag"
    assert all(f["help"] for f in fields)


def _import_with(env_lib):
    env = dict(os.environ, RESOURCE_TRACKER_LIBRARY=env_lib)
    return subprocess.run([sys.executable, "-c", "import resource_tracker"], env=env,
                          capture_output=True, text=True)


def test_loader_honours_the_environment(tmp_path):
    # a named library that does not exist: the loader says what it tried, and falls back to
    # the system's only when that has one (none here, normally)
    r = _import_with(str(tmp_path / "missing.so"))
    if r.returncode == 0:
        pytest.skip("a system libresource-tracker.so.0 is installed")
    assert "ImportError" in r.stderr
    assert "missing.so" in r.stderr and "RESOURCE_TRACKER_LIBRARY" in r.stderr


def test_a_handle_of_another_kind_is_refused(tracker):
    from resource_tracker import _native_runs as nr

    stats, ref = n.out_handle(n.StatsHandle)
    assert nr.lib.rt_stats_new_with(None, ref) == n.RT_OK and stats
    try:
        h = tracker._native.tracker
        assert isinstance(h, n.TrackerHandle) and n.lib.rt_tracker_count(h) >= 3
        # a stats handle, the same address bare or as an int, to a tracker call: refused
        # before the library sees it
        for wrong in (stats, stats.value, c_void_p(stats.value)):
            with pytest.raises(ArgumentError, match="expected TrackerHandle"):
                n.lib.rt_tracker_count(wrong)
        with pytest.raises(ArgumentError):
            m.lib.rt_tracker_summary(stats)
        with pytest.raises(ArgumentError):
            nr.lib.rt_stats_summary(h)  # and the other way round
        with pytest.raises(ArgumentError):  # an out-pointer of another kind
            nr.lib.rt_stats_new_with(None, byref(n.TrackerHandle()))
        with pytest.raises(ArgumentError):
            nr.lib.rt_run_read(b"run.jsonl", None, byref(h), 1, None, None)
        with pytest.raises(ArgumentError):
            n.lib.rt_cloud_free(h)
        assert nr.lib.rt_stats_summary(stats).contents.samples == 0  # its own kind goes through
        n.lib.rt_tracker_free(None)  # NULL is allowed where the header allows it
    finally:
        nr.lib.rt_stats_free(stats)


def test_native_error_carries_the_last_error(tmp_path):
    if not hasattr(n.lib.rt_last_error_message, "argtypes"):
        pytest.skip("a library older than 0.10 (no rt_last_error_message)")
    handle, ref = n.out_handle(n.TrackerHandle)
    missing = str(tmp_path / "missing.json")
    err = n.lib.rt_tracker_load(missing.encode(), n.LOG_FN(), None, ref)
    e = n.NativeError("rt_tracker_load", err)
    assert err == n.RT_ERR_NOT_FOUND and not handle
    assert e.code == err and missing in e.message
    assert str(e) == f"rt_tracker_load: {n.lib.rt_strerror(err).decode()} ({e.message})"
    broken = tmp_path / "broken.json"
    broken.write_text('{"metadata": {"version": 1}, "columns": [')
    err = n.lib.rt_tracker_load(str(broken).encode(), n.LOG_FN(), None, ref)
    e = n.NativeError("rt_tracker_load", err, "a detail")
    assert err == n.RT_ERR_PARSE and str(broken) in e.message and "not JSON" in e.message
    assert str(e).endswith(f"(a detail; {e.message})")
    # a call whose contract sets no last error: the text as before, no message of an earlier call
    e = n.NativeError("rt_tracker_start", n.RT_ERR_INVALID)
    assert e.message is None and str(e) == f"rt_tracker_start: {n.lib.rt_strerror(n.RT_ERR_INVALID).decode()}"
    e = n.NativeError("rt_tracker_load", n.RT_ERR_PARSE, message=None)
    assert e.message is None and "(" not in str(e)


def test_native_error_without_rt_last_error_message(monkeypatch, tmp_path):
    # a library older than 0.10: no message, the text as it was
    monkeypatch.setattr(n.lib, "rt_last_error_message", n.missing_function("rt_last_error_message"))
    handle, ref = n.out_handle(n.TrackerHandle)
    err = n.lib.rt_tracker_load(str(tmp_path / "missing.json").encode(), n.LOG_FN(), None, ref)
    e = n.NativeError("rt_tracker_load", err, "detail")
    assert e.message is None and str(e) == f"rt_tracker_load: {n.lib.rt_strerror(err).decode()} (detail)"
