"""`resource-tracker recommend`: the recommendation from recorded runs, the cheapest server from a
local Keeper stand-in that enforces docs/contracts.md §6 (tests/stubs/keeper_server.py), the
query it saw (memory_min in GB), --instance cost and saving, Keeper down (a closed port) and
stalling (never answers), and usage errors. Every run sets TRACKER_CLOUD_DISCOVERY=0 and
TRACKER_KEEPER_URL to 127.0.0.1.

The recorded runs are JSON lines made by the real tool (one short wrapped run) with the process
figures set to known values. Tests marked needs_reader read them through rt_reader and
rt_stats (built on other branches): they are skipped while the reader is this branch's stub."""
import contextlib
import http.server
import json
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import REPO, TRACKER, tracker_env

SERVER = os.path.join(REPO, "tests", "stubs", "keeper_server.py")
# a failed lookup: one quiet last line of the text, never a warning on stderr (issue 53, item 6)
OFFLINE = "prices: offline (Keeper not reached: "
UNAVAILABLE = "prices: unavailable ("
STOP = "TRACKER_KEEPER_URL=off or --no-price-lookup stops the lookup)"


class Keeper:
    """The stand-in, started on a free port; stopped by its own pid."""

    def __init__(self, tmp_path, *flags):
        self.log = tmp_path / "keeper-requests.json"
        self.p = subprocess.Popen(["/usr/bin/python3", SERVER, "--log", str(self.log), *flags],
                                  stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.p.stdout.readline())}"

    def requests(self):
        return json.loads(self.log.read_text()) if self.log.exists() else []

    def stop(self):
        self.p.kill()
        self.p.wait()


@pytest.fixture
def keeper(tmp_path):
    started = []

    def start(*flags):
        k = Keeper(tmp_path, *flags)
        started.append(k)
        return k

    yield start
    for k in started:
        k.stop()


def closed_port_url():
    """A URL on 127.0.0.1 where nothing listens: a port bound, then closed."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


_template = None


def template_line(tmp_path_factory):
    """One sample line of the real tool wrapping a command (so it has a process object)."""
    global _template
    if _template is None:
        out = tmp_path_factory.mktemp("tpl") / "run.jsonl"
        subprocess.run([TRACKER, "-i", "0.1", "-o", str(out), "--", "sleep", "0.25"], check=True, timeout=30,
                       env=tracker_env())
        lines = [json.loads(l) for l in out.read_text().splitlines() if l.strip()]
        _template = next(l for l in reversed(lines) if l.get("process"))
    return json.loads(json.dumps(_template))


def make_run(path, tpl, n=60, cores=1.6, pss_mib=2500.0, gpus=0, vram_mib=0.0):
    """Writes n one-second samples of the real tool's shape with these process figures."""
    t0 = 1_790_000_000.0
    with open(path, "w") as f:
        for i in range(n):
            s = json.loads(json.dumps(tpl))
            s["timestamp_secs"] = t0 + i
            s["interval_secs"] = 1.0
            p = s["process"]
            p["alive"] = True
            p["cores_used"] = cores
            s["cpu"]["process_cores_used"] = cores
            while len(s["cpu"]["per_core_pct"]) < cores:  # a machine with the cores the figures use
                s["cpu"]["per_core_pct"].append(0.0)
            p["pss_mib"] = pss_mib if i == n // 2 else pss_mib / 2  # the peak once
            p["rss_mib"] = p["pss_mib"] * 1.1
            p["cpu_secs_total"] = cores * (i + 1)
            p["gpu_count_used"] = gpus
            p["gpu_vram_used_bytes"] = int(vram_mib * 1048576) if gpus else 0
            p["gpu_utilization_pct"] = 90.0 * gpus
            # no task waited for a CPU: the template's pressure is the machine's of the moment it
            # was taken (a loaded machine's waits would make the table's rows above the cores the
            # run had faster, by them)
            for pressure in (s.get("pressure"), (p.get("cgroup") or {}).get("pressure")):
                for kind in (pressure or {}).values():
                    for key in ("some_pct", "full_pct", "some_avg10", "full_avg10"):
                        if isinstance(kind, dict) and key in kind:
                            kind[key] = 0
            f.write(json.dumps(s) + "\n")
    return str(path)


@pytest.fixture
def run_file(tmp_path, tmp_path_factory):
    def make(name="run.jsonl", **kw):
        return make_run(tmp_path / name, template_line(tmp_path_factory), **kw)

    return make


def recommend(args, url, timeout=20, **env):
    return subprocess.run([TRACKER, "recommend", *args], capture_output=True, text=True, timeout=timeout,
                          env=tracker_env(TRACKER_KEEPER_URL=url, TRACKER_CLOUD_DISCOVERY="0", **env))


_reader_ok = None


def reader_ok(run_file):
    """False while rt_reader is the stub ("not supported") on this branch."""
    global _reader_ok
    if _reader_ok is None:
        r = recommend([run_file("probe.jsonl", n=3)], closed_port_url())
        _reader_ok = "not supported" not in r.stderr
    return _reader_ok


@pytest.fixture
def needs_reader(run_file):
    if not reader_ok(run_file):
        pytest.skip("needs rt_reader and rt_stats (h-reader, h-stats): still stubs on this branch")


def fields(text):
    """The 'key: value' lines of the text output."""
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition(": ")
        if sep:
            out[k] = v
    return out


def test_text_and_query(keeper, run_file, needs_reader):
    k = keeper()
    r = recommend([run_file()], k.url)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    f = fields(r.stdout)
    assert f["cpu"] == "2 cores"
    assert f["memory"] == "3072 MiB (3.00 GiB)"  # peak PSS 2500 x 1.2 = 3000 -> 3072
    assert f["gpu"] == "0"
    assert f["vram"].startswith("0 MiB")
    assert f["Metaflow"] == "@resources(cpu=2, memory=3222)"
    assert f["Kubernetes"] == 'resources: {requests: {cpu: "2", memory: "3072Mi"}}'
    assert f["SLURM"] == "--cpus-per-task=2 --mem=3072M --time=0:10:00"
    # 1.6 cores throughout: one core would take 60% longer
    assert f["cpu from"] == "the fewest cores under which the run is predicted within 10% of its own duration"
    assert f["time"] == "2 cores: about 60 s, as this run; 1 core: about 1.6 min (+60%)"
    # the table's money a run: core-hours at the cheapest server's price a vCPU-hour ($0.0052 / 2)
    table = r.stdout.split("cores  predicted duration", 1)[1].splitlines()
    assert table[0] == "  core-hours  cost a run", table
    assert [l.split()[6] for l in table[1:4]] == ["$0.00006933", "$0.00008667", "$0.00013"], table
    assert f["cost of the run there"] == table[2].split()[6]  # the asked row's: the same money
    assert f["cost"] == "core-hours at the cheapest server's price a vCPU-hour ($0.0026)"
    # the 3 GiB box fits 3072 MiB exactly: memory_min=3 lets it in
    assert f["cheapest server"].startswith("upcloud DEV-2xCPU-3GB (Developer 2xCPU-3GB): 2 vCPUs, 3072 MiB")
    assert f["cheapest server"].endswith("$0.0052/hour")
    assert f["cost of the run there"] == "$0.00008667"  # 0.0052 $/h x 60 s
    reqs = k.requests()
    assert len(reqs) == 1
    q = reqs[0]
    assert q["path"] == "/servers"
    assert q["headers"].get("X-Application-ID") == "resource-tracker"
    assert q["query"] == {"vcpus_min": ["2"], "memory_min": ["3"], "order_by": ["min_price_ondemand"],
                          "order_dir": ["asc"], "limit": ["10"]}  # GB, not MiB; no GPU parameters


def test_json_gpu_and_instance(keeper, run_file, needs_reader):
    k = keeper()
    path = run_file(cores=3.2, pss_mib=10000.0, gpus=1, vram_mib=10240.0)
    r = recommend([path, "--json", "--instance", "aws:g5.12xlarge"], k.url)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # 0.19, the GPU ask: 10 GiB x 1.2 fits the table's smallest GPU memory, the T4's 15 GiB
    gpu_ask = {k: doc["recommendation"].pop(k) for k in list(doc["recommendation"])
               if k.startswith(("gpu_", "vram_per_gpu_"))}
    assert gpu_ask["gpu_words"] == "1 GPU with >= 15 GiB (peak 10.0 GiB)"
    assert (gpu_ask["gpu_held"], gpu_ask["gpu_busy"], gpu_ask["vram_per_gpu_mib"]) == (1, 1, 15360)
    assert gpu_ask["vram_per_gpu_need_mib"] == 10240.0 and gpu_ask["vram_per_gpu_source"] == "vram"
    assert gpu_ask["gpu_models"][0] == "T4 16GB" and gpu_ask["gpu_smaller"] is False
    assert doc["recommendation"] == {"cpu": 3, "memory_mib": 12288, "gpu": 1, "vram_mib": 12288,
                                     "oom_killed": False, "cpu_quota_cores": None, "cpu_throttled_pct": None,
                                     "memory_need_mib": 10000.0, "memory_source": "pss", "memory_sampled": False,
                                     "headroom_pct": 20.0, "vram_need_mib": 10240.0, "vram_source": "vram",
                                     # 3.2 cores throughout: 3 take 7% longer, within 10%; 2 take 60%
                                     "max_slowdown_pct": 10.0, "cpu_duration_secs": pytest.approx(64),
                                     "cpu_run_duration_secs": pytest.approx(60), "cpu_fewer": 2,
                                     "cpu_fewer_duration_secs": pytest.approx(96), "cpu_cost_usd": None,
                                     "time_limit_secs": 600.0, "cpu_basis": "duration",
                                     "cpu_phase": None, "cpu_phase_fewer_secs": None,  # no phases
                                     # 0.20: no run stopped at a limit: no floor
                                     "memory_floor_mib": None, "memory_learn": False, "time_floor_secs": None,
                                     "memory_reread_files_mib": None,  # 0.20: no re-reads kept
                                     "left_behind": 0, "left_behind_mib": None,  # 0.20: nothing left behind
                                     "time_words": "3 cores: about 64 s, +7% on this run's 60 s; "
                                                   "2 cores: about 1.6 min (+60%)"}
    rows = doc["cores"][0]["rows"]
    assert doc["phases"] == [[]]  # one run, no phase
    assert [r["cores"] for r in rows] == [1, 2, 3, 4, 5]  # a little above the 4 it had
    assert [round(r["duration_secs"], 3) for r in rows] == [192, 96, 64, 60, 60]
    # each row's money a run: its core-hours at the cheapest server's price a vCPU-hour
    per = doc["cheapest"]["price_usd_per_hour"] / doc["cheapest"]["vcpus"]
    assert [r["cost_usd"] for r in rows] == pytest.approx([r["core_hours"] * per for r in rows], rel=1e-9)
    # the PSS is the largest figure; the job's cgroup (the template's) stood behind the samples;
    # the one run it is made from is said
    assert [n["kind"] for n in doc["notes"]] == ["few_runs"]
    assert doc["runs"] == 1
    assert doc["duration_secs"] == pytest.approx(60)
    assert doc["schedulers"]["slurm"] == "--cpus-per-task=3 --mem=12288M --gres=gpu:1 --time=0:10:00"
    c = doc["cheapest"]
    assert (c["vendor_id"], c["api_reference"], c["vcpus"], c["gpu_count"]) == ("aws", "g4dn.xlarge", 4, 1)
    assert c["price_usd_per_hour"] == pytest.approx(0.526)
    assert c["run_cost_usd"] == pytest.approx(0.526 / 60)
    inst = doc["instance"]
    assert inst["price_usd_per_hour"] == pytest.approx(5.672)  # the lowest on-demand Linux price
    assert inst["run_cost_usd"] == pytest.approx(5.672 / 60)
    assert inst["saving_usd"] == pytest.approx((5.672 - 0.526) / 60)
    assert inst["saving_pct"] == pytest.approx(100 * (5.672 - 0.526) / 5.672)
    assert doc["server_lookup_error"] is None
    servers, prices = k.requests()
    assert servers["query"]["memory_min"] == ["12"] and servers["query"]["gpu_memory_total"] == ["15"]
    assert servers["query"]["gpu_memory_min"] == ["15"]  # 0.19: each GPU's memory asked, 15360 MiB
    assert servers["query"]["gpu_min"] == ["1"] and servers["query"]["vcpus_min"] == ["3"]
    assert prices["path"] == "/server/aws/g5.12xlarge/prices"
    assert prices["headers"].get("X-Application-ID") == "resource-tracker"
    # its CPU as Keeper names it (a model number, "8259CL": the table's "Platinum 8259CL", 165 W
    # for 48 threads): 3.2 cores x 60 s = 192 CPU seconds over 60 s on its 4 vCPUs
    assert (c["cpu_manufacturer"], c["cpu_family"], c["cpu_model"]) == ("Intel", "Xeon", "8259CL")
    busy = 165 / 48
    idle = 0.3 * busy
    assert c["energy"]["joules"] == pytest.approx(60 * 4 * idle + 192 * (busy - idle))
    assert c["energy"]["words"] == "estimated: Intel Xeon 8259CL, 165 W TDP / 48 threads"


def test_instance_text_and_several_runs(keeper, run_file, needs_reader):
    k = keeper()
    a = run_file("a.jsonl", cores=1.2, pss_mib=1000.0)
    b = run_file("b.jsonl", cores=2.0, pss_mib=2500.0)  # mean of means 1.6 -> 2; max of peaks 2500
    r = recommend([a, b, "--instance", "aws:t3.medium"], k.url)
    assert r.returncode == 0, r.stderr
    f = fields(r.stdout)
    assert f["runs"].startswith("2 ")
    assert f["cpu"] == "2 cores" and f["memory"].startswith("3072 MiB")
    assert f["instance"] == "aws:t3.medium, $0.0416/hour"
    assert f["cost of the run on the instance"] == "$0.0006933"
    assert f["saving on the cheapest server"] == "$0.0006067 (87.5%)"


def test_unknown_instance(keeper, run_file, needs_reader):
    k = keeper()
    r = recommend([run_file(), "--instance", "aws:no/such.type?x=1", "--json"], k.url)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["instance"]["price_usd_per_hour"] is None and doc["cheapest"] is not None
    assert "no on-demand Linux price" in doc["note"]
    assert k.requests()[1]["path"] == "/server/aws/no%2Fsuch.type%3Fx%3D1/prices"  # escaped on the wire


def test_keeper_down(run_file, needs_reader):
    url = closed_port_url()
    path = run_file()
    r = recommend([path, "--instance", "aws:t3.medium"], url)
    assert r.returncode == 0, r.stderr
    f = fields(r.stdout)
    assert f["cpu"] == "2 cores" and f["memory"].startswith("3072 MiB") and f["SLURM"]
    assert "cheapest server" not in f
    assert r.stderr == ""  # offline is no warning: the answer says it in one line
    last = r.stdout.splitlines()[-1]
    assert last.startswith(OFFLINE) and last.endswith(STOP), r.stdout
    assert r.stdout.count("prices:") == 1 and "127.0.0.1" in last  # curl's reason names the host
    r = recommend([path, "--json"], url)
    assert r.returncode == 0 and r.stderr == ""
    doc = json.loads(r.stdout)
    assert doc["cheapest"] is None and url in doc["server_lookup_error"]  # --json keeps its key
    assert "not reached" in doc["server_lookup_error"]
    assert doc["recommendation"]["cpu"] == 2


def test_keeper_stalls(keeper, run_file, needs_reader):
    k = keeper("--stall")
    path = run_file()
    t = time.monotonic()
    r = recommend([path, "--instance", "aws:t3.medium"], k.url, timeout=20)  # hang guard only
    print(f"recommend against a stalling Keeper returned after {time.monotonic() - t:.2f} s")
    assert r.returncode == 0
    assert fields(r.stdout)["cpu"] == "2 cores"
    assert r.stderr == ""
    assert r.stdout.splitlines()[-1].startswith(OFFLINE), r.stdout  # silent past the timeout: no reply
    assert len(k.requests()) == 1  # no second request to a Keeper that did not answer


@contextlib.contextmanager
def canned_keeper(reply):
    """A Keeper on 127.0.0.1 that answers every GET with reply(path) -> (status, body bytes);
    yields its URL, and is shut down after."""
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status, body = reply(self.path)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()


def test_keeper_refuses(tmp_path, run_file, needs_reader):
    """A Keeper that answers with an error status or garbage: one quiet line, "prices:
    unavailable", nothing on stderr, exit 0."""
    def reply(path):
        body = b"<html>oops</html>" if "servers" in path else b"{}"
        return (200 if path.startswith("/servers") and "vcpus_min=2" in path else 503), body

    with canned_keeper(reply) as url:
        for args in ([run_file()], [run_file("c.jsonl", cores=3.0)]):  # garbage 200, then 503
            r = recommend(args, url)
            assert r.returncode == 0
            assert r.stderr == ""
            last = r.stdout.splitlines()[-1]
            assert last.startswith(UNAVAILABLE) and url in last and last.endswith(STOP), r.stdout
            assert "cpu" in fields(r.stdout)


@pytest.mark.parametrize("args", [
    [],
    ["--json"],
    ["run.jsonl", "--frobnicate"],
    ["run.jsonl", "--instance"],
    ["run.jsonl", "--instance", "aws"],
    ["run.jsonl", "--instance", "aws:"],
    ["run.jsonl", "--instance", ":t3.medium"],
    ["run.jsonl", "--instance", "a:b:c"],
    ["run.jsonl", "--instance", "aws:t3.medium\x1b[2J"],
    ["run.jsonl", "--instance", "aws:t3.m\u00e9dium"],
    ["--job", "train", "--last", "0"],
    ["--job", "train", "--last", "-3"],
    ["--job", "train", "--last", "five"],
    ["--job", "train", "--last", "2.5"],
    ["run.jsonl", "--last", "3"],
    ["run.jsonl", "--job", "train"],
])
def test_usage_errors(tmp_path, args):
    r = subprocess.run([TRACKER, "recommend", *args], capture_output=True, text=True, timeout=20, cwd=tmp_path,
                       env=tracker_env(TRACKER_KEEPER_URL=closed_port_url(), TRACKER_CLOUD_DISCOVERY="0"))
    assert r.returncode == 2, (args, r.stdout, r.stderr)
    assert r.stdout == ""
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_max_slowdown_takes_a_percent_sign(run_file, needs_reader):
    """Issue 70: --max-slowdown goes through its row (CLI_T_PCT, 0 to 1000): "5%" is 5, a bad
    value is the row's message and exit 2 before anything is read."""
    path = run_file()
    r = recommend([path, "--json", "--no-price-lookup", "--max-slowdown", "5%"], closed_port_url())
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["recommendation"]["max_slowdown_pct"] == 5
    for bad in ("5x", "1001", "-1", "%", "5%%"):
        r = recommend([path, "--max-slowdown", bad], closed_port_url())
        assert r.returncode == 2 and r.stdout == "", (bad, r.stdout)
        assert r.stderr == f"resource-tracker: recommend: --max-slowdown: '{bad}' is not a percentage from 0 to 1000\n"


def test_help():
    r = recommend(["--help"], closed_port_url())
    assert r.returncode == 0
    assert "recommend FILE..." in r.stdout and "--instance VENDOR:TYPE" in r.stdout
    # how an offline lookup reads, and how to stop it
    assert '"prices: offline (Keeper not reached: REASON; ...)"' in r.stdout
    assert "TRACKER_KEEPER_URL=off or --no-price-lookup stops the lookup." in r.stdout


def test_job_without_history(tmp_path):
    r = subprocess.run([TRACKER, "recommend", "--job", "train"], capture_output=True, text=True, timeout=20,
                       cwd=tmp_path, env=tracker_env(TRACKER_KEEPER_URL=closed_port_url(),
                                                     TRACKER_CLOUD_DISCOVERY="0"))
    assert r.returncode == 2
    assert "history" in r.stderr and len(r.stderr.splitlines()) == 1


def test_missing_file(tmp_path):
    r = recommend([str(tmp_path / "nope.jsonl")], closed_port_url())
    assert r.returncode == 2 and r.stdout == ""
    assert "nope.jsonl" in r.stderr


def test_no_valid_sample(tmp_path, run_file, needs_reader):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = recommend([str(empty)], closed_port_url())
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert "empty.jsonl" in r.stderr
    assert "prices:" not in r.stderr  # nothing looked up


def machine_run(path, tmp_path_factory):
    """Writes 5 samples of the machine alone (no tracked process) to path; returns it."""
    tpl = template_line(tmp_path_factory)
    tpl["process"] = None
    tpl["cpu"]["process_cores_used"] = None
    path.write_text("\n".join(json.dumps(dict(tpl, timestamp_secs=1.79e9 + i, interval_secs=1.0))
                              for i in range(5)) + "\n")
    return path


def test_run_without_process(tmp_path, tmp_path_factory, needs_reader):
    path = machine_run(tmp_path / "machine.jsonl", tmp_path_factory)
    r = recommend([str(path)], closed_port_url())
    assert r.returncode == 2 and "machine.jsonl" in r.stderr and "process" in r.stderr


def test_json_keeps_the_error_key_for_any_reason(run_file, needs_reader):
    """A reason that is not UTF-8 (here from the Keeper URL) still fills server_lookup_error:
    jansson refuses such a string, and the key used to vanish, reading as "no error"."""
    r = subprocess.run([TRACKER.encode(), b"recommend", run_file().encode(), b"--json"], capture_output=True,
                       timeout=20, env={**{k.encode(): v.encode() for k, v in tracker_env().items()},
                                        b"TRACKER_KEEPER_URL": closed_port_url().encode() + b"/\xff"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["cheapest"] is None and out["server_lookup_error"]


def test_instance_must_be_printable_ascii(run_file, needs_reader):
    """Vendor ids and instance types are printable ASCII: anything else (a byte that is not
    UTF-8 vanished from --json; an escape reached the terminal) is a usage error."""
    path = run_file()
    for bad in (b"\xff:x", b"aws:t3.medium\x1b[2J", b"aws:t3 medium"):
        r = subprocess.run([TRACKER.encode(), b"recommend", path.encode(), b"--json", b"--instance", bad],
                           capture_output=True, timeout=20,
                           env=tracker_env(TRACKER_KEEPER_URL=closed_port_url()))
        assert r.returncode == 2 and r.stdout == b"", (bad, r.stdout)
        assert len(r.stderr.splitlines()) == 1


def test_free_instance_has_no_percentage(run_file, needs_reader):
    """An instance Keeper prices at 0 (or a run of no time): the saving has no share ("nan%")."""
    def reply(path):
        if path.startswith("/servers"):
            doc = [{"vendor_id": "a", "api_reference": "big", "vcpus": 64, "memory_amount": 1 << 20,
                    "gpu_count": 0, "min_price_ondemand": 0.5}]
        else:
            doc = [{"allocation": "ondemand", "operating_system": "Linux", "price": 0, "currency": "USD",
                    "region_id": "r"}]
        return 200, json.dumps(doc).encode()

    with canned_keeper(reply) as url:
        r = recommend([run_file(), "--instance", "free:tier"], url)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    saving = fields(r.stdout)["saving on the cheapest server"]
    assert saving.startswith("$-") and "nan" not in saving.lower(), saving


# ---- the energy of the run on the cheapest server (0.15) ------------------------------------


def summary_of(path):
    return json.loads(subprocess.run([TRACKER, "summary", "--json", path], capture_output=True, text=True,
                                     timeout=30, env=tracker_env(TRACKER_CLOUD_DISCOVERY="0")).stdout)


def test_energy_on_the_cheapest_server(keeper, run_file, needs_reader):
    """Its CPU in the TDP table (the stand-in's upcloud box: AMD EPYC 7543, 225 W for 64 threads):
    the run's energy there by hand from the run's own CPU time and duration, in text and JSON."""
    k = keeper()
    path = run_file()  # 1.6 cores for 60 s
    s = summary_of(path)
    cpu, secs = s["process"]["cpu_secs"], s["duration_secs"]
    busy = 225 / 64  # W per busy logical core: the TDP per thread
    idle = 0.3 * busy  # the model's idle floor per logical core
    want = secs * 2 * idle + cpu * (busy - idle)  # 2 vCPUs idle, the CPU seconds above idle
    assert want == pytest.approx(362.8125)  # 60 s x 2 x 1.0546875 W + 96 s x 2.4609375 W
    r = recommend([path], k.url)
    assert r.returncode == 0, r.stderr
    f = fields(r.stdout)
    assert f["energy on the cheapest server"] == \
        f"{want:.3g} J (estimated: AMD EPYC 7543, 225 W TDP / 64 threads)"
    doc = json.loads(recommend([path, "--json"], k.url).stdout)
    e = doc["cheapest"]["energy"]
    assert e["joules"] == pytest.approx(want, rel=1e-9) and e["method"] == "estimated"
    assert (e["tdp_watts"], e["threads_per_package"], e["cpu"]) == (225, 64, "AMD EPYC 7543")


def test_no_energy_for_an_unknown_cpu(keeper, run_file, needs_reader):
    """The cheapest server's CPU is not in the table (the stand-in's g2-standard-4: a Xeon 8273CL):
    no energy line, energy null in JSON, the CPU still named."""
    k = keeper()
    path = run_file(cores=3.2, pss_mib=10000.0, gpus=1, vram_mib=20000.0)  # 20 GB of VRAM: the 24 GB L4
    r = recommend([path], k.url)
    assert r.returncode == 0, r.stderr
    f = fields(r.stdout)
    assert f["cheapest server"].startswith("gcp g2-standard-4")
    assert "energy on the cheapest server" not in f
    c = json.loads(recommend([path, "--json"], k.url).stdout)["cheapest"]
    assert c["api_reference"] == "g2-standard-4" and c["cpu_model"] == "8273CL" and c["energy"] is None
