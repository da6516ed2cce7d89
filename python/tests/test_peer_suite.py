"""The Python resource-tracker 0.5's own test suite and examples (SpareCores/resource-tracker at
71286ad, kept unchanged in ../shared/testdata/peers/, run from there, never copied) against this
package: every test that passes with that project's own package on this machine passes with
ours, except the tests listed below with their reason (they patch or read that project's private
streaming internals, or need the internet). Its examples/standalone.py and examples/benchmark.py
run unchanged to their end, and its examples/metaflow/*.py with real Metaflow (../shared/testdata/
metaflow) as far as they go offline. The peer's tests run in a child pytest from a temporary directory
(they write there), on loopback only: the Keeper is the local stand-in of conftest.py, the
Sentinel API and S3 a closed local port. Skips when ../shared/testdata/peers is not present."""
import os
import socket
import subprocess
import sys
import time

import pytest

import peer_junit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(REPO, "..", "shared", "testdata")
PEER = os.path.realpath(os.environ.get("RT_PEER_RESOURCE_TRACKER",
                                       os.path.join(SHARED, "peers", "resource-tracker-71286ad")))
METAFLOW = os.path.realpath(os.environ.get("RT_METAFLOW_SOURCE", os.path.join(SHARED, "metaflow")))

if not os.path.isdir(os.path.join(PEER, "tests")):
    pytest.skip(f"the Python tracker's suite is not present ({PEER})", allow_module_level=True)

# The whole suite at 71286ad: 154 tests in 12 files; test_streaming.py's 28 are not collected
# with ours (it imports the peer's StreamingManager at its top: see below).
PEER_TESTS = 154
NOT_COLLECTED = {"test_streaming.py": 28}

# Tests of the peer's Python streaming machinery (its StreamingManager: a thread that
# re-reads the CSV the tracker writes, gzips batches and PUTs them with its own SigV4). They
# patch resource_tracker.streaming.register_run / finish_run / put_bytes_with_sts /
# refresh_credentials and call or read its private members (_upload_batch, _read_all_csv,
# _csv_offset, _seq, _thread, _stop_event, _set_credentials, _parse_expires_at,
# _read_new_bytes; the tracker's _update_combined_csv, _combined_csv_*). Our tracker streams
# through the C library's stream (rt_stream_*), which has none of these: its behaviour is
# tested in tests/e2e/test_stream.py and python/tests/ against the local Sentinel stand-in.
STREAMING_INTERNALS = "patches or reads the peer's private Python streaming internals " \
                      "(module resource_tracker.streaming); ours streams through the C library"
EXEMPT = {f"test_streaming.py::{name}": STREAMING_INTERNALS for name in (
    "test_parse_expires_at_z_suffix", "test_parse_expires_at_offset_suffix",
    "test_parse_expires_at_z_and_offset_equal", "test_read_new_bytes_full_file",
    "test_read_new_bytes_incremental", "test_read_new_bytes_no_new_data",
    "test_read_new_bytes_missing_file", "test_start_calls_register_run",
    "test_start_raises_when_run_id_missing", "test_stop_short_run_sends_inline_csv",
    "test_stop_final_upload_failure_is_handled", "test_stop_data_prep_failure_sends_empty_csv",
    "test_upload_batch_uploads_gzipped_csv", "test_upload_batch_includes_header_in_subsequent_batches",
    "test_upload_batch_no_data_no_upload", "test_upload_batch_failed_does_not_advance_offset",
    "test_set_credentials_missing_expires_at", "test_upload_batch_csv_update_fn_is_called",
    "test_upload_batch_csv_update_fn_failure_continues", "test_upload_batch_no_csv_path_returns_early",
    "test_upload_batch_raises_when_no_header_line", "test_read_all_csv_calls_update_fn",
    "test_read_all_csv_update_fn_failure_continues", "test_read_all_csv_file_not_found_returns_empty",
    "test_streaming_loop_runs_normal_cycle", "test_streaming_loop_catches_upload_exception",
    "test_read_new_bytes_with_until_delimiter", "test_read_new_bytes_until_delimiter_not_found")}
EXEMPT.update({f"test_tracker_streaming.py::{name}": STREAMING_INTERNALS for name in (
    "test_start_registers_run_with_sentinel", "test_stop_calls_finish_run",
    "test_stop_forwards_failure_status", "test_short_run_sends_inline_csv",
    "test_update_combined_csv_appends_rows", "test_token_from_env_variable",
    "test_streaming_start_failure_degrades_gracefully", "test_streaming_stop_failure_degrades_gracefully",
    "test_stop_no_args_backward_compatible", "test_upload_batch_uses_csv_update_fn",
    "test_stop_with_uploads_sends_data_uris", "test_sentinel_result_property")})
# They check 0.5's wire format where the Sentinel API's contract (docs/contracts.md section 5,
# held by tests/stubs/sentinel_server.py) differs: tags as a JSON object (the contract: a list
# of "k=v"), the inline finish body gzipped (the contract: plain JSON, no Content-Encoding). Both
# patch resource_tracker.sentinel_api.urlopen to read the request.
WIRE = "asserts the Python tracker 0.5's request body where the Sentinel contract (docs/contracts.md §5) differs"
EXEMPT["test_sentinel_api.py::test_register_run_with_metadata"] = WIRE + ": tags as an object, not k=v strings"
EXEMPT["test_sentinel_api.py::test_finish_run_with_inline_csv"] = WIRE + ": a gzipped finish body, not plain JSON"
# Not required: fails with the peer's own package on this machine too (no internet).
# test_keeper_request asks the real Keeper for /healthcheck (the stand-in has none).
# (test_resource_tracker_report passes: our report, made by the C library, is in 0.5's words,
# its chart titles and lines and its status Pending, Finished, Failed: test_report_words.py.)
EXEMPT["test_keeper.py::test_keeper_request"] = "not required: asks the real Keeper (internet)"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(tmp, extra_path=()):
    """The child's environment: this package (and Metaflow when present) first, loopback
    URLs only, a `python` that is this interpreter (the peer's Metaflow test runs `python`)."""
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    shim = os.path.join(bin_dir, "python")
    if not os.path.exists(shim):
        os.symlink(sys.executable, shim)
    # a closed local port: nothing registers, so no upload credentials, so no S3 request
    dead = f"http://127.0.0.1:{_free_port()}"
    env = dict(os.environ)
    paths = [os.path.join(REPO, "python"), *extra_path]
    env.update({
        "PATH": bin_dir + os.pathsep + env.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONDONTWRITEBYTECODE": "1",
        "ARTIFACT_DIR": os.path.join(tmp, "artifacts"),
        "TRACKER_CLOUD_DISCOVERY": "0",
        "SENTINEL_API_URL": dead,
        "BROWSER": "true",
        "USERNAME": "ci",
        "METAFLOW_HOME": os.path.join(tmp, "mfhome"),
        "METAFLOW_DATASTORE_SYSROOT_LOCAL": tmp,
    })
    for name in ("SENTINEL_API_TOKEN", "AWS_ENDPOINT_URL_S3", "METAFLOW_PROFILE", "METAFLOW_CARD_LOCALROOT"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def peer_results(tmp_path_factory):
    """Runs the peer's whole suite once; {file::name[param]: (outcome, message)}."""
    tmp = str(tmp_path_factory.mktemp("peer"))
    extra = [METAFLOW] if os.path.isdir(os.path.join(METAFLOW, "metaflow")) else []
    junit = os.path.join(tmp, "junit.xml")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", PEER,
         "--continue-on-collection-errors",
         f"--junitxml={junit}", os.path.join(PEER, "tests")],
        cwd=tmp, env=_env(tmp, extra), capture_output=True, text=True, timeout=900)
    assert os.path.exists(junit), proc.stdout[-3000:] + proc.stderr[-3000:]
    return peer_junit.outcomes(junit), proc


def test_the_whole_suite_is_collected(peer_results):
    results, proc = peer_results
    # a module that fails to import shows as one "collection failure", its tests not at all
    broken = {n for n, (o, m) in results.items() if "::" not in n}
    assert broken == set(NOT_COLLECTED), (broken, proc.stdout[-3000:])
    tests = [n for n in results if "::" in n]
    assert len(tests) + sum(NOT_COLLECTED.values()) == PEER_TESTS, (len(tests), proc.stdout[-3000:])


def test_every_test_passes_but_the_exempt(peer_results):
    results, proc = peer_results
    failing = {n: m for n, (o, m) in results.items()
               if "::" in n and o != "passed" and n.split("[")[0] not in EXEMPT}
    assert not failing, "\n".join(f"{n}: {m}" for n, m in sorted(failing.items()))


def test_the_exempt_are_named_exactly(peer_results):
    # every exempt name is a test of the suite (a rename upstream cannot hide a test)
    results, _ = peer_results
    names = {n.split("[")[0] for n in results}
    listed = {n for n in EXEMPT if n.split("::")[0] not in NOT_COLLECTED}
    assert listed <= names, sorted(listed - names)
    # the uncollected file's tests are all exempt, each by name
    for f, count in NOT_COLLECTED.items():
        assert sum(n.startswith(f + "::") for n in EXEMPT) == count


def _run_example(tmp_path, name, *args):
    return subprocess.run([sys.executable, os.path.join(PEER, "examples", name), *args],
                          cwd=tmp_path, env=_env(str(tmp_path)), capture_output=True, text=True,
                          timeout=300)


def test_standalone_example_runs_to_its_end(tmp_path):
    proc = _run_example(tmp_path, "standalone.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert report.lstrip().lower().startswith("<!doctype html") and len(report) > 10_000


def test_benchmark_example_runs(tmp_path):
    proc = _run_example(tmp_path, "benchmark.py", "--iterations", "5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [l for l in proc.stdout.splitlines() if l.startswith(("PSUtil", "ProcFS", "Speedup"))]
    assert len(lines) == 3, proc.stdout


def _metaflow_or_skip():
    if not os.path.isdir(os.path.join(METAFLOW, "metaflow")):
        pytest.skip(f"Metaflow's source is not present ({METAFLOW})")
    try:
        import requests  # noqa: F401  (Metaflow imports it on every run)
    except ImportError:
        pytest.skip("Metaflow needs python3-requests (scripts/install-deps --test)")


def _run_flow(tmp_path, name):
    env = _env(str(tmp_path), [METAFLOW])
    return subprocess.run([sys.executable, os.path.join(PEER, "examples", "metaflow", name), "--no-pylint",
                           "run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600), env


def _cards(tmp_path, flow):
    root = tmp_path / ".metaflow" / "mf.cards" / flow
    return [p.read_text(encoding="utf-8") for p in root.rglob("tracked_resources-*.html")] if root.exists() else []


def test_metaflow_minimal_examples(tmp_path):
    _metaflow_or_skip()
    proc, _ = _run_flow(tmp_path, "1-minimal.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cards = _cards(tmp_path, "MinimalFlow")
    assert len(cards) == 1 and "Finished" in cards[0] and "@resources(" in cards[0]
    proc, _ = _run_flow(tmp_path, "1-minimal-failed.py")
    assert proc.returncode != 0
    cards = _cards(tmp_path, "MinimalFailedFlow")
    assert len(cards) == 1 and "Failed" in cards[0]


def _heavy_cpu_secs(n):
    """The CPU seconds of the example's heavy_computation(n) here (its loop, timed by the
    process's own clock: what it costs beside other work too)."""
    t = time.process_time()
    total = 0
    for i in range(int(n)):
        total += i * i
    return time.process_time() - t


def test_metaflow_multi_cpu_example_counts_the_pool(tmp_path):
    """2-multi-cpu.py's step maps over a Pool(6): the children's CPU is the step's. The step does
    heavy_computation(1e7) twice itself and its pool heavy_computation(2e7) six times: 14 units,
    12 of them the children's. Its CPU over the samples (utime + stime) must hold at least 8 units
    as this machine runs them (the main process alone holds 2, plus Metaflow's own start); a
    peak of cores would say nothing beside other work, which the pool shares the cores with."""
    _metaflow_or_skip()
    proc, env = _run_flow(tmp_path, "2-multi-cpu.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    reader = ("from metaflow import Flow\nfrom resource_tracker import ResourceTracker\n"
              "d = Flow('MultiCpuFlow').latest_run['do_heavy_computation'].task.data.resource_tracker_data\n"
              "t = ResourceTracker.from_snapshot(d['tracker'])\n"
              "m = t.process_metrics\n"
              "print(sum(m['utime']) + sum(m['stime']), max(m['children']))\n")
    out = subprocess.run([sys.executable, "-c", reader], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    cpu, children = map(float, out.stdout.split())
    unit = _heavy_cpu_secs(1e7)
    assert children >= 6 and cpu >= 8 * unit, (out.stdout, unit)


@pytest.mark.parametrize("name", ["3-gpu.py", "4-gbm.py"])
def test_metaflow_pypi_examples_stop_before_any_step(tmp_path, name):
    """They ask for @pypi packages (numba, xgboost): Metaflow refuses @pypi without
    --environment=pypi, which downloads; they stop there, as with the peer's own package."""
    _metaflow_or_skip()
    proc, _ = _run_flow(tmp_path, name)
    assert proc.returncode != 0
    assert "pypi" in (proc.stdout + proc.stderr).lower()
    assert not (tmp_path / ".metaflow" / "mf.cards").exists()
