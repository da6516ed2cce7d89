"""The peers and helpers of test_rust_sentinel.py and test_rust_sentinel_s3.py (the Rust
tool's Sentinel unit tests as request shapes against our stream): the suite's strict Sentinel
stand-in with the S3 Signature V4 checker in its in-memory store mode, a scripted peer playing
both the API and S3 that records every request (as the Rust tests' mock TCP servers do), the
tool run on a real job with SENTINEL_API_TOKEN set, and two runs shared by the tests of a module
(one whose batches reach S3, one whose every PUT fails so that the rows go inline)."""
import hashlib
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO, TIMEOUT_SCALE, TRACKER, tracker_env

STUBS = os.path.join(REPO, "tests", "stubs")
TOKEN = "rust-port-api-token-SECRET"
AK, SK, ST = "ASIAPORTTEST", "port/test+SECRETKEY", "PortSessionTOKEN"
BUCKET, PREFIX = "bkt", "runs/port"
RUST_ARGV = ["true", "--cpu", "4", "--vm", "1", "--vm-bytes", "12024M", "--timeout", "63s"]
FINISH_INLINE = {"exit_code", "run_status", "finished_at", "data_source", "data_csv"}
FINISH_S3 = {"exit_code", "run_status", "finished_at", "data_source", "data_uris"}
ISO_Z = re.compile(r"\A(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z\Z")

# ---- peers -------------------------------------------------------------------------------------------


class StandIn:
    """The suite's Sentinel stand-in and S3 checker (in-memory store), stopped by their pids."""

    def __init__(self, tmp, *flags, s3_flags=()):
        sys.path.insert(0, STUBS)
        import s3_sigv4
        self.log = tmp / "sentinel.json"
        tokens = tmp / "tokens.json"
        self.s3 = s3_sigv4.start(tmp, secret=SK, token=ST, buckets=(BUCKET,), access_key=AK, s3rver=False,
                                 extra=("--token-file", str(tokens), *s3_flags))
        self.p = subprocess.Popen(["/usr/bin/python3", os.path.join(STUBS, "sentinel_server.py"), "--token", TOKEN,
                                   "--log", str(self.log), "--bucket", BUCKET, "--prefix", PREFIX, "--access-key",
                                   AK, "--secret-key", SK, "--session-token", ST, "--token-file", str(tokens),
                                   "--s3-url", self.s3.url, *flags], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.p.stdout.readline())}"

    def doc(self):
        return json.loads(self.log.read_text())

    def run(self):
        runs = self.doc()["runs"]
        assert len(runs) == 1, runs
        return next(iter(runs.items()))

    def requests(self, suffix):
        return [r for r in self.doc()["requests"] if r["path"].endswith(suffix)]

    def stop(self):
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGTERM)
            self.p.wait(10)
        self.s3.stop()


def started_standin(tmp, *flags, s3_flags=()):
    try:
        return StandIn(tmp, *flags, s3_flags=s3_flags)
    except RuntimeError as e:
        pytest.skip(f"the S3 checker does not start here: {e}")


class Peer:
    """A scripted peer playing both the Sentinel API (paths under /runs) and S3 (path style,
    /BUCKET/KEY), recording every request: (method, path, headers with lower-case names, body)."""

    def __init__(self, register=None, finish_reply=None, region="eu-central-1"):
        self.seen = []
        self.register = register or {"run_id": "run-xyz", "upload_uri_prefix": f"s3://{BUCKET}/{PREFIX}",
                                     "upload_credentials": creds()}
        self.finish_reply = finish_reply or {"run_id": "run-xyz", "run_status": "finished"}
        peer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def answer(self, status, body=b"", ctype="application/json", extra=None):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.send_header("x-amz-bucket-region", region)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                peer.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if not self.path.startswith("/runs"):  # a stored PUT has its ETag, as S3 gives it
                    return self.answer(200 if self.command in ("PUT", "HEAD") else 403, b"", "application/xml",
                                       {"ETag": '"%s"' % hashlib.md5(body).hexdigest()} if self.command == "PUT" else {})
                if self.path == "/runs":
                    reply = peer.register
                elif self.path.endswith("/refresh-credentials"):
                    reply = {"upload_credentials": creds()}
                else:
                    reply = peer.finish_reply
                self.answer(200, json.dumps(reply).encode())

            do_GET = do_POST = do_PUT = do_HEAD = any

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.srv.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def api(self, suffix):
        return [(p, h, b) for m, p, h, b in self.seen if p.startswith("/runs") and p.endswith(suffix)]

    def puts(self):
        return [(p, h, b) for m, p, h, b in self.seen if m == "PUT"]

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


def creds(expiry="2099-01-01T00:00:00Z", field="expiration"):
    return {"access_key": AK, "secret_key": SK, "session_token": ST, field: expiry}


@pytest.fixture
def peer():
    made = []

    def make(**kw):
        p = Peer(**kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.stop()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


# ---- running the tool ------------------------------------------------------------------------------------


def stream_env(tmp, api_url, s3_url, **extra):
    env = tracker_env(SENTINEL_API_TOKEN=TOKEN, SENTINEL_API_URL=api_url, AWS_ENDPOINT_URL_S3=s3_url,
                      AWS_REGION="eu-central-1", TRACKER_UPLOAD_INTERVAL="0.5", TRACKER_FINISH_TIMEOUT="3",
                      XDG_STATE_HOME=str(tmp / "state"))
    env.update({k: v for k, v in extra.items() if v is not None})
    for k in [k for k, v in extra.items() if v is None]:
        env.pop(k, None)
    return env


def track(tmp, env, cmd, args=()):
    """Runs the tool on cmd with -f csv -o local.csv; returns (CompletedProcess, local rows)."""
    out = tmp / "local.csv"
    p = subprocess.run([TRACKER, "-i", "0.2", "-f", "csv", "-o", str(out), *args, "--", *cmd], env=env,
                       capture_output=True, text=True, timeout=60 * TIMEOUT_SCALE)
    for text in (p.stdout, p.stderr, out.read_text() if out.exists() else ""):
        for secret in (TOKEN, SK, ST):
            assert secret not in text, "a secret leaked"
    lines = out.read_text().splitlines() if out.exists() else []
    return p, lines[1:]


def spilled(tmp):
    d = tmp / "state" / "resource-tracker"
    return sorted(d.glob("*.csv.gz")) if d.exists() else []


def csv_data_rows(text):
    lines = text.splitlines()
    assert lines and lines[0].startswith("timestamp,system_processes,"), text[:200]
    return lines[1:]


@pytest.fixture(scope="module")
def s3_run(tmp_path_factory):
    """One wrapped run that reaches S3 (exit 0), with a job name and the Rust test's argv."""
    tmp = tmp_path_factory.mktemp("s3run")
    api = started_standin(tmp)
    try:
        p, local = track(tmp, stream_env(tmp, api.url, api.s3.url), RUST_ARGV, ["--job-name", "test-job"])
        yield api, p, local
    finally:
        api.stop()


@pytest.fixture(scope="module")
def inline_run(tmp_path_factory):
    """One wrapped run whose every S3 PUT fails (500): the finish carries the rows inline."""
    tmp = tmp_path_factory.mktemp("inlinerun")
    api = started_standin(tmp, s3_flags=("--fail-first", "100000"))
    try:
        t0 = time.time()
        p, local = track(tmp, stream_env(tmp, api.url, api.s3.url, TRACKER_FINISH_TIMEOUT="2"),
                         ["sh", "-c", "sleep 0.6"])
        yield api, p, local, (t0, time.time())
    finally:
        api.stop()


def finish_of(api):
    run_id, run = api.run()
    fin = api.requests(f"/runs/{run_id}/finish")
    assert len(fin) == 1 and fin[0]["status"] == 200, fin
    return run_id, fin[0]
