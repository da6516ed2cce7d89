"""Tests of the Sentinel stand-in itself (tests/stubs/sentinel_server.py), with urllib: a valid
register / refresh / finish passes and is logged; every shape docs/contracts.md §5 forbids is
refused with a 4xx that names the problem; the fault modes and the token file work."""
import base64
import calendar
import gzip
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import REPO
from test_cli import CSV_HEADER as HEADER

SERVER = os.path.join(REPO, "tests", "stubs", "sentinel_server.py")
TOKEN = "test-api-token"
CSV = HEADER + "\n1795341600.000,3,0.1,0.0,0.1,100,200,1,2,3,4,0,0,10,5,5,0,0,,,,,,,,,,,,,,\n"

REGISTER = {
    "job_name": "train", "project_name": "p", "stage_name": "s", "task_name": "t", "team": "ml", "env": "prod",
    "language": "python", "orchestrator": "airflow", "executor": "k8s", "external_run_id": "ext-1",
    "container_image": "img:1", "tags": ["team=ml", "k="], "command": "[\"python\",\"train.py\"]",
    "host_id": "abc", "host_hostname": "box", "host_ip": "10.0.0.5", "host_server_allocation": "dedicated",
    "host_vcpus": 8, "host_cpu_model": "EPYC", "host_memory_mib": 15788.211, "host_gpu_model": "T4",
    "host_gpu_count": 1, "host_gpu_memory_mib": 15360, "host_storage_gb": 1000.205, "cloud_vendor_id": "aws",
    "cloud_account_id": "123", "cloud_region_id": "us-east-1", "cloud_zone_id": "use1-az1",
    "cloud_instance_type": "g4dn.xlarge",
}


class Sentinel:
    """The stand-in on a free port; stopped by its own pid."""

    def __init__(self, tmp_path, *flags):
        self.log = tmp_path / "sentinel-log.json"
        self.token_file = tmp_path / "s3-token.json"
        self.p = subprocess.Popen(["/usr/bin/python3", SERVER, "--token", TOKEN, "--log", str(self.log),
                                   "--token-file", str(self.token_file), *flags], stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}"

    def call(self, path, doc=None, raw=None, token=TOKEN, ctype="application/json", headers=None, timeout=10):
        """POSTs doc as JSON (or the raw bytes); returns (status, reply object)."""
        data = raw if raw is not None else (b"" if doc is None else json.dumps(doc).encode())
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        if ctype is not None:
            h["Content-Type"] = ctype
        req = urllib.request.Request(self.url + path, data=data, headers=h, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def control(self, **doc):
        status, reply = self.call("/__control", doc, token=None)
        assert status == 200, reply
        return reply

    def logged(self):
        return json.loads(self.log.read_text())

    def register(self, doc=None):
        status, reply = self.call("/runs", REGISTER if doc is None else doc)
        assert status == 200, reply
        return reply

    def stop(self):
        self.p.kill()
        self.p.wait()


@pytest.fixture
def sentinel(tmp_path):
    started = []

    def start(*flags):
        s = Sentinel(tmp_path, *flags)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def uris(s, run_id, n):
    return [f"s3://sentinel-test/runs/test/{run_id}/{i:06d}.csv.gz" for i in range(n)]


def finish_s3(s, run_id, n=2):
    return {"exit_code": 0, "run_status": "finished", "finished_at": "2026-11-22T10:00:00Z", "data_source": "s3",
            "data_uris": uris(s, run_id, n)}


def test_valid_run(sentinel):
    s = sentinel()
    before = time.time()
    reg = s.register()
    run_id = reg["run_id"]
    assert reg["upload_uri_prefix"] == "s3://sentinel-test/runs/test"
    creds = reg["upload_credentials"]
    assert creds["access_key"] == "ASIASENTINELTEST" and creds["secret_key"] == "sentinel/test+secret"
    assert creds["session_token"] == "SentinelTestToken"
    expires = calendar.timegm(time.strptime(creds["expiration"], "%Y-%m-%dT%H:%M:%SZ"))
    assert before + 3600 - 2 <= expires <= time.time() + 3600 + 1
    tf = json.loads(s.token_file.read_text())
    assert tf["current"] == "SentinelTestToken" and tf["access_key"] == "ASIASENTINELTEST"
    assert tf["secret_key"] == "sentinel/test+secret" and "SentinelTestToken" in tf["tokens"]

    status, ref = s.call(f"/runs/{run_id}/refresh-credentials")
    assert status == 200 and set(ref) == {"upload_credentials"}
    assert ref["upload_credentials"]["session_token"] == "SentinelTestToken"  # no rotation asked

    status, fin = s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))
    assert status == 200 and fin == {"run_id": run_id, "run_status": "finished"}
    status, again = s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))
    assert status == 409 and "already finished" in again["detail"]

    log = s.logged()
    assert [r["status"] for r in log["requests"]] == [200, 200, 200, 409]
    assert log["requests"][0]["json"] == REGISTER
    assert log["requests"][0]["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert log["requests"][3]["error"] == "the run is already finished"
    run = log["runs"][run_id]
    assert run["register"] == REGISTER and run["refreshes"] == 1 and run["finish"] == finish_s3(s, run_id)


def test_inline_finish_and_minimal_register(sentinel):
    s = sentinel("--prefix", "", "--expiry-field", "expires_at")
    reg = s.register({})
    assert reg["upload_uri_prefix"] == "s3://sentinel-test"
    assert "expires_at" in reg["upload_credentials"] and "expiration" not in reg["upload_credentials"]
    doc = {"exit_code": 3, "run_status": "failed", "finished_at": "2026-11-22T10:00:00Z", "data_source": "inline",
           "data_csv": CSV}
    status, fin = s.call(f"/runs/{reg['run_id']}/finish", doc)
    assert status == 200, fin
    # s3 URIs without a prefix: BUCKET/RUN_ID/SEQ
    reg = s.register({})
    doc = {"exit_code": 0, "run_status": "finished", "finished_at": "2026-11-22T10:00:00Z", "data_source": "s3",
           "data_uris": [f"s3://sentinel-test/{reg['run_id']}/000000.csv.gz"]}
    assert s.call(f"/runs/{reg['run_id']}/finish", doc)[0] == 200


@pytest.mark.parametrize("kw, status, says", [
    ({"token": None}, 401, "Authorization"),
    ({"token": "wrong"}, 401, "Authorization"),
    ({"ctype": None}, 415, "Content-Type"),
    ({"ctype": "text/plain"}, 415, "Content-Type"),
    ({"headers": {"Content-Encoding": "gzip"}}, 415, "Content-Encoding"),
    ({"raw": gzip.compress(json.dumps(REGISTER).encode())}, 415, "gzip"),
    ({"raw": base64.b64encode(json.dumps(REGISTER).encode())}, 400, "base64"),
    ({"raw": base64.b64encode(gzip.compress(json.dumps(REGISTER).encode()))}, 400, "base64"),
    ({"raw": json.dumps(base64.b64encode(json.dumps(REGISTER).encode()).decode()).encode()}, 400, "JSON string"),
    ({"raw": b"[1, 2]"}, 400, "not a JSON object"),
    ({"raw": b"{not json"}, 400, "not JSON"),
])
def test_transport_refused(sentinel, kw, status, says):
    s = sentinel()
    got, reply = s.call("/runs", REGISTER, **kw)
    assert got == status and says in reply["detail"], reply
    assert s.logged()["runs"] == {}
    assert s.logged()["requests"][-1]["status"] == status


def with_(**changes):
    doc = dict(REGISTER)
    for k, v in changes.items():
        if v is ...:
            del doc[k]
        else:
            doc[k] = v
    return doc


@pytest.mark.parametrize("doc, says", [
    (with_(pid=1234), "pid"),
    (with_(hostname="box"), "unknown fields: ['hostname']"),
    (with_(job_name=None), "job_name is null"),
    (with_(host_gpu_model=None), "host_gpu_model is null"),
    (with_(tags=["a=b", None]), "tags[1] is null"),
    (with_(command=["python", "train.py"]), "not an array"),
    (with_(command="python train.py"), "not a JSON array"),
    (with_(command="{\"a\":1}"), "non-empty JSON array"),
    (with_(command="[]"), "non-empty JSON array"),
    (with_(command="[1,2]"), "non-empty JSON array"),
    (with_(tags="team=ml"), "tags"),
    (with_(tags=["team"]), "tags"),
    (with_(tags=["=ml"]), "tags"),
    (with_(tags=[{"team": "ml"}]), "tags"),
    (with_(host_vcpus="8"), "host_vcpus"),
    (with_(host_vcpus=8.5), "host_vcpus"),
    (with_(host_vcpus=True), "host_vcpus"),
    (with_(host_gpu_count=-1), "host_gpu_count"),
    (with_(host_memory_mib="15788"), "host_memory_mib"),
    (with_(host_storage_gb=False), "host_storage_gb"),
    (with_(host_hostname=7), "host_hostname must be a string"),
    (with_(cloud_vendor_id=["aws"]), "cloud_vendor_id must be a string"),
    (with_(team=""), "team is empty"),
    (with_(host_server_allocation="maybe"), "dedicated or shared"),
])
def test_register_refused(sentinel, doc, says):
    s = sentinel()
    status, reply = s.call("/runs", doc)
    assert status == 400 and says in reply["detail"], reply
    assert s.logged()["runs"] == {}


@pytest.mark.parametrize("change, says", [
    ({"run_id": "X"}, "run_id is not accepted"),
    ({"extra": 1}, "unknown fields"),
    ({"exit_code": None}, "exit_code is null"),
    ({"exit_code": "0"}, "exit_code must be an integer"),
    ({"exit_code": False}, "exit_code must be an integer"),
    ({"run_status": "ok"}, "run_status"),
    ({"finished_at": "2026-11-22T10:00:00.5Z"}, "finished_at"),
    ({"finished_at": "2026-11-22T10:00:00+00:00"}, "finished_at"),
    ({"finished_at": "2026-02-30T10:00:00Z"}, "not a real time"),
    ({"finished_at": 1795341600}, "finished_at"),
    ({"data_source": "gzip"}, "data_source"),
    ({"data_csv": CSV}, "data_csv with data_source s3"),
    ({"data_uris": []}, "non-empty list"),
    ({"data_uris": "s3://x"}, "non-empty list"),
    ({"data_uris": ["s3://other-bucket/runs/test/RUN/000000.csv.gz"]}, "is not s3://sentinel-test/runs/test/"),
    ({"data_uris": ["s3://sentinel-test/runs/test/RUN/0.csv.gz"]}, "NNNNNN.csv.gz"),
    ({"data_uris": ["RUN0", "RUN2"]}, "skip or repeat"),
    ({"data_uris": ["RUN0", "RUN0"]}, "skip or repeat"),
    ({"data_uris": ["RUN1"]}, "skip or repeat"),
    ({"data_source": "inline", "data_uris": ...}, "data_csv must be a string"),
    ({"data_source": "inline"}, "data_uris with data_source inline"),
    ({"data_source": "inline", "data_uris": ..., "data_csv": base64.b64encode(CSV.encode()).decode()},
     "CSV header"),
    ({"data_source": "inline", "data_uris": ..., "data_csv": CSV.split("\n", 1)[1]}, "CSV header"),
    ({"data_source": "inline", "data_uris": ..., "data_csv": CSV + "1795341601.000,3\n"},
     "line 3 has 2 cells where the header has 32"),
    ({"finished_at": ...}, "finished_at is missing"),
])
def test_finish_refused(sentinel, change, says):
    s = sentinel()
    run_id = s.register()["run_id"]
    doc = finish_s3(s, run_id)
    for k, v in change.items():
        if v is ...:
            del doc[k]
        elif k == "data_uris" and isinstance(v, list):
            doc[k] = [u.replace("RUN0", uris(s, run_id, 1)[0]).replace("RUN1", uris(s, run_id, 2)[1])
                      .replace("RUN2", uris(s, run_id, 3)[2]).replace("RUN", run_id) for u in v]
        else:
            doc[k] = v
    status, reply = s.call(f"/runs/{run_id}/finish", doc)
    assert status == 400 and says in reply["detail"], reply
    assert s.logged()["runs"][run_id]["finish"] is None
    # and the run can still be finished properly
    assert s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))[0] == 200


def test_refresh_and_unknown_runs(sentinel):
    s = sentinel()
    run_id = s.register()["run_id"]
    status, reply = s.call(f"/runs/{run_id}/refresh-credentials", {})
    assert status == 400 and "empty body" in reply["detail"]
    status, reply = s.call(f"/runs/{run_id}/refresh-credentials", ctype=None)
    assert status == 415
    assert s.call("/runs/nope/refresh-credentials")[0] == 404
    assert s.call("/runs/nope/finish", finish_s3(s, "nope"))[0] == 404
    assert s.call("/elsewhere", {})[0] == 404
    assert s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))[0] == 200
    assert s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))[0] == 409
    # credentials for a finished run's batches delivered later (docs/contracts.md §5)
    assert s.call(f"/runs/{run_id}/refresh-credentials")[0] == 200


def test_fail_register_and_runtime_control(sentinel):
    s = sentinel("--fail-register", "2")
    assert s.call("/runs", REGISTER)[0] == 503
    assert s.call("/runs", REGISTER)[0] == 503
    run_id = s.register()["run_id"]
    state = s.control(fail_refresh=1, fail_finish=1, fail_status=500)
    assert state["fail_refresh"] == 1 and state["fail_register"] == 0
    assert s.call(f"/runs/{run_id}/refresh-credentials")[0] == 500
    assert s.call(f"/runs/{run_id}/refresh-credentials")[0] == 200
    assert s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))[0] == 500
    assert s.call(f"/runs/{run_id}/finish", finish_s3(s, run_id))[0] == 200
    assert [r["status"] for r in s.logged()["requests"]] == [503, 503, 200, 500, 200, 500, 200]
    status, reply = s.call("/__control", {"no_such_mode": 1}, token=None)
    assert status == 400


def test_rotation_short_ttl_and_token_file(sentinel):
    s = sentinel("--rotate-token", "--cred-ttl", "30")
    before = time.time()
    reg = s.register()
    first = reg["upload_credentials"]
    expires = calendar.timegm(time.strptime(first["expiration"], "%Y-%m-%dT%H:%M:%SZ"))
    assert before + 30 - 2 <= expires <= time.time() + 30 + 1
    s.control(cred_ttl=-60)  # already expired: a client must refresh at once
    status, ref = s.call(f"/runs/{reg['run_id']}/refresh-credentials")
    second = ref["upload_credentials"]
    assert status == 200 and second["session_token"] != first["session_token"]
    assert calendar.timegm(time.strptime(second["expiration"], "%Y-%m-%dT%H:%M:%SZ")) < time.time()
    tf = json.loads(s.token_file.read_text())
    assert tf["current"] == second["session_token"]
    assert set(tf["tokens"]) == {first["session_token"], second["session_token"]}
    assert tf["tokens"][first["session_token"]] > time.time() > tf["tokens"][second["session_token"]]
    assert s.logged()["runs"][reg["run_id"]]["tokens"] == [first["session_token"], second["session_token"]]


def test_stall_then_down(sentinel):
    s = sentinel("--stall-secs", "60")
    with pytest.raises((socket.timeout, urllib.error.URLError)):
        s.call("/runs", REGISTER, timeout=0.5)
    s.control(stall_secs=0)
    s.register()
    assert [r["stalled"] for r in s.logged()["requests"]] == [60, 0]
    s.control(down=True)
    assert s.p.wait(timeout=10) == 0
    with pytest.raises(urllib.error.URLError):
        s.call("/runs", REGISTER, timeout=5)
