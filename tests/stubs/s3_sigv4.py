#!/usr/bin/python3
"""s3_sigv4.py - a strict S3 stand-in for the tests: verifies AWS Signature V4 for real on every
request, then hands the request to s3rver (the npm S3 store) or keeps the object itself.

Start (stdlib only; it prints its port, then serves until SIGTERM/SIGINT; stop it by its PID):

    s3_sigv4.py --secret SK --token TOK [--access-key AK] [--region eu-central-1] [--token-file F]
                [--s3rver DIR --bucket B ...  |  --upstream http://127.0.0.1:PORT  |  --store]
                [--fail-first N] [--fail-status 500] [--half-first N] [--half-kind error|empty]
                [--hang-secs S] [--max-skew-secs 900]

  --s3rver DIR   start s3rver itself (node tests/stubs/node_modules/s3rver, port 0, data in DIR,
                 every --bucket created); it dies with this process (its own PID, SIGTERM, or
                 PR_SET_PDEATHSIG). Exit status 3 when node or s3rver is missing.
  --upstream URL forward to an s3rver started elsewhere.
  --token-file F the Sentinel stand-in's token file (sentinel_server.py --token-file), read on
                 every request: {"access_key", "secret_key", "tokens": {TOKEN: expires_unix}};
                 it replaces --access-key/--secret/--token: the request's access key must be
                 access_key, its signature must verify with secret_key, and its token must be
                 listed (else InvalidToken) with an expiry still ahead (else ExpiredToken).
  --store        no s3rver: objects are kept in memory (PUT, GET, HEAD of objects only).
  First stdout line: the port (127.0.0.1). Second line: "s3rver PORT" or "store".
  Every reply carries x-amz-bucket-region: REGION (as S3 does, even on a 403).

What it refuses, with 403 and an S3 XML error (<Error><Code>..</Code><Message>..</Message>):
  no or malformed Authorization (AccessDenied / AuthorizationHeaderMalformed), another access key
  when --access-key is given (InvalidAccessKeyId), a wrong region or service in the credential
  scope (AuthorizationHeaderMalformed), X-Amz-Date missing or more than --max-skew-secs off the
  clock (RequestTimeTooSkewed), a missing or wrong X-Amz-Security-Token (InvalidToken), a missing
  x-amz-content-sha256 (MissingContentSha256), one that is not the SHA-256 of the body received,
  UNSIGNED-PAYLOAD included (XAmzContentSHA256Mismatch), host or any x-amz-* header not signed
  (AccessDenied), and a signature that does not match (SignatureDoesNotMatch; like AWS, that
  error echoes the StringToSign and CanonicalRequest, so a client must not print error bodies).

Test endpoints (unsigned, never forwarded):
  GET  /__control        -> {"fail_first": N, "fail_status": 500, "half_first": N, "half_kind": K,
                             "hang_secs": S, "puts": n, "accepted": n, "rejected": n, "failed": n}
  POST /__control        JSON with any of fail_first, fail_status, half_first, half_kind,
                         hang_secs: sets them (from
                         now on; a PUT already hanging ends early when hang_secs drops to 0).
                         Replies as GET.
  GET  /__objects        -> [{"bucket": B, "key": K, "size": n, "sha256": hex}, ...] every PUT
                         that was accepted and stored, in order (a key written twice is listed
                         twice).
  GET  /__rejections     -> [{"method": M, "path": P, "code": "SignatureDoesNotMatch"}, ...]
  GET  /__object/B/K     -> the stored bytes of object K in bucket B (404 when absent)

Fault modes apply to signed, valid PUTs only (after the body is read): the first fail_first of
them get fail_status (an S3 InternalError body) and are not stored; then the next half_first of
them get a half answer, 200 without an ETag, and are not stored either (half_kind "error": an S3
InternalError document as the body, as S3 may answer 200 and fail; "empty": no body, as a proxy
that lost the reply's headers); then, while hang_secs > 0, each waits that long before it is
stored and answered.

As a module: start(tmpdir, secret=..., token=..., ...) -> S3Stub with .port, .url, .pid, stop().
"""
import argparse
import ctypes
import datetime
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
S3RVER_JS = os.path.join(HERE, "node_modules", "s3rver", "bin", "s3rver.js")
AUTH_RE = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^,]+),\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$")


def s3rver_available():
    """(True, "") when node and s3rver can be run, else (False, reason)."""
    node = shutil.which("node")
    if not node:
        return False, "node is not installed"
    if not os.path.exists(S3RVER_JS):
        return False, "s3rver is not installed (scripts/install-deps installs it into tests/stubs/node_modules)"
    return True, ""


def uri_encode(s, slash_ok=False):
    """AWS UriEncode: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper case)."""
    return urllib.parse.quote(s, safe="-_.~" + ("/" if slash_ok else ""))


def canonical_uri(raw_path):
    """The path decoded once and encoded once, segment by segment (S3: no normalisation)."""
    return "/".join(uri_encode(urllib.parse.unquote(seg)) for seg in raw_path.split("/")) or "/"


def canonical_query(raw_query):
    pairs = urllib.parse.parse_qsl(raw_query, keep_blank_values=True)
    enc = sorted((uri_encode(k), uri_encode(v)) for k, v in pairs)
    return "&".join(f"{k}={v}" for k, v in enc)


def signing_key(secret, date, region, service):
    k = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return k


class Rejected(Exception):
    def __init__(self, code, message, extra=None, status=403):
        super().__init__(message)
        self.code, self.message, self.extra, self.status = code, message, extra or {}, status


def xml_error(code, message, extra=None):
    parts = [f"<Code>{code}</Code>", f"<Message>{message}</Message>"]
    for k, v in (extra or {}).items():
        v = v.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        parts.append(f"<{k}>{v}</{k}>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error>' + "".join(parts) + "<RequestId>stub</RequestId></Error>").encode()


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.fail_first = args.fail_first
        self.fail_status = args.fail_status
        self.half_first = args.half_first
        self.half_kind = args.half_kind
        self.hang_secs = args.hang_secs
        self.counts = {"puts": 0, "accepted": 0, "rejected": 0, "failed": 0}
        self.objects = []      # accepted PUTs, in order
        self.rejections = []
        self.store = {}        # (bucket, key) -> bytes: every accepted object (also with s3rver)

    def control(self):
        with self.lock:
            return dict(fail_first=self.fail_first, fail_status=self.fail_status, half_first=self.half_first,
                        half_kind=self.half_kind, hang_secs=self.hang_secs,
                        **self.counts)


def verify(args, method, raw_path, raw_query, headers, body):
    """Raises Rejected unless the request carries a valid SigV4 signature for args' secret."""
    auth = headers.get("authorization")
    if auth is None:
        raise Rejected("AccessDenied", "Access Denied: the request is not signed")
    m = AUTH_RE.match(auth.strip())
    if not m:
        raise Rejected("AuthorizationHeaderMalformed", "The authorization header is malformed")
    cred, signed, signature = m.groups()
    parts = cred.split("/")
    if len(parts) != 5 or parts[4] != "aws4_request":
        raise Rejected("AuthorizationHeaderMalformed", "The credential scope is malformed")
    akid, date, region, service, _ = parts
    secret, access_key, tokens = args.secret, args.access_key, None
    if args.token_file:
        try:
            with open(args.token_file) as f:
                tf = json.load(f)
            secret, access_key, tokens = tf["secret_key"], tf["access_key"], tf["tokens"]
        except (OSError, ValueError, KeyError):
            raise Rejected("InvalidToken", "no credentials issued yet")
    if access_key and akid != access_key:
        raise Rejected("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
    if region != args.region:
        raise Rejected("AuthorizationHeaderMalformed", f"the region '{region}' is wrong; expecting '{args.region}'")
    if service != "s3":
        raise Rejected("AuthorizationHeaderMalformed", f"the service '{service}' is wrong; expecting 's3'")
    amz_date = headers.get("x-amz-date")
    if amz_date is None:
        raise Rejected("AccessDenied", "X-Amz-Date is missing")
    try:
        when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        raise Rejected("AccessDenied", "X-Amz-Date is not YYYYMMDDTHHMMSSZ")
    if abs(when.timestamp() - time.time()) > args.max_skew_secs:
        raise Rejected("RequestTimeTooSkewed", "The difference between the request time and the current time is too large.")
    if amz_date[:8] != date:
        raise Rejected("AuthorizationHeaderMalformed", "The credential date does not match X-Amz-Date")
    names = signed.split(";")
    if names != sorted(names) or any(n != n.lower() or not n for n in names) or len(set(names)) != len(names):
        raise Rejected("AuthorizationHeaderMalformed", "SignedHeaders must be lower case, sorted and unique")
    present = {k.lower() for k in headers.keys()}
    for need in ["host"] + sorted(h for h in present if h.startswith("x-amz-")):
        if need not in names:
            raise Rejected("AccessDenied", f"There were headers present in the request which were not signed: {need}")
    for n in names:
        if n not in present:
            raise Rejected("AccessDenied", f"The signed header {n} is not in the request")
    token = headers.get("x-amz-security-token")
    if tokens is not None:
        if token is None or token not in tokens:
            raise Rejected("InvalidToken", "The provided token is malformed or otherwise invalid.")
        if float(tokens[token]) <= time.time():
            raise Rejected("ExpiredToken", "The provided token has expired.")
    elif token is None or not hmac.compare_digest(token.encode(), args.token.encode()):
        raise Rejected("InvalidToken", "The provided token is malformed or otherwise invalid.")
    payload = headers.get("x-amz-content-sha256")
    if payload is None:
        raise Rejected("MissingContentSha256", "Missing required header for this request: x-amz-content-sha256")
    actual = hashlib.sha256(body).hexdigest()
    if payload != actual:
        raise Rejected("XAmzContentSHA256Mismatch",
                       "The provided 'x-amz-content-sha256' header does not match what was computed.",
                       {"ClientComputedContentSHA256": payload, "S3ComputedContentSHA256": actual})
    canon_headers = "".join(
        f"{n}:{','.join(' '.join(v.split()) for v in headers.get_all(n))}\n" for n in names)
    canonical = "\n".join([method, canonical_uri(raw_path), canonical_query(raw_query), canon_headers, signed, payload])
    string_to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, f"{date}/{region}/{service}/aws4_request",
                                hashlib.sha256(canonical.encode()).hexdigest()])
    want = hmac.new(signing_key(secret, date, region, service), string_to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, signature):
        raise Rejected("SignatureDoesNotMatch",
                       "The request signature we calculated does not match the signature you provided. "
                       "Check your key and signing method.",
                       {"AWSAccessKeyId": akid, "StringToSign": string_to_sign, "SignatureProvided": signature,
                        "CanonicalRequest": canonical})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "s3-sigv4-stub"

    def log_message(self, fmt, *a):
        if self.server.state.args.verbose:
            sys.stderr.write("s3_sigv4: " + (fmt % a) + "\n")

    # -- plumbing --
    def read_body(self):
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def reply(self, status, body=b"", ctype="application/xml", extra=None):
        self.send_response(status)
        self.send_header("x-amz-bucket-region", self.server.state.args.region)
        self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, obj, status=200):
        self.reply(status, json.dumps(obj).encode(), "application/json")

    # -- test endpoints --
    def control_endpoint(self, path, body):
        st = self.server.state
        if path == "/__control":
            if self.command == "POST":
                try:
                    new = json.loads(body or b"{}")
                    with st.lock:
                        for k in ("fail_first", "fail_status", "half_first", "half_kind", "hang_secs"):
                            if k in new:
                                setattr(st, k, type(getattr(st, k))(new[k]))
                        st.changed.notify_all()
                except (ValueError, TypeError) as e:
                    return self.reply_json({"error": str(e)}, 400)
            return self.reply_json(st.control())
        if path == "/__objects":
            with st.lock:
                return self.reply_json(list(st.objects))
        if path == "/__rejections":
            with st.lock:
                return self.reply_json(list(st.rejections))
        if path.startswith("/__object/"):
            bucket, _, key = urllib.parse.unquote(path[len("/__object/"):]).partition("/")
            with st.lock:
                data = st.store.get((bucket, key))
            if data is None:
                return self.reply(404, xml_error("NoSuchKey", "The specified key does not exist."))
            return self.reply(200, data, "application/octet-stream")
        return self.reply_json({"error": "unknown test endpoint"}, 404)

    # -- S3 --
    def handle_any(self):
        st = self.server.state
        raw_path, _, raw_query = self.path.partition("?")
        body = self.read_body()
        if raw_path.startswith("/__"):
            return self.control_endpoint(raw_path, body)
        try:
            verify(st.args, self.command, raw_path, raw_query, self.headers, body)
        except Rejected as r:
            with st.lock:
                st.counts["rejected"] += 1
                st.rejections.append({"method": self.command, "path": raw_path, "code": r.code})
            return self.reply(r.status, xml_error(r.code, r.message, r.extra))
        segs = raw_path.lstrip("/").split("/", 1)
        bucket = urllib.parse.unquote(segs[0])
        key = urllib.parse.unquote(segs[1]) if len(segs) > 1 else ""
        if self.command == "PUT" and key:
            with st.lock:
                st.counts["puts"] += 1
                fail = st.fail_first > 0
                half = not fail and st.half_first > 0
                if fail:
                    st.fail_first -= 1
                    status = st.fail_status
                if half:
                    st.half_first -= 1
                    kind = st.half_kind
                if fail or half:
                    st.counts["failed"] += 1
            if fail:
                return self.reply(status, xml_error("InternalError", "We encountered an internal error. Please try again."))
            if half:  # 200 and not stored: no ETag
                return self.reply(200, b"" if kind == "empty" else
                                  xml_error("InternalError", "We encountered an internal error. Please try again."))
            self.hang()
        status, headers, data = self.forward(bucket, key, body)
        if self.command == "PUT" and key and 200 <= status < 300:
            with st.lock:
                st.counts["accepted"] += 1
                st.store[(bucket, key)] = body
                st.objects.append({"bucket": bucket, "key": key, "size": len(body),
                                   "sha256": hashlib.sha256(body).hexdigest()})
        self.reply(status, data, headers.get("content-type", "application/xml"),
                   {k: v for k, v in headers.items() if k in ("etag", "last-modified")})

    def hang(self):
        st = self.server.state
        with st.lock:
            end = time.monotonic() + st.hang_secs
            while st.hang_secs > 0 and time.monotonic() < end:
                st.changed.wait(min(0.2, max(0.0, end - time.monotonic())))

    def forward(self, bucket, key, body):
        """Hands the verified request to s3rver (unsigned: s3rver checks signatures against its own
        keys) or to the in-memory store. Returns (status, lower-case headers, body)."""
        st = self.server.state
        if st.args.upstream_port:
            conn = http.client.HTTPConnection("127.0.0.1", st.args.upstream_port, timeout=30)
            hdrs = {k: v for k, v in self.headers.items()
                    if k.lower() in ("content-type", "content-md5", "content-encoding", "cache-control")}
            hdrs["Content-Length"] = str(len(body))
            try:
                conn.request(self.command, self.path, body=body if self.command not in ("GET", "HEAD") else None,
                             headers=hdrs)
                r = conn.getresponse()
                data = r.read()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, (b"" if self.command == "HEAD" else data)
            finally:
                conn.close()
        if self.command == "PUT" and key:
            return 200, {"etag": '"%s"' % hashlib.md5(body).hexdigest()}, b""
        if self.command in ("GET", "HEAD") and key:
            with st.lock:
                data = st.store.get((bucket, key))
            if data is None:
                return 404, {}, xml_error("NoSuchKey", "The specified key does not exist.")
            return 200, {"content-type": "application/octet-stream"}, data
        if self.command == "HEAD" and not key:
            return 200, {}, b""
        return 501, {}, xml_error("NotImplemented", "The in-memory store keeps objects only.")

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = handle_any


def set_pdeathsig():
    """In the child: die with the parent (Linux prctl PR_SET_PDEATHSIG = 1)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def start_s3rver(data_dir, buckets):
    """Starts s3rver on 127.0.0.1 port 0 with buckets created; returns (Popen, port)."""
    cmd = ["node", S3RVER_JS, "-d", data_dir, "-a", "127.0.0.1", "-p", "0", "--no-vhost-buckets"]
    for b in buckets:
        cmd += ["--configure-bucket", b]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         preexec_fn=set_pdeathsig)
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(r"listening on [0-9.]+:(\d+)", line)
        if m:
            # keep draining its log so it never blocks on a full pipe
            threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
            return p, int(m.group(1))
    p.kill()
    p.wait()
    raise RuntimeError("s3rver did not start: " + "".join(seen)[-500:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--secret", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--access-key", default="")
    ap.add_argument("--token-file", default="")
    ap.add_argument("--region", default="eu-central-1")
    ap.add_argument("--s3rver", metavar="DIR")
    ap.add_argument("--bucket", action="append", default=[])
    ap.add_argument("--upstream")
    ap.add_argument("--store", action="store_true")
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--fail-status", type=int, default=500)
    ap.add_argument("--half-first", type=int, default=0)
    ap.add_argument("--half-kind", choices=("error", "empty"), default="error")
    ap.add_argument("--hang-secs", type=float, default=0.0)
    ap.add_argument("--max-skew-secs", type=float, default=900.0)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    child = None
    args.upstream_port = 0
    if args.s3rver:
        ok, why = s3rver_available()
        if not ok:
            print(why, file=sys.stderr)
            sys.exit(3)
        child, args.upstream_port = start_s3rver(args.s3rver, args.bucket)
    elif args.upstream:
        args.upstream_port = urllib.parse.urlsplit(args.upstream).port
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(args)

    def stop(*_):
        if child and child.poll() is None:
            child.terminate()
            try:
                child.wait(5)
            except subprocess.TimeoutExpired:
                child.kill()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(srv.server_address[1], flush=True)
    print(f"s3rver {args.upstream_port}" if args.upstream_port else "store", flush=True)
    srv.serve_forever()


class S3Stub:
    """A running s3_sigv4.py (see start)."""

    def __init__(self, proc, port, upstream):
        self.proc, self.port, self.upstream = proc, port, upstream
        self.pid = proc.pid
        self.url = f"http://127.0.0.1:{port}"

    def _call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def control(self, **kw):
        """Sets fault modes (fail_first, fail_status, hang_secs); returns the state."""
        return json.loads(self._call("POST", "/__control", json.dumps(kw).encode())[1])

    def objects(self):
        return json.loads(self._call("GET", "/__objects")[1])

    def rejections(self):
        return json.loads(self._call("GET", "/__rejections")[1])

    def object(self, bucket, key):
        """The stored bytes of bucket/key, or None."""
        status, data = self._call("GET", "/__object/" + urllib.parse.quote(f"{bucket}/{key}"))
        return data if status == 200 else None

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait()


def start(tmpdir, secret, token, buckets=("bkt",), access_key="", region="eu-central-1", s3rver=True, extra=()):
    """Starts the stand-in (with s3rver in tmpdir/s3rver when s3rver is true, else the in-memory
    store; its stderr in tmpdir/s3_sigv4.log). Returns an S3Stub; raises RuntimeError when it does
    not come up (exit status 3: node or s3rver missing)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--secret", secret, "--token", token, "--region", region]
    if access_key:
        cmd += ["--access-key", access_key]
    if s3rver:
        d = os.path.join(str(tmpdir), "s3rver")
        os.makedirs(d, exist_ok=True)
        cmd += ["--s3rver", d] + [a for b in buckets for a in ("--bucket", b)]
    else:
        cmd += ["--store"]
    cmd += list(extra)
    log = os.path.join(str(tmpdir), "s3_sigv4.log")
    with open(log, "w") as errf:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True)
    port = p.stdout.readline().strip()
    mode = p.stdout.readline().strip()
    if not port.isdigit():
        p.kill()
        p.wait()
        with open(log) as f:
            raise RuntimeError(f"s3_sigv4.py did not start: {f.read().strip()[-500:]}")
    return S3Stub(p, int(port), mode)


if __name__ == "__main__":
    main()
