#!/usr/bin/python3
"""A local stand-in for the Sentinel API (docs/contracts.md §5) that enforces the contract strictly
and records every call, with fault modes for the streaming tests. Standard library only.

    sentinel_server.py --token TOKEN [--log FILE] [--token-file FILE]
        [--bucket B] [--prefix P] [--access-key AK] [--secret-key SK] [--session-token ST]
        [--cred-ttl SECS] [--rotate-token] [--expiry-field expiration|expires_at]
        [--fail-register N] [--fail-refresh N] [--fail-finish N] [--fail-status CODE]
        [--half-finish N] [--half-finish-kind cut|html]
        [--stall-secs S] [--s3-url URL] [--port N]

Listens on 127.0.0.1, a free port (or --port N: a test's API that was "down" at that URL comes
up there), printed on stdout (one line). Stop it by its PID. Defaults:
bucket "sentinel-test", prefix "runs/test" (may be ""), access key "ASIASENTINELTEST", secret
"sentinel/test+secret", session token "SentinelTestToken", credentials valid 3600 s.

Every call needs `Authorization: Bearer TOKEN` (else 401), `Content-Type: application/json`
(a `; charset=utf-8` parameter is allowed; else 415) and a plain JSON body: a Content-Encoding
header, a gzip body or a base64 body is refused (415/400). Chunked bodies are read.

    POST /runs                          -> 200 {run_id, upload_uri_prefix, upload_credentials}
    POST /runs/{run_id}/refresh-credentials   (empty body)  -> 200 {upload_credentials}, also
                                        after the finish (a later delivery of the run's last batches)
    POST /runs/{run_id}/finish          -> 200 {run_id, run_status}; a second finish is 409

POST /runs with an `Idempotency-Key` header (the run's local key) that an earlier registration
carried answers that run again (its run_id, fresh credentials; the first body stands): a retry
whose reply was lost (a stall past the client's timeout) makes no second run.

POST /runs takes one flat object with only the fields of section 5; it refuses (400) an unknown
field, `pid`, a null anywhere, an empty string (absent values are left out), a `command` that is
not a string holding a non-empty JSON array of strings, `tags` that is not a list of "k=v" strings
(k not empty), a host_server_allocation other than dedicated/shared, and wrong types: strings for
the job, host_id/hostname/ip/cpu_model/gpu_model and cloud_* fields; integers >= 0 for host_vcpus
and host_gpu_count; numbers >= 0 (integer or float, not bool) for host_memory_mib,
host_gpu_memory_mib and host_storage_gb. The reply's upload_uri_prefix is s3://BUCKET/PREFIX
(s3://BUCKET without a prefix); objects go to PREFIX/RUN_ID/SEQ.csv.gz. upload_credentials holds
access_key, secret_key, session_token and EXPIRY_FIELD (ISO 8601, UTC, "...Z"), now + cred_ttl.

finish takes exit_code (int), run_status ("finished" | "failed"), finished_at (YYYY-MM-DDTHH:MM:SSZ,
a real date) and exactly one of: data_source "s3" + data_uris (a non-empty list of
s3://BUCKET/PREFIX/RUN_ID/NNNNNN.csv.gz, the sequence numbers exactly 000000.. N-1, each once) or
data_source "inline" + data_csv (a string whose first line is the section 3 CSV header). It
refuses run_id in the body, unknown fields, nulls. Unknown run: 404.

With --s3-url (the S3 stand-in, tests/stubs/s3_sigv4.py) finish also holds the live protocol as the
Python tracker 0.5 sends it, against what is stored under the run's own PREFIX/RUN_ID/ at that
moment (its GET /__objects): "s3" must name every object stored there (and only those); "inline"
is refused while any object is stored there (the uploaded part would go unnamed: inline never
means "only the rest"). So a run's rows are the rows of its S3 objects plus its inline rows.
Objects PUT under a finished run's prefix later (its batches delivered after the deadline) are
the run's too; GET /__runs/RUN_ID/rows answers {"s3": {key: [rows]}, "inline": [rows]} from the
same store (a key's last bytes), for the tests' count of rows per run.

Fault modes, set by flags at start or at run time with `POST /__control` (no auth, JSON object
with any of these keys; replies the whole state; `GET /__control` reads it):
    fail_register N   the next N POST /runs answer fail_status (default 503), then normal again
    fail_refresh N    the same for refresh-credentials
    fail_finish N     the same for finish
    fail_status CODE  the status those failures answer
    half_finish N     the next N finishes that would be taken are taken (the run is finished, a
                      later finish is 409) but answered 200 with a body that is not the reply's
                      JSON: half_finish_kind "cut" (the JSON cut in the middle, its
                      Content-Length right) or "html" (a proxy's page)
    stall_secs S      every API call is read, recorded, then answered only after S seconds
    cred_ttl SECS     lifetime of credentials issued from now on (short: they expire mid-run)
    rotate_token B    true: every issue of credentials has a fresh session token (ST-1, ST-2, ...)
    down true         the server answers this control call, then closes its socket and exits
"API down at start" needs no mode: do not start it (or use a closed port).

Log (--log FILE), rewritten atomically (FILE.tmp then rename) after every API call:
    {"requests": [{"t": unix time, "method", "path", "headers": {name: value},
                   "body": the body as text (undecodable bytes as U+FFFD),
                   "json": the parsed body or null, "status": the status answered,
                   "error": why it was refused or null, "reply": the reply object,
                   "stalled": seconds held, "half_reply": the body sent instead of "reply"
                   (half_finish only)}, ...],
     "runs": {run_id: {"register": the body, "refreshes": n, "finish": the body or null,
                       "tokens": [session tokens issued to it], "idempotency_key": the header or null,
                       "retries": registrations answered with this run again}}}
A refused call is in "requests" with its status and error; "runs" holds accepted calls only.

Keeping the S3 checker in step (--token-file FILE): every time credentials are issued, FILE is
rewritten atomically with
    {"access_key": AK, "secret_key": SK, "current": the latest session token,
     "tokens": {session_token: expires_unix, ...}}
The S3 checker reads it on every request: it accepts a request only when its access key is
access_key, its signature verifies with secret_key, and its X-Amz-Security-Token is a key of
"tokens" whose expiry (Unix seconds) is still ahead (403 ExpiredToken past it, 403
InvalidToken for a token not listed). Tokens issued earlier stay listed (as STS tokens stay
valid until they expire), so a test that wants "the uploader switched" checks which token the
S3 log shows after the refresh.
"""
import argparse
import base64
import binascii
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
import gzip

CSV_HEADER = ("timestamp,system_processes,system_utime,system_stime,system_cpu_usage,"
              "system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,system_memory_cached_mib,"
              "system_memory_active_mib,system_memory_inactive_mib,system_disk_read_bytes,system_disk_write_bytes,"
              "system_disk_space_total_gb,system_disk_space_used_gb,system_disk_space_free_gb,"
              "system_net_recv_bytes,system_net_sent_bytes,system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,"
              "process_pid,process_children,process_utime,process_stime,process_cpu_usage,process_memory_mib,"
              "process_disk_read_bytes,process_disk_write_bytes,process_gpu_usage,process_gpu_vram_mib,"
              "process_gpu_utilized")  # the 32 shared columns; the tool adds its own after them where asked


def csv_header_ok(line):
    """Whether a CSV header line begins with the 32 shared columns (more may follow)."""
    return line == CSV_HEADER or line.startswith(CSV_HEADER + ",")

JOB_FIELDS = ["job_name", "project_name", "stage_name", "task_name", "team", "env", "language", "orchestrator",
              "executor", "external_run_id", "container_image"]
STRING_FIELDS = set(JOB_FIELDS) | {"host_id", "host_hostname", "host_ip", "host_server_allocation",
                                   "host_cpu_model", "host_gpu_model", "cloud_vendor_id", "cloud_account_id",
                                   "cloud_region_id", "cloud_zone_id", "cloud_instance_type"}
INT_FIELDS = {"host_vcpus", "host_gpu_count"}
NUMBER_FIELDS = {"host_memory_mib", "host_gpu_memory_mib", "host_storage_gb"}
REGISTER_FIELDS = STRING_FIELDS | INT_FIELDS | NUMBER_FIELDS | {"tags", "command"}
FINISH_FIELDS = {"exit_code", "run_status", "finished_at", "data_source", "data_uris", "data_csv"}
FINISHED_AT = re.compile(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\Z")
MAX_BODY = 256 << 20

lock = threading.Lock()
state = {}      # the fault modes and settings (see /__control)
runs = {}       # run_id -> {"register", "refreshes", "finish", "tokens", "idempotency_key", "retries"}
by_key = {}     # Idempotency-Key -> run_id
requests = []   # every API call, as logged
tokens = {}     # session token -> expires_unix
issued = [0]    # credentials issued so far
opts = None


class Refused(Exception):
    def __init__(self, status, msg):
        super().__init__(msg)
        self.status = status


def iso_z(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def write_json(path, doc):
    if not path:
        return
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(path + ".tmp", path)


def issue_credentials(run):
    """New credentials (caller holds the lock); the token file follows."""
    issued[0] += 1
    token = f"{opts.session_token}-{issued[0]}" if state["rotate_token"] else opts.session_token
    expires = time.time() + state["cred_ttl"]
    tokens[token] = expires
    run["tokens"].append(token)
    write_json(opts.token_file, {"access_key": opts.access_key, "secret_key": opts.secret_key, "current": token,
                                 "tokens": tokens})
    return {"access_key": opts.access_key, "secret_key": opts.secret_key, "session_token": token,
            opts.expiry_field: iso_z(expires)}


class HalfReply:
    """A reply whose body is not the reply's JSON (text), the JSON it should have been logged."""

    def __init__(self, text, doc):
        self.text, self.doc = text, doc


def inject(mode):
    """Raises the injected failure when state[mode] still counts some (caller holds the lock)."""
    if state[mode] > 0:
        state[mode] -= 1
        raise Refused(state["fail_status"], f"injected failure ({mode})")


def no_nulls(doc, where):
    if doc is None:
        raise Refused(400, f"{where} is null: absent values are left out")
    if isinstance(doc, dict):
        for k, v in doc.items():
            no_nulls(v, f"{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            no_nulls(v, f"{where}[{i}]")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_members(doc, forbidden, why, allowed):
    """Refuses the forbidden member (saying why), any member not allowed, and nulls."""
    if forbidden in doc:
        raise Refused(400, f"{forbidden} is not accepted {why}")
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise Refused(400, f"unknown fields: {unknown}")
    no_nulls(doc, "body")


def check_register(doc):
    check_members(doc, "pid", "in POST /runs", REGISTER_FIELDS)
    for k, v in doc.items():
        if k in STRING_FIELDS:
            if not isinstance(v, str):
                raise Refused(400, f"{k} must be a string")
            if v == "":
                raise Refused(400, f"{k} is empty: absent values are left out")
        elif k in INT_FIELDS:
            if not is_int(v) or v < 0:
                raise Refused(400, f"{k} must be an integer >= 0")
        elif k in NUMBER_FIELDS:
            if not (is_int(v) or isinstance(v, float)) or v != v or v < 0 or v == float("inf"):
                raise Refused(400, f"{k} must be a number >= 0")
    if "host_server_allocation" in doc and doc["host_server_allocation"] not in ("dedicated", "shared"):
        raise Refused(400, "host_server_allocation must be dedicated or shared")
    if "tags" in doc:
        tags = doc["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) and re.match(r"\A[^=]+=", t) for t in tags):
            raise Refused(400, "tags must be a list of \"k=v\" strings")
    if "command" in doc:
        cmd = doc["command"]
        if isinstance(cmd, list):
            raise Refused(400, "command must be a string holding a JSON array, not an array")
        if not isinstance(cmd, str):
            raise Refused(400, "command must be a string holding a JSON array")
        try:
            argv = json.loads(cmd)
        except ValueError:
            raise Refused(400, "command is not a JSON array encoded in a string")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise Refused(400, "command must encode a non-empty JSON array of strings")


def check_finish(doc, run_id):
    check_members(doc, "run_id", "in the finish body (it is in the path)", FINISH_FIELDS)
    for k in ("exit_code", "run_status", "finished_at", "data_source"):
        if k not in doc:
            raise Refused(400, f"{k} is missing")
    if not is_int(doc["exit_code"]):
        raise Refused(400, "exit_code must be an integer")
    if doc["run_status"] not in ("finished", "failed"):
        raise Refused(400, "run_status must be finished or failed")
    at = doc["finished_at"]
    if not isinstance(at, str) or not FINISHED_AT.match(at):
        raise Refused(400, "finished_at must be YYYY-MM-DDTHH:MM:SSZ")
    try:
        time.strptime(at, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise Refused(400, "finished_at is not a real time")
    src = doc["data_source"]
    if src == "s3":
        if "data_csv" in doc:
            raise Refused(400, "data_csv with data_source s3")
        uris = doc.get("data_uris")
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            raise Refused(400, "data_uris must be a non-empty list of strings")
        base = f"s3://{opts.bucket}/{opts.prefix + '/' if opts.prefix else ''}{run_id}/"
        seqs = []
        for u in uris:
            m = re.match(re.escape(base) + r"(\d{6})\.csv\.gz\Z", u)
            if not m:
                raise Refused(400, f"data_uris: {u!r} is not {base}NNNNNN.csv.gz")
            seqs.append(int(m.group(1)))
        if sorted(seqs) != list(range(len(seqs))):
            raise Refused(400, f"data_uris: sequence numbers {sorted(seqs)} skip or repeat (want 0..{len(seqs) - 1})")
        if opts.s3_url:
            stored = {f"s3://{opts.bucket}/{k}" for k in stored_keys(run_id)}
            if set(uris) != stored:
                raise Refused(400, f"data_uris {sorted(uris)} are not the run's objects in S3 {sorted(stored)}")
    elif src == "inline":
        if "data_uris" in doc:
            raise Refused(400, "data_uris with data_source inline")
        csv = doc.get("data_csv")
        if not isinstance(csv, str):
            raise Refused(400, "data_csv must be a string (the raw CSV text)")
        if not csv_header_ok(csv.split("\n", 1)[0].rstrip("\r")):
            raise Refused(400, "data_csv does not begin with the CSV header line (raw CSV, not base64)")
        bad = cells_match(csv.splitlines())
        if bad:
            raise Refused(400, f"data_csv's {bad}")
        if opts.s3_url and stored_keys(run_id):
            raise Refused(400, "data_source inline while the run has objects in S3: name them all with "
                               "data_source s3 (inline never means only the rest)")
    else:
        raise Refused(400, "data_source must be s3 or inline")


def s3_get(path):
    with urllib.request.urlopen(opts.s3_url + path, timeout=30) as r:
        return r.read()


def run_prefix(run_id):
    return f"{opts.prefix + '/' if opts.prefix else ''}{run_id}/"


def stored_keys(run_id):
    """The keys stored in the S3 stand-in under the run's own prefix (each once)."""
    objs = json.loads(s3_get("/__objects"))
    return sorted({o["key"] for o in objs if o["bucket"] == opts.bucket and o["key"].startswith(run_prefix(run_id))})


def cells_match(lines):
    """The first row whose cell count differs from the header's, as a message (None: all match)."""
    want = lines[0].count(",")
    for i, line in enumerate(lines[1:], 2):
        if line.count(",") != want:
            return f"line {i} has {line.count(',') + 1} cells where the header has {want + 1}"
    return None


def csv_rows(text):
    lines = text.splitlines()
    if not lines or not csv_header_ok(lines[0]):
        raise Refused(500, "a stored batch does not begin with the CSV header")
    bad = cells_match(lines)
    if bad:
        raise Refused(500, f"a stored batch's {bad}")
    return lines[1:]


def run_rows(run_id):
    """{"s3": {key: rows}, "inline": rows} of a run (404 when unknown)."""
    with lock:
        run = runs.get(run_id)
        fin = run and run["finish"]
    if run is None:
        raise Refused(404, "no such run")
    out = {"s3": {}, "inline": []}
    for k in stored_keys(run_id):
        data = s3_get("/__object/" + urllib.parse.quote(f"{opts.bucket}/{k}"))
        out["s3"][k] = csv_rows(gzip.decompress(data).decode())
    if fin and fin.get("data_source") == "inline":
        out["inline"] = csv_rows(fin["data_csv"])
    return out


def decode_body(raw):
    """The body as a JSON object; Refused for gzip, base64 or anything not JSON."""
    if raw[:2] == b"\x1f\x8b":
        raise Refused(415, "gzip body: send plain JSON")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        try:
            inner = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            inner = None
        if inner and (inner[:2] == b"\x1f\x8b" or inner.lstrip()[:1] in (b"{", b"[")):
            raise Refused(400, "base64 body: send plain JSON")
        raise Refused(400, "the body is not JSON")
    if isinstance(doc, str):
        raise Refused(400, "the body is a JSON string (base64?): send a plain JSON object")
    if not isinstance(doc, dict):
        raise Refused(400, "the body is not a JSON object")
    return doc


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, doc):
        body = doc.text.encode() if isinstance(doc, HalfReply) else json.dumps(doc).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                if len(out) + size > MAX_BODY:
                    raise Refused(413, "body too large")
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise Refused(413, "body too large")
        return self.rfile.read(n) if n > 0 else b""

    def do_GET(self):
        if self.path == "/__control":
            with lock:
                return self.reply(200, dict(state))
        m = re.fullmatch(r"/__runs/([^/]+)/rows", self.path)
        if m and opts.s3_url:
            try:
                return self.reply(200, run_rows(m.group(1)))
            except Refused as e:
                return self.reply(e.status, {"detail": str(e)})
        self.api("GET")

    def do_POST(self):
        if self.path == "/__control":
            return self.control()
        self.api("POST")

    def do_PUT(self):
        self.api("PUT")

    def control(self):
        try:
            doc = json.loads(self.read_body() or b"{}")
        except ValueError:
            return self.reply(400, {"detail": "control body is not JSON"})
        with lock:
            for k, v in doc.items():
                if k not in state and k != "down":
                    return self.reply(400, {"detail": f"unknown control {k}"})
                if k != "down":
                    state[k] = v
            snapshot = dict(state)
        self.reply(200, snapshot)
        if doc.get("down"):
            threading.Thread(target=self.server.shutdown, daemon=True).start()

    def api(self, method):
        entry = {"t": time.time(), "method": method, "path": self.path,
                 "headers": {k: v for k, v in self.headers.items()}, "body": "", "json": None,
                 "status": None, "error": None, "reply": None, "stalled": 0}
        try:
            raw = self.read_body()
        except (Refused, ValueError) as e:
            raw = b""
            status, doc = getattr(e, "status", 400), {"detail": str(e)}
            self.close_connection = True
        else:
            entry["body"] = raw.decode("utf-8", "replace")
            try:
                status, doc = self.handle_api(method, raw, entry)
            except Refused as e:
                status, doc = e.status, {"detail": str(e)}
        entry["status"], entry["reply"] = status, doc.doc if isinstance(doc, HalfReply) else doc
        if isinstance(doc, HalfReply):
            entry["half_reply"] = doc.text  # what was sent instead
        if status >= 400:
            entry["error"] = doc.get("detail")
        with lock:
            stall = state["stall_secs"] or 0
            entry["stalled"] = stall
            requests.append(entry)
            write_json(opts.log, {"requests": requests, "runs": runs})
        if stall:
            time.sleep(stall)
        self.reply(status, doc)

    def handle_api(self, method, raw, entry):
        if self.headers.get("Authorization") != f"Bearer {opts.token}":
            raise Refused(401, "Authorization: Bearer TOKEN is missing or wrong")
        ctype = self.headers.get("Content-Type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            raise Refused(415, "Content-Type must be application/json")
        if self.headers.get("Content-Encoding"):
            raise Refused(415, "Content-Encoding is not accepted: send plain JSON")
        if method != "POST":
            raise Refused(405, "Method Not Allowed")
        parts = self.path.split("?")[0].split("/")
        if self.path == "/runs":
            doc = decode_body(raw)
            entry["json"] = doc
            check_register(doc)
            idem = self.headers.get("Idempotency-Key")
            with lock:
                inject("fail_register")
                if idem is not None and idem in by_key:  # a retry whose reply was lost: the same run
                    run_id = by_key[idem]
                    run = runs[run_id]
                    run["retries"] += 1
                else:
                    run_id = str(uuid.uuid4())
                    run = runs[run_id] = {"register": doc, "refreshes": 0, "finish": None, "tokens": [],
                                          "idempotency_key": idem, "retries": 0}
                    if idem is not None:
                        by_key[idem] = run_id
                creds = issue_credentials(run)
            prefix = f"s3://{opts.bucket}" + (f"/{opts.prefix}" if opts.prefix else "")
            return 200, {"run_id": run_id, "upload_uri_prefix": prefix, "upload_credentials": creds}
        if len(parts) == 4 and parts[0] == "" and parts[1] == "runs" and parts[3] in ("refresh-credentials", "finish"):
            run_id = parts[2]
            if parts[3] == "refresh-credentials":
                if raw.strip():
                    raise Refused(400, "refresh-credentials takes an empty body")
            else:
                doc = decode_body(raw)
                entry["json"] = doc
                check_finish(doc, run_id)
            with lock:
                run = runs.get(run_id)
                if run is None:
                    raise Refused(404, "no such run")
                if run["finish"] is not None and parts[3] == "finish":
                    raise Refused(409, "the run is already finished")
                if parts[3] == "refresh-credentials":
                    inject("fail_refresh")
                    run["refreshes"] += 1
                    return 200, {"upload_credentials": issue_credentials(run)}
                inject("fail_finish")
                run["finish"] = doc
                reply = {"run_id": run_id, "run_status": doc["run_status"]}
                if state["half_finish"] > 0:
                    state["half_finish"] -= 1
                    return 200, HalfReply(json.dumps(reply)[:12] if state["half_finish_kind"] == "cut" else
                                          "<html><body>OK</body></html>", reply)
                return 200, reply
        raise Refused(404, "Not Found")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    global opts
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--token", required=True)
    ap.add_argument("--log")
    ap.add_argument("--token-file")
    ap.add_argument("--bucket", default="sentinel-test")
    ap.add_argument("--prefix", default="runs/test")
    ap.add_argument("--access-key", default="ASIASENTINELTEST")
    ap.add_argument("--secret-key", default="sentinel/test+secret")
    ap.add_argument("--session-token", default="SentinelTestToken")
    ap.add_argument("--cred-ttl", type=float, default=3600)
    ap.add_argument("--rotate-token", action="store_true")
    ap.add_argument("--expiry-field", choices=("expiration", "expires_at"), default="expiration")
    ap.add_argument("--fail-register", type=int, default=0)
    ap.add_argument("--fail-refresh", type=int, default=0)
    ap.add_argument("--fail-finish", type=int, default=0)
    ap.add_argument("--fail-status", type=int, default=503)
    ap.add_argument("--half-finish", type=int, default=0)
    ap.add_argument("--half-finish-kind", choices=("cut", "html"), default="cut")
    ap.add_argument("--stall-secs", type=float, default=0)
    ap.add_argument("--s3-url")
    ap.add_argument("--port", type=int, default=0)
    opts = ap.parse_args()
    opts.prefix = opts.prefix.strip("/")
    state.update(fail_register=opts.fail_register, fail_refresh=opts.fail_refresh, fail_finish=opts.fail_finish,
                 fail_status=opts.fail_status, half_finish=opts.half_finish,
                 half_finish_kind=opts.half_finish_kind, stall_secs=opts.stall_secs, cred_ttl=opts.cred_ttl,
                 rotate_token=opts.rotate_token)
    write_json(opts.log, {"requests": [], "runs": {}})
    srv = Server(("127.0.0.1", opts.port), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
    srv.server_close()


if __name__ == "__main__":
    main()
