"""The Rust resource-tracker's Sentinel unit tests of src/sentinel/mod.rs and run.rs (the
#[cfg(test)] modules at 3825a8c; s3.rs and upload.rs: test_rust_sentinel_s3.py) re-expressed as
request shapes against our stream: the tool runs a real job with SENTINEL_API_TOKEN set and the
requests it sends are checked. Each test has the Rust test's name; where a Rust test checks an
internal helper (base64, date arithmetic, a shared buffer) with no request to look at, it has no
counterpart (listed at the end of test_rust_sentinel_s3.py). Peers and helpers:
rust_sentinel_util.py.

Two peers, both on 127.0.0.1: the suite's strict Sentinel stand-in (tests/stubs/sentinel_server.py)
with the S3 Signature V4 checker in its in-memory store mode (tests/stubs/s3_sigv4.py --store,
no s3rver needed), which refuse any shape docs/contracts.md §5 forbids; and, where a Rust test
scripts a reply the stand-in does not give (a realistic RunFinishResponse, an upload prefix that
is not s3://, an expiry with +00:00) or reads the request headers of a PUT, a scripted peer of
rust_sentinel_util.py that plays both the API and S3 and records every request, as the Rust tests' mock TCP
servers do. Where ours is deliberately different the test asserts ours and says "Rust:" and why."""
import calendar
import gzip
import json
import signal
import socket
import subprocess
import time

import pytest

from rust_sentinel_util import (  # noqa: F401 (the fixtures are used by name)
    BUCKET, PREFIX, RUST_ARGV, FINISH_INLINE, FINISH_S3, ISO_Z, TOKEN, TIMEOUT_SCALE, TRACKER, creds,
    closed_port, csv_data_rows, finish_of, inline_run, peer, s3_run, spilled, started_standin, stream_env,
    track, tracker_env)


# ---- mod.rs: SentinelClient::from_env ----------------------------------------------------------------------


def no_connection(tmp, **env_extra):
    """Runs a job with the API and S3 addresses on listening sockets; asserts nobody connected
    and no spill directory was made; returns the run's stderr."""
    listeners = [socket.socket() for _ in range(2)]
    for s in listeners:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        s.setblocking(False)
    urls = [f"http://127.0.0.1:{s.getsockname()[1]}" for s in listeners]
    env = tracker_env(SENTINEL_API_URL=urls[0], AWS_ENDPOINT_URL_S3=urls[1], TRACKER_UPLOAD_INTERVAL="0.2",
                      XDG_STATE_HOME=str(tmp / "state"), **env_extra)
    p = subprocess.run([TRACKER, "-q", "-i", "0.1", "--", "sleep", "0.6"], env=env, capture_output=True, text=True,
                       timeout=30 * TIMEOUT_SCALE)
    assert p.returncode == 0, p.stderr
    for s in listeners:
        with pytest.raises(BlockingIOError):
            s.accept()
        s.close()
    assert not (tmp / "state").exists()
    return p.stderr


def test_no_token_returns_none(tmp_path):
    """T-STR-01: without SENTINEL_API_TOKEN no connection is made."""
    no_connection(tmp_path)


def test_empty_token_returns_none(tmp_path):
    """An empty SENTINEL_API_TOKEN is no token: no connection, and no complaint."""
    assert no_connection(tmp_path, SENTINEL_API_TOKEN="") == ""


def test_valid_token_returns_some_with_defaults(tmp_path):
    """T-STR-07: a token and no SENTINEL_API_URL: the default API, https://api.sentinel.sparecores.net.
    Nothing may leave this machine, so the run is in a network namespace of its own (no route out,
    no resolver reachable): the one warning names the default host it could not reach, the job's
    status is kept and its rows are kept in the spill directory."""
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn (a user and network namespace) is not allowed here")
    env = stream_env(tmp_path, None, closed_port(), SENTINEL_API_URL=None, TRACKER_FINISH_TIMEOUT="1")
    p = subprocess.run(["unshare", "-rn", TRACKER, "-q", "-i", "0.2", "--", "sh", "-c", "sleep 0.3; exit 4"],
                       env=env, capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
    assert p.returncode == 4, p.stderr
    assert "api.sentinel.sparecores.net" in p.stderr, p.stderr
    assert TOKEN not in p.stderr
    assert spilled(tmp_path)


def test_api_url_env_override(tmp_path, peer):
    """T-STR-08: SENTINEL_API_URL is where every API call goes."""
    pr = peer()
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["true"])
    assert p.returncode == 0, p.stderr
    assert [x[0] for x in pr.api("")] == ["/runs", "/runs/run-xyz/finish"]


# ---- run.rs: start_run ------------------------------------------------------------------------------------


def test_start_run_posts_to_runs_endpoint(s3_run):
    """T-EOR-04: POST /runs with the bearer token and JSON, job_name in the body, no pid."""
    api, p, _ = s3_run
    assert p.returncode == 0, p.stderr
    reg = api.requests("/runs")
    assert len(reg) == 1 and reg[0]["method"] == "POST" and reg[0]["status"] == 200
    assert reg[0]["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert reg[0]["headers"]["Content-Type"].split(";")[0] == "application/json"
    assert reg[0]["json"]["job_name"] == "test-job"
    assert '"pid"' not in reg[0]["body"]


def test_start_run_includes_command_array_in_payload(s3_run):
    """T-CMD-01: the wrapped command as a string holding a JSON array, exactly as serde_json
    writes it (compact)."""
    api, _, _ = s3_run
    body = api.requests("/runs")[0]["body"]
    expected = '"command":' + json.dumps(json.dumps(RUST_ARGV, separators=(",", ":")))
    assert expected in body, body


def test_start_run_omits_command_when_standalone(tmp_path, peer):
    """T-CMD-02: no command (the whole machine until SIGTERM): no "command" member."""
    pr = peer()
    env = stream_env(tmp_path, pr.url, pr.url)
    t = subprocess.Popen([TRACKER, "-q", "-i", "0.2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        deadline = time.monotonic() + 20 * TIMEOUT_SCALE
        while not pr.api("/runs") and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        t.send_signal(signal.SIGTERM)
        t.communicate(timeout=30 * TIMEOUT_SCALE)
    reg = pr.api("/runs")
    assert len(reg) == 1
    assert "command" not in json.loads(reg[0][2])
    assert t.returncode == 0


# ---- run.rs: close_run, inline ------------------------------------------------------------------------------


def test_close_run_posts_to_finish_endpoint(inline_run):
    """T-EOR-01: POST /runs/{run_id}/finish: run_id in the path only, data_source inline, the CSV
    raw, finished_at, run_status finished and exit_code 0."""
    api, p, _, _ = inline_run
    assert p.returncode == 0
    run_id, fin = finish_of(api)
    assert fin["method"] == "POST" and fin["path"] == f"/runs/{run_id}/finish"
    body = fin["body"]
    assert '"run_id"' not in body
    assert '"data_source":"inline"' in body
    assert '"s3"' not in body
    assert '"data_csv"' in body and "timestamp,system_processes" in body
    assert '"finished_at"' in body
    assert '"run_status":"finished"' in body and '"exit_code":0' in body


def test_close_run_request_omits_run_id(inline_run, s3_run):
    """T-EOR-02, both routes."""
    for api in (inline_run[0], s3_run[0]):
        _, fin = finish_of(api)
        assert "run_id" not in fin["json"]


def test_close_run_data_source_inline(inline_run):
    """T-EOR-03."""
    _, fin = finish_of(inline_run[0])
    assert fin["json"]["data_source"] == "inline"
    assert fin["json"]["data_csv"].startswith("timestamp,")
    assert ISO_Z.match(fin["json"]["finished_at"])


def test_close_run_finished_at_omitted_when_none(inline_run, s3_run):
    """T-EOR-06. Rust: finished_at is left out when it has none, which its close_run never
    passes. Ours always knows the end, so finished_at is in every finish, in both routes."""
    for api in (inline_run[0], s3_run[0]):
        assert ISO_Z.match(finish_of(api)[1]["json"]["finished_at"])


def test_close_run_no_extra_fields_in_payload(inline_run):
    """T-FIN-07: RunFinishInline takes no other members (additionalProperties: false)."""
    fin = finish_of(inline_run[0])[1]["json"]
    assert set(fin) <= FINISH_INLINE
    assert "data_source" in fin and "data_csv" in fin


def test_close_run_uses_inline_route_when_no_uris(inline_run):
    """T-S3R-03: no batch reached S3: inline, data_csv present, data_uris absent."""
    api, _, _, _ = inline_run
    fin = finish_of(api)[1]["json"]
    assert fin["data_source"] == "inline" and "data_csv" in fin and "data_uris" not in fin
    assert api.s3.objects() == []


def test_close_run_data_csv_is_raw_csv_not_base64(inline_run):
    """T-FIN-04: data_csv is the CSV text itself: the header, commas, and exactly the rows the run
    wrote locally."""
    _, _, local, _ = inline_run
    data_csv = finish_of(inline_run[0])[1]["json"]["data_csv"]
    assert "," in data_csv and "\n" in data_csv
    assert csv_data_rows(data_csv) == local and local


def test_close_run_finished_at_is_valid_iso8601(inline_run):
    """T-FIN-05: YYYY-MM-DDTHH:MM:SSZ, a real time, between the run's start and its end (Rust: within
    60 s of the test's clock)."""
    _, _, _, (t0, t1) = inline_run
    fa = finish_of(inline_run[0])[1]["json"]["finished_at"]
    m = ISO_Z.match(fa)
    assert m, fa
    secs = calendar.timegm(time.strptime(fa, "%Y-%m-%dT%H:%M:%SZ"))
    assert int(t0) - 1 <= secs <= t1 + 1, (fa, t0, t1)


# ---- run.rs: close_run, exit codes ---------------------------------------------------------------------------


def test_close_run_run_status_finished_for_zero_exit(s3_run):
    """T-FIN-01."""
    fin = finish_of(s3_run[0])[1]["json"]
    assert fin["run_status"] == "finished" and fin["exit_code"] == 0


@pytest.mark.parametrize("code", [1, 2, 127, 130, 255])
def test_close_run_run_status_failed_for_nonzero_exit(tmp_path, peer, code):
    """T-FIN-03: any other exit status is failed, and is the exit_code sent (and ours exits with it)."""
    pr = peer()
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sh", "-c", f"exit {code}"])
    assert p.returncode == code, p.stderr
    fin = pr.api("/finish")
    assert len(fin) == 1
    body = json.loads(fin[0][2])
    assert body["run_status"] == "failed" and body["exit_code"] == code


def test_close_run_run_status_finished_for_sigterm(tmp_path):
    """T-FIN-02: the whole machine tracked until SIGTERM: run_status finished. Rust: exit_code
    left out (its exit status is unknown there). Ours sends exit_code 0, the tracker's own exit
    status after a SIGTERM, because the finish body of docs/contracts.md §5 (as the Python tracker
    0.5 sends it, and as the stand-in enforces) always has an integer exit_code."""
    api = started_standin(tmp_path)
    try:
        env = stream_env(tmp_path, api.url, api.s3.url)
        t = subprocess.Popen([TRACKER, "-q", "-i", "0.2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        deadline = time.monotonic() + 20 * TIMEOUT_SCALE
        while not api.doc()["runs"] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        t.send_signal(signal.SIGTERM)
        _, err = t.communicate(timeout=30 * TIMEOUT_SCALE)
        assert t.returncode == 0, err
        fin = finish_of(api)[1]["json"]
        assert fin["run_status"] == "finished" and fin["exit_code"] == 0
    finally:
        api.stop()


def test_close_run_handles_valid_run_finish_response(tmp_path, peer):
    """T-FIN-06: the real API's 200 reply to finish is a RunFinishResponse {run, processing}: ours
    takes it as done (no warning, nothing kept for a later delivery, the job's status)."""
    reply = {"run": {"run_id": "01959e3a-0001-0000-0000-000000000000", "created_at": "2026-04-03T10:00:00Z",
                     "heartbeat_at": "2026-04-03T10:00:30Z", "finished_at": "2026-04-03T10:01:00Z",
                     "run_status": "finished", "tag_count": 0, "tags": []},
             "processing": {"status": "ok", "rows": 60, "files": None, "duration_ms": 12.5, "error": None}}
    pr = peer(finish_reply=reply)
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sh", "-c", "sleep 0.3; exit 0"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert len(pr.api("/finish")) == 1
    assert spilled(tmp_path) == []


def test_real_api_finish_run_returns_ok(s3_run):
    """T-INT-01 hits the real Sentinel API when a token is set; nothing here leaves 127.0.0.1, so
    the strict stand-in plays it: register and finish both accepted (200), nothing refused."""
    api, p, _ = s3_run
    assert p.returncode == 0 and p.stderr == ""
    assert [r["status"] for r in api.doc()["requests"]] == [200, 200]


# ---- run.rs: close_run, S3 route ----------------------------------------------------------------------------


def test_close_run_uses_s3_route_when_uris_present(s3_run):
    """T-S3R-01: a batch in S3: data_source s3, data_uris the objects' s3:// URIs, no data_csv."""
    api, _, _ = s3_run
    run_id, fin = finish_of(api)
    body = fin["json"]
    assert body["data_source"] == "s3" and "data_csv" not in body
    keys = [o["key"] for o in api.s3.objects()]
    assert body["data_uris"] == [f"s3://{BUCKET}/{k}" for k in keys]
    assert keys == [f"{PREFIX}/{run_id}/{i:06d}.csv.gz" for i in range(len(keys))] and keys


def test_close_run_s3_no_extra_fields(s3_run):
    """T-S3R-02: RunFinishS3 takes no other members."""
    body = finish_of(s3_run[0])[1]["json"]
    assert set(body) <= FINISH_S3 and "data_source" in body and "data_uris" in body


# ---- run.rs: credentials --------------------------------------------------------------------------------------


def test_creds_expiring_soon_far_future(s3_run):
    """Credentials valid for an hour (the stand-in's default) are not refreshed in a short run."""
    api, _, _ = s3_run
    assert api.run()[1]["refreshes"] == 0
    assert api.requests("/refresh-credentials") == []


def test_creds_expiring_soon_past(tmp_path):
    """Credentials that expire within 300 s are refreshed before the next upload (here they live
    200 s: every upload finds them expiring soon)."""
    api = started_standin(tmp_path, "--cred-ttl", "200")
    try:
        p, _ = track(tmp_path, stream_env(tmp_path, api.url, api.s3.url), ["sleep", "1"])
        assert p.returncode == 0, p.stderr
        assert api.run()[1]["refreshes"] >= 1
    finally:
        api.stop()


def test_creds_expiring_soon_unparseable(tmp_path, peer):
    """Rust: an expiry that is not a time is taken as already expired (a refresh before every
    upload). Ours refuses such a reply as a failed registration (one warning naming the member)
    and keeps every row in the spill directory for `resource-tracker upload`: credentials whose
    lifetime cannot be read are not used, and nothing is lost."""
    pr = peer(register={"run_id": "r1", "upload_uri_prefix": f"s3://{BUCKET}/{PREFIX}",
                        "upload_credentials": creds("not-a-date")})
    p, local = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sleep", "0.3"])
    assert p.returncode == 0
    assert "upload_credentials.expiration is not an ISO 8601 time" in p.stderr
    assert pr.puts() == [] and pr.api("/finish") == []
    rows = [r for f in spilled(tmp_path) for r in csv_data_rows(gzip.decompress(f.read_bytes()).decode())]
    assert sorted(rows) == sorted(local) and local


def test_creds_expiring_soon_missing_expiry(tmp_path, peer):
    """run.rs's RawCredentials: an expiry left out of the reply is no error; the credentials are
    used as never expiring (Rust: 2099-01-01): no refresh, the batches go to S3. (Not a Rust test
    of its own: the default its parser gives, checked here as a request shape.)"""
    c = creds()
    del c["expiration"]
    pr = peer(register={"run_id": "r1", "upload_uri_prefix": f"s3://{BUCKET}/{PREFIX}", "upload_credentials": c})
    # a job long enough for two batches: under valgrind the tool's start and registration took
    # most of 0.8 s (one batch, 1 run in the rehearsal)
    job = ["sleep", str(0.8 * min(TIMEOUT_SCALE, 4))]
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url, TRACKER_UPLOAD_INTERVAL="0.2"), job)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert pr.api("/refresh-credentials") == [] and len(pr.puts()) >= 2
    assert json.loads(pr.api("/finish")[0][2])["data_source"] == "s3"


def test_refresh_credentials_updates_context(tmp_path):
    """T-EOR-05: POST /runs/{id}/refresh-credentials, empty body, the bearer token; the uploads
    after it use the new credentials: each session token lives 2 s and is rotated at every issue,
    and the S3 checker takes only tokens issued and not expired, so every object stored after the
    first 2 s was signed with a refreshed one."""
    api = started_standin(tmp_path, "--cred-ttl", "2", "--rotate-token")
    try:
        p, local = track(tmp_path, stream_env(tmp_path, api.url, api.s3.url), ["sleep", "3.5"])
        assert p.returncode == 0, p.stderr
        run_id, run = api.run()
        refs = api.requests("/refresh-credentials")
        assert len(refs) >= 1 and run["refreshes"] == len(refs)
        for r in refs:
            assert r["method"] == "POST" and r["path"] == f"/runs/{run_id}/refresh-credentials"
            assert r["body"] == "" and r["headers"]["Authorization"] == f"Bearer {TOKEN}" and r["status"] == 200
        assert api.s3.rejections() == []
        rows = [r for o in api.s3.objects()
                for r in csv_data_rows(gzip.decompress(api.s3.object(BUCKET, o["key"])).decode())]
        assert sorted(rows) == sorted(local)
    finally:
        api.stop()


@pytest.mark.parametrize("expiry,field", [("2099-06-01T00:00:00+00:00", "expiration"),
                                          ("2099-06-01T00:00:00Z", "expires_at")])
def test_parse_iso8601_secs_with_utc_offset(tmp_path, peer, expiry, field):
    """An expiry written with +00:00 reads as the same time as with Z (and the expires_at alias is
    read as expiration is): far ahead, so no refresh, and the batches go to S3."""
    pr = peer(register={"run_id": "run-xyz", "upload_uri_prefix": f"s3://{BUCKET}/{PREFIX}",
                        "upload_credentials": creds(expiry, field)})
    p, _ = track(tmp_path, stream_env(tmp_path, pr.url, pr.url), ["sleep", "0.5"])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert pr.api("/refresh-credentials") == []
    assert pr.puts()
    assert json.loads(pr.api("/finish")[0][2])["data_source"] == "s3"
