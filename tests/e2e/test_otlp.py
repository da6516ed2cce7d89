"""OTLP/HTTP push (--otlp, OTEL_EXPORTER_OTLP_*) against the strict receiver stand-in
(tests/stubs/otlp_receiver.py, which answers 400 to anything off the OTLP JSON schema): every sample
the tool wrote arrives exactly once as data points, process.cpu.time ends at the tool's
cpu_secs_total and the kernel's count, and the receiver's failure modes (503 with Retry-After, a
hang, a dead port) lose nothing that could be kept, hold the tool no longer than its finish
timeout, and leave the job's status untouched."""
import json
import os
import subprocess
import time

import pytest

from conftest import REPO, TIMEOUT_SCALE, TRACKER, tracker_env
from test_recommend import closed_port_url

RECEIVER = os.path.join(REPO, "tests", "stubs", "otlp_receiver.py")
PY = "/usr/bin/python3"
SECRET = "otlp-s3cret-value"

# A CPU-bound job that runs argv[1] seconds, then writes the kernel's count of its CPU time (its
# own rusage and its reaped children's) to argv[2] and exits with argv[3].
BUSY = r"""
import resource, sys, time
end = time.monotonic() + float(sys.argv[1])
x = 0
while time.monotonic() < end:
    x += 1
a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[2], "w") as f:
    f.write(str(a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime))
sys.exit(int(sys.argv[3]))
"""


class Receiver:
    """The stand-in on a free port, stopped by its own pid."""

    def __init__(self, tmp_path, *flags):
        self.log = tmp_path / "otlp-requests.jsonl"
        self.p = subprocess.Popen([PY, RECEIVER, "--log", str(self.log), *flags], stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}"

    def entries(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def accepted(self):
        return [e for e in self.entries() if e["status"] == 200]

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        self.p.stdout.close()


@pytest.fixture
def receiver(tmp_path):
    started = []

    def start(*flags):
        r = Receiver(tmp_path, *flags)
        started.append(r)
        return r

    yield start
    for r in started:
        r.stop()


def otlp_env(**extra):
    env = tracker_env(**extra)
    for k in list(env):
        if k.startswith("OTEL_") and k not in extra:
            del env[k]
    return env


def track(tmp_path, env, flags, secs=2.0, status=0):
    """Runs the busy job under the tool (samples every 0.2 s to a file). Returns (the completed
    process, the samples, the kernel's CPU seconds of the job)."""
    out = tmp_path / "samples.jsonl"
    ru = tmp_path / "rusage"
    r = subprocess.run([TRACKER, "-i", "0.2", "-o", str(out), *flags, "--", PY, "-c", BUSY, str(secs), str(ru),
                        str(status)], capture_output=True, text=True, env=env, timeout=60 * TIMEOUT_SCALE)
    samples = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return r, samples, float(ru.read_text())


def otlp_lines(stderr):
    return [line for line in stderr.splitlines() if "otlp" in line]


def metrics_of(entry):
    """{name: metric} of one accepted request (one resource, one scope: what the tool sends)."""
    rms = entry["json"]["resourceMetrics"]
    assert len(rms) == 1
    sms = rms[0]["scopeMetrics"]
    assert len(sms) == 1 and sms[0]["scope"]["name"] == "resource-tracker"
    return {m["name"]: m for m in sms[0]["metrics"]}


def resource_of(entry):
    out = {}
    for kv in entry["json"]["resourceMetrics"][0]["resource"]["attributes"]:
        (kind, v), = kv["value"].items()
        out[kv["key"]] = int(v) if kind == "intValue" else v
    return out


def points(entries, name):
    """Every data point of metric name over the requests, in arrival order."""
    pts = []
    for e in entries:
        m = metrics_of(e).get(name)
        if m:
            pts += (m.get("sum") or m.get("gauge"))["dataPoints"]
    return pts


def sample_ns(s):
    return round(s["timestamp_secs"] * 1000) * 1000000


def check_every_sample_once(entries, samples):
    """Each sample written is one system.memory.limit point (timeUnixNano its timestamp), once."""
    got = sorted(int(p["timeUnixNano"]) for p in points(entries, "system.memory.limit"))
    want = sorted(sample_ns(s) for s in samples)
    assert len(want) >= 3
    assert got == want, f"delivered {len(got)} points for {len(want)} samples"


def check_counters_monotonic(entries):
    """Every monotonic sum, series by series (its attributes), never goes back across requests."""
    series = {}
    for e in entries:
        for name, m in metrics_of(e).items():
            if not (m.get("sum") or {}).get("isMonotonic"):
                continue
            for p in m["sum"]["dataPoints"]:
                key = (name, json.dumps(p.get("attributes", []), sort_keys=True))
                value = p["asDouble"] if "asDouble" in p else int(p["asInt"])
                series.setdefault(key, []).append((int(p["timeUnixNano"]), value))
    assert any(k[0] == "process.cpu.time" for k in series)
    for key, pts in series.items():
        values = [v for _, v in sorted(pts)]
        assert values == sorted(values), f"{key} went back: {values}"


def check_cpu_time(entries, samples, kernel):
    pts = points(entries, "process.cpu.time")
    last = max(pts, key=lambda p: int(p["timeUnixNano"]))
    assert int(last["timeUnixNano"]) == sample_ns(samples[-1])
    value = last["asDouble"]
    assert abs(value - samples[-1]["process"]["cpu_secs_total"]) <= 0.0006  # the file has 3 decimals
    assert abs(value - kernel) <= 0.1, (value, kernel)
    starts = {p["startTimeUnixNano"] for p in pts}
    assert len(starts) == 1  # one cumulative series from tracking's start
    assert int(starts.pop()) <= int(pts[0]["timeUnixNano"])


def attrs_of(p):
    return {a["key"]: a["value"]["stringValue"] for a in p.get("attributes", [])}


def check_energy(entries, samples):
    """hw.energy: a point per domain and sample, its method and source as attributes, equal to the
    sample's energy_joules_total (this VM: the estimated cpu domain); hw.host.energy and the tree's
    resource_tracker.process.energy carry the method too."""
    by_ns = {sample_ns(s): s for s in samples if s.get("energy")}
    assert by_ns, "no sample had energy"
    pts = points(entries, "hw.energy")
    assert pts
    for p in pts:
        a = attrs_of(p)
        s = by_ns[int(p["timeUnixNano"])]
        (dom,) = [d for d in s["energy"]["domain"] if d["name"] == a["hw.name"]]
        assert a["resource_tracker.energy.method"] == dom["method"] in ("measured", "sampled", "estimated")
        assert a["resource_tracker.energy.source"] == dom["source"]
        assert a["hw.type"] in ("cpu", "memory", "gpu", "enclosure")
        assert abs(p["asDouble"] - dom["energy_joules_total"]) <= 1e-6 + 1e-9 * dom["energy_joules_total"]
    assert {int(p["timeUnixNano"]) for p in pts} == {n for n, s in by_ns.items() if s["energy"]["domain"]}
    for name, key, method in (("hw.host.energy", "energy_joules_total", "method"),
                              ("resource_tracker.process.energy", "process_energy_joules_total", "process_method")):
        got = points(entries, name)
        assert got, name
        for p in got:
            e = by_ns[int(p["timeUnixNano"])]["energy"]
            assert attrs_of(p)["resource_tracker.energy.method"] == e[method]
            assert abs(p["asDouble"] - e[key]) <= 1e-6 + 1e-9 * e[key], (name, p, e[key])


@pytest.mark.parametrize("how", ["flag", "env"])
def test_every_sample_once(tmp_path, receiver, how):
    rcv = receiver("--require-header", f"X-Api-Key={SECRET}")
    env = otlp_env(OTEL_EXPORTER_OTLP_HEADERS=f"X-Api-Key={SECRET}",
                   OTEL_RESOURCE_ATTRIBUTES="deployment.environment=ci,service.namespace=rt",
                   OTEL_SERVICE_NAME="busy-svc")
    flags = ["--otlp-interval", "0.5", "--job-name", "busy", "--tag", "team=ml"]
    if how == "flag":
        flags += ["--otlp", rcv.url]
    else:  # the standard variables: a base URL gets /v1/metrics; no compression
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=rcv.url + "/", OTEL_EXPORTER_OTLP_COMPRESSION="none")
    r, samples, kernel = track(tmp_path, env, flags, secs=2.5, status=3)
    assert r.returncode == 3, r.stderr
    assert otlp_lines(r.stderr) == [], r.stderr
    assert SECRET not in r.stderr
    entries = rcv.entries()
    assert all(e["status"] == 200 for e in entries), [e["error"] for e in entries if e["error"]]
    assert len(entries) >= 2  # pushed while the job ran, not only at the end
    assert {e["encoding"] for e in entries} == ({"gzip"} if how == "flag" else {None})
    check_every_sample_once(entries, samples)
    check_cpu_time(entries, samples, kernel)
    check_counters_monotonic(entries)
    res = resource_of(entries[0])
    assert res["service.name"] == "busy-svc"  # OTEL_SERVICE_NAME wins over the job's name
    assert res["deployment.environment"] == "ci" and res["service.namespace"] == "rt"
    assert res["resource_tracker.job_name"] == "busy" and res["resource_tracker.tag_team"] == "ml"
    assert res["telemetry.sdk.name"] == "resource-tracker" and res["telemetry.sdk.language"] == "c"
    assert res["os.type"] == "linux" and res["host.name"]
    assert res["process.pid"] == samples[0]["process"]["pid"]
    assert res["process.command"] == PY
    # the machine's figures too, with the semantic conventions' names (over the pushes: the last
    # may hold only the reading at the command's exit, whose machine CPU has no figure when no
    # tick of /proc/stat passed since the reading before it, as on a loaded machine)
    names = set().union(*(metrics_of(e) for e in entries))
    assert {"system.cpu.utilization", "system.memory.usage", "process.cpu.utilization",
            "process.memory.usage"} <= names
    util = [p["asDouble"] for p in points(entries, "system.cpu.utilization")]
    assert all(0 <= u <= 1 for u in util)
    # the tree's parts: a point per part and sample, each the sample's figure
    by_ns = {sample_ns(s): s for s in samples}
    for name, key in (("resource_tracker.process.part.cpu.usage", "cores_used"),
                      ("resource_tracker.process.part.thread.count", "thread_count"),
                      ("resource_tracker.process.part.memory.usage", "total_rss_mib")):
        pts = points(entries, name)
        seen = {}
        for p in pts:
            (part,) = [a["value"]["stringValue"] for a in p["attributes"]
                       if a["key"] == "resource_tracker.process.part"]
            ts = int(p["timeUnixNano"])
            want = by_ns[ts]["process"][part][key]
            value = p["asDouble"] if "asDouble" in p else int(p["asInt"])
            scale = 1048576 if key.endswith("_mib") else 1
            assert abs(value - want * scale) <= 0.0005 * scale + 1e-9, (name, part, value, want)
            seen.setdefault(part, set()).add(ts)
        assert set(seen) == {"main", "descendants", "combined"}, (name, seen.keys())
        assert seen["combined"] == set(by_ns), name
    check_energy(entries, samples)


def test_503_retry_after_nothing_lost(tmp_path, receiver):
    rcv = receiver("--fail", "2", "--retry-after", "2")
    r, samples, kernel = track(tmp_path, otlp_env(), ["--otlp", rcv.url, "--otlp-interval", "0.5"], secs=5.5)
    assert r.returncode == 0, r.stderr
    entries = rcv.entries()
    assert [e["status"] for e in entries[:3]] == [503, 503, 200]
    # the retries waited Retry-After (judged by when they arrived)
    assert entries[1]["mono"] - entries[0]["mono"] >= 2.0 - 0.05
    assert entries[2]["mono"] - entries[1]["mono"] >= 2.0 - 0.05
    accepted = rcv.accepted()
    check_every_sample_once(accepted, samples)  # nothing lost, nothing twice
    check_cpu_time(accepted, samples, kernel)
    assert otlp_lines(r.stderr) == [], r.stderr  # a blip that lost nothing is not warned about


@pytest.mark.release
@pytest.mark.serial
def test_hang_bounded_by_finish_timeout(tmp_path, receiver):
    rcv = receiver("--hang", "1000")
    # a request may take 600 s; the end may take 2 s
    env = otlp_env(OTEL_EXPORTER_OTLP_TIMEOUT="600000", TRACKER_FINISH_TIMEOUT="2")
    t0 = time.monotonic()
    r, samples, _ = track(tmp_path, env, ["--otlp", rcv.url, "--otlp-interval", "0.5"], secs=1.5, status=7)
    took = time.monotonic() - t0
    assert r.returncode == 7, r.stderr  # the job's status passes through
    # a hang guard (the tool ended, not waiting for the request), not a timing: generous, scaled
    assert took < (1.5 + 2 + 30) * TIMEOUT_SCALE < 600
    lines = otlp_lines(r.stderr)
    assert len(lines) == 1 and "not delivered" in lines[0], r.stderr
    assert len(samples) >= 3
    assert rcv.entries() and all(e.get("hung") for e in rcv.entries())


def test_dead_port(tmp_path):
    env = otlp_env(TRACKER_FINISH_TIMEOUT="1")
    r, samples, _ = track(tmp_path, env, ["--otlp", closed_port_url(), "--otlp-interval", "0.5"], secs=1.0,
                          status=5)
    assert r.returncode == 5, r.stderr
    lines = otlp_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert f"{len(samples)} of {len(samples)} samples were not delivered" in lines[0]


def test_receiver_refusal_warned_once(tmp_path, receiver):
    """A status that is not retried (here 401: the header the receiver wants is missing) drops
    each push with a warning; the run and its status go on."""
    rcv = receiver("--require-header", "X-Api-Key=other")
    r, samples, _ = track(tmp_path, otlp_env(), ["--otlp", rcv.url, "--otlp-interval", "5"], secs=0.6)
    assert r.returncode == 0, r.stderr
    entries = rcv.entries()
    assert entries and all(e["status"] == 401 for e in entries)
    lines = otlp_lines(r.stderr)
    assert any("HTTP 401" in line for line in lines), r.stderr
    assert any("not delivered" in line for line in lines), r.stderr


def test_receiver_is_strict(tmp_path, receiver):
    """The stand-in refuses what is off the schema (so that its 200s mean something)."""
    import urllib.error
    import urllib.request
    rcv = receiver()
    good = {"resourceMetrics": [{"resource": {"attributes": []}, "scopeMetrics": [{"scope": {"name": "x"}, "metrics": [
        {"name": "a.b", "unit": "1", "gauge": {"dataPoints": [
            {"timeUnixNano": str(int(time.time() * 1e9)), "asDouble": 0.5}]}}]}]}]}

    def post(doc, ctype="application/json"):
        req = urllib.request.Request(rcv.url + "/v1/metrics", data=json.dumps(doc).encode(),
                                     headers={"Content-Type": ctype}, method="POST")
        try:
            return urllib.request.urlopen(req, timeout=10).status
        except urllib.error.HTTPError as e:
            return e.code

    assert post(good) == 200
    point = good["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0]
    for bad in ({"timeUnixNano": int(point["timeUnixNano"]), "asDouble": 1},  # int64 as a number
                {"time_unix_nano": point["timeUnixNano"], "asDouble": 1},    # not lowerCamelCase
                {"timeUnixNano": "1000", "asDouble": 1},                    # implausible time
                {"timeUnixNano": point["timeUnixNano"]},                     # no value
                {"timeUnixNano": point["timeUnixNano"], "asDouble": 1, "asInt": "1"},
                {"timeUnixNano": point["timeUnixNano"], "asInt": 1},
                {"timeUnixNano": point["timeUnixNano"], "asDouble": 1,
                 "attributes": [{"key": "k", "value": {"stringValue": "v", "intValue": "1"}}]}):
        doc = json.loads(json.dumps(good))
        doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0] = bad
        assert post(doc) == 400, bad
    doc = json.loads(json.dumps(good))
    m = doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]
    m["sum"] = {"dataPoints": m.pop("gauge")["dataPoints"], "isMonotonic": True}  # no temporality
    assert post(doc) == 400
    assert post(good, "application/x-protobuf") == 415
