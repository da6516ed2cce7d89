"""The tracker's Prometheus exports against the real servers on 127.0.0.1: Debian's `prometheus`
(2.42) scraping `--prometheus` (OpenMetrics, which it negotiates) and queried through its HTTP
API, `prometheus-node-exporter` reading `--prometheus-textfile`, and `promtool check metrics`
linting the text format. The figures must be the tracker's own (its JSON samples) and the
kernel's (the job's rusage)."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from conftest import BUILD_DIR, TIMEOUT_SCALE, TRACKER, tracker_env

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"

# The job: waits for GO (so that slow starts of the servers or of the tracker never eat into
# it), burns BURN seconds of CPU, idles IDLE seconds (scrapes see the final figure), writes
# its own rusage (user+system) to OUT, and exits with STATUS.
JOB = r"""
import os, resource, sys, time
go, out, status, burn, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
deadline = time.monotonic() + 120
while go != "-" and not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.02)
t = time.process_time()
while time.process_time() - t < burn:
    pass
time.sleep(idle)
ru = resource.getrusage(resource.RUSAGE_SELF)
with open(out, "w") as f:
    f.write(repr(ru.ru_utime + ru.ru_stime))
sys.exit(status)
"""

# Two GPUs through the fake NVML library the build makes (tests/stubs/fake_nvml.c), so that
# the GPU families go through Prometheus' parser and promtool too.
FAKE_NVML = os.path.join(BUILD_DIR, "libfake-nvml.so")
GPUS = ("gpu uuid=GPU-11111111-2222-3333-4444-555555555555 name=NVIDIA_A100-SXM4-80GB bus=00000000:3B:00.0 "
        "util=40 mem_total=85899345920 mem_used=1073741824 temp=55 power_mw=210500 clock=1410 cores=6912 cc=8.0\n"
        "gpu uuid=GPU-22222222 name=NVIDIA_H100_80GB_HBM3 bus=00000000:86:00.0 util=0 mem_total=85899345920 "
        "mem_used=0 temp=31 power_mw=70000 clock=345 cores=16896 cc=9.0\n")

# Printed with 3 decimals in the JSON samples, with 6 in the exports: equal as printed means
# within half of the JSON's last digit.
AS_PRINTED = 0.0005 + 1e-9


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on now (for the servers that need one named)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(p):
    """Stops a server this test started, by its PID: SIGTERM, then SIGKILL."""
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def http_get(url, accept=None, timeout=5):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=timeout * TIMEOUT_SCALE) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def wait_for(what, fn, timeout=30, proc=None):
    """Calls fn until it returns something true (returned); fails after timeout seconds, or
    when proc (a server we depend on) died."""
    deadline = time.monotonic() + timeout * TIMEOUT_SCALE
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"{what}: the server exited ({proc.returncode}): {read_log(proc)}")
        try:
            v = fn()
            if v:
                return v
        except (OSError, ValueError, KeyError) as e:
            last = e
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what} (last error: {last})")


def read_log(p):
    path = getattr(p, "log_path", None)
    if path and os.path.exists(path):
        with open(path, errors="replace") as f:
            return f.read()[-4000:]
    return ""


def start_server(args, log_path, cwd=None):
    with open(log_path, "wb") as log:
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    p.log_path = log_path
    return p


def tracker_port(t):
    """Reads the tracker's stderr up to the line naming the port it serves on (--prometheus
    with port 0)."""
    deadline = time.monotonic() + 30 * TIMEOUT_SCALE
    seen = []
    while time.monotonic() < deadline:
        line = t.stderr.readline()
        if not line:
            pytest.fail(f"tracker ended before serving (rc={t.wait()}): {''.join(seen)}")
        seen.append(line)
        m = re.search(r"serving Prometheus metrics at http://127\.0\.0\.1:(\d+)/metrics", line)
        if m:
            return int(m.group(1))
    pytest.fail("tracker never said its port: " + "".join(seen))


def start_tracker(tmp_path, export_args, status=0, burn=1.5, idle=2.0, gate=True, gpus=False):
    """The tracker wrapping JOB, sampling every 0.2 s, its samples in tmp_path/samples.json;
    with gpus, the two fake GPUs."""
    go = str(tmp_path / "go") if gate else "-"
    env = tracker_env()
    if gpus:
        (tmp_path / "nvml.cfg").write_text(GPUS)
        env = tracker_env(TRACKER_NVML_LIBRARY=FAKE_NVML, FAKE_NVML_CONFIG=str(tmp_path / "nvml.cfg"))
    args = [TRACKER, "-i", "0.2", "-o", str(tmp_path / "samples.json"), "--job-name", "e2e-prom", "--tag",
            "team=ml", "--tag", "run-id=7"] + list(export_args) + [
            "--", sys.executable, "-c", JOB, go, str(tmp_path / "rusage"), str(status), str(burn), str(idle)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)


def finish(t):
    """Waits for the tracker (it exits with the job); returns its status and the rest of stderr."""
    err = t.stderr.read()
    return t.wait(timeout=60 * TIMEOUT_SCALE), err


def samples(tmp_path):
    with open(tmp_path / "samples.json") as f:
        return [json.loads(l) for l in f if l.strip()]


def kernel_cpu(tmp_path):
    with open(tmp_path / "rusage") as f:
        return float(f.read())


def parse_exposition(text):
    """{(name, frozenset(labels.items())): value} of a text-format body (our label values have
    no escapes in these tests)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        assert m, f"not a series line: {line!r}"
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return out


def one(series, name, **labels):
    """The value of the only series called name whose labels include labels."""
    found = [v for (n, ls), v in series.items() if n == name and set(labels.items()) <= set(ls)]
    assert len(found) == 1, f"{name}{labels}: {len(found)} series"
    return found[0]


# ---- (1) the real Prometheus scraping --prometheus ------------------------------------------

class Prom:
    """A Prometheus server started by the test, scraping one target every 0.25 s."""

    def __init__(self, tmp_path, target_port):
        self.port = free_port()
        interval = "250ms" if TIMEOUT_SCALE == 1 else "500ms"
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text("global:\n  scrape_interval: 1m\n"
                       "scrape_configs:\n"
                       "  - job_name: tracker\n"
                       f"    scrape_interval: {interval}\n"
                       f"    scrape_timeout: {interval}\n"
                       "    static_configs:\n"
                       f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.p = start_server([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                               f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                              str(tmp_path / "prometheus.log"), cwd=str(tmp_path))
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for("prometheus ready", lambda: http_get(self.base + "/-/ready")[0] == 200, proc=self.p)

    def query(self, q, at=None):
        params = {"query": q}
        if at is not None:
            params["time"] = f"{at:.3f}"
        _, _, body = http_get(self.base + "/api/v1/query?" + urllib.parse.urlencode(params))
        r = json.loads(body)
        assert r["status"] == "success", r
        return r["data"]["result"]

    def raw(self, name):
        """Every sample Prometheus stored of the series name (one series expected): a list
        of (scrape time, value as printed by Prometheus) and its labels."""
        res = self.query(f"{name}[10m]")
        assert len(res) == 1, f"{name}: {res}"
        return [(float(t), v) for t, v in res[0]["values"]], res[0]["metric"]


@pytest.mark.skipif(not os.path.exists(PROMETHEUS), reason=f"{PROMETHEUS} absent (Debian package prometheus)")
def test_real_prometheus_stores_the_trackers_figures(tmp_path):
    # scraped every 0.5 s on a slow build, a job idling 2 s left exactly the 8 scrapes counted
    # below: it idles twice as long there
    t = start_tracker(tmp_path, ["--prometheus", "127.0.0.1:0"], gpus=True, idle=2.0 if TIMEOUT_SCALE == 1 else 4.0)
    prom = None
    try:
        port = tracker_port(t)
        prom = Prom(tmp_path, port)
        # Prometheus scrapes the tracker (OpenMetrics negotiated) before the job starts its work
        wait_for("a successful scrape", lambda: [r for r in prom.query('up{job="tracker"}') if r["value"][1] == "1"],
                 proc=prom.p)
        (tmp_path / "go").touch()
        # while the job runs: its CPU seconds climb in Prometheus, with the job's labels
        live = wait_for("the job's CPU in Prometheus", lambda: [
            r for r in prom.query("resource_tracker_process_cpu_seconds_total > 1.2")], proc=prom.p)
        assert t.poll() is None, "the job should still run"
        labels = live[0]["metric"]
        assert labels["job_name"] == "e2e-prom" and labels["tag_team"] == "ml" and labels["tag_run_id"] == "7"
        assert labels["job"] == "tracker" and labels["instance"] == f"127.0.0.1:{port}"
        alive = prom.query("resource_tracker_process_alive")
        assert [r["value"][1] for r in alive] == ["1"]
        cores = prom.query("resource_tracker_cpu_cores")
        assert [r["value"][1] for r in cores] == [str(os.cpu_count())]
        with open("/proc/meminfo") as f:
            mem_total = int(re.search(r"MemTotal:\s+(\d+) kB", f.read()).group(1)) * 1024
        assert [r["value"][1] for r in prom.query("resource_tracker_memory_total_bytes")] == [str(mem_total)]
        info = prom.query("resource_tracker_info")
        assert len(info) == 1 and info[0]["metric"]["version"] and info[0]["value"][1] == "1"
        assert info[0]["metric"]["job_name"] == "e2e-prom"
        # the fake GPUs, labelled by their UUIDs, through OpenMetrics' info type and gauges
        a100, h100 = "GPU-11111111-2222-3333-4444-555555555555", "GPU-22222222"
        gpu_info = {r["metric"]["gpu"]: r["metric"]["name"] for r in prom.query("resource_tracker_gpu_info")}
        assert gpu_info == {a100: "NVIDIA A100-SXM4-80GB", h100: "NVIDIA H100 80GB HBM3"}
        for name, want in (("resource_tracker_gpu_utilization_ratio", {a100: "0.4", h100: "0"}),
                           ("resource_tracker_gpu_memory_total_bytes", {a100: "85899345920", h100: "85899345920"}),
                           ("resource_tracker_gpu_memory_used_bytes", {a100: "1073741824", h100: "0"}),
                           ("resource_tracker_gpu_temperature_celsius", {a100: "55", h100: "31"}),
                           ("resource_tracker_gpu_power_watts", {a100: "210.5", h100: "70"})):
            assert {r["metric"]["gpu"]: r["value"][1] for r in prom.query(name)} == want, name
        # nothing Prometheus refused: every scrape parsed, no sample dropped
        targets = json.loads(http_get(prom.base + "/api/v1/targets")[2])["data"]["activeTargets"]
        assert targets and targets[0]["health"] == "up" and targets[0]["lastError"] == "", targets
        scraped = prom.query('scrape_samples_scraped{job="tracker"}')
        assert float(scraped[0]["value"][1]) > 60
        rc, err = finish(t)
        assert rc == 0, err
        kernel = kernel_cpu(tmp_path)
        lines = samples(tmp_path)
        by_ts = {l["timestamp_secs"]: l for l in lines}
        # every value Prometheus stored is the tracker's figure at the sample it came from
        cpu, cpu_labels = prom.raw("resource_tracker_process_cpu_seconds_total")
        stamps = dict(prom.raw("resource_tracker_sample_timestamp_seconds")[0])
        assert cpu_labels["job_name"] == "e2e-prom" and cpu_labels["tag_team"] == "ml"
        matched = 0
        for at, v in cpu:
            sample_ts = float(stamps[at])
            assert sample_ts in by_ts, f"Prometheus holds a sample the tracker never wrote: {sample_ts}"
            want = by_ts[sample_ts]["process"]["cpu_secs_total"]
            assert abs(float(v) - want) <= AS_PRINTED, (at, v, want)
            matched += 1
        assert matched >= 8, f"only {matched} scrapes stored"
        values = [float(v) for _, v in cpu]
        assert values == sorted(values), "a counter went back"
        # and the kernel's figure: the last one stored (the job idled 2 s after its work)
        assert abs(values[-1] - kernel) <= 0.1, (values[-1], kernel)
        assert abs(lines[-1]["process"]["cpu_secs_total"] - kernel) <= 0.1
        # other series stored the same way: the tree's RSS and the machine's busy cores, and
        # the tree's parts (a series per part)
        for name, key in (("resource_tracker_process_rss_bytes", ("process", "rss_mib")),
                          ("resource_tracker_cpu_usage_cores", ("cpu", "utilization_pct")),
                          ('resource_tracker_process_part_rss_bytes{part="combined"}',
                           ("process", "combined", "total_rss_mib")),
                          ('resource_tracker_process_part_private_rss_bytes{part="main"}',
                           ("process", "main", "private_rss_mib")),
                          ('resource_tracker_process_part_cpu_usage_cores{part="main"}',
                           ("process", "main", "cores_used")),
                          ('resource_tracker_process_part_threads{part="descendants"}',
                           ("process", "descendants", "thread_count"))):
            stored, labels = prom.raw(name)
            assert labels["job_name"] == "e2e-prom", labels
            assert len(stored) >= 8, (name, stored)
            for at, v in stored:
                want = by_ts[float(stamps[at])]
                for k in key:
                    want = want[k]
                assert want is not None, (name, at)
                scale = 1048576 if key[-1].endswith("_mib") else 1
                assert abs(float(v) - want * scale) <= 0.0005 * scale + 1e-9, (name, v, want)
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
        if prom:
            stop(prom.p)


# ---- (2) node_exporter reading --prometheus-textfile ------------------------------------------

@pytest.mark.skipif(not os.path.exists(NODE_EXPORTER),
                    reason=f"{NODE_EXPORTER} absent (Debian package prometheus-node-exporter)")
def test_node_exporter_reads_the_textfile(tmp_path):
    tdir = tmp_path / "textfile"
    tdir.mkdir()
    port = free_port()
    ne = start_server([NODE_EXPORTER, "--collector.disable-defaults", "--collector.textfile",
                       f"--collector.textfile.directory={tdir}", f"--web.listen-address=127.0.0.1:{port}"],
                      str(tmp_path / "node_exporter.log"))
    t = None
    url = f"http://127.0.0.1:{port}/metrics"
    prom_file = str(tdir / "resource_tracker_e2e-prom.prom")
    try:
        wait_for("node_exporter up", lambda: http_get(url)[0] == 200, proc=ne)
        t = start_tracker(tmp_path, ["--prometheus-textfile", str(tdir)], status=3, gate=False)
        # during the job: the first write (after the first sample) says it runs
        running = wait_for("the job's textfile", lambda: (lambda s: s if any(
            n == "resource_tracker_job_running" for n, _ in s) else None)(parse_exposition(http_get(url)[2])), proc=ne)
        assert t.poll() is None, "the job should still run"
        job = {"job_name": "e2e-prom", "tag_team": "ml", "tag_run_id": "7"}
        assert one(running, "resource_tracker_job_running", **job) == 1
        assert not [n for n, _ in running if n in ("resource_tracker_job_exit_status",
                                                   "resource_tracker_job_end_time_seconds")]
        assert one(running, "node_textfile_scrape_error") == 0
        rc, err = finish(t)
        assert rc == 3, err
        after = parse_exposition(http_get(url)[2])
        assert one(after, "node_textfile_scrape_error") == 0
        mtimes = [dict(ls)["file"] for n, ls in after if n == "node_textfile_mtime_seconds"]
        assert [f for f in mtimes if f.endswith(os.path.basename(prom_file))], mtimes
        assert one(after, "resource_tracker_job_running", **job) == 0
        assert one(after, "resource_tracker_job_exit_status", **job) == 3
        lines = samples(tmp_path)
        cpu = one(after, "resource_tracker_job_cpu_seconds", **job)
        assert abs(cpu - lines[-1]["process"]["cpu_secs_total"]) <= AS_PRINTED
        assert abs(cpu - kernel_cpu(tmp_path)) <= 0.1
        assert one(after, "resource_tracker_job_samples", **job) == len(lines)
        start = one(after, "resource_tracker_job_start_time_seconds", **job)
        end = one(after, "resource_tracker_job_end_time_seconds", **job)
        duration = one(after, "resource_tracker_job_duration_seconds", **job)
        assert start <= lines[0]["timestamp_secs"] + 0.001 and end >= lines[-1]["timestamp_secs"] - 0.001
        assert abs((end - start) - duration) <= 0.002
        peak = one(after, "resource_tracker_job_memory_peak_bytes", **job)
        assert peak > 1 << 20  # a python interpreter
        # 0.15: the tree's energy with its method, the last sample's that had one (this VM: estimated)
        had = [s["energy"] for s in lines if (s.get("energy") or {}).get("process_method")]
        assert had, "no sample had the tree's energy"
        energy = one(after, "resource_tracker_job_energy_joules", method=had[-1]["process_method"], **job)
        assert abs(energy - had[-1]["process_energy_joules_total"]) <= 1e-6 + 1e-9 * energy
        assert sorted(os.listdir(tdir)) == ["resource_tracker_e2e-prom.prom"]  # no temporary file left
    finally:
        if t is not None and t.poll() is None:
            t.kill()
            t.wait()
        stop(ne)


# ---- (3) promtool lints the text format of the real tool ---------------------------------------

@pytest.mark.skipif(not os.path.exists(PROMTOOL), reason=f"{PROMTOOL} absent (Debian package prometheus)")
def test_promtool_lints_the_text_format(tmp_path):
    t = start_tracker(tmp_path, ["--prometheus", "127.0.0.1:0"], burn=0.3, idle=2.0, gate=False, gpus=True)
    try:
        port = tracker_port(t)
        url = f"http://127.0.0.1:{port}/metrics"
        text = wait_for("the tree's figures", lambda: (lambda b: b if "resource_tracker_process_alive" in b else None)(
            http_get(url, accept="text/plain")[2]))
        _, ctype, om = http_get(url, accept="application/openmetrics-text; version=1.0.0")
        assert t.poll() is None, "the job should still run"
        r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True,
                           timeout=30 * TIMEOUT_SCALE)
        assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), (r.stdout, r.stderr, text[:3000])
        assert "# EOF" not in text
        assert om.endswith("# EOF\n") and ctype.startswith("application/openmetrics-text")
        assert "# TYPE resource_tracker info\n" in om
        assert "# TYPE resource_tracker_process_cpu_seconds counter\n" in om
        assert "# TYPE resource_tracker_process_cpu_seconds_total counter\n" in text
        series = parse_exposition(text)
        assert one(series, "resource_tracker_info", job_name="e2e-prom", tag_team="ml", tag_run_id="7") == 1
        names = {n for n, _ in series}
        for fam in ("resource_tracker_cpu_usage_cores", "resource_tracker_memory_bytes",
                    "resource_tracker_process_cpu_seconds_total", "resource_tracker_process_rss_bytes",
                    "resource_tracker_sample_timestamp_seconds", "resource_tracker_gpu_info",
                    "resource_tracker_gpu_utilization_ratio"):
            assert fam in names, fam
        rc, err = finish(t)
        assert rc == 0, err
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
