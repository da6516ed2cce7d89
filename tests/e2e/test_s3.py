"""The S3 PUT of the streaming uploads (rt_s3_put through the s3-put tool) against the strict
Signature V4 stand-in (tests/stubs/s3_sigv4.py) in front of s3rver: a good PUT lands byte for
byte; a wrong secret, token, access key or region is refused there; hand-made requests without
x-amz-content-sha256, with a stale date, without the token or with unsigned headers are refused
too; fault modes; the region asked of the bucket; no secret in any error message."""
import datetime
import gzip
import hashlib
import hmac
import http.client
import http.server
import os
import socket
import subprocess
import sys
import threading

import pytest

from conftest import BUILD_DIR, REPO

sys.path.insert(0, os.path.join(REPO, "tests", "stubs"))
import s3_sigv4  # noqa: E402

S3_PUT = os.path.join(BUILD_DIR, "s3-put")
AK, SK, TOKEN = "AKIDTEST", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYSECRETKEY", "FwoGZXIvYXdzTOKEN-0123456789-abcdefABCDEF"
REGION = "eu-central-1"


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    ok, why = s3_sigv4.s3rver_available()
    if not ok:
        pytest.skip(f"s3rver unavailable: {why}")
    if not os.path.exists(S3_PUT):
        pytest.skip(f"{S3_PUT} not built")
    d = tmp_path_factory.mktemp("s3")
    stub = s3_sigv4.start(d, secret=SK, token=TOKEN, access_key=AK, region=REGION)
    assert stub.upstream.startswith("s3rver "), stub.upstream
    stub.dir = os.path.join(str(d), "s3rver")
    yield stub
    stub.stop()


@pytest.fixture
def s3_clean(s3):
    s3.control(fail_first=0, hang_secs=0, fail_status=500)
    yield s3
    s3.control(fail_first=0, hang_secs=0, fail_status=500)


def gz_body(n_rows=2500):
    """A gzip member of a CSV like the tracker's, about 100 KB."""
    rows = ["timestamp,cpu_usage,memory_used_mib,disk_read_bytes"]
    for i in range(n_rows):
        rows.append(f"{1700000000 + i},{(i * 37) % 800 / 100:.2f},{1024 + (i * 7919) % 4096},{(i * 104729) % 10 ** 9}")
    return gzip.compress(("\n".join(rows) + "\n").encode() + os.urandom(60000))


def put(tmp_path, endpoint, key, body, env_over=None, repeat=1, region=REGION):
    f = tmp_path / "body.gz"
    f.write_bytes(body)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK, AWS_SESSION_TOKEN=TOKEN)
    env.pop("AWS_REGION", None)
    if region:
        env["AWS_REGION"] = region
    env.update(env_over or {})
    return subprocess.run([S3_PUT, endpoint, "bkt", key, str(f), str(repeat)], capture_output=True, text=True,
                          env=env, timeout=120)


def assert_no_secret(*texts, secrets=(SK, TOKEN)):
    for t in texts:
        for s in secrets:
            assert s not in t


def test_clock_skew_named(tmp_path):
    """A signature refused for clock skew (the machine's wall clock an hour behind: the fake-clock
    shim) is named as such, not only as HTTP 403 (the stand-in's own store: no s3rver needed)."""
    shim = os.path.join(BUILD_DIR, "libfake-clock.so")
    if not os.path.exists(S3_PUT) or not os.path.exists(shim):
        pytest.skip("s3-put or the fake-clock shim not built")
    stub = s3_sigv4.start(tmp_path, secret=SK, token=TOKEN, access_key=AK, region=REGION, s3rver=False)
    try:
        off = tmp_path / "offset"
        off.write_text("-3600")
        r = put(tmp_path, stub.url, "skewed", b"x", env_over={"LD_PRELOAD": shim, "FAKE_CLOCK_FILE": str(off)})
    finally:
        stub.stop()
    assert r.returncode != 0, r.stdout
    assert "HTTP 403 RequestTimeTooSkewed (refused for clock skew" in r.stderr + r.stdout, r.stderr


# ---- an independent SigV4 signer for hand-made requests ----

def sign(method, path, body, headers, secret=SK, when=None, region=REGION, service="s3", signed=None,
         payload_hash=None):
    """Returns headers (with Authorization) for a request; signed: names to sign (default all)."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    h = {k.lower(): v for k, v in headers.items()}
    h["x-amz-date"] = amz_date
    ph = payload_hash if payload_hash is not None else hashlib.sha256(body).hexdigest()
    if ph != "":
        h["x-amz-content-sha256"] = ph
    names = sorted(signed if signed is not None else h.keys())
    canonical = "\n".join([method, path, "", "".join(f"{n}:{h[n].strip()}\n" for n in names), ";".join(names),
                           ph or hashlib.sha256(body).hexdigest()])
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (amz_date[:8], region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    h["authorization"] = f"AWS4-HMAC-SHA256 Credential={AK}/{scope}, SignedHeaders={';'.join(names)}, Signature={sig}"
    return h


def raw(port, method, path, body, headers):
    """Sends exactly these headers (host included); returns (status, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in headers.items():
            c.putheader(k, v)
        c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        return r.status, r.read().decode(errors="replace")
    finally:
        c.close()


def base_headers(port, token=TOKEN):
    h = {"host": f"127.0.0.1:{port}", "content-type": "application/gzip"}
    if token is not None:
        h["x-amz-security-token"] = token
    return h


# ---- through the library ----

def test_good_put_lands(s3_clean, tmp_path):
    body = gz_body()
    key = "prefix/run-1/000000.csv.gz"
    r = put(tmp_path, s3_clean.url, key, body)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].startswith("status=200 ")
    # in s3rver's store, byte for byte, and listed by the stand-in
    with open(os.path.join(s3_clean.dir, "bkt", key + "._S3rver_object"), "rb") as f:
        assert f.read() == body
    assert s3_clean.object("bkt", key) == body
    assert {"bucket": "bkt", "key": key, "size": len(body), "sha256": hashlib.sha256(body).hexdigest()} \
        in s3_clean.objects()
    # and read back through the checker with a signed GET
    st, got = raw(s3_clean.port, "GET", "/bkt/" + key, b"", sign("GET", "/bkt/" + key, b"", base_headers(s3_clean.port)))
    assert st == 200


def test_large_put(s3_clean, tmp_path):
    """Above 1 MiB libcurl adds its own (unsigned) Expect: 100-continue; the PUT still verifies."""
    body = os.urandom(3 * 1024 * 1024)
    r = put(tmp_path, s3_clean.url, "large/000000.csv.gz", body)
    assert r.returncode == 0, r.stderr
    assert s3_clean.object("bkt", "large/000000.csv.gz") == body


def test_cpu_per_put(s3_clean, tmp_path):
    """Prints the CPU time of a ~100 KB PUT (the first one loads libcurl and libcrypto)."""
    body = gz_body()
    r = put(tmp_path, s3_clean.url, "bench/000000.csv.gz", body, repeat=20)
    assert r.returncode == 0, r.stderr
    cpu = [float(l.split("cpu_ms=")[1].split()[0]) for l in r.stdout.splitlines() if l.startswith("status=200")]
    assert len(cpu) == 20
    later = sorted(cpu[1:])
    print(f"\nS3 PUT of {len(body)} gzip bytes: first {cpu[0]:.3f} ms CPU, then median {later[len(later) // 2]:.3f} ms"
          f" (min {later[0]:.3f}, max {later[-1]:.3f})")


def test_key_encoding(s3_clean, tmp_path):
    key = "p q/ü+=&$@,;:/a~b_c.d-e/000001.csv.gz"
    r = put(tmp_path, s3_clean.url, key, b"\x1f\x8bpayload")
    assert r.returncode == 0, r.stderr
    assert s3_clean.object("bkt", key) == b"\x1f\x8bpayload"


@pytest.mark.parametrize("env_over,code", [
    ({"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYWRONGKEY"}, "SignatureDoesNotMatch"),
    ({"AWS_SESSION_TOKEN": "FwoGZXIvYXdzWRONG-TOKEN-9876543210"}, "InvalidToken"),
    ({"AWS_SESSION_TOKEN": ""}, "InvalidToken"),
    ({"AWS_ACCESS_KEY_ID": "AKIDOTHER"}, "InvalidAccessKeyId"),
    ({"AWS_REGION": "us-east-1"}, "AuthorizationHeaderMalformed"),
])
def test_refused(s3_clean, tmp_path, env_over, code):
    key = f"refused/{code}.csv.gz"
    r = put(tmp_path, s3_clean.url, key, gz_body(100), env_over=env_over)
    assert r.returncode == 1
    assert "status=403 " in r.stdout
    assert f"HTTP 403 {code}" in r.stderr
    assert_no_secret(r.stdout, r.stderr, secrets=(SK, TOKEN, env_over.get("AWS_SECRET_ACCESS_KEY", SK),
                                                   env_over.get("AWS_SESSION_TOKEN") or TOKEN))
    assert s3_clean.object("bkt", key) is None
    assert not os.path.exists(os.path.join(s3_clean.dir, "bkt", key + "._S3rver_object"))


def test_signature_error_echo_is_redacted(s3_clean, tmp_path):
    """Like AWS, the checker's SignatureDoesNotMatch echoes the canonical request, token inside:
    the library's message leaves it out."""
    h = sign("PUT", "/bkt/echo", b"x", base_headers(s3_clean.port), secret="not-the-secret")
    st, text = raw(s3_clean.port, "PUT", "/bkt/echo", b"x", h)
    assert st == 403 and "SignatureDoesNotMatch" in text and TOKEN in text
    r = put(tmp_path, s3_clean.url, "echo", b"x", env_over={"AWS_SECRET_ACCESS_KEY": "not-the-secret"})
    assert "SignatureDoesNotMatch" in r.stderr
    assert_no_secret(r.stdout, r.stderr, secrets=(TOKEN, "not-the-secret"))


# ---- hand-made requests ----

def test_hand_signed_request_accepted(s3_clean):
    """The test's own signer agrees with the checker (so the refusals below are for their reason)."""
    body = b"hand made"
    st, text = raw(s3_clean.port, "PUT", "/bkt/hand/ok", body, sign("PUT", "/bkt/hand/ok", body, base_headers(s3_clean.port)))
    assert st == 200, text
    assert s3_clean.object("bkt", "hand/ok") == body


@pytest.mark.parametrize("case,code", [
    ("no_content_sha256", "MissingContentSha256"),
    ("unsigned_payload", "XAmzContentSHA256Mismatch"),
    ("wrong_payload_hash", "XAmzContentSHA256Mismatch"),
    ("stale_date", "RequestTimeTooSkewed"),
    ("future_date", "RequestTimeTooSkewed"),
    ("no_token", "InvalidToken"),
    ("token_not_signed", "AccessDenied"),
    ("host_not_signed", "AccessDenied"),
    ("wrong_service", "AuthorizationHeaderMalformed"),
    ("wrong_region", "AuthorizationHeaderMalformed"),
    ("no_authorization", "AccessDenied"),
    ("body_changed", "XAmzContentSHA256Mismatch"),
    ("header_changed", "SignatureDoesNotMatch"),
])
def test_hand_made_refused(s3_clean, case, code):
    port = s3_clean.port
    body = b"payload of a batch"
    path = f"/bkt/hand/{case}"
    hdrs = base_headers(port, token=None if case == "no_token" else TOKEN)
    now = datetime.datetime.now(datetime.timezone.utc)
    kw = {}
    if case == "no_content_sha256":
        kw["payload_hash"] = ""
    elif case == "unsigned_payload":
        kw["payload_hash"] = "UNSIGNED-PAYLOAD"
    elif case == "wrong_payload_hash":
        kw["payload_hash"] = hashlib.sha256(b"other").hexdigest()
    elif case == "stale_date":
        kw["when"] = now - datetime.timedelta(minutes=20)
    elif case == "future_date":
        kw["when"] = now + datetime.timedelta(minutes=16)
    elif case == "wrong_service":
        kw["service"] = "s3x"
    elif case == "wrong_region":
        kw["region"] = "us-west-2"
    h = sign("PUT", path, body, hdrs, **kw)
    names = h["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    if case in ("token_not_signed", "host_not_signed"):
        drop = "x-amz-security-token" if case == "token_not_signed" else "host"
        h = sign("PUT", path, body, hdrs, signed=[n for n in names if n != drop], **kw)
    if case == "no_authorization":
        del h["authorization"]
    if case == "body_changed":
        body = b"payload of another batch"
    if case == "header_changed":
        h["content-type"] = "text/plain"
    st, text = raw(port, "PUT", path, body, h)
    assert st == 403, text
    assert f"<Code>{code}</Code>" in text
    assert s3_clean.object("bkt", path[len("/bkt/"):]) is None


# ---- fault modes, region, failing servers ----

def test_fail_first_then_recover(s3_clean, tmp_path):
    s3_clean.control(fail_first=2)
    for i in range(2):
        r = put(tmp_path, s3_clean.url, "faults/000000.csv.gz", b"batch")
        assert r.returncode == 1 and "HTTP 500 InternalError" in r.stderr
    assert s3_clean.object("bkt", "faults/000000.csv.gz") is None
    r = put(tmp_path, s3_clean.url, "faults/000000.csv.gz", b"batch")
    assert r.returncode == 0, r.stderr
    state = s3_clean.control()
    assert state["fail_first"] == 0 and state["failed"] >= 2


def test_hang_mode(s3_clean):
    s3_clean.control(hang_secs=30)
    body = b"slow"
    h = sign("PUT", "/bkt/hang/1", body, base_headers(s3_clean.port))
    c = http.client.HTTPConnection("127.0.0.1", s3_clean.port, timeout=1)
    with pytest.raises(socket.timeout):
        c.request("PUT", "/bkt/hang/1", body=body, headers=h)
        c.getresponse()
    c.close()
    s3_clean.control(hang_secs=0)  # the hanging PUT ends now and is stored
    h = sign("PUT", "/bkt/hang/2", body, base_headers(s3_clean.port))
    st, text = raw(s3_clean.port, "PUT", "/bkt/hang/2", body, h)
    assert st == 200, text


def test_region_asked_of_the_bucket(tmp_path):
    """Without AWS_REGION the tool asks the bucket (HEAD, x-amz-bucket-region) and signs for it;
    this stand-in keeps objects itself (no s3rver needed)."""
    if not os.path.exists(S3_PUT):
        pytest.skip(f"{S3_PUT} not built")
    stub = s3_sigv4.start(tmp_path, secret=SK, token=TOKEN, access_key=AK, region="ap-southeast-2", s3rver=False)
    try:
        assert stub.upstream == "store"
        r = put(tmp_path, stub.url, "k/000000.csv.gz", b"gz", region=None)
        assert r.returncode == 0, r.stderr
        assert "region=ap-southeast-2" in r.stdout
        assert stub.object("bkt", "k/000000.csv.gz") == b"gz"
    finally:
        stub.stop()


class EchoHandler(http.server.BaseHTTPRequestHandler):
    """A failing S3 that echoes every header it got (the token too) in its error."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_PUT(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        echo = f"secret {SK}, token {self.headers.get('x-amz-security-token')}; " + \
            "".join(f"{k}={v};" for k, v in self.headers.items())
        body = f"<Error><Code>InternalError</Code><Message>{echo}</Message></Error>".encode()
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_PUT


def test_failing_server_messages_hold_no_secret(tmp_path):
    if not os.path.exists(S3_PUT):
        pytest.skip(f"{S3_PUT} not built")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        r = put(tmp_path, f"http://127.0.0.1:{srv.server_address[1]}", "k", b"x", region=None)
        assert r.returncode == 1
        assert "HTTP 500 InternalError" in r.stderr and "[redacted]" in r.stderr
        assert_no_secret(r.stdout, r.stderr)
    finally:
        srv.shutdown()
        srv.server_close()
    # nobody listening: a transport error before anything was sent, status -1 (nothing stored)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r = put(tmp_path, f"http://127.0.0.1:{port}", "k", b"x")
    assert r.returncode == 1 and "status=-1 " in r.stdout
    assert_no_secret(r.stdout, r.stderr)


def test_token_file_follows_the_sentinel_credentials(tmp_path):
    """--token-file: the credentials the Sentinel stand-in issued, read per request: a listed
    token still valid is accepted, an expired one is ExpiredToken, an unlisted one InvalidToken."""
    import json
    import time
    tf = tmp_path / "tokens.json"
    now = time.time()
    tf.write_text(json.dumps({"access_key": AK, "secret_key": SK, "current": "ST-2",
                              "tokens": {"ST-1": now - 10, "ST-2": now + 3600}}))
    stub = s3_sigv4.start(tmp_path, secret="unused", token="unused", s3rver=False, extra=("--token-file", str(tf)))
    try:
        body = gz_body()
        assert put(tmp_path, stub.url, "k/000000.csv.gz", body, {"AWS_SESSION_TOKEN": "ST-2"}).returncode == 0
        r = put(tmp_path, stub.url, "k/000001.csv.gz", body, {"AWS_SESSION_TOKEN": "ST-1"})
        assert r.returncode != 0 and "ExpiredToken" in r.stdout + r.stderr
        r = put(tmp_path, stub.url, "k/000002.csv.gz", body, {"AWS_SESSION_TOKEN": "ST-9"})
        assert r.returncode != 0 and "InvalidToken" in r.stdout + r.stderr
    finally:
        stub.stop()
